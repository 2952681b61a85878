//! Small dialogs read key by key: the answer to an approval, and a
//! filterable picker (models, saved conversations).

use std::io::{self, Write};

use anstyle::{AnsiColor, Color, Style};
use crossterm::event::{self, Event as TermEvent, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use crossterm::terminal;

use crate::text::{Line, Span};

/// The answer to "run this code?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Yes,
    No,
    /// Yes, and to the rest of the session (risky code still asks).
    Always,
    Edit,
    /// Ctrl-C: stop the task.
    Interrupt,
}

/// Raw mode for the life of the guard.
struct RawMode;

impl RawMode {
    fn on() -> io::Result<Self> {
        terminal::enable_raw_mode()?;
        Ok(Self)
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = terminal::disable_raw_mode();
    }
}

fn next_key() -> io::Result<KeyEvent> {
    loop {
        if let TermEvent::Key(key) = event::read()?
            && key.kind != KeyEventKind::Release
        {
            return Ok(key);
        }
    }
}

/// What a key means at the approval prompt (`None`: not an answer).
pub fn decision_for(key: &KeyEvent) -> Option<Decision> {
    if key.modifiers.contains(KeyModifiers::CONTROL) {
        return match key.code {
            KeyCode::Char('c' | 'd') => Some(Decision::Interrupt),
            _ => None,
        };
    }
    match key.code {
        KeyCode::Char('y' | 'Y') => Some(Decision::Yes),
        KeyCode::Char('n' | 'N') | KeyCode::Esc => Some(Decision::No),
        KeyCode::Char('a' | 'A') => Some(Decision::Always),
        KeyCode::Char('e' | 'E') => Some(Decision::Edit),
        _ => None,
    }
}

/// The question of the approval dialog, under the code and the risk
/// classifier's notes: the language, the sandbox the code will run in,
/// and the answer keys.
/// A screen action (language `computer`) or an MCP call is asked about as
/// such, without the sandbox, which does not apply to it; screen actions
/// and file edits cannot be edited.
pub fn approval_question(language: &str, sandbox: &str) -> Line {
    let dim = Style::new().dimmed();
    let cyan = Style::new().fg_color(Some(Color::Ansi(AnsiColor::Cyan)));
    let key = Style::new().bold();
    let (question, editable) = oi_protocol::approval_question(language);
    let mut line =
        if language == oi_protocol::SCREEN_LANGUAGE || language == oi_protocol::MCP_LANGUAGE {
            // The sandbox does not apply to these.
            Line::new(vec![Span::new(question, cyan.bold()), Span::plain("  ")])
        } else {
            Line::new(vec![
                Span::new(question, cyan.bold()),
                Span::new(format!(" (sandbox: {sandbox})"), dim),
                Span::plain("  "),
            ])
        };
    let keys: &[(&str, &str)] = if !editable {
        &[("y", "es"), ("n", "o"), ("a", "lways")]
    } else {
        &[("y", "es"), ("n", "o"), ("a", "lways"), ("e", "dit")]
    };
    for &(k, rest) in keys {
        line.push(Span::plain("["));
        line.push(Span::new(k, key));
        line.push(Span::plain(format!("]{rest} ")));
    }
    line.push(Span::new("Esc: no ", dim));
    line
}

/// Waits for an answer key (others are ignored).
pub fn read_decision() -> io::Result<Decision> {
    let _raw = RawMode::on()?;
    loop {
        if let Some(decision) = decision_for(&next_key()?) {
            return Ok(decision);
        }
    }
}

/// The state of a picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picker {
    pub title: String,
    pub items: Vec<String>,
    pub filter: String,
    /// Index into the filtered items.
    pub selected: usize,
    /// Marked in the list (e.g. the model in use).
    pub current: Option<String>,
}

/// Rows of items shown at once.
const VISIBLE: usize = 10;

impl Picker {
    pub fn new(title: impl Into<String>, items: Vec<String>, current: Option<String>) -> Self {
        let selected = current
            .as_ref()
            .and_then(|c| items.iter().position(|i| i == c))
            .unwrap_or(0);
        Self {
            title: title.into(),
            items,
            filter: String::new(),
            selected,
            current,
        }
    }

    /// The items matching the filter (case-insensitive, anywhere).
    pub fn filtered(&self) -> Vec<&String> {
        let filter = self.filter.to_lowercase();
        self.items
            .iter()
            .filter(|i| i.to_lowercase().contains(&filter))
            .collect()
    }

    /// Handles a key: `Some(Some(item))` picked, `Some(None)` cancelled,
    /// `None` still picking.
    pub fn key(&mut self, key: &KeyEvent) -> Option<Option<String>> {
        let count = self.filtered().len();
        match key.code {
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                return Some(None);
            }
            KeyCode::Esc => return Some(None),
            KeyCode::Enter => {
                if self.filter.trim().is_empty() && count == 0 {
                    return Some(None);
                }
                // With no match, what was typed is taken as a name.
                let picked = self
                    .filtered()
                    .get(self.selected)
                    .map(|s| (*s).clone())
                    .unwrap_or_else(|| self.filter.trim().to_owned());
                return Some(Some(picked));
            }
            KeyCode::Up => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down if self.selected + 1 < count => self.selected += 1,
            KeyCode::Backspace => {
                self.filter.pop();
                self.selected = 0;
            }
            KeyCode::Char(c) => {
                self.filter.push(c);
                self.selected = 0;
            }
            _ => {}
        }
        None
    }

    /// The picker as screen lines, at most `width` columns each.
    pub fn render(&self, width: usize) -> Vec<Line> {
        let dim = Style::new().dimmed();
        let cyan = Style::new().fg_color(Some(Color::Ansi(AnsiColor::Cyan)));
        let mut lines = vec![
            Line::new(vec![
                Span::new(self.title.clone(), Style::new().bold()),
                Span::new(
                    " — type to filter, ↑↓ to move, Enter to pick, Esc to cancel",
                    dim,
                ),
            ]),
            Line::new(vec![
                Span::new("filter: ", dim),
                Span::plain(self.filter.clone()),
            ]),
        ];
        let filtered = self.filtered();
        if filtered.is_empty() {
            lines.push(Line::styled(
                if self.filter.is_empty() {
                    "  (nothing to pick)".to_owned()
                } else {
                    format!("  no match; Enter uses \"{}\"", self.filter)
                },
                dim,
            ));
        }
        // A window of items around the selection.
        let first = self.selected.saturating_sub(VISIBLE - 1);
        for (i, item) in filtered.iter().enumerate().skip(first).take(VISIBLE) {
            let selected = i == self.selected;
            let marker = if selected { "› " } else { "  " };
            let current = if self.current.as_deref() == Some(item.as_str()) {
                " (current)"
            } else {
                ""
            };
            let style = if selected { cyan.bold() } else { Style::new() };
            lines.push(Line::new(vec![
                Span::new(marker, cyan),
                Span::new((*item).clone(), style),
                Span::new(current, dim),
            ]));
        }
        if filtered.len() > VISIBLE {
            lines.push(Line::styled(format!("  ({} in all)", filtered.len()), dim));
        }
        for line in &mut lines {
            *line = fit(line, width);
        }
        lines
    }
}

fn fit(line: &Line, width: usize) -> Line {
    if line.width() <= width {
        return line.clone();
    }
    let mut out = Line::default();
    let mut used = 0;
    for span in &line.spans {
        let mut text = String::new();
        for c in span.text.chars() {
            let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
            if used + w > width {
                break;
            }
            used += w;
            text.push(c);
        }
        out.push(Span::new(text, span.style));
    }
    out
}

/// Shows `picker` below the cursor and lets the user pick; the picker is
/// erased when done.
pub fn pick<W: Write>(out: &mut W, mut picker: Picker) -> io::Result<Option<String>> {
    let _raw = RawMode::on()?;
    let mut drawn = 0usize;
    loop {
        let width = terminal::size()
            .map_or(80, |(w, _)| usize::from(w))
            .saturating_sub(1);
        erase(out, drawn)?;
        let lines = picker.render(width);
        let text: Vec<String> = lines.iter().map(|l| l.render(true)).collect();
        out.write_all(text.join("\r\n").as_bytes())?;
        out.flush()?;
        drawn = lines.len();
        if let Some(result) = picker.key(&next_key()?) {
            erase(out, drawn)?;
            out.flush()?;
            return Ok(result);
        }
    }
}

/// Erases `rows` rows drawn from the current line upward.
fn erase<W: Write>(out: &mut W, rows: usize) -> io::Result<()> {
    if rows == 0 {
        return Ok(());
    }
    let mut seq = String::from("\r");
    if rows > 1 {
        seq.push_str(&format!("\x1b[{}A", rows - 1));
    }
    seq.push_str("\x1b[J");
    out.write_all(seq.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn keys_answer_the_approval() {
        assert_eq!(decision_for(&key(KeyCode::Char('y'))), Some(Decision::Yes));
        assert_eq!(decision_for(&key(KeyCode::Esc)), Some(Decision::No));
        assert_eq!(
            decision_for(&key(KeyCode::Char('a'))),
            Some(Decision::Always)
        );
        assert_eq!(decision_for(&key(KeyCode::Char('e'))), Some(Decision::Edit));
        assert_eq!(decision_for(&key(KeyCode::Enter)), None);
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(decision_for(&ctrl_c), Some(Decision::Interrupt));
    }

    #[test]
    fn typing_filters_and_enter_picks() {
        let items = vec![
            "gpt-5".to_owned(),
            "gpt-5-mini".to_owned(),
            "claude-sonnet-5".to_owned(),
        ];
        let mut p = Picker::new("Model", items, Some("gpt-5".to_owned()));
        for c in "mini".chars() {
            assert_eq!(p.key(&key(KeyCode::Char(c))), None);
        }
        assert_eq!(p.filtered(), [&"gpt-5-mini".to_owned()]);
        assert_eq!(
            p.key(&key(KeyCode::Enter)),
            Some(Some("gpt-5-mini".to_owned()))
        );

        let mut p = Picker::new("Model", vec!["a".into(), "b".into()], None);
        p.key(&key(KeyCode::Down));
        assert_eq!(p.key(&key(KeyCode::Enter)), Some(Some("b".to_owned())));
        let mut p = Picker::new("Model", vec!["a".into()], None);
        assert_eq!(p.key(&key(KeyCode::Esc)), Some(None));
        // No match: the typed name is taken.
        let mut p = Picker::new("Model", vec!["a".into()], None);
        for c in "local-7b".chars() {
            p.key(&key(KeyCode::Char(c)));
        }
        assert_eq!(
            p.key(&key(KeyCode::Enter)),
            Some(Some("local-7b".to_owned()))
        );
    }
}
