//! MCP tools in a session: waiting for the servers before the first
//! request, one call of a tool (shown and approved like code, as language
//! `mcp`, checkpointed, its result sent back), the risks of code that calls
//! tools through the Python `mcp_tools` module, and that module's answers.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use oi_protocol::{Event, OutputStream, ReviewDecision, RunId, RunStatus, SkipReason};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Session;
use super::approval::must_ask;
use super::execute::Halt;
use crate::harness::{Harness, Report};
use crate::mcp::{McpTool, McpTools, kernel_reply};

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
        let tools = Arc::new(tools);
        let _ = self.mcp.set(Arc::clone(&tools));
        if !tools.is_empty() {
            self.set_mcp_tools(tools.tools().to_vec());
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
            let live: Vec<McpTool> = tools
                .tools()
                .iter()
                .filter(|t| !self.mcp_stopped.contains(&t.server))
                .cloned()
                .collect();
            self.set_mcp_tools(live);
        }
    }

    /// The harness again, with the MCP tools (the prompt and tool list
    /// change with it).
    fn set_mcp_tools(&mut self, tools: Vec<McpTool>) {
        self.harness = Harness::new(self.harness.kind())
            .with_os(self.config.os.as_ref().map(crate::config::OsMode::shown))
            .with_mcp(tools);
        self.system_prompt = self.harness.system_prompt(&self.env);
        self.tools = self.harness.tools(&self.languages);
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
        let Some(tools) = self.mcp_tools() else {
            return (
                report(format!("Error: there is no tool `{exposed}`.")),
                None,
            );
        };
        let Some(tool) = tools.by_exposed(exposed).cloned() else {
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
        let id = RunId(self.next_run_id);
        self.next_run_id += 1;
        let describe =
            |arguments: &Value| oi_protocol::mcp_call_text(&tool.server, &tool.name, arguments);
        let mut description = describe(&arguments);
        self.emit(Event::CodeProposed {
            id,
            language: MCP_LANGUAGE.to_owned(),
            code: description.clone(),
        });
        self.guard.proposed(MCP_LANGUAGE, &description);
        if let Some(reason) = skip_rest.as_ref() {
            self.emit(Event::RunSkipped {
                id,
                reason: reason.clone(),
            });
            return (
                report("Not done: an earlier step of this reply was not approved.".to_owned()),
                None,
            );
        }
        let risks = if tool.read_only {
            Vec::new()
        } else {
            vec![format!(
                "`{}.{}` is an MCP tool its server does not mark read-only: it may change things",
                tool.server, tool.name
            )]
        };
        if must_ask(self.config.approval, self.approve_all, !risks.is_empty()) {
            let decision = match self
                .ask(id, MCP_LANGUAGE, &description, risks.clone(), cancel)
                .await
            {
                Some(decision) => decision,
                None => {
                    return (
                        report("Not done: the user interrupted the task.".to_owned()),
                        Some(Halt::Interrupted),
                    );
                }
            };
            match decision {
                ReviewDecision::Approve | ReviewDecision::ApproveForSession => {}
                ReviewDecision::Edit { code } => {
                    // The user changed the arguments (the JSON after the
                    // tool's name).
                    let edited = code
                        .split_once(char::is_whitespace)
                        .map_or("", |(_, rest)| rest)
                        .trim();
                    match serde_json::from_str::<Value>(edited) {
                        Ok(value) if value.is_object() => {
                            arguments = value;
                            description = describe(&arguments);
                        }
                        _ => {
                            self.emit(Event::RunSkipped {
                                id,
                                reason: SkipReason::Declined,
                            });
                            *skip_rest = Some(SkipReason::Declined);
                            return (
                                report("Not done: the user's edit of the arguments was not a JSON object, so the call was not made.".to_owned()),
                                None,
                            );
                        }
                    }
                }
                ReviewDecision::Decline | ReviewDecision::NoApprover => {
                    let reason = if decision == ReviewDecision::Decline {
                        SkipReason::Declined
                    } else {
                        SkipReason::NoApprover
                    };
                    self.emit(Event::RunSkipped {
                        id,
                        reason: reason.clone(),
                    });
                    let text = if reason == SkipReason::Declined {
                        "The user declined this tool call.".to_owned()
                    } else {
                        format!(
                            "Not done: {} needs the user's approval, which cannot be asked for in this session. The user can allow it with `--yes` or approval = \"never\".",
                            risks.first().map_or("this call", String::as_str)
                        )
                    };
                    *skip_rest = Some(reason);
                    return (report(text), None);
                }
            }
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
