//! The tool census (issue 25, "Isolation verified, not assumed";
//! `docs/HOSTS.md`, "The census"): before the first episode, `run` (and
//! `probe --agent HOST`) starts the agent host once, with the episode's
//! own flags, configuration and environment, against a local stand-in of
//! its model API that keeps every request and answers each by ending the
//! session. What the host offered the model there is its real tool
//! surface, read off the requests, never off the host's documentation or
//! our own guard lists (which are blocklists, and blocklists rot).
//!
//! The census fails (and `run` plays nothing, exit 2) when
//! - a tool is offered beyond the proxy's tools (`mcp__okn__*` for claude
//!   and codex, `mcp_okn_*` for gemini, every function of the openai
//!   loop, which has none of its own) and the host's own machinery listed
//!   by name in [`allowance`] (claude's `ToolSearch`, codex's MCP-resource
//!   tools, which reach only the proxy); each is named with how to block it;
//! - a marker planted where a user's memory, instructions, skills, agents
//!   and settings live ([`PLACES`], in a home and a project folder made
//!   for the census) reaches any request;
//! - the proxy's `submit_csv` is not among the tools offered (the host did
//!   not start our proxy: every episode would end with no answer);
//! - the host made no request to the stand-in at all (then nothing is
//!   known of its tools).
//!
//! What it found ([`CensusRecord`]: the host's version, the tools offered,
//! the places planted, a digest) is recorded in the condition file
//! (`settings.census`, `docs/FORMAT.md`); a resumed run whose census
//! differs is refused. The record is read without the `harness` feature.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::host::Host;

/// What a census found, as a condition file records it
/// (`settings.census`; `docs/FORMAT.md`, "`conditions/NAME.json`").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CensusRecord {
    /// The host's version as it states it (the condition's
    /// `identity.host_version`).
    pub host_version: String,
    /// Every tool the host offered the model, sorted, each once: declared
    /// in a request, or announced by name as loadable through the host's
    /// discovery tool (claude's deferred tools).
    pub tools: Vec<String>,
    /// The places a marker was planted in (ids of [`PLACES`]), none of
    /// which reached the model (a census where one did stops the run).
    pub places: Vec<String>,
    /// SHA-256 (hex) of the host's version and the tools offered
    /// ([`digest`]): two censuses of one tool surface have one digest.
    pub digest: String,
}

/// The digest of a census: SHA-256, in lowercase hex, of the host's
/// version and each tool, one per line, each line ending in `\n`.
pub fn digest(host_version: &str, tools: &[String]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(host_version.as_bytes());
    hasher.update(b"\n");
    for tool in tools {
        hasher.update(tool.as_bytes());
        hasher.update(b"\n");
    }
    format!("{:x}", hasher.finalize())
}

impl CensusRecord {
    /// A record of `tools` offered by `host_version` (sorted and each kept
    /// once here) with `places` planted.
    pub fn new(
        host_version: &str,
        mut tools: Vec<String>,
        mut places: Vec<String>,
    ) -> CensusRecord {
        tools.sort();
        tools.dedup();
        places.sort();
        places.dedup();
        CensusRecord {
            digest: digest(host_version, &tools),
            host_version: host_version.to_string(),
            tools,
            places,
        }
    }

    /// Whether its digest is that of its version and tools (a record
    /// edited by hand is not).
    pub fn digest_holds(&self) -> bool {
        self.digest == digest(&self.host_version, &self.tools)
    }

    /// What differs from `recorded` to `self`, in words (`None` when the
    /// tool surface is the same): the host's version, then each tool
    /// added and removed.
    pub fn difference(&self, recorded: &CensusRecord) -> Option<String> {
        let mut parts = Vec::new();
        if self.host_version != recorded.host_version {
            parts.push(format!(
                "host version '{}' -> '{}'",
                recorded.host_version, self.host_version
            ));
        }
        let added: Vec<&str> = self
            .tools
            .iter()
            .filter(|t| !recorded.tools.contains(t))
            .map(String::as_str)
            .collect();
        let removed: Vec<&str> = recorded
            .tools
            .iter()
            .filter(|t| !self.tools.contains(t))
            .map(String::as_str)
            .collect();
        if !added.is_empty() {
            parts.push(format!("offered now: {}", added.join(", ")));
        }
        if !removed.is_empty() {
            parts.push(format!("no longer offered: {}", removed.join(", ")));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// One line for a report: `claude-code 2.1.332: 8 tools offered
    /// (ToolSearch, ...), 14 planted markers, none reached the model;
    /// digest 1a2b3c4d5e6f`.
    pub fn summary(&self) -> String {
        format!(
            "{}: {} tool{} offered ({}); {} planted marker{}, none reached the model; digest {}",
            self.host_version,
            self.tools.len(),
            crate::format::plural(self.tools.len()),
            self.tools.join(", "),
            self.places.len(),
            crate::format::plural(self.places.len()),
            self.digest.get(..12).unwrap_or(&self.digest)
        )
    }
}

/// Why a tool a host offers beyond the proxy's is allowed, by name: the
/// host's own tool discovery, or machinery that reaches nothing but the
/// proxy. `None`: the tool is not allowed (unless it is the proxy's).
pub fn allowance(host: Host, tool: &str) -> Option<&'static str> {
    match host {
        Host::Claude => match tool {
            "ToolSearch" => Some(
                "claude's tool discovery: it loads the schemas of the deferred tools, which are \
                 the proxy's",
            ),
            "DeferredToolPlaceholder" => Some(
                "declared by claude to keep deferred loading on; its description says never to \
                 call it",
            ),
            _ => None,
        },
        Host::Codex => match tool {
            "list_mcp_resources" | "list_mcp_resource_templates" | "read_mcp_resource" => Some(
                "codex's own MCP-resource tools: they reach only the configured MCP servers, \
                 and the proxy is the only one; no setting of codex 0.171 removes them",
            ),
            _ => None,
        },
        Host::Gemini | Host::Openai | Host::Scripted => None,
    }
}

/// How `host` names the proxy's MCP tool `tool`: `mcp__okn__TOOL`
/// (claude, codex), `mcp_okn_TOOL` (gemini), the tool's own name (the
/// openai loop); every character outside `[A-Za-z0-9_-]` is compared as
/// `_` ([`same_name`]), as hosts replace the characters their APIs
/// forbid. `None` for the scripted agent.
pub fn proxy_tool_name(host: Host, tool: &str) -> Option<String> {
    match host {
        Host::Claude | Host::Codex => Some(format!("mcp__okn__{tool}")),
        Host::Gemini => Some(format!("mcp_okn_{tool}")),
        Host::Openai => Some(tool.to_string()),
        Host::Scripted => None,
    }
}

/// Whether two tool names are the same once every character outside
/// `[A-Za-z0-9_-]` is taken as `_` (how hosts make an MCP tool's name one
/// their model API accepts).
pub fn same_name(a: &str, b: &str) -> bool {
    let norm = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    norm(a) == norm(b)
}

/// Whether `tool`, as `host` names it, is one of `proxy_tools` (the tools
/// the proxy listed): an exact match of the name the host gives a proxy
/// tool ([`proxy_tool_name`]), never a prefix (a second MCP server named
/// `okn__mem` offers `mcp__okn__mem__...`: a red team's finding).
pub fn is_proxy_tool(host: Host, tool: &str, proxy_tools: &[String]) -> bool {
    proxy_tools
        .iter()
        .any(|p| proxy_tool_name(host, p).is_some_and(|name| same_name(&name, tool)))
}

/// Whether `tool` has the shape of a proxy tool's name on `host`
/// (`mcp__okn__...`, `mcp_okn_...`; any name for the openai loop): what
/// loading a recorded census can check without the proxy's list.
pub fn looks_like_proxy_tool(host: Host, tool: &str) -> bool {
    match host {
        Host::Claude | Host::Codex => tool
            .strip_prefix("mcp__okn__")
            .is_some_and(|t| !t.is_empty()),
        Host::Gemini => tool.strip_prefix("mcp_okn_").is_some_and(|t| !t.is_empty()),
        Host::Openai => true,
        Host::Scripted => false,
    }
}

/// Why a recorded census could not have let a run go on, in words, or
/// `None` when it could have (a census that stops a run is never
/// recorded): tools not sorted and each once, a tool that is neither
/// proxy-shaped nor allowed by name, no `submit_csv`, places not sorted,
/// unknown or none. What loading a condition checks (issue 25, red team).
pub fn impossible(host: Host, census: &CensusRecord) -> Option<String> {
    let sorted_once = |list: &[String]| list.windows(2).all(|w| w[0] < w[1]);
    if !sorted_once(&census.tools) {
        return Some("its tools are not sorted, each once, as a census records them".into());
    }
    if let Some(tool) = census
        .tools
        .iter()
        .find(|t| !looks_like_proxy_tool(host, t) && allowance(host, t).is_none())
    {
        return Some(format!(
            "it lists {tool}, which is neither the proxy's nor allowed by name: a census that \
             found it would have stopped the run"
        ));
    }
    if !census
        .tools
        .iter()
        .any(|t| looks_like_proxy_tool(host, t) && t.ends_with("submit_csv"))
    {
        return Some(
            "it lists no submit_csv of the proxy: a census that found none would have stopped \
             the run"
                .into(),
        );
    }
    if census.places.is_empty() || !sorted_once(&census.places) {
        return Some("its places are not a sorted list of places, each once".into());
    }
    if let Some(place) = census
        .places
        .iter()
        .find(|p| !PLACES.iter().any(|known| known.id == p.as_str()))
    {
        return Some(format!(
            "it names {place}, which is no place a census plants"
        ));
    }
    None
}

/// How to block the tools a census found on `host` beyond the proxy's,
/// in words for the message that stops the run.
pub fn how_to_block(host: Host, tools: &[&str]) -> String {
    let flags: Vec<String> = tools.iter().map(|t| format!("--block-tool {t}")).collect();
    let them = if tools.len() == 1 { "it" } else { "them" };
    match host {
        Host::Claude => format!(
            "block {them} with `{}` (passed to claude's --disallowed-tools), or play the \
             condition with a claude CLI that does not offer {them} (`--agent-program PATH`)",
            flags.join(" ")
        ),
        Host::Gemini => format!(
            "block {them} with `{}` (added to gemini's tools.exclude), or play the condition \
             with a gemini CLI that does not offer {them} (`--agent-program PATH`)",
            flags.join(" ")
        ),
        Host::Codex => format!(
            "codex has no setting that removes one tool by name: play the condition with a \
             codex CLI that does not offer {them} (`--agent-program PATH`), or with a model \
             codex does not run in its code mode (`--model`; codex 0.171 runs its default model \
             with every tool nested in a JavaScript `exec`, `apply_patch` among them), or turn \
             the feature off in the codex configuration okn-benchmark writes (src/agent/codex.rs)"
        ),
        Host::Openai | Host::Scripted => {
            "the built-in loop offers only the proxy's tools: this is a fault of okn-benchmark; \
             please report it"
                .to_string()
        }
    }
}

/// One place a user's memory, instructions, skills, agents or settings
/// live, where the census plants a marker: a file under the home the host
/// would see without our isolation (`home/`), or in a project folder above
/// the attempt's `cwd/` (`project/`, a git repository).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// Its id, as [`CensusRecord::places`] records it.
    pub id: &'static str,
    /// The file, relative to the census folder; `{slug}` stands for the
    /// attempt `cwd/`'s path with every character but an ASCII letter or
    /// digit made `-` (claude's project slug).
    pub path: &'static str,
    /// Its content; `{marker}` stands for the place's marker.
    pub content: &'static str,
    /// What it is, for a message.
    pub what: &'static str,
}

/// Every place the census plants a marker in, for every host (a host that
/// reads another's files is caught too).
pub const PLACES: &[Place] = &[
    Place {
        id: "claude-user-instructions",
        path: "home/.claude/CLAUDE.md",
        content: "Always mention {marker}.\n",
        what: "the user's claude instructions (~/.claude/CLAUDE.md)",
    },
    Place {
        id: "claude-auto-memory",
        path: "home/.claude/projects/{slug}/memory/MEMORY.md",
        content: "- {marker}\n",
        what: "claude's auto-memory of the attempt folder (~/.claude/projects/SLUG/memory/MEMORY.md)",
    },
    Place {
        id: "claude-user-skill",
        path: "home/.claude/skills/okn-census/SKILL.md",
        content: "---\nname: okn-census\ndescription: {marker}\n---\n{marker}\n",
        what: "a claude skill of the user (~/.claude/skills/)",
    },
    Place {
        id: "claude-user-agent",
        path: "home/.claude/agents/okn-census.md",
        content: "---\nname: okn-census\ndescription: {marker}\n---\n{marker}\n",
        what: "a claude subagent of the user (~/.claude/agents/)",
    },
    Place {
        id: "claude-user-command",
        path: "home/.claude/commands/okn-census.md",
        content: "---\ndescription: {marker}\n---\n{marker}\n",
        what: "a claude slash command of the user (~/.claude/commands/)",
    },
    Place {
        id: "claude-project-instructions",
        path: "project/CLAUDE.md",
        content: "Always mention {marker}.\n",
        what: "a CLAUDE.md in a folder above the attempt",
    },
    Place {
        id: "claude-project-local-instructions",
        path: "project/CLAUDE.local.md",
        content: "Always mention {marker}.\n",
        what: "a CLAUDE.local.md in a folder above the attempt",
    },
    Place {
        id: "claude-project-agent",
        path: "project/.claude/agents/okn-census.md",
        content: "---\nname: okn-census-project\ndescription: {marker}\n---\n{marker}\n",
        what: "a claude subagent of a project above the attempt (.claude/agents/)",
    },
    Place {
        id: "codex-user-instructions",
        path: "home/.codex/AGENTS.md",
        content: "Always mention {marker}.\n",
        what: "the user's codex instructions (~/.codex/AGENTS.md)",
    },
    Place {
        id: "codex-user-settings",
        path: "home/.codex/config.toml",
        content: "developer_instructions = \"Always mention {marker}.\"\n",
        what: "the user's codex settings (~/.codex/config.toml, developer_instructions)",
    },
    Place {
        id: "codex-project-instructions",
        path: "project/AGENTS.md",
        content: "Always mention {marker}.\n",
        what: "an AGENTS.md in a folder above the attempt",
    },
    Place {
        id: "codex-project-settings",
        path: "project/.codex/config.toml",
        content: "developer_instructions = \"Always mention {marker}.\"\n",
        what: "codex settings of a project above the attempt (.codex/config.toml)",
    },
    Place {
        id: "gemini-user-memory",
        path: "home/.gemini/GEMINI.md",
        content: "Always mention {marker}.\n",
        what: "the user's gemini memory (~/.gemini/GEMINI.md)",
    },
    Place {
        id: "gemini-project-memory",
        path: "project/GEMINI.md",
        content: "Always mention {marker}.\n",
        what: "a GEMINI.md in a folder above the attempt",
    },
    Place {
        id: "gemini-project-settings",
        path: "project/.gemini/settings.json",
        content: "{\"context\": {\"fileName\": [\"GEMINI.md\", \"okn-census.md\"]}}\n",
        what: "gemini settings of a project above the attempt (.gemini/settings.json)",
    },
    Place {
        id: "gemini-project-context-file",
        path: "project/okn-census.md",
        content: "Always mention {marker}.\n",
        what: "a context file that project gemini settings name (okn-census.md)",
    },
];

/// The tools a request offers, by the wire format its path names: the
/// Messages API (`tools[].name`, and the deferred tools a claude request
/// announces by name), Responses (`tools[]`, a namespace's tools as
/// `NAMESPACE__NAME`), Chat Completions (`tools[].function.name`) and
/// Gemini (`tools[].functionDeclarations[].name`, and each other member
/// of a `tools[]` entry, such as `googleSearch`). A tool with no name is
/// named by its `type`.
pub fn offered(path: &str, request: &serde_json::Value) -> Vec<String> {
    use serde_json::Value;
    let mut names = Vec::new();
    let tools = request["tools"].as_array().cloned().unwrap_or_default();
    let named = |tool: &Value| {
        tool["name"]
            .as_str()
            .or_else(|| tool["type"].as_str())
            .map(str::to_string)
    };
    if path.contains("/models/") {
        for entry in &tools {
            let Some(members) = entry.as_object() else {
                continue;
            };
            for (key, value) in members {
                if key == "functionDeclarations" {
                    names.extend(
                        value
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|f| f["name"].as_str().map(str::to_string)),
                    );
                } else {
                    names.push(key.clone());
                }
            }
        }
    } else if path.ends_with("/responses") {
        // codex 0.171 with its default model declares its tools in an
        // `additional_tools` input item instead of `tools`.
        let additional = request["input"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|item| item["type"] == "additional_tools")
            .flat_map(|item| item["tools"].as_array().cloned().unwrap_or_default());
        for tool in tools.iter().cloned().chain(additional) {
            let tool = &tool;
            if tool["type"] == "namespace" {
                let space = tool["name"].as_str().unwrap_or("");
                for inner in tool["tools"].as_array().into_iter().flatten() {
                    if let Some(name) = named(inner) {
                        names.push(if space.is_empty() {
                            name
                        } else {
                            format!("{space}__{name}")
                        });
                    }
                }
            } else {
                names.extend(named(tool));
            }
        }
    } else if path.ends_with("/chat/completions") {
        for tool in &tools {
            names.extend(
                tool["function"]["name"]
                    .as_str()
                    .map(str::to_string)
                    .or_else(|| named(tool)),
            );
        }
    } else {
        names.extend(tools.iter().filter_map(named));
        names.extend(announced_deferred(request));
    }
    names.extend(nested_declared(request));
    names
}

/// The tools a declared tool's description says it reaches: codex
/// 0.171's code mode nests every tool under one JavaScript `exec` whose
/// description declares each (`declare const tools: { apply_patch(input:
/// string): ...`). Each is offered as surely as one declared directly.
fn nested_declared(request: &serde_json::Value) -> Vec<String> {
    const DECLARATION: &str = "declare const tools: {";
    let mut texts = Vec::new();
    collect_texts(&request["tools"], &mut texts);
    for item in request["input"].as_array().into_iter().flatten() {
        if item["type"] == "additional_tools" {
            collect_texts(&item["tools"], &mut texts);
        }
    }
    let mut names = Vec::new();
    for text in &texts {
        for (at, _) in text.match_indices(DECLARATION) {
            let name: String = text[at + DECLARATION.len()..]
                .trim_start()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
                .collect();
            if !name.is_empty() {
                names.push(name);
            }
        }
    }
    names
}

/// The tools a Messages request names as deferred (claude 2.1.332: "The
/// following deferred tools are now available via ToolSearch. ...:"
/// followed by one name a line, up to an empty line), in every text of
/// its system prompt and messages. A tool loaded that way is offered as
/// surely as one declared.
fn announced_deferred(request: &serde_json::Value) -> Vec<String> {
    let mut texts = Vec::new();
    collect_texts(&request["system"], &mut texts);
    collect_texts(&request["messages"], &mut texts);
    let mut names = Vec::new();
    for text in texts {
        let mut in_list = false;
        for line in text.lines() {
            let line = line.trim();
            if in_list {
                let is_name = !line.is_empty()
                    && line
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                if !is_name {
                    in_list = false;
                    continue;
                }
                names.push(line.to_string());
            } else if line.to_ascii_lowercase().contains("deferred tools") && line.ends_with(':') {
                in_list = true;
            }
        }
    }
    names
}

/// Every string in `value` (system blocks, message contents).
fn collect_texts(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(items) => items.iter().for_each(|v| collect_texts(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| collect_texts(v, out)),
        _ => {}
    }
}

#[cfg(feature = "harness")]
pub use self::take::*;

#[cfg(feature = "harness")]
mod take {
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    use super::{
        CensusRecord, PLACES, Place, allowance, how_to_block, is_proxy_tool, offered,
        proxy_tool_name, same_name,
    };
    use crate::agent::{Agent, AgentCommand, EpisodeEnv, McpProxy, env_value, launch};
    use crate::error::{Error, Result};

    /// What a census is taken with: the condition's agent and what the run
    /// gives every episode.
    pub struct CensusPlan<'a> {
        /// The agent host, as the condition plays it.
        pub agent: &'a Agent,
        /// Its version, as the preflight found it.
        pub host_version: &'a str,
        /// What the run adds to every episode's environment.
        pub env: &'a [(String, String)],
        /// An episode's prompt (the first question's).
        pub prompt: &'a str,
        /// `--agent-timeout`.
        pub timeout: Duration,
        /// The proxy logging into an attempt folder (absolute).
        pub proxy: &'a dyn Fn(&Path) -> McpProxy,
        /// The host's command for an agent logging into an attempt folder
        /// (absolute): the episode's own.
        pub command: &'a dyn Fn(&Agent, &Path) -> AgentCommand,
    }

    /// Where the census points the host, and nothing else changed of the
    /// episode's environment (a red team found claude 2.1.332 offering
    /// `DesignSync` only without `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`,
    /// which an earlier census set): the variable naming its API set to
    /// the stand-in (for the openai loop, its `--base-url`); those that
    /// would send it to another provider (Bedrock, Vertex, Foundry) emptied;
    /// the user's own key or login kept as it is (it reaches only the
    /// stand-in on 127.0.0.1, which keeps nothing), and a key of the
    /// census's own, `key`, given only where the environment has none.
    fn pointed(
        agent: &Agent,
        url: &str,
        env: &[(String, String)],
        key: &str,
    ) -> (Agent, Vec<(String, String)>) {
        let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
        let has = |names: &[&str]| names.iter().any(|n| env_value(env, n).is_some());
        let mut vars = Vec::new();
        let agent = match agent {
            Agent::Claude(_) => {
                vars.push(pair("ANTHROPIC_BASE_URL", url));
                for routing in [
                    "CLAUDE_CODE_USE_BEDROCK",
                    "CLAUDE_CODE_USE_VERTEX",
                    "CLAUDE_CODE_USE_FOUNDRY",
                ] {
                    vars.push(pair(routing, ""));
                }
                if !has(&[
                    "ANTHROPIC_API_KEY",
                    "ANTHROPIC_AUTH_TOKEN",
                    "CLAUDE_CODE_OAUTH_TOKEN",
                ]) {
                    vars.push(pair("ANTHROPIC_API_KEY", key));
                }
                agent.clone()
            }
            Agent::Codex(_) => {
                vars.push(pair(
                    crate::agent::codex::BASE_URL_VAR,
                    &format!("{url}/v1"),
                ));
                if !has(&[crate::agent::codex::KEY_VAR]) {
                    vars.push(pair(crate::agent::codex::KEY_VAR, key));
                }
                agent.clone()
            }
            Agent::Gemini(_) => {
                vars.push(pair("GOOGLE_GEMINI_BASE_URL", url));
                vars.push(pair("GOOGLE_GENAI_USE_VERTEXAI", ""));
                vars.push(pair("GOOGLE_GENAI_USE_GCA", ""));
                if !has(&[crate::agent::gemini::KEY_VAR]) {
                    vars.push(pair(crate::agent::gemini::KEY_VAR, key));
                }
                agent.clone()
            }
            Agent::Openai(settings) => {
                let mut settings = settings.clone();
                settings.base_url = format!("{url}/v1");
                if let Some(name) = &settings.api_key_env
                    && !has(&[name.as_str()])
                {
                    vars.push(pair(name, key));
                }
                Agent::Openai(settings)
            }
            Agent::Scripted(_) => agent.clone(),
        };
        (agent, vars)
    }

    /// The census folder: `home/` and `project/` (a git repository) with
    /// every place planted, and the attempt folder under the project.
    struct Planted {
        dir: tempfile::TempDir,
        /// Letters and digits of the folder's random name: the markers'
        /// and the census key's.
        nonce: String,
        /// Each place with its marker.
        markers: Vec<(Place, String)>,
    }

    impl Planted {
        fn attempt(&self) -> PathBuf {
            self.dir.path().join("project/runs/census/attempt-1")
        }

        fn home(&self) -> PathBuf {
            self.dir.path().join("home")
        }

        /// Makes the folder and plants every [`PLACES`] entry with a
        /// marker of its own (`okn-census-marker-NONCE-NNN`: fixed width,
        /// so no marker is the start of another).
        fn new() -> Result<Planted> {
            let dir = tempfile::Builder::new()
                .prefix("okn-census-")
                .tempdir()
                .map_err(|e| Error::io(std::env::temp_dir(), "create a folder in", e))?;
            let nonce: String = dir
                .path()
                .file_name()
                .map(|n| {
                    n.to_string_lossy()
                        .replace(|c: char| !c.is_ascii_alphanumeric(), "")
                })
                .unwrap_or_default();
            let mut planted = Planted {
                dir,
                nonce,
                markers: Vec::new(),
            };
            let cwd = planted.attempt().join(crate::layout::CWD_DIR);
            let slug: String = cwd
                .to_string_lossy()
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect();
            let write = |path: &Path, text: &str| -> Result<()> {
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, "create", e))?;
                }
                std::fs::write(path, text).map_err(|e| Error::io(path, "write", e))
            };
            let root = planted.dir.path().to_path_buf();
            for dir in [
                cwd.clone(),
                root.join("project/.git/objects"),
                root.join("project/.git/refs/heads"),
            ] {
                std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, "create", e))?;
            }
            write(&root.join("project/.git/HEAD"), "ref: refs/heads/main\n")?;
            for (n, place) in PLACES.iter().enumerate() {
                let marker = format!("okn-census-marker-{}-{n:03}", planted.nonce);
                let path = root.join(place.path.replace("{slug}", &slug));
                write(&path, &place.content.replace("{marker}", &marker))?;
                planted.markers.push((*place, marker));
            }
            Ok(planted)
        }
    }

    /// The names of the tools the proxy lists, asked over MCP with the
    /// episode's own proxy command (logging into `log_dir`).
    ///
    /// Errors: the proxy cannot be started or does not list its tools.
    fn proxy_tools(proxy: &McpProxy) -> Result<Vec<String>> {
        let config = crate::agent::mcp_config(&proxy.program, &proxy.args);
        let runtime = crate::mcp::runtime()?;
        runtime.block_on(async {
            let client = crate::agent::scripted::connect(&config).await?;
            let tools = client.peer().list_all_tools().await.map_err(|e| {
                Error::Other(format!(
                    "the tool census could not list the proxy's tools: {e}"
                ))
            });
            let _ = client.cancel().await;
            Ok(tools?.into_iter().map(|t| t.name.to_string()).collect())
        })
    }

    /// System-wide files of the hosts, outside any home or project and
    /// so beyond the census's planting (a red team's finding: claude reads
    /// `/etc/claude-code/CLAUDE.md`, codex `/etc/codex/config.toml`, into
    /// every episode): folders searched to a depth of 3, and files named by
    /// the hosts' own variables.
    fn system_files(env: &[(String, String)]) -> Vec<PathBuf> {
        let mut files = Vec::new();
        let mut folders: Vec<PathBuf> = [
            "/etc/claude-code",
            "/Library/Application Support/ClaudeCode",
            "/etc/codex",
            "/etc/gemini-cli",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        for name in [
            "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
            "GEMINI_CLI_SYSTEM_DEFAULTS_PATH",
        ] {
            if let Some(path) = env_value(env, name) {
                folders.push(PathBuf::from(path));
            }
        }
        for folder in folders {
            for entry in walkdir::WalkDir::new(&folder)
                .max_depth(3)
                .into_iter()
                .flatten()
            {
                let small = entry
                    .metadata()
                    .is_ok_and(|m| m.is_file() && m.len() <= 1 << 20);
                if small {
                    files.push(entry.into_path());
                }
            }
        }
        files
    }

    /// The files of `files` some line of which (16 characters or more,
    /// trimmed, holding a letter) is in one of `texts`: system-wide
    /// content that reached the model.
    pub fn reached<'a>(files: &'a [(PathBuf, String)], texts: &[String]) -> Vec<&'a Path> {
        files
            .iter()
            .filter(|(_, content)| {
                content.lines().map(str::trim).any(|line| {
                    line.chars().count() >= 16
                        && line.chars().any(char::is_alphabetic)
                        && texts.iter().any(|t| t.contains(line))
                })
            })
            .map(|(path, _)| path.as_path())
            .collect()
    }

    /// Takes the census of `plan.agent` (module doc): its record, or
    /// [`Error::Usage`] naming every tool offered beyond the proxy's (with
    /// how to block it), every tool of the proxy not offered, every place
    /// whose marker reached the model, and every system-wide file whose
    /// content did.
    ///
    /// Errors: also a host that cannot be started or that made no request
    /// to the stand-in; a proxy that does not list its tools; the census
    /// folder cannot be made.
    pub fn take(plan: &CensusPlan<'_>) -> Result<CensusRecord> {
        let host = plan.agent.host();
        let planted = Planted::new()?;
        let listing_dir = planted.dir.path().join("listing");
        std::fs::create_dir_all(&listing_dir).map_err(|e| Error::io(&listing_dir, "create", e))?;
        let listed = proxy_tools(&(plan.proxy)(&listing_dir))?;
        let standin = crate::agent::standin::start_census()?;
        let key = format!("sk-{}", planted.nonce);
        let (agent, pointing) = pointed(plan.agent, &standin.url, plan.env, &key);
        let attempt = planted.attempt();
        let proxy = (plan.proxy)(&attempt);
        let command = (plan.command)(&agent, &attempt);
        // The user's home as the host would see it were it not isolated
        // is the planted one; the proxy still gets the user's own (a
        // profile's `~`, an upstream's caches).
        let user_home = env_value(plan.env, "HOME");
        let mut given: Vec<(String, String)> = plan.env.to_vec();
        given.push(("HOME".into(), planted.home().to_string_lossy().into_owned()));
        given.extend(pointing);
        let env = EpisodeEnv::for_agent(&agent, &given, &proxy)?;
        let mut vars = env.vars.clone();
        if let Some(home) = user_home {
            vars.retain(|(k, _)| k != crate::agent::claude::USER_HOME);
            vars.push((crate::agent::claude::USER_HOME.into(), home));
        }
        let outcome = launch(
            &command,
            plan.prompt,
            &attempt.join(crate::layout::CWD_DIR),
            &vars,
            plan.timeout,
        );
        drop(env);
        let received = standin.stop();
        let outcome = outcome?;
        let name = host.name();
        let ended = if outcome.timed_out {
            "was killed at --agent-timeout".to_string()
        } else {
            crate::agent::report::exit_words(outcome.exit_code)
        };
        if received.is_empty() {
            let stderr = String::from_utf8_lossy(&outcome.stderr);
            let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            return Err(Error::Usage(format!(
                "the tool census of {name} ({}) got no model request: the host {ended} before \
                 it asked the stand-in anything, so what it offers a model is not known and no \
                 episode is played (docs/HOSTS.md, \"The census\").{}",
                plan.host_version,
                if tail.is_empty() {
                    String::new()
                } else {
                    format!(" Its stderr ended:\n  {}", tail.join("\n  "))
                }
            )));
        }
        let mut tools = Vec::new();
        let mut reached_places = Vec::new();
        let mut texts = Vec::new();
        for request in &received {
            let text = String::from_utf8_lossy(&request.body);
            for (place, marker) in &planted.markers {
                if text.contains(marker.as_str()) && !reached_places.contains(&place.id) {
                    reached_places.push(place.id);
                }
            }
            if let Ok(value) = serde_json::from_slice::<serde_json::Value>(&request.body) {
                tools.extend(offered(&request.path, &value));
                super::collect_texts(&value, &mut texts);
            }
        }
        let places: Vec<String> = planted
            .markers
            .iter()
            .map(|(p, _)| p.id.to_string())
            .collect();
        let record = CensusRecord::new(plan.host_version, tools, places);
        let mut faults = Vec::new();
        let extra: Vec<&str> = record
            .tools
            .iter()
            .map(String::as_str)
            .filter(|t| !is_proxy_tool(host, t, &listed) && allowance(host, t).is_none())
            .collect();
        if !extra.is_empty() {
            faults.push(format!(
                "{} {}: offered beyond the proxy's tools; {}",
                if extra.len() == 1 { "tool" } else { "tools" },
                extra.join(", "),
                how_to_block(host, &extra)
            ));
        }
        let missing: Vec<String> = listed
            .iter()
            .filter(|p| {
                let name = proxy_tool_name(host, p).unwrap_or_default();
                !record.tools.iter().any(|t| same_name(t, &name))
            })
            .cloned()
            .collect();
        if !missing.is_empty() {
            faults.push(format!(
                "the proxy's {} {} not offered (the host {ended}; tools offered: {}): an episode \
                 would not reach {}; withhold a tool with --without-tool, never by blocking it \
                 in the host",
                if missing.len() == 1 { "tool" } else { "tools" },
                missing.join(", "),
                if record.tools.is_empty() {
                    "none".to_string()
                } else {
                    record.tools.join(", ")
                },
                if missing.len() == 1 { "it" } else { "them" }
            ));
        }
        for (place, _) in planted
            .markers
            .iter()
            .filter(|(p, _)| reached_places.contains(&p.id))
        {
            faults.push(format!(
                "marker of {} ({}) reached the model's request: the host read it",
                place.what, place.id
            ));
        }
        let system: Vec<(PathBuf, String)> = system_files(plan.env)
            .into_iter()
            .filter_map(|p| Some((p.clone(), std::fs::read_to_string(&p).ok()?)))
            .collect();
        for path in reached(&system, &texts) {
            faults.push(format!(
                "the content of {} (a system-wide file of the host, which no flag or fresh home \
                 keeps out) reached the model's request: remove it, or run where it is not",
                path.display()
            ));
        }
        if faults.is_empty() {
            return Ok(record);
        }
        Err(Error::Usage(format!(
            "the tool census of {name} ({}) found what an episode must not have, so no episode \
             is played (docs/HOSTS.md, \"The census\"):\n  - {}",
            plan.host_version,
            faults.join("\n  - ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tools_are_read_in_every_wire_format() {
        let messages = json!({
            "tools": [{"name": "ToolSearch"}, {"type": "web_search_20250305", "name": "web_search"}],
            "system": [{"type": "text", "text": "Intro.\n\nThe following deferred tools are now available via ToolSearch. Use ToolSearch with query \"select:<name>\" to load them:\nmcp__okn__query\nListAgents\n\n# Next"}],
            "messages": []
        });
        assert_eq!(
            offered("/v1/messages", &messages),
            ["ToolSearch", "web_search", "mcp__okn__query", "ListAgents"]
        );
        let responses = json!({"tools": [
            {"type": "function", "name": "list_mcp_resources"},
            {"type": "namespace", "name": "mcp__okn", "tools": [{"type": "function", "name": "query"}]},
            {"type": "web_search"}
        ]});
        assert_eq!(
            offered("/v1/responses", &responses),
            ["list_mcp_resources", "mcp__okn__query", "web_search"]
        );
        // codex 0.171's code mode: tools in an `additional_tools` input
        // item, the nested ones declared in `exec`'s description.
        let code_mode = json!({"tools": [], "input": [
            {"type": "message", "role": "user", "content": "declare const tools: { not_a_tool(" },
            {"type": "additional_tools", "tools": [
                {"type": "namespace", "name": "functions", "tools": [
                    {"type": "custom", "name": "exec", "description": "Run JavaScript.\n```ts\ndeclare const tools: { apply_patch(input: string): Promise<unknown>; };\n```"},
                    {"type": "function", "name": "wait"}
                ]},
                {"type": "namespace", "name": "clock", "tools": [{"type": "function", "name": "sleep"}]}
            ]}
        ]});
        let mut found = offered("/v1/responses", &code_mode);
        found.sort();
        assert_eq!(
            found,
            [
                "apply_patch",
                "clock__sleep",
                "functions__exec",
                "functions__wait"
            ],
            "a user's text is no declaration"
        );
        let chat = json!({"tools": [{"type": "function", "function": {"name": "submit_csv"}}]});
        assert_eq!(offered("/v1/chat/completions", &chat), ["submit_csv"]);
        let gemini = json!({"tools": [{"functionDeclarations": [{"name": "mcp_okn_query"}]}, {"googleSearch": {}}]});
        assert_eq!(
            offered("/v1beta/models/m:streamGenerateContent", &gemini),
            ["mcp_okn_query", "googleSearch"]
        );
    }

    #[test]
    fn a_record_is_sorted_and_its_digest_names_its_tool_surface() {
        let a = CensusRecord::new(
            "claude 1",
            vec!["b".into(), "a".into(), "a".into()],
            vec!["p".into()],
        );
        assert_eq!(a.tools, ["a", "b"]);
        assert!(a.digest_holds());
        let b = CensusRecord::new("claude 1", vec!["a".into(), "c".into()], vec![]);
        assert_ne!(a.digest, b.digest);
        assert_eq!(
            b.difference(&a).unwrap(),
            "offered now: c; no longer offered: b"
        );
        assert_eq!(a.difference(&a.clone()), None);
        let mut edited = a.clone();
        edited.tools.push("z".into());
        assert!(!edited.digest_holds());
    }

    #[test]
    fn only_the_proxys_tools_and_named_machinery_are_allowed() {
        let proxy = vec![
            "query".to_string(),
            "submit_csv".to_string(),
            "a.b".to_string(),
        ];
        assert!(is_proxy_tool(Host::Claude, "mcp__okn__query", &proxy));
        assert!(!is_proxy_tool(Host::Claude, "mcp__other__query", &proxy));
        assert!(!is_proxy_tool(Host::Claude, "mcp__okn__", &proxy));
        // A second server named `okn__mem` is no part of the proxy (a
        // red team's finding: a prefix was taken for the list).
        assert!(!is_proxy_tool(
            Host::Claude,
            "mcp__okn__mem__create_entities",
            &proxy
        ));
        assert!(is_proxy_tool(Host::Gemini, "mcp_okn_submit_csv", &proxy));
        assert!(!is_proxy_tool(Host::Gemini, "mcp__okn__query", &proxy));
        assert!(
            is_proxy_tool(Host::Claude, "mcp__okn__a_b", &proxy),
            "`.` sent as `_`"
        );
        assert!(is_proxy_tool(Host::Openai, "query", &proxy));
        assert!(!is_proxy_tool(Host::Openai, "exec", &proxy));
        assert!(allowance(Host::Claude, "ToolSearch").is_some());
        assert!(allowance(Host::Claude, "ListAgents").is_none());
        assert!(allowance(Host::Codex, "read_mcp_resource").is_some());
        assert!(allowance(Host::Gemini, "ToolSearch").is_none());
    }

    /// A red team's finding: a recorded census edited by hand, its digest
    /// made anew, was read as clean. What no census that let a run go on
    /// could hold is refused by name.
    #[test]
    fn a_census_no_run_could_have_recorded_is_impossible() {
        let places = vec!["claude-auto-memory".to_string()];
        let clean = CensusRecord::new(
            "claude 1",
            vec![
                "ToolSearch".into(),
                "mcp__okn__query".into(),
                "mcp__okn__submit_csv".into(),
            ],
            places.clone(),
        );
        assert_eq!(impossible(Host::Claude, &clean), None);
        let with = |tools: Vec<&str>| CensusRecord {
            tools: tools.into_iter().map(str::to_string).collect(),
            ..clean.clone()
        };
        let bash = CensusRecord::new(
            "claude 1",
            vec!["Bash".into(), "mcp__okn__submit_csv".into()],
            places.clone(),
        );
        assert!(impossible(Host::Claude, &bash).unwrap().contains("Bash"));
        let none = CensusRecord::new("claude 1", vec!["ToolSearch".into()], places.clone());
        assert!(
            impossible(Host::Claude, &none)
                .unwrap()
                .contains("submit_csv")
        );
        let unsorted = with(vec!["mcp__okn__submit_csv", "ToolSearch"]);
        assert!(
            impossible(Host::Claude, &unsorted)
                .unwrap()
                .contains("sorted")
        );
        let twice = with(vec!["mcp__okn__submit_csv", "mcp__okn__submit_csv"]);
        assert!(impossible(Host::Claude, &twice).is_some());
        let bogus = CensusRecord {
            places: vec!["nowhere".into()],
            ..clean.clone()
        };
        assert!(
            impossible(Host::Claude, &bogus)
                .unwrap()
                .contains("nowhere")
        );
        let empty = CensusRecord {
            places: vec![],
            ..clean.clone()
        };
        assert!(impossible(Host::Claude, &empty).is_some());
    }

    #[cfg(feature = "harness")]
    #[test]
    fn system_wide_content_is_found_in_a_request_line_by_line() {
        let files = vec![
            (
                std::path::PathBuf::from("/etc/claude-code/CLAUDE.md"),
                "# Rules\nAlways mention the house style.\n".to_string(),
            ),
            (
                std::path::PathBuf::from("/etc/codex/config.toml"),
                "model = \"x\"\n".to_string(),
            ),
        ];
        let texts = vec!["You are helpful.\nAlways mention the house style.\n".to_string()];
        let hit = reached(&files, &texts);
        assert_eq!(hit, [std::path::Path::new("/etc/claude-code/CLAUDE.md")]);
        // Short lines and lines without a letter are never evidence.
        assert!(reached(&files, &["# Rules model = \"x\"".to_string()]).is_empty());
    }

    #[test]
    fn every_place_has_its_own_id_and_a_marker() {
        let mut ids: Vec<&str> = PLACES.iter().map(|p| p.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), PLACES.len());
        for place in PLACES {
            assert!(
                place.content.contains("{marker}") || place.id == "gemini-project-settings",
                "{}",
                place.id
            );
            assert!(place.path.starts_with("home/") || place.path.starts_with("project/"));
        }
    }
}
