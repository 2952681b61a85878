//! Keeping within the context window: old outputs cut, earlier turns
//! summarized by the model, one retry after the server's context-length
//! error, `/compact`, and the window asked of local servers.

use oi_testkit::Reply;
use serde_json::json;

use crate::support::TestEnv;

pub(crate) const SUMMARY_NEEDLE: &str = "You write short, factual summaries";

fn small_window(env: &TestEnv, window: u32, max_tokens: u32) {
    env.write_config(&format!(
        "model_provider = \"mock\"\nmodel = \"mock-model\"\nmax_tokens = {max_tokens}\n\n[model_providers.mock]\nbase_url = \"{}\"\n\n[models.mock-model]\ncontext_window = {window}\n",
        env.server.base_url()
    ));
}

/// The size of a request as the agent estimates it, from its body.
fn estimated_tokens(body: &serde_json::Value) -> usize {
    body.to_string().len() * 2 / 7
}

#[tokio::test]
async fn a_long_task_with_big_outputs_completes_within_a_small_window() {
    let env = TestEnv::new().await;
    let (window, max_tokens) = (3000, 400);
    small_window(&env, window, max_tokens);
    env.server.answer_when(
        SUMMARY_NEEDLE,
        Reply::text("The user wants six reports printed; reports 1 to 3 were printed."),
    );
    for i in 1..=6 {
        env.server.push(Reply::execute(
            "python",
            &format!("print('report {i}: ' + 'x' * 3000)"),
        ));
    }
    env.server
        .push(Reply::text("All six reports were printed."));
    let out = env.exec(&["-y", "print the six reports"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains("All six reports were printed."),
        "{out:?}"
    );
    assert!(out.stderr.contains("context: about"), "{}", out.stderr);
    let requests = env.server.chat_requests();
    let summaries = requests
        .iter()
        .filter(|r| r.body.to_string().contains(SUMMARY_NEEDLE))
        .count();
    assert!(summaries >= 1, "no summary was asked for");
    for request in &requests {
        let size = estimated_tokens(&request.body);
        assert!(
            size <= (window - max_tokens) as usize,
            "a request of about {size} tokens was sent to a window of {window}"
        );
    }
    // The task itself is never summarized away.
    let last = requests.last().unwrap().body.to_string();
    assert!(last.contains("print the six reports"), "{last}");
    assert!(last.contains("reports 1 to 3 were printed"), "{last}");
}

#[tokio::test]
async fn a_context_length_error_compacts_and_retries_once() {
    let env = TestEnv::new().await;
    env.server
        .answer_when(SUMMARY_NEEDLE, Reply::text("Earlier: a big listing was printed."))
        .push(Reply::execute("python", "print('y' * 20000)"))
        .push(Reply::execute("python", "print('second')"))
        .push(Reply::error(
            400,
            "This model's maximum context length is 4096 tokens. However, your messages resulted in 9000 tokens.",
        ))
        .push(Reply::text("Recovered."));
    let out = env.exec(&["-y", "list everything"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("Recovered."), "{out:?}");
    assert!(
        out.stderr.contains("longer than the context window"),
        "{}",
        out.stderr
    );
    let requests = env.server.chat_requests();
    let retried = requests.last().unwrap().body.to_string();
    let refused = requests[requests.len() - 3].body.to_string();
    assert!(
        retried.len() < refused.len() / 2,
        "{} vs {}",
        retried.len(),
        refused.len()
    );

    // A second refusal in the same turn is reported, not retried forever.
    let env = TestEnv::new().await;
    env.server
        .answer_when(SUMMARY_NEEDLE, Reply::text("summary"))
        .push(Reply::execute("python", "print('z' * 20000)"))
        .push(Reply::execute("python", "print('again')"))
        .push(Reply::error(
            400,
            "prompt is too long: 300000 tokens > 200000 maximum",
        ))
        .push(Reply::error(
            400,
            "prompt is too long: 250000 tokens > 200000 maximum",
        ));
    let out = env.exec(&["-y", "list everything"]).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("context window"), "{}", out.stderr);
}

#[tokio::test]
async fn compact_on_demand_in_the_session() {
    let env = TestEnv::new().await;
    env.server
        .answer_when(SUMMARY_NEEDLE, Reply::text("They counted to three."))
        .push(Reply::text("one"))
        .push(Reply::text("two"))
        .push(Reply::text("three"))
        .push(Reply::text("four"));
    let script = "count 1\ncount 2\ncount 3\n/compact\ncount 4\n";
    let out = env.run(&["-y"], Some(script)).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains("earlier messages summarized"),
        "{}",
        out.stdout
    );
    let last = env.server.chat_requests().last().unwrap().body.to_string();
    assert!(last.contains("They counted to three."), "{last}");
    assert!(!last.contains("count 1"), "{last}");
    assert!(last.contains("count 4"), "{last}");
}

#[tokio::test]
async fn the_window_of_a_local_server_is_asked_for_when_not_configured() {
    // llama.cpp says 2048 under /props: a task with a big output must be
    // compacted to fit it, though nothing was configured.
    let env = TestEnv::new().await;
    env.write_config(&format!(
        "model_provider = \"mock\"\nmodel = \"some-local-model\"\nmax_tokens = 300\n\n[model_providers.mock]\nbase_url = \"{}\"\n",
        env.server.base_url()
    ));
    env.server
        .set_route(
            "GET",
            "/props",
            json!({"default_generation_settings": {"n_ctx": 2048}}),
        )
        .answer_when(SUMMARY_NEEDLE, Reply::text("A long listing."))
        .push(Reply::execute("python", "print('w' * 6000)"))
        .push(Reply::execute("python", "print('w' * 6000)"))
        .push(Reply::text("Done."));
    let out = env.exec(&["-y", "list"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    for request in env.server.chat_requests() {
        let size = estimated_tokens(&request.body);
        assert!(size <= 2048 - 300, "about {size} tokens for a 2048 window");
    }
    let out = env.run(&[], Some("/tokens\n")).await;
    assert!(out.stdout.contains("of 2048 tokens"), "{}", out.stdout);
}

#[tokio::test]
async fn a_short_conversation_the_server_still_refuses_says_what_to_change() {
    let env = TestEnv::new().await;
    env.server.push(Reply::error(
        400,
        "This model's maximum context length is 4096 tokens. However, your messages resulted in 5000 tokens.",
    ));
    let out = env.exec(&["-y", "hello"]).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("refused the request as longer than its context window, and it cannot be made smaller (nothing to compact")
            && out.stderr.contains("hint: give the model a larger context window on the server (llama.cpp `-c`"),
        "{}",
        out.stderr
    );
}
