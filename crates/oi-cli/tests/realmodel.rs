//! Everyday tasks with a real small model (Qwen2.5-Coder 0.5B served by
//! llama.cpp), through `interpreter exec --local`. The assertions are on
//! results — a file made, a number in a run's output — never on wording.
//!
//! They need a running server: `OI_LOCALMODEL_URL` (e.g.
//! `http://127.0.0.1:8090`), as `.ci/run` starts with
//! `../shared/localmodel/localmodel serve 0.5b`. Without it they are skipped
//! (saying so), unless `OI_REQUIRE_LOCALMODEL` is set. Run them one at a
//! time: `cargo test -p oi-cli --test realmodel -- --test-threads=1`.
//!
//! The `builtin_` tests run the same weights in oi's own process (a build
//! with `--features builtin`, and `OI_BUILTIN_GGUF` naming the GGUF file),
//! through `--local` with no server running.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::print_stderr,
    reason = "test code: a panic is a test failure"
)]

use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

/// The server, or `None` (skip) when none is configured.
fn server() -> Option<String> {
    let url = std::env::var("OI_LOCALMODEL_URL").unwrap_or_default();
    oi_testkit::present_or_skip(
        oi_testkit::Need::LocalModel,
        !url.trim().is_empty(),
        "no local model server (set OI_LOCALMODEL_URL)",
    )
    .then_some(url)
}

struct Task {
    /// The working folder, with the task's input files.
    cwd: tempfile::TempDir,
    home: tempfile::TempDir,
}

/// What a task did: its events (JSON lines of `exec --oi-json`) and exit code.
struct Outcome {
    code: i32,
    events: Vec<Value>,
    stderr: String,
}

impl Outcome {
    /// Everything the runs printed, stdout and stderr.
    fn output(&self) -> String {
        self.events
            .iter()
            .filter(|e| e["type"] == "output_delta")
            .filter_map(|e| e["text"].as_str())
            .collect()
    }

    /// The model's replies that break the one-step form small models are
    /// held to (prose, then at most one code block ending the reply),
    /// leaving out replies cut off at the token limit.
    fn replies_off_form(&self) -> Vec<String> {
        let mut off = Vec::new();
        for (i, event) in self.events.iter().enumerate() {
            let Some(text) = event["text"]
                .as_str()
                .filter(|_| event["type"] == "assistant_message")
            else {
                continue;
            };
            let cut = self.events[i + 1..]
                .iter()
                .take_while(|e| e["type"] != "assistant_message")
                .any(|e| {
                    e["type"] == "warning"
                        && e["message"].as_str().is_some_and(|m| m.contains("cut off"))
                });
            if !cut && !oi_providers::ReplyForm::OneCodeBlock.admits(text) {
                off.push(text.to_owned());
            }
        }
        off
    }

    /// What happened, for a failure's message: the exit code, what the
    /// runs printed, the stderr, and each reply, code block, run's end
    /// and warning in order (a real model's way through a task differs
    /// from one machine to the next).
    fn describe(&self) -> String {
        let steps: Vec<String> = self
            .events
            .iter()
            .filter_map(|e| match e["type"].as_str()? {
                "assistant_message" => Some(format!("reply: {}", e["text"])),
                "code_proposed" => Some(format!("code ({}): {}", e["language"], e["code"])),
                "run_finished" => Some(format!("run: {}", e["status"])),
                "warning" => Some(format!("warning: {}", e["message"])),
                "task_complete" => Some(format!("end: {}", e["reason"])),
                _ => None,
            })
            .collect();
        format!(
            "exit {}; run output:\n{}\nstderr:\n{}\nsteps:\n{}",
            self.code,
            self.output(),
            self.stderr,
            steps.join("\n")
        )
    }
}

impl Task {
    fn new() -> Self {
        Self {
            cwd: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        }
    }

    fn file(&self, name: &str, text: &str) -> &Self {
        std::fs::write(self.cwd.path().join(name), text).unwrap();
        self
    }

    async fn run(&self, server: &str, prompt: &str) -> Outcome {
        self.run_with(server, &[], prompt).await
    }

    /// The task with the built-in engine running `weights` (no server
    /// answers, so `--local` falls back to it), on one thread.
    async fn run_builtin(&self, weights: &std::path::Path, prompt: &str) -> Outcome {
        let model = weights.display().to_string();
        self.run_with(
            "http://127.0.0.1:9",
            &["--model", &model, "-c", "builtin.threads=1"],
            prompt,
        )
        .await
    }

    async fn run_with(&self, server: &str, extra: &[&str], prompt: &str) -> Outcome {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_interpreter"));
        cmd.args(extra);
        cmd.args([
            "exec",
            "--oi-json",
            "--local",
            "-y",
            "--max-turns",
            "6",
            "-c",
            "max_tokens=300",
            "-c",
            "temperature=0",
            prompt,
        ])
        .current_dir(self.cwd.path())
        .env("HOME", self.home.path())
        .env("OI_LOCAL_SERVERS", server)
        .env_remove("OPENAI_API_KEY")
        .env_remove("INTERPRETER_HOME")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
        let child = cmd.spawn().unwrap();
        let out = tokio::time::timeout(Duration::from_secs(600), child.wait_with_output())
            .await
            .expect("the task did not finish within 10 minutes")
            .unwrap();
        Outcome {
            code: out.status.code().unwrap_or(-1),
            events: String::from_utf8_lossy(&out.stdout)
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

#[tokio::test]
async fn sum_of_one_to_a_hundred() {
    let Some(server) = server() else { return };
    let task = Task::new();
    let outcome = task
        .run(
            &server,
            "Use python to compute the sum of the integers from 1 to 100 and print it.",
        )
        .await;
    assert!(outcome.output().contains("5050"), "{}", outcome.describe());
    // The server held each reply to one step (llama.cpp's `grammar`).
    assert_eq!(outcome.replies_off_form(), Vec::<String>::new());
}

/// Asked to explain, the model writes prose after its code unless held to
/// one step (it does with `reply_grammar = false`); the server's grammar
/// ends the reply at the block, which runs.
#[tokio::test]
async fn a_reply_asked_to_explain_is_held_to_one_step() {
    let Some(server) = server() else { return };
    let task = Task::new();
    let outcome = task
        .run(
            &server,
            "Write a Python script that prints the squares of 1 to 5, and explain how it works.",
        )
        .await;
    assert!(outcome.output().contains("25"), "{}", outcome.describe());
    assert_eq!(outcome.replies_off_form(), Vec::<String>::new());
}

#[tokio::test]
async fn create_a_file_with_given_text() {
    let Some(server) = server() else { return };
    let task = Task::new();
    let outcome = task
        .run(
            &server,
            "Create a file named hello.txt containing the text hi",
        )
        .await;
    let made = std::fs::read_to_string(task.cwd.path().join("hello.txt"))
        .unwrap_or_else(|e| panic!("no hello.txt ({e}); {}", outcome.describe()));
    assert_eq!(made.trim(), "hi", "{}", outcome.describe());
}

#[tokio::test]
async fn builtin_creates_a_file_with_given_text() {
    let Some(weights) = oi_testkit::builtin_weights(oi_builtin::AVAILABLE) else {
        return;
    };
    let task = Task::new();
    let outcome = task
        .run_builtin(
            &weights,
            "Create a file named hello.txt containing the text hi",
        )
        .await;
    let made = std::fs::read_to_string(task.cwd.path().join("hello.txt"))
        .unwrap_or_else(|e| panic!("no hello.txt ({e}); {}", outcome.describe()));
    assert_eq!(made.trim(), "hi", "{}", outcome.describe());
    assert!(
        outcome.stderr.contains("oi runs"),
        "the built-in model was used: {}",
        outcome.describe()
    );
    // Tokens were counted; the shared start of the prompt stayed cached.
    let usage = outcome
        .events
        .iter()
        .rfind(|e| e["type"] == "usage")
        .cloned()
        .unwrap_or_default();
    assert!(
        usage["total"]["input_tokens"].as_u64().unwrap_or(0) > 0
            && usage["total"]["output_tokens"].as_u64().unwrap_or(0) > 0,
        "usage reported: {usage}"
    );
}

#[tokio::test]
async fn builtin_sums_one_to_a_hundred() {
    let Some(weights) = oi_testkit::builtin_weights(oi_builtin::AVAILABLE) else {
        return;
    };
    let task = Task::new();
    let outcome = task
        .run_builtin(
            &weights,
            "Use python to compute the sum of the integers from 1 to 100 and print it.",
        )
        .await;
    assert!(outcome.output().contains("5050"), "{}", outcome.describe());
    // The engine held each reply to one step.
    assert_eq!(outcome.replies_off_form(), Vec::<String>::new());
}

#[tokio::test]
async fn count_the_lines_of_a_csv() {
    let Some(server) = server() else { return };
    let task = Task::new();
    task.file(
        "data.csv",
        "name,age\nann,31\nbob,25\ncid,40\ndee,19\neve,52\nfay,33\n",
    );
    let outcome = task
        .run(
            &server,
            "Count the lines of data.csv using the shell command wc.",
        )
        .await;
    let output = outcome.output();
    assert!(
        output
            .split(|c: char| !c.is_ascii_digit())
            .any(|n| n == "7"),
        "{}",
        outcome.describe()
    );
}

#[tokio::test]
async fn a_power_of_two() {
    let Some(server) = server() else { return };
    let task = Task::new();
    let outcome = task
        .run(&server, "Use python to print 2 to the power of 20.")
        .await;
    assert!(
        outcome.output().contains("1048576"),
        "{}",
        outcome.describe()
    );
}

/// `interpreter eval` on the bundled suite's smoke tasks with the real
/// model: it runs and reports (the rate itself is not asserted).
#[tokio::test]
async fn eval_runs_the_smoke_tasks_and_reports() {
    let Some(server) = server() else { return };
    let task = Task::new();
    let suite = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../evals/basic");
    let out_file = task.cwd.path().join("results.json");
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_interpreter"))
        .args([
            "eval",
            "--tag",
            "smoke",
            "--local",
            "-c",
            "max_tokens=300",
            "--out",
        ])
        .arg(&out_file)
        .arg(&suite)
        .current_dir(task.cwd.path())
        .env("HOME", task.home.path())
        .env("OI_LOCAL_SERVERS", &server)
        .env_remove("OPENAI_API_KEY")
        .env_remove("INTERPRETER_HOME")
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("attempts passed"), "{stdout}");
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    let attempts = results["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 5, "{results}");
    for attempt in attempts {
        assert!(attempt["turns"].as_u64().unwrap() >= 1, "{attempt}");
        assert!(attempt["transcript"].is_string(), "{attempt}");
    }
}
