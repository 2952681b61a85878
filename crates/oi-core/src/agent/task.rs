//! A task: the turn loop (ask the model, run what it proposes, send back
//! the results, repeat) and the one place where a task ends.

use crate::harness::{Action, ProposedRun, fenced_blocks};
use futures::StreamExt;
use oi_protocol::{ContentPart, Event, HarnessKind, Message, StopReason, ToolCall, Usage};
use oi_providers::{FinishReason, ModelRequest, ProviderError, StreamEvent};
use tokio_util::sync::CancellationToken;

use super::coach::{Coach, FixedAs, Repeat, named_files, quoted_commands};
use super::execute::Halt;
use super::first_look::{first_look, named_folders};
use super::history::{MAX_IMAGES_IN_HISTORY, bound_images, text_of_task};
use super::resample::{self, Again, Resample};
use super::runaway::{self, Runaway};
use super::save_as::{commands_running, save_named_scripts, save_rewritten_scripts};
use super::splice::Splicer;
use super::traceback::compact_reports;
use super::{Session, sleep_until};
use crate::context::estimate_tokens;
use crate::loop_guard::LoopGuard;

/// How freely a task that starts over is sampled at its first request.
const START_OVER_TEMPERATURE: f64 = 0.7;

/// A complete reply of the model.
pub(super) struct Reply {
    pub(super) text: String,
    pub(super) tool_calls: Vec<ToolCall>,
    pub(super) reasoning: Vec<serde_json::Value>,
    pub(super) finish_reason: FinishReason,
    /// The reply fell into repeating itself and was cut (small models).
    pub(super) runaway: Option<Runaway>,
}

/// Why a reply did not complete.
enum ReplyError {
    /// The user interrupted it; `partial` is what had streamed.
    Interrupted {
        partial: String,
    },
    /// The task's `max_time` passed while the model was answering.
    TimeLimit {
        partial: String,
    },
    Failed(ProviderError),
}

/// How a task ended: why, the model's answer, and an error to report
/// before it.
struct TaskEnd {
    reason: StopReason,
    answer: Option<String>,
    error: Option<(String, Option<String>)>,
}

impl TaskEnd {
    fn stop(reason: StopReason) -> Self {
        Self {
            reason,
            answer: None,
            error: None,
        }
    }

    fn done(answer: String) -> Self {
        Self {
            answer: Some(answer),
            ..Self::stop(StopReason::Done)
        }
    }

    fn failed(message: String, hint: Option<String>) -> Self {
        Self {
            error: Some((message, hint)),
            ..Self::stop(StopReason::Failed)
        }
    }
}

/// What the last code run of a batch printed, as the model read it.
fn last_printed(reports: &[crate::harness::Report]) -> Option<String> {
    reports
        .iter()
        .rev()
        .find(|report| !report.language.is_empty())
        .map(|report| report.text.clone())
}

impl Session {
    /// Runs one task to its end and says how it ended.
    pub(super) async fn run_task(&mut self, text: String, images: Vec<String>) {
        let cancel = self.fresh_cancel_token();
        self.emit(Event::TaskStarted);
        // Again after a reset (or a kernel that died) stopped it.
        self.prestart_kernel();
        let message = self.user_message(text, &images);
        self.task_index = Some(self.history.len());
        self.history.push(message);
        self.guard = LoopGuard::new(self.config.small_model);
        self.task_started = std::time::Instant::now();
        let end = if self.ensure_mcp(&cancel).await {
            self.turns(&cancel).await
        } else {
            TaskEnd::stop(StopReason::Interrupted)
        };
        if let Some((message, hint)) = end.error {
            self.emit(Event::Error { message, hint });
        }
        self.emit(Event::TaskComplete {
            reason: end.reason,
            final_message: end.answer,
        });
    }

    /// The turns of the current task, until one of them ends it.
    async fn turns(&mut self, cancel: &CancellationToken) -> TaskEnd {
        let task = text_of_task(&self.history, self.task_index);
        let mut coach = Coach::new(self.config.small_model, &task, self.kernels.cwd());
        // The parts of the task's message before its first look.
        let parts = self.task_parts();
        if self.config.small_model {
            self.add_first_look(&task, coach.rewrites());
        }
        let mut turn = 0;
        let mut retried_overflow = false;
        // Whether the task started over after going in circles (once).
        let mut started_over = false;
        let mut resample = Resample::for_task(&task);
        let mut splicer = Splicer::default();
        // Set for the next request only, when it asks again (small models).
        let mut temperature: Option<(f64, Again)> = None;
        // What the last code that ran printed (small models): the answer
        // of a task that ends on a repeat of that code.
        let mut printed: Option<String> = None;
        loop {
            if let Some(end) = self.limit_reached(turn) {
                return end;
            }
            if let Err(message) = self.fit_context(false, cancel).await {
                return self.unfitting(message);
            }
            turn += 1;
            self.drop_stopped_mcp_servers();
            self.emit(Event::ModelRequest { turn });
            let mut request = self.request();
            if let Some((t, why)) = temperature.take() {
                request.temperature = Some(t);
                // A task that starts over says so as it does.
                if let Some(why) = why.reason() {
                    let hidden =
                        resample::leave_out_failed_code(&mut request.messages, &self.guard);
                    let unseen = if hidden > 0 {
                        " and without the code that failed in view"
                    } else {
                        ""
                    };
                    self.emit(Event::Warning {
                        message: format!(
                            "{why}; asking once more, sampling more freely (temperature {t}){unseen}"
                        ),
                    });
                }
            }
            if request.form.is_some() && coach.wants_code() {
                request.form = Some(self.code_step_form());
            }
            if self.verbose {
                self.emit(Event::RawRequest {
                    body: self.client.request_body(&request),
                });
            }
            if let Some(stop) = self.over_budget(&request) {
                return TaskEnd::stop(stop);
            }
            let mut reply = match self.stream_reply(request, cancel).await {
                Ok(reply) => reply,
                // The server says it does not fit after all: make it
                // smaller and ask once more.
                Err(ReplyError::Failed(ProviderError::ContextLength { message, .. }))
                    if !retried_overflow =>
                {
                    retried_overflow = true;
                    if let Err(end) = self.shrink_after_refusal(&message, cancel).await {
                        return end;
                    }
                    turn -= 1;
                    continue;
                }
                Err(error) => return self.unanswered(error),
            };
            // Thousands of blank lines in a row (cheap tokens for a small
            // model gone astray) would fill the context window when sent
            // back: they are cut to two, and the reply is kept so.
            if let Some((text, left_out)) = runaway::collapse_blank_runs(&reply.text) {
                reply.text = text;
                self.emit(Event::Warning {
                    message: format!(
                        "the model's reply had long runs of blank lines; oi kept two in a row and left out {left_out}"
                    ),
                });
            }
            self.emit(Event::AssistantMessage {
                text: reply.text.clone(),
            });
            if reply.finish_reason == FinishReason::Length && reply.runaway.is_none() {
                self.emit(Event::Warning {
                    message: "the model's reply was cut off at its output token limit".to_owned(),
                });
            }
            if let Some(found) = &reply.runaway {
                // Asked again more freely first: the same request, sampled
                // greedily, falls into the same repetition.
                if self.config.small_model
                    && let Some(t) = resample.after_runaway(self.config.temperature)
                {
                    temperature = Some((t, Again::Runaway));
                    continue;
                }
                // What came before the repetition stays; nothing of a cut
                // reply is run (its code is likely cut too).
                self.history.push(Message::Assistant {
                    text: reply.text.clone(),
                    tool_calls: Vec::new(),
                    reasoning: reply.reasoning.clone(),
                });
                self.history.push(Message::user(runaway::note(found)));
                continue;
            }
            let answer = reply.text.clone();
            // Held to a code step, a block that runs nothing (prose, or
            // the output the model expects) is asked again; so is a reply
            // that only copies the line standing for left-out code.
            let held = coach.wants_code()
                && self.harness.kind() == HarnessKind::Markdown
                && !fenced_blocks(&answer).is_empty()
                || resample::copies_left_out(&answer);
            self.adapt_harness(&reply);
            let (message, mut actions) =
                self.harness
                    .interpret(reply.text, reply.tool_calls, reply.reasoning);
            // The line a note told the model how to change, sent again
            // unchanged, gets that change (shown and approved as it runs).
            let line_fixed = coach.apply_line_fix(&mut actions);
            resample.saw_outputs(coach.outputs_key());
            // The code that just ran without errors, sent again while the
            // results look right: told once, then the end of the task.
            if self.config.small_model
                && self.harness.kind() == HarnessKind::Markdown
                && resample::repeats_good_run(&actions, &self.guard)
                && let Some(repeat) = coach.repeat_of_good_run(self.kernels.cwd(), &answer)
            {
                self.history.push(message);
                coach.heard(&answer);
                match repeat {
                    Repeat::Tell(note) => {
                        self.emit(Event::Warning {
                            message: "the reply would run again the code that just ran without errors, and nothing found in the results is wrong; oi does not run it and tells the model so".to_owned(),
                        });
                        self.history.push(Message::user(note));
                        continue;
                    }
                    Repeat::End => {
                        self.emit(Event::Warning {
                            message: "the model sent once more the code that had just run without errors, after oi said that running it again changes nothing; oi ends the task with its results as they are".to_owned(),
                        });
                        return TaskEnd::done(coach.repeat_end_answer(printed.as_deref()));
                    }
                }
            }
            if self.config.small_model
                && let Some(t) = if coach.resends_failed_version(&actions, self.kernels.cwd()) {
                    resample.freer(self.config.temperature)
                } else {
                    resample.again(&actions, held, &self.guard, self.config.temperature)
                }
            {
                // Not run, not kept: the same request goes again (said
                // when it is built, with what it leaves out).
                temperature = Some((t, Again::NoStep));
                continue;
            }
            // Said once the change runs (a reply asked again runs nothing).
            if let Some(fix) = &line_fixed {
                let (code, fixed) = (&fix.code, &fix.fixed);
                self.emit(Event::Warning {
                    message: match fix.how {
                        FixedAs::Block => format!(
                            "the reply is the line a note said to write (`{fixed}`); oi runs the block it belongs in whole, with it in place of `{code}`"
                        ),
                        FixedAs::Line | FixedAs::Ended => format!(
                            "the reply holds again the line a note said to change (`{code}`); oi runs it changed as the note said (`{fixed}`)"
                        ),
                    },
                });
            }
            let mut spliced = None;
            if self.config.small_model {
                let mut saved;
                (actions, saved) = save_named_scripts(actions, &answer, self.kernels.cwd());
                if !saved.is_empty() {
                    self.emit(Event::Warning {
                        message: format!(
                            "the reply runs {} without writing it; oi saves the code block before it as that file",
                            saved.join(", ")
                        ),
                    });
                }
                let commands = quoted_commands(&task);
                if coach.may_rewrite() {
                    // A new version is judged by the language it runs in:
                    // a shell script fenced as `python` runs in the shell.
                    for action in &mut actions {
                        if let Action::Run(run) = action
                            && let Some(language) = self.runs_as(run)
                        {
                            run.language = Some(language);
                        }
                    }
                    (actions, saved) = save_rewritten_scripts(
                        actions,
                        &named_files(&task),
                        &commands,
                        self.kernels.cwd(),
                    );
                } else {
                    saved = Vec::new();
                }
                if !saved.is_empty() {
                    let quoted: Vec<String> = saved
                        .iter()
                        .flat_map(|name| commands_running(&commands, name))
                        .map(|c| format!("`{c}`"))
                        .collect();
                    let how = if quoted.is_empty() {
                        "runs it".to_owned()
                    } else {
                        format!("runs {} as the task says", quoted.join(", "))
                    };
                    self.emit(Event::Warning {
                        message: format!(
                            "the reply's code is a new version of {}; oi saves it as that file and {how}",
                            saved.join(", ")
                        ),
                    });
                }
                (actions, spliced) = splicer.apply(actions, |run| self.runs_as(run));
                if let Some(changes) = &spliced {
                    self.emit(Event::Warning {
                        message: format!(
                            "the reply changes the Python block that failed ({}); oi runs that block whole with the change",
                            changes.join(", ")
                        ),
                    });
                }
            }
            self.history.push(message);
            coach.heard(&answer);
            let mut ended = None;
            if actions.is_empty() {
                let cwd = self.kernels.cwd().to_path_buf();
                let failure = self.guard.last_failure().map(str::to_owned);
                match coach.note_before_ending(
                    &answer,
                    self.harness.kind(),
                    &cwd,
                    failure.as_deref(),
                ) {
                    Some(note) => {
                        self.history.push(Message::user(note));
                        continue;
                    }
                    None => {
                        // Ending without a change a note gave: oi runs
                        // it once (approved as any run).
                        let Some(end) = coach.run_at_end(&cwd) else {
                            let missing = coach.missing_at_end(&cwd);
                            if !missing.is_empty() {
                                self.emit(Event::Warning {
                                    message: format!(
                                        "the task ends without {}, which it says to write",
                                        missing.join(" and ")
                                    ),
                                });
                            }
                            return TaskEnd::done(resample::without_left_out(answer));
                        };
                        self.emit(Event::Warning {
                            message: end.warning,
                        });
                        actions.push(Action::Run(end.run));
                        ended = Some(end.note);
                    }
                }
            }
            // The code of each action, for the coach to re-run after an
            // install and to tell the commands the task quotes that ran
            // (small models only; others need no copy).
            let runs: Vec<Option<ProposedRun>> = if self.config.small_model {
                actions.iter().map(|a| a.run().cloned()).collect()
            } else {
                Vec::new()
            };
            let runs_before = self.guard.runs();
            let (mut reports, mut halt) = self.execute(actions, cancel).await;
            if self.config.small_model {
                printed = last_printed(&reports).or(printed);
            }
            coach.saw_runs(&runs);
            splicer.saw(&runs, &reports);
            let mut previews = Vec::new();
            if let Some(changes) = spliced {
                previews.push(format!(
                    "[oi: your change went into the block that failed ({}), and oi ran that block whole.]",
                    changes.join(", ")
                ));
            }
            if let Some(fix) = line_fixed {
                previews.push(fix.note());
            }
            previews.extend(ended);
            coach.saw_failure(self.guard.last_failure().is_some());
            coach.saw_started(self.guard.runs() > runs_before);
            previews.extend(coach.after_runs(&reports, self.kernels.cwd()));
            previews.extend(coach.content_note(&runs, &reports, self.kernels.cwd()));
            let mut rerun_results = Vec::new();
            let mut rerun = coach.rerun(&runs, &reports);
            // A re-run's result may call for one more (another error with
            // a known fix, a fault of the code that ran), up to the
            // coach's limit on re-runs.
            while halt.is_none()
                && let Some((run, lead)) = rerun.take()
            {
                let runs_before = self.guard.runs();
                let (mut again, stop) = self.execute(vec![Action::Run(run.clone())], cancel).await;
                halt = stop;
                if let Some(report) = again.first() {
                    coach.ran_again(&run, report);
                }
                printed = last_printed(&again).or(printed);
                if let Some(first) = again.first_mut() {
                    first.text = format!("{lead}\n{}", first.text);
                }
                // Results of tool calls stay tool messages; this run
                // answers none, so it goes after them.
                coach.saw_failure(self.guard.last_failure().is_some());
                coach.saw_started(self.guard.runs() > runs_before);
                previews.extend(coach.after_runs(&again, self.kernels.cwd()));
                if reports.iter().all(|r| r.call_id.is_some()) {
                    if self.config.small_model {
                        compact_reports(&mut again);
                    }
                    rerun_results.extend(self.harness.results(again));
                } else {
                    reports.extend(again);
                }
                rerun = coach.rerun_with_fix();
            }
            coach.after_batch(self.guard.last_failure().is_some());
            if self.config.small_model {
                compact_reports(&mut reports);
            }
            let mut results = self.harness.results(reports);
            results.extend(rerun_results);
            // What the model should read with the last result: what its
            // runs made of the task's files, and a loop-guard warning.
            let notes = [
                (!previews.is_empty()).then(|| previews.join("\n")),
                self.guard.warning(self.config.loop_guard_max_repeats),
            ];
            if let Some(Message::Tool { content, .. } | Message::User { content }) =
                results.last_mut()
            {
                content.extend(notes.into_iter().flatten().map(ContentPart::text));
            }
            self.history.extend(results);
            bound_images(&mut self.history, MAX_IMAGES_IN_HISTORY);
            match halt {
                Some(Halt::Interrupted) => return TaskEnd::stop(StopReason::Interrupted),
                Some(Halt::FailSafe) => {
                    // Tripped by the tool or by code: said once, here.
                    return TaskEnd {
                        error: Some((
                            oi_computer::ComputerError::FailSafe.to_string(),
                            Some(
                                "move the mouse away from the corners, then give the next task"
                                    .to_owned(),
                            ),
                        )),
                        ..TaskEnd::stop(StopReason::FailSafe)
                    };
                }
                None => {}
            }
            if let Some((repeats, summary)) = self.guard.tripped(self.config.loop_guard_max_repeats)
            {
                // A small model going in circles starts over once, from the
                // task's message, sampled more freely: greedy, the same
                // start leads the same way, and what it tried fills the
                // context it reads.
                if self.config.small_model && !started_over {
                    started_over = true;
                    self.start_over(&task, coach.rewrites(), parts);
                    coach.start_over();
                    resample = Resample::for_task(&task);
                    splicer = Splicer::default();
                    let t = START_OVER_TEMPERATURE.max(self.config.temperature.unwrap_or(0.0));
                    self.emit(Event::Warning {
                        message: format!(
                            "{summary}; oi starts the task over once from its message, without the replies so far, sampling more freely (temperature {t}); the files keep what the runs did"
                        ),
                    });
                    temperature = Some((t, Again::StartOver));
                    continue;
                }
                return TaskEnd::stop(StopReason::LoopGuard { repeats, summary });
            }
        }
    }

    /// Starts the current task over (small models, after going in
    /// circles): the history goes back to the task's message, whose first
    /// look is made again from the files as they are now; the loop guard
    /// forgets its repeats. The transcript is written whole again.
    /// `parts`: how many parts the message had before its first look.
    fn start_over(&mut self, task: &str, rewrites: &[String], parts: usize) {
        self.guard.start_over();
        let Some(index) = self.task_index else {
            return;
        };
        self.history.truncate(index + 1);
        self.history_epoch += 1;
        // The task's own parts, before its first look: not a summary or
        // what followed, which a compaction may have merged into it.
        if let Some(Message::User { content }) = self.history.get_mut(index) {
            let mut own = content[crate::context::task_span(content)].to_vec();
            own.truncate(parts);
            *content = own;
        }
        self.add_first_look(task, rewrites);
    }

    /// How many parts the current task's message has.
    fn task_parts(&self) -> usize {
        match self.task_index.and_then(|i| self.history.get(i)) {
            Some(Message::User { content }) => content.len(),
            _ => 0,
        }
    }

    /// Gives a small model a first look at the files the task names, with
    /// the task's message.
    fn add_first_look(&mut self, task: &str, rewrites: &[String]) {
        let cwd = self.kernels.cwd();
        let Some(look) = first_look(cwd, &named_files(task), &named_folders(task, cwd), rewrites)
        else {
            return;
        };
        if let Some(Message::User { content }) =
            self.task_index.and_then(|i| self.history.get_mut(i))
        {
            content.push(ContentPart::text(look));
        }
    }

    /// The end of the task when a limit is reached before turn `turn + 1`:
    /// its time (`max_time`) or its turns (`max_turns`).
    fn limit_reached(&self, turn: u32) -> Option<TaskEnd> {
        if self.deadline_passed() {
            return Some(self.time_limit());
        }
        (turn >= self.config.max_turns).then(|| {
            TaskEnd::stop(StopReason::MaxTurns {
                limit: self.config.max_turns,
            })
        })
    }

    fn deadline_passed(&self) -> bool {
        self.deadline()
            .is_some_and(|deadline| std::time::Instant::now() >= deadline)
    }

    fn time_limit(&self) -> TaskEnd {
        TaskEnd::stop(StopReason::TimeLimit {
            limit_secs: self.config.max_time.map_or(0, |l| l.as_secs()),
        })
    }

    /// The end of a task whose conversation cannot be made to fit.
    fn unfitting(&self, message: String) -> TaskEnd {
        if self.deadline_passed() {
            return self.time_limit();
        }
        TaskEnd::failed(
            message,
            Some("set `context_window` (or `[models.\"NAME\"] context_window`) if the model allows more, lower `max_tokens`, or start a new conversation with /reset".to_owned()),
        )
    }

    /// The server refused the request as longer than its window: the
    /// conversation is made smaller, or the task ends.
    async fn shrink_after_refusal(
        &mut self,
        message: &str,
        cancel: &CancellationToken,
    ) -> Result<(), TaskEnd> {
        self.emit(Event::Warning {
            message: format!(
                "the server found the request longer than the context window ({message}); making the conversation smaller and trying again"
            ),
        });
        // Nothing older to cut: the request is too long as it is (a long
        // task, or the last reply or output).
        self.fit_context(true, cancel).await.map_err(|problem| {
            TaskEnd::failed(
                format!(
                    "the model server refused the request as longer than its context window, and it cannot be made smaller ({problem})"
                ),
                Some("give the model a larger context window on the server (llama.cpp `-c`, Ollama `num_ctx`, LM Studio's context length), lower `max_tokens`, or start over with /reset".to_owned()),
            )
        })
    }

    /// The end of a task whose reply did not complete; what streamed of
    /// it stays in the conversation.
    fn unanswered(&mut self, error: ReplyError) -> TaskEnd {
        let (partial, end) = match error {
            ReplyError::TimeLimit { partial } => (partial, self.time_limit()),
            ReplyError::Interrupted { partial } => {
                (partial, TaskEnd::stop(StopReason::Interrupted))
            }
            ReplyError::Failed(error) => {
                return TaskEnd::failed(error.to_string(), error.hint());
            }
        };
        if !partial.is_empty() {
            self.history.push(Message::Assistant {
                text: partial,
                tool_calls: Vec::new(),
                reasoning: Vec::new(),
            });
        }
        end
    }

    /// The stop reason when the next request would take the session past
    /// its budget: its input is estimated at four characters per token, its
    /// output at the session's average so far (at least 500 tokens).
    fn over_budget(&self, request: &ModelRequest) -> Option<StopReason> {
        let limit = self.config.max_budget?;
        let pricing = self.config.pricing?;
        let input = estimate_tokens(request);
        let output = self.typical_reply_tokens();
        let next = pricing.cost(&Usage {
            input_tokens: input,
            output_tokens: output,
            ..Usage::default()
        });
        (self.total_cost + next > limit).then_some(StopReason::Budget {
            limit_usd: limit,
            spent_usd: self.total_cost,
            next_usd: next,
        })
    }

    /// Counts a completed model request and its tokens and cost, and says
    /// so with a `Usage` event.
    pub(super) fn request_completed(&mut self, usage: Option<Usage>) {
        self.requests_sent += 1;
        let Some(usage) = usage else { return };
        self.total_usage += usage;
        let cost_usd = self.config.pricing.map(|p| {
            self.total_cost += p.cost(&usage);
            self.total_cost
        });
        self.emit(Event::Usage {
            last: usage,
            total: self.total_usage,
            cost_usd,
        });
    }

    /// A reply that fell into repeating itself: cut after its first
    /// repeats, counted with estimated usage (the server reports none for
    /// a stream that was dropped), and said so.
    fn cut_runaway(
        &mut self,
        mut text: String,
        tool_calls: Vec<ToolCall>,
        reasoning: Vec<serde_json::Value>,
        found: Runaway,
        input_estimate: u64,
    ) -> Reply {
        let output_estimate = (text.len() as u64).div_ceil(4);
        self.request_completed(Some(Usage {
            input_tokens: input_estimate,
            output_tokens: output_estimate,
            ..Usage::default()
        }));
        text.truncate(found.cut_at);
        self.emit(Event::Warning {
            message: format!(
                "the model kept repeating itself ({} times); its reply was stopped and cut",
                found.repeats
            ),
        });
        Reply {
            text,
            tool_calls,
            reasoning,
            finish_reason: FinishReason::Length,
            runaway: Some(found),
        }
    }

    async fn stream_reply(
        &mut self,
        request: ModelRequest,
        cancel: &CancellationToken,
    ) -> Result<Reply, ReplyError> {
        // For a reply cut short by oi, whose usage the server never reports.
        let input_estimate = estimate_tokens(&request);
        let mut watch = self.config.small_model.then(runaway::Watch::default);
        let mut stream = self.client.stream(request);
        let mut text = String::new();
        let mut tool_calls = Vec::new();
        let mut reasoning = Vec::new();
        // The reasoning as it can be read, shown and reported, never sent
        // back (the opaque items in `reasoning` are).
        let mut thought = String::new();
        let deadline = self.deadline();
        loop {
            let item = tokio::select! {
                item = stream.next() => item,
                () = cancel.cancelled() => return Err(ReplyError::Interrupted { partial: text }),
                () = sleep_until(deadline) => return Err(ReplyError::TimeLimit { partial: text }),
            };
            match item {
                Some(Ok(StreamEvent::TextDelta(delta))) => {
                    text.push_str(&delta);
                    self.emit(Event::TextDelta { delta });
                    if let Some(found) = watch.as_mut().and_then(|w| w.check(&text)) {
                        // Dropping the stream stops the generation.
                        drop(stream);
                        return Ok(self.cut_runaway(
                            text,
                            tool_calls,
                            reasoning,
                            found,
                            input_estimate,
                        ));
                    }
                }
                Some(Ok(StreamEvent::ReasoningDelta(delta))) => {
                    thought.push_str(&delta);
                    self.emit(Event::ReasoningDelta { delta });
                }
                Some(Ok(StreamEvent::ToolCall(call))) => tool_calls.push(call),
                Some(Ok(StreamEvent::Reasoning(item))) => reasoning.push(item),
                Some(Ok(StreamEvent::Restart)) => {
                    text.clear();
                    thought.clear();
                    self.emit(Event::ReplyRestarted);
                }
                Some(Ok(StreamEvent::Retrying {
                    attempt,
                    max_attempts,
                    delay,
                    reason,
                })) => self.emit(Event::Retrying {
                    attempt,
                    max_attempts,
                    delay_ms: delay.as_millis() as u64,
                    reason,
                }),
                Some(Ok(StreamEvent::Completed {
                    finish_reason,
                    usage,
                })) => {
                    self.request_completed(usage);
                    if !thought.trim().is_empty() {
                        self.emit(Event::Reasoning {
                            text: std::mem::take(&mut thought),
                        });
                    }
                    return Ok(Reply {
                        text,
                        tool_calls,
                        reasoning,
                        finish_reason,
                        runaway: None,
                    });
                }
                Some(Err(error)) => return Err(ReplyError::Failed(error)),
                None => {
                    return Err(ReplyError::Failed(ProviderError::StreamCut {
                        provider: "the model server".to_owned(),
                        detail: "the reply ended without completing".to_owned(),
                    }));
                }
            }
        }
    }
}
