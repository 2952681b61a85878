//! The conversation's content: the user's message with its images, and
//! the bound on images kept in the history.

use std::path::Path;

use base64::Engine as _;
use oi_protocol::{ContentPart, Event, Message};

use super::Session;

/// Images kept in the conversation: older ones are replaced by a note, so
/// a session that plots a lot does not pay for every plot on every request.
pub(super) const MAX_IMAGES_IN_HISTORY: usize = 3;
/// Images of one run sent to the model (the last ones made).
pub(super) const MAX_IMAGES_PER_RUN: usize = 3;
/// Larger image files are not sent (providers refuse them).
const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;

impl Session {
    /// The user's message: their words after any pending notes, and the
    /// images they attached (as images for a model that reads them).
    pub(super) fn user_message(&mut self, text: String, images: &[String]) -> Message {
        let mut text = if self.pending_notes.is_empty() {
            text
        } else {
            let notes = std::mem::take(&mut self.pending_notes).join("\n");
            format!("{notes}\n\n{text}")
        };
        let mut parts = Vec::new();
        for image in images {
            let path = Path::new(image);
            if !self.config.vision {
                text.push_str(&format!(
                    "\n[The user attached the image {image}, but this model cannot see images.]"
                ));
                continue;
            }
            match image_part(path, media_type_of(path)) {
                Ok(part) => parts.push(part),
                Err(problem) => {
                    text.push_str(&format!(
                        "\n[The image {image} could not be attached: {problem}]"
                    ));
                    self.emit(Event::Warning {
                        message: format!("{image} was not attached: {problem}"),
                    });
                }
            }
        }
        let mut content = vec![ContentPart::text(text)];
        content.extend(parts);
        Message::User { content }
    }
}

/// The media type of an image file, from its extension.
pub(super) fn media_type_of(path: &Path) -> &'static str {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        _ => "image/png",
    }
}

/// An image file as message content.
pub(super) fn image_part(path: &Path, media_type: &str) -> Result<ContentPart, String> {
    let size = fs_err::metadata(path).map_err(|e| e.to_string())?.len();
    if size > MAX_IMAGE_BYTES {
        return Err(format!(
            "it is {size} bytes, more than the {MAX_IMAGE_BYTES} a model accepts"
        ));
    }
    let bytes = fs_err::read(path).map_err(|e| e.to_string())?;
    Ok(ContentPart::Image {
        media_type: media_type.to_owned(),
        data: base64::engine::general_purpose::STANDARD.encode(bytes),
    })
}

/// Replaces all but the last `keep` images of the conversation with a note.
pub(super) fn bound_images(history: &mut [Message], keep: usize) {
    let mut seen = 0;
    for message in history.iter_mut().rev() {
        let (Message::User { content } | Message::Tool { content, .. }) = message else {
            continue;
        };
        for part in content.iter_mut().rev() {
            if matches!(part, ContentPart::Image { .. }) {
                seen += 1;
                if seen > keep {
                    *part = ContentPart::text(
                        "[an image shown earlier was removed from the conversation to save tokens]",
                    );
                }
            }
        }
    }
}

/// The text of the task's message.
pub(super) fn text_of_task(history: &[Message], task: Option<usize>) -> String {
    match task.and_then(|t| history.get(t)) {
        Some(Message::User { content }) => content
            .iter()
            .filter_map(ContentPart::as_text)
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn image(n: u8) -> ContentPart {
        ContentPart::Image {
            media_type: "image/png".into(),
            data: format!("{n}"),
        }
    }

    #[test]
    fn only_the_last_images_stay_in_the_conversation() {
        let mut history = vec![
            Message::User {
                content: vec![ContentPart::text("plot"), image(1), image(2)],
            },
            Message::Tool {
                call_id: "c".into(),
                content: vec![ContentPart::text("out"), image(3), image(4)],
            },
        ];
        bound_images(&mut history, 3);
        let removed = ContentPart::text(
            "[an image shown earlier was removed from the conversation to save tokens]",
        );
        assert_eq!(
            history,
            vec![
                Message::User {
                    content: vec![ContentPart::text("plot"), removed, image(2)],
                },
                Message::Tool {
                    call_id: "c".into(),
                    content: vec![ContentPart::text("out"), image(3), image(4)],
                },
            ]
        );
    }

    #[test]
    fn image_files_become_base64_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.png");
        fs_err::write(&path, b"\x89PNG").unwrap();
        assert_eq!(
            image_part(&path, "image/png").unwrap(),
            ContentPart::Image {
                media_type: "image/png".into(),
                data: "iVBORw==".into(),
            }
        );
        assert!(
            image_part(&dir.path().join("missing.png"), "image/png")
                .unwrap_err()
                .contains("missing.png")
        );
    }
}
