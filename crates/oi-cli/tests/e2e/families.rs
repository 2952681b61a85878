//! The harness families: `claude-code` (Anthropic's bash and text-editor
//! tools) and `codex` (`shell` and `apply_patch`), chosen by model id:
//! their request shapes on each wire, commands in the persistent shell,
//! edits shown as diffs, approved, confined by the sandbox, checkpointed
//! and undone, and `file_change` items in `exec --json`.

use oi_testkit::{MockToolCall, Reply};
use serde_json::{Value, json};

use crate::support::TestEnv;

fn call(name: &str, arguments: Value) -> Reply {
    Reply::tool_calls(vec![MockToolCall::new(name, arguments)])
}

/// The user configuration: `model` on the mock server speaking `wire`.
fn configure(env: &TestEnv, model: &str, wire: &str) {
    let url = if wire == "messages" {
        env.server.root_url()
    } else {
        env.server.base_url()
    };
    env.write_config(&format!(
        "model_provider = \"mock\"\nmodel = \"{model}\"\n\n[model_providers.mock]\nname = \"the model server\"\nbase_url = \"{url}\"\nwire_api = \"{wire}\"\n"
    ));
}

/// The tools of a recorded request as (name, type or "function").
fn tools(body: &Value) -> Vec<(String, String)> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let name = t["name"]
                .as_str()
                .or_else(|| t["function"]["name"].as_str())
                .unwrap()
                .to_owned();
            let kind = match t["type"].as_str() {
                Some("function") | None => "function".to_owned(),
                Some(kind) => kind.to_owned(),
            };
            (name, kind)
        })
        .collect()
}

#[tokio::test]
async fn each_family_gets_its_tool_shapes_on_every_wire() {
    let cases = [
        (
            "claude-sonnet-4-5",
            "messages",
            vec![
                ("bash", "bash_20250124"),
                ("str_replace_based_edit_tool", "text_editor_20250728"),
                ("execute", "function"),
            ],
        ),
        (
            "claude-sonnet-4-5",
            "chat",
            vec![
                ("bash", "function"),
                ("str_replace_based_edit_tool", "function"),
                ("execute", "function"),
            ],
        ),
        (
            "claude-sonnet-4-5",
            "responses",
            vec![
                ("bash", "function"),
                ("str_replace_based_edit_tool", "function"),
                ("execute", "function"),
            ],
        ),
        (
            "gpt-5.1-codex",
            "responses",
            vec![
                ("shell", "function"),
                ("apply_patch", "function"),
                ("execute", "function"),
            ],
        ),
        (
            "gpt-5",
            "chat",
            vec![
                ("shell", "function"),
                ("apply_patch", "function"),
                ("execute", "function"),
            ],
        ),
        (
            "gpt-5",
            "messages",
            vec![
                ("shell", "function"),
                ("apply_patch", "function"),
                ("execute", "function"),
            ],
        ),
    ];
    for (model, wire, expected) in cases {
        let env = TestEnv::new().await;
        configure(&env, model, wire);
        env.server.push(Reply::text("Nothing to do."));
        let out = env.exec(&["-y", "say hi"]).await;
        assert_eq!(out.code, 0, "{model} on {wire}: {out:?}");
        let requests = env.server.model_requests();
        let got = tools(&requests[0].body);
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(n, k)| ((*n).to_owned(), (*k).to_owned()))
            .collect();
        assert_eq!(got, expected, "{model} on {wire}");
        let system = requests[0].body.to_string();
        let named = if model.starts_with("claude") {
            "str_replace_based_edit_tool"
        } else {
            "apply_patch"
        };
        assert!(
            system.contains(&format!("with `{named}`")),
            "{model} on {wire}: the prompt names its tools"
        );
    }
    // config show says which harness and why.
    let env = TestEnv::new().await;
    configure(&env, "gpt-5", "chat");
    let out = env.run(&["config", "show"], None).await;
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("harness"))
        .unwrap();
    assert!(
        line.contains("\"codex\"") && line.contains("GPT-5 or Codex model"),
        "{line}"
    );
}

#[tokio::test]
async fn claude_code_edits_are_diffs_approved_checkpointed_and_undone() {
    let env = TestEnv::new().await;
    configure(&env, "claude-sonnet-4-5", "messages");
    let cwd = env.cwd.path();
    std::fs::write(cwd.join("app.py"), "def greet():\n    return 'hi'\n").unwrap();
    env.server
        .push(call("bash", json!({"command": "cd sub 2>/dev/null || mkdir sub && cd sub; pwd"})))
        .push(call("bash", json!({"command": "pwd"})))
        .push(call(
            "str_replace_based_edit_tool",
            json!({"command": "view", "path": "../app.py"}),
        ))
        .push(call(
            "str_replace_based_edit_tool",
            json!({"command": "str_replace", "path": "../app.py", "old_str": "return 'hi'", "new_str": "return 'hello'"}),
        ))
        .push(call(
            "str_replace_based_edit_tool",
            json!({"command": "create", "path": "notes.md", "file_text": "# Notes\n"}),
        ))
        .push(call(
            "str_replace_based_edit_tool",
            json!({"command": "create", "path": "/etc/oi-must-not-write.txt", "file_text": "x"}),
        ))
        .push(Reply::text("Greeting changed."))
        .push(Reply::text("Back as it was."));
    let out = env
        .run(
            &["-y"],
            Some("change the greeting\n/undo\n/undo\nand now?\n"),
        )
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let result = |n: usize| crate::support::last_message_text(&env.server, n);
    // One persistent shell: the second command is where the first left it.
    assert!(result(2).contains("/sub"), "{}", result(2));
    // A view needs no approval and shows line numbers, relative to the shell.
    assert!(result(3).contains("2\t    return 'hi'"), "{}", result(3));
    assert!(result(4).contains("Edited"), "{}", result(4));
    assert!(result(5).contains("Created"), "{}", result(5));
    // Outside the folders the sandbox lets it write: not changed.
    assert!(result(6).contains("Not changed"), "{}", result(6));
    assert!(!std::path::Path::new("/etc/oi-must-not-write.txt").exists());
    // The change was shown as a diff.
    assert!(
        out.stdout.contains("-    return 'hi'") && out.stdout.contains("+    return 'hello'"),
        "{}",
        out.stdout
    );
    // And undone, one change at a time: the created file, then the edit.
    assert_eq!(
        std::fs::read_to_string(cwd.join("app.py")).unwrap(),
        "def greet():\n    return 'hi'\n"
    );
    assert!(!cwd.join("sub/notes.md").exists(), "{}", out.stdout);
}

#[tokio::test]
async fn codex_patches_are_file_change_items_and_need_approval_where_asked() {
    let env = TestEnv::new().await;
    configure(&env, "gpt-5.1-codex", "responses");
    let cwd = env.cwd.path();
    std::fs::write(cwd.join("README.md"), "# Demo\n\nold line\n").unwrap();
    let patch = "*** Begin Patch\n*** Update File: README.md\n@@\n # Demo\n \n-old line\n+new line\n*** Add File: src/lib.rs\n+pub fn one() -> u8 {\n+    1\n+}\n*** End Patch";
    env.server
        .push(call("shell", json!({"command": ["bash", "-lc", "ls"], "workdir": "."})))
        .push(call("apply_patch", json!({"input": patch})))
        .push(call("apply_patch", json!({"input": "*** Begin Patch\n*** Update File: README.md\n-no such line\n+x\n*** End Patch"})))
        .push(Reply::text("Patched."));
    let out = env.exec(&["-y", "--json", "update the readme"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let lines: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let completed: Vec<&Value> = lines
        .iter()
        .filter(|e| e["type"] == "item.completed")
        .map(|e| &e["item"])
        .collect();
    let kinds: Vec<&str> = completed
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["command_execution", "file_change", "agent_message"],
        "{completed:#?}"
    );
    assert_eq!(completed[0]["command"], "(cd . && ls)");
    assert!(
        completed[0]["aggregated_output"]
            .as_str()
            .unwrap()
            .contains("README.md")
    );
    let mut changes = completed[1]["changes"].as_array().unwrap().clone();
    changes.sort_by_key(|c| c["path"].as_str().unwrap().to_owned());
    assert_eq!(
        changes,
        vec![
            json!({"path": "README.md", "kind": "update"}),
            json!({"path": "src/lib.rs", "kind": "add"}),
        ]
    );
    assert_eq!(
        std::fs::read_to_string(cwd.join("README.md")).unwrap(),
        "# Demo\n\nnew line\n"
    );
    assert!(
        std::fs::read_to_string(cwd.join("src/lib.rs"))
            .unwrap()
            .contains("pub fn one")
    );
    // A patch that does not fit is the model's to fix.
    let requests = env.server.model_requests();
    let last = requests[3].body["input"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert!(
        last["output"].as_str().unwrap().contains("were not found"),
        "{last:#}"
    );

    // Where every change is asked about and nobody can answer: not made.
    let env = TestEnv::new().await;
    configure(&env, "gpt-5", "chat");
    env.server
        .push(call(
            "apply_patch",
            json!({"input": "*** Begin Patch\n*** Add File: x.txt\n+x\n*** End Patch"}),
        ))
        .push(Reply::text("I could not."));
    let out = env.exec(&["-c", "approval=ask", "--json", "add x"]).await;
    // (Codex's stream exits 0 when the turn completes.)
    assert_eq!(out.code, 0, "{out:?}");
    assert!(!env.cwd.path().join("x.txt").exists());
    assert!(
        out.stdout.contains("\"file_change\"") && out.stdout.contains("\"failed\""),
        "{}",
        out.stdout
    );
}
