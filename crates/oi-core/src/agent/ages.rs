//! Ages counted as days over a year's length (small models). Code that
//! writes an age as `(ref - born).dt.days // 365` (or `/ 365.25`, or a
//! date's `.days` in a loop) is a year too high in the days before a
//! birthday, once leap days add up. Told the rule, a small model wrote the
//! pandas form with the birth date on both sides (every age 0). The fix is
//! one well-known line, made by oi: whole years from the dates' parts.

/// The line of Python `code` that counts an age as days over a year's
/// length, and the lines that count whole years in its place: a line
/// `target = (ref - born).dt.days // 365` (pandas, `born` a column) or
/// `target = (ref - born).days // 365` (dates), the division by `365`,
/// `365.25` or `365.2425` with `//` or `/`, the whole possibly in
/// `int(…)` or followed by `.astype(int)`, where `ref` is a date made
/// from what the code gives (`pd.to_datetime('2024-06-30')`,
/// `datetime(2024, 6, 30)`) or a name the code sets to one.
pub(super) fn whole_years(code: &str) -> Option<(String, String)> {
    code.lines().find_map(|line| {
        let line = line.trim();
        let (target, op, value) = super::splice::assignment(line)?;
        if !op.is_empty() {
            return None;
        }
        let (reference, born, series) = days_over_year(value)?;
        let (setup, reference) = if is_date_call(reference) {
            let name = ["ref", "as_of", "on_date"]
                .into_iter()
                .find(|name| !uses_name(code, name))?;
            (format!("{name} = {reference}\n"), name)
        } else if names_a_date(code, reference) {
            (String::new(), reference)
        } else {
            return None;
        };
        let fixed = if series {
            format!(
                "{target} = {reference}.year - {born}.dt.year - (({born}.dt.month > {reference}.month) | (({born}.dt.month == {reference}.month) & ({born}.dt.day > {reference}.day)))"
            )
        } else {
            if !is_plain(born) {
                return None;
            }
            format!(
                "{target} = {reference}.year - {born}.year - (({reference}.month, {reference}.day) < ({born}.month, {born}.day))"
            )
        };
        Some((line.to_owned(), format!("{setup}{fixed}")))
    })
}

/// `(ref - born).dt.days // 365` and its variants (see [`whole_years`]):
/// `ref`, `born`, and whether it is the pandas form.
fn days_over_year(value: &str) -> Option<(&str, &str, bool)> {
    let mut value = value.trim();
    // `int(…)` around it, or `.astype(int)` after it.
    let mut wrapped = false;
    if let Some(inner) = value.strip_prefix("int").and_then(enclosed) {
        value = inner.trim();
        wrapped = true;
    }
    if let Some(inner) = value.strip_suffix(".astype(int)") {
        value = inner.trim();
        wrapped = true;
    }
    let value = enclosed(value).unwrap_or(value).trim();
    let slash = value.rfind('/')?;
    let (left, divisor) = (value[..slash].trim_end(), value[slash + 1..].trim());
    if !["365", "365.25", "365.2425"].contains(&divisor) {
        return None;
    }
    let floor = left.ends_with('/');
    if !floor && !wrapped {
        // A fraction of years, not a count of them.
        return None;
    }
    let left = left.trim_end_matches('/').trim_end();
    let (difference, series) = match left.strip_suffix(".dt.days") {
        Some(d) => (d, true),
        None => (left.strip_suffix(".days")?, false),
    };
    let (reference, born) = split_minus(enclosed(difference)?)?;
    Some((reference, born, series))
}

/// What `text` holds inside its brackets when it is one bracketed whole
/// (`(a - b)`, not `(a) - (b)`).
fn enclosed(text: &str) -> Option<&str> {
    let last = text.len().checked_sub(1)?;
    (text.starts_with('(') && super::pyline::closing_bracket(text, 0) == Some(last))
        .then(|| &text[1..last])
}

/// `a - b` split at its one `-` outside brackets and strings.
fn split_minus(text: &str) -> Option<(&str, &str)> {
    let bytes = text.as_bytes();
    let (mut i, mut at) = (0, None);
    while i < bytes.len() {
        match bytes[i] {
            b'(' | b'[' | b'{' => i = super::pyline::closing_bracket(text, i)?,
            quote @ (b'\'' | b'"') => i += 1 + text[i + 1..].find(char::from(quote))?,
            b'-' => {
                if at.is_some() {
                    return None;
                }
                at = Some(i);
            }
            _ => {}
        }
        i += 1;
    }
    let at = at?;
    let (a, b) = (text[..at].trim(), text[at + 1..].trim());
    (!a.is_empty() && !b.is_empty()).then_some((a, b))
}

/// Calls that make one date from what they are given.
const DATE_CALLS: &[&str] = &[
    "pd.to_datetime(",
    "pd.Timestamp(",
    "pandas.to_datetime(",
    "pandas.Timestamp(",
    "datetime(",
    "datetime.datetime(",
    "date(",
    "datetime.date(",
    "datetime.strptime(",
    "datetime.datetime.strptime(",
    "date.fromisoformat(",
    "datetime.fromisoformat(",
    "datetime.date.fromisoformat(",
];

/// Whether `text` is one call that makes a date from literals
/// (`pd.to_datetime('2024-06-30')`, `datetime(2024, 6, 30)`), not from a
/// table or a variable.
fn is_date_call(text: &str) -> bool {
    DATE_CALLS.iter().any(|call| {
        text.strip_prefix(call)
            .and_then(|rest| rest.strip_suffix(')'))
            .is_some_and(|args| {
                !args.contains(['(', '[']) && args.chars().any(|c| c.is_ascii_digit())
            })
    })
}

/// Whether `name` is a name that `code` sets, once, to a date call
/// ([`is_date_call`]).
fn names_a_date(code: &str, name: &str) -> bool {
    if !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return false;
    }
    let sets: Vec<&str> = code
        .lines()
        .filter_map(|line| {
            let (target, op, value) = super::splice::assignment(line.trim())?;
            (target == name && op.is_empty()).then_some(value)
        })
        .collect();
    matches!(sets.as_slice(), [value] if is_date_call(value.trim()))
}

/// Whether `text` reads a value without calling anything: a name, its
/// attributes, subscripts by a literal (`born`, `row['born']`,
/// `m.birth`).
fn is_plain(text: &str) -> bool {
    !text.contains('(')
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || "_.[]'\"".contains(c))
}

/// Whether `code` uses `name` as a word.
fn uses_name(code: &str, name: &str) -> bool {
    code.match_indices(name).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = code[at + name.len()..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !word(before) && !word(after)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pandas_age_in_days_over_a_year_is_counted_in_whole_years() {
        let line = "df['age'] = (pd.to_datetime('2024-06-30') - df['born']).dt.days // 365";
        let code = format!("import pandas as pd\ndf = pd.read_csv('m.csv')\n{line}\n");
        let (found, fixed) = whole_years(&code).unwrap();
        assert_eq!(found, line);
        assert_eq!(
            fixed,
            "ref = pd.to_datetime('2024-06-30')\ndf['age'] = ref.year - df['born'].dt.year - ((df['born'].dt.month > ref.month) | ((df['born'].dt.month == ref.month) & (df['born'].dt.day > ref.day)))"
        );
        // A date set by a name, divided by 365.25 and made whole.
        let code = "ref_date = pd.Timestamp('2024-06-30')\ndf['age'] = ((ref_date - df['born']).dt.days / 365.25).astype(int)\n";
        let (_, fixed) = whole_years(code).unwrap();
        assert!(
            fixed.starts_with("df['age'] = ref_date.year - df['born'].dt.year - "),
            "{fixed}"
        );
        // `ref` taken: another name.
        let code = format!("ref = 'x'\n{line}\n");
        assert!(whole_years(&code).unwrap().1.starts_with("as_of = "));
    }

    #[test]
    fn a_dates_age_in_days_over_a_year_is_counted_in_whole_years() {
        let code = "on = datetime(2024, 6, 30)\nfor row in rows:\n    born = datetime.strptime(row['born'], '%d/%m/%Y')\n    age = int((on - born).days / 365.25)\n";
        let (found, fixed) = whole_years(code).unwrap();
        assert_eq!(found, "age = int((on - born).days / 365.25)");
        assert_eq!(
            fixed,
            "age = on.year - born.year - ((on.month, on.day) < (born.month, born.day))"
        );
        let code = "age = (date(2024, 6, 30) - m['born']).days // 365\n";
        assert_eq!(
            whole_years(code).unwrap().1,
            "ref = date(2024, 6, 30)\nage = ref.year - m['born'].year - ((ref.month, ref.day) < (m['born'].month, m['born'].day))"
        );
    }

    #[test]
    fn other_divisions_and_dates_are_left_alone() {
        for code in [
            // A fraction of years asked, not a whole count.
            "years = (pd.to_datetime('2024-06-30') - df['born']).dt.days / 365.25\n",
            // Weeks.
            "df['w'] = (pd.to_datetime('2024-06-30') - df['born']).dt.days // 7\n",
            // The reference date is a column: whose year is `.dt.year`.
            "df['age'] = (df['joined'] - df['born']).dt.days // 365\n",
            // A name set twice, or to something else.
            "ref = pd.to_datetime('2024-06-30')\nref = df['d']\ndf['age'] = (ref - df['born']).dt.days // 365\n",
            // A birth date made by a call in the line (dates form).
            "age = (date(2024, 6, 30) - parse(row['born'])).days // 365\n",
            // Added to, not set.
            "total += (pd.to_datetime('2024-06-30') - df['born']).dt.days // 365\n",
        ] {
            assert_eq!(whole_years(code), None, "{code}");
        }
        assert_eq!(split_minus("a - b - c"), None);
        assert_eq!(enclosed("(a) - (b)"), None);
        assert_eq!(enclosed("(f(a) - b)"), Some("f(a) - b"));
        assert_eq!(
            split_minus("pd.to_datetime('2024-06-30') - df['born']"),
            Some(("pd.to_datetime('2024-06-30')", "df['born']"))
        );
    }
}
