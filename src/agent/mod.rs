//! Agent hosts: the programs that receive the prompt and reach the server
//! under test only through our proxy (README.md, "Episodes: run, report,
//! rescore, freeze").
//!
//! - [`claude`]: `claude -p` with the flags that keep an episode honest.
//! - [`scripted`]: a built-in deterministic agent (an MCP client playing a
//!   [`strategy::Strategy`]), for tests and for recording demo roots with no
//!   model.
//! - [`standin`]: a stand-in for the Anthropic Messages API, so the real
//!   `claude` CLI can be tested end to end with no model.
//!
//! Every host is an external process started the same way ([`launch`]):
//! prompt on stdin, JSON report on stdout, killed at the agent timeout.

pub mod claude;
pub mod openai_loop;
pub mod scripted;
pub mod standin;
pub mod strategy;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::error::{Error, Result};

/// The name the proxy gets in the agent host's MCP config; its tools appear
/// to a claude agent as `mcp__okn__TOOL`.
pub const MCP_SERVER_NAME: &str = "okn";

/// Which agent host plays a condition's episodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Agent {
    /// `claude -p`, with its model, effort and turn limit.
    Claude(claude::ClaudeSettings),
    /// The built-in scripted agent (no model).
    Scripted(strategy::Strategy),
}

impl Agent {
    /// `claude` or `scripted:STRATEGY`, as a condition records it.
    pub fn name(&self) -> String {
        match self {
            Agent::Claude(_) => "claude".into(),
            Agent::Scripted(s) => format!("scripted:{s}"),
        }
    }

    /// The model asked for (a scripted agent has none).
    pub fn model(&self) -> Option<&str> {
        match self {
            Agent::Claude(settings) => settings.model.as_deref(),
            Agent::Scripted(_) => None,
        }
    }

    /// The effort asked for (`None`: the CLI's own default).
    pub fn effort(&self) -> Option<&str> {
        match self {
            Agent::Claude(settings) => settings.effort.as_deref(),
            Agent::Scripted(_) => None,
        }
    }

    /// `--max-turns`, when given.
    pub fn max_turns(&self) -> Option<u32> {
        match self {
            Agent::Claude(settings) => settings.max_turns,
            Agent::Scripted(_) => None,
        }
    }
}

/// The environment one episode of an agent host runs with: what the run
/// was given, and for claude a [`claude::FreshHome`] (issue 25), which
/// lives as long as this does and is removed with it.
#[derive(Debug)]
pub struct EpisodeEnv {
    /// Held so the folder outlives the episode's process.
    _home: Option<claude::FreshHome>,
    /// The variables to add to the host's environment.
    pub vars: Vec<(String, String)>,
}

impl EpisodeEnv {
    /// The environment for one episode of `agent`, `env` being what the
    /// run adds for every host.
    ///
    /// Errors: a fresh home cannot be made ([`claude::FreshHome::new`]).
    pub fn for_agent(agent: &Agent, env: &[(String, String)]) -> Result<EpisodeEnv> {
        match agent {
            Agent::Claude(_) => {
                let home = claude::FreshHome::new()?;
                let vars = home.env(env);
                Ok(EpisodeEnv {
                    _home: Some(home),
                    vars,
                })
            }
            Agent::Scripted(_) => Ok(EpisodeEnv {
                _home: None,
                vars: env.to_vec(),
            }),
        }
    }
}

/// A command line to start an agent host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentCommand {
    /// The program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
}

impl AgentCommand {
    /// The command as one shell line (POSIX quoting), with the prompt fed
    /// from `prompt.txt`: what `command.txt` records. It embeds absolute log
    /// paths, so it re-runs in place.
    pub fn shell_line(&self) -> String {
        let mut parts = vec![shell_quote(&self.program.to_string_lossy())];
        parts.extend(self.args.iter().map(|a| shell_quote(a)));
        format!("{} < prompt.txt\n", parts.join(" "))
    }
}

pub use crate::text::shell_quote;

/// The MCP config an agent host is given: one stdio server, the proxy.
pub fn mcp_config(proxy_program: &Path, proxy_args: &[String]) -> String {
    json!({
        "mcpServers": {
            MCP_SERVER_NAME: {
                "type": "stdio",
                "command": proxy_program.to_string_lossy(),
                "args": proxy_args,
            }
        }
    })
    .to_string()
}

/// What one agent host process did.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentRun {
    /// Its stdout (the JSON report).
    pub stdout: Vec<u8>,
    /// Its stderr.
    pub stderr: Vec<u8>,
    /// Exit code, `None` when killed.
    pub exit_code: Option<i32>,
    /// Killed at the timeout.
    pub timed_out: bool,
    /// Wall time, seconds.
    pub wall_s: f64,
}

/// Starts `command` in `cwd` with `prompt` on stdin and `env` added, waits
/// up to `timeout`, and kills it (and its process group) past that.
///
/// Errors: the program cannot be started (named, with what to install);
/// [`Error::Interrupted`] when Ctrl-C arrives while it runs (it is killed,
/// with its process group, and nothing of it is returned).
pub fn launch(
    command: &AgentCommand,
    prompt: &str,
    cwd: &Path,
    env: &[(String, String)],
    timeout: Duration,
) -> Result<AgentRun> {
    let mut cmd = Command::new(&command.program);
    cmd.args(&command.args)
        .current_dir(cwd)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Its own process group, so a timeout kills the host and the proxy
        // it started together.
        cmd.process_group(0);
    }
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: prctl is async-signal-safe; it only asks the kernel to
        // kill the host if this runner dies (a killed run must not leave an
        // agent spending tokens, or writing into an attempt being resumed).
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
    }
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(|e| {
        Error::Other(format!(
            "cannot start the agent host '{}': {e}",
            command.program.display()
        ))
    })?;
    if let Some(mut stdin) = child.stdin.take() {
        let prompt = prompt.to_string();
        std::thread::spawn(move || {
            let _ = stdin.write_all(prompt.as_bytes());
        });
    }
    let mut stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let out_reader = std::thread::spawn(move || read_capped(&mut stdout));
    let err_reader = std::thread::spawn(move || read_capped(&mut stderr));
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if crate::interrupt::requested() => {
                kill_group(&mut child);
                let _ = child.wait();
                let _ = out_reader.join();
                let _ = err_reader.join();
                return Err(Error::Interrupted(
                    "interrupted: the episode in flight was killed".into(),
                ));
            }
            Ok(None) if started.elapsed() >= timeout => {
                timed_out = true;
                kill_group(&mut child);
                break child.wait().ok();
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => break None,
        }
    };
    let wall_s = started.elapsed().as_secs_f64();
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    Ok(AgentRun {
        stdout,
        stderr,
        exit_code: if timed_out {
            None
        } else {
            status.and_then(|s| s.code())
        },
        timed_out,
        wall_s,
    })
}

/// Most bytes of an agent host's stdout or stderr that are kept (64 MiB);
/// the rest is read and dropped, so the host never blocks on a full pipe
/// and a runaway one cannot exhaust memory or disk.
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024 * 1024;

fn read_capped(stream: &mut impl Read) -> Vec<u8> {
    let mut kept = Vec::new();
    let _ = stream
        .by_ref()
        .take(MAX_OUTPUT_BYTES as u64)
        .read_to_end(&mut kept);
    let _ = std::io::copy(stream, &mut std::io::sink());
    kept
}

fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        // The whole process group: the host and the proxy it started.
        let _ = Command::new("kill")
            .args(["-s", "KILL", "--", &format!("-{}", child.id())])
            .status();
    }
    let _ = child.kill();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_lines_quote_what_needs_it() {
        let cmd = AgentCommand {
            program: PathBuf::from("/usr/bin/claude"),
            args: vec![
                "-p".into(),
                "--setting-sources".into(),
                "".into(),
                "{\"a\": 'b'}".into(),
            ],
        };
        assert_eq!(
            cmd.shell_line(),
            "/usr/bin/claude -p --setting-sources '' '{\"a\": '\\''b'\\''}' < prompt.txt\n"
        );
    }

    /// A host that floods stdout must not fill memory and disk.
    #[test]
    fn a_host_flooding_stdout_is_capped() {
        let dir = tempfile::tempdir().unwrap();
        let cmd = AgentCommand {
            program: PathBuf::from("sh"),
            args: vec![
                "-c".into(),
                format!("head -c {} /dev/zero", MAX_OUTPUT_BYTES + 1_000_000),
            ],
        };
        let run = launch(&cmd, "", dir.path(), &[], Duration::from_secs(30)).unwrap();
        assert_eq!(run.stdout.len(), MAX_OUTPUT_BYTES);
        assert_eq!(
            run.exit_code,
            Some(0),
            "the host was never blocked on a full pipe"
        );
    }

    #[test]
    fn a_host_past_its_timeout_is_killed() {
        let dir = tempfile::tempdir().unwrap();
        let cmd = AgentCommand {
            program: PathBuf::from("sh"),
            args: vec!["-c".into(), "cat; sleep 30".into()],
        };
        let run = launch(&cmd, "hello", dir.path(), &[], Duration::from_millis(300)).unwrap();
        assert!(run.timed_out);
        assert_eq!(run.exit_code, None);
        assert_eq!(run.stdout, b"hello");
        let run = launch(
            &AgentCommand {
                program: PathBuf::from("sh"),
                args: vec!["-c".into(), "echo out; exit 3".into()],
            },
            "",
            dir.path(),
            &[],
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!((run.exit_code, run.timed_out), (Some(3), false));
        assert_eq!(run.stdout, b"out\n");
    }
}
