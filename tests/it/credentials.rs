//! Credentials and the machine (issue 24, items 27 and 28), through the
//! real binary: `run` with the scripted agent, the real proxy, and a real
//! MCP server (the official Python SDK's FastMCP, `tests/servers/echo_mcp.py`,
//! run with the Python of `mcp-server-sparql`'s venv) that echoes the
//! headers and the environment value its profile sets, over stdio and over
//! streamable HTTP. Nothing a profile sets, and no folder of the machine,
//! may reach a recorded file.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::{KillOnDrop, free_port, okn, repo, stderr, stdout, tool, wait_for_port};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_okn-benchmark");

/// The environment value the echo server prints and echoes: outside ASCII,
/// so Python's `json.dumps` writes it escaped (`p\u00e4ss...`).
const ENV_SECRET: &str = "pässwörd-s3cret-42";
/// The header values the HTTP profile sends.
const TOKEN: &str = "tok-27-e4f1c9d2b7";
const API_KEY: &str = "key-27-93a0b1c2d3";

/// The Python that has the `mcp` package (mcp-server-sparql's venv).
fn python() -> PathBuf {
    tool("mcp-server-sparql").parent().unwrap().join("python3")
}

fn echo_server() -> PathBuf {
    repo().join("tests/servers/echo_mcp.py")
}

/// Every form a secret may take in a file: as it is, and as JSON escapes
/// it (inside a string; and ASCII-only, as Python writes it), once or
/// twice (a JSON reply quoted in the agent's JSON report).
fn forms(secret: &str) -> Vec<String> {
    let escape = |text: &str| {
        let quoted = serde_json::to_string(text).unwrap();
        quoted[1..quoted.len() - 1].to_string()
    };
    let ascii: String = escape(secret)
        .chars()
        .map(|c| {
            if c.is_ascii() {
                c.to_string()
            } else {
                format!("\\u{:04x}", c as u32)
            }
        })
        .collect();
    let mut found = Vec::new();
    for base in [secret.to_string(), ascii] {
        let once = escape(&base);
        let twice = escape(&once);
        found.extend([base, once, twice]);
    }
    found
}

/// Every file under `root`, as text (bytes that are not UTF-8 replaced).
fn files(root: &Path) -> Vec<(PathBuf, String)> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let text = String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()).into_owned();
            (e.path().to_path_buf(), text)
        })
        .collect()
}

/// Asserts that no file under `root` holds any form of any of `secrets`.
#[track_caller]
fn assert_nowhere(root: &Path, secrets: &[&str]) {
    for (path, text) in files(root) {
        for secret in secrets {
            for form in forms(secret) {
                assert!(
                    !text.contains(&form),
                    "{} holds '{form}':\n{text}",
                    path.display()
                );
            }
        }
    }
}

/// `run` of one demo question into `out` with `profile`, the scripted
/// oracle as the agent (it calls the server's `query` tool, and quotes its
/// reply in agent.json when the reply is no table).
fn run_one(out: &Path, profile: &Path, home: Option<&Path>) -> std::process::Output {
    let mut cmd = okn();
    cmd.args(["run", "--corpus", "demo/benchmarks-single", "--limit", "1"])
        .args(["--tools", "all-tools", "--kg-hint", "tags"])
        .args(["--agent", "scripted:oracle", "--timeout", "60"])
        .arg("--profile")
        .arg(profile)
        .arg("--out")
        .arg(out);
    if let Some(home) = home {
        cmd.env("HOME", home);
    }
    cmd.output().unwrap()
}

/// The one attempt folder of the one condition in `out`.
fn attempt(out: &Path) -> PathBuf {
    let question = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("_results"))
        .expect("a question folder");
    let condition = std::fs::read_dir(&question)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .expect("a condition folder");
    condition.join("attempt-1")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Issue 24, item 27: a stdio server that echoed an environment value of
/// its profile, in its replies and on stderr, put it into calls.json,
/// agent.json and upstream.stderr.log (and so onto the attempt page).
/// Every recorded file holds `[redacted: ECHO_SECRET]` instead, in each
/// form the value took (Python escaped it as `\u00e4`).
#[test]
fn an_environment_value_a_server_echoes_is_redacted_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("echo.toml");
    std::fs::write(
        &profile,
        format!(
            "name = \"echo\"\n[upstream]\ntransport = \"stdio\"\ncommand = {:?}\nargs = [{:?}, \"stdio\"]\nenv = {{ ECHO_SECRET = {:?} }}\n",
            python().display().to_string(),
            echo_server().display().to_string(),
            ENV_SECRET
        ),
    )
    .unwrap();
    let out = dir.path().join("runs");
    let o = run_one(&out, &profile, None);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let attempt = attempt(&out);
    let label = "[redacted: ECHO_SECRET]";
    // The server did echo it: each record shows where it was.
    let calls = read(&attempt.join("calls.json"));
    assert!(
        calls.contains(&format!(r#"\"env\": \"{label}\""#)),
        "{calls}"
    );
    let agent = read(&attempt.join("agent.json"));
    assert!(agent.contains(label), "{agent}");
    serde_json::from_str::<Value>(&agent).expect("agent.json stays JSON");
    let stderr_log = read(&attempt.join("upstream.stderr.log"));
    assert!(
        stderr_log.contains(&format!("echo server starting, ECHO_SECRET={label}\n")),
        "{stderr_log}"
    );
    let condition = read(&out.join("conditions/echo-all-tools__kg-named.json"));
    assert!(condition.contains("\"ECHO_SECRET\""), "{condition}");
    assert_nowhere(&out, &[ENV_SECRET]);
    // What report writes from the records (README, summary CSVs) too.
    let o = okn().arg("report").arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_nowhere(&out, &[ENV_SECRET]);
}

/// Issue 24, item 27: a streamable-HTTP server that echoed the request's
/// Authorization header (and another header) put the credential into
/// calls.json and agent.json. Both are redacted, the token alone too.
#[test]
fn a_header_a_server_echoes_is_redacted_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut server = Command::new(python())
        .arg(echo_server())
        .args(["streamable-http", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_port(port, &mut server);
    let _server = KillOnDrop(server);
    let profile = dir.path().join("echo.toml");
    std::fs::write(
        &profile,
        format!(
            "name = \"echo\"\n[upstream]\ntransport = \"http\"\nurl = \"http://127.0.0.1:{port}/mcp\"\nheaders = {{ Authorization = \"Bearer {TOKEN}\", X-Api-Key = {API_KEY:?} }}\n"
        ),
    )
    .unwrap();
    let out = dir.path().join("runs");
    let o = run_one(&out, &profile, None);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let attempt = attempt(&out);
    let calls = read(&attempt.join("calls.json"));
    assert!(
        calls.contains(r#"\"authorization\": \"[redacted: Authorization]\""#),
        "{calls}"
    );
    assert!(
        calls.contains(r#"\"x-api-key\": \"[redacted: X-Api-Key]\""#),
        "{calls}"
    );
    assert!(
        read(&attempt.join("agent.json")).contains("[redacted: Authorization]"),
        "agent.json"
    );
    assert_nowhere(&out, &[&format!("Bearer {TOKEN}"), TOKEN, API_KEY]);
}

/// Issue 24, item 28: `~` in a profile was expanded and the home folder
/// recorded in conditions/*.json, and an absolute command path recorded.
/// The record is the profile as written, and no file of the root names
/// the home folder or the program's folder.
#[test]
fn a_profile_is_recorded_as_written_without_the_machines_paths() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    copy_dir(&repo().join("demo/kg"), &home.join("kg"));
    let program_folder = Path::new(BIN)
        .parent()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    for (name, command) in [("tilde", "okn-benchmark"), ("absolute", BIN)] {
        let profile = dir.path().join(format!("{name}.toml"));
        std::fs::write(
            &profile,
            format!(
                "name = \"{name}\"\n[upstream]\ntransport = \"stdio\"\ncommand = {command:?}\nargs = [\"kg-server\", \"--data\", \"~/kg\"]\n"
            ),
        )
        .unwrap();
        let out = dir.path().join(format!("runs-{name}"));
        let o = run_one(&out, &profile, Some(&home));
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
        let condition: Value = serde_json::from_str(&read(
            &out.join(format!("conditions/{name}-all-tools__kg-named.json")),
        ))
        .unwrap();
        let target = condition["settings"]["profile"]["target"]
            .as_str()
            .unwrap()
            .to_string();
        if name == "tilde" {
            assert_eq!(target, "okn-benchmark kg-server --data ~/kg");
        } else {
            // The program relative to the profile's folder, the rest as
            // written.
            let (program, rest) = target.split_once(' ').unwrap();
            assert!(
                program.starts_with("../") && program.ends_with("/okn-benchmark"),
                "{target}"
            );
            assert_eq!(rest, "kg-server --data ~/kg");
        }
        assert_eq!(condition["aggregate"]["exact_rate"], 1.0, "{name}");
        // No file names the home folder, and no record names the
        // program's folder as an absolute path (command.txt and the target
        // name it relative to a folder: docs/FORMAT.md).
        let home_text = home.to_string_lossy().into_owned();
        for (path, text) in files(&out) {
            assert!(
                !text.contains(&home_text),
                "{} names the home folder:\n{text}",
                path.display()
            );
        }
        for (path, text) in files(&out.join("conditions")) {
            assert!(
                !text
                    .match_indices(program_folder.as_str())
                    .any(|(at, _)| !text[..at].ends_with('.')),
                "{} names {program_folder}:\n{text}",
                path.display()
            );
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
