//! How each API format streams a scripted reply, and shapes its errors —
//! event names, field names and orders as the real services send them.

use oi_protocol::WireApi;
use serde_json::{Value, json};

use crate::reply::{Completion, split_chars};

/// The API format a request came in on, by its path.
pub(crate) fn wire_of_path(path: &str) -> Option<WireApi> {
    match path {
        "/v1/chat/completions" => Some(WireApi::Chat),
        "/v1/responses" => Some(WireApi::Responses),
        "/v1/messages" => Some(WireApi::Messages),
        _ => None,
    }
}

/// The error body a wire sends with an HTTP error status.
pub(crate) fn error_body(wire: WireApi, status: u16, message: &str) -> String {
    match wire {
        WireApi::Messages => {
            let kind = match status {
                400 => "invalid_request_error",
                401 => "authentication_error",
                403 => "permission_error",
                404 => "not_found_error",
                413 => "request_too_large",
                429 => "rate_limit_error",
                529 => "overloaded_error",
                _ => "api_error",
            };
            json!({"type": "error", "error": {"type": kind, "message": message}}).to_string()
        }
        WireApi::Chat | WireApi::Responses => {
            let (kind, code) = match status {
                401 => ("invalid_request_error", json!("invalid_api_key")),
                404 => ("invalid_request_error", json!("model_not_found")),
                429 => ("requests", json!("rate_limit_exceeded")),
                s if s >= 500 => ("server_error", Value::Null),
                _ => ("invalid_request_error", Value::Null),
            };
            json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
                .to_string()
        }
    }
}

fn model_of(request: &Value) -> &str {
    request
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("mock-model")
}

/// Usage to report: the scripted one, else an estimate from sizes.
fn usage_of(c: &Completion, request: &Value) -> (u64, u64) {
    c.usage.unwrap_or_else(|| {
        let out_chars = c.text.len()
            + c.tool_calls
                .iter()
                .map(|t| t.arguments.len())
                .sum::<usize>();
        (
            (request.to_string().len() / 4) as u64,
            (out_chars / 4).max(1) as u64,
        )
    })
}

fn finish_of(c: &Completion) -> String {
    c.finish_reason.clone().unwrap_or_else(|| {
        if c.tool_calls.is_empty() {
            "stop".to_owned()
        } else {
            "tool_calls".to_owned()
        }
    })
}

/// Chat Completions: `data:` chunks (a role chunk, content chunks, tool call
/// chunks with id and name first then argument fragments, a finish chunk, the
/// usage chunk when asked for), then `data: [DONE]`.
pub(crate) fn chat_frames(
    c: &Completion,
    chunk: usize,
    send_done: bool,
    request: &Value,
    serial: u64,
) -> Vec<String> {
    let model = model_of(request);
    let include_usage = request
        .pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let id = format!("chatcmpl-mock{serial}");
    let created = 1_700_000_000u64 + serial;
    let make = |delta: Value, finish: Value| {
        let mut c = json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": "fp_mock",
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
            // OpenAI pads chunks with a random field unless asked not to;
            // clients must ignore fields they do not know.
            "obfuscation": "q3Rk",
        });
        if include_usage {
            c["usage"] = Value::Null;
        }
        c
    };
    let mut events = Vec::new();
    if let Some(thought) = &c.thought {
        events.push(make(
            json!({"role": "assistant", "content": null, "reasoning_content": ""}),
            Value::Null,
        ));
        for piece in split_chars(thought, chunk) {
            events.push(make(
                json!({"content": null, "reasoning_content": piece}),
                Value::Null,
            ));
        }
    }
    if c.tool_calls.is_empty() || !c.text.is_empty() {
        events.push(make(
            json!({"role": "assistant", "content": "", "refusal": null}),
            Value::Null,
        ));
        for piece in split_chars(&c.text, chunk) {
            events.push(make(json!({"content": piece}), Value::Null));
        }
    }
    for (index, call) in c.tool_calls.iter().enumerate() {
        let call_id = if call.id.is_empty() {
            format!("call_mock{serial}_{index}")
        } else {
            call.id.clone()
        };
        let mut first = json!({"tool_calls": [{
            "index": index,
            "id": call_id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }]});
        if index == 0 && c.text.is_empty() {
            first["role"] = json!("assistant");
            first["content"] = Value::Null;
            first["refusal"] = Value::Null;
        }
        events.push(make(first, Value::Null));
        for piece in split_chars(&call.arguments, chunk) {
            events.push(make(
                json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                Value::Null,
            ));
        }
    }
    events.push(make(json!({}), json!(finish_of(c))));
    if include_usage {
        let (input, output) = usage_of(c, request);
        events.push(json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": "fp_mock",
            "choices": [],
            "usage": {
                "prompt_tokens": input,
                "completion_tokens": output,
                "total_tokens": input + output,
                "prompt_tokens_details": {"cached_tokens": c.cache.0, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
            },
            "obfuscation": "x",
        }));
    }
    let mut frames: Vec<String> = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    if send_done {
        frames.push("data: [DONE]\n\n".to_owned());
    }
    frames
}

/// Chat Completions without streaming (`"stream": false`): one
/// `chat.completion` object.
pub(crate) fn chat_completion(c: &Completion, request: &Value, serial: u64) -> Value {
    let tool_calls: Vec<Value> = c
        .tool_calls
        .iter()
        .enumerate()
        .map(|(index, call)| {
            let id = if call.id.is_empty() {
                format!("call_mock{serial}_{index}")
            } else {
                call.id.clone()
            };
            json!({"id": id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}})
        })
        .collect();
    let mut message = json!({
        "role": "assistant",
        "content": if c.text.is_empty() { Value::Null } else { json!(c.text) },
        "refusal": null,
    });
    if !tool_calls.is_empty() {
        message["tool_calls"] = json!(tool_calls);
    }
    let (input, output) = usage_of(c, request);
    json!({
        "id": format!("chatcmpl-mock{serial}"),
        "object": "chat.completion",
        "created": 1_700_000_000u64 + serial,
        "model": model_of(request),
        "system_fingerprint": "fp_mock",
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_of(c)}],
        "usage": {"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output},
    })
}

fn named(event: &Value) -> String {
    let kind = event
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("message");
    format!("event: {kind}\ndata: {event}\n\n")
}

/// Responses: semantic events, each with `event:` and a `sequence_number`,
/// ending with `response.completed` (or `response.incomplete`); no `[DONE]`.
pub(crate) fn responses_frames(
    c: &Completion,
    chunk: usize,
    request: &Value,
    serial: u64,
) -> Vec<String> {
    let model = model_of(request);
    let id = format!("resp_mock{serial}");
    let shell = |status: &str, output: Value, usage: Value| {
        json!({
            "id": id,
            "object": "response",
            "created_at": 1_700_000_000u64 + serial,
            "status": status,
            "model": model,
            "output": output,
            "usage": usage,
            "error": null,
            "incomplete_details": null,
        })
    };
    let mut events = vec![
        json!({"type": "response.created", "response": shell("in_progress", json!([]), Value::Null)}),
        json!({"type": "response.in_progress", "response": shell("in_progress", json!([]), Value::Null)}),
    ];
    let mut output = Vec::new();
    if c.reasoning.is_some() || c.thought.is_some() {
        let index = output.len();
        let item_id = format!("rs_mock{serial}");
        events.push(json!({"type": "response.output_item.added", "output_index": index, "item": {"id": item_id, "type": "reasoning", "summary": []}}));
        let mut summary = Vec::new();
        if let Some(thought) = &c.thought {
            let part = |text: &str| json!({"type": "summary_text", "text": text});
            events.push(json!({"type": "response.reasoning_summary_part.added", "item_id": item_id, "output_index": index, "summary_index": 0, "part": part("")}));
            for piece in split_chars(thought, chunk) {
                events.push(json!({"type": "response.reasoning_summary_text.delta", "item_id": item_id, "output_index": index, "summary_index": 0, "delta": piece}));
            }
            events.push(json!({"type": "response.reasoning_summary_text.done", "item_id": item_id, "output_index": index, "summary_index": 0, "text": thought}));
            events.push(json!({"type": "response.reasoning_summary_part.done", "item_id": item_id, "output_index": index, "summary_index": 0, "part": part(thought)}));
            summary.push(part(thought));
        }
        let mut item = json!({"id": item_id, "type": "reasoning", "summary": summary});
        if let Some(secret) = &c.reasoning {
            item["encrypted_content"] = json!(secret);
        }
        events.push(
            json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        );
        output.push(item);
    }
    if !c.text.is_empty() || c.tool_calls.is_empty() {
        let index = output.len();
        let item_id = format!("msg_mock{serial}");
        events.push(json!({"type": "response.output_item.added", "output_index": index, "item": {"id": item_id, "type": "message", "status": "in_progress", "role": "assistant", "content": []}}));
        events.push(json!({"type": "response.content_part.added", "item_id": item_id, "output_index": index, "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}));
        for piece in split_chars(&c.text, chunk) {
            events.push(json!({"type": "response.output_text.delta", "item_id": item_id, "output_index": index, "content_index": 0, "delta": piece, "logprobs": []}));
        }
        events.push(json!({"type": "response.output_text.done", "item_id": item_id, "output_index": index, "content_index": 0, "text": c.text, "logprobs": []}));
        let part = json!({"type": "output_text", "text": c.text, "annotations": []});
        events.push(json!({"type": "response.content_part.done", "item_id": item_id, "output_index": index, "content_index": 0, "part": part}));
        let item = json!({"id": item_id, "type": "message", "status": "completed", "role": "assistant", "content": [part]});
        events.push(
            json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        );
        output.push(item);
    }
    for (n, call) in c.tool_calls.iter().enumerate() {
        let index = output.len();
        let item_id = format!("fc_mock{serial}_{n}");
        let call_id = if call.id.is_empty() {
            format!("call_mock{serial}_{n}")
        } else {
            call.id.clone()
        };
        events.push(json!({"type": "response.output_item.added", "output_index": index, "item": {"id": item_id, "type": "function_call", "status": "in_progress", "arguments": "", "call_id": call_id, "name": call.name}}));
        for piece in split_chars(&call.arguments, chunk) {
            events.push(json!({"type": "response.function_call_arguments.delta", "item_id": item_id, "output_index": index, "delta": piece}));
        }
        events.push(json!({"type": "response.function_call_arguments.done", "item_id": item_id, "output_index": index, "arguments": call.arguments}));
        let item = json!({"id": item_id, "type": "function_call", "status": "completed", "arguments": call.arguments, "call_id": call_id, "name": call.name});
        events.push(
            json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        );
        output.push(item);
    }
    let (input, out) = usage_of(c, request);
    let usage = json!({
        "input_tokens": input,
        "input_tokens_details": {"cached_tokens": c.cache.0},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input + out,
    });
    if finish_of(c) == "length" {
        let mut response = shell("incomplete", json!(output), usage);
        response["incomplete_details"] = json!({"reason": "max_output_tokens"});
        events.push(json!({"type": "response.incomplete", "response": response}));
    } else {
        events.push(json!({"type": "response.completed", "response": shell("completed", json!(output), usage)}));
    }
    events
        .into_iter()
        .enumerate()
        .map(|(seq, mut e)| {
            e["sequence_number"] = json!(seq);
            named(&e)
        })
        .collect()
}

/// Messages: `message_start`, content blocks (`content_block_start`, deltas,
/// `content_block_stop`) with a `ping` after the first, `message_delta` with
/// the stop reason and output tokens, then `message_stop`.
pub(crate) fn messages_frames(
    c: &Completion,
    chunk: usize,
    request: &Value,
    serial: u64,
) -> Vec<String> {
    let (input, out) = usage_of(c, request);
    let (read, write) = c.cache;
    let mut events = vec![json!({
        "type": "message_start",
        "message": {
            "id": format!("msg_mock{serial}"),
            "type": "message",
            "role": "assistant",
            "model": model_of(request),
            "content": [],
            "stop_reason": null,
            "stop_sequence": null,
            "usage": {
                "input_tokens": input.saturating_sub(read + write),
                "cache_creation_input_tokens": write,
                "cache_read_input_tokens": read,
                "output_tokens": 1,
            },
        },
    })];
    let mut index = 0;
    if c.reasoning.is_some() || c.thought.is_some() {
        let thought = c.thought.as_deref().unwrap_or("Thinking it over.");
        let signature = c.reasoning.as_deref().unwrap_or("sig-mock");
        events.push(json!({"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": ""}}));
        for piece in split_chars(thought, chunk) {
            events.push(json!({"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": piece}}));
        }
        events.push(json!({"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": signature}}));
        events.push(json!({"type": "content_block_stop", "index": index}));
        index += 1;
    }
    if !c.text.is_empty() || c.tool_calls.is_empty() {
        events.push(json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}));
        events.push(json!({"type": "ping"}));
        for piece in split_chars(&c.text, chunk) {
            events.push(json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}));
        }
        events.push(json!({"type": "content_block_stop", "index": index}));
        index += 1;
    }
    for (n, call) in c.tool_calls.iter().enumerate() {
        let id = if call.id.is_empty() {
            format!("toolu_mock{serial}_{n}")
        } else {
            call.id.clone()
        };
        events.push(json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": call.name, "input": {}}}));
        events.push(json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": ""}}));
        for piece in split_chars(&call.arguments, chunk) {
            events.push(json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}}));
        }
        events.push(json!({"type": "content_block_stop", "index": index}));
        index += 1;
    }
    let stop_reason = match finish_of(c).as_str() {
        "tool_calls" => "tool_use",
        "length" => "max_tokens",
        _ => "end_turn",
    };
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": out}}));
    events.push(json!({"type": "message_stop"}));
    events.iter().map(named).collect()
}
