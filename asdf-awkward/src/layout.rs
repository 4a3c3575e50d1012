//! The layout model: one Rust type per awkward0 class that carries data, plus the awkward 2
//! classes awkward0 lacks (in [`crate::classes`]).

use std::sync::Arc;

pub use crate::classes::{EmptyArray, Parameterized, RecordArray, RegularArray, UnmaskedArray};
use crate::error::{Error, Result};
use crate::numpy::NumpyArray;

/// Deepest layout nesting that validation, element access, writing and export will walk
/// (recursion is bounded so that hand-built layouts cannot overflow the stack).
pub const MAX_NESTING: usize = 1000;

/// A shared sub-array. Sharing (the same `Arc` in two places) is what awkward0's `ref` expresses,
/// and the writer turns it back into `{"ref": id}`.
pub type Node = Arc<Layout>;

/// List boundaries of a `JaggedArray` or `StringArray`.
#[derive(Debug, Clone, PartialEq)]
pub enum ListIndex {
    /// `offsets[i]..offsets[i+1]` (length = `offsets.len() - 1`); what `fromcounts` builds.
    Offsets(Vec<i64>),
    /// `starts[i]..stops[i]`; `stops` may be longer than `starts`.
    StartsStops {
        /// Start of each list.
        starts: Vec<i64>,
        /// Stop of each list.
        stops: Vec<i64>,
    },
}

impl ListIndex {
    /// Offsets from counts (`[0, cumsum(counts)]`), checked for negative counts and overflow.
    pub fn from_counts(counts: &[i64]) -> Option<ListIndex> {
        let mut offsets: Vec<i64> = Vec::with_capacity(counts.len().checked_add(1)?);
        array_core::advise_huge_pages(&offsets);
        let mut acc = 0i64;
        offsets.push(0);
        for &c in counts {
            if c < 0 {
                return None;
            }
            acc = acc.checked_add(c)?;
            offsets.push(acc);
        }
        Some(ListIndex::Offsets(offsets))
    }

    /// Number of lists.
    pub fn len(&self) -> usize {
        match self {
            ListIndex::Offsets(o) => o.len().saturating_sub(1),
            ListIndex::StartsStops { starts, .. } => starts.len(),
        }
    }

    /// Whether there are no lists.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `(start, stop)` of list `i`, unchecked against the content (see [`validate`](Self::validate)).
    pub fn range(&self, i: usize) -> Option<(i64, i64)> {
        match self {
            ListIndex::Offsets(o) => Some((*o.get(i)?, *o.get(i + 1)?)),
            ListIndex::StartsStops { starts, stops } => Some((*starts.get(i)?, *stops.get(i)?)),
        }
    }

    /// Checks every list against a content of `content_len` elements: `start <= stop`, and
    /// non-empty lists lie in `0..content_len`.
    pub fn validate(&self, class: &'static str, location: &str, content_len: usize) -> Result<()> {
        let clen = content_len as i64;
        match self {
            ListIndex::Offsets(o) => {
                if o.is_empty() {
                    return Err(Error::invalid(class, location, "offsets array is empty"));
                }
                // Fast check (vectorizable): non-negative, monotone, within the content.
                let monotone = o.windows(2).fold(true, |ok, w| ok & (w[0] <= w[1]));
                if monotone && o[0] >= 0 && o[o.len() - 1] <= clen {
                    return Ok(());
                }
                if o.len() == 1 && o[0] >= 0 {
                    return Ok(());
                }
                for (i, w) in o.windows(2).enumerate() {
                    check_range(class, location, i, w[0], w[1], clen)?;
                }
            }
            ListIndex::StartsStops { starts, stops } => {
                if stops.len() < starts.len() {
                    return Err(Error::invalid(
                        class,
                        location,
                        format!(
                            "stops has {} entries, fewer than starts ({})",
                            stops.len(),
                            starts.len()
                        ),
                    ));
                }
                for (i, (&a, &b)) in starts.iter().zip(stops).enumerate() {
                    check_range(class, location, i, a, b, clen)?;
                }
            }
        }
        Ok(())
    }

    /// Offsets if the lists are contiguous (`starts[i+1] == stops[i]`), as awkward0 checks
    /// before choosing `fromcounts`.
    pub(crate) fn contiguous_offsets(&self) -> Option<std::borrow::Cow<'_, [i64]>> {
        match self {
            ListIndex::Offsets(o) => Some(std::borrow::Cow::Borrowed(o)),
            ListIndex::StartsStops { starts, stops } => {
                if starts.is_empty() {
                    return None;
                }
                for i in 1..starts.len() {
                    if starts[i] != stops[i - 1] {
                        return None;
                    }
                }
                let mut o = starts.clone();
                o.push(stops[starts.len() - 1]);
                Some(std::borrow::Cow::Owned(o))
            }
        }
    }
}

fn check_range(
    class: &'static str,
    location: &str,
    i: usize,
    start: i64,
    stop: i64,
    clen: i64,
) -> Result<()> {
    if start < 0 || stop < start || (stop > start && stop > clen) {
        return Err(Error::invalid(
            class,
            location,
            format!("list {i} spans {start}..{stop}, outside the content of length {clen}"),
        ));
    }
    Ok(())
}

/// `JaggedArray`: variable-length lists over a content array.
#[derive(Debug, Clone, PartialEq)]
pub struct JaggedArray {
    /// List boundaries.
    pub index: ListIndex,
    /// The flattened elements.
    pub content: Node,
}

/// How a `Table` view selects rows of its base.
#[derive(Debug, Clone, PartialEq)]
pub enum TableView {
    /// Row `i` is base row `start + step·i`, for `length` rows.
    Slice {
        /// First row.
        start: i64,
        /// Stride (may be negative, not zero).
        step: i64,
        /// Number of rows.
        length: i64,
    },
    /// Row `i` is base row `index[i]`.
    Index(Vec<i64>),
}

/// `Table`: named columns (a record array), possibly a view of its base rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Columns in order.
    pub fields: Vec<(String, Node)>,
    /// awkward0's `rowstart` (row numbering only; no effect on values).
    pub rowstart: i64,
    /// Row selection, when the table is a view.
    pub view: Option<TableView>,
}

/// `ChunkedArray`: a logical concatenation of the first `chunksizes[i]` elements of each chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkedArray {
    /// The chunks.
    pub chunks: Vec<Node>,
    /// Elements used from each chunk (same length as `chunks`).
    pub chunksizes: Vec<usize>,
}

impl ChunkedArray {
    /// Checks that every chunk has its size and each size fits its chunk.
    pub fn validate_node(&self, location: &str) -> Result<()> {
        let (chunks, sizes) = (self.chunks.len(), self.chunksizes.len());
        if chunks != sizes {
            return Err(Error::invalid(
                "ChunkedArray",
                location,
                format!("{chunks} chunks but {sizes} chunk sizes"),
            ));
        }
        for (i, (ch, &n)) in self.chunks.iter().zip(&self.chunksizes).enumerate() {
            if n > ch.len() {
                return Err(Error::invalid(
                    "ChunkedArray",
                    location,
                    format!("chunk {i} has {} elements, chunk size says {n}", ch.len()),
                ));
            }
        }
        Ok(())
    }
}

/// `AppendableArray`: numpy chunks of one dtype, concatenated.
#[derive(Debug, Clone, PartialEq)]
pub struct AppendableArray {
    /// Allocation size of a chunk (awkward0 `chunkshape`), informational.
    pub chunkshape: usize,
    /// The filled chunks.
    pub chunks: Vec<NumpyArray>,
}

impl AppendableArray {
    /// Checks that every chunk has the first chunk's dtype.
    pub fn validate_node(&self, location: &str) -> Result<()> {
        let Some(first) = self.chunks.first() else {
            return Ok(());
        };
        match self.chunks.iter().position(|c| c.dtype() != first.dtype()) {
            Some(i) => Err(Error::invalid(
                "AppendableArray",
                location,
                format!("chunk {i} has a different dtype from chunk 0"),
            )),
            None => Ok(()),
        }
    }
}

/// `IndexedArray`: `value[i] = content[index[i]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexedArray {
    /// Positions into the content.
    pub index: Vec<i64>,
    /// The content.
    pub content: Node,
}

/// Default value of a [`SparseArray`].
#[derive(Debug, Clone, PartialEq)]
pub enum SparseDefault {
    /// awkward0's `None`: zero of the content's type (empty list for jagged content).
    Zero,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
}

/// `SparseArray`: `length` elements, `content[j]` at `index[j]`, the default elsewhere.
#[derive(Debug, Clone, PartialEq)]
pub struct SparseArray {
    /// Logical length.
    pub length: usize,
    /// Strictly increasing positions.
    pub index: Vec<i64>,
    /// Values at those positions.
    pub content: Node,
    /// Value everywhere else.
    pub default: SparseDefault,
}

impl SparseArray {
    /// Checks that the content holds a value per position and the positions are strictly
    /// increasing within the length.
    pub fn validate_node(&self, location: &str) -> Result<()> {
        if self.content.len() < self.index.len() {
            return Err(Error::invalid(
                "SparseArray",
                location,
                format!(
                    "{} positions but the content has {} elements",
                    self.index.len(),
                    self.content.len()
                ),
            ));
        }
        let mut prev = -1i64;
        for (j, &p) in self.index.iter().enumerate() {
            if p <= prev || p >= self.length as i64 {
                return Err(Error::invalid(
                    "SparseArray",
                    location,
                    format!(
                        "index[{j}] = {p} is not strictly increasing within 0..{}",
                        self.length
                    ),
                ));
            }
            prev = p;
        }
        Ok(())
    }
}

/// `UnionArray`: `value[i] = contents[tags[i]][index[i]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct UnionArray {
    /// Which content each element comes from.
    pub tags: Vec<u8>,
    /// Position in that content.
    pub index: Vec<i64>,
    /// The possible contents.
    pub contents: Vec<Node>,
}

impl UnionArray {
    /// Checks that every tag names a content and every index lies within its content.
    pub fn validate_node(&self, location: &str) -> Result<()> {
        let bad = |why: String| Error::invalid("UnionArray", location, why);
        if self.index.len() < self.tags.len() {
            return Err(bad(format!(
                "index has {} entries, fewer than tags ({})",
                self.index.len(),
                self.tags.len()
            )));
        }
        for (i, (&t, &ix)) in self.tags.iter().zip(&self.index).enumerate() {
            let Some(c) = self.contents.get(t as usize) else {
                let n = self.contents.len();
                return Err(bad(format!("tags[{i}] = {t} but there are {n} contents")));
            };
            if ix < 0 || ix as u64 >= c.len() as u64 {
                return Err(bad(format!(
                    "index[{i}] = {ix} is outside content {t} of length {}",
                    c.len()
                )));
            }
        }
        Ok(())
    }

    /// A union whose index is the running count per tag (`UnionArray.fromtags`).
    pub fn from_tags(tags: Vec<u8>, contents: Vec<Node>) -> UnionArray {
        let mut counters = vec![0i64; 256];
        let index = tags
            .iter()
            .map(|&t| {
                let c = &mut counters[t as usize];
                let v = *c;
                *c += 1;
                v
            })
            .collect();
        UnionArray {
            tags,
            index,
            contents,
        }
    }

    /// Whether the index is the running count per tag (written as `fromtags`).
    pub fn is_sequential(&self) -> bool {
        let mut counters = vec![0i64; 256];
        self.tags.len() <= self.index.len()
            && self.tags.iter().zip(&self.index).all(|(&t, &i)| {
                let c = &mut counters[t as usize];
                let ok = *c == i;
                *c += 1;
                ok
            })
    }
}

/// `MaskedArray`: `value[i]` is missing iff `mask[i] == masked_when`.
#[derive(Debug, Clone, PartialEq)]
pub struct MaskedArray {
    /// One flag per element.
    pub mask: Vec<bool>,
    /// The values.
    pub content: Node,
    /// Which flag value means "missing" (awkward0 default `true`).
    pub masked_when: bool,
}

impl MaskedArray {
    /// Checks that the content has an element under every mask entry.
    pub fn validate_node(&self, location: &str) -> Result<()> {
        if self.content.len() < self.mask.len() {
            return Err(Error::invalid(
                "MaskedArray",
                location,
                format!(
                    "mask has {} entries but the content only {}",
                    self.mask.len(),
                    self.content.len()
                ),
            ));
        }
        Ok(())
    }
}

/// `BitMaskedArray`: one bit per element, `length = len(content)`.
#[derive(Debug, Clone, PartialEq)]
pub struct BitMaskedArray {
    /// Packed bits, at least `⌈len/8⌉` bytes.
    pub mask: Vec<u8>,
    /// The values.
    pub content: Node,
    /// Which bit value means "missing" (awkward0 default `true`).
    pub masked_when: bool,
    /// `true`: bit `i%8` from the least significant end; `false`: numpy `packbits` order.
    pub lsb_order: bool,
}

impl BitMaskedArray {
    /// Checks that the mask has a bit for every element of the content.
    pub fn validate_node(&self, location: &str) -> Result<()> {
        let need = self.content.len().div_ceil(8);
        if self.mask.len() < need {
            return Err(Error::invalid(
                "BitMaskedArray",
                location,
                format!(
                    "mask has {} bytes, {need} needed for {} elements",
                    self.mask.len(),
                    self.content.len()
                ),
            ));
        }
        Ok(())
    }

    /// The bit of element `i`.
    pub fn bit(&self, i: usize) -> Option<bool> {
        let byte = *self.mask.get(i / 8)?;
        let shift = if self.lsb_order { i % 8 } else { 7 - i % 8 };
        Some((byte >> shift) & 1 == 1)
    }
}

/// `IndexedMaskedArray`: `value[i]` is missing iff `index[i] == masked_when`, else
/// `content[index[i]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexedMaskedArray {
    /// Positions (or `masked_when`).
    pub index: Vec<i64>,
    /// The values.
    pub content: Node,
    /// The index value that means "missing" (awkward0 default `-1`).
    pub masked_when: i64,
}

impl IndexedMaskedArray {
    /// Checks that every index is `masked_when` or lies within the content.
    pub fn validate_node(&self, location: &str) -> Result<()> {
        let clen = self.content.len() as u64;
        let outside =
            |&(_, &ix): &(usize, &i64)| ix != self.masked_when && (ix < 0 || ix as u64 >= clen);
        match self.index.iter().enumerate().find(outside) {
            Some((i, ix)) => Err(Error::invalid(
                "IndexedMaskedArray",
                location,
                format!(
                    "index[{i}] = {ix} is outside the content of length {clen} (and is not maskedwhen = {})",
                    self.masked_when
                ),
            )),
            None => Ok(()),
        }
    }
}

/// `StringArray`: lists of bytes, decoded with `encoding` (`None` = raw bytes).
#[derive(Debug, Clone, PartialEq)]
pub struct StringArray {
    /// String boundaries in `content`.
    pub index: ListIndex,
    /// The characters.
    pub content: Vec<u8>,
    /// `Some("utf-8")` for text, `None` for bytes.
    pub encoding: Option<String>,
}

impl StringArray {
    /// Checks the index against the content and that the encoding is one this crate decodes
    /// (utf-8, ascii, or none for raw bytes).
    pub fn validate_node(&self, location: &str) -> Result<()> {
        self.index
            .validate("StringArray", location, self.content.len())?;
        match self.encoding.as_deref() {
            None => Ok(()),
            Some(e) if is_utf8_name(e) || e.eq_ignore_ascii_case("ascii") => Ok(()),
            Some(e) => Err(Error::Unsupported {
                location: location.into(),
                what: format!("StringArray encoding {e:?} (only utf-8, ascii and raw bytes)"),
            }),
        }
    }

    /// UTF-8 strings.
    pub fn from_strs<S: AsRef<str>>(items: &[S]) -> StringArray {
        let mut content = Vec::new();
        let mut offsets = Vec::with_capacity(items.len() + 1);
        offsets.push(0i64);
        for s in items {
            content.extend_from_slice(s.as_ref().as_bytes());
            offsets.push(content.len() as i64);
        }
        StringArray {
            index: ListIndex::Offsets(offsets),
            content,
            encoding: Some("utf-8".into()),
        }
    }
}

/// One awkward0 array, as a tree (a DAG when sub-arrays are shared) of typed nodes.
#[derive(Debug, Clone, PartialEq)]
pub enum Layout {
    /// A numpy array (`numpy.frombuffer`).
    Numpy(NumpyArray),
    /// `JaggedArray`.
    Jagged(JaggedArray),
    /// `Table`.
    Table(Table),
    /// `ChunkedArray`.
    Chunked(ChunkedArray),
    /// `AppendableArray`.
    Appendable(AppendableArray),
    /// `IndexedArray`.
    Indexed(IndexedArray),
    /// `SparseArray`.
    Sparse(SparseArray),
    /// `UnionArray`.
    Union(UnionArray),
    /// `MaskedArray`.
    Masked(MaskedArray),
    /// `BitMaskedArray`.
    BitMasked(BitMaskedArray),
    /// `IndexedMaskedArray`.
    IndexedMasked(IndexedMaskedArray),
    /// `StringArray`.
    String(StringArray),
    /// awkward 2's `RegularArray` (no awkward0 class).
    Regular(RegularArray),
    /// awkward 2's `RecordArray` (awkward0's `Table` has no tuples and no explicit length).
    Record(RecordArray),
    /// awkward 2's `UnmaskedArray` (no awkward0 class).
    Unmasked(UnmaskedArray),
    /// awkward 2's `EmptyArray` (no awkward0 class).
    Empty(EmptyArray),
    /// awkward 2 parameters on a node (awkward0 has none).
    Parameters(Parameterized),
}

impl Layout {
    /// awkward0's class name of this node.
    pub fn class_name(&self) -> &'static str {
        match self {
            Layout::Numpy(_) => "numpy.ndarray",
            Layout::Jagged(_) => "JaggedArray",
            Layout::Table(_) => "Table",
            Layout::Chunked(_) => "ChunkedArray",
            Layout::Appendable(_) => "AppendableArray",
            Layout::Indexed(_) => "IndexedArray",
            Layout::Sparse(_) => "SparseArray",
            Layout::Union(_) => "UnionArray",
            Layout::Masked(_) => "MaskedArray",
            Layout::BitMasked(_) => "BitMaskedArray",
            Layout::IndexedMasked(_) => "IndexedMaskedArray",
            Layout::String(_) => "StringArray",
            Layout::Regular(_) => "RegularArray",
            Layout::Record(_) => "RecordArray",
            Layout::Unmasked(_) => "UnmaskedArray",
            Layout::Empty(_) => "EmptyArray",
            Layout::Parameters(_) => "parameters",
        }
    }

    /// Number of elements, following awkward0's rules (a Table has as many rows as its shortest
    /// column; a BitMaskedArray as many as its content; ...).
    pub fn len(&self) -> usize {
        match self {
            Layout::Numpy(a) => a.len(),
            Layout::Jagged(a) => a.index.len(),
            Layout::Table(t) => match &t.view {
                Some(TableView::Slice { length, .. }) => (*length).max(0) as usize,
                Some(TableView::Index(ix)) => ix.len(),
                None => t.base_len(),
            },
            Layout::Chunked(c) => c
                .chunksizes
                .iter()
                .fold(0usize, |a, &b| a.saturating_add(b)),
            Layout::Appendable(a) => a
                .chunks
                .iter()
                .fold(0usize, |a, c| a.saturating_add(c.len())),
            Layout::Indexed(a) => a.index.len(),
            Layout::Sparse(a) => a.length,
            Layout::Union(a) => a.tags.len(),
            Layout::Masked(a) => a.mask.len(),
            Layout::BitMasked(a) => a.content.len(),
            Layout::IndexedMasked(a) => a.index.len(),
            Layout::String(a) => a.index.len(),
            Layout::Regular(a) => a.length,
            Layout::Record(a) => a.length,
            Layout::Unmasked(a) => a.content.len(),
            Layout::Empty(_) => 0,
            Layout::Parameters(p) => p.content.len(),
        }
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checks this node's own invariants against its children's lengths (children are assumed
    /// valid: the reader validates bottom-up as it builds). `location` names the node in errors.
    pub fn validate_node(&self, location: &str) -> Result<()> {
        match self {
            Layout::Numpy(_) | Layout::Unmasked(_) | Layout::Empty(_) | Layout::Parameters(_) => {
                Ok(())
            }
            Layout::Regular(a) => a.validate_node(location),
            Layout::Record(a) => a.validate_node(location),
            Layout::Jagged(a) => a.index.validate("JaggedArray", location, a.content.len()),
            Layout::String(a) => a.validate_node(location),
            Layout::Table(t) => t.validate_node(location),
            Layout::Chunked(c) => c.validate_node(location),
            Layout::Appendable(a) => a.validate_node(location),
            Layout::Indexed(a) => check_index("IndexedArray", location, &a.index, a.content.len()),
            Layout::Sparse(a) => a.validate_node(location),
            Layout::Union(u) => u.validate_node(location),
            Layout::Masked(m) => m.validate_node(location),
            Layout::BitMasked(m) => m.validate_node(location),
            Layout::IndexedMasked(m) => m.validate_node(location),
        }
    }

    /// Validates the whole tree (every node, children first).
    pub fn validate(&self) -> Result<()> {
        let mut path = String::from("array");
        let mut seen = std::collections::HashSet::new();
        self.validate_rec(&mut path, 0, &mut seen)
    }

    fn validate_rec(
        &self,
        path: &mut String,
        depth: usize,
        seen: &mut std::collections::HashSet<*const Layout>,
    ) -> Result<()> {
        if depth > crate::layout::MAX_NESTING {
            return Err(Error::invalid(
                self.class_name(),
                path.as_str(),
                "nesting too deep",
            ));
        }
        // A shared sub-array is checked once, so a DAG costs its size, not its expansion.
        if !seen.insert(self as *const Layout) {
            return Ok(());
        }
        let base = path.len();
        for (i, child) in self.children().into_iter().enumerate() {
            path.push_str(&format!(".{i}"));
            child.validate_rec(path, depth + 1, seen)?;
            path.truncate(base);
        }
        self.validate_node(path)
    }

    /// The direct sub-arrays of this node, in serialization order.
    pub fn children(&self) -> Vec<&Node> {
        match self {
            Layout::Numpy(_) | Layout::String(_) | Layout::Appendable(_) | Layout::Empty(_) => {
                vec![]
            }
            Layout::Regular(a) => vec![&a.content],
            Layout::Record(a) => a.contents.iter().collect(),
            Layout::Unmasked(a) => vec![&a.content],
            Layout::Parameters(p) => vec![&p.content],
            Layout::Jagged(a) => vec![&a.content],
            Layout::Table(t) => t.fields.iter().map(|(_, c)| c).collect(),
            Layout::Chunked(c) => c.chunks.iter().collect(),
            Layout::Indexed(a) => vec![&a.content],
            Layout::Sparse(a) => vec![&a.content],
            Layout::Union(u) => u.contents.iter().collect(),
            Layout::Masked(m) => vec![&m.content],
            Layout::BitMasked(m) => vec![&m.content],
            Layout::IndexedMasked(m) => vec![&m.content],
        }
    }
}

impl Table {
    /// Checks that the view (a slice or an index) stays within the base rows.
    pub fn validate_node(&self, location: &str) -> Result<()> {
        let base = self.base_len() as i64;
        match &self.view {
            None => Ok(()),
            Some(TableView::Index(ix)) => check_index("Table", location, ix, base as usize),
            Some(TableView::Slice {
                start,
                step,
                length,
            }) => {
                let (start, step, length) = (*start, *step, *length);
                let bad = |why: &str| {
                    Error::invalid(
                        "Table",
                        location,
                        format!("view ({start}, {step}, {length}) {why}"),
                    )
                };
                if length < 0 || step == 0 {
                    return Err(bad("needs length >= 0 and step != 0"));
                }
                let last = (length - 1)
                    .checked_mul(step)
                    .and_then(|d| d.checked_add(start));
                let in_range = |r: i64| (0..base).contains(&r);
                if length > 0 && (!in_range(start) || !last.is_some_and(in_range)) {
                    return Err(bad(&format!("reaches outside the {base} base rows")));
                }
                Ok(())
            }
        }
    }

    /// Rows of the unviewed base: the shortest column's length (0 without columns).
    pub fn base_len(&self) -> usize {
        self.fields.iter().map(|(_, c)| c.len()).min().unwrap_or(0)
    }

    /// The base row of view row `i`.
    pub fn base_row(&self, i: usize) -> Option<usize> {
        match &self.view {
            None => Some(i),
            Some(TableView::Slice { start, step, .. }) => {
                let r = (i as i64).checked_mul(*step)?.checked_add(*start)?;
                usize::try_from(r).ok()
            }
            Some(TableView::Index(ix)) => usize::try_from(*ix.get(i)?).ok(),
        }
    }
}

fn check_index(class: &'static str, location: &str, index: &[i64], len: usize) -> Result<()> {
    for (i, &ix) in index.iter().enumerate() {
        if ix < 0 || ix as u64 >= len as u64 {
            return Err(Error::invalid(
                class,
                location,
                format!("index[{i}] = {ix} is outside the content of length {len}"),
            ));
        }
    }
    Ok(())
}

/// Whether a Python codec name means UTF-8 (how awkward0 names a string array's encoding).
pub(crate) fn is_utf8_name(e: &str) -> bool {
    matches!(
        e.to_ascii_lowercase().as_str(),
        "utf-8" | "utf8" | "utf_8" | "u8"
    )
}
