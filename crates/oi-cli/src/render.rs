//! Showing the agent's events to a person, or as JSON lines to a program.

use std::io::{self, Write};

use anstyle::{AnsiColor, Style};
use oi_protocol::{Event, OutputStream, RunStatus, SkipReason, StopReason};

/// Something that shows events.
pub trait Render {
    fn event(&mut self, event: &Event) -> io::Result<()>;
}

const DIM: Style = Style::new().dimmed();
const BOLD: Style = Style::new().bold();
const RED: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Red)));
const YELLOW: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Yellow)));
const CYAN: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Cyan)));

/// Readable progress: the model's text as it streams, code in a frame,
/// output as it arrives (stderr in red), and one line on how each run ended.
/// Colours are dropped when the writer is not a terminal or `NO_COLOR` is set
/// (through `anstream`).
#[derive(Debug)]
pub struct HumanRenderer<W: Write> {
    out: W,
    at_line_start: bool,
    /// Whether any reply text was shown (so `exec` knows the answer was seen).
    pub streamed_text: bool,
}

impl<W: Write> HumanRenderer<W> {
    pub fn new(out: W) -> Self {
        Self {
            out,
            at_line_start: true,
            streamed_text: false,
        }
    }

    fn write_raw(&mut self, text: &str) -> io::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        self.out.write_all(text.as_bytes())?;
        self.at_line_start = text.ends_with('\n');
        self.out.flush()
    }

    fn ensure_line_start(&mut self) -> io::Result<()> {
        if !self.at_line_start {
            self.write_raw("\n")?;
        }
        Ok(())
    }

    /// A whole line (or lines) in a style, starting on a fresh line.
    pub fn line(&mut self, style: Style, text: &str) -> io::Result<()> {
        self.ensure_line_start()?;
        let styled = format!("{style}{text}{style:#}\n");
        self.write_raw(&styled)
    }

    /// Writes an error with its hint, the way every error is shown.
    pub fn error(&mut self, message: &str, hint: Option<&str>) -> io::Result<()> {
        self.ensure_line_start()?;
        let mut text = format!("{RED}{BOLD}error{BOLD:#}{RED:#}: {message}\n");
        if let Some(hint) = hint {
            text.push_str(&format!("{CYAN}hint{CYAN:#}: {hint}\n"));
        }
        self.write_raw(&text)
    }

    /// Writes a piece of text as is (a prompt, a banner).
    pub fn raw(&mut self, text: &str) -> io::Result<()> {
        self.write_raw(text)
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

impl<W: Write> Render for HumanRenderer<W> {
    fn event(&mut self, event: &Event) -> io::Result<()> {
        match event {
            Event::TextDelta { delta } => {
                self.streamed_text = true;
                self.write_raw(delta)?;
            }
            Event::AssistantMessage { .. } => self.ensure_line_start()?,
            Event::ReplyRestarted => self.line(
                YELLOW,
                "(the connection broke and the reply started over; it continues here)",
            )?,
            Event::CodeProposed { language, code, .. } => {
                self.ensure_line_start()?;
                let rule = "─".repeat(40usize.saturating_sub(language.chars().count() + 4));
                let mut text = format!("{DIM}── {language} {rule}{DIM:#}\n{code}");
                if !code.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(&format!("{DIM}{}{DIM:#}\n", "─".repeat(40)));
                self.write_raw(&text)?;
            }
            Event::RunStarted { .. } => {}
            Event::OutputDelta { stream, text, .. } => match stream {
                OutputStream::Stdout => self.write_raw(text)?,
                OutputStream::Stderr => {
                    let styled = format!("{RED}{text}{RED:#}");
                    self.write_raw(&styled)?;
                    self.at_line_start = text.ends_with('\n');
                }
            },
            Event::RunFinished {
                status,
                duration_ms,
                ..
            } => {
                let secs = *duration_ms as f64 / 1000.0;
                match status {
                    RunStatus::Ok => self.line(DIM, &format!("✓ ran in {secs:.1} s"))?,
                    RunStatus::Failed {
                        exit_code: Some(code),
                        ..
                    } => self.line(RED, &format!("✗ exit code {code} ({secs:.1} s)"))?,
                    RunStatus::Failed { error, .. } => self.line(
                        RED,
                        &format!("✗ failed: {}", error.as_deref().unwrap_or("error")),
                    )?,
                    RunStatus::Crashed { reason } => self.line(
                        RED,
                        &format!("✗ {reason}; its state was lost (the next run starts afresh)"),
                    )?,
                    RunStatus::Interrupted => self.line(YELLOW, "✗ interrupted")?,
                }
            }
            Event::RunSkipped { reason, .. } => {
                let text = match reason {
                    SkipReason::Declined => "– not run (declined)".to_owned(),
                    SkipReason::NoApprover => {
                        "– not run: approval needed, but there is no terminal to ask (pass `--yes` to run code without asking)".to_owned()
                    }
                    SkipReason::Unavailable { message } => format!("– not run: {message}"),
                };
                self.line(YELLOW, &text)?;
            }
            Event::Retrying {
                attempt,
                max_attempts,
                delay_ms,
                reason,
            } => {
                let secs = *delay_ms as f64 / 1000.0;
                self.line(
                    YELLOW,
                    &format!(
                        "⟳ {reason}; retrying in {secs:.1} s (attempt {attempt} of {max_attempts})"
                    ),
                )?;
            }
            Event::Warning { message } => self.line(YELLOW, &format!("warning: {message}"))?,
            Event::ModelChanged { model } => self.line(DIM, &format!("model: {model}"))?,
            Event::Error { message, hint } => self.error(message, hint.as_deref())?,
            Event::TaskComplete {
                reason: StopReason::MaxTurns { limit },
                ..
            } => self.error(
                &format!(
                    "stopped after {limit} model requests (the --max-turns limit); the task may be unfinished"
                ),
                Some("raise the limit with `--max-turns N`, or check whether the model is stuck in a loop"),
            )?,
            Event::TaskComplete {
                reason:
                    StopReason::Budget {
                        limit_usd,
                        spent_usd,
                        next_usd,
                    },
                ..
            } => self.error(
                &format!(
                    "stopped before the next model request: it would take the session past its budget of ${limit_usd:.2} (spent ${spent_usd:.4}, next request about ${next_usd:.4})"
                ),
                Some("raise the budget with `--max-budget USD` (config `max_budget`), or continue in a new session"),
            )?,
            Event::TaskComplete {
                reason: StopReason::Interrupted,
                ..
            } => self.line(YELLOW, "interrupted")?,
            Event::TaskComplete { .. }
            | Event::SessionConfigured { .. }
            | Event::TaskStarted
            | Event::ModelRequest { .. }
            | Event::ApprovalRequested { .. }
            | Event::Usage { .. }
            | Event::ShutdownComplete => {}
        }
        Ok(())
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
    use oi_protocol::RunId;
    use pretty_assertions::assert_eq;

    fn render(events: &[Event]) -> String {
        let mut r = HumanRenderer::new(Vec::new());
        for e in events {
            r.event(e).unwrap();
        }
        String::from_utf8(r.into_inner()).unwrap()
    }

    #[test]
    fn shows_code_output_and_how_runs_ended() {
        let id = RunId(1);
        let text = render(&[
            Event::TextDelta {
                delta: "Let me look.".into(),
            },
            Event::CodeProposed {
                id,
                language: "python".into(),
                code: "print(1)".into(),
            },
            Event::RunStarted {
                id,
                language: "python".into(),
                code: "print(1)".into(),
            },
            Event::OutputDelta {
                id,
                stream: OutputStream::Stdout,
                text: "1".into(),
            },
            Event::RunFinished {
                id,
                status: RunStatus::Failed {
                    exit_code: Some(2),
                    error: None,
                },
                duration_ms: 1500,
            },
        ]);
        let expected = format!(
            "Let me look.\n{DIM}── python {rule}{DIM:#}\nprint(1)\n{DIM}{line}{DIM:#}\n1\n{RED}✗ exit code 2 (1.5 s){RED:#}\n",
            rule = "─".repeat(30),
            line = "─".repeat(40)
        );
        assert_eq!(text, expected);
    }

    #[test]
    fn errors_come_with_their_hint() {
        let text = render(&[Event::Error {
            message: "boom".into(),
            hint: Some("try again".into()),
        }]);
        assert!(
            text.contains("boom\n") && text.contains("try again\n"),
            "{text}"
        );
    }

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
