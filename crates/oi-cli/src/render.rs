//! Showing the agent's events: to a person (the views of `oi-tui`), or as
//! JSON lines to a program (oi's own events, or Codex's).

use std::io::{self, Write};

use oi_protocol::Event;

pub use oi_tui::View as HumanRenderer;

/// Something that shows events.
pub trait Render {
    fn event(&mut self, event: &Event) -> io::Result<()>;
}

impl<W: Write> Render for HumanRenderer<W> {
    fn event(&mut self, event: &Event) -> io::Result<()> {
        HumanRenderer::event(self, event)
    }
}

/// One JSON object per event per line: the stable form of `oi_protocol::Event`.
#[derive(Debug)]
pub struct JsonRenderer<W: Write> {
    out: W,
}

impl<W: Write> JsonRenderer<W> {
    pub fn new(out: W) -> Self {
        Self { out }
    }
}

impl<W: Write> Render for JsonRenderer<W> {
    fn event(&mut self, event: &Event) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, event)?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }
}

/// Codex's event stream (`codex exec --json`), one JSON object per line.
#[derive(Debug)]
pub struct CodexRenderer<W: Write> {
    mapper: oi_codex::ExecMapper,
    out: W,
}

impl<W: Write> CodexRenderer<W> {
    pub fn new(out: W) -> Self {
        Self {
            mapper: oi_codex::ExecMapper::new(),
            out,
        }
    }

    /// The turn's answer is `text` (a structured answer), not the model's
    /// last reply as written.
    pub fn set_answer(&mut self, text: String) {
        self.mapper.set_answer(text);
    }

    /// Sends the updates of running commands that are due.
    pub fn tick(&mut self) -> io::Result<()> {
        let lines = self.mapper.tick();
        self.write(&lines)
    }

    fn write(&mut self, lines: &[oi_codex::exec_events::ThreadEvent]) -> io::Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        for line in lines {
            serde_json::to_writer(&mut self.out, line)?;
            self.out.write_all(b"\n")?;
        }
        self.out.flush()
    }
}

impl<W: Write> Render for CodexRenderer<W> {
    fn event(&mut self, event: &Event) -> io::Result<()> {
        let lines = self.mapper.event(event);
        self.write(&lines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn json_renderer_writes_one_event_per_line() {
        let mut r = JsonRenderer::new(Vec::new());
        r.event(&Event::TaskStarted).unwrap();
        r.event(&Event::TextDelta {
            delta: "a\nb".into(),
        })
        .unwrap();
        let out = String::from_utf8(r.out).unwrap();
        assert_eq!(
            out,
            "{\"type\":\"task_started\"}\n{\"type\":\"text_delta\",\"delta\":\"a\\nb\"}\n"
        );
    }
}
