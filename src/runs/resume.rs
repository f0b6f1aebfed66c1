//! What `run --resume` may reuse, and the refusal to delete what it may
//! not (`docs/FORMAT.md`, "`episode.json`"; issue 24, items 10 and 11).
//!
//! A finished attempt (its `episode.json`, or, for an attempt its
//! `result.json` records as judged from an episode recovered from
//! `agent.json`, that episode, which a reuse records as its `episode.json`:
//! issue 24, item 15) is reused when this run would play it the same way: the
//! same prompt, the same command line (paths aside, [`without_paths`]),
//! the same server ([`ServerTarget`], recorded in `episode.json` from
//! runs-root format 3 on) and, for an attempt that timed out, the same
//! `--agent-timeout`. Any other finished attempt is a paid episode that
//! only `--force` may delete: `run` refuses before anything is played,
//! naming each question and why ([`refuse_replacing`]), and never deletes
//! one while playing ([`Reuse::Keep`]).

use std::path::Path;

use super::identity::{ServerTarget, upstream_difference};
use super::prompt::excerpts;
use super::recorded::{AttemptFiles, judged_from_recovered};
use super::records::{AttemptResult, Episode, QuestionResult};
use crate::error::{Error, Result};
use crate::layout::{COMMAND_FILE, EPISODE_FILE, PROMPT_FILE, RESULT_FILE};

/// What this run would issue for one attempt: what a recorded attempt
/// must match to be reused.
pub struct Expected<'a> {
    /// The prompt, byte for byte.
    pub prompt: &'a str,
    /// The command line as `command.txt` would record it.
    pub command: &'a str,
    /// The file names of the programs a command line may name by path
    /// ([`without_paths`]).
    pub programs: &'a [String],
    /// `--agent-timeout`, seconds.
    pub agent_timeout_s: u64,
    /// What the server under test resolves to.
    pub upstream: Option<&'a ServerTarget>,
}

/// What to do with an attempt's folder.
#[derive(Debug, Clone, PartialEq)]
pub enum Reuse {
    /// Nothing finished is recorded there: play it (the folder, if any, is
    /// what an interrupted episode left).
    Play,
    /// A finished attempt this run would play the same way: reuse it,
    /// recording the episode given as its `episode.json` (one recovered
    /// from `agent.json` for an attempt written before that file existed,
    /// [`AttemptFiles::recovered_record`]; `None` when it has its own).
    Reuse(Option<Box<Episode>>),
    /// A finished attempt this run would play otherwise, and why: keep it
    /// (only `--force` deletes it).
    Keep(String),
}

/// The text of the recorded file `name` in `dir`, read only when it is a
/// regular file (a link or a FIFO in a runs root is damage, and a FIFO
/// would never end the read).
///
/// Errors: why it cannot be read, as a reason naming the file.
fn read_recorded(dir: &Path, name: &str) -> std::result::Result<String, String> {
    let path = dir.join(name);
    match crate::fsutil::read_recorded(&path) {
        Ok(Some(bytes)) => {
            String::from_utf8(bytes).map_err(|_| format!("its {name} is not UTF-8 text"))
        }
        Ok(None) => Err(format!("its {name} is missing")),
        Err(e) => Err(format!("its {name} cannot be read ({e})")),
    }
}

/// What the question's `result.json` (beside the attempt folder `dir`)
/// records of attempt `attempt`: `Ok(None)` when there is no
/// `result.json` or it does not list the attempt.
///
/// Errors: a `result.json` that is there and cannot be read or parsed, as
/// the reason.
fn recorded_attempt(
    dir: &Path,
    attempt: u32,
) -> std::result::Result<Option<AttemptResult>, String> {
    let Some(question) = dir.parent() else {
        return Ok(None);
    };
    let path = question.join(RESULT_FILE);
    match crate::fsutil::read_recorded_json::<QuestionResult>(&path) {
        Ok(None) => Ok(None),
        Ok(Some(result)) => Ok(result.attempts.into_iter().find(|a| a.attempt == attempt)),
        Err(e) => Err(format!("its question's {RESULT_FILE} cannot be read ({e})")),
    }
}

/// The finished episode recorded in `dir` (its `episode.json`), if any.
/// No episode is made up from `agent.json`: the runner writes
/// `episode.json` when an attempt ends, so an attempt without one is one
/// killed mid-episode (played again), unless the question's `result.json`
/// records it: then it was lost (issue 24, item 4), or, when that record
/// says it was judged from an episode recovered from `agent.json`
/// ([`judged_from_recovered`]), it was written before `episode.json`
/// existed, and that episode is recovered again
/// ([`AttemptFiles::recover`]; issue 24, item 15).
///
/// Errors, as the reason: an `episode.json` that is there and cannot be
/// read (a recorded attempt, damaged: never taken for an unfinished one),
/// or records another attempt than its folder's; one missing from an
/// attempt `result.json` records, unless recovered; an `agent.json` that
/// cannot give a recovered episode's wall time.
fn finished_episode(dir: &Path, attempt: u32) -> std::result::Result<Option<Episode>, String> {
    match std::fs::symlink_metadata(dir.join(EPISODE_FILE)) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return match recorded_attempt(dir, attempt) {
                Ok(None) => Ok(None),
                Ok(Some(recorded)) if judged_from_recovered(&recorded) => {
                    let mut files = AttemptFiles::read(dir, attempt)
                        .map_err(|e| format!("a recorded file cannot be used ({e})"))?;
                    files
                        .recover(Some(&recorded))
                        .map_err(|e| format!("its episode cannot be recovered ({e})"))?;
                    Ok(files.episode)
                }
                Ok(Some(_)) => Err(format!(
                    "its {EPISODE_FILE} is missing, though {RESULT_FILE} records the attempt as \
                     finished and does not say it was judged from an episode recovered from \
                     agent.json: it was lost (restore it from version control)"
                )),
                Err(why) => Err(why),
            };
        }
        Err(e) => return Err(format!("its {EPISODE_FILE} cannot be read ({e})")),
    }
    let text = read_recorded(dir, EPISODE_FILE)?;
    let episode: Episode = serde_json::from_str(&text)
        .map_err(|e| format!("its {EPISODE_FILE} cannot be read ({e})"))?;
    if episode.attempt != attempt {
        return Err(format!(
            "its {EPISODE_FILE} records attempt {}, but sits in attempt-{attempt}: it was \
             moved or edited (restore it from version control)",
            episode.attempt
        ));
    }
    Ok(Some(episode))
}

/// Whether the attempt recorded in `dir` is reused, played, or kept. One
/// reused is checked as `rescore` and `report` check a recorded attempt
/// ([`AttemptFiles::read_checked`]: `answer.csv` against `calls.json`,
/// the tallies, `episode.json` against `agent.json`), so a resume never
/// takes in a damaged or edited one.
pub fn judge_attempt(dir: &Path, attempt: u32, expected: &Expected<'_>) -> Reuse {
    let episode = match finished_episode(dir, attempt) {
        Ok(None) => return Reuse::Play,
        Ok(Some(episode)) => episode,
        Err(why) => return Reuse::Keep(why),
    };
    match reusable(dir, attempt, &episode, expected) {
        Ok(files) => Reuse::Reuse(
            files
                .recovered_record()
                .map(|(_, episode)| Box::new(episode.clone())),
        ),
        Err(why) => Reuse::Keep(why),
    }
}

/// The files of the finished attempt in `dir`, whose `episode` was read,
/// when this run may reuse it ([`judge_attempt`]).
///
/// Errors: why it cannot be reused.
fn reusable(
    dir: &Path,
    attempt: u32,
    episode: &Episode,
    expected: &Expected<'_>,
) -> std::result::Result<AttemptFiles, String> {
    let recorded = |file: &str| read_recorded(dir, file);
    let prompt = recorded(PROMPT_FILE)?;
    if prompt != expected.prompt {
        let (old, new) = excerpts(&prompt, expected.prompt);
        return Err(format!("its prompt changed (\"{old}\" is now \"{new}\")"));
    }
    if let (Some(old), Some(new)) = (&episode.upstream, expected.upstream)
        && let Some((member, was, is)) = upstream_difference(old, new)
    {
        return Err(format!(
            "it was played against another server ({member}: {was} -> {is})"
        ));
    }
    let command = recorded(COMMAND_FILE)?;
    let (old, new) = (
        without_paths(&command, expected.programs),
        without_paths(expected.command, expected.programs),
    );
    if old != new {
        let (old, new) = excerpts(&old, &new);
        return Err(format!(
            "its command line differs from this run's (\"{old}\" is now \"{new}\")"
        ));
    }
    if episode.timed_out && episode.agent_timeout_s != Some(expected.agent_timeout_s) {
        return Err(format!(
            "it timed out under --agent-timeout {}, and this run has {} (--agent-timeout {} \
             reuses it)",
            episode
                .agent_timeout_s
                .map_or_else(|| "(not recorded)".to_string(), |s| s.to_string()),
            expected.agent_timeout_s,
            episode
                .agent_timeout_s
                .map_or_else(|| "N".to_string(), |s| s.to_string()),
        ));
    }
    // A result.json that cannot be read is rewritten once the question is
    // played: its copy of the attempt is then not compared.
    let listed = recorded_attempt(dir, attempt).ok().flatten();
    AttemptFiles::read_checked(dir, attempt, listed.as_ref())
        .map_err(|e| format!("a recorded file cannot be used ({e})"))
}

/// One finished attempt `run --resume` would have to delete to play.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// The question id.
    pub question: String,
    /// The attempt number.
    pub attempt: u32,
    /// Why it cannot be reused ([`Reuse::Keep`]).
    pub why: String,
}

/// Refuses a resumed run of condition `name` that would delete the
/// finished attempts in `kept`, naming each question (its attempts grouped
/// when they differ for the same reason) and the two ways on: `--force`,
/// which replaces the condition, or another runs root (`--out`).
///
/// Errors: [`Error::Usage`] when `kept` is not empty.
pub fn refuse_replacing(name: &str, kept: &[Kept]) -> Result<()> {
    if kept.is_empty() {
        return Ok(());
    }
    let mut lines: Vec<(String, Vec<u32>, String)> = Vec::new();
    for k in kept {
        match lines
            .iter_mut()
            .find(|(q, _, why)| *q == k.question && *why == k.why)
        {
            Some((_, attempts, _)) => attempts.push(k.attempt),
            None => lines.push((k.question.clone(), vec![k.attempt], k.why.clone())),
        }
    }
    let lines: Vec<String> = lines
        .into_iter()
        .map(|(question, attempts, why)| {
            let numbers: Vec<String> = attempts.iter().map(u32::to_string).collect();
            format!(
                "  {question} (attempt{} {}): {why}",
                crate::format::plural(attempts.len()),
                numbers.join(", ")
            )
        })
        .collect();
    Err(Error::Usage(format!(
        "--resume would delete {} recorded attempt{} of '{name}' to play {} again, and nothing \
         recorded is deleted without --force:\n{}\nRun again with --force to replace the \
         condition (every attempt of it is played again), or record this run into a new runs \
         root with another --out.",
        kept.len(),
        crate::format::plural(kept.len()),
        if kept.len() == 1 { "it" } else { "them" },
        lines.join("\n")
    )))
}

/// Where a path may begin in a command line: at its start, after a space,
/// a quote or `=` (a URL's `//` follows `:`, so it is never a path).
pub fn path_boundary(previous: Option<char>) -> bool {
    previous.is_none_or(|p| matches!(p, ' ' | '\'' | '"' | '='))
}

/// `line` with each path in it replaced by what `f` makes of it. A path
/// begins at a [`path_boundary`] with `/`, `./`, `../`, or is a lone `.`,
/// and runs to the next space, quote, `,`, `]`, `}`, backslash or line end.
pub fn map_paths(line: &str, f: &mut dyn FnMut(&str) -> String) -> String {
    let ends = |c: char| matches!(c, ' ' | '\'' | '"' | ',' | ']' | '}' | '\n' | '\\');
    let mut out = String::with_capacity(line.len());
    let mut previous: Option<char> = None;
    let mut rest = line;
    while let Some(c) = rest.chars().next() {
        if path_boundary(previous) {
            let token_len = rest.find(ends).unwrap_or(rest.len());
            let token = &rest[..token_len];
            if token.starts_with('/')
                || token.starts_with("./")
                || token.starts_with("../")
                || token == "."
            {
                out.push_str(&f(token));
                previous = token.chars().next_back();
                rest = &rest[token_len..];
                continue;
            }
        }
        out.push(c);
        previous = Some(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// `line` (a recorded `command.txt`) with every path written as `<path>`:
/// the binary, the corpus and the attempt folder move with a checkout or a
/// copied runs root, and a resumed attempt must still be reused (else
/// every attempt of a copied root ran again), whether its paths were
/// recorded absolute (before they were relative) or relative. What the
/// paths hid of the server under test is compared apart ([`ServerTarget`]:
/// the profile path names only a file, not the server it starts).
/// A path to one of the `programs` (by file name) is written as the bare
/// name, as a program found on PATH is recorded.
pub fn without_paths(line: &str, programs: &[String]) -> String {
    map_paths(line, &mut |token| {
        let name = token.rsplit('/').next().unwrap_or(token);
        if programs.iter().any(|p| p == name) {
            name.to_string()
        } else {
            "<path>".to_string()
        }
    })
}
