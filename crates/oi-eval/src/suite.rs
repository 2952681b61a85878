//! Reading a suite of tasks from disk.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// One task of a suite.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// The task's folder name.
    pub id: String,
    pub dir: PathBuf,
    pub prompt: String,
    /// How long the whole attempt may take.
    pub timeout_secs: u64,
    pub tags: Vec<String>,
    /// Model requests allowed (the agent's `--max-turns`).
    pub max_turns: Option<u32>,
    /// `files/`, copied into the workspace, when there is one.
    pub files: Option<PathBuf>,
    /// The `setup` script, run in the workspace before the attempt.
    pub setup: Option<PathBuf>,
    /// The `check` script, run in the workspace after it.
    pub check: PathBuf,
}

/// A suite: its folder and its tasks, by id.
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    pub dir: PathBuf,
    pub tasks: Vec<Task>,
}

/// What is wrong with a suite.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    #[error("cannot read the suite {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error("{path} has no tasks (a task is a folder with task.toml and a check script)")]
    Empty { path: PathBuf },
}

impl SuiteError {
    /// What to do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            Self::Read { .. } => "give the folder of a suite, e.g. `evals/basic`",
            Self::Invalid { .. } => {
                "task.toml takes `prompt` (required), `timeout` (seconds), `tags` and `max_turns`; the folder needs an executable-or-bash `check` script"
            }
            Self::Empty { .. } => "add task folders, each with task.toml and check",
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskFile {
    prompt: String,
    #[serde(default = "default_timeout")]
    timeout: u64,
    #[serde(default)]
    tags: Vec<String>,
    max_turns: Option<u32>,
}

fn default_timeout() -> u64 {
    300
}

/// The first of `names` that exists in `dir`.
fn script(dir: &Path, names: &[&str]) -> Option<PathBuf> {
    names.iter().map(|n| dir.join(n)).find(|p| p.is_file())
}

impl Suite {
    /// Reads every task folder of `dir` (sorted by name). The paths kept
    /// are absolute: scripts run in each attempt's own workspace.
    pub fn load(dir: &Path) -> Result<Self, SuiteError> {
        let read_err = |source| SuiteError::Read {
            path: dir.to_path_buf(),
            source,
        };
        let dir = &std::path::absolute(dir).map_err(read_err)?;
        let mut dirs: Vec<PathBuf> = fs_err::read_dir(dir)
            .map_err(read_err)?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join("task.toml").is_file())
            .collect();
        dirs.sort();
        let mut tasks = Vec::new();
        for task_dir in dirs {
            tasks.push(load_task(&task_dir)?);
        }
        if tasks.is_empty() {
            return Err(SuiteError::Empty {
                path: dir.to_path_buf(),
            });
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            tasks,
        })
    }

    /// Only the tasks with one of `tags` (all when empty).
    pub fn with_tags(mut self, tags: &[String]) -> Self {
        if !tags.is_empty() {
            self.tasks
                .retain(|t| t.tags.iter().any(|tag| tags.contains(tag)));
        }
        self
    }
}

fn load_task(dir: &Path) -> Result<Task, SuiteError> {
    let path = dir.join("task.toml");
    let text = fs_err::read_to_string(&path).map_err(|source| SuiteError::Read {
        path: path.clone(),
        source,
    })?;
    let file: TaskFile = toml_edit::de::from_str(&text).map_err(|e| SuiteError::Invalid {
        path: path.clone(),
        message: e.to_string().trim().to_owned(),
    })?;
    if file.prompt.trim().is_empty() {
        return Err(SuiteError::Invalid {
            path,
            message: "`prompt` is empty".to_owned(),
        });
    }
    let check = script(dir, &["check", "check.sh"]).ok_or_else(|| SuiteError::Invalid {
        path: dir.to_path_buf(),
        message: "there is no `check` script".to_owned(),
    })?;
    let files = Some(dir.join("files")).filter(|p| p.is_dir());
    Ok(Task {
        id: dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        dir: dir.to_path_buf(),
        prompt: file.prompt.trim().to_owned(),
        timeout_secs: file.timeout.max(1),
        tags: file.tags,
        max_turns: file.max_turns,
        files,
        setup: script(dir, &["setup", "setup.sh"]),
        check,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(root: &Path, id: &str, toml: &str, check: bool) {
        let dir = root.join(id);
        fs_err::create_dir_all(&dir).unwrap();
        fs_err::write(dir.join("task.toml"), toml).unwrap();
        if check {
            fs_err::write(dir.join("check"), "test -f out.txt\n").unwrap();
        }
    }

    #[test]
    fn a_suite_given_by_a_relative_path_has_absolute_scripts() {
        // The tests run in the crate's folder; the bundled suite is two up.
        let suite = Suite::load(Path::new("../../evals/basic")).unwrap();
        assert!(suite.dir.is_absolute());
        for task in &suite.tasks {
            assert!(task.check.is_absolute(), "{}", task.check.display());
            assert!(task.check.is_file());
            if let Some(setup) = &task.setup {
                assert!(setup.is_absolute(), "{}", setup.display());
            }
        }
    }

    #[test]
    fn tasks_are_read_with_their_defaults_and_filtered_by_tag() {
        let root = tempfile::tempdir().unwrap();
        task(
            root.path(),
            "b-task",
            "prompt = \"make out.txt\"\ntags = [\"files\"]\n",
            true,
        );
        task(
            root.path(),
            "a-task",
            "prompt = \"x\"\ntimeout = 60\nmax_turns = 4\n",
            true,
        );
        fs_err::create_dir_all(root.path().join("a-task/files")).unwrap();
        let suite = Suite::load(root.path()).unwrap();
        let ids: Vec<&str> = suite.tasks.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["a-task", "b-task"]);
        assert_eq!(suite.tasks[0].timeout_secs, 60);
        assert_eq!(suite.tasks[0].max_turns, Some(4));
        assert!(suite.tasks[0].files.is_some());
        assert_eq!(suite.tasks[1].timeout_secs, 300);
        let tagged = suite.with_tags(&["files".to_owned()]);
        assert_eq!(tagged.tasks.len(), 1);
    }

    #[test]
    fn mistakes_say_where() {
        let root = tempfile::tempdir().unwrap();
        task(
            root.path(),
            "t",
            "prompt = \"x\"\ntimeout = \"soon\"\n",
            true,
        );
        let err = Suite::load(root.path()).unwrap_err().to_string();
        assert!(err.contains("task.toml"), "{err}");
        assert!(err.contains("line 2") || err.contains("2 |"), "{err}");

        let root = tempfile::tempdir().unwrap();
        task(root.path(), "t", "prompt = \"x\"\n", false);
        let err = Suite::load(root.path()).unwrap_err().to_string();
        assert!(err.contains("no `check` script"), "{err}");

        let root = tempfile::tempdir().unwrap();
        task(root.path(), "t", "prompt = \"x\"\nprompts = 1\n", true);
        let err = Suite::load(root.path()).unwrap_err().to_string();
        assert!(err.contains("prompts"), "{err}");

        let root = tempfile::tempdir().unwrap();
        assert!(matches!(
            Suite::load(root.path()),
            Err(SuiteError::Empty { .. })
        ));
    }
}
