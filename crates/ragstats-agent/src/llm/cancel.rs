//! A two-level cancellation signal shared between a batch and its calls.
//!
//! *Stop* (first Ctrl-C): start nothing new — no new calls, no retries, no waits — but let
//! HTTP requests already sent finish, so an answer the provider has billed is still written.
//! *Abort* (second Ctrl-C): drop requests in flight too.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use tokio::sync::Notify;

/// Cloneable handle; all clones see the same state.
#[derive(Debug, Clone, Default)]
pub struct Cancel {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    level: AtomicU8,
    notify: Notify,
}

const STOP: u8 = 1;
const ABORT: u8 = 2;

impl Cancel {
    /// A signal that has not fired.
    pub fn new() -> Self {
        Cancel::default()
    }

    /// Fires *stop*: no new calls or retries start.
    pub fn stop(&self) {
        self.raise(STOP);
    }

    /// Fires *abort* (implies stop): requests in flight are dropped.
    pub fn abort(&self) {
        self.raise(ABORT);
    }

    /// True once [`Cancel::stop`] or [`Cancel::abort`] was called.
    pub fn is_stopped(&self) -> bool {
        self.inner.level.load(Ordering::SeqCst) >= STOP
    }

    /// True once [`Cancel::abort`] was called.
    pub fn is_aborted(&self) -> bool {
        self.inner.level.load(Ordering::SeqCst) >= ABORT
    }

    /// Resolves once stopped (immediately if already).
    pub async fn stopped(&self) {
        self.wait(STOP).await
    }

    /// Resolves once aborted (immediately if already).
    pub async fn aborted(&self) {
        self.wait(ABORT).await
    }

    fn raise(&self, to: u8) {
        self.inner.level.fetch_max(to, Ordering::SeqCst);
        self.inner.notify.notify_waiters();
    }

    async fn wait(&self, level: u8) {
        loop {
            // Register interest before checking, so a raise between the check and the await
            // is not missed.
            let notified = self.inner.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.inner.level.load(Ordering::SeqCst) >= level {
                return;
            }
            notified.await;
        }
    }
}
