//! One conversation: an oi session served by `oi_lmc::serve` over an
//! in-memory pipe, so the server speaks to it in the LMC stream's own
//! requests and lines.

use std::sync::Mutex;
use std::time::Instant;

use oi_core::SessionRequest;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// Why a conversation could not start, or a request failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub message: String,
    pub hint: Option<String>,
    /// The request was refused (a client's mistake), not the task failed.
    pub refused: bool,
}

impl Failure {
    pub(crate) fn new(message: impl Into<String>, hint: Option<String>) -> Self {
        Self {
            message: message.into(),
            hint,
            refused: false,
        }
    }

    /// From an LMC `error` line.
    pub(crate) fn from_line(line: &Value) -> Self {
        Self {
            refused: line["request"] == true,
            ..Self::new(
                line["content"].as_str().unwrap_or("the task failed"),
                line["hint"].as_str().map(str::to_owned),
            )
        }
    }
}

#[derive(Debug)]
pub(crate) struct Conversation {
    pub id: String,
    input: mpsc::UnboundedSender<String>,
    /// The session's lines, held by the request under way.
    pub output: tokio::sync::Mutex<mpsc::UnboundedReceiver<Value>>,
    last_used: Mutex<Instant>,
}

/// Whether a line ends the answer to a request.
fn is_complete(line: &Value) -> bool {
    line["role"] == "server" && line["type"] == "status"
}

impl Conversation {
    /// Starts the session and waits for it to be ready.
    pub(crate) async fn start(id: String, request: SessionRequest) -> Result<Self, Failure> {
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let (their_read, their_write) = tokio::io::split(theirs);
        tokio::spawn(async move {
            // Its errors are sent as lines before it returns.
            let _ = oi_lmc::serve(BufReader::new(their_read), their_write, request).await;
        });
        let (our_read, mut our_write) = tokio::io::split(ours);
        let (input, mut requests) = mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            while let Some(mut line) = requests.recv().await {
                line.push('\n');
                if our_write.write_all(line.as_bytes()).await.is_err() {
                    return;
                }
            }
            // Every sender is gone: the session finishes and stops.
            let _ = our_write.shutdown().await;
        });
        let (lines_tx, mut lines) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut reader = BufReader::new(our_read).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                if let Ok(value) = serde_json::from_str::<Value>(&line)
                    && lines_tx.send(value).is_err()
                {
                    return;
                }
            }
        });
        loop {
            let Some(line) = lines.recv().await else {
                return Err(Failure::new(
                    "the session stopped before it was ready",
                    None,
                ));
            };
            match (line["role"].as_str(), line["type"].as_str()) {
                (Some("server"), Some("ready")) => break,
                (Some("server"), Some("error")) => return Err(Failure::from_line(&line)),
                _ => {}
            }
        }
        Ok(Self {
            id,
            input,
            output: tokio::sync::Mutex::new(lines),
            last_used: Mutex::new(Instant::now()),
        })
    }

    /// Sends a request (an LMC stream request object).
    pub(crate) fn send(&self, request: &Value) {
        self.touch();
        let _ = self.input.send(request.to_string());
    }

    /// Sends `request` and gives each line of its answer — LMC chunks, and
    /// the task's errors — to `each`, answering confirmations with
    /// `no_approver`: nobody can be asked here. Stops early when `stop`
    /// completes or `each` returns false; returns whether the answer came
    /// whole.
    pub(crate) async fn unattended(
        &self,
        request: &Value,
        stop: impl std::future::Future<Output = ()>,
        mut each: impl FnMut(Result<Value, Failure>) -> bool,
    ) -> bool {
        let mut lines = self.output.lock().await;
        self.send(request);
        tokio::pin!(stop);
        loop {
            let line = tokio::select! {
                line = lines.recv() => line,
                () = &mut stop => return false,
            };
            let Some(line) = line else { return false };
            if is_complete(&line) {
                self.touch();
                return true;
            }
            let item = if line["type"] == "confirmation" {
                self.send(&json!({ "op": "approve", "id": line["id"], "decision": "no_approver" }));
                continue;
            } else if line["role"] == "server" {
                if line["type"] != "error" {
                    continue;
                }
                Err(Failure::from_line(&line))
            } else {
                Ok(line)
            };
            if !each(item) {
                return false;
            }
        }
    }

    pub(crate) fn interrupt(&self) {
        self.send(&json!({ "op": "interrupt" }));
    }

    pub(crate) fn touch(&self) {
        if let Ok(mut at) = self.last_used.lock() {
            *at = Instant::now();
        }
    }

    pub(crate) fn idle_for(&self) -> std::time::Duration {
        self.last_used
            .lock()
            .map(|at| at.elapsed())
            .unwrap_or_default()
    }
}
