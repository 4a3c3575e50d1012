//! `info` and `verify` on URLs: the HTTP test server of `asdf-testkit` (loopback) and an
//! S3-compatible server (`moto_server` from the interop virtualenv), both started here.
#![cfg(feature = "remote")]

mod common;
use common::*;

use std::sync::Arc;

use asdf_testkit::http::{Body, RangeServer};

fn sample() -> std::path::PathBuf {
    asdf_testkit::workspace_root().join("examples/data/sample.asdf")
}

#[test]
fn info_and_verify_read_an_http_url_like_the_local_file() {
    let server = RangeServer::start();
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

#[test]
fn s3_urls_read_from_an_s3_compatible_server() {
    let python = asdf_testkit::require_python!();
    let moto = asdf_testkit::http::MotoServer::start(&python);
    let bytes = std::fs::read(sample()).unwrap();
    moto.fill("bucket", &[("dir/sample.asdf".to_string(), bytes)]);
    let endpoint = moto.endpoint();
    let signed = [
        ("AWS_ENDPOINT", endpoint.as_str()),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_ALLOW_HTTP", "true"),
    ];
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
