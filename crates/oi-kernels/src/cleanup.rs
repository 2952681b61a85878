//! Making sure nothing a kernel started outlives the session.
//!
//! Killing a kernel's process group catches everything that stayed in it.
//! A program that started its own session or group (a daemon, `setsid`)
//! escapes that; as a *child subreaper*, this process becomes the parent of
//! such orphans instead of init, so they can be found and killed too.

use std::sync::atomic::{AtomicBool, Ordering};

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
/// their process groups, and reaps them. Does nothing otherwise.
pub fn kill_orphans() {
    if !SUBREAPER.load(Ordering::SeqCst) {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        use nix::sys::signal::{Signal, kill, killpg};
        use nix::sys::wait::{WaitPidFlag, waitpid};
        use nix::unistd::Pid;

        let me = std::process::id() as i32;
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
            if ppid.parse::<i32>().ok() != Some(me) {
                continue;
            }
            let pid = Pid::from_raw(pid);
            if state != "Z" {
                if let Some(group) = pgrp.parse::<i32>().ok().filter(|g| *g != me && *g > 1) {
                    let _ = killpg(Pid::from_raw(group), Signal::SIGKILL);
                }
                let _ = kill(pid, Signal::SIGKILL);
            }
            let _ = waitpid(pid, Some(WaitPidFlag::WNOHANG));
        }
    }
}
