//! Command-line arguments.

use clap::{Args, Parser, Subcommand};

/// oi — Open Interpreter: let a language model run code on your machine, with you in control.
#[derive(Debug, Parser)]
#[command(name = "interpreter", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub options: SessionOptions,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one task without the interactive session and exit.
    ///
    /// Progress (code, output) goes to stderr; the model's final answer goes
    /// to stdout.
    Exec(ExecArgs),
}

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// The task. Read from stdin when it is `-` or missing.
    pub prompt: Option<String>,

    /// Print the agent's events as JSON lines on stdout instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Options of every session (interactive or `exec`).
#[derive(Debug, Clone, Args)]
pub struct SessionOptions {
    /// The model to use.
    #[arg(long, short = 'm', global = true, env = "OI_MODEL")]
    pub model: Option<String>,

    /// The API base URL of an OpenAI-compatible server, e.g. `http://localhost:11434/v1`.
    #[arg(
        long = "api-base",
        visible_alias = "api_base",
        global = true,
        env = "OPENAI_BASE_URL"
    )]
    pub api_base: Option<String>,

    /// The API key (default: `$OPENAI_API_KEY`).
    #[arg(
        long = "api-key",
        visible_alias = "api_key",
        global = true,
        hide_env_values = true
    )]
    pub api_key: Option<String>,

    /// Run code without asking for approval.
    #[arg(long, short = 'y', global = true)]
    pub yes: bool,

    /// Model requests allowed per task before it is stopped.
    #[arg(
        long = "max-turns",
        visible_alias = "max_turns",
        global = true,
        value_name = "N"
    )]
    pub max_turns: Option<u32>,

    /// Characters of each run's output sent to the model (head and tail are kept).
    #[arg(
        long = "max-output",
        visible_alias = "max_output",
        global = true,
        value_name = "CHARS"
    )]
    pub max_output: Option<usize>,

    /// How the model is asked to run code: `native` (a function tool) or
    /// `markdown` (fenced code blocks, for models without tool calling).
    #[arg(long, global = true, value_name = "HARNESS")]
    pub harness: Option<String>,
}
