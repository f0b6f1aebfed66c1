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

use serde::Serialize;

use crate::agent::host::Host;
use crate::runs::records::ConditionFile;

/// A condition's name for people: `demo-kg, all tools · KG named`,
/// `sparql-only · KG named`, with withheld tools, the host where the
/// condition's folder names it (`· codex`, `docs/FORMAT.md`, "Condition
/// names") and the label after.
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
    // The host its folder names (codex, gemini, openai): two conditions
    // of one server and hint played by two hosts read apart in every
    // table, as their folders do (issue 25, section 5).
    if let Some(tag) = Host::of_agent(&id.agent).and_then(Host::folder_tag) {
        let _ = write!(text, " · {tag}");
    }
    if let Some(suffix) = crate::runs::identity::label_of(&condition.name) {
        let _ = write!(text, " ({suffix})");
    }
    text
}

/// A condition's agent as every table, figure and page names it (issue
/// 25, section 5, "Publishing across hosts"; `docs/PUBLISHING.md`, "Agent
/// hosts"): the host that played it, the host's version and the model,
/// each as recorded and never made up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentIdentity {
    /// The agent as `--agent` named it (`identity.agent`): `claude`,
    /// `codex`, `gemini`, `openai:MODEL`, `scripted:STRATEGY`.
    pub agent: String,
    /// The host's name (`claude`, `codex`, `gemini`, `openai`,
    /// `scripted`); the agent as recorded when no host of this version
    /// plays it.
    pub host: String,
    /// The host's version as it stated it: `identity.host_version`, else
    /// `settings.agent_version` (roots recorded before the version was
    /// part of the identity, and the scripted agent); `None` when neither
    /// was recorded.
    pub version: Option<String>,
    /// The model asked for (`identity.model`).
    pub model_asked: Option<String>,
    /// The model the host reported using (`settings.model_resolved`).
    pub model_resolved: Option<String>,
    /// The host plays a model (all but the scripted agent): a model it did
    /// not record is "not recorded", not none.
    pub plays_model: bool,
}

impl AgentIdentity {
    /// The agent of a recorded condition.
    pub fn of(condition: &ConditionFile) -> AgentIdentity {
        let id = &condition.identity;
        let host = Host::of_agent(&id.agent);
        AgentIdentity {
            agent: id.agent.clone(),
            host: host.map_or_else(|| id.agent.clone(), |h| h.name().to_string()),
            version: id
                .host_version
                .clone()
                .or_else(|| condition.settings.agent_version.clone()),
            model_asked: id.model.clone(),
            model_resolved: condition.settings.model_resolved.clone(),
            plays_model: host != Some(Host::Scripted),
        }
    }

    /// The host's version, or its name with `(version not recorded)`
    /// ([`crate::format::host_version`]).
    pub fn host_text(&self) -> String {
        crate::format::host_version(&self.host, self.version.as_deref())
    }

    /// The model resolved, with the one asked for beside it where they
    /// differ ([`crate::format::model`]); `None` when neither was recorded.
    pub fn model(&self) -> Option<String> {
        crate::format::model(self.model_resolved.as_deref(), self.model_asked.as_deref())
    }

    /// The model as a table's cell shows it ([`crate::format::model_cell`]).
    pub fn model_text(&self) -> String {
        crate::format::model_cell(
            self.model_resolved.as_deref(),
            self.model_asked.as_deref(),
            self.plays_model,
        )
    }

    /// Host version and model in a few words ([`crate::format::agent_line`]):
    /// `codex-cli 0.171.0, model gpt-standin-1`.
    pub fn line(&self) -> String {
        crate::format::agent_line(&self.host_text(), self.model().as_deref(), self.plays_model)
    }
}

/// Which agents played `conditions` (each a label and its agent), in
/// sentences for a table, region or figure that names conditions by label
/// alone (issue 25, section 5): `Every condition was played by
/// codex-cli 0.171.0, model gpt-standin-1.` when one agent played them
/// all (a host, version and model in common), else one sentence per
/// agent in order of first appearance, `Played by codex-cli 0.171.0,
/// model gpt-standin-1: LABEL; LABEL.`; `None` for no condition.
pub fn agents_note<'a>(
    conditions: impl IntoIterator<Item = (&'a str, &'a AgentIdentity)>,
) -> Option<String> {
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for (label, agent) in conditions {
        let line = agent.line();
        match groups.iter_mut().find(|(l, _)| *l == line) {
            Some((_, labels)) => labels.push(label),
            None => groups.push((line, vec![label])),
        }
    }
    match groups.as_slice() {
        [] => None,
        [(line, _)] => Some(format!("Every condition was played by {line}.")),
        _ => Some(
            groups
                .iter()
                .map(|(line, labels)| format!("Played by {line}: {}.", labels.join("; ")))
                .collect::<Vec<_>>()
                .join(" "),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 25, section 5: a condition's agent is named by what was
    /// recorded: the host's version from the identity, else from the
    /// settings (older roots), else said to be not recorded; the model
    /// resolved with the one asked for beside it; a host other than
    /// claude and the scripted agent in the default label.
    #[test]
    fn an_agent_is_named_by_what_was_recorded_and_never_a_made_up_version() {
        let view = load::root(&crate::testing::demo_root());
        let mut c = view.conditions.values().next().unwrap().file.clone();
        let a = AgentIdentity::of(&c);
        assert_eq!(a.host, "scripted");
        assert_eq!(a.host_text(), "okn-benchmark 0.1.0 (scripted agent)");
        assert_eq!(a.model_text(), "—");
        assert!(!label(&c).contains("scripted"), "{}", label(&c));
        c.identity.agent = "codex".into();
        c.identity.host_version = Some("codex-cli 0.171.0".into());
        c.identity.model = Some("gpt-5".into());
        c.settings.model_resolved = Some("gpt-5-2026".into());
        let a = AgentIdentity::of(&c);
        assert_eq!(a.host_text(), "codex-cli 0.171.0");
        assert_eq!(a.model_text(), "gpt-5-2026 (gpt-5)");
        assert_eq!(a.line(), "codex-cli 0.171.0, model gpt-5-2026 (gpt-5)");
        assert!(label(&c).ends_with(" · KG named · codex"), "{}", label(&c));
        c.identity.host_version = None;
        c.settings.agent_version = None;
        c.identity.model = None;
        c.settings.model_resolved = None;
        let a = AgentIdentity::of(&c);
        assert_eq!(a.host_text(), "codex (version not recorded)");
        assert_eq!(a.model_text(), "not recorded");
        let claude = AgentIdentity {
            agent: "claude".into(),
            host: "claude".into(),
            ..a.clone()
        };
        assert_eq!(
            agents_note([("x", &a), ("y", &a)]).unwrap(),
            "Every condition was played by codex (version not recorded), model not recorded."
        );
        assert_eq!(
            agents_note([("x", &a), ("y", &claude), ("z", &a)]).unwrap(),
            "Played by codex (version not recorded), model not recorded: x; z. Played by claude \
             (version not recorded), model not recorded: y."
        );
        assert_eq!(agents_note([]), None);
    }
}
