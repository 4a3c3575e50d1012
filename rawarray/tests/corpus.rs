//! Every file of the shared corpus (`rawarray/` in `asdf_testkit::corpus_dir()`) reads to the
//! values documented in its PROVENANCE.md, and the corrupt ones give the documented error.

use asdf_testkit::corpus_file;
use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn};
use num_complex::{Complex32, Complex64};
use rawarray::{
    ByteOrder, ElementKind, Encoding, Error, Layout, MappedRawArray, RawArray, ReadOptions, Warning,
};

fn open(rel: &str) -> RawArray {
    RawArray::open(
        corpus_file(&format!("rawarray/{rel}")),
        &ReadOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn array<T: rawarray::Element>(rel: &str) -> ArrayD<T> {
    rawarray::open_array::<T, _>(
        corpus_file(&format!("rawarray/{rel}")),
        &ReadOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{rel}: {e}"))
    .0
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

fn test_ra_values() -> Vec<Complex32> {
    (0..12)
        .map(|k| Complex32::new(k as f32, -1.0 / k as f32))
        .collect()
}

#[test]
fn test_ra_complex64_3x4() {
    let a = open("upstream/ra-head/test.ra");
    let h = a.header();
    assert_eq!((h.flags, h.eltype, h.elbyte, h.size), (0, 4, 8, 96));
    assert_eq!(a.dims(), [3, 4]);
    assert_eq!(a.kind(), ElementKind::C64);
    assert_eq!(a.info().layout, Layout::Standard);
    assert!(a.trailer().is_empty() && a.warnings().is_empty());
    let v = a.to_vec::<Complex32>().unwrap();
    assert_eq!(v, test_ra_values());
    assert_eq!(v[0].im, f32::NEG_INFINITY);
    let arr = array::<Complex32>("upstream/ra-head/test.ra");
    assert_eq!(arr.shape(), [3, 4]);
    assert_eq!(arr[[1, 0]], Complex32::new(1.0, -1.0));
    assert_eq!(arr[[0, 1]].re, 3.0);
    assert!(close(arr[[0, 1]].im as f64, -0.3333, 1e-4));
    assert!(close(arr[[2, 3]].im as f64, -0.0909, 1e-4));
    assert_eq!(arr[[2, 3]].re, 11.0);
}

#[test]
fn test_ra_rewrites_byte_identical() {
    // The cross-implementation MD5 check of the RA READMEs: reading and writing test.ra, or
    // writing its values from scratch, reproduces the file byte for byte.
    let path = corpus_file("rawarray/upstream/ra-head/test.ra");
    let original = std::fs::read(&path).unwrap();
    let a = RawArray::from_slice(&original, &ReadOptions::default()).unwrap();
    assert_eq!(a.to_bytes(&Default::default()).unwrap(), original);
    let fresh = rawarray::to_bytes(&test_ra_values(), &[3, 4], &Default::default()).unwrap();
    assert_eq!(fresh, original);
    let arr = array::<Complex32>("upstream/ra-head/test.ra");
    let mut out = Vec::new();
    rawarray::write_array(&mut out, &arr, &Default::default()).unwrap();
    assert_eq!(out, original);
}

#[test]
fn random_upstream_samples() {
    let c = array::<Complex32>("upstream/ra-head/randc32.ra");
    assert_eq!(c.shape(), [4, 4]);
    assert!(close(c[[0, 0]].re as f64, 0.3125, 1e-4) && close(c[[0, 0]].im as f64, 0.0152, 1e-4));
    assert!(close(c[[1, 0]].re as f64, 0.5418, 1e-4) && close(c[[1, 0]].im as f64, 0.9512, 1e-4));
    let c = array::<Complex64>("upstream/ra-head/randc64.ra");
    assert!(close(c[[0, 0]].re, 0.0555, 1e-4) && close(c[[0, 0]].im, 0.6853, 1e-4));
    assert!(close(c[[1, 0]].re, 0.6919, 1e-4) && close(c[[1, 0]].im, 0.5415, 1e-4));
    let h = array::<f16>("upstream/ra-head/randf16.ra");
    assert!(close(h[[0, 0]].to_f64(), 0.6816, 1e-3));
    assert!(close(h[[1, 0]].to_f64(), 0.9707, 1e-3));
    assert!(close(h[[0, 1]].to_f64(), 0.3447, 1e-3));
    let f = array::<f32>("upstream/ra-head/randf32.ra");
    assert!(close(f[[0, 0]] as f64, 0.3195, 1e-4));
    assert!(close(f[[1, 0]] as f64, 0.2541, 1e-4));
    assert!(close(f[[3, 3]] as f64, 0.2779, 1e-4));
    let d = array::<f64>("upstream/ra-head/randf64.ra");
    assert!(close(d[[0, 0]], 0.96589, 1e-5));
    assert!(close(d[[2, 0]], 0.017102, 1e-6));
    let i = array::<i8>("upstream/ra-head/randi8.ra");
    assert_eq!(
        i.index_axis(ndarray::Axis(1), 0)
            .iter()
            .copied()
            .collect::<Vec<_>>(),
        [66, -120, -125, -90]
    );
    let i = array::<i32>("upstream/ra-head/randi32.ra");
    assert_eq!((i[[0, 0]], i[[1, 0]]), (-1315734187, 1234445246));
    let u = array::<u8>("upstream/ra-head/randu8.ra");
    assert_eq!(
        u.index_axis(ndarray::Axis(1), 0)
            .iter()
            .copied()
            .collect::<Vec<_>>(),
        [164, 82, 255, 202]
    );
    let u = array::<u32>("upstream/ra-head/randu32.ra");
    assert_eq!((u[[0, 0]], u[[1, 0]]), (3321654682, 1048185195));
    let r = array::<i64>("upstream/ra-head/rand100.ra");
    assert_eq!(r.shape(), [8, 8]);
    assert_eq!(
        r.index_axis(ndarray::Axis(1), 0)
            .iter()
            .copied()
            .collect::<Vec<_>>(),
        [50, 39, 23, 55, 59, 9, 98, 63]
    );
    assert_eq!(r.sum(), 3330);
    assert!(r.iter().all(|&x| (1..=99).contains(&x)));
}

#[test]
fn shepp_logan_read_and_mmap_view() {
    let rel = "upstream/ra-head/shepplogan.ra";
    let a = array::<f64>(rel);
    assert_eq!(a.shape(), [256, 256]);
    assert!(close(a[[128, 128]], 0.2, 1e-12));
    assert_eq!(a.iter().cloned().fold(f64::MIN, f64::max), 1.0);
    assert!(close(a.sum(), 8044.0045, 1e-3));
    // Zero-copy view over a memory map: same values, no copy (the pointer is inside the map).
    let m = MappedRawArray::open(corpus_file(&format!("rawarray/{rel}"))).unwrap();
    let v = m.view::<f64>().unwrap();
    assert_eq!(v, a);
    let base = m.as_bytes().as_ptr() as usize;
    assert_eq!(v.as_ptr() as usize, base + 64);
    assert!(m.trailer().unwrap().is_empty());
    // Asking for the wrong type is a typed error.
    assert!(matches!(m.view::<f32>(), Err(Error::TypeMismatch { .. })));
}

#[test]
fn png2ra_images_and_lz4_twins() {
    for (plain, z, dims, sum, zsize) in [
        (
            "mnist_8.ra",
            "mnist_8_z.ra",
            [28u64, 28, 3],
            146643u64,
            486u64,
        ),
        (
            "cifar_airplane.ra",
            "cifar_airplane_z.ra",
            [32, 32, 3],
            188208,
            2579,
        ),
    ] {
        let p = open(&format!("upstream/ra-head/{plain}"));
        let c = open(&format!("upstream/ra-head/{z}"));
        assert_eq!(p.dims(), dims);
        assert_eq!(c.dims(), dims);
        assert_eq!(c.header().flags, 2);
        assert_eq!(c.header().size, zsize);
        assert_eq!(c.info().encoding, Encoding::Lz4Block);
        assert_eq!(p.info().encoding, Encoding::Raw);
        assert!(c.warnings().is_empty());
        assert_eq!(c.data_bytes(), p.data_bytes());
        let total: u64 = p.to_vec::<u8>().unwrap().iter().map(|&b| b as u64).sum();
        assert_eq!(total, sum);
        // The view refuses compressed data with a clear error; decode() works.
        let m =
            MappedRawArray::open(corpus_file(&format!("rawarray/upstream/ra-head/{z}"))).unwrap();
        assert!(matches!(
            m.view::<u8>(),
            Err(Error::View(rawarray::ViewError::Encoded(_)))
        ));
        assert_eq!(m.decode().unwrap().data_bytes(), p.data_bytes());
        // Forcing the other meaning of flag bit 1 fails cleanly.
        let opts = ReadOptions {
            compressed: rawarray::CompressedMeaning::Leb128,
            ..ReadOptions::default()
        };
        let forced = RawArray::open(
            corpus_file(&format!("rawarray/upstream/ra-head/{z}")),
            &opts,
        );
        assert!(forced.is_err() || forced.unwrap().data_bytes() != p.data_bytes());
    }
}

#[test]
fn history_files() {
    let a = open("upstream/ra-history/julia_test_premagic_2015-10-19.ra");
    assert_eq!(a.info().layout, Layout::PreMagic);
    assert_eq!(a.info().header_len, 56);
    assert_eq!(a.warnings(), [Warning::HistoricalLayout(Layout::PreMagic)]);
    assert_eq!(a.dims(), [3, 4]);
    assert_eq!(a.to_vec::<Complex32>().unwrap(), test_ra_values());
    let strict = ReadOptions {
        allow_historical: false,
        ..ReadOptions::default()
    };
    assert!(matches!(
        RawArray::open(
            corpus_file("rawarray/upstream/ra-history/julia_test_premagic_2015-10-19.ra"),
            &strict
        ),
        Err(Error::BadMagic {
            found: [0, 0, 0, 0, 0, 0, 0, 0]
        })
    ));

    let i = array::<i64>("upstream/ra-history/randi64_2017-02-14.ra");
    assert_eq!(i.shape(), [8, 8]);
    assert_eq!(
        (i[[0, 0]], i[[1, 0]]),
        (6329884259481380923, 2503984791328459442)
    );
    let f = array::<f64>("upstream/ra-history/randflt_2017-02-14.ra");
    assert_eq!(f[[0, 0]], 0.12105663254858645);
}

#[test]
fn python_reference_files() {
    // Big-endian data under a little-endian header: swapped on read.
    let a = open("generated/by-reference/py_bigendian_f32_2x3.ra");
    assert_eq!(a.header().flags, 1);
    assert_eq!(a.data_byte_order(), ByteOrder::Big);
    assert_eq!(a.to_vec::<f32>().unwrap(), [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    let arr = array::<f32>("generated/by-reference/py_bigendian_f32_2x3.ra");
    assert_eq!(
        arr,
        ndarray::array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]].into_dyn()
    );
    // ... but cannot be viewed in place on this (little-endian) machine.
    let m = MappedRawArray::open(corpus_file(
        "rawarray/generated/by-reference/py_bigendian_f32_2x3.ra",
    ))
    .unwrap();
    assert!(matches!(
        m.view::<f32>(),
        Err(Error::View(rawarray::ViewError::NonNativeEndian))
    ));

    let s = array::<f64>("generated/by-reference/py_scalar_f64_0d.ra");
    assert_eq!(s.ndim(), 0);
    assert_eq!(s[IxDyn(&[])], 3.5);

    let b = open("generated/by-reference/py_bool_2x3_user.ra");
    assert_eq!(b.kind(), ElementKind::User(1));
    assert_eq!(b.data_bytes(), [1, 0, 0, 1, 1, 1]);
    let bools = b.to_array::<bool>().unwrap();
    assert_eq!(
        bools,
        ndarray::array![[true, false, true], [false, true, true]].into_dyn()
    );

    let i = array::<i16>("generated/by-reference/py_int16_2x3.ra");
    assert_eq!(i, ndarray::array![[1i16, 2, 3], [4, 5, 6]].into_dyn());
}

#[test]
fn rust_crate_reference_files() {
    let b = open("generated/by-reference/rust_bf16_4.ra");
    assert_eq!(b.kind(), ElementKind::BF16);
    let v = b.to_vec::<bf16>().unwrap();
    assert_eq!(
        v.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        [0x3f80, 0x4000, 0x4040, 0x4080]
    );
    assert_eq!(
        v.iter().map(|x| x.to_f32()).collect::<Vec<_>>(),
        [1.0, 2.0, 3.0, 4.0]
    );
    let h = array::<f16>("generated/by-reference/rust_f16_4.ra");
    assert_eq!(
        h.iter().map(|x| x.to_f32()).collect::<Vec<_>>(),
        [1.0, 2.0, 3.0, 4.0]
    );
    let u = open("generated/by-reference/rust_u128_2.ra");
    assert_eq!(u.to_vec::<u128>().unwrap(), [1, u128::MAX]);
    // u128 needs 16-byte alignment; with ndims = 1 the data sits at offset 56, so a zero-copy
    // view is refused (aligned to 8 only) while the copying read works.
    let m = MappedRawArray::open(corpus_file(
        "rawarray/generated/by-reference/rust_u128_2.ra",
    ))
    .unwrap();
    if std::mem::align_of::<u128>() == 16 {
        assert!(matches!(
            m.as_slice::<u128>(),
            Err(Error::View(rawarray::ViewError::Misaligned {
                offset: 56,
                align: 16
            }))
        ));
    }
}

#[test]
fn rust_reshape_bug_file_is_a_clean_error() {
    // ndims says 1, two dims were written: dims = [2] and the data region is 16 bytes long
    // (the stray dim 2 plus the four u16), while size says 8. Documented negative vector.
    let path = corpus_file("rawarray/generated/by-reference/rust_reshape_bug_u16.ra");
    let r = RawArray::open(&path, &ReadOptions::default());
    match r {
        Err(Error::InvalidField {
            field: "size",
            offset: 32,
            value: 8,
            ..
        }) => {}
        other => panic!("expected a size error, got {other:?}"),
    }
    assert!(rawarray::open_vec::<u16, _>(&path).is_err());
    assert!(MappedRawArray::open(&path).is_err());
}

#[test]
fn julia_synthesized_files() {
    let a = open("generated/synthesized/jl_leb128_int16_3x2.ra");
    assert_eq!(a.info().encoding, Encoding::Leb128);
    assert_eq!(a.to_vec::<i16>().unwrap(), [0, -1, 1, -64, 64, -300]);
    assert!(a.trailer().is_empty() && a.warnings().is_empty());
    let arr = array::<i16>("generated/synthesized/jl_leb128_int16_3x2.ra");
    assert_eq!(arr.shape(), [3, 2]);
    assert_eq!(arr[[2, 1]], -300);

    let u = open("generated/synthesized/jl_leb128_uint32_4.ra");
    assert_eq!(u.info().encoding, Encoding::Leb128);
    assert_eq!(u.to_vec::<u32>().unwrap(), [0, 127, 128, 300000]);

    let b = open("generated/synthesized/jl_bitarray_3x5.ra");
    assert_eq!(b.info().encoding, Encoding::BitPacked);
    assert_eq!(b.kind(), ElementKind::Bool);
    let expect = [1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 1].map(|x| x == 1);
    assert_eq!(b.to_vec::<bool>().unwrap(), expect);
    assert_eq!(
        array::<bool>("generated/synthesized/jl_bitarray_3x5.ra").shape(),
        [3, 5]
    );

    let b = open("generated/synthesized/jl_bool_2x3.ra");
    assert_eq!(b.kind(), ElementKind::Bool);
    assert_eq!(b.header().elbyte, 1);
    let b = array::<bool>("generated/synthesized/jl_bool_2x3.ra");
    assert_eq!(
        b,
        ndarray::array![[true, false, true], [false, true, false]].into_dyn()
    );

    let m = open("generated/synthesized/matlab2015_badmagic_f64_2x3.ra");
    assert_eq!(m.info().layout, Layout::MatlabRoundedMagic);
    assert_eq!(
        m.warnings(),
        [Warning::HistoricalLayout(Layout::MatlabRoundedMagic)]
    );
    assert_eq!(m.to_vec::<f64>().unwrap(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!(m.dims(), [2, 3]);
    let strict = ReadOptions {
        allow_historical: false,
        ..ReadOptions::default()
    };
    let r = RawArray::open(
        corpus_file("rawarray/generated/synthesized/matlab2015_badmagic_f64_2x3.ra"),
        &strict,
    );
    assert!(matches!(
        r,
        Err(Error::BadMagic {
            found: [0x00, 0x60, 0x77, 0x61, 0x72, 0x72, 0x61, 0x79]
        })
    ));

    let t = open("generated/synthesized/test_with_trailing_metadata.ra");
    assert_eq!(t.to_vec::<Complex32>().unwrap(), test_ra_values());
    assert_eq!(t.trailer().len(), 52);
    assert!(t.warnings().is_empty());
    let mm = MappedRawArray::open(corpus_file(
        "rawarray/generated/synthesized/test_with_trailing_metadata.ra",
    ))
    .unwrap();
    assert_eq!(mm.trailer().unwrap(), t.trailer());
    assert_eq!(mm.view::<Complex32>().unwrap().len(), 12);
    // The trailer is written back out.
    let original = std::fs::read(corpus_file(
        "rawarray/generated/synthesized/test_with_trailing_metadata.ra",
    ))
    .unwrap();
    assert_eq!(t.to_bytes(&Default::default()).unwrap(), original);
}

/// Every `.ra` file in the corpus is covered by a test above, and each one either reads or
/// (only the documented corrupt file) fails with a typed error, through all three readers.
#[test]
fn every_corpus_file_is_accounted_for() {
    let corrupt = ["rust_reshape_bug_u16.ra"];
    let mut seen = 0;
    let mut stack = vec![corpus_file("rawarray")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().and_then(|x| x.to_str()) != Some("ra") {
                continue;
            }
            seen += 1;
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            let bytes = std::fs::read(&p).unwrap();
            let from_path = RawArray::open(&p, &ReadOptions::default());
            let from_stream = RawArray::from_reader(&bytes[..], &ReadOptions::default());
            let from_slice = RawArray::from_slice(&bytes, &ReadOptions::default());
            if corrupt.contains(&name.as_str()) {
                assert!(
                    from_path.is_err() && from_stream.is_err() && from_slice.is_err(),
                    "{name}"
                );
            } else {
                let a = from_path.unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(&a, &from_stream.unwrap(), "{name}");
                assert_eq!(&a, &from_slice.unwrap(), "{name}");
                // Round trip through our writer: same decoded data, dims and trailer.
                let again = RawArray::from_slice(
                    &a.to_bytes(&Default::default()).unwrap(),
                    &ReadOptions::default(),
                )
                .unwrap();
                assert_eq!(again.data_bytes(), a.data_bytes(), "{name}");
                assert_eq!(again.dims(), a.dims(), "{name}");
                assert_eq!(again.trailer(), a.trailer(), "{name}");
            }
        }
    }
    assert_eq!(seen, 33, "the corpus changed: update these tests");
}
