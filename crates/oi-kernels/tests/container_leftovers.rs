//! Containers of sessions that were killed are removed by the next
//! session; a session's own is removed when it ends. (A test binary of
//! its own: no other session of this process may start meanwhile.)

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test code: a panic is a test failure"
)]

use oi_kernels::{ContainerSpec, KernelManager, LanguageSpec, RunControl, RunEvent};
use oi_protocol::{OutputStream, RunStatus, SandboxMode};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn the_container_is_removed_with_the_session_and_leftovers_at_the_next() {
    let Some(image) = oi_testkit::container_image() else {
        return;
    };
    let engine = if oi_testkit::installed("podman") {
        "podman"
    } else {
        "docker"
    };
    let host = fs_err::read_to_string("/proc/sys/kernel/hostname").unwrap();
    // A container a killed session left: its owner (pid 1 started at tick
    // 1) is not running.
    let leftover = format!("oi-leftover-{}", std::process::id());
    let started = std::process::Command::new(engine)
        .args([
            "run",
            "-d",
            "--name",
            &leftover,
            "--label",
            "oi.owner=1:1",
            "--label",
        ])
        .arg(format!("oi.host={}", host.trim()))
        .args(["--entrypoint", "sleep", &image, "600"])
        .output()
        .unwrap();
    assert!(started.status.success(), "{started:?}");
    let names = || {
        let out = std::process::Command::new(engine)
            .args(["ps", "-a", "--format", "{{.Names}}"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let dir = tempfile::tempdir().unwrap();
    let workspace = fs_err::canonicalize(dir.path()).unwrap();
    let mut k = KernelManager::new(vec![LanguageSpec::python("/usr/bin/python3")], &workspace)
        .with_sandbox(oi_sandbox::Policy::new(SandboxMode::Container, &workspace))
        .with_container(ContainerSpec::new(image));
    let mut stderr = String::new();
    let outcome = k
        .run(
            "python",
            "print(1)",
            &mut |event| {
                if let RunEvent::Output {
                    stream: OutputStream::Stderr,
                    text,
                } = event
                {
                    stderr.push_str(&text);
                }
            },
            RunControl::cancel(&CancellationToken::new()),
        )
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Ok);
    // Said as the run's output: the first run waited for it.
    assert!(
        stderr.contains("removed 1 container that an earlier session left behind"),
        "{stderr}"
    );
    assert!(!names().contains(&leftover));
    let ours: Vec<String> = names()
        .lines()
        .filter(|n| n.starts_with(&format!("oi-{}-", std::process::id())))
        .map(str::to_owned)
        .collect();
    assert_eq!(ours.len(), 1, "{ours:?}");
    k.shutdown().await;
    assert!(!names().contains(&ours[0]));
}
