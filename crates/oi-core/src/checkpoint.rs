//! Checkpoints of the workspace, so what code changed can be undone.
//!
//! Before each run the workspace is committed to a *shadow* git repository
//! under `$INTERPRETER_HOME/checkpoints/<workspace id>` (with the `git`
//! program; the user's own `.git` is never touched, and `.gitignore` is
//! respected). Restoring a checkpoint first saves the current state, so a
//! restore can itself be undone.
//!
//! An unchanged workspace costs one `git ls-files` (a few milliseconds for
//! thousands of files, with git's untracked cache).

use std::path::{Path, PathBuf};
use std::process::Stdio;

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

/// One file a restore changed.
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
        let output = Command::new("git")
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
            .env_remove("GIT_INDEX_FILE")
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

    /// Saves the workspace as it is now (a new checkpoint only if it
    /// changed since the last one).
    pub async fn snapshot(&self, message: &str) -> Result<Snapshot, CheckpointError> {
        self.ensure_repository().await?;
        let head = self.head().await;
        let changed = self
            .git(&[
                "ls-files",
                "-z",
                "--others",
                "--modified",
                "--deleted",
                "--exclude-standard",
            ])
            .await?;
        if changed.is_empty()
            && let Some(head) = &head
        {
            return Ok(Snapshot {
                checkpoint: self.checkpoint(head).await?,
                created: false,
                skipped: Vec::new(),
            });
        }
        let skipped = self.leave_out_large_files(&changed).await?;
        self.git(&["add", "-A", "--ignore-errors", "--", "."])
            .await?;
        let tree = self.git_text(&["write-tree"]).await?;
        if let Some(head) = &head
            && self
                .git_text(&["rev-parse", &format!("{head}^{{tree}}")])
                .await?
                == tree
        {
            return Ok(Snapshot {
                checkpoint: self.checkpoint(head).await?,
                created: false,
                skipped,
            });
        }
        let commit = self.commit(&tree, head.as_deref(), message).await?;
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
    ) -> Result<String, CheckpointError> {
        let mut args = vec!["commit-tree", tree, "-m", message];
        if let Some(parent) = parent {
            args.extend(["-p", parent]);
        }
        let commit = self.git_text(&args).await?;
        self.git(&["update-ref", "HEAD", &commit]).await?;
        Ok(commit)
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
            .snapshot(&format!(
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
        let changes = parse_name_status(&diff);
        self.git(&["read-tree", "--reset", "-u", &target]).await?;
        let tree = self
            .git_text(&["rev-parse", &format!("{target}^{{tree}}")])
            .await?;
        self.commit(
            &tree,
            Some(&before.id),
            &format!("restored {}", target_checkpoint.short_id()),
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
        let current = self.snapshot("before undo").await?.checkpoint;
        let text = self
            .git_text(&["log", "--format=%H%x00%T%x00%s", "HEAD"])
            .await?;
        let current_tree = self
            .git_text(&["rev-parse", &format!("{}^{{tree}}", current.id)])
            .await?;
        let target = text.lines().find_map(|line| {
            let mut parts = line.splitn(3, '\0');
            let (commit, tree, subject) = (parts.next()?, parts.next()?, parts.next()?);
            (subject.starts_with(BEFORE_RUN) && tree != current_tree).then(|| commit.to_owned())
        });
        match target {
            Some(target) => self.restore(&target).await,
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
