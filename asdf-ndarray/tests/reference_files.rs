//! Every asdf-standard reference file loads and equals its `.yaml` twin by the compliance
//! procedure: arrays equal by value (NaN == NaN), `asdf_library` and `history` ignored.

use std::path::Path;

use crate::common::{read_tree, FileStore};
use asdf_ndarray::{is_ndarray_tag, NdArrayMeta, NoBlocks};
use asdf_yaml::Node;

fn compare(a: &Node, b: &Node, store: &FileStore, path: &str, top: bool) {
    if a.tag().is_some_and(is_ndarray_tag) {
        assert!(
            b.tag().is_some_and(is_ndarray_tag),
            "{path}: twin is not an ndarray"
        );
        let ma = NdArrayMeta::from_node(a).unwrap();
        let mb = NdArrayMeta::from_node(b).unwrap();
        let (xa, ka) = ma
            .read_masked(store)
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let (xb, kb) = mb
            .read_masked(&NoBlocks)
            .unwrap_or_else(|e| panic!("{path} (twin): {e}"));
        assert!(xa.equals_nan_aware(&xb), "{path}: {xa:?} != {xb:?}");
        assert_eq!(ka, kb, "{path}: masks differ");
        // The inline form written back equals the twin's data too.
        let inline = ma.to_inline(store).unwrap();
        let back = inline.read(&NoBlocks).unwrap();
        assert!(back.equals_nan_aware(&xb), "{path}: inline round trip");
        return;
    }
    assert_eq!(a.tag(), b.tag(), "{path}: tags");
    if let (Some(ma), Some(mb)) = (a.as_map(), b.as_map()) {
        let skip = |k: &Node| top && matches!(k.as_str(), Some("asdf_library" | "history"));
        let ka: Vec<_> = ma.keys().filter(|k| !skip(k)).collect();
        let kb: Vec<_> = mb.keys().filter(|k| !skip(k)).collect();
        assert_eq!(ka.len(), kb.len(), "{path}: keys {ka:?} vs {kb:?}");
        for (k, v) in ma.iter().filter(|(k, _)| !skip(k)) {
            let w = mb
                .get_node(k)
                .unwrap_or_else(|| panic!("{path}: twin lacks {k:?}"));
            compare(v, w, store, &format!("{path}/{k:?}"), false);
        }
    } else if let (Some(sa), Some(sb)) = (a.as_seq(), b.as_seq()) {
        assert_eq!(sa.len(), sb.len(), "{path}: lengths");
        for (i, (x, y)) in sa.iter().zip(sb).enumerate() {
            compare(x, y, store, &format!("{path}/{i}"), false);
        }
    } else {
        assert_eq!(a, b, "{path}");
    }
}

fn count_arrays(n: &Node) -> usize {
    usize::from(n.tag().is_some_and(is_ndarray_tag)) + n.children().map(count_arrays).sum::<usize>()
}

#[test]
fn every_reference_file_matches_its_twin() {
    let dir = asdf_testkit::corpus_file("asdf-standard/reference_files");
    let mut versions: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("1."))
        })
        .collect();
    versions.sort();
    let (mut files, mut arrays) = (0, 0);
    for v in &versions {
        let mut names: Vec<_> = std::fs::read_dir(v)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort();
        for asdf in names
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "asdf"))
        {
            let yaml = asdf.with_extension("yaml");
            if !yaml.exists() {
                continue;
            }
            let tree = read_tree(asdf);
            let twin = read_tree(&yaml);
            let store = FileStore::open(asdf, &tree);
            compare(&tree, &twin, &store, &asdf.display().to_string(), true);
            files += 1;
            arrays += count_arrays(&tree);
        }
    }
    assert_eq!(versions.len(), 7);
    assert_eq!(files, 7 * 15, "every version has 15 pairs");
    assert!(arrays > 7 * 30, "{arrays} arrays compared");
}

#[test]
fn reference_views_and_streams_are_zero_copy_where_aligned() {
    let base = asdf_testkit::corpus_file("asdf-standard/reference_files/1.6.0");
    // shared.asdf: `subset` is data[1::2] with offset 8 and strides [16].
    let path = base.join("shared.asdf");
    let tree = read_tree(&path);
    let store = FileStore::open(&path, &tree);
    let subset = NdArrayMeta::from_node(tree.get("subset").unwrap()).unwrap();
    assert_eq!(
        subset
            .array::<i64>(&store)
            .unwrap()
            .into_raw_vec_and_offset()
            .0,
        vec![1, 3, 5, 7]
    );
    match subset.view::<i64>(&store) {
        Ok(v) => assert_eq!(v.iter().copied().collect::<Vec<_>>(), vec![1, 3, 5, 7]),
        Err(e) => assert!(e.to_string().contains("aligned"), "{e}"),
    }
    // stream.asdf: 8 rows of 8 float64 from the block length.
    let path = base.join("stream.asdf");
    let tree = read_tree(&path);
    let store = FileStore::open(&path, &tree);
    let s = NdArrayMeta::from_node(tree.get("my_stream").unwrap()).unwrap();
    let a = s.array::<f64>(&store).unwrap();
    assert_eq!(a.shape(), &[8, 8]);
    assert_eq!(a[[7, 3]], 7.0);
    // compressed.asdf: the view is refused with the reason, the copy works.
    let path = base.join("compressed.asdf");
    let tree = read_tree(&path);
    let store = FileStore::open(&path, &tree);
    let z = NdArrayMeta::from_node(tree.get("zlib").unwrap()).unwrap();
    let err = z.view::<i64>(&store).unwrap_err();
    assert!(err.to_string().contains("compressed"), "{err}");
    assert_eq!(z.array::<i64>(&store).unwrap().sum(), (0..128).sum::<i64>());
    let _ = Path::new("");
}
