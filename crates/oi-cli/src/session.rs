//! The command line as a session request (`oi_core::setup` does the
//! rest), and the notices shown before a session starts.

use std::io::{IsTerminal, Write};

use oi_config::FlagSetting;
use oi_core::setup::{Given, Notice, Resume, SessionRequest};

use crate::cli::SessionOptions;
use crate::error::CliError;
use crate::render::HumanRenderer;

/// What the command line asks of a session; with `--local`, the model
/// server found on this machine (the user picks a model in a terminal).
pub async fn request(options: &SessionOptions) -> Result<SessionRequest, CliError> {
    let mut request = SessionRequest {
        cwd: None,
        profile: profile(options),
        overrides: options.config.clone(),
        settings: settings(options),
        defaults: Vec::new(),
        api_base: options.api_base.clone(),
        api_key: options.api_key.clone(),
        workspace: options
            .workspace
            .clone()
            .map(|dir| Given::new(dir, "--workspace")),
        add_dirs: options
            .add_dir
            .iter()
            .map(|dir| Given::new(dir.clone(), "--add-dir"))
            .collect(),
        offline: options.offline.then(|| "--offline".to_owned()),
        local: None,
        resume: match (&options.resume, options.continue_session) {
            // A conversation file (saved with /save, or by Open Interpreter).
            (Some(file), _)
                if file.contains(std::path::MAIN_SEPARATOR) || file.ends_with(".json") =>
            {
                Some(Given::new(
                    Resume::File(std::path::absolute(file)?),
                    "--resume",
                ))
            }
            (Some(id), _) if !id.is_empty() => Some(Given::new(Resume::Id(id.clone()), "--resume")),
            (Some(_), _) => Some(Given::new(Resume::Latest, "--resume")),
            (None, true) => Some(Given::new(Resume::Latest, "--continue")),
            (None, false) => None,
        },
        // Typed on the command line, `never` needs no second confirmation.
        allow_all: options.dangerously_allow_all
            || options.ask_for_approval == Some(crate::cli::CodexApproval::Never),
        user_input: false,
        ephemeral: options.ephemeral,
        mcp_servers: Vec::new(),
    };
    // Open Interpreter's `--profile local` means a model on this machine.
    if options.local || options.profile.as_deref() == Some("local") {
        let from = if options.local {
            "--local"
        } else {
            "--profile local"
        };
        let interactive =
            std::io::stdin().is_terminal() && std::io::stdout().is_terminal() && !options.plain;
        let mut pick = |title: &str, labels: &[String]| {
            let picker = oi_tui::dialog::Picker::new(title, labels.to_vec(), None);
            oi_tui::dialog::pick(&mut std::io::stdout(), picker)
        };
        let picker: Option<oi_core::setup::local::Picker<'_>> =
            if interactive { Some(&mut pick) } else { None };
        let choice =
            oi_core::setup::local::choose(&request, from, options.model.as_deref(), picker).await?;
        request.local = Some(choice);
    }
    Ok(request)
}

/// The profile asked for: `--profile`, or Open Interpreter's shortcuts
/// for oi's own profiles.
fn profile(options: &SessionOptions) -> Option<String> {
    if options.fast {
        Some("fast".to_owned())
    } else if options.vision {
        Some("vision".to_owned())
    } else {
        options.profile.clone()
    }
}

/// The flags that set configuration values, named as typed.
fn settings(options: &SessionOptions) -> Vec<FlagSetting> {
    let mut flags = Vec::new();
    if let Some(model) = &options.model {
        flags.push(FlagSetting::new("--model", "model", model.as_str()));
    }
    if let Some(harness) = &options.harness {
        flags.push(FlagSetting::new("--harness", "harness", harness.as_str()));
    }
    if let Some(n) = options.max_turns {
        flags.push(FlagSetting::new("--max-turns", "max_turns", n));
    }
    if let Some(n) = options.max_output {
        flags.push(FlagSetting::new("--max-output", "max_output", n));
    }
    if let Some(seconds) = options.max_time {
        flags.push(FlagSetting::new("--max-time", "max_time", seconds));
    }
    if let Some(seconds) = options.run_timeout {
        flags.push(FlagSetting::new("--run-timeout", "run_timeout", seconds));
    }
    if options.yes {
        flags.push(FlagSetting::new("--yes", "approval", "auto"));
    }
    if options.dangerously_allow_all {
        flags.push(FlagSetting::new(
            "--dangerously-allow-all",
            "approval",
            "never",
        ));
    }
    if options.os {
        flags.push(FlagSetting::new("--os", "os", true));
    }
    if let Some(mode) = options.sandbox {
        flags.push(FlagSetting::new("--sandbox", "sandbox", mode.as_str()));
    }
    if let Some(text) = &options.system_message {
        flags.push(FlagSetting::new(
            "--system-message",
            "system_message",
            text.as_str(),
        ));
    }
    if let Some(text) = &options.custom_instructions {
        flags.push(FlagSetting::new(
            "--custom-instructions",
            "custom_instructions",
            text.as_str(),
        ));
    }
    if let Some(tokens) = options.context_window {
        flags.push(FlagSetting::new(
            "--context-window",
            "context_window",
            tokens,
        ));
    }
    if let Some(tokens) = options.max_tokens {
        flags.push(FlagSetting::new("--max-tokens", "max_tokens", tokens));
    }
    if let Some(t) = options.temperature {
        flags.push(FlagSetting::new("--temperature", "temperature", t));
    }
    if let Some(policy) = options.ask_for_approval {
        flags.push(FlagSetting::new(
            &format!("--ask-for-approval {}", policy.as_str()),
            "approval",
            policy.approval(),
        ));
    }
    if options.full_auto {
        flags.push(FlagSetting::new("--full-auto", "approval", "auto"));
        if options.sandbox.is_none() {
            flags.push(FlagSetting::new(
                "--full-auto",
                "sandbox",
                "workspace-write",
            ));
        }
    }
    if let Some(usd) = options.max_budget {
        flags.push(FlagSetting::new("--max-budget", "max_budget", usd));
    }
    flags
}

/// Shows `notices`, warnings in yellow.
pub fn report_notices<W: Write>(
    notices: &[Notice],
    out: &mut HumanRenderer<W>,
) -> std::io::Result<()> {
    let yellow =
        anstyle::Style::new().fg_color(Some(anstyle::Color::Ansi(anstyle::AnsiColor::Yellow)));
    for notice in notices {
        out.line(yellow, &notice.to_string())?;
    }
    Ok(())
}
