//! Kernels in a container (`sandbox = "container"`), with a real engine
//! (Podman or Docker) and the test image (`oi_testkit::container_image`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::print_stderr,
    reason = "test code: a panic is a test failure; skips are explained on stderr"
)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use oi_kernels::{ContainerSpec, KernelManager, LanguageSpec, RunControl, RunEvent};
use oi_protocol::{OutputStream, RunStatus, SandboxMode};
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Default, Clone)]
struct Captured {
    stdout: String,
    stderr: String,
    waiting: Vec<String>,
    images: Vec<std::path::PathBuf>,
}

/// A Python kernel (`python`, as this machine names it) in the container
/// `spec` describes, working in `workspace`, plots saved in `images`.
fn python_in(
    spec: ContainerSpec,
    python: &str,
    workspace: &std::path::Path,
    images: Option<&std::path::Path>,
) -> KernelManager {
    let mut kernels = KernelManager::new(vec![LanguageSpec::python(python)], workspace);
    if let Some(images) = images {
        kernels = kernels.with_image_dir(images);
    }
    kernels
        .with_sandbox(oi_sandbox::Policy::new(SandboxMode::Container, workspace))
        .with_container(spec)
}

/// Kernels for Python and the shell in a container of the test image,
/// working in a fresh workspace.
fn manager() -> Option<(KernelManager, tempfile::TempDir)> {
    manager_with(|_| {})
}

/// [`manager`], with the workspace prepared by `prepare` first.
fn manager_with(
    prepare: impl FnOnce(&std::path::Path),
) -> Option<(KernelManager, tempfile::TempDir)> {
    let image = oi_testkit::container_image()?;
    let dir = tempfile::tempdir().unwrap();
    let workspace = fs_err::canonicalize(dir.path()).unwrap();
    prepare(&workspace);
    let policy = oi_sandbox::Policy::new(SandboxMode::Container, &workspace);
    let languages = vec![
        LanguageSpec::python("/usr/bin/python3"),
        LanguageSpec::shell("/bin/bash"),
        LanguageSpec::known("javascript", "/usr/bin/node").unwrap(),
    ];
    let kernels = KernelManager::new(languages, &workspace)
        .with_sandbox(policy)
        .with_container(ContainerSpec::new(image));
    Some((kernels, dir))
}

async fn run_with(
    kernels: &mut KernelManager,
    language: &str,
    code: &str,
    control: RunControl<'_>,
) -> (RunStatus, Captured) {
    let captured = Arc::new(Mutex::new(Captured::default()));
    let sink_captured = Arc::clone(&captured);
    let mut sink = move |event: RunEvent| {
        let mut c = sink_captured.lock().unwrap();
        match event {
            RunEvent::Output {
                stream: OutputStream::Stdout,
                text,
            } => c.stdout.push_str(&text),
            RunEvent::Output {
                stream: OutputStream::Stderr,
                text,
            } => c.stderr.push_str(&text),
            RunEvent::WaitingForInput { prompt } => c.waiting.push(prompt),
            RunEvent::Image { path, .. } => c.images.push(path),
            _ => {}
        }
    };
    let outcome = tokio::time::timeout(
        Duration::from_secs(120),
        kernels.run(language, code, &mut sink, control),
    )
    .await
    .expect("the run must end")
    .unwrap();
    let captured = captured.lock().unwrap().clone();
    (outcome.status, captured)
}

async fn run(kernels: &mut KernelManager, language: &str, code: &str) -> (RunStatus, Captured) {
    run_with(
        kernels,
        language,
        code,
        RunControl::cancel(&CancellationToken::new()),
    )
    .await
}

#[tokio::test]
async fn python_runs_in_the_container_and_keeps_its_state() {
    let Some((mut k, dir)) = manager() else {
        return;
    };
    let (status, out) = run(&mut k, "python", "import os\nx = 41\nprint(os.getcwd())").await;
    assert_eq!(status, RunStatus::Ok, "{out:?}");
    assert_eq!(
        out.stdout.trim(),
        fs_err::canonicalize(dir.path())
            .unwrap()
            .display()
            .to_string()
    );
    let (status, out) = run(
        &mut k,
        "python",
        "print(x + 1)\nprint(open('/etc/os-release').read().split()[0])",
    )
    .await;
    assert_eq!(status, RunStatus::Ok, "{out:?}");
    assert!(out.stdout.starts_with("42\n"), "{out:?}");
    k.shutdown().await;
}

#[tokio::test]
async fn code_writes_only_in_the_workspace_and_its_own_tmp() {
    let Some((mut k, dir)) = manager_with(|ws| fs_err::create_dir_all(ws.join(".git")).unwrap())
    else {
        return;
    };
    let ws = fs_err::canonicalize(dir.path()).unwrap();
    let (status, out) = run(
        &mut k,
        "shell",
        "echo made > made.txt && echo temp > /tmp/t && cat /tmp/t\n\
         touch /etc/oi-escape 2>&1 || echo etc-refused\n\
         touch /usr/oi-escape 2>&1 || echo usr-refused\n\
         touch .git/oi-escape 2>&1 || echo git-refused",
    )
    .await;
    // Every write outside the workspace and /tmp is refused.
    assert_eq!(status, RunStatus::Ok, "{out:?}");
    for word in ["temp", "etc-refused", "usr-refused", "git-refused"] {
        assert!(out.stdout.contains(word), "{word}: {out:?}");
    }
    assert!(out.stdout.contains("Read-only file system"), "{out:?}");
    let made = ws.join("made.txt");
    assert_eq!(fs_err::read_to_string(&made).unwrap(), "made\n");
    // The file is the user's, as if written on the host.
    use std::os::unix::fs::MetadataExt;
    assert_eq!(
        fs_err::metadata(&made).unwrap().uid(),
        nix::unistd::getuid().as_raw()
    );
    assert!(!ws.join(".git/oi-escape").exists());
    k.shutdown().await;
}

#[tokio::test]
async fn the_container_has_no_network_by_default() {
    let Some((mut k, _dir)) = manager() else {
        return;
    };
    let (status, out) = run(
        &mut k,
        "python",
        "import socket\ntry:\n    socket.create_connection(('192.0.2.1', 80), timeout=3)\n    print('connected')\nexcept OSError as e:\n    print('refused', e)\nprint(sorted(n for _, n in socket.if_nameindex()))",
    )
    .await;
    assert_eq!(status, RunStatus::Ok, "{out:?}");
    assert!(out.stdout.starts_with("refused"), "{out:?}");
    assert!(out.stdout.contains("['lo']"), "{out:?}");
    k.shutdown().await;
}

#[tokio::test]
async fn runs_are_interrupted_timed_out_and_recovered_inside() {
    let Some((mut k, _dir)) = manager() else {
        return;
    };
    run(&mut k, "python", "kept = 7").await;
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(2)).await;
        stopper.cancel();
    });
    let (status, out) = run_with(
        &mut k,
        "python",
        "import time\nprint('sleeping', flush=True)\ntime.sleep(60)",
        RunControl::cancel(&cancel),
    )
    .await;
    assert_eq!(status, RunStatus::Interrupted, "{out:?}");
    // The kernel lived through it.
    let (_, out) = run(&mut k, "python", "print(kept)").await;
    assert_eq!(out.stdout, "7\n");

    let never = CancellationToken::new();
    let (status, _) = run_with(
        &mut k,
        "shell",
        "sleep 30; echo late",
        RunControl {
            cancel: &never,
            timeout: Some(Duration::from_secs(1)),
            input: None,
        },
    )
    .await;
    assert!(matches!(status, RunStatus::TimedOut { .. }), "{status:?}");

    let (status, _) = run(&mut k, "python", "import os\nos._exit(3)").await;
    assert!(
        matches!(&status, RunStatus::Crashed { reason } if reason.contains("exit code 3")),
        "{status:?}"
    );
    let (status, out) = run(&mut k, "python", "print('fresh')").await;
    assert_eq!((status, out.stdout.as_str()), (RunStatus::Ok, "fresh\n"));
    k.shutdown().await;
}

#[tokio::test]
async fn a_program_waiting_for_input_is_noticed_and_fed() {
    let Some((mut k, _dir)) = manager() else {
        return;
    };
    // Started first: the input is sent 2 s into the run itself.
    k.start("python").await.unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let feeder = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(2)).await;
        tx.send("Ada\n".to_owned()).unwrap();
        tx
    });
    let (status, out) = run_with(
        &mut k,
        "python",
        "name = input('name? ')\nprint('hello', name)",
        RunControl {
            cancel: &cancel,
            timeout: Some(Duration::from_secs(30)),
            input: Some(&mut rx),
        },
    )
    .await;
    drop(feeder.await);
    assert_eq!(status, RunStatus::Ok, "{out:?}");
    assert_eq!(out.waiting, vec!["name? ".to_owned()]);
    assert!(out.stdout.ends_with("hello Ada\n"), "{out:?}");
    k.shutdown().await;
}

#[tokio::test]
async fn the_shell_follows_cd_and_a_missing_interpreter_is_named() {
    let Some((mut k, dir)) = manager() else {
        return;
    };
    let ws = fs_err::canonicalize(dir.path()).unwrap();
    fs_err::create_dir_all(ws.join("sub")).unwrap();
    run(&mut k, "shell", "cd sub").await;
    assert_eq!(k.current_dir("shell"), ws.join("sub"));
    // The test image has no Node.js.
    let err = k
        .run(
            "javascript",
            "1",
            &mut |_| {},
            RunControl::cancel(&CancellationToken::new()),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("has no `node` or `nodejs`"), "{err}");
    assert!(err.contains("[container] image"), "{err}");
    k.shutdown().await;
}

#[tokio::test]
async fn a_missing_image_is_pulled_and_its_progress_shown_to_the_waiting_run() {
    let Some(image) = oi_testkit::container_image() else {
        return;
    };
    // An image the engine does not have under that name: the test image
    // as an OCI archive (Podman pulls from `oci-archive:` like from a
    // registry; none is reachable here).
    if !oi_testkit::present_or_skip(
        oi_testkit::Need::Container,
        oi_testkit::installed("podman"),
        "pulling from an OCI archive needs Podman",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("image.tar");
    let saved = std::process::Command::new("podman")
        .args(["save", "--quiet", "--format", "oci-archive", "-o"])
        .arg(&archive)
        .arg(&image)
        .output()
        .unwrap();
    assert!(saved.status.success(), "{saved:?}");
    let workspace = fs_err::canonicalize(dir.path()).unwrap();
    let reference = format!("oci-archive:{}", archive.display());
    let mut k = python_in(
        ContainerSpec::new(&reference),
        "/usr/bin/python3",
        &workspace,
        None,
    );
    let (status, out) = run(&mut k, "python", "print('pulled')").await;
    assert_eq!(
        (&status, out.stdout.as_str()),
        (&RunStatus::Ok, "pulled\n"),
        "{out:?}"
    );
    assert!(
        out.stderr.contains(&format!(
            "oi: pulling the image {reference} (it is not here yet)"
        )),
        "{out:?}"
    );
    // The engine's own progress lines, as they came.
    assert!(out.stderr.contains("Writing manifest"), "{out:?}");
    k.shutdown().await;
}

#[tokio::test]
async fn a_container_that_stopped_is_replaced_and_the_session_goes_on() {
    let Some((mut k, _dir)) = manager() else {
        return;
    };
    let (_, out) = run(&mut k, "shell", "hostname").await;
    let first = out.stdout.trim().to_owned();
    let engine = if oi_testkit::installed("podman") {
        "podman"
    } else {
        "docker"
    };
    let removed = std::process::Command::new(engine)
        .args(["rm", "-f", &first])
        .output()
        .unwrap();
    assert!(removed.status.success(), "{removed:?}");
    // The kernel went with it: that run is lost, the next one works.
    let (status, _) = run(&mut k, "shell", "echo hello").await;
    assert!(matches!(status, RunStatus::Crashed { .. }), "{status:?}");
    let (status, out) = run(&mut k, "shell", "hostname").await;
    assert_eq!(status, RunStatus::Ok, "{out:?}");
    assert_ne!(out.stdout.trim(), first);
    assert!(
        out.stderr.contains("the session's container stopped"),
        "{out:?}"
    );
    k.shutdown().await;
}

#[tokio::test]
async fn memory_and_process_limits_hold() {
    let Some(image) = oi_testkit::container_image() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let workspace = fs_err::canonicalize(dir.path()).unwrap();
    let mut spec = ContainerSpec::new(image);
    spec.memory = Some("128m".into());
    spec.pids = Some(40);
    let mut k = python_in(spec, "/usr/bin/python3", &workspace, None);
    let (status, out) = run(
        &mut k,
        "python",
        "import subprocess\nprocs = []\ntry:\n    for _ in range(100):\n        procs.append(subprocess.Popen(['sleep', '30']))\nexcept OSError as e:\n    print('stopped at', len(procs), type(e).__name__)\nfor p in procs:\n    p.kill()\n    p.wait()",
    )
    .await;
    assert_eq!(status, RunStatus::Ok, "{out:?}");
    let started: u32 = out
        .stdout
        .strip_prefix("stopped at ")
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no process limit: {out:?}"));
    assert!(started < 40, "{out:?}");
    // 400 MB in 128 MB: the kernel is killed (or Python refuses).
    let (status, out) = run(
        &mut k,
        "python",
        "b = bytearray(400 * 1024 * 1024)\nb[::4096] = b'x' * len(b[::4096])\nprint('allocated')",
    )
    .await;
    assert!(!out.stdout.contains("allocated"), "{status:?} {out:?}");
    assert_ne!(status, RunStatus::Ok, "{out:?}");
    k.shutdown().await;
}

#[tokio::test]
async fn the_images_own_interpreter_is_used_whatever_this_machine_calls_it() {
    let Some(image) = oi_testkit::container_image() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let workspace = fs_err::canonicalize(dir.path()).unwrap();
    // A virtual environment's `python` here; the image has `python3` only.
    let mut k = python_in(
        ContainerSpec::new(image),
        "/home/someone/venv/bin/python",
        &workspace,
        None,
    );
    let (status, out) = run(&mut k, "python", "import sys\nprint(sys.executable)").await;
    assert_eq!(status, RunStatus::Ok, "{out:?}");
    assert_eq!(out.stdout, "/usr/bin/python3\n");
    k.shutdown().await;
}

/// Code that shows an image (any object with `_repr_png_`, as a plot).
const SHOW_IMAGE: &str = "class Picture:\n    def _repr_png_(self):\n        return b'\\x89PNG\\r\\n\\x1a\\nfake'\ndisplay(Picture())";

#[tokio::test]
async fn images_the_code_shows_reach_this_machine() {
    let Some(image) = oi_testkit::container_image() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let workspace = fs_err::canonicalize(dir.path()).unwrap();
    let images = tempfile::tempdir().unwrap();
    let mut k = python_in(
        ContainerSpec::new(image),
        "/usr/bin/python3",
        &workspace,
        Some(images.path()),
    );
    let (status, out) = run(&mut k, "python", SHOW_IMAGE).await;
    assert_eq!(status, RunStatus::Ok, "{out:?}");
    assert_eq!(out.images.len(), 1, "{out:?}");
    assert!(out.images[0].starts_with(images.path()), "{out:?}");
    assert_eq!(
        fs_err::read(&out.images[0]).unwrap(),
        b"\x89PNG\r\n\x1a\nfake"
    );
    k.shutdown().await;
}
