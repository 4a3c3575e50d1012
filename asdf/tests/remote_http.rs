//! Remote reads over HTTP against the test server of `asdf-testkit` (loopback, started and
//! stopped here): every corpus file read remotely equals the local read, traffic is counted,
//! and injected faults give errors naming the URL.
#![cfg(feature = "remote")]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use asdf::remote::{RemoteFile, RemoteOptions};
use asdf::{AsdfFile, AsdfWriter, StoreOptions};
use asdf_testkit::http::{Body, Faults, RangeServer};
use ndarray::{s, Array1, Array2};

fn quick() -> RemoteOptions {
    RemoteOptions {
        timeout: Duration::from_secs(5),
        retries: 2,
        ..RemoteOptions::default()
    }
}

/// A corpus file's path relative to the corpus, with `/` separators.
fn relative(path: &Path) -> String {
    let rel = path.strip_prefix(asdf_testkit::corpus_dir()).unwrap();
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

fn serve_bytes(server: &RangeServer, path: &str, bytes: Vec<u8>) -> String {
    server.put(path, Body::Memory(Arc::new(bytes)));
    server.url(path)
}

/// The arrays of a file by pointer, each read as text (NaNs compare equal) or the error's kind.
/// External arrays (exploded files) are included: remote files read them from beside the file.
fn arrays_of(local: &AsdfFile, read: impl Fn(&str) -> asdf::Result<asdf::AnyArray>) -> Vec<String> {
    local
        .arrays()
        .into_iter()
        .map(|(p, _)| match read(&p) {
            Ok(a) => format!("{p}: {a:?}"),
            Err(_) => format!("{p}: error"),
        })
        .collect()
}

/// Asserts that `remote` (read from `url`) is `local` (read from `path`): tree, blocks and every
/// array, or both errors; true when both opened.
fn same_file(
    path: &Path,
    url: &str,
    local: &asdf::Result<AsdfFile>,
    remote: &asdf::Result<RemoteFile>,
) -> bool {
    match (local, remote) {
        (Ok(l), Ok(r)) => {
            assert!(
                l.tree().identical(r.tree()),
                "{}: trees differ",
                path.display()
            );
            // Arrays first: located by the block index alone, headers read with the data.
            assert_eq!(
                arrays_of(l, |p| l.read(p)),
                arrays_of(l, |p| r.read(p)),
                "{}",
                path.display()
            );
            assert_eq!(
                l.blocks().blocks(),
                r.blocks().unwrap(),
                "{}",
                path.display()
            );
            true
        }
        (Err(_), Err(e)) => {
            assert!(e.to_string().contains(url), "{e}");
            false
        }
        (l, r) => panic!(
            "{}: local {:?} but remote {:?}",
            path.display(),
            l.as_ref().err(),
            r.as_ref().err()
        ),
    }
}

#[test]
fn every_corpus_file_reads_the_same_from_s3() {
    let python = asdf_testkit::require_python!();
    let moto = asdf_testkit::http::MotoServer::start(&python).expect("start moto_server");
    let files = asdf_testkit::corpus_files("asdf");
    let objects: Vec<(String, Vec<u8>)> = files
        .iter()
        .map(|p| (format!("corpus/{}", relative(p)), std::fs::read(p).unwrap()))
        .collect();
    moto.fill("corpus", &objects).expect("fill the bucket");
    let options = RemoteOptions {
        endpoint: Some(moto.endpoint()),
        region: Some("us-east-1".into()),
        config: vec![
            ("aws_access_key_id".into(), "testing".into()),
            ("aws_secret_access_key".into(), "testing".into()),
        ],
        ..quick()
    };
    let mut compared = 0;
    for path in &files {
        let url = format!("s3://corpus/corpus/{}", relative(path));
        let remote = RemoteFile::open(&url, &options);
        compared += usize::from(same_file(path, &url, &AsdfFile::open(path), &remote));
    }
    assert!(compared > 50, "only {compared} files compared");
    // A public bucket read anonymously.
    let anonymous = RemoteOptions {
        anonymous: true,
        config: Vec::new(),
        ..options
    };
    let first = format!("s3://corpus/corpus/{}", relative(&files[0]));
    let f = RemoteFile::open(&first, &anonymous).unwrap();
    assert!(f.traffic().requests >= 2);
}

#[test]
fn every_corpus_file_reads_the_same_remotely() {
    let server = RangeServer::start().expect("start the range server");
    let files = asdf_testkit::corpus_files("asdf");
    assert!(files.len() > 50, "corpus not found: {}", files.len());
    // Every file at its corpus path, so exploded arrays find their files beside them.
    for path in &files {
        serve_bytes(
            &server,
            &format!("/corpus/{}", relative(path)),
            std::fs::read(path).unwrap(),
        );
    }
    let mut compared = 0;
    for path in &files {
        let url = server.url(&format!("/corpus/{}", relative(path)));
        let local = AsdfFile::open(path);
        let remote = RemoteFile::open(&url, &quick());
        compared += usize::from(same_file(path, &url, &local, &remote));
    }
    assert!(compared > 50, "only {compared} files compared");
    // Exploded arrays read from their own files beside the remote one, as they do locally.
    let mut external = 0;
    for path in files.iter().filter(|p| p.ends_with("exploded.asdf")) {
        let url = server.url(&format!("/corpus/{}", relative(path)));
        let (local, remote) = (
            AsdfFile::open(path).unwrap(),
            RemoteFile::open(&url, &quick()).unwrap(),
        );
        for (p, _) in local.arrays() {
            if let Ok(Some(asdf::ndarray::Source::External(_))) = local.meta(&p).map(|m| m.source) {
                let want = local.read(&p).unwrap();
                let got = remote.read(&p).unwrap_or_else(|e| panic!("{url} {p}: {e}"));
                assert_eq!(format!("{got:?}"), format!("{want:?}"), "{url} {p}");
                external += 1;
            }
        }
    }
    assert!(external >= 7, "only {external} external arrays read");
}

/// A file of `n` float64 arrays of `len` elements each, array `k` filled with `k`.
fn many_arrays(n: usize, len: usize) -> Vec<u8> {
    let mut w = AsdfWriter::new();
    let mut pairs = Vec::new();
    for k in 0..n {
        let a = Array1::<f64>::from_elem(len, k as f64);
        pairs.push((
            format!("a{k}"),
            w.add(&a, &StoreOptions::default()).unwrap(),
        ));
    }
    w.to_bytes(asdf::yaml::Node::mapping(pairs), &Default::default())
        .unwrap()
}

#[test]
fn one_array_out_of_a_hundred_reads_only_its_block() {
    let server = RangeServer::start().expect("start the range server");
    let bytes = many_arrays(100, 10_000);
    let size = bytes.len() as u64;
    let url = serve_bytes(&server, "/many.asdf", bytes);
    let f = RemoteFile::open(&url, &quick()).unwrap();
    let opened = f.traffic();
    assert_eq!(f.block_count(), 100);
    // Two reads: the head (with the tree) and the tail (with the block index).
    assert_eq!(opened.requests, 2, "{opened:?}");
    assert_eq!(opened.bytes, 2 * (64 << 10), "{opened:?}");
    let a = f.array::<f64>("/a57").unwrap();
    assert!(a.iter().all(|&x| x == 57.0) && a.len() == 10_000);
    let read = f.traffic();
    // One request: the block's header and data.
    assert_eq!(read.requests - opened.requests, 1, "{read:?}");
    let one = read.bytes - opened.bytes;
    assert!((80_000..80_000 + 1024).contains(&one), "{read:?}");
    assert!(read.bytes < size / 20, "{read:?} of {size}");
    // The server saw the same requests.
    let log = server.take_log();
    assert_eq!(log.len() as u64, read.requests);
    assert_eq!(log.iter().map(|l| l.bytes).sum::<u64>(), read.bytes);
    // Every header, when asked for: the same blocks as the local reader finds.
    let local = AsdfFile::from_bytes(many_arrays(100, 10_000), &Default::default()).unwrap();
    assert_eq!(f.blocks().unwrap(), local.blocks().blocks());
    assert_eq!(f.array::<f64>("/a3").unwrap()[0], 3.0);
}

/// A file of two `zstd` arrays: `varied` compresses a few times (decoded straight into the
/// array's own buffer), `constant` far more than 64 times (decoded through a buffer of its own).
fn zstd_arrays() -> Vec<u8> {
    let mut w = AsdfWriter::new();
    let varied = Array1::from_shape_fn(300_000, |i| (i as f64 * 0.37).sin());
    let constant = Array1::<f64>::from_elem(300_000, 2.5);
    let zstd = StoreOptions::compressed("zstd").unwrap();
    let pairs = vec![
        ("varied".to_string(), w.add(&varied, &zstd).unwrap()),
        ("constant".to_string(), w.add(&constant, &zstd).unwrap()),
    ];
    w.to_bytes(asdf::yaml::Node::mapping(pairs), &Default::default())
        .unwrap()
}

#[test]
fn whole_compressed_arrays_read_remotely_check_their_checksums() {
    let server = RangeServer::start().expect("start the range server");
    let bytes = zstd_arrays();
    let local = AsdfFile::from_bytes(bytes.clone(), &Default::default()).unwrap();
    let url = serve_bytes(&server, "/zstd.asdf", bytes.clone());
    let f = RemoteFile::open(&url, &quick()).unwrap();
    for name in ["/varied", "/constant"] {
        let want = local.array::<f64>(name).unwrap();
        assert_eq!(f.array::<f64>(name).unwrap(), want, "{name}");
    }
    // One byte of the first block's compressed data changed: its MD5 no longer matches.
    let info = local.blocks().blocks()[0];
    let mut bad = bytes;
    let at = info.stored_range().start as usize + 100;
    bad[at] ^= 0x55;
    let url = serve_bytes(&server, "/bad.asdf", bad);
    let f = RemoteFile::open(&url, &quick()).unwrap();
    let err = f.array::<f64>("/varied").unwrap_err().to_string();
    assert!(err.contains("checksum") && err.contains(&url), "{err}");
    assert_eq!(f.array::<f64>("/constant").unwrap()[7], 2.5);
}

/// A sparse 1 GiB file: one uncompressed 16384 × 16384 float32 array, zeros except the window
/// `[2000..2030, 3000..3030]`, which holds `i * 1000 + j`; and a block index.
fn sparse_gib_file(dir: &Path) -> PathBuf {
    use std::io::Write;
    use std::os::unix::fs::FileExt;
    let n = 16384u64;
    let tree = format!(
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n\
         --- !core/asdf-1.1.0\ndata: !core/ndarray-1.0.0 {{source: 0, datatype: float32, \
         byteorder: little, shape: [{n}, {n}]}}\n...\n"
    );
    let size = n * n * 4;
    let head = asdf::block::BlockHeader::new(asdf::block::Label::NONE, size, size, [0; 16]);
    let path = dir.join("gib.asdf");
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(tree.as_bytes()).unwrap();
    let block_at = tree.len() as u64;
    let header = head.to_bytes();
    f.write_all(&header).unwrap();
    let data_at = block_at + header.len() as u64;
    for i in 2000..2030u64 {
        let row: Vec<u8> = (3000..3030u64)
            .flat_map(|j| ((i * 1000 + j) as f32).to_le_bytes())
            .collect();
        f.write_all_at(&row, data_at + (i * n + 3000) * 4).unwrap();
    }
    f.set_len(data_at + size).unwrap();
    f.write_all_at(&asdf::block::encode_index(&[block_at]), data_at + size)
        .unwrap();
    path
}

#[test]
fn a_gib_file_opens_in_two_requests_and_a_window_reads_its_rows() {
    let dir = asdf_testkit::TempDir::new("remote-gib");
    let path = sparse_gib_file(dir.path());
    let server = RangeServer::start().expect("start the range server");
    server.put("/gib.asdf", Body::File(path.clone()));
    // The least coalescing gap, whatever the round trip: only the bytes asked for.
    let least = RemoteOptions {
        max_coalesce_gap: 16 << 10,
        ..quick()
    };
    let f = RemoteFile::open(&server.url("/gib.asdf"), &least).unwrap();
    let t = f.traffic();
    assert!(t.requests <= 2 && t.bytes <= 1 << 20, "{t:?}");
    assert_eq!(f.block_count(), 1);

    let w = f
        .read_region::<f32>("/data", &[1995..2035, 3010..3040])
        .unwrap();
    let want = Array2::from_shape_fn((40, 30), |(i, j)| {
        let (i, j) = (i + 1995, j + 3010);
        if (2000..2030).contains(&i) && (3000..3030).contains(&j) {
            (i * 1000 + j) as f32
        } else {
            0.0
        }
    });
    assert_eq!(w, want.into_dyn());
    let read = f.traffic();
    // 40 runs of 120 bytes, 64 kB apart: only those bytes.
    assert!(read.requests - t.requests <= 40, "{read:?}");
    assert_eq!(read.bytes - t.bytes, 40 * 30 * 4);
    assert!(f.layout().unwrap().index_used);
    // With a gap wider than a row, the rows come in one round of requests, reading at most
    // the 40 rows they lie in.
    let wide = RemoteOptions {
        coalesce_gap: 128 << 10,
        ..quick()
    };
    let h = RemoteFile::open(&server.url("/gib.asdf"), &wide).unwrap();
    let t = h.traffic();
    let again = h
        .read_region::<f32>("/data", &[1995..2035, 3010..3040])
        .unwrap();
    assert_eq!(again, w);
    let read = h.traffic();
    assert!(read.requests - t.requests <= 8, "{read:?}");
    assert!(read.bytes - t.bytes <= 40 * 16384 * 4, "{read:?}");
    // A block larger than the block ceiling is refused before anything is requested.
    let mut small = quick();
    small.open.blocks.limits.max_decoded_block_size = 1 << 20;
    let g = RemoteFile::open(&server.url("/gib.asdf"), &small).unwrap();
    let before = g.traffic();
    let e = g.array::<f32>("/data").unwrap_err().to_string();
    assert!(e.contains("ceiling") && e.contains("/gib.asdf"), "{e}");
    assert_eq!(g.traffic(), before);
    // The local read of the same region agrees.
    let local = AsdfFile::open(&path).unwrap();
    assert_eq!(
        local
            .read_region::<f32>("/data", &[1995..2035, 3010..3040])
            .unwrap(),
        w
    );
}

#[test]
fn a_region_of_a_chunked_array_reads_only_the_chunks_it_touches() {
    let a = Array2::from_shape_fn((64, 64), |(i, j)| (i * 64 + j) as u32);
    let mut w = AsdfWriter::new();
    let node = w
        .add_chunked(
            &a,
            Some(&[16, 16]),
            &StoreOptions::compressed("zstd").unwrap(),
        )
        .unwrap();
    let bytes = w
        .to_bytes(
            asdf::yaml::Node::mapping([("c", node)]),
            &Default::default(),
        )
        .unwrap();
    let server = RangeServer::start().expect("start the range server");
    let url = serve_bytes(&server, "/chunked.asdf", bytes);
    // The first reads hold 1 kB at each end, not the chunks of this 9 kB file.
    let options = RemoteOptions {
        first_read: 1024,
        ..quick()
    };
    let f = RemoteFile::open(&url, &options).unwrap();
    assert_eq!(f.block_count(), 16);
    let before = f.traffic();
    // Rows 20..30 and columns 34..46 lie in one chunk, (1, 2).
    let part = f.read_region::<u32>("/c", &[20..30, 34..46]).unwrap();
    assert_eq!(part, a.slice(s![20..30, 34..46]).into_dyn());
    let after = f.traffic();
    let chunked = asdf::ndarray::ChunkedArray::from_node(f.pointer("/c").unwrap()).unwrap();
    let chunk = chunked.chunks.iter().find(|c| c.start == [16, 32]).unwrap();
    let Some(asdf::ndarray::Source::Block(b)) = chunk.array.source else {
        panic!("chunk not in a block")
    };
    assert_eq!(after.requests - before.requests, 1);
    // Its header and stored bytes, in one request.
    let info = f.blocks().unwrap()[b as usize];
    assert_eq!(after.bytes - before.bytes, info.end() - info.offset);
    // Across four chunks: four blocks.
    let part = f.read_region::<u32>("/c", &[10..20, 10..20]).unwrap();
    assert_eq!(part, a.slice(s![10..20, 10..20]).into_dyn());
    assert_eq!(f.array::<u32>("/c").unwrap(), a.into_dyn());
}

#[test]
fn server_errors_are_retried_then_reported() {
    let server = RangeServer::start().expect("start the range server");
    let url = serve_bytes(&server, "/x.asdf", many_arrays(3, 100_000));
    server.set_faults(Faults {
        fail_next: 2,
        ..Faults::default()
    });
    let f = RemoteFile::open(&url, &quick()).unwrap();
    assert_eq!(f.array::<f64>("/a2").unwrap()[0], 2.0);
    assert!(server.take_log().iter().any(|l| l.status == 500));

    server.set_faults(Faults {
        fail_next: 1000,
        ..Faults::default()
    });
    let e = f.array::<f64>("/a1").unwrap_err().to_string();
    assert!(e.contains(&url) && e.contains("bytes "), "{e}");
    let e = RemoteFile::open(&url, &quick()).unwrap_err().to_string();
    assert!(e.contains(&url), "{e}");
    // Bounded: the first try and two retries per request.
    let log = server.take_log();
    assert!(log.len() <= 2 * 3 + 3, "{}", log.len());
}

#[test]
fn broken_answers_are_errors_naming_the_url() {
    let server = RangeServer::start().expect("start the range server");
    let url = serve_bytes(&server, "/x.asdf", many_arrays(3, 100_000));
    let faults = [
        Faults {
            ignore_range: true,
            ..Faults::default()
        },
        Faults {
            short_body: true,
            ..Faults::default()
        },
        Faults {
            short_range: true,
            ..Faults::default()
        },
    ];
    for fault in faults {
        server.set_faults(fault.clone());
        let e = match RemoteFile::open(&url, &quick()) {
            Ok(f) => f.array::<f64>("/a1").unwrap_err(),
            Err(e) => e,
        };
        assert!(e.to_string().contains(&url), "{fault:?}: {e}");
    }
    server.set_faults(Faults::default());
    let e = RemoteFile::open(&server.url("/missing.asdf"), &quick()).unwrap_err();
    assert!(e.to_string().contains("no such object"), "{e}");
}

#[test]
fn a_stalled_server_times_out() {
    let server = RangeServer::start().expect("start the range server");
    let url = serve_bytes(&server, "/x.asdf", many_arrays(1, 10));
    server.set_faults(Faults {
        stall: Some(Duration::from_secs(3)),
        ..Faults::default()
    });
    let options = RemoteOptions {
        timeout: Duration::from_millis(300),
        retries: 1,
        ..RemoteOptions::default()
    };
    let e = RemoteFile::open(&url, &options).unwrap_err().to_string();
    assert!(e.contains(&url), "{e}");
}

#[test]
fn an_object_replaced_while_reading_is_an_error() {
    let server = RangeServer::start().expect("start the range server");
    let url = serve_bytes(&server, "/x.asdf", many_arrays(3, 100_000));
    let f = RemoteFile::open(&url, &quick()).unwrap();
    server.set_faults(Faults {
        change_etag_after: Some(0),
        ..Faults::default()
    });
    let e = f.array::<f64>("/a1").unwrap_err().to_string();
    assert!(
        e.contains("changed while it was being read") && e.contains(&url),
        "{e}"
    );
}

#[test]
fn blocking_calls_inside_a_runtime_are_refused_and_async_ones_work() {
    let server = RangeServer::start().expect("start the range server");
    let url = serve_bytes(&server, "/x.asdf", many_arrays(2, 1000));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let e = RemoteFile::open(&url, &quick()).unwrap_err();
        assert!(e.to_string().contains("async"), "{e}");
        let f = RemoteFile::open_async(&url, &quick()).await.unwrap();
        assert_eq!(f.array_async::<f64>("/a1").await.unwrap()[999], 1.0);
        assert!(f.array::<f64>("/a1").is_err());
    });
}

#[test]
fn a_region_of_an_lz4_array_reads_remotely() {
    let a = Array2::from_shape_fn((1500, 1500), |(i, j)| ((i % 13) * 100 + j / 100) as f32);
    let mut w = AsdfWriter::new();
    let node = w
        .add(&a, &StoreOptions::compressed("lz4").unwrap())
        .unwrap();
    let bytes = w
        .to_bytes(
            asdf::yaml::Node::mapping([("a", node)]),
            &Default::default(),
        )
        .unwrap();
    let server = RangeServer::start().expect("start the range server");
    let url = serve_bytes(&server, "/lz4.asdf", bytes.clone());
    let f = RemoteFile::open(&url, &quick()).unwrap();
    let before = f.traffic();
    // Rows 700..730 lie in the second of the block's three 4 MiB chunks: two chunk headers are
    // walked (8 bytes each), then that chunk alone is fetched.
    let part = f.read_region::<f32>("/a", &[700..730, 900..930]).unwrap();
    assert_eq!(part, a.slice(s![700..730, 900..930]).into_dyn());
    let after = f.traffic();
    let block = f.blocks().unwrap()[0];
    assert_eq!(block.header.data_size, 1500 * 1500 * 4);
    assert_eq!(after.requests - before.requests, 3);
    let read = after.bytes - before.bytes;
    assert!(
        read < block.header.used_size / 2,
        "{read} bytes read of a {}-byte block",
        block.header.used_size
    );
    // The last (short) chunk, every chunk, a chunk boundary.
    for (rows, cols) in [(1499..1500, 0..1500), (0..1500, 3..4), (698..700, 0..1500)] {
        let part = f
            .read_region::<f32>("/a", &[rows.clone(), cols.clone()])
            .unwrap();
        assert_eq!(part, a.slice(s![rows, cols]).into_dyn());
    }
    // An empty region reads nothing.
    let part = f.read_region::<f32>("/a", &[5..5, 0..10]).unwrap();
    assert_eq!(part.shape(), &[0, 10]);
    // A damaged chunk header (a decoded size other than 4 MiB, a stored length past the block):
    // an error, never a panic nor wrong values.
    let at = block.data_offset as usize;
    for (range, value) in [
        (at + 4..at + 8, 1234u32.to_le_bytes()),
        (at..at + 4, [0xff; 4]),
    ] {
        let mut bad = bytes.clone();
        bad[range].copy_from_slice(&value);
        let url = serve_bytes(&server, "/lz4-bad.asdf", bad);
        let g = RemoteFile::open(&url, &quick()).unwrap();
        assert!(g.read_region::<f32>("/a", &[700..730, 0..10]).is_err());
    }
}
