//! The zero-copy path allocates (next to) nothing for a 1 GiB uncompressed array: measured with
//! a counting global allocator (this test binary's only test, so nothing else allocates
//! concurrently). The 1 GiB block is a sparse file, so the test is fast and takes no disk space.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};

use asdf_block::{BlockHeader, ChecksumPolicy, Label, MappedBlocks, ReadOptions};
use asdf_ndarray::{ByteOrder, NdArrayMeta, ScalarType};

struct Counting;
static BYTES: AtomicUsize = AtomicUsize::new(0);
static LARGEST: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        BYTES.fetch_add(new_size, Ordering::Relaxed);
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn measure<R>(f: impl FnOnce() -> R) -> (R, usize, usize) {
    BYTES.store(0, Ordering::SeqCst);
    LARGEST.store(0, Ordering::SeqCst);
    let r = f();
    (
        r,
        BYTES.load(Ordering::SeqCst),
        LARGEST.load(Ordering::SeqCst),
    )
}

#[test]
fn a_one_gib_view_allocates_almost_nothing() {
    const N: u64 = 1 << 30;
    let dir = asdf_testkit::TempDir::new("nd-zero-copy");
    let path = dir.join("big.bin");
    {
        let mut f = std::fs::File::create(&path).unwrap();
        let prefix = vec![b'#'; 74]; // 74 + 54-byte header = data at byte 128
        f.write_all(&prefix).unwrap();
        f.write_all(&BlockHeader::new(Label::NONE, N, N, [0; 16]).to_bytes())
            .unwrap();
        // Sparse: the 1 GiB of zeros takes no disk space and no time to write.
        f.set_len(128 + N).unwrap();
        // Mark the first and last elements.
        use std::io::{Seek, SeekFrom};
        f.seek(SeekFrom::Start(128)).unwrap();
        f.write_all(&1.5f64.to_ne_bytes()).unwrap();
        f.seek(SeekFrom::Start(128 + N - 8)).unwrap();
        f.write_all(&(-2.5f64).to_ne_bytes()).unwrap();
    }
    let opts = ReadOptions {
        checksums: ChecksumPolicy::Skip,
        ..ReadOptions::default()
    };
    let blocks = MappedBlocks::open(&path, 0, opts).unwrap();
    let rows = (N / 8 / 1024) as usize;
    let meta = NdArrayMeta::block(
        0,
        vec![rows, 1024],
        ScalarType::Float64.into(),
        ByteOrder::NATIVE,
    );

    let (view, bytes, largest) = measure(|| meta.view::<f64>(&blocks).unwrap());
    assert_eq!(view.shape(), &[rows, 1024]);
    assert_eq!(view[[0, 0]], 1.5);
    assert_eq!(view[[rows - 1, 1023]], -2.5);
    let block = blocks.data(0).unwrap();
    assert_eq!(
        view.as_ptr() as usize,
        block.as_ptr() as usize,
        "the view borrows the map"
    );
    println!("zero-copy view of 1 GiB: {bytes} bytes allocated in total, largest allocation {largest} bytes");
    assert!(bytes < 1024, "the view allocated {bytes} bytes");

    // A reversed view (negative strides) is zero-copy as well.
    let mut rev = meta.clone();
    rev.offset = N - 8;
    rev.strides = Some(vec![-8192, -8]);
    let (v, bytes, _) = measure(|| rev.view::<f64>(&blocks).unwrap());
    assert_eq!(v[[0, 0]], -2.5);
    assert_eq!(v[[rows - 1, 1023]], 1.5);
    assert!(bytes < 1024, "the reversed view allocated {bytes} bytes");

    // For contrast, a copy of 1 MiB of the same block allocates the 1 MiB.
    let small = NdArrayMeta::block(
        0,
        vec![128, 1024],
        ScalarType::Float64.into(),
        ByteOrder::NATIVE,
    );
    let (a, bytes, _) = measure(|| small.array::<f64>(&blocks).unwrap());
    assert_eq!(a[[0, 0]], 1.5);
    assert!(bytes >= 1 << 20);
}
