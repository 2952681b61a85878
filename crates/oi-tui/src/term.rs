//! The terminal's input modes while a task runs.
//!
//! While the model writes or code runs, keys typed by the user must not be
//! echoed into the live region (that would scramble it), yet Ctrl-C must
//! still reach the session as an interrupt. [`Quiet`] turns echo and line
//! editing off and leaves signals on. Before a question is asked, whatever
//! was typed meanwhile is thrown away ([`discard_typeahead`]): a `y` typed
//! while the reply streamed must never approve code the user has not seen.

use std::io;
use std::os::fd::AsFd;

use nix::sys::termios::{self, FlushArg, LocalFlags, SetArg, Termios};

/// Echo and line editing off for the life of the guard (signals stay on).
#[derive(Debug)]
pub struct Quiet {
    saved: Termios,
}

impl Quiet {
    /// Turns echo off on standard input; an error when it is no terminal.
    pub fn on() -> io::Result<Self> {
        let stdin = io::stdin();
        let saved = termios::tcgetattr(stdin.as_fd()).map_err(io::Error::from)?;
        let mut quiet = saved.clone();
        quiet
            .local_flags
            .remove(LocalFlags::ECHO | LocalFlags::ICANON);
        quiet.local_flags.insert(LocalFlags::ISIG);
        termios::tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &quiet).map_err(io::Error::from)?;
        Ok(Self { saved })
    }
}

impl Drop for Quiet {
    fn drop(&mut self) {
        let _ = termios::tcsetattr(io::stdin().as_fd(), SetArg::TCSANOW, &self.saved);
    }
}

/// Throws away keys typed but not yet read (nothing when stdin is no
/// terminal).
pub fn discard_typeahead() {
    let _ = termios::tcflush(io::stdin().as_fd(), FlushArg::TCIFLUSH);
}
