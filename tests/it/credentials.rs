//! Credentials and the machine (issue 24, items 27 and 28), through the
//! real binary: `run` with the scripted agent, the real proxy, and a real
//! MCP server (the official Python SDK's FastMCP, `tests/servers/echo_mcp.py`,
//! run with the Python of `mcp-server-sparql`'s venv) that echoes the
//! headers and the environment value its profile sets, over stdio and over
//! streamable HTTP. Nothing a profile sets, and no folder of the machine,
//! may reach a recorded file.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::{okn, repo, stderr, stdout, tool};
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
    let (server, port) = crate::support::serve_on_free_port(|port| {
        let mut command = Command::new(python());
        command
            .arg(echo_server())
            .args(["streamable-http", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        command
    });
    let _server = server;
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

/// `text` with its JSON string escapes (`\uXXXX` in either case, `\/`,
/// `\"`, `\\`, ...) undone, three layers deep, and lower-cased: where a
/// value hides however a writer escaped it.
fn unescaped(text: &str) -> String {
    let mut text = text.to_string();
    for _ in 0..3 {
        let mut out = String::with_capacity(text.len());
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('u') => {
                    let hex: String = (0..4).filter_map(|_| chars.next()).collect();
                    match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                        Some(d) => out.push(d),
                        None => out.push_str(&hex),
                    }
                }
                Some('n') => out.push('\n'),
                Some(other) => out.push(other),
                None => {}
            }
        }
        text = out;
    }
    text.to_lowercase()
}

/// Asserts that no file under `root` holds `fragment` (lower case), in any
/// JSON escaping and any case ([`unescaped`]).
#[track_caller]
fn assert_no_trace(root: &Path, fragment: &str) {
    for (path, text) in files(root) {
        assert!(
            !unescaped(&text).contains(fragment),
            "{} holds '{fragment}':\n{text}",
            path.display()
        );
    }
}

/// The proxy started by hand on `profile`, logging into `log`, its session
/// initialized: each of `lines` is sent, and the reply to each (by line
/// order; a line that gets none waits 3 s) collected.
fn through_proxy(profile: &Path, log: &Path, lines: &[String]) -> Vec<String> {
    use std::io::{BufRead, Write};
    let mut child = Command::new(BIN)
        .arg("proxy")
        .arg("--log-dir")
        .arg(log)
        .arg("--profile")
        .arg(profile)
        .args(["--timeout", "20"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (sender, received) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    let mut send = |line: &str| {
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    };
    send(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"by-hand","version":"0"}}}"#,
    );
    received
        .recv_timeout(std::time::Duration::from_secs(20))
        .unwrap();
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let mut replies = Vec::new();
    for line in lines {
        send(line);
        replies.push(
            received
                .recv_timeout(std::time::Duration::from_secs(20))
                .unwrap_or_default(),
        );
    }
    drop(stdin);
    let _ = child.wait();
    replies
}

/// A `tools/call` of `tool` with `arguments` under `id`, as one line.
fn call_line(id: usize, tool: &str, arguments: Value) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}})
    .to_string()
}

/// The value the server under test is given and puts everywhere: with `&`
/// and `/` (which Go and PHP escape) and an `é` (which Python escapes).
const EVERYWHERE: &str = "Zq7tK&sécret/4e9b1c";

/// A profile for `tests/servers/reply_mcp.py` with `SECRET_TOKEN` set to
/// [`EVERYWHERE`], which the server puts in a tool's name, description and
/// schema, its own name and its stderr.
fn echoing_profile(dir: &Path) -> PathBuf {
    let profile = dir.join("reply.toml");
    std::fs::write(
        &profile,
        format!(
            "name = \"reply\"\n[upstream]\ntransport = \"stdio\"\ncommand = \"python3\"\nargs = [{:?}]\n\
             env = {{ SECRET_TOKEN = {EVERYWHERE:?}, REPLY_TOOL_SUFFIX = {EVERYWHERE:?}, \
             REPLY_SERVER_NAME = \"reply {EVERYWHERE}\", REPLY_STDERR = {EVERYWHERE:?} }}\n",
            repo().join("tests/servers/reply_mcp.py").display().to_string(),
        ),
    )
    .unwrap();
    profile
}

/// Issue 24, item 27: `metrics.json`'s `tools_offered` held a tool named
/// with a value of the profile; a 2,000-character preview (and a
/// 200-character line preview) cut a value in half and kept its start; a
/// value escaped otherwise than lower-case `\uXXXX` (`\u00E9`, Go's
/// `\u0026`, PHP's `\/`, every character) or upper-cased was not found.
/// Through the real proxy, none of these reaches any file it writes, and
/// `probe` shows none of them either.
#[test]
fn a_value_in_a_tool_name_a_cut_preview_or_any_escaping_reaches_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let profile = echoing_profile(dir.path());
    let log = dir.path().join("log");
    let escape_all = |upper: bool| -> String {
        EVERYWHERE
            .chars()
            .map(|c| {
                let e = format!("\\u{:04x}", c as u32);
                if upper {
                    e.to_uppercase().replacen("\\U", "\\u", 1)
                } else {
                    e
                }
            })
            .collect()
    };
    let go = EVERYWHERE.replace('&', "\\u0026").replace('é', "\\u00e9");
    let php = EVERYWHERE.replace('/', "\\/").replace('é', "\\u00E9");
    let texts = [
        format!("{}{EVERYWHERE} and more", "A".repeat(1990)),
        format!("{{\"k\": \"{}\"}}", escape_all(true)),
        format!("{{\"k\": \"{}\"}}", escape_all(false)),
        format!("{{\"k\": \"{go}\"}}"),
        format!("{{\"k\": \"{php}\"}}"),
        EVERYWHERE.to_uppercase(),
        serde_json::to_string(&serde_json::to_string(EVERYWHERE).unwrap()).unwrap(),
    ];
    let mut lines: Vec<String> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| call_line(i + 1, "echo", serde_json::json!({"text": t})))
        .collect();
    // A line the proxy cannot read, the value across its 200th character.
    let head = r#"{"jsonrpc":"2.0","id":50,"method":"tools/call","params":{"name":"echo","arguments":{"text":""#;
    lines.push(format!(
        "{head}{}{EVERYWHERE}\"}}}},}}",
        "B".repeat(200 - head.chars().count() - 6)
    ));
    let replies = through_proxy(&profile, &log, &lines);
    assert!(
        replies[0].contains(EVERYWHERE),
        "the agent gets the reply as sent"
    );
    assert!(replies[7].contains("\"id\":50"), "{}", replies[7]);
    let metrics: Value = serde_json::from_str(&read(&log.join("metrics.json"))).unwrap();
    // Three names hold the value; the label names one of them.
    let offered = metrics["tools_offered"].to_string();
    assert!(
        offered.starts_with(r#"["echo","deep","environment","tool_[redacted: "#)
            && offered.ends_with(r#"]","submit_csv"]"#),
        "{offered}"
    );
    let calls: Value = serde_json::from_str(&read(&log.join("calls.json"))).unwrap();
    let preview = calls["calls"][0]["result_preview"].as_str().unwrap();
    assert_eq!(preview.chars().count(), 2000);
    assert!(preview.ends_with("A[redacted:"), "{}", &preview[1980..]);
    let line_preview = calls["calls"][7]["unreadable"]["line_preview"]
        .as_str()
        .unwrap();
    assert!(line_preview.ends_with("[redac"), "{line_preview}");
    assert!(
        read(&log.join("upstream.stderr.log")).contains("starting with [redacted: "),
        "stderr"
    );
    // Not the value, nor its start, in any escaping or case.
    assert_no_trace(&log, "zq7tk");
    // What probe shows of the server: its tools, its name, its stderr.
    let o = Command::new(BIN)
        .args(["probe", "--profile"])
        .arg(&profile)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let shown = format!("{}{}", stdout(&o), stderr(&o));
    assert!(shown.contains("tool_[redacted: "), "{shown}");
    assert!(!unescaped(&shown).contains("zq7tk"), "{shown}");
}

/// Issue 24, item 27: every environment value of 6 characters or more was
/// replaced wherever it appeared, the agent's submitted answer included, so
/// a profile setting `DEFAULT_REGION = "New Mexico"` turned the oracle's
/// correct answers into misses (exact 1.00 → 0.50) without a word. A value
/// the profile declares in `public_env` is no secret: recorded in the
/// condition, never redacted, and the answer is exact. Left undeclared, the
/// answer is judged as saved, and the attempt, the README and the report
/// say so and name the value.
#[test]
fn a_public_value_is_never_redacted_and_a_redacted_answer_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, public: &str| {
        let profile = dir.path().join(format!("{name}.toml"));
        std::fs::write(
            &profile,
            format!(
                "name = \"{name}\"\n[upstream]\ntransport = \"stdio\"\ncommand = {:?}\n\
                 args = [\"kg-server\", \"--data\", {:?}]\n\
                 env = {{ DEFAULT_REGION = \"New Mexico\", RUST_LOG = \"okn warning\" }}\n{public}",
                BIN,
                repo().join("demo/kg").display().to_string()
            ),
        )
        .unwrap();
        let out = dir.path().join(format!("runs-{name}"));
        let o = okn()
            .args(["run", "--corpus", "demo/benchmarks-single"])
            .args([
                "--exclude",
                "[!s]*",
                "--exclude",
                "spa*",
                "--exclude",
                "spoke-g*",
            ])
            .args(["--exclude", "spoke-okn-a*", "--limit", "1"])
            .args(["--tools", "all-tools", "--kg-hint", "tags"])
            .args(["--agent", "scripted:oracle", "--timeout", "60"])
            .arg("--profile")
            .arg(&profile)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
        (out, stdout(&o))
    };
    let (public, _) = run("public", "public_env = [\"DEFAULT_REGION\"]\n");
    let condition: Value = serde_json::from_str(&read(
        &public.join("conditions/public-all-tools__kg-named.json"),
    ))
    .unwrap();
    assert_eq!(condition["aggregate"]["exact_rate"], 1.0, "{condition}");
    assert_eq!(
        condition["settings"]["profile"]["public"],
        serde_json::json!({"DEFAULT_REGION": "New Mexico"})
    );
    let answer = read(&attempt(&public).join("answer.csv"));
    assert!(answer.contains(",New Mexico,"), "{answer}");
    assert!(!answer.contains("[redacted"), "{answer}");

    let (secret, progress) = run("secret", "");
    assert!(
        progress.contains("[answer judged after redaction]"),
        "{progress}"
    );
    let attempt = attempt(&secret);
    let answer = read(&attempt.join("answer.csv"));
    assert!(answer.contains(",[redacted: DEFAULT_REGION],"), "{answer}");
    let metrics: Value = serde_json::from_str(&read(&attempt.join("metrics.json"))).unwrap();
    assert_eq!(
        metrics["answer_redacted"],
        serde_json::json!(["DEFAULT_REGION"])
    );
    let result: Value =
        serde_json::from_str(&read(&attempt.parent().unwrap().join("result.json"))).unwrap();
    let notes = result["attempts"][0]["notes"].to_string();
    assert!(
        notes.contains("judged as saved, after redaction: the agent's answer held the profile's value of DEFAULT_REGION"),
        "{notes}"
    );
    assert_eq!(result["attempts"][0]["exact"], false);
    let readme = read(&secret.join("README.md"));
    assert!(
        readme.contains("## Answers judged after redaction"),
        "{readme}"
    );
    let o = okn().arg("report").arg(&secret).output().unwrap();
    assert!(
        crate::support::flat(&stdout(&o)).contains("attempt 1: judged as saved, after redaction"),
        "{}",
        stdout(&o)
    );
    // The value with a space is one value: its last word alone is
    // nowhere replaced.
    assert_no_trace(&secret, "redacted: rust_log");
}

/// Issue 24, item 27: `server_info.http_headers` in conditions/*.json held
/// the Authorization header upper-cased, and, from a profile whose URL
/// carries a user and password, the `Basic` credential the client derives
/// from them. The password and that credential are secrets too, and
/// values are found whatever their case: none reaches any file of the
/// root. A header the profile declares in `public_headers` is no secret:
/// recorded in the condition and its echo kept as sent.
#[test]
fn credentials_a_server_echoes_in_its_headers_upper_cased_or_from_the_url_are_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let (server, port) = crate::support::serve_on_free_port(|port| {
        let mut command = Command::new("python3");
        command
            .arg(repo().join("tests/servers/headers_mcp.py"))
            .arg(port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        command
    });
    let _server = server;
    let (user, password) = ("admin", "pw-27-Yh3kQ9z");
    use base64::Engine;
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    for (name, url, headers) in [
        (
            "headers",
            format!("http://127.0.0.1:{port}/mcp"),
            format!(
                "headers = {{ Authorization = \"Bearer {TOKEN}\", X-Api-Key = {API_KEY:?}, \
                 X-Region = \"New Mexico\" }}\npublic_headers = [\"X-Region\"]\n"
            ),
        ),
        (
            "userinfo",
            format!("http://{user}:{password}@127.0.0.1:{port}/mcp"),
            String::new(),
        ),
    ] {
        let profile = dir.path().join(format!("{name}.toml"));
        std::fs::write(
            &profile,
            format!(
                "name = \"{name}\"\n[upstream]\ntransport = \"http\"\nurl = {url:?}\n{headers}"
            ),
        )
        .unwrap();
        let out = dir.path().join(format!("runs-{name}"));
        let o = run_one(&out, &profile, None);
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
        let condition: Value = serde_json::from_str(&read(
            &out.join(format!("conditions/{name}-all-tools__kg-named.json")),
        ))
        .unwrap();
        let info = &condition["settings"]["server_info"];
        let build = info["http_headers"]["x-build"].as_str().unwrap_or_default();
        assert!(build.starts_with("build-[redacted: "), "{info}");
        // The header that repeats the credential as sent is left out, or
        // redacted.
        assert!(
            info["http_headers"]
                .get("x-version")
                .is_none_or(|v| v.as_str().unwrap_or_default().starts_with("[redacted: ")),
            "{info}"
        );
        for fragment in [TOKEN, API_KEY, password, &basic] {
            assert_no_trace(&out, &fragment.to_lowercase());
        }
        if name == "headers" {
            // A header the profile declares public is no secret: recorded
            // with its value, and the server's echo of it kept as sent.
            let public = serde_json::json!({"X-Region": "New Mexico"});
            assert_eq!(condition["settings"]["profile"]["public"], public);
            assert_eq!(condition["identity"]["upstream"]["public"], public);
            let calls = read(&attempt(&out).join("calls.json"));
            assert!(calls.contains(r#"\"x-region\": \"New Mexico\""#), "{calls}");
            assert!(!calls.contains("redacted: X-Region"), "{calls}");
        }
    }
}

/// Issue 24, item 28: a `file:///home/...` argument was recorded as the
/// machine wrote it, and a missing `cwd = "~/nonexistent-dir"` was reported
/// as "cannot start '.../python': No such file". The URL's path is folded
/// like any other path, and the missing folder is named as the profile
/// writes it.
#[test]
fn a_file_url_under_home_is_folded_and_a_missing_cwd_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let server = repo().join("tests/servers/reply_mcp.py");
    let profile = dir.path().join("url.toml");
    std::fs::write(
        &profile,
        format!(
            "name = \"url\"\n[upstream]\ntransport = \"stdio\"\ncommand = \"python3\"\nargs = [{:?}, \"file://{}/data\", \"--kg=file:{}/kg.ttl\"]\n",
            server.display().to_string(),
            home.display(),
            home.display()
        ),
    )
    .unwrap();
    let out = dir.path().join("runs");
    let o = run_one(&out, &profile, Some(&home));
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let condition: Value =
        serde_json::from_str(&read(&out.join("conditions/url-all-tools__kg-named.json"))).unwrap();
    let target = condition["settings"]["profile"]["target"].as_str().unwrap();
    assert!(
        target.ends_with(" file://~/data --kg=file:~/kg.ttl"),
        "{target}"
    );
    let home_text = home.to_string_lossy().into_owned();
    for (path, text) in files(&out) {
        assert!(
            !text.contains(&home_text),
            "{} names the home folder",
            path.display()
        );
    }

    let missing = dir.path().join("missing.toml");
    std::fs::write(
        &missing,
        format!(
            "name = \"missing\"\n[upstream]\ntransport = \"stdio\"\ncommand = \"python3\"\nargs = [{:?}]\ncwd = \"~/nonexistent-dir\"\n",
            server.display().to_string()
        ),
    )
    .unwrap();
    let o = run_one(&dir.path().join("runs-missing"), &missing, Some(&home));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o)
            .contains("the working folder '~/nonexistent-dir' (cwd in the profile) does not exist"),
        "{}",
        stderr(&o)
    );
    let o = okn()
        .args(["probe", "--profile"])
        .arg(&missing)
        .env("HOME", &home)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("'~/nonexistent-dir'"), "{}", stderr(&o));
}

/// The runner's environment of the tests of issue 24, item 27: credentials
/// of the agent hosts and others that a stdio server must not inherit, one
/// the profile passes on purpose, one it sets itself, one `run` names, and
/// ordinary variables. Each value is at least 8 characters long.
const RUNNER_ENV: [(&str, &str); 9] = [
    ("ANTHROPIC_API_KEY", "sk-ant-HOSTSECRET-998877"),
    ("CLAUDE_CODE_OAUTH_TOKEN", "oat-HOSTTOKEN-55443322"),
    ("AWS_SECRET_ACCESS_KEY", "aws-SECRET-1029384756"),
    ("vendorApiKey", "camel-KEY-5647382910"),
    ("VENDOR_ENDPOINT_ID", "named-CRED-6655443322"),
    ("GITHUB_TOKEN", "ghp-PASSED-7766554433"),
    ("PROFILE_PASSWORD", "runner-PASSWORD-1122334455"),
    ("DEFAULT_REGION", "New Mexico"),
    ("LANG", "C.UTF-8"),
];

/// The value the profile itself gives `PROFILE_PASSWORD` (the runner's own
/// is another).
const PROFILE_PASSWORD: &str = "profile-PASSWORD-5544332211";

/// The runner's credential values that must reach no file and no output.
const RUNNER_SECRETS: [&str; 7] = [
    "sk-ant-HOSTSECRET-998877",
    "oat-HOSTTOKEN-55443322",
    "aws-SECRET-1029384756",
    "camel-KEY-5647382910",
    "named-CRED-6655443322",
    "ghp-PASSED-7766554433",
    "runner-PASSWORD-1122334455",
];

/// A profile of the echo server printing and echoing its environment: it
/// sets `PROFILE_PASSWORD` itself and passes `GITHUB_TOKEN` through.
fn environ_profile(dir: &Path) -> PathBuf {
    let profile = dir.join("environ.toml");
    std::fs::write(
        &profile,
        format!(
            "name = \"environ\"\n[upstream]\ntransport = \"stdio\"\ncommand = {:?}\nargs = [{:?}, \"stdio\"]\nenv = {{ ECHO_ENVIRON = \"1\", PROFILE_PASSWORD = {PROFILE_PASSWORD:?} }}\npass_env = [\"GITHUB_TOKEN\"]\n",
            python().display().to_string(),
            echo_server().display().to_string(),
        ),
    )
    .unwrap();
    profile
}

/// `cmd` with [`RUNNER_ENV`] set, and `VENDOR_ENDPOINT_ID` named a
/// credential as `run --api-key-env` names one.
fn with_runner_env(cmd: &mut assert_cmd::Command) -> &mut assert_cmd::Command {
    for (name, value) in RUNNER_ENV {
        cmd.env(name, value);
    }
    cmd.env("OKN_BENCHMARK_CREDENTIAL_ENV", "VENDOR_ENDPOINT_ID")
}

/// Asserts what the server saw, from its `ENV NAME=VALUE` lines on stderr
/// (redacted where the value is a secret).
#[track_caller]
fn assert_server_saw(stderr_text: &str) {
    let seen: Vec<&str> = stderr_text
        .lines()
        .filter_map(|l| l.strip_prefix("ENV "))
        .collect();
    assert!(
        seen.len() > 3,
        "the server printed its environment: {stderr_text}"
    );
    let has = |name: &str| seen.iter().any(|l| l.starts_with(&format!("{name}=")));
    for withheld in [
        "ANTHROPIC_API_KEY",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "vendorApiKey",
        "VENDOR_ENDPOINT_ID",
    ] {
        assert!(
            !has(withheld),
            "{withheld} reached the server: {stderr_text}"
        );
    }
    for line in [
        "PROFILE_PASSWORD=[redacted: PROFILE_PASSWORD]",
        "GITHUB_TOKEN=[redacted: GITHUB_TOKEN]",
        "DEFAULT_REGION=New Mexico",
        "LANG=C.UTF-8",
    ] {
        assert!(seen.contains(&line), "{line}: {stderr_text}");
    }
    assert!(has("PATH"), "PATH reached the server: {stderr_text}");
}

/// Issue 24, item 27: with `ANTHROPIC_API_KEY` and
/// `CLAUDE_CODE_OAUTH_TOKEN` set for `run` (as the README tells claude
/// users to), a stdio server inherited them and printed them verbatim into
/// `upstream.stderr.log`. The server under test now inherits no variable
/// that holds credentials (by the host's name, by a word of the name,
/// camelCase too, or named by `OKN_BENCHMARK_CREDENTIAL_ENV`) but those
/// its profile sets (`env`, its value redacted) or passes (`pass_env`,
/// redacted too); `PATH`, `LANG` and `DEFAULT_REGION` still reach it; and
/// no file of the runs root holds any of the runner's values.
#[test]
fn the_runners_credentials_never_reach_the_server_or_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let profile = environ_profile(dir.path());
    let out = dir.path().join("runs");
    let mut cmd = okn();
    cmd.args(["run", "--corpus", "demo/benchmarks-single", "--limit", "1"])
        .args(["--tools", "all-tools", "--kg-hint", "tags"])
        .args(["--agent", "scripted:oracle", "--timeout", "60"])
        .arg("--profile")
        .arg(&profile)
        .arg("--out")
        .arg(&out);
    let o = with_runner_env(&mut cmd).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let attempt = attempt(&out);
    assert_server_saw(&read(&attempt.join("upstream.stderr.log")));
    // The server echoed its environment in its reply: the values it was
    // given are redacted there too.
    let calls = read(&attempt.join("calls.json"));
    assert!(calls.contains("[redacted: GITHUB_TOKEN]"), "{calls}");
    assert!(!calls.contains("ANTHROPIC_API_KEY"), "{calls}");
    let mut secrets = RUNNER_SECRETS.to_vec();
    secrets.push(PROFILE_PASSWORD);
    assert_nowhere(&out, &secrets);
    for text in [stdout(&o), stderr(&o)] {
        for secret in &secrets {
            assert!(!text.contains(secret), "{secret} in the output: {text}");
        }
    }
}

/// Issue 24, item 27: `probe` started the server with the runner's
/// credentials and showed its stderr, keys and all. The server gets none
/// of them, and probe's output holds none of the runner's values.
#[test]
fn probe_keeps_the_runners_credentials_from_the_server_and_its_output() {
    let dir = tempfile::tempdir().unwrap();
    let profile = environ_profile(dir.path());
    let mut cmd = okn();
    cmd.args(["probe", "--profile"]).arg(&profile);
    let o = with_runner_env(&mut cmd).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let shown = format!("{}{}", stdout(&o), stderr(&o));
    assert_server_saw(&stderr(&o));
    for secret in RUNNER_SECRETS.iter().chain([&PROFILE_PASSWORD]) {
        for form in forms(secret) {
            assert!(!shown.contains(&form), "{form} in probe's output: {shown}");
        }
    }
}
