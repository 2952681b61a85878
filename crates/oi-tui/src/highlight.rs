//! Syntax highlighting of code with syntect (its built-in grammars and
//! themes, pure Rust regexes). Loading the grammars takes tens of
//! milliseconds, so [`preload`] starts it in the background at start-up,
//! off the path to the first prompt.

use std::sync::OnceLock;

use anstyle::{Color, RgbColor, Style};
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, Theme, ThemeSet};
use syntect::parsing::SyntaxSet;

use crate::text::{Line, Span};

struct Assets {
    syntaxes: SyntaxSet,
    theme: Theme,
}

static ASSETS: OnceLock<Assets> = OnceLock::new();

fn assets() -> &'static Assets {
    ASSETS.get_or_init(|| {
        let syntaxes = SyntaxSet::load_defaults_newlines();
        let mut themes = ThemeSet::load_defaults();
        let theme = themes
            .themes
            .remove("base16-ocean.dark")
            .or_else(|| themes.themes.into_values().next())
            .unwrap_or_default();
        Assets { syntaxes, theme }
    })
}

/// Loads the grammars on a background thread.
pub fn preload() {
    std::thread::spawn(|| {
        let _ = assets();
    });
}

/// How colors reach the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Palette {
    /// 24-bit color (`COLORTERM=truecolor`).
    TrueColor,
    /// The 256-color palette.
    Ansi256,
}

impl Palette {
    /// What this terminal supports, judging by `COLORTERM`.
    pub fn detect() -> Self {
        match std::env::var("COLORTERM").as_deref() {
            Ok("truecolor" | "24bit") => Self::TrueColor,
            _ => Self::Ansi256,
        }
    }
}

/// The language names syntect knows under other names.
fn syntax_name(language: &str) -> &str {
    match language.to_ascii_lowercase().as_str() {
        "shell" | "sh" | "zsh" | "bash" | "console" => "bash",
        "javascript" | "js" | "node" | "nodejs" => "js",
        "python" | "py" | "python3" => "py",
        "ruby" | "rb" => "rb",
        "r" => "r",
        "perl" | "pl" => "pl",
        "lua" => "lua",
        "php" => "php",
        // File edits are shown as unified diffs.
        "edit" => "diff",
        _ => language,
    }
}

/// `code` highlighted as `language`, one [`Line`] per source line; plain
/// when the language is unknown.
pub fn highlight(code: &str, language: &str, palette: Palette) -> Vec<Line> {
    let assets = assets();
    let name = syntax_name(language);
    let syntax = assets
        .syntaxes
        .find_syntax_by_token(name)
        .or_else(|| assets.syntaxes.find_syntax_by_extension(name));
    let Some(syntax) = syntax else {
        return code.lines().map(Line::plain).collect();
    };
    let mut highlighter = HighlightLines::new(syntax, &assets.theme);
    let mut lines = Vec::new();
    for source in code.split_inclusive('\n') {
        let Ok(regions) = highlighter.highlight_line(source, &assets.syntaxes) else {
            lines.push(Line::plain(source.trim_end_matches('\n')));
            continue;
        };
        let mut line = Line::default();
        for (style, text) in regions {
            let text = text.trim_end_matches('\n');
            if text.is_empty() {
                continue;
            }
            line.push(Span::new(text, convert(style, palette)));
        }
        lines.push(line);
    }
    if code.is_empty() {
        lines.push(Line::default());
    }
    lines
}

fn convert(style: syntect::highlighting::Style, palette: Palette) -> Style {
    let fg = style.foreground;
    let color = match palette {
        Palette::TrueColor => Color::Rgb(RgbColor(fg.r, fg.g, fg.b)),
        Palette::Ansi256 => Color::Ansi256(anstyle::Ansi256Color(to_256(fg.r, fg.g, fg.b))),
    };
    let mut out = Style::new().fg_color(Some(color));
    if style.font_style.contains(FontStyle::BOLD) {
        out = out.bold();
    }
    if style.font_style.contains(FontStyle::ITALIC) {
        out = out.italic();
    }
    out
}

/// The nearest color of the 6×6×6 cube (or gray ramp) of the 256 palette.
fn to_256(r: u8, g: u8, b: u8) -> u8 {
    let level = |c: u8| -> u8 {
        if c < 48 {
            0
        } else if c < 115 {
            1
        } else {
            (c - 35) / 40
        }
    };
    if r == g && g == b {
        if r < 8 {
            return 16;
        }
        if r > 248 {
            return 231;
        }
        return 232 + ((u16::from(r) - 8) * 24 / 247) as u8;
    }
    16 + 36 * level(r) + 6 * level(g) + level(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_languages_are_colored_and_keep_their_text() {
        let code = "def f(x):\n    return x + 1\n";
        let lines = highlight(code, "python", Palette::TrueColor);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].text(), "def f(x):");
        assert_eq!(lines[1].text(), "    return x + 1");
        let styles: std::collections::HashSet<String> = lines[0]
            .spans
            .iter()
            .map(|s| format!("{}", s.style))
            .collect();
        assert!(styles.len() > 1, "several colors on one line");
        for language in [
            "shell",
            "javascript",
            "ruby",
            "r",
            "perl",
            "lua",
            "php",
            "zsh",
        ] {
            let lines = highlight("x = 1", language, Palette::Ansi256);
            assert_eq!(lines[0].text(), "x = 1", "{language}");
        }
    }

    #[test]
    fn file_edits_are_colored_as_diffs() {
        let lines = highlight("--- a/x\n+++ b/x\n-old\n+new\n", "edit", Palette::TrueColor);
        assert_eq!(lines[3].text(), "+new");
        let style = |n: usize| format!("{}", lines[n].spans[0].style);
        assert_ne!(style(2), style(3), "removed and added lines differ");
        assert_ne!(lines[3].spans[0].style, Line::plain("+new").spans[0].style);
    }

    #[test]
    fn unknown_languages_are_plain() {
        let lines = highlight("a b\nc", "klingon", Palette::Ansi256);
        assert_eq!(lines, [Line::plain("a b"), Line::plain("c")]);
    }

    #[test]
    fn the_256_palette_is_approximated() {
        assert_eq!(to_256(0, 0, 0), 16);
        assert_eq!(to_256(255, 255, 255), 231);
        assert_eq!(to_256(255, 0, 0), 196);
    }
}
