//! When the user is asked before a run, and waiting for the answer: one
//! rule for code, screen actions, MCP calls and file edits alike.

use oi_protocol::{ApprovalPolicy, Event, ReviewDecision, RunId, SkipReason};
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

/// What became of a step that is not code (a screen action, an MCP call,
/// a file edit) at the approval gate.
pub(super) enum Gate {
    /// Go ahead; with the user's edit of what was shown, if they made one,
    /// and whether a person was asked.
    Go { edited: Option<String>, asked: bool },
    /// Not done: an earlier step of the reply was not approved (why).
    AfterRefusal(SkipReason),
    /// Not done, and nothing after it in this reply: declined, or nobody
    /// could be asked.
    Refused(SkipReason),
    /// The task was interrupted while the user was being asked.
    Interrupted,
}

impl Session {
    /// Shows a proposed step as `language` and `code`; returns its id.
    pub(super) fn propose(&mut self, language: &str, code: &str) -> RunId {
        let id = RunId(self.next_run_id);
        self.next_run_id += 1;
        self.emit(Event::CodeProposed {
            id,
            language: language.to_owned(),
            code: code.to_owned(),
        });
        id
    }

    /// Step `id` is not done, for `reason`, and neither is the rest of the
    /// reply.
    pub(super) fn skip(
        &mut self,
        id: RunId,
        reason: SkipReason,
        skip_rest: &mut Option<SkipReason>,
    ) {
        self.emit(Event::RunSkipped {
            id,
            reason: reason.clone(),
        });
        *skip_rest = Some(reason);
    }

    /// The approval gate of step `id`: not after a refusal earlier in the
    /// reply; asked about when the policy says so (`risks` make it risky;
    /// risky and not asked is said in a warning). A refusal is reported
    /// (`RunSkipped`) and holds the rest of the reply.
    pub(super) async fn gate(
        &mut self,
        id: RunId,
        language: &str,
        shown: &str,
        risks: Vec<String>,
        skip_rest: &mut Option<SkipReason>,
        cancel: &CancellationToken,
    ) -> Gate {
        if let Some(reason) = skip_rest.clone() {
            self.emit(Event::RunSkipped {
                id,
                reason: reason.clone(),
            });
            return Gate::AfterRefusal(reason);
        }
        if !must_ask(self.config.approval, self.approve_all, !risks.is_empty()) {
            if !risks.is_empty() {
                self.emit(Event::Warning {
                    message: format!(
                        "running risky code without asking (approval = \"never\"): {}",
                        risks.join("; ")
                    ),
                });
            }
            return Gate::Go {
                edited: None,
                asked: false,
            };
        }
        let Some(decision) = self.ask(id, language, shown, risks, cancel).await else {
            return Gate::Interrupted;
        };
        let reason = match decision {
            ReviewDecision::Approve | ReviewDecision::ApproveForSession => {
                return Gate::Go {
                    edited: None,
                    asked: true,
                };
            }
            ReviewDecision::Edit { code } => {
                return Gate::Go {
                    edited: Some(code),
                    asked: true,
                };
            }
            ReviewDecision::Decline => SkipReason::Declined,
            ReviewDecision::NoApprover => SkipReason::NoApprover,
        };
        self.skip(id, reason.clone(), skip_rest);
        Gate::Refused(reason)
    }

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
