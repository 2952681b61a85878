//! LMC messages given to oi: the user's input to a task, and a
//! conversation to restore, in oi's own form.

use oi_core::lmc::{field, image_file, invalid, role, text_of};
use oi_protocol::Message;
use serde_json::Value;

pub use oi_core::lmc::{MessageError, to_history};

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
#[cfg(test)]
mod tests {
    use super::*;
    use oi_protocol::ContentPart;
    use pretty_assertions::assert_eq;
    use serde_json::json;

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
