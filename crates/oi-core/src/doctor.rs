//! `interpreter doctor`: what oi sees on this machine — its configuration,
//! the model it would use and whether that answers, the keys present, model
//! servers running here, the languages it can run, what the sandbox can
//! enforce, and whether OS mode has a display — each with a hint.

use std::time::Duration;

use serde::Serialize;

use crate::setup::{self, SessionRequest};

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// There and working.
    Ok,
    /// Absent, and only needed for something optional.
    Absent,
    /// Works, with a limit worth knowing.
    Warning,
    /// A task cannot run (well) until this is fixed.
    Problem,
}

/// One thing looked at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    pub status: Status,
    pub what: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// Checks under a heading.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Section {
    pub title: &'static str,
    pub checks: Vec<Check>,
}

/// Everything looked at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    pub sections: Vec<Section>,
}

impl Report {
    /// Whether something stops tasks from running.
    pub fn has_problems(&self) -> bool {
        self.sections
            .iter()
            .flat_map(|s| &s.checks)
            .any(|c| c.status == Status::Problem)
    }
}

fn check(status: Status, what: impl Into<String>, hint: Option<&str>) -> Check {
    Check {
        status,
        what: what.into(),
        hint: hint.map(str::to_owned),
    }
}

/// How long the model server gets to answer the models request.
const ANSWER_WITHIN: Duration = Duration::from_secs(5);

/// Looks at everything for a session `request` would start (`api_key`:
/// the one given on the command line).
pub async fn examine(request: &SessionRequest, api_key: Option<&str>) -> Report {
    let mut sections = Vec::new();
    let loaded = setup::load_config(request);
    let mut configuration = Vec::new();
    match &loaded {
        Ok(loaded) => {
            configuration.push(check(
                Status::Ok,
                format!(
                    "configuration read ({}{})",
                    oi_config::display_path(&loaded.user_file),
                    if loaded.user_file.is_file() {
                        ""
                    } else {
                        ", not written yet: oi's defaults"
                    }
                ),
                None,
            ));
            for warning in &loaded.warnings {
                configuration.push(check(Status::Warning, warning.clone(), None));
            }
        }
        Err(e) => configuration.push(Check {
            status: Status::Problem,
            what: e.to_string(),
            hint: e.hint(),
        }),
    }
    sections.push(Section {
        title: "Configuration",
        checks: configuration,
    });
    if let Ok(loaded) = &loaded {
        sections.push(Section {
            title: "Model",
            checks: model(loaded, api_key).await,
        });
        sections.push(Section {
            title: "API keys",
            checks: keys(loaded),
        });
    }
    sections.push(Section {
        title: "Model servers on this machine",
        checks: local_servers(loaded.as_ref().ok()).await,
    });
    sections.push(Section {
        title: "Languages",
        checks: languages(),
    });
    sections.push(Section {
        title: "Sandbox",
        checks: sandbox(loaded.as_ref().ok()).await,
    });
    sections.push(Section {
        title: "OS mode",
        checks: os_mode(),
    });
    Report { sections }
}

async fn model(loaded: &oi_config::Loaded, api_key: Option<&str>) -> Vec<Check> {
    let c = &loaded.config;
    let model = c.model.as_deref().unwrap_or("(none)");
    if setup::builtin::selected(loaded) {
        let mut checks = vec![check(
            Status::Ok,
            format!("the built-in model, run by oi itself: {model}"),
            None,
        )];
        if !oi_builtin::AVAILABLE {
            checks.push(check(
                Status::Problem,
                "this build of oi has no built-in engine",
                Some("install a build with the `builtin` feature, or use a model server (`--local`) or an API key"),
            ));
        } else if let Ok(cache) = setup::builtin::cache_dir(loaded) {
            let cached = oi_builtin::catalog::cached(&cache);
            if cached.is_empty() {
                checks.push(check(
                    Status::Warning,
                    "no model downloaded yet",
                    Some("`interpreter models --download qwen2.5-coder-1.5b` (or agree at the first start)"),
                ));
            }
        }
        return checks;
    }
    let provider = match setup::provider(loaded, api_key) {
        Ok(found) => found,
        Err(e) => {
            return vec![Check {
                status: Status::Problem,
                what: e.to_string(),
                hint: e.hint(),
            }];
        }
    };
    let (config, wire) = provider;
    let mut checks = vec![check(
        Status::Ok,
        format!(
            "{} at {} ({} wire), model {model}",
            c.provider.name, config.base_url, wire
        ),
        None,
    )];
    match tokio::time::timeout(ANSWER_WITHIN, oi_providers::list_models(&config, wire)).await {
        Ok(Ok(models)) => {
            let listed = c.model.as_ref().is_none_or(|m| models.contains(m));
            checks.push(check(
                if listed { Status::Ok } else { Status::Warning },
                format!(
                    "the server answers: {} model{}{}",
                    models.len(),
                    if models.len() == 1 { "" } else { "s" },
                    if listed {
                        ""
                    } else {
                        ", not including this one"
                    }
                ),
                (!listed).then_some("`interpreter models` lists them; pick one with `--model`"),
            ));
        }
        Ok(Err(e)) => checks.push(Check {
            status: Status::Problem,
            what: format!("the server does not answer: {e}"),
            hint: e
                .hint()
                .or_else(|| Some("is it running, and is the address right?".to_owned())),
        }),
        Err(_) => checks.push(check(
            Status::Problem,
            format!(
                "the server did not answer within {} s",
                ANSWER_WITHIN.as_secs()
            ),
            Some("is it running, and is the address right?"),
        )),
    }
    checks
}

fn keys(loaded: &oi_config::Loaded) -> Vec<Check> {
    let mut checks = Vec::new();
    for provider in loaded.config.providers.values() {
        let Some(var) = &provider.env_key else {
            continue;
        };
        let set = loaded.env.get(var).is_some_and(|v| !v.trim().is_empty());
        checks.push(if set {
            check(Status::Ok, format!("{var} ({})", provider.name), None)
        } else {
            Check {
                status: Status::Absent,
                what: format!("{var} not set ({})", provider.name),
                hint: Some(format!(
                    "`export {var}=…`, or `interpreter setup` to paste it; then `-c model_provider={}`",
                    provider.id
                )),
            }
        });
    }
    checks
}

async fn local_servers(loaded: Option<&oi_config::Loaded>) -> Vec<Check> {
    let (servers, places) = setup::local::servers().await;
    let mut checks: Vec<Check> = servers
        .iter()
        .map(|s| {
            check(
                Status::Ok,
                format!(
                    "{} at {}: {} model{} ({})",
                    s.kind,
                    s.base_url,
                    s.models.len(),
                    if s.models.len() == 1 { "" } else { "s" },
                    s.models.join(", ")
                ),
                None,
            )
        })
        .collect();
    if servers.is_empty() {
        checks.push(check(
            Status::Absent,
            format!("none answered (looked for {places})"),
            Some("start one (`ollama serve`, LM Studio's server, `llama-server -m MODEL.gguf`) and use `--local`"),
        ));
    }
    let engine = if oi_builtin::AVAILABLE {
        let downloaded = loaded
            .and_then(|l| setup::builtin::cache_dir(l).ok())
            .map(|cache| oi_builtin::catalog::cached(&cache))
            .unwrap_or_default();
        if downloaded.is_empty() {
            check(
                Status::Absent,
                "the built-in model: none downloaded",
                Some("`interpreter models --download qwen2.5-coder-1.5b`"),
            )
        } else {
            let names: Vec<&str> = downloaded.iter().map(|(n, _, _)| n.as_str()).collect();
            check(
                Status::Ok,
                format!("the built-in model: {} downloaded", names.join(", ")),
                None,
            )
        }
    } else {
        check(
            Status::Absent,
            "the built-in model: not in this build",
            Some("a build with the `builtin` feature runs a model in oi's own process"),
        )
    };
    checks.push(engine);
    checks
}

fn languages() -> Vec<Check> {
    let found = oi_kernels::detect_languages();
    oi_kernels::known_languages()
        .into_iter()
        .map(|name| match found.iter().find(|l| l.name == name) {
            Some(spec) => check(
                Status::Ok,
                format!("{name}: {}", spec.program.display()),
                None,
            ),
            None => Check {
                // The model's two everyday languages matter; the rest are optional.
                status: if matches!(name, "python" | "shell") {
                    Status::Problem
                } else {
                    Status::Absent
                },
                what: format!("{name}: not found"),
                hint: oi_kernels::install_hint(name).map(|h| format!("install {h}")),
            },
        })
        .collect()
}

async fn sandbox(loaded: Option<&oi_config::Loaded>) -> Vec<Check> {
    let support = oi_sandbox::support();
    let mut checks = vec![
        if support.landlock {
            check(Status::Ok, "Landlock: writes are confined", None)
        } else {
            check(
                Status::Warning,
                "no Landlock: the sandbox cannot confine writes",
                Some("Linux 5.13 or newer with Landlock enabled; or `--sandbox container`"),
            )
        },
        if support.namespaces {
            check(
                Status::Ok,
                "namespaces: .git and oi's folder kept read-only",
                None,
            )
        } else {
            check(
                Status::Warning,
                "no unprivileged namespaces: chmod and touch outside the workspace cannot be refused",
                Some("allow unprivileged user namespaces (kernel.unprivileged_userns_clone=1)"),
            )
        },
        if support.seccomp {
            check(
                Status::Ok,
                "seccomp: the network can be turned off for code",
                None,
            )
        } else {
            check(
                Status::Warning,
                "no seccomp filter for this machine: `network = false` cannot be enforced",
                None,
            )
        },
    ];
    // The engine `--sandbox container` would use (`[container] engine`,
    // `host`), asked for its version.
    let spec = loaded.map_or_else(
        || oi_kernels::ContainerSpec::new(String::new()),
        setup::container_spec,
    );
    let answer = tokio::time::timeout(ANSWER_WITHIN, oi_kernels::engine_version(&spec)).await;
    checks.push(match answer {
        Ok(Ok((engine, version))) => check(
            Status::Ok,
            format!("containers: {engine} {version} answers (`--sandbox container`)"),
            None,
        ),
        Ok(Err(oi_kernels::ContainerError::NoEngine)) => check(
            Status::Absent,
            "no Docker or Podman: `--sandbox container` is not available",
            Some("install Podman or Docker to run code in containers"),
        ),
        Ok(Err(e)) => check(
            Status::Warning,
            format!("containers: {e}"),
            Some("start the engine (`systemctl start docker`), or point `[container] host` at one"),
        ),
        Err(_) => check(
            Status::Warning,
            format!(
                "containers: the engine did not answer within {} s",
                ANSWER_WITHIN.as_secs()
            ),
            Some("start the engine, or point `[container] host` at one"),
        ),
    });
    checks.push(if which::which("git").is_ok() {
        check(Status::Ok, "git: runs are checkpointed, /undo works", None)
    } else {
        check(
            Status::Warning,
            "no git: runs are not checkpointed and /undo is not available",
            Some("install git"),
        )
    });
    checks
}

fn os_mode() -> Vec<Check> {
    match oi_computer::connect() {
        Ok(computer) => vec![check(
            Status::Ok,
            format!(
                "{} ({}): the model can see and use it with `--os`",
                computer.name(),
                computer.screen_size()
            ),
            None,
        )],
        // The error says what to do.
        Err(e) => vec![check(Status::Absent, e.to_string(), None)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_are_what_stops_tasks() {
        let mut report = Report {
            sections: vec![Section {
                title: "x",
                checks: vec![check(Status::Absent, "ruby: not found", None)],
            }],
        };
        assert!(!report.has_problems());
        report.sections[0]
            .checks
            .push(check(Status::Problem, "python: not found", None));
        assert!(report.has_problems());
    }
}
