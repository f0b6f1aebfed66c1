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
//! The list was read off the real CLI (2.1.332: the tools it offers a
//! model with these flags, `ListAgents` new since 2.1.197); `tests/it/claude.rs`
//! checks it against the CLI that `scripts/test` installs, so a new tool
//! turns the test red.
//!
//! Flags do not reach what the CLI reads from its home: every episode runs
//! in a [`FreshHome`] (issue 25, "claude"): `HOME` and `CLAUDE_CONFIG_DIR`
//! name an empty folder made for the attempt and removed after it, so no
//! setting, memory, `CLAUDE.md`, skill, agent, plugin or login of the user
//! is reachable, and `CLAUDE_CODE_DISABLE_AUTO_MEMORY=1` turns off the
//! auto-memory every system prompt would otherwise ask the model to write.
//! A login therefore comes from the environment only: `ANTHROPIC_API_KEY`,
//! or `CLAUDE_CODE_OAUTH_TOKEN` (the token `claude setup-token` prints for
//! a subscription); a login stored by `/login` under `~/.claude` is not
//! read ([`login`] checks what an episode would see).

use std::ffi::OsString;
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
    // Other Claude sessions on the machine (parallel shards included):
    // offered by 2.1.332 with no permission asked (issue 25).
    "ListAgents",
    // Claude design projects (write_files, delete_files, create_project):
    // offered by 2.1.332 unless CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC
    // is set (found by a red team through the census).
    "DesignSync",
    "TeamCreate",
    "TeamDelete",
    "SendUserMessage",
    "Brief",
    "Sleep",
    "Config",
    "LSP",
    // The MCP resources of the server under test: a way to it that the
    // proxy's call log would never see.
    "ListMcpResourcesTool",
    "ReadMcpResourceTool",
    "ReadMcpResourceDirTool",
];

/// The environment variable that turns off the CLI's auto-memory (a
/// `MEMORY.md` under the config folder injected into the episode, and a
/// system prompt asking the model to write one): issue 25.
pub const DISABLE_AUTO_MEMORY: &str = "CLAUDE_CODE_DISABLE_AUTO_MEMORY";

/// The environment variable that carries the user's own `HOME` past the
/// CLI to our proxy, which restores it ([`restore_user_home`]): a
/// profile's `~` and its upstream's caches live in the user's home, not in
/// the episode's fresh one.
pub const USER_HOME: &str = "OKN_USER_HOME";

/// How the name of every [`FreshHome`] folder begins (it is made for
/// claude, codex and gemini episodes alike: issue 25, item 7).
pub const FRESH_HOME_PREFIX: &str = "okn-episode-home-";

/// An empty home and config folder made for one episode of a CLI host
/// (or one login or version check), removed when dropped: what the CLI would read of the user
/// (settings, memory, `CLAUDE.md`, skills, agents, plugins, stored logins,
/// other sessions) is not in it, and what it writes there (transcripts,
/// caches) is kept out of the runs root (issue 25, "claude").
#[derive(Debug)]
pub struct FreshHome {
    dir: tempfile::TempDir,
}

impl FreshHome {
    /// Makes the folder (under the system's temporary folder).
    ///
    /// Errors: it cannot be created (the message names the temporary
    /// folder).
    pub fn new() -> crate::error::Result<FreshHome> {
        let dir = tempfile::Builder::new()
            .prefix(FRESH_HOME_PREFIX)
            .tempdir()
            .map_err(|e| crate::error::Error::io(std::env::temp_dir(), "create a folder in", e))?;
        Ok(FreshHome { dir })
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `env` with what isolates the CLI added last (so it wins): `HOME`
    /// and `CLAUDE_CONFIG_DIR` in this folder, its own scratch
    /// (`CLAUDE_CODE_TMPDIR`) in it too, auto-memory off, and the user's
    /// home in [`USER_HOME`] for the proxy.
    pub fn env(&self, env: &[(String, String)]) -> Vec<(String, String)> {
        let home = self.path();
        let path = |p: PathBuf| p.to_string_lossy().into_owned();
        self.env_with(
            env,
            &[
                ("CLAUDE_CONFIG_DIR", path(home.join(".claude"))),
                ("CLAUDE_CODE_TMPDIR", path(home.join("tmp"))),
                (DISABLE_AUTO_MEMORY, "1".into()),
            ],
        )
    }

    /// `env` with `HOME` and `TMPDIR` in this folder, the user's home in
    /// [`USER_HOME`] for the proxy, and a host's own variables `extra`
    /// (issue 25: codex's `CODEX_HOME`, gemini's `GEMINI_CLI_HOME`), added
    /// last so they win; a value the caller gave for any of them is
    /// replaced, never passed on.
    pub fn env_with(
        &self,
        env: &[(String, String)],
        extra: &[(&str, String)],
    ) -> Vec<(String, String)> {
        let home = self.path();
        let replaced = |k: &str| ISOLATING.contains(&k) || extra.iter().any(|(n, _)| *n == k);
        let mut out: Vec<(String, String)> =
            env.iter().filter(|(k, _)| !replaced(k)).cloned().collect();
        let user_home = env
            .iter()
            .find(|(k, _)| k == "HOME")
            .map(|(_, v)| OsString::from(v))
            .or_else(|| std::env::var_os("HOME"));
        if let Some(user_home) = user_home {
            out.push((USER_HOME.into(), user_home.to_string_lossy().into_owned()));
        }
        let path = |p: PathBuf| p.to_string_lossy().into_owned();
        out.push(("HOME".into(), path(home.to_path_buf())));
        let tmp = home.join("tmp");
        // A host's scratch (gemini's error reports, codex's aliases) stays
        // in the episode's folder.
        let _ = std::fs::create_dir_all(&tmp);
        out.push(("TMPDIR".into(), path(tmp)));
        out.extend(extra.iter().map(|(k, v)| (k.to_string(), v.clone())));
        out
    }
}

/// The variables [`FreshHome::env`] sets: a value the caller gave for one
/// of them is replaced, never passed on.
const ISOLATING: &[&str] = &[
    "HOME",
    "TMPDIR",
    "CLAUDE_CONFIG_DIR",
    "CLAUDE_CODE_TMPDIR",
    DISABLE_AUTO_MEMORY,
    USER_HOME,
];

/// In our proxy started by a claude episode: `HOME` set back to the
/// user's own ([`USER_HOME`]), before anything reads it, so a profile's
/// `~` and an upstream's caches are where the user keeps them. Does
/// nothing elsewhere.
pub fn restore_user_home() {
    if let Some(home) = std::env::var_os(USER_HOME) {
        // SAFETY: called first thing in the proxy's `run`, before its
        // runtime starts threads that read the environment.
        unsafe {
            std::env::set_var("HOME", home);
            std::env::remove_var(USER_HOME);
        }
    }
}

/// What a claude episode is run with: the settings every CLI host takes.
pub use super::CliSettings as ClaudeSettings;

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
        DISALLOWED_TOOLS
            .iter()
            .copied()
            .chain(settings.block_tools.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(","),
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
/// environment, in a [`FreshHome`] as an episode runs: a login stored
/// under the user's `~/.claude` reads "not logged in" here, as it would in
/// every episode.
pub fn login(program: &Path, env: &[(String, String)]) -> Login {
    let home = match FreshHome::new() {
        Ok(home) => home,
        Err(e) => return Login::Unknown(e.to_string()),
    };
    let output = std::process::Command::new(program)
        .args(["auth", "status", "--json"])
        .envs(home.env(env))
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
            "'auth status' gave no JSON: it {}",
            super::report::exit_words(output.status.code())
        )),
    }
}

/// `PROGRAM --version` (claude, codex or gemini), its first line, or
/// `None` when it cannot be run or prints nothing. Run with `env` added,
/// in a [`FreshHome`] as an episode runs (issue 25, item 6): gemini 0.61
/// leaves `~/.gemini/projects.json.UUID.tmp` files even for `--version`,
/// and nothing a preflight starts may write into the user's home, so
/// `HOME`, `TMPDIR`, `CLAUDE_CONFIG_DIR`, `CODEX_HOME` and
/// `GEMINI_CLI_HOME` all name the fresh folder, removed afterwards.
///
/// Errors: the fresh home cannot be made ([`FreshHome::new`]).
pub fn version(program: &Path, env: &[(String, String)]) -> crate::error::Result<Option<String>> {
    let home = FreshHome::new()?;
    let path = |p: PathBuf| p.to_string_lossy().into_owned();
    let codex_home = home.path().join("codex");
    // codex refuses a CODEX_HOME that does not exist.
    let _ = std::fs::create_dir_all(&codex_home);
    let vars = home.env_with(
        env,
        &[
            ("CLAUDE_CONFIG_DIR", path(home.path().join(".claude"))),
            ("CODEX_HOME", path(codex_home)),
            ("GEMINI_CLI_HOME", path(home.path().to_path_buf())),
        ],
    );
    let Ok(output) = std::process::Command::new(program)
        .arg("--version")
        .envs(vars)
        .stdin(std::process::Stdio::null())
        .output()
    else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(&output.stdout);
    Ok(text
        .lines()
        .next()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty()))
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
            block_tools: vec!["NewTool".into()],
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
                .any(|a| a.starts_with("Agent,Task,Workflow,")
                    && a.contains(",ListAgents,")
                    && a.ends_with(",NewTool"))
        );
    }

    #[test]
    fn a_fresh_home_replaces_what_the_caller_gave_and_keeps_the_rest() {
        let home = FreshHome::new().unwrap();
        let given = [
            ("HOME".to_string(), "/home/someone".to_string()),
            (
                "CLAUDE_CONFIG_DIR".to_string(),
                "/home/someone/.claude".to_string(),
            ),
            ("ANTHROPIC_API_KEY".to_string(), "k".to_string()),
        ];
        let env = home.env(&given);
        let get = |k: &str| {
            let all: Vec<&String> = env.iter().filter(|(n, _)| n == k).map(|(_, v)| v).collect();
            assert!(all.len() <= 1, "{k} set twice: {env:?}");
            all.first().map(|v| v.as_str())
        };
        let path = home.path().to_string_lossy().into_owned();
        assert_eq!(get("HOME"), Some(path.as_str()));
        assert_eq!(
            get("CLAUDE_CONFIG_DIR"),
            Some(format!("{path}/.claude").as_str())
        );
        assert_eq!(get(DISABLE_AUTO_MEMORY), Some("1"));
        assert_eq!(get(USER_HOME), Some("/home/someone"));
        assert_eq!(get("ANTHROPIC_API_KEY"), Some("k"));
        let kept = home.path().to_path_buf();
        drop(home);
        assert!(!kept.exists(), "removed when dropped");
    }
}
