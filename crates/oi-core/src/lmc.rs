//! Open Interpreter's LMC messages read into oi's conversation: how the
//! Python package's `interpreter.messages`, the HTTP server and
//! conversations Open Interpreter saved (`/load FILE`, `--resume FILE`)
//! become oi's history.

use base64::Engine as _;
use oi_protocol::{ContentPart, Message, ToolCall};
use serde_json::{Value, json};

/// What was wrong with the messages a caller gave.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MessageError {
    #[error("message {index}: {problem}")]
    Invalid { index: usize, problem: String },
    #[error("the conversation must end with the user's message, for the model to answer it")]
    NoUserMessage,
    #[error("`message` must be a string, an LMC message (an object) or a list of them, not {0}")]
    Shape(&'static str),
}

impl MessageError {
    pub fn hint(&self) -> &'static str {
        match self {
            Self::Invalid { .. } => {
                "an LMC message is {\"role\": \"user\"|\"assistant\"|\"computer\", \"type\": \"message\"|\"code\"|\"console\"|\"image\", \"format\": …, \"content\": …}"
            }
            Self::NoUserMessage => {
                "add {\"role\": \"user\", \"type\": \"message\", \"content\": \"…\"} at the end"
            }
            Self::Shape(_) => "pass the user's words as a string",
        }
    }
}

/// A message's `role` (`user` when missing).
pub fn role(message: &Value) -> &str {
    message
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or("user")
}

/// A text field of a message.
pub fn field<'a>(message: &'a Value, key: &str) -> Option<&'a str> {
    message.get(key).and_then(Value::as_str)
}

/// The error for message `index`.
pub fn invalid(index: usize, problem: impl Into<String>) -> MessageError {
    MessageError::Invalid {
        index,
        problem: problem.into(),
    }
}

/// The text content of a message.
pub fn text_of(index: usize, message: &Value) -> Result<String, MessageError> {
    match message.get("content") {
        Some(Value::String(text)) => Ok(text.clone()),
        None | Some(Value::Null) => Ok(String::new()),
        Some(other) => Ok(other.to_string()).and_then(|text| {
            if other.is_number() {
                Ok(text)
            } else {
                Err(invalid(index, "`content` must be text"))
            }
        }),
    }
}

/// An LMC image (`format` `base64.png`, `base64.jpeg` …, or `path`) as a
/// file on disk.
pub fn image_file(index: usize, message: &Value) -> Result<String, MessageError> {
    let format = field(message, "format").unwrap_or("");
    let content = text_of(index, message)?;
    if format == "path" {
        if !std::path::Path::new(&content).is_file() {
            return Err(invalid(index, format!("no image file at {content}")));
        }
        return Ok(content);
    }
    let Some(kind) = format.strip_prefix("base64.") else {
        return Err(invalid(
            index,
            format!(
                "an image's `format` is `path` or `base64.png` (`.jpeg`, `.gif`, `.webp`), not `{format}`"
            ),
        ));
    };
    let media_type = format!("image/{}", if kind == "jpg" { "jpeg" } else { kind });
    crate::attachments::save_base64_image(&content, &media_type)
        .map(|path| path.display().to_string())
        .map_err(|e| invalid(index, e.to_string()))
}

/// An LMC image as an image part of a message.
pub fn image_part(index: usize, message: &Value) -> Result<ContentPart, MessageError> {
    let path = image_file(index, message)?;
    let bytes = fs_err::read(&path).map_err(|e| invalid(index, e.to_string()))?;
    let media_type = match path.rsplit('.').next() {
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        _ => "image/png",
    };
    Ok(ContentPart::Image {
        media_type: media_type.to_owned(),
        data: base64::engine::general_purpose::STANDARD.encode(bytes),
    })
}

/// A conversation in LMC messages, in oi's form: code becomes a call of
/// the `execute` tool and the console output that follows it its result.
pub fn to_history(messages: &[Value]) -> Result<Vec<Message>, MessageError> {
    let mut history: Vec<Message> = Vec::new();
    // The call waiting for its result, and the result so far.
    let mut pending: Option<(String, Vec<ContentPart>)> = None;
    let flush = |history: &mut Vec<Message>, pending: &mut Option<(String, Vec<ContentPart>)>| {
        if let Some((call_id, mut content)) = pending.take() {
            if content.is_empty() {
                content.push(ContentPart::text("(the code ran and printed nothing)"));
            }
            history.push(Message::Tool { call_id, content });
        }
    };
    for (index, message) in messages.iter().enumerate() {
        if !message.is_object() {
            return Err(invalid(index, "an LMC message is a JSON object"));
        }
        let kind = field(message, "type").unwrap_or("message");
        match (role(message), kind) {
            ("user", "message") => {
                flush(&mut history, &mut pending);
                history.push(Message::user(text_of(index, message)?));
            }
            ("user", "image") => {
                flush(&mut history, &mut pending);
                history.push(Message::User {
                    content: vec![image_part(index, message)?],
                });
            }
            ("assistant", "message") => {
                flush(&mut history, &mut pending);
                history.push(Message::Assistant {
                    text: text_of(index, message)?,
                    tool_calls: Vec::new(),
                    reasoning: Vec::new(),
                });
            }
            ("assistant", "code") => {
                flush(&mut history, &mut pending);
                let language = field(message, "format").unwrap_or("python");
                let call_id = format!("call_lmc_{index}");
                let call = ToolCall {
                    id: call_id.clone(),
                    name: "execute".to_owned(),
                    arguments: json!({ "language": language, "code": text_of(index, message)? })
                        .to_string(),
                };
                // Text and calls of one reply share a message.
                match history.last_mut() {
                    Some(Message::Assistant { tool_calls, .. }) if tool_calls.is_empty() => {
                        tool_calls.push(call);
                    }
                    _ => history.push(Message::Assistant {
                        text: String::new(),
                        tool_calls: vec![call],
                        reasoning: Vec::new(),
                    }),
                }
                pending = Some((call_id, Vec::new()));
            }
            ("computer", "console") => {
                if field(message, "format") == Some("active_line") {
                    continue;
                }
                let text = text_of(index, message)?;
                match &mut pending {
                    Some((_, content)) => content.push(ContentPart::text(text)),
                    None => history.push(Message::user(format!("(Output:)\n{text}"))),
                }
            }
            ("computer", "image") => {
                let part = image_part(index, message)?;
                match &mut pending {
                    Some((_, content)) => content.push(part),
                    None => history.push(Message::User {
                        content: vec![part],
                    }),
                }
            }
            ("computer", "confirmation") => {}
            (role, kind) => {
                return Err(invalid(
                    index,
                    format!("oi does not know an LMC message of role `{role}` and type `{kind}`"),
                ));
            }
        }
    }
    flush(&mut history, &mut pending);
    Ok(history)
}

/// Which program saved a conversation file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SavedBy {
    /// oi's `/save`.
    Oi,
    /// Open Interpreter (0.4.3 and earlier): a JSON list of LMC messages.
    OpenInterpreter,
}

/// A conversation file read back: one oi saved (`/save`), or one Open
/// Interpreter saved (its JSON list of LMC messages). The error says what
/// was wrong, with the file's name.
pub fn read_conversation(path: &std::path::Path) -> Result<(Vec<Message>, SavedBy), String> {
    let name = path.display();
    let text = fs_err::read_to_string(path).map_err(|e| e.to_string())?;
    let value: Value =
        serde_json::from_str(&text).map_err(|e| format!("{name} is not JSON: {e}"))?;
    match value {
        Value::Array(list) => to_history(&list)
            .map(|messages| (messages, SavedBy::OpenInterpreter))
            .map_err(|e| format!("{name} is not a conversation Open Interpreter saved: {e}")),
        value @ Value::Object(_) => serde_json::from_value::<crate::agent::ConversationFile>(value)
            .map(|saved| (saved.messages, SavedBy::Oi))
            .map_err(|e| format!("{name} is not a conversation saved by oi: {e}")),
        _ => Err(format!(
            "{name} is not a conversation: oi reads its own saved conversations and Open Interpreter's lists of messages"
        )),
    }
}
