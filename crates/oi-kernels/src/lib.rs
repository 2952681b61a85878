//! Persistent language kernels: one long-lived interpreter per language, so
//! variables, imports, the working directory and exported variables survive
//! from one run to the next.
//!
//! [`KernelManager`] starts a kernel on the first run of its language, streams
//! each run's stdout and stderr as they arrive, reports how the run ended
//! ([`RunStatus`]), and restarts a kernel that died. See `kernel.rs` for the
//! protocol spoken with each kernel process.

mod kernel;
mod output;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use oi_protocol::{OutputStream, RunStatus};
use tokio_util::sync::CancellationToken;

use kernel::Kernel;

/// Which driver a language uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KernelKind {
    /// CPython 3 running oi's Python driver.
    Python,
    /// bash running oi's shell driver.
    Bash,
}

/// A language oi can run, and the interpreter that runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LanguageSpec {
    /// The name the model uses, e.g. `python`.
    pub name: String,
    pub kind: KernelKind,
    /// The interpreter, e.g. `/usr/bin/python3`.
    pub program: PathBuf,
    /// Arguments given to the interpreter before oi's own (e.g. `-X utf8`).
    pub args: Vec<String>,
    /// Other names models use for the language (`py`, `bash`, `sh` …).
    pub aliases: Vec<String>,
}

impl LanguageSpec {
    pub fn python(program: impl Into<PathBuf>) -> Self {
        Self {
            name: "python".into(),
            kind: KernelKind::Python,
            program: program.into(),
            args: Vec::new(),
            aliases: ["py", "python3", "ipython", "jupyter", "pycon"]
                .map(String::from)
                .to_vec(),
        }
    }

    pub fn shell(program: impl Into<PathBuf>) -> Self {
        Self {
            name: "shell".into(),
            kind: KernelKind::Bash,
            program: program.into(),
            args: Vec::new(),
            aliases: ["bash", "sh", "zsh", "console", "terminal", "shell-session"]
                .map(String::from)
                .to_vec(),
        }
    }

    /// The same language run by `command` (the program, then its arguments).
    pub fn with_command(mut self, command: &[String]) -> Self {
        if let Some((program, args)) = command.split_first() {
            self.program = PathBuf::from(program);
            self.args = args.to_vec();
        }
        self
    }

    /// Whether `name` is this language's name or one of its aliases.
    pub fn answers_to(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name)
            || self.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
    }
}

/// The languages whose interpreters are on `PATH`: Python (`python3`) and the
/// shell (`bash`).
pub fn detect_languages() -> Vec<LanguageSpec> {
    let mut languages = Vec::new();
    if let Ok(python) = which::which("python3") {
        languages.push(LanguageSpec::python(python));
    }
    if let Ok(bash) = which::which("bash") {
        languages.push(LanguageSpec::shell(bash));
    }
    languages
}

/// Why a kernel could not be used.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    #[error("cannot start the {language} kernel (`{program}`): {source}")]
    Spawn {
        language: String,
        program: String,
        source: std::io::Error,
    },
    #[error("the {language} kernel (`{program}`) failed to start: {problem}{}", stderr_note(.stderr))]
    StartupFailed {
        language: String,
        program: String,
        problem: String,
        stderr: String,
    },
    #[error("lost contact with the {language} kernel: {source}")]
    Io {
        language: String,
        source: std::io::Error,
    },
    #[error("no kernel for `{language}`; available: {available}")]
    UnknownLanguage { language: String, available: String },
}

fn stderr_note(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!("; it printed:\n{stderr}")
    }
}

/// The kernels of one session.
#[derive(Debug)]
pub struct KernelManager {
    languages: Vec<LanguageSpec>,
    cwd: PathBuf,
    kernels: HashMap<String, Kernel>,
}

impl KernelManager {
    /// Kernels for `languages`, started in `cwd` when first used.
    pub fn new(languages: Vec<LanguageSpec>, cwd: impl Into<PathBuf>) -> Self {
        Self {
            languages,
            cwd: cwd.into(),
            kernels: HashMap::new(),
        }
    }

    pub fn languages(&self) -> &[LanguageSpec] {
        &self.languages
    }

    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// The language a model means by `name` (`py` → python, `bash` → shell).
    pub fn resolve(&self, name: &str) -> Option<&LanguageSpec> {
        let name = name.trim();
        self.languages.iter().find(|l| l.answers_to(name))
    }

    /// Starts the kernel of `language` (a name or alias) unless it is running.
    pub async fn start(&mut self, language: &str) -> Result<(), KernelError> {
        self.kernel(language).await.map(|_| ())
    }

    /// Runs `code` in the kernel of `language` (a name or alias), starting the
    /// kernel if needed. Output goes to `sink` as it arrives. A kernel that dies
    /// during the run is reported as [`RunStatus::Crashed`] and replaced by a
    /// fresh one on the next run.
    pub async fn run(
        &mut self,
        language: &str,
        code: &str,
        sink: &mut (dyn FnMut(OutputStream, String) + Send),
        cancel: &CancellationToken,
    ) -> Result<RunStatus, KernelError> {
        let kernel = self.kernel(language).await?;
        Ok(kernel.run(code, sink, cancel).await)
    }

    /// The live kernel of `language`, started (or restarted) as needed.
    async fn kernel(&mut self, language: &str) -> Result<&mut Kernel, KernelError> {
        let Some(spec) = self.resolve(language).cloned() else {
            return Err(KernelError::UnknownLanguage {
                language: language.to_owned(),
                available: self
                    .languages
                    .iter()
                    .map(|l| l.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        if self.kernels.get(&spec.name).is_some_and(Kernel::is_dead)
            && let Some(dead) = self.kernels.remove(&spec.name)
        {
            dead.shutdown().await;
        }
        Ok(match self.kernels.entry(spec.name.clone()) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(Kernel::start(&spec, &self.cwd).await?)
            }
        })
    }

    /// Stops every kernel and everything they started.
    pub async fn shutdown(&mut self) {
        for (_, kernel) in self.kernels.drain() {
            kernel.shutdown().await;
        }
    }
}
