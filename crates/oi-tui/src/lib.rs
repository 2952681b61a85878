//! The interactive terminal's parts: Markdown and highlighted code laid out
//! for the terminal's width, a view of the agent's events with a live
//! region, the line editor, the dialogs (approval, picker), and the thread
//! that does all reading from the terminal.

pub mod commands;
pub mod dialog;
pub mod editor;
pub mod filter;
pub mod highlight;
pub mod input;
pub mod markdown;
pub mod term;
pub mod text;
pub mod view;

pub use view::{ImageProtocol, Mode, View};
