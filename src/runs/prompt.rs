//! What the agent is actually asked (`README.md`, "Episodes: run, report,
//! rescore, freeze"): the record's summary, the KG hint line when `--kg-hint tags`,
//! then a fixed suffix, identical in every arm so no condition is
//! advantaged by its wording; and the prompts a root recorded
//! (`prompt.txt`), which `merge` and `compare` hold to one question
//! (issue 24, item 12).

use std::collections::BTreeMap;

use crate::corpus::Record;
use crate::error::Result;
use crate::layout::{PROMPT_FILE, RunsRoot};

/// The fixed suffix, word for word: identical in every condition, so no
/// condition is advantaged by its wording.
pub const SUFFIX: &str = "Save the results as a csv file, no prose!
Call the submit_csv tool with the complete result table. Use a header row of
column names. If nothing satisfies the question, submit the header row on its
own \u{2014} an empty result is an answer, and is not the same as not answering. Write
IRIs in full \u{2014} the complete IRI, not a prefixed or abbreviated form.
";

/// The KG hint line for `tags`: `Use this knowledge graph: spoke-okn.`, or
/// with several tags `Use these knowledge graphs: a, b.`; `None` without
/// tags.
pub fn hint(tags: &[String]) -> Option<String> {
    match tags {
        [] => None,
        [one] => Some(format!("Use this knowledge graph: {one}.")),
        many => Some(format!("Use these knowledge graphs: {}.", many.join(", "))),
    }
}

/// The prompt for `record`, with the hint line when `kg_hint` is true.
pub fn prompt(record: &Record, kg_hint: bool) -> String {
    let mut text = record.summary.trim().to_string();
    text.push_str("\n\n");
    if kg_hint && let Some(line) = hint(&record.tags) {
        text.push_str(&line);
        text.push_str("\n\n");
    }
    text.push_str(SUFFIX);
    text
}

/// Where `old` and `new` part, as a short excerpt of each around the first
/// character that differs (at most 30 characters before it and 40 from
/// it, `…` where cut; line ends shown as `⏎`). Cut at characters, never
/// inside one.
pub fn excerpts(old: &str, new: &str) -> (String, String) {
    let same = old
        .chars()
        .zip(new.chars())
        .take_while(|(a, b)| a == b)
        .count();
    let start = same.saturating_sub(30);
    let excerpt = |text: &str| {
        let total = text.chars().count();
        let shown: String = text
            .chars()
            .skip(start)
            .take(same - start + 40)
            .map(|c| if c == '\n' { '⏎' } else { c })
            .collect();
        format!(
            "{}{shown}{}",
            if start > 0 { "…" } else { "" },
            if same + 40 < total { "…" } else { "" }
        )
    };
    (excerpt(old), excerpt(new))
}

/// The prompts the attempts `attempts` of question `id` under condition
/// `name` recorded in `root` (`prompt.txt`), by attempt number; an attempt
/// without one is left out (nothing recorded to compare).
///
/// Errors: a `prompt.txt` that is there and is not a regular file or
/// cannot be read, named.
pub fn recorded(
    root: &RunsRoot,
    id: &str,
    name: &str,
    attempts: impl IntoIterator<Item = u32>,
) -> Result<BTreeMap<u32, String>> {
    let mut prompts = BTreeMap::new();
    for attempt in attempts {
        let path = root.attempt_dir(id, name, attempt).join(PROMPT_FILE);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        // A link or a FIFO in a runs root is damage (a FIFO would never
        // end the read).
        if !meta.file_type().is_file() {
            return Err(crate::error::Error::file(
                &path,
                "is not a regular file: a recorded prompt is one; restore it from version \
                 control",
            ));
        }
        prompts.insert(attempt, crate::fsutil::read_text(&path)?);
    }
    Ok(prompts)
}

/// `prompt` without its KG hint paragraph (what [`hint`] wrote), to
/// compare the prompts of two conditions that differ in `--kg-hint`
/// alone: the summary and the suffix must still agree.
pub fn without_hint(prompt: &str) -> String {
    prompt
        .split("\n\n")
        .filter(|p| {
            !((p.starts_with("Use this knowledge graph: ")
                || p.starts_with("Use these knowledge graphs: "))
                && p.ends_with('.')
                && !p.contains('\n'))
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(tags: &[&str]) -> Record {
        Record {
            id: "spoke-okn_x".into(),
            tier: Some("x".into()),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            summary: "How many places?".into(),
            form: crate::sparql::QueryForm::Select,
            path: "c/spoke-okn_x.rq".into(),
            metadata: Default::default(),
            query: "SELECT * {}".into(),
            query_line: 3,
            expectations: Vec::new(),
        }
    }

    #[test]
    fn the_prompt_is_summary_hint_and_suffix() {
        let with = prompt(&record(&["spoke-okn"]), true);
        assert_eq!(
            with,
            format!("How many places?\n\nUse this knowledge graph: spoke-okn.\n\n{SUFFIX}")
        );
        let without = prompt(&record(&["spoke-okn"]), false);
        assert_eq!(without, format!("How many places?\n\n{SUFFIX}"));
        assert!(SUFFIX.ends_with("not a prefixed or abbreviated form.\n"));
        assert_eq!(
            hint(&["fiokg".into(), "spatialkg".into()]).unwrap(),
            "Use these knowledge graphs: fiokg, spatialkg."
        );
    }

    #[test]
    fn excerpts_show_where_two_texts_part_and_cut_at_characters() {
        let old = "How many chemicals are active in at least two assays?\n\nUse this";
        let new = "How many chemicals are active in at least three assays?\n\nUse this";
        assert_eq!(
            excerpts(old, new),
            (
                "…icals are active in at least two assays?⏎⏎Use this".to_string(),
                "…icals are active in at least three assays?⏎⏎Use this".to_string()
            )
        );
        // Multi-byte characters on both sides of the cut.
        let (a, b) = excerpts(&"é".repeat(100), &format!("{}ü", "é".repeat(99)));
        assert!(a.starts_with('…') && a.ends_with('é'), "{a}");
        assert!(b.ends_with('ü'), "{b}");
    }

    #[test]
    fn the_hint_paragraph_alone_is_left_out() {
        let r = record(&["fiokg", "spatialkg"]);
        assert_eq!(without_hint(&prompt(&r, true)), prompt(&r, false));
        assert_eq!(without_hint(&prompt(&r, false)), prompt(&r, false));
    }
}
