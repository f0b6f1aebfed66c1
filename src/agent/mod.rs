//! Agent hosts: the programs that receive the prompt and reach the server
//! under test only through our proxy (README.md, "Agent hosts"; issue 25).
//!
//! - [`host`]: the host table ([`host::Host`], matched in full
//!   everywhere) and the typed host report every host's output is parsed
//!   into; judging reads only that report.
//! - [`claude`]: `claude -p` with the flags that keep an episode honest.
//! - [`codex`]: `codex exec --json` (`docs/HOSTS.md`).
//! - [`gemini`]: the Gemini CLI, non-interactive (`docs/HOSTS.md`).
//! - [`openai`]: the built-in loop over an OpenAI-compatible API
//!   ([`openai_loop`], `okn-benchmark openai-agent`; `docs/HOSTS.md`).
//! - [`scripted`]: a built-in deterministic agent (an MCP client playing a
//!   [`strategy::Strategy`]), for tests and for recording demo roots with no
//!   model.
//! - [`census`]: the tool census, which starts the host once against a
//!   recording stand-in before the first episode and stops the run when
//!   it offers a tool beyond the proxy's or reads a planted marker.
//! - [`standin`]: a stand-in for the models' APIs, so the real CLIs can be
//!   tested end to end with no model.
//! - [`machine_paths`]: the folders of the machine a host may print (its
//!   fresh home, the attempt, its program's folder, the user's home),
//!   replaced by placeholders in what an attempt records.
//!
//! Every host is an external process started the same way ([`launch`]):
//! prompt on stdin, its report on stdout, killed at the agent timeout, in
//! an [`EpisodeEnv`] made fresh for the episode.
//!
//! The host table and the parsers compile without the `harness` feature
//! (the publishing half parses recorded output); the rest needs it.

pub mod census;
#[cfg(feature = "harness")]
pub mod claude;
pub mod codex;
pub mod gemini;
pub mod host;
#[cfg(feature = "harness")]
pub mod machine_paths;
pub mod openai;
#[cfg(feature = "harness")]
pub mod openai_loop;
pub mod report;
#[cfg(feature = "harness")]
pub mod scripted;
#[cfg(feature = "harness")]
pub mod standin;
#[cfg(feature = "harness")]
pub mod strategy;

#[cfg(feature = "harness")]
pub use self::harness::*;

#[cfg(feature = "harness")]
mod harness {
    use std::io::{Read, Write};
    use std::path::{Path, PathBuf};
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use serde_json::json;

    use super::host::Host;
    use super::openai::OpenaiSettings;
    use super::{claude, codex, gemini, openai, strategy};
    use crate::error::{Error, Result};

    /// The name the proxy gets in the agent host's MCP config; its tools appear
    /// to a claude agent as `mcp__okn__TOOL`.
    pub const MCP_SERVER_NAME: &str = "okn";

    /// What a CLI host's episode is run with: the same flags mean the same on
    /// every host (issue 25, "The interface"); a flag a host cannot honour is
    /// refused for it by `run` before anything runs.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct CliSettings {
        /// The host's program (`--agent-program`; default its name on PATH).
        pub program: PathBuf,
        /// `--model`, when given.
        pub model: Option<String>,
        /// `--effort`, when given (omitted: the host's own default).
        pub effort: Option<String>,
        /// `--max-turns`, when given.
        pub max_turns: Option<u32>,
        /// `--block-tool`: built-in tools of the host blocked by name
        /// beside those this program blocks itself (claude's
        /// `--disallowed-tools`, gemini's `tools.exclude`), sorted.
        pub block_tools: Vec<String>,
    }

    /// Which agent host plays a condition's episodes.
    #[derive(Debug, Clone, PartialEq)]
    pub enum Agent {
        /// `claude -p`, with its model, effort and turn limit.
        Claude(CliSettings),
        /// `codex exec --json` (`docs/HOSTS.md`).
        Codex(CliSettings),
        /// The Gemini CLI (`docs/HOSTS.md`).
        Gemini(CliSettings),
        /// The built-in loop over an OpenAI-compatible API (`docs/HOSTS.md`,
        /// "openai"): this program's `openai-agent`.
        Openai(OpenaiSettings),
        /// The built-in scripted agent (no model).
        Scripted(strategy::Strategy),
    }

    impl Agent {
        /// The host that plays it.
        pub fn host(&self) -> Host {
            match self {
                Agent::Claude(_) => Host::Claude,
                Agent::Codex(_) => Host::Codex,
                Agent::Gemini(_) => Host::Gemini,
                Agent::Openai(_) => Host::Openai,
                Agent::Scripted(_) => Host::Scripted,
            }
        }

        /// The settings of a CLI host (`None` for the built-in hosts: the
        /// openai loop and the scripted agent).
        pub fn cli(&self) -> Option<&CliSettings> {
            match self {
                Agent::Claude(s) | Agent::Codex(s) | Agent::Gemini(s) => Some(s),
                Agent::Openai(_) | Agent::Scripted(_) => None,
            }
        }

        /// `claude`, `codex`, `gemini`, `openai:MODEL` or
        /// `scripted:STRATEGY`, as a condition records it.
        pub fn name(&self) -> String {
            match self {
                Agent::Claude(_) | Agent::Codex(_) | Agent::Gemini(_) => self.host().name().into(),
                Agent::Openai(s) => format!("openai:{}", s.model),
                Agent::Scripted(s) => format!("scripted:{s}"),
            }
        }

        /// The model asked for (a scripted agent has none).
        pub fn model(&self) -> Option<&str> {
            match self {
                Agent::Claude(s) | Agent::Codex(s) | Agent::Gemini(s) => s.model.as_deref(),
                Agent::Openai(s) => Some(&s.model),
                Agent::Scripted(_) => None,
            }
        }

        /// The effort asked for (`None`: the host's own default; the openai
        /// loop has none).
        pub fn effort(&self) -> Option<&str> {
            self.cli().and_then(|s| s.effort.as_deref())
        }

        /// `--max-turns`, when given.
        pub fn max_turns(&self) -> Option<u32> {
            match self {
                Agent::Claude(s) | Agent::Codex(s) | Agent::Gemini(s) => s.max_turns,
                Agent::Openai(s) => s.max_turns,
                Agent::Scripted(_) => None,
            }
        }

        /// The API root an openai condition is played against, part of
        /// its identity (`None` for every other host).
        pub fn base_url(&self) -> Option<&str> {
            match self {
                Agent::Openai(s) => Some(&s.base_url),
                Agent::Claude(_) | Agent::Codex(_) | Agent::Gemini(_) | Agent::Scripted(_) => None,
            }
        }
    }

    /// Our proxy as an agent host starts it: its only MCP server.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct McpProxy {
        /// This program.
        pub program: PathBuf,
        /// `proxy ...`.
        pub args: Vec<String>,
    }

    /// The value of variable `name` in `env` (what the run adds), else in
    /// this process's environment.
    pub fn env_value(env: &[(String, String)], name: &str) -> Option<String> {
        env.iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var(name).ok())
            .filter(|v| !v.is_empty())
    }

    /// The environment one episode of an agent host runs with: what the run
    /// was given, and for a CLI host a [`claude::FreshHome`] (issue 25), which
    /// lives as long as this does and is removed with it, holding the host's
    /// configuration written for the episode.
    #[derive(Debug)]
    pub struct EpisodeEnv {
        /// Held so the folder outlives the episode's process.
        _home: Option<claude::FreshHome>,
        /// The variables to add to the host's environment.
        pub vars: Vec<(String, String)>,
    }

    impl EpisodeEnv {
        /// The episode's fresh home, removed when this is dropped (`None`
        /// for the built-in hosts, which have none): what
        /// [`super::machine_paths::MachinePaths`] replaces by
        /// `$EPISODE_HOME` in what is recorded (issue 25, item 7).
        pub fn home(&self) -> Option<&Path> {
            self._home.as_ref().map(claude::FreshHome::path)
        }

        /// The environment for one episode of `agent`, `env` being what the
        /// run adds for every host and `proxy` the MCP server the host's
        /// configuration names (codex's `config.toml`, gemini's
        /// `settings.json`; claude takes it on its command line).
        ///
        /// Errors: a fresh home cannot be made ([`claude::FreshHome::new`]),
        /// or the host's configuration cannot be written into it.
        pub fn for_agent(
            agent: &Agent,
            env: &[(String, String)],
            proxy: &McpProxy,
        ) -> Result<EpisodeEnv> {
            let home = match agent {
                // The built-in hosts read no user configuration. The
                // variable holding the openai key, whatever its name, is a
                // credential the proxy withholds from the server under
                // test and redacts (docs/FORMAT.md, "Credentials").
                Agent::Openai(settings) => {
                    let mut vars = env.to_vec();
                    if let Some(name) = &settings.api_key_env {
                        let listed = std::env::var(crate::mcp::runner_env::CREDENTIAL_ENV_VARIABLE)
                            .unwrap_or_default();
                        vars.push((
                            crate::mcp::runner_env::CREDENTIAL_ENV_VARIABLE.to_string(),
                            format!("{listed} {name}").trim().to_string(),
                        ));
                    }
                    return Ok(EpisodeEnv { _home: None, vars });
                }
                Agent::Scripted(_) => {
                    return Ok(EpisodeEnv {
                        _home: None,
                        vars: env.to_vec(),
                    });
                }
                Agent::Claude(_) | Agent::Codex(_) | Agent::Gemini(_) => claude::FreshHome::new()?,
            };
            let path = |p: PathBuf| p.to_string_lossy().into_owned();
            let vars = match agent {
                Agent::Claude(_) => home.env(env),
                Agent::Codex(settings) => {
                    let codex_home = home.path().join("codex");
                    codex::write_config(&codex_home, settings, env, proxy)?;
                    home.env_with(env, &[("CODEX_HOME", path(codex_home))])
                }
                Agent::Gemini(settings) => {
                    gemini::write_settings(home.path(), settings, proxy)?;
                    home.env_with(env, &[("GEMINI_CLI_HOME", path(home.path().to_path_buf()))])
                }
                Agent::Openai(_) | Agent::Scripted(_) => env.to_vec(),
            };
            Ok(EpisodeEnv {
                _home: Some(home),
                vars,
            })
        }
    }

    /// The agent host, checked once before the first episode (issue 25, "The
    /// interface"): its program runs and states its version, and it is logged
    /// in or has its key (else every episode would fail before the first
    /// question and read as blocked). Returns the version, as a condition
    /// records it (`settings.agent_version`), naming the host.
    ///
    /// Errors: a program that does not run (named, with what to install or
    /// `--agent-program PATH`); a claude that says it is not logged in; a
    /// codex or gemini without its key in the environment; an openai
    /// condition whose `--api-key-env` names a variable that is unset or
    /// empty, or whose base URL is not one ([`openai::check_base_url`]).
    pub fn preflight(
        agent: &Agent,
        env: &[(String, String)],
        progress: &mut impl FnMut(&str),
    ) -> Result<String> {
        let (settings, package) = match agent {
            Agent::Scripted(_) => {
                return Ok(format!(
                    "okn-benchmark {} (scripted agent)",
                    env!("CARGO_PKG_VERSION")
                ));
            }
            Agent::Openai(s) => {
                openai::check_base_url(&s.base_url).map_err(Error::Usage)?;
                if let Some(name) = &s.api_key_env {
                    openai::check_key(env, name).map_err(Error::Usage)?;
                }
                return Ok(format!(
                    "okn-benchmark {} (openai loop)",
                    env!("CARGO_PKG_VERSION")
                ));
            }
            Agent::Claude(s) => (s, "@anthropic-ai/claude-code"),
            Agent::Codex(s) => (s, "@openai/codex"),
            Agent::Gemini(s) => (s, "@google/gemini-cli"),
        };
        let host = agent.host().name();
        let version = claude::version(&settings.program, env)?.ok_or_else(|| {
            Error::Other(format!(
                "cannot run '{} --version': install the {host} CLI (npm package {package}) or \
             pass --agent-program PATH",
                settings.program.display()
            ))
        })?;
        // gemini prints its bare version number.
        let version = if version.starts_with(|c: char| c.is_ascii_digit()) {
            format!("{host}-cli {version}")
        } else {
            version
        };
        let key = match agent {
            Agent::Claude(_) => return claude_login(settings, version, env, progress),
            Agent::Codex(_) => codex::KEY_VAR,
            Agent::Gemini(_) => gemini::KEY_VAR,
            Agent::Openai(_) | Agent::Scripted(_) => return Ok(version),
        };
        if env_value(env, key).is_none() {
            return Err(Error::Usage(format!(
                "{key} is not set, so every {host} episode would fail before the first question \
             (an episode runs in a fresh home, so a login stored under the user's home is not \
             read): set {key}, then run again"
            )));
        }
        Ok(version)
    }

    /// Whether claude is logged in, as an episode would see it.
    fn claude_login(
        settings: &CliSettings,
        version: String,
        env: &[(String, String)],
        progress: &mut impl FnMut(&str),
    ) -> Result<String> {
        match claude::login(&settings.program, env) {
            claude::Login::Yes(_) => Ok(version),
            claude::Login::No => Err(Error::Usage(format!(
                "{} is not logged in ('{} auth status' says so), so every episode would fail \
             before the first question (an episode runs in a fresh home, so a login stored \
             by /login is not read): set ANTHROPIC_API_KEY, or CLAUDE_CODE_OAUTH_TOKEN to \
             the token 'claude setup-token' prints, then run again",
                version,
                settings.program.display()
            ))),
            claude::Login::Unknown(why) => {
                progress(&format!(
                    "warning: cannot tell whether claude is logged in ({why}); an episode that \
                 fails to log in is recorded as blocked"
                ));
                Ok(version)
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
}

#[cfg(all(test, feature = "harness"))]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::time::Duration;

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
