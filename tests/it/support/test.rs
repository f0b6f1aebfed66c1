//! A builder for one run of the real `okn-benchmark` binary and what it
//! must print, in the style of just's `tests/test.rs`:
//!
//! ```ignore
//! Test::new()
//!     .write("ref.csv", "a\n1\n")
//!     .args(["score", "--reference", "ref.csv", "--answer", "ans.csv"])
//!     .stderr("error: ans.csv: cannot read: no such file or folder\n")
//!     .status(2)
//!     .run();
//! ```
//!
//! A run happens in a fresh temporary folder (or the one given to
//! [`Test::with_tempdir`]); files are written there first. Unless told,
//! the exit status must be 0; stdout and stderr are checked only where an
//! expectation is given, exactly or as fragments that must appear. A
//! mismatch fails the test at the caller's line with a line diff of what
//! was expected against what was printed.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use similar::TextDiff;

/// What a stream must hold.
enum Expected {
    /// Exactly this text.
    Exact(String),
    /// Each of these fragments, somewhere.
    Contains(Vec<String>),
}

/// One run of the binary: its input, and what it must print and return.
#[must_use = "a Test does nothing until .run()"]
pub struct Test {
    tempdir: tempfile::TempDir,
    current_dir: PathBuf,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    stdin: Option<Vec<u8>>,
    stdout: Option<Expected>,
    stderr: Option<Expected>,
    status: i32,
}

/// What a finished run printed, and the folder it ran in (kept alive for
/// further checks or another [`Test::with_tempdir`]).
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    pub status: i32,
    pub tempdir: tempfile::TempDir,
}

impl Output {
    /// The temporary folder the run used.
    pub fn path(&self) -> &Path {
        self.tempdir.path()
    }

    /// Stdout parsed as one JSON value.
    #[track_caller]
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }
}

impl Test {
    /// A run in a new, empty temporary folder.
    pub fn new() -> Test {
        Test::with_tempdir(tempfile::tempdir().expect("temp dir"))
    }

    /// A run in `tempdir` (an earlier run's [`Output::tempdir`]).
    pub fn with_tempdir(tempdir: tempfile::TempDir) -> Test {
        Test {
            current_dir: tempdir.path().to_path_buf(),
            tempdir,
            args: Vec::new(),
            env: Vec::new(),
            stdin: None,
            stdout: None,
            stderr: None,
            status: 0,
        }
    }

    /// A run from the repository root (its demo stack, profiles and
    /// `okn-benchmark.toml`), with a temporary folder still made for
    /// outputs.
    pub fn in_repo() -> Test {
        Test::new().current_dir(super::repo())
    }

    /// The folder to run in: relative to the temporary folder, or absolute.
    pub fn current_dir(mut self, path: impl AsRef<Path>) -> Test {
        self.current_dir = self.tempdir.path().join(path);
        self
    }

    /// Writes `contents` to `path` under the temporary folder (parent
    /// folders made) before the run.
    pub fn write(self, path: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> Test {
        let path = self.tempdir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, contents).unwrap();
        self
    }

    pub fn arg(mut self, arg: impl Into<OsString>) -> Test {
        self.args.push(arg.into());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Test
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Test {
        self.env.push((key.into(), value.into()));
        self
    }

    pub fn stdin(mut self, input: impl Into<Vec<u8>>) -> Test {
        self.stdin = Some(input.into());
        self
    }

    /// Stdout must be exactly `text`.
    pub fn stdout(mut self, text: impl Into<String>) -> Test {
        self.stdout = Some(Expected::Exact(text.into()));
        self
    }

    /// Stdout must contain `fragment` (and any other fragments given).
    pub fn stdout_contains(mut self, fragment: impl Into<String>) -> Test {
        self.stdout = Some(contains(self.stdout.take(), fragment.into()));
        self
    }

    /// Stderr must be exactly `text`.
    pub fn stderr(mut self, text: impl Into<String>) -> Test {
        self.stderr = Some(Expected::Exact(text.into()));
        self
    }

    /// Stderr must contain `fragment` (and any other fragments given).
    pub fn stderr_contains(mut self, fragment: impl Into<String>) -> Test {
        self.stderr = Some(contains(self.stderr.take(), fragment.into()));
        self
    }

    /// The exit status the run must end with (0 unless set).
    pub fn status(mut self, code: i32) -> Test {
        self.status = code;
        self
    }

    /// Runs the binary and checks every expectation; panics at the
    /// caller's line with what differs.
    #[track_caller]
    pub fn run(self) -> Output {
        let mut command = Command::new(env!("CARGO_BIN_EXE_okn-benchmark"));
        command
            .args(&self.args)
            .current_dir(&self.current_dir)
            .env_remove("XDG_CACHE_HOME")
            .stdin(if self.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, value) in &self.env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("the okn-benchmark binary runs");
        // Fed from a thread, so a command that prints before it has read
        // all its input cannot block on a full pipe.
        let feeder = self.stdin.clone().map(|input| {
            let mut pipe = child.stdin.take().unwrap();
            // A command that exits without reading its input closes the pipe.
            std::thread::spawn(move || drop(pipe.write_all(&input)))
        });
        let output = child.wait_with_output().unwrap();
        if let Some(feeder) = feeder {
            feeder.join().unwrap();
        }
        let stdout = String::from_utf8(output.stdout).expect("UTF-8 stdout");
        let stderr = String::from_utf8(output.stderr).expect("UTF-8 stderr");
        // A signal leaves no exit code: -1 then, which no test expects.
        let status = output.status.code().unwrap_or(-1);

        let command_line = self
            .args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ");
        let mut failures = Vec::new();
        if status != self.status {
            failures.push(format!("exit status {status}, expected {}", self.status));
        }
        if let Some(expected) = &self.stdout {
            failures.extend(mismatch("stdout", expected, &stdout));
        }
        if let Some(expected) = &self.stderr {
            failures.extend(mismatch("stderr", expected, &stderr));
        }
        if !failures.is_empty() {
            panic!(
                "okn-benchmark {command_line}\n(in {})\n\n{}\n\n--- stdout ---\n{stdout}--- stderr ---\n{stderr}",
                self.current_dir.display(),
                failures.join("\n\n"),
            );
        }
        Output {
            stdout,
            stderr,
            status,
            tempdir: self.tempdir,
        }
    }
}

fn contains(previous: Option<Expected>, fragment: String) -> Expected {
    match previous {
        Some(Expected::Contains(mut fragments)) => {
            fragments.push(fragment);
            Expected::Contains(fragments)
        }
        _ => Expected::Contains(vec![fragment]),
    }
}

/// What is wrong with `actual` against `expected`, if anything.
fn mismatch(stream: &str, expected: &Expected, actual: &str) -> Option<String> {
    match expected {
        Expected::Exact(want) if want != actual => Some(format!(
            "{stream} differs (- expected, + actual):\n{}",
            diff(want, actual)
        )),
        Expected::Exact(_) => None,
        Expected::Contains(fragments) => {
            let absent: Vec<String> = fragments
                .iter()
                .filter(|f| !actual.contains(f.as_str()))
                .map(|f| format!("  {f:?}"))
                .collect();
            (!absent.is_empty()).then(|| format!("{stream} lacks:\n{}", absent.join("\n")))
        }
    }
}

/// A unified line diff of `want` against `have`.
pub fn diff(want: &str, have: &str) -> String {
    TextDiff::from_lines(want, have)
        .unified_diff()
        .context_radius(3)
        .header("expected", "actual")
        .to_string()
}
