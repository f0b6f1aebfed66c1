//! Snapshot tests (insta) of the view model (`report::view`): what the
//! loaders read from a recorded runs root, before any renderer sees it.
//! Every page, table and figure is a function of these values, so a change
//! to what is loaded shows here first, apart from how it is written.
//!
//! They read the committed demo root `runs-expert-cross` (its recorded
//! numbers are fixed). The repository's path is masked. Update as the
//! other snapshots: `INSTA_UPDATE=always scripts/test views`.

use okn_benchmark::report::grid::Cell;
use okn_benchmark::report::{load, tables};

use crate::support::fixture::{CONDITION, DEMO_ROOT, QUESTION};
use crate::support::repo;

fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_omit_expression(true);
    let repo = repo().display().to_string();
    settings.add_filter(&regex_escape(&repo), "[repository]");
    settings
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let special = !(c.is_alphanumeric() || c == '/' || c == '_' || c == '-');
            special.then_some('\\').into_iter().chain([c])
        })
        .collect()
}

/// The root's conditions as a typed table: the numbers every README,
/// terminal report and site page of the root shows.
#[test]
fn a_roots_condition_table_holds_typed_cells() {
    let view = load::root(&repo().join(DEMO_ROOT));
    assert!(view.problems.is_empty(), "{:?}", view.problems);
    assert_eq!(view.conditions.len(), 3);
    assert_eq!(view.questions.len(), 12);
    let grid = tables::root_conditions(&view);
    // Rates stay numbers until a syntax writes them.
    let exact = grid
        .columns
        .iter()
        .position(|c| c.header == Cell::from("exact"))
        .unwrap();
    assert!(
        matches!(grid.rows[0][exact], Cell::Rate(Some(_))),
        "{:?}",
        grid.rows[0][exact]
    );
    // Issue 25, section 5: the host is named by the version it recorded
    // (a root of runs-root format 2: `settings.agent_version`).
    let host = grid
        .columns
        .iter()
        .position(|c| c.header == Cell::from("host"))
        .unwrap();
    assert_eq!(
        grid.rows[0][host],
        Cell::from("okn-benchmark 0.1.0 (scripted agent)")
    );
    settings().bind(|| {
        insta::assert_snapshot!(
            "root_conditions_grid",
            serde_json::to_string_pretty(&grid).unwrap()
        )
    });
}

/// One question of the root: its text and its result under every
/// condition that recorded it.
#[test]
fn a_question_view_holds_its_text_and_results() {
    let view = load::root(&repo().join(DEMO_ROOT));
    let question = &view.questions[QUESTION];
    assert!(question.text.as_deref().is_some_and(|t| !t.is_empty()));
    settings().bind(|| {
        insta::assert_snapshot!(
            "question_view",
            serde_json::to_string_pretty(question).unwrap()
        )
    });
}

/// One attempt as the site's attempt page sees it: its verdict, what its
/// folder holds, the answer and the tool calls, loaded.
#[test]
fn an_attempt_view_holds_what_its_folder_recorded() {
    let view = load::root(&repo().join(DEMO_ROOT));
    let detail = load::question(&view, QUESTION, false).unwrap();
    // Issue 26, section 4: checked as it is read (a root loaded with its
    // records deferred, as a build with the site loads one), the detail
    // is the same, with nothing to say of a sound root.
    let deferred = load::root_with(&repo().join(DEMO_ROOT), load::Records::Deferred);
    assert!(deferred.records_deferred && deferred.problems.is_empty());
    let checked = load::question(&deferred, QUESTION, true).unwrap();
    assert_eq!(checked.problems, Vec::<String>::new());
    assert_eq!(
        serde_json::to_value(&checked).unwrap(),
        serde_json::to_value(&detail).unwrap()
    );
    let attempt = &detail.conditions[CONDITION].attempts[0];
    assert_eq!(attempt.verdict, attempt.result.verdict());
    assert!(attempt.files.contains("prompt.txt"));
    settings().bind(|| {
        insta::assert_snapshot!(
            "attempt_view",
            serde_json::to_string_pretty(attempt).unwrap()
        )
    });
}

/// A study's conditions as its rates region shows them, with the numbers
/// behind the figures: the committed study `results-cross/` loaded.
#[test]
fn a_study_view_holds_its_conditions_and_rates() {
    let study = okn_benchmark::report::study_file::load(&repo().join("results-cross")).unwrap();
    assert!(study.problems.is_empty(), "{:?}", study.problems);
    // Three agents × three conditions, agent by agent.
    assert_eq!(study.data.conditions.len(), 9);
    let agents: Vec<&str> = study.data.agents.iter().map(|a| a.key.as_str()).collect();
    assert_eq!(agents, ["expert", "competent", "novice"]);
    let first = &study.data.conditions[0];
    assert_eq!(
        (
            first.key.as_str(),
            first.base_key.as_str(),
            first.label.as_str()
        ),
        (
            "expert/named",
            "named",
            "Expert (skill 85) · Full toolkit, KG named"
        )
    );
    assert_eq!(study.baseline, "named");
    // Deltas within an agent only: each agent's two other conditions
    // against its own named one.
    let pairs = study.data.delta_pairs(&study.baseline);
    assert_eq!(pairs.len(), 6);
    for (b, c) in &pairs {
        assert_eq!(b.agent, c.agent);
        assert_eq!(b.base_key, "named");
    }
    // The agent × condition table: a row per condition, rate and interval
    // per agent, each the condition's own stats.
    let table = okn_benchmark::render::study::agents_table(&study.data);
    for c in &study.data.conditions {
        let row: Vec<&str> = table
            .lines()
            .find(|l| l.starts_with(&format!("| {} |", c.base_label)))
            .unwrap_or_else(|| panic!("{}\n{table}", c.base_label))
            .trim_matches('|')
            .split('|')
            .map(str::trim)
            .collect();
        let column = study
            .data
            .agents
            .iter()
            .position(|a| Some(&a.key) == c.agent.as_ref())
            .unwrap();
        let s = c.stats();
        assert_eq!(
            row[1 + 2 * column],
            okn_benchmark::format::rate(s.exact_rate),
            "{table}"
        );
        assert_eq!(
            row[2 + 2 * column],
            okn_benchmark::format::interval(s.interval),
            "{table}"
        );
    }
    let grid = tables::study_rates(&study.data);
    settings().bind(|| {
        insta::assert_snapshot!(
            "study_rates_grid",
            serde_json::to_string_pretty(&grid).unwrap()
        )
    });
}
