//! The benchmark cases of issue 9, one module each.

use std::path::Path;

use crate::measure::{BenchError, Result, Row};
use crate::python::Python;

mod awkward;
mod awkward2;
mod catalog;
mod compressed;
mod limits;
mod many;
mod printers;
mod py_package;
mod rawarray;
mod remote;
mod tree;
mod uncompressed;

pub use catalog::child;

/// What a case gets to run with.
pub struct Ctx<'a> {
    /// Scratch directory (emptied after each case).
    pub dir: &'a Path,
    /// Size multiplier (1 = the sizes of the issue).
    pub scale: f64,
    pub py: &'a Python,
    /// The awkward 2 venv's interpreter (awkward 2 and pyarrow on NumPy 2): case 11's peers.
    pub py_awkward2: &'a Python,
    /// Cores available (the size of the "all cores" rayon pool).
    pub threads: usize,
    /// The codecs of the compressed case to run.
    pub codecs: &'a [&'static str],
}

/// The codecs of the compressed case.
pub const CODEC_NAMES: &[&str] = compressed::CODEC_NAMES;

/// A named case.
pub struct Case {
    pub name: &'static str,
    pub run: fn(&Ctx) -> Result<Vec<Row>>,
}

/// Every case, in report order.
pub const ALL: &[Case] = &[
    Case {
        name: "tree",
        run: tree::run,
    },
    Case {
        name: "many",
        run: many::run,
    },
    Case {
        name: "uncompressed",
        run: uncompressed::run,
    },
    Case {
        name: "compressed",
        run: compressed::run,
    },
    Case {
        name: "rawarray",
        run: rawarray::run,
    },
    Case {
        name: "awkward",
        run: awkward::run,
    },
    Case {
        name: "remote",
        run: remote::run,
    },
    Case {
        name: "python",
        run: py_package::run,
    },
    Case {
        name: "printers",
        run: printers::run,
    },
    Case {
        name: "catalog",
        run: catalog::run,
    },
    Case {
        name: "awkward2",
        run: awkward2::run,
    },
];

/// The sum of every float64 array in the `/arrays` mapping, read with asdf-rs (the many-array
/// layouts of cases 2 and 4).
pub fn rs_sum_arrays(f: &asdf_rs::AsdfFile) -> Result<f64> {
    let e = |e: asdf_rs::Error| BenchError::peer("asdf-rs", e);
    let tree = f
        .tree()
        .map_err(e)?
        .ok_or_else(|| BenchError::peer("asdf-rs", "no tree"))?;
    let arrays = tree
        .get("arrays")
        .ok_or_else(|| BenchError::peer("asdf-rs", "no arrays"))?;
    let mut s = 0.0;
    for (_, v) in arrays.entries() {
        let nd = v
            .as_ndarray()
            .ok_or_else(|| BenchError::peer("asdf-rs", "not an ndarray"))?;
        s += crate::data::sum(&f.read_array_f64(&nd).map_err(e)?);
    }
    Ok(s)
}

/// A path argument for a Python script.
pub fn arg(p: &Path) -> String {
    p.display().to_string()
}
