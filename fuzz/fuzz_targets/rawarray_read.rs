//! RawArray: header and data from a byte slice, then the data as the element type it declares.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rawarray::{RawArray, ReadOptions};

fuzz_target!(|data: &[u8]| {
    let mut opts = ReadOptions::default();
    opts.limits.max_data_bytes = asdf_fuzz::FUZZ_CEILING;
    let Ok(ra) = RawArray::from_slice(data, &opts) else {
        return;
    };
    let _ = ra.header();
    let _ = ra.data_byte_order();
    let _ = ra.to_vec::<u8>();
    let _ = ra.to_vec::<f64>();
    let _ = ra.to_vec::<i32>();
    let _ = ra.to_vec::<bool>();
    let _ = ra.to_array::<f32>();
    let _ = ra.to_array::<num_complex::Complex<f32>>();
});
