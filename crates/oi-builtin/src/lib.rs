//! The built-in model: GGUF weights run in oi's own process, so oi works
//! with no API key and no model server.
//!
//! - [`catalog`]: the models oi downloads by name, and how a `model`
//!   setting names one (a known name, or a path to a GGUF file);
//! - [`download`]: fetching a known model into the cache, with progress,
//!   resume and a SHA-256 check;
//! - [`BuiltinClient`]: a [`oi_providers::ModelClient`] that loads the
//!   weights with llama.cpp and generates on a thread of its own — the
//!   chat template, context length and stop tokens read from the GGUF,
//!   tokens streamed, generation stopped when the stream is dropped, the
//!   prompt's unchanged beginning kept between requests.
//!
//! The engine is compiled only with the `llama` feature (it builds
//! llama.cpp from source: cmake, a C++ compiler, libclang). Without it,
//! [`AVAILABLE`] is false and a request says how to get it.

pub mod catalog;
pub mod download;
mod engine;
mod prompt;
mod run;
mod sampling;
mod threads;

use std::path::PathBuf;

pub use catalog::{KNOWN, KnownModel, ModelRef};
pub use engine::{BuiltinClient, DEFAULT_REPLY_TOKENS};
pub use sampling::Sampling;
pub use threads::default_threads;

/// Whether this build can run models (the `llama` feature).
pub const AVAILABLE: bool = cfg!(feature = "llama");

/// How to get a build with the engine, for messages.
pub const HOW_TO_GET_ENGINE: &str = "install oi with the built-in model: `cargo install --locked --path crates/oi-cli --features builtin` (needs cmake, a C++ compiler and libclang: `apt-get install cmake g++ libclang-dev`)";

/// The weights to load and how to run them.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineOptions {
    /// The GGUF file.
    pub path: PathBuf,
    /// The model as requests name it (the configured `model`): a request
    /// for another model is refused, since these weights cannot answer it.
    pub name: String,
    /// Threads that generate.
    pub threads: u32,
    /// The context window to allocate (`None`: the model's own, capped at
    /// [`DEFAULT_MAX_CONTEXT`]).
    pub context: Option<u32>,
    /// Sampling when the request sets no temperature.
    pub sampling: Sampling,
}

impl EngineOptions {
    /// How errors name the engine: `the built-in model (NAME)`.
    pub fn provider(&self) -> String {
        format!("the built-in model ({})", self.name)
    }
}

/// The largest context allocated when none is configured: the KV cache
/// of a bigger one costs memory most tasks never use.
pub const DEFAULT_MAX_CONTEXT: u32 = 16_384;

/// What can go wrong finding, fetching or loading a model.
#[derive(Debug, thiserror::Error)]
pub enum BuiltinError {
    #[error("`{model}` is neither a model oi knows nor a GGUF file")]
    UnknownModel { model: String },
    #[error("{}: no such file", .path.display())]
    NoSuchFile { path: PathBuf },
    #[error("cannot reach {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("{url} answered HTTP {status}")]
    Http { url: String, status: u16 },
    #[error("the download from {url} broke off at {done} of {total} bytes: {reason}")]
    Interrupted {
        url: String,
        done: u64,
        total: u64,
        reason: String,
    },
    #[error("{url} sent more than the {expected} bytes the model has")]
    TooLarge { url: String, expected: u64 },
    #[error(
        "the file downloaded from {url} is not the model: its SHA-256 is {got}, not {expected}"
    )]
    Checksum {
        url: String,
        expected: String,
        got: String,
    },
    #[error("{}: {message}", .path.display())]
    Io { path: PathBuf, message: String },
}

impl BuiltinError {
    /// What to do about it.
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            Self::UnknownModel { .. } => format!(
                "name a model oi downloads ({}) or the path of a .gguf file; `interpreter models --local` lists the cached ones",
                KNOWN.iter().map(|m| m.name).collect::<Vec<_>>().join(", ")
            ),
            Self::NoSuchFile { .. } => {
                "check the path given as the model (relative paths are read from the current folder)".to_owned()
            }
            Self::Unreachable { .. } | Self::Http { .. } => {
                "check the network, or set a mirror: `[builtin] mirror = \"https://…\"` (or `HF_ENDPOINT`); or download the file yourself and pass its path with `--model FILE.gguf`".to_owned()
            }
            Self::Interrupted { .. } => {
                "run the same command again: the download resumes where it stopped".to_owned()
            }
            Self::TooLarge { .. } | Self::Checksum { .. } => {
                "the file was deleted; if a mirror is set, check that it serves the same files as Hugging Face, then try again".to_owned()
            }
            Self::Io { .. } => return None,
        })
    }
}
