//! Changes of one line of Python that an error calls for and that keep
//! what the line means: f-strings written as Python 3.12 reads them, which
//! Python before it refuses, and numbers joined to text with `+`. Small
//! models write both often and then retry the same line; the change is the
//! language's own, never a guess about a task.

/// A change of a line: the bytes from `.0` to `.1` become `.2`.
type Edit = (usize, usize, &'static str);

/// `line` with its f-strings written so that Python before 3.12 reads them
/// as 3.12 does: a string inside a field written in the f-string's own
/// quotes (`f"{row["name"]}"`) put in the other quotes
/// (`f"{row['name']}"`), and a string inside a field that is only a line
/// break or a tab (`f"{'\n'.join(lines)}"`, a backslash in a field)
/// written `chr(10)` or `chr(9)`. `None` when there is nothing to change,
/// or when the line holds what this does not read with certainty (triple
/// quotes, a nested f-string, another backslash in a field, a string that
/// holds the other quote).
pub(super) fn fstrings_for_older_python(line: &str) -> Option<String> {
    if line.contains("\"\"\"") || line.contains("'''") {
        return None;
    }
    let b = line.as_bytes();
    let mut edits: Vec<Edit> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'#' {
            break;
        }
        i = match literal_start(b, i) {
            Some(start) if start.f => fstring_end(b, &start, &mut edits)?,
            Some(start) => plain_end(b, &start)?,
            None => i + 1,
        };
    }
    if edits.is_empty() {
        return None;
    }
    let mut fixed = line.to_owned();
    for (from, to, with) in edits.into_iter().rev() {
        fixed.replace_range(from..to, with);
    }
    Some(fixed)
}

/// `line` with each operand of a chain of `+` that holds a string literal
/// (`"Total: " + total`) converted with `str(…)` where it is a name, a
/// call, a subscript or a number (`"Total: " + str(total)`): the chain
/// builds text, and Python refuses to join a number to it. `None` when no
/// chain needs it, or when an operand is bound tighter by an operator
/// around it (`"-" * 3 + n`, `2 * x + "s"`), where the change would not be
/// certain.
pub(super) fn text_concat(line: &str) -> Option<String> {
    let b = line.as_bytes();
    let mut wraps: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'#' {
            break;
        }
        if boundary_before(b, i)
            && let Some((end, items)) = chain(b, i)
        {
            if items.iter().any(|o| o.kind == Kind::Text) {
                wraps.extend(
                    items
                        .iter()
                        .filter(|o| o.kind == Kind::Value)
                        .map(|o| (o.start, o.end)),
                );
            }
            i = end.max(i + 1);
            continue;
        }
        i = match literal_start(b, i) {
            Some(start) => literal_end(b, &start)?,
            None => i + 1,
        };
    }
    if wraps.is_empty() {
        return None;
    }
    let mut fixed = line.to_owned();
    for (start, end) in wraps.into_iter().rev() {
        fixed.insert(end, ')');
        fixed.insert_str(start, "str(");
    }
    Some(fixed)
}

/// Where a string literal begins: at its quote, which quote, and whether
/// it is an f-string or raw.
struct Start {
    quote_at: usize,
    quote: u8,
    f: bool,
    raw: bool,
}

/// The arguments of a call whose text after its `(` is `rest`
/// (`src, os.path.join(dst, f))` …), each trimmed as written, split at
/// the commas outside brackets and strings; `None` when the call does not
/// close on the line.
pub(super) fn call_arguments(rest: &str) -> Option<Vec<String>> {
    let b = rest.as_bytes();
    let mut args = Vec::new();
    let (mut start, mut k) = (0, 0);
    loop {
        let c = *b.get(k)?;
        if let Some(literal) = literal_start(b, k) {
            k = literal_end(b, &literal)?;
            continue;
        }
        match c {
            b'(' | b'[' | b'{' => k = bracket_end(b, k)?,
            b',' | b')' => {
                let arg = rest[start..k].trim();
                if !arg.is_empty() {
                    args.push(arg.to_owned());
                }
                if c == b')' {
                    return Some(args);
                }
                k += 1;
                start = k;
            }
            _ => k += 1,
        }
    }
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The string literal that begins at `i` (its prefix letters, if any, or
/// its quote), unless `i` is inside a word.
fn literal_start(b: &[u8], i: usize) -> Option<Start> {
    if i > 0 && is_word(b[i - 1]) {
        return None;
    }
    let prefix = b[i..]
        .iter()
        .take(3)
        .take_while(|c| b"rRbBuUfF".contains(c))
        .count();
    let quote_at = i + prefix;
    let quote = *b.get(quote_at)?;
    if prefix > 2 || !(quote == b'"' || quote == b'\'') {
        return None;
    }
    let letters = &b[i..quote_at];
    Some(Start {
        quote_at,
        quote,
        f: letters.iter().any(|c| matches!(c, b'f' | b'F')),
        raw: letters.iter().any(|c| matches!(c, b'r' | b'R')),
    })
}

/// Where a literal that is not an f-string ends (after its closing quote).
fn plain_end(b: &[u8], start: &Start) -> Option<usize> {
    let mut k = start.quote_at + 1;
    loop {
        let c = *b.get(k)?;
        if c == b'\\' && !start.raw {
            k += 2;
        } else if c == start.quote {
            return Some(k + 1);
        } else {
            k += 1;
        }
    }
}

/// Where any literal ends, f-strings read as [`fstrings_for_older_python`] reads
/// them.
fn literal_end(b: &[u8], start: &Start) -> Option<usize> {
    if start.f {
        fstring_end(b, start, &mut Vec::new())
    } else {
        plain_end(b, start)
    }
}

/// Where an f-string ends, its fields read as Python 3.12 reads them; the
/// changes [`fstrings_for_older_python`] makes in them go to `edits`.
fn fstring_end(b: &[u8], start: &Start, edits: &mut Vec<Edit>) -> Option<usize> {
    let mut k = start.quote_at + 1;
    loop {
        let c = *b.get(k)?;
        if c == b'\\' {
            k += 2;
        } else if c == start.quote {
            return Some(k + 1);
        } else if c == b'{' && b.get(k + 1) == Some(&b'{') {
            k += 2;
        } else if c == b'{' {
            k = field_end(b, k + 1, start.quote, edits)?;
        } else {
            k += 1;
        }
    }
}

/// Where the field of an f-string that begins at `k` (after its `{`) ends,
/// after its `}`.
fn field_end(b: &[u8], mut k: usize, quote: u8, edits: &mut Vec<Edit>) -> Option<usize> {
    let (other, other_text) = if quote == b'"' {
        (b'\'', "'")
    } else {
        (b'"', "\"")
    };
    let mut depth = 0usize;
    loop {
        let c = *b.get(k)?;
        if c == quote || c == other {
            // A string inside the field; one with a prefix (a nested
            // f-string) is not read.
            if is_word(b[k - 1]) {
                return None;
            }
            let close = k + 1 + b[k + 1..].iter().position(|&x| x == c)?;
            let inner = &b[k + 1..close];
            match inner {
                b"\\n" => edits.push((k, close + 1, "chr(10)")),
                b"\\t" => edits.push((k, close + 1, "chr(9)")),
                _ if inner.contains(&b'\\') => return None,
                _ if c == quote => {
                    if inner.contains(&other) {
                        return None;
                    }
                    edits.push((k, k + 1, other_text));
                    edits.push((close, close + 1, other_text));
                }
                _ => {}
            }
            k = close + 1;
            continue;
        }
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' => depth = depth.checked_sub(1)?,
            b'}' if depth == 0 => return Some(k + 1),
            b'}' => depth -= 1,
            b':' if depth == 0 && b.get(k + 1) != Some(&b'=') => return spec_end(b, k + 1, quote),
            b'\\' => return None,
            _ => {}
        }
        k += 1;
    }
}

/// Where a field's format spec (`.2f`, `>{width}`) that begins at `k`
/// ends, after the field's `}`.
fn spec_end(b: &[u8], mut k: usize, quote: u8) -> Option<usize> {
    let mut depth = 0usize;
    loop {
        match *b.get(k)? {
            b'{' => depth += 1,
            b'}' if depth == 0 => return Some(k + 1),
            b'}' => depth -= 1,
            c if c == quote => return None,
            _ => {}
        }
        k += 1;
    }
}

/// What an operand of `+` is: a string literal alone, a value that may be
/// a number (a name, a call, a subscript, a number, a parenthesized
/// expression), or text already (`str(…)`, a literal with a method called
/// on it), which stays as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Value,
    Kept,
}

#[derive(Debug)]
struct Operand {
    start: usize,
    end: usize,
    kind: Kind,
}

/// Words that are not values: an operand never begins with one.
const KEYWORDS: &[&str] = &[
    "and", "or", "not", "in", "is", "if", "else", "for", "lambda", "await", "yield", "return",
    "None", "True", "False",
];

fn skip_spaces(b: &[u8], mut k: usize) -> usize {
    while b.get(k) == Some(&b' ') {
        k += 1;
    }
    k
}

/// Whether a chain of `+` may begin at `i`: what comes before it (an
/// opening bracket, a comma, `=`, `:`, `return`, or nothing) binds looser
/// than `+`.
fn boundary_before(b: &[u8], i: usize) -> bool {
    if b[i] == b' ' || (i > 0 && is_word(b[i - 1])) {
        return false;
    }
    let before = &b[..i];
    let trimmed = before.trim_ascii_end();
    match trimmed.last() {
        None => true,
        Some(c) if b"([{,=:".contains(c) => true,
        Some(_) => {
            trimmed.len() < before.len()
                && [&b"return"[..], b"yield"].iter().any(|w| {
                    trimmed.ends_with(w)
                        && !trimmed[..trimmed.len() - w.len()]
                            .last()
                            .is_some_and(|c| is_word(*c))
                })
        }
    }
}

/// The byte index in `line` of the bracket that closes the one at byte
/// `open` (string literals inside skipped); `None` when it does not close
/// on the line.
pub(super) fn closing_bracket(line: &str, open: usize) -> Option<usize> {
    bracket_end(line.as_bytes(), open).map(|end| end - 1)
}

/// Where the bracket opened at `k` closes (after it), string literals
/// inside skipped.
fn bracket_end(b: &[u8], mut k: usize) -> Option<usize> {
    let mut depth = 0usize;
    loop {
        let c = *b.get(k)?;
        if let Some(start) = literal_start(b, k) {
            k = literal_end(b, &start)?;
            continue;
        }
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(k + 1);
                }
            }
            _ => {}
        }
        k += 1;
    }
}

/// Calls, subscripts and attributes after an operand (`(…)`, `[…]`,
/// `.name`): where they end.
fn trailers_end(b: &[u8], mut k: usize) -> Option<usize> {
    loop {
        match b.get(k) {
            Some(b'(' | b'[') => k = bracket_end(b, k)?,
            Some(b'.')
                if b.get(k + 1)
                    .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_') =>
            {
                k += 1;
                while b.get(k).is_some_and(|c| is_word(*c)) {
                    k += 1;
                }
            }
            _ => return Some(k),
        }
    }
}

/// The operand of `+` that begins at `i` (spaces skipped).
fn operand(b: &[u8], i: usize) -> Option<Operand> {
    let start = skip_spaces(b, i);
    let c = *b.get(start)?;
    if let Some(literal) = literal_start(b, start) {
        let end = literal_end(b, &literal)?;
        let after = trailers_end(b, end)?;
        let kind = if after == end { Kind::Text } else { Kind::Kept };
        return Some(Operand {
            start,
            end: after,
            kind,
        });
    }
    let (word_end, kind) = if c == b'(' {
        (start, Kind::Value)
    } else if is_word(c) {
        let mut k = start;
        // A name, or a number (`2.5`): word characters, and a point
        // before a digit.
        while b.get(k).is_some_and(|c| {
            is_word(*c) || (*c == b'.' && b.get(k + 1).is_some_and(u8::is_ascii_digit))
        }) {
            k += 1;
        }
        let word = std::str::from_utf8(&b[start..k]).ok()?;
        if KEYWORDS.contains(&word) {
            return None;
        }
        // `str(x)` is text already.
        let kind = if word == "str" && b.get(k) == Some(&b'(') {
            Kind::Kept
        } else {
            Kind::Value
        };
        (k, kind)
    } else {
        return None;
    };
    let end = trailers_end(b, word_end)?;
    Some(Operand { start, end, kind })
}

/// The chain of operands joined by `+` that begins at `i`, and where it
/// ends; `None` when it is not one (fewer than two operands), or when an
/// operator around it binds tighter than `+`.
fn chain(b: &[u8], i: usize) -> Option<(usize, Vec<Operand>)> {
    let first = operand(b, i)?;
    let mut end = first.end;
    let mut items = vec![first];
    loop {
        let k = skip_spaces(b, end);
        if b.get(k) == Some(&b'+') && b.get(k + 1) != Some(&b'=') {
            let next = operand(b, k + 1)?;
            end = next.end;
            items.push(next);
        } else {
            break;
        }
    }
    let k = skip_spaces(b, end);
    let rest = &b[k..];
    let closes = match rest.first() {
        None => true,
        Some(c) => {
            b")]},:#".contains(c)
                || [&b"if "[..], b"else ", b"for "]
                    .iter()
                    .any(|w| rest.starts_with(w))
        }
    };
    (items.len() >= 2 && closes).then_some((end, items))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_fstrings_own_quotes_and_a_line_break_inside_a_field_are_written_for_older_python() {
        for (line, fixed) in [
            (
                r#"print(f"Name: {row["name"]}, x")"#,
                r#"print(f"Name: {row['name']}, x")"#,
            ),
            (
                r#"print(f"{", ".join(names)}")"#,
                r#"print(f"{', '.join(names)}")"#,
            ),
            (
                r#"f.write(f'{d['a']:.2f} and {d['b']!r}\n')"#,
                r#"f.write(f'{d["a"]:.2f} and {d["b"]!r}\n')"#,
            ),
            (
                r#"print(f"Lines:\n{'\n'.join(lines)}\tand {"\t".join(cols)}")"#,
                r#"print(f"Lines:\n{chr(10).join(lines)}\tand {chr(9).join(cols)}")"#,
            ),
            (
                r#"out = f"{len(d["k"])} {{literal}} {x["y"][0]:>{w}}" + "done""#,
                r#"out = f"{len(d['k'])} {{literal}} {x['y'][0]:>{w}}" + "done""#,
            ),
        ] {
            assert_eq!(
                fstrings_for_older_python(line).as_deref(),
                Some(fixed),
                "{line}"
            );
        }
    }

    #[test]
    fn an_fstring_that_needs_nothing_or_is_not_read_with_certainty_stays() {
        for line in [
            r#"print(f"Name: {row['name']}")"#,
            r#"print("{row["name"]}")"#,
            r#"print(f"{d["it's"]}")"#,
            r#"print(f"{'\\'.join(parts)}")"#,
            r#"print(f"{', \n'.join(parts)}")"#,
            r#"print(f"{d[f"k{i}"]}")"#,
            r#"print(f"""{d["k"]}""")"#,
            r#"x = 1  # f"{d["k"]}""#,
            r#"print(f"{d["k"]"#,
        ] {
            assert_eq!(fstrings_for_older_python(line), None, "{line}");
        }
    }

    #[test]
    fn numbers_joined_to_text_with_plus_are_converted_with_str() {
        for (line, fixed) in [
            (
                r#"print("Total: " + total)"#,
                r#"print("Total: " + str(total))"#,
            ),
            (
                r#"msg = "Average: " + round(avg, 2) + " (" + row['n'] + ")""#,
                r#"msg = "Average: " + str(round(avg, 2)) + " (" + str(row['n']) + ")""#,
            ),
            (
                r#"f.write(name + ": " + str(count) + "\n")"#,
                r#"f.write(str(name) + ": " + str(count) + "\n")"#,
            ),
            (
                r#"lines.append('Files: ' + len(files))"#,
                r#"lines.append('Files: ' + str(len(files)))"#,
            ),
            (r#"return "n=" + (a + b)"#, r#"return "n=" + str((a + b))"#),
        ] {
            assert_eq!(text_concat(line).as_deref(), Some(fixed), "{line}");
        }
    }

    #[test]
    fn a_sum_without_text_or_bound_tighter_stays_and_a_condition_ends_a_chain() {
        for line in [
            "total = total + row['amount']",
            r#"print("Count:", count + 1)"#,
            r#"print("-" * 20 + total)"#,
            r#"print(2 * x + "s")"#,
            r#"print("a" + x * 2)"#,
            r#"print("Total: " + str(total))"#,
            r#"s += "x" + "y""#,
        ] {
            assert_eq!(text_concat(line), None, "{line}");
        }
        assert_eq!(
            text_concat(r#"print("a" + x if y else z)"#).as_deref(),
            Some(r#"print("a" + str(x) if y else z)"#)
        );
    }

    #[test]
    fn a_calls_arguments_are_split_outside_brackets_and_strings() {
        assert_eq!(
            call_arguments("file_path, os.path.join(dest, 'a,b'), f(x, y))  # moved").unwrap(),
            ["file_path", "os.path.join(dest, 'a,b')", "f(x, y)"]
        );
        assert_eq!(call_arguments("'x)', y)").unwrap(), ["'x)'", "y"]);
        assert_eq!(call_arguments("a, b"), None);
    }
}
