//! The model's Markdown, rendered for the terminal: headings, emphasis,
//! inline code, links, lists, block quotes, tables, rules, and fenced code
//! highlighted with its language shown. [`MarkdownStream`] renders a reply
//! as it streams: finished blocks once, for good, and the block still being
//! written again with each piece.

use anstyle::{AnsiColor, Color, Style};
use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use unicode_width::UnicodeWidthStr;

use crate::highlight::{Palette, highlight};
use crate::text::{Line, Span, wrap, wrap_code};

const fn fg(color: AnsiColor) -> Style {
    Style::new().fg_color(Some(Color::Ansi(color)))
}

/// The styles Markdown is drawn with.
#[derive(Debug, Clone, Copy)]
pub struct Theme {
    pub heading: Style,
    pub code: Style,
    pub link: Style,
    pub quote: Style,
    pub rule: Style,
    pub bullet: Style,
    pub palette: Palette,
}

impl Default for Theme {
    fn default() -> Self {
        Self {
            heading: fg(AnsiColor::Cyan).bold(),
            code: fg(AnsiColor::Yellow),
            link: fg(AnsiColor::Blue).underline(),
            quote: Style::new().dimmed(),
            rule: Style::new().dimmed(),
            bullet: fg(AnsiColor::Cyan),
            palette: Palette::Ansi256,
        }
    }
}

/// `markdown` laid out for `width` columns.
pub fn render(markdown: &str, width: usize, theme: &Theme) -> Vec<Line> {
    let width = width.max(10);
    let mut renderer = Renderer {
        theme,
        width,
        lines: Vec::new(),
        inline: Vec::new(),
        styles: Vec::new(),
        containers: Vec::new(),
        link: None,
        code_block: None,
        table: None,
        pending_blank: false,
    };
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for event in Parser::new_ext(markdown, options) {
        renderer.event(event);
    }
    renderer.flush_inline();
    renderer.lines
}

enum Container {
    Quote,
    /// A list: the next item's number (`None`: bullets).
    List(Option<u64>),
    /// An item, with the marker to print on its first line.
    Item {
        marker: Option<String>,
        indent: usize,
    },
}

struct Table {
    rows: Vec<Vec<Vec<Span>>>,
    cell: Vec<Span>,
    row: Vec<Vec<Span>>,
    header_rows: usize,
}

struct Renderer<'t> {
    theme: &'t Theme,
    width: usize,
    lines: Vec<Line>,
    /// The paragraph (or heading, or item text) being collected.
    inline: Vec<Span>,
    styles: Vec<Style>,
    containers: Vec<Container>,
    link: Option<String>,
    /// Language and text of the fenced code being collected.
    code_block: Option<(String, String)>,
    table: Option<Table>,
    /// A blank line goes before the next block.
    pending_blank: bool,
}

impl Renderer<'_> {
    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, add: impl Fn(Style) -> Style) {
        let style = add(self.style());
        self.styles.push(style);
    }

    fn text(&mut self, text: &str) {
        let style = self.style();
        if let Some(table) = &mut self.table {
            table.cell.push(Span::new(text, style));
        } else {
            self.inline.push(Span::new(text, style));
        }
    }

    /// The prefixes of the current containers: the first line's, the rest's.
    fn prefixes(&mut self) -> (Line, Line) {
        let mut first = Line::default();
        let mut rest = Line::default();
        for container in &mut self.containers {
            match container {
                Container::Quote => {
                    first.push(Span::new("│ ", self.theme.quote));
                    rest.push(Span::new("│ ", self.theme.quote));
                }
                Container::List(_) => {}
                Container::Item { marker, indent } => {
                    match marker.take() {
                        Some(m) => first.push(Span::new(m, self.theme.bullet)),
                        None => first.push(Span::plain(" ".repeat(*indent))),
                    }
                    rest.push(Span::plain(" ".repeat(*indent)));
                }
            }
        }
        (first, rest)
    }

    fn blank_if_pending(&mut self) {
        if self.pending_blank && !self.lines.is_empty() {
            let (_, rest) = self.prefixes_peek();
            self.lines.push(rest);
        }
        self.pending_blank = false;
    }

    /// The prefixes without consuming a pending item marker.
    fn prefixes_peek(&self) -> (Line, Line) {
        let mut rest = Line::default();
        for container in &self.containers {
            match container {
                Container::Quote => rest.push(Span::new("│", self.theme.quote)),
                Container::Item { indent, .. } => rest.push(Span::plain(" ".repeat(*indent))),
                Container::List(_) => {}
            }
        }
        // A blank line carries no trailing spaces.
        let text = rest.text();
        if text.trim().is_empty() {
            return (Line::default(), Line::default());
        }
        (rest.clone(), rest)
    }

    fn flush_inline(&mut self) {
        if self.inline.is_empty() {
            return;
        }
        let spans = std::mem::take(&mut self.inline);
        self.blank_if_pending();
        let (first, rest) = self.prefixes();
        self.lines.extend(wrap(&spans, self.width, &first, &rest));
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => {
                if let Some((_, code)) = &mut self.code_block {
                    code.push_str(&text);
                } else {
                    self.text(&text);
                }
            }
            Event::Code(code) => {
                let style = self.theme.code;
                if let Some(table) = &mut self.table {
                    table.cell.push(Span::new(code.to_string(), style));
                } else {
                    self.inline.push(Span::new(code.to_string(), style));
                }
            }
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => self.text("\n"),
            Event::Rule => {
                self.flush_inline();
                self.blank_if_pending();
                let (first, _) = self.prefixes();
                let mut line = first;
                let width = self.width.saturating_sub(line.width()).min(40);
                line.push(Span::new("─".repeat(width), self.theme.rule));
                self.lines.push(line);
                self.pending_blank = true;
            }
            Event::Html(html) | Event::InlineHtml(html) => self.text(&html),
            Event::TaskListMarker(done) => self.text(if done { "[x] " } else { "[ ] " }),
            Event::FootnoteReference(name) => self.text(&format!("[^{name}]")),
            Event::InlineMath(m) | Event::DisplayMath(m) => self.text(&m),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => {}
            Tag::Heading { level, .. } => {
                self.flush_inline();
                let theme = self.theme.heading;
                self.styles.push(match level {
                    HeadingLevel::H1 => theme.underline(),
                    _ => theme,
                });
            }
            Tag::BlockQuote(_) => {
                self.flush_inline();
                self.blank_if_pending();
                self.containers.push(Container::Quote);
            }
            Tag::CodeBlock(kind) => {
                self.flush_inline();
                let language = match kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split_whitespace().next().unwrap_or("").to_owned()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                self.code_block = Some((language, String::new()));
            }
            Tag::List(start) => {
                self.flush_inline();
                if !self
                    .containers
                    .iter()
                    .any(|c| matches!(c, Container::Item { .. }))
                {
                    self.blank_if_pending();
                }
                self.containers.push(Container::List(start));
            }
            Tag::Item => {
                self.flush_inline();
                let marker = match self.containers.last_mut() {
                    Some(Container::List(Some(n))) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ => "• ".to_owned(),
                };
                let indent = marker.width();
                self.containers.push(Container::Item {
                    marker: Some(marker),
                    indent,
                });
            }
            Tag::Emphasis => self.push_style(Style::italic),
            Tag::Strong => self.push_style(Style::bold),
            Tag::Strikethrough => self.push_style(Style::strikethrough),
            Tag::Link { dest_url, .. } => {
                let link = self.theme.link;
                self.styles.push(link);
                self.link = Some(dest_url.to_string());
            }
            Tag::Image { dest_url, .. } => {
                self.text("[image: ");
                self.link = Some(dest_url.to_string());
            }
            Tag::Table(_) => {
                self.flush_inline();
                self.table = Some(Table {
                    rows: Vec::new(),
                    cell: Vec::new(),
                    row: Vec::new(),
                    header_rows: 0,
                });
            }
            Tag::TableHead | Tag::TableRow => {}
            Tag::TableCell => {}
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush_inline();
                self.pending_blank = true;
            }
            TagEnd::Heading(_) => {
                self.styles.pop();
                self.flush_inline();
                self.pending_blank = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush_inline();
                self.containers.pop();
                self.pending_blank = true;
            }
            TagEnd::CodeBlock => {
                if let Some((language, code)) = self.code_block.take() {
                    self.blank_if_pending();
                    self.code(&language, &code);
                    self.pending_blank = true;
                }
            }
            TagEnd::List(_) => {
                self.flush_inline();
                self.containers.pop();
                self.pending_blank = !self
                    .containers
                    .iter()
                    .any(|c| matches!(c, Container::Item { .. }));
            }
            TagEnd::Item => {
                self.flush_inline();
                self.containers.pop();
                self.pending_blank = false;
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link => {
                self.styles.pop();
                if let Some(url) = self.link.take() {
                    let shown: String = self.inline.iter().map(|s| s.text.as_str()).collect();
                    if !shown.ends_with(url.as_str()) && !url.starts_with('#') {
                        let dim = Style::new().dimmed();
                        self.text_styled(&format!(" ({url})"), dim);
                    }
                }
            }
            TagEnd::Image => {
                if let Some(url) = self.link.take() {
                    self.text(&format!(" {url}]"));
                }
            }
            TagEnd::TableCell => {
                if let Some(table) = &mut self.table {
                    let cell = std::mem::take(&mut table.cell);
                    table.row.push(cell);
                }
            }
            TagEnd::TableHead => {
                if let Some(table) = &mut self.table {
                    let row = std::mem::take(&mut table.row);
                    table.rows.push(row);
                    table.header_rows = table.rows.len();
                }
            }
            TagEnd::TableRow => {
                if let Some(table) = &mut self.table {
                    let row = std::mem::take(&mut table.row);
                    table.rows.push(row);
                }
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.blank_if_pending();
                    self.render_table(&table);
                    self.pending_blank = true;
                }
            }
            _ => {}
        }
    }

    fn text_styled(&mut self, text: &str, style: Style) {
        if let Some(table) = &mut self.table {
            table.cell.push(Span::new(text, style));
        } else {
            self.inline.push(Span::new(text, style));
        }
    }

    /// A fenced code block: a rule with the language, the highlighted code.
    fn code(&mut self, language: &str, code: &str) {
        let (first, rest) = self.prefixes();
        let dim = Style::new().dimmed();
        let mut header = first;
        let label = if language.is_empty() {
            "──".to_owned()
        } else {
            format!("── {language} ")
        };
        let fill = 40usize.saturating_sub(label.width()).min(self.width);
        header.push(Span::new(format!("{label}{}", "─".repeat(fill)), dim));
        self.lines.push(header);
        let code = code.strip_suffix('\n').unwrap_or(code);
        for line in highlight(code, language, self.theme.palette) {
            // Long code lines are cut into screen lines, not reflowed.
            self.lines
                .extend(wrap_code(&line.spans, self.width, &rest, &rest));
        }
        let mut footer = rest;
        footer.push(Span::new("─".repeat(40.min(self.width)), dim));
        self.lines.push(footer);
    }

    fn render_table(&mut self, table: &Table) {
        let columns = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        if columns == 0 {
            return;
        }
        let cell_width = |cell: &Vec<Span>| -> usize { cell.iter().map(|s| s.text.width()).sum() };
        let mut widths = vec![0usize; columns];
        for row in &table.rows {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(cell_width(cell));
            }
        }
        // Shrink the widest columns until the table fits.
        let separators = 3 * columns.saturating_sub(1);
        while widths.iter().sum::<usize>() + separators > self.width {
            let Some((i, w)) = widths.iter().enumerate().max_by_key(|(_, w)| **w) else {
                break;
            };
            if *w <= 3 {
                break;
            }
            widths[i] -= 1;
        }
        let dim = Style::new().dimmed();
        let (first, rest) = self.prefixes();
        for (r, row) in table.rows.iter().enumerate() {
            let mut line = if r == 0 { first.clone() } else { rest.clone() };
            for (i, width) in widths.iter().enumerate() {
                if i > 0 {
                    line.push(Span::new(" │ ", dim));
                }
                let cell = row.get(i).cloned().unwrap_or_default();
                let (spans, used) = fit(&cell, *width);
                let header = r < table.header_rows;
                for span in spans {
                    let style = if header {
                        span.style.bold()
                    } else {
                        span.style
                    };
                    line.push(Span::new(span.text, style));
                }
                if i + 1 < widths.len() {
                    line.push(Span::plain(" ".repeat(width - used)));
                }
            }
            self.lines.push(line);
            if r + 1 == table.header_rows {
                let mut rule = rest.clone();
                let parts: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                rule.push(Span::new(parts.join("─┼─"), dim));
                self.lines.push(rule);
            }
        }
    }
}

/// Spans cut to `width` columns (with `…` when cut), and the columns used.
fn fit(spans: &[Span], width: usize) -> (Vec<Span>, usize) {
    let total: usize = spans.iter().map(|s| s.text.width()).sum();
    if total <= width {
        return (spans.to_vec(), total);
    }
    let mut out = Vec::new();
    let mut used = 0;
    'outer: for span in spans {
        let mut text = String::new();
        for c in span.text.chars() {
            let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
            if used + w + 1 > width {
                if !text.is_empty() {
                    out.push(Span::new(text, span.style));
                }
                break 'outer;
            }
            text.push(c);
            used += w;
        }
        out.push(Span::new(text, span.style));
    }
    out.push(Span::plain("…"));
    (out, used + 1)
}

/// A reply rendered while it streams. Finished blocks (text before a blank
/// line outside a code fence, or a closed fence) are rendered once, for
/// good; the rest is rendered again with each piece, for the live region.
#[derive(Debug, Default)]
pub struct MarkdownStream {
    text: String,
    /// Bytes of `text` already rendered for good.
    done: usize,
}

impl MarkdownStream {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a piece of the reply; returns the lines of blocks it finished.
    pub fn push(&mut self, delta: &str, width: usize, theme: &Theme) -> Vec<Line> {
        self.text.push_str(delta);
        let boundary = stable_boundary(&self.text[self.done..]);
        if boundary == 0 {
            return Vec::new();
        }
        let block = &self.text[self.done..self.done + boundary];
        self.done += boundary;
        if block.trim().is_empty() {
            return Vec::new();
        }
        let mut lines = render(block, width, theme);
        lines.push(Line::default());
        lines
    }

    /// The lines of the block still being written.
    pub fn pending(&self, width: usize, theme: &Theme) -> Vec<Line> {
        render(&self.text[self.done..], width, theme)
    }

    /// The reply is complete: the lines not yet rendered for good.
    pub fn finish(&mut self, width: usize, theme: &Theme) -> Vec<Line> {
        let rest = &self.text[self.done..];
        self.done = self.text.len();
        if rest.trim().is_empty() {
            return Vec::new();
        }
        render(rest, width, theme)
    }

    /// Forgets the reply (it started over).
    pub fn reset(&mut self) {
        self.text.clear();
        self.done = 0;
    }

    /// Whether nothing has been received.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }
}

/// Bytes of `text` that form finished blocks: up to the last blank line
/// outside a code fence, or to the end of a closing fence line.
fn stable_boundary(text: &str) -> usize {
    let mut boundary = 0;
    let mut in_fence: Option<String> = None;
    let mut offset = 0;
    let mut previous_blank = false;
    for line in text.split_inclusive('\n') {
        let complete = line.ends_with('\n');
        let trimmed = line.trim_start();
        let end = offset + line.len();
        if !complete {
            break;
        }
        match &in_fence {
            Some(fence) => {
                let t = trimmed.trim_end();
                if t.starts_with(fence.as_str())
                    && t.chars().all(|c| c == fence.as_bytes()[0] as char)
                {
                    in_fence = None;
                    boundary = end;
                }
            }
            None => {
                if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                    let marker = trimmed.chars().next().unwrap_or('`');
                    let count = trimmed.chars().take_while(|c| *c == marker).count();
                    in_fence = Some(marker.to_string().repeat(count));
                } else if line.trim().is_empty() {
                    if !previous_blank {
                        boundary = end;
                    }
                    previous_blank = true;
                    offset = end;
                    continue;
                }
            }
        }
        previous_blank = false;
        offset = end;
    }
    boundary
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn plain(lines: &[Line]) -> Vec<String> {
        lines.iter().map(Line::text).collect()
    }

    #[test]
    fn paragraphs_headings_and_lists() {
        let md = "# Title\n\nSome *emphasis* and **bold** and `code`.\n\n- one\n- two\n  - nested\n\n1. first\n2. second\n";
        assert_eq!(
            plain(&render(md, 80, &Theme::default())),
            [
                "Title",
                "",
                "Some emphasis and bold and code.",
                "",
                "• one",
                "• two",
                "  • nested",
                "",
                "1. first",
                "2. second",
            ]
        );
    }

    #[test]
    fn quotes_links_and_rules() {
        let md = "> quoted text\n> more\n\nSee [the docs](https://example.com/docs).\n\n---\n";
        assert_eq!(
            plain(&render(md, 80, &Theme::default())),
            [
                "│ quoted text more",
                "",
                "See the docs (https://example.com/docs).",
                "",
                &"─".repeat(40),
            ]
        );
    }

    #[test]
    fn code_blocks_show_their_language() {
        let md = "Run:\n\n```python\nprint(1)\n```\n";
        let lines = render(md, 80, &Theme::default());
        assert_eq!(
            plain(&lines),
            [
                "Run:",
                "",
                &format!("── python {}", "─".repeat(30)),
                "print(1)",
                &"─".repeat(40),
            ]
        );
    }

    #[test]
    fn tables_align_and_fit() {
        let md = "| name | size |\n|---|---|\n| a.csv | 10 |\n| longer-name.txt | 2000 |\n";
        assert_eq!(
            plain(&render(md, 80, &Theme::default())),
            [
                "name            │ size",
                "────────────────┼─────",
                "a.csv           │ 10",
                "longer-name.txt │ 2000",
            ]
        );
        let narrow = render(md, 14, &Theme::default());
        assert!(
            narrow.iter().all(|l| l.width() <= 14),
            "{:?}",
            plain(&narrow)
        );
    }

    #[test]
    fn a_stream_renders_finished_blocks_once() {
        let theme = Theme::default();
        let mut stream = MarkdownStream::new();
        assert!(stream.push("Hello **wor", 80, &theme).is_empty());
        // Unclosed emphasis shows as typed until it closes.
        assert_eq!(plain(&stream.pending(80, &theme)), ["Hello **wor"]);
        let done = stream.push("ld**.\n\nNext", 80, &theme);
        assert_eq!(plain(&done), ["Hello world.", ""]);
        assert_eq!(plain(&stream.pending(80, &theme)), ["Next"]);
        // A blank line inside a code fence does not end the block.
        assert!(
            stream
                .push(" para.\n```sh\necho a\n\n", 80, &theme)
                .is_empty()
        );
        let done = stream.push("echo b\n```\n", 80, &theme);
        assert_eq!(plain(&done)[0], "Next para.");
        assert!(plain(&done).contains(&"echo b".to_owned()));
        assert!(stream.finish(80, &theme).is_empty());
    }
}
