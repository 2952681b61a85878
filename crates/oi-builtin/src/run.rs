//! The engine's thread: loads the weights once, then answers jobs in
//! order until the client is dropped.

use std::sync::mpsc as std_mpsc;

use oi_providers::ProviderError;

use crate::EngineOptions;
use crate::engine::Job;

fn engine_error(options: &EngineOptions, message: String, hint: Option<String>) -> ProviderError {
    ProviderError::Engine {
        provider: options.provider(),
        message,
        hint,
    }
}

/// Answers every job with what went wrong (no engine, weights that do
/// not load).
fn refuse_all(
    options: &EngineOptions,
    jobs: &std_mpsc::Receiver<Job>,
    message: &str,
    hint: Option<&str>,
) {
    while let Ok(job) = jobs.recv() {
        match job {
            Job::Generate { events, .. } => {
                let _ = events.send(Err(engine_error(
                    options,
                    message.to_owned(),
                    hint.map(str::to_owned),
                )));
            }
            Job::ContextWindow { reply } => {
                let _ = reply.send(None);
            }
        }
    }
}

#[cfg(not(feature = "llama"))]
pub(crate) fn worker(options: &EngineOptions, jobs: &std_mpsc::Receiver<Job>) {
    refuse_all(
        options,
        jobs,
        "this build of oi has no engine for the built-in model",
        Some(crate::HOW_TO_GET_ENGINE),
    );
}

#[cfg(feature = "llama")]
pub(crate) use llama::worker;

#[cfg(feature = "llama")]
mod llama {
    use std::num::NonZeroU32;
    use std::sync::OnceLock;
    use std::sync::mpsc as std_mpsc;

    use llama_cpp_2::context::LlamaContext;
    use llama_cpp_2::context::params::LlamaContextParams;
    use llama_cpp_2::llama_backend::LlamaBackend;
    use llama_cpp_2::llama_batch::LlamaBatch;
    use llama_cpp_2::model::params::LlamaModelParams;
    use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
    use llama_cpp_2::sampling::LlamaSampler;
    use llama_cpp_2::token::LlamaToken;
    use llama_cpp_2::token::data::LlamaTokenData;
    use llama_cpp_2::token::data_array::LlamaTokenDataArray;
    use oi_protocol::Usage;
    use oi_providers::{FinishReason, ProviderError, ReplyForm, StreamEvent};

    use super::{engine_error, refuse_all};
    use crate::engine::{Events, Job};
    use crate::{DEFAULT_MAX_CONTEXT, EngineOptions, Sampling};

    /// llama.cpp's backend, set up once per process.
    fn backend() -> Result<&'static LlamaBackend, String> {
        static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
        BACKEND
            .get_or_init(|| {
                // Its log lines go to `tracing`, not to the terminal.
                llama_cpp_2::send_logs_to_tracing(llama_cpp_2::LogOptions::default());
                LlamaBackend::init().map_err(|e| format!("cannot start llama.cpp: {e}"))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    pub(crate) fn worker(options: &EngineOptions, jobs: &std_mpsc::Receiver<Job>) {
        let backend = match backend() {
            Ok(b) => b,
            Err(message) => return refuse_all(options, jobs, &message, None),
        };
        let path = &options.path;
        let model = match LlamaModel::load_from_file(backend, path, &LlamaModelParams::default()) {
            Ok(model) => model,
            Err(e) => {
                let message = format!("cannot load {} ({e})", path.display());
                return refuse_all(
                    options,
                    jobs,
                    &message,
                    Some(
                        "is it a complete GGUF file of a model llama.cpp runs? A download that broke off is resumed by running the same command again",
                    ),
                );
            }
        };
        let n_ctx = options
            .context
            .unwrap_or_else(|| model.n_ctx_train().min(DEFAULT_MAX_CONTEXT))
            .max(512);
        let threads = i32::try_from(options.threads.max(1)).unwrap_or(1);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        let mut ctx = match model.new_context(backend, params) {
            Ok(ctx) => ctx,
            Err(e) => {
                let message = format!(
                    "cannot make a context of {n_ctx} tokens for {} ({e})",
                    path.display()
                );
                return refuse_all(
                    options,
                    jobs,
                    &message,
                    Some("lower `[builtin] context` (memory grows with it)"),
                );
            }
        };
        // The template the GGUF carries; ChatML (what most small chat
        // models use) when it carries none.
        let template = model
            .chat_template(None)
            .or_else(|_| LlamaChatTemplate::new("chatml"));
        let template = match template {
            Ok(t) => t,
            Err(e) => {
                let message = format!("the model's chat template cannot be used ({e})");
                return refuse_all(options, jobs, &message, None);
            }
        };
        let mut engine = Engine {
            options,
            model: &model,
            template,
            cached: Vec::new(),
            n_ctx,
        };
        while let Ok(job) = jobs.recv() {
            match job {
                Job::ContextWindow { reply } => {
                    let _ = reply.send(Some(n_ctx));
                }
                Job::Generate {
                    chat,
                    max_tokens,
                    sampling,
                    form,
                    events,
                } => {
                    let result =
                        engine.generate(&mut ctx, &chat, max_tokens, sampling, form, &events);
                    if let Err(error) = result {
                        // The cache may hold a half-evaluated prompt.
                        engine.cached.clear();
                        ctx.clear_kv_cache();
                        let _ = events.send(Err(error));
                    }
                }
            }
        }
    }

    struct Engine<'m> {
        options: &'m EngineOptions,
        model: &'m LlamaModel,
        template: LlamaChatTemplate,
        /// The tokens whose keys and values are in the context's cache.
        cached: Vec<LlamaToken>,
        n_ctx: u32,
    }

    impl Engine<'_> {
        fn error(&self, message: String) -> ProviderError {
            engine_error(self.options, message, None)
        }

        fn prompt(&self, chat: &[(String, String)]) -> Result<String, ProviderError> {
            let messages = chat
                .iter()
                .map(|(role, content)| {
                    LlamaChatMessage::new(role.clone(), content.replace('\0', ""))
                        .map_err(|e| self.error(format!("a message cannot be sent: {e}")))
                })
                .collect::<Result<Vec<_>, _>>()?;
            self.model
                .apply_chat_template(&self.template, &messages, true)
                .map_err(|e| self.error(format!("the chat template failed: {e}")))
        }

        /// Evaluates `tokens` from `start`, in batches; the logits of the
        /// last token are kept for sampling.
        fn evaluate(
            &mut self,
            ctx: &mut LlamaContext<'_>,
            tokens: &[LlamaToken],
            start: usize,
            events: &Events,
        ) -> Result<bool, ProviderError> {
            let n_batch = (ctx.n_batch() as usize).max(1);
            let mut batch = LlamaBatch::new(n_batch, 1);
            let mut at = start;
            while at < tokens.len() {
                let end = (at + n_batch).min(tokens.len());
                batch.clear();
                for (i, token) in tokens[at..end].iter().enumerate() {
                    let pos = i32::try_from(at + i).unwrap_or(i32::MAX);
                    batch
                        .add(*token, pos, &[0], at + i == tokens.len() - 1)
                        .map_err(|e| self.error(format!("a batch cannot be built: {e}")))?;
                }
                ctx.decode(&mut batch)
                    .map_err(|e| self.error(format!("evaluating the prompt failed: {e}")))?;
                self.cached.extend_from_slice(&tokens[at..end]);
                at = end;
                // Dropped while the prompt is read: stop here.
                if events.is_closed() {
                    return Ok(false);
                }
            }
            Ok(true)
        }

        fn generate(
            &mut self,
            ctx: &mut LlamaContext<'_>,
            chat: &[(String, String)],
            max_tokens: u32,
            sampling: Sampling,
            form: Option<ReplyForm>,
            events: &Events,
        ) -> Result<(), ProviderError> {
            let send = |event| events.send(event).is_ok();
            let text = self.prompt(chat)?;
            let tokens = self.model.vocab().tokenize(text.as_bytes(), true, true);
            if tokens.is_empty() {
                return Err(self.error("the prompt is empty".to_owned()));
            }
            let n_ctx = self.n_ctx as usize;
            if tokens.len() + 1 >= n_ctx {
                return Err(ProviderError::ContextLength {
                    provider: self.options.provider(),
                    message: format!(
                        "the prompt has {} tokens and the context holds {n_ctx}",
                        tokens.len()
                    ),
                });
            }
            // Keep what the new prompt shares with what is cached; at least
            // the last token is evaluated again, for its logits.
            let mut keep = self
                .cached
                .iter()
                .zip(&tokens)
                .take_while(|(a, b)| a == b)
                .count();
            keep = keep.min(tokens.len() - 1);
            let p0 = u32::try_from(keep).unwrap_or(u32::MAX);
            let cleared = ctx
                .clear_kv_cache_seq(Some(0), Some(p0), None)
                .unwrap_or(false);
            if cleared {
                self.cached.truncate(keep);
            } else {
                ctx.clear_kv_cache();
                self.cached.clear();
                keep = 0;
            }
            if !self.evaluate(ctx, &tokens, keep, events)? {
                return Ok(());
            }
            let mut sampler =
                Sampler::new(self.model, sampling, form).map_err(|message| self.error(message))?;
            let vocab = self.model.vocab();
            let mut pending: Vec<u8> = Vec::new();
            let mut produced = 0u32;
            let mut batch = LlamaBatch::new(1, 1);
            // The last prompt token's place in the last batch evaluated.
            let n_batch = (ctx.n_batch() as usize).max(1);
            let mut logits_at = i32::try_from((tokens.len() - keep - 1) % n_batch).unwrap_or(0);
            let finish = loop {
                if produced >= max_tokens {
                    break FinishReason::Length;
                }
                if self.cached.len() >= n_ctx {
                    break FinishReason::Length;
                }
                let token = sampler
                    .sample(ctx, logits_at)
                    .map_err(|message| self.error(message))?;
                if vocab.is_eog(token) {
                    break FinishReason::Stop;
                }
                sampler.accept(token);
                produced += 1;
                pending.extend(vocab.token_to_piece(token, false, None));
                let text = take_text(&mut pending);
                if !text.is_empty() && !send(Ok(StreamEvent::TextDelta(text))) {
                    return Ok(());
                }
                batch.clear();
                let pos = i32::try_from(self.cached.len()).unwrap_or(i32::MAX);
                batch
                    .add(token, pos, &[0], true)
                    .map_err(|e| self.error(format!("a batch cannot be built: {e}")))?;
                ctx.decode(&mut batch)
                    .map_err(|e| self.error(format!("generating failed: {e}")))?;
                self.cached.push(token);
                logits_at = 0;
            };
            if !pending.is_empty() {
                send(Ok(StreamEvent::TextDelta(
                    String::from_utf8_lossy(&pending).into_owned(),
                )));
            }
            send(Ok(StreamEvent::Completed {
                finish_reason: finish,
                usage: Some(Usage {
                    input_tokens: tokens.len() as u64,
                    cached_input_tokens: keep as u64,
                    output_tokens: u64::from(produced),
                    ..Usage::default()
                }),
            }));
            Ok(())
        }
    }

    /// Picks each token: the sampling chain, and the grammar of the
    /// reply's form when it has one.
    struct Sampler {
        chain: LlamaSampler,
        grammar: Option<LlamaSampler>,
    }

    impl Sampler {
        fn new(model: &LlamaModel, s: Sampling, form: Option<ReplyForm>) -> Result<Self, String> {
            let penalties = LlamaSampler::penalties(
                model.n_vocab(),
                s.repeat_last_n,
                s.repeat_penalty,
                0.0,
                0.0,
            );
            let chain = if s.temperature <= 0.0 {
                LlamaSampler::chain_simple([penalties, LlamaSampler::greedy()])
            } else {
                LlamaSampler::chain_simple([
                    penalties,
                    LlamaSampler::top_k(s.top_k),
                    LlamaSampler::top_p(s.top_p, 1),
                    LlamaSampler::temp(s.temperature),
                    LlamaSampler::dist(s.seed),
                ])
            };
            let grammar = form
                .map(|form| {
                    LlamaSampler::grammar(model, &form.gbnf(), "root")
                        .map_err(|e| format!("the grammar of the reply's form is refused ({e})"))
                })
                .transpose()?;
            Ok(Self { chain, grammar })
        }

        /// The next token, from the logits of output `at`. With a grammar,
        /// the chain's choice is taken when the grammar allows it, and the
        /// chain chooses again among the allowed tokens only when it does
        /// not: checking one token is far cheaper than the whole
        /// vocabulary, and most tokens of a well-formed reply pass.
        fn sample(&mut self, ctx: &LlamaContext<'_>, at: i32) -> Result<LlamaToken, String> {
            let mut candidates = ctx.token_data_array_ith(at);
            candidates.apply_sampler(&mut self.chain);
            let first = candidates.selected_token();
            let Some(grammar) = self.grammar.as_mut() else {
                return first.ok_or_else(|| "the sampler chose no token".to_owned());
            };
            if let Some(token) = first
                && allowed(grammar, token)
            {
                return Ok(token);
            }
            let mut candidates = ctx.token_data_array_ith(at);
            candidates.apply_sampler(grammar);
            candidates.apply_sampler(&mut self.chain);
            match candidates.selected_token() {
                Some(token) if allowed(grammar, token) => Ok(token),
                _ => Err("the reply's form left no token to choose".to_owned()),
            }
        }

        /// Records `token` (not an end-of-generation token) as chosen.
        fn accept(&mut self, token: LlamaToken) {
            self.chain.accept(token);
            if let Some(grammar) = self.grammar.as_mut() {
                grammar.accept(token);
            }
        }
    }

    /// Whether `grammar`, in its present state, allows `token` next.
    fn allowed(grammar: &mut LlamaSampler, token: LlamaToken) -> bool {
        let mut one = LlamaTokenDataArray::new(vec![LlamaTokenData::new(token, 0.0, 0.0)], false);
        one.apply_sampler(grammar);
        one.data.first().is_some_and(|d| d.logit().is_finite())
    }

    /// The longest valid UTF-8 text at the start of `bytes` (taken out),
    /// leaving an incomplete character for the next token.
    fn take_text(bytes: &mut Vec<u8>) -> String {
        match std::str::from_utf8(bytes) {
            Ok(text) => {
                let text = text.to_owned();
                bytes.clear();
                text
            }
            Err(e) if e.error_len().is_none() => {
                let valid = e.valid_up_to();
                let text = String::from_utf8_lossy(&bytes[..valid]).into_owned();
                bytes.drain(..valid);
                text
            }
            Err(_) => {
                let text = String::from_utf8_lossy(bytes).into_owned();
                bytes.clear();
                text
            }
        }
    }
}
