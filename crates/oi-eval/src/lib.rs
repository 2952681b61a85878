//! Evaluation: how often tasks of a kind succeed with a given model, in how
//! many steps, for how much.
//!
//! A suite is a folder of tasks; a task is a folder with `task.toml` (the
//! prompt, a timeout, tags, an optional turn limit), input files (`files/`,
//! copied into a fresh workspace, and/or a `setup` script run there) and a
//! `check` script that inspects the workspace afterwards (exit 0 = pass).
//! [`run::run_task`] runs one attempt through `interpreter exec --oi-json` and
//! reads its events; [`report`] turns the attempts into a summary (success
//! rate with a Wilson interval, median cost and time of the successes,
//! failures by kind) and compares two results files.

pub mod report;
pub mod run;
pub mod stats;
pub mod suite;

pub use report::{Comparison, Results, Summary};
pub use run::{Attempt, Failure, RunSettings};
pub use suite::{Suite, SuiteError, Task};
