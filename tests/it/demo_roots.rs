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
                    let now = judge(
                        &files,
                        recorded.attempt,
                        (&truth, &result.expectations),
                        &options,
                    );
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

/// Issue 25, "Publishing across hosts": the committed root of "one agent,
/// four hosts" holds the four hosts' conditions, each recorded through
/// its real CLI (or the openai loop) with a census, and the stand-in
/// played the same seeded skill through every host: each attempt's
/// verdict and F1 are the same under all four. The study says the model
/// is a stand-in, and its overhead table states no figure a host did not
/// (codex states no turns and no cost).
#[test]
fn the_four_hosts_of_the_demo_root_agree_on_every_attempt() {
    let root = repo().join("runs-hosts-single");
    let conditions = [
        ("demo-kg-all-tools__kg-named", "claude"),
        ("demo-kg-all-tools-codex__kg-named", "codex"),
        ("demo-kg-all-tools-gemini__kg-named", "gemini"),
        (
            "demo-kg-all-tools-openai__kg-named",
            "openai:standin-skill-60",
        ),
    ];
    let mut verdicts: std::collections::BTreeMap<(String, u32), Vec<(bool, String)>> =
        Default::default();
    for (name, agent) in conditions {
        let file: ConditionFile = serde_json::from_str(
            &std::fs::read_to_string(root.join(format!("conditions/{name}.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(file.identity.agent, agent);
        assert_eq!(file.identity.repeat, 3);
        let census = file.settings.census.as_ref().expect("a census was taken");
        assert!(census.digest_holds());
        assert!(
            census.tools.iter().any(|t| t.ends_with("submit_csv")),
            "{name}"
        );
        for id in file.questions.keys() {
            let result: QuestionResult = serde_json::from_str(
                &std::fs::read_to_string(root.join(format!("{id}_results/{name}/result.json")))
                    .unwrap(),
            )
            .unwrap();
            for a in &result.attempts {
                verdicts
                    .entry((id.clone(), a.attempt))
                    .or_default()
                    .push((a.exact, format!("{:.6}", a.f1)));
            }
        }
    }
    assert_eq!(verdicts.len(), 36);
    let exact = verdicts.values().filter(|v| v[0].0).count();
    assert!(exact > 0 && exact < 36, "some attempts miss: {exact}");
    for (key, v) in &verdicts {
        assert_eq!(v.len(), 4, "{key:?}");
        assert!(v.iter().all(|x| *x == v[0]), "{key:?}: {v:?}");
    }
    let summary = std::fs::read_to_string(repo().join("results-hosts/SUMMARY.md")).unwrap();
    assert!(summary.contains("**The model is a stand-in in every episode.**"));
    // The overhead table may be split to fit the page, each part repeating
    // the first column: codex's rows, together, state neither cost nor
    // input tokens.
    let codex_rows: Vec<&str> = summary
        .lines()
        .filter(|l| l.starts_with("| Stand-in model (skill 60) · codex |"))
        .collect();
    assert!(
        codex_rows
            .iter()
            .any(|l| l.contains("| codex-cli 0.171.0 |")),
        "{codex_rows:?}"
    );
    let not_stated: usize = codex_rows
        .iter()
        .map(|l| l.matches("not stated").count())
        .sum();
    assert_eq!(not_stated, 2, "{codex_rows:?}");
}
