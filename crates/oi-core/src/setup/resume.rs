//! Finding the recorded session to take up again.

use std::path::Path;

use oi_config::Loaded;

use super::{Given, Resume, SetupError};
use crate::transcript;

/// The session `resume` names, read back: an id (a unique prefix is
/// enough), or the latest of the workspace `cwd`.
pub(super) fn find(
    loaded: &Loaded,
    resume: Option<&Given<Resume>>,
    cwd: &Path,
) -> Result<Option<transcript::Loaded>, SetupError> {
    let Some(resume) = resume else {
        return Ok(None);
    };
    let dir = loaded.home.join("sessions");
    match &resume.value {
        Resume::Id(id) => {
            let exact = dir.join(id).join(transcript::FILE_NAME);
            if exact.is_file() {
                return Ok(Some(transcript::read(&exact)?));
            }
            let mut matching: Vec<transcript::Loaded> = transcript::list(&dir)
                .into_iter()
                .filter(|l| l.header.id.starts_with(id.as_str()))
                .collect();
            match matching.len() {
                0 => Err(SetupError::NoSuchSession {
                    from: resume.from.clone(),
                    id: id.clone(),
                }),
                1 => Ok(matching.pop()),
                count => Err(SetupError::AmbiguousSession {
                    from: resume.from.clone(),
                    id: id.clone(),
                    count,
                }),
            }
        }
        // Read by `setup` itself: the session is a new one.
        Resume::File(_) => Ok(None),
        Resume::Latest => {
            let here = cwd.display().to_string();
            match transcript::list(&dir)
                .into_iter()
                .find(|l| l.header.cwd == here)
            {
                Some(found) => Ok(Some(found)),
                None => Err(SetupError::NothingToContinue {
                    cwd: cwd.to_path_buf(),
                }),
            }
        }
    }
}

/// `Resumed session ID (N messages, begun with “…”; last active …). …`
pub(super) fn describe(resumed: &transcript::Loaded) -> String {
    let first = resumed
        .first_prompt
        .as_deref()
        .map(|p| format!(", begun with “{}”", p.lines().next().unwrap_or(p)))
        .unwrap_or_default();
    format!(
        "Resumed session {} ({} messages{first}; last active {}). The kernels start afresh.",
        resumed.header.id,
        resumed.messages.len(),
        resumed.last_active.replace('T', " ")
    )
}
