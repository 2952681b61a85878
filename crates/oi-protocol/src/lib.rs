//! Plain data shared by every part of oi.
//!
//! This crate is the contract between the agent (`oi-core`) and its front ends
//! (the terminal session, `exec`, the JSONL stream, tests): the conversation
//! [`Message`]s, the agent's [`Event`] stream and the [`Op`]s a front end sends.
//! It does no I/O; everything here is serde data whose JSON form is stable.
//! The words of oi's settings ([`SandboxMode`], [`ApprovalPolicy`],
//! [`HarnessKind`], [`WireApi`]) are defined here once, for every crate.

mod event;
mod message;
mod op;
mod secrets;
mod vocabulary;

pub use event::{
    Event, FileChange, FileChangeKind, OutputStream, RunId, RunStatus, SkipReason, StopReason,
};
pub use message::{ContentPart, Message, ToolCall, Usage};
pub use op::{ExportFormat, Op, ReviewDecision};
pub use secrets::{REDACTED, Secrets};
pub use vocabulary::{ApprovalPolicy, HarnessKind, SandboxMode, UnknownWord, WireApi};

/// The language of OS mode's screen actions in run events
/// (`CodeProposed`, `ApprovalRequested` …): the code is the action,
/// described in one line. It is also the name of the model's tool.
pub const SCREEN_LANGUAGE: &str = "computer";

/// The language of file edits in run events (`claude-code` and `codex`
/// harnesses): the code is the change as a unified diff.
pub const EDIT_LANGUAGE: &str = "edit";

/// The language of MCP tool calls in run events: the code is
/// [`mcp_call_text`] (`SERVER.TOOL {arguments as JSON}`).
pub const MCP_LANGUAGE: &str = "mcp";

/// How an MCP tool call is shown as code: `SERVER.TOOL {"arg":1}`.
pub fn mcp_call_text(server: &str, tool: &str, arguments: &serde_json::Value) -> String {
    format!("{server}.{tool} {arguments}")
}

/// The server, tool and arguments of a [`mcp_call_text`] (server names
/// have no `.`); `None` for other text.
pub fn parse_mcp_call_text(text: &str) -> Option<(String, String, serde_json::Value)> {
    let (name, arguments) = text.split_once(' ').unwrap_or((text, "{}"));
    let (server, tool) = name.split_once('.')?;
    let arguments = serde_json::from_str(arguments.trim()).ok()?;
    Some((server.to_owned(), tool.to_owned(), arguments))
}

/// How the user is asked about a proposed run of `language`, and whether
/// they may edit it first (screen actions and file edits are done as shown
/// or not at all).
pub fn approval_question(language: &str) -> (String, bool) {
    match language {
        SCREEN_LANGUAGE => ("Do this on the screen?".to_owned(), false),
        EDIT_LANGUAGE => ("Make this change?".to_owned(), false),
        MCP_LANGUAGE => ("Call this MCP tool?".to_owned(), true),
        other => (format!("Run this {other} code?"), true),
    }
}

#[cfg(test)]
mod mcp_text_tests {
    use super::*;

    #[test]
    fn mcp_call_text_reads_back() {
        let args = serde_json::json!({"q": "a b"});
        let text = mcp_call_text("docs", "search.v2", &args);
        assert_eq!(text, r#"docs.search.v2 {"q":"a b"}"#);
        assert_eq!(
            parse_mcp_call_text(&text),
            Some(("docs".into(), "search.v2".into(), args))
        );
        assert_eq!(parse_mcp_call_text("print(1)"), None);
        assert_eq!(parse_mcp_call_text("a.b {nope"), None);
    }
}
