//! The layout model: [`Layout`], one variant per class, and the `Class` trait through which
//! every operation reaches a class's own module in [`crate::classes`].
//!
//! A class is one file in `classes/` (its struct, checks, element access, awkward0 constructors
//! and writer, awkward 2 form) plus one line in the `layout_classes!` list below; if awkward0 has
//! constructors for it, they are also listed in `read/dispatch.rs`'s table, the reader's single
//! list of what it accepts.

use std::sync::Arc;

use serde_json::{json, Map, Value as Json};

pub use crate::classes::{
    AppendableArray, BitMaskedArray, ChunkedArray, EmptyArray, IndexedArray, IndexedMaskedArray,
    JaggedArray, MaskedArray, Parameterized, RecordArray, RegularArray, SparseArray, SparseDefault,
    StringArray, Table, TableView, UnionArray, UnmaskedArray,
};
use crate::dtype::DType;
use crate::element::{numpy_element, numpy_values, oob, Budget, Value};
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

    /// The content range of list `i` as positions, checked against a content of `clen`
    /// elements (an empty list is `(0, 0)` wherever it points).
    pub(crate) fn element_range(
        &self,
        class: &'static str,
        i: usize,
        clen: usize,
    ) -> Result<(usize, usize)> {
        let (a, b) = self.range(i).ok_or_else(|| oob(class, i, self.len()))?;
        if a == b {
            return Ok((0, 0));
        }
        match (usize::try_from(a), usize::try_from(b)) {
            (Ok(a), Ok(b)) if a <= b && b <= clen => Ok((a, b)),
            _ => Err(Error::invalid(
                class,
                "array",
                format!("list {i} spans {a}..{b}, outside the content of length {clen}"),
            )),
        }
    }

    /// Explicit `(starts, stops)`, one entry per list (what awkward0's plain constructors take).
    pub(crate) fn starts_stops(&self) -> (Vec<i64>, Vec<i64>) {
        match self {
            ListIndex::Offsets(o) => {
                let n = o.len().saturating_sub(1);
                (o[..n].to_vec(), o.get(1..).unwrap_or(&[]).to_vec())
            }
            ListIndex::StartsStops { starts, stops } => {
                (starts.clone(), stops[..starts.len()].to_vec())
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

/// One class of array node: what every operation asks of it. Each class implements it in its
/// own module; [`Layout`] reaches it through `class()`.
pub(crate) trait Class {
    /// awkward0's class name (`"JaggedArray"`; awkward 2's name for classes awkward0 lacks).
    fn name(&self) -> &'static str;
    /// Number of elements, by the class's own rule.
    fn len(&self) -> usize;
    /// The direct sub-arrays, in serialization order.
    fn children(&self) -> Vec<&Node>;
    /// Checks the node's own invariants against its children's lengths (children are assumed
    /// valid: the reader validates bottom-up as it builds). `location` names it in errors.
    fn validate_node(&self, location: &str) -> Result<()>;
    /// Element `i` (the caller has checked `i < len()`); contents are read at `depth` through
    /// `Layout::get_depth`, and everything built is charged to `b` before it is built.
    fn element(&self, i: usize, depth: usize, b: &mut Budget) -> Result<Value>;
    /// The call that rebuilds this node (node `id`, `ctx` its place for compression rules) in
    /// awkward0's schema, children written first through `w`.
    fn write_awkward0(
        &self,
        w: &mut dyn Awkward0Writer,
        ctx: &str,
        id: u64,
        depth: usize,
    ) -> Result<Map<String, Json>> {
        let _ = (w, id, depth);
        Err(Error::Unsupported {
            location: ctx.into(),
            what: format!("{} in an awkward0 schema", self.name()),
        })
    }
    /// For a class awkward0 lacks: the awkward0 node written in its place (for parameters, which
    /// awkward0 has none of, the content itself).
    fn awkward0_stand_in(&self) -> Result<Option<Node>> {
        Ok(None)
    }
    /// This node's awkward 2 form (`ak.forms`, as `form.to_dict()` JSON), its buffers stored
    /// and its contents exported (at `depth`) through `w`.
    fn awkward2_form(&self, w: &mut dyn Awkward2Writer, depth: usize) -> Result<Json> {
        let _ = (w, depth);
        Err(awkward2_unsupported(format!(
            "{} cannot be exported",
            self.name()
        )))
    }
    /// For an indexed or optional class: the index it applies over its content (`-1` for a
    /// missing element). awkward 2 composes directly nested levels into one node.
    fn index_view(&self) -> Option<IndexOver> {
        None
    }
}

/// An index over a content, `-1` for a missing element: what an indexed or optional node
/// becomes in awkward 2, where directly nested levels compose into one `IndexedArray` or
/// `IndexedOptionArray`.
pub(crate) struct IndexOver {
    /// Position in the content of each element, or `-1`.
    pub(crate) index: Vec<i64>,
    /// The content.
    pub(crate) content: Node,
    /// Whether the node is an option type (else a plain `IndexedArray`).
    pub(crate) option: bool,
}

/// What a class needs from the awkward 2 exporter (`awkward2` implements it): form keys,
/// buffers, and the forms of its contents and of the shapes several classes share.
pub(crate) trait Awkward2Writer {
    /// A fresh form key (`node<N>`, in pre-order).
    fn key(&mut self) -> String;
    /// Hands over the buffer `name` (`<key>-<attribute>`, little-endian), borrowed for the call:
    /// the exporter copies it or writes it out at once.
    fn put(&mut self, name: String, bytes: &[u8]) -> Result<()>;
    /// The form of a content.
    fn form(&mut self, l: &Layout, depth: usize) -> Result<Json>;
    /// A `ListOffsetArray` or `ListArray` form node over `index` (its content not yet added).
    fn list(&mut self, key: &str, index: &ListIndex) -> Result<Map<String, Json>>;
    /// A `UnionArray` in awkward 2's canonical shape.
    fn union(&mut self, u: &UnionArray, depth: usize) -> Result<Json>;
    /// `top` and every index level directly below it, composed into one `IndexedArray` or
    /// `IndexedOptionArray` (pushed into a union below it, which awkward 2 requires).
    fn indexed(&mut self, top: IndexOver, depth: usize) -> Result<Json>;
}

/// A form node of `class` with form key `key` (its other fields follow).
pub(crate) fn form_node(class: &str, key: &str) -> Map<String, Json> {
    let mut m = Map::new();
    m.insert("class".into(), json!(class));
    m.insert("form_key".into(), json!(key));
    m
}

/// The finished form node: `parameters`, then the form key last, as awkward 2 orders them.
pub(crate) fn finish_form(mut m: Map<String, Json>, parameters: Json) -> Json {
    let key = m.remove("form_key").unwrap_or(Json::Null);
    m.insert("parameters".into(), parameters);
    m.insert("form_key".into(), key);
    Json::Object(m)
}

/// The error for a layout awkward 2 cannot represent.
pub(crate) fn awkward2_unsupported(what: impl Into<String>) -> Error {
    Error::Unsupported {
        location: "awkward 2 export".into(),
        what: what.into(),
    }
}

/// What a class needs from awkward0's serializer (`write` implements it): its dialect's call
/// specs, scalars with ids, blobs for its buffers, and its children written first.
pub(crate) trait Awkward0Writer {
    /// The spec of `awkward0.<path>` in the chosen dialect.
    fn spec(&self, path: &[&str]) -> Json;
    /// A scalar argument as awkward0 writes it (with an id, or a ref to an equal one).
    fn scalar(&mut self, v: Json) -> Json;
    /// A fresh numpy leaf of `count` elements of `dtype` from little-endian `bytes`.
    fn leaf(&mut self, dtype: &DType, count: usize, bytes: &[u8], ctx: &str) -> Result<Json>;
    /// The call of the numpy leaf that is node `id` itself.
    fn leaf_body(
        &mut self,
        dtype: &DType,
        count: usize,
        bytes: &[u8],
        ctx: &str,
        id: u64,
    ) -> Result<Map<String, Json>>;
    /// An `int64` index array as a fresh leaf.
    fn index(&mut self, v: &[i64], ctx: &str) -> Result<Json>;
    /// A numpy array as a fresh leaf.
    fn numpy(&mut self, a: &NumpyArray, ctx: &str) -> Result<Json>;
    /// A child node: written, or a ref to where it was written before.
    fn child(&mut self, n: &Node, ctx: &str, depth: usize) -> Result<Json>;
}

/// A `{"call": spec, "args": args}` expression.
pub(crate) fn call(spec: Json, args: Vec<Json>) -> Map<String, Json> {
    let mut m = Map::new();
    m.insert("call".into(), spec);
    m.insert("args".into(), Json::Array(args));
    m
}

/// A `{"json": v}` literal.
pub(crate) fn lit(v: impl Into<Json>) -> Json {
    json!({ "json": v.into() })
}

/// Declares [`Layout`] with one variant per class, and its dispatch to each class's `Class`
/// implementation: registering a class is one line here.
macro_rules! layout_classes {
    ($( $(#[$doc:meta])* $variant:ident($ty:ty), )*) => {
        /// One array, as a tree (a DAG when sub-arrays are shared) of typed nodes: awkward0's
        /// classes plus the awkward 2 classes awkward0 lacks.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Layout {
            $( $(#[$doc])* $variant($ty), )*
        }

        impl Layout {
            /// The node's class.
            pub(crate) fn class(&self) -> &dyn Class {
                match self {
                    $( Layout::$variant(a) => a, )*
                }
            }
        }
    };
}

layout_classes! {
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

/// A numpy leaf: its module is [`crate::numpy`], which stays below the layout model.
impl Class for NumpyArray {
    fn name(&self) -> &'static str {
        "numpy.ndarray"
    }
    fn len(&self) -> usize {
        NumpyArray::len(self)
    }
    fn children(&self) -> Vec<&Node> {
        vec![]
    }
    fn validate_node(&self, _location: &str) -> Result<()> {
        Ok(())
    }
    fn awkward2_form(&self, w: &mut dyn Awkward2Writer, _depth: usize) -> Result<Json> {
        let key = w.key();
        w.put(format!("{key}-data"), &self.data().as_le_bytes())?;
        let mut m = form_node("NumpyArray", &key);
        m.insert(
            "primitive".into(),
            json!(self.dtype().primitive.awkward2_name()),
        );
        m.insert("inner_shape".into(), json!(self.dtype().inner_shape));
        Ok(finish_form(m, json!({})))
    }
    fn element(&self, i: usize, _depth: usize, b: &mut Budget) -> Result<Value> {
        b.take(numpy_values(self) - 1, 0)?;
        numpy_element(self, i).ok_or_else(|| oob("numpy.ndarray", i, NumpyArray::len(self)))
    }
    fn write_awkward0(
        &self,
        w: &mut dyn Awkward0Writer,
        ctx: &str,
        id: u64,
        _depth: usize,
    ) -> Result<Map<String, Json>> {
        let bytes = self.data().as_le_bytes();
        w.leaf_body(self.dtype(), NumpyArray::len(self), &bytes, ctx, id)
    }
}

impl Layout {
    /// awkward0's class name of this node.
    pub fn class_name(&self) -> &'static str {
        self.class().name()
    }

    /// Number of elements, following awkward0's rules (a Table has as many rows as its shortest
    /// column; a BitMaskedArray as many as its content; ...).
    pub fn len(&self) -> usize {
        self.class().len()
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checks this node's own invariants against its children's lengths (children are assumed
    /// valid: the reader validates bottom-up as it builds). `location` names the node in errors.
    pub fn validate_node(&self, location: &str) -> Result<()> {
        self.class().validate_node(location)
    }

    /// The direct sub-arrays of this node, in serialization order.
    pub fn children(&self) -> Vec<&Node> {
        self.class().children()
    }

    /// This node without the parameter wrappers around it.
    pub(crate) fn without_parameters(&self) -> &Layout {
        let mut l = self;
        while let Layout::Parameters(p) = l {
            l = &p.content;
        }
        l
    }

    /// Whether this node exports to awkward 2 as an option type (directly, or through a chain
    /// of indexed nodes).
    pub(crate) fn exports_as_option(&self) -> bool {
        let mut cur = self.without_parameters().class().index_view();
        let mut guard = 0;
        while let Some(io) = cur {
            if io.option {
                return true;
            }
            guard += 1;
            if guard > MAX_NESTING {
                return false;
            }
            cur = io.content.class().index_view();
        }
        false
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
}

/// Checks that every entry of `index` lies in `0..len` (an `IndexedArray`, a `Table` view).
pub(crate) fn check_index(
    class: &'static str,
    location: &str,
    index: &[i64],
    len: usize,
) -> Result<()> {
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
