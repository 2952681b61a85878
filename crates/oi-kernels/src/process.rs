//! The kernel as a process: started leading a session of its own, with
//! the guard that kills its whole group when oi goes (see `kernel.rs`),
//! watched through `/proc` for a program blocked reading its input, and
//! its end described in words.

use std::os::fd::OwnedFd;
use std::process::ExitStatus;

use nix::sys::signal::Signal;
use nix::unistd::Pid;
use tokio::process::Command;

pub(crate) fn cloexec_pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(std::io::Error::from)
}

/// Makes the child the leader of a new session (and process group) with no
/// controlling terminal, which is killed when its parent dies, and forks its
/// guard (see `kernel.rs`'s documentation), which reads `guard`.
pub(crate) fn prepare_child(
    cmd: &mut Command,
    confinement: Option<oi_sandbox::Confinement>,
    guard: OwnedFd,
) {
    use std::os::fd::AsRawFd;
    let mut confinement = confinement;
    #[expect(
        unsafe_code,
        reason = "pre_exec is unsafe; the closure only makes system calls (setsid, prctl, fork, and the sandbox's unshare, mount, landlock and seccomp calls on data prepared before the fork)"
    )]
    // SAFETY: runs in the forked child before exec; nothing in it allocates
    // or takes a lock.
    unsafe {
        cmd.pre_exec(move || {
            nix::unistd::setsid().map_err(std::io::Error::from)?;
            // Not enough alone: some wrappers the interpreter is started
            // through lose it (pyenv's shims, with a long argument), and it
            // spares nothing the kernel starts. Hence the guard.
            #[cfg(target_os = "linux")]
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(std::io::Error::from)?;
            start_guard(guard.as_raw_fd())?;
            if let Some(confinement) = confinement.as_mut() {
                confinement.apply()?;
            }
            Ok(())
        });
    }
}

/// Starts the child in a session of its own, so that Ctrl-C in the user's
/// terminal does not reach it: for the container engine's clients, which
/// oi stops itself (and which end when oi does: their input closes).
pub(crate) fn detach(cmd: &mut Command) {
    #[expect(
        unsafe_code,
        reason = "pre_exec is unsafe; the closure only makes one system call (setsid)"
    )]
    // SAFETY: runs in the forked child before exec; nothing in it allocates
    // or takes a lock.
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid().map_err(std::io::Error::from)?;
            Ok(())
        });
    }
}

/// In the kernel's process, before its program starts: forks the guard,
/// which keeps only `guard` (a pipe's read end) open, waits until the
/// other end is closed, and then kills its process group — the kernel and
/// everything still in it — and itself. The kernel itself does not keep
/// `guard` (it is closed on exec).
#[cfg(target_os = "linux")]
#[expect(
    unsafe_code,
    reason = "fork, signal, dup2, close_range, read and _exit in a process between fork and exec: only system calls, no allocation"
)]
fn start_guard(guard: std::os::fd::RawFd) -> std::io::Result<()> {
    use nix::libc;
    // SAFETY: called between fork and exec; the new process only makes
    // async-signal-safe system calls and ends with `_exit`.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid > 0 {
        return Ok(());
    }
    // SAFETY: the guard process: system calls on plain values only.
    unsafe {
        // Its parent (the kernel) was the process group's leader: oi's
        // interrupts for the group are not for the guard.
        for signal in [
            libc::SIGINT,
            libc::SIGQUIT,
            libc::SIGHUP,
            libc::SIGPIPE,
            libc::SIGTSTP,
            libc::SIGTTIN,
            libc::SIGTTOU,
        ] {
            libc::signal(signal, libc::SIG_IGN);
        }
        // Keep nothing of the parent's but the pipe (as fd 0): not its
        // output pipes, not the spawner's exec-status pipe.
        if libc::dup2(guard, 0) < 0 {
            libc::_exit(1);
        }
        if libc::syscall(libc::SYS_close_range, 1u32, u32::MAX, 0u32) != 0 {
            for fd in 1..4096 {
                libc::close(fd);
            }
        }
        libc::prctl(libc::PR_SET_NAME, c"oi-kernel-guard".as_ptr(), 0, 0, 0);
        let mut byte = 0u8;
        loop {
            let n = libc::read(0, (&raw mut byte).cast(), 1);
            if n == 0 || (n < 0 && *libc::__errno_location() != libc::EINTR) {
                break;
            }
        }
        libc::kill(0, libc::SIGKILL);
        libc::_exit(0)
    }
}

/// Elsewhere the kernel's parent-death signal is all there is.
#[cfg(not(target_os = "linux"))]
fn start_guard(_guard: std::os::fd::RawFd) -> std::io::Result<()> {
    Ok(())
}

/// Whether a process of the kernel's group is blocked reading its standard
/// input (a prompt such as Python's `input()` or the shell's `read`), which
/// only this process could feed.
pub(crate) fn waiting_for_input(pgid: Pid) -> bool {
    #[cfg(target_os = "linux")]
    {
        let Ok(stdin) = std::fs::read_link(format!("/proc/{pgid}/fd/0")) else {
            return false;
        };
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return false;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = name.to_str().and_then(|n| n.parse::<i32>().ok()) else {
                continue;
            };
            if process_group(pid) != Some(pgid.as_raw()) {
                continue;
            }
            if std::fs::read_link(format!("/proc/{pid}/fd/0"))
                .ok()
                .as_ref()
                != Some(&stdin)
            {
                continue;
            }
            if blocked_reading_stdin(pid) {
                return true;
            }
        }
        false
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pgid;
        false
    }
}

#[cfg(target_os = "linux")]
fn process_group(pid: i32) -> Option<i32> {
    let stat = fs_err::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid pgrp …`; comm may contain spaces and parentheses.
    let after = stat.rsplit_once(')')?.1;
    after.split_whitespace().nth(2)?.parse().ok()
}

/// Whether `pid` sits in `read(0, …)` (`/proc/PID/syscall` starts with the
/// syscall number and its first argument, the fd).
#[cfg(target_os = "linux")]
fn blocked_reading_stdin(pid: i32) -> bool {
    #[cfg(target_arch = "x86_64")]
    const READS: &[&str] = &["0", "19", "17"]; // read, readv, pread64
    #[cfg(target_arch = "aarch64")]
    const READS: &[&str] = &["63", "65", "67"]; // read, readv, pread64
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    const READS: &[&str] = &[];
    let Ok(syscall) = fs_err::read_to_string(format!("/proc/{pid}/syscall")) else {
        return false;
    };
    let mut fields = syscall.split_whitespace();
    let (Some(number), Some(fd)) = (fields.next(), fields.next()) else {
        return false;
    };
    READS.contains(&number) && fd == "0x0"
}

/// How a process ended, in words: `exit code 3`, `killed by signal 11 (SIGSEGV)`.
pub(crate) fn describe_exit(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        return format!("exit code {code}");
    }
    match status.signal() {
        Some(sig) => {
            let name = match Signal::try_from(sig) {
                Ok(name) => format!("killed by signal {sig} ({})", name.as_str()),
                Err(_) => format!("killed by signal {sig}"),
            };
            if sig == Signal::SIGKILL as i32 {
                format!("{name}; perhaps it ran out of memory")
            } else {
                name
            }
        }
        None => "ended for an unknown reason".to_owned(),
    }
}
