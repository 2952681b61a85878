//! [`BuiltinClient`]: the built-in model behind oi's provider interface.
//!
//! The weights are loaded on a thread of the client's own at the first
//! request (or when the agent asks for the context window), and stay
//! loaded while the client lives. Each request's messages go through the
//! chat template the GGUF carries; the tokens the last prompt and reply
//! share with the new prompt stay in the KV cache, so each turn of a
//! session only evaluates what is new. Tokens stream as they are made;
//! dropping the stream (Ctrl-C) stops generation at the next token.

use std::sync::{Arc, Mutex, mpsc as std_mpsc};

use futures::StreamExt;
use oi_providers::{EventStream, ModelClient, ModelRequest, ProviderError, ReplyForm, StreamEvent};
use tokio::sync::{mpsc, oneshot};

use crate::{EngineOptions, Sampling, prompt};

/// The longest reply when the request sets no limit: a small model that
/// falls into a loop stops here instead of filling the context.
pub const DEFAULT_REPLY_TOKENS: u32 = 2048;

pub(crate) type Events = mpsc::UnboundedSender<Result<StreamEvent, ProviderError>>;

#[cfg_attr(
    not(feature = "llama"),
    expect(dead_code, reason = "without the engine, jobs are refused unread")
)]
pub(crate) enum Job {
    Generate {
        chat: Vec<(String, String)>,
        max_tokens: u32,
        sampling: Sampling,
        /// The form the reply is held to, token by token.
        form: Option<ReplyForm>,
        events: Events,
    },
    ContextWindow {
        reply: oneshot::Sender<Option<u32>>,
    },
}

/// The built-in model as a [`ModelClient`].
#[derive(Debug, Clone)]
pub struct BuiltinClient {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    options: EngineOptions,
    worker: Mutex<Option<std_mpsc::Sender<Job>>>,
}

impl BuiltinClient {
    pub fn new(options: EngineOptions) -> Self {
        Self {
            inner: Arc::new(Inner {
                options,
                worker: Mutex::new(None),
            }),
        }
    }
}

impl Inner {
    /// Hands `job` to the worker, starting it first if need be.
    fn send(&self, job: Job) -> Result<(), String> {
        let Ok(mut worker) = self.worker.lock() else {
            return Err("the engine's thread failed earlier".to_owned());
        };
        let job = match worker.as_ref() {
            Some(sender) => match sender.send(job) {
                Ok(()) => return Ok(()),
                Err(std_mpsc::SendError(job)) => job,
            },
            None => job,
        };
        let (sender, receiver) = std_mpsc::channel();
        let options = self.options.clone();
        std::thread::Builder::new()
            .name("oi-builtin-model".to_owned())
            .spawn(move || crate::run::worker(&options, &receiver))
            .map_err(|e| format!("cannot start the engine's thread: {e}"))?;
        sender
            .send(job)
            .map_err(|_| "the engine's thread ended".to_owned())?;
        *worker = Some(sender);
        Ok(())
    }
}

impl ModelClient for BuiltinClient {
    fn stream(&self, request: ModelRequest) -> EventStream {
        let inner = Arc::clone(&self.inner);
        if request.model != inner.options.name {
            let error = ProviderError::Engine {
                provider: inner.options.provider(),
                message: format!(
                    "this session runs `{}` in oi's process and cannot switch to `{}`",
                    inner.options.name, request.model
                ),
                hint: Some(format!(
                    "start a new session with `--model {}` to run it",
                    request.model
                )),
            };
            return Box::pin(futures::stream::once(async move { Err(error) }));
        }
        let start = async move {
            let (events, receiver) = mpsc::unbounded_channel();
            let job = Job::Generate {
                chat: prompt::chat_messages(&request),
                max_tokens: request.max_tokens.unwrap_or(DEFAULT_REPLY_TOKENS).max(1),
                sampling: inner.options.sampling.with_temperature(request.temperature),
                form: request.form.clone(),
                events,
            };
            let replies = futures::stream::unfold(receiver, |mut r| async move {
                r.recv().await.map(|item| (item, r))
            });
            match inner.send(job) {
                Ok(()) => replies.boxed(),
                Err(message) => futures::stream::once(async move {
                    Err(ProviderError::Engine {
                        provider: inner.options.provider(),
                        message,
                        hint: None,
                    })
                })
                .boxed(),
            }
        };
        // Nothing happens until the stream is polled.
        Box::pin(futures::stream::once(start).flatten())
    }

    fn request_body(&self, request: &ModelRequest) -> serde_json::Value {
        let options = &self.inner.options;
        let mut body = serde_json::json!({
            "engine": "llama.cpp, in oi's process",
            "model": options.path.display().to_string(),
            "threads": options.threads,
            "messages": prompt::chat_messages(request)
                .into_iter()
                .map(|(role, content)| serde_json::json!({"role": role, "content": content}))
                .collect::<Vec<_>>(),
            "max_tokens": request.max_tokens.unwrap_or(DEFAULT_REPLY_TOKENS),
            "temperature": options.sampling.with_temperature(request.temperature).temperature,
        });
        if let Some(form) = &request.form {
            body["grammar"] = serde_json::json!(form.gbnf().as_ref());
        }
        body
    }

    fn context_window<'a>(
        &'a self,
        _model: &'a str,
    ) -> futures::future::BoxFuture<'a, Option<u32>> {
        Box::pin(async move {
            let (reply, answer) = oneshot::channel();
            self.inner.send(Job::ContextWindow { reply }).ok()?;
            answer.await.ok().flatten()
        })
    }
}
