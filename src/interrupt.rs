//! Ctrl-C (SIGINT) and SIGTERM during `run`: the first one asks the run to
//! stop after killing the episode in flight, so it can say what it kept and
//! how to resume (README.md, "Episodes: run, report, rescore, freeze"); a
//! second one ends the process at once, exit 130.
//!
//! Agent hosts run in their own process group ([`crate::agent::launch`]),
//! so the terminal's Ctrl-C reaches only this process: the host is killed
//! by [`crate::agent::launch`] when it sees [`requested`].

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// The exit code of an interrupted command: 128 + SIGINT, as a shell
/// reports a process that Ctrl-C ended.
pub const EXIT_INTERRUPTED: u8 = 130;

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Installs the handlers (once; later calls do nothing). Before this, or
/// where installing fails, a signal ends the process as it always would.
pub fn install() {
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            // The second signal: the flag is already set, so exit now.
            let _ = signal_hook::flag::register_conditional_shutdown(
                signal,
                i32::from(EXIT_INTERRUPTED),
                Arc::clone(&flag),
            );
            let _ = signal_hook::flag::register(signal, Arc::clone(&flag));
        }
        flag
    });
}

/// Whether an interrupt arrived since [`install`].
pub fn requested() -> bool {
    FLAG.get().is_some_and(|f| f.load(Ordering::SeqCst))
}
