//! The fixed dispatch table: which call specs map to which constructors — the reader's own
//! (buffers, codecs, dtypes) and each class's, listed in [`CLASSES`].

use crate::call::Constructor;
use crate::classes::{
    appendable, bit_masked, chunked, indexed, indexed_masked, jagged, masked, sparse, string,
    table, union,
};

/// The awkward0 constructors of every class the reader builds, one table per class module.
const CLASSES: &[&[Constructor]] = &[
    jagged::CONSTRUCTORS,
    table::CONSTRUCTORS,
    chunked::CONSTRUCTORS,
    appendable::CONSTRUCTORS,
    indexed::CONSTRUCTORS,
    sparse::CONSTRUCTORS,
    union::CONSTRUCTORS,
    masked::CONSTRUCTORS,
    bit_masked::CONSTRUCTORS,
    indexed_masked::CONSTRUCTORS,
    string::CONSTRUCTORS,
];

/// Constructors of the fixed dispatch table.
#[derive(Debug, Clone, Copy)]
pub(super) enum Ctor {
    FromBuffer,
    Zlib,
    Lzma,
    Lz4Block,
    Json2Dtype,
    /// An array class's constructor.
    Class(&'static Constructor),
}

impl Ctor {
    pub(super) fn name(self) -> &'static str {
        match self {
            Ctor::FromBuffer => "numpy.frombuffer",
            Ctor::Zlib => "zlib.decompress",
            Ctor::Lzma => "lzma.decompress",
            Ctor::Lz4Block => "lz4.block.decompress",
            Ctor::Json2Dtype => "awkward0.persist.json2dtype",
            Ctor::Class(c) => c.name,
        }
    }

    /// Parameter names, and how many are required.
    pub(super) fn params(self) -> (&'static [&'static str], usize) {
        match self {
            Ctor::FromBuffer => (&["buffer", "dtype", "count", "offset"], 1),
            Ctor::Zlib | Ctor::Lzma => (&["data"], 1),
            Ctor::Lz4Block => (&["source", "uncompressed_size"], 1),
            Ctor::Json2Dtype => (&["obj"], 1),
            Ctor::Class(c) => (c.params, c.required),
        }
    }

    pub(super) fn is_frombuffer(self) -> bool {
        matches!(self, Ctor::FromBuffer)
    }
}

/// The class constructor at `awkward0.<path>`.
fn class_constructor(path: &[&str]) -> Option<&'static Constructor> {
    CLASSES
        .iter()
        .flat_map(|t| t.iter())
        .find(|c| c.path == path)
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
        ("awkward0", path) => match class_constructor(path) {
            Some(c) => Class(c),
            None => return unknown(spec),
        },
        _ => return unknown(spec),
    };
    Lookup::Found(found)
}

fn unknown(spec: &[&str]) -> Lookup {
    Lookup::Unsupported(format!(
        "call {} is not one of the constructors this reader knows",
        spec_str(spec)
    ))
}

pub(super) fn spec_str(spec: &[&str]) -> String {
    serde_json::to_string(spec).unwrap_or_else(|_| format!("{spec:?}"))
}
