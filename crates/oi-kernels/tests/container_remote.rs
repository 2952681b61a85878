//! A container engine on another machine (`[container] host`): here a
//! second Podman serving its API on a TCP port of this machine, which oi
//! treats as remote — the workspace is copied there before each run and
//! back after it, never mounted.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test code: a panic is a test failure"
)]

use std::time::Duration;

use oi_kernels::{ContainerSpec, KernelManager, LanguageSpec, RunControl, RunEvent};
use oi_protocol::{OutputStream, RunStatus, SandboxMode};
use tokio_util::sync::CancellationToken;

async fn run(k: &mut KernelManager, language: &str, code: &str) -> (RunStatus, String, String) {
    let mut stdout = String::new();
    let mut stderr = String::new();
    let outcome = tokio::time::timeout(
        Duration::from_secs(120),
        k.run(
            language,
            code,
            &mut |event| {
                if let RunEvent::Output { stream, text } = event {
                    match stream {
                        OutputStream::Stdout => stdout.push_str(&text),
                        OutputStream::Stderr => stderr.push_str(&text),
                    }
                }
            },
            RunControl::cancel(&CancellationToken::new()),
        ),
    )
    .await
    .expect("the run must end")
    .unwrap();
    (outcome.status, stdout, stderr)
}

#[tokio::test]
async fn the_workspace_is_copied_to_a_remote_engine_and_back() {
    let Some((service, image)) = oi_testkit::PodmanService::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ws = fs_err::canonicalize(dir.path()).unwrap();
    fs_err::create_dir_all(ws.join(".git")).unwrap();
    fs_err::write(ws.join(".git/config"), "[core]\n").unwrap();
    fs_err::create_dir_all(ws.join("data")).unwrap();
    fs_err::write(ws.join("data/input.csv"), "a,b\n1,2\n").unwrap();
    fs_err::write(ws.join("old.txt"), "to delete").unwrap();
    let images = tempfile::tempdir().unwrap();
    let mut spec = ContainerSpec::new(image);
    spec.host = Some(service.url.clone());
    spec.sync_max_file = 1 << 20;
    fs_err::write(ws.join("big.bin"), vec![7u8; 2 << 20]).unwrap();
    let mut k = KernelManager::new(
        vec![
            LanguageSpec::python("/usr/bin/python3"),
            LanguageSpec::shell("/bin/bash"),
        ],
        &ws,
    )
    .with_image_dir(images.path())
    .with_sandbox(oi_sandbox::Policy::new(SandboxMode::Container, &ws))
    .with_container(spec);

    let (status, out, err) = run(
        &mut k,
        "python",
        "import os\nrows = open('data/input.csv').read().splitlines()\nos.makedirs('out', exist_ok=True)\nopen('out/sum.txt', 'w').write(str(sum(map(int, rows[1].split(',')))))\nos.remove('old.txt')\nopen('.git/config', 'a').write('tampered')\nprint(os.path.exists('big.bin'), os.getcwd())",
    )
    .await;
    assert_eq!(status, RunStatus::Ok, "{out}{err}");
    // The same path there; the large file was not copied (and said so).
    assert_eq!(out, format!("False {}\n", ws.display()));
    assert!(
        err.contains("big.bin (2 MB) is not copied to the container"),
        "{err}"
    );
    // Back here: the new file, the deletion; not the change to .git.
    assert_eq!(fs_err::read_to_string(ws.join("out/sum.txt")).unwrap(), "3");
    assert!(!ws.join("old.txt").exists());
    assert_eq!(
        fs_err::read_to_string(ws.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(ws.join("big.bin").exists());

    // A change made here between runs reaches the next one.
    fs_err::write(ws.join("data/input.csv"), "a,b\n10,20\n").unwrap();
    let (status, out, _) = run(
        &mut k,
        "shell",
        "cut -d, -f2 data/input.csv | tail -1; ls out",
    )
    .await;
    assert_eq!((status, out.as_str()), (RunStatus::Ok, "20\nsum.txt\n"));

    // An image the code shows is here by the time it is announced.
    let mut shown = Vec::new();
    let outcome = k
        .run(
            "python",
            "class Picture:\n    def _repr_png_(self):\n        return b'\\x89PNG fake'\ndisplay(Picture())",
            &mut |event| {
                if let RunEvent::Image { path, .. } = event {
                    shown.push(fs_err::read(&path).unwrap());
                }
            },
            RunControl::cancel(&CancellationToken::new()),
        )
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Ok);
    assert_eq!(shown, vec![b"\x89PNG fake".to_vec()]);

    // A program waiting for input is noticed through the engine, and fed.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let mut asked = Vec::new();
    let mut out = String::new();
    let never = CancellationToken::new();
    let outcome = k
        .run(
            "python",
            "name = input('name? ')\nprint('hello', name)",
            &mut |event| match event {
                RunEvent::WaitingForInput { prompt } => {
                    asked.push(prompt);
                    tx.send("Ada\n".to_owned()).unwrap();
                }
                RunEvent::Output { text, .. } => out.push_str(&text),
                _ => {}
            },
            RunControl {
                cancel: &never,
                timeout: Some(Duration::from_secs(60)),
                input: Some(&mut rx),
            },
        )
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Ok, "{out}");
    assert_eq!(asked, vec!["name? ".to_owned()]);
    assert!(out.ends_with("hello Ada\n"), "{out}");

    // Interrupts reach the code through the engine.
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(2)).await;
        stopper.cancel();
    });
    let outcome = k
        .run(
            "python",
            "import time\ntime.sleep(60)",
            &mut |_| {},
            RunControl::cancel(&cancel),
        )
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Interrupted);
    k.shutdown().await;
    // The container (and its volume) went with the session.
    let listed = std::process::Command::new("podman")
        .args([
            "--remote",
            "--url",
            &service.url,
            "ps",
            "-a",
            "--filter",
            "label=oi.owner",
            "--format",
            "{{.Names}}",
        ])
        .output()
        .unwrap();
    let mark = format!("oi-{}-", std::process::id());
    assert!(
        !String::from_utf8_lossy(&listed.stdout).contains(&mark),
        "{listed:?}"
    );
}
