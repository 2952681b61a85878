//! `interpreter completion SHELL`: scripts the real shells load, which
//! complete subcommands and flag values from the parser's own definitions.

use crate::support::TestEnv;

/// What bash's completion offers for the words of `line` (the last word
/// being completed), with the script `interpreter completion bash` printed
/// loaded.
async fn bash_offers(env: &TestEnv, words: &[&str]) -> Vec<String> {
    let binary = env!("CARGO_BIN_EXE_interpreter");
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let script = format!(
        "source <('{binary}' completion bash) || exit 9\n\
         COMP_WORDS=({words}); COMP_CWORD={last}; COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}\n\
         _interpreter interpreter '{current}' '{previous}'\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        words = quoted.join(" "),
        last = words.len() - 1,
        line = words.join(" "),
        current = words[words.len() - 1],
        previous = words[words.len() - 2],
    );
    let out = env
        .program("bash", &["-c", &script])
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn bash_completes_subcommands_and_flag_values() {
    let env = TestEnv::new().await;
    assert_eq!(
        bash_offers(&env, &["interpreter", "sand"]).await,
        vec!["sandbox"]
    );
    assert_eq!(
        bash_offers(&env, &["interpreter", "--sandbox", ""]).await,
        vec!["read-only", "workspace-write", "full-access", "container"]
    );
    let flags = bash_offers(&env, &["interpreter", "exec", "--"]).await;
    for flag in ["--json", "--output-last-message", "--model", "--sandbox"] {
        assert!(flags.iter().any(|f| f == flag), "{flag}: {flags:?}");
    }
}

#[tokio::test]
async fn zsh_and_fish_scripts_are_printed_and_zsh_loads_its_own() {
    let env = TestEnv::new().await;
    let fish = env.run(&["completion", "fish"], None).await;
    assert_eq!(fish.code, 0, "{fish:?}");
    assert!(
        fish.stdout.contains("complete -c interpreter") && fish.stdout.contains("sandbox"),
        "{}",
        &fish.stdout[..fish.stdout.len().min(400)]
    );
    let zsh = env.run(&["completion", "zsh"], None).await;
    assert_eq!(zsh.code, 0, "{zsh:?}");
    assert!(
        zsh.stdout.starts_with("#compdef interpreter"),
        "{}",
        &zsh.stdout[..80]
    );
    if oi_testkit::present_or_skip(
        oi_testkit::Need::Language("zsh"),
        oi_testkit::installed("zsh"),
        "zsh is not installed",
    ) {
        let binary = env!("CARGO_BIN_EXE_interpreter");
        let loaded = env
            .program(
                "zsh",
                &[
                    "-fc",
                    &format!("autoload -U compinit && compinit -u && source <('{binary}' completion zsh) && echo loaded"),
                ],
            )
            .output()
            .await
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&loaded.stdout),
            "loaded\n",
            "{loaded:?}"
        );
    }
    let wrong = env.run(&["completion", "tcsh"], None).await;
    assert_eq!(wrong.code, 2, "{wrong:?}");
    assert!(
        wrong
            .stderr
            .contains("possible values: bash, elvish, fish, powershell, zsh"),
        "{}",
        wrong.stderr
    );
}
