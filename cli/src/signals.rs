//! SIGTERM, SIGINT and SIGUSR1 during `memskill train` and `memskill eval`: the first one
//! asks the command to stop at its next safe point (training: after the current update,
//! with a checkpoint; evaluation: before the next sample, span or question, with no results
//! written), and the command then exits with [`EXIT_INTERRUPTED`] and says how to go on. A
//! second signal ends the process at once (the handler puts the default actions back as it
//! runs). A scheduler's preemption is covered: Slurm sends SIGTERM (and, with
//! `--signal=USR1@<seconds>`, SIGUSR1 ahead of the time limit) before it kills a job.
//!
//! The handler only stores to atomics and calls `sigaction`, both async-signal-safe. The
//! handlers are installed by [`StopOnSignal::install`] for the command's duration and the
//! previous actions restored when it is dropped, so the Python package's in-process
//! `memskill.main` gets its own handlers back.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The exit status of a command a signal stopped at a safe point: 75, `EX_TEMPFAIL` of
/// sysexits.h ("temporary failure; the user is invited to retry"): run it again (training
/// with `--resume`). Distinct from 1 (an error) and from the 128 + N of a process the
/// signal itself ended.
pub const EXIT_INTERRUPTED: i32 = 75;

/// The signals that stop a command.
const SIGNALS: [libc::c_int; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGUSR1];

/// The stop flag the handler sets: an `Arc<AtomicBool>` leaked once (never freed, so the
/// handler can always dereference it), shared with the commands through [`StopOnSignal`].
static FLAG: AtomicPtr<AtomicBool> = AtomicPtr::new(std::ptr::null_mut());
/// The first signal received since the handlers were installed (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);
/// How many [`StopOnSignal`]s are alive: only the outermost installs and restores.
static DEPTH: AtomicUsize = AtomicUsize::new(0);
/// Whether a signal after the first is ignored (the handler stays) instead of ending the
/// process (the handler puts the default actions back); set by the outermost install.
static IGNORE_REPEATS: AtomicBool = AtomicBool::new(false);
/// The actions in place before the outermost install, restored when it ends.
static PREVIOUS: Mutex<Vec<(libc::c_int, libc::sigaction)>> = Mutex::new(Vec::new());

extern "C" fn on_signal(sig: libc::c_int) {
    // async-signal-safe: atomic loads and stores, sigaction
    let _ = RECEIVED.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
    let p = FLAG.load(Ordering::SeqCst);
    if !p.is_null() {
        // SAFETY: FLAG only ever holds a pointer from `Arc::into_raw` that is never released.
        unsafe { (*p).store(true, Ordering::SeqCst) };
    }
    if IGNORE_REPEATS.load(Ordering::SeqCst) {
        return;
    }
    for s in SIGNALS {
        // SAFETY: a zeroed sigaction with SIG_DFL is a valid action; sigaction is
        // async-signal-safe.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(s, &act, std::ptr::null_mut());
        }
    }
}

/// The process's stop flag (made on first use).
fn flag() -> Arc<AtomicBool> {
    let mut p = FLAG.load(Ordering::SeqCst);
    if p.is_null() {
        let raw = Arc::into_raw(Arc::new(AtomicBool::new(false))).cast_mut();
        match FLAG.compare_exchange(
            std::ptr::null_mut(),
            raw,
            Ordering::SeqCst,
            Ordering::SeqCst,
        ) {
            Ok(_) => p = raw,
            Err(other) => {
                // SAFETY: `raw` came from `Arc::into_raw` above and was not published.
                drop(unsafe { Arc::from_raw(raw) });
                p = other;
            }
        }
    }
    // SAFETY: `p` came from `Arc::into_raw` and FLAG keeps that reference forever; this
    // makes a second, owned reference.
    unsafe {
        Arc::increment_strong_count(p);
        Arc::from_raw(p)
    }
}

/// The signal handlers of one command, installed for as long as this value lives.
pub struct StopOnSignal {
    flag: Arc<AtomicBool>,
}

impl StopOnSignal {
    /// Installs the handlers (a fresh, unset flag), or joins those an enclosing command
    /// installed (a `--sweep`'s evaluations share the sweep's). A second signal ends the
    /// process.
    pub fn install() -> std::io::Result<Self> {
        Self::install_with(false)
    }

    /// [`install`](Self::install), where `ignore_repeats` makes every signal after the first
    /// a no-op (the command goes on stopping at its safe point) instead of ending the
    /// process. Only the outermost install sets it.
    pub fn install_with(ignore_repeats: bool) -> std::io::Result<Self> {
        let flag = flag();
        let mut previous = PREVIOUS.lock().unwrap_or_else(|e| e.into_inner());
        if DEPTH.load(Ordering::SeqCst) == 0 {
            IGNORE_REPEATS.store(ignore_repeats, Ordering::SeqCst);
            flag.store(false, Ordering::SeqCst);
            RECEIVED.store(0, Ordering::SeqCst);
            previous.clear();
            for s in SIGNALS {
                // SAFETY: a zeroed sigaction with our handler, an empty mask and SA_RESTART
                // (interrupted system calls resume) is a valid action.
                unsafe {
                    let mut act: libc::sigaction = std::mem::zeroed();
                    act.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                    act.sa_flags = libc::SA_RESTART;
                    libc::sigemptyset(&mut act.sa_mask);
                    let mut old: libc::sigaction = std::mem::zeroed();
                    if libc::sigaction(s, &act, &mut old) != 0 {
                        let e = std::io::Error::last_os_error();
                        restore(&previous);
                        previous.clear();
                        return Err(e);
                    }
                    previous.push((s, old));
                }
            }
        }
        DEPTH.fetch_add(1, Ordering::SeqCst);
        Ok(Self { flag })
    }

    /// The flag the handler sets, for `TrainOptions::stop` / `EvalOptions::stop`.
    pub fn flag(&self) -> Arc<AtomicBool> {
        self.flag.clone()
    }

    /// The name of the signal that asked to stop (`SIGTERM`, ...), if one did.
    pub fn received(&self) -> Option<&'static str> {
        match RECEIVED.load(Ordering::SeqCst) {
            0 => self.flag.load(Ordering::SeqCst).then_some("a stop request"),
            libc::SIGTERM => Some("SIGTERM"),
            libc::SIGINT => Some("SIGINT"),
            libc::SIGUSR1 => Some("SIGUSR1"),
            _ => Some("a signal"),
        }
    }
}

impl Drop for StopOnSignal {
    fn drop(&mut self) {
        let mut previous = PREVIOUS.lock().unwrap_or_else(|e| e.into_inner());
        if DEPTH.fetch_sub(1, Ordering::SeqCst) == 1 {
            restore(&previous);
            previous.clear();
        }
    }
}

/// Puts the saved actions back.
fn restore(previous: &[(libc::c_int, libc::sigaction)]) {
    for (s, old) in previous {
        // SAFETY: `old` is an action sigaction returned for this signal.
        unsafe {
            libc::sigaction(*s, old, std::ptr::null_mut());
        }
    }
}

/// A command that a signal stopped at a safe point: `run_args` prints it and exits with
/// [`EXIT_INTERRUPTED`].
#[derive(Debug)]
pub struct Interrupted {
    /// What stopped, where, and how to go on (one or more lines).
    pub message: String,
}

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Interrupted {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The handler sets the flag and names the signal; a nested install shares it; the
    /// outermost drop puts the previous action back. (One test: the handlers are
    /// process-wide.)
    #[test]
    fn a_signal_sets_the_flag_and_the_previous_action_comes_back() {
        let before = current(libc::SIGUSR1);
        let before_term = current(libc::SIGTERM);
        let outer = StopOnSignal::install().unwrap();
        assert_eq!(outer.received(), None);
        let inner = StopOnSignal::install().unwrap();
        // SAFETY: raising a signal whose handler only stores atomics.
        unsafe { libc::raise(libc::SIGUSR1) };
        assert!(outer.flag().load(Ordering::SeqCst));
        assert!(inner.flag().load(Ordering::SeqCst));
        assert_eq!(inner.received(), Some("SIGUSR1"));
        // the handler put the default action back: a second signal would end the process
        assert_eq!(current(libc::SIGTERM), libc::SIG_DFL);
        drop(inner);
        drop(outer);
        assert_eq!(current(libc::SIGUSR1), before);
        // a new command starts unset
        let again = StopOnSignal::install().unwrap();
        assert!(!again.flag().load(Ordering::SeqCst));
        assert_eq!(again.received(), None);
        assert_eq!(
            current(libc::SIGINT),
            on_signal as extern "C" fn(libc::c_int) as usize
        );
        drop(again);
        // ignoring repeats: the handler stays after the first signal, and a second one only
        // sets the flag again
        let keep = StopOnSignal::install_with(true).unwrap();
        // SAFETY: raising signals whose handler only stores atomics.
        unsafe { libc::raise(libc::SIGTERM) };
        let ours = on_signal as extern "C" fn(libc::c_int) as usize;
        assert_eq!(current(libc::SIGTERM), ours);
        unsafe { libc::raise(libc::SIGTERM) };
        assert!(keep.flag().load(Ordering::SeqCst));
        assert_eq!(keep.received(), Some("SIGTERM"));
        drop(keep);
        assert_eq!(current(libc::SIGTERM), before_term);
        // the next plain install ends at the second signal again
        let plain = StopOnSignal::install().unwrap();
        // SAFETY: as above.
        unsafe { libc::raise(libc::SIGUSR1) };
        assert_eq!(current(libc::SIGTERM), libc::SIG_DFL);
        drop(plain);
    }

    fn current(sig: libc::c_int) -> usize {
        // SAFETY: querying the action only.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(sig, std::ptr::null(), &mut old);
            old.sa_sigaction
        }
    }
}
