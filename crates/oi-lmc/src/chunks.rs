//! The agent's events as LMC chunks: the stream Open Interpreter's
//! `chat(stream=True)` yields and its server sends.
//!
//! A message arrives as a start flag (`{"role", "type", "format"?,
//! "start": true}`), its content in pieces (the same keys and `content`),
//! and an end flag. Console flags carry no `format`, so a console block may
//! hold both output and other formats. A confirmation chunk stands alone.

use base64::Engine as _;
use oi_protocol::{Event, RunStatus, SkipReason, StopReason};
use serde_json::{Value, json};

/// The role, type and format a run of chunks shares.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Block {
    role: &'static str,
    kind: &'static str,
    format: Option<String>,
}

impl Block {
    fn flag(&self, which: &str) -> Value {
        let mut flag = json!({ "role": self.role, "type": self.kind, which: true });
        if let Some(format) = &self.format {
            flag["format"] = json!(format);
        }
        flag
    }
}

/// Turns events into chunks, keeping track of the open block.
#[derive(Debug, Default)]
pub struct Chunker {
    open: Option<Block>,
    /// The current reply's text came as deltas (so its final
    /// `assistant_message` adds nothing).
    streamed: bool,
}

/// A line of the stream that is not conversation: `{"role": "server",
/// "type": …, "content": …}`.
pub fn server(kind: &str, content: impl Into<Value>) -> Value {
    json!({ "role": "server", "type": kind, "content": content.into() })
}

/// The end of an answer to a request.
pub fn complete() -> Value {
    server("status", "complete")
}

/// An error, with how to fix it when known.
pub fn error(message: impl Into<String>, hint: Option<String>) -> Value {
    let mut line = server("error", message.into());
    if let Some(hint) = hint {
        line["hint"] = json!(hint);
    }
    line
}

/// An error about the request itself (not the task): it carries
/// `"request": true`, so a server can answer it with a 4xx.
pub fn refusal(message: impl Into<String>, hint: Option<String>) -> Value {
    let mut line = error(message, hint);
    line["request"] = json!(true);
    line
}

/// LMC messages from chunks (flags dropped, a block's content joined).
pub fn merge(chunks: &[Value]) -> Vec<Value> {
    let mut messages: Vec<Value> = Vec::new();
    let mut open = false;
    for chunk in chunks {
        if chunk.get("start").is_some() || chunk.get("end").is_some() {
            open = false;
            continue;
        }
        let Some(content) = chunk.get("content") else {
            continue;
        };
        let same = |m: &Value| {
            m["role"] == chunk["role"]
                && m["type"] == chunk["type"]
                && m.get("format") == chunk.get("format")
        };
        if open
            && chunk["type"] != "image"
            && let Some(last) = messages.last_mut()
            && same(last)
            && let (Some(text), Some(more)) = (last["content"].as_str(), content.as_str())
        {
            last["content"] = json!(format!("{text}{more}"));
            continue;
        }
        let mut message =
            json!({ "role": chunk["role"], "type": chunk["type"], "content": content });
        if let Some(format) = chunk.get("format") {
            message["format"] = format.clone();
        }
        messages.push(message);
        open = true;
    }
    messages
}

impl Chunker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Closes the open block (its end flag), if any.
    pub fn close(&mut self) -> Vec<Value> {
        self.open
            .take()
            .map(|b| b.flag("end"))
            .into_iter()
            .collect()
    }

    fn content(
        &mut self,
        role: &'static str,
        kind: &'static str,
        format: Option<&str>,
        content: Value,
    ) -> Vec<Value> {
        let block = Block {
            role,
            kind,
            // Console flags carry no format.
            format: (kind != "console")
                .then(|| format.map(str::to_owned))
                .flatten(),
        };
        let mut out = Vec::new();
        if self.open.as_ref() != Some(&block) {
            out.extend(self.close());
            out.push(block.flag("start"));
            self.open = Some(block);
        }
        let mut chunk = json!({ "role": role, "type": kind, "content": content });
        if let Some(format) = format {
            chunk["format"] = json!(format);
        }
        out.push(chunk);
        out
    }

    fn console(&mut self, text: impl Into<String>) -> Vec<Value> {
        self.content("computer", "console", Some("output"), json!(text.into()))
    }

    /// The chunks (and server lines) an event makes.
    pub fn event(&mut self, event: &Event) -> Vec<Value> {
        match event {
            Event::ModelRequest { .. } => {
                self.streamed = false;
                Vec::new()
            }
            Event::TextDelta { delta } => {
                self.streamed = true;
                self.content("assistant", "message", None, json!(delta))
            }
            Event::ReplyRestarted => {
                self.streamed = false;
                let mut out = self.close();
                out.push(server(
                    "warning",
                    "the connection to the model broke and its reply started over: the text since the last request is void",
                ));
                out
            }
            Event::AssistantMessage { text } => {
                let streamed = std::mem::take(&mut self.streamed);
                if streamed || text.is_empty() {
                    Vec::new()
                } else {
                    self.content("assistant", "message", None, json!(text))
                }
            }
            Event::CodeProposed { language, code, .. } => {
                self.content("assistant", "code", Some(language), json!(code))
            }
            Event::ApprovalRequested {
                id,
                language,
                code,
                risks,
            } => {
                let mut out = self.close();
                let mut chunk = json!({
                    "role": "computer",
                    "type": "confirmation",
                    "format": "execution",
                    "content": { "type": "code", "format": language, "content": code },
                    "id": id.0,
                });
                if !risks.is_empty() {
                    chunk["risks"] = json!(risks);
                }
                out.push(chunk);
                out
            }
            Event::OutputDelta { text, .. } => self.console(text.clone()),
            Event::OutputSkipped { bytes, .. } => {
                self.console(format!("\n[… {bytes} bytes of output not shown …]\n"))
            }
            Event::Image {
                path, media_type, ..
            } => match fs_err::read(path) {
                Ok(bytes) => {
                    let format = format!(
                        "base64.{}",
                        oi_core::attachments::image_extension(media_type).unwrap_or("png")
                    );
                    let data = base64::engine::general_purpose::STANDARD.encode(bytes);
                    self.content("computer", "image", Some(&format), json!(data))
                }
                Err(e) => self.console(format!(
                    "\n[an image the run made could not be read: {e}]\n"
                )),
            },
            Event::SandboxDenied { message, hint, .. } => {
                self.console(format!("\n[sandbox: {message}; {hint}]\n"))
            }
            Event::RunFinished { status, .. } => match status {
                RunStatus::Ok | RunStatus::Failed { .. } => Vec::new(),
                RunStatus::Crashed { reason } => {
                    self.console(format!("\n[the kernel crashed: {reason}]\n"))
                }
                RunStatus::Interrupted => self.console("\n[interrupted]\n"),
                RunStatus::TimedOut { seconds, .. } => self.console(format!(
                    "\n[stopped after {seconds} s, the run time limit]\n"
                )),
                RunStatus::WaitingForInput { prompt } => self.console(format!(
                    "\n[stopped: the program waited for input nobody can give ({prompt})]\n"
                )),
            },
            Event::RunSkipped { reason, .. } => self.console(match reason {
                SkipReason::Declined => "[not run: declined]\n".to_owned(),
                SkipReason::NoApprover => {
                    "[not run: it needed approval and nobody could give it]\n".to_owned()
                }
                SkipReason::Unavailable { message } => format!("[not run: {message}]\n"),
            }),
            Event::Warning { message } => vec![server("warning", message.clone())],
            Event::Error { message, hint } => {
                let mut out = self.close();
                out.push(error(message.clone(), hint.clone()));
                out
            }
            Event::TaskComplete { reason, .. } => {
                let mut out = self.close();
                if !matches!(
                    reason,
                    StopReason::Done | StopReason::Failed | StopReason::Interrupted
                ) && let Some(text) = oi_codex::stop_message(reason)
                {
                    out.push(server("warning", text));
                }
                out
            }
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oi_protocol::{OutputStream, RunId};
    use pretty_assertions::assert_eq;

    fn all(events: &[Event]) -> Vec<Value> {
        let mut chunker = Chunker::new();
        let mut out: Vec<Value> = events.iter().flat_map(|e| chunker.event(e)).collect();
        out.extend(chunker.close());
        out
    }

    #[test]
    fn chunks_merge_into_messages() {
        let chunks = vec![
            json!({"role": "assistant", "type": "message", "start": true}),
            json!({"role": "assistant", "type": "message", "content": "He"}),
            json!({"role": "assistant", "type": "message", "content": "llo"}),
            json!({"role": "assistant", "type": "message", "end": true}),
            json!({"role": "computer", "type": "console", "start": true}),
            json!({"role": "computer", "type": "console", "format": "output", "content": "1\n"}),
            json!({"role": "computer", "type": "console", "format": "output", "content": "2\n"}),
            json!({"role": "computer", "type": "console", "end": true}),
        ];
        assert_eq!(
            merge(&chunks),
            vec![
                json!({"role": "assistant", "type": "message", "content": "Hello"}),
                json!({"role": "computer", "type": "console", "format": "output", "content": "1\n2\n"}),
            ]
        );
    }

    #[test]
    fn a_reply_with_code_and_output_becomes_flagged_blocks() {
        let chunks = all(&[
            Event::ModelRequest { turn: 1 },
            Event::TextDelta {
                delta: "Let me ".into(),
            },
            Event::TextDelta {
                delta: "look.".into(),
            },
            Event::AssistantMessage {
                text: "Let me look.".into(),
            },
            Event::CodeProposed {
                id: RunId(1),
                language: "python".into(),
                code: "print(1)".into(),
            },
            Event::OutputDelta {
                id: RunId(1),
                stream: OutputStream::Stdout,
                text: "1\n".into(),
            },
            Event::OutputDelta {
                id: RunId(1),
                stream: OutputStream::Stderr,
                text: "warn\n".into(),
            },
            Event::ModelRequest { turn: 2 },
            Event::AssistantMessage {
                text: "It printed 1.".into(),
            },
        ]);
        assert_eq!(
            chunks,
            vec![
                json!({"role": "assistant", "type": "message", "start": true}),
                json!({"role": "assistant", "type": "message", "content": "Let me "}),
                json!({"role": "assistant", "type": "message", "content": "look."}),
                json!({"role": "assistant", "type": "message", "end": true}),
                json!({"role": "assistant", "type": "code", "format": "python", "start": true}),
                json!({"role": "assistant", "type": "code", "format": "python", "content": "print(1)"}),
                json!({"role": "assistant", "type": "code", "format": "python", "end": true}),
                json!({"role": "computer", "type": "console", "start": true}),
                json!({"role": "computer", "type": "console", "format": "output", "content": "1\n"}),
                json!({"role": "computer", "type": "console", "format": "output", "content": "warn\n"}),
                json!({"role": "computer", "type": "console", "end": true}),
                json!({"role": "assistant", "type": "message", "start": true}),
                json!({"role": "assistant", "type": "message", "content": "It printed 1."}),
                json!({"role": "assistant", "type": "message", "end": true}),
            ]
        );
    }

    #[test]
    fn a_confirmation_stands_alone_and_a_declined_run_says_so() {
        let chunks = all(&[
            Event::CodeProposed {
                id: RunId(3),
                language: "shell".into(),
                code: "rm -rf build".into(),
            },
            Event::ApprovalRequested {
                id: RunId(3),
                language: "shell".into(),
                code: "rm -rf build".into(),
                risks: vec!["deletes files".into()],
            },
            Event::RunSkipped {
                id: RunId(3),
                reason: SkipReason::Declined,
            },
            Event::Error {
                message: "the model server refused".into(),
                hint: Some("check the key".into()),
            },
        ]);
        assert_eq!(
            chunks[3],
            json!({
                "role": "computer", "type": "confirmation", "format": "execution",
                "content": {"type": "code", "format": "shell", "content": "rm -rf build"},
                "id": 3, "risks": ["deletes files"],
            })
        );
        assert_eq!(chunks[2]["end"], true, "the code block closed first");
        assert_eq!(chunks[5]["content"], "[not run: declined]\n");
        assert_eq!(chunks[6]["end"], true);
        assert_eq!(
            chunks[7],
            json!({"role": "server", "type": "error", "content": "the model server refused", "hint": "check the key"})
        );
    }

    #[test]
    fn images_travel_as_base64_and_limits_as_warnings() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plot.png");
        fs_err::write(&path, b"\x89PNG").unwrap();
        let chunks = all(&[
            Event::Image {
                id: RunId(1),
                path: path.display().to_string(),
                media_type: "image/png".into(),
            },
            Event::TaskComplete {
                reason: StopReason::MaxTurns { limit: 4 },
                final_message: None,
            },
        ]);
        assert_eq!(
            chunks[1],
            json!({"role": "computer", "type": "image", "format": "base64.png", "content": "iVBORw=="})
        );
        assert_eq!(chunks[3]["role"], "server");
        assert!(chunks[3]["content"].as_str().unwrap().contains("max_turns"));
    }
}
