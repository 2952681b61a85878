//! The interactive terminal's parts: Markdown and highlighted code laid out
//! for the terminal's width, a view of the agent's events with a live
//! region, the line editor, and the dialogs (approval, model picker).

pub mod highlight;
pub mod markdown;
pub mod text;
pub mod view;

pub use view::{ImageProtocol, Mode, View};
