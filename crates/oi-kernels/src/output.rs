//! Turning a kernel's raw output bytes into text for the event stream.

/// Finds the end-of-run marker in a byte stream that arrives in arbitrary
/// pieces, passing every other byte through unchanged.
#[derive(Debug)]
pub(crate) struct MarkerScanner {
    marker: Vec<u8>,
    /// Bytes at the end of the input that could be the start of the marker.
    held: Vec<u8>,
}

impl MarkerScanner {
    pub(crate) fn new(marker: impl Into<Vec<u8>>) -> Self {
        Self {
            marker: marker.into(),
            held: Vec::new(),
        }
    }

    /// Feeds `data`; appends the output bytes to `out` and returns whether the
    /// marker was seen. Bytes after the marker are output too (a background
    /// process may still be writing).
    pub(crate) fn feed(&mut self, data: &[u8], out: &mut Vec<u8>) -> bool {
        let mut buf = std::mem::take(&mut self.held);
        buf.extend_from_slice(data);
        if let Some(at) = find(&buf, &self.marker) {
            out.extend_from_slice(&buf[..at]);
            out.extend_from_slice(&buf[at + self.marker.len()..]);
            return true;
        }
        let keep = longest_suffix_prefix(&buf, &self.marker);
        out.extend_from_slice(&buf[..buf.len() - keep]);
        self.held = buf[buf.len() - keep..].to_vec();
        false
    }

    /// Bytes held back as a possible marker start; output after all when the
    /// stream ends.
    pub(crate) fn take_held(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.held)
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The length of the longest suffix of `data` that is a proper prefix of `marker`.
fn longest_suffix_prefix(data: &[u8], marker: &[u8]) -> usize {
    let max = marker.len().saturating_sub(1).min(data.len());
    (1..=max)
        .rev()
        .find(|&n| data[data.len() - n..] == marker[..n])
        .unwrap_or(0)
}

/// Decodes UTF-8 that arrives in pieces: a character split between two
/// pieces is kept until it is complete; invalid bytes become U+FFFD.
#[derive(Debug, Default)]
pub(crate) struct Utf8Decoder {
    pending: Vec<u8>,
}

impl Utf8Decoder {
    pub(crate) fn decode(&mut self, data: &[u8]) -> String {
        self.pending.extend_from_slice(data);
        let mut text = String::new();
        let mut rest: &[u8] = &self.pending;
        loop {
            match std::str::from_utf8(rest) {
                Ok(valid) => {
                    text.push_str(valid);
                    rest = &[];
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    // Safe: `valid_up_to` marks the end of valid UTF-8.
                    text.push_str(&String::from_utf8_lossy(valid));
                    match e.error_len() {
                        Some(bad) => {
                            text.push(char::REPLACEMENT_CHARACTER);
                            rest = &after[bad..];
                        }
                        // An incomplete character at the end: wait for more.
                        None => {
                            rest = after;
                            break;
                        }
                    }
                }
            }
        }
        self.pending = rest.to_vec();
        text
    }

    /// Whatever is left when the stream ends, decoded lossily.
    pub(crate) fn finish(&mut self) -> String {
        let rest = std::mem::take(&mut self.pending);
        String::from_utf8_lossy(&rest).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_pieces(marker: &str, pieces: &[&[u8]]) -> (Vec<u8>, bool) {
        let mut scanner = MarkerScanner::new(marker.as_bytes());
        let mut out = Vec::new();
        let mut found = false;
        for piece in pieces {
            found |= scanner.feed(piece, &mut out);
        }
        if !found {
            out.extend(scanner.take_held());
        }
        (out, found)
    }

    #[test]
    fn finds_a_marker_split_across_pieces() {
        let (out, found) = scan_pieces("<END>", &[b"hello <E", b"N", b"D> after"]);
        assert!(found);
        assert_eq!(out, b"hello  after");
    }

    #[test]
    fn near_misses_are_output() {
        let (out, found) = scan_pieces("<END>", &[b"a <EN", b"X> b <", b"E"]);
        assert!(!found);
        assert_eq!(out, b"a <ENX> b <E");
    }

    #[test]
    fn every_split_point_works() {
        let data = b"line one\nline two<MARK>tail";
        for cut in 0..=data.len() {
            let (out, found) = scan_pieces("<MARK>", &[&data[..cut], &data[cut..]]);
            assert!(found, "cut at {cut}");
            assert_eq!(out, b"line one\nline twotail", "cut at {cut}");
        }
    }

    #[test]
    fn decodes_characters_split_across_pieces() {
        let bytes = "héllo wörld €".as_bytes();
        for cut in 0..=bytes.len() {
            let mut d = Utf8Decoder::default();
            let mut text = d.decode(&bytes[..cut]);
            text.push_str(&d.decode(&bytes[cut..]));
            text.push_str(&d.finish());
            assert_eq!(text, "héllo wörld €", "cut at {cut}");
        }
    }

    #[test]
    fn invalid_bytes_become_replacement_characters() {
        let mut d = Utf8Decoder::default();
        assert_eq!(d.decode(b"a\xffb\xc3"), "a\u{fffd}b");
        assert_eq!(d.finish(), "\u{fffd}");
    }
}
