//! A form a reply must take, held to by the server as it samples.
//!
//! Small models given the markdown harness often wrap one step in pages of
//! prose: an explanation after the code, a second block that runs a file
//! the first never wrote, or a pattern repeated until the token limit. A
//! server that can constrain sampling (llama.cpp's `grammar`, and oi's
//! built-in engine) keeps such a model to one well-formed step.

use std::borrow::Cow;

/// The form of a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyForm {
    /// Prose, then at most one fenced code block; the reply ends with the
    /// block's closing fence. A reply with no block is a final answer.
    OneCodeBlock,
    /// At most one short line of prose (no backticks, up to 160
    /// characters), then exactly one fenced code block
    /// tagged with one of these languages; the reply ends with its closing
    /// fence. For a reply that must act: the first of a task, or one
    /// answering a request to run code. Free to write prose first, a small
    /// model told its task is not done wrote "The task is done." until its
    /// token limit and never reached the block. The block holds at least
    /// one line that is not blank: held to a block it had nothing for, a
    /// small model closed it at once, and the empty step ended the task.
    /// Tags other than `[a-z0-9_+#.-]` words are left out.
    CodeStep(Vec<String>),
}

/// [`ReplyForm::OneCodeBlock`] in llama.cpp's GBNF. A prose line may not
/// begin with three backticks or tildes, indented or not (either opens a
/// block: models indent fences inside lists, and oi runs those too);
/// inside the block, a line that does is its closing fence, after which
/// only the end of the reply may come. Up to two newlines may follow the closing fence: models
/// write the fence and the blank line after it as one token (`"```\n\n"`),
/// and refusing that token makes them spell the fence out of other
/// pieces, badly. No more than two, or a model that wants to go on writing
/// would fill the reply with newlines instead of ending it.
const ONE_CODE_BLOCK: &str = r#"root ::= line* (block | text)?
block ::= "```" [a-zA-Z0-9_+#.-]* "\n" line* "```" "\n"? "\n"?
"#;

/// Characters of the line of prose a code step may begin with, at most.
const NOTE_CHARS: usize = 160;

/// The lines of prose and code both forms share (see above).
const LINES: &str = r#"line ::= text? "\n"
text ::= [ \t]+ | [ \t]* lead
lead ::= [^`~ \t\n] [^\n]* | "`" ([^`\n] [^\n]*)? | "``" ([^`\n] [^\n]*)? | "~" ([^~\n] [^\n]*)? | "~~" ([^~\n] [^\n]*)?
"#;

impl ReplyForm {
    /// The grammar, in llama.cpp's GBNF, whose start rule is `root`.
    pub fn gbnf(&self) -> Cow<'static, str> {
        match self {
            Self::OneCodeBlock => Cow::Owned(format!("{ONE_CODE_BLOCK}{LINES}")),
            Self::CodeStep(tags) => {
                let tags: Vec<String> = usable_tags(tags).map(|t| format!("\"{t}\"")).collect();
                let tag = if tags.is_empty() {
                    "[a-zA-Z0-9_+#.-]+".to_owned()
                } else {
                    tags.join(" | ")
                };
                let rest = NOTE_CHARS - 1;
                Cow::Owned(format!(
                    "root ::= (note \"\\n\")? \"```\" tag \"\\n\" blank* code line* \"```\" \"\\n\"? \"\\n\"?\nnote ::= [^`~ \\t\\n] [^`\\n]{{0,{rest}}}\ntag ::= {tag}\nblank ::= [ \\t]* \"\\n\"\ncode ::= [ \\t]* lead \"\\n\"\n{LINES}"
                ))
            }
        }
    }

    /// Whether `reply` has this form (what the grammar accepts).
    pub fn admits(&self, reply: &str) -> bool {
        let mut in_block = false;
        let mut code = false;
        let mut prose = 0;
        let mut lines = reply.split('\n').peekable();
        while let Some(line) = lines.next() {
            let lead = line.trim_start_matches([' ', '\t']);
            let fence = lead.starts_with("```") || lead.starts_with("~~~");
            if !in_block && !fence && matches!(self, Self::CodeStep(_)) {
                // One short line of prose, at most, before the block.
                prose += 1;
                let note = line
                    .chars()
                    .next()
                    .is_some_and(|c| !matches!(c, '`' | '~' | ' ' | '\t'))
                    && !line.contains('`')
                    && line.chars().count() <= NOTE_CHARS;
                if prose > 1 || !note {
                    return false;
                }
                continue;
            }
            if !in_block && fence {
                let lang = &line[3..];
                let tagged = match self {
                    Self::OneCodeBlock => lang
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_+#.-".contains(c)),
                    Self::CodeStep(tags) => {
                        let mut usable = usable_tags(tags).peekable();
                        if usable.peek().is_none() {
                            !lang.is_empty() && lang.chars().all(is_tag_char)
                        } else {
                            usable.any(|t| t == lang)
                        }
                    }
                };
                if !line.starts_with("```") || !tagged || lines.peek().is_none() {
                    return false;
                }
                in_block = true;
            } else if in_block && fence {
                // The closing fence ends the reply (up to two newlines may
                // follow it); a code step's block is not empty.
                let rest: Vec<&str> = lines.collect();
                return line == "```"
                    && rest.len() <= 2
                    && rest.iter().all(|l| l.is_empty())
                    && (code || matches!(self, Self::OneCodeBlock));
            } else if in_block {
                code |= !lead.is_empty();
            }
        }
        !in_block && matches!(self, Self::OneCodeBlock)
    }
}

fn is_tag_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_+#.-".contains(c)
}

/// The tags a grammar can name as they are (no quoting needed).
fn usable_tags(tags: &[String]) -> impl Iterator<Item = &str> {
    tags.iter()
        .map(String::as_str)
        .filter(|t| !t.is_empty() && t.chars().all(is_tag_char))
}

#[cfg(test)]
mod tests {
    use super::ReplyForm::{self, CodeStep, OneCodeBlock};

    fn step() -> ReplyForm {
        CodeStep(vec![
            "python".into(),
            "sh".into(),
            "bash".into(),
            "a b".into(),
        ])
    }

    #[test]
    fn one_code_block_admits_a_step_or_an_answer() {
        for reply in [
            "",
            "Done: the file has 3 lines.",
            "Done.\n",
            "Let me look.\n```python\nprint(open('a.txt').read())\n```",
            "```bash\nls -la\n```",
            "Inline `code` and ``two`` are prose.\n`x` starts a line.\n```sh\necho ok\n```",
            "  indented prose\n   \n~ and ~~ too\n```sh\n  ls\n```",
            "```\nno language\n```",
            "```python\n```",
            "```python\nprint(1)\n```\n",
            "```python\nprint(1)\n```\n\n",
        ] {
            assert!(OneCodeBlock.admits(reply), "{reply:?}");
        }
    }

    #[test]
    fn one_code_block_refuses_more_than_one_step() {
        for reply in [
            // Text after the block.
            "```python\nprint(1)\n```\nThis prints 1.",
            "```python\nprint(1)\n```\n\n\n",
            // Two blocks.
            "```python\nx = 1\n```\n```bash\npython x.py\n```",
            // Blocks indented in a list (oi runs those too), or fenced
            // with tildes.
            "1. Read it:\n   ```python\n   x = 1\n   ```\n2. Then:\n   ```python\n   y = 2\n   ```",
            "~~~python\nx = 1\n~~~\n```sh\nls\n```",
            // A block that never closes, or closes mid-line.
            "```python\nprint(1)\n",
            "```python\nprint(1)```",
            // A fence line with more than a language on it.
            "``` python\nprint(1)\n```",
            "```python\nprint(1)\n``` done",
        ] {
            assert!(!OneCodeBlock.admits(reply), "{reply:?}");
        }
    }

    #[test]
    fn a_code_step_must_run_one_block_in_a_language_it_names() {
        let long = format!("{}\n```sh\nls\n```", "a".repeat(super::NOTE_CHARS));
        for reply in [
            "```python\nprint(1)\n```",
            "Let me look.\n```sh\nls\n```\n\n",
            &long,
        ] {
            assert!(step().admits(reply), "{reply:?}");
        }
        for reply in [
            // An answer, or a block that does not run.
            "Done.",
            // More than one short line of prose before the block.
            "Done.\nLet me look.\n```sh\nls\n```",
            "Let me look.\n\n```sh\nls\n```",
            "Look at `a.txt`:\n```sh\nls\n```",
            &format!("a{long}"),
            "```\nJohn Doe\n```",
            "```plaintext\nJohn Doe\n```",
            // A tag the grammar cannot name as it is.
            "```a b\nx\n```",
            "```python\nprint(1)\n```\nThis prints 1.",
            // A block with nothing to run.
            "I can't tell.\n```python\n```",
            "```python\n  \n\n```",
        ] {
            assert!(!step().admits(reply), "{reply:?}");
        }
        let any = CodeStep(vec!["no tag".into()]);
        assert!(any.admits("```ruby\nputs 1\n```"));
        assert!(!any.admits("```\nputs 1\n```"));
        let gbnf = step().gbnf();
        assert!(
            gbnf.contains("tag ::= \"python\" | \"sh\" | \"bash\"\n"),
            "{gbnf}"
        );
    }

    #[test]
    fn each_grammar_starts_at_root_and_names_each_rule_it_uses() {
        for (form, rules) in [
            (OneCodeBlock, &["root", "block", "line", "text", "lead"][..]),
            (
                step(),
                &[
                    "root", "note", "tag", "blank", "code", "line", "text", "lead",
                ][..],
            ),
            (
                CodeStep(Vec::new()),
                &[
                    "root", "note", "tag", "blank", "code", "line", "text", "lead",
                ][..],
            ),
        ] {
            let gbnf = form.gbnf();
            let defined: Vec<&str> = gbnf
                .lines()
                .filter_map(|l| l.split_once(" ::= ").map(|(name, _)| name))
                .collect();
            assert_eq!(defined, rules);
            for rule in gbnf.lines().filter_map(|l| l.split_once(" ::= ")) {
                // Every bare word outside quotes and classes is a defined rule.
                let mut rest = rule.1.to_owned();
                for (open, close) in [('"', '"'), ('[', ']')] {
                    while let Some(start) = rest.find(open) {
                        let Some(len) = rest[start + 1..].find(close) else {
                            break;
                        };
                        rest.replace_range(start..start + len + 2, " ");
                    }
                }
                for word in rest
                    .split(|c: char| !c.is_ascii_alphabetic())
                    .filter(|w| !w.is_empty())
                {
                    assert!(defined.contains(&word), "{word} in {rule:?}");
                }
            }
        }
    }
}
