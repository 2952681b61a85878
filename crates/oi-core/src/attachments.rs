//! Images a front end receives as bytes (a `data:` URL, an inline image of
//! a protocol) saved as files, the form the agent takes images in. Every
//! front end that receives such images uses this, so they are read and
//! refused alike.

use std::io::Write;
use std::path::PathBuf;

use base64::Engine;

/// Why an image could not be saved.
#[derive(Debug, thiserror::Error)]
pub enum AttachmentError {
    #[error("{media_type:?} is not an image type oi sends to models (png, jpeg, gif, webp)")]
    UnknownType { media_type: String },
    #[error("the image's base64 does not decode: {problem}")]
    NotBase64 { problem: String },
    #[error("cannot save the image: {0}")]
    Write(#[from] std::io::Error),
}

/// The file extension for an image of `media_type`, if oi sends that type
/// to models.
pub fn image_extension(media_type: &str) -> Option<&'static str> {
    Some(match media_type {
        "image/png" => "png",
        "image/jpeg" | "image/jpg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        _ => return None,
    })
}

/// Decodes `data` (base64) of an image of `media_type` and saves it in a
/// new file of this process's folder under the temporary folder.
pub fn save_base64_image(data: &str, media_type: &str) -> Result<PathBuf, AttachmentError> {
    let extension = image_extension(media_type).ok_or_else(|| AttachmentError::UnknownType {
        media_type: media_type.to_owned(),
    })?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| AttachmentError::NotBase64 {
            problem: e.to_string(),
        })?;
    let dir = std::env::temp_dir().join(format!("oi-images-{}", std::process::id()));
    fs_err::create_dir_all(&dir)?;
    // A name nobody has taken, even with images saved at once.
    let mut n = fs_err::read_dir(&dir).map_or(0, |d| d.count());
    loop {
        n += 1;
        let path = dir.join(format!("image-{n}.{extension}"));
        match fs_err::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut file) => {
                file.write_all(&bytes)?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_saved_under_new_names_and_bad_ones_refused() {
        let a = save_base64_image("iVBORw0KGgo=", "image/png").unwrap();
        let b = save_base64_image("iVBORw0KGgo=", "image/png").unwrap();
        assert_ne!(a, b);
        assert_eq!(fs_err::read(&a).unwrap(), b"\x89PNG\r\n\x1a\n");
        assert!(a.extension().is_some_and(|e| e == "png"));
        let e = save_base64_image("iVBORw0KGgo=", "image/tiff").unwrap_err();
        assert!(e.to_string().contains("png, jpeg, gif, webp"), "{e}");
        let e = save_base64_image("not base64!", "image/png").unwrap_err();
        assert!(e.to_string().contains("does not decode"), "{e}");
    }
}
