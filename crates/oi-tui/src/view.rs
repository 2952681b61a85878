//! Showing the agent's events to a person.
//!
//! [`View`] has two modes. **Plain** writes progress as lines: the model's
//! text as it streams, code in a frame, output as it arrives (stderr in
//! red), one line on how each run ended — readable in a log, a pipe or a
//! dumb terminal. **Live** (an interactive terminal) renders the model's
//! Markdown with highlighted code, and keeps a live region at the bottom —
//! the reply still being written, the unfinished line of output, a spinner
//! with the elapsed time — while everything else scrolls into the
//! terminal's own scrollback.

use std::io::{self, Write};
use std::time::{Duration, Instant};

use anstyle::{AnsiColor, Style};
use oi_protocol::{ApprovalPolicy, Event, OutputStream, RunStatus, SkipReason, StopReason};

use crate::highlight::{Palette, highlight};
use crate::markdown::{MarkdownStream, Theme};
use crate::text::Line;

const DIM: Style = Style::new().dimmed();
const BOLD: Style = Style::new().bold();
const RED: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Red)));
const YELLOW: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Yellow)));
const CYAN: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Cyan)));

/// How a [`View`] draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Lines only: no cursor movement, the reply's text as written.
    Plain,
    /// Markdown, highlighting, and a live region at the bottom.
    Live,
}

/// How images can be shown inline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageProtocol {
    /// kitty's graphics protocol (kitty, WezTerm, Ghostty).
    Kitty,
    /// iTerm2's inline images (iTerm2, WezTerm).
    ITerm,
    /// None: images are shown by their path.
    None,
}

impl ImageProtocol {
    /// What this terminal understands, judging by its environment.
    pub fn detect() -> Self {
        let var = |name: &str| std::env::var(name).unwrap_or_default();
        let term = var("TERM");
        let program = var("TERM_PROGRAM");
        if term.contains("kitty") || program == "ghostty" || !var("KITTY_WINDOW_ID").is_empty() {
            Self::Kitty
        } else if program == "iTerm.app" || program == "WezTerm" || var("LC_TERMINAL") == "iTerm2" {
            Self::ITerm
        } else {
            Self::None
        }
    }
}

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// How often the spinner moves on.
const SPINNER_FRAME: Duration = Duration::from_millis(80);

/// The live region is redrawn at most this often while text streams in
/// (about 30 frames a second): a fast model sends hundreds of pieces a
/// second, and redrawing for each would only make the terminal flicker.
/// Whatever waits is drawn by the next [`View::tick`] or permanent line.
pub const FRAME: Duration = Duration::from_millis(33);

/// Shows the agent's events (see the module docs). In plain mode, colours
/// are written as styles and dropped by the writer when it is not a
/// terminal or `NO_COLOR` is set (through `anstream`).
#[derive(Debug)]
pub struct View<W: Write> {
    out: W,
    mode: Mode,
    at_line_start: bool,
    /// Keeps the running code's output from driving the terminal, one per
    /// stream (stdout, stderr).
    filters: [TerminalFilter; 2],
    /// Whether any reply text was shown (so `exec` knows the answer was seen).
    pub streamed_text: bool,
    width: usize,
    height: usize,
    theme: Theme,
    images: ImageProtocol,
    /// Rows the live region takes now.
    live_rows: usize,
    reply: MarkdownStream,
    /// The reply's text, to tell code shown in it from code it did not show.
    reply_text: String,
    /// What is going on, and since when (the spinner line).
    status: Option<(String, Instant)>,
    /// When the live region was last drawn, and whether it is out of date.
    drawn_at: Option<Instant>,
    stale: bool,
    /// The unfinished last line of each output stream (live mode).
    partial: [String; 2],
    /// Whether the code last asked about was found risky (so a refusal
    /// without a terminal says why `--yes` was not enough).
    asked_risky: bool,
}

impl<W: Write> View<W> {
    /// A plain view (lines only).
    pub fn new(out: W) -> Self {
        Self::with_mode(out, Mode::Plain, 80, 24)
    }

    /// A view of `mode` for a terminal of `width` × `height`.
    pub fn with_mode(out: W, mode: Mode, width: usize, height: usize) -> Self {
        Self {
            out,
            mode,
            at_line_start: true,
            filters: [TerminalFilter::default(), TerminalFilter::default()],
            streamed_text: false,
            asked_risky: false,
            width: width.max(20),
            height: height.max(5),
            theme: Theme {
                palette: Palette::detect(),
                ..Theme::default()
            },
            images: ImageProtocol::None,
            live_rows: 0,
            reply: MarkdownStream::new(),
            reply_text: String::new(),
            status: None,
            drawn_at: None,
            stale: false,
            partial: [String::new(), String::new()],
        }
    }

    /// Shows images inline with `protocol`.
    pub fn with_images(mut self, protocol: ImageProtocol) -> Self {
        self.images = protocol;
        self
    }

    /// The colors of highlighted code.
    pub fn with_palette(mut self, palette: Palette) -> Self {
        self.theme.palette = palette;
        self
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The terminal was resized: the live region is drawn again to fit.
    pub fn resize(&mut self, width: usize, height: usize) -> io::Result<()> {
        self.begin_update()?;
        self.clear_live()?;
        self.width = width.max(20);
        self.height = height.max(5);
        self.draw_live()
    }

    /// Starts a synchronized update: terminals that know it show what
    /// follows at once when [`Self::draw_live`] ends it, so erasing and
    /// drawing the live region again never flickers (others ignore it).
    fn begin_update(&mut self) -> io::Result<()> {
        if self.mode == Mode::Live {
            self.out.write_all(b"\x1b[?2026h")?;
        }
        Ok(())
    }

    /// Draws what waits for the live region and moves the spinner on;
    /// call it every [`FRAME`] while [`Self::busy`].
    pub fn tick(&mut self) -> io::Result<()> {
        if self.mode == Mode::Live && (self.status.is_some() || self.stale) {
            self.begin_update()?;
            self.clear_live()?;
            self.draw_live()?;
        }
        Ok(())
    }

    /// Whether a spinner is showing or a redraw waits (the caller then
    /// ticks).
    pub fn busy(&self) -> bool {
        self.status.is_some() || self.stale
    }

    /// Redraws the live region, unless it was drawn less than a [`FRAME`]
    /// ago (then the next tick does).
    fn refresh_live(&mut self) -> io::Result<()> {
        if self.drawn_at.is_some_and(|at| at.elapsed() < FRAME) {
            self.stale = true;
            return Ok(());
        }
        self.begin_update()?;
        self.clear_live()?;
        self.draw_live()
    }

    fn write_raw(&mut self, text: &str) -> io::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        self.out.write_all(text.as_bytes())?;
        self.at_line_start = text.ends_with('\n');
        self.out.flush()
    }

    /// Writes permanent text: in live mode, above the live region.
    fn permanent(&mut self, text: &str) -> io::Result<()> {
        if self.mode == Mode::Plain {
            return self.write_raw(text);
        }
        self.begin_update()?;
        self.clear_live()?;
        // The terminal moves to the next line only with `\r\n` in raw mode.
        let text = text.replace("\r\n", "\n").replace('\n', "\r\n");
        self.write_raw(&text)?;
        self.draw_live()
    }

    fn ensure_line_start(&mut self) -> io::Result<()> {
        if !self.at_line_start {
            self.permanent("\n")?;
        }
        Ok(())
    }

    /// A whole line (or lines) in a style, starting on a fresh line.
    pub fn line(&mut self, style: Style, text: &str) -> io::Result<()> {
        self.ensure_line_start()?;
        let styled = format!("{style}{text}{style:#}\n");
        self.permanent(&styled)
    }

    /// Writes an error with its hint, the way every error is shown.
    pub fn error(&mut self, message: &str, hint: Option<&str>) -> io::Result<()> {
        self.ensure_line_start()?;
        let mut text = format!("{RED}{BOLD}error{BOLD:#}{RED:#}: {message}\n");
        if let Some(hint) = hint {
            text.push_str(&format!("{CYAN}hint{CYAN:#}: {hint}\n"));
        }
        self.permanent(&text)
    }

    /// Writes a piece of text as is (a prompt, a banner), with the live
    /// region out of the way.
    pub fn raw(&mut self, text: &str) -> io::Result<()> {
        self.clear_live()?;
        self.status = None;
        self.write_raw(text)
    }

    /// Rendered lines, for good.
    pub fn lines(&mut self, lines: &[Line]) -> io::Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        self.ensure_line_start()?;
        let mut text = String::new();
        for line in lines {
            text.push_str(&line.render(true));
            text.push('\n');
        }
        self.permanent(&text)
    }

    pub fn into_inner(self) -> W {
        self.out
    }

    /// Erases the live region (the cursor ends where it started).
    fn clear_live(&mut self) -> io::Result<()> {
        if self.live_rows == 0 {
            return Ok(());
        }
        let mut seq = String::from("\r");
        if self.live_rows > 1 {
            seq.push_str(&format!("\x1b[{}A", self.live_rows - 1));
        }
        seq.push_str("\x1b[J");
        self.live_rows = 0;
        self.out.write_all(seq.as_bytes())
    }

    /// Draws the live region: the reply's unfinished block, unfinished
    /// output lines, and the spinner. Nothing is left on screen below it,
    /// and each row fits the width, so it can be erased exactly.
    fn draw_live(&mut self) -> io::Result<()> {
        if self.mode != Mode::Live {
            return self.out.flush();
        }
        if !self.at_line_start {
            self.out.write_all(b"\x1b[?2026l")?;
            return self.out.flush();
        }
        self.drawn_at = Some(Instant::now());
        self.stale = false;
        let mut rows: Vec<String> = Vec::new();
        let width = self.width.saturating_sub(1);
        if self.status.is_some() {
            for line in self.reply.pending(width, &self.theme) {
                rows.push(line.render(true));
            }
        }
        for (i, partial) in self.partial.iter().enumerate() {
            if partial.is_empty() {
                continue;
            }
            let style = if i == 1 { RED } else { Style::new() };
            let cut = cut_to_width(partial, width);
            rows.push(format!("{style}{cut}{style:#}"));
        }
        if let Some((label, since)) = &self.status {
            let secs = since.elapsed().as_secs_f64();
            let frame = since.elapsed().as_millis() / SPINNER_FRAME.as_millis();
            let spinner = SPINNER[usize::try_from(frame).unwrap_or(0) % SPINNER.len()];
            let text = cut_to_width(
                &format!("{spinner} {label} · {secs:.1} s · Ctrl-C stops it"),
                width,
            );
            rows.push(format!(
                "{CYAN}{spinner}{CYAN:#}{DIM}{}{DIM:#}",
                &text[spinner.len()..]
            ));
        }
        // Never taller than the screen: the top would scroll away and could
        // not be erased.
        let max = self.height.saturating_sub(1).max(1);
        if rows.len() > max {
            rows.drain(..rows.len() - max);
        }
        // (`at_line_start` is about the text above the region, which ends
        // with a newline whenever the region is drawn.)
        self.live_rows = rows.len();
        if !rows.is_empty() {
            self.out.write_all(rows.join("\r\n").as_bytes())?;
        }
        self.out.write_all(b"\x1b[?2026l")?;
        self.out.flush()
    }

    fn set_status(&mut self, label: impl Into<String>) -> io::Result<()> {
        if self.mode != Mode::Live {
            return Ok(());
        }
        self.clear_live()?;
        self.status = Some((label.into(), Instant::now()));
        self.draw_live()
    }

    fn clear_status(&mut self) -> io::Result<()> {
        if self.status.is_none() {
            return Ok(());
        }
        self.clear_live()?;
        self.status = None;
        self.draw_live()
    }

    /// Shows an image inline, when the terminal can.
    fn inline_image(&mut self, path: &str) -> io::Result<()> {
        if self.mode != Mode::Live || self.images == ImageProtocol::None {
            return Ok(());
        }
        let Ok(bytes) = fs_err::read(path) else {
            return Ok(());
        };
        use base64::Engine as _;
        let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
        let columns = self.width.min(80);
        let seq = match self.images {
            ImageProtocol::Kitty => {
                let chunks: Vec<&str> = data
                    .as_bytes()
                    .chunks(4096)
                    .map(|c| std::str::from_utf8(c).unwrap_or(""))
                    .collect();
                let mut seq = String::new();
                for (i, chunk) in chunks.iter().enumerate() {
                    let more = u8::from(i + 1 < chunks.len());
                    if i == 0 {
                        seq.push_str(&format!(
                            "\x1b_Ga=T,f=100,c={columns},m={more};{chunk}\x1b\\"
                        ));
                    } else {
                        seq.push_str(&format!("\x1b_Gm={more};{chunk}\x1b\\"));
                    }
                }
                seq
            }
            ImageProtocol::ITerm => format!(
                "\x1b]1337;File=inline=1;size={};width={columns}:{data}\x07",
                bytes.len()
            ),
            ImageProtocol::None => return Ok(()),
        };
        self.ensure_line_start()?;
        self.permanent(&format!("{seq}\n"))
    }

    /// Live mode: a reply piece, rendered as Markdown.
    fn reply_delta(&mut self, delta: &str) -> io::Result<()> {
        self.reply_text.push_str(delta);
        let width = self.width.saturating_sub(1);
        let done = self.reply.push(delta, width, &self.theme);
        if done.is_empty() {
            return self.refresh_live();
        }
        self.lines(&done)
    }

    fn reply_done(&mut self) -> io::Result<()> {
        let width = self.width.saturating_sub(1);
        let rest = self.reply.finish(width, &self.theme);
        self.reply = MarkdownStream::new();
        self.lines(&rest)
    }

    /// Live mode: proposed code, highlighted, unless the reply showed it.
    fn code_box(&mut self, language: &str, code: &str) -> io::Result<()> {
        let dim = Style::new().dimmed();
        if !code.trim().is_empty() && self.reply_text.contains(code.trim()) {
            return self.line(dim, &format!("▶ {language}"));
        }
        let width = self.width.saturating_sub(1);
        let label = format!("── {language} ");
        let mut lines = vec![Line::styled(
            format!(
                "{label}{}",
                "─".repeat(40usize.saturating_sub(label.chars().count()))
            ),
            dim,
        )];
        for line in highlight(code, language, self.theme.palette) {
            lines.extend(crate::text::wrap_code(
                &line.spans,
                width,
                &Line::default(),
                &Line::default(),
            ));
        }
        lines.push(Line::styled("─".repeat(40), dim));
        self.lines(&lines)
    }

    /// Live mode: output, whole lines for good, the unfinished one live.
    fn output(&mut self, stream: OutputStream, text: &str) -> io::Result<()> {
        let index = usize::from(stream == OutputStream::Stderr);
        let style = if index == 1 { RED } else { Style::new() };
        self.partial[index].push_str(text);
        let Some(end) = self.partial[index].rfind('\n') else {
            return self.refresh_live();
        };
        let done: String = self.partial[index].drain(..=end).collect();
        let mut styled = String::new();
        for line in done.lines() {
            // A progress bar's redraws: only the last state is kept.
            let line = line.rsplit('\r').next().unwrap_or(line);
            styled.push_str(&format!("{style}{line}{style:#}\n"));
        }
        self.ensure_line_start()?;
        self.permanent(&styled)
    }

    fn flush_partial(&mut self) -> io::Result<()> {
        for index in 0..2 {
            if self.partial[index].is_empty() {
                continue;
            }
            let text = std::mem::take(&mut self.partial[index]);
            let style = if index == 1 { RED } else { Style::new() };
            let text = text.rsplit('\r').next().unwrap_or(&text).to_owned();
            self.ensure_line_start()?;
            self.permanent(&format!("{style}{text}{style:#}\n"))?;
        }
        Ok(())
    }
}

/// `text` cut to `width` columns.
fn cut_to_width(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > width {
            break;
        }
        used += w;
        out.push(c);
    }
    out
}

impl<W: Write> View<W> {
    /// Shows one event.
    pub fn event(&mut self, event: &Event) -> io::Result<()> {
        if matches!(
            event,
            Event::TaskComplete { .. } | Event::ApprovalRequested { .. } | Event::Error { .. }
        ) {
            if self.mode == Mode::Live && !self.reply.is_empty() {
                self.reply_done()?;
            }
            self.flush_partial()?;
            self.clear_status()?;
        }
        match event {
            Event::TextDelta { delta } => {
                self.streamed_text = true;
                match self.mode {
                    Mode::Plain => self.write_raw(delta)?,
                    Mode::Live => self.reply_delta(delta)?,
                }
            }
            Event::AssistantMessage { .. } => match self.mode {
                Mode::Plain => self.ensure_line_start()?,
                Mode::Live => {
                    self.reply_done()?;
                    self.clear_status()?;
                }
            },
            Event::TaskStarted | Event::ModelRequest { .. } => {
                self.reply_text.clear();
                self.set_status("thinking")?;
            }
            Event::ReplyRestarted => {
                self.reply = MarkdownStream::new();
                self.line(
                YELLOW,
                "(the connection broke and the reply started over; it continues here)",
            )?;
            }
            Event::CodeProposed { language, code, .. } if self.mode == Mode::Live => {
                self.clear_status()?;
                self.code_box(language, code)?;
            }
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
            Event::ApprovalRequested { risks, .. } => {
                self.asked_risky = !risks.is_empty();
                for risk in risks {
                    self.line(RED, &format!("⚠ risky: {risk}"))?;
                }
            }
            Event::RunStarted { language, .. } => {
                self.filters = [TerminalFilter::default(), TerminalFilter::default()];
                self.set_status(format!("running {language}"))?;
            }
            Event::OutputDelta { stream, text, .. } if self.mode == Mode::Live => {
                let index = usize::from(*stream == OutputStream::Stderr);
                let text = self.filters[index].filter(text);
                self.output(*stream, &text)?;
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
                self.flush_partial()?;
                self.clear_status()?;
                self.line(
                    YELLOW,
                    "(the program waits for input: type a line and press Enter; Ctrl-C stops it)",
                )?;
            }
            Event::Image { path, .. } => {
                self.flush_partial()?;
                self.inline_image(path)?;
                self.line(CYAN, &format!("image: {path}"))?;
            }
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
                self.flush_partial()?;
                self.clear_status()?;
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
                    SkipReason::NoApprover if self.asked_risky => {
                        "– not run: risky code needs a person's approval, even with `--yes`, and there is no terminal to ask".to_owned()
                    }
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
                match policy {
                    ApprovalPolicy::Auto => {
                        "auto-run on: code runs without asking, except risky code"
                    }
                    ApprovalPolicy::Ask => "auto-run off: every run asks first",
                    ApprovalPolicy::Never => "code runs without asking, risky code included",
                },
            )?,
            Event::SessionReset => self.line(
                DIM,
                "new conversation: the history is cleared and the kernels restart on the next run",
            )?,
            Event::Compacted {
                before_tokens,
                after_tokens,
                context_window,
                shrunk_outputs,
                summarized_messages,
            } => {
                let mut what = Vec::new();
                if *shrunk_outputs > 0 {
                    what.push(format!("{shrunk_outputs} old outputs cut to head and tail"));
                }
                if *summarized_messages > 0 {
                    what.push(format!("{summarized_messages} earlier messages summarized"));
                }
                self.line(
                    DIM,
                    &format!(
                        "context: about {before_tokens} → {after_tokens} tokens of {context_window} ({})",
                        what.join(", ")
                    ),
                )?;
            }
            Event::Stats { .. } => {
                let text = [context_text(event), cost_text(event)]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join("\n");
                self.line(DIM, &text)?;
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
            Event::TaskComplete {
                reason: StopReason::FailSafe,
                ..
            } => self.error(
                "stopped: the mouse was moved into a corner of the screen (the OS-mode fail-safe)",
                Some("move the mouse away from the corners before the next task"),
            )?,
            Event::TaskComplete { .. }
            | Event::SessionConfigured { .. }
            | Event::Usage { .. }
            | Event::ShutdownComplete => {}
        }
        Ok(())
    }
}

/// `512 B`, `3.4 KB`, `200.0 MB`, `1.2 GB`.
/// What `/tokens` says of a `Stats` event: the context used against the
/// window, and what the next request would cost (`None` for other events).
pub fn context_text(stats: &Event) -> Option<String> {
    let Event::Stats {
        context_tokens,
        context_window,
        next_request_usd,
        messages,
        ..
    } = stats
    else {
        return None;
    };
    let window = match context_window {
        Some(w) => format!(
            "{context_tokens} of {w} tokens ({:.0}% of the context window)",
            *context_tokens as f64 * 100.0 / f64::from((*w).max(1))
        ),
        None => format!("{context_tokens} tokens (the model's context window is unknown)"),
    };
    let next = next_request_usd.map_or_else(
        || "unknown (no prices for this model)".to_owned(),
        |c| format!("about ${c:.4}"),
    );
    Some(format!(
        "context: {window}, {messages} messages\nnext request: {next}"
    ))
}

/// What `/cost` says of a `Stats` event: the session's requests, tokens
/// and cost (`None` for other events).
pub fn cost_text(stats: &Event) -> Option<String> {
    let Event::Stats {
        total,
        cost_usd,
        requests,
        ..
    } = stats
    else {
        return None;
    };
    let cost = cost_usd.map_or_else(
        || "unknown (no prices for this model)".to_owned(),
        |c| format!("${c:.4}"),
    );
    Some(format!(
        "this session: {requests} requests, {} tokens in ({} from the cache), {} out\ncost: {cost}",
        total.input_tokens, total.cached_input_tokens, total.output_tokens
    ))
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use oi_protocol::RunId;
    use pretty_assertions::assert_eq;

    fn render(events: &[Event]) -> String {
        let mut r = View::new(Vec::new());
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
}
