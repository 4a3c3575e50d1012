//! Kill writing child processes at random moments, for every writer that promises atomicity:
//! `asdf::write_path`, `AsdfFile::update`, `rawarray::save`, `asdf_awkward::save_awkd` and
//! `DirStore::put`. After every kill the destination holds either an old generation or a
//! complete new one, never a torn mix, and the folder holds nothing but it and temporary files.
//!
//! The test binary re-executes itself as the writer: with `ASDF_ROBUST_CRASH` set to
//! `<writer>=<path>`, the `crash_writer_child` test becomes an endless loop of writes.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use asdf::block::{encode_block, EncodeOptions, Label};
use asdf::yaml::Node;
use asdf::{AsdfFile, StoreOptions, WriteOptions};
use asdf_awkward::{BlobSink, BlobStore, Buffer, DirStore, Layout, NumpyArray, SaveMode};

const ASDF_TAG: &str = "tag:stsci.edu:asdf/core/asdf-1.1.0";
const BLOCK: usize = 2 << 20;
const PAYLOAD: usize = 100_000;
const RA_LEN: usize = 1 << 18;
const AWK_LEN: usize = 1 << 17;
const BLOB: usize = 1 << 20;

fn asdf_generation(g: u64) -> (Node, Vec<u8>) {
    let tree = Node::mapping([
        ("generation", Node::from(g as i64)),
        ("padding", Node::from("x".repeat(10_000))),
    ])
    .with_tag(ASDF_TAG);
    (tree, vec![(g % 251) as u8; BLOCK])
}

fn write_asdf(path: &Path, g: u64) {
    let opts = WriteOptions::default();
    let (tree, data) = asdf_generation(g);
    let block = encode_block(&data, Label::NONE, &EncodeOptions::default(), &opts.blocks).unwrap();
    asdf::write_path(path, &tree, &[block], &opts).unwrap();
}

fn check_asdf(path: &Path) -> u64 {
    let f = AsdfFile::open(path).unwrap_or_else(|e| panic!("torn ASDF file: {e}"));
    let g = f.pointer("/generation").and_then(Node::as_i64).unwrap() as u64;
    let data = f.block_data(0).unwrap();
    assert_eq!(data.len(), BLOCK);
    assert!(
        data.iter().all(|&b| b == (g % 251) as u8),
        "generation {g} torn"
    );
    g
}

/// The file `update` rewrites: a generation, a payload string naming it, and an array that
/// every update carries over.
fn write_update_base(path: &Path) {
    let data = ndarray::Array1::from_iter((0..BLOCK / 8).map(|i| i as f64));
    let mut w = asdf::AsdfWriter::new();
    let node = w
        .add(&data, &StoreOptions::compressed("zlib").unwrap())
        .unwrap();
    let tree = Node::mapping([
        ("generation", Node::from(0i64)),
        ("payload", Node::from("0".repeat(PAYLOAD))),
        ("data", node),
    ]);
    w.write_path(path, tree, &WriteOptions::default()).unwrap();
}

fn update_asdf(path: &Path, g: u64) {
    let mut f = AsdfFile::open(path).unwrap();
    let map = f.tree_mut().as_map_mut().unwrap();
    map.insert("generation", Node::from(g as i64));
    let digit = char::from(b'0' + (g % 10) as u8);
    map.insert("payload", Node::from(digit.to_string().repeat(PAYLOAD)));
    f.update(&WriteOptions::default()).unwrap();
}

fn check_update(path: &Path) -> u64 {
    let f = AsdfFile::open(path).unwrap_or_else(|e| panic!("torn updated file: {e}"));
    let g = f.pointer("/generation").and_then(Node::as_i64).unwrap() as u64;
    let payload = f.pointer("/payload").and_then(Node::as_str).unwrap();
    let digit = b'0' + (g % 10) as u8;
    assert_eq!(payload.len(), PAYLOAD);
    assert!(payload.bytes().all(|b| b == digit), "generation {g} torn");
    for i in 0..f.blocks().len() as i64 {
        f.blocks()
            .verify(i, asdf::block::ChecksumPolicy::Strict)
            .unwrap();
    }
    let data = f.array::<f64>("/data").unwrap();
    assert!(data.iter().enumerate().all(|(i, &v)| v == i as f64));
    g
}

fn write_ra(path: &Path, g: u64) {
    let data = vec![g as f64; RA_LEN];
    rawarray::save(
        path,
        &data,
        &[512, (RA_LEN / 512) as u64],
        &Default::default(),
    )
    .unwrap();
}

fn check_ra(path: &Path) -> u64 {
    let (v, _) = rawarray::open_vec::<f64, _>(path).unwrap_or_else(|e| panic!("torn .ra: {e}"));
    assert_eq!(v.len(), RA_LEN);
    let g = v[0];
    assert!(v.iter().all(|&x| x == g), "generation {g} torn");
    g as u64
}

fn write_awkd(path: &Path, g: u64) {
    let layout = Layout::Numpy(NumpyArray::from_vec(Buffer::I64(vec![g as i64; AWK_LEN])));
    asdf_awkward::save_awkd(
        path,
        &[("a", &layout)],
        SaveMode::Create,
        &Default::default(),
    )
    .unwrap();
}

fn check_awkd(path: &Path) -> u64 {
    let f = asdf_awkward::AwkdFile::open(path).unwrap_or_else(|e| panic!("torn .awkd: {e}"));
    let json = f.read("a").unwrap().to_json().unwrap();
    let items = json.as_array().unwrap();
    assert_eq!(items.len(), AWK_LEN);
    let g = items[0].as_i64().unwrap();
    assert!(
        items.iter().all(|x| x.as_i64() == Some(g)),
        "generation {g} torn"
    );
    g as u64
}

fn put_blobs(dir: &Path, g: u64) {
    let mut d = DirStore::create(dir).unwrap();
    let mut blob = vec![(g % 251) as u8; BLOB];
    blob[..8].copy_from_slice(&g.to_le_bytes());
    d.put("blob.raw", &blob).unwrap();
}

fn check_blobs(dir: &Path) -> u64 {
    let d = DirStore::open(dir).unwrap();
    let b = d.get("blob.raw", u64::MAX).unwrap().expect("blob missing");
    assert_eq!(b.len(), BLOB, "torn blob");
    let g = u64::from_le_bytes(b[..8].try_into().unwrap());
    assert!(
        b[8..].iter().all(|&x| u64::from(x) == g % 251),
        "blob generation {g} torn"
    );
    g
}

struct Writer {
    name: &'static str,
    /// The file (or folder) name inside the scratch folder.
    target: &'static str,
    init: fn(&Path),
    write: fn(&Path, u64),
    check: fn(&Path) -> u64,
    /// Kills land within this many milliseconds of the first write (a few writes' time in a
    /// debug build).
    period_ms: u64,
}

const WRITERS: &[Writer] = &[
    Writer {
        name: "write_path",
        target: "t.asdf",
        init: |p| write_asdf(p, 0),
        write: write_asdf,
        check: check_asdf,
        period_ms: 200,
    },
    Writer {
        name: "update",
        target: "u.asdf",
        init: write_update_base,
        write: update_asdf,
        check: check_update,
        period_ms: 1500,
    },
    Writer {
        name: "rawarray_save",
        target: "r.ra",
        init: |p| write_ra(p, 0),
        write: write_ra,
        check: check_ra,
        period_ms: 200,
    },
    Writer {
        name: "save_awkd",
        target: "a.awkd",
        init: |p| write_awkd(p, 0),
        write: write_awkd,
        check: check_awkd,
        period_ms: 400,
    },
    Writer {
        name: "dirstore_put",
        target: "blobs",
        init: |p| put_blobs(p, 0),
        write: put_blobs,
        check: check_blobs,
        period_ms: 150,
    },
];

#[test]
fn crash_writer_child() {
    let Some(spec) = std::env::var_os("ASDF_ROBUST_CRASH") else {
        return; // Only meaningful as the child of `killed_writers_never_leave_a_torn_file`.
    };
    let spec = spec.to_string_lossy().into_owned();
    let (name, path) = spec.split_once('=').unwrap();
    let w = WRITERS.iter().find(|w| w.name == name).unwrap();
    let path = Path::new(path);
    let start = (w.check)(path);
    {
        // Tell the parent the writes begin now (not captured by the test harness).
        use std::io::Write;
        let mut out = std::io::stdout();
        out.write_all(b"ready\n").unwrap();
        out.flush().unwrap();
    }
    for g in start + 1.. {
        (w.write)(path, g);
    }
}

fn kill_runs(w: &Writer, runs: usize, seed: u64) {
    let dir = asdf_testkit::TempDir::new(&format!("crash-{}", w.name));
    let path = dir.join(w.target);
    (w.init)(&path);
    assert_eq!((w.check)(&path), 0);
    let exe = std::env::current_exe().unwrap();
    let mut last = 0;
    let mut advanced = 0;
    let mut x = seed;
    for _ in 0..runs {
        let mut child = Command::new(&exe)
            .args([
                &asdf_testkit::harness_name!("crash_writer_child"),
                "--exact",
                "--test-threads=1",
            ])
            .env(
                "ASDF_ROBUST_CRASH",
                format!("{}={}", w.name, path.display()),
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Wait until the child has checked the file and starts writing, then kill it at a
        // random moment of its write loop.
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        assert!(
            lines.any(|l| l.is_ok_and(|l| l.ends_with("ready"))),
            "{}: the writer child never started",
            w.name
        );
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        std::thread::sleep(Duration::from_millis(x % w.period_ms));
        child.kill().unwrap();
        child.wait().unwrap();
        let g = (w.check)(&path);
        assert!(
            g >= last,
            "{}: generation went back from {last} to {g}",
            w.name
        );
        advanced += (g != last) as u32;
        last = g;
    }
    assert!(
        advanced > 0,
        "{}: no write ever completed; the test proves nothing",
        w.name
    );
    // Besides the destination, only temporary files of killed runs may remain.
    let (listing, target) = if path.is_dir() {
        (path.clone(), "blob.raw")
    } else {
        (dir.path().to_path_buf(), w.target)
    };
    for e in std::fs::read_dir(&listing).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            name == target || name.contains("tmp"),
            "{}: unexpected {name} beside the destination",
            w.name
        );
    }
    eprintln!(
        "{}: {runs} kills, the file advanced {advanced} times (to generation {last})",
        w.name
    );
}

#[test]
fn killed_writers_never_leave_a_torn_file() {
    for (i, w) in WRITERS.iter().enumerate() {
        kill_runs(w, 16, 0x1234_5678_9abc_def0 ^ (i as u64) << 32);
    }
}
