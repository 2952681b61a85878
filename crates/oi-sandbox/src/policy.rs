//! What a sandboxed kernel may do.

use std::path::{Component, Path, PathBuf};

use oi_protocol::SandboxMode;

/// Folders inside the workspace that stay read-only in workspace-write
/// mode: the project's history and oi's own project settings.
pub const PROTECTED_NAMES: &[&str] = &[".git", ".openinterpreter"];

/// The confinement of a session's kernels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub mode: SandboxMode,
    /// The folder the task works in (absolute).
    pub workspace: PathBuf,
    /// More folders code may write to (workspace-write mode).
    pub writable_roots: Vec<PathBuf>,
    /// Whether code may open network (TCP/UDP …) sockets. Unix sockets are
    /// always allowed.
    pub network: bool,
    /// The system's temporary folder (writable in workspace-write mode).
    pub temp_dir: PathBuf,
    /// Folders code may never change, wherever they are (even inside a
    /// writable folder): oi's own folder, with its configuration,
    /// checkpoints, transcripts and trust list. Not enforced in
    /// full-access mode.
    pub protected_roots: Vec<PathBuf>,
    /// Files code sees empty (`/dev/null` is mounted over them): the API
    /// keys oi stores. Only where the mount namespace can be made; not in
    /// full-access mode.
    pub hidden_files: Vec<PathBuf>,
}

impl Policy {
    /// A policy for `mode` around `workspace`, with the network on and the
    /// system's temporary folder.
    pub fn new(mode: SandboxMode, workspace: impl Into<PathBuf>) -> Self {
        Self {
            mode,
            workspace: workspace.into(),
            writable_roots: Vec::new(),
            network: true,
            temp_dir: std::env::temp_dir(),
            protected_roots: Vec::new(),
            hidden_files: Vec::new(),
        }
    }

    /// Whether this policy confines anything.
    pub fn confines(&self) -> bool {
        self.mode != SandboxMode::FullAccess || !self.network
    }

    /// Whether code runs in a container rather than confined on this
    /// machine (the container is the confinement: nothing is applied to
    /// processes here).
    pub fn in_container(&self) -> bool {
        self.mode == SandboxMode::Container
    }

    /// The folders code may write in (besides the kernel's own temporary
    /// folder and a few devices such as `/dev/null`).
    pub fn writable(&self) -> Vec<PathBuf> {
        match self.mode {
            SandboxMode::ReadOnly => Vec::new(),
            SandboxMode::WorkspaceWrite => {
                let mut roots = vec![self.workspace.clone(), self.temp_dir.clone()];
                if Path::new("/tmp") != self.temp_dir {
                    roots.push(PathBuf::from("/tmp"));
                }
                roots.extend(self.writable_roots.iter().cloned());
                roots
            }
            SandboxMode::FullAccess => vec![PathBuf::from("/")],
            // The container's own temporary folder is not this machine's:
            // only the folders mounted from here count.
            SandboxMode::Container => {
                let mut roots = vec![self.workspace.clone()];
                roots.extend(self.writable_roots.iter().cloned());
                roots
            }
        }
    }

    /// The folders kept read-only inside writable ones (those that exist):
    /// the workspace's `.git` and `.openinterpreter` (workspace-write
    /// mode) and the protected roots (every confined mode).
    pub fn protected(&self) -> Vec<PathBuf> {
        self.protected_paths()
            .into_iter()
            .filter(|p| p.exists())
            .collect()
    }

    /// Whether code may write `path` (resolved against the workspace when
    /// relative; `..` and symbolic links of existing parents resolved).
    pub fn allows_write(&self, path: &Path) -> bool {
        let path = resolve(&self.workspace, path);
        if self.mode == SandboxMode::FullAccess {
            return true;
        }
        if self
            .protected_paths()
            .iter()
            .any(|p| path.starts_with(resolve(&self.workspace, p)))
        {
            return false;
        }
        self.writable()
            .iter()
            .map(|root| resolve(&self.workspace, root))
            .any(|root| path.starts_with(&root))
    }

    /// The protected folder `path` lies in, if any (resolved as in
    /// [`Policy::allows_write`]).
    pub fn protected_root_of(&self, path: &Path) -> Option<PathBuf> {
        let path = resolve(&self.workspace, path);
        self.protected_paths()
            .into_iter()
            .find(|p| path.starts_with(resolve(&self.workspace, p)))
    }

    /// The protected folders whether or not they exist yet.
    fn protected_paths(&self) -> Vec<PathBuf> {
        let mut paths = Vec::new();
        if self.mode == SandboxMode::FullAccess {
            return paths;
        }
        if matches!(
            self.mode,
            SandboxMode::WorkspaceWrite | SandboxMode::Container
        ) {
            paths.extend(PROTECTED_NAMES.iter().map(|n| self.workspace.join(n)));
        }
        paths.extend(self.protected_roots.iter().cloned());
        paths
    }

    /// One line saying what the policy allows, e.g. for `interpreter sandbox`.
    pub fn summary(&self) -> String {
        let network = if self.network {
            "network on"
        } else {
            "network off"
        };
        let writable = self
            .writable()
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        match self.mode {
            SandboxMode::FullAccess => format!("sandbox: full-access ({network})"),
            SandboxMode::ReadOnly => format!("sandbox: read-only: no writes ({network})"),
            SandboxMode::WorkspaceWrite => format!(
                "sandbox: workspace-write: writes in {writable} (not .git, .openinterpreter{}) ({network})",
                self.protected_roots
                    .iter()
                    .map(|p| format!(", {}", p.display()))
                    .collect::<String>()
            ),
            SandboxMode::Container => format!(
                "sandbox: container: writes in {writable} (not .git, .openinterpreter) and the container's own /tmp ({network})"
            ),
        }
    }
}

/// `path` made absolute against `base`, `.`/`..` removed, and the longest
/// existing prefix resolved through symbolic links.
pub(crate) fn resolve(base: &Path, path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    let mut clean = PathBuf::new();
    for part in joined.components() {
        match part {
            Component::ParentDir => {
                clean.pop();
            }
            Component::CurDir => {}
            other => clean.push(other),
        }
    }
    // Resolve symbolic links of the part that exists.
    let mut existing = clean.clone();
    let mut rest = Vec::new();
    while !existing.as_os_str().is_empty() {
        if let Ok(real) = fs_err::canonicalize(&existing) {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (
            existing.file_name().map(ToOwned::to_owned),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => break,
        }
    }
    clean
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_write_allows_the_workspace_and_temp_but_not_git() {
        let ws = tempfile::tempdir().unwrap();
        fs_err::create_dir(ws.path().join(".git")).unwrap();
        let mut policy = Policy::new(SandboxMode::WorkspaceWrite, ws.path());
        policy.temp_dir = PathBuf::from("/tmp");
        assert!(policy.allows_write(Path::new("out.csv")));
        assert!(policy.allows_write(&ws.path().join("sub/new.txt")));
        assert!(policy.allows_write(Path::new("/tmp/x")));
        assert!(!policy.allows_write(Path::new(".git/config")));
        assert!(!policy.allows_write(Path::new("/etc/passwd")));
        assert!(!policy.allows_write(Path::new("../../etc/passwd")));
        policy.writable_roots.push(PathBuf::from("/opt/data"));
        assert!(policy.allows_write(Path::new("/opt/data/x")));
        assert_eq!(policy.protected(), vec![ws.path().join(".git")]);
    }

    #[test]
    fn read_only_allows_nothing_and_full_access_everything() {
        let policy = Policy::new(SandboxMode::ReadOnly, "/w");
        assert!(!policy.allows_write(Path::new("/w/x")));
        assert!(policy.writable().is_empty());
        assert!(policy.protected().is_empty());
        let policy = Policy::new(SandboxMode::FullAccess, "/w");
        assert!(policy.allows_write(Path::new("/etc/x")));
        assert!(!policy.confines());
    }

    #[test]
    fn symbolic_links_are_followed() {
        let ws = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/etc", ws.path().join("link")).unwrap();
        let policy = Policy::new(SandboxMode::WorkspaceWrite, ws.path());
        assert!(!policy.allows_write(Path::new("link/passwd")));
        assert!(policy.allows_write(Path::new("not-a-link/passwd")));
    }

    #[test]
    fn protected_roots_stay_closed_inside_writable_folders() {
        let ws = tempfile::tempdir().unwrap();
        let home = ws.path().join("oi-home");
        fs_err::create_dir(&home).unwrap();
        let mut policy = Policy::new(SandboxMode::WorkspaceWrite, ws.path());
        policy.protected_roots.push(home.clone());
        assert!(!policy.allows_write(&home.join("config.toml")));
        assert!(!policy.allows_write(Path::new("oi-home/checkpoints/x")));
        assert!(policy.allows_write(Path::new("elsewhere.txt")));
        assert_eq!(
            policy.protected_root_of(&home.join("a")),
            Some(home.clone())
        );
        assert!(policy.protected().contains(&home));
        policy.mode = SandboxMode::ReadOnly;
        assert_eq!(policy.protected(), vec![home.clone()]);
        policy.mode = SandboxMode::FullAccess;
        assert!(policy.allows_write(&home.join("config.toml")));
        assert!(policy.protected().is_empty());
    }
}
