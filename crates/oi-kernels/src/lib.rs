//! Persistent language kernels: one long-lived interpreter per language, so
//! variables, imports, the working directory and exported variables survive
//! from one run to the next.
//!
//! [`KernelManager`] starts a kernel on the first run of its language, streams
//! each run's stdout and stderr as they arrive, reports how the run ended
//! ([`RunStatus`]), and restarts a kernel that died. See `kernel.rs` for the
//! protocol spoken with each kernel process.

mod cleanup;
mod container;
mod kernel;
mod languages;
mod output;
mod process;
mod shims;
mod sync;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use oi_protocol::{OutputStream, RunStatus};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use kernel::Kernel;

pub use cleanup::{become_subreaper, kill_leftovers, kill_leftovers_once, kill_orphans};
pub use container::{ContainerError, ContainerSpec, EngineKind, engine_version, run_once};
pub use languages::{detect_languages, install_hint, known_languages};

/// Something that happens during a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEvent {
    /// Output, as it arrives.
    Output { stream: OutputStream, text: String },
    /// A process of the kernel is blocked reading its standard input;
    /// `prompt` is the last line it printed. Text sent on the run's input
    /// channel goes to that input.
    WaitingForInput { prompt: String },
    /// Text from the run's input channel was written to the program's
    /// standard input (it is not echoed: stdin is a pipe, not a terminal).
    InputWritten { text: String },
    /// The code produced an image file (a plot).
    Image { path: PathBuf, media_type: String },
}

/// Serves the Python kernel's `computer` module (OS mode): takes a request
/// (`{"action": …}`) and answers it (`{"ok": true, …}` or `{"ok": false,
/// "error": …}`); the token is cancelled when the run is interrupted. It
/// may block (it is called on a blocking thread).
pub type ComputerHandler =
    std::sync::Arc<dyn Fn(serde_json::Value, CancellationToken) -> serde_json::Value + Send + Sync>;

/// Answers the requests that running code makes of oi: the screen (OS
/// mode's `computer` module) and MCP tools (the `mcp_tools` module); same
/// shape as [`ComputerHandler`].
#[derive(Clone, Default)]
pub struct Handlers {
    pub computer: Option<ComputerHandler>,
    pub tools: Option<ComputerHandler>,
}

impl std::fmt::Debug for Handlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handlers")
            .field("computer", &self.computer.is_some())
            .field("tools", &self.tools.is_some())
            .finish()
    }
}

/// How a run may be stopped or fed.
#[derive(Debug)]
pub struct RunControl<'a> {
    /// Cancelled: interrupt the run.
    pub cancel: &'a CancellationToken,
    /// Stop the run after this long.
    pub timeout: Option<Duration>,
    /// Text to write to the program's standard input.
    pub input: Option<&'a mut mpsc::UnboundedReceiver<String>>,
}

impl<'a> RunControl<'a> {
    /// A run stopped only by `cancel`.
    pub fn cancel(cancel: &'a CancellationToken) -> Self {
        Self {
            cancel,
            timeout: None,
            input: None,
        }
    }
}

/// How a run ended, and how much it printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOutcome {
    pub status: RunStatus,
    /// Bytes of output (stdout and stderr).
    pub output_bytes: u64,
}

/// Which driver a language uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KernelKind {
    /// CPython 3 running oi's Python driver.
    Python,
    /// bash running oi's shell driver.
    Bash,
    /// zsh running the shell driver.
    Zsh,
    /// Node.js.
    Node,
    Ruby,
    /// R (`Rscript`).
    R,
    Perl,
    Lua,
    Php,
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
        Self::known("python", program).unwrap_or_else(|| unreachable_spec(KernelKind::Python))
    }

    pub fn shell(program: impl Into<PathBuf>) -> Self {
        Self::known("shell", program).unwrap_or_else(|| unreachable_spec(KernelKind::Bash))
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

/// `python` and `shell` are in the table of known languages; this is never
/// reached, and keeps the constructors free of panics.
fn unreachable_spec(kind: KernelKind) -> LanguageSpec {
    LanguageSpec {
        name: format!("{kind:?}").to_ascii_lowercase(),
        kind,
        program: PathBuf::new(),
        args: Vec::new(),
        aliases: Vec::new(),
    }
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
    #[error("cannot start the {language} kernel in the container: {source}")]
    Container {
        language: String,
        source: ContainerError,
    },
    #[error("no kernel for `{language}`{}; available: {available}", install_note(.language))]
    UnknownLanguage { language: String, available: String },
}

fn install_note(language: &str) -> String {
    match install_hint(language) {
        Some(install) => format!(" (it is not installed here: install {install})"),
        None => String::new(),
    }
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
    launch: kernel::Launch,
    kernels: HashMap<String, Kernel>,
    /// Kernels being started ahead of their first run ([`Self::prestart`]).
    starting: HashMap<String, tokio::task::JoinHandle<Result<Kernel, KernelError>>>,
    handlers: Handlers,
    /// This session's mark on its kernels (see `cleanup::kill_orphans_of`).
    mark: cleanup::SessionMark,
}

impl KernelManager {
    /// Kernels for `languages`, started in `cwd` when first used.
    pub fn new(languages: Vec<LanguageSpec>, cwd: impl Into<PathBuf>) -> Self {
        let mark = cleanup::SessionMark::new();
        Self {
            languages,
            launch: kernel::Launch {
                cwd: cwd.into(),
                session: mark.as_str().to_owned(),
                ..kernel::Launch::default()
            },
            kernels: HashMap::new(),
            starting: HashMap::new(),
            handlers: Handlers::default(),
            mark,
        }
    }

    /// Lets code drive the screen through the kernel's `computer` module
    /// (Python), answered by `handler`.
    pub fn with_computer(mut self, handler: ComputerHandler) -> Self {
        self.handlers.computer = Some(handler);
        self
    }

    /// Lets code call MCP tools through the kernel's `mcp_tools` module
    /// (Python), answered by `handler`.
    pub fn with_tools(mut self, handler: ComputerHandler) -> Self {
        self.handlers.tools = Some(handler);
        self
    }

    /// Ends the kernel of `language` (a name or alias), if it runs; the
    /// next run starts a fresh one. Says whether one was running.
    pub fn stop(&mut self, language: &str) -> bool {
        let Some(name) = self.resolve(language).map(|l| l.name.clone()) else {
            return false;
        };
        if let Some(starting) = self.starting.remove(&name) {
            starting.abort();
        }
        self.kernels.remove(&name).is_some()
    }

    /// Where kernels save the images (plots) that code produces.
    pub fn with_image_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.launch.image_dir = Some(dir.into());
        self
    }

    /// Confines every kernel (and what it starts) to `policy`.
    pub fn with_sandbox(mut self, policy: oi_sandbox::Policy) -> Self {
        self.launch.sandbox = Some(policy);
        self
    }

    /// Runs every kernel in a container started for this session (see
    /// `container.rs`), mounting what the sandbox policy lets code write
    /// (set the policy and the image folder first).
    pub fn with_container(mut self, spec: ContainerSpec) -> Self {
        let policy = self.launch.sandbox.clone().unwrap_or_else(|| {
            oi_sandbox::Policy::new(oi_protocol::SandboxMode::Container, &self.launch.cwd)
        });
        let extra: Vec<PathBuf> = self.launch.image_dir.iter().cloned().collect();
        let mounts = container::Mounts::of(&policy, &extra);
        self.launch.container = Some(std::sync::Arc::new(container::ContainerSlot::new(
            spec, mounts,
        )));
        self
    }

    /// Whether kernels run in a container.
    pub fn in_container(&self) -> bool {
        self.launch.container.is_some()
    }

    /// A folder where tools keep caches and settings (matplotlib's), which
    /// stays writable under the sandbox.
    pub fn with_cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.launch.cache_dir = Some(dir.into());
        self
    }

    /// Keeps these environment variables (API keys) from the kernels and
    /// everything they start.
    pub fn with_hidden_env(mut self, names: Vec<String>) -> Self {
        self.launch.hidden_env = names;
        self
    }

    /// The working directory of `language`'s kernel now (it follows `cd`
    /// in the code), or the session's when the kernel is not running.
    pub fn current_dir(&self, language: &str) -> PathBuf {
        self.resolve(language)
            .and_then(|spec| self.kernels.get(&spec.name))
            .and_then(Kernel::current_dir)
            .unwrap_or_else(|| self.launch.cwd.clone())
    }

    /// The policy kernels run under, if any.
    pub fn sandbox(&self) -> Option<&oi_sandbox::Policy> {
        self.launch.sandbox.as_ref()
    }

    pub fn languages(&self) -> &[LanguageSpec] {
        &self.languages
    }

    pub fn cwd(&self) -> &Path {
        &self.launch.cwd
    }

    /// The language a model means by `name` (`py` → python, `bash` → shell);
    /// a language's own name wins over another's alias (`zsh`).
    pub fn resolve(&self, name: &str) -> Option<&LanguageSpec> {
        let name = name.trim();
        self.languages
            .iter()
            .find(|l| l.name.eq_ignore_ascii_case(name))
            .or_else(|| self.languages.iter().find(|l| l.answers_to(name)))
    }

    /// Starts the kernel of `language` (a name or alias) unless it is running.
    pub async fn start(&mut self, language: &str) -> Result<(), KernelError> {
        self.kernel(language).await.map(|_| ())
    }

    /// Starts the kernel of `language` in the background, unless it runs
    /// or is starting already, so that its first run does not wait for the
    /// interpreter to start (the agent calls it while the model is asked).
    /// A start that fails is reported by the first run that needs it.
    pub fn prestart(&mut self, language: &str) {
        let Some(spec) = self.resolve(language).cloned() else {
            return;
        };
        if self.kernels.contains_key(&spec.name) || self.starting.contains_key(&spec.name) {
            return;
        }
        let launch = self.launch.clone();
        let name = spec.name.clone();
        let task = tokio::spawn(async move { Kernel::start(&spec, &launch).await });
        self.starting.insert(name, task);
    }

    /// Runs `code` in the kernel of `language` (a name or alias), starting the
    /// kernel if needed. Events (output, waits for input, images) go to
    /// `sink` as they happen. A kernel that dies during the run is reported
    /// as [`RunStatus::Crashed`] and replaced by a fresh one on the next run.
    pub async fn run(
        &mut self,
        language: &str,
        code: &str,
        sink: &mut (dyn FnMut(RunEvent) + Send),
        control: RunControl<'_>,
    ) -> Result<RunOutcome, KernelError> {
        let handlers = self.handlers.clone();
        let Some(slot) = self.launch.container.clone() else {
            let kernel = self.kernel(language).await?;
            return Ok(kernel.run(code, sink, control, &handlers).await);
        };
        // The container's start (an image pull) is reported as the run's
        // output while the run waits for it.
        let progress = slot.progress.clone();
        let (_, mut seen) = progress.since(0);
        let forward = |seen: &mut usize, sink: &mut (dyn FnMut(RunEvent) + Send)| {
            let (lines, now) = progress.since(*seen);
            *seen = now;
            for line in lines {
                sink(RunEvent::Output {
                    stream: OutputStream::Stderr,
                    text: format!("{line}\n"),
                });
            }
        };
        let kernel = {
            let start = self.kernel(language);
            tokio::pin!(start);
            loop {
                tokio::select! {
                    kernel = &mut start => break kernel,
                    () = slot.progress.changed() => forward(&mut seen, sink),
                }
            }
        };
        forward(&mut seen, sink);
        let kernel = kernel?;
        let container = slot.started();
        let Some((container, sync)) = container
            .as_ref()
            .and_then(|c| c.sync.as_ref().map(|sync| (c, sync)))
        else {
            return Ok(kernel.run(code, sink, control, &handlers).await);
        };
        // An engine on another machine: the workspace is copied there
        // before the run and back after it.
        let say = |notes: Vec<String>, sink: &mut (dyn FnMut(RunEvent) + Send)| {
            for note in notes {
                sink(RunEvent::Output {
                    stream: OutputStream::Stderr,
                    text: format!("{note}\n"),
                });
            }
        };
        match sync.push(container).await {
            Ok(notes) => say(notes, sink),
            Err(problem) => {
                return Ok(RunOutcome {
                    status: RunStatus::Crashed {
                        reason: format!(
                            "the workspace could not be copied to the container, so the code was not run: {problem}"
                        ),
                    },
                    output_bytes: 0,
                });
            }
        }
        // Plots are here only once the copy is back.
        let mut images = Vec::new();
        let outcome = {
            let mut hold = |event: RunEvent| match event {
                RunEvent::Image { .. } => images.push(event),
                other => sink(other),
            };
            kernel.run(code, &mut hold, control, &handlers).await
        };
        match sync.pull(container).await {
            Ok(notes) => say(notes, sink),
            Err(problem) => say(
                vec![format!(
                    "oi: the code's changes could not be copied back from the container: {problem}"
                )],
                sink,
            ),
        }
        for image in images {
            sink(image);
        }
        Ok(outcome)
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
        let started = match self.starting.remove(&spec.name) {
            // Started ahead of time: done, or done soon.
            Some(task) => Some(task.await.unwrap_or_else(|e| {
                Err(KernelError::Spawn {
                    language: spec.name.clone(),
                    program: spec.program.display().to_string(),
                    source: std::io::Error::other(e.to_string()),
                })
            })),
            None => None,
        };
        Ok(match self.kernels.entry(spec.name.clone()) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => match started {
                Some(kernel) => e.insert(kernel?),
                None => e.insert(Kernel::start(&spec, &self.launch).await?),
            },
        })
    }

    /// Stops every kernel and everything they started, including processes
    /// that left the kernels' process groups (when this process is a child
    /// subreaper, see [`become_subreaper`]).
    pub async fn shutdown(&mut self) {
        for (_, task) in self.starting.drain() {
            // A start still under way is dropped (its process goes with it).
            task.abort();
            if let Ok(Ok(kernel)) = task.await {
                kernel.shutdown().await;
            }
        }
        for (_, kernel) in self.kernels.drain() {
            kernel.shutdown().await;
        }
        if let Some(container) = self.launch.container.as_ref().and_then(|s| s.started()) {
            container.stop().await;
        }
        cleanup::kill_orphans_of(&self.mark);
    }
}
