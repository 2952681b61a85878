//! A small model answers a failed Python block with the one line it would
//! change (`order_revenue = sum(i['qty'] * float(i['price']) …)`), not the
//! block. Run alone in the kernel, that line computes from whatever state
//! the failure left (the loop's first item) and the rest of the block (the
//! loop, writing the result) never runs; the model then reports a number
//! it never computed. Put into the failed block in place of the line it
//! changes (or before the line that failed, when it prepares a value), the
//! block runs whole, as the model meant. Only short fragments of simple
//! statements (assignments, imports, a changed call) are put in; anything
//! else runs as the model wrote it. The changed block is what is shown and
//! approved before it runs.

use crate::harness::{Action, ProposedRun, Report};

/// The kernel language fragments are put into blocks of.
const PYTHON: &str = "python";
/// Statements a fragment has, at most.
const FRAGMENT: usize = 3;
/// Statements a block needs, at least, for a fragment to be put in it.
const BLOCK: usize = 4;

/// The last Python block that failed with a traceback in its own lines.
#[derive(Debug, Default)]
pub(super) struct Splicer {
    failed: Option<Failed>,
    /// The last fragment put into a block (trimmed). Sent again, it is
    /// run as written: put in once more, it would change the block it is
    /// already in (a line put before the failed one again), so the model
    /// sending one fragment over and over would run a new block each time,
    /// and the loop guard, which compares what runs, would never see the
    /// repeat.
    spliced: Option<String>,
}

#[derive(Debug, Clone)]
struct Failed {
    code: String,
    /// The line (1-based) the traceback last points at in the block.
    line: usize,
}

impl Splicer {
    /// After a batch: the Python block that failed with a traceback into
    /// its own lines, if the batch's last failure is one (by the language
    /// it ran in, which its report names). A fragment too short to put a
    /// fix into that failed too (`float(item['qty'])`, run alone) leaves
    /// the block before it as the one to fix; a batch that failed no such
    /// way clears it.
    pub(super) fn saw(&mut self, runs: &[Option<ProposedRun>], reports: &[Report]) {
        let failed = runs.iter().zip(reports).rev().find_map(|(run, report)| {
            let run = run.as_ref().filter(|_| report.language == PYTHON)?;
            let line = failed_line(&report.text)?;
            (line <= run.code.lines().count()).then(|| Failed {
                code: run.code.clone(),
                line,
            })
        });
        let fragment = failed
            .as_ref()
            .is_some_and(|f| f.code.lines().filter(|l| is_significant(l)).count() < BLOCK);
        if !(fragment && self.failed.is_some()) {
            self.failed = failed;
        }
    }

    /// The actions of the next reply, with a fragment that changes the
    /// failed block put into it (when the reply is one such fragment that
    /// `runs_as` says runs in Python), and what changed ("line 15
    /// replaced").
    pub(super) fn apply(
        &mut self,
        mut actions: Vec<Action>,
        runs_as: impl Fn(&ProposedRun) -> Option<String>,
    ) -> (Vec<Action>, Option<Vec<String>>) {
        // Only the reply right after the one put in is compared with it.
        let last = self.spliced.take();
        let [Action::Run(run)] = actions.as_mut_slice() else {
            return (actions, None);
        };
        let Some(failed) = self.failed.take() else {
            return (actions, None);
        };
        if runs_as(run).as_deref() != Some(PYTHON) {
            return (actions, None);
        }
        if last.as_deref() == Some(run.code.trim()) {
            // Sent yet again, it still runs as written, so the loop guard
            // sees the repeats.
            self.spliced = last;
            self.failed = Some(failed);
            return (actions, None);
        }
        let Some((code, changes)) = splice(&failed.code, failed.line, &run.code) else {
            // Run as written; if it fails too, the block stays the one
            // to fix.
            self.failed = Some(failed);
            return (actions, None);
        };
        self.spliced = Some(run.code.trim().to_owned());
        run.code = code;
        (actions, Some(changes))
    }
}

/// Whether `line` holds the name `name` as a whole word (not part of a
/// longer name, not an attribute).
pub(super) fn has_name(line: &str, name: &str) -> bool {
    line.match_indices(name).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + name.len()..].chars().next();
        let part = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !part(before) && !part(after) && before != Some('.')
    })
}

/// The line of the code cell a Python traceback last points at
/// (`File "<cell-3>", line 15, in <module>`), in the cell that ran (the
/// first frame's): a function defined by an earlier cell has frames of
/// that cell's lines.
pub(super) fn failed_line(output: &str) -> Option<usize> {
    if !output.contains("Traceback (most recent call last)") {
        return None;
    }
    let frames: Vec<(&str, usize)> = output
        .lines()
        .filter_map(|line| {
            let rest = line.trim().strip_prefix("File \"<cell-")?;
            let (cell, rest) = rest.split_once("\", line ")?;
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            Some((cell, digits.parse().ok().filter(|n| *n > 0)?))
        })
        .collect();
    let (own, _) = frames.first()?;
    frames
        .iter()
        .rev()
        .find(|(cell, _)| cell == own)
        .map(|(_, line)| *line)
}

/// One statement of a fragment.
#[derive(Debug, PartialEq, Eq)]
enum Statement<'a> {
    Import(&'a str),
    /// `target op= value` (`op` empty for a plain `=`).
    Assign {
        line: &'a str,
        target: String,
        op: &'a str,
        value: &'a str,
    },
    /// A call (`df.to_csv(…)`), matched to the failed line by its callee.
    Call {
        line: &'a str,
        callee: &'a str,
    },
}

/// The block `code`, which failed at `failed` (1-based), with `fragment`
/// put in, and what changed; `None` when the fragment is not a few simple
/// statements that change it.
fn splice(code: &str, failed: usize, fragment: &str) -> Option<(String, Vec<String>)> {
    if let Some(guard) = guard(fragment) {
        return splice_guard(code, failed, &guard);
    }
    let statements = fragment_statements(fragment)?;
    let mut lines: Vec<String> = code.lines().map(str::to_owned).collect();
    let significant = lines.iter().filter(|l| is_significant(l)).count();
    if significant < BLOCK || significant <= statements.len() {
        return None;
    }
    let mut at = failed - 1;
    if !can_insert_before(&lines, at) {
        return None;
    }
    let mut changes = Vec::new();
    for statement in statements {
        match statement {
            Statement::Import(line) => {
                if lines.iter().any(|l| l.trim() == line) {
                    continue;
                }
                lines.insert(0, line.to_owned());
                at += 1;
                changes.push("an import put first".to_owned());
            }
            Statement::Assign {
                line,
                target,
                op,
                value,
            } => {
                let same = (0..=at).rev().find(|i| match assignment(lines[*i].trim()) {
                    Some((t, o, _)) => t == target && o == op,
                    None => false,
                });
                let transforms = op.is_empty() && compact(value).contains(&target);
                // The failed line itself, rewritten: its last call made
                // another way (`x = x.str.strip().lower()` → `x =
                // x.str.lower()`), not a step before it.
                let rewrites = |i: usize| {
                    i == at
                        && assignment(lines[i].trim())
                            .is_some_and(|(_, _, old)| last_call(old) == last_call(value))
                };
                match same {
                    Some(i) if !transforms || rewrites(i) => {
                        lines[i] = format!("{}{line}", indent(&lines[i]));
                        changes.push(format!("line {} replaced", i + 1));
                    }
                    _ => {
                        // A value prepared for the failed line, or the
                        // lines after it, is one they use: a line of the
                        // input copied back (`APP_PORT = 9090`) is not.
                        let name: String = target
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        if name.is_empty() || !lines[at..].iter().any(|l| has_name(l, &name)) {
                            return None;
                        }
                        lines.insert(at, format!("{}{line}", indent(&lines[at])));
                        changes.push(format!("a line put before line {}", at + 1));
                        at += 1;
                    }
                }
            }
            Statement::Call { line, callee } => {
                if callee_of(lines[at].trim()) != Some(callee) {
                    return None;
                }
                lines[at] = format!("{}{line}", indent(&lines[at]));
                changes.push(format!("line {} replaced", at + 1));
            }
        }
    }
    let spliced = joined_like(&lines, code);
    (spliced != code && !changes.is_empty()).then_some((spliced, changes))
}

/// A fragment that sets one name each way a test or a `try` can go
/// (`if 'tags' in post['meta']:` / `tags = post['meta']['tags']` /
/// `else:` / `tags = []`): small models answer a `KeyError` with one.
#[derive(Debug, PartialEq, Eq)]
struct Guard {
    /// The name every branch sets.
    target: String,
    /// Its lines, without their common indent.
    lines: Vec<String>,
}

/// Significant lines a guard has, at most.
const GUARD: usize = 8;

/// The fragment as a [`Guard`]: an `if`/`elif`/`else` or `try`/`except`
/// statement, with an `else:` or `except` branch, whose every branch is
/// simple assignments of one name (`=`, no other operator); `None` for
/// anything else.
fn guard(fragment: &str) -> Option<Guard> {
    let significant: Vec<&str> = fragment.lines().filter(|l| is_significant(l)).collect();
    if significant.len() < 4 || significant.len() > GUARD {
        return None;
    }
    let common = significant.iter().map(|l| indent(l).len()).min()?;
    let lines: Vec<&str> = significant
        .iter()
        .map(|l| l.get(common..))
        .collect::<Option<_>>()?;
    let mut target: Option<String> = None;
    let mut otherwise = false;
    let mut body = 0;
    for (i, line) in lines.iter().enumerate() {
        let top = !line.starts_with([' ', '\t']);
        let trimmed = line.trim();
        if top {
            let word = trimmed.split([' ', ':']).next().unwrap_or("");
            let first = i == 0;
            let ok = match word {
                "if" | "try" => first,
                "elif" => !first,
                "else" | "except" => {
                    otherwise = true;
                    !first
                }
                _ => false,
            };
            // Each header has a body before the next one.
            if !ok || !trimmed.ends_with(':') || (!first && body == 0) {
                return None;
            }
            body = 0;
        } else {
            // One level of indent: the body's statements are simple.
            let (name, op, _) = assignment(trimmed)?;
            if !op.is_empty()
                || trimmed.ends_with([':', '\\', '(', '[', '{', ','])
                || depth_after(0, trimmed) != 0
                || code_of(trimmed).contains(';')
                || target.as_ref().is_some_and(|t| *t != name)
            {
                return None;
            }
            target = Some(name);
            body += 1;
        }
    }
    // A last header with a body set the target.
    let target = target?;
    (otherwise && body > 0).then(|| Guard {
        target,
        lines: lines.iter().map(|l| (*l).to_owned()).collect(),
    })
}

/// The block `code`, which failed at `failed` (1-based) on a line setting
/// the name a [`Guard`] sets, with that line replaced by the guard (at
/// its indent), and what changed.
fn splice_guard(code: &str, failed: usize, guard: &Guard) -> Option<(String, Vec<String>)> {
    let mut lines: Vec<String> = code.lines().map(str::to_owned).collect();
    if lines.iter().filter(|l| is_significant(l)).count() < BLOCK {
        return None;
    }
    let at = failed - 1;
    let line = lines.get(at)?;
    let (target, op, _) = assignment(line.trim())?;
    if target != guard.target || !op.is_empty() || !can_insert_before(&lines, at) {
        return None;
    }
    let pad = indent(line).to_owned();
    let head = guard.lines[0].split([' ', ':']).next().unwrap_or("if");
    lines.splice(at..=at, guard.lines.iter().map(|l| format!("{pad}{l}")));
    Some((
        joined_like(&lines, code),
        vec![format!("line {failed} replaced by your `{head}` statement")],
    ))
}

/// `lines` joined into a block, ending with a line break when `code`, the
/// block they were taken from, does.
fn joined_like(lines: &[String], code: &str) -> String {
    let mut joined = lines.join("\n");
    if code.ends_with('\n') {
        joined.push('\n');
    }
    joined
}

/// The statements of a fragment: a few lines, each a simple statement at
/// the top level; `None` for anything else (a loop, a print, a program).
fn fragment_statements(fragment: &str) -> Option<Vec<Statement<'_>>> {
    let mut statements = Vec::new();
    // A line copied from inside a loop keeps its indent: all lines alike
    // count as none.
    let common = fragment
        .lines()
        .filter(|l| is_significant(l))
        .map(|l| indent(l).len())
        .min()
        .unwrap_or(0);
    for line in fragment.lines().filter(|l| is_significant(l)) {
        let line = line.get(common..)?;
        if line.starts_with([' ', '\t'])
            || line.trim_end().ends_with([':', '\\', '(', '[', '{', ','])
        {
            return None;
        }
        let line = line.trim();
        if depth_after(0, line) != 0 || code_of(line).contains(';') {
            return None;
        }
        let statement = if line.starts_with("import ") || line.starts_with("from ") {
            Statement::Import(line)
        } else if let Some((target, op, value)) = assignment(line) {
            Statement::Assign {
                line,
                target,
                op,
                value,
            }
        } else {
            let callee = callee_of(line)?;
            if matches!(callee, "print" | "display") {
                return None;
            }
            Statement::Call { line, callee }
        };
        statements.push(statement);
    }
    (!statements.is_empty() && statements.len() <= FRAGMENT).then_some(statements)
}

/// `target`, operator and value of an assignment statement (`a[k] += v`),
/// the target without spaces; `None` for other statements.
pub(super) fn assignment(line: &str) -> Option<(String, &str, &str)> {
    let bytes = line.as_bytes();
    let mut depth = 0i32;
    let mut quote: Option<u8> = None;
    for (i, &b) in bytes.iter().enumerate() {
        if let Some(q) = quote {
            if b == q {
                quote = None;
            }
            continue;
        }
        match b {
            b'\'' | b'"' => quote = Some(b),
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'#' => return None,
            b'=' if depth == 0 => {
                if bytes.get(i + 1) == Some(&b'=') {
                    return None;
                }
                let before = if i > 0 { bytes[i - 1] } else { b' ' };
                if matches!(before, b'=' | b'!' | b'<' | b'>') {
                    return None;
                }
                let op_len = usize::from(matches!(before, b'+' | b'-' | b'*' | b'/' | b'%'));
                let target = line[..i - op_len].trim();
                let target_ok = !target.is_empty()
                    && target
                        .chars()
                        .all(|c| c.is_alphanumeric() || "_.[]'\", ".contains(c));
                if !target_ok {
                    return None;
                }
                return Some((compact(target), &line[i - op_len..i], line[i + 1..].trim()));
            }
            _ => {}
        }
    }
    None
}

/// The name of the last call in an expression (`lower` in
/// `df['n'].str.strip().lower()`), if it makes one.
fn last_call(value: &str) -> Option<&str> {
    let code = value.trim_end();
    let open = code.rfind('(')?;
    let before = &code[..open];
    let start = before
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    let name = &before[start..];
    (!name.is_empty()).then_some(name)
}

/// The name a call statement calls (`df.to_csv` of `df.to_csv(…)`).
fn callee_of(line: &str) -> Option<&str> {
    let (callee, _) = line.split_once('(')?;
    let ok = !callee.is_empty()
        && callee
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.');
    (ok && line.ends_with(')')).then_some(callee)
}

/// Whether a line can have a statement put before it: the statements
/// before it are closed, and it does not continue one (`else:`).
fn can_insert_before(lines: &[String], at: usize) -> bool {
    let Some(line) = lines.get(at) else {
        return false;
    };
    let open = lines[..at].iter().fold(0, |depth, l| depth_after(depth, l));
    let previous = lines[..at]
        .iter()
        .rev()
        .find(|l| is_significant(l))
        .map_or("", |l| l.trim_end());
    let word = line.trim_start().split([' ', ':']).next().unwrap_or("");
    open == 0
        && is_significant(line)
        && !previous.ends_with('\\')
        && !matches!(word, "else" | "elif" | "except" | "finally")
}

/// Bracket depth after `line`, from `depth` before it (strings and the
/// comment skipped).
fn depth_after(depth: i32, line: &str) -> i32 {
    code_of(line).chars().fold(depth, |depth, c| match c {
        '(' | '[' | '{' => depth + 1,
        ')' | ']' | '}' => depth - 1,
        _ => depth,
    })
}

/// A line without what its strings hold, and without its comment.
fn code_of(line: &str) -> String {
    let mut code = String::with_capacity(line.len());
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => continue,
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '#' => break,
            None => {}
        }
        code.push(c);
    }
    code
}

/// Whether `line` is code: not blank, not a comment.
pub(super) fn is_significant(line: &str) -> bool {
    let line = line.trim();
    !line.is_empty() && !line.starts_with('#')
}

/// Whether the Python line `trimmed` (without its indent) opens a loop:
/// `for`, `while`, `async for`.
pub(super) fn opens_loop(trimmed: &str) -> bool {
    ["for ", "while ", "async for "]
        .iter()
        .any(|word| trimmed.starts_with(word))
}

/// The lines of Python `lines` that open the blocks the line at `at` is
/// in (`for …:`, `if …:`, `with …:`), innermost first, trimmed: each
/// significant line before it indented less than any after it.
pub(super) fn enclosing<'a>(lines: &[&'a str], at: usize) -> impl Iterator<Item = &'a str> {
    let mut least = lines.get(at).map_or(0, |line| indent(line).len());
    lines[..at.min(lines.len())]
        .iter()
        .rev()
        .filter(|line| is_significant(line))
        .filter_map(move |line| {
            let depth = indent(line).len();
            (depth < least).then(|| {
                least = depth;
                line.trim()
            })
        })
}

/// The whitespace `line` begins with.
pub(super) fn indent(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

fn compact(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_blocks_a_line_is_in_are_its_less_indented_headers() {
        let lines = [
            "for page in pages:",
            "    rows = load(page)",
            "",
            "    # each row",
            "    if rows:",
            "        for row in rows:",
            "            w.writerow(row)",
            "done = True",
        ];
        assert_eq!(
            enclosing(&lines, 6).collect::<Vec<_>>(),
            ["for row in rows:", "if rows:", "for page in pages:"]
        );
        assert_eq!(enclosing(&lines, 7).count(), 0);
        assert_eq!(
            enclosing(&lines, 1).collect::<Vec<_>>(),
            ["for page in pages:"]
        );
    }

    #[test]
    fn loops_are_told_from_other_blocks() {
        for header in ["for k in keys:", "while True:", "async for k in keys:"] {
            assert!(opens_loop(header), "{header}");
        }
        for header in [
            "async with lock:",
            "if x:",
            "try:",
            "format = 1",
            "forward()",
        ] {
            assert!(!opens_loop(header), "{header}");
        }
    }

    const REVENUE: &str = "import json\n\nwith open('orders.json') as f:\n    data = json.load(f)\n\ntotal = 0.0\nfor order in data['orders']:\n    if order['status'] != 'cancelled':\n        revenue = sum(i['qty'] * i['price'] for i in order['items'])\n        total += revenue\n\nwith open('revenue.txt', 'w') as f:\n    f.write(str(round(total, 2)))\n";

    const MEAN: &str = "import pandas as pd\ndf = pd.read_csv('readings.csv')\ndf = df.dropna(subset=['t'])\navg = df['t'].mean()\nwith open('avg.txt', 'w') as f:\n    f.write(str(round(avg, 1)))\n";

    fn traceback(line: usize) -> String {
        format!(
            "Traceback (most recent call last):\n  File \"<cell-1>\", line {line}, in <module>\n    x\nTypeError: unsupported operand type(s) for +: 'int' and 'str'\n"
        )
    }

    fn python(code: &str) -> ProposedRun {
        ProposedRun {
            call_id: None,
            language: Some("python".to_owned()),
            code: code.to_owned(),
        }
    }

    fn report(text: &str) -> Report {
        Report {
            call_id: None,
            language: "python".to_owned(),
            text: text.to_owned(),
            images: Vec::new(),
        }
    }

    #[test]
    fn the_failed_line_is_read_from_the_traceback() {
        assert_eq!(failed_line(&traceback(9)), Some(9));
        let nested = "Traceback (most recent call last):\n  File \"<cell-2>\", line 12, in <module>\n    main()\n  File \"<cell-2>\", line 4, in main\n    x()\n  File \"/usr/lib/python3/json/__init__.py\", line 293, in load\nValueError: x";
        assert_eq!(failed_line(nested), Some(4));
        // A function an earlier cell defined: its lines are not this block's.
        let earlier = "Traceback (most recent call last):\n  File \"<cell-3>\", line 2, in <module>\n    total = process(rows)\n  File \"<cell-1>\", line 5, in process\n    x\nTypeError: x";
        assert_eq!(failed_line(earlier), Some(2));
        assert_eq!(failed_line("SyntaxError: invalid syntax"), None);
        assert_eq!(failed_line("(the code ran without errors)"), None);
    }

    #[test]
    fn a_changed_line_replaces_the_line_that_failed() {
        let fix = "revenue = sum(i['qty'] * float(i['price']) for i in order['items'])";
        let (code, changes) = splice(REVENUE, 9, fix).expect("spliced");
        assert_eq!(changes, ["line 9 replaced"]);
        assert_eq!(
            code,
            REVENUE.replace(
                "        revenue = sum(i['qty'] * i['price'] for i in order['items'])",
                &format!("        {fix}")
            )
        );
        assert!(code.ends_with("f.write(str(round(total, 2)))\n"));
        // Copied with its indent from inside the loop, the same.
        assert_eq!(
            splice(REVENUE, 9, &format!("        {fix}\n")).map(|(c, _)| c),
            Some(code)
        );
    }

    const TAGS: &str = "import json\ndata = json.load(open('posts.json'))\ncounts = {}\nfor post in data['posts']:\n    tags = post['meta']['tags']\n    for tag in tags:\n        counts[tag] = counts.get(tag, 0) + 1\nprint(counts)\n";

    #[test]
    fn a_guard_setting_the_failed_lines_name_replaces_that_line() {
        let fix = "if 'meta' in post and 'tags' in post['meta']:\n    tags = post['meta']['tags']\nelse:\n    tags = []\n";
        let (code, changes) = splice(TAGS, 5, fix).expect("spliced");
        assert_eq!(changes, ["line 5 replaced by your `if` statement"]);
        assert_eq!(
            code,
            TAGS.replace(
                "    tags = post['meta']['tags']\n",
                "    if 'meta' in post and 'tags' in post['meta']:\n        tags = post['meta']['tags']\n    else:\n        tags = []\n"
            )
        );
        // A `try`, copied with the loop's indent, the same way.
        let tried = "    try:\n        tags = post['meta']['tags']\n    except KeyError:\n        tags = []";
        let (code, changes) = splice(TAGS, 5, tried).expect("spliced");
        assert_eq!(changes, ["line 5 replaced by your `try` statement"]);
        assert!(
            code.contains("for post in data['posts']:\n    try:\n        tags = post['meta']['tags']\n    except KeyError:\n        tags = []\n    for tag in tags:"),
            "{code}"
        );
        // Not a guard: no branch for the other way, another name set, a
        // body that does more than set it, or a line that sets another name.
        for other in [
            "if 'tags' in post['meta']:\n    tags = post['meta']['tags']\n    n = 1\n    m = 2",
            "if 'tags' in post['meta']:\n    tags = post['meta']['tags']\nelse:\n    labels = []",
            "if 'tags' in post['meta']:\n    tags = post['meta']['tags']\nelse:\n    print('none')",
            "if 'tags' in post['meta']:\n    tags = post['meta']['tags']\nelse:\n    tags += []",
            "else:\n    tags = []\nif x:\n    tags = 1",
        ] {
            assert_eq!(guard(other), None, "{other}");
        }
        assert_eq!(splice(TAGS, 7, fix), None);
    }

    #[test]
    fn a_line_preparing_a_value_goes_before_the_line_that_failed() {
        let (code, changes) = splice(MEAN, 4, "df['t'] = df['t'].astype(float)").expect("spliced");
        assert_eq!(changes, ["a line put before line 4"]);
        assert_eq!(
            code,
            MEAN.replace(
                "avg = df['t'].mean()",
                "df['t'] = df['t'].astype(float)\navg = df['t'].mean()"
            )
        );
        // The next fix prepares the value again: before the line that now
        // fails (the conversion), which stays.
        let (again, _) =
            splice(&code, 4, "df['t'] = df['t'].replace('-', float('nan'))").expect("spliced");
        assert!(
            again.contains(
                "df['t'] = df['t'].replace('-', float('nan'))\ndf['t'] = df['t'].astype(float)\navg"
            ),
            "{again}"
        );
    }

    #[test]
    fn the_failed_line_rewritten_replaces_it() {
        let code = "import pandas as pd\np = pd.read_csv('p.csv')\np['c'] = p['c'].str.strip().lower()\nt = p.groupby('c')['a'].sum()\nt.to_csv('t.csv')\n";
        let (spliced, changes) = splice(code, 3, "p['c'] = p['c'].str.lower()").expect("spliced");
        assert_eq!(changes, ["line 3 replaced"]);
        assert_eq!(
            spliced,
            code.replace(".str.strip().lower()", ".str.lower()")
        );
        assert_eq!(last_call("df['n'].str.strip().lower()"), Some("lower"));
        assert_eq!(last_call("float(x)"), Some("float"));
        assert_eq!(last_call("x + 1"), None);
    }

    #[test]
    fn an_earlier_assignment_of_the_same_name_is_replaced() {
        let code = "import pandas as pd\ndf = pd.read_csv('sales.csv')\ntotals = df.groupby('Region')['Amount'].sum()\ntotals.to_csv('out.csv')\n";
        let (spliced, changes) =
            splice(code, 3, "df = pd.read_csv('sales.csv', sep=';')").expect("spliced");
        assert_eq!(changes, ["line 2 replaced"]);
        assert!(spliced.contains("df = pd.read_csv('sales.csv', sep=';')\ntotals"));
        assert!(!spliced.contains("pd.read_csv('sales.csv')\n"));
        // An import goes first, once.
        let (spliced, changes) = splice(code, 3, "import numpy as np").expect("spliced");
        assert_eq!(changes, ["an import put first"]);
        assert!(spliced.starts_with("import numpy as np\nimport pandas"));
        assert_eq!(splice(code, 3, "import pandas as pd"), None);
        // A changed call replaces the call that failed.
        let (spliced, changes) =
            splice(code, 4, "totals.to_csv('out.csv', header=['total'])").expect("spliced");
        assert_eq!(changes, ["line 4 replaced"]);
        assert!(spliced.ends_with("totals.to_csv('out.csv', header=['total'])\n"));
    }

    #[test]
    fn programs_loops_prints_and_unsafe_places_are_left_alone() {
        // A whole program, a loop, a print, another call.
        assert_eq!(splice(MEAN, 4, MEAN), None);
        assert_eq!(splice(MEAN, 4, "for x in y:\n    print(x)"), None);
        assert_eq!(splice(MEAN, 4, "print(df.head())"), None);
        assert_eq!(splice(MEAN, 4, "df.info()"), None);
        assert_eq!(splice(MEAN, 4, "a = 1; b = 2"), None);
        // A block too short to have a fragment put in.
        assert_eq!(splice("x = int('7.5')\n", 1, "x = float('7.5')"), None);
        // Before a line that continues a statement.
        let open = "import x\ntotal = f(\n    a,\n    b)\ny = 1\nz = 2\n";
        assert_eq!(splice(open, 3, "a = 1"), None);
        let branch = "import x\nif a:\n    b = 1\nelse:\n    b = 2\nc = 3\n";
        assert_eq!(splice(branch, 4, "q = 1"), None);
        // A name that the failed line and the lines after it never use:
        // a line of the input copied back, not a value prepared for them.
        assert_eq!(splice(MEAN, 4, "APP_PORT = 9090"), None);
        // No change: the same line again.
        assert_eq!(
            splice(MEAN, 4, "avg = df['t'].mean()"),
            None,
            "same line, nothing changes"
        );
    }

    #[test]
    fn the_splicer_puts_a_fragment_into_the_last_failed_python_block_once() {
        // The language a block runs in, as the session would say it.
        let tagged = |run: &ProposedRun| run.language.clone();
        let mut splicer = Splicer::default();
        splicer.saw(&[Some(python(REVENUE))], &[report(&traceback(9))]);
        let fix = "revenue = sum(i['qty'] * float(i['price']) for i in order['items'])";
        let (actions, spliced) = splicer.apply(vec![Action::Run(python(fix))], tagged);
        assert_eq!(spliced, Some(vec!["line 9 replaced".to_owned()]));
        let Action::Run(run) = &actions[0] else {
            panic!("{actions:?}")
        };
        assert!(run.code.contains("f.write(str(round(total, 2)))"));
        // Taken once: the next reply is left as it is.
        let (actions, spliced) = splicer.apply(vec![Action::Run(python(fix))], tagged);
        assert_eq!(spliced, None);
        assert_eq!(actions, vec![Action::Run(python(fix))]);
        // A block that ran fine, or shell code, sets nothing.
        splicer.saw(&[Some(python(REVENUE))], &[report("ok")]);
        assert_eq!(
            splicer.apply(vec![Action::Run(python(fix))], tagged).1,
            None
        );
        let mut shell = report(&traceback(9));
        shell.language = "shell".to_owned();
        splicer.saw(&[Some(python(REVENUE))], &[shell]);
        assert_eq!(
            splicer.apply(vec![Action::Run(python(fix))], tagged).1,
            None
        );
        // A fragment that would run in another language is left as it is.
        splicer.saw(&[Some(python(REVENUE))], &[report(&traceback(9))]);
        let shell_fix = |_: &ProposedRun| Some("shell".to_owned());
        assert_eq!(
            splicer.apply(vec![Action::Run(python(fix))], shell_fix).1,
            None
        );
    }

    #[test]
    fn the_same_fragment_sent_again_runs_as_written() {
        let tagged = |run: &ProposedRun| run.language.clone();
        let mut splicer = Splicer::default();
        splicer.saw(&[Some(python(REVENUE))], &[report(&traceback(9))]);
        let fix = "revenue = sum(i['qty'] * float(i['price']) for i in order['items'])";
        let (actions, spliced) = splicer.apply(vec![Action::Run(python(fix))], tagged);
        assert!(spliced.is_some());
        // The block it made fails again; the model sends the same fragment.
        let block = actions[0].run().map(|r| r.code.clone()).unwrap_or_default();
        splicer.saw(&[Some(python(&block))], &[report(&traceback(9))]);
        for _ in 0..2 {
            let (actions, spliced) = splicer.apply(vec![Action::Run(python(fix))], tagged);
            assert_eq!((actions, spliced), (vec![Action::Run(python(fix))], None));
            splicer.saw(&[Some(python(fix))], &[report(&traceback(1))]);
        }
        // Another fragment still goes into the block that failed.
        let other = "revenue = sum(float(i['qty']) * float(i['price']) for i in order['items'])";
        let (_, spliced) = splicer.apply(vec![Action::Run(python(other))], tagged);
        assert_eq!(spliced, Some(vec!["line 9 replaced".to_owned()]));
    }

    #[test]
    fn a_fragment_that_failed_alone_leaves_the_block_to_fix() {
        let tagged = |run: &ProposedRun| run.language.clone();
        let mut splicer = Splicer::default();
        splicer.saw(&[Some(python(REVENUE))], &[report(&traceback(9))]);
        // Not a fix the block can take: run as written, and it fails.
        let alone = "float(i['price'])";
        let (actions, spliced) = splicer.apply(vec![Action::Run(python(alone))], tagged);
        assert_eq!((actions, spliced), (vec![Action::Run(python(alone))], None));
        let name_error = "Traceback (most recent call last):\n  File \"<cell-2>\", line 1, in <module>\n    float(i['price'])\nNameError: name 'i' is not defined\n";
        splicer.saw(&[Some(python(alone))], &[report(name_error)]);
        // The next fix goes into the block that failed first.
        let fix = "revenue = sum(i['qty'] * float(i['price']) for i in order['items'])";
        let (actions, spliced) = splicer.apply(vec![Action::Run(python(fix))], tagged);
        assert_eq!(spliced, Some(vec!["line 9 replaced".to_owned()]));
        assert!(
            actions[0]
                .run()
                .is_some_and(|r| r.code.contains("f.write("))
        );
        // A fragment that ran fine clears it.
        splicer.saw(&[Some(python(REVENUE))], &[report(&traceback(9))]);
        let _ = splicer.apply(vec![Action::Run(python(alone))], tagged);
        splicer.saw(&[Some(python(alone))], &[report("1.5\n")]);
        assert_eq!(
            splicer.apply(vec![Action::Run(python(fix))], tagged).1,
            None
        );
    }
}
