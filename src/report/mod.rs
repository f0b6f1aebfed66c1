//! Reports over runs roots and studies: loading what was recorded into
//! the view model, aggregating it, and describing every table once.
//!
//! - [`load`]: the loaders (the only readers of a runs root here).
//! - [`view`]: the view model they fill ([`view::RootView`] and the rest).
//! - [`study`]: a study's conditions drawn from one or more roots, and its
//!   statistics; [`stats`]: bootstrap intervals, pass@k.
//! - [`grid`]: a table described once, typed cells; [`tables`]: every table
//!   of the reports as a grid.
//! - [`diff`]: an answer against its ground truth, row by row (an attempt
//!   page's diff).
//!
//! Everything here is deterministic: sorted conditions and questions, and
//! numbers worded by [`crate::format`] alone. Writing a report in a
//! syntax (Markdown, HTML, terminal, CSV, RTF) is the render layer's.

pub mod compare;
pub mod diff;
pub mod grid;
pub mod load;
pub mod stats;
pub mod study;
pub mod study_file;
pub mod tables;
pub mod view;

use std::fmt::Write as _;

use crate::runs::records::ConditionFile;

/// A condition's name for people: `demo-kg, all tools · KG named`,
/// `sparql-only · KG named`, with withheld tools and the label after.
pub fn label(condition: &ConditionFile) -> String {
    let id = &condition.identity;
    let mut text = match (&id.server, id.level) {
        (Some(server), crate::runs::identity::ToolLevel::AllTools) => {
            format!("{server}, all tools")
        }
        _ => "sparql-only".to_string(),
    };
    if !id.withheld.is_empty() {
        let _ = write!(text, " without {}", id.withheld.join(", "));
    }
    if id.strict_upstream_errors {
        text.push_str(", strict errors");
    }
    text.push_str(if id.kg_hint.names_graph() {
        " · KG named"
    } else {
        " · KG not named"
    });
    if let Some(suffix) = crate::runs::identity::label_of(&condition.name) {
        let _ = write!(text, " ({suffix})");
    }
    text
}
