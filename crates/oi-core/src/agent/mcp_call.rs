//! MCP tools in a session: waiting for the servers before the first
//! request, one call of a tool (shown and approved like code, as language
//! `mcp`, checkpointed, its result sent back), the risks of code that calls
//! tools through the Python `mcp_tools` module, and that module's answers.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use oi_protocol::{Event, OutputStream, RunStatus, SkipReason};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Session;
use super::approval::Gate;
use super::execute::Halt;
use crate::harness::Report;
use crate::mcp::{McpTools, kernel_reply};

use oi_protocol::MCP_LANGUAGE;

/// The servers of a session, once started.
pub(super) type McpSlot = Arc<OnceLock<Arc<McpTools>>>;

/// Answers the Python kernel's `mcp_tools` module on a blocking thread.
pub(super) fn kernel_handler(
    slot: McpSlot,
    approved: Arc<std::sync::atomic::AtomicBool>,
    runtime: tokio::runtime::Handle,
) -> oi_kernels::ComputerHandler {
    Arc::new(move |request: Value, cancel: CancellationToken| {
        let Some(tools) = slot.get().cloned() else {
            return serde_json::json!({"ok": false, "error": "the MCP servers have not started yet"});
        };
        if request["list"].as_bool() == Some(true) {
            let list: Vec<Value> = tools
                .tools()
                .iter()
                .map(|t| serde_json::json!([t.server, t.name, t.description]))
                .collect();
            return serde_json::json!({"ok": true, "tools": list});
        }
        let server = request["server"].as_str().unwrap_or_default();
        let name = request["tool"].as_str().unwrap_or_default();
        let Some(tool) = tools.find(server, name).cloned() else {
            let known: Vec<String> = tools
                .tools()
                .iter()
                .map(|t| format!("{}.{}", t.server, t.name))
                .collect();
            return serde_json::json!({
                "ok": false,
                "error": format!("there is no MCP tool `{name}` on server `{server}`; the tools are: {}", known.join(", ")),
            });
        };
        // A tool that may change things, called by code that ran without
        // a person's approval (the gate only sees tools the code names
        // plainly): refused.
        if !tool.read_only && !approved.load(std::sync::atomic::Ordering::SeqCst) {
            return serde_json::json!({
                "ok": false,
                "error": format!(
                    "`{}.{}` is not marked read-only, so code may call it only when the user approves that code; call it by name (mcp_tools.{}.{}(…)) so that the user is asked",
                    tool.server, tool.name, tool.server.replace('-', "_"), tool.name.replace('-', "_")
                ),
            });
        }
        let arguments = request["arguments"].clone();
        let result = runtime.block_on(tools.call(&tool, arguments, &cancel));
        kernel_reply(result)
    })
}

impl Session {
    /// The MCP servers, once they have started.
    fn mcp_tools(&self) -> Option<Arc<McpTools>> {
        self.mcp.get().cloned()
    }

    /// Waits for the MCP servers (started with the session) before the
    /// first request of a task, reports those that failed, and offers the
    /// tools of the others to the model. An interrupt stops the wait (the
    /// servers go on starting).
    pub(super) async fn ensure_mcp(&mut self, cancel: &CancellationToken) -> bool {
        let Some(starting) = self.mcp_starting.as_mut() else {
            return true;
        };
        let started = tokio::select! {
            started = starting => started,
            () = cancel.cancelled() => return false,
        };
        self.mcp_starting = None;
        let (tools, failures) = match started {
            Ok(started) => started,
            Err(error) => (
                McpTools::default(),
                vec![format!("the MCP servers could not be started: {error}")],
            ),
        };
        for failure in failures {
            self.emit(Event::Warning {
                message: format!("{failure}; the session goes on without it"),
            });
        }
        let any = !tools.is_empty();
        let _ = self.mcp.set(Arc::new(tools));
        if any {
            self.rebuild_harness(self.harness.kind());
        }
        true
    }

    /// Before a request: a server that stopped since the last one is
    /// reported in one line, and its tools are no longer offered.
    pub(super) fn drop_stopped_mcp_servers(&mut self) {
        let Some(tools) = self.mcp_tools() else {
            return;
        };
        let mut changed = false;
        for (name, last_words) in tools.stopped() {
            if self.mcp_stopped.insert(name.clone()) {
                changed = true;
                self.emit(Event::Warning {
                    message: format!(
                        "MCP server `{name}` stopped{last_words}; the session goes on without it"
                    ),
                });
            }
        }
        if changed {
            self.rebuild_harness(self.harness.kind());
        }
    }

    /// The MCP tools code of the Python kernel would call that the server
    /// does not mark read-only, as risks for the approval gate.
    pub(super) fn mcp_code_risks(&self, language: &str, code: &str) -> Vec<String> {
        let Some(tools) = self.mcp_tools() else {
            return Vec::new();
        };
        if language != "python" || !code.contains("mcp_tools") {
            return Vec::new();
        }
        let loose = |s: &str| s.replace('-', "_");
        let mut risks: Vec<String> = tools
            .tools()
            .iter()
            .filter(|t| !t.read_only && code.contains(&format!(".{}(", loose(&t.name))))
            .map(|t| {
                format!(
                    "calls the MCP tool `{}.{}`, which its server does not mark read-only",
                    t.server, t.name
                )
            })
            .collect();
        if risks.is_empty() && code.contains(".call(") {
            risks.push(
                "calls MCP tools by name (`mcp_tools.call`), which may change things".to_owned(),
            );
        }
        risks
    }

    /// One call of an MCP tool, shown and approved like code.
    pub(super) async fn mcp_step(
        &mut self,
        call_id: String,
        exposed: &str,
        arguments: &str,
        skip_rest: &mut Option<SkipReason>,
        cancel: &CancellationToken,
    ) -> (Report, Option<Halt>) {
        let report = |text: String| Report {
            call_id: Some(call_id.clone()),
            language: MCP_LANGUAGE.to_owned(),
            text,
            images: Vec::new(),
        };
        let found = self
            .mcp_tools()
            .and_then(|tools| Some((tools.by_exposed(exposed)?.clone(), tools)));
        let Some((tool, tools)) = found else {
            return (
                report(format!("Error: there is no tool `{exposed}`.")),
                None,
            );
        };
        let mut arguments: Value = if arguments.trim().is_empty() {
            Value::Object(serde_json::Map::new())
        } else {
            match serde_json::from_str(arguments) {
                Ok(value) => value,
                Err(error) => {
                    return (
                        report(format!(
                            "Error: the call was not made because its arguments are not valid JSON ({error})."
                        )),
                        None,
                    );
                }
            }
        };
        let describe =
            |arguments: &Value| oi_protocol::mcp_call_text(&tool.server, &tool.name, arguments);
        let mut description = describe(&arguments);
        let id = self.propose(MCP_LANGUAGE, &description);
        self.guard.proposed(MCP_LANGUAGE, &description);
        let risks = if tool.read_only {
            Vec::new()
        } else {
            vec![format!(
                "`{}.{}` is an MCP tool its server does not mark read-only: it may change things",
                tool.server, tool.name
            )]
        };
        let gate = self
            .gate(
                id,
                MCP_LANGUAGE,
                &description,
                risks.clone(),
                skip_rest,
                cancel,
            )
            .await;
        let refused = match gate {
            Gate::Go { edited: None, .. } => None,
            Gate::Go {
                edited: Some(code), ..
            } => {
                // The user changed the arguments (the JSON after the tool's
                // name).
                let edited = code
                    .split_once(char::is_whitespace)
                    .map_or("", |(_, rest)| rest)
                    .trim();
                match serde_json::from_str::<Value>(edited) {
                    Ok(value) if value.is_object() => {
                        arguments = value;
                        description = describe(&arguments);
                        None
                    }
                    _ => {
                        self.skip(id, SkipReason::Declined, skip_rest);
                        Some("Not done: the user's edit of the arguments was not a JSON object, so the call was not made.".to_owned())
                    }
                }
            }
            Gate::AfterRefusal(_) => {
                Some("Not done: an earlier step of this reply was not approved.".to_owned())
            }
            Gate::Refused(SkipReason::NoApprover) => Some(match risks.first() {
                Some(risk) => format!(
                    "Not done: {risk}, so it needs the user's approval, which cannot be asked for in this session. Only `--dangerously-allow-all` lets such a tool run without asking."
                ),
                None => "Not done: the call needed the user's approval, which cannot be asked for in this session. The user can rerun with `--yes`.".to_owned(),
            }),
            Gate::Refused(_) => Some("The user declined this tool call.".to_owned()),
            Gate::Interrupted => {
                return (
                    report("Not done: the user interrupted the task.".to_owned()),
                    Some(Halt::Interrupted),
                );
            }
        };
        if let Some(text) = refused {
            return (report(text), None);
        }
        let before = self.checkpoint_before(id, &description).await;
        self.emit(Event::RunStarted {
            id,
            language: MCP_LANGUAGE.to_owned(),
            code: description,
        });
        let started = Instant::now();
        let result = tools.call(&tool, arguments, cancel).await;
        let (status, text, images) = match result {
            Ok(out) if out.is_error => (
                RunStatus::Failed {
                    exit_code: None,
                    error: Some(first_line(&out.text)),
                },
                format!("The tool reported an error:\n{}", out.text),
                out.images,
            ),
            Ok(out) => (RunStatus::Ok, out.text, out.images),
            Err(problem) if cancel.is_cancelled() => (
                RunStatus::Interrupted,
                format!("Stopped: {problem}."),
                Vec::new(),
            ),
            Err(problem) => (
                RunStatus::Failed {
                    exit_code: None,
                    error: Some(problem.clone()),
                },
                format!("Error: {problem}"),
                Vec::new(),
            ),
        };
        if !text.is_empty() {
            self.emit(Event::OutputDelta {
                id,
                stream: if status == RunStatus::Ok {
                    OutputStream::Stdout
                } else {
                    OutputStream::Stderr
                },
                text: format!("{}\n", text.trim_end()),
            });
        }
        self.guard.ran(&status, &text);
        let interrupted = status == RunStatus::Interrupted;
        self.emit(Event::RunFinished {
            id,
            status,
            duration_ms: started.elapsed().as_millis() as u64,
            output_bytes: text.len() as u64,
        });
        if let Some(before) = &before {
            self.report_changes(id, before).await;
        }
        // Long results are cut to their head and tail, like a run's output.
        let mut kept = crate::output::HeadTail::new(self.config.max_output);
        kept.push(&text);
        let text = kept.render();
        let images = if self.config.vision {
            images
        } else {
            Vec::new()
        };
        (
            Report {
                images,
                ..report(text)
            },
            interrupted.then_some(Halt::Interrupted),
        )
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").trim().to_owned()
}
