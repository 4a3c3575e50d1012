//! Layouts as Arrow arrays (arrow-rs) and back (feature `arrow`), following the mapping of
//! awkward 2's `ak.to_arrow`/`ak.from_arrow` with their defaults.
//!
//! | layout | Arrow |
//! |---|---|
//! | numeric leaf | primitive array (`bool` bit-packed; `datetime64`/`timedelta64` as timestamp/duration) |
//! | leaf with inner shape, `RegularArray` | `FixedSizeList` |
//! | `JaggedArray` | `LargeList` (64-bit offsets) |
//! | `StringArray` | `LargeUtf8` (text) or `LargeBinary` (bytes) |
//! | `Table`, `RecordArray` | `Struct` |
//! | `UnionArray` | dense `Union` (int8 type ids, int32 offsets) |
//! | option classes | the content with a validity bitmap |
//! | `IndexedArray` | the content, gathered |
//! | `EmptyArray` | `Null` |
//!
//! Reading accepts also `List`/`Utf8`/`Binary` (32-bit offsets), sparse unions and dictionaries
//! (an `IndexedArray` marked `__array__: "categorical"`, as awkward 2 reads them). Arrow buffers
//! are copied once into the layout's typed vectors and back. awkward 2 parameters other than
//! strings and categoricals are not carried (awkward's extension-type metadata is not written).

use std::sync::Arc;

use arrow_array::types::{
    DurationMicrosecondType, DurationMillisecondType, DurationNanosecondType, DurationSecondType,
    Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{
    make_array, Array, ArrayRef, BooleanArray, FixedSizeListArray, Int64Array, LargeBinaryArray,
    LargeListArray, LargeStringArray, NullArray, PrimitiveArray, RecordBatch, StructArray,
    UnionArray as ArrowUnion,
};
use arrow_buffer::{BooleanBuffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Fields, Schema, TimeUnit, UnionFields};
use serde_json::{json, Map};

use crate::dtype::Primitive;
use crate::error::{Error, Result};
use crate::layout::{
    BitMaskedArray, EmptyArray, IndexedArray, IndexedMaskedArray, JaggedArray, Layout, ListIndex,
    Parameterized, RecordArray, RegularArray, StringArray, Table, UnionArray,
};
use crate::numpy::{Buffer, NumpyArray};

fn unsupported(what: impl Into<String>) -> Error {
    Error::Unsupported {
        location: "Arrow conversion".into(),
        what: what.into(),
    }
}

fn arrow_err(e: arrow_schema::ArrowError) -> Error {
    Error::Convert {
        location: "Arrow conversion".into(),
        message: e.to_string(),
    }
}

/// Whether a layout is an option type (its Arrow field is nullable).
fn nullable(l: &Layout) -> bool {
    match l {
        Layout::Masked(_)
        | Layout::BitMasked(_)
        | Layout::IndexedMasked(_)
        | Layout::Unmasked(_)
        | Layout::Empty(_) => true,
        Layout::Parameters(p) => nullable(&p.content),
        Layout::Indexed(a) => nullable(&a.content),
        Layout::Table(t) if t.view.is_some() => false,
        Layout::Union(u) => u.contents.iter().any(|c| nullable(c)),
        _ => false,
    }
}

/// The layout as an Arrow array.
///
/// ```
/// use arrow_array::Array;
/// use asdf_awkward::{arrow::{from_arrow, to_arrow}, Layout};
/// let a = Layout::from_json(&serde_json::json!([[1.5, 2.5], [], null])).unwrap();
/// let arr = to_arrow(&a).unwrap();
/// assert_eq!(arr.len(), 3);
/// assert_eq!(arr.null_count(), 1);
/// assert_eq!(from_arrow(arr.as_ref()).unwrap().to_json().unwrap(), a.to_json().unwrap());
/// ```
pub fn to_arrow(layout: &Layout) -> Result<ArrayRef> {
    layout.validate()?;
    conv(layout, 0)
}

fn primitive<T: arrow_array::types::ArrowPrimitiveType>(v: &[T::Native]) -> ArrayRef {
    Arc::new(PrimitiveArray::<T>::new(
        ScalarBuffer::from(v.to_vec()),
        None,
    ))
}

fn numpy(a: &NumpyArray) -> Result<ArrayRef> {
    let flat: ArrayRef = match (a.data(), &a.dtype().primitive) {
        (Buffer::Bool(v), _) => Arc::new(BooleanArray::from(v.clone())),
        (Buffer::I8(v), _) => primitive::<Int8Type>(v),
        (Buffer::U8(v), _) => primitive::<UInt8Type>(v),
        (Buffer::I16(v), _) => primitive::<Int16Type>(v),
        (Buffer::U16(v), _) => primitive::<UInt16Type>(v),
        (Buffer::I32(v), _) => primitive::<Int32Type>(v),
        (Buffer::U32(v), _) => primitive::<UInt32Type>(v),
        (Buffer::I64(v), Primitive::DateTime64(u)) => match u.as_str() {
            "s" => primitive::<TimestampSecondType>(v),
            "ms" => primitive::<TimestampMillisecondType>(v),
            "us" => primitive::<TimestampMicrosecondType>(v),
            "ns" => primitive::<TimestampNanosecondType>(v),
            _ => return Err(unsupported(format!("datetime64[{u}] has no Arrow type"))),
        },
        (Buffer::I64(v), Primitive::TimeDelta64(u)) => match u.as_str() {
            "s" => primitive::<DurationSecondType>(v),
            "ms" => primitive::<DurationMillisecondType>(v),
            "us" => primitive::<DurationMicrosecondType>(v),
            "ns" => primitive::<DurationNanosecondType>(v),
            _ => return Err(unsupported(format!("timedelta64[{u}] has no Arrow type"))),
        },
        (Buffer::I64(v), _) => primitive::<Int64Type>(v),
        (Buffer::U64(v), _) => primitive::<UInt64Type>(v),
        (Buffer::F16(v), _) => primitive::<Float16Type>(v),
        (Buffer::F32(v), _) => primitive::<Float32Type>(v),
        (Buffer::F64(v), _) => primitive::<Float64Type>(v),
        (Buffer::C64(_) | Buffer::C128(_), _) => {
            return Err(unsupported("complex numbers have no Arrow type"))
        }
    };
    // Inner dimensions become nested fixed-size lists, innermost first.
    let mut out = flat;
    let shape = &a.dtype().inner_shape;
    for (k, &n) in shape.iter().enumerate().rev() {
        let size = i32::try_from(n).map_err(|_| unsupported("inner dimension above 2^31"))?;
        let field = Arc::new(Field::new("item", out.data_type().clone(), false));
        // Lists at this level: the outer length times the dimensions outside this one.
        let rows = shape[..k]
            .iter()
            .fold(a.len(), |acc, &m| acc.saturating_mul(m));
        out = Arc::new(
            FixedSizeListArray::try_new_with_length(field, size, out, None, rows)
                .map_err(arrow_err)?,
        );
    }
    Ok(out)
}

fn large_offsets(o: &[i64]) -> OffsetBuffer<i64> {
    // Validated by the layout: non-empty, non-negative, monotone.
    OffsetBuffer::new(ScalarBuffer::from(o.to_vec()))
}

/// Offsets for a list index (starts/stops lists are gathered into place: `(offsets, Some(take))`).
fn list_offsets(ix: &ListIndex) -> (Vec<i64>, Option<Vec<i64>>) {
    match ix {
        ListIndex::Offsets(o) => (o.clone(), None),
        ListIndex::StartsStops { starts, stops } => {
            let mut offsets = Vec::with_capacity(starts.len() + 1);
            let mut take = Vec::new();
            offsets.push(0i64);
            for (&a, &b) in starts.iter().zip(stops) {
                take.extend(a..b);
                offsets.push(take.len() as i64);
            }
            (offsets, Some(take))
        }
    }
}

fn gather(a: &ArrayRef, index: &[i64], valid: Option<Vec<bool>>) -> Result<ArrayRef> {
    let idx = Int64Array::new(
        ScalarBuffer::from(index.to_vec()),
        valid.map(NullBuffer::from),
    );
    arrow_select::take::take(a.as_ref(), &idx, None).map_err(arrow_err)
}

/// `a` (already `valid.len()` long) with its validity ANDed with `valid`.
fn with_validity(a: ArrayRef, valid: BooleanBuffer) -> Result<ArrayRef> {
    let mine = NullBuffer::new(valid);
    let nulls = NullBuffer::union(a.logical_nulls().as_ref(), Some(&mine));
    if matches!(a.data_type(), DataType::Union(_, _) | DataType::Null) {
        return Err(unsupported(
            "a missing value over a union or an empty array (Arrow unions have no validity)",
        ));
    }
    let data = a
        .to_data()
        .into_builder()
        .nulls(nulls)
        .build()
        .map_err(arrow_err)?;
    Ok(make_array(data))
}

fn conv(l: &Layout, depth: usize) -> Result<ArrayRef> {
    if depth > crate::layout::MAX_NESTING {
        return Err(unsupported("nesting too deep"));
    }
    let d = depth + 1;
    match l {
        Layout::Numpy(a) => numpy(a),
        Layout::Appendable(a) => {
            let parts = a.chunks.iter().map(numpy).collect::<Result<Vec<_>>>()?;
            concat(&parts)
        }
        Layout::Chunked(c) => {
            let mut parts = Vec::new();
            for (ch, &n) in c.chunks.iter().zip(&c.chunksizes) {
                parts.push(conv(ch, d)?.slice(0, n));
            }
            concat(&parts)
        }
        Layout::Jagged(j) => jagged_to_arrow(j, d),
        Layout::String(s) => strings_to_arrow(s),
        Layout::Table(t) => table_to_arrow(t, l.len(), d),
        Layout::Record(r) => structure(&r.fields, &r.contents, r.length, d),
        Layout::Regular(r) => regular_to_arrow(r, d),
        Layout::Indexed(a) => gather(&conv(&a.content, d)?, &a.index, None),
        Layout::IndexedMasked(m) => indexed_masked_to_arrow(m, d),
        Layout::Masked(m) => {
            let content = conv(&m.content, d)?.slice(0, m.mask.len());
            let valid: BooleanBuffer = m.mask.iter().map(|&b| b != m.masked_when).collect();
            with_validity(content, valid)
        }
        Layout::BitMasked(m) => {
            let n = m.content.len();
            let valid: BooleanBuffer = (0..n).map(|i| m.bit(i) != Some(m.masked_when)).collect();
            with_validity(conv(&m.content, d)?, valid)
        }
        Layout::Unmasked(u) => conv(&u.content, d),
        Layout::Parameters(p) => conv(&p.content, d),
        Layout::Empty(_) => Ok(Arc::new(NullArray::new(0))),
        Layout::Union(u) => union(u, d),
        Layout::Sparse(_) => Err(unsupported(
            "SparseArray has no Arrow form (materialize it first)",
        )),
    }
}

/// A `JaggedArray`: a large list array (its content gathered first when the lists are not
/// contiguous).
fn jagged_to_arrow(j: &JaggedArray, d: usize) -> Result<ArrayRef> {
    let content = conv(&j.content, d)?;
    let (offsets, take) = list_offsets(&j.index);
    let values = match take {
        Some(t) => gather(&content, &t, None)?,
        None => content,
    };
    let field = Arc::new(Field::new(
        "item",
        values.data_type().clone(),
        nullable(&j.content),
    ));
    Ok(Arc::new(
        LargeListArray::try_new(field, large_offsets(&offsets), values, None).map_err(arrow_err)?,
    ))
}

/// A `StringArray`: large UTF-8 strings, or large binary without an encoding.
fn strings_to_arrow(s: &StringArray) -> Result<ArrayRef> {
    let (offsets, take) = list_offsets(&s.index);
    let values: Vec<u8> = match take {
        Some(t) => t.iter().map(|&i| s.content[i as usize]).collect(),
        None => s.content.clone(),
    };
    let offsets = large_offsets(&offsets);
    Ok(if s.encoding.is_some() {
        Arc::new(LargeStringArray::try_new(offsets, values.into(), None).map_err(arrow_err)?)
    } else {
        Arc::new(LargeBinaryArray::try_new(offsets, values.into(), None).map_err(arrow_err)?)
    })
}

/// A `Table` of `len` rows: a struct array of its columns, its row view applied.
fn table_to_arrow(t: &Table, len: usize, d: usize) -> Result<ArrayRef> {
    let names: Vec<String> = t.fields.iter().map(|(n, _)| n.clone()).collect();
    let contents: Vec<_> = t.fields.iter().map(|(_, c)| c.clone()).collect();
    let base = structure(&Some(names), &contents, t.base_len(), d)?;
    if t.view.is_none() {
        return Ok(base);
    }
    let index: Vec<i64> = (0..len)
        .map(|i| t.base_row(i).map_or(-1, |r| r as i64))
        .collect();
    gather(&base, &index, None)
}

/// A `RegularArray`: a fixed-size list array.
fn regular_to_arrow(r: &RegularArray, d: usize) -> Result<ArrayRef> {
    let values = conv(&r.content, d)?.slice(0, r.length * r.size);
    let size = i32::try_from(r.size).map_err(|_| unsupported("list size above 2^31"))?;
    let field = Arc::new(Field::new(
        "item",
        values.data_type().clone(),
        nullable(&r.content),
    ));
    Ok(Arc::new(
        FixedSizeListArray::try_new_with_length(field, size, values, None, r.length)
            .map_err(arrow_err)?,
    ))
}

/// An `IndexedMaskedArray`: its content gathered, masked entries null.
fn indexed_masked_to_arrow(m: &IndexedMaskedArray, d: usize) -> Result<ArrayRef> {
    let valid: Vec<bool> = m.index.iter().map(|&i| i != m.masked_when).collect();
    let index: Vec<i64> = m
        .index
        .iter()
        .map(|&i| if i == m.masked_when { 0 } else { i })
        .collect();
    if m.content.is_empty() {
        return Ok(Arc::new(NullArray::new(index.len())));
    }
    gather(&conv(&m.content, d)?, &index, Some(valid))
}

fn concat(parts: &[ArrayRef]) -> Result<ArrayRef> {
    let refs: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
    if refs.is_empty() {
        return Ok(Arc::new(NullArray::new(0)));
    }
    arrow_select::concat::concat(&refs).map_err(arrow_err)
}

fn structure(
    fields: &Option<Vec<String>>,
    contents: &[crate::layout::Node],
    length: usize,
    d: usize,
) -> Result<ArrayRef> {
    if contents.is_empty() {
        return Ok(Arc::new(StructArray::new_empty_fields(length, None)));
    }
    let mut fs = Vec::with_capacity(contents.len());
    let mut arrays = Vec::with_capacity(contents.len());
    for (k, c) in contents.iter().enumerate() {
        let a = conv(c, d)?.slice(0, length);
        let name = match fields {
            Some(f) => f.get(k).cloned().unwrap_or_default(),
            None => k.to_string(),
        };
        fs.push(Field::new(name, a.data_type().clone(), nullable(c)));
        arrays.push(a);
    }
    Ok(Arc::new(
        StructArray::try_new(Fields::from(fs), arrays, None).map_err(arrow_err)?,
    ))
}

fn union(u: &UnionArray, d: usize) -> Result<ArrayRef> {
    if u.contents.len() > 127 || u.tags.iter().any(|&t| t > 127) {
        return Err(unsupported("union tags above 127"));
    }
    let mut children = Vec::with_capacity(u.contents.len());
    let mut fields = Vec::with_capacity(u.contents.len());
    for (k, c) in u.contents.iter().enumerate() {
        let a = conv(c, d)?;
        fields.push(Field::new(
            k.to_string(),
            a.data_type().clone(),
            nullable(c),
        ));
        children.push(a);
    }
    let ids: Vec<i8> = (0..u.contents.len() as i8).collect();
    let offsets = u.index[..u.tags.len()]
        .iter()
        .map(|&i| i32::try_from(i).map_err(|_| unsupported("union index above 2^31")))
        .collect::<Result<Vec<i32>>>()?;
    let type_ids: Vec<i8> = u.tags.iter().map(|&t| t as i8).collect();
    let fields = UnionFields::try_new(ids, fields).map_err(arrow_err)?;
    Ok(Arc::new(
        ArrowUnion::try_new(fields, type_ids.into(), Some(offsets.into()), children)
            .map_err(arrow_err)?,
    ))
}

/// The layout as a record batch: a record's fields become the columns; any other array becomes
/// one column named `""` (as `ak.to_parquet` does).
pub fn to_record_batch(layout: &Layout) -> Result<RecordBatch> {
    let arr = to_arrow(layout)?;
    let inner = strip(layout);
    let named = match inner {
        Layout::Table(t) => t.view.is_none() && !t.fields.is_empty(),
        Layout::Record(r) => r.fields.is_some() && !r.contents.is_empty(),
        _ => false,
    };
    if named {
        if let Some(s) = arr.as_any().downcast_ref::<StructArray>() {
            let schema = Arc::new(Schema::new(s.fields().clone()));
            return RecordBatch::try_new(schema, s.columns().to_vec()).map_err(arrow_err);
        }
    }
    let schema = Arc::new(Schema::new(vec![Field::new(
        "",
        arr.data_type().clone(),
        nullable(layout),
    )]));
    RecordBatch::try_new(schema, vec![arr]).map_err(arrow_err)
}

fn strip(mut l: &Layout) -> &Layout {
    while let Layout::Parameters(p) = l {
        l = &p.content;
    }
    l
}

/// Writes `layout` as an Arrow IPC stream (one record batch, see [`to_record_batch`]),
/// atomically; pyarrow reads it with `pa.ipc.open_stream`.
pub fn write_ipc_stream(layout: &Layout, path: impl AsRef<std::path::Path>) -> Result<()> {
    let path = path.as_ref();
    let batch = to_record_batch(layout)?;
    let mut failure = None;
    crate::store::write_atomic(path, true, |file| {
        let run = || -> std::result::Result<(), arrow_schema::ArrowError> {
            let mut w =
                arrow_ipc::writer::StreamWriter::try_new(file.try_clone()?, &batch.schema())?;
            w.write(&batch)?;
            w.finish()
        };
        run().map_err(|e| {
            failure = Some(arrow_err(e));
            std::io::Error::other("Arrow IPC write failed")
        })
    })
    .map_err(|e| failure.take().unwrap_or(e))
}

/// Reads an Arrow IPC stream (every batch, concatenated) as one layout (see
/// [`from_record_batch`]). The IPC reader checks the buffers against the messages.
pub fn read_ipc_stream(path: impl AsRef<std::path::Path>) -> Result<Layout> {
    let path = path.as_ref();
    let file = std::fs::File::open(path).map_err(|e| Error::io(path.display(), e))?;
    let reader = arrow_ipc::reader::StreamReader::try_new(std::io::BufReader::new(file), None)
        .map_err(arrow_err)?;
    let schema = reader.schema();
    let mut batches = reader
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(arrow_err)?;
    let batch = if batches.len() == 1 {
        batches.remove(0)
    } else {
        arrow_select::concat::concat_batches(&schema, &batches).map_err(arrow_err)?
    };
    from_record_batch(&batch)
}

/// A record batch as a layout: one column named `""` is that column's array; otherwise a
/// record of the columns.
pub fn from_record_batch(batch: &RecordBatch) -> Result<Layout> {
    let schema = batch.schema();
    if batch.num_columns() == 1 && schema.field(0).name().is_empty() {
        return from_arrow(batch.column(0).as_ref());
    }
    let s = StructArray::from(batch.clone());
    from_arrow(&s)
}

/// An Arrow array as a layout (see the module documentation for the mapping).
pub fn from_arrow(a: &dyn Array) -> Result<Layout> {
    let l = back(a, 0)?;
    // arrow-rs validates arrays it builds from files; this also covers hand-built ones.
    l.validate()?;
    Ok(l)
}

fn leaf(data: Buffer) -> Layout {
    Layout::Numpy(NumpyArray::from_vec(data))
}

fn values<T: arrow_array::types::ArrowPrimitiveType>(a: &dyn Array) -> Result<Vec<T::Native>> {
    a.as_any()
        .downcast_ref::<PrimitiveArray<T>>()
        .map(|p| p.values().to_vec())
        .ok_or_else(|| unsupported(format!("unexpected array for {}", a.data_type())))
}

fn time(a: &dyn Array, unit: &TimeUnit, datetime: bool) -> Result<Layout> {
    let (v, u) = match (unit, datetime) {
        (TimeUnit::Second, true) => (values::<TimestampSecondType>(a)?, "s"),
        (TimeUnit::Millisecond, true) => (values::<TimestampMillisecondType>(a)?, "ms"),
        (TimeUnit::Microsecond, true) => (values::<TimestampMicrosecondType>(a)?, "us"),
        (TimeUnit::Nanosecond, true) => (values::<TimestampNanosecondType>(a)?, "ns"),
        (TimeUnit::Second, false) => (values::<DurationSecondType>(a)?, "s"),
        (TimeUnit::Millisecond, false) => (values::<DurationMillisecondType>(a)?, "ms"),
        (TimeUnit::Microsecond, false) => (values::<DurationMicrosecondType>(a)?, "us"),
        (TimeUnit::Nanosecond, false) => (values::<DurationNanosecondType>(a)?, "ns"),
    };
    let prim = if datetime {
        Primitive::DateTime64(u.into())
    } else {
        Primitive::TimeDelta64(u.into())
    };
    NumpyArray::with_primitive(prim, Buffer::I64(v), vec![])
        .map(Layout::Numpy)
        .ok_or_else(|| unsupported("time values"))
}

fn offsets_i64<O: arrow_array::OffsetSizeTrait>(o: &OffsetBuffer<O>) -> Vec<i64> {
    o.iter().map(|x| x.as_usize() as i64).collect()
}

fn back(a: &dyn Array, depth: usize) -> Result<Layout> {
    if depth > crate::layout::MAX_NESTING {
        return Err(unsupported("nesting too deep"));
    }
    let content = values_of(a, depth + 1)?;
    // Missing values: a bit-packed validity, as awkward's from_arrow builds (LSB order).
    match a.logical_nulls() {
        Some(n) if n.null_count() > 0 && !matches!(a.data_type(), DataType::Null) => {
            let bits: Vec<bool> = n.iter().collect();
            let mut mask = vec![0u8; bits.len().div_ceil(8)];
            for (i, &v) in bits.iter().enumerate() {
                if v {
                    mask[i / 8] |= 1 << (i % 8);
                }
            }
            Ok(Layout::BitMasked(BitMaskedArray {
                mask,
                content: Arc::new(content),
                masked_when: false,
                lsb_order: true,
            }))
        }
        _ => Ok(content),
    }
}

/// The values of `a` (validity aside): one arm per Arrow type.
fn values_of(a: &dyn Array, d: usize) -> Result<Layout> {
    use arrow_array::cast::AsArray;
    Ok(match a.data_type() {
        DataType::Null => nulls_from_arrow(a.len()),
        DataType::Boolean => leaf(Buffer::Bool(a.as_boolean().values().iter().collect())),
        DataType::Int8 => leaf(Buffer::I8(values::<Int8Type>(a)?)),
        DataType::UInt8 => leaf(Buffer::U8(values::<UInt8Type>(a)?)),
        DataType::Int16 => leaf(Buffer::I16(values::<Int16Type>(a)?)),
        DataType::UInt16 => leaf(Buffer::U16(values::<UInt16Type>(a)?)),
        DataType::Int32 => leaf(Buffer::I32(values::<Int32Type>(a)?)),
        DataType::UInt32 => leaf(Buffer::U32(values::<UInt32Type>(a)?)),
        DataType::Int64 => leaf(Buffer::I64(values::<Int64Type>(a)?)),
        DataType::UInt64 => leaf(Buffer::U64(values::<UInt64Type>(a)?)),
        DataType::Float16 => leaf(Buffer::F16(values::<Float16Type>(a)?)),
        DataType::Float32 => leaf(Buffer::F32(values::<Float32Type>(a)?)),
        DataType::Float64 => leaf(Buffer::F64(values::<Float64Type>(a)?)),
        DataType::Timestamp(u, _) => time(a, u, true)?,
        DataType::Duration(u) => time(a, u, false)?,
        DataType::LargeList(_) => {
            let l = a.as_list::<i64>();
            jagged(offsets_i64(l.offsets()), l.values().as_ref(), d)?
        }
        DataType::List(_) => {
            let l = a.as_list::<i32>();
            jagged(offsets_i64(l.offsets()), l.values().as_ref(), d)?
        }
        DataType::FixedSizeList(_, n) => {
            let l = a.as_fixed_size_list();
            Layout::Regular(RegularArray {
                size: usize::try_from(*n).map_err(|_| unsupported("negative list size"))?,
                length: l.len(),
                content: Arc::new(back(l.values().as_ref(), d)?),
            })
        }
        DataType::LargeUtf8 => {
            let s = a.as_string::<i64>();
            string(offsets_i64(s.offsets()), s.values().to_vec(), true)
        }
        DataType::Utf8 => {
            let s = a.as_string::<i32>();
            string(offsets_i64(s.offsets()), s.values().to_vec(), true)
        }
        DataType::LargeBinary => {
            let s = a.as_binary::<i64>();
            string(offsets_i64(s.offsets()), s.values().to_vec(), false)
        }
        DataType::Binary => {
            let s = a.as_binary::<i32>();
            string(offsets_i64(s.offsets()), s.values().to_vec(), false)
        }
        DataType::Struct(fields) => struct_from_arrow(a.as_struct(), fields, d)?,
        DataType::Union(fields, _) => union_from_arrow(a, fields, d)?,
        DataType::Dictionary(_, _) => dictionary_from_arrow(a.as_any_dictionary(), d)?,
        other => return Err(unsupported(format!("Arrow type {other}"))),
    })
}

/// An Arrow null array of `len` entries: an empty layout, or all entries missing.
fn nulls_from_arrow(len: usize) -> Layout {
    if len == 0 {
        return Layout::Empty(EmptyArray);
    }
    Layout::IndexedMasked(IndexedMaskedArray {
        index: vec![-1; len],
        content: Arc::new(Layout::Empty(EmptyArray)),
        masked_when: -1,
    })
}

/// An Arrow struct array: a record of its columns.
fn struct_from_arrow(s: &StructArray, fields: &Fields, d: usize) -> Result<Layout> {
    let mut contents = Vec::with_capacity(fields.len());
    for c in s.columns() {
        contents.push(Arc::new(back(c.as_ref(), d)?));
    }
    Ok(Layout::Record(RecordArray {
        fields: Some(fields.iter().map(|f| f.name().clone()).collect()),
        contents,
        length: s.len(),
    }))
}

/// An Arrow union (dense or sparse): a union of its children, tags renumbered in field order.
fn union_from_arrow(a: &dyn Array, fields: &UnionFields, d: usize) -> Result<Layout> {
    let u = a
        .as_any()
        .downcast_ref::<ArrowUnion>()
        .ok_or_else(|| unsupported("union"))?;
    let ids: Vec<i8> = fields.iter().map(|(id, _)| id).collect();
    let mut contents = Vec::with_capacity(ids.len());
    for &id in &ids {
        contents.push(Arc::new(back(u.child(id).as_ref(), d)?));
    }
    let mut tags = Vec::with_capacity(u.len());
    for &t in u.type_ids().iter() {
        let k = ids
            .iter()
            .position(|&x| x == t)
            .ok_or_else(|| unsupported("union type id"))?;
        tags.push(k as u8);
    }
    let index: Vec<i64> = match u.offsets() {
        Some(o) => o.iter().map(|&x| x as i64).collect(),
        None => (0..u.len() as i64).collect(),
    };
    Ok(Layout::Union(UnionArray {
        tags,
        index,
        contents,
    }))
}

/// An Arrow dictionary: a categorical (`__array__: categorical`) indexed array over its values.
fn dictionary_from_arrow(dict: &dyn arrow_array::AnyDictionaryArray, d: usize) -> Result<Layout> {
    let keys = arrow_cast_keys(dict.keys())?;
    let values = Arc::new(back(dict.values().as_ref(), d)?);
    let index = Layout::Indexed(IndexedArray {
        index: keys,
        content: values,
    });
    let mut parameters = Map::new();
    parameters.insert("__array__".into(), json!("categorical"));
    Ok(Layout::Parameters(Parameterized {
        parameters,
        content: Arc::new(index),
    }))
}

/// Dictionary keys as `i64` (missing keys point at 0; the validity marks them).
fn arrow_cast_keys(keys: &dyn Array) -> Result<Vec<i64>> {
    let v: Vec<i64> = match keys.data_type() {
        DataType::Int8 => values::<Int8Type>(keys)?
            .into_iter()
            .map(i64::from)
            .collect(),
        DataType::Int16 => values::<Int16Type>(keys)?
            .into_iter()
            .map(i64::from)
            .collect(),
        DataType::Int32 => values::<Int32Type>(keys)?
            .into_iter()
            .map(i64::from)
            .collect(),
        DataType::Int64 => values::<Int64Type>(keys)?,
        DataType::UInt8 => values::<UInt8Type>(keys)?
            .into_iter()
            .map(i64::from)
            .collect(),
        DataType::UInt16 => values::<UInt16Type>(keys)?
            .into_iter()
            .map(i64::from)
            .collect(),
        DataType::UInt32 => values::<UInt32Type>(keys)?
            .into_iter()
            .map(i64::from)
            .collect(),
        other => return Err(unsupported(format!("dictionary keys of type {other}"))),
    };
    let nulls = keys.logical_nulls();
    Ok(v.into_iter()
        .enumerate()
        .map(|(i, k)| {
            if nulls.as_ref().is_some_and(|n| n.is_null(i)) {
                0
            } else {
                k
            }
        })
        .collect())
}

fn jagged(offsets: Vec<i64>, values: &dyn Array, d: usize) -> Result<Layout> {
    Ok(Layout::Jagged(JaggedArray {
        index: ListIndex::Offsets(offsets),
        content: Arc::new(back(values, d)?),
    }))
}

fn string(offsets: Vec<i64>, content: Vec<u8>, text: bool) -> Layout {
    Layout::String(StringArray {
        index: ListIndex::Offsets(offsets),
        content,
        encoding: text.then(|| "utf-8".to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_round_trips_by_value() {
        let cases = [
            json!([1.5, 2.5]),
            json!([[1, 2], [], [3]]),
            json!(["a", "", "héllo"]),
            json!([{"x": 1, "y": [true]}, {"x": 2, "y": []}]),
            json!([1, null, 3]),
            json!([[1.5], null, []]),
            json!([1, "a", [2.5]]),
            json!([{"a": null}, null]),
        ];
        for j in cases {
            let l = Layout::from_json(&j).unwrap();
            let a = to_arrow(&l).unwrap();
            let back = from_arrow(a.as_ref()).unwrap();
            assert_eq!(back.to_json().unwrap(), j, "{j}");
            let b = to_record_batch(&l).unwrap();
            assert_eq!(from_record_batch(&b).unwrap().to_json().unwrap(), j, "{j}");
        }
    }
}
