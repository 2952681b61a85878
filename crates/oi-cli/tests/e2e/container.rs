//! `--sandbox container` through the binary: the session's code runs in a
//! container of the test image, writes land in the workspace (and can be
//! undone), and the container goes with the session, even a killed one.

use oi_testkit::Reply;

use crate::support::{TestEnv, last_message_text};

/// A test environment whose configuration runs code in a container of the
/// test image, or `None` (skipped) without an engine and the image.
async fn container_env() -> Option<(TestEnv, String)> {
    let image = oi_testkit::container_image()?;
    let env = TestEnv::new().await;
    env.write_config(&format!(
        "model_provider = \"mock\"\nmodel = \"mock-model\"\nsandbox = \"container\"\n\n[container]\nimage = \"{image}\"\npids = 200\nmemory = \"512m\"\n\n[container.env]\nOI_TEST_MARK = \"inside\"\n\n[model_providers.mock]\nname = \"the model server\"\nbase_url = \"{}\"\n",
        env.server.base_url()
    ));
    Some((env, image))
}

fn engine() -> &'static str {
    if oi_testkit::installed("podman") {
        "podman"
    } else {
        "docker"
    }
}

/// The names of this machine's containers that oi labelled.
fn oi_containers() -> Vec<String> {
    let out = std::process::Command::new(engine())
        .args([
            "ps",
            "-a",
            "--filter",
            "label=oi.owner",
            "--format",
            "{{.Names}}",
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Whether `check` holds within `seconds` (containers start slowly on a
/// busy machine).
async fn eventually(seconds: u64, mut check: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    while std::time::Instant::now() < deadline {
        if check() {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    check()
}

#[tokio::test]
async fn code_runs_in_the_container_and_its_changes_can_be_undone() {
    let Some((env, _image)) = container_env().await else {
        return;
    };
    let cwd = std::fs::canonicalize(env.cwd.path()).unwrap();
    env.server
        .push(Reply::execute(
            "python",
            "import os\nopen('result.txt', 'w').write('made inside')\nprint(os.getcwd(), os.environ['OI_TEST_MARK'])",
        ))
        .push(Reply::text("Done."));
    let out = env.exec(&["--yes", "make the result"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(cwd.join("result.txt").exists(), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(cwd.join("result.txt")).unwrap(),
        "made inside"
    );
    let told = last_message_text(&env.server, 1);
    // The same path inside as outside, and the variables of `[container]`.
    assert!(
        told.contains(&format!("{} inside", cwd.display())),
        "{told}"
    );
    let undo = env.run(&["undo"], None).await;
    assert_eq!(undo.code, 0, "{undo:?}");
    assert!(!cwd.join("result.txt").exists());
}

#[tokio::test]
async fn config_show_names_the_container_and_a_missing_image_is_an_error() {
    let Some((env, _image)) = container_env().await else {
        return;
    };
    let show = env.run(&["config", "show"], None).await;
    assert_eq!(show.code, 0, "{show:?}");
    for line in [
        "sandbox = \"container\"",
        "container.pids = 200",
        "container.memory = \"512m\"",
        "container.network = \"none\"",
        "container.env.OI_TEST_MARK = \"…\"",
    ] {
        assert!(show.stdout.contains(line), "{line}: {}", show.stdout);
    }
    env.server
        .push(Reply::execute("python", "print(1)"))
        .push(Reply::text("It did not run."));
    let out = env
        .exec(&[
            "-c",
            "container.image=localhost/oi-no-such-image:1",
            "--yes",
            "print one",
        ])
        .await;
    let told = last_message_text(&env.server, 1);
    assert!(
        told.contains(
            "the image `localhost/oi-no-such-image:1` is not here and could not be pulled"
        ),
        "{told}\n{out:?}"
    );
}

#[tokio::test]
async fn the_container_goes_when_the_session_is_killed() {
    let Some((env, _image)) = container_env().await else {
        return;
    };
    env.server
        .push(Reply::execute("shell", "echo started; sleep 300"))
        .push(Reply::text("Done."));
    let mut child = env
        .command(&["exec", "--yes", "wait a while"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    let mark = format!("oi-{pid}-");
    let ours = || oi_containers().into_iter().find(|n| n.starts_with(&mark));
    assert!(
        eventually(90, || ours().is_some()).await,
        "no container for the session"
    );
    let _ = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status();
    let _ = child.wait().await;
    assert!(
        eventually(60, || ours().is_none()).await,
        "the container of a killed session is still there: {:?}",
        ours()
    );
}

#[tokio::test]
async fn interpreter_sandbox_runs_a_command_in_a_container_like_the_sessions() {
    let Some((env, _image)) = container_env().await else {
        return;
    };
    let cwd = std::fs::canonicalize(env.cwd.path()).unwrap();
    let out = env
        .run(
            &[
                "sandbox",
                "--",
                "sh",
                "-c",
                "pwd; echo kept > here.txt; touch /etc/oi-escape || echo refused; echo $OI_TEST_MARK; exit 3",
            ],
            None,
        )
        .await;
    assert_eq!(out.code, 3, "{out:?}");
    assert_eq!(
        out.stdout,
        format!("{}\nrefused\ninside\n", cwd.display()),
        "{out:?}"
    );
    assert!(
        out.stderr.contains("sandbox: container: writes in"),
        "{out:?}"
    );
    assert!(out.stderr.contains("Read-only file system"), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(cwd.join("here.txt")).unwrap(),
        "kept\n"
    );
}

#[tokio::test]
async fn eval_runs_each_attempt_in_its_own_container() {
    let Some((env, _image)) = container_env().await else {
        return;
    };
    let dir = crate::eval::suite(env.cwd.path(), &["one", "two"]);
    for name in ["one", "two"] {
        env.server
            .answer_when(&format!("MADE-{name}"), Reply::text("Done."))
            .answer_when(
                &format!("make {name}.txt"),
                Reply::execute(
                    "python",
                    &format!(
                        "import socket\nopen('{name}.txt', 'w').write('x')\nprint('MADE-{name}', 'HOST-' + socket.gethostname())"
                    ),
                ),
            );
    }
    let out_file = env.cwd.path().join("r.json");
    let out = env
        .run(
            &[
                "eval",
                dir.to_str().unwrap(),
                "--jobs",
                "2",
                "--sandbox",
                "container",
                "--out",
                out_file.to_str().unwrap(),
            ],
            None,
        )
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("2 of 2 attempts passed"), "{out:?}");
    let hosts: std::collections::BTreeSet<String> = env
        .server
        .model_requests()
        .iter()
        .map(|r| r.last_message_text())
        .filter_map(|text| {
            text.split_whitespace()
                .find_map(|w| w.strip_prefix("HOST-").map(str::to_owned))
        })
        .collect();
    assert_eq!(hosts.len(), 2, "{hosts:?}");
    let here = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert!(!hosts.contains(here.trim()), "{hosts:?}");
}

#[tokio::test]
async fn a_remote_engine_gets_a_copy_of_the_workspace_and_the_changes_come_back() {
    let Some((service, _image)) = oi_testkit::PodmanService::start() else {
        return;
    };
    let Some((env, _image)) = container_env().await else {
        return;
    };
    let cwd = std::fs::canonicalize(env.cwd.path()).unwrap();
    std::fs::write(cwd.join("names.txt"), "ada\ngrace\n").unwrap();
    env.server
        .push(Reply::execute(
            "python",
            "names = open('names.txt').read().split()\nopen('upper.txt', 'w').write(' '.join(n.upper() for n in names))\nprint('wrote', len(names))",
        ))
        .push(Reply::text("Done."));
    let host = format!("container.host={}", service.url);
    let out = env.exec(&["-c", &host, "--yes", "shout the names"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        std::fs::read_to_string(cwd.join("upper.txt")).unwrap(),
        "ADA GRACE",
        "{out:?}"
    );
    assert!(last_message_text(&env.server, 1).contains("wrote 2"));
    // Checkpointed before the run, like any other: undo removes it.
    let undo = env.run(&["undo"], None).await;
    assert_eq!(undo.code, 0, "{undo:?}");
    assert!(!cwd.join("upper.txt").exists());
}

#[tokio::test]
async fn interpreter_sandbox_with_a_remote_engine_copies_the_workspace_there_and_back() {
    let Some((service, _image)) = oi_testkit::PodmanService::start() else {
        return;
    };
    let Some((env, _image)) = container_env().await else {
        return;
    };
    let cwd = std::fs::canonicalize(env.cwd.path()).unwrap();
    std::fs::write(cwd.join("in.txt"), "from here\n").unwrap();
    let host = format!("container.host={}", service.url);
    let out = env
        .run(
            &[
                "sandbox",
                "-c",
                &host,
                "--",
                "sh",
                "-c",
                "cat in.txt; echo made there > out.txt; rm in.txt; exit 4",
            ],
            None,
        )
        .await;
    assert_eq!(out.code, 4, "{out:?}");
    assert_eq!(out.stdout, "from here\n", "{out:?}");
    assert_eq!(
        std::fs::read_to_string(cwd.join("out.txt")).unwrap(),
        "made there\n"
    );
    assert!(!cwd.join("in.txt").exists());
}
