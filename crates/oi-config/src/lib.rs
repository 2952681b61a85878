//! Layered configuration for oi, compatible with Open Interpreter's TOML.
//!
//! [`load`] reads the layers (see `load.rs` for the precedence), validates
//! every key with its file and line, and returns the effective [`Config`]
//! together with the [`Origin`] of each value. [`show`] prints it,
//! [`edit`] changes the user's file while keeping its comments and layout.

mod config;
mod credentials;
pub mod edit;
mod error;
pub mod instructions;
pub mod keys;
mod layers;
mod load;
mod origin;
pub mod profiles;
mod providers;
mod resolve;
mod schema;
mod show;

pub use config::{
    BuiltinSettings, Config, ContainerSettings, McpServerSettings, McpTransport, ModelSettings,
    ProviderInfo, TrustLevel,
};
pub use credentials::Credentials;
pub use error::ConfigError;
pub use instructions::{InstructionFile, Instructions};
pub use load::{
    FlagSetting, LoadOptions, Loaded, UntrustedProject, home_dir, is_small_model, list_profiles,
    load, project_root,
};
pub use origin::{Origin, display_path};
pub use providers::{
    API_BASE_PROVIDER, BUILTIN_BASE_URL, BUILTIN_DEFAULT_MODEL, BUILTIN_PROVIDER, is_local_url,
};
pub use show::{
    DEFAULT_REQUEST_MAX_RETRIES, DEFAULT_STREAM_IDLE_TIMEOUT_MS, DEFAULT_STREAM_MAX_DURATION_MS,
    show,
};
