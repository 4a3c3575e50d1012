//! Regions of arrays (one range per dimension): checking one against a shape and slicing it
//! out, the same for every kind of array and every reader.

use std::ops::Range;

use ndarray::{ArrayD, ArrayViewD};

use crate::element::Element;
use crate::error::{NdError, Result};
use crate::meta::{check_limit, ReadLimits};

/// Checks that `region` has one range per dimension of `shape`, each inside it.
///
/// ```
/// use asdf_ndarray::check_region;
/// assert!(check_region(&[4, 5], &[1..3, 0..5]).is_ok());
/// assert!(check_region(&[4, 5], &[1..3]).is_err());
/// assert!(check_region(&[4, 5], &[0..5, 0..1]).is_err());
/// ```
pub fn check_region(shape: &[usize], region: &[Range<usize>]) -> Result<()> {
    let inside = region.len() == shape.len()
        && region
            .iter()
            .zip(shape)
            .all(|(r, &d)| r.start <= r.end && r.end <= d);
    if inside {
        Ok(())
    } else {
        Err(NdError::Usage(format!(
            "region {region:?} is not inside shape {shape:?}"
        )))
    }
}

/// The sub-array `region` of `a`, copied, after [`check_region`].
///
/// ```
/// use asdf_ndarray::slice_region;
/// let a = ndarray::Array2::from_shape_fn((3, 4), |(i, j)| i * 10 + j).into_dyn();
/// let part = slice_region(a.view(), &[1..3, 2..3]).unwrap();
/// assert_eq!(part.into_raw_vec_and_offset().0, vec![12, 22]);
/// ```
pub fn slice_region<T: Clone>(a: ArrayViewD<'_, T>, region: &[Range<usize>]) -> Result<ArrayD<T>> {
    check_region(a.shape(), region)?;
    Ok(
        a.slice_each_axis(|ax| ndarray::Slice::from(region[ax.axis.index()].clone()))
            .to_owned(),
    )
}

/// The shape of `region` (checked against `shape`) and its size in bytes of `T`, refused beyond
/// [`ReadLimits::max_expanded_bytes`] (`what` names it).
pub(crate) fn region_shape<T: Element>(
    shape: &[usize],
    region: &[Range<usize>],
    limits: &ReadLimits,
    what: &str,
) -> Result<(Vec<usize>, u64)> {
    check_region(shape, region)?;
    let out_shape: Vec<usize> = region.iter().map(|r| r.end - r.start).collect();
    let bytes = crate::datatype::checked_product(&out_shape)
        .and_then(|n| (n as u64).checked_mul(T::SCALAR.size() as u64));
    let bytes = check_limit(what, bytes, 0, limits)?;
    Ok((out_shape, bytes))
}
