//! LMC messages given to oi: the user's input to a task, and a
//! conversation to restore, in oi's own form.

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

/// The user's part of a task: words, and images to show the model.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct UserTurn {
    pub text: String,
    /// Image files (base64 images are saved to files first).
    pub images: Vec<String>,
}

/// A chat request: the conversation to restore first (a list replaces the
/// conversation, as in Open Interpreter), then the user's turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatInput {
    pub restore: Option<Vec<Message>>,
    pub turn: UserTurn,
}

/// The words sent when the user sends nothing.
const EMPTY: &str = "(The user sent an empty message. Suggest what they could ask you to do.)";

/// Reads the `message` of `chat()`: a string, one LMC message, or a list
/// (which replaces the conversation, unless `append`: then it is the
/// user's new messages).
pub fn chat_input(message: &Value, append: bool) -> Result<ChatInput, MessageError> {
    match message {
        Value::String(text) => Ok(ChatInput {
            restore: None,
            turn: UserTurn {
                text: if text.is_empty() {
                    EMPTY.to_owned()
                } else {
                    text.clone()
                },
                images: Vec::new(),
            },
        }),
        Value::Object(_) => {
            let mut turn = UserTurn::default();
            add_to_turn(&mut turn, 0, message)?;
            Ok(ChatInput {
                restore: None,
                turn,
            })
        }
        Value::Array(list) if append => {
            if list.is_empty() {
                return Err(MessageError::NoUserMessage);
            }
            let mut turn = UserTurn::default();
            for (index, m) in list.iter().enumerate() {
                add_to_turn(&mut turn, index, m)?;
            }
            Ok(ChatInput {
                restore: None,
                turn,
            })
        }
        Value::Array(list) => {
            let first_user = list
                .iter()
                .rposition(|m| role(m) != "user")
                .map_or(0, |i| i + 1);
            if first_user == list.len() {
                return Err(MessageError::NoUserMessage);
            }
            let restore = to_history(&list[..first_user])?;
            let mut turn = UserTurn::default();
            for (index, m) in list.iter().enumerate().skip(first_user) {
                add_to_turn(&mut turn, index, m)?;
            }
            Ok(ChatInput {
                restore: Some(restore),
                turn,
            })
        }
        Value::Null => Err(MessageError::Shape("null")),
        Value::Bool(_) => Err(MessageError::Shape("a boolean")),
        Value::Number(_) => Err(MessageError::Shape("a number")),
    }
}

fn role(message: &Value) -> &str {
    message
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or("user")
}

fn field<'a>(message: &'a Value, key: &str) -> Option<&'a str> {
    message.get(key).and_then(Value::as_str)
}

fn invalid(index: usize, problem: impl Into<String>) -> MessageError {
    MessageError::Invalid {
        index,
        problem: problem.into(),
    }
}

/// The text content of a message.
fn text_of(index: usize, message: &Value) -> Result<String, MessageError> {
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
fn image_file(index: usize, message: &Value) -> Result<String, MessageError> {
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
    oi_core::attachments::save_base64_image(&content, &media_type)
        .map(|path| path.display().to_string())
        .map_err(|e| invalid(index, e.to_string()))
}

fn image_part(index: usize, message: &Value) -> Result<ContentPart, MessageError> {
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

fn add_to_turn(turn: &mut UserTurn, index: usize, message: &Value) -> Result<(), MessageError> {
    if !message.is_object() {
        return Err(invalid(index, "an LMC message is a JSON object"));
    }
    if role(message) != "user" {
        return Err(invalid(
            index,
            format!(
                "the new message must be the user's, not `{}`'s",
                role(message)
            ),
        ));
    }
    match field(message, "type").unwrap_or("message") {
        "message" => {
            let text = text_of(index, message)?;
            if !turn.text.is_empty() {
                turn.text.push_str("\n\n");
            }
            turn.text
                .push_str(if text.is_empty() { EMPTY } else { &text });
        }
        "image" => turn.images.push(image_file(index, message)?),
        "file" => {
            let path = text_of(index, message)?;
            if !turn.text.is_empty() {
                turn.text.push_str("\n\n");
            }
            turn.text
                .push_str(&format!("(The user gives you this file: {path})"));
        }
        other => {
            return Err(invalid(
                index,
                format!("the user's message `type` is `message`, `image` or `file`, not `{other}`"),
            ));
        }
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn chat_input_replacing(message: &Value) -> Result<ChatInput, MessageError> {
        chat_input(message, false)
    }

    #[test]
    fn an_appended_list_is_the_users_turn_and_keeps_the_conversation() {
        let input = chat_input(
            &json!([{"role": "user", "content": "one"}, {"role": "user", "content": "two"}]),
            true,
        )
        .unwrap();
        assert_eq!(input.restore, None);
        assert_eq!(input.turn.text, "one\n\ntwo");
        assert!(chat_input(&json!([{"role": "assistant", "content": "x"}]), true).is_err());
    }

    #[test]
    fn a_string_is_the_users_turn_and_an_empty_one_asks_for_a_suggestion() {
        let input = chat_input_replacing(&json!("count the files")).unwrap();
        assert_eq!(input.restore, None);
        assert_eq!(input.turn.text, "count the files");
        assert_eq!(chat_input_replacing(&json!("")).unwrap().turn.text, EMPTY);
        assert_eq!(
            chat_input_replacing(&json!(3)).unwrap_err(),
            MessageError::Shape("a number")
        );
    }

    #[test]
    fn a_list_restores_the_conversation_and_answers_its_last_user_messages() {
        let input = chat_input_replacing(&json!([
            {"role": "user", "type": "message", "content": "make x"},
            {"role": "assistant", "type": "message", "content": "Sure."},
            {"role": "assistant", "type": "code", "format": "python", "content": "x = 1"},
            {"role": "computer", "type": "console", "format": "active_line", "content": 1},
            {"role": "computer", "type": "console", "format": "output", "content": "ok"},
            {"role": "assistant", "type": "message", "content": "Done."},
            {"role": "user", "type": "message", "content": "now print x"},
            {"role": "user", "type": "message", "content": "please"},
        ]))
        .unwrap();
        assert_eq!(input.turn.text, "now print x\n\nplease");
        let history = input.restore.unwrap();
        assert_eq!(history.len(), 4, "{history:#?}");
        let Message::Assistant {
            text, tool_calls, ..
        } = &history[1]
        else {
            panic!("{history:#?}")
        };
        assert_eq!(text, "Sure.");
        assert_eq!(tool_calls[0].name, "execute");
        assert_eq!(
            serde_json::from_str::<Value>(&tool_calls[0].arguments).unwrap(),
            json!({"language": "python", "code": "x = 1"})
        );
        assert_eq!(
            history[2],
            Message::Tool {
                call_id: tool_calls[0].id.clone(),
                content: vec![ContentPart::text("ok")]
            }
        );
    }

    #[test]
    fn bad_messages_name_their_place() {
        assert_eq!(
            chat_input_replacing(&json!([{"role": "assistant", "content": "hi"}])).unwrap_err(),
            MessageError::NoUserMessage
        );
        let error = to_history(&[json!({"role": "user"}), json!({"role": "robot"})]).unwrap_err();
        assert!(
            error.to_string().starts_with("message 1:") && error.to_string().contains("`robot`"),
            "{error}"
        );
        let error = chat_input_replacing(
            &json!({"role": "user", "type": "image", "format": "base64.bmpx", "content": "!!"}),
        )
        .unwrap_err();
        assert!(error.to_string().contains("message 0"), "{error}");
    }

    #[test]
    fn code_without_output_still_gets_a_result() {
        let history = to_history(&[
            json!({"role": "user", "content": "go"}),
            json!({"role": "assistant", "type": "code", "format": "shell", "content": "true"}),
        ])
        .unwrap();
        assert!(
            matches!(&history[2], Message::Tool { content, .. } if content[0].as_text() == Some("(the code ran and printed nothing)"))
        );
    }
}
