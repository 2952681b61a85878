//! MCP servers as tools of a session (the client side of the Model Context
//! Protocol, with the official `rmcp` crate).
//!
//! The servers of `[mcp_servers.NAME]` are started together when a session
//! starts (stdio servers as child processes, others over streamable HTTP),
//! each within its `startup_timeout_sec`; a server that fails is reported in
//! one line and left out. Their tools are offered to the model under names
//! that fit every provider (`mcp__SERVER__TOOL`, at most 64 characters of
//! `[A-Za-z0-9_-]`), and called with `tool_timeout_sec` as the limit. A
//! server that dies is reported once and its tools answer with that error.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use oi_config::{McpServerSettings, McpTransport};
use oi_protocol::ContentPart;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

/// The longest tool name the providers accept.
const MAX_TOOL_NAME: usize = 64;

/// What a stdio server inherits from oi's environment besides its own
/// `env` and `env_vars` (API keys and other secrets are not passed on).
const INHERITED_VARS: &[&str] = &[
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "USER",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TERM",
    "TMPDIR",
    "TZ",
    "XDG_RUNTIME_DIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
];

/// Stderr kept of a stdio server, to say why it failed.
const STDERR_KEPT: usize = 2000;

/// How the servers of a session are started.
#[derive(Debug, Clone, PartialEq)]
pub struct McpSetup {
    /// The enabled servers.
    pub servers: Vec<McpServerSettings>,
    /// oi's environment (what stdio servers inherit from, and where
    /// `env_vars`, `bearer_token_env_var` and `env_http_headers` are read).
    pub env: BTreeMap<String, String>,
    /// Where stdio servers start when they set no `cwd`.
    pub cwd: PathBuf,
}

/// One tool of one server, as the model is offered it.
#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    pub server: String,
    /// Its name on the server.
    pub name: String,
    /// The name the model calls it by (`mcp__SERVER__TOOL`).
    pub exposed: String,
    pub description: String,
    /// JSON Schema of its arguments.
    pub input_schema: Value,
    /// The server says it changes nothing (`readOnlyHint`).
    pub read_only: bool,
}

/// What a tool call gave back.
#[derive(Debug, Clone, PartialEq)]
pub struct McpOutput {
    /// Its text (and a note for each part that is not text).
    pub text: String,
    /// Its structured result, if it gave one.
    pub structured: Option<Value>,
    pub images: Vec<ContentPart>,
    /// The tool said the call failed.
    pub is_error: bool,
}

struct Server {
    service: RunningService<RoleClient, ClientConfig>,
    tool_timeout: Duration,
    /// The end of its standard error (stdio servers).
    stderr: Arc<Mutex<String>>,
}

/// The connected servers of a session and their tools.
#[derive(Default)]
pub struct McpTools {
    servers: HashMap<String, Server>,
    tools: Vec<McpTool>,
}

impl std::fmt::Debug for McpTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTools")
            .field("servers", &self.servers.keys().collect::<Vec<_>>())
            .field("tools", &self.tools.len())
            .finish()
    }
}

impl McpTools {
    /// Starts every server of `setup` at once; returns those that started,
    /// and for each that did not, one line: `MCP server `NAME` did not
    /// start: WHY`.
    pub async fn start(setup: McpSetup) -> (Self, Vec<String>) {
        let started = futures::future::join_all(
            setup
                .servers
                .iter()
                .map(|settings| connect(settings, &setup.env, &setup.cwd)),
        )
        .await;
        let mut tools = Self::default();
        let mut failures = Vec::new();
        let mut taken: HashMap<String, usize> = HashMap::new();
        for (settings, result) in setup.servers.iter().zip(started) {
            match result {
                Ok((server, listed)) => {
                    for tool in listed {
                        let name = tool.name.to_string();
                        if !settings.offers(&name) {
                            continue;
                        }
                        let read_only = tool
                            .annotations
                            .as_ref()
                            .and_then(|a| a.read_only_hint)
                            .unwrap_or(false);
                        let exposed = unique(exposed_name(&settings.name, &name), &mut taken);
                        let description = tool
                            .description
                            .as_deref()
                            .map(str::to_owned)
                            .or_else(|| tool.title.clone())
                            .unwrap_or_default();
                        tools.tools.push(McpTool {
                            server: settings.name.clone(),
                            name,
                            exposed,
                            description,
                            input_schema: Value::Object((*tool.input_schema).clone()),
                            read_only,
                        });
                    }
                    tools.servers.insert(settings.name.clone(), server);
                }
                Err(problem) => failures.push(format!(
                    "MCP server `{}` did not start: {problem}",
                    settings.name
                )),
            }
        }
        (tools, failures)
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    pub fn tools(&self) -> &[McpTool] {
        &self.tools
    }

    /// The tool the model calls `exposed`.
    pub fn by_exposed(&self, exposed: &str) -> Option<&McpTool> {
        self.tools.iter().find(|t| t.exposed == exposed)
    }

    /// The tool `name` of `server`, also when `-` was written as `_` (as
    /// Python attribute names must be).
    pub fn find(&self, server: &str, name: &str) -> Option<&McpTool> {
        let loose = |s: &str| s.replace('-', "_");
        self.tools
            .iter()
            .find(|t| t.server == server && t.name == name)
            .or_else(|| {
                self.tools
                    .iter()
                    .find(|t| loose(&t.server) == loose(server) && loose(&t.name) == loose(name))
            })
    }

    /// Calls `tool` with `arguments` (a JSON object), within the server's
    /// tool timeout, stopped early by `cancel`.
    pub async fn call(
        &self,
        tool: &McpTool,
        arguments: Value,
        cancel: &CancellationToken,
    ) -> Result<McpOutput, String> {
        let Some(server) = self.servers.get(&tool.server) else {
            return Err(format!("MCP server `{}` is not connected", tool.server));
        };
        let arguments = match arguments {
            Value::Object(map) => map,
            Value::Null => serde_json::Map::new(),
            other => {
                return Err(format!(
                    "the arguments must be a JSON object, not {}",
                    kind_of(&other)
                ));
            }
        };
        let request = CallToolRequestParams::new(tool.name.clone()).with_arguments(arguments);
        let call = server.service.call_tool(request);
        let result = tokio::select! {
            result = tokio::time::timeout(server.tool_timeout, call) => result,
            () = cancel.cancelled() => return Err("interrupted by the user".to_owned()),
        };
        match result {
            Err(_) => Err(format!(
                "no answer within {} s (tool_timeout_sec of MCP server `{}`)",
                server.tool_timeout.as_secs_f64(),
                tool.server
            )),
            Ok(Err(error)) if server.service.is_closed() => {
                let stderr = last_line(&server.stderr);
                Err(format!(
                    "MCP server `{}` is no longer running ({error}){stderr}",
                    tool.server
                ))
            }
            Ok(Err(error)) => Err(error.to_string()),
            Ok(Ok(result)) => Ok(read_result(
                serde_json::to_value(&result).unwrap_or(Value::Null),
            )),
        }
    }

    /// The servers whose connection has ended (a stdio server that exited,
    /// a session the HTTP server dropped), with the last words of each.
    pub fn stopped(&self) -> Vec<(String, String)> {
        let mut stopped: Vec<(String, String)> = self
            .servers
            .iter()
            .filter(|(_, s)| s.service.peer().is_transport_closed())
            .map(|(name, s)| (name.clone(), last_line(&s.stderr)))
            .collect();
        stopped.sort();
        stopped
    }

    /// Ends every connection (stdio servers are stopped).
    pub async fn shutdown(&self) {
        for server in self.servers.values() {
            server.service.cancellation_token().cancel();
        }
        // The connections end (and stop their processes) on their own
        // tasks; give them a moment to run.
        if !self.servers.is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `mcp__SERVER__TOOL`, with characters providers refuse replaced by `_`,
/// cut to fit.
fn exposed_name(server: &str, tool: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let name = format!("mcp__{}__{}", clean(server), clean(tool));
    name.chars().take(MAX_TOOL_NAME).collect()
}

/// `name`, or `name` with a number at its end when it is taken already.
fn unique(name: String, taken: &mut HashMap<String, usize>) -> String {
    let count = taken.entry(name.clone()).or_insert(0);
    *count += 1;
    if *count == 1 {
        return name;
    }
    let suffix = format!("_{count}");
    let keep = MAX_TOOL_NAME.saturating_sub(suffix.len());
    let renamed: String = name.chars().take(keep).collect::<String>() + &suffix;
    taken.insert(renamed.clone(), 1);
    renamed
}

/// Connects to one server and lists its tools, within its startup timeout.
async fn connect(
    settings: &McpServerSettings,
    env: &BTreeMap<String, String>,
    cwd: &Path,
) -> Result<(Server, Vec<rmcp::model::Tool>), String> {
    let limit = Duration::from_secs_f64(settings.startup_timeout_sec.max(0.001));
    let stderr = Arc::new(Mutex::new(String::new()));
    let client = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("oi", env!("CARGO_PKG_VERSION")),
    );
    let started = async {
        let service = match &settings.transport {
            McpTransport::Stdio {
                command,
                args,
                env: own_env,
                env_vars,
                cwd: own_cwd,
            } => {
                let mut cmd = tokio::process::Command::new(command);
                cmd.args(args).env_clear().kill_on_drop(true);
                for name in INHERITED_VARS
                    .iter()
                    .copied()
                    .chain(env_vars.iter().map(String::as_str))
                {
                    if let Some(value) = env.get(name) {
                        cmd.env(name, value);
                    }
                }
                cmd.envs(own_env);
                cmd.current_dir(
                    own_cwd
                        .as_deref()
                        .map_or_else(|| cwd.to_path_buf(), PathBuf::from),
                );
                let (transport, err) = TokioChildProcess::builder(cmd)
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .map_err(|e| format!("cannot run `{command}`: {e}"))?;
                if let Some(mut err) = err {
                    let kept = Arc::clone(&stderr);
                    tokio::spawn(async move {
                        let mut buf = [0u8; 1024];
                        while let Ok(n) = err.read(&mut buf).await {
                            if n == 0 {
                                break;
                            }
                            if let Ok(mut kept) = kept.lock() {
                                kept.push_str(&String::from_utf8_lossy(&buf[..n]));
                                if kept.len() > STDERR_KEPT {
                                    let mut cut = kept.len() - STDERR_KEPT;
                                    while !kept.is_char_boundary(cut) {
                                        cut += 1;
                                    }
                                    kept.drain(..cut);
                                }
                            }
                        }
                    });
                }
                client
                    .clone()
                    .serve(transport)
                    .await
                    .map_err(|e| e.to_string())?
            }
            McpTransport::Http {
                url,
                bearer_token_env_var,
                http_headers,
                env_http_headers,
            } => {
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                if let Some(var) = bearer_token_env_var {
                    let token = env
                        .get(var)
                        .filter(|v| !v.is_empty())
                        .ok_or_else(|| format!("`${var}` (its bearer_token_env_var) is not set"))?;
                    config = config.auth_header(token.clone());
                }
                let mut headers = HashMap::new();
                let mut add = |name: &str, value: &str| -> Result<(), String> {
                    let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                        .map_err(|_| format!("`{name}` is not a valid HTTP header name"))?;
                    let value = reqwest::header::HeaderValue::from_str(value)
                        .map_err(|_| format!("the value of header `{name}` is not valid"))?;
                    headers.insert(name, value);
                    Ok(())
                };
                for (name, value) in http_headers {
                    add(name, value)?;
                }
                for (name, var) in env_http_headers {
                    if let Some(value) = env.get(var) {
                        add(name, value)?;
                    }
                }
                config = config.custom_headers(headers);
                let transport = StreamableHttpClientTransport::from_config(config);
                client
                    .clone()
                    .serve(transport)
                    .await
                    .map_err(|e| e.to_string())?
            }
        };
        let tools = service
            .list_all_tools()
            .await
            .map_err(|e| format!("it did not list its tools: {e}"))?;
        Ok::<_, String>((service, tools))
    };
    let result = match tokio::time::timeout(limit, started).await {
        Ok(result) => result,
        Err(_) => Err(format!(
            "no answer within {} s (raise startup_timeout_sec if it needs longer)",
            settings.startup_timeout_sec
        )),
    };
    match result {
        Ok((service, tools)) => Ok((
            Server {
                service,
                tool_timeout: Duration::from_secs_f64(settings.tool_timeout_sec.max(0.001)),
                stderr,
            },
            tools,
        )),
        Err(problem) => {
            // Give a dying process a moment to say why.
            tokio::time::sleep(Duration::from_millis(50)).await;
            Err(format!("{problem}{}", last_line(&stderr)))
        }
    }
}

/// `: LAST LINE OF STDERR`, or nothing.
fn last_line(stderr: &Mutex<String>) -> String {
    let Ok(text) = stderr.lock() else {
        return String::new();
    };
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| format!(" — its last words: {}", l.trim()))
        .unwrap_or_default()
}

/// A `tools/call` result (as JSON) as text, images and structured data.
pub(crate) fn read_result(result: Value) -> McpOutput {
    let mut text = String::new();
    let mut images = Vec::new();
    let mut push = |piece: &str| {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(piece);
    };
    for part in result["content"].as_array().into_iter().flatten() {
        match part["type"].as_str() {
            Some("text") => push(part["text"].as_str().unwrap_or_default()),
            Some("image") => {
                let media_type = part["mimeType"].as_str().unwrap_or("image/png").to_owned();
                let data = part["data"].as_str().unwrap_or_default();
                if base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .is_ok()
                {
                    push(&format!("[image: {media_type}]"));
                    images.push(ContentPart::Image {
                        media_type,
                        data: data.to_owned(),
                    });
                } else {
                    push("[an image that was not valid base64]");
                }
            }
            Some("resource") => {
                let resource = &part["resource"];
                let uri = resource["uri"].as_str().unwrap_or("?");
                match resource["text"].as_str() {
                    Some(body) => push(&format!("[resource {uri}]\n{body}")),
                    None => push(&format!("[resource {uri}: binary data]")),
                }
            }
            Some("resource_link") => push(&format!(
                "[link to resource {}]",
                part["uri"].as_str().unwrap_or("?")
            )),
            Some("audio") => push("[audio, not shown]"),
            Some(other) => push(&format!("[{other} content, not shown]")),
            None => {}
        }
    }
    let structured = result
        .get("structuredContent")
        .filter(|v| !v.is_null())
        .cloned();
    if text.is_empty()
        && let Some(data) = &structured
    {
        text = data.to_string();
    }
    McpOutput {
        text,
        structured,
        images,
        is_error: result["isError"].as_bool().unwrap_or(false),
    }
}

/// The answer to the Python kernel's `mcp_tools` module.
pub(crate) fn kernel_reply(result: Result<McpOutput, String>) -> Value {
    match result {
        Ok(out) if out.is_error => json!({"ok": false, "error": out.text}),
        Ok(out) => json!({"ok": true, "text": out.text, "structured": out.structured}),
        Err(problem) => json!({"ok": false, "error": problem}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_fit_every_provider_and_stay_unique() {
        assert_eq!(exposed_name("docs", "search"), "mcp__docs__search");
        assert_eq!(
            exposed_name("my-srv", "get.page v2"),
            "mcp__my-srv__get_page_v2"
        );
        let long = exposed_name("s", &"x".repeat(100));
        assert_eq!(long.len(), MAX_TOOL_NAME);
        let mut taken = HashMap::new();
        let first = unique(long.clone(), &mut taken);
        let second = unique(long.clone(), &mut taken);
        assert_eq!(first, long);
        assert_ne!(second, first);
        assert!(
            second.len() <= MAX_TOOL_NAME && second.ends_with("_2"),
            "{second}"
        );
    }

    #[test]
    fn results_become_text_images_and_data() {
        let png = base64::engine::general_purpose::STANDARD.encode(b"\x89PNG");
        let out = read_result(json!({
            "content": [
                {"type": "text", "text": "found 2"},
                {"type": "image", "data": png, "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "body"}},
                {"type": "resource_link", "uri": "file:///b", "name": "b"}
            ],
            "structuredContent": {"count": 2},
            "isError": false
        }));
        assert_eq!(
            out.text,
            "found 2\n[image: image/png]\n[resource file:///a.txt]\nbody\n[link to resource file:///b]"
        );
        assert_eq!(out.images.len(), 1);
        assert_eq!(out.structured, Some(json!({"count": 2})));
        assert!(!out.is_error);
        let only_data = read_result(json!({"content": [], "structuredContent": {"a": 1}}));
        assert_eq!(only_data.text, r#"{"a":1}"#);
        let failed = read_result(
            json!({"content": [{"type": "text", "text": "no such page"}], "isError": true}),
        );
        assert!(failed.is_error);
        assert_eq!(
            kernel_reply(Ok(failed)),
            json!({"ok": false, "error": "no such page"})
        );
    }
}
