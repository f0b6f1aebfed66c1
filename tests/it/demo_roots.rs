//! The recorded demo runs roots (`scripts/record-demo-roots`) are current:
//! `report` over each reproduces its committed README.md and summary CSVs
//! byte for byte, and judging every recorded attempt again with today's
//! scoring gives the verdicts its result.json holds (so a change to the
//! scoring contract cannot leave them silently stale: `rescore` them).

use okn_benchmark::layout::RunsRoot;
use okn_benchmark::runs::judge::judge;
use okn_benchmark::runs::recorded::{AttemptFiles, read_ground_truth};
use okn_benchmark::runs::records::{ConditionFile, QuestionResult};
use okn_benchmark::runs::rescore::attempt_numbers;
use okn_benchmark::score::{SCORING_VERSION, ScoreOptions};

use crate::support::repo;

/// Two conditions of the single-graph and ontology roots.
const TWO: &[&str] = &["demo-kg-all-tools__kg-named", "sparql-only__kg-named"];

/// The three conditions of the cross-graph roots.
const THREE: &[&str] = &[
    "demo-kg-all-tools-without-get_schema-lookup_uri__kg-named",
    "demo-kg-all-tools__kg-named",
    "demo-kg-all-tools__kg-not-named",
];

/// Every committed demo root, runs-AGENT-CORPUS, with its conditions.
const ROOTS: [(&str, &[&str]); 10] = [
    ("runs-expert-single", TWO),
    ("runs-competent-single", TWO),
    ("runs-novice-single", TWO),
    ("runs-expert-ontology", TWO),
    ("runs-competent-ontology", TWO),
    ("runs-novice-ontology", TWO),
    ("runs-expert-cross", THREE),
    ("runs-competent-cross", THREE),
    ("runs-novice-cross", THREE),
    ("runs-expert-cross-row-limit", THREE),
];

#[test]
fn report_reproduces_every_committed_readme_and_summary() {
    for (name, conditions) in ROOTS {
        let root = RunsRoot::new(repo().join(name));
        assert_eq!(root.condition_names(), *conditions, "{name}");
        let view = okn_benchmark::report::load::root(&root.root);
        assert!(view.problems.is_empty(), "{name}: {:?}", view.problems);
        let files = okn_benchmark::render::readme::outputs(&view);
        assert_eq!(
            files.len(),
            12 + 2,
            "{name}: 12 question summaries, the root summary, README"
        );
        for okn_benchmark::render::export::Output { path, bytes } in files {
            let on_disk = std::fs::read(&path).unwrap_or_default();
            assert!(
                on_disk == bytes,
                "{} is stale: run 'okn-benchmark report {name}' (or scripts/record-demo-roots) and commit",
                path.display()
            );
        }
    }
}

#[test]
fn every_recorded_verdict_is_todays_verdict() {
    let mut attempts = 0;
    for (name, conditions) in ROOTS {
        let root = RunsRoot::new(repo().join(name));
        for condition in conditions.iter() {
            let file: ConditionFile = serde_json::from_str(
                &std::fs::read_to_string(root.condition_file(condition)).unwrap(),
            )
            .unwrap();
            assert_eq!(
                file.settings.scoring_version, SCORING_VERSION,
                "{name}/{condition}: rescore it"
            );
            assert_eq!(file.identity.repeat, 3);
            assert!(file.identity.agent.starts_with("scripted:skill:"));
            for id in file.questions.keys() {
                let dir = root.condition_dir(id, condition);
                let result: QuestionResult = serde_json::from_str(
                    &std::fs::read_to_string(dir.join("result.json")).unwrap(),
                )
                .unwrap();
                let truth = read_ground_truth(&root.question_dir(id)).unwrap();
                let options = ScoreOptions {
                    ordered: result.ordered_key,
                    ..ScoreOptions::default()
                };
                assert_eq!(attempt_numbers(&dir), [1, 2, 3]);
                for recorded in &result.attempts {
                    let files = AttemptFiles::read(
                        &root.attempt_dir(id, condition, recorded.attempt),
                        recorded.attempt,
                    )
                    .unwrap();
                    files.check_recorded(Some(recorded)).unwrap();
                    let now = judge(&files, recorded.attempt, &truth, &options);
                    assert_eq!(
                        (now.exact, now.strict_exact, now.ordered, now.f1),
                        (
                            recorded.exact,
                            recorded.strict_exact,
                            recorded.ordered,
                            recorded.f1
                        ),
                        "{name}/{id}/{condition}/attempt-{}",
                        recorded.attempt
                    );
                    attempts += 1;
                }
            }
        }
    }
    // 12 questions × 24 conditions (2 in each of the six single-graph and
    // ontology roots, 3 in each of the four cross-graph ones) × 3 attempts.
    assert_eq!(attempts, 12 * 24 * 3);
}
