//! `AppendableArray`: numpy chunks of one dtype, concatenated.

use serde_json::{json, Map, Value as Json};

use crate::call::{schema_err_s, Args, Constructor, Val};
use crate::dtype::{DType, Primitive};
use crate::element::{numpy_element, numpy_values, oob, Budget, Value};
use crate::error::{Error, Result};
use crate::layout::{
    call, finish_form, form_node, lit, Awkward0Writer, Awkward2Writer, Class, Layout, Node,
};
use crate::numpy::NumpyArray;

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

/// awkward0's constructor: `AppendableArray(chunkshape, dtype, chunks)`.
pub(crate) const CONSTRUCTORS: &[Constructor] = &[Constructor {
    path: &["AppendableArray"],
    name: "AppendableArray",
    params: &["chunkshape", "dtype", "chunks"],
    required: 3,
    build: appendable,
}];

/// Numpy chunks of the array's dtype.
fn appendable(a: &Args<'_>) -> Result<Layout> {
    let chunkshape = match a.val(0) {
        Some(Val::Tuple(t)) | Some(Val::List(t)) => match t.first() {
            Some(Val::Json(j)) => j.as_u64(),
            _ => None,
        },
        Some(Val::Json(j)) => j.as_u64(),
        _ => None,
    }
    .and_then(|v| usize::try_from(v).ok())
    .ok_or_else(|| {
        schema_err_s(
            a.arg_loc(0),
            "chunkshape must be a non-negative integer (or a tuple starting with one)",
        )
    })?;
    let dtype = match a.val(1) {
        Some(Val::DType(d)) => d.clone(),
        other => return Err(a.wrong(1, "a dtype", other)),
    };
    let bad = |why: String| Error::invalid("AppendableArray", &a.loc, why);
    let mut chunks = Vec::new();
    for (i, c) in a.array_list(2)?.into_iter().enumerate() {
        let Layout::Numpy(n) = c.as_ref() else {
            let class = c.class_name();
            return Err(bad(format!(
                "chunk {i} must be a numpy array, found {class}"
            )));
        };
        if n.dtype().primitive != dtype.primitive || n.dtype().inner_shape != dtype.inner_shape {
            return Err(bad(format!(
                "chunk {i} has dtype {} but the array's is {}",
                n.dtype().to_json(),
                dtype.to_json()
            )));
        }
        chunks.push(n.clone());
    }
    Ok(Layout::Appendable(AppendableArray { chunkshape, chunks }))
}

impl Class for AppendableArray {
    fn name(&self) -> &'static str {
        "AppendableArray"
    }

    fn len(&self) -> usize {
        self.chunks
            .iter()
            .fold(0usize, |a, c| a.saturating_add(c.len()))
    }

    fn children(&self) -> Vec<&Node> {
        vec![]
    }

    fn validate_node(&self, location: &str) -> Result<()> {
        AppendableArray::validate_node(self, location)
    }

    /// One numpy leaf: the chunks concatenated.
    fn awkward2_form(&self, w: &mut dyn Awkward2Writer, depth: usize) -> Result<Json> {
        let _ = depth;
        let key = w.key();
        let mut data = Vec::new();
        for c in &self.chunks {
            data.extend_from_slice(&c.data().to_le_bytes());
        }
        let (prim, inner) = match self.chunks.first() {
            Some(c) => (c.dtype().primitive.clone(), c.dtype().inner_shape.clone()),
            None => (Primitive::F64, vec![]),
        };
        w.put(format!("{key}-data"), &data)?;
        let mut m = form_node("NumpyArray", &key);
        m.insert("primitive".into(), json!(prim.awkward2_name()));
        m.insert("inner_shape".into(), json!(inner));
        Ok(finish_form(m, json!({})))
    }

    fn element(&self, i: usize, _depth: usize, b: &mut Budget) -> Result<Value> {
        let mut k = i;
        for ch in &self.chunks {
            if k < ch.len() {
                b.take(numpy_values(ch) - 1, 0)?;
                return numpy_element(ch, k)
                    .ok_or_else(|| oob("AppendableArray", i, Class::len(self)));
            }
            k -= ch.len();
        }
        Err(oob("AppendableArray", i, Class::len(self)))
    }

    /// Its chunks without the empty ones, its dtype that of the first chunk.
    fn write_awkward0(
        &self,
        w: &mut dyn Awkward0Writer,
        _ctx: &str,
        _id: u64,
        _depth: usize,
    ) -> Result<Map<String, Json>> {
        let dtype = self
            .chunks
            .first()
            .map(|c| c.dtype().clone())
            .unwrap_or_else(|| DType::scalar(Primitive::F64));
        let mut chunks = Vec::new();
        for ch in self.chunks.iter().filter(|c| !c.is_empty()) {
            chunks.push(w.numpy(ch, "AppendableArray.chunk")?);
        }
        Ok(call(
            w.spec(&["AppendableArray"]),
            vec![
                json!({ "tuple": [lit(self.chunkshape)] }),
                json!({ "dtype": dtype.to_json() }),
                json!({ "list": chunks }),
            ],
        ))
    }
}
