//! Kernels through the binary: floods of output, programs waiting for
//! input, time limits, other languages, plots, and cleanup on SIGTERM.

use oi_testkit::Reply;
use serde_json::Value;

use crate::support::{Output, TestEnv, alive, last_message_text, run_command, signal_when};

/// Runs `interpreter ARGS…` under a Python wrapper that reports the peak
/// resident memory of the binary (from `wait4`), in KiB.
async fn exec_measuring_memory(env: &TestEnv, args: &[&str]) -> (Output, u64) {
    const WRAPPER: &str = "import os, sys\npid = os.fork()\nif pid == 0:\n    os.execv(sys.argv[1], sys.argv[1:])\n_, status, usage = os.wait4(pid, 0)\nsys.stderr.write('\\npeak-rss-kib=%d\\n' % usage.ru_maxrss)\nsys.exit(os.waitstatus_to_exitcode(status))\n";
    let mut all = vec!["exec"];
    all.extend_from_slice(args);
    let out = run_command(env.command_wrapped(&["python3", "-c", WRAPPER], &all), None).await;
    let peak = out
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("peak-rss-kib="))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no peak RSS reported: {out:?}"));
    (out, peak)
}

#[tokio::test]
async fn printing_200_mb_keeps_memory_bounded_and_sends_the_model_head_and_tail() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute(
            "python",
            "import sys\nline = 'x' * 99 + '\\n'\nprint('first')\nfor _ in range(2_000_000):\n    sys.stdout.write(line)\nprint('the end')",
        ))
        .push(Reply::text("That was a lot."));
    let started = std::time::Instant::now();
    let (out, peak_kib) = exec_measuring_memory(&env, &["-y", "flood"]).await;
    let seconds = started.elapsed().as_secs_f64();
    assert_eq!(
        out.code,
        0,
        "{}",
        &out.stderr[out.stderr.len().saturating_sub(2000)..]
    );
    eprintln!("peak RSS of `interpreter exec` while a run printed 200 MB: {peak_kib} KiB");
    // 200 MB went through; the binary never held more than a small part.
    assert!(
        peak_kib < 100 * 1024,
        "peak RSS {peak_kib} KiB while streaming 200 MB"
    );
    assert!(
        out.stderr.contains("of output skipped here"),
        "the terminal was spared most of it"
    );
    assert!(
        out.stderr.contains("200.0 MB of output"),
        "the size is reported"
    );
    // What the screen gets is paced: a burst of 512 KiB, then 256 KiB/s
    // (plus the end of the output and the notes), however fast it came.
    let ceiling = 512.0 * 1024.0 + 256.0 * 1024.0 * seconds + 64.0 * 1024.0;
    assert!(
        (out.stderr.len() as f64) < ceiling,
        "{} bytes shown in {seconds:.1} s",
        out.stderr.len()
    );
    assert!(
        out.stderr.len() < 100 * 1024 * 1024,
        "most of it was skipped"
    );
    assert!(out.stderr.contains("the end\n"), "the end is always shown");
    let told = last_message_text(&env.server, 1);
    assert!(told.starts_with("first\nxxx"), "{told:.100}");
    assert!(told.ends_with("the end\n"), "{told:.100}");
    assert!(told.contains("characters of output cut"), "{told:.100}");
    assert!(told.len() < 4500, "{}", told.len());
}

#[tokio::test]
async fn a_program_waiting_for_input_is_stopped_at_once_in_exec() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute(
            "python",
            "answer = input('Proceed? [y/N] ')",
        ))
        .push(Reply::text("It wanted input."));
    let started = std::time::Instant::now();
    let out = env.exec(&["-y", "ask me"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "detected, not timed out"
    );
    assert!(
        out.stderr
            .contains("waited for input, which nobody can type here"),
        "{}",
        out.stderr
    );
    let told = last_message_text(&env.server, 1);
    assert!(
        told.contains("wait for input on stdin") && told.contains("Proceed? [y/N]"),
        "{told}"
    );
}

#[tokio::test]
async fn run_timeout_stops_a_long_run_and_the_model_is_told() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute("shell", "echo working; sleep 100"))
        .push(Reply::text("Too slow."));
    let out = env.exec(&["-y", "--run-timeout", "1", "wait"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("stopped after 1 s (run_timeout)"),
        "{}",
        out.stderr
    );
    let told = last_message_text(&env.server, 1);
    assert!(told.starts_with("working\n"), "{told}");
    assert!(told.contains("stopped after 1 s"), "{told}");

    // The configuration key does the same.
    env.server
        .push(Reply::execute("python", "import time\ntime.sleep(100)"))
        .push(Reply::text("Too slow."));
    let out = env.exec(&["-y", "-c", "run_timeout=1", "wait"]).await;
    assert!(
        out.stderr.contains("stopped after 1 s (run_timeout)"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn javascript_keeps_its_state_between_runs() {
    if !oi_testkit::present_or_skip(
        oi_testkit::Need::Language("javascript"),
        oi_testkit::installed("node"),
        "node is not installed",
    ) {
        return;
    }
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute("javascript", "const base = 40"))
        .push(Reply::execute(
            "js",
            "const add = async (n) => base + n;\nawait add(2)",
        ))
        .push(Reply::text("42"));
    let out = env.exec(&["-y", "add"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(last_message_text(&env.server, 2), "42\n");
}

#[tokio::test]
async fn a_configured_interpreter_replaces_the_detected_one_and_unknown_ones_are_refused() {
    let env = TestEnv::new().await;
    let fake = env.cwd.path().join("mypython");
    std::fs::write(
        &fake,
        "#!/bin/sh\nexport OI_FROM_CONFIG=yes\nexec python3 \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    env.write_config(&format!(
        "model_provider = \"mock\"\nmodel = \"mock-model\"\n\n[model_providers.mock]\nbase_url = \"{}\"\n\n[languages.python]\ncommand = [\"{}\"]\n",
        env.server.base_url(),
        fake.display()
    ));
    env.server
        .push(Reply::execute(
            "python",
            "import os\nprint(os.environ.get('OI_FROM_CONFIG'))",
        ))
        .push(Reply::text("ok"));
    let out = env.exec(&["-y", "which python?"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(last_message_text(&env.server, 1), "yes\n");

    let out = env
        .exec(&["-y", "-c", "languages.cobol.command=[\"cobc\"]", "x"])
        .await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr
            .contains("[languages.cobol]: oi has no kernel for `cobol`")
            && out.stderr.contains("javascript"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn a_matplotlib_plot_becomes_a_png_in_the_session_folder() {
    let Some(python) = oi_testkit::matplotlib_python() else {
        return;
    };
    let env = TestEnv::new().await;
    env.write_config(&format!(
        "model_provider = \"mock\"\nmodel = \"mock-model\"\n\n[model_providers.mock]\nbase_url = \"{}\"\n\n[languages.python]\ncommand = [\"{python}\"]\n",
        env.server.base_url(),
    ));
    env.server
        .push(Reply::execute(
            "python",
            "import matplotlib.pyplot as plt\nplt.plot([1, 4, 9])\nplt.title('squares')\nplt.show()",
        ))
        .push(Reply::text("Plotted."));
    let out = env.exec(&["-y", "--oi-json", "plot squares"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let images: Vec<String> = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "image")
        .map(|e| e["path"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(images.len(), 1, "{}", out.stdout);
    let path = std::path::Path::new(&images[0]);
    assert!(
        path.starts_with(env.oi_home().join("sessions")),
        "{}",
        path.display()
    );
    let png = std::fs::read(path).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 1000);
    assert!(
        last_message_text(&env.server, 1).contains(&format!("[image saved: {}]", path.display()))
    );
}

#[tokio::test]
async fn sigterm_leaves_no_process_behind_even_ones_that_left_the_group() {
    let env = TestEnv::new().await;
    let pids = env.cwd.path().join("pids");
    let code = format!(
        r#"import os, subprocess, time
own_session = subprocess.Popen(["setsid", "sleep", "1000"])
pid = os.fork()
if pid == 0:
    # A classic daemon: a new session, and a parent that has exited.
    os.setsid()
    if os.fork():
        os._exit(0)
    os.execvp("sleep", ["sleep", "1001"])
os.waitpid(pid, 0)
time.sleep(0.2)
daemon = subprocess.run(["pgrep", "-f", "sleep 1001"], capture_output=True, text=True).stdout.split()
with open({pids:?}, "w") as f:
    f.write(" ".join([str(own_session.pid)] + daemon))
print("started", flush=True)
time.sleep(1000)
"#,
        pids = pids.display().to_string()
    );
    env.server.push(Reply::execute("python", &code));
    let (exit, stderr) = signal_when(&env, &["exec", "-y", "daemons"], "started", "-TERM").await;
    assert_eq!(exit, 143, "{stderr}");
    let pids: Vec<i32> = std::fs::read_to_string(&pids)
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert!(pids.len() >= 2, "{pids:?}");
    // Killed before the binary exited; give the kernel a moment to deliver.
    for _ in 0..100 {
        if !pids.iter().any(|&pid| alive(pid)) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let left: Vec<i32> = pids.into_iter().filter(|&pid| alive(pid)).collect();
    panic!("processes {left:?} outlived the session");
}

#[tokio::test]
async fn kill_9_takes_the_kernels_along_and_the_next_start_ends_what_escaped() {
    let env = TestEnv::new().await;
    let pids = env.cwd.path().join("pids");
    let code = format!(
        r#"import os, subprocess, time
child = subprocess.Popen(["sleep", "1002"])
own_session = subprocess.Popen(["setsid", "sleep", "1003"])
time.sleep(0.2)
with open({pids:?}, "w") as f:
    f.write(f"{{os.getpid()}} {{child.pid}} {{own_session.pid}}")
print("started", flush=True)
time.sleep(1000)
"#,
        pids = pids.display().to_string()
    );
    env.server
        .push(Reply::execute("python", &code))
        .push(Reply::text("Hello again."));
    let (exit, stderr) = signal_when(&env, &["exec", "-y", "work"], "started", "-KILL").await;
    assert_eq!(exit, -1, "killed by a signal: {stderr}");
    let pids: Vec<i32> = std::fs::read_to_string(&pids)
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    let [kernel, child, escaped] = pids[..] else {
        panic!("{pids:?}")
    };
    // The kernel and what it started in its group die with oi.
    let gone = |pids: &[i32]| !pids.iter().any(|&pid| alive(pid));
    for _ in 0..500 {
        if gone(&[kernel, child]) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let left: Vec<i32> = [kernel, child].into_iter().filter(|&p| alive(p)).collect();
    if !left.is_empty() {
        let _ = std::process::Command::new("kill")
            .arg("-9")
            .args(left.iter().map(ToString::to_string))
            .status();
        let _ = std::process::Command::new("kill")
            .args(["-9", &escaped.to_string()])
            .status();
        panic!("processes {left:?} outlived an oi killed with SIGKILL");
    }
    // What left the group is ended at the next start.
    let out = env.exec(&["hello"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    for _ in 0..100 {
        if !alive(escaped) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let _ = std::process::Command::new("kill")
        .args(["-9", &escaped.to_string()])
        .status();
    panic!("process {escaped} left by a killed session survived the next start");
}
