//! Harnesses: how the model is asked to act, and how its reply becomes runs.
//!
//! - `native`: one `execute {language, code}` function tool; results go back
//!   as tool messages.
//! - `markdown`: no tools; every fenced code block of the reply is proposed in
//!   order; results go back as one user message. For models without reliable
//!   tool calling.
//!
//! Both recover tool calls that a model printed as JSON text instead of
//! making them (see `recover.rs`), and correct code fenced as the wrong
//! language (see `language.rs`).

mod family;
mod fences;
pub(crate) mod language;
mod recover;

pub(crate) use fences::fenced_blocks;
use recover::Printed;

use oi_protocol::{ContentPart, Message, ToolCall};
use oi_providers::ToolSpec;
use serde_json::json;

use oi_protocol::HarnessKind;

/// Code the model wants to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProposedRun {
    /// The tool call this answers (native harness and recovered calls).
    pub call_id: Option<String>,
    /// The language as the model named it, or as guessed from the code.
    pub language: Option<String>,
    pub code: String,
}

/// What the agent must do about one part of a reply.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Action {
    Run(ProposedRun),
    /// A call that cannot be run; `message` goes back as its result (as a
    /// tool message when it answers a call id).
    Invalid {
        call_id: Option<String>,
        message: String,
    },
    /// OS mode: an action of the `computer` tool.
    Computer {
        call_id: String,
        action: oi_computer::Action,
    },
    /// A file edit through the text editor (`claude-code`) or
    /// `apply_patch` (`codex`); `input` is the tool's arguments.
    Edit {
        call_id: String,
        tool: EditTool,
        input: serde_json::Value,
    },
    /// The model asked for a fresh shell (`bash` with `restart`).
    RestartShell {
        call_id: String,
    },
    /// A call of an MCP server's tool (`tool` is the name the model used).
    Mcp {
        call_id: String,
        tool: String,
        arguments: String,
    },
}

impl Action {
    /// The code this action runs, if it is a run.
    pub(crate) fn run(&self) -> Option<&ProposedRun> {
        match self {
            Self::Run(run) => Some(run),
            _ => None,
        }
    }
}

/// Which edit tool a model called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EditTool {
    TextEditor,
    ApplyPatch,
}

/// The result of one action, for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Report {
    pub call_id: Option<String>,
    pub language: String,
    pub text: String,
    /// Images the run made, for a model that reads them.
    pub images: Vec<ContentPart>,
}

/// The code of the example block in the small-model prompt (markdown
/// harness). A small model lost for a step copies it as one; it never does
/// a task's work.
pub(crate) const EXAMPLE_CODE: &str = "print(1 + 1)";

/// Whether a block is prose: every line a sentence ("All files have been
/// renamed.", "Done. The folder holds:") or a file's name listed under
/// one (`Holiday_Pic.jpg`), with at least one sentence. A small model told
/// to answer in prose after a run of code writes its answer in a block
/// too. Never code in any language oi runs.
fn is_prose(code: &str) -> bool {
    fn word(w: &str, capital: bool) -> bool {
        let mut chars = w.chars();
        chars.next().is_some_and(|c| {
            if capital {
                c.is_ascii_uppercase()
            } else {
                c.is_ascii_lowercase()
            }
        }) && chars.all(|c| c.is_ascii_lowercase() || c == '\'')
    }
    fn sentence(line: &str) -> bool {
        let mut words: Vec<&str> = line.split_whitespace().collect();
        // A word said first on its own ("Done.", "Great!").
        if words.len() > 4
            && let Some(said) = words[0].strip_suffix(['.', '!'])
            && word(said, true)
        {
            words.remove(0);
        }
        words.len() >= 4
            && word(words[0], true)
            && word(words[1], false)
            && line.ends_with(['.', '!', '?', ':'])
            && !line.contains(['=', '$', '|', ';', '{', '}', '<', '>', '\\'])
    }
    let lines: Vec<&str> = code
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines.iter().any(|l| sentence(l)) && lines.iter().all(|l| sentence(l) || listed_name(l))
}

/// Whether a (trimmed) line is a file's name alone, as a list shows it and
/// no command is: `sunset.jpg`, `docs/`, `docs/intro copy.txt` (spaces
/// only in a path, so `cat notes.txt` is not one); never one that runs
/// something (`./run.sh`, `/usr/bin/env`, `-x`, `~/bin/tool`).
pub(crate) fn listed_name(line: &str) -> bool {
    let first = line.split_whitespace().next().unwrap_or_default();
    let path = first.contains('/');
    let extension = line.rsplit_once('.').is_some_and(|(stem, extension)| {
        !stem.is_empty()
            && (1..=5).contains(&extension.len())
            && extension.chars().all(|c| c.is_ascii_alphanumeric())
    });
    !line.is_empty()
        && line
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ' '))
        && !line.starts_with(['.', '-', '/', '~'])
        && (path || !line.contains(' '))
        && (path || extension)
}

/// Whether every line of a block is a comment (`#`, `//`): it does
/// nothing in any language, and a small model held to a code block writes
/// its answer as one.
fn only_comments(code: &str) -> bool {
    let mut lines = code
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .peekable();
    lines.peek().is_some() && lines.all(|l| l.starts_with('#') || l.starts_with("//"))
}

/// Whether the prose before a block (`before`: the reply up to it) says
/// the block is what a run prints ("The output should be:", "The output
/// is as follows:"), not code.
fn shows_output(before: &str) -> bool {
    let Some(line) = before.lines().map(str::trim).rfind(|l| !l.is_empty()) else {
        return false;
    };
    let line = line.to_lowercase();
    line.ends_with("expected output:")
        || line.contains("output")
            && [
                "should be:",
                "will be:",
                "would be:",
                "will look like:",
                "should look like:",
                "output is:",
                "output is as follows:",
                "here is the output:",
                "here's the output:",
            ]
            .iter()
            .any(|end| line.ends_with(end))
}

/// Facts about the machine that the system prompt tells the model.
#[derive(Debug, Clone)]
pub(crate) struct PromptEnv {
    pub os: String,
    pub cwd: String,
    pub languages: Vec<String>,
    pub date: String,
    /// The project's `AGENTS.md` files, as one block.
    pub project_instructions: Option<String>,
    pub custom_instructions: Option<String>,
    /// Replaces the prompt below (what the user configured as
    /// `system_message`).
    pub system_message: Option<String>,
    /// A small model: a short prompt it can follow.
    pub compact: bool,
}

/// Fenced-block languages that are data or prose, never run.
const NOT_CODE: &[&str] = &[
    "text",
    "txt",
    "plaintext",
    "plain",
    "output",
    "out",
    "result",
    "json",
    "jsonc",
    "yaml",
    "yml",
    "toml",
    "csv",
    "tsv",
    "xml",
    "html",
    "markdown",
    "md",
    "log",
    "diff",
    "patch",
    "ini",
    "conf",
    "properties",
    "mermaid",
    "math",
    "latex",
    "tex",
];

#[derive(Debug, Clone)]
pub(crate) struct Harness {
    kind: HarnessKind,
    next_recovered_id: u64,
    /// OS mode: the size of the screenshots the model is shown.
    os: Option<oi_computer::Size>,
    /// The tools of the session's MCP servers.
    mcp: Vec<crate::mcp::McpTool>,
}

/// Adds the project's instructions, then the user's custom instructions,
/// at the end of a prompt.
fn push_instructions(prompt: &mut String, env: &PromptEnv) {
    if let Some(project) = env.project_instructions.as_deref() {
        prompt.push('\n');
        prompt.push_str(project.trim_end());
        prompt.push('\n');
    }
    if let Some(extra) = env
        .custom_instructions
        .as_deref()
        .filter(|s| !s.trim().is_empty())
    {
        prompt.push('\n');
        prompt.push_str(extra.trim());
        prompt.push('\n');
    }
}

impl Harness {
    pub(crate) fn new(kind: HarnessKind) -> Self {
        Self {
            kind,
            next_recovered_id: 1,
            os: None,
            mcp: Vec::new(),
        }
    }

    /// With the tools of MCP servers: offered as tools (native) or through
    /// the Python `mcp_tools` module (markdown).
    pub(crate) fn with_mcp(mut self, tools: Vec<crate::mcp::McpTool>) -> Self {
        self.mcp = tools;
        self
    }

    /// With the `computer` tool (native) or the Python `computer` module
    /// (markdown) for a screen shown at `shown` size.
    pub(crate) fn with_os(mut self, shown: Option<oi_computer::Size>) -> Self {
        self.os = shown;
        self
    }

    pub(crate) fn kind(&self) -> HarnessKind {
        self.kind
    }

    pub(crate) fn system_prompt(&self, env: &PromptEnv) -> String {
        if let Some(own) = env.system_message.as_deref() {
            let mut prompt = own.trim_end().to_owned();
            prompt.push('\n');
            if let Some(shown) = self.os {
                prompt.push('\n');
                prompt.push_str(&self.os_prompt(shown));
            }
            prompt.push_str(&self.mcp_prompt());
            push_instructions(&mut prompt, env);
            return prompt;
        }
        if env.compact {
            return self.compact_prompt(env);
        }
        let languages = env.languages.join(", ");
        let mut prompt = format!(
            "You are Open Interpreter (oi), an assistant that completes tasks by running code on the user's computer.\n\
             \n\
             Environment: {os}. Today: {date}. Languages you can run: {languages}.\n\
             Working directory: {cwd} (the user's files are here; use relative paths such as `data.csv`).\n\
             \n",
            os = env.os,
            cwd = env.cwd,
            date = env.date,
        );
        match self.kind {
            HarnessKind::Native => prompt.push_str(
                "To run code, call the `execute` tool with `language` and `code`. The code runs on the user's machine in a persistent session: variables, imports and the working directory carry over from one run to the next. You see its output, then continue.\n",
            ),
            HarnessKind::ClaudeCode => prompt.push_str(
                "Run shell commands with the `bash` tool: one persistent shell, so the working directory and variables carry over. Look at and change files with `str_replace_based_edit_tool` (view, create, str_replace, insert); the user sees each change as a diff. For other languages (Python for data and calculations …) call `execute` with `language` and `code`: a persistent session per language. You see each result, then continue.\n",
            ),
            HarnessKind::Codex => prompt.push_str(
                "Run commands with the `shell` tool (`command` is the argument list, e.g. [\"bash\", \"-lc\", \"ls\"]); it runs in one persistent shell. Change files with `apply_patch` (its `input` is a patch in the `*** Begin Patch` format); the user sees each change as a diff. For other languages (Python for data and calculations …) call `execute` with `language` and `code`: a persistent session per language. You see each result, then continue.\n",
            ),
            HarnessKind::Markdown => prompt.push_str(
                "To run code, write it in a fenced code block tagged with its language, for example:\n\
                 ```python\nprint(\"hello\")\n```\n\
                 Every code block you write is run, in order, on the user's machine, and you get its output in the next message. The session is persistent: variables, imports and the working directory carry over. Write a code block only when you want it run.\n",
            ),
        }
        prompt.push_str(
            "\nHow to work:\n\
             - Work in small steps: run a little code, read its output, then decide the next step.\n\
             - When code fails, read the error and change the code; do not run the same failing code again.\n\
             - Use the shell for files, programs and packages; use Python for data and calculations.\n\
             - Do not ask the user for permission; they approve each run themselves.\n",
        );
        prompt.push_str(match self.kind {
            HarnessKind::Native | HarnessKind::ClaudeCode | HarnessKind::Codex => "- When the task is done, reply with a short answer or summary and do not call a tool.\n",
            HarnessKind::Markdown => "- When the task is done, reply with a short answer or summary and no code block.\n",
        });
        if let Some(shown) = self.os {
            prompt.push('\n');
            prompt.push_str(&self.os_prompt(shown));
        }
        prompt.push_str(&self.mcp_prompt());
        push_instructions(&mut prompt, env);
        prompt
    }

    /// What the model is told about MCP tools (nothing without them).
    fn mcp_prompt(&self) -> String {
        if self.mcp.is_empty() {
            return String::new();
        }
        match self.kind {
            HarnessKind::Native | HarnessKind::ClaudeCode | HarnessKind::Codex => "\nThe tools whose names start with `mcp__` come from MCP servers the user connected; use them when they fit the task.\n".to_owned(),
            HarnessKind::Markdown => {
                let mut text = String::from(
                    "\nMCP tools (from servers the user connected) are Python functions of the `mcp_tools` module, already imported. Each returns the tool's text (or its data, when it gives structured data) and raises `mcp_tools.McpToolError` when it fails:\n",
                );
                for tool in &self.mcp {
                    text.push_str(&format!(
                        "- mcp_tools.{}.{}({})",
                        python_name(&tool.server),
                        python_name(&tool.name),
                        python_signature(&tool.input_schema)
                    ));
                    let about = tool.description.lines().next().unwrap_or("").trim();
                    if !about.is_empty() {
                        text.push_str(": ");
                        text.push_str(about);
                    }
                    text.push('\n');
                }
                text
            }
        }
    }

    /// What the model is told about the screen in OS mode.
    fn os_prompt(&self, shown: oi_computer::Size) -> String {
        let mut text = String::from(
            "OS mode is on: you can see the user's screen and use its mouse and keyboard to operate any application.\n",
        );
        match self.kind {
            HarnessKind::Native | HarnessKind::ClaudeCode | HarnessKind::Codex => text.push_str(&format!(
                "Use the `computer` tool for that. Start with a `screenshot`; every other action returns a new screenshot too. Coordinates are pixels on the screenshots, which are {shown} (x from the left, y from the top); aim at the centre of what you click. Prefer keyboard shortcuts where they are reliable. Use code (`execute`) for work that needs no screen.\n",
            )),
            HarnessKind::Markdown => text.push_str(
                "In Python, the `computer` module does it (real screen pixels):\n\
                 ```python\ncomputer.screenshot()          # saves a PNG of the screen, returns its path; you see it\ncomputer.click(x, y)            # also right_click, double_click, move(x, y), drag(x1, y1, x2, y2)\ncomputer.scroll(\"down\", 3, x, y)\ncomputer.type(\"text\")\ncomputer.key(\"ctrl+s\")          # or \"Return\", \"alt+Tab\"\ncomputer.size(), computer.cursor_position()\n```\n",
            ),
        }
        text
    }

    /// The prompt for small models: the same rules, in few words (with the
    /// markdown harness, one example block: [`EXAMPLE_CODE`]).
    fn compact_prompt(&self, env: &PromptEnv) -> String {
        let mut prompt = format!(
            "You are oi. You do the user's task by running code on their computer ({os}). Working directory: {cwd}. Languages: {languages}.\n",
            os = env.os,
            cwd = env.cwd,
            languages = env.languages.join(", "),
        );
        match self.kind {
            HarnessKind::Native => prompt.push_str("To run code, call the `execute` tool with `language` and `code`. You then see its output.\n"),
            HarnessKind::ClaudeCode => prompt.push_str("Run shell commands with `bash`, edit files with `str_replace_based_edit_tool`, other code with `execute`. You then see the result.\n"),
            HarnessKind::Codex => prompt.push_str("Run commands with `shell`, edit files with `apply_patch`, other code with `execute`. You then see the result.\n"),
            HarnessKind::Markdown => prompt.push_str(&format!("To run code, write it in one fenced block with its language:\n```python\n{EXAMPLE_CODE}\n```\nIt runs, and you get its output.\n")),
        }
        prompt.push_str(
            "Rules: run code yourself, never ask the user to. One small step at a time. If it fails, fix it; do not repeat the same code. Into a file the task names, write only what it asks for (a value alone, no label). ",
        );
        prompt.push_str(match self.kind {
            HarnessKind::Native | HarnessKind::ClaudeCode | HarnessKind::Codex => {
                "When done, answer in one or two sentences without calling a tool.\n"
            }
            HarnessKind::Markdown => {
                "When done, answer in one or two sentences with no code block.\n"
            }
        });
        if let Some(shown) = self.os {
            prompt.push_str(&self.os_prompt(shown));
        }
        prompt.push_str(self.mcp_prompt().trim_start());
        if let Some(project) = env.project_instructions.as_deref() {
            prompt.push_str(project.trim_end());
            prompt.push('\n');
        }
        if let Some(extra) = env
            .custom_instructions
            .as_deref()
            .filter(|s| !s.trim().is_empty())
        {
            prompt.push_str(extra.trim());
            prompt.push('\n');
        }
        prompt
    }

    /// The tools offered to the model.
    pub(crate) fn tools(&self, languages: &[String]) -> Vec<ToolSpec> {
        match self.kind {
            HarnessKind::Native => {
                let mut tools = vec![execute_tool(languages)];
                tools.extend(self.os.map(computer_tool));
                tools.extend(self.mcp.iter().map(mcp_tool));
                tools
            }
            HarnessKind::ClaudeCode | HarnessKind::Codex => {
                let mut tools = family::tools(self.kind);
                tools.push(execute_tool(languages));
                tools.extend(self.os.map(computer_tool));
                tools.extend(self.mcp.iter().map(mcp_tool));
                tools
            }
            HarnessKind::Markdown => Vec::new(),
        }
    }

    /// Reads a complete reply: the message to keep in the history, and what to do.
    pub(crate) fn interpret(
        &mut self,
        text: String,
        tool_calls: Vec<ToolCall>,
        reasoning: Vec<serde_json::Value>,
    ) -> (Message, Vec<Action>) {
        match self.kind {
            HarnessKind::Native | HarnessKind::ClaudeCode | HarnessKind::Codex
                if !tool_calls.is_empty() =>
            {
                let actions = tool_calls
                    .iter()
                    .map(|call| self.action_for_call(call))
                    .collect();
                (
                    Message::Assistant {
                        text,
                        tool_calls,
                        reasoning,
                    },
                    actions,
                )
            }
            HarnessKind::Native | HarnessKind::ClaudeCode | HarnessKind::Codex => {
                self.recover_into_calls(text, reasoning)
            }
            HarnessKind::Markdown => {
                // A markdown-harness model may still make real tool calls if
                // the server passes them through; honour them as code too.
                let mut runs: Vec<(usize, ProposedRun)> = tool_calls
                    .iter()
                    .filter_map(|c| recover::read_arguments(&c.name, &c.arguments).ok())
                    .map(|(language, code)| {
                        (
                            0,
                            ProposedRun {
                                call_id: None,
                                language,
                                code,
                            },
                        )
                    })
                    .collect();
                let recovered = recover::recover_calls(&text);
                let mut invalid = Vec::new();
                for found in &recovered {
                    match &found.call {
                        Printed::Run { language, code } => runs.push((
                            found.span.start,
                            ProposedRun {
                                call_id: None,
                                language: language.clone(),
                                code: code.clone(),
                            },
                        )),
                        Printed::Unusable { name, problem, .. } => {
                            invalid.push((
                                found.span.start,
                                unusable_message(self.kind, name, problem),
                            ));
                        }
                    }
                }
                for fence in fences::fenced_blocks(&text) {
                    if recovered.iter().any(|c| {
                        c.span.start <= fence.span.start
                            && fence.span.start < c.span.end.max(c.span.start + 1)
                    }) {
                        continue;
                    }
                    if NOT_CODE.contains(&fence.lang.as_str())
                        || fence.code.trim().is_empty()
                        || is_prose(&fence.code)
                        || only_comments(&fence.code)
                        || shows_output(&text[..fence.span.start])
                    {
                        continue;
                    }
                    let language = if fence.lang.is_empty() {
                        match language::guess(&fence.code) {
                            Some(l) => Some(l.to_owned()),
                            None => continue,
                        }
                    } else {
                        Some(fence.lang.clone())
                    };
                    runs.push((
                        fence.span.start,
                        ProposedRun {
                            call_id: None,
                            language,
                            code: fence.code,
                        },
                    ));
                }
                let mut actions: Vec<(usize, Action)> = runs
                    .into_iter()
                    .map(|(at, r)| (at, Action::Run(r)))
                    .chain(invalid.into_iter().map(|(at, message)| {
                        (
                            at,
                            Action::Invalid {
                                call_id: None,
                                message,
                            },
                        )
                    }))
                    .collect();
                actions.sort_by_key(|(at, _)| *at);
                let message = Message::Assistant {
                    text,
                    tool_calls: Vec::new(),
                    reasoning,
                };
                (message, actions.into_iter().map(|(_, a)| a).collect())
            }
        }
    }

    /// Native harness, reply without tool calls: calls printed as text become
    /// real calls in the history, so the model sees the proper form and its
    /// results can go back as tool messages.
    fn recover_into_calls(
        &mut self,
        text: String,
        reasoning: Vec<serde_json::Value>,
    ) -> (Message, Vec<Action>) {
        let recovered = recover::recover_calls(&text);
        if recovered.is_empty() {
            return (
                Message::Assistant {
                    text,
                    tool_calls: Vec::new(),
                    reasoning,
                },
                Vec::new(),
            );
        }
        let mut remaining = String::new();
        let mut last = 0;
        let mut calls = Vec::new();
        let mut actions = Vec::new();
        for call in recovered {
            if call.span.start >= last {
                remaining.push_str(&text[last..call.span.start]);
                last = call.span.end;
            }
            let id = format!("call_oi_text_{}", self.next_recovered_id);
            self.next_recovered_id += 1;
            match call.call {
                Printed::Run { language, code } => {
                    let language = language.or_else(|| language::guess(&code).map(str::to_owned));
                    let mut arguments = json!({"code": code});
                    if let Some(language) = &language {
                        arguments["language"] = json!(language);
                    }
                    calls.push(ToolCall {
                        id: id.clone(),
                        name: "execute".to_owned(),
                        arguments: arguments.to_string(),
                    });
                    actions.push(Action::Run(ProposedRun {
                        call_id: Some(id),
                        language,
                        code,
                    }));
                }
                // OS mode: a `computer` call printed as text is done too.
                Printed::Unusable {
                    name, arguments, ..
                } if name == oi_protocol::SCREEN_LANGUAGE && self.os.is_some() => {
                    let call = ToolCall {
                        id,
                        name,
                        arguments,
                    };
                    actions.push(computer_action(&call));
                    calls.push(call);
                }
                Printed::Unusable {
                    name,
                    arguments,
                    problem,
                } => {
                    actions.push(Action::Invalid {
                        call_id: Some(id.clone()),
                        message: unusable_message(self.kind, &name, &problem),
                    });
                    calls.push(ToolCall {
                        id,
                        name,
                        arguments,
                    });
                }
            }
        }
        remaining.push_str(&text[last.min(text.len())..]);
        let message = Message::Assistant {
            text: remaining.trim().to_owned(),
            tool_calls: calls,
            reasoning,
        };
        (message, actions)
    }

    /// The messages that carry results back to the model.
    pub(crate) fn results(&self, reports: Vec<Report>) -> Vec<Message> {
        if reports.is_empty() {
            return Vec::new();
        }
        if reports.iter().all(|r| r.call_id.is_some()) {
            return reports
                .into_iter()
                .map(|r| {
                    let mut content = vec![ContentPart::text(r.text)];
                    content.extend(r.images);
                    Message::Tool {
                        call_id: r.call_id.unwrap_or_default(),
                        content,
                    }
                })
                .collect();
        }
        let runs = reports.iter().filter(|r| !r.language.is_empty()).count();
        let mut text = String::new();
        let mut block = 0;
        for report in &reports {
            // A report without a language is a note about an unusable call.
            if report.language.is_empty() {
                text.push_str(report.text.trim_end());
                text.push_str("\n\n");
                continue;
            }
            block += 1;
            if runs > 1 {
                text.push_str(&format!("Code block {block} ({}):\n", report.language));
            } else {
                text.push_str(&format!("Result of the {} code:\n", report.language));
            }
            let fence = fence_for(&report.text);
            text.push_str(&format!("{fence}\n{}\n{fence}\n\n", report.text.trim_end()));
        }
        text.push_str("If the task is done, reply with the answer and no code block. Otherwise continue with the next step.");
        let mut content = vec![ContentPart::text(text)];
        content.extend(reports.into_iter().flat_map(|r| r.images));
        vec![Message::User { content }]
    }
}

/// A backtick fence longer than any run of backticks in `text`.
fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat((longest + 1).max(3))
}

impl Harness {
    fn action_for_call(&self, call: &ToolCall) -> Action {
        if call.name == oi_protocol::SCREEN_LANGUAGE && self.os.is_some() {
            return computer_action(call);
        }
        if let Some(action) = family::action(self.kind, call) {
            return action;
        }
        if self.mcp.iter().any(|t| t.exposed == call.name) {
            return Action::Mcp {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                arguments: call.arguments.clone(),
            };
        }
        plain_action_for_call(call)
    }
}

/// A call of the `computer` tool: its action, or what is wrong with it.
fn computer_action(call: &ToolCall) -> Action {
    let parsed = serde_json::from_str::<serde_json::Value>(&call.arguments)
        .map_err(|e| format!("its arguments are not valid JSON ({e})"))
        .and_then(|args| oi_computer::Action::from_json(&args));
    match parsed {
        Ok(action) => Action::Computer {
            call_id: call.id.clone(),
            action,
        },
        Err(problem) => Action::Invalid {
            call_id: Some(call.id.clone()),
            message: format!(
                "Error: the computer action was not done: {problem}. Example: {{\"action\": \"left_click\", \"coordinate\": [640, 400]}}."
            ),
        },
    }
}

fn plain_action_for_call(call: &ToolCall) -> Action {
    match recover::read_arguments(&call.name, &call.arguments) {
        Ok((language, code)) => Action::Run(ProposedRun {
            call_id: Some(call.id.clone()),
            language,
            code,
        }),
        Err(problem) => Action::Invalid {
            call_id: Some(call.id.clone()),
            message: unusable_message(HarnessKind::Native, &call.name, &problem),
        },
    }
}

/// What the model is told about a call that cannot run, and how to do it right.
fn unusable_message(kind: HarnessKind, name: &str, problem: &str) -> String {
    let how = match kind {
        HarnessKind::Native | HarnessKind::ClaudeCode | HarnessKind::Codex => {
            "To run code, call `execute` with a JSON object such as {\"language\": \"python\", \"code\": \"print(1)\"}."
        }
        HarnessKind::Markdown => {
            "To run code, write it in a fenced code block tagged with its language, such as ```python."
        }
    };
    let is_execute = name.is_empty() || name == "execute";
    if is_execute || problem.contains("not valid JSON") {
        format!("Error: the call was not run because {problem}. {how}")
    } else {
        format!("Error: there is no tool named `{name}`; the only way to act is to run code. {how}")
    }
}

/// The `computer` tool (OS mode) for screenshots shown at `shown` size.
fn computer_tool(shown: oi_computer::Size) -> ToolSpec {
    let point = |what: &str| {
        json!({
            "type": "array",
            "items": {"type": "integer"},
            "minItems": 2,
            "maxItems": 2,
            "description": what,
        })
    };
    ToolSpec {
        name: oi_protocol::SCREEN_LANGUAGE.to_owned(),
        description: format!(
            "Use the user's screen, mouse and keyboard. Screenshots are {shown} pixels; coordinates are [x, y] on them. Actions: screenshot; left_click, right_click, middle_click, double_click, triple_click (at coordinate, or where the pointer is; `text` may name modifier keys to hold, e.g. \"shift\"); mouse_move (coordinate); left_click_drag (start_coordinate to coordinate); left_mouse_down, left_mouse_up; scroll (scroll_direction, scroll_amount in wheel clicks, at coordinate); type (text); key (text: a key or combination such as \"Return\", \"ctrl+s\", \"alt+Tab\"); hold_key (text, duration); wait (duration in seconds); cursor_position. Every action except cursor_position returns a new screenshot."
        ),
        parameters: json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": oi_computer::ACTIONS},
                "coordinate": point("[x, y] on the screenshot: where to click, move, scroll, or where a drag ends"),
                "start_coordinate": point("[x, y] where a left_click_drag starts"),
                "text": {"type": "string", "description": "The text to type, the key(s) to press, or modifier keys to hold during a click or scroll"},
                "scroll_direction": {"type": "string", "enum": ["up", "down", "left", "right"]},
                "scroll_amount": {"type": "integer", "minimum": 1, "description": "Wheel clicks to scroll"},
                "duration": {"type": "number", "description": "Seconds to wait or to hold a key"},
            },
            "required": ["action"],
        }),
        builtin: Some(oi_providers::BuiltinTool::Computer {
            width: shown.width,
            height: shown.height,
        }),
    }
}

/// The `execute` tool: its `language` enum lists what can run on this machine.
/// An MCP server's tool as a function tool.
fn mcp_tool(tool: &crate::mcp::McpTool) -> ToolSpec {
    let mut parameters = tool.input_schema.clone();
    if !parameters.is_object() {
        parameters = json!({"type": "object", "properties": {}});
    }
    if parameters.get("type").is_none() {
        parameters["type"] = json!("object");
    }
    let about = if tool.description.trim().is_empty() {
        format!("Tool `{}` of MCP server `{}`.", tool.name, tool.server)
    } else {
        format!("{} (MCP server `{}`)", tool.description.trim(), tool.server)
    };
    ToolSpec {
        name: tool.exposed.clone(),
        description: about,
        parameters,
        builtin: None,
    }
}

/// A name as a Python attribute (`-` and other characters become `_`).
fn python_name(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// `query: str, limit: int = None` from a JSON Schema of an object.
fn python_signature(schema: &serde_json::Value) -> String {
    let Some(properties) = schema["properties"].as_object() else {
        return String::new();
    };
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    let type_of = |p: &serde_json::Value| match p["type"].as_str() {
        Some("string") => "str",
        Some("integer") => "int",
        Some("number") => "float",
        Some("boolean") => "bool",
        Some("array") => "list",
        Some("object") => "dict",
        _ => "object",
    };
    let mut first: Vec<String> = Vec::new();
    let mut rest: Vec<String> = Vec::new();
    for (name, property) in properties {
        if required.contains(&name.as_str()) {
            first.push(format!("{name}: {}", type_of(property)));
        } else {
            rest.push(format!("{name}: {} = None", type_of(property)));
        }
    }
    first.extend(rest);
    first.join(", ")
}

fn execute_tool(languages: &[String]) -> ToolSpec {
    ToolSpec {
        name: "execute".to_owned(),
        description: "Run code on the user's machine in a persistent session and return its output (stdout and stderr). State (variables, imports, working directory) is kept between runs of the same language.".to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {
                "language": {
                    "type": "string",
                    "enum": languages,
                    "description": "The language of the code.",
                },
                "code": {
                    "type": "string",
                    "description": "The code to run.",
                },
            },
            "required": ["language", "code"],
            "additionalProperties": false,
        }),
        builtin: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn run(call_id: Option<&str>, language: Option<&str>, code: &str) -> Action {
        Action::Run(ProposedRun {
            call_id: call_id.map(str::to_owned),
            language: language.map(str::to_owned),
            code: code.to_owned(),
        })
    }

    #[test]
    fn the_execute_tool_lists_the_available_languages() {
        let tools = Harness::new(HarnessKind::Native).tools(&["python".into(), "shell".into()]);
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0].name, "execute");
        assert_eq!(
            tools[0].parameters["properties"]["language"]["enum"],
            json!(["python", "shell"])
        );
        assert_eq!(tools[0].parameters["required"], json!(["language", "code"]));
        assert!(
            Harness::new(HarnessKind::Markdown)
                .tools(&["python".into()])
                .is_empty()
        );
    }

    #[test]
    fn os_mode_adds_the_computer_tool_and_reads_its_calls() {
        let shown = oi_computer::Size {
            width: 1280,
            height: 720,
        };
        let mut h = Harness::new(HarnessKind::Native).with_os(Some(shown));
        let tools = h.tools(&["python".into()]);
        assert_eq!(
            tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
            ["execute", "computer"]
        );
        assert_eq!(
            tools[1].builtin,
            Some(oi_providers::BuiltinTool::Computer {
                width: 1280,
                height: 720
            })
        );
        assert!(tools[1].description.contains("1280×720"));
        let call = |id: &str, args: &str| ToolCall {
            id: id.into(),
            name: "computer".into(),
            arguments: args.into(),
        };
        let (_, actions) = h.interpret(
            String::new(),
            vec![
                call("a", r#"{"action": "left_click", "coordinate": [5, 6]}"#),
                call("b", r#"{"action": "teleport"}"#),
                call("c", "{"),
            ],
            Vec::new(),
        );
        assert!(
            matches!(&actions[0], Action::Computer { call_id, action: oi_computer::Action::Click { at: Some(p), .. } } if call_id == "a" && (p.x, p.y) == (5, 6)),
            "{actions:?}"
        );
        assert!(
            matches!(&actions[1], Action::Invalid { call_id: Some(id), message } if id == "b" && message.contains("no action `teleport`")),
            "{actions:?}"
        );
        assert!(
            matches!(&actions[2], Action::Invalid { message, .. } if message.contains("not valid JSON")),
            "{actions:?}"
        );
        // Without OS mode there is no such tool.
        let (_, actions) = Harness::new(HarnessKind::Native).interpret(
            String::new(),
            vec![call("d", r#"{"action": "screenshot"}"#)],
            Vec::new(),
        );
        assert!(
            matches!(&actions[0], Action::Invalid { message, .. } if message.contains("no tool named `computer`")),
            "{actions:?}"
        );
    }

    #[test]
    fn a_computer_call_printed_as_text_is_done_in_os_mode() {
        let shown = oi_computer::Size {
            width: 1280,
            height: 720,
        };
        let text = "<tool_call>\n{\"name\": \"computer\", \"arguments\": {\"action\": \"screenshot\"}}\n</tool_call>";
        let mut h = Harness::new(HarnessKind::Native).with_os(Some(shown));
        let (message, actions) = h.interpret(text.into(), Vec::new(), Vec::new());
        let Message::Assistant { tool_calls, .. } = message else {
            panic!()
        };
        assert_eq!(tool_calls[0].name, "computer");
        assert!(
            matches!(&actions[..], [Action::Computer { call_id, action: oi_computer::Action::Screenshot }] if *call_id == tool_calls[0].id),
            "{actions:?}"
        );
    }

    #[test]
    fn os_mode_prompts_name_the_tool_or_the_python_module() {
        let env = PromptEnv {
            os: "Linux".into(),
            cwd: "/w".into(),
            languages: vec!["python".into()],
            date: "2026-11-30".into(),
            project_instructions: None,
            custom_instructions: None,
            system_message: None,
            compact: false,
        };
        let shown = Some(oi_computer::Size {
            width: 1024,
            height: 768,
        });
        let native = Harness::new(HarnessKind::Native)
            .with_os(shown)
            .system_prompt(&env);
        assert!(native.contains("`computer` tool") && native.contains("1024×768"));
        let markdown = Harness::new(HarnessKind::Markdown)
            .with_os(shown)
            .system_prompt(&env);
        assert!(markdown.contains("computer.click(x, y)"), "{markdown}");
        assert!(
            !Harness::new(HarnessKind::Native)
                .system_prompt(&env)
                .contains("OS mode")
        );
    }

    #[test]
    fn native_tool_calls_become_runs_and_bad_ones_get_an_error_result() {
        let mut h = Harness::new(HarnessKind::Native);
        let calls = vec![
            ToolCall {
                id: "a".into(),
                name: "execute".into(),
                arguments: r#"{"language":"python","code":"1"}"#.into(),
            },
            ToolCall {
                id: "b".into(),
                name: "execute".into(),
                arguments: r#"{"language":"python","code":"#.into(),
            },
            ToolCall {
                id: "c".into(),
                name: "browse".into(),
                arguments: r#"{"url":"x"}"#.into(),
            },
        ];
        let (message, actions) = h.interpret("ok".into(), calls.clone(), Vec::new());
        assert_eq!(
            message,
            Message::Assistant {
                text: "ok".into(),
                tool_calls: calls,
                reasoning: Vec::new(),
            }
        );
        assert_eq!(actions[0], run(Some("a"), Some("python"), "1"));
        assert!(
            matches!(&actions[1], Action::Invalid { call_id: Some(id), message } if id == "b" && message.contains("not valid JSON"))
        );
        assert!(
            matches!(&actions[2], Action::Invalid { message, .. } if message.contains("no tool named `browse`"))
        );
    }

    #[test]
    fn native_recovers_calls_printed_as_text_into_real_calls() {
        let mut h = Harness::new(HarnessKind::Native);
        let text = "Sure!\n```json\n{\"name\": \"execute\", \"arguments\": {\"language\": \"python\", \"code\": \"print(42)\"}}\n```\nDone soon.";
        let (message, actions) = h.interpret(text.into(), Vec::new(), Vec::new());
        assert_eq!(
            actions,
            vec![run(Some("call_oi_text_1"), Some("python"), "print(42)")]
        );
        let Message::Assistant {
            text, tool_calls, ..
        } = message
        else {
            panic!()
        };
        assert_eq!(text, "Sure!\nDone soon.");
        assert_eq!(tool_calls[0].id, "call_oi_text_1");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&tool_calls[0].arguments).unwrap(),
            json!({"language": "python", "code": "print(42)"})
        );
    }

    #[test]
    fn a_printed_call_of_an_invented_tool_gets_an_error_that_teaches_execute() {
        let text = "```json\n{\"name\": \"create_directory\", \"arguments\": {\"dir_name\": \"results\"}}\n```";
        let mut native = Harness::new(HarnessKind::Native);
        let (message, actions) = native.interpret(text.into(), Vec::new(), Vec::new());
        let Message::Assistant { tool_calls, .. } = message else {
            panic!()
        };
        assert_eq!(tool_calls[0].name, "create_directory");
        match &actions[..] {
            [
                Action::Invalid {
                    call_id: Some(id),
                    message,
                },
            ] => {
                assert_eq!(id, &tool_calls[0].id, "the result answers the call");
                assert!(
                    message.contains("no tool named `create_directory`")
                        && message.contains("call `execute`"),
                    "{message}"
                );
            }
            other => panic!("{other:?}"),
        }

        let mut markdown = Harness::new(HarnessKind::Markdown);
        let (_, actions) = markdown.interpret(text.into(), Vec::new(), Vec::new());
        match &actions[..] {
            [
                Action::Invalid {
                    call_id: None,
                    message,
                },
            ] => assert!(message.contains("fenced code block"), "{message}"),
            other => panic!("{other:?}"),
        }
        let messages = markdown.results(vec![Report {
            call_id: None,
            language: String::new(),
            text: "Error: no.".into(),
            images: Vec::new(),
        }]);
        let Message::User { content } = &messages[0] else {
            panic!()
        };
        assert!(content[0].as_text().unwrap().starts_with("Error: no.\n\n"));
    }

    #[test]
    fn native_plain_answers_have_no_actions() {
        let mut h = Harness::new(HarnessKind::Native);
        let (_, actions) = h.interpret(
            "The answer is 42. Example: ```python\nprint(42)\n```".into(),
            Vec::new(),
            Vec::new(),
        );
        assert!(
            actions.is_empty(),
            "fenced code is not run in the native harness"
        );
    }

    #[test]
    fn markdown_proposes_every_code_block_in_order_and_skips_data() {
        let mut h = Harness::new(HarnessKind::Markdown);
        let text = "```python\nx = 1\n```\nOutput will be:\n```text\n1\n```\n```\nls -la\n```\n```\nsome prose\n```\n{\"language\": \"shell\", \"code\": \"pwd\"}\n```bash\necho $x\n```";
        let (_, actions) = h.interpret(text.into(), Vec::new(), Vec::new());
        assert_eq!(
            actions,
            vec![
                run(None, Some("python"), "x = 1"),
                run(None, Some("shell"), "ls -la"),
                run(None, Some("shell"), "pwd"),
                run(None, Some("bash"), "echo $x"),
            ]
        );
    }

    #[test]
    fn markdown_runs_no_block_of_sentences_comments_or_output_to_expect() {
        let mut h = Harness::new(HarnessKind::Markdown);
        for text in [
            "```bash\nAll files have been renamed to lowercase names.\n```",
            "```bash\nThe commands `All` and `The` are not recognized. Please check the spelling and try again.\n```",
            "Done.\n```python\nThe average is 21.5 degrees.\n\nIt is written to avg.txt now.\n```",
            "The code has been updated. The output should be:\n```perl\napple\nfig\n```",
            "Expected output:\n\n```python\n3\n12\n```",
            "The task is done. The output is as follows:\n```python\nTotal stock value: $62.50\n```",
            "Here is the output:\n```bash\nTotal: 4\n```",
            "```python\n# The task cannot be completed as is.\n```",
            "```javascript\n// done\n\n// nothing else to do\n```",
            "```bash\nDone. All files are now lowercase and have .jpg extension. The files in photos/ are:\nHoliday_Pic.jpg\nMap_of_Town.png\nsunset.jpg\n```",
            "```bash\nThe directory \"photos\" contains the files:\nHoliday_Pic.jpg\nraw/\n```",
        ] {
            let (_, actions) = h.interpret(text.into(), Vec::new(), Vec::new());
            assert!(actions.is_empty(), "{text}");
        }
        for (text, code) in [
            (
                "```bash\necho All files have been renamed.\n```",
                "echo All files have been renamed.",
            ),
            (
                "Here is the code that writes the output:\n```python\nprint(4)\n```",
                "print(4)",
            ),
            (
                "```python\nprint('All files are renamed.')\n```",
                "print('All files are renamed.')",
            ),
            (
                "```python\n# All files are renamed now.\nx = 1\n```",
                "# All files are renamed now.\nx = 1",
            ),
            ("```sh\nSay hello to all.\nls\n```", "Say hello to all.\nls"),
            (
                "```sh\nThe files to list are these:\n./run.sh\n```",
                "The files to list are these:\n./run.sh",
            ),
            ("```sh\nmain.py\nnotes.txt\n```", "main.py\nnotes.txt"),
            ("```sh\nDone.\nls\n```", "Done.\nls"),
            ("Print the output:\n```sh\nls\n```", "ls"),
            (
                "The output will be in out.txt:\n```sh\nls > out.txt\n```",
                "ls > out.txt",
            ),
        ] {
            let (_, actions) = h.interpret(text.into(), Vec::new(), Vec::new());
            assert_eq!(actions.len(), 1, "{text}");
            assert_eq!(actions[0].run().map(|r| r.code.as_str()), Some(code));
        }
    }

    #[test]
    fn markdown_runs_a_block_in_the_language_its_first_line_names() {
        let mut h = Harness::new(HarnessKind::Markdown);
        for (text, language, code) in [
            (
                "```shell\npython\nimport os\nprint(os.getcwd())\n```",
                "python",
                "import os\nprint(os.getcwd())",
            ),
            ("```lua\nlua\nprint(1)\n```", "lua", "print(1)"),
            ("```\nbash\nls -la\n```", "bash", "ls -la"),
            // A command, or a name alone, is left as it is.
            ("```bash\npython3 x.py\nls\n```", "bash", "python3 x.py\nls"),
            ("```bash\npython\n```", "bash", "python"),
            (
                "```python\nprint(1)\nx = 2\n```",
                "python",
                "print(1)\nx = 2",
            ),
        ] {
            let (_, actions) = h.interpret(text.into(), Vec::new(), Vec::new());
            assert_eq!(actions, vec![run(None, Some(language), code)], "{text}");
        }
    }

    #[test]
    fn markdown_reads_json_calls_in_json_fences_once() {
        let mut h = Harness::new(HarnessKind::Markdown);
        let text = "```json\n{\"name\": \"execute\", \"arguments\": {\"language\": \"python\", \"code\": \"print(1)\"}}\n```";
        let (_, actions) = h.interpret(text.into(), Vec::new(), Vec::new());
        assert_eq!(actions, vec![run(None, Some("python"), "print(1)")]);
    }

    #[test]
    fn results_go_back_as_tool_messages_or_one_user_message() {
        let h = Harness::new(HarnessKind::Native);
        let messages = h.results(vec![Report {
            call_id: Some("a".into()),
            language: "python".into(),
            text: "42".into(),
            images: Vec::new(),
        }]);
        assert_eq!(messages, vec![Message::tool("a", "42")]);

        let h = Harness::new(HarnessKind::Markdown);
        let messages = h.results(vec![
            Report {
                call_id: None,
                language: "python".into(),
                text: "42\n".into(),
                images: Vec::new(),
            },
            Report {
                call_id: None,
                language: "shell".into(),
                text: "has ``` fence".into(),
                images: Vec::new(),
            },
        ]);
        let Message::User { content } = &messages[0] else {
            panic!()
        };
        let text = content[0].as_text().unwrap();
        assert!(text.starts_with("Code block 1 (python):\n```\n42\n```\n\nCode block 2 (shell):\n````\nhas ``` fence\n````\n"), "{text}");
    }

    #[test]
    fn images_of_a_run_follow_its_text() {
        let image = ContentPart::Image {
            media_type: "image/png".into(),
            data: "iVBORw0KGgo=".into(),
        };
        let report = |call_id: Option<&str>| Report {
            call_id: call_id.map(str::to_owned),
            language: "python".into(),
            text: "[image saved: /tmp/p.png]".into(),
            images: vec![image.clone()],
        };
        let native = Harness::new(HarnessKind::Native).results(vec![report(Some("c1"))]);
        assert_eq!(
            native,
            vec![Message::Tool {
                call_id: "c1".into(),
                content: vec![
                    ContentPart::text("[image saved: /tmp/p.png]"),
                    image.clone()
                ],
            }]
        );
        let markdown = Harness::new(HarnessKind::Markdown).results(vec![report(None)]);
        let Message::User { content } = &markdown[0] else {
            panic!("{markdown:?}")
        };
        assert_eq!(content.len(), 2);
        assert!(
            content[0]
                .as_text()
                .unwrap()
                .contains("[image saved: /tmp/p.png]")
        );
        assert_eq!(content[1], image);
    }

    #[test]
    fn system_prompt_names_the_machine_and_languages() {
        let env = PromptEnv {
            os: "Linux (Debian 12)".into(),
            cwd: "/home/u/proj".into(),
            languages: vec!["python".into(), "shell".into()],
            date: "2026-11-30".into(),
            project_instructions: None,
            custom_instructions: Some("Answer in French.".into()),
            system_message: None,
            compact: false,
        };
        let native = Harness::new(HarnessKind::Native).system_prompt(&env);
        assert!(
            native.contains("Linux (Debian 12)")
                && native.contains("/home/u/proj")
                && native.contains("python, shell")
        );
        assert!(native.contains("`execute` tool"));
        assert!(native.trim_end().ends_with("Answer in French."));
        let markdown = Harness::new(HarnessKind::Markdown).system_prompt(&env);
        assert!(markdown.contains("fenced code block") && !markdown.contains("`execute` tool"));
    }

    #[test]
    fn a_system_message_replaces_the_prompt_and_keeps_the_instructions() {
        let env = PromptEnv {
            os: "Linux".into(),
            cwd: "/w".into(),
            languages: vec!["python".into()],
            date: "2026-12-02".into(),
            project_instructions: Some("Project: use uv.\n".into()),
            custom_instructions: Some("Answer in French.".into()),
            system_message: Some("You are a pirate who runs code.\n".into()),
            compact: true,
        };
        let prompt = Harness::new(HarnessKind::Native).system_prompt(&env);
        assert_eq!(
            prompt,
            "You are a pirate who runs code.\n\nProject: use uv.\n\nAnswer in French.\n"
        );
    }

    #[test]
    fn project_instructions_come_after_the_prompt_and_before_custom_instructions() {
        for compact in [false, true] {
            for kind in [HarnessKind::Native, HarnessKind::Markdown] {
                let env = PromptEnv {
                    os: "Linux".into(),
                    cwd: "/w".into(),
                    languages: vec!["python".into()],
                    date: "2026-12-02".into(),
                    project_instructions: Some("Project: use uv.\n".into()),
                    custom_instructions: Some("Answer in French.".into()),
                    system_message: None,
                    compact,
                };
                let prompt = Harness::new(kind).system_prompt(&env);
                let project = prompt.find("Project: use uv.").unwrap();
                assert!(
                    prompt.find("Working directory").unwrap() < project,
                    "{prompt}"
                );
                assert!(
                    project < prompt.find("Answer in French.").unwrap(),
                    "{prompt}"
                );
            }
        }
    }
}
