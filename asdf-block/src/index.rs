//! The block index: a small YAML list of block offsets after the last block.
//!
//! It is only a hint. [`parse_index`] reads the text; the layout scanner accepts the offsets
//! only after checking each of them (see [`crate::layout`]).

/// The line that starts a block index.
pub const INDEX_HEADER: &[u8] = b"#ASDF BLOCK INDEX";

/// The text of a block index for blocks whose magic tokens are at `offsets`, in the block style
/// Python asdf writes.
///
/// ```
/// let text = asdf_block::encode_index(&[664, 800]);
/// assert_eq!(text, b"#ASDF BLOCK INDEX\n%YAML 1.1\n---\n- 664\n- 800\n...\n");
/// assert_eq!(asdf_block::parse_index(&text).unwrap(), vec![664, 800]);
/// ```
pub fn encode_index(offsets: &[u64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(40 + offsets.len() * 12);
    out.extend_from_slice(INDEX_HEADER);
    out.extend_from_slice(b"\n%YAML 1.1\n---\n");
    for o in offsets {
        out.extend_from_slice(format!("- {o}\n").as_bytes());
    }
    out.extend_from_slice(b"...\n");
    out
}

/// Parses a block index (starting at its `#ASDF BLOCK INDEX` line) into offsets.
///
/// Accepts what real writers produce: block-style lists (Python), flow lists on the `---` line or
/// after it (the standard's example), a trailing comma (ASDF.jl), CRLF line ends, a missing `...`,
/// and NUL or white-space bytes after the end (the standard allows NUL padding). Returns why the
/// text is not an index otherwise; the reader then walks the block headers instead.
pub fn parse_index(text: &[u8]) -> Result<Vec<u64>, String> {
    let rest = text
        .strip_prefix(INDEX_HEADER)
        .ok_or("does not start with #ASDF BLOCK INDEX")?;
    let end = rest
        .iter()
        .rposition(|&b| !(b == 0 || b.is_ascii_whitespace()))
        .map_or(0, |i| i + 1);
    let body = std::str::from_utf8(&rest[..end]).map_err(|_| "index text is not UTF-8")?;
    let mut lines = body.lines().map(|l| l.trim_end_matches('\r'));
    match lines.next() {
        Some("") => {}
        _ => return Err("junk after #ASDF BLOCK INDEX on its line".into()),
    }
    let mut offsets = Vec::new();
    let mut flow: Option<String> = None;
    let mut started = false;
    for line in lines {
        let t = line.trim();
        if !started {
            if t.starts_with('%') || t.is_empty() || t.starts_with('#') {
                continue;
            }
            let after = t.strip_prefix("---").ok_or("no --- document start")?;
            started = true;
            let after = after.trim();
            if after.starts_with('[') {
                flow = Some(after.to_string());
            } else if !after.is_empty() {
                return Err(format!("unexpected {after:?} after ---"));
            }
            continue;
        }
        if t == "..." {
            break;
        }
        if let Some(f) = flow.as_mut() {
            f.push(' ');
            f.push_str(t);
        } else if t.starts_with('[') {
            flow = Some(t.to_string());
        } else if let Some(item) = t.strip_prefix('-') {
            offsets.push(parse_offset(item.trim())?);
        } else if t.is_empty() || t.starts_with('#') {
            continue;
        } else {
            return Err(format!("unexpected line {t:?}"));
        }
    }
    if !started {
        return Err("no --- document start".into());
    }
    if let Some(f) = flow {
        let inner = f
            .trim()
            .strip_prefix('[')
            .and_then(|s| s.strip_suffix(']'))
            .ok_or("flow list is not closed")?;
        let items: Vec<&str> = inner.split(',').map(str::trim).collect();
        for (i, item) in items.iter().enumerate() {
            if item.is_empty() && i + 1 == items.len() {
                break; // trailing comma, or an empty list
            }
            offsets.push(parse_offset(item)?);
        }
    }
    if offsets.is_empty() {
        return Err("index is empty".into());
    }
    Ok(offsets)
}

fn parse_offset(s: &str) -> Result<u64, String> {
    let digits = s.strip_prefix('+').unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{s:?} is not a byte offset"));
    }
    digits
        .parse::<u64>()
        .map_err(|_| format!("{s:?} is out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_written_in_the_wild() {
        let cases: &[(&[u8], &[u64])] = &[
            (b"#ASDF BLOCK INDEX\n%YAML 1.1\n---\n- 664\n...\n", &[664]),
            (
                b"#ASDF BLOCK INDEX\r\n%YAML 1.1\r\n---\r\n- 1\r\n- 2\r\n...\r\n",
                &[1, 2],
            ),
            (
                b"#ASDF BLOCK INDEX\n%YAML 1.1\n--- [2043, 16340]\n...\n",
                &[2043, 16340],
            ),
            (b"#ASDF BLOCK INDEX\n%YAML 1.1\n---\n[463,]\n...\n", &[463]),
            (
                b"#ASDF BLOCK INDEX\n%YAML 1.1\n---\n[1,\n 2,\n 3]\n...\n",
                &[1, 2, 3],
            ),
            (
                b"#ASDF BLOCK INDEX\n%YAML 1.1\n---\n- 5\n...\n\0\0\0\0",
                &[5],
            ),
            (b"#ASDF BLOCK INDEX\n%YAML 1.1\n---\n- 5\n- 6", &[5, 6]),
        ];
        for (text, want) in cases {
            assert_eq!(
                parse_index(text).as_deref(),
                Ok(*want),
                "{}",
                String::from_utf8_lossy(text)
            );
        }
    }

    #[test]
    fn rejects_what_is_not_an_index() {
        let bad: &[&[u8]] = &[
            b"#ASDF BLOCK INDEX\n%YAML 1.1\n---\n[]\n...\n",
            b"#ASDF BLOCK INDEX\n%YAML 1.1\n---\n- abc\n...\n",
            b"#ASDF BLOCK INDEX\n%YAML 1.1\n---\n- -5\n...\n",
            b"#ASDF BLOCK INDEX\n%YAML 1.1\n---\n[1, 2\n",
            b"#ASDF BLOCK INDEX\n%YAML 1.1\n- 1\n",
            b"#ASDF BLOCK INDEX junk\n---\n- 1\n",
            b"#ASDF BLOCK INDEX\n---\n- 99999999999999999999999\n",
            b"#ASDF BLOCK INDEX\n---\n- 1\n\xff\n",
            b"#ASDF BLOCK INDEX\n---\nkey: 1\n",
        ];
        for text in bad {
            assert!(
                parse_index(text).is_err(),
                "{}",
                String::from_utf8_lossy(text)
            );
        }
    }
}
