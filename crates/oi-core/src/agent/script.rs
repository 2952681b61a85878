//! The script a result was made by. A small model whose first block fails
//! half-way goes on in pieces: each later block changes a variable the
//! failed one left (`net_sales.to_csv(…)`, `net_sales = net_sales.groupby(…)`),
//! and when the result is wrong it is told to fix "the code" — a one-line
//! block that only writes what earlier blocks computed. It then changes that
//! line over and over while the wrong step stays where it cannot see it,
//! and each change works on what the last one left. Shown the block that
//! wrote the result together with the earlier code it builds on, as one
//! script that runs from the start, it can change the step that is wrong,
//! and what runs no longer depends on what earlier runs left.
//!
//! What each Python run ran is kept (a failed block: its statements before
//! the one that failed). The script of a block is the earlier runs that
//! set a name it uses before setting it, and theirs in turn, back to the
//! run that sets each name from nothing (`df = pd.read_csv(…)`).

use std::collections::BTreeSet;

/// Methods that change the object they are called on.
const CHANGING: &[&str] = &[
    "append",
    "extend",
    "insert",
    "update",
    "pop",
    "remove",
    "clear",
    "add",
    "discard",
    "setdefault",
    "sort",
    "reverse",
    "rename_axis",
];

/// The Python runs of a task, each as much of its code as ran.
#[derive(Debug, Default)]
pub(super) struct Runs {
    ran: Vec<String>,
}

impl Runs {
    /// A Python block ran with this `output`: what of it ran is kept.
    /// A run of which nothing ran is kept (empty) all the same: it is
    /// still the last run.
    pub(super) fn saw(&mut self, code: &str, output: &str) {
        self.ran.push(ran_part(code, output));
    }

    /// Whether no run was kept.
    #[cfg(test)]
    pub(super) fn is_empty(&self) -> bool {
        self.ran.is_empty()
    }

    /// The last run's `code` (as written) with the earlier runs it builds
    /// on before it, as one script without comments or blank lines; `None`
    /// when it builds on none.
    pub(super) fn script_of_last(&self, code: &str) -> Option<String> {
        let (_, earlier) = self.ran.split_last()?;
        let mut needed = Block::of(code).needs;
        let mut kept = Vec::new();
        for block in earlier.iter().rev() {
            if needed.is_empty() {
                break;
            }
            let parts = Block::of(block);
            if parts.sets.is_disjoint(&needed) {
                continue;
            }
            kept.push(block.as_str());
            needed.retain(|name| !parts.fresh.contains(name));
            needed.extend(parts.needs);
        }
        if kept.is_empty() {
            return None;
        }
        let lines: Vec<&str> = kept
            .iter()
            .rev()
            .chain(std::iter::once(&code))
            .flat_map(|block| block.lines())
            .filter(|line| super::splice::is_significant(line))
            .collect();
        Some(lines.join("\n"))
    }
}

/// What of Python `code` ran, given its `output`: all of it, or, when a
/// traceback names a line of it, the statements before the top-level one
/// holding that line; nothing when it did not parse.
fn ran_part(code: &str, output: &str) -> String {
    if output.contains("SyntaxError:") || output.contains("IndentationError:") {
        return String::new();
    }
    let Some(line) = super::splice::failed_line(output) else {
        if output.contains("Traceback (most recent call last)") {
            return String::new();
        }
        return code.to_owned();
    };
    let lines: Vec<&str> = code.lines().collect();
    if lines.is_empty() {
        return String::new();
    }
    let last = line.min(lines.len()).saturating_sub(1);
    let start = (0..=last)
        .rev()
        .find(|&i| super::splice::is_significant(lines[i]) && !lines[i].starts_with([' ', '\t']))
        .unwrap_or(0);
    lines[..start].join("\n")
}

/// The names a block of Python uses and sets.
#[derive(Debug, Default)]
struct Block {
    /// Names read before the block sets them (it needs an earlier value).
    needs: BTreeSet<String>,
    /// Names it sets or changes.
    sets: BTreeSet<String>,
    /// Names it sets from nothing before reading them (`df = …`, an
    /// import, a `def`): earlier values of these are not needed.
    fresh: BTreeSet<String>,
}

impl Block {
    fn of(code: &str) -> Self {
        let mut block = Self::default();
        for line in code.lines() {
            let line = line.trim();
            if !super::splice::is_significant(line) {
                continue;
            }
            let (used, set, fresh) = statement(line);
            for name in used {
                if !block.sets.contains(&name) {
                    block.needs.insert(name);
                }
            }
            for name in fresh {
                if !block.needs.contains(&name) && !block.sets.contains(&name) {
                    block.fresh.insert(name.clone());
                }
                block.sets.insert(name);
            }
            block.sets.extend(set);
        }
        block
    }
}

/// The names a Python statement (one trimmed line) reads, changes, and
/// sets from nothing.
fn statement(line: &str) -> (Vec<String>, Vec<String>, Vec<String>) {
    if let Some(rest) = line.strip_prefix("import ") {
        let names = rest
            .split(',')
            .filter_map(|part| {
                let part = part.trim();
                let name = match part.split_once(" as ") {
                    Some((_, alias)) => alias.trim(),
                    None => part.split('.').next().unwrap_or(part),
                };
                is_name(name).then(|| name.to_owned())
            })
            .collect();
        return (Vec::new(), Vec::new(), names);
    }
    if line.starts_with("from ")
        && let Some((_, imported)) = line.split_once(" import ")
    {
        let names = imported
            .trim_matches(|c: char| c == '(' || c == ')' || c.is_whitespace())
            .split(',')
            .filter_map(|part| {
                let part = part.trim();
                let name = part.split_once(" as ").map_or(part, |(_, a)| a.trim());
                is_name(name).then(|| name.to_owned())
            })
            .collect();
        return (Vec::new(), Vec::new(), names);
    }
    for keyword in ["def ", "class "] {
        if let Some(rest) = line.strip_prefix(keyword) {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            return (Vec::new(), Vec::new(), vec![name]);
        }
    }
    if let Some((target, op, value)) = super::splice::assignment(line) {
        let mut used = names(value);
        let mut set = Vec::new();
        let mut fresh = Vec::new();
        for part in target.split(',') {
            let base: String = part
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !is_name(&base) {
                continue;
            }
            if base == part && op.is_empty() {
                fresh.push(base);
            } else {
                // `df['m'] = …`, `total += …`: the earlier value is kept.
                used.extend(names(part));
                set.push(base);
            }
        }
        return (used, set, fresh);
    }
    let used = names(line);
    let changed = changed_object(line).into_iter().collect();
    (used, changed, Vec::new())
}

/// The object a statement that is a call changes: `rows` in
/// `rows.append(x)`, `df` in `df.drop(columns=['x'], inplace=True)`.
fn changed_object(line: &str) -> Option<String> {
    let (object, rest) = line.split_once('.')?;
    if !is_name(object) {
        return None;
    }
    let method: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    let calls = rest[method.len()..].starts_with('(');
    (calls && (CHANGING.contains(&method.as_str()) || line.contains("inplace=True")))
        .then(|| object.to_owned())
}

/// In Python `code`, the first name a loop's body sets at each step
/// (`action = pairs['action']` under `for line in lines:`) that no line of
/// the code reads: the value the code went to get and then left out (which
/// lines are logins and which logouts). With that line, trimmed. Not a
/// name set under `try:` (a conversion that only tests a value), nor one
/// in capitals or starting with `_`, nor any in code that reads its names
/// by text (`locals()`, `vars()`, `eval`).
pub(super) fn unread_in_loop(code: &str) -> Option<(String, String)> {
    if ["locals()", "vars()", "eval(", "exec(", "globals()"]
        .iter()
        .any(|call| code.contains(call))
    {
        return None;
    }
    // Lines as code: those inside a triple-quoted string are text.
    let mut lines = Vec::new();
    let mut in_text = false;
    for line in code.lines() {
        let toggles = line.matches("\"\"\"").count() + line.matches("'''").count();
        if !in_text && super::splice::is_significant(line) {
            lines.push(line);
        }
        in_text ^= toggles % 2 == 1;
    }
    let mut read = BTreeSet::new();
    for line in &lines {
        let (used, changed, _) = statement(line.trim());
        read.extend(used);
        read.extend(changed);
    }
    // The blocks open around each line: their header (trimmed) by indent.
    let mut open: Vec<(usize, &str)> = Vec::new();
    for line in lines {
        let trimmed = line.trim();
        let indent = super::splice::indent(line).len();
        while open.last().is_some_and(|&(at, _)| at >= indent) {
            open.pop();
        }
        if trimmed.ends_with(':') {
            open.push((indent, trimmed));
            continue;
        }
        let in_loop = open
            .iter()
            .any(|(_, header)| super::splice::opens_loop(header));
        if !in_loop || open.last().is_some_and(|&(_, header)| header == "try:") {
            continue;
        }
        let Some((target, op, _)) = super::splice::assignment(trimmed) else {
            continue;
        };
        let plain = op.is_empty()
            && is_name(&target)
            && !target.starts_with('_')
            && target.chars().any(|c| c.is_lowercase());
        if plain && !read.contains(&target) {
            return Some((target, trimmed.to_owned()));
        }
    }
    None
}

/// Whether `text` is a plain Python name.
pub(super) fn is_name(text: &str) -> bool {
    text.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// The names Python code reads: its identifiers outside strings and
/// comments, not an attribute (`.str`) nor a keyword argument's name
/// (`index=` in a call).
fn names(code: &str) -> Vec<String> {
    const KEYWORDS: &[&str] = &[
        "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
        "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is",
        "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with",
        "yield", "True", "False", "None",
    ];
    let chars: Vec<char> = code.chars().collect();
    let mut found = Vec::new();
    let mut depth = 0i32;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '#' => break,
            '\'' | '"' => i = string_end(&chars, i),
            '(' | '[' | '{' => {
                depth += 1;
                i += 1;
            }
            ')' | ']' | '}' => {
                depth -= 1;
                i += 1;
            }
            c if c.is_alphabetic() || c == '_' => {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                // A string's prefix (`f'…'`): an f-string reads the
                // names in its braces.
                if i < chars.len() && matches!(chars[i], '\'' | '"') && word.len() <= 2 {
                    let end = string_end(&chars, i);
                    if word.contains(['f', 'F']) {
                        found.extend(replaced_names(&chars[i..end]));
                    }
                    i = end;
                    continue;
                }
                let attribute = start > 0 && chars[start - 1] == '.';
                let mut next = i;
                while next < chars.len() && chars[next] == ' ' {
                    next += 1;
                }
                let keyword_argument =
                    depth > 0 && chars.get(next) == Some(&'=') && chars.get(next + 1) != Some(&'=');
                if !attribute && !keyword_argument && !KEYWORDS.contains(&word.as_str()) {
                    found.push(word);
                }
            }
            _ => i += 1,
        }
    }
    found
}

/// The names the fields of an f-string's text read (`total` in
/// `'{total:.2f}'`), not its format specs.
fn replaced_names(text: &[char]) -> Vec<String> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < text.len() {
        if text[i] != '{' {
            i += 1;
            continue;
        }
        if text.get(i + 1) == Some(&'{') {
            i += 2;
            continue;
        }
        let start = i + 1;
        let mut depth = 0;
        let mut end = start;
        while end < text.len() {
            match text[end] {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' => depth -= 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ':' if depth == 0 => break,
                '!' if depth == 0 && text.get(end + 1) != Some(&'=') => break,
                _ => {}
            }
            end += 1;
        }
        let field: String = text[start..end].iter().collect();
        found.extend(names(&field));
        // Past the field's closing brace.
        i = end;
        while i < text.len() && text[i] != '}' {
            i += 1;
        }
        i += 1;
    }
    found
}

/// Where the string starting at the quote `chars[at]` ends (just after
/// its closing quote, or the end of the line).
fn string_end(chars: &[char], at: usize) -> usize {
    let quote = chars[at];
    let triple = chars.get(at + 1) == Some(&quote) && chars.get(at + 2) == Some(&quote);
    let mut i = at + if triple { 3 } else { 1 };
    while i < chars.len() {
        if chars[i] == '\\' {
            i += 2;
            continue;
        }
        if chars[i] == quote
            && (!triple || (chars.get(i + 1) == Some(&quote) && chars.get(i + 2) == Some(&quote)))
        {
            return i + if triple { 3 } else { 1 };
        }
        i += 1;
    }
    chars.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIRST: &str = "import pandas as pd\n\n# Read it\ndf = pd.read_csv('transactions.csv', skipinitialspace=True)\ndf['type'] = df['type'].str.strip().str.lower()\nnet_sales = df.groupby('timestamp').sum().reset_index()\nnet_sales.columns = ['timestamp', 'net']\nnet_sales = net_sales.sort_values('timestamp')\nnet_sales.to_csv('net_by_month.csv', index=False)\n";

    fn traceback(line: usize) -> String {
        format!(
            "Traceback (most recent call last):\n  File \"<cell-1>\", line {line}, in <module>\n    x\nValueError: Length mismatch\n"
        )
    }

    #[test]
    fn a_value_a_loop_sets_and_nothing_reads_is_found() {
        let sessions = "import re\npairs = {}\nfor line in open('app.log'):\n    fields = line.split()\n    if fields[2] == 'INFO':\n        user = fields[3].split('=')[1]\n        action = fields[4].split('=')[1]\n        if user not in pairs:\n            pairs[user] = fields[1]\nprint(pairs)\n";
        assert_eq!(
            unread_in_loop(sessions),
            Some((
                "action".to_owned(),
                "action = fields[4].split('=')[1]".to_owned()
            ))
        );
        // Read anywhere (in the loop, after it, in an f-string, by a
        // method call): nothing.
        let read = sessions.replace("print(pairs)", "print(pairs, action)");
        assert_eq!(unread_in_loop(&read), None);
        let formatted = sessions.replace("print(pairs)", "print(f'{action}')");
        assert_eq!(unread_in_loop(&formatted), None);
        let called = "for x in xs:\n    found = []\n    found.append(x)\n";
        assert_eq!(unread_in_loop(called), None);
        // Not in a loop (a later block may read it), under `try:` (a
        // conversion that tests a value), in capitals, `_`, in a string,
        // or code that reads names by text.
        assert_eq!(
            unread_in_loop("with open('a') as f:\n    lines = f.read()\n"),
            None
        );
        let tested = "for v in values:\n    try:\n        n = float(v)\n    except ValueError:\n        continue\n    ok.append(v)\n";
        assert_eq!(unread_in_loop(tested), None);
        assert_eq!(
            unread_in_loop("for k in keys:\n    KEY = k\n    _ = k\n"),
            None
        );
        let text = "for k in keys:\n    print(\"\"\"\n    note = 1\n    \"\"\")\n";
        assert_eq!(unread_in_loop(text), None);
        let by_text = "for k in keys:\n    value = k\n    print(locals())\n";
        assert_eq!(unread_in_loop(by_text), None);
        // A loop that ends: the lines after it are not in it.
        let after = "for k in keys:\n    print(k)\nlast = 1\n";
        assert_eq!(unread_in_loop(after), None);
        let with = "async with lock:\n    value = 1\n";
        assert_eq!(unread_in_loop(with), None);
        let async_for = "async for k in keys:\n    value = k\n";
        assert_eq!(
            unread_in_loop(async_for).map(|(name, _)| name).as_deref(),
            Some("value")
        );
        let nested =
            "while True:\n    if done:\n        break\n    else:\n        step = next(it)\n";
        assert_eq!(
            unread_in_loop(nested).map(|(name, _)| name).as_deref(),
            Some("step")
        );
    }

    #[test]
    fn a_failed_block_ran_up_to_the_statement_that_failed() {
        assert_eq!(
            ran_part(FIRST, &traceback(7)),
            "import pandas as pd\n\n# Read it\ndf = pd.read_csv('transactions.csv', skipinitialspace=True)\ndf['type'] = df['type'].str.strip().str.lower()\nnet_sales = df.groupby('timestamp').sum().reset_index()"
        );
        // A line inside a loop: the loop did not run whole.
        let looped = "total = 0\nfor row in rows:\n    total += float(row[2])\nprint(total)";
        assert_eq!(ran_part(looped, &traceback(3)), "total = 0");
        assert_eq!(ran_part(looped, "12.5\n"), looped);
        assert_eq!(
            ran_part(
                looped,
                "  File \"<cell-1>\", line 2\nSyntaxError: invalid syntax"
            ),
            ""
        );
    }

    #[test]
    fn a_traceback_naming_a_line_of_no_code_means_nothing_ran() {
        assert_eq!(ran_part("", &traceback(3)), "");
    }

    #[test]
    fn a_block_that_writes_what_earlier_runs_computed_gets_them_before_it() {
        let mut runs = Runs::default();
        runs.saw(FIRST, &traceback(7));
        runs.saw(
            "print(df.columns)",
            "Index(['id', 'timestamp', 'type', 'amount'])\n",
        );
        let writer = "net_sales.to_csv('net_by_month.csv', index=False)";
        runs.saw(writer, "");
        assert_eq!(
            runs.script_of_last(writer).as_deref(),
            Some(
                "import pandas as pd\ndf = pd.read_csv('transactions.csv', skipinitialspace=True)\ndf['type'] = df['type'].str.strip().str.lower()\nnet_sales = df.groupby('timestamp').sum().reset_index()\nnet_sales.to_csv('net_by_month.csv', index=False)"
            )
        );
        // A later change of the same table comes in too, after the first.
        let change = "net_sales['timestamp'] = net_sales['timestamp'].str[:7]";
        runs.saw(change, "");
        let again = "net_sales.to_csv('net_by_month.csv', index=False, float_format='%.2f')";
        runs.saw(again, "");
        let script = runs.script_of_last(again).unwrap();
        assert!(script.ends_with(&format!("{change}\n{again}")), "{script}");
        assert_eq!(script.matches("read_csv").count(), 1, "{script}");
    }

    #[test]
    fn a_block_that_stands_alone_has_no_script() {
        let mut runs = Runs::default();
        runs.saw("import pandas as pd\ndf = pd.read_csv('a.csv')", "");
        let whole =
            "import pandas as pd\ndf = pd.read_csv('a.csv')\ndf.to_csv('b.csv', index=False)";
        runs.saw(whole, "");
        assert_eq!(runs.script_of_last(whole), None);
        // Names in strings, attributes and keyword arguments are not read.
        let written = "with open('df.txt', 'w') as f:\n    f.write(str(len('df')))";
        runs.saw(written, "");
        assert_eq!(runs.script_of_last(written), None);
        let mut first = Runs::default();
        first.saw("x.to_csv('b.csv', index=False)", "");
        assert_eq!(first.script_of_last("x.to_csv('b.csv', index=False)"), None);
    }

    #[test]
    fn a_run_that_set_a_name_afresh_ends_the_search() {
        let mut runs = Runs::default();
        runs.saw("rows = []\nrows.append(1)", "");
        runs.saw("rows = [3]\nrows.append(4)\nindex = 2", "");
        runs.saw("total = sum(rows)", "");
        runs.saw("print(total, file=open('t.txt', 'w'))", "");
        assert_eq!(
            runs.script_of_last("print(total, file=open('t.txt', 'w'))")
                .as_deref(),
            Some(
                "rows = [3]\nrows.append(4)\nindex = 2\ntotal = sum(rows)\nprint(total, file=open('t.txt', 'w'))"
            )
        );
    }

    #[test]
    fn the_names_of_a_statement() {
        assert_eq!(
            statement("df['m'] = df['t'].str[:7]"),
            (
                vec!["df".to_owned(), "df".to_owned()],
                vec!["df".to_owned()],
                vec![]
            )
        );
        assert_eq!(
            statement("import pandas as pd, os.path"),
            (vec![], vec![], vec!["pd".to_owned(), "os".to_owned()])
        );
        assert_eq!(
            statement("from collections import (Counter, defaultdict as dd)"),
            (vec![], vec![], vec!["Counter".to_owned(), "dd".to_owned()])
        );
        assert_eq!(
            statement("df.drop(columns=['x'], inplace=True)").1,
            vec!["df".to_owned()]
        );
        assert_eq!(statement("df.head()").1, Vec::<String>::new());
        assert_eq!(
            names("f.write(f'{total:.2f} {d[\"k\"]!r} {{x}}')"),
            ["f", "total", "d"]
        );
        assert_eq!(
            names("out = f'{a}' + b.c(d=e, key = g) if h == i else r\"x\" # j"),
            ["out", "a", "b", "e", "g", "h", "i"]
        );
    }
}
