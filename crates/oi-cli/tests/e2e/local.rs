//! Local models: `--local` finds servers that imitate Ollama and llama.cpp,
//! picks the model, asks the context window, suits the harness; a local
//! model that writes code as text is moved to the markdown harness;
//! `--offline` keeps code off the network.

use oi_testkit::{MockServer, Reply};
use serde_json::json;

use crate::support::{Output, TestEnv, run_command};

/// A mock that answers as Ollama does, serving `model`.
async fn ollama(model: &str, num_ctx: u32) -> MockServer {
    let server = MockServer::start().await.unwrap();
    server
        .set_models(json!({"object": "list", "data": [{"id": model, "object": "model", "owned_by": "library"}]}))
        .set_route("GET", "/api/tags", json!({"models": [{"name": model}]}))
        .set_route(
            "POST",
            "/api/show",
            json!({"parameters": format!("num_ctx {num_ctx}"), "model_info": {"qwen2.context_length": 32768}}),
        );
    server
}

/// A mock that answers as llama.cpp's server does.
async fn llama_cpp(model_path: &str, n_ctx: u32) -> MockServer {
    let server = MockServer::start().await.unwrap();
    server
        .set_models(json!({"object": "list", "data": [{"id": model_path, "object": "model", "owned_by": "llamacpp", "meta": {"n_ctx": n_ctx, "n_ctx_train": 32768}}]}))
        .set_route("GET", "/props", json!({"default_generation_settings": {"n_ctx": n_ctx}}));
    server
}

async fn run_local(
    env: &TestEnv,
    servers: &[&MockServer],
    args: &[&str],
    stdin: Option<&str>,
) -> Output {
    let list: Vec<String> = servers.iter().map(|s| s.root_url()).collect();
    let mut cmd = env.command(args);
    cmd.env("OI_LOCAL_SERVERS", list.join(","));
    run_command(cmd, stdin).await
}

#[tokio::test]
async fn local_finds_the_servers_and_asks_which_model_when_there_are_several() {
    let env = TestEnv::new().await;
    let ollama = ollama("qwen2.5-coder:1.5b", 4096).await;
    let llama = llama_cpp("/models/Qwen2.5-Coder-7B-Instruct-Q4_K_M.gguf", 16384).await;
    let out = run_local(&env, &[&ollama, &llama], &["exec", "--local", "hi"], None).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("found 2 models"), "{}", out.stderr);
    assert!(
        out.stderr.contains("qwen2.5-coder:1.5b  (Ollama"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("Qwen2.5-Coder-7B-Instruct-Q4_K_M.gguf  (llama.cpp"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("--local --model NAME"),
        "{}",
        out.stderr
    );

    // The small model on Ollama: the markdown harness, Ollama's num_ctx.
    ollama.push(Reply::text("```python\nprint(6 * 7)\n```"));
    ollama.push(Reply::text("It is 42."));
    let out = run_local(
        &env,
        &[&ollama, &llama],
        &[
            "exec",
            "-y",
            "--local",
            "--model",
            "qwen2.5-coder:1.5b",
            "what is 6*7?",
        ],
        None,
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("--local: qwen2.5-coder:1.5b on Ollama"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stdout, "It is 42.\n");
    let request = &ollama.chat_requests()[0];
    assert_eq!(request.body["model"], "qwen2.5-coder:1.5b");
    assert!(
        request.body.get("tools").is_none(),
        "small models get no tools"
    );
    assert!(llama.chat_requests().is_empty());
    let out = run_local(
        &env,
        &[&ollama],
        &["--local", "--model", "qwen2.5-coder:1.5b"],
        Some("/tokens\n"),
    )
    .await;
    assert!(out.stdout.contains("of 4096 tokens"), "{out:?}");

    // The only server with the only model: taken without asking; its
    // window from /props.
    let out = run_local(&env, &[&llama], &["--local"], Some("/tokens\n")).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("of 16384 tokens"), "{out:?}");
}

#[tokio::test]
async fn local_without_a_server_says_what_it_looked_for() {
    let env = TestEnv::new().await;
    let out = env
        .run_with_env(
            &["exec", "--local", "hi"],
            &[("OI_LOCAL_SERVERS", "127.0.0.1:9")],
        )
        .await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("no model server with a model answered"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("http://127.0.0.1:9"), "{}", out.stderr);
    assert!(out.stderr.contains("--api-base"), "{}", out.stderr);
}

#[tokio::test]
async fn open_interpreters_spellings_of_local_look_for_a_server_too() {
    let env = TestEnv::new().await;
    for (args, from) in [
        (&["exec", "-l", "hi"][..], "--local:"),
        (&["exec", "-p", "local", "hi"][..], "--profile local:"),
    ] {
        let out = env
            .run_with_env(args, &[("OI_LOCAL_SERVERS", "127.0.0.1:9")])
            .await;
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
        assert!(
            out.stderr
                .contains(&format!("{from} no model server with a model answered")),
            "{args:?}: {}",
            out.stderr
        );
    }
}

#[tokio::test]
async fn a_local_model_writing_code_as_text_gets_the_markdown_harness() {
    let env = TestEnv::new().await;
    small_model_env(&env, "big-local-model");
    env.server
        .push(Reply::text("Here:\n```python\nprint(2 ** 10)\n```"))
        .push(Reply::text("It is 1024."));
    let out = env.exec(&["-y", "2 to the 10th?"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("now gets the markdown harness"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stdout, "It is 1024.\n");
    let requests = env.server.chat_requests();
    assert!(requests[0].body.get("tools").is_some());
    assert!(requests[1].body.get("tools").is_none());
    assert!(requests[1].body.to_string().contains("1024"));

    // Chosen by the user: kept, and the block is not run.
    env.server
        .push(Reply::text("Here:\n```python\nprint(2 ** 10)\n```"));
    let out = env
        .exec(&["-y", "--harness", "native", "2 to the 10th?"])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(!out.stderr.contains("markdown harness"), "{}", out.stderr);
    assert_eq!(env.server.chat_requests().len(), 3);
}

#[tokio::test]
async fn offline_code_cannot_reach_the_network_but_the_model_can() {
    let env = TestEnv::new().await;
    if !oi_testkit::present_or_skip(
        oi_testkit::Need::Sandbox,
        oi_sandbox::support().seccomp,
        "no seccomp here, so --offline is refused",
    ) {
        return;
    }
    let port = env.server.root_url().rsplit(':').next().unwrap().to_owned();
    env.server
        .push(Reply::execute(
            "python",
            &format!("import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n    print('connected')\nexcept OSError as e:\n    print('refused', e.errno)"),
        ))
        .push(Reply::text("Offline indeed."));
    let out = env.exec(&["-y", "--offline", "try the network"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "Offline indeed.\n");
    let result = crate::support::last_message_text(&env.server, 1);
    assert!(result.starts_with("refused"), "{result}");

    let out = env
        .exec(&["--offline", "--sandbox", "full-access", "x"])
        .await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr
            .contains("--offline cannot be kept with --sandbox full-access"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn small_local_models_get_a_short_prompt_and_are_kept_on_track() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    env.server
        // Describes instead of running: asked once to run it itself.
        .push(Reply::text(
            "You can run the following command to list the files: ls",
        ))
        // Untagged code: its language is inferred.
        .push(Reply::text(
            "```\nimport os\nprint(len(os.listdir('.')))\n```",
        ))
        // The same code again, after it ran without errors: not run, and
        // the model is told it may answer.
        .push(Reply::text(
            "```python\nimport os\nprint(len(os.listdir('.')))\n```",
        ))
        .push(Reply::text("There are 0 files."));
    let out = env.exec(&["-y", "how many files are here?"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "There are 0 files.\n");
    let requests = env.server.chat_requests();
    assert_eq!(requests.len(), 4, "{requests:?}");
    let system = requests[0].body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(system.len() < 700, "{} characters: {system}", system.len());
    assert!(system.contains("fenced block"), "{system}");
    assert!(
        last_message(&requests[1]).contains("you described code instead of running it"),
        "{}",
        last_message(&requests[1])
    );
    assert!(
        last_message(&requests[2]).starts_with("Result of the python code:\n```\n0\n```"),
        "{}",
        last_message(&requests[2])
    );
    assert!(
        last_message(&requests[3]).contains("that is the code that just ran without errors"),
        "{}",
        last_message(&requests[3])
    );
    assert!(
        requests
            .iter()
            .all(|r| r.body["temperature"].as_f64() == Some(0.0))
    );
}

#[tokio::test]
async fn a_small_model_repeating_code_whose_result_is_wrong_is_asked_again_then_warned() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    fs_err::write(env.cwd.path().join("names.txt"), "ada\nlin\n").unwrap();
    // Code that leaves the result empty, sent again, also when asked twice
    // more with freer sampling: run, and warned before the guard stops it.
    let block = "```python\nopen('upper.txt', 'w').write('')\n```";
    env.server
        .push(Reply::text(block))
        .push(Reply::text(block))
        .push(Reply::text(block))
        .push(Reply::text(block))
        // Told before it ends that the result is empty, once.
        .push(Reply::text("Done."))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "Write the names in names.txt in upper case to upper.txt.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let requests = env.server.chat_requests();
    let temperatures: Vec<_> = requests
        .iter()
        .map(|r| r.body["temperature"].as_f64())
        .collect();
    assert_eq!(
        temperatures[..5],
        [0.0, 0.0, 0.7, 1.0, 0.0].map(Some),
        "{temperatures:?}"
    );
    assert_eq!(requests[2].body["messages"], requests[1].body["messages"]);
    assert!(
        last_message(&requests[1]).contains("`upper.txt` now exists but is empty"),
        "{}",
        last_message(&requests[1])
    );
    assert!(
        last_message(&requests[4]).contains("you ran exactly this code 2 times"),
        "{}",
        last_message(&requests[4])
    );
    assert!(!out.stderr.contains("oi does not run it"), "{}", out.stderr);
}

#[tokio::test]
async fn a_fixed_script_runs_as_the_command_the_task_writes_without_quotes() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    let cwd = env.cwd.path();
    fs_err::write(cwd.join("data.csv"), "item,Net Amount\na,1.25\nb,2.25\n").unwrap();
    let broken = "import csv, sys\nrows = list(csv.DictReader(open(sys.argv[1])))\nprint(sum(float(r[sys.argv[2]]) for r in rows) / 0)\n";
    fs_err::write(cwd.join("total.py"), broken).unwrap();
    let fixed = "import csv, sys\nrows = list(csv.DictReader(open(sys.argv[1])))\nprint(f'{sum(float(r[sys.argv[2]]) for r in rows):.2f}')\n";
    env.server
        .push(Reply::text(&format!("```python\n{fixed}```")))
        .push(Reply::text("It prints 3.50."));
    // The command in the prose, after one with placeholders.
    let out = env
        .exec(&[
            "-y",
            "total.py, run as python3 total.py FILE COLUMN, should print a column's total. Fix total.py so that python3 total.py data.csv \"Net Amount\" works.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains(
            "oi saves it as that file and runs `python3 total.py data.csv \"Net Amount\"` as the task says"
        ),
        "{}",
        out.stderr
    );
    let ran = last_message(&env.server.chat_requests()[1]);
    assert!(ran.contains("3.50"), "{ran}");
}

/// A script with a misspelt name (`totl`): fixed, it prints 55.
const BROKEN_ADD_UP: &str = "def add_up(n):\n    total = 0\n    for i in range(1, n + 1):\n        total += i\n    return totl\n\nprint(add_up(10))\n";

#[tokio::test]
async fn a_fixed_script_a_small_model_only_runs_is_saved_as_the_script() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    let broken = BROKEN_ADD_UP;
    fs_err::write(env.cwd.path().join("script.py"), broken).unwrap();
    let fixed = broken.replace("totl", "total");
    // A first new version that still fails.
    let still_broken = broken.replace("totl", "tota");
    env.server
        .push(Reply::text(&format!(
            "Fixed:\n```python\n{still_broken}```"
        )))
        // The same version again: not saved and run again, but asked again.
        .push(Reply::text(&format!(
            "Fixed:\n```python\n{still_broken}```"
        )))
        .push(Reply::text(&format!("Fixed:\n```python\n{fixed}```")))
        .push(Reply::text("It prints 55."));
    let out = env
        .exec(&[
            "-y",
            "script.py is broken. Fix it so that `python3 script.py` prints 55.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("script.py")).unwrap(),
        fixed
    );
    assert!(
        out.stderr.contains(
            "the reply's code is a new version of script.py; oi saves it as that file and runs `python3 script.py` as the task says"
        ),
        "{}",
        out.stderr
    );
    let requests = env.server.chat_requests();
    // Told with the script how to change it.
    let first = last_message(&requests[0]);
    assert!(
        first.contains("To change `script.py`, send all of it, changed, in one ```python block (every line, not only the ones you change, and no `+`/`-` marks): oi saves it as `script.py` and runs it."),
        "{first}"
    );
    // The version that failed: the error, and no diff to copy marks from.
    let failed = last_message(&requests[1]);
    assert!(
        failed.contains("NameError")
            && failed.contains("[oi: `script.py` now holds your new version, which failed as shown. Send all of it again, fixed, in one block.]")
            && !failed.contains("```diff"),
        "{failed}"
    );
    assert_eq!(requests.len(), 4, "{requests:?}");
    assert_eq!(last_message(&requests[2]), failed);
    assert_eq!(requests[2].body["temperature"], 0.7);
    // The model sees the file run, and what its fix changed.
    let seen = last_message(&requests[3]);
    assert!(
        seen.contains("saved script.py")
            && seen.contains("55")
            && seen.contains("-    return tota\n+    return total"),
        "{seen}"
    );
}

#[tokio::test]
async fn a_small_model_sees_a_tables_profile_short_tracebacks_and_the_real_columns() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    fs_err::write(
        env.cwd.path().join("export.csv"),
        "Order No;Region Name;Amount\n1;North;\"$1,200.50\"\n2;South;$35.20\n3;North;NA\n",
    )
    .unwrap();
    env.server
        .push(Reply::text("```python\nimport json\njson.loads('{')\n```"))
        .push(Reply::text(
            "```python\nimport csv\nrows = list(csv.DictReader(open('export.csv')))\nprint(rows[0]['Region Name'])\n```",
        ))
        .push(Reply::text("Done."))
        .push(Reply::text("Done."))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "Sum the Amount of export.csv per region into totals.csv",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let requests = env.server.chat_requests();
    // The first look profiles the table.
    let first = last_message(&requests[0]);
    assert!(
        first.contains("As a table: 3 rows under a header row, fields separated by `;`.")
            && first.contains("- `Amount`: numbers written with currency signs or thousands separators, like `$1,200.50`, `$35.20`: remove them before converting; 1 of 3 missing: `NA`")
            && first.contains("Read it with `import pandas as pd`, `df = pd.read_csv('export.csv', sep=';')`, then `df['Amount'] = pd.to_numeric(df['Amount'].str.replace(r'[^0-9.-]', '', regex=True))`."),
        "{first}"
    );
    // The traceback reaches the model without the json module's frames.
    let second = last_message(&requests[1]);
    assert!(
        second.contains("inside libraries]")
            && second.contains("JSONDecodeError")
            && !second.contains("json/decoder.py"),
        "{second}"
    );
    // A column that exists, in a file read with the wrong separator.
    let third = last_message(&requests[2]);
    assert!(
        third.contains("`Region Name` is a column, but the file was not split by its separator")
            && third.contains("read it with sep=';' in pandas"),
        "{third}"
    );
}

#[tokio::test]
async fn a_small_model_going_in_circles_is_asked_again_and_sees_what_it_changed() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    let ini = "[server]\nport = 8000\n\n[database]\n# main\nport = 5432\n";
    fs_err::write(env.cwd.path().join("settings.ini"), ini).unwrap();
    let failing = "```python\nprint(config['database'])\n```";
    env.server
        .push(Reply::text(failing))
        .push(Reply::text("```python\nprint(open('settings.ini').read())\n```"))
        // The failed code again: asked again more freely.
        .push(Reply::text(failing))
        .push(Reply::text(
            "```python\ntext = open('settings.ini').read().replace('port = 5432', 'port = 5433')\nopen('settings.ini', 'w').write(text)\n```",
        ))
        .push(Reply::text("Done."));
    let out = env
        .exec(&["-y", "In settings.ini, set the database port to 5433."])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains(
            "the reply is no new step (code that just ran or already failed in this task, the failed run's output, the prompt's example, a value typed into a print, or no code where a step was asked for); asking once more, sampling more freely (temperature 0.7) and without the code that failed in view"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("settings.ini")).unwrap(),
        ini.replace("5432", "5433")
    );
    // The failed code did not run a second time: three runs, one of them
    // the change, whose diff the model then read.
    let requests = env.server.chat_requests();
    assert_eq!(requests.len(), 5, "{requests:?}");
    let seen = last_message(&requests[4]);
    assert!(
        seen.contains("your code changed `settings.ini`")
            && seen.contains("-port = 5432\n+port = 5433"),
        "{seen}"
    );
}

#[tokio::test]
async fn a_corrected_script_answering_why_it_fails_is_not_saved_over_it() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    let broken = BROKEN_ADD_UP;
    fs_err::write(env.cwd.path().join("script.py"), broken).unwrap();
    let fixed = broken.replace("totl", "total");
    env.server
        .push(Reply::text(&format!("Corrected:\n```python\n{fixed}```")))
        .push(Reply::text("It misspells total as totl."));
    let out = env
        .exec(&["-y", "script.py fails with a NameError. Tell me why."])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    // The block ran (it is code), but the user's file is as it was.
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("script.py")).unwrap(),
        broken
    );
    assert!(!out.stderr.contains("new version of"), "{}", out.stderr);
}

#[tokio::test]
async fn a_small_model_copying_the_left_out_line_after_a_sentence_is_asked_again_and_never_answers_with_it()
 {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:0.5b");
    let failing = "```python\nprint(totl)\n```";
    let copied = "`totl` is not defined. To fix it\n(code left out here: it failed, as its result below says)\n";
    env.server
        .push(Reply::text(failing))
        .push(Reply::text(failing))
        .push(Reply::text(copied));
    for _ in 0..6 {
        env.server.push(Reply::text(copied));
    }
    let out = env.exec(&["-y", "What is the total?"]).await;
    let requests = env.server.chat_requests();
    // The copy is no step: asked again more freely, as the repeat was.
    assert_eq!(requests[3].body["temperature"], 1.0, "{out:?}");
    assert_eq!(
        requests[3].body["messages"], requests[2].body["messages"],
        "{out:?}"
    );
    // Whatever ends the task, oi's placeholder is no part of the answer.
    assert!(
        out.stdout.contains("`totl` is not defined.") && !out.stdout.contains("code left out"),
        "{out:?}"
    );
}

#[tokio::test]
async fn a_small_model_repeating_the_last_code_is_asked_again_more_freely() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:0.5b");
    let failing = "```python\nprint(totl)\n```";
    env.server
        .push(Reply::text(failing))
        .push(Reply::text(failing))
        .push(Reply::text("```python\ntotal = 6\nprint(total)\n```"))
        .push(Reply::text("The total is 6."));
    let out = env.exec(&["-y", "What is the total?"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "The total is 6.\n");
    assert!(
        out.stderr
            .contains("asking once more, sampling more freely (temperature 0.7)"),
        "{}",
        out.stderr
    );
    let requests = env.server.chat_requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(requests[2].body["temperature"], 0.7);
    assert_eq!(requests[3].body["temperature"], 0.0);
    // The repeat was neither run nor kept: the model saw one failure. Asked
    // again, it saw the same conversation but for the failed block, which
    // it would copy.
    let asked = requests[1].body["messages"].as_array().unwrap();
    let again = requests[2].body["messages"].as_array().unwrap();
    assert_eq!(asked.len(), again.len());
    for (before, now) in asked.iter().zip(again) {
        if before["role"] == "assistant" && before["content"] == failing {
            assert_eq!(
                now["content"],
                "(code left out here: it failed, as its result below says)\n"
            );
        } else {
            assert_eq!(before, now);
        }
    }
    assert!(
        out.stderr.contains("without the code that failed in view"),
        "{}",
        out.stderr
    );
    let last = requests[3].body["messages"].to_string();
    assert_eq!(last.matches("NameError").count(), 1, "{last}");
    let repeats = requests[3].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant" && m["content"] == failing)
        .count();
    assert_eq!(repeats, 1, "{last}");
    assert!(last_message(&requests[3]).contains("6"), "{last}");
    // Other models run what they propose.
    let big = TestEnv::new().await;
    big.server
        .push(Reply::execute("python", "print(totl)"))
        .push(Reply::execute("python", "print(totl)"))
        .push(Reply::text("It fails."));
    let out = big.exec(&["-y", "What is the total?"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(big.server.chat_requests().len(), 3);
    assert!(!out.stderr.contains("asking once more"), "{}", out.stderr);
}

fn last_message(request: &oi_testkit::RecordedRequest) -> String {
    request.last_message_text()
}

#[tokio::test]
async fn local_asks_a_model_once_whether_it_calls_tools() {
    let env = TestEnv::new().await;
    let server = ollama("mistral-nemo:12b", 8192).await;
    // Asked to call the tool, it writes the code as text instead.
    server.answer_when(
        "Use the run_python tool",
        Reply::text("```python\nprint(6 * 7)\n```"),
    );
    server
        .push(Reply::text("```python\nprint(6 * 7)\n```"))
        .push(Reply::text("42."));
    let out = run_local(&env, &[&server], &["exec", "-y", "--local", "6*7?"], None).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("made no tool call when asked: markdown harness"),
        "{}",
        out.stderr
    );
    let probes = |s: &MockServer| {
        s.chat_requests()
            .iter()
            .filter(|r| r.body.to_string().contains("Use the run_python tool"))
            .count()
    };
    assert_eq!(probes(&server), 1);
    let task = server
        .chat_requests()
        .into_iter()
        .find(|r| r.body["stream"] == true)
        .unwrap();
    assert!(task.body.get("tools").is_none());
    // Remembered: not asked again.
    server.push(Reply::text("Hi."));
    let out = run_local(&env, &[&server], &["exec", "--local", "hi"], None).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(probes(&server), 1);

    // A model that calls the tool keeps the native harness.
    let env = TestEnv::new().await;
    let server = ollama("qwen2.5-coder:32b", 8192).await;
    server.answer_when(
        "Use the run_python tool",
        Reply::tool_calls(vec![oi_testkit::MockToolCall::new(
            "run_python",
            json!({"code": "print(6 * 7)"}),
        )]),
    );
    server.push(Reply::text("Hello."));
    let out = run_local(&env, &[&server], &["exec", "--local", "hi"], None).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("it calls tools: native harness"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn a_small_model_that_ends_without_the_file_the_task_names_is_told() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    std::fs::write(env.cwd.path().join("data.csv"), "a\nb\nc\n").unwrap();
    env.server
        // Counts, prints, and calls it done: count.txt was never written.
        .push(Reply::text(
            "```python\nprint(len(open('data.csv').readlines()))\n```",
        ))
        .push(Reply::text("There are 3 lines."))
        .push(Reply::text(
            "```python\nopen('count.txt', 'w').write('3')\n```",
        ))
        .push(Reply::text("Written."));
    let out = env
        .exec(&[
            "-y",
            "Count the lines of data.csv and write the number to count.txt.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        std::fs::read_to_string(env.cwd.path().join("count.txt")).unwrap(),
        "3"
    );
    let told = env.server.chat_requests()[2].last_message_text();
    assert!(
        told.contains("the task asks you to write `count.txt`, which does not exist yet"),
        "{told}"
    );
    assert!(!told.contains("data.csv"), "{told}");
}

#[tokio::test]
async fn a_small_model_that_claims_a_task_done_without_running_code_is_told_once() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    std::fs::create_dir(env.cwd.path().join("cache")).unwrap();
    std::fs::write(env.cwd.path().join("cache/tmp1"), "x").unwrap();
    env.server
        .push(Reply::text("The temporary files were deleted."))
        .push(Reply::text("```shell\nrm cache/tmp1\n```"))
        .push(Reply::text("Deleted."));
    let out = env
        .exec(&["-y", "Delete the temporary files in the cache folder."])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(!env.cwd.path().join("cache/tmp1").exists());
    let told = env.server.chat_requests()[1].last_message_text();
    assert!(
        told.contains("you have not run any code for this task, so nothing has been done yet"),
        "{told}"
    );
    // A question may be answered without code: no such note.
    env.server.push(Reply::text("2 ** 20 is 1048576."));
    let out = env.exec(&["-y", "What is 2 ** 20?"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(env.server.chat_requests().len(), 4, "answered at once");
}

#[tokio::test]
async fn a_small_model_sees_what_its_code_wrote_to_the_file_the_task_names() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    std::fs::write(
        env.cwd.path().join("contacts.txt"),
        "Ann Lee <ann@example.org>\nBob <bob@example.org>\n",
    )
    .unwrap();
    env.server
        .push(Reply::text(
            "```python\n_ = open('emails.txt', 'w').write(open('contacts.txt').read())\n```",
        ))
        .push(Reply::text(
            "```python\nimport re\n_ = open('emails.txt', 'w').write('\\n'.join(re.findall(r'[\\w.+-]+@[\\w-]+(?:\\.[\\w-]+)+', open('contacts.txt').read())) + '\\n')\n```",
        ))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "Extract the email addresses from contacts.txt and write them, one per line, to emails.txt.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    // Lines that are not addresses alone are named as the file is shown.
    let told = env.server.chat_requests()[1].last_message_text();
    assert!(
        told.contains("[oi: `emails.txt` now has 2 lines:\nAnn Lee <ann@example.org>\nBob <bob@example.org>\nIt is not right yet: `emails.txt` has a line that is not an email address alone (`Ann Lee <ann@example.org>`)"),
        "{told}"
    );
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("emails.txt")).unwrap(),
        "ann@example.org\nbob@example.org\n"
    );
    let shown = env.server.chat_requests()[2].last_message_text();
    assert!(
        shown.contains("[oi: `emails.txt` now has 2 lines:\nann@example.org\nbob@example.org\nCheck that it holds exactly what the task asks for.]"),
        "{shown}"
    );
    assert!(
        told.contains("(the code ran without errors and printed nothing)"),
        "{told}"
    );
}

#[tokio::test]
async fn a_small_model_that_repeats_a_note_back_gets_no_more_notes() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:0.5b");
    env.server
        .push(Reply::text("Sure, it is done."))
        .push(Reply::text(
            "[oi: the task asks you to write `out.txt`, which does not exist yet. Do that now with code that finds what it should hold and writes it there.]",
        ))
        .push(Reply::text("never asked"));
    let out = env.exec(&["-y", "Write hello to out.txt."]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        env.server.chat_requests().len(),
        2,
        "the parroted note ends the task: {}",
        out.stderr
    );
}

/// A session with the small model `model` on the mock server.
fn small_model_env(env: &TestEnv, model: &str) {
    env.write_config(&format!(
        "model_provider = \"mock\"\nmodel = \"{model}\"\n\n[model_providers.mock]\nbase_url = \"{}\"\n",
        env.server.base_url()
    ));
}

/// A small model's task (1.5B) in a folder holding `files`, whose first
/// reply is the Python block `code` and whose next ones say it is done:
/// what the model was told after that block ran (and any re-run of it).
async fn told_after_one_block(
    env: &TestEnv,
    files: &[(&str, &str)],
    code: &str,
    task: &str,
) -> String {
    small_model_env(env, "qwen2.5-coder:1.5b");
    for (name, text) in files {
        fs_err::write(env.cwd.path().join(name), text).unwrap();
    }
    env.server
        .push(Reply::text(&format!("```python\n{code}\n```")))
        .push(Reply::text("Done."))
        .push(Reply::text("Done."));
    let out = env.exec(&["-y", task]).await;
    assert_eq!(out.code, 0, "{out:?}");
    env.server.chat_requests()[1].last_message_text()
}

#[tokio::test]
async fn a_small_model_is_sent_greedy_sampling_and_a_reply_limit_unless_configured() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    env.server.push(Reply::text("Hi."));
    let out = env.exec(&["-y", "What is 1 + 1?"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let body = &env.server.chat_requests()[0].body;
    assert_eq!(body["max_tokens"], 1024, "{body}");
    assert_eq!(body["temperature"], 0.0, "{body}");
    // Configured values win.
    env.server.push(Reply::text("Hi."));
    let out = env
        .exec(&[
            "-y",
            "-c",
            "temperature=0.7",
            "-c",
            "max_tokens=300",
            "What is 1 + 1?",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let body = &env.server.chat_requests()[1].body;
    assert_eq!(body["max_tokens"], 300, "{body}");
    assert_eq!(body["temperature"], 0.7, "{body}");
    // Other models get none of it, nor the one-step grammar.
    let big = TestEnv::new().await;
    big.server.push(Reply::text("Hi."));
    let out = big.exec(&["-y", "What is 1 + 1?"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let body = &big.server.chat_requests()[0].body;
    assert!(body.get("temperature").is_none(), "{body}");
    assert!(body.get("grammar").is_none(), "{body}");
}

#[tokio::test]
async fn a_small_model_is_held_to_one_step_per_reply_unless_configured_off() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    env.server.push(Reply::text("Hi."));
    let out = env.exec(&["-y", "What is 1 + 1?"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let body = &env.server.chat_requests()[0].body;
    let grammar = body["grammar"].as_str().unwrap_or_default();
    assert!(
        grammar.starts_with("root ::= ") && grammar.contains("block ::= \"```\""),
        "{body}"
    );
    // Turned off.
    env.server.push(Reply::text("Hi."));
    let out = env
        .exec(&["-y", "-c", "reply_grammar=false", "What is 1 + 1?"])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let body = &env.server.chat_requests()[1].body;
    assert!(body.get("grammar").is_none(), "{body}");
    // Asked for where it cannot be kept: the native harness writes no
    // code blocks.
    let out = env
        .exec(&[
            "-y",
            "-c",
            "reply_grammar=true",
            "-c",
            "harness=native",
            "What is 1 + 1?",
        ])
        .await;
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("reply_grammar = true cannot be kept")
            && out.stderr.contains("native harness"),
        "{}",
        out.stderr
    );
    assert_eq!(env.server.chat_requests().len(), 2, "nothing was sent");
    // Other models are not constrained: checked with the sampling defaults
    // in `a_small_model_is_sent_greedy_sampling_…` above.
}

#[tokio::test]
async fn a_reply_that_must_act_is_held_to_a_block_in_a_language_the_session_runs() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    // A task asking for something done: the first reply must run code.
    // This one describes it, so the next must run code too; the reply
    // after a run may answer.
    env.server.push(Reply::text(
        "You can use the following: write each square to squares.txt.",
    ));
    env.server.push(Reply::text(
        "```python\nopen('squares.txt', 'w').write(''.join(f'{n * n}\\n' for n in (1, 2)))\n```",
    ));
    env.server.push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "Write the squares of 1 and 2 to squares.txt, one per line.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("squares.txt")).unwrap(),
        "1\n4\n"
    );
    let grammars: Vec<String> = env
        .server
        .chat_requests()
        .iter()
        .map(|r| r.body["grammar"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(grammars.len(), 3, "{grammars:?}");
    for must_act in &grammars[..2] {
        assert!(
            must_act.starts_with("root ::= (note \"\\n\")? \"```\" tag ")
                && must_act.contains("tag ::= \"python\" | ")
                && must_act.contains(" | \"bash\" | "),
            "{must_act}"
        );
    }
    assert!(grammars[2].contains("block ::= \"```\""), "{}", grammars[2]);
    // A question may be answered at once.
    env.server.push(Reply::text("2"));
    let out = env.exec(&["-y", "What is 1 + 1?"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let body = &env.server.chat_requests()[3].body;
    assert!(
        body["grammar"]
            .as_str()
            .is_some_and(|g| g.contains("block ::= \"```\"")),
        "{body}"
    );
}

#[tokio::test]
async fn reply_grammar_on_a_wire_without_one_is_refused() {
    let env = TestEnv::new().await;
    env.write_config(&format!(
        "model_provider = \"m\"\nmodel = \"claude-sonnet-4-5\"\nreply_grammar = true\nharness = \"markdown\"\n\n[model_providers.m]\nbase_url = \"{}\"\nwire_api = \"messages\"\n",
        env.server.base_url()
    ));
    let out = env.exec(&["-y", "What is 1 + 1?"]).await;
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("config.toml:3: reply_grammar = true cannot be kept")
            && out.stderr.contains("messages wire"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn a_small_model_gets_a_first_look_at_the_files_the_task_names() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:0.5b");
    std::fs::write(
        env.cwd.path().join("orders.json"),
        r#"{"data": {"orders": [{"id": 1, "items": [{"qty": 2}]}]}}"#,
    )
    .unwrap();
    std::fs::create_dir(env.cwd.path().join("in box")).unwrap();
    std::fs::write(env.cwd.path().join("in box/A.TXT"), "x").unwrap();
    env.server
        .push(Reply::text(
            "```python\n_ = open('count.txt', 'w').write('2')\n```",
        ))
        .push(Reply::text("2 items."));
    let out = env
        .exec(&[
            "-y",
            "Count the items in orders.json and write the count to count.txt.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let first = env.server.chat_requests()[0].last_message_text();
    assert!(
        first.starts_with("Count the items in orders.json and write the count to count.txt."),
        "{first}"
    );
    // Only those: a listing of the folder made models use every name.
    assert!(!first.contains("in box"), "{first}");
    assert!(
        first.contains("`orders.json` is a JSON document shaped like this:\n{\"data\": {\"orders\": [{\"id\": number, \"items\": [{\"qty\": number}, …] (1 item)}, …] (1 item)}}\nRead it with `import json`, `data = json.load(open('orders.json', encoding='utf-8'))`, then loop with `for order in data['data']['orders']:` and, inside it, `for item in order['items']:`."),
        "{first}"
    );
    // A later request of the task does not repeat it.
    let second = env.server.chat_requests()[1].last_message_text();
    assert!(
        !second.contains("how the files the task names begin"),
        "{second}"
    );
    // Other models get no look.
    let big = TestEnv::new().await;
    std::fs::write(big.cwd.path().join("orders.json"), "{}").unwrap();
    big.server.push(Reply::text("Done."));
    big.exec(&["-y", "Read orders.json"]).await;
    let first = big.server.chat_requests()[0].last_message_text();
    assert!(
        !first.contains("how the files the task names begin"),
        "{first}"
    );
}

#[tokio::test]
async fn a_small_model_gets_a_logs_fields_and_a_configurations_setter_in_its_first_look() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    let cwd = env.cwd.path();
    std::fs::write(
        cwd.join("access.log"),
        "10.0.0.1 - - [02/Nov/2026:10:00:00 +0000] \"GET /a/500 HTTP/1.1\" 200 500\n\
         10.0.0.2 - - [02/Nov/2026:10:01:00 +0000] \"GET /b HTTP/1.1\" 500 12\n\
         10.0.0.3 - - [02/Nov/2026:10:02:00 +0000] \"POST /c HTTP/1.1\" 404 7\n",
    )
    .unwrap();
    let settings = "; app\n[server]\nport = 8000\n\n[database]\n# primary\nport = 5432\n";
    std::fs::write(cwd.join("settings.ini"), settings).unwrap();
    // The model copies what the look gives: the split and the setter.
    env.server
        .push(Reply::text(
            "```python\nimport re\nn = sum(1 for line in open('access.log') if re.findall(r'\\[[^\\]]*\\]|\"[^\"]*\"|\\S+', line)[5] == '500')\n\
def set_key(path, section, key, value):\n    lines = open(path).read().split('\\n')\n    current = ''\n    for i, line in enumerate(lines):\n        text = line.strip()\n        if text.startswith('[') and text.endswith(']'):\n            current = text[1:-1].strip()\n        elif current == section and '=' in text and text.split('=')[0].strip() == key:\n            lines[i] = line[:len(line) - len(line.lstrip())] + key + ' = ' + str(value)\n    open(path, 'w').write('\\n'.join(lines))\n\
set_key('settings.ini', 'database', 'port', 5000 + n)\n```",
        ))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "In settings.ini, set the database port to 5000 plus the number of requests in access.log that failed with status 500.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let first = env.server.chat_requests()[0].last_message_text();
    assert!(
        first.contains("In it each line is a record: `for line in open('access.log'):` then split it into fields with `import re`, `fields = re.findall(r'\\[[^\\]]*\\]|\"[^\"]*\"|\\S+', line)`"),
        "{first}"
    );
    assert!(
        first.contains("- `fields[5]`: whole numbers, like `200`, `500`, `404`; the HTTP status (`fields[5] == '500'`)"),
        "{first}"
    );
    assert!(
        first.contains("its last line set to the section, key and value the task names:\n```python\ndef set_key(path, section, key, value):"),
        "{first}"
    );
    // What the look gives does the job in the real kernel: one section's
    // key set, the comments kept.
    assert_eq!(
        std::fs::read_to_string(cwd.join("settings.ini")).unwrap(),
        settings.replace("port = 5432", "port = 5001")
    );
}

#[tokio::test]
async fn a_small_model_is_told_its_result_has_words_around_the_form_the_task_gives() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    env.server
        .push(Reply::text(
            "```python\n_ = open('version.txt', 'w').write('Python 3.11.7')\n```",
        ))
        .push(Reply::text(
            "```python\n_ = open('version.txt', 'w').write('3.11.7\\n')\n```",
        ))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "Write the version of python3 on this machine (for example 3.11.7) to version.txt.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let requests = env.server.chat_requests();
    let told = requests[1].last_message_text();
    assert!(
        told.contains("`version.txt` holds `Python 3.11.7` where the task's example is `3.11.7`: write the value alone in that form (`3.11.7`, as `open('version.txt', 'w').write('3.11.7\\n')` writes it)"),
        "{told}"
    );
    // Written in that form, it is only shown.
    assert!(
        requests[2]
            .last_message_text()
            .contains("Check that it holds exactly what the task asks for."),
        "{}",
        requests[2].last_message_text()
    );
    assert_eq!(requests.len(), 3);
}

#[tokio::test]
async fn a_small_model_is_told_a_line_out_of_the_form_the_task_quotes_and_a_first_row_taken_for_the_most()
 {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    let cwd = env.cwd.path();
    fs_err::write(
        cwd.join("guide.md"),
        "# Guide\n\n## Install\n\n### On Linux\n",
    )
    .unwrap();
    env.server
        .push(Reply::text(
            "```python\nheads = [l.rstrip() for l in open('guide.md') if l.startswith('#')]\n_ = open('toc.md', 'w').write('\\n'.join(heads) + '\\n')\n```",
        ))
        .push(Reply::text(
            "```python\n_ = open('toc.md', 'w').write('- Install\\n  - On Linux\\n')\n```",
        ))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "Write toc.md, a table of contents for guide.md: a level-2 heading as \"- Title\" and a level-3 heading as \"  - Title\".",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let requests = env.server.chat_requests();
    let told = requests[1].last_message_text();
    assert!(
        told.contains("line 1 of `toc.md` is `# Guide` (and 2 more lines), not in the form the task gives its lines, `- Title` or `  - Title`"),
        "{told}"
    );
    assert!(
        requests[2]
            .last_message_text()
            .contains("Check that it holds exactly what the task asks for."),
        "{}",
        requests[2].last_message_text()
    );

    // The first row written where the task asks for the most: named
    // before the task may end.
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    let cwd = env.cwd.path();
    fs_err::write(cwd.join("days.txt"), "Tuesday\nMonday\nMonday\n").unwrap();
    env.server
        .push(Reply::text(
            "```python\nday = open('days.txt').read().split()[0]\n_ = open('busiest.txt', 'w').write(day)\n```",
        ))
        .push(Reply::text("The busiest day is Tuesday."))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "days.txt lists the day of each order. Write the day with the most orders to busiest.txt.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let told: Vec<String> = env
        .server
        .chat_requests()
        .iter()
        .map(|r| r.last_message_text())
        .collect();
    assert!(
        told.iter().any(|t| t.contains("the task asks for the most, and the code that wrote `busiest.txt` takes the first element (`day = open('days.txt').read().split()[0]`) without comparing, counting or sorting anything")),
        "{told:?}"
    );
}

#[tokio::test]
async fn a_small_model_is_told_an_average_it_never_divided_and_a_field_the_task_names() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    fs_err::write(
        env.cwd.path().join("times.json"),
        r#"[{"path": "/a", "ms": 10, "cached": false}, {"path": "/a", "ms": 30, "cached": true}, {"path": "/b", "ms": 25, "cached": false}]"#,
    )
    .unwrap();
    let summed = "import json\ntotals = {}\nfor r in json.load(open('times.json')):\n    totals[r['path']] = totals.get(r['path'], 0) + r['ms']\n_ = open('slowest.txt', 'w').write(max(totals, key=totals.get))";
    let averaged = "import json\ntotals, counts = {}, {}\nfor r in json.load(open('times.json')):\n    if not r['cached']:\n        totals[r['path']] = totals.get(r['path'], 0) + r['ms']\n        counts[r['path']] = counts.get(r['path'], 0) + 1\n_ = open('slowest.txt', 'w').write(max(totals, key=lambda p: totals[p] / counts[p]))";
    env.server
        .push(Reply::text(&format!("```python\n{summed}\n```")))
        .push(Reply::text(&format!("```python\n{averaged}\n```")))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "In times.json, which path has the highest average time over the requests that were not cached? Write just that path to slowest.txt.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("slowest.txt")).unwrap(),
        "/b"
    );
    let requests = env.server.chat_requests();
    let told = requests[1].last_message_text();
    assert!(
        told.contains("the task asks for an average, but the code that wrote `slowest.txt` divides nothing")
            && told.contains("the task speaks of `cached`, a field of `times.json`, which the code that wrote `slowest.txt` never reads"),
        "{told}"
    );
    let after = requests[2].last_message_text();
    assert!(
        !after.contains("divides nothing") && !after.contains("never reads"),
        "{after}"
    );
}

#[tokio::test]
async fn a_script_a_small_models_reply_runs_but_never_wrote_is_saved_first() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    env.server
        .push(Reply::text(
            "Save this as `sum.py`:\n```python\nprint(sum(range(1, 101)))\n```\nThen run it:\n```bash\npython3 sum.py\n```",
        ))
        .push(Reply::text("The sum is 5050."));
    let out = env
        .exec(&["-y", "What is the sum of 1..100? Use a script."])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        std::fs::read_to_string(env.cwd.path().join("sum.py")).unwrap(),
        "print(sum(range(1, 101)))\n"
    );
    let results = env.server.chat_requests()[1].last_message_text();
    assert!(results.contains("saved sum.py"), "{results}");
    assert!(results.contains("5050"), "{results}");
    assert!(
        out.stderr
            .contains("the reply runs sum.py without writing it"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn a_small_models_block_that_lacked_a_standard_import_runs_again_with_it() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    fs_err::write(
        env.cwd.path().join("orders.json"),
        r#"[["ana", 3], ["ben", 5]]"#,
    )
    .unwrap();
    env.server
        .push(Reply::text(
            "```python\nimport json\nrows = json.load(open('orders.json'))\nwith open('orders.csv', 'w', newline='') as f:\n    csv.writer(f).writerows(rows)\n```",
        ))
        .push(Reply::text("Done."));
    let out = env
        .exec(&["-y", "Convert orders.json to orders.csv."])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    // The real kernel ran the block again with the import first: the file
    // is written, and the model, told so, needed no second step.
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("orders.csv"))
            .unwrap()
            .replace("\r\n", "\n"),
        "ana,3\nben,5\n"
    );
    let requests = env.server.chat_requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    let second = requests[1].last_message_text();
    assert!(
        second.contains("NameError: name 'csv' is not defined"),
        "{second}"
    );
    assert!(
        second.contains("[oi: your code uses `csv` without importing it, so oi ran it again with `import csv` added at its top:]"),
        "{second}"
    );
    assert!(!second.contains("add `import csv`"), "{second}");
}

/// A small model's one Python `block` about `notes.txt` (three lines),
/// run by the real binary and kernel: it failed with `error` at `line`,
/// oi ran it again at once with the line written as `fixed`, and the
/// model read the lead and then what the block printed (`printed`), with
/// no second step asked of it.
async fn a_failed_line_is_fixed_and_run_again(
    block: &str,
    line: &str,
    error: &str,
    fixed: &str,
    printed: &str,
) {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    fs_err::write(env.cwd.path().join("notes.txt"), "a\nb\nc\n").unwrap();
    env.server
        .push(Reply::text(&format!("```python\n{block}\n```")))
        .push(Reply::text("notes.txt has 3 lines."));
    let out = env
        .exec(&["-y", "How many lines does notes.txt have?"])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let requests = env.server.chat_requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    let second = requests[1].last_message_text();
    assert!(second.contains(error), "{second}");
    let lead = format!(
        "[oi: that error has a known fix, so oi ran your code again with `{line}` written as `{fixed}`:]"
    );
    assert!(second.contains(&format!("{lead}\n{printed}")), "{second}");
}

#[tokio::test]
async fn a_small_models_number_joined_to_text_is_converted_and_run_again() {
    let line = "print('Lines: ' + len(lines))";
    a_failed_line_is_fixed_and_run_again(
        &format!("lines = open('notes.txt').read().splitlines()\n{line}"),
        line,
        "TypeError: can only concatenate str (not \"int\") to str",
        "print('Lines: ' + str(len(lines)))",
        "Lines: 3",
    )
    .await;
}

#[tokio::test]
async fn a_small_models_made_up_folder_before_a_file_name_is_taken_out_and_run_again() {
    let line = "lines = open('/path/to/notes.txt').read().splitlines()";
    a_failed_line_is_fixed_and_run_again(
        &format!("{line}\nprint(len(lines))"),
        line,
        "No such file or directory: '/path/to/notes.txt'",
        "lines = open('notes.txt').read().splitlines()",
        "3",
    )
    .await;
}

#[tokio::test]
async fn a_small_models_file_moved_into_a_folder_not_made_gets_it_made_and_runs_again() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    let cwd = env.cwd.path();
    fs_err::write(cwd.join("notes.txt"), "a\nb\n").unwrap();
    let line = "os.rename('notes.txt', 'archive/2024/notes.txt')";
    env.server
        .push(Reply::text(&format!(
            "```python\nimport os\n{line}\nprint('moved')\n```"
        )))
        .push(Reply::text("Moved."));
    let out = env
        .exec(&["-y", "Move notes.txt into archive/2024/."])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let told = env.server.chat_requests()[1].last_message_text();
    assert!(
        told.contains("No such file or directory: 'notes.txt' -> 'archive/2024/notes.txt'"),
        "{told}"
    );
    assert!(
        told.contains(&format!("[oi: that error has a known fix, so oi ran your code again with `{line}` written as:\n```python\nos.makedirs(os.path.dirname('archive/2024/notes.txt'), exist_ok=True)\n{line}\n```\nIts result:]\nmoved")),
        "{told}"
    );
    assert_eq!(
        fs_err::read_to_string(cwd.join("archive/2024/notes.txt")).unwrap(),
        "a\nb\n"
    );
    assert!(!cwd.join("notes.txt").exists());
}

/// A folder of backups, one named in capitals, for the suffix tests.
fn backups(cwd: &std::path::Path) {
    for file in ["project/a.py.bak", "project/src/OLD.BAK", "project/a.py"] {
        fs_err::create_dir_all(cwd.join(file).parent().unwrap()).unwrap();
        fs_err::write(cwd.join(file), file).unwrap();
    }
}

#[tokio::test]
async fn a_small_models_suffix_test_that_misses_a_name_in_capitals_is_run_again_lowercased() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    let cwd = env.cwd.path();
    backups(cwd);
    let line = "if f.endswith('.bak'):";
    env.server
        .push(Reply::text(&format!(
            "```python\nimport os\nfound = []\nfor root, dirs, files in os.walk('project'):\n    for f in files:\n        {line}\n            found.append(f)\nopen('backups.txt', 'w').write('\\n'.join(sorted(found)))\nprint(len(found), 'backups')\n```"
        )))
        .push(Reply::text("Listed the backups."));
    let out = env
        .exec(&[
            "-y",
            "List every backup file (.bak) under project/ in backups.txt.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let told = env.server.chat_requests()[1].last_message_text();
    assert!(
        told.contains(&format!("1 backups\n```\n\nCode block 2 (python):\n```\n[oi: `{line}` misses `project/src/OLD.BAK`: `.endswith('.bak')` matches `.bak` in lowercase only, and names differ in case. So oi ran your code again with each name lowercased before the test:]\n2 backups")),
        "{told}"
    );
    assert_eq!(
        fs_err::read_to_string(cwd.join("backups.txt")).unwrap(),
        "OLD.BAK\na.py.bak"
    );
}

#[tokio::test]
async fn a_small_models_suffix_test_in_a_block_that_did_not_run_is_not_run_again() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    backups(env.cwd.path());
    env.server
        .push(Reply::text(
            "```python\nimport os\nfor root, dirs, files in os.walk('project'):\n    for f in sorted(files):\n        if f.endswith('.bak'):\n            os.remove(os.path.join(root, f))\n```",
        ))
        .push(Reply::text("Removed."));
    // Risky code (what `sorted(files)` names is known only when it runs)
    // needs a person's approval, and there is none to ask.
    let out = env
        .exec(&["-y", "Delete every backup file (.bak) under project/."])
        .await;
    assert_eq!(out.code, 4, "{out:?}");
    assert_eq!(out.stderr.matches("── python ──").count(), 1, "{out:?}");
    let told = env.server.chat_requests()[1].last_message_text();
    assert!(!told.contains("misses"), "{told}");
    assert!(env.cwd.path().join("project/src/OLD.BAK").exists());
}

/// Runs the task that moves the backups of [`backups`] keeping their
/// folders, the model replying with `code` and then "Moved."; the
/// environment after it.
async fn backups_moved_by(code: &str) -> TestEnv {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    backups(env.cwd.path());
    env.server
        .push(Reply::text(code))
        .push(Reply::text("Moved."));
    let out = env
        .exec(&[
            "-y",
            "Move every .bak file under project/ into backups/, keeping each file's folders relative to project/.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    env
}

/// The block oi runs to put `backups/OLD.BAK` where it belongs.
const PUT_BACK: &str = "```python\nimport os\nfor now, belongs in [('backups/OLD.BAK', 'backups/src/OLD.BAK')]:\n    os.makedirs(os.path.dirname(belongs), exist_ok=True)\n    os.rename(now, belongs)\n```";

/// What leads the result of [`PUT_BACK`].
fn put_back_lead() -> String {
    format!(
        "[oi: `project/src/OLD.BAK` is now `backups/OLD.BAK`: it lost its folders, and the task asks to keep them, so `backups/OLD.BAK` belongs at `backups/src/OLD.BAK`. So oi ran this block to put it where it belongs:]\n{PUT_BACK}\n(the code ran without errors and printed nothing)"
    )
}

#[tokio::test]
async fn a_small_models_file_moved_without_the_folders_the_task_keeps_is_put_back_by_oi() {
    let flat = "```python\nimport os, shutil\nos.makedirs('backups', exist_ok=True)\nfor root, dirs, files in os.walk('project'):\n    for f in files:\n        if f.lower().endswith('.bak'):\n            shutil.move(os.path.join(root, f), os.path.join('backups', f))\n```";
    let env = backups_moved_by(flat).await;
    let cwd = env.cwd.path();
    let told = env.server.chat_requests()[1].last_message_text();
    assert!(told.contains(&put_back_lead()), "{told}");
    assert!(cwd.join("backups/src/OLD.BAK").is_file());
    assert!(cwd.join("backups/a.py.bak").is_file());
    assert!(!cwd.join("backups/OLD.BAK").exists());
    // Put back, the task ends with no check to make.
    assert_eq!(env.server.chat_requests().len(), 2);
}

#[tokio::test]
async fn a_file_oi_moved_again_without_its_folders_is_put_back_right_after() {
    // `OLD.BAK` is missed by the test in lower case, then moved by oi's
    // re-run with the name lowercased, still without its folders.
    let flat = "```python\nimport os, shutil\nos.makedirs('backups', exist_ok=True)\nfor root, dirs, files in os.walk('project'):\n    for f in files:\n        if f.endswith('.bak'):\n            shutil.move(os.path.join(root, f), os.path.join('backups', f))\n```";
    let env = backups_moved_by(flat).await;
    let cwd = env.cwd.path();
    let told = env.server.chat_requests()[1].last_message_text();
    let lowered = told
        .find("So oi ran your code again with each name lowercased before the test:]")
        .unwrap_or_else(|| panic!("{told}"));
    let put_back = told
        .find(&put_back_lead())
        .unwrap_or_else(|| panic!("{told}"));
    assert!(lowered < put_back, "{told}");
    assert!(cwd.join("backups/src/OLD.BAK").is_file());
    assert!(!cwd.join("backups/OLD.BAK").exists());
}

#[tokio::test]
async fn a_suffix_test_missing_a_name_in_capitals_in_a_block_oi_fixed_is_lowercased_right_after() {
    // The move into a folder not made fails, oi makes the folder and runs
    // the block again; that run misses `OLD.BAK`, so oi runs it once more
    // with the name lowercased.
    let code = "```python\nimport os\nfor root, dirs, files in os.walk('project'):\n    for f in files:\n        if f.endswith('.bak'):\n            path = os.path.join(root, f)\n            target = os.path.join('backups', os.path.relpath(path, 'project'))\n            os.rename(path, target)\n```";
    let env = backups_moved_by(code).await;
    let cwd = env.cwd.path();
    let told = env.server.chat_requests()[1].last_message_text();
    let made = told
        .find("[oi: that error has a known fix, so oi ran your code again with `os.rename(path, target)` written as:")
        .unwrap_or_else(|| panic!("{told}"));
    let lowered = told
        .find("[oi: `if f.endswith('.bak'):` misses `project/src/OLD.BAK`")
        .unwrap_or_else(|| panic!("{told}"));
    assert!(made < lowered, "{told}");
    assert!(cwd.join("backups/src/OLD.BAK").is_file());
    assert!(cwd.join("backups/a.py.bak").is_file());
}

#[tokio::test]
async fn a_small_model_that_moves_files_with_their_folders_is_not_told_they_lost_them() {
    let kept = "```python\nimport os, shutil\nfor root, dirs, files in os.walk('project'):\n    for f in files:\n        if f.lower().endswith('.bak'):\n            path = os.path.join(root, f)\n            target = os.path.join('backups', os.path.relpath(path, 'project'))\n            os.makedirs(os.path.dirname(target), exist_ok=True)\n            shutil.move(path, target)\n```";
    let env = backups_moved_by(kept).await;
    let cwd = env.cwd.path();
    assert!(cwd.join("backups/src/OLD.BAK").exists());
    let requests = env.server.chat_requests();
    assert_eq!(requests.len(), 2, "no check before finishing");
    assert!(!requests[1].last_message_text().contains("lost its folders"));
}

#[tokio::test]
async fn a_small_model_is_told_what_a_common_error_means_once() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    fs_err::write(env.cwd.path().join("prices.csv"), "price\n7.5\n2\n").unwrap();
    let int_of_decimal = "```python\ntotal = 0\nfor v in ['7.5', '2']:\n    total += int(v)\n```";
    env.server
        .push(Reply::text(int_of_decimal))
        .push(Reply::text(
            "```python\nprint(open('/path/to/price_list.csv').read())\n```",
        ))
        .push(Reply::text("```python\nprint(int('7.5') + 2)\n```"))
        .push(Reply::text("Done."))
        .push(Reply::text("Done."));
    let out = env
        .exec(&["-y", "Add up the prices in prices.csv and print the total."])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let requests = env.server.chat_requests();
    // The error's one-line fix made by oi, and the block run again.
    let second = requests[1].last_message_text();
    assert!(
        second.contains("[oi: that error has a known fix, so oi ran your code again with `total += int(v)` written as `total += float(v)`:]"),
        "{second}"
    );
    assert!(!second.contains("has a decimal point"), "{second}");
    let decimal = "has a decimal point";
    // A made-up path to a file the folder does not hold: the folder's
    // real names, to use relative to it.
    let third = requests[2].last_message_text();
    assert!(
        third.contains("[oi: `/path/to/price_list.csv` does not exist. The working folder (")
            && third.contains(") holds `prices.csv`: use those names, relative to it.]"),
        "{third}"
    );
    // Each hint once a task: the same error again (other code) gets none.
    let fourth = requests[3].last_message_text();
    assert!(fourth.contains("invalid literal for int()"), "{fourth}");
    assert!(!fourth.contains(decimal), "{fourth}");
}

#[tokio::test]
async fn a_small_model_filling_a_list_under_its_loop_variables_name_is_told_so_once() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    fs_err::create_dir(env.cwd.path().join("docs")).unwrap();
    fs_err::write(env.cwd.path().join("docs/a.md"), "x").unwrap();
    let shadowing = "```python\nimport os\nfiles = []\nfor root, dirs, files in os.walk('.'):\n    for file in files:\n        files.append((os.path.getsize(os.path.join(root, file)), file))\nprint(sorted(files)[:3])\n```";
    let own_name = "```python\nimport os\nfound = []\nfor root, dirs, files in os.walk('.'):\n    for file in files:\n        found.append((os.path.getsize(os.path.join(root, file)), file))\nprint(sorted(found)[:3])\n```";
    env.server
        .push(Reply::text(shadowing))
        .push(Reply::text(own_name))
        .push(Reply::text("Done."));
    let out = env
        .exec(&["-y", "Print the three largest files here."])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let requests = env.server.chat_requests();
    let told = "[oi: `files` names both the collection you fill (`files = []`) and a variable of the loop `for root, dirs, files in os.walk('.'):`: each step of the loop sets `files` again";
    let second = requests[1].last_message_text();
    // The real kernel ran it: appending to the list it walks.
    assert!(second.contains("not 'tuple'"), "{second}");
    assert!(second.contains(told), "{second}");
    let third = requests[2].last_message_text();
    assert!(third.contains("(1, 'a.md')"), "{third}");
    assert!(!third.contains(told), "{third}");
}

#[tokio::test]
async fn a_small_models_loop_value_that_nothing_reads_is_named_with_its_result() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    fs_err::write(
        env.cwd.path().join("app.log"),
        "08:00 user=ana action=login\n09:00 user=ana action=logout\n10:00 user=ana action=login\n10:30 user=ana action=logout\n",
    )
    .unwrap();
    // First to last line per user: `action` is read and left out.
    let ignores = "```python\nspans = {}\nfor line in open('app.log'):\n    time, user, action = line.split()\n    hour = int(time[:2]) * 60 + int(time[3:])\n    kind = action.split('=')[1]\n    spans.setdefault(user, [hour, hour])[1] = hour\nwith open('minutes.csv', 'w') as f:\n    for user, (start, end) in spans.items():\n        f.write(f'{user[5:]},{end - start}\\n')\n```";
    let pairs = "```python\ntotal = {}\nstart = {}\nfor line in open('app.log'):\n    time, user, action = line.split()\n    hour = int(time[:2]) * 60 + int(time[3:])\n    kind = action.split('=')[1]\n    if kind == 'login':\n        start[user] = hour\n    else:\n        total[user] = total.get(user, 0) + hour - start[user]\nwith open('minutes.csv', 'w') as f:\n    for user, minutes in total.items():\n        f.write(f'{user[5:]},{minutes}\\n')\n```";
    env.server
        .push(Reply::text(ignores))
        .push(Reply::text(pairs))
        .push(Reply::text("Done."))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "app.log has logins and logouts. Write each user's logged-in minutes to minutes.csv.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let told =
        "sets `kind` at each step of its loop (`kind = action.split('=')[1]`) and never reads it";
    let requests = env.server.chat_requests();
    // The real kernel wrote first to last (150 minutes), and the note came
    // with that result.
    let second = requests[1].last_message_text();
    assert!(second.contains("ana,150"), "{second}");
    assert!(second.contains(told), "{second}");
    let third = requests[2].last_message_text();
    assert!(third.contains("ana,90"), "{third}");
    assert!(!third.contains(told), "{third}");
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("minutes.csv")).unwrap(),
        "ana,90\n"
    );
}

#[tokio::test]
async fn a_small_models_one_line_fix_runs_inside_the_block_that_failed() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    let block = "```python\nrows = [{'qty': 2, 'price': '1.20'}, {'qty': 1, 'price': '3.00'}]\ntotal = 0.0\nfor row in rows:\n    cost = row['qty'] * row['price']\n    total += cost\nwith open('total.txt', 'w') as f:\n    f.write(f'{total:.2f}')\n```";
    env.server
        .push(Reply::text(block))
        .push(Reply::text(
            "The price is text. Fix:\n```python\ncost = row['qty'] * float(row['price'])\n```",
        ))
        .push(Reply::text("Done."))
        .push(Reply::text("Done."));
    let out = env
        .exec(&["-y", "Write the total cost of the rows to total.txt."])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    // Run alone, the line would have computed one row's cost and written
    // nothing; put in place of line 4, the loop and the write ran.
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("total.txt")).unwrap(),
        "5.40"
    );
    let requests = env.server.chat_requests();
    let third = requests[2].last_message_text();
    assert!(
        third.contains(
            "[oi: your change went into the block that failed (line 4 replaced), and oi ran that block whole.]"
        ),
        "{third}"
    );
}

#[tokio::test]
async fn a_small_models_guard_for_a_missing_key_runs_inside_the_block_that_failed() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    fs_err::write(
        env.cwd.path().join("posts.json"),
        r#"{"posts": [{"meta": {"tags": ["a", "b"]}}, {"meta": {}}, {"meta": {"tags": ["c"]}}]}"#,
    )
    .unwrap();
    let block = "```python\nimport json\ndata = json.load(open('posts.json'))\ncount = 0\nfor post in data['posts']:\n    tags = post['meta']['tags']\n    count += len(tags)\nwith open('tags.txt', 'w') as f:\n    f.write(str(count))\n```";
    env.server
        .push(Reply::text(block))
        .push(Reply::text(
            "Some posts have no tags. Add:\n```python\nif 'tags' in post['meta']:\n    tags = post['meta']['tags']\nelse:\n    tags = []\n```",
        ))
        .push(Reply::text("Done."))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "Write how many tags the posts of posts.json carry in all to tags.txt.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    // Run alone, the guard would have set `tags` for the post the loop
    // stopped at and written nothing; in place of line 5, the loop and
    // the write ran.
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("tags.txt")).unwrap(),
        "3"
    );
    let third = env.server.chat_requests()[2].last_message_text();
    assert!(
        third.contains(
            "[oi: your change went into the block that failed (line 5 replaced by your `if` statement), and oi ran that block whole.]"
        ),
        "{third}"
    );
}

#[tokio::test]
async fn a_reply_with_hundreds_of_blank_lines_in_a_row_is_kept_with_two() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    let reply = format!(
        "Here it is:{}```python\nimport platform\nprint(platform.python_version())\n```",
        "\n".repeat(300)
    );
    env.server
        .push(Reply::text(&reply))
        .push(Reply::text("Done."))
        .push(Reply::text("Done."));
    let out = env.exec(&["-y", "Print the version of Python."]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let requests = env.server.chat_requests();
    let sent_back = requests[1]
        .messages()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect::<Vec<_>>();
    assert_eq!(
        sent_back,
        ["Here it is:\n\n\n```python\nimport platform\nprint(platform.python_version())\n```"],
        "{}",
        out.stderr
    );
    assert!(requests[1].last_message_text().contains("3."));
    assert!(
        out.stderr.contains("oi kept two in a row and left out 297"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn a_small_models_result_written_by_a_later_block_is_shown_with_the_code_it_builds_on() {
    // The first block fails past the step that goes wrong (the header
    // kept from the input); a later block only writes what it left. Told
    // the result is wrong, the model is shown both as one script, and the
    // script it sends back runs from the start.
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    fs_err::write(
        env.cwd.path().join("in.csv"),
        "name,amount\nAna,4.5\nBo,2\nAna,1\n",
    )
    .unwrap();
    let first = "import csv\n\n# Read the rows\nrows = list(csv.reader(open('in.csv')))\ntotals = {}\nfor name, amount in rows[1:]:\n    totals[name] = totals.get(name, 0) + float(amount)\nheader = rows[0]\nprint(header[5])";
    let writer = "with open('totals.csv', 'w', newline='') as f:\n    w = csv.writer(f)\n    w.writerow(header)\n    w.writerows(sorted(totals.items()))";
    let script = format!(
        "import csv\nrows = list(csv.reader(open('in.csv')))\ntotals = {{}}\nfor name, amount in rows[1:]:\n    totals[name] = totals.get(name, 0) + float(amount)\nheader = rows[0]\n{writer}"
    );
    let fixed = script.replace("header = rows[0]", "header = ['name', 'total']");
    env.server
        .push(Reply::text(&format!("```python\n{first}\n```")))
        .push(Reply::text(&format!("```python\n{writer}\n```")))
        .push(Reply::text(&format!("```python\n{fixed}\n```")))
        .push(Reply::text("Done."))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "Add up the amounts of each name in in.csv. Write totals.csv with the header name,total.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let requests = env.server.chat_requests();
    let third = requests[2].last_message_text();
    assert!(
        third.contains("It is not right yet: `totals.csv` begins with `name,amount`"),
        "{third}"
    );
    assert!(
        third.contains(&format!(
            "The code that wrote `totals.csv` builds on your earlier runs; all of it, as one script that runs from the start:\n```python\n{script}\n```\nChange the step that makes it wrong and send the whole script, changed, in one block."
        )),
        "{third}"
    );
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("totals.csv")).unwrap(),
        "name,total\r\nAna,5.5\r\nBo,2.0\r\n"
    );
}

#[tokio::test]
async fn a_small_models_fragment_sent_again_runs_as_written_not_put_in_again() {
    // Put into the failed block once; sent again, put in again it would
    // change that block once more (another line before the failed one),
    // so each send would run a new block. It runs as written instead.
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    let block = "```python\nrows = [1, 2, 3]\ntotal = 0\nfor r in rows:\n    total += r\nresult = total / rows[3]\n_ = open('out.txt', 'w').write(str(result))\n```";
    let fragment = "```python\nrows = rows + [0]\n```";
    env.server
        .push(Reply::text(block))
        .push(Reply::text(fragment))
        .push(Reply::text(fragment))
        .push(Reply::text("Done."))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "Divide the total of the rows by their fourth into out.txt.",
        ])
        .await;
    let put_in = "oi runs that block whole with the change";
    assert_eq!(out.stderr.matches(put_in).count(), 1, "{}", out.stderr);
    let requests = env.server.chat_requests();
    let third = requests[2].last_message_text();
    assert!(
        third.contains(
            "[oi: your change went into the block that failed (a line put before line 5)"
        ),
        "{third}"
    );
    // The spliced block failed past the fragment's line; the second send
    // ran alone, and its one line ran fine.
    assert!(third.contains("ZeroDivisionError"), "{third}");
    let fourth = requests[3].last_message_text();
    assert!(
        fourth.contains("(the code ran without errors and printed nothing)"),
        "{fourth}"
    );
    assert!(!fourth.contains("went into the block"), "{fourth}");
}

#[tokio::test]
async fn a_small_models_block_of_prose_where_code_must_run_is_asked_again_not_run() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    env.server
        .push(Reply::text("```python\nraise KeyError('name')\n```"))
        // Held to code after the failure, the answer put in a block.
        .push(Reply::text(
            "```bash\nAll files have been renamed to lowercase names.\n```",
        ))
        .push(Reply::text(
            "```python\n_ = open('out.txt', 'w').write('ok')\n```",
        ))
        .push(Reply::text("Done."));
    let out = env.exec(&["-y", "Write ok to out.txt."]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("out.txt")).unwrap(),
        "ok"
    );
    let requests = env.server.chat_requests();
    assert_eq!(requests.len(), 4, "{}", out.stderr);
    // The same request again, more freely sampled; the prose never ran.
    assert_eq!(requests[2].body["temperature"], 0.7, "{}", requests[2].body);
    assert_eq!(
        requests[2].last_message_text(),
        requests[1].last_message_text()
    );
    assert!(
        out.stderr.contains("no code where a step was asked for"),
        "{}",
        out.stderr
    );
    let all: String = requests.iter().map(|r| r.last_message_text()).collect();
    assert!(!all.contains("command not found"), "{all}");
}

#[tokio::test]
async fn a_small_model_is_told_what_is_wrong_with_a_result_as_it_is_shown() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    let cwd = env.cwd.path();
    std::fs::write(
        cwd.join("access.log"),
        "10.0.0.1 - - [02/Nov/2026:10:00:00 +0000] \"GET /a HTTP/1.1\" 500 12\n10.0.0.2 - - [02/Nov/2026:10:01:00 +0000] \"GET /b HTTP/1.1\" 200 500\n",
    )
    .unwrap();
    env.server
        .push(Reply::text(
            "```python\nimport re\nn = sum(1 for l in open('access.log') if re.search(r'\"HTTP/1.1\" (500)', l))\n_ = open('errors.txt', 'w').write(str(n))\n```",
        ))
        .push(Reply::text("Done."))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "How many requests in access.log failed with status 500? Write the number to errors.txt.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let told = env.server.chat_requests()[1].last_message_text();
    assert!(
        told.contains("[oi: the pattern `\"HTTP/1.1\" (500)` in your code matches nothing in `access.log`, so it found nothing. A line of `access.log` reads:\n10.0.0.1 - - "),
        "{told}"
    );
    // With the pattern one stray character away that matches.
    assert!(
        told.contains("Without one `\"`, `HTTP/1.1\" (500)` does match: `n = sum(1 for l in open('access.log') if re.search(r'HTTP/1.1\" (500)', l))`."),
        "{told}"
    );

    // A result that lost values its input had, named as it is shown.
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    std::fs::write(
        env.cwd.path().join("events.csv"),
        "event,date\nKickoff,2026-01-15\nReview,03/02/2026\nRetro,2026-04-01\n",
    )
    .unwrap();
    env.server
        .push(Reply::text(
            "```python\nrows = open('events.csv').read().split()\nout = [r if '/' not in r else r.split(',')[0] + ',' for r in rows]\n_ = open('events_iso.csv', 'w').write('\\n'.join(out) + '\\n')\n```",
        ))
        .push(Reply::text("Done."))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "Write events_iso.csv with every date of events.csv as YYYY-MM-DD.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let told = env.server.chat_requests()[1].last_message_text();
    assert!(
        told.contains("It is not right yet: the `date` column of `events_iso.csv` misses 1 of its 3 values where `events.csv` misses 0"),
        "{told}"
    );
}

#[tokio::test]
async fn a_small_model_is_told_its_search_copied_whole_rows_where_one_cell_was_asked() {
    // `grep` copies each matching line of a report whole; the task asks
    // for one column of it: named, with how code takes that cell.
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    fs_err::write(
        env.cwd.path().join("report.txt"),
        "Nightly build report\n\nID      Job              Status    Duration\n------  ---------------  --------  --------\nJ-101   compile          PASSED    00:04:10\nJ-102   unit tests       FAILED    00:12:55\nJ-104   integration      FAILED    00:30:02\n",
    )
    .unwrap();
    env.server
        .push(Reply::text(
            "```bash\ngrep FAILED report.txt > failed.txt\n```",
        ))
        .push(Reply::text("Done."))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "Write the IDs of the jobs in report.txt whose status is FAILED, one per line, to failed.txt.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let told = env.server.chat_requests()[1].last_message_text();
    assert!(
        told.contains(
            "the line `J-102   unit tests       FAILED    00:12:55` of `failed.txt` is a whole row of `report.txt`, where the task asks for its `ID` values, one per line: write only that cell of each row (`cells = re.split(r'\\s{2,}', line.strip())`, then `cells[0]`)"
        ),
        "{told}"
    );
}

#[tokio::test]
async fn a_small_model_is_told_a_result_breaks_the_form_asked_and_a_script_keeps_its_main() {
    // A header other than the one the task gives, and rows where it asks
    // for one value per line: named as the result is shown.
    for (task, code, told) in [
        (
            "Write totals.csv with the header name,total: the sum per name.",
            "_ = open('totals.csv', 'w').write('name,amount\\nAna,4.5\\n')",
            "It is not right yet: `totals.csv` begins with `name,amount` where the task asks for the header `name,total`.",
        ),
        (
            "Write the names of the 2 largest cities, one per line, to top.txt.",
            "_ = open('top.txt', 'w').write('Hill Valley,2301005\\nRiverton,1204331\\n')",
            "It is not right yet: each line of `top.txt` holds more than one value (`Hill Valley,2301005`) where the task asks for one per line.",
        ),
        (
            "Write the package names in lower case, one per line, to names.txt.",
            "_ = open('names.txt', 'w').write('\\nflask\\nNumPy\\n')",
            "It is not right yet: line 1 of `names.txt` is blank, among its values, where the task asks for one per line: leave out empty values (`if value.strip()`) before writing; and `names.txt` has `NumPy` where the task asks for lower case: lower each value before writing it (`value.lower()`; pandas: `df[column].str.lower()`).",
        ),
    ] {
        let env = TestEnv::new().await;
        small_model_env(&env, "qwen2.5-coder:1.5b");
        env.server
            .push(Reply::text(&format!("```python\n{code}\n```")))
            .push(Reply::text("Done."))
            .push(Reply::text("Done."));
        let out = env.exec(&["-y", task]).await;
        assert_eq!(out.code, 0, "{out:?}");
        let seen = env.server.chat_requests()[1].last_message_text();
        assert!(seen.contains(told), "{seen}");
    }

    // A script rewritten without the line that ran it: saved as the
    // script with that line put back, and run by the real Python.
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    fs_err::write(
        env.cwd.path().join("shout.py"),
        "import sys\n\ndef main(text):\n    print(text)\n\nmain(sys.argv[1])\n",
    )
    .unwrap();
    env.server
        .push(Reply::text(
            "Fixed:\n```python\nimport sys\n\ndef main(text):\n    print(text.upper())\n```",
        ))
        .push(Reply::text("Done."))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "shout.py should print its argument in capitals. Fix shout.py.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("shout.py")).unwrap(),
        "import sys\n\ndef main(text):\n    print(text.upper())\n\nmain(sys.argv[1])\n"
    );
    let seen = env.server.chat_requests()[1].last_message_text();
    assert!(
        seen.contains("main(sys.argv[1])") && seen.contains("IndexError"),
        "the script ran its main: {seen}"
    );
    assert!(!seen.contains("never runs it"), "{seen}");
    assert!(
        out.stderr
            .contains("saved as that file, with its line `main(sys.argv[1])` that runs it kept"),
        "{}",
        out.stderr
    );

    // A shell script's new version fenced as `python`: it runs in the
    // shell, so it is saved as the shell script it fixes.
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    fs_err::write(
        env.cwd.path().join("count.sh"),
        "n=$(ls *.txt | wc -l\necho $n\n",
    )
    .unwrap();
    fs_err::write(env.cwd.path().join("a.txt"), "").unwrap();
    env.server
        .push(Reply::text(
            "Fixed:\n```python\nn=$(ls *.txt | wc -l)\necho $n\n```",
        ))
        .push(Reply::text("Done."))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "count.sh should print how many .txt files are in this folder, but it fails. Fix it.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("count.sh")).unwrap(),
        "n=$(ls *.txt | wc -l)\necho $n\n"
    );
}

#[tokio::test]
async fn a_small_model_sees_a_folder_it_renamed_in_and_a_result_still_wrong_is_named_twice() {
    // A folder the task names, listed again after a run renamed in it.
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    let photos = env.cwd.path().join("photos");
    std::fs::create_dir(&photos).unwrap();
    std::fs::write(photos.join("My Photo.JPEG"), "x").unwrap();
    env.server
        .push(Reply::text(
            "```bash\nmv 'photos/My Photo.JPEG' photos/my_photo.JPEG\n```",
        ))
        .push(Reply::text("Done."))
        .push(Reply::text(
            "```bash\nmv photos/my_photo.JPEG photos/my_photo.jpeg\n```",
        ))
        .push(Reply::text("Done."));
    let out = env
        .exec(&["-y", "Rename the files in photos/ to lowercase names."])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(photos.join("my_photo.jpeg").is_file());
    // The capitals left are named as the listing is shown, and before the
    // task ends; once they are gone, the model is asked to check itself.
    let requests = env.server.chat_requests();
    let told = requests[1].last_message_text();
    assert!(
        told.contains("[oi: after that run, `photos/` holds 1 entry: `my_photo.JPEG`. It is not right yet: `my_photo.JPEG` in `photos/` has capital letters where the task asks for lowercase names (lowercase a name with `tr '[:upper:]' '[:lower:]'` in shell, `.lower()` in Python).]"),
        "{told}"
    );
    let ending = requests[2].last_message_text();
    assert!(
        ending.contains("[oi: before you finish: `my_photo.JPEG` in `photos/` has capital letters where the task asks for lowercase names"),
        "{ending}"
    );
    let fixed = requests[3].last_message_text();
    assert!(
        fixed.contains("[oi: after that run, `photos/` holds 1 entry: `my_photo.jpeg`. Check that every name is exactly what the task asks for.]"),
        "{fixed}"
    );
    assert_eq!(requests.len(), 4);

    // A result still labelled after a run that changed nothing: named a
    // second time, then the model's answer stands.
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    std::fs::write(env.cwd.path().join("numbers.txt"), "10\n41\n").unwrap();
    env.server
        .push(Reply::text(
            "```python\n_ = open('mean.txt', 'w').write('Mean: 25.5')\n```",
        ))
        .push(Reply::text("The task is done."))
        .push(Reply::text(
            "```python\nprint(open('mean.txt').read())\n```",
        ))
        .push(Reply::text("The task is done."))
        .push(Reply::text(
            "```python\nprint(open('numbers.txt').read())\n```",
        ))
        .push(Reply::text("The task is done."));
    let out = env
        .exec(&["-y", "Write the mean of numbers.txt to mean.txt"])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let requests = env.server.chat_requests();
    assert_eq!(requests.len(), 6, "checked twice, then it may end");
    assert!(
        requests[2]
            .last_message_text()
            .contains("[oi: before you finish: `mean.txt` has words around its value (`Mean: 25.5`) where the task likely asks for the value alone (`25.5`, as `open('mean.txt', 'w').write('25.5\\n')` writes it)"),
        "{:?}",
        requests[2].last_message_text()
    );
    let again = requests[4].last_message_text();
    assert!(
        again.contains("[oi: still not done: `mean.txt` has words around its value (`Mean: 25.5`)"),
        "{again}"
    );
}

#[tokio::test]
async fn the_line_a_note_said_to_change_left_as_the_model_ends_runs_changed_once() {
    // Told twice which line writes words around the value, a small model
    // ends each time without changing it: oi runs its last code once more
    // with the change, shows it the result, and then lets it end.
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    std::fs::write(env.cwd.path().join("ages.txt"), "31\n40\n").unwrap();
    let code = "ages = [int(l) for l in open('ages.txt')]\naverage = sum(ages) / len(ages)\nwith open('average.txt', 'w') as f:\n    f.write(f\"The average age is: {average}\")";
    env.server
        .push(Reply::text(&format!("```python\n{code}\n```")))
        .push(Reply::text("The task is done."))
        .push(Reply::text("The average age is 35.5, so the task is done."))
        .push(Reply::text("The task is done."));
    let out = env
        .exec(&[
            "-y",
            "Write the average of the ages in ages.txt to average.txt.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        std::fs::read_to_string(env.cwd.path().join("average.txt")).unwrap(),
        "35.5"
    );
    let requests = env.server.chat_requests();
    assert_eq!(requests.len(), 4, "{requests:?}");
    assert!(
        requests[2]
            .last_message_text()
            .contains("[oi: before you finish: `average.txt` has words around its value"),
        "{:?}",
        requests[2].last_message_text()
    );
    let ran = requests[3].last_message_text();
    assert!(ran.contains("35.5"), "{ran}");
    assert!(
        ran.contains("[oi: you ended with `f.write(f\"The average age is: {average}\")` still in your code; oi ran your last code again with it as `f.write(f\"{average}\")`, as the note said.]"),
        "{ran}"
    );
    assert!(
        format!("{}{}", out.stdout, out.stderr)
            .contains("still in its last code; oi runs that code again with the change"),
        "{out:?}"
    );
}

#[tokio::test]
async fn the_line_a_note_said_to_change_sent_again_runs_changed() {
    // Told which line writes words around the value, a small model sends
    // the same code again: oi runs it with that line changed.
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:0.5b");
    std::fs::write(env.cwd.path().join("ages.txt"), "31\n40\n").unwrap();
    let code = "```python\nages = [int(l) for l in open('ages.txt')]\naverage = sum(ages) / len(ages)\nwith open('average.txt', 'w') as f:\n    f.write(f\"The average age is: {average}\")\n```";
    env.server
        .push(Reply::text(code))
        .push(Reply::text(code))
        .push(Reply::text("The average is 35.5."));
    let out = env
        .exec(&[
            "-y",
            "Write the average of the ages in ages.txt to average.txt.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        std::fs::read_to_string(env.cwd.path().join("average.txt")).unwrap(),
        "35.5"
    );
    let requests = env.server.chat_requests();
    let told = requests[1].last_message_text();
    assert!(
        told.contains("(in your code, `f.write(f\"The average age is: {average}\")` becomes `f.write(f\"{average}\")`)"),
        "{told}"
    );
    let ran = requests[2].last_message_text();
    assert!(
        ran.contains("[oi: your code still had `f.write(f\"The average age is: {average}\")`; oi ran it as `f.write(f\"{average}\")`, as the note said.]"),
        "{ran}"
    );
    assert!(
        out.stderr.contains("oi runs it changed as the note said")
            || out.stdout.contains("oi runs it changed as the note said"),
        "{out:?}"
    );

    // Only the changed line, which alone would write to a closed file: the
    // block it belongs in runs whole with it.
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:0.5b");
    std::fs::write(env.cwd.path().join("ages.txt"), "31\n40\n").unwrap();
    env.server
        .push(Reply::text(code))
        .push(Reply::text("```python\nf.write(f\"{average}\")\n```"))
        .push(Reply::text("The average is 35.5."));
    let out = env
        .exec(&[
            "-y",
            "Write the average of the ages in ages.txt to average.txt.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        std::fs::read_to_string(env.cwd.path().join("average.txt")).unwrap(),
        "35.5"
    );
    let ran = env.server.chat_requests()[2].last_message_text();
    assert!(
        ran.contains("[oi: your line `f.write(f\"{average}\")` went into the block that had `f.write(f\"The average age is: {average}\")` in its place, and oi ran that block whole.]"),
        "{ran}"
    );
}

#[tokio::test]
async fn a_small_model_ending_after_a_failed_run_is_told_once() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    env.server
        .push(Reply::text("```python\nraise KeyError('amount')\n```"))
        .push(Reply::text("The total is written."))
        .push(Reply::text("It is done."));
    let out = env.exec(&["-y", "Add up the amounts."]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let requests = env.server.chat_requests();
    assert_eq!(requests.len(), 3, "told once, then it may end");
    let told = requests[2].last_message_text();
    assert!(
        told.contains("[oi: before you finish: your last run failed (KeyError: 'amount')"),
        "{told}"
    );
    // The replies to the failure and to the note must run code: a small
    // model free to answer explains the error, or says "done" whatever the
    // note says.
    for request in &requests[1..] {
        let grammar = request.body["grammar"].as_str().unwrap_or_default();
        assert!(
            grammar.starts_with("root ::= (note \"\\n\")? \"```\" tag "),
            "{grammar}"
        );
    }
}

#[tokio::test]
async fn a_small_model_that_printed_instead_of_writing_the_file_is_told_twice() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:0.5b");
    env.server
        .push(Reply::text("```python\nprint('hi')\n```"))
        .push(Reply::text("Done."))
        .push(Reply::text("Done, it printed hi."))
        .push(Reply::text(
            "```python\nopen('hello.txt', 'w').write('hi\\n')\n```",
        ))
        .push(Reply::text("hello.txt holds hi."));
    let out = env.exec(&["-y", "Write hi to hello.txt"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("hello.txt")).unwrap(),
        "hi\n"
    );
    let requests = env.server.chat_requests();
    assert_eq!(requests.len(), 5);
    assert!(
        requests[2]
            .last_message_text()
            .contains("`hello.txt`, which does not exist yet"),
        "{}",
        requests[2].last_message_text()
    );
    let again = requests[3].last_message_text();
    assert!(
        again.contains("[oi: before you finish: `hello.txt` still does not exist"),
        "{again}"
    );
    let grammar = requests[3].body["grammar"].as_str().unwrap_or_default();
    assert!(
        grammar.starts_with("root ::= (note \"\\n\")? \"```\" tag "),
        "{grammar}"
    );
}

#[tokio::test]
async fn the_run_that_lacked_a_module_runs_again_after_each_install() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    env.server
        .push(Reply::text(
            "```python\nimport sys\nsys.path.insert(0, '.')\nimport mymod\nimport othermod\n```",
        ))
        // "Installs" that make each module and say so as pip does.
        .push(Reply::text(
            "```bash\necho 'print(\"mymod loaded\")' > mymod.py && echo 'Successfully installed mymod-1.0'\n```",
        ))
        .push(Reply::text(
            "```bash\necho 'print(\"othermod loaded\")' > othermod.py && echo 'Successfully installed othermod-1.0'\n```",
        ))
        .push(Reply::text("Installed."));
    let out = env.exec(&["-y", "Use mymod."]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let rerun =
        "[oi: the install worked, so oi ran again the code that had failed for lack of it:]";
    let first = env.server.chat_requests()[2].last_message_text();
    assert!(
        first.contains("Successfully installed mymod-1.0"),
        "{first}"
    );
    assert!(first.contains(rerun), "{first}");
    assert!(
        first.contains("mymod loaded") && first.contains("No module named 'othermod'"),
        "{first}"
    );
    // It lacked the next one: run again after that install too.
    let second = env.server.chat_requests()[3].last_message_text();
    assert!(second.contains(rerun), "{second}");
    assert!(second.contains("othermod loaded"), "{second}");
}

#[tokio::test]
async fn failing_variations_of_one_idea_start_a_small_models_task_over_once_then_stop_it() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    let variation = |column: &str| {
        format!(
            "```python\nimport csv\nrows = [{{'total': 1, 'region': 'north'}}]\nfor row in rows:\n    print(row['{column}'])\n```"
        )
    };
    for column in ["Amount", "amount", "AMOUNT", "amount_usd"] {
        env.server.push(Reply::text(&variation(column)));
    }
    // Started over, the model goes the same way again.
    for column in ["AmOunt", "amount_eur", "AMOUNT_USD", "Amount_total"] {
        env.server.push(Reply::text(&variation(column)));
    }
    let out = env.exec(&["-y", "Print the amount."]).await;
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("4 variations of the same python code failed the same way (KeyError); oi starts the task over once from its message"),
        "{}",
        out.stderr
    );
    let requests = env.server.chat_requests();
    let warned = requests[3].last_message_text();
    assert!(
        warned.contains("3 small variations of the same code failed the same way"),
        "{warned}"
    );
    // The fifth request is the task's message alone, sampled more freely;
    // the one after is greedy again.
    let fifth = &requests[4];
    let users: Vec<_> = fifth
        .messages()
        .iter()
        .filter(|m| m["role"] != "system")
        .collect();
    assert_eq!(users.len(), 1, "{users:?}");
    assert!(fifth.last_message_text().contains("Print the amount."));
    assert_eq!(fifth.body["temperature"], 0.7);
    assert_eq!(requests[5].body["temperature"], 0.0);
    // Only once: going in circles again stops the task.
    assert!(
        out.stderr.contains("the task was going in circles"),
        "{}",
        out.stderr
    );
    assert_eq!(
        out.stderr.matches("oi starts the task over").count(),
        1,
        "{}",
        out.stderr
    );
    assert_eq!(requests.len(), 8, "{requests:?}");
}

#[tokio::test]
async fn a_small_model_started_over_finishes_from_the_task_message_alone() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    std::fs::write(
        env.cwd.path().join("sales.csv"),
        "region,total\nnorth,3\nsouth,4\n",
    )
    .unwrap();
    for column in ["Amount", "amount", "AMOUNT", "amount_usd"] {
        env.server.push(Reply::text(&format!(
            "```python\nimport csv\nrows = list(csv.DictReader(open('sales.csv')))\nprint(sum(int(r['{column}']) for r in rows))\n```"
        )));
    }
    env.server
        .push(Reply::text("```python\nimport csv\nrows = list(csv.DictReader(open('sales.csv')))\nopen('sum.txt', 'w').write(str(sum(int(r['total']) for r in rows)))\n```"))
        .push(Reply::text("The sum is in sum.txt."));
    let out = env
        .exec(&["-y", "Write the sum of the totals in sales.csv to sum.txt."])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        std::fs::read_to_string(env.cwd.path().join("sum.txt")).unwrap(),
        "7"
    );
    let requests = env.server.chat_requests();
    let restart = &requests[4];
    assert_eq!(restart.body["temperature"], 0.7);
    let users: Vec<_> = restart
        .messages()
        .iter()
        .filter(|m| m["role"] != "system")
        .collect();
    assert_eq!(users.len(), 1, "{users:?}");
    // The first look is made again, from the files as they are, in place
    // of the first one.
    let message = users[0].to_string();
    assert_eq!(
        message
            .matches("how the files the task names begin")
            .count(),
        1,
        "{message}"
    );
    assert!(
        restart.last_message_text().contains("region,total"),
        "{}",
        restart.last_message_text()
    );
    // The code that failed before is not shown, but a failure of the
    // first try run again is still known as one.
    assert!(!restart.last_message_text().contains("KeyError"));
    let last = requests.last().unwrap();
    assert!(!format!("{:?}", last.messages()).contains("'Amount'"));
}

#[tokio::test]
async fn a_small_model_started_over_after_a_compaction_gets_the_task_without_the_summary() {
    use crate::context::SUMMARY_NEEDLE;
    let env = TestEnv::new().await;
    // A window where a few long outputs call for a summary.
    env.write_config(&format!(
        "model_provider = \"mock\"\nmodel = \"qwen2.5-coder:1.5b\"\n\n[model_providers.mock]\nbase_url = \"{}\"\n\n[models.\"qwen2.5-coder:1.5b\"]\ncontext_window = 3000\n",
        env.server.base_url()
    ));
    env.server.answer_when(
        SUMMARY_NEEDLE,
        Reply::text("Summary: reports one to three were printed in full."),
    );
    for i in 1..=4 {
        env.server.push(Reply::text(&format!(
            "```python\nprint('report {i}: ' + 'x' * 2500)\n```"
        )));
    }
    for column in ["Amount", "amount", "AMOUNT", "amount_usd"] {
        env.server.push(Reply::text(&format!(
            "```python\nrows = [{{'total': 1}}]\nfor row in rows:\n    print(row['{column}'])\n```"
        )));
    }
    env.server.push(Reply::text("Done."));
    let task = "Print the four reports, then the amount.";
    let out = env.exec(&["-y", task]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("Done."), "{out:?}");
    assert!(
        out.stderr.contains("oi starts the task over once"),
        "{}",
        out.stderr
    );
    let requests = env.server.chat_requests();
    let summarized = requests
        .iter()
        .position(|r| r.body.to_string().contains(SUMMARY_NEEDLE))
        .expect("no summary was asked for");
    let restart = requests
        .iter()
        .position(|r| r.body["temperature"] == 0.7)
        .expect("no request after the start-over");
    assert!(summarized < restart, "{summarized} vs {restart}");
    // Before the start-over the task's message held the summary.
    assert!(
        requests[summarized + 1..restart].iter().any(|r| r
            .body
            .to_string()
            .contains("reports one to three were printed")),
        "the summary was never sent"
    );
    // Started over: the task's message alone, word for word, without the
    // summary or what followed it.
    let users: Vec<_> = requests[restart]
        .messages()
        .iter()
        .filter(|m| m["role"] != "system")
        .collect();
    assert_eq!(users.len(), 1, "{users:?}");
    let message = users[0].to_string();
    assert!(message.contains(task), "{message}");
    for gone in [
        "reports one to three were printed",
        "The current task, as the user gave it",
        "[What followed:]",
        "xxxxxxxxxx",
        "KeyError",
    ] {
        assert!(!message.contains(gone), "{gone:?} in {message}");
    }
}

#[tokio::test]
async fn a_reply_that_repeats_itself_is_stopped_asked_again_then_cut_and_the_model_told() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:0.5b");
    let runaway = format!("The numbers are: {}", "0, ".repeat(2000));
    for _ in 0..3 {
        env.server.push(Reply::text(&runaway).chunk_chars(16));
    }
    env.server.push(Reply::text("Done."));
    let out = env.exec(&["-y", "What are the numbers?"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("the model kept repeating itself"),
        "{}",
        out.stderr
    );
    let requests = env.server.chat_requests();
    assert_eq!(requests.len(), 4);
    // Dropped, and the same request asked again more freely, twice.
    for (request, temperature) in requests[1..3].iter().zip([0.7, 1.0]) {
        assert_eq!(request.body["messages"], requests[0].body["messages"]);
        assert_eq!(request.body["temperature"], temperature);
    }
    assert!(
        out.stderr.contains(
            "the reply fell into repeating itself and was dropped; asking once more, sampling more freely (temperature 0.7)"
        ),
        "{}",
        out.stderr
    );
    // Then the cut reply is kept and the model told.
    let messages = requests[3].body["messages"].as_array().unwrap();
    let cut = messages[messages.len() - 2]["content"].as_str().unwrap();
    assert_eq!(cut, "The numbers are: 0, 0,");
    assert!(
        requests[3]
            .last_message_text()
            .starts_with("[oi: your reply kept repeating `0,`"),
        "{}",
        requests[3].last_message_text()
    );
}

#[tokio::test]
async fn a_small_models_typed_guess_is_asked_again_then_called_a_guess_and_the_file_asked_for() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:0.5b");
    for (folder, size) in [("logs", 20_000), ("data", 100)] {
        std::fs::create_dir(env.cwd.path().join(folder)).unwrap();
        std::fs::write(env.cwd.path().join(folder).join("f"), "x".repeat(size)).unwrap();
    }
    let guess = "The biggest is data.\n```bash\necho data\n```";
    for _ in 0..3 {
        env.server.push(Reply::text(guess));
    }
    env.server
        .push(Reply::text("The answer is data."))
        .push(Reply::text(
            "```bash\ndu -s */ | sort -n | tail -1 | cut -f2 | tr -d / > biggest.txt\n```",
        ))
        .push(Reply::text("The biggest is logs."));
    let out = env
        .exec(&[
            "-y",
            "Which subfolder of this folder takes the most disk space? Write its name to biggest.txt.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let requests = env.server.chat_requests();
    assert_eq!(requests.len(), 6, "{}", out.stderr);
    // Asked again twice, more freely; then it runs and is called a guess.
    assert_eq!(requests[1].body["temperature"], 0.7);
    assert_eq!(requests[2].body["temperature"], 1.0);
    assert!(
        out.stderr.contains("a value typed into a print"),
        "{}",
        out.stderr
    );
    let after_run = requests[3].body["messages"].to_string();
    assert!(
        after_run.contains("that code only prints `data`, a value typed into it"),
        "{after_run}"
    );
    // A question that says to write a file is not done by an answer.
    let told = requests[4].last_message_text();
    assert!(
        told.contains("the task asks you to write `biggest.txt`, which does not exist yet"),
        "{told}"
    );
    assert_eq!(
        std::fs::read_to_string(env.cwd.path().join("biggest.txt")).unwrap(),
        "logs\n"
    );
}

#[tokio::test]
async fn a_call_that_failed_before_its_function_was_defined_runs_again_once_it_is() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    std::fs::write(env.cwd.path().join("port.txt"), "8000\n").unwrap();
    env.server
        .push(Reply::text("```python\nset_port('port.txt', 5433)\n```"))
        .push(Reply::text(
            "The function is not defined. Here it is:\n```python\ndef set_port(path, port):\n    open(path, 'w').write(f'{port}\\n')\n```",
        ))
        .push(Reply::text("The port is set."));
    let out = env.exec(&["-y", "Set the port in port.txt to 5433."]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        std::fs::read_to_string(env.cwd.path().join("port.txt")).unwrap(),
        "5433\n"
    );
    let told = env.server.chat_requests()[2].last_message_text();
    assert!(
        told.contains("[oi: that defined `set_port`, so oi ran again the code that had failed for lack of it:]"),
        "{told}"
    );
}

#[tokio::test]
async fn a_small_model_gets_the_split_of_a_report_aligned_in_columns_and_its_rows() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    fs_err::write(
        env.cwd.path().join("report.txt"),
        "Nightly build report\n\nID      Job              Status    Duration\n------  ---------------  --------  --------\nJ-101   compile          PASSED    00:04:10\nJ-102   unit tests       FAILED    00:12:55\nJ-104   integration      FAILED    00:30:02\n\nNotes: J-103 was FAILED yesterday.\n",
    )
    .unwrap();
    // The model copies the split the look gives; the real kernel runs it.
    env.server
        .push(Reply::text(
            "```python\nimport re\nids = []\nfor line in open('report.txt'):\n    cells = re.split(r'\\s{2,}', line.strip())\n    if len(cells) == 4 and cells[2] == 'FAILED':\n        ids.append(cells[0])\n_ = open('failed.txt', 'w').write('\\n'.join(ids) + '\\n')\n```",
        ))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "Write the IDs of the jobs in report.txt whose status is FAILED, one per line, to failed.txt.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let first = env.server.chat_requests()[0].last_message_text();
    assert!(
        first.contains("In it a table with the columns `ID`, `Job`, `Status`, `Duration`, separated by two or more spaces. Split a line into its cells with `import re`, `cells = re.split(r'\\s{2,}', line.strip())`: its 3 rows are the lines with `len(cells) == 4`, after the header and the `---` line. Some cells hold a space (`unit tests`)"),
        "{first}"
    );
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("failed.txt")).unwrap(),
        "J-102\nJ-104\n"
    );
}

#[tokio::test]
async fn a_small_model_is_told_a_result_names_every_file_where_some_are_asked() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    let docs = env.cwd.path().join("docs");
    fs_err::create_dir(&docs).unwrap();
    for (name, text) in [("a.txt", "same"), ("b.txt", "same"), ("c.txt", "other")] {
        fs_err::write(docs.join(name), text).unwrap();
    }
    let every = "import os\n_ = open('dups.txt', 'w').write('\\n'.join(sorted(os.listdir('docs'))) + '\\n')";
    let some = "import os\nfrom collections import defaultdict\nby = defaultdict(list)\nfor n in os.listdir('docs'):\n    by[open(os.path.join('docs', n)).read()].append(n)\n_ = open('dups.txt', 'w').write(''.join(n + '\\n' for ns in by.values() if len(ns) > 1 for n in sorted(ns)))";
    env.server
        .push(Reply::text(&format!("```python\n{every}\n```")))
        .push(Reply::text(&format!("```python\n{some}\n```")))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "Some files in docs/ have the same contents as another file there. Write the names of all such files, sorted, one per line, to dups.txt.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let requests = env.server.chat_requests();
    let told = requests[1].last_message_text();
    assert!(
        told.contains("It is not right yet: `dups.txt` names every one of the 3 files in `docs/`, where the task asks only for some of them: the test your code picks them by passes for all of them (check what it compares)."),
        "{told}"
    );
    let after = requests[2].last_message_text();
    assert!(
        !after.contains("names every one") && after.contains("Check that it holds exactly"),
        "{after}"
    );
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("dups.txt")).unwrap(),
        "a.txt\nb.txt\n"
    );
}

#[tokio::test]
async fn a_small_model_is_told_a_table_lost_the_columns_the_task_keeps() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    fs_err::write(
        env.cwd.path().join("contacts.csv"),
        "name,phone,city\nAna Ruiz,(555) 123-4567,Austin\nBen Cho,555.123.4567,Boston\nCara Diaz,+1 555 987 6543,Chicago\n",
    )
    .unwrap();
    let read = "import csv, re\nrows = list(csv.DictReader(open('contacts.csv')))\nfor r in rows:\n    r['phone'] = re.sub(r'\\D', '', r['phone'])[-10:]";
    let one_column = format!(
        "{read}\nw = csv.writer(open('contacts_clean.csv', 'w', newline=''))\nw.writerow(['phone'])\nw.writerows([[r['phone']] for r in rows])"
    );
    let whole = format!(
        "{read}\nw = csv.DictWriter(open('contacts_clean.csv', 'w', newline=''), fieldnames=['name', 'phone', 'city'])\nw.writeheader()\nw.writerows(rows)"
    );
    env.server
        .push(Reply::text(&format!("```python\n{one_column}\n```")))
        .push(Reply::text(&format!("```python\n{whole}\n```")))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "Write contacts_clean.csv with the same columns as contacts.csv but every phone number written as its 10 digits only.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let requests = env.server.chat_requests();
    let told = requests[1].last_message_text();
    assert!(
        told.contains("`contacts_clean.csv` has only `phone` of the columns of `contacts.csv`, where the task keeps its columns: `name`, `city` are missing."),
        "{told}"
    );
    let after = requests[2].last_message_text();
    assert!(
        !after.contains("where the task keeps its columns"),
        "{after}"
    );
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("contacts_clean.csv")).unwrap(),
        "name,phone,city\r\nAna Ruiz,5551234567,Austin\r\nBen Cho,5551234567,Boston\r\nCara Diaz,5559876543,Chicago\r\n"
    );
}

#[tokio::test]
async fn a_small_model_typing_a_results_lines_as_a_block_is_told_to_build_them() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    fs_err::write(
        env.cwd.path().join("guide.md"),
        "# Guide\n\n## Install\n\n### On Linux\n\n## Usage\n",
    )
    .unwrap();
    let build = "lines = []\nfor line in open('guide.md'):\n    level = len(line) - len(line.lstrip('#'))\n    if level in (2, 3):\n        lines.append('  ' * (level - 2) + '- ' + line.strip('#').strip())\n_ = open('toc.md', 'w').write('\\n'.join(lines) + '\\n')";
    env.server
        .push(Reply::text(
            "```bash\n# Guide\n- Install\n  - On Linux\n- Usage\n```",
        ))
        .push(Reply::text(&format!("```python\n{build}\n```")))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "Write toc.md, a table of contents for guide.md: one line per level-2 and level-3 heading in order, a level-2 heading as \"- Title\" and a level-3 heading as \"  - Title\".",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let requests = env.server.chat_requests();
    let told = requests[1].last_message_text();
    assert!(
        told.contains("[oi: that block is not shell: it is lines typed as the text of `toc.md`, so they ran as commands and `toc.md` was not written. Write Python that reads `guide.md` and builds those lines from what it reads"),
        "{told}"
    );
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("toc.md")).unwrap(),
        "- Install\n  - On Linux\n- Usage\n"
    );
}

#[tokio::test]
async fn a_small_models_result_with_a_line_twice_where_each_once_is_asked_is_made_again_by_oi() {
    let env = TestEnv::new().await;
    let code = "clients = [c.strip() for c in open('clients.txt') if c.strip()]\nclients.sort(key=lambda x: tuple(map(int, x.split('.'))))\nwith open('ips_sorted.txt', 'w') as f:\n    f.write('\\n'.join(clients) + '\\n')";
    let told = told_after_one_block(
        &env,
        &[("clients.txt", "10.0.0.10\n192.168.1.2\n10.0.0.9\n10.0.0.10\n")],
        code,
        "clients.txt lists client IP addresses, one per line, some repeated. Write ips_sorted.txt with each address once, in numeric order.",
    )
    .await;
    assert!(
        told.contains("[oi: `ips_sorted.txt` had `10.0.0.10` twice where the task asks for each once, so oi ran your code again with `f.write('\\n'.join(clients) + '\\n')` written as `f.write('\\n'.join(dict.fromkeys(clients)) + '\\n')`, which keeps the first of each value, in order:]"),
        "{told}"
    );
    assert!(!told.contains("twice (lines"), "{told}");
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("ips_sorted.txt")).unwrap(),
        "10.0.0.9\n10.0.0.10\n192.168.1.2\n"
    );
}

#[tokio::test]
async fn a_small_models_loop_writing_a_row_twice_where_each_once_is_asked_is_run_again_by_oi() {
    let env = TestEnv::new().await;
    // Rows gathered from both files, sorted, written one by one: the
    // item both files hold comes twice.
    let code = "import csv, json\nrows = []\nfor name in ['north.json', 'south.json']:\n    for item in json.load(open(name)):\n        rows.append([item['sku'], item['qty']])\nrows.sort()\nwith open('stock.csv', 'w', newline='') as f:\n    writer = csv.writer(f)\n    writer.writerow(['sku', 'qty'])\n    for row in rows:\n        writer.writerow(row)";
    let told = told_after_one_block(
        &env,
        &[
            (
                "north.json",
                r#"[{"sku": "B-2", "qty": 4}, {"sku": "A-1", "qty": 2}]"#,
            ),
            (
                "south.json",
                r#"[{"sku": "A-1", "qty": 2}, {"sku": "C-3", "qty": 1}]"#,
            ),
        ],
        code,
        "north.json and south.json list the stock of two stores, which overlap. Write stock.csv with the columns sku,qty, each item once, sorted by sku.",
    )
    .await;
    assert!(
        told.contains("[oi: `stock.csv` had `A-1,2` twice where the task asks for each once, so oi ran your code again with `for row in rows:` written as `for row in {repr(v): v for v in rows}.values():`, which keeps the first of each value, in order:]"),
        "{told}"
    );
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("stock.csv")).unwrap(),
        "sku,qty\r\nA-1,2\r\nB-2,4\r\nC-3,1\r\n"
    );
}

#[tokio::test]
async fn a_small_models_table_of_rows_no_line_passed_the_test_for_is_told_the_list_stayed_empty() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    // The kernel runs the Python that has pandas.
    let Some(python) = oi_testkit::pip_package("pandas", "pandas") else {
        return;
    };
    let kernel = format!("languages.python.command=[{}]", json!(python));
    fs_err::write(
        env.cwd.path().join("jobs.log"),
        "job=build took=12s\njob=test took=30s\njob=build took=8s\n",
    )
    .unwrap();
    // The job's name is read from the wrong field, so no line passes.
    let code = "import pandas as pd\nrows = []\nfor line in open('jobs.log'):\n    fields = line.split()\n    if fields[0] == 'build':\n        rows.append({'job': fields[0], 'secs': int(fields[1][5:-1])})\ndf = pd.DataFrame(rows)\nprint(df['secs'].mean())";
    env.server
        .push(Reply::text(&format!("```python\n{code}\n```")))
        .push(Reply::text("I cannot tell."))
        .push(Reply::text("I cannot tell."))
        .push(Reply::text("I cannot tell."));
    let out = env
        .exec(&[
            "-y",
            "-c",
            &kernel,
            "How long does the build job of jobs.log take on average?",
        ])
        .await;
    let told = env.server.chat_requests()[1].last_message_text();
    assert!(
        told.contains("KeyError: 'secs'")
            && told.contains("[oi: `df` has no `secs` column, though every row your code appends to `rows` has that key: `rows` stayed empty: no line passed `if fields[0] == 'build':`. Print the values that test reads for the first few lines, then test them as they are.]"),
        "{told}\n{out:?}"
    );
}

#[tokio::test]
async fn a_small_model_sending_again_code_that_did_the_task_is_told_once_then_the_task_ends() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    fs_err::write(
        env.cwd.path().join("clients.txt"),
        "10.0.0.10\n192.168.1.2\n10.0.0.9\n10.0.0.10\n",
    )
    .unwrap();
    // Each run of the block leaves a line in `runs.log`.
    let code = "clients = sorted({c.strip() for c in open('clients.txt') if c.strip()}, key=lambda x: tuple(map(int, x.split('.'))))\nwith open('ips_sorted.txt', 'w') as f:\n    f.write('\\n'.join(clients) + '\\n')\nwith open('runs.log', 'a') as log:\n    log.write('ran\\n')";
    let block = format!("```python\n{code}\n```");
    env.server
        .push(Reply::text(&block))
        .push(Reply::text(&block))
        .push(Reply::text(&block));
    let out = env
        .exec(&[
            "-y",
            "clients.txt lists client IP addresses, one per line, some repeated. Write ips_sorted.txt with each address once, in numeric order.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let requests = env.server.chat_requests();
    assert_eq!(requests.len(), 3, "{requests:?}");
    let told = requests[2].last_message_text();
    assert!(
        told.contains("[oi: that is the code that just ran without errors: running it again changes nothing (`ips_sorted.txt` is as it left it). If its result is what the task asks for, the task is done"),
        "{told}"
    );
    // Sent without freer sampling: the model is answered, not asked again.
    assert_eq!(requests[2].body["temperature"], 0.0, "{}", requests[2].body);
    assert!(
        out.stderr
            .contains("oi ends the task with its results as they are"),
        "{}",
        out.stderr
    );
    // The answer is oi's, naming the result, not the model's code block.
    assert!(
        out.stdout.contains(
            "the model sent that code again instead of answering, so oi ended the task there"
        ) && out.stdout.contains("`ips_sorted.txt` holds what it wrote.")
            && !out.stdout.contains("```python"),
        "{}",
        out.stdout
    );
    let cwd = env.cwd.path();
    assert_eq!(
        fs_err::read_to_string(cwd.join("runs.log")).unwrap(),
        "ran\n",
        "the block ran once"
    );
    assert_eq!(
        fs_err::read_to_string(cwd.join("ips_sorted.txt")).unwrap(),
        "10.0.0.9\n10.0.0.10\n192.168.1.2\n"
    );
}

#[tokio::test]
async fn a_small_models_loop_over_a_list_some_records_lack_is_run_again_reading_it_with_get() {
    let env = TestEnv::new().await;
    let code = "import json\nfrom collections import Counter\ndata = json.load(open('posts.json'))\ncounts = Counter()\nfor post in data['posts']:\n    tags = post['meta']['tags']\n    for tag in tags:\n        counts[tag.strip().lower()] += 1\nwith open('tags.txt', 'w') as f:\n    for tag, n in sorted(counts.items()):\n        f.write(f'{tag} {n}\\n')";
    let told = told_after_one_block(
        &env,
        &[("posts.json", r#"{"posts": [{"id": 1, "meta": {"tags": ["Rust", " rust"]}}, {"id": 2, "meta": {}}, {"id": 3, "meta": {"tags": ["Go"]}}]}"#)],
        code,
        "posts.json holds blog posts. Write tags.txt with each tag in lower case and how many posts carry it.",
    )
    .await;
    assert!(
        told.contains("KeyError: 'tags'")
            && told.contains("[oi: some records of `posts.json` have no `tags` key, so oi ran your code again with `tags = post['meta']['tags']` written as `tags = post['meta'].get('tags', [])`, which gives an empty list where a record has none:]"),
        "{told}"
    );
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("tags.txt")).unwrap(),
        "go 1\nrust 2\n"
    );
}

#[tokio::test]
async fn a_small_models_ages_counted_as_days_are_counted_again_in_whole_years_by_oi() {
    let env = TestEnv::new().await;
    let code = "import csv\nfrom datetime import datetime\non = datetime(2024, 6, 30)\nrows = list(csv.DictReader(open('members.csv')))\nwith open('ages.csv', 'w') as f:\n    f.write('name,age\\n')\n    for row in rows:\n        born = datetime.strptime(row['born'], '%d/%m/%Y')\n        age = (on - born).days // 365\n        f.write(f\"{row['name']},{age}\\n\")";
    let told = told_after_one_block(
        &env,
        &[("members.csv", "name,born\nAna,03/07/1990\nBen,30/06/2000\n")],
        code,
        "members.csv gives each member's birth date as day/month/year. Write ages.csv with the columns name,age: each member's age in whole years on 30 June 2024.",
    )
    .await;
    assert!(
        told.contains("[oi: `age = (on - born).days // 365` counts years as days, which drifts a day every leap year (an age comes out a year too high in the days before a birthday), so oi ran your code again with it written as:\n```python\nage = on.year - born.year - ((on.month, on.day) < (born.month, born.day))\n```"),
        "{told}"
    );
    // The first run's result (Ana 34) is not shown: the re-run's is.
    assert!(!told.contains("Ana,34"), "{told}");
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("ages.csv")).unwrap(),
        "name,age\nAna,33\nBen,24\n"
    );
}

#[tokio::test]
async fn a_small_model_is_told_its_table_of_contents_lists_a_comment_of_a_code_block() {
    let env = TestEnv::new().await;
    let code = "lines = [l.strip() for l in open('guide.md') if l.startswith('## ')]\nwith open('toc.md', 'w') as f:\n    f.write('\\n'.join('- ' + l[3:] for l in lines) + '\\n')";
    let told = told_after_one_block(
        &env,
        &[("guide.md", "# Guide\n\n## Install\n\n```bash\n## not a heading\ncurl -O x\n```\n\n## Usage\n")],
        code,
        "Write toc.md, a table of contents for guide.md: one line \"- Title\" per level-2 heading, in order.",
    )
    .await;
    assert!(
        told.contains("It is not right yet: in `toc.md`, `- not a heading` comes from line 6 of `guide.md` (`## not a heading`), which is not a heading: it is inside a ``` block; skip the lines between ``` lines"),
        "{told}"
    );
}

#[tokio::test]
async fn a_small_models_list_where_the_count_is_asked_is_written_as_the_count_by_oi() {
    let env = TestEnv::new().await;
    let code = "phones = sorted({l.strip() for l in open('phones.txt') if l.strip()})\nwith open('unique.txt', 'w') as f:\n    f.write('\\n'.join(phones) + '\\n')";
    let told = told_after_one_block(
        &env,
        &[(
            "phones.txt",
            "5551234567\n5559876543\n5551234567\n5552220000\n",
        )],
        code,
        "Write the number of distinct phone numbers in phones.txt to unique.txt.",
    )
    .await;
    assert!(
        told.contains("[oi: `unique.txt` held a list where the task asks for how many there are, so oi ran your code again with `f.write('\\n'.join(phones) + '\\n')` written as `f.write(str(len(set(phones))) + '\\n')`, which writes that number:]"),
        "{told}"
    );
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("unique.txt")).unwrap(),
        "3\n"
    );
}

#[tokio::test]
async fn a_small_model_is_told_a_fixed_script_prints_a_message_and_punctuated_words() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    let cwd = env.cwd.path();
    let old = "import sys\nfrom collections import Counter\ncounts = Counter()\nfor line in open(sys.argv[1]):\n    for w in line.split(' '):\n        counts[w] += 1\nfor w, n in counts.most_common(2):\n    print(w, n)\n";
    fs_err::write(cwd.join("wordfreq.py"), old).unwrap();
    fs_err::write(cwd.join("sample.txt"), "The cat sat.\n\nthe sat. end\n").unwrap();
    // A version that reports the blank line it skips and keeps the
    // punctuation, then one that does neither.
    let noisy = "import sys\nfrom collections import Counter\ncounts = Counter()\nfor line in open(sys.argv[1]):\n    if not line.strip():\n        print('Skipping a blank line')\n        continue\n    for w in line.split():\n        counts[w.lower()] += 1\nfor w, n in counts.most_common(2):\n    print(w, n)\n";
    let fixed = "import re\nimport sys\nfrom collections import Counter\ncounts = Counter()\nfor line in open(sys.argv[1]):\n    for w in re.findall(r\"[A-Za-z0-9']+\", line):\n        counts[w.lower()] += 1\nfor w, n in counts.most_common(2):\n    print(w, n)\n";
    env.server
        .push(Reply::text(&format!("```python\n{noisy}```")))
        .push(Reply::text(&format!("```python\n{fixed}```")))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "wordfreq.py should print the 2 most common words of the file given as its argument, one per line as 'word count', ignoring case and punctuation. Fix wordfreq.py.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let requests = env.server.chat_requests();
    assert_eq!(requests.len(), 3, "{requests:?}");
    let told = requests[1].last_message_text();
    assert!(
        told.contains("[oi: `wordfreq.py` printed `sat.`, a word with punctuation still on it, where the task says to leave punctuation out")
            && told.contains("the new version also prints a message (`print('Skipping a blank line')`), and this run printed `Skipping a blank line`"),
        "{told}"
    );
    let after = requests[2].last_message_text();
    assert!(
        after.contains("saved wordfreq.py\nthe 2\nsat 2\n")
            && !after.contains("punctuation")
            && !after.contains("a message"),
        "{after}"
    );
    assert_eq!(
        fs_err::read_to_string(cwd.join("wordfreq.py")).unwrap(),
        fixed
    );
}

#[tokio::test]
async fn a_small_model_is_told_a_merge_lacks_a_key_an_input_sets() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    let cwd = env.cwd.path();
    fs_err::write(cwd.join("defaults.env"), "PORT=8080\nLEVEL=info\n").unwrap();
    fs_err::write(cwd.join("local.env"), "export LEVEL=debug\nCACHE=/tmp/c\n").unwrap();
    // Only the first file read, then both.
    let one = "lines = [l.strip() for l in open('defaults.env') if l.strip()]\n_ = open('merged.env', 'w').write('\\n'.join(sorted(lines)) + '\\n')";
    let both = "merged = {}\nfor name in ['defaults.env', 'local.env']:\n    for l in open(name):\n        if '=' in l:\n            k, v = l.split('=', 1)\n            merged[k.replace('export ', '').strip()] = v.strip()\n_ = open('merged.env', 'w').write(''.join(f'{k}={v}\\n' for k, v in sorted(merged.items())))";
    env.server
        .push(Reply::text(&format!("```python\n{one}\n```")))
        .push(Reply::text(&format!("```python\n{both}\n```")))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "Merge defaults.env and local.env into merged.env: every key from both, where local.env's value wins, sorted by key.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let requests = env.server.chat_requests();
    let told = requests[1].last_message_text();
    assert!(
        told.contains(
            "`merged.env` lacks `CACHE`, which `local.env` sets, where the task asks for every key"
        ),
        "{told}"
    );
    assert!(!requests[2].last_message_text().contains("lacks"));
    assert_eq!(
        fs_err::read_to_string(cwd.join("merged.env")).unwrap(),
        "CACHE=/tmp/c\nLEVEL=debug\nPORT=8080\n"
    );
}

#[tokio::test]
async fn a_small_model_gets_the_loop_for_json_lines_some_of_which_are_not_json() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    fs_err::write(
        env.cwd.path().join("app.jsonl"),
        "{\"service\": \"auth\", \"level\": \"ERROR\"}\n{\"service\": \"billing\", \"level\": \"info\"}\nnot json: the collector restarted here\n\n{\"service\": \"auth\", \"level\": \"error\"}\n{\"service\": \"billing\", \"level\": \"Error\"}\n",
    )
    .unwrap();
    // The model copies the loop the look gives; the real kernel runs it.
    env.server
        .push(Reply::text(
            "```python\nimport json\nrows = []\nfor line in open('app.jsonl', encoding='utf-8'):\n    try:\n        rows.append(json.loads(line))\n    except ValueError:\n        continue\ncounts = {}\nfor r in rows:\n    if r['level'].lower() == 'error':\n        counts[r['service']] = counts.get(r['service'], 0) + 1\njson.dump(counts, open('errors.json', 'w'))\n```",
        ))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "Count the error entries per service in app.jsonl and write errors.json.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let first = env.server.chat_requests()[0].last_message_text();
    assert!(
        first.contains("`app.jsonl` holds one JSON object per line, but 1 line is not JSON (like `not json: the collector restarted here`)"),
        "{first}"
    );
    assert!(
        first.contains("```python\nimport json\nrows = []\nfor line in open('app.jsonl', encoding='utf-8'):\n    try:\n        rows.append(json.loads(line))\n    except ValueError:\n        continue\n```"),
        "{first}"
    );
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("errors.json")).unwrap(),
        "{\"auth\": 2, \"billing\": 1}"
    );
}

#[tokio::test]
async fn a_small_model_gets_the_rows_of_a_markdown_table_and_the_split_of_a_row() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    fs_err::write(
        env.cwd.path().join("README.md"),
        "# Plan\n\n| Version | Notes |\n|:--|--|\n| 1.0 | first, public |\n| 2.0 |  |\n\n| Owner | Area |\n|---|---|\n| ana | docs |\n",
    )
    .unwrap();
    env.server
        .push(Reply::text(
            "```python\nimport csv\nlines = open('README.md', encoding='utf-8').read().splitlines()\nrows = [[c.strip() for c in line.strip().strip('|').split('|')] for line in lines[2:3] + lines[4:6]]\ncsv.writer(open('releases.csv', 'w', newline='')).writerows(rows)\n```",
        ))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "Convert the release table in README.md to releases.csv.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let first = env.server.chat_requests()[0].last_message_text();
    assert!(
        first.contains("In it 2 Markdown tables. Read the lines with `lines = open('README.md', encoding='utf-8').read().splitlines()`; then the table with the columns `Version`, `Notes` (lines 3–6), its header row first, is `rows = [[c.strip() for c in line.strip().strip('|').split('|')] for line in lines[2:3] + lines[4:6]]`; the table with the columns `Owner`, `Area`"),
        "{first}"
    );
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("releases.csv")).unwrap(),
        "Version,Notes\r\n1.0,\"first, public\"\r\n2.0,\r\n"
    );
}

#[tokio::test]
async fn a_small_model_is_told_the_separator_its_failed_unpacking_split_at() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    fs_err::write(
        env.cwd.path().join("sales.csv"),
        "region,amount\nnorth,12\n\nsouth,3\n",
    )
    .unwrap();
    env.server
        .push(Reply::text(
            "```python\ntotal = 0\nfor line in open('sales.csv').read().split('\\n')[1:]:\n    region, amount = line.split(\",\")\n    total += float(amount)\nprint(total)\n```",
        ))
        .push(Reply::text(
            "```python\nimport csv\nr = csv.reader(open('sales.csv'))\nnext(r)\nprint(sum(float(row[1]) for row in r if row))\n```",
        ))
        .push(Reply::text("15.0"));
    let out = env
        .exec(&["-y", "Print the total of the amount column of sales.csv."])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let told = env.server.chat_requests()[1].last_message_text();
    assert!(
        told.contains("failed at `region, amount = line.split(\",\")`")
            && told.contains("\",\" not in line")
            && told.contains("csv.reader(f)"),
        "{told}"
    );
    assert!(!told.contains("'='"), "{told}");
}

#[tokio::test]
async fn a_small_model_is_told_its_python_booleans_and_unsorted_lines_in_a_file_made_into() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    let cwd = env.cwd.path();
    fs_err::write(
        cwd.join("settings.json"),
        "{\"app\": {\"name\": \"L\", \"debug\": false}, \"beta\": true}\n",
    )
    .unwrap();
    let flatten = |fixed: bool| {
        let value = if fixed {
            "json.dumps(v) if isinstance(v, bool) else v"
        } else {
            "v"
        };
        let order = if fixed { "sorted(out)" } else { "out" };
        format!(
            "```python\nimport json\nout = []\ndef walk(d, p=''):\n    for k, v in d.items():\n        if isinstance(v, dict):\n            walk(v, p + k + '.')\n        else:\n            out.append(f'{{p}}{{k}}={{{value}}}')\nwalk(json.load(open('settings.json')))\n_ = open('flat.txt', 'w').write('\\n'.join({order}) + '\\n')\n```"
        )
    };
    env.server
        .push(Reply::text(&flatten(false)))
        .push(Reply::text(&flatten(true)))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "Flatten settings.json into flat.txt: one dotted.path=value line per leaf (booleans as true/false), sorted by path.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let requests = env.server.chat_requests();
    let told = requests[1].last_message_text();
    assert!(
        told.contains("`flat.txt` has `False` where the task writes `false`")
            && told.contains("the lines of `flat.txt` are not in alphabetical order (`app.name=L` comes before `app.debug=False`)"),
        "{told}"
    );
    assert!(!requests[2].last_message_text().contains("not right yet"));
    assert_eq!(
        fs_err::read_to_string(cwd.join("flat.txt")).unwrap(),
        "app.debug=false\napp.name=L\nbeta=true\n"
    );
}

#[tokio::test]
async fn a_small_models_shell_block_listing_packages_is_not_run_but_asked_again() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    let cwd = env.cwd.path();
    fs_err::write(
        cwd.join("requirements.txt"),
        "Flask==3.0\nrequests>=2\nNumPy\n",
    )
    .unwrap();
    env.server
        .push(Reply::text("```bash\nrequests\nJinja2\nNumPy\n```"))
        .push(Reply::text(
            "```python\nimport re\nnames = []\nfor line in open('requirements.txt'):\n    if '==' not in line:\n        names.append(re.split('[<>=~ ]', line.strip())[0].lower())\n_ = open('unpinned.txt', 'w').write('\\n'.join(sorted(names)) + '\\n')\n```",
        ))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "Write the packages of requirements.txt not pinned with == to unpinned.txt.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let requests = env.server.chat_requests();
    assert_eq!(requests[1].body["temperature"], 0.7, "asked again, not run");
    // The list never ran as commands: no "command not found" came back.
    for request in &requests {
        assert!(!request.body.to_string().contains("command not found"));
    }
    assert_eq!(
        fs_err::read_to_string(cwd.join("unpinned.txt")).unwrap(),
        "numpy\nrequests\n"
    );
}

#[tokio::test]
async fn a_small_model_that_printed_a_table_is_given_the_line_that_writes_it() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    let cwd = env.cwd.path();
    fs_err::write(
        cwd.join("scores.csv"),
        "team,score\nred,12\nblue,7\nred,9\n",
    )
    .unwrap();
    // The kernel runs the Python that has pandas.
    let Some(python) = oi_testkit::pip_package("pandas", "pandas") else {
        return;
    };
    let kernel = format!("languages.python.command=[{}]", json!(python));
    env.server
        .push(Reply::text(
            "```python\nimport pandas as pd\ndf = pd.read_csv('scores.csv')\nteam_avg = df.groupby('team')['score'].mean().reset_index(name='average')\nprint(team_avg)\n```",
        ))
        .push(Reply::text("```python\nteam_avg.to_csv('team_avg.csv', index=False)\n```"))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "-c",
            &kernel,
            "Write team_avg.csv with each team's average score.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let told = env.server.chat_requests()[1].last_message_text();
    assert!(
        told.contains(
            "(`team_avg.to_csv('team_avg.csv', index=False)` writes the table it printed)"
        ),
        "{told}"
    );
    assert_eq!(
        fs_err::read_to_string(cwd.join("team_avg.csv")).unwrap(),
        "team,average\nblue,7.0\nred,10.5\n"
    );
}

#[tokio::test]
async fn a_small_models_names_for_a_grouped_tables_key_and_value_run_again_with_the_key_a_column() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    let cwd = env.cwd.path();
    fs_err::write(
        cwd.join("sales.csv"),
        "region,rep,amount\nNorth,Ann,1200\nNorth,Bob,800\nSouth,Dee,700\n",
    )
    .unwrap();
    let Some(python) = oi_testkit::pip_package("pandas", "pandas") else {
        return;
    };
    let kernel = format!("languages.python.command=[{}]", json!(python));
    let line = "totals_df.columns = ['region', 'total']";
    env.server
        .push(Reply::text(&format!(
            "```python\nimport pandas as pd\ndf = pd.read_csv('sales.csv')\ntotals = df.groupby('region')['amount'].sum()\ntotals_df = pd.DataFrame(totals)\n{line}\ntotals_df.to_csv('region_totals.csv', index=False)\n```"
        )))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "-c",
            &kernel,
            "Write region_totals.csv with the columns region,total: the sum of the amount for each region.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let told = env.server.chat_requests()[1].last_message_text();
    assert!(told.contains("ValueError: Length mismatch"), "{told}");
    assert!(
        told.contains(&format!("[oi: that error has a known fix, so oi ran your code again with `{line}` written as:\n```python\ntotals_df = totals_df.reset_index()\n{line}\n```\nIts result:]")),
        "{told}"
    );
    // The note that only explains the error is not given beside the run.
    assert!(!told.contains("the list of names you gave"), "{told}");
    assert_eq!(
        fs_err::read_to_string(cwd.join("region_totals.csv")).unwrap(),
        "region,total\nNorth,2000\nSouth,700\n"
    );
}

#[tokio::test]
async fn a_small_models_merge_on_a_key_one_table_lacks_runs_again_fixed_by_oi() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    let cwd = env.cwd.path();
    fs_err::write(
        cwd.join("customers.csv"),
        "customer_id,name\nC001,Ana\nC002,Ben\n",
    )
    .unwrap();
    fs_err::write(
        cwd.join("payments.csv"),
        "id,customer,amount\n1,C001,10.5\n2,C002,20\n3,C001,4.5\n",
    )
    .unwrap();
    let Some(python) = oi_testkit::pip_package("pandas", "pandas") else {
        return;
    };
    let kernel = format!("languages.python.command=[{}]", json!(python));
    env.server
        .push(Reply::text(
            "```python\nimport pandas as pd\ncustomers = pd.read_csv('customers.csv')\npayments = pd.read_csv('payments.csv')\nmerged = pd.merge(customers, payments, on='customer_id')\nmerged.groupby('name')['amount'].sum().reset_index(name='total').to_csv('totals.csv', index=False)\n```",
        ))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "-c",
            &kernel,
            "Write totals.csv with the header name,total: each customer's total payments.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let told = env.server.chat_requests()[1].last_message_text();
    assert!(told.contains("KeyError: 'customer_id'"), "{told}");
    assert!(
        told.contains("[oi: that error has a known fix, so oi ran your code again with `merged = pd.merge(customers, payments, on='customer_id')` written as `merged = pd.merge(customers, payments, left_on='customer_id', right_on='customer')`:]"),
        "{told}"
    );
    assert!(!told.contains("Merge on each table's own column"), "{told}");
    assert_eq!(
        fs_err::read_to_string(cwd.join("totals.csv")).unwrap(),
        "name,total\nAna,15.0\nBen,20.0\n"
    );
}

/// A small model's pandas block that ran without error but left a wrong
/// result, which oi runs again changed as `lead` says: the task, the
/// input `table` (`data.csv`), the block, and what the result file
/// `result` holds after the re-run. `None` where pandas is missing.
async fn a_pandas_block_is_run_again_right(
    task: &str,
    table: &str,
    block: &str,
    lead: &str,
    result: (&str, &str),
) {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    let cwd = env.cwd.path();
    fs_err::write(cwd.join("data.csv"), table).unwrap();
    let Some(python) = oi_testkit::pip_package("pandas", "pandas") else {
        return;
    };
    let kernel = format!("languages.python.command=[{}]", json!(python));
    env.server
        .push(Reply::text(&format!("```python\n{block}\n```")))
        .push(Reply::text("Done."));
    let out = env.exec(&["-y", "-c", &kernel, task]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let told = env.server.chat_requests()[1].last_message_text();
    assert!(told.contains(lead), "{told}");
    let (name, holds) = result;
    assert_eq!(fs_err::read_to_string(cwd.join(name)).unwrap(), holds);
}

#[tokio::test]
async fn a_small_models_first_row_of_data_dropped_as_a_header_is_kept() {
    a_pandas_block_is_run_again_right(
        "Write totals.csv with the total amount of each region in data.csv.",
        "region,amount\nNorth,5\nSouth,3\nNorth,1\n",
        "import pandas as pd\ndf = pd.read_csv('data.csv')\ndf = df.iloc[1:]\ndf.groupby('region')['amount'].sum().to_csv('totals.csv')",
        "[oi: `df = df.iloc[1:]` drops the first row of data of `data.csv` (`North,5`): `pd.read_csv` already took its header line as the column names. So oi ran your code again without that line:]",
        ("totals.csv", "region,amount\nNorth,6\nSouth,3\n"),
    )
    .await;
}

#[tokio::test]
async fn a_small_models_header_list_that_picks_columns_becomes_the_columns_to_write() {
    let line = "df.to_csv('ages.csv', index=False, header=['name', 'age'])";
    a_pandas_block_is_run_again_right(
        "Write ages.csv with the columns name,age from data.csv.",
        "name,born,age\nAna,1990,34\nBen,2000,24\n",
        &format!("import pandas as pd\ndf = pd.read_csv('data.csv')\n{line}"),
        &format!(
            "[oi: that error has a known fix, so oi ran your code again with `{line}` written as `df.to_csv('ages.csv', index=False, columns=['name', 'age'])`:]"
        ),
        ("ages.csv", "name,age\nAna,34\nBen,24\n"),
    )
    .await;
}

#[tokio::test]
async fn a_small_models_earliest_and_latest_rows_by_position_are_taken_in_date_order() {
    a_pandas_block_is_run_again_right(
        "Write the price on the latest date in data.csv minus the price on the earliest date to change.txt.",
        "date,price\n2024-02-15,12\n2024-01-03,10\n2024-03-30,15\n2024-01-20,9\n",
        "import pandas as pd\ndf = pd.read_csv('data.csv')\nopen('change.txt', 'w').write(str(df['price'].iloc[-1] - df['price'].iloc[0]))",
        "the rows of `data.csv` are not in order of `date`. So oi ran your code again with the table sorted by `date` after it is read:]",
        ("change.txt", "5"),
    )
    .await;
}

#[tokio::test]
async fn a_small_model_listing_files_out_of_size_order_is_told_their_sizes() {
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    let cwd = env.cwd.path();
    fs_err::create_dir_all(cwd.join("data/old exports")).unwrap();
    fs_err::create_dir_all(cwd.join(".cache")).unwrap();
    fs_err::write(
        cwd.join("data/old exports/march 2024.csv"),
        vec![b'x'; 1200],
    )
    .unwrap();
    fs_err::write(cwd.join("small.txt"), vec![b'x'; 80]).unwrap();
    fs_err::write(cwd.join("top.log"), vec![b'x'; 700]).unwrap();
    fs_err::write(cwd.join(".cache/blob"), vec![b'x'; 5000]).unwrap();
    // Sorted by `ls -l`'s first column, cut at a space: wrong, then right.
    env.server
        .push(Reply::text(
            "```bash\nprintf './small.txt\\n./top.log\\n' > largest.txt\n```",
        ))
        .push(Reply::text(
            "```bash\nfind . -path '*/.*' -prune -o -type f -not -name largest.txt -printf '%s\\t%p\\n' | sort -nr | head -n 2 | cut -f2 > largest.txt\n```",
        ))
        .push(Reply::text("Done."));
    let out = env
        .exec(&[
            "-y",
            "Find the two largest files here, leaving out hidden folders, and write their paths, largest first, to largest.txt.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let told = env.server.chat_requests()[1].last_message_text();
    assert!(
        told.contains("`largest.txt` lists `./small.txt` (80 bytes), but `data/old exports/march 2024.csv` (1200 bytes) is larger and not listed"),
        "{told}"
    );
    assert_eq!(
        fs_err::read_to_string(cwd.join("largest.txt")).unwrap(),
        "./data/old exports/march 2024.csv\n./top.log\n"
    );
}

#[tokio::test]
async fn a_fixed_script_writing_to_its_second_argument_runs_with_a_scratch_file_shown_after() {
    if oi_testkit::python3().is_none() {
        return;
    }
    let env = TestEnv::new().await;
    small_model_env(&env, "qwen2.5-coder:1.5b");
    let cwd = env.cwd.path();
    let broken = "import csv\nimport sys\n\nsrc, dst = sys.argv[1], sys.argv[2]\nwith open(src) as f:\n    rows = list(csv.reader(f))\n\nwith open(dst, 'w') as out:\n    writer = csv.writer(out)\n    for row in rows[1:]:\n        if row[1] > '18':\n            writer.writerow(row)\n";
    fs_err::write(cwd.join("filter_adults.py"), broken).unwrap();
    fs_err::write(cwd.join("people.csv"), "name,age\nAna,17\nBen,42\nCy,9\n").unwrap();
    let fixed = broken
        .replace(
            "    for row in rows[1:]:",
            "    writer.writerow(rows[0])\n    for row in rows[1:]:",
        )
        .replace("if row[1] > '18':", "if int(row[1]) >= 18:");
    env.server
        .push(Reply::text(&format!("```python\n{fixed}```")))
        .push(Reply::text("```bash\nls\n```"))
        .push(Reply::text("Fixed."));
    let out = env
        .exec(&[
            "-y",
            "filter_adults.py should write the rows of people aged 18 or over of the CSV file given as its first argument, with its header, to the file given as its second argument. On people.csv it gives wrong rows. Fix filter_adults.py.",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        fs_err::read_to_string(cwd.join("filter_adults.py")).unwrap(),
        fixed
    );
    let requests = env.server.chat_requests();
    let seen = requests[1].last_message_text();
    assert!(
        seen.contains("saved filter_adults.py\n[argument 2, ")
            && seen.contains("/out2.csv, now holds:]\nname,age\nBen,42\n"),
        "{seen}"
    );
    // The script's run ended no kernel, and left no file in the folder.
    assert!(
        !seen.contains("kernel died") && !seen.contains("failed as shown"),
        "{seen}"
    );
    let after = requests[2].last_message_text();
    assert!(
        after.contains("filter_adults.py\npeople.csv") && !after.contains("kernel"),
        "{after}"
    );
    let mut files: Vec<String> = fs_err::read_dir(cwd)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !n.starts_with('.'))
        .collect();
    files.sort();
    assert_eq!(files, ["filter_adults.py", "people.csv"]);
}

/// A 0.5B model's task of writing `hello.txt`, whose first reply is the
/// Python block `code` and whose next ones say it is done (four times):
/// what `exec` printed, checked to have ended with exit code 0.
async fn hello_ended_after(env: &TestEnv, code: &str) -> Output {
    small_model_env(env, "qwen2.5-coder:0.5b");
    env.server
        .push(Reply::text(&format!("```python\n{code}\n```")));
    for _ in 0..4 {
        env.server.push(Reply::text("The task is done."));
    }
    let out = env
        .exec(&["-y", "Create a file named hello.txt containing the text hi"])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    out
}

#[tokio::test]
async fn a_small_model_ending_without_writing_what_its_code_printed_gets_that_code_run_writing_it()
{
    let env = TestEnv::new().await;
    let out = hello_ended_after(&env, "print(\"hi\")").await;
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("hello.txt")).unwrap(),
        "hi\n",
        "{out:?}"
    );
    assert!(
        out.stderr
            .contains("oi runs that code again with what it prints going to `hello.txt`"),
        "{out:?}"
    );
    let requests = env.server.chat_requests();
    // Told with the block that writes it, and twice more as it ends;
    // then, ending without it, oi ran that block and said so; the answer
    // after that ends the task.
    assert_eq!(requests.len(), 5, "{out:?}");
    assert!(
        requests[1].last_message_text().contains(
            "```python\nimport contextlib\nwith open('hello.txt', 'w') as out, contextlib.redirect_stdout(out):\n    print(\"hi\")\n```"
        ),
        "{}",
        requests[1].last_message_text()
    );
    assert!(
        requests[4].last_message_text().contains(
            "you ended the task without writing `hello.txt`, so oi ran your last code again"
        ),
        "{}",
        requests[4].last_message_text()
    );
}

#[tokio::test]
async fn a_small_model_ending_with_the_file_asked_for_missing_is_warned_about() {
    let env = TestEnv::new().await;
    // Code that printed nothing: no code to run again writing it.
    let out = hello_ended_after(&env, "text = 'hi'").await;
    assert!(!env.cwd.path().join("hello.txt").exists());
    assert!(
        out.stderr
            .contains("the task ends without `hello.txt`, which it says to write"),
        "{out:?}"
    );
}

#[tokio::test]
async fn a_small_models_print_beside_the_file_it_opened_is_run_again_writing_it() {
    let env = TestEnv::new().await;
    let told = told_after_one_block(
        &env,
        &[],
        "with open('hello.txt', 'w') as out:\n    print(\"hi\")",
        "Create a file named hello.txt containing the text hi",
    )
    .await;
    assert!(
        told.contains("[oi: `print(\"hi\")` is inside `with open(…) as out:` but prints to the screen, so `hello.txt` stayed empty. oi ran your code again with `file=out` given to it:]"),
        "{told}"
    );
    assert_eq!(
        fs_err::read_to_string(env.cwd.path().join("hello.txt")).unwrap(),
        "hi\n"
    );
}
