//! awkward0's function whitelist: fnmatch patterns per spec element.
//!
//! Matching a spec only *allows* it to be looked up: whatever the whitelist says, a call is
//! dispatched only to this crate's fixed table of constructors (see [`crate::read`]).

/// A list of function-spec patterns (`["awkward0", "*Array"]`, ...).
///
/// A spec is allowed when, for some pattern, every pair of `zip(spec, pattern)` matches with
/// fnmatch rules (`*`, `?`, `[seq]`, `[!seq]`, case-sensitive). As in awkward0 only the shorter
/// length is compared, so `["awkward0", "*Array"]` also allows
/// `["awkward0", "JaggedArray", "fromcounts"]`.
///
/// ```
/// use asdf_awkward::Whitelist;
/// let w = Whitelist::default();
/// assert!(w.allows(&["awkward0", "JaggedArray", "fromcounts"]));
/// assert!(w.allows(&["zlib", "decompress"]));
/// assert!(!w.allows(&["os", "system"]));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Whitelist {
    patterns: Vec<Vec<String>>,
}

/// awkward0 0.15.5's `awkward0.persist.whitelist`, verbatim.
const DEFAULT: &[&[&str]] = &[
    &["numpy", "frombuffer"],
    &["zlib", "decompress"],
    &["lzma", "decompress"],
    &["backports.lzma", "decompress"],
    &["lz4.block", "decompress"],
    &["awkward0", "*Array"],
    &["awkward0", "Table"],
    &["awkward0", "numpy", "frombuffer"],
    &["awkward0.util", "frombuffer"],
    &["awkward0.persist"],
    &["awkward0.arrow", "_ParquetFile", "fromjson"],
    &["awkward", "*Array"],
    &["awkward", "Table"],
    &["awkward", "numpy", "frombuffer"],
    &["awkward.util", "frombuffer"],
    &["awkward.persist"],
    &["awkward.arrow", "_ParquetFile", "fromjson"],
    &["uproot3_methods.classes.*"],
    &["uproot3_methods.profiles.*"],
    &["uproot_methods.classes.*"],
    &["uproot_methods.profiles.*"],
    &["uproot.tree", "_LazyFiles"],
    &["uproot.tree", "_LazyTree"],
    &["uproot.tree", "_LazyBranch"],
];

impl Default for Whitelist {
    /// awkward0 0.15.5's default whitelist.
    fn default() -> Self {
        Whitelist {
            patterns: DEFAULT
                .iter()
                .map(|p| p.iter().map(|s| s.to_string()).collect())
                .collect(),
        }
    }
}

impl Whitelist {
    /// A whitelist from explicit patterns.
    pub fn new(patterns: Vec<Vec<String>>) -> Whitelist {
        Whitelist { patterns }
    }

    /// awkward0's `"*"`: every spec passes the whitelist (the fixed dispatch table and the
    /// refusals of code-running specs still apply).
    pub fn allow_all() -> Whitelist {
        Whitelist {
            patterns: vec![vec!["*".into()]],
        }
    }

    /// The patterns.
    pub fn patterns(&self) -> &[Vec<String>] {
        &self.patterns
    }

    /// Whether `spec` matches any pattern.
    pub fn allows<S: AsRef<str>>(&self, spec: &[S]) -> bool {
        self.patterns.iter().any(|pat| {
            spec.iter()
                .zip(pat)
                .all(|(s, p)| fnmatch(p.as_bytes(), s.as_ref().as_bytes()))
        })
    }
}

/// Python's `fnmatch.fnmatchcase`: `*` any run, `?` one character, `[seq]`/`[!seq]` sets with
/// ranges. Works on bytes; a pattern with an unclosed `[` treats it literally, as Python does.
pub fn fnmatch(pat: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        if p < pat.len() {
            match pat[p] {
                b'*' => {
                    star = Some((p, n));
                    p += 1;
                    continue;
                }
                b'?' => {
                    p += 1;
                    n += 1;
                    continue;
                }
                b'[' => {
                    if let Some((matched, next)) = class(pat, p, name[n]) {
                        if matched {
                            p = next;
                            n += 1;
                            continue;
                        }
                    } else if name[n] == b'[' {
                        p += 1;
                        n += 1;
                        continue;
                    }
                }
                c if c == name[n] => {
                    p += 1;
                    n += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, sn)) => {
                p = sp + 1;
                n = sn + 1;
                star = Some((sp, sn + 1));
            }
            None => return false,
        }
    }
    pat[p..].iter().all(|&c| c == b'*')
}

/// Matches `c` against the set starting at `pat[start] == b'['`; returns (matched, index after
/// `]`) or `None` when the set is not closed.
fn class(pat: &[u8], start: usize, c: u8) -> Option<(bool, usize)> {
    let mut i = start + 1;
    let negate = pat.get(i) == Some(&b'!');
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    loop {
        let ch = *pat.get(i)?;
        if ch == b']' && !first {
            return Some((matched != negate, i + 1));
        }
        first = false;
        if pat.get(i + 1) == Some(&b'-') && pat.get(i + 2).is_some_and(|&e| e != b']') {
            let hi = pat[i + 2];
            if ch <= c && c <= hi {
                matched = true;
            }
            i += 3;
        } else {
            if ch == c {
                matched = true;
            }
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnmatch_rules() {
        assert!(fnmatch(b"*Array", b"JaggedArray"));
        assert!(fnmatch(b"*", b""));
        assert!(!fnmatch(b"*Array", b"Table"));
        assert!(fnmatch(
            b"uproot3_methods.classes.*",
            b"uproot3_methods.classes.TLorentzVector"
        ));
        assert!(fnmatch(b"a?c", b"abc"));
        assert!(fnmatch(b"[a-c]x", b"bx"));
        assert!(!fnmatch(b"[!a-c]x", b"bx"));
        assert!(fnmatch(b"[!a-c]x", b"dx"));
        assert!(fnmatch(b"[x", b"[x"));
        assert!(fnmatch(b"[]]", b"]"));
        assert!(!fnmatch(b"abc", b"abcd"));
        assert!(fnmatch(b"*b*b*", b"abbab"));
    }

    #[test]
    fn awkward0_zip_semantics() {
        let w = Whitelist::default();
        assert!(w.allows(&["awkward0", "JaggedArray"]));
        assert!(w.allows(&["awkward0.persist", "topython"]));
        assert!(w.allows(&["awkward", "numpy", "frombuffer"]));
        assert!(!w.allows(&["builtins", "eval"]));
        assert!(!w.allows(&["awkward0", "persist"]));
        let narrow = Whitelist::new(vec![vec!["zlib".into(), "decompress".into()]]);
        assert!(!narrow.allows(&["awkward0", "JaggedArray"]));
        assert!(Whitelist::allow_all().allows(&["os", "system"]));
    }
}
