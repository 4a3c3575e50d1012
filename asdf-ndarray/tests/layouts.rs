//! Layouts, datatypes and hostile input, through the public API over in-memory blocks.

use asdf_block::{BlockReader, BlockWriter, EncodeOptions, Label, ReadOptions, WriteOptions};
use asdf_ndarray::{
    infer_datatype, AnyArray, ArrayWriter, BigInteger, ByteOrder, ChunkedArray, Datatype,
    NdArrayMeta, NdError, NoBlocks, ReadLimits, ScalarType, StoreOptions,
};
use asdf_yaml::{parse_str, Node};
use half::f16;
use ndarray::{arr1, s, Array2, Array3, ArrayD, IxDyn};
use num_complex::Complex;

/// One block holding `data`, its data starting at `misalign` bytes past a 64-byte boundary.
fn blocks_with(data: &[u8], misalign: u64) -> BlockReader<Vec<u8>> {
    let prefix = vec![b'#'; 10 + misalign as usize]; // + 54-byte header = data at 64 + misalign
    let pos = prefix.len() as u64;
    let mut w = BlockWriter::new(prefix, pos, WriteOptions::default());
    let info = w
        .write_data(data, Label::NONE, &EncodeOptions::default())
        .unwrap();
    let file = w.finish().unwrap();
    let r = BlockReader::new(file, 0, ReadOptions::default()).unwrap();
    assert_eq!(info.data_offset % 64, misalign);
    r
}

fn meta(yaml: &str) -> NdArrayMeta {
    NdArrayMeta::from_node(&parse_str(yaml).unwrap()).unwrap()
}

fn f64_block(n: usize, order: ByteOrder) -> Vec<u8> {
    (0..n)
        .flat_map(|i| match order {
            ByteOrder::Little => (i as f64).to_le_bytes(),
            ByteOrder::Big => (i as f64).to_be_bytes(),
        })
        .collect()
}

#[test]
fn every_scalar_type_both_byte_orders_round_trips() {
    for order in [ByteOrder::Little, ByteOrder::Big] {
        let mut w = ArrayWriter::new();
        let opts = StoreOptions {
            byteorder: order,
            ..StoreOptions::default()
        };
        let arrays: Vec<AnyArray> = vec![
            ArrayD::from_shape_vec(IxDyn(&[3]), vec![i8::MIN, 0, i8::MAX])
                .unwrap()
                .into(),
            ArrayD::from_shape_vec(IxDyn(&[2]), vec![i16::MIN, i16::MAX])
                .unwrap()
                .into(),
            ArrayD::from_shape_vec(IxDyn(&[2]), vec![i32::MIN, 7])
                .unwrap()
                .into(),
            ArrayD::from_shape_vec(IxDyn(&[2]), vec![i64::MIN, 7])
                .unwrap()
                .into(),
            ArrayD::from_shape_vec(IxDyn(&[2]), vec![i128::MIN, i128::MAX])
                .unwrap()
                .into(),
            ArrayD::from_shape_vec(IxDyn(&[2]), vec![u8::MAX, 1])
                .unwrap()
                .into(),
            ArrayD::from_shape_vec(IxDyn(&[2]), vec![u16::MAX, 1])
                .unwrap()
                .into(),
            ArrayD::from_shape_vec(IxDyn(&[2]), vec![u32::MAX, 1])
                .unwrap()
                .into(),
            ArrayD::from_shape_vec(IxDyn(&[2]), vec![u64::MAX, 1])
                .unwrap()
                .into(),
            ArrayD::from_shape_vec(IxDyn(&[2]), vec![u128::MAX, 1])
                .unwrap()
                .into(),
            ArrayD::from_shape_vec(IxDyn(&[2]), vec![f16::from_f32(1.5), f16::NAN])
                .unwrap()
                .into(),
            ArrayD::from_shape_vec(IxDyn(&[2]), vec![1.5f32, -0.0])
                .unwrap()
                .into(),
            ArrayD::from_shape_vec(IxDyn(&[2]), vec![f64::MIN_POSITIVE, f64::NEG_INFINITY])
                .unwrap()
                .into(),
            ArrayD::from_shape_vec(IxDyn(&[1]), vec![Complex::new(f16::ONE, f16::NEG_ONE)])
                .unwrap()
                .into(),
            ArrayD::from_shape_vec(IxDyn(&[1]), vec![Complex::new(1.0f32, -2.0)])
                .unwrap()
                .into(),
            ArrayD::from_shape_vec(IxDyn(&[1]), vec![Complex::new(1.0f64, f64::NAN)])
                .unwrap()
                .into(),
            ArrayD::from_shape_vec(IxDyn(&[2]), vec![true, false])
                .unwrap()
                .into(),
        ];
        for inline in [false, true] {
            let opts = if inline {
                StoreOptions {
                    byteorder: order,
                    ..StoreOptions::inline()
                }
            } else {
                opts.clone()
            };
            let nodes: Vec<Node> = arrays
                .iter()
                .map(|a| w.add_any(a, &opts).unwrap())
                .collect();
            let store = w.memory_store();
            for (a, n) in arrays.iter().zip(&nodes) {
                // Through the text form too.
                let text = asdf_yaml::emit_to_string(n).unwrap();
                let n2 = parse_str(&text).unwrap();
                let back = NdArrayMeta::from_node(&n2).unwrap().read(&store).unwrap();
                assert!(
                    back.equals_nan_aware(a),
                    "{order:?} inline={inline}: {a:?} vs {back:?}\n{text}"
                );
            }
        }
    }
}

#[test]
fn strides_offsets_and_negative_strides() {
    let data = f64_block(24, ByteOrder::Little);
    let r = blocks_with(&data, 0);
    // 2x3 view, reversed rows and columns, from element 23 walking back.
    let m = meta("{source: 0, datatype: float64, byteorder: little, shape: [2, 3], offset: 184, strides: [-96, -16]}");
    let a = m.array::<f64>(&r).unwrap();
    assert_eq!(
        a.into_raw_vec_and_offset().0,
        vec![23.0, 21.0, 19.0, 11.0, 9.0, 7.0]
    );
    // Mixed signs, Fortran-like.
    let m = meta("{source: 0, datatype: float64, byteorder: little, shape: [3, 2], offset: 8, strides: [8, 32]}");
    assert_eq!(
        m.array::<f64>(&r).unwrap().into_raw_vec_and_offset().0,
        vec![1.0, 5.0, 2.0, 6.0, 3.0, 7.0]
    );
    // Big-endian copy swaps.
    let rb = blocks_with(&f64_block(4, ByteOrder::Big), 0);
    let m = meta("{source: 0, datatype: float64, byteorder: big, shape: [4]}");
    assert_eq!(
        m.array::<f64>(&rb).unwrap().into_raw_vec_and_offset().0,
        vec![0.0, 1.0, 2.0, 3.0]
    );
    let e = m.view::<f64>(&rb).unwrap_err();
    assert!(
        e.to_string().contains("big-endian") || cfg!(target_endian = "big"),
        "{e}"
    );
}

#[test]
fn views_are_zero_copy_when_aligned_and_refused_otherwise() {
    let data = f64_block(24, ByteOrder::NATIVE);
    for misalign in [0u64, 3] {
        let r = blocks_with(&data, misalign);
        let block = r.data(0).unwrap();
        let aligned = block.as_ptr() as usize % 8 == 0;
        if r.bytes().as_ptr() as usize % 8 == 0 {
            assert_eq!(aligned, misalign == 0);
        }
        let m = meta(&format!("{{source: 0, datatype: float64, byteorder: {}, shape: [2, 3], offset: 184, strides: [-96, -16]}}", ByteOrder::NATIVE.name()));
        match m.view::<f64>(&r) {
            Ok(v) => {
                assert!(aligned);
                assert_eq!(
                    v.iter().copied().collect::<Vec<_>>(),
                    vec![23.0, 21.0, 19.0, 11.0, 9.0, 7.0]
                );
                // Really borrowed from the block.
                let p = &v[[1, 2]] as *const f64 as usize;
                assert_eq!(p, block.as_ptr() as usize + 7 * 8);
                assert_eq!(v.strides(), &[-12, -2]);
            }
            Err(NdError::NotViewable(why)) => {
                assert!(!aligned, "aligned data refused: {why}");
                assert!(why.contains("not aligned"), "{why}");
                // The copy still works.
                assert_eq!(m.array::<f64>(&r).unwrap()[[0, 0]], 23.0);
            }
            Err(e) => panic!("{e}"),
        }
    }
    // Strides that are not a multiple of the element size: copy only.
    let bytes: Vec<u8> = (0..64).collect();
    let r = blocks_with(&bytes, 0);
    let m = meta("{source: 0, datatype: uint16, byteorder: little, shape: [4], strides: [3]}");
    assert!(matches!(m.view::<u16>(&r), Err(NdError::NotViewable(_))));
    assert_eq!(m.array::<u16>(&r).unwrap()[[1]], u16::from_le_bytes([3, 4]));
    // bool views check every byte.
    let r = blocks_with(&[0, 1, 2, 1], 0);
    let m = meta("{source: 0, datatype: bool8, byteorder: big, shape: [4]}");
    assert!(matches!(m.view::<bool>(&r), Err(NdError::NotViewable(_))));
    // The copy maps any non-zero byte to true (NumPy's reading of bool8).
    let all: Vec<bool> = m.array::<bool>(&r).unwrap().iter().copied().collect();
    assert_eq!(all, vec![false, true, true, true]);
    let m = meta("{source: 0, datatype: bool8, byteorder: big, shape: [2]}");
    assert_eq!(
        m.view::<bool>(&r)
            .unwrap()
            .iter()
            .cloned()
            .collect::<Vec<_>>(),
        vec![false, true]
    );
    // 0-size and 0-d views.
    let m = meta("{source: 0, datatype: uint8, byteorder: big, shape: [0, 5]}");
    assert_eq!(m.view::<u8>(&r).unwrap().shape(), &[0, 5]);
    let m = meta("{source: 0, datatype: uint8, byteorder: big, shape: [], offset: 2}");
    assert_eq!(m.view::<u8>(&r).unwrap()[[]], 2);
}

#[test]
fn layouts_outside_the_block_are_errors() {
    let r = blocks_with(&f64_block(8, ByteOrder::Little), 0);
    for yaml in [
        "{source: 0, datatype: float64, byteorder: little, shape: [9]}",
        "{source: 0, datatype: float64, byteorder: little, shape: [8], offset: 8}",
        "{source: 0, datatype: float64, byteorder: little, shape: [2], strides: [-8]}",
        "{source: 0, datatype: float64, byteorder: little, shape: [2, 2], strides: [40, 24]}",
        "{source: 0, datatype: float64, byteorder: little, shape: [3], offset: 1000000000000}",
        "{source: 0, datatype: float64, byteorder: little, shape: [2], strides: [9223372036854775807]}",
        "{source: 0, datatype: float64, byteorder: little, shape: [2, 2], strides: [-9223372036854775807, -9223372036854775807]}",
    ] {
        let e = meta(yaml).array::<f64>(&r).unwrap_err();
        assert!(matches!(e, NdError::OutOfBlock { .. } | NdError::TooLarge { .. }), "{yaml}: {e}");
        assert!(meta(yaml).view::<f64>(&r).is_err());
    }
    // Shape products that overflow.
    let e = meta(
        "{source: 0, datatype: float64, byteorder: little, shape: [4294967296, 4294967296, 16]}",
    )
    .array::<f64>(&r)
    .unwrap_err();
    assert!(matches!(e, NdError::TooLarge { .. }), "{e}");
    // Overlapping strides expanding a small block beyond the limit.
    let m =
        meta("{source: 0, datatype: float64, byteorder: little, shape: [5, 4], strides: [8, 8]}");
    let e = m
        .array_with::<f64>(
            &r,
            &ReadLimits {
                max_expanded_bytes: 100,
            },
        )
        .unwrap_err();
    assert!(matches!(e, NdError::TooLarge { .. }), "{e}");
    // Overlapping strides within the limit are fine (a broadcast-like view).
    let m =
        meta("{source: 0, datatype: float64, byteorder: little, shape: [3, 2], strides: [8, 8]}");
    assert_eq!(
        m.array::<f64>(&r).unwrap().into_raw_vec_and_offset().0,
        vec![0.0, 1.0, 1.0, 2.0, 2.0, 3.0]
    );
    // A missing block, unknown source kinds.
    assert!(
        meta("{source: 5, datatype: float64, byteorder: little, shape: [1]}")
            .array::<f64>(&r)
            .is_err()
    );
    assert!(
        meta("{source: other.asdf, datatype: float64, byteorder: little, shape: [1]}")
            .array::<f64>(&r)
            .is_err()
    );
}

#[test]
fn malformed_nodes_name_the_field() {
    for (yaml, field) in [
        (
            "{source: 0, datatype: float64, shape: [2], strides: [0]}",
            "strides[0]",
        ),
        (
            "{source: 0, datatype: float64, shape: [2], strides: [8, 8]}",
            "strides",
        ),
        ("{source: 0, datatype: float64, shape: [-1]}", "shape[0]"),
        (
            "{source: 0, datatype: float64, shape: [2, '*']}",
            "shape[1]",
        ),
        ("{source: 0, datatype: float64}", "shape"),
        ("{source: 0, shape: [1]}", "datatype"),
        (
            "{source: 0, datatype: float64, shape: [1], byteorder: middle}",
            "byteorder",
        ),
        (
            "{source: 0, datatype: float64, shape: [1], offset: -3}",
            "offset",
        ),
        (
            "{source: 0, data: [1], datatype: float64, shape: [1]}",
            "source",
        ),
        ("{datatype: float64}", "source"),
        ("{source: 1.5, datatype: float64, shape: [1]}", "source"),
    ] {
        let e = NdArrayMeta::from_node(&parse_str(yaml).unwrap()).unwrap_err();
        match &e {
            NdError::Field { field: f, .. } => assert_eq!(f, field, "{yaml}: {e}"),
            other => panic!("{yaml}: {other}"),
        }
    }
    for bad in [
        "float128",
        "[ascii, -1]",
        "[{name: a}]",
        "{a: 1}",
        "[ucs4, 4611686018427387904]",
    ] {
        let n = parse_str(bad).unwrap();
        assert!(Datatype::from_node(&n).is_err(), "{bad}");
    }
    let e = meta("{source: 0, datatype: float64, byteorder: little, shape: [1]}")
        .array::<i32>(&NoBlocks)
        .unwrap_err();
    assert_eq!(e.to_string(), "the array stores float64, not int32");
}

#[test]
fn streamed_rows_come_from_the_block_length() {
    let mut data = f64_block(16, ByteOrder::Little);
    data.extend([1, 2, 3]); // a partial row
    let r = blocks_with(&data, 0);
    let m = meta("{source: -1, datatype: float64, byteorder: little, shape: ['*', 2, 2]}");
    let a = m.array::<f64>(&r).unwrap();
    assert_eq!(a.shape(), &[4, 2, 2]);
    assert_eq!(a[[3, 1, 1]], 15.0);
    let m = meta("{source: -1, datatype: float64, byteorder: little, shape: ['*', 3], offset: 8}");
    assert_eq!(m.array::<f64>(&r).unwrap().shape(), &[5, 3]);
    let m = meta(
        "{source: -1, datatype: float64, byteorder: little, shape: ['*', 2], strides: [-16, 8]}",
    );
    assert!(m.array::<f64>(&r).is_err());
}

#[test]
fn inline_data_inference_masks_and_zero_size() {
    let n = parse_str("[[1, 2.5], [null, 4]]").unwrap();
    assert_eq!(infer_datatype(&n), Datatype::Scalar(ScalarType::Float64));
    assert_eq!(
        infer_datatype(&parse_str("[1, 2]").unwrap()),
        ScalarType::Int64.into()
    );
    assert_eq!(
        infer_datatype(&parse_str("[true, false]").unwrap()),
        ScalarType::Bool8.into()
    );
    assert_eq!(
        infer_datatype(&parse_str("[a, bcd, 1]").unwrap()),
        Datatype::Ucs4(3)
    );
    let c = parse_str("[1, !<tag:stsci.edu:asdf/core/complex-1.0.0> 2+3j]").unwrap();
    assert_eq!(infer_datatype(&c), ScalarType::Complex128.into());
    let m = NdArrayMeta::from_node(&n).unwrap();
    let (a, mask) = m.read_masked(&NoBlocks).unwrap();
    assert_eq!(a.shape(), &[2, 2]);
    assert_eq!(
        mask.unwrap().into_raw_vec_and_offset().0,
        vec![false, false, true, false]
    );
    // Sentinel masks, NaN sentinels match NaN.
    let m = meta("{data: [1.0, .nan, 3.0], mask: .nan}");
    assert_eq!(
        m.read_masked(&NoBlocks)
            .unwrap()
            .1
            .unwrap()
            .iter()
            .cloned()
            .collect::<Vec<_>>(),
        vec![false, true, false]
    );
    let m = meta("{data: [1, 2, 3, 2], mask: 2, datatype: int8}");
    assert_eq!(
        m.read_masked(&NoBlocks)
            .unwrap()
            .1
            .unwrap()
            .iter()
            .cloned()
            .collect::<Vec<_>>(),
        vec![false, true, false, true]
    );
    // A mask array broadcast over rows.
    let m = meta("{data: [[1, 2], [3, 4]], mask: {data: [true, false], datatype: bool8}}");
    assert_eq!(
        m.read_masked(&NoBlocks)
            .unwrap()
            .1
            .unwrap()
            .into_raw_vec_and_offset()
            .0,
        vec![true, false, true, false]
    );
    let m = meta("{data: [[1, 2], [3, 4]], mask: {data: [true, false, true], datatype: bool8}}");
    assert!(m.read_masked(&NoBlocks).is_err());
    // Zero-size inline arrays keep their declared shape.
    let m = meta("{data: [], datatype: int16, shape: [0, 3]}");
    assert_eq!(m.array::<i16>(&NoBlocks).unwrap().shape(), &[0, 3]);
    let m = meta("{data: [[], []], datatype: int16, shape: [2, 0]}");
    assert_eq!(m.array::<i16>(&NoBlocks).unwrap().shape(), &[2, 0]);
    // Ragged or mistyped inline data.
    assert!(
        meta("{data: [[1, 2], [3]], datatype: int16, shape: [2, 2]}")
            .array::<i16>(&NoBlocks)
            .is_err()
    );
    assert!(meta("{data: [[1, 2], [3]]}").read(&NoBlocks).is_err());
    assert!(meta("{data: [300], datatype: uint8}")
        .read(&NoBlocks)
        .is_err());
    assert!(meta("{data: [abcd], datatype: [ascii, 2]}")
        .read(&NoBlocks)
        .is_err());
    // Strings.
    let m = meta("{data: [a, Æʩ], datatype: [ucs4, 2]}");
    assert_eq!(
        m.strings(&NoBlocks)
            .unwrap()
            .iter()
            .cloned()
            .collect::<Vec<_>>(),
        vec!["a", "Æʩ"]
    );
}

#[test]
fn hostile_values_are_errors_not_panics() {
    // Invalid UCS-4 and non-ASCII bytes.
    let r = blocks_with(&[0xff, 0xff, 0xff, 0xff, 0x80, 0, 0, 0], 0);
    assert!(matches!(
        meta("{source: 0, datatype: [ucs4, 1], byteorder: little, shape: [1]}").read(&r),
        Err(NdError::InvalidValue { .. })
    ));
    assert!(matches!(
        meta("{source: 0, datatype: [ascii, 4], byteorder: big, shape: [2]}").read(&r),
        Err(NdError::InvalidValue { .. })
    ));
    // Deeply nested records are refused.
    let mut dt = "float64".to_string();
    for _ in 0..100 {
        dt = format!("[{{name: a, datatype: {dt}}}]");
    }
    assert!(Datatype::from_node(&parse_str(&dt).unwrap()).is_err());
    // Too many dimensions (a 1-element array with 100000 axes would recurse that deep).
    let dims = vec!["1"; 100_000].join(", ");
    let node = parse_str(&format!(
        "{{source: 0, datatype: uint8, byteorder: big, shape: [{dims}]}}"
    ))
    .unwrap();
    assert!(matches!(
        NdArrayMeta::from_node(&node),
        Err(NdError::Field { .. })
    ));
    // A zero-size datatype with an enormous shape.
    let m = meta("{source: 0, datatype: [ascii, 0], byteorder: big, shape: [1000000000000]}");
    assert!(m.read(&r).is_err());
}

#[test]
fn writer_options_compression_views_and_fortran() {
    let a = Array3::from_shape_fn((20, 30, 40), |(i, j, k)| {
        ((i * 100 + j * 10 + k) % 64) as i32
    });
    let mut w = ArrayWriter::new();
    let nodes: Vec<Node> = ["zlib", "bzp2", "lz4", "zstd", "xz"]
        .iter()
        .map(|c| {
            let o = StoreOptions {
                byteorder: ByteOrder::Big,
                level: Some(1).filter(|_| *c != "lz4"),
                ..StoreOptions::compressed(c).unwrap()
            };
            w.add(&a.slice(s![..;-1, 1.., ..;2]), &o).unwrap()
        })
        .collect();
    let mut bw = BlockWriter::new(Vec::new(), 0, WriteOptions::default());
    let infos = w.write_blocks(&mut bw).unwrap();
    assert!(infos.iter().all(|i| !i.header.compression.is_none()));
    let r = BlockReader::new(bw.finish().unwrap(), 0, ReadOptions::default()).unwrap();
    for n in &nodes {
        let back = NdArrayMeta::from_node(n).unwrap().array::<i32>(&r).unwrap();
        assert_eq!(back, a.slice(s![..;-1, 1.., ..;2]).into_dyn());
    }
    // Fortran-order base shared by a transposed view: strides written, no copy of the base.
    let f = Array2::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as f32).reversed_axes();
    let mut w = ArrayWriter::new();
    let base_node = w.add_view(&f, &f.view(), &StoreOptions::default()).unwrap();
    let col = w
        .add_view(&f, &f.slice(s![1, ..;-1]), &StoreOptions::default())
        .unwrap();
    assert_eq!(w.blocks().len(), 1);
    let st = w.memory_store();
    assert_eq!(
        NdArrayMeta::from_node(&base_node)
            .unwrap()
            .array::<f32>(&st)
            .unwrap(),
        f.clone().into_dyn()
    );
    let cm = NdArrayMeta::from_node(&col).unwrap();
    assert!(cm.strides.as_ref().unwrap()[0] < 0);
    assert_eq!(
        cm.array::<f32>(&st).unwrap(),
        f.slice(s![1, ..;-1]).into_dyn()
    );
    // A view that is not inside the base is refused.
    let other = arr1(&[1.0f32, 2.0]);
    assert!(w.add_view(&f, &other, &StoreOptions::default()).is_err());
}

#[test]
fn chunked_arrays_gaps_overlaps_and_regions() {
    // ASDF.jl's test/chunking.asdf layout: 4x4 float16 from four inline chunks.
    let yaml = "!<tag:stsci.edu:asdf/core/chunked-ndarray-1.0.0>
shape: [4, 4]
datatype: float16
chunks:
- !<tag:stsci.edu:asdf/core/ndarray-chunk-1.0.0>
  start: [0, 0]
  ndarray: !<tag:stsci.edu:asdf/core/ndarray-1.1.0> {data: [[1, 2, 3], [5, 6, 7]], datatype: float16, shape: [2, 3]}
- !<tag:stsci.edu:asdf/core/ndarray-chunk-1.0.0>
  start: [2, 0]
  ndarray: !<tag:stsci.edu:asdf/core/ndarray-1.1.0> {data: [[9, 10, 11], [13, 14, 15]], datatype: float16, shape: [2, 3]}
- !<tag:stsci.edu:asdf/core/ndarray-chunk-1.0.0>
  start: [0, 3]
  ndarray: !<tag:stsci.edu:asdf/core/ndarray-1.1.0> {data: [[4], [8]], datatype: float16, shape: [2, 1]}
- !<tag:stsci.edu:asdf/core/ndarray-chunk-1.0.0>
  start: [2, 3]
  ndarray: !<tag:stsci.edu:asdf/core/ndarray-1.1.0> {data: [[12], [16]], datatype: float16, shape: [2, 1]}
";
    let c = ChunkedArray::from_node(&parse_str(yaml).unwrap()).unwrap();
    let a = c.array::<f16>(&NoBlocks).unwrap();
    let want: Vec<f16> = (1..=16).map(|i| f16::from_f32(i as f32)).collect();
    assert_eq!(a.into_raw_vec_and_offset().0, want);
    assert!(matches!(c.read(&NoBlocks).unwrap(), AnyArray::Float16(_)));
    // Gaps are zero, later chunks win.
    let yaml = "{shape: [3, 3], datatype: int32, chunks: [
      {start: [0, 0], ndarray: {data: [[1, 1], [1, 1]], datatype: int32, shape: [2, 2]}},
      {start: [1, 1], ndarray: {data: [[2, 2], [2, 2]], datatype: int32, shape: [2, 2]}}]}";
    let c = ChunkedArray::from_node(&parse_str(yaml).unwrap()).unwrap();
    assert_eq!(
        c.array::<i32>(&NoBlocks)
            .unwrap()
            .into_raw_vec_and_offset()
            .0,
        vec![1, 1, 0, 1, 2, 2, 0, 2, 2]
    );
    assert_eq!(
        c.region::<i32>(&NoBlocks, &[0..1, 1..3])
            .unwrap()
            .into_raw_vec_and_offset()
            .0,
        vec![1, 0]
    );
    // Invalid chunks.
    for bad in [
        "{shape: [2], datatype: int32, chunks: [{start: [1], ndarray: {data: [1, 2], datatype: int32, shape: [2]}}]}",
        "{shape: [2], datatype: int32, chunks: [{start: [0, 0], ndarray: {data: [1, 2], datatype: int32, shape: [2]}}]}",
        "{shape: [2], datatype: int32, chunks: [{start: [0], ndarray: {data: [1, 2], datatype: int64, shape: [2]}}]}",
    ] {
        assert!(ChunkedArray::from_node(&parse_str(bad).unwrap()).is_err(), "{bad}");
    }
    // A huge chunked shape with no chunks cannot allocate beyond the limit.
    let c = ChunkedArray::from_node(
        &parse_str("{shape: [1000000000000], datatype: int8, chunks: []}").unwrap(),
    )
    .unwrap();
    assert!(matches!(
        c.array::<i8>(&NoBlocks),
        Err(NdError::TooLarge { .. })
    ));
    // Written chunked arrays: parallel compression, regions decode only what they touch.
    let big = Array2::from_shape_fn((300, 70), |(i, j)| (i * 70 + j) as f64);
    let mut w = ArrayWriter::new();
    let node = w
        .add_chunked(
            &big,
            Some(&[64, 32]),
            &StoreOptions::compressed("zstd").unwrap(),
        )
        .unwrap();
    let mut bw = BlockWriter::new(Vec::new(), 0, WriteOptions::default());
    w.write_blocks(&mut bw).unwrap();
    let r = BlockReader::new(bw.finish().unwrap(), 0, ReadOptions::default()).unwrap();
    let c = ChunkedArray::from_node(&node).unwrap();
    assert_eq!(c.chunks.len(), 5 * 3);
    assert_eq!(c.array::<f64>(&r).unwrap(), big.clone().into_dyn());
    assert_eq!(
        c.region::<f64>(&r, &[100..130, 60..70]).unwrap(),
        big.slice(s![100..130, 60..70]).into_dyn()
    );
    let default = ArrayWriter::new()
        .add_chunked(&big, None, &StoreOptions::default())
        .unwrap();
    assert_eq!(ChunkedArray::from_node(&default).unwrap().chunks.len(), 1);
}

#[test]
fn big_integers_and_complex_scalars() {
    for v in [0i128, 1, -1, i64::MAX as i128 + 1, i128::MIN + 1, i128::MAX] {
        let b = BigInteger::from_i128(v);
        assert_eq!(b.to_i128(), Some(v));
        assert_eq!(b.to_string(), v.to_string());
        assert_eq!(BigInteger::from_decimal(&v.to_string()).unwrap(), b);
    }
    let huge = format!("-{}", "9".repeat(60));
    let b = BigInteger::from_decimal(&huge).unwrap();
    assert_eq!(b.to_i128(), None);
    assert_eq!(b.to_string(), huge);
    // Python asdf's layout: words as a block-backed uint32 ndarray.
    let mut w = ArrayWriter::new();
    let node = b.to_node(&mut w, &StoreOptions::default()).unwrap();
    assert_eq!(BigInteger::from_node(&node, &w.memory_store()).unwrap(), b);
    assert!(
        BigInteger::from_node(&parse_str("{words: [1], sign: '*'}").unwrap(), &NoBlocks).is_err()
    );
    let z = asdf_ndarray::parse_complex("(nan-infj)").unwrap();
    assert!(z.re.is_nan() && z.im == f64::NEG_INFINITY);
    assert_eq!(
        asdf_ndarray::parse_complex("1e-3+2E+2J").unwrap(),
        Complex::new(1e-3, 200.0)
    );
    assert_eq!(
        asdf_ndarray::parse_complex("-j").unwrap(),
        Complex::new(0.0, -1.0)
    );
    for bad in ["", "()", "abc", "1+", "1+2", "j1"] {
        assert!(asdf_ndarray::parse_complex(bad).is_err(), "{bad}");
    }
}
