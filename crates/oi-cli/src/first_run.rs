//! A first start with no model: the set-up dialog (`interpreter setup`,
//! and `interpreter` when nothing is configured and no key is set), and
//! the built-in model's download — asked for, or agreed to with `--yes`,
//! with a progress line.

use std::io::{BufRead, IsTerminal, Read, Write};
use std::time::{Duration, Instant};

use oi_builtin::{KnownModel, ModelRef};
use oi_config::Loaded;
use oi_core::setup::{self, SessionRequest};

use crate::cli::SessionOptions;
use crate::error::CliError;

/// Whether a person is at the terminal to answer questions.
pub fn can_ask() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Before an interactive session: the set-up dialog on a first start,
/// then the built-in model's download if it is the model and is missing.
/// Returns the request to start with (built again after set-up).
pub async fn before_session(
    options: &SessionOptions,
    request: SessionRequest,
    dialog_allowed: bool,
    questions_allowed: bool,
) -> Result<SessionRequest, CliError> {
    let mut request = request;
    let interactive = questions_allowed && can_ask();
    if dialog_allowed && interactive {
        let loaded = setup::load_config(&request)?;
        if setup::first_run_needed(&loaded, request.api_key.as_deref()).is_some() {
            dialog(&request, &loaded).await?;
            request = crate::session::request(options).await?;
        }
    }
    ensure_weights(&request, options.yes, interactive).await?;
    Ok(request)
}

/// `interpreter setup`.
pub async fn setup_command(request: &SessionRequest) -> Result<std::process::ExitCode, CliError> {
    if !can_ask() {
        let hint = oi_core::SetupError::NoModelSetUp {
            var: "OPENAI_API_KEY".into(),
        }
        .hint()
        .unwrap_or_default();
        return Err(CliError::usage(
            "`interpreter setup` asks questions, and there is no terminal to ask them in",
            hint,
        ));
    }
    let loaded = setup::load_config(request)?;
    dialog(request, &loaded).await?;
    let request = SessionRequest {
        local: None,
        ..request.clone()
    };
    ensure_weights(&request, false, true).await?;
    Ok(std::process::ExitCode::SUCCESS)
}

pub(crate) fn say(text: &str) -> Result<(), CliError> {
    let mut err = std::io::stderr().lock();
    err.write_all(text.as_bytes())?;
    err.flush()?;
    Ok(())
}

/// A line typed at the terminal (or read from stdin), trimmed; `None` at
/// end of input.
pub(crate) fn ask(question: &str) -> Result<Option<String>, CliError> {
    say(question)?;
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line)? == 0 {
        return Ok(None);
    }
    Ok(Some(line.trim().to_owned()))
}

/// A secret typed or pasted at the terminal, not echoed; `None` when
/// given up (Ctrl-C, Ctrl-D, end of input).
fn ask_secret(question: &str) -> Result<Option<String>, CliError> {
    say(question)?;
    crossterm::terminal::enable_raw_mode()?;
    let result = read_secret(&mut std::io::stdin().lock());
    crossterm::terminal::disable_raw_mode()?;
    say("\n")?;
    Ok(result?)
}

fn read_secret(input: &mut impl Read) -> std::io::Result<Option<String>> {
    let mut secret = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        if input.read(&mut byte)? == 0 {
            return Ok(None);
        }
        match byte[0] {
            b'\r' | b'\n' => break,
            3 | 4 => return Ok(None),
            8 | 127 => {
                secret.pop();
            }
            b if b < 32 => {}
            b => secret.push(b),
        }
    }
    Ok(Some(String::from_utf8_lossy(&secret).trim().to_owned()))
}

/// `yes`/`no`, Enter meaning `default`.
fn confirm(question: &str, default: bool) -> Result<bool, CliError> {
    loop {
        let Some(answer) = ask(question)? else {
            return Ok(false);
        };
        match answer.to_ascii_lowercase().as_str() {
            "" => return Ok(default),
            "y" | "yes" => return Ok(true),
            "n" | "no" => return Ok(false),
            _ => say("Please answer y or n.\n")?,
        }
    }
}

fn set(loaded: &Loaded, key: &str, value: &str) -> Result<(), CliError> {
    oi_config::edit::set(&loaded.home, key, value)?;
    Ok(())
}

fn quoted(text: &str) -> String {
    serde_json::Value::String(text.to_owned()).to_string()
}

/// The dialog: three ways to reach a model; the choice is saved in the
/// user's configuration (a key in `keys.toml`, readable only by the user).
async fn dialog(request: &SessionRequest, loaded: &Loaded) -> Result<(), CliError> {
    let engine_note = if oi_builtin::AVAILABLE {
        String::new()
    } else {
        " — not in this build".to_owned()
    };
    let default = oi_builtin::KNOWN[0];
    say(&format!(
        "oi needs a language model to write and run code. How should it reach one?\n\
         \x20 1) Paste an API key (OpenAI, Anthropic, OpenRouter, Groq, …)\n\
         \x20 2) A model server running on this machine (Ollama, LM Studio, llama.cpp, …)\n\
         \x20 3) The built-in model: runs inside oi, no key, no server ({}, {:.1} GB download once){engine_note}\n",
        default.name,
        default.size as f64 / 1e9
    ))?;
    loop {
        let Some(choice) = ask("Choose 1, 2 or 3 (q to quit): ")? else {
            return Err(cancelled());
        };
        let done = match choice.as_str() {
            "1" => paste_key(loaded)?,
            "2" => local_server(request, loaded).await?,
            "3" if oi_builtin::AVAILABLE => {
                set(
                    loaded,
                    "model_provider",
                    &quoted(oi_config::BUILTIN_PROVIDER),
                )?;
                say(&format!(
                    "Saved: model_provider = \"builtin\" in {}.\n",
                    oi_config::display_path(&loaded.user_file)
                ))?;
                true
            }
            "3" => {
                say(&format!(
                    "This build has no built-in model: {}\n",
                    oi_builtin::HOW_TO_GET_ENGINE
                ))?;
                false
            }
            "q" | "quit" | "exit" => return Err(cancelled()),
            _ => {
                say("Type 1, 2 or 3.\n")?;
                false
            }
        };
        if done {
            say("`interpreter setup` changes this later.\n")?;
            return Ok(());
        }
    }
}

fn cancelled() -> CliError {
    CliError::usage(
        "set-up was left without choosing a model",
        "run `interpreter setup` to choose, or see `interpreter exec --help` for the flags and variables that choose one",
    )
}

/// 1) A provider from oi's list, and its key.
fn paste_key(loaded: &Loaded) -> Result<bool, CliError> {
    let providers: Vec<(&String, &oi_config::ProviderInfo)> = loaded
        .config
        .providers
        .iter()
        .filter(|(_, p)| p.built_in && p.env_key.is_some())
        .collect();
    let mut menu = String::new();
    for (i, (id, p)) in providers.iter().enumerate() {
        menu.push_str(&format!("  {}) {} ({id})\n", i + 1, p.name));
    }
    say(&menu)?;
    let Some(answer) = ask(&format!(
        "Which provider? 1-{} (Enter to go back): ",
        providers.len()
    ))?
    else {
        return Ok(false);
    };
    let Some((id, provider)) = answer
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|n| providers.get(n))
    else {
        return Ok(false);
    };
    let Some(var) = provider.env_key.clone() else {
        return Ok(false);
    };
    let Some(key) = ask_secret(&format!(
        "Paste your {} API key (it is not shown; it is kept in {} as {var}): ",
        provider.name,
        oi_config::display_path(&loaded.home.join(oi_config::keys::KEYS_FILE))
    ))?
    .filter(|k| !k.is_empty()) else {
        say("No key given.\n")?;
        return Ok(false);
    };
    oi_config::keys::store(&loaded.home, &var, &key)?;
    set(loaded, "model_provider", &quoted(id))?;
    say(&format!(
        "Saved: model_provider = \"{id}\" in {} (model: {}); the key is readable only by you.\n",
        oi_config::display_path(&loaded.user_file),
        provider
            .default_model
            .as_deref()
            .unwrap_or("set one with --model")
    ))?;
    Ok(true)
}

/// 2) The servers found here, as `--local` finds them.
async fn local_server(request: &SessionRequest, loaded: &Loaded) -> Result<bool, CliError> {
    let mut pick = |title: &str, labels: &[String]| {
        let picker = oi_tui::dialog::Picker::new(title, labels.to_vec(), None);
        oi_tui::dialog::pick(&mut std::io::stdout(), picker)
    };
    let choice = match setup::local::choose(request, "setup", None, Some(&mut pick)).await {
        Ok(choice) if !choice.builtin => choice,
        Ok(choice) => {
            say(&format!(
                "No model server answered on this machine ({}). Start one (e.g. `ollama serve`), or choose another way.\n",
                choice.base_url
            ))?;
            return Ok(false);
        }
        Err(oi_core::SetupError::NoLocalServer { places, .. }) => {
            say(&format!(
                "No model server answered on this machine (looked for {places}). Start one (e.g. `ollama serve`), or choose another way.\n"
            ))?;
            return Ok(false);
        }
        Err(e) => return Err(e.into()),
    };
    set(loaded, "model_providers.local.name", &quoted(&choice.kind))?;
    set(
        loaded,
        "model_providers.local.base_url",
        &quoted(&choice.base_url),
    )?;
    set(loaded, "model_providers.local.wire_api", "\"chat\"")?;
    set(loaded, "model_provider", "\"local\"")?;
    set(loaded, "model", &quoted(&choice.model))?;
    if let Some(tools) = choice.calls_tools {
        set(
            loaded,
            "harness",
            if tools { "\"native\"" } else { "\"markdown\"" },
        )?;
    }
    say(&format!(
        "Saved: {} on {} at {} as provider `local` in {}.\n",
        choice.model,
        choice.kind,
        choice.base_url,
        oi_config::display_path(&loaded.user_file)
    ))?;
    Ok(true)
}

/// When the built-in model is the model and its weights are not cached:
/// downloads them if `yes`, or if the person at the terminal agrees.
/// Otherwise leaves it to the session's set-up, which says how.
pub async fn ensure_weights(
    request: &SessionRequest,
    yes: bool,
    can_ask: bool,
) -> Result<(), CliError> {
    let loaded = setup::load_config(request)?;
    if !setup::builtin::selected(&loaded) || !oi_builtin::AVAILABLE {
        return Ok(());
    }
    let cwd = setup::current_dir(request)?;
    let ModelRef::Missing(known, dest) = setup::builtin::model_ref(&loaded, &cwd)? else {
        return Ok(());
    };
    let url = setup::builtin::download_url(&loaded, known);
    if !yes {
        if !can_ask {
            return Ok(());
        }
        let question = format!(
            "The built-in model {} is not downloaded yet: {:.1} GB from {url}, kept in {}. Download it now? [Y/n] ",
            known.name,
            known.size as f64 / 1e9,
            oi_config::display_path(dest.parent().unwrap_or(&dest))
        );
        if !confirm(&question, true)? {
            return Err(CliError::usage(
                format!("the built-in model {} is not downloaded", known.name),
                format!(
                    "download it with `interpreter models --download {}`, or name a GGUF file you have with `--model FILE.gguf`",
                    known.name
                ),
            ));
        }
    }
    download(known, &url, &dest).await
}

/// Downloads `known` to `dest` with a progress line on stderr.
pub async fn download(
    known: &KnownModel,
    url: &str,
    dest: &std::path::Path,
) -> Result<(), CliError> {
    let live = std::io::stderr().is_terminal();
    let started = Instant::now();
    let mut last = Instant::now() - Duration::from_secs(1);
    let mut last_tenth = u64::MAX;
    say(&format!("Downloading {} from {url}\n", known.name))?;
    let mut progress = |p: oi_builtin::download::Progress| {
        let percent = p.done.saturating_mul(100) / p.total.max(1);
        if p.verifying {
            let _ = say(&format!(
                "{}  100% {:.1} MB — checking its sha256…\n",
                if live { "\r" } else { "" },
                p.total as f64 / 1e6
            ));
            return;
        }
        let now = Instant::now();
        if live && now.duration_since(last) < Duration::from_millis(200) {
            return;
        }
        if !live && percent / 10 == last_tenth {
            return;
        }
        last = now;
        last_tenth = percent / 10;
        let seconds = started.elapsed().as_secs_f64().max(0.001);
        let rate = (p.done - p.resumed_from) as f64 / 1e6 / seconds;
        let resumed = if p.resumed_from > 0 {
            format!(" (resumed at {:.1} MB)", p.resumed_from as f64 / 1e6)
        } else {
            String::new()
        };
        let line = format!(
            "  {percent:>3}% {:.1} / {:.1} MB  {rate:.1} MB/s{resumed}",
            p.done as f64 / 1e6,
            p.total as f64 / 1e6
        );
        let _ = if live {
            say(&format!("\r{line}\x1b[K"))
        } else {
            say(&format!("{line}\n"))
        };
    };
    let path = oi_builtin::download::download(known, url, dest, &mut progress)
        .await
        .map_err(oi_core::SetupError::Builtin)?;
    say(&format!("Saved {}\n", oi_config::display_path(&path)))?;
    Ok(())
}

/// `interpreter models --local`: the servers found here and their models,
/// then the built-in model's cached and downloadable weights.
pub async fn list_local(request: &SessionRequest) -> Result<String, CliError> {
    let loaded = setup::load_config(request)?;
    let mut text = String::new();
    let (servers, places) = setup::local::servers().await;
    if servers.is_empty() {
        text.push_str(&format!(
            "(no model server answered on this machine; looked for {places})\n"
        ));
    }
    for server in &servers {
        for model in &server.models {
            text.push_str(&format!(
                "{model}  ({}, {})\n",
                server.kind, server.base_url
            ));
        }
    }
    let cache = setup::builtin::cache_dir(&loaded)?;
    let engine = if oi_builtin::AVAILABLE {
        ""
    } else {
        " — this build cannot run them"
    };
    text.push_str(&format!(
        "\nBuilt-in model ({}){engine}:\n",
        oi_config::display_path(&cache)
    ));
    let cached = oi_builtin::catalog::cached(&cache);
    for (name, _, size) in &cached {
        text.push_str(&format!(
            "  {name}  {:.1} GB, downloaded\n",
            *size as f64 / 1e9
        ));
    }
    for known in oi_builtin::KNOWN {
        if !cached.iter().any(|(n, _, _)| n == known.name) {
            text.push_str(&format!(
                "  {}  not downloaded: `interpreter models --download {}` ({})\n",
                known.name, known.name, known.description
            ));
        }
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_is_read_to_enter_with_backspace_and_given_up_on_ctrl_c() {
        let mut typed: &[u8] = b"sk-abx\x7fc\r";
        assert_eq!(read_secret(&mut typed).unwrap().as_deref(), Some("sk-abc"));
        let mut typed: &[u8] = b"sk\x03";
        assert_eq!(read_secret(&mut typed).unwrap(), None);
        let mut typed: &[u8] = b"";
        assert_eq!(read_secret(&mut typed).unwrap(), None);
    }
}
