//! `interpreter exec`: one task, no interactive session.

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

use oi_core::{Agent, SessionRequest};
use oi_protocol::{Event, Op, ReviewDecision, SkipReason, StopReason};

use crate::approve;
use crate::cli::ExecArgs;
use crate::error::{CliError, exit};
use crate::input::LineReader;
use crate::render::{HumanRenderer, JsonRenderer, Render};
use crate::session;
use crate::signals::{Request, Signals};

pub async fn run(args: ExecArgs, request: SessionRequest) -> Result<ExitCode, CliError> {
    let stdin_is_terminal = std::io::stdin().is_terminal();
    let (prompt, prompt_from_stdin) = match args.prompt.as_deref() {
        Some("-") | None => {
            if stdin_is_terminal && args.prompt.is_none() {
                return Err(CliError::usage(
                    "no task given",
                    "pass the task as an argument, `interpreter exec \"summarise data.csv\"`, or on stdin, `echo \"…\" | interpreter exec -`",
                ));
            }
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text)?;
            (text, true)
        }
        Some(prompt) => (prompt.to_owned(), false),
    };
    if prompt.trim().is_empty() {
        return Err(CliError::usage(
            "the task is empty",
            "say what oi should do, e.g. `interpreter exec \"how big is this folder?\"`",
        ));
    }
    // Approval is asked on the terminal; with none (or with the task read from
    // stdin) code that needs approval is not run, and the model is told why.
    let can_ask = stdin_is_terminal && !prompt_from_stdin;

    let setup = oi_core::setup(&request)?;
    let mut human = HumanRenderer::new(anstream::stderr());
    session::report_notices(&setup.notices, &mut human)?;
    let mut signals = Signals::install()?;
    let (ops, mut events) = Agent::spawn(setup.config, setup.client, setup.kernels);
    let _ = ops.send(Op::input(prompt));

    let mut json = args.json.then(|| JsonRenderer::new(std::io::stdout()));
    let mut input = can_ask.then(LineReader::spawn);
    let mut outcome: Option<(StopReason, Option<String>)> = None;
    let mut needed_approval = false;
    // Whether code held for approval was held because it looked risky.
    let mut risky_held = false;
    let mut interrupts = 0;
    let mut terminated = false;
    let mut total_usage = None;

    loop {
        let event = tokio::select! {
            event = events.recv() => event,
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
        let Some(event) = event else { break };
        let shown = match json.as_mut() {
            Some(json) => json.event(&event),
            None => human.event(&event),
        };
        if let Err(e) = shown {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                // Whoever read our output is gone: stop quietly.
                let _ = ops.send(Op::Shutdown);
            } else {
                return Err(e.into());
            }
        }
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
    if json.is_none() {
        if let Some((usage, cost)) = total_usage {
            human.line(anstyle::Style::new().dimmed(), &usage_summary(&usage, cost))?;
        }
        let answer = final_message.unwrap_or_default();
        let already_seen = human.streamed_text
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
    let code = match reason {
        StopReason::Done if needed_approval => {
            if json.is_none() {
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
