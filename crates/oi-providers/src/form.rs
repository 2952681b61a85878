//! A form a reply must take, held to by the server as it samples.
//!
//! Small models given the markdown harness often wrap one step in pages of
//! prose: an explanation after the code, a second block that runs a file
//! the first never wrote, or a pattern repeated until the token limit. A
//! server that can constrain sampling (llama.cpp's `grammar`, and oi's
//! built-in engine) keeps such a model to one well-formed step.

/// The form of a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyForm {
    /// Prose, then at most one fenced code block; the reply ends with the
    /// block's closing fence. A reply with no block is a final answer.
    OneCodeBlock,
}

/// [`ReplyForm::OneCodeBlock`] in llama.cpp's GBNF. A prose line may not
/// begin with three backticks (that opens the block); inside the block, a
/// line that does is its closing fence, after which only the end of the
/// reply may come. Up to two newlines may follow the closing fence: models
/// write the fence and the blank line after it as one token (`"```\n\n"`),
/// and refusing that token makes them spell the fence out of other
/// pieces, badly. No more than two, or a model that wants to go on writing
/// would fill the reply with newlines instead of ending it.
const ONE_CODE_BLOCK: &str = r#"root ::= line* (block | text)?
line ::= text? "\n"
text ::= [^`\n] [^\n]* | "`" ([^`\n] [^\n]*)? | "``" ([^`\n] [^\n]*)?
block ::= "```" [a-zA-Z0-9_+#.-]* "\n" line* "```" "\n"? "\n"?
"#;

impl ReplyForm {
    /// The grammar, in llama.cpp's GBNF, whose start rule is `root`.
    pub fn gbnf(self) -> &'static str {
        match self {
            Self::OneCodeBlock => ONE_CODE_BLOCK,
        }
    }

    /// Whether `reply` has this form (what the grammar accepts).
    pub fn admits(self, reply: &str) -> bool {
        match self {
            Self::OneCodeBlock => {
                let mut in_block = false;
                let mut lines = reply.split('\n').peekable();
                while let Some(line) = lines.next() {
                    let fence = line.starts_with("```");
                    if !in_block && fence {
                        let lang = &line[3..];
                        if !lang
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || "_+#.-".contains(c))
                            || lines.peek().is_none()
                        {
                            return false;
                        }
                        in_block = true;
                    } else if in_block && fence {
                        // The closing fence ends the reply (up to two
                        // newlines may follow it).
                        let rest: Vec<&str> = lines.collect();
                        return line == "```"
                            && rest.len() <= 2
                            && rest.iter().all(|l| l.is_empty());
                    }
                }
                !in_block
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ReplyForm::OneCodeBlock;

    #[test]
    fn one_code_block_admits_a_step_or_an_answer() {
        for reply in [
            "",
            "Done: the file has 3 lines.",
            "Done.\n",
            "Let me look.\n```python\nprint(open('a.txt').read())\n```",
            "```bash\nls -la\n```",
            "Inline `code` and ``two`` are prose.\n`x` starts a line.\n```sh\necho ok\n```",
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
    fn the_grammar_starts_at_root_and_names_each_rule_it_uses() {
        let gbnf = OneCodeBlock.gbnf();
        let defined: Vec<&str> = gbnf
            .lines()
            .filter_map(|l| l.split_once(" ::= ").map(|(name, _)| name))
            .collect();
        assert_eq!(defined, ["root", "line", "text", "block"]);
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
