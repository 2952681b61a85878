//! Spellings people bring from Open Interpreter 0.4.3 and Codex.
//!
//! Open Interpreter's short flags are words (`-ci`, `-cw`, `-lsf`), which a
//! standard parser reads as a one-letter flag with a value (`-ci` as `-c
//! i`). Before parsing, those words are put in oi's spelling; the flags oi
//! has no counterpart for are answered with one line saying what oi offers
//! instead (docs/coming-from.md).

use std::ffi::OsString;

use crate::error::CliError;

/// Open Interpreter's word flags that oi has, in oi's spelling.
const REWRITES: &[(&str, &[&str])] = &[
    ("-ci", &["--custom-instructions"]),
    ("-cw", &["--context-window"]),
    ("-ab", &["--api-base"]),
    ("-ak", &["--api-key"]),
    ("-xo", &["--max-output"]),
    ("-vi", &["--vision"]),
    ("-os", &["--os"]),
    ("-lsf", &["--harness", "native"]),
    ("--llm_supports_functions", &["--harness", "native"]),
    ("--no-llm_supports_functions", &["--harness", "markdown"]),
    ("-dt", &["--disable_telemetry"]),
    ("--debug_mode", &["--verbose"]),
];

/// Flags of Open Interpreter (or Codex) that oi does not take, each with
/// what oi offers instead.
const INSTEAD: &[(&[&str], &str)] = &[
    (
        &["-lsv", "--llm_supports_vision", "--no-llm_supports_vision"],
        "oi knows which models read images; for another, set `[models.\"NAME\"] vision = true` in the configuration",
    ),
    (
        &["-av", "--api_version", "--api-version"],
        "set the version as a query parameter of the provider: `[model_providers.NAME] query_params = { api-version = \"…\" }`",
    ),
    (
        &["-fc", "--force_task_completion"],
        "oi keeps working until the model says the task is done; `--max-turns N` caps how long",
    ),
    (
        &["-sm", "--speak_messages"],
        "oi does not read messages aloud",
    ),
    (
        &["-safe", "--safe_mode"],
        "oi checks every piece of code for risk and runs it sandboxed; `-a untrusted` asks before every run",
    ),
    (
        &["-ml", "--multi_line"],
        "oi's prompt always takes several lines: Shift-Enter or Alt-Enter, or a \"\"\" block",
    ),
    (
        &["--reset_profile"],
        "oi's own profiles are built in and never change; delete or edit your file in ~/.openinterpreter/profiles",
    ),
    (
        &["--contribute_conversation"],
        "oi sends conversations nowhere but to your model",
    ),
    (
        &["--codestral", "--llama3"],
        "run the model on a local server and pick it: `interpreter --local --model NAME`",
    ),
    (
        &["-o"],
        "Open Interpreter's `-o` is `--offline` here (in `exec`, `-o` is Codex's `--output-last-message`)",
    ),
];

/// `args` (the program's name first) in oi's spelling, or the one-line
/// answer for a flag oi does not take. Nothing after `--` is touched.
pub fn rewrite(args: Vec<OsString>) -> Result<Vec<OsString>, CliError> {
    let mut out = Vec::with_capacity(args.len());
    let mut rest = false;
    for arg in args {
        if rest {
            out.push(arg);
            continue;
        }
        let Some(text) = arg.to_str() else {
            out.push(arg);
            continue;
        };
        if text == "--" {
            rest = true;
            out.push(arg);
            continue;
        }
        let (flag, value) = match text.split_once('=') {
            Some((flag, value)) if flag.starts_with('-') => (flag, Some(value)),
            _ => (text, None),
        };
        if let Some((_, with)) = REWRITES.iter().find(|(from, _)| *from == flag) {
            out.extend(with.iter().map(OsString::from));
            out.extend(value.map(OsString::from));
            continue;
        }
        if flag != "-o"
            && let Some(error) = instead(flag)
        {
            return Err(error);
        }
        out.push(arg);
    }
    Ok(out)
}

/// The answer for `flag` when oi does not take it.
pub fn instead(flag: &str) -> Option<CliError> {
    INSTEAD
        .iter()
        .find(|(flags, _)| flags.contains(&flag))
        .map(|(_, hint)| {
            CliError::usage(
                format!("`{flag}` is an Open Interpreter flag that oi does not take"),
                *hint,
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        std::iter::once("interpreter")
            .chain(list.iter().copied())
            .map(OsString::from)
            .collect()
    }

    #[test]
    fn word_flags_take_oi_spellings_and_keep_their_values() {
        assert_eq!(
            rewrite(args(&["-ci", "be brief", "-cw", "8000", "-lsf"])).ok(),
            Some(args(&[
                "--custom-instructions",
                "be brief",
                "--context-window",
                "8000",
                "--harness",
                "native"
            ]))
        );
        assert_eq!(
            rewrite(args(&["-cw=8000", "--no-llm_supports_functions"])).ok(),
            Some(args(&["--context-window", "8000", "--harness", "markdown"]))
        );
    }

    #[test]
    fn nothing_after_a_double_dash_is_touched() {
        assert_eq!(
            rewrite(args(&["sandbox", "--", "grep", "-ci", "x", "-safe"])).ok(),
            Some(args(&["sandbox", "--", "grep", "-ci", "x", "-safe"]))
        );
    }

    #[test]
    fn flags_oi_does_not_take_say_what_it_offers() {
        let Err(CliError::Usage { message, hint }) = rewrite(args(&["-safe", "ask"])) else {
            panic!("`-safe` should be answered");
        };
        assert_eq!(
            message,
            "`-safe` is an Open Interpreter flag that oi does not take"
        );
        assert!(hint.is_some_and(|h| h.contains("-a untrusted")));
        // `-o` is left to the parser: `exec -o FILE` is Codex's.
        assert!(rewrite(args(&["exec", "-o", "out.txt", "x"])).is_ok());
        assert!(instead("-o").is_some());
        assert!(instead("--model").is_none());
    }
}
