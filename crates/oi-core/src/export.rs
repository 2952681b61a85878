//! The conversation written for people: a Markdown document, or a Jupyter
//! notebook (nbformat 4) whose code cells are the runs with their outputs.

use oi_protocol::{ContentPart, ExportFormat, Message, ToolCall};
use serde_json::{Value, json};

/// One thing that happened, in order.
enum Item<'a> {
    User(String),
    Assistant(&'a str),
    Run {
        language: String,
        code: String,
        output: Vec<&'a ContentPart>,
    },
}

/// The conversation as `format`.
pub fn render(messages: &[Message], format: ExportFormat) -> String {
    let items = items(messages);
    match format {
        ExportFormat::Markdown => markdown(&items),
        ExportFormat::Jupyter => {
            serde_json::to_string_pretty(&notebook(&items)).unwrap_or_default() + "\n"
        }
    }
}

fn items(messages: &[Message]) -> Vec<Item<'_>> {
    let mut items: Vec<Item<'_>> = Vec::new();
    // A call's place in `items`, to put its output there.
    let mut calls: Vec<(&str, usize)> = Vec::new();
    for message in messages {
        match message {
            Message::User { content } => {
                let text: Vec<&str> = content.iter().filter_map(ContentPart::as_text).collect();
                let images = content
                    .iter()
                    .filter(|p| matches!(p, ContentPart::Image { .. }))
                    .count();
                let mut text = text.join("\n\n");
                if images > 0 {
                    text.push_str(&format!(
                        "{}({images} image{})",
                        if text.is_empty() { "" } else { "\n\n" },
                        if images == 1 { "" } else { "s" }
                    ));
                }
                items.push(Item::User(text));
            }
            Message::Assistant {
                text, tool_calls, ..
            } => {
                if !text.trim().is_empty() {
                    items.push(Item::Assistant(text));
                }
                for call in tool_calls {
                    let (language, code) = code_of(call);
                    calls.push((&call.id, items.len()));
                    items.push(Item::Run {
                        language,
                        code,
                        output: Vec::new(),
                    });
                }
            }
            Message::Tool { call_id, content } => {
                if let Some((_, at)) = calls.iter().find(|(id, _)| id == call_id)
                    && let Some(Item::Run { output, .. }) = items.get_mut(*at)
                {
                    output.extend(content.iter());
                }
            }
        }
    }
    items
}

/// The language and code of a call: `execute`'s own, a shell command of
/// the other harnesses, or the tool's name and arguments.
fn code_of(call: &ToolCall) -> (String, String) {
    let arguments: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
    let text = |key: &str| {
        arguments
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    if let Some(code) = text("code") {
        return (
            text("language").unwrap_or_else(|| "python".to_owned()),
            code,
        );
    }
    match arguments.get("command") {
        Some(Value::String(command)) => return ("shell".to_owned(), command.clone()),
        Some(Value::Array(words)) => {
            let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
            // `["bash", "-lc", "script"]` is the script.
            let command = match words.as_slice() {
                [shell, flag, script] if shell.ends_with("sh") && flag.starts_with('-') => {
                    (*script).to_owned()
                }
                _ => words.join(" "),
            };
            return ("shell".to_owned(), command);
        }
        _ => {}
    }
    if let Some(patch) = text("input").or_else(|| text("patch")) {
        return ("diff".to_owned(), patch);
    }
    let pretty =
        serde_json::to_string_pretty(&arguments).unwrap_or_else(|_| call.arguments.clone());
    (format!("{} (tool)", call.name), pretty)
}

/// A fence longer than any run of backticks in `text`.
fn fence(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

fn markdown(items: &[Item<'_>]) -> String {
    let mut out = String::from("# oi session\n");
    for item in items {
        out.push('\n');
        match item {
            Item::User(text) => {
                for line in text.lines() {
                    out.push_str(&format!("> {line}\n"));
                }
            }
            Item::Assistant(text) => {
                out.push_str(text.trim_end());
                out.push('\n');
            }
            Item::Run {
                language,
                code,
                output,
            } => {
                let tag = language.split_whitespace().next().unwrap_or("");
                let f = fence(code);
                out.push_str(&format!("{f}{tag}\n{}\n{f}\n", code.trim_end()));
                let text: Vec<&str> = output.iter().filter_map(|p| p.as_text()).collect();
                let text = text.join("\n");
                if !text.trim().is_empty() {
                    let f = fence(&text);
                    out.push_str(&format!("\nOutput:\n\n{f}text\n{}\n{f}\n", text.trim_end()));
                }
                for part in output {
                    if let ContentPart::Image { media_type, data } = part {
                        out.push_str(&format!("\n![output](data:{media_type};base64,{data})\n"));
                    }
                }
            }
        }
    }
    out
}

/// Lines as a notebook keeps them: each with its line break but the last.
fn source(text: &str) -> Value {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    json!(lines)
}

fn markdown_cell(text: &str) -> Value {
    json!({ "cell_type": "markdown", "metadata": {}, "source": source(text) })
}

fn notebook(items: &[Item<'_>]) -> Value {
    let mut cells = Vec::new();
    let mut count = 0u64;
    for item in items {
        match item {
            Item::User(text) => {
                let quoted: Vec<String> = text.lines().map(|l| format!("> {l}")).collect();
                cells.push(markdown_cell(&format!("**You:**\n\n{}", quoted.join("\n"))));
            }
            Item::Assistant(text) => cells.push(markdown_cell(text.trim_end())),
            Item::Run {
                language,
                code,
                output,
            } => {
                count += 1;
                // Other languages run through IPython's cell magics.
                let code = match language.as_str() {
                    "python" => code.trim_end().to_owned(),
                    "shell" | "bash" | "sh" => format!("%%bash\n{}", code.trim_end()),
                    other if !other.contains(' ') => format!("%%{other}\n{}", code.trim_end()),
                    other => format!("# {other}\n{}", code.trim_end()),
                };
                let mut outputs = Vec::new();
                let text: Vec<&str> = output.iter().filter_map(|p| p.as_text()).collect();
                let text = text.join("\n");
                if !text.is_empty() {
                    outputs.push(json!({
                        "output_type": "stream",
                        "name": "stdout",
                        "text": source(&text),
                    }));
                }
                for part in output {
                    if let ContentPart::Image { media_type, data } = part {
                        outputs.push(json!({
                            "output_type": "display_data",
                            "data": { media_type.as_str(): data },
                            "metadata": {},
                        }));
                    }
                }
                cells.push(json!({
                    "cell_type": "code",
                    "execution_count": count,
                    "metadata": {},
                    "source": source(&code),
                    "outputs": outputs,
                }));
            }
        }
    }
    json!({
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {
            "kernelspec": { "name": "python3", "display_name": "Python 3", "language": "python" },
            "language_info": { "name": "python" },
        },
        "cells": cells.into_iter().enumerate().map(|(i, mut cell)| {
            cell["id"] = json!(format!("cell-{i}"));
            cell
        }).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn call(id: &str, arguments: Value) -> ToolCall {
        ToolCall {
            id: id.to_owned(),
            name: "execute".to_owned(),
            arguments: arguments.to_string(),
        }
    }

    fn conversation() -> Vec<Message> {
        vec![
            Message::user("count the files"),
            Message::Assistant {
                text: "Let me look.".to_owned(),
                tool_calls: vec![call(
                    "c1",
                    json!({"language": "python", "code": "print(3)"}),
                )],
                reasoning: Vec::new(),
            },
            Message::Tool {
                call_id: "c1".to_owned(),
                content: vec![
                    ContentPart::text("3\n"),
                    ContentPart::Image {
                        media_type: "image/png".to_owned(),
                        data: "iVBORw0KGgo=".to_owned(),
                    },
                ],
            },
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: "c2".to_owned(),
                    name: "shell".to_owned(),
                    arguments: json!({"command": ["bash", "-lc", "ls | wc -l"]}).to_string(),
                }],
                reasoning: Vec::new(),
            },
            Message::Tool {
                call_id: "c2".to_owned(),
                content: vec![ContentPart::text("3")],
            },
            Message::Assistant {
                text: "There are 3 files.".to_owned(),
                tool_calls: Vec::new(),
                reasoning: Vec::new(),
            },
        ]
    }

    #[test]
    fn markdown_has_the_words_the_code_and_the_outputs_in_order() {
        let text = render(&conversation(), ExportFormat::Markdown);
        assert_eq!(
            text,
            "# oi session\n\n> count the files\n\nLet me look.\n\n```python\nprint(3)\n```\n\nOutput:\n\n```text\n3\n```\n\n![output](data:image/png;base64,iVBORw0KGgo=)\n\n```shell\nls | wc -l\n```\n\nOutput:\n\n```text\n3\n```\n\nThere are 3 files.\n"
        );
    }

    #[test]
    fn a_notebook_has_a_code_cell_per_run_with_its_outputs() {
        let text = render(&conversation(), ExportFormat::Jupyter);
        let notebook: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(notebook["nbformat"], 4);
        let cells = notebook["cells"].as_array().unwrap();
        let kinds: Vec<&str> = cells
            .iter()
            .map(|c| c["cell_type"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["markdown", "markdown", "code", "code", "markdown"]);
        assert_eq!(cells[2]["source"], json!(["print(3)"]));
        assert_eq!(cells[2]["outputs"][0]["text"], json!(["3\n"]));
        assert_eq!(cells[2]["outputs"][1]["data"]["image/png"], "iVBORw0KGgo=");
        assert_eq!(cells[3]["source"], json!(["%%bash\n", "ls | wc -l"]));
        assert_eq!(cells[3]["execution_count"], 2);
    }

    #[test]
    fn a_fence_is_longer_than_the_backticks_inside() {
        assert_eq!(fence("plain"), "```");
        assert_eq!(fence("has ``` inside"), "````");
    }
}
