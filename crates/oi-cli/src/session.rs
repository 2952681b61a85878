//! Turning command-line options into a running agent.

use std::sync::Arc;

use oi_core::{AgentConfig, ApprovalPolicy, HarnessKind};
use oi_kernels::{KernelManager, detect_languages};
use oi_providers::{ChatClient, ModelClient, ProviderConfig};

use crate::cli::SessionOptions;
use crate::error::CliError;

/// The default API base: OpenAI's.
pub const DEFAULT_API_BASE: &str = "https://api.openai.com/v1";
/// The model used when none is given.
pub const DEFAULT_MODEL: &str = "gpt-5-mini";

/// What an agent is started with.
#[derive(Debug)]
pub struct Setup {
    pub config: AgentConfig,
    pub client: Arc<dyn ModelClient>,
    pub kernels: KernelManager,
}

/// Checks the options and builds the agent's parts. Every problem is a
/// usage error that names the flag and how to fix it.
pub fn setup(options: &SessionOptions) -> Result<Setup, CliError> {
    let harness = match options.harness.as_deref() {
        None => HarnessKind::default(),
        Some(value) => value.parse().map_err(|e: oi_core::UnknownHarness| {
            CliError::usage(
                format!("--harness: {e}"),
                "use `--harness native` for models with tool calling, or `--harness markdown` for models that answer with code blocks",
            )
        })?,
    };
    let base_url = options
        .api_base
        .clone()
        .filter(|b| !b.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_API_BASE.to_owned());
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(CliError::usage(
            format!("--api-base: `{base_url}` is not an http:// or https:// URL"),
            "give the server's full API base, e.g. `--api-base http://localhost:11434/v1`",
        ));
    }
    let api_key = options
        .api_key
        .clone()
        .or_else(|| std::env::var("OPENAI_API_KEY").ok())
        .filter(|k| !k.trim().is_empty());
    let is_openai = base_url.trim_end_matches('/') == DEFAULT_API_BASE;
    if is_openai && api_key.is_none() {
        return Err(CliError::usage(
            "no API key for OpenAI: `$OPENAI_API_KEY` is not set and `--api-key` was not given",
            "set `OPENAI_API_KEY`, pass `--api-key`, or use a local server with `--api-base http://localhost:11434/v1`",
        ));
    }
    if options.max_turns == Some(0) {
        return Err(CliError::usage(
            "--max-turns: must be at least 1",
            "pass the number of model requests a task may make, e.g. `--max-turns 20`",
        ));
    }
    if options.max_output == Some(0) {
        return Err(CliError::usage(
            "--max-output: must be at least 1",
            "pass how many characters of output the model sees per run, e.g. `--max-output 4000`",
        ));
    }

    let languages = detect_languages();
    if languages.is_empty() {
        return Err(CliError::usage(
            "no language can run here: neither `python3` nor `bash` is on PATH",
            "install Python 3 or bash, or add them to PATH",
        ));
    }
    let cwd = std::env::current_dir()?;

    let provider_name = if is_openai {
        "OpenAI"
    } else {
        "the model server"
    };
    let mut provider = ProviderConfig::new(provider_name, base_url);
    provider.api_key = api_key;

    let mut config = AgentConfig::new(
        options
            .model
            .clone()
            .unwrap_or_else(|| DEFAULT_MODEL.to_owned()),
    );
    config.harness = harness;
    config.approval = if options.yes {
        ApprovalPolicy::Auto
    } else {
        ApprovalPolicy::Ask
    };
    if let Some(n) = options.max_turns {
        config.max_turns = n;
    }
    if let Some(n) = options.max_output {
        config.max_output = n;
    }
    Ok(Setup {
        config,
        client: Arc::new(ChatClient::new(provider)),
        kernels: KernelManager::new(languages, cwd),
    })
}
