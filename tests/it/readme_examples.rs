//! Every example in README.md and docs/*.md runs as written, in order,
//! from a fresh copy of the repository, with its exit code checked (issue
//! 26, section 2: "every README example runs as written").
//!
//! The examples are the fenced `sh` blocks (a ```` ```bash ```` fence holds
//! the contents of a script file, not commands to type, and is not run).
//! The repository's tracked files (`git ls-files`) are copied into a
//! temporary folder, and each block runs there as one `bash` script under
//! `set -euo pipefail`, README.md's blocks first, then each of docs/*.md by
//! name, so a later example reads what an earlier one wrote. The binary
//! under test stands for `okn-benchmark` (first on `PATH`) and for `cargo
//! run --release --`.
//!
//! How a block runs is said by an HTML comment on the line before its
//! fence (invisible where the Markdown is rendered):
//!
//! - none: every command runs and must exit 0;
//! - `<!-- example: standin -->`: it needs a model: the real `claude` CLI
//!   (installed by `scripts/test`) is on `PATH`, pointed at `okn-benchmark
//!   standin-model` playing the answer keys of the block's first
//!   `--corpus` (`tests/it/claude.rs` does the same);
//! - `<!-- example: skip: REASON -->`: not run, and REASON is printed;
//!   `<!-- examples: skip: REASON -->` on a line of its own anywhere in a
//!   document skips all its blocks (docs/PERFORMANCE.md: measurements).
//!
//! A command whose comment starts `# exit N` (or `# exits N`) must exit N.
//! Commands that need the network, install something, build with cargo or
//! serve until stopped are not run either, each named with its reason
//! ([`SKIPPED_COMMANDS`]).

use std::io::Write as _;
use std::path::Path;
use std::process::Command;

use crate::support::{KillOnDrop, repo, tool};

const BIN: &str = env!("CARGO_BIN_EXE_okn-benchmark");

/// Commands never run here, by how they start, with why.
const SKIPPED_COMMANDS: [(&str, &str); 12] = [
    (
        "git clone",
        "needs the network; the fresh copy this test makes stands for the clone",
    ),
    (
        "scripts/test",
        "installs the test tools from the package registries and runs this very suite",
    ),
    (
        "cargo ",
        "a build of its own (minutes); the binary `cargo test` built stands for it",
    ),
    ("gh ", "drives GitHub (network, a login)"),
    ("kubectl ", "needs a Kubernetes cluster"),
    ("docker ", "needs a Docker daemon and a registry"),
    ("sbatch ", "needs a Slurm cluster"),
    ("uv ", "installs from PyPI (network)"),
    ("uvx ", "installs from PyPI (network)"),
    ("pipx ", "installs from PyPI (network)"),
    ("pip ", "installs from PyPI (network)"),
    (
        "okn-benchmark kg-server --transport http",
        "serves until stopped (tests/it/http_endpoint.rs runs it)",
    ),
];

/// How one block is run, from the marker comment before its fence.
#[derive(Debug, Clone, PartialEq)]
enum Mode {
    Run,
    Standin,
    Skip(String),
}

/// One fenced `sh` block.
#[derive(Debug)]
struct Block {
    /// The Markdown file, relative to the repository.
    file: String,
    /// 1-based line of the block's first command (the line after the fence).
    line: usize,
    mode: Mode,
    /// The block's lines, as written.
    lines: Vec<String>,
}

/// The `sh` blocks of `text` (the file `file`), in order.
fn blocks(file: &str, text: &str) -> Vec<Block> {
    let mut found = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let whole_file = lines.iter().find_map(|l| {
        l.trim()
            .strip_prefix("<!-- examples: skip:")
            .and_then(|m| m.strip_suffix("-->"))
            .map(|reason| Mode::Skip(reason.trim().to_string()))
    });
    let mut i = 0;
    while i < lines.len() {
        let fence = lines[i].trim_start();
        let Some(info) = fence.strip_prefix("```") else {
            i += 1;
            continue;
        };
        let start = i;
        let mut body = Vec::new();
        i += 1;
        while i < lines.len() && !lines[i].trim_start().starts_with("```") {
            body.push(lines[i].to_string());
            i += 1;
        }
        i += 1;
        if info.trim() != "sh" {
            continue;
        }
        let marker = start.checked_sub(1).map(|j| lines[j].trim()).unwrap_or("");
        let mode = match marker
            .strip_prefix("<!-- example:")
            .and_then(|m| m.strip_suffix("-->"))
            .map(str::trim)
        {
            None => Mode::Run,
            Some("standin") => Mode::Standin,
            Some(other) => match other.strip_prefix("skip:") {
                Some(reason) => Mode::Skip(reason.trim().to_string()),
                None => panic!(
                    "{file}:{start}: the marker '{marker}' is not 'example: standin' or \
                     'example: skip: REASON'"
                ),
            },
        };
        found.push(Block {
            file: file.to_string(),
            line: start + 2,
            mode: whole_file.clone().unwrap_or(mode),
            lines: body,
        });
    }
    found
}

/// Where a shell comment starts in `line` (a `#` at the start or after
/// a blank, outside quotes), if it has one.
fn comment_start(line: &str) -> Option<usize> {
    let (mut single, mut double, mut previous) = (false, false, ' ');
    for (at, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && previous.is_whitespace() => return Some(at),
            _ => {}
        }
        previous = c;
    }
    None
}

/// The exit code a comment asks for (`# exit 1: ...`), if any.
fn expected_exit(comment: &str) -> Option<i32> {
    let words = comment.trim_start_matches('#').trim_start();
    let rest = words
        .strip_prefix("exits ")
        .or_else(|| words.strip_prefix("exit "))?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// `block` as a bash script, one line per line of the block so that bash's
/// line numbers name the Markdown's, and the skipped commands with their
/// reasons.
fn script(block: &Block) -> (String, Vec<String>) {
    let mut skipped = Vec::new();
    // One header line: the block's first line is the script's second.
    let mut out = vec![format!(
        "set -euo pipefail; trap 'echo \"{file}:$((LINENO + {offset})): exit $?: $BASH_COMMAND\" >&2' ERR",
        file = block.file,
        offset = block.line - 2,
    )];
    let mut i = 0;
    while i < block.lines.len() {
        // A logical command: its line and the ones a trailing `\` joins.
        let mut end = i;
        while end + 1 < block.lines.len() && block.lines[end].trim_end().ends_with('\\') {
            end += 1;
        }
        let first = as_installed(block.lines[i].trim_start());
        if let Some((_, why)) = SKIPPED_COMMANDS.iter().find(|(p, _)| first.starts_with(p)) {
            skipped.push(format!(
                "{}:{}: `{}` not run: {why}",
                block.file,
                block.line + i,
                first.trim_end_matches('\\').trim()
            ));
            out.extend((i..=end).map(|_| ":".to_string()));
            i = end + 1;
            continue;
        }
        let mut command: Vec<String> = (i..=end).map(|j| as_installed(&block.lines[j])).collect();
        let last = command.last_mut().unwrap();
        if let Some(at) = comment_start(last)
            && let Some(code) = expected_exit(&last[at..])
            && !(end == i && last[..at].trim().is_empty())
        {
            let (body, comment) = last.split_at(at);
            *last = format!(
                "{body}; then rc=0; else rc=$?; fi; [ $rc = {code} ] || {{ echo \"{}:{}: exit $rc where the example says {code}\" >&2; exit 1; }} {comment}",
                block.file,
                block.line + end,
            );
            command[0] = format!("if {}", command[0]);
        }
        out.extend(command);
        i = end + 1;
    }
    (out.join("\n") + "\n", skipped)
}

/// Copies the repository's tracked files (as they are in the work tree)
/// into `to`: what a fresh clone holds (issue 26, section 2).
/// Outside a git checkout (an unpacked archive), every file but those
/// under `target/`, `scratch/` and hidden folders.
fn copy_tracked_files(to: &Path) {
    let listed = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(repo())
        .output()
        .ok()
        .filter(|o| o.status.success());
    let names: Vec<String> = match listed {
        Some(listed) => listed
            .stdout
            .split(|b| *b == 0)
            .filter(|n| !n.is_empty())
            .map(|n| String::from_utf8(n.to_vec()).expect("UTF-8 path"))
            .collect(),
        None => walkdir::WalkDir::new(repo())
            .into_iter()
            .filter_entry(|e| {
                let name = e.file_name().to_string_lossy();
                e.depth() == 0
                    || !(name.starts_with('.') && e.file_type().is_dir()
                        || e.depth() == 1 && (name == "target" || name == "scratch"))
            })
            .map(|e| e.unwrap())
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                let relative = e.path().strip_prefix(repo()).unwrap();
                relative.to_string_lossy().into_owned()
            })
            .collect(),
    };
    for name in &names {
        let from = repo().join(name);
        // A file deleted in the work tree and not yet committed.
        if !from.exists() {
            continue;
        }
        let target = to.join(name);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(&from, &target).unwrap();
    }
}

/// The documents whose examples run, in order: README.md, then docs/*.md.
fn documents() -> Vec<String> {
    let mut docs: Vec<String> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    docs.insert(0, "README.md".to_string());
    docs
}

/// The first `--corpus` a block names (the stand-in plays its keys).
fn corpus_of(block: &Block) -> String {
    let text = block.lines.join(" ");
    let mut words = text.split_whitespace();
    while let Some(word) = words.next() {
        if word == "--corpus" {
            return words.next().unwrap_or_default().to_string();
        }
    }
    "demo/benchmarks-single".to_string()
}

/// Starts the stand-in model for `block` in `dir`; returns it and its URL.
fn standin(dir: &Path, block: &Block) -> (KillOnDrop, String) {
    let corpus = corpus_of(block);
    let args = ["--corpus", corpus.as_str(), "--strategy", "oracle"];
    crate::support::standin_model(dir, &args, None)
}

/// Runs `block` in `dir` with `bin` first on `PATH`; panics with its
/// output when a command exits otherwise than the example says.
fn run_block(block: &Block, dir: &Path, bin: &Path, home: &Path) -> Vec<String> {
    let (text, skipped) = script(block);
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin.to_path_buf()];
    paths.extend(std::env::split_paths(&path));
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(&text)
        .current_dir(dir)
        .env("PATH", std::env::join_paths(paths).unwrap())
        .env("HOME", home)
        .env_remove("XDG_CACHE_HOME")
        .env("OKN_BENCHMARK_CACHE_DIR", home.join("cache"));
    let _server = if block.mode == Mode::Standin {
        let (server, url) = standin(dir, block);
        cmd.env("ANTHROPIC_BASE_URL", url)
            .env("ANTHROPIC_API_KEY", "dummy")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1");
        Some(server)
    } else {
        None
    };
    let output = cmd.output().expect("bash runs");
    assert!(
        output.status.success(),
        "the example at {}:{} failed:\n{}\n--- stdout\n{}\n--- stderr\n{}",
        block.file,
        block.line,
        block.lines.join("\n"),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    skipped
}

/// Prints `text` as a note at once, straight to the process's stderr
/// (`eprintln!` in a test is captured and shown only when it fails).
fn note(text: &str) {
    let _ = writeln!(std::io::stderr(), "note: {text}");
}

/// Issue 26, section 2: every `sh` example of README.md and docs/*.md runs
/// from a fresh copy of the repository, in order, and exits as it says;
/// what is not run is named with why.
#[test]
fn every_documented_example_runs_as_written_from_a_fresh_copy() {
    let work = tempfile::tempdir().unwrap();
    let copy = work.path().join("okn-benchmark");
    copy_tracked_files(&copy);
    let bin = work.path().join("bin");
    let home = work.path().join("home");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::os::unix::fs::symlink(BIN, bin.join("okn-benchmark")).unwrap();
    let mut ran = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(repo().join(&doc)).unwrap();
        for block in blocks(&doc, &text) {
            if let Mode::Skip(reason) = &block.mode {
                note(&format!(
                    "{}:{}: block not run: {reason}",
                    block.file, block.line
                ));
                continue;
            }
            if block.mode == Mode::Standin && !bin.join("claude").exists() {
                std::os::unix::fs::symlink(tool("claude"), bin.join("claude")).unwrap();
            }
            let started = std::time::Instant::now();
            run_block(&block, &copy, &bin, &home)
                .iter()
                .for_each(|n| note(n));
            note(&format!(
                "{}:{}: ran in {:.1} s",
                block.file,
                block.line,
                started.elapsed().as_secs_f64()
            ));
            ran += 1;
        }
    }
    assert!(ran >= 10, "only {ran} example blocks ran");
}

/// The markers and exit comments are read as documented: a block's mode,
/// the skipped commands, and `# exit N` turned into a check of N.
#[test]
fn example_blocks_are_read_with_their_markers_and_exit_codes() {
    let text = "intro\n<!-- example: skip: needs a cluster -->\n```sh\nsbatch x\n```\n\
                ```sh\nokn-benchmark a \\\n  --b   # exit 1: it fails\ngit clone x\n```\n\
                ```bash\nnot an example\n```\n";
    let found = blocks("T.md", text);
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].mode, Mode::Skip("needs a cluster".to_string()));
    assert_eq!(found[1].mode, Mode::Run);
    assert_eq!(found[1].line, 7);
    let (script, skipped) = script(&found[1]);
    let lines: Vec<&str> = script.lines().collect();
    assert_eq!(lines.len(), 4, "{script}");
    assert_eq!(lines[1], "if okn-benchmark a \\");
    assert!(
        lines[2].starts_with("  --b   ; then rc=0; else rc=$?; fi; [ $rc = 1 ]"),
        "{}",
        lines[2]
    );
    assert_eq!(lines[3], ":");
    assert_eq!(skipped.len(), 1);
    assert!(skipped[0].starts_with("T.md:9: `git clone x` not run: needs the network"));
}

/// `line` with the README's build-and-run spellings (`cargo run --`,
/// `cargo run --release --`) made the installed binary's name, which the
/// examples run.
fn as_installed(line: &str) -> String {
    line.replace("cargo run --release --", "okn-benchmark")
        .replace("cargo run --", "okn-benchmark")
}
