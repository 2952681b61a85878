//! Names tested by a suffix in one case only, for small models.
//!
//! Small models pick files with `name.endswith('.bak')`, and a file named
//! `OLD.BAK` or `photo.JPG` beside the others is left out without a word:
//! the block runs, and the result lacks it. When a block that ran tests
//! names by a lowercase suffix and the working folder holds a file whose
//! name ends with that suffix in another case, oi runs the block again
//! with the name lowercased before the test (`name.lower().endswith(…)`).

use std::path::Path;

use super::error_hint::LineChange;

/// Folders walked below the working folder, at most.
const DEPTH: usize = 4;

/// When Python `code` tests names by a lowercase suffix
/// (`f.endswith('.bak')`, `name.endswith(('.jpg', '.png'))`) that is not
/// lowercased first, and a file below `cwd` ends with one of the suffixes
/// in another case: the line with `.lower()` before each such
/// `.endswith(`, and the file the test misses (its path from `cwd`).
pub(super) fn fix(code: &str, cwd: &Path) -> Option<(LineChange, String, String)> {
    let lowered = lowered_names(code);
    code.lines().map(str::trim).find_map(|line| {
        let (fixed, suffixes) = lowered_line(line, &lowered)?;
        let missed = missed_file(cwd, &suffixes)?;
        let suffix = suffixes
            .iter()
            .find(|s| missed.to_lowercase().ends_with(s.as_str()))?
            .clone();
        Some((LineChange::new(line, fixed), missed, suffix))
    })
}

/// The names `code` assigns a lowercased text (`name = f.lower()`), whose
/// suffix tests are right as they are.
fn lowered_names(code: &str) -> Vec<&str> {
    code.lines()
        .filter_map(|line| {
            let (target, value) = line.trim().split_once(" = ")?;
            let target = target.trim();
            let lowers = value.contains(".lower()") || value.contains(".casefold()");
            (lowers
                && target
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || c == b'_'))
            .then_some(target)
        })
        .collect()
}

/// `line` with `.lower()` before each `.endswith(` whose argument is one
/// lowercase suffix or a tuple of them and whose receiver is not already
/// lowercased; with the suffixes those tests name. `None` when there is
/// no such test.
fn lowered_line(line: &str, lowered: &[&str]) -> Option<(String, Vec<String>)> {
    const CALL: &str = ".endswith(";
    let mut fixed = String::new();
    let mut suffixes = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find(CALL) {
        let (before, after) = rest.split_at(at);
        let after = &after[CALL.len()..];
        fixed.push_str(before);
        let named = call_suffixes(after);
        let receiver = receiver(before);
        let already = before.ends_with(".lower()")
            || before.ends_with(".casefold()")
            || lowered.contains(&receiver);
        match named {
            Some(named) if !already && !receiver.is_empty() => {
                fixed.push_str(".lower()");
                suffixes.extend(named);
            }
            _ => {}
        }
        fixed.push_str(CALL);
        rest = after;
    }
    fixed.push_str(rest);
    (!suffixes.is_empty()).then_some((fixed, suffixes))
}

/// The name a method is called on, from the text before the call
/// (`if f` gives `f`, `if entry.name` gives `entry.name`).
fn receiver(before: &str) -> &str {
    let start = before
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .map_or(0, |i| i + 1);
    &before[start..]
}

/// The suffixes an `.endswith(` call tests, from the text after its `(`:
/// one string literal or a tuple of them, each a file suffix in lowercase
/// (`.bak`, `.tar.gz`). `None` for any other argument.
fn call_suffixes(after: &str) -> Option<Vec<String>> {
    let arguments = super::pyline::call_arguments(after)?;
    let [argument] = arguments.as_slice() else {
        return None;
    };
    let literals = match argument.strip_prefix('(') {
        Some(inner) => super::pyline::call_arguments(inner)?,
        None => vec![argument.clone()],
    };
    literals.iter().map(|l| suffix(l)).collect()
}

/// A string literal's text when it is a lowercase file suffix: a dot, then
/// letters, digits and dots, at least one letter.
fn suffix(literal: &str) -> Option<String> {
    let quote = literal.chars().next().filter(|c| matches!(c, '\'' | '"'))?;
    let text = literal.strip_prefix(quote)?.strip_suffix(quote)?;
    let tail = text.strip_prefix('.')?;
    let fits = !tail.is_empty()
        && tail
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.')
        && tail.chars().any(|c| c.is_ascii_lowercase());
    fits.then(|| text.to_owned())
}

/// The first file below `cwd` (hidden folders left out) whose name ends
/// with one of `suffixes` in another case only: its path from `cwd`.
fn missed_file(cwd: &Path, suffixes: &[String]) -> Option<String> {
    let name = |path: &Path| {
        let name = path.file_name()?.to_str()?;
        let lower = name.to_lowercase();
        (suffixes.iter().any(|s| lower.ends_with(s.as_str()))
            && !suffixes.iter().any(|s| name.ends_with(s.as_str())))
        .then_some(())
    };
    super::walk::find_file(cwd, DEPTH, &mut |path| {
        name(path)?;
        Some(path.strip_prefix(cwd).ok()?.to_string_lossy().into_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::walk::folder_with;

    #[test]
    fn a_suffix_test_that_misses_a_file_in_another_case_is_lowercased() {
        let dir = folder_with(&[
            "project/a.py.bak",
            "project/src/util/OLD.BAK",
            "project/a.py",
        ]);
        let code = "import os\nfor root, dirs, files in os.walk('project'):\n    for f in files:\n        if f.endswith('.bak'):\n            print(f)\n";
        let (fix, missed, suffix) = fix(code, dir.path()).unwrap();
        assert_eq!(fix.line, "if f.endswith('.bak'):");
        assert_eq!(fix.fixed, "if f.lower().endswith('.bak'):");
        assert_eq!(missed, "project/src/util/OLD.BAK");
        assert_eq!(suffix, ".bak");
    }

    #[test]
    fn tuples_attributes_and_several_tests_on_a_line_are_lowercased() {
        let dir = folder_with(&["photos/a.jpg", "photos/B.PNG"]);
        let code = "n = [e.name for e in os.scandir('photos') if e.name.endswith(('.jpg', '.png')) or e.path.endswith('.gif')]";
        let (fix, missed, suffix) = fix(code, dir.path()).unwrap();
        assert_eq!(
            fix.fixed,
            "n = [e.name for e in os.scandir('photos') if e.name.lower().endswith(('.jpg', '.png')) or e.path.lower().endswith('.gif')]"
        );
        assert_eq!(missed, "photos/B.PNG");
        assert_eq!(suffix, ".png");
    }

    #[test]
    fn tests_that_are_right_or_name_no_missed_file_are_left_alone() {
        let dir = folder_with(&["logs/A.LOG", "logs/b.log", ".git/X.TXT"]);
        let cwd = dir.path();
        // Lowercased first, on the line or before it.
        assert!(fix("if f.lower().endswith('.log'):", cwd).is_none());
        assert!(fix("name = f.casefold()\nif name.endswith('.log'):", cwd).is_none());
        // A suffix written in capitals, or a variable: the model chose.
        assert!(fix("if f.endswith('.LOG'):", cwd).is_none());
        assert!(fix("if f.endswith(ext):", cwd).is_none());
        // Not a file suffix: text in a line.
        assert!(fix("if line.endswith('ok'):", cwd).is_none());
        assert!(fix("if line.endswith('.'):", cwd).is_none());
        // No file in another case (hidden folders are not walked).
        assert!(fix("if f.endswith('.txt'):", cwd).is_none());
        assert!(fix("if f.endswith('.csv'):", cwd).is_none());
    }
}
