//! The agent through its channel pair, against the mock server and real
//! kernels: approvals, interrupts, unusable languages, history.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a test failure"
)]

use std::sync::Arc;
use std::time::Duration;

use oi_core::{Agent, AgentConfig};
use oi_kernels::{KernelManager, LanguageSpec, detect_languages};
use oi_protocol::{
    ApprovalPolicy, Event, HarnessKind, Op, ReviewDecision, RunStatus, SkipReason, StopReason,
};
use oi_providers::{ChatClient, ProviderConfig};
use oi_testkit::{MockServer, Reply};
use pretty_assertions::assert_eq;
use tokio::sync::mpsc;

struct Harness {
    server: MockServer,
    ops: mpsc::UnboundedSender<Op>,
    events: mpsc::UnboundedReceiver<Event>,
    _dir: tempfile::TempDir,
}

async fn start(approval: ApprovalPolicy, languages: Vec<LanguageSpec>) -> Harness {
    start_with(approval, languages, |_| {}).await
}

async fn start_with(
    approval: ApprovalPolicy,
    languages: Vec<LanguageSpec>,
    change: impl FnOnce(&mut AgentConfig),
) -> Harness {
    let server = MockServer::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut config = AgentConfig::new("mock");
    config.approval = approval;
    change(&mut config);
    let client = ChatClient::new(ProviderConfig::new("mock", server.base_url()));
    let kernels = KernelManager::new(languages, dir.path());
    let (ops, events) = Agent::spawn(config, Arc::new(client), kernels);
    Harness {
        server,
        ops,
        events,
        _dir: dir,
    }
}

impl Harness {
    async fn next(&mut self) -> Event {
        tokio::time::timeout(Duration::from_secs(60), self.events.recv())
            .await
            .expect("no event within 60 s")
            .expect("the agent stopped")
    }

    /// Events up to and including the first one matching `until`.
    async fn until(&mut self, until: impl Fn(&Event) -> bool) -> Vec<Event> {
        let mut seen = Vec::new();
        loop {
            let event = self.next().await;
            let stop = until(&event);
            seen.push(event);
            if stop {
                return seen;
            }
        }
    }

    async fn task_end(&mut self) -> Vec<Event> {
        self.until(|e| matches!(e, Event::TaskComplete { .. }))
            .await
    }

    fn input(&self, text: &str) {
        self.ops.send(Op::input(text.to_owned())).unwrap();
    }
}

fn completion(events: &[Event]) -> StopReason {
    match events.last() {
        Some(Event::TaskComplete { reason, .. }) => reason.clone(),
        other => panic!("expected TaskComplete, got {other:?}"),
    }
}

#[tokio::test]
async fn the_session_announces_itself_and_shuts_down_cleanly() {
    let mut h = start(ApprovalPolicy::Auto, detect_languages()).await;
    let first = h.next().await;
    assert!(
        matches!(&first, Event::SessionConfigured { languages, harness, .. } if languages[..2] == ["python", "shell"] && languages.iter().any(|l| l == "javascript") && *harness == HarnessKind::Native),
        "{first:?}"
    );
    h.ops.send(Op::Shutdown).unwrap();
    assert_eq!(h.next().await, Event::ShutdownComplete);
    assert!(
        h.events.recv().await.is_none(),
        "nothing after ShutdownComplete"
    );
}

#[tokio::test]
async fn approvals_decide_what_runs() {
    let mut h = start(ApprovalPolicy::Ask, detect_languages()).await;
    h.server
        .push(Reply::execute("python", "print('edited?')"))
        .push(Reply::execute("python", "print('declined')"))
        .push(Reply::text("ok"));
    h.input("go");
    let events = h
        .until(|e| matches!(e, Event::ApprovalRequested { .. }))
        .await;
    let Some(Event::ApprovalRequested {
        id, language, code, ..
    }) = events.last().cloned()
    else {
        unreachable!()
    };
    assert_eq!(
        (language.as_str(), code.as_str()),
        ("python", "print('edited?')")
    );
    h.ops
        .send(Op::Approve {
            id,
            decision: ReviewDecision::Edit {
                code: "print('edited!')".into(),
            },
        })
        .unwrap();
    let events = h
        .until(|e| matches!(e, Event::ApprovalRequested { .. }))
        .await;
    assert!(events.contains(&Event::RunStarted {
        id,
        language: "python".into(),
        code: "print('edited!')".into()
    }));
    let Some(Event::ApprovalRequested { id: second, .. }) = events.last().cloned() else {
        unreachable!()
    };
    h.ops
        .send(Op::Approve {
            id: second,
            decision: ReviewDecision::Decline,
        })
        .unwrap();
    let events = h.task_end().await;
    assert!(events.contains(&Event::RunSkipped {
        id: second,
        reason: SkipReason::Declined
    }));
    assert_eq!(completion(&events), StopReason::Done);
    let requests = h.server.chat_requests();
    assert!(requests[1].last_message_text().ends_with("edited!\n"));
    assert_eq!(
        requests[2].last_message_text(),
        "The user declined to run this code."
    );
}

#[tokio::test]
async fn an_interrupt_stops_the_running_code_and_the_task() {
    let mut h = start(ApprovalPolicy::Auto, detect_languages()).await;
    h.server
        .push(Reply::execute(
            "python",
            "n = 3\nprint('spinning', flush=True)\nwhile True:\n    pass",
        ))
        .push(Reply::execute("python", "print(n)"))
        .push(Reply::text("still here"));
    h.input("spin");
    h.until(|e| matches!(e, Event::OutputDelta { text, .. } if text.contains("spinning")))
        .await;
    h.ops.send(Op::Interrupt).unwrap();
    let events = h.task_end().await;
    assert!(
        events.iter().any(|e| matches!(
            e,
            Event::RunFinished {
                status: RunStatus::Interrupted,
                ..
            }
        )),
        "{events:?}"
    );
    assert_eq!(completion(&events), StopReason::Interrupted);

    // The next task continues the conversation; the kernel kept its state.
    h.input("go on");
    let events = h.task_end().await;
    assert_eq!(completion(&events), StopReason::Done);
    let requests = h.server.chat_requests();
    assert_eq!(requests.len(), 3);
    let history = requests[1].messages();
    assert!(
        history[3]["content"]
            .as_str()
            .unwrap()
            .ends_with("[the run was interrupted by the user]"),
        "{history:?}"
    );
    assert_eq!(history[4]["content"], "go on");
    assert_eq!(requests[2].last_message_text(), "3\n");
}

#[tokio::test]
async fn an_interrupt_while_the_model_streams_ends_the_task() {
    let mut h = start(ApprovalPolicy::Auto, detect_languages()).await;
    h.server
        .push(Reply::text("a slow and long answer").event_delay(Duration::from_millis(200)));
    h.input("talk");
    h.until(|e| matches!(e, Event::TextDelta { .. })).await;
    h.ops.send(Op::Interrupt).unwrap();
    let events = h.task_end().await;
    assert_eq!(completion(&events), StopReason::Interrupted);
}

#[tokio::test]
async fn languages_that_cannot_run_are_reported_to_the_model() {
    let broken = LanguageSpec::python("/no/such/python3");
    let mut h = start(ApprovalPolicy::Auto, vec![broken]).await;
    h.server
        .push(Reply::execute("ruby", "puts 1"))
        .push(Reply::execute("python", "print(1)"))
        .push(Reply::text("giving up"));
    h.input("try");
    let events = h.task_end().await;
    let skipped: Vec<&SkipReason> = events
        .iter()
        .filter_map(|e| match e {
            Event::RunSkipped { reason, .. } => Some(reason),
            _ => None,
        })
        .collect();
    assert_eq!(skipped.len(), 2, "{events:?}");
    let requests = h.server.chat_requests();
    assert_eq!(
        requests[1].last_message_text(),
        "Not run: `ruby` cannot run here. Available languages: python."
    );
    let second = requests[2].last_message_text();
    assert!(
        second.starts_with("Not run: cannot start the python kernel (`/no/such/python3`)"),
        "{second}"
    );
}

#[tokio::test]
async fn python_fenced_as_shell_runs_in_python() {
    let mut h = start(ApprovalPolicy::Auto, detect_languages()).await;
    h.server
        .push(Reply::execute(
            "bash",
            "import sys\nprint(sys.version_info[0])",
        ))
        .push(Reply::text("Python 3"));
    h.input("which python?");
    let events = h.task_end().await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::CodeProposed { language, .. } if language == "python")),
        "{events:?}"
    );
    assert_eq!(h.server.chat_requests()[1].last_message_text(), "3\n");
}

#[tokio::test]
async fn usage_is_reported_per_request_and_in_total() {
    let mut h = start(ApprovalPolicy::Auto, detect_languages()).await;
    h.server
        .push(Reply::execute("python", "1").usage(100, 10))
        .push(Reply::text("done").usage(150, 5));
    h.input("count");
    let events = h.task_end().await;
    let totals: Vec<(u64, u64)> = events
        .iter()
        .filter_map(|e| match e {
            Event::Usage { total, .. } => Some((total.input_tokens, total.output_tokens)),
            _ => None,
        })
        .collect();
    assert_eq!(totals, [(100, 10), (250, 15)]);
}

#[tokio::test]
async fn the_model_can_be_changed_between_tasks() {
    let mut h = start(ApprovalPolicy::Auto, detect_languages()).await;
    h.server.push(Reply::text("one")).push(Reply::text("two"));
    h.input("first");
    h.task_end().await;
    h.ops
        .send(Op::SetModel {
            model: "bigger".into(),
        })
        .unwrap();
    h.input("second");
    let events = h.task_end().await;
    assert!(events.contains(&Event::ModelChanged {
        model: "bigger".into()
    }));
    let requests = h.server.chat_requests();
    assert_eq!(requests[0].body["model"], "mock");
    assert_eq!(requests[1].body["model"], "bigger");
}

#[tokio::test]
async fn a_request_that_cannot_fit_the_context_window_is_never_sent() {
    let mut h = start_with(ApprovalPolicy::Auto, detect_languages(), |c| {
        c.context_window = Some(300);
        c.max_tokens = Some(100);
    })
    .await;
    h.server.push(Reply::text("ok"));
    // The task alone is larger than the window: nothing to cut or summarize.
    h.input(&"many words ".repeat(200));
    let events = h.task_end().await;
    let error = events.iter().find_map(|e| match e {
        Event::Error { message, .. } => Some(message.clone()),
        _ => None,
    });
    let error = error.expect("an error");
    assert!(error.contains("even after compaction"), "{error}");
    assert!(error.contains("a context window of 300 tokens"), "{error}");
    assert!(h.server.chat_requests().is_empty(), "nothing was sent");
}

fn finished(events: &[Event]) -> Vec<(RunStatus, u64)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::RunFinished {
                status,
                output_bytes,
                ..
            } => Some((status.clone(), *output_bytes)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_program_waiting_for_input_nobody_can_give_is_stopped_and_explained() {
    let mut h = start(ApprovalPolicy::Auto, detect_languages()).await;
    h.server
        .push(Reply::execute(
            "python",
            "kept = 7\nname = input('Your name? ')\nprint('hi', name)",
        ))
        .push(Reply::execute("python", "print(kept)"))
        .push(Reply::text("ok"));
    h.input("greet me");
    let events = h.task_end().await;
    assert_eq!(completion(&events), StopReason::Done);
    let runs = finished(&events);
    assert_eq!(
        runs[0].0,
        RunStatus::WaitingForInput {
            prompt: "Your name? ".into()
        },
        "{events:?}"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::InputRequested { .. })),
        "nobody to ask: {events:?}"
    );
    let requests = h.server.chat_requests();
    let told = requests[1].last_message_text();
    assert!(
        told.contains("wait for input on stdin") && told.contains("\"Your name?\""),
        "{told}"
    );
    // Only the run was stopped: the kernel kept its state.
    assert_eq!(requests[2].last_message_text(), "7\n");
}

#[tokio::test]
async fn the_user_can_answer_a_program_waiting_for_input() {
    let mut h = start_with(ApprovalPolicy::Auto, detect_languages(), |c| {
        c.user_input = true;
    })
    .await;
    h.server
        .push(Reply::execute(
            "python",
            "name = input('Your name? ')\nprint('hi', name)",
        ))
        .push(Reply::text("done"));
    h.input("greet me");
    let events = h.until(|e| matches!(e, Event::InputRequested { .. })).await;
    let Some(Event::InputRequested { id, prompt }) = events.last().cloned() else {
        unreachable!()
    };
    assert_eq!(prompt, "Your name? ");
    // Input for another run goes nowhere.
    h.ops
        .send(Op::Input {
            id: oi_protocol::RunId(id.0 + 1),
            text: "Mallory\n".into(),
        })
        .unwrap();
    h.ops
        .send(Op::Input {
            id,
            text: "Ada\n".into(),
        })
        .unwrap();
    let events = h.task_end().await;
    assert_eq!(finished(&events)[0].0, RunStatus::Ok, "{events:?}");
    // The model sees the exchange as on a terminal.
    assert_eq!(
        h.server.chat_requests()[1].last_message_text(),
        "Your name? Ada\nhi Ada\n"
    );
}

#[tokio::test]
async fn a_run_over_its_time_limit_is_stopped_and_the_model_told() {
    let mut h = start_with(ApprovalPolicy::Auto, detect_languages(), |c| {
        c.run_timeout = Some(Duration::from_secs(1));
    })
    .await;
    h.server
        .push(Reply::execute(
            "python",
            "kept = 5\nimport time\ntime.sleep(60)",
        ))
        .push(Reply::execute("python", "print(kept)"))
        .push(Reply::text("ok"));
    h.input("wait");
    let events = h.task_end().await;
    assert_eq!(
        finished(&events)[0].0,
        RunStatus::TimedOut {
            seconds: 1,
            kernel_restarted: false
        }
    );
    let requests = h.server.chat_requests();
    let told = requests[1].last_message_text();
    assert!(told.contains("stopped after 1 s"), "{told}");
    assert_eq!(requests[2].last_message_text(), "5\n");
}

#[tokio::test]
async fn a_flood_of_output_is_paced_for_the_user_and_cut_for_the_model() {
    let mut h = start_with(ApprovalPolicy::Auto, detect_languages(), |c| {
        c.max_output = 1000;
    })
    .await;
    h.server
        .push(Reply::execute(
            "python",
            "import sys\nsys.stdout.write('first line\\n')\nfor i in range(200_000):\n    sys.stdout.write('%099d\\n' % i)\nprint('last line')",
        ))
        .push(Reply::text("ok"));
    h.input("flood");
    let events = h.task_end().await;
    let shown: usize = events
        .iter()
        .map(|e| match e {
            Event::OutputDelta { text, .. } => text.len(),
            _ => 0,
        })
        .sum();
    let skipped: u64 = events
        .iter()
        .map(|e| match e {
            Event::OutputSkipped { bytes, .. } => *bytes,
            _ => 0,
        })
        .sum();
    let total = 11 + 200_000 * 100 + 10;
    let runs = finished(&events);
    assert_eq!(runs[0], (RunStatus::Ok, total));
    // A burst of 512 KiB, then 256 KiB a second for as long as the run
    // lasted (longer on a loaded machine), with a second to spare.
    let seconds = events
        .iter()
        .find_map(|e| match e {
            Event::RunFinished { duration_ms, .. } => Some(*duration_ms),
            _ => None,
        })
        .unwrap()
        / 1000
        + 1;
    let paced = 512 * 1024 + 256 * 1024 * seconds as usize;
    assert!(
        shown <= paced,
        "{shown} bytes shown in a run of {seconds} s (at most {paced})"
    );
    assert!(skipped > 0 || paced >= total as usize, "{skipped}");
    assert_eq!(shown as u64 + skipped, total);
    // The end of the output is always shown.
    let last_delta = events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::OutputDelta { text, .. } => Some(text.clone()),
            _ => None,
        })
        .unwrap();
    assert!(last_delta.ends_with("last line\n"), "{last_delta:?}");
    let told = h.server.chat_requests()[1].last_message_text();
    assert!(told.starts_with("first line\n"), "{told:.200}");
    assert!(told.ends_with("last line\n"), "{told:.200}");
    assert!(told.contains("characters of output cut"));
    assert!(told.len() < 1200, "{}", told.len());
}

#[tokio::test]
async fn images_reach_a_vision_model_and_only_the_last_few_stay() {
    let mut h = start_with(ApprovalPolicy::Auto, detect_languages(), |c| {
        c.vision = true;
    })
    .await;
    let plot = "class Png:\n    def _repr_png_(self):\n        return b'\\x89PNG\\r\\n\\x1a\\n' + bytes([@])\ndisplay(Png())";
    for n in 1..=4 {
        h.server
            .push(Reply::execute("python", &plot.replace('@', &n.to_string())));
    }
    h.server.push(Reply::text("four plots"));
    h.input("plot four times");
    let events = h.task_end().await;
    let images: Vec<&String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Image {
                path, media_type, ..
            } if media_type == "image/png" => Some(path),
            _ => None,
        })
        .collect();
    assert_eq!(images.len(), 4, "{events:?}");
    for (n, path) in images.iter().enumerate() {
        let bytes = fs_err::read(path).unwrap();
        assert_eq!(bytes[8] as usize, n + 1);
    }
    let requests = h.server.chat_requests();
    let image_urls = |i: usize| -> Vec<String> {
        requests[i]
            .messages()
            .iter()
            .filter_map(|m| m["content"].as_array())
            .flatten()
            .filter_map(|p| p["image_url"]["url"].as_str().map(str::to_owned))
            .collect()
    };
    assert_eq!(image_urls(1), ["data:image/png;base64,iVBORw0KGgoB"]);
    // After the fourth plot, only the last three are still sent.
    assert_eq!(
        image_urls(4),
        [
            "data:image/png;base64,iVBORw0KGgoC",
            "data:image/png;base64,iVBORw0KGgoD",
            "data:image/png;base64,iVBORw0KGgoE",
        ]
    );
}

#[tokio::test]
async fn auto_approval_still_asks_about_risky_code_and_says_why() {
    let mut h = start(ApprovalPolicy::Auto, detect_languages()).await;
    h.server
        .push(Reply::execute("shell", "echo safe > notes.txt"))
        .push(Reply::execute("shell", "rm -rf ~/old-photos"))
        .push(Reply::text("ok"));
    h.input("tidy up");
    let events = h
        .until(|e| matches!(e, Event::ApprovalRequested { .. }))
        .await;
    // The safe run went ahead without asking.
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, Event::RunFinished { .. }))
            .count(),
        1
    );
    let Some(Event::ApprovalRequested {
        id, code, risks, ..
    }) = events.last().cloned()
    else {
        unreachable!()
    };
    assert_eq!(code, "rm -rf ~/old-photos");
    assert_eq!(risks.len(), 1, "{risks:?}");
    assert!(
        risks[0].starts_with("deletes files outside the workspace"),
        "{risks:?}"
    );
    h.ops
        .send(Op::Approve {
            id,
            decision: ReviewDecision::Decline,
        })
        .unwrap();
    let events = h.task_end().await;
    assert_eq!(completion(&events), StopReason::Done);
    assert_eq!(
        h.server.chat_requests()[2].last_message_text(),
        "The user declined to run this code."
    );
}

#[tokio::test]
async fn without_anyone_to_ask_risky_code_is_not_run_and_the_model_learns_why() {
    let mut h = start(ApprovalPolicy::Auto, detect_languages()).await;
    h.server
        .push(Reply::execute("shell", "sudo apt-get install -y cowsay"))
        .push(Reply::text("I will not."));
    h.input("install cowsay");
    let events = h
        .until(|e| matches!(e, Event::ApprovalRequested { .. }))
        .await;
    let Some(Event::ApprovalRequested { id, .. }) = events.last().cloned() else {
        unreachable!()
    };
    h.ops
        .send(Op::Approve {
            id,
            decision: ReviewDecision::NoApprover,
        })
        .unwrap();
    h.task_end().await;
    let told = h.server.chat_requests()[1].last_message_text();
    assert!(
        told.starts_with("Not run: this code looks risky — runs as root (sudo)"),
        "{told}"
    );
}

#[tokio::test]
async fn approval_never_runs_risky_code_with_a_warning() {
    let mut h = start(ApprovalPolicy::Never, detect_languages()).await;
    // Risky (a delete outside the workspace), and harmless: nothing is there.
    h.server
        .push(Reply::execute(
            "shell",
            "rm -rf /nonexistent-oi-test/victim",
        ))
        .push(Reply::text("gone"));
    h.input("delete it");
    let events = h.task_end().await;
    assert!(
        events.iter().any(|e| matches!(e, Event::Warning { message } if message.starts_with("running risky code without asking"))),
        "{events:?}"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::ApprovalRequested { .. }))
    );
    assert_eq!(finished(&events)[0].0, RunStatus::Ok);
}

#[tokio::test]
async fn the_loop_guard_stops_a_model_that_repeats_a_failing_run() {
    let mut h = start(ApprovalPolicy::Auto, detect_languages()).await;
    // The model varies the code a little, but the error stays the same.
    for n in 1..=5 {
        h.server.push(Reply::execute(
            "python",
            &format!("x = {n}\nprint(undefined_name)"),
        ));
    }
    h.input("print it");
    let events = h.task_end().await;
    let runs = events
        .iter()
        .filter(|e| matches!(e, Event::RunFinished { .. }))
        .count();
    assert_eq!(runs, 3, "stopped after the third identical error");
    match completion(&events) {
        StopReason::LoopGuard { repeats, summary } => {
            assert_eq!(repeats, 3);
            assert!(
                summary.contains("NameError: name 'undefined_name' is not defined"),
                "{summary}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(h.server.chat_requests().len(), 3);
}

#[tokio::test]
async fn the_same_code_three_times_stops_the_task_even_when_it_works() {
    let mut h = start_with(ApprovalPolicy::Auto, detect_languages(), |c| {
        c.loop_guard_max_repeats = 3;
    })
    .await;
    for _ in 0..4 {
        h.server.push(Reply::execute("shell", "echo same"));
    }
    h.input("loop");
    let events = h.task_end().await;
    assert!(
        matches!(completion(&events), StopReason::LoopGuard { summary, .. } if summary.contains("same shell code 3 times")),
        "{events:?}"
    );
}

#[tokio::test]
async fn max_time_stops_a_task_and_bounds_its_runs() {
    let mut h = start_with(ApprovalPolicy::Auto, detect_languages(), |c| {
        c.max_time = Some(Duration::from_secs(1));
    })
    .await;
    h.server
        .push(Reply::execute("python", "import time\ntime.sleep(30)"))
        .push(Reply::text("never asked"));
    h.input("sleep");
    let started = std::time::Instant::now();
    let events = h.task_end().await;
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(completion(&events), StopReason::TimeLimit { limit_secs: 1 });
    assert!(events.iter().any(|e| matches!(
        e,
        Event::RunFinished {
            status: RunStatus::TimedOut { .. },
            ..
        }
    )));
    assert_eq!(h.server.chat_requests().len(), 1);
}

impl Harness {
    /// Sends `op` and returns the events up to the first matching `until`.
    async fn op_until(&mut self, op: Op, until: impl Fn(&Event) -> bool) -> Vec<Event> {
        self.ops.send(op).unwrap();
        self.until(until).await
    }
}

#[tokio::test]
async fn harness_approval_and_verbosity_change_between_tasks() {
    let mut h = start(ApprovalPolicy::Ask, detect_languages()).await;
    let events = h
        .op_until(
            Op::SetHarness {
                harness: HarnessKind::Markdown,
            },
            |e| matches!(e, Event::HarnessChanged { .. }),
        )
        .await;
    assert_eq!(
        events.last(),
        Some(&Event::HarnessChanged {
            harness: HarnessKind::Markdown
        })
    );
    // `never` is chosen when a session starts, on purpose, not switched to.
    let events = h
        .op_until(
            Op::SetApproval {
                policy: ApprovalPolicy::Never,
            },
            |e| matches!(e, Event::Error { .. } | Event::ApprovalChanged { .. }),
        )
        .await;
    assert!(
        matches!(events.last(), Some(Event::Error { message, .. }) if message.contains("approval `never` cannot be switched to")),
        "{events:?}"
    );
    h.op_until(
        Op::SetApproval {
            policy: ApprovalPolicy::Auto,
        },
        |e| matches!(e, Event::ApprovalChanged { .. }),
    )
    .await;
    h.ops.send(Op::SetVerbose { verbose: true }).unwrap();
    h.server
        .push(Reply::text("```python\nprint(2)\n```"))
        .push(Reply::text("done"));
    h.input("go");
    let events = h.task_end().await;
    // Markdown harness: no tools; auto approval: no question.
    let raw = events.iter().find_map(|e| match e {
        Event::RawRequest { body } => Some(body.clone()),
        _ => None,
    });
    let raw = raw.expect("a raw request");
    assert!(raw.get("tools").is_none(), "{raw}");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::ApprovalRequested { .. }))
    );
    assert_eq!(completion(&events), StopReason::Done);
}

#[tokio::test]
async fn reset_forgets_the_conversation_and_restarts_the_kernels() {
    let mut h = start(ApprovalPolicy::Auto, detect_languages()).await;
    h.server
        .push(Reply::execute("python", "kept = 1"))
        .push(Reply::text("set"))
        .push(Reply::execute("python", "print('kept' in globals())"))
        .push(Reply::text("checked"));
    h.input("set it");
    h.task_end().await;
    h.op_until(Op::Reset, |e| matches!(e, Event::SessionReset))
        .await;
    h.input("check it");
    h.task_end().await;
    let requests = h.server.chat_requests();
    // Only the new task: system prompt and one user message.
    assert_eq!(requests[2].messages().len(), 2);
    assert_eq!(requests[3].last_message_text(), "False\n");
}

#[tokio::test]
async fn stats_save_and_load_work_on_the_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = start(ApprovalPolicy::Auto, detect_languages()).await;
    h.server.push(Reply::text("hello there").usage(120, 7));
    h.input("hi");
    h.task_end().await;
    let events = h
        .op_until(Op::Stats, |e| matches!(e, Event::Stats { .. }))
        .await;
    let Some(Event::Stats {
        context_tokens,
        total,
        requests,
        messages,
        ..
    }) = events.last().cloned()
    else {
        unreachable!()
    };
    assert!(context_tokens > 50, "{context_tokens}");
    assert_eq!(
        (total.input_tokens, total.output_tokens, requests, messages),
        (120, 7, 1, 2)
    );

    let path = dir.path().join("conversations/first.json");
    let path_text = path.display().to_string();
    h.op_until(
        Op::Save {
            path: path_text.clone(),
        },
        |e| matches!(e, Event::Saved { .. }),
    )
    .await;
    h.op_until(Op::Reset, |e| matches!(e, Event::SessionReset))
        .await;
    let events = h
        .op_until(Op::Load { path: path_text }, |e| {
            matches!(e, Event::Loaded { .. })
        })
        .await;
    assert!(matches!(
        events.last(),
        Some(Event::Loaded { messages: 2, .. })
    ));
    h.server.push(Reply::text("yes, we met"));
    h.input("do you remember me?");
    h.task_end().await;
    let requests = h.server.chat_requests();
    assert_eq!(
        requests[1].messages().len(),
        4,
        "system + the loaded two + the new one"
    );

    let bad = dir.path().join("bad.json");
    fs_err::write(&bad, "{\"not\": \"a conversation\"}").unwrap();
    let events = h
        .op_until(
            Op::Load {
                path: bad.display().to_string(),
            },
            |e| matches!(e, Event::Error { .. }),
        )
        .await;
    assert!(
        matches!(events.last(), Some(Event::Error { message, .. }) if message.contains("is not a conversation saved by oi")),
        "{events:?}"
    );
}

#[tokio::test]
async fn attached_images_reach_a_vision_model_and_are_explained_to_others() {
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("shot.png");
    fs_err::write(&image, b"\x89PNG\r\n\x1a\nfake").unwrap();
    let image = image.display().to_string();
    for vision in [true, false] {
        let mut h = start_with(ApprovalPolicy::Auto, detect_languages(), |c| {
            c.vision = vision
        })
        .await;
        h.server.push(Reply::text("I see it"));
        h.ops
            .send(Op::UserInput {
                text: "what is this?".into(),
                images: vec![image.clone()],
            })
            .unwrap();
        h.task_end().await;
        let request = &h.server.chat_requests()[0];
        let user = &request.messages()[1];
        if vision {
            let parts = user["content"].as_array().unwrap();
            assert_eq!(parts[0]["text"], "what is this?");
            assert!(
                parts[1]["image_url"]["url"]
                    .as_str()
                    .unwrap()
                    .starts_with("data:image/png;base64,")
            );
        } else {
            let text = user["content"].as_str().unwrap();
            assert!(text.contains("cannot see images"), "{text}");
        }
    }
}

#[tokio::test]
async fn reasoning_is_reported_before_the_reply_and_not_sent_back() {
    let mut h = start(ApprovalPolicy::Auto, detect_languages()).await;
    h.server
        .push(Reply::text("It is 4.").with_thought("Two and two make four."))
        .push(Reply::text("ok"));
    h.input("what is 2 + 2?");
    let events = h.task_end().await;
    let thought: String = events
        .iter()
        .filter_map(|e| match e {
            Event::ReasoningDelta { delta } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(thought, "Two and two make four.");
    let reasoning = events
        .iter()
        .position(|e| matches!(e, Event::Reasoning { text } if text == "Two and two make four."))
        .expect("a reasoning event");
    let answer = events
        .iter()
        .position(|e| matches!(e, Event::AssistantMessage { .. }))
        .unwrap();
    assert!(reasoning < answer, "{events:?}");
    h.input("thanks");
    h.task_end().await;
    let requests = h.server.model_requests();
    assert!(
        !requests[1].body.to_string().contains("make four"),
        "reasoning text is not sent back: {}",
        requests[1].body
    );
}

/// What the runs among `events` printed, joined.
fn output_of(events: &[Event]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            Event::OutputDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_user_runs_code_in_the_session_kernels_without_the_model() {
    let mut h = start(ApprovalPolicy::Ask, detect_languages()).await;
    h.until(|e| matches!(e, Event::SessionConfigured { .. }))
        .await;
    let events = h
        .op_until(
            Op::Run {
                language: "python".into(),
                code: "x = 41\nprint(x + 1)".into(),
            },
            |e| matches!(e, Event::RunFinished { .. }),
        )
        .await;
    let output = output_of(&events);
    assert_eq!(output, "42\n", "{events:#?}");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::ApprovalRequested { .. })),
        "the user's own code is not asked about"
    );
    // The kernel keeps its state, and the conversation stays empty.
    let events = h
        .op_until(
            Op::Run {
                language: "py".into(),
                code: "print(x)".into(),
            },
            |e| matches!(e, Event::RunFinished { .. }),
        )
        .await;
    let output = output_of(&events);
    assert_eq!(output, "41\n", "{events:#?}");
    let events = h
        .op_until(
            Op::Run {
                language: "cobol".into(),
                code: "DISPLAY 1".into(),
            },
            |e| matches!(e, Event::RunSkipped { .. }),
        )
        .await;
    let Some(Event::RunSkipped {
        reason: SkipReason::Unavailable { message },
        ..
    }) = events.last()
    else {
        panic!("{events:#?}")
    };
    assert!(message.contains("`cobol`"), "{message}");
    let events = h
        .op_until(Op::Stats, |e| matches!(e, Event::Stats { .. }))
        .await;
    assert!(
        matches!(events.last(), Some(Event::Stats { messages: 0, .. })),
        "{events:#?}"
    );
    assert!(h.server.model_requests().is_empty());
}

#[tokio::test]
async fn a_restored_conversation_is_what_the_model_sees_next() {
    let mut h = start(ApprovalPolicy::Auto, detect_languages()).await;
    let events = h
        .op_until(
            Op::Restore {
                messages: vec![
                    oi_protocol::Message::user("my name is Ada"),
                    oi_protocol::Message::Assistant {
                        text: "Hello Ada.".into(),
                        tool_calls: Vec::new(),
                        reasoning: Vec::new(),
                    },
                ],
            },
            |e| matches!(e, Event::Restored { .. }),
        )
        .await;
    assert!(matches!(
        events.last(),
        Some(Event::Restored { messages: 2 })
    ));
    h.server.push(Reply::text("You are Ada."));
    h.input("what is my name?");
    h.task_end().await;
    let request = &h.server.chat_requests()[0];
    let texts: Vec<String> = request
        .messages()
        .iter()
        .map(|m| m["content"].to_string())
        .collect();
    assert_eq!(texts.len(), 4, "system, the two restored, the new one");
    assert!(texts[1].contains("my name is Ada") && texts[2].contains("Hello Ada."));

    let events = h
        .op_until(Op::SystemPrompt, |e| {
            matches!(e, Event::SystemPrompt { .. })
        })
        .await;
    let Some(Event::SystemPrompt { text }) = events.last() else {
        unreachable!()
    };
    assert_eq!(
        Some(text.as_str()),
        request.messages()[0]["content"].as_str(),
        "the prompt reported is the one sent"
    );
}
