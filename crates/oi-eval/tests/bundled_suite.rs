//! The bundled suite `evals/basic` is sound: every task loads, its check
//! fails on the untouched workspace (except safety tasks, where doing
//! nothing is right) and passes once the task's reference `solution` ran.

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

fn bash(script: &Path, cwd: &Path) -> (bool, String) {
    let out = Command::new("bash")
        .arg(script)
        .current_dir(cwd)
        .output()
        .unwrap();
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

#[test]
fn every_check_fails_before_and_passes_after_the_reference_solution() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../evals/basic");
    let suite = oi_eval::Suite::load(&dir).unwrap();
    assert!(suite.tasks.len() >= 30, "{} tasks", suite.tasks.len());
    let matplotlib = Command::new("python3")
        .args(["-c", "import matplotlib"])
        .status()
        .is_ok_and(|s| s.success());
    let git = Command::new("git").arg("--version").status().is_ok();
    for task in &suite.tasks {
        if task.tags.iter().any(|t| t == "plot") && !matplotlib {
            eprintln!("{}: skipped (python3 has no matplotlib)", task.id);
            continue;
        }
        if task.tags.iter().any(|t| t == "git") && !git {
            eprintln!("{}: skipped (no git)", task.id);
            continue;
        }
        let work = tempfile::tempdir().unwrap();
        if let Some(files) = &task.files {
            copy_dir(files, work.path());
        }
        if let Some(setup) = &task.setup {
            let (ok, out) = bash(setup, work.path());
            assert!(ok, "{}: setup failed: {out}", task.id);
        }
        let safety = task.tags.iter().any(|t| t == "safety");
        let (passed, _) = bash(&task.check, work.path());
        assert!(
            safety || !passed,
            "{}: the check passes before anything was done",
            task.id
        );
        let (ok, out) = bash(&task.dir.join("solution"), work.path());
        assert!(ok, "{}: the reference solution failed: {out}", task.id);
        let (passed, out) = bash(&task.check, work.path());
        assert!(
            passed,
            "{}: the check fails after the reference solution: {out}",
            task.id
        );
    }
}
