//! Errors reported at the edge, and the exit codes of `interpreter`.

use std::process::ExitCode;

/// Exit codes, documented in the README.
pub mod exit {
    /// The task finished: the model answered without proposing more code.
    pub const OK: u8 = 0;
    /// The task failed: the model server could not be used, or similar.
    pub const FAILED: u8 = 1;
    /// Bad usage or configuration: an unknown key, a bad flag value, a
    /// missing prompt or API key.
    pub const USAGE: u8 = 2;
    /// A limit stopped the task (`--max-turns`).
    pub const LIMIT: u8 = 3;
    /// Code needed approval, but there was no terminal to ask and no `--yes`.
    pub const NEEDS_APPROVAL: u8 = 4;
    /// The user interrupted the task (Ctrl-C).
    pub const INTERRUPTED: u8 = 130;
    /// Ended by SIGTERM or SIGHUP (after stopping every kernel).
    pub const TERMINATED: u8 = 143;
}

/// An error that ends the command before or outside a task.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("{message}")]
    Usage {
        message: String,
        hint: Option<String>,
    },
    #[error(transparent)]
    Config(#[from] oi_config::ConfigError),
    #[error(transparent)]
    Setup(#[from] oi_core::SetupError),
    #[error(transparent)]
    Provider(#[from] oi_providers::ProviderError),
    #[error(transparent)]
    Server(#[from] oi_server::ServerError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl CliError {
    pub fn usage(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Self::Usage {
            message: message.into(),
            hint: Some(hint.into()),
        }
    }

    pub fn hint(&self) -> Option<String> {
        match self {
            Self::Usage { hint, .. } => hint.clone(),
            Self::Config(e) => e.hint(),
            Self::Setup(e) => e.hint(),
            Self::Provider(e) => e.hint(),
            Self::Server(e) => e.hint(),
            Self::Io(_) => None,
        }
    }

    pub fn exit_code(&self) -> ExitCode {
        match self {
            Self::Usage { .. } | Self::Config(_) => ExitCode::from(exit::USAGE),
            Self::Setup(e) if e.is_usage() => ExitCode::from(exit::USAGE),
            Self::Setup(_) => ExitCode::from(exit::FAILED),
            Self::Provider(_) | Self::Server(_) | Self::Io(_) => ExitCode::from(exit::FAILED),
        }
    }
}
