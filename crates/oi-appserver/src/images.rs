//! A turn's input as the agent takes it: the words, and image files.
//! Images come as files on this machine (`localImage`) or as `data:` URLs,
//! which are written to files; other URLs are refused (oi fetches nothing
//! on a client's behalf).

use crate::protocol::UserInput;
use crate::rpc::RpcError;

/// The text of `input` (its pieces joined by blank lines) and the paths of
/// its images.
pub(crate) fn read_input(input: &[UserInput]) -> Result<(String, Vec<String>), RpcError> {
    let mut text = Vec::new();
    let mut images = Vec::new();
    for (index, piece) in input.iter().enumerate() {
        let field = format!("input[{index}]");
        match piece {
            UserInput::Text { text: t } => text.push(t.clone()),
            UserInput::LocalImage { path } => {
                if !std::path::Path::new(path).is_file() {
                    return Err(RpcError::invalid_params(
                        &field,
                        format!("{field}: the image {path} is not a file on this machine"),
                    ));
                }
                images.push(path.clone());
            }
            UserInput::Image { url } => {
                let url = url.as_deref().unwrap_or("");
                images.push(
                    data_url_file(url)
                        .map_err(|e| RpcError::invalid_params(&field, format!("{field}: {e}")))?,
                );
            }
            UserInput::Skill { name, path } | UserInput::Mention { name, path } => {
                text.push(format!("({name}: {path})"));
            }
        }
    }
    let text = text.join("\n\n");
    if text.trim().is_empty() && images.is_empty() {
        return Err(RpcError::invalid_params(
            "input",
            "the input has no text and no image",
        ));
    }
    Ok((text, images))
}

/// Writes the image of a `data:` URL to a file of its own and names it.
fn data_url_file(url: &str) -> Result<String, String> {
    let Some(rest) = url.strip_prefix("data:") else {
        return Err(format!(
            "only `data:` image URLs are read (send a file as `localImage`), not {}",
            url.chars().take(40).collect::<String>()
        ));
    };
    let (meta, data) = rest
        .split_once(',')
        .ok_or("a `data:` URL needs a `,` before its data")?;
    let Some(media) = meta.strip_suffix(";base64") else {
        return Err(
            "the image's `data:` URL must be base64 (`data:image/png;base64,…`)".to_owned(),
        );
    };
    oi_core::attachments::save_base64_image(data, media)
        .map(|path| path.display().to_string())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_images_are_read_and_bad_images_named() {
        let (text, images) = read_input(&[
            UserInput::Text {
                text: "what is this?".into(),
            },
            UserInput::Image {
                url: Some("data:image/png;base64,iVBORw0KGgo=".into()),
            },
        ])
        .unwrap();
        assert_eq!(text, "what is this?");
        assert_eq!(fs_err::read(&images[0]).unwrap(), b"\x89PNG\r\n\x1a\n");
        let e = read_input(&[UserInput::Image {
            url: Some("https://example.com/x.png".into()),
        }])
        .unwrap_err();
        assert!(
            e.message.contains("input[0]: only `data:`"),
            "{}",
            e.message
        );
        let e = read_input(&[UserInput::LocalImage {
            path: "/nowhere/x.png".into(),
        }])
        .unwrap_err();
        assert!(e.message.contains("not a file"), "{}", e.message);
        let e = read_input(&[UserInput::Text { text: " ".into() }]).unwrap_err();
        assert!(e.message.contains("no text and no image"), "{}", e.message);
    }
}
