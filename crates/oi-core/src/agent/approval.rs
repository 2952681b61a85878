//! When the user is asked before a run, and waiting for the answer: one
//! rule for code and screen actions alike.

use oi_protocol::{ApprovalPolicy, Event, ReviewDecision, RunId};
use tokio_util::sync::CancellationToken;

use super::Session;

/// Whether a proposed run waits for the user's decision. Under `ask`,
/// every run does until the user approves the rest of the session, and
/// risky ones always; under `auto`, only risky ones; under `never`, none
/// (the front end opened the session for that on purpose). Screen actions
/// are never risky.
pub(super) fn must_ask(policy: ApprovalPolicy, approved_for_session: bool, risky: bool) -> bool {
    match policy {
        ApprovalPolicy::Ask => !approved_for_session || risky,
        ApprovalPolicy::Auto => risky,
        ApprovalPolicy::Never => false,
    }
}

impl Session {
    /// Asks the user about run `id` and waits for the answer; `None` when
    /// the task was interrupted first. An approval for the rest of the
    /// session is remembered.
    pub(super) async fn ask(
        &mut self,
        id: RunId,
        language: &str,
        code: &str,
        risks: Vec<String>,
        cancel: &CancellationToken,
    ) -> Option<ReviewDecision> {
        self.emit(Event::ApprovalRequested {
            id,
            language: language.to_owned(),
            code: code.to_owned(),
            risks,
        });
        let decision = self.wait_for_decision(id, cancel).await?;
        if decision == ReviewDecision::ApproveForSession {
            self.approve_all = true;
        }
        Some(decision)
    }

    async fn wait_for_decision(
        &mut self,
        id: RunId,
        cancel: &CancellationToken,
    ) -> Option<ReviewDecision> {
        loop {
            tokio::select! {
                answer = self.approvals.recv() => match answer {
                    Some((answered, decision)) if answered == id => return Some(decision),
                    // An answer to an earlier, already settled request.
                    Some(_) => continue,
                    None => return None,
                },
                () = cancel.cancelled() => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ApprovalPolicy::{Ask, Auto, Never};

    #[test]
    fn who_is_asked_when() {
        // (policy, approved for the session, risky) → asked
        let table = [
            (Ask, false, false, true),
            (Ask, false, true, true),
            (Ask, true, false, false),
            (Ask, true, true, true),
            (Auto, false, false, false),
            (Auto, false, true, true),
            (Auto, true, false, false),
            (Auto, true, true, true),
            (Never, false, false, false),
            (Never, false, true, false),
            (Never, true, false, false),
            (Never, true, true, false),
        ];
        for (policy, approved, risky, asked) in table {
            assert_eq!(
                must_ask(policy, approved, risky),
                asked,
                "{policy}, approved for the session: {approved}, risky: {risky}"
            );
        }
    }
}
