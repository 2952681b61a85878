//! Everything read from the terminal goes through one thread: the prompt's
//! line editor, approval keys, pickers and lines typed for a waiting
//! program. The session's async loop asks and awaits the answer; the
//! blocking reads never stall the runtime.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use reedline::{Reedline, Signal};
use tokio::sync::mpsc;

use crate::dialog::{self, Decision, Picker};
use crate::editor::{OiPrompt, ProgramPrompt, editor};

/// What a prompt read gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineResult {
    Text(String),
    /// Ctrl-C at the prompt.
    Interrupted,
    /// Ctrl-D on an empty line, or the end of input.
    Eof,
}

#[derive(Debug)]
enum Request {
    Prompt,
    /// A line for a running program's input (no history, no prompt).
    Line,
    Decision,
    Pick(Picker),
}

#[derive(Debug)]
enum Reply {
    Line(LineResult),
    Decision(Decision),
    Picked(Option<String>),
}

/// The terminal reader (see the module docs).
#[derive(Debug)]
pub struct TerminalInput {
    requests: std::sync::mpsc::Sender<(u64, Request)>,
    replies: mpsc::UnboundedReceiver<(u64, io::Result<Reply>)>,
    next: u64,
    /// The question asked but not answered yet (its id and kind): asking
    /// the same kind again waits for that answer instead of asking twice,
    /// so a read can be given up on and taken up again (in a `select!`).
    outstanding: Option<(u64, std::mem::Discriminant<Request>)>,
}

impl TerminalInput {
    /// Starts the thread, with the prompt's history in `history` and path
    /// completion relative to `cwd`.
    pub fn spawn(history: &Path, cwd: &Path) -> Self {
        let (requests, incoming) = std::sync::mpsc::channel::<(u64, Request)>();
        let (send, replies) = mpsc::unbounded_channel();
        let history: PathBuf = history.to_path_buf();
        let cwd = cwd.to_path_buf();
        std::thread::spawn(move || {
            let mut editor = editor(&history, &cwd);
            let prompt = OiPrompt;
            let mut program_line = Reedline::create();
            while let Ok((id, request)) = incoming.recv() {
                let reply = match request {
                    Request::Prompt => editor.read_line(&prompt).map(|signal| {
                        Reply::Line(match signal {
                            Signal::Success(text) => {
                                // On disk at once: the session may end
                                // without this thread winding down.
                                let _ = editor.sync_history();
                                LineResult::Text(text)
                            }
                            Signal::CtrlC => LineResult::Interrupted,
                            _ => LineResult::Eof,
                        })
                    }),
                    Request::Line => program_line.read_line(&ProgramPrompt).map(|signal| {
                        Reply::Line(match signal {
                            Signal::Success(text) => LineResult::Text(text + "\n"),
                            Signal::CtrlC => LineResult::Interrupted,
                            _ => LineResult::Eof,
                        })
                    }),
                    Request::Decision => dialog::read_decision().map(Reply::Decision),
                    Request::Pick(picker) => {
                        let mut out = io::stdout();
                        let picked = dialog::pick(&mut out, picker);
                        let _ = out.flush();
                        picked.map(Reply::Picked)
                    }
                };
                if send.send((id, reply)).is_err() {
                    return;
                }
            }
        });
        Self {
            requests,
            replies,
            next: 0,
            outstanding: None,
        }
    }

    async fn ask(&mut self, request: Request) -> io::Result<Reply> {
        let kind = std::mem::discriminant(&request);
        let id = match self.outstanding {
            Some((id, asked)) if asked == kind && !matches!(request, Request::Pick(_)) => id,
            _ => {
                self.next += 1;
                let id = self.next;
                self.requests
                    .send((id, request))
                    .map_err(|_| io::Error::other("the terminal reader stopped"))?;
                self.outstanding = Some((id, kind));
                id
            }
        };
        loop {
            match self.replies.recv().await {
                // An answer to an earlier question that was given up on.
                Some((answered, _)) if answered != id => continue,
                Some((_, reply)) => {
                    self.outstanding = None;
                    return reply;
                }
                None => return Err(io::Error::other("the terminal reader stopped")),
            }
        }
    }

    /// The next line at the prompt.
    pub async fn prompt(&mut self) -> io::Result<LineResult> {
        match self.ask(Request::Prompt).await? {
            Reply::Line(line) => Ok(line),
            _ => Err(io::Error::other("unexpected answer")),
        }
    }

    /// A plain line (for a program waiting for input).
    pub async fn line(&mut self) -> io::Result<LineResult> {
        match self.ask(Request::Line).await? {
            Reply::Line(line) => Ok(line),
            _ => Err(io::Error::other("unexpected answer")),
        }
    }

    /// One answer key at the approval prompt.
    pub async fn decision(&mut self) -> io::Result<Decision> {
        match self.ask(Request::Decision).await? {
            Reply::Decision(decision) => Ok(decision),
            _ => Err(io::Error::other("unexpected answer")),
        }
    }

    /// A pick from a list; `None` when cancelled.
    pub async fn pick(&mut self, picker: Picker) -> io::Result<Option<String>> {
        match self.ask(Request::Pick(picker)).await? {
            Reply::Picked(picked) => Ok(picked),
            _ => Err(io::Error::other("unexpected answer")),
        }
    }
}
