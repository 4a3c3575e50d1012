//! Interop with NumPy (the interop virtualenv): files written here are read back identically
//! by a NumPy reader (`np.fromfile` + Fortran-order reshape, `lz4.block` for flag bit 1), and
//! files NumPy writes the way `ra.py` does (dims = shape, Fortran-order bytes, flag bit 0 for
//! big-endian dtypes, bool as eltype 0, optional trailing metadata) read here to the same values.

use asdf_testkit::{require_python, run_python, TempDir};
use half::f16;
use ndarray::{Array, ArrayD, IxDyn, ShapeBuilder};
use num_complex::{Complex32, Complex64};
use rawarray::{BoolEltype, ByteOrder, Element, ReadOptions, WriteEncoding, WriteOptions};

/// Reads every `.ra` path given and prints `name;shape;dtype;values` with the values in
/// NumPy's logical (C) order; complex values as `re:im`.
const NUMPY_READER: &str = r#"
import sys, os, struct
import numpy as np
import lz4.block
KINDS = {1: 'i', 2: 'u', 3: 'f', 4: 'c'}
def read(path):
    with open(path, 'rb') as f:
        magic, flags, eltype, elbyte, size, ndims = struct.unpack('<6Q', f.read(48))
        dims = struct.unpack('<%dQ' % ndims, f.read(8 * ndims))
    assert magic == 0x7961727261776172, hex(magic)
    off = 48 + 8 * ndims
    order = '>' if flags & 1 else '<'
    if eltype == 5 and elbyte == 1:
        dt = np.dtype('?')
    elif eltype == 0:
        dt = np.dtype('u1') if elbyte == 1 else np.dtype('V%d' % elbyte)
    else:
        dt = np.dtype('%s%s%d' % (order, KINDS[eltype], elbyte))
    n = int(np.prod(dims, dtype=np.int64)) if ndims else 1
    if flags & 2:
        with open(path, 'rb') as f:
            f.seek(off)
            block = f.read(size)
        raw = lz4.block.decompress(block, uncompressed_size=n * dt.itemsize)
        a = np.frombuffer(raw, dtype=dt, count=n)
    else:
        assert size == n * dt.itemsize
        a = np.fromfile(path, dtype=dt, count=n, offset=off)
    return a.reshape(dims, order='F')
def fmt(x):
    if isinstance(x, (complex, np.complexfloating)):
        return '%r:%r' % (float(x.real), float(x.imag))
    if isinstance(x, (bool, np.bool_)):
        return '1' if x else '0'
    if isinstance(x, (float, np.floating)):
        return repr(float(x))
    return str(int(x))
for p in sys.argv[1:]:
    a = read(p)
    vals = ','.join(fmt(x) for x in a.ravel(order='C').tolist())
    print('%s;%s;%s;%s' % (os.path.basename(p), ','.join(map(str, a.shape)), a.dtype.str, vals))
"#;

/// Writes files the way ra.py does and prints `name|shape|values` (C order).
const NUMPY_WRITER: &str = r#"
import sys, os, struct
import numpy as np
import lz4.block
out = sys.argv[1]
def write(name, data, trailer=b'', compress=False):
    kind = data.dtype.kind
    eltype = {'i': 1, 'u': 2, 'f': 3, 'c': 4}.get(kind, 0)
    flags = 1 if data.dtype.byteorder == '>' else 0
    body = data.transpose().tobytes()
    size = data.nbytes
    if compress:
        body = lz4.block.compress(body, store_size=False)
        flags |= 2
        size = len(body)
    hdr = struct.pack('<8s5Q', b'rawarray', flags, eltype, data.dtype.itemsize, size, data.ndim)
    hdr += np.array(data.shape, dtype='<u8').tobytes()
    with open(os.path.join(out, name), 'wb') as f:
        f.write(hdr + body + trailer)
    vals = data.ravel(order='C').tolist()
    def fmt(x):
        if isinstance(x, complex):
            return '%r:%r' % (x.real, x.imag)
        if isinstance(x, bool):
            return '1' if x else '0'
        return repr(x)
    print('%s|%s|%s' % (name, ','.join(map(str, data.shape)), ','.join(fmt(x) for x in vals)))
i = np.indices((2, 3, 4)).astype(np.float64)
f64 = i[0] * 100 + i[1] * 10 + i[2] + 0.25
write('f64_c.ra', f64)
write('f64_big.ra', f64.astype('>f8'))
write('f32_fortran.ra', np.asfortranarray(f64[0].astype(np.float32)))
write('i16.ra', np.array([[1, -2, 3], [-4, 5, -32768]], dtype=np.int16))
write('u64_big.ra', np.array([[1, 2**63 + 5], [7, 2**64 - 1]], dtype='>u8'))
write('c64.ra', (f64[1] + 1j * f64[0]).astype(np.complex64))
write('c128_big.ra', (f64[1] - 2j * f64[0]).astype('>c16'))
write('f16.ra', np.array([0.5, -1.5, np.inf], dtype=np.float16))
write('bool_user.ra', np.array([[True, False, True], [False, True, True]]))
write('scalar.ra', np.array(3.5))
write('trailer.ra', np.arange(6, dtype=np.int32).reshape(2, 3), trailer=b'# volatile metadata\n')
write('lz4.ra', np.tile(np.arange(50, dtype=np.uint16), 40).reshape(40, 50), compress=True)
write('empty.ra', np.zeros((0, 3), dtype=np.float32))
"#;

fn parse_f64(s: &str) -> f64 {
    s.parse::<f64>()
        .unwrap_or_else(|_| panic!("bad float {s:?}"))
}

fn strings<T: Element>(a: &ArrayD<T>, f: impl Fn(&T) -> String) -> String {
    a.iter().map(f).collect::<Vec<_>>().join(",")
}

fn fmt_f64(x: f64) -> String {
    // Compare numerically, not textually: parse NumPy's repr and print both in Rust.
    format!("{x:?}")
}

fn normalise(vals: &str) -> String {
    if vals.is_empty() {
        return String::new();
    }
    vals.split(',')
        .map(|v| {
            if let Some((re, im)) = v.split_once(':') {
                format!("{}:{}", fmt_f64(parse_f64(re)), fmt_f64(parse_f64(im)))
            } else if v.contains('.') || v.contains("inf") || v.contains("nan") || v.contains('e') {
                fmt_f64(parse_f64(v))
            } else {
                v.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn numpy_reads_what_we_write() {
    let py = require_python!();
    let dir = TempDir::new("ra-interop-w");
    let mut expected: Vec<(String, String, String, String)> = Vec::new();
    let mut add = |name: &str, shape: &[usize], dtype: &str, vals: String| {
        expected.push((
            name.to_string(),
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(","),
            dtype.to_string(),
            vals,
        ));
    };

    let f64s = Array::from_shape_fn((2, 3, 4), |(i, j, k)| (i * 100 + j * 10 + k) as f64 + 0.125)
        .into_dyn();
    rawarray::save_array(dir.join("f64.ra"), &f64s, &Default::default()).unwrap();
    add(
        "f64.ra",
        f64s.shape(),
        "<f8",
        strings(&f64s, |x| fmt_f64(*x)),
    );

    // A transposed (non-contiguous) source, written big-endian.
    let t = f64s
        .view()
        .permuted_axes(IxDyn(&[2, 0, 1]))
        .mapv(|x| x as f32);
    let tv = t.view();
    rawarray::save_array(
        dir.join("f32_big.ra"),
        &tv,
        &WriteOptions::with_byte_order(ByteOrder::Big),
    )
    .unwrap();
    add(
        "f32_big.ra",
        t.shape(),
        ">f4",
        strings(&t, |x| fmt_f64(*x as f64)),
    );

    let ints = Array::from_shape_fn((3, 5), |(i, j)| (i as i64 - 1) * (j as i64 * 1_000_000_007))
        .into_dyn();
    rawarray::save_array(dir.join("i64.ra"), &ints, &Default::default()).unwrap();
    add(
        "i64.ra",
        ints.shape(),
        "<i8",
        strings(&ints, |x| x.to_string()),
    );

    let u16s = Array::from_shape_fn((4, 2), |(i, j)| (i * 7 + j * 1000) as u16).into_dyn();
    rawarray::save_array(
        dir.join("u16_big.ra"),
        &u16s,
        &WriteOptions::with_byte_order(ByteOrder::Big),
    )
    .unwrap();
    add(
        "u16_big.ra",
        u16s.shape(),
        ">u2",
        strings(&u16s, |x| x.to_string()),
    );

    let c: Vec<Complex32> = (0..12)
        .map(|k| Complex32::new(k as f32, -1.0 / k as f32))
        .collect();
    rawarray::save(dir.join("c64.ra"), &c, &[3, 4], &Default::default()).unwrap();
    let ca = ArrayD::from_shape_vec(IxDyn(&[3, 4]).f(), c.clone()).unwrap();
    add(
        "c64.ra",
        &[3, 4],
        "<c8",
        strings(&ca, |z| {
            format!("{}:{}", fmt_f64(z.re as f64), fmt_f64(z.im as f64))
        }),
    );

    let z = Array::from_shape_fn((2, 2), |(i, j)| {
        Complex64::new(i as f64 + 0.5, -(j as f64) * 1e300)
    })
    .into_dyn();
    rawarray::save_array(
        dir.join("c128_big.ra"),
        &z,
        &WriteOptions::with_byte_order(ByteOrder::Big),
    )
    .unwrap();
    add(
        "c128_big.ra",
        z.shape(),
        ">c16",
        strings(&z, |z| format!("{}:{}", fmt_f64(z.re), fmt_f64(z.im))),
    );

    let h = Array::from_shape_fn(5, |i| f16::from_f32(i as f32 * 0.5 - 1.0)).into_dyn();
    rawarray::save_array(dir.join("f16.ra"), &h, &Default::default()).unwrap();
    add(
        "f16.ra",
        h.shape(),
        "<f2",
        strings(&h, |x| fmt_f64(x.to_f64())),
    );

    let b = Array::from_shape_fn((2, 3), |(i, j)| (i + j) % 2 == 0).into_dyn();
    rawarray::save_array(dir.join("bool_jl.ra"), &b, &Default::default()).unwrap();
    add(
        "bool_jl.ra",
        b.shape(),
        "|b1",
        strings(&b, |x| u8::from(*x).to_string()),
    );
    let o = WriteOptions {
        bool_eltype: BoolEltype::User,
        ..Default::default()
    };
    rawarray::save_array(dir.join("bool_py.ra"), &b, &o).unwrap();
    add(
        "bool_py.ra",
        b.shape(),
        "|u1",
        strings(&b, |x| u8::from(*x).to_string()),
    );

    let s = ndarray::arr0(-7i32).into_dyn();
    rawarray::save_array(dir.join("scalar.ra"), &s, &Default::default()).unwrap();
    add("scalar.ra", &[], "<i4", "-7".into());

    let lz = Array::from_shape_fn((30, 40), |(i, j)| ((i * j) % 11) as u32).into_dyn();
    rawarray::save_array(
        dir.join("lz4.ra"),
        &lz,
        &WriteOptions::with_encoding(WriteEncoding::Lz4Block),
    )
    .unwrap();
    add("lz4.ra", lz.shape(), "<u4", strings(&lz, |x| x.to_string()));

    let names: Vec<String> = expected
        .iter()
        .map(|e| dir.join(&e.0).to_string_lossy().into_owned())
        .collect();
    let args: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
    let out = String::from_utf8(run_python(&py, NUMPY_READER, &args)).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), expected.len(), "{out}");
    for (line, (name, shape, dtype, vals)) in lines.iter().zip(&expected) {
        let parts: Vec<&str> = line.splitn(4, ';').collect();
        assert_eq!(parts[0], name);
        assert_eq!(parts[1], shape, "{name}: shape");
        assert_eq!(parts[2], dtype, "{name}: dtype");
        assert_eq!(normalise(parts[3]), normalise(vals), "{name}: values");
    }
}

#[test]
fn we_read_what_numpy_writes() {
    let py = require_python!();
    let dir = TempDir::new("ra-interop-r");
    let out = String::from_utf8(run_python(
        &py,
        NUMPY_WRITER,
        &[dir.path().to_str().unwrap()],
    ))
    .unwrap();
    let mut seen = 0;
    for line in out.lines() {
        let parts: Vec<&str> = line.splitn(3, '|').collect();
        let (name, shape, vals) = (parts[0], parts[1], parts[2]);
        let shape: Vec<usize> = if shape.is_empty() {
            vec![]
        } else {
            shape.split(',').map(|d| d.parse().unwrap()).collect()
        };
        let path = dir.join(name);
        let a = rawarray::RawArray::open(&path, &ReadOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let dims: Vec<usize> = a.dims().iter().map(|&d| d as usize).collect();
        assert_eq!(dims, shape, "{name}: ra.py keeps dims == numpy shape");
        let got = match name {
            "f64_c.ra" | "f64_big.ra" => strings(&a.to_array::<f64>().unwrap(), |x| fmt_f64(*x)),
            "f32_fortran.ra" => strings(&a.to_array::<f32>().unwrap(), |x| fmt_f64(*x as f64)),
            "i16.ra" => strings(&a.to_array::<i16>().unwrap(), |x| x.to_string()),
            "u64_big.ra" => strings(&a.to_array::<u64>().unwrap(), |x| x.to_string()),
            "c64.ra" => strings(&a.to_array::<Complex32>().unwrap(), |z| {
                format!("{}:{}", fmt_f64(z.re as f64), fmt_f64(z.im as f64))
            }),
            "c128_big.ra" => strings(&a.to_array::<Complex64>().unwrap(), |z| {
                format!("{}:{}", fmt_f64(z.re), fmt_f64(z.im))
            }),
            "f16.ra" => strings(&a.to_array::<f16>().unwrap(), |x| fmt_f64(x.to_f64())),
            "bool_user.ra" => strings(&a.to_array::<bool>().unwrap(), |x| u8::from(*x).to_string()),
            "scalar.ra" => strings(&a.to_array::<f64>().unwrap(), |x| fmt_f64(*x)),
            "trailer.ra" => {
                assert_eq!(a.trailer(), b"# volatile metadata\n");
                strings(&a.to_array::<i32>().unwrap(), |x| x.to_string())
            }
            "lz4.ra" => {
                assert_eq!(a.info().encoding, rawarray::Encoding::Lz4Block);
                strings(&a.to_array::<u16>().unwrap(), |x| x.to_string())
            }
            "empty.ra" => strings(&a.to_array::<f32>().unwrap(), |x| fmt_f64(*x as f64)),
            other => panic!("unexpected file {other}"),
        };
        assert_eq!(normalise(&got), normalise(vals), "{name}");
        // The typed path reading straight from the file agrees.
        if name == "f64_big.ra" {
            let (arr, _) = rawarray::open_array::<f64, _>(&path, &ReadOptions::default()).unwrap();
            assert_eq!(arr, a.to_array::<f64>().unwrap());
        }
        seen += 1;
    }
    assert_eq!(seen, 13);
}
