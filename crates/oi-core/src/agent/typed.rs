//! Code that only prints a value typed into it (`print(4)`, `echo 1.0 GB`):
//! a small model asked how many commits a repository has, or which folder
//! is biggest, writes its guess into a print and reads the output back as
//! if something had found it. Such a block looks nothing up.

use super::save_as::{is_python, is_shell};

/// The value a block only prints, when every line of `code` prints or
/// echoes a literal (no name, call, variable, redirect or pipe) that the
/// task (`task_key`, as [`key`] makes it) does not hold: a value the model
/// typed in, not one the task gives. `language` is the block's language.
pub(super) fn typed_value(code: &str, language: Option<&str>, task_key: &str) -> Option<String> {
    let shell = is_shell(language);
    if !shell && !is_python(language) {
        return None;
    }
    let mut values = Vec::new();
    for line in code.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        values.push(if shell { echoed(line)? } else { printed(line)? });
    }
    let value = values.join("\n");
    let found = key(&value);
    // A value the task gives ("print hello") is the step itself.
    (!found.is_empty() && !task_key.contains(&found)).then_some(value)
}

/// Text reduced to its letters and digits, lowercased: what a typed value
/// is looked up by (`Hello, World!` is in "print hello world").
pub(super) fn key(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The literal a Python line prints: `print(4)`, `print("Updated README")`,
/// `print('a', 2)`; not an f-string, a name or a call.
fn printed(line: &str) -> Option<String> {
    let inner = line.strip_prefix("print(")?.strip_suffix(')')?;
    let mut parts = Vec::new();
    for part in split_args(inner)? {
        let part = part.trim();
        if part.parse::<f64>().is_ok() {
            parts.push(part.to_owned());
            continue;
        }
        let quote = part.chars().next().filter(|c| matches!(c, '\'' | '"'))?;
        let text = part.strip_prefix(quote)?.strip_suffix(quote)?;
        if text.contains(quote) || text.contains('\\') {
            return None;
        }
        parts.push(text.to_owned());
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// `inner` split at the commas outside quotes; `None` when a quote is left
/// open.
fn split_args(inner: &str) -> Option<Vec<&str>> {
    let mut parts = Vec::new();
    let mut quote = None;
    let mut start = 0;
    for (at, c) in inner.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if matches!(c, '\'' | '"') => quote = Some(c),
            None if c == ',' => {
                parts.push(&inner[start..at]);
                start = at + 1;
            }
            None => {}
        }
    }
    parts.push(&inner[start..]);
    quote.is_none().then_some(parts)
}

/// The words a shell line echoes: `echo 1.0 GB`, `echo "Updated README"`;
/// not one that expands, globs, redirects or pipes anything.
fn echoed(line: &str) -> Option<String> {
    let rest = line.strip_prefix("echo ")?.trim();
    if rest.starts_with('-')
        || rest.chars().any(|c| {
            matches!(
                c,
                '$' | '`' | '>' | '<' | '|' | ';' | '&' | '*' | '?' | '(' | '\\'
            )
        })
    {
        return None;
    }
    let words: String = rest.chars().filter(|c| !matches!(c, '"' | '\'')).collect();
    (!words.trim().is_empty()).then(|| words.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_typed_into_a_print_is_found() {
        let task = key(
            "How many commits does the git repository here have? Write the number to commits.txt.",
        );
        for (code, language, value) in [
            ("print(4)", "python", "4"),
            (
                "print(\"Updated README.md\")\n",
                "python",
                "Updated README.md",
            ),
            ("# the answer\nprint('a', 2)", "py", "a 2"),
            ("echo 1.0 GB", "bash", "1.0 GB"),
            ("echo \"data\"", "sh", "data"),
        ] {
            assert_eq!(
                typed_value(code, Some(language), &task).as_deref(),
                Some(value),
                "{code}"
            );
        }
    }

    #[test]
    fn code_that_looks_something_up_or_prints_what_the_task_gives_is_not() {
        let task = key("Print Hello, World! and count the commits.");
        for (code, language) in [
            ("print('Hello, World!')", "python"),
            ("print(len(data))", "python"),
            ("print(f'{n}')", "python"),
            ("print(n)", "python"),
            ("print(4)\nn = 2", "python"),
            ("print('it\\'s')", "python"),
            ("print('a)", "python"),
            ("echo $(git rev-list --count HEAD)", "bash"),
            ("echo 4 > commits.txt", "bash"),
            ("echo *", "bash"),
            ("echo -e 'a\\nb'", "bash"),
            ("git log -1", "bash"),
            ("", "python"),
            ("print(4)", "javascript"),
        ] {
            assert_eq!(typed_value(code, Some(language), &task), None, "{code}");
        }
        assert_eq!(typed_value("print(4)", None, &task), None);
    }
}
