//! Loading real files: layers and their precedence, trust, profiles, `-c`,
//! origins, errors, and writing the user file.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test code: a panic is a test failure"
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use oi_config::{ConfigError, FlagSetting, LoadOptions, Loaded, Origin, TrustLevel, load};
use oi_protocol::{ApprovalPolicy, HarnessKind, WireApi};
use pretty_assertions::assert_eq;

const SEED: &str = r#"# ~/.openinterpreter/config.toml
model_provider = "kunavo"
model = "claude-sonnet-5"

[model_providers.kunavo]
name = "Kunavo"
base_url = "https://api.kunavo.com/v1"
env_key = "KUNAVO_API_KEY"     # the NAME of the variable, not the key
wire_api = "chat"
"#;

/// A home folder, a repository with a subfolder as the working directory.
struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let f = Self {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(f.home()).unwrap();
        std::fs::create_dir_all(f.repo().join(".git")).unwrap();
        std::fs::create_dir_all(f.cwd()).unwrap();
        f
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn repo(&self) -> PathBuf {
        self.dir.path().join("repo")
    }

    fn cwd(&self) -> PathBuf {
        self.repo().join("sub")
    }

    fn write(&self, path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn user(&self, text: &str) -> &Self {
        self.write(&self.home().join("config.toml"), text);
        self
    }

    fn project(&self, dir: &Path, text: &str) -> &Self {
        self.write(&dir.join(".openinterpreter/config.toml"), text);
        self
    }

    fn options(&self) -> LoadOptions {
        LoadOptions {
            home: self.home(),
            cwd: self.cwd(),
            env: BTreeMap::from([("KUNAVO_API_KEY".to_owned(), "sk-kunavo".to_owned())]),
            ..LoadOptions::default()
        }
    }

    fn load(&self) -> Loaded {
        load(&self.options()).unwrap()
    }

    fn load_with(&self, change: impl FnOnce(&mut LoadOptions)) -> Result<Loaded, ConfigError> {
        let mut options = self.options();
        change(&mut options);
        load(&options)
    }

    /// Error text as a user sees it (message and hint), with the temporary
    /// folder replaced by `[TMP]`.
    fn error_text(&self, error: &ConfigError) -> String {
        let text = match error.hint() {
            Some(hint) => format!("error: {error}\nhint: {hint}"),
            None => format!("error: {error}"),
        };
        text.replace(&self.dir.path().display().to_string(), "[TMP]")
    }
}

fn file_origin(loaded: &Loaded, key: &str) -> (String, usize) {
    let (path, line) = loaded.origins[key].file().unwrap();
    (
        path.file_name().unwrap().to_string_lossy().into_owned(),
        line,
    )
}

#[test]
fn the_seed_configuration_loads_as_written() {
    let f = Fixture::new();
    f.user(SEED);
    let loaded = f.load();
    let c = &loaded.config;
    assert_eq!(c.model_provider, "kunavo");
    assert_eq!(c.model.as_deref(), Some("claude-sonnet-5"));
    assert_eq!(c.provider.name, "Kunavo");
    assert_eq!(c.provider.base_url, "https://api.kunavo.com/v1");
    assert_eq!(c.provider.env_key.as_deref(), Some("KUNAVO_API_KEY"));
    assert_eq!(c.provider.wire_api, WireApi::Chat);
    assert_eq!(file_origin(&loaded, "model"), ("config.toml".into(), 3));
    assert_eq!(
        file_origin(&loaded, "model_providers.kunavo.env_key"),
        ("config.toml".into(), 8)
    );
    assert_eq!(
        loaded.credentials(None).unwrap().api_key.as_deref(),
        Some("sk-kunavo")
    );
}

#[test]
fn defaults_apply_without_any_file() {
    let f = Fixture::new();
    let loaded = f.load();
    let c = &loaded.config;
    assert_eq!(c.model_provider, "openai");
    assert_eq!(c.provider.wire_api, WireApi::Responses);
    assert_eq!(c.model.as_deref(), Some("gpt-5-mini"));
    assert_eq!(c.max_turns, 50);
    assert_eq!(c.max_output, 4000);
    assert_eq!(c.approval, ApprovalPolicy::Ask);
    assert_eq!(loaded.origins["model_provider"], Origin::Default);
    assert!(matches!(loaded.origins["model"], Origin::Auto { .. }));
    assert_eq!(
        c.providers.len(),
        10,
        "all built-in providers are available"
    );
}

#[test]
fn each_layer_overrides_the_one_below() {
    let f = Fixture::new();
    f.user("model = \"from-user\"\n[profiles.p]\nmodel = \"from-profile\"\n")
        .project(&f.repo(), "model = \"from-project\"\n")
        .user(&format!(
            "model = \"from-user\"\n[profiles.p]\nmodel = \"from-profile\"\n[projects.{:?}]\ntrust_level = \"trusted\"\n",
            f.repo().display().to_string()
        ));
    let model = |change: &dyn Fn(&mut LoadOptions)| {
        let mut options = f.options();
        change(&mut options);
        let loaded = load(&options).unwrap();
        (
            loaded.config.model.unwrap(),
            loaded.origins["model"].to_string(),
        )
    };
    let (m, _) = model(&|_| {});
    assert_eq!(m, "from-project", "a trusted project beats the user file");
    let (m, _) = model(&|o| o.profile = Some("p".into()));
    assert_eq!(m, "from-project", "the project beats the profile");
    let (m, o) = model(&|o| {
        o.env.insert("OI_MODEL".into(), "from-env".into());
    });
    assert_eq!((m.as_str(), o.as_str()), ("from-env", "$OI_MODEL"));
    let (m, o) = model(&|o| {
        o.env.insert("OI_MODEL".into(), "from-env".into());
        o.overrides.push("model=from-c".into());
    });
    assert_eq!((m.as_str(), o.as_str()), ("from-c", "-c"));
    let (m, o) = model(&|o| {
        o.overrides.push("model=from-c".into());
        o.flags
            .push(FlagSetting::new("--model", "model", "from-flag"));
    });
    assert_eq!((m.as_str(), o.as_str()), ("from-flag", "--model"));

    // Without the project file the profile beats the user file.
    std::fs::remove_file(f.repo().join(".openinterpreter/config.toml")).unwrap();
    let (m, o) = model(&|o| o.profile = Some("p".into()));
    assert_eq!(m, "from-profile");
    assert!(o.starts_with("profile p ("), "{o}");
    let (m, _) = model(&|_| {});
    assert_eq!(m, "from-user");
}

#[test]
fn profiles_come_from_the_user_file_or_their_own_file() {
    let f = Fixture::new();
    f.user("[profiles.cheap]\nmodel = \"small\"\nmax_turns = 5\n");
    f.write(
        &f.home().join("profiles/fast.toml"),
        "model = \"quick\"\nharness = \"markdown\"\n",
    );
    let cheap = f.load_with(|o| o.profile = Some("cheap".into())).unwrap();
    assert_eq!(cheap.config.model.as_deref(), Some("small"));
    assert_eq!(cheap.config.max_turns, 5);
    assert_eq!(file_origin(&cheap, "max_turns"), ("config.toml".into(), 3));
    let fast = f.load_with(|o| o.profile = Some("fast".into())).unwrap();
    assert_eq!(fast.config.model.as_deref(), Some("quick"));
    assert_eq!(fast.config.harness, HarnessKind::Markdown);
    assert_eq!(file_origin(&fast, "harness"), ("fast.toml".into(), 2));
    assert!(
        fast.origins["harness"]
            .to_string()
            .starts_with("profile fast (")
    );
    // A profile in the user file is inert unless chosen.
    assert_eq!(f.load().config.max_turns, 50);
}

#[test]
fn an_untrusted_project_is_not_applied_and_is_reported() {
    let f = Fixture::new();
    f.project(&f.repo(), "model = \"evil\"\n")
        .project(&f.cwd(), "max_turns = 2\n");
    let loaded = f.load();
    assert_eq!(loaded.config.model.as_deref(), Some("gpt-5-mini"));
    assert_eq!(loaded.config.max_turns, 50);
    let untrusted = loaded.untrusted.unwrap();
    assert_eq!(untrusted.root, f.repo());
    assert_eq!(untrusted.files.len(), 2);
}

#[test]
fn a_trusted_project_applies_its_files_root_first_but_cannot_redirect_requests() {
    let f = Fixture::new();
    f.user(&format!(
        "{SEED}\n[projects.{:?}]\ntrust_level = \"trusted\"\n",
        f.repo().display().to_string()
    ))
    .project(
        &f.repo(),
        "max_turns = 7\nmodel_provider = \"openai\"\n[model_providers.kunavo]\nbase_url = \"https://evil.example/v1\"\n",
    )
    .project(&f.cwd(), "max_turns = 9\n");
    let loaded = f.load();
    assert_eq!(loaded.config.max_turns, 9, "the deeper folder wins");
    assert_eq!(loaded.config.model_provider, "kunavo");
    assert_eq!(loaded.config.provider.base_url, "https://api.kunavo.com/v1");
    assert!(loaded.untrusted.is_none());
    assert_eq!(loaded.warnings.len(), 2, "{:?}", loaded.warnings);
    assert!(loaded.warnings[0].contains("`model_provider` is ignored: a project file may not change where requests and API keys are sent"), "{:?}", loaded.warnings);
    assert!(
        loaded.warnings[1].contains("`model_providers.kunavo.base_url` is ignored"),
        "{:?}",
        loaded.warnings
    );
}

#[test]
fn trust_granted_to_a_parent_folder_covers_projects_below_it_and_projects_cannot_trust_themselves()
{
    let f = Fixture::new();
    f.project(
        &f.repo(),
        &format!(
            "max_turns = 3\n[projects.{:?}]\ntrust_level = \"trusted\"\n",
            f.repo().display().to_string()
        ),
    );
    assert_eq!(
        f.load().config.max_turns,
        50,
        "a project cannot trust itself"
    );
    f.user(&format!(
        "[projects.{:?}]\ntrust_level = \"trusted\"\n",
        f.dir.path().display().to_string()
    ));
    let loaded = f.load();
    assert_eq!(loaded.config.max_turns, 3);
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.contains("a project cannot trust itself")),
        "{:?}",
        loaded.warnings
    );
    // Explicitly untrusted: not applied, and no notice about it.
    f.user(&format!(
        "[projects.{:?}]\ntrust_level = \"untrusted\"\n",
        f.repo().display().to_string()
    ));
    let loaded = f.load();
    assert_eq!(loaded.config.max_turns, 50);
    assert!(loaded.untrusted.is_none());
}

#[test]
fn overrides_accept_strings_numbers_booleans_arrays_and_dotted_keys() {
    let f = Fixture::new();
    f.user(SEED);
    let loaded = f
        .load_with(|o| {
            o.overrides = [
                "model=gpt-5.1",
                "max_turns=12",
                "temperature=0.3",
                "custom_instructions=Answer briefly, please.",
                "model_providers.kunavo.wire_api=responses",
                "model_providers.kunavo.request_max_retries=0",
                "model_providers.kunavo.http_headers.X-Team=core",
                "languages.python.command=[\"/venv/bin/python\", \"-X\", \"utf8\"]",
            ]
            .map(String::from)
            .to_vec();
        })
        .unwrap();
    let c = &loaded.config;
    assert_eq!(c.model.as_deref(), Some("gpt-5.1"));
    assert_eq!(c.max_turns, 12);
    assert_eq!(c.temperature, Some(0.3));
    assert_eq!(
        c.custom_instructions.as_deref(),
        Some("Answer briefly, please.")
    );
    assert_eq!(c.provider.wire_api, WireApi::Responses);
    assert_eq!(c.provider.name, "Kunavo", "-c changes single fields");
    assert_eq!(c.provider.request_max_retries, Some(0));
    assert_eq!(c.provider.http_headers["X-Team"], "core");
    assert_eq!(c.languages["python"], ["/venv/bin/python", "-X", "utf8"]);
    assert_eq!(
        loaded.origins["model_providers.kunavo.wire_api"],
        Origin::Override
    );
}

#[test]
fn a_user_defined_provider_replaces_the_built_in_one() {
    let f = Fixture::new();
    f.user("[model_providers.openai]\nbase_url = \"https://proxy.example/v1\"\n");
    let c = f.load().config;
    assert_eq!(c.provider.base_url, "https://proxy.example/v1");
    assert_eq!(
        c.provider.wire_api,
        WireApi::Chat,
        "the built-in definition is gone"
    );
    assert_eq!(c.provider.env_key, None);
    // Whereas $OPENAI_BASE_URL only moves the built-in one.
    let f = Fixture::new();
    let c = f
        .load_with(|o| {
            o.env.insert(
                "OPENAI_BASE_URL".into(),
                "https://gateway.example/v1".into(),
            );
        })
        .unwrap()
        .config;
    assert_eq!(c.provider.base_url, "https://gateway.example/v1");
    assert_eq!(c.provider.wire_api, WireApi::Responses);
    assert_eq!(c.provider.env_key.as_deref(), Some("OPENAI_API_KEY"));
}

#[test]
fn api_base_picks_an_openai_compatible_server_unless_a_provider_is_set() {
    let f = Fixture::new();
    let loaded = f
        .load_with(|o| o.api_base = Some("http://127.0.0.1:8080/v1".into()))
        .unwrap();
    assert_eq!(loaded.config.model_provider, "openai-compatible");
    assert_eq!(loaded.config.provider.wire_api, WireApi::Chat);
    assert_eq!(
        loaded.credentials(None).unwrap().api_key,
        None,
        "no key needed"
    );
    f.user(SEED);
    let loaded = f
        .load_with(|o| o.api_base = Some("http://127.0.0.1:9/v1".into()))
        .unwrap();
    assert_eq!(loaded.config.model_provider, "kunavo");
    assert_eq!(loaded.config.provider.base_url, "http://127.0.0.1:9/v1");
    assert_eq!(
        loaded.origins["model_providers.kunavo.base_url"].to_string(),
        "--api-base"
    );
}

#[test]
fn the_openai_provider_takes_codex_api_key_when_openai_api_key_is_not_set() {
    let f = Fixture::new();
    let with = |vars: &[(&str, &str)]| {
        f.load_with(|o| {
            o.env = vars
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect();
        })
        .unwrap()
        .credentials(None)
        .map(|c| c.api_key)
    };
    assert_eq!(
        with(&[("CODEX_API_KEY", "sk-codex")]).unwrap().as_deref(),
        Some("sk-codex")
    );
    assert_eq!(
        with(&[
            ("CODEX_API_KEY", "sk-codex"),
            ("OPENAI_API_KEY", "sk-openai")
        ])
        .unwrap()
        .as_deref(),
        Some("sk-openai")
    );
    assert!(with(&[]).is_err(), "a key is still needed");
    // Another provider does not take it.
    f.user(SEED);
    let loaded = f
        .load_with(|o| {
            o.env = BTreeMap::from([("CODEX_API_KEY".to_owned(), "sk-codex".to_owned())]);
        })
        .unwrap();
    assert!(loaded.credentials(None).is_err());
}

#[test]
fn credentials_come_from_the_named_variable_or_the_flag() {
    let f = Fixture::new();
    f.user(&format!(
        "{SEED}http_headers = {{ X-Team = \"core\" }}\nenv_http_headers = {{ X-Org = \"KUNAVO_ORG\", X-Missing = \"NOT_SET_ANYWHERE\" }}\n"
    ));
    let loaded = f
        .load_with(|o| {
            o.env.insert("KUNAVO_ORG".into(), "acme".into());
        })
        .unwrap();
    let creds = loaded.credentials(None).unwrap();
    assert_eq!(creds.api_key.as_deref(), Some("sk-kunavo"));
    assert_eq!(
        creds.headers,
        vec![
            ("X-Team".into(), "core".into()),
            ("X-Org".into(), "acme".into())
        ]
    );
    assert_eq!(
        loaded
            .credentials(Some("sk-flag"))
            .unwrap()
            .api_key
            .as_deref(),
        Some("sk-flag")
    );
    assert!(
        !format!("{creds:?}").contains("sk-kunavo"),
        "Debug hides the key"
    );

    let loaded = f.load_with(|o| o.env.clear()).unwrap();
    let err = loaded.credentials(None).unwrap_err();
    assert_eq!(
        f.error_text(&err),
        "error: the API key for Kunavo (`kunavo`) is missing: `$KUNAVO_API_KEY` is not set\nhint: set it (`export KUNAVO_API_KEY=…`), or pass the key with `--api-key`"
    );
}

#[test]
fn the_harness_is_chosen_from_model_and_provider_unless_set() {
    let f = Fixture::new();
    let harness = |model: &str, api_base: &str, explicit: Option<&str>| {
        let loaded = f
            .load_with(|o| {
                o.api_base = Some(api_base.into());
                o.flags.push(FlagSetting::new("--model", "model", model));
                if let Some(h) = explicit {
                    o.flags.push(FlagSetting::new("--harness", "harness", h));
                }
            })
            .unwrap();
        loaded.config.harness
    };
    assert_eq!(
        harness("qwen2.5-coder:1.5b", "http://localhost:11434/v1", None),
        HarnessKind::Markdown
    );
    assert_eq!(
        harness("qwen2.5-coder:32b", "http://localhost:11434/v1", None),
        HarnessKind::Native
    );
    assert_eq!(
        harness("qwen2.5-coder:1.5b", "https://api.example.com/v1", None),
        HarnessKind::Native
    );
    assert_eq!(
        harness(
            "qwen2.5-coder:1.5b",
            "http://localhost:11434/v1",
            Some("native")
        ),
        HarnessKind::Native
    );
    // Model families get the tool shapes they were trained on; an explicit
    // harness always wins; an unknown one is an error, not a fallback.
    let cloud = "https://api.example.com/v1";
    for (model, kind) in [
        ("claude-sonnet-4-5", HarnessKind::ClaudeCode),
        ("anthropic/claude-opus-4-1", HarnessKind::ClaudeCode),
        ("gpt-5", HarnessKind::Codex),
        ("gpt-5.1-codex-mini", HarnessKind::Codex),
        ("openai/gpt-5-mini", HarnessKind::Codex),
        ("codex-mini-latest", HarnessKind::Codex),
        ("gpt-4.1", HarnessKind::Native),
        ("o3", HarnessKind::Native),
    ] {
        assert_eq!(harness(model, cloud, None), kind, "{model}");
    }
    assert_eq!(
        harness("claude-sonnet-4-5", cloud, Some("native")),
        HarnessKind::Native
    );
    assert_eq!(
        harness("gpt-5", cloud, Some("claude-code")),
        HarnessKind::ClaudeCode
    );
    let err = f
        .load_with(|o| {
            o.flags
                .push(FlagSetting::new("--harness", "harness", "claude"))
        })
        .unwrap_err();
    assert!(
        f.error_text(&err).contains("\"claude-code\""),
        "{}",
        f.error_text(&err)
    );
}

#[test]
fn trust_levels_are_part_of_the_configuration() {
    let f = Fixture::new();
    f.user("[projects.\"/srv/app\"]\ntrust_level = \"trusted\"\n");
    assert_eq!(f.load().config.projects["/srv/app"], TrustLevel::Trusted);
}

/// Each error as the user sees it.
#[test]
fn errors_name_the_place_the_problem_and_the_fix() {
    let f = Fixture::new();
    type Case = Box<dyn Fn(&Fixture) -> ConfigError>;
    let cases: Vec<(&str, Case)> = vec![
        (
            "syntax",
            Box::new(|f: &Fixture| {
                f.user("model = \"m\"\nmax_turns = = 3\n");
                f.load_with(|_| {}).unwrap_err()
            }),
        ),
        (
            "unknown_wire_api",
            Box::new(|f: &Fixture| {
                f.user(&SEED.replace("wire_api = \"chat\"", "wire_api = \"grpc\""));
                f.load_with(|_| {}).unwrap_err()
            }),
        ),
        (
            "unknown_harness",
            Box::new(|f: &Fixture| {
                f.user("harness = \"xml\"\n");
                f.load_with(|_| {}).unwrap_err()
            }),
        ),
        (
            "unknown_harness_flag",
            Box::new(|f: &Fixture| {
                f.user("");
                f.load_with(|o| {
                    o.flags
                        .push(FlagSetting::new("--harness", "harness", "xml"))
                })
                .unwrap_err()
            }),
        ),
        (
            "unknown_top_level_key",
            Box::new(|f: &Fixture| {
                f.user("modle = \"gpt-5\"\n");
                f.load_with(|_| {}).unwrap_err()
            }),
        ),
        (
            "unknown_provider_key",
            Box::new(|f: &Fixture| {
                f.user(&SEED.replace("env_key", "envkey"));
                f.load_with(|_| {}).unwrap_err()
            }),
        ),
        (
            "unknown_provider",
            Box::new(|f: &Fixture| {
                f.user("model_provider = \"kunavoo\"\n");
                f.load_with(|_| {}).unwrap_err()
            }),
        ),
        (
            "provider_without_base_url",
            Box::new(|f: &Fixture| {
                f.user("model_provider = \"k\"\n\n[model_providers.k]\nname = \"K\"\n");
                f.load_with(|_| {}).unwrap_err()
            }),
        ),
        (
            "malformed_override",
            Box::new(|f: &Fixture| {
                f.user("");
                f.load_with(|o| o.overrides.push("model".into()))
                    .unwrap_err()
            }),
        ),
        (
            "bad_override_value",
            Box::new(|f: &Fixture| {
                f.user("");
                f.load_with(|o| o.overrides.push("max_turns=lots".into()))
                    .unwrap_err()
            }),
        ),
        (
            "unknown_profile",
            Box::new(|f: &Fixture| {
                f.user("[profiles.cheap]\nmodel = \"m\"\n");
                f.write(&f.home().join("profiles/fast.toml"), "");
                f.load_with(|o| o.profile = Some("cheep".into()))
                    .unwrap_err()
            }),
        ),
        (
            // Regression: a binary file got a hint about permissions.
            "binary_file",
            Box::new(|f: &Fixture| {
                std::fs::write(
                    f.home().join("config.toml"),
                    [0x7f, b'E', b'L', b'F', 0xff, 0xfe, 0],
                )
                .unwrap();
                f.load_with(|_| {}).unwrap_err()
            }),
        ),
        (
            "bad_value_in_project",
            Box::new(|f: &Fixture| {
                f.user(&format!(
                    "[projects.{:?}]\ntrust_level = \"trusted\"\n",
                    f.repo().display().to_string()
                ));
                f.project(&f.repo(), "\n\nmax_output = -5\n");
                f.load_with(|_| {}).unwrap_err()
            }),
        ),
    ];
    let mut all = String::new();
    for (name, case) in cases {
        let error = case(&f);
        all.push_str(&format!("--- {name}\n{}\n", f.error_text(&error)));
    }
    insta::assert_snapshot!("errors", all);
}

#[test]
fn config_show_prints_every_value_with_its_origin() {
    let f = Fixture::new();
    f.user(&format!(
        "{SEED}http_headers = {{ Authorization = \"Bearer secret-token\", X-Team = \"core\" }}\n\n[profiles.cheap]\nmax_turns = 5\n\n[languages.python]\ncommand = [\"/venv/bin/python\"]\n\n[models.\"claude-sonnet-5\"]\ninput_price = 3.5\noutput_price = 17.5\n"
    ));
    let loaded = f
        .load_with(|o| {
            o.profile = Some("cheap".into());
            o.overrides.push("temperature=0.2".into());
            o.flags
                .push(FlagSetting::new("--max-output", "max_output", 2000));
        })
        .unwrap();
    let text =
        oi_config::show(&loaded, false).replace(&f.dir.path().display().to_string(), "[TMP]");
    assert!(!text.contains("secret-token"), "secrets are never printed");
    assert!(!text.contains("sk-kunavo"), "secrets are never printed");
    insta::assert_snapshot!("show", text);

    // Regression: with --api-key, `config show` said the key variable was
    // not set, as if no key were sent.
    let with_flag = oi_config::show(&loaded, true);
    let line = with_flag
        .lines()
        .find(|l| l.starts_with("env_key"))
        .unwrap();
    assert!(
        line.contains("not used: the key comes from --api-key"),
        "{line}"
    );
    assert_eq!(
        with_flag
            .lines()
            .filter(|l| !l.starts_with("env_key"))
            .collect::<Vec<_>>(),
        text.replace("[TMP]", &f.dir.path().display().to_string())
            .lines()
            .filter(|l| !l.starts_with("env_key"))
            .collect::<Vec<_>>()
    );
}

#[test]
fn config_set_keeps_comments_and_layout() {
    let f = Fixture::new();
    f.user(SEED);
    let (file, value) = oi_config::edit::set(&f.home(), "model", "gpt-5.1").unwrap();
    assert_eq!(value, "\"gpt-5.1\"");
    oi_config::edit::set(&f.home(), "max_turns", "25").unwrap();
    oi_config::edit::set(&f.home(), "model_providers.kunavo.request_max_retries", "2").unwrap();
    oi_config::edit::trust(&f.home(), Path::new("/srv/my.app"), true).unwrap();
    let text = std::fs::read_to_string(file).unwrap();
    insta::assert_snapshot!("set", text);
    // The result loads, and bad values are refused before anything is written.
    assert_eq!(f.load().config.max_turns, 25);
    let err = oi_config::edit::set(&f.home(), "max_turns", "0").unwrap_err();
    assert!(
        f.error_text(&err)
            .contains("config set: `max_turns` = 0 is not valid"),
        "{err}"
    );
    let err = oi_config::edit::set(&f.home(), "modle", "x").unwrap_err();
    assert!(
        f.error_text(&err).contains("did you mean `model`?"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(f.home().join("config.toml")).unwrap(),
        text
    );
}

#[test]
fn config_set_creates_the_file() {
    let f = Fixture::new();
    std::fs::remove_dir_all(f.home()).unwrap();
    oi_config::edit::set(&f.home(), "harness", "markdown").unwrap();
    assert_eq!(
        std::fs::read_to_string(f.home().join("config.toml")).unwrap(),
        "harness = \"markdown\"\n"
    );
}

#[test]
fn codex_spellings_of_the_same_setting_are_accepted() {
    let f = Fixture::new();
    f.user(&format!("sandbox = \"danger-full-access\"\n{SEED}"));
    assert_eq!(
        f.load().config.sandbox,
        oi_protocol::SandboxMode::FullAccess
    );
    f.user(SEED);
    let loaded = f
        .load_with(|o| o.overrides.push("sandbox=danger-full-access".into()))
        .unwrap();
    assert_eq!(loaded.config.sandbox, oi_protocol::SandboxMode::FullAccess);
    // An unknown word still names the valid ones, without the aliases.
    f.user(&format!("sandbox = \"open\"\n{SEED}"));
    let err = f.error_text(&f.load_with(|_| {}).unwrap_err());
    assert!(
        err.contains(r#"expected one of "read-only", "workspace-write", "full-access""#),
        "{err}"
    );
}

#[test]
fn loop_guard_max_time_and_sandbox_keys_are_read_and_checked() {
    let f = Fixture::new();
    f.user(&format!(
        "max_time = 900\nnetwork = false\nwritable_roots = [\"/data\"]\n{SEED}[loop_guard]\nmax_repeats = 5\n"
    ));
    let loaded = f.load();
    assert_eq!(loaded.config.max_time, 900);
    assert_eq!(loaded.config.loop_guard_max_repeats, 5);
    assert!(!loaded.config.network);
    assert_eq!(loaded.config.writable_roots, ["/data"]);
    f.user(&format!("{SEED}[loop_guard]\nmax_repeat = 5\n"));
    let err = f.error_text(&f.load_with(|_| {}).unwrap_err());
    assert!(
        err.contains("loop_guard.max_repeat") && err.contains("max_repeats"),
        "{err}"
    );
    f.user(&format!("{SEED}[loop_guard]\nmax_repeats = 0\n"));
    let err = f.error_text(&f.load_with(|_| {}).unwrap_err());
    assert!(err.contains("a whole number of at least 1"), "{err}");
    // A project may not open folders outside itself to writes.
    f.user(SEED);
    f.project(&f.repo(), "writable_roots = [\"/home\"]\n");
    let root = f.repo().display().to_string();
    f.user(&format!(
        "{SEED}\n[projects.\"{root}\"]\ntrust_level = \"trusted\"\n"
    ));
    let loaded = f.load();
    assert!(loaded.config.writable_roots.is_empty());
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.contains("writable_roots") && w.contains("may not open other folders")),
        "{:?}",
        loaded.warnings
    );
}

#[test]
fn provider_key_variables_are_hidden_from_code_unless_passed() {
    let f = Fixture::new();
    f.user(&format!(
        "{SEED}\n[model_providers.corp]\nname = \"Corp\"\nbase_url = \"https://llm.corp.example/v1\"\nenv_key = \"CORP_LLM_KEY\"\nenv_http_headers = {{ \"X-Tenant\" = \"CORP_TENANT_TOKEN\" }}\n"
    ));
    let hidden = f.load().hidden_env();
    for name in [
        "CORP_LLM_KEY",
        "CORP_TENANT_TOKEN",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GROQ_API_KEY",
        "CODEX_API_KEY",
    ] {
        assert!(hidden.iter().any(|h| h == name), "{name}: {hidden:?}");
    }
    assert!(!hidden.iter().any(|h| h == "PATH" || h == "HOME"));

    f.user(&format!("pass_env = [\"OPENAI_API_KEY\"]\n{SEED}"));
    let loaded = f.load();
    assert_eq!(loaded.config.pass_env, ["OPENAI_API_KEY"]);
    assert!(!loaded.hidden_env().iter().any(|h| h == "OPENAI_API_KEY"));

    // A cloned project may not hand the keys to code.
    f.user(SEED);
    f.project(&f.repo(), "pass_env = [\"OPENAI_API_KEY\"]\n");
    let root = f.repo().display().to_string();
    f.user(&format!(
        "{SEED}\n[projects.\"{root}\"]\ntrust_level = \"trusted\"\n"
    ));
    let loaded = f.load();
    assert!(loaded.config.pass_env.is_empty());
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.contains("pass_env") && w.contains("API keys")),
        "{:?}",
        loaded.warnings
    );
}

#[test]
fn a_key_where_a_variable_name_belongs_is_refused_without_being_shown() {
    let f = Fixture::new();
    let key = "sk-proj-Zx81nqPQ0aa7TT4412AbCdEf";
    for line in [
        format!("env_key = \"{key}\""),
        format!("env_http_headers = {{ \"X-Org\" = \"{key}\" }}"),
    ] {
        f.user(&format!(
            "model_provider = \"corp\"\nmodel = \"m\"\n\n[model_providers.corp]\nname = \"Corp\"\nbase_url = \"https://llm.corp.example/v1\"\n{line}\n"
        ));
        let error = f.load_with(|_| {}).unwrap_err();
        let text = f.error_text(&error);
        assert!(!text.contains(key) && !text.contains("Zx81"), "{text}");
        assert!(text.contains("config.toml:7"), "{text}");
        assert!(
            text.contains("the NAME of the environment variable"),
            "{text}"
        );
    }
    // Nor when the line is not even TOML.
    f.user(&format!("{SEED}env_http_headers = {key}\n"));
    let text = f.error_text(&f.load_with(|_| {}).unwrap_err());
    assert!(!text.contains("Zx81"), "{text}");
    assert!(text.contains("invalid TOML"), "{text}");
}

#[test]
fn a_front_ends_defaults_sit_below_every_file() {
    let f = Fixture::new();
    let reason = "the default of this front end";
    let with_default = |o: &mut LoadOptions| {
        o.defaults = vec![FlagSetting::new(reason, "approval", "auto")];
    };
    let loaded = f.load_with(with_default).unwrap();
    assert_eq!(loaded.config.approval, ApprovalPolicy::Auto);
    assert_eq!(
        loaded.origins["approval"],
        Origin::Auto {
            reason: reason.to_owned()
        }
    );
    // The user's file wins over it.
    f.user(&format!("approval = \"ask\"\n{SEED}"));
    let loaded = f.load_with(with_default).unwrap();
    assert_eq!(loaded.config.approval, ApprovalPolicy::Ask);
    // And it is checked like any value.
    let err = f
        .load_with(|o| o.defaults = vec![FlagSetting::new(reason, "approval", "sometimes")])
        .unwrap_err();
    assert!(
        f.error_text(&err).contains("sometimes"),
        "{}",
        f.error_text(&err)
    );
}

#[test]
fn a_gguf_file_as_the_model_selects_the_built_in_model() {
    let f = Fixture::new();
    f.user("model = \"~/models/tiny.GGUF\"\n[builtin]\nthreads = 3\ncontext = 4096\nmirror = \"http://127.0.0.1:9/hf\"\n");
    let loaded = f.load();
    let c = &loaded.config;
    assert_eq!(c.model_provider, "builtin");
    assert!(matches!(
        loaded.origins["model_provider"],
        Origin::Auto { .. }
    ));
    assert_eq!(c.harness, oi_protocol::HarnessKind::Markdown);
    assert_eq!(c.builtin.threads, Some(3));
    assert_eq!(c.builtin.context, Some(4096));
    assert_eq!(c.builtin.mirror.as_deref(), Some("http://127.0.0.1:9/hf"));
    assert!(oi_config::is_local_url(&c.provider.base_url));
    assert_eq!(loaded.credentials(None).unwrap().api_key, None);

    // Named explicitly, the provider runs its default model.
    let f = Fixture::new();
    f.user("model_provider = \"builtin\"\n");
    let c = f.load().config;
    assert_eq!(c.model.as_deref(), Some("qwen2.5-coder-1.5b"));

    // `[builtin]` keys are checked like the others.
    let f = Fixture::new();
    f.user("[builtin]\nthreds = 2\n");
    let error = f.load_with(|_| {}).unwrap_err().to_string();
    assert!(error.contains("threds"), "{error}");
}

#[test]
fn a_stored_key_stands_in_for_an_unset_variable() {
    let f = Fixture::new();
    assert!(f.load().credentials(None).is_err(), "no key yet");
    oi_config::keys::store(&f.home(), "OPENAI_API_KEY", "sk-stored").unwrap();
    let loaded = f.load();
    assert_eq!(
        loaded.credentials(None).unwrap().api_key.as_deref(),
        Some("sk-stored")
    );
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    // The variable, when set, wins.
    let loaded = f
        .load_with(|o| {
            o.env.insert("OPENAI_API_KEY".into(), "sk-env".into());
        })
        .unwrap();
    assert_eq!(
        loaded.credentials(None).unwrap().api_key.as_deref(),
        Some("sk-env")
    );
    // Never in config.toml.
    assert!(!f.home().join("config.toml").exists());
}

#[test]
fn agents_md_files_are_found_capped_by_the_trusted_project_and_listed_by_config_show() {
    let f = Fixture::new();
    f.user(&format!(
        "{SEED}\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        f.repo().display()
    ));
    f.write(
        &f.repo().join("AGENTS.md"),
        &"Use uv, never pip.\n".repeat(10),
    );
    f.write(&f.cwd().join("CLAUDE.md"), "Tests live in tests/.\n");
    f.project(
        &f.repo(),
        "project_doc_max_bytes = 100\nproject_doc_fallback_filenames = [\"CLAUDE.md\"]\n",
    );
    let loaded = f.load();
    let files = &loaded.instructions.files;
    assert_eq!(files.len(), 2, "{files:?}");
    assert_eq!(files[0].path, f.repo().join("AGENTS.md"));
    assert_eq!((files[0].size, files[0].kept), (190, 78));
    assert_eq!(files[1].path, f.cwd().join("CLAUDE.md"));
    assert!(!files[1].is_cut());
    let text =
        oi_config::show(&loaded, false).replace(&f.dir.path().display().to_string(), "[TMP]");
    assert!(text.contains("project_doc_max_bytes = 100"), "{text}");
    assert!(
        text.contains("#   [TMP]/repo/AGENTS.md (the first 78 of 190 bytes)"),
        "{text}"
    );
    assert!(
        text.contains("#   [TMP]/repo/sub/CLAUDE.md (22 bytes)"),
        "{text}"
    );
    let block = loaded.instructions.prompt_block().unwrap();
    assert!(block.find("Use uv").unwrap() < block.find("Tests live").unwrap());
}

#[test]
fn a_fallback_name_with_a_folder_is_refused_where_it_was_set() {
    let f = Fixture::new();
    f.user(&format!(
        "project_doc_fallback_filenames = [\"../secrets.md\"]\n{SEED}"
    ));
    let error = f.load_with(|_| {}).unwrap_err();
    let text = f.error_text(&error);
    assert!(
        text.contains("config.toml:1: `project_doc_fallback_filenames` = [\"../secrets.md\"]"),
        "{text}"
    );
    assert!(text.contains("file names without a folder"), "{text}");
}

#[test]
fn mcp_servers_are_read_with_codex_keys_checked_and_shown_without_secrets() {
    let f = Fixture::new();
    f.user(
        r#"[mcp_servers.docs]
command = "python3"
args = ["server.py", "--quiet"]
env = { DOCS_TOKEN = "tok-secret-1" }
env_vars = ["HOME"]
cwd = "/srv/docs"
tool_timeout_sec = 5
disabled_tools = ["delete_page"]

[mcp_servers.remote]
url = "https://mcp.example.com/mcp"
bearer_token_env_var = "REMOTE_TOKEN"
http_headers = { X-Team = "hdr-secret-2" }
enabled = false
enabled_tools = ["search"]
startup_timeout_sec = 2.5
"#,
    );
    let loaded = f.load();
    let servers = &loaded.config.mcp_servers;
    let docs = &servers["docs"];
    assert_eq!(
        docs.transport,
        oi_config::McpTransport::Stdio {
            command: "python3".into(),
            args: vec!["server.py".into(), "--quiet".into()],
            env: BTreeMap::from([("DOCS_TOKEN".into(), "tok-secret-1".into())]),
            env_vars: vec!["HOME".into()],
            cwd: Some("/srv/docs".into()),
        }
    );
    assert!(docs.enabled);
    assert_eq!(docs.tool_timeout_sec, 5.0);
    assert_eq!(
        docs.startup_timeout_sec,
        oi_config::McpServerSettings::DEFAULT_STARTUP_TIMEOUT_SEC
    );
    assert!(docs.offers("search") && !docs.offers("delete_page"));
    let remote = &servers["remote"];
    assert!(!remote.enabled);
    assert_eq!(remote.startup_timeout_sec, 2.5);
    assert!(remote.offers("search") && !remote.offers("fetch"));
    assert!(matches!(
        &remote.transport,
        oi_config::McpTransport::Http { url, bearer_token_env_var: Some(var), .. }
            if url == "https://mcp.example.com/mcp" && var == "REMOTE_TOKEN"
    ));
    assert_eq!(
        file_origin(&loaded, "mcp_servers.docs.command"),
        ("config.toml".into(), 2)
    );

    let text = oi_config::show(&loaded, false);
    assert!(text.contains("[mcp_servers.docs]"), "{text}");
    assert!(text.contains("command = \"python3\""), "{text}");
    assert!(
        text.contains("url = \"https://mcp.example.com/mcp\""),
        "{text}"
    );
    assert!(
        text.contains("disabled_tools = [\"delete_page\"]"),
        "{text}"
    );
    assert!(
        !text.contains("tok-secret-1") && !text.contains("hdr-secret-2"),
        "{text}"
    );

    // Neither a command nor a URL; an unknown key; a bad name: each refused
    // with the place and the fix.
    f.user("[mcp_servers.empty]\nenabled = true\n");
    let err = f.load_with(|_| {}).unwrap_err();
    let text = f.error_text(&err);
    assert!(
        text.contains("config.toml:2") && text.contains("mcp_servers.empty"),
        "{text}"
    );
    assert!(
        text.contains("either `command`") && text.contains("or `url`"),
        "{text}"
    );
    f.user("[mcp_servers.both]\ncommand = \"x\"\nurl = \"http://127.0.0.1:1/mcp\"\n");
    let text = f.error_text(&f.load_with(|_| {}).unwrap_err());
    assert!(text.contains("both `command` and `url`"), "{text}");
    f.user("[mcp_servers.docs]\ncommand = \"x\"\nstartup_timeout = 3\n");
    let text = f.error_text(&f.load_with(|_| {}).unwrap_err());
    assert!(
        text.contains("mcp_servers.docs.startup_timeout_sec"),
        "{text}"
    );
    f.user("[mcp_servers.\"my server\"]\ncommand = \"x\"\n");
    let text = f.error_text(&f.load_with(|_| {}).unwrap_err());
    assert!(text.contains("letters, digits"), "{text}");
    f.user("[mcp_servers.docs]\ncommand = \"x\"\nenv_vars = [\"sk-abc\"]\n");
    let text = f.error_text(&f.load_with(|_| {}).unwrap_err());
    assert!(text.contains("NAMES"), "{text}");
}
