//! The slash commands of the interactive session, defined once: their
//! names, aliases and help (for `/help`, Tab completion and "did you
//! mean"), and the enum the session matches on, so a command cannot be
//! listed without being handled or handled without being listed.

/// A slash command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlashCommand {
    Help,
    Model,
    Harness,
    Auto,
    Undo,
    Reset,
    Compact,
    Tokens,
    Cost,
    Save,
    Load,
    Export,
    Verbose,
    DebugConfig,
    Exit,
}

impl SlashCommand {
    /// Every command, in the order `/help` lists them.
    pub const ALL: &'static [Self] = &[
        Self::Help,
        Self::Model,
        Self::Harness,
        Self::Auto,
        Self::Undo,
        Self::Reset,
        Self::Compact,
        Self::Tokens,
        Self::Cost,
        Self::Save,
        Self::Load,
        Self::Export,
        Self::Verbose,
        Self::DebugConfig,
        Self::Exit,
    ];

    /// The command as typed: `/help`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Help => "/help",
            Self::Model => "/model",
            Self::Harness => "/harness",
            Self::Auto => "/auto",
            Self::Undo => "/undo",
            Self::Reset => "/reset",
            Self::Compact => "/compact",
            Self::Tokens => "/tokens",
            Self::Cost => "/cost",
            Self::Save => "/save",
            Self::Load => "/load",
            Self::Export => "/export",
            Self::Verbose => "/verbose",
            Self::DebugConfig => "/debug-config",
            Self::Exit => "/exit",
        }
    }

    /// Other names it answers to: Open Interpreter's magic commands
    /// (`%reset` …) among them.
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            Self::Help => &["%help"],
            Self::Auto => &["%auto_run"],
            Self::Undo => &["%undo"],
            Self::Reset => &["%reset"],
            Self::Tokens => &["%tokens"],
            Self::Save => &["%save_message"],
            Self::Load => &["%load_message"],
            Self::Export => &["%markdown", "%jupyter"],
            Self::Verbose => &["%verbose"],
            Self::DebugConfig => &["%info"],
            Self::Exit => &["/quit", "%exit"],
            _ => &[],
        }
    }

    /// What it does, in one line.
    pub fn help(self) -> &'static str {
        match self {
            Self::Help => "this help",
            Self::Model => "pick a model from the provider's list (or /model NAME)",
            Self::Harness => {
                "the tools the model gets: /harness native, claude-code, codex or markdown"
            }
            Self::Auto => "turn auto-run on or off (risky code always asks)",
            Self::Undo => "put back the files the last run changed, and drop that exchange",
            Self::Reset => "start a new conversation (kernels restart)",
            Self::Compact => {
                "make the conversation smaller: old outputs cut, earlier turns summarized"
            }
            Self::Tokens => "context used and what the next request would cost",
            Self::Cost => "tokens and cost of this session",
            Self::Save => "save the conversation: /save [NAME]",
            Self::Load => {
                "load a saved conversation: /load [NAME], or a FILE Open Interpreter saved"
            }
            Self::Export => {
                "write the session for people: /export markdown|jupyter [FILE] (%markdown, %jupyter)"
            }
            Self::Verbose => "show each request as sent: /verbose [on|off]",
            Self::DebugConfig => "the effective configuration and where each value came from",
            Self::Exit => "leave (also Ctrl-D, or Ctrl-C twice)",
        }
    }

    /// The command `name` (or an alias) names.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|c| c.name() == name || c.aliases().contains(&name))
    }

    /// The command closest to a mistyped `name`, if any is close.
    pub fn suggest(name: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .map(|c| (strsim::damerau_levenshtein(name, c.name()), *c))
            .filter(|(d, _)| *d <= 3)
            .min_by_key(|(d, _)| *d)
            .map(|(_, c)| c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_reads_back_by_its_name_and_aliases() {
        for command in SlashCommand::ALL {
            assert_eq!(SlashCommand::parse(command.name()), Some(*command));
            for alias in command.aliases() {
                assert_eq!(SlashCommand::parse(alias), Some(*command));
            }
            assert!(!command.help().is_empty());
        }
        assert_eq!(SlashCommand::parse("/quit"), Some(SlashCommand::Exit));
        assert_eq!(SlashCommand::parse("%reset"), Some(SlashCommand::Reset));
        assert_eq!(SlashCommand::parse("%jupyter"), Some(SlashCommand::Export));
        assert_eq!(SlashCommand::parse("/nope"), None);
    }

    #[test]
    fn mistyped_commands_get_a_suggestion() {
        assert_eq!(SlashCommand::suggest("/hlep"), Some(SlashCommand::Help));
        assert_eq!(SlashCommand::suggest("/undoo"), Some(SlashCommand::Undo));
        assert_eq!(SlashCommand::suggest("/frobnicate-everything"), None);
    }
}
