//! Checkpoints with the real `git`: snapshots, undo byte for byte, undoing
//! an undo, large files left out, `.gitignore` respected, the user's own
//! `.git` untouched.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test code: a panic is a test failure"
)]

use std::collections::BTreeMap;
use std::path::Path;

use oi_core::checkpoint::{Change, CheckpointError, Checkpoints, before_run_message};
use oi_protocol::FileChangeKind;

/// Every file under `dir` (except `.git`) with its bytes.
fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            if entry.file_name() == ".git" {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap().display().to_string();
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

fn setup() -> (tempfile::TempDir, tempfile::TempDir, Checkpoints) {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("data.csv"), "a,b\n1,2\n").unwrap();
    std::fs::create_dir(ws.path().join("src")).unwrap();
    std::fs::write(ws.path().join("src/main.py"), "print('hi')\n").unwrap();
    std::fs::write(ws.path().join("binary.bin"), [0u8, 159, 146, 150, 255]).unwrap();
    let checkpoints = Checkpoints::new(home.path(), ws.path(), 1024 * 1024);
    (home, ws, checkpoints)
}

#[tokio::test]
async fn undo_restores_deleted_and_edited_files_byte_for_byte() {
    let (_home, ws, cp) = setup();
    let original = contents(ws.path());
    let first = cp
        .snapshot(&before_run_message(1, "rm data.csv"))
        .await
        .unwrap();
    assert!(first.created);
    // An unchanged workspace makes no new checkpoint.
    let again = cp.snapshot(&before_run_message(2, "x")).await.unwrap();
    assert!(!again.created);
    assert_eq!(again.checkpoint.id, first.checkpoint.id);

    // The run deletes, edits and creates files.
    std::fs::remove_file(ws.path().join("data.csv")).unwrap();
    std::fs::write(ws.path().join("src/main.py"), "print('changed')\n").unwrap();
    std::fs::write(ws.path().join("binary.bin"), b"overwritten").unwrap();
    std::fs::write(ws.path().join("new.txt"), "created by the run\n").unwrap();
    let changed = contents(ws.path());

    let restored = cp.undo().await.unwrap();
    assert_eq!(restored.checkpoint.id, first.checkpoint.id);
    assert_eq!(contents(ws.path()), original);
    let mut changes: Vec<String> = restored.changes.iter().map(ToString::to_string).collect();
    changes.sort();
    assert_eq!(
        changes,
        [
            "brought back data.csv",
            "removed new.txt (created after the checkpoint)",
            "restored binary.bin",
            "restored src/main.py",
        ]
    );

    // Nothing more to undo; but the undo itself can be undone.
    assert!(matches!(
        cp.undo().await.unwrap_err(),
        CheckpointError::NothingToUndo { .. }
    ));
    cp.restore(&restored.previous.id[..10]).await.unwrap();
    assert_eq!(contents(ws.path()), changed);
    let list = cp.list().await.unwrap();
    assert!(
        list.iter()
            .any(|c| c.message == "before run 1: rm data.csv")
    );
    assert!(list[0].message.starts_with("restored "), "{list:?}");
}

#[tokio::test]
async fn each_undo_goes_one_run_further_back() {
    let (_home, ws, cp) = setup();
    cp.snapshot(&before_run_message(1, "a")).await.unwrap();
    std::fs::write(ws.path().join("step.txt"), "1").unwrap();
    cp.snapshot(&before_run_message(2, "b")).await.unwrap();
    std::fs::write(ws.path().join("step.txt"), "2").unwrap();
    cp.undo().await.unwrap();
    assert_eq!(
        std::fs::read_to_string(ws.path().join("step.txt")).unwrap(),
        "1"
    );
    cp.undo().await.unwrap();
    assert!(!ws.path().join("step.txt").exists());
}

#[tokio::test]
async fn ignored_and_large_files_are_left_out_and_the_users_git_is_untouched() {
    let (home, ws, _) = setup();
    let cp = Checkpoints::new(home.path(), ws.path(), 1000);
    std::fs::write(ws.path().join(".gitignore"), "*.log\n").unwrap();
    std::fs::write(ws.path().join("run.log"), "noise").unwrap();
    std::fs::write(ws.path().join("big.bin"), vec![7u8; 5000]).unwrap();
    std::fs::create_dir(ws.path().join(".git")).unwrap();
    std::fs::write(ws.path().join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let snapshot = cp.snapshot("before run 1: x").await.unwrap();
    assert_eq!(snapshot.skipped, [("big.bin".to_owned(), 5000)]);
    std::fs::remove_file(ws.path().join("run.log")).unwrap();
    std::fs::remove_file(ws.path().join("big.bin")).unwrap();
    std::fs::write(ws.path().join("data.csv"), "changed").unwrap();
    cp.undo().await.unwrap();
    assert_eq!(
        std::fs::read_to_string(ws.path().join("data.csv")).unwrap(),
        "a,b\n1,2\n"
    );
    assert!(
        !ws.path().join("run.log").exists(),
        "ignored files are not kept"
    );
    assert!(
        !ws.path().join("big.bin").exists(),
        "large files are not kept"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join(".git/HEAD")).unwrap(),
        "ref: refs/heads/main\n"
    );
    assert!(cp.repository().starts_with(home.path().join("checkpoints")));
}

#[tokio::test]
async fn an_unknown_checkpoint_is_named() {
    let (_home, _ws, cp) = setup();
    cp.snapshot("before run 1: x").await.unwrap();
    let err = cp.restore("deadbeef").await.unwrap_err().to_string();
    assert!(err.contains("no checkpoint `deadbeef`"), "{err}");
    assert!(matches!(
        Change::Restored("x".into()).to_string().as_str(),
        "restored x"
    ));
}

/// Every folder under `dir` (except `.git`), relative.
fn folders(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.ends_with(".git") {
                out.push(path.strip_prefix(dir).unwrap().display().to_string());
                stack.push(path);
            }
        }
    }
    out.sort();
    out
}

#[tokio::test]
async fn undo_brings_back_empty_folders_and_removes_new_ones() {
    let (_home, ws, cp) = setup();
    std::fs::create_dir_all(ws.path().join("out/logs")).unwrap();
    std::fs::create_dir(ws.path().join("cache")).unwrap();
    let original = (contents(ws.path()), folders(ws.path()));
    cp.snapshot(&before_run_message(1, "rm -rf out cache"))
        .await
        .unwrap();
    // The run removes the empty folders and makes new ones: nothing but
    // folders changes.
    std::fs::remove_dir_all(ws.path().join("out")).unwrap();
    std::fs::remove_dir(ws.path().join("cache")).unwrap();
    std::fs::create_dir_all(ws.path().join("new/deep/er")).unwrap();
    std::fs::create_dir(ws.path().join("src/empty")).unwrap();

    let restored = cp.undo().await.unwrap();
    assert_eq!((contents(ws.path()), folders(ws.path())), original);
    let mut changes: Vec<String> = restored.changes.iter().map(ToString::to_string).collect();
    changes.sort();
    assert_eq!(
        changes,
        [
            "brought back cache/",
            "brought back out/logs/",
            "removed new/ (created after the checkpoint)",
            "removed new/deep/ (created after the checkpoint)",
            "removed new/deep/er/ (created after the checkpoint)",
            "removed src/empty/ (created after the checkpoint)",
        ]
    );
    // Undoing the undo brings the run's folders back.
    cp.restore(&restored.previous.id).await.unwrap();
    assert!(ws.path().join("new/deep/er").is_dir());
    assert!(!ws.path().join("cache").exists());
}

#[tokio::test]
async fn an_unchanged_workspace_with_empty_folders_makes_no_new_checkpoint() {
    let (_home, ws, cp) = setup();
    std::fs::create_dir(ws.path().join("empty")).unwrap();
    let first = cp.snapshot("before run 1: a").await.unwrap();
    let again = cp.snapshot("before run 2: b").await.unwrap();
    assert!(!again.created);
    assert_eq!(again.checkpoint.id, first.checkpoint.id);
    // A folder alone is a change.
    std::fs::remove_dir(ws.path().join("empty")).unwrap();
    assert!(cp.snapshot("before run 3: c").await.unwrap().created);
}

#[tokio::test]
async fn concurrent_snapshots_of_one_workspace_take_turns() {
    // Regression: two sessions in one workspace raced on the shadow
    // repository's index (`index.lock: File exists`).
    let (home, ws, _) = setup();
    let mut tasks = Vec::new();
    for i in 0..8 {
        let cp = Checkpoints::new(home.path(), ws.path(), 1024 * 1024);
        let file = ws.path().join(format!("f{i}.txt"));
        tasks.push(tokio::spawn(async move {
            for n in 0..5 {
                std::fs::write(&file, format!("{n}")).unwrap();
                cp.snapshot(&before_run_message(n, "x")).await?;
            }
            Ok::<_, CheckpointError>(())
        }));
    }
    for task in tasks {
        task.await.unwrap().unwrap();
    }
}

#[tokio::test]
async fn a_lock_left_by_a_killed_git_does_not_stop_checkpoints() {
    let (_home, ws, cp) = setup();
    cp.snapshot("before run 1: a").await.unwrap();
    std::fs::write(cp.repository().join("index.lock"), "").unwrap();
    std::fs::write(ws.path().join("data.csv"), "changed").unwrap();
    assert!(cp.snapshot("before run 2: b").await.unwrap().created);
    cp.undo().await.unwrap();
    assert_eq!(
        std::fs::read_to_string(ws.path().join("data.csv")).unwrap(),
        "a,b\n1,2\n"
    );
}

#[tokio::test]
async fn a_large_file_in_a_new_folder_is_left_out() {
    let (home, ws, _) = setup();
    let cp = Checkpoints::new(home.path(), ws.path(), 1000);
    cp.snapshot("before run 1: a").await.unwrap();
    std::fs::create_dir_all(ws.path().join("new/sub")).unwrap();
    std::fs::write(ws.path().join("new/sub/big.bin"), vec![7u8; 5000]).unwrap();
    let snapshot = cp.snapshot("before run 2: b").await.unwrap();
    assert_eq!(snapshot.skipped, [("new/sub/big.bin".to_owned(), 5000)]);
}

#[tokio::test]
async fn what_a_run_changed_is_listed_without_saving_it() {
    let (home, ws, _) = setup();
    let cp = Checkpoints::new(home.path(), ws.path(), 1000);
    let before = cp.snapshot(&before_run_message(1, "x")).await.unwrap();
    assert_eq!(cp.changes_since(&before.checkpoint.id).await.unwrap(), []);

    std::fs::remove_file(ws.path().join("data.csv")).unwrap();
    std::fs::write(ws.path().join("src/main.py"), "print('changed')\n").unwrap();
    std::fs::create_dir(ws.path().join("out")).unwrap();
    std::fs::write(ws.path().join("out/report.txt"), "new\n").unwrap();
    std::fs::write(ws.path().join("out/big.bin"), vec![1u8; 5000]).unwrap();
    std::fs::write(ws.path().join(".gitignore"), "*.log\n").unwrap();
    std::fs::write(ws.path().join("noise.log"), "ignored").unwrap();
    let changes = cp.changes_since(&before.checkpoint.id).await.unwrap();
    let listed: Vec<(String, FileChangeKind)> =
        changes.into_iter().map(|c| (c.path, c.kind)).collect();
    assert_eq!(
        listed,
        [
            (".gitignore".to_owned(), FileChangeKind::Added),
            ("data.csv".to_owned(), FileChangeKind::Deleted),
            ("out/big.bin".to_owned(), FileChangeKind::Added),
            ("out/report.txt".to_owned(), FileChangeKind::Added),
            ("src/main.py".to_owned(), FileChangeKind::Modified),
        ]
    );
    // Nothing was saved: the next snapshot is a new checkpoint, and undo
    // still goes back to the state before the run.
    let after = cp.snapshot(&before_run_message(2, "y")).await.unwrap();
    assert!(after.created);
    cp.undo().await.unwrap();
    assert_eq!(
        std::fs::read_to_string(ws.path().join("data.csv")).unwrap(),
        "a,b\n1,2\n"
    );
    assert!(!ws.path().join("out/report.txt").exists());
}
