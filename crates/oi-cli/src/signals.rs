//! The signals a session reacts to: Ctrl-C interrupts, SIGTERM and SIGHUP end it.

use tokio::signal::unix::{Signal, SignalKind, signal};

/// What a signal asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// Ctrl-C: stop what is running.
    Interrupt,
    /// SIGTERM or SIGHUP: end the session (and stop every kernel).
    Terminate,
}

#[derive(Debug)]
pub struct Signals {
    interrupt: Signal,
    terminate: Signal,
    hangup: Signal,
}

impl Signals {
    /// Installs the handlers; from now on these signals no longer kill the
    /// process, so the session can stop its kernels before it exits.
    pub fn install() -> std::io::Result<Self> {
        Ok(Self {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    pub async fn next(&mut self) -> Request {
        tokio::select! {
            _ = self.interrupt.recv() => Request::Interrupt,
            _ = self.terminate.recv() => Request::Terminate,
            _ = self.hangup.recv() => Request::Terminate,
        }
    }
}
