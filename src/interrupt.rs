//! Ctrl-C during a long command: the first one asks the command to stop after the runs in
//! hand and print its partial result (never a pass) with the command that reproduces it;
//! a second one ends the process at once.

use std::sync::atomic::{AtomicU32, Ordering};

static SIGNALS: AtomicU32 = AtomicU32::new(0);

#[cfg(unix)]
extern "C" fn on_sigint(_: libc::c_int) {
    if SIGNALS.fetch_add(1, Ordering::SeqCst) >= 1 {
        // SAFETY: `_exit` is async-signal-safe.
        unsafe { libc::_exit(130) };
    }
}

/// Catches Ctrl-C from now on (a long command calls it before it starts).
pub fn install() {
    #[cfg(unix)]
    // SAFETY: the handler only touches an atomic and calls `_exit`.
    unsafe {
        libc::signal(
            libc::SIGINT,
            on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
}

/// Whether Ctrl-C was pressed.
pub fn requested() -> bool {
    SIGNALS.load(Ordering::SeqCst) > 0
}
