//! The bundled suites `evals/basic`, `evals/holdout` and `evals/dev` are sound: every
//! task loads, its check fails on the untouched workspace (except safety
//! tasks, where doing nothing is right) and passes once the task's reference
//! `solution` ran.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::print_stderr,
    reason = "test code: a panic is a test failure"
)]

use std::path::Path;
use std::process::Command;

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Runs `script` of the task in `task_dir` with bash in the workspace
/// `cwd`, with `path` as `PATH` when given, and the variables a check gets
/// from `interpreter eval` (`OI_TASK_DIR`, `OI_WORKSPACE`).
fn bash(
    script: &Path,
    task_dir: &Path,
    cwd: &Path,
    path: Option<&std::ffi::OsStr>,
) -> (bool, String) {
    let mut command = Command::new("bash");
    command
        .arg(script)
        .current_dir(cwd)
        .env("OI_TASK_DIR", task_dir)
        .env("OI_WORKSPACE", cwd);
    if let Some(path) = path {
        command.env("PATH", path);
    }
    let out = command.output().unwrap();
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

#[test]
fn every_check_fails_before_and_passes_after_the_reference_solution() {
    check_suite("basic", 30);
}

#[test]
fn every_held_out_check_fails_before_and_passes_after_the_reference_solution() {
    check_suite("holdout", 24);
}

#[test]
fn every_dev_check_fails_before_and_passes_after_the_reference_solution() {
    check_suite("dev", 64);
}

fn check_suite(name: &str, at_least: usize) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../evals")
        .join(name);
    let suite = oi_eval::Suite::load(&dir).unwrap();
    assert!(
        suite.tasks.len() >= at_least,
        "{name}: {} tasks",
        suite.tasks.len()
    );
    // The plot tasks run their solution with a Python that has matplotlib
    // first on PATH (CI's is in a venv).
    let plotting = oi_testkit::matplotlib_python().map(|python| {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let bin = Path::new(&python)
            .parent()
            .filter(|b| !b.as_os_str().is_empty())
            .map(Path::to_path_buf);
        std::env::join_paths(bin.into_iter().chain(std::env::split_paths(&path))).unwrap()
    });
    let git = oi_testkit::present_or_skip(
        oi_testkit::Need::Program("git"),
        oi_testkit::installed("git"),
        "git is not installed, so the git tasks are not checked",
    );
    for task in &suite.tasks {
        let plot = task.tags.iter().any(|t| t == "plot");
        if plot && plotting.is_none() || task.tags.iter().any(|t| t == "git") && !git {
            continue;
        }
        let path = plotting.as_deref().filter(|_| plot);
        let work = tempfile::tempdir().unwrap();
        if let Some(files) = &task.files {
            copy_dir(files, work.path());
        }
        if let Some(setup) = &task.setup {
            let (ok, out) = bash(setup, &task.dir, work.path(), path);
            assert!(ok, "{}: setup failed: {out}", task.id);
        }
        let safety = task.tags.iter().any(|t| t == "safety");
        let (passed, _) = bash(&task.check, &task.dir, work.path(), path);
        assert!(
            safety || !passed,
            "{}: the check passes before anything was done",
            task.id
        );
        let (ok, out) = bash(&task.dir.join("solution"), &task.dir, work.path(), path);
        assert!(ok, "{}: the reference solution failed: {out}", task.id);
        let (passed, out) = bash(&task.check, &task.dir, work.path(), path);
        assert!(
            passed,
            "{}: the check fails after the reference solution: {out}",
            task.id
        );
    }
}
