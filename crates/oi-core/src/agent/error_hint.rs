//! What a common error means, in one line, for a small model. Small models
//! read `'Series' object has no attribute 'lower'` or `invalid literal for
//! int() with base 10: '7.5'` and retry small variations of the same code
//! until the loop guard stops them; the fix is one well-known step (`.str`,
//! `float`) that a larger model knows. Each hint is about the language or a
//! library (Python, pandas, `json`, coreutils), never about a task.

use std::path::Path;

use super::coach::quoted;
use super::table::{self, Written};

/// Lines from the end of a run's output that are searched for an error.
const TAIL: usize = 40;
/// Names of the folder listed, at most, when a file was not found.
const LISTED: usize = 12;

/// Text methods small models call on a pandas column or on a number.
const TEXT_METHODS: &[&str] = &[
    "lower",
    "upper",
    "strip",
    "lstrip",
    "rstrip",
    "split",
    "replace",
    "title",
    "capitalize",
    "startswith",
    "endswith",
    "contains",
    "isdigit",
    "isnumeric",
    "zfill",
];

/// Names small models use without importing them, and the import.
const IMPORTS: &[(&str, &str)] = &[
    ("pd", "import pandas as pd"),
    ("np", "import numpy as np"),
    ("json", "import json"),
    ("os", "import os"),
    ("re", "import re"),
    ("csv", "import csv"),
    ("sys", "import sys"),
    ("math", "import math"),
    ("glob", "import glob"),
    ("shutil", "import shutil"),
    ("datetime", "from datetime import datetime"),
    ("Path", "from pathlib import Path"),
    ("Counter", "from collections import Counter"),
    ("defaultdict", "from collections import defaultdict"),
    ("string", "import string"),
    ("random", "import random"),
    ("time", "import time"),
    ("statistics", "import statistics"),
    ("itertools", "import itertools"),
];

/// A hint: its kind (each kind is given once a task), its note, and the
/// change of one line it names, when it names one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Hint {
    pub(super) kind: &'static str,
    pub(super) note: String,
    pub(super) fix: Option<LineChange>,
    /// Whether the error comes from a way of writing a line that a small
    /// model keeps (an f-string's quotes, a number joined to text, a
    /// made-up folder), so that its change is made each time, not once a
    /// task.
    pub(super) habit: bool,
}

/// The errors whose hint is a change of the line the traceback shows, in
/// the order they are looked for: the kind, whether it is a habit (see
/// [`Hint::habit`]), and what finds it in a run's output (with the working
/// folder).
type LineFix = fn(&str, &Path) -> Option<(String, LineChange)>;
const LINE_FIXES: &[(&str, bool, LineFix)] = &[
    ("series-str", false, |out, _| series_text_method(out)),
    ("decimal", false, |out, _| int_of_decimal(out)),
    ("unpack-many", false, |out, _| split_once_more(out)),
    ("fstring-fields", true, |out, _| fstring_fields(out)),
    ("text-concat", true, |out, _| number_in_text(out)),
    ("dt-text", false, |out, _| dt_on_text(out)),
    ("missing-folder", false, missing_folder),
    ("made-up-path", true, made_up_path),
    ("header-subset", false, |out, _| header_subset(out)),
];

/// A line of the failed code, trimmed as the traceback shows it, and the
/// same line changed as the error calls for (lines of its own may come
/// before it, at its indentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LineChange {
    pub(super) line: String,
    pub(super) fixed: String,
}

impl LineChange {
    pub(super) fn new(line: &str, fixed: String) -> Self {
        LineChange {
            line: line.to_owned(),
            fixed,
        }
    }

    /// Whether the change holds a `continue` line, so it belongs only in
    /// the body of a loop.
    pub(super) fn needs_loop(&self) -> bool {
        self.fixed.lines().any(|l| l.trim() == "continue")
    }
}

/// The hint for the last error in a run's `output` that has one, with
/// `cwd` for listing the folder when a file was not found.
pub(super) fn hint(output: &str, cwd: &Path) -> Option<Hint> {
    if let Some(text) = merge_keys(output) {
        let (text, fix) = merge_with(output, cwd).unwrap_or_else(|| (text.to_owned(), None));
        return Some(Hint {
            kind: "merge-keys",
            note: format!("[oi: {text}]"),
            fix,
            habit: false,
        });
    }
    if let Some(text) = split_index(output) {
        return Some(Hint {
            kind: "split-index",
            note: format!("[oi: {text}]"),
            fix: None,
            habit: false,
        });
    }
    if let Some(text) = unpack_split(output) {
        return Some(Hint {
            kind: "unpack",
            note: format!("[oi: {text}]"),
            fix: skip_unsplit(output),
            habit: false,
        });
    }
    for &(kind, habit, find) in LINE_FIXES {
        if let Some((text, fix)) = find(output, cwd) {
            return Some(Hint {
                kind,
                note: format!("[oi: {text}]"),
                fix: Some(fix),
                habit,
            });
        }
    }
    let lines: Vec<&str> = output.lines().collect();
    let start = lines.len().saturating_sub(TAIL);
    let failed = output.contains("[exit code ");
    lines[start..].iter().rev().find_map(|line| {
        let line = line.trim();
        let (kind, text) = python_hint(line)
            .or_else(|| shell_hint(line))
            .or_else(|| missing_file(line, cwd))
            .or_else(|| failed.then(|| usage(line, cwd)).flatten())?;
        Some(Hint {
            kind,
            note: format!("[oi: {text}]"),
            fix: None,
            habit: false,
        })
    })
}

/// For a `NameError` message (`name 'csv' is not defined`), the name and
/// its import when it is one small models use without importing.
fn import_for(message: &str) -> Option<(&'static str, &'static str)> {
    let missing = between(message, "name '", "'")?;
    IMPORTS.iter().find(|(n, _)| *n == missing).copied()
}

/// When a Python run of `code` ended (`output`) with a `NameError` for a
/// name that a standard import defines (`csv`, `pd` for pandas,
/// `Counter`): that name and the import that fits the code — the
/// `datetime` module, not its class, for code that writes
/// `datetime.datetime.now()` or `datetime.date(2024, 1, 5)`.
pub(super) fn missing_import(output: &str, code: &str) -> Option<(&'static str, &'static str)> {
    let message = last_error(output)?.strip_prefix("NameError: ")?;
    let (name, import) = import_for(message)?;
    let module = name == "datetime"
        && [
            "datetime.datetime",
            "datetime.date(",
            "datetime.timedelta",
            "datetime.timezone",
        ]
        .iter()
        .any(|part| code.contains(part));
    Some((name, if module { "import datetime" } else { import }))
}

/// The last line of a run's `output` that is not blank nor oi's
/// `[exit code N]`: where a Python error names itself.
pub(super) fn last_error(output: &str) -> Option<&str> {
    output
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("[exit code "))
}

/// When a run failed with `IndexError: list index out of range` at a line
/// that indexes the fields of a split line (`line.split()[2]`): a line
/// with fewer fields (a blank line, a title, a note under a table) is the
/// cause. Small models split every line of a report and index it.
fn split_index(output: &str) -> Option<String> {
    if !last_error(output)?.starts_with("IndexError: list index out of range") {
        return None;
    }
    let line = output
        .lines()
        .map(str::trim)
        .find(|l| (l.contains(".split(") && l.contains(")[")) || l.contains("fields["))?;
    Some(format!(
        "a line with fewer fields than the code indexes (a blank line, a title, a note) failed at `{line}`: split each line once (`fields = …`), skip the lines with too few (`if len(fields) < N: continue`), and split them the way the first look says when it says how."
    ))
}

/// When a pandas column was given a text method (`AttributeError:
/// 'Series' object has no attribute 'lower'`) at a line the traceback
/// shows: that line with `.str` put before each such call
/// (`df['s'].str.strip().lower()` → `df['s'].str.strip().str.lower()`).
/// Told only the rule, a small model wrote the same line again. With the
/// line and its change.
fn series_text_method(output: &str) -> Option<(String, LineChange)> {
    let error = last_error(output)?;
    let attribute = between(error, "'Series' object has no attribute '", "'")?;
    if !error.starts_with("AttributeError:") || !TEXT_METHODS.contains(&attribute) {
        return None;
    }
    let call = format!(".{attribute}(");
    let line = source_line(output, &call)?;
    let mut fixed = String::new();
    let mut rest = line;
    while let Some(at) = rest.find(&call) {
        fixed.push_str(&rest[..at]);
        if !fixed.ends_with(".str") {
            fixed.push_str(".str");
        }
        fixed.push_str(&call);
        rest = &rest[at + call.len()..];
    }
    fixed.push_str(rest);
    (fixed != line).then(|| {
        (
            format!(
                "`.{attribute}()` is a method of text, not of a pandas column: on a column it is `.str.{attribute}()`. Write `{line}` as `{fixed}`."
            ),
            LineChange::new(line, fixed),
        )
    })
}

/// The line of a traceback in `output` that holds `part`: the failed
/// line as the code has it (trimmed), not the traceback's own lines.
fn source_line<'a>(output: &'a str, part: &str) -> Option<&'a str> {
    output.lines().map(str::trim).find(|l| {
        l.contains(part)
            && !l.starts_with("File ")
            && !l.starts_with('^')
            && !l.starts_with("Traceback")
            && !l.contains("Error: ")
    })
}

/// Where `call` (`int(`) is called in `line` as itself, not as the end of
/// another name (`point(`, `.int(`): each position.
fn calls_of(line: &str, call: &str) -> Vec<usize> {
    line.match_indices(call)
        .map(|(at, _)| at)
        .filter(|at| !line[..*at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '.'))
        .collect()
}

/// When `int()` refused a number with a decimal point (`invalid literal
/// for int() with base 10: '7.5'`) at a line the traceback shows that
/// calls `int(` once: that line with `float(` in its place.
fn int_of_decimal(output: &str) -> Option<(String, LineChange)> {
    let (value, to_int) = refused_number(last_error(output)?)?;
    if !to_int || !value.contains('.') || value.parse::<f64>().is_err() {
        return None;
    }
    let line = source_line(output, "int(")?;
    let [at] = calls_of(line, "int(")[..] else {
        return None;
    };
    let fixed = format!("{}float({}", &line[..at], &line[at + "int(".len()..]);
    Some((
        format!(
            "`{value}` has a decimal point: convert with `float(…)`, not `int(…)`: `{line}` as `{fixed}`."
        ),
        LineChange::new(line, fixed),
    ))
}

/// A line that unpacks a split at a literal separator into names
/// (`key, value = line.strip().split('=')`), in its parts.
pub(super) struct SplitLine<'a> {
    /// The names it unpacks into, trimmed.
    pub(super) names: Vec<&'a str>,
    /// What it splits (`line.strip()`).
    pub(super) source: &'a str,
    /// The separator as written, quotes included (`'='`).
    separator: &'a str,
    /// The separator without its quotes.
    pub(super) bare: &'a str,
    /// Whether the call gives the most splits (`split('=', 1)`).
    pub(super) bounded: bool,
    /// The line up to the separator, and from the call's `)` on.
    before: &'a str,
    after: &'a str,
}

impl<'a> SplitLine<'a> {
    pub(super) fn of(line: &'a str) -> Option<Self> {
        let (names, _) = line.split_once('=')?;
        let at = line.find(".split(")?;
        let start = at + ".split(".len();
        let rest = &line[start..];
        let quote = rest.chars().next().filter(|q| *q == '\'' || *q == '"')?;
        let end = rest[1..].find(quote)? + 2;
        let (after, bounded) = match rest[end..].strip_prefix(", 1") {
            Some(after) => (after, true),
            None => (&rest[end..], false),
        };
        (!names.contains('(') && after.starts_with(')')).then(|| SplitLine {
            names: names.split(',').map(str::trim).collect(),
            source: line[names.len() + 1..at].trim(),
            separator: &rest[..end],
            bare: rest[1..end - 1].trim(),
            bounded,
            before: &line[..start],
            after,
        })
    }

    /// Whether the call closes the line (`….split('=')`, nothing after).
    pub(super) fn ends_line(&self) -> bool {
        self.after.trim() == ")"
    }

    /// The line split at the first separator only.
    fn once(&self) -> String {
        format!("{}{}, 1{}", self.before, self.separator, self.after)
    }
}

/// When a line split at `=` or `:` had more parts than the two names it is
/// unpacked into (`ValueError: too many values to unpack (expected 2)` at
/// `key, value = line.split('=')`): the value holds the separator too
/// (`url=http://x?a=b`, `time: 12:30`). That line split at the first one
/// only.
fn split_once_more(output: &str) -> Option<(String, LineChange)> {
    if !last_error(output)?.starts_with("ValueError: too many values to unpack (expected 2") {
        return None;
    }
    let line = source_line(output, ".split(")?;
    let split = SplitLine::of(line)?;
    if split.names.len() != 2 || split.bounded || !matches!(split.bare, "=" | ":") {
        return None;
    }
    let fixed = split.once();
    Some((
        format!(
            "a line had more `{}` than the names it is unpacked into, so a value holds one too: split at the first only, `{line}` as `{fixed}`.",
            split.bare
        ),
        LineChange::new(line, fixed),
    ))
}

/// When `.dt` was used on a pandas column of text (`AttributeError: Can
/// only use .dt accessor with datetimelike values`) at a line the
/// traceback shows, on a column written `table['name']`: that line with
/// the column converted where it is used
/// (`df['ts'].dt.month` → `pd.to_datetime(df['ts'], format='mixed').dt.month`).
fn dt_on_text(output: &str) -> Option<(String, LineChange)> {
    if !last_error(output)?.starts_with("AttributeError: Can only use .dt accessor") {
        return None;
    }
    let line = source_line(output, "].dt.")?;
    let end = line.find("].dt.")? + 1;
    let open = line[..end].rfind('[')?;
    let table_start = line[..open]
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    let (table, key) = (&line[table_start..open], &line[open + 1..end - 1]);
    let quoted_key = key.len() >= 3
        && (key.starts_with('\'') && key.ends_with('\'')
            || key.starts_with('"') && key.ends_with('"'));
    if table.is_empty() || table.starts_with(|c: char| c.is_ascii_digit()) || !quoted_key {
        return None;
    }
    let column = &line[table_start..end];
    let fixed = line.replace(
        &format!("{column}.dt."),
        &format!("pd.to_datetime({column}, format='mixed').dt."),
    );
    Some((
        format!(
            "`.dt` works on dates, and `{column}` holds text: convert it where you use it, `{line}` as `{fixed}`; for ISO text (`2024-01-05T09:12:00`) the day is also `.str[:10]` and the month `.str[:7]`."
        ),
        LineChange::new(line, fixed),
    ))
}

/// When pandas refused `.columns = [...]` with one name more than the
/// table has columns (`ValueError: Length mismatch: Expected axis has 1
/// elements, new values have 2 elements`) at a line the traceback shows,
/// in `code` that grouped or counted rows (`groupby`, `value_counts`,
/// `pivot_table`, `set_index`): the key the names begin with is the
/// table's index, not a column. That line, with the table's index made
/// its first column before it (`t = t.reset_index()`).
pub(super) fn grouped_columns(output: &str, code: &str) -> Option<LineChange> {
    let (has, given) = last_error(output)?
        .strip_prefix("ValueError: Length mismatch: Expected axis has ")?
        .strip_suffix(" elements")?
        .split_once(" elements, new values have ")?;
    if has.parse::<usize>().ok()? + 1 != given.parse::<usize>().ok()? {
        return None;
    }
    let grouped = ["groupby(", "value_counts(", "pivot_table(", "set_index("]
        .iter()
        .any(|call| code.contains(call));
    if !grouped || code.contains("reset_index(") {
        return None;
    }
    let line = source_line(output, ".columns")?;
    let (target, op, names) = super::splice::assignment(line)?;
    let table = target.strip_suffix(".columns")?;
    if !op.is_empty() || !super::script::is_name(table) || !names.trim_start().starts_with('[') {
        return None;
    }
    Some(LineChange::new(
        line,
        format!("{table} = {table}.reset_index()\n{line}"),
    ))
}

/// When pandas refused a `header=[…]` list shorter than the table it
/// writes (`ValueError: Writing 3 cols but got 2 aliases`) at a line the
/// traceback shows that calls `.to_csv(` with `header=[` once: that line
/// with `columns=[` in its place, which writes those columns only — a
/// `header` list renames every column and cannot pick some.
fn header_subset(output: &str) -> Option<(String, LineChange)> {
    let (cols, aliases) = last_error(output)?
        .strip_prefix("ValueError: Writing ")?
        .strip_suffix(" aliases")?
        .split_once(" cols but got ")?;
    if aliases.parse::<usize>().ok()? >= cols.parse::<usize>().ok()? {
        return None;
    }
    let line = source_line(output, ".to_csv(")?;
    let [at] = line
        .match_indices("header=[")
        .map(|(at, _)| at)
        .collect::<Vec<_>>()[..]
    else {
        return None;
    };
    let fixed = format!("{}columns=[{}", &line[..at], &line[at + "header=[".len()..]);
    Some((
        format!(
            "`header=[…]` renames every column of the table, it cannot choose some; to write only those columns use `columns=[…]`: `{line}` as `{fixed}`."
        ),
        LineChange::new(line, fixed),
    ))
}

/// The line of the model's code a Python error in `output` points at,
/// as its traceback shows it (trimmed): the last line before the error
/// that is indented as code and is not a `^`/`~` marker, with the frames
/// inside libraries folded first (pandas raises deep inside itself).
/// [`source_line`] finds a line by what it holds instead;
/// `splice::failed_line` gives its number in the cell.
pub(super) fn traceback_line(output: &str) -> Option<String> {
    let output = super::traceback::compact(output);
    let lines: Vec<&str> = output.lines().collect();
    let error = lines.iter().rposition(|l| {
        let l = l.trim_end();
        !l.is_empty() && !l.starts_with(' ') && !l.starts_with("[exit code ")
    })?;
    lines[..error]
        .iter()
        .rev()
        .take_while(|l| !l.trim_start().starts_with("File \""))
        .filter(|l| l.starts_with("    "))
        .map(|l| l.trim())
        .find(|l| !l.is_empty() && !l.starts_with(['^', '~']))
        .map(str::to_owned)
}

/// When Python refused an f-string (`SyntaxError: f-string: unmatched
/// '['`, `f-string expression part cannot include a backslash`) written
/// as only Python 3.12 reads it — a string in a field in the f-string's
/// own quotes (`f"{row["name"]}"`), a line break in a field
/// (`f"{'\n'.join(xs)}"`): the line written as older Python reads it.
fn fstring_fields(output: &str) -> Option<(String, LineChange)> {
    if !last_error(output)?.starts_with("SyntaxError: f-string") {
        return None;
    }
    let line = traceback_line(output)?;
    let fixed = super::pyline::fstrings_for_older_python(&line)?;
    Some((
        format!(
            "this Python takes neither the f-string's own quotes nor a backslash inside its `{{…}}`: `{line}` as `{fixed}`."
        ),
        LineChange::new(&line, fixed),
    ))
}

/// When a Python run failed to open a path that does not exist
/// (`FileNotFoundError: … No such file or directory:
/// '/path/to/sales.csv'`) whose last part names a file in the working
/// folder `cwd` (`sales.csv`), at a line the traceback shows that writes
/// that path once, in quotes: that line with the file's own name in its
/// place. Small models put a made-up folder before a file's name.
fn made_up_path(output: &str, cwd: &Path) -> Option<(String, LineChange)> {
    let error = last_error(output)?;
    if !error.starts_with("FileNotFoundError:") {
        return None;
    }
    let path = not_found(error)?;
    let file = Path::new(path).file_name()?.to_str()?;
    if file == path || !cwd.join(file).is_file() || cwd.join(path).exists() {
        return None;
    }
    let line = traceback_line(output)?;
    let mut written = ['\'', '"']
        .iter()
        .map(|q| (q, format!("{q}{path}{q}")))
        .filter(|(_, w)| line.contains(w.as_str()));
    let (quote, as_written) = written.next()?;
    if written.next().is_some() || line.matches(as_written.as_str()).count() != 1 {
        return None;
    }
    let fixed = line.replace(&as_written, &format!("{quote}{file}{quote}"));
    Some((
        format!(
            "`{path}` does not exist, and the working folder holds `{file}`: `{line}` as `{fixed}`."
        ),
        LineChange::new(&line, fixed),
    ))
}

/// Calls that move or copy a file to the path given second.
const MOVES: &[&str] = &[
    "os.rename(",
    "os.replace(",
    "shutil.move(",
    "shutil.copy(",
    "shutil.copy2(",
    "shutil.copyfile(",
];

/// When a file was moved or copied (`os.rename(src, dst)`,
/// `shutil.move(…)`) into a folder that does not exist
/// (`FileNotFoundError: … 'project/a.bak' -> 'backups/src/a.bak'`, the
/// source there in the folder `cwd`, the target's folder not), at a line
/// the traceback shows that makes that call once: that line with one
/// before it that makes the target's folder. Neither call makes folders.
fn missing_folder(output: &str, cwd: &Path) -> Option<(String, LineChange)> {
    let error = last_error(output)?.strip_prefix("FileNotFoundError: ")?;
    let (_, paths) = error.split_once("No such file or directory: ")?;
    // `os.rename` names both paths; `shutil`'s copy names the target
    // only, whose name a file below `cwd` then has (a move keeps it).
    let (source, target) = match paths.split_once(" -> ") {
        Some((source, target)) => (Some(quoted(source)?), quoted(target)?),
        None => (None, quoted(paths)?),
    };
    let folder = Path::new(target)
        .parent()
        .filter(|f| !f.as_os_str().is_empty())?;
    let source_there = match source {
        Some(source) => cwd.join(source).exists(),
        None => Path::new(target).file_name().is_some_and(|name| {
            super::walk::find_file(cwd, 4, &mut |path| {
                (path.file_name() == Some(name)).then_some(())
            })
            .is_some()
        }),
    };
    if !source_there || cwd.join(folder).exists() {
        return None;
    }
    let line = traceback_line(output)?;
    let [(at, call)] = MOVES
        .iter()
        .flat_map(|call| line.match_indices(call))
        .collect::<Vec<_>>()[..]
    else {
        return None;
    };
    let args = super::pyline::call_arguments(&line[at + call.len()..])?;
    let [_, target_code, ..] = &args[..] else {
        return None;
    };
    let fixed = format!("os.makedirs(os.path.dirname({target_code}), exist_ok=True)\n{line}");
    Some((
        format!(
            "`{}` does not exist, and `{}` makes no folders: make it first, `os.makedirs(os.path.dirname({target_code}), exist_ok=True)`.",
            folder.display(),
            call.trim_end_matches('(')
        ),
        LineChange::new(&line, fixed),
    ))
}

/// When text was joined with a number by `+` (`TypeError: can only
/// concatenate str (not "int") to str`, or `unsupported operand type(s)
/// for +: 'int' and 'str'`) at a line that joins string literals: the line
/// with each other operand of the join converted with `str(…)`.
fn number_in_text(output: &str) -> Option<(String, LineChange)> {
    let message = last_error(output)?.strip_prefix("TypeError: ")?;
    let number = ["int", "float", "numpy.int64", "numpy.float64"]
        .iter()
        .any(|n| {
            message.starts_with(&format!("can only concatenate str (not \"{n}\") to str"))
                || message == format!("unsupported operand type(s) for +: '{n}' and 'str'")
        });
    if !number {
        return None;
    }
    let line = traceback_line(output)?;
    let fixed = super::pyline::text_concat(&line)?;
    Some((
        format!(
            "text and a number cannot be joined with `+`: convert the number with `str(…)`, `{line}` as `{fixed}` (or write an f-string)."
        ),
        LineChange::new(&line, fixed),
    ))
}

/// When a run failed with `ValueError: not enough values to unpack` at a
/// line that unpacks a split line (`region, amount = line.split(",")`):
/// some lines have fewer parts (a blank line, a comment, a heading). The
/// note names the separator that line splits at, since small models copy
/// a note's example separator into code that needs another. A comma is a
/// CSV's: its quoted fields hold commas too, so `csv.reader` is the fix.
fn unpack_split(output: &str) -> Option<String> {
    if !last_error(output)?.starts_with("ValueError: not enough values to unpack") {
        return None;
    }
    let line = output
        .lines()
        .map(str::trim)
        .find(|l| l.contains(".split(") && l.contains('=') && !l.starts_with("File "))?;
    let args = &line[line.find(".split(")? + ".split(".len()..];
    // The separator: the string literal the call begins with, if any.
    let sep = args
        .chars()
        .next()
        .filter(|q| *q == '\'' || *q == '"')
        .and_then(|q| args[1..].find(q).map(|end| &args[..end + 2]))
        .unwrap_or("");
    let literal = sep.len() >= 3;
    let skip = if literal {
        format!(
            "`if not line or line.startswith('#') or {sep} not in line: continue`, then split at the first {sep} only (`line.split({sep}, 1)`)"
        )
    } else {
        "`if not line or line.startswith('#'): continue`, and check the number of parts before unpacking (`parts = line.split()`, `if len(parts) < 2: continue`)".to_owned()
    };
    let csv = if sep == "','" || sep == "\",\"" {
        " For a CSV file, read the rows with `csv.reader(f)` instead of splitting lines: it also keeps a quoted field's commas (`\"1,000.25\"`) in one value, and skip its header with `next(reader)` and empty rows with `if not row: continue`."
    } else {
        ""
    };
    Some(format!(
        "a line split into fewer parts than the names it is unpacked into failed at `{line}`: some lines have no separator — blank lines, comments, headings. Skip them first (`line = line.strip()`, then {skip}).{csv}"
    ))
}

/// For a failed `a, b = line.strip().split('=')` (not enough values to
/// unpack), in a loop: a line before it that skips the lines without the
/// separator and comments, and the split at the first separator only.
fn skip_unsplit(output: &str) -> Option<LineChange> {
    let line = source_line(output, ".split(")?;
    let split = SplitLine::of(line)?;
    let source = split.source;
    let plain = !source.is_empty()
        && source
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '(' | ')'));
    // A comma's table has quoted commas too: its note gives `csv.reader`.
    if !plain
        || split.names.len() < 2
        || split.bounded
        || split.separator.len() < 3
        || split.bare == ","
    {
        return None;
    }
    let unpack = if split.names.len() == 2 {
        split.once()
    } else {
        line.to_owned()
    };
    let stripped = if source.ends_with(".strip()") {
        source.to_owned()
    } else {
        format!("{source}.strip()")
    };
    Some(LineChange::new(
        line,
        format!(
            "if {stripped}.startswith('#') or {} not in {source}:\n    continue\n{unpack}",
            split.separator
        ),
    ))
}

/// When pandas' `merge` failed with a `KeyError` for its `on=` column:
/// the key is named differently in the two tables (`customer_id`,
/// `customer`). Small models then try one name after the other in `on=`.
fn merge_keys(output: &str) -> Option<&'static str> {
    let failed = output
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())?
        .trim()
        .starts_with("KeyError: ");
    let merged = output
        .lines()
        .any(|l| l.contains("merge(") && l.contains("on="));
    (failed && merged).then_some(
        "`merge(…, on=…)` needs a column of that name in both tables. When the key is named differently in each (`customer_id` in one, `customer` in the other), write `pd.merge(left, right, left_on='customer_id', right_on='customer')` with each table's own column name (make the values alike first if they are written differently).",
    )
}

/// The merge a failed `pd.merge(a, b, on='key')` meant, with each table's
/// own key column: the tables named by its two arguments (`customers` or
/// `df_customers` for `customers.csv`, among the tables in `cwd`), the one
/// without `key` given the column `key` names a part of (`id` for
/// `customer_id`) or that names a part of `key` (`customer`). With the
/// failed line changed to that merge, when its `on=` argument is found in
/// it once.
fn merge_with(output: &str, cwd: &Path) -> Option<(String, Option<LineChange>)> {
    let line = output
        .lines()
        .map(str::trim)
        .find(|l| l.contains("merge(") && l.contains("on="))?;
    let at = line.find("merge(")?;
    let args: Vec<&str> = line[at + "merge(".len()..]
        .split(',')
        .map(str::trim)
        .collect();
    // `pd.merge(a, b, …)`, or `a.merge(b, …)`.
    let object = line[..at].strip_suffix('.').map(|before| {
        let start = before
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map_or(0, |i| i + 1);
        &before[start..]
    });
    let (left, right) = match object {
        Some(object) if object != "pd" && object != "pandas" => (object, *args.first()?),
        _ => (*args.first()?, *args.get(1)?),
    };
    let key = args
        .iter()
        .find_map(|a| a.strip_prefix("on=").and_then(quoted))?;
    let plain = |name: &str| name.chars().all(|c| c.is_alphanumeric() || c == '_');
    if !plain(left) || !plain(right) || left.is_empty() || right.is_empty() {
        return None;
    }
    let tables: Vec<(String, Vec<String>)> = fs_err::read_dir(cwd)
        .ok()?
        .flatten()
        .take(200)
        .filter_map(|entry| {
            let name = entry.file_name().to_str()?.to_owned();
            let lower = name.to_lowercase();
            if !(lower.ends_with(".csv") || lower.ends_with(".tsv")) {
                return None;
            }
            let head = super::coach::read_head(&entry.path(), 8192)?;
            let (_, columns) = table::columns(&String::from_utf8_lossy(&head))?;
            Some((name, columns.iter().map(|c| c.trim().to_owned()).collect()))
        })
        .collect();
    let table_of = |var: &str| {
        let var = var.to_lowercase();
        let found: Vec<&(String, Vec<String>)> = tables
            .iter()
            .filter(|(name, _)| {
                let stem = name
                    .rsplit_once('.')
                    .map_or(name.as_str(), |(s, _)| s)
                    .to_lowercase();
                stem.len() >= 3 && (var.contains(&stem) || stem.contains(&var))
            })
            .collect();
        match found.as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    };
    let (left_table, right_table) = (table_of(left)?, table_of(right)?);
    let has = |t: &(String, Vec<String>)| t.1.iter().any(|c| c == key);
    // The column of a table that is the key under another name: a part of
    // `key` (`id`, `customer` for `customer_id`), or named by a part.
    let counterpart = |t: &(String, Vec<String>)| -> Option<String> {
        let parts: Vec<String> = key.to_lowercase().split('_').map(str::to_owned).collect();
        let found: Vec<&String> =
            t.1.iter()
                .filter(|c| {
                    let c = c.to_lowercase();
                    parts.contains(&c)
                        || c.split('_')
                            .any(|p| parts.contains(&p.to_owned()) && p.len() > 2)
                })
                .collect();
        // The table of what the key names (`customers.csv` for
        // `customer_id`) has it as its `id`; another table's `id` is its
        // own rows'.
        let stem = t.0.to_lowercase();
        let entity = parts.len() > 1 && stem.starts_with(parts[0].as_str());
        let id = found.iter().find(|c| c.eq_ignore_ascii_case("id"));
        let other: Vec<&&String> = found
            .iter()
            .filter(|c| !c.eq_ignore_ascii_case("id"))
            .collect();
        match (entity, id, other.as_slice()) {
            (true, Some(id), _) => Some((*id).clone()),
            (_, _, [one]) => Some((**one).clone()),
            (_, Some(id), []) => Some((*id).clone()),
            _ => None,
        }
    };
    let (left_on, right_on, lacking) = match (has(left_table), has(right_table)) {
        (false, true) => (counterpart(left_table)?, key.to_owned(), left_table),
        (true, false) => (key.to_owned(), counterpart(right_table)?, right_table),
        _ => return None,
    };
    // The `on='key'` argument as written, its closing quote included, and
    // not part of another name (`left_on=`).
    let on = args.iter().find_map(|a| {
        let rest = a.strip_prefix("on=")?;
        let quote = rest.chars().next().filter(|q| *q == '\'' || *q == '"')?;
        let end = rest[1..].find(quote)?;
        Some(&a[.."on=".len() + end + 2])
    });
    let fix = on.and_then(|on| {
        let at = line.find(on)?;
        let alone = line.matches(on).count() == 1
            && !line[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        alone.then(|| {
            LineChange::new(
                line,
                format!(
                    "{}left_on='{left_on}', right_on='{right_on}'{}",
                    &line[..at],
                    &line[at + on.len()..]
                ),
            )
        })
    });
    let text = format!(
        "`{}` has no `{key}` column (its columns: {}): its key is `{}`. Merge on each table's own column: `pd.merge({left}, {right}, left_on='{left_on}', right_on='{right_on}')` (make the values alike first if they are written differently).",
        lacking.0,
        lacking
            .1
            .iter()
            .map(|c| format!("`{c}`"))
            .collect::<Vec<_>>()
            .join(", "),
        if std::ptr::eq(lacking, left_table) {
            &left_on
        } else {
            &right_on
        },
    );
    Some((text, fix))
}

/// When a program that failed printed how to use it (`Usage: prog
/// <file>`): it was run without the arguments it needs. Small models run a
/// script bare and read the usage line as the task's end.
fn usage(line: &str, cwd: &Path) -> Option<(&'static str, String)> {
    let (head, how) = line.split_once(':')?;
    if !head.eq_ignore_ascii_case("usage") || how.trim().is_empty() {
        return None;
    }
    Some((
        "usage",
        format!(
            "the program stopped at its usage line (`{}`): it needs arguments. Run it again with them; the working folder holds {}.",
            how.trim(),
            folder_names(cwd)?
        ),
    ))
}

/// The hint for the last line of a Python traceback (`ValueError: …`),
/// `json.decoder.JSONDecodeError: …` included.
fn python_hint(line: &str) -> Option<(&'static str, String)> {
    let (name, message) = line.split_once(": ")?;
    let name = name.rsplit('.').next().unwrap_or(name);
    if name.contains(' ') || !(name.ends_with("Error") || name.ends_with("Exception")) {
        return None;
    }
    match name {
        "AttributeError" if message.starts_with("Can only use .dt accessor") => Some((
            "dt-text",
            "`.dt` works on dates, and that column holds text: convert it first (`df[c] = pd.to_datetime(df[c], format='mixed')`); for ISO text (`2024-01-05T09:12:00`) the day is also `.str[:10]` and the month `.str[:7]`.".to_owned(),
        )),
        "AttributeError" => attribute_hint(message),
        "TypeError" => type_hint(message),
        "ValueError" => value_hint(message),
        "JSONDecodeError" if message.starts_with("Extra data") => Some((
            "json-lines",
            "the file holds more than one JSON document, likely one per line: read it line by line, `json.loads(line)` for each line that is not blank (pandas: `read_json(…, lines=True)`).".to_owned(),
        )),
        "UnicodeDecodeError" => Some((
            "encoding",
            "the file is not UTF-8 text: open it with `encoding='latin-1'` (or `errors='replace'`).".to_owned(),
        )),
        "NameError" => {
            let (missing, import) = import_for(message)?;
            Some((
                "import",
                format!("`{missing}` is not defined: add `{import}` at the top of the block."),
            ))
        }
        "ParserError" if message.contains("Expected") && message.contains("fields in line") => {
            Some((
                "fields",
                format!(
                    "pandas says: {message}. That line has more fields than the header: fields hold the separator unquoted, or the file uses another separator. Print that line before choosing how to read the file."
                ),
            ))
        }
        _ => None,
    }
}

fn attribute_hint(message: &str) -> Option<(&'static str, String)> {
    let owner = between(message, "'", "'")?;
    let attribute = between(message, "has no attribute '", "'")?;
    let text_method = TEXT_METHODS.contains(&attribute);
    match owner {
        "Series" | "Index" if text_method => Some((
            "series-str",
            format!(
                "`.{attribute}()` is a method of text, not of a pandas column: on a column write `.str.{attribute}(…)` (`df['name'].str.{attribute}()`)."
            ),
        )),
        "int" | "float" | "numpy.int64" | "numpy.float64" if text_method => Some((
            "number-not-text",
            format!(
                "some values are already numbers (`{owner}`), not text, so they have no `.{attribute}()`: change only the values that are text (`if isinstance(v, str)`), or convert each with `str(v)` first."
            ),
        )),
        "NoneType" => Some(("none", none_text())),
        "str" | "list" if ["get", "keys", "items", "values"].contains(&attribute) => {
            Some(("shape", shape_text(owner)))
        }
        _ => None,
    }
}

fn type_hint(message: &str) -> Option<(&'static str, String)> {
    let mixes = |a: &str| {
        message.contains(&format!("'{a}' and 'str'"))
            || message.contains(&format!("'str' and '{a}'"))
    };
    let numbers_and_text = mixes("int") || mixes("float");
    if message.starts_with("unsupported operand type(s)") && numbers_and_text {
        return Some((
            "text-arithmetic",
            "some values are text (numbers written in quotes, like \"7.5\"): convert each with `float(…)` before doing arithmetic with it.".to_owned(),
        ));
    }
    if message.starts_with("sequence item ") && message.contains(": expected str instance, ") {
        return Some((
            "join-text",
            "`join` takes text only, and a value is a number: convert each when joining (`' | '.join(str(v) for v in row)`), or keep the numbers as text and convert only where you compare or sort (`key=lambda row: float(row[i])`).".to_owned(),
        ));
    }
    if message.starts_with("unsupported format string passed to Series.__format__") {
        return Some((
            "series-format",
            "the value formatted is a whole pandas column (a Series), not one number: reduce it first, e.g. `(df['qty'] * df['price']).sum()` (multiply, then sum).".to_owned(),
        ));
    }
    if message.starts_with("can't multiply sequence by non-int of type") {
        return Some((
            "text-arithmetic",
            "a value is text (a number read from a file stays text): convert it with `float(…)` before multiplying.".to_owned(),
        ));
    }
    if message.contains("with string dtype") || message.contains("with dtype object") {
        return Some((
            "text-column",
            "the column holds text, not numbers: convert it with `pd.to_numeric(df['column'], errors='coerce')` (values that are not numbers become missing) before computing.".to_owned(),
        ));
    }
    if message.starts_with("can only concatenate str (not \"int\")")
        || message.starts_with("can only concatenate str (not \"float\")")
    {
        return Some((
            "text-arithmetic",
            "a number was added to text: to add numbers, convert the text with `float(…)` first; to build text, convert the number with `str(…)` (or use an f-string).".to_owned(),
        ));
    }
    if message.contains("not supported between instances of") && mixes_none(message) {
        return Some((
            "none-compare",
            "some values are missing (`None`; `null` in JSON): leave them out before sorting or comparing (`[v for v in values if v is not None]`).".to_owned(),
        ));
    }
    if message.contains("not supported between instances of") && numbers_and_text {
        return Some((
            "text-compare",
            "some values are text, not numbers: convert them with `float(…)` (pandas: `pd.to_numeric`) before comparing or sorting.".to_owned(),
        ));
    }
    if message.contains("'NoneType' object is not subscriptable")
        || message.contains("'NoneType' object is not iterable")
    {
        return Some(("none", none_text()));
    }
    if message.starts_with("string indices must be integers") {
        return Some(("shape", shape_text("str")));
    }
    if message.starts_with("list indices must be integers or slices, not str") {
        return Some((
            "row-by-name",
            "a list was indexed by a name: a `csv.reader` row is a list of fields, indexed by position. Find the column's position once (`i = header.index(name)`) and use `row[i]`, or read the rows with `csv.DictReader` to index them by name.".to_owned(),
        ));
    }
    if let Some(kind) = between(message, "Object of type ", " is not JSON serializable") {
        let how = match kind {
            "set" => "make it a list with `list(…)`".to_owned(),
            "int64" | "int32" | "float64" | "float32" | "bool_" => {
                "convert numpy numbers with `int(…)` or `float(…)` (or `.item()`)".to_owned()
            }
            "Timestamp" | "datetime" | "date" => "write it as text with `str(…)`".to_owned(),
            other => format!("convert each `{other}` to a plain number, text, list or dict"),
        };
        return Some((
            "json-type",
            format!("`json` cannot write a `{kind}`: {how} before `json.dump`."),
        ));
    }
    None
}

fn value_hint(message: &str) -> Option<(&'static str, String)> {
    if let Some(rest) = message.strip_prefix("Length mismatch: Expected axis has ") {
        let has = rest.split(' ').next()?;
        let given = between(rest, "new values have ", " ")?;
        return Some((
            "length-mismatch",
            format!(
                "the table has {has} columns and the list of names you gave has {given}: `.columns = [...]` renames every column, in order. Print the table's columns first (`print(table.columns)`, and `reset_index()` to make a grouped key a column), then keep the ones you need (`table[['a', 'b']]`) before renaming them."
            ),
        ));
    }
    if message.starts_with("Specified a sep and a delimiter") {
        return Some((
            "sep",
            "in pandas `sep` and `delimiter` are one option: pass only `sep` (`sep=';'`)."
                .to_owned(),
        ));
    }
    if message.starts_with("time data ") && message.contains("doesn't match format") {
        return Some((
            "dates",
            "the dates are not all written in one format: parse each value on its own — pandas: `pd.to_datetime(df[c], format='mixed')`, with `dayfirst=True` when a date like `03/02/2026` means 3 February; plain Python: try each format in turn (`datetime.strptime` in a loop, catching `ValueError`) — then write it the way the task asks. Do not use `errors='coerce'`: it empties the dates it cannot read.".to_owned(),
        ));
    }
    if message.starts_with("not enough values to unpack") {
        return Some((
            "unpack",
            "a line split into fewer parts than the names it is unpacked into: some lines have no separator — blank lines, comments, headings. Skip them first (`line = line.strip()`, then `if not line or line.startswith('#') or '=' not in line: continue`, with the separator your code splits at), and split at the first separator only (`line.split('=', 1)`).".to_owned(),
        ));
    }
    let (value, to_int) = refused_number(message)?;
    if value.is_empty() {
        return Some((
            "empty-value",
            "some values are empty: skip them, or count them as the task says (a missing amount as 0), before converting.".to_owned(),
        ));
    }
    if table::is_missing(value) {
        return Some((
            "missing-mark",
            format!(
                "`{value}` marks a missing value: skip such values (pandas: `na_values=['{value}']`, or `pd.to_numeric(…, errors='coerce')`) before converting."
            ),
        ));
    }
    if table::joined_numbers(value) {
        return Some((
            "joined-numbers",
            format!(
                "`{value}` is numbers joined together: they were added up while still text (adding text joins it), so no cleaning after the sum can part them. Convert the input column to numbers first (remove signs and separators, then `float`; pandas, for a column `c`: `df[c] = df[c].str.replace(r'[$,]', '', regex=True).astype(float)`), then add."
            ),
        ));
    }
    if value.len() > 1 && (value.starts_with('"') ^ value.ends_with('"')) {
        return Some((
            "split-quoted",
            format!(
                "`{value}` is part of a quoted field (`\"1,250.00\"`) cut at the comma inside it: splitting a CSV line at `,` breaks such fields. Read the rows with `csv.reader(f)` (or `csv.DictReader(f)`, `import csv`), which keeps a quoted field whole, then remove its thousands separator (`.replace(',', '')`) before converting."
            ),
        ));
    }
    if let Some(unit) = unit_of(value) {
        return Some((
            "unit",
            format!(
                "`{value}` is a number followed by its unit (`{unit}`): take them apart, `number, unit = re.match(r'([0-9.]+)\\s*(\\D*)', value.strip()).groups()` (`import re`), convert `float(number)`, and scale it by `unit` where the values come in several units (seconds to milliseconds: `* 1000`) — removing letters one `replace` at a time breaks on the next unit."
            ),
        ));
    }
    if to_int && value.parse::<f64>().is_ok() {
        return Some((
            "decimal",
            format!("`{value}` has a decimal point: convert with `float(…)`, not `int(…)`."),
        ));
    }
    Some(match table::written_number(value)? {
        Written::DecimalComma => (
            "decimal-comma",
            format!(
                "`{value}` is written with a decimal comma: replace the `,` by a `.` before converting (pandas: `decimal=','`)."
            ),
        ),
        Written::Separated => (
            "written-number",
            format!(
                "`{value}` is written with signs or separators: remove them (`.replace(',', '')` and so on) before converting."
            ),
        ),
    })
}

/// The unit after the number a value is (`ms` of `120ms`, `%` of
/// `45 %`): digits with at most one point, then up to three letters or a
/// `%`.
fn unit_of(value: &str) -> Option<&str> {
    let value = value.trim();
    let at = value.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (number, unit) = (&value[..at], value[at..].trim_start());
    let letters = !unit.is_empty()
        && unit.len() <= 3
        && (unit == "%" || unit.chars().all(|c| c.is_ascii_alphabetic()));
    (letters && number.parse::<f64>().is_ok()).then_some(unit)
}

/// The value a conversion to a number refused in `text` (`could not
/// convert string to float: 'x'`, `invalid literal for int() with base
/// 10: 'x'`, pandas' `Unable to parse string "x"`), trimmed and without a
/// trailing `\n` written out; and whether `int()` refused it.
pub(super) fn refused_number(text: &str) -> Option<(&str, bool)> {
    [
        ("could not convert string to float: ", false),
        ("invalid literal for int() with base 10: ", true),
        ("Unable to parse string ", false),
    ]
    .iter()
    .find_map(|(prefix, to_int)| {
        let (_, rest) = text.split_once(prefix)?;
        let value = quoted(rest)?.trim_end_matches("\\n").trim();
        Some((value, *to_int))
    })
}

/// A hint for a line a shell tool printed.
fn shell_hint(line: &str) -> Option<(&'static str, String)> {
    // `largest.txt=$(du …)`: a file name used as a variable, which the
    // shell runs as a command (the risk gate holds it back for that).
    if line.contains("command not found") || line.contains("only known when it runs") {
        let name = line
            .split([' ', '`', '(', ':'])
            .find_map(|word| word.split_once('=').map(|(name, _)| name))
            .filter(|name| {
                let (stem, ext) = name.rsplit_once('.').unwrap_or(("", ""));
                !stem.is_empty()
                    && !ext.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
            })?;
        return Some((
            "dotted-variable",
            format!(
                "`{name}=…` is not an assignment (a shell variable's name cannot hold a `.`), so the shell runs it as a command. To write a command's output to the file `{name}`, redirect it: `command > {name}`."
            ),
        ));
    }
    let tool = line.split(':').next()?;
    if matches!(tool, "mv" | "cp") && line.ends_with("are the same file") {
        return Some((
            "same-file",
            format!(
                "`{tool}` was given a file and the same name: that file's name is already right. Skip the files whose new name is their old one."
            ),
        ));
    }
    None
}

/// When a file was not found (`FileNotFoundError`, `No such file or
/// directory`) and its name is not in the folder: what the folder holds.
/// Small models read `/path/to/data.csv` or a name they made up.
fn missing_file(line: &str, cwd: &Path) -> Option<(&'static str, String)> {
    let name = not_found(line)?;
    if cwd.join(name).exists() {
        return None;
    }
    let held = folder_names(cwd)?;
    Some((
        "missing-file",
        format!(
            "`{name}` does not exist. The working folder ({}) holds {held}: use those names, relative to it.",
            cwd.display()
        ),
    ))
}

/// The path an error `line` says was not found (`No such file or
/// directory: '/data/x.csv'` from Python, `cat: data.csv: No such file or
/// directory` from a program), not empty.
fn not_found(line: &str) -> Option<&str> {
    if !line.contains("No such file or directory") {
        return None;
    }
    let name = line
        .rsplit_once("No such file or directory: ")
        .and_then(|(_, rest)| quoted(rest))
        .or_else(|| {
            // `cat: data.csv: No such file or directory`
            let mut parts = line.rsplitn(3, ": ");
            parts.next();
            parts.next()
        })?;
    let name = name.strip_prefix("cannot access ").unwrap_or(name);
    let name = name.trim_matches(['\'', '"']);
    (!name.is_empty()).then_some(name)
}

/// The names in the folder `cwd` (folders with a `/`, hidden ones left
/// out), sorted, quoted, at most [`LISTED`] of them: what a file name
/// should be one of.
fn folder_names(cwd: &Path) -> Option<String> {
    let mut names: Vec<String> = fs_err::read_dir(cwd)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let folder = entry.file_type().ok()?.is_dir();
            (!name.starts_with('.')).then(|| if folder { format!("{name}/") } else { name })
        })
        .collect();
    names.sort();
    let more = names.len().saturating_sub(LISTED);
    names.truncate(LISTED);
    let listed: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    let held = if listed.is_empty() {
        "nothing".to_owned()
    } else if more > 0 {
        format!("{} and {more} more", listed.join(", "))
    } else {
        listed.join(", ")
    };
    Some(held)
}

/// Whether a `TypeError`'s `message` names `None` beside another type.
fn mixes_none(message: &str) -> bool {
    message.contains("'NoneType' and '") || message.contains("' and 'NoneType'")
}

fn none_text() -> String {
    "a value your code used is missing (`None`): some items lack that key, or a search matched nothing. Check for `None` before using it.".to_owned()
}

fn shape_text(owner: &str) -> String {
    let what = if owner == "list" { "a list" } else { "text" };
    format!(
        "your code used {what} as if it were a dict: the data nests differently than the code assumes. Print one item with `print(repr(item))` and follow its real shape."
    )
}

/// The text between the first `open` and the next `close` after it.
pub(super) fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let (_, rest) = text.split_once(open)?;
    rest.split_once(close).map(|(inside, _)| inside)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(output: &str) -> Option<&'static str> {
        hint(output, Path::new("/nonexistent-folder")).map(|h| h.kind)
    }

    fn note(output: &str) -> String {
        hint(output, Path::new("/nonexistent-folder"))
            .map(|h| h.note)
            .unwrap_or_default()
    }

    #[test]
    fn a_grouped_tables_key_named_among_its_columns_is_made_a_column_first() {
        let out = "Traceback (most recent call last):\n  File \"<cell-1>\", line 16, in <module>\n    region_totals_df.columns = ['region', 'total']\n    ^^^^^^^^^^^^^^^^^^^^^^^^\n  [5 frames inside libraries]\nValueError: Length mismatch: Expected axis has 1 elements, new values have 2 elements\n";
        let code = "df = pd.read_csv('s.csv')\nregion_totals = df.groupby('region')['amount'].sum()\nregion_totals_df = pd.DataFrame(region_totals)\nregion_totals_df.columns = ['region', 'total']\n";
        assert_eq!(
            grouped_columns(out, code),
            Some(LineChange::new(
                "region_totals_df.columns = ['region', 'total']",
                "region_totals_df = region_totals_df.reset_index()\nregion_totals_df.columns = ['region', 'total']".to_owned()
            ))
        );
        // Not grouped, already reset, or not one name more: no change.
        assert_eq!(grouped_columns(out, "t = pd.read_csv('s.csv')\n"), None);
        let reset = format!("{code}x = y.reset_index()\n");
        assert_eq!(grouped_columns(out, &reset), None);
        let two_more = out.replace("have 2 elements", "have 3 elements");
        assert_eq!(grouped_columns(&two_more, code), None);
        let fewer = out.replace(
            "has 1 elements, new values have 2",
            "has 4 elements, new values have 2",
        );
        assert_eq!(grouped_columns(&fewer, code), None);
    }

    #[test]
    fn columns_renamed_with_the_wrong_count_and_dt_on_text_get_their_hints() {
        let out = "Traceback (most recent call last):\n  File \"<cell-2>\", line 1, in <module>\n    net.columns = ['month', 'net']\nValueError: Length mismatch: Expected axis has 4 elements, new values have 2 elements\n";
        assert_eq!(kind(out), Some("length-mismatch"));
        assert!(
            note(out).contains("the table has 4 columns and the list of names you gave has 2"),
            "{}",
            note(out)
        );
        let out = "AttributeError: Can only use .dt accessor with datetimelike values\n";
        assert_eq!(kind(out), Some("dt-text"));
        assert!(note(out).contains("pd.to_datetime(df[c], format='mixed')"));
        assert_eq!(hint(out, Path::new(".")).unwrap().fix, None);
    }

    #[test]
    fn int_of_a_decimal_and_a_split_with_the_separator_in_its_value_get_their_line_fixed() {
        let out = "Traceback (most recent call last):\n  File \"<cell-1>\", line 5, in <module>\n    total += int(row['qty']) * price\nValueError: invalid literal for int() with base 10: '7.5'\n";
        let found = hint(out, Path::new(".")).expect("a hint");
        assert_eq!(found.kind, "decimal");
        assert!(!found.fix.as_ref().is_some_and(LineChange::needs_loop));
        assert_eq!(
            found.fix,
            Some(LineChange {
                line: "total += int(row['qty']) * price".to_owned(),
                fixed: "total += float(row['qty']) * price".to_owned(),
            })
        );
        // Two calls, or another name ending in `int(`: no change is guessed.
        let two =
            "    x = int(a) + int(b)\nValueError: invalid literal for int() with base 10: '7.5'\n";
        assert_eq!(hint(two, Path::new(".")).unwrap().kind, "decimal");
        assert_eq!(hint(two, Path::new(".")).unwrap().fix, None);
        let other = "    x = point(a)\nValueError: invalid literal for int() with base 10: '7.5'\n";
        assert_eq!(hint(other, Path::new(".")).unwrap().fix, None);
        // Not a decimal.
        let word = "    x = int(a)\nValueError: invalid literal for int() with base 10: 'abc'\n";
        assert_eq!(hint(word, Path::new(".")).and_then(|h| h.fix), None);

        let out = "Traceback (most recent call last):\n  File \"<cell-2>\", line 4, in <module>\n    key, value = line.strip().split('=')\n    ^^^^^^^^^^\nValueError: too many values to unpack (expected 2)\n";
        let found = hint(out, Path::new(".")).expect("a hint");
        assert_eq!(found.kind, "unpack-many");
        assert_eq!(
            found.fix.map(|f| f.fixed),
            Some("key, value = line.strip().split('=', 1)".to_owned())
        );
        assert!(
            found.note.contains("split at the first only"),
            "{}",
            found.note
        );
        let colon = "    name, when = l.split(\": \")\nValueError: too many values to unpack (expected 2)\n";
        assert_eq!(
            hint(colon, Path::new(".")).unwrap().fix.map(|f| f.fixed),
            Some("name, when = l.split(\": \", 1)".to_owned())
        );
        // A comma's table, three names, or a split already bounded: no.
        for out in [
            "    name, amount = line.split(',')\nValueError: too many values to unpack (expected 2)\n",
            "    a, b, c = line.split('=')\nValueError: too many values to unpack (expected 3)\n",
            "    a, b = line.split('=', 2)\nValueError: too many values to unpack (expected 2)\n",
        ] {
            assert_eq!(hint(out, Path::new(".")).and_then(|h| h.fix), None, "{out}");
        }
    }

    #[test]
    fn a_line_without_the_separator_gets_skipped_before_the_split() {
        let out = "Traceback (most recent call last):\n  File \"<cell-1>\", line 14, in <module>\n    key, value = line.strip().split('=')\n    ^^^^^^^^^^\nValueError: not enough values to unpack (expected 2, got 1)\n";
        let found = hint(out, Path::new(".")).expect("a hint");
        assert_eq!(found.kind, "unpack");
        assert!(found.fix.as_ref().is_some_and(LineChange::needs_loop));
        assert_eq!(
            found.fix,
            Some(LineChange {
                line: "key, value = line.strip().split('=')".to_owned(),
                fixed: "if line.strip().startswith('#') or '=' not in line.strip():\n    continue\nkey, value = line.strip().split('=', 1)".to_owned(),
            })
        );
        // Three names keep their split; no literal separator, no change.
        let three = "    a, b, c = row.split(';')\nValueError: not enough values to unpack (expected 3, got 1)\n";
        assert_eq!(
            hint(three, Path::new(".")).unwrap().fix.map(|f| f.fixed),
            Some("if row.strip().startswith('#') or ';' not in row:\n    continue\na, b, c = row.split(';')".to_owned())
        );
        let spaces =
            "    a, b = row.split()\nValueError: not enough values to unpack (expected 2, got 1)\n";
        assert_eq!(hint(spaces, Path::new(".")).unwrap().fix, None);
        // A comma: the note's `csv.reader`, not a change.
        let comma = "    region, amount = line.split(\",\")\nValueError: not enough values to unpack (expected 2, got 1)\n";
        assert_eq!(hint(comma, Path::new(".")).unwrap().fix, None);
    }

    #[test]
    fn dt_on_a_text_column_gets_its_line_fixed() {
        let out = "Traceback (most recent call last):\n  File \"<cell-1>\", line 13, in <module>\n    net = df.groupby(df['timestamp'].dt.to_period('M'))['amount'].sum()\n                     ^^^^^^^^^^^^^^^^^^\n  [3 frames inside libraries]\nAttributeError: Can only use .dt accessor with datetimelike values\n";
        let found = hint(out, Path::new(".")).expect("a hint");
        assert_eq!(found.kind, "dt-text");
        assert_eq!(
            found.fix,
            Some(LineChange {
                line: "net = df.groupby(df['timestamp'].dt.to_period('M'))['amount'].sum()"
                    .to_owned(),
                fixed: "net = df.groupby(pd.to_datetime(df['timestamp'], format='mixed').dt.to_period('M'))['amount'].sum()"
                    .to_owned(),
            })
        );
        assert!(
            found.note.contains("`df['timestamp']` holds text"),
            "{}",
            found.note
        );
        // Every use of that column on the line; a column not written
        // `table['name']` gets the general note.
        let out = "    df['m'] = df[\"ts\"].dt.month * 100 + df[\"ts\"].dt.day\nAttributeError: Can only use .dt accessor with datetimelike values\n";
        assert_eq!(
            hint(out, Path::new(".")).unwrap().fix.map(|f| f.fixed),
            Some("df['m'] = pd.to_datetime(df[\"ts\"], format='mixed').dt.month * 100 + pd.to_datetime(df[\"ts\"], format='mixed').dt.day".to_owned())
        );
        let out = "    df['m'] = df.ts.dt.month\nAttributeError: Can only use .dt accessor with datetimelike values\n";
        assert_eq!(hint(out, Path::new(".")).unwrap().fix, None);
        let out = "    m = rows[0].dt.month\nAttributeError: Can only use .dt accessor with datetimelike values\n";
        assert_eq!(hint(out, Path::new(".")).unwrap().fix, None);
    }

    #[test]
    fn a_file_moved_into_a_folder_not_made_gets_the_folder_made_first() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::create_dir_all(cwd.join("project/src")).unwrap();
        fs_err::write(cwd.join("project/src/main.py.bak"), "x").unwrap();
        let out = "Traceback (most recent call last):\n  File \"<cell-1>\", line 23, in <module>\n    os.rename(file_path, os.path.join(dest, rel))\nFileNotFoundError: [Errno 2] No such file or directory: 'project/src/main.py.bak' -> 'backups/src/main.py.bak'\n";
        let found = hint(out, cwd).expect("a hint");
        assert_eq!(found.kind, "missing-folder");
        assert_eq!(
            found.fix,
            Some(LineChange::new(
                "os.rename(file_path, os.path.join(dest, rel))",
                "os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)\nos.rename(file_path, os.path.join(dest, rel))".to_owned()
            ))
        );
        assert!(
            found
                .note
                .contains("`backups/src` does not exist, and `os.rename` makes no folders"),
            "{}",
            found.note
        );
        // `shutil` names the target alone; a file of its name is below.
        let copied = out
            .replace("os.rename(file_path,", "shutil.move(file_path,")
            .replace("'project/src/main.py.bak' -> ", "");
        assert_eq!(
            hint(&copied, cwd).and_then(|h| h.fix).map(|f| f.fixed),
            Some("os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)\nshutil.move(file_path, os.path.join(dest, rel))".to_owned())
        );
        // The folder there after all, or the source missing: not this.
        fs_err::create_dir_all(cwd.join("backups/src")).unwrap();
        assert_ne!(hint(out, cwd).map(|h| h.kind), Some("missing-folder"));
        fs_err::remove_dir_all(cwd.join("backups")).unwrap();
        fs_err::remove_file(cwd.join("project/src/main.py.bak")).unwrap();
        assert_ne!(hint(out, cwd).map(|h| h.kind), Some("missing-folder"));
        assert_ne!(hint(&copied, cwd).map(|h| h.kind), Some("missing-folder"));
    }

    #[test]
    fn a_header_list_shorter_than_the_table_becomes_the_columns_to_write() {
        let out = "Traceback (most recent call last):\n  File \"<cell-3>\", line 13, in <module>\n    df.to_csv('ages.csv', index=False, header=['name', 'age'])\n  [7 frames inside libraries]\nValueError: Writing 3 cols but got 2 aliases\n";
        let found = hint(out, Path::new(".")).expect("a hint");
        assert_eq!(found.kind, "header-subset");
        assert!(!found.habit);
        assert_eq!(
            found.fix,
            Some(LineChange::new(
                "df.to_csv('ages.csv', index=False, header=['name', 'age'])",
                "df.to_csv('ages.csv', index=False, columns=['name', 'age'])".to_owned()
            ))
        );
        assert!(found.note.contains("use `columns=[…]`"), "{}", found.note);
        // More names than columns is a rename gone wrong, not a choice.
        let more = out.replace("Writing 3 cols but got 2", "Writing 2 cols but got 3");
        assert_eq!(hint(&more, Path::new(".")).and_then(|h| h.fix), None);
        // No `header=[` list on the line, or two of them: left alone.
        let named = out.replace("header=['name', 'age']", "header=names");
        assert_eq!(hint(&named, Path::new(".")).and_then(|h| h.fix), None);
    }

    #[test]
    fn a_text_method_on_a_column_gets_its_line_fixed() {
        let out = "Traceback (most recent call last):\n  File \"<cell-1>\", line 7, in <module>\n    df['subject'] = df['subject'].str.strip().lower()\n                    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n  [1 frame inside libraries]\nAttributeError: 'Series' object has no attribute 'lower'\n";
        assert_eq!(kind(out), Some("series-str"));
        assert!(
            note(out).ends_with("Write `df['subject'] = df['subject'].str.strip().lower()` as `df['subject'] = df['subject'].str.strip().str.lower()`.]"),
            "{}",
            note(out)
        );
        assert_eq!(
            hint(out, Path::new(".")).unwrap().fix,
            Some(LineChange {
                line: "df['subject'] = df['subject'].str.strip().lower()".to_owned(),
                fixed: "df['subject'] = df['subject'].str.strip().str.lower()".to_owned(),
            })
        );
        // Every call on the line, and none twice.
        let out = "    x = df['a'].lower() + df['b'].str.lower()\nAttributeError: 'Series' object has no attribute 'lower'\n";
        assert!(
            note(out).contains("as `x = df['a'].str.lower() + df['b'].str.lower()`"),
            "{}",
            note(out)
        );
    }

    #[test]
    fn pandas_columns_get_their_str_accessor() {
        let out = "Traceback (most recent call last):\n  File \"<stdin>\", line 3, in <module>\nAttributeError: 'Series' object has no attribute 'lower'\n";
        assert_eq!(kind(out), Some("series-str"));
        assert!(note(out).contains("`.str.lower(…)`"), "{}", note(out));
        // Not a text method: no guess.
        assert_eq!(
            kind("AttributeError: 'Series' object has no attribute 'frobnicate'"),
            None
        );
    }

    #[test]
    fn a_merge_on_a_key_one_table_lacks_gets_left_on_and_right_on() {
        let out = "Traceback (most recent call last):\n  File \"<cell-3>\", line 11, in <module>\n    merged = pd.merge(customers, payments, on='customer')\n             ^^^^^^^^^^^^\n  [4 frames inside libraries]\nKeyError: 'customer'\n";
        assert_eq!(kind(out), Some("merge-keys"));
        assert!(note(out).contains("left_on="), "{}", note(out));
        // With the tables in the folder: each one's own key column.
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(dir.path().join("customers.csv"), "id,name\n1,ann\n2,bob\n").unwrap();
        fs_err::write(
            dir.path().join("orders.csv"),
            "order_id,customer_id,amount\n100,1,10\n101,2,7\n",
        )
        .unwrap();
        let failed = "    merged_df = pd.merge(df_customers, df_orders, on='customer_id', how='left')\n  [4 frames inside libraries]\nKeyError: 'customer_id'\n";
        assert_eq!(
            hint(failed, dir.path()).unwrap().note,
            "[oi: `customers.csv` has no `customer_id` column (its columns: `id`, `name`): its key is `id`. Merge on each table's own column: `pd.merge(df_customers, df_orders, left_on='id', right_on='customer_id')` (make the values alike first if they are written differently).]"
        );
        // The failed line itself, changed to that merge.
        assert_eq!(
            hint(failed, dir.path()).unwrap().fix,
            Some(LineChange {
                line: "merged_df = pd.merge(df_customers, df_orders, on='customer_id', how='left')"
                    .to_owned(),
                fixed: "merged_df = pd.merge(df_customers, df_orders, left_on='id', right_on='customer_id', how='left')"
                    .to_owned(),
            })
        );
        // The other way round, and a key that names a part of the other's.
        fs_err::write(
            dir.path().join("payments.csv"),
            "id,customer,amount\n1,c001,10\n2,C002,3\n",
        )
        .unwrap();
        fs_err::write(
            dir.path().join("clients.csv"),
            "customer_id,name\nC001,Ana\nC002,Ben\n",
        )
        .unwrap();
        let failed = "    m = clients.merge(payments, on='customer_id')\nKeyError: 'customer_id'\n";
        assert_eq!(
            hint(failed, dir.path()).unwrap().fix.map(|f| f.fixed),
            Some(
                "m = clients.merge(payments, left_on='customer_id', right_on='customer')"
                    .to_owned()
            )
        );
        // `on=` written twice on the line: no change is guessed.
        let twice = "    m = clients.merge(payments, on='customer_id').merge(payments, on='customer_id')\nKeyError: 'customer_id'\n";
        assert_eq!(hint(twice, dir.path()).unwrap().fix, None);
        assert!(
            hint(failed, dir.path()).unwrap().note.contains("`payments.csv` has no `customer_id` column (its columns: `id`, `customer`, `amount`): its key is `customer`. Merge on each table's own column: `pd.merge(clients, payments, left_on='customer_id', right_on='customer')`"),
            "{:?}",
            hint(failed, dir.path())
        );
        // Tables it cannot tell: the general note.
        let failed = "    m = pd.merge(a, b, on='customer_id')\nKeyError: 'customer_id'\n";
        assert!(
            hint(failed, dir.path())
                .unwrap()
                .note
                .contains("`pd.merge(left, right, left_on=")
        );
        // A `KeyError` elsewhere, or a merge that failed another way.
        assert_eq!(
            kind("  File \"<cell-1>\", line 2\n    x = d['a']\nKeyError: 'a'\n"),
            None
        );
        assert_ne!(
            kind(
                "    m = a.merge(b, on='id')\nValueError: You are trying to merge on object and int64 columns\n"
            ),
            Some("merge-keys")
        );
    }

    #[test]
    fn mixed_numbers_and_text_are_named() {
        for out in [
            "TypeError: unsupported operand type(s) for +=: 'int' and 'str'",
            "TypeError: unsupported operand type(s) for +: 'str' and 'float'",
            "TypeError: can only concatenate str (not \"int\") to str",
        ] {
            assert_eq!(kind(out), Some("text-arithmetic"), "{out}");
        }
        assert_eq!(
            kind("TypeError: '>' not supported between instances of 'str' and 'int'"),
            Some("text-compare")
        );
        assert_eq!(
            kind("AttributeError: 'float' object has no attribute 'strip'"),
            Some("number-not-text")
        );
        // Two other types: no hint about text.
        assert_eq!(
            kind("TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'"),
            None
        );
        // Unpacking a line without its separator.
        let unpack = "ValueError: not enough values to unpack (expected 2, got 1)";
        assert_eq!(kind(unpack), Some("unpack"));
        assert!(note(unpack).contains("line.split('=', 1)"));
        // With the traceback's line: the separator that line splits at,
        // and for a comma the CSV reader.
        let at_comma = "Traceback (most recent call last):\n  File \"/w/sum_sales.py\", line 6, in <module>\n    region, amount = line.split(\",\")\n    ^^^^^^^^^^^^^^\nValueError: not enough values to unpack (expected 2, got 1)\n[exit code 1]\n";
        assert_eq!(kind(at_comma), Some("unpack"));
        let text = note(at_comma);
        assert!(
            text.contains("failed at `region, amount = line.split(\",\")`"),
            "{text}"
        );
        assert!(
            text.contains("\",\" not in line") && text.contains("line.split(\",\", 1)"),
            "{text}"
        );
        assert!(!text.contains("'='"), "{text}");
        assert!(text.contains("csv.reader(f)"), "{text}");
        let at_colon = "    key, value = line.strip().split(':')\nValueError: not enough values to unpack (expected 2, got 1)\n";
        let text = note(at_colon);
        assert!(
            text.contains("':' not in line") && !text.contains("csv.reader"),
            "{text}"
        );
        // Split at whitespace: the parts are counted, no separator named.
        let at_space = "    name, size = line.split()\nValueError: not enough values to unpack (expected 2, got 0)\n";
        let text = note(at_space);
        assert!(
            text.contains("if len(parts) < 2: continue") && !text.contains("not in line"),
            "{text}"
        );
        // Sorting values some of which are missing.
        for out in [
            "TypeError: '<' not supported between instances of 'NoneType' and 'str'",
            "TypeError: '>' not supported between instances of 'float' and 'NoneType'",
        ] {
            assert_eq!(kind(out), Some("none-compare"), "{out}");
            assert!(note(out).contains("if v is not None"), "{out}");
        }
    }

    #[test]
    fn conversions_say_what_the_value_holds() {
        // A whole column formatted as one number.
        let series = "TypeError: unsupported format string passed to Series.__format__";
        assert_eq!(kind(series), Some("series-format"));
        assert!(note(series).contains("`(df['qty'] * df['price']).sum()`"));
        // A number among the values joined.
        let join = "TypeError: sequence item 1: expected str instance, float found";
        assert_eq!(kind(join), Some("join-text"));
        assert!(note(join).contains("`' | '.join(str(v) for v in row)`"));
        let decimal = "ValueError: invalid literal for int() with base 10: '7.5'";
        assert_eq!(kind(decimal), Some("decimal"));
        assert!(note(decimal).contains("`7.5`"));
        assert_eq!(
            kind("ValueError: could not convert string to float: '$1,200.50'"),
            Some("written-number")
        );
        assert_eq!(
            kind("ValueError: Unable to parse string \"1,204,331\" at position 1"),
            Some("written-number")
        );
        assert_eq!(
            kind("ValueError: could not convert string to float: '3,50'"),
            Some("decimal-comma")
        );
        assert_eq!(
            kind("ValueError: could not convert string to float: '1,204'"),
            Some("written-number")
        );
        assert_eq!(
            kind("ValueError: could not convert string to float: ''"),
            Some("empty-value")
        );
        assert_eq!(
            kind("ValueError: could not convert string to float: 'N/A'"),
            Some("missing-mark")
        );
        // Half of a quoted field, cut at its comma: `csv.reader`.
        let cut = "ValueError: could not convert string to float: '\"1'";
        assert_eq!(kind(cut), Some("split-quoted"));
        assert!(note(cut).contains("csv.reader(f)"), "{}", note(cut));
        assert_eq!(
            kind("ValueError: could not convert string to float: '250.00\"'"),
            Some("split-quoted")
        );
        // A number with its unit: taken apart, scaled by the unit.
        let unit = "ValueError: could not convert string to float: '120ms'";
        assert_eq!(kind(unit), Some("unit"));
        assert!(note(unit).contains("(`ms`)"), "{}", note(unit));
        assert_eq!(
            kind("ValueError: could not convert string to float: '45 %'"),
            Some("unit")
        );
        assert_ne!(
            kind("ValueError: could not convert string to float: '3e5x'"),
            Some("unit")
        );
        assert_eq!(
            kind("TypeError: Cannot perform reduction 'mean' with string dtype"),
            Some("text-column")
        );
        assert_eq!(
            kind("TypeError: can't multiply sequence by non-int of type 'float'"),
            Some("text-arithmetic")
        );
        // A word (a header, a label): the header note's business, not this.
        assert_eq!(
            kind("ValueError: could not convert string to float: 'amount'"),
            None
        );
    }

    #[test]
    fn indexing_a_split_line_with_too_few_fields_is_explained() {
        let output = "Traceback (most recent call last):\n  File \"<cell-1>\", line 10, in <module>\n    failed = [l for l in lines if l.split()[2] == 'FAILED']\n                                  ~~~~~~~~~~^^^\nIndexError: list index out of range\n";
        let found = hint(output, Path::new(".")).expect("a hint");
        assert_eq!(found.kind, "split-index");
        assert_eq!(
            found.note,
            "[oi: a line with fewer fields than the code indexes (a blank line, a title, a note) failed at `failed = [l for l in lines if l.split()[2] == 'FAILED']`: split each line once (`fields = …`), skip the lines with too few (`if len(fields) < N: continue`), and split them the way the first look says when it says how.]"
        );
        // Another list indexed out of range, or another error: not this.
        let other = "Traceback (most recent call last):\n    x = items[5]\nIndexError: list index out of range\n";
        assert_ne!(
            hint(other, Path::new(".")).map(|h| h.kind),
            Some("split-index")
        );
        let later = output.replace("IndexError: list index out of range", "KeyError: 'x'");
        assert_ne!(
            hint(&later, Path::new(".")).map(|h| h.kind),
            Some("split-index")
        );
    }

    #[test]
    fn a_name_a_standard_import_defines_is_found_with_its_import() {
        let out = "Traceback (most recent call last):\n  File \"<cell-1>\", line 4, in <module>\n    w = csv.writer(f)\nNameError: name 'csv' is not defined. Did you mean: 'abs'?\n[exit code 1]";
        let code = "w = csv.writer(f)\n";
        assert_eq!(missing_import(out, code), Some(("csv", "import csv")));
        assert_eq!(
            missing_import("NameError: name 'Counter' is not defined\n", "Counter(w)"),
            Some(("Counter", "from collections import Counter"))
        );
        // `datetime` as the class, or as the module.
        let undated = "NameError: name 'datetime' is not defined\n";
        let class = Some(("datetime", "from datetime import datetime"));
        assert_eq!(
            missing_import(undated, "d = datetime.strptime(s, '%Y')\n"),
            class
        );
        assert_eq!(
            missing_import(undated, "d = datetime.datetime.now()\n"),
            Some(("datetime", "import datetime"))
        );
        // The model's own names, and errors that are no NameError.
        assert_eq!(
            missing_import("NameError: name 'totals' is not defined\n", code),
            None
        );
        assert_eq!(missing_import("KeyError: 'csv'\n[exit code 1]", code), None);
        // Only the error the run ended with.
        assert_eq!(
            missing_import(
                "NameError: name 'csv' is not defined\nthen it was fixed\n",
                code
            ),
            None
        );
    }

    #[test]
    fn dates_json_lines_and_imports() {
        assert_eq!(
            kind(
                "ValueError: time data \"03/02/2026\" doesn't match format \"%Y-%m-%d\", at position 1. You might want to try:"
            ),
            Some("dates")
        );
        assert_eq!(
            kind("json.decoder.JSONDecodeError: Extra data: line 2 column 1 (char 52)"),
            Some("json-lines")
        );
        assert_eq!(kind("NameError: name 'pd' is not defined"), Some("import"));
        assert!(note("NameError: name 'pd' is not defined").contains("`import pandas as pd`"));
        assert_eq!(
            kind("ValueError: Specified a sep and a delimiter; you can only specify one."),
            Some("sep")
        );
        // A name of the model's own: nothing to import.
        assert_eq!(kind("NameError: name 'totals' is not defined"), None);
        assert_eq!(
            kind("TypeError: Object of type int64 is not JSON serializable"),
            Some("json-type")
        );
        assert_eq!(
            kind("TypeError: string indices must be integers"),
            Some("shape")
        );
        // Text summed before it was converted.
        assert_eq!(
            kind("ValueError: Unable to parse string \"35.2012.80\" at position 0"),
            Some("joined-numbers")
        );
        assert_eq!(
            kind("ValueError: could not convert string to float: '$35.20$12.80'"),
            Some("joined-numbers")
        );
        assert_eq!(
            kind("ValueError: could not convert string to float: '10.505.254.75'"),
            Some("joined-numbers")
        );
        // A version, a date or an address with points is not a sum; one
        // written number is another hint.
        for value in ["1.2.3", "01.02.2026", "2026.10.01", "10.0.0.1"] {
            assert_ne!(
                kind(&format!(
                    "ValueError: could not convert string to float: '{value}'"
                )),
                Some("joined-numbers"),
                "{value}"
            );
        }
        assert_eq!(
            kind("ValueError: could not convert string to float: '$1,200.50'"),
            Some("written-number")
        );
        // A `csv.reader` row indexed by a column's name.
        assert_eq!(
            kind("TypeError: list indices must be integers or slices, not str"),
            Some("row-by-name")
        );
        assert!(
            note("TypeError: list indices must be integers or slices, not str")
                .contains("`i = header.index(name)`")
        );
        assert_eq!(
            kind("TypeError: list indices must be integers or slices, not tuple"),
            None
        );
    }

    #[test]
    fn the_last_error_counts_and_plain_output_has_none() {
        let out = "AttributeError: 'Series' object has no attribute 'lower'\nduring handling:\nValueError: invalid literal for int() with base 10: '3.0'\n[error: ValueError]";
        assert_eq!(kind(out), Some("decimal"));
        assert_eq!(kind("total: 42\nall good\n"), None);
        assert_eq!(kind("the word Error: appears in data"), None);
    }

    #[test]
    fn a_rename_onto_itself_is_explained() {
        assert_eq!(
            kind("mv: 'photos/a.jpg' and 'photos/a.jpg' are the same file\n[exit code 1]"),
            Some("same-file")
        );
    }

    #[test]
    fn a_file_name_used_as_a_shell_variable_is_explained() {
        for out in [
            "bash: line 1: largest.txt=20K: command not found\n[exit code 127]",
            "Not run: this code looks risky — runs a command whose name is only known when it runs (`largest.txt=$__oi_output`) — so it needs the user's approval",
        ] {
            assert_eq!(kind(out), Some("dotted-variable"), "{out}");
            assert!(
                note(out).contains("redirect it: `command > largest.txt`"),
                "{out}"
            );
        }
        for out in [
            "bash: line 1: foo: command not found\n[exit code 127]",
            "bash: line 1: x=1: command not found",
            "runs a command whose name is only known when it runs (`$cmd`)",
        ] {
            assert_eq!(kind(out), None, "{out}");
        }
    }

    #[test]
    fn a_missing_file_lists_the_folder() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs_err::write(dir.path().join("sales.csv"), "a\n1\n").expect("write");
        fs_err::create_dir(dir.path().join("photos")).expect("mkdir");
        let out = "FileNotFoundError: [Errno 2] No such file or directory: '/path/to/sales.csv'";
        let python = hint(out, dir.path()).expect("a hint");
        assert_eq!(python.kind, "missing-file");
        assert!(
            python.note.contains("`photos/`, `sales.csv`"),
            "{}",
            python.note
        );
        assert!(python.note.contains("`/path/to/sales.csv` does not exist"));
        let shell = hint("cat: data.csv: No such file or directory", dir.path()).expect("a hint");
        assert!(
            shell.note.contains("`data.csv` does not exist"),
            "{}",
            shell.note
        );
        let ls = hint(
            "ls: cannot access 'data/': No such file or directory",
            dir.path(),
        )
        .expect("a hint");
        assert!(ls.note.contains("`data/` does not exist"), "{}", ls.note);
        // The file is there (made since): no hint.
        assert_eq!(
            kind_in("cat: sales.csv: No such file or directory", dir.path()),
            None
        );
    }

    #[test]
    fn a_program_stopping_at_its_usage_line_wants_arguments() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs_err::write(dir.path().join("sample.txt"), "a b\n").expect("write");
        let out = "saved wordfreq.py\nUsage: python wordfreq.py <filename>\n[exit code 1]";
        let usage = hint(out, dir.path()).expect("a hint");
        assert_eq!(usage.kind, "usage");
        assert!(
            usage
                .note
                .contains("(`python wordfreq.py <filename>`): it needs arguments")
                && usage.note.contains("holds `sample.txt`"),
            "{}",
            usage.note
        );
        // argparse's two lines: its usage line counts.
        let argparse = "usage: wc.py [-h] file\nwc.py: error: the following arguments are required: file\n[exit code 2]";
        assert_eq!(kind_in(argparse, dir.path()), Some("usage"));
        // A usage line printed by a run that worked (help asked for).
        assert_eq!(kind_in("usage: wc.py [-h] file\n", dir.path()), None);
        assert_eq!(
            kind("NameError: name 'string' is not defined"),
            Some("import")
        );
    }

    fn kind_in(output: &str, cwd: &Path) -> Option<&'static str> {
        hint(output, cwd).map(|h| h.kind)
    }

    #[test]
    fn an_fstrings_quotes_and_a_number_joined_to_text_name_their_line_change() {
        let fix = |out: &str| hint(out, Path::new("/nonexistent-folder")).and_then(|h| h.fix);
        let refused = "  File \"<cell-1>\", line 2\n    print(f\"Name: {row[\"name\"]}\")\n                        ^^^^\nSyntaxError: f-string: unmatched '['\n[exit code 1]";
        assert_eq!(kind(refused), Some("fstring-fields"));
        assert_eq!(
            fix(refused),
            Some(LineChange::new(
                "print(f\"Name: {row[\"name\"]}\")",
                "print(f\"Name: {row['name']}\")".to_owned()
            ))
        );
        assert!(
            note(refused).contains("neither the f-string's own quotes nor a backslash"),
            "{}",
            note(refused)
        );
        // A line break in a field is `chr(10)`; another backslash has no
        // change.
        let backslash = "  File \"<cell-1>\", line 1\n    print(f\"{'\\n'.join(xs)}\")\n                        ^\nSyntaxError: f-string expression part cannot include a backslash\n[exit code 1]";
        assert_eq!(
            fix(backslash).map(|f| f.fixed),
            Some("print(f\"{chr(10).join(xs)}\")".to_owned())
        );
        let other = backslash.replace("'\\n'", "'\\\\'");
        assert!(other.contains("{'\\\\'.join"), "{other}");
        assert_eq!(fix(&other), None);
        let joined = "Traceback (most recent call last):\n  File \"<cell-2>\", line 3, in <module>\n    print(\"Files: \" + len(files))\n          ~~~~~~~~~~^~~~~~~~~~~~\nTypeError: can only concatenate str (not \"int\") to str\n[exit code 1]";
        assert_eq!(kind(joined), Some("text-concat"));
        assert_eq!(
            fix(joined),
            Some(LineChange::new(
                "print(\"Files: \" + len(files))",
                "print(\"Files: \" + str(len(files)))".to_owned()
            ))
        );
        let reversed = "Traceback (most recent call last):\n  File \"<cell-2>\", line 1, in <module>\n    label = count + \" files\"\nTypeError: unsupported operand type(s) for +: 'int' and 'str'\n[exit code 1]";
        assert_eq!(
            fix(reversed).map(|f| f.fixed),
            Some("label = str(count) + \" files\"".to_owned())
        );
        // Text read from a file that was meant as a number: no literal in
        // the sum, so the hint is the one about converting, with no change.
        let sum = "Traceback (most recent call last):\n  File \"<cell-2>\", line 4, in <module>\n    total = row['amount'] + 5\nTypeError: can only concatenate str (not \"int\") to str\n[exit code 1]";
        assert_eq!(kind(sum), Some("text-arithmetic"));
        assert_eq!(fix(sum), None);
    }

    #[test]
    fn a_made_up_folder_before_a_file_of_the_working_folder_is_taken_out_of_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(cwd.join("sales.csv"), "region,amount\n").unwrap();
        let fix = |out: &str| hint(out, cwd).and_then(|h| h.fix);
        let out = "Traceback (most recent call last):\n  File \"<cell-1>\", line 2, in <module>\n    df = pd.read_csv('/path/to/sales.csv')\n         ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n  File \"/usr/lib/python3/dist-packages/pandas/io/parsers/readers.py\", line 912, in read_csv\n    return _read(filepath_or_buffer, kwds)\n           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\nFileNotFoundError: [Errno 2] No such file or directory: '/path/to/sales.csv'\n[exit code 1]";
        assert_eq!(kind_in(out, cwd), Some("made-up-path"));
        assert_eq!(
            fix(out),
            Some(LineChange::new(
                "df = pd.read_csv('/path/to/sales.csv')",
                "df = pd.read_csv('sales.csv')".to_owned()
            ))
        );
        // A file the folder does not hold keeps the note with its names.
        let other = out.replace("sales.csv", "orders.csv");
        assert_eq!(kind_in(&other, cwd), Some("missing-file"));
        assert_eq!(fix(&other), None);
        // A path built in code (not written whole on the line) is not
        // changed.
        let built = out.replace(
            "df = pd.read_csv('/path/to/sales.csv')",
            "df = pd.read_csv(os.path.join(base, 'sales.csv'))",
        );
        assert_eq!(fix(&built), None);
    }
}
