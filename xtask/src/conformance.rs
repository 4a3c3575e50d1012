//! `cargo xtask conformance`: the asdf-standard reference files by the compliance procedure,
//! a matrix of files Python asdf 6.0.0 writes (read here and compared value by value), and the
//! same matrix written here (read by Python). Prints a table; fails on any failure.

use std::path::{Path, PathBuf};
use std::process::Command;

use asdf::ndarray::{ByteOrder, Datatype, ScalarType};
use asdf::yaml::Node;
use asdf::{AsdfFile, AsdfWriter, Storage, StoreOptions};
use ndarray::{s, Array2, Array3};

/// One line of the table.
pub(crate) struct Row {
    pub group: &'static str,
    pub case: String,
    pub result: Result<(), String>,
}

const DTYPES: [&str; 14] = [
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "bool8",
];
const CODECS: [&str; 6] = ["zlib", "bzp2", "lz4", "lz4f", "zstd", "blsc"];

fn numpy_code(dtype: &str) -> &'static str {
    match dtype {
        "int8" => "i1",
        "uint8" => "u1",
        "int16" => "i2",
        "uint16" => "u2",
        "int32" => "i4",
        "uint32" => "u4",
        "int64" => "i8",
        "uint64" => "u8",
        "float16" => "f2",
        "float32" => "f4",
        "float64" => "f8",
        "complex64" => "c8",
        "complex128" => "c16",
        _ => "b1",
    }
}

/// The tree without `asdf_library` and `history`, arrays replaced by null (compared apart).
fn skeleton(tree: &Node) -> Vec<(Node, Node)> {
    fn strip(n: &Node) -> Node {
        if asdf::array_kind(n).is_some() {
            return Node::null();
        }
        match n.value() {
            asdf::yaml::Value::Seq(items) => Node::sequence(items.iter().map(strip)),
            asdf::yaml::Value::Map(m) => Node::from(
                m.iter()
                    .map(|(k, v)| (k.clone(), strip(v)))
                    .collect::<asdf::yaml::Mapping>(),
            ),
            _ => n.clone(),
        }
    }
    tree.as_map()
        .map(|m| {
            m.iter()
                .filter(|(k, _)| !matches!(k.as_str(), Some("asdf_library" | "history")))
                .map(|(k, v)| (k.clone(), strip(v)))
                .collect()
        })
        .unwrap_or_default()
}

fn reference_files(corpus: &Path) -> Vec<Row> {
    let mut rows = Vec::new();
    let root = corpus.join("asdf-standard/reference_files");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_dir() && !p.ends_with("generate"))
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    for dir in dirs {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        files.sort();
        for path in files {
            let twin = path.with_extension("yaml");
            if path.extension().is_none_or(|e| e != "asdf") || !twin.exists() {
                continue;
            }
            let case = format!(
                "{}/{}",
                dir.file_name().unwrap_or_default().to_string_lossy(),
                path.file_name().unwrap_or_default().to_string_lossy()
            );
            let result = (|| -> Result<(), String> {
                let f = AsdfFile::open(&path).map_err(|e| e.to_string())?;
                let y = AsdfFile::open(&twin).map_err(|e| e.to_string())?;
                if skeleton(f.tree()) != skeleton(y.tree()) {
                    return Err("tree differs from its .yaml twin".into());
                }
                let (a, b) = (f.arrays(), y.arrays());
                if a != b {
                    return Err(format!("arrays {a:?} vs twin {b:?}"));
                }
                for (ptr, _) in a {
                    let x = f.read(&ptr).map_err(|e| e.to_string())?;
                    let t = y.read(&ptr).map_err(|e| e.to_string())?;
                    if !x.equals_nan_aware(&t) {
                        return Err(format!("{ptr} differs from its twin"));
                    }
                }
                Ok(())
            })();
            rows.push(Row {
                group: "reference file",
                case,
                result,
            });
        }
    }
    rows
}

const PY_WRITE: &str = r#"
import sys, json, asdf, numpy as np
out = sys.argv[1]
cases = []
def save(name, tree, arrays, compression=None, **kw):
    af = asdf.AsdfFile(tree)
    if compression:
        for a in arrays.values():
            af.set_array_compression(a, compression)
    af.write_to(f"{out}/{name}.asdf", **kw)
    for ptr, a in arrays.items():
        a = np.asarray(a)
        kind = "str" if a.dtype.kind in "SU" else a.dtype.newbyteorder("<").str
        path = f"{out}/{name}{ptr.replace('/', '_')}.expected"
        if kind == "str":
            open(path, "w").write(json.dumps([x.decode() if isinstance(x, bytes) else str(x) for x in a.ravel()]))
        else:
            np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tofile(path)
        cases.append({"name": f"{name}{ptr}", "file": f"{name}.asdf", "pointer": ptr, "shape": list(a.shape), "kind": kind, "expected": path})
def values(dt, n):
    k = np.arange(n)
    if dt.kind == "b":
        return (k % 3 == 0)
    if dt.kind == "f":
        v = (k * 0.25 - 1).astype(dt)
        v[1:5] = [np.nan, np.inf, -np.inf, -0.0]
        return v
    if dt.kind == "c":
        return (k * 0.5 - 1j * k).astype(dt)
    return (k * 37 + 11).astype(np.int64).astype(dt)
for name in sys.argv[2].split(","):
    for order in ("<", ">"):
        dt = np.dtype(name).newbyteorder(order)
        if dt.itemsize == 1 and order == ">":
            continue
        a = values(dt, 15).reshape(3, 5).astype(dt)
        save(f"py-{dt.name}-{'little' if order == '<' else 'big'}", {"a": a}, {"/a": a})
walk = np.cumsum(np.random.default_rng(1).standard_normal(700_000)).round(3)
for codec in sys.argv[3].split(","):
    save(f"py-codec-{codec}", {"a": walk}, {"/a": walk}, compression=codec)
base = np.arange(24.0).reshape(4, 6)
save("py-fortran", {"a": np.asfortranarray(base)}, {"/a": np.asfortranarray(base)})
save("py-view-reversed", {"a": base[::-1, ::2]}, {"/a": base[::-1, ::2]})
save("py-0d", {"a": np.array(3.5)}, {"/a": np.array(3.5)})
save("py-empty", {"a": np.zeros((0, 3))}, {"/a": np.zeros((0, 3))})
save("py-inline", {"a": np.arange(6).reshape(2, 3)}, {"/a": np.arange(6).reshape(2, 3)}, all_array_storage="inline")
save("py-external", {"a": np.arange(10, dtype="<u2")}, {"/a": np.arange(10, dtype="<u2")}, all_array_storage="external")
save("py-strings", {"ascii": np.array([b"ab", b"", b"xyz"]), "ucs4": np.array(["α", "βγ", ""])},
     {"/ascii": np.array([b"ab", b"", b"xyz"]), "/ucs4": np.array(["α", "βγ", ""])})
nested = {"x": {"y": [np.arange(4, dtype=">i4"), np.arange(2.0)]}}
save("py-nested", nested, {"/x/y/0": nested["x"]["y"][0], "/x/y/1": nested["x"]["y"][1]})
af = asdf.AsdfFile({"s": asdf.Stream([3], np.float32)})
with open(f"{out}/py-stream.asdf", "wb") as fd:
    af.write_to(fd)
    for i in range(5):
        fd.write(np.full(3, i, np.float32).tobytes())
np.repeat(np.arange(5, dtype="<f4"), 3).tofile(f"{out}/py-stream_s.expected")
cases.append({"name": "py-stream/s", "file": "py-stream.asdf", "pointer": "/s", "shape": [5, 3], "kind": "<f4", "expected": f"{out}/py-stream_s.expected"})
json.dump(cases, open(f"{out}/py-manifest.json", "w"))
"#;

fn python_matrix(python: &Path, dir: &Path) -> Vec<Row> {
    let out = Command::new(python)
        .arg("-c")
        .arg(PY_WRITE)
        .arg(dir)
        .arg(
            DTYPES
                .iter()
                .map(|d| if *d == "bool8" { "bool" } else { d })
                .collect::<Vec<_>>()
                .join(","),
        )
        .arg(CODECS.join(","))
        .output();
    let failed = |why: String| {
        vec![Row {
            group: "written by Python",
            case: "(generation)".into(),
            result: Err(why),
        }]
    };
    match out {
        Ok(o) if o.status.success() => {}
        Ok(o) => return failed(String::from_utf8_lossy(&o.stderr).into_owned()),
        Err(e) => return failed(e.to_string()),
    }
    let manifest: Vec<serde_json::Value> = match std::fs::read(dir.join("py-manifest.json"))
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string()))
    {
        Ok(m) => m,
        Err(e) => return failed(e),
    };
    manifest
        .iter()
        .map(|c| Row {
            group: "written by Python",
            case: c["name"].as_str().unwrap_or_default().to_string(),
            result: check_python_case(dir, c),
        })
        .collect()
}

/// Reads one array Python wrote (an entry of its manifest) and compares it with the shape and
/// values Python recorded.
fn check_python_case(dir: &Path, c: &serde_json::Value) -> Result<(), String> {
    let s = |k: &str| c[k].as_str().unwrap_or_default().to_string();
    let f = AsdfFile::open(dir.join(s("file"))).map_err(|e| e.to_string())?;
    let a = f.read(&s("pointer")).map_err(|e| e.to_string())?;
    let shape: Vec<usize> = c["shape"]
        .as_array()
        .map(|v| {
            v.iter()
                .filter_map(|x| x.as_u64())
                .map(|x| x as usize)
                .collect()
        })
        .unwrap_or_default();
    if a.shape() != shape.as_slice() {
        return Err(format!("shape {:?}, Python says {shape:?}", a.shape()));
    }
    let expected = std::fs::read(s("expected")).map_err(|e| e.to_string())?;
    if s("kind") == "str" {
        let want: Vec<String> = serde_json::from_slice(&expected).map_err(|e| e.to_string())?;
        let got = a
            .into_strings()
            .map_err(|e| e.to_string())?
            .into_raw_vec_and_offset()
            .0;
        return if got == want {
            Ok(())
        } else {
            Err(format!("{got:?} vs {want:?}"))
        };
    }
    let got = a.to_bytes(ByteOrder::Little).map_err(|e| e.to_string())?;
    if got != expected {
        return Err("values differ from what Python wrote".into());
    }
    Ok(())
}

/// Element `k` of the test pattern of `dtype`, as little-endian bytes (the same pattern as the
/// Python side's `values`).
fn pattern(dtype: &str, n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for k in 0..n {
        let f = |k: usize| match k {
            1 => f64::NAN,
            2 => f64::INFINITY,
            3 => f64::NEG_INFINITY,
            4 => -0.0,
            _ => k as f64 * 0.25 - 1.0,
        };
        let i = (k as i64) * 37 + 11;
        match dtype {
            "int8" | "uint8" => out.push(i as u8),
            "int16" | "uint16" => out.extend((i as u16).to_le_bytes()),
            "int32" | "uint32" => out.extend((i as u32).to_le_bytes()),
            "int64" | "uint64" => out.extend((i as u64).to_le_bytes()),
            "float16" => out.extend(half::f16::from_f64(f(k)).to_le_bytes()),
            "float32" => out.extend((f(k) as f32).to_le_bytes()),
            "float64" => out.extend(f(k).to_le_bytes()),
            "complex64" => {
                out.extend((k as f32 * 0.5).to_le_bytes());
                out.extend((-(k as f32)).to_le_bytes());
            }
            "complex128" => {
                out.extend((k as f64 * 0.5).to_le_bytes());
                out.extend((-(k as f64)).to_le_bytes());
            }
            _ => out.push(u8::from(k % 3 == 0)),
        }
    }
    out
}

/// `bytes` (little-endian elements of `unit`-byte scalars) in big-endian order.
fn swapped(bytes: &[u8], unit: usize) -> Vec<u8> {
    bytes
        .chunks_exact(unit)
        .flat_map(|c| c.iter().rev().copied())
        .collect()
}

struct OurCase {
    name: String,
    file: String,
    pointer: String,
    kind: String,
    expected: Vec<u8>,
}

/// Writes the files of our side of the matrix into `dir`: every datatype in both byte orders,
/// every codec, every layout, a stream; returns what each array must read back as.
fn write_ours(dir: &Path) -> Result<Vec<OurCase>, String> {
    let mut cases = Vec::new();
    write_dtypes(dir, &mut cases)?;
    write_codecs(dir, &mut cases)?;
    write_layouts(dir, &mut cases)?;
    write_stream(dir, &mut cases)?;
    Ok(cases)
}

/// One 3×5 array of each datatype, in each byte order it has.
fn write_dtypes(dir: &Path, cases: &mut Vec<OurCase>) -> Result<(), String> {
    let e = |e: asdf::AsdfError| e.to_string();
    for dtype in DTYPES {
        let st = ScalarType::from_name(dtype).ok_or(format!("unknown {dtype}"))?;
        let unit = match dtype {
            "complex64" => 4,
            "complex128" => 8,
            _ => st.size(),
        };
        for order in [ByteOrder::Little, ByteOrder::Big] {
            if st.size() == 1 && order == ByteOrder::Big {
                continue;
            }
            let le = pattern(dtype, 15);
            let bytes = if order == ByteOrder::Big {
                swapped(&le, unit)
            } else {
                le.clone()
            };
            let mut w = AsdfWriter::new();
            let node = w
                .arrays_mut()
                .add_raw(
                    bytes,
                    &[3, 5],
                    &Datatype::Scalar(st),
                    order,
                    &StoreOptions {
                        byteorder: order,
                        ..Default::default()
                    },
                )
                .map_err(|e| e.to_string())?;
            let file = format!("rs-{dtype}-{}.asdf", order.name());
            w.write_path(
                dir.join(&file),
                Node::mapping([("a", node)]),
                &Default::default(),
            )
            .map_err(e)?;
            cases.push(OurCase {
                name: format!("rs-{dtype}-{}/a", order.name()),
                file,
                pointer: "/a".into(),
                kind: format!("<{}", numpy_code(dtype)),
                expected: le,
            });
        }
    }
    Ok(())
}

/// The same 700 000 floats through each codec.
fn write_codecs(dir: &Path, cases: &mut Vec<OurCase>) -> Result<(), String> {
    let e = |e: asdf::AsdfError| e.to_string();
    let walk: Vec<f64> = (0..700_000)
        .map(|k| ((k as f64) * 0.001).sin().round() + k as f64 * 1e-3)
        .collect();
    let walk_bytes: Vec<u8> = walk.iter().flat_map(|x| x.to_le_bytes()).collect();
    let walk = ndarray::Array1::from(walk);
    for codec in CODECS {
        let mut w = AsdfWriter::new();
        let node = w
            .add(
                &walk,
                &StoreOptions::compressed(codec).map_err(|e| e.to_string())?,
            )
            .map_err(e)?;
        let file = format!("rs-codec-{codec}.asdf");
        w.write_path(
            dir.join(&file),
            Node::mapping([("a", node)]),
            &Default::default(),
        )
        .map_err(e)?;
        cases.push(OurCase {
            name: format!("rs-codec-{codec}/a"),
            file,
            pointer: "/a".into(),
            kind: "<f8".into(),
            expected: walk_bytes.clone(),
        });
    }
    Ok(())
}

/// One file of every array layout: transposed, reversed and strided views, a view sharing its
/// base's block, 0-d, empty, inline, external, big-endian compressed.
fn write_layouts(dir: &Path, cases: &mut Vec<OurCase>) -> Result<(), String> {
    let e = |e: asdf::AsdfError| e.to_string();
    let base = Array2::<f64>::from_shape_fn((4, 6), |(i, j)| (i * 6 + j) as f64);
    let cube = Array3::<i32>::from_shape_fn((3, 4, 5), |(i, j, k)| (i * 20 + j * 5 + k) as i32);
    let mut w = AsdfWriter::new();
    let fortran = w.add(&base.t(), &StoreOptions::default()).map_err(e)?;
    let reversed = w
        .add(&base.slice(s![..;-1, ..;2]), &StoreOptions::default())
        .map_err(e)?;
    let shared = w
        .add_view(
            &cube,
            &cube.slice(s![.., 1..3, ..;-2]),
            &StoreOptions::default(),
        )
        .map_err(e)?;
    let zero_d = w
        .add(&ndarray::arr0(3.5f64), &StoreOptions::default())
        .map_err(e)?;
    let empty = w
        .add(&Array2::<f64>::zeros((0, 3)), &StoreOptions::default())
        .map_err(e)?;
    let inline = w
        .add(&cube.slice(s![..1, ..2, ..]), &StoreOptions::inline())
        .map_err(e)?;
    let external = w
        .add(
            &cube,
            &StoreOptions {
                storage: Storage::External("rs-layouts0000.asdf".into()),
                ..Default::default()
            },
        )
        .map_err(e)?;
    let big = w
        .add(
            &cube,
            &StoreOptions {
                byteorder: ByteOrder::Big,
                ..StoreOptions::compressed("zlib").map_err(|e| e.to_string())?
            },
        )
        .map_err(e)?;
    let tree = Node::mapping([
        ("fortran", fortran),
        ("reversed", reversed),
        ("shared_view", shared),
        ("zero_d", zero_d),
        ("empty", empty),
        ("inline", inline),
        ("external", external),
        ("big_endian_zlib", big),
    ]);
    w.write_path(dir.join("rs-layouts.asdf"), tree, &Default::default())
        .map_err(e)?;
    layout_cases(&base, &cube, cases);
    Ok(())
}

/// What each array of `rs-layouts.asdf` must read back as.
fn layout_cases(base: &Array2<f64>, cube: &Array3<i32>, cases: &mut Vec<OurCase>) {
    let le_f64 =
        |a: ndarray::ArrayViewD<f64>| a.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let le_i32 =
        |a: ndarray::ArrayViewD<i32>| a.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let layout = |name: &str, kind: &str, expected: Vec<u8>| OurCase {
        name: format!("rs-layouts/{name}"),
        file: "rs-layouts.asdf".into(),
        pointer: format!("/{name}"),
        kind: kind.into(),
        expected,
    };
    cases.push(layout("fortran", "<f8", le_f64(base.t().into_dyn())));
    cases.push(layout(
        "reversed",
        "<f8",
        le_f64(base.slice(s![..;-1, ..;2]).into_dyn()),
    ));
    cases.push(layout(
        "shared_view",
        "<i4",
        le_i32(cube.slice(s![.., 1..3, ..;-2]).into_dyn()),
    ));
    cases.push(layout("zero_d", "<f8", 3.5f64.to_le_bytes().to_vec()));
    cases.push(layout("empty", "<f8", Vec::new()));
    cases.push(layout(
        "inline",
        "<i4",
        le_i32(cube.slice(s![..1, ..2, ..]).into_dyn()),
    ));
    cases.push(layout("external", "<i4", le_i32(cube.view().into_dyn())));
    cases.push(layout(
        "big_endian_zlib",
        "<i4",
        le_i32(cube.view().into_dyn()),
    ));
}

/// A streamed array with rows appended after the file was written.
fn write_stream(dir: &Path, cases: &mut Vec<OurCase>) -> Result<(), String> {
    let e = |e: asdf::AsdfError| e.to_string();
    let mut w = AsdfWriter::new();
    let node = w.add_stream::<f32>(&[3]).map_err(e)?;
    let mut stream = w
        .write_path_streaming(
            dir.join("rs-stream.asdf"),
            Node::mapping([("s", node)]),
            &Default::default(),
        )
        .map_err(e)?;
    let rows = Array2::<f32>::from_shape_fn((5, 3), |(i, _)| i as f32);
    stream.write_rows(&rows).map_err(e)?;
    stream.finish().map_err(e)?;
    cases.push(OurCase {
        name: "rs-stream/s".into(),
        file: "rs-stream.asdf".into(),
        pointer: "/s".into(),
        kind: "<f4".into(),
        expected: rows.iter().flat_map(|x| x.to_le_bytes()).collect(),
    });
    Ok(())
}

const PY_READ: &str = r#"
import sys, json, warnings, asdf, numpy as np
warnings.simplefilter("error")
d = sys.argv[1]
res = {}
for c in json.load(open(f"{d}/rs-manifest.json")):
    try:
        with asdf.open(f"{d}/{c['file']}", validate_checksums=True) as af:
            got = np.asarray(af.tree[c["pointer"][1:]] if c["pointer"].count("/") == 1 else None)
            want = np.fromfile(c["expected"], dtype=c["kind"]).reshape(got.shape)
            ok = got.dtype.newbyteorder("<") == np.dtype(c["kind"]) and np.array_equal(got, want, equal_nan=got.dtype.kind in "fc")
            res[c["name"]] = "ok" if ok else f"values or dtype differ ({got.dtype}, {got.shape})"
    except Exception as e:
        res[c["name"]] = f"{type(e).__name__}: {e}"
print(json.dumps(res))
"#;

fn our_matrix(python: &Path, dir: &Path) -> Vec<Row> {
    let failed = |why: String| {
        vec![Row {
            group: "written here, read by Python",
            case: "(generation)".into(),
            result: Err(why),
        }]
    };
    let cases = match write_ours(dir) {
        Ok(c) => c,
        Err(e) => return failed(e),
    };
    let mut manifest = Vec::new();
    for c in &cases {
        let expected = dir.join(format!("{}.expected", c.name.replace('/', "_")));
        if let Err(e) = std::fs::write(&expected, &c.expected) {
            return failed(e.to_string());
        }
        manifest.push(serde_json::json!({"name": c.name, "file": c.file, "pointer": c.pointer, "kind": c.kind, "expected": expected}));
    }
    if let Err(e) = std::fs::write(
        dir.join("rs-manifest.json"),
        serde_json::Value::Array(manifest).to_string(),
    ) {
        return failed(e.to_string());
    }
    let out = match Command::new(python)
        .arg("-c")
        .arg(PY_READ)
        .arg(dir)
        .output()
    {
        Ok(o) if o.status.success() => o.stdout,
        Ok(o) => return failed(String::from_utf8_lossy(&o.stderr).into_owned()),
        Err(e) => return failed(e.to_string()),
    };
    let res: serde_json::Map<String, serde_json::Value> = match serde_json::from_slice(&out) {
        Ok(r) => r,
        Err(e) => return failed(e.to_string()),
    };
    cases
        .iter()
        .map(|c| {
            let verdict = res
                .get(&c.name)
                .and_then(|v| v.as_str())
                .unwrap_or("missing from Python's answer");
            Row {
                group: "written here, read by Python",
                case: c.name.clone(),
                result: if verdict == "ok" {
                    Ok(())
                } else {
                    Err(verdict.to_string())
                },
            }
        })
        .collect()
}

/// Runs everything; returns the rows.
pub(crate) fn run(python: &Path, corpus: &Path, work: &Path) -> Vec<Row> {
    let _ = std::fs::remove_dir_all(work);
    if let Err(e) = std::fs::create_dir_all(work) {
        return vec![Row {
            group: "setup",
            case: work.display().to_string(),
            result: Err(e.to_string()),
        }];
    }
    let mut rows = reference_files(corpus);
    rows.extend(python_matrix(python, work));
    rows.extend(our_matrix(python, work));
    rows
}

/// The rows as a Markdown table, with a summary per group.
pub(crate) fn table(rows: &[Row]) -> String {
    let mut out = String::from("| group | case | result |\n|---|---|---|\n");
    for r in rows {
        let res = match &r.result {
            Ok(()) => "pass".to_string(),
            Err(e) => format!("**FAIL**: {}", e.replace('|', "/").replace('\n', " ")),
        };
        out.push_str(&format!("| {} | {} | {res} |\n", r.group, r.case));
    }
    out.push_str("\n| group | passed | failed |\n|---|---|---|\n");
    let mut groups: Vec<&str> = rows.iter().map(|r| r.group).collect();
    groups.dedup();
    for g in groups {
        let pass = rows
            .iter()
            .filter(|r| r.group == g && r.result.is_ok())
            .count();
        let fail = rows
            .iter()
            .filter(|r| r.group == g && r.result.is_err())
            .count();
        out.push_str(&format!("| {g} | {pass} | {fail} |\n"));
    }
    out
}
