//! Reading ndarray nodes: typed copies, zero-copy views, dynamic arrays, strings, records, masks.

use std::borrow::Cow;

use asdf_yaml::Node;
use ndarray::{ArrayD, ArrayViewD, IxDyn};

use crate::any::{decode_any, AnyArray};
use crate::datatype::{ByteOrder, Datatype, ScalarType};
use crate::element::Element;
use crate::error::{field_err, NdError, Result};
use crate::layout::{check_type, decode_vec, view, Layout};
use crate::meta::{check_limit, Mask, NdArrayMeta, ReadLimits, Source};
use crate::record::RecordArray;
use crate::store::BlockStore;
use crate::values::{encode_value, flatten, infer_datatype, infer_shape};

/// The located bytes of an array.
pub(crate) struct Raw<'s> {
    pub bytes: Cow<'s, [u8]>,
    pub layout: Layout,
    pub datatype: Datatype,
    pub order: ByteOrder,
    /// `null` items of inline data.
    pub nulls: Option<Vec<bool>>,
}

impl NdArrayMeta {
    pub(crate) fn raw<'s, S: BlockStore + ?Sized>(
        &self,
        store: &'s S,
        limits: &ReadLimits,
    ) -> Result<Raw<'s>> {
        match &self.source {
            Some(src) => {
                let datatype = self.need_datatype()?.clone();
                let itemsize = datatype.size()?;
                let bytes = match src {
                    Source::Block(i) => store.block(*i)?,
                    Source::External(u) => store.external(u)?,
                };
                let layout = Layout::resolve(self, itemsize, bytes.len(), limits)?;
                Ok(Raw {
                    bytes,
                    layout,
                    datatype,
                    order: self.byteorder,
                    nulls: None,
                })
            }
            None => self.inline_raw(limits),
        }
    }

    /// The bytes of inline `data`, encoded in native byte order, with its `null` items.
    fn inline_raw<'s>(&self, limits: &ReadLimits) -> Result<Raw<'s>> {
        let data = self
            .data
            .as_ref()
            .ok_or_else(|| field_err("data", "missing"))?;
        // Packed data (a tree built for writing, read back in memory) is read through the nodes
        // it stands for.
        let unpacked;
        let data = if matches!(data.value(), asdf_yaml::Value::Packed(_)) {
            unpacked = data.unpacked();
            &unpacked
        } else {
            data
        };
        let datatype = match &self.datatype {
            Some(d) => d.clone(),
            None => infer_datatype(data),
        };
        let shape = match &self.shape {
            Some(s) => s.clone(),
            None => infer_shape(data, &datatype),
        };
        let itemsize = datatype.size()?;
        let layout = Layout::contiguous(shape.clone(), itemsize)?;
        let leaves = if shape.is_empty() && data.as_seq().is_some_and(|s| s.len() == 1) {
            // A 0-d array written as a one-item list.
            flatten(data, &[1], "")?
        } else {
            flatten(data, &shape, "")?
        };
        let (bytes, nulls) = encode_leaves(&leaves, &datatype, itemsize, limits)?;
        Ok(Raw {
            bytes: Cow::Owned(bytes),
            layout,
            datatype,
            order: ByteOrder::NATIVE,
            nulls,
        })
    }

    /// Copies the array into an `ArrayD<T>`, swapping bytes during the copy when the stored byte
    /// order is not native. Errors name the stored datatype when it is not `T`'s.
    ///
    /// ```
    /// use asdf_ndarray::{NdArrayMeta, NoBlocks};
    /// let node = asdf_yaml::parse_str("{data: [[1.5, 2], [3, .nan]], datatype: float32}").unwrap();
    /// let a = NdArrayMeta::from_node(&node).unwrap().array::<f32>(&NoBlocks).unwrap();
    /// assert_eq!(a.shape(), &[2, 2]);
    /// assert!(a[[1, 1]].is_nan());
    /// let err = NdArrayMeta::from_node(&node).unwrap().array::<f64>(&NoBlocks).unwrap_err();
    /// assert_eq!(err.to_string(), "the array stores float32, not float64");
    /// ```
    pub fn array<T: Element>(&self, store: &(impl BlockStore + ?Sized)) -> Result<ArrayD<T>> {
        self.array_with(store, &ReadLimits::default())
    }

    /// [`array`](Self::array) with explicit limits.
    pub fn array_with<T: Element>(
        &self,
        store: &(impl BlockStore + ?Sized),
        limits: &ReadLimits,
    ) -> Result<ArrayD<T>> {
        if let Some(dt) = &self.datatype {
            check_type::<T>(dt)?;
        }
        if let Some(a) = self.whole_block_array::<T>(store)? {
            return Ok(a);
        }
        let raw = self.raw(store, limits)?;
        check_type::<T>(&raw.datatype)?;
        let v = decode_vec::<T>(&raw.bytes, &raw.layout, raw.order)?;
        ArrayD::from_shape_vec(IxDyn(&raw.layout.shape), v)
            .map_err(|e| NdError::Usage(format!("internal shape error: {e}")))
    }

    /// The sub-array `region` (one range per dimension), with explicit limits. A C-contiguous
    /// block-backed array whose block decodes in parts (Python asdf's chunked `lz4`) decodes
    /// only the parts holding the region's rows; other arrays are read whole and sliced.
    ///
    /// ```
    /// use asdf_ndarray::{ArrayWriter, NdArrayMeta, ReadLimits, StoreOptions};
    /// use ndarray::{s, Array2};
    /// let a = Array2::from_shape_fn((300, 50), |(i, j)| (i * 50 + j) as f32);
    /// let mut w = ArrayWriter::new();
    /// let node = w.add(&a, &StoreOptions::compressed("lz4").unwrap()).unwrap();
    /// let meta = NdArrayMeta::from_node(&node).unwrap();
    /// let part = meta
    ///     .region_with::<f32>(&w.memory_store(), &[100..103, 7..9], &ReadLimits::default())
    ///     .unwrap();
    /// assert_eq!(part, a.slice(s![100..103, 7..9]).into_dyn());
    /// ```
    pub fn region_with<T: Element>(
        &self,
        store: &(impl BlockStore + ?Sized),
        region: &[std::ops::Range<usize>],
        limits: &ReadLimits,
    ) -> Result<ArrayD<T>> {
        if let Some(a) = self.rows_region::<T>(store, region)? {
            return Ok(a);
        }
        let whole = self.array_with::<T>(store, limits)?;
        crate::region::slice_region(whole.view(), region)
    }

    /// [`region_with`](Self::region_with) through [`BlockStore::block_range`]: the bytes of the
    /// region's rows only. `None` when the array or the store does not allow it.
    fn rows_region<T: Element>(
        &self,
        store: &(impl BlockStore + ?Sized),
        region: &[std::ops::Range<usize>],
    ) -> Result<Option<ArrayD<T>>> {
        let (Some(Source::Block(b)), Some(shape), Some(dt)) =
            (&self.source, &self.shape, &self.datatype)
        else {
            return Ok(None);
        };
        let inside = crate::region::check_region(shape, region).is_ok();
        let plain = !self.streamed && self.strides.is_none() && self.mask.is_none();
        let (Some(rows), true, true) = (
            region.first(),
            inside && plain,
            *dt == Datatype::Scalar(T::SCALAR),
        ) else {
            return Ok(None);
        };
        let size = T::SCALAR.size() as u64;
        let row = crate::datatype::checked_product(&shape[1..])
            .and_then(|n| (n as u64).checked_mul(size));
        let span = row.and_then(|row| {
            let lo = self
                .offset
                .checked_add(row.checked_mul(rows.start as u64)?)?;
            Some(lo..lo.checked_add(row.checked_mul(rows.len() as u64)?)?)
        });
        let Some(span) = span.filter(|s| !s.is_empty()) else {
            return Ok(None);
        };
        let Some(bytes) = store.block_range(*b, span.clone())? else {
            return Ok(None);
        };
        let mut rows_shape = shape.clone();
        rows_shape[0] = rows.len();
        let layout = Layout::contiguous(rows_shape.clone(), size as usize)?;
        if bytes.len() as u64 != span.end - span.start {
            return Err(NdError::Usage(format!(
                "block {b} gave {} bytes for the range {span:?}",
                bytes.len()
            )));
        }
        let v = decode_vec::<T>(&bytes, &layout, self.byteorder)?;
        let a = ArrayD::from_shape_vec(IxDyn(&rows_shape), v)
            .map_err(|e| NdError::Usage(format!("internal shape error: {e}")))?;
        let part = a.slice_each_axis(|ax| match ax.axis.index() {
            0 => ndarray::Slice::from(..),
            d => ndarray::Slice::from(region[d].clone()),
        });
        Ok(Some(part.to_owned()))
    }

    /// The common case of [`array_with`](Self::array_with) without an intermediate buffer: a
    /// C-contiguous, native-order array that is exactly its whole block is decoded (or copied,
    /// while its checksum is verified beside) straight into the result's memory. `None` when the
    /// array or the store does not qualify.
    fn whole_block_array<T: Element>(
        &self,
        store: &(impl BlockStore + ?Sized),
    ) -> Result<Option<ArrayD<T>>> {
        let Some(layout) = self.whole_block_layout::<T>(store)? else {
            return Ok(None);
        };
        let mut v = zeroed_vec::<T>(layout.count)?;
        if !self.fill_from_block(store, &layout.shape, &mut v)? {
            return Ok(None);
        }
        ArrayD::from_shape_vec(IxDyn(&layout.shape), v)
            .map(Some)
            .map_err(|e| NdError::Usage(format!("internal shape error: {e}")))
    }

    /// The layout of an array that is exactly its whole block, C-contiguous, in native order,
    /// of a type whose every byte pattern is a value, from a store that decodes into buffers.
    fn whole_block_layout<T: Element>(
        &self,
        store: &(impl BlockStore + ?Sized),
    ) -> Result<Option<Layout>> {
        let (Some(Source::Block(i)), Some(dt)) = (&self.source, &self.datatype) else {
            return Ok(None);
        };
        let size = std::mem::size_of::<T>();
        // Any byte pattern must be a valid `T` (bool excluded: only 0 and 1 are).
        if T::SCALAR == ScalarType::Bool8
            || *dt != Datatype::Scalar(T::SCALAR)
            || size != T::SCALAR.size()
            || !(self.byteorder.is_native() || T::SCALAR.swap_unit() == 1)
            || self.offset != 0
            || self.mask.is_some()
        {
            return Ok(None);
        }
        let Some(len) = store.block_len(*i)? else {
            return Ok(None);
        };
        let Ok(len) = usize::try_from(len) else {
            return Ok(None);
        };
        let layout = Layout::resolve(self, size, len, &ReadLimits::default())?;
        let exact = layout.count.checked_mul(size) == Some(len);
        Ok((layout.is_c_contiguous() && exact && len > 0).then_some(layout))
    }

    /// Fills `out` (this array's elements in C order, of `shape`) straight from its block when
    /// the array is exactly its whole block (see [`array_with`](Self::array_with)); `Ok(false)`,
    /// with nothing read, when it is not.
    pub(crate) fn fill_from_block<T: Element>(
        &self,
        store: &(impl BlockStore + ?Sized),
        shape: &[usize],
        out: &mut [T],
    ) -> Result<bool> {
        let Some(layout) = self.whole_block_layout::<T>(store)? else {
            return Ok(false);
        };
        let (Some(Source::Block(i)), true) = (&self.source, layout.shape == shape) else {
            return Ok(false);
        };
        if layout.count != out.len() {
            return Ok(false);
        }
        let len = std::mem::size_of_val(out);
        // SAFETY: `out` holds `count` initialised elements, `len` bytes of plain numbers without
        // padding (integers, floats, `Complex` is `repr(C)` over two floats; bool is refused by
        // `whole_block_layout`), for which every byte pattern is a valid value, so filling them
        // through a byte view cannot make any element invalid.
        let bytes = unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), len) };
        store.block_into(*i, bytes)?;
        Ok(true)
    }

    /// A zero-copy view borrowed from the store (a memory map, typically), with the array's
    /// strides (negative ones included). Errors say why no view is possible: inline data, a
    /// compressed block, non-native byte order, misaligned data, a stride that is not a
    /// multiple of the element size, or invalid `bool` bytes; [`array`](Self::array) copies in
    /// those cases.
    ///
    /// ```
    /// use asdf_block::{BlockReader, BlockWriter, EncodeOptions, Label, ReadOptions, WriteOptions};
    /// use asdf_ndarray::{ByteOrder, Datatype, NdArrayMeta, ScalarType};
    /// let data: Vec<u8> = (0..6u32).flat_map(|v| v.to_ne_bytes()).collect();
    /// let mut w = BlockWriter::new(Vec::new(), 0, WriteOptions { align: 64, ..Default::default() });
    /// w.write_data(&data, Label::NONE, &EncodeOptions::default()).unwrap();
    /// let blocks = BlockReader::new(w.finish().unwrap(), 0, ReadOptions::default()).unwrap();
    ///
    /// let mut meta = NdArrayMeta::block(0, vec![2, 3], ScalarType::UInt32.into(), ByteOrder::NATIVE);
    /// meta.offset = 20; // last element, walking backwards
    /// meta.strides = Some(vec![-12, -4]);
    /// let v = meta.view::<u32>(&blocks).unwrap();
    /// assert_eq!(v[[0, 0]], 5);
    /// assert_eq!(v[[1, 2]], 0);
    /// ```
    pub fn view<'s, T: Element>(
        &self,
        store: &'s (impl BlockStore + ?Sized),
    ) -> Result<ArrayViewD<'s, T>> {
        if self.source.is_none() {
            return Err(NdError::NotViewable(
                "the array is inline in the tree".into(),
            ));
        }
        if let Some(dt) = &self.datatype {
            check_type::<T>(dt)?;
        }
        let raw = self.raw(store, &ReadLimits::default())?;
        check_type::<T>(&raw.datatype)?;
        match raw.bytes {
            Cow::Borrowed(b) => view(b, &raw.layout, raw.order),
            Cow::Owned(_) => Err(NdError::NotViewable(
                "the block is compressed (its data was decoded into memory)".into(),
            )),
        }
    }

    /// Reads the array whatever its datatype.
    pub fn read(&self, store: &(impl BlockStore + ?Sized)) -> Result<AnyArray> {
        self.read_with(store, &ReadLimits::default())
    }

    /// [`read`](Self::read) with explicit limits.
    pub fn read_with(
        &self,
        store: &(impl BlockStore + ?Sized),
        limits: &ReadLimits,
    ) -> Result<AnyArray> {
        let raw = self.raw(store, limits)?;
        decode_any(&raw.bytes, &raw.layout, &raw.datatype, raw.order)
    }

    /// Whether this array (in `store`) and `other` (in `other_store`) are shown identical byte
    /// for byte: same shape, datatype and byte order, both C-contiguous, no inline nulls, equal
    /// bytes. Uncompressed blocks are compared where they lie, without copying (a diff of two
    /// equal 1 GiB arrays needs no memory of its own). `Ok(false)` only means "not shown
    /// identical": the values may still be equal (NaNs with other payloads, another byte order,
    /// other strides), which a comparison of the values decides. Masks are not looked at.
    ///
    /// ```
    /// use asdf_ndarray::{NdArrayMeta, NoBlocks, ReadLimits};
    /// let meta = |t: &str| NdArrayMeta::from_node(&asdf_yaml::parse_str(t).unwrap()).unwrap();
    /// let (a, b) = (meta("{data: [1, 2, 3], datatype: int16}"), meta("{data: [1, 2, 4], datatype: int16}"));
    /// let limits = ReadLimits::default();
    /// assert!(a.same_bytes_with(&NoBlocks, &a, &NoBlocks, &limits).unwrap());
    /// assert!(!a.same_bytes_with(&NoBlocks, &b, &NoBlocks, &limits).unwrap());
    /// ```
    pub fn same_bytes_with(
        &self,
        store: &(impl BlockStore + ?Sized),
        other: &NdArrayMeta,
        other_store: &(impl BlockStore + ?Sized),
        limits: &ReadLimits,
    ) -> Result<bool> {
        let (a, b) = (self.raw(store, limits)?, other.raw(other_store, limits)?);
        let comparable = a.nulls.is_none()
            && b.nulls.is_none()
            && a.datatype == b.datatype
            && a.order == b.order
            && a.layout.shape == b.layout.shape
            && a.layout.is_c_contiguous()
            && b.layout.is_c_contiguous();
        if !comparable {
            return Ok(false);
        }
        fn body<'r>(r: &'r Raw<'_>) -> Option<&'r [u8]> {
            let start = r.layout.offset;
            let len = r.layout.count.checked_mul(r.layout.itemsize)?;
            r.bytes.get(start..start.checked_add(len)?)
        }
        Ok(match (body(&a), body(&b)) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        })
    }

    /// Checks the array can be read, without copying it when that cannot fail: its bytes are
    /// located and its layout checked against them (within `limits`); numbers are not copied
    /// (every byte pattern is a value), strings and records are decoded to check them. Returns
    /// the shape and datatype: what a reader that only verifies needs, at no cost per element
    /// for the many views a file may hold into one block.
    ///
    /// ```
    /// use asdf_ndarray::{NdArrayMeta, NoBlocks, ReadLimits};
    /// let node = asdf_yaml::parse_str("{data: [[1, 2], [3, 4]], datatype: int16}").unwrap();
    /// let (shape, dt) = NdArrayMeta::from_node(&node).unwrap().check_with(&NoBlocks, &ReadLimits::default()).unwrap();
    /// assert_eq!((shape, dt.to_string()), (vec![2, 2], "int16".to_string()));
    /// ```
    pub fn check_with(
        &self,
        store: &(impl BlockStore + ?Sized),
        limits: &ReadLimits,
    ) -> Result<(Vec<usize>, Datatype)> {
        let raw = self.raw(store, limits)?;
        if !matches!(raw.datatype, Datatype::Scalar(_)) {
            decode_any(&raw.bytes, &raw.layout, &raw.datatype, raw.order)?;
        }
        Ok((raw.layout.shape, raw.datatype))
    }

    /// Reads a string (`ascii`/`ucs4`) array.
    pub fn strings(&self, store: &(impl BlockStore + ?Sized)) -> Result<ArrayD<String>> {
        self.read(store)?.into_strings()
    }

    /// Reads a record array.
    pub fn records(&self, store: &(impl BlockStore + ?Sized)) -> Result<RecordArray> {
        self.read(store)?.into_records()
    }

    /// Reads the array and its mask (`true` = missing): inline `null`s, a `mask` ndarray
    /// broadcast to the array's shape (non-zero = missing), or a sentinel value. `None` when
    /// the array has no mask. Uses the default [`ReadLimits`].
    pub fn read_masked(
        &self,
        store: &(impl BlockStore + ?Sized),
    ) -> Result<(AnyArray, Option<ArrayD<bool>>)> {
        self.read_masked_with(store, &ReadLimits::default())
    }

    /// [`read_masked`](Self::read_masked) with explicit limits: the array, the mask array and
    /// the mask broadcast to the array's shape are each bounded by
    /// [`ReadLimits::max_expanded_bytes`] when larger than the bytes backing the array.
    ///
    /// ```
    /// use asdf_ndarray::{NdArrayMeta, NdError, NoBlocks, ReadLimits};
    /// let node = asdf_yaml::parse_str("{data: [1, null, 3], datatype: int32}").unwrap();
    /// let meta = NdArrayMeta::from_node(&node).unwrap();
    /// let (a, mask) = meta.read_masked_with(&NoBlocks, &ReadLimits::untrusted()).unwrap();
    /// assert_eq!(a.shape(), &[3]);
    /// assert_eq!(mask.unwrap().into_raw_vec_and_offset().0, vec![false, true, false]);
    /// ```
    pub fn read_masked_with(
        &self,
        store: &(impl BlockStore + ?Sized),
        limits: &ReadLimits,
    ) -> Result<(AnyArray, Option<ArrayD<bool>>)> {
        let raw = self.raw(store, limits)?;
        let arr = decode_any(&raw.bytes, &raw.layout, &raw.datatype, raw.order)?;
        let shape = raw.layout.shape.clone();
        let mut mask = match raw.nulls {
            Some(n) => Some(
                ArrayD::from_shape_vec(IxDyn(&shape), n)
                    .map_err(|e| NdError::Usage(format!("internal shape error: {e}")))?,
            ),
            None => None,
        };
        let explicit = match &self.mask {
            None => None,
            Some(Mask::Sentinel(s)) => Some(arr.sentinel_mask(s)?),
            Some(Mask::Array(m)) => {
                let ma = m
                    .read_with(store, limits)
                    .map_err(|e| field_err("mask", e.to_string()))?;
                let b = mask_bools(ma)?;
                // The broadcast mask takes one byte per element of the array: free when the
                // array's own bytes are at least as many, else bounded by the limit.
                let elements = crate::datatype::checked_product(&shape).map(|n| n as u64);
                check_limit(
                    "the mask broadcast to the array's shape",
                    elements,
                    raw.bytes.len() as u64,
                    limits,
                )?;
                let bc = b.broadcast(IxDyn(&shape)).ok_or_else(|| {
                    field_err(
                        "mask",
                        format!("shape {:?} does not broadcast to {:?}", b.shape(), shape),
                    )
                })?;
                Some(bc.to_owned())
            }
        };
        if let Some(e) = explicit {
            mask = Some(match mask {
                Some(m) => m | e,
                None => e,
            });
        }
        Ok((arr, mask))
    }

    /// The array materialised as an inline ndarray (`data`, `datatype`, `shape`, with the mask
    /// as `null`s): what Python asdf writes with `all_array_storage="inline"`. Uses the default
    /// [`ReadLimits`].
    pub fn to_inline(&self, store: &(impl BlockStore + ?Sized)) -> Result<NdArrayMeta> {
        self.to_inline_with(store, &ReadLimits::default())
    }

    /// [`to_inline`](Self::to_inline) with explicit limits (those of
    /// [`read_masked_with`](Self::read_masked_with)).
    pub fn to_inline_with(
        &self,
        store: &(impl BlockStore + ?Sized),
        limits: &ReadLimits,
    ) -> Result<NdArrayMeta> {
        let (arr, mask) = self.read_masked_with(store, limits)?;
        let mut data = arr.to_data_node()?;
        if let Some(mask) = mask {
            // Masked elements become nulls in place: that needs a node per element.
            data = data.unpacked();
            let shape = mask.shape().to_vec();
            let mut i = 0;
            mask_nodes(
                &mut data,
                shape.len(),
                &mask.iter().copied().collect::<Vec<_>>(),
                &mut i,
            );
        }
        Ok(NdArrayMeta {
            source: None,
            data: Some(data),
            shape: Some(arr.shape().to_vec()),
            streamed: false,
            datatype: Some(arr.datatype()),
            byteorder: ByteOrder::NATIVE,
            offset: 0,
            strides: None,
            mask: None,
        })
    }
}

fn mask_nodes(node: &mut Node, depth: usize, mask: &[bool], i: &mut usize) {
    if depth == 0 {
        if mask.get(*i) == Some(&true) {
            *node = Node::null();
        }
        *i += 1;
        return;
    }
    if let Some(items) = node.as_seq_mut() {
        for it in items {
            mask_nodes(it, depth - 1, mask, i);
        }
    }
}

/// Any numeric or bool array as booleans (non-zero = true).
fn mask_bools(a: AnyArray) -> Result<ArrayD<bool>> {
    let dt = a.datatype();
    match dt {
        Datatype::Scalar(ScalarType::Bool8) => a.into_array::<bool>(),
        Datatype::Scalar(_) => {
            let zero = a.sentinel_mask(&Node::from(0))?;
            Ok(zero.mapv(|z| !z))
        }
        other => Err(field_err(
            "mask",
            format!("a mask array must be bool8 or numeric, not {other}"),
        )),
    }
}

/// `count` zero elements, allocated zeroed (the operating system's zero pages for large
/// buffers, so nothing is written twice), advised as huge pages before first use.
pub(crate) fn zeroed_vec<T: Element>(count: usize) -> Result<Vec<T>> {
    array_core::zeroed_vec(count).map_err(|e| NdError::TooLarge {
        what: format!("allocating {count} elements ({e})"),
        limit: isize::MAX as u64,
    })
}

/// The inline values `leaves` encoded one after the other in native byte order, within the
/// read limits, and which are `null` (`None` when none is).
fn encode_leaves(
    leaves: &[&Node],
    datatype: &Datatype,
    itemsize: usize,
    limits: &ReadLimits,
) -> Result<(Vec<u8>, Option<Vec<bool>>)> {
    let total = leaves
        .len()
        .checked_mul(itemsize)
        .ok_or_else(|| NdError::TooLarge {
            what: "inline data".into(),
            limit: isize::MAX as u64,
        })?;
    check_limit("inline data", Some(total as u64), 0, limits)?;
    let mut bytes = crate::layout::try_vec_with_capacity::<u8>(total)?;
    bytes.resize(total, 0);
    let mut nulls = vec![false; leaves.len()];
    let mut any_null = false;
    if itemsize > 0 {
        for (i, (leaf, out)) in leaves
            .iter()
            .zip(bytes.chunks_exact_mut(itemsize))
            .enumerate()
        {
            let null = encode_value(leaf, datatype, ByteOrder::NATIVE, out, &format!("item {i}"))?;
            nulls[i] = null;
            any_null |= null;
        }
    }
    Ok((bytes, any_null.then_some(nulls)))
}
