//! How every computation runs: on a worker thread without the GIL, while the calling thread
//! watches for Ctrl-C and reports progress; panics become exceptions, never an abort.
//!
//! Stopping: the library's progress callback cannot ask the engine to stop, so an interrupt
//! unwinds out of it — the callback panics with the private [`Interrupted`] payload, rayon
//! carries it to the worker's top, and [`run`] turns it into `KeyboardInterrupt`. The engine
//! holds no locks or shared state, so nothing is left half-done but the discarded result.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Once};
use std::time::{Duration, Instant};

use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;

use crate::errors::{Failure, RagstatsRuntimeError};

/// The panic payload of an interrupted computation.
struct Interrupted;

/// What a computation shares with the thread watching it.
#[derive(Default)]
pub struct Watch {
    stop: Arc<AtomicBool>,
    done: Arc<AtomicU64>,
    total: Arc<AtomicU64>,
}

impl Watch {
    /// The progress sink for the library (`(done, total)`): it records the count, and
    /// unwinds when the caller pressed Ctrl-C.
    pub fn sink(&self) -> impl Fn(u64, u64) + Send + Sync + 'static {
        let (stop, done, total) = (self.stop.clone(), self.done.clone(), self.total.clone());
        move |d, t| {
            done.store(d, Ordering::Relaxed);
            total.store(t, Ordering::Relaxed);
            if stop.load(Ordering::Relaxed) {
                std::panic::panic_any(Interrupted);
            }
        }
    }
}

/// How often the calling thread looks at signals and progress.
const POLL: Duration = Duration::from_millis(50);
/// Progress is shown only for calls that take longer than this.
const QUIET_FOR: Duration = Duration::from_secs(2);

/// Runs `f` on a worker thread with the GIL released. Meanwhile the calling thread checks
/// for signals every 50 ms (Ctrl-C stops `f` at its next progress call and raises
/// `KeyboardInterrupt`) and, after 2 s, calls `progress(done, total)` when it is given.
/// `f`'s error becomes `InputError`/`RuntimeError`; a panic `RuntimeError` naming it.
pub fn run<T: Send>(
    py: Python<'_>,
    progress: Option<&Bound<'_, PyAny>>,
    f: impl FnOnce(&Watch) -> Result<T, Failure> + Send,
) -> PyResult<T> {
    quiet_interrupts();
    let watch = Watch::default();
    let progress = progress.map(|p| p.clone().unbind());
    let started = Instant::now();
    let mut interrupt: Option<PyErr> = None;
    let outcome = py.detach(|| {
        std::thread::scope(|s| {
            // The result comes back on a channel, so a short call returns as soon as it is
            // done rather than at the next poll.
            let (tx, rx) = std::sync::mpsc::channel();
            let watch = &watch;
            s.spawn(move || {
                let _ = tx.send(catch_unwind(AssertUnwindSafe(|| f(watch))));
            });
            let mut shown = 0;
            loop {
                match rx.recv_timeout(POLL) {
                    Ok(outcome) => break outcome,
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                        unreachable!("the worker sends before it ends; its panics are caught")
                    }
                }
                Python::attach(|py| {
                    if interrupt.is_none() {
                        if let Err(e) = py.check_signals() {
                            watch.stop.store(true, Ordering::Relaxed);
                            interrupt = Some(e);
                        }
                    }
                    let done = watch.done.load(Ordering::Relaxed);
                    if let Some(cb) = &progress {
                        if started.elapsed() > QUIET_FOR && done != shown {
                            shown = done;
                            let total = watch.total.load(Ordering::Relaxed);
                            if let Err(e) = cb.call1(py, (done, total)) {
                                // A failing callback stops the run with its exception.
                                watch.stop.store(true, Ordering::Relaxed);
                                interrupt.get_or_insert(e);
                            }
                        }
                    }
                });
            }
        })
    });
    match outcome {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(e.into()),
        Err(panic) if panic.is::<Interrupted>() => {
            Err(interrupt.unwrap_or_else(|| PyKeyboardInterrupt::new_err("interrupted")))
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown".into());
            Err(RagstatsRuntimeError::new_err(format!(
                "internal error (a bug in ragstats; please report it): {what}"
            )))
        }
    }
}

/// Keeps the panic hook from printing the unwinding of an interrupt as a crash; every
/// other panic is printed as before.
fn quiet_interrupts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !info.payload().is::<Interrupted>() {
                previous(info);
            }
        }));
    });
}
