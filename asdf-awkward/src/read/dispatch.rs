//! The fixed dispatch table: which call specs map to which of our constructors.

/// Constructors of the fixed dispatch table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ctor {
    FromBuffer,
    Zlib,
    Lzma,
    Lz4Block,
    Json2Dtype,
    Jagged,
    JaggedFromCounts,
    JaggedFromOffsets,
    TableFromPairs,
    TableFromView,
    Chunked,
    Appendable,
    Indexed,
    Sparse,
    Union,
    UnionFromTags,
    Masked,
    BitMasked,
    IndexedMasked,
    String,
    StringFromCounts,
}

impl Ctor {
    pub(super) fn name(self) -> &'static str {
        match self {
            Ctor::FromBuffer => "numpy.frombuffer",
            Ctor::Zlib => "zlib.decompress",
            Ctor::Lzma => "lzma.decompress",
            Ctor::Lz4Block => "lz4.block.decompress",
            Ctor::Json2Dtype => "awkward0.persist.json2dtype",
            Ctor::Jagged => "JaggedArray",
            Ctor::JaggedFromCounts => "JaggedArray.fromcounts",
            Ctor::JaggedFromOffsets => "JaggedArray.fromoffsets",
            Ctor::TableFromPairs => "Table.frompairs",
            Ctor::TableFromView => "Table.fromview",
            Ctor::Chunked => "ChunkedArray",
            Ctor::Appendable => "AppendableArray",
            Ctor::Indexed => "IndexedArray",
            Ctor::Sparse => "SparseArray",
            Ctor::Union => "UnionArray",
            Ctor::UnionFromTags => "UnionArray.fromtags",
            Ctor::Masked => "MaskedArray",
            Ctor::BitMasked => "BitMaskedArray",
            Ctor::IndexedMasked => "IndexedMaskedArray",
            Ctor::String => "StringArray",
            Ctor::StringFromCounts => "StringArray.fromcounts",
        }
    }

    /// Parameter names, and how many are required.
    pub(super) fn params(self) -> (&'static [&'static str], usize) {
        match self {
            Ctor::FromBuffer => (&["buffer", "dtype", "count", "offset"], 1),
            Ctor::Zlib | Ctor::Lzma => (&["data"], 1),
            Ctor::Lz4Block => (&["source", "uncompressed_size"], 1),
            Ctor::Json2Dtype => (&["obj"], 1),
            Ctor::Jagged => (&["starts", "stops", "content"], 3),
            Ctor::JaggedFromCounts => (&["counts", "content"], 2),
            Ctor::JaggedFromOffsets => (&["offsets", "content"], 2),
            Ctor::TableFromPairs => (&["pairs", "rowstart"], 1),
            Ctor::TableFromView => (&["view", "base"], 2),
            Ctor::Chunked => (&["chunks", "chunksizes"], 1),
            Ctor::Appendable => (&["chunkshape", "dtype", "chunks"], 3),
            Ctor::Indexed => (&["index", "content"], 2),
            Ctor::Sparse => (&["length", "index", "content", "default"], 3),
            Ctor::Union => (&["tags", "index", "contents"], 3),
            Ctor::UnionFromTags => (&["tags", "contents"], 2),
            Ctor::Masked => (&["mask", "content", "maskedwhen"], 2),
            Ctor::BitMasked => (&["mask", "content", "maskedwhen", "lsborder"], 2),
            Ctor::IndexedMasked => (&["mask", "content", "maskedwhen"], 2),
            Ctor::String => (&["starts", "stops", "content", "encoding"], 3),
            Ctor::StringFromCounts => (&["counts", "content", "encoding"], 2),
        }
    }
}

/// Outcome of looking a spec up in the fixed table.
pub(super) enum Lookup {
    Found(Ctor),
    Refused(String),
    Unsupported(String),
}

pub(super) fn lookup(spec: &[&str]) -> Lookup {
    let first = match spec.first().copied().unwrap_or("") {
        "awkward" => "awkward0",
        "awkward.util" => "awkward0.util",
        "awkward.persist" => "awkward0.persist",
        "awkward.arrow" => "awkward0.arrow",
        other => other,
    };
    let rest = spec.get(1..).unwrap_or(&[]);
    use Ctor::*;
    let found = match (first, rest) {
        ("awkward0", ["numpy", "frombuffer"])
        | ("numpy", ["frombuffer"])
        | ("awkward0.util", ["frombuffer"]) => FromBuffer,
        ("zlib", ["decompress"]) => Zlib,
        ("lzma", ["decompress"]) | ("backports.lzma", ["decompress"]) => Lzma,
        ("lz4.block", ["decompress"]) => Lz4Block,
        ("awkward0.persist", ["json2dtype"]) => Json2Dtype,
        ("awkward0.persist", ["topython"]) => {
            return Lookup::Refused(
                "awkward0.persist.topython unpickles data, which can run arbitrary code".into(),
            )
        }
        ("awkward0.persist", _) => {
            return Lookup::Refused(format!(
                "awkward0.persist.{} is not a constructor this reader allows",
                rest.join(".")
            ))
        }
        ("awkward0.arrow", _) => {
            return Lookup::Refused(
                "awkward0.arrow._ParquetFile opens a file path given in the schema".into(),
            )
        }
        ("uproot.tree", _) | ("uproot3.tree", _) => {
            return Lookup::Refused(
                "uproot lazy arrays open local paths or remote URLs given in the schema".into(),
            )
        }
        ("awkward0", ["ObjectArray", ..]) => {
            return Lookup::Refused(
                "ObjectArray holds Python objects made by calling a Python function on each element; it cannot be read without running code".into(),
            )
        }
        ("awkward0", ["VirtualArray", ..]) => {
            return Lookup::Refused(
                "VirtualArray stores no data, only a Python function to call (persistvirtual=True); save with persistvirtual=False to store its values".into(),
            )
        }
        ("awkward0", ["JaggedArray"]) => Jagged,
        ("awkward0", ["JaggedArray", "fromcounts"]) => JaggedFromCounts,
        ("awkward0", ["JaggedArray", "fromoffsets"]) => JaggedFromOffsets,
        ("awkward0", ["Table", "frompairs"]) => TableFromPairs,
        ("awkward0", ["Table", "fromview"]) => TableFromView,
        ("awkward0", ["ChunkedArray"]) => Chunked,
        ("awkward0", ["AppendableArray"]) => Appendable,
        ("awkward0", ["IndexedArray"]) => Indexed,
        ("awkward0", ["SparseArray"]) => Sparse,
        ("awkward0", ["UnionArray"]) => Union,
        ("awkward0", ["UnionArray", "fromtags"]) => UnionFromTags,
        ("awkward0", ["MaskedArray"]) => Masked,
        ("awkward0", ["BitMaskedArray"]) => BitMasked,
        ("awkward0", ["IndexedMaskedArray"]) => IndexedMasked,
        ("awkward0", ["StringArray"]) => String,
        ("awkward0", ["StringArray", "fromcounts"]) => StringFromCounts,
        _ => {
            return Lookup::Unsupported(format!(
                "call {} is not one of the constructors this reader knows",
                spec_str(spec)
            ))
        }
    };
    Lookup::Found(found)
}

pub(super) fn spec_str(spec: &[&str]) -> String {
    serde_json::to_string(spec).unwrap_or_else(|_| format!("{spec:?}"))
}
