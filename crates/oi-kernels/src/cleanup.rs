//! Making sure nothing a kernel started outlives the session.
//!
//! Killing a kernel's process group catches everything that stayed in it
//! (and the kernel's guard does that even when this process is killed
//! outright, see `kernel.rs`). A program that started its own session or
//! group (a daemon, `setsid`) escapes that; as a *child subreaper*, this
//! process becomes the parent of such orphans instead of init, so they can
//! be found and killed at the end of a session. If this process is killed
//! before it can, they carry [`OWNER_VAR`] naming it, and the next start
//! ([`kill_leftovers`]) ends them.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Set once this process is a subreaper: only then are its remaining
/// children orphans of kernels (a library user's own children are not
/// touched otherwise).
static SUBREAPER: AtomicBool = AtomicBool::new(false);

/// Makes this process the parent of orphaned descendants (Linux
/// `PR_SET_CHILD_SUBREAPER`). Call once at start-up, before any kernel, in
/// a process that runs one session (the `interpreter` binary).
pub fn become_subreaper() -> bool {
    #[cfg(target_os = "linux")]
    {
        let ok = nix::sys::prctl::set_child_subreaper(true).is_ok();
        SUBREAPER.store(ok, Ordering::SeqCst);
        ok
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// In a subreaper process whose kernels are all stopped: kills (SIGKILL)
/// every remaining child — orphans of the kernels reparented here — and
/// their process groups, and reaps them. Does nothing otherwise. For a
/// process that runs one session; with several, see [`kill_orphans_of`].
pub fn kill_orphans() {
    kill_children(|_| true);
}

/// The variable every kernel of a session carries: the session's mark
/// ([`SessionMark`]), so that what one session's kernels left behind can be
/// told from the kernels and leftovers of the other sessions of the same
/// process (a server runs many).
pub(crate) const SESSION_VAR: &str = "OI_KERNEL_SESSION";

/// The sessions (kernel managers) alive in this process.
static LIVE_SESSIONS: AtomicUsize = AtomicUsize::new(0);

/// A session's mark on its kernels; counted in [`LIVE_SESSIONS`] while it
/// lives.
#[derive(Debug)]
pub(crate) struct SessionMark(String);

impl SessionMark {
    pub(crate) fn new() -> Self {
        LIVE_SESSIONS.fetch_add(1, Ordering::SeqCst);
        Self(format!("{:016x}", fastrand::u64(..)))
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl Drop for SessionMark {
    fn drop(&mut self) {
        LIVE_SESSIONS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The session mark a process carries, if it can be read.
fn session_of(pid: i32) -> Option<String> {
    let environ = fs_err::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{SESSION_VAR}=");
    environ
        .split(|b| *b == 0)
        .find_map(|v| v.strip_prefix(prefix.as_bytes()))
        .and_then(|v| std::str::from_utf8(v).ok())
        .map(str::to_owned)
}

/// [`kill_orphans`] for one session of several: only the orphans marked
/// with its mark — and unmarked ones (whose code cleared the environment)
/// when no other session is alive in this process. The kernels and
/// leftovers of the other sessions are not touched.
pub(crate) fn kill_orphans_of(session: &SessionMark) {
    kill_children(|pid| match session_of(pid) {
        Some(mark) => mark == session.as_str(),
        None => LIVE_SESSIONS.load(Ordering::SeqCst) <= 1,
    });
}

/// Kills (and reaps) the children of this subreaper process that `ours`
/// accepts, with their process groups.
fn kill_children(ours: impl Fn(i32) -> bool) {
    if !SUBREAPER.load(Ordering::SeqCst) {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        use nix::sys::signal::{Signal, kill, killpg};
        use nix::sys::wait::{WaitPidFlag, waitpid};
        use nix::unistd::Pid;

        let me = std::process::id() as i32;
        // This process's own group (its shell's, often): never killed
        // whole, whichever child shares it.
        let own_group = nix::unistd::getpgrp().as_raw();
        let Ok(entries) = fs_err::read_dir("/proc") else {
            return;
        };
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<i32>().ok())
            else {
                continue;
            };
            let Ok(stat) = fs_err::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            // `pid (comm) state ppid pgrp …`
            let Some((_, after)) = stat.rsplit_once(')') else {
                continue;
            };
            let mut fields = after.split_whitespace();
            let (Some(state), Some(ppid), Some(pgrp)) =
                (fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            if ppid.parse::<i32>().ok() != Some(me) || !ours(pid) {
                continue;
            }
            let pid = Pid::from_raw(pid);
            if state != "Z" {
                if let Some(group) = pgrp
                    .parse::<i32>()
                    .ok()
                    .filter(|g| *g != me && *g != own_group && *g > 1)
                {
                    let _ = killpg(Pid::from_raw(group), Signal::SIGKILL);
                }
                let _ = kill(pid, Signal::SIGKILL);
            }
            let _ = waitpid(pid, Some(WaitPidFlag::WNOHANG));
        }
    }
}

/// The variable every kernel (and so, unless it clears it, everything the
/// code starts) carries: `PID:START`, the process that owns the session and
/// its start time, so that leftovers of a session that ended abruptly can
/// be told apart from the processes of one still running.
pub(crate) const OWNER_VAR: &str = "OI_KERNEL_OWNER";

/// This process's [`OWNER_VAR`] value.
pub(crate) fn owner_mark() -> String {
    let pid = std::process::id();
    format!("{pid}:{}", start_time(pid as i32).unwrap_or(0))
}

/// Whether the process an [`owner_mark`] names still runs (a mark that
/// does not read as one counts as alive: nothing is removed for it).
pub(crate) fn owner_alive(mark: &str) -> bool {
    let Some((owner, started)) = mark.split_once(':') else {
        return true;
    };
    let (Ok(owner), Ok(started)) = (owner.parse::<i32>(), started.parse::<u64>()) else {
        return true;
    };
    start_time(owner) == Some(started)
}

/// When `pid` started (clock ticks after boot), from `/proc/PID/stat`.
fn start_time(pid: i32) -> Option<u64> {
    let stat = fs_err::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`: the start time is field 22, the 20th after
    // the command's closing parenthesis.
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(19)?
        .parse()
        .ok()
}

/// [`kill_leftovers`] for the first session of this process only: what
/// earlier processes left is found then, and this process's own sessions
/// end their own leftovers ([`kill_orphans_of`]), so a server does not
/// read every process's environment again for each conversation.
pub fn kill_leftovers_once() -> usize {
    static DONE: AtomicBool = AtomicBool::new(false);
    if DONE.swap(true, Ordering::SeqCst) {
        return 0;
    }
    kill_leftovers()
}

/// Kills (SIGKILL) the processes that kernels of a session whose owner is
/// gone left running — programs that left the kernel's process group, such
/// as daemons — and returns how many. Processes of sessions still running
/// are not touched. Call before a session starts.
pub fn kill_leftovers() -> usize {
    #[cfg(target_os = "linux")]
    {
        use nix::sys::signal::{Signal, kill};
        use nix::unistd::Pid;
        let me = std::process::id() as i32;
        let Ok(entries) = fs_err::read_dir("/proc") else {
            return 0;
        };
        let prefix = format!("{OWNER_VAR}=");
        let mut killed = 0;
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<i32>().ok())
                .filter(|p| *p != me)
            else {
                continue;
            };
            // Another user's processes cannot be read (nor killed).
            let Ok(environ) = fs_err::read(format!("/proc/{pid}/environ")) else {
                continue;
            };
            let Some(mark) = environ
                .split(|b| *b == 0)
                .find_map(|v| v.strip_prefix(prefix.as_bytes()))
                .and_then(|v| std::str::from_utf8(v).ok())
            else {
                continue;
            };
            if mark.split_once(':').is_none() || owner_alive(mark) {
                continue;
            }
            if kill(Pid::from_raw(pid), Signal::SIGKILL).is_ok() {
                killed += 1;
            }
        }
        killed
    }
    #[cfg(not(target_os = "linux"))]
    {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_mark_names_this_process_and_when_it_started() {
        let mark = owner_mark();
        let (pid, started) = mark.split_once(':').unwrap();
        assert_eq!(pid, std::process::id().to_string());
        assert_eq!(
            Some(started.parse::<u64>().unwrap()),
            start_time(std::process::id() as i32)
        );
        assert_ne!(started, "0");
        assert!(owner_alive(&mark));
        assert!(!owner_alive(&format!("{pid}:1")));
        assert!(owner_alive("garbled"));
    }
}
