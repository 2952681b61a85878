//! `interpreter exec`: one task, no interactive session. Progress goes to
//! stderr and the answer to stdout, or the whole stream as JSON lines:
//! Codex's (`--json`, what Codex clients read) or oi's own (`--oi-json`).

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use oi_codex::structured::{OutputSchema, StructuredAnswer, Verdict};
use oi_config::FlagSetting;
use oi_core::setup::{Given, Resume};
use oi_core::{Agent, SessionRequest};
use oi_protocol::{Event, Op, ReviewDecision, SkipReason, StopReason};

use crate::approve;
use crate::cli::{ExecArgs, ExecCommand, ExecOptions};
use crate::error::{CliError, exit};
use crate::input::LineReader;
use crate::render::{CodexRenderer, HumanRenderer, JsonRenderer, Render};
use crate::session;
use crate::signals::{Request, Signals};

/// Where the events go.
enum Output {
    /// To a person: progress on stderr, the answer on stdout.
    Human,
    /// oi's events, as JSON lines on stdout.
    Oi(JsonRenderer<std::io::Stdout>),
    /// Codex's events, as JSON lines on stdout.
    Codex(Box<CodexRenderer<std::io::Stdout>>),
}

/// The reason the front end gives for its approval default.
const CODEX_APPROVAL_DEFAULT: &str = "the default of `interpreter exec --json`, whose reader cannot answer approvals (risky code is still held)";

/// The task as given: its words (from the argument or stdin) and images.
struct Task {
    text: String,
    images: Vec<String>,
    /// Whether the words came from stdin (so it cannot answer approvals).
    from_stdin: bool,
}

/// Runs `exec`; `verbose` (`-v`) also shows each model request.
pub async fn run(
    args: ExecArgs,
    mut request: SessionRequest,
    verbose: bool,
) -> Result<ExitCode, CliError> {
    let ExecArgs {
        command,
        prompt,
        options,
    } = args;
    let prompt = match command {
        Some(ExecCommand::Resume(resume)) => {
            if request.resume.is_some() {
                return Err(CliError::usage(
                    "`exec resume` and `--resume`/`--continue` both name a session",
                    "use one: `interpreter exec resume ID \"task\"`",
                ));
            }
            let (which, prompt) = match (resume.last, resume.session_id, resume.prompt) {
                (true, Some(_), Some(_)) => {
                    return Err(CliError::usage(
                        "`exec resume --last` takes the task, not a session id",
                        "`interpreter exec resume --last \"task\"`, or `interpreter exec resume ID \"task\"`",
                    ));
                }
                (true, prompt, None) | (true, None, prompt) => (Resume::Latest, prompt),
                (false, Some(id), prompt) => (Resume::Id(id), prompt),
                (false, None, _) => {
                    return Err(CliError::usage(
                        "`exec resume` needs the session to continue",
                        "`interpreter exec resume ID \"task\"` (`interpreter sessions` lists them), or `--last` for this folder's most recent",
                    ));
                }
            };
            request.resume = Some(Given::new(which, "exec resume"));
            prompt
        }
        None => prompt,
    };
    let codex = options.json;
    if codex && !request.settings.iter().any(|s| s.key == "approval") {
        request
            .defaults
            .push(FlagSetting::new(CODEX_APPROVAL_DEFAULT, "approval", "auto"));
    }
    let mut schema = match &options.output_schema {
        Some(path) => Some(StructuredAnswer::new(
            OutputSchema::read(path).map_err(|e| CliError::usage(e.to_string(), e.hint()))?,
        )),
        None => None,
    };
    let mut task = read_task(prompt.as_deref(), &options)?;
    if let Some(schema) = &schema {
        task.text.push_str(&schema.instructions());
    }
    // Approval is asked on the terminal; with none (or with the task read from
    // stdin) code that needs approval is not run, and the model is told why.
    let can_ask = std::io::stdin().is_terminal() && !task.from_stdin;

    let setup = oi_core::setup(&request)?;
    let mut human = HumanRenderer::new(anstream::stderr());
    session::report_notices(&setup.notices, &mut human)?;
    if let Some(program) = &options.cyber_access_program {
        human.line(
            anstyle::Style::new().dimmed(),
            &format!(
                "--cyber-access-program {program}: an OpenAI account setting; oi does not use it"
            ),
        )?;
    }
    let mut signals = Signals::install()?;
    let (ops, mut events) = Agent::spawn(setup.config, setup.client, setup.kernels);
    if verbose {
        let _ = ops.send(Op::SetVerbose { verbose: true });
    }
    let _ = ops.send(Op::UserInput {
        text: task.text,
        images: task.images,
    });

    let mut output = if codex {
        Output::Codex(Box::new(CodexRenderer::new(std::io::stdout())))
    } else if options.oi_json {
        Output::Oi(JsonRenderer::new(std::io::stdout()))
    } else {
        Output::Human
    };
    let mut input = can_ask.then(LineReader::spawn);
    let mut outcome: Option<(StopReason, Option<String>)> = None;
    let mut needed_approval = false;
    // Whether code held for approval was held because it looked risky.
    let mut risky_held = false;
    let mut interrupts = 0;
    let mut terminated = false;
    let mut total_usage = None;
    // Whether the task that asks for the structured answer again has yet
    // to start.
    let mut hide_next_start = false;
    let mut ticks = tokio::time::interval(Duration::from_millis(250));

    loop {
        let event = tokio::select! {
            event = events.recv() => event,
            _ = ticks.tick(), if codex => {
                if let Output::Codex(codex) = &mut output {
                    shown(codex.tick(), &ops)?;
                }
                continue;
            }
            request = signals.next() => {
                match request {
                    Request::Interrupt if interrupts == 0 => {
                        interrupts += 1;
                        let _ = ops.send(Op::Interrupt);
                    }
                    // A second Ctrl-C: stop everything now.
                    Request::Interrupt => {
                        interrupts += 1;
                        let _ = ops.send(Op::Shutdown);
                    }
                    Request::Terminate => {
                        terminated = true;
                        let _ = ops.send(Op::Shutdown);
                    }
                }
                continue;
            }
        };
        let Some(mut event) = event else { break };
        if hide_next_start && event == Event::TaskStarted {
            hide_next_start = false;
            if !matches!(output, Output::Oi(_)) {
                continue;
            }
        }
        // A structured answer is checked before the end of the task is
        // shown: valid, it becomes the answer; not, the model is asked
        // once more; still not, the task failed.
        if let (
            Some(schema),
            Event::TaskComplete {
                reason: StopReason::Done,
                final_message,
            },
        ) = (&mut schema, &mut event)
        {
            match schema.judge(final_message.as_deref().unwrap_or("")) {
                Verdict::Valid(json) => {
                    if let Output::Codex(codex) = &mut output {
                        codex.set_answer(json.clone());
                    }
                    *final_message = Some(json);
                }
                Verdict::AskAgain(prompt) => {
                    hide_next_start = true;
                    match &mut output {
                        Output::Oi(json) => shown(json.event(&event), &ops)?,
                        Output::Human => human.line(
                            anstyle::Style::new().dimmed(),
                            "the answer does not validate against the output schema; asking the model again",
                        )?,
                        Output::Codex(_) => {}
                    }
                    let _ = ops.send(Op::input(prompt));
                    continue;
                }
                Verdict::Invalid(message) => {
                    let error = Event::Error {
                        message,
                        hint: Some(
                            "the model was asked twice; try a more capable model, or a simpler schema"
                                .to_owned(),
                        ),
                    };
                    match &mut output {
                        Output::Oi(json) => shown(json.event(&error), &ops)?,
                        Output::Codex(codex) => shown(codex.event(&error), &ops)?,
                        Output::Human => {}
                    }
                    if let Event::Error { message, hint } = &error {
                        human.error(message, hint.as_deref())?;
                    }
                    event = Event::TaskComplete {
                        reason: StopReason::Failed,
                        final_message: None,
                    };
                }
            }
        }
        let result = match &mut output {
            Output::Oi(json) => json.event(&event),
            Output::Codex(codex) => codex.event(&event),
            Output::Human => human.event(&event),
        };
        shown(result, &ops)?;
        match event {
            Event::ApprovalRequested {
                id,
                language,
                code,
                risks,
            } => {
                if input.is_none() && !risks.is_empty() {
                    risky_held = true;
                }
                let decision = match input.as_mut() {
                    Some(input) => tokio::select! {
                        decision = approve::ask(&mut human, input, &language, &code) => decision?,
                        request = signals.next() => {
                            match request {
                                Request::Interrupt => {
                                    interrupts += 1;
                                    let _ = ops.send(Op::Interrupt);
                                }
                                Request::Terminate => {
                                    terminated = true;
                                    let _ = ops.send(Op::Shutdown);
                                }
                            }
                            continue;
                        }
                    },
                    None => ReviewDecision::NoApprover,
                };
                let _ = ops.send(Op::Approve { id, decision });
            }
            Event::RunSkipped {
                reason: SkipReason::NoApprover,
                ..
            } => needed_approval = true,
            Event::Usage {
                total, cost_usd, ..
            } => total_usage = Some((total, cost_usd)),
            Event::TaskComplete {
                reason,
                final_message,
            } => {
                outcome = Some((reason, final_message));
                let _ = ops.send(Op::Shutdown);
            }
            Event::ShutdownComplete => break,
            _ => {}
        }
    }

    if terminated {
        return Ok(ExitCode::from(exit::TERMINATED));
    }
    let Some((reason, final_message)) = outcome else {
        return Ok(ExitCode::from(if interrupts > 0 {
            exit::INTERRUPTED
        } else {
            exit::FAILED
        }));
    };
    let answer = final_message.unwrap_or_default();
    if let Some(path) = &options.output_last_message {
        fs_err::write(path, format!("{}\n", answer.trim_end()))?;
    }
    if let Output::Human = output {
        if let Some((usage, cost)) = total_usage {
            human.line(anstyle::Style::new().dimmed(), &usage_summary(&usage, cost))?;
        }
        // A structured answer always goes to stdout: a program reads it.
        let already_seen = schema.is_none()
            && human.streamed_text
            && std::io::stdout().is_terminal()
            && std::io::stderr().is_terminal();
        if !answer.trim().is_empty() && !already_seen {
            let mut stdout = std::io::stdout().lock();
            let written = writeln!(stdout, "{}", answer.trim_end()).and_then(|()| stdout.flush());
            if let Err(e) = written
                && e.kind() != std::io::ErrorKind::BrokenPipe
            {
                return Err(e.into());
            }
        }
    }
    if codex {
        // Codex's convention: 0 when the turn completed, 1 when it did not.
        return Ok(ExitCode::from(match reason {
            StopReason::Done => exit::OK,
            StopReason::Interrupted if interrupts > 0 => exit::INTERRUPTED,
            _ => exit::FAILED,
        }));
    }
    let code = match reason {
        StopReason::Done if needed_approval => {
            if let Output::Human = output {
                let hint = if risky_held {
                    "risky code always needs a person's approval: run the task in a terminal (`interpreter exec` asks there), or, on a throwaway machine, pass `--dangerously-allow-all`"
                } else {
                    "pass `--yes` to let code run without asking"
                };
                human.error(
                    "the model's code was not run: it needed approval, and there is no terminal to ask",
                    Some(hint),
                )?;
            }
            exit::NEEDS_APPROVAL
        }
        StopReason::Done => exit::OK,
        StopReason::Failed => exit::FAILED,
        StopReason::MaxTurns { .. }
        | StopReason::Budget { .. }
        | StopReason::LoopGuard { .. }
        | StopReason::TimeLimit { .. } => exit::LIMIT,
        StopReason::Interrupted | StopReason::FailSafe => exit::INTERRUPTED,
    };
    Ok(ExitCode::from(code))
}

/// What became of writing events: whoever read them may be gone (then the
/// session stops quietly); any other failure is an error.
fn shown(
    result: std::io::Result<()>,
    ops: &tokio::sync::mpsc::UnboundedSender<Op>,
) -> Result<(), CliError> {
    match result {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            let _ = ops.send(Op::Shutdown);
            Ok(())
        }
        Err(e) => Err(e.into()),
        Ok(()) => Ok(()),
    }
}

/// The task: the argument, else stdin (what Codex clients use), with the
/// images checked.
fn read_task(prompt: Option<&str>, options: &ExecOptions) -> Result<Task, CliError> {
    let stdin_is_terminal = std::io::stdin().is_terminal();
    let (text, from_stdin) = match prompt {
        Some("-") | None => {
            if stdin_is_terminal && prompt.is_none() {
                return Err(CliError::usage(
                    "no task given",
                    "pass the task as an argument, `interpreter exec \"summarise data.csv\"`, or on stdin, `echo \"…\" | interpreter exec -`",
                ));
            }
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text)?;
            (text, true)
        }
        // Piped input goes with the task, as a `<stdin>` block.
        Some(prompt) => (crate::input::with_stdin(prompt)?, false),
    };
    if text.trim().is_empty() {
        return Err(CliError::usage(
            "the task is empty",
            "say what oi should do, e.g. `interpreter exec \"how big is this folder?\"`",
        ));
    }
    let images = options
        .images
        .iter()
        .map(image_path)
        .collect::<Result<_, _>>()?;
    Ok(Task {
        text,
        images,
        from_stdin,
    })
}

/// An `--image` file, as an absolute path; an error when it cannot be read.
fn image_path(path: &PathBuf) -> Result<String, CliError> {
    let hint = "give the path of an image file (PNG, JPEG, GIF or WebP)";
    match fs_err::metadata(path) {
        Ok(meta) if meta.is_file() => {}
        Ok(_) => {
            return Err(CliError::usage(
                format!("--image {}: not a file", path.display()),
                hint,
            ));
        }
        Err(e) => {
            let problem = match e.kind() {
                std::io::ErrorKind::NotFound => "no such file".to_owned(),
                std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
                _ => e.to_string(),
            };
            return Err(CliError::usage(
                format!("--image {}: {problem}", path.display()),
                hint,
            ));
        }
    }
    let absolute = std::path::absolute(path)?;
    Ok(absolute.display().to_string())
}

/// `tokens: 1234 in (800 cached), 56 out · $0.0021`
pub fn usage_summary(usage: &oi_protocol::Usage, cost_usd: Option<f64>) -> String {
    let cached = if usage.cached_input_tokens > 0 {
        format!(" ({} cached)", usage.cached_input_tokens)
    } else {
        String::new()
    };
    let cost = match cost_usd {
        Some(c) => format!(" · ${c:.4}"),
        None => " · cost unknown".to_owned(),
    };
    format!(
        "tokens: {} in{cached}, {} out{cost}",
        usage.input_tokens, usage.output_tokens
    )
}
