//! The conversation as the agent keeps it, independent of any wire format.

use serde::{Deserialize, Serialize};

/// One entry of the conversation history.
///
/// The history holds no system prompt: the harness supplies it per request, so a
/// change of harness or instructions never rewrites what was said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// Something the user said, or (in the markdown harness) the output of the
    /// code the model proposed, which reaches the model as a user message.
    User { content: Vec<ContentPart> },
    /// A reply of the model: its text and the tool calls it made.
    Assistant {
        #[serde(default, skip_serializing_if = "String::is_empty")]
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
        /// Opaque items the provider wants back on later requests (OpenAI
        /// reasoning items, Anthropic thinking blocks), kept as the wire sent
        /// them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        reasoning: Vec<serde_json::Value>,
    },
    /// The result of one tool call, answering the call with the same id.
    Tool {
        call_id: String,
        content: Vec<ContentPart>,
    },
}

impl Message {
    /// A user message holding one text part.
    pub fn user(text: impl Into<String>) -> Self {
        Self::User {
            content: vec![ContentPart::text(text)],
        }
    }

    /// A tool result holding one text part.
    pub fn tool(call_id: impl Into<String>, text: impl Into<String>) -> Self {
        Self::Tool {
            call_id: call_id.into(),
            content: vec![ContentPart::text(text)],
        }
    }
}

/// A piece of message content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentPart {
    Text {
        text: String,
    },
    /// An image, e.g. a plot a run produced, for models that read images.
    Image {
        /// `image/png`, `image/jpeg` …
        media_type: String,
        /// The image bytes, base64-encoded.
        data: String,
    },
}

impl ContentPart {
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// The text of this part, if it is text.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text { text } => Some(text),
            Self::Image { .. } => None,
        }
    }

    /// A `data:` URL of this part, if it is an image.
    pub fn image_data_url(&self) -> Option<String> {
        match self {
            Self::Image { media_type, data } => Some(format!("data:{media_type};base64,{data}")),
            Self::Text { .. } => None,
        }
    }
}

/// A function call made by the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The id the model gave the call; results are sent back under it.
    pub id: String,
    pub name: String,
    /// The arguments exactly as the model produced them: a JSON text, which may
    /// be malformed, so the harness decides how to read it.
    pub arguments: String,
}

/// Tokens counted by the model server for one request, or summed over several.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Input tokens served from the provider's prompt cache (part of `input_tokens`).
    #[serde(default)]
    pub cached_input_tokens: u64,
    /// Input tokens written to the provider's prompt cache (part of
    /// `input_tokens`; Anthropic bills them apart).
    #[serde(default)]
    pub cache_write_input_tokens: u64,
    /// Output tokens the model spent reasoning (part of `output_tokens`),
    /// when the server says.
    #[serde(default)]
    pub reasoning_output_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, rhs: Self) {
        self.input_tokens += rhs.input_tokens;
        self.output_tokens += rhs.output_tokens;
        self.cached_input_tokens += rhs.cached_input_tokens;
        self.cache_write_input_tokens += rhs.cache_write_input_tokens;
        self.reasoning_output_tokens += rhs.reasoning_output_tokens;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn messages_have_a_stable_json_form() {
        let history = vec![
            Message::user("hi"),
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: "call_1".into(),
                    name: "execute".into(),
                    arguments: "{}".into(),
                }],
                reasoning: Vec::new(),
            },
            Message::tool("call_1", "42"),
        ];
        let json = serde_json::to_string(&history).unwrap();
        assert_eq!(
            json,
            r#"[{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","tool_calls":[{"id":"call_1","name":"execute","arguments":"{}"}]},{"role":"tool","call_id":"call_1","content":[{"type":"text","text":"42"}]}]"#
        );
        let back: Vec<Message> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, history);
    }

    #[test]
    fn usage_adds_up() {
        let mut total = Usage::default();
        total += Usage {
            input_tokens: 10,
            output_tokens: 2,
            cached_input_tokens: 4,
            cache_write_input_tokens: 0,
            reasoning_output_tokens: 1,
        };
        total += Usage {
            input_tokens: 5,
            output_tokens: 1,
            cached_input_tokens: 0,
            cache_write_input_tokens: 2,
            reasoning_output_tokens: 0,
        };
        assert_eq!(
            total,
            Usage {
                input_tokens: 15,
                output_tokens: 3,
                cached_input_tokens: 4,
                cache_write_input_tokens: 2,
                reasoning_output_tokens: 1,
            }
        );
    }
}
