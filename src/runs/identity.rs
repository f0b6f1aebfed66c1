//! A condition's name and identity (seed 000, "Repeating and comparing",
//! "Run the conditions").
//!
//! The folder **name** derives from the flags, so the label and the settings
//! cannot disagree: `SERVER-all-tools[-without-A-B][-strict]__kg-named` or
//! `sparql-only__kg-named` (no server: it is the shared control), plus
//! `__LABEL` with `--label`. The **identity** is every setting that changes
//! what the episodes measure; two runs that differ in any of them would
//! derive the same name and silently blend, so `run` compares identities and
//! names the first field that differs.

use serde::{Deserialize, Serialize};

/// Everything that makes two runs of one condition comparable. Field order
/// is the order differences are reported in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Identity {
    /// `all-tools` or `sparql-only`.
    pub level: String,
    /// `none` or `tags`.
    pub kg_hint: String,
    /// The profile's server name (`None` for sparql-only).
    pub server: Option<String>,
    /// `claude` or `scripted:STRATEGY`.
    pub agent: String,
    /// The model asked for (`None` for a scripted agent).
    pub model: Option<String>,
    /// The effort asked for (`None`: the CLI's default).
    pub effort: Option<String>,
    /// The tier selected (`None`: every record).
    pub tier: Option<String>,
    /// The corpus as given (`--corpus`): two corpora in one root are caught
    /// like two tiers.
    pub corpus: String,
    /// Attempts per question.
    pub repeat: u32,
    /// Tools withheld at the proxy, sorted.
    pub withheld: Vec<String>,
    /// `--strict-upstream-errors`.
    pub strict_upstream_errors: bool,
    /// Ids kept out by `--exclude` (or by hand), sorted.
    pub excluded: Vec<String>,
}

fn show<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => format!("'{s}'"),
        Ok(serde_json::Value::Null) => "(none)".to_string(),
        Ok(serde_json::Value::Array(items)) if items.is_empty() => "[]".to_string(),
        Ok(other) => other.to_string(),
        Err(_) => "?".to_string(),
    }
}

impl Identity {
    /// The first field that differs from `recorded` to `self`, as
    /// `(field, recorded value, new value)`, or `None` when they agree.
    pub fn first_difference(&self, recorded: &Identity) -> Option<(&'static str, String, String)> {
        macro_rules! check {
            ($($field:ident),*) => {
                $(
                    if self.$field != recorded.$field {
                        return Some((stringify!($field), show(&recorded.$field), show(&self.$field)));
                    }
                )*
            };
        }
        check!(
            level,
            kg_hint,
            server,
            agent,
            model,
            effort,
            tier,
            corpus,
            repeat,
            withheld,
            strict_upstream_errors,
            excluded
        );
        None
    }
}

/// The condition folder name for these settings.
pub fn condition_name(
    level: &str,
    server: Option<&str>,
    withheld: &[String],
    strict: bool,
    kg_hint: &str,
    label: Option<&str>,
) -> String {
    let mut name = match server {
        Some(server) if level != "sparql-only" => format!("{server}-{level}"),
        _ => level.to_string(),
    };
    if !withheld.is_empty() {
        let mut sorted = withheld.to_vec();
        sorted.sort();
        name.push_str("-without-");
        name.push_str(&sorted.join("-"));
    }
    if strict {
        name.push_str("-strict");
    }
    name.push_str(if kg_hint == "tags" {
        "__kg-named"
    } else {
        "__kg-not-named"
    });
    if let Some(label) = label {
        name.push_str("__");
        name.push_str(label);
    }
    name
}

/// Checks a `--label`: letters, digits, `-`, `_`, `.` (it names a folder).
pub fn valid_label(label: &str) -> bool {
    !label.is_empty()
        && label.starts_with(|c: char| c.is_ascii_alphanumeric())
        && !label.contains("__")
        && label
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity() -> Identity {
        Identity {
            level: "all-tools".into(),
            kg_hint: "tags".into(),
            server: Some("mcp-proto-okn".into()),
            agent: "claude".into(),
            model: Some("claude-opus-5".into()),
            effort: Some("high".into()),
            tier: Some("hard".into()),
            corpus: "demo/benchmarks-b".into(),
            repeat: 3,
            withheld: vec![],
            strict_upstream_errors: false,
            excluded: vec![],
        }
    }

    #[test]
    fn names_follow_the_seed() {
        assert_eq!(
            condition_name("all-tools", Some("mcp-proto-okn"), &[], false, "tags", None),
            "mcp-proto-okn-all-tools__kg-named"
        );
        assert_eq!(
            condition_name("all-tools", Some("mcp-proto-okn"), &[], false, "none", None),
            "mcp-proto-okn-all-tools__kg-not-named"
        );
        assert_eq!(
            condition_name("sparql-only", Some("ignored"), &[], false, "tags", None),
            "sparql-only__kg-named"
        );
        assert_eq!(
            condition_name(
                "all-tools",
                Some("demo-kg"),
                &["lookup_uri".into(), "get_schema".into()],
                true,
                "tags",
                Some("low-effort")
            ),
            "demo-kg-all-tools-without-get_schema-lookup_uri-strict__kg-named__low-effort"
        );
    }

    #[test]
    fn the_first_difference_is_named_in_field_order() {
        let recorded = identity();
        let mut new = identity();
        assert_eq!(new.first_difference(&recorded), None);
        new.effort = Some("low".into());
        new.repeat = 1;
        assert_eq!(
            new.first_difference(&recorded),
            Some(("effort", "'high'".into(), "'low'".into()))
        );
        new.effort = Some("high".into());
        assert_eq!(
            new.first_difference(&recorded),
            Some(("repeat", "3".into(), "1".into()))
        );
        new.repeat = 3;
        new.tier = None;
        assert_eq!(
            new.first_difference(&recorded),
            Some(("tier", "'hard'".into(), "(none)".into()))
        );
    }
}
