//! The benchmark cases of issue 9, one module each.

use std::path::Path;

use crate::measure::{Result, Row};
use crate::python::Python;

mod awkward;
mod compressed;
mod limits;
mod many;
mod rawarray;
mod tree;
mod uncompressed;

/// What a case gets to run with.
pub struct Ctx<'a> {
    /// Scratch directory (emptied after each case).
    pub dir: &'a Path,
    /// Size multiplier (1 = the sizes of the issue).
    pub scale: f64,
    pub py: &'a Python,
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
];

/// A path argument for a Python script.
pub fn arg(p: &Path) -> String {
    p.display().to_string()
}
