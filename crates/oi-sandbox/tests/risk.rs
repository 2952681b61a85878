//! The risk classifier against its labelled corpus: every risky case must
//! be caught (recall 100%); precision is printed and kept above a floor.

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
}

#[test]
fn the_classifier_catches_every_risky_case_of_the_corpus() {
    let text = include_str!("risk_corpus.toml");
    let corpus: Corpus = toml_edit::de::from_str(text).unwrap();
    assert!(corpus.case.len() >= 150, "{} cases", corpus.case.len());
    let ctx = RiskContext {
        workspace: PathBuf::from("/home/u/project"),
        cwd: PathBuf::from("/home/u/project"),
        home: Some(PathBuf::from("/home/u")),
        temp_dirs: vec![PathBuf::from("/tmp"), PathBuf::from("/var/tmp")],
    };
    let (mut tp, mut fp, mut tn, mut fn_) = (0u32, 0u32, 0u32, 0u32);
    let mut missed = Vec::new();
    let mut false_alarms = Vec::new();
    for case in &corpus.case {
        let risks = assess(&case.language, &case.code, &ctx);
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
        "risky code not caught:\n{}",
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
