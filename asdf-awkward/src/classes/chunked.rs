//! `ChunkedArray`: a logical concatenation of the first `chunksizes[i]` elements of each chunk.

use serde_json::{json, Map, Value as Json};

use crate::call::{schema_err_s, Args, Constructor, Val};
use crate::element::{oob, Budget, Value};
use crate::error::{Error, Result};
use crate::layout::{
    awkward2_unsupported, call, lit, Awkward0Writer, Awkward2Writer, Class, Layout, Node,
};

/// `ChunkedArray`: a logical concatenation of the first `chunksizes[i]` elements of each chunk.
///
/// ```
/// use std::sync::Arc;
/// use asdf_awkward::{Buffer, ChunkedArray, Layout, NumpyArray};
/// let a = Arc::new(Layout::Numpy(NumpyArray::from_vec(Buffer::I64(vec![1, 2, 3]))));
/// let b = Arc::new(Layout::Numpy(NumpyArray::from_vec(Buffer::I64(vec![4]))));
/// let c = Layout::Chunked(ChunkedArray { chunks: vec![a, b], chunksizes: vec![2, 1] });
/// assert_eq!(c.to_json().unwrap(), serde_json::json!([1, 2, 4]));
/// ```
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

/// awkward0's constructor: `ChunkedArray(chunks, chunksizes)`.
pub(crate) const CONSTRUCTORS: &[Constructor] = &[Constructor {
    path: &["ChunkedArray"],
    name: "ChunkedArray",
    params: &["chunks", "chunksizes"],
    required: 1,
    build: chunked,
}];

/// Without sizes, each chunk's whole length.
fn chunked(a: &Args<'_>) -> Result<Layout> {
    let chunks = a.array_list(0)?;
    let sizes = match a.val(1) {
        None => vec![],
        Some(Val::Json(Json::Array(s))) => s
            .iter()
            .map(|x| x.as_u64().and_then(|v| usize::try_from(v).ok()))
            .collect::<Option<Vec<usize>>>()
            .ok_or_else(|| {
                schema_err_s(a.arg_loc(1), "chunk sizes must be non-negative integers")
            })?,
        other => return Err(a.wrong(1, "a JSON list of chunk sizes", other)),
    };
    let chunksizes = if sizes.is_empty() && !chunks.is_empty() {
        chunks.iter().map(|c| c.len()).collect()
    } else {
        sizes
    };
    Ok(Layout::Chunked(ChunkedArray { chunks, chunksizes }))
}

impl Class for ChunkedArray {
    fn name(&self) -> &'static str {
        "ChunkedArray"
    }

    fn len(&self) -> usize {
        self.chunksizes
            .iter()
            .fold(0usize, |a, &b| a.saturating_add(b))
    }

    fn children(&self) -> Vec<&Node> {
        self.chunks.iter().collect()
    }

    fn validate_node(&self, location: &str) -> Result<()> {
        ChunkedArray::validate_node(self, location)
    }

    fn awkward2_form(&self, w: &mut dyn Awkward2Writer, depth: usize) -> Result<Json> {
        let _ = (w, depth);
        Err(awkward2_unsupported(
            "ChunkedArray has no awkward 2 form (awkward 2 has no chunked node; concatenate first)",
        ))
    }

    fn element(&self, i: usize, depth: usize, b: &mut Budget) -> Result<Value> {
        let mut k = i;
        for (ch, &n) in self.chunks.iter().zip(&self.chunksizes) {
            if k < n {
                return ch.get_depth(k, depth, b);
            }
            k -= n;
        }
        Err(oob("ChunkedArray", i, Class::len(self)))
    }

    /// Its chunks and sizes, without the empty chunks.
    fn write_awkward0(
        &self,
        w: &mut dyn Awkward0Writer,
        _ctx: &str,
        _id: u64,
        depth: usize,
    ) -> Result<Map<String, Json>> {
        let mut chunks = Vec::new();
        let mut sizes = Vec::new();
        for (ch, &n) in self.chunks.iter().zip(&self.chunksizes) {
            if n > 0 {
                chunks.push(w.child(ch, "ChunkedArray.chunk", depth)?);
                sizes.push(n);
            }
        }
        Ok(call(
            w.spec(&["ChunkedArray"]),
            vec![json!({ "list": chunks }), lit(sizes)],
        ))
    }
}
