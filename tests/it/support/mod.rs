//! The harness the integration tests share: the real binary, scratch work
//! folders, the tools `scripts/test` installs, the `build` fixture, and the
//! data kept outside the repository.

#![allow(dead_code)]

pub mod fixture;
pub mod ports;
pub mod shared;
pub mod test;

pub use ports::{
    closed_port, free_port, oxigraph_serve, serve_on_free_port, standin_model, standin_single,
};
pub use test::Test;

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The `okn-benchmark` binary under test, run in `dir`.
pub fn okn_in(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("okn-benchmark").expect("binary built");
    cmd.current_dir(dir);
    cmd.env_remove("XDG_CACHE_HOME");
    cmd
}

/// The binary run from the repository root.
pub fn okn() -> Command {
    okn_in(&repo())
}

/// Every file under `dir` (its path as found) with its bytes: what a
/// test compares before and after a command that must write nothing.
pub fn snapshot(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| (e.path().to_path_buf(), std::fs::read(e.path()).unwrap()))
        .collect()
}

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Writes `files` (relative path, contents) under a new temporary folder.
pub fn work_dir(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, contents) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }
    dir
}

/// `text` with every run of whitespace, line ends included, made one
/// space: terminal output compared whatever width it was wrapped at
/// (issue 26, section 3: terminal output fits 100 columns).
pub fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Stdout of a finished command as UTF-8.
pub fn stdout(output: &std::process::Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("UTF-8 stdout")
}

/// Stderr of a finished command as UTF-8.
pub fn stderr(output: &std::process::Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("UTF-8 stderr")
}

/// A real tool installed by `scripts/test` into `target/test-tools/venv`
/// (or named by `OKN_TEST_TOOLS`, or found on PATH). Panics with the fix when
/// it is missing: these tests must not pass by skipping.
pub fn tool(name: &str) -> PathBuf {
    let roots = [
        std::env::var_os("OKN_TEST_TOOLS").map(PathBuf::from),
        Some(repo().join("target/test-tools")),
    ];
    for root in roots.into_iter().flatten() {
        for sub in [
            "venv/bin",
            "okn-venv/bin",
            "sparql-venv/bin",
            "dc-venv/bin",
            "lint-venv/bin",
            "node_modules/.bin",
            "bin",
        ] {
            let candidate = root.join(sub).join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    if let Some(paths) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&paths) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    panic!(
        "the test tool '{name}' is not installed: run scripts/test, which installs it into target/test-tools"
    );
}

/// A child process killed when dropped (servers started by a test).
pub struct KillOnDrop(pub std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Processes whose command line mentions `text` (Linux /proc).
pub fn processes_mentioning(text: &str) -> usize {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .chars()
                .all(|c| c.is_ascii_digit())
        })
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains(text))
                .unwrap_or(false)
        })
        .count()
}

/// The demo KG server over streamable HTTP on a free port of 127.0.0.1,
/// with `extra` arguments (`--fault ...`), killed on drop; and its port.
pub fn kg_server_http(extra: &[&str]) -> (KillOnDrop, u16) {
    serve_on_free_port(|port| {
        let mut server = std::process::Command::new(env!("CARGO_BIN_EXE_okn-benchmark"));
        server
            .args([
                "kg-server",
                "--transport",
                "http",
                "--bind",
                &format!("127.0.0.1:{port}"),
            ])
            .args(extra)
            .arg("--data")
            .arg(repo().join("demo/kg"))
            .stderr(std::process::Stdio::null());
        server
    })
}

/// Rewrites the attempt in `attempt` as one whose last `submit_csv`
/// submitted `csv`: its `calls.json` argument, `metrics.json`'s
/// `submitted_rows` and `answer.csv`, together.
pub fn submitted_instead(attempt: &Path, csv: &str) {
    let calls_path = attempt.join("calls.json");
    let mut calls: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&calls_path).unwrap()).unwrap();
    let last = calls["calls"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .rev()
        .find(|c| c["tool"] == "submit_csv" && c["ok"] == true)
        .expect("a submit_csv call");
    last["arguments"]["csv"] = csv.into();
    std::fs::write(&calls_path, serde_json::to_vec_pretty(&calls).unwrap()).unwrap();
    let metrics_path = attempt.join("metrics.json");
    let mut metrics: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&metrics_path).unwrap()).unwrap();
    metrics["submitted_rows"] = (csv.lines().count() - 1).into();
    std::fs::write(&metrics_path, serde_json::to_vec_pretty(&metrics).unwrap()).unwrap();
    std::fs::write(attempt.join("answer.csv"), csv).unwrap();
}
