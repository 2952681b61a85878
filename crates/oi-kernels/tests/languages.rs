//! Every language beyond Python and the shell, through its real interpreter:
//! state persists, output streams, errors come back with their trace, the
//! last value is echoed where the language's REPL does, interrupts keep the
//! state. A language whose interpreter is missing is skipped, saying so —
//! unless `OI_REQUIRE_LANGUAGES` (set by CI) names it, then it fails.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    clippy::disallowed_methods,
    reason = "test code: a panic is a test failure"
)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use oi_kernels::{KernelManager, RunControl, RunEvent, detect_languages};
use oi_protocol::{OutputStream, RunStatus};
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

/// The kernels with `language`, or `None` (skipped) when it is not installed.
fn kernels_for(language: &str) -> Option<(KernelManager, tempfile::TempDir)> {
    let spec = detect_languages().into_iter().find(|l| l.name == language);
    let present = oi_testkit::present_or_skip(
        oi_testkit::Need::Language(language),
        spec.is_some(),
        &format!("no interpreter for {language} on PATH"),
    );
    let spec = spec.filter(|_| present)?;
    let dir = tempfile::tempdir().unwrap();
    Some((KernelManager::new(vec![spec], dir.path()), dir))
}

#[derive(Debug, Default, Clone)]
struct Out {
    stdout: String,
    stderr: String,
}

async fn run(k: &mut KernelManager, language: &str, code: &str) -> (RunStatus, Out) {
    let out = Arc::new(Mutex::new(Out::default()));
    let sink_out = Arc::clone(&out);
    let mut sink = move |event: RunEvent| {
        if let RunEvent::Output { stream, text } = event {
            let mut o = sink_out.lock().unwrap();
            match stream {
                OutputStream::Stdout => o.stdout.push_str(&text),
                OutputStream::Stderr => o.stderr.push_str(&text),
            }
        }
    };
    let outcome = tokio::time::timeout(
        Duration::from_secs(60),
        k.run(
            language,
            code,
            &mut sink,
            RunControl::cancel(&CancellationToken::new()),
        ),
    )
    .await
    .expect("the run must end")
    .unwrap();
    let out = out.lock().unwrap().clone();
    (outcome.status, out)
}

/// Runs `code` and interrupts it once it printed `ready`.
async fn interrupt(k: &mut KernelManager, language: &str, code: &str) -> RunStatus {
    let cancel = CancellationToken::new();
    let cancel_in_sink = cancel.clone();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen_in_sink = Arc::clone(&seen);
    let mut sink = move |event: RunEvent| {
        if let RunEvent::Output { text, .. } = &event
            && text.contains("ready")
        {
            cancel_in_sink.cancel();
        }
        seen_in_sink.lock().unwrap().push(event);
    };
    match tokio::time::timeout(
        Duration::from_secs(60),
        k.run(language, code, &mut sink, RunControl::cancel(&cancel)),
    )
    .await
    {
        Ok(outcome) => outcome.unwrap().status,
        Err(_) => panic!("the run did not end; events: {:?}", seen.lock().unwrap()),
    }
}

fn failed(status: &RunStatus) -> Option<String> {
    match status {
        RunStatus::Failed { error, .. } => Some(error.clone().unwrap_or_default()),
        _ => None,
    }
}

#[tokio::test]
async fn javascript_keeps_state_awaits_and_echoes() {
    let Some((mut k, _dir)) = kernels_for("javascript") else {
        return;
    };
    let (status, out) = run(
        &mut k,
        "js",
        "const x = 41\nlet list = [1, 2, 3]\nfunction double(n) { return n * 2 }",
    )
    .await;
    assert_eq!((status, out.stdout.as_str()), (RunStatus::Ok, ""));
    let (_, out) = run(&mut k, "javascript", "double(x + 1)").await;
    assert_eq!(out.stdout, "84\n", "the last value is echoed");
    let (status, _) = run(&mut k, "javascript", "const x = 5; x").await;
    assert_eq!(
        status,
        RunStatus::Ok,
        "a cell may declare the same const again"
    );
    let (_, out) = run(
        &mut k,
        "javascript",
        "const path = require('path'); path.join('a', 'b')",
    )
    .await;
    assert_eq!(out.stdout, "'a/b'\n");
    let (_, out) = run(
        &mut k,
        "javascript",
        "const os = await import('node:os'); typeof os.cpus",
    )
    .await;
    assert_eq!(out.stdout, "'function'\n", "import() works");
    let (_, out) = run(
        &mut k,
        "javascript",
        "const r = await new Promise(res => setTimeout(() => res(6), 10));\nr * 7",
    )
    .await;
    assert_eq!(
        out.stdout, "42\n",
        "top-level await, and its declarations persist"
    );
    let (_, out) = run(&mut k, "javascript", "r + list.length").await;
    assert_eq!(out.stdout, "9\n");
    let (_, out) = run(&mut k, "javascript", "console.log('a'); console.error('b'); setTimeout(() => console.log('later'), 20); undefined").await;
    assert_eq!(
        (out.stdout.as_str(), out.stderr.as_str()),
        ("a\nlater\n", "b\n"),
        "timers the cell started belong to it"
    );
}

#[tokio::test]
async fn javascript_reports_errors_and_rejections_with_their_stack() {
    let Some((mut k, _dir)) = kernels_for("javascript") else {
        return;
    };
    let (status, out) = run(
        &mut k,
        "javascript",
        "function f() { throw new TypeError('bad input') }\nf()",
    )
    .await;
    assert_eq!(failed(&status).as_deref(), Some("TypeError: bad input"));
    assert!(
        out.stderr
            .contains("TypeError: bad input\n    at f (<cell-1>:1:22)"),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains("[eval]"),
        "driver frames are hidden: {}",
        out.stderr
    );
    let (status, out) = run(
        &mut k,
        "javascript",
        "Promise.reject(new Error('nope')); 'after'",
    )
    .await;
    assert_eq!(failed(&status).as_deref(), Some("Error: nope"));
    assert!(out.stderr.contains("Error: nope"), "{}", out.stderr);
    let (status, out) = run(&mut k, "javascript", "let = = 3").await;
    assert!(
        failed(&status).is_some_and(|e| e.starts_with("SyntaxError")),
        "{status:?}"
    );
    assert!(out.stderr.contains("SyntaxError"), "{}", out.stderr);
    let (status, out) = run(&mut k, "javascript", "'still here'").await;
    assert_eq!(
        (status, out.stdout.as_str()),
        (RunStatus::Ok, "'still here'\n")
    );
}

#[tokio::test]
async fn ruby_keeps_state_and_echoes_like_irb() {
    let Some((mut k, _dir)) = kernels_for("ruby") else {
        return;
    };
    run(
        &mut k,
        "ruby",
        "x = 41\ndef double(n) = n * 2\nrequire 'set'",
    )
    .await;
    let (status, out) = run(&mut k, "rb", "puts double(x + 1)\nSet.new([1, 1, 2]).size").await;
    assert_eq!(status, RunStatus::Ok);
    assert_eq!(out.stdout, "84\n=> 2\n");
    let (status, out) = run(&mut k, "ruby", "def f = raise(ArgumentError, 'bad')\nf").await;
    assert_eq!(failed(&status).as_deref(), Some("ArgumentError: bad"));
    assert!(out.stderr.contains("<cell-3>:1:in `f'"), "{}", out.stderr);
    assert_eq!(
        interrupt(&mut k, "ruby", "puts 'ready'\nloop { }").await,
        RunStatus::Interrupted
    );
    let (_, out) = run(&mut k, "ruby", "x").await;
    assert_eq!(out.stdout, "=> 41\n", "state survives the interrupt");
}

#[tokio::test]
async fn r_keeps_state_and_prints_visible_values() {
    let Some((mut k, _dir)) = kernels_for("r") else {
        return;
    };
    run(&mut k, "r", "x <- c(1, 2, 3)\nsquare <- function(v) v^2").await;
    let (status, out) = run(&mut k, "R", "sum(square(x))\ny <- 5").await;
    assert_eq!(status, RunStatus::Ok);
    assert_eq!(
        out.stdout, "[1] 14\n",
        "visible values print, assignments do not"
    );
    let (status, out) = run(&mut k, "r", "stop('bad value')").await;
    assert_eq!(failed(&status).as_deref(), Some("Error: bad value"));
    assert!(out.stderr.contains("bad value"), "{}", out.stderr);
    let (status, _) = run(&mut k, "r", "sum(1, ").await;
    assert!(
        failed(&status).is_some_and(|e| e.starts_with("SyntaxError")),
        "{status:?}"
    );
    assert_eq!(
        interrupt(&mut k, "r", "cat('ready\\n')\nrepeat {}").await,
        RunStatus::Interrupted
    );
    let (_, out) = run(&mut k, "r", "y + length(x)").await;
    assert_eq!(out.stdout, "[1] 8\n");
}

#[tokio::test]
async fn perl_keeps_package_state() {
    let Some((mut k, _dir)) = kernels_for("perl") else {
        return;
    };
    run(
        &mut k,
        "perl",
        "our $x = 41;\nsub double { return $_[0] * 2 }",
    )
    .await;
    let (status, out) = run(&mut k, "pl", "print double($x + 1), \"\\n\";").await;
    assert_eq!((status, out.stdout.as_str()), (RunStatus::Ok, "84\n"));
    let (status, out) = run(&mut k, "perl", "die \"bad thing\\n\";").await;
    assert_eq!(failed(&status).as_deref(), Some("bad thing"));
    assert_eq!(out.stderr, "bad thing\n");
    assert_eq!(
        interrupt(&mut k, "perl", "print \"ready\\n\"; 1 while 1;").await,
        RunStatus::Interrupted
    );
    let (_, out) = run(&mut k, "perl", "print $x;").await;
    assert_eq!(out.stdout, "41");
}

#[tokio::test]
async fn lua_keeps_globals_and_echoes_expressions() {
    let Some((mut k, _dir)) = kernels_for("lua") else {
        return;
    };
    run(&mut k, "lua", "x = 41\nfunction double(n) return n * 2 end").await;
    let (status, out) = run(&mut k, "lua", "double(x + 1)").await;
    assert_eq!((status, out.stdout.as_str()), (RunStatus::Ok, "84\n"));
    let (status, out) = run(&mut k, "lua", "print('a')\nerror('bad')").await;
    assert!(
        failed(&status).is_some_and(|e| e.contains("bad")),
        "{status:?}"
    );
    assert_eq!(out.stdout, "a\n");
    let status = interrupt(&mut k, "lua", "print('ready')\nwhile true do end").await;
    assert_eq!(status, RunStatus::Interrupted);
    let (status, out) = run(&mut k, "lua", "x").await;
    assert_eq!(
        (status, out.stdout.as_str()),
        (RunStatus::Ok, "41\n"),
        "state survives the interrupt"
    );
}

#[tokio::test]
async fn php_keeps_variables_and_functions() {
    let Some((mut k, _dir)) = kernels_for("php") else {
        return;
    };
    run(
        &mut k,
        "php",
        "<?php\n$x = 41;\nfunction double($n) { return $n * 2; }",
    )
    .await;
    let (status, out) = run(&mut k, "php", "echo double($x + 1), \"\\n\";").await;
    assert_eq!((status, out.stdout.as_str()), (RunStatus::Ok, "84\n"));
    let (status, out) = run(&mut k, "php", "throw new InvalidArgumentException('bad');").await;
    assert_eq!(
        failed(&status).as_deref(),
        Some("InvalidArgumentException: bad")
    );
    assert!(out.stderr.contains("<cell-3>:1"), "{}", out.stderr);
    let (status, _) = run(&mut k, "php", "echo 'unclosed;").await;
    assert!(
        failed(&status).is_some_and(|e| e.starts_with("ParseError")),
        "{status:?}"
    );
    assert_eq!(
        interrupt(&mut k, "php", "echo \"ready\\n\"; while (true) {}").await,
        RunStatus::Interrupted
    );
    let (_, out) = run(&mut k, "php", "echo $x;").await;
    assert_eq!(out.stdout, "41");
}

#[tokio::test]
async fn zsh_is_its_own_persistent_shell() {
    let Some((mut k, _dir)) = kernels_for("zsh") else {
        return;
    };
    run(
        &mut k,
        "zsh",
        "cd /tmp\ntypeset -A colors\ncolors[sky]=blue",
    )
    .await;
    let (status, out) = run(&mut k, "zsh", "echo $PWD $colors[sky] $ZSH_NAME").await;
    assert_eq!(
        (status, out.stdout.as_str()),
        (RunStatus::Ok, "/tmp blue zsh\n")
    );
    let (status, _) = run(&mut k, "zsh", "false").await;
    assert_eq!(
        status,
        RunStatus::Failed {
            exit_code: Some(1),
            error: None
        }
    );
    assert_eq!(
        interrupt(&mut k, "zsh", "echo ready\nwhile true; do sleep 0.01; done").await,
        RunStatus::Interrupted
    );
    let (_, out) = run(&mut k, "zsh", "echo $colors[sky]").await;
    assert_eq!(out.stdout, "blue\n");
}

#[tokio::test]
async fn javascript_interrupts_keep_state() {
    let Some((mut k, _dir)) = kernels_for("javascript") else {
        return;
    };
    run(&mut k, "javascript", "const kept = 'yes'").await;
    let status = interrupt(
        &mut k,
        "javascript",
        "console.log('ready'); while (true) {}",
    )
    .await;
    assert_eq!(status, RunStatus::Interrupted);
    let status = interrupt(
        &mut k,
        "javascript",
        "console.log('ready'); await new Promise(() => {})",
    )
    .await;
    assert_eq!(
        status,
        RunStatus::Interrupted,
        "an endless await is interrupted too"
    );
    let (_, out) = run(&mut k, "javascript", "kept").await;
    assert_eq!(out.stdout, "'yes'\n");
}
