//! Reports over a runs root (seed 000, "Report", "Where the results go"):
//! loading what was recorded, and the generated files: the root's
//! `summary.csv`, each question's `summary.csv`, and `README.md` (a table per
//! question, every condition side by side).
//!
//! Everything here is a function of the files on disk, byte for byte
//! deterministic: sorted conditions and questions, fixed number formats.
//! Exclusions are named in the terminal report and the condition JSON, not
//! in the Markdown, so the shareable summary stays about the results.

pub mod stats;
pub mod study;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use rayon::prelude::*;

use crate::error::Result;
use crate::format::{count, rate, seconds};
use crate::fsutil::write_atomic;
use crate::runs::layout::{README_FILE, RESULT_FILE, RunsRoot, SUMMARY_FILE};
use crate::runs::records::{
    ConditionFile, QuestionResult, QuestionSummary, SUMMARY_COLUMNS, summary_row,
};
use crate::runs::run::read_json;
use crate::table::Table;

/// Everything recorded in a runs root.
#[derive(Debug, Clone, Default)]
pub struct RootData {
    /// Conditions, by name.
    pub conditions: BTreeMap<String, ConditionFile>,
    /// Question id → condition name → result.
    pub results: BTreeMap<String, BTreeMap<String, QuestionResult>>,
    /// Files that could not be read, each named with why; the rest is
    /// reported anyway.
    pub problems: Vec<String>,
}

/// Reads every condition and result of `root`. An unreadable file is
/// named in [`RootData::problems`] and skipped.
pub fn load(root: &RunsRoot) -> RootData {
    let mut data = RootData::default();
    for name in root.condition_names() {
        let path = root.condition_file(&name);
        match read_json::<ConditionFile>(&path) {
            Ok(condition) if condition.format != crate::runs::records::RUNS_FORMAT => {
                data.problems.push(format!(
                    "{}: format {} is not one this version reads ({}): use the \
                     okn-benchmark that recorded it",
                    path.display(),
                    condition.format,
                    crate::runs::records::RUNS_FORMAT
                ));
            }
            Ok(condition) => {
                data.conditions.insert(name, condition);
            }
            Err(e) => data.problems.push(e.to_string()),
        }
    }
    // Result files are read in parallel (a large root holds tens of
    // thousands), then gathered in the order a sequential read would meet
    // them, so the problems keep their order.
    let wanted: Vec<(&String, &String)> = data
        .conditions
        .iter()
        .flat_map(|(name, condition)| condition.questions.keys().map(move |id| (name, id)))
        .collect();
    let read: Vec<Result<QuestionResult>> = wanted
        .par_iter()
        .map(|(name, id)| {
            let path = root.condition_dir(id, name).join(RESULT_FILE);
            let result = read_json::<QuestionResult>(&path)?;
            check_result(&result, id, name).map_err(|m| crate::error::Error::file(&path, m))?;
            Ok(result)
        })
        .collect();
    let mut results: BTreeMap<String, BTreeMap<String, QuestionResult>> = BTreeMap::new();
    for ((name, id), result) in wanted.into_iter().zip(read) {
        match result {
            Ok(result) => {
                results
                    .entry(id.clone())
                    .or_default()
                    .insert(name.clone(), result);
            }
            Err(e) => data.problems.push(e.to_string()),
        }
    }
    // The condition file repeats each question's summary and their
    // aggregate: both must agree with the result files, or a table built
    // from one would contradict a page built from the other.
    for (name, condition) in &data.conditions {
        let path = root.condition_file(name);
        for (id, summary) in &condition.questions {
            if let Some(result) = results.get(id).and_then(|r| r.get(name))
                && counts(summary) != counts(&result.summary)
            {
                data.problems.push(format!(
                    "{}: question '{id}' ({}) disagrees with its result.json ({}): run \
                     `okn-benchmark rescore` on the runs root to recompute it",
                    path.display(),
                    counts_text(summary),
                    counts_text(&result.summary)
                ));
            }
        }
        let fresh = crate::runs::records::aggregate(&condition.questions);
        let a = &condition.aggregate;
        if (a.questions, a.attempts, a.blocked_attempts)
            != (fresh.questions, fresh.attempts, fresh.blocked_attempts)
        {
            data.problems.push(format!(
                "{}: its aggregate ({} questions, {} attempts, {} blocked) disagrees with its \
                 questions ({}, {}, {}): run `okn-benchmark rescore` on the runs root",
                path.display(),
                a.questions,
                a.attempts,
                a.blocked_attempts,
                fresh.questions,
                fresh.attempts,
                fresh.blocked_attempts
            ));
        }
    }
    data.results = results;
    data
}

/// What a recorded `result.json` must hold to be reported: the format
/// this version writes, the question and condition of the folder it sits
/// in, attempts numbered once each, and fractions in [0, 1] (new-user
/// review of issue 5: each was taken as it came and misreported).
///
/// Errors: what is wrong, worded for the user.
fn check_result(
    result: &QuestionResult,
    question: &str,
    condition: &str,
) -> std::result::Result<(), String> {
    use crate::runs::records::RUNS_FORMAT;
    if result.format != RUNS_FORMAT {
        return Err(format!(
            "format {} is not one this version reads ({RUNS_FORMAT}): use the okn-benchmark \
             that recorded it",
            result.format
        ));
    }
    if result.question != question || result.condition != condition {
        return Err(format!(
            "records question '{}' under condition '{}', but sits in the folder of '{question}' \
             under '{condition}': was it copied from another folder?",
            result.question, result.condition
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    for a in &result.attempts {
        if !seen.insert(a.attempt) {
            return Err(format!("attempt {} is recorded twice", a.attempt));
        }
        let fractions = [("f1", Some(a.f1))]
            .into_iter()
            .chain(a.score.iter().flat_map(|s| {
                [
                    ("f1", Some(s.f1)),
                    ("strict_f1", Some(s.strict_f1)),
                    ("row_precision", Some(s.row_precision)),
                    ("row_recall", Some(s.row_recall)),
                ]
            }));
        for (name, value) in fractions {
            if let Some(v) = value
                && !(0.0..=1.0).contains(&v)
            {
                return Err(format!(
                    "attempt {}: {name} is {v}, not a fraction between 0 and 1",
                    a.attempt
                ));
            }
        }
        for (name, v) in [("wall_s", a.wall_s), ("server_s", a.server_s)] {
            if !v.is_finite() || v < 0.0 {
                return Err(format!(
                    "attempt {}: {name} is {v}, not a duration in seconds",
                    a.attempt
                ));
            }
        }
    }
    let fresh = crate::runs::records::summarize(&result.attempts, result.ordered_key);
    if counts(&fresh) != counts(&result.summary) {
        return Err(format!(
            "its summary ({}) disagrees with its attempts ({}): run `okn-benchmark rescore` \
             on the runs root to recompute it from the attempts",
            counts_text(&result.summary),
            counts_text(&fresh)
        ));
    }
    Ok(())
}

/// The counts of a question's summary every published number rests on:
/// attempts, measured, blocked, exact, strict exact, ordered.
fn counts(q: &QuestionSummary) -> [Option<u32>; 6] {
    [
        Some(q.attempts),
        Some(q.measured),
        Some(q.blocked),
        Some(q.exact),
        Some(q.strict_exact),
        q.ordered,
    ]
}

fn counts_text(q: &QuestionSummary) -> String {
    format!(
        "{} attempts, {} measured, {} blocked, {} exact",
        q.attempts, q.measured, q.blocked, q.exact
    )
}

/// A condition's name for people: `demo-kg, all tools · KG named`,
/// `sparql-only · KG named`, with withheld tools and the label after.
pub fn label(condition: &ConditionFile) -> String {
    let id = &condition.identity;
    let mut text = match (&id.server, id.level.as_str()) {
        (Some(server), "all-tools") => format!("{server}, all tools"),
        _ => "sparql-only".to_string(),
    };
    if !id.withheld.is_empty() {
        let _ = write!(text, " without {}", id.withheld.join(", "));
    }
    if id.strict_upstream_errors {
        text.push_str(", strict errors");
    }
    text.push_str(if id.kg_hint == "tags" {
        " · KG named"
    } else {
        " · KG not named"
    });
    if let Some(suffix) = condition.name.split("__").nth(2) {
        let _ = write!(text, " ({suffix})");
    }
    text
}

fn tools_text(tools: &BTreeMap<String, usize>) -> String {
    if tools.is_empty() {
        return "—".to_string();
    }
    tools
        .iter()
        .map(|(t, n)| format!("{t} ×{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn blocked_text(q: &QuestionSummary) -> String {
    if q.blocked == 0 {
        return "—".to_string();
    }
    let what = if q.measured_nothing {
        "measured nothing".to_string()
    } else {
        format!("{} of {} never reached the tools", q.blocked, q.attempts)
    };
    if q.blocked_reasons.is_empty() {
        what
    } else {
        format!("{what} ({})", q.blocked_reasons.join("; "))
    }
}

/// Makes recorded text (question text, labels, tool names) inert in
/// Markdown: `<` can open raw HTML, which the render layer passes through,
/// and `&name;` is an entity, so both become entities that render as the
/// characters themselves; newlines become spaces. Markdown's inline
/// punctuation is backslash-escaped, so a label `*star* [x](y)` stays
/// those characters rather than emphasis and a link (new-user review of
/// issue 5): `\\`, `` ` ``, `*`, `[`, `]`, `~`, and `_` where it could
/// open or close emphasis (not inside a word: `assays_cross` stays).
pub fn md_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => {
                // Only where it could start an entity reference.
                let rest: String = chars[i + 1..].iter().take(33).collect();
                let entity = rest.split_once(';').is_some_and(|(name, _)| {
                    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '#')
                });
                out.push_str(if entity { "&amp;" } else { "&" });
            }
            '\r' => {}
            '\n' => out.push(' '),
            '\\' | '`' | '*' | '[' | ']' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '_' => {
                let word = |c: Option<&char>| c.is_some_and(|c| c.is_alphanumeric());
                if !(word(i.checked_sub(1).and_then(|j| chars.get(j))) && word(chars.get(i + 1))) {
                    out.push('\\');
                }
                out.push('_');
            }
            c => out.push(c),
        }
    }
    out
}

/// `text` as a Markdown code span that holds it literally, whatever it
/// holds: the fence is one backtick longer than the longest run inside,
/// padded with a space where the text starts or ends with a backtick or a
/// space (CommonMark 0.31, "Code spans"); line breaks become spaces.
pub fn md_code(text: &str) -> String {
    let text = text.replace(['\r', '\n'], " ");
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with(['`', ' ']) || text.ends_with(['`', ' ']) {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// [`md_code`] for a table cell: `|` escaped too (GFM tables split cells at
/// a bare `|` even inside a code span; third new-user review of issue 5).
pub fn code_cell(text: &str) -> String {
    md_code(text).replace('|', "\\|")
}

/// Escapes a Markdown table cell: [`md_text`], and `|`.
pub fn cell(text: &str) -> String {
    md_text(text).replace('|', "\\|")
}

/// The question text of a result: the first paragraph of an attempt's
/// `prompt.txt`.
pub fn question_text(root: &RunsRoot, result: &QuestionResult) -> Option<String> {
    let dir = root.attempt_dir(&result.question, &result.condition, 1);
    let prompt = std::fs::read_to_string(dir.join(crate::runs::layout::PROMPT_FILE)).ok()?;
    prompt.split("\n\n").next().map(|s| s.trim().to_string())
}

/// The generated README.md of a root.
pub fn markdown(root: &RunsRoot, data: &RootData) -> String {
    // The folder's own name, however the root was spelled (`.`, `../x`).
    let title = std::fs::canonicalize(&root.root)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "runs".into());
    let mut out = String::new();
    let _ = writeln!(out, "# {title}\n");
    let _ = writeln!(
        out,
        "{README_MARK} from the episodes recorded here; do not edit by hand. \
A question's rate is its exact attempts over its measured attempts (blocked attempts are left \
out and counted); a condition's rate and mean F1 average the questions, each weighing the same.\n"
    );
    let _ = writeln!(out, "## Conditions\n");
    let _ = writeln!(
        out,
        "| condition | agent | model | effort | questions | attempts | exact | strict exact | ordered | mean F1 | always exact | ever exact | flaky | blocked | queries | wall s | server s |"
    );
    let _ = writeln!(
        out,
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for condition in data.conditions.values() {
        let a = &condition.aggregate;
        let model = condition
            .settings
            .model_resolved
            .clone()
            .or_else(|| condition.identity.model.clone())
            .map(|resolved| match &condition.identity.model {
                Some(asked) if *asked != resolved => format!("{resolved} ({asked})"),
                _ => resolved,
            })
            .unwrap_or_else(|| "—".into());
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            cell(&label(condition)),
            cell(&condition.identity.agent),
            cell(&model),
            condition.identity.effort.as_deref().unwrap_or("default"),
            a.questions,
            a.attempts,
            rate(a.exact_rate),
            rate(a.strict_exact_rate),
            rate(a.ordered_rate),
            rate(a.mean_f1),
            a.always_exact,
            a.ever_exact,
            a.flaky,
            if a.blocked_attempts == 0 {
                "—".to_string()
            } else {
                format!(
                    "{} attempts, {} questions measured nothing",
                    a.blocked_attempts, a.measured_nothing
                )
            },
            rate(a.mean_queries),
            a.mean_wall_s.map_or("—".into(), seconds),
            a.mean_server_s.map_or("—".into(), seconds),
        );
    }
    let _ = writeln!(out, "\n## Questions\n");
    // Each question's text is read from a prompt file: in parallel.
    let texts: Vec<Option<String>> = data
        .results
        .par_iter()
        .map(|(_, by_condition)| by_condition.values().find_map(|r| question_text(root, r)))
        .collect();
    for ((id, by_condition), text) in data.results.iter().zip(texts) {
        let _ = writeln!(out, "### {}\n", md_text(id));
        if let Some(text) = text {
            let _ = writeln!(out, "> {}\n", md_text(&text));
        }
        let _ = writeln!(
            out,
            "| condition | exact | strict exact | ordered | always exact | mean F1 | queries | tools called | wall s | server s | blocked |"
        );
        let _ = writeln!(
            out,
            "|---|---:|---:|---:|:---:|---:|---:|---|---:|---:|---|"
        );
        for (name, result) in by_condition {
            let q = &result.summary;
            let condition_label = data
                .conditions
                .get(name)
                .map(label)
                .unwrap_or_else(|| name.clone());
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                cell(&condition_label),
                count(q.exact, q.measured),
                count(q.strict_exact, q.measured),
                q.ordered.map_or("—".to_string(), |o| count(o, q.measured)),
                if q.measured == 0 {
                    "—"
                } else if q.always_exact {
                    "✓"
                } else {
                    "✗"
                },
                rate(q.mean_f1),
                rate(q.mean_queries),
                cell(&tools_text(&q.tools_called)),
                q.mean_wall_s.map_or("—".into(), seconds),
                q.mean_server_s.map_or("—".into(), seconds),
                cell(&blocked_text(q)),
            );
        }
        let _ = writeln!(out);
    }
    out
}

/// The terminal report: the Markdown's condition table as aligned text,
/// plus what the Markdown leaves out (exclusions, unreadable files).
pub fn terminal(root: &RunsRoot, data: &RootData) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", root.root.display());
    let mut rows = vec![vec![
        "condition".to_string(),
        "questions".into(),
        "exact".into(),
        "strict".into(),
        "ordered".into(),
        "mean F1".into(),
        "always".into(),
        "ever".into(),
        "flaky".into(),
        "blocked".into(),
    ]];
    for condition in data.conditions.values() {
        let a = &condition.aggregate;
        rows.push(vec![
            label(condition),
            a.questions.to_string(),
            rate(a.exact_rate),
            rate(a.strict_exact_rate),
            rate(a.ordered_rate),
            rate(a.mean_f1),
            a.always_exact.to_string(),
            a.ever_exact.to_string(),
            a.flaky.to_string(),
            a.blocked_attempts.to_string(),
        ]);
    }
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for row in &rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (text, w))| {
                if i == 0 {
                    format!("{text:<w$}")
                } else {
                    format!("{text:>w$}")
                }
            })
            .collect();
        let _ = writeln!(out, "  {}", line.join("  ").trim_end());
    }
    for condition in data.conditions.values() {
        for e in &condition.meta.excluded {
            let _ = writeln!(
                out,
                "  {}: excluded {} ({})",
                condition.name, e.id, e.reason
            );
        }
        for (id, q) in &condition.questions {
            if q.blocked > 0 {
                let _ = writeln!(out, "  {}: {id}: {}", condition.name, blocked_text(q));
            }
        }
    }
    for problem in &data.problems {
        let _ = writeln!(out, "  unreadable: {problem}");
    }
    out
}

/// The rows of a `summary.csv` for these results.
fn summary_table<'a>(data: &RootData, results: impl Iterator<Item = &'a QuestionResult>) -> Table {
    let mut table = Table::new(SUMMARY_COLUMNS.iter().map(|c| c.to_string()).collect());
    for result in results {
        let Some(condition) = data.conditions.get(&result.condition) else {
            continue;
        };
        for attempt in &result.attempts {
            table
                .rows
                .push(summary_row(result, &condition.identity, attempt));
        }
    }
    table
}

/// The words every generated runs-root README.md carries, by which a
/// README a person wrote is told apart (and never overwritten).
pub const README_MARK: &str = "Generated by `okn-benchmark report`";

/// Fails when `root` holds a README.md that was not generated (it lacks
/// [`README_MARK`]): regenerating would lose what a person wrote there.
///
/// Errors: [`crate::error::Error::File`] naming the README, with what to do.
pub fn check_readme(root: &RunsRoot) -> Result<()> {
    let path = root.root.join(README_FILE);
    match crate::fsutil::head(&path) {
        // The mark opens a line near the top, as `report` writes it: a
        // hand-written README that merely quotes it is still refused.
        Some(head) if !head.lines().take(5).any(|l| l.starts_with(README_MARK)) => {
            Err(crate::error::Error::file(
                &path,
                format!(
                    "this runs root's README.md was not generated (it lacks \"{README_MARK}\") \
                     and would be replaced: move what it says to another file, then run again"
                ),
            ))
        }
        _ => Ok(()),
    }
}

/// Regenerates every generated file of `root` from what is recorded: the
/// root's and each question's `summary.csv`, and `README.md` (a file whose
/// bytes are already right is not touched). Returns the problems met
/// (unreadable files, named); those are reported, the rest is written.
///
/// Errors: a README.md a person wrote ([`check_readme`]); a file that
/// cannot be written.
pub fn write_outputs(root: &RunsRoot) -> Result<Vec<String>> {
    check_readme(root)?;
    let (files, problems) = render_outputs(root);
    for (path, bytes) in files {
        if !crate::fsutil::same_contents(&path, &bytes) {
            write_atomic(&path, &bytes)?;
        }
    }
    Ok(problems)
}

/// The generated files of `root`, rendered but not written, as `(path,
/// bytes)` pairs, with the problems met while reading.
pub fn render_outputs(root: &RunsRoot) -> (Vec<(std::path::PathBuf, Vec<u8>)>, Vec<String>) {
    let data = load(root);
    let files = render_outputs_from(root, &data);
    (files, data.problems)
}

/// The generated files of `root` from its loaded `data`, as `(path,
/// bytes)` pairs.
pub fn render_outputs_from(root: &RunsRoot, data: &RootData) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut files: Vec<(std::path::PathBuf, Vec<u8>)> = data
        .results
        .par_iter()
        .map(|(id, by_condition)| {
            let table = summary_table(data, by_condition.values());
            (
                root.question_dir(id).join(SUMMARY_FILE),
                table.to_csv().into_bytes(),
            )
        })
        .collect();
    // The root's summary is the questions' rows in question order: their
    // files without their header lines, under one header (the same bytes
    // as a table of every row, without building one).
    let mut all = Table::new(SUMMARY_COLUMNS.iter().map(|c| c.to_string()).collect())
        .to_csv()
        .into_bytes();
    for (_, csv) in &files {
        let body = csv
            .iter()
            .position(|&b| b == b'\n')
            .map_or(&[][..], |i| &csv[i + 1..]);
        all.extend_from_slice(body);
    }
    files.push((root.root.join(SUMMARY_FILE), all));
    files.push((
        root.root.join(README_FILE),
        markdown(root, data).into_bytes(),
    ));
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recorded text (question ids come from file names, which may hold
    /// `<`) never becomes markup on the page beside the README (found by
    /// the browser test's planted id).
    #[test]
    fn recorded_text_is_inert_in_markdown() {
        assert_eq!(md_text("<b>x</b>"), "&lt;b&gt;x&lt;/b&gt;");
        assert_eq!(md_text("AT&T & co"), "AT&T & co");
        assert_eq!(md_text("&amp; &#60;"), "&amp;amp; &amp;#60;");
        assert_eq!(md_text("a\r\nb"), "a b");
        assert_eq!(md_code("q_1"), "`q_1`");
        assert_eq!(md_code("a`b"), "``a`b``");
        assert_eq!(md_code("`x``"), "``` `x`` ```");
        assert_eq!(code_cell("q|p"), "`q\\|p`");
        // A table row keeps its cells however the id is spelled.
        let id = "q|p*em*`tick`[c](javascript:alert(6))";
        let table = format!("| id | n |\n|---|---|\n| {} | 3 |\n", code_cell(id));
        let html = crate::render::markdown::render(&table, std::path::Path::new("."), "p").body;
        assert_eq!(
            html.matches("<td>").count() + html.matches("<td ").count(),
            2,
            "{html}"
        );
        assert!(!html.contains("<em>") && !html.contains("<a "), "{html}");
        assert_eq!(
            md_text("*star* [x](y) `c` _em_ assays_cross a\\b ~~s~~"),
            "\\*star\\* \\[x\\](y) \\`c\\` \\_em\\_ assays_cross a\\\\b \\~\\~s\\~\\~"
        );
        // ... and renders as those very characters.
        let html = crate::render::markdown::render(
            &md_text("*star* [x](y) `c` _em_ a\\b"),
            std::path::Path::new("."),
            "p",
        )
        .body;
        assert!(html.contains("*star* [x](y) `c` _em_ a\\b"), "{html}");
        assert_eq!(cell("a|b"), "a\\|b");
        let html = crate::render::markdown::render(
            &format!("### {}\n", md_text("q <img src=x onerror=alert(1)>")),
            std::path::Path::new("."),
            "p",
        )
        .body;
        assert!(!html.contains("<img"), "{html}");
        assert!(
            html.contains("q &lt;img src=x onerror=alert(1)&gt;"),
            "{html}"
        );
    }
}
