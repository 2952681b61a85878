//! A forgiving reader of shell code, for the risk classifier.
//!
//! It splits a script into simple commands the way bash would — quotes,
//! escapes, `;`, `&&`, `||`, pipes, `&`, subshells and brace groups,
//! redirections, comments, here-documents — and collects the scripts
//! nested in `$(…)`, backticks and `<(…)`, so they are judged too. It never
//! fails: code a model wrote half-broken is read as far as it goes, since
//! missing a dangerous command matters more than precision.

/// What a word holds where a command's output (`$(…)`, `` `…` ``) is
/// substituted: a variable no script sets, so the word reads as computed.
pub(crate) const SUBSTITUTION: &str = "$__oi_output";

/// One simple command: its words (quotes removed) and its redirections.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct SimpleCommand {
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
    /// The commands after this one in the same pipeline read its output.
    pub piped_to_next: bool,
    /// What it reads on its standard input from the script itself: a
    /// here-document's body or a here-string's word.
    pub stdin_text: Option<Word>,
}

/// A word after quote removal; `expanded` when it held an unquoted or
/// double-quoted `$…` expansion or a glob (its final value is unknown).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Word {
    pub text: String,
    pub expanded: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Redirect {
    /// `>`, `>>`, `<`, `&>`, `>|` …
    pub op: String,
    pub target: Word,
}

impl Redirect {
    pub(crate) fn writes(&self) -> bool {
        (self.op.contains('>') && !self.op.contains('&')) || self.op == "&>" || self.op == "&>>"
    }
}

/// A parsed script: its simple commands in order (pipelines kept in
/// order, with `piped_to_next` marking the pipes), and the scripts nested
/// in command and process substitutions.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Script {
    pub commands: Vec<SimpleCommand>,
    pub nested: Vec<String>,
}

pub(crate) fn parse(source: &str) -> Script {
    let mut parser = Parser {
        chars: source.chars().collect(),
        pos: 0,
        script: Script::default(),
        current: SimpleCommand::default(),
        pending_heredocs: Vec::new(),
    };
    parser.run();
    parser.script
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    script: Script,
    current: SimpleCommand,
    /// Here-documents whose bodies start at the next newline: the
    /// delimiter, whether it was quoted (no expansions in the body), and
    /// the index of the command they feed.
    pending_heredocs: Vec<(String, bool, usize)>,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn run(&mut self) {
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' => self.pos += 1,
                '\\' if self.peek_at(1) == Some('\n') => self.pos += 2,
                '\n' => {
                    self.pos += 1;
                    self.end_command(false);
                    self.skip_heredoc_bodies();
                }
                '#' => self.skip_comment(),
                ';' => {
                    self.pos += 1;
                    // `;;` in `case` is a separator too.
                    if self.peek() == Some(';') {
                        self.pos += 1;
                    }
                    self.end_command(false);
                }
                '&' if self.peek_at(1) == Some('&') => {
                    self.pos += 2;
                    self.end_command(false);
                }
                '&' if self.peek_at(1) == Some('>') => self.redirect(),
                '&' => {
                    self.pos += 1;
                    self.end_command(false);
                }
                '|' if self.peek_at(1) == Some('|') => {
                    self.pos += 2;
                    self.end_command(false);
                }
                '|' => {
                    self.pos += 1;
                    // `|&` pipes stderr too.
                    if self.peek() == Some('&') {
                        self.pos += 1;
                    }
                    self.end_command(true);
                }
                '(' if self.peek_at(1) == Some('(') => self.skip_arithmetic(),
                '(' | ')' => {
                    self.pos += 1;
                    self.end_command(false);
                }
                '<' | '>' if self.peek_at(1) == Some('(') => {
                    // Process substitution: a nested script.
                    self.pos += 2;
                    let inner = self.balanced(')');
                    self.script.nested.push(inner);
                    self.current.words.push(Word {
                        text: "/dev/fd/63".to_owned(),
                        expanded: true,
                    });
                }
                '<' | '>' => self.redirect(),
                _ if c.is_ascii_digit() && self.is_fd_redirect() => self.redirect(),
                _ => {
                    let word = self.word();
                    self.push_word(word);
                }
            }
        }
        self.end_command(false);
    }

    fn push_word(&mut self, word: Word) {
        // Reserved words and braces only group commands.
        let structural = [
            "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for",
            "in", "case", "esac", "function", "!", "select",
        ];
        if self.current.words.is_empty()
            && !word.expanded
            && structural.contains(&word.text.as_str())
        {
            return;
        }
        // `for NAME in …` / `case WORD in`: the loop's words are not a command.
        self.current.words.push(word);
    }

    fn end_command(&mut self, piped: bool) {
        let mut command = std::mem::take(&mut self.current);
        if command.words.is_empty() && command.redirects.is_empty() {
            if piped && let Some(last) = self.script.commands.last_mut() {
                last.piped_to_next = true;
            }
            return;
        }
        command.piped_to_next = piped;
        // A function definition `name() {` leaves `name` alone before `(`.
        self.script.commands.push(command);
    }

    fn skip_comment(&mut self) {
        while let Some(c) = self.peek() {
            if c == '\n' {
                break;
            }
            self.pos += 1;
        }
    }

    fn skip_arithmetic(&mut self) {
        self.pos += 2;
        let mut depth = 1;
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 && self.peek() == Some(')') {
                        self.pos += 1;
                        return;
                    }
                }
                _ => {}
            }
        }
    }

    /// Whether digits here start a redirection (`2>`, `2>&1`).
    fn is_fd_redirect(&self) -> bool {
        let mut i = self.pos;
        while self.chars.get(i).is_some_and(char::is_ascii_digit) {
            i += 1;
        }
        matches!(self.chars.get(i), Some('>' | '<'))
            && (self.pos == 0
                || self
                    .chars
                    .get(self.pos - 1)
                    .is_none_or(|c| c.is_whitespace() || ";&|(".contains(*c)))
    }

    fn redirect(&mut self) {
        let mut op = String::new();
        while let Some(c) = self.peek() {
            if c.is_ascii_digit() || "<>&|".contains(c) {
                // `2>&1`: the `&` then a digit is a duplication, no file.
                op.push(c);
                self.pos += 1;
                if op.ends_with(">&") || op.ends_with("<&") {
                    break;
                }
            } else {
                break;
            }
        }
        if op.ends_with("<<<") {
            while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
                self.pos += 1;
            }
            let word = self.word();
            self.current.stdin_text = Some(word);
            return;
        }
        if op.ends_with("<<")
            || op.ends_with("<<-")
            || self.peek() == Some('-') && op.ends_with("<<")
        {
            if self.peek() == Some('-') {
                self.pos += 1;
            }
            while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
                self.pos += 1;
            }
            let quoted = self.peek().is_some_and(|c| c == '\'' || c == '"');
            let delimiter = self.word();
            let index = self.script.commands.len();
            self.pending_heredocs.push((delimiter.text, quoted, index));
            return;
        }
        while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
            self.pos += 1;
        }
        if op.ends_with('&') && self.peek().is_some_and(|c| c.is_ascii_digit() || c == '-') {
            let _ = self.word();
            return;
        }
        let target = self.word();
        let op: String = op.chars().filter(|c| !c.is_ascii_digit()).collect();
        self.current.redirects.push(Redirect { op, target });
    }

    fn skip_heredoc_bodies(&mut self) {
        for (delimiter, quoted, index) in std::mem::take(&mut self.pending_heredocs) {
            let mut body = String::new();
            loop {
                let start = self.pos;
                while self.peek().is_some_and(|c| c != '\n') {
                    self.pos += 1;
                }
                let line: String = self.chars[start..self.pos].iter().collect();
                if self.peek().is_some() {
                    self.pos += 1;
                }
                if line.trim_start_matches('\t') == delimiter {
                    break;
                }
                body.push_str(&line);
                body.push('\n');
                if self.peek().is_none() {
                    break;
                }
            }
            if let Some(command) = self.script.commands.get_mut(index) {
                command.stdin_text = Some(Word {
                    expanded: !quoted && (body.contains('$') || body.contains('`')),
                    text: body,
                });
            }
        }
    }

    /// Text up to the matching `close`, with nesting and quotes respected;
    /// the position ends after `close`.
    fn balanced(&mut self, close: char) -> String {
        let open = if close == ')' { '(' } else { close };
        let start = self.pos;
        let mut depth = 1;
        while let Some(c) = self.peek() {
            match c {
                '\\' => self.pos += 1,
                '\'' => {
                    self.pos += 1;
                    while self.peek().is_some_and(|c| c != '\'') {
                        self.pos += 1;
                    }
                }
                '"' => {
                    self.pos += 1;
                    while let Some(c) = self.peek() {
                        if c == '\\' {
                            self.pos += 1;
                        } else if c == '"' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                _ if c == close && open != close => {
                    depth -= 1;
                    if depth == 0 {
                        let inner: String = self.chars[start..self.pos].iter().collect();
                        self.pos += 1;
                        return inner;
                    }
                }
                _ if c == open && open != close => depth += 1,
                _ => {}
            }
            self.pos += 1;
        }
        self.chars[start.min(self.chars.len())..].iter().collect()
    }

    /// One word, with quotes removed and substitutions collected.
    fn word(&mut self) -> Word {
        let mut word = Word::default();
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => break,
                '\\' => {
                    self.pos += 1;
                    if let Some(next) = self.peek() {
                        if next != '\n' {
                            word.text.push(next);
                        }
                        self.pos += 1;
                    }
                }
                '\'' => {
                    self.pos += 1;
                    while let Some(c) = self.peek() {
                        self.pos += 1;
                        if c == '\'' {
                            break;
                        }
                        word.text.push(c);
                    }
                }
                '"' => {
                    self.pos += 1;
                    self.double_quoted(&mut word);
                }
                '$' => self.dollar(&mut word),
                '`' => {
                    self.pos += 1;
                    let start = self.pos;
                    while self.peek().is_some_and(|c| c != '`') {
                        if self.peek() == Some('\\') {
                            self.pos += 1;
                        }
                        self.pos += 1;
                    }
                    let inner: String = self.chars[start..self.pos.min(self.chars.len())]
                        .iter()
                        .collect();
                    self.pos += 1;
                    self.script.nested.push(inner);
                    word.text.push_str(SUBSTITUTION);
                    word.expanded = true;
                }
                '*' | '?' | '[' => {
                    word.expanded = true;
                    word.text.push(c);
                    self.pos += 1;
                }
                _ => {
                    word.text.push(c);
                    self.pos += 1;
                }
            }
        }
        word
    }

    fn double_quoted(&mut self, word: &mut Word) {
        while let Some(c) = self.peek() {
            match c {
                '"' => {
                    self.pos += 1;
                    return;
                }
                '\\' => {
                    self.pos += 1;
                    if let Some(next) = self.peek() {
                        if !"$`\"\\\n".contains(next) {
                            word.text.push('\\');
                        }
                        if next != '\n' {
                            word.text.push(next);
                        }
                        self.pos += 1;
                    }
                }
                '$' => self.dollar(word),
                '`' => {
                    self.pos += 1;
                    let start = self.pos;
                    while self.peek().is_some_and(|c| c != '`') {
                        self.pos += 1;
                    }
                    let inner: String = self.chars[start..self.pos.min(self.chars.len())]
                        .iter()
                        .collect();
                    self.pos += 1;
                    self.script.nested.push(inner);
                    word.text.push_str(SUBSTITUTION);
                    word.expanded = true;
                }
                _ => {
                    word.text.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// `$(…)`, `$((…))`, `${…}`, `$NAME`, `$'…'`.
    fn dollar(&mut self, word: &mut Word) {
        match self.peek_at(1) {
            Some('(') if self.peek_at(2) == Some('(') => {
                self.pos += 1;
                self.skip_arithmetic();
                word.text.push('0');
                word.expanded = true;
            }
            Some('(') => {
                self.pos += 2;
                let inner = self.balanced(')');
                self.script.nested.push(inner);
                word.text.push_str(SUBSTITUTION);
                word.expanded = true;
            }
            Some('{') => {
                self.pos += 2;
                let inner = self.balanced('}');
                word.text.push_str(&format!("${{{inner}}}"));
                word.expanded = true;
            }
            Some('\'') => {
                self.pos += 2;
                while let Some(c) = self.peek() {
                    self.pos += 1;
                    match c {
                        '\'' => break,
                        '\\' => {
                            if let Some(next) = self.peek() {
                                self.pos += 1;
                                word.text.push(match next {
                                    'n' => '\n',
                                    't' => '\t',
                                    other => other,
                                });
                            }
                        }
                        other => word.text.push(other),
                    }
                }
            }
            Some(c) if c.is_ascii_alphanumeric() || "_@*#?$!-".contains(c) => {
                self.pos += 1;
                word.text.push('$');
                if c.is_ascii_alphabetic() || c == '_' {
                    while let Some(c) = self.peek() {
                        if c.is_ascii_alphanumeric() || c == '_' {
                            word.text.push(c);
                            self.pos += 1;
                        } else {
                            break;
                        }
                    }
                } else {
                    word.text.push(c);
                    self.pos += 1;
                }
                word.expanded = true;
            }
            _ => {
                word.text.push('$');
                self.pos += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(script: &Script) -> Vec<Vec<String>> {
        script
            .commands
            .iter()
            .map(|c| c.words.iter().map(|w| w.text.clone()).collect())
            .collect()
    }

    #[test]
    fn splits_commands_at_operators_and_removes_quotes() {
        let s = parse("cd 'my dir' && rm -rf \"build\" ; echo a\\ b | grep -v x || true &");
        assert_eq!(
            words(&s),
            [
                vec!["cd", "my dir"],
                vec!["rm", "-rf", "build"],
                vec!["echo", "a b"],
                vec!["grep", "-v", "x"],
                vec!["true"],
            ]
        );
        assert!(s.commands[2].piped_to_next && !s.commands[3].piped_to_next);
    }

    #[test]
    fn collects_substitutions_subshells_and_redirections() {
        let s = parse(
            "(cd /tmp; ls) > out.txt 2>&1\necho $(rm -rf ~/x) `whoami` >> ~/.bashrc\ndiff <(sort a) b",
        );
        assert_eq!(words(&s)[0], ["cd", "/tmp"]);
        assert_eq!(s.nested, ["rm -rf ~/x", "whoami", "sort a"]);
        let echo = s
            .commands
            .iter()
            .find(|c| c.words.first().is_some_and(|w| w.text == "echo"))
            .unwrap();
        let redirect = &echo.redirects[0];
        assert_eq!(
            (redirect.op.as_str(), redirect.target.text.as_str()),
            (">>", "~/.bashrc")
        );
        assert!(redirect.writes());
        // The subshell's redirection stands alone; `2>&1` is a
        // duplication, not a file.
        let group = &s.commands[2];
        assert!(group.words.is_empty());
        assert_eq!(group.redirects.len(), 1);
        assert_eq!(group.redirects[0].target.text, "out.txt");
    }

    #[test]
    fn comments_heredocs_and_keywords_are_not_commands() {
        let s = parse(
            "# rm -rf /\ncat <<EOF > notes.txt\nrm -rf /\nEOF\nif [ -d x ]; then rm -r x; fi\nfor f in *.log; do gzip \"$f\"; done",
        );
        assert_eq!(
            words(&s),
            [
                vec!["cat"],
                vec!["[", "-d", "x", "]"],
                vec!["rm", "-r", "x"],
                vec!["f", "in", "*.log"],
                vec!["gzip", "$f"],
            ]
        );
        assert!(s.commands[4].words[1].expanded);
        // The body is kept as what the command reads.
        assert_eq!(
            s.commands[0].stdin_text.as_ref().map(|w| w.text.as_str()),
            Some("rm -rf /\n")
        );
        let s = parse("bash <<'X'\necho $HOME\nX\nsh <<< \"rm -rf $D\"");
        let body = s.commands[0].stdin_text.as_ref().unwrap();
        assert_eq!((body.text.as_str(), body.expanded), ("echo $HOME\n", false));
        let word = s.commands[1].stdin_text.as_ref().unwrap();
        assert_eq!((word.text.as_str(), word.expanded), ("rm -rf $D", true));
    }

    #[test]
    fn broken_code_is_read_as_far_as_it_goes() {
        let s = parse("echo \"unterminated $(rm -rf /");
        assert_eq!(s.nested, ["rm -rf /"]);
        let s = parse("rm -rf '/tmp/x");
        assert_eq!(words(&s), [vec!["rm", "-rf", "/tmp/x"]]);
    }
}
