//! Recovering tool calls that a model printed as text instead of making them.
//!
//! Small local models often know they should call `execute` but write the call
//! into their reply: as a fenced `json` block, inside `<tool_call>` tags, or
//! as bare JSON. Read any of those as the call itself.

use std::ops::Range;

use serde_json::Value;

use super::fences::fenced_blocks;

/// A call found in the text of a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TextCall {
    pub call: Printed,
    /// Where the call (with its fence or tags) sits in the text.
    pub span: Range<usize>,
}

/// What a printed call asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Printed {
    /// Code to run. The language is the one the call names, if any (it may
    /// name the tool after the language instead: `{"name": "python", …}`).
    Run {
        language: Option<String>,
        code: String,
    },
    /// A call that cannot be run (an invented tool, arguments without code);
    /// the model is told why, so it can call `execute` properly.
    Unusable {
        name: String,
        arguments: String,
        problem: String,
    },
}

/// The calls printed in `text`, in order.
pub(crate) fn recover_calls(text: &str) -> Vec<TextCall> {
    let mut calls = Vec::new();
    let mut covered: Vec<Range<usize>> = Vec::new();

    // Fenced blocks: a `json` (or untagged, or `tool_call`) fence whose whole
    // content is a call. Other fences are code, never searched for JSON.
    for fence in fenced_blocks(text) {
        covered.push(fence.span.clone());
        if !matches!(
            fence.lang.as_str(),
            "json" | "" | "tool_call" | "jsonc" | "json5"
        ) {
            continue;
        }
        if let Some(found) = parse_value(fence.code.trim()).map(|v| calls_in_value(&v))
            && !found.is_empty()
        {
            calls.extend(found.into_iter().map(|call| TextCall {
                call,
                span: fence.span.clone(),
            }));
        }
    }

    // `<tool_call>{…}</tool_call>` (the Hermes/Qwen format) and bare JSON
    // objects, outside fences.
    let mut pos = 0;
    while let Some(offset) = text[pos..].find(['{', '[', '<']) {
        let start = pos + offset;
        if let Some(r) = covered.iter().find(|r| r.contains(&start)) {
            pos = r.end.max(start + 1);
            continue;
        }
        let (json_start, tagged) = if text[start..].starts_with("<tool_call>") {
            let inner = start + "<tool_call>".len();
            match text[inner..].find(['{', '[']) {
                Some(i) => (inner + i, true),
                None => {
                    pos = inner;
                    continue;
                }
            }
        } else if text[start..].starts_with('<') {
            pos = start + 1;
            continue;
        } else {
            (start, false)
        };
        let Some(json_end) = matching_close(text, json_start) else {
            pos = start + 1;
            continue;
        };
        let found = parse_value(&text[json_start..json_end])
            .map(|v| calls_in_value(&v))
            .unwrap_or_default();
        if found.is_empty() {
            pos = start + 1;
            continue;
        }
        let mut end = json_end;
        if tagged {
            let rest = &text[end..];
            let trimmed = rest.trim_start();
            if let Some(after) = trimmed.strip_prefix("</tool_call>") {
                end = text.len() - after.len();
            }
        }
        calls.extend(found.into_iter().map(|call| TextCall {
            call,
            span: start..end,
        }));
        pos = end;
    }
    calls.sort_by_key(|c| c.span.start);
    calls
}

/// Reads the arguments of a real tool call: `(language, code)`, leniently.
/// `tool_name` supplies the language when the model named the tool after it.
pub(crate) fn read_arguments(
    tool_name: &str,
    arguments: &str,
) -> Result<(Option<String>, String), String> {
    let value = parse_value(arguments.trim()).ok_or_else(|| {
        format!(
            "the arguments are not valid JSON: `{}`",
            shorten(arguments, 200)
        )
    })?;
    let value = match value {
        // Some models double-encode: the arguments are a JSON string of JSON.
        Value::String(inner) => parse_value(&inner).unwrap_or(Value::String(inner)),
        other => other,
    };
    let Some(object) = value.as_object() else {
        return Err(format!(
            "the arguments must be a JSON object with `language` and `code`, not `{}`",
            shorten(arguments, 200)
        ));
    };
    let code = ["code", "command", "script", "source", "cmd", "input"]
        .iter()
        .find_map(|k| object.get(*k).and_then(Value::as_str))
        .ok_or_else(|| "the arguments have no `code` string".to_owned())?;
    let language = ["language", "lang"]
        .iter()
        .find_map(|k| object.get(*k).and_then(Value::as_str))
        .map(str::to_owned)
        .or_else(|| language_from_tool_name(tool_name));
    Ok((language, code.to_owned()))
}

/// The calls a JSON value describes. Accepted shapes:
/// `{"name", "arguments"|"parameters"|"input"}`, `{"function": {…}}`,
/// `{"tool_calls": [...]}`, `{"language", "code"}`, and arrays of these.
fn calls_in_value(value: &Value) -> Vec<Printed> {
    match value {
        Value::Array(items) => items.iter().flat_map(calls_in_value).collect(),
        Value::Object(object) => {
            if let Some(list) = object.get("tool_calls") {
                return calls_in_value(list);
            }
            if let Some(function) = object.get("function").filter(|f| f.is_object()) {
                return calls_in_value(function);
            }
            let name = ["name", "tool", "tool_name", "function"]
                .iter()
                .find_map(|k| object.get(*k).and_then(Value::as_str));
            let arguments = ["arguments", "parameters", "args", "input"]
                .iter()
                .find_map(|k| object.get(*k));
            let arguments = match arguments {
                Some(Value::String(text)) => text.clone(),
                Some(args @ Value::Object(_)) => args.to_string(),
                Some(_) => return Vec::new(),
                // A bare `{"language": …, "code": …}`.
                None if object.get("code").is_some_and(Value::is_string) => value.to_string(),
                None => return Vec::new(),
            };
            // Without a tool name, only an object with code is a call.
            let name = match name {
                Some(name) => name,
                None if object.contains_key("code") => "",
                None => return Vec::new(),
            };
            vec![match read_arguments(name, &arguments) {
                Ok((language, code)) => Printed::Run { language, code },
                Err(problem) => Printed::Unusable {
                    name: name.to_owned(),
                    arguments,
                    problem,
                },
            }]
        }
        _ => Vec::new(),
    }
}

fn language_from_tool_name(name: &str) -> Option<String> {
    let name = name.to_ascii_lowercase();
    ["python", "shell", "bash", "sh", "javascript", "node"]
        .iter()
        .find(|l| {
            name == **l || name.starts_with(&format!("{l}_")) || name.ends_with(&format!("_{l}"))
        })
        .map(|l| (*l).to_owned())
}

/// Parses JSON, repairing the slip small models make most: raw newlines and
/// tabs inside strings (code spread over several lines).
fn parse_value(text: &str) -> Option<Value> {
    serde_json::from_str(text)
        .ok()
        .or_else(|| serde_json::from_str(&escape_raw_controls(text)).ok())
}

/// Escapes control characters that appear raw inside JSON strings.
fn escape_raw_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            } else if c == '\n' {
                out.push_str("\\n");
                continue;
            } else if c == '\r' {
                out.push_str("\\r");
                continue;
            } else if c == '\t' {
                out.push_str("\\t");
                continue;
            }
        } else if c == '"' {
            in_string = true;
        }
        out.push(c);
    }
    out
}

/// The end (exclusive) of the JSON object or array opening at `start`,
/// found by matching brackets outside strings.
fn matching_close(text: &str, start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text[start..].char_indices() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => depth += 1,
            '}' | ']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(start + i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn found(text: &str) -> Vec<(Option<String>, String)> {
        recover_calls(text)
            .into_iter()
            .filter_map(|c| match c.call {
                Printed::Run { language, code } => Some((language, code)),
                Printed::Unusable { .. } => None,
            })
            .collect()
    }

    fn py(code: &str) -> (Option<String>, String) {
        (Some("python".into()), code.into())
    }

    #[test]
    fn recovers_a_fenced_json_call() {
        let text = "I'll compute it.\n```json\n{\"name\": \"execute\", \"arguments\": {\"language\": \"python\", \"code\": \"print(2+2)\"}}\n```\n";
        assert_eq!(found(text), vec![py("print(2+2)")]);
        let call = &recover_calls(text)[0];
        assert_eq!(
            &text[call.span.clone()],
            "```json\n{\"name\": \"execute\", \"arguments\": {\"language\": \"python\", \"code\": \"print(2+2)\"}}\n```\n"
        );
    }

    #[test]
    fn recovers_bare_json_and_tool_call_tags() {
        assert_eq!(
            found(
                r#"{"name": "execute", "arguments": {"language": "python", "code": "print(1)"}}"#
            ),
            vec![py("print(1)")]
        );
        let text = "<tool_call>\n{\"name\": \"execute\", \"arguments\": {\"language\": \"shell\", \"code\": \"ls\"}}\n</tool_call>";
        let calls = recover_calls(text);
        assert_eq!(calls.len(), 1);
        assert!(matches!(&calls[0].call, Printed::Run { language: Some(l), .. } if l == "shell"));
        assert_eq!(calls[0].span, 0..text.len());
    }

    #[test]
    fn recovers_the_shapes_models_invent() {
        // Arguments as a JSON string, OpenAI's `function` wrapper, `parameters`.
        assert_eq!(
            found(r#"{"name":"execute","arguments":"{\"language\":\"python\",\"code\":\"x=1\"}"}"#),
            vec![py("x=1")]
        );
        assert_eq!(
            found(
                r#"{"type":"function","function":{"name":"execute","arguments":{"language":"python","code":"x=2"}}}"#
            ),
            vec![py("x=2")]
        );
        assert_eq!(
            found(r#"{"tool": "python", "parameters": {"code": "x=3"}}"#),
            vec![py("x=3")]
        );
        assert_eq!(
            found(r#"{"language": "python", "code": "x=4"}"#),
            vec![py("x=4")]
        );
        assert_eq!(
            found(
                r#"[{"name":"execute","arguments":{"language":"python","code":"a"}},{"name":"execute","arguments":{"language":"python","code":"b"}}]"#
            ),
            vec![py("a"), py("b")]
        );
    }

    #[test]
    fn repairs_raw_newlines_inside_strings() {
        let text = "{\"name\": \"execute\", \"arguments\": {\"language\": \"python\", \"code\": \"for i in range(3):\n\tprint(i)\"}}";
        assert_eq!(found(text), vec![py("for i in range(3):\n\tprint(i)")]);
    }

    #[test]
    fn ignores_json_that_is_not_a_call_and_code_fences() {
        assert!(found(r#"The result is {"total": 5, "items": [1, 2]}."#).is_empty());
        assert!(
            found("```python\nd = {\"language\": \"python\", \"code\": \"x\"}\n```").is_empty()
        );
        assert!(found("a { b [ c < d").is_empty());
    }

    #[test]
    fn invented_tools_and_calls_without_code_are_reported_not_dropped() {
        let text = "```json\n{\"name\": \"create_directory\", \"arguments\": {\"dir_name\": \"results\"}}\n```";
        let calls = recover_calls(text);
        assert_eq!(calls.len(), 1);
        assert_eq!(
            calls[0].call,
            Printed::Unusable {
                name: "create_directory".into(),
                arguments: r#"{"dir_name":"results"}"#.into(),
                problem: "the arguments have no `code` string".into(),
            }
        );
        let calls = recover_calls(r#"{"name": "execute", "arguments": {"language": "python"}}"#);
        assert!(matches!(&calls[0].call, Printed::Unusable { name, .. } if name == "execute"));
    }

    #[test]
    fn several_calls_keep_their_order() {
        let text = "First {\"language\":\"shell\",\"code\":\"ls\"} then\n```json\n{\"language\":\"python\",\"code\":\"1\"}\n```";
        assert_eq!(
            found(text),
            vec![(Some("shell".into()), "ls".into()), py("1")]
        );
    }

    #[test]
    fn reads_tool_arguments_leniently() {
        assert_eq!(
            read_arguments("execute", r#"{"language":"python","code":"1"}"#),
            Ok((Some("python".into()), "1".into()))
        );
        assert_eq!(
            read_arguments("bash", r#"{"command":"ls"}"#),
            Ok((Some("bash".into()), "ls".into()))
        );
        assert_eq!(
            read_arguments(
                "execute",
                "\"{\\\"lang\\\":\\\"py\\\",\\\"code\\\":\\\"2\\\"}\""
            ),
            Ok((Some("py".into()), "2".into()))
        );
        assert_eq!(
            read_arguments("execute", r#"{"code":"3"}"#),
            Ok((None, "3".into()))
        );
        assert!(
            read_arguments("execute", "{\"language\": \"python\", \"code\": ")
                .unwrap_err()
                .contains("not valid JSON")
        );
        assert!(
            read_arguments("execute", r#"{"language":"python"}"#)
                .unwrap_err()
                .contains("no `code`")
        );
        assert!(
            read_arguments("execute", "[1]")
                .unwrap_err()
                .contains("JSON object")
        );
    }
}
