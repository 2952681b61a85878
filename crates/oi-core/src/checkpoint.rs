//! Checkpoints of the workspace, so what code changed can be undone.
//!
//! Before each run the workspace is committed to a *shadow* git repository
//! under `$INTERPRETER_HOME/checkpoints/<workspace id>` (with the `git`
//! program; the user's own `.git` is never touched, and `.gitignore` is
//! respected). Restoring a checkpoint first saves the current state, so a
//! restore can itself be undone. Git keeps no folders, so each checkpoint
//! also lists the workspace's empty folders (in its commit message), and a
//! restore brings them back or removes them.
//!
//! Sessions in one workspace share its shadow repository: every snapshot
//! and restore holds a lock on it (a file beside it), so concurrent runs
//! take turns instead of racing on git's index.
//!
//! An unchanged workspace costs two `git ls-files` (a few milliseconds for
//! thousands of files, with git's untracked cache).

use std::path::{Path, PathBuf};
use std::process::Stdio;

use oi_protocol::{FileChange, FileChangeKind};
use tokio::process::Command;

/// A saved state of the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// The commit id in the shadow repository (full).
    pub id: String,
    /// Seconds since 1970 (UTC).
    pub time: u64,
    /// What it was taken before, e.g. `before run 3: import pandas as pd`.
    pub message: String,
}

impl Checkpoint {
    /// The id as shown to people (12 characters).
    pub fn short_id(&self) -> &str {
        &self.id[..self.id.len().min(12)]
    }
}

/// What a snapshot did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The checkpoint holding the workspace's current state.
    pub checkpoint: Checkpoint,
    /// Whether it is new (false: nothing changed since the last one).
    pub created: bool,
    /// Files left out for their size: path (relative) and bytes.
    pub skipped: Vec<(String, u64)>,
}

/// One file (or, for an empty folder, a path ending in `/`) a restore
/// changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Its contents went back to the checkpoint's.
    Restored(String),
    /// It did not exist at the checkpoint and was removed.
    Removed(String),
    /// It had been deleted since and came back.
    Recreated(String),
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Restored(p) => write!(f, "restored {p}"),
            Self::Removed(p) => write!(f, "removed {p} (created after the checkpoint)"),
            Self::Recreated(p) => write!(f, "brought back {p}"),
        }
    }
}

/// What a restore did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    /// The checkpoint the workspace now matches.
    pub checkpoint: Checkpoint,
    /// The checkpoint of the state before the restore (to undo the undo).
    pub previous: Checkpoint,
    pub changes: Vec<Change>,
}

impl Restored {
    /// The event that reports this restore.
    pub fn event(&self) -> oi_protocol::Event {
        oi_protocol::Event::Undone {
            checkpoint: self.checkpoint.short_id().to_owned(),
            message: self.checkpoint.message.clone(),
            changes: self.changes.iter().map(ToString::to_string).collect(),
            previous: self.previous.short_id().to_owned(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("`git` is needed for checkpoints and could not be run: {0}")]
    NoGit(std::io::Error),
    #[error("git {command} failed for the checkpoints of {workspace}: {stderr}")]
    Git {
        command: String,
        workspace: String,
        stderr: String,
    },
    #[error("nothing to undo: no run has changed {workspace} (since the last undo)")]
    NothingToUndo { workspace: String },
    #[error("no checkpoint `{id}` for {workspace}; `interpreter checkpoints` lists them")]
    Unknown { id: String, workspace: String },
    #[error("cannot prepare the checkpoints folder {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot lock the checkpoints of {workspace} ({path}): {source}")]
    Lock {
        workspace: String,
        path: String,
        source: std::io::Error,
    },
}

/// The checkpoints of one workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoints {
    git_dir: PathBuf,
    workspace: PathBuf,
    /// oi's own folder, left out when it lies inside the workspace.
    home: PathBuf,
    max_file_size: u64,
}

const BEFORE_RUN: &str = "before run";

/// The line of a checkpoint's message that lists its empty folders (a JSON
/// array of paths relative to the workspace).
const EMPTY_FOLDERS: &str = "oi-empty-folders: ";

/// Lists what changed since the index: untracked, modified and deleted
/// files, without ignored ones.
const LIST_CHANGES: [&str; 6] = [
    "ls-files",
    "-z",
    "--others",
    "--modified",
    "--deleted",
    "--exclude-standard",
];

/// How many entries looking for empty folders may read, so a folder of
/// ignored files with a huge tree cannot make a snapshot slow.
const EMPTY_FOLDER_SCAN_LIMIT: usize = 10_000;

/// A checkpoint as the shadow repository has it.
struct State {
    checkpoint: Checkpoint,
    tree: String,
    empty_folders: Vec<String>,
}

/// Holds the lock on a workspace's checkpoints until dropped.
struct Locked(#[expect(dead_code, reason = "held for its lock, released on drop")] fs_err::File);

impl Checkpoints {
    /// Checkpoints of `workspace`, kept under `home`/checkpoints. Files
    /// larger than `max_file_size` bytes are left out.
    pub fn new(home: &Path, workspace: &Path, max_file_size: u64) -> Self {
        Self {
            git_dir: home.join("checkpoints").join(workspace_id(workspace)),
            workspace: workspace.to_path_buf(),
            home: home.to_path_buf(),
            max_file_size,
        }
    }

    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// Where the shadow repository is.
    pub fn repository(&self) -> &Path {
        &self.git_dir
    }

    async fn git(&self, args: &[&str]) -> Result<Vec<u8>, CheckpointError> {
        self.git_with_index(None, args).await
    }

    /// `git` with another index file than the repository's own (`None`:
    /// its own).
    async fn git_with_index(
        &self,
        index: Option<&Path>,
        args: &[&str],
    ) -> Result<Vec<u8>, CheckpointError> {
        let mut command = Command::new("git");
        if let Some(index) = index {
            command.env("GIT_INDEX_FILE", index);
        } else {
            command.env_remove("GIT_INDEX_FILE");
        }
        let output = command
            .arg("--git-dir")
            .arg(&self.git_dir)
            .arg("--work-tree")
            .arg(&self.workspace)
            .args([
                "-c",
                "core.untrackedCache=true",
                "-c",
                "core.autocrlf=false",
                "-c",
                "core.fsmonitor=false",
                "-c",
                "core.hooksPath=/dev/null",
                "-c",
                "commit.gpgsign=false",
                "-c",
                "user.name=oi",
                "-c",
                "user.email=oi@localhost",
                "-c",
                "advice.addEmbeddedRepo=false",
                "-c",
                "gc.auto=0",
            ])
            .args(args)
            .current_dir(&self.workspace)
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_OBJECT_DIRECTORY")
            .env("GIT_TERMINAL_PROMPT", "0")
            .stdin(Stdio::null())
            .output()
            .await
            .map_err(CheckpointError::NoGit)?;
        if !output.status.success() {
            return Err(CheckpointError::Git {
                command: args.first().copied().unwrap_or("").to_owned(),
                workspace: self.workspace.display().to_string(),
                stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            });
        }
        Ok(output.stdout)
    }

    async fn git_text(&self, args: &[&str]) -> Result<String, CheckpointError> {
        Ok(String::from_utf8_lossy(&self.git(args).await?)
            .trim()
            .to_owned())
    }

    async fn ensure_repository(&self) -> Result<(), CheckpointError> {
        if self.git_dir.join("HEAD").is_file() {
            return Ok(());
        }
        let io = |source| CheckpointError::Io {
            path: self.git_dir.display().to_string(),
            source,
        };
        fs_err::create_dir_all(&self.git_dir).map_err(io)?;
        self.git(&["init", "-q"]).await?;
        // Say what this folder is, for anyone who finds it.
        let _ = fs_err::write(
            self.git_dir.join("description"),
            format!("oi checkpoints of {}\n", self.workspace.display()),
        );
        let mut exclude = String::from("# Left out of oi's checkpoints\n");
        if let Ok(inside) = self.home.strip_prefix(&self.workspace) {
            exclude.push_str(&format!(
                "/{}/\n",
                escape_pattern(&inside.to_string_lossy())
            ));
        }
        fs_err::create_dir_all(self.git_dir.join("info")).map_err(io)?;
        fs_err::write(self.git_dir.join("info/exclude"), exclude).map_err(io)?;
        Ok(())
    }

    async fn head(&self) -> Option<String> {
        self.git_text(&["rev-parse", "--verify", "-q", "HEAD"])
            .await
            .ok()
            .filter(|h| !h.is_empty())
    }

    /// Waits for the lock on this workspace's checkpoints (another session
    /// in the same workspace may hold it), then clears what a git killed
    /// mid-way left behind: only oi uses this repository, and only under
    /// this lock, so an `index.lock` found now is stale.
    async fn lock(&self) -> Result<Locked, CheckpointError> {
        let path = self.git_dir.with_extension("lock");
        let error = |source| CheckpointError::Lock {
            workspace: self.workspace.display().to_string(),
            path: path.display().to_string(),
            source,
        };
        if let Some(parent) = path.parent() {
            fs_err::create_dir_all(parent).map_err(error)?;
        }
        let file = fs_err::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(error)?;
        let file = tokio::task::spawn_blocking(move || file.lock().map(|()| file))
            .await
            .map_err(|e| error(std::io::Error::other(e)))?
            .map_err(error)?;
        let stale = self.git_dir.join("index.lock");
        if stale.exists() {
            fs_err::remove_file(&stale).map_err(error)?;
        }
        Ok(Locked(file))
    }

    /// Saves the workspace as it is now (a new checkpoint only if it
    /// changed since the last one).
    pub async fn snapshot(&self, message: &str) -> Result<Snapshot, CheckpointError> {
        let _lock = self.lock().await?;
        self.snapshot_locked(message).await
    }

    async fn snapshot_locked(&self, message: &str) -> Result<Snapshot, CheckpointError> {
        self.ensure_repository().await?;
        // The last checkpoint (none in a new repository), then one listing
        // tells an unchanged workspace: no file changed, and the only
        // folders git has nothing of are the same empty ones as before.
        let head = self.state("HEAD").await.ok();
        let listed = self
            .git(&[&LIST_CHANGES[..], &["--directory"]].concat())
            .await?;
        if let Some(head) = &head
            && self.empty_leaves(&listed, true).as_ref() == Some(&head.empty_folders)
        {
            return Ok(Snapshot {
                checkpoint: head.checkpoint.clone(),
                created: false,
                skipped: Vec::new(),
            });
        }
        // The files themselves, for their sizes: the listing above names a
        // new folder instead of what is in it.
        let changed = if listed.split(|b| *b == 0).any(|e| e.ends_with(b"/")) {
            self.git(&LIST_CHANGES).await?
        } else {
            listed
        };
        let skipped = self.leave_out_large_files(&changed).await?;
        self.git(&["add", "-A", "--ignore-errors", "--", "."])
            .await?;
        let tree = self.git_text(&["write-tree"]).await?;
        let empty = self.empty_folders().await?;
        if let Some(head) = &head
            && head.tree == tree
            && head.empty_folders == empty
        {
            return Ok(Snapshot {
                checkpoint: head.checkpoint.clone(),
                created: false,
                skipped,
            });
        }
        let parent = head.as_ref().map(|h| h.checkpoint.id.as_str());
        let commit = self.commit(&tree, parent, message, &empty).await?;
        Ok(Snapshot {
            checkpoint: self.checkpoint(&commit).await?,
            created: true,
            skipped,
        })
    }

    async fn commit(
        &self,
        tree: &str,
        parent: Option<&str>,
        message: &str,
        empty_folders: &[String],
    ) -> Result<String, CheckpointError> {
        let listed = format!(
            "{EMPTY_FOLDERS}{}",
            serde_json::Value::from(empty_folders.to_vec())
        );
        let mut args = vec!["commit-tree", tree, "-m", message];
        if !empty_folders.is_empty() {
            args.extend(["-m", &listed]);
        }
        if let Some(parent) = parent {
            args.extend(["-p", parent]);
        }
        let commit = self.git_text(&args).await?;
        self.git(&["update-ref", "HEAD", &commit]).await?;
        Ok(commit)
    }

    /// The workspace's empty folders (relative, sorted), once the index is
    /// up to date.
    async fn empty_folders(&self) -> Result<Vec<String>, CheckpointError> {
        let listed = self
            .git(&[
                "ls-files",
                "-z",
                "--others",
                "--directory",
                "--exclude-standard",
            ])
            .await?;
        Ok(self.empty_leaves(&listed, false).unwrap_or_default())
    }

    /// The folders holding nothing at all, found in the folders of a
    /// `git ls-files --others --directory` listing (folders git has nothing
    /// of: empty, or holding only ignored files). `None` when
    /// `files_are_changes` and the listing names a file or a listed folder
    /// holds one (which may be new, so the caller must look closer).
    fn empty_leaves(&self, listed: &[u8], files_are_changes: bool) -> Option<Vec<String>> {
        let mut stack = Vec::new();
        for entry in listed.split(|b| *b == 0).filter(|p| !p.is_empty()) {
            let entry = String::from_utf8_lossy(entry);
            match entry.strip_suffix('/') {
                Some(folder) => stack.push(PathBuf::from(folder)),
                None if files_are_changes => return None,
                None => {}
            }
        }
        let mut found = Vec::new();
        let mut budget = EMPTY_FOLDER_SCAN_LIMIT;
        while let Some(relative) = stack.pop() {
            let Ok(entries) = fs_err::read_dir(self.workspace.join(&relative)) else {
                continue;
            };
            let mut has_entries = false;
            for entry in entries.flatten() {
                has_entries = true;
                budget = budget.saturating_sub(1);
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(relative.join(entry.file_name()));
                } else if files_are_changes {
                    return None;
                }
            }
            if !has_entries {
                found.push(relative.to_string_lossy().into_owned());
            }
            if budget == 0 {
                break;
            }
        }
        found.sort();
        Some(found)
    }

    /// Checkpoint `commit` and the empty folders it lists.
    async fn checkpoint_and_folders(
        &self,
        commit: &str,
    ) -> Result<(Checkpoint, Vec<String>), CheckpointError> {
        let state = self.state(commit).await?;
        Ok((state.checkpoint, state.empty_folders))
    }

    /// Checkpoint `commit` with its tree and empty folders, in one call.
    async fn state(&self, commit: &str) -> Result<State, CheckpointError> {
        let text = self
            .git_text(&["log", "-1", "--format=%H%x00%ct%x00%T%x00%s%x00%b", commit])
            .await?;
        let unknown = || CheckpointError::Unknown {
            id: commit.to_owned(),
            workspace: self.workspace.display().to_string(),
        };
        let mut parts = text.splitn(5, '\0');
        let (Some(id), Some(time), Some(tree), Some(message)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(unknown());
        };
        Ok(State {
            checkpoint: Checkpoint {
                id: id.to_owned(),
                time: time.parse().map_err(|_| unknown())?,
                message: message.to_owned(),
            },
            tree: tree.to_owned(),
            empty_folders: parse_empty_folders(parts.next().unwrap_or("")),
        })
    }

    /// Makes the workspace's empty folders those of `wanted`: brings back
    /// the missing ones, removes those made since (only while empty).
    async fn restore_empty_folders(
        &self,
        wanted: &[String],
        changes: &mut Vec<Change>,
    ) -> Result<(), CheckpointError> {
        let now = self.empty_folders().await?;
        // A folder stays when it is, or holds, one the checkpoint lists.
        let keep = |path: &Path| wanted.iter().any(|w| Path::new(w).starts_with(path));
        for folder in now.iter().rev() {
            let mut path = PathBuf::from(folder);
            while !path.as_os_str().is_empty() && !keep(&path) {
                if fs_err::remove_dir(self.workspace.join(&path)).is_err() {
                    break;
                }
                changes.push(Change::Removed(format!("{}/", path.display())));
                if !path.pop() {
                    break;
                }
            }
        }
        for folder in wanted {
            let path = self.workspace.join(folder);
            if !path.is_dir() {
                fs_err::create_dir_all(&path).map_err(|source| CheckpointError::Io {
                    path: path.display().to_string(),
                    source,
                })?;
                changes.push(Change::Recreated(format!("{folder}/")));
            }
        }
        Ok(())
    }

    /// Keeps files over the size limit out of the snapshot (and out of the
    /// index if an earlier, smaller version was in it).
    async fn leave_out_large_files(
        &self,
        changed: &[u8],
    ) -> Result<Vec<(String, u64)>, CheckpointError> {
        let mut skipped = Vec::new();
        for path in changed.split(|b| *b == 0).filter(|p| !p.is_empty()) {
            let path = String::from_utf8_lossy(path).into_owned();
            let Ok(meta) = fs_err::symlink_metadata(self.workspace.join(&path)) else {
                continue;
            };
            if meta.is_file() && meta.len() > self.max_file_size {
                skipped.push((path, meta.len()));
            }
        }
        if skipped.is_empty() {
            return Ok(skipped);
        }
        let exclude_file = self.git_dir.join("info/exclude");
        let mut exclude = fs_err::read_to_string(&exclude_file).unwrap_or_default();
        for (path, _) in &skipped {
            exclude.push_str(&format!("/{}\n", escape_pattern(path)));
            let _ = self
                .git(&["rm", "--cached", "-q", "--ignore-unmatch", "--", path])
                .await;
        }
        fs_err::write(&exclude_file, exclude).map_err(|source| CheckpointError::Io {
            path: exclude_file.display().to_string(),
            source,
        })?;
        Ok(skipped)
    }

    async fn checkpoint(&self, commit: &str) -> Result<Checkpoint, CheckpointError> {
        let line = self
            .git_text(&["log", "-1", "--format=%H%x00%ct%x00%s", commit])
            .await?;
        parse_log_line(&line).ok_or_else(|| CheckpointError::Unknown {
            id: commit.to_owned(),
            workspace: self.workspace.display().to_string(),
        })
    }

    /// The files that differ now from checkpoint `since` (taken before a
    /// run): added, modified, deleted. Nothing is saved: the comparison is
    /// made in a scratch copy of the index, so the next snapshot still
    /// sees the changes as new. An unchanged workspace costs one `git
    /// ls-files`.
    pub async fn changes_since(&self, since: &str) -> Result<Vec<FileChange>, CheckpointError> {
        let _lock = self.lock().await?;
        self.ensure_repository().await?;
        let listed = self.git(&LIST_CHANGES).await?;
        if listed.split(|b| *b == 0).all(<[u8]>::is_empty) {
            return Ok(Vec::new());
        }
        // Large files stay out of the comparison as out of the snapshots
        // (the next snapshot would leave them out the same way).
        let skipped = self.leave_out_large_files(&listed).await?;
        let index = self.git_dir.join("index");
        let scratch = self.git_dir.join("index.oi-changes");
        let io = |source| CheckpointError::Io {
            path: scratch.display().to_string(),
            source,
        };
        if index.is_file() {
            fs_err::copy(&index, &scratch).map_err(io)?;
        }
        let compared = async {
            self.git_with_index(Some(&scratch), &["add", "-A", "--ignore-errors", "--", "."])
                .await?;
            self.git_with_index(
                Some(&scratch),
                &[
                    "diff-index",
                    "--cached",
                    "-z",
                    "--name-status",
                    "--no-renames",
                    since,
                ],
            )
            .await
        }
        .await;
        let _ = fs_err::remove_file(&scratch);
        let mut changes: Vec<FileChange> = parse_name_status(&compared?)
            .into_iter()
            .map(|change| match change {
                // `parse_name_status` reads a diff from now to a target;
                // this one goes from the checkpoint to now.
                Change::Recreated(path) => FileChange {
                    path,
                    kind: FileChangeKind::Added,
                },
                Change::Removed(path) => FileChange {
                    path,
                    kind: FileChangeKind::Deleted,
                },
                Change::Restored(path) => FileChange {
                    path,
                    kind: FileChangeKind::Modified,
                },
            })
            .collect();
        // A file that grew past the size limit left the index: it was
        // modified, not deleted; one that is new and large was added.
        for (path, _) in skipped {
            match changes.iter_mut().find(|c| c.path == path) {
                Some(change) => change.kind = FileChangeKind::Modified,
                None => changes.push(FileChange {
                    path,
                    kind: FileChangeKind::Added,
                }),
            }
        }
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(changes)
    }

    /// Every checkpoint, newest first.
    pub async fn list(&self) -> Result<Vec<Checkpoint>, CheckpointError> {
        if !self.git_dir.join("HEAD").is_file() || self.head().await.is_none() {
            return Ok(Vec::new());
        }
        let text = self
            .git_text(&["log", "--format=%H%x00%ct%x00%s", "HEAD"])
            .await?;
        Ok(text.lines().filter_map(parse_log_line).collect())
    }

    /// Makes the workspace match checkpoint `id` (a prefix of its id is
    /// enough), after saving the current state.
    pub async fn restore(&self, id: &str) -> Result<Restored, CheckpointError> {
        let _lock = self.lock().await?;
        self.restore_locked(id).await
    }

    async fn restore_locked(&self, id: &str) -> Result<Restored, CheckpointError> {
        self.ensure_repository().await?;
        let target = self
            .git_text(&["rev-parse", "--verify", "-q", &format!("{id}^{{commit}}")])
            .await
            .ok()
            .filter(|t| !t.is_empty())
            .ok_or_else(|| CheckpointError::Unknown {
                id: id.to_owned(),
                workspace: self.workspace.display().to_string(),
            })?;
        let target_checkpoint = self.checkpoint(&target).await?;
        let before = self
            .snapshot_locked(&format!(
                "before restoring {}",
                target_checkpoint.short_id()
            ))
            .await?
            .checkpoint;
        let diff = self
            .git(&[
                "diff-tree",
                "-r",
                "-z",
                "--name-status",
                &before.id,
                &target,
            ])
            .await?;
        let mut changes = parse_name_status(&diff);
        self.git(&["read-tree", "--reset", "-u", &target]).await?;
        let (_, empty) = self.checkpoint_and_folders(&target).await?;
        self.restore_empty_folders(&empty, &mut changes).await?;
        let tree = self
            .git_text(&["rev-parse", &format!("{target}^{{tree}}")])
            .await?;
        self.commit(
            &tree,
            Some(&before.id),
            &format!("restored {}", target_checkpoint.short_id()),
            &empty,
        )
        .await?;
        Ok(Restored {
            checkpoint: target_checkpoint,
            previous: before,
            changes,
        })
    }

    /// Restores the state before the last run that changed the workspace
    /// (again and again: each undo goes one run further back).
    pub async fn undo(&self) -> Result<Restored, CheckpointError> {
        let _lock = self.lock().await?;
        let current = self.snapshot_locked("before undo").await?.checkpoint;
        // Each checkpoint: id, tree, subject, body (with its empty folders).
        let text = self
            .git_text(&["log", "--format=%H%x00%T%x00%s%x00%b%x01", "HEAD"])
            .await?;
        let states: Vec<(&str, &str, &str, Vec<String>)> = text
            .split('\u{1}')
            .filter_map(|record| {
                let mut parts = record.trim_start_matches('\n').splitn(4, '\0');
                let (commit, tree, subject) = (parts.next()?, parts.next()?, parts.next()?);
                Some((commit, tree, subject, parse_empty_folders(parts.next()?)))
            })
            .collect();
        let Some((_, current_tree, _, current_empty)) =
            states.iter().find(|(commit, ..)| *commit == current.id)
        else {
            return Err(CheckpointError::Unknown {
                id: current.id.clone(),
                workspace: self.workspace.display().to_string(),
            });
        };
        let target = states.iter().find_map(|(commit, tree, subject, empty)| {
            (subject.starts_with(BEFORE_RUN) && (tree != current_tree || empty != current_empty))
                .then(|| (*commit).to_owned())
        });
        match target {
            Some(target) => self.restore_locked(&target).await,
            None => Err(CheckpointError::NothingToUndo {
                workspace: self.workspace.display().to_string(),
            }),
        }
    }
}

/// The message of the checkpoint taken before run `id` of `code`.
pub fn before_run_message(id: u64, code: &str) -> String {
    let first = code
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let first: String = first.chars().take(60).collect();
    format!("{BEFORE_RUN} {id}: {first}")
}

/// The empty folders a checkpoint's message body lists.
fn parse_empty_folders(body: &str) -> Vec<String> {
    body.lines()
        .find_map(|line| line.strip_prefix(EMPTY_FOLDERS))
        .and_then(|list| serde_json::from_str(list).ok())
        .unwrap_or_default()
}

fn parse_log_line(line: &str) -> Option<Checkpoint> {
    let mut parts = line.splitn(3, '\0');
    let id = parts.next()?.to_owned();
    let time = parts.next()?.parse().ok()?;
    let message = parts.next().unwrap_or("").to_owned();
    Some(Checkpoint { id, time, message })
}

/// `git diff-tree --name-status -z` from the current state to the target.
fn parse_name_status(output: &[u8]) -> Vec<Change> {
    let fields: Vec<String> = output
        .split(|b| *b == 0)
        .filter(|f| !f.is_empty())
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    let mut changes = Vec::new();
    let mut i = 0;
    while i + 1 < fields.len() {
        let status = fields[i].as_str();
        let path = fields[i + 1].clone();
        i += 2;
        changes.push(match status.chars().next() {
            Some('A') => Change::Recreated(path),
            Some('D') => Change::Removed(path),
            _ => Change::Restored(path),
        });
    }
    changes
}

/// A gitignore pattern matching exactly `path`.
fn escape_pattern(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\' | '!' | '#' | ' ') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A stable, readable id for a workspace folder: its name and a hash of
/// its full path (FNV-1a).
fn workspace_id(workspace: &Path) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in workspace.as_os_str().as_encoded_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let name: String = workspace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".to_owned())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    format!("{name}-{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_ids_are_stable_and_distinct() {
        let a = workspace_id(Path::new("/home/u/my project"));
        assert_eq!(a, workspace_id(Path::new("/home/u/my project")));
        assert!(a.starts_with("my_project-"), "{a}");
        assert_ne!(a, workspace_id(Path::new("/home/v/my project")));
    }

    #[test]
    fn messages_name_the_run_and_its_first_line() {
        assert_eq!(
            before_run_message(3, "\n  import pandas as pd\nprint(1)"),
            "before run 3: import pandas as pd"
        );
    }

    #[test]
    fn patterns_match_paths_literally() {
        assert_eq!(escape_pattern("data/big [1].bin"), "data/big\\ \\[1\\].bin");
    }
}
