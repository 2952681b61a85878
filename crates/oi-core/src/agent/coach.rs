//! Small models stop short in a few ways that a word from oi fixes: they
//! describe code instead of running it, end without the file the task
//! names (or with it empty), say a task is done without having run
//! anything or right after a run that failed, or stop once a missing
//! package is installed without running again what needed it. The coach
//! tells them once each (as `[oi: …]` notes), re-runs the step that lacked
//! a package once it is installed, and shows them what their runs made of
//! the files the task names, so they can tell a wrong result from a right
//! one. It also says when the next reply must run code (the first of a
//! task that asks for something done, one answering a note that asks for
//! code), for the reply's grammar to require a code block. For other
//! models it stays silent.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use oi_protocol::HarnessKind;

use super::error_hint::LineChange;
use super::save_as::is_python;
use super::{records, table, typed};
use crate::harness::{Action, ProposedRun, Report};

/// Runs done again after an install, at most, in a task.
const MAX_RERUNS: u8 = 3;

/// Replies after a failed run that must run code, at most, in a task.
const MAX_FIXES: u8 = 3;
/// Times the completion check stops a task from ending, at most: the
/// second only when the model ran code since the first and the check
/// still finds something wrong (a run that changed nothing, then "The
/// task is done.").
const MAX_CHECKS: u8 = 2;

/// What the coach knows of the current task.
pub(super) struct Coach {
    small_model: bool,
    /// Whether the task asks a question (which may be answered without
    /// code) rather than for something to be done.
    question: bool,
    /// Files the task names that did not exist when it began: likely what
    /// it asks to make.
    expected: Vec<String>,
    /// Whether the task says to write one of `expected` ("Write the number
    /// to commits.txt"), question or not: then it must exist to end.
    writes_expected: bool,
    /// The task's text as [`typed::key`] makes it.
    task_key: String,
    /// The output of the task's runs so far, as [`typed::key`] makes it
    /// (bounded): a value printed back from it was found, not typed.
    outputs_key: String,
    /// A value the last batch only printed, or only wrote to a file (the
    /// second value), typed into its code.
    typed: Option<(String, Option<String>)>,
    /// Whether the model was told a run only printed a typed value.
    told_typed: bool,
    /// Files a run wrote a value typed into its code to, with that value:
    /// a file that still holds it as the task ends holds a guess.
    guesses: BTreeMap<String, String>,
    /// Whether the model was told a run printed what the task asks it to
    /// write to a file that does not exist yet, or wrote it under another
    /// name.
    told_unwritten: bool,
    /// The one result file the task asks to write, still missing, and the
    /// model's last block that printed something, changed to send what it
    /// prints there ([`writing_output`]): run by oi once if the model
    /// ends the task without writing the file ([`Coach::standing_write`]).
    unwritten_block: Option<(String, ProposedRun)>,
    /// Whether oi ran [`Self::unwritten_block`].
    ran_unwritten_block: bool,
    /// Lines of the model's code a note gave changed (a value written with
    /// words around it, a result written under another name).
    line_fixes: Vec<KnownFix>,
    /// Whether oi ran the model's last code with a known fix it ended
    /// without making ([`Coach::standing_fix`]).
    ran_standing_fix: bool,
    /// Whether the last run of the batch whose reports come next failed,
    /// as the loop guard read its status.
    batch_failed: bool,
    /// Whether any run of the batch whose reports come next started (not
    /// all were refused or skipped before it).
    batch_ran: bool,
    /// Whether the model was told it described code instead of running it.
    told_to_run: bool,
    /// Whether the files the task names were checked when it ended.
    checked_outputs: bool,
    /// Whether code ran in this task, and whether a model that ended
    /// without running anything was told so.
    ran_any: bool,
    told_idle: bool,
    /// The files the task names, as last shown: size and change time.
    shown: HashMap<String, (u64, Option<SystemTime>)>,
    /// How many times the model was stopped before ending after a failed
    /// run or with a wrong-looking result, and whether code ran since.
    completion_checks: u8,
    ran_since_check: bool,
    /// The last run that failed for lack of a package or program, until it
    /// runs again; and how many times one was re-run for the model.
    lacking: Option<ProposedRun>,
    reruns: u8,
    /// The last Python run that failed naming something not defined
    /// (`NameError: name 'set_key' is not defined`), with that name.
    undefined: Option<(String, ProposedRun)>,
    /// Whether the next reply must run code.
    wants_code: bool,
    /// Whether the task asks for something done (or a file made), so that
    /// its first reply must run code; and how many replies after a failed
    /// run were held to code.
    acts: bool,
    fixes: u8,
    /// Files the task names that existed when it began: its inputs.
    inputs: Vec<String>,
    /// The configuration files (`.ini` …) among the inputs that set no key
    /// twice in a section when the task began.
    configs: Vec<String>,
    /// Whether the model was told a value it failed to convert is a
    /// header.
    told_header: bool,
    /// Whether oi ran a block again without its line that dropped a
    /// table's first row of data as if it were the header.
    kept_first_row: bool,
    /// Whether oi ran a block again with `file=` given to the print that
    /// sat in a `with open(…) as f:` it never wrote to.
    printed_beside_open: bool,
    /// Whether oi ran a block again with its names lowercased before a
    /// suffix test that missed a file named in another case.
    lowered_suffix: bool,
    /// Whether oi ran a block again with the list it joins into a result's
    /// lines made of each value once, where the task asks for each once.
    deduplicated: bool,
    /// Whether oi ran a block again counting an age in whole years where
    /// it divided days by a year's length.
    counted_years: bool,
    /// Whether oi ran a block again writing how many values there are
    /// where it wrote their list and the task asks for the number.
    counted_list: bool,
    /// Whether the model was told a test it wrote against typed values is
    /// no evidence.
    told_self_test: bool,
    /// Whether the task asks for the earliest or latest of something
    /// (`earliest`, `latest`, `oldest`, `newest`, `most recent`), and oi
    /// has not yet sorted an input by its dates for it.
    by_time: bool,
    /// The result file a small model's last batch left as it was while it
    /// printed something: a result printed, not written (again).
    printed_unwritten: Option<String>,
    /// Whether the model was told its code typed an input's rows in
    /// instead of reading the file.
    told_typed_rows: bool,
    /// Whether it was told that a collection is filled under the name of
    /// its own loop variable.
    told_shadowed: bool,
    /// The header line of a CSV input that the scratch output of the
    /// script last run for the task does not begin with, with the input's
    /// name ([`super::save_as`] says so after the run).
    scratch_header: Option<(String, String)>,
    /// Whether the task speaks of a header ("with the same header").
    asks_header: bool,
    /// A result file the last run that changed it appended to, grown
    /// since it was shown before: its other faults are likely the earlier
    /// runs' lines.
    appended: Option<String>,
    /// Whether it was told its code wrote a copy of a result beside it.
    told_copy: bool,
    /// Whether it was told a piece of the script to change ran alone.
    told_piece: bool,
    /// Whether the task asks why something happens, or for an explanation,
    /// without asking for a change.
    asks_why: bool,
    /// The scripts the task names and asks to change (`Fix average.py.`,
    /// `Add an option to csv2md.py`), which exist.
    rewrites: Vec<String>,
    /// Whether the model was told the column names of the input tables
    /// after it asked for one they lack.
    told_columns: bool,
    /// Whether it was told a column of an input is gone from the table
    /// its code used.
    told_lost: bool,
    /// Whether the model was told a table was made of a list that stayed
    /// empty ([`super::empty_table`]).
    told_empty: bool,
    /// Whether the model was told that code it sent again had just run
    /// without errors, with nothing found wrong in the results.
    told_repeat: bool,
    /// Whether the model was told that a block it ran was a file's text,
    /// not code.
    told_content: bool,
    /// The input files' text as the model last saw it (as the task began,
    /// then after each change shown), for showing what a run changed.
    /// By name, so every check reads them in one order.
    inputs_seen: BTreeMap<String, String>,
    /// Commands the task quotes that run a script it names ("so that
    /// `python3 csv2md.py data.csv --sort price` works"), until one of the
    /// model's runs runs them.
    untried: Vec<String>,
    /// Columns of the input tables holding numbers written with signs or
    /// separators.
    written_numbers: Vec<WrittenColumn>,
    /// The last of them that the model's code used as it is (without
    /// removing the signs), until code that does remove them runs.
    raw_numbers: Option<usize>,
    /// The kinds of error hints given in this task (each once).
    hinted: Vec<&'static str>,
    /// The failed Python block of the batch, with the one line its error
    /// names changed as the error calls for (or the import it lacked put
    /// at its top), to run again for the model ([`Self::rerun`]); with the
    /// note that leads its result, saying what oi changed.
    fix_rerun: Option<(ProposedRun, String)>,
    /// The text files the task names that it asks to change ("set the
    /// port in settings.ini"), when it names no file to make; not those
    /// it says to keep ("important.db must stay").
    edits: Vec<String>,
    /// Whether a run changed one of the input files.
    changed_input: bool,
    /// The regular expressions of the last batch's Python code.
    patterns: Vec<String>,
    /// The Python code of the last batch (its patterns' lines are given
    /// back fixed; a `groupby` in it explains a lost column).
    python: String,
    /// Whether the model was told a pattern of its code finds nothing.
    told_pattern: bool,
    /// The folders the task names (`photos/`) and their listing as the
    /// model last saw it, for showing what a run made of them (renamed
    /// files keep no name the task names, so no file preview shows them).
    folders_seen: BTreeMap<String, String>,
    /// The files in subfolders of the folders the task names, with their
    /// folder, when the task asks to keep files' folders as they move
    /// (small models).
    layout: super::kept_folders::Layout,
    /// Whether the model was told a file lost its folders (or oi put it
    /// where it belongs).
    told_flattened: bool,
    /// What the task asks of the form of each result file: said by the
    /// whole task when it names one, else by the sentence naming the file.
    asked: Vec<(String, Asked)>,
    /// What the task asks of the names in the folders it works on.
    names: NameRules,
    /// Python files the task names whose last change left out the line
    /// that ran them (`main(sys.argv[1])`), with that line.
    dropped_entry: BTreeMap<String, String>,
    /// Python files the task names that printed their result alone and
    /// now print words around it: the print before and after.
    labelled_output: BTreeMap<String, (String, String)>,
    /// Python files the task names that printed only their result and now
    /// print messages too, which a run showed: the print of each.
    message_prints: BTreeMap<String, String>,
    /// The scripts the task names as they were when it began (small
    /// models): what a new version is held to.
    scripts_before: BTreeMap<String, String>,
    /// Whether the task says to leave punctuation out of words.
    no_punctuation: bool,
    /// A script the task asks to change whose last run printed a word
    /// with punctuation on it, where the task leaves punctuation out: the
    /// script and the word.
    punctuated_output: Option<(String, String)>,
    /// Folders the task says to make ("make a folder by_country") that
    /// did not exist as it began, small models only.
    folders_asked: Vec<String>,
    /// The decimals the task asks numbers to have ("with 2 decimals"),
    /// small models only.
    decimals: Option<usize>,
    /// A script the task asks to change whose last run printed a number
    /// with other decimals than the task asks: the script and the number.
    undecimal_output: Option<(String, String)>,
    /// The last batch's one block, with its language, when it held one
    /// (small models).
    batch_block: Option<(String, String)>,
    /// For each result file, the block that last changed it: shown again
    /// when the task is not done, so that the model changes that code
    /// (turns later, a small model no longer finds it and answers about
    /// other things).
    made_by: BTreeMap<String, (String, String)>,
    /// What of each Python run of the task ran (small models).
    runs: super::script::Runs,
    /// The code of each run of the last batch, if Python (small models).
    batch_python: Vec<Option<String>>,
    /// For each result file last changed by a Python block that builds on
    /// earlier runs, that block with those runs, as one script (when it is
    /// short enough to show).
    made_whole: BTreeMap<String, String>,
    /// The result files whose block in [`Self::made_by`] ran before the
    /// task started over, until a new block changes them.
    made_before_start: BTreeSet<String>,
}

/// The longest block shown again beside a result it made, in lines.
const SHOWN_BLOCK_LINES: usize = 30;

/// The script result `name` was made by, when the block that wrote it
/// builds on earlier runs ([`super::script`]), with what to do with it.
fn whole_script_note(name: &str, script: &str) -> String {
    format!(
        "The code that wrote `{name}` builds on your earlier runs; all of it, as one script that runs from the start:\n```python\n{script}\n```\nChange the step that makes it wrong and send the whole script, changed, in one block."
    )
}

/// How much of a result file is read to show or check it; a file no
/// longer than this is read whole.
const HEAD: u64 = 64 * 1024;

/// Output of a task's runs kept, at most, to tell a value printed back
/// from it.
const OUTPUTS_KEPT: usize = 64 * 1024;

/// Lines of a run's output an answer oi gives quotes, at most.
const ANSWER_LINES: usize = 40;

/// An input file this big, at most, has its changes shown.
const DIFFED: u64 = 64 * 1024;
/// Lines of a change shown, at most.
const DIFF_LINES: usize = 24;

impl Coach {
    /// The coach of a task whose text is `task`, in the folder `cwd`.
    pub(super) fn new(small_model: bool, task: &str, cwd: &Path) -> Self {
        let named = if small_model {
            named_files(task)
        } else {
            Vec::new()
        };
        let inputs: Vec<String> = named
            .iter()
            .filter(|name| cwd.join(name).is_file())
            .cloned()
            .collect();
        let inputs_seen = inputs
            .iter()
            .filter_map(|name| Some((name.clone(), small_text(&cwd.join(name))?)))
            .collect();
        let expected: Vec<String> = named
            .into_iter()
            .filter(|name| !cwd.join(name).exists() && !is_example(task, name))
            .collect();
        let mut asked: Vec<(String, Asked)> = expected
            .iter()
            .map(|name| (name.clone(), asked_of(task, name, &expected)))
            .collect();
        let untried = if small_model {
            quoted_commands(task)
        } else {
            Vec::new()
        };
        let written_numbers = written_columns(&inputs_seen);
        let folders_seen = if small_model {
            let mut folders = super::first_look::named_folders(task, cwd);
            // "the files in this folder": the working folder, as `./`.
            if folders.is_empty() && names_this_folder(task) {
                folders.push("./".to_owned());
            }
            folders
                .into_iter()
                .filter_map(|name| {
                    let listing = super::first_look::listing(&name, &cwd.join(&name))?;
                    Some((name, listing))
                })
                .collect()
        } else {
            BTreeMap::new()
        };
        let layout = if small_model && super::kept_folders::asked(task) {
            let folders: Vec<String> = folders_seen.keys().cloned().collect();
            super::kept_folders::Layout::of(cwd, &folders)
        } else {
            super::kept_folders::Layout::default()
        };
        // What a result that picks some files of a folder picks from.
        if asked.iter().any(|(_, asked)| asked.picks) {
            let picked_from: Vec<(String, Vec<String>)> = folders_seen
                .keys()
                .map(|folder| (folder.clone(), entries_in(&cwd.join(folder.as_str()), true)))
                .collect();
            for (_, asked) in asked.iter_mut().filter(|(_, asked)| asked.picks) {
                asked.picked_from = picked_from.clone();
            }
        }
        let configs = inputs_seen
            .iter()
            .filter(|(name, text)| {
                [".ini", ".cfg", ".conf"].iter().any(|e| name.ends_with(e))
                    && twice_set_key(text).is_none()
            })
            .map(|(name, _)| name.clone())
            .collect();
        let question = is_question(task);
        let edits = if !question && !asks_why(task) && expected.is_empty() && asks_for_change(task)
        {
            inputs_seen
                .keys()
                .filter(|name| !says_to_keep(task, name))
                .cloned()
                .collect()
        } else {
            Vec::new()
        };
        // A task that names a file yet to be made needs code, even when it
        // asks a question first ("Which region …? Write it to top.txt.").
        let wants_code =
            small_model && (!question && asks_for_action(task) || !expected.is_empty());
        let writes_expected = expected.iter().any(|name| says_to_write(task, name));
        let rewrites = if !question
            && !asks_why(task)
            && (asks_for_change(task) || clause_starts_with(task, &["add", "extend"]))
        {
            inputs_seen
                .keys()
                .filter(|name| super::save_as::is_script(name))
                .cloned()
                .collect()
        } else {
            Vec::new()
        };
        Self {
            small_model,
            question,
            writes_expected,
            task_key: typed::key(task),
            outputs_key: String::new(),
            typed: None,
            told_typed: false,
            guesses: BTreeMap::new(),
            told_unwritten: false,
            unwritten_block: None,
            ran_unwritten_block: false,
            line_fixes: Vec::new(),
            ran_standing_fix: false,
            batch_failed: false,
            batch_ran: true,
            expected,
            asked,
            dropped_entry: BTreeMap::new(),
            labelled_output: BTreeMap::new(),
            message_prints: BTreeMap::new(),
            scripts_before: inputs_seen
                .iter()
                .filter(|(name, _)| super::save_as::is_script(name))
                .map(|(name, text)| (name.clone(), text.clone()))
                .collect(),
            no_punctuation: small_model && ignores_punctuation(&task.to_lowercase()),
            punctuated_output: None,
            decimals: if small_model {
                asked_decimals(task)
            } else {
                None
            },
            folders_asked: if small_model {
                folders_to_make(task)
                    .into_iter()
                    .filter(|name| !cwd.join(name).exists())
                    .collect()
            } else {
                Vec::new()
            },
            undecimal_output: None,
            batch_block: None,
            made_by: BTreeMap::new(),
            runs: super::script::Runs::default(),
            batch_python: Vec::new(),
            made_whole: BTreeMap::new(),
            made_before_start: BTreeSet::new(),
            told_to_run: false,
            checked_outputs: false,
            ran_any: false,
            told_idle: false,
            shown: HashMap::new(),
            completion_checks: 0,
            ran_since_check: false,
            lacking: None,
            undefined: None,
            reruns: 0,
            wants_code,
            acts: wants_code,
            fixes: 0,
            inputs,
            told_header: false,
            kept_first_row: false,
            printed_beside_open: false,
            lowered_suffix: false,
            deduplicated: false,
            counted_years: false,
            counted_list: false,
            told_self_test: false,
            by_time: asks_by_time(task),
            printed_unwritten: None,
            asks_why: asks_why(task),
            told_typed_rows: false,
            told_shadowed: false,
            scratch_header: None,
            asks_header: task.to_lowercase().contains("header"),
            appended: None,
            told_copy: false,
            told_piece: false,
            rewrites,
            told_columns: false,
            told_lost: false,
            told_empty: false,
            told_repeat: false,
            told_content: false,
            inputs_seen,
            untried,
            written_numbers,
            configs,
            raw_numbers: None,
            hinted: Vec::new(),
            fix_rerun: None,
            edits,
            changed_input: false,
            patterns: Vec::new(),
            python: String::new(),
            told_pattern: false,
            folders_seen,
            layout,
            told_flattened: false,
            names: NameRules::of(task),
        }
    }

    /// The files the task asks for that do not exist in `cwd`, quoted.
    fn missing(&self, cwd: &Path) -> Vec<String> {
        self.expected
            .iter()
            .filter(|name| !cwd.join(name.as_str()).exists())
            .map(|name| format!("`{name}`"))
            .collect()
    }

    /// As the task ends: the files it says to write that do not exist,
    /// quoted (small models, once code ran; the checks before the end
    /// named them, and the model ended regardless).
    pub(super) fn missing_at_end(&self, cwd: &Path) -> Vec<String> {
        if self.small_model && self.writes_expected && self.ran_any {
            self.missing(cwd)
        } else {
            Vec::new()
        }
    }

    /// After a batch of runs, whether the last one `failed`: the reply to
    /// a failure must run code, in a task that asks for something done (at
    /// most [`MAX_FIXES`] times). Small models explain the error in prose
    /// instead, often pandas' own hint back, and then stop.
    pub(super) fn after_batch(&mut self, failed: bool) {
        self.fix_rerun = None;
        if self.small_model && failed && self.acts && self.fixes < MAX_FIXES {
            self.fixes += 1;
            self.wants_code = true;
        }
    }

    /// Whether the last run of the batch whose reports [`Self::after_runs`]
    /// gets next failed (its status, as the loop guard read it).
    pub(super) fn saw_failure(&mut self, failed: bool) {
        self.batch_failed = failed;
    }

    /// Whether any run of the batch whose reports [`Self::after_runs`]
    /// gets next started: a block refused before it ran did nothing to
    /// change and run again.
    pub(super) fn saw_started(&mut self, started: bool) {
        self.batch_ran = started;
    }

    /// The code of a batch of runs the model proposed: a command the task
    /// quotes that one of them runs is tried.
    pub(super) fn saw_runs(&mut self, runs: &[Option<ProposedRun>]) {
        self.untried.retain(|command| {
            !runs
                .iter()
                .flatten()
                .any(|run| runs_command(&run.code, command))
        });
        self.know_python(
            runs.iter()
                .flatten()
                .filter(|run| is_python(run.language.as_deref()))
                .map(|run| run.code.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        );
        self.batch_block = match runs.iter().flatten().collect::<Vec<_>>().as_slice() {
            [run] => self.block_of(run),
            _ => None,
        };
        self.batch_python = runs
            .iter()
            .map(|run| self.python_of(run.as_ref()))
            .collect();
        // A value printed back from an earlier run's output was found.
        self.typed = runs
            .iter()
            .flatten()
            .last()
            .and_then(|run| {
                typed::guess(
                    &run.code,
                    run.language.as_deref(),
                    &self.task_key,
                    &self.outputs_key,
                )
            })
            .filter(|(value, _)| !self.outputs_key.contains(&typed::key(value)));
        if let Some((value, Some(file))) = &self.typed {
            self.guesses.insert(file.clone(), value.clone());
        }
        // Code that uses a column of numbers written `$1,200.50` without
        // removing the signs compares, sorts or adds them as text.
        for run in runs.iter().flatten() {
            for (i, written) in self.written_numbers.iter().enumerate() {
                if !names_column(&run.code, &written.column) {
                    continue;
                }
                if cleans_numbers(&run.code) {
                    self.raw_numbers = self.raw_numbers.filter(|raw| *raw != i);
                } else {
                    self.raw_numbers = Some(i);
                }
            }
        }
    }

    /// Whether the next reply must run code: the first of a task that asks
    /// for something to be done, and one answering a note that asks for
    /// code. A model that is free to answer instead often answers with a
    /// made-up result (names "found" in a repository it never looked at)
    /// or a description of the code.
    pub(super) fn wants_code(&self) -> bool {
        self.wants_code
    }

    /// Whether a new version of a script the task names, given as a block,
    /// may be saved over it: not when the task asks a question or only why
    /// something fails ("script.py fails, tell me why"), which a corrected
    /// script answers without asking for the file to change.
    pub(super) fn may_rewrite(&self) -> bool {
        !self.question && !self.asks_why
    }

    /// The scripts the task asks to change, which a new version given as
    /// a block is saved over (see [`Self::may_rewrite`]).
    pub(super) fn rewrites(&self) -> &[String] {
        &self.rewrites
    }

    /// Whether a reply's block is the script the task asks to change as
    /// it stands, after the batch that saved and ran it failed: the same
    /// new version again, which would be saved and fail the same way (the
    /// loop guard sees the saving command, not the block, so does not
    /// know it ran).
    pub(super) fn resends_failed_version(&self, actions: &[Action], cwd: &Path) -> bool {
        self.small_model
            && self.batch_failed
            && actions.iter().filter_map(Action::run).any(|run| {
                self.rewrites.iter().any(|name| {
                    fs_err::read_to_string(cwd.join(name.as_str()))
                        .is_ok_and(|now| now.trim() == run.code.trim())
                })
            })
    }

    /// For a task that starts over from its first message: the checks
    /// before ending, and the notes about ending, may be given again (the
    /// new try never saw them), and the first reply must run code as the
    /// task's first did. What the task asks, its inputs and the line fixes
    /// known stay; the blocks that made its results are no longer shown.
    pub(super) fn start_over(&mut self) {
        self.made_before_start = self.made_by.keys().cloned().collect();
        self.completion_checks = 0;
        self.ran_since_check = false;
        self.checked_outputs = false;
        self.told_idle = false;
        self.told_to_run = false;
        self.told_repeat = false;
        self.fixes = 0;
        self.wants_code = self.acts;
    }

    /// A small model's reply that would run again, unchanged, the code
    /// that just ran without an error, while nothing shows the task's
    /// results wrong (every file it asks for is there, and the checks
    /// before ending find no fault): told once that running it changes
    /// nothing, then taken as the end of the task. Greedy, a small model
    /// re-sends code that did the task, sampled more freely it drifts, and
    /// its repeats would start the task over: the right result is lost.
    /// `None`: something still looks wrong, and the repeat is asked again
    /// as any other.
    pub(super) fn repeat_of_good_run(&mut self, cwd: &Path, reply: &str) -> Option<Repeat> {
        if !self.small_model
            || !self.ran_any
            || !self.missing(cwd).is_empty()
            || !self.ending_problems(cwd, None, reply).is_empty()
        {
            return None;
        }
        if self.told_repeat {
            return Some(Repeat::End);
        }
        self.told_repeat = true;
        self.wants_code = false;
        let left = match self.expected.as_slice() {
            [] => String::new(),
            [name] => format!(" (`{name}` is as it left it)"),
            names => format!(" ({} are as it left them)", backticked(names)),
        };
        Some(Repeat::Tell(format!(
            "[oi: that is the code that just ran without errors: running it again changes nothing{left}. If its result is what the task asks for, the task is done: say so in a sentence, with no code block. If it is not, change the code.]"
        )))
    }

    /// The answer of a task that ended on a repeat of the code that ran
    /// last ([`Repeat::End`]): said by oi, not the model's code block,
    /// with what that code `printed` (at most [`ANSWER_LINES`] lines) and
    /// the files the task asks for.
    pub(super) fn repeat_end_answer(&self, printed: Option<&str>) -> String {
        let mut answer = "The last code ran without errors and oi's checks of its results found nothing wrong; the model sent that code again instead of answering, so oi ended the task there.".to_owned();
        if let Some(printed) = printed
            .map(str::trim_end)
            .filter(|p| !p.is_empty() && *p != crate::output::PRINTED_NOTHING)
        {
            let lines: Vec<&str> = printed.lines().collect();
            let shown = lines[..lines.len().min(ANSWER_LINES)].join("\n");
            let more = match lines.len().saturating_sub(ANSWER_LINES) {
                0 => String::new(),
                n => format!("\n[{n} more lines]"),
            };
            answer.push_str(&format!(" It printed:\n```text\n{shown}{more}\n```"));
        }
        match self.expected.as_slice() {
            [] => {}
            [name] => answer.push_str(&format!("\n`{name}` holds what it wrote.")),
            names => answer.push_str(&format!("\n{} hold what it wrote.", backticked(names))),
        }
        answer
    }

    /// Reads a reply: a model that repeats one of oi's notes back instead
    /// of acting on it gets no more (they only cost turns).
    pub(super) fn heard(&mut self, reply: &str) {
        self.wants_code = false;
        if reply.trim_start().starts_with("[oi:") {
            self.told_to_run = true;
            self.checked_outputs = true;
            self.told_idle = true;
            self.completion_checks = MAX_CHECKS;
        }
    }

    /// A reply that proposed nothing to run: the note to send the model
    /// before the task may end, if any (each is sent once per task).
    /// `last_failure` is how the task's last run failed, if it did.
    pub(super) fn note_before_ending(
        &mut self,
        reply: &str,
        harness: HarnessKind,
        cwd: &Path,
        last_failure: Option<&str>,
    ) -> Option<String> {
        if !self.small_model {
            return None;
        }
        if !self.told_to_run && describes_code(reply) {
            self.told_to_run = true;
            let how = match harness {
                HarnessKind::Native | HarnessKind::ClaudeCode | HarnessKind::Codex => {
                    "call the `execute` tool with it"
                }
                HarnessKind::Markdown => {
                    "write it in a fenced code block tagged with its language (```python … ```)"
                }
            };
            self.wants_code = true;
            return Some(format!(
                "[oi: you described code instead of running it. Run it yourself: {how}. You will see its output.]"
            ));
        }
        if !self.checked_outputs && !self.expected.is_empty() {
            self.checked_outputs = true;
            let missing = self.missing(cwd);
            if !missing.is_empty() && self.writes_expected {
                self.wants_code = true;
                return Some(format!(
                    "[oi: the task asks you to write {}, which does not exist yet{}. Do that now with code that finds what it should hold and writes it there.]",
                    missing.join(", "),
                    self.write_answer(reply)
                ));
            }
            if !missing.is_empty() {
                self.wants_code = !self.question;
                return Some(format!(
                    "[oi: the task names {}, which does not exist yet. If the task asks you to write it, do that now with code; if it does not, give your answer again.]",
                    missing.join(", ")
                ));
            }
        }
        if !self.ran_any && !self.told_idle && !self.question {
            // It says it did the task without running anything.
            self.told_idle = true;
            self.wants_code = true;
            return Some(
                "[oi: you have not run any code for this task, so nothing has been done yet. Do the task now by running code, then answer.]".to_owned(),
            );
        }
        let may_check = match self.completion_checks {
            0 => true,
            n => n < MAX_CHECKS && self.ran_since_check,
        };
        if may_check {
            let problems = self.ending_problems(cwd, last_failure, reply);
            if !problems.is_empty() {
                self.completion_checks += 1;
                self.ran_since_check = false;
                // Free to answer, a small model answers "The task is done."
                // whatever the note says; the next reply runs code instead.
                self.wants_code = true;
                // A fix printed, not written: where it has to go.
                let unwritten = self
                    .printed_unwritten
                    .as_deref()
                    .map(|name| {
                        format!(
                            " Your last run printed its lines but wrote nothing to `{name}`: if they are what it should hold, run that code again writing them there (`> {name}` after a shell command; `open({}, 'w')` in Python).",
                            table::python_string(name)
                        )
                    })
                    .unwrap_or_default();
                let made = self.block_that_made(&problems);
                return Some(if self.completion_checks == 1 {
                    format!(
                        "[oi: before you finish: {}, so the task is probably not done. Fix the cause and run the step again now.{unwritten}{made}]",
                        problems.join(", and ")
                    )
                } else {
                    format!(
                        "[oi: still not done: {}. Your last run did not fix it.{} Change the code that makes the result, run it, and read its output before you answer.{made}]",
                        problems.join(", and "),
                        unwritten
                    )
                });
            }
        }
        None
    }

    /// The block that last wrote the first result file `problems` name,
    /// as a clause to add to the note (` The code that wrote `x.csv`: …`),
    /// when it is short — with the earlier runs it builds on, as one
    /// script, when it builds on some; or nothing.
    fn block_that_made(&self, problems: &[String]) -> String {
        let said = problems.join(" ");
        // A block from before the task started over is not shown: it
        // would bring the new try back to the idea the old one failed on.
        let Some((name, (language, code))) = self.made_by.iter().find(|(name, _)| {
            !self.made_before_start.contains(*name) && said.contains(&format!("`{name}`"))
        }) else {
            return String::new();
        };
        if let Some(script) = self.made_whole.get(name) {
            return format!(" {}", whole_script_note(name, script));
        }
        if code.lines().count() > SHOWN_BLOCK_LINES {
            return String::new();
        }
        format!(
            " The code that wrote `{name}` was:\n```{language}\n{}\n```\nSend it again, changed, in one block.",
            code.trim_end()
        )
    }

    /// For a result file the model left missing or blank, the line that
    /// writes the value its `reply` gave in prose (not a value it typed
    /// into a print, which is a guess), as a clause to add; or nothing.
    fn write_answer(&self, reply: &str) -> String {
        match (self.expected.as_slice(), answer_value(reply)) {
            // Not a file the task names ("The lines of `data.csv` are 7.").
            ([name], Some(value))
                if !self.told_typed && value != *name && !self.inputs.contains(&value) =>
            {
                format!(
                    " (if your answer `{value}` is what it should hold, `{}` writes it)",
                    write_only(name, &value)
                )
            }
            _ => String::new(),
        }
    }

    /// What shows the task is not done as the model ends it (small
    /// models): a failed last run, a file the task names missing or empty,
    /// a result that holds a label, a 0, text where a number belongs, one
    /// entry twice, numbers used as they were written, a quoted command
    /// not run. The completion check names them once.
    fn ending_problems(&self, cwd: &Path, last_failure: Option<&str>, reply: &str) -> Vec<String> {
        let mut folders = Vec::new();
        if self.ran_any {
            for name in &self.folders_asked {
                let path = cwd.join(name);
                let quoted = table::python_string(name);
                if !path.is_dir() {
                    folders.push(format!(
                        "the task asks for the folder `{name}/`, which does not exist yet: make it (`os.makedirs({quoted}, exist_ok=True)`) and write the files into it (`os.path.join({quoted}, file_name)`)"
                    ));
                } else if fs_err::read_dir(&path).is_ok_and(|mut d| d.next().is_none()) {
                    folders.push(format!(
                        "the folder `{name}/` the task asks for is empty: write the files into it (`os.path.join({quoted}, file_name)`)"
                    ));
                }
            }
        }
        // Each result is read once, its start only.
        let heads: Vec<(&String, Vec<u8>)> = self
            .expected
            .iter()
            .filter_map(|name| Some((name, read_head(&cwd.join(name.as_str()), HEAD)?)))
            .collect();
        // Blank as the preview calls it: read whole, nothing but spaces and
        // line breaks (`awk '{print $9}'` of a line without a ninth field).
        let empty: Vec<String> = heads
            .iter()
            .filter(|(_, head)| {
                (head.len() as u64) < HEAD && head.iter().all(u8::is_ascii_whitespace)
            })
            .map(|(name, _)| format!("`{name}`"))
            .collect();
        let write_answer = self.write_answer(reply);
        let mut problems = Vec::new();
        if let Some(error) = last_failure {
            problems.push(format!("your last run failed ({error})"));
        }
        problems.extend(folders);
        if let Some(name) = &self.appended {
            problems.push(format!(
                "your code opens `{name}` to append (`'a'`, `>>`), so it holds what earlier runs wrote too: collect the lines first, then write them all at once, opening it with `'w'` once, outside any loop or function that runs more than once"
            ));
        }
        if let Some((input, header)) = &self.scratch_header
            && self.asks_header
        {
            problems.push(format!(
                "what your script wrote for its output argument does not begin with the header line of `{input}` (`{header}`), which the task asks it to keep: write that line first (`writer.writerow(rows[0])` before the rows), then run it again"
            ));
        }
        // Told once it does not exist yet, the model ran code and still
        // ends without it (it printed the text instead of writing it).
        let missing = if self.ran_any && (!self.question || self.writes_expected) {
            self.missing(cwd)
        } else {
            Vec::new()
        };
        if !missing.is_empty() {
            problems.push(format!(
                "{} still does not exist{write_answer}",
                missing.join(", ")
            ));
        }
        if !empty.is_empty() {
            problems.push(format!("{} is empty{write_answer}", empty.join(", ")));
        }
        if let Some(WrittenColumn {
            file: name,
            column,
            value,
            decimal_comma,
        }) = self.raw_numbers.and_then(|i| self.written_numbers.get(i))
        {
            let how = if *decimal_comma {
                "replace the decimal comma with a point before converting (pandas: `decimal=','`)"
            } else {
                "remove the signs and separators before converting (pandas: `thousands=','`, or `.str.replace`)"
            };
            problems.push(format!(
                "your code uses the `{column}` column of `{name}` as it is, but its numbers are written like `{value}`, so they are compared, sorted or added as text: {how}"
            ));
        }
        if self.ran_any {
            // What the task says must work, checked by running it.
            for command in &self.untried {
                problems.push(format!(
                    "the task says `{command}` should work, and it has not run yet (run it and read its output)"
                ));
            }
        }
        let inputs: Vec<(&String, &String)> = self.inputs_seen.iter().collect();
        // An appended result's faults are likely the earlier runs' lines.
        let checked = heads
            .iter()
            .filter(|(name, _)| self.appended.as_ref() != Some(*name));
        for (name, head) in checked {
            let text = String::from_utf8_lossy(head);
            if is_zero(&text) {
                problems.push(format!(
                    "`{name}` holds 0, which usually means the code matched or read nothing"
                ));
            }
            if literal_breaks(name, &text) {
                problems.push(format!(
                    "`{name}` holds `\\n` as two characters, not as line breaks (write it with `printf` or from Python)"
                ));
            }
            problems.extend(content_problems(
                name,
                &text,
                &inputs,
                self.asked(name),
                &self.python,
            ));
            problems.extend(absent_paths(name, &text, self.asked(name), cwd));
            if let Some((_, code)) = self.made_by.get(name.as_str()) {
                problems.extend(search_problems(code, self.asked(name)));
                problems.extend(first_row_pick(name, code, self.asked(name)));
                // Written from rows typed into the code (a copy of the
                // first look), not from the file.
                if let Some((input, values)) = self
                    .inputs_seen
                    .iter()
                    .find_map(|(input, text)| copied_rows(code, input, text).map(|v| (input, v)))
                {
                    problems.push(format!(
                        "`{name}` was written by code that typed values of `{input}` into itself ({}) instead of reading `{input}`: read the file in that code",
                        backticked(&values)
                    ));
                }
            }
            problems.extend(size_order(name, &text, self.asked(name), cwd));
            let missed = answered_not_written(reply, &text, &inputs);
            if !missed.is_empty() {
                let quoted = |values: &[&str]| {
                    values
                        .iter()
                        .map(|v| format!("`{v}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let lines: Vec<&str> = text
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .take(5)
                    .collect();
                problems.push(format!(
                    "your answer names {}, which `{name}` does not hold (it holds {}): the code that wrote it missed {}; change that code so that it finds every one, and run it",
                    quoted(&missed),
                    quoted(&lines),
                    if missed.len() == 1 { "it" } else { "them" }
                ));
            }
            let shown = first_lines(&text, 3, 100);
            if let Some((line, value)) = labelled(name, &shown, self.asked(name)) {
                problems.push(format!(
                    "`{name}` has words around its value (`{line}`) where the task likely asks for {}{}",
                    alone(name, value, &shown),
                    own_write_fix(&self.python, line, value)
                ));
            }
        }
        if self.ran_any {
            for name in self.folders_seen.keys() {
                problems.extend(self.names.broken(name, &cwd.join(name.as_str())));
            }
            problems.extend(self.layout.flattened(cwd).map(|flat| flat.problem()));
        }
        for (name, value) in &self.guesses {
            let holds = read_head(&cwd.join(name.as_str()), HEAD)
                .is_some_and(|head| String::from_utf8_lossy(&head).trim() == value.trim());
            if holds {
                problems.push(format!(
                    "`{name}` holds `{value}`, which your code typed in rather than found: run code that reads the files (or asks the system) for the value and writes what it finds"
                ));
            }
        }
        for (name, line) in &self.dropped_entry {
            problems.push(format!(
                "`{name}` no longer runs anything: its line `{line}` is gone"
            ));
        }
        for (name, print) in &self.message_prints {
            problems.push(format!(
                "`{name}` now prints a message (`{print}`) besides its result, which it did not before"
            ));
        }
        if let (Some((name, number)), Some(places)) = (&self.undecimal_output, self.decimals) {
            problems.push(format!(
                "`{name}` prints `{number}` where the task asks for {places} decimal{}",
                if places == 1 { "" } else { "s" }
            ));
        }
        if let Some((name, word)) = &self.punctuated_output {
            problems.push(format!(
                "`{name}` prints `{word}`, a word with punctuation still on it, where the task says to leave punctuation out"
            ));
        }
        for (name, (before, after)) in &self.labelled_output {
            problems.push(format!(
                "`{name}` now prints words around its result (`{after}`) where it printed the value alone (`{before}`)"
            ));
        }
        // A file the task asks to change, left as it was (a `.replace`
        // that matched nothing).
        if !self.edits.is_empty() && self.ran_any && !self.changed_input {
            let names: Vec<String> = self.edits.iter().map(|name| format!("`{name}`")).collect();
            problems.push(format!(
                "no run has changed {} yet, which the task asks you to change: read it, change it, write it back, then print what changed",
                names.join(" or ")
            ));
        }
        // A configuration the task names, changed by adding a line.
        for name in &self.inputs {
            if !self.configs.contains(name) {
                continue;
            }
            let head = read_head(&cwd.join(name.as_str()), 64 * 1024).unwrap_or_default();
            if let Some((section, key)) = twice_set_key(&String::from_utf8_lossy(&head)) {
                let place = if section.is_empty() {
                    String::new()
                } else {
                    format!(" in `{section}`")
                };
                problems.push(format!(
                    "`{name}` sets `{key}` twice{place}: a line was added where the one there should have changed"
                ));
            }
        }
        problems
    }

    /// After a batch of `runs` (the proposed code of each action, in order)
    /// with these `reports`: the run to do again for the model, with the
    /// note to lead its result — after an install of what it lacked, or
    /// else once a name it lacked is defined.
    pub(super) fn rerun(
        &mut self,
        runs: &[Option<ProposedRun>],
        reports: &[Report],
    ) -> Option<(ProposedRun, String)> {
        let installed = self.rerun_after_install(runs, reports).map(|run| {
            (
                run,
                "[oi: the install worked, so oi ran again the code that had failed for lack of it:]"
                    .to_owned(),
            )
        });
        match installed.or_else(|| self.rerun_after_definition(runs, reports)) {
            // The block runs again whole: a fix of its failure waits for
            // that run's own result, and the notes on that result are
            // about its code, not the batch's (an install in the shell).
            Some(run) => {
                self.fix_rerun = None;
                if is_python(run.0.language.as_deref()) {
                    self.know_python(run.0.code.clone());
                }
                Some(run)
            }
            None => self.rerun_with_fix(),
        }
    }

    /// The Python code the notes are about (a batch's, or oi's re-run of
    /// it), with the patterns it searches for.
    fn know_python(&mut self, python: String) {
        self.patterns = super::pattern::patterns(&python);
        self.python = python;
    }

    /// The failed Python block of the batch with the line its error names
    /// changed as the error calls for (`.str.lower()` on a pandas column,
    /// a merge on each table's own key), kept by [`Self::after_runs`] in
    /// place of the hint's note: with the lead that says what oi changed.
    /// Counted with the other re-runs; its code is then the model's code
    /// the notes are about. Small models only. Also what oi runs right
    /// after a re-run whose own result calls for another change.
    pub(super) fn rerun_with_fix(&mut self) -> Option<(ProposedRun, String)> {
        let (run, lead) = self.fix_rerun.take()?;
        self.reruns += 1;
        self.know_python(run.code.clone());
        Some((run, lead))
    }

    /// Has Python `code` run again by [`Self::rerun_with_fix`], led by
    /// `lead` (what oi changed).
    fn run_again(&mut self, code: String, lead: String) {
        let run = ProposedRun {
            call_id: None,
            language: Some("python".to_owned()),
            code,
        };
        self.fix_rerun = Some((run, lead));
    }

    /// Whether oi may set a block to run again now: none is set yet, and
    /// the task's re-runs are not used up.
    fn may_run_again(&self) -> bool {
        self.fix_rerun.is_none() && self.reruns < MAX_RERUNS
    }

    /// [`Self::may_run_again`] after a batch that ran without error, for
    /// a fault of a block that ran (small models).
    fn may_run_again_after_success(&self) -> bool {
        self.small_model && self.batch_ran && !self.batch_failed && self.may_run_again()
    }

    /// Has the batch's Python run again with the line change `fix`, and
    /// keeps the change for the model's next code.
    fn run_again_with(&mut self, fix: &LineChange) {
        self.run_again_led(fix, fix_lead(fix));
    }

    /// [`Self::run_again_with`], its result led by `lead` (what oi
    /// changed and why) rather than the known error fix's words.
    fn run_again_led(&mut self, fix: &LineChange, lead: String) {
        KnownFix::keep(
            &mut self.line_fixes,
            fix.line.clone(),
            fix.fixed.clone(),
            self.python.clone(),
        );
        self.run_again(with_line(&self.python, &fix.line, &fix.fixed), lead);
    }

    /// After a batch of `runs` (the proposed code of each action, in order)
    /// with these `reports`: the run to do again when the batch ended by
    /// installing what an earlier run lacked (a package, a program) —
    /// small models tend to report the install and stop. At most
    /// [`MAX_RERUNS`] times a task: a run may lack one package after
    /// another (pandas, then matplotlib).
    fn rerun_after_install(
        &mut self,
        runs: &[Option<ProposedRun>],
        reports: &[Report],
    ) -> Option<ProposedRun> {
        if !self.small_model {
            return None;
        }
        for (run, report) in runs.iter().zip(reports) {
            if let Some(run) = run {
                if lacks_something(&report.text) {
                    self.lacking = Some(run.clone());
                } else if self.lacking.as_ref().is_some_and(|l| l.code == run.code) {
                    // It ran again by itself.
                    self.lacking = None;
                }
            }
        }
        let installed = runs.len() == reports.len()
            && reports.last().is_some_and(|r| installed_something(&r.text));
        if !installed || self.reruns >= MAX_RERUNS {
            return None;
        }
        let run = self.lacking.take()?;
        self.reruns += 1;
        Some(ProposedRun {
            call_id: None,
            ..run
        })
    }

    /// After a batch of `runs` with these `reports`: the run to do again
    /// when it failed for a name not defined (`NameError: name 'set_key'
    /// is not defined`) and the last run of the batch defined that name
    /// without using it — small models call a function a block before
    /// they define it, then define it and stop. With the note to lead its
    /// result. Counted with the re-runs after installs.
    fn rerun_after_definition(
        &mut self,
        runs: &[Option<ProposedRun>],
        reports: &[Report],
    ) -> Option<(ProposedRun, String)> {
        if !self.small_model {
            return None;
        }
        let mut defined = None;
        for (run, report) in runs.iter().zip(reports) {
            let Some(run) = run else { continue };
            if let Some(name) = undefined_name(&report.text) {
                self.undefined = Some((name.to_owned(), run.clone()));
                defined = None;
                continue;
            }
            let Some((name, failed)) = &self.undefined else {
                continue;
            };
            if is_python(run.language.as_deref())
                && !report.text.contains("Traceback")
                && defines(&run.code, name)
                && !uses(&run.code, name)
            {
                defined = Some((name.clone(), failed.clone()));
            } else {
                defined = None;
            }
        }
        let last_ran = runs.len() == reports.len();
        let (name, run) = defined.filter(|_| last_ran && self.reruns < MAX_RERUNS)?;
        self.undefined = None;
        self.reruns += 1;
        Some((
            ProposedRun {
                call_id: None,
                ..run
            },
            format!(
                "[oi: that defined `{name}`, so oi ran again the code that had failed for lack of it:]"
            ),
        ))
    }

    /// The result of a run done again after an install: when it lacks
    /// something else, it is the run to do again after the next install.
    pub(super) fn ran_again(&mut self, run: &ProposedRun, report: &Report) {
        if lacks_something(&report.text) {
            self.lacking = Some(run.clone());
        }
        self.batch_block = self.block_of(run);
        self.batch_python = vec![self.python_of(Some(run))];
    }

    /// A run's code when it is Python, for [`Self::runs`] (small models).
    fn python_of(&self, run: Option<&ProposedRun>) -> Option<String> {
        run.filter(|run| self.small_model && is_python(run.language.as_deref()))
            .map(|run| run.code.clone())
    }

    /// A run's block as the model wrote it, with its language, to show it
    /// again beside what it made (small models); not oi's own code that
    /// saves a reply as a script.
    fn block_of(&self, run: &ProposedRun) -> Option<(String, String)> {
        let language = run.language.as_deref()?;
        (self.small_model && !super::save_as::is_saving(&run.code))
            .then(|| (language.to_owned(), run.code.clone()))
    }

    /// After a batch of `runs` (the proposed code of each action) with
    /// these `reports`: when a block failed to parse or named nothing
    /// defined because it is text rather than code, a note saying so, once.
    /// Small models "change" a config file by showing its new lines (the
    /// text of an input file), and "write" a result by typing the lines
    /// it should hold (a Markdown list run as shell commands).
    pub(super) fn content_note(
        &mut self,
        runs: &[Option<ProposedRun>],
        reports: &[Report],
        cwd: &Path,
    ) -> Option<String> {
        if !self.small_model || self.told_content {
            return None;
        }
        let (run, text) = runs.iter().zip(reports).find_map(|(run, report)| {
            let run = run.as_ref()?;
            let parse_failure = [
                "SyntaxError",
                "IndentationError",
                "NameError",
                "syntax error",
                "command not found",
            ]
            .iter()
            .any(|e| report.text.contains(e));
            if !parse_failure {
                return None;
            }
            // A script's new version is code in its own right.
            let input = self
                .inputs
                .iter()
                .filter(|name| !super::save_as::is_script(name))
                .find(|name| text_of(&run.code, name, cwd));
            match (input, self.expected.as_slice()) {
                (Some(name), _) => Some((run, Text::Input(name.clone()))),
                (None, [output]) if typed_lines(&run.code) && !cwd.join(output).exists() => {
                    Some((run, Text::Output(output.clone())))
                }
                _ => None,
            }
        })?;
        self.told_content = true;
        let language = run.language.as_deref().unwrap_or("code");
        Some(match text {
            Text::Input(name) => format!(
                "[oi: that block is not {language}: it is text of `{name}`, and running it does not change the file. To change `{name}`, write {language} that reads it, changes what the task asks, and writes it back.]"
            ),
            Text::Output(name) => {
                let file = table::python_string(&name);
                let from = match self.inputs.as_slice() {
                    [] => "makes those lines".to_owned(),
                    inputs => format!(
                        "reads {} and builds those lines from what it reads",
                        inputs
                            .iter()
                            .map(|input| format!("`{input}`"))
                            .collect::<Vec<_>>()
                            .join(" and ")
                    ),
                };
                format!(
                    "[oi: that block is not {language}: it is lines typed as the text of `{name}`, so they ran as commands and `{name}` was not written. Write Python that {from}, then writes them to `{name}` (`open({file}, 'w').write('\\n'.join(lines) + '\\n')`).]"
                )
            }
        })
    }

    /// After a batch of runs: what they made of the files the task names
    /// (those changed since last shown), to add to the results.
    pub(super) fn after_runs(&mut self, reports: &[Report], cwd: &Path) -> Vec<String> {
        // The batch only printed or wrote a value typed into its code.
        let guessed = self.typed.is_some();
        let ran = reports.iter().any(|r| !r.language.is_empty());
        self.ran_any |= ran;
        self.ran_since_check |= ran;
        // A collection filled under the name of its own loop variable,
        // told once a task (small models).
        let mut shadowed = None;
        let mut self_test = None;
        for (code, report) in self.batch_python.drain(..).zip(reports) {
            if let Some(code) = code {
                self.runs.saw(&code, &report.text);
                if !self.told_shadowed && shadowed.is_none() {
                    shadowed = super::shadow::shadowed(&code);
                }
                if !self.told_self_test && self_test.is_none() {
                    self_test = typed_self_test(&code, &report.text, &self.expected);
                }
            }
        }
        let scratch: Vec<_> = reports
            .iter()
            .filter_map(|r| super::save_as::scratch_header(&r.text))
            .collect();
        if !scratch.is_empty() {
            self.scratch_header = scratch.into_iter().flatten().next();
        }
        let mut previews = Vec::new();
        if let Some((value, file)) = self.typed.take()
            && self.small_model
            && !self.told_typed
        {
            self.told_typed = true;
            self.wants_code = true;
            let does = match file {
                Some(file) => format!("writes `{value}` to `{file}`"),
                None => format!("prints `{value}`"),
            };
            previews.push(format!(
                "[oi: that code only {does}, a value typed into it: nothing was looked up, so it is a guess. Find the value with code that reads the files or asks the system (a shell command, or Python), print what it finds, then use that.]"
            ));
        }
        // Only a small model's runs are kept in `batch_python`.
        if let Some((name, start, for_line)) = shadowed {
            self.told_shadowed = true;
            previews.push(format!(
                "[oi: `{name}` names both the collection you fill (`{start}`) and a variable of the loop `{for_line}`: each step of the loop sets `{name}` again, so what you add goes into what the loop reads, or is lost. Give the collection a name of its own (`found = []`, then `found.append(…)`).]"
            ));
        }
        // A test of a result against values the model typed: its failure
        // is a guess refuted, not a fault of the result; small models
        // otherwise rerun it until the task's time is out.
        if let Some((file, name)) = self_test {
            self.told_self_test = true;
            previews.push(format!(
                "[oi: that block only tests `{file}` against values you typed into it (`{name}`): those are a guess, not the task's, so its failure says nothing about `{file}`. Do not run it again. Compare `{file}` with what the task asks and with the inputs instead; fix the code that writes it if it is wrong, else answer.]"
            ));
        }
        if self.small_model
            && !self.told_typed_rows
            && ran
            && let Some((input, values)) = self
                .inputs_seen
                .iter()
                .find_map(|(name, text)| copied_rows(&self.python, name, text).map(|v| (name, v)))
        {
            self.told_typed_rows = true;
            let read = if input.ends_with(".csv") {
                format!(" (`pd.read_csv('{input}')`, with what the first look says)")
            } else {
                String::new()
            };
            previews.push(format!(
                "[oi: that code typed values of `{input}` into itself ({}) instead of reading the file: the first look shows only some of its lines, and a copy misses the rest. Read `{input}` in the code{read} so that every line counts.]",
                backticked(&values)
            ));
        }
        if self.small_model {
            for report in reports {
                if self.outputs_key.len() < OUTPUTS_KEPT {
                    self.outputs_key.push_str(&typed::key(&report.text));
                }
            }
        }
        if !self.told_header
            && let Some(note) = reports
                .iter()
                .find_map(|r| header_note(&r.text, &self.inputs, cwd))
        {
            self.told_header = true;
            previews.push(note);
        }
        // What a common error means (`.str` for a pandas column, `float`
        // for `'7.5'`), each kind once a task.
        if self.small_model {
            for report in reports {
                // A module or name a standard import defines, used without
                // it (`csv.writer`, `pd.read_csv`): oi runs the block
                // again with the import at its top, each time (told, a
                // small model adds it, and leaves it out of the next
                // block), counted with the other re-runs.
                if self.may_run_again()
                    && let Some((name, import)) =
                        super::error_hint::missing_import(&report.text, &self.python)
                    && let Some(code) = with_import(&self.python, name, import)
                {
                    self.run_again(
                        code,
                        format!(
                            "[oi: your code uses `{name}` without importing it, so oi ran it again with `{import}` added at its top:]"
                        ),
                    );
                    continue;
                }
                if let Some(mut hint) = super::error_hint::hint(&report.text, cwd) {
                    // A change only the code tells (names for a grouped
                    // table's key and values, its key the index).
                    if hint.fix.is_none() {
                        hint.fix = super::error_hint::grouped_columns(&report.text, &self.python);
                    }
                    let first = !self.hinted.contains(&hint.kind);
                    if first {
                        self.hinted.push(hint.kind);
                    }
                    // A change of one line the error calls for is made and
                    // run by oi; the re-run's result says so. Told it, a
                    // small model sends the line unchanged, or changed
                    // another way. A habit of writing comes back in the
                    // next block, so its change is made each time.
                    if let Some(fix) = hint.fix
                        && (first || hint.habit)
                        && self.may_run_again()
                        && self.python.lines().any(|l| l.trim() == fix.line)
                        && (!fix.needs_loop() || in_loop(&self.python, &fix.line))
                    {
                        self.run_again_with(&fix);
                        continue;
                    }
                    if first {
                        previews.push(hint.note);
                    }
                }
            }
        }
        // A header whose names have spaces around them, read by the code
        // that failed for one of its names: the read line with the names
        // stripped after it, run again.
        if self.small_model
            && self.may_run_again()
            && let Some(fix) = reports
                .iter()
                .find_map(|r| strip_header_fix(&r.text, &self.python, &self.inputs, cwd))
        {
            self.run_again_with(&fix);
        }
        // A list some records of a JSON input lack, looped over as if
        // every record had it: the block run again reading it with
        // `.get(key, [])`.
        if self.small_model
            && self.may_run_again()
            && let Some((fix, input, key)) = reports
                .iter()
                .find_map(|r| super::absent_key::fix(&r.text, &self.python, &self.inputs_seen))
        {
            let lead = format!(
                "[oi: some records of `{input}` have no `{key}` key, so oi ran your code again with `{}` written as `{}`, which gives an empty list where a record has none:]",
                fix.line, fix.fixed
            );
            self.run_again_led(&fix, lead);
        }
        // A print inside `with open(FILE, 'w') as f:` that never names
        // `f`, where FILE is a result the task asks for and was left
        // empty: the block run again with `file=f` given, once a task.
        if !self.printed_beside_open
            && self.may_run_again_after_success()
            && let Some((fix, file, handle)) = print_beside_open(&self.python)
            && self.expected.contains(&file)
            && fs_err::metadata(cwd.join(&file)).is_ok_and(|m| m.len() == 0)
        {
            self.printed_beside_open = true;
            let lead = format!(
                "[oi: `{}` is inside `with open(…) as {handle}:` but prints to the screen, so `{file}` stayed empty. oi ran your code again with `file={handle}` given to it:]",
                fix.line
            );
            self.run_again_led(&fix, lead);
        }
        // A table's first row of data dropped as if it were its header
        // (`df = df.iloc[1:]` after `pd.read_csv`, which took the header
        // already): the block run again without that line, once a task.
        if !self.kept_first_row
            && self.may_run_again_after_success()
            && let Some((fix, file, row)) = dropped_first_row(&self.python, &self.inputs, cwd)
        {
            self.kept_first_row = true;
            let lead = format!(
                "[oi: `{}` drops the first row of data of `{file}` (`{row}`): `pd.read_csv` already took its header line as the column names. So oi ran your code again without that line:]",
                fix.line
            );
            self.run_again_led(&fix, lead);
        }
        // Rows taken by position (`.iloc[0]`, `.iloc[-1]`) as the earliest
        // or latest, from an input that is not in date order: the block
        // run again with the table sorted by its dates after the read,
        // once a task.
        if self.by_time
            && self.may_run_again_after_success()
            && let Some((fix, file, column)) = time_order_fix(&self.python, &self.inputs, cwd)
        {
            self.by_time = false;
            let lead = format!(
                "[oi: the task asks for the earliest or latest, and your code takes rows by their position (`.iloc[0]`, `.iloc[-1]`), but the rows of `{file}` are not in order of `{column}`. So oi ran your code again with the table sorted by `{column}` after it is read:]"
            );
            self.run_again_led(&fix, lead);
        }
        // Names picked by a lowercase suffix (`f.endswith('.bak')`) while
        // a file's name ends with it in another case (`OLD.BAK`): the
        // block run again with the names lowercased before the test, once
        // a task.
        if !self.lowered_suffix
            && self.may_run_again_after_success()
            && self.python.contains(".endswith(")
            && let Some((fix, missed, suffix)) = super::suffix_case::fix(&self.python, cwd)
        {
            self.lowered_suffix = true;
            let lead = format!(
                "[oi: `{}` misses `{missed}`: `.endswith('{suffix}')` matches `{suffix}` in lowercase only, and names differ in case. So oi ran your code again with each name lowercased before the test:]",
                fix.line
            );
            self.run_again_led(&fix, lead);
        }
        let empty = if self.small_model && !self.told_empty {
            reports
                .iter()
                .find_map(|r| super::empty_table::note(&r.text, &self.python))
        } else {
            None
        };
        let lost = if self.told_lost || empty.is_some() {
            None
        } else {
            reports
                .iter()
                .find_map(|r| lost_column_note(&r.text, &self.python, &self.inputs, cwd))
        };
        if let Some(note) = empty {
            self.told_empty = true;
            previews.push(note);
        } else if let Some(note) = lost {
            self.told_lost = true;
            previews.push(note);
        } else if !self.told_columns
            // A fix being run again deals with the missing column.
            && self.fix_rerun.is_none()
            && let Some(note) = reports
                .iter()
                .find_map(|r| columns_note(&r.text, &self.inputs, cwd))
        {
            self.told_columns = true;
            previews.push(note);
        }
        // What the batch printed, for what a changed script printed (small
        // models' notes only).
        let printed: String = if self.small_model {
            reports
                .iter()
                .map(|r| r.text.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        } else {
            String::new()
        };
        if let Some(note) = self.punctuation_note(&printed) {
            previews.push(note);
        }
        if let Some(note) = self.decimals_note(&printed) {
            previews.push(note);
        }
        // An input the runs changed (a config set, a script fixed): what
        // changed, so a wrong line changed shows.
        for (name, seen) in &mut self.inputs_seen {
            let Some(now) = small_text(&cwd.join(name.as_str())) else {
                continue;
            };
            if now != *seen {
                // A script's new version that failed: the error says what
                // to fix; a diff beside it is copied, marks and all, into
                // the next version by a small model.
                let mut note = if self.small_model
                    && self.batch_failed
                    && super::save_as::is_script(name)
                {
                    format!(
                        "[oi: `{name}` now holds your new version, which failed as shown. Send all of it again, fixed, in one block.]"
                    )
                } else {
                    change_note(name, seen, &now)
                };
                match dropped_entry(name, seen, &now) {
                    Some((function, line)) => {
                        note.pop();
                        note.push_str(&format!(
                            " It is not right yet: `{name}` now defines `{function}` but never runs it (its line `{line}` is gone), so running the script does nothing. Put that line back.]"
                        ));
                        self.dropped_entry.insert(name.clone(), line);
                    }
                    None => {
                        self.dropped_entry.remove(name);
                    }
                }
                if let Some((before, after)) = labelled_print(name, seen, &now) {
                    // The script's own line printing the value alone, kept
                    // as a line fix for the version sent next.
                    let own = now
                        .lines()
                        .map(str::trim)
                        .find(|line| line.contains(after.as_str()))
                        .and_then(|line| Some((line.to_owned(), bare_print(line)?)));
                    let how = match own {
                        Some((code, fixed)) => keep_script_fix(
                            &mut self.line_fixes,
                            self.small_model,
                            &now,
                            code,
                            fixed,
                        ),
                        None => {
                            "`print(value)`, or `print(f'{value:.2f}')` for 2 decimals".to_owned()
                        }
                    };
                    note.pop();
                    note.push_str(&format!(
                        " It is not right yet: `{name}` printed its result alone (`{before}`); the new version prints words around it (`{after}`), which whatever reads the script's output does not expect. Print the value alone, as before ({how}).]"
                    ));
                    self.labelled_output.insert(name.clone(), (before, after));
                } else if print_calls(&now).any(|args| print_shape(args) == PrintShape::Bare) {
                    self.labelled_output.remove(name);
                }
                let before = self
                    .scripts_before
                    .get(name)
                    .map_or(seen.as_str(), String::as_str);
                let message = if self.small_model {
                    message_print(name, before, &now, &printed)
                } else {
                    None
                };
                match message {
                    Some((print, shown)) => {
                        // Its line, when the print stands alone on it:
                        // `pass` keeps the block it is in.
                        let how = if now.lines().any(|line| line.trim() == print) {
                            keep_script_fix(
                                &mut self.line_fixes,
                                true,
                                &now,
                                print.clone(),
                                "pass".to_owned(),
                            )
                        } else {
                            "a line to skip is skipped silently".to_owned()
                        };
                        note.pop();
                        note.push_str(&format!(
                            " It is not right yet: `{name}` printed only its result; the new version also prints a message (`{print}`), and this run printed `{shown}`, which whatever reads the script's output does not expect. Leave that print out ({how}).]"
                        ));
                        self.message_prints.insert(name.clone(), print);
                    }
                    None => {
                        self.message_prints.remove(name);
                    }
                }
                previews.push(note);
                *seen = now;
                self.changed_input = true;
            }
        }
        // A folder the task names whose entries a run changed (files
        // renamed, moved, made): its new listing.
        for (name, seen) in &mut self.folders_seen {
            let Some(now) = super::first_look::listing(name, &cwd.join(name.as_str())) else {
                continue;
            };
            if now != *seen {
                let broken = self.names.broken(name, &cwd.join(name.as_str()));
                previews.push(if broken.is_empty() {
                    format!(
                        "[oi: after that run, {now} Check that every name is exactly what the task asks for.]"
                    )
                } else {
                    format!(
                        "[oi: after that run, {now} It is not right yet: {}.]",
                        broken.join(", and ")
                    )
                });
                *seen = now;
            }
        }
        // Files of subfolders moved without their folders where the task
        // asks to keep them, once (the check before finishing says it
        // again): oi puts them where they belong itself when it may run
        // one more block (told to, a small model answered that they were
        // there), else the note gives the block; after a pending re-run,
        // which may move more of them.
        if !self.told_flattened
            && self.batch_ran
            && self.fix_rerun.is_none()
            && let Some(flat) = self.layout.flattened(cwd)
        {
            self.told_flattened = true;
            match flat.repair() {
                Some(code) if self.reruns < MAX_RERUNS => {
                    self.run_again(code.to_owned(), flat.lead());
                }
                _ => previews.push(flat.note()),
            }
        }
        if let Some(note) = self.pattern_note(reports, cwd) {
            previews.push(note);
        }
        // A line of the script to change, run on its own: it fails for
        // what the script around it defines.
        if self.small_model
            && !self.told_piece
            && let [name, ..] = self.rewrites.as_slice()
            && (1..=3).contains(&self.python.lines().filter(|l| !l.trim().is_empty()).count())
            && reports.iter().any(|r| r.text.contains("NameError"))
        {
            self.told_piece = true;
            previews.push(format!(
                "[oi: that code ran on its own, not inside `{name}`, so the names the script defines do not exist there. To change `{name}`, send all of it, changed, in one block.]"
            ));
        }
        if let Some(note) = self.copy_note(cwd) {
            previews.push(note);
        }
        if let Some(note) = self.unwritten_note(reports, cwd, guessed) {
            previews.push(note);
        }
        // An empty result left by a run that failed says only that it
        // failed, which its error already says: told "it exists but is
        // empty" beside the error, a small model wrote an empty file on
        // purpose.
        let failed = self.batch_failed;
        let mut changed = Vec::new();
        for name in &self.expected {
            let path = cwd.join(name);
            let Ok(meta) = fs_err::metadata(&path) else {
                continue;
            };
            if failed && meta.len() == 0 {
                continue;
            }
            let stamp = (meta.len(), meta.modified().ok());
            if self.shown.get(name) == Some(&stamp) {
                continue;
            }
            let before = self
                .shown
                .insert(name.clone(), stamp)
                .map(|(len, _)| len)
                .filter(|&len| len > 0 && len < meta.len());
            if let (true, Some(before), Some((_, code))) =
                (self.small_model, before, &self.batch_block)
                && appends_to(code, name)
            {
                previews.push(appended_note(name, before, meta.len()));
                self.appended = Some(name.clone());
            } else if self.appended.as_ref() == Some(name) {
                self.appended = None;
            }
            changed.push((name.clone(), path, meta.len()));
        }
        let printed = printed_something(reports);
        self.printed_unwritten = if self.small_model && !failed && printed && changed.is_empty() {
            self.expected
                .iter()
                .find(|name| cwd.join(name.as_str()).is_file())
                .cloned()
        } else {
            None
        };
        // A result with a line twice where the task asks for each once,
        // written by a block that joins a list into its lines: the block
        // run again with that list made of each value once, in its order,
        // once a task. Its result is shown instead of this one.
        if !self.deduplicated
            && self.may_run_again_after_success()
            && let Some((fix, name, line)) = changed.iter().find_map(|(name, path, _)| {
                if !self.asked(name).each_once || !self.python.contains(name.as_str()) {
                    return None;
                }
                let head = read_head(path, FIX_HEAD)?;
                let text = String::from_utf8_lossy(&head);
                // A whole list written twice is an append, told as such.
                if doubled_lines(&text).is_some() {
                    return None;
                }
                let (line, _, _, spaced) = repeated_line(&text)?;
                let (code, fixed) = once_fix(&self.python, spaced)?;
                Some((LineChange::new(&code, fixed), name.clone(), line))
            })
        {
            self.deduplicated = true;
            let lead = format!(
                "[oi: `{name}` had `{line}` twice where the task asks for each once, so oi ran your code again with `{}` written as `{}`, which keeps the first of each value, in order:]",
                fix.line, fix.fixed
            );
            self.run_again_led(&fix, lead);
        }
        // A list written where the task asks for how many values there
        // are, by one line oi can make write the count: the block run
        // again so, once a task. Its result is shown instead.
        if !self.counted_list
            && self.may_run_again_after_success()
            && let Some((fix, name)) = changed.iter().find_map(|(name, path, _)| {
                let asked = self.asked(name);
                if !matches!(
                    asks_count_alone(&asked.task, name),
                    Some("number" | "count")
                ) {
                    return None;
                }
                let head = read_head(path, FIX_HEAD)?;
                let lines = String::from_utf8_lossy(&head)
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .count();
                let distinct = ["distinct", "unique", "different"]
                    .iter()
                    .any(|w| asked.task.contains(w));
                // Two lines may be a header and the count itself.
                (lines > 2)
                    .then(|| count_fix(name, &self.python, distinct))?
                    .map(|fix| (fix, name.clone()))
            })
        {
            self.counted_list = true;
            let lead = format!(
                "[oi: `{name}` held a list where the task asks for how many there are, so oi ran your code again with `{}` written as `{}`, which writes that number:]",
                fix.line, fix.fixed
            );
            self.run_again_led(&fix, lead);
        }
        // An age the task asks for, written by a line that divides days
        // by a year's length: the block run again counting whole years
        // from the dates' parts, once a task. Its result is shown instead.
        if !self.counted_years
            && self.may_run_again_after_success()
            && changed.iter().any(|(name, _, _)| {
                self.asked(name)
                    .words
                    .iter()
                    .any(|w| w == "age" || w == "ages")
                    && writes(&self.python, name)
            })
            && let Some((line, fixed)) = super::ages::whole_years(&self.python)
        {
            self.counted_years = true;
            let lead = format!(
                "[oi: `{line}` counts years as days, which drifts a day every leap year (an age comes out a year too high in the days before a birthday), so oi ran your code again with it written as:\n```python\n{fixed}\n```\nwhich counts whole years from the dates' parts. Its result:]"
            );
            self.run_again_led(&LineChange::new(&line, fixed), lead);
        }
        // The script of the block that changed them (the same for each).
        let whole = match &self.batch_block {
            Some((language, code)) if !changed.is_empty() && is_python(Some(language)) => self
                .runs
                .script_of_last(code)
                .filter(|script| script.lines().count() <= SHOWN_BLOCK_LINES),
            _ => None,
        };
        for (name, path, _) in &changed {
            self.made_before_start.remove(name);
            match &whole {
                Some(script) => self.made_whole.insert(name.clone(), script.clone()),
                None => self.made_whole.remove(name),
            };
            match &self.batch_block {
                Some(block) => self.made_by.insert(name.clone(), block.clone()),
                None => self.made_by.remove(name),
            };
            self.know_result_fixes(name, path);
            if let Some(latest) = self.asked(name).latest
                && let Some((code, fixed)) = keep_fix(&self.python, latest)
            {
                KnownFix::keep(&mut self.line_fixes, code, fixed, self.python.clone());
            }
        }
        let inputs: Vec<(&String, &String)> = self.inputs_seen.iter().collect();
        // An appended result's lines shown with their faults would be
        // mostly the earlier runs': the note alone says what to change.
        // Nor are they shown when oi runs the block again (a line fixed):
        // the re-run's result is shown instead.
        let shown = changed
            .iter()
            .filter(|_| self.fix_rerun.is_none())
            .filter(|(name, _, _)| self.appended.as_ref() != Some(name));
        for (name, path, len) in shown {
            previews.extend(result_preview(
                name,
                path,
                *len,
                &inputs,
                self.asked(name),
                &self.python,
                self.made_whole.get(name).map(String::as_str),
            ));
        }
        previews
    }
}

impl Coach {
    /// What the task's runs printed so far, as [`typed::key`] makes it
    /// (kept for small models only).
    pub(super) fn outputs_key(&self) -> &str {
        &self.outputs_key
    }

    /// In what a batch printed, the output of a script the task asks to
    /// change that oi saved and ran (after its `saved NAME` line): the
    /// script and that output.
    fn script_output<'a>(&self, printed: &'a str) -> Option<(String, &'a str)> {
        self.rewrites.iter().find_map(|name| {
            let saved = super::save_as::saved_line(name);
            let (_, output) = printed.split_once(&format!("{saved}\n"))?;
            Some((name.clone(), output))
        })
    }

    /// After a batch that saved and ran a script the task asks to change
    /// (`printed`, all it printed): when the task leaves punctuation out of
    /// words and the script printed a word with punctuation on it, a note
    /// naming it. Small models only.
    fn punctuation_note(&mut self, printed: &str) -> Option<String> {
        if !self.no_punctuation || self.batch_failed {
            return None;
        }
        let (name, output) = self.script_output(printed)?;
        let Some(word) = punctuated_word(output) else {
            self.punctuated_output = None;
            return None;
        };
        self.punctuated_output = Some((name.clone(), word.to_owned()));
        Some(format!(
            "[oi: `{name}` printed `{word}`, a word with punctuation still on it, where the task says to leave punctuation out: {WORDS_ALONE}. Send all of `{name}` again, fixed, in one block.]"
        ))
    }

    /// After a batch that saved and ran a script the task asks to change
    /// (`printed`, all it printed): when the task asks for numbers with N
    /// decimals and every number with a decimal point the script printed
    /// has another count of them (`3100.0` for 2), a note naming it.
    fn decimals_note(&mut self, printed: &str) -> Option<String> {
        let places = self.decimals?;
        if self.batch_failed {
            return None;
        }
        let (name, output) = self.script_output(printed)?;
        let Some(number) = other_decimals(output, places) else {
            self.undecimal_output = None;
            return None;
        };
        self.undecimal_output = Some((name.clone(), number.clone()));
        Some(format!(
            "[oi: `{name}` printed `{number}` where the task asks for {places} decimal{}: format the number with `f'{{value:.{places}f}}'` where it is printed. Send all of `{name}` again, fixed, in one block.]",
            if places == 1 { "" } else { "s" }
        ))
    }

    /// After a batch whose code wrote a file the task does not name,
    /// named after a result it does name and of its kind
    /// (`ext_counts_sorted.csv` beside `ext_counts.csv`), which exists: a
    /// small model fixing its result writes the fixed one beside it and
    /// leaves the result as it was. That line, with the result's name
    /// (also kept as a line fix). Once a task.
    fn copy_note(&mut self, cwd: &Path) -> Option<String> {
        if !self.small_model || self.told_copy || self.batch_failed {
            return None;
        }
        let (line, other, name) =
            written_names(&self.python)
                .into_iter()
                .find_map(|(line, other)| {
                    let name = self
                        .expected
                        .iter()
                        .find(|name| beside(&other, name) && cwd.join(name.as_str()).is_file())?;
                    (!self.inputs.contains(&other) && cwd.join(&other).is_file())
                        .then(|| (line, other.clone(), name.clone()))
                })?;
        self.told_copy = true;
        let fixed = line.replace(other.as_str(), &name);
        KnownFix::keep(
            &mut self.line_fixes,
            line.clone(),
            fixed.clone(),
            self.python.clone(),
        );
        Some(format!(
            "[oi: your code wrote `{other}` (`{line}`), which the task does not ask for, and left `{name}` as it was. Write `{name}` itself (`{fixed}`).]"
        ))
    }

    /// After a run that worked and printed something while the result
    /// file the task asks to write does not exist: that it is still to be
    /// written. Small models print what they found, see it, and print it
    /// again, never writing it. Once a task; not after a batch that
    /// only printed a value typed into its code (`guessed`).
    fn unwritten_note(&mut self, reports: &[Report], cwd: &Path, guessed: bool) -> Option<String> {
        let printed = printed_something(reports);
        if !self.small_model || !self.writes_expected || self.batch_failed {
            return None;
        }
        let missing: Vec<&String> = self
            .expected
            .iter()
            .filter(|name| !cwd.join(name.as_str()).exists())
            .collect();
        // The last block that printed, with its output sent to the one
        // file still to write: what oi runs if the model ends without it.
        // Not code that only printed a value typed into it: written, the
        // file would hold the guess.
        if let ([name], true, false, Some((language, code))) =
            (missing.as_slice(), printed, guessed, &self.batch_block)
            && let Some(code) = writing_output(language, code, name)
        {
            let run = ProposedRun {
                call_id: None,
                language: Some(language.clone()),
                code,
            };
            self.unwritten_block = Some(((*name).clone(), run));
        }
        if self.told_unwritten {
            return None;
        }
        // Written under another name of the same kind (`avg.txt` for
        // `average.txt`): that line, with the name the task gives.
        if let [name] = missing.as_slice()
            && let Some((line, other)) =
                written_names(&self.python).into_iter().find(|(_, other)| {
                    !self.expected.contains(other)
                        && !self.inputs.contains(other)
                        && Path::new(other).extension() == Path::new(name.as_str()).extension()
                        && cwd.join(other).is_file()
                })
        {
            self.told_unwritten = true;
            let fixed = line.replace(other.as_str(), name);
            KnownFix::keep(
                &mut self.line_fixes,
                line.clone(),
                fixed.clone(),
                self.python.clone(),
            );
            return Some(format!(
                "[oi: the task asks you to write `{name}`, but your code wrote `{other}` (`{line}`). Write `{name}`, the name the task gives (`{fixed}`).]"
            ));
        }
        // What a guess printed is no result to write (the model is told
        // it is a guess).
        if missing.is_empty() || !printed || guessed {
            return None;
        }
        self.told_unwritten = true;
        let names: Vec<String> = missing.iter().map(|name| format!("`{name}`")).collect();
        // How, in the language that printed it: typed back, the values
        // would be a guess (and `echo "a\nb"` writes no line breaks).
        let shell = reports
            .iter()
            .any(|r| super::save_as::is_shell(Some(r.language.as_str())));
        let how = match missing.as_slice() {
            [name] if shell => format!(" (add `> {name}` to the command that printed it)"),
            [name] => printed_table_write(&self.python, name)
                .map(|line| format!(" (`{line}` writes the table it printed)"))
                .unwrap_or_default(),
            _ => String::new(),
        };
        // Python that printed it, changed to write it: shown whole (a
        // small model copies a block, and does not make the change).
        let shown = match &self.unwritten_block {
            Some((name, run)) if how.is_empty() && !shell => format!(
                " Your code, with what it prints going to `{name}`:\n```python\n{}\n```\n",
                run.code
            ),
            _ => String::new(),
        };
        Some(format!(
            "[oi: the task asks you to write {}, which does not exist yet. If what that run printed is what it should hold, change the code that printed it to write it there{how} and run it; do not type the values in.{shown}]",
            names.join(" and ")
        ))
    }

    /// The line fixes a changed result file `name` (at `path`) calls for,
    /// kept for [`Self::apply_line_fix`] with the start of its text (each
    /// stands while the file holds it); the note shown with the file gives
    /// the same changes. Small models only.
    fn know_result_fixes(&mut self, name: &str, path: &Path) {
        if !self.small_model {
            return;
        }
        let Some(head) = read_head(path, FIX_HEAD) else {
            return;
        };
        let text = String::from_utf8_lossy(&head);
        let fixes = [
            self.write_fix_for(name, &text),
            self.header_fix_for(name, &text),
            self.one_value_fix_for(name, &text),
            self.total_fix_for(name, &text),
        ];
        let key_values = if repeated_key(&text).is_some() {
            key_value_fixes(&self.python)
        } else {
            Vec::new()
        };
        for (code, fixed) in fixes.into_iter().flatten().chain(key_values) {
            KnownFix::keep_for(
                &mut self.line_fixes,
                code,
                fixed,
                self.python.clone(),
                Some((path.to_path_buf(), head.clone())),
            );
        }
    }

    /// When the table `name` (its start `text`), asked a value for each
    /// key, holds one number in every row, put there by a line of the last
    /// batch's code that adds up a whole column: that line and the line
    /// that computes it per key.
    fn total_fix_for(&self, name: &str, text: &str) -> Option<(String, String)> {
        let asked = self.asked(name);
        if asked.each.is_empty() {
            return None;
        }
        let (column, _, _, key) = table::same_in_every_row(text)?;
        whole_column_total(&self.python, &column, key.as_deref(), &asked.each)
    }

    /// When the result `name` (its start `text`) holds a value with words
    /// around it written by an f-string of the last batch's code: that
    /// line and its change.
    fn write_fix_for(&self, name: &str, text: &str) -> Option<(String, String)> {
        let shown = first_lines(text, 3, 100);
        labelled(name, &shown, self.asked(name))
            .and_then(|(line, value)| write_fix(&self.python, line, value))
    }

    /// When the table `name` (its start `text`) begins with a header other
    /// than the one the task asks for and the last batch's code wrote it
    /// in a line of its own (`df.to_csv('passed.csv', index=False)`): that
    /// line and the call that writes the columns asked.
    fn header_fix_for(&self, name: &str, text: &str) -> Option<(String, String)> {
        let asked = self.asked(name).header.as_deref()?;
        let first = text
            .trim_start_matches('\u{feff}')
            .lines()
            .next()
            .unwrap_or("");
        let (written, asked) = (header_fields(first), header_fields(asked));
        if written == asked {
            return None;
        }
        // Only a line that is the call alone is replaced by it.
        lone_to_csv(name, &self.python)?;
        header_call(name, &written, &asked, &self.python, text)
    }

    /// When the result `name` (its start `text`), asked one value per
    /// line, holds rows of a table written whole by a line of the last
    /// batch's code (`top3.to_csv('top3.txt', index=False, header=False)`),
    /// or begins with an input column's name written as its header: that
    /// line and the call that writes only the column of the rows' one text
    /// value (`top3['City'].to_csv(…)`), or no header (`…, header=False)`).
    fn one_value_fix_for(&self, name: &str, text: &str) -> Option<(String, String)> {
        let asked = self.asked(name);
        if !asked.one_per_line {
            return None;
        }
        let inputs: Vec<(&String, &String)> = self.inputs_seen.iter().collect();
        match several_per_line(text) {
            Some(line) => one_value_call(name, &line, &inputs, &self.python),
            None if asked.header.is_none() && column_name_line(text, &inputs).is_some() => {
                header_off_call(name, &self.python)
            }
            None => None,
        }
    }

    /// A small model told which line of its code to change (a value
    /// written with words around it: `f"The average is: {avg}"` becomes
    /// `f"{avg}"`; a result written under another name) often sends the
    /// same code again, or only the changed line (which, run alone, writes
    /// to a file its `with` block already closed). In the reply's Python
    /// blocks, that line gets the change the note gave (kept at its
    /// indentation); a short block (at most three lines of code) holding
    /// the changed line, where the line sat inside a `with` or a loop of
    /// the block the note was about, is replaced by that block with the
    /// change, run whole. What was done, if anything.
    pub(super) fn apply_line_fix(&self, actions: &mut [Action]) -> Option<LineFix> {
        if !self.small_model {
            return None;
        }
        for action in actions {
            let Action::Run(run) = action else {
                continue;
            };
            if !is_python(run.language.as_deref()) {
                continue;
            }
            for KnownFix {
                code, fixed, block, ..
            } in &self.line_fixes
            {
                let has = |text: &str, line: &str| text.lines().any(|l| l.trim() == line);
                let whole = if has(&run.code, code) {
                    if made_its_own_fix(&run.code, code, fixed, block) {
                        continue;
                    }
                    false
                } else if has(&run.code, fixed)
                    && block
                        .lines()
                        .any(|l| l.trim() == code && l.starts_with([' ', '\t']))
                    && run
                        .code
                        .lines()
                        .filter(|l| super::splice::is_significant(l))
                        .count()
                        <= 3
                {
                    true
                } else {
                    continue;
                };
                run.code = with_line(if whole { block } else { &run.code }, code, fixed);
                return Some(LineFix {
                    code: code.clone(),
                    fixed: fixed.clone(),
                    how: if whole { FixedAs::Block } else { FixedAs::Line },
                });
            }
        }
        None
    }

    /// As the model ends the task, told before it finished (the completion
    /// check) and with nothing more to tell it: its last Python code, when
    /// it still holds a line a note said how to change (a result written
    /// with words around its value), with that change, to run for it once.
    /// A small model told the change again and again answers "The task is
    /// done" and keeps the wrong result; the change is the note's own,
    /// shown and approved as any run. Small models only.
    pub(super) fn standing_fix(&mut self) -> Option<(ProposedRun, LineFix)> {
        if !self.small_model || self.ran_standing_fix || self.completion_checks == 0 {
            return None;
        }
        let KnownFix {
            code, fixed, block, ..
        } = self
            .line_fixes
            .iter()
            .rev()
            .find(|fix| fix.stands(&self.python))?;
        self.ran_standing_fix = true;
        Some((
            ProposedRun {
                call_id: None,
                language: Some("python".to_owned()),
                code: with_line(block, code, fixed),
            },
            LineFix {
                code: code.clone(),
                fixed: fixed.clone(),
                how: FixedAs::Ended,
            },
        ))
    }

    /// The model ends the task without writing the one result file it was
    /// told still does not exist, after its last code printed something:
    /// that code with what it prints sent to the file, to run once, with
    /// the note to read beside its result. Told how, a small model answers
    /// "The task is done." again and again; the change is the one the
    /// note showed, and the run is approved as any other. Small models
    /// only.
    pub(super) fn standing_write(&mut self, cwd: &Path) -> Option<(ProposedRun, String, String)> {
        // The block is kept only where the note about the file is given.
        if !self.small_model || self.ran_unwritten_block {
            return None;
        }
        let (name, run) = self.unwritten_block.as_ref()?;
        if cwd.join(name).exists() {
            return None;
        }
        self.ran_unwritten_block = true;
        Some((
            run.clone(),
            name.clone(),
            format!(
                "[oi: you ended the task without writing `{name}`, so oi ran your last code again with what it prints going to `{name}`.]"
            ),
        ))
    }

    /// As the model ends the task with nothing more to tell it: the run oi
    /// makes for it of a change a note gave that it ended without — its
    /// printing code writing the file still missing
    /// ([`Self::standing_write`]), else its last code with a line a note
    /// said how to change ([`Self::standing_fix`]).
    pub(super) fn run_at_end(&mut self, cwd: &Path) -> Option<EndRun> {
        if let Some((run, name, note)) = self.standing_write(cwd) {
            return Some(EndRun {
                run,
                warning: format!(
                    "the model ends without writing `{name}`, which the task asks for, after code that printed something; oi runs that code again with what it prints going to `{name}`"
                ),
                note,
            });
        }
        let (run, fix) = self.standing_fix()?;
        Some(EndRun {
            run,
            warning: format!(
                "the model ends with the line a note said to change (`{}`) still in its last code; oi runs that code again with the change (`{}`)",
                fix.code, fix.fixed
            ),
            note: fix.note(),
        })
    }

    /// What the task asks of the form of the result file `name`.
    fn asked(&self, name: &str) -> &Asked {
        self.asked
            .iter()
            .find(|(file, _)| file == name)
            .map_or(&*NOTHING_ASKED, |(_, asked)| asked)
    }

    /// After a batch whose result reads as nothing found (a count of 0, an
    /// empty list; printed, or in a file the task names): the first
    /// pattern of its Python code that matches nothing in the input files,
    /// with how their lines look. Once a task, small models only.
    fn pattern_note(&mut self, reports: &[Report], cwd: &Path) -> Option<String> {
        if !self.small_model || self.told_pattern || self.patterns.is_empty() {
            return None;
        }
        let nothing = reports
            .iter()
            .any(|r| !r.text.is_empty() && super::pattern::found_nothing(&r.text))
            || self.expected.iter().any(|name| {
                read_head(&cwd.join(name.as_str()), 4096).is_some_and(|head| {
                    super::pattern::found_nothing(&String::from_utf8_lossy(&head))
                })
            });
        if !nothing {
            return None;
        }
        let inputs: Vec<(&String, &String)> = self.inputs_seen.iter().collect();
        let pattern = self.patterns.iter().find(|p| {
            !inputs.is_empty()
                && inputs
                    .iter()
                    .all(|(_, text)| super::pattern::finds_nothing(p, text) == Some(true))
        })?;
        let (name, text) = inputs.first()?;
        let line = first_lines(text, 1, 160).into_iter().next()?;
        let names: Vec<String> = inputs.iter().map(|(n, _)| format!("`{n}`")).collect();
        // One stray character (a quote, a space) is the usual slip.
        let near = inputs
            .iter()
            .find_map(|(_, text)| super::pattern::near_match(pattern, text))
            .map(|(c, fixed)| {
                let c = if c == ' ' {
                    "space".to_owned()
                } else {
                    format!("`{c}`")
                };
                // The model's own line with the pattern fixed, which it
                // copies where it ignores the pattern alone.
                let own = self
                    .python
                    .lines()
                    .map(str::trim)
                    .find(|line| line.contains(pattern.as_str()))
                    .map(|line| format!(": `{}`", line.replacen(pattern.as_str(), &fixed, 1)))
                    .unwrap_or_default();
                format!(" Without one {c}, `{fixed}` does match{own}.")
            })
            .unwrap_or_default();
        self.told_pattern = true;
        Some(format!(
            "[oi: the pattern `{pattern}` in your code matches nothing in {}, so it found nothing. A line of `{name}` reads:\n{line}\nFix the pattern to match such lines (print what it finds on this one to check).{near}]",
            names.join(" or ")
        ))
    }
}

/// Whether a reply that ran nothing tells the user to run code ("you can
/// run", "run the following" …) instead of running it.
fn describes_code(text: &str) -> bool {
    let lower = text.to_lowercase();
    [
        "you can run",
        "you can use the following",
        "run the following",
        "execute the following",
        "run this command",
        "use this command",
        "copy and paste",
        "save this code",
        "you can use",
        "you need to",
        "text editor",
        "follow these steps",
        "here's how you can",
        "here is how you can",
        "please provide",
        "not yet completed",
        "not yet complete",
        "task is not done",
        "task is not yet done",
    ]
    .iter()
    .any(|p| lower.contains(p))
}

/// Whether a run's output says it lacked a module, package or program.
fn lacks_something(output: &str) -> bool {
    [
        "ModuleNotFoundError",
        "No module named",
        "command not found",
        "Cannot find module",
        "cannot find package",
    ]
    .iter()
    .any(|p| output.contains(p))
}

/// The name a Python run's output says is not defined.
fn undefined_name(output: &str) -> Option<&str> {
    let line = output
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with("NameError: name '"))?;
    let name = super::error_hint::between(line, "name '", "'")?;
    (!name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_')).then_some(name)
}

/// Whether Python `code` defines `name` at its top level: a function, a
/// class, an assignment or an import.
fn defines(code: &str, name: &str) -> bool {
    code.lines().any(|line| {
        let defined = ["def ", "class "]
            .iter()
            .filter_map(|kw| line.strip_prefix(kw))
            .any(|rest| {
                rest.strip_prefix(name)
                    .is_some_and(|after| after.starts_with(['(', ':']))
            });
        let assigned = assigns(line, name);
        let imported = line.starts_with("import ") || line.starts_with("from ");
        let imports_it = imported && line.split([' ', ',']).any(|word| word == name);
        defined || assigned || imports_it
    })
}

/// Whether a top-level Python `line` assigns `name` (`total = 0`; not
/// `total += 1`, `total == 0` or an indented line).
fn assigns(line: &str, name: &str) -> bool {
    !line.starts_with(char::is_whitespace)
        && super::splice::assignment(line)
            .is_some_and(|(target, op, _)| target == name && op.is_empty())
}

/// What leads the result of a block oi ran again with the line change
/// `fix` its error called for.
fn fix_lead(fix: &LineChange) -> String {
    let LineChange { line, fixed } = fix;
    if fixed.contains('\n') {
        format!(
            "[oi: that error has a known fix, so oi ran your code again with `{line}` written as:\n```python\n{fixed}\n```\nIts result:]"
        )
    } else {
        format!(
            "[oi: that error has a known fix, so oi ran your code again with `{line}` written as `{fixed}`:]"
        )
    }
}

/// Python `code` that failed for lack of `import` (which defines `name`)
/// with that import put first; `None` when the code does not use `name`
/// itself (the error came from another run, or from a module it loaded),
/// already imports it, or must begin with a `from __future__` line.
fn with_import(code: &str, name: &str, import: &str) -> Option<String> {
    let first = code.lines().find(|l| !l.trim().is_empty())?;
    if !uses(code, name)
        || first.trim_start().starts_with("from __future__")
        || code.lines().any(|l| l.trim() == import)
    {
        return None;
    }
    Some(format!("{import}\n{code}"))
}

/// Whether Python `code` uses `name` other than where it defines it: a
/// line that calls or reads it and is not its `def`, `class` or import.
fn uses(code: &str, name: &str) -> bool {
    code.lines().any(|line| {
        let trimmed = line.trim_start();
        let defining = trimmed.starts_with("def ")
            || trimmed.starts_with("class ")
            || trimmed.starts_with("import ")
            || trimmed.starts_with("from ")
            || assigns(line, name);
        !defining && !trimmed.starts_with('#') && super::splice::has_name(trimmed, name)
    })
}

/// Whether a run's output says a package manager installed what it was
/// asked for (pip, apt, npm).
fn installed_something(output: &str) -> bool {
    let failed = ["ERROR:", "E: ", "npm ERR!", "error:"]
        .iter()
        .any(|p| output.contains(p));
    !failed
        && (output.contains("Successfully installed")
            || output.contains("Requirement already satisfied")
            || output.contains("Setting up ")
            || (output.contains("added ") && output.contains(" package")))
}

/// Whether a task that is not a question asks for something to be done,
/// rather than being a greeting or a remark ("hi", "thanks!", "ok, great"):
/// at least three words and no question mark.
fn asks_for_action(text: &str) -> bool {
    !text.contains('?') && text.split_whitespace().count() >= 3
}

/// When Python `code` failed (`output` ends with an `AssertionError`)
/// testing a result the task asks for (one of `expected`, named in the
/// code, which does not write it) against a value typed into it (a name
/// set to a list, string or number literal that the `assert` line uses):
/// that file and that name.
fn typed_self_test(code: &str, output: &str, expected: &[String]) -> Option<(String, String)> {
    if !super::error_hint::last_error(output)?.starts_with("AssertionError") {
        return None;
    }
    let file = expected
        .iter()
        .find(|name| code.contains(name.as_str()) && !writes(code, name))?;
    let asserts: Vec<&str> = code
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("assert "))
        .collect();
    let name = code.lines().map(str::trim).find_map(|line| {
        let (target, op, value) = super::splice::assignment(line)?;
        // A list or dict typed out: no loop, no call inside it.
        let literal = value.starts_with(['\'', '"'])
            || value.starts_with(|c: char| c.is_ascii_digit())
            || (value.starts_with(['[', '{']) && !value.contains(" for ") && !value.contains('('));
        let used = asserts.iter().any(|a| {
            a.match_indices(target.as_str()).any(|(at, _)| {
                let before = a[..at].chars().next_back();
                let after = a[at + target.len()..].chars().next();
                let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
                !word(before) && !word(after)
            })
        });
        (op.is_empty() && literal && used).then_some(target)
    })?;
    Some((file.clone(), name))
}

/// Whether a task's `text` asks for the earliest or latest of something,
/// which is a matter of dates, not of where rows stand in a file.
fn asks_by_time(text: &str) -> bool {
    let lower = text.to_lowercase();
    let words: Vec<&str> = task_words(&lower).collect();
    words
        .iter()
        .any(|w| ["earliest", "latest", "oldest", "newest"].contains(w))
        || words.windows(2).any(|w| w == ["most", "recent"])
}

/// When Python `code` reads one input table with pandas in one line
/// (`df = pd.read_csv('prices.csv')`), takes rows by position
/// (`.iloc[0]`, `.iloc[-1]`) and sorts nothing (nor takes a `min`/`max`),
/// while that table's one column of ISO dates is not in order
/// ([`table::unsorted_iso_dates`]): the read line followed by one that
/// sorts the table by that column; the file's name; the column.
fn time_order_fix(
    code: &str,
    inputs: &[String],
    cwd: &Path,
) -> Option<(LineChange, String, String)> {
    let positional = [".iloc[0]", ".iloc[-1]"].iter().any(|p| code.contains(p));
    let orders = [
        "sort_values",
        "sort_index",
        "sorted(",
        ".sort(",
        "min(",
        "max(",
        "idxmin",
        "idxmax",
        "nsmallest",
        "nlargest",
    ]
    .iter()
    .any(|o| code.contains(o));
    if !positional || orders {
        return None;
    }
    let reads = csv_reads(code, inputs);
    let [(line, ref target, _, file)] = reads[..] else {
        return None;
    };
    let head = read_head(&cwd.join(file), 8192)?;
    // A name with spaces around it is named so by pandas unless the
    // code strips it: left alone.
    let column =
        table::unsorted_iso_dates(&String::from_utf8_lossy(&head)).filter(|c| c.trim() == c)?;
    let fix = LineChange {
        line: line.to_owned(),
        fixed: format!(
            "{line}\n{target} = {target}.sort_values({}).reset_index(drop=True)",
            table::python_string(&column)
        ),
    };
    Some((fix, file.clone(), column))
}

/// Whether a task asks why something happens, or for an explanation, and
/// not for a change ("fix", "update"): "script.py fails, tell me why".
fn asks_why(text: &str) -> bool {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let has = |set: &[&str]| words.iter().any(|w| set.contains(&w.as_str()));
    has(&["why", "explain", "explanation", "cause", "reason"])
        && !has(&[
            "fix", "repair", "correct", "change", "update", "modify", "rewrite", "edit", "extend",
            "add", "patch",
        ])
}

/// Whether a task asks for a change ("set the port", "fix the script",
/// "remove the duplicates"): a verb of change that begins the task or a
/// clause ("In settings.ini, set …", "… and then fix …"), so the noun
/// ("the set of names") does not count. Not "add": "add the amounts" sums
/// them.
fn asks_for_change(text: &str) -> bool {
    const VERBS: &[&str] = &[
        "set",
        "change",
        "update",
        "modify",
        "replace",
        "fix",
        "edit",
        "remove",
        "delete",
        "correct",
        "repair",
        "rename",
        "uncomment",
        "patch",
    ];
    clause_starts_with(text, VERBS)
}

/// Whether a clause of `text` (its start, or after a sentence's end, a
/// comma, "then", "and", "please" or "also") starts with one of `verbs`.
fn clause_starts_with(text: &str, verbs: &[&str]) -> bool {
    const BEFORE: &[&str] = &["then", "and", "please", "also"];
    let mut starts_clause = true;
    for token in text.split_whitespace() {
        let word = token
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        if starts_clause && verbs.contains(&word.as_str()) {
            return true;
        }
        starts_clause =
            token.ends_with(['.', ',', ';', ':', '!']) || BEFORE.contains(&word.as_str());
    }
    false
}

/// The sentence of `task` that first names `name`: its text before the
/// name, and its text from the name on.
fn sentence_of<'a>(task: &'a str, name: &str) -> Option<(&'a str, &'a str)> {
    const ENDS: [&str; 4] = [". ", "? ", "! ", "\n"];
    let at = task.find(name)?;
    let (before, after) = task.split_at(at);
    let start = ENDS
        .iter()
        .filter_map(|end| before.rfind(end).map(|i| i + end.len()))
        .max()
        .unwrap_or(0);
    let end = ENDS
        .iter()
        .filter_map(|end| after[name.len()..].find(end).map(|i| i + name.len() + 1))
        .min()
        .unwrap_or(after.len());
    Some((&before[start..], &after[..end]))
}

/// Whether `task` names the file `name` only as an example of a name
/// ("one file per country, named after it (for example uk.csv)"): not
/// a file the task asks for by that name.
fn is_example(task: &str, name: &str) -> bool {
    let lower = task.to_lowercase();
    let name = name.to_lowercase();
    let mut at = 0;
    let mut seen = false;
    while let Some(found) = lower[at..].find(&name) {
        let start = at + found;
        seen = true;
        let before = lower[..start]
            .trim_end()
            .trim_end_matches(['`', '"', '\'', ':', ',']);
        let example = [
            "for example",
            "e.g.",
            "e.g",
            "such as",
            "like",
            "for instance",
        ]
        .iter()
        .any(|words| before.trim_end().ends_with(words))
            || in_mapping_example(&lower, start);
        if !example {
            return false;
        }
        at = start + name.len();
    }
    seen
}

/// Whether the place `at` of the (lower-case) task `lower` stands in
/// brackets that show how one name maps to another ("keeping their
/// folders (project/src/a.py.bak goes to backups/src/a.py.bak)",
/// "(Holiday Pic.jpeg becomes holiday_pic.jpg)"): both names there are
/// an example of the rule, not files the task asks for.
fn in_mapping_example(lower: &str, at: usize) -> bool {
    let Some(open) = lower[..at]
        .rfind('(')
        .filter(|&o| !lower[o..at].contains(')'))
    else {
        return false;
    };
    let Some(close) = lower[at..].find(')').map(|c| at + c) else {
        return false;
    };
    let inside = &lower[open..close];
    [
        " goes to ",
        " go to ",
        " becomes ",
        " become ",
        " -> ",
        " → ",
        " is moved to ",
        " is renamed to ",
        " turns into ",
    ]
    .iter()
    .any(|words| inside.contains(words))
}

/// Whether the sentence of `task` that names the file `name` says to keep
/// it as it is ("important.db must stay", "do not touch config.ini",
/// "leave notes.txt untouched"); not words about the rest of a file the
/// task changes ("set the port in a.ini and leave the rest as it is").
fn says_to_keep(task: &str, name: &str) -> bool {
    let Some((before, after)) = sentence_of(task, name) else {
        return false;
    };
    let sentence = format!("{before}{after}").to_lowercase();
    let whole = [
        "must stay",
        "should stay",
        "must remain",
        "do not touch",
        "don't touch",
        "not be touched",
        "do not delete",
        "don't delete",
        "must not be",
    ]
    .iter()
    .any(|phrase| sentence.contains(phrase));
    let name = name.to_lowercase();
    let named = ["keep ", "leave "]
        .iter()
        .any(|verb| sentence.contains(&format!("{verb}{name}")))
        || ["untouched", "unchanged", "intact", "alone", "as it is"]
            .iter()
            .any(|word| sentence.contains(&format!("{name} {word}")));
    whole || named
}

/// Whether the sentence of `task` that names the file `name` says to write
/// it ("Write the number to commits.txt", "save them in out.csv", "Convert
/// people.csv to people.json").
fn says_to_write(task: &str, name: &str) -> bool {
    let Some((before, _)) = sentence_of(task, name) else {
        return false;
    };
    // "Flatten settings.json into flat.txt", "Split the log into
    // errors.log": what is made into a file is written.
    let into = before
        .split_whitespace()
        .next_back()
        .is_some_and(|word| word.eq_ignore_ascii_case("into"));
    into || before.split_whitespace().any(|word| {
        matches!(
            word.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
                .as_str(),
            "write"
                | "save"
                | "store"
                | "put"
                | "output"
                | "record"
                | "export"
                | "dump"
                | "append"
                | "convert"
                | "merge"
                | "combine"
                | "create"
                | "generate"
                | "produce"
        )
    })
}

/// Whether a task asks a question (which a model may answer without code)
/// rather than asks for something to be done.
fn is_question(text: &str) -> bool {
    let text = text.trim();
    if text.ends_with('?') {
        return true;
    }
    let first = text
        .split_whitespace()
        .next()
        .unwrap_or("")
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    matches!(
        first.as_str(),
        "what"
            | "why"
            | "how"
            | "who"
            | "when"
            | "where"
            | "which"
            | "is"
            | "are"
            | "does"
            | "do"
            | "can"
            | "could"
            | "explain"
            | "describe"
            | "tell"
    )
}

/// What a file the task names now holds, for a small model: its size and
/// first lines (a binary file: its size only), and what is wrong with it
/// that shows without the task's answer (`inputs`: the input files' text,
/// by name, for values the result lost).
///
/// `whole`: the script the result was made by, when the block that wrote
/// it builds on earlier runs, shown with what is wrong with it.
fn result_preview(
    name: &str,
    path: &Path,
    len: u64,
    inputs: &[(&String, &String)],
    asked: &Asked,
    python: &str,
    whole: Option<&str>,
) -> Option<String> {
    use std::io::Read as _;
    const LINES: usize = 3;
    const WIDTH: usize = 100;
    let mut file = fs_err::File::open(path).ok()?;
    let mut head = Vec::new();
    (&mut file).take(HEAD).read_to_end(&mut head).ok()?;
    // Text: valid UTF-8 without NUL bytes, though the head may end inside
    // a character.
    let text = match std::str::from_utf8(&head) {
        Ok(text) => Some(text),
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&head[..e.valid_up_to()]).ok(),
        Err(_) => None,
    };
    let Some(text) = text.filter(|t| !t.contains('\0')) else {
        return Some(format!(
            "[oi: `{name}` now exists ({len} bytes). Check that it is what the task asks for.]"
        ));
    };
    if text.trim().is_empty() && len <= HEAD {
        return Some(format!(
            "[oi: `{name}` now exists but is empty. Check that it is what the task asks for.]"
        ));
    }
    // Lines as `str::lines` counts them: the line breaks, and an unended
    // last line.
    let mut breaks = bytecount(&head);
    let mut last = head.last().copied();
    let mut buf = vec![0; 64 * 1024];
    loop {
        match file.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                breaks += bytecount(&buf[..n]);
                last = Some(buf[n - 1]);
            }
        }
    }
    let count = breaks + usize::from(last.is_some_and(|b| b != b'\n'));
    let shown = first_lines(text, LINES, WIDTH);
    let more = if count > LINES { "\n…" } else { "" };
    let lines = if count == 1 { "line" } else { "lines" };
    let check = match labelled(name, &shown, asked) {
        Some((line, value)) => format!(
            "It puts words before the value (`{line}`): if the task asks for the value, write {}{}.",
            alone(name, value, &shown),
            own_write_fix(python, line, value)
        ),
        None if is_zero(text) => "It holds 0: unless that is the real answer, your code matched or read nothing. Print a few of the lines or rows it should have counted, then fix it.".to_owned(),
        None if literal_breaks(name, text) => "It holds `\\n` as two characters, not as line breaks (`echo` does not turn them into breaks): write it with `printf` or from Python.".to_owned(),
        None if repeats_header(text) => "Its lines after the first repeat the header line instead of holding values (`csv.writer` given dicts writes their keys: use `csv.DictWriter`).".to_owned(),
        None => {
            let mut problems = content_problems(name, text, inputs, asked, python);
            // The folder the result's name is relative to.
            let base = path.ancestors().nth(Path::new(name).components().count());
            problems.extend(base.and_then(|base| absent_paths(name, text, asked, base)));
            problems.extend(base.and_then(|base| size_order(name, text, asked, base)));
            match (problems.is_empty(), whole) {
                (true, _) => "Check that it holds exactly what the task asks for.".to_owned(),
                (false, None) => format!(
                    "It is not right yet: {}. Fix the code and run it again.",
                    problems.join("; and ")
                ),
                (false, Some(script)) => format!(
                    "It is not right yet: {}. {}",
                    problems.join("; and "),
                    whole_script_note(name, script)
                ),
            }
        }
    };
    // A table: its columns, what their values are like and their order,
    // which its first lines do not show.
    let table = table::profile(text, len <= HEAD, true)
        .map(|profile| format!("\nAs a table: {profile}"))
        .unwrap_or_default();
    Some(format!(
        "[oi: `{name}` now has {count} {lines}:\n{}{more}{table}\n{check}]",
        shown.join("\n")
    ))
}

/// When a run failed to read a word as a number (`could not convert string
/// to float: 'amount'`) and that word is a cell of the first line of one of
/// the task's input files: a note that the line is a header, to skip.
/// Small models parse every line of a CSV as data, then retry variations
/// of the same loop.
fn header_note(output: &str, inputs: &[String], cwd: &Path) -> Option<String> {
    let (value, _) = super::error_hint::refused_number(output)?;
    if value.is_empty() || value.parse::<f64>().is_ok() {
        return None;
    }
    for name in inputs {
        let Some(head) = read_head(&cwd.join(name), 4096) else {
            continue;
        };
        let text = String::from_utf8_lossy(&head);
        let first = text
            .trim_start_matches('\u{feff}')
            .lines()
            .next()
            .unwrap_or("");
        let is_cell = first
            .split([',', ';', '\t', '|'])
            .any(|cell| cell.trim().trim_matches('"') == value);
        if is_cell {
            return Some(format!(
                "[oi: `{value}` is a column name in the first line of `{name}` ({}): that line is the header, not data. Skip it (for example read the file with csv.DictReader, or pandas).]",
                first_lines(first, 1, 120).join("")
            ));
        }
    }
    None
}

/// What a block that is text, not code, is the text of.
enum Text {
    /// An input file the task names: the block is its lines, changed.
    Input(String),
    /// The one file the task asks for: the block is the lines it should
    /// hold, typed in.
    Output(String),
}

/// Whether `code` is lines of a list or a table rather than code: at
/// least two lines, and half of those not comments, that begin as a
/// Markdown list item (`- `, `* `, `+ `, `1. `) or a table row (`|`).
fn typed_lines(code: &str) -> bool {
    let lines: Vec<&str> = code
        .lines()
        .filter(|l| super::splice::is_significant(l))
        .map(str::trim)
        .collect();
    let item = |line: &str| {
        let numbered = line.split_once(['.', ')']).is_some_and(|(n, rest)| {
            !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) && rest.starts_with(' ')
        });
        ["- ", "* ", "+ ", "|"].iter().any(|m| line.starts_with(m)) || numbered
    };
    let items = lines.iter().filter(|l| item(l)).count();
    items >= 2 && items * 2 >= lines.len()
}

/// Whether `code` is text of the input file `name` rather than code: most
/// of its lines (a first comment naming the file aside) are lines of the
/// file, or set a key the file sets (`port = 5433` for `port = 5432`).
fn text_of(code: &str, name: &str, cwd: &Path) -> bool {
    let Some(head) = read_head(&cwd.join(name), 64 * 1024) else {
        return false;
    };
    let file = String::from_utf8_lossy(&head);
    let key = |line: &str| -> Option<String> {
        let (key, _) = line.split_once(['=', ':'])?;
        let key = key.trim();
        (!key.is_empty() && !key.contains(' ')).then(|| key.to_lowercase())
    };
    let lines: Vec<&str> = file
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let keys: Vec<String> = lines.iter().filter_map(|l| key(l)).collect();
    let block: Vec<&str> = code
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .filter(|l| !(l.starts_with('#') && l.contains(name)))
        .collect();
    let known = block
        .iter()
        .filter(|l| lines.contains(l) || key(l).is_some_and(|k| keys.contains(&k)))
        .count();
    !block.is_empty() && known * 2 >= block.len() && known >= block.len().min(2)
}

/// Whether a text result (not code or JSON, where `\n` in a string is
/// normal) holds `\n` as two characters.
fn literal_breaks(name: &str, text: &str) -> bool {
    let data =
        !(super::save_as::is_script(name) || name.ends_with(".json") || name.ends_with(".jsonl"));
    data && text.contains("\\n")
}

/// Whether the lines after a result's first are copies of it.
fn repeats_header(text: &str) -> bool {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let Some(first) = lines.next() else {
        return false;
    };
    let rest: Vec<&str> = lines.collect();
    !rest.is_empty() && rest.iter().all(|l| *l == first)
}

/// The text of a file no bigger than [`DIFFED`], if it is text.
fn small_text(path: &Path) -> Option<String> {
    if fs_err::metadata(path).ok()?.len() > DIFFED {
        return None;
    }
    String::from_utf8(fs_err::read(path).ok()?)
        .ok()
        .filter(|t| !t.contains('\0'))
}

/// What changed in the input `name`, from `old` to `new`: a unified diff
/// with one line of context, at most [`DIFF_LINES`] lines.
fn change_note(name: &str, old: &str, new: &str) -> String {
    let diff = similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(1)
        .to_string();
    let lines: Vec<&str> = diff.lines().collect();
    let mut shown = lines
        .iter()
        .take(DIFF_LINES)
        .copied()
        .collect::<Vec<_>>()
        .join("\n");
    if lines.len() > DIFF_LINES {
        shown.push_str(&format!("\n… ({} more lines)", lines.len() - DIFF_LINES));
    }
    format!(
        "[oi: your code changed `{name}` (- removed, + added):\n```diff\n{shown}\n```\nCheck that it changed only what the task asks, and nothing else.]"
    )
}

/// When the Python file `name` changed from `old` to `new` and `new` no
/// longer runs the function `old` ran at its top level (a rewritten
/// script without its `main(sys.argv[1])` or `if __name__ == ...` block):
/// that function and `old`'s line that ran it.
pub(super) fn dropped_entry(name: &str, old: &str, new: &str) -> Option<(String, String)> {
    if !name.to_ascii_lowercase().ends_with(".py") {
        return None;
    }
    /// The functions `text` defines at its top level, and its top-level
    /// lines that run one of them (or open a `__main__` block).
    fn entries(text: &str) -> (Vec<&str>, Vec<&str>) {
        let defined: Vec<&str> = text
            .lines()
            .filter_map(|l| {
                l.strip_prefix("def ")
                    .or_else(|| l.strip_prefix("async def "))
            })
            .filter_map(|l| l.split('(').next())
            .map(str::trim)
            .collect();
        let runs = text
            .lines()
            .filter(|l| {
                l.starts_with("if __name__")
                    || defined.iter().any(|f| {
                        l.strip_prefix(f).is_some_and(|rest| rest.starts_with('('))
                            || l.contains(&format!("= {f}("))
                            || l.contains(&format!("({f}("))
                    })
            })
            .collect();
        (defined, runs)
    }
    let (_, before) = entries(old);
    let (defined, after) = entries(new);
    if before.is_empty() || !after.is_empty() {
        return None;
    }
    // The line that ran a function the new text still defines (for a
    // `__main__` block, its first function), and that function.
    before.iter().find_map(|line| {
        let function = if line.starts_with("if __name__") {
            defined.first()
        } else {
            defined.iter().find(|f| line.contains(&format!("{f}(")))
        }?;
        Some(((*function).to_owned(), line.trim().to_owned()))
    })
}

/// When the Python file `name` printed its result alone (`print(total)`,
/// `print(f'{avg:.2f}')`) in `old` and prints it with words around it in
/// `new` (`print("The average is:", avg)`), and no longer alone: the first
/// such print of `old` and the last of `new`. Whatever reads a script's output (another program,
/// a test) expects the value as it was.
fn labelled_print(name: &str, old: &str, new: &str) -> Option<(String, String)> {
    if !name.to_ascii_lowercase().ends_with(".py") {
        return None;
    }
    let first = |text: &str, shape: PrintShape| {
        print_calls(text)
            .find(|args| print_shape(args) == shape)
            .map(|args| format!("print({args})"))
    };
    if first(old, PrintShape::Labelled).is_some() || first(new, PrintShape::Bare).is_some() {
        return None;
    }
    // The result is printed last; an earlier labelled print is more
    // likely a message (`print(f"Invalid number: {line}")`).
    let last = print_calls(new)
        .filter(|args| print_shape(args) == PrintShape::Labelled)
        .last()
        .map(|args| format!("print({args})"));
    Some((first(old, PrintShape::Bare)?, last?))
}

/// A line `code` of the script `now` and its change `fixed`, said as the
/// notes say it; kept as a line fix for the version sent next when `keep`
/// (small models).
fn keep_script_fix(
    fixes: &mut Vec<KnownFix>,
    keep: bool,
    now: &str,
    code: String,
    fixed: String,
) -> String {
    let how = format!("in your script, `{code}` becomes `{fixed}`");
    if keep {
        KnownFix::keep(fixes, code, fixed, now.to_owned());
    }
    how
}

/// When the Python file `name` printed only its result in `old` (every
/// print a value alone) and `new` adds a print of words
/// (`print(f"Invalid number: {line}")`) whose words begin a line of what
/// the run `printed`: that print and the line. Whatever reads a script's
/// output expects its result alone.
fn message_print(name: &str, old: &str, new: &str, printed: &str) -> Option<(String, String)> {
    if !name.to_ascii_lowercase().ends_with(".py") {
        return None;
    }
    let old_prints: Vec<&str> = print_calls(old).collect();
    if old_prints.is_empty()
        || old_prints
            .iter()
            .any(|args| print_shape(args) != PrintShape::Bare)
    {
        return None;
    }
    // The last print is the result's (words around it are another fault).
    let prints: Vec<&str> = print_calls(new).collect();
    let (_, earlier) = prints.split_last()?;
    earlier
        .iter()
        .copied()
        .filter(|args| print_shape(args) != PrintShape::Bare && !old_prints.contains(args))
        .find_map(|args| {
            let words = leading_words(args)?;
            let line = printed
                .lines()
                .map(str::trim)
                .find(|line| line.starts_with(words.as_str()))?;
            Some((format!("print({args})"), line.to_owned()))
        })
}

/// The words a print's arguments `args` begin with: its first string
/// literal up to a `{…}` field, trimmed, when that holds a word of two
/// letters or more.
fn leading_words(args: &str) -> Option<String> {
    let start = args.find(['"', '\''])?;
    let prefix = &args[..start];
    if !prefix.chars().all(|c| "fFrRbBuU".contains(c)) {
        return None;
    }
    let quote = args[start..].chars().next()?;
    let body = &args[start + 1..];
    let end = body.find(quote)?;
    let words = body[..end].split('{').next()?.trim();
    let letters: Vec<bool> = words.chars().map(|c| c.is_ascii_alphabetic()).collect();
    letters
        .windows(2)
        .any(|w| w[0] && w[1])
        .then(|| words.to_owned())
}

/// A line printing a value with words around it (`print(f"Average:
/// {avg:.2f}")`, `print("Average:", avg)`) changed to print the value
/// alone: an f-string's last field, or the last of two arguments after a
/// string.
fn bare_print(line: &str) -> Option<String> {
    let at = line.find("print(")?;
    if let Some((start, end, content)) = f_string(line).filter(|(start, _, _)| *start > at) {
        let (_, fields) = f_string_parts(content)?;
        return Some(with_field_alone(line, start, end, fields.last()?, false));
    }
    let open = at + "print(".len();
    let close = line.rfind(')')?;
    let [label, value] = typed::split_args(&line[open..close])?[..] else {
        return None;
    };
    typed::literal_text(label.trim())?;
    Some(format!(
        "{}print({}){}",
        &line[..at],
        value.trim(),
        &line[close + 1..]
    ))
}

/// The arguments of each `print(…)` call of Python `text` (one per line,
/// up to the line's last `)`).
fn print_calls(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter_map(|line| {
        let at = line.match_indices("print(").map(|(at, _)| at).find(|&at| {
            !line[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
        })?;
        let args = &line[at + "print(".len()..];
        Some(args[..args.rfind(')')?].trim())
    })
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum PrintShape {
    /// A value alone (`total // count`, `f'{avg:.2f}'`, `round(x, 2)`).
    Bare,
    /// A value with words (`"Average:", avg`, `f"The mean is {m}"`).
    Labelled,
    /// Words alone (`"No numbers in the file."`), or nothing.
    Message,
}

/// What a print's arguments `args` print: words (two letters in a row in
/// a string literal, outside its `{…}` fields) and a value (a name or
/// number outside the literals, or an f-string's field).
fn print_shape(args: &str) -> PrintShape {
    let mut words = false;
    let mut value = false;
    let mut outside = String::new();
    let mut chars = args.chars();
    while let Some(c) = chars.next() {
        if c != '\'' && c != '"' {
            outside.push(c);
            continue;
        }
        // A literal: its prefix (`f`, `rf`) is not a name.
        let prefix: String = outside
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        let formatted = prefix.len() <= 2 && prefix.to_ascii_lowercase().contains('f');
        if prefix.len() <= 2 && prefix.chars().all(|c| "fFrRbBuU".contains(c)) {
            outside.truncate(outside.len() - prefix.len());
        }
        let mut text = String::new();
        let mut depth = 0;
        for d in chars.by_ref() {
            if d == c {
                break;
            }
            match d {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ if depth > 0 => value |= formatted && d.is_alphanumeric(),
                _ => text.push(d),
            }
        }
        let letters: Vec<bool> = text.chars().map(|c| c.is_ascii_alphabetic()).collect();
        words |= letters.windows(2).any(|w| w[0] && w[1]);
        outside.push(' ');
    }
    value |= outside.chars().any(|c| c.is_alphanumeric());
    match (words, value) {
        (false, true) => PrintShape::Bare,
        (true, true) => PrintShape::Labelled,
        _ => PrintShape::Message,
    }
}

/// Whether a result file holds only the number zero (`0`, `0.0`, `0.00`).
fn is_zero(text: &str) -> bool {
    let text = text.trim();
    !text.is_empty() && text.parse::<f64>().is_ok_and(|n| n == 0.0)
}

/// The text between the quotes (`'` or `"`) `rest` begins with.
pub(super) fn quoted(rest: &str) -> Option<&str> {
    let quote = rest.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let rest = &rest[1..];
    rest.find(quote).map(|end| &rest[..end])
}

/// The key a `KeyError` names in `rest` (the text after `KeyError: `): a
/// quoted key (`'customer'`), or the first name of a selection pandas did
/// not find (`"['timestamp'] not in index"`), and whether it was that.
fn key_error(rest: &str) -> Option<(&str, bool)> {
    let key = quoted(rest)?;
    match key
        .strip_suffix(" not in index")
        .and_then(|list| list.strip_prefix('['))
    {
        Some(list) => quoted(list).map(|name| (name, true)),
        None => Some((key, false)),
    }
}

/// The tables among the `inputs` (in `cwd`): each name, its separator and
/// its columns, read from the file's start.
fn input_tables<'a>(inputs: &'a [String], cwd: &Path) -> Vec<(&'a String, char, Vec<String>)> {
    inputs
        .iter()
        .filter_map(|name| {
            let head = read_head(&cwd.join(name), 8192)?;
            let (sep, columns) = table::columns(&String::from_utf8_lossy(&head))?;
            Some((name, sep, columns))
        })
        .collect()
}

/// When a run of `code` that groups (`groupby`) failed for a missing key
/// (`KeyError: 'name'`) that is a column of an input table split by
/// commas, at a line that is not a merge: the table the code used there
/// lost the column (a `groupby(…)[…].sum()` keeps only the grouped and
/// summed columns). Told the columns of the inputs, a small model sees the
/// name is right and runs the same code again.
fn lost_column_note(output: &str, code: &str, inputs: &[String], cwd: &Path) -> Option<String> {
    let (_, rest) = output.rsplit_once("KeyError: ")?;
    let (key, selected) = key_error(rest)?;
    let grouped = code.contains(".groupby(");
    if !grouped && !selected {
        return None;
    }
    // The failing line of the model's code (library frames are not its).
    let failing = super::error_hint::traceback_line(output)?;
    if failing.contains("merge(") || failing.contains("read_") {
        return None;
    }
    let (owner, _, _) = input_tables(inputs, cwd)
        .into_iter()
        .find(|(_, sep, columns)| *sep == ',' && columns.iter().any(|c| c == key))?;
    Some(if grouped {
        format!(
            "[oi: `{key}` is a column of `{owner}`, but the table `{failing}` uses has no `{key}` column any more: a `groupby(…)[…].sum()` keeps only the grouped and summed columns, so group by `{key}` too (`groupby([…, '{key}'])`), or print the table's `.columns` before that line to see what it holds.]"
        )
    } else {
        format!(
            "[oi: `{key}` is a column of `{owner}`, but the table `{failing}` selects from has no `{key}` column any more: your code renamed it or left it out before that line. Use the name the table has there (print its `.columns` before that line to see them).]"
        )
    })
}

/// When a run of `code` failed for a missing key (`KeyError: 'Score'`)
/// that an input table's header has only with spaces around it
/// (`Score `), and the code reads tables in one line, into a name, with
/// pandas (`df = pd.read_csv('scores.csv')`, that table's file named) or
/// the csv module (`reader = csv.DictReader(f)`): that line, followed by
/// one that strips the header's names. Told to strip them, small models
/// use the name again without doing it.
fn strip_header_fix(output: &str, code: &str, inputs: &[String], cwd: &Path) -> Option<LineChange> {
    let (_, rest) = output.rsplit_once("KeyError: ")?;
    let (key, _) = key_error(rest)?;
    let tables = input_tables(inputs, cwd);
    let (table, _) = spaced_column(key, &tables)?;
    let file = Path::new(table.as_str())
        .file_name()
        .and_then(|n| n.to_str())?;
    let reads: Vec<(&str, String, bool)> = code
        .lines()
        .map(str::trim)
        .filter_map(|line| {
            let (target, op, value) = super::splice::assignment(line)?;
            let name = op.is_empty() && target.chars().all(|c| c.is_alphanumeric() || c == '_');
            let pandas = value.starts_with("pd.read_csv(");
            (name && (pandas || value.starts_with("csv.DictReader(")))
                .then_some((line, target, pandas))
        })
        .collect();
    let [(line, ref target, pandas)] = reads[..] else {
        return None;
    };
    // Names the code sets itself (stripped, or given): not this error.
    if [".columns = ", ".fieldnames = "]
        .iter()
        .any(|set| code.contains(&format!("{target}{set}")))
    {
        return None;
    }
    let fixed = if pandas {
        if !line.contains(file) {
            return None;
        }
        format!("{line}\n{target}.columns = {target}.columns.str.strip()")
    } else {
        format!("{line}\n{target}.fieldnames = [n.strip() for n in {target}.fieldnames]")
    };
    Some(LineChange {
        line: line.to_owned(),
        fixed,
    })
}

/// The lines of Python `code` that read one of the `inputs` with pandas
/// into a name (`df = pd.read_csv('sales.csv', sep=';')`), trimmed: each
/// with that name, the call as written and the input it names.
fn csv_reads<'c, 'i>(
    code: &'c str,
    inputs: &'i [String],
) -> Vec<(&'c str, String, &'c str, &'i String)> {
    code.lines()
        .map(str::trim)
        .filter_map(|line| {
            let (target, op, value) = super::splice::assignment(line)?;
            let name = op.is_empty() && target.chars().all(|c| c.is_alphanumeric() || c == '_');
            if !name || !value.starts_with("pd.read_csv(") {
                return None;
            }
            let file = inputs.iter().find(|input| {
                [format!("'{input}'"), format!("\"{input}\"")]
                    .iter()
                    .any(|q| value.contains(q.as_str()))
            })?;
            Some((line, target, value, file))
        })
        .collect()
}

/// When Python `code` reads an input table with pandas' own header
/// (`df = pd.read_csv('sales.csv')`, no `header=`, `names=` or `skip`
/// option) and then drops its first row (`df = df.iloc[1:]`, `df =
/// df[1:]`, `df = df.drop(0)`) although that row is data like the others
/// ([`table::first_data_row`]): the dropping line, written as a comment
/// that says why it is gone; the file's name; and the row. Small models
/// "skip the header" a second time, and the first row's values are lost.
fn dropped_first_row(
    code: &str,
    inputs: &[String],
    cwd: &Path,
) -> Option<(LineChange, String, String)> {
    let lines: Vec<&str> = code.lines().map(str::trim).collect();
    csv_reads(code, inputs)
        .into_iter()
        .find_map(|(_, target, value, file)| {
            if ["header=", "names=", "skiprows", "skipfooter", "index_col"]
                .iter()
                .any(|option| value.contains(option))
            {
                return None;
            }
            let drops = [
                format!("{target} = {target}.iloc[1:]"),
                format!("{target} = {target}[1:]"),
                format!("{target} = {target}.drop(0)"),
                format!("{target} = {target}.drop(index=0)"),
                format!("{target}.drop(0, inplace=True)"),
            ];
            let dropped = lines.iter().find(|l| {
                drops.iter().any(|d| {
                    l.strip_prefix(d.as_str())
                        .is_some_and(|rest| rest.is_empty() || rest == ".reset_index(drop=True)")
                })
            })?;
            let head = read_head(&cwd.join(file), 8192)?;
            let row = table::first_data_row(&String::from_utf8_lossy(&head))?;
            let fix = LineChange {
                line: (*dropped).to_owned(),
                fixed: "# (no row to drop: pd.read_csv took the header line as the column names)"
                    .to_owned(),
            };
            Some((fix, file.clone(), row))
        })
}

/// The first of the input `tables` ([`input_tables`]) whose header has
/// `key` only with spaces around it (`Score ` for `Score`): its name, and
/// the name as its header writes it.
fn spaced_column<'t>(
    key: &str,
    tables: &'t [(&String, char, Vec<String>)],
) -> Option<(&'t String, &'t String)> {
    tables.iter().find_map(|(name, _, columns)| {
        columns
            .iter()
            .find(|c| c.as_str() != key && c.trim() == key)
            .map(|c| (*name, c))
    })
}

/// When a run failed for a missing key (`KeyError: 'customer'`) that is
/// not a column of every input table: a note naming each input's columns.
/// Small models guess column names (`customer` for `customer_id`, `Region`
/// for `Region Name`) and then retry the same guess.
fn columns_note(output: &str, inputs: &[String], cwd: &Path) -> Option<String> {
    let key = output
        .rsplit_once("KeyError: ")
        .and_then(|(_, rest)| key_error(rest))
        .map(|(key, _)| key);
    // `row[1]` of a `;` table read as `,`: each row is one field.
    if key.is_none() && !output.contains("IndexError: list index out of range") {
        return None;
    }
    let tables = input_tables(inputs, cwd);
    let odd_separator = tables.iter().any(|(_, sep, _)| *sep != ',');
    // The name with spaces around it in a header (`Score `): the fix is
    // stripping the names, which small models skip when told the names.
    let spaced = key.and_then(|key| spaced_column(key, &tables));
    if let (Some(key), Some((name, column))) = (key, spaced) {
        return Some(format!(
            "[oi: the header of `{name}` has spaces around its names (`{}`, not `'{key}'`): right after reading it, strip them with `df.columns = df.columns.str.strip()` (csv module: `row = {{k.strip(): v for k, v in row.items()}}`), then `df['{key}']` works.]",
            table::python_string(column)
        ));
    }
    let what = match key {
        _ if tables.is_empty() => return None,
        Some(key)
            if !tables
                .iter()
                .all(|(_, _, columns)| columns.iter().any(|c| c == key)) =>
        {
            format!("`{key}` is not a column of every input")
        }
        Some(key) if odd_separator => {
            format!("`{key}` is a column, but the file was not split by its separator")
        }
        None if odd_separator => "a row has fewer fields than the code indexes, likely because the file was not split by its separator".to_owned(),
        _ => return None,
    };
    let listed: Vec<String> = tables
        .iter()
        .map(|(name, sep, columns)| {
            let columns: Vec<String> = columns.iter().map(|c| format!("`{c}`")).collect();
            let split = match sep {
                ',' => String::new(),
                '\t' => " (fields separated by tabs: read it with sep='\\t' in pandas, or delimiter='\\t' with the csv module)".to_owned(),
                other => format!(
                    " (fields separated by `{other}`: read it with sep='{other}' in pandas, or delimiter='{other}' with the csv module)"
                ),
            };
            format!("`{name}`{split} has {}", columns.join(", "))
        })
        .collect();
    Some(format!(
        "[oi: {what}: {}. Use these names exactly (spaces and case included).]",
        listed.join("; ")
    ))
}

/// The first `limit` bytes of the file at `path` (all of a shorter one).
pub(super) fn read_head(path: &Path, limit: u64) -> Option<Vec<u8>> {
    use std::io::Read as _;
    let mut head = Vec::new();
    fs_err::File::open(path)
        .ok()?
        .take(limit)
        .read_to_end(&mut head)
        .ok()?;
    Some(head)
}

/// When every shown line of a plain text file is a label and a number
/// (`Mean: 25.5`, `Sum of squares = 55`, `The average is 21.0°C.`): the
/// first such line and its number. Small models write these where a task
/// asks for the value.
fn labelled<'a>(name: &str, shown: &'a [String], asked: &Asked) -> Option<(&'a str, &'a str)> {
    let plain = match Path::new(name).extension() {
        None => true,
        Some(ext) => ext.eq_ignore_ascii_case("txt"),
    };
    // A task quoting a form of label and value ("name: count") asks for
    // labelled lines.
    if quotes_a_labelled_form(&asked.task) {
        return None;
    }
    let mut first = None;
    for line in shown.iter().map(|l| l.trim()).filter(|l| !l.is_empty()) {
        let (label, value) = split_label(line)?;
        let (label, value) = (
            label.trim(),
            value
                .trim()
                .trim_end_matches('.')
                .trim_start_matches(['$', '€', '£']),
        );
        // The number, and a short unit after it (`21.0°C`, `12 km`).
        let end = value
            .find(|c: char| !(c.is_ascii_digit() || ".,-+eE%".contains(c)))
            .unwrap_or(value.len());
        let (value, unit) = (value[..end].trim(), value[end..].trim());
        let number = value
            .trim_start_matches(['-', '+'])
            .starts_with(|c: char| c.is_ascii_digit())
            && unit.chars().count() <= 5
            && !unit.chars().any(|c| c.is_ascii_digit());
        let worded = label
            .chars()
            .any(|c| !(c.is_ascii_digit() || c == '.' || c == ','));
        // A label the task writes itself ("min: X") is asked for.
        let own = label.to_lowercase();
        let asked_for = [":", " :", "=", " ="]
            .iter()
            .any(|sep| asked.task.contains(&format!("{own}{sep}")));
        if !number || !worded || asked_for {
            return None;
        }
        first.get_or_insert((line, value));
    }
    first.filter(|_| plain)
}

/// Whether a task's text quotes the form of a labelled line (`"name:
/// count"`, `` `key = value` ``): a label and a value separated by `:` or
/// `=`, within double quotes or backticks.
fn quotes_a_labelled_form(task: &str) -> bool {
    ['"', '`'].iter().any(|&quote| {
        task.split(quote).skip(1).step_by(2).any(|quoted| {
            let quoted = quoted.trim();
            quoted.len() <= 40
                && [": ", " = ", "="].iter().any(|sep| {
                    quoted.split_once(sep).is_some_and(|(label, value)| {
                        !label.trim().is_empty() && !value.trim().is_empty()
                    })
                })
        })
    })
}

/// The first value of a result `text` that stands for no number (`NaN`,
/// `nan`, `NaT`, `<NA>`, `inf`, `-inf`), as a cell of a line split at
/// spaces, `,`, `;`, `:`, `=` or a tab: its line number and the value.
/// Not when the task (lowercased) names it nor an input holds it.
fn not_a_number(text: &str, task: &str, inputs: &[(&String, &String)]) -> Option<(usize, String)> {
    const NONE: [&str; 6] = ["NaN", "nan", "NaT", "<NA>", "inf", "-inf"];
    text.lines().enumerate().find_map(|(at, line)| {
        let value = line
            .split([' ', ',', ';', ':', '=', '\t'])
            .map(str::trim)
            .find(|cell| NONE.contains(cell))?;
        let named = task_words(task).any(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .eq_ignore_ascii_case(value.trim_start_matches(['-', '<']).trim_end_matches('>'))
        });
        let held = inputs.iter().any(|(_, input)| input.contains(value));
        (!named && !held).then(|| (at + 1, value.to_owned()))
    })
}

/// A form the task quotes for the lines of a result (`- Title`): each
/// run of letters or digits, and `...`, stands for a value; the signs and
/// spaces around them are kept as written.
#[derive(Debug)]
struct LineForm {
    /// As the task writes it.
    text: String,
    /// The lines it fits.
    pattern: regex::Regex,
}

impl LineForm {
    /// The form of a quoted text: `None` unless it has a word and
    /// something that separates (a space or one of `:=,;|` and a tab)
    /// and is no file name or sentence.
    fn of(quoted: &str) -> Option<Self> {
        let chars = quoted.chars().count();
        if !(2..=60).contains(&chars)
            || quoted.contains('\n')
            || !quoted.chars().any(char::is_alphanumeric)
            || !quoted.contains([' ', ':', '=', ',', ';', '|', '\t'])
            || quoted.split_whitespace().count() > 6
            || !named_files(quoted).is_empty()
        {
            return None;
        }
        let mut pattern = String::from("^");
        let mut value = false;
        let mut rest = quoted;
        while let Some(c) = rest.chars().next() {
            let dots = if rest.starts_with("...") { 3 } else { 0 };
            let step = dots.max(c.len_utf8());
            if c.is_alphanumeric() || c == '_' || c == '…' || dots > 0 {
                if !value {
                    pattern.push_str(".+?");
                }
                value = true;
            } else {
                value = false;
                pattern.push_str(&regex::escape(&rest[..step]));
            }
            rest = &rest[step..];
        }
        // A form ending in a sign (`"Total: "`) is the start of a line the
        // task goes on to describe in words.
        if value {
            pattern.push('$');
        }
        let pattern = regex::Regex::new(&pattern).ok()?;
        Some(Self {
            text: quoted.to_owned(),
            pattern,
        })
    }

    fn fits(&self, line: &str) -> bool {
        self.pattern.is_match(line.trim_end())
    }
}

/// The forms a task quotes for a result's lines: a text in quotes (`"`,
/// `'`, `` ` `` or curly ones) after "as", "like", "form", "format",
/// "formatted" or a colon ("one per line as 'word count'", "three lines:
/// \"min: X\", …"), or after such a form and a comma, "and" or "or". Not
/// an example of a value ("for example …") nor a text without a space or
/// a separating sign (`"n/a"`).
fn asked_line_forms(task: &str) -> Vec<LineForm> {
    let mut forms: Vec<LineForm> = Vec::new();
    let mut after = 0;
    let mut chained = false;
    while let Some((open, inner, close)) = next_quoted(task, after) {
        let before = task[after..open].trim_end().to_lowercase();
        let lead = before
            .rsplit(|c: char| c.is_whitespace() || c == '(')
            .next()
            .unwrap_or_default();
        let leads = matches!(lead, "as" | "like" | "form" | "format" | "formatted")
            || before.ends_with(':');
        let joined = chained && matches!(before.trim_start_matches(',').trim(), "" | "and" | "or");
        let form = (leads || joined).then(|| LineForm::of(inner)).flatten();
        chained = form.is_some();
        if let Some(form) = form
            && !forms.iter().any(|f| f.text == form.text)
        {
            forms.push(form);
        }
        after = close;
    }
    forms
}

/// The next quoted text of `task` from byte `from`: where its opening
/// quote is, the text, and where its closing quote ends. A `'` opens only
/// after a space, `(` or the start and closes only before a sign, a space
/// or the end, so an apostrophe (`owner's`) is neither.
fn next_quoted(task: &str, from: usize) -> Option<(usize, &str, usize)> {
    task[from..].char_indices().find_map(|(i, c)| {
        let i = from + i;
        let next = i + c.len_utf8();
        let apostrophe = task[..i]
            .chars()
            .next_back()
            .is_some_and(|p| !p.is_whitespace() && p != '(');
        let close = match c {
            '"' => '"',
            '`' => '`',
            '“' => '”',
            '\'' if !apostrophe => '\'',
            _ => return None,
        };
        let (j, q) = task[next..].char_indices().find(|&(j, q)| {
            q == close
                && (q != '\''
                    || task[next + j + 1..]
                        .chars()
                        .next()
                        .is_none_or(|n| !n.is_alphanumeric()))
        })?;
        Some((i, &task[next..next + j], next + j + q.len_utf8()))
    })
}

/// The first line of a result `text` that fits none of the `forms` the
/// task quotes for its lines (a header the task gives left out): its
/// number, the line, and how many lines do not fit.
fn line_out_of_form<'a>(
    text: &'a str,
    forms: &[&LineForm],
    header: Option<&str>,
) -> Option<(usize, &'a str, usize)> {
    if forms.is_empty() {
        return None;
    }
    let mut off = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .filter(|(_, line)| header.is_none_or(|h| line.trim() != h))
        .filter(|(_, line)| !forms.iter().any(|form| form.fits(line)));
    let (at, line) = off.next()?;
    Some((at + 1, line, 1 + off.count()))
}

/// The Python line that writes `value` alone to the file `name`: a small
/// model told to write the value alone copies a line far more reliably
/// than it rewrites the code that added the words (it answers with the
/// value in prose, or writes the same sentence again).
fn write_only(name: &str, value: &str) -> String {
    format!(
        "open({}, 'w').write({})",
        table::python_string(name),
        table::python_string(&format!("{value}\n")).replace('\n', "\\n")
    )
}

/// What a labelled result file `name` (its first lines `shown`) should
/// hold instead, its first value being `value`: the value alone, as a
/// line of Python writes it; or, where several lines are labelled, each
/// line's value alone.
fn alone(name: &str, value: &str, shown: &[String]) -> String {
    if shown.iter().filter(|line| !line.trim().is_empty()).count() > 1 {
        format!("each line's value alone (`{value}` for the first)")
    } else {
        format!(
            "the value alone (`{value}`, as `{}` writes it)",
            write_only(name, value)
        )
    }
}

/// Where the model's `python` wrote a result `line` with an f-string of
/// one value and words around it (`f"The average is: {avg}"`): that code
/// line and the same line writing the value alone, as a clause to add to
/// a note (a small model rewrites its own line more readily than it
/// takes up a new one); or nothing.
fn own_write_fix(python: &str, line: &str, value: &str) -> String {
    write_fix(python, line, value)
        .map(|(code, fixed)| format!(" (in your code, `{code}` becomes `{fixed}`)"))
        .unwrap_or_default()
}

/// The line of the model's Python code `python` that wrote the result
/// line `line` with words around its value `value` (an f-string whose
/// last field wrote the value: `f"The average is: {avg}"`,
/// `f"{i}^2 = {i**2}"`), and that line writing that field alone.
fn write_fix(python: &str, line: &str, value: &str) -> Option<(String, String)> {
    let line = line.trim();
    python.lines().map(str::trim).find_map(|code| {
        let (start, end, content) = f_string(code)?;
        let (literals, fields) = f_string_parts(content)?;
        let (first, last) = (literals.first()?, literals.last()?);
        let placeholder = *fields.last()?;
        let newline = last.ends_with("\\n");
        let suffix = last.trim_end_matches("\\n");
        let words = literals.len() > 2 || !first.trim().is_empty() || !suffix.trim().is_empty();
        // The line read through the f-string's words, in order: what its
        // last field wrote lies between the words before it and the end's.
        let mut at = line
            .strip_prefix(first.trim_start())
            .map(|_| first.trim_start().len())?;
        for middle in &literals[1..literals.len() - 1] {
            at += line[at..].find(middle)? + middle.len();
        }
        let written = line.get(at..line.len().checked_sub(suffix.trim_end().len())?)?;
        (words && line.ends_with(suffix.trim_end()) && written.contains(value)).then(|| {
            (
                code.to_owned(),
                with_field_alone(code, start, end, placeholder, newline),
            )
        })
    })
}

/// The code line `code` with its f-string (from `start` to `end`, as
/// [`f_string`] finds it) holding the field `field` alone, and a final
/// `\n` when `newline`.
fn with_field_alone(code: &str, start: usize, end: usize, field: &str, newline: bool) -> String {
    let quote = &code[start + 1..start + 2];
    format!(
        "{}f{quote}{field}{}{quote}{}",
        &code[..start],
        if newline { "\\n" } else { "" },
        &code[end..]
    )
}

/// An f-string's content cut into its words and its fields: the words
/// before, between and after the fields (one more than the fields), and
/// each field with its braces. Nothing when it has no field, escaped
/// braces or a field inside a field.
fn f_string_parts(content: &str) -> Option<(Vec<&str>, Vec<&str>)> {
    let (mut literals, mut fields) = (Vec::new(), Vec::new());
    let mut rest = content;
    while let Some(open) = rest.find(['{', '}']) {
        if rest[open..].starts_with('}') {
            return None;
        }
        let close = open + rest[open..].find('}')?;
        let field = &rest[open..=close];
        if field[1..].contains('{') || field.len() < 3 {
            return None;
        }
        literals.push(&rest[..open]);
        fields.push(field);
        rest = &rest[close + 1..];
    }
    literals.push(rest);
    (!fields.is_empty()).then_some((literals, fields))
}

/// The files lines of Python `code` write, named by a string literal:
/// `open('x.txt', 'w')` (or `'a'`), `.to_csv('x.csv'`, `.to_json(…`,
/// `.savefig(…`. Each line (trimmed) with the name.
fn written_names(code: &str) -> Vec<(String, String)> {
    code.lines()
        .map(str::trim)
        .filter_map(|line| {
            let opened = open_call(line).and_then(typed::opened_for_writing);
            let name = opened.or_else(|| {
                [".to_csv(", ".to_json(", ".savefig(", ".to_excel("]
                    .iter()
                    .find_map(|call| {
                        let at = line.find(call)? + call.len();
                        quoted(&line[at..]).filter(|name| !name.is_empty())
                    })
                    .map(str::to_owned)
            })?;
            Some((line.to_owned(), name))
        })
        .collect()
}

/// In a file of `KEY=value` lines (no `[section]`, at least two): a key
/// set on two lines, read as a shell or dotenv reader would (spaces around
/// `=` and an `export ` before it do not change the key), with both lines.
fn repeated_key(text: &str) -> Option<(String, String, String)> {
    let keys = key_lines(text)?;
    if keys.len() < 2 {
        return None;
    }
    keys.iter().enumerate().find_map(|(i, (key, line))| {
        let (_, other) = keys[i + 1..].iter().find(|(other, _)| other == key)?;
        Some(((*key).to_owned(), (*line).to_owned(), (*other).to_owned()))
    })
}

/// The line of `python` that splits a `KEY=value` line into a key and a
/// value (`key, value = line.strip().split('=')`), and that line reading
/// the key without `export ` before it, and both without spaces or quotes
/// around them, split at the first `=` only. Small models told to
/// normalise the key send the same code again.
fn key_value_fix(python: &str) -> Option<(String, String)> {
    key_value_fixes(python).into_iter().next()
}

/// Every line of `python` that [`key_value_fix`] changes, each with its
/// change: code that reads two files has a split line in each loop.
fn key_value_fixes(python: &str) -> Vec<(String, String)> {
    let mut fixes: Vec<(String, String)> = Vec::new();
    for line in python.lines().map(str::trim) {
        let Some(split) = super::error_hint::SplitLine::of(line) else {
            continue;
        };
        let plain = |n: &str| {
            !n.is_empty()
                && n.chars().all(|c| c.is_alphanumeric() || c == '_')
                && !n.starts_with(|c: char| c.is_ascii_digit())
        };
        let [key, value] = split.names[..] else {
            continue;
        };
        // A line that already drops `export ` gets the rest of the change.
        let source = split
            .source
            .strip_suffix(".replace('export ', '', 1)")
            .or_else(|| split.source.strip_suffix(".replace('export ', '')"))
            .unwrap_or(split.source);
        let source_plain = !source.is_empty()
            && source.chars().all(|c| {
                c.is_alphanumeric() || matches!(c, '_' | '.' | '(' | ')' | '[' | ']' | '\'')
            });
        if split.bare == "="
            && split.ends_line()
            && plain(key)
            && plain(value)
            && source_plain
            && !fixes.iter().any(|(code, _)| code == line)
        {
            fixes.push((
                line.to_owned(),
                format!(
                    "{key}, {value} = (part.strip().strip('\"').strip(\"'\") for part in {source}.replace('export ', '', 1).split('=', 1))"
                ),
            ));
        }
    }
    fixes
}

/// The keys of a `KEY=value` text (a `.env`, a properties file), each with
/// its line (trimmed): every line not blank nor a `#` comment sets a key,
/// read with spaces around `=` or `export ` before it as the same key.
/// `None` when a line is not such a setting.
fn key_lines(text: &str) -> Option<Vec<(&str, &str)>> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (key, _) = line.split_once('=')?;
            let key = key.trim();
            let key = key.strip_prefix("export ").unwrap_or(key).trim();
            let word = !key.is_empty()
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
            word.then_some((key, line))
        })
        .collect()
}

/// When the `KEY=value` result `text` lacks a key that one of `inputs`
/// (also `KEY=value` texts) sets: that key and the input. A merge that
/// read one of its files and forgot the other.
fn missing_key<'a>(text: &str, inputs: &[(&'a String, &'a String)]) -> Option<(String, &'a str)> {
    let written = key_lines(text)?;
    if written.is_empty() {
        return None;
    }
    inputs.iter().find_map(|(input, body)| {
        let keys = key_lines(body)?;
        let (key, _) = keys
            .iter()
            .find(|(key, _)| !written.iter().any(|(w, _)| w == key))?;
        Some(((*key).to_owned(), input.as_str()))
    })
}

/// A field of a JSON input (a key at any depth; of JSON lines too) that
/// the task names as a word (`active` in "the active users") and the
/// Python `code` never mentions: small models leave out the filter or the
/// key a task gives in passing. The field and its input; `result` is the
/// file the code wrote.
fn unread_field(
    words: &[String],
    inputs: &[(&String, &String)],
    result: &str,
    code: &str,
) -> Option<(String, String)> {
    // The result's name is no reading (`active` in `active_emails.txt`).
    let code = code.to_lowercase().replace(&result.to_lowercase(), "");
    // Only inputs the code reads (by name): code that read none is told
    // otherwise that it typed its result.
    inputs.iter().find_map(|(input, text)| {
        if !code.contains(&input.to_lowercase()) {
            return None;
        }
        // JSON only: its fields are read by name, where a table's columns
        // may be read by position (`row[2]`).
        // Fields of records only (objects in a list, or JSON lines): a
        // document's own keys (`"blog": "field notes"` above its posts)
        // hold one value, nothing to keep, sort or group rows by.
        let mut fields = Vec::new();
        if let Ok(value) = serde_json::from_str::<serde_json::Value>(text) {
            json_keys(&value, false, &mut fields);
        } else {
            for line in text.lines().filter(|l| !l.trim().is_empty()).take(3) {
                let value = serde_json::from_str::<serde_json::Value>(line).ok()?;
                json_keys(&value, true, &mut fields);
            }
        }
        fields.into_iter().find_map(|field| {
            let lower = field.trim().to_lowercase();
            let named = lower.len() >= 3
                && lower.chars().all(|c| c.is_alphabetic() || c == '_')
                && words.contains(&lower)
                && !input.to_lowercase().contains(&lower);
            (named && !reads_key(&code, &lower))
                .then(|| (field.trim().to_owned(), (*input).clone()))
        })
    })
}

/// Whether (lowercase) code reads the key `key`: in quotes (`['active']`,
/// `.get("active")`) or as an attribute (`user.active`, a pandas
/// `'status.active'`); a name that holds it (`active_emails`) is not.
fn reads_key(code: &str, key: &str) -> bool {
    code.contains(&format!("'{key}'"))
        || code.contains(&format!("\"{key}\""))
        || code.match_indices(&format!(".{key}")).any(|(at, found)| {
            !code[at + found.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
        })
}

/// The keys of the objects in a JSON value, at every depth, each once
/// (the first elements of each array stand for the rest): of objects in
/// a list, and below them, only, unless `in_record` (the value is one).
fn json_keys(value: &serde_json::Value, in_record: bool, keys: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, inner) in map {
                if in_record && !keys.contains(key) {
                    keys.push(key.clone());
                }
                json_keys(inner, in_record, keys);
            }
        }
        serde_json::Value::Array(items) => {
            items.iter().take(3).for_each(|v| json_keys(v, true, keys))
        }
        _ => {}
    }
}

/// Values of the input `name` (whose text is `text`) that Python `code`,
/// which never names that file outside its comments, holds as string literals: at least three
/// of the fields or lines after its first line (a header's names are
/// code's own words), the first three. A small model given a first look
/// copies the rows shown into a literal table and works on that.
fn copied_rows(code: &str, name: &str, text: &str) -> Option<Vec<String>> {
    // A comment may name the file ("a sample with the same columns as
    // contacts.csv") in code that never reads it.
    let reads = code
        .lines()
        .any(|line| !line.trim_start().starts_with('#') && line.contains(name));
    if code.is_empty() || reads {
        return None;
    }
    let mut values: Vec<&str> = Vec::new();
    for line in text.lines().skip(1).take(200) {
        let line = line.trim();
        for value in std::iter::once(line).chain(line.split([',', ';', '\t', '|'])) {
            let value = value.trim().trim_matches('"');
            let worded = value.chars().filter(|c| c.is_alphabetic()).count() >= 3;
            if worded && !values.contains(&value) {
                values.push(value);
            }
        }
    }
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(['\'', '"']) {
        let quote = rest[at..].chars().next()?;
        let after = &rest[at + 1..];
        let Some(end) = after.find(quote) else { break };
        let literal = &after[..end];
        if values.contains(&literal) && !found.iter().any(|f: &String| f == literal) {
            found.push(literal.to_owned());
        }
        rest = &after[end + 1..];
    }
    (found.len() >= 3).then(|| {
        found.truncate(3);
        found
    })
}

/// Whether the file `other` is named after the file `name` and of its
/// kind: its name with more after it (`ext_counts_sorted.csv`,
/// `totals2.csv` for `ext_counts.csv`, `totals.csv`).
fn beside(other: &str, name: &str) -> bool {
    let (other, name) = (Path::new(other), Path::new(name));
    let stems = other
        .file_stem()
        .and_then(|s| s.to_str())
        .zip(name.file_stem().and_then(|s| s.to_str()));
    other.extension() == name.extension()
        && stems.is_some_and(|(other, name)| {
            other.strip_prefix(name).is_some_and(|more| {
                more.starts_with(|c: char| c.is_ascii_digit() || "_-. ".contains(c))
            })
        })
}

/// For pandas code that sorts and then keeps one row per key with
/// `drop_duplicates(…, keep=…)`: when the row kept is not the one the
/// task asks for (`latest`, else the earliest) given the sort's direction
/// (`keep='last'` after a descending sort keeps the oldest), that line and
/// the line keeping the other end.
fn keep_fix(code: &str, latest: bool) -> Option<(String, String)> {
    let sorts: Vec<&str> = code
        .lines()
        .filter(|line| line.contains(".sort_values(") || line.contains(".sort_index("))
        .collect();
    if sorts.is_empty() {
        return None;
    }
    let descending = sorts
        .iter()
        .any(|line| line.replace(' ', "").contains("ascending=False") || line.contains("False]"));
    let line = code
        .lines()
        .map(str::trim)
        .find(|line| line.contains(".drop_duplicates("))?;
    let keeps = |end: &str| {
        [format!("keep='{end}'"), format!("keep=\"{end}\"")]
            .into_iter()
            .find(|keep| line.contains(keep.as_str()))
    };
    let (wrong, right) = if latest == descending {
        ("last", "first")
    } else {
        ("first", "last")
    };
    let found = keeps(wrong)?;
    Some((
        line.to_owned(),
        line.replace(&found, &found.replace(wrong, right)),
    ))
}

/// Whether `text` is an email address and nothing else: a local part of
/// letters, digits and `.+-_`, `@`, and a domain of two or more parts.
fn is_email(text: &str) -> bool {
    let Some((local, domain)) = text.split_once('@') else {
        return false;
    };
    let part =
        |p: &str| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || "._+-".contains(c));
    part(local)
        && domain.split('.').count() >= 2
        && domain
            .split('.')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '-'))
}

/// Whether Python `code` writes the file `name` by a literal name.
fn writes(code: &str, name: &str) -> bool {
    written_names(code)
        .iter()
        .any(|(_, written)| written == name)
}

/// Where Python `code` turns days into years by dividing by a year's
/// length (`// 365`, `/ 365.25`): that division as written.
fn years_as_days(code: &str) -> Option<String> {
    let squeezed: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    [
        "//365.25",
        "/365.25",
        "//365.2425",
        "/365.2425",
        "//365",
        "/365",
    ]
    .iter()
    .find(|d| {
        squeezed.match_indices(**d).any(|(at, _)| {
            !squeezed[at + d.len()..].starts_with(|c: char| c.is_ascii_digit() || c == '.')
        })
    })
    .map(|d| {
        let slashes = if d.starts_with("//") { "//" } else { "/" };
        format!("{slashes} {}", &d[slashes.len()..])
    })
}

/// Whether Python `code` computes no average: no `/` outside strings and
/// comments, and no mean function (`statistics.mean`, pandas `.mean()`
/// or `'mean'`, numpy's `average`, SQL's `AVG`).
fn divides_nothing(code: &str) -> bool {
    let lower = code.to_lowercase();
    if ["mean", "average(", "avg("]
        .iter()
        .any(|f| lower.contains(f))
    {
        return false;
    }
    // A `/` in an f-string counts (`f"{total / n}"`, or a path).
    !code.lines().any(|line| {
        let (mut quote, mut f_quote, mut before) = (None, false, ' ');
        for c in line.chars() {
            match (quote, c) {
                (None, '#') => return false,
                (None, '\'' | '"') => {
                    quote = Some(c);
                    f_quote = matches!(before, 'f' | 'F');
                }
                (Some(q), _) if c == q => quote = None,
                (None, '/') => return true,
                (Some(_), '/') if f_quote => return true,
                _ => {}
            }
            before = c;
        }
        false
    })
}

/// The first f-string of a code line: where it starts (its `f`), where it
/// ends (after its closing quote), and what is between the quotes.
fn f_string(code: &str) -> Option<(usize, usize, &str)> {
    let bytes = code.as_bytes();
    let start = (0..bytes.len().saturating_sub(1)).find(|&i| {
        matches!(bytes[i], b'f' | b'F')
            && matches!(bytes[i + 1], b'"' | b'\'')
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'))
    })?;
    let quote = bytes[start + 1];
    let rest = &code[start + 2..];
    let close = rest.bytes().position(|b| b == quote)?;
    Some((start, start + 2 + close + 1, &rest[..close]))
}

/// The value a one-line answer gives in quotes or backticks, or as a
/// number after its label (`The largest file is `big.bin`.`, `The answer
/// is 4.`): what a file the task asks for should likely hold.
fn answer_value(reply: &str) -> Option<String> {
    let line = reply.trim();
    if line.contains('\n') || line.len() > 200 {
        return None;
    }
    // The one span in backticks or quotes of `text`.
    let span = |text: &'_ str| -> Option<String> {
        ['`', '"'].iter().find_map(|&q| {
            let mut parts = text.split(q);
            parts.next()?;
            let inside = parts.next()?;
            (parts.count() == 1).then(|| inside.trim().to_owned())
        })
    };
    // What follows the label: a number, or a span ("`data.csv`" before the
    // label is not the answer); a span the label's end fell inside
    // (`"Fix: the parser"`) counts whole.
    let after = split_label(line).map_or(line, |(_, value)| value);
    let number = after.trim().trim_end_matches('.');
    let value = if number.parse::<f64>().is_ok() {
        number.to_owned()
    } else if let Some(inside) = span(after) {
        inside
    } else {
        let inside = span(line)?;
        let label = &line[..line.len() - after.len()];
        if label.contains(&inside) && !after.contains(&inside) {
            return None;
        }
        inside
    };
    (!value.is_empty() && value.len() <= 80).then_some(value)
}

/// A line cut where its label ends: at its last `:` or `=`, or its last
/// ` is `, ` are `, ` was ` or ` equals ` (a sentence around a value).
fn split_label(line: &str) -> Option<(&str, &str)> {
    // A `:` between digits is in a time or a ratio (`00:30:02`), no label's.
    let in_number = |at: usize, sep: &str| {
        sep == ":"
            && line[..at].ends_with(|c: char| c.is_ascii_digit())
            && line[at + 1..].starts_with(|c: char| c.is_ascii_digit())
    };
    [":", "=", " is ", " are ", " was ", " equals "]
        .iter()
        .filter_map(|sep| {
            line.rmatch_indices(sep)
                .find(|&(at, _)| !in_number(at, sep))
                .map(|(at, _)| (at, at + sep.len()))
        })
        .max_by_key(|&(_, end)| end)
        .map(|(at, end)| (&line[..at], &line[end..]))
}

/// What is wrong with the text of a result file `name`: a number column
/// holding text, a string's letters joined, one entry written twice,
/// values of an input column (`inputs`: name and text) lost, a first line
/// other than the header the task gives, lines of several values where
/// it asks for one per line (`asked`). Named as the result is shown, and
/// again before the task ends.
fn content_problems(
    name: &str,
    text: &str,
    inputs: &[(&String, &String)],
    asked: &Asked,
    python: &str,
) -> Vec<String> {
    let mut problems = Vec::new();
    // Lines that fix the file as it is, for a problem (by its index): told
    // only when every problem has them. Beside other problems, a small
    // model puts them in place of the code that writes the file, and the
    // others stay.
    let mut as_is: Vec<(usize, String)> = Vec::new();
    // A list of a Markdown input's headings with a line that only looks
    // like one (a shell comment inside a ``` block).
    if let Some(problem) = inputs
        .iter()
        .find_map(|(input, body)| super::markdown::look_alike_listed(text, input, body))
    {
        problems.push(format!("in `{name}`, {problem}"));
    }
    if asked.one_per_line
        && let Some(line) = several_per_line(text)
    {
        let fix = one_value_call(name, &line, inputs, python)
            .map(|(_, call)| format!(" (in your code, write only that column: `{call}`)"))
            .unwrap_or_default();
        problems.push(format!(
            "each line of `{name}` holds more than one value (`{line}`) where the task asks for one per line{fix}"
        ));
    }
    if asked.one_per_line
        && let Some(row) = whole_row(text, inputs, &asked.task)
    {
        problems.push(format!(
            "the line `{line}` of `{name}` is a whole row of `{input}`, where the task asks for its `{column}` values, one per line: write only that cell of each row ({take})",
            line = row.line,
            input = row.input,
            column = row.column,
            take = row.take,
        ));
    }
    if asked.one_per_line
        && !doubled_breaks(text)
        && let Some(at) = blank_among(text)
    {
        let file = table::python_string(name);
        problems.push(format!(
            "line {at} of `{name}` is blank, among its values, where the task asks for one per line: leave out empty values (`if value.strip()`) before writing"
        ));
        as_is.push((
            problems.len() - 1,
            format!(
                ", or fix the file as it is: `lines = [l for l in open({file}).read().splitlines() if l.strip()]`, then `open({file}, 'w').write('\\n'.join(lines) + '\\n')`"
            ),
        ));
    }
    if let Some((at, value)) = not_a_number(text, &asked.task, inputs) {
        problems.push(format!(
            "line {at} of `{name}` holds `{value}`, which is no value: pandas and Python write it for one they could not compute (a missing or unread input, the first row of a `shift` or `diff`, 0 divided by 0). Compute what the task asks from the rows that have it, or leave such rows out (`dropna()`)"
        ));
    }
    let lower = name.to_ascii_lowercase();
    let json = lower.ends_with(".json");
    let tabular = lower.ends_with(".csv") || lower.ends_with(".tsv");
    // A table's rows are read by their cells: only a form with its
    // separator is a form of its lines.
    let forms: Vec<&LineForm> = asked
        .line_forms
        .iter()
        .filter(|form| !json && (!tabular || form.text.contains([',', '\t', ';'])))
        .collect();
    if let Some((at, line, off)) = line_out_of_form(text, &forms, asked.header.as_deref()) {
        let forms = forms
            .iter()
            .map(|form| format!("`{}`", form.text))
            .collect::<Vec<_>>()
            .join(" or ");
        let more = match off {
            1 => String::new(),
            2 => " (and 1 more line)".to_owned(),
            n => format!(" (and {} more lines)", n - 1),
        };
        let line = first_lines(line, 1, 100).concat();
        problems.push(format!(
            "line {at} of `{name}` is `{line}`{more}, not in the form the task gives its lines, {forms} (each word there stands for a value; the signs and spaces around it are written as they are): write every line in that form"
        ));
    }
    if asked.lower_case
        && let Some(word) = capitalized(text, asked)
    {
        problems.push(format!(
            "`{name}` has `{word}` where the task asks for lower case: lower each value before writing it (`value.lower()`; pandas: `df[column].str.lower()`)"
        ));
    }
    if !asked.each.is_empty()
        && let Some((column, value, rows, key)) = table::same_in_every_row(text)
    {
        let per = key_word(&asked.each, python).unwrap_or(&asked.each[0]);
        let how = match whole_column_total(python, &column, key.as_deref(), &asked.each) {
            Some((code, fixed)) => format!("in your code, `{code}` becomes `{fixed}`"),
            None => format!(
                "compute it for each {per} (pandas: `df.groupby(key, as_index=False)['amount'].sum()`, with your columns)"
            ),
        };
        problems.push(format!(
            "the `{column}` column of `{name}` is `{value}` in all {rows} rows, where the task asks for a value for each {per}: one number for the whole column (`df['amount'].sum()`) was put in every row; {how}"
        ));
    }
    let tables: Vec<&str> = inputs.iter().map(|(_, text)| text.as_str()).collect();
    if let Some((column, rows)) = table::zero_column(text, &tables) {
        let why = match self_subtraction(python) {
            Some((line, term)) => format!(
                "`{line}` takes `{term}` from itself, which is always 0: one of the two should be another value (a date or number the task gives, or another column)"
            ),
            None => "unless that is the real answer, the code computed nothing there; print the values it is computed from".to_owned(),
        };
        problems.push(format!(
            "the `{column}` column of `{name}` is 0 in all {rows} rows: {why}"
        ));
    }
    if let Some((value, column)) = kept_left_out(text, &asked.left_out) {
        let values = asked
            .left_out
            .iter()
            .map(|v| table::python_string(v))
            .collect::<Vec<_>>()
            .join(", ");
        let (place, how) = match column {
            Some(column) => {
                let col = table::python_string(&column);
                (
                    format!(" in its `{column}` column"),
                    format!(
                        "leave those rows out before writing (pandas: `df = df[~df[{col}].astype(str).str.strip().isin([{values}])]`; Python: `if row[{col}].strip() in ({values},): continue`)"
                    ),
                )
            }
            None => (
                String::new(),
                format!("leave those lines out (`if line.strip() not in ({values},)`)"),
            ),
        };
        problems.push(format!(
            "`{name}` still holds `{value}`{place}, a value the task says to leave out: {how}"
        ));
    }
    if let Some((python_word, asked_word)) = python_literal(text, &asked.lower_literals) {
        let file = table::python_string(name);
        let subs = asked
            .lower_literals
            .iter()
            .fold(format!("open({file}).read()"), |inner, (python, lower)| {
                format!("re.sub(r'\\b{python}\\b', '{lower}', {inner})")
            });
        problems.push(format!(
            "`{name}` has `{python_word}` where the task writes `{asked_word}`: Python prints its {what} capitalized; write {how}",
            what = if python_word == "None" { "`None`" } else { "booleans" },
            how = if python_word == "None" {
                "`'null' if value is None else value`, or the value through `json.dumps(value)`"
            } else {
                "`str(value).lower()` for a bool, or the value through `json.dumps(value)`"
            }
        ));
        as_is.push((
            problems.len() - 1,
            format!(
                ", or fix the file as it is: `import re`, `text = {subs}`, then `open({file}, 'w').write(text)`"
            ),
        ));
    }
    if asked.order.is_none()
        && let Some(word) = asked.sorted_by.as_deref()
        && let Some((column, first, second)) = table::column_out_of_order(text, word)
    {
        problems.push(format!(
            "the rows of `{name}` are not sorted by `{column}` (`{first}` comes before `{second}`), which the task asks: sort them before writing (pandas: `.sort_values({})`; Python: `sorted(rows, key=…)` on that value)",
            table::python_string(&column)
        ));
    }
    if tabular
        && let [header] = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .collect::<Vec<_>>()[..]
        && header.contains([',', '\t', ';'])
    {
        problems.push(format!(
            "`{name}` holds its header (`{header}`) and no rows: the code's table came out empty, so a filter or a merge in it matched nothing (values written differently in the two tables, compared before they are made alike, or the wrong columns compared); print the table before that step to see its values"
        ));
    }
    if let Some(column) = table::merge_suffixes(text) {
        problems.push(format!(
            "`{name}` has the columns `{column}_x` and `{column}_y`: pandas' `merge` kept each table's `{column}` with a suffix. Tables that hold the same kind of rows are stacked, not merged: `pd.concat([first, second])` (then `drop_duplicates`); else keep one column of each name"
        ));
    }
    if asked.each_once
        && let Some((column, a, b)) = table::folded_twins_in_column(text)
    {
        problems.push(format!(
            "the `{column}` column of `{name}` holds `{a}` and `{b}`, one value in other case or spacing, where the task asks for each once: compare them normalised (pandas: a key `df[{col}].str.strip().str.lower()`, then `df[~key.duplicated()]`; plain Python: `value.strip().lower()`)",
            col = table::python_string(&column)
        ));
    }
    let doubled = doubled_lines(text);
    if let Some((line, at)) = &doubled {
        problems.push(format!(
            "`{name}` holds its lines twice (`{line}` again at line {at}): code that opens it with `'a'` appends to what an earlier run wrote; open it with `'w'` once and write every line"
        ));
    }
    if asked.each_once
        && doubled.is_none()
        && let Some((line, first, again, spaced)) = repeated_line(text)
    {
        let strip = if spaced {
            " (the two differ only in spaces around them: strip each value before comparing)"
        } else {
            ""
        };
        let how = match once_fix(python, spaced) {
            Some((code, fixed)) => format!("in your code, `{code}` becomes `{fixed}`"),
            None => "Python: `list(dict.fromkeys(values))` keeps the first of each in order, `sorted(set(values))` when the list is sorted anyway; pandas: `.drop_duplicates()`".to_owned(),
        };
        problems.push(format!(
            "`{name}` has `{line}` twice (lines {first} and {again}){strip} where the task asks for each once: keep one of each ({how})"
        ));
    }
    if asked.same_columns
        && let Some(lost) = columns_left_out(text, inputs)
    {
        let file = table::python_string(name);
        problems.push(format!(
            "`{name}` has only {kept} of the columns of `{input}`, where the task keeps its columns: `{missing}` {are} missing. Change the values in the table and write the whole table (pandas: `df[{column}] = …`, then `df.to_csv({file}, index=False)`; not `df[{column}].to_csv(…)`)",
            kept = lost
                .kept
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", "),
            input = lost.input,
            missing = lost.missing.join("`, `"),
            are = if lost.missing.len() == 1 { "is" } else { "are" },
            column = table::python_string(&lost.kept[0]),
        ));
    }
    if name.to_ascii_lowercase().ends_with(".csv")
        && let Some((line, row, cells, width)) = table::ragged_row(text)
    {
        problems.push(format!(
            "line {line} of `{name}` (`{row}`) has {cells} cell{} where its header has {width}: every row of a CSV file has the header's columns (a second table written under the first, or a value holding a comma written without quotes: write rows with `csv.writer`)",
            if cells == 1 { "" } else { "s" }
        ));
    }
    if let Some(places) = asked.decimals
        && let Some(number) = other_decimals(text, places)
            .or_else(|| table::mixed_decimals(text, places).map(|(_, number)| number))
    {
        problems.push(format!(
            "`{name}` writes `{number}` where the task asks for {places} decimal{}: format each number with `f'{{value:.{places}f}}'` (pandas: `to_csv(…, float_format='%.{places}f')`)",
            if places == 1 { "" } else { "s" }
        ));
    }
    if asked.counts
        && let Some((column, cell)) = table::joined_column(text)
    {
        problems.push(format!(
            "the `{column}` column of `{name}` lists the values themselves (`{cell}`) where the task asks how many there are: write the count (`len(values)`, of a set for distinct ones)"
        ));
    }
    if asked.tab_separated
        && !name.ends_with(".csv")
        && let Some(line) = text.lines().map(str::trim).find(|l| !l.is_empty())
        && !line.contains('\t')
    {
        problems.push(format!(
            "`{name}` has no tab between its values (`{line}`), which the task asks: write them with `\\t` between (`f'{{a}}\\t{{b}}'`, or `'\\t'.join(values)`)"
        ));
    }
    if asked.iso_dates
        && let Some(date) = other_date(text)
    {
        problems.push(format!(
            "`{name}` writes a date as `{date}` where the task asks for YYYY-MM-DD (like `2024-03-09`): read each date with `datetime.strptime(value, format)` in the format it is written in (`from datetime import datetime`), and write `.strftime('%Y-%m-%d')`"
        ));
    }
    if asked.iso_months
        && let Some(date) = day_for_month(text)
    {
        problems.push(format!(
            "`{name}` writes `{date}` where the task asks for a month as YYYY-MM (like `2024-03`): take the month of each date, its first 7 characters (pandas: `df['month'] = df['date'].str[:7]` on the text column; Python: `value[:7]`), and group or write by that"
        ));
    }
    if asked.leaves_hidden
        && let Some((line, folder)) = hidden_path(text)
    {
        problems.push(format!(
            "`{name}` names `{line}`, which is in the hidden folder `{folder}` that the task leaves out: skip paths with a part starting with `.` (`find . -path '*/.*' -prune -o -type f …`; Python: `dirs[:] = [d for d in dirs if not d.startswith('.')]` in `os.walk`)"
        ));
    }
    if doubled_breaks(text) {
        problems.push(format!(
            "every line of `{name}` is followed by a blank line: each value was written with the line break it was read with, and a second one added (strip each value, `value.strip()`, before writing it)"
        ));
    }
    if asked.alphabetical
        && let Some((first, second)) = unsorted_lines(text)
    {
        let file = table::python_string(name);
        problems.push(format!(
            "the lines of `{name}` are not in alphabetical order (`{first}` comes before `{second}`), which the task asks: sort them before writing (`sorted(…)`)"
        ));
        as_is.push((
            problems.len() - 1,
            format!(
                ", or sort the file as it is: `lines = sorted(l for l in open({file}).read().splitlines() if l.strip())`, then `open({file}, 'w').write('\\n'.join(lines) + '\\n')`"
            ),
        ));
    }
    let header_line = if asked.one_per_line && asked.header.is_none() {
        column_name_line(text, inputs)
    } else {
        None
    };
    if let Some((first, input)) = &header_line {
        let fix = header_off_call(name, python)
            .map(|(_, call)| format!(" (in your code, `{call}`)"))
            .unwrap_or_default();
        problems.push(format!(
            "the first line of `{name}` is `{first}`, the name of a column of `{input}`, not one of the values the task asks for: write the values without a header line{fix}"
        ));
    }
    // Lines of several values each are one fault, not lines unlike others.
    if asked.one_per_line
        && header_line.is_none()
        && several_per_line(text).is_none()
        && let Some((odd, like)) = odd_line(text)
    {
        // Where it came from: the input line that holds it, which the
        // model's pattern matched by mistake.
        let source = inputs
            .iter()
            .find_map(|(input, body)| {
                body.lines()
                    .map(str::trim)
                    .find(|line| line.split_whitespace().any(|word| word == odd))
                    .map(|line| format!(" (it comes from this line of `{input}`: `{line}`)"))
            })
            .unwrap_or_default();
        problems.push(format!(
            "the line `{odd}` of `{name}` is not like its other lines (`{like}`){source}: check what your code matched"
        ));
    }
    if let Some((line, value)) = asked
        .example
        .as_deref()
        .and_then(|example| beside_example(text, example).map(|found| (example, found)))
        .map(|(example, (line, value))| {
            (
                format!("{line}` where the task's example is `{example}"),
                value,
            )
        })
    {
        problems.push(format!(
            "`{name}` holds `{line}`: write the value alone in that form (`{value}`, as `{}` writes it)",
            write_only(name, &value)
        ));
    }
    if let Some(example) = &asked.dotted_example
        && let Some(first) = undotted_paths(text, example, inputs)
    {
        problems.push(format!(
            "no line of `{name}` has a dot (`{first}`) where the task's example `{example}` is a dotted path: a key inside a nested object is written with the keys above it, joined by `.`; walk each document down to its leaves (`def leaves(d, path=''):` then, for each `k, v` in `d.items()`, `p = f'{{path}}.{{k}}' if path else k`, `yield from leaves(v, p)` when `v` is a dict, else `yield p`)"
        ));
    }
    if asked.picks
        && let Some((folder, count)) = names_every_file(text, &asked.picked_from)
    {
        problems.push(format!(
            "`{name}` names every one of the {count} files in `{folder}`, where the task asks only for some of them: the test your code picks them by passes for all of them (check what it compares)"
        ));
    }
    if asked.no_punctuation
        && let Some(word) = punctuated_word(text)
    {
        problems.push(format!(
            "`{name}` has `{word}`, a word with punctuation still on it, where the task says to leave punctuation out: {WORDS_ALONE}"
        ));
    }
    let wrote = writes(python, name);
    // A table written here but made by an earlier run (the kernel keeps
    // it): this code shows nothing of how it was computed.
    let made_earlier = to_csv_line(name, python).is_some_and(|(_, table)| {
        !python.lines().any(|line| {
            line.trim_start().strip_prefix(table).is_some_and(|rest| {
                rest.trim_start().starts_with('=') && !rest.trim_start().starts_with("==")
            })
        })
    });
    if asked.average && wrote && !made_earlier && divides_nothing(python) {
        problems.push(format!(
            "the task asks for an average, but the code that wrote `{name}` divides nothing (no `/`, no `mean`): it added values up; an average is their sum divided by their count (per key: count each one too, `counts[key] += 1`, then `totals[key] / counts[key]`)"
        ));
    }
    if wrote
        && asked.words.iter().any(|w| w == "age" || w == "ages")
        && let Some(days) = years_as_days(python)
    {
        problems.push(format!(
            "the code that wrote `{name}` counts years as days (`{days}`), which drifts a day every leap year, so an age comes out a year too high in the days before a birthday. Count whole years from the dates' parts: `ref.year - born.year - ((ref.month, ref.day) < (born.month, born.day))` (pandas, for a column `b`: `ref.year - df[b].dt.year - ((df[b].dt.month > ref.month) | ((df[b].dt.month == ref.month) & (df[b].dt.day > ref.day)))`)"
        ));
    }
    if wrote && let Some((field, input)) = unread_field(&asked.words, inputs, name, python) {
        problems.push(format!(
            "the task speaks of `{field}`, a field of `{input}`, which the code that wrote `{name}` never reads: if the task means that field (which rows to keep, or what to sort or group by), use it"
        ));
    }
    if wrote && let Some((value, line)) = super::script::unread_in_loop(python) {
        problems.push(format!(
            "the code that wrote `{name}` sets `{value}` at each step of its loop (`{line}`) and never reads it: if the task depends on that value (which rows to count, keep or pair), use it"
        ));
    }
    if let Some(latest) = asked.latest
        && let Some((input, (key, value, date, kept, best))) = inputs
            .iter()
            .find_map(|(input, body)| table::not_latest(text, body, latest).map(|n| (input, n)))
    {
        let (other, which, keep) = if latest {
            ("a later", "latest", "last")
        } else {
            ("an earlier", "earliest", "first")
        };
        let how = match keep_fix(python, latest) {
            Some((code, fixed)) => format!("in your code, `{code}` becomes `{fixed}`"),
            None => format!(
                "sort by `{date}` and keep the {keep} of each (`df.sort_values('{date}').drop_duplicates('{key}', keep='{keep}')`)"
            ),
        };
        problems.push(format!(
            "`{name}` keeps the row of `{key}` {value} with `{date}` {kept}, but `{input}` has {other} one ({best}) and the task asks for the {which}: {how}"
        ));
    }
    if asked.ties_alphabetical
        && let Some((input, [key, value, text_column, kept, first, number, n])) = inputs
            .iter()
            .find_map(|(input, body)| table::tie_not_first(text, body).map(|tie| (input, tie)))
    {
        // A task that also sorts the result by the key: the chain ends
        // with that sort, or the model keeps one of its two sorts only.
        let (then, sorted) = if asked
            .sorted_by
            .as_deref()
            .is_some_and(|word| word.eq_ignore_ascii_case(&key))
        {
            (
                format!(".sort_values('{key}')"),
                format!(", then sorted by `{key}` as the task asks, in place of your sorts"),
            )
        } else {
            (String::new(), String::new())
        };
        problems.push(format!(
            "`{name}` keeps `{kept}` for `{key}` {value}, but `{input}` has `{first}` there with the same `{number}` ({n}), and the task breaks ties alphabetically: sort by `{number}` (the way the task picks) and then by `{text_column}` A to Z before keeping one row per `{key}` (pandas: `.sort_values(['{number}', '{text_column}'], ascending=[False, True]).drop_duplicates('{key}'){then}` for the highest{sorted})"
        ));
    }
    if asked.every_key
        && let Some((key, input)) = missing_key(text, inputs)
    {
        problems.push(format!(
            "`{name}` lacks `{key}`, which `{input}` sets, where the task asks for every key: read the lines of each file the same way, in one loop over all of them"
        ));
    }
    if let Some((key, first, second)) = repeated_key(text) {
        let how = match key_value_fix(python) {
            Some((code, fixed)) => format!("in your code, `{code}` becomes `{fixed}`"),
            None => "read it as `key = key.replace('export ', '').strip()`".to_owned(),
        };
        problems.push(format!(
            "`{name}` sets `{key}` on two lines (`{first}` and `{second}`): one line per key, with the value that wins (a key read with spaces around `=` or `export ` before it is the same key: {how})"
        ));
    }
    let count = asks_count_alone(&asked.task, name);
    // "… as a number rounded to 2 decimals" to a text file: one value.
    let each = asked
        .words
        .iter()
        .any(|w| matches!(w.as_str(), "each" | "every" | "per"));
    let one_number = !(tabular || json || each || asked.one_per_line)
        && [
            "as a number",
            "as a single number",
            "as one number",
            "a single value",
        ]
        .iter()
        .any(|phrase| asked.task.contains(phrase));
    if asked.single || one_number || count.is_some() {
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        if let [first, ..] = lines[..]
            && lines.len() > 1
        {
            // A list written where its length is asked: the count, with
            // the code that makes it.
            let what = if matches!(count, Some("number" | "count")) {
                let distinct = ["distinct", "unique", "different"]
                    .iter()
                    .any(|w| asked.task.contains(w));
                if distinct {
                    "how many there are, not the list: write that one number (`len(set(values))` for the distinct values of a list; pandas: `df[column].nunique()`)"
                } else {
                    "how many there are, not the list: write that one number (`len(values)`; pandas: `len(df)`)"
                }
            } else {
                "one value alone: write only that value"
            };
            problems.push(format!(
                "`{name}` has {} lines (the first is `{first}`) where the task asks for {what}",
                lines.len()
            ));
        }
    }
    if asked.emails
        && let Some(line) = text
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty() && !is_email(line))
    {
        problems.push(format!(
            "`{name}` has a line that is not an email address alone (`{line}`): match the addresses themselves, not the words around them (`re.findall(r'[\\w.+-]+@[\\w-]+(?:\\.[\\w-]+)+', text)`)"
        ));
    }
    for without in &asked.without {
        if let Some(line) = text.lines().map(str::trim).find(|line| without.found(line)) {
            problems.push(format!("`{name}` {}", without.note(line)));
        }
    }
    // Numbers one per line not in the order the task asks.
    if let Some((order, words)) = asked.order
        && let Some((first, second, as_text)) = numbers_out_of_order(text, order)
    {
        let reverse = if order == table::Order::Descending {
            ", reverse=True"
        } else {
            ""
        };
        let how = if as_text {
            "they were sorted as text, not as numbers: sort the numbers"
        } else {
            "sort them"
        };
        problems.push(format!(
            "the lines of `{name}` are not in the order the task asks (\"{words}\"): `{first}` comes before `{second}`; {how} (`sorted(values, key=float{reverse})`) before writing"
        ));
    }
    // Rows not in the order the task asks: no number column goes that way.
    if let Some((order, words)) = asked.order {
        let columns = table::number_column_orders(text);
        if columns.iter().all(|(_, o)| *o != order)
            && let Some((column, found)) = columns.last()
        {
            let found = match found {
                table::Order::Ascending => "ascending order",
                table::Order::Descending => "descending order",
                table::Order::None => "no order",
            };
            let ascending = if order == table::Order::Descending {
                "False"
            } else {
                "True"
            };
            problems.push(format!(
                "the rows of `{name}` are not in the order the task asks (\"{words}\"): its `{column}` column is in {found} (pandas: `.sort_values('{column}', ascending={ascending})` before writing)"
            ));
        } else if asked.ties_alphabetical
            && let Some((column, (text_column, first, second))) = columns
                .iter()
                .filter(|(_, o)| *o == order)
                .find_map(|(column, _)| {
                    table::ties_out_of_order(text, column).map(|tie| (column, tie))
                })
        {
            let (ascending, minus) = if order == table::Order::Descending {
                ("False", "-")
            } else {
                ("True", "")
            };
            problems.push(format!(
                "rows of `{name}` with the same `{column}` are not in alphabetical order of `{text_column}` (`{first}` before `{second}`), which the task asks for ties: sort by both (pandas: `.sort_values(['{column}', '{text_column}'], ascending=[{ascending}, True])`; Python: `sorted(rows, key=lambda row: ({minus}row[1], row[0]))` for rows of (text, number))"
            ));
        }
    }
    // The rows under a header counted where the task counts lines.
    if asked.counts_lines
        && let Ok(count) = text.trim().parse::<usize>()
        && let Some((input, lines)) = inputs.iter().find_map(|(input, body)| {
            let lines = body.lines().count();
            (lines == count + 1 && table::columns(body).is_some()).then_some((input, lines))
        })
    {
        problems.push(format!(
            "`{name}` holds {count}, the rows under `{input}`'s header, where the task counts its lines: it has {lines} lines with the header (`len(open('{input}').readlines())`)"
        ));
    }
    if let Some(asked) = asked.header.as_deref() {
        let first = text
            .trim_start_matches('\u{feff}')
            .lines()
            .next()
            .unwrap_or("");
        if header_fields(first) != header_fields(asked) {
            problems.push(format!(
                "`{name}` begins with `{}` where the task asks for the header `{asked}`{}",
                first.trim(),
                header_fix(
                    name,
                    &header_fields(first),
                    &header_fields(asked),
                    python,
                    text
                )
            ));
        }
    }
    // A column as empty in an input the task names was copied so.
    let empty_before: Vec<String> = inputs
        .iter()
        .flat_map(|(_, input)| table::empty_columns(input))
        .map(|(column, _)| column.to_lowercase())
        .collect();
    for (column, rows) in table::empty_columns(text) {
        if empty_before.contains(&column.to_lowercase()) {
            continue;
        }
        let grouped = python.lines().any(|line| {
            line.contains(".groupby(")
                && line
                    .split_once('=')
                    .is_some_and(|(target, _)| target.contains(&format!("['{column}']")))
        });
        let why = if grouped {
            format!(
                ": a grouped result assigned back as a column (`…['{column}'] = ….groupby(…)…`) lines up with no row; make the result table from the grouping itself (`table = df.groupby('name', as_index=False)['amount'].sum()`, with your columns) and write that"
            )
        } else {
            ": the code that fills it gave nothing for these rows".to_owned()
        };
        problems.push(format!(
            "the `{column}` column of `{name}` is empty in all {rows} rows{why}"
        ));
    }
    for (column, value) in table::text_in_number_columns(text) {
        // `$1.20$3.40`, `35.2012.80`: text values added up, which joins
        // them; cleaning the joined text cannot undo that.
        let joined = if table::joined_numbers(&value) {
            ": text values were added up, which joins them, so convert the input column to numbers before adding"
        } else {
            ""
        };
        problems.push(format!(
            "the `{column}` column of `{name}` holds text where a number belongs (`{value}`){joined}"
        ));
    }
    if let Some(line) = spelled_out(text) {
        problems.push(format!(
            "`{name}` has lines of single characters spaced out (`{line}`): the code joined the letters of a string (`' '.join(text)` joins characters), where it meant words"
        ));
    }
    if let Some((first, other)) = folded_twins(text) {
        let (differ, fix) = twins_differ(&first, &other, inputs);
        problems.push(format!(
            "`{name}` has lines that differ only in {differ} (`{first}` and `{other}`), likely one entry written twice: {fix}"
        ));
    }
    // One row per key: asked, a pick per key, or a sum, count or average
    // per key where the other columns hold only numbers (not a listing:
    // "for each order, its items").
    let repeated = asked.each.iter().find_map(|word| {
        let found = table::repeated_group(text, word)?;
        let one = asked.picks_one || asked.task.contains(&format!("one row per {word}"));
        let reduced = !one && asked.reduces() && table::numbers_besides(text, &found.0);
        (one || reduced).then_some((found, reduced))
    });
    if let Some(((column, value, rows), reduced)) = repeated {
        let key = table::python_string(&column);
        let fix = if reduced {
            let how = if asked.average {
                "mean"
            } else if asked.counts && !asked.sums {
                "size"
            } else {
                "sum"
            };
            format!(
                "the rows were not grouped by it; make the `{column}` value of each input row first (a month from a date: `df['date'].str[:7]`), then reduce each group to one row (pandas: `df.groupby({key}, as_index=False)[value_column].{how}()`)"
            )
        } else {
            format!(
                "keep one per {column} (pandas: sort so that the row to keep comes first, with the task's tie rule as a second sort key, then `.drop_duplicates({key})`)"
            )
        };
        problems.push(format!(
            "the `{column}` column of `{name}` holds `{value}` on {rows} rows where the task asks for one row for each {column}: {fix}"
        ));
    }
    if let Some(word) = asked
        .each
        .iter()
        .find(|word| asked.task.contains(&format!("one row per {word}")))
        && let Some((row, rows)) = table::repeated_row(text)
    {
        problems.push(format!(
            "`{name}` has the row `{row}` {rows} times where the task asks for one row per {word}: the rows were not reduced to one per {word} (pandas: group them, `df.groupby(key, as_index=False)[value].sum()`, or keep one of each after a `transform`, `.drop_duplicates()`)"
        ));
    }
    for &(input, seen) in inputs {
        let missing = asked
            .each
            .iter()
            .find_map(|word| table::groups_missing(text, seen, word));
        if let Some((column, now, before)) = missing {
            let listed = |values: &[String]| {
                values
                    .iter()
                    .take(6)
                    .map(|v| format!("`{v}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            problems.push(format!(
                "the `{column}` column of `{name}` has {} value{} ({}) where `{input}` has {} ({}), and the task asks for each: write one row per `{column}` (pandas: `groupby({})`, with the column normalised first when its values differ in case)",
                now.len(),
                if now.len() == 1 { "" } else { "s" },
                listed(&now),
                before.len(),
                listed(&before),
                table::python_string(&column)
            ));
        }
        for (column, now, rows, before) in table::lost_values(text, seen) {
            problems.push(format!(
                "the `{column}` column of `{name}` misses {now} of its {rows} values where `{input}` misses {before}: the code dropped values it could not read (as `errors='coerce'` does), so convert each of them instead"
            ));
        }
    }
    if let Some(one) = super::one_input::from_one_input(text, inputs) {
        problems.push(format!(
            "the `{}` values of `{name}` are those of `{}` alone, and {} hold others it lacks ({}): the code kept only one file's rows (a variable set again for each file, written after the loop); gather the rows of every file in one list, then write them all",
            one.column,
            one.used,
            backticked(&one.others),
            backticked(&one.lacking)
        ));
    }
    if as_is.len() == problems.len() {
        for (at, lines) in as_is {
            problems[at].push_str(&lines);
        }
    }
    problems
}

/// How to take words without their punctuation.
const WORDS_ALONE: &str = "take the words with `re.findall(r\"[A-Za-z0-9']+\", line)` (`import re`) instead of splitting the line at spaces";

/// Something a task says its result's values go without.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Without {
    /// Quotes around values.
    Quotes,
    /// The query string of a path or URL (`/api/search?q=x`).
    Query,
    /// The dot before an extension (`.py`).
    Dot,
    /// The folder before a file's name (`docs/intro.txt`): "just the file
    /// names, not the folder".
    Folder,
}

impl Without {
    /// What the (lowercase) task says values go without.
    fn asked(lower: &str) -> Vec<Self> {
        let mut found = Vec::new();
        for clause in lower.split("without ").skip(1) {
            let clause = clause.split(['.', ';', '(']).next().unwrap_or_default();
            // Not "path" for a folder: a web path (`/api/search`) is none.
            for (word, without) in [
                ("quote", Self::Quotes),
                ("query", Self::Query),
                ("dot", Self::Dot),
                ("folder", Self::Folder),
                ("directory", Self::Folder),
            ] {
                if clause.contains(word) && !found.contains(&without) {
                    found.push(without);
                }
            }
        }
        // "Not the folder", "just the file names".
        let folder = [
            "not the folder",
            "not the directory",
            "not their folder",
            "just the file name",
            "only the file name",
            "just the name of the file",
            "file names only",
            "file names alone",
            "base name",
            "basename",
        ]
        .iter()
        .any(|phrase| lower.contains(phrase));
        if folder && !found.contains(&Self::Folder) {
            found.push(Self::Folder);
        }
        found
    }

    /// Whether a (trimmed) result line has what the task leaves out.
    fn found(self, line: &str) -> bool {
        match self {
            Self::Quotes => line.contains(['"', '\'']),
            Self::Query => line
                .split_once('?')
                .is_some_and(|(_, query)| query.contains('=')),
            Self::Dot => line.split([',', ';', '\t']).any(|field| {
                let field = field.trim();
                field.len() > 1
                    && field.starts_with('.')
                    && field[1..].chars().all(|c| c.is_ascii_alphanumeric())
            }),
            Self::Folder => {
                !line.contains("://")
                    && line.split([',', '\t']).any(|field| {
                        field
                            .trim()
                            .rsplit_once(['/', '\\'])
                            .is_some_and(|(folder, file)| !folder.is_empty() && !file.is_empty())
                    })
            }
        }
    }

    /// What to say of the result line `line` that has it.
    fn note(self, line: &str) -> String {
        match self {
            Self::Quotes => format!(
                "has quotes in it (`{line}`) where the task says without quotes: strip them from each value as you read it (`value = value.strip().strip('\"')`)"
            ),
            Self::Query => format!(
                "has a query string in it (`{line}`) where the task says without it: cut it off where you read the path (`path = path.split('?')[0]`)"
            ),
            Self::Dot => format!(
                "has a dot before a value (`{line}`) where the task says without the dot: drop it (`ext = ext.lstrip('.')`)"
            ),
            Self::Folder => format!(
                "has a folder before a file's name (`{line}`) where the task asks for the names alone, without the folder: write only the last part of each path (Python: `os.path.basename(path)`; shell: `find … -printf '%f\\n'`, or `basename` on each)"
            ),
        }
    }
}

/// What the task asks of the result file `name`, one of `expected` (the
/// files it names that do not exist yet): the whole task says it when it
/// names one such file; else the sentence naming `name` does, when it
/// names no other ("First, save … to passed.csv with the columns
/// name,score. Then write the average to average.txt.").
fn asked_of(task: &str, name: &str, expected: &[String]) -> Asked {
    Asked {
        task: task.to_lowercase(),
        ..asked_by_sentence(task, name, expected)
    }
}

/// What the sentence of `task` naming `name` asks of it (see
/// [`asked_of`]).
fn asked_by_sentence(task: &str, name: &str, expected: &[String]) -> Asked {
    if expected.len() == 1 {
        return Asked::of(task);
    }
    let Some((before, after)) = sentence_of(task, name) else {
        return Asked::default();
    };
    let sentence = format!("{before}{after}");
    let others = expected
        .iter()
        .any(|other| other != name && named_files(&sentence).contains(other));
    if others {
        Asked::default()
    } else {
        Asked::of(&sentence)
    }
}

/// Whether every line of `code` that is `line` (trimmed) is in the body
/// of a loop ([`super::splice::opens_loop`]): a line above it, less indented, opens one
/// before any other less indented line does.
fn in_loop(code: &str, line: &str) -> bool {
    let lines: Vec<&str> = code.lines().collect();
    let at: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].trim() == line)
        .collect();
    !at.is_empty()
        && at.iter().all(|&i| {
            let mut depth = super::splice::indent(lines[i]).len();
            lines[..i].iter().rev().any(|above| {
                let trimmed = above.trim_start();
                let own = above.len() - trimmed.len();
                if trimmed.is_empty() || trimmed.starts_with('#') || own >= depth {
                    return false;
                }
                depth = own;
                super::splice::opens_loop(trimmed)
            })
        })
}

/// `text` with each line that is `code` (trimmed) replaced by `fixed`, at
/// its indentation (each of its lines).
fn with_line(text: &str, code: &str, fixed: &str) -> String {
    let mut changed: Vec<String> = text
        .lines()
        .map(|l| {
            if l.trim() == code {
                let indent = super::splice::indent(l);
                fixed
                    .lines()
                    .map(|f| format!("{indent}{f}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            } else {
                l.to_owned()
            }
        })
        .collect();
    if text.ends_with('\n') {
        changed.push(String::new());
    }
    changed.join("\n")
}

/// How much of a result file a line fix reads to judge it, and to tell
/// whether it changed since.
const FIX_HEAD: u64 = 4096;

/// A line of the model's code a note said how to change.
#[derive(Debug)]
struct KnownFix {
    /// The line as the model wrote it (trimmed).
    code: String,
    /// As the note gave it.
    fixed: String,
    /// The Python code of the batch that held it.
    block: String,
    /// The result file whose text the change is about, and the start of
    /// that text as the note saw it.
    result: Option<(PathBuf, Vec<u8>)>,
}

impl KnownFix {
    /// Keeps in `fixes` a line's change a note gave (`code` becomes
    /// `fixed`, a line of `block`) for [`Coach::apply_line_fix`], the
    /// latest per line.
    fn keep(fixes: &mut Vec<KnownFix>, code: String, fixed: String, block: String) {
        Self::keep_for(fixes, code, fixed, block, None);
    }

    /// As [`Self::keep`], for a change about the text of a result file
    /// (`result`: its path and the start of its text): the fix stands
    /// while the file holds that text.
    fn keep_for(
        fixes: &mut Vec<KnownFix>,
        code: String,
        fixed: String,
        block: String,
        result: Option<(PathBuf, Vec<u8>)>,
    ) {
        // The latest change of a line stands: it was made for the code
        // and result as they are now.
        fixes.retain(|fix| fix.code != code);
        fixes.push(KnownFix {
            code,
            fixed,
            block,
            result,
        });
    }

    /// Whether the change is still to make, the last Python code being
    /// `python`: that code holds the line, or the result file still holds
    /// the text the note was about.
    fn stands(&self, python: &str) -> bool {
        let ran_last = self.block == python && python.lines().any(|l| l.trim() == self.code);
        ran_last
            || self
                .result
                .as_ref()
                .is_some_and(|(path, head)| read_head(path, FIX_HEAD).as_ref() == Some(head))
    }
}

/// Whether `code` (the model's new Python), while it still holds the line
/// `line` a note said to write as `fixed` in `block`, makes that change
/// its own way elsewhere: a line other than `line` names a string the fix
/// adds (`result = result.rename(columns={'timestamp': 'month'})` before
/// `result.to_csv(…)`, where the fix renames to `'month'` in the write).
/// Applying the fix on top of it would undo the model's change.
fn made_its_own_fix(code: &str, line: &str, fixed: &str, block: &str) -> bool {
    let strings = |text: &str| -> BTreeSet<String> {
        let mut found = BTreeSet::new();
        for quote in ['\'', '"'] {
            found.extend(
                text.split(quote)
                    .skip(1)
                    .step_by(2)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned),
            );
        }
        found
    };
    let had = strings(block);
    let added: Vec<String> = strings(fixed)
        .into_iter()
        .filter(|s| !had.contains(s))
        .collect();
    !added.is_empty()
        && code
            .lines()
            .filter(|l| l.trim() != line)
            .any(|l| added.iter().any(|s| strings(l).contains(s)))
}

/// A line of the model's code changed as a note said
/// ([`Coach::apply_line_fix`]).
#[derive(Debug, PartialEq)]
pub(super) struct LineFix {
    /// The line as the model wrote it.
    pub(super) code: String,
    /// As the note said to write it.
    pub(super) fixed: String,
    /// How oi ran it.
    pub(super) how: FixedAs,
}

/// A run oi makes as a small model ends the task without a change a note
/// gave ([`Coach::run_at_end`]): shown and approved as any run.
#[derive(Debug)]
pub(super) struct EndRun {
    pub(super) run: ProposedRun,
    /// What the user is told.
    pub(super) warning: String,
    /// What the model reads beside the run's result.
    pub(super) note: String,
}

/// What a reply that only repeats the code that just ran without errors
/// calls for ([`Coach::repeat_of_good_run`]).
#[derive(Debug, PartialEq)]
pub(super) enum Repeat {
    /// The model is told, with this note; the code does not run.
    Tell(String),
    /// Told already: the task ends with its results as they are.
    End,
}

/// How oi ran a line of the model's code changed as a note said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FixedAs {
    /// The reply held the line again: it ran changed.
    Line,
    /// The reply was only the changed line: the block it belongs in ran
    /// whole, with it.
    Block,
    /// The model ended with the line unchanged: its last code ran again,
    /// changed ([`Coach::standing_fix`]).
    Ended,
}

impl LineFix {
    /// What the model is told.
    pub(super) fn note(&self) -> String {
        let LineFix { code, fixed, .. } = self;
        match self.how {
            FixedAs::Block => format!(
                "[oi: your line `{fixed}` went into the block that had `{code}` in its place, and oi ran that block whole.]"
            ),
            FixedAs::Line => format!(
                "[oi: your code still had `{code}`; oi ran it as `{fixed}`, as the note said.]"
            ),
            FixedAs::Ended => format!(
                "[oi: you ended with `{code}` still in your code; oi ran your last code again with it as `{fixed}`, as the note said.]"
            ),
        }
    }
}

/// Nothing asked of a file's form.
static NOTHING_ASKED: std::sync::LazyLock<Asked> = std::sync::LazyLock::new(Asked::default);

#[derive(Debug, Default)]
struct Asked {
    /// The whole task's text in lower case: a label it writes itself
    /// ("three lines: \"min: X\", …") is asked for.
    task: String,
    /// Its header line (`with the header name,total`).
    header: Option<String>,
    /// One value per line ("the names …, one per line").
    one_per_line: bool,
    /// Its lines in alphabetical order ("sorted alphabetically", or
    /// "sorted" with no key).
    alphabetical: bool,
    /// An example of the value, with a digit in it ("for example 3.11.7").
    example: Option<String>,
    /// A dotted path the task gives as its example of a value, where it
    /// speaks of dotted paths ("as its dotted path (for example
    /// server.tls.cert)").
    dotted_example: Option<String>,
    /// A count of lines ("Count the lines of data.csv"), which a header
    /// line is one of.
    counts_lines: bool,
    /// The order its rows go in by their numbers ("largest total first":
    /// descending), with the task's words for it.
    order: Option<(table::Order, &'static str)>,
    /// Rows with the same number in alphabetical order ("ties in
    /// alphabetical order", "ties broken by name").
    ties_alphabetical: bool,
    /// An average ("the average response time", "mean score").
    average: bool,
    /// What its values go without ("without comments, quotes or
    /// `export`", "without its query string", "without the dot").
    without: Vec<Without>,
    /// Email addresses, one per line ("the email addresses …, one per
    /// line").
    emails: bool,
    /// Each key's latest row ("the most recently updated row of each
    /// customer": `Some(true)`) or earliest (`Some(false)`).
    latest: Option<bool>,
    /// One value alone ("Write just that path to …", "Write the number
    /// to …"), not one per key or per line.
    single: bool,
    /// Every key of the files it merges ("every key from both", "all
    /// keys", "merge").
    every_key: bool,
    /// Its words with punctuation left out ("ignoring case and
    /// punctuation").
    no_punctuation: bool,
    /// Whether it names only some of the files of a folder the task names
    /// ("Some files in docs/ have … Write the names of all such files"):
    /// set with the folders' files by [`Coach::new`].
    picks: bool,
    /// The folders the task names and the files each held as it began,
    /// when the task picks some of them.
    picked_from: Vec<(String, Vec<String>)>,
    /// Literals the task writes in lower case that Python prints
    /// capitalized (`true`/`false` for `True`/`False`, `null` for `None`).
    lower_literals: Vec<(&'static str, &'static str)>,
    /// The decimals its numbers have ("with 2 decimals").
    decimals: Option<usize>,
    /// Whether it asks how many of something there are ("count", "the
    /// number of", "how many").
    counts: bool,
    /// Whether it asks for a sum or a total ("sum", "total", "net").
    sums: bool,
    /// Whether it asks for one pick by a superlative ("the student with
    /// the highest score", "the latest row").
    picks_one: bool,
    /// Whether it asks for each entry once ("each contact once",
    /// "unique", "no duplicates").
    each_once: bool,
    /// Whether it keeps an input table's columns in the table it writes
    /// ("with the same columns as contacts.csv", "keeping all other
    /// columns").
    same_columns: bool,
    /// The word after "sorted by" or "ordered by" ("sorted by subject"),
    /// when it is no direction ("sorted by total, largest first" is
    /// checked by `order`).
    sorted_by: Option<String>,
    /// The words after "each" and "per" ("for each subject"):
    /// what a row is asked for.
    each: Vec<String>,
    /// Whether it asks for values separated by a tab.
    tab_separated: bool,
    /// Whether it asks for dates written `YYYY-MM-DD`.
    iso_dates: bool,
    /// Whether it asks for months written `YYYY-MM` ("months as
    /// YYYY-MM").
    iso_months: bool,
    /// Whether it leaves hidden files or folders out ("leaving out hidden
    /// folders", "not the hidden ones").
    leaves_hidden: bool,
    /// Whether it matches a word only whole ("as a whole word").
    whole_word: bool,
    /// Whether it asks for its values in lower case ("their names in
    /// lower case").
    lower_case: bool,
    /// The words of the sentence that asks for lower case (lowered): in a
    /// table, the columns they name are the ones asked in lower case.
    lower_words: Vec<String>,
    /// Whether it asks for something in upper case too ("the key in upper
    /// case, true and false in lower case"): then only a table's columns
    /// the lower-case sentence names are checked, not every word.
    upper_case: bool,
    /// Its words holding a capital letter, as written (labels it gives,
    /// like `Total:`, keep their case).
    cased_words: Vec<String>,
    /// Values it quotes as ones to leave out ("leave out rows where it is
    /// empty, "n/a" or "-"").
    left_out: Vec<String>,
    /// The forms it quotes for a result's lines ("a level-2 heading as
    /// \"- Title\"", "one per line as 'word count'"): see
    /// [`asked_line_forms`].
    line_forms: Vec<LineForm>,
    /// Its words, lowercase.
    words: Vec<String>,
}

impl Asked {
    /// Whether it asks for a value reduced from many rows: a sum, a
    /// count or an average.
    fn reduces(&self) -> bool {
        self.sums || self.counts || self.average
    }

    fn of(task: &str) -> Self {
        let lower = task.to_lowercase();
        // The words of each sentence asking for lower case.
        let lower_words: Vec<String> = ["lower case", "lowercase", "lower-case", "lowercased"]
            .iter()
            .filter_map(|phrase| sentence_of(&lower, phrase))
            .flat_map(|(before, after)| task_words(before).chain(task_words(after)))
            .map(str::to_owned)
            .collect();
        let one_per_line = ["one per line", "one on each line", "each on its own line"]
            .iter()
            .any(|phrase| lower.contains(phrase));
        let words: Vec<String> = task_words(&lower)
            .map(|word| word.trim_end_matches(['?', '!']).to_owned())
            .collect();
        Self {
            task: lower.clone(),
            header: asked_header(task),
            example: asked_example(task),
            dotted_example: dotted_example(task),
            one_per_line,
            order: asked_order(&lower),
            alphabetical: asks_alphabetical(&lower),
            ties_alphabetical: task_words(&lower).any(|w| matches!(w, "tie" | "ties" | "tied"))
                && (lower.contains("alphabetic") || lower.contains("by name")),
            average: words
                .iter()
                .any(|w| matches!(w.as_str(), "average" | "averages" | "mean")),
            latest: if ["most recent", "latest", "newest", "last updated"]
                .iter()
                .any(|w| lower.contains(w))
            {
                Some(true)
            } else if ["oldest", "earliest", "least recent"]
                .iter()
                .any(|w| lower.contains(w))
            {
                Some(false)
            } else {
                None
            },
            without: Without::asked(&lower),
            emails: one_per_line
                && ["email address", "e-mail address", "emails"]
                    .iter()
                    .any(|w| lower.contains(w)),
            counts_lines: task_words(&lower).any(|w| w == "lines")
                && ["count", "how many", "number of"]
                    .iter()
                    .any(|phrase| lower.contains(phrase)),
            single: !one_per_line && asks_single(&words),
            no_punctuation: ignores_punctuation(&lower),
            lower_literals: lower_literals(task),
            decimals: asked_decimals(task),
            counts: words
                .iter()
                .any(|w| matches!(w.as_str(), "count" | "counts" | "number"))
                || lower.contains("how many"),
            sums: words
                .iter()
                .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
                .any(|w| matches!(w, "sum" | "sums" | "total" | "totals" | "net")),
            sorted_by: words.windows(3).find_map(|w| {
                (matches!(w[0].as_str(), "sorted" | "ordered" | "sort" | "order") && w[1] == "by")
                    .then(|| {
                        w[2].trim_matches(|c: char| !c.is_alphanumeric() && c != '_')
                            .to_owned()
                    })
                    .filter(|word| !word.is_empty())
            }),
            each: words
                .windows(2)
                .filter(|pair| matches!(pair[0].as_str(), "each" | "per"))
                .map(|pair| {
                    pair[1]
                        .trim_matches(|c: char| !c.is_alphanumeric() && c != '_')
                        .to_owned()
                })
                .filter(|word| word.len() > 2)
                .collect(),
            picks_one: words.iter().enumerate().any(|(at, w)| {
                // "the top 3", "the three largest" pick several.
                let several = |w: &str| {
                    w.parse::<usize>().is_ok_and(|n| n > 1)
                        || matches!(w, "two" | "three" | "four" | "five" | "ten")
                };
                let near = [at.checked_sub(1), Some(at + 1)]
                    .into_iter()
                    .flatten()
                    .filter_map(|i| words.get(i))
                    .any(|w| several(w));
                !near && PICKS.contains(&w.as_str())
            }),
            each_once: words
                .iter()
                .any(|w| matches!(w.as_str(), "once" | "unique" | "duplicates" | "deduplicate")),
            same_columns: [
                "same columns",
                "all its columns",
                "all of its columns",
                "all the columns",
                "all columns",
                "all other columns",
                "all the other columns",
                "every other column",
                "other columns unchanged",
                "other columns as they are",
            ]
            .iter()
            .any(|phrase| lower.contains(phrase)),
            tab_separated: [
                "separated by a tab",
                "separated by tabs",
                "tab-separated",
                "tab separated",
                "a tab between",
                "with a tab",
            ]
            .iter()
            .any(|phrase| lower.contains(phrase)),
            iso_months: task.contains("YYYY-MM") && !task.contains("YYYY-MM-DD"),
            iso_dates: task.contains("YYYY-MM-DD")
                || lower.contains("iso date")
                || lower.contains("iso format"),
            whole_word: ["whole word", "whole-word", "entire word"]
                .iter()
                .any(|phrase| lower.contains(phrase)),
            leaves_hidden: words.iter().any(|w| w == "hidden")
                && ![
                    "include hidden",
                    "including hidden",
                    "also hidden",
                    "even hidden",
                ]
                .iter()
                .any(|phrase| lower.contains(phrase)),
            every_key: words
                .iter()
                .any(|w| matches!(w.as_str(), "merge" | "merged" | "combine"))
                || ["every key", "all keys", "all the keys", "each key"]
                    .iter()
                    .any(|phrase| lower.contains(phrase)),
            picks: picks_some(&words, &lower),
            picked_from: Vec::new(),
            lower_case: !lower_words.is_empty(),
            lower_words,
            // Not "capital" alone: "the capital of each country".
            upper_case: ["upper case", "uppercase", "upper-case", "capital letter"]
                .iter()
                .any(|phrase| lower.contains(phrase)),
            cased_words: task_words(task)
                .filter(|word| word.chars().any(|c| c.is_uppercase()))
                .map(str::to_owned)
                .collect(),
            left_out: left_out_values(task),
            line_forms: asked_line_forms(task),
            words,
        }
    }
}

/// Whether a (lowercase) task says to leave punctuation out of words
/// ("ignoring case and punctuation", "without punctuation", "strip
/// punctuation").
fn ignores_punctuation(lower: &str) -> bool {
    lower.split(['.', ';']).any(|sentence| {
        sentence.contains("punctuation")
            && [
                "ignor",
                "without",
                "strip",
                "remov",
                "drop",
                "no punctuation",
            ]
            .iter()
            .any(|w| sentence.contains(w))
    })
}

/// Whether a task's `words` (lowercase; `lower`, the whole task) pick some
/// of what they name ("the files that …", "such files", "only those
/// whose …") rather than all of it ("every file", "all files").
fn picks_some(words: &[String], lower: &str) -> bool {
    let all = words.iter().any(|w| matches!(w.as_str(), "every" | "each"))
        || [
            "all files",
            "all the files",
            "all entries",
            "all the entries",
            "all of",
        ]
        .iter()
        .any(|phrase| lower.contains(phrase));
    !all && words.iter().any(|w| {
        matches!(
            w.as_str(),
            "such"
                | "which"
                | "whose"
                | "only"
                | "some"
                | "that"
                | "where"
                | "containing"
                | "matching"
                | "duplicate"
                | "duplicates"
                | "same"
        )
    })
}

/// When the lines of `text` name every file of one of `folders` (three or
/// more, and nothing else, with or without the folder before each): the
/// folder and its count of files.
fn names_every_file(text: &str, folders: &[(String, Vec<String>)]) -> Option<(String, usize)> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect();
    folders.iter().find_map(|(folder, files)| {
        if files.len() < 3 {
            return None;
        }
        let named: BTreeSet<&str> = lines
            .iter()
            .map(|line| {
                let line = line.strip_prefix("./").unwrap_or(line);
                line.strip_prefix(folder.as_str()).unwrap_or(line)
            })
            .collect();
        let files: BTreeSet<&str> = files.iter().map(String::as_str).collect();
        (named == files).then(|| (folder.clone(), files.len()))
    })
}

/// The first word of `text` with punctuation still on it (`sat.`,
/// `"Hello`), its lines split at spaces, tabs and commas: a word of two
/// letters or more with one of `.;:!?"()` before or after it.
fn punctuated_word(text: &str) -> Option<&str> {
    const MARKS: &[char] = &['.', ';', ':', '!', '?', '"', '(', ')'];
    text.split(|c: char| c.is_whitespace() || c == ',')
        .find(|word| {
            word.chars().filter(|c| c.is_alphabetic()).count() >= 2
                && (word.starts_with(MARKS) || word.ends_with(MARKS))
        })
}

/// Whether a task's `words` (lowercase) ask for one value: "just that
/// path", "only the region's name", "the number", "its name" after
/// "write"; not values per key ("per region", "each") nor several ("the
/// names", "the name and size").
fn asks_single(words: &[String]) -> bool {
    const SINGULAR: &[&str] = &[
        "number", "count", "total", "name", "path", "answer", "value", "result", "average", "sum",
    ];
    if words
        .iter()
        .any(|w| matches!(w.as_str(), "each" | "every" | "per"))
    {
        return false;
    }
    let plural = |w: &str| {
        w.ends_with('s')
            && !w.ends_with("'s")
            && !w.ends_with("ss")
            && !w.ends_with("us")
            && !w.ends_with("is")
    };
    words.windows(3).enumerate().any(|(at, w)| {
        let determiner = matches!(w[1].as_str(), "that" | "the" | "its" | "this");
        let just = matches!(w[0].as_str(), "just" | "only") && determiner;
        let written = w[0] == "write" && determiner && SINGULAR.contains(&w[2].as_str());
        // The words up to where the file is named, none of them plural.
        (just || written)
            && words[at + 2..]
                .iter()
                .take_while(|w| w.as_str() != "to")
                .all(|w| !plural(w) && w != "and")
    })
}

/// When the sentence of `task` (lowercased) that names the file `name`
/// asks for a count or total alone before it ("Then write the number of
/// files you made to count.txt"), where [`asks_single`] saw the plural
/// after "of", or an "each" in another sentence: the word that asks
/// (`number`, `count`, `total`). Not for a table's file, and not where
/// that sentence asks for one per something.
/// The columns of an input table that a table written from it left out.
#[derive(Debug, PartialEq)]
struct LostColumns {
    /// The input file.
    input: String,
    /// The columns the result has, all the input's.
    kept: Vec<String>,
    /// The input's columns it lacks, in the input's order.
    missing: Vec<String>,
}

/// Whether the table `text` (a result's start) has only some of the
/// columns of an input table: its header is made of that input's column
/// names (compared folded) and lacks at least one of them. A header with a
/// column of its own (a renamed or added one) is not judged.
fn columns_left_out(text: &str, inputs: &[(&String, &String)]) -> Option<LostColumns> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header = lines.next()?;
    // A header alone is told apart (the table came out empty).
    lines.next()?;
    inputs.iter().find_map(|(input, seen)| {
        let (sep, columns) = table::columns(seen)?;
        let folded: Vec<String> = columns.iter().map(|c| table::fold(c)).collect();
        let kept: Vec<String> = header.split(sep).map(|c| c.trim().to_owned()).collect();
        let all_theirs = kept
            .iter()
            .all(|c| !c.is_empty() && folded.contains(&table::fold(c)));
        let kept_folded: Vec<String> = kept.iter().map(|c| table::fold(c)).collect();
        let missing: Vec<String> = columns
            .iter()
            .zip(&folded)
            .filter(|(_, f)| !kept_folded.contains(f))
            .map(|(c, _)| c.trim().to_owned())
            .collect();
        (all_theirs && !missing.is_empty()).then(|| LostColumns {
            input: (*input).clone(),
            kept,
            missing,
        })
    })
}

fn asks_count_alone(task: &str, name: &str) -> Option<&'static str> {
    let name = name.to_lowercase();
    if [".csv", ".tsv", ".json", ".jsonl"]
        .iter()
        .any(|ext| name.ends_with(ext))
    {
        return None;
    }
    let (before, _) = sentence_of(task, &name)?;
    let words: Vec<&str> = task_words(before).collect();
    if words
        .iter()
        .any(|w| matches!(*w, "each" | "every" | "per" | "and"))
    {
        return None;
    }
    words.windows(4).find_map(|w| {
        let asks = matches!(w[0], "write" | "save" | "put" | "store")
            && matches!(w[1], "the" | "its")
            && w[3] == "of";
        ["number", "count", "total"]
            .into_iter()
            .find(|noun| asks && w[2] == *noun)
    })
}

/// The order a task (lowercased) asks rows to go in by their numbers, and
/// the words that say it.
fn asked_order(lower: &str) -> Option<(table::Order, &'static str)> {
    const DESCENDING: &[&str] = &[
        "descending",
        "largest first",
        "highest first",
        "biggest first",
        "most first",
        "largest to smallest",
        "highest to lowest",
        "most to least",
        "from largest",
        "from highest",
        "from most",
        "decreasing",
    ];
    const ASCENDING: &[&str] = &[
        "ascending",
        "smallest first",
        "lowest first",
        "least first",
        "smallest to largest",
        "lowest to highest",
        "least to most",
        "from smallest",
        "from lowest",
        "from least",
        "increasing",
    ];
    // Longer phrases first; a word may stand between the two of a
    // phrase ending in "first" ("largest total first").
    let words: Vec<&str> = lower
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .collect();
    let found = |phrases: &'static [&'static str]| {
        phrases.iter().copied().find(|phrase| {
            lower.contains(phrase)
                || phrase.split_once(' ').is_some_and(|(a, b)| {
                    b == "first" && words.windows(3).any(|w| w[0] == a && w[2] == b)
                })
        })
    };
    match (found(DESCENDING), found(ASCENDING)) {
        (Some(words), None) => Some((table::Order::Descending, words)),
        (None, Some(words)) => Some((table::Order::Ascending, words)),
        _ => None,
    }
}

/// What a task asks of the names of the files it works on: all in
/// lowercase ("lowercase names"), no spaces in them ("spaces replaced by
/// underscores").
#[derive(Debug, Default)]
struct NameRules {
    lowercase: bool,
    no_spaces: bool,
}

impl NameRules {
    fn of(task: &str) -> Self {
        let lower = task.to_lowercase();
        let has = |words: &[&str]| words.iter().any(|w| lower.contains(w));
        let names = has(&["name", "rename"]);
        Self {
            lowercase: names && has(&["lowercase", "lower case", "lower-case"]),
            no_spaces: names
                && has(&["space"])
                && has(&[
                    "underscore",
                    "hyphen",
                    "dash",
                    "no space",
                    "without space",
                    "spaces removed",
                    "remove space",
                    "replace space",
                ]),
        }
    }

    /// How the entries of the folder `name` at `path` break these rules:
    /// the first entry that breaks each, named.
    fn broken(&self, name: &str, path: &Path) -> Vec<String> {
        if !self.lowercase && !self.no_spaces {
            return Vec::new();
        }
        let mut entries = entries_in(path, false);
        entries.sort();
        let mut broken = Vec::new();
        if self.lowercase
            && let Some(entry) = entries.iter().find(|e| e.to_lowercase() != **e)
        {
            broken.push(format!(
                "`{entry}` in `{name}` has capital letters where the task asks for lowercase names (lowercase a name with `tr '[:upper:]' '[:lower:]'` in shell, `.lower()` in Python)"
            ));
        }
        if self.no_spaces
            && let Some(entry) = entries.iter().find(|e| e.contains(' '))
        {
            broken.push(format!(
                "`{entry}` in `{name}` still has spaces where the task asks for none (`tr ' ' '_'` in shell, `.replace(' ', '_')` in Python)"
            ));
        }
        broken
    }
}

/// The names of the entries of the folder at `path` that are not hidden:
/// files only when `files_only`.
fn entries_in(path: &Path, files_only: bool) -> Vec<String> {
    fs_err::read_dir(path)
        .map(|dir| {
            dir.filter_map(Result::ok)
                .filter(|e| !files_only || e.file_type().is_ok_and(|t| t.is_file()))
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| !name.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether a task works on the folder it runs in ("the files in this
/// folder").
fn names_this_folder(task: &str) -> bool {
    let lower = task.to_lowercase();
    [
        "this folder",
        "this directory",
        "the current folder",
        "the current directory",
        "the working folder",
        "the working directory",
    ]
    .iter()
    .any(|phrase| lower.contains(phrase))
}

/// The first line of `text` when every line (of its first 50, two or
/// more) holds the same number of fields, two or more, split by one of
/// `,`, `;` or a tab, and each has a number beside text: rows of a table
/// where single values were asked for (`Hill Valley,2301005`).
fn several_per_line(text: &str) -> Option<String> {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(50)
        .collect();
    if lines.is_empty() {
        return None;
    }
    [',', ';', '\t'].into_iter().find_map(|sep| {
        let width = lines[0].split(sep).count();
        let rows = width >= 2
            && lines.iter().all(|line| {
                let fields: Vec<&str> = line.split(sep).map(str::trim).collect();
                fields.len() == width
                    && fields.iter().any(|f| f.parse::<f64>().is_ok())
                    && fields.iter().any(|f| f.parse::<f64>().is_err())
            });
        rows.then(|| lines[0].trim().to_owned())
    })
}

/// A line of a result that is a whole row of an input's table.
#[derive(Debug, PartialEq)]
struct WholeRow {
    /// The line, trimmed.
    line: String,
    /// The input it is a row of.
    input: String,
    /// The column the task asks for, as the input's header writes it.
    column: String,
    /// How code takes that cell of a row.
    take: String,
}

/// How the cells of a row of an input table are separated.
#[derive(Debug, Clone, Copy)]
enum CellSplit {
    Tab,
    Comma,
    Semicolon,
    /// Two or more spaces (a report aligned in columns).
    Aligned,
}

impl CellSplit {
    fn cells(self, line: &str) -> Vec<String> {
        let cells: Vec<&str> = match self {
            Self::Tab => line.split('\t').collect(),
            Self::Comma => line.split(',').collect(),
            Self::Semicolon => line.split(';').collect(),
            Self::Aligned => records::cells(line),
        };
        cells.into_iter().map(|c| c.trim().to_owned()).collect()
    }

    /// Python that takes cell `at` of a row.
    fn take(self, at: usize) -> String {
        match self {
            Self::Tab => format!("`line.rstrip('\\n').split('\\t')[{at}]`"),
            Self::Comma => format!("`row[{at}]` of each `row` of `csv.reader(f)`"),
            Self::Semicolon => {
                format!("`row[{at}]` of each `row` of `csv.reader(f, delimiter=';')`")
            }
            Self::Aligned => format!("`cells = {}`, then `cells[{at}]`", records::ALIGNED_SPLIT),
        }
    }
}

/// The first line of a result (`text`) that is a whole row of an input's
/// table (`J-104   integration   FAILED   00:30:02`), where a column of
/// that table is named in the task (`lower`: "the IDs of the jobs …"),
/// as the values asked for: a search (`grep FAILED`) that copied lines
/// where one cell of each was asked. The column named first in the task
/// is the one asked; a task that speaks of lines or rows themselves asks
/// for nothing here.
fn whole_row(text: &str, inputs: &[(&String, &String)], lower: &str) -> Option<WholeRow> {
    let rest = lower.replace("one per line", "");
    let words: Vec<&str> = task_words(&rest).collect();
    if words.iter().any(|w| {
        matches!(
            *w,
            "line" | "lines" | "row" | "rows" | "entries" | "records"
        )
    }) {
        return None;
    }
    // Where in the task a header cell is named (`ID` as "ids", `Job` as
    // "jobs", `city` as "cities").
    let named_at = |cell: &str| words.iter().position(|w| table::names(cell, w));
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .take(50)
        .find_map(|line| {
            inputs.iter().find_map(|(input, body)| {
                let at = body.lines().position(|l| l.trim() == line)?;
                [
                    CellSplit::Tab,
                    CellSplit::Comma,
                    CellSplit::Semicolon,
                    CellSplit::Aligned,
                ]
                .into_iter()
                .find_map(|split| {
                    let width = split.cells(line).len();
                    if width < 2 {
                        return None;
                    }
                    let header = body
                        .lines()
                        .take(at)
                        .map(|l| split.cells(l))
                        .find(|cells| cells.len() == width)?;
                    let (column, cell) = header
                        .iter()
                        .enumerate()
                        .filter_map(|(i, cell)| named_at(cell).map(|at| (at, i)))
                        .min()
                        .map(|(_, i)| (header[i].clone(), i))?;
                    Some(WholeRow {
                        line: line.to_owned(),
                        input: (*input).clone(),
                        column,
                        take: split.take(cell),
                    })
                })
            })
        })
}

/// The line of Python `code` that puts one aggregate of a whole column
/// into the column `column` of the same table (`merged['total'] =
/// merged['amount'].sum()`), and that line computing it per key instead
/// (`merged['total'] = merged.groupby('name')['amount'].transform('sum')`):
/// the key is the column a word of `each` names (`customer`), else `key`,
/// the result's first column of text.
fn whole_column_total(
    code: &str,
    column: &str,
    key: Option<&str>,
    each: &[String],
) -> Option<(String, String)> {
    code.lines().map(str::trim).find_map(|line| {
        let (target, value) = line.split_once('=')?;
        let target = target.trim();
        let value = value.trim();
        let table = target
            .strip_suffix(&format!("['{column}']"))
            .or_else(|| target.strip_suffix(&format!("[\"{column}\"]")))?;
        if table.is_empty()
            || !table.chars().all(|c| c.is_alphanumeric() || c == '_')
            || value.contains("groupby")
            || value.contains("transform")
        {
            return None;
        }
        let rest = value.strip_prefix(table)?;
        let (source, aggregate) = ["sum", "mean", "max", "min", "count", "median"]
            .iter()
            .find_map(|agg| Some((rest.strip_suffix(&format!(".{agg}()"))?, *agg)))?;
        let source_name = source
            .strip_prefix("['")
            .and_then(|s| s.strip_suffix("']"))
            .or_else(|| {
                source
                    .strip_prefix("[\"")
                    .and_then(|s| s.strip_suffix("\"]"))
            })
            .filter(|name| !name.is_empty() && !name.contains(['[', ']', '\'', '"']))?;
        let key = key_word(each, code).map(String::as_str).or(key)?;
        if key == column || key == source_name {
            return None;
        }
        let fixed = format!(
            "{target} = {table}.groupby({})[{}].transform('{aggregate}')",
            table::python_string(key),
            table::python_string(source_name)
        );
        Some((line.to_owned(), fixed))
    })
}

/// The word after "each"/"per" in a task (`each`) that `code` names as a
/// string (`'customer'`): the key a row is for ("one row per customer",
/// not "typed differently in each file").
fn key_word<'a>(each: &'a [String], code: &str) -> Option<&'a String> {
    each.iter().find(|word| code.contains(&format!("'{word}'")))
}

/// The values a task quotes (in double quotes) in a clause that says to
/// leave them out ("leave out rows where it is empty, "n/a" or "-"",
/// "skip the lines marked "draft""). A clause runs to the end of its
/// sentence or bracket.
fn left_out_values(task: &str) -> Vec<String> {
    const LEADS: [&str; 14] = [
        "leave out",
        "leaving out",
        "left out",
        "skip",
        "skipping",
        "ignore",
        "ignoring",
        "exclude",
        "excluding",
        "drop",
        "dropping",
        "remove",
        "removing",
        "except",
    ];
    // ASCII lowering keeps every byte where it was.
    let lower = task.to_ascii_lowercase();
    let mut values: Vec<String> = Vec::new();
    for lead in LEADS {
        for (at, _) in lower.match_indices(lead) {
            let word = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
            if !word(lower[..at].chars().next_back())
                || !word(lower[at + lead.len()..].chars().next())
            {
                continue;
            }
            let rest = &task[at..];
            let end = rest
                .char_indices()
                .find(|&(i, c)| {
                    matches!(c, ')' | ';')
                        || (c == '.'
                            && rest[i + 1..].chars().next().is_none_or(char::is_whitespace))
                })
                .map_or(rest.len(), |(i, _)| i);
            let clause = &rest[..end];
            for (i, quoted) in clause.split('"').enumerate() {
                if i % 2 == 1
                    && !quoted.trim().is_empty()
                    && quoted.chars().count() <= 20
                    && !values.iter().any(|v| v == quoted)
                {
                    values.push(quoted.to_owned());
                }
            }
        }
    }
    values
}

/// A value of `left_out` that a result still holds, with the column that
/// holds it when the result is a table (else a line that is that value).
fn kept_left_out(text: &str, left_out: &[String]) -> Option<(String, Option<String>)> {
    if left_out.is_empty() {
        return None;
    }
    if table::columns(text).is_some() {
        return table::column_holding(text, left_out)
            .map(|(value, column)| (value.clone(), Some(column)));
    }
    left_out.iter().find_map(|value| {
        text.lines()
            .any(|line| line.trim().eq_ignore_ascii_case(value))
            .then(|| (value.clone(), None))
    })
}

/// The line number (from 1) of the first blank line of `text` that has a
/// value after it.
fn blank_among(text: &str) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let last = lines.iter().rposition(|l| !l.trim().is_empty())?;
    lines[..last]
        .iter()
        .position(|l| l.trim().is_empty())
        .map(|at| at + 1)
}

/// The first word of a result with a capital letter in it, not one the
/// task writes itself (a label), nor on the header line the task gives;
/// in a table, only in the columns the sentence asking for lower case
/// names ("write the subjects in lower case": not the students' names).
fn capitalized(text: &str, asked: &Asked) -> Option<String> {
    let cased = |word: &str| {
        word.chars().any(|c| c.is_uppercase())
            && !asked
                .cased_words
                .iter()
                .any(|cased| word.contains(cased.as_str()))
    };
    let columns = table::by_column(text);
    if !columns.is_empty() {
        return columns
            .iter()
            .filter(|(name, _)| asked.lower_words.iter().any(|w| table::names(name, w)))
            .flat_map(|(_, values)| values)
            .find(|value| cased(value))
            .cloned();
    }
    if asked.upper_case {
        return None;
    }
    let skip = usize::from(asked.header.is_some());
    text.lines()
        .skip(skip)
        .flat_map(str::split_whitespace)
        .find(|word| cased(word))
        .map(str::to_owned)
}

/// The header line a task gives its result, written as the words of its
/// columns joined by commas near the word "header" or "columns" ("with the
/// header name,total", "columns: city,count").
/// The value a task gives as an example of its result ("for example
/// 3.11.7", "e.g. 2026-01-31"): one word holding a digit (not a file's
/// name: "for example report.pdf goes into pdf/").
fn asked_example(task: &str) -> Option<String> {
    example_after(task, &["for example ", "e.g. ", "such as "], |word| {
        word.chars().any(|c| c.is_ascii_digit()) && !word.contains('/')
    })
}

/// The first word after one of `leads` in `task` (case ignored), without
/// the punctuation and quotes around it, that `fits`.
fn example_after(task: &str, leads: &[&str], fits: impl Fn(&str) -> bool) -> Option<String> {
    let lower = task.to_lowercase();
    leads.iter().find_map(|lead| {
        let at = lower.find(lead)? + lead.len();
        let word = task.get(at..)?.split_whitespace().next()?;
        let word = word
            .trim_end_matches([')', ',', ';', ':'])
            .trim_end_matches('.')
            .trim_matches(['`', '\'', '"']);
        fits(word).then(|| word.to_owned())
    })
}

/// The example a task gives of a value (after "for example", "e.g.",
/// "like") that is a dotted path of words (`server.tls.cert`), where the
/// task speaks of dotted paths or keys.
fn dotted_example(task: &str) -> Option<String> {
    let lower = task.to_lowercase();
    if !lower.contains("dotted") && !lower.contains("dot-separated") {
        return None;
    }
    example_after(
        task,
        &["for example ", "e.g. ", "such as ", "like "],
        |word| {
            let parts: Vec<&str> = word.split('.').collect();
            parts.len() >= 2
                && parts.iter().all(|p| {
                    !p.is_empty()
                        && p.chars()
                            .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
                })
        },
    )
}

/// Where the task's `example` is a dotted path and an input is a JSON
/// document with objects inside objects: the result `text`'s first line,
/// when none of its lines has a dot (only top-level keys were read).
fn undotted_paths(text: &str, example: &str, inputs: &[(&String, &String)]) -> Option<String> {
    let nested = inputs.iter().any(|(name, body)| {
        name.to_lowercase().ends_with(".json") && body.matches('{').count() >= 2
    });
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.clone().next()?;
    (nested && example.contains('.') && !lines.any(|l| l.contains('.'))).then(|| first.to_owned())
}

/// The values a final `reply` names that the result `text` lacks: words
/// of the shape of one of its lines, with letters and digits (`J-104`
/// where it holds `J-102`), that an input holds. The model read them; the
/// code that wrote the result missed them.
fn answered_not_written<'a>(
    reply: &'a str,
    text: &str,
    inputs: &[(&String, &String)],
) -> Vec<&'a str> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let shapes: Vec<Vec<String>> = lines
        .iter()
        .map(|l| shape(l))
        .filter(|s| s.iter().any(|c| c == "9") && s.iter().any(|c| c == "a"))
        .collect();
    let mut missed: Vec<&str> = Vec::new();
    for word in reply.split(|c: char| c.is_whitespace() || ",;()[]`\"'*".contains(c)) {
        let word = word.trim_end_matches(['.', ':', '!', '?']);
        if word.is_empty()
            || missed.contains(&word)
            || lines.contains(&word)
            || !shapes.contains(&shape(word))
            || !inputs.iter().any(|(_, body)| body.contains(word))
        {
            continue;
        }
        missed.push(word);
    }
    missed
}

/// The shape of a value: runs of digits, runs of letters, and each other
/// character as it is (`3.11.7` and `3.12.1` share one).
fn shape(value: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in value.chars() {
        let class = if c.is_ascii_digit() {
            "9".to_owned()
        } else if c.is_alphabetic() {
            "a".to_owned()
        } else {
            c.to_string()
        };
        if out.last() != Some(&class) || !(class == "9" || class == "a") {
            out.push(class);
        }
    }
    out
}

/// The line that writes the table `name` with the header the task asks
/// (`asked`) when the model's `python` wrote it with pandas from a table
/// whose columns are `written`: the columns kept and renamed, each asked
/// column matched to a written one by name (case and spacing aside), the
/// rest in order (` (in your code, write it with `df[['Student',
/// 'Score']].rename(columns={'Student': 'name', 'Score': 'score'}).to_csv(…)`)`).
fn header_fix(
    name: &str,
    written: &[String],
    asked: &[String],
    python: &str,
    text: &str,
) -> String {
    if let Some(fix) = index_fix(name, written, asked, python) {
        return fix;
    }
    header_call(name, written, asked, python, text)
        .map(|(_, call)| format!(" (in your code, write it with `{call}`)"))
        .unwrap_or_default()
}

/// When the one asked column missing from `written` is the index a
/// pandas table got from `.pivot(index=…)`, `.groupby(…)` or
/// `.set_index(…)` in `python`, and the line writing `name` leaves the
/// index out (`index=False`): what to write instead
/// (`wide.reset_index().to_csv('wide.csv', index=False)`).
fn index_fix(name: &str, written: &[String], asked: &[String], python: &str) -> Option<String> {
    let fold = |s: &str| s.trim().to_lowercase();
    let missing: Vec<&String> = asked
        .iter()
        .filter(|a| !written.iter().any(|w| fold(w) == fold(a)))
        .collect();
    let [column] = missing.as_slice() else {
        return None;
    };
    let (line, table) = to_csv_line(name, python)?;
    if !line.replace(' ', "").contains("index=False") {
        return None;
    }
    let quoted = [format!("'{column}'"), format!("\"{column}\"")];
    // Renamed away (`.rename(columns={'name': 'customer'})`): not lost
    // as an index.
    let renamed = python.lines().any(|l| {
        let l = l.replace(' ', "");
        l.contains(".rename(") && quoted.iter().any(|q| l.contains(&format!("{q}:")))
    });
    if renamed {
        return None;
    }
    let made = python.lines().find(|l| {
        [".pivot(", ".pivot_table(", ".groupby(", ".set_index("]
            .iter()
            .any(|call| l.contains(call))
            && quoted.iter().any(|q| l.contains(q.as_str()))
            // An index made a column again on the same line is kept.
            && !l.contains(".reset_index(")
            && !l.replace(' ', "").contains("as_index=False")
    })?;
    Some(format!(
        " (`{column}` is the index of the table your code made at `{}`, and `index=False` leaves the index out: write `{table}.reset_index().to_csv({}, index=False)`)",
        made.trim(),
        table::python_string(name)
    ))
}

/// The column names of a header line (any of the usual separators,
/// spaces and quotes around each left out).
fn header_fields(line: &str) -> Vec<String> {
    line.split([',', ';', '\t'])
        .map(|f| f.trim().trim_matches('"').to_owned())
        .collect()
}

/// The line of Python `python` that writes the table `name` with the
/// columns `written` (trimmed), and the call that writes it with the
/// columns `asked` instead (`df[['Student', 'Score']].rename(columns=…)
/// .to_csv('passed.csv', index=False)`), when the columns asked are among
/// those written or as many.
/// Words of a column's name that make it a time.
const TIME_WORDS: &[&str] = &["date", "day", "month", "year", "week", "time", "period"];

/// Words of a column's name that make it an amount.
const AMOUNT_WORDS: &[&str] = &[
    "net", "total", "sum", "count", "amount", "mean", "average", "avg", "minutes", "price",
    "revenue", "sales", "qty", "quantity",
];

fn header_call(
    name: &str,
    written: &[String],
    asked: &[String],
    python: &str,
    text: &str,
) -> Option<(String, String)> {
    let (line, table) = to_csv_line(name, python)?;
    let fold = |s: &str| s.trim().to_lowercase().replace([' ', '_'], "");
    let mut used = vec![false; written.len()];
    let mut chosen: Vec<Option<usize>> = asked
        .iter()
        .map(|a| {
            let i = written.iter().position(|w| fold(w) == fold(a))?;
            used[i] = true;
            Some(i)
        })
        .collect();
    // An asked column named for a time (`month`, `date`) takes a written
    // column of dates, one named for an amount (`net`, `total`) a column
    // of numbers that is no id, or none: `type` renamed `month` and `id`
    // renamed `net` were wrong guesses.
    let kinds = table::column_kinds(text);
    let named = |a: &str, words: &[&str]| {
        let a = a.to_lowercase();
        words.iter().any(|w| a.contains(w))
    };
    for (choice, a) in chosen.iter_mut().zip(asked) {
        if choice.is_none() {
            let fits = |i: usize| {
                let (dated, number) = kinds.get(i).copied().unwrap_or((false, false));
                let w = written[i].trim().to_lowercase();
                let id = w == "id" || w.ends_with("_id") || w.ends_with(" id");
                if named(a, TIME_WORDS) {
                    dated
                } else if named(a, AMOUNT_WORDS) {
                    number && !id
                } else {
                    true
                }
            };
            *choice = (0..written.len()).find(|&i| !used[i] && fits(i));
            if let Some(i) = *choice {
                used[i] = true;
            }
        }
    }
    let columns = chosen.into_iter().collect::<Option<Vec<usize>>>()?;
    let quote = |s: &str| table::python_string(s);
    let kept: Vec<String> = columns.iter().map(|&i| quote(&written[i])).collect();
    let renamed: Vec<String> = columns
        .iter()
        .zip(asked)
        .filter(|(i, a)| written[**i] != **a)
        .map(|(i, a)| format!("{}: {}", quote(&written[*i]), quote(a)))
        .collect();
    let rename = if renamed.is_empty() {
        String::new()
    } else {
        format!(".rename(columns={{{}}})", renamed.join(", "))
    };
    Some((
        line.to_owned(),
        format!(
            "{table}[[{}]]{rename}.to_csv({}, index=False)",
            kept.join(", "),
            quote(name)
        ),
    ))
}

/// The line of Python `python` that writes the table `name` with pandas
/// (`df.to_csv('passed.csv', index=False)`, trimmed), and the table's
/// variable.
fn to_csv_line<'a>(name: &str, python: &'a str) -> Option<(&'a str, &'a str)> {
    python.lines().find_map(|line| {
        let at = line.find(".to_csv(")?;
        let rest = &line[at + ".to_csv(".len()..];
        let quoted =
            rest.starts_with(&format!("'{name}'")) || rest.starts_with(&format!("\"{name}\""));
        let variable = line[..at]
            .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
            .next()
            .unwrap_or_default();
        (quoted && !variable.is_empty() && !variable.starts_with(char::is_numeric))
            .then_some((line.trim(), variable))
    })
}

/// [`to_csv_line`] when that line is the call alone
/// (`df.to_csv('passed.csv', index=False)`, not `x = df.to_csv(…)` nor a
/// call inside another): a line oi may replace with another call.
fn lone_to_csv<'a>(name: &str, python: &'a str) -> Option<(&'a str, &'a str)> {
    to_csv_line(name, python).filter(|(line, table)| {
        line.starts_with(&format!("{table}.to_csv(")) && line.ends_with(')')
    })
}

/// For a result `name` asked one value per line whose first line `row`
/// holds several (`Hill Valley,2301005`), written whole by a line of
/// `python` that is a pandas call alone (`top3.to_csv('top3.txt',
/// index=False, header=False)`): that line, and the call writing only
/// the column of the row's one text value, named as an input table's
/// header names the column holding it (`top3['City'].to_csv('top3.txt',
/// index=False, header=False)`).
fn one_value_call(
    name: &str,
    row: &str,
    inputs: &[(&String, &String)],
    python: &str,
) -> Option<(String, String)> {
    let fields: Vec<&str> = [',', ';', '\t']
        .into_iter()
        .map(|sep| row.split(sep).map(str::trim).collect::<Vec<_>>())
        .find(|fields| fields.len() >= 2)?;
    let text: Vec<&str> = fields
        .iter()
        .copied()
        .filter(|f| f.parse::<f64>().is_err())
        .collect();
    let [value] = text.as_slice() else {
        return None;
    };
    let column = inputs
        .iter()
        .find_map(|(_, text)| table::column_holding(text, std::slice::from_ref(value)))
        .map(|(_, column)| column)?;
    let (line, table) = lone_to_csv(name, python)?;
    Some((
        line.to_owned(),
        format!(
            "{table}[{}].to_csv({}, index=False, header=False)",
            table::python_string(&column),
            table::python_string(name)
        ),
    ))
}

/// When the first line of `text` (of two or more) is the name of a
/// column of an input table, and the second is not (`inputs`: name and
/// text, read as [`table::columns`] reads a table): that line and the
/// input's name. A table written with its header where only values
/// were asked.
fn column_name_line(text: &str, inputs: &[(&String, &String)]) -> Option<(String, String)> {
    let mut lines = text
        .trim_start_matches('\u{feff}')
        .lines()
        .filter(|l| !l.trim().is_empty());
    let first = lines.next()?.trim();
    let second = lines.next()?.trim();
    inputs.iter().find_map(|(input, body)| {
        let (_, names) = table::columns(body)?;
        let named = |line: &str| names.iter().any(|n| n.trim() == line);
        // Column names asked one a line are values.
        (named(first) && !named(second)).then(|| (first.to_owned(), (*input).clone()))
    })
}

/// The line of `python` that is a pandas call alone writing the table
/// `name` with its header (`top3.to_csv('top3.txt', index=False)`), and
/// the call writing it without (`…, header=False)`).
fn header_off_call(name: &str, python: &str) -> Option<(String, String)> {
    let (line, _) = lone_to_csv(name, python)?;
    let call = if line.contains("header=True") {
        line.replace("header=True", "header=False")
    } else if line.contains("header=") {
        return None;
    } else {
        format!("{}, header=False)", &line[..line.len() - 1])
    };
    Some((line.to_owned(), call))
}

/// Whether each of the two or more lines of `text` is followed by a blank
/// line (`a=1\n\nb=2\n\n`): values read with their line break and
/// written with another.
fn doubled_breaks(text: &str) -> bool {
    let lines: Vec<&str> = text.lines().collect();
    let filled = lines.iter().filter(|l| !l.trim().is_empty()).count();
    filled >= 2
        && lines.len() >= filled * 2 - 1
        && lines
            .iter()
            .enumerate()
            .all(|(i, l)| (i % 2 == 0) != l.trim().is_empty())
}

/// In a plain list of three or more lines (no field separators), the
/// first two lines in neither byte nor case-blind alphabetical order.
fn unsorted_lines(text: &str) -> Option<(String, String)> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if lines.len() < 3 || lines.iter().any(|l| l.contains([',', '\t', ';'])) {
        return None;
    }
    let bytes = lines.windows(2).all(|w| w[0] <= w[1]);
    let folded = lines
        .windows(2)
        .all(|w| w[0].to_lowercase() <= w[1].to_lowercase());
    if bytes || folded {
        return None;
    }
    lines
        .windows(2)
        .find(|w| w[0].to_lowercase() > w[1].to_lowercase())
        .map(|w| (w[0].to_owned(), w[1].to_owned()))
}

/// Whether a batch's runs printed anything (not only oi's "printed
/// nothing" line).
fn printed_something(reports: &[Report]) -> bool {
    reports.iter().any(|r| {
        let text = r.text.trim();
        !r.language.is_empty() && !text.is_empty() && text != crate::output::PRINTED_NOTHING
    })
}

/// For Python `code` (the last run's) that uses pandas and ends by
/// printing one table variable (`print(team_avg)`), where the task asks
/// for the CSV file `name`: the line that writes that table there
/// (`team_avg.to_csv('team_avg.csv', index=False)`). Told to change "the
/// code that printed it", a small model wrote another table.
fn printed_table_write(code: &str, name: &str) -> Option<String> {
    if !name.to_ascii_lowercase().ends_with(".csv") || !code.contains("pd.") {
        return None;
    }
    let last = code
        .lines()
        .map(str::trim)
        .rfind(|l| l.starts_with("print("))?;
    let variable = last.strip_prefix("print(")?.strip_suffix(')')?.trim();
    let plain = !variable.is_empty()
        && !variable.starts_with(char::is_numeric)
        && variable.chars().all(|c| c.is_alphanumeric() || c == '_');
    // A table the code made with pandas: assigned from a pandas call.
    let made = code.lines().any(|l| {
        l.trim_start()
            .strip_prefix(variable)
            .and_then(|rest| rest.trim_start().strip_prefix('='))
            .is_some_and(|value| {
                !value.starts_with('=')
                    && (value.contains("df") || value.contains("pd.") || value.contains('.'))
            })
    });
    (plain && made).then(|| {
        format!(
            "{variable}.to_csv({}, index=False)",
            table::python_string(name)
        )
    })
}

/// In Python `code`, the one `print(…)` line (a whole call on one line,
/// with no `file=`) in the body of `with open(FILE, 'w') as HANDLE:`
/// whose body never names `HANDLE`: that line given `file=HANDLE`, with
/// FILE and HANDLE. Such code makes FILE empty and prints its text.
fn print_beside_open(code: &str) -> Option<(LineChange, String, String)> {
    let lines: Vec<&str> = code.lines().collect();
    for (at, line) in lines.iter().enumerate() {
        let head = line.trim();
        let Some(rest) = head.strip_prefix("with ").and_then(|r| r.strip_suffix(':')) else {
            continue;
        };
        let Some((call, handle)) = rest.rsplit_once(" as ") else {
            continue;
        };
        let handle = handle.trim();
        let Some((file, mode)) = typed::opened(call.trim()) else {
            continue;
        };
        if !mode.contains('w')
            || handle.is_empty()
            || !handle.chars().all(|c| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        let depth = super::splice::indent(line).len();
        let body: Vec<&str> = lines[at + 1..]
            .iter()
            .copied()
            .filter(|l| !l.trim().is_empty())
            .take_while(|l| super::splice::indent(l).len() > depth)
            .collect();
        if body.iter().any(|l| super::splice::has_name(l, handle)) {
            continue;
        }
        let prints: BTreeSet<&str> = body
            .iter()
            .map(|l| l.trim())
            .filter(|l| l.starts_with("print("))
            .collect();
        let [print] = prints.into_iter().collect::<Vec<_>>()[..] else {
            continue;
        };
        // The call is the whole line: its bracket closes at the end.
        let open = "print".len();
        if super::pyline::closing_bracket(print, open) != Some(print.len() - 1) {
            continue;
        }
        let args = &print[open + 1..print.len() - 1];
        if args.contains("file=") {
            continue;
        }
        let fixed = if args.trim().is_empty() {
            format!("print(file={handle})")
        } else {
            format!("print({args}, file={handle})")
        };
        return Some((LineChange::new(print, fixed), file, handle.to_owned()));
    }
    None
}

/// `code`, a block in `language` that printed something, changed so
/// that what it prints goes to the file `name` instead: Python run inside
/// `contextlib.redirect_stdout`, shell commands sent there with `>`.
/// `None` where that could change what the code does: a long block, one
/// that writes or moves files itself, a Python string over several lines
/// (the added indent would go into it), a name the shell would need quoted.
fn writing_output(language: &str, code: &str, name: &str) -> Option<String> {
    let code = code.trim_end();
    if code.trim().is_empty() || code.lines().count() > SHOWN_BLOCK_LINES {
        return None;
    }
    if is_python(Some(language)) {
        const WRITES: [&str; 12] = [
            "open(",
            ".to_",
            ".write",
            "dump(",
            "savefig",
            "shutil.",
            "os.rename",
            "os.replace",
            "\"\"\"",
            "'''",
            "__future__",
            "sys.stdout",
        ];
        if WRITES.iter().any(|w| code.contains(w))
            || code.lines().any(|l| l.trim_end().ends_with('\\'))
        {
            return None;
        }
        let body: Vec<String> = code
            .lines()
            .map(|l| {
                if l.trim().is_empty() {
                    String::new()
                } else {
                    format!("    {l}")
                }
            })
            .collect();
        return Some(format!(
            "import contextlib\nwith open({}, 'w') as out, contextlib.redirect_stdout(out):\n{}",
            table::python_string(name),
            body.join("\n")
        ));
    }
    let plain_name = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'));
    if !super::save_as::is_shell(Some(language))
        || !plain_name
        || [">", "tee ", "cp ", "mv ", "<<"]
            .iter()
            .any(|w| code.contains(w))
    {
        return None;
    }
    let simple = !code.contains('\n') && !code.contains(['|', ';', '&', '#', '\\']);
    Some(if simple {
        format!("{code} > {name}")
    } else {
        format!("{{\n{code}\n}} > {name}")
    })
}

/// Whether `code` opens the file `name` to append to it: Python's
/// `open('name', 'a')` (or `'a+'`, `mode='a'`), or the shell's `>> name`.
fn appends_to(code: &str, name: &str) -> bool {
    let quoted = [format!("'{name}'"), format!("\"{name}\"")];
    code.lines().any(|line| {
        let python = open_call(line)
            .and_then(typed::opened)
            .is_some_and(|(file, mode)| file == name && mode.starts_with('a'));
        let compact: String = line.chars().filter(|c| !c.is_whitespace()).collect();
        let shell = compact.contains(&format!(">>{name}"))
            || quoted.iter().any(|q| compact.contains(&format!(">>{q}")));
        python || shell
    })
}

/// The first `open(…)` call of a line of Python, to its first `)`.
fn open_call(line: &str) -> Option<&str> {
    let at = line.find("open(")?;
    let close = at + line[at..].find(')')?;
    Some(&line[at..=close])
}

/// The note for a result file `name` that a run opened to append to and
/// that grew from `before` to `now` bytes: it holds what earlier runs
/// wrote too, which a small model, shown its lines, reads as new faults.
fn appended_note(name: &str, before: u64, now: u64) -> String {
    format!(
        "[oi: `{name}` grew from {before} to {now} bytes: your code opens it to append (`'a'`, `>>`), so it holds what earlier runs wrote too. Collect the lines first, then write them all at once, opening it with `'w'` (`>` in the shell) once, outside any loop or function that runs more than once.]"
    )
}

/// When the lines of `text` (four or more) are one list written twice,
/// its second half the same as its first: the first line and where it
/// comes again (a result appended to by a second run).
fn doubled_lines(text: &str) -> Option<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let lines = match lines.last() {
        Some(last) if last.trim().is_empty() => &lines[..lines.len() - 1],
        _ => &lines[..],
    };
    let half = lines.len() / 2;
    (half >= 2 && lines.len() % 2 == 0 && lines[..half] == lines[half..])
        .then(|| (lines[0].to_owned(), half + 1))
}

/// A line of `python` that takes a term from itself
/// (`df['born'].dt.year - df['born'].dt.year`): the line (trimmed) and the
/// term, a name with its subscripts and attributes. A small model copying
/// a formula puts one name in place of two.
fn self_subtraction(python: &str) -> Option<(String, String)> {
    let before = |c: char| c.is_whitespace() || "=(,+*/".contains(c);
    let after = |c: char| c.is_whitespace() || "),".contains(c);
    python.lines().map(str::trim).find_map(|line| {
        line.match_indices(" - ").find_map(|(at, _)| {
            let left = &line[..at];
            let left = &left[left.rfind(before).map_or(0, |i| i + 1)..];
            let right = &line[at + 3..];
            let right = &right[..right.find(after).unwrap_or(right.len())];
            let balanced = left.matches(['(', '[']).count() == left.matches([')', ']']).count();
            (left == right && balanced && left.starts_with(|c: char| c.is_alphabetic() || c == '_'))
                .then(|| (line.to_owned(), left.to_owned()))
        })
    })
}

/// The line of `python` that joins a list into lines (`'\n'.join(values)`)
/// or writes a list's lines (`f.writelines(values)`), and that line with
/// the list made of each value once, in its order
/// (`'\n'.join(dict.fromkeys(values))`); each value stripped first when
/// the repeats differ in spaces around them (`spaced`; a `writelines` list
/// keeps its line breaks, so it is not changed then). Or, unless
/// `spaced`, the loop that writes a line for each value of a list
/// ([`once_loop`]). `None` when no line or two lines do so, or the list is
/// made unique already.
fn once_fix(python: &str, spaced: bool) -> Option<(String, String)> {
    let loops = (!spaced).then(|| once_loop(python)).flatten();
    let lines = python.lines().map(str::trim).filter_map(|line| {
        let calls: &[&str] = if spaced {
            &["'\\n'.join(", "\"\\n\".join("]
        } else {
            &["'\\n'.join(", "\"\\n\".join(", ".writelines("]
        };
        let start = calls
            .iter()
            .find_map(|call| line.find(call).map(|at| at + call.len()))?;
        let end = super::pyline::closing_bracket(line, start - 1)?;
        let list = line[start..end].trim();
        if list.is_empty()
            || ["dict.fromkeys", "set(", "unique", "drop_duplicates"]
                .iter()
                .any(|made| list.contains(made))
        {
            return None;
        }
        let once = if spaced {
            format!("dict.fromkeys(v.strip() for v in ({list}))")
        } else {
            format!("dict.fromkeys({list})")
        };
        Some((
            line.to_owned(),
            format!("{}{once}{}", &line[..start], &line[end..]),
        ))
    });
    let mut lines = lines.chain(loops);
    let first = lines.next()?;
    lines.next().is_none().then_some(first)
}

/// The one loop of `python`, not inside another loop, whose body writes
/// its value (`for row in rows:` over `writer.writerow(row)` or
/// `f.write(f'{row}\n')`), and that loop over each value of the list once,
/// in its order: `for row in {repr(v): v for v in rows}.values():` (by
/// `repr`, so rows that are lists, which cannot be a dict's keys, are
/// compared too). `None` for no such loop or two, or a loop whose values
/// are unique anyway or cannot be compared so (`enumerate`, `range`,
/// `.items()`, `.iterrows()`).
fn once_loop(python: &str) -> Option<(String, String)> {
    const UNIQUE: [&str; 11] = [
        "dict.fromkeys",
        "set(",
        "unique",
        "drop_duplicates",
        "enumerate(",
        "range(",
        ".items()",
        ".keys()",
        ".iterrows()",
        ".itertuples(",
        "zip(",
    ];
    let lines: Vec<&str> = python.lines().collect();
    let mut found = lines.iter().enumerate().filter_map(|(at, line)| {
        let trimmed = line.trim();
        let (names, source) = trimmed
            .strip_prefix("for ")?
            .strip_suffix(':')?
            .split_once(" in ")?;
        let source = source.trim();
        if source.is_empty() || UNIQUE.iter().any(|word| source.contains(word)) {
            return None;
        }
        let depth = super::splice::indent(line).len();
        // Not inside another loop: a list made again for each value of
        // an outer loop is made unique only within it.
        if super::splice::enclosing(&lines, at).any(super::splice::opens_loop) {
            return None;
        }
        let targets: Vec<&str> = names
            .split(',')
            .map(|n| n.trim().trim_matches(['(', ')']).trim())
            .filter(|n| !n.is_empty())
            .collect();
        let writes = lines[at + 1..]
            .iter()
            .filter(|l| super::splice::is_significant(l))
            .take_while(|l| super::splice::indent(l).len() > depth)
            .any(|l| {
                let writes = [".writerow(", ".write("].iter().any(|c| l.contains(c))
                    || l.contains("print(") && l.contains("file=");
                writes && targets.iter().any(|t| super::splice::has_name(l, t))
            });
        writes.then(|| {
            (
                trimmed.to_owned(),
                format!("for {names} in {{repr(v): v for v in {source}}}.values():"),
            )
        })
    });
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

/// For a result `name` the task asks the number of values for, written
/// as their list by one line of `python` (`df['phone'].to_csv('n.txt',
/// index=False)`, `f.write('\n'.join(values))`): that line, writing how
/// many there are instead — `distinct` ones when the task says so
/// (`.nunique()` of a column, `len(set(values))`).
fn count_fix(name: &str, python: &str, distinct: bool) -> Option<LineChange> {
    let quoted = [format!("'{name}'"), format!("\"{name}\"")];
    let plain = |expr: &str| {
        !expr.is_empty()
            && expr
                .chars()
                .all(|c| c.is_alphanumeric() || "_.[]'\"".contains(c))
    };
    let lines: Vec<&str> = python.lines().map(str::trim).collect();
    // `table.to_csv('n.txt', …)` alone on its line.
    let pandas = lines.iter().find_map(|line| {
        let at = line.find(".to_csv(")?;
        let open = at + ".to_csv".len();
        let rest = &line[open + 1..];
        let expr = &line[..at];
        if !quoted.iter().any(|q| rest.starts_with(q.as_str()))
            || super::pyline::closing_bracket(line, open)? + 1 != line.len()
            || !plain(expr)
        {
            return None;
        }
        let column = expr.ends_with("']") || expr.ends_with("\"]");
        let count = match (distinct, column) {
            (true, true) => format!("{expr}.nunique()"),
            (true, false) => format!("len({expr}.drop_duplicates())"),
            (false, _) => format!("len({expr})"),
        };
        Some(LineChange::new(
            line,
            format!("open({}, 'w').write(str({count}) + '\\n')", quoted[0]),
        ))
    });
    if pandas.is_some() {
        return pandas;
    }
    // `f.write('\n'.join(values) …)`, the one such line, where `f` is
    // `name` opened (or the write is on `open(name, …)` itself).
    let opened = |handle: &str| {
        let named = |l: &str| quoted.iter().any(|q| l.contains(&format!("open({q}")));
        (handle.starts_with("open(") && named(handle))
            || lines.iter().any(|l| {
                named(l)
                    && (l.ends_with(&format!(" as {handle}:"))
                        || l.starts_with(&format!("{handle} = open(")))
            })
    };
    let mut joins = lines.iter().filter_map(|line| {
        let start = ["'\\n'.join(", "\"\\n\".join("]
            .iter()
            .find_map(|call| line.find(call).map(|at| at + call.len()))?;
        let end = super::pyline::closing_bracket(line, start - 1)?;
        let values = line[start..end].trim();
        let write = line.find(".write(")? + ".write".len();
        let write_end = super::pyline::closing_bracket(line, write)?;
        if !plain(values)
            || write_end + 1 != line.len()
            || write > start
            || !opened(line[..write - ".write".len()].trim())
        {
            return None;
        }
        let count = if distinct {
            format!("len(set({values}))")
        } else {
            format!("len({values})")
        };
        Some(LineChange::new(
            line,
            format!("{}(str({count}) + '\\n')", &line[..write]),
        ))
    });
    let first = joins.next()?;
    joins.next().is_none().then_some(first)
}

/// The first line of `text` that comes again word for word (spaces
/// around it aside; blank lines aside): the line, the 1-based numbers of
/// its first and second place, and whether the two differ in those
/// spaces.
fn repeated_line(text: &str) -> Option<(String, usize, usize, bool)> {
    let mut seen: HashMap<&str, (usize, &str)> = HashMap::new();
    for (index, raw) in text.lines().enumerate().take(5000) {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some((first, first_raw)) = seen.get(line) {
            return Some((line.to_owned(), first + 1, index + 1, *first_raw != raw));
        }
        seen.insert(line, (index, raw));
    }
    None
}

/// Folders a task says to make: the name after "folder" or "directory"
/// (`by_country`, `out/`) in a sentence that says "make", "create" or
/// "mkdir" before it.
fn folders_to_make(task: &str) -> Vec<String> {
    let mut found = Vec::new();
    for sentence in task.split_inclusive(['.', ';', '\n']) {
        let words: Vec<&str> = task_words(sentence).collect();
        for (i, word) in words.iter().enumerate() {
            let lower = word.to_lowercase();
            if !matches!(lower.as_str(), "folder" | "directory") {
                continue;
            }
            let makes = words[..i].iter().any(|w| {
                matches!(
                    w.to_lowercase().as_str(),
                    "make" | "create" | "mkdir" | "makes" | "creates"
                )
            });
            let Some(next) = words.get(i + 1) else {
                continue;
            };
            let name = next.trim_end_matches('/');
            let plain = !name.is_empty()
                && name.chars().any(|c| c.is_ascii_alphabetic())
                && name
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
                && !matches!(
                    name.to_lowercase().as_str(),
                    "and"
                        | "in"
                        | "with"
                        | "for"
                        | "named"
                        | "called"
                        | "of"
                        | "to"
                        | "that"
                        | "where"
                );
            if makes && plain && !found.iter().any(|f| f == name) {
                found.push(name.to_owned());
            }
        }
    }
    found
}

/// The number of decimals a task asks numbers to have: "with 2
/// decimals", "rounded to 1 decimal", "2 decimal places", "two decimals".
fn asked_decimals(task: &str) -> Option<usize> {
    let words: Vec<String> = task_words(&task.to_lowercase())
        .map(str::to_owned)
        .collect();
    words.windows(2).find_map(|pair| {
        if !pair[1].starts_with("decimal") || pair[1].starts_with("decimals:") {
            return None;
        }
        match pair[0].as_str() {
            "1" | "one" => Some(1),
            "2" | "two" => Some(2),
            "3" | "three" => Some(3),
            "4" | "four" => Some(4),
            _ => None,
        }
    })
}

/// When every number with a decimal point in `text` (at most its first
/// 50 lines) has another count of decimals than `places`, the first of
/// them (`3100.0` where 2 are asked). Whole numbers are left alone: they
/// may be counts or ids.
fn other_decimals(text: &str, places: usize) -> Option<String> {
    static NUMBER: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?:^|[^\w.])(-?\d+\.(\d+))(?:$|[^\w.])").ok()
    });
    let number = NUMBER.as_ref()?;
    let found: Vec<(String, usize)> = text
        .lines()
        .take(50)
        .flat_map(|line| {
            number
                .captures_iter(line)
                .map(|c| (c[1].to_owned(), c[2].len()))
                .collect::<Vec<_>>()
        })
        .collect();
    (!found.is_empty() && found.iter().all(|(_, n)| *n != places)).then(|| found[0].0.clone())
}

/// A date with its day (`2024-01-05`, `2024-01-05T09:12:00`) in `text` (at
/// most its first 50 lines), where months alone are asked.
fn day_for_month(text: &str) -> Option<String> {
    static DAY: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b").ok()
    });
    let day = DAY.as_ref()?;
    text.lines()
        .take(50)
        .find_map(|line| day.find(line).map(|m| m.as_str().to_owned()))
}

/// A date written otherwise than `YYYY-MM-DD` (`[03/Mar/2024:23:58:01`,
/// `03/09/2024`, `Mar 9, 2024`), in a line of `text` without an ISO date.
fn other_date(text: &str) -> Option<String> {
    static ISO: std::sync::LazyLock<Option<regex::Regex>> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"\b\d{4}-\d{2}-\d{2}\b").ok());
    static OTHER: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"\[?\b\d{1,2}[/.-](?:[A-Z][a-z]{2}|\d{1,2})[/.-]\d{4}(?::\d{2}:\d{2}(?::\d{2})?)?|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* \d{1,2},? \d{4}\b|\b\d{4}/\d{2}/\d{2}\b",
        )
        .ok()
    });
    let (iso, other) = (ISO.as_ref()?, OTHER.as_ref()?);
    text.lines()
        .take(50)
        .filter(|line| !iso.is_match(line))
        .find_map(|line| other.find(line).map(|m| m.as_str().to_owned()))
}

/// The first line of `text` that is a path through a hidden folder
/// (`./.cache/blob`), and that folder.
fn hidden_path(text: &str) -> Option<(String, String)> {
    text.lines().map(str::trim).find_map(|line| {
        let path = line.strip_prefix("./").unwrap_or(line);
        let mut parts: Vec<&str> = path.split('/').collect();
        parts.pop();
        parts
            .into_iter()
            .find(|part| part.len() > 1 && part.starts_with('.') && *part != "..")
            .map(|folder| (line.to_owned(), format!("{folder}/")))
    })
}

/// `values` in backticks, separated by commas (`` `a`, `b` ``).
fn backticked(values: &[String]) -> String {
    values
        .iter()
        .map(|v| format!("`{v}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What the search in `code` (the block that wrote a result) misses of
/// what the task asks: a whole word matched inside longer words too
/// (`grep -i "cache"` where the task says "as a whole word"), or matches
/// counted where the task counts lines (`grep -o … | wc -l`).
fn search_problems(code: &str, asked: &Asked) -> Vec<String> {
    // A word looked for among the words a split made is looked for whole.
    let splits = code.contains(".split(");
    let mut problems = Vec::new();
    for line in code.lines().map(str::trim) {
        let bounded = line.contains("\\b") || line.contains("\\<");
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(at) = words.iter().position(|w| *w == "grep") else {
            // Python: a quoted word looked for in a line, or a regex.
            let substring = (line.contains("' in ") || line.contains("\" in ")) && !splits;
            let regex = ["re.search(", "re.findall(", "re.match(", ".str.contains("]
                .iter()
                .any(|call| line.contains(call));
            if asked.whole_word && !bounded && (substring || regex) {
                problems.push(format!(
                    "the task asks for a whole word, and `{line}` also matches it inside longer words: match it with `\\b` on both sides (`re.search(r'\\bword\\b', line, re.IGNORECASE)`)"
                ));
                break;
            }
            continue;
        };
        let flags: Vec<&str> = words[at + 1..]
            .iter()
            .take_while(|w| w.starts_with('-'))
            .copied()
            .collect();
        let has = |letter: char, long: &str| {
            flags
                .iter()
                .any(|f| *f == long || (!f.starts_with("--") && f.contains(letter)))
        };
        if asked.whole_word && !bounded && !has('w', "--word-regexp") {
            problems.push(format!(
                "the task asks for a whole word, and `{line}` also matches it inside longer words: add `-w` to `grep` (whole words only)"
            ));
        }
        if asked.counts_lines && has('o', "--only-matching") && line.contains("wc -l") {
            problems.push(format!(
                "`{line}` counts each match (`grep -o` prints every match on a line of its own), where the task counts lines: `grep -c` counts the lines that match"
            ));
        }
        if !problems.is_empty() {
            break;
        }
    }
    problems
}

/// Words of a task that picks one by comparing ("the student with the
/// highest score", "the latest row"): [`Asked::picks_one`].
const PICKS: [&str; 16] = [
    "highest", "lowest", "largest", "smallest", "biggest", "best", "top", "latest", "earliest",
    "newest", "oldest", "maximum", "minimum", "cheapest", "longest", "shortest",
];

/// Words of a task that picks by comparing beside [`PICKS`] ("the day
/// with the most orders", "the busiest hour").
const MORE_SUPERLATIVES: [&str; 8] = [
    "most", "fewest", "least", "busiest", "worst", "dearest", "slowest", "fastest",
];

/// Where the task picks by comparing (a word of [`PICKS`] or
/// [`MORE_SUPERLATIVES`], not "at
/// most" or "at least") and the code that wrote the result `name` takes a
/// first element (`[0]`, `.iloc[0]`, `.head(1)`, `.first()`, `head -1`)
/// but compares, counts or orders nothing (no `max`, `min`, `sort`,
/// `value_counts`, `Counter`, `groupby`, `<` or `>` …): the problem,
/// that it wrote the first row's value rather than the one picked.
fn first_row_pick(name: &str, code: &str, asked: &Asked) -> Option<String> {
    let word = asked.words.iter().enumerate().find_map(|(at, w)| {
        let w = w.trim_matches(|c: char| !c.is_alphanumeric());
        let after_at = at > 0 && asked.words[at - 1] == "at";
        ((PICKS.contains(&w) || MORE_SUPERLATIVES.contains(&w)) && !after_at).then_some(w)
    })?;
    // `[0]` also finds `.iloc[0]`; `count` also `value_counts`; `max`
    // and `min` also `argmax` and `idxmin`.
    const FIRST: [&str; 6] = [
        "[0]",
        ".head(1)",
        ".first()",
        "head -1",
        "head -n 1",
        "head -n1",
    ];
    const COMPARES: [&str; 14] = [
        "max",
        "min",
        "sort",
        "mode(",
        "Counter",
        "most_common",
        "groupby",
        "nlargest",
        "nsmallest",
        "rank",
        "count",
        "<",
        ">",
        "uniq",
    ];
    let lines: Vec<&str> = code
        .lines()
        .filter(|line| super::splice::is_significant(line))
        .collect();
    if lines
        .iter()
        .any(|line| COMPARES.iter().any(|c| line.contains(c)))
    {
        return None;
    }
    let first = lines
        .iter()
        .map(|line| line.trim())
        .find(|line| FIRST.iter().any(|f| line.contains(f)))?;
    Some(format!(
        "the task asks for the {word}, and the code that wrote `{name}` takes the first element (`{first}`) without comparing, counting or sorting anything: it wrote the first row's value, not the one the task picks. Count or compare first (pandas: `df[column].value_counts().idxmax()` for the most common value, `df.loc[df[column].idxmax()]` for the row with the largest; Python: `collections.Counter(values).most_common(1)[0][0]`, `max(rows, key=…)`)"
    ))
}

/// When the task asks for paths or file names and `name`'s lines name
/// files in `base`, but one line, shaped like a file name, names none: a
/// problem naming it (a path with spaces cut at a space, or made up).
fn absent_paths(name: &str, text: &str, asked: &Asked, base: &Path) -> Option<String> {
    let about_files = asked
        .words
        .iter()
        .any(|w| matches!(w.as_str(), "path" | "paths" | "file" | "files"));
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if !about_files || lines.len() < 2 || lines.len() > 200 {
        return None;
    }
    // A line as a path under `base` (without `./`); none when absolute.
    fn relative(line: &str) -> Option<&str> {
        Some(line.strip_prefix("./").unwrap_or(line))
            .filter(|path| !path.is_empty() && !path.starts_with('/'))
    }
    let exists = |line: &str| relative(line).is_some_and(|path| base.join(path).exists());
    let file_like = |line: &str| {
        !line.contains([',', '\t', ';', ' ', '='])
            && line.rsplit_once('.').is_some_and(|(stem, ext)| {
                !stem.is_empty()
                    && (1..=5).contains(&ext.len())
                    && ext.chars().all(|c| c.is_ascii_alphanumeric())
                    && ext.chars().any(|c| c.is_ascii_alphabetic())
            })
    };
    // A path into a folder that is here (`./data/old` of `data/old
    // exports/`), not a path with a value after it (`docs/a.md 3000`).
    let into_folder = |line: &str| {
        let number_after = line
            .rsplit_once(char::is_whitespace)
            .is_some_and(|(_, last)| last.parse::<f64>().is_ok());
        !line.contains([',', '\t', ';', '='])
            && !number_after
            && relative(line)
                .and_then(|path| Path::new(path).parent())
                .is_some_and(|parent| !parent.as_os_str().is_empty() && base.join(parent).is_dir())
    };
    let found = lines.iter().find(|l| exists(l))?;
    // Folders in the plural are asked for too ("this folder and its
    // subfolders" is where to look).
    let files_only = asked
        .words
        .iter()
        .any(|w| matches!(w.as_str(), "file" | "files"))
        && !asked
            .words
            .iter()
            .any(|w| matches!(w.as_str(), "folders" | "directories" | "dirs"));
    let is_folder =
        |line: &str| relative(line).is_some_and(|path| path != "." && base.join(path).is_dir());
    if files_only && let Some(folder) = lines.iter().find(|l| is_folder(l)) {
        return Some(format!(
            "`{name}` names `{folder}`, which is a folder, where the task asks for files: list files only (`find . -type f`; Python: the `files` of `os.walk`, not its `dirs`)"
        ));
    }
    let lost = lines
        .iter()
        .find(|l| (file_like(l) || into_folder(l)) && !exists(l))?;
    Some(format!(
        "`{name}` names `{lost}`, which is no file here (`{found}` is one): a path with spaces was likely cut at a space (`awk '{{print $NF}}'`, `.split()`); write each whole path (`find . -type f -printf '%s\\t%p\\n'` and split at the tab; Python: `os.path.join(root, f)` in `os.walk`)"
    ))
}

/// When the task asks for the largest (or smallest) files and every line
/// of `name` is a file under `base`: the first listed file a file not
/// listed is bigger (smaller) than, or two lines out of that order. Files
/// in hidden folders count only when the task does not leave them out;
/// the result itself never counts.
fn size_order(name: &str, text: &str, asked: &Asked, base: &Path) -> Option<String> {
    let largest = asked
        .words
        .iter()
        .any(|w| matches!(w.as_str(), "largest" | "biggest"));
    let smallest = asked.words.iter().any(|w| w == "smallest");
    if largest == smallest {
        return None;
    }
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if lines.is_empty() || lines.len() > 50 {
        return None;
    }
    let size_of = |line: &str| {
        let path = line.strip_prefix("./").unwrap_or(line);
        (!path.starts_with('/'))
            .then(|| fs_err::metadata(base.join(path)).ok())
            .flatten()
            .filter(std::fs::Metadata::is_file)
            .map(|m| m.len())
    };
    let listed: Vec<(&str, u64)> = lines
        .iter()
        .map(|l| Some((*l, size_of(l)?)))
        .collect::<Option<_>>()?;
    let bytes = |n: u64| {
        if n == 1 {
            "1 byte".to_owned()
        } else {
            format!("{n} bytes")
        }
    };
    let word = if largest { "larger" } else { "smaller" };
    // Whether a file of size `a` goes before one of size `b`.
    let before = |a: u64, b: u64| if largest { a > b } else { a < b };
    // Every file below, as its path relative to `base`.
    let mut others: Vec<(String, u64)> = Vec::new();
    let mut stack = vec![(base.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = stack.pop() {
        let Ok(entries) = fs_err::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten().take(2000) {
            let file_name = entry.file_name().to_string_lossy().into_owned();
            let relative = format!("{prefix}{file_name}");
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if !(asked.leaves_hidden && file_name.starts_with('.')) && others.len() < 5000 {
                    stack.push((entry.path(), format!("{relative}/")));
                }
            } else if kind.is_file() && relative != name {
                let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
                others.push((relative, size));
            }
        }
    }
    let named = |path: &str| {
        listed
            .iter()
            .any(|(line, _)| line.strip_prefix("./").unwrap_or(line) == path)
    };
    let (last, last_size) = listed
        .iter()
        .copied()
        .reduce(|kept, next| if before(kept.1, next.1) { next } else { kept })?;
    if let Some((path, size)) = others
        .iter()
        .filter(|(path, _)| !named(path))
        .filter(|(_, size)| before(*size, last_size))
        .reduce(|a, b| if before(b.1, a.1) { b } else { a })
    {
        return Some(format!(
            "`{name}` lists `{last}` ({}), but `{path}` ({}) is {word} and not listed: find each file's size with `os.path.getsize` (in `os.walk`) or `find . -type f -printf '%s\\t%p\\n' | sort -n{}`, not from `ls -l`'s columns",
            bytes(last_size),
            bytes(*size),
            if largest { "r" } else { "" }
        ));
    }
    listed.windows(2).find(|w| before(w[1].1, w[0].1)).map(|w| {
        format!(
            "`{name}` lists `{}` ({}) before `{}` ({}), where the task asks the {} first",
            w[0].0,
            bytes(w[0].1),
            w[1].0,
            bytes(w[1].1),
            if largest { "largest" } else { "smallest" }
        )
    })
}

/// The literals a task writes in lower case that Python prints otherwise:
/// `true`/`false` (as words, "booleans as true/false") and `null`, each
/// with Python's spelling.
fn lower_literals(task: &str) -> Vec<(&'static str, &'static str)> {
    let words: Vec<&str> = task
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    [("True", "true"), ("False", "false"), ("None", "null")]
        .into_iter()
        .filter(|(_, lower)| words.contains(lower))
        .collect()
}

/// The first Python literal (`False`) among `literals` that `text` holds
/// as a word, with the task's spelling (`false`), in the text's order.
fn python_literal(
    text: &str,
    literals: &[(&'static str, &'static str)],
) -> Option<(&'static str, &'static str)> {
    let words: Vec<&str> = text
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .collect();
    words
        .iter()
        .find_map(|word| literals.iter().find(|(python, _)| python == word))
        .copied()
}

/// Whether a task (lowercased) asks for a list in alphabetical order:
/// "alphabetically", "in alphabetical order", or "sorted" not followed by
/// what to sort by ("sorted by count", "sorted from largest").
fn asks_alphabetical(lower: &str) -> bool {
    if lower.contains("alphabetic") {
        return true;
    }
    let words: Vec<&str> = task_words(lower).collect();
    // "sorted by path", "sorted by name": by the text each line begins with.
    let by_text = |i: usize| {
        words.get(i + 1) == Some(&"by")
            && words.get(i + 2).is_some_and(|key| {
                matches!(
                    key.trim_end_matches(['.', ',', ';', ':', ')']),
                    "name" | "names" | "path" | "paths" | "key" | "keys" | "filename" | "title"
                )
            })
    };
    words.iter().enumerate().any(|(i, w)| {
        *w == "sorted"
            && (by_text(i)
                || !words.get(i + 1).is_some_and(|next| {
                    [
                        "by",
                        "from",
                        "in",
                        "descending",
                        "ascending",
                        "largest",
                        "smallest",
                        "highest",
                        "lowest",
                        "newest",
                        "oldest",
                        "most",
                        "least",
                        "on",
                    ]
                    .contains(next)
                }))
    })
}

/// In a result of three or more lines all of one shape with digits in it
/// (`J-102`, `J-104`) but one (`Notes:`): that line and the first of the
/// others — likely a line the code matched by mistake.
fn odd_line(text: &str) -> Option<(String, String)> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if lines.len() < 3 {
        return None;
    }
    let shapes: Vec<Vec<String>> = lines.iter().map(|l| shape(l)).collect();
    let common = if shapes[0] == shapes[1] || shapes[0] == shapes[2] {
        &shapes[0]
    } else {
        &shapes[1]
    };
    let odd: Vec<usize> = (0..lines.len()).filter(|&i| shapes[i] != *common).collect();
    let like = shapes.iter().position(|s| s == common)?;
    // Numbers are alike whatever their sign or digits (`-4` among `100`).
    let number = |line: &str| line.parse::<f64>().is_ok();
    (odd.len() == 1
        && common.iter().any(|c| c == "9")
        && !(number(lines[odd[0]]) && number(lines[like])))
    .then(|| (lines[odd[0]].to_owned(), lines[like].to_owned()))
}

/// In a list of three numbers or more, one per line, the first two in
/// neighbouring lines out of `order`, and whether the whole list is in
/// that order as text (`100` before `15`: sorted as strings).
fn numbers_out_of_order(text: &str, order: table::Order) -> Option<(String, String, bool)> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let numbers: Vec<f64> = lines
        .iter()
        .map(|l| l.parse::<f64>().ok())
        .collect::<Option<_>>()?;
    if numbers.len() < 3 {
        return None;
    }
    let wrong = |a: f64, b: f64| match order {
        table::Order::Ascending => a > b,
        table::Order::Descending => a < b,
        table::Order::None => false,
    };
    let at = numbers.windows(2).position(|w| wrong(w[0], w[1]))?;
    let as_text = lines.windows(2).all(|w| match order {
        table::Order::Descending => w[0] >= w[1],
        _ => w[0] <= w[1],
    });
    Some((lines[at].to_owned(), lines[at + 1].to_owned(), as_text))
}

/// When the one line of a result holds a value in the form of the task's
/// `example` with other words around it (`Python 3.11.7` for `3.11.7`):
/// the line and that value.
fn beside_example(text: &str, example: &str) -> Option<(String, String)> {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let line = lines.next()?;
    if lines.next().is_some() || shape(line) == shape(example) {
        return None;
    }
    let wanted = shape(example);
    let value = line
        .split_whitespace()
        .map(|w| {
            w.trim_end_matches([',', ';', ':', ')'])
                .trim_start_matches('(')
                .trim_end_matches('.')
        })
        .find(|w| shape(w) == wanted)?;
    Some((line.to_owned(), value.to_owned()))
}

fn asked_header(task: &str) -> Option<String> {
    let words: Vec<&str> = task_words(task).collect();
    let joined = words.iter().enumerate().find_map(|(i, word)| {
        let lower = word.to_lowercase();
        if !(lower.starts_with("header") || lower.starts_with("column")) {
            return None;
        }
        words[i + 1..].iter().take(4).find_map(|next| {
            let parts: Vec<&str> = next.split(',').collect();
            (parts.len() >= 2
                && parts.iter().all(|p| {
                    p.starts_with(|c: char| c.is_alphabetic() || c == '_')
                        && p.chars().all(|c| c.is_alphanumeric() || c == '_')
                }))
            .then(|| (*next).to_owned())
        })
    });
    joined.or_else(|| listed_header(task))
}

/// A header the task lists in words: "the columns day, clicks, signups,
/// views in that order", "with the columns `name`, `team` and `score`"
/// (one-word names, at least one comma between them), as `day,clicks,…`.
fn listed_header(task: &str) -> Option<String> {
    let lower = task.to_lowercase();
    lower.match_indices("columns ").find_map(|(at, word)| {
        let rest = task.get(at + word.len()..)?;
        let end = rest
            .find([';', ':', '\n', '(', '.'])
            .unwrap_or(rest.len())
            .min(
                rest.to_lowercase()
                    .find(" in that order")
                    .unwrap_or(rest.len()),
            )
            .min(
                rest.to_lowercase()
                    .find(" in this order")
                    .unwrap_or(rest.len()),
            );
        let list = rest.get(..end)?;
        if !list.contains(',') {
            return None;
        }
        let names: Vec<&str> = list
            .split(',')
            .flat_map(|part| part.split(" and "))
            .map(|part| part.trim().trim_matches(['`', '"', '\'']))
            .collect();
        let word = |name: &&str| {
            !name.is_empty()
                && name.starts_with(|c: char| c.is_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_alphanumeric() || c == '_')
        };
        (names.len() >= 2 && names.iter().all(word)).then(|| names.join(","))
    })
}

/// The first `count` lines of `text`, each cut to `width` characters (with
/// `…` where it was cut).
pub(super) fn first_lines(text: &str, count: usize, width: usize) -> Vec<String> {
    text.lines()
        .take(count)
        .map(|line| {
            let cut: String = line.chars().take(width).collect();
            if cut.len() < line.len() {
                format!("{cut}…")
            } else {
                cut
            }
        })
        .collect()
}

/// The words of a task as names may appear in it: quotes, brackets and
/// punctuation around them (and a sentence's final `.`) taken off.
pub(super) fn task_words(text: &str) -> impl Iterator<Item = &str> {
    text.split_whitespace().map(|word| {
        let word = word.trim_matches(|c: char| {
            matches!(
                c,
                '`' | '"' | '\'' | ',' | ';' | ':' | '(' | ')' | '[' | ']' | '<' | '>'
            )
        });
        word.strip_suffix('.').unwrap_or(word)
    })
}

/// A column of an input table holding numbers written with signs or
/// separators.
struct WrittenColumn {
    file: String,
    column: String,
    /// One of its values, as written.
    value: String,
    decimal_comma: bool,
}

/// The columns of numbers written with signs or separators in the input
/// tables (`inputs`: each file's text), by file in name order.
fn written_columns(inputs: &BTreeMap<String, String>) -> Vec<WrittenColumn> {
    inputs
        .iter()
        .flat_map(|(name, text)| {
            table::written_number_columns(text).into_iter().map(
                move |(column, value, decimal_comma)| WrittenColumn {
                    file: name.clone(),
                    column,
                    value,
                    decimal_comma,
                },
            )
        })
        .collect()
}

/// Whether `code` names the column `column`, quoted (`df['amount']`,
/// `row["Population"]`).
fn names_column(code: &str, column: &str) -> bool {
    ['\'', '"']
        .iter()
        .any(|q| code.contains(&format!("{q}{column}{q}")))
}

/// Whether `code` seems to remove signs or separators from numbers.
fn cleans_numbers(code: &str) -> bool {
    [
        "replace",
        "thousands",
        "decimal",
        "re.sub",
        "translate",
        "strip('",
        "strip(\"",
        "locale",
        "isdigit",
    ]
    .iter()
    .any(|how| code.contains(how))
}

/// Commands a task quotes in backticks that run a script it names
/// (`python3 csv2md.py data.csv --sort price`), as quoted; then those it
/// writes in its prose ([`inline_commands`]).
pub(super) fn quoted_commands(task: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let quoted = task.split('`').skip(1).step_by(2);
    for quote in quoted.chain(inline_commands(task).iter().map(String::as_str)) {
        let command = quote.split_whitespace().collect::<Vec<_>>().join(" ");
        let runs_script = named_files(&command)
            .iter()
            .any(|name| super::save_as::is_script(name));
        let known = found
            .iter()
            .any(|f| table::fold(f) == table::fold(&command));
        if command.contains(' ') && runs_script && !known {
            found.push(command);
        }
    }
    found
}

/// Interpreters a command in a task's prose starts with.
const INTERPRETERS: &[&str] = &["python", "python3", "node", "bash", "sh", "ruby", "perl"];

/// Commands a task writes in its prose, outside backticks, that run a
/// script with arguments ("so that python total.py expenses.csv "Net
/// Amount" works"): an interpreter, the script, then its arguments — file
/// names, quoted strings, numbers, options and an option's value — up to
/// the first other word. A command holding a placeholder (`FILE`,
/// `COLUMN`, `<file>`) or without arguments is not one to run.
fn inline_commands(task: &str) -> Vec<String> {
    let outside: String = task.split('`').step_by(2).collect::<Vec<_>>().join(" ");
    let tokens = prose_words(&outside);
    let mut found = Vec::new();
    for (i, word) in tokens.iter().enumerate() {
        let script = tokens
            .get(i + 1)
            .map(|s| s.trim_end_matches(['.', ',', ';', ':', ')']));
        if !INTERPRETERS.contains(&word.as_str()) || !script.is_some_and(super::save_as::is_script)
        {
            continue;
        }
        let mut command = vec![word.clone(), script.unwrap_or_default().to_owned()];
        let mut placeholder = false;
        let mut after_option = false;
        for token in &tokens[i + 2..] {
            let bare = token.trim_end_matches(['.', ',', ';', ':', ')']);
            let quoted = token.starts_with(['"', '\'']);
            let upper = bare.len() > 1 && bare.chars().all(|c| c.is_ascii_uppercase() || c == '_');
            if upper || bare.starts_with('<') {
                placeholder = true;
                break;
            }
            let argument = quoted
                || bare.contains(['.', '/'])
                || bare.starts_with('-')
                || bare.parse::<f64>().is_ok()
                || (after_option && !bare.is_empty());
            if !argument {
                break;
            }
            after_option = bare.starts_with('-') && !bare.contains('=');
            command.push(if quoted {
                token.trim_end_matches(['.', ',', ';', ':', ')']).to_owned()
            } else {
                bare.to_owned()
            });
            // A word that ends a sentence ends the command.
            if bare.len() < token.len() && !quoted {
                break;
            }
        }
        if !placeholder && command.len() > 2 {
            found.push(command.join(" "));
        }
    }
    found
}

/// Prose `text` split into words at spaces, a quoted string (`"Net
/// Amount"`, quotes kept, so the command can be run as written) one
/// word. A quote opens only at a word's start: an apostrophe inside a
/// word ("column's") is prose, where `shlex::split` would fail.
fn prose_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match quote {
            Some(q) => {
                current.push(c);
                if c == q {
                    quote = None;
                }
            }
            None if c.is_whitespace() => {
                if !current.is_empty() {
                    words.push(std::mem::take(&mut current));
                }
            }
            None => {
                if (c == '"' || c == '\'') && current.is_empty() {
                    quote = Some(c);
                }
                current.push(c);
            }
        }
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// Whether `code` runs `command`, spaced and cased as it may be, with any
/// interpreter (`python` for `python3`).
fn runs_command(code: &str, command: &str) -> bool {
    let code = table::fold(code);
    let command = table::fold(command);
    let script_first = command
        .split(' ')
        .next()
        .is_some_and(|first| first.contains('.') || first.contains('/'));
    let rest = match command.split_once(' ') {
        Some((_, rest)) if !script_first => rest,
        _ => command.as_str(),
    };
    code.contains(rest)
}

/// Two lines of a result that are the same but for case or spacing
/// (`Bob  Jones`, `bob jones`): the first and the other, trimmed.
fn folded_twins(text: &str) -> Option<(String, String)> {
    twins(text)
        .next()
        .map(|(first, other)| (first.to_owned(), other.to_owned()))
}

/// Each line of `text` (trimmed) that folds to an earlier line but is
/// written otherwise, with that earlier line.
fn twins(text: &str) -> impl Iterator<Item = (&str, &str)> {
    let mut seen: HashMap<String, &str> = HashMap::new();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .filter_map(move |line| match seen.get(&table::fold(line)) {
            Some(first) => (*first != line).then_some((*first, line)),
            None => {
                seen.insert(table::fold(line), line);
                None
            }
        })
}

/// How two lines that fold to one differ (in spacing, case, or both),
/// and how to make them one before comparing, in Python. The fix also
/// folds what the `inputs` differ in: fixing one difference at a time, a
/// small model undoes the last fix with the next (spaces squeezed, then
/// only `.lower()`, then only the spaces again).
fn twins_differ(
    first: &str,
    other: &str,
    inputs: &[(&String, &String)],
) -> (&'static str, &'static str) {
    let these = ways_differ(first, other);
    let (case, spacing) = inputs.iter().fold(these, |(c, s), (_, text)| {
        let (ic, is) = written_twice(text);
        (c || ic, s || is)
    });
    let differ = match these {
        (false, _) => "spacing",
        (true, false) => "case",
        (true, true) => "case and spacing",
    };
    let fix = match (case, spacing) {
        (false, _) => {
            "make the spaces inside one before comparing (`' '.join(s.split())` turns runs of spaces into one)"
        }
        (true, false) => {
            "put them in one case before comparing (`s.lower()`, or `s.title()` to write)"
        }
        (true, true) => {
            "make the spaces inside one and the case one before comparing (`' '.join(s.split()).title()`)"
        }
    };
    (differ, fix)
}

/// Whether two lines that fold to one differ in case, and in spacing.
fn ways_differ(first: &str, other: &str) -> (bool, bool) {
    let squeezed = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    // Squeezed alike, they differ in case only; lowered alike, in
    // spacing only.
    (
        squeezed(first) != squeezed(other),
        first.to_lowercase() != other.to_lowercase(),
    )
}

/// Whether lines of `text` that fold to one differ in case, and in
/// spacing.
fn written_twice(text: &str) -> (bool, bool) {
    twins(text).fold((false, false), |(case, spacing), (first, other)| {
        let (c, s) = ways_differ(first, other);
        (case || c, spacing || s)
    })
}

/// A key set twice in one section of an INI-style file (`[database]`
/// with two `port = …` lines): a line added where the one there should
/// have changed. The section (empty before the first) and the key.
fn twice_set_key(text: &str) -> Option<(String, String)> {
    let mut section = String::new();
    let mut keys: Vec<String> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') && line.ends_with(']') {
            section = line.to_owned();
            keys.clear();
            continue;
        }
        if line.is_empty() || line.starts_with(['#', ';']) {
            continue;
        }
        let Some((key, _)) = line.split_once('=').or_else(|| line.split_once(':')) else {
            continue;
        };
        let key = key.trim().to_lowercase();
        if key.is_empty() || key.contains(' ') {
            continue;
        }
        if keys.contains(&key) {
            return Some((section, key));
        }
        keys.push(key);
    }
    None
}

/// The first line of a result whose lines are mostly single characters
/// spaced out (`A L S M`, `1 2 . 5 0`): text joined character by character
/// (`' '.join(name)` joins a string's letters), where words were meant.
fn spelled_out(text: &str) -> Option<&str> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    fn spelled(line: &str) -> bool {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        tokens.len() >= 3 && tokens.iter().all(|t| t.chars().count() == 1)
    }
    let count = lines.iter().filter(|l| spelled(l)).count();
    (count > 0 && count * 2 >= lines.len())
        .then(|| lines.iter().find(|l| spelled(l)).copied())
        .flatten()
}

/// File names a task mentions (`count.txt`, `out/sum.txt`, `chart.png` …).
pub(super) fn named_files(text: &str) -> Vec<String> {
    const EXTENSIONS: &[&str] = &[
        "txt",
        "csv",
        "json",
        "md",
        "png",
        "jpg",
        "jpeg",
        "svg",
        "pdf",
        "zip",
        "tar",
        "gz",
        "py",
        "sh",
        "js",
        "html",
        "xml",
        "yaml",
        "yml",
        "log",
        "ini",
        "toml",
        "db",
        "xlsx",
        "jsonl",
        "tsv",
        "sql",
        "sqlite",
        "cfg",
        "conf",
        "env",
        "properties",
        "bash",
        "rb",
        "pl",
        "lua",
        "php",
        "mjs",
        "ts",
        "go",
        "rs",
        "java",
        "css",
        "bak",
        "dat",
        "out",
        "tex",
        "rst",
        "xls",
        "parquet",
    ];
    let mut found: Vec<String> = Vec::new();
    for word in task_words(text) {
        let Some((stem, ext)) = word.rsplit_once('.') else {
            continue;
        };
        let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '/' | '.');
        if stem.is_empty()
            || word.starts_with('/')
            || word.contains("..")
            || !word.chars().all(plain)
            || !EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
        {
            continue;
        }
        if !found.iter().any(|f| f == word) {
            found.push(word.to_owned());
        }
    }
    found
}

/// The line breaks in `bytes`.
fn bytecount(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`result_preview`] of a result written by a block that stands alone.
    fn file_preview(
        name: &str,
        path: &Path,
        len: u64,
        inputs: &[(&String, &String)],
        asked: &Asked,
        python: &str,
    ) -> Option<String> {
        result_preview(name, path, len, inputs, asked, python, None)
    }
    use pretty_assertions::assert_eq;

    /// A Python block the model proposed.
    fn python_run(code: &str) -> Option<ProposedRun> {
        Some(ProposedRun {
            call_id: None,
            language: Some("python".to_owned()),
            code: code.to_owned(),
        })
    }

    /// The report of a Python run that printed `text`.
    fn python_report(text: &str) -> Report {
        Report {
            call_id: None,
            language: "python".into(),
            text: text.into(),
            images: Vec::new(),
        }
    }

    /// A coach of a small model or not (`small`) for `task`, after `run`
    /// failed as `failed` said: it, and the notes it gave.
    fn after_failure(
        small: bool,
        task: &str,
        run: &Option<ProposedRun>,
        failed: &Report,
        cwd: &Path,
    ) -> (Coach, Vec<String>) {
        let mut coach = Coach::new(small, task, cwd);
        coach.saw_runs(std::slice::from_ref(run));
        coach.saw_failure(true);
        let notes = coach.after_runs(std::slice::from_ref(failed), cwd);
        (coach, notes)
    }

    /// What `coach` runs again after the model's next block `run` failed
    /// as `failed` said.
    fn fails_again(
        coach: &mut Coach,
        run: &Option<ProposedRun>,
        failed: &Report,
        cwd: &Path,
    ) -> Option<(ProposedRun, String)> {
        coach.saw_runs(std::slice::from_ref(run));
        coach.saw_failure(true);
        coach.after_runs(std::slice::from_ref(failed), cwd);
        coach.rerun(std::slice::from_ref(run), std::slice::from_ref(failed))
    }

    /// What `coach` runs again after the model's next block, Python
    /// `code`, ran without error.
    fn succeeds(coach: &mut Coach, code: &str, cwd: &Path) -> Option<(ProposedRun, String)> {
        let run = python_run(code);
        let ok = python_report("");
        coach.saw_runs(std::slice::from_ref(&run));
        coach.saw_failure(false);
        coach.after_runs(std::slice::from_ref(&ok), cwd);
        coach.rerun(std::slice::from_ref(&run), std::slice::from_ref(&ok))
    }

    /// A coach of a small model or not (`small`) for `task`, after Python
    /// `code` ran without error: it, and what it runs again.
    fn after_success(
        small: bool,
        task: &str,
        code: &str,
        cwd: &Path,
    ) -> (Coach, Option<(ProposedRun, String)>) {
        let mut coach = Coach::new(small, task, cwd);
        let again = succeeds(&mut coach, code, cwd);
        (coach, again)
    }

    #[test]
    fn a_block_from_before_the_task_started_over_is_not_shown_again() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let md = HarnessKind::Markdown;
        fs_err::write(cwd.join("numbers.txt"), "10\n41\n").unwrap();
        let mut coach = Coach::new(true, "Write the mean of numbers.txt to mean.txt", cwd);
        let old = "_ = open('mean.txt', 'w').write('')\n";
        coach.saw_runs(&[python_run(old)]);
        fs_err::write(cwd.join("mean.txt"), "").unwrap();
        coach.after_runs(&[python_report("")], cwd);
        let shown = "The code that wrote `mean.txt` was:";
        let note = coach.note_before_ending("Done.", md, cwd, None).unwrap();
        assert!(note.contains(shown), "{note}");
        coach.start_over();
        let note = coach.note_before_ending("Done.", md, cwd, None).unwrap();
        assert!(note.contains("`mean.txt` is empty"), "{note}");
        assert!(!note.contains(shown), "{note}");
        // The new try's own block is shown.
        let new = "_ = open('mean.txt', 'w').write('Mean: 25.5')\n";
        coach.saw_runs(&[python_run(new)]);
        fs_err::write(cwd.join("mean.txt"), "Mean: 25.5").unwrap();
        coach.after_runs(&[python_report("")], cwd);
        let note = coach.note_before_ending("Done.", md, cwd, None).unwrap();
        assert!(
            note.contains(&format!("{shown}\n```python\n{}", new.trim_end())),
            "{note}"
        );
    }

    #[test]
    fn a_collection_filled_under_its_loop_variables_name_is_told_once() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let task = "Write the three largest files here to largest.txt.";
        let code = "import os\nfiles = []\nfor root, dirs, files in os.walk('.'):\n    for file in files:\n        files.append(file)\n";
        let failed = python_report(
            "TypeError: join() argument must be str, bytes, or os.PathLike object, not 'tuple'",
        );
        let told = "[oi: `files` names both the collection you fill (`files = []`) and a variable of the loop `for root, dirs, files in os.walk('.'):`: each step of the loop sets `files` again, so what you add goes into what the loop reads, or is lost. Give the collection a name of its own (`found = []`, then `found.append(…)`).]";
        let mut coach = Coach::new(true, task, cwd);
        coach.saw_runs(&[python_run(code)]);
        let notes = coach.after_runs(std::slice::from_ref(&failed), cwd);
        assert!(notes.iter().any(|n| n == told), "{notes:?}");
        // Once a task.
        coach.saw_runs(&[python_run(code)]);
        let again = coach.after_runs(std::slice::from_ref(&failed), cwd);
        assert!(again.iter().all(|n| n != told), "{again:?}");
        // A large model is not told.
        let mut large = Coach::new(false, task, cwd);
        large.saw_runs(&[python_run(code)]);
        let notes = large.after_runs(std::slice::from_ref(&failed), cwd);
        assert!(notes.iter().all(|n| n != told), "{notes:?}");
    }

    #[test]
    fn a_table_not_sorted_by_the_column_the_task_names_is_named() {
        let asked =
            Asked::of("Write best.csv with the header subject,student,score, sorted by subject.");
        let text = "subject,student,score\nmath,Leo,93\nhistory,Maya,91\nphysics,Leo,85\n";
        let problems = content_problems("best.csv", text, &[], &asked, "");
        assert!(
            problems.iter().any(|p| p.starts_with(
                "the rows of `best.csv` are not sorted by `subject` (`math` comes before `history`)"
            )),
            "{problems:?}"
        );
        let sorted = "subject,student,score\nhistory,Maya,91\nmath,Leo,93\nphysics,Leo,85\n";
        assert!(content_problems("best.csv", sorted, &[], &asked, "").is_empty());
        // An order with a direction is the order check's.
        let largest = Asked::of("Write best.csv sorted by score, largest first.");
        assert!(
            !content_problems("best.csv", sorted, &[], &largest, "")
                .iter()
                .any(|p| p.contains("not sorted by"))
        );
    }

    #[test]
    fn a_result_lacking_groups_the_task_asks_each_of_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(
            cwd.join("scores.csv"),
            "student,subject,score\nMaya,Math,88\nLeo,math ,93\nInes,Physics,79\n",
        )
        .unwrap();
        let task = "For each subject in scores.csv, find the best student. Write best.csv with the header subject,student,score.";
        let mut coach = Coach::new(true, task, cwd);
        fs_err::write(
            cwd.join("best.csv"),
            "subject,student,score\nmath,Leo,93\nmath,Maya,88\n",
        )
        .unwrap();
        let previews = coach.after_runs(&[python_report("")], cwd);
        assert!(
            previews.iter().any(|p| p.contains("the `subject` column of `best.csv` has 1 value (`math`) where `scores.csv` has 2 (`math`, `physics`), and the task asks for each: write one row per `subject`")),
            "{previews:?}"
        );
        fs_err::write(
            cwd.join("best.csv"),
            "subject,student,score\nmath,Leo,93\nphysics,Ines,79\n",
        )
        .unwrap();
        coach.after_runs(&[python_report("")], cwd);
        assert_eq!(
            coach.note_before_ending("Done.", HarnessKind::Markdown, cwd, None),
            None
        );
    }

    #[test]
    fn code_sent_again_after_it_ran_right_is_told_once_then_ends_the_task() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(cwd.join("clients.txt"), "10.0.0.10\n10.0.0.9\n10.0.0.10\n").unwrap();
        let task = "clients.txt lists client IP addresses, some repeated. Write ips.txt with each address once, in numeric order.";
        let mut coach = Coach::new(true, task, cwd);
        let code = "print('sorting')";
        // Nothing ran yet, then a run that wrote nothing: no end.
        assert_eq!(coach.repeat_of_good_run(cwd, code), None);
        coach.after_runs(&[python_report("sorting\n")], cwd);
        assert_eq!(coach.repeat_of_good_run(cwd, code), None, "ips.txt missing");
        // Written with a fault the checks find: no end.
        fs_err::write(cwd.join("ips.txt"), "10.0.0.9\n10.0.0.10\n10.0.0.10\n").unwrap();
        assert_eq!(coach.repeat_of_good_run(cwd, code), None, "a line twice");
        // Right: told once, naming the result, then the end.
        fs_err::write(cwd.join("ips.txt"), "10.0.0.9\n10.0.0.10\n").unwrap();
        assert_eq!(
            coach.repeat_of_good_run(cwd, code),
            Some(Repeat::Tell("[oi: that is the code that just ran without errors: running it again changes nothing (`ips.txt` is as it left it). If its result is what the task asks for, the task is done: say so in a sentence, with no code block. If it is not, change the code.]".to_owned()))
        );
        assert!(!coach.wants_code(), "free to answer");
        assert_eq!(coach.repeat_of_good_run(cwd, code), Some(Repeat::End));
        // A task started over never saw the note.
        coach.start_over();
        assert!(matches!(
            coach.repeat_of_good_run(cwd, code),
            Some(Repeat::Tell(_))
        ));
        // A task that asks for no file: the note names none.
        let mut question = Coach::new(true, "How many lines does clients.txt have?", cwd);
        question.after_runs(&[python_report("3\n")], cwd);
        assert!(matches!(
            question.repeat_of_good_run(cwd, "print(3)"),
            Some(Repeat::Tell(note)) if note.contains("changes nothing. If its result")
        ));
        // Large models are not held to this.
        let mut large = Coach::new(false, task, cwd);
        large.after_runs(&[python_report("")], cwd);
        assert_eq!(large.repeat_of_good_run(cwd, code), None);
    }

    #[test]
    fn a_task_ended_on_a_repeat_answers_with_what_the_code_printed_and_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(cwd.join("clients.txt"), "10.0.0.9\n").unwrap();
        let task = "Write ips.txt with each address of clients.txt once.";
        let coach = Coach::new(true, task, cwd);
        let answer = coach.repeat_end_answer(Some("sorted 3 addresses\n"));
        assert!(
            answer.starts_with("The last code ran without errors")
                && answer.contains("It printed:\n```text\nsorted 3 addresses\n```")
                && answer.ends_with("\n`ips.txt` holds what it wrote."),
            "{answer}"
        );
        // Nothing printed: nothing quoted.
        let answer = coach.repeat_end_answer(Some(crate::output::PRINTED_NOTHING));
        assert!(!answer.contains("printed:"), "{answer}");
        assert!(!coach.repeat_end_answer(None).contains("printed:"));
        // A long output is quoted up to its limit, with how much is left.
        let long: String = (1..=50).map(|i| format!("line {i}\n")).collect();
        let answer = coach.repeat_end_answer(Some(&long));
        assert!(answer.contains("line 40\n[10 more lines]\n```"), "{answer}");
        assert!(!answer.contains("line 41"), "{answer}");
        // A question: no file named.
        let question = Coach::new(true, "How many lines does clients.txt have?", cwd);
        let answer = question.repeat_end_answer(Some("3"));
        assert!(answer.ends_with("It printed:\n```text\n3\n```"), "{answer}");
    }

    #[test]
    fn a_list_written_where_its_count_is_asked_is_written_as_the_count() {
        let fixed = |name: &str, python: &str, distinct: bool| {
            count_fix(name, python, distinct).map(|fix| (fix.line, fix.fixed))
        };
        let python = "df = pd.read_csv('c.csv')\ndf = df.drop_duplicates(subset='phone')\ndf['phone'].to_csv('n.txt', index=False)\n";
        assert_eq!(
            fixed("n.txt", python, true),
            Some((
                "df['phone'].to_csv('n.txt', index=False)".to_owned(),
                "open('n.txt', 'w').write(str(df['phone'].nunique()) + '\\n')".to_owned()
            ))
        );
        assert_eq!(
            fixed("n.txt", "df.to_csv('n.txt', index=False)", true)
                .unwrap()
                .1,
            "open('n.txt', 'w').write(str(len(df.drop_duplicates())) + '\\n')"
        );
        assert_eq!(
            fixed("n.txt", "df.to_csv(\"n.txt\")", false).unwrap().1,
            "open('n.txt', 'w').write(str(len(df)) + '\\n')"
        );
        let python = "with open('n.txt', 'w') as f:\n    f.write('\\n'.join(phones) + '\\n')\n";
        assert_eq!(
            fixed("n.txt", python, true),
            Some((
                "f.write('\\n'.join(phones) + '\\n')".to_owned(),
                "f.write(str(len(set(phones))) + '\\n')".to_owned()
            ))
        );
        assert_eq!(
            fixed("n.txt", "open('n.txt', 'w').write('\\n'.join(rows))", false)
                .unwrap()
                .1,
            "open('n.txt', 'w').write(str(len(rows)) + '\\n')"
        );
        // The join writes another file; another name; a computed list.
        let other = "with open('all.txt', 'w') as f:\n    f.write('\\n'.join(phones))\n";
        assert_eq!(fixed("n.txt", other, true), None);
        assert_eq!(fixed("m.txt", python, true), None);
        let computed =
            "with open('n.txt', 'w') as f:\n    f.write('\\n'.join(p.strip() for p in phones))\n";
        assert_eq!(fixed("n.txt", computed, true), None);
        // A call inside another, or a table made in the line.
        assert_eq!(fixed("n.txt", "x = df.to_csv('n.txt')", true), None);
        assert_eq!(
            fixed("n.txt", "df.groupby('a').size().to_csv('n.txt')", true),
            None
        );
    }

    #[test]
    fn a_line_written_twice_where_the_task_asks_for_each_once_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(cwd.join("clients.txt"), "10.0.0.10\n10.0.0.9\n10.0.0.10\n").unwrap();
        let task = "clients.txt lists client IP addresses, some repeated. Write ips.txt with each address once, in numeric order.";
        let mut coach = Coach::new(true, task, cwd);
        fs_err::write(cwd.join("ips.txt"), "10.0.0.9\n10.0.0.10\n 10.0.0.10\n").unwrap();
        coach.after_runs(&[python_report("")], cwd);
        let note = coach
            .note_before_ending("Done.", HarnessKind::Markdown, cwd, None)
            .unwrap();
        assert!(
            note.contains("`ips.txt` has `10.0.0.10` twice (lines 2 and 3) (the two differ only in spaces around them: strip each value before comparing) where the task asks for each once: keep one of each"),
            "{note}"
        );
        // Without "once" (or "unique") in the task, a repeat may be asked.
        let mut other = Coach::new(
            true,
            "Write ips.txt with the addresses of clients.txt sorted.",
            cwd,
        );
        other.after_runs(&[python_report("")], cwd);
        assert!(
            other
                .note_before_ending("Done.", HarnessKind::Markdown, cwd, None)
                .is_none_or(|note| !note.contains("twice")),
        );
        assert_eq!(repeated_line("a\n\nb\n\nc\n"), None);
        assert_eq!(
            repeated_line("a\nb\n a\n"),
            Some(("a".to_owned(), 1, 3, true))
        );
        assert_eq!(
            repeated_line("a\nb\na\n"),
            Some(("a".to_owned(), 1, 3, false))
        );
    }

    #[test]
    fn a_column_of_zeros_the_code_computed_is_named_with_a_term_taken_from_itself() {
        let asked = Asked::of(
            "Write ages.csv with the columns name,age: each member's age in whole years on 30 June 2024.",
        );
        let members = (
            "members.csv".to_owned(),
            "name,born\nAna,03/07/1990\nBen,30/06/2000\nCara,01/07/2000\n".to_owned(),
        );
        let inputs = [(&members.0, &members.1)];
        let python = "import pandas as pd\ndf = pd.read_csv('members.csv')\ndf['born'] = pd.to_datetime(df['born'], dayfirst=True)\ndf['age'] = df['born'].dt.year - df['born'].dt.year - ((df['born'].dt.month > 6))\ndf[['name', 'age']].to_csv('ages.csv', index=False)\n";
        let problems = content_problems(
            "ages.csv",
            "name,age\nAna,0\nBen,0\nCara,0\n",
            &inputs,
            &asked,
            python,
        );
        assert!(
            problems.iter().any(|p| p == "the `age` column of `ages.csv` is 0 in all 3 rows: `df['age'] = df['born'].dt.year - df['born'].dt.year - ((df['born'].dt.month > 6))` takes `df['born'].dt.year` from itself, which is always 0: one of the two should be another value (a date or number the task gives, or another column)"),
            "{problems:?}"
        );
        // Ages that differ, or zeros copied from an input: nothing to say.
        assert!(
            !content_problems(
                "ages.csv",
                "name,age\nAna,33\nBen,24\nCara,23\n",
                &inputs,
                &asked,
                python
            )
            .iter()
            .any(|p| p.contains("is 0 in all"))
        );
        let stock = (
            "stock.csv".to_owned(),
            "item,sold\na,0\nb,0\nc,0\n".to_owned(),
        );
        assert_eq!(
            table::zero_column("item,sold\na,0\nb,0\nc,0\n", &[stock.1.as_str()]),
            None
        );
        assert_eq!(
            table::zero_column("item,sold\na,0\nb,0.0\nc,0\n", &[]),
            Some(("sold".to_owned(), 3))
        );
        // Too few rows to tell, or rows that do not differ.
        assert_eq!(table::zero_column("item,sold\na,0\nb,0\n", &[]), None);
        assert_eq!(table::zero_column("item,sold\na,0\na,0\na,0\n", &[]), None);
        // Without a term taken from itself, the note asks for the values.
        assert!(
            content_problems("ages.csv", "name,age\nAna,0\nBen,0\nCara,0\n", &inputs, &asked, "df['age'] = 0\n")
                .iter()
                .any(|p| p == "the `age` column of `ages.csv` is 0 in all 3 rows: unless that is the real answer, the code computed nothing there; print the values it is computed from"),
        );
        assert_eq!(self_subtraction("age = ref.year - born.year"), None);
        assert_eq!(self_subtraction("x = n - 1 - 1"), None);
        assert_eq!(
            self_subtraction("    d = (end - end).days"),
            Some(("d = (end - end).days".to_owned(), "end".to_owned()))
        );
    }

    #[test]
    fn a_table_that_lost_columns_the_task_keeps_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(
            cwd.join("contacts.csv"),
            "name,phone,city\nAna Ruiz,(555) 123-4567,Austin\nBen Cho,555.123.4567,Boston\nCara Diaz,+1 555 987 6543,Chicago\n",
        )
        .unwrap();
        let task = "Write contacts_clean.csv with the same columns as contacts.csv but every phone number written as its 10 digits only.";
        let mut coach = Coach::new(true, task, cwd);
        fs_err::write(
            cwd.join("contacts_clean.csv"),
            "phone\n5551234567\n5551234567\n5559876543\n",
        )
        .unwrap();
        coach.after_runs(&[python_report("")], cwd);
        let note = coach
            .note_before_ending("Done.", HarnessKind::Markdown, cwd, None)
            .unwrap();
        assert!(
            note.contains("`contacts_clean.csv` has only `phone` of the columns of `contacts.csv`, where the task keeps its columns: `name`, `city` are missing. Change the values in the table and write the whole table (pandas: `df['phone'] = …`, then `df.to_csv('contacts_clean.csv', index=False)`; not `df['phone'].to_csv(…)`)"),
            "{note}"
        );
        // Every column kept, in other case or spacing: nothing to say.
        fs_err::write(
            cwd.join("contacts_clean.csv"),
            "Name, phone ,city\nAna Ruiz,5551234567,Austin\nBen Cho,5551234567,Boston\n",
        )
        .unwrap();
        let mut kept = Coach::new(true, task, cwd);
        kept.after_runs(&[python_report("")], cwd);
        assert!(
            kept.note_before_ending("Done.", HarnessKind::Markdown, cwd, None)
                .is_none_or(|note| !note.contains("where the task keeps its columns")),
        );
        // A task that picks columns is not judged.
        fs_err::write(
            cwd.join("contacts_clean.csv"),
            "phone\n5551234567\n5559876543\n",
        )
        .unwrap();
        let mut picks = Coach::new(
            true,
            "Write contacts_clean.csv with the phone column of contacts.csv, digits only.",
            cwd,
        );
        picks.after_runs(&[python_report("")], cwd);
        assert!(
            picks
                .note_before_ending("Done.", HarnessKind::Markdown, cwd, None)
                .is_none_or(|note| !note.contains("where the task keeps its columns")),
        );
        let input = (
            "contacts.csv".to_owned(),
            "a,b,c\n1,2,3\n4,5,6\n".to_owned(),
        );
        let inputs = [(&input.0, &input.1)];
        // A column of its own (renamed or added), or a header alone, is not judged.
        assert_eq!(columns_left_out("a,x\n1,9\n", &inputs), None);
        assert_eq!(columns_left_out("a,b\n", &inputs), None);
        // Written without its header: the first line is data.
        assert_eq!(columns_left_out("1,2\n4,5\n", &inputs), None);
        assert_eq!(
            columns_left_out("c,a\n3,1\n", &inputs),
            Some(LostColumns {
                input: "contacts.csv".to_owned(),
                kept: vec!["c".to_owned(), "a".to_owned()],
                missing: vec!["b".to_owned()],
            })
        );
        for phrase in [
            "keeping all other columns",
            "with all its columns",
            "the other columns unchanged",
        ] {
            assert!(
                Asked::of(&format!("Write b.csv from a.csv, {phrase}.")).same_columns,
                "{phrase}"
            );
        }
        assert!(!Asked::of("Write b.csv with the name column of a.csv.").same_columns);
    }

    #[test]
    fn a_merge_with_suffixes_or_a_key_kept_in_two_cases_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let task = "Merge a.csv and b.csv into contacts.csv, each contact once (the same email, whatever its case, is the same contact).";
        fs_err::write(cwd.join("a.csv"), "email,name\nana@x.com,Ana\n").unwrap();
        fs_err::write(cwd.join("b.csv"), "name,email\nBen,Ben@x.com\n").unwrap();
        let mut coach = Coach::new(true, task, cwd);
        fs_err::write(
            cwd.join("contacts.csv"),
            "email,name_x,name_y\nana@x.com,Ana,\nBen@x.com,,Ben\n",
        )
        .unwrap();
        let previews = coach.after_runs(&[python_report("")], cwd);
        assert!(
            previews.iter().any(|p| p.contains("has the columns `name_x` and `name_y`: pandas' `merge` kept each table's `name` with a suffix")),
            "{previews:?}"
        );
        fs_err::write(
            cwd.join("contacts.csv"),
            "email,name\nana@x.com,Ana\nben@x.com,Ben\nBen@x.com,Ben Cole\ncy@x.com,Cy\n",
        )
        .unwrap();
        let note = coach
            .note_before_ending("Done.", HarnessKind::Markdown, cwd, None)
            .unwrap();
        assert!(
            note.contains("the `email` column of `contacts.csv` holds `ben@x.com` and `Ben@x.com`, one value in other case or spacing, where the task asks for each once"),
            "{note}"
        );
        // Without "once" in the task, two spellings may be what it asks.
        fs_err::remove_file(cwd.join("contacts.csv")).unwrap();
        let mut other = Coach::new(true, "Merge a.csv and b.csv into contacts.csv.", cwd);
        fs_err::write(
            cwd.join("contacts.csv"),
            "email,name\nana@x.com,Ana\nben@x.com,Ben\nBen@x.com,Ben Cole\ncy@x.com,Cy\n",
        )
        .unwrap();
        other.after_runs(&[python_report("")], cwd);
        assert_eq!(
            other.note_before_ending("Done.", HarnessKind::Markdown, cwd, None),
            None
        );
    }

    #[test]
    fn a_result_written_by_a_block_that_builds_on_earlier_runs_is_shown_with_them() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let md = HarnessKind::Markdown;
        let task = "Write totals.csv with the header name,total";
        let mut coach = Coach::new(true, task, cwd);
        let first = "import pandas as pd\n# Read it\ndf = pd.read_csv('in.csv')\ntotals = df.groupby('name', as_index=False)['amount'].sum()\ntotals.columns = ['name']\nprint(totals)";
        coach.saw_runs(&[python_run(first)]);
        coach.saw_failure(true);
        coach.after_runs(
            &[python_report(
                "Traceback (most recent call last):\n  File \"<cell-1>\", line 5, in <module>\n    totals.columns = ['name']\nValueError: Length mismatch\n",
            )],
            cwd,
        );
        coach.saw_runs(&[python_run("print(df.columns)")]);
        coach.saw_failure(false);
        coach.after_runs(&[python_report("Index(['name', 'amount'])\n")], cwd);
        let writer = "totals.to_csv('totals.csv', index=False)";
        coach.saw_runs(&[python_run(writer)]);
        fs_err::write(cwd.join("totals.csv"), "name,amount\nAna,4.5\nBo,2\n").unwrap();
        let notes = coach.after_runs(&[python_report(crate::output::PRINTED_NOTHING)], cwd);
        let script = format!(
            "import pandas as pd\ndf = pd.read_csv('in.csv')\ntotals = df.groupby('name', as_index=False)['amount'].sum()\n{writer}"
        );
        let shown = format!(
            "The code that wrote `totals.csv` builds on your earlier runs; all of it, as one script that runs from the start:\n```python\n{script}\n```\nChange the step that makes it wrong and send the whole script, changed, in one block."
        );
        assert!(
            notes.iter().any(|n| n
                .contains("It is not right yet: `totals.csv` begins with `name,amount`")
                && n.ends_with(&format!("{shown}]"))),
            "{notes:?}"
        );
        let note = coach.note_before_ending("Done.", md, cwd, None).unwrap();
        assert!(note.ends_with(&format!(" {shown}]")), "{note}");
        // Written by a block that reads the input itself: that block alone.
        let whole = format!(
            "import pandas as pd\ndf = pd.read_csv('in.csv')\ntotals = df.groupby('name', as_index=False)['amount'].sum()\n{writer}"
        );
        coach.saw_runs(&[python_run(&whole)]);
        fs_err::write(cwd.join("totals.csv"), "name,amount\nAna,4.5\nBo,2\nCy,1\n").unwrap();
        let notes = coach.after_runs(&[python_report(crate::output::PRINTED_NOTHING)], cwd);
        assert!(
            notes
                .iter()
                .any(|n| n.ends_with("Fix the code and run it again.]")),
            "{notes:?}"
        );
        // A large model is not shown it.
        let mut large = Coach::new(false, task, cwd);
        large.saw_runs(&[python_run(first)]);
        large.after_runs(&[python_report("Traceback (most recent call last):\n  File \"<cell-1>\", line 5, in <module>\nValueError\n")], cwd);
        large.saw_runs(&[python_run(writer)]);
        let notes = large.after_runs(&[python_report(crate::output::PRINTED_NOTHING)], cwd);
        assert!(large.made_whole.is_empty() && large.runs.is_empty());
        assert!(!notes.iter().any(|n| n.contains("builds on")), "{notes:?}");
    }

    #[test]
    fn a_result_still_wrong_is_shown_with_the_block_that_wrote_it() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let md = HarnessKind::Markdown;
        let task = "Write each name once to unique.txt";
        let code = "names = open('in.txt').read().split('\\n')\nopen('unique.txt', 'w').write('\\n'.join(sorted(set(names))))";
        let mut coach = Coach::new(true, task, cwd);
        coach.saw_runs(&[python_run(code)]);
        fs_err::write(cwd.join("unique.txt"), "Bob\nbob\n").unwrap();
        coach.after_runs(&[python_report("")], cwd);
        let note = coach.note_before_ending("Done.", md, cwd, None).unwrap();
        assert!(
            note.ends_with(&format!(
                " The code that wrote `unique.txt` was:\n```python\n{code}\n```\nSend it again, changed, in one block.]"
            )),
            "{note}"
        );
        // Made by a block run again after an install: that block, not the
        // install.
        fs_err::remove_file(cwd.join("unique.txt")).unwrap();
        let mut coach = Coach::new(true, task, cwd);
        coach.saw_runs(&[Some(ProposedRun {
            call_id: None,
            language: Some("shell".to_owned()),
            code: "pip install pandas".to_owned(),
        })]);
        coach.ran_again(&python_run(code).unwrap(), &python_report(""));
        fs_err::write(cwd.join("unique.txt"), "Ann\nann\n").unwrap();
        coach.after_runs(&[python_report("")], cwd);
        let note = coach.note_before_ending("Done.", md, cwd, None).unwrap();
        assert!(note.contains(&format!("```python\n{code}\n```")), "{note}");
        // oi's own code that saved a script, or two blocks at once: no
        // block to show.
        for runs in [
            vec![Some(ProposedRun {
                call_id: None,
                language: Some("shell".to_owned()),
                code: "# oi: the reply's code is a new version of x.py\ncat > x.py".to_owned(),
            })],
            vec![python_run("print(1)"), python_run(code)],
        ] {
            fs_err::remove_file(cwd.join("unique.txt")).unwrap();
            let mut coach = Coach::new(true, task, cwd);
            coach.saw_runs(&runs);
            fs_err::write(cwd.join("unique.txt"), "Cy\ncy\n").unwrap();
            coach.after_runs(&[python_report("")], cwd);
            let note = coach.note_before_ending("Done.", md, cwd, None).unwrap();
            assert!(!note.contains("The code that wrote"), "{note}");
        }
        // A long block is not repeated.
        let long = format!("{code}\n{}", "x = 1\n".repeat(SHOWN_BLOCK_LINES));
        fs_err::remove_file(cwd.join("unique.txt")).unwrap();
        let mut coach = Coach::new(true, task, cwd);
        coach.saw_runs(&[python_run(&long)]);
        fs_err::write(cwd.join("unique.txt"), "Di\ndi\n").unwrap();
        coach.after_runs(&[python_report("")], cwd);
        let note = coach.note_before_ending("Done.", md, cwd, None).unwrap();
        assert!(!note.contains("The code that wrote"), "{note}");
    }

    #[test]
    fn a_run_that_printed_what_the_task_asks_to_write_to_a_missing_file_is_told_once() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(dir.path().join("people.csv"), "name,age\nann,31\nbob,25\n").unwrap();
        let task =
            "Write the rows of people.csv where age is over 30 to older.csv, keeping the header.";
        let printed = [python_report("  name  age\n0  ann   31\n")];
        let told = |notes: &[String]| {
            notes.iter().any(|n| {
                n == "[oi: the task asks you to write `older.csv`, which does not exist yet. If what that run printed is what it should hold, change the code that printed it to write it there and run it; do not type the values in.]"
            })
        };
        // A failed run, or one that printed nothing: not yet.
        let mut coach = Coach::new(true, task, dir.path());
        coach.saw_failure(true);
        assert!(!told(&coach.after_runs(&printed, dir.path())));
        coach.saw_failure(false);
        assert!(!told(&coach.after_runs(
            &[python_report(crate::output::PRINTED_NOTHING)],
            dir.path()
        )));
        let notes = coach.after_runs(&printed, dir.path());
        assert!(told(&notes), "{notes:?}");
        // Once a task.
        assert!(!told(&coach.after_runs(&printed, dir.path())));
        // Printed by a shell command: how to send it to the file.
        let mut coach = Coach::new(true, task, dir.path());
        let shell = Report {
            language: "shell".into(),
            ..python_report("ann,31\n")
        };
        assert!(
            coach.after_runs(&[shell], dir.path()).contains(&"[oi: the task asks you to write `older.csv`, which does not exist yet. If what that run printed is what it should hold, change the code that printed it to write it there (add `> older.csv` to the command that printed it) and run it; do not type the values in.]".to_owned())
        );
        // Written already, a large model, or a task that writes nothing.
        fs_err::write(dir.path().join("older.csv"), "name,age\nann,31\n").unwrap();
        let mut coach = Coach::new(true, task, dir.path());
        assert!(!told(&coach.after_runs(&printed, dir.path())));
        fs_err::remove_file(dir.path().join("older.csv")).unwrap();
        let mut coach = Coach::new(false, task, dir.path());
        assert!(!told(&coach.after_runs(&printed, dir.path())));
        let mut coach = Coach::new(
            true,
            "How many rows of people.csv have an age over 30?",
            dir.path(),
        );
        assert!(
            coach
                .after_runs(&printed, dir.path())
                .iter()
                .all(|n| !n.contains("does not exist yet"))
        );
    }

    #[test]
    fn a_print_inside_a_with_open_that_never_writes_to_it_is_given_the_file() {
        let code = "with open('hello.txt', 'w') as out:\n    print(\"hi\")\nprint('done')";
        let (fix, file, handle) = print_beside_open(code).unwrap();
        assert_eq!(fix.line, "print(\"hi\")");
        assert_eq!(fix.fixed, "print(\"hi\", file=out)");
        assert_eq!((file.as_str(), handle.as_str()), ("hello.txt", "out"));
        let (fix, ..) =
            print_beside_open("import os\nwith open(\"a.txt\", \"w\") as f:\n    for x in [1, 2]:\n        print(x)\n")
                .unwrap();
        assert_eq!(fix.fixed, "print(x, file=f)");
        // The handle used, `file=` given, opened to read or append, two
        // prints, a print over several lines, a print after the block:
        // left alone.
        for code in [
            "with open('a.txt', 'w') as f:\n    f.write('x')\n    print('x')",
            "with open('a.txt', 'w') as f:\n    print('x', file=f)",
            "with open('a.txt') as f:\n    print('x')",
            "with open('a.txt', 'a') as f:\n    print('x')",
            "with open('a.txt', 'w') as f:\n    print('x')\n    print('y')",
            "with open('a.txt', 'w') as f:\n    print('x',\n          'y')",
            "with open('a.txt', 'w') as f:\n    pass\nprint('x')",
        ] {
            assert_eq!(print_beside_open(code), None, "{code}");
        }
    }

    #[test]
    fn a_small_models_print_beside_the_file_it_opened_is_run_again_writing_it() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let task = "Create a file named hello.txt containing the text hi";
        let code = "with open('hello.txt', 'w') as out:\n    print(\"hi\")";
        let mut coach = Coach::new(true, task, cwd);
        coach.saw_runs(&[python_run(code)]);
        coach.saw_failure(false);
        fs_err::write(cwd.join("hello.txt"), "").unwrap();
        coach.after_runs(&[python_report("hi\n")], cwd);
        let (run, lead) = coach
            .rerun(&[python_run(code)], &[python_report("hi\n")])
            .unwrap();
        assert_eq!(
            run.code,
            "with open('hello.txt', 'w') as out:\n    print(\"hi\", file=out)"
        );
        assert!(lead.contains("so `hello.txt` stayed empty"), "{lead}");
        // Written after all (another line wrote it), or a large model: no.
        for (small, text) in [(true, "hi\n"), (false, "")] {
            let mut coach = Coach::new(small, task, cwd);
            coach.saw_runs(&[python_run(code)]);
            fs_err::write(cwd.join("hello.txt"), text).unwrap();
            coach.after_runs(&[python_report("hi\n")], cwd);
            assert_eq!(
                coach.rerun(&[python_run(code)], &[python_report("hi\n")]),
                None
            );
        }
    }

    #[test]
    fn code_that_printed_a_result_is_changed_to_write_it_to_the_file() {
        assert_eq!(
            writing_output("python", "x = 2\n\nprint(x)\n", "out.txt").as_deref(),
            Some(
                "import contextlib\nwith open('out.txt', 'w') as out, contextlib.redirect_stdout(out):\n    x = 2\n\n    print(x)"
            )
        );
        assert_eq!(
            writing_output("bash", "echo hi", "hello.txt").as_deref(),
            Some("echo hi > hello.txt")
        );
        assert_eq!(
            writing_output("shell", "ls | sort", "list.txt").as_deref(),
            Some("{\nls | sort\n} > list.txt")
        );
        // Code that writes files itself, a string the indent would change,
        // a long block, a name the shell would need quoted, another
        // language: left as it is.
        for (language, code, name) in [
            (
                "python",
                "open('a.txt', 'w').write('hi')\nprint('done')",
                "out.txt",
            ),
            ("python", "df.to_csv('b.csv')\nprint(df)", "out.txt"),
            ("python", "print(\"\"\"a\nb\"\"\")", "out.txt"),
            ("python", "print('a' + \\\n 'b')", "out.txt"),
            ("shell", "echo hi > other.txt", "out.txt"),
            ("shell", "echo hi", "my file.txt"),
            ("javascript", "console.log(1)", "out.txt"),
        ] {
            assert_eq!(writing_output(language, code, name), None, "{code}");
        }
        let long = "print(1)\n".repeat(SHOWN_BLOCK_LINES + 1);
        assert_eq!(writing_output("python", &long, "out.txt"), None);
    }

    #[test]
    fn what_a_guess_printed_is_not_offered_as_the_result_to_write() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(cwd.join("guide.md"), "# Guide\n## Install\n").unwrap();
        let task = "Write toc.md, a table of contents for guide.md.";
        let mut coach = Coach::new(true, task, cwd);
        coach.saw_runs(&[python_run("print(1 + 1)")]);
        coach.saw_failure(false);
        let notes = coach.after_runs(&[python_report("2\n")], cwd);
        assert!(
            notes.iter().any(|n| n.contains("it is a guess")),
            "{notes:?}"
        );
        assert!(
            !notes
                .iter()
                .any(|n| n.contains("redirect_stdout") || n.contains("does not exist yet")),
            "{notes:?}"
        );
        assert_eq!(coach.standing_write(cwd), None);
        // Code that looked something up and printed it still is.
        coach.saw_runs(&[python_run("import os\nprint(len(os.listdir('.')))")]);
        coach.saw_failure(false);
        let notes = coach.after_runs(&[python_report("1\n")], cwd);
        assert!(
            notes.iter().any(|n| n.contains("redirect_stdout")),
            "{notes:?}"
        );
    }

    #[test]
    fn a_small_model_ending_without_writing_what_its_code_printed_gets_that_code_run_writing_it() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let task = "Create a file named hello.txt containing the text hi";
        let code = "print('hi')";
        let mut coach = Coach::new(true, task, cwd);
        // Not told yet: nothing to run.
        assert_eq!(coach.standing_write(cwd), None);
        coach.saw_runs(&[python_run(code)]);
        coach.saw_failure(false);
        let notes = coach.after_runs(&[python_report("hi\n")], cwd);
        let block = "import contextlib\nwith open('hello.txt', 'w') as out, contextlib.redirect_stdout(out):\n    print('hi')";
        assert!(
            notes.iter().any(|n| n.contains("does not exist yet")
                && n.contains(&format!("```python\n{block}\n```"))),
            "{notes:?}"
        );
        let (run, name, note) = coach.standing_write(cwd).unwrap();
        assert_eq!(run.code, block);
        assert_eq!(run.language.as_deref(), Some("python"));
        assert_eq!(name, "hello.txt");
        assert!(note.contains("oi ran your last code again"), "{note}");
        // Once a task.
        assert_eq!(coach.standing_write(cwd), None);
        // Written already, or a large model: nothing.
        let mut coach = Coach::new(true, task, cwd);
        coach.saw_runs(&[python_run(code)]);
        coach.after_runs(&[python_report("hi\n")], cwd);
        fs_err::write(cwd.join("hello.txt"), "hi\n").unwrap();
        assert_eq!(coach.standing_write(cwd), None);
        fs_err::remove_file(cwd.join("hello.txt")).unwrap();
        let mut large = Coach::new(false, task, cwd);
        large.saw_runs(&[python_run(code)]);
        large.after_runs(&[python_report("hi\n")], cwd);
        assert_eq!(large.standing_write(cwd), None);
        // A failed run, or one that printed nothing, gives no block.
        let mut coach = Coach::new(true, task, cwd);
        coach.saw_runs(&[python_run("x = 1")]);
        coach.after_runs(&[python_report(crate::output::PRINTED_NOTHING)], cwd);
        assert_eq!(coach.standing_write(cwd), None);
        // A shell command: told how with `>`, run with it.
        let mut coach = Coach::new(true, task, cwd);
        coach.saw_runs(&[Some(ProposedRun {
            call_id: None,
            language: Some("shell".to_owned()),
            code: "echo hi".to_owned(),
        })]);
        let shell = Report {
            language: "shell".into(),
            ..python_report("hi\n")
        };
        let notes = coach.after_runs(&[shell], cwd);
        assert!(
            notes
                .iter()
                .any(|n| n.contains("add `> hello.txt`") && !n.contains("```")),
            "{notes:?}"
        );
        assert_eq!(
            coach.standing_write(cwd).unwrap().0.code,
            "echo hi > hello.txt"
        );
    }

    #[test]
    fn a_result_copied_beside_itself_is_named_and_its_line_changed_when_sent_again() {
        assert!(beside("ext_counts_sorted.csv", "ext_counts.csv"));
        assert!(beside("totals2.csv", "totals.csv"));
        assert!(!beside("ext_counts.txt", "ext_counts.csv"));
        assert!(!beside("extra.csv", "ext.csv"));
        assert!(!beside("ext.csv", "ext.csv"));
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let task = "Count the files by extension into ext_counts.csv, most files first.";
        let mut coach = Coach::new(true, task, cwd);
        fs_err::write(cwd.join("ext_counts.csv"), "extension,count\nmd,2\npy,3\n").unwrap();
        let code = "df = pd.read_csv('ext_counts.csv').sort_values('count', ascending=False)\ndf.to_csv('ext_counts_sorted.csv', index=False)\n";
        let ran = python_run(code);
        coach.saw_runs(std::slice::from_ref(&ran));
        fs_err::write(
            cwd.join("ext_counts_sorted.csv"),
            "extension,count\npy,3\nmd,2\n",
        )
        .unwrap();
        let notes = coach.after_runs(&[python_report(crate::output::PRINTED_NOTHING)], cwd);
        assert!(
            notes.contains(&"[oi: your code wrote `ext_counts_sorted.csv` (`df.to_csv('ext_counts_sorted.csv', index=False)`), which the task does not ask for, and left `ext_counts.csv` as it was. Write `ext_counts.csv` itself (`df.to_csv('ext_counts.csv', index=False)`).]".to_owned()),
            "{notes:?}"
        );
        let mut actions = vec![Action::Run(ran.clone().unwrap())];
        assert!(coach.apply_line_fix(&mut actions).is_some());
        let Action::Run(changed) = &actions[0] else {
            panic!("{actions:?}")
        };
        assert!(
            changed
                .code
                .ends_with("df.to_csv('ext_counts.csv', index=False)\n"),
            "{}",
            changed.code
        );
        // Once a task.
        coach.saw_runs(std::slice::from_ref(&ran));
        let notes = coach.after_runs(&[python_report(crate::output::PRINTED_NOTHING)], cwd);
        assert!(
            !notes
                .iter()
                .any(|n| n.contains("which the task does not ask for")),
            "{notes:?}"
        );
    }

    #[test]
    fn a_result_written_under_another_name_is_named_and_its_line_changed_when_sent_again() {
        assert_eq!(
            written_names(
                "df.to_csv('out.csv', index=False)\nwith open('avg.txt', 'w') as f:\n    f.write('1')\nopen('users.json').read()\n"
            ),
            [
                (
                    "df.to_csv('out.csv', index=False)".to_owned(),
                    "out.csv".to_owned()
                ),
                (
                    "with open('avg.txt', 'w') as f:".to_owned(),
                    "avg.txt".to_owned()
                ),
            ]
        );
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(dir.path().join("users.json"), "[]").unwrap();
        let task = "Write the average age of the users in users.json to average.txt.";
        let code = "import json\nwith open('avg.txt', 'w') as file:\n    file.write(f\"{avg}\")\n";
        let ran = Some(ProposedRun {
            language: Some("python".to_owned()),
            code: code.to_owned(),
            call_id: None,
        });
        let mut coach = Coach::new(true, task, dir.path());
        coach.saw_runs(std::slice::from_ref(&ran));
        fs_err::write(dir.path().join("avg.txt"), "35.25").unwrap();
        let notes = coach.after_runs(&[python_report(crate::output::PRINTED_NOTHING)], dir.path());
        assert!(
            notes.contains(&"[oi: the task asks you to write `average.txt`, but your code wrote `avg.txt` (`with open('avg.txt', 'w') as file:`). Write `average.txt`, the name the task gives (`with open('average.txt', 'w') as file:`).]".to_owned()),
            "{notes:?}"
        );
        let mut actions = vec![Action::Run(ran.clone().unwrap())];
        assert!(coach.apply_line_fix(&mut actions).is_some());
        let Action::Run(changed) = &actions[0] else {
            panic!("{actions:?}")
        };
        assert_eq!(
            changed.code,
            "import json\nwith open('average.txt', 'w') as file:\n    file.write(f\"{avg}\")\n"
        );
        // A block that opens the file itself is whole already: run as
        // written, even after other batches.
        coach.saw_runs(&[Some(ProposedRun {
            language: Some("python".to_owned()),
            code: "print(1)\n".to_owned(),
            call_id: None,
        })]);
        let alone = "with open('average.txt', 'w') as file:\n    file.write('1')\n";
        let mut actions = vec![Action::Run(ProposedRun {
            language: Some("python".to_owned()),
            code: alone.to_owned(),
            call_id: None,
        })];
        assert_eq!(coach.apply_line_fix(&mut actions), None);
        // A file of another kind is not taken for the result.
        let mut coach = Coach::new(true, "Write the average age to average.csv.", dir.path());
        coach.saw_runs(std::slice::from_ref(&ran));
        let notes = coach.after_runs(&[python_report(crate::output::PRINTED_NOTHING)], dir.path());
        assert!(
            notes.iter().all(|n| !n.contains("your code wrote")),
            "{notes:?}"
        );
    }

    #[test]
    fn a_known_fix_the_model_ends_without_is_run_for_it_once() {
        let dir = tempfile::tempdir().unwrap();
        let task = "Average the readings in readings.csv and write the average to avg.txt.";
        let code = "avg = 21.0\nwith open('avg.txt', 'w') as file:\n    file.write(f\"The average is {avg}.\")\n";
        fs_err::write(dir.path().join("readings.csv"), "t\n21.0\n").unwrap();
        let mut coach = Coach::new(true, task, dir.path());
        coach.saw_runs(&[python_run(code)]);
        fs_err::write(dir.path().join("avg.txt"), "The average is 21.0.").unwrap();
        coach.after_runs(&[python_report(crate::output::PRINTED_NOTHING)], dir.path());
        // Not before the completion check told it.
        assert_eq!(coach.standing_fix(), None);
        let note = coach
            .note_before_ending("The task is done.", HarnessKind::Markdown, dir.path(), None)
            .unwrap();
        assert!(note.contains("file.write(f\"{avg}\")"), "{note}");
        assert_eq!(
            coach.note_before_ending("The task is done.", HarnessKind::Markdown, dir.path(), None),
            None
        );
        let (run, fix) = coach.standing_fix().unwrap();
        assert_eq!(
            run.code,
            "avg = 21.0\nwith open('avg.txt', 'w') as file:\n    file.write(f\"{avg}\")\n"
        );
        assert_eq!(run.language.as_deref(), Some("python"));
        assert_eq!(fix.how, FixedAs::Ended);
        assert_eq!(
            fix.note(),
            "[oi: you ended with `file.write(f\"The average is {avg}.\")` still in your code; oi ran your last code again with it as `file.write(f\"{avg}\")`, as the note said.]"
        );
        // Once a task.
        assert_eq!(coach.standing_fix(), None);

        // Code that ran since without the line, the result as it was: the
        // change still stands.
        let reran = |later: &str| {
            fs_err::remove_file(dir.path().join("avg.txt")).unwrap();
            let mut coach = Coach::new(true, task, dir.path());
            fs_err::write(dir.path().join("avg.txt"), "The average is 21.0.").unwrap();
            coach.saw_runs(&[python_run(code)]);
            coach.after_runs(&[python_report(crate::output::PRINTED_NOTHING)], dir.path());
            coach.note_before_ending("Done.", HarnessKind::Markdown, dir.path(), None);
            coach.saw_runs(&[python_run(later)]);
            coach
        };
        let mut coach = reran("print('Average:', avg)\n");
        assert_eq!(
            coach.standing_fix().map(|(run, _)| run.code),
            Some(
                "avg = 21.0\nwith open('avg.txt', 'w') as file:\n    file.write(f\"{avg}\")\n"
                    .to_owned()
            )
        );
        // The result written again since: nothing stands.
        let mut coach = reran("open('avg.txt', 'w').write('21.0')\n");
        fs_err::write(dir.path().join("avg.txt"), "21.0").unwrap();
        assert_eq!(coach.standing_fix(), None);
        // Not for models that need no help.
        let mut coach = Coach::new(false, task, dir.path());
        coach.saw_runs(&[python_run(code)]);
        coach.after_runs(&[python_report(crate::output::PRINTED_NOTHING)], dir.path());
        assert_eq!(coach.standing_fix(), None);
    }

    #[test]
    fn a_known_fix_is_not_made_over_the_models_own() {
        let block =
            "result = df[['timestamp', 'net']]\nresult.to_csv('net_by_month.csv', index=False)\n";
        let line = "result.to_csv('net_by_month.csv', index=False)";
        let fixed = "result[['timestamp', 'net']].rename(columns={'timestamp': 'month'}).to_csv('net_by_month.csv', index=False)";
        let own = "result = df[['timestamp', 'net']]\nresult = result.rename(columns={'timestamp': 'month', 'net': 'net'})\nresult.to_csv('net_by_month.csv', index=False)\n";
        assert!(made_its_own_fix(own, line, fixed, block));
        // The same block again, or one changed elsewhere: the fix is made.
        assert!(!made_its_own_fix(block, line, fixed, block));
        let other = "result = df[['timestamp', 'net']].round(2)\nresult.to_csv('net_by_month.csv', index=False)\n";
        assert!(!made_its_own_fix(other, line, fixed, block));
        // A fix adding no string is never taken as made.
        assert!(!made_its_own_fix(
            "x.reset_index()\nx.to_csv('a.csv', index=False)\n",
            "x.to_csv('a.csv', index=False)",
            "x.reset_index().to_csv('a.csv', index=False)",
            "x.to_csv('a.csv', index=False)\n",
        ));
    }

    #[test]
    fn the_line_named_to_change_is_changed_when_sent_again() {
        let dir = tempfile::tempdir().unwrap();
        let task = "Write the average age of the users in users.json to average.txt.";
        let code = "import json\nwith open('average.txt', 'w') as file:\n    file.write(f\"The average age is: {avg}\")\n";
        let run = |code: &str, language: &str| {
            Action::Run(ProposedRun {
                language: Some(language.to_owned()),
                code: code.to_owned(),
                call_id: None,
            })
        };
        let mut coach = Coach::new(true, task, dir.path());
        coach.saw_runs(&[Some(ProposedRun {
            language: Some("python".to_owned()),
            code: code.to_owned(),
            call_id: None,
        })]);
        // Nothing written yet: nothing to change.
        coach.after_runs(&[python_report(crate::output::PRINTED_NOTHING)], dir.path());
        let mut actions = vec![run(code, "python")];
        assert_eq!(coach.apply_line_fix(&mut actions), None);
        fs_err::write(dir.path().join("average.txt"), "The average age is: 35.25").unwrap();
        coach.after_runs(&[python_report(crate::output::PRINTED_NOTHING)], dir.path());
        // Known from the batch that wrote it, after other batches ran.
        coach.saw_runs(&[Some(ProposedRun {
            language: Some("python".to_owned()),
            code: "1^2 = 1\n".to_owned(),
            call_id: None,
        })]);
        coach.after_runs(&[python_report("SyntaxError")], dir.path());
        let mut actions = vec![run(code, "python")];
        assert_eq!(
            coach.apply_line_fix(&mut actions),
            Some(LineFix {
                code: "file.write(f\"The average age is: {avg}\")".to_owned(),
                fixed: "file.write(f\"{avg}\")".to_owned(),
                how: FixedAs::Line,
            })
        );
        let Action::Run(changed) = &actions[0] else {
            panic!("{actions:?}")
        };
        assert_eq!(
            changed.code,
            "import json\nwith open('average.txt', 'w') as file:\n    file.write(f\"{avg}\")\n"
        );
        // Only the changed line (with a line before it): the block it
        // belongs in runs whole, with the change.
        let mut actions = vec![run("avg = 35.25\nfile.write(f\"{avg}\")\n", "python")];
        let fix = coach.apply_line_fix(&mut actions).unwrap();
        assert_eq!(fix.how, FixedAs::Block);
        assert_eq!(
            fix.note(),
            "[oi: your line `file.write(f\"{avg}\")` went into the block that had `file.write(f\"The average age is: {avg}\")` in its place, and oi ran that block whole.]"
        );
        let Action::Run(changed) = &actions[0] else {
            panic!("{actions:?}")
        };
        assert_eq!(
            changed.code,
            "import json\nwith open('average.txt', 'w') as file:\n    file.write(f\"{avg}\")\n"
        );
        // Other code, the shell, or a large model: left as it is.
        for (code, language) in [("print(avg)", "python"), (code, "bash")] {
            let mut actions = vec![run(code, language)];
            assert_eq!(coach.apply_line_fix(&mut actions), None);
        }
        let mut large = Coach::new(false, task, dir.path());
        large.saw_runs(&[Some(ProposedRun {
            language: Some("python".to_owned()),
            code: code.to_owned(),
            call_id: None,
        })]);
        let mut actions = vec![run(code, "python")];
        assert_eq!(large.apply_line_fix(&mut actions), None);
    }

    #[test]
    fn questions_are_told_from_tasks() {
        assert!(is_question("What is 2 ** 20?"));
        assert!(is_question("how many CPUs does this machine have"));
        assert!(!is_question("Delete the temporary files in cache/."));
        assert!(!is_question(
            "Write the message of the latest commit to last.txt."
        ));
    }

    #[test]
    fn a_file_named_as_an_example_is_not_asked_for() {
        let task = "Make a folder by_country and in it one CSV per country, named after the country (for example united_kingdom.csv). Then write the count to count.txt.";
        assert!(is_example(task, "united_kingdom.csv"));
        assert!(!is_example(task, "count.txt"));
        // Named as an example and again as itself: asked for.
        assert!(!is_example(
            "Files like a.txt are notes. Write the sum to a.txt.",
            "a.txt"
        ));
        let dir = tempfile::tempdir().unwrap();
        let coach = Coach::new(true, task, dir.path());
        assert_eq!(coach.expected, ["count.txt"]);
        // Both sides of a rule shown in brackets are examples of it.
        let moved = "Move every .bak file under project/ into backups/, keeping its folders (project/src/a.py.bak goes to backups/src/a.py.bak). Write the count to moved.txt.";
        assert!(is_example(moved, "project/src/a.py.bak"));
        assert!(is_example(moved, "backups/src/a.py.bak"));
        assert!(!is_example(moved, "moved.txt"));
        let coach = Coach::new(true, moved, dir.path());
        assert_eq!(coach.expected, ["moved.txt"]);
        // Brackets that only name a file: asked for.
        assert!(!is_example(
            "Write the total (in total.txt) and go to bed.",
            "total.txt"
        ));
    }

    #[test]
    fn a_question_that_says_to_write_a_file_must_write_it() {
        assert!(says_to_write(
            "How many commits does the repository have? Write the number to commits.txt.",
            "commits.txt"
        ));
        assert!(says_to_write("Save the rows in out.csv", "out.csv"));
        // A file made from others is written too.
        assert!(says_to_write(
            "Convert people.csv to people.json: a list of objects.",
            "people.json"
        ));
        assert!(says_to_write(
            "Merge a.env and b.env into merged.env.",
            "merged.env"
        ));
        assert!(says_to_write(
            "Flatten settings.json into flat.txt: one line per leaf value.",
            "flat.txt"
        ));
        assert!(!says_to_write(
            "Load settings.json into memory and print its keys.",
            "settings.json"
        ));
        assert!(!says_to_write(
            "Which of a.txt and b.txt is bigger?",
            "a.txt"
        ));
        assert!(!says_to_write(
            "Write a poem. Is notes.txt longer than 3 lines?",
            "notes.txt"
        ));
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let md = HarnessKind::Markdown;
        let task =
            "How many commits does the git repository here have? Write the number to commits.txt.";
        let mut coach = Coach::new(true, task, cwd);
        assert!(coach.wants_code());
        coach.heard("```python\nprint(4)\n```");
        coach.saw_runs(&[Some(ProposedRun {
            call_id: None,
            language: Some("python".into()),
            code: "print(4)".into(),
        })]);
        coach.after_runs(&[python_report("4\n")], cwd);
        coach.heard("The answer is 4.");
        let note = coach
            .note_before_ending("The answer is 4.", md, cwd, None)
            .unwrap();
        assert!(
            note.contains("the task asks you to write `commits.txt`"),
            "{note}"
        );
        assert!(coach.wants_code(), "a question or not, it must write it");
        // Still missing after a run: named again before it ends.
        coach.heard("```python\nprint(4)\n```");
        coach.after_runs(&[python_report("4\n")], cwd);
        let note = coach
            .note_before_ending("The answer is 4.", md, cwd, None)
            .unwrap();
        assert!(
            note.contains("`commits.txt` still does not exist"),
            "{note}"
        );
        // A question naming a file it does not say to write may be
        // answered (see `a_task_that_asks_for_something_done_needs_code`).
        let mut asked = Coach::new(true, "Which of a.txt and b.txt is bigger?", cwd);
        asked.heard("a.txt");
        let note = asked.note_before_ending("a.txt", md, cwd, None).unwrap();
        assert!(!note.contains("the task asks you to write `"), "{note}");
    }

    #[test]
    fn the_scripts_a_task_asks_to_change_are_known() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(cwd.join("average.py"), "print(1)\n").unwrap();
        fs_err::write(cwd.join("numbers.txt"), "1\n").unwrap();
        let rewrites = |task: &str| Coach::new(true, task, cwd).rewrites().to_vec();
        let average = vec!["average.py".to_owned()];
        assert_eq!(
            rewrites("average.py crashes on numbers.txt. Fix average.py."),
            average
        );
        assert_eq!(
            rewrites("Add an option --sort to average.py, then run it."),
            average
        );
        for task in [
            "Run average.py on numbers.txt and write what it prints to out.txt.",
            "Why does average.py crash on numbers.txt?",
            "Fix average.py? Which line is wrong?",
            "Fix sum.py.",
        ] {
            assert!(rewrites(task).is_empty(), "{task}");
        }
    }

    #[test]
    fn a_line_of_the_script_to_change_run_alone_is_told_once() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(cwd.join("average.py"), "total = 1\nprint(total)\n").unwrap();
        let mut coach = Coach::new(true, "Fix average.py.", cwd);
        let python = python_run;
        let failed = python_report("NameError: name 'total' is not defined");
        let told = |notes: &[String]| {
            notes.contains(&"[oi: that code ran on its own, not inside `average.py`, so the names the script defines do not exist there. To change `average.py`, send all of it, changed, in one block.]".to_owned())
        };
        // A script's new version run as a file is not a piece of it.
        coach.saw_runs(&[None]);
        assert!(!told(&coach.after_runs(std::slice::from_ref(&failed), cwd)));
        coach.saw_runs(&[python("print(total // count)")]);
        assert!(told(&coach.after_runs(std::slice::from_ref(&failed), cwd)));
        coach.saw_runs(&[python("print(total // count)")]);
        assert!(!told(&coach.after_runs(std::slice::from_ref(&failed), cwd)));
        // Not when the task asks for no change to a script.
        let mut other = Coach::new(true, "Write the average of numbers.txt to avg.txt.", cwd);
        other.saw_runs(&[python("print(total // count)")]);
        assert!(!told(&other.after_runs(&[failed], cwd)));
    }

    #[test]
    fn a_new_version_of_a_script_that_failed_gets_no_diff_to_copy() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(cwd.join("average.py"), "print(totl)\n").unwrap();
        let mut coach = Coach::new(true, "Fix average.py.", cwd);
        // The saved version runs in the shell.
        let report = |text: &str| Report {
            language: "shell".to_owned(),
            ..python_report(text)
        };
        fs_err::write(cwd.join("average.py"), "print(tota)\n").unwrap();
        coach.saw_failure(true);
        let notes = coach.after_runs(&[report("NameError: name 'tota' is not defined")], cwd);
        assert!(
            notes.contains(&"[oi: `average.py` now holds your new version, which failed as shown. Send all of it again, fixed, in one block.]".to_owned()),
            "{notes:?}"
        );
        // One that ran: what it changed.
        fs_err::write(cwd.join("average.py"), "print(1)\n").unwrap();
        coach.saw_failure(false);
        let notes = coach.after_runs(&[report("1")], cwd);
        assert!(
            notes.iter().any(|n| n.contains("-print(tota)\n+print(1)")),
            "{notes:?}"
        );
    }

    #[test]
    fn a_labelled_result_gets_the_models_own_line_fixed() {
        let python = "import json\navg = 35.25\nwith open('average.txt', 'w') as file:\n    file.write(f\"The average age of the users is: {avg}\")\n";
        assert_eq!(
            own_write_fix(python, "The average age of the users is: 35.25", "35.25"),
            " (in your code, `file.write(f\"The average age of the users is: {avg}\")` becomes `file.write(f\"{avg}\")`)"
        );
        assert_eq!(
            own_write_fix(
                "print(f'Mean: {m:.2f}\\n', file=out)",
                "Mean: 25.50",
                "25.50"
            ),
            " (in your code, `print(f'Mean: {m:.2f}\\n', file=out)` becomes `print(f'{m:.2f}\\n', file=out)`)"
        );
        // Fields before the value's: its field alone is kept.
        assert_eq!(
            own_write_fix("    f.write(f\"{i}^2 = {i**2}\\n\")", "1^2 = 1", "1"),
            " (in your code, `f.write(f\"{i}^2 = {i**2}\\n\")` becomes `f.write(f\"{i**2}\\n\")`)"
        );
        assert_eq!(
            own_write_fix("f.write(f'{a}: {b}')", "Mean age: 35.25", "35.25"),
            " (in your code, `f.write(f'{a}: {b}')` becomes `f.write(f'{b}')`)"
        );
        // Words other than the result's (before or after its field), no
        // words, no f-string, escaped or nested braces.
        for python in [
            "f.write(f'Total: {t}')",
            "f.write(f'{b} is: {a} years')",
            "f.write(f'{avg}')",
            "f.write('The average age of the users is: ' + str(avg))",
            "elif'x{a}'",
            "f.write(f'{{x}} is: {avg}')",
            "f.write(f'is: {avg:{w}}')",
        ] {
            assert_eq!(
                own_write_fix(python, "The average age of the users is: 35.25", "35.25"),
                "",
                "{python}"
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mean.txt");
        fs_err::write(&path, "Mean: 25.5\n").unwrap();
        let preview = file_preview(
            "mean.txt",
            &path,
            11,
            &[],
            &Asked::default(),
            "open('mean.txt', 'w').write(f'Mean: {mean}\\n')",
        )
        .unwrap();
        assert!(
            preview.contains("as `open('mean.txt', 'w').write('25.5\\n')` writes it) (in your code, `open('mean.txt', 'w').write(f'Mean: {mean}\\n')` becomes `open('mean.txt', 'w').write(f'{mean}\\n')`).]"),
            "{preview}"
        );
    }

    #[test]
    fn a_header_other_than_the_one_asked_gets_the_pandas_line_that_writes_it() {
        let asked = Asked::of("Save them to passed.csv with the columns name,score.");
        let python = "import pandas as pd\npassed = df[df['Score'] >= 60]\npassed.to_csv('passed.csv', index=False)\n";
        let text = "Student,Score,Class\nAna Ruiz,78.0,A\n";
        assert_eq!(
            content_problems("passed.csv", text, &[], &asked, python),
            [
                "`passed.csv` begins with `Student,Score,Class` where the task asks for the header `name,score` (in your code, write it with `passed[['Student', 'Score']].rename(columns={'Student': 'name', 'Score': 'score'}).to_csv('passed.csv', index=False)`)"
            ]
        );
        // Written another way, or too few columns: the header alone.
        for (python, text) in [
            ("import csv\nw.writerow(['Student', 'Score'])\n", text),
            (python, "Student\nAna Ruiz\n"),
        ] {
            assert_eq!(
                content_problems("passed.csv", text, &[], &asked, python),
                [format!(
                    "`passed.csv` begins with `{}` where the task asks for the header `name,score`",
                    text.lines().next().unwrap()
                )]
            );
        }
    }

    #[test]
    fn an_asked_column_named_for_a_time_is_matched_only_to_dates() {
        let asked = Asked::of("Write net_by_month.csv with the header month,net.");
        let python = "import pandas as pd\nnet_by_month.to_csv('net_by_month.csv', index=False)\n";
        let text = "net,type,timestamp\n120.5,1,2024-01\n80.0,1,2024-02\n";
        assert_eq!(
            content_problems("net_by_month.csv", text, &[], &asked, python),
            [
                "`net_by_month.csv` begins with `net,type,timestamp` where the task asks for the header `month,net` (in your code, write it with `net_by_month[['timestamp', 'net']].rename(columns={'timestamp': 'month'}).to_csv('net_by_month.csv', index=False)`)"
            ]
        );
        // An amount takes no id: here no column is left for `net`.
        let ids = "timestamp,id,type\n2024-01-05T09:12:00,1,sale\n2024-01-19T14:00:10,2,sale\n";
        assert_eq!(
            content_problems("net_by_month.csv", ids, &[], &asked, python),
            [
                "`net_by_month.csv` begins with `timestamp,id,type` where the task asks for the header `month,net`"
            ]
        );
        // No column of dates: no column is guessed for `month`.
        let undated = "net,type,id\n120.5,1,7\n80.0,1,8\n";
        assert_eq!(
            content_problems("net_by_month.csv", undated, &[], &asked, python),
            [
                "`net_by_month.csv` begins with `net,type,id` where the task asks for the header `month,net`"
            ]
        );
    }

    #[test]
    fn a_search_matching_inside_words_or_counting_matches_is_named() {
        let asked = Asked::of(
            "How many lines of notes.txt mention the word \"cache\" as a whole word, in any case? Write just the number to cache_lines.txt.",
        );
        assert!(asked.whole_word && asked.counts_lines);
        let naive = search_problems(
            "grep -o -i \"cache\" notes.txt | wc -l > cache_lines.txt\n",
            &asked,
        );
        assert_eq!(naive.len(), 2, "{naive:?}");
        assert!(naive[0].contains("add `-w` to `grep`"), "{naive:?}");
        assert!(naive[1].contains("`grep -c` counts the lines"), "{naive:?}");
        // Whole words, lines counted: nothing to say.
        for right in [
            "grep -ciw cache notes.txt > cache_lines.txt",
            "grep -i -w 'cache' notes.txt | wc -l > cache_lines.txt",
            "grep -ic '\\bcache\\b' notes.txt > cache_lines.txt",
            "n = sum(1 for line in open('notes.txt') if re.search(r'\\bcache\\b', line, re.I))",
            "n = sum(1 for line in open('notes.txt') if 'cache' in line.lower().split())",
            "for line in open('notes.txt'):\n    words = line.lower().split()\n    if 'cache' in words:\n        n += 1",
        ] {
            assert_eq!(
                search_problems(right, &asked),
                Vec::<String>::new(),
                "{right}"
            );
        }
        let python = search_problems(
            "n = sum(1 for line in open('notes.txt') if 'cache' in line.lower())",
            &asked,
        );
        assert!(python[0].contains("re.search(r'\\bword\\b'"), "{python:?}");
        // A task that asks for no whole word: a plain grep is fine.
        let plain = Asked::of("Write the lines of app.log that mention ERROR to errors.txt.");
        assert!(search_problems("grep ERROR app.log > errors.txt", &plain).is_empty());
    }

    #[test]
    fn a_header_lacking_the_index_a_pivot_made_gets_reset_index() {
        let asked = Asked::of(
            "Write wide.csv with one row per day and one column per metric, the columns day, clicks, views in that order.",
        );
        let python = "import pandas as pd\ndf = pd.read_csv('metrics.csv')\nwide_df = df.pivot(index='day', columns='metric', values='value')\nwide_df.fillna(0, inplace=True)\nwide_df.to_csv('wide.csv', index=False)\n";
        let text = "clicks,views\n12.0,300.0\n20.0,340.0\n";
        assert_eq!(
            content_problems("wide.csv", text, &[], &asked, python),
            [
                "`wide.csv` begins with `clicks,views` where the task asks for the header `day,clicks,views` (`day` is the index of the table your code made at `wide_df = df.pivot(index='day', columns='metric', values='value')`, and `index=False` leaves the index out: write `wide_df.reset_index().to_csv('wide.csv', index=False)`)"
            ]
        );
        // Written with the index, or the column made no index: no such fix.
        assert!(
            content_problems(
                "wide.csv",
                "day,clicks,views\n1,12,300\n",
                &[],
                &asked,
                python
            )
            .is_empty()
        );
        let other = "import pandas as pd\nwide_df = df[['clicks', 'views']]\nwide_df.to_csv('wide.csv', index=False)\n";
        assert!(!content_problems("wide.csv", text, &[], &asked, other)[0].contains("reset_index"));
        // An index made a column again, or the column renamed away: the
        // index is not what the header lacks.
        let asked = Asked::of(
            "Write totals.csv with the header name,total: one row per customer, sorted by name.",
        );
        let text = "customer,total\nAna Lima,15.0\n";
        for python in [
            "t = merged.groupby('name')['amount'].sum().reset_index()\nt = t.rename(columns={'name': 'customer', 'amount': 'total'})\nt.to_csv('totals.csv', index=False)\n",
            "t = merged.groupby('name', as_index=False)['amount'].sum()\nt.columns = ['customer', 'total']\nt.to_csv('totals.csv', index=False)\n",
        ] {
            let problems = content_problems("totals.csv", text, &[], &asked, python);
            assert!(!problems[0].contains("is the index"), "{problems:?}");
        }
    }

    #[test]
    fn python_booleans_where_the_task_writes_them_in_lower_case_are_named() {
        let asked = Asked::of(
            "Flatten settings.json into flat.txt: path=value lines (booleans as true/false), sorted by path.",
        );
        let text = "app.debug=False\napp.name=Ledger\nfeatures.beta=True\n";
        assert_eq!(
            content_problems("flat.txt", text, &[], &asked, ""),
            [
                "`flat.txt` has `False` where the task writes `false`: Python prints its booleans capitalized; write `str(value).lower()` for a bool, or the value through `json.dumps(value)`, or fix the file as it is: `import re`, `text = re.sub(r'\\bFalse\\b', 'false', re.sub(r'\\bTrue\\b', 'true', open('flat.txt').read()))`, then `open('flat.txt', 'w').write(text)`"
            ]
        );
        // Lower case already, or a task that does not write them so.
        assert!(content_problems("flat.txt", &text.to_lowercase(), &[], &asked, "").is_empty());
        let other = Asked::of("Write the settings to flat.txt, sorted by path.");
        assert!(content_problems("flat.txt", text, &[], &other, "").is_empty());
        // `None` where the task writes `null`.
        let nulls = Asked::of("Write each key=value to out.txt, a missing value as null.");
        assert!(
            content_problems("out.txt", "a=1\nb=None\n", &[], &nulls, "")[0]
                .contains("has `None` where the task writes `null`")
        );
    }

    #[test]
    fn dates_in_another_form_where_the_task_asks_iso_are_named() {
        let asked = Asked::of(
            "Write daily_ips.csv with the header date,ips and one row per day, dates as YYYY-MM-DD.",
        );
        let text = "date,ips\n[03/Mar/2024:23:58:01,10.0.0.1\n";
        assert_eq!(
            content_problems("daily_ips.csv", text, &[], &asked, ""),
            [
                "`daily_ips.csv` writes a date as `[03/Mar/2024:23:58:01` where the task asks for YYYY-MM-DD (like `2024-03-09`): read each date with `datetime.strptime(value, format)` in the format it is written in (`from datetime import datetime`), and write `.strftime('%Y-%m-%d')`"
            ]
        );
        for (text, date) in [
            ("date,ips\n03/09/2024,2\n", "03/09/2024"),
            ("when\nMarch 9, 2024\n", "March 9, 2024"),
            ("d\n2024/03/09\n", "2024/03/09"),
        ] {
            assert_eq!(other_date(text).as_deref(), Some(date), "{text}");
        }
        // ISO dates, or no date at all: nothing to say.
        assert!(
            content_problems("daily_ips.csv", "date,ips\n2024-03-03,2\n", &[], &asked, "")
                .is_empty()
        );
        assert_eq!(other_date("ip,count\n10.0.0.1,3\n1.5,2\n"), None);
        // A task that asks no date form says nothing of them.
        let other = Asked::of("Write daily_ips.csv with one row per day.");
        assert!(content_problems("daily_ips.csv", text, &[], &other, "").is_empty());
    }

    #[test]
    fn values_listed_where_the_task_counts_them_are_named() {
        let asked = Asked::of(
            "From access.log, count the distinct client IP addresses on each day. Write daily_ips.csv with the header date,ips.",
        );
        let text = "date,ips\n2024-03-03,\"10.0.0.2, 10.0.0.1\"\n2024-03-04,\"10.0.0.1, 10.0.0.3\"\n2024-03-05,192.168.1.10\n";
        assert_eq!(
            content_problems("daily_ips.csv", text, &[], &asked, ""),
            [
                "the `ips` column of `daily_ips.csv` lists the values themselves (`10.0.0.2, 10.0.0.1`) where the task asks how many there are: write the count (`len(values)`, of a set for distinct ones)"
            ]
        );
        // Counts written, or a task that lists the values.
        assert!(
            content_problems(
                "daily_ips.csv",
                "date,ips\n2024-03-03,2\n2024-03-04,2\n2024-03-05,1\n",
                &[],
                &asked,
                ""
            )
            .is_empty()
        );
        let lists =
            Asked::of("Write daily_ips.csv with the header date,ips: the addresses seen each day.");
        assert!(content_problems("daily_ips.csv", text, &[], &lists, "").is_empty());
        // Joined without a space, or with `;`.
        let tight =
            "date,ips\n2024-03-03,\"10.0.0.1,10.0.0.2,10.0.0.1\"\n2024-03-05,192.168.1.10\n";
        assert_eq!(
            table::joined_column(tight),
            Some(("ips".to_owned(), "10.0.0.1,10.0.0.2,10.0.0.1".to_owned()))
        );
        assert_eq!(
            table::joined_column("day,users\nmon,ann;bo\ntue,cy;di\n"),
            Some(("users".to_owned(), "ann;bo".to_owned()))
        );
        // Prose in a cell is no list; numbers written with a comma are
        // numbers.
        assert_eq!(
            table::joined_column("id,note\n1,\"late, then paid\"\n2,\"ok, fine\"\n3,x\n"),
            None
        );
        assert_eq!(table::joined_column("id;price\n1;3,50\n2;1,204\n"), None);
    }

    #[test]
    fn a_folder_the_task_says_to_make_is_checked_before_ending() {
        assert_eq!(
            folders_to_make(
                "Split customers.csv by country: make a folder by_country and in it one CSV per country."
            ),
            ["by_country"]
        );
        assert_eq!(
            folders_to_make("Create the directory `out/`, then copy."),
            ["out"]
        );
        assert!(folders_to_make("Sort the files in the folder photos.").is_empty());
        assert!(folders_to_make("Create a folder named x").is_empty());
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let task = "Make a folder by_country and in it one CSV per country. Then write the count to count.txt.";
        let mut coach = Coach::new(true, task, cwd);
        fs_err::write(cwd.join("count.txt"), "3\n").unwrap();
        fs_err::create_dir(cwd.join("portugal")).unwrap();
        coach.saw_failure(false);
        coach.after_runs(&[python_report("")], cwd);
        let note = coach
            .note_before_ending("Done.", HarnessKind::Markdown, cwd, None)
            .unwrap();
        assert!(
            note.contains("the task asks for the folder `by_country/`, which does not exist yet: make it (`os.makedirs('by_country', exist_ok=True)`) and write the files into it (`os.path.join('by_country', file_name)`)"),
            "{note}"
        );
        // Made and filled: nothing to say of it.
        let mut done = Coach::new(true, task, cwd);
        fs_err::create_dir(cwd.join("by_country")).unwrap();
        fs_err::write(cwd.join("by_country/india.csv"), "id\n4\n").unwrap();
        done.saw_failure(false);
        done.after_runs(&[python_report("")], cwd);
        assert_eq!(
            done.note_before_ending("Done.", HarnessKind::Markdown, cwd, None),
            None
        );
    }

    #[test]
    fn the_largest_files_listed_are_checked_by_their_sizes() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        fs_err::create_dir_all(base.join("data/old exports")).unwrap();
        fs_err::create_dir_all(base.join("docs")).unwrap();
        fs_err::create_dir_all(base.join(".cache")).unwrap();
        fs_err::write(
            base.join("data/old exports/march 2024.csv"),
            vec![b'x'; 1200],
        )
        .unwrap();
        fs_err::write(base.join("docs/manual.pdf"), vec![b'x'; 900]).unwrap();
        fs_err::write(base.join("docs/readme.md"), vec![b'x'; 80]).unwrap();
        fs_err::write(base.join("top.log"), vec![b'x'; 700]).unwrap();
        fs_err::write(base.join(".cache/blob"), vec![b'x'; 2000]).unwrap();
        let asked = Asked::of(
            "Find the three largest files in this folder, leaving out hidden folders. Write their paths, largest first, to largest.txt.",
        );
        assert_eq!(
            size_order(
                "largest.txt",
                "./docs/manual.pdf\n./docs/readme.md\n./top.log\n",
                &asked,
                base
            )
            .as_deref(),
            Some(
                "`largest.txt` lists `./docs/readme.md` (80 bytes), but `data/old exports/march 2024.csv` (1200 bytes) is larger and not listed: find each file's size with `os.path.getsize` (in `os.walk`) or `find . -type f -printf '%s\\t%p\\n' | sort -nr`, not from `ls -l`'s columns"
            )
        );
        assert_eq!(
            size_order(
                "largest.txt",
                "top.log\ndocs/manual.pdf\ndata/old exports/march 2024.csv\n",
                &asked,
                base
            )
            .as_deref(),
            Some(
                "`largest.txt` lists `top.log` (700 bytes) before `docs/manual.pdf` (900 bytes), where the task asks the largest first"
            )
        );
        // Right, with the hidden folder left out as asked.
        assert_eq!(
            size_order(
                "largest.txt",
                "./data/old exports/march 2024.csv\n./docs/manual.pdf\n./top.log\n",
                &asked,
                base
            ),
            None
        );
        // Lines that are not files, or a task about no sizes: nothing.
        assert_eq!(size_order("largest.txt", "a\nb\n", &asked, base), None);
        let other = Asked::of("Write the paths of the files to list.txt.");
        assert_eq!(size_order("list.txt", "top.log\n", &other, base), None);
    }

    #[test]
    fn listed_paths_that_name_no_file_or_a_folder_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        fs_err::create_dir_all(base.join("data/old exports")).unwrap();
        fs_err::create_dir_all(base.join("docs")).unwrap();
        fs_err::write(base.join("data/old exports/march 2024.csv"), "x").unwrap();
        fs_err::write(base.join("docs/manual.pdf"), "x").unwrap();
        fs_err::write(base.join("top.log"), "x").unwrap();
        let asked = Asked::of(
            "Find the three largest files in this folder and its subfolders. Write their paths to largest.txt.",
        );
        let absent = |text: &str| absent_paths("largest.txt", text, &asked, base);
        // Cut at a space: the file's last word, or the folder's first.
        for (text, lost) in [
            ("2024.csv\n./docs/manual.pdf\n./top.log\n", "2024.csv"),
            ("./data/old\n./docs/manual.pdf\n./top.log\n", "./data/old"),
        ] {
            let problem = absent(text).unwrap_or_default();
            assert!(
                problem.starts_with(&format!(
                    "`largest.txt` names `{lost}`, which is no file here (`./docs/manual.pdf` is one): a path with spaces was likely cut at a space"
                )),
                "{problem}"
            );
        }
        // A folder where the task asks for files.
        assert_eq!(
            absent("./data\n./docs/manual.pdf\n./top.log\n").as_deref(),
            Some(
                "`largest.txt` names `./data`, which is a folder, where the task asks for files: list files only (`find . -type f`; Python: the `files` of `os.walk`, not its `dirs`)"
            )
        );
        // Right; a path with its size after it; a task that asks for
        // folders; words that are no paths: nothing.
        assert_eq!(
            absent("./data/old exports/march 2024.csv\n./docs/manual.pdf\ntop.log\n"),
            None
        );
        assert_eq!(absent("./docs/manual.pdf\n./docs/missing 3000\n"), None);
        let folders = Asked::of("Write the paths of the folders and files here to list.txt.");
        assert_eq!(
            absent_paths("list.txt", "./data\n./top.log\n", &folders, base),
            None
        );
        assert_eq!(absent("top.log\nhello world\n"), None);
    }

    #[test]
    fn the_table_a_run_printed_gets_the_line_that_writes_it() {
        let code = "import pandas as pd\ndf = pd.read_csv('scores.csv')\nteam_avg = df.groupby('Team')['Score'].mean().reset_index(name='average')\nteam_avg.columns = ['team', 'average']\nprint(team_avg)\n";
        assert_eq!(
            printed_table_write(code, "team_avg.csv").as_deref(),
            Some("team_avg.to_csv('team_avg.csv', index=False)")
        );
        // Not a CSV result, not pandas, or a print of something else.
        assert_eq!(printed_table_write(code, "avg.txt"), None);
        assert_eq!(printed_table_write("x = [1]\nprint(x)\n", "out.csv"), None);
        assert_eq!(
            printed_table_write(
                "import pandas as pd\nprint(pd.read_csv('a.csv').head())\n",
                "out.csv"
            ),
            None
        );
    }

    #[test]
    fn a_result_holding_its_lines_twice_is_named() {
        assert_eq!(
            content_problems(
                "flat.txt",
                "apple\npear\napple\npear\n",
                &[],
                &NOTHING_ASKED,
                ""
            ),
            [
                "`flat.txt` holds its lines twice (`apple` again at line 3): code that opens it with `'a'` appends to what an earlier run wrote; open it with `'w'` once and write every line"
            ]
        );
        assert_eq!(doubled_lines("a\nb\nc\n"), None);
        assert_eq!(doubled_lines("x\nx\n"), None);
        assert_eq!(doubled_lines("a\nb\na\nc\n"), None);
    }

    #[test]
    fn a_csv_row_not_as_wide_as_its_header_is_named() {
        let text = "Version,Codename,Date,Notes\n1.0,Acorn,2024-01-15,first\n1.1,Birch,2024-03-02,\"adds export, import\"\nOwner,Area\nana,docs\n";
        assert_eq!(
            content_problems("releases.csv", text, &[], &NOTHING_ASKED, ""),
            [
                "line 4 of `releases.csv` (`Owner,Area`) has 2 cells where its header has 4: every row of a CSV file has the header's columns (a second table written under the first, or a value holding a comma written without quotes: write rows with `csv.writer`)"
            ]
        );
        // Even rows (a quoted comma stays in its cell), or not a CSV file.
        assert!(
            content_problems(
                "releases.csv",
                &text[..text.find("Owner").unwrap()],
                &[],
                &NOTHING_ASKED,
                ""
            )
            .is_empty()
        );
        assert!(content_problems("notes.txt", text, &[], &NOTHING_ASKED, "").is_empty());
    }

    #[test]
    fn days_where_the_task_asks_for_months_are_named() {
        let asked = Asked::of(
            "Write net_by_month.csv with the header month,net, months as YYYY-MM, oldest first.",
        );
        assert!(asked.iso_months && !asked.iso_dates);
        assert!(!Asked::of("dates as YYYY-MM-DD").iso_months);
        assert_eq!(
            day_for_month("month,net\n2024-01-05T09:12:00,120.5\n").as_deref(),
            Some("2024-01-05T09:12:00")
        );
        assert_eq!(
            day_for_month("month,net\n2024-01-05,120.5\n").as_deref(),
            Some("2024-01-05")
        );
        assert_eq!(day_for_month("month,net\n2024-01,120.5\n"), None);
        assert_eq!(
            content_problems(
                "net_by_month.csv",
                "month,net\n2024-01-05,120.5\n2024-02-02,200.0\n",
                &[],
                &asked,
                ""
            ),
            [
                "`net_by_month.csv` writes `2024-01-05` where the task asks for a month as YYYY-MM (like `2024-03`): take the month of each date, its first 7 characters (pandas: `df['month'] = df['date'].str[:7]` on the text column; Python: `value[:7]`), and group or write by that"
            ]
        );
    }

    #[test]
    fn numbers_with_other_decimals_than_asked_are_named() {
        assert_eq!(asked_decimals("print the total with 2 decimals"), Some(2));
        assert_eq!(asked_decimals("the average rounded to 1 decimal."), Some(1));
        assert_eq!(asked_decimals("to two decimal places"), Some(2));
        assert_eq!(asked_decimals("with decimals"), None);
        assert_eq!(
            other_decimals("Total: 3100.0\n", 2).as_deref(),
            Some("3100.0")
        );
        assert_eq!(other_decimals("Total: 3100.00\n", 2), None);
        // Versions, addresses and whole numbers are no such numbers.
        assert_eq!(other_decimals("3.11.7 at 10.0.0.1, 42 rows\n", 2), None);
        // One number right among others: not all wrong.
        assert_eq!(other_decimals("a,1.5\nb,2.25\n", 2), None);
        let asked = Asked::of("Write team_avg.csv with the average score with 1 decimal.");
        // In a table, a column with one number right and another not is
        // named (see `mixed_decimals` below).
        assert_eq!(
            content_problems(
                "team_avg.csv",
                "team,average\nred,10.5\nblue,9.333333\n",
                &[],
                &asked,
                ""
            ),
            [
                "`team_avg.csv` writes `9.333333` where the task asks for 1 decimal: format each number with `f'{value:.1f}'` (pandas: `to_csv(…, float_format='%.1f')`)"
            ]
        );
        assert_eq!(
            content_problems(
                "team_avg.csv",
                "team,average\nred,10.25\nblue,9.333333\n",
                &[],
                &asked,
                ""
            ),
            [
                "`team_avg.csv` writes `10.25` where the task asks for 1 decimal: format each number with `f'{value:.1f}'` (pandas: `to_csv(…, float_format='%.1f')`)"
            ]
        );
        // In a table, a column with the decimals asked in some rows and
        // others in other rows: written as they came, not formatted.
        let asked =
            Asked::of("Write net_by_month.csv with the header month,net, net with 2 decimals.");
        assert_eq!(
            table::mixed_decimals("month,net\n2024-01,180.0\n2024-02,165.25\n", 2),
            Some(("net".to_owned(), "180.0".to_owned()))
        );
        assert_eq!(
            content_problems(
                "net_by_month.csv",
                "month,net\n2024-01,180.0\n2024-02,165.25\n2024-03,89.99\n",
                &[],
                &asked,
                ""
            ),
            [
                "`net_by_month.csv` writes `180.0` where the task asks for 2 decimals: format each number with `f'{value:.2f}'` (pandas: `to_csv(…, float_format='%.2f')`)"
            ]
        );
        for text in [
            "month,net\n2024-01,180.00\n2024-02,165.25\n",
            // Another column's decimals are its own.
            "month,net,rate\n2024-01,180.00,0.5\n2024-02,165.25,0.125\n",
            "month,net\n2024-01,180\n2024-02,165.25\n",
        ] {
            assert_eq!(table::mixed_decimals(text, 2), None, "{text}");
        }
        // A fixed script's output: told after the run, and before ending.
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(cwd.join("sum.py"), "print(1)\n").unwrap();
        let mut coach = Coach::new(
            true,
            "sum.py should print the total with 2 decimals. Fix sum.py.",
            cwd,
        );
        coach.saw_failure(false);
        let notes = coach.after_runs(
            &[Report {
                call_id: None,
                language: "shell".to_owned(),
                text: format!(
                    "{}\nTotal: 3100.0\n",
                    super::super::save_as::saved_line("sum.py")
                ),
                images: Vec::new(),
            }],
            cwd,
        );
        assert!(
            notes.contains(&"[oi: `sum.py` printed `3100.0` where the task asks for 2 decimals: format the number with `f'{value:.2f}'` where it is printed. Send all of `sum.py` again, fixed, in one block.]".to_owned()),
            "{notes:?}"
        );
    }

    #[test]
    fn values_without_the_tab_the_task_asks_are_named() {
        let asked =
            Asked::of("Write the customer's name and the total, separated by a tab, to top.txt.");
        assert_eq!(
            content_problems("top.txt", "Smith, John, 700.84\n", &[], &asked, ""),
            [
                "`top.txt` has no tab between its values (`Smith, John, 700.84`), which the task asks: write them with `\\t` between (`f'{a}\\t{b}'`, or `'\\t'.join(values)`)"
            ]
        );
        assert!(content_problems("top.txt", "Lee, Ann\t215.10\n", &[], &asked, "").is_empty());
        let other = Asked::of("Write the customer's name and the total to top.txt.");
        assert!(content_problems("top.txt", "Smith, John, 700.84\n", &[], &other, "").is_empty());
    }

    /// The lines that fix a result file as it is run in real Python.
    #[test]
    fn the_lines_that_fix_a_result_as_it_is_run_in_python() {
        let Some(python) = oi_testkit::python3() else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let text = "b.debug=False\na.name=Truely\n\nc.on=True\n";
        fs_err::write(dir.path().join("flat.txt"), text).unwrap();
        let asked = Asked::of(
            "Flatten settings.json into flat.txt (booleans as true/false), sorted by path.",
        );
        let problems = content_problems("flat.txt", text, &[], &asked, "");
        assert_eq!(problems.len(), 2, "{problems:?}");
        for problem in &problems {
            let code: Vec<&str> = problem
                .rsplit_once("as it is: ")
                .unwrap()
                .1
                .split('`')
                .skip(1)
                .step_by(2)
                .collect();
            let out = std::process::Command::new(python)
                .arg("-c")
                .arg(code.join("\n"))
                .current_dir(dir.path())
                .output()
                .unwrap();
            assert!(out.status.success(), "{code:?}: {out:?}");
        }
        assert_eq!(
            fs_err::read_to_string(dir.path().join("flat.txt")).unwrap(),
            "a.name=Truely\nb.debug=false\nc.on=true\n"
        );
    }

    #[test]
    fn lines_sorted_by_a_text_key_are_checked_for_order() {
        assert!(asks_alphabetical("write them, sorted by path."));
        assert!(asks_alphabetical("one line each, sorted by name"));
        assert!(!asks_alphabetical("sorted by count"));
        assert!(!asks_alphabetical("sorted by size, largest first"));
        let asked = Asked::of("Write path=value lines to flat.txt, sorted by path.");
        assert_eq!(
            content_problems(
                "flat.txt",
                "app.name=L\napp.debug=x\nb.c=2\n",
                &[],
                &asked,
                ""
            ),
            [
                "the lines of `flat.txt` are not in alphabetical order (`app.name=L` comes before `app.debug=x`), which the task asks: sort them before writing (`sorted(…)`), or sort the file as it is: `lines = sorted(l for l in open('flat.txt').read().splitlines() if l.strip())`, then `open('flat.txt', 'w').write('\\n'.join(lines) + '\\n')`"
            ]
        );
    }

    #[test]
    fn rows_written_whole_where_one_value_a_line_is_asked_get_the_column_to_write() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let task = "cities.tsv lists cities and their populations. Write the names of the 3 most populous cities, largest first, one per line, to top3.txt.";
        fs_err::write(
            cwd.join("cities.tsv"),
            "City\tPopulation\nRiverton\t1,204,331\nHill Valley\t2,301,005\nOgdenville\t310,250\n",
        )
        .unwrap();
        let code = "import pandas as pd\ndf = pd.read_csv('cities.tsv', sep='\\t')\ntop3 = df.head(3)\ntop3.to_csv('top3.txt', index=False, header=False)\n";
        let mut coach = Coach::new(true, task, cwd);
        coach.saw_runs(&[python_run(code)]);
        fs_err::write(
            cwd.join("top3.txt"),
            "Hill Valley,2301005\nRiverton,1204331\nOgdenville,310250\n",
        )
        .unwrap();
        let notes = coach
            .after_runs(&[python_report(crate::output::PRINTED_NOTHING)], cwd)
            .join("\n");
        assert!(
            notes.contains("holds more than one value (`Hill Valley,2301005`) where the task asks for one per line (in your code, write only that column: `top3['City'].to_csv('top3.txt', index=False, header=False)`)"),
            "{notes}"
        );
        let mut actions = vec![Action::Run(python_run(code).unwrap())];
        let fix = coach.apply_line_fix(&mut actions).unwrap();
        assert_eq!(
            fix.code,
            "top3.to_csv('top3.txt', index=False, header=False)"
        );
        let Action::Run(changed) = &actions[0] else {
            panic!("{actions:?}")
        };
        assert!(
            changed
                .code
                .ends_with("\ntop3['City'].to_csv('top3.txt', index=False, header=False)\n"),
            "{}",
            changed.code
        );
        // Two text values a row (which is asked is not known), a value no
        // input column holds, or a table written another way: no column.
        let inputs_text =
            "City\tCountry\tPopulation\nRiverton\tUS\t1\nLakeside\tCA\t2\n".to_owned();
        let name = "cities.tsv".to_owned();
        let inputs = [(&name, &inputs_text)];
        assert_eq!(
            one_value_call("top3.txt", "Riverton,US,1", &inputs, code),
            None
        );
        assert_eq!(one_value_call("top3.txt", "Gotham,1", &inputs, code), None);
        assert_eq!(
            one_value_call(
                "top3.txt",
                "Riverton,1",
                &inputs,
                "open('top3.txt', 'w').write(text)\n"
            ),
            None
        );
        assert_eq!(
            one_value_call("top3.txt", "Riverton,1", &inputs, code),
            Some((
                "top3.to_csv('top3.txt', index=False, header=False)".to_owned(),
                "top3['City'].to_csv('top3.txt', index=False, header=False)".to_owned()
            ))
        );
    }

    #[test]
    fn a_column_name_heading_values_asked_one_a_line_is_named_with_the_call_without_it() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let task = "cities.tsv lists cities and their populations. Write the names of the 3 most populous cities, largest first, one per line, to top3.txt.";
        fs_err::write(
            cwd.join("cities.tsv"),
            "City\tPopulation\nRiverton\t1,204,331\nHill Valley\t2,301,005\n",
        )
        .unwrap();
        let code = "import pandas as pd\ndf = pd.read_csv('cities.tsv', sep='\\t')\ntop3 = df['City'].head(3)\ntop3.to_csv('top3.txt', index=False)\n";
        let mut coach = Coach::new(true, task, cwd);
        coach.saw_runs(&[python_run(code)]);
        fs_err::write(cwd.join("top3.txt"), "City\nHill Valley\nRiverton\n").unwrap();
        let notes = coach
            .after_runs(&[python_report(crate::output::PRINTED_NOTHING)], cwd)
            .join("\n");
        assert!(
            notes.contains("the first line of `top3.txt` is `City`, the name of a column of `cities.tsv`, not one of the values the task asks for: write the values without a header line (in your code, `top3.to_csv('top3.txt', index=False, header=False)`)"),
            "{notes}"
        );
        // Not also a line unlike the others.
        assert!(!notes.contains("is not like its other lines"), "{notes}");
        let mut actions = vec![Action::Run(python_run(code).unwrap())];
        coach.apply_line_fix(&mut actions).unwrap();
        let Action::Run(changed) = &actions[0] else {
            panic!("{actions:?}")
        };
        assert!(
            changed
                .code
                .ends_with("\ntop3.to_csv('top3.txt', index=False, header=False)\n"),
            "{}",
            changed.code
        );
        // A header the task asks for, values only, or a single line: no
        // such problem.
        let input = "City\tPopulation\nRiverton\t1\nLakeside\t2\n".to_owned();
        let input_name = "cities.tsv".to_owned();
        let inputs = [(&input_name, &input)];
        assert_eq!(
            column_name_line("City\nRiverton\n", &inputs),
            Some(("City".to_owned(), "cities.tsv".to_owned()))
        );
        assert_eq!(column_name_line("Hill Valley\nRiverton\n", &inputs), None);
        assert_eq!(column_name_line("City\n", &inputs), None);
        assert_eq!(column_name_line("City\nPopulation\n", &inputs), None);
        let asked =
            Asked::of("Write the cities, one per line, with the header City,Country, to top3.txt.");
        assert!(
            content_problems("top3.txt", "City\nRiverton\n", &inputs, &asked, code)
                .iter()
                .all(|p| !p.contains("the name of a column")),
        );
        // A call that sets its header some other way is not changed.
        assert_eq!(
            header_off_call("top3.txt", "top3.to_csv('top3.txt', header=cols)\n"),
            None
        );
        assert_eq!(
            header_off_call("top3.txt", "top3.to_csv('top3.txt', header=True)\n"),
            Some((
                "top3.to_csv('top3.txt', header=True)".to_owned(),
                "top3.to_csv('top3.txt', header=False)".to_owned()
            ))
        );
    }

    #[test]
    fn the_line_writing_a_table_with_another_header_is_changed_when_sent_again() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let task =
            "Save the students of grades.csv who passed to passed.csv with the columns name,score.";
        let code = "import pandas as pd\npassed = df[df['Score'] >= 60]\npassed.to_csv('passed.csv', index=False)\n";
        fs_err::write(
            cwd.join("grades.csv"),
            "Student,Score,Class\nAna Ruiz,78,A\n",
        )
        .unwrap();
        let mut coach = Coach::new(true, task, cwd);
        coach.saw_runs(&[python_run(code)]);
        fs_err::write(
            cwd.join("passed.csv"),
            "Student,Score,Class\nAna Ruiz,78.0,A\n",
        )
        .unwrap();
        coach.after_runs(&[python_report(crate::output::PRINTED_NOTHING)], cwd);
        let mut actions = vec![Action::Run(python_run(code).unwrap())];
        let fix = coach.apply_line_fix(&mut actions).unwrap();
        assert_eq!(fix.code, "passed.to_csv('passed.csv', index=False)");
        let Action::Run(changed) = &actions[0] else {
            panic!("{actions:?}")
        };
        assert!(
            changed.code.ends_with("\npassed[['Student', 'Score']].rename(columns={'Student': 'name', 'Score': 'score'}).to_csv('passed.csv', index=False)\n"),
            "{}",
            changed.code
        );
        // Renamed in place since: the latest change of the line stands.
        let renamed = "import pandas as pd\npassed = df[df['Score'] >= 60]\npassed.rename(columns={'Student': 'name', 'Score': 'score'}, inplace=True)\npassed.to_csv('passed.csv', index=False)\n";
        coach.saw_runs(&[python_run(renamed)]);
        fs_err::write(
            cwd.join("passed.csv"),
            "name,score,Class\nAna Ruiz,78.0,A\n",
        )
        .unwrap();
        coach.after_runs(&[python_report(crate::output::PRINTED_NOTHING)], cwd);
        let mut actions = vec![Action::Run(python_run(renamed).unwrap())];
        coach.apply_line_fix(&mut actions).unwrap();
        let Action::Run(changed) = &actions[0] else {
            panic!("{actions:?}")
        };
        assert!(
            changed
                .code
                .ends_with("\npassed[['name', 'score']].to_csv('passed.csv', index=False)\n"),
            "{}",
            changed.code
        );
        // A header as asked: nothing to change.
        fs_err::remove_file(cwd.join("passed.csv")).unwrap();
        let mut coach = Coach::new(true, task, cwd);
        coach.saw_runs(&[python_run(code)]);
        fs_err::write(cwd.join("passed.csv"), "name,score\nAna Ruiz,78.0\n").unwrap();
        coach.after_runs(&[python_report(crate::output::PRINTED_NOTHING)], cwd);
        let mut actions = vec![Action::Run(python_run(code).unwrap())];
        assert_eq!(coach.apply_line_fix(&mut actions), None);
    }

    #[test]
    fn an_empty_result_left_by_a_failed_run_is_not_shown() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let mut coach = Coach::new(true, "Write orders.csv from orders.json.", cwd);
        fs_err::write(cwd.join("orders.csv"), "").unwrap();
        let failed = python_report(
            "Traceback (most recent call last):\n  File \"<cell-1>\", line 6, in <module>\nNameError: name 'csv' is not defined\n",
        );
        coach.saw_failure(true);
        let notes = coach.after_runs(&[failed], cwd);
        assert!(!notes.iter().any(|n| n.contains("orders.csv")), "{notes:?}");
        // Empty after a run that did not fail: shown.
        coach.saw_failure(false);
        let notes = coach.after_runs(&[python_report("")], cwd);
        assert!(
            notes
                .iter()
                .any(|n| n.contains("`orders.csv` now exists but is empty")),
            "{notes:?}"
        );
    }

    #[test]
    fn a_result_column_empty_in_every_row_is_named() {
        let text = "name,total\nAna Lima,\nBen Okafor,\nChen Wei,\n";
        let python = "merged['total'] = merged.groupby('customer')['amount'].sum()\nmerged[['name', 'total']].to_csv('totals.csv', index=False)\n";
        let problems = content_problems("totals.csv", text, &[], &Asked::default(), python);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with("the `total` column of `totals.csv` is empty in all 3 rows: a grouped result assigned back as a column"),
            "{problems:?}"
        );
        let plain = content_problems("totals.csv", text, &[], &Asked::default(), "");
        assert_eq!(
            plain,
            [
                "the `total` column of `totals.csv` is empty in all 3 rows: the code that fills it gave nothing for these rows"
            ]
        );
        // Some values, or one row only: nothing to say.
        let some = "name,total\nAna Lima,3\nBen Okafor,\n";
        assert!(content_problems("totals.csv", some, &[], &Asked::default(), "").is_empty());
        assert!(table::empty_columns("name,total\nAna,\n").is_empty());
        // Empty in the input the task names too: copied as it was.
        let (input, seen) = ("in.csv".to_owned(), "name,total\na,\nb,\n".to_owned());
        assert!(
            content_problems(
                "totals.csv",
                text,
                &[(&input, &seen)],
                &Asked::default(),
                ""
            )
            .is_empty()
        );
    }

    #[test]
    fn values_written_with_their_own_line_break_are_named() {
        let problems = content_problems("m.env", "A=1\n\nB=2\n\nC=3\n", &[], &Asked::default(), "");
        assert_eq!(
            problems,
            [
                "every line of `m.env` is followed by a blank line: each value was written with the line break it was read with, and a second one added (strip each value, `value.strip()`, before writing it)"
            ]
        );
        for text in [
            "A=1\nB=2\n",
            "A=1\n\nB=2\nC=3\n",
            "A=1\n\n",
            "# head\n\nA=1\nB=2\n",
        ] {
            assert!(!doubled_breaks(text), "{text:?}");
        }
        assert!(doubled_breaks("A=1\n\nB=2\n"));
    }

    #[test]
    fn lines_not_in_the_alphabetical_order_asked_are_named() {
        let asked = Asked::of("Write the names of such files, sorted, one per line, to dups.txt.");
        assert!(asked.alphabetical);
        let problems = content_problems("dups.txt", "b.txt\na.txt\nc.txt\n", &[], &asked, "");
        assert_eq!(
            problems,
            [
                "the lines of `dups.txt` are not in alphabetical order (`b.txt` comes before `a.txt`), which the task asks: sort them before writing (`sorted(…)`), or sort the file as it is: `lines = sorted(l for l in open('dups.txt').read().splitlines() if l.strip())`, then `open('dups.txt', 'w').write('\\n'.join(lines) + '\\n')`"
            ]
        );
        // Sorted byte-wise or ignoring case, both are sorted.
        for sorted in ["Intro.txt\na.txt\nb.txt\n", "a.txt\nb.txt\nIntro.txt\n"] {
            assert!(
                content_problems("dups.txt", sorted, &[], &asked, "").is_empty(),
                "{sorted}"
            );
        }
        // A table, or two lines, is not such a list.
        assert!(unsorted_lines("b,1\na,2\nc,3\n").is_none());
        assert!(unsorted_lines("b\na\n").is_none());
        // Sorted by something else, or not asked.
        for task in [
            "List the cities sorted by population.",
            "Write them sorted from largest to smallest.",
            "Write the names one per line.",
        ] {
            assert!(!Asked::of(task).alphabetical, "{task}");
        }
        assert!(Asked::of("Write them in alphabetical order.").alphabetical);
    }

    #[test]
    fn ties_not_in_the_alphabetical_order_asked_are_named() {
        let asked = Asked::of(
            "Write ext_counts.csv with the header extension,count, most files first, ties in alphabetical order.",
        );
        assert!(asked.ties_alphabetical);
        let text = "extension,count\npy,3\njson,3\npng,3\nmd,2\n";
        assert_eq!(
            content_problems("ext_counts.csv", text, &[], &asked, ""),
            [
                "rows of `ext_counts.csv` with the same `count` are not in alphabetical order of `extension` (`py` before `json`), which the task asks for ties: sort by both (pandas: `.sort_values(['count', 'extension'], ascending=[False, True])`; Python: `sorted(rows, key=lambda row: (-row[1], row[0]))` for rows of (text, number))"
            ]
        );
        // Ties in order (ignoring case), or not asked about.
        let sorted = "extension,count\njson,3\nPng,3\npy,3\nmd,2\n";
        assert!(content_problems("ext_counts.csv", sorted, &[], &asked, "").is_empty());
        let plain = Asked::of("Write ext_counts.csv, most files first.");
        assert!(!plain.ties_alphabetical);
        assert!(content_problems("ext_counts.csv", text, &[], &plain, "").is_empty());
        // The wrong order overall is named first, alone.
        let backwards = "extension,count\nmd,2\npy,3\njson,3\n";
        let problems = content_problems("ext_counts.csv", backwards, &[], &asked, "");
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("ascending order"), "{problems:?}");
    }

    #[test]
    fn numbers_one_per_line_not_in_the_order_asked_are_named() {
        let asked = Asked::of(
            "Sort the numbers in numbers.txt from smallest to largest and write them, one per line, to sorted.txt.",
        );
        assert_eq!(asked.order.map(|(o, _)| o), Some(table::Order::Ascending));
        let as_text = "-4\n100\n15\n2\n33\n7\n";
        assert_eq!(
            content_problems("sorted.txt", as_text, &[], &asked, ""),
            [
                "the lines of `sorted.txt` are not in the order the task asks (\"smallest to largest\"): `100` comes before `15`; they were sorted as text, not as numbers: sort the numbers (`sorted(values, key=float)`) before writing"
            ]
        );
        let unsorted = "33\n7\n100\n";
        assert_eq!(
            content_problems("sorted.txt", unsorted, &[], &asked, ""),
            [
                "the lines of `sorted.txt` are not in the order the task asks (\"smallest to largest\"): `33` comes before `7`; sort them (`sorted(values, key=float)`) before writing"
            ]
        );
        assert!(content_problems("sorted.txt", "-4\n2\n7\n15\n", &[], &asked, "").is_empty());
        let descending = Asked::of("Write them largest first, one per line, to top.txt.");
        assert!(
            content_problems("top.txt", "2\n7\n15\n", &[], &descending, "")[0]
                .contains("(`sorted(values, key=float, reverse=True)`)")
        );
        // A negative number is not a line unlike the others.
        assert_eq!(odd_line("-4\n100\n15\n"), None);
    }

    #[test]
    fn a_key_an_input_sets_and_a_merge_lacks_is_named() {
        let defaults = (
            "defaults.env".to_owned(),
            "# all\nAPP_PORT=8080\nLOG_LEVEL=info\n".to_owned(),
        );
        let local = (
            "local.env".to_owned(),
            "export LOG_LEVEL=debug\nAPP_PORT = 9090\nCACHE_DIR=/tmp/c\n".to_owned(),
        );
        let inputs = [(&defaults.0, &defaults.1), (&local.0, &local.1)];
        let asked = Asked::of(
            "Merge defaults.env and local.env into merged.env: every key from both, local.env's value wins.",
        );
        assert!(asked.every_key);
        assert_eq!(
            content_problems(
                "merged.env",
                "APP_PORT=9090\nLOG_LEVEL=debug\n",
                &inputs,
                &asked,
                ""
            ),
            [
                "`merged.env` lacks `CACHE_DIR`, which `local.env` sets, where the task asks for every key: read the lines of each file the same way, in one loop over all of them"
            ]
        );
        let whole = "APP_PORT=9090\nCACHE_DIR=/tmp/c\nLOG_LEVEL=debug\n";
        assert!(content_problems("merged.env", whole, &inputs, &asked, "").is_empty());
        // Not a task that keeps some keys, nor a result that is not KEY=value.
        let some = Asked::of("Write the keys of local.env that defaults.env lacks to new.env.");
        assert!(content_problems("new.env", "CACHE_DIR=/tmp/c\n", &inputs, &some, "").is_empty());
        assert_eq!(missing_key("CACHE_DIR\n", &inputs), None);
    }

    #[test]
    fn a_result_naming_every_file_of_a_folder_where_some_are_asked_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::create_dir(cwd.join("docs")).unwrap();
        for (name, text) in [
            ("a.txt", "x"),
            ("b copy.txt", "x"),
            ("c.md", "y"),
            ("d.md", "z"),
        ] {
            fs_err::write(cwd.join("docs").join(name), text).unwrap();
        }
        fs_err::create_dir(cwd.join("docs/old")).unwrap();
        let task = "Some files in docs/ have the same contents as another file there. Write the names of all such files, sorted, one per line, to dups.txt.";
        let coach = Coach::new(true, task, cwd);
        let asked = coach.asked("dups.txt");
        assert!(asked.picks);
        let every = "a.txt\nb copy.txt\nc.md\nd.md\n";
        let problems = content_problems("dups.txt", every, &[], asked, "");
        assert_eq!(
            problems,
            [
                "`dups.txt` names every one of the 4 files in `docs/`, where the task asks only for some of them: the test your code picks them by passes for all of them (check what it compares)"
            ]
        );
        // With the folder before each name, too; not when some are left out.
        let prefixed = "./docs/a.txt\n./docs/b copy.txt\n./docs/c.md\n./docs/d.md\n";
        assert_eq!(
            content_problems("dups.txt", prefixed, &[], asked, ""),
            problems
        );
        assert!(content_problems("dups.txt", "a.txt\nb copy.txt\n", &[], asked, "").is_empty());
        let twice = "a.txt\na.txt\nb copy.txt\nb copy.txt\nc.md\nc.md\nd.md\nd.md\n";
        assert!(
            content_problems("dups.txt", twice, &[], asked, "")
                .iter()
                .any(|p| p.contains("names every one of the 4 files"))
        );
        // A task asking for every file picks none out.
        let all = Coach::new(
            true,
            "Write the names of all files in docs/, one per line, to all.txt.",
            cwd,
        );
        assert!(!all.asked("all.txt").picks);
        assert!(content_problems("all.txt", every, &[], all.asked("all.txt"), "").is_empty());
        let each = Coach::new(
            true,
            "Write the size of each file in docs/ that ends in .md to sizes.txt.",
            cwd,
        );
        assert!(!each.asked("sizes.txt").picks);
    }

    #[test]
    fn tasks_that_pick_some_files_and_leave_out_punctuation_are_told() {
        let words = |task: &str| -> Vec<String> {
            task_words(&task.to_lowercase())
                .map(str::to_owned)
                .collect()
        };
        for task in [
            "Write the names of the files in logs/ that mention ERROR to errors.txt.",
            "List only the images whose names end in .png.",
        ] {
            assert!(picks_some(&words(task), &task.to_lowercase()), "{task}");
        }
        for task in [
            "List the files in logs/ to files.txt.",
            "List all files in logs/ that are there.",
            "Count the lines of every file in logs/.",
        ] {
            assert!(!picks_some(&words(task), &task.to_lowercase()), "{task}");
        }
        for task in [
            "Print the 3 most common words, ignoring case and punctuation.",
            "Count the words without punctuation.",
            "Strip punctuation from each word; then count them.",
        ] {
            assert!(ignores_punctuation(&task.to_lowercase()), "{task}");
        }
        assert!(!ignores_punctuation(
            "keep the punctuation. ignore blank lines."
        ));
        assert_eq!(punctuated_word("the 3\ncat 1\nsat.\n 1\n"), Some("sat."));
        assert_eq!(punctuated_word("apple,4\n\"pear,2\n"), Some("\"pear"));
        assert_eq!(punctuated_word("the 3\ndon't 2\n3.5 1\nU.S 1\n"), None);
    }

    #[test]
    fn a_word_with_punctuation_where_the_task_leaves_it_out_is_named() {
        let asked = Asked::of(
            "Write the 3 most common words of text.txt, ignoring punctuation, one per line as 'word count', to top.txt.",
        );
        assert!(
            content_problems("top.txt", "the 3\nsat. 1\ncat 1\n", &[], &asked, "").contains(&"`top.txt` has `sat.`, a word with punctuation still on it, where the task says to leave punctuation out: take the words with `re.findall(r\"[A-Za-z0-9']+\", line)` (`import re`) instead of splitting the line at spaces".to_owned())
        );
        assert!(content_problems("top.txt", "the 3\nsat 1\ncat 1\n", &[], &asked, "").is_empty());
        let plain = Asked::of("Write the 3 most common words of text.txt to top.txt.");
        assert!(content_problems("top.txt", "the 3\nsat. 1\n", &[], &plain, "").is_empty());
    }

    #[test]
    fn a_fixed_script_printing_punctuated_words_is_told_until_it_prints_none() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(cwd.join("wordfreq.py"), "print(1)\n").unwrap();
        let task = "wordfreq.py should print the 3 most common words, ignoring case and punctuation. Fix wordfreq.py.";
        let mut coach = Coach::new(true, task, cwd);
        let shell = |text: &str| Report {
            call_id: None,
            language: "shell".into(),
            text: text.into(),
            images: Vec::new(),
        };
        let notes = coach.after_runs(&[shell("saved wordfreq.py\nthe 3\ncat 1\nsat.\n 1\n")], cwd);
        assert!(notes.contains(&"[oi: `wordfreq.py` printed `sat.`, a word with punctuation still on it, where the task says to leave punctuation out: take the words with `re.findall(r\"[A-Za-z0-9']+\", line)` (`import re`) instead of splitting the line at spaces. Send all of `wordfreq.py` again, fixed, in one block.]".to_owned()), "{notes:?}");
        fs_err::write(cwd.join("wordfreq.py"), "print(2)\n").unwrap();
        assert!(coach.ending_problems(cwd, None, "").contains(&"`wordfreq.py` prints `sat.`, a word with punctuation still on it, where the task says to leave punctuation out".to_owned()));
        let notes = coach.after_runs(&[shell("saved wordfreq.py\nthe 3\ncat 1\nsat 1\n")], cwd);
        assert!(
            !notes.iter().any(|n| n.contains("punctuation")),
            "{notes:?}"
        );
        let left = coach.ending_problems(cwd, None, "");
        assert!(left.is_empty(), "{left:?}");
        // Not where the task keeps punctuation, nor for other models.
        let mut plain = Coach::new(
            true,
            "wordfreq.py should print the 3 most common words. Fix wordfreq.py.",
            cwd,
        );
        let mut big = Coach::new(false, task, cwd);
        for coach in [&mut plain, &mut big] {
            let notes = coach.after_runs(&[shell("saved wordfreq.py\nsat. 1\n")], cwd);
            assert!(
                !notes.iter().any(|n| n.contains("punctuation")),
                "{notes:?}"
            );
        }
    }

    #[test]
    fn a_fixed_script_that_now_prints_messages_besides_its_result_is_told() {
        let old = "import sys\ntotal = 0\nfor line in open(sys.argv[1]):\n    total += int(line)\nprint(total)\n";
        let new = "import sys\ntotal = 0\nfor line in open(sys.argv[1]):\n    try:\n        total += float(line)\n    except ValueError:\n        print(f\"Invalid number: {line.strip()}\")\n        print('skipped')\nif total == 0:\n    print(\"No numbers found.\")\nprint(f'{total:.2f}')\n";
        assert_eq!(
            message_print("sum.py", old, new, "Invalid number: \n9.83\n"),
            Some((
                "print(f\"Invalid number: {line.strip()}\")".to_owned(),
                "Invalid number:".to_owned()
            ))
        );
        // Messages the run did not print, the result's own print, a
        // script that printed messages before: nothing to say.
        assert_eq!(message_print("sum.py", old, new, "9.83\n"), None);
        let labelled = "print(f'Total: {total}')\n";
        assert_eq!(message_print("sum.py", old, labelled, "Total: 3\n"), None);
        assert_eq!(
            message_print("sum.py", new, new, "Invalid number: \n9.83\n"),
            None
        );
        assert_eq!(
            message_print("sum.sh", old, new, "Invalid number: \n9.83\n"),
            None
        );
        assert_eq!(
            leading_words("f\"Invalid number: {x}\""),
            Some("Invalid number:".to_owned())
        );
        assert_eq!(leading_words("'a', x"), None);
        assert_eq!(leading_words("x, 'ok'"), None);
    }

    #[test]
    fn a_message_a_fixed_script_prints_is_named_after_its_run_and_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let old = "import sys\ntotal = 0\nfor line in open(sys.argv[1]):\n    total += int(line)\nprint(total)\n";
        fs_err::write(cwd.join("sum.py"), old).unwrap();
        fs_err::write(cwd.join("numbers.txt"), "10\n\n19.5\n").unwrap();
        let mut coach = Coach::new(true, "sum.py crashes on numbers.txt. Fix sum.py.", cwd);
        let new = "import sys\ntotal = 0\nfor line in open(sys.argv[1]):\n    if not line.strip():\n        print('Skipping a blank line')\n        continue\n    total += float(line)\nprint(total)\n";
        fs_err::write(cwd.join("sum.py"), new).unwrap();
        let notes = coach.after_runs(
            &[python_report("saved sum.py\nSkipping a blank line\n29.5\n")],
            cwd,
        );
        assert!(
            notes.iter().any(|n| n.ends_with(" It is not right yet: `sum.py` printed only its result; the new version also prints a message (`print('Skipping a blank line')`), and this run printed `Skipping a blank line`, which whatever reads the script's output does not expect. Leave that print out (in your script, `print('Skipping a blank line')` becomes `pass`).]")),
            "{notes:?}"
        );
        // Sent again with that print, it runs with `pass` in its place.
        let mut actions = vec![Action::Run(ProposedRun {
            language: Some("python".to_owned()),
            code: new.to_owned(),
            call_id: None,
        })];
        assert!(coach.apply_line_fix(&mut actions).is_some());
        let Action::Run(changed) = &actions[0] else {
            panic!("{actions:?}")
        };
        assert_eq!(
            changed.code,
            new.replace("print('Skipping a blank line')", "pass")
        );
        // A later version that changes something else and keeps the
        // message is held to the script as it began.
        let other = new.replace("print(total)", "print(round(total, 2))");
        fs_err::write(cwd.join("sum.py"), &other).unwrap();
        let notes = coach.after_runs(
            &[python_report("saved sum.py\nSkipping a blank line\n29.5\n")],
            cwd,
        );
        assert!(
            notes.iter().any(|n| n.contains("also prints a message")),
            "{notes:?}"
        );
        assert!(coach.ending_problems(cwd, None, "").contains(&"`sum.py` now prints a message (`print('Skipping a blank line')`) besides its result, which it did not before".to_owned()));
        let fixed = other.replace("        print('Skipping a blank line')\n", "");
        fs_err::write(cwd.join("sum.py"), fixed).unwrap();
        let notes = coach.after_runs(&[python_report("saved sum.py\n29.5\n")], cwd);
        assert!(!notes.iter().any(|n| n.contains("message")), "{notes:?}");
        let left = coach.ending_problems(cwd, None, "");
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn an_average_asked_for_and_computed_without_dividing_is_named() {
        let asked = Asked::of(
            "Which path has the highest average response time? Write just that path to slowest.txt.",
        );
        assert!(asked.average);
        let summed = "times = {}\nfor line in open('access.log'):\n    path = line.split()[6]  # e.g. /api/users\n    times[path] = times.get(path, 0) + int(line.split()[-1])\nopen('slowest.txt', 'w').write(max(times, key=times.get))\n";
        assert_eq!(
            content_problems("slowest.txt", "/api/orders\n", &[], &asked, summed),
            [
                "the task asks for an average, but the code that wrote `slowest.txt` divides nothing (no `/`, no `mean`): it added values up; an average is their sum divided by their count (per key: count each one too, `counts[key] += 1`, then `totals[key] / counts[key]`)"
            ]
        );
        // A division (also in an f-string), a mean, code that does not
        // write the file, a task that asks for no average.
        for code in [
            summed.replace(
                "max(times, key=times.get)",
                "max(times, key=lambda p: times[p] / counts[p])",
            ),
            summed.replace(
                "max(times, key=times.get)",
                "f'{max(t / n for t, n in pairs)}'",
            ),
            summed.replace(
                "max(times, key=times.get)",
                "df.groupby('path')['ms'].mean().idxmax()",
            ),
            summed.replace("slowest.txt", "other.txt"),
        ] {
            assert!(
                content_problems("slowest.txt", "/api/orders\n", &[], &asked, &code).is_empty(),
                "{code}"
            );
        }
        let total = Asked::of("Write the total response time to total.txt.");
        assert!(content_problems("slowest.txt", "5\n", &[], &total, summed).is_empty());
        // A table an earlier run made, only written here: nothing shows
        // how it was computed; made and written here, it is judged.
        let averages = Asked::of("Write team_avg.csv with each team's average score.");
        let written = "team_avg.to_csv('team_avg.csv', index=False)\n";
        assert!(
            content_problems(
                "team_avg.csv",
                "team,average\nred,10.5\n",
                &[],
                &averages,
                written
            )
            .is_empty()
        );
        let summed_here = format!("team_avg = df.groupby('team')['score'].sum()\n{written}");
        assert_eq!(
            content_problems(
                "team_avg.csv",
                "team,average\nred,21\n",
                &[],
                &averages,
                &summed_here
            )
            .len(),
            1
        );
    }

    #[test]
    fn code_that_typed_an_inputs_rows_in_instead_of_reading_it_is_told_once() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let grades = "Student, Score ,Class\nana ruiz, 78 ,A\nBen Okafor,55,B\nchen li, 91,A\n";
        fs_err::write(cwd.join("grades.csv"), grades).unwrap();
        let typed = "import pandas as pd\ndf = pd.DataFrame({'Student': ['ana ruiz', 'Ben Okafor', \"chen li\"], 'Score': [78, 55, 91]})\ndf.to_csv('passed.csv', index=False)\n";
        assert_eq!(
            copied_rows(typed, "grades.csv", grades),
            Some(vec![
                "ana ruiz".to_owned(),
                "Ben Okafor".to_owned(),
                "chen li".to_owned()
            ])
        );
        // Code that reads the file, fewer than three values, a header's
        // names only.
        let reads = format!("df = pd.read_csv('grades.csv')\n{typed}");
        assert_eq!(copied_rows(&reads, "grades.csv", grades), None);
        // A comment naming the file reads nothing.
        let commented = format!("# a sample with the columns of grades.csv\n{typed}");
        assert!(copied_rows(&commented, "grades.csv", grades).is_some());
        assert_eq!(
            copied_rows("names = ['ana ruiz', 'chen li']", "grades.csv", grades),
            None
        );
        assert_eq!(
            copied_rows("cols = ['Student', 'Score', 'Class']", "grades.csv", grades),
            None
        );
        let mut coach = Coach::new(
            true,
            "Save the students of grades.csv who passed to passed.csv.",
            cwd,
        );
        let run = python_run;
        let report = python_report("");
        coach.saw_runs(&[run(typed)]);
        let told = |notes: &[String]| {
            notes
                .iter()
                .any(|n| n.contains("typed values of `grades.csv`"))
        };
        let notes = coach.after_runs(std::slice::from_ref(&report), cwd);
        assert!(
            notes.contains(&"[oi: that code typed values of `grades.csv` into itself (`ana ruiz`, `Ben Okafor`, `chen li`) instead of reading the file: the first look shows only some of its lines, and a copy misses the rest. Read `grades.csv` in the code (`pd.read_csv('grades.csv')`, with what the first look says) so that every line counts.]".to_owned()),
            "{notes:?}"
        );
        coach.saw_runs(&[run(typed)]);
        assert!(!told(&coach.after_runs(std::slice::from_ref(&report), cwd)));
        // The result it wrote so is named when the model ends, told or not.
        fs_err::write(cwd.join("passed.csv"), "Student,Score\nana ruiz,78\n").unwrap();
        coach.saw_runs(&[run(typed)]);
        coach.after_runs(std::slice::from_ref(&report), cwd);
        let problems = coach.ending_problems(cwd, None, "The task is done.");
        assert!(
            problems.contains(&"`passed.csv` was written by code that typed values of `grades.csv` into itself (`ana ruiz`, `Ben Okafor`, `chen li`) instead of reading `grades.csv`: read the file in that code".to_owned()),
            "{problems:?}"
        );
        // Written again by code that reads the file: no more.
        let reads = format!("df = pd.read_csv('grades.csv')\n{typed}");
        fs_err::write(cwd.join("passed.csv"), "Student,Score\nchen li,91\n").unwrap();
        coach.saw_runs(&[run(&reads)]);
        coach.after_runs(std::slice::from_ref(&report), cwd);
        let problems = coach.ending_problems(cwd, None, "The task is done.");
        assert!(
            !problems.iter().any(|p| p.contains("typed values")),
            "{problems:?}"
        );
    }

    #[test]
    fn a_json_field_the_task_names_and_the_code_never_reads_is_named() {
        let asked = Asked::of(
            "Write the email addresses of the active users that have one, sorted, to active_emails.txt.",
        );
        let users = r#"{"data": {"users": [{"profile": {"email": "a@x.org"}, "status": {"active": true}}]}}"#.to_owned();
        let name = "users.json".to_owned();
        let inputs = [(&name, &users)];
        let code = "import json\ndata = json.load(open('users.json'))\nemails = sorted(u['profile']['email'] for u in data['data']['users'] if u['profile']['email'])\nopen('active_emails.txt', 'w').write('\\n'.join(emails))\n";
        assert_eq!(
            content_problems("active_emails.txt", "a@x.org\n", &inputs, &asked, code),
            [
                "the task speaks of `active`, a field of `users.json`, which the code that wrote `active_emails.txt` never reads: if the task means that field (which rows to keep, or what to sort or group by), use it"
            ]
        );
        // A name holding the field's word is no reading of it.
        let named_so = code
            .replace("emails = sorted", "active_emails = sorted")
            .replace("join(emails)", "join(active_emails)");
        assert_eq!(
            content_problems("active_emails.txt", "a@x.org\n", &inputs, &asked, &named_so).len(),
            1
        );
        assert!(reads_key("df['status.active']", "active") && reads_key("u.active == 1", "active"));
        assert!(!reads_key("active_emails = []\nu.active_since", "active"));
        // Read; JSON lines too; code that does not write the result.
        let reads = code.replace("if u['profile']['email']", "if u['status']['active']");
        assert!(
            content_problems("active_emails.txt", "a@x.org\n", &inputs, &asked, &reads).is_empty()
        );
        let lines = "{\"email\": \"a@x.org\", \"active\": true}\n{\"email\": \"b@x.org\", \"active\": false}\n".to_owned();
        assert_eq!(
            unread_field(&asked.words, &[(&name, &lines)], "active_emails.txt", code)
                .map(|(field, _)| field),
            Some("active".to_owned())
        );
        assert!(content_problems("other.txt", "a@x.org\n", &inputs, &asked, code).is_empty());
        // A document's own key, above its records, is no field to keep
        // rows by ("posts.json holds blog posts", `"blog": "notes"`).
        let blog = r#"{"blog": "notes", "posts": [{"title": "a", "tags": ["x"]}]}"#.to_owned();
        let posts = "posts.json".to_owned();
        let counts = Asked::of("posts.json holds blog posts. Write each tag's count to tags.csv.");
        let tags_code = "import json\ndata = json.load(open('posts.json'))\nopen('tags.csv', 'w').write(str(len(data['posts'])))\n";
        assert_eq!(
            unread_field(&counts.words, &[(&posts, &blog)], "tags.csv", tags_code),
            None
        );
        // Code that reads no input is told it typed its result instead.
        assert_eq!(
            unread_field(
                &asked.words,
                &inputs,
                "active_emails.txt",
                "open('active_emails.txt', 'w').write('a@x.org')"
            ),
            None
        );
        // A table's columns may be read by position: not judged.
        let table = "email,active\na@x.org,yes\n".to_owned();
        assert_eq!(
            unread_field(&asked.words, &[(&name, &table)], "active_emails.txt", code),
            None
        );
    }

    #[test]
    fn a_value_the_writing_loop_sets_and_never_reads_is_named() {
        let asked = Asked::of(
            "app.log records users logging in and out. Compute each user's total logged-in time in minutes. Write sessions.csv with the header user,minutes.",
        );
        let code = "import re\nfrom datetime import datetime\npairs = {}\nfor line in open('app.log'):\n    fields = line.split()\n    user = fields[3].split('=')[1]\n    action = fields[4].split('=')[1]\n    when = datetime.strptime(fields[0] + ' ' + fields[1], '%Y-%m-%d %H:%M:%S')\n    if user not in pairs:\n        pairs[user] = [when, when]\n    else:\n        pairs[user][1] = when\nwith open('sessions.csv', 'w') as f:\n    f.write('user,minutes\\n')\n    for user, (start, end) in pairs.items():\n        f.write(f'{user},{(end - start).total_seconds() / 60}\\n')\n";
        let text = "user,minutes\nalice,220.0\nbob,90.0\n";
        assert_eq!(
            content_problems("sessions.csv", text, &[], &asked, code),
            [
                "the code that wrote `sessions.csv` sets `action` at each step of its loop (`action = fields[4].split('=')[1]`) and never reads it: if the task depends on that value (which rows to count, keep or pair), use it"
            ]
        );
        // Read, or code that did not write the result: nothing.
        let reads = code.replace(
            "if user not in pairs:",
            "if action == 'login' and user not in pairs:",
        );
        assert!(content_problems("sessions.csv", text, &[], &asked, &reads).is_empty());
        assert!(content_problems("other.csv", text, &[], &asked, code).is_empty());
    }

    #[test]
    fn a_row_kept_per_key_that_is_not_the_latest_asked_is_named() {
        let input = "customer_id,name,updated\nC3,Cara,2026-03-01\nC1,Al,2026-01-10\nC2,Bea,2026-02-11\nC3,Cara,2026-06-15\nC1,Al,2026-05-02\n".to_owned();
        let name = "customers.csv".to_owned();
        let inputs = [(&name, &input)];
        let asked = Asked::of(
            "Keep only the most recently updated row of each customer and write them to clean.csv, sorted by customer_id.",
        );
        assert_eq!(asked.latest, Some(true));
        let oldest =
            "customer_id,name,updated\nC1,Al,2026-01-10\nC2,Bea,2026-02-11\nC3,Cara,2026-06-15\n";
        assert_eq!(
            content_problems("clean.csv", oldest, &inputs, &asked, ""),
            [
                "`clean.csv` keeps the row of `customer_id` C1 with `updated` 2026-01-10, but `customers.csv` has a later one (2026-05-02) and the task asks for the latest: sort by `updated` and keep the last of each (`df.sort_values('updated').drop_duplicates('customer_id', keep='last')`)"
            ]
        );
        // The model's own line, where it kept the wrong end after its sort.
        let code = "df = df.sort_values(by='updated', ascending=False)\ndf = df.drop_duplicates(subset='customer_id', keep='last')\n";
        assert!(
            content_problems("clean.csv", oldest, &inputs, &asked, code)[0].ends_with(
                "the task asks for the latest: in your code, `df = df.drop_duplicates(subset='customer_id', keep='last')` becomes `df = df.drop_duplicates(subset='customer_id', keep='first')`"
            )
        );
        assert_eq!(keep_fix(code, false), None);
        assert_eq!(
            keep_fix(&code.replace("ascending=False", "ascending=True"), false)
                .map(|(_, fixed)| fixed),
            Some("df = df.drop_duplicates(subset='customer_id', keep='first')".to_owned())
        );
        assert_eq!(
            keep_fix("df = df.drop_duplicates('id', keep='last')", true),
            None
        );
        let newest =
            "customer_id,name,updated\nC1,Al,2026-05-02\nC2,Bea,2026-02-11\nC3,Cara,2026-06-15\n";
        assert!(content_problems("clean.csv", newest, &inputs, &asked, "").is_empty());
        // The earliest asked; no date column; no key repeated.
        let earliest = Asked::of("Keep the oldest row of each customer in clean.csv.");
        assert!(
            content_problems("clean.csv", newest, &inputs, &earliest, "")[0]
                .contains("has an earlier one (2026-01-10) and the task asks for the earliest")
        );
        assert_eq!(
            table::not_latest("id,n\nC1,1\nC2,2\n", "id,n\nC1,1\nC1,3\nC2,2\n", true),
            None
        );
        assert_eq!(table::not_latest(newest, newest, true), None);
        assert_eq!(Asked::of("Write the names to names.txt.").latest, None);
    }

    #[test]
    fn a_scratch_output_without_the_inputs_header_is_named_before_ending() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(cwd.join("people.csv"), "name,age\nAna,17\nBen,42\n").unwrap();
        fs_err::write(cwd.join("filter_adults.py"), "import csv, sys\n").unwrap();
        let task = "filter_adults.py should write the rows of people aged 18 or over, with the same header, to the file given as its second argument. Fix filter_adults.py.";
        let lacking = "saved filter_adults.py\n[argument 2, /tmp/k/out2.csv, now holds:]\nBen,42\r\n[its first line is not the first line of people.csv: name,age]\n";
        assert_eq!(
            super::super::save_as::scratch_header(lacking),
            Some(Some(("people.csv".to_owned(), "name,age".to_owned())))
        );
        let mut coach = Coach::new(true, task, cwd);
        coach.after_runs(&[python_report(lacking)], cwd);
        let note = coach
            .note_before_ending("The task is done.", HarnessKind::Markdown, cwd, None)
            .unwrap_or_default();
        assert!(
            note.contains("what your script wrote for its output argument does not begin with the header line of `people.csv` (`name,age`)"),
            "{note}"
        );
        // Run again with the header kept: nothing to say of it.
        let mut fixed = Coach::new(true, task, cwd);
        fixed.after_runs(&[python_report(lacking)], cwd);
        fixed.after_runs(
            &[python_report(
                "[argument 2, /tmp/k/out2.csv, now holds:]\nname,age\nBen,42\n",
            )],
            cwd,
        );
        let note = fixed
            .note_before_ending("The task is done.", HarnessKind::Markdown, cwd, None)
            .unwrap_or_default();
        assert!(!note.contains("header line"), "{note}");
        // A task that says nothing of a header hears nothing of it.
        let mut other = Coach::new(true, "Fix filter_adults.py so it keeps adults.", cwd);
        other.after_runs(&[python_report(lacking)], cwd);
        let note = other
            .note_before_ending("The task is done.", HarnessKind::Markdown, cwd, None)
            .unwrap_or_default();
        assert!(!note.contains("header line"), "{note}");
    }

    #[test]
    fn a_result_appended_to_by_a_run_again_is_named() {
        for code in [
            "with open('flat.txt', 'a') as f:\n    f.write(line)",
            "f = open(\"flat.txt\", mode=\"a+\")",
            "echo x >> flat.txt",
            "echo x >>'flat.txt'",
        ] {
            assert!(appends_to(code, "flat.txt"), "{code}");
        }
        for code in [
            "with open('flat.txt', 'w') as f:\n    f.write(line)",
            "open('other.txt', 'a').write(x)",
            "echo x > flat.txt",
        ] {
            assert!(!appends_to(code, "flat.txt"), "{code}");
        }
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(cwd.join("settings.json"), "{\"a\": 1, \"b\": 2}").unwrap();
        let task = "Flatten settings.json into flat.txt, one line per leaf.";
        let code = "with open('flat.txt', 'a') as f:\n    f.write('a=1\\n')\n";
        let mut coach = Coach::new(true, task, cwd);
        let run = |coach: &mut Coach| {
            coach.saw_runs(&[Some(ProposedRun {
                call_id: None,
                language: Some("python".to_owned()),
                code: code.to_owned(),
            })]);
        };
        run(&mut coach);
        fs_err::write(cwd.join("flat.txt"), "a=1\nb=2\n").unwrap();
        let first = coach.after_runs(&[python_report(crate::output::PRINTED_NOTHING)], cwd);
        assert!(!first.iter().any(|n| n.contains("grew")), "{first:?}");
        run(&mut coach);
        fs_err::write(cwd.join("flat.txt"), "a=1\nb=2\na=1\nb=2\n").unwrap();
        let again = coach.after_runs(&[python_report(crate::output::PRINTED_NOTHING)], cwd);
        assert_eq!(again, [appended_note("flat.txt", 8, 16)]);
        // Before it ends, that alone is said of the file, not its lines'
        // faults (here the line written twice).
        let note = coach
            .note_before_ending("The task is done.", HarnessKind::Markdown, cwd, None)
            .unwrap_or_default();
        assert!(
            note.contains("your code opens `flat.txt` to append"),
            "{note}"
        );
        assert!(!note.contains("twice"), "{note}");
        // Other models hear nothing of it.
        let mut big = Coach::new(false, task, cwd);
        fs_err::remove_file(cwd.join("flat.txt")).unwrap();
        run(&mut big);
        fs_err::write(cwd.join("flat.txt"), "a=1\n").unwrap();
        big.after_runs(&[python_report(crate::output::PRINTED_NOTHING)], cwd);
        run(&mut big);
        fs_err::write(cwd.join("flat.txt"), "a=1\na=1\n").unwrap();
        let notes = big.after_runs(&[python_report(crate::output::PRINTED_NOTHING)], cwd);
        assert!(!notes.iter().any(|n| n.contains("grew")), "{notes:?}");
    }

    #[test]
    fn a_table_of_its_header_alone_is_named() {
        let asked = Asked::of("Write totals.csv with the header name,total.");
        assert_eq!(
            content_problems("totals.csv", "name,total\n", &[], &asked, "python3"),
            [
                "`totals.csv` holds its header (`name,total`) and no rows: the code's table came out empty, so a filter or a merge in it matched nothing (values written differently in the two tables, compared before they are made alike, or the wrong columns compared); print the table before that step to see its values"
            ]
        );
        assert!(
            content_problems("totals.csv", "name,total\nAna,3\n", &[], &asked, "python3")
                .is_empty()
        );
        // One value alone in a CSV file is no header.
        assert!(content_problems("n.csv", "3\n", &[], &Asked::default(), "python3").is_empty());
    }

    #[test]
    fn a_group_on_several_rows_where_the_task_picks_one_per_group_is_named() {
        let task = "scores.csv has one row per exam. For each subject, find the student with the highest score (on a tie, the name that comes first alphabetically). Write best.csv with the header subject,student,score, sorted by subject.";
        let tied =
            "subject,student,score\nhistory,Maya,91\nmath,Leo,93\nmath,Ari,93\nphysics,Leo,85\n";
        let problems = content_problems("best.csv", tied, &[], &Asked::of(task), "python3");
        assert_eq!(
            problems,
            [
                "the `subject` column of `best.csv` holds `math` on 2 rows where the task asks for one row for each subject: keep one per subject (pandas: sort so that the row to keep comes first, with the task's tie rule as a second sort key, then `.drop_duplicates('subject')`)"
            ]
        );
        let one_each = "subject,student,score\nhistory,Maya,91\nmath,Ari,93\nphysics,Leo,85\n";
        assert!(
            content_problems("best.csv", one_each, &[], &Asked::of(task), "python3").is_empty()
        );
        // Spelled in other case, one group still.
        let folded = "subject,student,score\nMath,Leo,93\nmath ,Ari,93\n";
        assert_eq!(
            table::repeated_group(folded, "subjects"),
            Some(("subject".to_owned(), "Math".to_owned(), 2))
        );
        // Several rows per group are what a task without a pick asks.
        let listing = "For each order, write its items to items.csv with the header order,item.";
        let items = "order,item\n1,pen\n1,ink\n";
        assert!(
            content_problems("items.csv", items, &[], &Asked::of(listing), "python3").is_empty()
        );
        // A sum per key left on each input row: grouped.
        let net = "transactions.csv lists sales and refunds. For each month, compute net sales: the sum of sale amounts minus the sum of refund amounts. Write net_by_month.csv with the header month,net.";
        let per_row = "month,net\n2024-01,120.50\n2024-01,80.00\n2024-02,200.00\n";
        assert_eq!(
            content_problems("net_by_month.csv", per_row, &[], &Asked::of(net), "python3"),
            [
                "the `month` column of `net_by_month.csv` holds `2024-01` on 2 rows where the task asks for one row for each month: the rows were not grouped by it; make the `month` value of each input row first (a month from a date: `df['date'].str[:7]`), then reduce each group to one row (pandas: `df.groupby('month', as_index=False)[value_column].sum()`)"
            ]
        );
        let count =
            "For each user, count the logins. Write logins.csv with the header user,logins.";
        let problems = content_problems(
            "logins.csv",
            "user,logins\nann,1\nann,1\n",
            &[],
            &Asked::of(count),
            "python3",
        );
        assert!(
            problems[0].ends_with("[value_column].size()`)"),
            "{problems:?}"
        );
        // A listing with a sum beside its text: several rows per key.
        let listing_sum = "For each order, write its items and their total price to items.csv with the header order,item,total.";
        assert!(
            content_problems(
                "items.csv",
                "order,item,total\n1,pen,2\n1,ink,3\n",
                &[],
                &Asked::of(listing_sum),
                "python3"
            )
            .is_empty()
        );
        for several in [
            "For each region, write its top 3 products to top.csv with the header region,product.",
            "For each region, write the three largest orders to top.csv with the header region,order.",
        ] {
            assert!(!Asked::of(several).picks_one, "{several}");
        }
        assert!(Asked::of("Which is the largest file in each folder?").picks_one);
        let per_row =
            "Write users.csv with one row per user and their minutes, most minutes first.";
        assert_eq!(
            content_problems(
                "users.csv",
                "user,minutes\nann,3\nann,2\n",
                &[],
                &Asked::of(per_row),
                "python3"
            )
            .len(),
            1
        );
    }

    #[test]
    fn a_result_of_several_lines_where_one_value_is_asked_is_named() {
        for task in [
            "Which path has the highest average response time? Write just that path to slowest.txt.",
            "Which region sold the most units in total? Write just the region's name to top.txt.",
            "How many are open? Write the number to open.txt.",
            "Average the readings, skipping the missing ones, and write the average rounded to 1 decimal to avg.txt.",
            "Find the largest file. Write its name to largest.txt.",
        ] {
            assert!(Asked::of(task).single, "{task}");
        }
        for task in [
            "Write the names of all such files (just the file names, not the folder), sorted, one per line, to dups.txt.",
            "Write the total amount per region to totals.csv.",
            "Write the name of each file to names.txt.",
            "Write the name and size of the largest file to largest.txt.",
            "Write the ids, one per line, to ids.txt.",
            "Convert data.csv to data.json.",
        ] {
            assert!(!Asked::of(task).single, "{task}");
        }
        let split = "split customers.csv by country: make a folder by_country and in it one csv per country. then write the number of files you made to count.txt.";
        assert!(!Asked::of(split).single);
        assert_eq!(asks_count_alone(split, "count.txt"), Some("number"));
        assert_eq!(asks_count_alone(split, "by_country/india.csv"), None);
        for (task, name) in [
            (
                "for each region, count the orders. write the number of orders per region to counts.txt.",
                "counts.txt",
            ),
            ("write the number of orders to counts.csv.", "counts.csv"),
            (
                "write the number and the names of the files to report.txt.",
                "report.txt",
            ),
            ("write the names of the files to names.txt.", "names.txt"),
        ] {
            assert_eq!(asks_count_alone(task, name), None, "{task}");
        }
        assert_eq!(
            content_problems(
                "count.txt",
                "country\nindia             1\nportugal          2\n",
                &[],
                &Asked::of(split),
                "python3"
            ),
            [
                "`count.txt` has 3 lines (the first is `country`) where the task asks for how many there are, not the list: write that one number (`len(values)`; pandas: `len(df)`)"
            ]
        );
        let phones = "Then, as a second step, write the number of distinct phone numbers to unique_phones.txt.";
        assert_eq!(
            content_problems(
                "unique_phones.txt",
                "phone\n5551234567\n5559876543\n",
                &[],
                &Asked::of(phones),
                "python3"
            ),
            [
                "`unique_phones.txt` has 3 lines (the first is `phone`) where the task asks for how many there are, not the list: write that one number (`len(set(values))` for the distinct values of a list; pandas: `df[column].nunique()`)"
            ]
        );
        let asked = Asked::of("Write just that path to slowest.txt.");
        assert_eq!(
            content_problems(
                "slowest.txt",
                "/api/orders\nThe slowest path is: /api/orders\n",
                &[],
                &asked,
                ""
            ),
            [
                "`slowest.txt` has 2 lines (the first is `/api/orders`) where the task asks for one value alone: write only that value"
            ]
        );
        assert!(content_problems("slowest.txt", "/api/search\n\n", &[], &asked, "").is_empty());
    }

    #[test]
    fn a_line_that_is_not_an_email_address_alone_is_named_where_addresses_are_asked() {
        let asked = Asked::of(
            "Extract all the email addresses from contacts.txt and write them, one per line, to emails.txt.",
        );
        assert!(asked.emails);
        assert_eq!(
            content_problems(
                "emails.txt",
                "<ann@example.org>,\nSmith:\n",
                &[],
                &asked,
                ""
            ),
            [
                "`emails.txt` has a line that is not an email address alone (`<ann@example.org>,`): match the addresses themselves, not the words around them (`re.findall(r'[\\w.+-]+@[\\w-]+(?:\\.[\\w-]+)+', text)`)"
            ]
        );
        assert!(
            content_problems(
                "emails.txt",
                "ann@example.org\nbob.smith@mail.example.com\ncid+news@example.net\n",
                &[],
                &asked,
                ""
            )
            .is_empty()
        );
        assert!(!is_email("a@localhost") && !is_email("a b@x.org") && is_email("a_b@x-y.co.uk"));
        assert!(!Asked::of("Count the emails in inbox.txt and write the count to n.txt.").emails);
    }

    #[test]
    fn a_tie_kept_other_than_alphabetically_is_named() {
        let task = "scores.csv has one row per exam. For each subject, find the student with the highest score (on a tie, the name that comes first alphabetically). Write best.csv with the header subject,student,score, sorted by subject.";
        let asked = Asked::of(task);
        let (input, body) = (
            "scores.csv".to_owned(),
            "subject,student,score\nMath,Leo,93\n math ,Ari,93\nhistory,Maya,91\nmath,Zed,80\nhistory,Ari,70\n"
                .to_owned(),
        );
        let inputs = [(&input, &body)];
        assert_eq!(
            content_problems(
                "best.csv",
                "subject,student,score\nhistory,Maya,91\nmath,Leo,93\n",
                &inputs,
                &asked,
                ""
            ),
            [
                "`best.csv` keeps `Leo` for `subject` math, but `scores.csv` has `Ari` there with the same `score` (93), and the task breaks ties alphabetically: sort by `score` (the way the task picks) and then by `student` A to Z before keeping one row per `subject` (pandas: `.sort_values(['score', 'student'], ascending=[False, True]).drop_duplicates('subject').sort_values('subject')` for the highest, then sorted by `subject` as the task asks, in place of your sorts)"
            ]
        );
        // A task that sorts by something else: the chain stops at the pick.
        let unsorted = Asked::of(&task.replace("sorted by subject", "sorted by student"));
        assert_eq!(
            content_problems(
                "best.csv",
                "subject,student,score\nmath,Leo,93\nhistory,Maya,91\n",
                &inputs,
                &unsorted,
                ""
            ),
            [
                "`best.csv` keeps `Leo` for `subject` math, but `scores.csv` has `Ari` there with the same `score` (93), and the task breaks ties alphabetically: sort by `score` (the way the task picks) and then by `student` A to Z before keeping one row per `subject` (pandas: `.sort_values(['score', 'student'], ascending=[False, True]).drop_duplicates('subject')` for the highest)"
            ]
        );
        assert!(
            content_problems(
                "best.csv",
                "subject,student,score\nhistory,Maya,91\nmath,Ari,93\n",
                &inputs,
                &asked,
                ""
            )
            .is_empty()
        );
        // No tie rule in the task: not judged.
        let plain =
            Asked::of("For each subject, find the student with the highest score. Write best.csv.");
        assert!(
            content_problems(
                "best.csv",
                "subject,student,score\nhistory,Maya,91\nmath,Leo,93\n",
                &inputs,
                &plain,
                ""
            )
            .is_empty()
        );
    }

    #[test]
    fn a_result_without_dots_where_the_task_asks_dotted_paths_is_named() {
        let task = "old.json and new.json are two versions of an app's settings. List every setting that is in new.json but not in old.json, as its dotted path (for example server.tls.cert), one per line, sorted, in added.txt.";
        let asked = Asked::of(task);
        assert_eq!(asked.dotted_example.as_deref(), Some("server.tls.cert"));
        let (old, new) = (
            "old.json".to_owned(),
            "{\"server\": {\"host\": \"x\"}, \"timeout\": 1}".to_owned(),
        );
        let inputs = [(&old, &new)];
        assert_eq!(
            content_problems("added.txt", "timeout\n", &inputs, &asked, ""),
            [
                "no line of `added.txt` has a dot (`timeout`) where the task's example `server.tls.cert` is a dotted path: a key inside a nested object is written with the keys above it, joined by `.`; walk each document down to its leaves (`def leaves(d, path=''):` then, for each `k, v` in `d.items()`, `p = f'{path}.{k}' if path else k`, `yield from leaves(v, p)` when `v` is a dict, else `yield p`)"
            ]
        );
        // A line with a dot, a flat document, or no dotted example.
        assert!(
            content_problems("added.txt", "server.tls\ntimeout\n", &inputs, &asked, "").is_empty()
        );
        let flat = "{\"timeout\": 1}".to_owned();
        assert!(
            content_problems("added.txt", "timeout\n", &[(&old, &flat)], &asked, "").is_empty()
        );
        assert_eq!(
            dotted_example("Sort the files (for example report.pdf goes into pdf/)."),
            None
        );
        assert_eq!(
            dotted_example("Write each key as a dotted path, like app.server.port, to keys.txt."),
            Some("app.server.port".to_owned())
        );
    }

    #[test]
    fn a_key_set_twice_gets_its_split_line_changed_when_sent_again() {
        let dir = tempfile::tempdir().unwrap();
        let task = "Merge defaults.env and local.env into merged.env: every key from both, where local.env's value wins, one KEY=value line per key.";
        let code = "merged = {}\nfor name in ['defaults.env', 'local.env']:\n    for line in open(name):\n        if line.strip() and not line.startswith('#'):\n            key, value = line.strip().split('=')\n            merged[key] = value\nwith open('merged.env', 'w') as f:\n    for k, v in sorted(merged.items()):\n        f.write(f'{k}={v}\\n')";
        let run = ProposedRun {
            call_id: None,
            language: Some("python".to_owned()),
            code: code.to_owned(),
        };
        let mut coach = Coach::new(true, task, dir.path());
        coach.saw_runs(&[Some(run.clone())]);
        fs_err::write(
            dir.path().join("merged.env"),
            "APP_PORT=8080\nAPP_PORT = 9090\nLOG_LEVEL=info\n",
        )
        .unwrap();
        coach.saw_failure(false);
        coach.after_runs(&[python_report("")], dir.path());
        let mut actions = vec![Action::Run(run)];
        let fix = coach
            .apply_line_fix(&mut actions)
            .expect("the line is changed");
        assert_eq!(fix.code, "key, value = line.strip().split('=')");
        let Action::Run(sent) = &actions[0] else {
            panic!("a run")
        };
        assert!(
            sent.code.contains("\n            key, value = (part.strip().strip('\"').strip(\"'\") for part in line.strip().replace('export ', '', 1).split('=', 1))\n            merged[key] = value"),
            "{}",
            sent.code
        );
    }

    #[test]
    fn a_key_set_twice_and_quotes_the_task_leaves_out_are_named() {
        let merged = "APP_HOST=0.0.0.0\nAPP_PORT=8080\nAPP_PORT = 9090\nDB_URL=\"postgres://localhost/app\"\n";
        let asked = Asked::of(
            "Merge a.env and b.env into merged.env, one KEY=value line per key, without comments, quotes or `export`.",
        );
        assert_eq!(
            content_problems("merged.env", merged, &[], &asked, ""),
            [
                "`merged.env` sets `APP_PORT` on two lines (`APP_PORT=8080` and `APP_PORT = 9090`): one line per key, with the value that wins (a key read with spaces around `=` or `export ` before it is the same key: read it as `key = key.replace('export ', '').strip()`)",
                "`merged.env` has quotes in it (`DB_URL=\"postgres://localhost/app\"`) where the task says without quotes: strip them from each value as you read it (`value = value.strip().strip('\"')`)",
            ]
        );
        // The line of the code that split the setting, changed.
        let python = "for line in open('local.env'):\n    if line.strip() and not line.startswith('#'):\n        key, value = line.strip().split('=')\n        merged[key] = value";
        let fixed = "key, value = (part.strip().strip('\"').strip(\"'\") for part in line.strip().replace('export ', '', 1).split('=', 1))";
        assert!(
            content_problems("merged.env", merged, &[], &asked, python)[0].ends_with(&format!(
                "is the same key: in your code, `key, value = line.strip().split('=')` becomes `{fixed}`)"
            )),
            "{:?}",
            content_problems("merged.env", merged, &[], &asked, python)
        );
        assert_eq!(
            key_value_fix("k, v = l.split(\"=\", 1)"),
            Some((
                "k, v = l.split(\"=\", 1)".to_owned(),
                "k, v = (part.strip().strip('\"').strip(\"'\") for part in l.replace('export ', '', 1).split('=', 1))".to_owned()
            ))
        );
        // A line that already drops `export ` gets the rest; each split
        // line of the code is changed.
        let both = "for line in a:\n    key, value = line.strip().split('=')\nfor line in b:\n    key, value = line.strip().replace('export ', '', 1).split('=', 1)\n";
        assert_eq!(
            key_value_fixes(both),
            [
                (
                    "key, value = line.strip().split('=')".to_owned(),
                    fixed.to_owned()
                ),
                (
                    "key, value = line.strip().replace('export ', '', 1).split('=', 1)".to_owned(),
                    fixed.to_owned()
                ),
            ]
        );
        // Not two names split at `=`.
        for code in [
            "parts = line.split('=')",
            "key, value = line.split(':')",
            "a, b, c = line.split('=')",
            "key, value = f(x, y).split('=')",
        ] {
            assert_eq!(key_value_fix(code), None, "{code}");
        }
        assert_eq!(
            repeated_key("LOG_LEVEL=info\nexport LOG_LEVEL=debug\n"),
            Some((
                "LOG_LEVEL".to_owned(),
                "LOG_LEVEL=info".to_owned(),
                "export LOG_LEVEL=debug".to_owned()
            ))
        );
        // Sections may set one key each; lines that are not settings; one
        // setting; every key once.
        for text in [
            "[a]\nport = 1\n[b]\nport = 2\n",
            "1^2 = 1\n1^2 = 1\n",
            "A=1\n",
            "A=1\nB=2\n# A=3\n",
        ] {
            assert_eq!(repeated_key(text), None, "{text}");
        }
        // Quotes are fine where the task does not leave them out.
        assert!(
            Asked::of("Write KEY=value lines to merged.env.")
                .without
                .is_empty()
        );
        // A query string, a dot before an extension.
        let asked =
            Asked::of("Which path (without its query string) is slowest? Write it to slowest.txt.");
        assert_eq!(asked.without, [Without::Query]);
        assert_eq!(
            content_problems("slowest.txt", "/api/search?q=slow\n", &[], &asked, ""),
            [
                "`slowest.txt` has a query string in it (`/api/search?q=slow`) where the task says without it: cut it off where you read the path (`path = path.split('?')[0]`)"
            ]
        );
        assert!(content_problems("slowest.txt", "/api/search\n", &[], &asked, "").is_empty());
        let asked = Asked::of(
            "Write ext.csv with the header extension,count (extension without the dot, lowercase).",
        );
        assert_eq!(asked.without, [Without::Dot]);
        assert_eq!(
            content_problems("ext.csv", "extension,count\n.py,3\nmd,2\n", &[], &asked, ""),
            [
                "`ext.csv` has a dot before a value (`.py,3`) where the task says without the dot: drop it (`ext = ext.lstrip('.')`)"
            ]
        );
        assert!(
            content_problems("ext.csv", "extension,count\npy,3\nmd,2\n", &[], &asked, "")
                .is_empty()
        );
        // A folder before a file's name.
        let asked = Asked::of(
            "Some files in docs/ have the same contents as another. Write the names of all such files (just the file names, not the folder), sorted, one per line, to duplicates.txt.",
        );
        assert_eq!(asked.without, [Without::Folder]);
        assert_eq!(
            content_problems(
                "duplicates.txt",
                "docs/Intro copy.txt\nintro.txt\n",
                &[],
                &asked,
                ""
            ),
            [
                "`duplicates.txt` has a folder before a file's name (`docs/Intro copy.txt`) where the task asks for the names alone, without the folder: write only the last part of each path (Python: `os.path.basename(path)`; shell: `find … -printf '%f\\n'`, or `basename` on each)"
            ]
        );
        assert!(
            content_problems(
                "duplicates.txt",
                "Intro copy.txt\nintro.txt\n",
                &[],
                &asked,
                ""
            )
            .is_empty()
        );
        for task in [
            "List the logs without their folder in logs.txt.",
            "Write each file's base name to names.txt.",
        ] {
            assert_eq!(Asked::of(task).without, [Without::Folder], "{task}");
        }
        // Paths asked, a URL, a date with slashes in a task that leaves
        // nothing out.
        assert!(
            Asked::of("Write the path of each file to paths.txt.")
                .without
                .is_empty()
        );
        assert_eq!(
            Asked::of("Which page (without the query string of its path) is slowest?").without,
            [Without::Query]
        );
        assert!(!Without::Folder.found("https://example.org/a"));
        assert!(!Without::Folder.found("/"));
    }

    #[test]
    fn whole_rows_copied_where_a_column_is_asked_are_named() {
        let report = "Nightly build report\n\nID      Job              Status    Duration\n------  ---------------  --------  --------\nJ-102   unit tests       FAILED    00:12:55\nJ-104   integration      FAILED    00:30:02\n".to_owned();
        let input = "report.txt".to_owned();
        let task = "Write the IDs of the jobs in report.txt whose status is FAILED, one per line, to failed.txt.";
        let asked = Asked::of(task);
        let text = "J-102   unit tests       FAILED    00:12:55\nJ-104   integration      FAILED    00:30:02\n";
        let row = whole_row(text, &[(&input, &report)], &asked.task);
        assert_eq!(
            row,
            Some(WholeRow {
                line: "J-102   unit tests       FAILED    00:12:55".to_owned(),
                input: "report.txt".to_owned(),
                column: "ID".to_owned(),
                take: r"`cells = re.split(r'\s{2,}', line.strip())`, then `cells[0]`".to_owned(),
            })
        );
        let problems = content_problems("failed.txt", text, &[(&input, &report)], &asked, "");
        assert!(
            problems.iter().any(|p| p.starts_with(
                "the line `J-102   unit tests       FAILED    00:12:55` of `failed.txt` is a whole row of `report.txt`, where the task asks for its `ID` values, one per line: write only that cell of each row"
            )),
            "{problems:?}"
        );
        // The cells alone pass.
        assert_eq!(
            whole_row("J-102\nJ-104\n", &[(&input, &report)], &asked.task),
            None
        );
        // A CSV row, its column named in the plural.
        let csv = "name,city,age\nAnn,Oslo,31\nBob,Rome,17\n".to_owned();
        let people = "people.csv".to_owned();
        let row = whole_row(
            "Ann,Oslo,31\n",
            &[(&people, &csv)],
            "write the cities of the adults, one per line, to cities.txt.",
        )
        .map(|row| (row.column, row.take));
        assert_eq!(
            row,
            Some((
                "city".to_owned(),
                "`row[1]` of each `row` of `csv.reader(f)`".to_owned()
            ))
        );
        // A task that asks for lines or rows themselves, or names no
        // column, asks for no cell.
        for lower in [
            "write the lines of report.txt whose status is failed, one per line, to failed.txt.",
            "write the rows with status failed, one per line, to failed.txt.",
            "write what failed, one per line, to failed.txt.",
        ] {
            assert_eq!(
                whole_row(text, &[(&input, &report)], lower),
                None,
                "{lower}"
            );
        }
    }

    #[test]
    fn a_value_the_task_says_to_leave_out_still_in_the_result_is_named() {
        let task = "First, write clean.csv: the rows of readings.csv that have a temperature (leave out rows where it is empty, \"n/a\" or \"-\"), same header. Then write stats.txt with three lines: \"min: X\", \"max: X\" and \"mean: X\".";
        assert_eq!(left_out_values(task), ["n/a", "-"]);
        assert_eq!(
            left_out_values("Skip the lines marked \"draft\". Write \"total: N\" to out.txt."),
            ["draft"]
        );
        // Quotes outside such a clause, or a word that only holds a lead,
        // leave nothing out.
        assert!(left_out_values("Write \"min: X\" to stats.txt.").is_empty());
        assert!(left_out_values("Count the skipped \"x\" jobs.").is_empty());
        let asked = Asked::of(task);
        let clean = "station,time,temperature\nnorth,06:00,11.5\nsouth,06:00,9.0\neast,12:00,-\n";
        assert_eq!(
            content_problems("clean.csv", clean, &[], &asked, ""),
            [
                "`clean.csv` still holds `-` in its `temperature` column, a value the task says to leave out: leave those rows out before writing (pandas: `df = df[~df['temperature'].astype(str).str.strip().isin(['n/a', '-'])]`; Python: `if row['temperature'].strip() in ('n/a', '-',): continue`)"
            ]
        );
        assert!(
            content_problems(
                "clean.csv",
                "station,time,temperature\nnorth,06:00,11.5\nsouth,06:00,9.0\neast,12:00,-2.5\n",
                &[],
                &asked,
                ""
            )
            .is_empty()
        );
        // A list of lines.
        let asked = Asked::of("Write the statuses, one per line, to s.txt, skipping \"n/a\".");
        assert_eq!(
            kept_left_out("ok\nN/A\nfailed\n", &asked.left_out),
            Some(("n/a".to_owned(), None))
        );
        assert_eq!(kept_left_out("ok\nfailed\n", &asked.left_out), None);
    }

    #[test]
    fn a_whole_columns_total_in_every_row_where_one_per_key_is_asked_is_named() {
        let task = "customers.csv and payments.csv share a customer id. Write totals.csv with the header name,total: one row per customer with the sum of their payments, sorted by name.";
        let asked = Asked::of(task);
        let code = "merged = pd.merge(customers, payments, left_on='customer_id', right_on='customer')\nmerged['total'] = merged['amount'].sum()\nmerged = merged.drop_duplicates('customer')\nmerged[['name', 'total']].to_csv('totals.csv', index=False)\n";
        let text = "name,total\nAna Lima,42.0\nBen Okafor,42.0\nChen Wei,42.0\n";
        assert_eq!(
            table::same_in_every_row(text),
            Some((
                "total".to_owned(),
                "42.0".to_owned(),
                3,
                Some("name".to_owned())
            ))
        );
        assert_eq!(
            content_problems("totals.csv", text, &[], &asked, code),
            [
                "the `total` column of `totals.csv` is `42.0` in all 3 rows, where the task asks for a value for each customer: one number for the whole column (`df['amount'].sum()`) was put in every row; in your code, `merged['total'] = merged['amount'].sum()` becomes `merged['total'] = merged.groupby('customer')['amount'].transform('sum')`"
            ]
        );
        // Without a word of `each` in the code: the result's column of text.
        assert_eq!(
            whole_column_total(
                "df['avg'] = df[\"score\"].mean()",
                "avg",
                Some("team"),
                &["group".to_owned()]
            ),
            Some((
                "df['avg'] = df[\"score\"].mean()".to_owned(),
                "df['avg'] = df.groupby('team')['score'].transform('mean')".to_owned()
            ))
        );
        // Computed per key already, or of another table: no line.
        for code in [
            "df['total'] = df.groupby('name')['amount'].transform('sum')",
            "df['total'] = other['amount'].sum()",
            "total = df['amount'].sum()",
        ] {
            assert_eq!(
                whole_column_total(code, "total", Some("name"), &[]),
                None,
                "{code}"
            );
        }
        // Totals that differ, a flag of 1 in every row, or rows all
        // alike: nothing named.
        for text in [
            "name,total\nAna,4\nBen,6\nChen,6\n",
            "name,paid\nAna,1\nBen,1\nChen,1\n",
            "name,total\nAna,4\nAna,4\nAna,4\n",
            "name,total\nAna,4\nBen,4\n",
        ] {
            assert_eq!(table::same_in_every_row(text), None, "{text}");
        }
        // The key is the word after "per" that the code names, not the
        // first word after "each".
        let asked = Asked::of(
            "customers.csv and payments.csv share a customer id, typed differently in each file. Write totals.csv with the header name,total: one row per customer with the sum of their payments.",
        );
        assert_eq!(asked.each, ["file", "customer"]);
        let problems = content_problems("totals.csv", text, &[], &asked, code);
        assert!(
            problems[0].contains("where the task asks for a value for each customer:"),
            "{problems:?}"
        );
        // The total per key put on every input row of that key: rows
        // repeated where one per key is asked.
        let repeated = "name,total\nAna Lima,15.0\nAna Lima,15.0\nBen Okafor,20.0\n";
        assert_eq!(
            table::repeated_row(repeated),
            Some(("Ana Lima,15.0".to_owned(), 2))
        );
        assert_eq!(
            content_problems("totals.csv", repeated, &[], &asked, code),
            [
                "`totals.csv` has the row `Ana Lima,15.0` 2 times where the task asks for one row per customer: the rows were not reduced to one per customer (pandas: group them, `df.groupby(key, as_index=False)[value].sum()`, or keep one of each after a `transform`, `.drop_duplicates()`)"
            ]
        );
        assert_eq!(
            table::repeated_row("name,total\nAna Lima,15.0\nBen Okafor,20.0\nCy,1\n"),
            None
        );
        // Not asked per key: not named.
        let asked = Asked::of("Write the grand total to totals.csv with the header name,total.");
        assert!(asked.each.is_empty());
        assert!(content_problems("totals.csv", text, &[], &asked, code).is_empty());
    }

    #[test]
    fn a_blank_line_among_values_one_per_line_is_named() {
        assert_eq!(blank_among("\nrequests\nnumpy\n"), Some(1));
        assert_eq!(blank_among("a\n\nb\n"), Some(2));
        assert_eq!(blank_among("a\nb\n\n\n"), None);
        assert_eq!(blank_among("a\nb"), None);
        let asked = Asked::of("Write their names, one per line, sorted, to unpinned.txt.");
        assert_eq!(
            content_problems("unpinned.txt", "\ngunicorn\nnumpy\n", &[], &asked, ""),
            [
                "line 1 of `unpinned.txt` is blank, among its values, where the task asks for one per line: leave out empty values (`if value.strip()`) before writing, or fix the file as it is: `lines = [l for l in open('unpinned.txt').read().splitlines() if l.strip()]`, then `open('unpinned.txt', 'w').write('\\n'.join(lines) + '\\n')`"
            ]
        );
        // Not asked one per line: not named.
        let asked = Asked::of("Write their names to unpinned.txt.");
        assert!(
            content_problems("unpinned.txt", "\ngunicorn\nnumpy\n", &[], &asked, "").is_empty()
        );
    }

    #[test]
    fn capitals_where_the_task_asks_lower_case_are_named() {
        let asked =
            Asked::of("Write their names in lower case, one per line, sorted, to unpinned.txt.");
        assert!(asked.lower_case);
        assert_eq!(
            content_problems("unpinned.txt", "gunicorn\nNumPy\n", &[], &asked, ""),
            [
                "`unpinned.txt` has `NumPy` where the task asks for lower case: lower each value before writing it (`value.lower()`; pandas: `df[column].str.lower()`)"
            ]
        );
        assert!(content_problems("unpinned.txt", "gunicorn\nnumpy\n", &[], &asked, "").is_empty());
        // A label the task writes keeps its case, and so does the header
        // it gives.
        let asked = Asked::of(
            "Write each owner in lower case as \"Owner: count\", with the header Owner,Count, to owners.txt.",
        );
        assert_eq!(capitalized("Owner,Count\nOwner: ann 3\n", &asked), None);
        assert_eq!(
            capitalized("Owner,Count\nOwner: Ann 3\n", &asked),
            Some("Ann".to_owned())
        );
        // In a table, only the columns the sentence names.
        let asked = Asked::of(
            "For each subject, find the best student. Subjects are the same whatever their case; write them in lower case. Write best.csv with the header subject,student,score.",
        );
        let best = "subject,student,score\nhistory,Maya,91\nmath,Leo,93\n";
        assert_eq!(capitalized(best, &asked), None);
        assert_eq!(
            capitalized(&best.replace("math", "Math"), &asked),
            Some("Math".to_owned())
        );
        let unnamed = Asked::of("Write best.csv with the header a,b in lower case.");
        assert_eq!(capitalized("a,b\nX,y\nz,w\n", &unnamed), None);
        // Upper case asked for another part of each line: which words
        // are to be lower case, the words alone do not tell.
        let asked = Asked::of(
            "Turn settings.toml into settings.env: the key in upper case (DATABASE_HOST), true and false in lower case.",
        );
        assert!(asked.lower_case && asked.upper_case);
        assert!(
            !Asked::of("Write each country's capital in lower case to capitals.txt.").upper_case
        );
        assert_eq!(
            capitalized(
                "SERVER_DEBUG=false
",
                &asked
            ),
            None
        );
        // Not asked: capitals pass.
        let asked = Asked::of("Write their names, one per line, to names.txt.");
        assert!(!asked.lower_case);
        assert!(content_problems("names.txt", "Ann\nBob\n", &[], &asked, "").is_empty());
    }

    #[test]
    fn a_line_unlike_the_others_of_a_one_per_line_result_is_named() {
        assert_eq!(
            odd_line("J-102\nJ-104\nNotes:\n"),
            Some(("Notes:".to_owned(), "J-102".to_owned()))
        );
        assert_eq!(
            odd_line("total\n12\n7\n31\n"),
            Some(("total".to_owned(), "12".to_owned()))
        );
        for text in [
            "J-102\nJ-104\n",
            "J-1\nJ-2\nJ-3\n",
            "Ann\nBob Lee\nCy\n",
            "a1\nb\nc-\n",
            "1\n2\nx\ny\n",
        ] {
            assert_eq!(odd_line(text), None, "{text}");
        }
        let asked = Asked::of("Write the IDs of the FAILED jobs, one per line, to failed.txt.");
        assert_eq!(
            content_problems("failed.txt", "J-102\nJ-104\nNotes:\n", &[], &asked, ""),
            [
                "the line `Notes:` of `failed.txt` is not like its other lines (`J-102`): check what your code matched"
            ]
        );
        // With the input it came from, that input's line.
        let report =
            "ID     Status\nJ-102  FAILED\nJ-104  FAILED\n\nNotes: J-103 was FAILED yesterday\n"
                .to_owned();
        let input = "report.txt".to_owned();
        assert_eq!(
            content_problems(
                "failed.txt",
                "J-102\nJ-104\nNotes:\n",
                &[(&input, &report)],
                &asked,
                ""
            ),
            [
                "the line `Notes:` of `failed.txt` is not like its other lines (`J-102`) (it comes from this line of `report.txt`: `Notes: J-103 was FAILED yesterday`): check what your code matched"
            ]
        );
    }

    #[test]
    fn rows_not_in_the_order_the_task_asks_are_named() {
        let asked =
            Asked::of("Write by_category.csv with the header category,total, largest total first.");
        assert_eq!(
            asked.order,
            Some((table::Order::Descending, "largest first"))
        );
        let ascending = "category,total\nFood,48.0\nOffice,1100.0\nTravel,1510.5\n";
        assert_eq!(
            content_problems("by_category.csv", ascending, &[], &asked, ""),
            [
                "the rows of `by_category.csv` are not in the order the task asks (\"largest first\"): its `total` column is in ascending order (pandas: `.sort_values('total', ascending=False)` before writing)"
            ]
        );
        let descending = "category,total\nTravel,1510.5\nOffice,1100.0\nFood,48.0\n";
        assert!(content_problems("by_category.csv", descending, &[], &asked, "").is_empty());
        // One number column in the order asked is enough; text columns and
        // short tables are not judged.
        let asked = Asked::of("Write t.csv, largest total first.");
        let two = "id,total\n3,10\n2,7\n1,5\n";
        assert!(content_problems("t.csv", two, &[], &asked, "").is_empty());
        assert!(content_problems("t.csv", "name,total\na,1\nb,2\n", &[], &asked, "").is_empty());
        assert_eq!(
            content_problems("t.csv", "id,total\n1,5\n2,7\n3,10\n", &[], &asked, "").len(),
            1
        );
        let up = Asked::of("List the cities, sorted from smallest to largest population.");
        assert_eq!(
            up.order,
            Some((table::Order::Ascending, "smallest to largest"))
        );
        let mixed = "city,population\nA,5\nB,2\nC,9\n";
        assert!(
            content_problems("cities.csv", mixed, &[], &up, "")[0]
                .contains("its `population` column is in no order (pandas: `.sort_values('population', ascending=True)`"),
        );
        assert_eq!(Asked::of("Sum the amounts per category.").order, None);
        assert_eq!(Asked::of("Sort ascending, then descending.").order, None);
    }

    #[test]
    fn rows_counted_where_the_task_counts_lines_are_named() {
        let data = (
            "data.csv".to_owned(),
            "name,age\nann,31\nbob,25\n".to_owned(),
        );
        let inputs = [(&data.0, &data.1)];
        let asked = Asked::of("Count the lines of data.csv and write the number to count.txt.");
        assert!(asked.counts_lines);
        let problems = content_problems("count.txt", "2", &inputs, &asked, "");
        assert_eq!(
            problems,
            [
                "`count.txt` holds 2, the rows under `data.csv`'s header, where the task counts its lines: it has 3 lines with the header (`len(open('data.csv').readlines())`)"
            ]
        );
        assert!(content_problems("count.txt", "3", &inputs, &asked, "").is_empty());
        let rows = Asked::of("Count the rows of data.csv and write the number to count.txt.");
        assert!(!rows.counts_lines);
        assert!(content_problems("count.txt", "2", &inputs, &rows, "").is_empty());
    }

    #[test]
    fn a_value_in_a_one_line_answer_is_read() {
        for (reply, value) in [
            (
                "The largest file in the folder is `big.bin`.",
                Some("big.bin"),
            ),
            ("The answer is 4.", Some("4")),
            ("Average: 35.25", Some("35.25")),
            (
                "The last message is \"Fix the parser\".",
                Some("Fix the parser"),
            ),
            ("The number of lines in `data.csv` is 6.", Some("6")),
            (
                "The last message is \"Fix: the parser\".",
                Some("Fix: the parser"),
            ),
            ("`big.bin`", Some("big.bin")),
            ("The lines of `data.csv` are many.", None),
            ("The task is done.", None),
            ("The biggest folder is logs.", None),
            ("`a` and `b` are bigger.", None),
            ("Done:\n`big.bin`", None),
        ] {
            assert_eq!(answer_value(reply).as_deref(), value, "{reply}");
        }
    }

    #[test]
    fn a_blank_result_is_named_with_the_line_that_writes_the_answer() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let md = HarnessKind::Markdown;
        let mut coach = Coach::new(
            true,
            "Write the name of the largest file in this folder to largest.txt.",
            cwd,
        );
        coach.heard("```bash\nls -lh | head -n 1 | awk '{print $9}' > largest.txt\n```");
        fs_err::write(cwd.join("largest.txt"), "\n").unwrap();
        coach.after_runs(&[python_report("")], cwd);
        let reply = "The largest file in the folder is `big.bin`.";
        coach.heard(reply);
        let note = coach.note_before_ending(reply, md, cwd, None).unwrap();
        assert!(
            note.contains("`largest.txt` is empty (if your answer `big.bin` is what it should hold, `open('largest.txt', 'w').write('big.bin\\n')` writes it)"),
            "{note}"
        );
        // Missing, and answered in prose: the same line with the first note.
        fs_err::write(cwd.join("data.csv"), "a\nb\n").unwrap();
        let mut coach = Coach::new(
            true,
            "Count the rows of data.csv and write the number to rows.txt.",
            cwd,
        );
        coach.heard("```python\nprint(len(open('data.csv').readlines()))\n```");
        coach.after_runs(&[python_report("42\n")], cwd);
        let mut named = Coach::new(
            true,
            "Count the rows of data.csv and write the number to rows.txt.",
            cwd,
        );
        named.heard("```python\nprint(1)\n```");
        named.after_runs(&[python_report("1\n")], cwd);
        let reply = "The rows are in `data.csv`.";
        let note = named.note_before_ending(reply, md, cwd, None).unwrap();
        assert!(
            !note.contains("if your answer"),
            "a file the task names: {note}"
        );
        coach.heard("The answer is 42.");
        let note = coach
            .note_before_ending("The answer is 42.", md, cwd, None)
            .unwrap();
        assert!(
            note.contains("the task asks you to write `rows.txt`, which does not exist yet (if your answer `42` is what it should hold, `open('rows.txt', 'w').write('42\\n')` writes it)."),
            "{note}"
        );
    }

    #[test]
    fn a_run_that_only_prints_a_typed_value_is_called_a_guess_once() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let run = |language: &str, code: &str| {
            Some(ProposedRun {
                call_id: None,
                language: Some(language.into()),
                code: code.into(),
            })
        };
        let task = "Which subfolder of this folder takes the most disk space? Write its name to biggest.txt.";
        let mut coach = Coach::new(true, task, cwd);
        coach.heard("```bash\necho 1.0 GB\n```");
        coach.saw_runs(&[run("bash", "echo 1.0 GB")]);
        let notes = coach.after_runs(&[python_report("1.0 GB\n")], cwd);
        assert!(
            notes
                .iter()
                .any(|n| n.contains("only prints `1.0 GB`, a value typed into it")),
            "{notes:?}"
        );
        assert!(coach.wants_code());
        coach.heard("```bash\necho data\n```");
        coach.saw_runs(&[run("bash", "echo data")]);
        let notes = coach.after_runs(&[python_report("data\n")], cwd);
        assert!(
            !notes.iter().any(|n| n.contains("typed into it")),
            "once a task"
        );
        // A value an earlier run printed, printed back, was found.
        let mut coach = Coach::new(true, task, cwd);
        coach.saw_runs(&[run("bash", "du -s */ | sort -n | tail -1")]);
        coach.after_runs(&[python_report("812\tlogs/\n")], cwd);
        coach.saw_runs(&[run("python", "print('logs')")]);
        let notes = coach.after_runs(&[python_report("logs\n")], cwd);
        assert!(
            !notes.iter().any(|n| n.contains("typed into it")),
            "{notes:?}"
        );
        // A value typed straight into the result file is a guess too,
        // unless an earlier run printed it.
        let mut coach = Coach::new(true, task, cwd);
        coach.saw_runs(&[run("bash", "echo logs > biggest.txt")]);
        let notes = coach.after_runs(&[python_report("")], cwd);
        assert!(
            notes
                .iter()
                .any(|n| n.contains("only writes `logs` to `biggest.txt`, a value typed into it")),
            "{notes:?}"
        );
        let mut coach = Coach::new(true, task, cwd);
        coach.saw_runs(&[run("bash", "du -s */ | sort -n | tail -1")]);
        coach.after_runs(&[python_report("812\tlogs/\n")], cwd);
        coach.saw_runs(&[run("bash", "echo logs > biggest.txt")]);
        let notes = coach.after_runs(&[python_report("")], cwd);
        assert!(
            !notes.iter().any(|n| n.contains("typed into it")),
            "{notes:?}"
        );
        // Other models are not told.
        let mut big = Coach::new(false, task, cwd);
        big.saw_runs(&[run("bash", "echo 1.0 GB")]);
        assert!(big.after_runs(&[python_report("1.0 GB\n")], cwd).is_empty());
    }

    #[test]
    fn a_result_file_still_holding_a_typed_value_is_named_before_ending() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(cwd.join("TODO.md"), "- [ ] a\n- [x] b\n").unwrap();
        let task = "How many items of TODO.md are open? Write the number to open.txt.";
        let mut coach = Coach::new(true, task, cwd);
        coach.saw_runs(&[python_run(
            "with open('open.txt', 'w') as f:\n    f.write('13')\n",
        )]);
        fs_err::write(cwd.join("open.txt"), "13").unwrap();
        let notes = coach.after_runs(&[python_report(crate::output::PRINTED_NOTHING)], cwd);
        assert!(
            notes
                .iter()
                .any(|n| n.contains("only writes `13` to `open.txt`")),
            "{notes:?}"
        );
        let note = coach
            .note_before_ending("The file holds 13.", HarnessKind::Markdown, cwd, None)
            .unwrap();
        assert!(
            note.contains("`open.txt` holds `13`, which your code typed in rather than found"),
            "{note}"
        );
        // Written again by code that found it: no longer a guess.
        let mut coach = Coach::new(true, task, cwd);
        coach.saw_runs(&[python_run(
            "with open('open.txt', 'w') as f:\n    f.write('13')\n",
        )]);
        coach.after_runs(&[python_report(crate::output::PRINTED_NOTHING)], cwd);
        coach.saw_runs(&[python_run(
            "n = sum(l.startswith('- [ ]') for l in open('TODO.md'))\nopen('open.txt', 'w').write(str(n))\n",
        )]);
        fs_err::write(cwd.join("open.txt"), "1").unwrap();
        coach.after_runs(&[python_report(crate::output::PRINTED_NOTHING)], cwd);
        assert_eq!(
            coach.note_before_ending("It is 1.", HarnessKind::Markdown, cwd, None),
            None
        );
    }

    #[test]
    fn values_the_answer_names_and_the_result_lacks_are_named_before_ending() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(
            cwd.join("report.txt"),
            "ID     Job    Status\nJ-101  build  PASSED\nJ-102  unit tests  FAILED\nJ-104  e2e  FAILED\nNotes: rerun J-102 after 2 days.\n",
        )
        .unwrap();
        let task = "Write the IDs of the jobs in report.txt whose status is FAILED, one per line, to failed.txt.";
        let ending = |reply: &str| {
            let mut coach = Coach::new(true, task, cwd);
            coach.saw_runs(&[Some(ProposedRun {
                call_id: None,
                language: Some("shell".to_owned()),
                code: "awk '$4 == \"FAILED\" {print $1}' report.txt > failed.txt".to_owned(),
            })]);
            fs_err::write(cwd.join("failed.txt"), "J-102\nNotes:\n").unwrap();
            coach.after_runs(&[python_report(crate::output::PRINTED_NOTHING)], cwd);
            let note = coach.note_before_ending(reply, HarnessKind::Markdown, cwd, None);
            fs_err::remove_file(cwd.join("failed.txt")).unwrap();
            note
        };
        let note = ending("The IDs of the FAILED jobs are J-102 and J-104.").unwrap();
        assert!(
            note.contains("your answer names `J-104`, which `failed.txt` does not hold (it holds `J-102`, `Notes:`): the code that wrote it missed it"),
            "{note}"
        );
        // Values it holds, values of another shape, values no input holds.
        for reply in [
            "The task is done: J-102.",
            "It took 2 days.",
            "Done, see J-999 too.",
        ] {
            assert_eq!(ending(reply), None, "{reply}");
        }
    }

    #[test]
    fn rewrites_are_saved_only_when_the_task_asks_for_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let may = |task: &str| Coach::new(true, task, dir.path()).may_rewrite();
        assert!(may("script.py is broken. Fix it."));
        assert!(may("Find out why report.sh fails and fix it."));
        assert!(may("Update convert.py so it also reads .tsv files."));
        assert!(!may("script.py fails, tell me why"));
        assert!(!may("Explain what is wrong with script.py."));
        assert!(!may("Why does script.py print nothing?"));
    }

    #[test]
    fn a_script_rewritten_without_the_line_that_ran_it_is_named() {
        let old = "import sys\n\ndef main(path):\n    print(path)\n\nmain(sys.argv[1])\n";
        let fixed = "import sys\n\ndef main(path):\n    print(path.upper())\n";
        assert_eq!(
            dropped_entry("wc.py", old, fixed),
            Some(("main".to_owned(), "main(sys.argv[1])".to_owned()))
        );
        // Still run, in any of the usual ways; or now top-level code; or
        // not Python.
        for still in [
            "def main(p):\n    pass\nmain(sys.argv[1])\n",
            "def main(p):\n    pass\nif __name__ == '__main__':\n    main(sys.argv[1])\n",
            "def main():\n    return 0\nsys.exit(main())\n",
            "import sys\nprint(open(sys.argv[1]).read())\n",
        ] {
            assert_eq!(dropped_entry("wc.py", old, still), None, "{still}");
        }
        assert_eq!(dropped_entry("wc.txt", old, fixed), None);
        let guarded = "def run():\n    pass\n\nif __name__ == \"__main__\":\n    run()\n";
        assert_eq!(
            dropped_entry("a.py", guarded, "def run():\n    return 1\n"),
            Some(("run".to_owned(), "if __name__ == \"__main__\":".to_owned()))
        );
        // In a task: named with the change, and before the task ends,
        // until a later change puts the line back.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wc.py");
        fs_err::write(&path, old).unwrap();
        let mut coach = Coach::new(true, "Fix wc.py so it prints in capitals.", dir.path());
        fs_err::write(&path, fixed).unwrap();
        let notes = coach.after_runs(&[], dir.path());
        assert!(
            notes.iter().any(|n| n.ends_with("It is not right yet: `wc.py` now defines `main` but never runs it (its line `main(sys.argv[1])` is gone), so running the script does nothing. Put that line back.]")),
            "{notes:?}"
        );
        assert!(coach.ending_problems(dir.path(), None, "").contains(
            &"`wc.py` no longer runs anything: its line `main(sys.argv[1])` is gone".to_owned()
        ));
        fs_err::write(&path, format!("{fixed}main(sys.argv[1])\n")).unwrap();
        coach.after_runs(&[], dir.path());
        assert!(coach.ending_problems(dir.path(), None, "").is_empty());
    }

    #[test]
    fn a_script_that_printed_its_value_alone_and_now_prints_words_around_it_is_named() {
        for (args, shape) in [
            ("total // count", PrintShape::Bare),
            ("f'{avg:.2f}'", PrintShape::Bare),
            ("\"{:.2f}\".format(avg)", PrintShape::Bare),
            ("round(avg, 2)", PrintShape::Bare),
            ("\"%.2f\" % avg", PrintShape::Bare),
            (
                "\"The average is: {:.2f}\".format(average)",
                PrintShape::Labelled,
            ),
            ("\"Average:\", avg", PrintShape::Labelled),
            ("f\"The mean is {m}\"", PrintShape::Labelled),
            ("\"No numbers in the file.\"", PrintShape::Message),
            ("f\"Usage: average.py FILE\"", PrintShape::Message),
        ] {
            assert_eq!(print_shape(args), shape, "{args}");
        }
        let old = "import sys\n\ndef main(path):\n    total = sum(int(l) for l in open(path))\n    print(total // 3)\n\nmain(sys.argv[1])\n";
        let labelled = "import sys\n\ndef main(path):\n    nums = [float(l) for l in open(path) if l.strip()]\n    if not nums:\n        print(\"No numbers in the file.\")\n        return\n    print(\"The average is: {:.2f}\".format(sum(nums) / len(nums)))\n\nmain(sys.argv[1])\n";
        assert_eq!(
            labelled_print("average.py", old, labelled),
            Some((
                "print(total // 3)".to_owned(),
                "print(\"The average is: {:.2f}\".format(sum(nums) / len(nums)))".to_owned()
            ))
        );
        // The last labelled print is the result's; one before it, a message.
        let warned = labelled.replace(
            "    if not nums:",
            "    for bad in skipped:\n        print(f\"Invalid number: {bad}\")\n    if not nums:",
        );
        assert_eq!(
            labelled_print("average.py", old, &warned).map(|(_, new)| new),
            Some("print(\"The average is: {:.2f}\".format(sum(nums) / len(nums)))".to_owned())
        );
        let alone = labelled.replace("\"The average is: {:.2f}\".format(", "round(");
        assert_eq!(labelled_print("average.py", old, &alone), None);
        // Labelled before already, or not Python.
        assert_eq!(labelled_print("average.py", labelled, labelled), None);
        assert_eq!(labelled_print("average.sh", old, labelled), None);
        // In a task: named with the change and before the task ends, until
        // a later version prints the value alone again.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("average.py");
        fs_err::write(&path, old).unwrap();
        let mut coach = Coach::new(
            true,
            "average.py crashes on numbers.txt. Fix average.py.",
            dir.path(),
        );
        fs_err::write(&path, labelled).unwrap();
        let notes = coach.after_runs(&[], dir.path());
        assert!(
            notes.iter().any(|n| n.contains("It is not right yet: `average.py` printed its result alone (`print(total // 3)`); the new version prints words around it")),
            "{notes:?}"
        );
        assert!(
            coach
                .ending_problems(dir.path(), None, "")
                .iter()
                .any(|p| p.starts_with("`average.py` now prints words around its result")),
        );
        fs_err::write(&path, &alone).unwrap();
        coach.after_runs(&[], dir.path());
        assert!(coach.ending_problems(dir.path(), None, "").is_empty());
        // An f-string or a label and a value: the script's own line, which
        // changes when the version is sent again.
        assert_eq!(
            bare_print("    print(f\"Average: {total / count:.2f}\")").as_deref(),
            Some("    print(f\"{total / count:.2f}\")")
        );
        assert_eq!(
            bare_print("print('Average:', avg)").as_deref(),
            Some("print(avg)")
        );
        assert_eq!(bare_print("print(\"a, b\", x, y)"), None);
        let worded = alone.replace(
            "print(round(sum(nums) / len(nums)))",
            "print(f\"Average: {sum(nums) / len(nums):.2f}\")",
        );
        fs_err::write(&path, &worded).unwrap();
        let notes = coach.after_runs(&[], dir.path());
        assert!(
            notes.iter().any(|n| n.contains("Print the value alone, as before (in your script, `print(f\"Average: {sum(nums) / len(nums):.2f}\")` becomes `print(f\"{sum(nums) / len(nums):.2f}\")`).]")),
            "{notes:?}"
        );
        let mut actions = vec![Action::Run(ProposedRun {
            call_id: None,
            language: Some("python".to_owned()),
            code: worded.clone(),
        })];
        assert!(coach.apply_line_fix(&mut actions).is_some());
        let Action::Run(changed) = &actions[0] else {
            panic!("{actions:?}")
        };
        assert!(
            changed
                .code
                .contains("\n    print(f\"{sum(nums) / len(nums):.2f}\")\n"),
            "{}",
            changed.code
        );
    }

    #[test]
    fn rows_where_the_task_asks_for_one_value_per_line_are_named() {
        let task = "Write the names of the 3 largest cities, one per line, to top3.txt.";
        assert!(Asked::of(task).one_per_line);
        assert!(!Asked::of("Write the 3 largest cities to top3.txt.").one_per_line);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("top3.txt");
        // Not also "a line unlike the others" for the space in one name.
        fs_err::write(
            &path,
            "Hill Valley,2301005\nRiverton,1204331\nOgdenville,310250\n",
        )
        .unwrap();
        let preview = file_preview("top3.txt", &path, 58, &[], &Asked::of(task), "").unwrap();
        assert!(
            preview.ends_with("It is not right yet: each line of `top3.txt` holds more than one value (`Hill Valley,2301005`) where the task asks for one per line. Fix the code and run it again.]"),
            "{preview}"
        );
        // One value a line (a comma inside a name, a word and a count
        // split by a space), or a task that does not ask: nothing.
        for fine in [
            "Hill Valley\nRiverton\n",
            "Paris, France\nRome, Italy\n",
            "the 5\nof 3\n",
        ] {
            assert_eq!(several_per_line(fine), None, "{fine}");
        }
        let preview = file_preview("top3.txt", &path, 40, &[], &Asked::default(), "").unwrap();
        assert!(
            preview.ends_with("Check that it holds exactly what the task asks for.]"),
            "{preview}"
        );
    }

    #[test]
    fn a_result_without_the_header_the_task_gives_is_named() {
        assert_eq!(
            asked_header("Write totals.csv with the header name,total: one row each."),
            Some("name,total".to_owned())
        );
        assert_eq!(
            asked_header("Save a table with columns `city,count` to out.csv"),
            Some("city,count".to_owned())
        );
        // Not near the word, or not names of columns.
        assert_eq!(asked_header("Read a,b and c,d into out.csv"), None);
        // Listed in words.
        assert_eq!(
            asked_header("Write wide.csv with one row per day and one column per metric, the columns day, clicks, signups, views in that order; a missing value is 0.").as_deref(),
            Some("day,clicks,signups,views")
        );
        assert_eq!(
            asked_header("Save out.csv with the columns `name`, `team` and `score`.").as_deref(),
            Some("name,team,score")
        );
        assert_eq!(
            asked_header("Keep the columns as they are, and sort them."),
            None
        );
        assert_eq!(asked_header("with two columns, name and count"), None);
        assert_eq!(asked_header("The header has 3,5 in it"), None);
        let task = "Write totals.csv with the header name,total";
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("totals.csv");
        fs_err::write(&path, "name,amount\nAna,4.5\n").unwrap();
        let preview = file_preview("totals.csv", &path, 20, &[], &Asked::of(task), "").unwrap();
        assert!(
            preview.ends_with("It is not right yet: `totals.csv` begins with `name,amount` where the task asks for the header `name,total`. Fix the code and run it again.]"),
            "{preview}"
        );
        // Spaces after the commas and quotes are the same header.
        fs_err::write(&path, "\"name\", total\nAna,4.5\n").unwrap();
        let preview = file_preview("totals.csv", &path, 20, &[], &Asked::of(task), "").unwrap();
        assert!(
            preview.ends_with("Check that it holds exactly what the task asks for.]"),
            "{preview}"
        );
        // Only a result to make has its header checked.
        assert_eq!(
            Coach::new(true, task, dir.path())
                .asked("totals.csv")
                .header,
            None,
            "totals.csv exists"
        );
        fs_err::remove_file(&path).unwrap();
        assert_eq!(
            Coach::new(true, task, dir.path())
                .asked("totals.csv")
                .header
                .as_deref(),
            Some("name,total")
        );
        // With several results, the sentence naming each says what it
        // asks of that one, unless it names another too.
        let two = "Write totals.csv with the header name,total and a log to run.txt";
        assert_eq!(
            Coach::new(true, two, dir.path()).asked("totals.csv").header,
            None
        );
        let steps = "First, save the passing students to passed.csv with the columns name,score. Then write their average to average.txt.";
        let coach = Coach::new(true, steps, dir.path());
        assert_eq!(
            coach.asked("passed.csv").header.as_deref(),
            Some("name,score")
        );
        assert_eq!(coach.asked("average.txt").header, None);
    }

    #[test]
    fn previews_show_the_start_of_a_file_the_task_names() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("emails.txt");
        fs_err::write(&path, "Ann <ann@x.org>\nBob <bob@x.org>\nCy\nDee\n").unwrap();
        assert_eq!(
            file_preview("emails.txt", &path, 36, &[], &Asked::default(), "").unwrap(),
            "[oi: `emails.txt` now has 4 lines:\nAnn <ann@x.org>\nBob <bob@x.org>\nCy\n…\nCheck that it holds exactly what the task asks for.]"
        );
        // A big file: its start shown, all of its lines counted.
        let big: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
        fs_err::write(&path, &big).unwrap();
        assert!(big.len() > 64 * 1024);
        let preview = file_preview(
            "emails.txt",
            &path,
            big.len() as u64,
            &[],
            &Asked::default(),
            "",
        )
        .unwrap();
        assert!(
            preview
                .starts_with("[oi: `emails.txt` now has 20000 lines:\nline 0\nline 1\nline 2\n…\n"),
            "{preview}"
        );
        fs_err::write(&path, "").unwrap();
        assert!(
            file_preview("emails.txt", &path, 0, &[], &Asked::default(), "")
                .unwrap()
                .contains("is empty")
        );
        // A count of zero is questioned; another number is not.
        fs_err::write(&path, "0\n").unwrap();
        assert!(
            file_preview("errors.txt", &path, 2, &[], &Asked::default(), "")
                .unwrap()
                .contains("It holds 0: unless that is the real answer"),
        );
        // Breaks written as `\n`, rows that repeat the header.
        fs_err::write(&path, "J-102\\nJ-104\n").unwrap();
        assert!(
            file_preview("failed.txt", &path, 13, &[], &Asked::default(), "")
                .unwrap()
                .contains("It holds `\\n` as two characters"),
        );
        assert!(
            file_preview("fix.py", &path, 13, &[], &Asked::default(), "")
                .unwrap()
                .contains("Check that it holds exactly"),
        );
        fs_err::write(&path, "sku,qty\nsku,qty\nsku,qty\n").unwrap();
        assert!(
            file_preview("in_stock.csv", &path, 24, &[], &Asked::default(), "")
                .unwrap()
                .contains("repeat the header line"),
        );
        fs_err::write(&path, "0.5\n").unwrap();
        assert!(
            file_preview("errors.txt", &path, 4, &[], &Asked::default(), "")
                .unwrap()
                .contains("Check that it holds exactly"),
        );
        // A result table: its profile, with each column's order.
        fs_err::write(&path, "name,total\nb,3\na,2\nc,1\n").unwrap();
        let preview = file_preview("totals.csv", &path, 24, &[], &Asked::default(), "").unwrap();
        assert!(
            preview.contains("As a table: 3 rows under a header row, fields separated by `,`. Columns:\n- `name`: text, like `b`, `a`, `c` (in no order)\n- `total`: whole numbers (in descending order)\nCheck that"),
            "{preview}"
        );
        // What is wrong with a result table is named as it is shown.
        let (input, seen) = (
            "events.csv".to_owned(),
            "event,date\nA,2026-01-15\nB,03/02/2026\n".to_owned(),
        );
        fs_err::write(&path, "event,date\nA,2026-01-15\nB,\n").unwrap();
        let preview = file_preview(
            "events_iso.csv",
            &path,
            24,
            &[(&input, &seen)],
            &Asked::default(),
            "",
        )
        .unwrap();
        assert!(
            preview.ends_with("It is not right yet: the `date` column of `events_iso.csv` misses 1 of its 2 values where `events.csv` misses 0: the code dropped values it could not read (as `errors='coerce'` does), so convert each of them instead. Fix the code and run it again.]"),
            "{preview}"
        );
        fs_err::write(&path, "category,total\nFood,$35.20$12.80\nOffice,$89.99\n").unwrap();
        let preview =
            file_preview("by_category.csv", &path, 24, &[], &Asked::default(), "").unwrap();
        assert!(
            preview.contains("It is not right yet: the `total` column of `by_category.csv` holds text where a number belongs (`$35.20$12.80`): text values were added up, which joins them, so convert the input column to numbers before adding."),
            "{preview}"
        );
        fs_err::write(&path, b"\x89PNG\0\0").unwrap();
        assert_eq!(
            file_preview("chart.png", &path, 6, &[], &Asked::default(), "").unwrap(),
            "[oi: `chart.png` now exists (6 bytes). Check that it is what the task asks for.]"
        );
    }

    #[test]
    fn the_files_a_task_names_are_found() {
        assert_eq!(
            named_files("Count the lines of data.csv and write the number to count.txt."),
            ["data.csv", "count.txt"]
        );
        assert_eq!(
            named_files(
                "write the squares to out/squares.txt, then `out/sum.txt` (see /etc/hosts, v1.2 and e.g. this)"
            ),
            ["out/squares.txt", "out/sum.txt"]
        );
        assert!(named_files("no files here, version 3.11.7").is_empty());
        // Settings files and scripts in other languages are files too.
        assert_eq!(
            named_files("Merge defaults.env and local.env into merged.env, like app.properties."),
            ["defaults.env", "local.env", "merged.env", "app.properties"]
        );
    }

    #[test]
    fn each_note_is_sent_once_and_only_to_small_models() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let task = "Write the squares of 1..5 to squares.txt";
        let mut big = Coach::new(false, task, cwd);
        assert_eq!(
            big.note_before_ending("You can run this.", HarnessKind::Native, cwd, None),
            None
        );

        let mut coach = Coach::new(true, task, cwd);
        let first = coach.note_before_ending(
            "You can run the following code.",
            HarnessKind::Markdown,
            cwd,
            None,
        );
        assert!(first.unwrap().contains("fenced code block"));
        let second = coach
            .note_before_ending("Done!", HarnessKind::Markdown, cwd, None)
            .unwrap();
        assert!(
            second.contains("`squares.txt`, which does not exist yet"),
            "{second}"
        );
        let third = coach
            .note_before_ending("Done!", HarnessKind::Markdown, cwd, None)
            .unwrap();
        assert!(third.contains("you have not run any code"), "{third}");
        assert_eq!(
            coach.note_before_ending("Done!", HarnessKind::Markdown, cwd, None),
            None
        );
    }

    #[test]
    fn a_files_text_run_as_code_is_pointed_out_once() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(
            cwd.join("settings.ini"),
            "; app\n[server]\nport = 8000\n\n[database]\nhost = db\nport = 5432\n",
        )
        .unwrap();
        fs_err::write(cwd.join("fix.py"), "x = 1\nprint(y)\n").unwrap();
        let task = "In settings.ini, set the database port to 5433. fix.py stays.";
        let run = |code: &str| {
            Some(ProposedRun {
                call_id: None,
                language: Some("python".into()),
                code: code.into(),
            })
        };
        let report = python_report;
        let name_error = report("NameError: name 'database' is not defined");
        let mut coach = Coach::new(true, task, cwd);
        // Code that failed, or the file's text that ran fine: nothing.
        assert_eq!(
            coach.content_note(
                &[run("print(port)")],
                &[report("NameError: name 'port' is not defined")],
                cwd
            ),
            None
        );
        assert_eq!(
            coach.content_note(&[run("[database]\nport = 5433")], &[report("")], cwd),
            None
        );
        // A script's own lines are code.
        assert_eq!(
            coach.content_note(
                &[run("x = 1\nprint(y)")],
                std::slice::from_ref(&name_error),
                cwd
            ),
            None
        );
        let note = coach.content_note(
            &[run("# settings.ini\n[database]\nport = 5433\n")],
            std::slice::from_ref(&name_error),
            cwd,
        );
        assert_eq!(
            note.as_deref(),
            Some(
                "[oi: that block is not python: it is text of `settings.ini`, and running it does not change the file. To change `settings.ini`, write python that reads it, changes what the task asks, and writes it back.]"
            )
        );
        // Once a task; never for other models.
        let again = coach.content_note(
            &[run("[database]\nport = 5433")],
            std::slice::from_ref(&name_error),
            cwd,
        );
        assert_eq!(again, None);
        let mut big = Coach::new(false, task, cwd);
        assert_eq!(
            big.content_note(&[run("[database]\nport = 5433")], &[name_error], cwd),
            None
        );
    }

    #[test]
    fn a_results_lines_typed_as_code_are_pointed_out_once() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(
            cwd.join("guide.md"),
            "# Guide\n\n## Install\n\n### On Linux\n\n## Usage\n",
        )
        .unwrap();
        let task = "Write toc.md, a table of contents for guide.md: one line per level-2 and level-3 heading, as \"- Title\" and \"  - Title\".";
        let run = |language: &str, code: &str| {
            Some(ProposedRun {
                call_id: None,
                language: Some(language.into()),
                code: code.into(),
            })
        };
        let typed = "# Guide\n- Install\n  - On Linux\n- Usage";
        let not_found = Report {
            language: "shell".into(),
            text: "line 2: -: command not found\n[exit code 127]".into(),
            ..python_report("")
        };
        let mut coach = Coach::new(true, task, cwd);
        // Code that failed is not text.
        assert_eq!(
            coach.content_note(
                &[run("python", "print(heads)")],
                &[python_report("NameError: name 'heads' is not defined")],
                cwd
            ),
            None
        );
        assert_eq!(
            coach
                .content_note(
                    &[run("shell", typed)],
                    std::slice::from_ref(&not_found),
                    cwd
                )
                .as_deref(),
            Some(
                "[oi: that block is not shell: it is lines typed as the text of `toc.md`, so they ran as commands and `toc.md` was not written. Write Python that reads `guide.md` and builds those lines from what it reads, then writes them to `toc.md` (`open('toc.md', 'w').write('\\n'.join(lines) + '\\n')`).]"
            )
        );
        // Once a task.
        assert_eq!(
            coach.content_note(
                &[run("shell", typed)],
                std::slice::from_ref(&not_found),
                cwd
            ),
            None
        );
        // Python's error for the same lines; with no input to read.
        let mut fresh = Coach::new(true, "Write fruits.md, a list of three fruits.", cwd);
        let note = fresh
            .content_note(
                &[run("python", "- apple\n  - pear\n- plum")],
                &[python_report("IndentationError: unexpected indent")],
                cwd,
            )
            .unwrap();
        assert!(
            note.contains("Write Python that makes those lines, then writes them to `fruits.md`"),
            "{note}"
        );
        assert!(typed_lines("| a | b |\n|---|---|\n| 1 | 2 |"));
        assert!(typed_lines("1. one\n2) two"));
        assert!(!typed_lines("- x\nprint(1)\nprint(2)\nprint(3)"));
        assert!(!typed_lines("x = 1.5 + 2\ny = -x"));
    }

    #[test]
    fn a_change_to_an_input_file_is_shown_as_a_diff() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let ini = "; app\n[server]\nport = 8000\n\n[database]\n# the main one\nport = 5432\nname = shop\n";
        fs_err::write(cwd.join("settings.ini"), ini).unwrap();
        let task = "In settings.ini, set the database port to 5433.";
        let mut coach = Coach::new(true, task, cwd);
        let ran = [python_report("")];
        assert_eq!(coach.after_runs(&ran, cwd), Vec::<String>::new());
        fs_err::write(
            cwd.join("settings.ini"),
            ini.replace("# the main one", "port = 5433"),
        )
        .unwrap();
        assert_eq!(
            coach.after_runs(&ran, cwd),
            [
                "[oi: your code changed `settings.ini` (- removed, + added):\n```diff\n@@ -5,3 +5,3 @@\n [database]\n-# the main one\n+port = 5433\n port = 5432\n```\nCheck that it changed only what the task asks, and nothing else.]"
            ]
        );
        // Shown once per change.
        assert_eq!(coach.after_runs(&ran, cwd), Vec::<String>::new());
        // Other models hear nothing.
        let mut big = Coach::new(false, task, cwd);
        fs_err::write(cwd.join("settings.ini"), ini).unwrap();
        assert_eq!(big.after_runs(&ran, cwd), Vec::<String>::new());
    }

    #[test]
    fn a_column_name_with_spaces_in_the_header_gets_the_strip() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(
            cwd.join("scores.csv"),
            " Player , Team ,Score \nana, Red ,12\nBen,blue,7\n",
        )
        .unwrap();
        let note = columns_note(
            "    df['Score'] = df['Score'].astype(float)\nKeyError: 'Score'\n",
            &["scores.csv".to_owned()],
            cwd,
        );
        assert_eq!(
            note.as_deref(),
            Some(
                "[oi: the header of `scores.csv` has spaces around its names (`'Score '`, not `'Score'`): right after reading it, strip them with `df.columns = df.columns.str.strip()` (csv module: `row = {k.strip(): v for k, v in row.items()}`), then `df['Score']` works.]"
            )
        );
    }

    #[test]
    fn a_first_row_of_data_dropped_as_a_header_is_kept_and_the_block_run_again() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(
            cwd.join("sales.csv"),
            "region,rep,amount\nNorth,Ann,1200\nSouth,Bob,800\nEast,Cid,150\n",
        )
        .unwrap();
        let task = "Write the total amount per region of sales.csv to totals.csv.";
        let code = "import pandas as pd\ndf = pd.read_csv('sales.csv')\n# Filter out the first row (header)\ndf = df.iloc[1:]\ndf.groupby('region')['amount'].sum().to_csv('totals.csv')\n";
        let ran = |small: bool, code: &str| after_success(small, task, code, cwd);
        let (mut coach, again) = ran(true, code);
        let (again, lead) = again.expect("run again without the line");
        assert_eq!(
            again.code,
            "import pandas as pd\ndf = pd.read_csv('sales.csv')\n# Filter out the first row (header)\n# (no row to drop: pd.read_csv took the header line as the column names)\ndf.groupby('region')['amount'].sum().to_csv('totals.csv')\n"
        );
        assert_eq!(
            lead,
            "[oi: `df = df.iloc[1:]` drops the first row of data of `sales.csv` (`North,Ann,1200`): `pd.read_csv` already took its header line as the column names. So oi ran your code again without that line:]"
        );
        // Once a task.
        assert!(succeeds(&mut coach, code, cwd).is_none());
        // Not for a large model; not where the read says where the header
        // is, nor where the dropped row is not data like the rest.
        assert!(ran(false, code).1.is_none());
        let told = code.replace(
            "read_csv('sales.csv')",
            "read_csv('sales.csv', header=None)",
        );
        assert!(ran(true, &told).1.is_none());
        let other = code.replace("df = df.iloc[1:]", "top = df.iloc[1:]");
        assert!(ran(true, &other).1.is_none());
        fs_err::write(
            cwd.join("sales.csv"),
            "region,rep,amount\n,,EUR\nSouth,Bob,800\nEast,Cid,150\n",
        )
        .unwrap();
        assert!(ran(true, code).1.is_none());
    }

    #[test]
    fn a_result_with_a_line_twice_where_each_once_is_asked_is_made_again_once() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(cwd.join("clients.txt"), "10.0.0.10\n10.0.0.9\n10.0.0.10\n").unwrap();
        let task = "clients.txt lists client IP addresses, some repeated. Write ips.txt with each address once, in numeric order.";
        let code = "clients = [c.strip() for c in open('clients.txt') if c.strip()]\nclients.sort(key=lambda x: tuple(map(int, x.split('.'))))\nwith open('ips.txt', 'w') as f:\n    f.write('\\n'.join(clients))\n";
        // Each coach is made before the run writes the result.
        let ran = |small: bool, task: &str| {
            let _ = fs_err::remove_file(cwd.join("ips.txt"));
            let mut coach = Coach::new(small, task, cwd);
            fs_err::write(cwd.join("ips.txt"), "10.0.0.9\n10.0.0.10\n10.0.0.10").unwrap();
            let again = succeeds(&mut coach, code, cwd);
            (coach, again)
        };
        let (mut coach, again) = ran(true, task);
        let (again, lead) = again.expect("run again with each value once");
        assert_eq!(
            again.code,
            "clients = [c.strip() for c in open('clients.txt') if c.strip()]\nclients.sort(key=lambda x: tuple(map(int, x.split('.'))))\nwith open('ips.txt', 'w') as f:\n    f.write('\\n'.join(dict.fromkeys(clients)))\n"
        );
        assert_eq!(
            lead,
            "[oi: `ips.txt` had `10.0.0.10` twice where the task asks for each once, so oi ran your code again with `f.write('\\n'.join(clients))` written as `f.write('\\n'.join(dict.fromkeys(clients)))`, which keeps the first of each value, in order:]"
        );
        // Once a task: after that, the note gives the change.
        fs_err::write(cwd.join("ips.txt"), "10.0.0.9\n10.0.0.10\n10.0.0.10\n").unwrap();
        assert!(succeeds(&mut coach, code, cwd).is_none());
        let note = coach
            .note_before_ending("Done.", HarnessKind::Markdown, cwd, None)
            .unwrap();
        assert!(
            note.contains("where the task asks for each once: keep one of each (in your code, `f.write('\\n'.join(clients))` becomes `f.write('\\n'.join(dict.fromkeys(clients)))`)"),
            "{note}"
        );
        // Not for a large model, nor where the task does not ask each once.
        assert!(ran(false, task).1.is_none());
        let sorted = "Write ips.txt with the addresses of clients.txt sorted.";
        assert!(ran(true, sorted).1.is_none());
        // The repeats differ in spaces around them: stripped first.
        assert_eq!(
            once_fix("out = '\\n'.join(sorted(ips))", true),
            Some((
                "out = '\\n'.join(sorted(ips))".to_owned(),
                "out = '\\n'.join(dict.fromkeys(v.strip() for v in (sorted(ips))))".to_owned()
            ))
        );
        assert_eq!(
            once_fix("f.writelines(lines)", false),
            Some((
                "f.writelines(lines)".to_owned(),
                "f.writelines(dict.fromkeys(lines))".to_owned()
            ))
        );
        // A `writelines` list keeps its breaks: not stripped.
        assert_eq!(once_fix("f.writelines(lines)", true), None);
        // Made unique already, two such lines, or none: nothing to change.
        assert_eq!(
            once_fix("f.write('\\n'.join(sorted(set(ips))))", false),
            None
        );
        assert_eq!(
            once_fix("a = '\\n'.join(x)\nb = '\\n'.join(y)", false),
            None
        );
        assert_eq!(once_fix("f.write(text)", false), None);
        // A loop that writes a line for each value of a list.
        let rows = "rows = []\nfor page in pages:\n    rows += json.load(open(page))['data']\nrows.sort(key=lambda r: r[0])\nwith open('users.csv', 'w', newline='') as f:\n    writer = csv.writer(f)\n    writer.writerow(['id', 'name'])\n    for row in rows:\n        writer.writerow(row)\n";
        assert_eq!(
            once_fix(rows, false),
            Some((
                "for row in rows:".to_owned(),
                "for row in {repr(v): v for v in rows}.values():".to_owned()
            ))
        );
        // Its values named apart, written with f.write or print.
        assert_eq!(
            once_fix(
                "for name, n in sorted(counts):\n    f.write(f'{name},{n}\\n')",
                false
            ),
            Some((
                "for name, n in sorted(counts):".to_owned(),
                "for name, n in {repr(v): v for v in sorted(counts)}.values():".to_owned()
            ))
        );
        assert!(once_fix("for ip in ips:\n    print(ip, file=out)", false).is_some());
        // Not when spaces differ, the loop only prints, its values are
        // unique or numbered, or it runs inside another loop.
        assert_eq!(once_fix(rows, true), None);
        assert_eq!(once_fix("for ip in ips:\n    print(ip)", false), None);
        for source in [
            "counts.items()",
            "enumerate(rows)",
            "set(ips)",
            "df.iterrows()",
        ] {
            let code = format!("for a, b in {source}:\n    f.write(f'{{a}} {{b}}\\n')");
            assert_eq!(once_fix(&code, false), None, "{source}");
        }
        assert_eq!(
            once_fix(
                "for page in pages:\n    rows = load(page)\n    for row in rows:\n        w.writerow(row)",
                false
            ),
            None
        );
        // A body that writes something else.
        assert_eq!(once_fix("for row in rows:\n    f.write('x')", false), None);
        // A join and a loop: which one made the repeat is not known.
        assert_eq!(
            once_fix(
                "out.write('\\n'.join(a))\nfor row in rows:\n    w.writerow(row)",
                false
            ),
            None
        );
        // A string holding a bracket inside the list's expression.
        assert_eq!(
            once_fix("f.write(\"\\n\".join(l for l in xs if l != ')'))", false)
                .map(|(_, fixed)| fixed),
            Some("f.write(\"\\n\".join(dict.fromkeys(l for l in xs if l != ')')))".to_owned())
        );
    }

    #[test]
    fn rows_taken_by_position_for_the_earliest_and_latest_are_sorted_by_date_first() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(
            cwd.join("prices.csv"),
            "date,price\n2024-02-15,1150\n2024-01-03,1000\n2024-03-30,1234.5\n",
        )
        .unwrap();
        let task = "Write the percent change from the price on the earliest date to the price on the latest date in prices.csv to change.txt.";
        let code = "import pandas as pd\ndf = pd.read_csv('prices.csv')\nchange = (df['price'].iloc[-1] / df['price'].iloc[0] - 1) * 100\nopen('change.txt', 'w').write(str(round(change, 2)))\n";
        let ran = |small: bool, task: &str, code: &str| after_success(small, task, code, cwd);
        let (mut coach, again) = ran(true, task, code);
        let (again, lead) = again.expect("run again sorted by date");
        assert_eq!(
            again.code,
            "import pandas as pd\ndf = pd.read_csv('prices.csv')\ndf = df.sort_values('date').reset_index(drop=True)\nchange = (df['price'].iloc[-1] / df['price'].iloc[0] - 1) * 100\nopen('change.txt', 'w').write(str(round(change, 2)))\n"
        );
        assert!(
            lead.contains("the rows of `prices.csv` are not in order of `date`"),
            "{lead}"
        );
        // Once a task.
        assert!(succeeds(&mut coach, code, cwd).is_none());
        // Not for a large model, nor a task that asks for the first and
        // last rows, nor code that sorts or takes a minimum itself.
        assert!(ran(false, task, code).1.is_none());
        let by_place =
            "Write the change from the first to the last price in prices.csv to change.txt.";
        assert!(ran(true, by_place, code).1.is_none());
        let sorts = code.replace(
            "df = pd.read_csv('prices.csv')",
            "df = pd.read_csv('prices.csv').sort_values('date')",
        );
        assert!(ran(true, task, &sorts).1.is_none());
        // In date order already: nothing to change.
        fs_err::write(
            cwd.join("prices.csv"),
            "date,price\n2024-01-03,1000\n2024-02-15,1150\n",
        )
        .unwrap();
        assert!(ran(true, task, code).1.is_none());
    }

    #[test]
    fn a_test_of_the_result_against_typed_values_is_named_a_guess_once() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(cwd.join("clients.txt"), "10.0.0.10\n9.9.9.9\n").unwrap();
        let task = "Write ips_sorted.txt with the addresses of clients.txt in numeric order.";
        let test = "expected = ['9.9.9.9', '10.0.0.11']\nlines = [l.strip() for l in open('ips_sorted.txt')]\nassert lines == expected, f'got {lines}'\n";
        let failed = python_report(
            "Traceback (most recent call last):\n  File \"<cell-3>\", line 3, in <module>\n    assert lines == expected, f'got {lines}'\nAssertionError: got ['9.9.9.9', '10.0.0.10']\n",
        );
        let (mut coach, notes) = after_failure(true, task, &python_run(test), &failed, cwd);
        let told = "[oi: that block only tests `ips_sorted.txt` against values you typed into it (`expected`)";
        assert!(notes.iter().any(|n| n.starts_with(told)), "{notes:?}");
        // Once a task.
        coach.saw_runs(&[python_run(test)]);
        coach.saw_failure(true);
        let again = coach.after_runs(std::slice::from_ref(&failed), cwd);
        assert!(!again.iter().any(|n| n.starts_with(told)), "{again:?}");
        // A test of computed values, or a block that writes the result, is
        // not one; nor another error.
        let computed = test.replace(
            "expected = ['9.9.9.9', '10.0.0.11']",
            "expected = sorted(open('clients.txt').read().split())",
        );
        assert_eq!(
            typed_self_test(&computed, &failed.text, &["ips_sorted.txt".to_owned()]),
            None
        );
        let writes = format!("open('ips_sorted.txt', 'w').write('9.9.9.9')\n{test}");
        assert_eq!(
            typed_self_test(&writes, &failed.text, &["ips_sorted.txt".to_owned()]),
            None
        );
        let other = failed.text.replace("AssertionError", "ValueError");
        assert_eq!(
            typed_self_test(test, &other, &["ips_sorted.txt".to_owned()]),
            None
        );
        assert_eq!(
            typed_self_test(test, &failed.text, &["ips_sorted.txt".to_owned()]),
            Some(("ips_sorted.txt".to_owned(), "expected".to_owned()))
        );
    }

    #[test]
    fn ages_counted_as_days_over_a_years_length_are_named() {
        assert_eq!(
            years_as_days("df['age'] = (ref - df['born']).dt.days // 365\n").as_deref(),
            Some("// 365")
        );
        assert_eq!(
            years_as_days("age = days / 365.25").as_deref(),
            Some("/ 365.25")
        );
        assert_eq!(years_as_days("x = n / 3650"), None);
        assert_eq!(years_as_days("age = ref.year - born.year"), None);
        let asked =
            Asked::of("Write ages.csv with each member's age in whole years on 30 June 2024.");
        let code = "import pandas as pd\ndf = pd.read_csv('m.csv')\ndf['age'] = (pd.Timestamp('2024-06-30') - pd.to_datetime(df['born'])).dt.days // 365\ndf.to_csv('ages.csv', index=False)\n";
        let problems = content_problems("ages.csv", "name,age\nAna,34\n", &[], &asked, code);
        assert!(
            problems
                .iter()
                .any(|p| p
                    .starts_with("the code that wrote `ages.csv` counts years as days (`// 365`)")),
            "{problems:?}"
        );
        let other = Asked::of("Write the number of days between the dates to days.csv.");
        assert!(
            content_problems("days.csv", "name,days\nAna,34\n", &[], &other, code)
                .iter()
                .all(|p| !p.contains("counts years as days"))
        );
    }

    #[test]
    fn a_header_with_spaces_around_its_names_is_stripped_after_the_read_and_run_again() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(
            cwd.join("scores.csv"),
            " Player , Team ,Score \nana, Red ,12\nBen,blue,7\n",
        )
        .unwrap();
        let task = "Write the total of the Score column of scores.csv to total.txt.";
        let code = "import pandas as pd\ndf = pd.read_csv('scores.csv')\nopen('total.txt', 'w').write(str(df['Score'].sum()))\n";
        let run = python_run(code);
        let failed = python_report(
            "Traceback (most recent call last):\n  File \"<cell-1>\", line 3, in <module>\n    open('total.txt', 'w').write(str(df['Score'].sum()))\n  [4 frames inside libraries]\nKeyError: 'Score'\n[exit code 1]",
        );
        let (mut coach, notes) = after_failure(true, task, &run, &failed, cwd);
        // Run again in place of the note that says to strip them.
        assert!(
            notes.iter().all(|n| !n.contains("spaces around")),
            "{notes:?}"
        );
        let (again, lead) = coach
            .rerun(std::slice::from_ref(&run), std::slice::from_ref(&failed))
            .expect("the block runs again with the names stripped");
        assert_eq!(
            again.code,
            "import pandas as pd\ndf = pd.read_csv('scores.csv')\ndf.columns = df.columns.str.strip()\nopen('total.txt', 'w').write(str(df['Score'].sum()))\n"
        );
        assert_eq!(
            lead,
            "[oi: that error has a known fix, so oi ran your code again with `df = pd.read_csv('scores.csv')` written as:\n```python\ndf = pd.read_csv('scores.csv')\ndf.columns = df.columns.str.strip()\n```\nIts result:]"
        );
        // The csv module's reader, indented in a `with`.
        let reader = "import csv\nwith open('scores.csv') as f:\n    rows = csv.DictReader(f)\n    total = sum(int(r['Score']) for r in rows)\n";
        let run = python_run(reader);
        let (mut coach, _) = after_failure(true, task, &run, &failed, cwd);
        let (again, _) = coach
            .rerun(std::slice::from_ref(&run), std::slice::from_ref(&failed))
            .expect("again with the reader's names stripped");
        assert_eq!(
            again.code,
            "import csv\nwith open('scores.csv') as f:\n    rows = csv.DictReader(f)\n    rows.fieldnames = [n.strip() for n in rows.fieldnames]\n    total = sum(int(r['Score']) for r in rows)\n"
        );
        // Not when the code reads the table twice, reads another file, or
        // the key is no spaced name; the note is told instead.
        for code in [
            "a = pd.read_csv('scores.csv')\nb = pd.read_csv('scores.csv')\nprint(a['Score'])\n",
            "df = pd.read_csv('other.csv')\nprint(df['Score'])\n",
            "df = pd.read_csv('scores.csv')\ndf.columns = ['P', 'T', 'S']\nprint(df['Score'])\n",
        ] {
            let run = python_run(code);
            let (mut coach, notes) = after_failure(true, task, &run, &failed, cwd);
            assert!(
                notes.iter().any(|n| n.contains("spaces around")),
                "{notes:?}"
            );
            assert_eq!(coach.rerun(&[run], std::slice::from_ref(&failed)), None);
        }
        let player = python_report("KeyError: 'Name'\n[exit code 1]");
        let (mut coach, _) = after_failure(true, task, &python_run(code), &player, cwd);
        assert_eq!(coach.rerun(&[python_run(code)], &[player]), None);
        // Not for other models.
        let (mut big, _) = after_failure(false, task, &python_run(code), &failed, cwd);
        assert_eq!(big.rerun(&[python_run(code)], &[failed]), None);
    }

    #[test]
    fn a_column_name_guessed_wrong_gets_the_real_ones_once() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(
            cwd.join("customers.csv"),
            "customer_id,name\nC1,Ana\nC2,Ben\n",
        )
        .unwrap();
        fs_err::write(
            cwd.join("payments.csv"),
            "id,customer,amount\n1,c1,2\n2,C2,3\n",
        )
        .unwrap();
        let task = "Join customers.csv and payments.csv into totals.csv";
        let mut coach = Coach::new(true, task, cwd);
        let failed = python_report;
        // A key that some table lacks: each table's columns (the run
        // failed, so the result not written yet is no news).
        coach.saw_failure(true);
        let notes = coach.after_runs(&[failed("Traceback …\nKeyError: 'customer'\n")], cwd);
        assert_eq!(
            notes,
            [
                "[oi: `customer` is not a column of every input: `customers.csv` has `customer_id`, `name`; `payments.csv` has `id`, `customer`, `amount`. Use these names exactly (spaces and case included).]"
            ]
        );
        // Once a task.
        coach.saw_failure(true);
        let again = coach.after_runs(&[failed("KeyError: 'Name'")], cwd);
        assert_eq!(again, Vec::<String>::new());
        // A merge oi runs again with each table's key: the columns are
        // not told, as the fix deals with them.
        let mut merging = Coach::new(true, task, cwd);
        let merge = Some(ProposedRun {
            call_id: None,
            language: Some("python".to_owned()),
            code: "import pandas as pd\ncustomers = pd.read_csv('customers.csv')\npayments = pd.read_csv('payments.csv')\nmerged = pd.merge(customers, payments, on='customer_id')\nmerged.to_csv('totals.csv')".to_owned(),
        });
        merging.saw_runs(std::slice::from_ref(&merge));
        merging.saw_failure(true);
        let merge_failed = failed(
            "Traceback (most recent call last):\n  File \"<cell-1>\", line 4, in <module>\n    merged = pd.merge(customers, payments, on='customer_id')\n  [4 frames inside libraries]\nKeyError: 'customer_id'\n",
        );
        let notes = merging.after_runs(std::slice::from_ref(&merge_failed), cwd);
        assert!(
            !notes
                .iter()
                .any(|n| n.contains("is not a column of every input")),
            "{notes:?}"
        );
        assert!(merging.rerun(&[merge], &[merge_failed]).is_some());
        // A key of every table, or of no table input at all, says nothing.
        fs_err::write(cwd.join("payments.csv"), "id,name\n1,x\n2,y\n").unwrap();
        let mut other = Coach::new(true, task, cwd);
        other.saw_failure(true);
        assert_eq!(
            other.after_runs(&[failed("KeyError: 'missing'")], Path::new("/nonexistent")),
            Vec::<String>::new()
        );
        // A key of an input, gone from the table the failing line used
        // after the code grouped.
        other.saw_runs(&[Some(ProposedRun {
            call_id: None,
            language: Some("python".to_owned()),
            code:
                "totals = df.groupby('id')['x'].sum().reset_index()\ntotals.sort_values(by='name')"
                    .to_owned(),
        })]);
        other.saw_failure(true);
        let lost = other.after_runs(
            &[failed(
                "  File \"<cell-2>\", line 9, in <module>\n    totals.sort_values(by='name')\n  [2 frames inside libraries]\nKeyError: 'name'\n",
            )],
            cwd,
        );
        assert_eq!(
            lost,
            [
                "[oi: `name` is a column of `customers.csv`, but the table `totals.sort_values(by='name')` uses has no `name` column any more: a `groupby(…)[…].sum()` keeps only the grouped and summed columns, so group by `name` too (`groupby([…, 'name'])`), or print the table's `.columns` before that line to see what it holds.]"
            ]
        );
        // The failing line is the model's, not a library's.
        let mut grouped = Coach::new(true, task, cwd);
        grouped.saw_runs(&[Some(ProposedRun {
            call_id: None,
            language: Some("python".to_owned()),
            code: "t = a.groupby('id').sum()\nt.sort_values(by='name')".to_owned(),
        })]);
        grouped.saw_failure(true);
        let notes = grouped.after_runs(
            &[failed(
                "Traceback (most recent call last):\n  File \"<cell-1>\", line 2, in <module>\n    t.sort_values(by='name')\n  File \"/u/lib/python3.11/site-packages/pandas/core/generic.py\", line 9, in get\n    raise KeyError(key)\nKeyError: 'name'\n",
            )],
            cwd,
        );
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains(
                "but the table `t.sort_values(by='name')` uses has no `name` column any more"
            ),
            "{notes:?}"
        );
        // Once a task; a merge has its own hint.
        other.saw_failure(true);
        assert_eq!(
            other.after_runs(
                &[failed("    t.sort_values(by='name')\nKeyError: 'name'")],
                cwd
            ),
            Vec::<String>::new()
        );
        // A selection of a column renamed earlier, without a groupby.
        let mut renamed = Coach::new(true, task, cwd);
        renamed.saw_runs(&[Some(ProposedRun {
            call_id: None,
            language: Some("python".to_owned()),
            code: "r = r.rename(columns={'name': 'who'})\nr[['name', 'id']].to_csv('t.csv')"
                .to_owned(),
        })]);
        renamed.saw_failure(true);
        let notes = renamed.after_runs(
            &[failed(
                "  File \"<cell-2>\", line 2, in <module>\n    r[['name', 'id']].to_csv('t.csv')\n  [3 frames inside libraries]\nKeyError: \"['name'] not in index\"\n",
            )],
            cwd,
        );
        assert_eq!(
            notes,
            [
                "[oi: `name` is a column of `customers.csv`, but the table `r[['name', 'id']].to_csv('t.csv')` selects from has no `name` column any more: your code renamed it or left it out before that line. Use the name the table has there (print its `.columns` before that line to see them).]"
            ]
        );
        assert_eq!(key_error("\"['a', 'b'] not in index\""), Some(("a", true)));
        assert_eq!(key_error("'customer'"), Some(("customer", false)));
        let mut merging = Coach::new(true, task, cwd);
        merging.saw_runs(&[Some(ProposedRun {
            call_id: None,
            language: Some("python".to_owned()),
            code: "t = a.groupby('id').sum()\npd.merge(a, b, on='name')".to_owned(),
        })]);
        merging.saw_failure(true);
        let notes = merging.after_runs(
            &[failed("    pd.merge(a, b, on='name')\nKeyError: 'name'")],
            cwd,
        );
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("`merge(…, on=…)` needs"), "{notes:?}");
        // Other models hear nothing.
        let mut big = Coach::new(false, task, cwd);
        big.saw_failure(true);
        assert_eq!(
            big.after_runs(&[failed("KeyError: 'customer'")], cwd),
            Vec::<String>::new()
        );
        // A column that is there, of a file read with the wrong separator.
        fs_err::write(
            cwd.join("export.csv"),
            "Order No;Region Name\n1;North\n2;South\n",
        )
        .unwrap();
        let mut coach = Coach::new(true, "Sum export.csv per region into top.txt", cwd);
        coach.saw_failure(true);
        assert_eq!(
            coach.after_runs(&[failed("KeyError: 'Region Name'")], cwd),
            [
                "[oi: `Region Name` is a column, but the file was not split by its separator: `export.csv` (fields separated by `;`: read it with sep=';' in pandas, or delimiter=';' with the csv module) has `Order No`, `Region Name`. Use these names exactly (spaces and case included).]"
            ]
        );
        // `row[1]` of the same file read with `csv.reader` as it is.
        let mut coach = Coach::new(true, "Sum export.csv per region into top.txt", cwd);
        coach.saw_failure(true);
        let notes = coach.after_runs(
            &[failed(
                "    region = row[1]\nIndexError: list index out of range",
            )],
            cwd,
        );
        assert!(
            notes[0].starts_with("[oi: a row has fewer fields than the code indexes, likely because the file was not split by its separator: `export.csv` (fields separated by `;`"),
            "{notes:?}"
        );
        // With commas, an index past the end is another mistake.
        fs_err::write(cwd.join("export.csv"), "a,b\n1,2\n3,4\n").unwrap();
        let mut coach = Coach::new(true, "Sum export.csv per region into top.txt", cwd);
        coach.saw_failure(true);
        assert!(
            coach
                .after_runs(&[failed("IndexError: list index out of range")], cwd)
                .is_empty()
        );
    }

    #[test]
    fn a_header_read_as_a_number_is_pointed_out_once() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(
            cwd.join("sales.csv"),
            "\u{feff}month;\"Amount\";region\nJan;1,5;n\n",
        )
        .unwrap();
        let mut coach = Coach::new(true, "Write the total of sales.csv to total.txt", cwd);
        coach.saw_failure(true);
        let failed = python_report;
        // Other failures, and values that are not in the header, say nothing
        // (of the header).
        for text in [
            "ValueError: could not convert string to float: 'north'",
            "NameError: name 'x' is not defined",
        ] {
            assert_eq!(coach.after_runs(&[failed(text)], cwd), Vec::<String>::new());
        }
        let notes = coach.after_runs(
            &[failed(
                "ValueError: could not convert string to float: 'Amount\\n'",
            )],
            cwd,
        );
        assert_eq!(
            notes,
            [
                "[oi: `Amount` is a column name in the first line of `sales.csv` (month;\"Amount\";region): that line is the header, not data. Skip it (for example read the file with csv.DictReader, or pandas).]"
            ]
        );
        let again = "ValueError: invalid literal for int() with base 10: 'month'";
        assert_eq!(
            coach.after_runs(&[failed(again)], cwd),
            Vec::<String>::new()
        );
        // Other models hear nothing.
        let mut big = Coach::new(false, "Write the total of sales.csv to total.txt", cwd);
        assert_eq!(big.after_runs(&[failed(again)], cwd), Vec::<String>::new());
    }

    #[test]
    fn a_value_written_with_a_label_is_pointed_out() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            ("mean.txt", "Mean: 25.5\n", Some("(`Mean: 25.5`)")),
            ("sum", "Sum of squares = 55", Some("(`55`, as")),
            (
                "sq.txt",
                "1^2 = 1\n2^2 = 4\n",
                Some(
                    "(`1^2 = 1`): if the task asks for the value, write each line's value alone (`1` for the first).",
                ),
            ),
            ("mean.txt", "25.5\n", None),
            ("time.txt", "12:30\n", None),
            // A time's colons are no label's.
            (
                "failed.txt",
                "J-104   integration      FAILED    00:30:02\n",
                None,
            ),
            ("cfg.ini", "port = 9090\n", None),
            ("notes.txt", "Mean: high\n", None),
            // A short unit after the number; not a sentence.
            (
                "avg.txt",
                "Average temperature: 21.0°C",
                Some("(`21.0`, as"),
            ),
            (
                "value.txt",
                "Total stock value: $77.00\n",
                Some("(`77.00`, as"),
            ),
            ("n.txt", "Total: 5 apples and pears\n", None),
            // A sentence around the value.
            (
                "avg_temp.txt",
                "The average temperature is 21.0°C.",
                Some("(`21.0`, as `open('avg_temp.txt', 'w').write('21.0\\n')` writes it)."),
            ),
            ("n.txt", "The count was 42.\n", Some("(`42`, as")),
            ("n.txt", "The answer is yes\n", None),
            ("n.txt", "Bob is 7 years old\n", None),
        ];
        for (name, text, expected) in cases {
            let path = dir.path().join(name);
            fs_err::write(&path, text).unwrap();
            let preview =
                file_preview(name, &path, text.len() as u64, &[], &Asked::default(), "").unwrap();
            match expected {
                Some(part) => assert!(
                    preview.contains("puts words before the value") && preview.contains(part),
                    "{preview}"
                ),
                None => assert!(preview.contains("Check that it holds exactly"), "{preview}"),
            }
        }
    }

    #[test]
    fn ending_with_text_in_a_number_column_is_questioned_once() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let task = "Sum expenses per category into by_category.csv";
        let mut coach = Coach::new(true, task, cwd);
        coach.after_runs(&[python_report("")], cwd);
        fs_err::write(
            cwd.join("by_category.csv"),
            "category,total\nTravel,\"$1,200.50$310.00\"\nFood,48\nOffice,1100\n",
        )
        .unwrap();
        let note = coach
            .note_before_ending("Done.", HarnessKind::Markdown, cwd, None)
            .unwrap();
        assert!(
            note.contains("the `total` column of `by_category.csv` holds text where a number belongs (`$1,200.50$310.00`)"),
            "{note}"
        );
        assert_eq!(
            coach.note_before_ending("Done.", HarnessKind::Markdown, cwd, None),
            None
        );
    }

    #[test]
    fn ending_with_line_breaks_written_as_two_characters_is_questioned() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let mut coach = Coach::new(
            true,
            "Write the failed IDs, one per line, to failed.txt.",
            cwd,
        );
        coach.after_runs(&[python_report("")], cwd);
        fs_err::write(cwd.join("failed.txt"), "J-102\\nJ-104\n").unwrap();
        let note = coach
            .note_before_ending("The task is done.", HarnessKind::Markdown, cwd, None)
            .unwrap();
        assert!(
            note.contains("`failed.txt` holds `\\n` as two characters, not as line breaks (write it with `printf` or from Python)"),
            "{note}"
        );
    }

    #[test]
    fn ending_with_a_labelled_value_is_questioned_once() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let md = HarnessKind::Markdown;
        let ran = [python_report("")];
        fs_err::write(cwd.join("numbers.txt"), "10\n41\n").unwrap();
        let mut coach = Coach::new(true, "Write the mean of numbers.txt to mean.txt", cwd);
        coach.after_runs(&ran, cwd);
        fs_err::write(cwd.join("mean.txt"), "Mean: 25.5").unwrap();
        let note = coach.note_before_ending("Done.", md, cwd, None).unwrap();
        assert!(
            note.contains("`mean.txt` has words around its value (`Mean: 25.5`) where the task likely asks for the value alone (`25.5`, as `open('mean.txt', 'w').write('25.5\\n')` writes it)"),
            "{note}"
        );
        assert_eq!(coach.note_before_ending("Done.", md, cwd, None), None);
        // Code that ran and left it as it was: questioned once more, then
        // the model has the last word.
        coach.after_runs(&ran, cwd);
        let again = coach.note_before_ending("Done.", md, cwd, None).unwrap();
        assert!(
            again.starts_with(
                "[oi: still not done: `mean.txt` has words around its value (`Mean: 25.5`)"
            ),
            "{again}"
        );
        assert!(again.contains("Your last run did not fix it."), "{again}");
        coach.after_runs(&ran, cwd);
        assert_eq!(coach.note_before_ending("Done.", md, cwd, None), None);
        // The value alone passes.
        let mut fine = Coach::new(true, "Write the mean of numbers.txt to avg.txt", cwd);
        fine.after_runs(&ran, cwd);
        fs_err::write(cwd.join("avg.txt"), "25.5\n").unwrap();
        assert_eq!(fine.note_before_ending("Done.", md, cwd, None), None);
        // Labels the task writes itself are asked for, even where the
        // sentence naming the file names another.
        let task = "First, write clean.csv from numbers.txt. Then, from clean.csv, write stats.txt with two lines: \"min: X\" and \"max: X\".";
        let mut own = Coach::new(true, task, cwd);
        own.after_runs(&ran, cwd);
        fs_err::write(cwd.join("clean.csv"), "n\n10\n41\n").unwrap();
        fs_err::write(cwd.join("stats.txt"), "min: 10\nmax: 41\n").unwrap();
        let previews = own.after_runs(&ran, cwd);
        assert!(
            previews
                .iter()
                .all(|p| !p.contains("words before the value")),
            "{previews:?}"
        );
        assert_eq!(own.note_before_ending("Done.", md, cwd, None), None);
        // Another label than the task's still is not (a task naming its
        // labels unquoted).
        fs_err::remove_file(cwd.join("stats.txt")).unwrap();
        let unquoted = "Write stats.txt from numbers.txt with the lines min: X and max: X.";
        let mut own = Coach::new(true, unquoted, cwd);
        fs_err::write(cwd.join("stats.txt"), "min: 10\nmax: 41\n").unwrap();
        let previews = own.after_runs(&ran, cwd);
        assert!(
            previews
                .iter()
                .all(|p| !p.contains("words before the value")),
            "{previews:?}"
        );
        fs_err::write(cwd.join("stats.txt"), "Minimum: 10\nMaximum: 41\n").unwrap();
        let previews = own.after_runs(&ran, cwd);
        assert!(
            previews
                .iter()
                .any(|p| p.contains("words before the value")),
            "{previews:?}"
        );
        // A quoted form of label and value asks for such lines.
        let form = "Count the books by author in books.csv. Write authors.txt with one line per author as \"name: count\".";
        let mut quoted = Coach::new(true, form, cwd);
        fs_err::write(cwd.join("authors.txt"), "Mara Quinn: 3\nAda Okafor: 1\n").unwrap();
        let previews = quoted.after_runs(&ran, cwd);
        assert!(
            previews
                .iter()
                .all(|p| !p.contains("words before the value")),
            "{previews:?}"
        );
        assert!(quotes_a_labelled_form("write `key = value` lines"));
        assert!(!quotes_a_labelled_form("write \"done\" when it is: over"));
    }

    #[test]
    fn code_is_required_first_for_an_action_and_after_a_note_asking_for_it() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let md = HarnessKind::Markdown;
        assert!(!Coach::new(false, "Write the squares to squares.txt", cwd).wants_code());
        for remark in [
            "thanks!",
            "ok, great",
            "What is in this folder?",
            "Is 7 prime",
        ] {
            assert!(!Coach::new(true, remark, cwd).wants_code(), "{remark}");
        }
        // A question that names a file to make needs code too.
        assert!(Coach::new(true, "Which region sold most? Write it to top.txt.", cwd).wants_code());
        let mut coach = Coach::new(true, "Write the squares of 1..5 to squares.txt", cwd);
        assert!(coach.wants_code());
        // A reply ran code: the next may answer.
        coach.heard("```python\nprint(1)\n```");
        assert!(!coach.wants_code());
        // Each note that asks for code requires it in the next reply.
        coach.heard("You can run the following code.");
        assert!(
            coach
                .note_before_ending("You can run the following code.", md, cwd, None)
                .is_some()
        );
        assert!(coach.wants_code());
        coach.heard("Done!");
        assert!(coach.note_before_ending("Done!", md, cwd, None).is_some());
        assert!(coach.wants_code(), "the missing file");
        coach.heard("Done!");
        assert!(coach.note_before_ending("Done!", md, cwd, None).is_some());
        assert!(coach.wants_code(), "nothing ran");
        coach.heard("Done!");
        assert_eq!(coach.note_before_ending("Done!", md, cwd, None), None);
        assert!(!coach.wants_code());
        // A question may be answered after the note about a missing file.
        let mut asked = Coach::new(true, "Which of a.txt and b.txt is bigger?", cwd);
        asked.heard("a.txt");
        assert!(asked.note_before_ending("a.txt", md, cwd, None).is_some());
        assert!(!asked.wants_code());
    }

    #[test]
    fn a_fix_printed_but_not_written_to_the_result_is_pointed_at_it() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let task = "Write the names, sorted, one per line, to names.txt.";
        let mut coach = Coach::new(true, task, cwd);
        let report = |text: &str| Report {
            call_id: None,
            language: "shell".to_owned(),
            text: text.to_owned(),
            images: Vec::new(),
        };
        fs_err::write(cwd.join("names.txt"), "c\nb\na\n").unwrap();
        coach.saw_failure(false);
        coach.after_runs(&[report(crate::output::PRINTED_NOTHING)], cwd);
        // The check names the problem; nothing printed, nothing pointed at.
        let first = coach
            .note_before_ending("Done.", HarnessKind::Markdown, cwd, None)
            .unwrap();
        assert!(first.contains("not in alphabetical order"), "{first}");
        assert!(!first.contains("wrote nothing"), "{first}");
        // The next run prints the right lines and leaves the file as it was.
        coach.heard("```bash\nsort names.txt\n```");
        coach.saw_failure(false);
        coach.after_runs(&[report("a\nb\nc\n")], cwd);
        let again = coach
            .note_before_ending("Done.", HarnessKind::Markdown, cwd, None)
            .unwrap();
        assert!(
            again.contains("Your last run printed its lines but wrote nothing to `names.txt`: if they are what it should hold, run that code again writing them there (`> names.txt` after a shell command; `open('names.txt', 'w')` in Python)."),
            "{again}"
        );
        // A run that wrote the file is not told so.
        fs_err::write(cwd.join("names.txt"), "a\nb\nc\n").unwrap();
        coach.after_runs(&[report("written\n")], cwd);
        assert_eq!(coach.printed_unwritten, None);
    }

    #[test]
    fn ending_after_a_failed_run_or_with_an_empty_result_is_questioned_once() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let mut coach = Coach::new(true, "Write the total to total.txt", cwd);
        let ran = [Report {
            call_id: None,
            language: "python".to_owned(),
            text: String::new(),
            images: Vec::new(),
        }];
        fs_err::write(cwd.join("total.txt"), "").unwrap();
        coach.after_runs(&ran, cwd);
        let note = coach
            .note_before_ending(
                "Done.",
                HarnessKind::Markdown,
                cwd,
                Some("KeyError: 'amount'"),
            )
            .unwrap();
        assert_eq!(
            note,
            "[oi: before you finish: your last run failed (KeyError: 'amount'), and `total.txt` is empty, so the task is probably not done. Fix the cause and run the step again now.]"
        );
        assert!(coach.wants_code(), "the reply to it runs code");
        coach.heard("Done.");
        assert_eq!(
            coach.note_before_ending("Done.", HarnessKind::Markdown, cwd, Some("KeyError")),
            None
        );
        // A run that worked and a full file: nothing to say.
        let mut coach_fine = Coach::new(true, "Write the total to total.txt", dir.path());
        fs_err::write(cwd.join("total.txt"), "42\n").unwrap();
        coach_fine.after_runs(&ran, cwd);
        assert_eq!(
            coach_fine.note_before_ending("Done.", HarnessKind::Markdown, cwd, None),
            None
        );
        // Other models are never questioned.
        let mut big = Coach::new(false, "Write the total to total.txt", cwd);
        assert_eq!(
            big.note_before_ending("Done.", HarnessKind::Markdown, cwd, Some("boom")),
            None
        );
    }

    #[test]
    fn a_named_file_still_missing_after_code_ran_is_pointed_out_again_once() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let md = HarnessKind::Markdown;
        let printed = [python_report("hi\n")];
        let mut coach = Coach::new(true, "Write hello to hello.txt", cwd);
        coach.after_runs(&printed, cwd);
        coach.heard("Done.");
        let first = coach.note_before_ending("Done.", md, cwd, None).unwrap();
        assert!(first.contains("which does not exist yet"), "{first}");
        coach.heard("Done, it printed hi.");
        assert!(!coach.wants_code());
        let second = coach
            .note_before_ending("Done, it printed hi.", md, cwd, None)
            .unwrap();
        assert_eq!(
            second,
            "[oi: before you finish: `hello.txt` still does not exist, so the task is probably not done. Fix the cause and run the step again now.]"
        );
        assert!(coach.wants_code(), "the file is written with code");
        coach.heard("Done.");
        assert_eq!(coach.note_before_ending("Done.", md, cwd, None), None);

        // A question, or a task where nothing ran (told so instead), is
        // not asked again about the file.
        let mut asked = Coach::new(true, "Is there a hello.txt here?", cwd);
        asked.after_runs(&printed, cwd);
        assert!(asked.note_before_ending("No.", md, cwd, None).is_some());
        assert_eq!(asked.note_before_ending("No.", md, cwd, None), None);
        let mut idle = Coach::new(true, "Write hello to hello.txt", cwd);
        assert!(idle.note_before_ending("Done.", md, cwd, None).is_some());
        let told = idle.note_before_ending("Done.", md, cwd, None).unwrap();
        assert!(told.contains("you have not run any code"), "{told}");
        assert_eq!(idle.note_before_ending("Done.", md, cwd, None), None);
    }

    #[test]
    fn the_reply_to_a_failed_run_must_run_code_a_few_times_a_task() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let mut coach = Coach::new(true, "Write the dates of events.csv as ISO to iso.csv", cwd);
        coach.heard("```python\nx()\n```");
        coach.after_batch(false);
        assert!(!coach.wants_code(), "it worked");
        for _ in 0..MAX_FIXES {
            coach.after_batch(true);
            assert!(coach.wants_code());
            coach.heard("```python\nx()\n```");
        }
        coach.after_batch(true);
        assert!(!coach.wants_code(), "then it may answer");
        // A question may be answered after a failure; other models are
        // never held.
        let mut asked = Coach::new(true, "Is 7 prime", cwd);
        asked.after_batch(true);
        assert!(!asked.wants_code());
        let mut big = Coach::new(false, "Write the dates to iso.csv", cwd);
        big.after_batch(true);
        assert!(!big.wants_code());
    }

    #[test]
    fn a_command_the_task_quotes_must_have_run_before_it_ends() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(cwd.join("csv2md.py"), "import csv\n").unwrap();
        fs_err::write(cwd.join("data.csv"), "name,price\npear,3\n").unwrap();
        let task = "Add an option `--sort COLUMN` to csv2md.py, so that `python3 csv2md.py  data.csv --sort price` works.";
        assert_eq!(
            quoted_commands(task),
            ["python3 csv2md.py data.csv --sort price"],
            "an option alone is no command"
        );
        assert!(quoted_commands("Run `ls -la` and `python3 -V`.").is_empty());
        // Written in the prose: up to the first other word; not with a
        // placeholder, nor without arguments.
        let prose = "total.py should print a column's sum, run as python total.py FILE COLUMN. It fails on expenses.csv. Fix total.py so that python total.py expenses.csv \"Net Amount\" works.";
        assert_eq!(
            quoted_commands(prose),
            ["python total.py expenses.csv \"Net Amount\""]
        );
        assert_eq!(
            quoted_commands(
                "Make python3 csv2md.py data.csv --sort price work, then run node app.js."
            ),
            ["python3 csv2md.py data.csv --sort price"]
        );
        assert_eq!(
            quoted_commands("Fix it so that python3 sum.py data.csv."),
            ["python3 sum.py data.csv"]
        );
        assert!(quoted_commands("Run python total.py <file> on it.").is_empty());
        // Quoted and written again in the prose: once.
        assert_eq!(
            quoted_commands("Make `python a.py x.csv` work: python a.py x.csv fails."),
            ["python a.py x.csv"]
        );
        let command = "python3 csv2md.py data.csv --sort price";
        assert!(runs_command(
            "python csv2md.py data.csv  --sort price\n",
            command
        ));
        assert!(runs_command(
            "!python3 CSV2MD.py data.csv --sort price | head",
            command
        ));
        assert!(!runs_command("python3 csv2md.py data.csv", command));
        assert!(runs_command("./fix.sh a b", "./fix.sh a b"));

        let run = |code: &str| {
            Some(ProposedRun {
                call_id: None,
                language: Some("bash".into()),
                code: code.into(),
            })
        };
        let md = HarnessKind::Markdown;
        let mut coach = Coach::new(true, task, cwd);
        coach.saw_runs(&[run("python3 csv2md.py data.csv")]);
        coach.after_runs(&[python_report("")], cwd);
        let note = coach.note_before_ending("Done.", md, cwd, None).unwrap();
        assert!(
            note.contains(
                "the task says `python3 csv2md.py data.csv --sort price` should work, and it has not run yet"
            ),
            "{note}"
        );
        assert!(coach.wants_code());
        // Once it ran, nothing is said of it.
        let mut tried = Coach::new(true, task, cwd);
        tried.saw_runs(&[
            run("cat csv2md.py"),
            run("python csv2md.py data.csv --sort price"),
        ]);
        tried.after_runs(&[python_report("")], cwd);
        assert_eq!(tried.note_before_ending("Done.", md, cwd, None), None);
        // Other models, and a small one before it ran anything (told that
        // instead), are not told.
        let mut big = Coach::new(false, task, cwd);
        big.after_runs(&[python_report("")], cwd);
        assert_eq!(big.note_before_ending("Done.", md, cwd, None), None);
    }

    #[test]
    fn code_using_numbers_written_with_separators_as_they_are_is_questioned() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(
            cwd.join("cities.tsv"),
            "City\tPopulation\nSpringfield\t167,882\nRiverton\t1,204,331\nLakeside\t98,004\n",
        )
        .unwrap();
        let task = "Write the 2 most populous cities of cities.tsv to top.txt.";
        let run = |code: &str| {
            Some(ProposedRun {
                call_id: None,
                language: Some("python".into()),
                code: code.into(),
            })
        };
        let raw = "df = pd.read_csv('cities.tsv', sep='\\t')\ndf.sort_values('Population').City.head(2).to_csv('top.txt')";
        let clean = "df = pd.read_csv('cities.tsv', sep='\\t', thousands=',')\ndf.sort_values('Population')";
        let md = HarnessKind::Markdown;
        let end = |coach: &mut Coach| {
            fs_err::write(cwd.join("top.txt"), "Lakeside\nSpringfield\n").unwrap();
            coach.after_runs(&[python_report("")], cwd);
            coach.note_before_ending("Done.", md, cwd, None)
        };
        let mut coach = Coach::new(true, task, cwd);
        coach.saw_runs(&[run("print(open('cities.tsv').read())"), run(raw)]);
        let note = end(&mut coach).unwrap();
        assert!(
            note.contains("your code uses the `Population` column of `cities.tsv` as it is, but its numbers are written like `167,882`"),
            "{note}"
        );
        assert!(note.contains("thousands=','"), "{note}");
        // Fixed by a later run, or never used raw: nothing to say.
        fs_err::remove_file(cwd.join("top.txt")).unwrap();
        let mut fixed = Coach::new(true, task, cwd);
        fixed.saw_runs(&[run(raw)]);
        fixed.saw_runs(&[run(clean)]);
        assert_eq!(end(&mut fixed), None);
        fs_err::remove_file(cwd.join("top.txt")).unwrap();
        let mut other = Coach::new(true, task, cwd);
        other.saw_runs(&[run("print(df['City'])")]);
        assert_eq!(end(&mut other), None);
    }

    #[test]
    fn a_result_with_one_entry_written_twice_in_other_case_is_questioned() {
        assert_eq!(
            folded_twins("Alice Smith\nBob  Jones\nBob Jones\n"),
            Some(("Bob  Jones".to_owned(), "Bob Jones".to_owned()))
        );
        assert_eq!(
            folded_twins("a\nA \n"),
            Some(("a".to_owned(), "A".to_owned()))
        );
        assert_eq!(
            folded_twins("x\nx\ny\n"),
            None,
            "exact repeats are another matter"
        );
        assert_eq!(folded_twins("Bob Jones\nBob Jonas\n"), None);
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let mut coach = Coach::new(true, "Write each name once to unique.txt", cwd);
        fs_err::write(
            cwd.join("unique.txt"),
            "Alice Smith\nBob  Jones\nBob Jones\n",
        )
        .unwrap();
        coach.after_runs(&[python_report("")], cwd);
        let note = coach
            .note_before_ending("Done.", HarnessKind::Markdown, cwd, None)
            .unwrap();
        assert!(
            note.contains("`unique.txt` has lines that differ only in spacing (`Bob  Jones` and `Bob Jones`), likely one entry written twice: make the spaces inside one before comparing (`' '.join(s.split())`"),
            "{note}"
        );
        // Each kind of difference gets its own way to fold it.
        assert_eq!(twins_differ("bob", "Bob", &[]).0, "case");
        assert!(twins_differ("bob", "Bob", &[]).1.contains("s.lower()"));
        assert_eq!(
            twins_differ("bob  jones", "Bob Jones", &[]).0,
            "case and spacing"
        );
        assert!(
            twins_differ("bob  jones", "Bob Jones", &[])
                .1
                .contains("' '.join(s.split()).title()")
        );
        // What the input differs in is folded too, whatever the two lines
        // differ in: one fix at a time undoes the last.
        let name = "attendees.txt".to_owned();
        let input = "  alice SMITH\nAlice Smith\nbob  jones\nBOB JONES \n".to_owned();
        let (differ, fix) = twins_differ("Bob  Jones", "Bob Jones", &[(&name, &input)]);
        assert_eq!(differ, "spacing");
        assert!(fix.contains("' '.join(s.split()).title()"), "{fix}");
        assert_eq!(written_twice(&input), (true, true));
        assert_eq!(written_twice("a b\nA B\n"), (true, false));
        assert_eq!(written_twice("a  b\na b\n"), (false, true));
        assert_eq!(written_twice("a\nb\n"), (false, false));
    }

    #[test]
    fn a_folder_the_task_names_is_listed_again_when_a_run_changes_it() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::create_dir(cwd.join("photos")).unwrap();
        fs_err::write(cwd.join("photos/My Photo.JPEG"), "x").unwrap();
        let task = "Rename the files in photos/ to lowercase names";
        let mut coach = Coach::new(true, task, cwd);
        let mut big = Coach::new(false, task, cwd);
        // Nothing changed: nothing to show.
        assert!(coach.after_runs(&[python_report("")], cwd).is_empty());
        fs_err::rename(
            cwd.join("photos/My Photo.JPEG"),
            cwd.join("photos/My_Photo.jpg"),
        )
        .unwrap();
        let notes = coach.after_runs(&[python_report("")], cwd);
        assert_eq!(
            notes,
            [
                "[oi: after that run, `photos/` holds 1 entry: `My_Photo.jpg`. It is not right yet: `My_Photo.jpg` in `photos/` has capital letters where the task asks for lowercase names (lowercase a name with `tr '[:upper:]' '[:lower:]'` in shell, `.lower()` in Python).]"
            ]
        );
        // Shown once until it changes again; other models are not told.
        assert!(coach.after_runs(&[python_report("")], cwd).is_empty());
        assert!(big.after_runs(&[python_report("")], cwd).is_empty());
    }

    #[test]
    fn names_the_task_rules_out_are_named_after_a_run_and_before_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(cwd.join("Holiday Pic.jpeg"), "x").unwrap();
        fs_err::write(cwd.join("notes.txt"), "x").unwrap();
        let task = "Rename the files in this folder: spaces replaced by underscores.";
        let mut coach = Coach::new(true, task, cwd);
        let runs = [Some(ProposedRun {
            call_id: None,
            language: Some("python".to_owned()),
            code: "import os".to_owned(),
        })];
        coach.saw_runs(&runs);
        fs_err::rename(cwd.join("Holiday Pic.jpeg"), cwd.join("Holiday Pic.jpg")).unwrap();
        assert_eq!(
            coach.after_runs(&[python_report("")], cwd),
            [
                "[oi: after that run, `./` holds 2 entries: `Holiday Pic.jpg`, `notes.txt`. Some names have spaces: quote them in shell commands. It is not right yet: `Holiday Pic.jpg` in `./` still has spaces where the task asks for none (`tr ' ' '_'` in shell, `.replace(' ', '_')` in Python).]"
            ]
        );
        let note = coach
            .note_before_ending("Done.", HarnessKind::Markdown, cwd, None)
            .unwrap();
        assert!(
            note.contains(
                "`Holiday Pic.jpg` in `./` still has spaces where the task asks for none"
            ),
            "{note}"
        );
        // Capitals are fine here; the rule of each task is its own.
        assert!(!note.contains("capital"), "{note}");
        fs_err::rename(cwd.join("Holiday Pic.jpg"), cwd.join("Holiday_Pic.jpg")).unwrap();
        coach.saw_runs(&runs);
        let after = coach.after_runs(&[python_report("")], cwd);
        assert!(after[0].ends_with("Check that every name is exactly what the task asks for.]"));
        assert_eq!(
            coach.note_before_ending("Done.", HarnessKind::Markdown, cwd, None),
            None
        );
    }

    #[test]
    fn a_first_row_taken_where_the_task_picks_by_comparing_is_named() {
        let asked = Asked::of(
            "orders.csv is an export of shop orders. Find the day of the week with the most orders and write its English name (for example Monday) to busiest_day.txt.",
        );
        let code = "import pandas as pd\ndf = pd.read_csv('orders.csv')\n# the most common day\nday = pd.to_datetime(df['placed_at']).dt.day_name()[0]\nwith open('busiest_day.txt', 'w') as f:\n    f.write(day)\n";
        let problem = first_row_pick("busiest_day.txt", code, &asked).expect("a first row");
        assert!(
            problem.starts_with("the task asks for the most, and the code that wrote `busiest_day.txt` takes the first element (`day = pd.to_datetime(df['placed_at']).dt.day_name()[0]`)"),
            "{problem}"
        );
        // Code that counts, sorts or compares picks; so does code with no
        // first element; "at most" is no pick.
        for code in [
            "day = df['day'].value_counts().idxmax()\nopen('d.txt', 'w').write(day)",
            "top = sorted(days)[0]\nopen('d.txt', 'w').write(top)",
            "best = None\nfor d, n in counts.items():\n    if best is None or n > counts[best]:\n        best = d\nopen('d.txt', 'w').write(best)",
            "open('d.txt', 'w').write(day)",
        ] {
            assert_eq!(first_row_pick("d.txt", code, &asked), None, "{code}");
        }
        let at_most = Asked::of("Write the names of files of at most 10 lines to small.txt.");
        assert_eq!(
            first_row_pick(
                "small.txt",
                "open('small.txt', 'w').write(names[0])",
                &at_most
            ),
            None
        );
        let plain = Asked::of("Write the first name in names.txt to first.txt.");
        assert_eq!(
            first_row_pick(
                "first.txt",
                "open('first.txt', 'w').write(names[0])",
                &plain
            ),
            None
        );
    }

    #[test]
    fn a_result_holding_nan_or_several_lines_for_one_number_is_named() {
        let task = "prices.csv lists a product's price on various dates. Write to change.txt the percent change from the earliest to the latest date, as a number rounded to 2 decimals.";
        let asked = Asked::of(task);
        let problems = content_problems("change.txt", "   NaN\n-13.04\n 23.45\n", &[], &asked, "");
        assert_eq!(
            problems,
            [
                "line 1 of `change.txt` holds `NaN`, which is no value: pandas and Python write it for one they could not compute (a missing or unread input, the first row of a `shift` or `diff`, 0 divided by 0). Compute what the task asks from the rows that have it, or leave such rows out (`dropna()`)",
                "`change.txt` has 3 lines (the first is `NaN`) where the task asks for one value alone: write only that value",
            ]
        );
        assert!(content_problems("change.txt", "7.35\n", &[], &asked, "").is_empty());
        // A table with a number column, "each", or NaN named by the task
        // or held by an input: nothing said.
        let table = Asked::of("Write prices.csv with each price as a number.");
        assert!(
            content_problems("prices.csv", "day,price\n1,2.5\n2,3.5\n", &[], &table, "").is_empty()
        );
        let named = Asked::of("Write the mean to mean.txt (NaN when there are no values).");
        assert!(content_problems("mean.txt", "NaN\n", &[], &named, "").is_empty());
        let (input, body) = ("raw.csv".to_owned(), "a,b\n1,nan\n".to_owned());
        assert_eq!(
            not_a_number(
                "b\nnan\n",
                "copy column b of raw.csv to b.csv",
                &[(&input, &body)]
            ),
            None
        );
        assert_eq!(
            not_a_number("total,inf\n", "write the totals", &[]),
            Some((1, "inf".to_owned()))
        );
        // A word holding the letters is no such value.
        assert_eq!(
            not_a_number("Nancy,3\ninfo: 2\n", "write the counts", &[]),
            None
        );
    }

    #[test]
    fn the_forms_a_task_quotes_for_its_lines_are_read() {
        let texts = |task: &str| -> Vec<String> {
            asked_line_forms(task).into_iter().map(|f| f.text).collect()
        };
        assert_eq!(
            texts(
                "Write toc.md, a table of contents for guide.md: one line per level-2 and level-3 heading in order, a level-2 heading as \"- Title\" and a level-3 heading as \"  - Title\" (two spaces before the dash)."
            ),
            ["- Title", "  - Title"]
        );
        assert_eq!(
            texts("Write the 3 most common words, one per line as 'word count', to top.txt."),
            ["word count"]
        );
        // An apostrophe is no quote; a form after a colon and chained ones.
        assert_eq!(
            texts(
                "Write the owner's TODOs, then stats.txt with three lines: \"min: X\", \"max: X\" and \"mean: X\"."
            ),
            ["min: X", "max: X", "mean: X"]
        );
        assert_eq!(
            texts("Write each person once, as `First Last` in title case."),
            ["First Last"]
        );
        // Values to leave out, a file to save as, an example, a column:
        // no forms.
        for task in [
            "Leave out rows where it is empty, \"n/a\" or \"-\".",
            "Save the result as \"report.csv\".",
            "Write the day (for example \"2024-01-05, Monday\") to day.txt.",
            "Fix total.py so that python total.py expenses.csv \"Net Amount\" works.",
            "Reply as \"this is a whole sentence that is much too long to be a form\".",
        ] {
            assert!(texts(task).is_empty(), "{task}");
        }
    }

    #[test]
    fn a_result_line_out_of_the_form_the_task_quotes_is_named() {
        let task = "Write toc.md, a table of contents for guide.md: one line per level-2 and level-3 heading in order, a level-2 heading as \"- Title\" and a level-3 heading as \"  - Title\" (two spaces before the dash).";
        let asked = Asked::of(task);
        let problems = content_problems(
            "toc.md",
            "# Project guide\n### On Linux\n### On macOS\n",
            &[],
            &asked,
            "",
        );
        assert_eq!(
            problems,
            [
                "line 1 of `toc.md` is `# Project guide` (and 2 more lines), not in the form the task gives its lines, `- Title` or `  - Title` (each word there stands for a value; the signs and spaces around it are written as they are): write every line in that form"
            ]
        );
        let right = "- Install\n  - On Linux\n  - On macOS\n- Usage\n  - Options\n- License\n";
        assert!(content_problems("toc.md", right, &[], &asked, "").is_empty());
        // One line three spaces in is out of both forms.
        let problems = content_problems("toc.md", "- Install\n   - On Linux\n", &[], &asked, "");
        assert!(
            problems[0].starts_with("line 2 of `toc.md` is `   - On Linux`, not"),
            "{problems:?}"
        );
        // A form ending in a sign is the start of the line; the header the
        // task gives is no line of the form; JSON is not read by lines.
        let asked = Asked::of(
            "Write out.txt with the header name,total and then one line per name as \"Name: \" and the total.",
        );
        assert!(
            content_problems("out.txt", "name,total\nAna: 3\nBen: 12\n", &[], &asked, "")
                .is_empty()
        );
        let problems = content_problems("out.txt", "name,total\nAna 3\n", &[], &asked, "");
        assert!(
            problems[0].starts_with("line 2 of `out.txt` is `Ana 3`"),
            "{problems:?}"
        );
        let asked = Asked::of("Write each pair as \"key: value\" into out.json.");
        assert!(content_problems("out.json", "{\"a\": 1}\n", &[], &asked, "").is_empty());
    }

    #[test]
    fn a_result_with_words_around_the_form_of_the_tasks_example_is_named() {
        let task =
            "Write the version of python3 on this machine (for example 3.11.7) to version.txt.";
        let asked = Asked::of(task);
        assert_eq!(asked.example.as_deref(), Some("3.11.7"));
        let problems = content_problems("version.txt", "Python 3.11.7\n", &[], &asked, "");
        assert_eq!(
            problems,
            [
                "`version.txt` holds `Python 3.11.7` where the task's example is `3.11.7`: write the value alone in that form (`3.11.7`, as `open('version.txt', 'w').write('3.11.7\\n')` writes it)"
            ]
        );
        // The value alone, another value of the form, or no such value:
        // nothing to say.
        for text in ["3.12.1\n", "Python\n", "3.11.7\n3.11.8\n"] {
            assert!(
                content_problems("version.txt", text, &[], &asked, "").is_empty(),
                "{text}"
            );
        }
        assert_eq!(
            asked_example("Write the last day (e.g. 2026-01-31, as dates are written) to d.txt"),
            Some("2026-01-31".to_owned())
        );
        assert_eq!(
            asked_example("Organise the files (for example report.pdf goes into pdf/)."),
            None
        );
        assert_eq!(asked_example("Write the total to t.txt."), None);
    }

    #[test]
    fn what_a_task_asks_of_names_is_read_from_its_words() {
        let rules = NameRules::of(
            "Rename the files in photos/ to lowercase names with spaces replaced by underscores",
        );
        assert!(rules.lowercase && rules.no_spaces);
        let rules =
            NameRules::of("Rename the files in this folder so their names are all lowercase.");
        assert!(rules.lowercase && !rules.no_spaces);
        // Not about names.
        let rules = NameRules::of(
            "Write the words of story.txt in lowercase, spaces replaced by underscores, to out.txt",
        );
        assert!(!rules.lowercase && !rules.no_spaces);
        assert!(names_this_folder(
            "Organise the files in this folder into subfolders"
        ));
        assert!(!names_this_folder("Organise photos/ into subfolders"));
    }

    #[test]
    fn the_run_that_lacked_a_name_runs_again_when_a_later_run_defines_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut coach = Coach::new(true, "In settings.ini, set the port to 5433.", dir.path());
        let run = |code: &str| {
            Some(ProposedRun {
                call_id: Some("call_1".to_owned()),
                language: Some("python".to_owned()),
                code: code.to_owned(),
            })
        };
        let call = run("set_key('settings.ini', 'database', 'port', 5433)");
        let failed = python_report(
            "Traceback (most recent call last):\n  File \"<cell-1>\", line 1\nNameError: name 'set_key' is not defined",
        );
        assert_eq!(
            coach
                .rerun_after_definition(std::slice::from_ref(&call), std::slice::from_ref(&failed)),
            None
        );
        // A run that defines something else, or defines and calls it, or
        // fails: nothing to run again.
        let other = run("def other(x):\n    return x");
        assert_eq!(
            coach.rerun_after_definition(&[other], &[python_report("")]),
            None
        );
        let both = run("def set_key(p, s, k, v):\n    pass\nset_key('a', 'b', 'c', 1)");
        assert_eq!(
            coach.rerun_after_definition(&[both], &[python_report("")]),
            None
        );
        let definition = run(
            "def set_key(path, section, key, value):\n    lines = open(path).read()\n    return set_key_count",
        );
        let broken =
            python_report("Traceback (most recent call last):\nSyntaxError: invalid syntax");
        assert_eq!(
            coach.rerun_after_definition(std::slice::from_ref(&definition), &[broken]),
            None
        );
        let (again, lead) = coach
            .rerun_after_definition(std::slice::from_ref(&definition), &[python_report("")])
            .unwrap();
        assert_eq!(
            again.code,
            "set_key('settings.ini', 'database', 'port', 5433)"
        );
        assert_eq!(again.call_id, None);
        assert_eq!(
            lead,
            "[oi: that defined `set_key`, so oi ran again the code that had failed for lack of it:]"
        );
        // Once: the failed run is forgotten.
        assert_eq!(
            coach.rerun_after_definition(&[definition], &[python_report("")]),
            None
        );
        // An import or an assignment defines a name too.
        assert!(defines("import pandas as pd\n", "pd"));
        assert!(defines("from pathlib import Path, PurePath", "Path"));
        assert!(defines("total = 0", "total"));
        assert!(!defines("total == 0", "total"));
        assert!(
            !defines("    def set_key(a):", "set_key"),
            "not at the top level"
        );
        assert!(uses("x = set_key(1)", "set_key"));
        assert!(!uses(
            "x = my_set_key(1)\nobj.set_key(2)\n# set_key(3)",
            "set_key"
        ));
        // Not for other models.
        let mut big = Coach::new(false, "Set it.", dir.path());
        assert_eq!(big.rerun_after_definition(&[call], &[failed]), None);
    }

    #[test]
    fn a_skip_before_a_failed_split_is_put_in_only_inside_a_loop() {
        let code = "merged = {}\nfor line in open('a.env'):\n    if line.strip():\n        key, value = line.strip().split('=')\n        merged[key] = value\nprint(merged)";
        assert!(in_loop(code, "key, value = line.strip().split('=')"));
        assert_eq!(
            with_line(
                code,
                "key, value = line.strip().split('=')",
                "if '=' not in line:\n    continue\nkey, value = line.split('=', 1)"
            ),
            "merged = {}\nfor line in open('a.env'):\n    if line.strip():\n        if '=' not in line:\n            continue\n        key, value = line.split('=', 1)\n        merged[key] = value\nprint(merged)"
        );
        // Not in a loop: a `with` or an `if` alone, or the top level.
        assert!(!in_loop(
            "with open('a') as f:\n    key, value = f.read().split('=')",
            "key, value = f.read().split('=')"
        ));
        assert!(!in_loop(
            "key, value = s.split('=')",
            "key, value = s.split('=')"
        ));
        // A loop that ended before the line.
        assert!(!in_loop(
            "for x in y:\n    pass\nkey, value = s.split('=')",
            "key, value = s.split('=')"
        ));
        // Failed that way in a loop, the block runs again with the skip.
        let dir = tempfile::tempdir().unwrap();
        let run = Some(ProposedRun {
            call_id: None,
            language: Some("python".to_owned()),
            code: code.to_owned(),
        });
        let failed = python_report(
            "Traceback (most recent call last):\n  File \"<cell-1>\", line 4, in <module>\n    key, value = line.strip().split('=')\n    ^^^^^^^^^^\nValueError: not enough values to unpack (expected 2, got 1)\n[exit code 1]",
        );
        let mut coach = Coach::new(true, "Merge a.env into merged.env.", dir.path());
        coach.saw_runs(std::slice::from_ref(&run));
        coach.saw_failure(true);
        coach.after_runs(std::slice::from_ref(&failed), dir.path());
        let (again, lead) = coach
            .rerun(std::slice::from_ref(&run), std::slice::from_ref(&failed))
            .expect("run again");
        assert!(
            again.code.contains("    if line.strip():\n        if line.strip().startswith('#') or '=' not in line.strip():\n            continue\n        key, value = line.strip().split('=', 1)\n"),
            "{}",
            again.code
        );
        assert!(
            lead.contains("written as:\n```python\nif line.strip()"),
            "{lead}"
        );
    }

    #[test]
    fn a_failed_block_whose_error_has_a_known_line_fix_runs_again_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let task = "Write totals.csv with the total of each customer's payments.";
        let code = "import pandas as pd\ndf = pd.read_csv('payments.csv')\nfor c in ['customer']:\n    df[c] = df[c].lower()\ndf.groupby('customer')['amount'].sum().to_csv('totals.csv')";
        let run = Some(ProposedRun {
            call_id: None,
            language: Some("python".to_owned()),
            code: code.to_owned(),
        });
        let failed = python_report(
            "Traceback (most recent call last):\n  File \"<cell-1>\", line 4, in <module>\n    df[c] = df[c].lower()\n  [2 frames inside libraries]\nAttributeError: 'Series' object has no attribute 'lower'\n[exit code 1]",
        );
        let (mut coach, notes) = after_failure(true, task, &run, &failed, dir.path());
        // The hint is not told: oi makes its change and says so as it runs.
        assert!(
            !notes.iter().any(|n| n.contains(".str.lower()")),
            "{notes:?}"
        );
        let (again, lead) = coach
            .rerun(std::slice::from_ref(&run), std::slice::from_ref(&failed))
            .expect("the block runs again, fixed");
        assert_eq!(
            again.code,
            "import pandas as pd\ndf = pd.read_csv('payments.csv')\nfor c in ['customer']:\n    df[c] = df[c].str.lower()\ndf.groupby('customer')['amount'].sum().to_csv('totals.csv')"
        );
        assert_eq!(again.language.as_deref(), Some("python"));
        assert_eq!(
            lead,
            "[oi: that error has a known fix, so oi ran your code again with `df[c] = df[c].lower()` written as `df[c] = df[c].str.lower()`:]"
        );
        // Once; the model's code is now the fixed block, and the line sent
        // again unchanged gets the change too.
        coach.after_batch(false);
        assert_eq!(
            coach.rerun(std::slice::from_ref(&run), &[python_report("")]),
            None
        );
        assert_eq!(coach.python, again.code);
        let mut actions = vec![Action::Run(run.clone().unwrap())];
        assert!(coach.apply_line_fix(&mut actions).is_some());
        let Action::Run(sent) = &actions[0] else {
            panic!("a run")
        };
        assert_eq!(sent.code, again.code);
        // A line the block does not hold (a script run by the shell): the
        // hint is told, nothing runs again.
        let other = Some(ProposedRun {
            call_id: None,
            language: Some("python".to_owned()),
            code: "import subprocess\nsubprocess.run(['python', 'totals.py'])".to_owned(),
        });
        let (mut coach, notes) = after_failure(true, task, &other, &failed, dir.path());
        assert!(
            notes
                .iter()
                .any(|n| n.contains("as `df[c] = df[c].str.lower()`")),
            "{notes:?}"
        );
        assert_eq!(coach.rerun(&[other], std::slice::from_ref(&failed)), None);
        // Not for other models.
        let (mut big, _) = after_failure(false, task, &run, &failed, dir.path());
        assert_eq!(big.rerun(&[run], &[failed]), None);
    }

    #[test]
    fn a_block_that_lacked_a_standard_import_runs_again_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let task = "Convert orders.json to orders.csv.";
        let code = "import json\nrows = json.load(open('orders.json'))\nwith open('orders.csv', 'w', newline='') as f:\n    w = csv.writer(f)\n    w.writerows(rows)\n";
        let run = python_run(code);
        let failed = python_report(
            "Traceback (most recent call last):\n  File \"<cell-1>\", line 4, in <module>\n    w = csv.writer(f)\n        ^^^\nNameError: name 'csv' is not defined. Did you mean: 'abs'?\n[exit code 1]",
        );
        let (mut coach, notes) = after_failure(true, task, &run, &failed, dir.path());
        // Not told to add it: oi adds it and says so as it runs.
        assert!(!notes.iter().any(|n| n.contains("import csv")), "{notes:?}");
        let (again, lead) = coach
            .rerun(std::slice::from_ref(&run), std::slice::from_ref(&failed))
            .expect("the block runs again with the import");
        assert_eq!(again.code, format!("import csv\n{code}"));
        assert_eq!(again.language.as_deref(), Some("python"));
        assert_eq!(
            lead,
            "[oi: your code uses `csv` without importing it, so oi ran it again with `import csv` added at its top:]"
        );
        coach.after_batch(false);
        assert_eq!(coach.python, again.code);
        // The next block that leaves out an import gets it too: each time,
        // counted with the other re-runs.
        let pandas = python_run("df = pd.read_csv('orders.csv')\nprint(len(df))\n");
        let no_pd = python_report(
            "Traceback (most recent call last):\n  File \"<cell-2>\", line 1, in <module>\nNameError: name 'pd' is not defined\n[exit code 1]",
        );
        let (again, _) = fails_again(&mut coach, &pandas, &no_pd, dir.path())
            .expect("again with pandas imported");
        assert!(
            again.code.starts_with("import pandas as pd\ndf = "),
            "{}",
            again.code
        );
        // A code that does not use the name itself (a script the shell
        // ran failed so): the hint is told, nothing runs again.
        let other = python_run("import subprocess\nsubprocess.run(['python3', 'convert.py'])\n");
        let (mut coach, notes) = after_failure(true, task, &other, &failed, dir.path());
        assert!(
            notes
                .iter()
                .any(|n| n.contains("add `import csv` at the top")),
            "{notes:?}"
        );
        assert_eq!(coach.rerun(&[other], std::slice::from_ref(&failed)), None);
        // A name no standard import defines is the model's own to fix.
        let own = python_report("NameError: name 'totals' is not defined\n[exit code 1]");
        let (mut coach, _) = after_failure(true, task, &run, &own, dir.path());
        assert_eq!(coach.rerun(std::slice::from_ref(&run), &[own]), None);
        // Not for other models.
        let (mut big, _) = after_failure(false, task, &run, &failed, dir.path());
        assert_eq!(big.rerun(&[run], &[failed]), None);
    }

    #[test]
    fn an_fstrings_quotes_and_a_number_joined_to_text_are_changed_and_run_each_time() {
        let dir = tempfile::tempdir().unwrap();
        let task = "Write each name and score in scores.json to report.txt.";
        let line = r#"f.write(f"{row["name"]}: {row["score"]}\n")"#;
        let code = format!(
            "import json\nrows = json.load(open('scores.json'))\nwith open('report.txt', 'w') as f:\n    for row in rows:\n        {line}\n"
        );
        let run = python_run(&code);
        let refused = python_report(&format!(
            "  File \"<cell-1>\", line 5\n    {line}\n                 ^^^^\nSyntaxError: f-string: unmatched '['\n[exit code 1]"
        ));
        let (mut coach, notes) = after_failure(true, task, &run, &refused, dir.path());
        assert!(notes.iter().all(|n| !n.contains("f-string")), "{notes:?}");
        let (again, lead) = coach
            .rerun(std::slice::from_ref(&run), std::slice::from_ref(&refused))
            .expect("the block runs again with the quotes changed");
        let fixed = r#"f.write(f"{row['name']}: {row['score']}\n")"#;
        assert_eq!(again.code, code.replace(line, fixed));
        assert_eq!(
            lead,
            format!(
                "[oi: that error has a known fix, so oi ran your code again with `{line}` written as `{fixed}`:]"
            )
        );
        coach.after_batch(false);
        // The next block with the same habit is changed too, though the
        // kind of hint was given.
        let total = "print(f\"Total: {sum(r[\"score\"] for r in rows)}\")";
        let next = python_run(&format!("{total}\n"));
        let again_refused = python_report(&format!(
            "  File \"<cell-2>\", line 1\n    {total}\n                                       ^\nSyntaxError: f-string: unmatched '('\n[exit code 1]"
        ));
        let (again, _) = fails_again(&mut coach, &next, &again_refused, dir.path())
            .expect("again for the second f-string");
        assert_eq!(
            again.code,
            "print(f\"Total: {sum(r['score'] for r in rows)}\")\n"
        );
        coach.after_batch(false);
        // A number joined to text.
        let joined =
            python_run("total = sum(r['score'] for r in rows)\nprint('Total: ' + total)\n");
        let type_error = python_report(
            "Traceback (most recent call last):\n  File \"<cell-3>\", line 2, in <module>\n    print('Total: ' + total)\n          ~~~~~~~~~~^~~~~~~\nTypeError: can only concatenate str (not \"int\") to str\n[exit code 1]",
        );
        let (again, _) = fails_again(&mut coach, &joined, &type_error, dir.path())
            .expect("again with the number converted");
        assert_eq!(
            again.code,
            "total = sum(r['score'] for r in rows)\nprint('Total: ' + str(total))\n"
        );
        // Three re-runs were made: a fourth is not.
        coach.after_batch(false);
        assert_eq!(fails_again(&mut coach, &run, &refused, dir.path()), None);
        // Not for other models.
        let (mut big, _) = after_failure(false, task, &run, &refused, dir.path());
        assert_eq!(big.rerun(&[run], &[refused]), None);
    }

    #[test]
    fn an_import_goes_first_only_where_the_code_uses_the_name_without_it() {
        assert_eq!(
            with_import("x = csv.reader(f)\n", "csv", "import csv").as_deref(),
            Some("import csv\nx = csv.reader(f)\n")
        );
        let counter = "from collections import Counter";
        assert_eq!(
            with_import("c = Counter(words)\n", "Counter", counter).as_deref(),
            Some("from collections import Counter\nc = Counter(words)\n")
        );
        // The module where the code uses it so (the import
        // `error_hint::missing_import` chose).
        assert_eq!(
            with_import(
                "d = datetime.datetime.now()\n",
                "datetime",
                "import datetime"
            )
            .as_deref(),
            Some("import datetime\nd = datetime.datetime.now()\n")
        );
        // Not used by this code, already imported, or a `__future__`
        // import that must stay first.
        assert_eq!(with_import("print(1)\n", "csv", "import csv"), None);
        assert_eq!(
            with_import("import csv\nx = csv.reader(f)\n", "csv", "import csv"),
            None
        );
        assert_eq!(
            with_import(
                "from __future__ import annotations\nx = csv.reader(f)\n",
                "csv",
                "import csv"
            ),
            None
        );
    }

    #[test]
    fn the_notes_on_a_run_again_after_an_install_are_about_its_code() {
        let dir = tempfile::tempdir().unwrap();
        let mut coach = Coach::new(true, "Average the latencies of api.log.", dir.path());
        let run = |language: &str, code: &str| {
            Some(ProposedRun {
                call_id: None,
                language: Some(language.to_owned()),
                code: code.to_owned(),
            })
        };
        let report = |language: &str, text: &str| Report {
            call_id: None,
            language: language.to_owned(),
            text: text.to_owned(),
            images: Vec::new(),
        };
        let code = "import pandas as pd\nrows = []\nfor line in open('api.log'):\n    if line.startswith('x'):\n        rows.append({'ms': 1})\ndf = pd.DataFrame(rows)\nprint(df['ms'].mean())";
        let python = [run("python", code)];
        coach.saw_runs(&python);
        coach.rerun(
            &python,
            &[report(
                "python",
                "ModuleNotFoundError: No module named 'pandas'",
            )],
        );
        let install = [run("shell", "pip install pandas")];
        coach.saw_runs(&install);
        assert_eq!(coach.python, "");
        let (again, _) = coach
            .rerun(
                &install,
                &[report("shell", "Successfully installed pandas-3.1")],
            )
            .unwrap();
        assert_eq!(again.code, code);
        let failed = "Traceback (most recent call last):\n  File \"<cell-2>\", line 7, in <module>\n    print(df['ms'].mean())\n  [2 frames inside libraries]\nKeyError: 'ms'\n";
        coach.ran_again(&again, &report("python", failed));
        let notes = coach.after_runs(&[report("python", failed)], dir.path());
        assert!(
            notes
                .iter()
                .any(|n| n
                    .contains("`rows` stayed empty: no line passed `if line.startswith('x'):`")),
            "{notes:?}"
        );
    }

    #[test]
    fn the_run_that_lacked_a_package_runs_again_when_it_is_installed() {
        let dir = tempfile::tempdir().unwrap();
        let mut coach = Coach::new(true, "Plot data.csv to chart.png", dir.path());
        let run = |code: &str| {
            Some(ProposedRun {
                call_id: Some("call_1".to_owned()),
                language: Some("python".to_owned()),
                code: code.to_owned(),
            })
        };
        let report = |text: &str| Report {
            call_id: None,
            language: "python".to_owned(),
            text: text.to_owned(),
            images: Vec::new(),
        };
        let plot = run("import matplotlib");
        assert_eq!(
            coach.rerun_after_install(
                std::slice::from_ref(&plot),
                &[report("ModuleNotFoundError: No module named 'matplotlib'")]
            ),
            None
        );
        // A failed install re-runs nothing.
        let install = run("%pip install matplotlib");
        assert_eq!(
            coach.rerun_after_install(
                std::slice::from_ref(&install),
                &[report("ERROR: No matching distribution")]
            ),
            None
        );
        let again = coach
            .rerun_after_install(
                std::slice::from_ref(&install),
                &[report("Successfully installed matplotlib-3.9")],
            )
            .unwrap();
        assert_eq!(again.code, "import matplotlib");
        // Re-run without the call it once answered.
        assert_eq!(again.call_id, None);
        // Run again, it lacks the next package: after that one is
        // installed, it runs again too.
        coach.ran_again(
            &again,
            &report("ModuleNotFoundError: No module named 'pandas'"),
        );
        let pandas = run("!pip install pandas");
        let third = coach
            .rerun_after_install(
                std::slice::from_ref(&pandas),
                &[report("Successfully installed pandas-3.1")],
            )
            .unwrap();
        assert_eq!(third.code, "import matplotlib");
        // Three times a task at most.
        for _ in 0..3 {
            coach.rerun_after_install(
                std::slice::from_ref(&plot),
                &[report("ModuleNotFoundError: No module named 'x'")],
            );
            coach.rerun_after_install(
                std::slice::from_ref(&install),
                &[report("Successfully installed x")],
            );
        }
        coach.rerun_after_install(
            &[plot],
            &[report("ModuleNotFoundError: No module named 'x'")],
        );
        assert_eq!(
            coach.rerun_after_install(&[install], &[report("Successfully installed x")]),
            None
        );
        // Not for other models.
        let mut big = Coach::new(false, "Plot", dir.path());
        big.rerun_after_install(&[run("import x")], &[report("No module named 'x'")]);
        assert_eq!(
            big.rerun_after_install(
                &[run("pip install x")],
                &[report("Successfully installed x")]
            ),
            None
        );
    }

    #[test]
    fn a_note_repeated_back_silences_the_coach() {
        let dir = tempfile::tempdir().unwrap();
        let mut coach = Coach::new(true, "Write hello to out.txt", dir.path());
        coach.heard("[oi: you have not run any code for this task]");
        assert_eq!(
            coach.note_before_ending("Done.", HarnessKind::Native, dir.path(), None),
            None
        );
    }

    #[test]
    fn the_files_a_run_made_are_shown_once_until_they_change() {
        let dir = tempfile::tempdir().unwrap();
        let mut coach = Coach::new(true, "Write hello to out.txt", dir.path());
        let ran = [Report {
            call_id: None,
            language: "python".to_owned(),
            text: String::new(),
            images: Vec::new(),
        }];
        assert!(coach.after_runs(&ran, dir.path()).is_empty());
        fs_err::write(dir.path().join("out.txt"), "hello\n").unwrap();
        let shown = coach.after_runs(&ran, dir.path());
        assert_eq!(shown.len(), 1);
        assert!(
            shown[0].starts_with("[oi: `out.txt` now has 1 line:\nhello"),
            "{shown:?}"
        );
        assert!(coach.after_runs(&ran, dir.path()).is_empty());
        // Code ran, so an answer now ends the task.
        assert_eq!(
            coach.note_before_ending("Done.", HarnessKind::Native, dir.path(), None),
            None
        );
    }

    #[test]
    fn text_joined_letter_by_letter_is_found() {
        assert_eq!(
            spelled_out("A L S M\nB O J O\nC A D E V R\n"),
            Some("A L S M")
        );
        assert_eq!(spelled_out("Alice Smith\nBob Jones\n"), None);
        // One odd line among words, or short lines: not it.
        assert_eq!(spelled_out("Alice Smith\nBob Jones\nx y z\n"), None);
        assert_eq!(spelled_out("a b\nc d\n"), None);
        assert_eq!(spelled_out(""), None);
    }

    #[test]
    fn a_configuration_changed_by_adding_a_line_is_named_before_ending() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let ini = cwd.join("settings.ini");
        fs_err::write(&ini, "[database]\n# main\nport = 5432\n").unwrap();
        let mut coach = Coach::new(true, "In settings.ini, set the database port to 5433.", cwd);
        let ran = [Report {
            call_id: None,
            language: "python".to_owned(),
            text: String::new(),
            images: Vec::new(),
        }];
        fs_err::write(&ini, "[database]\nport = 5433\n# main\nport = 5432\n").unwrap();
        coach.after_runs(&ran, cwd);
        let note = coach
            .note_before_ending("Done.", HarnessKind::Markdown, cwd, None)
            .unwrap();
        assert!(
            note.contains("`settings.ini` sets `port` twice in `[database]`"),
            "{note}"
        );
    }

    #[test]
    fn a_file_the_task_asks_to_change_left_as_it_was_is_named_before_ending() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let ini = cwd.join("settings.ini");
        fs_err::write(&ini, "[database]\nport = 5432\n").unwrap();
        let ran = [Report {
            call_id: None,
            language: "python".to_owned(),
            text: String::new(),
            images: Vec::new(),
        }];
        let task = "In settings.ini, set the database port to 5433.";
        // The run's `.replace` matched nothing.
        let mut coach = Coach::new(true, task, cwd);
        coach.after_runs(&ran, cwd);
        let note = coach
            .note_before_ending("Done.", HarnessKind::Markdown, cwd, None)
            .unwrap();
        assert!(
            note.contains(
                "no run has changed `settings.ini` yet, which the task asks you to change"
            ),
            "{note}"
        );
        // Changed: nothing to say.
        let mut coach = Coach::new(true, task, cwd);
        fs_err::write(&ini, "[database]\nport = 5433\n").unwrap();
        coach.after_runs(&ran, cwd);
        assert_eq!(
            coach.note_before_ending("Done.", HarnessKind::Markdown, cwd, None),
            None
        );
        // A task that reads the file, or sums it, or makes another: not asked.
        for task in [
            "Count the sections of settings.ini.",
            "Find the set of keys in settings.ini and print it.",
            "Add the ports in settings.ini and print the sum.",
            "Copy settings.ini to backup.ini with the port set to 5433.",
            "Why does settings.ini set the port? Explain, do not change it.",
        ] {
            let mut coach = Coach::new(true, task, cwd);
            coach.after_runs(&ran, cwd);
            let note = coach.note_before_ending("Done.", HarnessKind::Markdown, cwd, None);
            assert!(
                note.as_deref()
                    .is_none_or(|n| !n.contains("no run has changed")),
                "{task}: {note:?}"
            );
        }
        assert!(Coach::new(false, task, cwd).edits.is_empty());
        // A file the task says to keep is not one to change.
        assert!(says_to_keep(
            "Clean up: delete the temporary files in the cache folder. Do not touch anything else; important.db must stay.",
            "important.db"
        ));
        for (task, name) in [
            (
                "Leave notes.txt untouched and delete the rest.",
                "notes.txt",
            ),
            ("Do not touch config.ini.", "config.ini"),
            ("Clean the folder but keep data.csv.", "data.csv"),
        ] {
            assert!(says_to_keep(task, name), "{task}");
        }
        for (task, name) in [
            (
                "In settings.ini, set the database port to 5433. Leave everything else, comments included, as it is.",
                "settings.ini",
            ),
            (
                "In a.ini set the port to 1 and leave the rest as it is.",
                "a.ini",
            ),
            ("Fix script.py so that it keeps the header.", "script.py"),
        ] {
            assert!(!says_to_keep(task, name), "{task}");
        }
        fs_err::write(cwd.join("important.db"), "data").unwrap();
        let kept = Coach::new(
            true,
            "Clean up: delete the temporary files in the cache folder. Do not touch anything else; important.db must stay.",
            cwd,
        );
        assert!(kept.edits.is_empty(), "{:?}", kept.edits);
        for task in [
            "Fix wordfreq.py so that it counts words.",
            "Read the file, then remove the blank lines.",
            "In settings.ini, set the port to 1.",
            "Please update the README.",
        ] {
            assert!(asks_for_change(task), "{task}");
        }
        for task in [
            "Count the data set rows.",
            "Print the fix date from notes.txt.",
        ] {
            assert!(!asks_for_change(task), "{task}");
        }
    }

    #[test]
    fn a_pattern_that_finds_nothing_in_the_input_is_named_once_when_nothing_was_found() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        fs_err::write(
            cwd.join("access.log"),
            "10.0.0.2 - - [02/Nov/2026:10:01:00 +0000] \"GET /index.html HTTP/1.1\" 500 5405\n",
        )
        .unwrap();
        let task = "How many requests in access.log failed with status 500? Write the number to errors.txt.";
        let wrong = ProposedRun {
            call_id: None,
            language: Some("python".to_owned()),
            code: "import re\nn = sum(1 for l in open('access.log') if re.search(r'\"HTTP/1.1\" (\\d{3})', l))\nopen('errors.txt', 'w').write(str(n))\n".to_owned(),
        };
        let mut coach = Coach::new(true, task, cwd);
        coach.saw_runs(&[Some(wrong.clone())]);
        fs_err::write(cwd.join("errors.txt"), "0").unwrap();
        let notes = coach.after_runs(&[python_report("")], cwd);
        assert!(
            notes[0].starts_with("[oi: the pattern `\"HTTP/1.1\" (\\d{3})` in your code matches nothing in `access.log`, so it found nothing. A line of `access.log` reads:\n10.0.0.2 - - [02/Nov/2026"),
            "{notes:?}"
        );
        // The pattern one stray character away that does match.
        assert!(
            notes[0].contains("Without one `\"`, `HTTP/1.1\" (\\d{3})` does match: `n = sum(1 for l in open('access.log') if re.search(r'HTTP/1.1\" (\\d{3})', l))`.]"),
            "{notes:?}"
        );
        // Once a task.
        coach.saw_runs(&[Some(wrong.clone())]);
        fs_err::write(cwd.join("errors.txt"), "0\n").unwrap();
        let notes = coach.after_runs(&[python_report("")], cwd);
        assert!(
            notes.iter().all(|n| !n.contains("the pattern")),
            "{notes:?}"
        );
        // A pattern that matches, or a result that found something: silent.
        fs_err::remove_file(cwd.join("errors.txt")).unwrap();
        let mut coach = Coach::new(true, task, cwd);
        let right = ProposedRun {
            code: wrong.code.replace("\"HTTP/1.1\" (", "HTTP/1.1\" ("),
            ..wrong.clone()
        };
        coach.saw_runs(&[Some(right)]);
        let notes = coach.after_runs(&[python_report("0\n")], cwd);
        assert!(
            notes.iter().all(|n| !n.contains("the pattern")),
            "{notes:?}"
        );
        let mut coach = Coach::new(true, task, cwd);
        coach.saw_runs(&[Some(wrong)]);
        let notes = coach.after_runs(&[python_report("3\n")], cwd);
        assert!(
            notes.iter().all(|n| !n.contains("the pattern")),
            "{notes:?}"
        );
    }

    #[test]
    fn a_key_set_twice_in_a_section_is_found() {
        let added = "; app\n[server]\nport = 8000\n\n[database]\nport = 5433\n# main\nhost = db\nport = 5432\n";
        assert_eq!(
            twice_set_key(added),
            Some(("[database]".to_owned(), "port".to_owned()))
        );
        // One per section, comments aside: fine.
        let changed = "; app\n[server]\nport = 8000\n[database]\n# port = 1\nport = 5433\n";
        assert_eq!(twice_set_key(changed), None);
    }
}
