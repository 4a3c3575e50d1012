//! `info` and `verify` on URLs: the HTTP test server of `asdf-testkit` (loopback) and an
//! S3-compatible server (`moto_server` from the interop virtualenv), both started here.
#![cfg(feature = "remote")]

use crate::common::*;

use std::sync::Arc;

use asdf_testkit::http::{Body, RangeServer};

fn sample() -> std::path::PathBuf {
    asdf_testkit::workspace_root().join("examples/data/sample.asdf")
}

#[test]
fn info_and_verify_read_an_http_url_like_the_local_file() {
    let server = RangeServer::start().expect("start the range server");
    server.put(
        "/data/sample.asdf",
        Body::Memory(Arc::new(std::fs::read(sample()).unwrap())),
    );
    let url = server.url("/data/sample.asdf");
    let local = run(&["info", "--show-blocks", sample().to_str().unwrap()]);
    expect(&local, 0);
    let remote = run(&["info", "--show-blocks", "-v", &url]);
    expect(&remote, 0);
    let text = stdout(&remote);
    let (body, fetched) = text.trim_end().rsplit_once('\n').unwrap();
    assert_eq!(format!("{body}\n"), stdout(&local));
    assert!(
        fetched.starts_with("fetched ") && fetched.contains("request(s) from http://"),
        "{fetched}"
    );

    let v = run(&["verify", &url]);
    expect(&v, 0);
    assert!(stdout(&v).contains("OK:"), "{}", stdout(&v));

    // The verbs that read only the tree.
    for args in [
        vec!["search", "--type", "ndarray"],
        vec!["validate", "--builtin-only"],
    ] {
        let local = run(&[&args[..], &[sample().to_str().unwrap()]].concat());
        let remote = run(&[&args[..], &[url.as_str()]].concat());
        assert_eq!(code(&remote), code(&local), "{args:?}: {}", stderr(&remote));
        // The same output, naming the URL where the local run names the path.
        let local_text = stdout(&local).replace(sample().to_str().unwrap(), &url);
        assert_eq!(stdout(&remote), local_text, "{args:?}");
        assert!(!stdout(&remote).is_empty(), "{args:?}");
    }

    let missing = run(&["info", &server.url("/data/none.asdf")]);
    assert_ne!(code(&missing), 0);
    assert!(
        stderr(&missing).contains("no such object"),
        "{}",
        stderr(&missing)
    );
}

/// The environment that points asdftool at the S3 server at `endpoint` with moto's test
/// credentials.
fn signed_env(endpoint: &str) -> [(&str, &str); 5] {
    [
        ("AWS_ENDPOINT", endpoint),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_ALLOW_HTTP", "true"),
    ]
}

#[test]
fn s3_urls_read_from_an_s3_compatible_server() {
    let python = asdf_testkit::require_python!();
    let moto = asdf_testkit::http::MotoServer::start(&python).expect("start moto_server");
    let bytes = std::fs::read(sample()).unwrap();
    moto.fill("bucket", &[("dir/sample.asdf".to_string(), bytes)])
        .expect("fill the bucket");
    let endpoint = moto.endpoint();
    let signed = signed_env(&endpoint);
    let local = run(&["info", sample().to_str().unwrap()]);
    let remote = run_env(&["info", "s3://bucket/dir/sample.asdf"], &signed);
    expect(&remote, 0);
    assert_eq!(stdout(&remote), stdout(&local));
    let v = run_env(&["verify", "s3://bucket/dir/sample.asdf"], &signed);
    expect(&v, 0);

    // A public bucket: unsigned requests, no credentials.
    let anonymous = [
        ("AWS_ENDPOINT", endpoint.as_str()),
        ("AWS_REGION", "us-east-1"),
        ("AWS_SKIP_SIGNATURE", "true"),
        ("AWS_ALLOW_HTTP", "true"),
    ];
    let remote = run_env(&["info", "s3://bucket/dir/sample.asdf"], &anonymous);
    expect(&remote, 0);
    assert_eq!(stdout(&remote), stdout(&local));

    let missing = run_env(&["info", "s3://bucket/dir/none.asdf"], &signed);
    assert_ne!(code(&missing), 0);
    let e = stderr(&missing);
    assert!(
        e.contains("s3://bucket/dir/none.asdf") && e.contains("no such object"),
        "{e}"
    );
}

/// Writes, with zarr and s3fs against the S3 server at `argv[2]`, an asdf-zarr array whose
/// chunks are in an `FSStore` in the bucket `zarrs` (one chunk never written), the ASDF file naming
/// it (`argv[1]/s3.asdf`, also put at `zarrs/data/s3.asdf`) and the array's values
/// (`argv[1]/cube.bin`, little-endian float32).
const ZARR_ON_S3: &str = r#"
import sys, warnings, numpy as np, zarr, numcodecs, asdf, s3fs
warnings.simplefilter("ignore", FutureWarning)
d, endpoint = sys.argv[1], sys.argv[2]
opts = dict(key="testing", secret="testing",
            client_kwargs={"endpoint_url": endpoint, "region_name": "us-east-1"})
fs = s3fs.S3FileSystem(**opts)
store = zarr.storage.FSStore("s3://zarrs/cube.zarr", **opts)
z = zarr.create(shape=(30, 20), chunks=(8, 8), dtype="<f4", compressor=numcodecs.Zstd(),
                store=store, fill_value=-1.0, write_empty_chunks=False)
a = np.arange(600, dtype="<f4").reshape(30, 20)
a[0:8, 8:16] = -1.0
z[:] = a
asdf.AsdfFile({"arrays": {"cube": z}}).write_to(d + "/s3.asdf")
fs.put(d + "/s3.asdf", "zarrs/data/s3.asdf")
a.tofile(d + "/cube.bin")
"#;

/// An asdf-zarr array whose chunks are in an `FSStore` on S3 (as zarr and s3fs write it),
/// named by a local file and by a remote one: `convert --trusted` reads its chunks from the
/// bucket with the environment's endpoint and credentials, and writes the values zarr wrote.
#[test]
fn zarr_chunks_in_an_fsstore_on_s3_read_from_local_and_remote_files() {
    let python = asdf_testkit::require_python!();
    let moto = asdf_testkit::http::MotoServer::start(&python).expect("start moto_server");
    let endpoint = moto.endpoint();
    moto.fill("zarrs", &[]).expect("create the bucket");
    let dir = asdf_testkit::TempDir::new("remote-zarr-fsstore");
    let d = dir.path().to_str().unwrap();
    asdf_testkit::run_python(&python, ZARR_ON_S3, &[d, &endpoint]);
    let want: Vec<f32> = std::fs::read(dir.join("cube.bin"))
        .unwrap()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let env = signed_env(&endpoint);
    let local = dir.join("s3.asdf");
    for (input, name) in [
        (local.to_str().unwrap(), "from-local.asdf"),
        ("s3://zarrs/data/s3.asdf", "from-remote.asdf"),
    ] {
        let out = dir.join(name);
        let args = ["--trusted", "convert", input, out.to_str().unwrap()];
        expect(&run_env(&args, &env), 0);
        let a = asdf::AsdfFile::open(&out)
            .unwrap()
            .array::<f32>("/arrays/cube")
            .unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(a.shape(), &[30, 20], "{input}");
        assert_eq!(a.iter().copied().collect::<Vec<_>>(), want, "{input}");
    }
    // Not trusted (convert's default: external files in the file's directory or below), the
    // local file does not reach the network.
    let out = dir.join("untrusted.asdf");
    let args = ["convert", local.to_str().unwrap(), out.to_str().unwrap()];
    let refused = run_env(&args, &env);
    assert_ne!(code(&refused), 0);
    assert!(
        stderr(&refused).contains("s3://zarrs/cube.zarr") && !out.exists(),
        "{}",
        stderr(&refused)
    );
}

/// The verbs that read a whole file (`diff`, `convert`, `to-yaml`) take URLs of every format,
/// and give what they give on the local file; `info` describes RawArray, `.awkd` and `.npy`
/// URLs too.
#[test]
fn whole_file_verbs_and_other_formats_read_urls() {
    let server = RangeServer::start().expect("start the range server");
    let corpus = asdf_testkit::corpus_dir();
    let ra = corpus.join("rawarray/generated/by-reference/py_int16_2x3.ra");
    let awkd = corpus.join("awkward0/jagged.awkd");
    for (name, path) in [
        ("sample.asdf", sample()),
        ("a.ra", ra.clone()),
        ("j.awkd", awkd.clone()),
    ] {
        let body = Body::Memory(Arc::new(std::fs::read(&path).unwrap()));
        server.put(&format!("/d/{name}"), body);
    }
    let url = |name: &str| server.url(&format!("/d/{name}"));
    let dir = asdf_testkit::TempDir::new("remote-verbs");

    let d = run(&["diff", &url("sample.asdf"), sample().to_str().unwrap()]);
    expect(&d, 0);
    let d = run(&["diff", &url("a.ra"), ra.to_str().unwrap()]);
    expect(&d, 0);
    let other = corpus.join("rawarray/generated/by-reference/py_bigendian_f32_2x3.ra");
    let d = run(&["diff", &url("a.ra"), other.to_str().unwrap()]);
    assert_eq!(code(&d), 1, "{}", stderr(&d));

    for (name, local) in [("sample.asdf", sample()), ("a.ra", ra.clone())] {
        let (from_url, from_file) = (dir.join("u.npy"), dir.join("f.npy"));
        let (u, f) = (from_url.to_str().unwrap(), from_file.to_str().unwrap());
        expect(&run(&["convert", "--pointer", "/sci", &url(name), u]), 0);
        expect(
            &run(&["convert", "--pointer", "/sci", local.to_str().unwrap(), f]),
            0,
        );
        let (a, b) = (
            std::fs::read(&from_url).unwrap(),
            std::fs::read(&from_file).unwrap(),
        );
        assert!(a == b, "{name}");
    }

    let (from_url, from_file) = (dir.join("u.yaml"), dir.join("f.yaml"));
    expect(
        &run(&[
            "to-yaml",
            &url("sample.asdf"),
            "--output",
            from_url.to_str().unwrap(),
        ]),
        0,
    );
    expect(
        &run(&[
            "to-yaml",
            sample().to_str().unwrap(),
            "--output",
            from_file.to_str().unwrap(),
        ]),
        0,
    );
    assert_eq!(
        std::fs::read(&from_url).unwrap(),
        std::fs::read(&from_file).unwrap()
    );

    for (name, local) in [("a.ra", ra), ("j.awkd", awkd)] {
        let remote = run(&["info", &url(name)]);
        expect(&remote, 0);
        let local = run(&["info", local.to_str().unwrap()]);
        // The same description, whatever the (temporary) path it names.
        let lines = |o: &std::process::Output| {
            stdout(o)
                .lines()
                .skip(1)
                .map(String::from)
                .collect::<Vec<_>>()
        };
        assert_eq!(lines(&remote), lines(&local), "{name}");
    }
}

/// A RawArray file through `RemoteReader`: the header from the opening reads, the data in one
/// more request.
#[test]
fn a_rawarray_url_reads_its_header_then_its_data() {
    let server = RangeServer::start().expect("start the range server");
    let a: Vec<f64> = (0..300_000).map(|i| i as f64 * 0.5).collect();
    let bytes = rawarray::to_bytes(&a, &[600, 500], &Default::default()).unwrap();
    let len = bytes.len() as u64;
    server.put("/big.ra", Body::Memory(Arc::new(bytes)));
    let options = asdf::remote::RemoteOptions {
        first_read: 4096,
        ..Default::default()
    };
    let reader = asdf::remote::RemoteReader::open(&server.url("/big.ra"), &options).unwrap();
    assert_eq!(reader.traffic().requests, 2);
    let back =
        rawarray::RawArray::from_reader_with_len(reader, &rawarray::ReadOptions::default(), len)
            .unwrap();
    assert_eq!(back.dims(), &[600, 500]);
    assert_eq!(back.to_vec::<f64>().unwrap(), a);
    let log = server.take_log();
    // Two opening requests, then the data (2.4 MB, under one request's bound): three.
    assert_eq!(log.len(), 3, "{log:?}");
}

/// An `.awkd` archive through `RemoteReader`: the central directory from the opening reads,
/// then only the entries an array needs.
#[test]
fn an_awkd_url_reads_its_entries_by_range() {
    let server = RangeServer::start().expect("start the range server");
    let path = asdf_testkit::corpus_dir().join("awkward0/table.awkd");
    server.put(
        "/t.awkd",
        Body::Memory(Arc::new(std::fs::read(&path).unwrap())),
    );
    let reader =
        asdf::remote::RemoteReader::open(&server.url("/t.awkd"), &Default::default()).unwrap();
    let options = asdf_awkward::ReadOptions::default();
    let remote = asdf_awkward::AwkdFile::from_reader(reader, "t.awkd", options.clone()).unwrap();
    let local = asdf_awkward::AwkdFile::open(&path).unwrap();
    assert_eq!(remote.array_names(), local.array_names());
    for name in local.array_names() {
        let (a, b) = (remote.read(&name).unwrap(), local.read(&name).unwrap());
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{name}");
    }
}
