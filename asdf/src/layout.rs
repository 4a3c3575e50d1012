//! Where the header, comments, tree and blocks of an ASDF file are.

use std::ops::Range;

use crate::error::{AsdfError, Result};

/// The text before the tree: the `#ASDF` line and the comment lines after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileHeader {
    /// The file-format version of the `#ASDF` line (always `1.0.0`).
    pub format_version: String,
    /// The ASDF Standard version of the `#ASDF_STANDARD` comment; `1.0.0` when absent, as
    /// Python asdf assumes.
    pub standard_version: String,
    /// Every comment line after the `#ASDF` line, without its `#` (the `ASDF_STANDARD` one too).
    pub comments: Vec<String>,
}

/// The sections of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sections {
    /// Header and comments.
    pub header: FileHeader,
    /// Byte range of the YAML tree, from `%YAML` (or `---`) through the `...` line, if any.
    pub tree: Option<Range<usize>>,
    /// Where the search for blocks starts (the end of the tree, or of the comments).
    pub blocks_start: usize,
    /// What was read leniently: blank padding after the header, a pre-1.0 format version.
    pub warnings: Vec<String>,
}

fn line_at(bytes: &[u8], pos: usize) -> (&[u8], usize) {
    let rest = &bytes[pos..];
    match memchr::memchr(b'\n', rest) {
        Some(i) => (&rest[..i], pos + i + 1),
        None => (rest, bytes.len()),
    }
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn preview(bytes: &[u8]) -> String {
    String::from_utf8_lossy(&bytes[..bytes.len().min(40)]).into_owned()
}

/// Splits a file into header, comments, tree and the start of its blocks.
///
/// ```
/// let s = asdf::layout::split(b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n--- {a: 1}\n...\n").unwrap();
/// assert_eq!(s.header.standard_version, "1.6.0");
/// assert_eq!(s.tree, Some(33..58));
/// assert_eq!(s.blocks_start, 58);
/// ```
pub fn split(bytes: &[u8]) -> Result<Sections> {
    let (first, mut pos) = line_at(bytes, 0);
    let first = trim_cr(first);
    let version = first
        .strip_prefix(b"#ASDF ")
        .ok_or_else(|| AsdfError::NotAsdf {
            found: preview(first),
        })?;
    let format_version = String::from_utf8_lossy(version).trim().to_string();
    let mut warnings = Vec::new();
    if format_version.starts_with("0.") {
        // Drafts of the format before 1.0.0 (a Go implementation's test data) lay files out
        // the same way.
        warnings.push(format!(
            "file format version {format_version} predates 1.0.0: read as 1.0.0"
        ));
    } else if format_version != "1.0.0" {
        return Err(AsdfError::UnsupportedFormatVersion(format_version));
    }
    let mut header = FileHeader {
        format_version,
        standard_version: "1.0.0".to_string(),
        comments: Vec::new(),
    };
    while bytes.get(pos) == Some(&b'#') {
        let (line, next) = line_at(bytes, pos);
        let text = String::from_utf8_lossy(&trim_cr(line)[1..]).into_owned();
        if let Some(v) = text.strip_prefix("ASDF_STANDARD ") {
            header.standard_version = v.trim().to_string();
        }
        header.comments.push(text);
        pos = next;
    }
    // Blank lines and spaces before the tree or the first block (libasdf reads them; its
    // tests write them).
    let padding = bytes[pos..]
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        .count();
    let rest = &bytes[pos + padding..];
    let next = [&b"%YAML"[..], b"---", &asdf_block::BLOCK_MAGIC];
    if padding > 0 && (rest.is_empty() || next.iter().any(|m| rest.starts_with(m))) {
        warnings.push(format!(
            "{padding} bytes of blank padding after the header, at byte {pos}"
        ));
        pos += padding;
    }
    let rest = &bytes[pos..];
    if rest.is_empty() || rest.starts_with(&asdf_block::BLOCK_MAGIC) {
        return Ok(Sections {
            header,
            tree: None,
            blocks_start: pos,
            warnings,
        });
    }
    if !(rest.starts_with(b"%YAML") || rest.starts_with(b"---")) {
        return Err(AsdfError::InvalidContent {
            offset: pos,
            found: preview(rest),
        });
    }
    let end = tree_end(bytes, pos).ok_or(AsdfError::MissingEndMarker { start: pos })?;
    Ok(Sections {
        header,
        tree: Some(pos..end),
        blocks_start: end,
        warnings,
    })
}

/// End of the tree that starts at `start`: just past the first line that is exactly `...`
/// (CRLF allowed, and a missing final newline at the end of the file).
fn tree_end(bytes: &[u8], start: usize) -> Option<usize> {
    let hay = &bytes[start..];
    for i in memchr::memmem::find_iter(hay, b"\n...") {
        let after = i + 4;
        let tail = &hay[after..];
        if tail.is_empty() {
            return Some(start + after);
        }
        if tail.starts_with(b"\n") {
            return Some(start + after + 1);
        }
        if tail.starts_with(b"\r\n") {
            return Some(start + after + 2);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_comments_and_tree() {
        let f = b"#ASDF 1.0.0\r\n#ASDF_STANDARD 1.5.0\r\n# a comment\r\n%YAML 1.1\r\n---\r\nx: 'a...b'\r\n...\r\n\xd3BLK";
        let s = split(f).unwrap();
        assert_eq!(s.header.standard_version, "1.5.0");
        assert_eq!(s.header.comments, ["ASDF_STANDARD 1.5.0", " a comment"]);
        let tree = s.tree.unwrap();
        assert!(f[tree.clone()].starts_with(b"%YAML") && f[tree.clone()].ends_with(b"...\r\n"));
        assert_eq!(&f[s.blocks_start..], b"\xd3BLK");
    }

    #[test]
    fn no_tree_and_defaults() {
        let s = split(b"#ASDF 1.0.0\n").unwrap();
        assert_eq!((s.tree, s.blocks_start), (None, 12));
        assert_eq!(s.header.standard_version, "1.0.0");
        let s = split(b"#ASDF 1.0.0\n\xd3BLK...").unwrap();
        assert_eq!((s.tree, s.blocks_start), (None, 12));
        // End marker at EOF without a newline.
        let s = split(b"#ASDF 1.0.0\n%YAML 1.1\n--- {}\n...").unwrap();
        assert_eq!(s.blocks_start, 32);
    }

    #[test]
    fn errors() {
        assert!(matches!(
            split(b"#ASDX 1.0.0\n"),
            Err(AsdfError::NotAsdf { .. })
        ));
        assert!(matches!(
            split(b"PK\x03\x04"),
            Err(AsdfError::NotAsdf { .. })
        ));
        assert!(
            matches!(split(b"#ASDF 2.0.0\n"), Err(AsdfError::UnsupportedFormatVersion(v)) if v == "2.0.0")
        );
        assert!(matches!(
            split(b"#ASDF 1.0.0\ngarbage"),
            Err(AsdfError::InvalidContent { offset: 12, .. })
        ));
        assert!(matches!(
            split(b"#ASDF 1.0.0\n%YAML 1.1\n--- {a: b...}\n"),
            Err(AsdfError::MissingEndMarker { start: 12 })
        ));
        assert!(matches!(
            split(b"#ASDF 1.0.0\n%YAML 1.1\n--- {}\n....\n"),
            Err(AsdfError::MissingEndMarker { .. })
        ));
    }
}
