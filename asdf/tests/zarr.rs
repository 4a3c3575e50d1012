//! asdf-zarr arrays (`asdf://asdf-format.org/zarr/tags/zarr-1.0.0`): files the Python
//! extension (asdf-zarr 0.0.4 on zarr 2.18) writes read here exactly as zarr reads them, whole
//! and by region, for every numcodecs compressor, both chunk orders, byte orders, missing
//! chunks and fill values; a file saved again keeps its chunks readable by Python; hostile
//! metadata gets errors, not panics or huge allocations.

use std::ops::Range;
use std::path::Path;

use asdf::{ArrayKind, AsdfFile, WriteOptions};
use asdf_testkit::{require_python, run_python, TempDir};

/// Writes `zarr.asdf` into `dir` (one zarr array per case, each also dumped as
/// `<name>.bin`, C order, little-endian) and prints `name dtype shape` lines.
const WRITE: &str = r#"
import sys, numpy as np, zarr, numcodecs, asdf
out = sys.argv[1]
cases = {}
def add(name, data, chunks, fill=0, **kw):
    z = zarr.full(data.shape, fill, chunks=chunks, dtype=data.dtype, write_empty_chunks=False, **kw)
    z[...] = data
    cases[name] = z
rng = np.random.default_rng(7)
f4 = rng.standard_normal((41, 30)).astype('f4')
f4[16:32, 16:30] = 0                   # a whole chunk of fill: never written
add('f4_zlib', f4, (16, 16), compressor=numcodecs.Zlib(level=3))
i = np.arange(2 * 35 * 9, dtype='i4').reshape(2, 35, 9)
for name, comp in [('blosc', numcodecs.Blosc(cname='lz4', shuffle=1)),
                   ('blosc_zstd_bitshuffle', numcodecs.Blosc(cname='zstd', shuffle=2)),
                   ('bz2', numcodecs.BZ2()), ('gzip', numcodecs.GZip()),
                   ('lz4', numcodecs.LZ4()), ('lzma', numcodecs.LZMA()),
                   ('zstd', numcodecs.Zstd(level=5)), ('raw', None)]:
    add('i4_' + name, i, (1, 8, 4), compressor=comp)
add('i2_fortran', (np.arange(11 * 7 * 5) - 100).astype('i2').reshape(11, 7, 5), (4, 3, 2),
    order='F', compressor=numcodecs.Zlib())
big = np.linspace(-1, 1, 50 * 20).reshape(50, 20).astype('>f8')
z = zarr.full((50, 20), np.nan, chunks=(8, 8), dtype='>f8')
z[3:40, 2:15] = big[3:40, 2:15]       # chunks outside never written: NaN
cases['f8_big_nan_fill'] = z
add('u1_fill7', np.full((30, 30), 7, dtype='u1'), (10, 10), fill=7)   # every chunk fill
add('bool', (np.arange(100) % 3 == 0).reshape(10, 10), (4, 6))
add('c8', (np.arange(12) + 1j * np.arange(12)).astype('c8'), (5,), compressor=numcodecs.Zstd())
add('u8_bz2', np.arange(64, dtype='u8').reshape(8, 8), (3, 3), compressor=numcodecs.BZ2())
add('f4_one_chunk_larger', np.arange(5, dtype='f4'), (100,))
af = asdf.AsdfFile({'arrays': cases})
af.write_to(out + '/zarr.asdf')
for name, z in cases.items():
    a = z[...]
    np.ascontiguousarray(a.astype(a.dtype.newbyteorder('<'))).tofile(out + '/' + name + '.bin')
    print(name, a.dtype.name, ','.join(map(str, a.shape)))
"#;

/// Reads every array of `path` with Python asdf + asdf-zarr and dumps it as [`WRITE`] does.
const READ: &str = r#"
import sys, numpy as np, asdf
with asdf.open(sys.argv[1]) as af:
    for name, z in af['arrays'].items():
        a = z[...]
        np.ascontiguousarray(a.astype(a.dtype.newbyteorder('<'))).tofile(sys.argv[2] + '/' + name + '.bin')
        print(name, type(z).__module__)
"#;

struct Case {
    name: String,
    dtype: String,
    shape: Vec<usize>,
}

fn cases(stdout: &[u8]) -> Vec<Case> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| {
            let mut w = l.split(' ');
            let (name, dtype, shape) = (w.next().unwrap(), w.next().unwrap(), w.next().unwrap());
            Case {
                name: name.into(),
                dtype: dtype.into(),
                shape: shape.split(',').map(|d| d.parse().unwrap()).collect(),
            }
        })
        .collect()
}

/// ASDF's datatype name for a NumPy dtype name.
fn asdf_name(numpy: &str) -> &str {
    match numpy {
        "bool" => "bool8",
        other => other,
    }
}

fn check_file(f: &AsdfFile, cases: &[Case], dumps: &Path) {
    let kind = |p: &str| f.pointer(p).and_then(asdf::array_kind);
    check_arrays(cases, dumps, kind, |p| f.read(p));
}

/// Each case read by `read` equals zarr's dump of it.
fn check_arrays(
    cases: &[Case],
    dumps: &Path,
    kind: impl Fn(&str) -> Option<ArrayKind>,
    read: impl Fn(&str) -> asdf::Result<asdf::AnyArray>,
) {
    for c in cases {
        let pointer = format!("/arrays/{}", c.name);
        assert_eq!(kind(&pointer), Some(ArrayKind::Zarr));
        let a = read(&pointer).unwrap_or_else(|e| panic!("{pointer}: {e}"));
        assert_eq!(a.shape(), c.shape.as_slice(), "{pointer}");
        assert_eq!(a.datatype().to_string(), asdf_name(&c.dtype), "{pointer}");
        let want = std::fs::read(dumps.join(format!("{}.bin", c.name))).unwrap();
        let got = a.to_bytes(asdf::ndarray::ByteOrder::Little).unwrap();
        assert!(got == want, "{pointer}: values differ from zarr's");
    }
}

#[test]
fn python_written_zarr_arrays_read_exactly() {
    let python = require_python!();
    let dir = TempDir::new("zarr-read");
    let cases = cases(&run_python(&python, WRITE, &[dir.path().to_str().unwrap()]));
    assert_eq!(cases.len(), 16);
    let f = AsdfFile::open(dir.join("zarr.asdf")).unwrap();
    check_file(&f, &cases, dir.path());
    // Typed reads, and a clear error for the wrong type.
    let a = f.array::<f32>("/arrays/f4_zlib").unwrap();
    assert_eq!(a.shape(), &[41, 30]);
    let e = f.array::<f64>("/arrays/f4_zlib").unwrap_err().to_string();
    assert!(
        e.contains("float32") && e.contains("/arrays/f4_zlib"),
        "{e}"
    );
}

/// Every window of a few shapes equals the same slice of the whole array.
#[test]
fn regions_equal_slices_of_the_whole() {
    let python = require_python!();
    let dir = TempDir::new("zarr-region");
    run_python(&python, WRITE, &[dir.path().to_str().unwrap()]);
    let f = AsdfFile::open(dir.join("zarr.asdf")).unwrap();
    let whole = f.array::<f32>("/arrays/f4_zlib").unwrap();
    for (r0, r1) in [
        (0..41, 0..30),
        (15..17, 15..17),
        (40..41, 29..30),
        (5..5, 0..30),
        (16..32, 16..30),
    ] {
        let region = [r0.clone(), r1.clone()];
        let part = f.read_region::<f32>("/arrays/f4_zlib", &region).unwrap();
        let want = whole.slice(ndarray::s![r0, r1]).to_owned().into_dyn();
        assert_eq!(part, want, "{region:?}");
    }
    let fortran = f.array::<i16>("/arrays/i2_fortran").unwrap();
    let region: [Range<usize>; 3] = [3..9, 2..7, 1..2];
    let part = f.read_region::<i16>("/arrays/i2_fortran", &region).unwrap();
    assert_eq!(
        part,
        fortran
            .slice(ndarray::s![3..9, 2..7, 1..2])
            .to_owned()
            .into_dyn()
    );
    let e = f
        .read_region::<f32>("/arrays/f4_zlib", &[0..42, 0..1])
        .unwrap_err();
    assert!(e.to_string().contains("not inside"), "{e}");
}

/// A file with zarr arrays saved again (tree edited) keeps every chunk at its block number:
/// Python reads the same values from the copy.
#[test]
fn saved_copy_stays_readable_by_python() {
    let python = require_python!();
    let dir = TempDir::new("zarr-save");
    let cases = cases(&run_python(&python, WRITE, &[dir.path().to_str().unwrap()]));
    let mut f = AsdfFile::open(dir.join("zarr.asdf")).unwrap();
    f.tree_mut()
        .as_map_mut()
        .unwrap()
        .insert("note", asdf::yaml::Node::from("saved by asdf-rs"));
    let copy = dir.join("copy.asdf");
    f.save_path(&copy, &WriteOptions::default()).unwrap();
    let again = dir.join("again");
    std::fs::create_dir(&again).unwrap();
    let out = run_python(
        &python,
        READ,
        &[copy.to_str().unwrap(), again.to_str().unwrap()],
    );
    assert!(
        String::from_utf8_lossy(&out).contains("zarr"),
        "{}",
        String::from_utf8_lossy(&out)
    );
    for c in &cases {
        let a = std::fs::read(again.join(format!("{}.bin", c.name))).unwrap();
        let b = std::fs::read(dir.join(&format!("{}.bin", c.name))).unwrap();
        assert!(
            a == b,
            "{}: Python reads other values from the copy",
            c.name
        );
    }
    check_file(&AsdfFile::open(&copy).unwrap(), &cases, dir.path());
}

/// Over HTTP: every array equals zarr's, and a region reads the chunk map and the chunks it
/// touches, nothing else.
#[cfg(feature = "remote")]
#[test]
fn remote_regions_read_only_the_chunks_they_touch() {
    use asdf::remote::{RemoteFile, RemoteOptions};
    use asdf_testkit::http::{Body, RangeServer};
    let python = require_python!();
    let dir = TempDir::new("zarr-remote");
    let cases = cases(&run_python(&python, WRITE, &[dir.path().to_str().unwrap()]));
    let server = RangeServer::start().expect("start the range server");
    let bytes = std::fs::read(dir.join("zarr.asdf")).unwrap();
    server.put("/zarr.asdf", Body::Memory(std::sync::Arc::new(bytes)));
    let options = RemoteOptions {
        first_read: 1024,
        ..RemoteOptions::default()
    };
    let url = server.url("/zarr.asdf");
    let f = RemoteFile::open(&url, &options).unwrap();
    let local = AsdfFile::open(dir.join("zarr.asdf")).unwrap();
    let before = f.traffic();
    // Rows 20..30, columns 2..10 of the 41 × 30 array in 16 × 16 chunks: chunk (1, 0) only.
    let part = f
        .read_region::<f32>("/arrays/f4_zlib", &[20..30, 2..10])
        .unwrap();
    let whole = local.array::<f32>("/arrays/f4_zlib").unwrap();
    assert_eq!(
        part,
        whole
            .slice(ndarray::s![20..30, 2..10])
            .to_owned()
            .into_dyn()
    );
    let after = f.traffic();
    // The chunk map, then the chunk: two round trips, at most those blocks' headers and bytes.
    assert_eq!(after.requests - before.requests, 2, "{after:?}");
    let z = asdf::ndarray::ZarrArray::from_node(f.pointer("/arrays/f4_zlib").unwrap()).unwrap();
    let map = z.chunk_map(&local).unwrap();
    let blocks = f.blocks().unwrap();
    let chunk = map.blocks[map.grid[1]] as usize;
    let size = |i: usize| blocks[i].end() - blocks[i].offset;
    let map_block = z.chunk_block_map().unwrap() as usize;
    // (Parts the opening reads already hold are not requested again.)
    assert!(after.bytes - before.bytes <= size(map_block) + size(chunk));
    // The map is kept: another chunk is one request at most (none when the opening reads
    // hold it). A never-written chunk is none.
    f.read_region::<f32>("/arrays/f4_zlib", &[35..41, 20..25])
        .unwrap();
    let later = f.traffic();
    assert!(later.requests - after.requests <= 1, "{later:?}");
    let fill = f
        .read_region::<f32>("/arrays/f4_zlib", &[16..32, 16..30])
        .unwrap();
    assert!(fill.iter().all(|&v| v == 0.0));
    assert_eq!(f.traffic(), later);
    check_arrays(
        &cases,
        dir.path(),
        |p| f.pointer(p).and_then(asdf::array_kind),
        |p| f.read(p),
    );
}

/// Writes `ext.asdf` into `argv[1]` with three asdf-zarr arrays whose chunks are in external
/// stores beside it (a DirectoryStore with a never-written chunk, a NestedDirectoryStore, an
/// FSStore on local files), and dumps each as [`WRITE`] does.
const EXTERNAL: &str = r#"
import sys, warnings, numpy as np, zarr, numcodecs, asdf
warnings.simplefilter("ignore", FutureWarning)
d = sys.argv[1]
z1 = zarr.open(d + '/store.zarr', mode='w', shape=(20, 13), chunks=(6, 5), dtype='<i4',
               compressor=numcodecs.Zlib(), fill_value=-1, write_empty_chunks=False)
z1[:] = np.arange(20 * 13, dtype='<i4').reshape(20, 13)
z1[0:6, 0:5] = -1                      # all fill: its chunk file is removed
z2 = zarr.create(shape=(9, 4), chunks=(4, 4), dtype='>f8', compressor=None,
                 store=zarr.storage.NestedDirectoryStore(d + '/nested.zarr'))
z2[:] = np.linspace(0, 1, 36).reshape(9, 4)
z3 = zarr.create(shape=(5,), chunks=(2,), dtype='u2', store=zarr.storage.FSStore(d + '/fs.zarr'))
z3[:] = [1, 2, 3, 4, 5]
cases = {'dir': z1, 'nested': z2, 'fs': z3}
asdf.AsdfFile({'arrays': cases}).write_to(d + '/ext.asdf')
for name, z in cases.items():
    a = z[...]
    np.ascontiguousarray(a.astype(a.dtype.newbyteorder('<'))).tofile(d + '/' + name + '.bin')
    print(name, a.dtype.name, ','.join(map(str, a.shape)))
"#;

/// Chunks in external zarr stores read under the policy on external files: anywhere by
/// default, only in the file's directory or below when untrusted.
#[test]
fn external_zarr_stores_read_within_the_external_file_policy() {
    let python = require_python!();
    let dir = TempDir::new("zarr-external");
    let cases = cases(&run_python(
        &python,
        EXTERNAL,
        &[dir.path().to_str().unwrap()],
    ));
    assert_eq!(cases.len(), 3);
    let path = dir.join("ext.asdf");
    check_file(&AsdfFile::open(&path).unwrap(), &cases, dir.path());
    let untrusted = asdf::OpenOptions::untrusted();
    let f = AsdfFile::open_with(&path, &untrusted).unwrap();
    check_file(&f, &cases, dir.path());
    let part = f.read_region::<i32>("/arrays/dir", &[4..9, 3..7]).unwrap();
    let whole = f.array::<i32>("/arrays/dir").unwrap();
    assert_eq!(
        part,
        whole.slice(ndarray::s![4..9, 3..7]).to_owned().into_dyn()
    );
    assert_eq!(whole[[0, 0]], -1);

    // The same file one directory down: its stores are outside it.
    let sub = dir.join("sub");
    std::fs::create_dir(&sub).unwrap();
    let moved = sub.join("ext.asdf");
    std::fs::copy(&path, &moved).unwrap();
    let e = AsdfFile::open_with(&moved, &untrusted)
        .unwrap()
        .read("/arrays/dir")
        .unwrap_err()
        .to_string();
    assert!(e.contains("store.zarr") && e.contains("outside"), "{e}");
    check_file(&AsdfFile::open(&moved).unwrap(), &cases, dir.path());

    // A directory whose name looks percent-encoded is only a name.
    let pct = dir.join("a%zzb");
    std::fs::create_dir(&pct).unwrap();
    run_python(&python, EXTERNAL, &[pct.to_str().unwrap()]);
    let f = AsdfFile::open_with(pct.join("ext.asdf"), &untrusted).unwrap();
    check_file(&f, &cases, &pct);

    // A damaged chunk file is an error naming it.
    std::fs::write(dir.join("store.zarr/1.1"), b"not zlib").unwrap();
    let e = AsdfFile::open(&path)
        .unwrap()
        .read("/arrays/dir")
        .unwrap_err()
        .to_string();
    assert!(e.contains("store.zarr/1.1") && e.contains("zlib"), "{e}");
}

/// A remote file's external zarr stores: relative directories resolved against its URL and
/// read chunk file by chunk file (only those a region touches), within the policy on external
/// files; a local path named by a remote file is refused.
#[cfg(feature = "remote")]
#[test]
fn remote_files_read_their_external_zarr_stores() {
    use asdf::remote::{RemoteFile, RemoteOptions};
    use asdf_testkit::http::{Body, RangeServer};
    let python = require_python!();
    let dir = TempDir::new("zarr-external-remote");
    let cases = cases(&run_python(
        &python,
        EXTERNAL,
        &[dir.path().to_str().unwrap()],
    ));
    // zarr names its stores by absolute paths: made relative, the file can travel with them
    // (it has no blocks, so its length may change).
    let original = std::fs::read(dir.join("ext.asdf")).unwrap();
    let prefix = format!("{}/", dir.path().to_str().unwrap());
    let text = String::from_utf8(original.clone()).unwrap();
    assert!(text.contains(&prefix));
    let relative = text.replace(&prefix, "");
    std::fs::write(dir.join("relative.asdf"), &relative).unwrap();
    assert_eq!(
        AsdfFile::open(dir.join("relative.asdf"))
            .unwrap()
            .blocks()
            .len(),
        0
    );
    let server = RangeServer::start().expect("start the range server");
    let put =
        |path: &str, bytes: Vec<u8>| server.put(path, Body::Memory(std::sync::Arc::new(bytes)));
    put("/data/ext.asdf", relative.clone().into_bytes());
    put("/data/absolute.asdf", original);
    put(
        "/data/sub/up.asdf",
        relative.replace("path: ", "path: ../").into_bytes(),
    );
    for store in ["store.zarr", "nested.zarr", "fs.zarr"] {
        for entry in walk(&dir.join(store)) {
            let key = entry
                .strip_prefix(dir.path())
                .unwrap()
                .to_str()
                .unwrap()
                .to_string();
            put(&format!("/data/{key}"), std::fs::read(&entry).unwrap());
        }
    }
    let options = RemoteOptions::default();
    let f = RemoteFile::open(&server.url("/data/ext.asdf"), &options).unwrap();
    check_arrays(
        &cases,
        dir.path(),
        |p| f.pointer(p).and_then(asdf::array_kind),
        |p| f.read(p),
    );
    // A region in one chunk, in a file just opened: the store's .zarray and that chunk file,
    // two requests.
    let f = RemoteFile::open(&server.url("/data/ext.asdf"), &options).unwrap();
    let before = f.traffic();
    let part = f.read_region::<i32>("/arrays/dir", &[7..11, 6..9]).unwrap();
    let after = f.traffic();
    assert_eq!(after.requests - before.requests, 2, "{before:?} {after:?}");
    // The store's .zarray is read once: another chunk is one request.
    f.read_region::<i32>("/arrays/dir", &[13..15, 11..12])
        .unwrap();
    assert_eq!(f.traffic().requests - after.requests, 1);
    let whole = f.array::<i32>("/arrays/dir").unwrap();
    assert_eq!(
        part,
        whole.slice(ndarray::s![7..11, 6..9]).to_owned().into_dyn()
    );
    // A never-written chunk (removed by zarr): its fill value, after a request that finds
    // nothing.
    let fill = f.read_region::<i32>("/arrays/dir", &[0..6, 0..5]).unwrap();
    assert!(fill.iter().all(|&v| v == -1));

    // Untrusted: stores inside the file's directory read; one directory up they are refused.
    let untrusted = RemoteOptions::untrusted();
    let f = RemoteFile::open(&server.url("/data/ext.asdf"), &untrusted).unwrap();
    check_arrays(
        &cases,
        dir.path(),
        |p| f.pointer(p).and_then(asdf::array_kind),
        |p| f.read(p),
    );
    let up = server.url("/data/sub/up.asdf");
    let e = RemoteFile::open(&up, &untrusted)
        .unwrap()
        .read("/arrays/dir")
        .unwrap_err();
    assert!(
        e.to_string().contains("../store.zarr") && e.to_string().contains("outside"),
        "{e}"
    );
    let f = RemoteFile::open(&up, &options).unwrap();
    check_arrays(
        &cases,
        dir.path(),
        |p| f.pointer(p).and_then(asdf::array_kind),
        |p| f.read(p),
    );
    // The file zarr wrote names its stores by local paths: not read from a remote file.
    let f = RemoteFile::open(&server.url("/data/absolute.asdf"), &options).unwrap();
    let e = f.read("/arrays/dir").unwrap_err().to_string();
    assert!(
        e.contains("store.zarr") && e.contains("a local path"),
        "{e}"
    );
}

/// Every file below `dir` (dot files included).
#[cfg(feature = "remote")]
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
