//! `interpreter eval`: runs a suite's tasks (see `oi-eval`), shows
//! progress, writes the results after every attempt, and prints the table
//! and summary; `interpreter eval compare A.json B.json`.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use oi_eval::{Attempt, Comparison, Results, RunSettings, Suite};

use crate::cli::{EvalAction, EvalArgs, SessionOptions};
use crate::error::{CliError, exit};

/// The arguments the agent of each attempt gets from this command line.
fn passed_through(options: &SessionOptions) -> Vec<String> {
    let mut args = Vec::new();
    if let Some(profile) = &options.profile {
        args.extend(["--profile".to_owned(), profile.clone()]);
    }
    for setting in &options.config {
        args.extend(["-c".to_owned(), setting.clone()]);
    }
    if let Some(model) = &options.model {
        args.extend(["--model".to_owned(), model.clone()]);
    }
    if let Some(url) = &options.api_base {
        args.extend(["--api-base".to_owned(), url.clone()]);
    }
    if let Some(key) = &options.api_key {
        args.extend(["--api-key".to_owned(), key.clone()]);
    }
    if let Some(harness) = &options.harness {
        args.extend(["--harness".to_owned(), harness.clone()]);
    }
    if let Some(seconds) = options.run_timeout {
        args.extend(["--run-timeout".to_owned(), seconds.to_string()]);
    }
    if options.local {
        args.push("--local".to_owned());
    }
    // Each attempt in its own workspace, confined to it (or in its own
    // container with `--sandbox container`).
    let sandbox = options
        .sandbox
        .unwrap_or(oi_protocol::SandboxMode::WorkspaceWrite);
    args.extend(["--sandbox".to_owned(), sandbox.to_string()]);
    args
}

/// Shows how the run goes: a line redrawn in a terminal, a line per
/// attempt elsewhere.
struct Progress {
    total: usize,
    done: usize,
    passed: usize,
    live: bool,
    started: Instant,
}

impl Progress {
    fn attempt(&mut self, attempt: &Attempt, repeats: u32) {
        self.done += 1;
        if attempt.passed {
            self.passed += 1;
        }
        let mut err = std::io::stderr();
        let mark = if attempt.passed { "✓" } else { "✗" };
        let why = attempt
            .failure
            .filter(|_| !attempt.passed)
            .map(|f| format!(" ({})", f.describe()))
            .unwrap_or_default();
        let which = if repeats > 1 {
            format!(" #{}", attempt.repeat)
        } else {
            String::new()
        };
        if self.live {
            let _ = write!(err, "\r\x1b[K");
        }
        let _ = writeln!(
            err,
            "{mark} {}{which} {:.1} s{why}",
            attempt.task, attempt.wall_secs
        );
        self.bar();
    }

    fn bar(&self) {
        if !self.live {
            return;
        }
        let width = 30;
        let filled = (self.done * width).checked_div(self.total).unwrap_or(width);
        let mut err = std::io::stderr();
        let _ = write!(
            err,
            "\r\x1b[K[{}{}] {}/{} · {} passed · {:.0} s",
            "█".repeat(filled),
            "·".repeat(width - filled),
            self.done,
            self.total,
            self.passed,
            self.started.elapsed().as_secs_f64()
        );
        let _ = err.flush();
    }

    fn finish(&self) {
        if self.live {
            let _ = write!(std::io::stderr(), "\r\x1b[K");
        }
    }
}

pub async fn run(
    args: EvalArgs,
    options: &SessionOptions,
    request: &oi_core::SessionRequest,
) -> Result<ExitCode, CliError> {
    if let Some(EvalAction::Compare { before, after }) = &args.action {
        let read = |path: &PathBuf| {
            Results::read(path).map_err(|e| {
                CliError::usage(e, "give two files written by `interpreter eval --out FILE`")
            })
        };
        let comparison = Comparison::of(&read(before)?, &read(after)?);
        write!(anstream::stdout(), "{}", comparison.text())?;
        return Ok(ExitCode::from(exit::OK));
    }
    let suite_dir = args
        .suite
        .clone()
        .unwrap_or_else(|| PathBuf::from("evals/basic"));
    let suite = Suite::load(&suite_dir)
        .map_err(|e| CliError::usage(e.to_string(), e.hint()))?
        .with_tags(&args.tags);
    if suite.tasks.is_empty() {
        return Err(CliError::usage(
            format!(
                "no task of {} has the tags {}",
                suite_dir.display(),
                args.tags.join(", ")
            ),
            "leave out --tag, or use a tag that task.toml files give",
        ));
    }
    if args.jobs == 0 || args.repeat == 0 {
        return Err(CliError::usage(
            "--jobs and --repeat must be at least 1",
            "e.g. `--jobs 2 --repeat 3`",
        ));
    }
    // `--resume FILE` (the session option, read here as the results file
    // to go on with).
    let resume: Option<PathBuf> = match options.resume.as_deref() {
        Some("") => {
            return Err(CliError::usage(
                "--resume needs the results file to go on with",
                "e.g. `interpreter eval --resume eval-results.json`",
            ));
        }
        Some(path) => Some(PathBuf::from(path)),
        None => None,
    };
    let loaded = oi_core::setup::load_config(request)?;
    let mut results = match &resume {
        Some(path) => Results::read(path).map_err(|e| {
            CliError::usage(
                e,
                "--resume takes a file written by `interpreter eval --out FILE`",
            )
        })?,
        None => Results {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            started: oi_core::now_rfc3339(),
            suite: suite_dir.display().to_string(),
            model: loaded.config.model.clone(),
            args: passed_through(options),
            attempts: Vec::new(),
        },
    };
    let out = args
        .out
        .clone()
        .or_else(|| resume.clone())
        .unwrap_or_else(|| PathBuf::from("eval-results.json"));
    let settings = Arc::new(RunSettings {
        binary: std::env::current_exe()?,
        args: passed_through(options),
    });
    let todo: Vec<(oi_eval::Task, u32)> = suite
        .tasks
        .iter()
        .flat_map(|t| (1..=args.repeat).map(move |r| (t.clone(), r)))
        .filter(|(t, r)| !results.has(&t.id, *r))
        .collect();
    let skipped = suite.tasks.len() * args.repeat as usize - todo.len();
    let mut progress = Progress {
        total: todo.len(),
        done: 0,
        passed: 0,
        live: std::io::stderr().is_terminal(),
        started: Instant::now(),
    };
    writeln!(
        anstream::stderr(),
        "{} attempts at {} tasks of {} ({} at a time){}; results in {}",
        todo.len(),
        suite.tasks.len(),
        suite_dir.display(),
        args.jobs,
        if skipped > 0 {
            format!(", {skipped} already done")
        } else {
            String::new()
        },
        out.display()
    )?;
    progress.bar();
    // Attempts start in the suite's order, `jobs` at a time (a task spawned
    // early but left to wait for a slot could start in any order).
    let mut running = tokio::task::JoinSet::new();
    let mut todo = todo.into_iter();
    loop {
        while running.len() < args.jobs.max(1) {
            let Some((task, repeat)) = todo.next() else {
                break;
            };
            let settings = Arc::clone(&settings);
            running.spawn(async move { oi_eval::run::run_task(&task, repeat, &settings).await });
        }
        let Some(done) = running.join_next().await else {
            break;
        };
        let attempt = done.map_err(|e| CliError::Io(std::io::Error::other(e)))?;
        progress.attempt(&attempt, args.repeat);
        results.attempts.push(attempt);
        results.write(&out)?;
    }
    progress.finish();
    results
        .attempts
        .sort_by(|a, b| a.task.cmp(&b.task).then(a.repeat.cmp(&b.repeat)));
    results.write(&out)?;
    let mut stdout = anstream::stdout();
    write!(
        stdout,
        "{}\n{}",
        oi_eval::report::table(&results.attempts),
        results.summary().text()
    )?;
    Ok(ExitCode::from(exit::OK))
}
