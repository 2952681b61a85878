//! Running one attempt at a task: a fresh workspace, the task's files and
//! setup, `interpreter exec --oi-json` on its prompt (sandboxed to the
//! workspace, approvals automatic, its own kernels), then the check.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use oi_protocol::{Event, RunStatus, StopReason};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

use crate::suite::Task;

/// How attempts are run.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// The `interpreter` binary.
    pub binary: PathBuf,
    /// Arguments passed through (`--model`, `--profile`, `-c` …).
    pub args: Vec<String>,
}

/// Why an attempt failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Failure {
    /// The task's files or setup script could not be prepared.
    Setup,
    /// The attempt ran past the task's timeout.
    Timeout,
    /// The loop guard stopped it (the same error or code again and again).
    LoopGuard,
    /// It used up its model requests.
    MaxTurns,
    /// The model server failed (or the agent reported an error).
    Error,
    /// The agent finished, but the check did not pass.
    Check,
}

impl Failure {
    pub fn describe(self) -> &'static str {
        match self {
            Self::Setup => "setup failed",
            Self::Timeout => "timed out",
            Self::LoopGuard => "stopped by the loop guard",
            Self::MaxTurns => "ran out of turns",
            Self::Error => "model or agent error",
            Self::Check => "finished, but the check failed",
        }
    }
}

/// One attempt at one task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    pub task: String,
    /// Which repetition (1 for the first).
    pub repeat: u32,
    pub passed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// Model requests the agent made for the task (its turns).
    pub turns: u32,
    /// Model requests completed, summaries included.
    pub requests: u32,
    /// Code runs.
    pub runs: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    pub wall_secs: f64,
    pub timed_out: bool,
    /// Runs stopped by `run_timeout`.
    pub run_timeouts: u32,
    pub kernel_crashes: u32,
    pub loop_guard: bool,
    /// How the agent's task ended (`done`, `max_turns`, `failed` …), if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<String>,
    /// The end of what the check printed (why it failed).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub check_output: String,
}

impl Attempt {
    fn new(task: &str, repeat: u32) -> Self {
        Self {
            task: task.to_owned(),
            repeat,
            passed: false,
            failure: None,
            turns: 0,
            requests: 0,
            runs: 0,
            input_tokens: 0,
            output_tokens: 0,
            cost_usd: None,
            wall_secs: 0.0,
            timed_out: false,
            run_timeouts: 0,
            kernel_crashes: 0,
            loop_guard: false,
            stop: None,
            transcript: None,
            check_output: String::new(),
        }
    }

    /// Takes in one event of the agent.
    fn event(&mut self, event: &Event) {
        match event {
            Event::SessionConfigured { transcript, .. } => self.transcript.clone_from(transcript),
            Event::ModelRequest { turn } => self.turns = self.turns.max(*turn),
            Event::Usage {
                total, cost_usd, ..
            } => {
                self.requests += 1;
                self.input_tokens = total.input_tokens;
                self.output_tokens = total.output_tokens;
                if cost_usd.is_some() {
                    self.cost_usd = *cost_usd;
                }
            }
            Event::RunStarted { .. } => self.runs += 1,
            Event::RunFinished { status, .. } => match status {
                RunStatus::Crashed { .. } => self.kernel_crashes += 1,
                RunStatus::TimedOut { .. } => self.run_timeouts += 1,
                _ => {}
            },
            Event::TaskComplete { reason, .. } => {
                self.loop_guard = matches!(reason, StopReason::LoopGuard { .. });
                self.stop = Some(
                    match reason {
                        StopReason::Done => "done",
                        StopReason::MaxTurns { .. } => "max_turns",
                        StopReason::Budget { .. } => "budget",
                        StopReason::LoopGuard { .. } => "loop_guard",
                        StopReason::TimeLimit { .. } => "time_limit",
                        StopReason::Failed => "failed",
                        StopReason::Interrupted => "interrupted",
                        StopReason::FailSafe => "fail_safe",
                    }
                    .to_owned(),
                );
            }
            _ => {}
        }
    }
}

fn last_chars(text: &str, n: usize) -> String {
    let count = text.chars().count();
    text.chars().skip(count.saturating_sub(n)).collect()
}

/// Copies the folder `from` into `to`, recursively.
fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    fs_err::create_dir_all(to)?;
    for entry in fs_err::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            fs_err::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// Runs `script` with bash in `cwd`; its exit status and output, or
/// `None` when it ran past `timeout`.
async fn script(
    script: &Path,
    cwd: &Path,
    task: &Task,
    timeout: Duration,
) -> Option<(bool, String)> {
    let mut cmd = tokio::process::Command::new("bash");
    cmd.arg(script)
        .current_dir(cwd)
        .env("OI_TASK_DIR", &task.dir)
        .env("OI_WORKSPACE", cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = cmd.spawn().ok()?;
    let out = tokio::time::timeout(timeout, child.wait_with_output())
        .await
        .ok()?
        .ok()?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    Some((out.status.success(), text))
}

/// Asks a process to stop (SIGTERM, so it stops its kernels), then kills
/// it if it has not after a few seconds.
async fn stop(child: &mut tokio::process::Child) {
    if let Some(pid) = child.id() {
        let _ = tokio::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .await;
        if tokio::time::timeout(Duration::from_secs(5), child.wait())
            .await
            .is_ok()
        {
            return;
        }
    }
    let _ = child.kill().await;
}

/// Runs one attempt at `task`.
pub async fn run_task(task: &Task, repeat: u32, settings: &RunSettings) -> Attempt {
    let mut attempt = Attempt::new(&task.id, repeat);
    let started = Instant::now();
    let workspace = match tempfile::Builder::new().prefix("oi-eval-").tempdir() {
        Ok(dir) => dir,
        Err(e) => {
            attempt.failure = Some(Failure::Setup);
            attempt.check_output = format!("cannot make a workspace: {e}");
            return attempt;
        }
    };
    // The sandbox's workspace is the canonical path; so is the transcript's.
    let cwd =
        fs_err::canonicalize(workspace.path()).unwrap_or_else(|_| workspace.path().to_path_buf());
    if let Some(files) = &task.files
        && let Err(e) = copy_dir(files, &cwd)
    {
        attempt.failure = Some(Failure::Setup);
        attempt.check_output = format!("cannot copy the task's files: {e}");
        return attempt;
    }
    if let Some(setup) = &task.setup {
        match script(setup, &cwd, task, Duration::from_secs(120)).await {
            Some((true, _)) => {}
            Some((false, output)) => {
                attempt.failure = Some(Failure::Setup);
                attempt.check_output = last_chars(&output, 2000);
                return attempt;
            }
            None => {
                attempt.failure = Some(Failure::Setup);
                attempt.check_output = "the setup script ran for more than 120 s".to_owned();
                return attempt;
            }
        }
    }

    let mut cmd = tokio::process::Command::new(&settings.binary);
    cmd.args(["exec", "--oi-json", "--yes"])
        .args(&settings.args);
    if let Some(turns) = task.max_turns {
        cmd.args(["--max-turns", &turns.to_string()]);
    }
    cmd.arg("--")
        .arg(&task.prompt)
        .current_dir(&cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut errors = String::new();
    match cmd.spawn() {
        Err(e) => {
            attempt.failure = Some(Failure::Error);
            attempt.check_output = format!("cannot start {}: {e}", settings.binary.display());
            return attempt;
        }
        Ok(mut child) => {
            let stdout = child.stdout.take();
            let mut stderr = child.stderr.take();
            let read = async {
                if let Some(stdout) = stdout {
                    let mut lines = BufReader::new(stdout).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        if let Ok(event) = serde_json::from_str::<Event>(&line) {
                            attempt.event(&event);
                        }
                    }
                }
            };
            let limit = Duration::from_secs(task.timeout_secs);
            if tokio::time::timeout(limit, read).await.is_err() {
                attempt.timed_out = true;
            }
            if attempt.timed_out {
                stop(&mut child).await;
            } else {
                let _ = tokio::time::timeout(Duration::from_secs(30), child.wait()).await;
                if child.try_wait().ok().flatten().is_none() {
                    stop(&mut child).await;
                }
            }
            if let Some(err) = stderr.as_mut() {
                let mut text = String::new();
                let _ = tokio::time::timeout(Duration::from_secs(5), err.read_to_string(&mut text))
                    .await;
                errors = last_chars(&text, 2000);
            }
        }
    }

    let checked = script(&task.check, &cwd, task, Duration::from_secs(60)).await;
    attempt.wall_secs = started.elapsed().as_secs_f64();
    match checked {
        Some((true, _)) => attempt.passed = true,
        Some((false, output)) => attempt.check_output = last_chars(&output, 2000),
        None => attempt.check_output = "the check script ran for more than 60 s".to_owned(),
    }
    if !attempt.passed {
        attempt.failure = Some(if attempt.timed_out {
            Failure::Timeout
        } else if attempt.loop_guard {
            Failure::LoopGuard
        } else {
            match attempt.stop.as_deref() {
                Some("max_turns") => Failure::MaxTurns,
                Some("failed") | None => Failure::Error,
                _ => Failure::Check,
            }
        });
        if attempt.failure == Some(Failure::Error) && !errors.is_empty() {
            attempt.check_output = format!("{errors}{}", attempt.check_output);
        }
    }
    attempt
}
