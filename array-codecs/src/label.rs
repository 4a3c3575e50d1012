//! The 4-byte compression label of a block header.

use std::fmt;

/// A block's 4-byte compression label, e.g. `zlib`, `bzp2`, `lz4\0`; all zeros means uncompressed.
///
/// ```
/// use array_codecs::Label;
/// assert_eq!(Label::from_name("lz4").unwrap().bytes(), *b"lz4\0");
/// assert_eq!(Label(*b"zlib").to_string(), "zlib");
/// assert!(Label::NONE.is_none());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Label(pub [u8; 4]);

impl Label {
    /// No compression: four NUL bytes.
    pub const NONE: Label = Label([0; 4]);

    /// Builds a label from a name of at most 4 ASCII bytes, NUL-padded (`"xz"` → `xz\0\0`).
    /// `""` and `"none"` give [`Label::NONE`]. Returns `None` for longer or non-ASCII names.
    pub fn from_name(name: &str) -> Option<Label> {
        if name.is_empty() || name == "none" {
            return Some(Label::NONE);
        }
        if name.len() > 4 || !name.is_ascii() || name.bytes().any(|b| b == 0) {
            return None;
        }
        let mut b = [0u8; 4];
        b[..name.len()].copy_from_slice(name.as_bytes());
        Some(Label(b))
    }

    /// The raw bytes.
    pub fn bytes(self) -> [u8; 4] {
        self.0
    }

    /// Whether this is the "no compression" label.
    pub fn is_none(self) -> bool {
        self.0 == [0; 4]
    }
}

impl fmt::Display for Label {
    /// Prints the label without its NUL padding; non-printable bytes as `\xNN`; `none` for zeros.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_none() {
            return f.write_str("none");
        }
        let end = self.0.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
        for &b in &self.0[..end] {
            if b.is_ascii_graphic() {
                write!(f, "{}", b as char)?;
            } else {
                write!(f, "\\x{b:02x}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Label({self})")
    }
}
