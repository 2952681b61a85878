//! `interpreter` with no subcommand: a session at a plain line prompt.

use std::process::ExitCode;

use oi_core::Agent;
use oi_protocol::{Event, Op, RunId, StopReason};

use crate::approve;
use crate::cli::SessionOptions;
use crate::error::{CliError, exit};
use crate::input::LineReader;
use crate::render::HumanRenderer;
use crate::session;
use crate::signals::{Request, Signals};

const HELP: &str = "Type a task and press Enter. The model proposes code; you answer y (run it), n (don't), a (run this and everything after without asking, except risky code) or e (edit it first).\nCtrl-C stops a running task. /exit or Ctrl-D leaves.\n\n/model [NAME]   show the models of the provider, or switch to NAME (saved as your default)\n/debug-config   show the effective configuration and where each value came from\n/undo           put the workspace back as it was before the last run that changed it\n/help           this help\n/exit           leave\n";

pub async fn run(options: SessionOptions) -> Result<ExitCode, CliError> {
    let mut setup = session::setup(&options)?;
    // A person is here to type what a program asks for.
    setup.config.user_input = true;
    session::report_setup_notices(&setup, &mut HumanRenderer::new(anstream::stderr()))?;
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
    let mut model = setup.config.model.clone();
    let loaded = setup.loaded;
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
            "/debug-config" => {
                out.raw(&oi_config::show(&loaded))?;
                continue;
            }
            "/undo" => {
                let _ = ops.send(Op::Undo);
                // The answer: Undone, or an Error.
                while let Some(event) = events.recv().await {
                    out.event(&event)?;
                    if matches!(event, Event::Undone { .. } | Event::Error { .. }) {
                        break;
                    }
                }
                continue;
            }
            _ if text == "/model" || text.starts_with("/model ") => {
                let name = text.trim_start_matches("/model").trim();
                if let Some(chosen) =
                    pick_model(&mut out, &mut input, &loaded, &options, &model, name).await?
                {
                    let _ = ops.send(Op::SetModel {
                        model: chosen.clone(),
                    });
                    match oi_config::edit::set(&loaded.home, "model", &chosen) {
                        Ok((file, _)) => out.line(
                            anstyle::Style::new().dimmed(),
                            &format!(
                                "Now using {chosen} (saved as your default in {}).",
                                oi_config::display_path(&file)
                            ),
                        )?,
                        Err(e) => out.error(
                            &format!("now using {chosen} for this session, but it could not be saved: {e}"),
                            e.hint().as_deref(),
                        )?,
                    }
                    model = chosen;
                }
                continue;
            }
            _ if text.starts_with('/') => {
                out.error(
                    &format!("unknown command `{text}`"),
                    Some("type /help for the list of commands"),
                )?;
                continue;
            }
            _ => {}
        }
        let _ = ops.send(Op::input(text.to_owned()));
        // Show the task's events until it completes. While a program waits
        // for input, a typed line goes to it.
        let mut waiting_for_input: Option<RunId> = None;
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
                line = input.next_line(), if waiting_for_input.is_some() => {
                    let Some(id) = waiting_for_input.take() else { continue };
                    match line? {
                        Some(text) => { let _ = ops.send(Op::Input { id, text }); }
                        // End of input (Ctrl-D): the program cannot get any.
                        None => { let _ = ops.send(Op::Interrupt); }
                    }
                    continue;
                }
            };
            let Some(event) = event else {
                break 'session;
            };
            out.event(&event)?;
            match event {
                Event::ApprovalRequested {
                    id, language, code, ..
                } => {
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
                Event::InputRequested { id, .. } => waiting_for_input = Some(id),
                Event::RunFinished { id, .. } if waiting_for_input == Some(id) => {
                    waiting_for_input = None;
                }
                Event::TaskComplete {
                    reason: StopReason::LoopGuard { .. },
                    ..
                } => {
                    out.raw("Continue anyway? [y/N] ")?;
                    let answer = tokio::select! {
                        line = input.next_line() => line?,
                        _ = signals.next() => None,
                    };
                    if answer.is_some_and(|a| {
                        matches!(a.trim().to_ascii_lowercase().as_str(), "y" | "yes")
                    }) {
                        let _ = ops.send(Op::input("Continue, but take a different approach from the one that kept repeating.".to_owned()));
                        continue;
                    }
                    break;
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

/// `/model`: with a name, that model; without, the provider's list to pick
/// from by number or name. `None` keeps the current model.
async fn pick_model<W: std::io::Write>(
    out: &mut HumanRenderer<W>,
    input: &mut LineReader,
    loaded: &oi_config::Loaded,
    options: &SessionOptions,
    current: &str,
    name: &str,
) -> Result<Option<String>, CliError> {
    if !name.is_empty() {
        return Ok(Some(name.to_owned()));
    }
    let listed = match session::provider_config(loaded, options.api_key.as_deref()) {
        Ok((provider, wire)) => oi_providers::list_models(&provider, wire)
            .await
            .map_err(CliError::from),
        Err(e) => Err(e),
    };
    let models = match listed {
        Ok(models) if !models.is_empty() => models,
        Ok(_) => {
            out.error(
                "the provider lists no models",
                Some("type `/model NAME` to use a model by name"),
            )?;
            return Ok(None);
        }
        Err(e) => {
            out.error(
                &format!("cannot list the models: {e}"),
                Some("type `/model NAME` to use a model by name"),
            )?;
            return Ok(None);
        }
    };
    let mut list = String::new();
    for (i, m) in models.iter().enumerate() {
        let mark = if m == current { "*" } else { " " };
        list.push_str(&format!("{mark} {:>2}. {m}\n", i + 1));
    }
    out.raw(&list)?;
    out.raw(&format!("Model (number or name; Enter keeps {current}): "))?;
    let Some(answer) = input.next_line().await? else {
        return Ok(None);
    };
    let answer = answer.trim();
    if answer.is_empty() {
        return Ok(None);
    }
    if let Ok(n) = answer.parse::<usize>() {
        return match models.get(n.wrapping_sub(1)) {
            Some(m) => Ok(Some(m.clone())),
            None => {
                out.error(
                    &format!("there is no model number {n}"),
                    Some("pick a number from the list"),
                )?;
                Ok(None)
            }
        };
    }
    Ok(Some(answer.to_owned()))
}
