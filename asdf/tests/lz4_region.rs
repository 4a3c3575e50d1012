//! A region of an `lz4` block (Python asdf's 4 MiB chunks) decodes only the chunks holding its
//! rows: a 30 × 30 window of a 64 MiB float32 array stays far below the array's size in memory.
//! One test in this binary: it measures allocations with a counting allocator.

use asdf::{AsdfFile, AsdfWriter, StoreOptions};
use asdf_testkit::{CountingAllocator, TempDir};
use ndarray::{s, Array2};

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator;

#[test]
fn a_window_of_an_lz4_array_decodes_only_its_chunks() {
    let n = 4096;
    // Compressible (repeating runs), so the block is stored compressed.
    let a = Array2::from_shape_fn((n, n), |(i, j)| ((i % 97) * 8 + j / 512) as f32);
    let mut w = AsdfWriter::new();
    let node = w
        .add(&a, &StoreOptions::compressed("lz4").unwrap())
        .unwrap();
    let dir = TempDir::new("lz4-region");
    let path = dir.join("big.asdf");
    let bytes = w
        .to_bytes(
            asdf::yaml::Node::mapping([("a", node)]),
            &Default::default(),
        )
        .unwrap();
    std::fs::write(&path, &bytes).unwrap();
    drop(bytes);
    let f = AsdfFile::open(&path).unwrap();
    let want = a.slice(s![2000..2030, 2000..2030]).to_owned().into_dyn();
    drop(a);

    let info = f.blocks().info(0).unwrap().header;
    assert_eq!(info.compression, asdf::block::Label(*b"lz4\0"));
    assert!(info.used_size < info.data_size / 2, "{info:?}");
    let base = CountingAllocator::start();
    let part = f
        .read_region::<f32>("/a", &[2000..2030, 2000..2030])
        .unwrap();
    let peak = CountingAllocator::peak_since(base);
    assert_eq!(part, want);
    // One or two 4 MiB chunks and the rows' 480 KiB, not the 64 MiB array.
    assert!(peak < 12 << 20, "peak {peak} bytes");

    // Rows across a chunk boundary, and the last rows.
    let whole = f.array::<f32>("/a").unwrap();
    for rows in [1020..1030, 4090..4096, 0..4096] {
        let part = f.read_region::<f32>("/a", &[rows.clone(), 5..9]).unwrap();
        assert_eq!(part, whole.slice(s![rows, 5..9]).to_owned().into_dyn());
    }
    assert!(f.read_region::<f32>("/a", &[0..4097, 0..1]).is_err());
}
