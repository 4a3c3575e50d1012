//! `ndarray` integration: read into `ArrayD`, write any `ArrayBase`, zero-copy `ArrayView`s.
//!
//! RawArray is column-major: `dims[0]` varies fastest. Arrays read here have shape `dims` in
//! Fortran layout, so `a[[i, j]]` is the element Julia, Matlab and C users call `a[i, j]`; arrays
//! written here are stored in their column-major order.

use std::io::{Read, Write};
use std::path::Path;

use ndarray::{ArrayBase, ArrayD, ArrayView, ArrayViewD, Data, Dimension, IxDyn, ShapeBuilder};

use crate::element::Element;
use crate::error::{Error, Result};
use crate::kind::ByteOrder;
use crate::read::{read_vec_sized, FileInfo, ReadOptions};
use crate::write::{save_atomic, write_core, WriteOptions};

fn shape_of(dims: &[u64]) -> Result<Vec<usize>> {
    dims.iter()
        .map(|&d| {
            usize::try_from(d).map_err(|_| Error::SizeOverflow {
                what: "a dimension",
            })
        })
        .collect()
}

pub(crate) fn vec_to_array<T>(v: Vec<T>, dims: &[u64]) -> Result<ArrayD<T>> {
    let shape = shape_of(dims)?;
    ArrayD::from_shape_vec(IxDyn(&shape).f(), v)
        .map_err(|e| Error::InvalidArgument(format!("dims {dims:?} do not fit the data: {e}")))
}

impl crate::RawArray {
    /// The elements as an `ndarray` array with shape `dims` in column-major (Fortran) layout,
    /// the shape Julia, Matlab and C users see.
    pub fn to_array<T: Element>(&self) -> Result<ndarray::ArrayD<T>> {
        vec_to_array(self.to_vec::<T>()?, self.dims())
    }
}

/// Reads a file from `reader` into an array of shape `dims` (Fortran layout).
///
/// ```
/// use ndarray::array;
/// let a = array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
/// let mut bytes = Vec::new();
/// rawarray::write_array(&mut bytes, &a, &Default::default()).unwrap();
/// let (b, info) = rawarray::read_array::<f32, _>(&bytes[..], &Default::default()).unwrap();
/// assert_eq!(info.dims(), [2, 3]);
/// assert_eq!(b, a.into_dyn());
/// ```
pub fn read_array<T: Element, R: Read>(
    reader: R,
    opts: &ReadOptions,
) -> Result<(ArrayD<T>, FileInfo)> {
    let (v, info) = read_vec_sized::<T, R>(reader, opts, None)?;
    Ok((vec_to_array(v, info.dims())?, info))
}

/// Reads the file at `path` into an array (see [`read_array`]).
pub fn open_array<T: Element, P: AsRef<Path>>(
    path: P,
    opts: &ReadOptions,
) -> Result<(ArrayD<T>, FileInfo)> {
    let f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    let (v, info) = read_vec_sized::<T, _>(
        std::io::BufReader::with_capacity(1 << 16, f),
        opts,
        Some(len),
    )?;
    Ok((vec_to_array(v, info.dims())?, info))
}

/// Writes any array with `dims` = its shape, data in column-major order.
///
/// An array that is already in Fortran layout (e.g. one read by this crate) goes out without a
/// copy when no byte swapping or encoding is asked for; any other layout is streamed in chunks.
pub fn write_array<T, S, D, W>(w: W, array: &ArrayBase<S, D>, opts: &WriteOptions) -> Result<()>
where
    T: Element,
    S: Data<Elem = T>,
    D: Dimension,
    W: Write,
{
    let dims: Vec<u64> = array.shape().iter().map(|&d| d as u64).collect();
    let reversed = array.view().reversed_axes();
    let contiguous = reversed.as_slice();
    write_core(
        w,
        T::KIND,
        &dims,
        ByteOrder::NATIVE,
        opts,
        &[],
        &mut |w: &mut dyn Write, order| {
            let mut w = w;
            if let Some(s) = contiguous {
                return T::write_slice(&mut w, s, order);
            }
            // Logical order of the reversed view = column-major order of the array.
            let mut buf: Vec<T> = Vec::with_capacity(1 << 14);
            for x in reversed.iter() {
                buf.push(*x);
                if buf.len() == buf.capacity() {
                    T::write_slice(&mut w, &buf, order)?;
                    buf.clear();
                }
            }
            T::write_slice(&mut w, &buf, order)
        },
    )
}

/// Writes an array to `path` atomically (temporary file, fsync, rename).
pub fn save_array<T, S, D, P>(path: P, array: &ArrayBase<S, D>, opts: &WriteOptions) -> Result<()>
where
    T: Element,
    S: Data<Elem = T>,
    D: Dimension,
    P: AsRef<Path>,
{
    save_atomic(path.as_ref(), opts, |w| write_array(w, array, opts))
}

/// A zero-copy view of the data of a complete in-memory file (for instance a memory map).
///
/// Fails with a [`crate::ViewError`] when the data is misaligned, non-native-endian or encoded.
///
/// ```
/// let bytes = rawarray::to_bytes(&[1u16, 2, 3, 4, 5, 6], &[2, 3], &Default::default()).unwrap();
/// let v = rawarray::view_array::<u16>(&bytes).unwrap();
/// assert_eq!(v.shape(), [2, 3]);
/// assert_eq!(v[[1, 0]], 2);
/// assert_eq!(v[[0, 2]], 5);
/// ```
pub fn view_array<T: Element>(bytes: &[u8]) -> Result<ArrayViewD<'_, T>> {
    view_array_with(bytes, &ReadOptions::default())
}

pub(crate) fn view_array_with<'a, T: Element>(
    bytes: &'a [u8],
    opts: &ReadOptions,
) -> Result<ArrayViewD<'a, T>> {
    let (s, loc) = crate::view::view_slice_with::<T>(bytes, opts)?;
    let shape = shape_of(&loc.parsed.header.dims)?;
    ArrayView::from_shape(IxDyn(&shape).f(), s)
        .map_err(|e| Error::InvalidArgument(format!("dims do not fit the data: {e}")))
}

fn into_dim<A, D: Dimension>(a: A, found: usize) -> Result<A::Output>
where
    A: IntoDimensionality<D>,
{
    a.into_dim().map_err(|_| {
        Error::InvalidArgument(format!(
            "the file has {found} dimensions, the array type has {:?}",
            D::NDIM
        ))
    })
}

trait IntoDimensionality<D> {
    type Output;
    fn into_dim(self) -> std::result::Result<Self::Output, ndarray::ShapeError>;
}

impl<T, D: Dimension> IntoDimensionality<D> for ArrayD<T> {
    type Output = ndarray::Array<T, D>;
    fn into_dim(self) -> std::result::Result<Self::Output, ndarray::ShapeError> {
        self.into_dimensionality::<D>()
    }
}

impl<'a, T, D: Dimension> IntoDimensionality<D> for ArrayViewD<'a, T> {
    type Output = ArrayView<'a, T, D>;
    fn into_dim(self) -> std::result::Result<Self::Output, ndarray::ShapeError> {
        self.into_dimensionality::<D>()
    }
}

/// Extension trait: `Array::<T, D>::read_ra(reader)` (ndarray-npy style).
///
/// ```
/// use ndarray::{array, Array2};
/// use rawarray::{ReadRaExt, WriteRaExt};
/// let a = array![[1i32, 2], [3, 4]];
/// let mut bytes = Vec::new();
/// a.write_ra(&mut bytes).unwrap();
/// let b = Array2::<i32>::read_ra(&bytes[..]).unwrap();
/// assert_eq!(a, b);
/// ```
pub trait ReadRaExt: Sized {
    /// Reads a file with default [`ReadOptions`]; the file's ndims must match `D`.
    fn read_ra<R: Read>(reader: R) -> Result<Self>;
}

impl<T: Element, D: Dimension> ReadRaExt for ndarray::Array<T, D> {
    fn read_ra<R: Read>(reader: R) -> Result<Self> {
        let (a, info) = read_array::<T, R>(reader, &ReadOptions::default())?;
        into_dim::<_, D>(a, info.dims().len())
    }
}

/// Extension trait: `array.write_ra(writer)`.
pub trait WriteRaExt {
    /// Writes the array with default [`WriteOptions`].
    fn write_ra<W: Write>(&self, writer: W) -> Result<()>;
}

impl<T: Element, S: Data<Elem = T>, D: Dimension> WriteRaExt for ArrayBase<S, D> {
    fn write_ra<W: Write>(&self, writer: W) -> Result<()> {
        write_array(writer, self, &WriteOptions::default())
    }
}

/// Extension trait: `ArrayView::<T, D>::view_ra(&bytes)`, zero-copy.
pub trait ViewRaExt<'a>: Sized {
    /// Views the data of the complete file in `bytes`; the file's ndims must match `D`.
    fn view_ra(bytes: &'a [u8]) -> Result<Self>;
}

impl<'a, T: Element, D: Dimension> ViewRaExt<'a> for ArrayView<'a, T, D> {
    fn view_ra(bytes: &'a [u8]) -> Result<Self> {
        let v = view_array::<T>(bytes)?;
        let n = v.ndim();
        into_dim::<_, D>(v, n)
    }
}
