//! Asking the user whether proposed code may run: y / n / a / e.

use std::io::{self, Write};

use oi_protocol::ReviewDecision;

use crate::input::LineReader;
use crate::render::HumanRenderer;

/// Asks until the user gives a valid answer. End of input means no.
pub async fn ask<W: Write>(
    out: &mut HumanRenderer<W>,
    input: &mut LineReader,
    language: &str,
    code: &str,
) -> io::Result<ReviewDecision> {
    // Screen actions (OS mode) and file edits are done as shown or not at
    // all.
    let (question, editable) = oi_protocol::approval_question(language);
    loop {
        if !editable {
            out.raw(&format!(
                "{question} [y]es, [n]o, [a]lways (this session): "
            ))?;
        } else {
            out.raw(&format!(
                "{question} [y]es, [n]o, [a]lways (this session), [e]dit: "
            ))?;
        }
        let Some(answer) = input.next_line().await? else {
            out.raw("\n")?;
            return Ok(ReviewDecision::Decline);
        };
        match answer.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => return Ok(ReviewDecision::Approve),
            "n" | "no" => return Ok(ReviewDecision::Decline),
            "a" | "all" | "always" => return Ok(ReviewDecision::ApproveForSession),
            "e" | "edit" if !editable => {
                out.raw("This cannot be edited; answer y, n or a.\n")?;
            }
            "e" | "edit" => match edit(language, code).await {
                Ok(edited) if edited.trim().is_empty() => {
                    out.raw("The edited code is empty, so it will not run.\n")?;
                    return Ok(ReviewDecision::Decline);
                }
                Ok(edited) if edited == code => {
                    out.raw("The code was not changed.\n")?;
                }
                Ok(edited) => {
                    out.raw(&format!("Edited code:\n{edited}\n"))?;
                    return Ok(ReviewDecision::Edit { code: edited });
                }
                Err(e) => out.error(&e.to_string(), Some("set `$VISUAL` or `$EDITOR` to an editor that waits until you close the file, e.g. `nano` or `code --wait`"))?,
            },
            _ => out.raw("Please answer y, n, a or e.\n")?,
        }
    }
}

/// Opens `code` in `$VISUAL` / `$EDITOR` (default `vi`) and returns the
/// edited text.
pub(crate) async fn edit(language: &str, code: &str) -> io::Result<String> {
    let editor = std::env::var("VISUAL")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .or_else(|| {
            std::env::var("EDITOR")
                .ok()
                .filter(|v| !v.trim().is_empty())
        })
        .unwrap_or_else(|| "vi".to_owned());
    let words = shlex::split(&editor)
        .filter(|w| !w.is_empty())
        .ok_or_else(|| io::Error::other(format!("cannot read the editor command `{editor}`")))?;
    let suffix = match language {
        "python" => ".py",
        "shell" => ".sh",
        _ => ".txt",
    };
    let file = tempfile::Builder::new()
        .prefix("oi-edit-")
        .suffix(suffix)
        .tempfile()?;
    fs_err::write(file.path(), code)?;
    let path = file.path().to_owned();
    let status = tokio::task::spawn_blocking(move || {
        std::process::Command::new(&words[0])
            .args(&words[1..])
            .arg(&path)
            .status()
    })
    .await
    .map_err(io::Error::other)?
    .map_err(|e| io::Error::new(e.kind(), format!("cannot start the editor `{editor}`: {e}")))?;
    if !status.success() {
        return Err(io::Error::other(format!(
            "the editor `{editor}` failed ({status}); the code was not changed"
        )));
    }
    let edited = fs_err::read_to_string(file.path())?;
    Ok(edited
        .strip_suffix('\n')
        .map(str::to_owned)
        .unwrap_or(edited))
}
