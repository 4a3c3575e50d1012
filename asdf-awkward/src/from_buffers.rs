//! Import of awkward 2's persistence, `ak.to_buffers` output: a form (JSON), a length and named
//! buffers, read into the crate's [`Layout`]. The inverse of [`to_awkward2`](crate::to_awkward2).
//!
//! Every form class of `ak.forms` is read: `NumpyArray` (inner shapes, every primitive this crate
//! holds), `EmptyArray`, `ListOffsetArray`, `ListArray`, `RegularArray`, `RecordArray` (named and
//! tuple), `IndexedArray`, `IndexedOptionArray`, `ByteMaskedArray`, `BitMaskedArray` (both bit
//! orders), `UnmaskedArray` and `UnionArray`, with awkward 1 class names (`ListOffsetArray64`,
//! `UnionArray8_64`, ...) accepted as aliases. Parameters are kept ([`Parameterized`](crate::layout::Parameterized)); lists
//! with `__array__: "string"`/`"bytestring"` over `uint8` `"char"`/`"byte"` become
//! [`StringArray`]s. Index buffers of any allowed width (`i8`, `u8`, `i32`, `u32`, `i64`) are
//! widened to `i64`.
//!
//! Input is untrusted: each buffer's size is checked against what the form and length need
//! *before* it is read (nothing is allocated from a declared size alone), every offset, index and
//! tag is checked against the content it points into, nesting and buffer sizes are bounded by
//! [`Limits`], and an error names the form node (`form.content.contents[1]`) and what is wrong.
//! Child lengths follow `ak.from_buffers`: `offsets[-1]` under a `ListOffsetArray`, the largest
//! stop of a non-empty list under a `ListArray`, `length · size` under a `RegularArray`,
//! `max(index) + 1` under indexed nodes and per union tag.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::{Map, Value as Json};

use crate::dtype::{ByteOrder, DType, Primitive};
use crate::error::{Error, Result};
use crate::layout::{
    BitMaskedArray, EmptyArray, IndexedArray, IndexedMaskedArray, JaggedArray, Layout, ListIndex,
    MaskedArray, RecordArray, RegularArray, StringArray, UnionArray, UnmaskedArray,
};
use crate::limits::Limits;
use crate::numpy::NumpyArray;
use crate::store::BlobStore;

/// awkward 2's default `buffer_key` template.
pub const DEFAULT_BUFFER_KEY: &str = "{form_key}-{attribute}";

/// How [`from_buffers`] finds buffers and what it accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FromBuffersOptions {
    /// Buffer names: `{form_key}` and `{attribute}` are replaced, as in `ak.from_buffers`.
    pub buffer_key: String,
    /// Ceilings: `max_depth` (form nesting), `max_schema_bytes` (form JSON text),
    /// `max_blob_bytes` (one buffer), `max_total_bytes` (all buffers).
    pub limits: Limits,
}

impl Default for FromBuffersOptions {
    fn default() -> Self {
        FromBuffersOptions {
            buffer_key: DEFAULT_BUFFER_KEY.into(),
            limits: Limits::default(),
        }
    }
}

/// Reads `ak.to_buffers` output: `form` (the form as JSON, or a JSON string holding it, as
/// `form.to_json()` gives), the top-level `length`, and buffers found in `store` by key.
///
/// ```
/// use asdf_awkward::{from_buffers, to_awkward2, FromBuffersOptions, Layout, MemoryStore};
/// let a = Layout::from_json(&serde_json::json!([[1.5, 2.5], [], null, [3.5]])).unwrap();
/// let b = to_awkward2(&a).unwrap();
/// let store = MemoryStore { blobs: b.buffers };
/// let back = from_buffers(&b.form, b.length, &store, &FromBuffersOptions::default()).unwrap();
/// assert_eq!(back.to_json().unwrap(), a.to_json().unwrap());
/// ```
pub fn from_buffers(
    form: &Json,
    length: usize,
    store: &dyn BlobStore,
    opts: &FromBuffersOptions,
) -> Result<Layout> {
    let parsed;
    let form = match form {
        Json::String(text) => {
            parsed = parse_form(text, &opts.limits)?;
            &parsed
        }
        other => other,
    };
    let mut imp = Importer {
        store,
        opts,
        total: 0,
    };
    // Each node is validated as it is built, children first.
    imp.node(form, "form", length, 0)
}

/// [`from_buffers`] over buffers held in memory (what [`to_awkward2`](crate::to_awkward2) gives).
pub fn from_awkward2(b: &crate::Awkward2Buffers) -> Result<Layout> {
    let store = BorrowedBuffers(&b.buffers);
    from_buffers(&b.form, b.length, &store, &FromBuffersOptions::default())
}

struct BorrowedBuffers<'a>(&'a std::collections::BTreeMap<String, Vec<u8>>);

impl BlobStore for BorrowedBuffers<'_> {
    fn get(&self, name: &str, max_bytes: u64) -> Result<Option<Cow<'_, [u8]>>> {
        match self.0.get(name) {
            None => Ok(None),
            Some(b) => {
                crate::store::check_size(name, b.len() as u64, max_bytes)?;
                Ok(Some(Cow::Borrowed(b)))
            }
        }
    }
    fn names(&self) -> Result<Vec<String>> {
        Ok(self.0.keys().cloned().collect())
    }
    fn size(&self, name: &str) -> Result<Option<u64>> {
        Ok(self.0.get(name).map(|b| b.len() as u64))
    }
}

/// Parses a form's JSON text (`form.to_json()`), bounded by `limits.max_schema_bytes`;
/// serde_json's own recursion limit refuses pathologically deep documents.
pub fn parse_form(text: &str, limits: &Limits) -> Result<Json> {
    if text.len() as u64 > limits.max_schema_bytes {
        return Err(Error::Limit {
            location: "form".into(),
            what: "form JSON bytes",
            value: text.len() as u64,
            limit: limits.max_schema_bytes,
        });
    }
    serde_json::from_str(text).map_err(|e| form_err("form", format!("not valid JSON: {e}")))
}

pub(crate) fn form_err(location: &str, message: impl Into<String>) -> Error {
    Error::Form {
        location: location.into(),
        message: message.into(),
    }
}

/// The awkward 2 class for a class name, accepting awkward 1 names with width suffixes.
fn canonical_class(name: &str) -> Option<&'static str> {
    const CLASSES: &[&str] = &[
        "NumpyArray",
        "EmptyArray",
        "ListOffsetArray",
        "ListArray",
        "RegularArray",
        "RecordArray",
        "IndexedOptionArray",
        "IndexedArray",
        "ByteMaskedArray",
        "BitMaskedArray",
        "UnmaskedArray",
        "UnionArray",
    ];
    const SUFFIXES: &[&str] = &["", "32", "U32", "64", "8_32", "8_U32", "8_64"];
    CLASSES.iter().copied().find(|c| {
        name.strip_prefix(c)
            .is_some_and(|rest| SUFFIXES.contains(&rest))
    })
}

/// awkward 2 primitive names (numpy's) to this crate's primitives.
fn primitive(name: &str) -> Option<Primitive> {
    Some(match name {
        "bool" => Primitive::Bool,
        "int8" => Primitive::I8,
        "uint8" => Primitive::U8,
        "int16" => Primitive::I16,
        "uint16" => Primitive::U16,
        "int32" => Primitive::I32,
        "uint32" => Primitive::U32,
        "int64" => Primitive::I64,
        "uint64" => Primitive::U64,
        "float16" => Primitive::F16,
        "float32" => Primitive::F32,
        "float64" => Primitive::F64,
        "complex64" => Primitive::C64,
        "complex128" => Primitive::C128,
        other => {
            let json = Json::String(other.to_string());
            let d = DType::from_json(&json).ok()?;
            match d.primitive {
                p @ (Primitive::DateTime64(_) | Primitive::TimeDelta64(_))
                    if d.inner_shape.is_empty() && d.order == ByteOrder::Little =>
                {
                    p
                }
                _ => return None,
            }
        }
    })
}

/// An index buffer's element type (`"i8"`, `"u8"`, `"i32"`, `"u32"`, `"i64"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum IndexType {
    I8,
    U8,
    I32,
    U32,
    I64,
}

impl IndexType {
    fn parse(s: &str) -> Option<IndexType> {
        Some(match s {
            "i8" => IndexType::I8,
            "u8" => IndexType::U8,
            "i32" => IndexType::I32,
            "u32" => IndexType::U32,
            "i64" => IndexType::I64,
            _ => return None,
        })
    }

    fn size(self) -> usize {
        match self {
            IndexType::I8 | IndexType::U8 => 1,
            IndexType::I32 | IndexType::U32 => 4,
            IndexType::I64 => 8,
        }
    }

    fn decode(self, bytes: &[u8]) -> Vec<i64> {
        match self {
            IndexType::I8 => bytes.iter().map(|&b| b as i8 as i64).collect(),
            IndexType::U8 => bytes.iter().map(|&b| b as i64).collect(),
            IndexType::I32 => bytes
                .chunks_exact(4)
                .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as i64)
                .collect(),
            IndexType::U32 => bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as i64)
                .collect(),
            IndexType::I64 => bytes
                .chunks_exact(8)
                .map(|c| i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
                .collect(),
        }
    }
}

/// One form node's JSON object, with where it is.
struct FormNode<'f> {
    obj: &'f Map<String, Json>,
    loc: String,
    class: &'static str,
}

impl<'f> FormNode<'f> {
    fn get(&self, key: &str) -> Result<&'f Json> {
        self.obj
            .get(key)
            .ok_or_else(|| form_err(&self.loc, format!("{} needs a {key:?} entry", self.class)))
    }

    fn content(&self) -> Result<&'f Json> {
        self.get("content")
    }

    fn bool(&self, key: &str) -> Result<bool> {
        self.get(key)?
            .as_bool()
            .ok_or_else(|| form_err(&self.loc, format!("{key:?} must be true or false")))
    }

    fn index_type(&self, key: &str, allowed: &[&str]) -> Result<IndexType> {
        let v = self.get(key)?;
        match v.as_str() {
            Some(s) if allowed.contains(&s) => IndexType::parse(s)
                .ok_or_else(|| form_err(&self.loc, format!("unknown index type {s:?}"))),
            _ => Err(form_err(
                &self.loc,
                format!(
                    "{} {key:?} must be one of {allowed:?}, found {v}",
                    self.class
                ),
            )),
        }
    }

    fn parameters(&self) -> Result<Map<String, Json>> {
        match self.obj.get("parameters") {
            None | Some(Json::Null) => Ok(Map::new()),
            Some(Json::Object(m)) => Ok(m.clone()),
            Some(other) => Err(form_err(
                &self.loc,
                format!("\"parameters\" must be an object, found {other}"),
            )),
        }
    }

    fn form_key(&self) -> Result<Option<&'f str>> {
        match self.obj.get("form_key") {
            None | Some(Json::Null) => Ok(None),
            Some(Json::String(s)) => Ok(Some(s)),
            Some(other) => Err(form_err(
                &self.loc,
                format!("\"form_key\" must be a string or null, found {other}"),
            )),
        }
    }
}

struct Importer<'a> {
    // Buffers borrowed from the store live as long as it does.
    store: &'a dyn BlobStore,
    opts: &'a FromBuffersOptions,
    /// Buffer bytes read so far (against `limits.max_total_bytes`).
    total: u64,
}

impl<'a> Importer<'a> {
    /// The key of buffer `attribute` of `node`, after charging `need` bytes to the limits.
    fn key(&mut self, node: &FormNode<'_>, attribute: &str, need: u64) -> Result<String> {
        let fk = node.form_key()?.ok_or_else(|| {
            form_err(
                &node.loc,
                format!(
                    "{} has no form_key, so its {attribute:?} buffer cannot be found",
                    node.class
                ),
            )
        })?;
        let key = self
            .opts
            .buffer_key
            .replace("{form_key}", fk)
            .replace("{attribute}", attribute);
        let limits = &self.opts.limits;
        if need > limits.max_blob_bytes {
            return Err(Error::Limit {
                location: format!("{} (buffer {key:?})", node.loc),
                what: "buffer bytes the form needs",
                value: need,
                limit: limits.max_blob_bytes,
            });
        }
        self.total = self.total.saturating_add(need);
        if self.total > limits.max_total_bytes {
            return Err(Error::Limit {
                location: node.loc.clone(),
                what: "total buffer bytes",
                value: self.total,
                limit: limits.max_total_bytes,
            });
        }
        Ok(key)
    }

    fn short(node: &FormNode<'_>, key: String, have: u64, need: u64) -> Error {
        Error::Blob {
            name: key,
            message: format!(
                "has {have} bytes, the {} at {} needs {need}",
                node.class, node.loc
            ),
        }
    }

    /// The first `need` bytes of buffer `attribute` of `node` (borrowed when the store holds
    /// them in memory), after checking its size.
    fn buffer<'s>(
        &mut self,
        node: &FormNode<'_>,
        attribute: &str,
        need: u64,
    ) -> Result<Cow<'s, [u8]>>
    where
        'a: 's,
    {
        let key = self.key(node, attribute, need)?;
        // The store checks the stored size against the limit before reading it.
        let bytes = self
            .store
            .get(&key, self.opts.limits.max_blob_bytes)?
            .ok_or_else(|| Error::MissingBlob { name: key.clone() })?;
        if (bytes.len() as u64) < need {
            return Err(Self::short(node, key, bytes.len() as u64, need));
        }
        let need = need as usize;
        Ok(match bytes {
            Cow::Borrowed(b) => Cow::Borrowed(&b[..need]),
            Cow::Owned(mut v) => {
                v.truncate(need);
                Cow::Owned(v)
            }
        })
    }

    /// `scalars` values of `prim` from buffer `attribute`, read straight into typed memory
    /// (one copy from the store) once the stored size is known to cover them.
    fn typed(
        &mut self,
        node: &FormNode<'_>,
        attribute: &str,
        prim: &Primitive,
        scalars: usize,
    ) -> Result<crate::numpy::Buffer> {
        let need = (scalars as u64)
            .checked_mul(prim.itemsize() as u64)
            .ok_or_else(|| form_err(&node.loc, "buffer size overflows"))?;
        if matches!(prim, Primitive::Bool) {
            // `bool` cannot be filled in place (its bytes must be checked): decode a copy.
            let bytes = self.buffer(node, attribute, need)?;
            return Ok(crate::numpy::Buffer::decode(
                prim,
                ByteOrder::Little,
                &bytes,
            ));
        }
        let key = self.key(node, attribute, need)?;
        let have = self
            .store
            .size(&key)?
            .ok_or_else(|| Error::MissingBlob { name: key.clone() })?;
        if have < need {
            return Err(Self::short(node, key, have, need));
        }
        // `need` bytes are stored, so this allocation is backed by real data.
        let mut out = crate::numpy::Buffer::zeroed(prim, scalars)
            .ok_or_else(|| form_err(&node.loc, "cannot hold this primitive in place"))?;
        if let Some(bytes) = out.bytes_mut() {
            self.store.read_into(&key, bytes)?;
        }
        out.fix_order(ByteOrder::Little);
        Ok(out)
    }

    /// `count` entries of index buffer `attribute`, widened to `i64`.
    fn index(
        &mut self,
        node: &FormNode<'_>,
        attribute: &str,
        ty: IndexType,
        count: usize,
    ) -> Result<Vec<i64>> {
        if ty == IndexType::I64 {
            return match self.typed(node, attribute, &Primitive::I64, count)? {
                crate::numpy::Buffer::I64(v) => Ok(v),
                _ => Err(form_err(&node.loc, "int64 index read as another type")),
            };
        }
        let need = (count as u64)
            .checked_mul(ty.size() as u64)
            .ok_or_else(|| form_err(&node.loc, "index size overflows"))?;
        let bytes = self.buffer(node, attribute, need)?;
        Ok(ty.decode(&bytes))
    }

    /// One form node: checks, then dispatch to the class.
    fn node(&mut self, form: &Json, loc: &str, length: usize, depth: usize) -> Result<Layout> {
        if depth > self.opts.limits.max_depth {
            return Err(Error::Limit {
                location: loc.into(),
                what: "form nesting depth",
                value: depth as u64,
                limit: self.opts.limits.max_depth as u64,
            });
        }
        let (obj, class) = form_class(form, loc)?;
        let n = FormNode {
            obj,
            loc: loc.to_string(),
            class,
        };
        let d = depth + 1;
        let parameters = n.parameters()?;
        let layout = match class {
            "NumpyArray" => self.numpy(&n, length)?,
            "EmptyArray" if length != 0 => {
                return Err(Error::invalid(
                    "EmptyArray",
                    loc,
                    format!("an EmptyArray must have length 0, the form says {length}"),
                ))
            }
            "EmptyArray" => Layout::Empty(EmptyArray),
            "ListOffsetArray" | "ListArray" => {
                let index = self.list_index(&n, length)?;
                return self.list(&n, index, parameters, d);
            }
            "RegularArray" => self.regular(&n, length, d)?,
            "RecordArray" => self.record(&n, length, d)?,
            "IndexedArray" | "IndexedOptionArray" => self.indexed(&n, length, d)?,
            "ByteMaskedArray" | "BitMaskedArray" => self.masked(&n, length, d)?,
            "UnmaskedArray" => Layout::Unmasked(UnmaskedArray {
                content: self.child(n.content()?, &n.loc, ".content", length, d)?,
            }),
            "UnionArray" => self.union(&n, length, d)?,
            other => return Err(form_err(loc, format!("unhandled form class {other:?}"))),
        };
        layout.validate_node(loc)?;
        Ok(layout.with_parameters(parameters))
    }

    /// The offsets (`ListOffsetArray`) or starts and stops (`ListArray`) of `length` lists.
    fn list_index(&mut self, n: &FormNode<'_>, length: usize) -> Result<ListIndex> {
        if n.class == "ListOffsetArray" {
            let ty = n.index_type("offsets", &["i32", "u32", "i64"])?;
            let count = length
                .checked_add(1)
                .ok_or_else(|| form_err(&n.loc, "length overflows"))?;
            return Ok(ListIndex::Offsets(self.index(n, "offsets", ty, count)?));
        }
        let ty = n.index_type("starts", &["i32", "u32", "i64"])?;
        let ty2 = n.index_type("stops", &["i32", "u32", "i64"])?;
        let starts = self.index(n, "starts", ty, length)?;
        let stops = self.index(n, "stops", ty2, length)?;
        Ok(ListIndex::StartsStops { starts, stops })
    }

    fn masked(&mut self, n: &FormNode<'_>, length: usize, d: usize) -> Result<Layout> {
        let valid_when = n.bool("valid_when")?;
        if n.class == "ByteMaskedArray" {
            n.index_type("mask", &["i8"])?;
            let mask = self.buffer(n, "mask", length as u64)?;
            let content = self.child(n.content()?, &n.loc, ".content", length, d)?;
            return Ok(Layout::Masked(MaskedArray {
                mask: mask.iter().map(|&b| b != 0).collect(),
                content,
                masked_when: !valid_when,
            }));
        }
        n.index_type("mask", &["u8"])?;
        let mask = self.buffer(n, "mask", length.div_ceil(8) as u64)?;
        let lsb_order = n.bool("lsb_order")?;
        let content = self.child(n.content()?, &n.loc, ".content", length, d)?;
        Ok(Layout::BitMasked(BitMaskedArray {
            mask: mask.into_owned(),
            content,
            masked_when: !valid_when,
            lsb_order,
        }))
    }

    fn child(
        &mut self,
        form: &Json,
        loc: &str,
        step: &str,
        length: usize,
        depth: usize,
    ) -> Result<Arc<Layout>> {
        Ok(Arc::new(self.node(
            form,
            &format!("{loc}{step}"),
            length,
            depth,
        )?))
    }

    fn numpy(&mut self, n: &FormNode<'_>, length: usize) -> Result<Layout> {
        let name = n
            .get("primitive")?
            .as_str()
            .ok_or_else(|| form_err(&n.loc, "\"primitive\" must be a string"))?;
        let prim = primitive(name)
            .ok_or_else(|| form_err(&n.loc, format!("unsupported primitive {name:?}")))?;
        let inner_shape = match n.obj.get("inner_shape") {
            None | Some(Json::Null) => Vec::new(),
            Some(Json::Array(dims)) => dims
                .iter()
                .map(|d| d.as_u64().and_then(|x| usize::try_from(x).ok()))
                .collect::<Option<Vec<usize>>>()
                .ok_or_else(|| {
                    form_err(
                        &n.loc,
                        "\"inner_shape\" must be a list of non-negative integers",
                    )
                })?,
            Some(other) => {
                return Err(form_err(
                    &n.loc,
                    format!("\"inner_shape\" must be a list, found {other}"),
                ))
            }
        };
        let dtype = DType {
            primitive: prim,
            order: ByteOrder::Little,
            inner_shape,
        };
        let scalars = dtype
            .inner_size()
            .and_then(|e| e.checked_mul(length))
            .ok_or_else(|| form_err(&n.loc, "data size overflows"))?;
        let data = self.typed(n, "data", &dtype.primitive, scalars)?;
        Ok(Layout::Numpy(NumpyArray::from_parts(&dtype, data, length)))
    }

    fn list(
        &mut self,
        n: &FormNode<'_>,
        index: ListIndex,
        parameters: Map<String, Json>,
        d: usize,
    ) -> Result<Layout> {
        let next = list_content_length(&index, &n.loc, n.class)?;
        let content_form = n.content()?;
        let content = self.child(content_form, &n.loc, ".content", next, d)?;
        index.validate(n.class, &n.loc, content.len())?;
        if let Some((encoding, rest)) = string_kind(&parameters, &content) {
            let layout = Layout::String(StringArray {
                index,
                content: take_u8(content),
                encoding,
            });
            return Ok(layout.with_parameters(rest));
        }
        Ok(Layout::Jagged(JaggedArray { index, content }).with_parameters(parameters))
    }

    fn regular(&mut self, n: &FormNode<'_>, length: usize, d: usize) -> Result<Layout> {
        let size = n
            .get("size")?
            .as_u64()
            .and_then(|s| usize::try_from(s).ok())
            .ok_or_else(|| form_err(&n.loc, "\"size\" must be a non-negative integer"))?;
        let next = length
            .checked_mul(size)
            .ok_or_else(|| form_err(&n.loc, "length × size overflows"))?;
        let content = self.child(n.content()?, &n.loc, ".content", next, d)?;
        Ok(Layout::Regular(RegularArray {
            size,
            length,
            content,
        }))
    }

    fn record(&mut self, n: &FormNode<'_>, length: usize, d: usize) -> Result<Layout> {
        let contents_json = n.get("contents")?;
        // awkward 1 wrote named contents as an object (field → form).
        let (fields, forms): (Option<Vec<String>>, Vec<&Json>) = match contents_json {
            Json::Object(m) => (Some(m.keys().cloned().collect()), m.values().collect()),
            Json::Array(list) => {
                let fields = match n.obj.get("fields") {
                    None | Some(Json::Null) => None,
                    Some(Json::Array(names)) => Some(
                        names
                            .iter()
                            .map(|x| x.as_str().map(str::to_string))
                            .collect::<Option<Vec<_>>>()
                            .ok_or_else(|| form_err(&n.loc, "\"fields\" must be strings"))?,
                    ),
                    Some(other) => {
                        return Err(form_err(
                            &n.loc,
                            format!("\"fields\" must be a list or null, found {other}"),
                        ))
                    }
                };
                (fields, list.iter().collect())
            }
            other => {
                return Err(form_err(
                    &n.loc,
                    format!("\"contents\" must be a list, found {other}"),
                ))
            }
        };
        if let Some(f) = &fields {
            if f.len() != forms.len() {
                return Err(form_err(
                    &n.loc,
                    format!("{} fields but {} contents", f.len(), forms.len()),
                ));
            }
        }
        let mut contents = Vec::with_capacity(forms.len());
        for (k, f) in forms.into_iter().enumerate() {
            contents.push(self.child(f, &n.loc, &format!(".contents[{k}]"), length, d)?);
        }
        Ok(Layout::Record(RecordArray {
            fields,
            contents,
            length,
        }))
    }

    fn indexed(&mut self, n: &FormNode<'_>, length: usize, d: usize) -> Result<Layout> {
        let option = n.class == "IndexedOptionArray";
        let allowed: &[&str] = if option {
            &["i32", "i64"]
        } else {
            &["i32", "u32", "i64"]
        };
        let ty = n.index_type("index", allowed)?;
        let mut index = self.index(n, "index", ty, length)?;
        if option {
            // awkward 2: any negative index is missing; this crate's marker is -1.
            for x in index.iter_mut().filter(|x| **x < 0) {
                *x = -1;
            }
        } else if let Some(i) = index.iter().position(|&x| x < 0) {
            return Err(Error::invalid(
                "IndexedArray",
                &n.loc,
                format!("index[{i}] = {} is negative", index[i]),
            ));
        }
        let next = index
            .iter()
            .copied()
            .max()
            .map_or(0, |m| m.saturating_add(1).max(0));
        let next = usize::try_from(next).map_err(|_| form_err(&n.loc, "index too large"))?;
        let content = self.child(n.content()?, &n.loc, ".content", next, d)?;
        Ok(if option {
            Layout::IndexedMasked(IndexedMaskedArray {
                index,
                content,
                masked_when: -1,
            })
        } else {
            Layout::Indexed(IndexedArray { index, content })
        })
    }

    fn union(&mut self, n: &FormNode<'_>, length: usize, d: usize) -> Result<Layout> {
        n.index_type("tags", &["i8"])?;
        let ity = n.index_type("index", &["i32", "u32", "i64"])?;
        let forms = n
            .get("contents")?
            .as_array()
            .ok_or_else(|| form_err(&n.loc, "\"contents\" must be a list"))?;
        if forms.is_empty() || forms.len() > 128 {
            return Err(form_err(
                &n.loc,
                format!("a union needs 1 to 128 contents, found {}", forms.len()),
            ));
        }
        let raw = self.buffer(n, "tags", length as u64)?;
        let index = self.index(n, "index", ity, length)?;
        let mut next = vec![0usize; forms.len()];
        for (i, (&t, &ix)) in raw.iter().zip(&index).enumerate() {
            let t = t as i8;
            let slot = usize::try_from(t)
                .ok()
                .and_then(|t| next.get_mut(t))
                .ok_or_else(|| {
                    Error::invalid(
                        "UnionArray",
                        &n.loc,
                        format!("tags[{i}] = {t}, but there are {} contents", forms.len()),
                    )
                })?;
            let ix = usize::try_from(ix).map_err(|_| {
                Error::invalid(
                    "UnionArray",
                    &n.loc,
                    format!("index[{i}] = {ix} is negative"),
                )
            })?;
            *slot = (*slot).max(ix.saturating_add(1));
        }
        let mut contents = Vec::with_capacity(forms.len());
        for (k, f) in forms.iter().enumerate() {
            contents.push(self.child(f, &n.loc, &format!(".contents[{k}]"), next[k], d)?);
        }
        Ok(Layout::Union(UnionArray {
            tags: raw.into_owned(),
            index,
            contents,
        }))
    }
}

/// Content length a list index implies (`ak.from_buffers`' rule), checked for negative values.
fn list_content_length(index: &ListIndex, loc: &str, class: &'static str) -> Result<usize> {
    let last = match index {
        ListIndex::Offsets(o) => {
            if o.len() <= 1 {
                0
            } else {
                o[o.len() - 1]
            }
        }
        ListIndex::StartsStops { starts, stops } => starts
            .iter()
            .zip(stops)
            .filter(|(a, b)| a != b)
            .map(|(_, &b)| b)
            .max()
            .unwrap_or(0),
    };
    usize::try_from(last).map_err(|_| {
        Error::invalid(
            class,
            loc,
            format!("the lists end at {last}, which is negative"),
        )
    })
}

/// The encoding (`Some("utf-8")` for text, `None` for bytes) and the remaining parameters, when
/// a list is awkward 2's string or bytestring: `__array__: string|bytestring` over a 1-D `uint8`
/// leaf whose only parameter is `__array__: char|byte`.
fn string_kind(
    parameters: &Map<String, Json>,
    content: &Layout,
) -> Option<(Option<String>, Map<String, Json>)> {
    let (inner, encoding) = match parameters.get("__array__")?.as_str()? {
        "string" => ("char", Some("utf-8".to_string())),
        "bytestring" => ("byte", None),
        _ => return None,
    };
    let Layout::Parameters(p) = content else {
        return None;
    };
    if p.parameters.len() != 1 || p.array_name() != Some(inner) {
        return None;
    }
    let Layout::Numpy(leaf) = p.content.as_ref() else {
        return None;
    };
    if leaf.dtype().primitive != Primitive::U8 || !leaf.dtype().inner_shape.is_empty() {
        return None;
    }
    let mut rest = parameters.clone();
    rest.remove("__array__");
    Some((encoding, rest))
}

/// The bytes of a `uint8` leaf under a parameter wrapper (checked by [`string_kind`]), moved out
/// when nothing else holds them.
fn take_u8(content: Arc<Layout>) -> Vec<u8> {
    let inner = match Arc::try_unwrap(content) {
        Ok(Layout::Parameters(p)) => p.content,
        Ok(other) => Arc::new(other),
        Err(shared) => match shared.as_ref() {
            Layout::Parameters(p) => p.content.clone(),
            _ => shared,
        },
    };
    match Arc::try_unwrap(inner) {
        Ok(Layout::Numpy(leaf)) => match leaf.into_data() {
            crate::numpy::Buffer::U8(v) => v,
            _ => Vec::new(),
        },
        Ok(_) => Vec::new(),
        Err(shared) => match shared.as_ref() {
            Layout::Numpy(leaf) => match leaf.data() {
                crate::numpy::Buffer::U8(v) => v.clone(),
                _ => Vec::new(),
            },
            _ => Vec::new(),
        },
    }
}

/// A form node's object and its class under its canonical name.
fn form_class<'f>(form: &'f Json, loc: &str) -> Result<(&'f Map<String, Json>, &'static str)> {
    let obj = match form {
        // `from_dict` reads a bare primitive name as a NumpyArray without buffers' key: it
        // cannot be found in a container, so only the empty case is meaningful.
        Json::String(s) => {
            return Err(form_err(
                loc,
                format!("a bare {s:?} form has no form_key to find its buffer by"),
            ))
        }
        Json::Object(m) => m,
        other => {
            return Err(form_err(
                loc,
                format!("a form node must be an object, found {other}"),
            ))
        }
    };
    let class_name = obj
        .get("class")
        .and_then(Json::as_str)
        .ok_or_else(|| form_err(loc, "a form node needs a string \"class\""))?;
    let class = canonical_class(class_name)
        .ok_or_else(|| form_err(loc, format!("unknown form class {class_name:?}")))?;
    Ok((obj, class))
}
