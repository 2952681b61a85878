//! Results files, their summary, and comparing two of them.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::run::{Attempt, Failure};
use crate::stats::{median, wilson};

/// What `interpreter eval` writes: how it was run, and every attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// oi's version.
    pub version: String,
    /// When the run started (RFC 3339, UTC).
    pub started: String,
    /// The suite's folder.
    pub suite: String,
    /// The model, as the run's configuration named it (if known).
    #[serde(default)]
    pub model: Option<String>,
    /// The arguments passed through to the agent.
    #[serde(default)]
    pub args: Vec<String>,
    pub attempts: Vec<Attempt>,
}

impl Results {
    pub fn read(path: &Path) -> Result<Self, String> {
        let text = fs_err::read_to_string(path).map_err(|e| e.to_string())?;
        serde_json::from_str(&text).map_err(|e| {
            format!(
                "{} is not a results file of `interpreter eval`: {e}",
                path.display()
            )
        })
    }

    /// Writes the file whole (to a temporary file first, so a crash never
    /// leaves half a file).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        let tmp = path.with_extension("json.tmp");
        fs_err::write(&tmp, text)?;
        fs_err::rename(&tmp, path)
    }

    /// Whether an attempt at `task` number `repeat` is recorded.
    pub fn has(&self, task: &str, repeat: u32) -> bool {
        self.attempts
            .iter()
            .any(|a| a.task == task && a.repeat == repeat)
    }

    pub fn summary(&self) -> Summary {
        Summary::of(&self.attempts)
    }
}

/// The numbers of a set of attempts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub attempts: usize,
    pub passed: usize,
    pub rate: f64,
    /// The 95% Wilson interval of the success rate.
    pub rate_low: f64,
    pub rate_high: f64,
    /// Median cost and wall time of the successful attempts.
    pub median_cost_usd: Option<f64>,
    pub median_secs: Option<f64>,
    /// Failed attempts by kind.
    pub failures: BTreeMap<Failure, usize>,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub cost_usd: Option<f64>,
}

impl Summary {
    pub fn of(attempts: &[Attempt]) -> Self {
        let passed: Vec<&Attempt> = attempts.iter().filter(|a| a.passed).collect();
        let (rate_low, rate_high) = wilson(passed.len(), attempts.len());
        let costs: Vec<f64> = passed.iter().filter_map(|a| a.cost_usd).collect();
        let secs: Vec<f64> = passed.iter().map(|a| a.wall_secs).collect();
        let mut failures = BTreeMap::new();
        for attempt in attempts.iter().filter(|a| !a.passed) {
            *failures
                .entry(attempt.failure.unwrap_or(Failure::Check))
                .or_insert(0) += 1;
        }
        let costs_all: Vec<f64> = attempts.iter().filter_map(|a| a.cost_usd).collect();
        Self {
            attempts: attempts.len(),
            passed: passed.len(),
            rate: if attempts.is_empty() {
                0.0
            } else {
                passed.len() as f64 / attempts.len() as f64
            },
            rate_low,
            rate_high,
            median_cost_usd: median(&costs),
            median_secs: median(&secs),
            failures,
            tokens_in: attempts.iter().map(|a| a.input_tokens).sum(),
            tokens_out: attempts.iter().map(|a| a.output_tokens).sum(),
            cost_usd: (!costs_all.is_empty()).then(|| costs_all.iter().sum()),
        }
    }

    /// One paragraph for people.
    pub fn text(&self) -> String {
        let mut out = format!(
            "{} of {} attempts passed: {:.1}% (95% interval {:.1}–{:.1}%)\n",
            self.passed,
            self.attempts,
            self.rate * 100.0,
            self.rate_low * 100.0,
            self.rate_high * 100.0
        );
        let cost = self
            .median_cost_usd
            .map_or_else(|| "unknown".to_owned(), |c| format!("${c:.4}"));
        let secs = self
            .median_secs
            .map_or_else(|| "-".to_owned(), |s| format!("{s:.1} s"));
        out.push_str(&format!(
            "per successful task (median): {cost}, {secs}; tokens in all: {} in, {} out{}\n",
            self.tokens_in,
            self.tokens_out,
            self.cost_usd
                .map_or_else(String::new, |c| format!(", ${c:.4}"))
        ));
        if !self.failures.is_empty() {
            let kinds: Vec<String> = self
                .failures
                .iter()
                .map(|(kind, n)| format!("{} {n}", kind.describe()))
                .collect();
            out.push_str(&format!("failures: {}\n", kinds.join("; ")));
        }
        out
    }
}

/// The table of tasks: attempts passed, median turns, cost and time, and
/// how the others failed.
pub fn table(attempts: &[Attempt]) -> String {
    let mut by_task: BTreeMap<&str, Vec<&Attempt>> = BTreeMap::new();
    for attempt in attempts {
        by_task
            .entry(attempt.task.as_str())
            .or_default()
            .push(attempt);
    }
    let width = by_task.keys().map(|k| k.len()).max().unwrap_or(4).max(4);
    let mut out = format!(
        "{:<width$}  {:>6}  {:>5}  {:>9}  {:>7}  failures\n",
        "task", "passed", "turns", "cost", "time"
    );
    for (task, list) in &by_task {
        let passed = list.iter().filter(|a| a.passed).count();
        let turns =
            median(&list.iter().map(|a| f64::from(a.turns)).collect::<Vec<_>>()).unwrap_or(0.0);
        let costs: Vec<f64> = list.iter().filter_map(|a| a.cost_usd).collect();
        let cost = median(&costs).map_or_else(|| "-".to_owned(), |c| format!("${c:.4}"));
        let secs = median(&list.iter().map(|a| a.wall_secs).collect::<Vec<_>>()).unwrap_or(0.0);
        let mut kinds: BTreeMap<Failure, usize> = BTreeMap::new();
        for a in list.iter().filter(|a| !a.passed) {
            *kinds
                .entry(a.failure.unwrap_or(Failure::Check))
                .or_insert(0) += 1;
        }
        let failures: Vec<String> = kinds
            .iter()
            .map(|(k, n)| format!("{} ×{n}", k.describe()))
            .collect();
        out.push_str(&format!(
            "{task:<width$}  {:>6}  {turns:>5.0}  {cost:>9}  {:>6.1}s  {}\n",
            format!("{passed}/{}", list.len()),
            secs,
            failures.join(", ")
        ));
    }
    out
}

/// How two results differ.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub before: Summary,
    pub after: Summary,
    /// Tasks whose pass rate changed: (task, before, after), rates 0..1.
    pub changed: Vec<(String, f64, f64)>,
    /// Tasks in only one of the two.
    pub only_before: Vec<String>,
    pub only_after: Vec<String>,
}

fn rates(attempts: &[Attempt]) -> BTreeMap<String, f64> {
    let mut counts: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for a in attempts {
        let entry = counts.entry(a.task.clone()).or_insert((0, 0));
        entry.1 += 1;
        if a.passed {
            entry.0 += 1;
        }
    }
    counts
        .into_iter()
        .map(|(task, (passed, all))| (task, passed as f64 / all as f64))
        .collect()
}

impl Comparison {
    pub fn of(before: &Results, after: &Results) -> Self {
        let a = rates(&before.attempts);
        let b = rates(&after.attempts);
        let changed = a
            .iter()
            .filter_map(|(task, ra)| {
                let rb = b.get(task)?;
                ((ra - rb).abs() > f64::EPSILON).then(|| (task.clone(), *ra, *rb))
            })
            .collect();
        Self {
            before: before.summary(),
            after: after.summary(),
            changed,
            only_before: a.keys().filter(|t| !b.contains_key(*t)).cloned().collect(),
            only_after: b.keys().filter(|t| !a.contains_key(*t)).cloned().collect(),
        }
    }

    pub fn text(&self) -> String {
        let mut out = format!(
            "success rate: {:.1}% → {:.1}% ({:+.1} points); {} → {} attempts\n",
            self.before.rate * 100.0,
            self.after.rate * 100.0,
            (self.after.rate - self.before.rate) * 100.0,
            self.before.attempts,
            self.after.attempts
        );
        if self.changed.is_empty() {
            out.push_str("no task changed\n");
        }
        for (task, before, after) in &self.changed {
            let mark = if after > before { "better" } else { "worse" };
            out.push_str(&format!(
                "  {task}: {:.0}% → {:.0}% ({mark})\n",
                before * 100.0,
                after * 100.0
            ));
        }
        for task in &self.only_before {
            out.push_str(&format!("  {task}: only in the first\n"));
        }
        for task in &self.only_after {
            out.push_str(&format!("  {task}: only in the second\n"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn attempt(
        task: &str,
        passed: bool,
        cost: f64,
        secs: f64,
        failure: Option<Failure>,
    ) -> Attempt {
        let mut a: Attempt = serde_json::from_value(serde_json::json!({
            "task": task, "repeat": 1, "passed": passed, "turns": 2, "requests": 2, "runs": 1,
            "input_tokens": 100, "output_tokens": 10, "wall_secs": secs, "timed_out": false,
            "run_timeouts": 0, "kernel_crashes": 0, "loop_guard": false
        }))
        .unwrap();
        a.cost_usd = Some(cost);
        a.failure = failure;
        a
    }

    #[test]
    fn the_summary_counts_exactly() {
        let attempts = vec![
            attempt("a", true, 0.01, 2.0, None),
            attempt("b", true, 0.03, 4.0, None),
            attempt("c", false, 0.5, 9.0, Some(Failure::LoopGuard)),
            attempt("d", false, 0.2, 1.0, Some(Failure::Check)),
        ];
        let s = Summary::of(&attempts);
        assert_eq!((s.attempts, s.passed), (4, 2));
        assert_eq!(s.rate, 0.5);
        assert_eq!(s.median_cost_usd, Some(0.02));
        assert_eq!(s.median_secs, Some(3.0));
        assert_eq!(s.failures[&Failure::LoopGuard], 1);
        assert_eq!(s.failures[&Failure::Check], 1);
        assert_eq!(s.tokens_in, 400);
        let text = s.text();
        assert!(
            text.starts_with("2 of 4 attempts passed: 50.0% (95% interval 15.0–85.0%)"),
            "{text}"
        );
        assert!(
            table(&attempts).contains("c        0/1"),
            "{}",
            table(&attempts)
        );
    }

    #[test]
    fn comparing_names_the_tasks_that_changed() {
        let results = |attempts| Results {
            version: "0".into(),
            started: "t".into(),
            suite: "s".into(),
            model: None,
            args: Vec::new(),
            attempts,
        };
        let before = results(vec![
            attempt("a", true, 0.0, 1.0, None),
            attempt("b", false, 0.0, 1.0, Some(Failure::Check)),
            attempt("old", true, 0.0, 1.0, None),
        ]);
        let after = results(vec![
            attempt("a", true, 0.0, 1.0, None),
            attempt("b", true, 0.0, 1.0, None),
            attempt("new", false, 0.0, 1.0, Some(Failure::Timeout)),
        ]);
        let c = Comparison::of(&before, &after);
        assert_eq!(c.changed, vec![("b".to_owned(), 0.0, 1.0)]);
        assert_eq!(c.only_before, ["old"]);
        assert_eq!(c.only_after, ["new"]);
        assert!(c.text().contains("b: 0% → 100% (better)"), "{}", c.text());
    }
}
