//! Applying a [`Policy`] to a process about to run a kernel (Linux).
//!
//! Everything that needs memory or files is prepared in the parent
//! ([`Confinement::prepare`]); in the child, between `fork` and `exec`,
//! [`Confinement::apply`] only makes system calls, which is all that is
//! safe there. Three mechanisms, each inherited by everything the kernel
//! starts:
//!
//! - **Landlock** restricts writes to the allowed folders (and a few
//!   devices such as `/dev/null`). Reads and execution are not restricted.
//! - **A read-only view of protected folders** (`.git`, `.openinterpreter`
//!   in the workspace): Landlock cannot take back a right granted on a
//!   parent folder, so these are bind-mounted read-only in a private mount
//!   namespace, inside a user namespace that maps only the user's own ids.
//! - **seccomp** refuses `socket()` for anything but Unix sockets (and
//!   `io_uring`, which could open sockets behind the filter's back) when the
//!   network is off.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use landlock::{
    ABI, AccessFs, Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, path_beneath_rules,
};
use nix::mount::MsFlags;

use crate::policy::{Policy, SandboxMode};

/// The newest Landlock ABI oi asks for; older kernels get what they have.
const ABI_WANTED: ABI = ABI::V5;

/// Devices code may write to in any mode.
const WRITABLE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
];

/// Why a confinement could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("cannot set up the Landlock rules: {0}")]
    Landlock(String),
    #[error("cannot set up the network filter: {0}")]
    Seccomp(String),
    #[error(
        "the sandbox is required (sandbox_required = true) but this system cannot enforce it: {0}"
    )]
    Required(String),
}

/// What this system can enforce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Support {
    /// Landlock file-system rules.
    pub landlock: bool,
    /// Unprivileged user and mount namespaces (for read-only `.git`).
    pub namespaces: bool,
    /// seccomp filters for this architecture.
    pub seccomp: bool,
}

/// What this system can enforce (probed once).
pub fn support() -> Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    *SUPPORT.get_or_init(|| Support {
        landlock: landlock_supported(),
        namespaces: probe_namespaces(),
        seccomp: seccompiler::TargetArch::try_from(std::env::consts::ARCH).is_ok(),
    })
}

/// What a policy cannot enforce on this system, as warnings for the user
/// (empty when all of it is enforced).
pub fn shortfalls(policy: &Policy) -> Vec<String> {
    let support = support();
    let mut problems = Vec::new();
    if policy.mode != SandboxMode::FullAccess && !support.landlock {
        problems.push(format!(
            "this Linux kernel has no Landlock (it needs Linux 5.13 or newer, with Landlock enabled), so the {} sandbox cannot restrict writes: code can change any file you can",
            policy.mode
        ));
    }
    if policy.mode == SandboxMode::WorkspaceWrite
        && !policy.protected().is_empty()
        && !support.namespaces
    {
        problems.push(
            "user namespaces are not available here, so the workspace's .git and .openinterpreter cannot be kept read-only".to_owned(),
        );
    }
    if !policy.network && !support.seccomp {
        problems.push(format!(
            "network = false cannot be enforced on {}: code can still use the network",
            std::env::consts::ARCH
        ));
    }
    problems
}

/// A policy made ready to apply in a child process.
#[derive(Debug)]
pub struct Confinement {
    landlock: Option<RulesetCreated>,
    seccomp: Option<seccompiler::BpfProgram>,
    mounts: Option<MountPlan>,
}

#[derive(Debug)]
struct MountPlan {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    /// Folders to make read-only, with the flags their mount must keep.
    read_only: Vec<(CString, MsFlags)>,
}

impl Confinement {
    /// Prepares `policy` for one process. `private` are folders of the
    /// process's own that it may always write (its temporary folder, where
    /// plots are saved). Parts the system cannot enforce are left out (see
    /// [`shortfalls`]).
    pub fn prepare(policy: &Policy, private: &[PathBuf]) -> Result<Self, SandboxError> {
        let support = support();
        let landlock = if policy.mode == SandboxMode::FullAccess || !support.landlock {
            None
        } else {
            let mut writable = policy.writable();
            writable.extend(private.iter().cloned());
            Some(landlock_rules(&writable)?)
        };
        let seccomp = if policy.network || !support.seccomp {
            None
        } else {
            Some(network_filter()?)
        };
        let protected = policy.protected();
        let mounts = if protected.is_empty() || !support.namespaces {
            None
        } else {
            Some(MountPlan::new(&protected))
        };
        Ok(Self {
            landlock,
            seccomp,
            mounts,
        })
    }

    /// Makes `command` start confined.
    pub fn install(self, command: &mut std::process::Command) {
        use std::os::unix::process::CommandExt;
        let mut confinement = self;
        #[expect(
            unsafe_code,
            reason = "pre_exec is unsafe; apply() only makes system calls on data prepared before the fork"
        )]
        // SAFETY: runs in the forked child before exec and allocates nothing.
        unsafe {
            command.pre_exec(move || confinement.apply());
        }
    }

    /// Applies the confinement to the calling process. Only for a child
    /// between `fork` and `exec` (e.g. in `CommandExt::pre_exec`): it makes
    /// system calls only, and allocates nothing when it succeeds.
    pub fn apply(&mut self) -> std::io::Result<()> {
        if let Some(mounts) = &self.mounts {
            mounts.apply()?;
        }
        if let Some(ruleset) = self.landlock.take() {
            ruleset
                .restrict_self()
                .map_err(|_| std::io::Error::last_os_error())?;
        }
        if let Some(filter) = &self.seccomp {
            seccompiler::apply_filter(filter).map_err(|_| std::io::Error::last_os_error())?;
        }
        Ok(())
    }
}

/// Whether the kernel enforces Landlock: the crate gives a ruleset without
/// a file descriptor when it does not.
fn landlock_supported() -> bool {
    let created = Ruleset::default()
        .handle_access(AccessFs::from_write(ABI_WANTED))
        .and_then(Ruleset::create);
    match created {
        Ok(created) => {
            let fd: Option<std::os::fd::OwnedFd> = created.into();
            fd.is_some()
        }
        Err(_) => false,
    }
}

fn landlock_rules(writable: &[PathBuf]) -> Result<RulesetCreated, SandboxError> {
    let access = AccessFs::from_write(ABI_WANTED);
    let error = |e: landlock::RulesetError| SandboxError::Landlock(e.to_string());
    let created = Ruleset::default()
        .handle_access(access)
        .map_err(error)?
        .create()
        .map_err(error)?
        .add_rules(path_beneath_rules(writable, access))
        .map_err(error)?
        .add_rules(path_beneath_rules(WRITABLE_DEVICES, access))
        .map_err(error)?;
    Ok(created)
}

fn network_filter() -> Result<seccompiler::BpfProgram, SandboxError> {
    use seccompiler::{
        SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule, TargetArch,
    };
    let error = |e: seccompiler::BackendError| SandboxError::Seccomp(e.to_string());
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| SandboxError::Seccomp(e.to_string()))?;
    let not_unix = SeccompRule::new(vec![
        SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            nix::libc::AF_UNIX as u64,
        )
        .map_err(error)?,
    ])
    .map_err(error)?;
    let rules = [
        (nix::libc::SYS_socket, vec![not_unix]),
        // An empty rule list matches every call.
        (nix::libc::SYS_io_uring_setup, Vec::new()),
    ]
    .into_iter()
    .collect();
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(nix::libc::EPERM as u32),
        arch,
    )
    .map_err(error)?;
    filter.try_into().map_err(error)
}

impl MountPlan {
    fn new(protected: &[PathBuf]) -> Self {
        let uid = nix::unistd::getuid();
        let gid = nix::unistd::getgid();
        let read_only = protected
            .iter()
            .filter_map(|path| {
                let c_path = CString::new(path.as_os_str().as_bytes()).ok()?;
                Some((c_path, kept_flags(path)))
            })
            .collect();
        Self {
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            read_only,
        }
    }

    fn apply(&self) -> std::io::Result<()> {
        use nix::sched::{CloneFlags, unshare};
        unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS)?;
        write_file(c"/proc/self/setgroups", b"deny")?;
        write_file(c"/proc/self/uid_map", &self.uid_map)?;
        write_file(c"/proc/self/gid_map", &self.gid_map)?;
        nix::mount::mount(
            None::<&std::ffi::CStr>,
            c"/",
            None::<&std::ffi::CStr>,
            MsFlags::MS_REC | MsFlags::MS_PRIVATE,
            None::<&std::ffi::CStr>,
        )?;
        for (path, kept) in &self.read_only {
            let path = path.as_c_str();
            nix::mount::mount(
                Some(path),
                path,
                None::<&std::ffi::CStr>,
                MsFlags::MS_BIND | MsFlags::MS_REC,
                None::<&std::ffi::CStr>,
            )?;
            nix::mount::mount(
                None::<&std::ffi::CStr>,
                path,
                None::<&std::ffi::CStr>,
                MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | *kept,
                None::<&std::ffi::CStr>,
            )?;
        }
        Ok(())
    }
}

/// The flags of the mount holding `path` that a read-only remount must
/// keep (a user namespace may not drop them).
fn kept_flags(path: &Path) -> MsFlags {
    use nix::sys::statvfs::{FsFlags, statvfs};
    let Ok(stat) = statvfs(path) else {
        return MsFlags::empty();
    };
    let flags = stat.flags();
    let mut kept = MsFlags::empty();
    for (fs, ms) in [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ] {
        if flags.contains(fs) {
            kept |= ms;
        }
    }
    kept
}

fn write_file(path: &std::ffi::CStr, data: &[u8]) -> std::io::Result<()> {
    use nix::fcntl::{OFlag, open};
    use nix::sys::stat::Mode;
    let fd = open(path, OFlag::O_WRONLY | OFlag::O_CLOEXEC, Mode::empty())?;
    let written = nix::unistd::write(&fd, data)?;
    if written != data.len() {
        return Err(std::io::Error::from_raw_os_error(nix::libc::EIO));
    }
    Ok(())
}

/// Whether a child can enter a user and mount namespace and bind-mount
/// (tried once, with `/bin/sh -c :`).
fn probe_namespaces() -> bool {
    use std::os::unix::process::CommandExt;
    let dir = std::env::temp_dir();
    let plan = MountPlan::new(&[dir]);
    let mut command = std::process::Command::new("/bin/sh");
    command
        .args(["-c", ":"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    #[expect(
        unsafe_code,
        reason = "pre_exec is unsafe; the closure only makes system calls (unshare, open, write, mount) on data prepared before the fork"
    )]
    // SAFETY: runs in the forked child before exec and allocates nothing.
    unsafe {
        command.pre_exec(move || plan.apply());
    }
    command.status().is_ok_and(|s| s.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filter_for_the_network_compiles() {
        if support().seccomp {
            assert!(!network_filter().unwrap().is_empty());
        }
    }

    #[test]
    fn full_access_with_network_prepares_nothing() {
        let policy = Policy::new(SandboxMode::FullAccess, "/");
        let c = Confinement::prepare(&policy, &[]).unwrap();
        assert!(c.landlock.is_none() && c.seccomp.is_none() && c.mounts.is_none());
        assert!(shortfalls(&policy).is_empty());
    }
}
