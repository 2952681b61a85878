//! The escape suite: under each sandbox mode, code in Python, in the shell
//! and in a child process tries to write where it may not (outside the
//! workspace, through a symbolic link, through `..`, through a hard link,
//! after `cd`, into `.git`) and to reach the network when it is off. Every
//! attempt must fail and be explained as "blocked by sandbox"; the allowed
//! places must still work.
//!
//! Workspaces live outside the system temporary folder (which
//! workspace-write mode allows): in `/var/tmp`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::print_stderr,
    reason = "test code: a panic is a test failure; skips are explained on stderr"
)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use oi_kernels::{KernelManager, LanguageSpec, RunControl, RunEvent, detect_languages};
use oi_protocol::{RunStatus, SandboxMode};
use oi_sandbox::{Policy, explain};
use tokio_util::sync::CancellationToken;

struct Place {
    _root: tempfile::TempDir,
    workspace: PathBuf,
    outside: PathBuf,
    added: PathBuf,
}

fn place() -> Place {
    let root = tempfile::tempdir_in(outside_base()).unwrap();
    let workspace = root.path().join("workspace");
    let outside = root.path().join("outside");
    let added = root.path().join("added");
    for dir in [&workspace, &outside, &added] {
        std::fs::create_dir(dir).unwrap();
    }
    std::fs::create_dir(workspace.join(".git")).unwrap();
    std::fs::write(workspace.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(outside.join("victim.txt"), "original\n").unwrap();
    std::os::unix::fs::symlink(&outside, workspace.join("link")).unwrap();
    Place {
        workspace,
        outside,
        added,
        _root: root,
    }
}

/// A folder outside the system's temporary folder (which workspace-write
/// mode lets code write): `/var/tmp`, else Cargo's target folder when it is
/// not under `/tmp` itself.
fn outside_base() -> std::path::PathBuf {
    let temp = std::env::temp_dir();
    for candidate in ["/var/tmp", env!("CARGO_TARGET_TMPDIR")] {
        let path = std::path::Path::new(candidate);
        if path.is_dir() && !path.starts_with("/tmp") && !path.starts_with(&temp) {
            return path.to_path_buf();
        }
    }
    panic!(
        "no folder outside /tmp to test the sandbox with (tried /var/tmp and Cargo's target folder)"
    )
}

fn sandbox_available() -> bool {
    oi_testkit::present_or_skip(
        oi_testkit::Need::Sandbox,
        oi_sandbox::support().landlock,
        "this kernel has no Landlock",
    )
}

fn kernels(policy: &Policy) -> KernelManager {
    let languages: Vec<LanguageSpec> = detect_languages()
        .into_iter()
        .filter(|l| l.name == "python" || l.name == "shell")
        .collect();
    KernelManager::new(languages, &policy.workspace).with_sandbox(policy.clone())
}

async fn run(k: &mut KernelManager, language: &str, code: &str) -> (RunStatus, String) {
    let output = Arc::new(Mutex::new(String::new()));
    let sink_output = Arc::clone(&output);
    let mut sink = move |event: RunEvent| {
        if let RunEvent::Output { text, .. } = event {
            sink_output.lock().unwrap().push_str(&text);
        }
    };
    let cancel = CancellationToken::new();
    let outcome = k
        .run(language, code, &mut sink, RunControl::cancel(&cancel))
        .await
        .unwrap();
    let text = output.lock().unwrap().clone();
    (outcome.status, text)
}

/// Ways to write `path` from each language and from a child process.
fn writers(path: &Path) -> Vec<(&'static str, String)> {
    let p = path.display();
    vec![
        (
            "python",
            format!("open({:?}, 'a').write('escaped\\n')", p.to_string()),
        ),
        ("shell", format!("echo escaped >> '{p}'")),
        (
            "python",
            format!(
                "import subprocess\nsubprocess.run(['sh', '-c', \"echo escaped >> '{p}'\"], check=True)"
            ),
        ),
    ]
}

/// Tries every writer on `target`; each must fail, leave `target` as it
/// was, and be explained as blocked by the sandbox.
async fn assert_blocked(k: &mut KernelManager, policy: &Policy, target: &Path) {
    let before = std::fs::read(target).ok();
    for (language, code) in writers(target) {
        let (status, output) = run(k, language, &code).await;
        let after = std::fs::read(target).ok();
        if after != before {
            // Undo the escape before failing, so nothing is left behind.
            match &before {
                Some(bytes) => std::fs::write(target, bytes).unwrap(),
                None => {
                    let _ = std::fs::remove_file(target);
                }
            }
            panic!(
                "{language} wrote {} under {}:\n{code}",
                target.display(),
                policy.mode
            );
        }
        assert_ne!(status, RunStatus::Ok, "{language}: {code}\n{output}");
        // Where the test's own user could not write either (`/etc` for a
        // user who is not root), the refusal is not the sandbox's doing.
        if !host_can_write(target) {
            continue;
        }
        let denials = explain(policy, &output, &k.current_dir(language));
        assert!(
            denials
                .iter()
                .any(|d| d.message.starts_with("blocked by sandbox")),
            "not explained: {language}: {code}\n{output}"
        );
    }
}

/// Writes outside the workspace, directly and through a symbolic link,
/// `..` and into `/etc`, are all refused.
async fn assert_detours_blocked(k: &mut KernelManager, policy: &Policy, place: &Place) {
    for target in [
        place.outside.join("new.txt"),
        place.outside.join("victim.txt"),
        place.workspace.join("link/victim.txt"),
        place.workspace.join("../outside/victim.txt"),
        PathBuf::from("/etc/oi-sandbox-escape-test"),
    ] {
        assert_blocked(k, policy, &target).await;
    }
}

/// A hard link to a file outside cannot be made (or written through).
async fn assert_hard_link_cannot_escape(k: &mut KernelManager, place: &Place) {
    let victim = place.outside.join("victim.txt");
    let (_, output) = run(
        k,
        "shell",
        &format!(
            "ln '{}' hard.txt; echo escaped >> hard.txt",
            victim.display()
        ),
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "original\n",
        "{output}"
    );
}

/// Whether this process, unconfined, may write `target` (or create it).
fn host_can_write(target: &Path) -> bool {
    if target.exists() {
        return std::fs::OpenOptions::new()
            .append(true)
            .open(target)
            .is_ok();
    }
    let probe = target.with_file_name(".oi-host-write-probe");
    let created = std::fs::File::create(&probe).is_ok();
    let _ = std::fs::remove_file(&probe);
    created
}

async fn assert_allowed(k: &mut KernelManager, target: &Path) {
    for (language, code) in writers(target) {
        let (status, output) = run(k, language, &code).await;
        assert_eq!(status, RunStatus::Ok, "{language}: {code}\n{output}");
    }
    let text = std::fs::read_to_string(target).unwrap();
    assert_eq!(text, "escaped\n".repeat(3), "{}", target.display());
}

#[tokio::test]
async fn workspace_write_keeps_writes_in_the_workspace() {
    if !sandbox_available() {
        return;
    }
    let place = place();
    let mut policy = Policy::new(SandboxMode::WorkspaceWrite, &place.workspace);
    policy.writable_roots.push(place.added.clone());
    let mut k = kernels(&policy);

    // Outside the workspace, directly and by every detour.
    assert_detours_blocked(&mut k, &policy, &place).await;
    if let Some(home) = std::env::var_os("HOME") {
        assert_blocked(
            &mut k,
            &policy,
            &PathBuf::from(home).join("oi-sandbox-escape-test"),
        )
        .await;
    }
    // After changing directory.
    let (status, output) = run(
        &mut k,
        "shell",
        &format!("cd '{}' && touch after-cd.txt", place.outside.display()),
    )
    .await;
    assert_ne!(status, RunStatus::Ok);
    assert!(!place.outside.join("after-cd.txt").exists());
    assert!(
        !explain(&policy, &output, &k.current_dir("shell")).is_empty(),
        "{output}"
    );
    let (status, _) = run(
        &mut k,
        "shell",
        &format!("cd '{}'", place.workspace.display()),
    )
    .await;
    assert_eq!(status, RunStatus::Ok);
    // A hard link to a file outside cannot be made (or written through).
    assert_hard_link_cannot_escape(&mut k, &place).await;

    // The workspace's history stays read-only, when namespaces allow it.
    if namespaces_available() {
        assert_blocked(&mut k, &policy, &place.workspace.join(".git/config")).await;
        assert_blocked(&mut k, &policy, &place.workspace.join(".git/new-hook")).await;
    }

    // The allowed places still work.
    assert_allowed(&mut k, &place.workspace.join("result.txt")).await;
    assert_allowed(&mut k, &place.added.join("extra.txt")).await;
    let in_tmp = tempfile::NamedTempFile::new().unwrap();
    std::fs::remove_file(in_tmp.path()).unwrap();
    assert_allowed(&mut k, in_tmp.path()).await;
    let (status, output) = run(
        &mut k,
        "python",
        "import tempfile\nwith tempfile.NamedTemporaryFile() as f:\n    f.write(b'x')\nprint('ok')",
    )
    .await;
    assert_eq!((status, output.as_str()), (RunStatus::Ok, "ok\n"));
    k.shutdown().await;
}

#[tokio::test]
async fn refused_reads_of_processes_are_not_taken_for_changes() {
    // Regression: `cat /proc/1/environ` refused inside the sandbox was
    // reported as "blocked by sandbox: changing /proc/1/environ" with a
    // hint to `--add-dir /proc/1`.
    if !sandbox_available() || !namespaces_available() {
        return;
    }
    let place = place();
    let policy = Policy::new(SandboxMode::WorkspaceWrite, &place.workspace);
    let mut k = kernels(&policy);
    for (language, code) in [
        ("shell", "cat /proc/1/environ > /dev/null"),
        ("python", "open('/proc/1/environ', 'rb').read()"),
        ("shell", "ls /proc/1/root"),
    ] {
        let (_, output) = run(&mut k, language, code).await;
        let denials = explain(&policy, &output, &k.current_dir(language));
        for denial in &denials {
            assert!(
                !denial.message.contains("changing") && !denial.hint.contains("--add-dir"),
                "{language}: {code}\n{output}\n{denial:?}"
            );
        }
        // Where oi itself may read it (as root), the sandbox is why not.
        if std::fs::read("/proc/1/environ").is_ok() {
            assert!(
                denials
                    .iter()
                    .any(|d| d.message.contains("out of reach of sandboxed code")),
                "{language}: {code}\n{output}\n{denials:?}"
            );
        }
    }
}

#[tokio::test]
async fn read_only_allows_no_writes_but_the_kernels_own_temporary_files() {
    if !sandbox_available() {
        return;
    }
    let place = place();
    let policy = Policy::new(SandboxMode::ReadOnly, &place.workspace);
    let mut k = kernels(&policy);
    assert_blocked(&mut k, &policy, &place.workspace.join("new.txt")).await;
    assert_blocked(&mut k, &policy, &place.outside.join("victim.txt")).await;
    let shared_tmp = std::env::temp_dir().join(format!("oi-ro-{}", std::process::id()));
    assert_blocked(&mut k, &policy, &shared_tmp).await;
    // Reading works, and so do temporary files and /dev/null.
    let (status, output) = run(
        &mut k,
        "python",
        &format!(
            "print(open({:?}).read(), end='')\nimport tempfile\nwith tempfile.TemporaryFile() as f:\n    f.write(b'x')\n_ = open('/dev/null', 'w').write('x')",
            place.outside.join("victim.txt").display().to_string()
        ),
    )
    .await;
    assert_eq!((status, output.as_str()), (RunStatus::Ok, "original\n"));
    let (status, output) = run(
        &mut k,
        "shell",
        "t=$(mktemp) && echo hi > \"$t\" && cat \"$t\" && echo x > /dev/null",
    )
    .await;
    assert_eq!((status, output.as_str()), (RunStatus::Ok, "hi\n"));
    k.shutdown().await;
}

#[tokio::test]
async fn with_the_network_off_sockets_are_refused_but_unix_sockets_work() {
    if !sandbox_available()
        || !oi_testkit::present_or_skip(
            oi_testkit::Need::Sandbox,
            oi_sandbox::support().seccomp,
            "this kernel has no seccomp",
        )
    {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let place = place();
    let mut policy = Policy::new(SandboxMode::WorkspaceWrite, &place.workspace);

    // On: a local TCP connection works.
    let mut k = kernels(&policy);
    let connect = format!(
        "import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=5).close()\nprint('connected')"
    );
    let (status, output) = run(&mut k, "python", &connect).await;
    assert_eq!((status, output.as_str()), (RunStatus::Ok, "connected\n"));
    k.shutdown().await;

    // Off: TCP, DNS and a child's connection are refused and explained.
    policy.network = false;
    let mut k = kernels(&policy);
    let attempts = [
        ("python", connect.clone()),
        (
            "python",
            "import socket\nsocket.getaddrinfo('example.com', 80)".to_owned(),
        ),
        (
            "shell",
            format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"),
        ),
        (
            "python",
            format!(
                "import subprocess, sys\nsubprocess.run([sys.executable, '-c', \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)\"], check=True)"
            ),
        ),
    ];
    for (language, code) in attempts {
        let (status, output) = run(&mut k, language, &code).await;
        assert_ne!(status, RunStatus::Ok, "{code}\n{output}");
        assert!(!output.contains("connected"), "{output}");
        let denials = explain(&policy, &output, &policy.workspace);
        assert!(
            denials
                .iter()
                .any(|d| d.message.contains("network access is off")),
            "not explained: {code}\n{output}"
        );
    }
    // Unix sockets stay available.
    let (status, output) = run(
        &mut k,
        "python",
        "import socket\na, b = socket.socketpair()\na.send(b'unix ok')\nprint(b.recv(7).decode())",
    )
    .await;
    assert_eq!((status, output.as_str()), (RunStatus::Ok, "unix ok\n"));
    k.shutdown().await;
}

#[tokio::test]
async fn full_access_confines_nothing() {
    let place = place();
    let policy = Policy::new(SandboxMode::FullAccess, &place.workspace);
    let mut k = kernels(&policy);
    let target = place.outside.join("free.txt");
    assert_allowed(&mut k, &target).await;
    k.shutdown().await;
}

/// The mode bits and modification time of `path`.
fn metadata_of(path: &Path) -> (u32, i64) {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).unwrap();
    (meta.mode(), meta.mtime())
}

/// Ways to change the permissions or times of `path`, from each language
/// and a child process.
fn metadata_changers(path: &Path) -> Vec<(&'static str, String)> {
    let p = path.display().to_string();
    vec![
        ("python", format!("import os\nos.chmod({p:?}, 0o4777)")),
        ("python", format!("import os\nos.utime({p:?}, (0, 0))")),
        ("shell", format!("chmod 777 '{p}'")),
        ("shell", format!("chmod -R 000 '{p}'")),
        ("shell", format!("touch -d 2001-01-01 '{p}'")),
        (
            "python",
            format!("import subprocess\nsubprocess.run(['chmod', 'u+s', {p:?}], check=True)"),
        ),
    ]
}

/// Tries every change of permissions or times on `target`; each must fail,
/// leave it as it was, and be explained as blocked by the sandbox.
async fn assert_metadata_blocked(k: &mut KernelManager, policy: &Policy, target: &Path) {
    let before = metadata_of(target);
    for (language, code) in metadata_changers(target) {
        let (status, output) = run(k, language, &code).await;
        let after = metadata_of(target);
        if after != before {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(target, std::fs::Permissions::from_mode(before.0)).unwrap();
            panic!(
                "{language} changed {} under {} ({before:?} → {after:?}):\n{code}\n{output}",
                target.display(),
                policy.mode
            );
        }
        assert_ne!(status, RunStatus::Ok, "{language}: {code}\n{output}");
        let denials = explain(policy, &output, &k.current_dir(language));
        assert!(
            denials
                .iter()
                .any(|d| d.message.starts_with("blocked by sandbox")),
            "not explained: {language}: {code}\n{output}"
        );
    }
}

fn namespaces_available() -> bool {
    oi_testkit::present_or_skip(
        oi_testkit::Need::Sandbox,
        oi_sandbox::support().namespaces,
        "this system has no user namespaces to make the file system read-only",
    )
}

#[tokio::test]
async fn permission_and_time_changes_are_confined_like_writes() {
    if !sandbox_available() || !namespaces_available() {
        return;
    }
    let place = place();
    let victim = place.outside.join("victim.txt");
    let inside = place.workspace.join("script.sh");
    std::fs::write(&inside, "echo hi\n").unwrap();

    let policy = Policy::new(SandboxMode::WorkspaceWrite, &place.workspace);
    let mut k = kernels(&policy);
    assert_metadata_blocked(&mut k, &policy, &victim).await;
    assert_metadata_blocked(&mut k, &policy, &place.outside).await;
    assert_metadata_blocked(&mut k, &policy, &place.workspace.join("link/victim.txt")).await;
    if namespaces_available() {
        assert_metadata_blocked(&mut k, &policy, &place.workspace.join(".git/config")).await;
    }
    // In the workspace they still work.
    let (status, output) = run(
        &mut k,
        "shell",
        "chmod +x script.sh && touch -d 2001-01-01 script.sh && ./script.sh",
    )
    .await;
    assert_eq!((status, output.as_str()), (RunStatus::Ok, "hi\n"));
    assert_eq!(
        metadata_of(&inside).1,
        978_307_200,
        "touch set the time in the workspace"
    );
    k.shutdown().await;

    // Read-only: not even in the workspace.
    let policy = Policy::new(SandboxMode::ReadOnly, &place.workspace);
    let mut k = kernels(&policy);
    assert_metadata_blocked(&mut k, &policy, &inside).await;
    assert_metadata_blocked(&mut k, &policy, &victim).await;
    k.shutdown().await;
}

#[tokio::test]
async fn dev_shm_is_private_to_the_kernel() {
    if !sandbox_available() || !namespaces_available() {
        return;
    }
    if !oi_testkit::present_or_skip(
        oi_testkit::Need::Sandbox,
        Path::new("/dev/shm").is_dir(),
        "this system has no /dev/shm",
    ) {
        return;
    }
    let place = place();
    let host_file = tempfile::Builder::new()
        .prefix("oi-shm-host-")
        .tempfile_in("/dev/shm")
        .unwrap();
    std::fs::write(host_file.path(), "host\n").unwrap();
    let name = format!("oi-shm-kernel-{}", std::process::id());
    for mode in [SandboxMode::WorkspaceWrite, SandboxMode::ReadOnly] {
        let policy = Policy::new(mode, &place.workspace);
        let mut k = kernels(&policy);
        // Shared memory works (Python's multiprocessing needs it) …
        let (status, output) = run(
            &mut k,
            "python",
            &format!(
                "import multiprocessing, os\nmultiprocessing.Lock()\nopen('/dev/shm/{name}', 'w').write('x')\nprint(sorted(os.listdir('/dev/shm')))"
            ),
        )
        .await;
        assert_eq!(status, RunStatus::Ok, "{mode}: {output}");
        // … but in a folder of the kernel's own: the system's is neither
        // seen nor changed.
        assert_eq!(output, format!("['{name}']\n"), "{mode}");
        assert!(!Path::new("/dev/shm").join(&name).exists(), "{mode}");
        let host = host_file.path().display().to_string();
        let (_, output) = run(
            &mut k,
            "shell",
            &format!("echo changed > '{host}'; rm -f '{host}'; chmod 777 '{host}'"),
        )
        .await;
        assert_eq!(
            std::fs::read_to_string(host_file.path()).unwrap(),
            "host\n",
            "{mode}: {output}"
        );
        k.shutdown().await;
    }
}

#[tokio::test]
async fn ois_own_folder_stays_closed_even_inside_a_writable_one() {
    if !sandbox_available() || !namespaces_available() {
        return;
    }
    // oi's folder in the system's temporary folder, which workspace-write
    // mode lets code write.
    let home = tempfile::Builder::new()
        .prefix("oi-home-")
        .tempdir()
        .unwrap();
    let config = home.path().join("config.toml");
    std::fs::write(&config, "model = \"x\"\n").unwrap();
    let checkpoints = home.path().join("checkpoints");
    std::fs::create_dir(&checkpoints).unwrap();
    let images = home.path().join("sessions/s1/images");
    std::fs::create_dir_all(&images).unwrap();
    let place = place();
    for mode in [SandboxMode::WorkspaceWrite, SandboxMode::ReadOnly] {
        let mut policy = Policy::new(mode, &place.workspace);
        policy.protected_roots.push(home.path().to_path_buf());
        if mode == SandboxMode::WorkspaceWrite {
            // Even a writable root around it does not open it.
            policy
                .writable_roots
                .push(home.path().parent().unwrap().to_path_buf());
        }
        let languages: Vec<LanguageSpec> = detect_languages()
            .into_iter()
            .filter(|l| l.name == "python" || l.name == "shell")
            .collect();
        let mut k = KernelManager::new(languages, &place.workspace)
            .with_image_dir(&images)
            .with_sandbox(policy.clone());
        assert_blocked(&mut k, &policy, &config).await;
        assert_blocked(&mut k, &policy, &checkpoints.join("HEAD")).await;
        assert_blocked(&mut k, &policy, &home.path().join("trusted.toml")).await;
        assert_metadata_blocked(&mut k, &policy, &config).await;
        let denials = explain(
            &policy,
            &format!(
                "OSError: [Errno 30] Read-only file system: '{}'",
                config.display()
            ),
            &place.workspace,
        );
        assert!(
            denials[0].message.contains("oi's own folder"),
            "{denials:?}"
        );
        // The kernel's own image folder inside it stays writable.
        let (status, output) = run(
            &mut k,
            "python",
            &format!(
                "open({:?}, 'wb').write(b'png')\nprint('saved')",
                images.join("plot.png").display().to_string()
            ),
        )
        .await;
        assert_eq!(
            (status, output.as_str()),
            (RunStatus::Ok, "saved\n"),
            "{mode}"
        );
        k.shutdown().await;
    }
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "model = \"x\"\n");
}

#[tokio::test]
async fn a_container_keeps_writes_in_the_workspace() {
    let Some(image) = oi_testkit::container_image() else {
        return;
    };
    let place = place();
    let mut policy = Policy::new(SandboxMode::Container, &place.workspace);
    policy.network = false;
    policy.writable_roots.push(place.added.clone());
    let mut k = KernelManager::new(
        vec![
            LanguageSpec::python("/usr/bin/python3"),
            LanguageSpec::shell("/bin/bash"),
        ],
        &policy.workspace,
    )
    .with_sandbox(policy.clone())
    .with_container(oi_kernels::ContainerSpec::new(image));

    // Outside the mounts, directly and by every detour: those folders are
    // not in the container at all.
    assert_detours_blocked(&mut k, &policy, &place).await;
    assert_blocked(&mut k, &policy, &place.workspace.join(".git/config")).await;
    assert_blocked(&mut k, &policy, &place.workspace.join(".git/new-hook")).await;
    assert_hard_link_cannot_escape(&mut k, &place).await;
    // Nor the network, nor the host's processes.
    let (_, output) = run(
        &mut k,
        "python",
        "import socket\ntry:\n    socket.create_connection(('192.0.2.1', 80), timeout=3)\n    print('connected')\nexcept OSError as e:\n    print('refused:', e)",
    )
    .await;
    assert!(output.starts_with("refused:"), "{output}");
    let (_, output) = run(&mut k, "shell", "ls /proc | grep -c '^[0-9]'").await;
    let visible: u32 = output.trim().parse().unwrap();
    assert!(visible < 20, "the container sees {visible} processes");

    // The allowed places still work.
    assert_allowed(&mut k, &place.workspace.join("result.txt")).await;
    assert_allowed(&mut k, &place.added.join("extra.txt")).await;
    let (status, output) = run(
        &mut k,
        "python",
        "import tempfile\nwith tempfile.NamedTemporaryFile() as f:\n    f.write(b'x')\nprint('ok')",
    )
    .await;
    assert_eq!((status, output.as_str()), (RunStatus::Ok, "ok\n"));
    k.shutdown().await;
}

/// `pip install` under workspace-write: the package goes to oi's own user
/// folder (in its cache, outside every writable root) and imports at once
/// in the kernel that installed it, and in the next one; nothing lands in
/// the user's own folders.
#[tokio::test]
async fn pip_installs_into_ois_user_folder_and_the_package_imports_at_once() {
    if !sandbox_available() {
        return;
    }
    let place = place();
    let cache = place.outside.join("cache");
    let policy = Policy::new(SandboxMode::WorkspaceWrite, &place.workspace);
    let languages: Vec<LanguageSpec> = detect_languages()
        .into_iter()
        .filter(|l| l.name == "python" || l.name == "shell")
        .collect();
    let mut k = KernelManager::new(languages.clone(), &place.workspace)
        .with_cache_dir(&cache)
        .with_sandbox(policy.clone());
    // A wheel made here, installed without an index: no network needed.
    let make_wheel = oi_testkit::MAKE_PROBE_WHEEL;
    let (status, output) = run(&mut k, "python", make_wheel).await;
    assert_eq!((status, output.as_str()), (RunStatus::Ok, "wheel made\n"));
    // The import fails first, as it would for a missing package.
    let (status, output) = run(&mut k, "python", "import oi_probe_pkg").await;
    assert!(matches!(status, RunStatus::Failed { .. }), "{output}");
    // Run as the kernel's own Python runs it (a version manager's shim
    // in front of `python3` may add failures of its own).
    let (status, output) = run(&mut k, "python", oi_testkit::INSTALL_PROBE_WHEEL).await;
    assert!(
        status == RunStatus::Ok
            && output.starts_with("0 ")
            && output.contains("Successfully installed oi-probe-pkg-0.1"),
        "{status:?}: {output}"
    );
    let (status, output) = run(
        &mut k,
        "python",
        "import oi_probe_pkg\nprint(oi_probe_pkg.ANSWER, oi_probe_pkg.__file__)",
    )
    .await;
    assert_eq!(status, RunStatus::Ok, "{output}");
    let base = cache.join("python-user");
    assert!(output.starts_with("42 "), "{output}");
    assert!(
        output.trim_end().ends_with("oi_probe_pkg/__init__.py")
            && output.contains(&base.display().to_string()),
        "{output}"
    );
    k.shutdown().await;
    // A new kernel (a new session) has it too, as do the programs it starts.
    let mut k = KernelManager::new(languages, &place.workspace)
        .with_cache_dir(&cache)
        .with_sandbox(policy);
    let (status, output) = run(
        &mut k,
        "shell",
        "python3 -c 'import oi_probe_pkg; print(oi_probe_pkg.ANSWER)'",
    )
    .await;
    assert_eq!((status, output.as_str()), (RunStatus::Ok, "42\n"));
    k.shutdown().await;
}
