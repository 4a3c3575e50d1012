//! Round trips of every element type, byte order and encoding; ndarray layouts; records;
//! atomic saves; and hostile input (mutations and truncations never panic).

use std::io::Read;

use half::{bf16, f16};
use ndarray::{s, Array, Array2, Array3, ArrayView2, ShapeBuilder};
use num_complex::Complex;
use rawarray::{
    BoolEltype, ByteOrder, CompressedMeaning, Durability, Element, ElementKind, Encoding, Error,
    Header, MappedRawArray, Pod, RawArray, ReadOptions, ReadRaExt, ViewRaExt, Warning,
    WriteEncoding, WriteOptions, WriteRaExt,
};

fn opts(order: Option<ByteOrder>, encoding: WriteEncoding) -> WriteOptions {
    WriteOptions {
        byte_order: order,
        encoding,
        ..WriteOptions::default()
    }
}

/// A reader that hands out one byte per call, to exercise short reads.
struct Trickle<'a>(&'a [u8]);
impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.0.is_empty() || buf.is_empty() {
            return Ok(0);
        }
        buf[0] = self.0[0];
        self.0 = &self.0[1..];
        Ok(1)
    }
}

fn check_type<T: Element + PartialEq + std::fmt::Debug>(values: &[T]) {
    let dims = [values.len() as u64];
    let mut encodings = vec![WriteEncoding::Raw, WriteEncoding::Lz4Block];
    if T::KIND.is_integer_like() {
        encodings.push(WriteEncoding::Leb128);
    }
    if T::KIND == ElementKind::Bool {
        encodings.push(WriteEncoding::BitPacked);
    }
    for enc in encodings {
        for order in [None, Some(ByteOrder::Little), Some(ByteOrder::Big)] {
            let o = opts(order, enc);
            let bytes = match rawarray::to_bytes(values, &dims, &o) {
                Ok(b) => b,
                Err(Error::InvalidArgument(_))
                    if enc == WriteEncoding::Leb128 && order == Some(ByteOrder::Big) =>
                {
                    continue
                }
                Err(e) => panic!("{:?} {enc:?} {order:?}: {e}", T::KIND),
            };
            let (back, info) =
                rawarray::read_vec::<T, _>(&bytes[..], &ReadOptions::default()).unwrap();
            assert_eq!(back, values, "{:?} {enc:?} {order:?}", T::KIND);
            let expect_enc = match enc {
                WriteEncoding::Raw => Encoding::Raw,
                WriteEncoding::Lz4Block => Encoding::Lz4Block,
                WriteEncoding::Leb128 => Encoding::Leb128,
                WriteEncoding::BitPacked => Encoding::BitPacked,
            };
            assert_eq!(info.encoding, expect_enc, "{:?} {enc:?} {order:?}", T::KIND);
            assert!(info.warnings.is_empty(), "{:?}", info.warnings);
            // Streaming with short reads gives the same.
            let (back2, _) =
                rawarray::read_vec::<T, _>(Trickle(&bytes), &ReadOptions::default()).unwrap();
            assert_eq!(back2, values);
            // Dynamic reading and re-writing keep the values.
            let a = RawArray::from_slice(&bytes, &ReadOptions::default()).unwrap();
            assert_eq!(a.to_vec::<T>().unwrap(), values);
            let again = a.to_bytes(&WriteOptions::default()).unwrap();
            assert_eq!(
                rawarray::read_vec::<T, _>(&again[..], &ReadOptions::default())
                    .unwrap()
                    .0,
                values
            );
        }
    }
}

#[test]
fn every_element_type_encoding_and_order() {
    check_type(&[0i8, -1, 127, -128, 5]);
    check_type(&[0i16, -1, i16::MAX, i16::MIN, 300]);
    check_type(&[0i32, -1, i32::MAX, i32::MIN, 70000]);
    check_type(&[0i64, -1, i64::MAX, i64::MIN, 1 << 40]);
    check_type(&[0i128, -1, i128::MAX, i128::MIN, 1 << 100]);
    check_type(&[0u8, 1, 255, 128]);
    check_type(&[0u16, 1, u16::MAX, 0x1234]);
    check_type(&[0u32, 1, u32::MAX, 0x12345678]);
    check_type(&[0u64, 1, u64::MAX, 0x1234_5678_9abc_def0]);
    check_type(&[0u128, 1, u128::MAX, 1 << 127]);
    check_type(&[f16::from_f32(1.5), f16::NEG_INFINITY, f16::from_f32(-0.0)]);
    check_type(&[bf16::from_f32(1.5), bf16::from_f32(-3.0)]);
    check_type(&[1.5f32, f32::MIN_POSITIVE, f32::INFINITY, -0.0]);
    check_type(&[1.5f64, f64::MAX, f64::NEG_INFINITY, 1e-300]);
    check_type(&[Complex::new(f16::from_f32(1.0), f16::from_f32(-2.0))]);
    check_type(&[Complex::new(1.0f32, -2.0), Complex::new(0.5, 1e10)]);
    check_type(&[Complex::new(1.0f64, -2.0), Complex::new(f64::MIN, 3.0)]);
    check_type(&[true, false, true, true]);
    let many: Vec<bool> = (0..200).map(|i| i % 3 == 0).collect();
    check_type(&many);
    check_type::<f64>(&[]);
}

#[test]
fn big_endian_files_have_flag_and_swapped_bytes() {
    let bytes = rawarray::to_bytes(
        &[1.0f32, 2.0],
        &[2],
        &WriteOptions::with_byte_order(ByteOrder::Big),
    )
    .unwrap();
    assert_eq!(u64::from_le_bytes(bytes[8..16].try_into().unwrap()), 1);
    assert_eq!(&bytes[56..60], &1.0f32.to_be_bytes());
    // A RawArray keeps its order on rewrite unless asked otherwise.
    let a = RawArray::from_slice(&bytes, &ReadOptions::default()).unwrap();
    assert_eq!(a.data_byte_order(), ByteOrder::Big);
    assert_eq!(a.to_bytes(&Default::default()).unwrap(), bytes);
    let le = a
        .to_bytes(&WriteOptions::with_byte_order(ByteOrder::Little))
        .unwrap();
    assert_eq!(
        le,
        rawarray::to_bytes(&[1.0f32, 2.0], &[2], &Default::default()).unwrap()
    );
}

#[test]
fn julia_bitarray_and_bool_layouts() {
    let v = [
        true, false, false, true, false, false, true, false, false, true, false, false, true,
        false, true,
    ];
    let bytes = rawarray::to_bytes(
        &v,
        &[3, 5],
        &WriteOptions::with_encoding(WriteEncoding::BitPacked),
    )
    .unwrap();
    let expected = std::fs::read(asdf_testkit::corpus_file(
        "rawarray/generated/synthesized/jl_bitarray_3x5.ra",
    ))
    .unwrap();
    assert_eq!(bytes, expected);
    let bytes = rawarray::to_bytes(
        &[true, false, false, true, true, false],
        &[2, 3],
        &Default::default(),
    )
    .unwrap();
    let expected = std::fs::read(asdf_testkit::corpus_file(
        "rawarray/generated/synthesized/jl_bool_2x3.ra",
    ))
    .unwrap();
    assert_eq!(bytes, expected);
    // Python's convention: eltype 0.
    let o = WriteOptions {
        bool_eltype: BoolEltype::User,
        ..WriteOptions::default()
    };
    let bytes = rawarray::to_bytes(&[true, false, false, true, true, true], &[2, 3], &o).unwrap();
    let expected = std::fs::read(asdf_testkit::corpus_file(
        "rawarray/generated/by-reference/py_bool_2x3_user.ra",
    ))
    .unwrap();
    assert_eq!(bytes, expected);
    // A non-0/1 byte in a Bool file is a typed error with the byte offset.
    let mut bad = rawarray::to_bytes(&[true, false], &[2], &Default::default()).unwrap();
    bad[57] = 7;
    match rawarray::read_vec::<bool, _>(&bad[..], &ReadOptions::default()) {
        Err(Error::CorruptData {
            encoding: "bool",
            offset: 57,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn leb128_matches_julia_vectors_and_tells_lz4_apart() {
    let o = WriteOptions::with_encoding(WriteEncoding::Leb128);
    let bytes = rawarray::to_bytes(&[0i16, -1, 1, -64, 64, -300], &[3, 2], &o).unwrap();
    let expected = std::fs::read(asdf_testkit::corpus_file(
        "rawarray/generated/synthesized/jl_leb128_int16_3x2.ra",
    ))
    .unwrap();
    assert_eq!(bytes, expected);
    let bytes = rawarray::to_bytes(&[0u32, 127, 128, 300000], &[4], &o).unwrap();
    let expected = std::fs::read(asdf_testkit::corpus_file(
        "rawarray/generated/synthesized/jl_leb128_uint32_4.ra",
    ))
    .unwrap();
    assert_eq!(bytes, expected);
    // Large values: the varint stream is longer than `size` (which counts decoded bytes), so
    // the first `size` bytes must not be mistaken for an LZ4 block.
    let big: Vec<u64> = (0..100).map(|i| u64::MAX - i * 977).collect();
    let bytes = rawarray::to_bytes(&big, &[10, 10], &o).unwrap();
    assert!(bytes.len() - 64 > 800);
    let a = RawArray::from_slice(&bytes, &ReadOptions::default()).unwrap();
    assert_eq!(a.info().encoding, Encoding::Leb128);
    assert_eq!(a.to_vec::<u64>().unwrap(), big);
    // With metadata appended after the varints: kept as the trailer.
    let mut with_trailer = rawarray::to_bytes(&[1i32, -2, 3], &[3], &o).unwrap();
    with_trailer.extend_from_slice(b"\nnote: hello");
    let a = RawArray::from_slice(&with_trailer, &ReadOptions::default()).unwrap();
    assert_eq!(a.to_vec::<i32>().unwrap(), [1, -2, 3]);
    assert_eq!(a.trailer(), b"\nnote: hello");
    // LZ4 for integers whose block is shorter than the decoded size.
    let ints: Vec<i32> = (0..1000).map(|i| i % 7).collect();
    let bytes = rawarray::to_bytes(
        &ints,
        &[1000],
        &WriteOptions::with_encoding(WriteEncoding::Lz4Block),
    )
    .unwrap();
    let a = RawArray::from_slice(&bytes, &ReadOptions::default()).unwrap();
    assert_eq!(a.info().encoding, Encoding::Lz4Block);
    assert_eq!(a.to_vec::<i32>().unwrap(), ints);
    // Incompressible bytes: the LZ4 block is longer than the decoded size.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let noise: Vec<u8> = (0..512)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    let bytes = rawarray::to_bytes(
        &noise,
        &[512],
        &WriteOptions::with_encoding(WriteEncoding::Lz4Block),
    )
    .unwrap();
    let a = RawArray::from_slice(&bytes, &ReadOptions::default()).unwrap();
    assert!(a.header().size > 512);
    assert_eq!(a.to_vec::<u8>().unwrap(), noise);
}

#[test]
fn julia_float_compress_bug_reads_with_warning() {
    // RawArray.jl 0.0.3..0.1.1 `compress=true` on floats: flag bit 1, plain bytes.
    let mut bytes = rawarray::to_bytes(&[1.0f64, 2.0, 3.0], &[3], &Default::default()).unwrap();
    bytes[8] = 2;
    let a = RawArray::from_slice(&bytes, &ReadOptions::default()).unwrap();
    assert_eq!(a.info().encoding, Encoding::RawDespiteCompressedFlag);
    assert_eq!(a.warnings(), [Warning::CompressedFlagOnRawData]);
    assert_eq!(a.to_vec::<f64>().unwrap(), [1.0, 2.0, 3.0]);
}

#[test]
fn ndarray_layouts_write_column_major() {
    let a = Array3::from_shape_fn((2, 3, 4), |(i, j, k)| (100 * i + 10 * j + k) as i32);
    let expected: Vec<i32> = a.t().iter().copied().collect(); // column-major order
    let mut c_order = Vec::new();
    a.write_ra(&mut c_order).unwrap();
    let f = a.t().as_standard_layout().reversed_axes().to_owned();
    assert!(f.t().is_standard_layout());
    let mut f_order = Vec::new();
    f.write_ra(&mut f_order).unwrap();
    assert_eq!(c_order, f_order);
    assert_eq!(
        rawarray::read_vec::<i32, _>(&c_order[..], &ReadOptions::default())
            .unwrap()
            .0,
        expected
    );
    // Strided, sliced and negative-stride views.
    let sliced = a.slice(s![.., ..;2, ..;-1]);
    let mut out = Vec::new();
    rawarray::write_array(
        &mut out,
        &sliced,
        &WriteOptions::with_byte_order(ByteOrder::Big),
    )
    .unwrap();
    let back = Array3::<i32>::read_ra(&out[..]).unwrap();
    assert_eq!(back, sliced);
    // Reading gives Fortran layout with shape = dims.
    let back = Array3::<i32>::read_ra(&c_order[..]).unwrap();
    assert_eq!(back, a);
    assert!(back.t().is_standard_layout());
    // Wrong static dimensionality is an error, not a panic.
    assert!(matches!(
        Array2::<i32>::read_ra(&c_order[..]),
        Err(Error::InvalidArgument(_))
    ));
    // Zero-sized dims and 0-d arrays.
    let empty = Array2::<f32>::zeros((0, 5));
    let mut out = Vec::new();
    empty.write_ra(&mut out).unwrap();
    assert_eq!(Array2::<f32>::read_ra(&out[..]).unwrap().shape(), [0, 5]);
    let scalar = ndarray::arr0(2.5f64);
    let mut out = Vec::new();
    scalar.write_ra(&mut out).unwrap();
    assert_eq!(out.len(), 56);
    assert_eq!(
        Array::<f64, ndarray::Ix0>::read_ra(&out[..]).unwrap(),
        scalar
    );
}

/// `bytes` copied into a buffer at an address whose remainder modulo 8 is `rem`.
fn placed(bytes: &[u8], rem: usize) -> (Vec<u8>, usize) {
    let mut buf = vec![0u8; bytes.len() + 16];
    let off = (8 + rem - buf.as_ptr() as usize % 8) % 8;
    buf[off..off + bytes.len()].copy_from_slice(bytes);
    (buf, off)
}

#[test]
fn zero_copy_views() {
    let a = Array2::from_shape_vec((3, 4).f(), (0..12).map(|x| x as f64).collect()).unwrap();
    let mut bytes = Vec::new();
    a.write_ra(&mut bytes).unwrap();
    let (buf, off) = placed(&bytes, 0);
    let file = &buf[off..off + bytes.len()];
    let v = ArrayView2::<f64>::view_ra(file).unwrap();
    assert_eq!(v, a);
    assert_eq!(v.as_ptr() as usize, file.as_ptr() as usize + 64);
    // Misaligned: the same file one byte off.
    let (buf, off) = placed(&bytes, 1);
    let file = &buf[off..off + bytes.len()];
    let view = rawarray::view_array::<f64>(file);
    assert!(matches!(
        view,
        Err(Error::View(rawarray::ViewError::Misaligned {
            align: 8,
            ..
        }))
    ));
    // ... while the copying read works.
    assert_eq!(
        rawarray::read_array::<f64, _>(file, &ReadOptions::default())
            .unwrap()
            .0,
        a.into_dyn()
    );
    // Encoded data cannot be viewed.
    let lz = rawarray::to_bytes(
        &[1u8; 100],
        &[100],
        &WriteOptions::with_encoding(WriteEncoding::Lz4Block),
    )
    .unwrap();
    assert!(matches!(
        rawarray::view_slice::<u8>(&lz),
        Err(Error::View(rawarray::ViewError::Encoded(_)))
    ));
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Rec {
    id: u32,
    gain: f32,
    t: f64,
}
// SAFETY: repr(C), 4 + 4 + 8 = 16 bytes, no padding, every bit pattern valid.
unsafe impl Pod for Rec {}

#[test]
fn user_records() {
    let recs: Vec<Rec> = (0..6)
        .map(|i| Rec {
            id: i,
            gain: i as f32 * 0.5,
            t: -(i as f64),
        })
        .collect();
    let a = RawArray::from_records(&recs, &[3, 2]).unwrap();
    assert_eq!((a.header().eltype, a.header().elbyte), (0, 16));
    let dir = asdf_testkit::TempDir::new("ra-records");
    let path = dir.join("recs.ra");
    a.save(&path, &Default::default()).unwrap();
    let b = RawArray::open(&path, &ReadOptions::default()).unwrap();
    assert_eq!(b.kind(), ElementKind::User(16));
    assert_eq!(b.records::<Rec>().unwrap(), recs);
    assert!(matches!(
        b.records::<[u8; 12]>(),
        Err(Error::RecordSize {
            elbyte: 16,
            record_size: 12
        })
    ));
    assert_eq!(b.records::<[u8; 16]>().unwrap().len(), 6);
    assert!(matches!(b.to_vec::<f64>(), Err(Error::TypeMismatch { .. })));
    // Zero-copy over a memory map: ndims = 2, so the data starts at 64 (16-aligned).
    let m = MappedRawArray::open(&path).unwrap();
    assert_eq!(m.records::<Rec>().unwrap(), recs.as_slice());
    // Changing the byte order of records is refused: only the caller knows the fields.
    assert!(a
        .to_bytes(&WriteOptions::with_byte_order(ByteOrder::Big))
        .is_err());
}

/// Synced (the default) and relaxed saves alike: a failed save leaves the old file and no
/// temporary; a successful one replaces it.
#[test]
fn atomic_save_replaces_and_never_truncates() {
    let dir = asdf_testkit::TempDir::new("ra-atomic");
    for (i, durability) in [Durability::Synced, Durability::Relaxed]
        .into_iter()
        .enumerate()
    {
        let path = dir.join(&format!("a{i}.ra"));
        let opts = WriteOptions {
            durability,
            ..Default::default()
        };
        rawarray::save(&path, &[1u8, 2, 3], &[3], &opts).unwrap();
        let before = std::fs::read(&path).unwrap();
        // A failing write (dims do not match the data) leaves the old file and no temporary.
        let err = rawarray::save(&path, &[1u8, 2, 3], &[4], &opts);
        assert!(err.is_err());
        // LEB128 on floats fails after the temp file was created: still no damage.
        let leb = WriteOptions {
            encoding: WriteEncoding::Leb128,
            ..opts
        };
        let err = rawarray::save(&path, &[1.0f32], &[1], &leb);
        assert!(matches!(err, Err(Error::InvalidArgument(_))));
        assert_eq!(std::fs::read(&path).unwrap(), before);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), i + 1, "{names:?}");
        rawarray::save(&path, &[9u16], &[1], &opts).unwrap();
        assert_eq!(rawarray::open_vec::<u16, _>(&path).unwrap().0, [9]);
        let arr = Array2::<f32>::ones((2, 2));
        rawarray::save_array(&path, &arr, &opts).unwrap();
        assert_eq!(
            rawarray::open_array::<f32, _>(&path, &ReadOptions::default())
                .unwrap()
                .0,
            arr.into_dyn()
        );
    }
}

#[test]
fn header_errors_name_field_and_offset() {
    let good = rawarray::to_bytes(&[1.0f64; 6], &[2, 3], &Default::default()).unwrap();
    let set = |off: usize, v: u64| {
        let mut b = good.clone();
        b[off..off + 8].copy_from_slice(&v.to_le_bytes());
        b
    };
    let read = |b: &[u8]| RawArray::from_slice(b, &ReadOptions::default());
    assert!(matches!(
        read(&set(8, 16)),
        Err(Error::UnknownFlags {
            flags: 16,
            unknown: 16
        })
    ));
    assert!(matches!(
        read(&set(32, 40)),
        Err(Error::InvalidField {
            field: "size",
            offset: 32,
            value: 40,
            ..
        })
    ));
    assert!(matches!(
        read(&set(48, u64::MAX)),
        Err(Error::SizeOverflow { .. })
    ));
    assert!(matches!(
        read(&set(48, 1 << 40)),
        Err(Error::InvalidField { field: "size", .. })
    ));
    // Truncated data: says where the data starts, how much was expected and found.
    match read(&good[..80]) {
        Err(Error::TruncatedData {
            offset: 64,
            expected: 48,
            available: 16,
        }) => {}
        other => panic!("{other:?}"),
    }
    match RawArray::from_reader(&good[..80], &ReadOptions::default()) {
        Err(Error::TruncatedData {
            offset: 64,
            expected: 48,
            available: 16,
        }) => {}
        other => panic!("{other:?}"),
    }
    // A huge size claim with LZ4: refused before allocating.
    let mut lz = set(8, 2);
    lz[32..40].copy_from_slice(&1u64.to_le_bytes());
    lz[48..56].copy_from_slice(&(1u64 << 30).to_le_bytes());
    assert!(matches!(
        read(&lz),
        Err(Error::InvalidField { field: "size", .. })
    ));
    // Ceiling on the decoded size.
    let o = ReadOptions {
        limits: rawarray::Limits {
            max_data_bytes: 40,
            ..Default::default()
        },
        ..Default::default()
    };
    assert!(matches!(
        RawArray::from_slice(&good, &o),
        Err(Error::LimitExceeded {
            value: 48,
            limit: 40,
            ..
        })
    ));
    // Error messages say what is wrong.
    let msg = read(&set(32, 40)).unwrap_err().to_string();
    assert!(
        msg.contains("`size`") && msg.contains("byte 32") && msg.contains("48"),
        "{msg}"
    );
    // Forcing LEB128 on floats is refused.
    let o = ReadOptions {
        compressed: CompressedMeaning::Leb128,
        ..Default::default()
    };
    assert!(matches!(
        RawArray::from_slice(&set(8, 2), &o),
        Err(Error::InvalidField { field: "flags", .. })
    ));
}

#[test]
fn header_new_and_trailing_metadata_streaming() {
    let h = Header::new(ElementKind::U16, &[2, 2]).unwrap();
    let mut bytes = h.to_bytes();
    bytes.extend_from_slice(&[1, 0, 2, 0, 3, 0, 4, 0]);
    bytes.extend_from_slice(b"volatile");
    let a = RawArray::from_reader(Trickle(&bytes), &ReadOptions::default()).unwrap();
    assert_eq!(a.to_vec::<u16>().unwrap(), [1, 2, 3, 4]);
    assert_eq!(a.trailer(), b"volatile");
    // A trailer longer than the limit is cut, with a warning, never an error.
    let o = ReadOptions {
        max_trailer_bytes: 3,
        ..Default::default()
    };
    let a = RawArray::from_reader(&bytes[..], &o).unwrap();
    assert_eq!(a.trailer(), b"vol");
    assert_eq!(a.warnings(), [Warning::TrailerTruncated { kept: 3 }]);
}

/// Every prefix and many single-byte mutations of real files: no panic, and the three readers
/// (stream, slice, typed) agree on success or failure.
#[test]
fn hostile_mutations_never_panic() {
    let files = [
        "upstream/ra-head/test.ra",
        "upstream/ra-head/mnist_8_z.ra",
        "generated/synthesized/jl_leb128_int16_3x2.ra",
        "generated/synthesized/jl_bitarray_3x5.ra",
        "generated/by-reference/py_bigendian_f32_2x3.ra",
        "upstream/ra-history/julia_test_premagic_2015-10-19.ra",
    ];
    let o = ReadOptions::default();
    for rel in files {
        let orig = std::fs::read(asdf_testkit::corpus_file(&format!("rawarray/{rel}"))).unwrap();
        for cut in 0..orig.len() {
            let _ = RawArray::from_slice(&orig[..cut], &o);
            let _ = RawArray::from_reader(&orig[..cut], &o);
            let _ = rawarray::view_slice::<u8>(&orig[..cut]);
        }
        let header_end = 48 + 8 * 3;
        for pos in 0..orig.len().min(header_end + 16) {
            for v in [0u8, 1, 2, 4, 7, 0x80, 0xff] {
                let mut b = orig.clone();
                b[pos] = v;
                let s = RawArray::from_slice(&b, &o);
                let r = RawArray::from_reader(&b[..], &o);
                assert_eq!(s.is_ok(), r.is_ok(), "{rel} byte {pos} = {v}");
                if let (Ok(s), Ok(r)) = (&s, &r) {
                    assert_eq!(s, r);
                }
                let _ = rawarray::view_slice::<f32>(&b);
                let _ = rawarray::read_vec::<i16, _>(&b[..], &o);
            }
        }
        // Whole-word extremes in every header field.
        for field in 0..8 {
            for v in [0u64, 1, 255, 1 << 32, u64::MAX / 2, u64::MAX] {
                let mut b = orig.clone();
                if b.len() >= field * 8 + 8 {
                    b[field * 8..field * 8 + 8].copy_from_slice(&v.to_le_bytes());
                }
                let _ = RawArray::from_slice(&b, &o);
                let _ = RawArray::from_reader(&b[..], &o);
            }
        }
    }
}

#[test]
fn mmap_of_bytes_written_here() {
    let dir = asdf_testkit::TempDir::new("ra-mmap");
    let path = dir.join("m.ra");
    let a = Array2::from_shape_fn((5, 7), |(i, j)| Complex::new(i as f64, j as f64));
    rawarray::save_array(&path, &a, &Default::default()).unwrap();
    let m = MappedRawArray::open(&path).unwrap();
    assert_eq!(m.dims(), [5, 7]);
    assert_eq!(m.kind().unwrap(), ElementKind::C128);
    let v = m.view::<Complex<f64>>().unwrap();
    assert_eq!(v, a.into_dyn());
    assert_eq!(m.as_slice::<Complex<f64>>().unwrap().len(), 35);
    assert_eq!(
        m.decode().unwrap().to_vec::<Complex<f64>>().unwrap(),
        v.t().iter().copied().collect::<Vec<_>>()
    );
}

#[test]
fn big_endian_host_files_read() {
    // A native writer (C, Julia, Matlab) on a big-endian host: every header field big-endian
    // ("yarrawar" magic), flag bit 0 set, big-endian data.
    let mut b = rawarray::MAGIC.to_be_bytes().to_vec();
    for v in [1u64, 3, 4, 12, 2, 3, 1] {
        b.extend_from_slice(&v.to_be_bytes());
    }
    for x in [1.5f32, -2.0, 1e30] {
        b.extend_from_slice(&x.to_be_bytes());
    }
    b.extend_from_slice(b"meta");
    assert_eq!(&b[..8], b"yarrawar");
    let a = RawArray::from_slice(&b, &ReadOptions::default()).unwrap();
    assert_eq!(a.info().layout, rawarray::Layout::BigEndianHeader);
    assert_eq!(a.dims(), [3, 1]);
    assert_eq!(a.to_vec::<f32>().unwrap(), [1.5, -2.0, 1e30]);
    assert_eq!(a.trailer(), b"meta");
    let (arr, _) = rawarray::read_array::<f32, _>(&b[..], &ReadOptions::default()).unwrap();
    assert_eq!(arr.shape(), [3, 1]);
    // Rewritten in the standard layout (little-endian header), data order kept.
    let out = a.to_bytes(&Default::default()).unwrap();
    assert_eq!(&out[..8], b"rawarray");
    let again = RawArray::from_slice(&out, &ReadOptions::default()).unwrap();
    assert_eq!(again.to_vec::<f32>().unwrap(), [1.5, -2.0, 1e30]);
    assert_eq!(again.data_byte_order(), ByteOrder::Big);
}

#[test]
fn julia_leb128_bool_and_forced_meanings() {
    let v = [true, false, true];
    let bytes = rawarray::to_bytes(
        &v,
        &[3],
        &WriteOptions::with_encoding(WriteEncoding::Leb128),
    )
    .unwrap();
    assert_eq!(&bytes[56..], [1, 0, 1]);
    let a = RawArray::from_slice(&bytes, &ReadOptions::default()).unwrap();
    assert_eq!(a.info().encoding, Encoding::Leb128);
    assert_eq!(a.to_vec::<bool>().unwrap(), v);
    // Forcing LZ4 on LEB128 data is a typed corruption error, not a panic.
    let o = ReadOptions {
        compressed: CompressedMeaning::Lz4Block,
        ..Default::default()
    };
    assert!(matches!(
        RawArray::from_slice(&bytes, &o),
        Err(Error::CorruptData {
            encoding: "LZ4 block",
            ..
        })
    ));
    // Neither meaning fits: a clear error naming both.
    let mut bad = rawarray::to_bytes(&[1u16, 2], &[2], &Default::default()).unwrap();
    bad[8] = 2;
    bad[56..60].copy_from_slice(&[0x80, 0x80, 0x80, 0x80]);
    let err = RawArray::from_slice(&bad, &ReadOptions::default()).unwrap_err();
    assert!(err.to_string().contains("neither an LZ4 block"), "{err}");
}
