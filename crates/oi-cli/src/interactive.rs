//! `interpreter` with no subcommand: a session at a plain line prompt.

use std::process::ExitCode;

use oi_core::Agent;
use oi_protocol::{Event, Op};

use crate::approve;
use crate::cli::SessionOptions;
use crate::error::{CliError, exit};
use crate::input::LineReader;
use crate::render::{HumanRenderer, Render};
use crate::session;
use crate::signals::{Request, Signals};

const HELP: &str = "Type a task and press Enter. The model proposes code; you answer y (run it), n (don't), a (run this and everything after without asking) or e (edit it first).\nCtrl-C stops a running task. /exit or Ctrl-D leaves.\n";

pub async fn run(options: SessionOptions) -> Result<ExitCode, CliError> {
    let setup = session::setup(&options)?;
    let mut signals = Signals::install()?;
    let mut out = HumanRenderer::new(anstream::stdout());
    let dim = anstyle::Style::new().dimmed();
    out.line(
        dim,
        &format!(
            "oi {} · model {} · {} harness · {}",
            env!("CARGO_PKG_VERSION"),
            setup.config.model,
            setup.config.harness,
            setup.kernels.cwd().display()
        ),
    )?;
    out.line(
        dim,
        if options.yes {
            "Code runs without asking (--yes). Type /help for help."
        } else {
            "Code runs only after you approve it. Type /help for help."
        },
    )?;
    let (ops, mut events) = Agent::spawn(setup.config, setup.client, setup.kernels);
    let mut input = LineReader::spawn();

    'session: loop {
        out.raw("> ")?;
        let line = tokio::select! {
            line = input.next_line() => line?,
            request = signals.next() => {
                // Ctrl-C (or a signal to end) at the prompt leaves the session.
                let _ = request;
                out.raw("\n")?;
                break 'session;
            }
        };
        let Some(line) = line else {
            out.raw("\n")?;
            break;
        };
        let text = line.trim();
        match text {
            "" => continue,
            "/exit" | "/quit" | "exit" | "quit" => break,
            "/help" => {
                out.raw(HELP)?;
                continue;
            }
            _ => {}
        }
        let _ = ops.send(Op::UserInput {
            text: text.to_owned(),
        });
        // Show the task's events until it completes.
        loop {
            let event = tokio::select! {
                event = events.recv() => event,
                request = signals.next() => {
                    match request {
                        Request::Interrupt => { let _ = ops.send(Op::Interrupt); }
                        Request::Terminate => break 'session,
                    }
                    continue;
                }
            };
            let Some(event) = event else {
                break 'session;
            };
            out.event(&event)?;
            match event {
                Event::ApprovalRequested { id, language, code } => {
                    let decision = tokio::select! {
                        decision = approve::ask(&mut out, &mut input, &language, &code) => decision?,
                        request = signals.next() => {
                            out.raw("\n")?;
                            match request {
                                Request::Interrupt => { let _ = ops.send(Op::Interrupt); }
                                Request::Terminate => break 'session,
                            }
                            continue;
                        }
                    };
                    let _ = ops.send(Op::Approve { id, decision });
                }
                Event::TaskComplete { .. } => break,
                _ => {}
            }
        }
    }

    let _ = ops.send(Op::Shutdown);
    while let Some(event) = events.recv().await {
        if event == Event::ShutdownComplete {
            break;
        }
    }
    Ok(ExitCode::from(exit::OK))
}
