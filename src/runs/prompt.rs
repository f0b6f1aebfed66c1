//! What the agent is actually asked (`README.md`, "Episodes: run, report,
//! rescore, freeze"): the record's summary, the KG hint line when `--kg-hint tags`,
//! then a fixed suffix, identical in every arm so no condition is
//! advantaged by its wording.

use crate::corpus::Record;

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
}
