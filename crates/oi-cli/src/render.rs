//! Showing the agent's events: to a person (the views of `oi-tui`), or as
//! JSON lines to a program.

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
