//! The `claude -p` agent host (README.md, "Episodes: run, report, rescore,
//! freeze"; the files of an attempt are in `docs/FORMAT.md`, "A runs root").
//!
//! The flags keep an episode to what is being measured:
//! `--strict-mcp-config` (our proxy is the only MCP server),
//! `--setting-sources ""` (no user or project settings), an empty scratch
//! `cwd/` (no auto-memory, no CLAUDE.md), `--disable-slash-commands` (no
//! skills), and `--disallowed-tools` with every built-in tool, so that only
//! `ToolSearch` and the proxy's `mcp__okn__*` tools remain: no delegation
//! (subagents, workflows, background tasks, cron, messages to other
//! sessions), and no shell or web access that would bypass the server under
//! test; `--allowed-tools mcp__okn` grants the proxy's tools, which `-p`
//! would otherwise refuse for want of permission (found by the stand-in
//! test: every call came back "Claude requested permissions to use ...").
//! The list was read off the real CLI (2.1.197: the tools it offers a
//! model with these flags); `tests/it/claude.rs` checks it against the CLI
//! that `scripts/test` installs, so a new tool turns the test red.

use std::path::{Path, PathBuf};

use super::AgentCommand;

/// Built-in tools of the claude CLI that an episode must not have.
pub const DISALLOWED_TOOLS: &[&str] = &[
    // Delegation: subagents, workflows, background tasks, cron, other sessions.
    "Agent",
    "Task",
    "Workflow",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskOutput",
    "TaskStop",
    "TaskUpdate",
    "CronCreate",
    "CronDelete",
    "CronList",
    "ScheduleWakeup",
    "RemoteTrigger",
    "Monitor",
    "SendMessage",
    "PushNotification",
    // Shell, files and the web: ways around the server under test.
    "Bash",
    "BashOutput",
    "KillShell",
    "Read",
    "Write",
    "Edit",
    "NotebookEdit",
    "Glob",
    "Grep",
    "WebFetch",
    "WebSearch",
    "REPL",
    // Session machinery that has nothing to do with the question.
    "EnterWorktree",
    "ExitWorktree",
    "EnterPlanMode",
    "ExitPlanMode",
    "ReportFindings",
    "TodoWrite",
    "AskUserQuestion",
    "Artifact",
    "Skill",
];

/// What a claude episode is run with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaudeSettings {
    /// The `claude` program (default `claude` on PATH).
    pub program: PathBuf,
    /// `--model`, when given.
    pub model: Option<String>,
    /// `--effort`, when given (omitted: the CLI's own default).
    pub effort: Option<String>,
    /// `--max-turns`, when given.
    pub max_turns: Option<u32>,
}

/// The `claude -p` command for one episode with this MCP config.
pub fn command(settings: &ClaudeSettings, mcp_config: &str) -> AgentCommand {
    let mut args: Vec<String> = vec![
        "-p".into(),
        "--mcp-config".into(),
        mcp_config.into(),
        "--strict-mcp-config".into(),
        "--setting-sources".into(),
        String::new(),
        "--disable-slash-commands".into(),
        "--disallowed-tools".into(),
        DISALLOWED_TOOLS.join(","),
        // In -p mode a tool without permission is refused, and no settings
        // are read to grant it: the proxy's tools are allowed by name.
        "--allowed-tools".into(),
        format!("mcp__{}", super::MCP_SERVER_NAME),
        "--output-format".into(),
        "json".into(),
    ];
    if let Some(model) = &settings.model {
        args.push("--model".into());
        args.push(model.clone());
    }
    if let Some(effort) = &settings.effort {
        args.push("--effort".into());
        args.push(effort.clone());
    }
    if let Some(turns) = settings.max_turns {
        args.push("--max-turns".into());
        args.push(turns.to_string());
    }
    AgentCommand {
        program: settings.program.clone(),
        args,
    }
}

/// What `claude auth status --json` says of the login the CLI would use
/// (offline: it reads the stored credentials and the environment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Login {
    /// Logged in, or an API key is set; the method as the CLI names it.
    Yes(String),
    /// Neither: every episode would end "Not logged in".
    No,
    /// The CLI could not say (an older CLI without `auth status`, or output
    /// that is not the JSON expected): not known, so not refused.
    Unknown(String),
}

/// Asks `program` whether it is logged in, with `env` added to its
/// environment.
pub fn login(program: &Path, env: &[(String, String)]) -> Login {
    let output = std::process::Command::new(program)
        .args(["auth", "status", "--json"])
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::null())
        .output();
    let output = match output {
        Ok(o) => o,
        Err(e) => {
            return Login::Unknown(format!(
                "cannot run '{} auth status': {e}",
                program.display()
            ));
        }
    };
    let text = String::from_utf8_lossy(&output.stdout);
    match serde_json::from_str::<serde_json::Value>(text.trim()) {
        Ok(v) => match v["loggedIn"].as_bool() {
            Some(true) => Login::Yes(v["authMethod"].as_str().unwrap_or("unknown").to_string()),
            Some(false) => Login::No,
            None => Login::Unknown(format!("'auth status' said: {}", text.trim())),
        },
        Err(_) => Login::Unknown(format!(
            "'auth status' gave no JSON (exit {:?})",
            output.status.code()
        )),
    }
}

/// `claude --version`, first line, or `None` when it cannot be run.
pub fn version(program: &Path) -> Option<String> {
    let output = std::process::Command::new(program)
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.lines()
        .next()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_carries_every_guard_and_optional_flags_only_when_given() {
        let settings = ClaudeSettings {
            program: "claude".into(),
            model: Some("claude-opus-5".into()),
            effort: None,
            max_turns: Some(40),
        };
        let cmd = command(&settings, "{}");
        let line = cmd.args.join(" ");
        for flag in [
            "-p",
            "--strict-mcp-config",
            "--disable-slash-commands",
            "--output-format json",
            "--model claude-opus-5",
            "--max-turns 40",
        ] {
            assert!(line.contains(flag), "{flag}: {line}");
        }
        assert!(!line.contains("--effort"));
        let at = cmd
            .args
            .iter()
            .position(|a| a == "--setting-sources")
            .unwrap();
        assert_eq!(cmd.args[at + 1], "");
        assert!(
            cmd.args
                .iter()
                .any(|a| a.starts_with("Agent,Task,Workflow,"))
        );
    }
}
