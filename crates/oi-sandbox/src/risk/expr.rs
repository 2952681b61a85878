//! Reading expressions of the languages oi runs, well enough to judge them:
//! calls and their arguments, string literals, and the value of a string
//! expression built from literals (unknown parts become [`DYNAMIC`]).

use super::DYNAMIC;

/// How a language writes strings, comments and string concatenation.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Syntax {
    /// Comment starters running to the end of the line.
    pub line_comments: &'static [&'static str],
    /// Whether `/* … */` comments exist.
    pub block_comments: bool,
    /// Binary operators that join strings (`+`, `.`, `..`).
    pub concat: &'static [&'static str],
    /// Whether double-quoted strings interpolate (`"$x"`, `"#{x}"`,
    /// `` `${x}` ``): such parts are unknown.
    pub interpolates: bool,
    /// Backticks quote a string (JavaScript) rather than run a command.
    pub backtick_string: bool,
    /// Python: prefixes (`r`, `f`, `b`) and triple quotes.
    pub python: bool,
}

pub(crate) const PYTHON: Syntax = Syntax {
    line_comments: &["#"],
    block_comments: false,
    concat: &["+"],
    interpolates: false,
    backtick_string: false,
    python: true,
};

/// The syntax of `language` (a canonical name).
pub(crate) fn syntax(language: &str) -> Syntax {
    match language {
        "javascript" | "typescript" => Syntax {
            line_comments: &["//"],
            block_comments: true,
            concat: &["+"],
            interpolates: true,
            backtick_string: true,
            python: false,
        },
        "perl" => Syntax {
            line_comments: &["#"],
            block_comments: false,
            concat: &["."],
            interpolates: true,
            backtick_string: false,
            python: false,
        },
        "php" => Syntax {
            line_comments: &["//", "#"],
            block_comments: true,
            concat: &["."],
            interpolates: true,
            backtick_string: false,
            python: false,
        },
        "ruby" => Syntax {
            line_comments: &["#"],
            block_comments: false,
            concat: &["+"],
            interpolates: true,
            backtick_string: false,
            python: false,
        },
        "lua" => Syntax {
            line_comments: &["--"],
            block_comments: false,
            concat: &[".."],
            interpolates: false,
            backtick_string: false,
            python: false,
        },
        "r" => Syntax {
            line_comments: &["#"],
            block_comments: false,
            concat: &[],
            interpolates: false,
            backtick_string: false,
            python: false,
        },
        "python" => PYTHON,
        _ => Syntax {
            line_comments: &["#", "//"],
            block_comments: false,
            concat: &["+", "."],
            interpolates: true,
            backtick_string: false,
            python: false,
        },
    }
}

/// The length in bytes of the string literal starting at `text`, if one
/// does (with Python's prefixes and triple quotes).
pub(crate) fn literal_len(text: &str, syntax: Syntax) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut start = 0;
    if syntax.python {
        while start < bytes.len().min(2) && b"rRbBuUfF".contains(&bytes[start]) {
            start += 1;
        }
    }
    let quote = *bytes.get(start)?;
    let quotes: &[u8] = if syntax.backtick_string {
        b"'\"`"
    } else {
        b"'\""
    };
    if !quotes.contains(&quote) {
        return None;
    }
    if start > 0 && !syntax.python {
        return None;
    }
    let triple = syntax.python
        && bytes.get(start + 1) == Some(&quote)
        && bytes.get(start + 2) == Some(&quote);
    let mut i = start + if triple { 3 } else { 1 };
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b if b == quote => {
                if !triple {
                    return Some(i + 1);
                }
                if bytes.get(i + 1) == Some(&quote) && bytes.get(i + 2) == Some(&quote) {
                    return Some(i + 3);
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    Some(bytes.len())
}

/// The value of a string literal (the whole of `text`), with interpolated
/// parts as [`DYNAMIC`]; `None` when `text` is not one literal.
pub(crate) fn literal_value(text: &str, syntax: Syntax) -> Option<String> {
    let text = text.trim();
    if literal_len(text, syntax)? != text.len() {
        return None;
    }
    let mut prefix = 0;
    let bytes = text.as_bytes();
    if syntax.python {
        while prefix < bytes.len() && b"rRbBuUfF".contains(&bytes[prefix]) {
            prefix += 1;
        }
    }
    let flags = &text[..prefix];
    let f_string = flags.contains(['f', 'F']);
    let raw = flags.contains(['r', 'R']);
    let quote = bytes[prefix] as char;
    let triple = syntax.python && text[prefix..].starts_with(&format!("{quote}{quote}{quote}"));
    let open = prefix + if triple { 3 } else { 1 };
    let close = if triple { 3 } else { 1 };
    let inner = text
        .get(open..text.len().saturating_sub(close))
        .unwrap_or("");
    let interpolating =
        f_string || quote == '`' || (syntax.interpolates && quote == '"' && !syntax.python);
    let mut out = String::new();
    let chars: Vec<char> = inner.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && !raw && i + 1 < chars.len() {
            out.push(match chars[i + 1] {
                'n' => '\n',
                't' => '\t',
                other => other,
            });
            i += 2;
            continue;
        }
        if interpolating {
            // `{x}` (f-strings), `${x}` (JS templates), `#{x}` (Ruby),
            // `$x` / `${x}` / `@x` (Perl, PHP).
            let opens_brace = (f_string && c == '{' && chars.get(i + 1) != Some(&'{'))
                || ((c == '$' || c == '#') && chars.get(i + 1) == Some(&'{'));
            if opens_brace {
                let mut depth = 0;
                while i < chars.len() {
                    match chars[i] {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                out.push_str(DYNAMIC);
                i += 1;
                continue;
            }
            if f_string && c == '{' {
                out.push('{');
                i += 2;
                continue;
            }
            if !f_string
                && quote != '`'
                && (c == '$' || c == '@')
                && chars
                    .get(i + 1)
                    .is_some_and(|n| n.is_ascii_alphabetic() || *n == '_')
            {
                i += 1;
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                out.push_str(DYNAMIC);
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    Some(out)
}

/// Splits call arguments (or list items) at top-level commas.
pub(crate) fn split_args(args: &str, syntax: Syntax) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut depth = 0i32;
    let mut i = 0;
    while i < args.len() {
        let rest = &args[i..];
        if let Some(len) = literal_len(rest, syntax) {
            current.push_str(&rest[..len]);
            i += len;
            continue;
        }
        let Some(c) = rest.chars().next() else { break };
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(current.trim().to_owned());
                current.clear();
                i += 1;
                continue;
            }
            _ => {}
        }
        current.push(c);
        i += c.len_utf8();
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_owned());
    }
    out
}

/// The value of a string expression: literals joined by the language's
/// concatenation, with everything else (a variable `lookup` does not know,
/// a call) as [`DYNAMIC`]. `None` when it has no literal at all and
/// `lookup` knows none of it.
pub(crate) fn fold(
    expr: &str,
    syntax: Syntax,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    let expr = expr.trim();
    if expr.is_empty() {
        return None;
    }
    if let Some(value) = literal_value(expr, syntax) {
        return Some(value);
    }
    if let Some(value) = lookup(expr) {
        return Some(value);
    }
    let parts = split_top(expr, syntax.concat, syntax);
    if parts.len() < 2 {
        // R: paste0("a", b)
        if let Some(inner) = expr
            .strip_prefix("paste0(")
            .and_then(|r| r.strip_suffix(')'))
        {
            let pieces: Vec<String> = split_args(inner, syntax)
                .iter()
                .map(|p| fold(p, syntax, lookup).unwrap_or_else(|| DYNAMIC.to_owned()))
                .collect();
            return Some(pieces.concat());
        }
        return None;
    }
    let mut known = false;
    let mut out = String::new();
    for part in parts {
        match fold(&part, syntax, lookup) {
            Some(value) => {
                known = true;
                out.push_str(&value);
            }
            None => out.push_str(DYNAMIC),
        }
    }
    known.then_some(out)
}

/// `expr` split at top-level occurrences of any of `ops` (outside strings
/// and brackets). Operators are matched whole and with something on both
/// sides (so a method call's `.` is not taken for Perl's concatenation
/// unless spaced).
pub(crate) fn split_top(expr: &str, ops: &[&str], syntax: Syntax) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut depth = 0i32;
    let mut i = 0;
    'outer: while i < expr.len() {
        let rest = &expr[i..];
        if let Some(len) = literal_len(rest, syntax) {
            current.push_str(&rest[..len]);
            i += len;
            continue;
        }
        let Some(c) = rest.chars().next() else { break };
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
        if depth == 0 {
            for op in ops {
                if rest.starts_with(op) && !current.trim().is_empty() {
                    let after = &rest[op.len()..];
                    // `..` is not `.`; `.5` is a number; `x.y` is a member.
                    if *op == "." {
                        let spaced_before = current.ends_with(' ');
                        let next = after.chars().next().unwrap_or(' ');
                        if after.starts_with('.')
                            || (!spaced_before && !matches!(next, ' ' | '"' | '\'' | '$'))
                        {
                            continue;
                        }
                    }
                    if *op == "+" && after.starts_with('=') {
                        continue;
                    }
                    out.push(current.trim().to_owned());
                    current.clear();
                    i += op.len();
                    continue 'outer;
                }
            }
        }
        current.push(c);
        i += c.len_utf8();
    }
    out.push(current.trim().to_owned());
    out
}

/// A call in source code.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    /// The dotted name before the parenthesis (`os.path.join`,
    /// `File::Path::rmtree`); a method of a call's result is named
    /// `x.method`.
    pub name: String,
    /// The text between the parentheses (or, for a call without them, up
    /// to the end of the statement).
    pub args: String,
    /// The whole call, for the excerpt.
    pub text: String,
    /// For `Path("x").unlink()`: `Path("x")`.
    pub receiver: String,
    /// Where the call starts in the code (bytes).
    pub start: usize,
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '.' || c == ':' || c == '$' || c == '\\'
}

/// The calls in `code`, outside strings and comments: `name(…)`, and for
/// the names in `bare` (commands of Perl and Ruby written without
/// parentheses) `name ARGS` up to the end of the statement.
pub(crate) fn find_calls(code: &str, syntax: Syntax, bare: &[&str]) -> Vec<Call> {
    let mut calls = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let rest = &code[i..];
        if let Some(comment) = syntax.line_comments.iter().find(|c| rest.starts_with(**c)) {
            // `#` inside `$#array` (Perl) or `#{` (Ruby) is not a comment.
            let not_comment = *comment == "#"
                && (code[..i].ends_with('$') || rest.starts_with("#{") || rest.starts_with("#!"));
            if !not_comment {
                i += rest.find('\n').unwrap_or(rest.len());
                continue;
            }
        }
        if syntax.block_comments && rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |e| e + 2);
            continue;
        }
        if let Some(len) = literal_len(rest, syntax) {
            // A Python literal's prefix belongs to it, not to a name.
            let prefixed = syntax.python && rest.starts_with(|c: char| c.is_ascii_alphabetic());
            let starts_name = i > 0
                && code[..i]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_');
            if !(prefixed && starts_name) {
                i += len;
                continue;
            }
        }
        let Some(c) = rest.chars().next() else { break };
        if c == '(' {
            if let Some(call) = call_at(code, i, syntax) {
                calls.push(call);
            }
        } else if is_name_char(c)
            && !bare.is_empty()
            && !code[..i].chars().next_back().is_some_and(is_name_char)
        {
            let name: String = rest.chars().take_while(|c| is_name_char(*c)).collect();
            let after = &rest[name.len()..];
            if bare.contains(&name.as_str())
                && after.starts_with([' ', '\t'])
                && !after.trim_start().starts_with(['(', '=', ',', ')', ';'])
            {
                let end = statement_end(after, syntax);
                calls.push(Call {
                    name: name.clone(),
                    args: after[..end].trim().to_owned(),
                    text: rest[..name.len() + end].to_owned(),
                    receiver: String::new(),
                    start: i,
                });
            }
            i += name.len();
            continue;
        }
        i += c.len_utf8();
    }
    calls
}

/// Where a statement written without parentheses ends: `;`, a newline, or
/// a statement modifier (`if`, `unless`, `or die`).
fn statement_end(text: &str, syntax: Syntax) -> usize {
    let mut i = 0;
    let mut depth = 0i32;
    while i < text.len() {
        let rest = &text[i..];
        if let Some(len) = literal_len(rest, syntax) {
            i += len;
            continue;
        }
        let Some(c) = rest.chars().next() else { break };
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth == 0 => return i,
            ')' | ']' | '}' => depth -= 1,
            ';' | '\n' if depth == 0 => return i,
            _ => {}
        }
        if depth == 0
            && [" if ", " unless ", " or ", " and ", " || ", " && "]
                .iter()
                .any(|m| rest.starts_with(m))
        {
            return i;
        }
        i += c.len_utf8();
    }
    text.len()
}

/// The call whose `(` is at `open`, if a name (or a call's result) precedes
/// it.
fn call_at(code: &str, open: usize, syntax: Syntax) -> Option<Call> {
    let before = &code[..open];
    let trimmed = before.trim_end_matches([' ', '\t']);
    let name_start = trimmed
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_name_char(*c))
        .last()
        .map_or(trimmed.len(), |(i, _)| i);
    let name = trimmed[name_start..].trim_start_matches('.').to_owned();
    // The receiver of `Path("x").unlink()`: a call or index before the dot.
    let mut receiver = String::new();
    let dotted = trimmed[..name_start].ends_with(')') || trimmed[..name_start].ends_with(']');
    if dotted && trimmed[name_start..].starts_with('.') {
        let head = &trimmed[..name_start];
        let mut depth = 0;
        let mut j = head.len();
        for (k, c) in head.char_indices().rev() {
            match c {
                ')' | ']' => depth += 1,
                '(' | '[' => {
                    depth -= 1;
                    if depth == 0 {
                        j = k;
                        break;
                    }
                }
                _ => {}
            }
        }
        let start = head[..j]
            .char_indices()
            .rev()
            .take_while(|(_, c)| is_name_char(*c))
            .last()
            .map_or(j, |(i, _)| i);
        receiver = head[start..].to_owned();
    }
    // The arguments, up to the matching parenthesis.
    let mut depth = 0;
    let mut j = open;
    while j < code.len() {
        let rest = &code[j..];
        if let Some(len) = literal_len(rest, syntax) {
            j += len;
            continue;
        }
        let Some(c) = rest.chars().next() else { break };
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    j += 1;
                    break;
                }
            }
            _ => {}
        }
        j += c.len_utf8();
    }
    let args = code
        .get(open + 1..j.saturating_sub(1).max(open + 1))?
        .to_owned();
    let name = if receiver.is_empty() || name.is_empty() {
        name
    } else {
        format!("x.{}", name.rsplit('.').next().unwrap_or(&name))
    };
    if name.is_empty() && receiver.is_empty() {
        return None;
    }
    let start = if receiver.is_empty() {
        name_start
    } else {
        open - (trimmed.len() - name_start) - receiver.len()
    };
    Some(Call {
        text: code.get(start..j).unwrap_or("").to_owned(),
        name,
        args,
        receiver,
        start,
    })
}

/// The contents of every string literal in `code`.
pub(crate) fn literals(code: &str, syntax: Syntax) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let rest = &code[i..];
        if let Some(len) = literal_len(rest, syntax) {
            if let Some(value) = literal_value(&rest[..len], syntax) {
                out.push(value);
            }
            i += len;
            continue;
        }
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
    out
}

/// Shell words for an argument list (`["rm", "-rf", p]`), unknown items as
/// [`DYNAMIC`], quoted so the shell reader sees the same words.
pub(crate) fn argv_command(items: &[Option<String>]) -> String {
    items
        .iter()
        .map(|item| match item {
            None => format!("\"{DYNAMIC}\""),
            Some(w) if w.contains(DYNAMIC) => {
                let escaped = w.replace(['"', '\\', '`'], "");
                format!("\"{escaped}\"")
            }
            Some(w)
                if w.is_empty()
                    || w.contains(|c: char| c.is_whitespace() || "'\"$;&|<>()`*?".contains(c)) =>
            {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
            Some(w) => w.clone(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn literals_are_read_in_each_languages_way() {
        assert_eq!(literal_value("'a\\nb'", PYTHON).as_deref(), Some("a\nb"));
        assert_eq!(literal_value("r'a\\nb'", PYTHON).as_deref(), Some("a\\nb"));
        assert_eq!(
            literal_value("f'rm -rf {p}'", PYTHON).as_deref(),
            Some("rm -rf $__oi_dynamic")
        );
        assert_eq!(
            literal_value("`rm -rf ${dir}`", syntax("javascript")).as_deref(),
            Some("rm -rf $__oi_dynamic")
        );
        assert_eq!(
            literal_value("\"rm -rf $dir\"", syntax("perl")).as_deref(),
            Some("rm -rf $__oi_dynamic")
        );
        assert_eq!(
            literal_value("'rm -rf $dir'", syntax("perl")).as_deref(),
            Some("rm -rf $dir")
        );
        assert_eq!(literal_value("'a' + b", PYTHON), None);
    }

    #[test]
    fn string_expressions_fold_with_unknown_parts_marked() {
        assert_eq!(
            fold("'r'+'m -rf '+p", PYTHON, &none).as_deref(),
            Some("rm -rf $__oi_dynamic")
        );
        assert_eq!(
            fold("\"rm \" . \"-rf\"", syntax("perl"), &none).as_deref(),
            Some("rm -rf")
        );
        assert_eq!(
            fold("'rm' .. ' -rf'", syntax("lua"), &none).as_deref(),
            Some("rm -rf")
        );
        assert_eq!(
            fold("paste0('rm -rf ', d)", syntax("r"), &none).as_deref(),
            Some("rm -rf $__oi_dynamic")
        );
        assert_eq!(fold("path", PYTHON, &none), None);
        let known = |n: &str| (n == "p").then(|| "/srv".to_owned());
        assert_eq!(
            fold("'rm -rf ' + p", PYTHON, &known).as_deref(),
            Some("rm -rf /srv")
        );
    }

    #[test]
    fn calls_are_found_with_their_arguments_and_receivers() {
        let calls = find_calls(
            "# os.remove('no')\nPath('x').unlink()\nshutil.rmtree(os.path.join(a, 'b'), True)\ns = 'rmtree(q)'",
            PYTHON,
            &[],
        );
        let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["Path", "x.unlink", "shutil.rmtree", "os.path.join"]);
        assert_eq!(calls[1].receiver, "Path('x')");
        assert_eq!(calls[2].args, "os.path.join(a, 'b'), True");
        let perl = find_calls(
            "use File::Path;\nrmtree $dir if -d $dir;\nsystem(\"ls\");",
            syntax("perl"),
            &["rmtree", "system"],
        );
        assert_eq!(perl[0].name, "rmtree");
        assert_eq!(perl[0].args, "$dir");
        assert_eq!(perl[1].name, "system");
    }

    #[test]
    fn argument_lists_become_shell_words() {
        assert_eq!(
            argv_command(&[Some("rm".into()), Some("-rf".into()), None]),
            "rm -rf \"$__oi_dynamic\""
        );
        assert_eq!(
            argv_command(&[Some("echo".into()), Some("a b".into())]),
            "echo 'a b'"
        );
    }
}
