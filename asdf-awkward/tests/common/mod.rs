//! Arrays of every class, built with the Rust model, shared by several test files.
#![allow(dead_code)]

use std::sync::Arc;

use asdf_awkward::{
    AppendableArray, BitMaskedArray, Buffer, ChunkedArray, IndexedArray, IndexedMaskedArray,
    JaggedArray, Layout, ListIndex, MaskedArray, NumpyArray, Primitive, SparseArray, SparseDefault,
    StringArray, Table, TableView, UnionArray,
};
use serde_json::json;

/// Python helper turning `tolist()` output into JSON our `to_json` also produces.
pub(crate) const CONV: &str = r#"
import json, math
import numpy as np
def conv(x):
    if isinstance(x, dict):
        return {str(k): conv(v) for k, v in x.items()}
    if isinstance(x, tuple):
        return {str(i): conv(v) for i, v in enumerate(x)}
    if isinstance(x, list):
        return [conv(v) for v in x]
    if isinstance(x, (bytes, bytearray)):
        return list(x)
    if isinstance(x, complex):
        return [x.real, x.imag]
    if isinstance(x, (np.datetime64, np.timedelta64)):
        return int(x.astype(np.int64))
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x
"#;

/// Python helper listing every parameter of an awkward 2 form (`form.to_dict()`) as
/// `key=json`, depth first, as [`form_parameters`] lists them.
pub(crate) const PARAMS: &str = r#"
import json
def params(form, out):
    out += ["%s=%s" % (k, json.dumps(v, separators=(",", ":"))) for k, v in form.get("parameters", {}).items()]
    for key in ("content", "contents"):
        kids = form.get(key)
        for k in (kids if isinstance(kids, list) else [kids] if kids else []):
            params(k, out)
    return out
"#;

/// Every parameter of an awkward 2 form as `key=json`, depth first.
pub(crate) fn form_parameters(form: &serde_json::Value, out: &mut Vec<String>) {
    use serde_json::Value as Json;
    if let Some(p) = form.get("parameters").and_then(Json::as_object) {
        out.extend(p.iter().map(|(k, v)| format!("{k}={v}")));
    }
    for key in ["content", "contents"] {
        match form.get(key) {
            Some(Json::Array(kids)) => kids.iter().for_each(|k| form_parameters(k, out)),
            Some(kid) => form_parameters(kid, out),
            None => {}
        }
    }
}

pub(crate) fn leaf(b: Buffer) -> Arc<Layout> {
    Arc::new(Layout::Numpy(NumpyArray::from_vec(b)))
}

/// Arrays of every class, built directly with the Rust model.
pub(crate) fn as_pairs(s: &[(String, Layout)]) -> Vec<(&str, &Layout)> {
    s.iter().map(|(n, l)| (n.as_str(), l)).collect()
}

pub(crate) fn rust_arrays() -> Vec<(String, Layout)> {
    let mut v: Vec<(&str, Layout)> = Vec::new();
    let f64s = |x: &[f64]| leaf(Buffer::F64(x.to_vec()));
    v.push((
        "f64",
        Layout::Numpy(NumpyArray::from_vec(Buffer::F64(vec![1.5, -2.5, 1e300]))),
    ));
    v.push((
        "i32_2d",
        Layout::Numpy(
            NumpyArray::from_buffer(Buffer::I32(vec![1, 2, 3, 4, 5, 6]), vec![3]).unwrap(),
        ),
    ));
    v.push((
        "u8",
        Layout::Numpy(NumpyArray::from_vec(Buffer::U8(vec![0, 255]))),
    ));
    v.push((
        "c64",
        Layout::Numpy(NumpyArray::from_vec(Buffer::C64(vec![[1.0, -1.0]]))),
    ));
    v.push((
        "datetime",
        Layout::Numpy(
            NumpyArray::with_primitive(
                Primitive::DateTime64("ns".into()),
                Buffer::I64(vec![5, 6]),
                vec![],
            )
            .unwrap(),
        ),
    ));
    v.push((
        "jagged",
        Layout::Jagged(JaggedArray {
            index: ListIndex::Offsets(vec![0, 3, 3, 5]),
            content: f64s(&[1.1, 2.2, 3.3, 4.4, 5.5]),
        }),
    ));
    v.push((
        "jagged_ss",
        Layout::Jagged(JaggedArray {
            index: ListIndex::StartsStops {
                starts: vec![3, 0],
                stops: vec![5, 1],
            },
            content: f64s(&[1.1, 2.2, 3.3, 4.4, 5.5]),
        }),
    ));
    v.push((
        "jagged_offset_start",
        Layout::Jagged(JaggedArray {
            index: ListIndex::Offsets(vec![1, 2, 4]),
            content: f64s(&[1.1, 2.2, 3.3, 4.4, 5.5]),
        }),
    ));
    let content = f64s(&[1.0, 2.0, 3.0, 4.0, 5.0]);
    let x = leaf(Buffer::I64(vec![10, 20, 30, 40, 50]));
    let base = Table {
        fields: vec![("x".into(), x.clone()), ("y".into(), content.clone())],
        rowstart: 0,
        view: None,
    };
    v.push(("table", Layout::Table(base.clone())));
    v.push((
        "table_slice",
        Layout::Table(Table {
            view: Some(TableView::Slice {
                start: 4,
                step: -2,
                length: 3,
            }),
            ..base.clone()
        }),
    ));
    v.push((
        "table_index",
        Layout::Table(Table {
            view: Some(TableView::Index(vec![1, 1, 0])),
            ..base.clone()
        }),
    ));
    v.push((
        "chunked",
        Layout::Chunked(ChunkedArray {
            chunks: vec![f64s(&[1.0, 2.0, 3.0]), f64s(&[]), f64s(&[4.0, 5.0])],
            chunksizes: vec![2, 0, 2],
        }),
    ));
    v.push((
        "appendable",
        Layout::Appendable(AppendableArray {
            chunkshape: 2,
            chunks: vec![
                NumpyArray::from_vec(Buffer::F32(vec![1.0, 2.0])),
                NumpyArray::from_vec(Buffer::F32(vec![3.0])),
            ],
        }),
    ));
    v.push((
        "indexed",
        Layout::Indexed(IndexedArray {
            index: vec![4, 0, 0],
            content: content.clone(),
        }),
    ));
    v.push((
        "sparse",
        Layout::Sparse(SparseArray {
            length: 6,
            index: vec![1, 4],
            content: f64s(&[10.0, 40.0]),
            default: SparseDefault::Zero,
        }),
    ));
    v.push((
        "sparse_default",
        Layout::Sparse(SparseArray {
            length: 4,
            index: vec![0],
            content: leaf(Buffer::I64(vec![9])),
            default: SparseDefault::Int(-1),
        }),
    ));
    v.push((
        "union",
        Layout::Union(UnionArray::from_tags(
            vec![0, 1, 0],
            vec![f64s(&[1.1, 2.2]), leaf(Buffer::I64(vec![5]))],
        )),
    ));
    v.push((
        "union_index",
        Layout::Union(UnionArray {
            tags: vec![1, 0, 1],
            index: vec![2, 0, 0],
            contents: vec![f64s(&[1.1]), leaf(Buffer::I64(vec![5, 6, 7]))],
        }),
    ));
    v.push((
        "masked",
        Layout::Masked(MaskedArray {
            mask: vec![false, true, false],
            content: f64s(&[1.0, 2.0, 3.0]),
            masked_when: true,
        }),
    ));
    v.push((
        "masked_false",
        Layout::Masked(MaskedArray {
            mask: vec![false, true, false],
            content: f64s(&[1.0, 2.0, 3.0]),
            masked_when: false,
        }),
    ));
    for (label, lsb) in [("bitmasked_lsb", true), ("bitmasked_msb", false)] {
        v.push((
            label,
            Layout::BitMasked(BitMaskedArray {
                mask: vec![0x12, 0x01],
                content: leaf(Buffer::I64((0..10).collect())),
                masked_when: true,
                lsb_order: lsb,
            }),
        ));
    }
    v.push((
        "indexedmasked",
        Layout::IndexedMasked(IndexedMaskedArray {
            index: vec![-1, 2, 0, -1],
            content: content.clone(),
            masked_when: -1,
        }),
    ));
    v.push((
        "strings",
        Layout::String(StringArray::from_strs(&[
            "one",
            "",
            "h\u{e9}llo",
            "\u{1F600}",
        ])),
    ));
    v.push((
        "strings_ss",
        Layout::String(StringArray {
            index: ListIndex::StartsStops {
                starts: vec![3, 0],
                stops: vec![5, 2],
            },
            content: b"abcde".to_vec(),
            encoding: Some("utf-8".into()),
        }),
    ));
    v.push((
        "bytes",
        Layout::String(StringArray {
            index: ListIndex::Offsets(vec![0, 2, 2, 3]),
            content: vec![0, 255, 7],
            encoding: None,
        }),
    ));
    let shared = Arc::new(Layout::Jagged(JaggedArray {
        index: ListIndex::Offsets(vec![0, 1, 3]),
        content: f64s(&[1.0, 2.0, 3.0]),
    }));
    v.push((
        "shared",
        Layout::Table(Table {
            fields: vec![("a".into(), shared.clone()), ("b".into(), shared)],
            rowstart: 0,
            view: None,
        }),
    ));
    v.push((
        "from_json",
        Layout::from_json(&json!([{"x": 1, "y": [1.5, null], "s": "a"}, null, {"x": 2, "y": [], "s": "bc"}, 3.5, [true]])).unwrap(),
    ));
    v.push((
        "big_compressed",
        Layout::Jagged(JaggedArray {
            index: ListIndex::from_counts(&vec![3; 5000]).unwrap(),
            content: leaf(Buffer::I32((0..15000).collect())),
        }),
    ));
    v.into_iter()
        .enumerate()
        .map(|(i, (n, l))| (format!("r{i:02}_{n}"), l))
        .collect()
}
