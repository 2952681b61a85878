//! Session transcripts: one append-only JSON-lines file per session, under
//! `~/.openinterpreter/sessions/<id>/transcript.jsonl`.
//!
//! Each line is a [`Record`]: the session's header, every message added to
//! the conversation, cuts and replacements of it (undo, reset, load,
//! compaction), and the events that matter afterwards (code proposed and
//! run, images by path, usage and cost, how tasks ended). A line is written
//! with one `write` as soon as its event happens, so a crash or `kill -9`
//! loses at most the event in flight. Secrets (API keys, the values of the
//! providers' key variables) are replaced by `[redacted]` before a line is
//! written.
//!
//! Reading is forgiving: a line that is not a record (a torn last line) is
//! skipped with a warning, never a refusal to load.

use std::io::Write;
use std::path::{Path, PathBuf};

use oi_protocol::{ContentPart, Event, Message, Secrets};
use serde::{Deserialize, Serialize};

/// The transcript's file name in a session's folder.
pub const FILE_NAME: &str = "transcript.jsonl";

/// The first line: what the session was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub id: String,
    /// oi's version.
    pub version: String,
    /// When it started (RFC 3339, UTC).
    pub started: String,
    /// The working directory.
    pub cwd: String,
    pub model: String,
    pub provider: String,
}

/// One line of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    Session(Header),
    /// The session was taken up again (kernels restarted).
    Resumed {
        time: String,
    },
    /// A message added to the conversation.
    Message {
        message: Message,
    },
    /// The conversation was cut to its first `len` messages (undo, reset).
    Truncate {
        len: usize,
    },
    /// The conversation was replaced (a loaded file, a compaction).
    Replace {
        messages: Vec<Message>,
    },
    /// Something that happened (no text or output pieces: the messages
    /// hold those).
    Event {
        time: String,
        event: Event,
    },
}

/// Whether `event` goes into the transcript: pieces of text and output do
/// not (the messages and run results hold them), nor requests for input.
fn recorded(event: &Event) -> bool {
    !matches!(
        event,
        Event::TextDelta { .. }
            | Event::OutputDelta { .. }
            | Event::ReplyRestarted
            | Event::RawRequest { .. }
            | Event::Stats { .. }
            | Event::ShutdownComplete
            | Event::InputRequested { .. }
    )
}

/// Errors of writing or reading a transcript.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    #[error("cannot write the session transcript {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read the session transcript {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a session transcript (its first line is not a session header)")]
    NoHeader { path: PathBuf },
}

/// The writer of one session's transcript.
#[derive(Debug)]
pub struct Transcript {
    path: PathBuf,
    file: fs_err::File,
    secrets: Secrets,
    /// Messages of the conversation already written.
    persisted: usize,
    /// The conversation's replacement count last written.
    epoch: u64,
}

impl Transcript {
    /// Starts `path` with `header` (the folder is created).
    pub fn create(
        path: &Path,
        header: &Header,
        secrets: &[String],
    ) -> Result<Self, TranscriptError> {
        let err = |source| TranscriptError::Write {
            path: path.to_path_buf(),
            source,
        };
        if let Some(parent) = path.parent() {
            fs_err::create_dir_all(parent).map_err(err)?;
        }
        let file = fs_err::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(err)?;
        let mut transcript = Self::with_file(path, file, secrets, 0);
        transcript.write(&Record::Session(header.clone()))?;
        Ok(transcript)
    }

    /// Continues `path`, whose conversation holds `messages` messages.
    pub fn append(
        path: &Path,
        messages: usize,
        secrets: &[String],
    ) -> Result<Self, TranscriptError> {
        let file = fs_err::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|source| TranscriptError::Write {
                path: path.to_path_buf(),
                source,
            })?;
        let mut transcript = Self::with_file(path, file, secrets, messages);
        transcript.write(&Record::Resumed {
            time: crate::now_rfc3339(),
        })?;
        Ok(transcript)
    }

    fn with_file(path: &Path, file: fs_err::File, secrets: &[String], persisted: usize) -> Self {
        Self {
            path: path.to_path_buf(),
            file,
            secrets: Secrets::new(secrets.iter().cloned()),
            persisted,
            epoch: 0,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes one record as one line, with one `write`.
    pub fn write(&mut self, record: &Record) -> Result<(), TranscriptError> {
        let mut line = serde_json::to_string(record).map_err(|e| TranscriptError::Write {
            path: self.path.clone(),
            source: std::io::Error::other(e),
        })?;
        if let std::borrow::Cow::Owned(redacted) = self.secrets.redact(&line) {
            line = redacted;
        }
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .map_err(|source| TranscriptError::Write {
                path: self.path.clone(),
                source,
            })
    }

    /// Brings the transcript up to date with the conversation: a
    /// replacement when `epoch` moved on, a cut when it got shorter, then
    /// the new messages.
    pub fn sync(&mut self, history: &[Message], epoch: u64) -> Result<(), TranscriptError> {
        if epoch != self.epoch {
            self.write(&Record::Replace {
                messages: history.to_vec(),
            })?;
            self.epoch = epoch;
            self.persisted = history.len();
            return Ok(());
        }
        if history.len() < self.persisted {
            self.write(&Record::Truncate { len: history.len() })?;
            self.persisted = history.len();
        }
        for message in &history[self.persisted..] {
            self.write(&Record::Message {
                message: message.clone(),
            })?;
        }
        self.persisted = history.len();
        Ok(())
    }

    /// Writes `event` if it is one transcripts keep.
    pub fn event(&mut self, event: &Event) -> Result<(), TranscriptError> {
        if !recorded(event) {
            return Ok(());
        }
        self.write(&Record::Event {
            time: crate::now_rfc3339(),
            event: event.clone(),
        })
    }
}

/// A transcript read back.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    pub path: PathBuf,
    pub header: Header,
    /// The conversation as it last stood.
    pub messages: Vec<Message>,
    /// Lines that could not be read, said as `path:line: why`.
    pub warnings: Vec<String>,
    /// The first thing the user asked.
    pub first_prompt: Option<String>,
    /// Tasks started.
    pub turns: usize,
    /// The session's cost in USD, when known.
    pub cost_usd: Option<f64>,
    /// When the last line was written (else when it started).
    pub last_active: String,
}

/// Reads a transcript (see the module docs on torn lines).
pub fn read(path: &Path) -> Result<Loaded, TranscriptError> {
    let text = fs_err::read_to_string(path).map_err(|source| TranscriptError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut header: Option<Header> = None;
    let mut messages: Vec<Message> = Vec::new();
    let mut warnings = Vec::new();
    let mut first_prompt = None;
    let mut turns = 0;
    let mut cost_usd = None;
    let mut last_active = None;
    let lines: Vec<&str> = text.split('\n').collect();
    for (index, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let record: Record = match serde_json::from_str(line) {
            Ok(record) => record,
            Err(_) if let Some(record) = with_old_tags_renamed(line) => record,
            Err(e) => {
                let last = lines[index + 1..].iter().all(|l| l.trim().is_empty());
                let which = if last { "the last line" } else { "a line" };
                warnings.push(format!(
                    "{}:{}: {which} is not a complete record and was skipped ({e})",
                    path.display(),
                    index + 1
                ));
                continue;
            }
        };
        match record {
            Record::Session(h) => {
                last_active.get_or_insert_with(|| h.started.clone());
                header.get_or_insert(h);
            }
            Record::Resumed { time } => last_active = Some(time),
            Record::Message { message } => {
                if first_prompt.is_none()
                    && let Message::User { content } = &message
                {
                    first_prompt = first_text(content);
                }
                messages.push(message);
            }
            Record::Truncate { len } => messages.truncate(len),
            Record::Replace { messages: all } => messages = all,
            Record::Event { time, event } => {
                last_active = Some(time);
                match event {
                    Event::TaskStarted => turns += 1,
                    Event::Usage {
                        cost_usd: Some(cost),
                        ..
                    } => cost_usd = Some(cost),
                    _ => {}
                }
            }
        }
    }
    let Some(header) = header else {
        return Err(TranscriptError::NoHeader {
            path: path.to_path_buf(),
        });
    };
    Ok(Loaded {
        path: path.to_path_buf(),
        last_active: last_active.unwrap_or_else(|| header.started.clone()),
        header,
        messages,
        warnings,
        first_prompt,
        turns,
        cost_usd,
    })
}

/// A line written before every tag inside events was `type` (the
/// `status` of a finished run, the `reason` of a skipped run, the `kind` of
/// a task's stop reason), read with those tags renamed.
fn with_old_tags_renamed(line: &str) -> Option<Record> {
    let mut value: serde_json::Value = serde_json::from_str(line).ok()?;
    let event = value.get_mut("event")?;
    for (field, tag) in [
        ("status", "status"),
        ("reason", "reason"),
        ("reason", "kind"),
    ] {
        if let Some(object) = event.get_mut(field).and_then(|v| v.as_object_mut())
            && let Some(kind) = object.remove(tag)
        {
            object.insert("type".to_owned(), kind);
        }
    }
    serde_json::from_value(value).ok()
}

/// Answers tool calls that have no result (the session ended while they
/// ran), so the conversation is one a model API accepts again.
pub fn close_dangling_calls(messages: &mut Vec<Message>) {
    let mut answered: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut missing: Vec<(usize, String)> = Vec::new();
    for (index, message) in messages.iter().enumerate().rev() {
        match message {
            Message::Tool { call_id, .. } => {
                answered.insert(call_id.clone());
            }
            Message::Assistant { tool_calls, .. } => {
                for call in tool_calls.iter().rev() {
                    if !answered.contains(&call.id) {
                        missing.push((index, call.id.clone()));
                    }
                }
            }
            Message::User { .. } => {}
        }
    }
    // Insert after each call's message, last positions first.
    missing.sort_by_key(|(index, _)| std::cmp::Reverse(*index));
    for (index, call_id) in missing {
        messages.insert(
            index + 1,
            Message::tool(
                call_id,
                "[No result: the session ended while this was running, so its output was lost. Check its effects before relying on them.]",
            ),
        );
    }
}

fn first_text(content: &[ContentPart]) -> Option<String> {
    content.iter().find_map(|part| match part {
        ContentPart::Text { text } => Some(text.clone()),
        _ => None,
    })
}

/// The transcripts under `sessions_dir`, most recently active first (those
/// that cannot be read are left out).
pub fn list(sessions_dir: &Path) -> Vec<Loaded> {
    let Ok(entries) = fs_err::read_dir(sessions_dir) else {
        return Vec::new();
    };
    let mut found: Vec<Loaded> = entries
        .flatten()
        .map(|e| e.path().join(FILE_NAME))
        .filter(|p| p.is_file())
        .filter_map(|p| read(&p).ok())
        .collect();
    found.sort_by(|a, b| b.last_active.cmp(&a.last_active));
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn assistant(text: &str) -> Message {
        Message::Assistant {
            text: text.into(),
            tool_calls: Vec::new(),
            reasoning: Vec::new(),
        }
    }

    fn header() -> Header {
        Header {
            id: "20261130-101500-abcd".into(),
            version: "0.1.0".into(),
            started: "2026-11-30T10:15:00Z".into(),
            cwd: "/home/ada/project".into(),
            model: "gpt-4o".into(),
            provider: "openai".into(),
        }
    }

    #[test]
    fn the_conversation_is_rebuilt_through_cuts_and_replacements() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s").join(FILE_NAME);
        let mut t = Transcript::create(&path, &header(), &[]).unwrap();
        let mut history = vec![Message::user("first task")];
        t.event(&Event::TaskStarted).unwrap();
        t.sync(&history, 0).unwrap();
        history.push(assistant("done"));
        history.push(Message::user("second"));
        t.sync(&history, 0).unwrap();
        history.truncate(2);
        t.sync(&history, 0).unwrap();
        let loaded = read(&path).unwrap();
        assert_eq!(loaded.messages, history);
        assert_eq!(loaded.first_prompt.as_deref(), Some("first task"));
        assert_eq!(loaded.turns, 1);

        history = vec![Message::user("loaded")];
        t.sync(&history, 1).unwrap();
        history.push(assistant("after"));
        t.sync(&history, 1).unwrap();
        assert_eq!(read(&path).unwrap().messages, history);

        // Continued later: new messages follow the old ones.
        drop(t);
        let mut t = Transcript::append(&path, history.len(), &[]).unwrap();
        history.push(Message::user("resumed"));
        t.sync(&history, 0).unwrap();
        assert_eq!(read(&path).unwrap().messages, history);
    }

    #[test]
    fn calls_left_without_a_result_get_one() {
        let call = |id: &str| oi_protocol::ToolCall {
            id: id.into(),
            name: "execute".into(),
            arguments: "{}".into(),
        };
        let mut messages = vec![
            Message::user("go"),
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![call("a"), call("b")],
                reasoning: Vec::new(),
            },
            Message::tool("a", "done"),
        ];
        close_dangling_calls(&mut messages);
        assert_eq!(messages.len(), 4);
        assert!(matches!(&messages[2], Message::Tool { call_id, .. } if call_id == "b"));
        let again = messages.clone();
        close_dangling_calls(&mut messages);
        assert_eq!(messages, again);
    }

    #[test]
    fn a_torn_last_line_is_skipped_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let mut t = Transcript::create(&path, &header(), &[]).unwrap();
        t.sync(&[Message::user("kept")], 0).unwrap();
        drop(t);
        let mut text = fs_err::read_to_string(&path).unwrap();
        text.push_str("{\"type\":\"message\",\"message\":{\"role\":\"us");
        fs_err::write(&path, text).unwrap();
        let loaded = read(&path).unwrap();
        assert_eq!(loaded.messages, [Message::user("kept")]);
        assert_eq!(loaded.warnings.len(), 1);
        assert!(
            loaded.warnings[0].contains(":3: the last line"),
            "{:?}",
            loaded.warnings
        );
    }

    #[test]
    fn lines_written_with_the_old_tags_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let t = Transcript::create(&path, &header(), &[]).unwrap();
        drop(t);
        let mut text = fs_err::read_to_string(&path).unwrap();
        for event in [
            r#"{"type":"run_finished","id":1,"status":{"status":"failed","exit_code":2},"duration_ms":5}"#,
            r#"{"type":"run_skipped","id":2,"reason":{"reason":"declined"}}"#,
            r#"{"type":"task_complete","reason":{"kind":"done"}}"#,
        ] {
            text.push_str(&format!(
                "{{\"type\":\"event\",\"time\":\"2026-11-30T10:00:00Z\",\"event\":{event}}}\n"
            ));
        }
        fs_err::write(&path, text).unwrap();
        let loaded = read(&path).unwrap();
        assert_eq!(loaded.warnings, Vec::<String>::new());
        assert_eq!(loaded.last_active, "2026-11-30T10:00:00Z");
    }

    #[test]
    fn secrets_never_reach_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let secrets = ["sk-live-0123456789".to_owned(), "abc".to_owned()];
        let mut t = Transcript::create(&path, &header(), &secrets).unwrap();
        t.sync(&[Message::user("my key is sk-live-0123456789, and abc")], 0)
            .unwrap();
        let text = fs_err::read_to_string(&path).unwrap();
        assert!(!text.contains("sk-live-0123456789"), "{text}");
        assert!(text.contains("my key is [redacted], and abc"), "{text}");
    }

    #[test]
    fn no_header_is_an_error_and_sessions_list_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x").join(FILE_NAME);
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(&path, "{\"type\":\"truncate\",\"len\":0}\n").unwrap();
        assert!(matches!(read(&path), Err(TranscriptError::NoHeader { .. })));

        let mut old = header();
        old.started = "2026-11-01T00:00:00Z".into();
        Transcript::create(&dir.path().join("a").join(FILE_NAME), &old, &[]).unwrap();
        let mut new = header();
        new.id = "b".into();
        Transcript::create(&dir.path().join("b").join(FILE_NAME), &new, &[]).unwrap();
        let ids: Vec<String> = list(dir.path()).into_iter().map(|l| l.header.id).collect();
        assert_eq!(ids, ["b", "20261130-101500-abcd"]);
    }
}
