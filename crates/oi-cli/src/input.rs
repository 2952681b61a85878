//! Lines typed by the user, read on demand without blocking the runtime.

use std::io::{self, BufRead};

use tokio::sync::mpsc;

/// Reads stdin one line per request, on a thread of its own.
///
/// A read starts only when a line is asked for, so nothing competes with an
/// editor or a child process for the terminal in between. If the asking
/// future is dropped (the user pressed Ctrl-C), the line still being read is
/// kept for the next request instead of being lost.
#[derive(Debug)]
pub struct LineReader {
    requests: std::sync::mpsc::Sender<()>,
    lines: mpsc::UnboundedReceiver<io::Result<Option<String>>>,
    outstanding: bool,
}

impl LineReader {
    /// Starts the reading thread.
    pub fn spawn() -> Self {
        let (requests, wanted) = std::sync::mpsc::channel::<()>();
        let (send, lines) = mpsc::unbounded_channel();
        std::thread::spawn(move || {
            let stdin = io::stdin();
            while wanted.recv().is_ok() {
                let mut line = String::new();
                let result = match stdin.lock().read_line(&mut line) {
                    Ok(0) => Ok(None),
                    Ok(_) => Ok(Some(line)),
                    Err(e) => Err(e),
                };
                let end = !matches!(result, Ok(Some(_)));
                if send.send(result).is_err() || end {
                    return;
                }
            }
        });
        Self {
            requests,
            lines,
            outstanding: false,
        }
    }

    /// The next line, with its newline; `None` at the end of input.
    pub async fn next_line(&mut self) -> io::Result<Option<String>> {
        if !self.outstanding {
            // The reader thread is gone only after end of input or an error,
            // which the receive below reports.
            let _ = self.requests.send(());
            self.outstanding = true;
        }
        let line = self.lines.recv().await;
        self.outstanding = false;
        line.unwrap_or(Ok(None))
    }
}

/// `prompt`, with what is piped in on stdin (when it is not a terminal)
/// added after it as a `<stdin>` block, as Codex does.
pub fn with_stdin(prompt: &str) -> std::io::Result<String> {
    use std::io::{IsTerminal, Read};
    if std::io::stdin().is_terminal() {
        return Ok(prompt.to_owned());
    }
    let mut piped = String::new();
    std::io::stdin().read_to_string(&mut piped)?;
    Ok(append_stdin(prompt, &piped))
}

/// `prompt` followed by `piped` in a `<stdin>` block (nothing when it is empty).
pub fn append_stdin(prompt: &str, piped: &str) -> String {
    if piped.trim().is_empty() {
        return prompt.to_owned();
    }
    format!(
        "{prompt}\n\n<stdin>\n{}\n</stdin>",
        piped.trim_end_matches(['\n', '\r'])
    )
}
