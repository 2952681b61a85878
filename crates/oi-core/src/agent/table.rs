//! A profile of a table file for small models: its separator, its columns
//! and what their values are like, with the quirks real exports have
//! (numbers written as `$1,200.50` or `3,50`, missing values written as
//! `NA` or `-`, one value typed with different case or spacing, dates in
//! several formats). Small models otherwise convert the first lines they
//! see and fail, or, worse, compute a wrong result from the rest.
//!
//! Bounded: the rows read are those of the file's start the first look
//! already read; at most [`MAX_ROWS`] of them are profiled, and each
//! column's line is short.

use std::collections::BTreeSet;

/// Rows profiled, at most.
const MAX_ROWS: usize = 2000;
/// Columns described, at most.
const MAX_COLUMNS: usize = 12;
/// Distinct text values listed, at most; and how long one may be.
const MAX_LISTED: usize = 6;
const LISTED_WIDTH: usize = 24;
/// Examples of odd values shown, at most.
const EXAMPLES: usize = 3;

/// Words that mean "no value" in exports.
const MISSING: &[&str] = &[
    "na", "n/a", "nan", "null", "none", "-", "--", "?", "missing", "#n/a",
];

/// The profile of `text` (a file's start; `complete` when it is the whole
/// file) if it is a table: rows of two or more fields split by one
/// separator. With `order`, each column's line says whether its values
/// are sorted (for a result, where the task may ask for an order).
pub(super) fn profile(text: &str, complete: bool, order: bool) -> Option<String> {
    let (separator, rows) = split_whole(text, complete)?;
    let header = &rows[0];
    let body = &rows[1..];
    let mut out = format!(
        "{} rows under a header row, fields separated by {}{}. Columns:",
        body.len(),
        match separator {
            b'\t' => "tabs".to_owned(),
            other => format!("`{}`", other as char),
        },
        if complete { "" } else { " (in the part read)" },
    );
    for (i, name) in header.iter().enumerate().take(MAX_COLUMNS) {
        let values: Vec<&str> = body
            .iter()
            .filter_map(|row| row.get(i).map(String::as_str))
            .collect();
        let shown = if name.trim() == name && !name.is_empty() {
            format!("`{name}`")
        } else {
            format!("`{name}` (with the spaces)")
        };
        let sorted = if order { sort_order(&values) } else { "" };
        out.push_str(&format!("\n- {shown}: {}{sorted}", describe(&values)));
    }
    if header.len() > MAX_COLUMNS {
        out.push_str(&format!("\n- … ({} columns in all)", header.len()));
    }
    Some(out)
}

/// Missing-value words pandas' `read_csv` reads as missing by default
/// (the case matters).
const PANDAS_MISSING: &[&str] = &[
    "#N/A", "#NA", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
];
/// Conversions written after the read, at most.
const MAX_CONVERSIONS: usize = 4;

/// The pandas code that reads the table `text` (the start of the file
/// `name`; `complete` when it is the whole file) as its quirks need: the
/// separator, missing values written as words pandas does not know,
/// spaces around names and values, numbers written with signs or
/// separators, dates in several formats. A small model copies code it is
/// shown far more reliably than it follows a description. `None` when
/// `text` is not a table.
pub(super) fn read_with(name: &str, text: &str, complete: bool) -> Option<String> {
    let (separator, rows) = split_whole(text, complete)?;
    let header = &rows[0];
    let body = &rows[1..];
    let mut options = Vec::new();
    match separator {
        b',' => {}
        b'\t' => options.push("sep='\\t'".to_owned()),
        other => options.push(format!("sep='{}'", other as char)),
    }
    let markers: BTreeSet<String> = body
        .iter()
        .flatten()
        .map(|v| v.trim())
        .filter(|v| is_missing(v) && !v.is_empty())
        .filter(|v| !PANDAS_MISSING.contains(v))
        .map(python_string)
        .collect();
    if !markers.is_empty() {
        options.push(format!(
            "na_values=[{}]",
            markers.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    let padded = |v: &String| !v.is_empty() && v.trim() != v;
    if body.iter().flatten().any(padded) {
        options.push("skipinitialspace=True".to_owned());
    }
    let mut code = vec![format!(
        "df = pd.read_csv({}{})",
        python_string(name),
        options.iter().map(|o| format!(", {o}")).collect::<String>()
    )];
    if header.iter().any(padded) {
        code.push("df.columns = df.columns.str.strip()".to_owned());
    }
    let mut conversions = Vec::new();
    for (i, column) in header.iter().enumerate() {
        let values: Vec<&str> = body
            .iter()
            .filter_map(|row| row.get(i).map(|v| v.trim()))
            .filter(|v| !is_missing(v))
            .collect();
        if values.is_empty() {
            continue;
        }
        let column = python_string(column.trim());
        let at = format!("df[{column}]");
        if filled_down(body, i) {
            conversions.push(format!("{at} = {at}.ffill()"));
            continue;
        }
        // pandas reads a column of plain numbers as numbers.
        let not_plain = values.iter().any(|v| v.parse::<f64>().is_err());
        if not_plain && values.iter().all(|v| written_number(v).is_some()) {
            // A decimal comma, or points between thousands (`1.204.331`).
            let european = values.iter().any(|v| {
                written_number(v) == Some(Written::DecimalComma) || v.matches('.').count() > 1
            });
            let keep = if european { "[^0-9,-]" } else { "[^0-9.-]" };
            let comma = if european {
                ".str.replace(',', '.')"
            } else {
                ""
            };
            conversions.push(format!(
                "{at} = pd.to_numeric({at}.str.replace(r'{keep}', '', regex=True){comma})"
            ));
        } else if let Some(read) = read_dates(&at, &values) {
            conversions.push(read);
        } else if let Some(case) = id_case(&values) {
            // Codes typed in other case or with spaces (` c001 `, `C001`):
            // one spelling, so they match another table's.
            conversions.push(format!("{at} = {at}.str.strip().str.{case}()"));
        } else if is_category(&values) {
            // A few kinds typed in any case (`sale`, `Sale`, `SALE `):
            // one spelling, so `== 'sale'` and a group by find them all.
            conversions.push(format!("{at} = {at}.str.strip().str.lower()"));
        } else if not_plain
            && body
                .iter()
                .filter_map(|row| row.get(i))
                .any(|v| v.trim_start() != v.trim())
        {
            // Spaces after a text value, which `skipinitialspace` leaves
            // (pandas reads a number with them as a number).
            conversions.push(format!("{at} = {at}.str.strip()"));
        }
    }
    code.extend(conversions.into_iter().take(MAX_CONVERSIONS));
    Some(
        code.iter()
            .map(|line| format!("`{line}`"))
            .collect::<Vec<_>>()
            .join(", then "),
    )
}

/// Whether column `i` of the table's `body` is written the way a
/// spreadsheet's merged cells export: a text value on the first row of
/// each block and blank under it (`North`, ``, ``, `South`, ``): the
/// first row has a value, at least two rows are blank, the values are
/// text and each stands once (a column merely missing some values
/// repeats its values), and the blank rows have their other fields. Such
/// a column is filled down before use (`ffill`); grouped as it is, the
/// blank rows drop out.
fn filled_down(body: &[Vec<String>], i: usize) -> bool {
    let cells: Vec<&str> = body
        .iter()
        .map(|row| row.get(i).map_or("", |v| v.trim()))
        .collect();
    let blank = |v: &&str| v.is_empty();
    let written: Vec<&&str> = cells.iter().filter(|v| !blank(v)).collect();
    let kinds: BTreeSet<String> = written.iter().map(|v| fold(v)).collect();
    let others_filled = body
        .iter()
        .zip(&cells)
        .filter(|(_, v)| blank(v))
        .all(|(row, _)| {
            row.iter()
                .enumerate()
                .any(|(j, v)| j != i && !is_missing(v.trim()))
        });
    cells.first().is_some_and(|v| !blank(v))
        && cells.len() - written.len() >= 2
        && written.len() >= 2
        && kinds.len() == written.len()
        && written.iter().all(|v| v.parse::<f64>().is_err())
        && others_filled
}

/// For a column of codes (`values`: each a word of letters and digits,
/// like `C001`) written in more than one case, the case most of them are
/// written in: `upper` or `lower`.
fn id_case(values: &[&str]) -> Option<&'static str> {
    let code = |v: &&str| {
        !v.is_empty()
            && !v.contains(char::is_whitespace)
            && v.chars().any(|c| c.is_ascii_digit())
            && v.chars().any(char::is_alphabetic)
    };
    if !values.iter().all(code) || variants(values).is_none() {
        return None;
    }
    let upper = values.iter().filter(|v| v.to_uppercase() == **v).count();
    let lower = values.iter().filter(|v| v.to_lowercase() == **v).count();
    Some(if lower > upper { "lower" } else { "upper" })
}

/// Whether a column's `values` are a few kinds, each repeated, some
/// written in other case or spacing (`sale`, `Sale`, `SALE `): words of
/// letters only, at most half as many kinds as values. Names and other
/// mostly distinct values are not (their case is the task's to choose).
fn is_category(values: &[&str]) -> bool {
    let word = |v: &&str| {
        !v.is_empty()
            && v.chars().any(char::is_alphabetic)
            && v.chars()
                .all(|c| c.is_alphabetic() || c == ' ' || c == '-' || c == '_')
    };
    let kinds: BTreeSet<String> = values.iter().map(|v| fold(v)).collect();
    values.iter().all(word) && variants(values).is_some() && kinds.len() * 2 <= values.len()
}

/// The pandas code that reads the column `at` of dates `values` (all
/// dates): in several formats, or day first (a first number above 12:
/// `24/12/2026`, where pandas reads the month first). pandas' `dayfirst`
/// also swaps `2026-04-01`'s month and day, so ISO dates beside day-first
/// ones are read one by one. `None` for dates pandas reads as they are.
fn read_dates(at: &str, values: &[&str]) -> Option<String> {
    let formats: BTreeSet<&str> = values.iter().filter_map(|v| date_format(v)).collect();
    if values.is_empty() || values.iter().any(|v| date_format(v).is_none()) {
        return None;
    }
    let numbers = |v: &&str| -> Option<(u32, u32)> {
        let mut parts = v.split(['/', '.', '-']);
        let first = parts.next()?.parse().ok()?;
        let second = parts.next()?.parse().ok()?;
        (first < 100).then_some((first, second))
    };
    let day_first = values.iter().filter_map(numbers).any(|(a, _)| a > 12);
    let month_first = values.iter().filter_map(numbers).any(|(_, b)| b > 12);
    let iso = formats.contains("YYYY-MM-DD");
    if day_first && !month_first && iso {
        Some(format!(
            "{at} = {at}.map(lambda s: pd.to_datetime(s, dayfirst=not str(s)[:4].isdigit()))"
        ))
    } else if day_first && !month_first {
        Some(format!(
            "{at} = pd.to_datetime({at}, format='mixed', dayfirst=True)"
        ))
    } else if formats.len() > 1 {
        Some(format!("{at} = pd.to_datetime({at}, format='mixed')"))
    } else {
        None
    }
}

/// `text` as a Python string literal in single quotes.
pub(super) fn python_string(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// Columns of the table `result` (a file the task's code wrote) missing
/// more values than the same column (its name trimmed, any case) of the
/// table `input`, which has at least as many rows: values the code could
/// not read and dropped (pandas' `errors='coerce'`). Each with how many
/// of the result's rows miss it, how many rows it has, and how many the
/// input misses.
pub(super) fn lost_values(result: &str, input: &str) -> Vec<(String, usize, usize, usize)> {
    let (Some((_, out)), Some((_, inp))) = (split(result), split(input)) else {
        return Vec::new();
    };
    if out.len() > inp.len() {
        return Vec::new();
    }
    let missing = |rows: &[Vec<String>], i: usize| {
        rows[1..]
            .iter()
            .filter(|row| row.get(i).is_none_or(|v| is_missing(v)))
            .count()
    };
    let mut lost = Vec::new();
    for (i, name) in out[0].iter().enumerate().take(MAX_COLUMNS) {
        let key = name.trim().to_lowercase();
        let Some(j) = inp[0].iter().position(|n| n.trim().to_lowercase() == key) else {
            continue;
        };
        let (now, before) = (missing(&out, i), missing(&inp, j));
        if now > before {
            lost.push((name.trim().to_owned(), now, out.len() - 1, before));
        }
    }
    lost
}

/// In the table `text`, the column named `column` (any case) when its
/// rows are not in its order — by number when every value is one, else
/// alphabetical ignoring case: its name and the first two values out of
/// order.
pub(super) fn column_out_of_order(text: &str, column: &str) -> Option<(String, String, String)> {
    let (_, rows) = split(text)?;
    let at = rows[0]
        .iter()
        .position(|name| name.trim().eq_ignore_ascii_case(column.trim()))?;
    let values: Vec<&str> = rows[1..]
        .iter()
        .filter_map(|row| row.get(at).map(|v| v.trim()))
        .filter(|v| !is_missing(v))
        .collect();
    let numbers: Option<Vec<f64>> = values.iter().map(|v| v.parse::<f64>().ok()).collect();
    let first = match numbers {
        Some(numbers) => numbers.windows(2).position(|w| w[0] > w[1]),
        None => values
            .windows(2)
            .position(|w| w[0].to_lowercase() > w[1].to_lowercase()),
    }?;
    Some((
        rows[0][at].trim().to_owned(),
        values[first].to_owned(),
        values[first + 1].to_owned(),
    ))
}

/// For each column of the table `text`: whether its values are all dates
/// or months (`2024-01-05`, `2024-01`, `03/02/2026`, an ISO time), and
/// whether they are all numbers.
pub(super) fn column_kinds(text: &str) -> Vec<(bool, bool)> {
    let Some((_, rows)) = split(text) else {
        return Vec::new();
    };
    let month = |v: &str| {
        let b = v.as_bytes();
        b.len() == 7
            && b[4] == b'-'
            && v[..4].parse::<u32>().is_ok()
            && v[5..].parse::<u32>().is_ok()
    };
    (0..rows[0].len())
        .map(|i| {
            let values: Vec<&str> = rows[1..]
                .iter()
                .filter_map(|row| row.get(i).map(|v| v.trim()))
                .filter(|v| !is_missing(v))
                .collect();
            let dated = !values.is_empty()
                && values
                    .iter()
                    .all(|v| month(v) || date_format(v).is_some() || iso_date_time(v));
            let number = !values.is_empty() && values.iter().all(|v| v.parse::<f64>().is_ok());
            (dated, number)
        })
        .collect()
}

/// Where the task asks for something of each `word` ("for each subject")
/// and `word` names a column of the table `input` (any case, singular or
/// plural) that the table `result` has too: when `result` holds fewer of
/// its values than `input` (compared normalised), the column's name and
/// the values of each, sorted. A filter where one row per group was
/// asked (the rows of the overall maximum, not each subject's).
pub(super) fn groups_missing(
    result: &str,
    input: &str,
    word: &str,
) -> Option<(String, Vec<String>, Vec<String>)> {
    let (_, out) = split(result)?;
    let (_, inp) = split(input)?;
    let j = column_named(&inp[0], word)?;
    let i = column_named(&out[0], word)?;
    let distinct = |rows: &[Vec<String>], at: usize| -> BTreeSet<String> {
        rows[1..]
            .iter()
            .filter_map(|row| row.get(at))
            .filter(|v| !is_missing(v))
            .map(|v| fold(v))
            .collect()
    };
    let (now, before) = (distinct(&out, i), distinct(&inp, j));
    // Rows grouped (fewer than the input's) and values copied, not
    // changed: a result that rewrites each row (dates reformatted) is
    // another matter.
    let grouped = out.len() < inp.len();
    (grouped && !now.is_empty() && now.len() < before.len() && now.is_subset(&before)).then(|| {
        (
            out[0][i].trim().to_owned(),
            now.into_iter().collect(),
            before.into_iter().collect(),
        )
    })
}

/// The column of `header` named `word` (a task's word: "each subject"),
/// in any case, in the singular or the plural.
fn column_named(header: &[String], word: &str) -> Option<usize> {
    header.iter().position(|name| names(name, word))
}

/// Whether a column `name` is the task's `word`, in any case, in the
/// singular or the plural (`ID` for "ids", `city` for "cities").
pub(super) fn names(name: &str, word: &str) -> bool {
    let (name, word) = (name.trim().to_lowercase(), word.to_lowercase());
    let plural = |one: &str, many: &str| {
        many.strip_suffix('s') == Some(one)
            || many.strip_suffix("es") == Some(one)
            || many
                .strip_suffix("ies")
                .is_some_and(|stem| one.strip_suffix('y') == Some(stem))
    };
    !name.is_empty() && (name == word || plural(&name, &word) || plural(&word, &name))
}

/// Where the table `result` has a column named `word` (or its plural) in
/// which one value, compared folded, stands on several rows: that
/// column's name, the value as first written, and its rows.
pub(super) fn repeated_group(result: &str, word: &str) -> Option<(String, String, usize)> {
    let (_, out) = split(result)?;
    let i = column_named(&out[0], word)?;
    let values: Vec<&String> = out[1..]
        .iter()
        .filter_map(|row| row.get(i))
        .filter(|v| !is_missing(v))
        .collect();
    values.iter().find_map(|value| {
        let key = fold(value);
        let rows = values.iter().filter(|v| fold(v) == key).count();
        (rows > 1).then(|| (out[0][i].trim().to_owned(), value.trim().to_owned(), rows))
    })
}

/// Whether every column of the table `text` but `column` holds numbers
/// only, or nothing: values per key, as a sum or a count by group is.
pub(super) fn numbers_besides(text: &str, column: &str) -> bool {
    let columns = by_column(text);
    columns.len() > 1
        && columns
            .iter()
            .filter(|(name, _)| name.trim() != column)
            .flat_map(|(_, values)| values)
            .filter(|v| !is_missing(v))
            .all(|v| v.parse::<f64>().is_ok())
}

/// The first row of the table `text` written again whole on a later row
/// (`Ana Lima,15.0` twice), with how many rows hold it: a per-key value
/// put on each input row of that key (`transform`) and the rows not
/// reduced to one per key.
pub(super) fn repeated_row(text: &str) -> Option<(String, usize)> {
    let (sep, rows) = split(text)?;
    let body = &rows[1..];
    body.iter().find_map(|row| {
        let count = body.iter().filter(|other| *other == row).count();
        (count > 1).then(|| (row.join(&char::from(sep).to_string()), count))
    })
}

/// Where the table `result` keeps one row per key of the table `input`
/// and the task asks for each key's latest row (`latest`; its earliest
/// otherwise), by an ISO date column both have: the first key whose kept
/// row is not that one, as (key column, key, date column, date kept,
/// date it should be). The key column is the first of `result` whose
/// values are all different there and repeat in `input`.
pub(super) fn not_latest(
    result: &str,
    input: &str,
    latest: bool,
) -> Option<(String, String, String, String, String)> {
    let ((_, out), (_, inp)) = (split(result)?, split(input)?);
    let iso = |value: &str| {
        let b = value.trim().as_bytes();
        b.len() >= 10
            && b[..4].iter().all(u8::is_ascii_digit)
            && b[4] == b'-'
            && b[5..7].iter().all(u8::is_ascii_digit)
            && b[7] == b'-'
            && b[8..10].iter().all(u8::is_ascii_digit)
    };
    let shared = shared_columns(&out, &inp);
    let date = *shared.iter().find(|(i, j)| {
        column(&out, *i).iter().all(|v| iso(v)) && column(&inp, *j).iter().all(|v| iso(v))
    })?;
    let key = *shared
        .iter()
        .find(|(i, j)| *i != date.0 && kept_once(&out, &inp, (*i, *j), str::to_owned))?;
    let (kept_keys, kept_dates) = (column(&out, key.0), column(&out, date.0));
    let (all_keys, all_dates) = (column(&inp, key.1), column(&inp, date.1));
    kept_keys.iter().zip(&kept_dates).find_map(|(k, d)| {
        let dates = all_keys
            .iter()
            .zip(&all_dates)
            .filter(|(other, _)| *other == k);
        let best = if latest {
            dates.map(|(_, d)| d).max()?
        } else {
            dates.map(|(_, d)| d).min()?
        };
        (best != d).then(|| {
            (
                out[0][key.0].trim().to_owned(),
                k.clone(),
                out[0][date.0].trim().to_owned(),
                d.clone(),
                best.clone(),
            )
        })
    })
}

/// The columns the tables `out` and `inp` (header rows first) both have,
/// by name in any case: each one's position in `out` and in `inp`.
fn shared_columns(out: &[Vec<String>], inp: &[Vec<String>]) -> Vec<(usize, usize)> {
    out[0]
        .iter()
        .enumerate()
        .filter_map(|(i, name)| {
            let j = inp[0]
                .iter()
                .position(|n| n.trim().eq_ignore_ascii_case(name.trim()))?;
            Some((i, j))
        })
        .collect()
}

/// The values of column `i` of `rows` under its header row, trimmed (a
/// short row's missing cell as empty).
fn column(rows: &[Vec<String>], i: usize) -> Vec<String> {
    rows[1..]
        .iter()
        .map(|row| row.get(i).map_or(String::new(), |v| v.trim().to_owned()))
        .collect()
}

/// Whether the shared column (`i` of `out`, `j` of `inp`) is a key `out`
/// keeps one row of: its values, made alike by `alike`, all present and
/// all different in `out`, and repeated in `inp`.
fn kept_once(
    out: &[Vec<String>],
    inp: &[Vec<String>],
    (i, j): (usize, usize),
    alike: fn(&str) -> String,
) -> bool {
    let kept: Vec<String> = column(out, i).iter().map(|v| alike(v)).collect();
    let all: Vec<String> = column(inp, j).iter().map(|v| alike(v)).collect();
    let distinct = |values: &[String]| {
        values
            .iter()
            .enumerate()
            .all(|(n, v)| !values[..n].contains(v))
    };
    distinct(&kept) && !distinct(&all) && kept.iter().all(|v| !v.is_empty())
}

/// A tie the table `result` broke other than alphabetically: where it
/// keeps one row per key of the table `input` (a column both have, its
/// values all different in `result` once folded and repeated in `input`),
/// the first kept row whose number (a column of numbers both have) another
/// row of that key in `input` has too, with a text (a third column both
/// have) that comes first alphabetically. As (key column, key, text
/// column, kept text, first text, number column, number).
pub(super) fn tie_not_first(result: &str, input: &str) -> Option<[String; 7]> {
    let ((_, out), (_, inp)) = (split(result)?, split(input)?);
    let shared = shared_columns(&out, &inp);
    let numeric =
        |values: &[String]| !values.is_empty() && values.iter().all(|v| v.parse::<f64>().is_ok());
    let number = *shared
        .iter()
        .find(|(i, j)| numeric(&column(&out, *i)) && numeric(&column(&inp, *j)))?;
    let key = *shared
        .iter()
        .find(|(i, j)| *i != number.0 && kept_once(&out, &inp, (*i, *j), fold))?;
    let text = *shared.iter().find(|(i, _)| *i != number.0 && *i != key.0)?;
    let (kept_keys, kept_texts, kept_numbers) = (
        column(&out, key.0),
        column(&out, text.0),
        column(&out, number.0),
    );
    let (all_keys, all_texts, all_numbers) = (
        column(&inp, key.1),
        column(&inp, text.1),
        column(&inp, number.1),
    );
    let same = |a: &str, b: &str| match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    (0..kept_keys.len()).find_map(|r| {
        let first = (0..all_keys.len())
            .filter(|&n| {
                fold(&all_keys[n]) == fold(&kept_keys[r]) && same(&all_numbers[n], &kept_numbers[r])
            })
            .map(|n| all_texts[n].clone())
            .min_by_key(|t| t.to_lowercase())?;
        (first.to_lowercase() < kept_texts[r].to_lowercase()).then(|| {
            [
                out[0][key.0].trim().to_owned(),
                kept_keys[r].clone(),
                out[0][text.0].trim().to_owned(),
                kept_texts[r].clone(),
                first,
                out[0][number.0].trim().to_owned(),
                kept_numbers[r].clone(),
            ]
        })
    })
}

/// Columns of the table `text` (two rows or more) with no value in any row,
/// and how many rows it has: a column made but never filled (pandas: a
/// grouped result assigned back as a column lines up with no row).
pub(super) fn empty_columns(text: &str) -> Vec<(String, usize)> {
    let Some((_, rows)) = split(text) else {
        return Vec::new();
    };
    let count = rows.len() - 1;
    if count < 2 {
        return Vec::new();
    }
    rows[0]
        .iter()
        .enumerate()
        .take(MAX_COLUMNS)
        .filter(|(i, _)| {
            rows[1..]
                .iter()
                .all(|row| row.get(*i).is_none_or(|v| is_missing(v)))
        })
        .map(|(_, name)| (name.trim().to_owned(), count))
        .collect()
}

/// In a CSV `text` (split by commas, a header of two or more fields),
/// the first row that is not as wide as the header: its line number, the
/// row as written and its count of cells, with the header's. A second
/// table written under the first, or a row cut at a comma in a value.
pub(super) fn ragged_row(text: &str) -> Option<(usize, String, usize, usize)> {
    let mut reader = reader(text, b',');
    let mut width = None;
    for (i, record) in reader.records().take(MAX_ROWS).enumerate() {
        let record = record.ok()?;
        if record.len() == 1 && record.get(0).is_some_and(|f| f.trim().is_empty()) {
            continue;
        }
        match width {
            None if record.len() < 2 => return None,
            None => width = Some(record.len()),
            Some(w) if record.len() != w => {
                let line = record.position().map_or(i + 1, |p| p.line() as usize);
                let row: Vec<&str> = record.iter().collect();
                return Some((line, row.join(","), record.len(), w));
            }
            Some(_) => {}
        }
    }
    None
}

/// The columns of the table `text` that pandas' `merge` named with its
/// suffixes: a pair `name_x` and `name_y` (the first such `name`). Two
/// tables joined where they were to be stacked, or their columns kept
/// twice.
pub(super) fn merge_suffixes(text: &str) -> Option<String> {
    let (_, rows) = split(text)?;
    let header: Vec<&str> = rows[0].iter().map(|c| c.trim()).collect();
    header.iter().find_map(|column| {
        let base = column.strip_suffix("_x")?;
        header
            .contains(&format!("{base}_y").as_str())
            .then(|| base.to_owned())
    })
}

/// A column of the table `text` whose values are mostly distinct (a key:
/// emails, ids, names) and of which two are one value in other case or
/// spacing (`ben@example.com`, `Ben@Example.com`): its name and the two.
/// One entry kept twice where the task asks each once.
pub(super) fn folded_twins_in_column(text: &str) -> Option<(String, String, String)> {
    let (_, rows) = split(text)?;
    let body = &rows[1..];
    rows[0].iter().enumerate().find_map(|(i, name)| {
        let values: Vec<&str> = body
            .iter()
            .filter_map(|row| row.get(i).map(|v| v.trim()))
            .filter(|v| !v.is_empty())
            .collect();
        let kinds: BTreeSet<String> = values.iter().map(|v| fold(v)).collect();
        if kinds.len() * 4 < values.len() * 3 {
            return None;
        }
        let (a, b) = variants(&values)?;
        Some((name.trim().to_owned(), a.to_owned(), b.to_owned()))
    })
}

/// A column of the table `text` whose numbers are written with `places`
/// decimals in some rows and with another count in others (`180.0` beside
/// `165.25` for 2): numbers written as they came, not formatted. Its name
/// and the first number written otherwise. Whole numbers are left alone.
pub(super) fn mixed_decimals(text: &str, places: usize) -> Option<(String, String)> {
    let decimals = |value: &str| -> Option<usize> {
        value.parse::<f64>().ok()?;
        let (_, fraction) = value.split_once('.')?;
        fraction
            .chars()
            .all(|c| c.is_ascii_digit())
            .then_some(fraction.len())
    };
    by_column(text).into_iter().find_map(|(name, values)| {
        let counts: Vec<(&String, usize)> = values
            .iter()
            .filter_map(|v| decimals(v).map(|n| (v, n)))
            .collect();
        if !counts.iter().any(|(_, n)| *n == places) {
            return None;
        }
        counts
            .iter()
            .find(|(_, n)| *n != places)
            .map(|(v, _)| (name.trim().to_owned(), (*v).clone()))
    })
}

/// A column of numbers of the table `text` that holds one value in every
/// one of its rows, three or more, while the rows differ in another
/// column: its name, that value, the rows, and the name of the first
/// column of text (what a row is for). A total of the whole column put in
/// each row (`df['total'] = df['amount'].sum()`) where one per row was
/// asked.
pub(super) fn same_in_every_row(text: &str) -> Option<(String, String, usize, Option<String>)> {
    let columns = by_column(text);
    let rows = columns.first().map_or(0, |(_, values)| values.len());
    if rows < 3 {
        return None;
    }
    let differ = |values: &[String]| values.iter().any(|v| *v != values[0]);
    let text_column = columns
        .iter()
        .find(|(_, values)| differ(values) && values.iter().any(|v| v.parse::<f64>().is_err()))
        .map(|(name, _)| name.trim().to_owned());
    if !columns.iter().any(|(_, values)| differ(values)) {
        return None;
    }
    columns.iter().find_map(|(name, values)| {
        let value = values.first()?;
        (values.len() == rows
            && !differ(values)
            && value.parse::<f64>().is_ok()
            && !matches!(value.as_str(), "0" | "1" | "0.0" | "1.0"))
        .then(|| {
            (
                name.trim().to_owned(),
                value.clone(),
                rows,
                text_column.clone(),
            )
        })
    })
}

/// A column of numbers of the table `text` that is 0 in every one of its
/// rows, three or more, while the rows differ in another column, and that
/// no input table (`inputs`) has all 0 under the same name: its name and
/// the rows. A value the code computed as nothing (`x - x`, a filter that
/// matched no row).
pub(super) fn zero_column(text: &str, inputs: &[&str]) -> Option<(String, usize)> {
    let columns = by_column(text);
    let rows = columns.first().map_or(0, |(_, values)| values.len());
    let zero = |values: &[String]| {
        !values.is_empty()
            && values
                .iter()
                .all(|v| v.trim().parse::<f64>().is_ok_and(|n| n == 0.0))
    };
    if rows < 3
        || !columns
            .iter()
            .any(|(_, values)| values.iter().any(|v| *v != values[0]))
    {
        return None;
    }
    let copied = |name: &str| {
        inputs.iter().any(|input| {
            by_column(input)
                .iter()
                .any(|(other, values)| fold(other) == fold(name) && zero(values))
        })
    };
    columns.iter().find_map(|(name, values)| {
        (values.len() == rows && zero(values) && !copied(name))
            .then(|| (name.trim().to_owned(), rows))
    })
}

/// A column of the table `text` whose cells hold several values joined
/// with `,` or `;` (`10.0.0.2, 10.0.0.1`, `a;b`; not `3,50`) in at least
/// half of its rows, one of them at least two: its name and such a cell.
/// Values listed where the task asked how many there are.
pub(super) fn joined_column(text: &str) -> Option<(String, String)> {
    let (_, rows) = split(text)?;
    let body = &rows[1..];
    rows[0]
        .iter()
        .enumerate()
        .take(MAX_COLUMNS)
        .find_map(|(i, name)| {
            let cells: Vec<&str> = body
                .iter()
                .filter_map(|row| row.get(i).map(String::as_str))
                .collect();
            let joined: Vec<&str> = cells
                .iter()
                .copied()
                .filter(|cell| {
                    let parts: Vec<&str> = cell.split([',', ';']).map(str::trim).collect();
                    // `3,50` and `1,204` are numbers, not lists.
                    let digits = |p: &&str| p.chars().all(|c| c.is_ascii_digit());
                    parts.len() >= 2
                        && cell.len() <= 400
                        && !parts.iter().all(digits)
                        && parts.iter().all(|p| !p.is_empty() && !p.contains(' '))
                })
                .collect();
            (joined.len() * 2 >= cells.len() && !joined.is_empty())
                .then(|| (name.trim().to_owned(), joined[0].to_owned()))
        })
}

/// Columns of the table `text` whose name says they hold a number (`total`,
/// `amount`, `avg_price` …) but where some value is not one, with the
/// first such value: a result computed by joining text (`$1.20$3.40`).
pub(super) fn text_in_number_columns(text: &str) -> Vec<(String, String)> {
    const NUMERIC: &[&str] = &[
        "total",
        "sum",
        "count",
        "amount",
        "average",
        "avg",
        "mean",
        "median",
        "price",
        "value",
        "cost",
        "qty",
        "quantity",
        "revenue",
        "population",
        "max",
        "min",
    ];
    by_column(text)
        .into_iter()
        .filter(|(name, _)| {
            name.to_lowercase()
                .split(|c: char| !c.is_alphanumeric())
                .any(|word| NUMERIC.contains(&word))
        })
        .filter_map(|(name, values)| {
            let odd = values
                .into_iter()
                .find(|value| !is_missing(value) && value.parse::<f64>().is_err())?;
            Some((name, odd.to_owned()))
        })
        .collect()
}

/// Whether a value is numbers joined, as adding text gives: more than
/// one currency sign (`$1.20$3.40`), or digits (with thousands commas)
/// and more than one point where each part between two points has three
/// characters or more (the decimals of one number and the start of the
/// next: `35.2012.80`), which a date (`01.02.2026`), a version (`1.2.3`)
/// or an address does not.
pub(super) fn joined_numbers(value: &str) -> bool {
    if value.matches(['$', '€', '£']).count() > 1 {
        return true;
    }
    let parts: Vec<&str> = value.split('.').collect();
    parts.len() > 2
        && parts
            .iter()
            .all(|p| p.chars().all(|c| c.is_ascii_digit() || c == ','))
        && parts[1..parts.len() - 1].iter().all(|p| p.len() >= 3)
}

/// Columns of the table `text` whose values are all numbers but some are
/// written so that a plain conversion refuses them (`$1,200.50`, `3,50`),
/// with the first such value and whether it has a decimal comma.
pub(super) fn written_number_columns(text: &str) -> Vec<(String, String, bool)> {
    by_column(text)
        .into_iter()
        .filter_map(|(name, values)| {
            let values: Vec<&str> = values
                .iter()
                .map(String::as_str)
                .filter(|v| !is_missing(v))
                .collect();
            if values.is_empty() || !values.iter().all(|v| written_number(v).is_some()) {
                return None;
            }
            let odd = values.iter().find(|v| v.parse::<f64>().is_err())?;
            let comma = values
                .iter()
                .any(|v| written_number(v) == Some(Written::DecimalComma));
            Some((name.trim().to_owned(), (*odd).to_owned(), comma))
        })
        .collect()
}

/// The columns of the table `text`, if it is one: each one's name and its
/// values, trimmed.
pub(super) fn by_column(text: &str) -> Vec<(String, Vec<String>)> {
    split(text.trim_start_matches('\u{feff}')).map_or_else(Vec::new, |(_, rows)| columns_of(&rows))
}

/// [`by_column`] of a result table however few its rows (a result cut
/// down to one file's rows may hold one), split by the separator its
/// header line has most of.
pub(super) fn by_column_of_any(text: &str) -> Vec<(String, Vec<String>)> {
    let header = text.lines().next().unwrap_or_default();
    let Some(sep) = [b',', b';', b'\t']
        .into_iter()
        .max_by_key(|sep| header.bytes().filter(|b| b == sep).count())
        .filter(|sep| header.as_bytes().contains(sep))
    else {
        return Vec::new();
    };
    let rows: Vec<Vec<String>> = reader(text, sep)
        .records()
        .map_while(Result::ok)
        .take(MAX_ROWS + 1)
        .map(|r| r.iter().map(str::to_owned).collect())
        .collect();
    columns_of(&rows)
}

/// The first of `rows` (a header) with each of its names' values in the
/// rows after it, trimmed.
fn columns_of(rows: &[Vec<String>]) -> Vec<(String, Vec<String>)> {
    let Some((names, body)) = rows.split_first() else {
        return Vec::new();
    };
    names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let values = body
                .iter()
                .filter_map(|row| row.get(i))
                .map(|v| v.trim().to_owned())
                .collect();
            (name.clone(), values)
        })
        .collect()
}

/// The one column of the table `text` whose values are all ISO dates
/// (`2024-03-01`, a time after them or not), when its rows are not in
/// the order of those dates: its name as the header writes it. ISO text sorts as the
/// dates do, so sorting the table by it puts the rows in time order.
pub(super) fn unsorted_iso_dates(text: &str) -> Option<String> {
    let iso = |v: &str| {
        v.get(..10)
            .is_some_and(|d| date_format(d) == Some("YYYY-MM-DD"))
    };
    let dated: Vec<(String, Vec<String>)> = by_column(text)
        .into_iter()
        .map(|(name, values)| {
            (
                name,
                values
                    .into_iter()
                    .filter(|v| !is_missing(v))
                    .collect::<Vec<_>>(),
            )
        })
        .filter(|(_, values)| values.len() >= 2 && values.iter().all(|v| iso(v)))
        .collect();
    let [(name, values)] = &dated[..] else {
        return None;
    };
    let sorted = values.windows(2).all(|w| w[0] <= w[1]);
    (!sorted).then(|| name.clone())
}

/// The first of `wanted` that the table `text` holds in one of its rows
/// (trimmed), with the name of the column that holds it, if it is a
/// table. The table is read once for all of them.
pub(super) fn column_holding<'v, S: AsRef<str>>(
    text: &str,
    wanted: &'v [S],
) -> Option<(&'v S, String)> {
    let columns = by_column(text);
    wanted.iter().find_map(|value| {
        columns
            .iter()
            .find(|(_, values)| values.iter().any(|v| v == value.as_ref()))
            .map(|(name, _)| (value, name.trim().to_owned()))
    })
}

/// The separator and column names of `text` (a file's start) if it is a
/// table.
pub(super) fn columns(text: &str) -> Option<(char, Vec<String>)> {
    let text = text.trim_start_matches('\u{feff}');
    // Whole lines only, and a few of them are enough.
    let end = text
        .match_indices('\n')
        .nth(50)
        .map_or(text.len(), |(i, _)| i);
    let text = &text[..end];
    let (sep, rows) = split(text)?;
    Some((char::from(sep), rows.into_iter().next()?))
}

/// The first row under the header of the table `text` (a file's start),
/// as the file writes it, when it is a row of data like the others: not
/// the header again, and a number in every column whose other values are
/// all numbers (a second header line, or a line of units, is not).
/// `None` when `text` is not a table of at least two rows.
pub(super) fn first_data_row(text: &str) -> Option<String> {
    let text = text.trim_start_matches('\u{feff}');
    let (sep, rows) = split_whole(text, !text.contains('\n') || text.ends_with('\n'))?;
    let (header, first, rest) = (&rows[0], rows.get(1)?, rows.get(2..)?);
    let folded = |row: &[String]| row.iter().map(|v| fold(v)).collect::<Vec<_>>();
    if rest.is_empty() || folded(header) == folded(first) {
        return None;
    }
    let number = |v: &str| written_number(v.trim()).is_some() || v.trim().parse::<f64>().is_ok();
    let data = (0..header.len()).all(|i| {
        let others: Vec<&str> = rest
            .iter()
            .filter_map(|row| row.get(i).map(|v| v.trim()))
            .filter(|v| !is_missing(v))
            .collect();
        let numbers = !others.is_empty() && others.iter().all(|v| number(v));
        let value = first.get(i).map_or("", |v| v.trim());
        !numbers || is_missing(value) || number(value)
    });
    data.then(|| first.join(&char::from(sep).to_string()))
}

/// `split` of a file's start `text` (the whole file when `complete`),
/// without its last line when the file was cut, as that may be partial.
fn split_whole(text: &str, complete: bool) -> Option<(u8, Vec<Vec<String>>)> {
    let text = match (complete, text.rfind('\n')) {
        (false, Some(end)) => &text[..end],
        _ => text,
    };
    split(text)
}

/// `text` split into rows by the separator (`,`, `;`, tab or `|`) that
/// makes it the widest table, with that separator.
fn split(text: &str) -> Option<(u8, Vec<Vec<String>>)> {
    [b',', b';', b'\t', b'|']
        .into_iter()
        .filter_map(|sep| Some((sep, rows(text, sep)?)))
        .max_by_key(|(_, rows)| rows.first().map_or(0, Vec::len))
}

/// The file's rows split by `sep`, if it splits into a table: a header of
/// two or more fields and at least two rows, nearly all as wide as it.
fn rows(text: &str, sep: u8) -> Option<Vec<Vec<String>>> {
    let mut reader = reader(text, sep);
    let mut rows = Vec::new();
    for record in reader.records().take(MAX_ROWS + 1) {
        let record = record.ok()?;
        // Blank lines are not rows.
        if record.len() == 1 && record.get(0).is_some_and(|f| f.trim().is_empty()) {
            continue;
        }
        rows.push(record.iter().map(str::to_owned).collect::<Vec<_>>());
    }
    let width = rows.first()?.len();
    if width < 2 || rows.len() < 3 {
        return None;
    }
    let even = rows.iter().filter(|row| row.len() == width).count();
    // Nearly every row as wide as the header (a trailing note may not be).
    (even * 10 >= rows.len() * 9).then_some(rows)
}

/// A CSV reader of `text` split by `sep`: every line a record, a header
/// included, rows of any width.
fn reader(text: &str, sep: u8) -> csv::Reader<&[u8]> {
    csv::ReaderBuilder::new()
        .delimiter(sep)
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes())
}

/// What a column's values are like.
pub(super) fn describe(values: &[&str]) -> String {
    let present: Vec<&str> = values.iter().copied().filter(|v| !is_missing(v)).collect();
    let written: BTreeSet<String> = values
        .iter()
        .filter(|v| is_missing(v) && !v.trim().is_empty())
        .map(|v| format!("`{}`", v.trim()))
        .collect();
    let blank = values.iter().any(|v| v.trim().is_empty());
    let mut what = kind(&present);
    if blank || !written.is_empty() {
        let count = values.len() - present.len();
        let how: Vec<String> = blank
            .then(|| "empty".to_owned())
            .into_iter()
            .chain(written)
            .collect();
        what.push_str(&format!(
            "; {count} of {} missing: {}",
            values.len(),
            how.join(" or ")
        ));
    }
    let padded = present.iter().filter(|v| v.trim() != **v).count();
    if padded > 0 {
        what.push_str(&format!(
            "; {padded} with spaces around the value (`{}`)",
            present
                .iter()
                .find(|v| v.trim() != **v)
                .copied()
                .unwrap_or_default()
        ));
    }
    what
}

/// How a column's values are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Order {
    Ascending,
    Descending,
    None,
}

/// The columns of a table `text` (read whole) whose values are all
/// numbers, with how their values are ordered; empty for a table of
/// fewer than three rows, or text that is no table.
pub(super) fn number_column_orders(text: &str) -> Vec<(String, Order)> {
    let Some((_, rows)) = split_whole(text, true) else {
        return Vec::new();
    };
    let (header, body) = (&rows[0], &rows[1..]);
    if body.len() < 3 {
        return Vec::new();
    }
    header
        .iter()
        .enumerate()
        .filter_map(|(i, name)| {
            let values: Vec<&str> = body
                .iter()
                .map(|row| row.get(i).map_or("", String::as_str))
                .collect();
            values
                .iter()
                .all(|v| v.trim().parse::<f64>().is_ok())
                .then(|| (name.trim().to_owned(), order_of(&values)))
        })
        .collect()
}

/// In a table `text` (read whole), the first two rows that hold the same
/// number in `column` and whose values of a text column are not in
/// alphabetical order (ignoring case): that column's name and the two
/// values, in the order they stand.
pub(super) fn ties_out_of_order(text: &str, column: &str) -> Option<(String, String, String)> {
    let (_, rows) = split_whole(text, true)?;
    let (header, body) = (&rows[0], &rows[1..]);
    let at = header.iter().position(|name| name.trim() == column)?;
    let number = |row: &Vec<String>| row.get(at)?.trim().parse::<f64>().ok();
    header.iter().enumerate().find_map(|(i, name)| {
        let field = |row: &Vec<String>| row.get(i).map_or(String::new(), |v| v.trim().to_owned());
        // A text column: not every value a number.
        if i == at || body.iter().all(|row| field(row).parse::<f64>().is_ok()) {
            return None;
        }
        body.windows(2)
            .find(|w| {
                number(&w[0]).is_some()
                    && number(&w[0]) == number(&w[1])
                    && field(&w[0]).to_lowercase() > field(&w[1]).to_lowercase()
            })
            .map(|w| (name.trim().to_owned(), field(&w[0]), field(&w[1])))
    })
}

/// Whether a column's values are sorted: by number when they all are
/// numbers, else as text ignoring case.
fn sort_order(values: &[&str]) -> &'static str {
    if values.len() < 3 {
        return "";
    }
    match order_of(values) {
        Order::Ascending => " (in ascending order)",
        Order::Descending => " (in descending order)",
        Order::None => " (in no order)",
    }
}

/// How `values` are ordered: by number when they all are numbers, else as
/// text ignoring case (equal neighbours fit either way).
fn order_of(values: &[&str]) -> Order {
    let numbers: Option<Vec<f64>> = values.iter().map(|v| v.trim().parse().ok()).collect();
    let ordering: Vec<std::cmp::Ordering> = match numbers {
        Some(n) => n
            .windows(2)
            .filter_map(|w| w[0].partial_cmp(&w[1]))
            .collect(),
        None => values
            .windows(2)
            .map(|w| w[0].trim().to_lowercase().cmp(&w[1].trim().to_lowercase()))
            .collect(),
    };
    use std::cmp::Ordering::{Greater, Less};
    if ordering.iter().all(|o| *o != Greater) {
        Order::Ascending
    } else if ordering.iter().all(|o| *o != Less) {
        Order::Descending
    } else {
        Order::None
    }
}

pub(super) fn is_missing(value: &str) -> bool {
    let value = value.trim();
    value.is_empty() || MISSING.contains(&value.to_lowercase().as_str())
}

/// The kind of a column's present values.
fn kind(values: &[&str]) -> String {
    if values.is_empty() {
        return "empty".to_owned();
    }
    let trimmed: Vec<&str> = values.iter().map(|v| v.trim()).collect();
    if trimmed.iter().all(|v| v.parse::<f64>().is_ok()) {
        return if trimmed.iter().all(|v| v.parse::<i64>().is_ok()) {
            "whole numbers".to_owned()
        } else {
            "numbers".to_owned()
        };
    }
    if trimmed.iter().all(|v| written_number(v).is_some()) {
        let odd: Vec<&str> = trimmed
            .iter()
            .copied()
            .filter(|v| v.parse::<f64>().is_err())
            .collect();
        let comma_decimal = odd
            .iter()
            .any(|v| written_number(v) == Some(Written::DecimalComma));
        let how = if comma_decimal {
            "a decimal comma, like {}: replace the comma with a point before converting"
        } else {
            "currency signs or thousands separators, like {}: remove them before converting"
        };
        return format!(
            "numbers written with {}",
            how.replace("{}", &examples(&odd))
        );
    }
    let numeric = trimmed
        .iter()
        .filter(|v| written_number(v).is_some())
        .count();
    if numeric * 3 >= trimmed.len() * 2 {
        let odd: Vec<&str> = trimmed
            .iter()
            .copied()
            .filter(|v| written_number(v).is_none())
            .collect();
        return format!(
            "numbers, but {} of {} values are not, like {}",
            odd.len(),
            values.len(),
            examples(&odd)
        );
    }
    if trimmed.iter().all(|v| iso_date_time(v)) {
        return format!(
            "dates with times, like {}; the day is the first 10 characters and the month the first 7 (pandas: `.str[:10]`, `.str[:7]` on the column; plain Python: `value[:10]`, `value[:7]`)",
            examples(&trimmed)
        );
    }
    let formats: BTreeSet<&str> = trimmed.iter().filter_map(|v| date_format(v)).collect();
    if trimmed.iter().all(|v| date_format(v).is_some()) {
        return if formats.len() > 1 {
            let firsts: Vec<&str> = formats
                .iter()
                .filter_map(|f| trimmed.iter().copied().find(|v| date_format(v) == Some(*f)))
                .collect();
            format!(
                "dates in {} formats, like {}",
                formats.len(),
                examples(&firsts)
            )
        } else {
            format!("dates, like {}", examples(&trimmed))
        };
    }
    let distinct: BTreeSet<&str> = trimmed.iter().copied().collect();
    let folded: BTreeSet<String> = trimmed.iter().map(|v| fold(v)).collect();
    let mut what = if distinct.len() <= MAX_LISTED && distinct.len() < trimmed.len() {
        format!(
            "text, {} distinct: {}",
            distinct.len(),
            distinct
                .iter()
                .map(|v| format!("`{}`", short(v)))
                .collect::<Vec<_>>()
                .join(", ")
        )
    } else {
        format!("text, like {}", examples(&trimmed))
    };
    if folded.len() < distinct.len() {
        // Show one value written two ways.
        if let Some((a, b)) = variants(&trimmed) {
            what.push_str(&format!(
                "; the same value is written with different case or spacing (`{a}`, `{b}`): compare them normalised (pandas: `.str.strip().str.lower()` on the column, to group or match by; plain Python: `value.strip().lower()`)"
            ));
        }
    }
    what
}

/// Two different spellings of one value, if there are.
pub(super) fn variants<'a>(values: &[&'a str]) -> Option<(&'a str, &'a str)> {
    values.iter().enumerate().find_map(|(i, a)| {
        values[i + 1..]
            .iter()
            .find(|b| a != *b && fold(a) == fold(b))
            .map(|b| (*a, *b))
    })
}

/// A value as compared regardless of case and spacing.
pub(super) fn fold(value: &str) -> String {
    value
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

fn short(value: &str) -> String {
    let cut: String = value.chars().take(LISTED_WIDTH).collect();
    if cut.len() < value.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// Up to [`EXAMPLES`] distinct values, in backticks.
pub(super) fn examples(values: &[&str]) -> String {
    let mut seen = Vec::new();
    for value in values {
        if !seen.contains(value) {
            seen.push(*value);
        }
        if seen.len() == EXAMPLES {
            break;
        }
    }
    seen.iter()
        .map(|v| format!("`{}`", short(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

#[derive(Debug, PartialEq, Eq)]
pub(super) enum Written {
    /// Plain, or with a currency sign, a percent sign or thousands
    /// separators (`$1,200.50`, `1 204 331`, `12%`).
    Separated,
    /// A comma for the decimal point (`3,50`).
    DecimalComma,
}

/// How a number is written, if `value` is one written with signs or
/// separators that a plain conversion refuses.
pub(super) fn written_number(value: &str) -> Option<Written> {
    let core = value
        .trim()
        .trim_start_matches(['$', '€', '£', '¥'])
        .trim_end_matches(['%', '€', '$', '£'])
        .trim();
    let core = core.strip_prefix('-').unwrap_or(core);
    if core.is_empty() {
        return None;
    }
    if core.parse::<f64>().is_ok() {
        return Some(Written::Separated);
    }
    // Thousands separated by `,` (a `.` decimal) or by spaces.
    for (sep, point) in [
        (',', '.'),
        (' ', '.'),
        ('\u{a0}', '.'),
        ('.', ','),
        (' ', ','),
    ] {
        let (whole, fraction) = match core.split_once(point) {
            Some((whole, fraction)) => (whole, Some(fraction)),
            None => (core, None),
        };
        let groups: Vec<&str> = whole.split(sep).collect();
        if groups.len() > 1
            && (1..=3).contains(&groups[0].len())
            && groups[1..].iter().all(|g| g.len() == 3)
            && groups.iter().all(|g| g.chars().all(|c| c.is_ascii_digit()))
            && fraction.is_none_or(|f| !f.is_empty() && f.chars().all(|c| c.is_ascii_digit()))
        {
            return Some(if point == ',' && fraction.is_some() {
                Written::DecimalComma
            } else {
                Written::Separated
            });
        }
    }
    // A decimal comma alone: `3,5`, `12,75`.
    if let Some((whole, fraction)) = core.split_once(',')
        && !whole.is_empty()
        && whole.chars().all(|c| c.is_ascii_digit())
        && (1..=2).contains(&fraction.len())
        && fraction.chars().all(|c| c.is_ascii_digit())
    {
        return Some(Written::DecimalComma);
    }
    None
}

/// Whether `value` is an ISO date with a time (`2024-01-05T09:12:00`,
/// `2024-01-05 09:12`, with seconds, fractions or a zone or not).
fn iso_date_time(value: &str) -> bool {
    let bytes = value.as_bytes();
    value.len() >= 16
        && value.is_char_boundary(10)
        && date_format(&value[..10]) == Some("YYYY-MM-DD")
        && matches!(bytes[10], b'T' | b' ')
        && bytes[11..13].iter().all(u8::is_ascii_digit)
        && bytes[13] == b':'
}

/// The format of a date, if `value` is one: `YYYY-MM-DD`, `NN/NN/YYYY`,
/// `NN.NN.YYYY`, or a month's name with a day and a year.
fn date_format(value: &str) -> Option<&'static str> {
    let digits = |s: &str, n: std::ops::RangeInclusive<usize>| {
        n.contains(&s.len()) && s.chars().all(|c| c.is_ascii_digit())
    };
    let parts = |sep: char| value.split(sep).collect::<Vec<_>>();
    let dashed = parts('-');
    if dashed.len() == 3
        && digits(dashed[0], 4..=4)
        && digits(dashed[1], 1..=2)
        && digits(dashed[2], 1..=2)
    {
        return Some("YYYY-MM-DD");
    }
    for (sep, name) in [
        ('/', "NN/NN/YYYY"),
        ('.', "NN.NN.YYYY"),
        ('-', "NN-NN-YYYY"),
    ] {
        let p = parts(sep);
        if p.len() == 3 && digits(p[0], 1..=2) && digits(p[1], 1..=2) && digits(p[2], 2..=4) {
            return Some(name);
        }
    }
    const MONTHS: &[&str] = &[
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let words: Vec<String> = value
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let has_month = words
        .iter()
        .any(|w| MONTHS.iter().any(|m| w.starts_with(m)) && w.chars().all(char::is_alphabetic));
    let numbers = words
        .iter()
        .filter(|w| w.chars().all(|c| c.is_ascii_digit()))
        .count();
    (words.len() == 3 && has_month && numbers == 2).then_some("month name, day, year")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn columns_of_numbers_written_with_signs_are_told_with_a_value() {
        let text = "city;pop;rate;name\nA;1.204.331;3,5;x\nB;98.004;12,75;y\nC;12;1;z\n";
        assert_eq!(
            written_number_columns(text),
            [
                ("pop".to_owned(), "1.204.331".to_owned(), false),
                ("rate".to_owned(), "3,5".to_owned(), true)
            ]
        );
        let plain = "a,b\n1,2\n3,4\n";
        assert!(written_number_columns(plain).is_empty());
        let money = "item,price\npen,\"$1,200.50\"\ncup,NA\nhat,$3\n";
        assert_eq!(
            written_number_columns(money),
            [("price".to_owned(), "$1,200.50".to_owned(), false)]
        );
    }

    #[test]
    fn a_column_out_of_its_order_is_found() {
        let text = "subject,student,score\nmath,Leo,93\nhistory,Maya,91\nphysics,Leo,85\n";
        assert_eq!(
            column_out_of_order(text, "Subject"),
            Some((
                "subject".to_owned(),
                "math".to_owned(),
                "history".to_owned()
            ))
        );
        assert_eq!(
            column_out_of_order(text, "score"),
            Some(("score".to_owned(), "93".to_owned(), "91".to_owned()))
        );
        let sorted = "subject,score\nHistory,9\nmath,10\nphysics,85\n";
        assert_eq!(column_out_of_order(sorted, "subject"), None);
        assert_eq!(column_out_of_order(sorted, "score"), None);
        assert_eq!(column_out_of_order(sorted, "nothing"), None);
    }

    #[test]
    fn groups_the_result_lacks_are_found() {
        let input =
            "student,subject,score\nMaya,Math,88\nLeo,math ,93\nInes,Physics,79\nMaya,History,91\n";
        let one = "subject,student,score\nmath,Maya,88\nmath,Leo,93\n";
        assert_eq!(
            groups_missing(one, input, "subject"),
            Some((
                "subject".to_owned(),
                vec!["math".to_owned()],
                vec![
                    "history".to_owned(),
                    "math".to_owned(),
                    "physics".to_owned()
                ]
            ))
        );
        let all = "subject,student\nhistory,Maya\nmath,Leo\nphysics,Leo\n";
        assert_eq!(groups_missing(all, input, "subjects"), None);
        // Every row kept (rewritten, one value lost), or values changed:
        // no groups asked or compared.
        let dates = "event,date\nKickoff,2026-01-15\nReview,03/02/2026\nRetro,2026-04-01\n";
        let rewritten = "event,date\nKickoff,2026-01-15\nReview,\nRetro,2026-04-01\n";
        assert_eq!(groups_missing(rewritten, dates, "date"), None);
        let changed = "subject,student,score\nMATHS,Leo,93\nmaths,Maya,88\n";
        assert_eq!(groups_missing(changed, input, "subject"), None);
        // No such column: nothing to compare.
        assert_eq!(groups_missing(one, input, "student2"), None);
    }

    #[test]
    fn merge_suffixes_and_keys_in_other_case_are_found() {
        let merged = "email,name_x,phone_x,name_y,phone_y\nBen@Example.com,,,Ben Cole,555\nana@example.com,Ana,556,,\n";
        assert_eq!(merge_suffixes(merged), Some("name".to_owned()));
        assert_eq!(merge_suffixes("a,b_x,c\n1,2,3\n4,5,6\n"), None);
        let twins = "email,name\nana@example.com,Ana\nben@example.com,Ben\nBen@Example.com,Ben\ncy@example.com,Cy\n";
        assert_eq!(
            folded_twins_in_column(twins),
            Some((
                "email".to_owned(),
                "ben@example.com".to_owned(),
                "Ben@Example.com".to_owned()
            ))
        );
        // A column of a few kinds repeated is no key.
        let kinds = "type,n\nsale,1\nSale,2\nsale,3\nrefund,4\n";
        assert_eq!(folded_twins_in_column(kinds), None);
        assert_eq!(folded_twins_in_column("a,b\nx,1\ny,2\n"), None);
    }

    #[test]
    fn kinds_typed_in_any_case_are_read_in_lower_case() {
        let sales = "id,type,amount\n1,sale,3\n2,Sale,4\n3,refund,1\n4,SALE ,2\n5,Refund,1\n";
        assert!(
            read_with("t.csv", sales, true)
                .unwrap()
                .ends_with("then `df['type'] = df['type'].str.strip().str.lower()`"),
            "{:?}",
            read_with("t.csv", sales, true)
        );
        // Names, mostly distinct, keep the case the task chooses.
        let names = "id,name\n1,Ana Lima\n2,ana lima\n3,Ben Cole\n4,Cy Dias\n";
        assert!(
            !read_with("n.csv", names, true)
                .unwrap()
                .contains(".str.lower()")
        );
        // One spelling each: nothing to fold.
        let plain = "id,type\n1,sale\n2,sale\n3,refund\n";
        assert!(
            !read_with("p.csv", plain, true)
                .unwrap()
                .contains(".str.lower()")
        );
    }

    #[test]
    fn a_column_written_once_per_block_is_filled_down() {
        let report = "region,rep,amount\nNorth,Ann,1200\n,Bob,800\n,Cid,150\nSouth,Dee,700\n,Eli,300\nEast,Fay,50\n";
        assert_eq!(
            read_with("r.csv", report, true).unwrap(),
            "`df = pd.read_csv('r.csv')`, then `df['region'] = df['region'].ffill()`"
        );
        // A column merely missing some values repeats them: left as it is.
        let missing = "city,amount\nOslo,1\n,2\nOslo,3\n,4\nRome,5\n";
        assert!(!read_with("m.csv", missing, true).unwrap().contains("ffill"));
        // The first row blank, one blank row, numbers, or blank rows with
        // nothing else in them: not a block's label.
        for text in [
            "g,n\n,1\nA,2\n,3\nB,4\n,5\n",
            "g,n\nA,1\n,2\nB,3\nC,4\n",
            "g,n\n10,1\n,2\n,3\n20,4\n",
            "g,n,m\nA,1,2\n,,\n,,\nB,3,4\n",
        ] {
            assert!(
                !read_with("x.csv", text, true).unwrap().contains("ffill"),
                "{text}"
            );
        }
    }

    #[test]
    fn the_first_row_under_the_header_is_data_unless_it_is_a_header_or_units() {
        assert_eq!(
            first_data_row("region,rep,amount\nNorth,Ann,1200\n,Bob,800\n").as_deref(),
            Some("North,Ann,1200")
        );
        assert_eq!(first_data_row("a;b\nx;1\ny;2\n").as_deref(), Some("x;1"));
        // Units under the names, the header again, or one row only.
        assert_eq!(first_data_row("item,price\n,EUR\nbook,12\npen,2\n"), None);
        assert_eq!(first_data_row("item,price\nItem,Price\nbook,12\n"), None);
        assert_eq!(first_data_row("item,price\nbook,12\n"), None);
    }

    #[test]
    fn a_table_out_of_date_order_names_its_date_column() {
        let prices =
            "date,price\n2024-02-15,\"$1,150.00\"\n2024-01-03,\"$1,000.00\"\n2024-03-30,$980.00\n";
        assert_eq!(unsorted_iso_dates(prices).as_deref(), Some("date"));
        let timed = " when ,n\n2024-01-03 10:00,1\n2024-01-03 09:00,2\n";
        assert_eq!(unsorted_iso_dates(timed).as_deref(), Some(" when "));
        // In order, two date columns, or dates written day first: none.
        assert_eq!(
            unsorted_iso_dates("date,n\n2024-01-03,1\n2024-02-15,2\n"),
            None
        );
        assert_eq!(
            unsorted_iso_dates("from,to\n2024-02-01,2024-02-03\n2024-01-01,2024-01-02\n"),
            None
        );
        assert_eq!(
            unsorted_iso_dates("date,n\n15/02/2024,1\n03/01/2024,2\n"),
            None
        );
    }

    #[test]
    fn dates_with_times_get_their_day_and_month() {
        let text =
            "id,timestamp\n1,2024-01-05T09:12:00\n2,2024-02-02 08:00\n3,2024-03-01T00:00:01Z\n";
        let profile = profile(text, true, false).unwrap();
        assert!(
            profile.contains("- `timestamp`: dates with times, like `2024-01-05T09:12:00`, `2024-02-02 08:00`, `2024-03-01T00:00:01Z`; the day is the first 10 characters and the month the first 7 (pandas: `.str[:10]`, `.str[:7]` on the column; plain Python: `value[:10]`, `value[:7]`)"),
            "{profile}"
        );
        assert!(iso_date_time("2024-01-05T09:12"));
        assert!(!iso_date_time("2024-01-05"));
        assert!(!iso_date_time("2024-01-05 is when"));
        assert!(!iso_date_time("05/01/2024 09:12:00"));
        assert!(!iso_date_time("2024-01-05T9:1é:00"));
    }

    #[test]
    fn a_plain_csv_gets_its_columns_and_kinds() {
        let text = "name,age,city\nAna,31,Lisbon\nBen,27,Porto\nCy,40,Lisbon\n";
        assert_eq!(
            profile(text, true, false).unwrap(),
            "3 rows under a header row, fields separated by `,`. Columns:\n\
             - `name`: text, like `Ana`, `Ben`, `Cy`\n\
             - `age`: whole numbers\n\
             - `city`: text, 2 distinct: `Lisbon`, `Porto`"
        );
    }

    #[test]
    fn quirks_of_exports_are_named() {
        let text = "Order No;Region Name ;Amount;Price;When\n\
                    1; north;$1,200.50;3,50;2026-01-15\n\
                    2;North;$35.20;12,75;03/02/2026\n\
                    3;South;NA;1,00;March 9, 2026\n\
                    4;south;;2,25;2026-04-01\n";
        let profile = profile(text, true, false).unwrap();
        assert_eq!(
            profile,
            "4 rows under a header row, fields separated by `;`. Columns:\n\
             - `Order No`: whole numbers\n\
             - `Region Name ` (with the spaces): text, like `north`, `North`, `South`; the same value is written with different case or spacing (`north`, `North`): compare them normalised (pandas: `.str.strip().str.lower()` on the column, to group or match by; plain Python: `value.strip().lower()`); 1 with spaces around the value (` north`)\n\
             - `Amount`: numbers written with currency signs or thousands separators, like `$1,200.50`, `$35.20`: remove them before converting; 2 of 4 missing: empty or `NA`\n\
             - `Price`: numbers written with a decimal comma, like `3,50`, `12,75`, `1,00`: replace the comma with a point before converting\n\
             - `When`: dates in 3 formats, like `03/02/2026`, `2026-01-15`, `March 9, 2026`"
        );
    }

    #[test]
    fn the_code_that_reads_a_table_handles_its_quirks() {
        let text = "Order No;Region Name ;Amount;Price;When;Note\n\
                    1; north;$1,200.50;3,50;2026-01-15;-\n\
                    2;North;$35.20;12,75;03/02/2026;ok\n\
                    3;South;NA;1.204,00;March 9, 2026;?\n\
                    4;south ;;2,25;2026-04-01;it's\n";
        assert_eq!(
            read_with("sales 2026.csv", text, true).unwrap(),
            "`df = pd.read_csv('sales 2026.csv', sep=';', na_values=['-', '?'], skipinitialspace=True)`, \
             then `df.columns = df.columns.str.strip()`, \
             then `df['Region Name'] = df['Region Name'].str.strip().str.lower()`, \
             then `df['Amount'] = pd.to_numeric(df['Amount'].str.replace(r'[^0-9.-]', '', regex=True))`, \
             then `df['Price'] = pd.to_numeric(df['Price'].str.replace(r'[^0-9,-]', '', regex=True).str.replace(',', '.'))`, \
             then `df['When'] = pd.to_datetime(df['When'], format='mixed')`"
        );
        // A plain table needs the read alone; a tab-separated one says so;
        // numbers with spaces after them are read as numbers.
        assert_eq!(
            read_with("t.csv", "a,b\n12 ,x \n 3,y\n4,z\n", true).unwrap(),
            "`df = pd.read_csv('t.csv', skipinitialspace=True)`, then `df['b'] = df['b'].str.strip()`"
        );
        assert_eq!(
            read_with("a.csv", "a,b\n1,x\n2,y\n", true).unwrap(),
            "`df = pd.read_csv('a.csv')`"
        );
        assert_eq!(
            read_with("it's.tsv", "a\tb\n1\tNA\n2\ty\n", true).unwrap(),
            "`df = pd.read_csv('it\\'s.tsv', sep='\\t')`"
        );
        // Dates day first: with ISO dates beside them, read one by one.
        let dates = |column: &str| {
            let rows: String = column.split(' ').map(|d| format!("x,{d}\n")).collect();
            let text = format!("n,d\n{rows}");
            read_with("d.csv", &text, true).unwrap()
        };
        assert!(
            dates("2026-01-15 03/02/2026 24/12/2026").ends_with(
                "then `df['d'] = df['d'].map(lambda s: pd.to_datetime(s, dayfirst=not str(s)[:4].isdigit()))`"
            )
        );
        assert!(
            dates("03/02/2026 24/12/2026").ends_with(
                "then `df['d'] = pd.to_datetime(df['d'], format='mixed', dayfirst=True)`"
            )
        );
        // Month first, or no telling: pandas' default, said only for
        // several formats.
        assert!(
            dates("2026-01-15 12/24/2026 03/02/2026")
                .ends_with("then `df['d'] = pd.to_datetime(df['d'], format='mixed')`")
        );
        assert_eq!(
            dates("03/02/2026 04/02/2026"),
            "`df = pd.read_csv('d.csv')`"
        );
        // Codes in two cases take the case most of them have.
        assert!(
            read_with(
                "p.csv",
                "id,customer\n1, c001 \n2,C002\n3,c003\n4,C001\n",
                true
            )
            .unwrap()
            .ends_with("then `df['customer'] = df['customer'].str.strip().str.upper()`")
        );
        assert!(
            read_with("p.csv", "id,sku\n1,ab-1\n2,AB-1\n3,cd-2\n", true)
                .unwrap()
                .ends_with("then `df['sku'] = df['sku'].str.strip().str.lower()`")
        );
        // Names are not codes: their case is the task's to choose.
        assert!(
            !read_with("p.csv", "id,name\n1,ana lima\n2,Ana Lima\n", true)
                .unwrap()
                .contains(".str.upper()")
        );
        // Points between thousands are a European number too.
        assert!(
            read_with("p.csv", "city;pop\nA;1.204.331\nB;98.004\nC;12\n", true)
                .unwrap()
                .contains(
                    "df['pop'].str.replace(r'[^0-9,-]', '', regex=True).str.replace(',', '.')"
                )
        );
        assert_eq!(read_with("n.txt", "just a line\nand another\n", true), None);
    }

    #[test]
    fn the_columns_of_a_table_are_its_header() {
        assert_eq!(
            columns("\u{feff}id;Region Name;units\n1;North;3\n2;South;4\n3;South;1\n"),
            Some((
                ';',
                vec![
                    "id".to_owned(),
                    "Region Name".to_owned(),
                    "units".to_owned()
                ]
            ))
        );
        assert_eq!(columns("just some text\nwith lines\nand more\n"), None);
    }

    #[test]
    fn a_result_says_how_each_column_is_sorted() {
        let text = "category,total\nTravel,$1,200.50$310.00\nFood,48.0\nOffice,1100\n";
        assert_eq!(
            profile(text, true, true),
            None,
            "a row split by its unquoted commas is not a table"
        );
        let text = "category,total\nTravel,\"$1,200.50$310.00\"\nOffice,\"$89.99$1,010.01\"\nFood,\"$35.20$12.80\"\n";
        assert_eq!(
            profile(text, true, true).unwrap(),
            "3 rows under a header row, fields separated by `,`. Columns:\n\
             - `category`: text, like `Travel`, `Office`, `Food` (in descending order)\n\
             - `total`: text, like `$1,200.50$310.00`, `$89.99$1,010.01`, `$35.20$12.80` (in no order)"
        );
        let text = "name,n\nb,3\na,2\nc,1\n";
        let profile = profile(text, true, true).unwrap();
        assert!(
            profile.contains("`name`: text, like `b`, `a`, `c` (in no order)"),
            "{profile}"
        );
        assert!(
            profile.contains("`n`: whole numbers (in descending order)"),
            "{profile}"
        );
    }

    #[test]
    fn text_where_a_column_name_promises_numbers_is_found() {
        let text = "category,total,note\nTravel,\"$1,200.50$310.00\",x\nFood,48.0,y\nOffice,NA,z\n";
        assert_eq!(
            text_in_number_columns(text),
            [("total".to_owned(), "$1,200.50$310.00".to_owned())]
        );
        let fine = "category,Total Amount\nTravel,1510.5\nFood,48\nOffice,\n";
        assert!(text_in_number_columns(fine).is_empty());
        assert!(text_in_number_columns("not a table").is_empty());
    }

    #[test]
    fn thousands_and_decimal_commas_are_told_apart() {
        assert_eq!(written_number("1,204,331"), Some(Written::Separated));
        assert_eq!(written_number("$1,200.50"), Some(Written::Separated));
        assert_eq!(written_number("1 204 331"), Some(Written::Separated));
        assert_eq!(written_number("12%"), Some(Written::Separated));
        assert_eq!(written_number("1.204,50"), Some(Written::DecimalComma));
        assert_eq!(written_number("3,5"), Some(Written::DecimalComma));
        assert_eq!(written_number("Lisbon"), None);
        assert_eq!(written_number("12,3456"), None);
        assert_eq!(written_number("$"), None);
    }

    #[test]
    fn text_that_is_not_a_table_gets_no_profile() {
        // Prose with a comma here and there.
        let prose = "The cat sat, and then it slept.\nNothing else happened.\nThe end, really.\n";
        assert_eq!(profile(prose, true, false), None);
        // One column, or too few rows.
        assert_eq!(profile("a\nb\nc\n", true, false), None);
        assert_eq!(profile("a,b\n1,2\n", true, false), None);
        // A web log splits on none of the separators.
        let log =
            "10.0.0.1 - - [02/Nov/2026:10:00:00 +0000] \"GET / HTTP/1.1\" 200 512\n".repeat(4);
        assert_eq!(profile(&log, true, false), None);
    }

    #[test]
    fn a_cut_file_drops_its_partial_last_line_and_says_so() {
        let text = "a\tb\n1\t2\n3\t4\n5\t";
        assert_eq!(
            profile(text, false, false).unwrap(),
            "2 rows under a header row, fields separated by tabs (in the part read). Columns:\n\
             - `a`: whole numbers\n\
             - `b`: whole numbers"
        );
    }

    #[test]
    fn values_a_result_lost_are_found_by_column() {
        let input =
            "event,date\nKickoff,2026-01-15\nReview,03/02/2026\nLaunch,\"March 9, 2026\"\nParty,\n";
        let result = "event,date\nKickoff,2026-01-15\nReview,\nLaunch,\nParty,\n";
        assert_eq!(
            lost_values(result, input),
            vec![("date".to_owned(), 3, 4, 1)]
        );
        // Every value kept (or fewer missing): nothing lost.
        let fixed =
            "event,date\nKickoff,2026-01-15\nReview,2026-02-03\nLaunch,2026-03-09\nParty,\n";
        assert!(lost_values(fixed, input).is_empty());
        // More rows than the input (a join): missing values may be new.
        let joined = format!("{result}Extra,\nMore,\n");
        assert!(lost_values(&joined, input).is_empty());
        // Not a table, or no shared column.
        assert!(lost_values("42\n", input).is_empty());
        assert!(lost_values("a,b\n1,\n2,\n", input).is_empty());
    }
}
