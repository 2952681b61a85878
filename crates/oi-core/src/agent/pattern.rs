//! A regular expression in a small model's Python code that matches
//! nothing in the files the task names: the usual cause of a count of 0
//! over a log (`"HTTP/1.1" (\d{3})` where the line reads `HTTP/1.1" 500`).
//! Told "it holds 0", the model rewrites the loop around the same pattern;
//! told which pattern finds nothing and what a line looks like, it can fix
//! the pattern.

use std::sync::LazyLock;

use regex::{Regex, RegexBuilder};

/// A call of Python's `re` or a pandas string method with a pattern
/// written as a string literal: the literal's prefix, then its text in
/// single or double quotes.
static CALL: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r#"(?:\bre\.(?:search|match|fullmatch|findall|finditer|compile|sub|subn|split)|\.str\.(?:contains|extract|extractall|match|fullmatch|findall|count))\(\s*([rRbB]{0,2})(?:'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)")"#,
    )
    .ok()
});

/// The patterns of `code`'s regular expression calls, as the regex engine
/// reads them (a plain string's `\\` and quote escapes undone).
pub(super) fn patterns(code: &str) -> Vec<String> {
    let Some(call) = CALL.as_ref() else {
        return Vec::new();
    };
    call.captures_iter(code)
        .filter_map(|caps| {
            let raw = caps.get(1).is_some_and(|p| p.as_str().contains(['r', 'R']));
            let text = caps.get(2).or_else(|| caps.get(3))?.as_str();
            Some(if raw { text.to_owned() } else { unescape(text) })
        })
        .filter(|p| !p.is_empty())
        .collect()
}

/// A plain Python string's escapes that change a pattern: `\\`, quotes,
/// `\n` and `\t`. Others (`\d`) stay, as Python keeps them.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\\') => out.push('\\'),
            Some(q @ ('\'' | '"')) => out.push(q),
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Whether `pattern` matches nowhere in `text` (case ignored, its anchors
/// dropped: `re.match` and `^…$` are tried anywhere, so a pattern meant
/// for one field of a line is not faulted). `None` when the regex engine
/// cannot read the pattern (lookarounds, back references): nothing is
/// said then.
pub(super) fn finds_nothing(pattern: &str, text: &str) -> Option<bool> {
    let body = pattern
        .strip_prefix('^')
        .or_else(|| pattern.strip_prefix("\\A"))
        .unwrap_or(pattern);
    let body = body
        .strip_suffix('$')
        .filter(|b| !b.ends_with('\\'))
        .or_else(|| body.strip_suffix("\\Z"))
        .unwrap_or(body);
    if body.is_empty() {
        return None;
    }
    let regex = RegexBuilder::new(body)
        .case_insensitive(true)
        .multi_line(true)
        .size_limit(1 << 20)
        .build()
        .ok()?;
    Some(!regex.is_match(text))
}

/// The pattern one literal character away from `pattern` (that character
/// left out) that does match in `text`, and the character: a stray quote
/// or space is the usual slip (`"HTTP/1.1" (\d{3})` for a line reading
/// `HTTP/1.1" 500`). Escapes, operators and classes are kept whole; a
/// pattern this short is not guessed at.
pub(super) fn near_match(pattern: &str, text: &str) -> Option<(char, String)> {
    const SHORTEST: usize = 5;
    if pattern.chars().count() < SHORTEST {
        return None;
    }
    let mut escaped = false;
    // Inside `[…]` or `{…}`.
    let mut inside = false;
    for (at, c) in pattern.char_indices() {
        let literal = !escaped && !inside && !"\\.^$*+?()[]{}|".contains(c);
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '[' || c == '{' {
            inside = true;
        } else if c == ']' || c == '}' {
            inside = false;
        }
        // A character a quantifier applies to is not a slip of its own.
        let quantified = pattern[at + c.len_utf8()..].starts_with(['*', '+', '?', '{']);
        if !literal || quantified {
            continue;
        }
        let candidate = format!("{}{}", &pattern[..at], &pattern[at + c.len_utf8()..]);
        if finds_nothing(&candidate, text) == Some(false) {
            return Some((c, candidate));
        }
    }
    None
}

/// Whether a result reads as "nothing found": a count of 0, an empty list
/// or mapping, or nothing at all.
pub(super) fn found_nothing(text: &str) -> bool {
    let text = text.trim();
    text.is_empty()
        || matches!(text, "[]" | "{}" | "set()" | "Counter()")
        || text.parse::<f64>().is_ok_and(|n| n == 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "10.0.0.1 - - [02/Nov/2026:10:00:00 +0000] \"GET /api/items/500 HTTP/1.1\" 200 500 \"-\" \"curl/8.0\"\n10.0.0.2 - - [02/Nov/2026:10:01:00 +0000] \"GET /index.html HTTP/1.1\" 500 5405 \"-\" \"curl/8.0\"\n";

    #[test]
    fn the_call_pattern_is_well_formed() {
        assert!(CALL.is_some());
    }

    #[test]
    fn patterns_are_read_from_python_calls() {
        let code = r#"import re
m = re.search(r'"HTTP/1.1" (\d{3})', line)
n = re.findall("\\d+ (\\w+)", text)
p = re.compile(r"ERROR|WARN", re.I)
df['x'].str.contains('a\'b')
s = re.sub(r'[$,]', '', v)
print("re.search is not called here")
"#;
        assert_eq!(
            patterns(code),
            [
                r#""HTTP/1.1" (\d{3})"#,
                r"\d+ (\w+)",
                "ERROR|WARN",
                "a'b",
                "[$,]"
            ]
        );
        assert!(patterns("x = 1").is_empty());
    }

    #[test]
    fn a_pattern_that_finds_nothing_is_told_from_one_that_finds_something() {
        assert_eq!(finds_nothing(r#""HTTP/1.1" (\d{3})"#, LOG), Some(true));
        assert_eq!(finds_nothing(r#"HTTP/1.1" (\d{3})"#, LOG), Some(false));
        // Anchors and case do not count: a pattern for one field, or
        // matched with `re.I`.
        assert_eq!(finds_nothing(r"^\d{3}$", LOG), Some(false));
        assert_eq!(finds_nothing("get /LOGIN", "GET /login"), Some(false));
        // What the engine cannot read is not judged.
        assert_eq!(finds_nothing(r"(?<=GET )/\w+", LOG), None);
        assert_eq!(finds_nothing("^$", LOG), None);
        assert_eq!(finds_nothing("(", LOG), None);
    }

    #[test]
    fn a_pattern_one_stray_character_from_matching_is_found() {
        assert_eq!(
            near_match(r#""HTTP/1.1" (\d{3})"#, LOG),
            Some(('"', r#"HTTP/1.1" (\d{3})"#.to_owned()))
        );
        assert_eq!(
            near_match("ERROR  disk", "10:00 ERROR disk full"),
            Some((' ', "ERROR disk".to_owned()))
        );
        // Escapes, classes and quantified characters are not taken apart,
        // and a pattern too far off (or too short) gets no guess.
        assert_eq!(near_match(r"\d{3}", "12"), None);
        assert_eq!(near_match(r"a\d{12}", "a1"), None);
        assert_eq!(near_match(r"[xy]z\d", "z1"), None);
        assert_eq!(near_match("abcx+", "abc"), None);
        assert_eq!(near_match("WARNING", "ERROR"), None);
        assert_eq!(near_match("ab", "b"), None);
    }

    #[test]
    fn results_that_found_nothing() {
        for text in ["0", "0.0\n", "[]", "{}", "", "Counter()"] {
            assert!(found_nothing(text), "{text:?}");
        }
        for text in ["3", "[1]", "a"] {
            assert!(!found_nothing(text), "{text:?}");
        }
    }
}
