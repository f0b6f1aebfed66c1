//! One run per condition at a time: `run` holds `conditions/NAME.lock`
//! while it records (`docs/FORMAT.md`, "conditions/NAME.lock"). Two runs of
//! one condition into one root would write the same attempt folders; the
//! second is refused before it touches anything, naming the first.
//!
//! The lock file holds the holder's process id, host, boot and process
//! start, so a lock left by a killed run is told from a live one: on the
//! same host, a holder that no longer runs (or a process id now reused by
//! another process, or a lock from before the last reboot) is stale, and
//! the lock is taken over, saying so.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::layout::RunsRoot;

/// What a lock file records of the run holding it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// Its process id.
    pub pid: u32,
    /// The host it runs on (`/proc/sys/kernel/hostname`), or `unknown`.
    pub host: String,
    /// The host's boot (`/proc/sys/kernel/random/boot_id`), when known.
    pub boot_id: Option<String>,
    /// The process's start, in clock ticks since boot (`/proc/PID/stat`,
    /// field 22), when known: a reused process id starts at another time.
    pub start_ticks: Option<u64>,
    /// When it took the lock, seconds since the Unix epoch.
    pub started_unix_s: u64,
}

/// A held lock; dropping it removes the lock file (and the folders taking
/// the lock created, when nothing else came to them).
#[derive(Debug)]
pub struct ConditionLock {
    path: PathBuf,
    created: Vec<PathBuf>,
}

impl ConditionLock {
    /// Takes the lock of condition `name` in `root`. A stale lock is taken
    /// over, and `progress` told so.
    ///
    /// Errors: [`Error::File`] naming the lock file when a live run holds
    /// it (its process id, host and age, and what to do); the file cannot
    /// be written.
    pub fn acquire(
        root: &RunsRoot,
        name: &str,
        progress: &mut impl FnMut(&str),
    ) -> Result<ConditionLock> {
        let path = root.lock_file(name);
        let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        // The folders taking the lock creates, deepest first.
        let created: Vec<PathBuf> = dir
            .ancestors()
            .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
            .map(Path::to_path_buf)
            .collect();
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, "create folder", e))?;
        let me = Holder::this_process();
        // Twice at most: once more after removing a stale lock.
        for _ in 0..2 {
            match create(&path, &me)? {
                // Only a lock taken is a ConditionLock: dropping one
                // removes the file, which must never be another run's.
                None => return Ok(ConditionLock { path, created }),
                Some(held) => match held {
                    Some(holder) if !holder.is_stale(&me) => {
                        return Err(Error::file(&path, holder.refusal(name, &me)));
                    }
                    holder => {
                        std::fs::remove_file(&path).map_err(|e| Error::io(&path, "remove", e))?;
                        progress(&match holder {
                            Some(h) => format!(
                                "removed a stale lock of condition {name}: process {} (on {}) \
                                 no longer runs",
                                h.pid, h.host
                            ),
                            None => format!("removed an unreadable lock of condition {name}"),
                        });
                    }
                },
            }
        }
        Err(Error::file(
            &path,
            "another run took this lock as a stale one was removed: only one run of a condition \
             may record at a time",
        ))
    }
}

/// Whether the lock of condition `name` in `root` is held by a run that
/// is going on (`false` when there is none, or it is stale: its run was
/// killed), as [`ConditionLock::acquire`] would judge it.
pub fn held(root: &RunsRoot, name: &str) -> bool {
    // Only a regular file is read: a named pipe there would wait forever.
    let Ok(Some(bytes)) = crate::fsutil::read_recorded(&root.lock_file(name)) else {
        return false;
    };
    match serde_json::from_slice::<Holder>(&bytes) {
        Ok(holder) => !holder.is_stale(&Holder::this_process()),
        Err(_) => false,
    }
}

/// Creates the lock file `path` holding `me`, atomically and only if
/// absent. `Ok(None)`: taken. `Ok(Some(holder))`: it exists, with what it
/// holds (`None` when unreadable: a lock from a version that wrote
/// otherwise, or a damaged file).
fn create(path: &Path, me: &Holder) -> Result<Option<Option<Holder>>> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(crate::fsutil::TEMPORARY_PREFIX)
        .tempfile_in(dir)
        .map_err(|e| Error::io(path, "write", e))?;
    let mut text = serde_json::to_string_pretty(me).expect("a holder serializes");
    text.push('\n');
    std::io::Write::write_all(&mut tmp, text.as_bytes())
        .map_err(|e| Error::io(path, "write", e))?;
    match tmp.persist_noclobber(path) {
        Ok(_) => Ok(None),
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
            // Only a regular file is read: a named pipe would never end.
            let held = crate::fsutil::read_recorded(path)
                .ok()
                .flatten()
                .and_then(|b| serde_json::from_slice::<Holder>(&b).ok());
            Ok(Some(held))
        }
        Err(e) => Err(Error::io(path, "write", e.error)),
    }
}

impl ConditionLock {
    /// Keeps the `conditions/` folder when the lock goes: the run is about
    /// to record, and a root it interrupts must still read as a runs root.
    pub fn keep_folder(&mut self) {
        self.created.clear();
    }
}

impl Drop for ConditionLock {
    fn drop(&mut self) {
        // Only our own lock: one removed by hand and taken by another run
        // meanwhile is that run's.
        let mine = crate::fsutil::read_recorded(&self.path)
            .ok()
            .flatten()
            .and_then(|b| serde_json::from_slice::<Holder>(&b).ok())
            .is_some_and(|h| {
                let me = Holder::this_process();
                h.pid == me.pid && h.host == me.host && h.start_ticks == me.start_ticks
            });
        if mine {
            let _ = std::fs::remove_file(&self.path);
        }
        // Only when empty: a run refused before it recorded anything
        // leaves no folder behind.
        for dir in &self.created {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

impl Holder {
    /// This process, now.
    pub fn this_process() -> Holder {
        let pid = std::process::id();
        Holder {
            pid,
            host: read_trimmed("/proc/sys/kernel/hostname").unwrap_or_else(|| "unknown".into()),
            boot_id: read_trimmed("/proc/sys/kernel/random/boot_id"),
            start_ticks: start_ticks(pid),
            started_unix_s: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        }
    }

    /// Whether this holder, seen from `me`, is certainly gone. A holder on
    /// another host is never judged stale: its processes cannot be seen.
    pub fn is_stale(&self, me: &Holder) -> bool {
        if self.host != me.host {
            return false;
        }
        // No run has process id 0 (kill(0, 0) asks about our own group).
        if self.pid == 0 {
            return true;
        }
        if let (Some(a), Some(b)) = (&self.boot_id, &me.boot_id)
            && a != b
        {
            return true;
        }
        if !process_exists(self.pid) {
            return true;
        }
        matches!((self.start_ticks, start_ticks(self.pid)), (Some(a), Some(b)) if a != b)
    }

    fn refusal(&self, name: &str, me: &Holder) -> String {
        let age = me.started_unix_s.saturating_sub(self.started_unix_s);
        format!(
            "another run of condition {name} is recording into this root (process {} on {}, \
             started {} ago): two runs of one condition would write the same attempt folders. \
             Wait for it to end, or run this one with another --label; if no such run is going \
             on, delete this file",
            self.pid,
            self.host,
            age_words(age)
        )
    }
}

/// `age` seconds for people: `42 s`, `3 min`, `5 h`, `2 days`.
fn age_words(age: u64) -> String {
    match age {
        0..120 => format!("{age} s"),
        120..7200 => format!("{} min", age / 60),
        7200..172_800 => format!("{} h", age / 3600),
        _ => format!("{} days", age / 86_400),
    }
}

fn read_trimmed(path: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// Field 22 of `/proc/PID/stat`; the fields are counted after the command
/// name, which is in parentheses and may hold spaces.
fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(unix)]
fn process_exists(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kill with signal 0 sends nothing; it only checks that the
    // process exists (EPERM: it exists, owned by someone else).
    let status = unsafe { libc::kill(pid, 0) };
    status == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn process_exists(_pid: u32) -> bool {
    // Nothing to ask: a lock is never judged stale here.
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_holds_a_live_lock() {
        let me = Holder::this_process();
        assert!(!me.is_stale(&me));
        assert_eq!(me.start_ticks, start_ticks(std::process::id()));
    }

    #[test]
    fn a_gone_or_reused_or_rebooted_holder_is_stale_but_another_hosts_is_not() {
        let me = Holder::this_process();
        // A process id above the kernel's limit runs nowhere.
        let gone = Holder {
            pid: 4_194_305,
            ..me.clone()
        };
        assert!(gone.is_stale(&me));
        let reused = Holder {
            start_ticks: me.start_ticks.map(|t| t + 1),
            ..me.clone()
        };
        assert_eq!(reused.is_stale(&me), me.start_ticks.is_some());
        let rebooted = Holder {
            boot_id: Some("another boot".into()),
            ..me.clone()
        };
        assert_eq!(rebooted.is_stale(&me), me.boot_id.is_some());
        let elsewhere = Holder {
            host: "another-host".into(),
            ..gone
        };
        assert!(!elsewhere.is_stale(&me));
    }

    #[test]
    fn a_second_lock_is_refused_naming_the_first_and_dropping_frees_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = RunsRoot::new(dir.path().join("runs"));
        let first = ConditionLock::acquire(&root, "c", &mut |_| {}).unwrap();
        let e = ConditionLock::acquire(&root, "c", &mut |_| {}).unwrap_err();
        // The refused one leaves the holder's lock as it was.
        assert!(root.lock_file("c").is_file());
        let message = e.to_string();
        assert!(message.contains("c.lock"), "{message}");
        assert!(
            message.contains(&format!("process {}", std::process::id())),
            "{message}"
        );
        // Another condition is not locked out.
        let other = ConditionLock::acquire(&root, "d", &mut |_| {}).unwrap();
        drop(other);
        drop(first);
        assert!(!root.lock_file("c").exists());
        // Nothing else came to the folders the lock made: they go too.
        assert!(!dir.path().join("runs").exists());
        drop(ConditionLock::acquire(&root, "c", &mut |_| {}).unwrap());
    }

    #[test]
    fn a_run_removes_only_its_own_lock() {
        let dir = tempfile::tempdir().unwrap();
        let root = RunsRoot::new(dir.path());
        let lock = ConditionLock::acquire(&root, "c", &mut |_| {}).unwrap();
        // Removed by hand and taken by another run meanwhile.
        let other = Holder {
            pid: 4_194_305,
            ..Holder::this_process()
        };
        std::fs::write(root.lock_file("c"), serde_json::to_vec(&other).unwrap()).unwrap();
        drop(lock);
        assert!(
            root.lock_file("c").is_file(),
            "another run's lock was removed"
        );
        // A lock of process 0, or of a process gone, is not held.
        assert!(!held(&root, "c"));
        let zero = Holder {
            pid: 0,
            ..Holder::this_process()
        };
        assert!(zero.is_stale(&Holder::this_process()));
    }
}
