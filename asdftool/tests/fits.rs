//! JWST products, written by stdatamodels 6.0.0: FITS files whose ASDF tree sits in an `ASDF`
//! extension and whose arrays are image extensions (`source: fits:SCI,1`). `asdf::fits` reads
//! them (the unsigned `DQ` extension included), and `info`, `verify` and `convert` accept them.

use crate::common::*;

use asdf::fits::FitsAsdf;
use asdf_testkit::{require_python, run_python, TempDir};

/// Writes an ImageModel to argv[1].
const WRITE: &str = r#"
import sys, numpy as np
from stdatamodels.jwst import datamodels as dm
m = dm.ImageModel(
    data=np.arange(600, dtype=np.float32).reshape(20, 30),
    dq=(np.arange(600, dtype=np.uint32) * 7_000_000).reshape(20, 30),
    err=np.full((20, 30), 0.5, np.float32),
)
m.meta.instrument.name = "NIRCAM"
m.save(sys.argv[1])
"#;

/// Compares argv[1] (our ASDF conversion) with the model's arrays and metadata.
const CHECK: &str = r#"
import sys, numpy as np, asdf
with asdf.open(sys.argv[1]) as af:
    assert np.array_equal(af["data"], np.arange(600, dtype=np.float32).reshape(20, 30))
    assert af["dq"].dtype == np.uint32
    assert np.array_equal(af["dq"], (np.arange(600, dtype=np.uint32) * 7_000_000).reshape(20, 30))
    assert af["meta"]["instrument"]["name"] == "NIRCAM"
print("ok")
"#;

fn jwst_file(dir: &TempDir) -> Option<std::path::PathBuf> {
    let py = asdf_testkit::python()?;
    let path = dir.join("jw_cal.fits");
    run_python(&py, WRITE, &[p(&path)]);
    Some(path)
}

/// The DQ values the model was written with.
fn dq_written() -> Vec<u32> {
    (0..600u32).map(|i| i.wrapping_mul(7_000_000)).collect()
}

#[test]
fn the_tree_and_image_extensions_of_a_jwst_file_read() {
    let _py = require_python!();
    let dir = TempDir::new("fits-read");
    let path = jwst_file(&dir).unwrap();
    let f = FitsAsdf::open(&path, &Default::default()).unwrap();
    let name = f
        .tree()
        .pointer("/meta/instrument/name")
        .and_then(|n| n.as_str());
    assert_eq!(name, Some("NIRCAM"));
    let names: Vec<_> = f
        .hdus()
        .iter()
        .map(|h| h.name.clone().unwrap_or_default())
        .collect();
    assert!(
        names.iter().any(|n| n == "SCI") && names.iter().any(|n| n == "ASDF"),
        "{names:?}"
    );
    let data = f.array::<f32>("/data").unwrap();
    assert_eq!(data.shape(), &[20, 30]);
    assert!(data.iter().enumerate().all(|(i, &v)| v == i as f32));
    // Stored as int32 with BZERO = 2^31: the values come back as the uint32 written.
    let dq = f.array::<u32>("/dq").unwrap();
    assert_eq!(dq.iter().copied().collect::<Vec<_>>(), dq_written());
    assert!(f.array::<f32>("/err").unwrap().iter().all(|&v| v == 0.5));
}

#[test]
fn info_verify_and_convert_accept_jwst_files() {
    let py = require_python!();
    let dir = TempDir::new("fits-cli");
    let path = jwst_file(&dir).unwrap();
    let o = run(&["info", p(&path)]);
    expect(&o, 0);
    let out = stdout(&o);
    for want in [
        "FITS file with 5 HDUs",
        "IMAGE SCI,1: BITPIX -32, shape [20, 30]",
        "BZERO 2147483648",
        "external fits:SCI,1",
        "NIRCAM",
    ] {
        assert!(out.contains(want), "no {want:?} in:\n{out}");
    }
    let o = run(&["verify", p(&path)]);
    expect(&o, 0);

    let asdf_out = dir.join("jw_cal.asdf");
    expect(&run(&["convert", p(&path), p(&asdf_out)]), 0);
    let checked = String::from_utf8(run_python(&py, CHECK, &[p(&asdf_out)])).unwrap();
    assert_eq!(checked.trim(), "ok");

    let npy = dir.join("dq.npy");
    expect(&run(&["convert", p(&path), p(&npy), "--pointer", "/dq"]), 0);
    let loaded = run_python(
        &py,
        "import sys, numpy as np\na = np.load(sys.argv[1]); print(a.dtype, a.shape, int(a[1, 0]))",
        &[p(&npy)],
    );
    assert_eq!(
        String::from_utf8(loaded).unwrap().trim(),
        "uint32 (20, 30) 210000000"
    );
}

#[test]
fn a_fits_file_without_an_asdf_extension_is_refused_by_name() {
    let py = require_python!();
    let dir = TempDir::new("fits-plain");
    let path = dir.join("plain.fits");
    run_python(
        &py,
        "import sys, numpy as np\nfrom astropy.io import fits\nfits.PrimaryHDU(np.zeros(4)).writeto(sys.argv[1])",
        &[p(&path)],
    );
    let o = run(&["info", p(&path)]);
    assert_ne!(code(&o), 0);
    assert!(
        stderr(&o).contains("no extension named ASDF"),
        "{}",
        stderr(&o)
    );
}
