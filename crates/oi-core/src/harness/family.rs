//! The tool shapes of the model families: `claude-code` (Anthropic's bash
//! and text-editor tools: their own client tool types on the Messages wire
//! with a Claude model, the same shapes as functions elsewhere) and `codex`
//! (Codex's `shell` and `apply_patch`). Both keep oi's `execute` for other
//! languages. A shell command runs in the session's persistent shell
//! kernel; an edit becomes an [`Action::Edit`].

use oi_protocol::{HarnessKind, ToolCall};
use oi_providers::{BuiltinTool, ToolSpec};
use serde_json::{Value, json};

use super::{Action, EditTool, ProposedRun};

/// Anthropic's names for its tools.
pub(crate) const BASH: &str = "bash";
pub(crate) const TEXT_EDITOR: &str = "str_replace_based_edit_tool";
/// Codex's names for its tools.
pub(crate) const SHELL: &str = "shell";
pub(crate) const APPLY_PATCH: &str = "apply_patch";

/// The family's own tools (before `execute`).
pub(super) fn tools(kind: HarnessKind) -> Vec<ToolSpec> {
    match kind {
        HarnessKind::ClaudeCode => vec![
            ToolSpec {
                name: BASH.to_owned(),
                description: "Run a command in a persistent bash shell on the user's machine (the working directory and variables carry over). Set `restart` to true to start a fresh shell.".to_owned(),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "command": {"type": "string", "description": "The command to run."},
                        "restart": {"type": "boolean", "description": "Restart the shell instead."},
                    },
                }),
                builtin: Some(BuiltinTool::Bash),
            },
            ToolSpec {
                name: TEXT_EDITOR.to_owned(),
                description: "View, create and edit files. `view` shows a file with line numbers (or a folder's entries); `create` writes a new file; `str_replace` replaces `old_str`, which must occur exactly once, with `new_str`; `insert` puts `new_str` after line `insert_line` (0: at the top).".to_owned(),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "command": {"type": "string", "enum": ["view", "create", "str_replace", "insert"]},
                        "path": {"type": "string", "description": "The file or folder (relative to the working directory, or absolute)."},
                        "file_text": {"type": "string", "description": "`create`: the file's content."},
                        "old_str": {"type": "string", "description": "`str_replace`: the exact text to replace."},
                        "new_str": {"type": "string", "description": "`str_replace`: the new text; `insert`: the text to insert."},
                        "insert_line": {"type": "integer", "description": "`insert`: the line after which to insert."},
                        "view_range": {"type": "array", "items": {"type": "integer"}, "description": "`view`: [first, last] line (-1: to the end)."},
                    },
                    "required": ["command", "path"],
                }),
                builtin: Some(BuiltinTool::TextEditor),
            },
        ],
        HarnessKind::Codex => vec![
            ToolSpec {
                name: SHELL.to_owned(),
                description: "Runs a shell command in a persistent shell on the user's machine and returns its output.".to_owned(),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "command": {"type": "array", "items": {"type": "string"}, "description": "The command and its arguments, e.g. [\"bash\", \"-lc\", \"ls -la\"]."},
                        "workdir": {"type": "string", "description": "The folder to run it in (default: the current one)."},
                        "timeout_ms": {"type": "number", "description": "Stop it after this many milliseconds."},
                    },
                    "required": ["command"],
                    "additionalProperties": false,
                }),
                builtin: None,
            },
            ToolSpec {
                name: APPLY_PATCH.to_owned(),
                description: "Edit files with a patch: `*** Begin Patch`, then for each file `*** Add File: PATH` (every line starting with +), `*** Delete File: PATH`, or `*** Update File: PATH` (optionally `*** Move to: NEW`) with hunks: an optional `@@ LINE` anchor, then lines starting with ` ` (kept), `-` (removed) or `+` (added), three lines of context around each change; then `*** End Patch`. Paths are relative.".to_owned(),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "input": {"type": "string", "description": "The whole patch."},
                    },
                    "required": ["input"],
                    "additionalProperties": false,
                }),
                builtin: None,
            },
        ],
        HarnessKind::Native | HarnessKind::Markdown => Vec::new(),
    }
}

/// What a call of one of the family's tools does; `None` for other tools.
pub(super) fn action(kind: HarnessKind, call: &ToolCall) -> Option<Action> {
    let invalid = |message: String| Action::Invalid {
        call_id: Some(call.id.clone()),
        message: format!("Error: the `{}` call was not made: {message}.", call.name),
    };
    let args = || -> Result<Value, String> {
        if call.arguments.trim().is_empty() {
            return Ok(json!({}));
        }
        serde_json::from_str(&call.arguments)
            .map_err(|e| format!("its arguments are not valid JSON ({e})"))
    };
    let shell = |code: String| {
        Action::Run(ProposedRun {
            call_id: Some(call.id.clone()),
            language: Some("shell".to_owned()),
            code,
        })
    };
    Some(match (kind, call.name.as_str()) {
        (HarnessKind::ClaudeCode, BASH) => match args() {
            Err(problem) => invalid(problem),
            Ok(args) if args["restart"].as_bool() == Some(true) => Action::RestartShell {
                call_id: call.id.clone(),
            },
            Ok(args) => match args["command"].as_str().filter(|c| !c.trim().is_empty()) {
                Some(command) => shell(command.to_owned()),
                None => invalid("`command` is missing".to_owned()),
            },
        },
        (HarnessKind::ClaudeCode, TEXT_EDITOR) => match args() {
            Err(problem) => invalid(problem),
            Ok(input) => Action::Edit {
                call_id: call.id.clone(),
                tool: EditTool::TextEditor,
                input,
            },
        },
        (HarnessKind::Codex, SHELL) => match args() {
            Err(problem) => invalid(problem),
            Ok(args) => {
                let argv: Vec<String> = match &args["command"] {
                    Value::Array(items) => items
                        .iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect(),
                    // A command given as one string is taken as a script.
                    Value::String(script) => vec!["bash".into(), "-lc".into(), script.clone()],
                    _ => Vec::new(),
                };
                if argv.is_empty() {
                    invalid("`command` must be a non-empty list of strings".to_owned())
                } else if let [program, patch] = argv.as_slice()
                    && program == APPLY_PATCH
                {
                    // Codex models also apply patches through the shell.
                    Action::Edit {
                        call_id: call.id.clone(),
                        tool: EditTool::ApplyPatch,
                        input: json!({"input": patch}),
                    }
                } else {
                    let script = script_of(&argv);
                    let code = match args["workdir"].as_str().filter(|w| !w.is_empty()) {
                        Some(dir) => format!("(cd {} && {script})", quote(dir)),
                        None => script,
                    };
                    shell(code)
                }
            }
        },
        (HarnessKind::Codex, APPLY_PATCH) => {
            // The tool may also be called with the bare patch as its input.
            let input = if call.arguments.trim_start().starts_with("*** Begin Patch") {
                json!({"input": call.arguments})
            } else {
                match args() {
                    Ok(args) => args,
                    Err(problem) => return Some(invalid(problem)),
                }
            };
            if input["input"].as_str().is_none() {
                return Some(invalid("`input` (the patch) is missing".to_owned()));
            }
            Action::Edit {
                call_id: call.id.clone(),
                tool: EditTool::ApplyPatch,
                input,
            }
        }
        _ => return None,
    })
}

/// The shell code for an argument list: the script of `bash -lc SCRIPT`,
/// else the arguments quoted.
fn script_of(argv: &[String]) -> String {
    if let [shell, flag, script] = argv
        && ["bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/usr/bin/bash"].contains(&shell.as_str())
        && ["-lc", "-c"].contains(&flag.as_str())
    {
        return script.clone();
    }
    argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ")
}

/// `word` as one shell word.
fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        return word.to_owned();
    }
    format!("'{}'", word.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn call(name: &str, arguments: Value) -> ToolCall {
        ToolCall {
            id: "c1".into(),
            name: name.into(),
            arguments: arguments.to_string(),
        }
    }

    fn code(action: Option<Action>) -> String {
        match action {
            Some(Action::Run(run)) => {
                assert_eq!(run.language.as_deref(), Some("shell"));
                run.code
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bash_and_shell_calls_run_in_the_shell_kernel() {
        let claude = HarnessKind::ClaudeCode;
        let codex = HarnessKind::Codex;
        assert_eq!(
            code(action(claude, &call("bash", json!({"command": "ls -la"})))),
            "ls -la"
        );
        assert!(matches!(
            action(claude, &call("bash", json!({"restart": true}))),
            Some(Action::RestartShell { .. })
        ));
        assert_eq!(
            code(action(
                codex,
                &call(
                    "shell",
                    json!({"command": ["bash", "-lc", "wc -l < a.csv"]})
                )
            )),
            "wc -l < a.csv"
        );
        assert_eq!(
            code(action(
                codex,
                &call(
                    "shell",
                    json!({"command": ["grep", "-n", "it's", "a b.txt"], "workdir": "src"})
                )
            )),
            "(cd src && grep -n 'it'\\''s' 'a b.txt')"
        );
        // Each family's tools are its own.
        assert_eq!(action(codex, &call("bash", json!({"command": "ls"}))), None);
        assert_eq!(
            action(
                HarnessKind::Native,
                &call("shell", json!({"command": ["ls"]}))
            ),
            None
        );
        assert!(matches!(
            action(codex, &call("shell", json!({"command": []}))),
            Some(Action::Invalid { .. })
        ));
    }

    #[test]
    fn edits_become_edit_actions() {
        let patch = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch";
        for (kind, c) in [
            (
                HarnessKind::Codex,
                call("apply_patch", json!({"input": patch})),
            ),
            (
                HarnessKind::Codex,
                call("shell", json!({"command": ["apply_patch", patch]})),
            ),
            (
                HarnessKind::Codex,
                ToolCall {
                    id: "c1".into(),
                    name: "apply_patch".into(),
                    arguments: patch.into(),
                },
            ),
        ] {
            match action(kind, &c) {
                Some(Action::Edit {
                    tool: EditTool::ApplyPatch,
                    input,
                    ..
                }) => {
                    assert_eq!(input["input"], patch);
                }
                other => panic!("{other:?}"),
            }
        }
        assert!(matches!(
            action(
                HarnessKind::ClaudeCode,
                &call(
                    "str_replace_based_edit_tool",
                    json!({"command": "view", "path": "."})
                )
            ),
            Some(Action::Edit {
                tool: EditTool::TextEditor,
                ..
            })
        ));
    }

    #[test]
    fn claude_tools_are_anthropics_own_and_codex_tools_are_functions() {
        let claude = tools(HarnessKind::ClaudeCode);
        assert_eq!(claude[0].builtin, Some(BuiltinTool::Bash));
        assert_eq!(claude[1].name, "str_replace_based_edit_tool");
        assert_eq!(claude[1].builtin, Some(BuiltinTool::TextEditor));
        let codex = tools(HarnessKind::Codex);
        assert_eq!(codex[0].name, "shell");
        assert_eq!(codex[1].name, "apply_patch");
        assert!(codex.iter().all(|t| t.builtin.is_none()));
    }
}
