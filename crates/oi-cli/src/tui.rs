//! `interpreter` with no subcommand: the interactive session.
//!
//! In a terminal it is live: the conversation scrolls into the terminal's
//! own scrollback; a live region at the bottom shows the reply being
//! written, the running code's unfinished output and a spinner; the prompt
//! is a full line editor with history and completion, and questions are
//! answered with one key. Without a terminal, with `--plain` or `NO_COLOR`,
//! the same session is plain: lines in, lines out (see [`Console`]).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anstyle::{AnsiColor, Color, Style};
use oi_core::{Agent, SessionRequest};
use oi_protocol::{ApprovalPolicy, Event, HarnessKind, Op, ReviewDecision, StopReason};
use oi_tui::commands::SlashCommand;
use oi_tui::dialog::{Decision, Picker};
use oi_tui::editor::{image_paths, unwrap_block};
use oi_tui::input::{LineResult, TerminalInput};
use oi_tui::term::{Quiet, discard_typeahead};
use oi_tui::{ImageProtocol, Mode, View};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

use crate::cli::SessionOptions;
use crate::error::{CliError, exit};
use crate::input::LineReader;
use crate::session;
use crate::signals::{Request, Signals};

const DIM: Style = Style::new().dimmed();
const YELLOW: Style = Style::new().fg_color(Some(Color::Ansi(AnsiColor::Yellow)));

/// Whether the live session can run: a terminal on both ends, colours on.
pub fn live_possible(options: &SessionOptions) -> bool {
    !options.plain
        && std::io::stdout().is_terminal()
        && std::io::stdin().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        && std::env::var("TERM").map_or(true, |t| t != "dumb")
}

/// Where the user's answers come from.
enum Console {
    /// The terminal in raw mode: the line editor, one-key answers, pickers.
    Live(TerminalInput),
    /// Lines of standard input (no terminal, or a plain session).
    Plain(LineReader),
}

/// A line typed at a plain prompt, without its line break.
fn plain_line(line: Option<String>) -> LineResult {
    match line {
        Some(line) => LineResult::Text(line.trim_end_matches(['\n', '\r']).to_owned()),
        None => LineResult::Eof,
    }
}

impl Console {
    /// The next task or command. Plain: a line after `> `, or the lines of
    /// a `"""` block.
    async fn prompt(&mut self, view: &mut View<Out>) -> std::io::Result<LineResult> {
        match self {
            Self::Live(input) => input.prompt().await,
            Self::Plain(reader) => {
                view.raw("> ")?;
                let first = plain_line(reader.next_line().await?);
                let LineResult::Text(mut text) = first else {
                    return Ok(first);
                };
                let open = |t: &str| {
                    let t = t.trim();
                    t.starts_with("\"\"\"") && !(t.len() >= 6 && t.ends_with("\"\"\""))
                };
                if open(&text) {
                    loop {
                        let LineResult::Text(more) = plain_line(reader.next_line().await?) else {
                            break;
                        };
                        text.push('\n');
                        text.push_str(&more);
                        if more.trim_end().ends_with("\"\"\"") {
                            break;
                        }
                    }
                }
                Ok(LineResult::Text(text))
            }
        }
    }

    /// A line for a running program, with its line break.
    async fn line(&mut self) -> std::io::Result<LineResult> {
        match self {
            Self::Live(input) => input.line().await,
            Self::Plain(reader) => Ok(match reader.next_line().await? {
                Some(line) => LineResult::Text(line),
                None => LineResult::Eof,
            }),
        }
    }

    /// Yes or no to `question`: one key, or a line.
    async fn confirm(&mut self, view: &mut View<Out>, question: &str) -> std::io::Result<bool> {
        match self {
            Self::Live(input) => {
                discard_typeahead();
                view.raw(&format!("{question} [y] yes, [n] no "))?;
                let decision = input.decision().await?;
                let yes = matches!(decision, Decision::Yes | Decision::Always);
                view.raw(if yes { "yes\n" } else { "no\n" })?;
                Ok(yes)
            }
            Self::Plain(reader) => {
                view.raw(&format!("{question} [y/N] "))?;
                let answer = reader.next_line().await?;
                Ok(answer
                    .is_some_and(|a| matches!(a.trim().to_ascii_lowercase().as_str(), "y" | "yes")))
            }
        }
    }

    /// One item of `picker`, or a name typed; `None` when cancelled. Plain:
    /// the items numbered, then a number or a name.
    async fn pick(
        &mut self,
        view: &mut View<Out>,
        picker: Picker,
    ) -> std::io::Result<Option<String>> {
        match self {
            Self::Live(input) => input.pick(picker).await,
            Self::Plain(reader) => {
                if picker.items.is_empty() {
                    view.line(DIM, "(nothing to pick from)")?;
                    return Ok(None);
                }
                let mut list = String::new();
                for (i, item) in picker.items.iter().enumerate() {
                    let mark = if picker.current.as_deref() == Some(item) {
                        "*"
                    } else {
                        " "
                    };
                    list.push_str(&format!("{mark} {:>2}. {item}\n", i + 1));
                }
                view.raw(&list)?;
                let keep = picker
                    .current
                    .as_ref()
                    .map_or_else(|| "cancels".to_owned(), |c| format!("keeps {c}"));
                view.raw(&format!(
                    "{} (number or name; Enter {keep}): ",
                    picker.title
                ))?;
                let Some(answer) = reader.next_line().await? else {
                    return Ok(None);
                };
                let answer = answer.trim();
                if answer.is_empty() {
                    return Ok(None);
                }
                if let Ok(n) = answer.parse::<usize>() {
                    return match picker.items.get(n.wrapping_sub(1)) {
                        Some(item) => Ok(Some(item.clone())),
                        None => {
                            view.error(
                                &format!("there is no number {n} in the list"),
                                Some("pick a number from the list, or type a name"),
                            )?;
                            Ok(None)
                        }
                    };
                }
                Ok(Some(answer.to_owned()))
            }
        }
    }
}

enum Flow {
    Continue,
    Exit,
}

type Out = Box<dyn Write + Send>;

struct App {
    view: View<Out>,
    console: Console,
    /// The run waiting for a line of input, if any.
    waiting_for_input: Option<oi_protocol::RunId>,
    ops: mpsc::UnboundedSender<Op>,
    events: mpsc::UnboundedReceiver<Event>,
    signals: Signals,
    /// The API key from `--api-key`, for listing models and `/debug-config`.
    api_key: Option<String>,
    loaded: oi_config::Loaded,
    model: String,
    harness: HarnessKind,
    sandbox: String,
    auto: bool,
    verbose: bool,
    cwd: PathBuf,
    /// When Ctrl-C was last pressed (twice within a second leaves).
    last_interrupt: Option<Instant>,
    /// Echo off while a task runs (see `oi_tui::term`).
    quiet: Option<Quiet>,
}

/// Runs the session: live when [`live_possible`], else plain; `task`
/// (`interpreter "a task"`) is its first.
pub async fn run(
    options: &SessionOptions,
    request: SessionRequest,
    task: Option<String>,
) -> Result<ExitCode, CliError> {
    let live = live_possible(options);
    if live {
        oi_tui::highlight::preload();
    }
    // A person is here to type what a program asks for.
    let setup = oi_core::setup(&SessionRequest {
        user_input: true,
        ..request
    })?;
    let mut view: View<Out> = if live {
        let (width, height) = crossterm::terminal::size().unwrap_or((80, 24));
        View::with_mode(
            Box::new(std::io::stdout()) as Out,
            Mode::Live,
            usize::from(width),
            usize::from(height),
        )
        .with_images(ImageProtocol::detect())
    } else {
        View::new(Box::new(anstream::stdout()) as Out)
    };
    if live {
        session::report_notices(&setup.notices, &mut view)?;
    } else {
        // Notices go to stderr, apart from the conversation.
        session::report_notices(&setup.notices, &mut View::new(anstream::stderr()))?;
    }
    let sandbox = setup
        .kernels
        .sandbox()
        .map_or_else(|| "full-access".to_owned(), |p| p.mode.to_string());
    let cwd = setup.kernels.cwd().to_path_buf();
    view.line(
        DIM,
        &format!(
            "oi {} · {} · {} harness · sandbox {} · {}",
            env!("CARGO_PKG_VERSION"),
            setup.config.model,
            setup.config.harness,
            sandbox,
            cwd.display()
        ),
    )?;
    if let Some(os) = &setup.config.os
        && let Ok(desktop) = os.desktop.lock()
    {
        let scaler = desktop.scaler();
        let shown = if scaler.scales() {
            format!(", shown to the model at {}", scaler.shown())
        } else {
            String::new()
        };
        view.line(
            DIM,
            &format!(
                "OS mode: the model sees and uses {} ({}{shown}). Throw the mouse into a screen corner to stop it.",
                desktop.name(),
                scaler.real()
            ),
        )?;
    }
    let auto = setup.config.approval != ApprovalPolicy::Ask;
    view.line(
        DIM,
        if auto {
            "Code runs without asking, except risky code. Type /help for commands; Ctrl-D leaves."
        } else {
            "Code runs only after you approve it. Type /help for commands; Ctrl-D leaves."
        },
    )?;
    let model = setup.config.model.clone();
    let harness = setup.config.harness;
    let history = setup.loaded.home.join("history");
    let loaded = setup.loaded;
    let (ops, events) = Agent::spawn(setup.config, setup.client, setup.kernels);
    let console = if live {
        Console::Live(TerminalInput::spawn(&history, &cwd))
    } else {
        Console::Plain(LineReader::spawn())
    };
    let mut app = App {
        view,
        console,
        waiting_for_input: None,
        ops,
        events,
        signals: Signals::install()?,
        api_key: options.api_key.clone(),
        loaded,
        model,
        harness,
        sandbox,
        auto,
        verbose: options.verbose,
        cwd,
        last_interrupt: None,
        quiet: None,
    };
    if options.verbose {
        let _ = app.ops.send(Op::SetVerbose { verbose: true });
    }
    let result = app.session(task).await;
    app.shutdown().await;
    result
}

impl App {
    async fn session(&mut self, mut first: Option<String>) -> Result<ExitCode, CliError> {
        loop {
            if let Some(task) = first.take().filter(|t| !t.trim().is_empty()) {
                if self.live() {
                    self.view.line(Style::new(), &format!("› {task}"))?;
                }
                if let Flow::Exit = self.task(task).await? {
                    return Ok(ExitCode::from(exit::OK));
                }
                continue;
            }
            let line = tokio::select! {
                line = self.console.prompt(&mut self.view) => line?,
                // Live, Ctrl-C reaches the editor as a key and a signal here
                // is from outside; plain, Ctrl-C at the prompt leaves.
                _ = self.signals.next() => {
                    self.end_plain_line()?;
                    return Ok(ExitCode::from(exit::OK));
                }
            };
            let text = match line {
                LineResult::Eof => {
                    self.end_plain_line()?;
                    return Ok(ExitCode::from(exit::OK));
                }
                LineResult::Interrupted => {
                    if self.second_interrupt() {
                        return Ok(ExitCode::from(exit::OK));
                    }
                    self.view
                        .line(DIM, "(Ctrl-C again, or Ctrl-D, leaves; /help for commands)")?;
                    continue;
                }
                LineResult::Text(text) => unwrap_block(&text),
            };
            let trimmed = text.trim();
            if trimmed.is_empty() {
                continue;
            }
            let flow = if matches!(trimmed, "exit" | "quit") {
                Flow::Exit
            } else if let Some(command) = trimmed.strip_prefix("%%") {
                self.shell(command.trim()).await?
            } else if (trimmed.starts_with('/')
                // A path (`/usr/bin/x is broken`) is a task, `/load ./x.json` a command.
                && !trimmed[1..].split_whitespace().next().unwrap_or("").contains('/'))
                // `%reset`, `%jupyter`: magic commands; `%50 of …` is a task.
                || trimmed
                    .strip_prefix('%')
                    .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_alphabetic()))
            {
                self.command(trimmed).await?
            } else {
                self.task(text.trim_end().to_owned()).await?
            };
            if let Flow::Exit = flow {
                return Ok(ExitCode::from(exit::OK));
            }
        }
    }

    /// Plain: ends the prompt's line before leaving.
    fn end_plain_line(&mut self) -> Result<(), CliError> {
        if let Console::Plain(_) = self.console {
            self.view.raw("\n")?;
        }
        Ok(())
    }

    fn live(&self) -> bool {
        matches!(self.console, Console::Live(_))
    }

    /// Echo off (live only; see `oi_tui::term`).
    fn quiet_on(&mut self) {
        if self.live() && self.waiting_for_input.is_none() {
            self.quiet = Quiet::on().ok();
        }
    }

    /// Whether this Ctrl-C follows another within a second.
    fn second_interrupt(&mut self) -> bool {
        let now = Instant::now();
        let again = self
            .last_interrupt
            .is_some_and(|t| now.duration_since(t) < Duration::from_secs(1));
        self.last_interrupt = Some(now);
        again
    }

    async fn shutdown(&mut self) {
        let _ = self.ops.send(Op::Shutdown);
        while let Some(event) = self.events.recv().await {
            if event == Event::ShutdownComplete {
                break;
            }
        }
    }

    /// Runs one task, showing its events until it completes. Keys typed
    /// meanwhile are not echoed, and are dropped when it ends.
    async fn task(&mut self, text: String) -> Result<Flow, CliError> {
        self.quiet_on();
        let flow = self.run_task(text).await;
        self.quiet = None;
        self.waiting_for_input = None;
        if self.live() {
            discard_typeahead();
        }
        flow
    }

    async fn run_task(&mut self, text: String) -> Result<Flow, CliError> {
        let images = image_paths(&text, &self.cwd);
        for image in &images {
            self.view.line(DIM, &format!("(attached {image})"))?;
        }
        let _ = self.ops.send(Op::UserInput { text, images });
        let mut ticker = tokio::time::interval(oi_tui::view::FRAME);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut resized = signal(SignalKind::window_change())?;
        loop {
            tokio::select! {
                event = self.events.recv() => {
                    let Some(event) = event else { return Ok(Flow::Exit) };
                    if let Some(flow) = self.task_event(event).await? {
                        return Ok(flow);
                    }
                }
                _ = ticker.tick(), if self.view.busy() => self.view.tick()?,
                line = self.console.line(), if self.waiting_for_input.is_some() => {
                    let id = self.waiting_for_input.take();
                    if let Some(id) = id {
                        match line? {
                            LineResult::Text(text) => {
                                let _ = self.ops.send(Op::Input { id, text });
                            }
                            LineResult::Interrupted | LineResult::Eof => {
                                let _ = self.ops.send(Op::Interrupt);
                            }
                        }
                    }
                    self.quiet_on();
                }
                _ = resized.recv() => self.resize()?,
                request = self.signals.next() => match request {
                    Request::Interrupt => {
                        if self.second_interrupt() {
                            return Ok(Flow::Exit);
                        }
                        let _ = self.ops.send(Op::Interrupt);
                    }
                    Request::Terminate => return Ok(Flow::Exit),
                },
            }
        }
    }

    fn resize(&mut self) -> Result<(), CliError> {
        if let Ok((w, h)) = crossterm::terminal::size() {
            self.view.resize(usize::from(w), usize::from(h))?;
        }
        Ok(())
    }

    /// Shows one event of a task; `Some` when the task is over.
    async fn task_event(&mut self, event: Event) -> Result<Option<Flow>, CliError> {
        if self.verbose {
            let json = serde_json::to_string(&event).unwrap_or_default();
            self.view.line(DIM, &format!("event: {json}"))?;
        }
        self.view.event(&event)?;
        match event {
            Event::ApprovalRequested {
                id, language, code, ..
            } => {
                let decision = match self.approve(&language, &code).await? {
                    Some(decision) => decision,
                    None => {
                        let _ = self.ops.send(Op::Interrupt);
                        return Ok(None);
                    }
                };
                let _ = self.ops.send(Op::Approve { id, decision });
            }
            Event::InputRequested { id, .. } => {
                // The program's line is typed with echo, as in a terminal;
                // what was typed after its prompt appeared is kept for it.
                self.quiet = None;
                self.waiting_for_input = Some(id);
            }
            Event::RunFinished { id, .. } if self.waiting_for_input == Some(id) => {
                self.waiting_for_input = None;
                self.quiet_on();
            }
            Event::TaskComplete {
                reason: StopReason::LoopGuard { .. },
                ..
            } => {
                let go_on = tokio::select! {
                    yes = self.console.confirm(&mut self.view, "Continue anyway?") => yes?,
                    _ = self.signals.next() => false,
                };
                if go_on {
                    let _ = self.ops.send(Op::input(
                        "Continue, but take a different approach from the one that kept repeating.",
                    ));
                    return Ok(None);
                }
                return Ok(Some(Flow::Continue));
            }
            Event::TaskComplete { .. } => return Ok(Some(Flow::Continue)),
            Event::ShutdownComplete => return Ok(Some(Flow::Exit)),
            _ => {}
        }
        Ok(None)
    }

    /// The approval dialog: one key answers; `None` when Ctrl-C stops the task.
    async fn approve(
        &mut self,
        language: &str,
        code: &str,
    ) -> Result<Option<ReviewDecision>, CliError> {
        let input = match &mut self.console {
            Console::Live(input) => input,
            Console::Plain(reader) => {
                return Ok(tokio::select! {
                    decision = crate::approve::ask(&mut self.view, reader, language, code) => Some(decision?),
                    _ = self.signals.next() => {
                        self.view.raw("\n")?;
                        None
                    }
                });
            }
        };
        loop {
            discard_typeahead();
            let question = oi_tui::dialog::approval_question(language, &self.sandbox);
            self.view.raw(&question.render(true))?;
            let decision = input.decision().await?;
            let shown = match decision {
                Decision::Yes => "yes",
                Decision::No => "no",
                Decision::Always => "always",
                Decision::Edit => "edit",
                Decision::Interrupt => "stop",
            };
            self.view.raw(&format!("{shown}\n"))?;
            return Ok(Some(match decision {
                Decision::Yes => ReviewDecision::Approve,
                Decision::No => ReviewDecision::Decline,
                Decision::Always => ReviewDecision::ApproveForSession,
                Decision::Interrupt => return Ok(None),
                Decision::Edit if !oi_protocol::approval_question(language).1 => {
                    self.view
                        .line(DIM, "This cannot be edited; answer y, n or a.")?;
                    continue;
                }
                Decision::Edit => match crate::approve::edit(language, code).await {
                    Ok(edited) if edited.trim().is_empty() => {
                        self.view
                            .line(YELLOW, "The edited code is empty, so it will not run.")?;
                        ReviewDecision::Decline
                    }
                    Ok(edited) if edited == code => {
                        self.view.line(DIM, "The code was not changed.")?;
                        continue;
                    }
                    Ok(edited) => ReviewDecision::Edit { code: edited },
                    Err(e) => {
                        self.view.error(
                            &e.to_string(),
                            Some("set `$VISUAL` or `$EDITOR` to an editor that waits until you close the file"),
                        )?;
                        continue;
                    }
                },
            }));
        }
    }

    /// Sends `op` and shows events until one matches `done`; returns it.
    async fn control(
        &mut self,
        op: Op,
        done: impl Fn(&Event) -> bool,
    ) -> Result<Option<Event>, CliError> {
        let _ = self.ops.send(op);
        while let Some(event) = self.events.recv().await {
            if done(&event) {
                return Ok(Some(event));
            }
            self.view.event(&event)?;
        }
        Ok(None)
    }

    /// [`Self::control`], then shows the answer too.
    async fn control_shown(
        &mut self,
        op: Op,
        done: impl Fn(&Event) -> bool,
    ) -> Result<Option<Event>, CliError> {
        let event = self.control(op, done).await?;
        if let Some(event) = &event {
            self.view.event(event)?;
        }
        Ok(event)
    }

    async fn command(&mut self, line: &str) -> Result<Flow, CliError> {
        let (name, arg) = match line.split_once(char::is_whitespace) {
            Some((name, arg)) => (name, arg.trim()),
            None => (line, ""),
        };
        let Some(command) = SlashCommand::parse(name) else {
            let hint = match SlashCommand::suggest(name) {
                Some(s) => format!("did you mean {}? /help lists the commands", s.name()),
                None => "/help lists the commands".to_owned(),
            };
            self.view
                .error(&format!("unknown command `{name}`"), Some(&hint))?;
            return Ok(Flow::Continue);
        };
        match command {
            SlashCommand::Exit => return Ok(Flow::Exit),
            SlashCommand::Help => self.help()?,
            SlashCommand::DebugConfig => {
                let mut text = oi_config::show(&self.loaded, self.api_key.is_some());
                // Slash commands change these for the session only.
                text.push_str(&format!(
                    "\n# Now, in this session: model = \"{}\", harness = \"{}\", auto-run {}.\n",
                    self.model,
                    self.harness,
                    if self.auto { "on" } else { "off" }
                ));
                self.view.raw(&text)?;
            }
            SlashCommand::Model => self.pick_model(arg).await?,
            SlashCommand::Harness => {
                let chosen = if arg.is_empty() {
                    self.console
                        .pick(
                            &mut self.view,
                            Picker::new(
                                "Harness",
                                HarnessKind::NAMES.iter().map(|n| (*n).to_owned()).collect(),
                                Some(self.harness.to_string()),
                            ),
                        )
                        .await?
                } else {
                    Some(arg.to_owned())
                };
                match chosen.map(|word| word.parse::<HarnessKind>()) {
                    None => {}
                    Some(Err(unknown)) => self.view.error(
                        &unknown.to_string(),
                        Some("`native` gives the model a function tool; `markdown` runs the fenced code blocks of its replies"),
                    )?,
                    Some(Ok(harness)) => {
                        if let Some(Event::HarnessChanged { harness }) = self
                            .control_shown(Op::SetHarness { harness }, |e| {
                                matches!(e, Event::HarnessChanged { .. } | Event::Error { .. })
                            })
                            .await?
                        {
                            self.harness = harness;
                        }
                    }
                }
            }
            SlashCommand::Auto => {
                let policy = if self.auto {
                    ApprovalPolicy::Ask
                } else {
                    ApprovalPolicy::Auto
                };
                if let Some(Event::ApprovalChanged { policy }) = self
                    .control_shown(Op::SetApproval { policy }, |e| {
                        matches!(e, Event::ApprovalChanged { .. } | Event::Error { .. })
                    })
                    .await?
                {
                    self.auto = policy != ApprovalPolicy::Ask;
                }
            }
            SlashCommand::Undo => {
                self.control_shown(Op::Undo, |e| {
                    matches!(e, Event::Undone { .. } | Event::Error { .. })
                })
                .await?;
            }
            SlashCommand::Compact => {
                self.control_shown(Op::Compact, |e| {
                    matches!(e, Event::Compacted { .. } | Event::Error { .. })
                })
                .await?;
            }
            SlashCommand::Reset => {
                self.control_shown(Op::Reset, |e| matches!(e, Event::SessionReset))
                    .await?;
            }
            SlashCommand::Tokens | SlashCommand::Cost => {
                let stats = self
                    .control(Op::Stats, |e| matches!(e, Event::Stats { .. }))
                    .await?;
                if let Some(stats) = stats {
                    let text = if command == SlashCommand::Tokens {
                        oi_tui::view::context_text(&stats)
                    } else {
                        oi_tui::view::cost_text(&stats)
                    };
                    if let Some(text) = text {
                        self.view.line(Style::new(), &text)?;
                    }
                }
            }
            SlashCommand::Save => {
                let name = if arg.is_empty() {
                    oi_core::new_session_id()
                } else {
                    arg.to_owned()
                };
                let path = self.conversation_path(&name);
                self.control_shown(
                    Op::Save {
                        path: path.display().to_string(),
                    },
                    |e| matches!(e, Event::Saved { .. } | Event::Error { .. }),
                )
                .await?;
            }
            SlashCommand::Load => {
                let name = if arg.is_empty() {
                    let saved = self.saved_conversations();
                    if saved.is_empty() {
                        self.view.line(
                            DIM,
                            "No saved conversations yet: /save NAME saves this one.",
                        )?;
                        return Ok(Flow::Continue);
                    }
                    self.console
                        .pick(&mut self.view, Picker::new("Conversation", saved, None))
                        .await?
                } else {
                    Some(arg.to_owned())
                };
                if let Some(name) = name {
                    let path = self.conversation_path(&name);
                    self.control_shown(
                        Op::Load {
                            path: path.display().to_string(),
                        },
                        |e| matches!(e, Event::Loaded { .. } | Event::Error { .. }),
                    )
                    .await?;
                }
            }
            SlashCommand::Export => self.export(name, arg).await?,
            SlashCommand::Verbose => {
                self.verbose = match arg.to_ascii_lowercase().as_str() {
                    "on" | "true" | "yes" => true,
                    "off" | "false" | "no" => false,
                    _ => !self.verbose,
                };
                let _ = self.ops.send(Op::SetVerbose {
                    verbose: self.verbose,
                });
                self.view.line(
                    DIM,
                    if self.verbose {
                        "verbose: each request and event is shown as sent"
                    } else {
                        "verbose: off"
                    },
                )?;
            }
        }
        Ok(Flow::Continue)
    }

    /// `%% COMMAND`: runs a shell command in the session's shell, as the
    /// user, without the model (sandboxed like the model's code; Ctrl-C
    /// stops it). The conversation is not changed.
    async fn shell(&mut self, command: &str) -> Result<Flow, CliError> {
        if command.is_empty() {
            self.view.error(
                "no command after `%%`",
                Some("`%% ls -la` runs `ls -la` in the session's shell"),
            )?;
            return Ok(Flow::Continue);
        }
        self.quiet_on();
        let _ = self.ops.send(Op::Run {
            language: "shell".to_owned(),
            code: command.to_owned(),
        });
        // SIGTERM or SIGHUP stop the command too, then end the session.
        let mut flow = Flow::Continue;
        loop {
            tokio::select! {
                event = self.events.recv() => {
                    let Some(event) = event else { break };
                    let done = matches!(event, Event::RunFinished { .. } | Event::RunSkipped { .. });
                    self.view.event(&event)?;
                    if done {
                        break;
                    }
                }
                request = self.signals.next() => {
                    let _ = self.ops.send(Op::Interrupt);
                    if request == Request::Terminate {
                        flow = Flow::Exit;
                    }
                }
            }
        }
        self.quiet = None;
        Ok(flow)
    }

    /// `/export markdown|jupyter [FILE]` (`%markdown [FILE]`, `%jupyter
    /// [FILE]`): the session written for people; without FILE, a file
    /// named after the time in the current folder.
    async fn export(&mut self, name: &str, arg: &str) -> Result<(), CliError> {
        let (format_word, file) = match name {
            "%markdown" => ("markdown", arg),
            "%jupyter" => ("jupyter", arg),
            _ => match arg.split_once(char::is_whitespace) {
                Some((format, file)) => (format, file.trim()),
                None => (arg, ""),
            },
        };
        let Some(format) = oi_protocol::ExportFormat::parse(format_word) else {
            self.view.error(
                &format!(
                    "`{}` is not a format oi exports",
                    if format_word.is_empty() {
                        "(none)"
                    } else {
                        format_word
                    }
                ),
                Some("`/export markdown FILE` or `/export jupyter FILE`"),
            )?;
            return Ok(());
        };
        let file = if file.is_empty() {
            let stamp = oi_core::new_session_id();
            format!("oi-session-{stamp}.{}", format.extension())
        } else {
            file.to_owned()
        };
        let path = self.cwd.join(file);
        self.control_shown(
            Op::Export {
                path: path.display().to_string(),
                format,
            },
            |e| matches!(e, Event::Saved { .. } | Event::Error { .. }),
        )
        .await?;
        Ok(())
    }

    fn help(&mut self) -> Result<(), CliError> {
        let mut text = String::from(
            "Type a task and press Enter; Shift-Enter or Alt-Enter (or a \"\"\" block) for more lines.\nThe model proposes code; you answer y (run it), n or Esc (don't), a (run this and the rest without asking, except risky code) or e (edit it first).\nCtrl-C stops the running code or reply; twice (or Ctrl-D) leaves. Ctrl-L clears the screen. Tab completes commands and paths; a dropped image file is attached.\n\n",
        );
        for command in SlashCommand::ALL {
            text.push_str(&format!("{:<14} {}\n", command.name(), command.help()));
        }
        text.push_str("%% COMMAND     run a shell command yourself, without the model\n");
        text.push_str("Open Interpreter's magic commands work too: %reset, %undo, %tokens, %verbose, %info, %help, %auto_run, %save_message, %load_message, %markdown, %jupyter.\n");
        self.view.raw(&text)?;
        Ok(())
    }

    async fn pick_model(&mut self, name: &str) -> Result<(), CliError> {
        let chosen = if name.is_empty() {
            let builtin = oi_core::setup::builtin::selected(&self.loaded);
            let listed = match oi_core::setup::provider(&self.loaded, self.api_key.as_deref()) {
                _ if builtin => {
                    oi_core::setup::builtin::models(&self.loaded).map_err(CliError::from)
                }
                Ok((provider, wire)) => oi_providers::list_models(&provider, wire)
                    .await
                    .map_err(CliError::from),
                Err(e) => Err(CliError::from(e)),
            };
            match listed {
                Ok(models) => {
                    self.console
                        .pick(
                            &mut self.view,
                            Picker::new("Model", models, Some(self.model.clone())),
                        )
                        .await?
                }
                Err(e) => {
                    self.view.error(
                        &format!("cannot list the models: {e}"),
                        Some("type `/model NAME` to use a model by name"),
                    )?;
                    None
                }
            }
        } else {
            Some(name.to_owned())
        };
        let Some(chosen) = chosen else {
            return Ok(());
        };
        self.control_shown(
            Op::SetModel {
                model: chosen.clone(),
            },
            |e| matches!(e, Event::ModelChanged { .. }),
        )
        .await?;
        self.model = chosen.clone();
        match oi_config::edit::set(&self.loaded.home, "model", &chosen) {
            Ok((file, _)) => self.view.line(
                DIM,
                &format!(
                    "saved as your default model in {}",
                    oi_config::display_path(&file)
                ),
            )?,
            Err(e) => self.view.error(
                &format!("now using {chosen} for this session, but it could not be saved: {e}"),
                e.hint().as_deref(),
            )?,
        }
        Ok(())
    }

    fn conversations_dir(&self) -> PathBuf {
        self.loaded.home.join("conversations")
    }

    fn conversation_path(&self, name: &str) -> PathBuf {
        let file = if name.ends_with(".json") {
            name.to_owned()
        } else {
            format!("{name}.json")
        };
        if file.contains('/') {
            PathBuf::from(file)
        } else {
            self.conversations_dir().join(file)
        }
    }

    /// Saved conversations, newest first.
    fn saved_conversations(&self) -> Vec<String> {
        let Ok(entries) = fs_err::read_dir(self.conversations_dir()) else {
            return Vec::new();
        };
        let mut found: Vec<(std::time::SystemTime, String)> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let name = name.strip_suffix(".json")?.to_owned();
                let modified = e.metadata().and_then(|m| m.modified()).ok()?;
                Some((modified, name))
            })
            .collect();
        found.sort_by_key(|f| std::cmp::Reverse(f.0));
        found.into_iter().map(|(_, n)| n).collect()
    }
}

impl Drop for App {
    fn drop(&mut self) {
        let _ = std::io::stdout().flush();
    }
}
