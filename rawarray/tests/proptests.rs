//! Property tests: any shape, memory layout, byte order and encoding round-trips exactly, and
//! arbitrary bytes after a valid header never panic.

use ndarray::{ArrayD, IxDyn};
use proptest::prelude::*;
use rawarray::{ByteOrder, RawArray, ReadOptions, WriteEncoding, WriteOptions};

fn encoding() -> impl Strategy<Value = WriteEncoding> {
    prop_oneof![
        Just(WriteEncoding::Raw),
        Just(WriteEncoding::Lz4Block),
        Just(WriteEncoding::Leb128),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn arrays_round_trip(
        dims in proptest::collection::vec(0usize..5, 0..5),
        seed in any::<u64>(),
        big in any::<bool>(),
        enc in encoding(),
        permute in any::<bool>(),
    ) {
        let n: usize = dims.iter().product();
        let mut x = seed | 1;
        let data: Vec<i32> = (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 20) as i32
            })
            .collect();
        let a = ArrayD::from_shape_vec(IxDyn(&dims), data).unwrap();
        // A permuted (non-contiguous in either order) view when asked.
        let mut axes: Vec<usize> = (0..dims.len()).collect();
        if permute && !axes.is_empty() {
            axes.rotate_left(1);
        }
        let v = a.view().permuted_axes(IxDyn(&axes));
        let order = if big && enc != WriteEncoding::Leb128 { Some(ByteOrder::Big) } else { None };
        let o = WriteOptions { byte_order: order, encoding: enc, ..Default::default() };
        let mut bytes = Vec::new();
        rawarray::write_array(&mut bytes, &v, &o).unwrap();
        let (back, info) = rawarray::read_array::<i32, _>(&bytes[..], &ReadOptions::default()).unwrap();
        prop_assert_eq!(back.view(), v.view());
        prop_assert!(info.warnings.is_empty());
        let dyn_read = RawArray::from_slice(&bytes, &ReadOptions::default()).unwrap();
        prop_assert_eq!(dyn_read.to_array::<i32>().unwrap(), back);
    }

    #[test]
    fn garbage_after_header_never_panics(
        flags in 0u64..8,
        eltype in 0u64..7,
        elbyte in prop_oneof![Just(0u64), Just(1), Just(2), Just(4), Just(8), Just(16), Just(3)],
        size in prop_oneof![0u64..64, Just(u64::MAX)],
        dims in proptest::collection::vec(prop_oneof![0u64..6, Just(u64::MAX / 3)], 0..4),
        tail in proptest::collection::vec(any::<u8>(), 0..96),
    ) {
        let mut b = rawarray::MAGIC_BYTES.to_vec();
        for v in [flags, eltype, elbyte, size, dims.len() as u64] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        for d in &dims {
            b.extend_from_slice(&d.to_le_bytes());
        }
        b.extend_from_slice(&tail);
        let o = ReadOptions::default();
        let s = RawArray::from_slice(&b, &o);
        let r = RawArray::from_reader(&b[..], &o);
        prop_assert_eq!(s.is_ok(), r.is_ok());
        if let (Ok(s), Ok(r)) = (s, r) {
            prop_assert_eq!(&s, &r);
            // Whatever was read writes back and reads again to the same data.
            let again = RawArray::from_slice(&s.to_bytes(&Default::default()).unwrap(), &o).unwrap();
            prop_assert_eq!(again.data_bytes(), s.data_bytes());
        }
        let _ = rawarray::view_slice::<u8>(&b);
        let _ = rawarray::read_vec::<f64, _>(&b[..], &o);
    }
}
