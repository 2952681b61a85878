//! Screen captures: scaled to the size the model sees, encoded as PNG.

use fast_image_resize::images::Image;
use fast_image_resize::{FilterType, PixelType, ResizeAlg, ResizeOptions, Resizer};

use crate::{ComputerError, Size};

/// A captured screen: 4 bytes per pixel in blue, green, red, unused order
/// (the X server's 24- and 32-bit layout on little-endian machines).
#[derive(Clone, PartialEq, Eq)]
pub struct Frame {
    pub size: Size,
    pub bgrx: Vec<u8>,
}

impl std::fmt::Debug for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frame").field("size", &self.size).finish()
    }
}

impl Frame {
    /// A frame of one colour (for tests and benchmarks).
    pub fn filled(size: Size, [r, g, b]: [u8; 3]) -> Self {
        let pixels = size.width as usize * size.height as usize;
        let mut bgrx = Vec::with_capacity(pixels * 4);
        for _ in 0..pixels {
            bgrx.extend_from_slice(&[b, g, r, 0]);
        }
        Self { size, bgrx }
    }

    /// The frame as a PNG of `target` size (scaled if it differs).
    pub fn to_png(&self, target: Size) -> Result<Vec<u8>, ComputerError> {
        let invalid = |detail: String| ComputerError::Image(detail);
        let expected = self.size.width as usize * self.size.height as usize * 4;
        if self.bgrx.len() < expected {
            return Err(invalid(format!(
                "the capture has {} bytes, {expected} expected for {}",
                self.bgrx.len(),
                self.size
            )));
        }
        let scaled;
        let pixels: &[u8] = if target == self.size {
            &self.bgrx[..expected]
        } else {
            let src = Image::from_vec_u8(
                self.size.width,
                self.size.height,
                self.bgrx[..expected].to_vec(),
                PixelType::U8x4,
            )
            .map_err(|e| invalid(e.to_string()))?;
            let mut dst = Image::new(target.width, target.height, PixelType::U8x4);
            let options = ResizeOptions::new()
                .resize_alg(ResizeAlg::Convolution(FilterType::Bilinear))
                .use_alpha(false);
            Resizer::new()
                .resize(&src, &mut dst, &options)
                .map_err(|e| invalid(e.to_string()))?;
            scaled = dst.into_vec();
            &scaled
        };
        let mut rgb = Vec::with_capacity(pixels.len() / 4 * 3);
        for px in pixels.chunks_exact(4) {
            rgb.extend_from_slice(&[px[2], px[1], px[0]]);
        }
        let mut png_bytes = Vec::with_capacity(rgb.len() / 4);
        let mut encoder = png::Encoder::new(&mut png_bytes, target.width, target.height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(png::Compression::Fast);
        let mut writer = encoder.write_header().map_err(|e| invalid(e.to_string()))?;
        writer
            .write_image_data(&rgb)
            .map_err(|e| invalid(e.to_string()))?;
        writer.finish().map_err(|e| invalid(e.to_string()))?;
        Ok(png_bytes)
    }
}

/// The size of a PNG image, read from its header.
pub fn png_size(bytes: &[u8]) -> Option<Size> {
    if bytes.len() < 24 || &bytes[..8] != b"\x89PNG\r\n\x1a\n" || &bytes[12..16] != b"IHDR" {
        return None;
    }
    let word =
        |at: usize| u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    Some(Size {
        width: word(16),
        height: word(20),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_become_pngs_of_the_size_asked_for() {
        let frame = Frame::filled(
            Size {
                width: 192,
                height: 108,
            },
            [200, 10, 30],
        );
        let target = Size {
            width: 128,
            height: 72,
        };
        let png_bytes = frame.to_png(target).unwrap();
        assert_eq!(png_size(&png_bytes), Some(target));
        let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        reader.next_frame(&mut buf).unwrap();
        assert_eq!(&buf[..3], &[200, 10, 30], "red, green, blue in that order");
        let same = frame.to_png(frame.size).unwrap();
        assert_eq!(png_size(&same), Some(frame.size));
    }

    #[test]
    fn a_short_capture_is_an_error_not_a_panic() {
        let frame = Frame {
            size: Size {
                width: 10,
                height: 10,
            },
            bgrx: vec![0; 12],
        };
        assert!(matches!(
            frame.to_png(frame.size),
            Err(ComputerError::Image(_))
        ));
    }
}
