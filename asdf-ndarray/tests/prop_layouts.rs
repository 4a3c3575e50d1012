//! Random shape/offset/strides combinations against a naive element-address reference: every
//! read either errors (some element outside the block) or returns exactly the reference values,
//! copies and views alike. Never a panic.

use asdf_block::{BlockReader, BlockWriter, EncodeOptions, Label, ReadOptions, WriteOptions};
use asdf_ndarray::{ByteOrder, NdArrayMeta, ScalarType};
use proptest::prelude::*;

const LEN: usize = 256;

fn store() -> BlockReader<Vec<u8>> {
    let data: Vec<u8> = (0..LEN).map(|i| (i * 7 + 3) as u8).collect();
    let mut w = BlockWriter::new(
        Vec::new(),
        0,
        WriteOptions {
            align: 64,
            ..WriteOptions::default()
        },
    );
    w.write_data(&data, Label::NONE, &EncodeOptions::default())
        .unwrap();
    BlockReader::new(w.finish().unwrap(), 0, ReadOptions::default()).unwrap()
}

/// The reference: element addresses in C order, `None` if any is outside the block.
fn reference(
    shape: &[usize],
    strides: &[i64],
    offset: u64,
    order: ByteOrder,
    block: &[u8],
) -> Option<Vec<u16>> {
    let n: usize = shape.iter().product();
    let mut out = Vec::new();
    for k in 0..n {
        let mut rem = k;
        let mut addr = offset as i64;
        for d in (0..shape.len()).rev() {
            addr += (rem % shape[d]) as i64 * strides[d];
            rem /= shape[d];
        }
        if addr < 0 || addr as usize + 2 > block.len() {
            return None;
        }
        let b = [block[addr as usize], block[addr as usize + 1]];
        out.push(match order {
            ByteOrder::Little => u16::from_le_bytes(b),
            ByteOrder::Big => u16::from_be_bytes(b),
        });
    }
    Some(out)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]
    #[test]
    fn reads_match_the_reference(
        dims in prop::collection::vec((0usize..5, prop_oneof![-70i64..=-1, 1i64..=70]), 0..4),
        offset in 0u64..300,
        big in any::<bool>(),
        explicit in any::<bool>(),
    ) {
        let r = store();
        let block = r.data(0).unwrap().into_owned();
        let shape: Vec<usize> = dims.iter().map(|d| d.0).collect();
        let order = if big { ByteOrder::Big } else { ByteOrder::Little };
        let mut meta = NdArrayMeta::block(0, shape.clone(), ScalarType::UInt16.into(), order);
        meta.offset = offset;
        let strides: Vec<i64> = if explicit {
            dims.iter().map(|d| d.1).collect()
        } else {
            let mut s = vec![0i64; shape.len()];
            let mut acc = 2i64;
            for i in (0..shape.len()).rev() {
                s[i] = acc;
                acc *= shape[i].max(1) as i64;
            }
            s
        };
        if explicit {
            meta.strides = Some(strides.clone());
        }
        let want = reference(&shape, &strides, offset, order, &block);
        let got = meta.array::<u16>(&r);
        match (&want, &got) {
            (Some(w), Ok(a)) => {
                prop_assert_eq!(a.shape(), &shape[..]);
                prop_assert_eq!(&a.iter().copied().collect::<Vec<_>>(), w);
            }
            (None, Err(_)) => {}
            // Empty arrays need no bytes at all.
            (None, Ok(a)) => prop_assert!(a.is_empty() && shape.contains(&0)),
            (Some(w), Err(e)) => prop_assert!(false, "reference {:?} but error {}", w, e),
        }
        if let Ok(v) = meta.view::<u16>(&r) {
            let w = want.clone().unwrap_or_default();
            prop_assert_eq!(v.iter().copied().collect::<Vec<_>>(), w);
        }
    }
}
