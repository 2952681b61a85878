//! Real Python and bash kernels: persistence, streaming, errors, crashes,
//! interrupts and a control channel that user output cannot corrupt.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::print_stderr,
    reason = "test code: a panic is a test failure; skips are explained on stderr"
)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use oi_kernels::{
    KernelError, KernelManager, LanguageSpec, RunControl, RunEvent, detect_languages,
};
use oi_protocol::{OutputStream, RunStatus};
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

/// Everything a run produced.
#[derive(Debug, Default, Clone)]
struct Captured {
    stdout: String,
    stderr: String,
    /// The order in which pieces arrived, with their stream.
    pieces: Vec<(OutputStream, String)>,
}

fn manager() -> (KernelManager, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    (KernelManager::new(detect_languages(), dir.path()), dir)
}

async fn run(kernels: &mut KernelManager, language: &str, code: &str) -> (RunStatus, Captured) {
    let captured = Arc::new(Mutex::new(Captured::default()));
    let sink_captured = Arc::clone(&captured);
    let mut sink = move |event: RunEvent| {
        let RunEvent::Output { stream, text } = event else {
            return;
        };
        let mut c = sink_captured.lock().unwrap();
        match stream {
            OutputStream::Stdout => c.stdout.push_str(&text),
            OutputStream::Stderr => c.stderr.push_str(&text),
        }
        c.pieces.push((stream, text));
    };
    let status = tokio::time::timeout(
        Duration::from_secs(60),
        kernels.run(
            language,
            code,
            &mut sink,
            RunControl::cancel(&CancellationToken::new()),
        ),
    )
    .await
    .expect("the run must end")
    .unwrap();
    let captured = captured.lock().unwrap().clone();
    (status.status, captured)
}

#[tokio::test]
async fn python_state_persists_between_runs() {
    let (mut k, _dir) = manager();
    let (status, out) = run(&mut k, "python", "x = 41\nimport json").await;
    assert_eq!((status, out.stdout.as_str()), (RunStatus::Ok, ""));
    let (status, out) = run(&mut k, "python", "print(x + 1)\nprint(json.dumps([1]))").await;
    assert_eq!(status, RunStatus::Ok);
    assert_eq!(out.stdout, "42\n[1]\n");
    k.shutdown().await;
}

#[tokio::test]
async fn what_a_cell_wrote_to_a_file_it_left_open_is_on_disk_when_it_ends() {
    let (mut k, dir) = manager();
    let (status, _) = run(
        &mut k,
        "python",
        "import csv\nw = csv.writer(open('out.csv', 'w', newline=''))\nw.writerow(['id', 'total'])\nb = open('raw.bin', mode='wb')\nb.write(b'ab')",
    )
    .await;
    assert_eq!(status, RunStatus::Ok);
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    assert_eq!(read("out.csv"), "id,total\r\n");
    assert_eq!(read("raw.bin"), "ab");
    // The files stay open: the next cell goes on writing to them.
    let (status, _) = run(&mut k, "python", "w.writerow(['A-1', 17])").await;
    assert_eq!(status, RunStatus::Ok);
    assert_eq!(read("out.csv"), "id,total\r\nA-1,17\r\n");
    // `open` is still `open`, and its errors show no frame of oi's.
    let (status, out) = run(
        &mut k,
        "python",
        "print(open.__name__, open('out.csv').readline().strip())\nopen('missing.txt')",
    )
    .await;
    assert!(matches!(status, RunStatus::Failed { .. }), "{status:?}");
    assert_eq!(out.stdout, "open id,total\n");
    assert!(
        out.stderr.contains("FileNotFoundError") && !out.stderr.contains("python_driver"),
        "{}",
        out.stderr
    );
    k.shutdown().await;
}

#[tokio::test]
async fn python_echoes_a_trailing_expression_like_a_repl() {
    let (mut k, _dir) = manager();
    let (_, out) = run(&mut k, "python", "sum(range(1, 101))").await;
    assert_eq!(out.stdout, "5050\n");
    let (_, out) = run(&mut k, "python", "y = 'a'\ny * 3").await;
    assert_eq!(out.stdout, "'aaa'\n");
    let (_, out) = run(&mut k, "python", "None").await;
    assert_eq!(out.stdout, "", "None is not echoed");
    let (_, out) = run(&mut k, "python", "print('p')").await;
    assert_eq!(out.stdout, "p\n", "a print's None result is not echoed");
    let (_, out) = run(
        &mut k,
        "python",
        "import asyncio\nawait asyncio.sleep(0)\n'awaited'",
    )
    .await;
    assert_eq!(out.stdout, "'awaited'\n", "top-level await works");
    k.shutdown().await;
}

#[tokio::test]
async fn python_exceptions_come_back_with_their_traceback_on_stderr() {
    let (mut k, _dir) = manager();
    let (status, out) = run(
        &mut k,
        "python",
        "print('before')\ndef f():\n    return 1 / 0\nf()",
    )
    .await;
    assert_eq!(
        status,
        RunStatus::Failed {
            exit_code: None,
            error: Some("ZeroDivisionError: division by zero".into())
        }
    );
    assert_eq!(out.stdout, "before\n");
    assert!(
        out.stderr
            .starts_with("Traceback (most recent call last):\n"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("File \"<cell-1>\", line 4, in <module>"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("return 1 / 0"),
        "source lines are shown: {}",
        out.stderr
    );
    assert!(
        !out.stderr.contains("<string>"),
        "driver frames are hidden: {}",
        out.stderr
    );

    let (status, out) = run(&mut k, "python", "def broken(:\n    pass").await;
    assert!(
        matches!(&status, RunStatus::Failed { error: Some(e), .. } if e.starts_with("SyntaxError")),
        "{status:?}"
    );
    assert!(out.stderr.contains("SyntaxError"), "{}", out.stderr);

    let (status, _) = run(&mut k, "python", "import sys\nsys.exit(0)").await;
    assert_eq!(
        status,
        RunStatus::Ok,
        "sys.exit(0) ends the cell, not the kernel"
    );
    let (status, _) = run(&mut k, "python", "sys.exit(2)").await;
    assert!(matches!(status, RunStatus::Failed { .. }), "{status:?}");
    let (status, out) = run(&mut k, "python", "print('still alive')").await;
    assert_eq!(
        (status, out.stdout.as_str()),
        (RunStatus::Ok, "still alive\n")
    );
    k.shutdown().await;
}

#[tokio::test]
async fn output_of_subprocesses_is_captured_in_order() {
    let (mut k, _dir) = manager();
    let code = "import os, subprocess, sys\nprint('one')\nos.system('echo two')\nsubprocess.run(['sh', '-c', 'echo three; echo err >&2'])\nprint('four')";
    let (status, out) = run(&mut k, "python", code).await;
    assert_eq!(status, RunStatus::Ok);
    assert_eq!(out.stdout, "one\ntwo\nthree\nfour\n");
    assert_eq!(out.stderr, "err\n");
    k.shutdown().await;
}

#[tokio::test]
async fn output_streams_while_the_code_runs() {
    // The code waits for a file that the test creates only after it has seen
    // the first line: if output were delivered at the end, this would hang.
    let (mut k, dir) = manager();
    let flag = dir.path().join("go");
    let code = format!(
        "import os, time\nprint('waiting')\nwhile not os.path.exists({flag:?}):\n    time.sleep(0.01)\nprint('done')"
    );
    let flag_for_sink = flag.clone();
    let seen = Arc::new(Mutex::new(String::new()));
    let seen_in_sink = Arc::clone(&seen);
    let mut sink = move |event: RunEvent| {
        let RunEvent::Output { text, .. } = event else {
            return;
        };
        if text.contains("waiting") {
            std::fs::File::create(&flag_for_sink).unwrap();
        }
        seen_in_sink.lock().unwrap().push_str(&text);
    };
    let status = tokio::time::timeout(
        Duration::from_secs(60),
        k.run(
            "python",
            &code,
            &mut sink,
            RunControl::cancel(&CancellationToken::new()),
        ),
    )
    .await
    .expect("output must stream live")
    .unwrap()
    .status;
    assert_eq!(status, RunStatus::Ok);
    assert_eq!(*seen.lock().unwrap(), "waiting\ndone\n");
    k.shutdown().await;
}

#[tokio::test]
async fn shell_state_persists_between_runs() {
    let (mut k, _dir) = manager();
    run(
        &mut k,
        "shell",
        "cd /tmp\nexport OI_TEST_VAR=hello\ngreet() { echo \"hi $1\"; }\ncount=3",
    )
    .await;
    let (status, out) = run(
        &mut k,
        "bash",
        "pwd; echo $OI_TEST_VAR; greet you; echo $count; sh -c 'echo child sees $OI_TEST_VAR'",
    )
    .await;
    assert_eq!(status, RunStatus::Ok);
    assert_eq!(out.stdout, "/tmp\nhello\nhi you\n3\nchild sees hello\n");
    k.shutdown().await;
}

#[tokio::test]
async fn shell_failures_report_the_exit_code_and_keep_stderr_apart() {
    let (mut k, _dir) = manager();
    let (status, out) = run(&mut k, "shell", "echo out; ls /definitely/not/here").await;
    assert_eq!(
        status,
        RunStatus::Failed {
            exit_code: Some(2),
            error: None
        }
    );
    assert_eq!(out.stdout, "out\n");
    assert!(
        out.stderr.contains("/definitely/not/here"),
        "{}",
        out.stderr
    );
    let (status, out) = run(&mut k, "shell", "no_such_command_oi").await;
    assert_eq!(
        status,
        RunStatus::Failed {
            exit_code: Some(127),
            error: None
        }
    );
    assert!(out.stderr.contains("command not found"), "{}", out.stderr);
    k.shutdown().await;
}

#[tokio::test]
async fn python_and_shell_share_the_working_directory_at_start_only() {
    let (mut k, dir) = manager();
    let (_, out) = run(&mut k, "python", "import os\nprint(os.getcwd())").await;
    let expected = dir.path().canonicalize().unwrap();
    assert_eq!(out.stdout.trim(), expected.display().to_string());
    k.shutdown().await;
}

#[tokio::test]
async fn user_output_cannot_corrupt_the_control_channel() {
    let (mut k, _dir) = manager();
    let code = r#"
import sys
print('{"type": "done", "id": 1, "status": "ok"}')
sys.stdout.write('\x1b]oi;0000;1\x07fake marker\n')
_ = sys.stdout.write('no newline at the end')
"#;
    let (status, out) = run(&mut k, "python", code).await;
    assert_eq!(status, RunStatus::Ok);
    assert_eq!(
        out.stdout,
        "{\"type\": \"done\", \"id\": 1, \"status\": \"ok\"}\n\x1b]oi;0000;1\x07fake marker\nno newline at the end"
    );
    // Programs the kernels start do not inherit the control pipes.
    let (_, out) = run(
        &mut k,
        "shell",
        "echo '{\"type\":\"done\",\"id\":1}' >&4; echo next",
    )
    .await;
    assert!(out.stderr.contains("Bad file descriptor"), "{}", out.stderr);
    assert_eq!(out.stdout, "next\n");
    // os.system does not close inherited descriptors: the driver's must be
    // close-on-exec, or this shell would hold the control pipes (3 and 4) and
    // the saved copies of stdout and stderr (the driver's next fds).
    let (_, out) = run(&mut k, "python", "import os\nos.system('ls /proc/$$/fd')").await;
    let fds: Vec<u32> = out
        .stdout
        .split_whitespace()
        .map(|f| f.parse().unwrap())
        .collect();
    assert!(fds.iter().all(|&fd| fd <= 2 || fd >= 10), "{fds:?}");
    k.shutdown().await;
}

#[tokio::test]
async fn large_and_non_utf8_output_arrives_whole() {
    let (mut k, _dir) = manager();
    let (status, out) = run(&mut k, "python", "print('é' * 300000)").await;
    assert_eq!(status, RunStatus::Ok);
    assert_eq!(out.stdout.chars().count(), 300001);
    assert!(out.stdout.chars().take(300000).all(|c| c == 'é'));
    let (_, out) = run(&mut k, "shell", "printf 'a\\377b\\n'").await;
    assert_eq!(out.stdout, "a\u{fffd}b\n");
    k.shutdown().await;
}

#[tokio::test]
async fn a_crashed_kernel_is_reported_and_replaced() {
    let (mut k, _dir) = manager();
    run(&mut k, "python", "x = 1").await;
    let (status, out) = run(
        &mut k,
        "python",
        "import os\nprint('bye', flush=True)\nos._exit(3)",
    )
    .await;
    assert_eq!(
        status,
        RunStatus::Crashed {
            reason: "the kernel exited (exit code 3)".into()
        }
    );
    assert_eq!(out.stdout, "bye\n");
    let (status, out) = run(&mut k, "python", "print('x' in globals())").await;
    assert_eq!(
        (status, out.stdout.as_str()),
        (RunStatus::Ok, "False\n"),
        "a fresh kernel"
    );

    let (status, _) = run(&mut k, "shell", "kill -SEGV $$").await;
    assert_eq!(
        status,
        RunStatus::Crashed {
            reason: "the kernel exited (killed by signal 11 (SIGSEGV))".into()
        }
    );
    let (status, _) = run(&mut k, "shell", "exit 4").await;
    assert!(
        matches!(status, RunStatus::Crashed { ref reason } if reason.contains("exit code 4")),
        "{status:?}"
    );
    let (status, out) = run(&mut k, "shell", "echo back").await;
    assert_eq!((status, out.stdout.as_str()), (RunStatus::Ok, "back\n"));
    k.shutdown().await;
}

#[tokio::test]
async fn interrupting_a_sleeping_python_raises_keyboard_interrupt() {
    let (mut k, _dir) = manager();
    let cancel = CancellationToken::new();
    let cancel_in_sink = cancel.clone();
    let stderr = Arc::new(Mutex::new(String::new()));
    let stderr_in_sink = Arc::clone(&stderr);
    let mut sink = move |event: RunEvent| {
        let RunEvent::Output { stream, text } = event else {
            return;
        };
        if text.contains("sleeping") {
            cancel_in_sink.cancel();
        }
        if stream == OutputStream::Stderr {
            stderr_in_sink.lock().unwrap().push_str(&text);
        }
    };
    let started = std::time::Instant::now();
    let status = k
        .run(
            "python",
            "import time\nprint('sleeping', flush=True)\nwhile True:\n    time.sleep(0.01)",
            &mut sink,
            RunControl::cancel(&cancel),
        )
        .await
        .unwrap()
        .status;
    assert_eq!(status, RunStatus::Interrupted);
    let stderr = stderr.lock().unwrap().clone();
    assert!(
        stderr.contains("KeyboardInterrupt"),
        "{stderr:?} after {:?}",
        started.elapsed()
    );
    k.shutdown().await;
}

#[tokio::test]
async fn an_interrupt_before_the_code_starts_still_stops_it_and_keeps_state() {
    // Regression: a SIGINT that reached the driver while it was still parsing
    // the cell was ignored; the loop then ran until the kill, losing state.
    let (mut k, _dir) = manager();
    run(&mut k, "python", "kept = 'yes'").await;
    for language in ["python", "shell"] {
        let cancel = CancellationToken::new();
        cancel.cancel();
        let mut sink = |_: RunEvent| {};
        let code = if language == "python" {
            "while True:\n    pass"
        } else {
            "sleep 1000"
        };
        let started = std::time::Instant::now();
        let status = k
            .run(language, code, &mut sink, RunControl::cancel(&cancel))
            .await
            .unwrap()
            .status;
        assert_eq!(status, RunStatus::Interrupted, "{language}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(3),
            "{language}: interrupted, not killed after the grace period"
        );
    }
    let (status, out) = run(&mut k, "python", "print(kept)").await;
    assert_eq!((status, out.stdout.as_str()), (RunStatus::Ok, "yes\n"));
    k.shutdown().await;
}

#[tokio::test]
async fn interrupting_a_shell_loop_stops_the_rest_of_the_code_and_keeps_state() {
    let (mut k, _dir) = manager();
    let cancel = CancellationToken::new();
    let cancel_in_sink = cancel.clone();
    let seen = Arc::new(Mutex::new(String::new()));
    let seen_in_sink = Arc::clone(&seen);
    let mut sink = move |event: RunEvent| {
        let RunEvent::Output { text, .. } = event else {
            return;
        };
        if text.contains("looping") {
            cancel_in_sink.cancel();
        }
        seen_in_sink.lock().unwrap().push_str(&text);
    };
    let code = "kept=yes\ncd /tmp\necho looping\nwhile true; do sleep 0.01; done\necho not-reached";
    let status = tokio::time::timeout(
        Duration::from_secs(60),
        k.run("shell", code, &mut sink, RunControl::cancel(&cancel)),
    )
    .await
    .unwrap()
    .unwrap()
    .status;
    assert_eq!(status, RunStatus::Interrupted);
    assert!(!seen.lock().unwrap().contains("not-reached"));
    let (status, out) = run(&mut k, "shell", "echo $kept $(pwd)").await;
    assert_eq!((status, out.stdout.as_str()), (RunStatus::Ok, "yes /tmp\n"));
    k.shutdown().await;
}

#[tokio::test]
async fn interrupting_python_keeps_its_state() {
    let (mut k, _dir) = manager();
    run(&mut k, "python", "x = 7").await;
    let cancel = CancellationToken::new();
    let cancel_in_sink = cancel.clone();
    let stderr = Arc::new(Mutex::new(String::new()));
    let stderr_in_sink = Arc::clone(&stderr);
    let mut sink = move |event: RunEvent| {
        let RunEvent::Output { text, stream } = event else {
            return;
        };
        if stream == OutputStream::Stderr {
            stderr_in_sink.lock().unwrap().push_str(&text);
        }
        if text.contains("looping") {
            cancel_in_sink.cancel();
        }
    };
    let status = tokio::time::timeout(
        Duration::from_secs(60),
        k.run(
            "python",
            "print('looping', flush=True)\nwhile True:\n    pass",
            &mut sink,
            RunControl::cancel(&cancel),
        ),
    )
    .await
    .unwrap()
    .unwrap()
    .status;
    assert_eq!(status, RunStatus::Interrupted);
    // The traceback shows where the user's code was, and nothing of oi's.
    let stderr = stderr.lock().unwrap().clone();
    assert!(
        stderr.starts_with("Traceback (most recent call last):\n  File \"<cell-2>\", line")
            && stderr.ends_with("\nKeyboardInterrupt\n")
            && stderr.matches("File ").count() == 1,
        "{stderr}"
    );
    let (status, out) = run(&mut k, "python", "print(x)").await;
    assert_eq!((status, out.stdout.as_str()), (RunStatus::Ok, "7\n"));
    k.shutdown().await;
}

#[tokio::test]
async fn unknown_languages_and_broken_interpreters_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let mut k = KernelManager::new(
        vec![LanguageSpec::python("python3"), LanguageSpec::shell("bash")],
        dir.path(),
    );
    let mut sink = |_: RunEvent| {};
    let err = k
        .run(
            "cobol",
            "DISPLAY 'HI'.",
            &mut sink,
            RunControl::cancel(&CancellationToken::new()),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, KernelError::UnknownLanguage { .. }));
    assert_eq!(
        err.to_string(),
        "no kernel for `cobol`; available: python, shell"
    );

    let dir = tempfile::tempdir().unwrap();
    let mut broken = KernelManager::new(vec![LanguageSpec::python("/bin/false")], dir.path());
    let err = broken
        .run(
            "python",
            "1",
            &mut sink,
            RunControl::cancel(&CancellationToken::new()),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, KernelError::StartupFailed { .. }), "{err:?}");
    assert!(err.to_string().contains("exit code 1"), "{err}");

    let mut missing =
        KernelManager::new(vec![LanguageSpec::python("/no/such/python3")], dir.path());
    let err = missing
        .run(
            "py",
            "1",
            &mut sink,
            RunControl::cancel(&CancellationToken::new()),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, KernelError::Spawn { .. }), "{err:?}");
    assert!(err.to_string().contains("/no/such/python3"), "{err}");
}

#[tokio::test]
async fn shutdown_kills_what_the_kernels_started() {
    let (mut k, dir) = manager();
    let pidfile = dir.path().join("pid");
    let (status, _) = run(
        &mut k,
        "shell",
        &format!("sleep 1000 & echo $! > {}", pidfile.display()),
    )
    .await;
    assert_eq!(status, RunStatus::Ok);
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let alive = |pid: i32| nix_alive(pid);
    assert!(alive(pid));
    k.shutdown().await;
    // The process is killed at once; give the kernel's reaper a moment.
    for _ in 0..200 {
        if !alive(pid) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("background process {pid} survived the shutdown");
}

/// Whether `pid` names a live (not zombie) process.
fn nix_alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

#[tokio::test]
async fn python_accepts_notebook_style_shell_lines() {
    let (mut k, dir) = manager();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let code = "x = 5\n!echo from-shell\nfor i in range(2):\n    !echo loop\n%cd sub\n%matplotlib inline\nimport os\nprint(os.path.basename(os.getcwd()), x)";
    let (status, out) = run(&mut k, "python", code).await;
    assert_eq!(status, RunStatus::Ok, "{out:?}");
    assert_eq!(out.stdout, "from-shell\nloop\nloop\nsub 5\n");
    // Valid Python is never rewritten, and other errors stay as they were.
    let (status, out) = run(&mut k, "python", "print(1 != 2)").await;
    assert_eq!((status, out.stdout.as_str()), (RunStatus::Ok, "True\n"));
    let (status, out) = run(&mut k, "python", "!echo hi\nprint(()").await;
    assert!(matches!(status, RunStatus::Failed { .. }), "{status:?}");
    assert!(out.stderr.contains("SyntaxError"), "{}", out.stderr);
    k.shutdown().await;
}

#[tokio::test]
async fn code_that_ignores_interrupts_is_killed_and_reported() {
    let (mut k, _dir) = manager();
    let cancel = CancellationToken::new();
    let cancel_in_sink = cancel.clone();
    let mut sink = move |event: RunEvent| {
        let RunEvent::Output { text, .. } = event else {
            return;
        };
        if text.contains("stubborn") {
            cancel_in_sink.cancel();
        }
    };
    let code = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('stubborn', flush=True)\nwhile True:\n    time.sleep(0.05)";
    let status = k
        .run("python", code, &mut sink, RunControl::cancel(&cancel))
        .await
        .unwrap()
        .status;
    assert_eq!(
        status,
        RunStatus::Crashed {
            reason: "the code did not stop within 3 s of the interrupt, so the kernel was killed"
                .into()
        }
    );
    let (status, out) = run(&mut k, "python", "print('fresh')").await;
    assert_eq!((status, out.stdout.as_str()), (RunStatus::Ok, "fresh\n"));
    k.shutdown().await;
}

#[tokio::test]
async fn a_run_that_reaches_its_timeout_is_stopped_and_the_state_kept_when_possible() {
    let (mut k, _dir) = manager();
    run(&mut k, "python", "kept = 'yes'").await;
    let cancel = CancellationToken::new();
    let mut sink = |_: RunEvent| {};
    let control = RunControl {
        cancel: &cancel,
        timeout: Some(Duration::from_millis(300)),
        input: None,
    };
    let outcome = k
        .run(
            "python",
            "import time\nwhile True:\n    time.sleep(0.01)",
            &mut sink,
            control,
        )
        .await
        .unwrap();
    assert_eq!(
        outcome.status,
        RunStatus::TimedOut {
            seconds: 0,
            kernel_restarted: false
        }
    );
    let (_, out) = run(&mut k, "python", "print(kept)").await;
    assert_eq!(
        out.stdout, "yes\n",
        "the interrupt stopped it; the kernel lives"
    );

    // Code that ignores the interrupt costs the kernel.
    let control = RunControl {
        cancel: &cancel,
        timeout: Some(Duration::from_millis(300)),
        input: None,
    };
    let code = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    time.sleep(0.01)";
    let outcome = k.run("python", code, &mut sink, control).await.unwrap();
    assert_eq!(
        outcome.status,
        RunStatus::TimedOut {
            seconds: 0,
            kernel_restarted: true
        }
    );
    let (_, out) = run(&mut k, "python", "print('kept' in globals())").await;
    assert_eq!(out.stdout, "False\n", "a fresh kernel");
    k.shutdown().await;
}

/// Runs `code`, answering the first wait for input with `answer` (or, with
/// `None`, interrupting it), and returns the prompt seen and the output.
async fn run_with_input(
    k: &mut KernelManager,
    language: &str,
    code: &str,
    answer: Option<&str>,
) -> (RunStatus, Vec<String>, String) {
    let cancel = CancellationToken::new();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let prompts = Arc::new(Mutex::new(Vec::new()));
    let stdout = Arc::new(Mutex::new(String::new()));
    let (p, o, c) = (Arc::clone(&prompts), Arc::clone(&stdout), cancel.clone());
    let answer = answer.map(str::to_owned);
    let mut sink = move |event: RunEvent| match event {
        RunEvent::WaitingForInput { prompt } => {
            p.lock().unwrap().push(prompt);
            match &answer {
                Some(text) => tx.send(format!("{text}\n")).unwrap(),
                None => c.cancel(),
            }
        }
        RunEvent::Output {
            stream: OutputStream::Stdout,
            text,
        } => o.lock().unwrap().push_str(&text),
        _ => {}
    };
    let control = RunControl {
        cancel: &cancel,
        timeout: None,
        input: Some(&mut rx),
    };
    let outcome = tokio::time::timeout(
        Duration::from_secs(60),
        k.run(language, code, &mut sink, control),
    )
    .await
    .expect("the run must end")
    .unwrap();
    let prompts = prompts.lock().unwrap().clone();
    let stdout = stdout.lock().unwrap().clone();
    (outcome.status, prompts, stdout)
}

#[tokio::test]
async fn a_program_waiting_for_input_is_noticed_and_can_be_answered() {
    let (mut k, _dir) = manager();
    let (status, prompts, stdout) = run_with_input(
        &mut k,
        "python",
        "name = input('Your name? ')\nprint('Hello', name)",
        Some("Ada"),
    )
    .await;
    assert_eq!(status, RunStatus::Ok);
    assert_eq!(prompts, ["Your name? "]);
    assert_eq!(stdout, "Your name? Hello Ada\n");

    let (status, prompts, _) = run_with_input(
        &mut k,
        "shell",
        "read -p 'Continue? ' answer\necho \"got $answer\"",
        None,
    )
    .await;
    assert_eq!(status, RunStatus::Interrupted, "stopped instead of hanging");
    assert_eq!(prompts.len(), 1);

    // A child process reading the kernel's stdin counts too.
    let (status, prompts, stdout) =
        run_with_input(&mut k, "shell", "echo start; head -n 1", Some("piped line")).await;
    assert_eq!(status, RunStatus::Ok);
    assert_eq!(prompts, ["start"]);
    assert_eq!(stdout, "start\npiped line\n");
    k.shutdown().await;
}

/// Images a run announced, with its stdout.
async fn run_collecting_images(
    k: &mut KernelManager,
    code: &str,
) -> (RunStatus, Vec<std::path::PathBuf>, String) {
    let images = Arc::new(Mutex::new(Vec::new()));
    let stdout = Arc::new(Mutex::new(String::new()));
    let (i, o) = (Arc::clone(&images), Arc::clone(&stdout));
    let mut sink = move |event: RunEvent| match event {
        RunEvent::Image { path, media_type } => {
            assert_eq!(media_type, "image/png");
            i.lock().unwrap().push(path);
        }
        RunEvent::Output {
            stream: OutputStream::Stdout,
            text,
        } => o.lock().unwrap().push_str(&text),
        _ => {}
    };
    let outcome = tokio::time::timeout(
        Duration::from_secs(120),
        k.run(
            "python",
            code,
            &mut sink,
            RunControl::cancel(&CancellationToken::new()),
        ),
    )
    .await
    .expect("the run must end")
    .unwrap();
    let images = images.lock().unwrap().clone();
    let stdout = stdout.lock().unwrap().clone();
    (outcome.status, images, stdout)
}

fn assert_png(path: &std::path::Path) {
    let bytes = std::fs::read(path).unwrap();
    assert!(
        bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{} is not a PNG",
        path.display()
    );
}

#[tokio::test]
async fn display_saves_images_and_prints_everything_else() {
    let dir = tempfile::tempdir().unwrap();
    let images_dir = dir.path().join("images");
    let mut k = KernelManager::new(vec![LanguageSpec::python("python3")], dir.path())
        .with_image_dir(&images_dir);
    let code = r#"
import struct, zlib
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
class Dot:
    def _repr_png_(self):
        header = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
        return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00\x00")) + chunk(b"IEND", b"")
display(Dot())
from IPython.display import display as ipy_display
ipy_display({"rows": 3})
"#;
    let (status, images, stdout) = run_collecting_images(&mut k, code).await;
    assert_eq!(status, RunStatus::Ok);
    assert_eq!(images.len(), 1);
    assert!(
        images[0].starts_with(&images_dir),
        "{}",
        images[0].display()
    );
    assert_png(&images[0]);
    assert_eq!(
        stdout, "{'rows': 3}\n",
        "non-images are printed, images are not"
    );
    k.shutdown().await;
}

#[tokio::test]
async fn matplotlib_figures_become_png_files() {
    let Some(python) = oi_testkit::matplotlib_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut k = KernelManager::new(vec![LanguageSpec::python(python)], dir.path())
        .with_image_dir(dir.path().join("images"));
    // Shown figures, in order, and a figure left open at the end of the cell.
    let code = "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()\nplt.figure()\nplt.bar(['a', 'b'], [3, 4])\nplt.show()\nfig = plt.figure()\nplt.scatter([1], [1])";
    let (status, images, _) = run_collecting_images(&mut k, code).await;
    assert_eq!(status, RunStatus::Ok);
    assert_eq!(images.len(), 3, "{images:?}");
    for image in &images {
        assert_png(image);
    }
    let (_, images, _) = run_collecting_images(&mut k, "print(len(plt.get_fignums()))").await;
    assert!(images.is_empty(), "figures are closed once saved");
    k.shutdown().await;
}

#[tokio::test]
async fn python_calls_mcp_tools_through_oi_and_without_a_handler_is_told_why() {
    let (mut k, _dir) = manager();
    let code = "try:\n    print(mcp_tools.docs.search(q='x', n=2))\nexcept mcp_tools.McpToolError as e:\n    print('error:', e)";
    let (status, out) = run(&mut k, "python", code).await;
    assert_eq!(status, RunStatus::Ok, "{out:?}");
    assert!(
        out.stdout
            .contains("error: this session has no MCP servers"),
        "{out:?}"
    );

    // The handler gets the server, the tool and the arguments; its answer
    // (text, or structured data) is what the function returns.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let handler: oi_kernels::ComputerHandler = Arc::new(move |request, _cancel| {
        log.lock().unwrap().push(request.clone());
        if request["tool"] == "search" {
            serde_json::json!({"ok": true, "text": "found", "structured": {"hits": [1, 2]}})
        } else {
            serde_json::json!({"ok": false, "error": "no such tool"})
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let mut k = KernelManager::new(detect_languages(), dir.path()).with_tools(handler);
    let code = "r = mcp_tools.my_docs.search(q='x', n=2)\nprint(r['hits'])\ntry:\n    mcp_tools.call('my-docs', 'drop', {'all': True})\nexcept mcp_tools.McpToolError as e:\n    print('error:', e)";
    let (status, out) = run(&mut k, "python", code).await;
    assert_eq!(status, RunStatus::Ok, "{out:?}");
    assert_eq!(out.stdout, "[1, 2]\nerror: no such tool\n");
    let seen = seen.lock().unwrap();
    assert_eq!(
        seen[0],
        serde_json::json!({"server": "my_docs", "tool": "search", "arguments": {"q": "x", "n": 2}})
    );
    assert_eq!(seen[1]["server"], "my-docs");
    assert_eq!(seen[1]["arguments"], serde_json::json!({"all": true}));
}
