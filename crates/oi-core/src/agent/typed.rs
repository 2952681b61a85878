//! Code that only prints a value typed into it (`print(4)`, `echo 1.0 GB`):
//! a small model asked how many commits a repository has, or which folder
//! is biggest, writes its guess into a print and reads the output back as
//! if something had found it. Such a block looks nothing up.

use super::save_as::{is_python, is_shell};

/// The value a block only prints, when every line of `code` prints or
/// echoes a literal (no name, call, variable, redirect or pipe) that the
/// task (`task_key`, as [`key`] makes it) does not hold: a value the model
/// typed in, not one the task gives. `language` is the block's language.
fn typed_value(code: &str, language: Option<&str>, task_key: &str) -> Option<String> {
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

/// The value a block only writes to a file, and the file, when every line
/// of `code` writes a literal the task (`task_key`) does not hold, or
/// opens the file for it: `echo 3 > open.txt`, `open('n.txt',
/// 'w').write('4')`, `with open('n.txt', 'w') as f:` then `f.write('4\n')`.
/// A guess written straight into the result; one an earlier run printed
/// (the caller checks) was found.
fn typed_write(code: &str, language: Option<&str>, task_key: &str) -> Option<(String, String)> {
    let shell = is_shell(language);
    if !shell && !is_python(language) {
        return None;
    }
    let mut values = Vec::new();
    let mut file: Option<String> = None;
    // The handle a `with open(…) as f:` line names, and its file.
    let mut handle: Option<(String, String)> = None;
    for line in code.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if shell
            && line
                .strip_prefix("touch ")
                .is_some_and(|f| plain_file(f.trim()))
        {
            // Making the file first writes nothing into it.
            continue;
        }
        let (value, target) = if shell {
            echoed_to_file(line)?
        } else if let Some(opened) = with_open(line) {
            handle = Some(opened);
            continue;
        } else {
            python_written(line, handle.as_ref())?
        };
        if file.as_ref().is_some_and(|f| *f != target) {
            return None;
        }
        file = Some(target);
        values.push(value);
    }
    let value = values.join("\n");
    let found = key(&value);
    (!found.is_empty() && !task_key.contains(&found)).then_some((value, file?))
}

/// `echo 3 > open.txt` (or `>>`): the words echoed and the file.
fn echoed_to_file(line: &str) -> Option<(String, String)> {
    let (echo, target) = line.split_once('>')?;
    let target = target.strip_prefix('>').unwrap_or(target).trim();
    let target = target.trim_matches(|c| c == '"' || c == '\'');
    if !plain_file(target) {
        return None;
    }
    Some((echoed(echo.trim())?, target.to_owned()))
}

/// A file name with nothing a shell or Python would expand in it.
fn plain_file(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'))
}

/// `with open('n.txt', 'w') as f:`: the handle and the file, for a file
/// opened to write.
fn with_open(line: &str) -> Option<(String, String)> {
    let rest = line.strip_prefix("with ")?.strip_suffix(':')?;
    let (call, handle) = rest.rsplit_once(" as ")?;
    let file = opened_for_writing(call.trim())?;
    let handle = handle.trim();
    (!handle.is_empty() && handle.chars().all(|c| c.is_alphanumeric() || c == '_'))
        .then(|| (handle.to_owned(), file))
}

/// `open('n.txt', 'w')` (or `'a'`): the file.
pub(super) fn opened_for_writing(call: &str) -> Option<String> {
    let (name, mode) = opened(call)?;
    (plain_file(&name) && (mode.contains('w') || mode.contains('a'))).then_some(name)
}

/// `open('n.txt', 'a')` (or `mode='a'`): the file and the mode, both
/// literals.
pub(super) fn opened(call: &str) -> Option<(String, String)> {
    let inner = call.strip_prefix("open(")?.strip_suffix(')')?;
    let args = split_args(inner)?;
    let [name, mode, ..] = args.as_slice() else {
        return None;
    };
    let name = literal_text(name.trim())?;
    let mode = literal_text(mode.trim().trim_start_matches("mode=").trim_start())?;
    Some((name, mode))
}

/// A line writing a literal: `open('n.txt', 'w').write('4')`, or through
/// the `with` line's handle, `f.write('4\n')`, `print(4, file=f)`.
fn python_written(line: &str, handle: Option<&(String, String)>) -> Option<(String, String)> {
    if let Some(at) = line.find(").write(") {
        let file = opened_for_writing(&line[..=at])?;
        let value = line[at + ").write(".len()..].strip_suffix(')')?;
        return Some((written_value(value)?, file));
    }
    let (name, file) = handle?;
    if let Some(value) = line
        .strip_prefix(name.as_str())
        .and_then(|rest| rest.strip_prefix(".write("))
    {
        return Some((written_value(value.strip_suffix(')')?)?, file.clone()));
    }
    let inner = line.strip_prefix("print(")?.strip_suffix(')')?;
    let args = split_args(inner)?;
    let (last, values) = args.split_last()?;
    if last.trim().replace(' ', "") != format!("file={name}") || values.is_empty() {
        return None;
    }
    let printed = values
        .iter()
        .map(|v| written_value(v.trim()))
        .collect::<Option<Vec<String>>>()?;
    Some((printed.join(" "), file.clone()))
}

/// A number, or a string literal (a final `\n` allowed).
fn written_value(text: &str) -> Option<String> {
    let text = text.trim();
    if text.parse::<f64>().is_ok() {
        return Some(text.to_owned());
    }
    let text = literal_text(text.replace("\\n", "").as_str())?;
    (!text.trim().is_empty()).then(|| text.trim().to_owned())
}

/// The text of a quoted literal without escapes: `'a.txt'` → `a.txt`.
pub(super) fn literal_text(text: &str) -> Option<String> {
    let quote = text.chars().next().filter(|c| matches!(c, '\'' | '"'))?;
    let inner = text.strip_prefix(quote)?.strip_suffix(quote)?;
    (!inner.contains(quote) && !inner.contains('\\')).then(|| inner.to_owned())
}

/// A guess in a block: the value it only prints (`print(4)`), or only
/// writes to a file (the second value, the file) that the task's runs
/// have not printed (`outputs_key`, as [`key`] makes their output). A
/// value printed back is asked again whatever ran before; one written
/// that a run printed was found.
pub(super) fn guess(
    code: &str,
    language: Option<&str>,
    task_key: &str,
    outputs_key: &str,
) -> Option<(String, Option<String>)> {
    if let Some(value) = typed_value(code, language, task_key) {
        return Some((value, None));
    }
    typed_write(code, language, task_key)
        .filter(|(value, _)| !outputs_key.contains(&key(value)))
        .map(|(value, file)| (value, Some(file)))
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
        // A number, or arithmetic on typed numbers (`1 + 1`): no name in it.
        if part.parse::<f64>().is_ok()
            || (part.chars().any(|c| c.is_ascii_digit())
                && part
                    .chars()
                    .all(|c| c.is_ascii_digit() || " .+-*/%()".contains(c)))
        {
            parts.push(part.to_owned());
            continue;
        }
        parts.push(literal_text(part)?);
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// `inner` split at the commas outside quotes; `None` when a quote is left
/// open.
pub(super) fn split_args(inner: &str) -> Option<Vec<&str>> {
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
            // Arithmetic on typed numbers looks nothing up either.
            ("print(1 + 1)", "python", "1 + 1"),
        ] {
            assert_eq!(
                typed_value(code, Some(language), &task).as_deref(),
                Some(value),
                "{code}"
            );
        }
    }

    #[test]
    fn a_value_typed_straight_into_the_result_file_is_found() {
        let task = key("How many items are open? Write the number to open.txt.");
        for (code, language) in [
            ("echo 3 > open.txt", "bash"),
            ("echo \"3\" >> 'open.txt'", "sh"),
            ("touch open.txt\necho \"3\" > open.txt", "bash"),
            ("open('open.txt', 'w').write('3')", "python"),
            ("open(\"open.txt\", \"w\").write(\"3\\n\")", "python"),
            (
                "with open('open.txt', 'w') as f:\n    f.write('3\\n')",
                "python",
            ),
            (
                "with open('open.txt', mode='w') as out:\n    print(3, file=out)",
                "python",
            ),
        ] {
            assert_eq!(
                typed_write(code, Some(language), &task),
                Some(("3".to_owned(), "open.txt".to_owned())),
                "{code}"
            );
        }
        for code in [
            // Written from what code found, or what the task gives.
            "with open('open.txt', 'w') as f:\n    f.write(str(n))",
            "open('open.txt', 'w').write(f'{n}')",
            "echo $n > open.txt",
            "echo 3 | tee open.txt",
            // Read, not written; two files.
            "with open('open.txt') as f:\n    f.write('3')",
            "echo 3 > a.txt\necho 4 > b.txt",
            // Written and something more done.
            "echo 3 > open.txt\nwc -l TODO.md",
            "touch open.txt",
        ] {
            let language = if code.contains("open(") {
                "python"
            } else {
                "bash"
            };
            assert_eq!(typed_write(code, Some(language), &task), None, "{code}");
        }
        let gives = key("Write the word ready to status.txt.");
        assert_eq!(
            typed_write("echo ready > status.txt", Some("bash"), &gives),
            None
        );
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
