//! Fenced code blocks in a model's Markdown reply.

use std::ops::Range;

/// A fenced code block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fence {
    /// The first word of the info string, lower-cased, without decoration
    /// (`{python}`, `.py`, `Python` → `python`, `py`, `python`); may be empty.
    /// A first line of the block that is only a language's name sets it
    /// instead, and is not part of `code` (see [`named_first`]).
    pub lang: String,
    pub code: String,
    /// Where the whole block, fences included, sits in the text.
    pub span: Range<usize>,
}

/// All fenced blocks of `text`, in order. Follows CommonMark where models
/// rely on it (backtick or tilde fences of three or more, a closing fence at
/// least as long as the opening one) and forgives what models get wrong:
/// fences indented any amount (inside lists), a missing closing fence at the
/// end of the reply.
pub(crate) fn fenced_blocks(text: &str) -> Vec<Fence> {
    let mut fences = Vec::new();
    let mut lines = LineIter::new(text);
    while let Some((start, line)) = lines.next() {
        let Some(open) = opening_fence(line) else {
            continue;
        };
        let mut code = String::new();
        let mut end = text.len();
        for (line_start, content) in lines.by_ref() {
            if is_closing_fence(content, open.ch, open.len) {
                end = line_start + content.len();
                // Include the newline after the closing fence, if any.
                if text[end..].starts_with("\r\n") {
                    end += 2;
                } else if text[end..].starts_with('\n') {
                    end += 1;
                }
                break;
            }
            code.push_str(strip_indent(content, open.indent));
            code.push('\n');
        }
        if code.ends_with('\n') {
            code.pop();
        }
        let (lang, code) = named_first(open.lang, code);
        fences.push(Fence {
            lang,
            code,
            span: start..end,
        });
    }
    fences
}

/// A block whose first line is only a language's name (```` ```shell ````,
/// then `python`, then Python code): a small model writes the language
/// again as the block's first line, where it runs as a command (starting
/// an interpreter) or is a syntax error. That language, and the code after
/// the line; else the block as it is.
fn named_first(lang: String, code: String) -> (String, String) {
    let mut lines = code.splitn(2, '\n');
    let first = lines.next().unwrap_or("").trim();
    let rest = lines.next().unwrap_or("");
    let named = !first.is_empty()
        && first.chars().all(|c| c.is_ascii_alphanumeric())
        && oi_kernels::install_hint(first).is_some();
    if named && !rest.trim().is_empty() {
        (first.to_ascii_lowercase(), rest.to_owned())
    } else {
        (lang, code)
    }
}

struct Opening {
    ch: char,
    len: usize,
    indent: usize,
    lang: String,
}

fn opening_fence(line: &str) -> Option<Opening> {
    let trimmed = line.trim_start();
    let indent = line.len() - trimmed.len();
    let ch = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = trimmed.chars().take_while(|c| *c == ch).count();
    if len < 3 {
        return None;
    }
    let info = trimmed[len..].trim();
    // A backtick fence's info string may not contain backticks (that is
    // inline code such as ```a``` instead).
    if ch == '`' && info.contains('`') {
        return None;
    }
    let word = info.split_whitespace().next().unwrap_or("");
    let lang = word
        .trim_matches(|c: char| c == '{' || c == '}' || c == '.' || c == ',')
        .split(['{', ','])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    Some(Opening {
        ch,
        len,
        indent,
        lang,
    })
}

fn is_closing_fence(line: &str, ch: char, len: usize) -> bool {
    let trimmed = line.trim();
    trimmed.len() >= len && trimmed.chars().all(|c| c == ch)
}

/// Removes up to `indent` leading spaces, as CommonMark does for content
/// lines of an indented fence.
fn strip_indent(line: &str, indent: usize) -> &str {
    let spaces = line.chars().take(indent).take_while(|c| *c == ' ').count();
    &line[spaces..]
}

/// Lines with their byte offsets; a line excludes its `\n` (and `\r`).
struct LineIter<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> LineIter<'a> {
    fn new(text: &'a str) -> Self {
        Self { text, pos: 0 }
    }
}

impl<'a> Iterator for LineIter<'a> {
    type Item = (usize, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.text.len() {
            return None;
        }
        let start = self.pos;
        let rest = &self.text[start..];
        let (line, advance) = match rest.find('\n') {
            Some(i) => (&rest[..i], i + 1),
            None => (rest, rest.len()),
        };
        self.pos += advance;
        Some((start, line.strip_suffix('\r').unwrap_or(line)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn blocks(text: &str) -> Vec<(String, String)> {
        fenced_blocks(text)
            .into_iter()
            .map(|f| (f.lang, f.code))
            .collect()
    }

    #[test]
    fn finds_blocks_in_order_with_their_language() {
        let text = "First:\n```python\nx = 1\nprint(x)\n```\nThen:\n```bash\nls -la\n```\n";
        assert_eq!(
            blocks(text),
            vec![
                ("python".into(), "x = 1\nprint(x)".into()),
                ("bash".into(), "ls -la".into())
            ]
        );
    }

    #[test]
    fn a_first_line_naming_a_language_sets_it_wherever_blocks_are_read() {
        // The span still covers the line, so a block left out of a request
        // goes whole.
        let text = "```shell\npython\nprint(1)\n```\n";
        let f = &fenced_blocks(text)[0];
        assert_eq!((f.lang.as_str(), f.code.as_str()), ("python", "print(1)"));
        assert_eq!(&text[f.span.clone()], text);
    }

    #[test]
    fn spans_cover_the_whole_block() {
        let text = "a\n```sh\necho hi\n```\nb";
        let f = &fenced_blocks(text)[0];
        assert_eq!(&text[f.span.clone()], "```sh\necho hi\n```\n");
    }

    #[test]
    fn handles_decorated_info_strings_tildes_and_long_fences() {
        let text = "~~~{.Python}\nprint(1)\n~~~\n````py title=\"x\"\n```\nnested\n```\n````";
        assert_eq!(
            blocks(text),
            vec![
                ("python".into(), "print(1)".into()),
                ("py".into(), "```\nnested\n```".into())
            ]
        );
    }

    #[test]
    fn forgives_indented_and_unclosed_fences() {
        let text = "1. Run:\n   ```python\n   for i in range(2):\n       print(i)\n   ```\n2. Then:\n```shell\necho end";
        assert_eq!(
            blocks(text),
            vec![
                ("python".into(), "for i in range(2):\n    print(i)".into()),
                ("shell".into(), "echo end".into())
            ]
        );
    }

    #[test]
    fn untagged_blocks_have_an_empty_language_and_crlf_is_fine() {
        assert_eq!(
            blocks("```\r\nls\r\n```\r\n"),
            vec![("".into(), "ls".into())]
        );
    }

    #[test]
    fn inline_code_is_not_a_fence() {
        assert!(blocks("use ```a``` here").is_empty());
        assert!(blocks("just `code` and ``more``").is_empty());
    }
}
