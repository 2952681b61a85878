//! Saying plainly what the sandbox blocked.
//!
//! A confined program only sees an error (`Permission denied`, `Read-only
//! file system`, `Operation not permitted`) and prints it its own way. This
//! reads a run's output for such errors, finds the paths they name, and,
//! when the policy is what refused them, says so with how to allow it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::policy::{PROTECTED_NAMES, Policy};
use oi_protocol::SandboxMode;

/// Something the sandbox refused, for the user and the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    /// `blocked by sandbox: …`
    pub message: String,
    /// How to allow it.
    pub hint: String,
}

/// What a refused path could have been opened for, without the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    Read,
    Write,
}

/// What the sandbox blocked, judging by a run's `output`; relative paths
/// in it are taken from `cwd` (the kernel's working directory).
///
/// A refusal is put down to the sandbox only where oi itself, unconfined,
/// would have been allowed: a `Permission denied` on a file the user could
/// not change anyway is the system's ordinary permissions, and a refused
/// read is never a refused change.
pub fn explain(policy: &Policy, output: &str, cwd: &Path) -> Vec<Denial> {
    explain_with(policy, output, cwd, &host_allows)
}

fn explain_with(
    policy: &Policy,
    output: &str,
    cwd: &Path,
    host_allows: &dyn Fn(&Path, Access) -> bool,
) -> Vec<Denial> {
    if !policy.confines() {
        return Vec::new();
    }
    let mut denials = Vec::new();
    let lower_output = output.to_ascii_lowercase();
    let network_refused = !policy.network && looks_like_network_refusal(&lower_output);
    if network_refused {
        denials.push(if policy.in_container() {
            Denial {
                message: "blocked by sandbox: the container has no network ([container] network = \"none\")".to_owned(),
                hint: "give it one with `-c container.network=bridge` (config `[container] network`)".to_owned(),
            }
        } else {
            Denial {
                message: "blocked by sandbox: network access is off (network = false)".to_owned(),
                hint: "allow it with `-c network=true` (config `network = true`)".to_owned(),
            }
        });
    }
    let mut seen = BTreeSet::new();
    let lines: Vec<&str> = output.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let lower = line.to_ascii_lowercase();
        // "Operation not permitted" is the refused socket then, not a file.
        if network_refused && !lower.contains("permission denied") && !lower.contains("read-only") {
            continue;
        }
        // In a container, folders of this machine that are not mounted are
        // simply not there.
        let refused = looks_like_write_refusal(&lower)
            || (policy.in_container() && looks_like_missing(&lower));
        if policy.mode == SandboxMode::FullAccess || !refused {
            continue;
        }
        let mut candidates = paths_in(line);
        if candidates.is_empty() {
            // Some errors name no path (`OSError: [Errno 30] Read-only file
            // system`); the lines just before (the failing line of a
            // traceback) often do.
            candidates = lines[i.saturating_sub(2)..i]
                .iter()
                .rev()
                .flat_map(|l| paths_in(l))
                .collect();
        }
        for candidate in candidates {
            let path = expand_home(&candidate);
            let resolved = crate::policy::resolve(cwd, &path);
            if policy.allows_write(&resolved) || !seen.insert(resolved.clone()) {
                continue;
            }
            if is_pseudo_file_system(&resolved) {
                // Processes' files and devices: what the private namespace
                // hides from code, never a folder to open with --add-dir.
                if host_allows(&resolved, Access::Read) {
                    denials.push(pseudo_denial(&resolved));
                }
                continue;
            }
            if !host_allows(&resolved, Access::Write) {
                continue;
            }
            denials.push(denial_for(policy, &resolved));
        }
    }
    denials
}

fn denial_for(policy: &Policy, path: &Path) -> Denial {
    let workspace = crate::policy::resolve(&policy.workspace, &policy.workspace);
    if let Some(root) = policy.protected_root_of(path) {
        if let Some(name) = PROTECTED_NAMES
            .iter()
            .find(|name| root == workspace.join(name))
        {
            return Denial {
                message: format!(
                    "blocked by sandbox: {} is read-only: oi keeps the workspace's {name} folder read-only",
                    path.display()
                ),
                hint: "make such changes yourself, or run with `--sandbox full-access`".to_owned(),
            };
        }
        return Denial {
            message: format!(
                "blocked by sandbox: {} is in oi's own folder {}, which code may never change",
                path.display(),
                root.display()
            ),
            hint: "change oi's settings yourself (`interpreter config set KEY VALUE`)".to_owned(),
        };
    }
    match policy.mode {
        SandboxMode::ReadOnly => Denial {
            message: format!(
                "blocked by sandbox: changing {} is not allowed in read-only mode",
                path.display()
            ),
            hint: "let code write in the workspace with `--sandbox workspace-write`".to_owned(),
        },
        _ => {
            let writable: Vec<String> = policy
                .writable()
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            Denial {
                message: format!(
                    "blocked by sandbox: changing {} is not allowed ({} mode: code may change files only in {}{})",
                    path.display(),
                    policy.mode,
                    writable.join(", "),
                    if policy.in_container() {
                        " and the container's own /tmp"
                    } else {
                        ""
                    }
                ),
                hint: format!(
                    "allow a folder with `--add-dir {}` (config `writable_roots`), or run with `--sandbox full-access`",
                    path.parent().unwrap_or(path).display()
                ),
            }
        }
    }
}

/// `/proc`, `/sys` and `/dev`: files that stand for processes, the kernel
/// and devices.
fn is_pseudo_file_system(path: &Path) -> bool {
    ["/proc", "/sys", "/dev"]
        .iter()
        .any(|root| path.starts_with(root))
}

fn pseudo_denial(path: &Path) -> Denial {
    Denial {
        message: format!(
            "blocked by sandbox: {} is out of reach of sandboxed code (other processes, the kernel's settings and devices are)",
            path.display()
        ),
        hint: "if the code really needs it, run with `--sandbox full-access`".to_owned(),
    }
}

/// Whether oi itself, unconfined, may read or change `path` (a path that
/// does not exist yet: create it in the nearest folder that does).
#[cfg(target_os = "linux")]
fn host_allows(path: &Path, access: Access) -> bool {
    use nix::unistd::{AccessFlags, access as check};
    let flags = match access {
        Access::Read => AccessFlags::R_OK,
        Access::Write => AccessFlags::W_OK,
    };
    let existing = path.ancestors().find(|p| p.symlink_metadata().is_ok());
    match existing {
        Some(p) if p == path => check(p, flags).is_ok(),
        Some(folder) => access == Access::Write && check(folder, AccessFlags::W_OK).is_ok(),
        None => false,
    }
}

#[cfg(not(target_os = "linux"))]
fn host_allows(_path: &Path, _access: Access) -> bool {
    true
}

fn looks_like_write_refusal(lower: &str) -> bool {
    [
        "permission denied",
        "read-only file system",
        "eacces",
        "erofs",
        "operation not permitted",
    ]
    .iter()
    .any(|p| lower.contains(p))
}

fn looks_like_missing(lower: &str) -> bool {
    [
        "no such file or directory",
        "enoent",
        "directory nonexistent",
    ]
    .iter()
    .any(|p| lower.contains(p))
}

fn looks_like_network_refusal(lower: &str) -> bool {
    let name_lookup = [
        "temporary failure in name resolution",
        "could not resolve host",
        "name or service not known",
        "getaddrinfo",
        "eai_again",
        // Node's code as a word (`FileNotFoundError` holds the letters too).
        " enotfound",
        "'enotfound'",
        "network is unreachable",
        "failed to establish a new connection",
    ]
    .iter()
    .any(|p| lower.contains(p));
    let refused_socket = (lower.contains("operation not permitted")
        || lower.contains("eperm")
        || lower.contains("errno 1]"))
        && ["socket", "connect", "http", "url", "network", "host"]
            .iter()
            .any(|w| lower.contains(w));
    name_lookup || refused_socket
}

/// Things in `line` that look like paths: quoted strings, and `: `-separated
/// fields (as bash and coreutils print them) that start like a path. A
/// shell's error names the script it runs first (`/dev/fd/7: line 3:
/// docs/a.md: Permission denied`, `/bin/sh: 1: …`): that script is what
/// reports the error, never what was refused.
fn paths_in(line: &str) -> Vec<String> {
    let line = without_script_name(line);
    let mut found = Vec::new();
    let quotes = [
        ('\'', '\''),
        ('"', '"'),
        ('‘', '’'),
        ('“', '”'),
        ('`', '\''),
    ];
    for (open, close) in quotes {
        let mut rest = line;
        while let Some(start) = rest.find(open) {
            let after = &rest[start + open.len_utf8()..];
            let Some(end) = after.find(close) else { break };
            let inner = &after[..end];
            if !inner.is_empty() && !inner.contains('\n') && looks_like_path(inner, true) {
                found.push(inner.to_owned());
            }
            rest = &after[end + close.len_utf8()..];
        }
    }
    for field in line.split(": ") {
        let field = field.trim();
        let field = field.strip_prefix("open ").unwrap_or(field);
        if looks_like_path(field, false) && !found.iter().any(|f| f == field) {
            found.push(field.to_owned());
        }
    }
    // Unquoted paths inside a message (`sh: 1: cannot create /x: …`).
    for word in line.split_whitespace() {
        let word = word.trim_end_matches([':', ',', ';', ')', '.']);
        if looks_like_path(word, false) && !found.iter().any(|f| f == word) {
            found.push(word.to_owned());
        }
    }
    found
}

/// `line` without the `SCRIPT: line N: ` (bash) or `SCRIPT: N: ` (dash)
/// that starts a shell's error message.
fn without_script_name(line: &str) -> &str {
    let mut fields = line.splitn(3, ": ");
    let (Some(_script), Some(place), Some(rest)) = (fields.next(), fields.next(), fields.next())
    else {
        return line;
    };
    let number = place.strip_prefix("line ").unwrap_or(place);
    if !number.is_empty() && number.chars().all(|c| c.is_ascii_digit()) {
        rest
    } else {
        line
    }
}

/// A quoted string is a path unless it is clearly not (spaces and no
/// slash); an unquoted field must start like one.
fn looks_like_path(text: &str, quoted: bool) -> bool {
    let starts_like_path = text.starts_with('/')
        || text.starts_with("./")
        || text.starts_with("../")
        || text.starts_with("~/");
    if quoted {
        starts_like_path || !text.contains(' ')
    } else {
        starts_like_path && !text.contains(' ')
    }
}

fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As if oi itself could read and change everything (as root can),
    /// so the tests do not depend on who runs them.
    fn explain(policy: &Policy, output: &str, cwd: &Path) -> Vec<Denial> {
        explain_with(policy, output, cwd, &|_, _| true)
    }

    fn workspace_policy() -> (tempfile::TempDir, Policy) {
        let ws = tempfile::tempdir().unwrap();
        fs_err::create_dir(ws.path().join(".git")).unwrap();
        let policy = Policy::new(SandboxMode::WorkspaceWrite, ws.path());
        (ws, policy)
    }

    #[test]
    fn writes_outside_the_workspace_are_explained_in_each_tools_words() {
        let (_ws, policy) = workspace_policy();
        for output in [
            "PermissionError: [Errno 13] Permission denied: '/etc/oi-test'",
            "bash: line 1: /etc/oi-test: Permission denied",
            "touch: cannot touch '/etc/oi-test': Permission denied",
            "Error: EACCES: permission denied, open '/etc/oi-test'",
            "sh: 1: cannot create /etc/oi-test: Permission denied",
        ] {
            let denials = explain(&policy, output, &policy.workspace);
            assert_eq!(denials.len(), 1, "{output}");
            assert!(
                denials[0]
                    .message
                    .starts_with("blocked by sandbox: changing /etc/oi-test is not allowed"),
                "{denials:?}"
            );
            assert!(denials[0].hint.contains("--add-dir /etc"), "{denials:?}");
        }
    }

    #[test]
    fn the_read_only_git_folder_is_named() {
        let (ws, policy) = workspace_policy();
        let output = format!(
            "OSError: [Errno 30] Read-only file system: '{}'",
            ws.path().join(".git/config").display()
        );
        let denials = explain(&policy, &output, &policy.workspace);
        assert_eq!(denials.len(), 1);
        assert!(
            denials[0]
                .message
                .contains("keeps the workspace's .git folder read-only")
        );
        // Relative paths count from the kernel's working directory.
        let denials = explain(
            &policy,
            "cp: cannot create regular file '.git/HEAD': Read-only file system",
            &policy.workspace,
        );
        assert_eq!(denials.len(), 1, "{denials:?}");
        let denials = explain(
            &policy,
            "touch: cannot touch 'x': Permission denied",
            Path::new("/etc"),
        );
        assert!(denials[0].message.contains("/etc/x"), "{denials:?}");
    }

    #[test]
    fn allowed_paths_and_unrelated_errors_are_not_blamed_on_the_sandbox() {
        let (ws, policy) = workspace_policy();
        let inside = format!(
            "PermissionError: [Errno 13] Permission denied: '{}'",
            ws.path().join("locked.txt").display()
        );
        assert!(explain(&policy, &inside, &policy.workspace).is_empty());
        assert!(
            explain(
                &policy,
                "ZeroDivisionError: division by zero",
                &policy.workspace
            )
            .is_empty()
        );
        assert!(
            explain(
                &policy,
                "Could not resolve host: example.invalid",
                &policy.workspace
            )
            .is_empty()
        );
        let full = Policy::new(SandboxMode::FullAccess, ws.path());
        assert!(explain(&full, "bash: /etc/x: Permission denied", &full.workspace).is_empty());
    }

    #[test]
    fn in_a_container_folders_that_are_not_mounted_are_explained() {
        let ws = tempfile::tempdir().unwrap();
        let mut policy = Policy::new(SandboxMode::Container, ws.path());
        policy.network = false;
        let outside = "/var/oi-test/new.txt";
        for output in [
            format!("FileNotFoundError: [Errno 2] No such file or directory: '{outside}'"),
            format!("sh: 1: cannot create {outside}: Directory nonexistent"),
            "touch: cannot touch '/etc/oi-test': Read-only file system".to_owned(),
        ] {
            let denials = explain(&policy, &output, &policy.workspace);
            assert_eq!(denials.len(), 1, "{output}");
            assert!(
                denials[0]
                    .message
                    .contains("container mode: code may change files only in")
                    && denials[0].message.contains("the container's own /tmp"),
                "{denials:?}"
            );
        }
        // A file missing in the workspace is the code's own mistake.
        let inside = ws.path().join("data.csv");
        let output = format!(
            "FileNotFoundError: [Errno 2] No such file or directory: '{}'",
            inside.display()
        );
        assert_eq!(explain(&policy, &output, &policy.workspace), vec![]);
        let denials = explain(
            &policy,
            "OSError: [Errno 101] Network is unreachable",
            &policy.workspace,
        );
        assert!(
            denials[0].message.contains("the container has no network"),
            "{denials:?}"
        );
        assert!(denials[0].hint.contains("container.network"), "{denials:?}");
    }

    #[test]
    fn refused_sockets_are_explained_when_the_network_is_off() {
        let (_ws, mut policy) = workspace_policy();
        policy.network = false;
        for output in [
            "PermissionError: [Errno 1] Operation not permitted\n  in socket.socket()",
            "urllib.error.URLError: <urlopen error [Errno 1] Operation not permitted>",
            "curl: (6) Could not resolve host: example.com",
            "socket.gaierror: [Errno -3] Temporary failure in name resolution",
        ] {
            let denials = explain(&policy, output, &policy.workspace);
            assert_eq!(denials.len(), 1, "{output}");
            assert!(denials[0].message.contains("network access is off"));
        }
    }

    #[test]
    fn read_only_mode_refuses_the_workspace_too() {
        let ws = tempfile::tempdir().unwrap();
        let policy = Policy::new(SandboxMode::ReadOnly, ws.path());
        let denials = explain(
            &policy,
            "bash: out.txt: Permission denied",
            &policy.workspace,
        );
        assert!(denials.is_empty(), "bare names are not taken for paths");
        let denials = explain(
            &policy,
            "PermissionError: [Errno 13] Permission denied: 'out.txt'",
            &policy.workspace,
        );
        assert_eq!(denials.len(), 1);
        assert!(denials[0].message.contains("read-only mode"));
    }

    #[test]
    fn what_the_user_could_not_change_anyway_is_not_blamed_on_the_sandbox() {
        // Regression: a refusal by ordinary permissions was reported as
        // "blocked by sandbox: changing …" with a hint to --add-dir.
        let (_ws, policy) = workspace_policy();
        let output = "PermissionError: [Errno 13] Permission denied: '/etc/shadow'";
        let only_reads = |_: &Path, access: Access| access == Access::Read;
        assert!(explain_with(&policy, output, &policy.workspace, &only_reads).is_empty());
        let nothing = |_: &Path, _: Access| false;
        assert!(explain_with(&policy, output, &policy.workspace, &nothing).is_empty());
    }

    #[test]
    fn the_script_a_shell_error_comes_from_is_not_what_was_refused() {
        // Regression: running a plain file as a command
        // (`docs/a.md: Permission denied`, exit 126) was put down to the
        // sandbox refusing /dev/fd/7, the script bash was reading.
        let (_ws, policy) = workspace_policy();
        for output in [
            "/dev/fd/7: line 3: docs/old_setup.md: Permission denied",
            "/bin/sh: 1: ./notes.txt: Permission denied",
        ] {
            assert!(
                explain(&policy, output, &policy.workspace).is_empty(),
                "{output}"
            );
        }
        // What the script refers to is still read.
        let denials = explain(
            &policy,
            "/dev/fd/7: line 1: /etc/hosts: Permission denied",
            &policy.workspace,
        );
        assert_eq!(denials.len(), 1, "{denials:?}");
        assert!(denials[0].message.contains("/etc/hosts"), "{denials:?}");
    }

    #[test]
    fn proc_and_devices_are_never_offered_as_folders_to_add() {
        // Regression: a read of /proc/1/environ refused with EACCES was
        // "changing /proc/1/environ" with a hint to `--add-dir /proc/1`.
        let (_ws, policy) = workspace_policy();
        for output in [
            "cat: /proc/1/environ: Permission denied",
            "PermissionError: [Errno 13] Permission denied: '/proc/1/mem'",
            "bash: /dev/sda: Permission denied",
            "tee: /sys/kernel/mm/transparent_hugepage/enabled: Read-only file system",
        ] {
            let denials = explain(&policy, output, &policy.workspace);
            assert_eq!(denials.len(), 1, "{output}");
            assert!(
                denials[0]
                    .message
                    .contains("out of reach of sandboxed code"),
                "{denials:?}"
            );
            assert!(!denials[0].message.contains("changing"), "{denials:?}");
            assert!(!denials[0].hint.contains("--add-dir"), "{denials:?}");
            assert!(
                denials[0].hint.contains("--sandbox full-access"),
                "{denials:?}"
            );
        }
        // Unreadable to oi as well: the system's doing, not the sandbox's.
        let nothing = |_: &Path, _: Access| false;
        assert!(
            explain_with(
                &policy,
                "cat: /proc/1/environ: Permission denied",
                &policy.workspace,
                &nothing
            )
            .is_empty()
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_host_check_reads_real_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        fs_err::write(&file, "x").unwrap();
        assert!(host_allows(&file, Access::Read));
        assert!(host_allows(&file, Access::Write));
        // A new file, in a folder that exists.
        assert!(host_allows(&dir.path().join("new/deeper"), Access::Write));
        assert!(!host_allows(&dir.path().join("missing"), Access::Read));
    }
}
