//! Why a session could not be set up: each variant says what was wrong and
//! where, and [`SetupError::hint`] how to fix it.

use std::path::PathBuf;

/// A reason a session cannot start.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The configuration (files, `-c`, the front end's settings) is wrong.
    #[error(transparent)]
    Config(#[from] oi_config::ConfigError),
    /// Listing the models of a server failed.
    #[error(transparent)]
    Provider(#[from] oi_providers::ProviderError),
    #[error("no language can run here: neither `python3` nor `bash` is on PATH")]
    NoLanguage,
    #[error("{origin}[languages.{name}]: oi has no kernel for `{name}`")]
    UnknownLanguage {
        /// `file:line: ` where it was set, or empty.
        origin: String,
        name: String,
        known: Vec<String>,
    },
    /// The workspace given is missing, unreadable or not a folder.
    #[error("{from} {}: {problem}", given.display())]
    Workspace {
        /// Where it was given (`--workspace`, a request field).
        from: String,
        given: PathBuf,
        problem: String,
        is_file: bool,
    },
    /// A folder code may write is missing or not a folder.
    #[error("{from}: {problem}")]
    WritableRoot {
        from: String,
        problem: String,
        is_file: bool,
    },
    #[error(
        "{from}: {} is inside oi's own folder {}, which code may never change",
        root.display(),
        home.display()
    )]
    InsideOiFolder {
        from: String,
        root: PathBuf,
        home: PathBuf,
    },
    #[error("{from} cannot be kept with {full_access}, which lifts the network limit")]
    OfflineWithFullAccess {
        from: String,
        /// How full-access was chosen: `--sandbox full-access`, or the
        /// setting and its file.
        full_access: String,
    },
    #[error("{from} cannot be kept here: {problem}")]
    OfflineUnenforceable { from: String, problem: String },
    #[error("sandbox_required = true, but {}", shortfalls.join("; and "))]
    SandboxRequired { shortfalls: Vec<String> },
    #[error(
        "{origin}approval = \"never\" runs even risky code without asking, so it is only accepted when the session is opened for it on purpose"
    )]
    ApprovalNeverNotAllowed { origin: String },
    #[error("{origin}reply_grammar = true cannot be kept: {problem}")]
    ReplyGrammarUnusable { origin: String, problem: String },
    #[error("{origin}max_budget = {budget} cannot be kept: the price of `{model}` is unknown")]
    BudgetWithoutPrice {
        origin: String,
        budget: f64,
        model: String,
    },
    #[error(
        "OS mode{origin} needs a model that can see screenshots, and `{model}` is not known to read images"
    )]
    OsModeNeedsVision { origin: String, model: String },
    #[error("OS mode{origin} cannot start: {problem}")]
    OsModeUnavailable { origin: String, problem: String },
    /// oi's built-in model catalog could not be read (a build defect).
    #[error("{0}")]
    Catalog(String),
    #[error("{from} {id}: there is no recorded session `{id}`")]
    NoSuchSession { from: String, id: String },
    #[error("{from} {id}: {count} sessions start with `{id}`")]
    AmbiguousSession {
        from: String,
        id: String,
        count: usize,
    },
    #[error("no session was recorded in {} yet, so there is none to continue", cwd.display())]
    NothingToContinue { cwd: PathBuf },
    #[error("{from}: {problem}")]
    BadConversationFile { from: String, problem: String },
    #[error("{0}")]
    Transcript(#[from] crate::transcript::TranscriptError),
    #[error("{from}: no model server with a model answered on this machine (looked for {places})")]
    NoLocalServer { from: String, places: String },
    #[error("{from} --model {model}: none of the servers found lists it ({servers})")]
    LocalModelNotServed {
        from: String,
        model: String,
        servers: String,
    },
    #[error("{from} found {} models and cannot ask which one here (no terminal):\n  {}", models.len(), models.join("\n  "))]
    LocalModelNotChosen { from: String, models: Vec<String> },
    #[error("{from}: no model was picked")]
    LocalNothingPicked { from: String },
    #[error("{0}")]
    Builtin(oi_builtin::BuiltinError),
    #[error("this build of oi cannot run the built-in model: it was built without its engine")]
    NoBuiltinEngine,
    #[error("the built-in model `{name}` is not downloaded yet ({} MB)", size / 1_000_000)]
    BuiltinNotDownloaded { name: String, size: u64 },
    #[error(
        "{origin}harness = \"native\" needs tool calls, which the built-in model does not make"
    )]
    BuiltinNeedsMarkdown { origin: String },
    /// Nothing is configured and the default provider has no key: the
    /// first start on a new machine.
    #[error(
        "oi has no language model to talk to yet: no model is configured and `{var}` is not set"
    )]
    NoModelSetUp { var: String },
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl SetupError {
    /// How to fix it, in one line.
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            Self::Config(e) => return e.hint(),
            Self::Provider(e) => return e.hint(),
            Self::NoLanguage => "install Python 3 or bash, add them to PATH, or set `[languages.python] command`".to_owned(),
            Self::UnknownLanguage { known, .. } => format!(
                "the languages oi can run are {}; e.g. `[languages.python] command = [\"/path/to/venv/bin/python\"]` picks the interpreter",
                known.join(", ")
            ),
            Self::Workspace { is_file: true, .. } => {
                "give the folder the task works in (the folder that holds this file?)".to_owned()
            }
            Self::Workspace { .. } => "give an existing folder".to_owned(),
            Self::WritableRoot { is_file: true, .. } => {
                "code may only be given folders; give the folder that holds it".to_owned()
            }
            Self::WritableRoot { .. } => {
                "code may only be given folders that exist; create it first".to_owned()
            }
            Self::InsideOiFolder { .. } => "give code a folder outside it (oi's configuration, checkpoints and transcripts live there)".to_owned(),
            Self::OfflineWithFullAccess { .. } => {
                "drop one of the two (--offline works with read-only, workspace-write and container)".to_owned()
            }
            Self::OfflineUnenforceable { .. } => {
                "run where the sandbox works (Linux with seccomp), or leave out --offline".to_owned()
            }
            Self::SandboxRequired { .. } => "run where the sandbox works (Linux 5.13+ with Landlock), or set `sandbox_required = false` to run with a warning".to_owned(),
            Self::ApprovalNeverNotAllowed { .. } => "pass `--dangerously-allow-all` for this run, or use `approval = \"auto\"` (risky code still asks)".to_owned(),
            Self::ReplyGrammarUnusable { .. } => "remove `reply_grammar = true`, or use it with the markdown harness and a llama.cpp server on the chat wire or the built-in model".to_owned(),
            Self::BudgetWithoutPrice { model, .. } => format!(
                "tell oi the price (USD per million tokens): `[models.\"{model}\"] input_price = …, output_price = …`"
            ),
            Self::OsModeNeedsVision { model, .. } => format!(
                "choose a vision model with --model; if `{model}` does read images, say so in the configuration: `[models.\"{model}\"] vision = true`"
            ),
            Self::OsModeUnavailable { .. } => {
                "leave out --os (or set `os = false`) to work without the screen".to_owned()
            }
            Self::NoSuchSession { .. } | Self::NothingToContinue { .. } | Self::Transcript(_) => {
                "`interpreter sessions` lists the recorded sessions (`--here`: this folder's)"
                    .to_owned()
            }
            Self::AmbiguousSession { .. } => "give more of the id".to_owned(),
            Self::BadConversationFile { .. } => "give a file saved with /save (~/.openinterpreter/conversations), or one Open Interpreter saved (its conversations folder)".to_owned(),
            Self::NoLocalServer { .. } => "start one (e.g. `ollama serve` and `ollama pull qwen2.5-coder:7b`, LM Studio's server, or llama.cpp's `llama-server -m MODEL.gguf`), or give its address with `--api-base URL` (a build with the built-in model runs one itself instead)".to_owned(),
            Self::LocalModelNotServed { .. } => {
                "`interpreter --local models` lists what they serve".to_owned()
            }
            Self::LocalModelNotChosen { .. } => "choose with `--local --model NAME`".to_owned(),
            Self::LocalNothingPicked { .. } => {
                "pick one, or choose with `--local --model NAME`".to_owned()
            }
            Self::Builtin(e) => return e.hint(),
            Self::NoBuiltinEngine => oi_builtin::HOW_TO_GET_ENGINE.to_owned(),
            Self::BuiltinNotDownloaded { name, .. } => format!(
                "download it once with `interpreter models --download {name}` (or start with `--yes` to download it now); or name a GGUF file with `--model FILE.gguf`"
            ),
            Self::BuiltinNeedsMarkdown { .. } => {
                "leave `harness` to oi (or set it to \"markdown\") with the built-in model".to_owned()
            }
            Self::NoModelSetUp { var } => format!(
                "three ways to start: (1) an API key: `export {var}=…` (or another provider's, e.g. `export ANTHROPIC_API_KEY=…` with `-c model_provider=anthropic`), or run `interpreter setup` in a terminal to paste one; (2) a model server on this machine (Ollama, LM Studio, llama.cpp): start it and add `--local`; (3) the built-in model, run by oi itself with no key or server: `-c model_provider=builtin --yes` (downloads {} once, {:.1} GB; `--model FILE.gguf` uses a file you have)",
                oi_builtin::KNOWN[0].name,
                oi_builtin::KNOWN[0].size as f64 / 1e9
            ),
            Self::Catalog(_) | Self::Io(_) => return None,
        })
    }

    /// Whether the fault is in what was asked for (a setting, a flag, the
    /// machine's set-up) rather than in something that failed on the way.
    pub fn is_usage(&self) -> bool {
        !matches!(
            self,
            Self::Provider(_)
                | Self::Io(_)
                | Self::Builtin(
                    oi_builtin::BuiltinError::Unreachable { .. }
                        | oi_builtin::BuiltinError::Http { .. }
                        | oi_builtin::BuiltinError::Interrupted { .. }
                        | oi_builtin::BuiltinError::Checksum { .. }
                        | oi_builtin::BuiltinError::TooLarge { .. }
                        | oi_builtin::BuiltinError::Io { .. }
                )
        )
    }
}
