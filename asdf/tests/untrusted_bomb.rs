//! A zstd "bomb" (64 KiB in the file, 2 GiB of zeros once decoded) is within the default
//! ceilings but refused by `OpenOptions::untrusted()` before anything is allocated. One test
//! in this binary: it measures allocations with a counting allocator.

use asdf::block::{BlockError, BlockHeader, EncodedBlock, Label};
use asdf::ndarray::NdError;
use asdf::yaml::Node;
use asdf::{AsdfError, AsdfFile, OpenOptions, WriteOptions};
use asdf_testkit::CountingAllocator;

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator;

/// A zstd frame that decodes to `len` zero bytes (a multiple of 128 KiB), made of RLE blocks:
/// 4 bytes per 128 KiB, so the ratio is 32768:1.
fn zstd_zeros(len: u64) -> Vec<u8> {
    const BLOCK: u64 = 128 << 10;
    assert!(len > 0 && len % BLOCK == 0);
    let mut out = vec![0x28, 0xB5, 0x2F, 0xFD]; // magic
    out.push(0xC0); // 8-byte content size, window descriptor present, no checksum
    out.push(7 << 3); // window 2^(10 + 7) = 128 KiB
    out.extend_from_slice(&len.to_le_bytes());
    let n = len / BLOCK;
    for i in 0..n {
        let last = u32::from(i + 1 == n);
        let header = last | (1 << 1) | ((BLOCK as u32) << 3); // RLE block of BLOCK bytes
        out.extend_from_slice(&header.to_le_bytes()[..3]);
        out.push(0);
    }
    out
}

/// An ASDF file whose array `/bomb` is `len` uint8 zeros in one zstd block.
fn bomb_file(len: u64) -> Vec<u8> {
    let payload = zstd_zeros(len);
    let block = EncodedBlock {
        header: BlockHeader::new(Label(*b"zstd"), len, payload.len() as u64, [0; 16]),
        payload: payload.into(),
    };
    let node = Node::mapping([
        ("source", Node::from(0i64)),
        ("datatype", Node::from("uint8")),
        ("byteorder", Node::from("little")),
        ("shape", Node::sequence([Node::from(len as i64)])),
    ])
    .with_tag("tag:stsci.edu:asdf/core/ndarray-1.1.0");
    let tree = Node::mapping([("bomb", node)]).with_tag("tag:stsci.edu:asdf/core/asdf-1.1.0");
    asdf::write_to(Vec::new(), &tree, &[block], &WriteOptions::default()).unwrap()
}

#[test]
fn untrusted_preset_refuses_a_zstd_bomb_the_defaults_accept_before_allocating() {
    // The construction is a real bomb: a 16 MiB instance decodes, under both presets, to
    // exactly its declared zeros.
    let small = bomb_file(16 << 20);
    assert!(small.len() < 2048, "{}", small.len());
    for options in [OpenOptions::default(), OpenOptions::untrusted()] {
        let f = AsdfFile::from_bytes(small.clone(), &options).unwrap();
        let a = f.array::<u8>("/bomb").unwrap();
        assert_eq!(a.len(), 16 << 20);
        assert!(a.iter().all(|&b| b == 0));
    }

    // The 2 GiB instance: 64 KiB of file, within every default ceiling (decoding it with the
    // defaults would take 2 GiB, which this test does not do).
    let big = bomb_file(2 << 30);
    assert!(big.len() < 70 * 1024, "{}", big.len());
    let defaults = OpenOptions::default();
    let f = AsdfFile::from_bytes(big.clone(), &defaults).unwrap();
    let declared = f.blocks().info(0).unwrap().data_size();
    assert_eq!(declared, 2 << 30);
    assert!(declared <= defaults.blocks.limits.max_decoded_block_size);
    assert!(declared <= defaults.max_total_decoded_bytes);
    drop(f);

    // Untrusted: refused by the block ceiling before decoding, with no large allocation.
    let f = AsdfFile::from_bytes(big, &OpenOptions::untrusted()).unwrap();
    let base = CountingAllocator::start();
    let e = f.array::<u8>("/bomb").unwrap_err();
    let e2 = f.block_data(0).unwrap_err();
    let e3 = f.read_masked("/bomb").unwrap_err();
    let peak = CountingAllocator::peak_since(base);
    assert!(peak < 1 << 20, "peak {peak} bytes");
    let refused = |e: &BlockError| {
        matches!(e, BlockError::TooLarge { block: 0, size, limit, .. }
            if *size == 2 << 30 && *limit == 1 << 30)
    };
    assert!(
        matches!(&e, AsdfError::Array { source: NdError::Block(b), .. } if refused(b)),
        "{e}"
    );
    assert!(matches!(&e2, AsdfError::Block(b) if refused(b)), "{e2}");
    assert!(
        matches!(&e3, AsdfError::Array { source: NdError::Block(b), .. } if refused(b)),
        "{e3}"
    );
    assert!(e.to_string().contains("max_decoded_block_size"), "{e}");
    // A refused block is not counted towards the file's total.
    assert_eq!(f.decoded_bytes(), 0);
}
