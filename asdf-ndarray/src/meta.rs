//! The parsed form of a `core/ndarray` node.

use asdf_yaml::{Mapping, Node};

use crate::datatype::{ByteOrder, Datatype};
use crate::error::{field_err, NdError, Result};

/// Tag prefix shared by every version of the ndarray tag.
pub const NDARRAY_TAG_PREFIX: &str = "tag:stsci.edu:asdf/core/ndarray-";

/// The ndarray tag this crate writes.
pub const NDARRAY_TAG: &str = "tag:stsci.edu:asdf/core/ndarray-1.1.0";

/// Whether `tag` is a `core/ndarray` tag of any version (not `ndarray-chunk`).
pub fn is_ndarray_tag(tag: &str) -> bool {
    tag.strip_prefix(NDARRAY_TAG_PREFIX)
        .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
}

/// Where an array's bytes are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A block of this file; negative counts from the end (`-1` = last, used for streams).
    Block(i64),
    /// The first block of an external ASDF file (a URI relative to this file).
    External(String),
}

/// The `mask` of an ndarray.
#[derive(Clone, Debug, PartialEq)]
pub enum Mask {
    /// A sentinel value: elements equal to it are missing (a NaN sentinel matches NaNs).
    Sentinel(Node),
    /// A `bool8` (or any numeric: non-zero = missing) ndarray broadcastable to the array.
    Array(Box<NdArrayMeta>),
}

/// A parsed `core/ndarray-1.0.0`/`1.1.0` node.
///
/// ```
/// use asdf_ndarray::{NdArrayMeta, Source, ByteOrder};
/// let node = asdf_yaml::parse_str(
///     "!<tag:stsci.edu:asdf/core/ndarray-1.1.0> {source: -1, datatype: float64, \
///       byteorder: big, shape: ['*', 8], offset: 16}").unwrap();
/// let meta = NdArrayMeta::from_node(&node).unwrap();
/// assert_eq!(meta.source, Some(Source::Block(-1)));
/// assert!(meta.streamed);
/// assert_eq!(meta.shape, Some(vec![8]));
/// assert_eq!(meta.byteorder, ByteOrder::Big);
/// assert_eq!(NdArrayMeta::from_node(&meta.to_node()).unwrap(), meta);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct NdArrayMeta {
    /// Where the bytes are; `None` for inline arrays.
    pub source: Option<Source>,
    /// Inline data: nested lists (with `null` for masked values).
    pub data: Option<Node>,
    /// The shape; for streamed arrays the dimensions after the leading `'*'`. `None` for inline
    /// arrays without a `shape` (inferred from the nesting).
    pub shape: Option<Vec<usize>>,
    /// Whether the shape starts with `'*'` (rows determined by the block length).
    pub streamed: bool,
    /// The datatype; `None` for inline arrays without one (inferred from the values).
    pub datatype: Option<Datatype>,
    /// Byte order of block data (ignored for inline data). Defaults to little when absent.
    pub byteorder: ByteOrder,
    /// Byte offset of the first element within the block.
    pub offset: u64,
    /// Byte strides per dimension (negative allowed, zero not); `None` = C-contiguous.
    pub strides: Option<Vec<i64>>,
    /// The mask.
    pub mask: Option<Mask>,
}

pub use crate::datatype::MAX_NDIM;

/// Nesting limit for masks that are ndarrays with masks.
const MAX_MASK_DEPTH: usize = 8;

impl NdArrayMeta {
    /// A block-backed array description with C-contiguous layout.
    pub fn block(source: i64, shape: Vec<usize>, datatype: Datatype, byteorder: ByteOrder) -> Self {
        NdArrayMeta {
            source: Some(Source::Block(source)),
            data: None,
            shape: Some(shape),
            streamed: false,
            datatype: Some(datatype),
            byteorder,
            offset: 0,
            strides: None,
            mask: None,
        }
    }

    /// A streamed array: rows of `row_shape` in the last block (`source: -1`,
    /// `shape: ['*', ...]`), the number of rows given by the block length.
    pub fn streamed(row_shape: Vec<usize>, datatype: Datatype, byteorder: ByteOrder) -> Self {
        NdArrayMeta {
            source: Some(Source::Block(-1)),
            streamed: true,
            ..Self::block(-1, row_shape, datatype, byteorder)
        }
    }

    /// Parses an ndarray node (a tagged mapping or a bare nested list of inline data). The tag
    /// itself is not checked, so untagged nodes (e.g. chunk arrays) are accepted.
    pub fn from_node(node: &Node) -> Result<NdArrayMeta> {
        Self::parse(node, 0)
    }

    fn parse(node: &Node, depth: usize) -> Result<NdArrayMeta> {
        if node.as_seq().is_some() {
            return Ok(NdArrayMeta {
                source: None,
                data: Some(node.clone()),
                shape: None,
                streamed: false,
                datatype: None,
                byteorder: ByteOrder::NATIVE,
                offset: 0,
                strides: None,
                mask: None,
            });
        }
        let m = node.as_map().ok_or_else(|| {
            field_err(
                "",
                format!(
                    "an ndarray must be a mapping or a list, found a {}",
                    node.kind()
                ),
            )
        })?;
        let source = parse_source(m)?;
        let data = m.get("data").cloned();
        match (&source, &data) {
            (Some(_), Some(_)) => {
                return Err(field_err("source", "`source` and `data` are exclusive"))
            }
            (None, None) => {
                return Err(field_err("source", "either `source` or `data` is required"))
            }
            _ => {}
        }
        let (shape, streamed) = match m.get("shape") {
            None => (None, false),
            Some(s) => parse_shape(s).map(|(dims, streamed)| (Some(dims), streamed))?,
        };
        let datatype = m.get("datatype").map(Datatype::from_node).transpose()?;
        let byteorder = match m.get("byteorder") {
            None => ByteOrder::Little,
            Some(b) => b
                .as_str()
                .and_then(ByteOrder::from_name)
                .ok_or_else(|| field_err("byteorder", "expected `big` or `little`"))?,
        };
        let offset = match m.get("offset") {
            None => 0,
            Some(o) => o
                .as_i64()
                .and_then(|o| u64::try_from(o).ok())
                .ok_or_else(|| field_err("offset", "expected an integer ≥ 0"))?,
        };
        let strides = m.get("strides").map(parse_strides).transpose()?;
        let meta = NdArrayMeta {
            source,
            data,
            shape,
            streamed,
            datatype,
            byteorder,
            offset,
            strides,
            mask: None,
        };
        meta.check_fields()?;
        let mask = match m.get("mask") {
            None => None,
            Some(mk) if mk.as_map().is_some() || mk.as_seq().is_some() => {
                if depth >= MAX_MASK_DEPTH {
                    return Err(field_err("mask", "masks nested too deeply"));
                }
                Some(Mask::Array(Box::new(
                    Self::parse(mk, depth + 1).map_err(|e| field_err("mask", e.to_string()))?,
                )))
            }
            Some(mk) => Some(Mask::Sentinel(mk.clone())),
        };
        Ok(NdArrayMeta { mask, ..meta })
    }

    /// The rules between fields: a block source needs a shape and a datatype, strides one per
    /// dimension, and a streamed (`'*'`) shape a block source.
    fn check_fields(&self) -> Result<()> {
        if self.source.is_some() {
            if self.shape.is_none() {
                return Err(field_err("shape", "required with `source`"));
            }
            if self.datatype.is_none() {
                return Err(field_err("datatype", "required with `source`"));
            }
        }
        let ndim = |sh: &Vec<usize>| sh.len() + usize::from(self.streamed);
        if let (Some(st), Some(sh)) = (&self.strides, &self.shape) {
            if st.len() != ndim(sh) {
                return Err(field_err(
                    "strides",
                    format!("has {} entries but the shape has {}", st.len(), ndim(sh)),
                ));
            }
        }
        if self.streamed && self.source.is_none() {
            return Err(field_err("shape", "'*' needs a block `source`"));
        }
        Ok(())
    }

    /// The node (tagged `core/ndarray-1.1.0`), keys in Python asdf's order.
    pub fn to_node(&self) -> Node {
        let mut m = Mapping::new();
        match &self.source {
            Some(Source::Block(i)) => {
                m.insert("source", *i);
            }
            Some(Source::External(u)) => {
                m.insert("source", u.as_str());
            }
            None => {}
        }
        if let Some(d) = &self.data {
            m.insert("data", d.clone());
        }
        if let Some(mask) = &self.mask {
            m.insert(
                "mask",
                match mask {
                    Mask::Sentinel(n) => n.clone(),
                    Mask::Array(a) => a.to_node(),
                },
            );
        }
        if let Some(dt) = &self.datatype {
            m.insert("datatype", dt.to_node());
        }
        if self.source.is_some() {
            m.insert("byteorder", self.byteorder.name());
        }
        if let Some(shape) = &self.shape {
            let mut dims: Vec<Node> = Vec::with_capacity(shape.len() + 1);
            if self.streamed {
                dims.push(Node::from("*"));
            }
            dims.extend(shape.iter().map(|&d| Node::from(d)));
            m.insert("shape", Node::from(dims));
        }
        if self.offset != 0 {
            m.insert("offset", self.offset);
        }
        if let Some(st) = &self.strides {
            m.insert("strides", Node::sequence(st.iter().copied()));
        }
        Node::from(m).with_tag(NDARRAY_TAG)
    }

    /// The declared datatype, or an error naming the field.
    pub(crate) fn need_datatype(&self) -> Result<&Datatype> {
        self.datatype
            .as_ref()
            .ok_or_else(|| field_err("datatype", "missing"))
    }
}

/// Limits applied before allocating the result of a read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadLimits {
    /// Largest result (in bytes) accepted when it exceeds the bytes the header's data occupies
    /// (overlapping strides, chunked arrays with gaps, broadcast masks). Default 4 GiB.
    pub max_expanded_bytes: u64,
}

impl Default for ReadLimits {
    fn default() -> Self {
        ReadLimits {
            max_expanded_bytes: 4 << 30,
        }
    }
}

impl ReadLimits {
    /// The preset for files from untrusted sources (uploads, the internet): results larger
    /// than the bytes backing them are refused above 1 GiB (instead of 4 GiB), so one small
    /// file cannot make a service allocate more than a bounded amount per array read. Arrays no
    /// larger than their (decoded) block are still always accepted.
    ///
    /// ```
    /// use asdf_ndarray::ReadLimits;
    /// assert_eq!(ReadLimits::untrusted().max_expanded_bytes, 1 << 30);
    /// assert!(ReadLimits::untrusted().max_expanded_bytes < ReadLimits::default().max_expanded_bytes);
    /// ```
    pub fn untrusted() -> Self {
        ReadLimits {
            max_expanded_bytes: 1 << 30,
        }
    }
}

pub(crate) fn check_limit(
    what: &str,
    bytes: Option<u64>,
    allowed_free: u64,
    limits: &ReadLimits,
) -> Result<u64> {
    match bytes {
        Some(b) if b <= allowed_free || b <= limits.max_expanded_bytes => Ok(b),
        _ => Err(NdError::TooLarge {
            what: what.to_string(),
            limit: limits.max_expanded_bytes.max(allowed_free),
        }),
    }
}

/// The `source` field: a block number or an external file's URI.
fn parse_source(m: &Mapping) -> Result<Option<Source>> {
    let Some(s) = m.get("source") else {
        return Ok(None);
    };
    if let Some(i) = s.as_i64() {
        Ok(Some(Source::Block(i)))
    } else if let Some(u) = s.as_str() {
        Ok(Some(Source::External(u.to_string())))
    } else {
        Err(field_err(
            "source",
            format!("expected an integer or a URI string, found a {}", s.kind()),
        ))
    }
}

/// The `shape` field: its dimensions, and whether it starts with `'*'` (a streamed array).
fn parse_shape(s: &Node) -> Result<(Vec<usize>, bool)> {
    let items = s
        .as_seq()
        .ok_or_else(|| field_err("shape", format!("expected a list, found a {}", s.kind())))?;
    if items.len() > MAX_NDIM {
        return Err(field_err(
            "shape",
            format!(
                "{} dimensions, at most {MAX_NDIM} are supported",
                items.len()
            ),
        ));
    }
    let streamed = items.first().and_then(Node::as_str) == Some("*");
    let rest = if streamed { &items[1..] } else { items };
    let dims = rest
        .iter()
        .enumerate()
        .map(|(i, d)| {
            d.as_i64()
                .and_then(|d| usize::try_from(d).ok())
                .ok_or_else(|| {
                    field_err(
                        format!("shape[{}]", i + usize::from(streamed)),
                        "expected an integer ≥ 0 ('*' is allowed only first)",
                    )
                })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((dims, streamed))
}

/// The `strides` field: non-zero integers.
fn parse_strides(s: &Node) -> Result<Vec<i64>> {
    let items = s
        .as_seq()
        .ok_or_else(|| field_err("strides", "expected a list of non-zero integers"))?;
    items
        .iter()
        .enumerate()
        .map(|(i, d)| {
            d.as_i64()
                .filter(|&d| d != 0)
                .ok_or_else(|| field_err(format!("strides[{i}]"), "expected a non-zero integer"))
        })
        .collect()
}
