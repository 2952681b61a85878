//! A pandas table made from a list that stayed empty (small models): the
//! code appends rows that have a key to a list, makes a table of it, and
//! the table has no column of that name (`KeyError: 'avg_ms'`). Every row
//! would have given the column, so no row was appended: the test before
//! the append held for no line. A small model reads the error as a
//! missing column and makes up columns the empty table lacks as well.

use super::splice::{assignment, enclosing, opens_loop};

/// The note for a run of Python `code` whose `output` ends in such a
/// `KeyError`, naming the table, the list and the tests the appends are
/// under.
pub(super) fn note(output: &str, code: &str) -> Option<String> {
    let (_, rest) = output.rsplit_once("KeyError: ")?;
    let key = super::coach::quoted(rest.trim_start())?;
    let failing = super::error_hint::traceback_line(output)?;
    let lines: Vec<&str> = code.lines().collect();
    let (table, list) = lines.iter().find_map(|line| {
        let (target, op, value) = assignment(line.trim())?;
        let list = value
            .strip_prefix("pd.DataFrame(")?
            .strip_suffix(')')?
            .trim();
        let plain =
            |name: &str| !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_');
        let reads = [format!("{target}['{key}']"), format!("{target}[\"{key}\"]")]
            .iter()
            .any(|read| failing.contains(read.as_str()));
        (op.is_empty() && plain(&target) && plain(list) && reads).then_some((target, list))
    })?;
    let append = format!("{list}.append(");
    let appends: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, line)| line.trim_start().starts_with(&append))
        .map(|(at, _)| at)
        .collect();
    let has_key = |line: &str| {
        [
            format!("'{key}':"),
            format!("\"{key}\":"),
            format!("{key}="),
        ]
        .iter()
        .any(|k| line.contains(k.as_str()))
    };
    let first = *appends.first()?;
    if !appends.iter().all(|&at| has_key(lines[at])) {
        return None;
    }
    let tests = tests_above(&lines, first);
    let since = match tests.as_slice() {
        [] => String::new(),
        [test] => format!(": no line passed `{test}`"),
        tests => format!(
            ": no line passed {}",
            tests
                .iter()
                .map(|t| format!("`{t}`"))
                .collect::<Vec<_>>()
                .join(" and ")
        ),
    };
    let what = if tests.is_empty() {
        "the values the loop reads"
    } else {
        "the values that test reads"
    };
    Some(format!(
        "[oi: `{table}` has no `{key}` column, though every row your code appends to `{list}` has that key: `{list}` stayed empty{since}. Print {what} for the first few lines, then test them as they are.]"
    ))
}

/// The `if`/`elif` lines the line at `at` is under, outermost first, up
/// to the loop it is in.
fn tests_above(lines: &[&str], at: usize) -> Vec<String> {
    let mut tests: Vec<String> = enclosing(lines, at)
        .take_while(|header| !opens_loop(header))
        .filter(|header| header.starts_with("if ") || header.starts_with("elif "))
        .map(str::to_owned)
        .collect();
    tests.reverse();
    tests
}

#[cfg(test)]
mod tests {
    use super::*;

    const CODE: &str = "import pandas as pd\ndata = []\nfor line in open('api.log'):\n    fields = line.split()\n    if len(fields) >= 4:\n        name = fields[3]\n        if name == 'latency':\n            data.append({'endpoint': fields[2], 'avg_ms': float(fields[4])})\ndf = pd.DataFrame(data)\ndf['avg_ms'] = df['avg_ms'].round(1)\n";

    fn failed(line: &str, key: &str) -> String {
        format!(
            "Traceback (most recent call last):\n  File \"<cell-1>\", line 10, in <module>\n    {line}\n                   ~~^^^^^^^^^^\n  [2 frames inside libraries]\nKeyError: '{key}'\n"
        )
    }

    #[test]
    fn a_table_of_a_list_that_stayed_empty_names_the_tests_no_line_passed() {
        assert_eq!(
            note(
                &failed("df['avg_ms'] = df['avg_ms'].round(1)", "avg_ms"),
                CODE
            )
            .as_deref(),
            Some(
                "[oi: `df` has no `avg_ms` column, though every row your code appends to `data` has that key: `data` stayed empty: no line passed `if len(fields) >= 4:` and `if name == 'latency':`. Print the values that test reads for the first few lines, then test them as they are.]"
            )
        );
        // An append under no test, with dict(): the loop's values.
        let code = "rows = []\nfor r in records:\n    rows.append(dict(city=r[0], total=r[1]))\nt = pd.DataFrame(rows)\nprint(t[\"total\"].sum())\n";
        let note = note(&failed("print(t[\"total\"].sum())", "total"), code).unwrap();
        assert!(
            note.contains("`rows` stayed empty. Print the values the loop reads"),
            "{note}"
        );
    }

    #[test]
    fn a_key_some_rows_lack_or_a_table_read_from_a_file_is_not_this() {
        // A key the appended rows do not have: a misspelt column.
        assert_eq!(
            note(&failed("df['avg'] = df['avg'].round(1)", "avg"), CODE),
            None
        );
        // Two appends, one without the key.
        let code = CODE.replace(
            "df = pd.DataFrame",
            "    else:\n        data.append({'endpoint': 'none'})\ndf = pd.DataFrame",
        );
        assert_eq!(
            note(
                &failed("df['avg_ms'] = df['avg_ms'].round(1)", "avg_ms"),
                &code
            ),
            None
        );
        // A table read from a file.
        let code = "df = pd.read_csv('a.csv')\ndf['avg_ms'] = df['avg_ms'].round(1)\n";
        assert_eq!(
            note(
                &failed("df['avg_ms'] = df['avg_ms'].round(1)", "avg_ms"),
                code
            ),
            None
        );
        // The failing line reads another table.
        assert_eq!(note(&failed("other['avg_ms'].sum()", "avg_ms"), CODE), None);
    }
}
