//! `interpreter mcp list|get|add|remove`: the MCP servers of the
//! configuration.

use std::process::ExitCode;

use oi_config::{McpServerSettings, McpTransport};
use oi_core::SessionRequest;
use oi_core::mcp::{McpSetup, McpTools};
use oi_core::setup;
use serde_json::{Value, json};

use crate::cli::McpAction;
use crate::commands::{oi_home, write_stdout};
use crate::error::{CliError, exit};

pub async fn run(request: &SessionRequest, action: McpAction) -> Result<ExitCode, CliError> {
    match action {
        McpAction::List { json } => list(request, json),
        McpAction::Get { name, json } => get(request, &name, json).await,
        McpAction::Add {
            name,
            url,
            bearer_token_env_var,
            env,
            command,
        } => add(&name, url, bearer_token_env_var, &env, &command),
        McpAction::Remove { name } => remove(&name),
    }
}

/// How the server is reached, in one line.
fn reached(server: &McpServerSettings) -> String {
    match &server.transport {
        McpTransport::Stdio { command, args, .. } => std::iter::once(command)
            .chain(args)
            .map(|a| shlex::try_quote(a).map_or_else(|_| a.clone(), |q| q.into_owned()))
            .collect::<Vec<_>>()
            .join(" "),
        McpTransport::Http { url, .. } => url.clone(),
    }
}

/// The settings as JSON (values of `env` and headers hidden).
fn to_json(server: &McpServerSettings) -> Value {
    let hidden = |map: &std::collections::BTreeMap<String, String>| -> Value {
        map.keys()
            .map(|k| (k.clone(), json!("…")))
            .collect::<serde_json::Map<_, _>>()
            .into()
    };
    let transport = match &server.transport {
        McpTransport::Stdio {
            command,
            args,
            env,
            env_vars,
            cwd,
        } => json!({
            "type": "stdio",
            "command": command,
            "args": args,
            "env": hidden(env),
            "env_vars": env_vars,
            "cwd": cwd,
        }),
        McpTransport::Http {
            url,
            bearer_token_env_var,
            http_headers,
            env_http_headers,
        } => json!({
            "type": "streamable_http",
            "url": url,
            "bearer_token_env_var": bearer_token_env_var,
            "http_headers": hidden(http_headers),
            "env_http_headers": env_http_headers,
        }),
    };
    json!({
        "name": server.name,
        "enabled": server.enabled,
        "transport": transport,
        "startup_timeout_sec": server.startup_timeout_sec,
        "tool_timeout_sec": server.tool_timeout_sec,
        "enabled_tools": server.enabled_tools,
        "disabled_tools": server.disabled_tools,
    })
}

fn list(request: &SessionRequest, as_json: bool) -> Result<ExitCode, CliError> {
    let loaded = setup::load_config(request)?;
    let servers = &loaded.config.mcp_servers;
    if as_json {
        let all: Vec<Value> = servers.values().map(to_json).collect();
        write_stdout(&format!("{}\n", Value::from(all)))?;
        return Ok(ExitCode::from(exit::OK));
    }
    if servers.is_empty() {
        write_stdout(
            "No MCP servers are configured. Add one with `interpreter mcp add NAME -- COMMAND ARGS…` or `interpreter mcp add NAME --url URL`.\n",
        )?;
        return Ok(ExitCode::from(exit::OK));
    }
    let width = servers.keys().map(String::len).max().unwrap_or(4).max(4);
    let mut text = format!("{:width$}  {:8}  {}\n", "NAME", "STATUS", "SERVER");
    for server in servers.values() {
        let status = if server.enabled {
            "enabled"
        } else {
            "disabled"
        };
        text.push_str(&format!(
            "{:width$}  {status:8}  {}\n",
            server.name,
            reached(server)
        ));
    }
    write_stdout(&text)?;
    Ok(ExitCode::from(exit::OK))
}

async fn get(request: &SessionRequest, name: &str, as_json: bool) -> Result<ExitCode, CliError> {
    let loaded = setup::load_config(request)?;
    let Some(server) = loaded.config.mcp_servers.get(name) else {
        let known: Vec<&str> = loaded
            .config
            .mcp_servers
            .keys()
            .map(String::as_str)
            .collect();
        return Err(CliError::usage(
            format!("there is no MCP server `{name}` in the configuration"),
            if known.is_empty() {
                "none is configured; add one with `interpreter mcp add NAME -- COMMAND ARGS…`"
                    .to_owned()
            } else {
                format!("the configured servers: {}", known.join(", "))
            },
        ));
    };
    // Started once, as a session would, to list what it offers.
    let cwd = request.cwd.clone().map_or_else(std::env::current_dir, Ok)?;
    let (tools, failures) = McpTools::start(McpSetup {
        servers: vec![McpServerSettings {
            enabled: true,
            ..server.clone()
        }],
        env: loaded.env.clone(),
        cwd,
    })
    .await;
    let offered: Vec<Value> = tools
        .tools()
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "tool": t.exposed,
                "read_only": t.read_only,
                "description": t.description,
            })
        })
        .collect();
    tools.shutdown().await;
    if as_json {
        let mut out = to_json(server);
        out["tools"] = Value::from(offered);
        out["error"] = failures.first().map_or(Value::Null, |f| json!(f));
        write_stdout(&format!("{out}\n"))?;
        return Ok(ExitCode::from(if failures.is_empty() {
            exit::OK
        } else {
            exit::FAILED
        }));
    }
    let mut text = format!("{name}\n");
    text.push_str(&format!("  enabled: {}\n", server.enabled));
    match &server.transport {
        McpTransport::Stdio {
            env, env_vars, cwd, ..
        } => {
            text.push_str(&format!("  command: {}\n", reached(server)));
            if !env.is_empty() {
                let keys: Vec<&str> = env.keys().map(String::as_str).collect();
                text.push_str(&format!("  env: {} (values hidden)\n", keys.join(", ")));
            }
            if !env_vars.is_empty() {
                text.push_str(&format!("  env_vars: {}\n", env_vars.join(", ")));
            }
            if let Some(cwd) = cwd {
                text.push_str(&format!("  cwd: {cwd}\n"));
            }
        }
        McpTransport::Http {
            url,
            bearer_token_env_var,
            http_headers,
            ..
        } => {
            text.push_str(&format!("  url: {url}\n"));
            if let Some(var) = bearer_token_env_var {
                text.push_str(&format!("  bearer token: ${var}\n"));
            }
            if !http_headers.is_empty() {
                let keys: Vec<&str> = http_headers.keys().map(String::as_str).collect();
                text.push_str(&format!("  headers: {} (values hidden)\n", keys.join(", ")));
            }
        }
    }
    text.push_str(&format!(
        "  startup_timeout_sec: {}, tool_timeout_sec: {}\n",
        server.startup_timeout_sec, server.tool_timeout_sec
    ));
    for failure in &failures {
        text.push_str(&format!("  {failure}\n"));
    }
    if failures.is_empty() {
        text.push_str(&format!("  tools ({}):\n", offered.len()));
        for tool in &offered {
            let read_only = if tool["read_only"] == true {
                " [read-only]"
            } else {
                ""
            };
            let about = tool["description"]
                .as_str()
                .unwrap_or("")
                .lines()
                .next()
                .unwrap_or("");
            text.push_str(&format!(
                "    {}{read_only}  {about}\n",
                tool["name"].as_str().unwrap_or("")
            ));
        }
    }
    write_stdout(&text)?;
    Ok(ExitCode::from(if failures.is_empty() {
        exit::OK
    } else {
        exit::FAILED
    }))
}

fn add(
    name: &str,
    url: Option<String>,
    bearer_token_env_var: Option<String>,
    env: &[String],
    command: &[String],
) -> Result<ExitCode, CliError> {
    let mut fields: Vec<(&str, Value)> = Vec::new();
    match (url, command.split_first()) {
        (Some(url), _) => {
            fields.push(("url", json!(url)));
            if let Some(var) = bearer_token_env_var {
                fields.push(("bearer_token_env_var", json!(var)));
            }
        }
        (None, Some((program, args))) => {
            fields.push(("command", json!(program)));
            if !args.is_empty() {
                fields.push(("args", json!(args)));
            }
            let mut vars = serde_json::Map::new();
            for pair in env {
                let Some((key, value)) = pair.split_once('=').filter(|(k, _)| !k.is_empty()) else {
                    return Err(CliError::usage(
                        format!("--env `{pair}`: expected KEY=VALUE"),
                        "for example --env GITHUB_TOKEN=ghp_…",
                    ));
                };
                vars.insert(key.to_owned(), json!(value));
            }
            if !vars.is_empty() {
                fields.push(("env", Value::Object(vars)));
            }
        }
        (None, None) => {
            return Err(CliError::usage(
                format!("`mcp add {name}` needs a command or a URL"),
                format!(
                    "`interpreter mcp add {name} -- COMMAND ARGS…` for a program oi starts, or `interpreter mcp add {name} --url URL` for a streamable HTTP server"
                ),
            ));
        }
    }
    let home = oi_home()?;
    let (file, replaced) = oi_config::edit::add_mcp_server(&home, name, &fields)?;
    write_stdout(&format!(
        "{} MCP server `{name}` in {}\n",
        if replaced { "Replaced" } else { "Added" },
        oi_config::display_path(&file)
    ))?;
    Ok(ExitCode::from(exit::OK))
}

fn remove(name: &str) -> Result<ExitCode, CliError> {
    let home = oi_home()?;
    let file = oi_config::edit::remove_mcp_server(&home, name)?;
    write_stdout(&format!(
        "Removed MCP server `{name}` from {}\n",
        oi_config::display_path(&file)
    ))?;
    Ok(ExitCode::from(exit::OK))
}
