//! Files that astronomy pipelines write (issue 17): a SkyCoord, a compound model, a gwcs WCS, a
//! QTable with a masked column, a quantity and an image, written by asdf-astropy and gwcs. Every
//! rewriting verb's output (`defragment` with every codec Python reads) is opened by those same consumers, which must get equal coordinates,
//! models and WCSs that evaluate to identical numbers, and equal tables, times and arrays; our
//! typed accessors give the values, units, formats and scales astropy gives.

use crate::common::*;

use asdf::astro::{Quantity, Table, Time, Values};
use asdf_testkit::{require_python, run_python, TempDir};

const WRITE: &str = r#"
import sys, numpy as np, asdf, astropy.units as u
from astropy import coordinates as coord
from astropy.time import Time
from astropy.coordinates import SkyCoord
from astropy.modeling import models
from astropy.table import QTable, MaskedColumn
from gwcs import wcs as gwcs_wcs, coordinate_frames as cf
sky = SkyCoord(ra=[10.5, 20.25, 30.0] * u.deg, dec=[-5.0, 0.5, 45.0] * u.deg, frame="icrs")
model = (models.Shift(1.5) & models.Scale(2.0)) | models.Rotation2D(30.0)
pix = ((models.Shift(-10) & models.Shift(-20)) | (models.Scale(0.01) & models.Scale(0.01))
       | models.Pix2Sky_TAN() | models.RotateNative2Celestial(5.6, -72.05, 180))
det = cf.Frame2D(name="detector", axes_names=("x", "y"), unit=(u.pix, u.pix))
sky_frame = cf.CelestialFrame(reference_frame=coord.ICRS(), name="icrs", unit=(u.deg, u.deg))
q = QTable()
q["flux"] = np.linspace(1, 2, 5) * u.Jy
q["m"] = MaskedColumn([1, 2, 3, 4, 5], mask=[False, True, False, False, True])
tree = {
    "sky": sky,
    "model": model,
    "wcs": gwcs_wcs.WCS([(det, pix), (sky_frame, None)]),
    "table": q,
    "image": np.arange(2000.0).reshape(40, 50),
    "spectrum": np.linspace(0, 1, 1000) * u.nm,
    "t_jd": Time([2460000.5, 2460001.25], format="jd", scale="tt"),
    "t_unix": Time(1.7e9, format="unix"),
    "t_gps": Time(1.4e9, format="gps"),
    "t_tdb": Time("2026-01-01T00:00:00.123", scale="tdb"),
    "t_mjd": Time([60000.5, 60001.5, 60002.5], format="mjd", scale="tai"),
}
asdf.AsdfFile(tree).write_to(sys.argv[1])
"#;

/// Each of argv[2:] opens in asdf + asdf-astropy + gwcs without warnings and holds what argv[1]
/// holds; prints `same FILE` for each (one interpreter checks them all).
const CHECK: &str = r#"
import sys, warnings, numpy as np, asdf, astropy.units as u
def check(a, b):
    assert np.all(a["sky"].separation(b["sky"]).to_value(u.arcsec) < 1e-9)
    assert b["sky"].frame.name == "icrs"
    x, y = np.array([0.0, 1.0, 7.5]), np.array([3.0, -2.0, 0.25])
    for ra, rb in zip(a["model"](x, y), b["model"](x, y)):
        assert np.array_equal(ra, rb), (ra, rb)
    for ra, rb in zip(a["wcs"](x + 100, y + 100), b["wcs"](x + 100, y + 100)):
        assert np.array_equal(ra, rb), (ra, rb)
    assert b["wcs"].output_frame.name == "icrs"
    ta, tb = a["table"], b["table"]
    assert list(tb.colnames) == ["flux", "m"] and tb["flux"].unit == u.Jy
    assert np.array_equal(ta["flux"], tb["flux"])
    assert np.array_equal(ta["m"].mask, tb["m"].mask)
    assert np.array_equal(ta["m"].filled(0), tb["m"].filled(0))
    assert np.array_equal(a["image"], b["image"])
    assert b["spectrum"].unit == u.nm and np.array_equal(a["spectrum"], b["spectrum"])
    for k in ["t_jd", "t_unix", "t_gps", "t_tdb", "t_mjd"]:
        assert (a[k].format, a[k].scale) == (b[k].format, b[k].scale), k
        assert np.all(a[k] == b[k]), k
for written in sys.argv[2:]:
    with warnings.catch_warnings(), asdf.open(sys.argv[1]) as a, asdf.open(written) as b:
        warnings.simplefilter("error")
        try:
            check(a, b)
        except Exception as e:
            raise AssertionError(written) from e
    print("same", written)
"#;

/// What astropy reads from argv[1], as JSON.
const VALUES: &str = r#"
import sys, json, asdf, numpy as np
with asdf.open(sys.argv[1]) as f:
    t, s = f["table"], f["spectrum"]
    print(json.dumps({
        "spectrum": s.value.tolist(), "spectrum_unit": s.unit.to_string(),
        "flux": t["flux"].value.tolist(), "flux_unit": t["flux"].unit.to_string(),
        "m": t["m"].filled(0).tolist(), "mask": t["m"].mask.tolist(),
        "times": {k: {"value": np.atleast_1d(f[k].value).tolist(), "format": f[k].format,
                      "scale": f[k].scale}
                  for k in ["t_jd", "t_unix", "t_gps", "t_tdb", "t_mjd"]},
    }))
"#;

#[test]
fn every_rewrite_is_read_back_equal_by_astropy_and_gwcs() {
    let py = require_python!();
    let t = TempDir::new("real-consumers");
    let orig = t.join("orig.asdf");
    run_python(&py, WRITE, &[p(&orig)]);
    // Verbatim tags (gwcs, asdf-astropy) are read by the fast parser.
    assert_fast_parser_reads(&orig);
    expect(&run(&["verify", p(&orig)]), 0);
    expect(&run(&["validate", p(&orig)]), 0);
    std::fs::create_dir_all(t.join("ex")).unwrap();
    let out = |name: &str| t.join(name).to_str().unwrap().to_string();
    let o = p(&orig).to_string();
    // `defragment` with every codec Python asdf reads (lz4f, zstd, blsc through asdf-compression).
    let mut verbs: Vec<(Vec<String>, String)> =
        ["none", "zlib", "bzp2", "lz4", "lz4f", "zstd", "blsc"]
            .iter()
            .map(|c| {
                let written = out(&format!("d-{c}.asdf"));
                let args = ["defragment", &o, "-c", c, "-o", &written].map(String::from);
                (args.to_vec(), written)
            })
            .collect();
    verbs.extend([
        (
            vec!["to-yaml".into(), o.clone(), "-o".into(), out("y.asdf")],
            out("y.asdf"),
        ),
        (
            vec!["explode".into(), o.clone(), "-o".into(), out("ex/e.asdf")],
            out("ex/e.asdf"),
        ),
        (
            vec![
                "implode".into(),
                out("ex/e.asdf"),
                "-o".into(),
                out("i.asdf"),
            ],
            out("i.asdf"),
        ),
        (
            vec!["convert".into(), o.clone(), out("c.asdf")],
            out("c.asdf"),
        ),
        (
            vec!["salvage".into(), o.clone(), "-o".into(), out("s.asdf")],
            out("s.asdf"),
        ),
    ]);
    let mut check = vec![o.clone()];
    for (args, written) in verbs {
        let what = format!("asdftool {}", args.join(" "));
        let r = run(&args);
        assert_eq!(code(&r), 0, "{what}: {}", stderr(&r));
        expect(&run(&["verify", &written]), 0);
        check.push(written);
    }
    let args: Vec<&str> = check.iter().map(String::as_str).collect();
    let said = String::from_utf8(run_python(&py, CHECK, &args)).unwrap();
    let same: Vec<&str> = said
        .lines()
        .filter_map(|l| l.strip_prefix("same "))
        .collect();
    assert_eq!(same, args[1..], "{said}");
}

#[test]
fn typed_accessors_give_what_astropy_gives() {
    let py = require_python!();
    let t = TempDir::new("real-consumers-values");
    let path = t.join("orig.asdf");
    run_python(&py, WRITE, &[p(&path)]);
    let json = run_python(&py, VALUES, &[p(&path)]);
    let want: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let f = asdf::AsdfFile::open(&path).unwrap();
    let floats = |v: &serde_json::Value| -> Vec<f64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };

    let spectrum: Quantity = f.get("/spectrum").unwrap();
    assert_eq!(spectrum.unit, want["spectrum_unit"].as_str().unwrap());
    let values = f
        .array::<f64>(spectrum.value.array_pointer().unwrap())
        .unwrap();
    assert_eq!(
        values.iter().copied().collect::<Vec<_>>(),
        floats(&want["spectrum"])
    );

    let table: Table = f.get("/table").unwrap();
    let flux = table.column("flux").unwrap();
    assert_eq!(flux.unit.as_deref(), want["flux_unit"].as_str());
    let flux = f
        .array::<f64>(flux.values.array_pointer().unwrap())
        .unwrap();
    assert_eq!(
        flux.iter().copied().collect::<Vec<_>>(),
        floats(&want["flux"])
    );
    let m = table.column("m").unwrap();
    let (values, mask) = f.read_masked(m.values.array_pointer().unwrap()).unwrap();
    let mask = mask.unwrap();
    let want_mask: Vec<bool> = want["mask"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_bool().unwrap())
        .collect();
    assert_eq!(mask.iter().copied().collect::<Vec<_>>(), want_mask);
    let asdf::ndarray::AnyArray::Int64(values) = values else {
        panic!("{values:?} is not int64, which astropy wrote")
    };
    let filled: Vec<f64> = values
        .iter()
        .zip(&want_mask)
        .map(|(&x, &masked)| if masked { 0.0 } else { x as f64 })
        .collect();
    assert_eq!(filled, floats(&want["m"]));

    for (key, want) in want["times"].as_object().unwrap() {
        let t: Time = f.get(&format!("/{key}")).unwrap();
        assert_eq!(
            t.scale_or_default(),
            want["scale"].as_str().unwrap(),
            "{key}"
        );
        // The format is what astropy read, or left to be inferred from a string value.
        match &t.format {
            Some(format) => assert_eq!(format, want["format"].as_str().unwrap(), "{key}"),
            None => assert!(matches!(&t.value, Values::Scalar(v) if v.as_str().is_some())),
        }
        let values: Vec<serde_json::Value> = match &t.value {
            Values::Scalar(v) => vec![match (v.as_f64(), v.as_str()) {
                (Some(x), _) => serde_json::json!(x),
                (_, Some(s)) => serde_json::json!(s),
                _ => panic!("{key}: {v:?}"),
            }],
            Values::Array(pointer) => f
                .array::<f64>(pointer)
                .unwrap()
                .iter()
                .map(|&x| serde_json::json!(x))
                .collect(),
        };
        assert_eq!(&values, want["value"].as_array().unwrap(), "{key}");
    }
}
