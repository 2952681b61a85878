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

/// The profile of `text` (the start of the file `file`, written as a
/// Python string; `complete` when it is the whole file) if its lines are
/// records, with the loop that reads them (a small model given the split
/// line alone runs it outside any loop, on a `line` it never set): at least three lines, each of at least
/// three fields, the leading fields holding data. When lines have
/// different numbers of fields, the fields after the last one holding
/// data are "the rest of the line". `None` for prose and for one-field
/// lists.
pub(super) fn profile(file: &str, text: &str, complete: bool) -> Option<String> {
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
        "each line is a record: `for line in open({file}):` then split it into fields with `import re`, `fields = re.findall(r'{SPLIT}', line)`{}. Fields:",
        if quoted {
            " (a quoted or bracketed field keeps its quotes or brackets, and its spaces)"
        } else {
            ""
        }
    );
    let pairs = pairs(&lines);
    for (i, values) in columns.iter().enumerate().take(fixed.min(MAX_FIELDS)) {
        let read = when(values, i)
            .or_else(|| request(values, i))
            .or_else(|| status(&columns, i))
            .unwrap_or_default();
        let what = match pairs.as_ref().and_then(|_| paired(values)) {
            Some(example) => format!(
                "a `key=value` pair on some lines (`{example}`), other words on others: read the pairs by key (below), not by position"
            ),
            None => what(values),
        };
        out.push_str(&format!("\n- `fields[{i}]`: {what}{read}"));
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
    if let Some(time) = date_and_time(&columns) {
        out.push_str(&time);
    }
    if let Some(pairs) = pairs {
        out.push_str(&pairs);
    }
    Some(out)
}

/// When a field holds `key=value` pairs on some lines and not on all
/// (`user=alice` here, `slow` there): its first pair.
fn paired<'a>(values: &[&'a str]) -> Option<&'a str> {
    let re = PAIRS.as_ref()?;
    let is_pair = |v: &str| re.find(v).is_some_and(|m| m.as_str() == v);
    let count = values.iter().filter(|v| is_pair(v)).count();
    (count > 0 && count < values.len())
        .then(|| values.iter().copied().find(|v| is_pair(v)))
        .flatten()
}

/// `key=value` pairs, wherever they stand on a line.
const PAIR: &str = r"(\w+)=(\S+)";

static PAIRS: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(PAIR).ok());

/// Keys of `key=value` pairs listed, at most.
const MAX_KEYS: usize = 8;

/// When many of the records (`lines`, split into fields) hold `key=value`
/// pairs (`user=alice action=login`), at other places on different lines:
/// the keys, in how many lines each stands, and the code that reads them
/// by key. Read by position, a small model compared `fields[3]` with
/// `'user=alice'`.
fn pairs(lines: &[Vec<&str>]) -> Option<String> {
    let re = PAIRS.as_ref()?;
    let mut keys: Vec<(String, usize)> = Vec::new();
    let mut with = 0;
    for fields in lines {
        // In the order they stand on the line.
        let mut seen: Vec<String> = Vec::new();
        for field in fields {
            if let Some(caps) = re.captures(field)
                && caps.get(0).is_some_and(|m| m.as_str() == *field)
                && let Some(key) = caps.get(1)
                && !seen.iter().any(|k| k == key.as_str())
            {
                seen.push(key.as_str().to_owned());
            }
        }
        with += usize::from(!seen.is_empty());
        for key in seen {
            match keys.iter_mut().find(|(k, _)| *k == key) {
                Some((_, n)) => *n += 1,
                None => keys.push((key, 1)),
            }
        }
    }
    if keys.is_empty() || with * 3 < lines.len() {
        return None;
    }
    keys.truncate(MAX_KEYS);
    let first = keys.first().map(|(k, _)| k.clone())?;
    let listed: Vec<String> = keys
        .iter()
        .map(|(key, n)| format!("`{key}` in {n} of {} lines", lines.len()))
        .collect();
    Some(format!(
        "\nLines hold `key=value` pairs ({}): read them by key, wherever they stand, with `pairs = dict(re.findall(r'{PAIR}', line))`, then `pairs.get('{first}')` (None on a line without it).",
        listed.join(", ")
    ))
}

static DATE: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^\d{4}-\d{2}-\d{2}$").ok());

static TIME_OF_DAY: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^\d{2}:\d{2}:\d{2}$").ok());

/// When one field holds a date (`2024-06-01`) and the next a time of day
/// (`08:00:00`): the code that reads both as one time, to subtract or
/// compare times.
fn date_and_time(columns: &[Vec<&str>]) -> Option<String> {
    let all = |values: &[&str], re: &LazyLock<Option<Regex>>| {
        re.as_ref()
            .is_some_and(|re| values.iter().all(|v| re.is_match(v)))
    };
    let i = columns
        .windows(2)
        .position(|pair| all(&pair[0], &DATE) && all(&pair[1], &TIME_OF_DAY))?;
    let j = i + 1;
    Some(format!(
        "\nThe time of a line is `datetime.strptime(fields[{i}] + ' ' + fields[{j}], '%Y-%m-%d %H:%M:%S')` (`from datetime import datetime`); two such times subtract to a `timedelta` (`.total_seconds() / 60` is minutes)."
    ))
}

/// How a Markdown table's line splits into its cells, as Python code.
const PIPE_SPLIT: &str = "[c.strip() for c in line.strip().strip('|').split('|')]";

/// The cells of a Markdown table's line, as [`PIPE_SPLIT`] splits it.
fn pipe_cells(line: &str) -> Vec<&str> {
    line.trim()
        .trim_matches('|')
        .split('|')
        .map(str::trim)
        .collect()
}

/// Whether `line` is a Markdown table's rule line (`|---|:--:|`).
fn pipe_rule(line: &str) -> bool {
    let line = line.trim();
    line.starts_with('|')
        && line.contains('-')
        && line.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
}

/// For a text holding Markdown tables (`| a | b |` lines, a `|---|` line
/// under the header): each table's columns and where its rows are, with
/// the line of Python that splits a row into cells. Small models split
/// such a line at `|` and keep the empty cells at its ends, or read the
/// whole file as one table.
pub(super) fn markdown_tables(text: &str, file: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().take(MAX_LINES).collect();
    let mut tables = Vec::new();
    let mut i = 0;
    while i + 1 < lines.len() {
        let header = lines[i].trim();
        if header.starts_with('|') && pipe_rule(lines[i + 1]) && !pipe_rule(header) {
            let width = pipe_cells(header).len();
            let mut end = i + 2;
            while end < lines.len() && lines[end].trim().starts_with('|') {
                end += 1;
            }
            tables.push((pipe_cells(header), width, i, end));
            i = end;
        } else {
            i += 1;
        }
    }
    if tables.is_empty() {
        return None;
    }
    let described: Vec<String> = tables
        .iter()
        .take(MAX_TABLES)
        .map(|(names, _, start, end)| {
            let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            format!(
                "the table with the columns {} (lines {}–{end}), its header row first, is `rows = [{PIPE_SPLIT} for line in lines[{start}:{}] + lines[{}:{end}]]`",
                names.join(", "),
                start + 1,
                start + 1,
                start + 2,
            )
        })
        .collect();
    let count = if tables.len() == 1 {
        "a Markdown table".to_owned()
    } else {
        format!("{} Markdown tables", tables.len())
    };
    Some(format!(
        "{count}. Read the lines with `lines = open({file}, encoding='utf-8').read().splitlines()`; then {} (the `|---|` line left out; the `|` at each end of a line makes no cell, and an empty cell is `''`)",
        described.join("; ")
    ))
}

/// Markdown tables described, at most.
const MAX_TABLES: usize = 4;

/// How a line of a table aligned in columns splits into its cells, as
/// Python code the model copies; [`cells`] splits with the same pattern,
/// so the rows the look counts are the rows that code finds.
pub(super) const ALIGNED_SPLIT: &str = r"re.split(r'\s{2,}', line.strip())";

static GAP: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"\s{2,}").ok());

/// The cells of a line of an aligned table: the line trimmed, split at two
/// or more white-space characters, as [`ALIGNED_SPLIT`] splits it.
pub(super) fn cells(line: &str) -> Vec<&str> {
    let line = line.trim();
    match GAP.as_ref() {
        Some(gap) => gap.split(line).collect(),
        None => vec![line],
    }
}

/// For a text holding a table aligned in columns (a report: cells
/// separated by two or more spaces, a header line, maybe a `----` line
/// under it and lines of prose around it), when splitting at every space
/// would go wrong — a cell holds a space (`unit tests`), or lines of prose
/// stand around the table: how to split its rows into cells and which
/// lines are rows. Small models take such a report apart with `awk '$4
/// == …'`, which counts words, and keep a note's line as a row.
pub(super) fn aligned(text: &str) -> Option<String> {
    let lines: Vec<&str> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .take(MAX_LINES)
        .collect();
    let split: Vec<Vec<&str>> = lines.iter().map(|line| cells(line)).collect();
    // The table's width: the most common count of three cells or more.
    let mut counts = std::collections::BTreeMap::new();
    for cells in &split {
        if cells.len() >= 3 {
            *counts.entry(cells.len()).or_insert(0usize) += 1;
        }
    }
    let (&width, &rows) = counts.iter().max_by_key(|(width, n)| (**n, **width))?;
    // A header and two rows, at least.
    if rows < 3 {
        return None;
    }
    let ruled = |cells: &[&str]| {
        cells
            .iter()
            .all(|cell| cell.chars().all(|c| matches!(c, '-' | '=' | '+' | '|')))
    };
    let table: Vec<&Vec<&str>> = split.iter().filter(|cells| cells.len() == width).collect();
    let header = table.first()?;
    let body: Vec<&&Vec<&str>> = table.iter().skip(1).filter(|cells| !ruled(cells)).collect();
    if body.len() < 2 || ruled(header) {
        return None;
    }
    let spaced = body
        .iter()
        .flat_map(|cells| cells.iter())
        .find(|cell| cell.contains(' '));
    let other = lines
        .iter()
        .zip(&split)
        .filter(|(_, cells)| cells.len() != width)
        .map(|(line, _)| line.trim())
        .find(|line| {
            !line
                .chars()
                .all(|c| matches!(c, '-' | '=' | '+' | '|' | ' '))
        });
    if spaced.is_none() && other.is_none() {
        return None;
    }
    let names: Vec<String> = header.iter().map(|cell| format!("`{cell}`")).collect();
    let rule = if table.iter().any(|cells| ruled(cells)) {
        " and the `---` line"
    } else {
        ""
    };
    let mut out = format!(
        "a table with the columns {}, separated by two or more spaces. Split a line into its cells with `import re`, `cells = {ALIGNED_SPLIT}`: its {} rows are the lines with `len(cells) == {width}`, after the header{rule}",
        names.join(", "),
        body.len()
    );
    if let Some(cell) = spaced {
        out.push_str(&format!(
            ". Some cells hold a space (`{cell}`), so `line.split()` and awk's `$3` count words, not columns"
        ));
    }
    if let Some(line) = other {
        let shown: String = line.chars().take(SHORT).collect();
        let more = if shown.len() < line.len() { "…" } else { "" };
        out.push_str(&format!(
            ". The other lines (like `{shown}{more}`) are not rows, whatever words they hold"
        ));
    }
    out.push('.');
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
/// A web log's time, bracketed with its zone (`[03/Mar/2024:23:58:01
/// +0000]`).
static LOG_TIME: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"^\[\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4}\]$").ok()
});

/// An ISO date and time (`2024-06-01T10:00:00Z`, `2024-06-01 10:00:00`).
static ISO_TIME: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$").ok()
});

/// For field `i` whose values are all dates with times, how to read one
/// and its day: small models cut such a time apart by hand and keep the
/// bracket, or write the day in the log's own form.
fn when(values: &[&str], i: usize) -> Option<String> {
    let all = |re: &LazyLock<Option<Regex>>| {
        re.as_ref()
            .is_some_and(|re| values.iter().all(|v| re.is_match(v)))
    };
    if all(&LOG_TIME) {
        Some(format!(
            "; read it with `from datetime import datetime`, `when = datetime.strptime(fields[{i}], '[%d/%b/%Y:%H:%M:%S %z]')`, its day as YYYY-MM-DD with `when.strftime('%Y-%m-%d')`"
        ))
    } else if all(&ISO_TIME) {
        Some(format!(
            "; its day as YYYY-MM-DD is `fields[{i}][:10]`, and `datetime.fromisoformat(fields[{i}])` (`from datetime import datetime`) reads the whole time"
        ))
    } else {
        None
    }
}

/// For field `i` whose values are all quoted HTTP requests (`"GET
/// /about HTTP/1.1"`): where its method and path are.
fn request(values: &[&str], i: usize) -> Option<String> {
    is_request(values).then(|| {
        format!(
            "; its method is `fields[{i}].strip('\"').split()[0]` and its path `fields[{i}].split()[1]`"
        )
    })
}

/// Whether `values` are all quoted HTTP requests (`"GET /about HTTP/1.1"`).
fn is_request(values: &[&str]) -> bool {
    values.iter().all(|v| {
        let words: Vec<&str> = v.trim_matches('"').split(' ').collect();
        v.starts_with('"')
            && words.len() == 3
            && words[0].chars().all(|c| c.is_ascii_uppercase())
            && words[2].starts_with("HTTP/")
    })
}

/// For field `i` of `columns` right after the HTTP requests, whose values
/// are all status codes (`200`, `404`, `500`): that it is the status,
/// and how to compare it (a number in a path, `/items/500`, is not one).
fn status(columns: &[Vec<&str>], i: usize) -> Option<String> {
    let values = columns.get(i)?;
    let code = |v: &&str| v.len() == 3 && v.parse::<u16>().is_ok_and(|n| (100..600).contains(&n));
    (i > 0 && is_request(&columns[i - 1]) && values.iter().all(code))
        .then(|| format!("; the HTTP status (`fields[{i}] == '500'`)"))
}

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

    /// The first piece of code (in backticks) of a `profile` that starts
    /// with `start`.
    fn given<'a>(profile: &'a str, start: &str) -> &'a str {
        profile
            .split('`')
            .skip(1)
            .step_by(2)
            .find(|c| c.starts_with(start))
            .unwrap_or_else(|| panic!("no `{start}…` in {profile}"))
    }

    #[test]
    fn an_access_log_is_split_into_its_fields() {
        let profile = profile("'app.log'", ACCESS, true).expect("an access log is records");
        assert!(
            profile.contains(r#"re.findall(r'\[[^\]]*\]|"[^"]*"|\S+', line)"#),
            "{profile}"
        );
        assert!(profile.contains("keeps its quotes"), "{profile}");
        // The status is field 5, a number, shown with its values; the
        // bracketed time is one field.
        assert!(
            profile.contains("- `fields[5]`: whole numbers, like `200`, `500`, `404`; the HTTP status (`fields[5] == '500'`)\n"),
            "{profile}"
        );
        // The bytes after it are no status.
        assert!(
            profile.contains("- `fields[6]`: whole numbers, like `500`, `5405`, `2571`\n"),
            "{profile}"
        );
        assert!(
            profile.contains("- `fields[3]`: text, like `[02/Nov/2026:10:00:00 +0000]`; read it with `from datetime import datetime`, `when = datetime.strptime(fields[3], '[%d/%b/%Y:%H:%M:%S %z]')`, its day as YYYY-MM-DD with `when.strftime('%Y-%m-%d')`\n"),
            "{profile}"
        );
        assert!(
            profile.contains("its method is `fields[4].strip('\"').split()[0]` and its path `fields[4].split()[1]`"),
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
        let profile = profile("'app.log'", log, true).expect("a log with messages is records");
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
    fn key_value_pairs_and_a_date_beside_a_time_get_the_code_that_reads_them() {
        let log = "2024-06-01 08:00:00 INFO  user=alice action=login ip=10.0.0.5\n\
                   2024-06-01 08:05:00 INFO  user=bob action=login ip=10.0.0.7\n\
                   2024-06-01 08:30:00 DEBUG cache warmed in 120ms\n\
                   2024-06-01 09:00:00 INFO  user=alice action=logout\n\
                   2024-06-01 09:15:00 WARN  slow query (2300ms) for user=bob\n\
                   2024-06-01 09:35:00 INFO  user=bob action=logout\n";
        let profile = profile("'app.log'", log, true).unwrap();
        assert!(
            profile.contains("\nLines hold `key=value` pairs (`user` in 5 of 6 lines, `action` in 4 of 6 lines, `ip` in 2 of 6 lines): read them by key, wherever they stand, with `pairs = dict(re.findall(r'(\\w+)=(\\S+)', line))`, then `pairs.get('user')` (None on a line without it)."),
            "{profile}"
        );
        assert!(
            profile
                .contains("`datetime.strptime(fields[0] + ' ' + fields[1], '%Y-%m-%d %H:%M:%S')`"),
            "{profile}"
        );
        // The code given runs in real Python and finds each login's time.
        let Some(python) = oi_testkit::python3() else {
            return;
        };
        let pick = |start: &str| given(&profile, start);
        let script = format!(
            "import re, sys\n{}\nfor line in sys.stdin:\n    {}\n    {}\n    if pairs.get('action') == 'login':\n        print(pairs.get('user'), {}.strftime('%H:%M'))\n",
            pick("from datetime"),
            pick("fields = "),
            pick("pairs = "),
            pick("datetime.strptime"),
        );
        let (out, err) = run_on(python, &script, log);
        assert_eq!(out, "alice 08:00\nbob 08:05\n", "{script}\n{err}");
    }

    #[test]
    fn lines_without_pairs_get_no_pairs_note() {
        let log = "2026-11-02 10:00:01 INFO [db] connected\n\
                   2026-11-02 10:00:02 ERROR [api] failed a=1\n\
                   2026-11-02 10:00:03 INFO [api] served\n\
                   2026-11-02 10:00:04 WARN [db] slow query\n";
        let profile = profile("'app.log'", log, true).unwrap();
        assert!(!profile.contains("key=value"), "{profile}");
    }

    #[test]
    fn prose_and_lists_are_not_records() {
        assert_eq!(
            profile(
                "'app.log'",
                "Roses are red\nViolets are blue\nRust is fast\n",
                true
            ),
            None
        );
        assert_eq!(
            profile("'app.log'", "apple\nbanana\ncherry\ndate\n", true),
            None
        );
        assert_eq!(
            profile(
                "'app.log'",
                "The build started at noon and ran long.\nIt failed twice before lunch.\nNobody knew why it did.\n",
                true
            ),
            None
        );
        // Two lines are too few to tell.
        assert_eq!(profile("'app.log'", "a 1 x\nb 2 y\n", true), None);
    }

    #[test]
    fn a_cut_last_line_is_not_read() {
        let cut = format!("{ACCESS}10.0.0.9 - -");
        let profile = profile("'app.log'", &cut, false).expect("the whole lines are records");
        assert!(profile.contains("- `fields[8]`"), "{profile}");
        assert!(!profile.contains("the rest of the line"), "{profile}");
    }

    const REPORT: &str = "Nightly build report\n====================\n\nID      Job              Status    Duration\n------  ---------------  --------  --------\nJ-101   compile          PASSED    00:04:10\nJ-102   unit tests       FAILED    00:12:55\nJ-104   integration      FAILED    00:30:02\n\nNotes: J-103 was FAILED yesterday; rerun J-102 after the fix.\n";

    #[test]
    fn a_report_aligned_in_columns_gets_its_split_and_its_rows() {
        assert_eq!(
            aligned(REPORT).as_deref(),
            Some(
                "a table with the columns `ID`, `Job`, `Status`, `Duration`, separated by two or more spaces. Split a line into its cells with `import re`, `cells = re.split(r'\\s{2,}', line.strip())`: its 3 rows are the lines with `len(cells) == 4`, after the header and the `---` line. Some cells hold a space (`unit tests`), so `line.split()` and awk's `$3` count words, not columns. The other lines (like `Nightly build report`) are not rows, whatever words they hold."
            )
        );
        // Split as the Python line given splits: a lone tab is one space.
        assert_eq!(
            cells("  J-102   unit tests\t\tFAILED  x y\t"),
            ["J-102", "unit tests", "FAILED", "x y"]
        );
        assert_eq!(cells("a\tb"), ["a\tb"]);
    }

    #[test]
    fn the_split_the_look_gives_splits_the_rows_in_python() {
        let Some(python) = oi_testkit::python3() else {
            return;
        };
        let script = format!(
            "import re, sys\nfor line in sys.stdin:\n    cells = {ALIGNED_SPLIT}\n    if len(cells) == 4 and cells[2] == 'FAILED':\n        print(cells[0])\n"
        );
        let (out, _) = run_on(python, &script, REPORT);
        assert_eq!(out, "J-102\nJ-104\n");
    }

    /// Runs the Python `script` with `input` on its standard input: its
    /// standard output and error.
    fn run_on(python: &str, script: &str, input: &str) -> (String, String) {
        use std::io::Write as _;
        let mut child = std::process::Command::new(python)
            .arg("-c")
            .arg(script)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    #[test]
    fn markdown_tables_get_their_rows_and_the_split() {
        let text = "# Release plan\n\nThe table below.\n\n| Version | Codename | Notes |\n|:--------|:--------:|-------|\n| 1.0 | Acorn | first, public |\n| 2.0 | Cedar |  |\n\n| Owner | Area |\n|---|---|\n| ana | docs |\n";
        let look = markdown_tables(text, "'README.md'").unwrap();
        assert_eq!(
            look,
            "2 Markdown tables. Read the lines with `lines = open('README.md', encoding='utf-8').read().splitlines()`; then the table with the columns `Version`, `Codename`, `Notes` (lines 5–8), its header row first, is `rows = [[c.strip() for c in line.strip().strip('|').split('|')] for line in lines[4:5] + lines[6:8]]`; the table with the columns `Owner`, `Area` (lines 10–12), its header row first, is `rows = [[c.strip() for c in line.strip().strip('|').split('|')] for line in lines[9:10] + lines[11:12]]` (the `|---|` line left out; the `|` at each end of a line makes no cell, and an empty cell is `''`)"
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(pipe_cells(lines[6]), ["1.0", "Acorn", "first, public"]);
        assert_eq!(pipe_cells(lines[7]), ["2.0", "Cedar", ""]);
        // Pipes in prose, or a table without its rule line: no table.
        assert_eq!(markdown_tables("a | b\nc | d\n", "'x.md'"), None);
        assert_eq!(markdown_tables("| a | b |\n| 1 | 2 |\n", "'x.md'"), None);
    }

    /// The code each field's line gives, run in real Python on the log.
    #[test]
    fn the_time_and_request_code_reads_a_web_log_in_python() {
        let Some(python) = oi_testkit::python3() else {
            return;
        };
        let profile = profile("'app.log'", ACCESS, true).unwrap();
        let pick = |start: &str| given(&profile, start);
        let script = format!(
            "import re, sys\n{}\nfor line in sys.stdin:\n    {}\n    {}\n    print({}, {}, {})\n",
            pick("from datetime"),
            pick("fields = "),
            pick("when = "),
            pick("when.strftime"),
            pick("fields[4].strip"),
            pick("fields[4].split()[1]"),
        );
        let (out, err) = run_on(python, &script, ACCESS);
        assert_eq!(
            out,
            "2026-11-02 GET /api/items/500\n2026-11-02 GET /index.html\n2026-11-02 GET /api/items/12\n2026-11-02 GET /img/500px.png\n",
            "{script}\n{err}"
        );
    }

    #[test]
    fn tables_split_right_at_every_space_and_prose_are_not_aligned_tables() {
        // Every cell one word, no prose around: splitting at spaces works.
        assert_eq!(
            aligned("id  name  size\n1   a     10\n2   b     20\n"),
            None
        );
        assert_eq!(
            aligned("Roses are red\nViolets are blue\nRust is fast\n"),
            None
        );
        assert_eq!(aligned("a,b,c\n1,2,3\n4,5,6\n"), None);
        // A header and one row are too few.
        assert_eq!(aligned("Title\nid  name  size\n1   a b   10\n"), None);
    }

    #[test]
    fn the_split_pattern_compiles() {
        let field = FIELD.as_ref().expect("the field pattern compiles");
        assert_eq!(field.find_iter(r#"a "b c" [d e] f"#).count(), 4);
    }
}
