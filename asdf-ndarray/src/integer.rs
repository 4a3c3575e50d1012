//! `core/integer-1.0.0`/`1.1.0`: arbitrary-size integers stored as little-endian `uint32` words.

use asdf_yaml::Node;

use crate::error::{field_err, NdError, Result};
use crate::meta::NdArrayMeta;
use crate::store::BlockStore;
use crate::write::{ArrayWriter, StoreOptions};

/// Tag written for big integers (ASDF Standard 1.6.0).
pub const INTEGER_TAG: &str = "tag:stsci.edu:asdf/core/integer-1.1.0";

/// Largest number of words accepted (a 2^20-bit integer).
const MAX_WORDS: usize = 1 << 15;

/// A `core/integer` value: sign and magnitude as `u32` words, least significant first.
///
/// ```
/// use asdf_ndarray::{ArrayWriter, BigInteger, StoreOptions};
/// let v = BigInteger::from_decimal("1193942770599561143856918438330").unwrap();
/// assert_eq!(v.words, vec![1103110586, 1590521629, 299257845, 15]);
/// let mut w = ArrayWriter::new();
/// let node = v.to_node(&mut w, &StoreOptions::inline()).unwrap();
/// let back = BigInteger::from_node(&node, &w.memory_store()).unwrap();
/// assert_eq!(back.to_string(), "1193942770599561143856918438330");
/// assert_eq!(BigInteger::from_i128(-5).to_i128(), Some(-5));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BigInteger {
    /// Whether the value is negative.
    pub negative: bool,
    /// Magnitude, least significant word first.
    pub words: Vec<u32>,
}

impl BigInteger {
    /// From an `i128`.
    pub fn from_i128(v: i128) -> BigInteger {
        let mut m = v.unsigned_abs();
        let mut words = Vec::new();
        while m > 0 {
            words.push(m as u32);
            m >>= 32;
        }
        BigInteger {
            negative: v < 0,
            words,
        }
    }

    /// The value as `i128`, if it fits.
    pub fn to_i128(&self) -> Option<i128> {
        let mut m: u128 = 0;
        for (i, &w) in self.words.iter().enumerate() {
            if w != 0 && i >= 4 {
                return None;
            }
            if i < 4 {
                m |= u128::from(w) << (32 * i);
            }
        }
        if self.negative {
            0i128.checked_sub_unsigned(m)
        } else {
            i128::try_from(m).ok()
        }
    }

    /// Parses optionally signed decimal digits.
    pub fn from_decimal(text: &str) -> Result<BigInteger> {
        let (negative, digits) = match text.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, text.strip_prefix('+').unwrap_or(text)),
        };
        if digits.is_empty()
            || !digits.bytes().all(|b| b.is_ascii_digit())
            || digits.len() > MAX_WORDS * 10
        {
            return Err(NdError::Datatype(format!(
                "`{text}` is not a decimal integer"
            )));
        }
        let mut words: Vec<u32> = Vec::new();
        for b in digits.bytes() {
            let mut carry = u64::from(b - b'0');
            for w in words.iter_mut() {
                let v = u64::from(*w) * 10 + carry;
                *w = v as u32;
                carry = v >> 32;
            }
            if carry > 0 {
                words.push(carry as u32);
            }
        }
        Ok(BigInteger { negative, words })
    }

    /// Reads a `core/integer` node; `words` may be inline or block-backed.
    pub fn from_node(node: &Node, store: &(impl BlockStore + ?Sized)) -> Result<BigInteger> {
        let sign = node
            .get("sign")
            .and_then(Node::as_str)
            .ok_or_else(|| field_err("sign", "expected \"+\" or \"-\""))?;
        let negative = match sign {
            "+" => false,
            "-" => true,
            _ => {
                return Err(field_err(
                    "sign",
                    format!("expected \"+\" or \"-\", found {sign:?}"),
                ))
            }
        };
        let words_node = node
            .get("words")
            .ok_or_else(|| field_err("words", "missing"))?;
        let meta = NdArrayMeta::from_node(words_node)?;
        let words = if meta.datatype.is_none() {
            // Inline words without a datatype are inferred as int64: convert.
            let a = meta.read(store)?.into_array::<i64>()?;
            a.iter()
                .map(|&w| {
                    u32::try_from(w).map_err(|_| field_err("words", format!("{w} is not a uint32")))
                })
                .collect::<Result<Vec<_>>>()?
        } else {
            meta.array::<u32>(store)?.iter().copied().collect()
        };
        if words.len() > MAX_WORDS {
            return Err(field_err("words", format!("more than {MAX_WORDS} words")));
        }
        Ok(BigInteger { negative, words })
    }

    /// The node (`words` stored as `opts` says, `sign`, and the decimal `string`).
    pub fn to_node(&self, writer: &mut ArrayWriter, opts: &StoreOptions) -> Result<Node> {
        let opts = StoreOptions {
            byteorder: crate::datatype::ByteOrder::Little,
            ..opts.clone()
        };
        let words = ndarray::Array1::from(self.words.clone());
        let w = writer.add(&words, &opts)?;
        Ok(Node::mapping([
            ("words", w),
            ("sign", Node::from(if self.negative { "-" } else { "+" })),
            ("string", Node::from(self.to_string())),
        ])
        .with_tag(INTEGER_TAG))
    }
}

impl std::fmt::Display for BigInteger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut mag = self.words.clone();
        let mut chunks = Vec::new();
        while mag.iter().any(|&w| w != 0) {
            let mut rem: u64 = 0;
            for w in mag.iter_mut().rev() {
                let v = (rem << 32) | u64::from(*w);
                *w = (v / 1_000_000_000) as u32;
                rem = v % 1_000_000_000;
            }
            chunks.push(rem as u32);
        }
        if chunks.is_empty() {
            return f.write_str("0");
        }
        if self.negative {
            f.write_str("-")?;
        }
        let mut it = chunks.iter().rev();
        if let Some(first) = it.next() {
            write!(f, "{first}")?;
        }
        for c in it {
            write!(f, "{c:09}")?;
        }
        Ok(())
    }
}
