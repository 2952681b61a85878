//! Lines that are records for small models: a log or a report whose every
//! line holds the same fields split by spaces (an access log's address,
//! time, request and status; an application log's date, level and
//! message), with a quoted or bracketed field holding spaces of its own.
//!
//! Small models match such lines with a pattern written from memory (a
//! status code after `"HTTP/1.1"`) or count every line that holds the
//! number anywhere (`500` in a path): the look gives the one line that
//! splits a record into fields and says what each field holds, so the
//! model compares a field.
//!
//! Bounded like the table profile: the lines the first look already read,
//! at most [`MAX_LINES`] of them, at most [`MAX_FIELDS`] fields described.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use super::table;

/// Lines profiled, at most.
const MAX_LINES: usize = 2000;
/// Fields described, at most.
const MAX_FIELDS: usize = 12;
/// A field value the table's examples would cut, and the longest shown
/// whole instead.
const SHORT: usize = 24;
const LONG: usize = 80;
/// Fields that must look like data (numbers, times, a few repeated
/// values) before lines count as records rather than prose.
const MIN_DATA_FIELDS: usize = 2;

/// How a line splits into fields, as Python code the model copies (the
/// same pattern splits the lines here, so what the look says a field
/// holds is what that code gives).
const SPLIT: &str = r#"\[[^\]]*\]|"[^"]*"|\S+"#;

static FIELD: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(SPLIT).ok());

/// The profile of `text` (a file's start; `complete` when it is the whole
/// file) if its lines are records: at least three lines, each of at least
/// three fields, the leading fields holding data. When lines have
/// different numbers of fields, the fields after the last one holding
/// data are "the rest of the line". `None` for prose and for one-field
/// lists.
pub(super) fn profile(text: &str, complete: bool) -> Option<String> {
    let field = FIELD.as_ref()?;
    let text = match (complete, text.rfind('\n')) {
        (false, Some(end)) => &text[..end],
        _ => text,
    };
    let lines: Vec<Vec<&str>> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .take(MAX_LINES)
        .map(|line| field.find_iter(line).map(|m| m.as_str()).collect())
        .collect();
    if lines.len() < 3 {
        return None;
    }
    let fewest = lines.iter().map(Vec::len).min()?;
    let most = lines.iter().map(Vec::len).max()?;
    if fewest < 3 {
        return None;
    }
    let columns: Vec<Vec<&str>> = (0..fewest)
        .map(|i| lines.iter().map(|fields| fields[i]).collect())
        .collect();
    let data: Vec<bool> = columns.iter().map(|values| holds_data(values)).collect();
    if data.iter().filter(|d| **d).count() < MIN_DATA_FIELDS {
        return None;
    }
    // With lines of different lengths, the fields after the last one that
    // holds data are words of a free-text message.
    let fixed = if fewest == most {
        fewest
    } else {
        data.iter()
            .rposition(|d| *d)
            .map_or(fewest, |last| last + 1)
    };
    let quoted = columns[..fixed].iter().any(|values| {
        values
            .iter()
            .any(|v| v.starts_with('"') || v.starts_with('['))
    });
    let mut out = format!(
        "each line is a record: split it into fields with `import re`, `fields = re.findall(r'{SPLIT}', line)`{}. Fields:",
        if quoted {
            " (a quoted or bracketed field keeps its quotes or brackets, and its spaces)"
        } else {
            ""
        }
    );
    for (i, values) in columns.iter().enumerate().take(fixed.min(MAX_FIELDS)) {
        out.push_str(&format!("\n- `fields[{i}]`: {}", what(values)));
    }
    if fixed > MAX_FIELDS {
        out.push_str(&format!("\n- … ({fixed} fields before the rest)"));
    }
    if fixed < most {
        out.push_str(&format!(
            "\n- `fields[{fixed}:]`: the rest of the line, {} to {} words (`' '.join(fields[{fixed}:])`)",
            fewest - fixed,
            most - fixed
        ));
    }
    Some(out)
}

/// Whether a field's values look like data rather than words of prose:
/// each holds a digit (numbers, times, addresses, IDs), or a few values
/// repeat (a level, a method, a status word).
fn holds_data(values: &[&str]) -> bool {
    if values.iter().all(|v| v.chars().any(|c| c.is_ascii_digit())) {
        return true;
    }
    let distinct: BTreeSet<&str> = values.iter().copied().collect();
    distinct.len() * 2 <= values.len() && distinct.len() <= 6
}

/// What a field holds: the table profile's words for a column, with
/// examples where those words give none.
fn what(values: &[&str]) -> String {
    let distinct: BTreeSet<&str> = values.iter().copied().collect();
    if distinct.len() == 1 {
        return format!("always `{}`", values[0]);
    }
    let described = table::describe(values);
    // Long values (a request, a time with its zone) whole, once: the
    // table's examples are cut short.
    if described.starts_with("text, like")
        && values[0].chars().count() <= LONG
        && values.iter().any(|v| v.chars().count() > SHORT)
    {
        return format!("text, like `{}`", values[0]);
    }
    if described.contains('`') {
        described
    } else {
        format!("{described}, like {}", table::examples(values))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ACCESS: &str = r#"10.0.0.1 - - [02/Nov/2026:10:00:00 +0000] "GET /api/items/500 HTTP/1.1" 200 500 "-" "curl/8.0"
10.0.0.2 - - [02/Nov/2026:10:01:00 +0000] "GET /index.html HTTP/1.1" 500 5405 "-" "curl/8.0"
10.0.0.3 - - [02/Nov/2026:10:02:00 +0000] "GET /api/items/12 HTTP/1.1" 404 2571 "-" "curl/8.0"
10.0.0.4 - - [02/Nov/2026:10:03:00 +0000] "GET /img/500px.png HTTP/1.1" 200 500 "-" "curl/8.0"
"#;

    #[test]
    fn an_access_log_is_split_into_its_fields() {
        let profile = profile(ACCESS, true).expect("an access log is records");
        assert!(
            profile.contains(r#"re.findall(r'\[[^\]]*\]|"[^"]*"|\S+', line)"#),
            "{profile}"
        );
        assert!(profile.contains("keeps its quotes"), "{profile}");
        // The status is field 5, a number, shown with its values; the
        // bracketed time is one field.
        assert!(
            profile.contains("- `fields[5]`: whole numbers, like `200`, `500`, `404`"),
            "{profile}"
        );
        assert!(
            profile.contains("- `fields[3]`: text, like `[02/Nov/2026:10:00:00 +0000]`\n"),
            "{profile}"
        );
        assert!(profile.contains("- `fields[1]`: always `-`"), "{profile}");
        assert!(
            profile.contains("- `fields[8]`: always `\"curl/8.0\"`"),
            "{profile}"
        );
        assert!(!profile.contains("fields[9]"), "{profile}");
        assert!(!profile.contains("the rest of the line"), "{profile}");
    }

    #[test]
    fn a_free_text_message_is_the_rest_of_the_line() {
        let log = "2026-11-02 10:00:01 INFO [db] connected\n\
                   2026-11-02 10:00:02 ERROR [api] request failed with ERROR code 7\n\
                   2026-11-02 10:00:03 INFO [api] served /errors page\n\
                   2026-11-02 10:00:04 WARN [db] slow query\n";
        let profile = profile(log, true).expect("a log with messages is records");
        assert!(
            profile.contains("- `fields[0]`: always `2026-11-02`"),
            "{profile}"
        );
        assert!(
            profile.contains("- `fields[2]`: text, 3 distinct: `ERROR`, `INFO`, `WARN`"),
            "{profile}"
        );
        assert!(
            profile.contains(
                "- `fields[4:]`: the rest of the line, 1 to 6 words (`' '.join(fields[4:])`)"
            ),
            "{profile}"
        );
        assert!(!profile.contains("fields[4]`"), "{profile}");
    }

    #[test]
    fn prose_and_lists_are_not_records() {
        assert_eq!(
            profile("Roses are red\nViolets are blue\nRust is fast\n", true),
            None
        );
        assert_eq!(profile("apple\nbanana\ncherry\ndate\n", true), None);
        assert_eq!(
            profile(
                "The build started at noon and ran long.\nIt failed twice before lunch.\nNobody knew why it did.\n",
                true
            ),
            None
        );
        // Two lines are too few to tell.
        assert_eq!(profile("a 1 x\nb 2 y\n", true), None);
    }

    #[test]
    fn a_cut_last_line_is_not_read() {
        let cut = format!("{ACCESS}10.0.0.9 - -");
        let profile = profile(&cut, false).expect("the whole lines are records");
        assert!(profile.contains("- `fields[8]`"), "{profile}");
        assert!(!profile.contains("the rest of the line"), "{profile}");
    }

    #[test]
    fn the_split_pattern_compiles() {
        let field = FIELD.as_ref().expect("the field pattern compiles");
        assert_eq!(field.find_iter(r#"a "b c" [d e] f"#).count(), 4);
    }
}
