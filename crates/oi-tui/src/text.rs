//! Styled text laid out for a terminal of a given width: spans with
//! styles, word wrapping by display width (wide CJK characters and emoji
//! count two columns; they may break anywhere), and rendering to ANSI.

use anstyle::Style;
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// A run of text in one style.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub text: String,
    pub style: Style,
}

impl Span {
    pub fn new(text: impl Into<String>, style: Style) -> Self {
        Self {
            text: text.into(),
            style,
        }
    }

    pub fn plain(text: impl Into<String>) -> Self {
        Self::new(text, Style::new())
    }
}

/// One screen line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Line {
    pub spans: Vec<Span>,
}

impl Line {
    pub fn new(spans: Vec<Span>) -> Self {
        Self { spans }
    }

    pub fn plain(text: impl Into<String>) -> Self {
        Self::new(vec![Span::plain(text)])
    }

    pub fn styled(text: impl Into<String>, style: Style) -> Self {
        Self::new(vec![Span::new(text, style)])
    }

    /// Display columns.
    pub fn width(&self) -> usize {
        self.spans.iter().map(|s| s.text.width()).sum()
    }

    pub fn push(&mut self, span: Span) {
        if span.text.is_empty() {
            return;
        }
        match self.spans.last_mut() {
            Some(last) if last.style == span.style => last.text.push_str(&span.text),
            _ => self.spans.push(span),
        }
    }

    /// The text without styles.
    pub fn text(&self) -> String {
        self.spans.iter().map(|s| s.text.as_str()).collect()
    }

    /// The line with ANSI styles (or without, when `color` is false).
    pub fn render(&self, color: bool) -> String {
        let mut out = String::new();
        for span in &self.spans {
            if color && span.style != Style::new() {
                out.push_str(&format!("{}{}{:#}", span.style, span.text, span.style));
            } else {
                out.push_str(&span.text);
            }
        }
        out
    }
}

/// Wraps styled text into lines of at most `width` columns. The first line
/// starts after `first_prefix`, the others after `rest_prefix` (indents,
/// bullets, quote bars); breaks fall between words where possible, and
/// spaces at a break are dropped.
pub fn wrap(spans: &[Span], width: usize, first_prefix: &Line, rest_prefix: &Line) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut current = first_prefix.clone();
    let mut current_width = first_prefix.width();
    let mut has_words = false;
    // Spaces are held back until a word follows on the same line.
    let mut pending_space: Option<Span> = None;
    for span in spans {
        for (piece, is_space) in pieces(&span.text) {
            if piece == "\n" {
                lines.push(std::mem::replace(&mut current, rest_prefix.clone()));
                current_width = rest_prefix.width();
                has_words = false;
                pending_space = None;
                continue;
            }
            if is_space {
                if has_words {
                    pending_space = Some(Span::new(piece, span.style));
                }
                continue;
            }
            let piece_width = piece.width();
            let space_width = pending_space.as_ref().map_or(0, |s| s.text.width());
            if has_words && current_width + space_width + piece_width > width {
                lines.push(std::mem::replace(&mut current, rest_prefix.clone()));
                current_width = rest_prefix.width();
                pending_space = None;
            } else if let Some(space) = pending_space.take() {
                current_width += space.text.width();
                current.push(space);
            }
            if current_width + piece_width > width {
                // A word longer than a line: break it between graphemes.
                for grapheme in piece.graphemes(true) {
                    let w = grapheme.width();
                    if current_width + w > width && current_width > rest_prefix.width() {
                        lines.push(std::mem::replace(&mut current, rest_prefix.clone()));
                        current_width = rest_prefix.width();
                    }
                    current.push(Span::new(grapheme, span.style));
                    current_width += w;
                }
            } else {
                current.push(Span::new(piece, span.style));
                current_width += piece_width;
            }
            has_words = true;
        }
    }
    lines.push(current);
    lines
}

/// Lays out a line of code: every space kept (indentation matters), tabs
/// as four spaces, and a line longer than `width` cut between graphemes
/// rather than reflowed; the continuations start after `rest_prefix`.
pub fn wrap_code(
    spans: &[Span],
    width: usize,
    first_prefix: &Line,
    rest_prefix: &Line,
) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut current = first_prefix.clone();
    let mut current_width = first_prefix.width();
    for span in spans {
        let text = span.text.replace('\t', "    ");
        let mut run = String::new();
        for grapheme in text.graphemes(true) {
            if grapheme == "\n" {
                current.push(Span::new(std::mem::take(&mut run), span.style));
                lines.push(std::mem::replace(&mut current, rest_prefix.clone()));
                current_width = rest_prefix.width();
                continue;
            }
            let w = grapheme.width();
            if current_width + w > width && current_width > rest_prefix.width() {
                current.push(Span::new(std::mem::take(&mut run), span.style));
                lines.push(std::mem::replace(&mut current, rest_prefix.clone()));
                current_width = rest_prefix.width();
            }
            run.push_str(grapheme);
            current_width += w;
        }
        if !run.is_empty() {
            current.push(Span::new(run, span.style));
        }
    }
    lines.push(current);
    lines
}

/// Splits text into words, runs of spaces, newlines, and single wide
/// characters (which may break anywhere, as in CJK text).
fn pieces(text: &str) -> Vec<(&str, bool)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut kind: Option<bool> = None;
    for (i, g) in text.grapheme_indices(true) {
        if g == "\n" {
            if start < i {
                out.push((&text[start..i], kind == Some(true)));
            }
            out.push(("\n", false));
            start = i + g.len();
            kind = None;
            continue;
        }
        let space = g == " " || g == "\t";
        let wide = !space && g.width() >= 2;
        if wide {
            if start < i {
                out.push((&text[start..i], kind == Some(true)));
            }
            out.push((&text[i..i + g.len()], false));
            start = i + g.len();
            kind = None;
            continue;
        }
        match kind {
            Some(k) if k == space => {}
            Some(_) => {
                out.push((&text[start..i], kind == Some(true)));
                start = i;
                kind = Some(space);
            }
            None => {
                start = i;
                kind = Some(space);
            }
        }
    }
    if start < text.len() {
        out.push((&text[start..], kind == Some(true)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn texts(lines: &[Line]) -> Vec<String> {
        lines.iter().map(Line::text).collect()
    }

    #[test]
    fn code_keeps_its_indentation_and_is_cut_not_reflowed() {
        let spans = [Span::plain("    if x:")];
        let lines = wrap_code(&spans, 20, &Line::default(), &Line::default());
        assert_eq!(texts(&lines), ["    if x:"]);
        let spans = [Span::plain("\tprint('a long line of code here')")];
        let bar = Line::plain("│ ");
        let lines = wrap_code(&spans, 16, &bar, &bar);
        assert_eq!(
            texts(&lines),
            ["│     print('a l", "│ ong line of co", "│ de here')"]
        );
        assert!(lines.iter().all(|l| l.width() <= 16));
    }

    #[test]
    fn wraps_between_words_within_the_width() {
        let spans = [Span::plain("the quick brown fox jumps over the lazy dog")];
        let lines = wrap(&spans, 15, &Line::default(), &Line::default());
        assert_eq!(
            texts(&lines),
            ["the quick brown", "fox jumps over", "the lazy dog"]
        );
        assert!(lines.iter().all(|l| l.width() <= 15));
    }

    #[test]
    fn prefixes_start_each_line() {
        let spans = [Span::plain("one two three four five six")];
        let lines = wrap(&spans, 12, &Line::plain("• "), &Line::plain("  "));
        assert_eq!(texts(&lines), ["• one two", "  three four", "  five six"]);
    }

    #[test]
    fn wide_characters_count_two_columns_and_break_anywhere() {
        let spans = [Span::plain("日本語のテキストを折り返す")];
        let lines = wrap(&spans, 10, &Line::default(), &Line::default());
        assert_eq!(texts(&lines), ["日本語のテ", "キストを折", "り返す"]);
        assert!(lines.iter().all(|l| l.width() <= 10));
        let emoji = [Span::plain("ok 👍👍👍 done")];
        let lines = wrap(&emoji, 6, &Line::default(), &Line::default());
        assert!(lines.iter().all(|l| l.width() <= 6), "{:?}", texts(&lines));
    }

    #[test]
    fn long_words_are_split_and_styles_kept() {
        let bold = Style::new().bold();
        let spans = [Span::new("abcdefghij", bold), Span::plain(" end")];
        let lines = wrap(&spans, 4, &Line::default(), &Line::default());
        assert_eq!(texts(&lines), ["abcd", "efgh", "ij", "end"]);
        assert_eq!(lines[0].spans[0].style, bold);
        assert_eq!(lines[0].render(true), format!("{bold}abcd{bold:#}"));
        assert_eq!(lines[0].render(false), "abcd");
    }

    #[test]
    fn newlines_in_text_break_lines() {
        let spans = [Span::plain("a\nb c")];
        let lines = wrap(&spans, 80, &Line::plain("> "), &Line::plain("> "));
        assert_eq!(texts(&lines), ["> a", "> b c"]);
    }
}
