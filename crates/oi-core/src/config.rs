//! The settings a session runs with, already resolved from flags and files.

use crate::HarnessKind;

/// When the user is asked before code runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApprovalPolicy {
    /// Every run waits for the user's decision (`Op::Approve`).
    #[default]
    Ask,
    /// Runs start without asking (`--yes`).
    Auto,
}

/// Everything the agent needs to know to run a session.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentConfig {
    pub model: String,
    pub harness: HarnessKind,
    pub approval: ApprovalPolicy,
    /// Model requests allowed per task before it is stopped.
    pub max_turns: u32,
    /// Characters of a run's output sent to the model (head and tail kept).
    pub max_output: usize,
    pub max_tokens: Option<u32>,
    /// The model's context window in tokens, when known: a request estimated
    /// to exceed it (less `max_tokens`) draws a warning.
    pub context_window: Option<u32>,
    pub temperature: Option<f64>,
    /// Added to the end of the system prompt.
    pub custom_instructions: Option<String>,
    /// The model's prices; `None` when unknown (costs are then not reported).
    pub pricing: Option<oi_providers::Pricing>,
    /// The most the session may spend, in USD. Needs `pricing`.
    pub max_budget: Option<f64>,
}

impl AgentConfig {
    pub const DEFAULT_MAX_TURNS: u32 = 50;
    pub const DEFAULT_MAX_OUTPUT: usize = 4000;

    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            harness: HarnessKind::default(),
            approval: ApprovalPolicy::default(),
            max_turns: Self::DEFAULT_MAX_TURNS,
            max_output: Self::DEFAULT_MAX_OUTPUT,
            max_tokens: None,
            context_window: None,
            temperature: None,
            custom_instructions: None,
            pricing: None,
            max_budget: None,
        }
    }
}
