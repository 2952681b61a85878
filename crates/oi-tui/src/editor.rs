//! The prompt's line editor (reedline): editing keys, history kept across
//! sessions, multi-line input (Shift-Enter or Alt-Enter, or a `"""`
//! block), bracketed paste, and Tab completion of slash commands and file
//! paths.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use crate::commands::SlashCommand;
use reedline::{
    ColumnarMenu, Completer, CompletionResult, Emacs, FileBackedHistory, KeyCode, KeyModifiers,
    MenuBuilder, Prompt, PromptEditMode, PromptHistorySearch, PromptHistorySearchStatus, Reedline,
    ReedlineEvent, ReedlineMenu, Span, Suggestion, ValidationResult, Validator,
    default_emacs_keybindings,
};

/// The prompt: `›`, and `…` on continuation lines.
#[derive(Debug, Clone, Default)]
pub struct OiPrompt;

impl Prompt for OiPrompt {
    fn render_prompt_left(&self) -> Cow<'_, str> {
        Cow::Borrowed("")
    }

    fn render_prompt_right(&self) -> Cow<'_, str> {
        Cow::Borrowed("")
    }

    fn render_prompt_indicator(&self, _mode: PromptEditMode) -> Cow<'_, str> {
        Cow::Borrowed("› ")
    }

    fn render_prompt_multiline_indicator(&self) -> Cow<'_, str> {
        Cow::Borrowed("… ")
    }

    fn render_prompt_history_search_indicator(&self, search: PromptHistorySearch) -> Cow<'_, str> {
        let status = match search.status {
            PromptHistorySearchStatus::Passing => "",
            PromptHistorySearchStatus::Failing => "failing ",
        };
        Cow::Owned(format!("({status}search: {}) ", search.term))
    }
}

/// No prompt of its own: a line typed for a running program, after the
/// program's own prompt text.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProgramPrompt;

impl Prompt for ProgramPrompt {
    fn render_prompt_left(&self) -> Cow<'_, str> {
        Cow::Borrowed("")
    }

    fn render_prompt_right(&self) -> Cow<'_, str> {
        Cow::Borrowed("")
    }

    fn render_prompt_indicator(&self, _mode: PromptEditMode) -> Cow<'_, str> {
        Cow::Borrowed("")
    }

    fn render_prompt_multiline_indicator(&self) -> Cow<'_, str> {
        Cow::Borrowed("")
    }

    fn render_prompt_history_search_indicator(&self, _search: PromptHistorySearch) -> Cow<'_, str> {
        Cow::Borrowed("")
    }
}

/// Completes slash commands at the start of the line, and file paths
/// elsewhere (relative to `cwd`).
#[derive(Debug, Clone)]
pub struct OiCompleter {
    pub cwd: PathBuf,
}

impl Completer for OiCompleter {
    fn complete(&mut self, line: &str, pos: usize) -> CompletionResult {
        CompletionResult::fresh(self.suggestions(line, pos))
    }
}

impl OiCompleter {
    /// The completions for the word before `pos`.
    pub fn suggestions(&self, line: &str, pos: usize) -> Vec<Suggestion> {
        let before = &line[..pos.min(line.len())];
        let start = before.rfind(char::is_whitespace).map_or(0, |i| i + 1);
        let word = &before[start..];
        let span = Span::new(start, pos);
        if start == 0 && word.starts_with('/') && !word[1..].contains('/') {
            return SlashCommand::ALL
                .iter()
                .filter(|c| c.name().starts_with(word))
                .map(|c| Suggestion {
                    value: c.name().to_owned(),
                    description: Some(c.help().to_owned()),
                    span,
                    append_whitespace: true,
                    ..Suggestion::default()
                })
                .collect();
        }
        path_suggestions(&self.cwd, word)
            .into_iter()
            .map(|value| Suggestion {
                append_whitespace: !value.ends_with('/'),
                value,
                span,
                ..Suggestion::default()
            })
            .collect()
    }
}

/// Paths that complete `word` (`~/` expanded for listing, kept as typed).
fn path_suggestions(cwd: &Path, word: &str) -> Vec<String> {
    let (dir_part, name_part) = match word.rfind('/') {
        Some(i) => (&word[..=i], &word[i + 1..]),
        None => ("", word),
    };
    let dir = if let Some(rest) = dir_part.strip_prefix("~/") {
        std::env::var_os("HOME")
            .map_or_else(|| PathBuf::from(dir_part), |h| PathBuf::from(h).join(rest))
    } else if dir_part.starts_with('/') {
        PathBuf::from(dir_part)
    } else {
        cwd.join(dir_part)
    };
    let Ok(entries) = fs_err::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.starts_with(name_part)
                || (name.starts_with('.') && !name_part.starts_with('.'))
            {
                return None;
            }
            let slash = if entry.path().is_dir() { "/" } else { "" };
            Some(format!("{dir_part}{name}{slash}"))
        })
        .collect();
    out.sort();
    out.truncate(200);
    out
}

/// Input is incomplete inside an open `"""` block.
#[derive(Debug, Clone, Copy, Default)]
pub struct TripleQuotes;

impl Validator for TripleQuotes {
    fn validate(&self, line: &str) -> ValidationResult {
        if line.matches("\"\"\"").count() % 2 == 1 {
            ValidationResult::Incomplete
        } else {
            ValidationResult::Complete
        }
    }
}

/// The text typed, with a `"""` block's quotes removed.
pub fn unwrap_block(text: &str) -> String {
    let trimmed = text.trim();
    match trimmed
        .strip_prefix("\"\"\"")
        .and_then(|t| t.strip_suffix("\"\"\""))
    {
        Some(inner) => inner.trim_matches('\n').to_owned(),
        None => text.to_owned(),
    }
}

/// The editor for the session's prompt, with its history in `history`.
pub fn editor(history: &Path, cwd: &Path) -> Reedline {
    let mut keybindings = default_emacs_keybindings();
    keybindings.add_binding(
        KeyModifiers::NONE,
        KeyCode::Tab,
        ReedlineEvent::UntilFound(vec![
            ReedlineEvent::Menu("completion_menu".to_owned()),
            ReedlineEvent::MenuNext,
        ]),
    );
    for modifier in [KeyModifiers::SHIFT, KeyModifiers::ALT] {
        keybindings.add_binding(
            modifier,
            KeyCode::Enter,
            ReedlineEvent::Edit(vec![reedline::EditCommand::InsertNewline]),
        );
    }
    let menu = ColumnarMenu::default().with_name("completion_menu");
    let mut editor = Reedline::create()
        .with_completer(Box::new(OiCompleter {
            cwd: cwd.to_path_buf(),
        }))
        .with_menu(ReedlineMenu::EngineCompleter(Box::new(menu)))
        .with_quick_completions(true)
        .with_partial_completions(true)
        .with_edit_mode(Box::new(Emacs::new(keybindings)))
        .with_validator(Box::new(TripleQuotes))
        .use_bracketed_paste(true)
        // Where the terminal speaks the kitty keyboard protocol, Shift-Enter
        // is told apart from Enter (elsewhere Alt-Enter adds a line).
        .use_kitty_keyboard_enhancement(true);
    if let Some(parent) = history.parent() {
        let _ = fs_err::create_dir_all(parent);
    }
    if let Ok(history) = FileBackedHistory::with_file(5000, history.to_path_buf()) {
        editor = editor.with_history(Box::new(history));
    }
    editor
}

/// Image files named in `text` (as a terminal pastes a dropped file:
/// plain, quoted, or with escaped spaces), relative to `cwd`.
pub fn image_paths(text: &str, cwd: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for word in shell_words(text) {
        let lower = word.to_ascii_lowercase();
        if ![".png", ".jpg", ".jpeg", ".gif", ".webp"]
            .iter()
            .any(|ext| lower.ends_with(ext))
        {
            continue;
        }
        let path = if let Some(rest) = word.strip_prefix("~/") {
            std::env::var_os("HOME")
                .map_or_else(|| PathBuf::from(&word), |h| PathBuf::from(h).join(rest))
        } else {
            cwd.join(&word)
        };
        if path.is_file() {
            let shown = path.display().to_string();
            if !found.contains(&shown) {
                found.push(shown);
            }
        }
    }
    found
}

/// Words split as a shell would, loosely (quotes and backslash escapes).
fn shell_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => current.push(c),
            (None, '\'' | '"') => quote = Some(c),
            (None, '\\') => {
                if let Some(next) = chars.next() {
                    current.push(next);
                }
            }
            (None, c) if c.is_whitespace() => {
                if !current.is_empty() {
                    words.push(std::mem::take(&mut current));
                }
            }
            (None, c) => current.push(c),
        }
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_commands_complete_at_the_start() {
        let c = OiCompleter {
            cwd: PathBuf::from("/"),
        };
        let names: Vec<String> = c
            .suggestions("/re", 3)
            .into_iter()
            .map(|s| s.value)
            .collect();
        assert_eq!(names, ["/reset"]);
        let all = c.suggestions("/", 1);
        assert_eq!(all.len(), SlashCommand::ALL.len());
    }

    #[test]
    fn paths_complete_anywhere_else() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(dir.path().join("sales.csv"), "").unwrap();
        fs_err::write(dir.path().join("summary.md"), "").unwrap();
        fs_err::create_dir(dir.path().join("src")).unwrap();
        let c = OiCompleter {
            cwd: dir.path().to_path_buf(),
        };
        let line = "summarise s";
        let names: Vec<String> = c
            .suggestions(line, line.len())
            .into_iter()
            .map(|s| s.value)
            .collect();
        assert_eq!(names, ["sales.csv", "src/", "summary.md"]);
        let line = "look in src/";
        assert!(c.suggestions(line, line.len()).is_empty());
    }

    #[test]
    fn triple_quotes_make_a_block() {
        assert!(matches!(
            TripleQuotes.validate("\"\"\"\nfirst line"),
            ValidationResult::Incomplete
        ));
        assert!(matches!(
            TripleQuotes.validate("\"\"\"\nfirst\nsecond\n\"\"\""),
            ValidationResult::Complete
        ));
        assert_eq!(
            unwrap_block("\"\"\"\nfirst\nsecond\n\"\"\""),
            "first\nsecond"
        );
        assert_eq!(unwrap_block("plain"), "plain");
    }

    #[test]
    fn dropped_image_paths_are_found() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(dir.path().join("my shot.png"), b"png").unwrap();
        fs_err::write(dir.path().join("notes.txt"), b"").unwrap();
        let text = format!(
            "what is in '{}'? and notes.txt and my\\ shot.png",
            dir.path().join("my shot.png").display()
        );
        assert_eq!(
            image_paths(&text, dir.path()),
            [dir.path().join("my shot.png").display().to_string()]
        );
    }
}
