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
    /// Keeps the running code's output from driving the terminal, one per
    /// stream (stdout, stderr).
    filters: [TerminalFilter; 2],
    /// Whether any reply text was shown (so `exec` knows the answer was seen).
    pub streamed_text: bool,
}

impl<W: Write> HumanRenderer<W> {
    pub fn new(out: W) -> Self {
        Self {
            out,
            at_line_start: true,
            filters: [TerminalFilter::default(), TerminalFilter::default()],
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
            Event::ApprovalRequested { risks, .. } if !risks.is_empty() => {
                for risk in risks {
                    self.line(RED, &format!("⚠ risky: {risk}"))?;
                }
            }
            Event::RunStarted { .. } => {
                self.filters = [TerminalFilter::default(), TerminalFilter::default()];
            }
            Event::OutputDelta { stream, text, .. } => match stream {
                OutputStream::Stdout => {
                    let text = self.filters[0].filter(text);
                    self.write_raw(&text)?;
                }
                OutputStream::Stderr => {
                    let text = self.filters[1].filter(text);
                    if !text.is_empty() {
                        let styled = format!("{RED}{text}{RED:#}");
                        self.write_raw(&styled)?;
                        self.at_line_start = text.ends_with('\n');
                    }
                }
            },
            Event::OutputSkipped { bytes, .. } => self.line(
                DIM,
                &format!(
                    "[… {} of output skipped here: it came faster than it can be shown …]",
                    human_bytes(*bytes)
                ),
            )?,
            Event::InputRequested { .. } => {
                self.line(
                    YELLOW,
                    "(the program waits for input: type a line and press Enter; Ctrl-C stops it)",
                )?;
            }
            Event::Image { path, .. } => self.line(CYAN, &format!("image: {path}"))?,
            Event::CheckpointSaved {
                checkpoint,
                skipped,
                ..
            } if !skipped.is_empty() => self.line(
                YELLOW,
                &format!(
                    "checkpoint {checkpoint}: left out for their size (they cannot be undone): {}",
                    skipped.join(", ")
                ),
            )?,
            Event::CheckpointSaved { .. } => {}
            Event::Undone {
                checkpoint,
                message,
                changes,
                previous,
            } => {
                self.line(CYAN, &format!("↶ undone: the workspace is back to {message} ({checkpoint})"))?;
                if changes.is_empty() {
                    self.line(DIM, "  (no file needed changing)")?;
                }
                for change in changes {
                    self.line(DIM, &format!("  {change}"))?;
                }
                self.line(
                    DIM,
                    &format!("  to undo this: interpreter checkpoints restore {previous}"),
                )?;
            }
            Event::SandboxDenied { message, hint, .. } => {
                self.line(YELLOW, &format!("⊘ {message}"))?;
                self.line(CYAN, &format!("  hint: {hint}"))?;
            }
            Event::RunFinished {
                status,
                duration_ms,
                output_bytes,
                ..
            } => {
                let secs = *duration_ms as f64 / 1000.0;
                let size = if *output_bytes >= 1024 * 1024 {
                    format!(", {} of output", human_bytes(*output_bytes))
                } else {
                    String::new()
                };
                match status {
                    RunStatus::Ok => self.line(DIM, &format!("✓ ran in {secs:.1} s{size}"))?,
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
                    RunStatus::TimedOut {
                        seconds,
                        kernel_restarted,
                    } => self.line(
                        YELLOW,
                        &if *kernel_restarted {
                            format!("✗ stopped after {seconds} s (run_timeout); it did not respond, so its kernel was restarted and its state lost")
                        } else {
                            format!("✗ stopped after {seconds} s (run_timeout)")
                        },
                    )?,
                    RunStatus::WaitingForInput { .. } => self.line(
                        YELLOW,
                        "✗ stopped: the program waited for input, which nobody can type here (the model is told)",
                    )?,
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
            Event::HarnessChanged { harness } => {
                self.line(DIM, &format!("harness: {harness}"))?;
            }
            Event::ApprovalChanged { policy } => self.line(
                DIM,
                &if policy == "auto" {
                    "auto-run on: code runs without asking, except risky code".to_owned()
                } else {
                    "auto-run off: every run asks first".to_owned()
                },
            )?,
            Event::SessionReset => self.line(
                DIM,
                "new conversation: the history is cleared and the kernels restart on the next run",
            )?,
            Event::Stats {
                context_tokens,
                context_window,
                next_request_usd,
                total,
                cost_usd,
                requests,
                messages,
            } => {
                let window = match context_window {
                    Some(w) => format!(
                        "{context_tokens} of {w} tokens ({:.0}%)",
                        *context_tokens as f64 * 100.0 / f64::from((*w).max(1))
                    ),
                    None => format!("{context_tokens} tokens (window unknown)"),
                };
                let next = next_request_usd
                    .map_or_else(|| "unknown".to_owned(), |c| format!("about ${c:.4}"));
                let spent = cost_usd.map_or_else(|| "unknown".to_owned(), |c| format!("${c:.4}"));
                self.line(
                    DIM,
                    &format!(
                        "context: {window}, {messages} messages · next request: {next}\nsession: {requests} requests, {} tokens in ({} cached), {} out · cost {spent}",
                        total.input_tokens, total.cached_input_tokens, total.output_tokens
                    ),
                )?;
            }
            Event::Saved { path, messages } => {
                self.line(DIM, &format!("saved {messages} messages to {path}"))?;
            }
            Event::Loaded { path, messages } => {
                self.line(DIM, &format!("loaded {messages} messages from {path}"))?;
            }
            Event::RawRequest { body } => {
                let text = serde_json::to_string_pretty(body).unwrap_or_default();
                self.line(DIM, &format!("→ request:\n{text}"))?;
            }
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
                reason: StopReason::LoopGuard { summary, .. },
                ..
            } => self.error(
                &format!("stopped: the task was going in circles: {summary}"),
                Some("rephrase the task or give the model a hint; the limit is `loop_guard.max_repeats`"),
            )?,
            Event::TaskComplete {
                reason: StopReason::TimeLimit { limit_secs },
                ..
            } => self.error(
                &format!("stopped: the task reached its time limit of {limit_secs} s (max_time)"),
                Some("raise it with `--max-time SECONDS` (config `max_time`; 0 means no limit)"),
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

/// `512 B`, `3.4 KB`, `200.0 MB`, `1.2 GB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1000 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1000.0;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// Makes program output safe to print on a terminal: colours (SGR escape
/// sequences) pass, other escape sequences (cursor moves, screen clears,
/// window titles, OSC commands) are dropped, and control characters other
/// than newline, tab, carriage return and backspace are shown as visible
/// symbols (`␛`, `␇` …). Sequences split between pieces are handled.
#[derive(Debug, Default)]
pub struct TerminalFilter {
    state: FilterState,
}

#[derive(Debug, Default)]
enum FilterState {
    #[default]
    Text,
    /// After ESC.
    Escape,
    /// Inside `ESC [`, with the parameters so far.
    Csi(String),
    /// Inside `ESC ]` (an operating system command), with its length so far.
    Osc(usize),
    /// ESC inside an OSC: `ESC \` ends it.
    OscEscape(usize),
}

impl TerminalFilter {
    /// Longest escape sequence followed; longer ones are dropped as text.
    const MAX_CSI: usize = 64;
    const MAX_OSC: usize = 4096;

    pub fn filter(&mut self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        for c in text.chars() {
            self.state = match std::mem::take(&mut self.state) {
                FilterState::Text => Self::text(c, &mut out),
                FilterState::Escape => match c {
                    '[' => FilterState::Csi(String::new()),
                    ']' => FilterState::Osc(0),
                    // Any other escape (a reset, a charset switch) is dropped.
                    _ => FilterState::Text,
                },
                FilterState::Csi(mut params) => match c {
                    '0'..='9' | ';' | ':' | '<' | '=' | '>' | '?' | ' '..='/' => {
                        params.push(c);
                        if params.len() > Self::MAX_CSI {
                            FilterState::Text
                        } else {
                            FilterState::Csi(params)
                        }
                    }
                    '@'..='~' => {
                        if c == 'm' && params.chars().all(|p| p.is_ascii_digit() || p == ';') {
                            out.push_str("\x1b[");
                            out.push_str(&params);
                            out.push('m');
                        }
                        FilterState::Text
                    }
                    // Not a sequence after all.
                    _ => Self::text(c, &mut out),
                },
                FilterState::Osc(n) | FilterState::OscEscape(n) if n > Self::MAX_OSC => {
                    Self::text(c, &mut out)
                }
                FilterState::Osc(n) => match c {
                    '\x07' => FilterState::Text,
                    '\x1b' => FilterState::OscEscape(n + 1),
                    _ => FilterState::Osc(n + 1),
                },
                FilterState::OscEscape(n) => match c {
                    '\\' => FilterState::Text,
                    _ => FilterState::Osc(n + 1),
                },
            };
        }
        out
    }

    fn text(c: char, out: &mut String) -> FilterState {
        match c {
            '\x1b' => return FilterState::Escape,
            '\n' | '\t' | '\r' | '\x08' => out.push(c),
            '\0'..='\x1f' => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}')),
            '\x7f' => out.push('\u{2421}'),
            // C1 controls: some terminals act on them as escapes.
            '\u{80}'..='\u{9f}' => out.push('\u{fffd}'),
            _ => out.push(c),
        }
        FilterState::Text
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
                output_bytes: 1,
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
    fn output_cannot_drive_the_terminal() {
        let mut f = TerminalFilter::default();
        // Colours pass; clearing the screen, moving the cursor, setting the
        // title and ringing the bell do not.
        assert_eq!(
            f.filter("\x1b[31mred\x1b[0m \x1b[2J\x1b[H\x1b]0;pwned\x07ok\x07\n"),
            "\x1b[31mred\x1b[0m ok\u{2407}\n"
        );
        // A sequence split between pieces is still recognised.
        assert_eq!(f.filter("a\x1b["), "a");
        assert_eq!(f.filter("1;32"), "");
        assert_eq!(f.filter("mgreen\x1b]8;;http://x\x1b"), "\x1b[1;32mgreen");
        assert_eq!(f.filter("\\link"), "link");
        // Binary bytes (decoded lossily upstream) become visible symbols.
        assert_eq!(
            f.filter("\0\x01\u{fffd}\x7f\u{9b}2J"),
            "\u{2400}\u{2401}\u{fffd}\u{2421}\u{fffd}2J"
        );
        // Progress bars keep their carriage returns and backspaces.
        assert_eq!(f.filter("10%\r20%\x08\t|\n"), "10%\r20%\x08\t|\n");
    }

    #[test]
    fn skipped_output_and_big_runs_are_summarised() {
        let id = RunId(1);
        let text = render(&[
            Event::OutputSkipped {
                id,
                bytes: 123_456_789,
            },
            Event::RunFinished {
                id,
                status: RunStatus::Ok,
                duration_ms: 2000,
                output_bytes: 200_000_000,
            },
        ]);
        assert!(
            text.contains("[… 123.5 MB of output skipped here"),
            "{text}"
        );
        assert!(
            text.contains("✓ ran in 2.0 s, 200.0 MB of output"),
            "{text}"
        );
        assert_eq!(human_bytes(999), "999 B");
        assert_eq!(human_bytes(1_500), "1.5 KB");
        assert_eq!(human_bytes(2_000_000_000), "2.0 GB");
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
