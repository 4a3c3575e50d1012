//! `StringArray`: lists of bytes, decoded as text unless the encoding is `None`.

use serde_json::{json, Map, Value as Json};

use crate::call::{Args, Constructor, Val};
use crate::dtype::{DType, Primitive};
use crate::element::{Budget, Value};
use crate::error::{Error, Result};
use crate::layout::{
    call, finish_form, form_node, Awkward0Writer, Awkward2Writer, Class, Layout, ListIndex, Node,
};

/// `StringArray`: lists of bytes, decoded with `encoding` (`None` = raw bytes).
///
/// ```
/// use asdf_awkward::{Layout, StringArray};
/// let s = Layout::String(StringArray::from_strs(&["mu", "", "e"]));
/// assert_eq!(s.to_json().unwrap(), serde_json::json!(["mu", "", "e"]));
/// ```
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

/// Whether a Python codec name means UTF-8 (how awkward0 names a string array's encoding).
fn is_utf8_name(e: &str) -> bool {
    matches!(
        e.to_ascii_lowercase().as_str(),
        "utf-8" | "utf8" | "utf_8" | "u8"
    )
}

/// awkward0's constructors: `StringArray(starts, stops, content, encoding)` and
/// `StringArray.fromcounts(counts, content, encoding)`.
pub(crate) const CONSTRUCTORS: &[Constructor] = &[
    Constructor {
        path: &["StringArray"],
        name: "StringArray",
        params: &["starts", "stops", "content", "encoding"],
        required: 3,
        build: |a| {
            let index = ListIndex::StartsStops {
                starts: a.index(0)?,
                stops: a.index(1)?,
            };
            string(a, index, 2)
        },
    },
    Constructor {
        path: &["StringArray", "fromcounts"],
        name: "StringArray.fromcounts",
        params: &["counts", "content", "encoding"],
        required: 2,
        build: |a| string(a, a.counts_index(0, "StringArray")?, 1),
    },
];

/// The content at `content_at` and the encoding after it: a missing encoding is utf-8, `null`
/// raw bytes.
fn string(a: &Args<'_>, index: ListIndex, content_at: usize) -> Result<Layout> {
    let content = a.bytes_array(content_at)?;
    let encoding = match a.val(content_at + 1) {
        None => Some("utf-8".to_string()),
        Some(Val::Json(Json::Null)) => None,
        Some(Val::Json(Json::String(s))) => Some(s.clone()),
        other => return Err(a.wrong(content_at + 1, "an encoding name or null", other)),
    };
    Ok(Layout::String(StringArray {
        index,
        content,
        encoding,
    }))
}

impl Class for StringArray {
    fn name(&self) -> &'static str {
        "StringArray"
    }

    fn len(&self) -> usize {
        self.index.len()
    }

    fn children(&self) -> Vec<&Node> {
        vec![]
    }

    fn validate_node(&self, location: &str) -> Result<()> {
        StringArray::validate_node(self, location)
    }

    /// A list of `uint8` with awkward 2's `string`/`char` (or `bytestring`/`byte`) parameters.
    fn awkward2_form(&self, w: &mut dyn Awkward2Writer, depth: usize) -> Result<Json> {
        let _ = depth;
        let key = w.key();
        let mut m = w.list(&key, &self.index)?;
        let (outer, inner) = if self.encoding.is_some() {
            ("string", "char")
        } else {
            ("bytestring", "byte")
        };
        let ckey = w.key();
        w.put(format!("{ckey}-data"), &self.content)?;
        let mut c = form_node("NumpyArray", &ckey);
        c.insert("primitive".into(), json!("uint8"));
        c.insert("inner_shape".into(), json!([]));
        m.insert(
            "content".into(),
            finish_form(c, json!({ "__array__": inner })),
        );
        Ok(finish_form(m, json!({ "__array__": outer })))
    }

    fn element(&self, i: usize, _depth: usize, b: &mut Budget) -> Result<Value> {
        let (start, stop) = self
            .index
            .element_range("StringArray", i, self.content.len())?;
        b.take(0, (stop - start) as u64)?;
        let bytes = &self.content[start..stop];
        match self.encoding {
            None => Ok(Value::Bytes(bytes.to_vec())),
            Some(_) => match std::str::from_utf8(bytes) {
                Ok(t) => Ok(Value::Str(t.to_string())),
                Err(e) => Err(Error::invalid(
                    "StringArray",
                    "array",
                    format!("string is not valid UTF-8 ({e})"),
                )),
            },
        }
    }

    /// From counts when the offsets start at 0, else from starts and stops; the encoding last.
    fn write_awkward0(
        &self,
        w: &mut dyn Awkward0Writer,
        _ctx: &str,
        _id: u64,
        _depth: usize,
    ) -> Result<Map<String, Json>> {
        let u8_dtype = DType::scalar(Primitive::U8);
        let (spec, mut args) = match &self.index {
            ListIndex::Offsets(o) if o.len() > 1 && o[0] == 0 => {
                let counts: Vec<i64> = o.windows(2).map(|w| w[1] - w[0]).collect();
                let c = w.index(&counts, "StringArray.counts")?;
                (w.spec(&["StringArray", "fromcounts"]), vec![c])
            }
            other => {
                let (starts, stops) = other.starts_stops();
                let a = w.index(&starts, "StringArray.starts")?;
                let b = w.index(&stops, "StringArray.stops")?;
                (w.spec(&["StringArray"]), vec![a, b])
            }
        };
        let n = self.content.len();
        args.push(w.leaf(&u8_dtype, n, &self.content, "StringArray.content")?);
        let enc = match &self.encoding {
            Some(e) => Json::String(e.clone()),
            None => Json::Null,
        };
        args.push(w.scalar(enc));
        Ok(call(spec, args))
    }
}
