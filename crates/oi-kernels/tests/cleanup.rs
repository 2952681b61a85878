//! Ending what a session left behind, without touching anything else.
//! A binary of its own: it makes the test process a child subreaper.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a test failure"
)]

use std::os::unix::process::ExitStatusExt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The tests of this binary kill children of the process: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// Regression: a child that shares this process's group (a helper run
/// without a group of its own, as the pyenv shim is asked which Python it
/// runs) made the clean-up kill that whole group — the shell oi was
/// started from, every process of a test run — with SIGKILL.
#[test]
fn ending_orphans_never_kills_this_process_group() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    oi_kernels::become_subreaper();
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    oi_kernels::kill_orphans();
    // Still here (a SIGKILL to the group would have ended this test), and
    // the child itself was ended: either reaped here with its signal, or
    // already reaped by the clean-up (which waits for what it killed, when
    // it is quick enough to die at once) and gone from /proc.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                assert_eq!(status.signal(), Some(9));
                break;
            }
            Ok(None) => {}
            Err(e) if e.raw_os_error() == Some(nix::libc::ECHILD) => {
                assert!(
                    !std::path::Path::new(&format!("/proc/{}", child.id())).exists(),
                    "reaped, yet still listed"
                );
                break;
            }
            Err(e) => panic!("waiting for the child: {e}"),
        }
        assert!(Instant::now() < deadline, "the child was not ended");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Regression: in a process with several sessions (a server), one session
/// ending killed every child of the process — the other sessions' live
/// kernels too. Each session now ends only what carries its own mark.
#[test]
fn a_session_ending_leaves_the_other_sessions_kernels_alone() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(two_sessions());
}

async fn two_sessions() {
    use oi_kernels::{KernelManager, RunControl, RunEvent, detect_languages};
    use tokio_util::sync::CancellationToken;

    oi_kernels::become_subreaper();
    let dir = tempfile::tempdir().unwrap();
    let python: Vec<_> = detect_languages()
        .into_iter()
        .filter(|l| l.name == "python")
        .collect();
    assert!(!python.is_empty(), "python3 is needed");
    async fn run(manager: &mut KernelManager, code: &str) -> String {
        let mut out = String::new();
        let mut sink = |event: RunEvent| {
            if let RunEvent::Output { text, .. } = event {
                out.push_str(&text);
            }
        };
        manager
            .run(
                "python",
                code,
                &mut sink,
                RunControl::cancel(&CancellationToken::new()),
            )
            .await
            .unwrap();
        out
    }
    let mut first = KernelManager::new(python.clone(), dir.path());
    let mut second = KernelManager::new(python, dir.path());
    assert_eq!(run(&mut first, "x = 'first'; print(x)").await, "first\n");
    assert_eq!(run(&mut second, "y = 'second'; print(y)").await, "second\n");
    first.shutdown().await;
    // The second session's kernel is the same process, with its state.
    assert_eq!(run(&mut second, "print(y)").await, "second\n");
    second.shutdown().await;
}

/// What an earlier, killed process left is ended by the first session of
/// the next process; later sessions of the same process do not scan again
/// (a server starts one per conversation).
#[test]
fn leftovers_of_dead_owners_are_ended_once_per_process() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let leftover = || {
        let child = std::process::Command::new("sleep")
            .arg("30")
            // An owner that is gone: no process has this start time.
            .env("OI_KERNEL_OWNER", format!("{}:1", std::process::id()))
            .spawn()
            .unwrap();
        // `spawn` returns while the kernel may still be setting up the new
        // program, before its environment can be read from /proc (a scan
        // then would rightly not see the mark): wait until it can.
        let environ = format!("/proc/{}/environ", child.id());
        let deadline = Instant::now() + Duration::from_secs(10);
        while !fs_err::read(&environ)
            .unwrap_or_default()
            .windows(b"OI_KERNEL_OWNER=".len())
            .any(|w| w == b"OI_KERNEL_OWNER=")
        {
            assert!(
                Instant::now() < deadline,
                "the leftover never showed its mark"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        child
    };
    let mut first = leftover();
    assert!(oi_kernels::kill_leftovers_once() >= 1);
    assert_eq!(first.wait().unwrap().signal(), Some(9));
    let mut second = leftover();
    assert_eq!(
        oi_kernels::kill_leftovers_once(),
        0,
        "the second session does not scan"
    );
    assert!(second.try_wait().unwrap().is_none());
    assert!(oi_kernels::kill_leftovers() >= 1);
    assert_eq!(second.wait().unwrap().signal(), Some(9));
}
