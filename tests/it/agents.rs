//! Studies over several agents (`[[agents]]` in `study.toml`,
//! `docs/PUBLISHING.md`, "Agents"), regions that name their study from
//! outside it (`study=DIR`), the `question` region, and `paper tables`'
//! main table across studies: through the real command line, over the
//! committed demo roots (`runs-AGENT-CORPUS`) and work folders.

use std::path::Path;

use crate::support::fixture::fixture;
use crate::support::{okn_in, repo, stderr, stdout, work_dir};

/// The agents of the committed studies, in `study.toml` order.
const AGENTS: [(&str, &str); 3] = [
    ("expert", "Expert (skill 85)"),
    ("competent", "Competent (skill 60)"),
    ("novice", "Novice (skill 40)"),
];

/// `okn-benchmark paper tables ARGS` in `dir`.
fn paper_tables(dir: &Path, args: &[&str]) -> std::process::Output {
    okn_in(dir)
        .args(["paper", "tables"])
        .args(args)
        .output()
        .unwrap()
}

/// The cells of a Markdown table row, trimmed.
fn cells(row: &str) -> Vec<&str> {
    row.trim()
        .trim_matches('|')
        .split('|')
        .map(str::trim)
        .collect()
}

/// `paper tables` with no `--study` finds the three committed studies and
/// prints first the main table across them, in their `order` (the floor
/// first), one row per condition and agent, each row the condition's own
/// recorded aggregate.
#[test]
fn paper_tables_open_with_the_main_table_across_studies_in_order() {
    let out = paper_tables(&repo(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("## Main results across studies\n\nTable 1. "),
        "{text}"
    );
    let table: Vec<&str> = text.split("\n\n").nth(2).unwrap().lines().skip(2).collect();
    // 3 agents × (2 single-graph + 3 cross-graph + 2 ontology conditions),
    // then the four hosts of "one agent, four hosts".
    assert_eq!(table.len(), 25, "{text}");
    let studies: Vec<&str> = table.iter().map(|r| cells(r)[0]).collect();
    assert!(
        studies[..6].iter().all(|s| s.starts_with("Single-graph")),
        "{studies:?}"
    );
    assert!(
        studies[6..15].iter().all(|s| s.starts_with("Cross-graph")),
        "{studies:?}"
    );
    assert!(
        studies[15..21].iter().all(|s| s.starts_with("Ontology")),
        "{studies:?}"
    );
    assert!(
        studies[21..]
            .iter()
            .all(|s| s.starts_with("One agent, four hosts")),
        "{studies:?}"
    );
    // Each row is its condition's recorded aggregate.
    let roots = [
        (
            "runs-AGENT-single",
            &["demo-kg-all-tools__kg-named", "sparql-only__kg-named"][..],
            0,
        ),
        (
            "runs-AGENT-cross",
            &[
                "demo-kg-all-tools__kg-named",
                "demo-kg-all-tools__kg-not-named",
                "demo-kg-all-tools-without-get_schema-lookup_uri__kg-named",
            ][..],
            6,
        ),
        (
            "runs-AGENT-ontology",
            &["demo-kg-all-tools__kg-named", "sparql-only__kg-named"][..],
            15,
        ),
    ];
    for (pattern, conditions, first) in roots {
        for (i, (agent, label)) in AGENTS.iter().enumerate() {
            for (j, condition) in conditions.iter().enumerate() {
                let row = cells(table[first + i * conditions.len() + j]);
                assert_eq!(row[2], *label, "{row:?}");
                let root = repo().join(pattern.replace("AGENT", agent));
                let c: serde_json::Value = serde_json::from_slice(
                    &std::fs::read(root.join(format!("conditions/{condition}.json"))).unwrap(),
                )
                .unwrap();
                let a = &c["aggregate"];
                // The host, by the version it recorded (issue 25, section 5).
                assert_eq!(
                    row[3],
                    c["settings"]["agent_version"].as_str().unwrap(),
                    "{row:?}"
                );
                // No model: a scripted agent plays none (the column is there
                // for the hosts study's models).
                assert_eq!(row[4], "—", "{row:?}");
                assert_eq!(row[5], a["measured_questions"].to_string(), "{row:?}");
                assert_eq!(
                    row[6],
                    format!("{:.2}", a["exact_rate"].as_f64().unwrap()),
                    "{row:?}"
                );
                assert_eq!(
                    row[9],
                    format!("{:.2}", a["mean_f1"].as_f64().unwrap()),
                    "{row:?}"
                );
                assert_eq!(row[10], a["blocked_attempts"].to_string(), "{row:?}");
            }
        }
    }
    // The floor: the expert exact on every attempt, the novice not.
    assert_eq!(cells(table[0])[6], "1.00");
    assert_ne!(cells(table[4])[6], "1.00");
    // Then each study's own tables, numbered on.
    assert!(text.contains("\nTable 2. Main results:"), "{text}");
    // Deltas within an agent: each row's condition and baseline share it.
    assert!(
        text.contains("against each agent's own Full toolkit"),
        "{text}"
    );
    for row in text
        .lines()
        .filter(|l| l.contains(" · sparql-only control | "))
    {
        let c = cells(row);
        if c.len() == 5 {
            let agent = |s: &str| s.split(" · ").next().unwrap().to_string();
            assert_eq!(agent(c[0]), agent(c[1]), "{row}");
        }
    }
}

/// A study with agents draws the heatmap once per agent and no combined
/// one, and its pages embed each.
#[test]
fn a_study_with_agents_has_a_heatmap_per_agent() {
    for study in ["results-single", "results-cross", "results-ontology"] {
        let figures = repo().join(study).join("figures");
        assert!(!figures.join("heatmap.svg").exists(), "{study}");
        let summary = std::fs::read_to_string(repo().join(study).join("SUMMARY.md")).unwrap();
        for (key, label) in AGENTS {
            let svg = std::fs::read_to_string(figures.join(format!("heatmap-{key}.svg"))).unwrap();
            // Its own conditions only, labelled without the agent: the
            // agent is named once, in the title (issue 26, section 3:
            // every figure says what it holds).
            assert_eq!(svg.matches("(skill ").count(), 1, "{study}/{key}");
            assert!(svg.contains(&format!("{label}: ")), "{study}/{key}");
            assert!(
                summary.contains(&format!("![{label}: Exact rate of every question")),
                "{study}: {label}"
            );
            assert!(summary.contains(&format!("(figures/heatmap-{key}.svg)")));
        }
    }
}

/// A study over two agents' roots, written into a work folder.
fn agents_study(extra: &str) -> String {
    let root = |name: &str| repo().join(name).display().to_string();
    format!(
        "title = \"T\"\n{extra}\n[[agents]]\nkey = \"a\"\nroot = {:?}\n\n[[agents]]\nkey = \"b\"\nlabel = \"Bee\"\nroot = {:?}\n",
        root("runs-expert-single"),
        root("runs-novice-single"),
    )
}

/// Every mistake in `[[agents]]` is refused, naming study.toml and its line.
#[test]
fn agent_mistakes_are_refused_at_their_line() {
    let ok = agents_study("");
    let cases = [
        (
            ok.replace("title = \"T\"\n", "title = \"T\"\nroots = [\"../x\"]\n"),
            "study.toml:2:",
            "with [[agents]], each agent names its runs root",
        ),
        (
            format!(
                "{ok}\n[[conditions]]\nkey = \"c\"\nroot = \"../x\"\nname = \"sparql-only__kg-named\"\n"
            ),
            "study.toml:13:",
            "condition 'c' names a root",
        ),
        (
            ok.replace("key = \"b\"", "key = \"a\""),
            "study.toml:8:",
            "agent key 'a' is used twice",
        ),
        // At its agent's `root =` line (it was line 1: red-team pass, issue 12).
        (
            ok.replace(
                &format!(
                    "{:?}",
                    repo().join("runs-novice-single").display().to_string()
                ),
                "\"../runs-nope\"",
            ),
            "study.toml:10:",
            "runs root '../runs-nope' not found",
        ),
        (
            ok.replace("label = \"Bee\"", "label = \"a\""),
            "study.toml:8:",
            "agent label 'a' is used twice",
        ),
        (
            ok.replace("key = \"a\"", "key = \"a b\""),
            "study.toml:4:",
            "agent key 'a b'",
        ),
        (
            format!(
                "{ok}\n[[conditions]]\nkey = \"c\"\nname = \"demo-kg-all-tools__kg-not-named\"\n"
            ),
            "",
            "is not recorded in",
        ),
        (
            ok.replace("title = \"T\"\n", "title = \"T\"\nbaseline = \"nope\"\n"),
            "study.toml:2:",
            "baseline 'nope' is not a condition of this study; keys: demo-kg-all-tools__kg-named, sparql-only__kg-named",
        ),
    ];
    for (toml, at, message) in cases {
        let dir = work_dir(&[("s/study.toml", &toml)]);
        let out = paper_tables(dir.path(), &["--study", "s"]);
        assert_eq!(out.status.code(), Some(2), "{toml}");
        let err = stderr(&out);
        assert!(
            err.contains(message) && err.contains(at),
            "{message}: {err}\n{toml}"
        );
    }
    // The good one: every condition of each root, keyed AGENT/NAME, and
    // the label of an agent without one is its key.
    let dir = work_dir(&[("s/study.toml", &ok)]);
    let out = paper_tables(dir.path(), &["--study", "s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("| a · demo-kg, all tools · KG named | scripted:skill:85:101 |"),
        "{text}"
    );
    assert!(
        text.contains("| Bee · sparql-only · KG named | scripted:skill:40:302 |"),
        "{text}"
    );
}

/// Prose names a question through the `question` region, and a region
/// names a condition of another agent as its baseline only to be refused.
#[test]
fn question_regions_and_baselines_within_an_agent() {
    let toml = agents_study("baseline = \"demo-kg-all-tools__kg-named\"\nfigures = []");
    let prose = "# S\n\nHard: <!-- okn:question which=separating -->?<!-- /okn:question -->.\n";
    let dir = work_dir(&[("s/study.toml", &toml), ("s/S.md", prose)]);
    let out = okn_in(dir.path()).arg("build").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let filled = std::fs::read_to_string(dir.path().join("s/S.md")).unwrap();
    // The committed novice misses what the expert always answers.
    let id = filled.split('`').nth(1).unwrap();
    assert!(id.ends_with("_single"), "{filled}");
    for (region, message) in [
        (
            "<!-- okn:question which=nope -->?<!-- /okn:question -->",
            "which=nope: expected",
        ),
        (
            "<!-- okn:question which=defeats-every-condition -->?<!-- /okn:question -->",
            "no question of this study is defeats-every-condition",
        ),
        (
            "<!-- okn:number condition=b/sparql-only__kg-named metric=delta baseline=a/demo-kg-all-tools__kg-named -->?<!-- /okn:number -->",
            "is another agent's condition than b/sparql-only__kg-named",
        ),
    ] {
        std::fs::write(dir.path().join("s/S.md"), format!("# S\n\nx {region}\n")).unwrap();
        let out = okn_in(dir.path()).arg("build").output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{region}");
        let err = stderr(&out);
        assert!(
            err.contains("S.md:3:") && err.contains(message),
            "{message}: {err}"
        );
    }
    // Without baseline=, a delta is against its own agent's baseline.
    std::fs::write(
        dir.path().join("s/S.md"),
        "# S\n\nx <!-- okn:number condition=b/sparql-only__kg-named metric=delta -->?<!-- /okn:number -->\n\n<!-- okn:deltas -->\n<!-- /okn:deltas -->\n",
    )
    .unwrap();
    let out = okn_in(dir.path()).arg("build").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let filled = std::fs::read_to_string(dir.path().join("s/S.md")).unwrap();
    assert!(
        filled.contains(
            "| Bee · sparql-only · KG named | Bee · demo-kg, all tools · KG named | 12 |"
        ),
        "{filled}"
    );
    assert!(
        !filled.contains("| Bee · sparql-only · KG named | a ·"),
        "{filled}"
    );
}

/// A Markdown file outside any study fills regions that name their study
/// (`study=DIR`, relative to the file), and refuses one that names no
/// study this build reads, or a figure of another study.
#[test]
fn regions_outside_a_study_name_their_study() {
    let dir = fixture();
    let d = dir.path();
    let readme = "# Fixture\n\nThe study holds <!-- okn:number study=../results-demo metric=attempts -->?<!-- /okn:number --> episodes; <!-- okn:question study=../results-demo which=defeats-every-condition -->?<!-- /okn:question --> defeats it.\n";
    std::fs::write(d.join("docs/overview.md"), readme).unwrap();
    let out = okn_in(d).arg("build").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let filled = std::fs::read_to_string(d.join("docs/overview.md")).unwrap();
    // Two conditions of the fixture's study × 12 questions × 3 attempts.
    assert!(filled.contains("metric=attempts -->72<!--"), "{filled}");
    assert!(
        filled.contains("which=defeats-every-condition -->`fiokg-spatialkg-spoke-okn-chemical-county-obesity_cross`<!--"),
        "{filled}"
    );
    let page = std::fs::read_to_string(d.join("docs/overview.html")).unwrap();
    assert!(page.contains("The study holds 72 episodes;"), "{page}");
    assert_eq!(
        okn_in(d)
            .args(["build", "--check"])
            .output()
            .unwrap()
            .status
            .code(),
        Some(0)
    );
    for (region, message) in [
        (
            "<!-- okn:number study=../nowhere metric=attempts -->?<!-- /okn:number -->",
            "study=../nowhere: no study this build reads is there",
        ),
        (
            "<!-- okn:figure study=../results-demo name=heatmap -->\n<!-- /okn:figure -->",
            "okn:figure with study=../results-demo",
        ),
    ] {
        std::fs::write(d.join("docs/overview.md"), format!("# O\n\nx {region}\n")).unwrap();
        let out = okn_in(d).arg("build").output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{region}");
        let err = stderr(&out);
        assert!(
            err.contains("overview.md:3:") && err.contains(message),
            "{message}: {err}"
        );
    }
}
