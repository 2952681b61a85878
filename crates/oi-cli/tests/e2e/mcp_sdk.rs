//! The official MCP Python SDK (`mcp` from PyPI, the version `.ci/pip`
//! pins) drives `interpreter mcp-server`, unchanged, against the mock model
//! server: the tools listed, a task run, its session continued with its
//! variables, and an unknown session refused.

use oi_testkit::Reply;
use serde_json::Value;

use crate::support::{TestEnv, run_command};

#[tokio::test]
async fn the_mcp_python_sdk_drives_the_mcp_server_unchanged() {
    let Some(python) = oi_testkit::pip_package("mcp", "mcp") else {
        return;
    };
    let env = TestEnv::new().await;
    let work = env.cwd.path().join("project");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("data.csv"), "a,b\n1,2\n3,4\n").unwrap();
    env.server
        .push(Reply::execute(
            "python",
            "rows = open('data.csv').read().splitlines()\nprint(len(rows))",
        ))
        .push(Reply::text("data.csv has 3 lines."))
        .push(Reply::execute(
            "python",
            "print(sum(int(r.split(',')[1]) for r in rows[1:]))",
        ))
        .push(Reply::text("The sum of b is 6."));

    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp-sdk/drive.py");
    let mut cmd = env.command_wrapped(&[&python, script], &[]);
    cmd.env("OI_BIN", env!("CARGO_BIN_EXE_interpreter"))
        .env("WORK", &work);
    let out = run_command(cmd, None).await;
    assert_eq!(out.code, 0, "{out:?}");
    let report: Value = serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| {
        panic!("{e}: {out:?}");
    });
    assert_eq!(report["server"]["name"], "oi", "{report:#}");
    let tools: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["interpreter", "interpreter-reply"]);

    let first = &report["first"];
    assert_eq!(first["isError"], false, "{first:#}");
    assert_eq!(first["text"][0], "data.csv has 3 lines.");
    assert_eq!(
        first["structured"]["runs"][0]["output"]
            .as_str()
            .unwrap()
            .trim(),
        "3"
    );
    // Its progress, step by step, as the SDK's progress callback heard it.
    let progress: Vec<(f64, &str)> = report["progress"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["progress"].as_f64().unwrap(),
                p["message"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        progress,
        [
            (1.0, "asking the model (turn 1)"),
            (
                2.0,
                "running python: rows = open('data.csv').read().splitlines()"
            ),
            (3.0, "finished: ok"),
            (4.0, "asking the model (turn 2)"),
        ],
        "{report:#}"
    );
    // The reply's code uses `rows` from the first task: one kernel.
    let second = &report["second"];
    assert_eq!(second["isError"], false, "{second:#}");
    assert_eq!(
        second["structured"]["runs"][0]["output"]
            .as_str()
            .unwrap()
            .trim(),
        "6",
        "{second:#}"
    );
    assert!(
        report["missing"].to_string().contains("no session `nope`"),
        "{report:#}"
    );
}
