//! awkward 2 arrays stored in ASDF files (`asdf_awkward::to_asdf_awkward2`) convert to `.awkd`
//! like awkward0 ones.

use asdftool::convert::{convert, ConvertOptions};

#[test]
fn an_awkward2_node_converts_to_awkd() {
    let tmp = asdf_testkit::TempDir::new("asdftool-awk2");
    let src = tmp.join("events.asdf");
    let out = tmp.join("events.awkd");
    let values = serde_json::json!([{"pt": [31.5, 12.25], "q": "mu"}, null, {"pt": [], "q": "e"}]);
    let layout = asdf_awkward::Layout::from_json(&values).unwrap();
    let mut w = asdf::AsdfWriter::new();
    let node =
        asdf_awkward::to_asdf_awkward2(&layout, &mut w, &asdf::StoreOptions::default()).unwrap();
    w.write_path(
        &src,
        asdf::yaml::Node::mapping([("events", node)]),
        &Default::default(),
    )
    .unwrap();
    let opts = ConvertOptions {
        pointer: Some("/events".into()),
        name: Some("events".into()),
        ..ConvertOptions::default()
    };
    convert(&src, &out, &opts).unwrap();
    let (_, back) = asdftool::awk::read_named(&out, Some("events")).unwrap();
    assert_eq!(back.to_json().unwrap(), values);
}
