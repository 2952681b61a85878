//! The risk classifier against its labelled corpus: every risky case must
//! be caught by the rule it is labelled with; precision is printed and kept
//! above a floor. Precision is also measured on code written to do
//! ordinary work: the reference solutions of the bundled eval suite.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "test code: a panic is a test failure; the scores are printed"
)]

use std::path::PathBuf;

use oi_sandbox::{RiskContext, assess};

#[derive(serde::Deserialize)]
struct Corpus {
    case: Vec<Case>,
}

#[derive(serde::Deserialize)]
struct Case {
    language: String,
    code: String,
    risky: bool,
    /// The rule that must catch it (every risky case names one).
    rule: Option<String>,
}

fn corpus_context() -> RiskContext {
    RiskContext {
        workspace: PathBuf::from("/home/u/project"),
        cwd: PathBuf::from("/home/u/project"),
        home: Some(PathBuf::from("/home/u")),
        temp_dirs: vec![PathBuf::from("/tmp")],
        protected: vec![PathBuf::from("/home/u/.openinterpreter")],
    }
}

#[test]
fn the_classifier_catches_every_risky_case_of_the_corpus() {
    let text = include_str!("risk_corpus.toml");
    let corpus: Corpus = toml_edit::de::from_str(text).unwrap();
    assert!(corpus.case.len() >= 250, "{} cases", corpus.case.len());
    let ctx = corpus_context();
    let known: Vec<&str> = oi_sandbox::RULES.iter().map(|(name, _)| *name).collect();
    let (mut tp, mut fp, mut tn, mut fn_) = (0u32, 0u32, 0u32, 0u32);
    let mut missed = Vec::new();
    let mut false_alarms = Vec::new();
    for case in &corpus.case {
        let risks = assess(&case.language, &case.code, &ctx);
        if case.risky {
            let rule = case
                .rule
                .as_deref()
                .unwrap_or_else(|| panic!("a risky case names no rule: {}", case.code));
            assert!(
                known.contains(&rule),
                "unknown rule `{rule}`: {}",
                case.code
            );
        }
        let wrong_rule = case.risky
            && !risks.is_empty()
            && !risks.iter().any(|r| Some(r.rule) == case.rule.as_deref());
        if wrong_rule {
            let found: Vec<&str> = risks.iter().map(|r| r.rule).collect();
            missed.push(format!(
                "[{}] {} → found {found:?}, not `{}`",
                case.language,
                case.code,
                case.rule.as_deref().unwrap_or("")
            ));
            fn_ += 1;
            continue;
        }
        match (case.risky, risks.is_empty()) {
            (true, false) => tp += 1,
            (true, true) => {
                fn_ += 1;
                missed.push(format!("[{}] {}", case.language, case.code));
            }
            (false, false) => {
                fp += 1;
                let reasons: Vec<String> = risks.iter().map(ToString::to_string).collect();
                false_alarms.push(format!(
                    "[{}] {} → {}",
                    case.language,
                    case.code,
                    reasons.join("; ")
                ));
            }
            (false, true) => tn += 1,
        }
    }
    let precision = f64::from(tp) / f64::from((tp + fp).max(1));
    let recall = f64::from(tp) / f64::from((tp + fn_).max(1));
    eprintln!(
        "risk corpus: {} cases ({} risky); precision {:.1}%, recall {:.1}% (tp {tp}, fp {fp}, tn {tn}, fn {fn_})",
        corpus.case.len(),
        tp + fn_,
        precision * 100.0,
        recall * 100.0
    );
    for alarm in &false_alarms {
        eprintln!("  false alarm: {alarm}");
    }
    assert!(
        missed.is_empty(),
        "risky code not caught by its rule:\n{}",
        missed.join("\n")
    );
    assert!(
        precision >= 0.9,
        "precision {:.1}% fell below 90%:\n{}",
        precision * 100.0,
        false_alarms.join("\n")
    );
}

#[test]
fn ordinary_work_is_not_taken_for_risky() {
    // The reference solutions of the bundled eval suite: shell scripts that
    // do everyday work, Python in here-documents included, among them the
    // safety tasks' careful answers.
    let suite = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../evals/basic");
    let ctx = corpus_context();
    let mut checked = 0;
    let mut alarms = Vec::new();
    for task in fs_err::read_dir(&suite).unwrap() {
        let solution = task.unwrap().path().join("solution");
        let Ok(code) = fs_err::read_to_string(&solution) else {
            continue;
        };
        checked += 1;
        let risks = assess("shell", &code, &ctx);
        if !risks.is_empty() {
            let found: Vec<String> = risks.iter().map(ToString::to_string).collect();
            alarms.push(format!("{}: {}", solution.display(), found.join("; ")));
        }
    }
    eprintln!(
        "ordinary work: {} of {checked} reference solutions flagged",
        alarms.len()
    );
    assert!(
        checked >= 30,
        "{checked} solutions found in {}",
        suite.display()
    );
    assert!(alarms.is_empty(), "false alarms:\n{}", alarms.join("\n"));
}

#[test]
fn every_rule_is_documented_in_the_safety_docs() {
    let docs = include_str!("../../../docs/safety.md");
    for (name, _) in oi_sandbox::RULES {
        assert!(
            docs.contains(&format!("`{name}`")),
            "docs/safety.md does not name `{name}`"
        );
    }
}

#[test]
fn every_risk_has_a_reason_and_an_excerpt() {
    let ctx = RiskContext::new("/home/u/project");
    let risks = assess(
        "shell",
        "sudo rm -rf /var/lib/app && git push --force",
        &ctx,
    );
    assert_eq!(risks.len(), 3, "{risks:?}");
    for risk in &risks {
        assert!(
            !risk.reason.is_empty() && !risk.excerpt.is_empty(),
            "{risk:?}"
        );
    }
    assert_eq!(
        risks[0].to_string(),
        "runs as root (sudo) (`sudo rm -rf /var/lib/app`)"
    );
}
