//! Astronomy tags written by asdf-astropy (quantities, times, tables, QTables with quantity and
//! masked columns): the typed accessors of `asdf::astro` read them, `info` shows them as
//! values with units, and `convert --pointer /table DIR` writes a table's columns that NumPy
//! loads back.

use crate::common::*;

use asdf::astro::{Quantity, Table, Time, Values};
use asdf_testkit::{require_python, run_python, TempDir};

/// Writes argv[1] with asdf + asdf-astropy.
const WRITE: &str = r#"
import sys, numpy as np, asdf, astropy.units as u
from astropy.time import Time
from astropy.table import Table, QTable, MaskedColumn
q = QTable()
q["flux"] = [1.0, 2.0, 3.0] * u.Jy
q["name"] = ["a", "bb", "ccc"]
q["m"] = MaskedColumn([1, 2, 3], mask=[False, True, False])
plain = Table({"x": [1, 2], "y": [0.5, 1.5]}, meta={"origin": "test"})
plain["x"].unit = u.m
plain["x"].description = "position"
tree = {
    "q": 3.5 * u.km / u.s,
    "qa": np.arange(4.0) * u.m,
    "t": Time("2026-11-27T05:23:45", scale="utc"),
    "tm": Time([60000.5, 60001.5], format="mjd", scale="tai"),
    "qtable": q,
    "table": plain,
}
asdf.AsdfFile(tree).write_to(sys.argv[1])
"#;

fn astropy_file(dir: &TempDir) -> Option<std::path::PathBuf> {
    let py = asdf_testkit::python()?;
    let path = dir.join("astro.asdf");
    run_python(&py, WRITE, &[p(&path)]);
    Some(path)
}

#[test]
fn typed_accessors_read_what_asdf_astropy_writes() {
    let _py = require_python!();
    let dir = TempDir::new("astro-read");
    let path = astropy_file(&dir).unwrap();
    let f = asdf::AsdfFile::open(&path).unwrap();

    let q: Quantity = f.get("/q").unwrap();
    // Units in the file's own (VOUnit) form.
    assert_eq!((q.value.as_f64(), q.unit.as_str()), (Some(3.5), "km.s**-1"));
    let qa: Quantity = f.get("/qa").unwrap();
    assert_eq!(qa.unit, "m");
    let values = f.array::<f64>(qa.value.array_pointer().unwrap()).unwrap();
    assert_eq!(values.as_slice().unwrap(), &[0.0, 1.0, 2.0, 3.0]);

    let t: Time = f.get("/t").unwrap();
    let Values::Scalar(text) = &t.value else {
        panic!("{t:?}")
    };
    assert!(text.as_str().unwrap().starts_with("2026-11-27"), "{t:?}");
    let tm: Time = f.get("/tm").unwrap();
    assert_eq!(
        (tm.format.as_deref(), tm.scale.as_deref()),
        (Some("mjd"), Some("tai"))
    );
    let mjd = f.array::<f64>(tm.value.array_pointer().unwrap()).unwrap();
    assert_eq!(mjd.as_slice().unwrap(), &[60000.5, 60001.5]);

    let qt: Table = f.get("/qtable").unwrap();
    assert!(qt.qtable);
    let names: Vec<&str> = qt.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["flux", "name", "m"]);
    let flux = qt.column("flux").unwrap();
    assert_eq!(flux.unit.as_deref(), Some("Jy"));
    let flux = f
        .array::<f64>(flux.values.array_pointer().unwrap())
        .unwrap();
    assert_eq!(flux.as_slice().unwrap(), &[1.0, 2.0, 3.0]);
    let (m, mask) = f
        .read_masked(qt.column("m").unwrap().values.array_pointer().unwrap())
        .unwrap();
    assert_eq!(m.shape(), &[3]);
    assert_eq!(
        mask.unwrap().iter().copied().collect::<Vec<_>>(),
        [false, true, false]
    );
    let (names, _) = f
        .read_masked(qt.column("name").unwrap().values.array_pointer().unwrap())
        .unwrap();
    assert_eq!(names.shape(), &[3]);

    let t: Table = f.get("/table").unwrap();
    assert!(!t.qtable);
    let x = t.column("x").unwrap();
    assert_eq!(
        (x.unit.as_deref(), x.description.as_deref()),
        (Some("m"), Some("position"))
    );
    let meta = t.meta.as_ref().unwrap();
    assert_eq!(meta.get("origin").and_then(|n| n.as_str()), Some("test"));

    let e = f.get::<Table>("/q").unwrap_err().to_string();
    assert!(e.contains("/q") && e.contains("expected a Table"), "{e}");
}

#[test]
fn info_shows_quantities_times_and_tables_as_values() {
    let _py = require_python!();
    let dir = TempDir::new("astro-info");
    let path = astropy_file(&dir).unwrap();
    let o = run(&["info", p(&path)]);
    expect(&o, 0);
    let out = stdout(&o);
    for want in [
        "q (Quantity): 3.5, unit km.s**-1",
        "qa (Quantity): shape [4], float64",
        "unit m",
        "tm (Time): shape [2], float64",
        "format mjd, scale tai",
        "qtable (QTable): 3 columns",
        "flux: shape [3], float64",
        "unit Jy",
        "table (Table): 2 columns",
        "x: shape [2], int64",
        "(position)",
        "origin",
    ] {
        assert!(out.contains(want), "no {want:?} in:\n{out}");
    }
}

/// Reads argv[1]/columns.json and the .npy files it lists; prints what NumPy sees.
const LOAD_COLUMNS: &str = r#"
import sys, json, os, numpy as np
d = sys.argv[1]
for c in json.load(open(os.path.join(d, "columns.json"))):
    a = np.load(os.path.join(d, c["file"]))
    mask = np.load(os.path.join(d, c["mask"])).tolist() if c["mask"] else None
    print(c["name"], c["unit"], a.tolist(), mask)
"#;

#[test]
fn convert_writes_a_tables_columns_that_numpy_loads() {
    let py = require_python!();
    let dir = TempDir::new("astro-convert");
    let path = astropy_file(&dir).unwrap();
    let out = dir.join("cols");
    expect(
        &run(&["convert", p(&path), p(&out), "--pointer", "/qtable"]),
        0,
    );
    let loaded = String::from_utf8(run_python(&py, LOAD_COLUMNS, &[p(&out)])).unwrap();
    let lines: Vec<&str> = loaded.lines().collect();
    assert_eq!(
        lines,
        [
            "flux Jy [1.0, 2.0, 3.0] None",
            "name None ['a', 'bb', 'ccc'] None",
            "m None [1, 2, 3] [False, True, False]",
        ],
        "{loaded}"
    );
    // The directory's files are never replaced.
    let again = run(&["convert", p(&path), p(&out), "--pointer", "/qtable"]);
    assert_ne!(code(&again), 0);
    assert!(stderr(&again).contains("exists"), "{}", stderr(&again));
    // A pointer that is not a table says so.
    let o = run(&["convert", p(&path), p(&dir.join("q")), "--pointer", "/q"]);
    assert_ne!(code(&o), 0);
    assert!(stderr(&o).contains("expected a Table"), "{}", stderr(&o));
}
