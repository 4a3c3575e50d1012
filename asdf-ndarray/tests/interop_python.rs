//! Interop with Python asdf 6.0.0 in both directions: every datatype and byte order, views with
//! negative strides, Fortran order, zero-size and 0-d arrays, masked, inline, strings, nested
//! records, streamed and external arrays, compressed blocks.
//!
//! Both sides reduce each array to a normal form: its values as C-contiguous little-endian
//! bytes (NumPy's `ascontiguousarray(a, dtype=a.dtype.newbyteorder('<')).tobytes()`), compared
//! byte for byte (so NaN payloads, -0.0 and padding of strings are checked too).

use crate::common;

use std::path::Path;

use asdf_block::{BlockWriter, Label, WriteOptions};
use asdf_ndarray::{
    complex_from_node, complex_node, AnyArray, ArrayWriter, BigInteger, ByteOrder, Datatype, Field,
    NdArrayMeta, NdError, RecordArray, ScalarType, Storage, StoreOptions,
};
use asdf_yaml::Node;
use half::f16;
use ndarray::{s, Array, Array1, Array2, ArrayD, IxDyn, ShapeBuilder};
use num_complex::Complex;

use crate::common::{read_tree, root, FileStore};

/// The little-endian C-order bytes of any array.
fn normal_bytes(a: &AnyArray) -> Vec<u8> {
    let mut w = ArrayWriter::new();
    let opts = StoreOptions {
        byteorder: ByteOrder::Little,
        ..StoreOptions::default()
    };
    match a {
        AnyArray::Record(r) => w
            .add_records(&r.to_byteorder(ByteOrder::Little).unwrap(), &opts)
            .unwrap(),
        other => w.add_any(other, &opts).unwrap(),
    };
    w.blocks()[0].data.to_vec()
}

fn mask_bytes(m: &ArrayD<bool>) -> Vec<u8> {
    m.iter().map(|&b| u8::from(b)).collect()
}

/// `key dtype shape masked` lines.
fn manifest(text: &str) -> Vec<(String, String, Vec<usize>, bool)> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut p = l.split(' ');
            let key = p.next().unwrap().to_string();
            let dtype = p.next().unwrap().to_string();
            let shape = p.next().unwrap();
            let shape = if shape == "-" {
                vec![]
            } else {
                shape.split(',').map(|d| d.parse().unwrap()).collect()
            };
            let masked = p.next() == Some("1");
            (key, dtype, shape, masked)
        })
        .collect()
}

const PY_WRITE: &str = r#"
import sys, os, numpy as np, asdf
from asdf.tags.core import Stream
d = sys.argv[1]
tree = {}
expected = {}
def add(k, a, exp=None):
    tree[k] = a
    expected[k] = a if exp is None else exp

for t in ['i1','u1','i2','u2','i4','u4','i8','u8','f2','f4','f8','c8','c16','b1']:
    for bo in '<>':
        dt = np.dtype(bo + t)
        if t == 'b1':
            a = (np.arange(12) % 3 == 0)
        elif t[0] in 'iu':
            info = np.iinfo(dt)
            a = np.array([info.min, info.max, 0, 1, 2, 3, 100, 7, 8, 9, 10, 11], dtype=object)
        elif t[0] == 'f':
            fi = np.finfo(dt)
            a = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, fi.max, fi.min, fi.eps, fi.tiny, 1.5, -2.25, 1e-3])
        else:
            fi = np.finfo(np.dtype(bo + ('f4' if t == 'c8' else 'f8')))
            r = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, fi.max, fi.min, fi.eps, fi.tiny, 1.5, -2.25, 1e-3])
            a = r + 1j * r[::-1]
        add('t' + ('le' if bo == '<' else 'be') + '_' + t, a.astype(dt).reshape(3, 4))

base = np.arange(20, dtype='<f8')
add('neg_base', base)
add('neg_view', base[::-3])
base3 = np.arange(60, dtype='>i4').reshape(3, 4, 5)
add('base3', base3)
add('view3', base3[::-1, 1:3, ::2])
add('fortran', np.asfortranarray(np.arange(12.0).reshape(3, 4)))
add('zero_2d', np.zeros((0, 3)))
add('zero_inner', np.zeros((2, 0), dtype='>i2'))
add('scalar_f8', np.array(3.5))
add('scalar_be_i8', np.array(-7, dtype='>i8'))
m = np.ma.array([1.0, 2.0, 3.0, 4.0], mask=[0, 1, 0, 1])
add('masked', m)
inl = np.array([[1, 2, 3], [4, 5, 6]], dtype='<i4')
add('inline_i4', inl)
inlf = np.array([0.5, np.nan, -np.inf])
add('inline_f8', inlf)
add('ascii', np.array([b'', b'ab', b'xyz']))
add('ucs4_le', np.array(['', '\u00c6\u02a9', '\U00010020x'], dtype='<U2'))
add('ucs4_be', np.array(['', '\u00c6\u02a9', '\U00010020x'], dtype='>U2'))
rec_dt = np.dtype([('a', '>i4'), ('b', [('x', '<f8'), ('y', 'S2')]), ('c', '<u2', (3,))])
add('records', np.array([(1, (2.5, b'ab'), [1, 2, 3]), (-5, (np.nan, b'z'), [4, 5, 6])], dtype=rec_dt))
# Python writes nested records inline but cannot read them back (6.0.0); this crate can.
rin = np.array([(1, (2.5, b'ab'), [1, 2, 3]), (-5, (-1.0, b'z'), [4, 5, 6])], dtype=rec_dt)
add('records_inline', rin)
for codec in ['zlib', 'bzp2', 'lz4']:
    add('comp_' + codec, np.arange(1000, dtype='<i8') % 17)
ext = np.arange(6, dtype='<u2').reshape(2, 3)
add('external', ext)
rows = np.arange(24, dtype='<f8').reshape(6, 4)
minl = np.ma.array([1.0, 2.0, 3.0], mask=[0, 1, 0])
add('masked_inline', minl, np.ma.array([1.0, 0.0, 3.0], mask=[0, 1, 0]))  # masked values are written as null
tree['big'] = asdf.IntegerType(2**100)
tree['neg'] = asdf.IntegerType(-(2**70))
tree['cplx'] = 1.5 - 2j
tree['stream'] = Stream([4], np.float64)
expected['stream'] = rows

af = asdf.AsdfFile(tree)
af.set_array_storage(inl, 'inline')
af.set_array_storage(inlf, 'inline')
af.set_array_storage(rin, 'inline')
af.set_array_storage(minl, 'inline')
af.set_array_storage(ext, 'external')
for codec in ['zlib', 'bzp2', 'lz4']:
    af.set_array_compression(tree['comp_' + codec], codec)
path = os.path.join(d, 'py.asdf')
with open(path, 'wb') as f:
    af.write_to(f)
    f.write(rows.tobytes())
    f.write(b'\x01\x02\x03')  # a partial row, ignored by readers
for k, a in expected.items():
    data = np.ma.getdata(a)
    le = np.ascontiguousarray(data, dtype=data.dtype.newbyteorder('<'))
    open(os.path.join(d, k + '.bin'), 'wb').write(le.tobytes())
    masked = isinstance(a, np.ma.MaskedArray)
    if masked:
        open(os.path.join(d, k + '.mask'), 'wb').write(np.ma.getmaskarray(a).astype('u1').tobytes())
    shape = ','.join(str(s) for s in a.shape) or '-'
    print(k, data.dtype.str, shape, int(masked))
"#;

#[test]
fn python_writes_rust_reads() {
    let py = asdf_testkit::require_python!();
    let dir = asdf_testkit::TempDir::new("nd-py2rs");
    let out = asdf_testkit::run_python(&py, PY_WRITE, &[dir.path().to_str().unwrap()]);
    let entries = manifest(&String::from_utf8(out).unwrap());
    assert!(entries.len() > 45, "{} arrays", entries.len());
    let path = dir.join("py.asdf");
    let tree = read_tree(&path);
    let store = FileStore::open(&path, &tree);
    let (mut views, mut refused) = (0, 0);
    for (key, dtype, shape, masked) in &entries {
        let node = tree
            .get(key)
            .unwrap_or_else(|| panic!("{key} missing from the tree"));
        let meta = NdArrayMeta::from_node(node).unwrap_or_else(|e| panic!("{key}: {e}"));
        let (arr, mask) = meta
            .read_masked(&store)
            .unwrap_or_else(|e| panic!("{key}: {e}"));
        assert_eq!(arr.shape(), &shape[..], "{key} ({dtype}) shape");
        let expected = std::fs::read(dir.join(&format!("{key}.bin"))).unwrap();
        assert_eq!(
            normal_bytes(&arr),
            expected,
            "{key} ({dtype}) values: {arr:?}"
        );
        if *masked {
            let m = mask.unwrap_or_else(|| panic!("{key}: mask missing"));
            assert_eq!(
                mask_bytes(&m),
                std::fs::read(dir.join(&format!("{key}.mask"))).unwrap(),
                "{key} mask"
            );
        } else {
            assert!(mask.is_none(), "{key}: unexpected mask");
        }
        // Zero-copy where possible; otherwise a clear refusal, never a wrong answer.
        if let AnyArray::Float64(copy) = &arr {
            match meta.view::<f64>(&store) {
                Ok(v) => {
                    views += 1;
                    assert!(
                        v.iter()
                            .zip(copy.iter())
                            .all(|(a, b)| a.to_bits() == b.to_bits()),
                        "{key} view"
                    );
                    assert_eq!(v.shape(), copy.shape());
                }
                Err(NdError::NotViewable(why)) => {
                    refused += 1;
                    assert!(
                        why.contains("aligned")
                            || why.contains("compressed")
                            || why.contains("inline")
                            || why.contains("endian"),
                        "{key}: {why}"
                    );
                }
                Err(e) => panic!("{key}: {e}"),
            }
        }
    }
    assert!(views + refused >= 8);
    // asdf 6.0.0 writes strided views (negative steps included) as contiguous copies in their
    // own block, and Fortran-order arrays as their memory plus strides.
    let nv = NdArrayMeta::from_node(tree.get("neg_view").unwrap()).unwrap();
    assert!(nv.strides.is_none() && nv.offset == 0, "{nv:?}");
    let fo = NdArrayMeta::from_node(tree.get("fortran").unwrap()).unwrap();
    assert_eq!(fo.strides, Some(vec![8, 24]));
    // Records: nested field access.
    let recs = NdArrayMeta::from_node(tree.get("records").unwrap())
        .unwrap()
        .records(&store)
        .unwrap();
    let b = recs.field("b").unwrap().into_records().unwrap();
    assert_eq!(
        b.field("y")
            .unwrap()
            .into_strings()
            .unwrap()
            .into_raw_vec_and_offset()
            .0,
        vec!["ab", "z"]
    );
    let c = recs.field("c").unwrap().into_array::<u16>().unwrap();
    assert_eq!(c.shape(), &[2, 3]);
    assert_eq!(c[[1, 2]], 6);
    // Big integers (words in blocks) and complex scalars.
    let big = BigInteger::from_node(tree.get("big").unwrap(), &store).unwrap();
    assert_eq!(big.to_string(), (1u128 << 100).to_string());
    let neg = BigInteger::from_node(tree.get("neg").unwrap(), &store).unwrap();
    assert_eq!(neg.to_i128(), Some(-(1i128 << 70)));
    assert_eq!(
        complex_from_node(tree.get("cplx").unwrap()).unwrap(),
        Complex::new(1.5, -2.0)
    );
    let ucs = NdArrayMeta::from_node(tree.get("ucs4_be").unwrap()).unwrap();
    assert_eq!(
        ucs.byteorder,
        ByteOrder::Big,
        "Python writes big-endian UCS-4 for '>U'"
    );
    assert_eq!(ucs.strings(&store).unwrap()[[2]], "\u{10020}x");
}

const PY_READ: &str = r#"
import sys, os, numpy as np, asdf, warnings
d = sys.argv[1]
with asdf.open(os.path.join(d, 'rs.asdf'), validate_checksums=True, lazy_load=False, memmap=False) as af:
    for k in sorted(af.tree):
        if k in ('asdf_library', 'history', 'note'):
            continue
        a = af.tree[k]
        if not isinstance(a, np.ndarray):
            with open(os.path.join(d, 'scalars.txt'), 'a') as f:
                f.write('%s %s %r\n' % (k, type(a).__name__, a))
            continue
        data = np.ma.getdata(a)
        le = np.ascontiguousarray(data, dtype=data.dtype.newbyteorder('<'))
        open(os.path.join(d, k + '.bin'), 'wb').write(le.tobytes())
        masked = isinstance(a, np.ma.MaskedArray)
        if masked:
            open(os.path.join(d, k + '.mask'), 'wb').write(np.ma.getmaskarray(a).astype('u1').tobytes())
        shape = ','.join(str(s) for s in a.shape) or '-'
        print(k, data.dtype.str, shape, int(masked))
"#;

fn numeric_cases() -> Vec<(String, AnyArray)> {
    let mut v: Vec<(String, AnyArray)> = Vec::new();
    let sh = IxDyn(&[3, 4]);
    macro_rules! ints {
        ($($t:ty),*) => {$(
            let vals: Vec<$t> = [<$t>::MIN, <$t>::MAX, 0, 1, 2, 3, 100, 7, 8, 9, 10, 11].to_vec();
            v.push((stringify!($t).into(), ArrayD::from_shape_vec(sh.clone(), vals).unwrap().into()));
        )*};
    }
    ints!(i8, i16, i32, i64, u8, u16, u32, u64);
    let f = [
        0.0,
        -0.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MAX,
        f64::MIN,
        f64::EPSILON,
        f64::MIN_POSITIVE,
        1.5,
        -2.25,
        1e-3,
    ];
    v.push((
        "f64".into(),
        ArrayD::from_shape_vec(sh.clone(), f.to_vec())
            .unwrap()
            .into(),
    ));
    v.push((
        "f32".into(),
        ArrayD::from_shape_vec(sh.clone(), f.iter().map(|&x| x as f32).collect())
            .unwrap()
            .into(),
    ));
    v.push((
        "f16".into(),
        ArrayD::from_shape_vec(sh.clone(), f.iter().map(|&x| f16::from_f64(x)).collect())
            .unwrap()
            .into(),
    ));
    v.push((
        "c64".into(),
        ArrayD::from_shape_vec(
            sh.clone(),
            f.iter()
                .zip(f.iter().rev())
                .map(|(&a, &b)| Complex::new(a as f32, b as f32))
                .collect(),
        )
        .unwrap()
        .into(),
    ));
    v.push((
        "c128".into(),
        ArrayD::from_shape_vec(
            sh.clone(),
            f.iter()
                .zip(f.iter().rev())
                .map(|(&a, &b)| Complex::new(a, b))
                .collect(),
        )
        .unwrap()
        .into(),
    ));
    v.push((
        "bool".into(),
        ArrayD::from_shape_vec(sh, (0..12).map(|i| i % 3 == 0).collect())
            .unwrap()
            .into(),
    ));
    v
}

#[test]
fn rust_writes_python_reads() {
    let py = asdf_testkit::require_python!();
    let dir = asdf_testkit::TempDir::new("nd-rs2py");
    let mut w = ArrayWriter::new();
    let mut expected: Vec<(String, Vec<u8>, Option<Vec<u8>>)> = Vec::new();
    let mut nodes: Vec<(String, Node)> = Vec::new();
    for (name, arr) in numeric_cases() {
        for (bo, order) in [("le", ByteOrder::Little), ("be", ByteOrder::Big)] {
            let opts = StoreOptions {
                byteorder: order,
                ..StoreOptions::default()
            };
            let key = format!("t{bo}_{name}");
            let node = w.add_any(&arr, &opts).unwrap();
            nodes.push((key.clone(), node));
            expected.push((key, normal_bytes(&arr), None));
        }
    }
    // Views sharing a block, negative strides, Fortran order.
    let base = Array1::from_iter((0..20).map(f64::from));
    let opts = StoreOptions::default();
    nodes.push((
        "neg_base".into(),
        w.add_view(&base, &base.view(), &opts).unwrap(),
    ));
    expected.push((
        "neg_base".into(),
        normal_bytes(&base.clone().into_dyn().into()),
        None,
    ));
    let nv = base.slice(s![..;-3]);
    nodes.push(("neg_view".into(), w.add_view(&base, &nv, &opts).unwrap()));
    expected.push((
        "neg_view".into(),
        normal_bytes(&nv.to_owned().into_dyn().into()),
        None,
    ));
    let b3 = Array::from_shape_vec((3, 4, 5), (0..60i32).collect()).unwrap();
    let v3 = b3.slice(s![..;-1, 1..3, ..;2]);
    let big = StoreOptions {
        byteorder: ByteOrder::Big,
        ..StoreOptions::default()
    };
    nodes.push(("view3".into(), w.add_view(&b3, &v3, &big).unwrap()));
    expected.push((
        "view3".into(),
        normal_bytes(&v3.to_owned().into_dyn().into()),
        None,
    ));
    let fort = Array2::from_shape_vec((3, 4).f(), (0..12).map(f64::from).collect()).unwrap();
    nodes.push(("fortran".into(), w.add(&fort, &opts).unwrap()));
    expected.push((
        "fortran".into(),
        normal_bytes(&fort.clone().into_dyn().into()),
        None,
    ));
    nodes.push((
        "fortran_shared".into(),
        w.add_view(&fort, &fort.view(), &opts).unwrap(),
    ));
    expected.push((
        "fortran_shared".into(),
        normal_bytes(&fort.clone().into_dyn().into()),
        None,
    ));
    // Zero-size and 0-d.
    let z = ArrayD::<f64>::zeros(IxDyn(&[0, 3]));
    nodes.push(("zero_2d".into(), w.add(&z, &opts).unwrap()));
    expected.push(("zero_2d".into(), Vec::new(), None));
    let zi = ArrayD::<i16>::zeros(IxDyn(&[2, 0]));
    nodes.push(("zero_inner".into(), w.add(&zi, &big).unwrap()));
    expected.push(("zero_inner".into(), Vec::new(), None));
    let s0 = ArrayD::from_elem(IxDyn(&[]), 3.5f64);
    nodes.push(("scalar_f8".into(), w.add(&s0, &opts).unwrap()));
    expected.push(("scalar_f8".into(), 3.5f64.to_le_bytes().to_vec(), None));
    let s1 = ArrayD::from_elem(IxDyn(&[]), -7i64);
    nodes.push(("scalar_be_i8".into(), w.add(&s1, &big).unwrap()));
    expected.push(("scalar_be_i8".into(), (-7i64).to_le_bytes().to_vec(), None));
    // Masked (block and inline), inline.
    let md = Array1::from(vec![1.0f64, 2.0, 3.0, 4.0]);
    let mm = Array1::from(vec![false, true, false, true]);
    nodes.push(("masked".into(), w.add_masked(&md, &mm, &opts).unwrap()));
    expected.push((
        "masked".into(),
        normal_bytes(&md.clone().into_dyn().into()),
        Some(vec![0, 1, 0, 1]),
    ));
    nodes.push((
        "masked_inline".into(),
        w.add_masked(&md, &mm, &StoreOptions::inline()).unwrap(),
    ));
    expected.push((
        "masked_inline".into(),
        normal_bytes(&md.clone().into_dyn().into()),
        Some(vec![0, 1, 0, 1]),
    ));
    let s0i = ArrayD::from_elem(IxDyn(&[]), -2.25f64);
    nodes.push((
        "scalar_inline".into(),
        w.add(&s0i, &StoreOptions::inline()).unwrap(),
    ));
    expected.push((
        "scalar_inline".into(),
        (-2.25f64).to_le_bytes().to_vec(),
        None,
    ));
    // Scalars of the tree: big integers (words in a block and inline) and complex numbers.
    let bigint = BigInteger::from_decimal("-1193942770599561143856918438330").unwrap();
    nodes.push(("big".into(), bigint.to_node(&mut w, &opts).unwrap()));
    nodes.push((
        "big_inline".into(),
        BigInteger::from_i128(1 << 100)
            .to_node(&mut w, &StoreOptions::inline())
            .unwrap(),
    ));
    nodes.push(("cplx".into(), complex_node(Complex::new(f64::NAN, -0.5))));
    let inl = Array2::from_shape_vec((2, 3), vec![1i32, 2, 3, 4, 5, 6]).unwrap();
    nodes.push((
        "inline_i4".into(),
        w.add(&inl, &StoreOptions::inline()).unwrap(),
    ));
    expected.push((
        "inline_i4".into(),
        normal_bytes(&inl.clone().into_dyn().into()),
        None,
    ));
    let inlf = Array1::from(vec![0.5f64, f64::NAN, f64::NEG_INFINITY]);
    nodes.push((
        "inline_f8".into(),
        w.add(&inlf, &StoreOptions::inline()).unwrap(),
    ));
    expected.push((
        "inline_f8".into(),
        normal_bytes(&inlf.clone().into_dyn().into()),
        None,
    ));
    // Strings.
    let strs = Array1::from(vec![String::new(), "ab".into(), "xyz".into()]);
    nodes.push(("ascii".into(), w.add_strings(&strs, false, &opts).unwrap()));
    expected.push(("ascii".into(), b"\0\0\0ab\0xyz".to_vec(), None));
    let u = Array1::from(vec![
        String::new(),
        "\u{c6}\u{2a9}".into(),
        "\u{10020}x".into(),
    ]);
    let ucs_exp: Vec<u8> = [0u32, 0, 0xc6, 0x2a9, 0x10020, 'x' as u32]
        .iter()
        .flat_map(|c| c.to_le_bytes())
        .collect();
    nodes.push(("ucs4_be".into(), w.add_strings(&u, true, &big).unwrap()));
    expected.push(("ucs4_be".into(), ucs_exp.clone(), None));
    nodes.push((
        "ucs4_inline".into(),
        w.add_strings(&u, true, &StoreOptions::inline()).unwrap(),
    ));
    expected.push(("ucs4_inline".into(), ucs_exp, None));
    // Nested records with mixed byte orders.
    let fields = vec![
        Field {
            byteorder: Some(ByteOrder::Big),
            ..Field::new("a", ScalarType::Int32.into())
        },
        Field::new(
            "b",
            Datatype::Record(vec![
                Field {
                    byteorder: Some(ByteOrder::Little),
                    ..Field::new("x", ScalarType::Float64.into())
                },
                Field::new("y", Datatype::Ascii(2)),
            ]),
        ),
        Field {
            byteorder: Some(ByteOrder::Little),
            shape: vec![3],
            ..Field::new("c", ScalarType::UInt16.into())
        },
    ];
    let mut rb = Vec::new();
    for (a, x, y, c) in [
        (1i32, 2.5f64, *b"ab", [1u16, 2, 3]),
        (-5, f64::NAN, *b"z\0", [4, 5, 6]),
    ] {
        rb.extend(a.to_be_bytes());
        rb.extend(x.to_le_bytes());
        rb.extend(y);
        c.iter().for_each(|v| rb.extend(v.to_le_bytes()));
    }
    let recs = RecordArray::new(fields, vec![2], ByteOrder::Big, rb).unwrap();
    nodes.push(("records".into(), w.add_records(&recs, &opts).unwrap()));
    expected.push((
        "records".into(),
        normal_bytes(&AnyArray::Record(recs.clone())),
        None,
    ));
    // Python 6.0.0 reads inline records only when they are flat (sub-arrays allowed).
    let flat = vec![
        Field {
            byteorder: Some(ByteOrder::Big),
            ..Field::new("a", ScalarType::Int32.into())
        },
        Field::new("y", Datatype::Ascii(2)),
        Field {
            byteorder: Some(ByteOrder::Little),
            shape: vec![3],
            ..Field::new("c", ScalarType::UInt16.into())
        },
    ];
    let mut fb = Vec::new();
    for (a, y, c) in [(1i32, *b"ab", [1u16, 2, 3]), (-5, *b"z\0", [4, 5, 6])] {
        fb.extend(a.to_be_bytes());
        fb.extend(y);
        c.iter().for_each(|v| fb.extend(v.to_le_bytes()));
    }
    let flat = RecordArray::new(flat, vec![2], ByteOrder::Big, fb).unwrap();
    nodes.push((
        "records_inline".into(),
        w.add_records(&flat, &StoreOptions::inline()).unwrap(),
    ));
    expected.push((
        "records_inline".into(),
        normal_bytes(&AnyArray::Record(flat)),
        None,
    ));
    // Compressed and external.
    let comp = Array1::from_iter((0..1000i64).map(|i| i % 17));
    for codec in ["zlib", "bzp2", "lz4"] {
        let o = StoreOptions {
            level: Some(1).filter(|_| codec != "lz4"),
            ..StoreOptions::compressed(codec).unwrap()
        };
        nodes.push((format!("comp_{codec}"), w.add(&comp, &o).unwrap()));
        expected.push((
            format!("comp_{codec}"),
            normal_bytes(&comp.clone().into_dyn().into()),
            None,
        ));
    }
    let ext = Array2::from_shape_vec((2, 3), (0..6u16).collect()).unwrap();
    let eo = StoreOptions {
        storage: Storage::External("rs0000.asdf".into()),
        ..StoreOptions::default()
    };
    nodes.push(("external".into(), w.add(&ext, &eo).unwrap()));
    expected.push((
        "external".into(),
        normal_bytes(&ext.clone().into_dyn().into()),
        None,
    ));
    // Streamed (the last block).
    nodes.push((
        "stream".into(),
        NdArrayMeta::streamed(vec![4], ScalarType::Float64.into(), ByteOrder::Little).to_node(),
    ));
    let rows: Vec<u8> = (0..24).flat_map(|i| f64::from(i).to_le_bytes()).collect();
    expected.push(("stream".into(), rows.clone(), None));

    let tree = root(nodes.iter().map(|(k, n)| (k.as_str(), n.clone())).collect());
    let path = dir.join("rs.asdf");
    // The main file: tree, blocks aligned to 64 bytes, then the streamed block.
    let text = format!(
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n{}",
        asdf_yaml::emit_to_string(&tree).unwrap()
    );
    let pos = text.len() as u64;
    let mut bw = BlockWriter::new(
        text.into_bytes(),
        pos,
        WriteOptions {
            align: 64,
            index: false,
            ..WriteOptions::default()
        },
    );
    w.write_blocks(&mut bw).unwrap();
    let mut stream = bw.into_streamed().unwrap();
    std::io::Write::write_all(&mut stream, &rows).unwrap();
    std::io::Write::write_all(&mut stream, &[9, 9, 9]).unwrap(); // partial row
    std::fs::write(&path, stream.finish().unwrap()).unwrap();
    common::write_file(&dir.join("unused.asdf"), &root(vec![]), &w, 0);

    let out = asdf_testkit::run_python(&py, PY_READ, &[dir.path().to_str().unwrap()]);
    let got = manifest(&String::from_utf8(out).unwrap());
    let got_keys: Vec<&str> = got.iter().map(|g| g.0.as_str()).collect();
    for (key, bytes, mask) in &expected {
        assert!(
            got_keys.contains(&key.as_str()),
            "Python did not read {key}: {got_keys:?}"
        );
        let g = got.iter().find(|g| &g.0 == key).unwrap();
        let got_bytes = std::fs::read(dir.join(&format!("{key}.bin")))
            .unwrap_or_else(|e| panic!("{key}: {g:?}: {e}"));
        if key.contains("inline") && g.1 == "<f8" {
            // YAML's `.nan` has no sign: NumPy builds it as a negative quiet NaN.
            let f = |b: &[u8]| {
                b.chunks_exact(8)
                    .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
                    .map(|x| {
                        if x.is_nan() {
                            f64::NAN.to_bits()
                        } else {
                            x.to_bits()
                        }
                    })
                    .collect::<Vec<_>>()
            };
            assert_eq!(f(&got_bytes), f(bytes), "{key}");
        } else {
            assert_eq!(&got_bytes, bytes, "{key} ({})", g.1);
        }
        match mask {
            Some(m) => {
                assert!(g.3, "{key}: Python sees no mask");
                assert_eq!(
                    &std::fs::read(dir.join(&format!("{key}.mask"))).unwrap(),
                    m,
                    "{key} mask"
                );
            }
            None => assert!(!g.3, "{key}: unexpected mask"),
        }
    }
    let scalars = std::fs::read_to_string(dir.join("scalars.txt")).unwrap();
    for line in [
        "big IntegerType IntegerType(-1193942770599561143856918438330)",
        "big_inline IntegerType IntegerType(1267650600228229401496703205376)",
        "cplx complex (nan-0.5j)",
    ] {
        assert!(
            scalars.lines().any(|l| l == line),
            "{line} not in\n{scalars}"
        );
    }
    // And this crate reads its own file back the same way (views included: blocks are aligned).
    let tree2 = read_tree(&path);
    let store = FileStore::open(&path, &tree2);
    for (key, bytes, _) in &expected {
        let meta = NdArrayMeta::from_node(tree2.get(key).unwrap()).unwrap();
        assert_eq!(&normal_bytes(&meta.read(&store).unwrap()), bytes, "{key}");
    }
    let fv = NdArrayMeta::from_node(tree2.get("tle_f64").unwrap()).unwrap();
    assert!(
        fv.view::<f64>(&store).is_ok(),
        "aligned native block views in place"
    );
    let nv = NdArrayMeta::from_node(tree2.get("neg_view").unwrap()).unwrap();
    let v = nv.view::<f64>(&store).unwrap();
    assert_eq!(
        v.iter().copied().collect::<Vec<_>>(),
        vec![19.0, 16.0, 13.0, 10.0, 7.0, 4.0, 1.0]
    );
    let _ = Label::NONE;
    let _ = Path::new("");
}
