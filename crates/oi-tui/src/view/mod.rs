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

mod events;

pub use events::{context_text, cost_text, human_bytes};

use std::io::{self, Write};
use std::time::{Duration, Instant};

use anstyle::{AnsiColor, Style};
use oi_protocol::OutputStream;

use crate::filter::TerminalFilter;
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
    /// The model's reasoning not yet shown (its unfinished line), and
    /// whether any of this reply's reasoning was shown.
    thought: String,
    thinking: bool,
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
            thought: String::new(),
            thinking: false,
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
