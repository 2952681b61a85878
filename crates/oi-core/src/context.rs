//! Keeping a conversation within the model's context window.
//!
//! Before each request the agent estimates its size. When it would not
//! leave room for the reply, the conversation is made smaller in two
//! steps, each only if the one before was not enough:
//!
//! 1. old run outputs are cut to their head and tail (the newest turns
//!    keep theirs whole);
//! 2. the older turns are replaced by a summary the model writes, keeping
//!    the system prompt, the current task and the last turns.
//!
//! The functions here are the pure parts; the agent does the asking.

use oi_protocol::{ContentPart, Message};
use oi_providers::ModelRequest;

/// Used when neither the configuration, the server nor the catalog knows
/// the model's context window.
pub const DEFAULT_CONTEXT_WINDOW: u32 = 8192;

/// Messages at the end that keep their outputs whole and are never
/// summarized.
pub const KEEP_RECENT: usize = 4;

/// An old output longer than this is cut to its head and tail.
const SHRUNK_OUTPUT_CHARS: usize = 600;

/// Estimated tokens of a request: its JSON at 3.5 characters per token,
/// which errs on the large side for prose and code alike.
pub fn estimate_tokens(request: &ModelRequest) -> u64 {
    estimate(&request.system, &request.messages, &request.tools)
}

/// [`estimate_tokens`] of a request's parts (no request needs building).
/// Images count as what providers charge for them, not as their base64.
pub fn estimate(system: &str, messages: &[Message], tools: &[oi_providers::ToolSpec]) -> u64 {
    let mut image_chars = 0;
    let mut image_tokens = 0;
    for message in messages {
        let (Message::User { content } | Message::Tool { content, .. }) = message else {
            continue;
        };
        for part in content {
            if let ContentPart::Image { data, .. } = part {
                image_chars += data.len();
                image_tokens += image_cost(data);
            }
        }
    }
    let chars = (system.len()
        + serde_json::to_string(messages).map_or(0, |s| s.len())
        + serde_json::to_string(tools).map_or(0, |s| s.len()))
    .saturating_sub(image_chars);
    (chars as u64 * 2).div_ceil(7) + image_tokens
}

/// Tokens an image costs: about one per 750 pixels (Anthropic's rule;
/// OpenAI's tiles come to less), at most 1,600 (images are scaled down to
/// about 1.15 megapixels). An image whose size cannot be read (not a PNG)
/// counts as its base64 text would, up to 1,600.
fn image_cost(base64_data: &str) -> u64 {
    use base64::Engine as _;
    const MAX: u64 = 1600;
    let unknown = (base64_data.len() as u64 * 2).div_ceil(7).min(MAX);
    let head = base64_data.get(..44).unwrap_or(base64_data);
    let size = base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(head.trim_end_matches('='))
        .ok()
        .and_then(|bytes| oi_computer::png_size(&bytes));
    size.map_or(unknown, |size| {
        (u64::from(size.width) * u64::from(size.height))
            .div_ceil(750)
            .min(MAX)
    })
}

/// The tokens a request may take in a `window`, leaving room for the
/// reply (`max_tokens`, else a quarter of the window up to 4096) and a
/// margin of 5% for the estimate's error.
pub fn input_budget(window: u32, max_tokens: Option<u32>) -> u64 {
    let window = u64::from(window);
    let reply = max_tokens.map_or_else(|| (window / 4).min(4096), u64::from);
    window.saturating_sub(reply).saturating_sub(window / 20)
}

/// `text` cut to `max` characters: its head and tail, and a note of what
/// was cut.
fn head_and_tail(text: &str, max: usize) -> Option<String> {
    let count = text.chars().count();
    if count <= max {
        return None;
    }
    let half = max / 2;
    let head: String = text.chars().take(half).collect();
    let tail: String = text.chars().skip(count - half).collect();
    Some(format!(
        "{head}\n[… {} characters of this output were cut to fit the context window …]\n{tail}",
        count - 2 * half
    ))
}

/// Cuts the outputs of runs (tool results, and in the markdown harness the
/// user messages that carry outputs) in `messages[..end]`, except the task
/// in message `task` and the summary before it ([`task_span`]), to their
/// head and tail. Returns how many were cut.
pub fn shrink_outputs(messages: &mut [Message], end: usize, task: Option<usize>) -> usize {
    let mut shrunk = 0;
    for (index, message) in messages.iter_mut().enumerate().take(end) {
        let content = match message {
            Message::Tool { content, .. } | Message::User { content } => content,
            Message::Assistant { .. } => continue,
        };
        let spared = if Some(index) == task {
            0..task_span(content).end
        } else {
            0..0
        };
        for (_, part) in content
            .iter_mut()
            .enumerate()
            .filter(|(i, _)| !spared.contains(i))
        {
            if let ContentPart::Text { text } = part
                && let Some(cut) = head_and_tail(text, SHRUNK_OUTPUT_CHARS)
            {
                *text = cut;
                shrunk += 1;
            }
        }
    }
    shrunk
}

/// Where the kept recent part starts: at least `keep` messages from the
/// end, at a message that is not a tool result (which must follow its
/// call). `None` when there is nothing before it to summarize.
pub fn split_point(messages: &[Message], keep: usize) -> Option<usize> {
    let mut at = messages.len().saturating_sub(keep);
    while at > 0 && matches!(messages[at], Message::Tool { .. }) {
        at -= 1;
    }
    (at > 0).then_some(at)
}

/// The messages as plain text for the model to summarize, each cut to
/// `per_message` characters, the whole to about `total` characters (the
/// middle goes first).
pub fn render_for_summary(messages: &[Message], per_message: usize, total: usize) -> String {
    let mut parts: Vec<String> = messages
        .iter()
        .map(|message| {
            let (who, text) = match message {
                Message::User { content } => ("User", texts(content)),
                Message::Tool { content, .. } => ("Output", texts(content)),
                Message::Assistant {
                    text, tool_calls, ..
                } => {
                    let mut all = text.clone();
                    for call in tool_calls {
                        all.push_str(&format!("\n[ran: {}]", call.arguments));
                    }
                    ("Assistant", all)
                }
            };
            let text = head_and_tail(&text, per_message).unwrap_or(text);
            format!("{who}: {text}")
        })
        .collect();
    let mut length: usize = parts.iter().map(String::len).sum();
    while length > total && parts.len() > 2 {
        let middle = parts.len() / 2;
        length -= parts.remove(middle).len();
    }
    parts.join("\n\n")
}

fn texts(content: &[ContentPart]) -> String {
    content
        .iter()
        .map(|part| match part {
            ContentPart::Text { text } => text.clone(),
            _ => "[image]".to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// How the first message of a rebuilt conversation begins: the summary.
const SUMMARY_LEAD: &str =
    "[Summary of the earlier conversation, which was too long to send whole:\n";
/// Before the task's own parts in that message.
const TASK_LEAD: &str = "The current task, as the user gave it:";
/// Before the parts of the first kept message merged into it (a run's
/// output, in the markdown harness).
const SINCE_LEAD: &str = "[What followed:]";

/// Which parts of the current task's message (`content`) are the task as
/// the user gave it (with what oi added to it, as a first look): all of
/// them, unless a compaction rebuilt the message, which then begins with
/// the summary and may end with what followed.
pub fn task_span(content: &[ContentPart]) -> std::ops::Range<usize> {
    let is = |i: usize, lead: &str| matches!(content.get(i), Some(ContentPart::Text { text }) if text == lead);
    let summary = matches!(
        content.first(),
        Some(ContentPart::Text { text }) if text.starts_with(SUMMARY_LEAD)
    );
    if !(summary && is(1, TASK_LEAD)) {
        return 0..content.len();
    }
    let end = (2..content.len())
        .find(|&i| is(i, SINCE_LEAD))
        .unwrap_or(content.len());
    2..end
}

/// The parts of the current task's message that are not the task (the
/// summary before it, what followed after it), without the lines that
/// lead them: what a later compaction summarizes again.
pub fn outside_task(content: &[ContentPart]) -> Vec<ContentPart> {
    let span = task_span(content);
    content[..span.start]
        .iter()
        .chain(&content[span.end..])
        .filter(|part| !matches!(part, ContentPart::Text { text } if text == TASK_LEAD || text == SINCE_LEAD))
        .cloned()
        .collect()
}

/// The conversation after the messages before `keep_from` were replaced by
/// `summary`: the summary comes first, then the current task (message
/// `task`, its own parts word for word: not a summary an earlier
/// compaction put before it, which `summary` covers), then the recent
/// messages. Consecutive user messages are merged, the kept one led by a
/// line saying it followed.
pub fn rebuild(
    messages: &[Message],
    keep_from: usize,
    task: Option<usize>,
    summary: &str,
) -> Vec<Message> {
    let mut lead = vec![ContentPart::text(format!("{SUMMARY_LEAD}{summary}]"))];
    let mut rest = messages[keep_from..].iter().cloned();
    let mut first = rest.next();
    if let Some(task) = task.filter(|t| *t <= keep_from)
        && let Some(Message::User { content }) = messages.get(task)
        && (task < keep_from || matches!(first, Some(Message::User { .. })))
    {
        lead.push(ContentPart::text(TASK_LEAD));
        lead.extend(content[task_span(content)].iter().cloned());
        if task == keep_from {
            // The task is the first kept message: merged whole already.
            first = None;
        }
    }
    let mut rebuilt = Vec::with_capacity(messages.len() - keep_from + 1);
    match first {
        Some(Message::User { content }) => {
            if lead.len() > 1 {
                lead.push(ContentPart::text(SINCE_LEAD));
            }
            lead.extend(content);
            rebuilt.push(Message::User { content: lead });
        }
        Some(other) => {
            rebuilt.push(Message::User { content: lead });
            rebuilt.push(other);
        }
        None => rebuilt.push(Message::User { content: lead }),
    }
    rebuilt.extend(rest);
    rebuilt
}

/// The request that asks the model for the summary.
pub fn summary_request(model: &str, text: &str, max_tokens: u32) -> ModelRequest {
    ModelRequest {
        model: model.to_owned(),
        system: "You write short, factual summaries of a conversation between a user and an assistant that runs code on the user's computer. Keep what later work needs: the user's goals and preferences, files and paths involved, what was run and what it found, results and numbers, errors met and how they were solved, and what remains to do. Plain text, at most 250 words.".to_owned(),
        messages: vec![Message::user(format!(
            "Summarize this conversation:\n\n{text}"
        ))],
        tools: Vec::new(),
        max_tokens: Some(max_tokens),
        temperature: Some(0.0),
        cache_key: None,
        form: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_count_as_pixels_not_as_base64() {
        use base64::Engine as _;
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&1280u32.to_be_bytes());
        png.extend_from_slice(&720u32.to_be_bytes());
        png.extend_from_slice(&[0; 20_000]);
        let data = base64::engine::general_purpose::STANDARD.encode(&png);
        let with_image = vec![Message::Tool {
            call_id: "c".into(),
            content: vec![
                ContentPart::text("shot"),
                ContentPart::Image {
                    media_type: "image/png".into(),
                    data,
                },
            ],
        }];
        let without = vec![Message::tool("c", "shot")];
        let extra = estimate("", &with_image, &[]) - estimate("", &without, &[]);
        // 1280 × 720 / 750 = 1229 tokens, give or take the JSON around it.
        assert!((1229..1260).contains(&extra), "{extra}");
        assert_eq!(image_cost("bm90IGFuIGltYWdl"), 5, "as text");
        assert_eq!(image_cost(&"A".repeat(100_000)), 1600, "at most");
    }
    use oi_protocol::ToolCall;
    use pretty_assertions::assert_eq;

    fn call(id: &str) -> Message {
        Message::Assistant {
            text: String::new(),
            tool_calls: vec![ToolCall {
                id: id.into(),
                name: "execute".into(),
                arguments: "{\"language\":\"python\",\"code\":\"print(1)\"}".into(),
            }],
            reasoning: Vec::new(),
        }
    }

    #[test]
    fn the_budget_leaves_room_for_the_reply() {
        assert_eq!(input_budget(8192, Some(1000)), 8192 - 1000 - 409);
        assert_eq!(input_budget(8192, None), 8192 - 2048 - 409);
        assert_eq!(input_budget(200_000, None), 200_000 - 4096 - 10_000);
    }

    #[test]
    fn old_outputs_keep_head_and_tail_and_the_task_stays_whole() {
        let long = "x".repeat(5000);
        let mut messages = vec![
            Message::user(long.clone()),
            call("a"),
            Message::tool("a", format!("start{long}end")),
            call("b"),
            Message::tool("b", long.clone()),
        ];
        assert_eq!(shrink_outputs(&mut messages, 3, Some(0)), 1);
        let Message::Tool { content, .. } = &messages[2] else {
            panic!()
        };
        let text = content[0].as_text().unwrap();
        assert!(text.starts_with("start") && text.ends_with("end"), "{text}");
        assert!(text.contains("characters of this output were cut"));
        assert!(text.len() < 800);
        assert_eq!(messages[0], Message::user(long.clone()));
        assert_eq!(messages[4], Message::tool("b", long));
    }

    #[test]
    fn the_kept_part_never_starts_with_a_tool_result() {
        let messages = vec![
            Message::user("task"),
            call("a"),
            Message::tool("a", "1"),
            call("b"),
            Message::tool("b", "2"),
        ];
        assert_eq!(split_point(&messages, 2), Some(3));
        assert_eq!(split_point(&messages, 1), Some(3));
        assert_eq!(split_point(&messages, 5), None);
    }

    #[test]
    fn the_summary_leads_then_the_task_then_the_recent_turns() {
        let messages = vec![
            Message::user("old question"),
            Message::Assistant {
                text: "old answer".into(),
                tool_calls: Vec::new(),
                reasoning: Vec::new(),
            },
            Message::user("the task"),
            call("a"),
            Message::tool("a", "1"),
            call("b"),
            Message::tool("b", "2"),
        ];
        let rebuilt = rebuild(&messages, 5, Some(2), "they talked");
        assert_eq!(rebuilt.len(), 3);
        let Message::User { content } = &rebuilt[0] else {
            panic!()
        };
        let text = texts(content);
        assert!(text.contains("they talked"), "{text}");
        assert!(text.contains("the task"), "{text}");
        assert_eq!(rebuilt[1], messages[5]);
        assert_eq!(rebuilt[2], messages[6]);
        // The task among the kept messages: the summary merges into the
        // first kept user message.
        let rebuilt = rebuild(&messages, 2, Some(2), "they talked");
        assert_eq!(rebuilt.len(), 5);
        let Message::User { content } = &rebuilt[0] else {
            panic!()
        };
        assert!(texts(content).ends_with("the task"));
    }

    #[test]
    fn a_second_compaction_keeps_the_task_once_and_summarizes_the_first_summary() {
        let answer = |text: &str| Message::Assistant {
            text: text.into(),
            tool_calls: Vec::new(),
            reasoning: Vec::new(),
        };
        let task = Message::User {
            content: vec![
                ContentPart::text("the task"),
                ContentPart::text("[oi: a first look]"),
            ],
        };
        let messages = vec![
            task,
            answer("step 1"),
            Message::user("output 1"),
            answer("step 2"),
            Message::user("output 2"),
        ];
        // The first kept message is an output: it follows the task, led.
        let once = rebuild(&messages, 2, Some(0), "first summary");
        let Message::User { content } = &once[0] else {
            panic!()
        };
        assert_eq!(
            texts(content),
            "[Summary of the earlier conversation, which was too long to send whole:\nfirst summary]\nThe current task, as the user gave it:\nthe task\n[oi: a first look]\n[What followed:]\noutput 1"
        );
        assert_eq!(task_span(content), 2..4);
        assert_eq!(
            texts(&outside_task(content)),
            "[Summary of the earlier conversation, which was too long to send whole:\nfirst summary]\noutput 1"
        );
        // Compacted again: the task once, word for word; the first summary
        // and what followed are not carried along.
        let mut more = once.clone();
        more.extend([answer("step 3"), Message::user("output 3")]);
        let twice = rebuild(&more, 4, Some(0), "second summary");
        let Message::User { content } = &twice[0] else {
            panic!()
        };
        let text = texts(content);
        assert_eq!(
            text,
            "[Summary of the earlier conversation, which was too long to send whole:\nsecond summary]\nThe current task, as the user gave it:\nthe task\n[oi: a first look]\n[What followed:]\noutput 3"
        );
        // Outputs are cut, the task and the summary before it are not.
        let mut long = twice.clone();
        let Message::User { content } = &mut long[0] else {
            panic!()
        };
        content[2] = ContentPart::text("t".repeat(SHRUNK_OUTPUT_CHARS * 3));
        content[5] = ContentPart::text("o".repeat(SHRUNK_OUTPUT_CHARS * 3));
        assert_eq!(shrink_outputs(&mut long, 1, Some(0)), 1);
        let Message::User { content } = &long[0] else {
            panic!()
        };
        assert_eq!(
            content[2],
            ContentPart::text("t".repeat(SHRUNK_OUTPUT_CHARS * 3))
        );
        // A message no compaction rebuilt is the task whole.
        let plain = [ContentPart::text("the task")];
        assert_eq!(task_span(&plain), 0..1);
        assert!(outside_task(&plain).is_empty());
    }

    #[test]
    fn the_text_to_summarize_is_bounded() {
        let messages: Vec<Message> = (0..50)
            .map(|i| Message::user(format!("message {i} {}", "y".repeat(500))))
            .collect();
        let text = render_for_summary(&messages, 200, 3000);
        assert!(text.len() <= 3000, "{}", text.len());
        assert!(text.starts_with("User: message 0"));
        assert!(text.contains("message 49"));
    }
}
