//! Program output made safe to print on a terminal.

/// Makes program output safe to print on a terminal: colours (SGR escape
/// sequences) pass, other escape sequences (cursor moves, screen clears,
/// window titles, OSC commands) are dropped, and control characters other
/// than newline, tab, carriage return and backspace are shown as visible
/// symbols (`␛`, `␇` …). Sequences split between pieces are handled.
#[derive(Debug, Default)]
pub struct TerminalFilter {
    state: FilterState,
}

#[derive(Debug, Default)]
enum FilterState {
    #[default]
    Text,
    /// After ESC.
    Escape,
    /// Inside `ESC [`, with the parameters so far.
    Csi(String),
    /// Inside `ESC ]` (an operating system command), with its length so far.
    Osc(usize),
    /// ESC inside an OSC: `ESC \` ends it.
    OscEscape(usize),
}

impl TerminalFilter {
    /// Longest escape sequence followed; longer ones are dropped as text.
    const MAX_CSI: usize = 64;
    const MAX_OSC: usize = 4096;

    pub fn filter(&mut self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        for c in text.chars() {
            self.state = match std::mem::take(&mut self.state) {
                FilterState::Text => Self::text(c, &mut out),
                FilterState::Escape => match c {
                    '[' => FilterState::Csi(String::new()),
                    ']' => FilterState::Osc(0),
                    // Any other escape (a reset, a charset switch) is dropped.
                    _ => FilterState::Text,
                },
                FilterState::Csi(mut params) => match c {
                    '0'..='9' | ';' | ':' | '<' | '=' | '>' | '?' | ' '..='/' => {
                        params.push(c);
                        if params.len() > Self::MAX_CSI {
                            FilterState::Text
                        } else {
                            FilterState::Csi(params)
                        }
                    }
                    '@'..='~' => {
                        if c == 'm' && params.chars().all(|p| p.is_ascii_digit() || p == ';') {
                            out.push_str("\x1b[");
                            out.push_str(&params);
                            out.push('m');
                        }
                        FilterState::Text
                    }
                    // Not a sequence after all.
                    _ => Self::text(c, &mut out),
                },
                FilterState::Osc(n) | FilterState::OscEscape(n) if n > Self::MAX_OSC => {
                    Self::text(c, &mut out)
                }
                FilterState::Osc(n) => match c {
                    '\x07' => FilterState::Text,
                    '\x1b' => FilterState::OscEscape(n + 1),
                    _ => FilterState::Osc(n + 1),
                },
                FilterState::OscEscape(n) => match c {
                    '\\' => FilterState::Text,
                    _ => FilterState::Osc(n + 1),
                },
            };
        }
        out
    }

    fn text(c: char, out: &mut String) -> FilterState {
        match c {
            '\x1b' => return FilterState::Escape,
            '\n' | '\t' | '\r' | '\x08' => out.push(c),
            '\0'..='\x1f' => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}')),
            '\x7f' => out.push('\u{2421}'),
            // C1 controls: some terminals act on them as escapes.
            '\u{80}'..='\u{9f}' => out.push('\u{fffd}'),
            _ => out.push(c),
        }
        FilterState::Text
    }
}
