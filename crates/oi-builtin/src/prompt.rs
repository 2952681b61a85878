//! A request as the chat messages the model's template is applied to.

use oi_protocol::{ContentPart, Message};
use oi_providers::ModelRequest;

/// `(role, content)` pairs: the system prompt, then the conversation.
/// Images are named, not shown (the engine reads text); tool calls and
/// results, from a session begun with another model, become text.
pub(crate) fn chat_messages(request: &ModelRequest) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if !request.system.trim().is_empty() {
        out.push(("system".to_owned(), request.system.clone()));
    }
    for message in &request.messages {
        let (role, content) = match message {
            Message::User { content } => ("user", text_of(content)),
            Message::Assistant {
                text, tool_calls, ..
            } => {
                let mut content = text.clone();
                for call in tool_calls {
                    if !content.is_empty() {
                        content.push_str("\n\n");
                    }
                    content.push_str(&format!("```{}\n{}\n```", call.name, call.arguments));
                }
                ("assistant", content)
            }
            Message::Tool { content, .. } => ("user", text_of(content)),
        };
        // Two messages of one role in a row read as one to the model.
        match out.last_mut() {
            Some((last, text)) if last == role && role != "system" => {
                text.push_str("\n\n");
                text.push_str(&content);
            }
            _ => out.push((role.to_owned(), content)),
        }
    }
    out
}

fn text_of(parts: &[ContentPart]) -> String {
    parts
        .iter()
        .map(|p| match p {
            ContentPart::Text { text } => text.clone(),
            ContentPart::Image { media_type, .. } => format!("[an image ({media_type}) not shown]"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use oi_protocol::ToolCall;

    #[test]
    fn messages_become_role_and_text() {
        let request = ModelRequest {
            model: "m".into(),
            system: "be brief".into(),
            messages: vec![
                Message::user("hi"),
                Message::Assistant {
                    text: "running".into(),
                    tool_calls: vec![ToolCall {
                        id: "1".into(),
                        name: "python".into(),
                        arguments: "print(1)".into(),
                    }],
                    reasoning: vec![],
                },
                Message::tool("1", "1"),
                Message::User {
                    content: vec![ContentPart::Image {
                        media_type: "image/png".into(),
                        data: "AA".into(),
                    }],
                },
            ],
            tools: vec![],
            max_tokens: None,
            temperature: None,
            cache_key: None,
            form: None,
        };
        let chat = chat_messages(&request);
        assert_eq!(chat.len(), 4);
        assert_eq!(chat[0], ("system".into(), "be brief".into()));
        assert_eq!(chat[2].1, "running\n\n```python\nprint(1)\n```");
        assert_eq!(
            chat[3],
            (
                "user".into(),
                "1\n\n[an image (image/png) not shown]".into()
            )
        );
    }
}
