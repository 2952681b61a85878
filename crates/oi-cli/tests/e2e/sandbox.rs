//! The sandbox through the binary: what code may write, how a refusal is
//! reported, `--add-dir`, the network switch, `interpreter sandbox`, and
//! the approval policy that needs its own flag.

use oi_testkit::Reply;

use crate::support::{TestEnv, last_message_text, run_command};

/// A folder outside the system's temporary folder (which workspace-write
/// mode lets code write): `/var/tmp`, else Cargo's target folder when it is
/// not under `/tmp` itself.
fn outside_base() -> std::path::PathBuf {
    let temp = std::env::temp_dir();
    for candidate in ["/var/tmp", env!("CARGO_TARGET_TMPDIR")] {
        let path = std::path::Path::new(candidate);
        if path.is_dir() && !path.starts_with("/tmp") && !path.starts_with(&temp) {
            return path.to_path_buf();
        }
    }
    panic!(
        "no folder outside /tmp to test the sandbox with (tried /var/tmp and Cargo's target folder)"
    )
}

/// A folder outside the workspace and the temporary folder.
fn outside_dir() -> tempfile::TempDir {
    tempfile::tempdir_in(outside_base()).unwrap()
}

fn landlock() -> bool {
    oi_testkit::present_or_skip(
        oi_testkit::Need::Sandbox,
        oi_sandbox::support().landlock,
        "this kernel has no Landlock",
    )
}

#[tokio::test]
async fn a_write_outside_the_workspace_is_blocked_and_explained() {
    if !landlock() {
        return;
    }
    let env = TestEnv::new().await;
    let dir = outside_dir();
    let outside = dir.path().join("notes.txt");
    env.server
        .push(Reply::execute(
            "python",
            &format!("open({:?}, 'w').write('x')", outside.display().to_string()),
        ))
        .push(Reply::text("I could not write there."));
    // The risk gate would hold this write; with it opened on purpose, the
    // sandbox is what stops it.
    let out = env
        .exec(&["--dangerously-allow-all", "write my notes"])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(!outside.exists());
    assert!(
        out.stderr.contains(&format!(
            "⊘ blocked by sandbox: changing {} is not allowed",
            outside.display()
        )),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("hint: allow a folder with `--add-dir"),
        "{}",
        out.stderr
    );
    let told = last_message_text(&env.server, 1);
    assert!(told.contains("[blocked by sandbox: changing"), "{told}");

    // --add-dir lets it through.
    env.server
        .push(Reply::execute(
            "python",
            &format!("open({:?}, 'w').write('x')", outside.display().to_string()),
        ))
        .push(Reply::text("Written."));
    let added = dir.path().display().to_string();
    let out = env
        .exec(&[
            "--dangerously-allow-all",
            "--add-dir",
            &added,
            "write my notes",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "x");
}

#[tokio::test]
async fn with_network_off_a_connection_is_blocked_and_explained() {
    if !landlock() {
        return;
    }
    let env = TestEnv::new().await;
    // The model server itself is reachable: only the code is confined.
    let port = env
        .server
        .base_url()
        .rsplit(':')
        .next()
        .and_then(|p| p.split('/').next())
        .unwrap()
        .to_owned();
    env.server
        .push(Reply::execute(
            "python",
            &format!("import socket\nsocket.create_connection(('127.0.0.1', {port}))"),
        ))
        .push(Reply::text("No network."));
    let out = env.exec(&["-y", "-c", "network=false", "connect"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("⊘ blocked by sandbox: network access is off"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn the_sandbox_command_runs_any_command_under_the_policy() {
    if !landlock() {
        return;
    }
    let env = TestEnv::new().await;
    let dir = outside_dir();
    let outside = dir.path().join("touched");
    let outside_arg = outside.display().to_string();
    let out = env
        .run(&["sandbox", "--", "touch", &outside_arg], None)
        .await;
    assert_ne!(out.code, 0, "{out:?}");
    assert!(!outside.exists());
    assert!(
        out.stderr.contains("sandbox: workspace-write: writes in"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("Permission denied") || out.stderr.contains("Read-only file system"),
        "{}",
        out.stderr
    );

    let inside = env.cwd.path().join("touched");
    let out = env
        .run(
            &["sandbox", "--", "touch", &inside.display().to_string()],
            None,
        )
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(inside.exists());

    let out = env
        .run(
            &["sandbox", "--sandbox", "read-only", "--", "touch", "ro"],
            None,
        )
        .await;
    assert_ne!(out.code, 0, "{out:?}");
    assert!(!env.cwd.path().join("ro").exists());

    let out = env
        .run(
            &[
                "sandbox",
                "--sandbox",
                "full-access",
                "--",
                "touch",
                &outside_arg,
            ],
            None,
        )
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(outside.exists());

    // The exit code is the command's.
    let out = env
        .run(&["sandbox", "--", "sh", "-c", "exit 7"], None)
        .await;
    assert_eq!(out.code, 7, "{out:?}");
}

#[tokio::test]
async fn approval_never_needs_its_flag_and_bad_roots_are_named() {
    let env = TestEnv::new().await;
    let out = env.exec(&["-c", "approval=\"never\"", "hi"]).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("approval = \"never\"")
            && out.stderr.contains("--dangerously-allow-all"),
        "{}",
        out.stderr
    );
    env.server
        .push(Reply::execute("python", "print(6 * 7)"))
        .push(Reply::text("42"));
    let out = env.exec(&["--dangerously-allow-all", "multiply"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(last_message_text(&env.server, 1), "42\n");

    let out = env
        .exec(&["-c", "writable_roots=[\"/no/such/folder\"]", "hi"])
        .await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("writable_roots (-c)") && out.stderr.contains("/no/such/folder"),
        "{}",
        out.stderr
    );
    let mut cmd = env.command(&["exec", "--add-dir", "/no/such/dir", "hi"]);
    cmd.env("NO_COLOR", "1");
    let out = run_command(cmd, None).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("--add-dir /no/such/dir"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn a_workspace_or_a_writable_root_that_is_a_file_is_refused() {
    // Regression: `--workspace FILE` was accepted (exit 0).
    let env = TestEnv::new().await;
    let file = env.cwd.path().join("notes.txt");
    std::fs::write(&file, "x").unwrap();
    let out = env.exec(&["--workspace", "notes.txt", "hi"]).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains(&format!(
            "--workspace notes.txt: {} is a file, not a folder",
            std::fs::canonicalize(&file).unwrap().display()
        )),
        "{}",
        out.stderr
    );
    let out = env.exec(&["--workspace", "missing", "hi"]).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("--workspace missing:"),
        "{}",
        out.stderr
    );
    let out = env.exec(&["--add-dir", "notes.txt", "hi"]).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("--add-dir notes.txt:")
            && out.stderr.contains("is a file, not a folder"),
        "{}",
        out.stderr
    );
    assert!(env.server.model_requests().is_empty());
}

#[tokio::test]
async fn risky_code_is_held_in_exec_without_a_terminal_even_with_yes() {
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute("shell", "git push --force origin main"))
        .push(Reply::text("I could not push."));
    let out = env.exec(&["-y", "push it"]).await;
    assert_eq!(out.code, 4, "{out:?}");
    assert!(
        out.stderr
            .contains("⚠ risky: rewrites or deletes history on a remote (git push --force)"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("– not run: risky code needs a person's approval, even with `--yes`"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("risky code always needs a person's approval"),
        "{}",
        out.stderr
    );
    let told = last_message_text(&env.server, 1);
    assert!(told.starts_with("Not run: this code looks risky"), "{told}");
}

/// Regression: a hostile probe's commands that did real damage under
/// `exec --yes` (modes changed to 777 and 000 outside the workspace, oi
/// killed by its own code) are held for a person, each one.
#[tokio::test]
async fn the_probes_that_did_damage_are_held_under_yes() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new().await;
    let dir = outside_dir();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(data.join("f"), "x").unwrap();
    let ssh = env.home.path().join(".ssh");
    std::fs::create_dir(&ssh).unwrap();
    std::fs::set_permissions(&ssh, std::fs::Permissions::from_mode(0o700)).unwrap();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    let before = (mode(&data), mode(&data.join("f")), mode(&ssh));
    let data_text = data.display().to_string();
    let probes = [
        ("shell", format!("chmod -R 777 '{data_text}'")),
        ("shell", "chmod -R 000 ~/.ssh".to_owned()),
        ("shell", "k=kill; $k -9 $PPID".to_owned()),
        ("shell", format!("R=chmod; M=777; $R $M '{data_text}/f'")),
        (
            "python",
            format!("import os\nos.chmod({data_text:?}, 0o777)"),
        ),
        (
            "python",
            "import os\ngetattr(os, 'ki' + 'll')(os.getppid(), 9)".to_owned(),
        ),
    ];
    for (language, code) in &probes {
        env.server.push(Reply::execute(language, code));
    }
    env.server.push(Reply::text("I could not."));
    let out = env.exec(&["-y", "tidy up"]).await;
    // oi is alive to report, and nothing ran.
    assert_eq!(out.code, 4, "{out:?}");
    assert_eq!(
        (mode(&data), mode(&data.join("f")), mode(&ssh)),
        before,
        "{out:?}"
    );
    assert_eq!(
        out.stderr.matches("– not run: risky code needs").count(),
        probes.len(),
        "{}",
        out.stderr
    );
    for i in 1..=probes.len() {
        let told = last_message_text(&env.server, i);
        assert!(
            told.starts_with("Not run: this code looks risky"),
            "{i}: {told}"
        );
    }
}

fn namespaces() -> bool {
    oi_testkit::present_or_skip(
        oi_testkit::Need::Sandbox,
        oi_sandbox::support().landlock && oi_sandbox::support().namespaces,
        "no Landlock or no user namespaces here",
    )
}

#[tokio::test]
async fn code_cannot_change_ois_own_folder_even_in_the_temporary_folder() {
    if !namespaces() {
        return;
    }
    // The test's oi folder is in the system's temporary folder, which
    // workspace-write mode lets code write.
    let env = TestEnv::new().await;
    let home = env.oi_home();
    assert!(home.starts_with(std::env::temp_dir()));
    let config = home.join("config.toml");
    let before = std::fs::read_to_string(&config).unwrap();
    let escalate = format!(
        "open({:?}, 'a').write('\\nsandbox = \"full-access\"\\n')",
        config.display().to_string()
    );
    let plant = format!(
        "import os\nos.makedirs({0:?}, exist_ok=True)\nopen(os.path.join({0:?}, 'planted'), 'w').write('x')",
        home.join("checkpoints").display().to_string()
    );
    let loosen = format!("chmod 000 '{}'", config.display());
    env.server
        .push(Reply::execute("python", &escalate))
        .push(Reply::execute("python", &plant))
        .push(Reply::execute("shell", &loosen))
        .push(Reply::text("I could not."));
    // The risk gate holds all three; with it opened on purpose, the
    // sandbox must stop them.
    let out = env
        .exec(&["--dangerously-allow-all", "make yourself at home"])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before);
    assert!(!home.join("checkpoints/planted").exists());
    assert!(
        out.stderr.contains("which code may never change"),
        "{}",
        out.stderr
    );
    // The next session still runs sandboxed.
    let out = env.run(&["config", "show"], None).await;
    assert!(out.stdout.contains("workspace-write"), "{out:?}");

    // Nor can the user's own settings open it to code by mistake.
    let out = env
        .exec(&[
            "--add-dir",
            &home.join("checkpoints").display().to_string(),
            "hi",
        ])
        .await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("inside oi's own folder"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn api_keys_are_kept_from_code_unless_passed_on_purpose() {
    let env = TestEnv::new().await;
    env.write_config(&format!(
        "model_provider = \"mock\"\nmodel = \"mock-model\"\n\n[model_providers.mock]\nname = \"the model server\"\nbase_url = \"{}\"\nenv_key = \"MOCK_SERVICE_KEY\"\nenv_http_headers = {{ \"X-Org\" = \"MOCK_ORG_TOKEN\" }}\n",
        env.server.base_url()
    ));
    let show = "import os\nfor name in ['MOCK_SERVICE_KEY', 'MOCK_ORG_TOKEN', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GROQ_API_KEY', 'UNRELATED_SETTING']:\n    print(name, os.environ.get(name, '-'))";
    let child = "env | grep -c -E '^(MOCK_SERVICE_KEY|OPENAI_API_KEY|ANTHROPIC_API_KEY)=' || true";
    let run = |args: &[&str]| {
        let mut cmd = env.command(args);
        cmd.env("MOCK_SERVICE_KEY", "sk-mock-secret-1")
            .env("MOCK_ORG_TOKEN", "org-secret-2")
            .env("OPENAI_API_KEY", "sk-openai-secret-3")
            .env("ANTHROPIC_API_KEY", "sk-ant-secret-4")
            .env("GROQ_API_KEY", "gsk-secret-5")
            .env("UNRELATED_SETTING", "kept");
        run_command(cmd, None)
    };
    env.server
        .push(Reply::execute("python", show))
        .push(Reply::execute("shell", child))
        .push(Reply::text("done"));
    let out = run(&["exec", "-y", "show me the keys"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        last_message_text(&env.server, 1),
        "MOCK_SERVICE_KEY -\nMOCK_ORG_TOKEN -\nOPENAI_API_KEY -\nANTHROPIC_API_KEY -\nGROQ_API_KEY -\nUNRELATED_SETTING kept\n"
    );
    // Not in a program the kernel starts either.
    assert_eq!(last_message_text(&env.server, 2), "0\n");

    // Passed on purpose.
    env.server
        .push(Reply::execute("python", show))
        .push(Reply::text("done"));
    let out = run(&[
        "exec",
        "-y",
        "-c",
        "pass_env=[\"ANTHROPIC_API_KEY\"]",
        "show me the keys",
    ])
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        last_message_text(&env.server, 4).contains("ANTHROPIC_API_KEY sk-ant-secret-4\n"),
        "{}",
        last_message_text(&env.server, 4)
    );

    // `interpreter sandbox` keeps them out too.
    let out = run(&["sandbox", "--", "sh", "-c", "echo ${OPENAI_API_KEY:-none}"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "none\n");
}

#[tokio::test]
async fn keys_stored_at_set_up_read_as_empty_to_code() {
    if !namespaces() {
        return;
    }
    let env = TestEnv::new().await;
    let keys = env.oi_home().join("keys.toml");
    std::fs::write(&keys, "GROQ_API_KEY = \"gsk-stored-secret-6\"\n").unwrap();
    let read = format!("print(repr(open({:?}).read()))", keys.display().to_string());
    let shell = format!("cat '{}' | wc -c", keys.display());
    env.server
        .push(Reply::execute("python", &read))
        .push(Reply::execute("shell", &shell))
        .push(Reply::text("done"));
    let out = env.exec(&["-y", "read the keys"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(last_message_text(&env.server, 1), "''\n");
    assert_eq!(last_message_text(&env.server, 2).trim(), "0");
    assert!(!format!("{out:?}").contains("gsk-stored-secret-6"));
    // oi itself still reads it.
    assert!(
        std::fs::read_to_string(&keys)
            .unwrap()
            .contains("gsk-stored-secret-6")
    );
}

/// `pip install` in the default sandbox installs into oi's user folder
/// (inside oi's own, otherwise closed, folder) and the package imports in
/// the same session at once; nothing reaches the user's own folders.
#[tokio::test]
async fn pip_install_works_in_the_default_sandbox() {
    if !landlock() {
        return;
    }
    let env = TestEnv::new().await;
    env.server
        .push(Reply::execute("python", oi_testkit::MAKE_PROBE_WHEEL))
        .push(Reply::execute("python", oi_testkit::INSTALL_PROBE_WHEEL))
        .push(Reply::execute(
            "python",
            "import oi_probe_pkg\nprint('answer', oi_probe_pkg.ANSWER)",
        ))
        .push(Reply::text("Installed."));
    let out = env.exec(&["-y", "install the probe package"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let installed = last_message_text(&env.server, 2);
    assert!(
        installed.contains("Successfully installed oi-probe-pkg-0.1"),
        "{installed}"
    );
    let imported = last_message_text(&env.server, 3);
    assert!(imported.contains("answer 42"), "{imported}");
    let site = env.oi_home().join("cache/python-user/lib");
    assert!(site.is_dir(), "{}", site.display());
    assert!(!env.home.path().join(".local").exists());
}
