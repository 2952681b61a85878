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
//! - **A read-only view of the file system**, in a private mount namespace
//!   (inside a user namespace that maps only the user's own ids): every
//!   mount is made read-only, then the writable folders are bound back
//!   writable, then the protected folders (`.git`, `.openinterpreter`,
//!   oi's own folder) bound read-only over them. Landlock does not govern
//!   changes of permissions, owners or times (`chmod`, `chown`, `touch`)
//!   nor can it take back a right granted on a parent folder; a read-only
//!   mount refuses both. `/dev/shm` is replaced by a private folder.
//!   Landlock also stops the confined code from undoing any of this (it
//!   forbids `mount` and `umount`).
//! - **seccomp** refuses `socket()` for anything but Unix sockets (and
//!   `io_uring`, which could open sockets behind the filter's back) when the
//!   network is off.

use std::ffi::CString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use landlock::{
    ABI, AccessFs, Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, path_beneath_rules,
};
use nix::mount::MsFlags;

use crate::policy::Policy;
use oi_protocol::SandboxMode;

/// The newest Landlock ABI oi asks for; older kernels get what they have.
const ABI_WANTED: ABI = ABI::V5;

/// Devices code may write to in any mode. (`/dev/shm` is not shared:
/// each kernel gets a private one, see [`Confinement::prepare`].)
const WRITABLE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// Where POSIX shared memory lives; replaced by a private folder.
const SHM: &str = "/dev/shm";

/// Why a confinement could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("cannot set up the Landlock rules: {0}")]
    Landlock(String),
    #[error("cannot set up the network filter: {0}")]
    Seccomp(String),
    #[error("cannot prepare the read-only view of the file system: {0}")]
    Mounts(String),
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
    /// Unprivileged user and mount namespaces, able to make the file
    /// system read-only (for permission and time changes, read-only `.git`
    /// and oi's folder, a private `/dev/shm`).
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
    if policy.in_container() {
        // The container engine enforces it; an engine that cannot start
        // the container is an error when the first kernel starts.
        return Vec::new();
    }
    let support = support();
    let mut problems = Vec::new();
    if policy.mode != SandboxMode::FullAccess && !support.landlock {
        problems.push(format!(
            "this Linux kernel has no Landlock (it needs Linux 5.13 or newer, with Landlock enabled), so the {} sandbox cannot restrict writes: code can change any file you can",
            policy.mode
        ));
    }
    if policy.mode != SandboxMode::FullAccess && !support.namespaces {
        let mut lost = vec![
            "changes of permissions and times (chmod, touch) outside the writable folders cannot be refused".to_owned(),
            "/dev/shm stays shared with the rest of the system".to_owned(),
        ];
        if policy.mode == SandboxMode::WorkspaceWrite {
            lost.push(
                "the workspace's .git and .openinterpreter cannot be kept read-only".to_owned(),
            );
        }
        let writable = policy.writable();
        for root in &policy.protected_roots {
            if writable.iter().any(|w| root.starts_with(w)) {
                lost.push(format!(
                    "oi's folder {} lies in a writable folder and cannot be kept from code",
                    root.display()
                ));
            }
        }
        problems.push(format!(
            "user namespaces are not available here, so {}",
            lost.join("; ")
        ));
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

/// The mounts a confined process makes in its own mount namespace, in
/// order (see the module's documentation).
#[derive(Debug)]
struct MountPlan {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    /// Every mount point, with the flags a read-only remount must keep.
    read_only: Vec<(CString, MsFlags)>,
    /// The private folder bound over `/dev/shm`.
    shm: Option<(CString, MsFlags)>,
    /// Folders bound back writable.
    writable: Vec<(CString, MsFlags)>,
    /// Folders bound read-only over those.
    protected: Vec<(CString, MsFlags)>,
    /// The process's own folders, writable even inside protected ones.
    private: Vec<(CString, MsFlags)>,
    /// Files with `/dev/null` mounted over them.
    hidden: Vec<CString>,
    /// Where the process works, entered again after the mounts.
    cwd: Option<CString>,
}

impl Confinement {
    /// Prepares `policy` for one process. `private` are folders of the
    /// process's own that it may always write, the first being its own
    /// temporary folder (a `shm` folder is made there to stand for
    /// `/dev/shm`); the others are, e.g., where its plots are saved. Parts
    /// the system cannot enforce are left out (see [`shortfalls`]). `cwd` is
    /// where the process starts: it is entered again once the file system
    /// is remounted, so that it sees the new mounts.
    pub fn prepare(policy: &Policy, private: &[PathBuf], cwd: &Path) -> Result<Self, SandboxError> {
        let support = support();
        if policy.mode == SandboxMode::FullAccess {
            let seccomp = if policy.network || !support.seccomp {
                None
            } else {
                Some(network_filter()?)
            };
            return Ok(Self {
                landlock: None,
                seccomp,
                mounts: None,
            });
        }
        let shm = match private.first() {
            Some(temp) if support.namespaces && Path::new(SHM).is_dir() => {
                let dir = temp.join("shm");
                fs_err::create_dir_all(&dir).map_err(|e| SandboxError::Mounts(e.to_string()))?;
                Some(dir)
            }
            _ => None,
        };
        let landlock = if support.landlock {
            let mut writable = policy.writable();
            writable.extend(private.iter().cloned());
            writable.extend(shm.iter().cloned());
            Some(landlock_rules(&writable)?)
        } else {
            None
        };
        let seccomp = if policy.network || !support.seccomp {
            None
        } else {
            Some(network_filter()?)
        };
        let mounts = if support.namespaces {
            let mut plan = MountPlan::new(
                &mount_points(),
                &policy.writable(),
                &policy.protected(),
                private,
                shm.as_deref(),
                cwd,
            );
            plan.hidden = policy
                .hidden_files
                .iter()
                .filter_map(|path| fs_err::canonicalize(path).ok())
                .filter(|path| path.is_file())
                .filter_map(|path| CString::new(path.as_os_str().as_bytes()).ok())
                .collect();
            Some(plan)
        } else {
            None
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
    fn new(
        mounts: &[(PathBuf, MsFlags)],
        writable: &[PathBuf],
        protected: &[PathBuf],
        private: &[PathBuf],
        shm: Option<&Path>,
        cwd: &Path,
    ) -> Self {
        let uid = nix::unistd::getuid();
        let gid = nix::unistd::getgid();
        let existing = |paths: &[PathBuf]| -> Vec<(CString, MsFlags)> {
            paths
                .iter()
                .filter_map(|path| {
                    let real = fs_err::canonicalize(path).ok()?;
                    let c_path = CString::new(real.as_os_str().as_bytes()).ok()?;
                    Some((c_path, kept_flags(&real)))
                })
                .collect()
        };
        let read_only = mounts
            .iter()
            .filter_map(|(path, flags)| {
                Some((CString::new(path.as_os_str().as_bytes()).ok()?, *flags))
            })
            .collect();
        Self {
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            read_only,
            shm: shm.and_then(|dir| existing(&[dir.to_path_buf()]).pop()),
            writable: existing(writable),
            protected: existing(protected),
            private: existing(private),
            hidden: Vec::new(),
            cwd: CString::new(cwd.as_os_str().as_bytes()).ok(),
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
            let remounted = nix::mount::mount(
                None::<&std::ffi::CStr>,
                path.as_c_str(),
                None::<&std::ffi::CStr>,
                MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | *kept,
                None::<&std::ffi::CStr>,
            );
            match remounted {
                // A mount point this user cannot reach is out of the code's
                // reach too.
                Err(nix::errno::Errno::EACCES | nix::errno::Errno::ENOENT) => {}
                other => other?,
            }
        }
        if let Some((dir, kept)) = &self.shm {
            bind(dir, c"/dev/shm", *kept, false)?;
        }
        for (path, kept) in &self.writable {
            bind(path, path, *kept, false)?;
        }
        for (path, kept) in &self.protected {
            bind(path, path, *kept, true)?;
        }
        for (path, kept) in &self.private {
            bind(path, path, *kept, false)?;
        }
        for path in &self.hidden {
            bind(c"/dev/null", path, MsFlags::empty(), true)?;
        }
        // The working directory was entered before the mounts: look it up
        // again, or relative paths would still reach the read-only view.
        if let Some(cwd) = &self.cwd {
            nix::unistd::chdir(cwd.as_c_str())?;
        }
        Ok(())
    }
}

/// Binds `source` (and the mounts below it) on `target`, then makes the new
/// mount read-only or writable, keeping `kept` flags.
fn bind(
    source: &std::ffi::CStr,
    target: &std::ffi::CStr,
    kept: MsFlags,
    read_only: bool,
) -> std::io::Result<()> {
    nix::mount::mount(
        Some(source),
        target,
        None::<&std::ffi::CStr>,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        None::<&std::ffi::CStr>,
    )?;
    let mut flags = MsFlags::MS_BIND | MsFlags::MS_REMOUNT | kept;
    if read_only {
        flags |= MsFlags::MS_RDONLY;
    }
    nix::mount::mount(
        None::<&std::ffi::CStr>,
        target,
        None::<&std::ffi::CStr>,
        flags,
        None::<&std::ffi::CStr>,
    )?;
    Ok(())
}

/// The mount points of this process's mount namespace, with the flags a
/// read-only remount of each must keep (read from `/proc/self/mountinfo`).
fn mount_points() -> Vec<(PathBuf, MsFlags)> {
    fs_err::read_to_string("/proc/self/mountinfo")
        .map(|text| parse_mountinfo(&text))
        .unwrap_or_default()
}

/// `mountinfo` lines: `ID PARENT MAJ:MIN ROOT MOUNT-POINT OPTIONS …`, the
/// mount point with spaces and such written as octal escapes.
fn parse_mountinfo(text: &str) -> Vec<(PathBuf, MsFlags)> {
    let mut mounts: Vec<(PathBuf, MsFlags)> = Vec::new();
    for line in text.lines() {
        let mut fields = line.split(' ');
        let (Some(point), Some(options)) = (fields.nth(4), fields.next()) else {
            continue;
        };
        let point = PathBuf::from(std::ffi::OsString::from_vec(unescape_octal(point)));
        let mut kept = MsFlags::empty();
        for option in options.split(',') {
            kept |= match option {
                "nosuid" => MsFlags::MS_NOSUID,
                "nodev" => MsFlags::MS_NODEV,
                "noexec" => MsFlags::MS_NOEXEC,
                "noatime" => MsFlags::MS_NOATIME,
                "nodiratime" => MsFlags::MS_NODIRATIME,
                "relatime" => MsFlags::MS_RELATIME,
                _ => MsFlags::empty(),
            };
        }
        // A path mounted over twice: its top mount is the one seen.
        mounts.retain(|(p, _)| *p != point);
        mounts.push((point, kept));
    }
    mounts
}

/// `\040` → a space, as the kernel escapes mount points.
fn unescape_octal(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && let Some(code) = bytes
                .get(i + 1..i + 4)
                .and_then(|d| std::str::from_utf8(d).ok())
                .and_then(|d| u8::from_str_radix(d, 8).ok())
        {
            out.push(code);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
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

/// Whether a child can enter a user and mount namespace and make the file
/// system read-only but for a writable folder, a protected one inside it
/// and a private `/dev/shm` (tried once, with `/bin/sh -c :`).
fn probe_namespaces() -> bool {
    use std::os::unix::process::CommandExt;
    let Ok(dir) = tempfile::Builder::new().prefix("oi-probe-").tempdir() else {
        return false;
    };
    let protected = dir.path().join("protected");
    let shm = dir.path().join("shm");
    if fs_err::create_dir(&protected).is_err() || fs_err::create_dir(&shm).is_err() {
        return false;
    }
    let plan = MountPlan::new(
        &mount_points(),
        &[dir.path().to_path_buf()],
        &[protected],
        &[],
        Path::new(SHM).is_dir().then_some(shm.as_path()),
        dir.path(),
    );
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
    fn mount_points_are_read_with_their_flags_and_escapes() {
        let text = "22 27 0:21 / /proc rw,relatime - proc proc rw\n\
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n\
28 27 0:25 / /mnt/my\\040disk ro,nosuid,nodev,noatime - tmpfs x ro\n\
29 24 0:26 / /dev/pts rw,relatime - devpts devpts rw\n\
30 24 0:27 / /dev/pts rw,noexec,relatime - devpts devpts rw\n";
        let mounts = parse_mountinfo(text);
        assert_eq!(
            mounts,
            vec![
                (PathBuf::from("/proc"), MsFlags::MS_RELATIME),
                (PathBuf::from("/"), MsFlags::MS_RELATIME),
                (
                    PathBuf::from("/mnt/my disk"),
                    MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOATIME
                ),
                (
                    PathBuf::from("/dev/pts"),
                    MsFlags::MS_NOEXEC | MsFlags::MS_RELATIME
                ),
            ]
        );
    }

    #[test]
    fn full_access_with_network_prepares_nothing() {
        let policy = Policy::new(SandboxMode::FullAccess, "/");
        let c = Confinement::prepare(&policy, &[], Path::new("/")).unwrap();
        assert!(c.landlock.is_none() && c.seccomp.is_none() && c.mounts.is_none());
        assert!(shortfalls(&policy).is_empty());
    }
}
