//! A condition's name and identity (`docs/FORMAT.md`, "Condition names";
//! `README.md`, "Episodes: run, report, rescore, freeze").
//!
//! The folder **name** derives from the flags, so the label and the settings
//! cannot disagree: `SERVER-all-tools[-without-A-B][-strict]__kg-named` or
//! `sparql-only__kg-named` (no server: it is the shared control), plus
//! `__LABEL` with `--label`. The **identity** is every setting that changes
//! what the episodes measure; two runs that differ in any of them would
//! derive the same name and silently blend, so `run` compares identities and
//! names the first field that differs.

use serde::{Deserialize, Serialize};

pub use crate::mcp::level::ToolLevel;
pub use crate::mcp::profile::ServerTarget;

/// Whether the prompt names the target knowledge graph(s): `tags` adds the
/// line naming them (from the record's tags), `none` leaves it out
/// (`README.md`, "What gets measured").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KgHint {
    /// The graph is not named: choosing it is part of the task.
    None,
    /// The graph is named.
    Tags,
}

impl KgHint {
    /// `none` or `tags`, as recorded.
    pub fn as_str(self) -> &'static str {
        match self {
            KgHint::None => "none",
            KgHint::Tags => "tags",
        }
    }

    /// True when the prompt names the graph.
    pub fn names_graph(self) -> bool {
        self == KgHint::Tags
    }
}

/// `--effort`: the levels `claude --effort` takes (the specification's
/// list, issue 24 item 30), recorded in a condition's `identity.effort` as
/// [`Effort::as_str`] gives them. A value enum, so a typo is refused by
/// clap instead of becoming part of a condition's identity, and a recorded
/// value that is none of them is refused on load ([`Effort::parse`]:
/// issue 24, item 7).
// Each variant is the level of its name in lower case. The variants carry
// no doc comment: clap would show one per value in `run --help`, instead of
// the one line of possible values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Effort {
    Low,
    Medium,
    High,
    Xhigh,
    Max,
}

impl Effort {
    /// Every level, in order.
    pub const ALL: [Effort; 5] = [
        Effort::Low,
        Effort::Medium,
        Effort::High,
        Effort::Xhigh,
        Effort::Max,
    ];

    /// The level as `claude --effort` takes it and a condition records it.
    pub fn as_str(self) -> &'static str {
        match self {
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
            Effort::Xhigh => "xhigh",
            Effort::Max => "max",
        }
    }

    /// The level `text` names exactly (`high`, not `HIGH`), as a
    /// condition records it.
    pub fn parse(text: &str) -> Option<Effort> {
        Effort::ALL.into_iter().find(|e| e.as_str() == text)
    }
}

/// The most attempts per question `run --repeat` takes, and a recorded
/// `identity.repeat` may hold (issue 24, item 7).
pub const MAX_REPEAT: u32 = 10_000;

/// Everything that makes two runs of one condition comparable. Field order
/// is the order differences are reported in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    /// `all-tools` or `sparql-only`.
    #[schemars(with = "String")]
    pub level: ToolLevel,
    /// `none` or `tags`.
    #[schemars(with = "String")]
    pub kg_hint: KgHint,
    /// The profile's server name (`None` for sparql-only).
    pub server: Option<String>,
    /// What the server under test resolves to (for sparql-only, the
    /// control's endpoint): a profile of the same name that points
    /// elsewhere is another server (issue 24, item 11). Absent in files of
    /// runs-root format 2 and older, which are checked against
    /// `settings.profile` instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<ServerTarget>,
    /// `claude`, `codex`, `gemini`, `openai:MODEL` or `scripted:STRATEGY`.
    pub agent: String,
    /// The API root an `openai:MODEL` agent is played against (`run
    /// --base-url`, without a trailing `/`; it never holds credentials,
    /// which `run` refuses in it): another endpoint is another condition
    /// (issue 25, "openai"). Absent for every other host and in files
    /// written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The CLI host's version as it states it (`codex-cli 0.171.0`), so a
    /// condition is played by one version of its host (issue 25). Absent
    /// for the scripted agent and in files written before it was recorded
    /// (compared only when both hold it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_version: Option<String>,
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
    /// Shards played in parallel (`run --shard K/N`, `docs/SCALING.md`):
    /// `None` for a serial run, which is how a serial run's file reads.
    /// Part of the identity because N episodes ran at once against one
    /// server: timings under `N` shards compare only with timings under
    /// `N`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards: Option<u32>,
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
    /// `upstream` is compared member by member (`upstream.args`), and only
    /// when both hold it (a file of an older format lacks it).
    pub fn first_difference(&self, recorded: &Identity) -> Option<(String, String, String)> {
        macro_rules! check {
            ($($field:ident),*) => {
                $(
                    if self.$field != recorded.$field {
                        return Some((stringify!($field).to_string(), show(&recorded.$field), show(&self.$field)));
                    }
                )*
            };
        }
        check!(level, kg_hint, server);
        if let (Some(old), Some(new)) = (&recorded.upstream, &self.upstream)
            && let Some(difference) = upstream_difference(old, new)
        {
            return Some(difference);
        }
        check!(agent, base_url);
        if let (Some(old), Some(new)) = (&recorded.host_version, &self.host_version)
            && old != new
        {
            return Some(("host_version".into(), show(old), show(new)));
        }
        check!(
            model,
            effort,
            tier,
            corpus,
            repeat,
            withheld,
            strict_upstream_errors,
            excluded,
            shards
        );
        None
    }
}

/// The first member of two server targets that differs, as
/// `(upstream.MEMBER, recorded value, new value)`.
pub fn upstream_difference(
    recorded: &ServerTarget,
    new: &ServerTarget,
) -> Option<(String, String, String)> {
    let (a, b) = (
        serde_json::to_value(recorded).unwrap_or_default(),
        serde_json::to_value(new).unwrap_or_default(),
    );
    // In the order a person reads a server's description.
    [
        "transport",
        "command",
        "args",
        "cwd",
        "url",
        "data",
        "public",
    ]
    .into_iter()
    .find(|m| a.get(m) != b.get(m))
    .map(|member| {
        let show = |v: Option<&serde_json::Value>| v.map_or("(none)".to_string(), show);
        (
            format!("upstream.{member}"),
            show(a.get(member)),
            show(b.get(member)),
        )
    })
}

/// The settings a condition's folder name is made of.
#[derive(Debug, Clone, Copy)]
pub struct Arm<'a> {
    /// The tool level.
    pub level: ToolLevel,
    /// The server's name (ignored for sparql-only).
    pub server: Option<&'a str>,
    /// Tools withheld, in any order.
    pub withheld: &'a [String],
    /// `--strict-upstream-errors`.
    pub strict: bool,
    /// The KG hint.
    pub kg_hint: KgHint,
    /// What the name says of the agent host
    /// ([`crate::agent::host::Host::folder_tag`]): `None` for claude and
    /// the scripted agent, so every root recorded before hosts were named
    /// keeps its names (issue 25).
    pub host: Option<&'a str>,
}

/// The condition folder name for these settings, with `--label`
/// (`docs/FORMAT.md`, "Condition names").
pub fn condition_name(arm: &Arm<'_>, label: Option<&str>) -> String {
    let Arm {
        level,
        server,
        withheld,
        strict,
        kg_hint,
        host,
    } = *arm;
    let mut name = match server {
        Some(server) if level == ToolLevel::AllTools => format!("{server}-{}", level.as_str()),
        _ => level.as_str().to_string(),
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
    if let Some(host) = host {
        name.push('-');
        name.push_str(host);
    }
    name.push_str(if kg_hint.names_graph() {
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

/// The `--label` of condition `name` (what follows its second `__`), if
/// it has one: the inverse of [`condition_name`], since a label holds no
/// `__` ([`valid_label`]).
pub fn label_of(name: &str) -> Option<&str> {
    name.splitn(3, "__").nth(2)
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
            level: ToolLevel::AllTools,
            kg_hint: KgHint::Tags,
            server: Some("mcp-proto-okn".into()),
            upstream: None,
            agent: "claude".into(),
            base_url: None,
            host_version: None,
            model: Some("claude-opus-5".into()),
            effort: Some("high".into()),
            tier: Some("hard".into()),
            corpus: "demo/benchmarks-b".into(),
            repeat: 3,
            withheld: vec![],
            strict_upstream_errors: false,
            excluded: vec![],
            shards: None,
        }
    }

    #[test]
    fn names_follow_the_documented_scheme() {
        assert_eq!(
            condition_name(
                &Arm {
                    level: ToolLevel::AllTools,
                    server: Some("mcp-proto-okn"),
                    withheld: &[],
                    strict: false,
                    kg_hint: KgHint::Tags,
                    host: None,
                },
                None
            ),
            "mcp-proto-okn-all-tools__kg-named"
        );
        assert_eq!(
            condition_name(
                &Arm {
                    level: ToolLevel::AllTools,
                    server: Some("mcp-proto-okn"),
                    withheld: &[],
                    strict: false,
                    kg_hint: KgHint::None,
                    host: None,
                },
                None
            ),
            "mcp-proto-okn-all-tools__kg-not-named"
        );
        assert_eq!(
            condition_name(
                &Arm {
                    level: ToolLevel::SparqlOnly,
                    server: Some("ignored"),
                    withheld: &[],
                    strict: false,
                    kg_hint: KgHint::Tags,
                    host: None,
                },
                None
            ),
            "sparql-only__kg-named"
        );
        assert_eq!(
            condition_name(
                &Arm {
                    level: ToolLevel::AllTools,
                    server: Some("demo-kg"),
                    withheld: &["lookup_uri".into(), "get_schema".into()],
                    strict: true,
                    kg_hint: KgHint::Tags,
                    host: None,
                },
                Some("low-effort")
            ),
            "demo-kg-all-tools-without-get_schema-lookup_uri-strict__kg-named__low-effort"
        );
        assert_eq!(
            label_of("demo-kg-all-tools-strict__kg-named__low-effort"),
            Some("low-effort")
        );
        assert_eq!(label_of("sparql-only__kg-named"), None);
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
            Some(("effort".into(), "'high'".into(), "'low'".into()))
        );
        new.effort = Some("high".into());
        assert_eq!(
            new.first_difference(&recorded),
            Some(("repeat".into(), "3".into(), "1".into()))
        );
        new.repeat = 3;
        new.tier = None;
        assert_eq!(
            new.first_difference(&recorded),
            Some(("tier".into(), "'hard'".into(), "(none)".into()))
        );
    }

    /// Issue 25 (openai): the API root is part of the identity, named
    /// before the model.
    #[test]
    fn another_base_url_is_another_condition() {
        let mut recorded = identity();
        recorded.agent = "openai:gpt-x".into();
        recorded.base_url = Some("http://127.0.0.1:8000/v1".into());
        let mut new = recorded.clone();
        new.base_url = Some("http://10.0.0.2:8000/v1".into());
        new.model = None;
        assert_eq!(
            new.first_difference(&recorded),
            Some((
                "base_url".into(),
                "'http://127.0.0.1:8000/v1'".into(),
                "'http://10.0.0.2:8000/v1'".into()
            ))
        );
    }
}
