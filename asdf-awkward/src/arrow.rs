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
//! are copied once into the layout's typed vectors and back.
//!
//! What Arrow's types cannot say (parameters such as `__record__` and `__doc__`, tuples, option
//! types without missing values) travels in awkward 2's own metadata, written and read as awkward
//! 2 does: as `awkward` extension types on the fields of a record batch
//! ([`to_record_batch_with_extensions`], IPC streams), or in the schema's
//! `awkward_array_metadata` ([`to_record_batch`], Parquet). Like `ak.to_arrow`'s default, a
//! categorical is written as its values, without its parameter.

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

use std::collections::HashMap;

use crate::arrow_meta as meta;
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
/// one column named `""` (as `ak.to_parquet` does). The schema carries awkward 2's metadata as
/// `ak.to_parquet` writes it (`awkward_array_metadata`, and `ak:parameters` for a record), so
/// parameters, tuples and option types survive a Parquet round trip.
pub fn to_record_batch(layout: &Layout) -> Result<RecordBatch> {
    let (batch, columns, record) = described_batch(layout)?;
    let mut metadata = HashMap::from([meta::columns_entry(&columns)]);
    metadata.extend(record.as_ref().map(meta::record_entry));
    let schema = batch.schema().as_ref().clone().with_metadata(metadata);
    batch.with_schema(Arc::new(schema)).map_err(arrow_err)
}

/// The layout as a record batch whose fields are awkward 2's `awkward` extension type, as
/// `ak.to_arrow_table` makes them: each field carries its node's metadata, so `ak.from_arrow`
/// restores parameters, tuples and option types.
///
/// ```
/// use asdf_awkward::{arrow::{from_record_batch, to_record_batch_with_extensions}, Layout};
/// let lists = Layout::from_json(&serde_json::json!([[1, 2], [], [3]])).unwrap();
/// let mut doc = serde_json::Map::new();
/// doc.insert("__doc__".into(), "hits per event".into());
/// let a = lists.with_parameters(doc);
/// let batch = to_record_batch_with_extensions(&a).unwrap();
/// assert_eq!(batch.schema().field(0).metadata()["ARROW:extension:name"], "awkward");
/// assert_eq!(from_record_batch(&batch).unwrap(), a);
/// ```
pub fn to_record_batch_with_extensions(layout: &Layout) -> Result<RecordBatch> {
    let (batch, columns, record) = described_batch(layout)?;
    let mut fields = Vec::with_capacity(columns.len());
    let mut arrays = Vec::with_capacity(columns.len());
    for ((f, a), m) in batch
        .schema()
        .fields()
        .iter()
        .zip(batch.columns())
        .zip(&columns)
    {
        let field = m.extension_field(f)?;
        arrays.push(make_array(meta::retype(a.to_data(), field.data_type())?));
        fields.push(field);
    }
    let metadata = HashMap::from_iter(record.as_ref().map(meta::record_entry));
    let schema = Arc::new(Schema::new_with_metadata(fields, metadata));
    RecordBatch::try_new(schema, arrays).map_err(arrow_err)
}

/// Whether `schema` carries awkward 2's metadata: Parquet's schema key, or `awkward`
/// extension types on its fields.
pub fn has_awkward_metadata(schema: &Schema) -> bool {
    meta::is_described(schema)
}

/// The plain record batch of [`to_record_batch`], what awkward 2 records about each column, and
/// for a record split into columns, the record's parameters.
fn described_batch(
    layout: &Layout,
) -> Result<(RecordBatch, Vec<meta::NodeMeta>, Option<meta::Params>)> {
    let arr = to_arrow(layout)?;
    let mut params = meta::Params::new();
    let mut inner = layout;
    while let Layout::Parameters(p) = inner {
        params.extend(p.parameters.iter().map(|(k, v)| (k.clone(), v.clone())));
        inner = &p.content;
    }
    let named = match inner {
        Layout::Table(t) => t.view.is_none() && !t.fields.is_empty(),
        Layout::Record(r) => r.fields.is_some() && !r.contents.is_empty(),
        _ => false,
    };
    if let (true, Some(s)) = (named, arr.as_any().downcast_ref::<StructArray>()) {
        let columns = s
            .fields()
            .iter()
            .zip(meta::contents_of(inner))
            .map(|(f, c)| meta::describe(c, f.name(), f.data_type()))
            .collect();
        let schema = Arc::new(Schema::new(s.fields().clone()));
        let batch = RecordBatch::try_new(schema, s.columns().to_vec()).map_err(arrow_err)?;
        return Ok((batch, columns, Some(params)));
    }
    let column = meta::describe(layout, "", arr.data_type());
    let schema = Arc::new(Schema::new(vec![Field::new(
        "",
        arr.data_type().clone(),
        nullable(layout),
    )]));
    let batch = RecordBatch::try_new(schema, vec![arr]).map_err(arrow_err)?;
    Ok((batch, vec![column], None))
}

/// Writes `layout` as an Arrow IPC stream (one record batch of awkward extension types, see
/// [`to_record_batch_with_extensions`]), atomically; pyarrow reads it with `pa.ipc.open_stream`,
/// and `ak.from_arrow` restores awkward's parameters from it.
pub fn write_ipc_stream(layout: &Layout, path: impl AsRef<std::path::Path>) -> Result<()> {
    write_ipc_stream_with(layout, path, array_core::Durability::Synced)
}

/// [`write_ipc_stream`], waiting for the disk or not as `durability` says (a file replaced is
/// synced either way).
pub fn write_ipc_stream_with(
    layout: &Layout,
    path: impl AsRef<std::path::Path>,
    durability: array_core::Durability,
) -> Result<()> {
    let path = path.as_ref();
    let batch = to_record_batch_with_extensions(layout)?;
    let mut failure = None;
    crate::store::write_atomic(path, true, durability, |file| {
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
    let batches = reader
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(arrow_err)?;
    from_record_batches(&schema, &batches)
}

/// A record batch as a layout: one column named `""` is that column's array; otherwise a
/// record of the columns.
pub fn from_record_batch(batch: &RecordBatch) -> Result<Layout> {
    from_record_batches(&batch.schema(), std::slice::from_ref(batch))
}

/// Record batches of one schema, in order, as one layout (see [`from_record_batch`]): each
/// column is converted from its pieces with [`from_arrow_parts`], so no concatenated batch is
/// built in between.
pub fn from_record_batches(schema: &Schema, batches: &[RecordBatch]) -> Result<Layout> {
    let rows = batches.iter().map(RecordBatch::num_rows).sum();
    let columns = (0..schema.fields().len())
        .map(|c| Column::Pieces(batches.iter().map(|b| b.column(c).as_ref()).collect()))
        .collect();
    from_column_pieces(schema, columns, rows)
}

/// One column of a table on its way to a layout: its Arrow arrays in order (none: an empty
/// column), or the layout a reader already built for it (without awkward's metadata applied).
pub(crate) enum Column<'a> {
    Pieces(Vec<&'a dyn Array>),
    Plain(Layout),
}

/// A table from each of its columns, `rows` long: the columns given as pieces are converted
/// in parallel with [`from_arrow_parts`], then every column gets what awkward's metadata says
/// of it and the table is laid out as [`from_record_batch`] does.
pub(crate) fn from_column_pieces(
    schema: &Schema,
    columns: Vec<Column<'_>>,
    rows: usize,
) -> Result<Layout> {
    use rayon::prelude::*;
    let table = meta::TableMeta::of(schema)?;
    let layouts = columns
        .into_par_iter()
        .zip(&table.columns)
        .enumerate()
        .map(|(c, (column, m))| {
            let field = schema.field(c);
            let plain = match column {
                Column::Pieces(p) if p.is_empty() => {
                    from_arrow(arrow_array::new_empty_array(field.data_type()).as_ref())
                }
                Column::Pieces(parts) => from_arrow_parts(&parts),
                Column::Plain(l) => l.validate().map(|()| l),
            }?;
            meta::annotate(plain, m, &format!("column {:?}", field.name()), 0)
        })
        .collect::<Result<Vec<_>>>()?;
    from_columns(schema, &table, layouts, rows)
}

/// The layout of a table whose columns are already layouts (`rows` long each, in `schema`'s
/// order): the column itself when it is the one column named `""`, as `ak.to_parquet` writes
/// non-record arrays; otherwise a record of the columns, with what awkward's metadata records
/// of it (its parameters; rows missing where every column is, for an optional record).
fn from_columns(
    schema: &Schema,
    table: &meta::TableMeta,
    mut columns: Vec<Layout>,
    rows: usize,
) -> Result<Layout> {
    if let Some(c) = columns.iter().position(|c| c.len() != rows) {
        return Err(unsupported(format!(
            "column {:?} has {} rows, the table {rows}",
            schema.field(c).name(),
            columns[c].len()
        )));
    }
    if columns.len() == 1 && schema.field(0).name().is_empty() {
        return Ok(columns.remove(0));
    }
    Ok(table.record(schema, columns, rows))
}

/// An Arrow array as a layout (see the module documentation for the mapping).
pub fn from_arrow(a: &dyn Array) -> Result<Layout> {
    from_arrow_parts(&[a])
}

/// Arrow arrays of one type, in order, as one layout: what [`from_arrow`] gives on their
/// concatenation, with each value copied once, straight into the layout (primitives, booleans,
/// times, lists, strings, binaries and structs of them; other types are concatenated by Arrow
/// first). A column decoded in pieces (Parquet row groups, IPC batches) comes back this way.
///
/// ```
/// use arrow_array::{Array, Float64Array};
/// use asdf_awkward::arrow::from_arrow_parts;
/// let (a, b) = (Float64Array::from(vec![1.0, 2.0]), Float64Array::from(vec![3.0]));
/// let l = from_arrow_parts(&[&a as &dyn Array, &b]).unwrap();
/// assert_eq!(l.to_json().unwrap(), serde_json::json!([1.0, 2.0, 3.0]));
/// ```
pub fn from_arrow_parts(parts: &[&dyn Array]) -> Result<Layout> {
    let first = parts
        .first()
        .ok_or_else(|| unsupported("no arrays to convert"))?;
    if let Some(p) = parts.iter().find(|p| p.data_type() != first.data_type()) {
        return Err(unsupported(format!(
            "pieces of one column have types {} and {}",
            first.data_type(),
            p.data_type()
        )));
    }
    let l = back(parts, 0)?;
    // arrow-rs validates arrays it builds from files; this also covers hand-built ones.
    l.validate()?;
    Ok(l)
}

/// A layout of numbers (or bytes, or booleans): what an Arrow array of a primitive type is.
pub(crate) fn leaf(data: Buffer) -> Layout {
    Layout::Numpy(NumpyArray::from_vec(data))
}

/// A jagged array of `content` at `offsets`: what an Arrow list array is.
pub(crate) fn jagged(offsets: Vec<i64>, content: Layout) -> Layout {
    Layout::Jagged(JaggedArray {
        index: ListIndex::Offsets(offsets),
        content: Arc::new(content),
    })
}

/// The values of every piece, concatenated: one copy, the pieces copied in parallel.
fn values<T: arrow_array::types::ArrowPrimitiveType>(
    parts: &[&dyn Array],
) -> Result<Vec<T::Native>> {
    let arrays = downcast_all::<PrimitiveArray<T>>(parts)?;
    let slices: Vec<&[T::Native]> = arrays.iter().map(|p| p.values().as_ref()).collect();
    let mut out = vec![T::Native::default(); slices.iter().map(|s| s.len()).sum()];
    array_core::advise_huge_pages(&out);
    fill_in_parallel(
        &mut out,
        &slices,
        |s| s.len(),
        |dst, src| dst.copy_from_slice(src),
    );
    Ok(out)
}

/// Every piece as the concrete array type `A` its data type promises.
fn downcast_all<'a, A: Array + 'static>(parts: &[&'a dyn Array]) -> Result<Vec<&'a A>> {
    parts
        .iter()
        .map(|p| {
            p.as_any()
                .downcast_ref::<A>()
                .ok_or_else(|| unsupported(format!("unexpected array for {}", p.data_type())))
        })
        .collect()
}

/// Fills consecutive stretches of `out`, one per source and `len(source)` long, with
/// `fill(stretch, source)` on the rayon pool.
fn fill_in_parallel<T: Send, S: Sync>(
    out: &mut [T],
    sources: &[S],
    len: impl Fn(&S) -> usize,
    fill: impl Fn(&mut [T], &S) + Sync,
) {
    use rayon::prelude::*;
    let mut rest = out;
    let mut jobs = Vec::with_capacity(sources.len());
    for s in sources {
        let (dst, tail) = std::mem::take(&mut rest).split_at_mut(len(s));
        jobs.push((dst, s));
        rest = tail;
    }
    jobs.into_par_iter().for_each(|(dst, s)| fill(dst, s));
}

fn time(parts: &[&dyn Array], unit: &TimeUnit, datetime: bool) -> Result<Layout> {
    let (v, u) = match (unit, datetime) {
        (TimeUnit::Second, true) => (values::<TimestampSecondType>(parts)?, "s"),
        (TimeUnit::Millisecond, true) => (values::<TimestampMillisecondType>(parts)?, "ms"),
        (TimeUnit::Microsecond, true) => (values::<TimestampMicrosecondType>(parts)?, "us"),
        (TimeUnit::Nanosecond, true) => (values::<TimestampNanosecondType>(parts)?, "ns"),
        (TimeUnit::Second, false) => (values::<DurationSecondType>(parts)?, "s"),
        (TimeUnit::Millisecond, false) => (values::<DurationMillisecondType>(parts)?, "ms"),
        (TimeUnit::Microsecond, false) => (values::<DurationMicrosecondType>(parts)?, "us"),
        (TimeUnit::Nanosecond, false) => (values::<DurationNanosecondType>(parts)?, "ns"),
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

/// Whether pieces of this type are converted piece by piece (see [`from_arrow_parts`]).
fn piecewise(t: &DataType) -> bool {
    t.is_primitive()
        || matches!(
            t,
            DataType::Boolean
                | DataType::List(_)
                | DataType::LargeList(_)
                | DataType::Utf8
                | DataType::LargeUtf8
                | DataType::Binary
                | DataType::LargeBinary
                | DataType::Struct(_)
        )
}

/// Pieces of one type as one layout: their values, under a validity mask when any is missing.
fn back(parts: &[&dyn Array], depth: usize) -> Result<Layout> {
    if depth > crate::layout::MAX_NESTING {
        return Err(unsupported("nesting too deep"));
    }
    let Some(first) = parts.first() else {
        return Err(unsupported("no arrays to convert"));
    };
    if parts.len() > 1 && !piecewise(first.data_type()) {
        let whole = arrow_select::concat::concat(parts).map_err(arrow_err)?;
        return back(&[whole.as_ref()], depth);
    }
    let content = values_of(parts, depth + 1)?;
    if matches!(first.data_type(), DataType::Null) {
        return Ok(content);
    }
    Ok(match validity_mask(parts) {
        // Missing values: a bit-packed validity, as awkward's from_arrow builds (LSB order).
        Some(mask) => Layout::BitMasked(BitMaskedArray {
            mask,
            content: Arc::new(content),
            masked_when: false,
            lsb_order: true,
        }),
        None => content,
    })
}

/// The pieces' validity as one LSB-first bit mask (1 = present), or `None` when none is missing.
fn validity_mask(parts: &[&dyn Array]) -> Option<Vec<u8>> {
    let nulls: Vec<Option<NullBuffer>> = parts.iter().map(|p| p.logical_nulls()).collect();
    if !nulls.iter().flatten().any(|n| n.null_count() > 0) {
        return None;
    }
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let mut mask = vec![0u8; total.div_ceil(8)];
    let mut i = 0;
    for (p, n) in parts.iter().zip(&nulls) {
        for k in 0..p.len() {
            if n.as_ref().is_none_or(|n| n.is_valid(k)) {
                mask[i / 8] |= 1 << (i % 8);
            }
            i += 1;
        }
    }
    Some(mask)
}

/// The values of the pieces (validity aside): one arm per Arrow type. Types that are not
/// [`piecewise`] come here as one piece.
fn values_of(parts: &[&dyn Array], d: usize) -> Result<Layout> {
    use arrow_array::cast::AsArray;
    let a = parts[0];
    let len = parts.iter().map(|p| p.len()).sum();
    Ok(match a.data_type() {
        DataType::Null => nulls_from_arrow(len),
        DataType::Boolean => leaf(Buffer::Bool(
            downcast_all::<BooleanArray>(parts)?
                .iter()
                .flat_map(|p| p.values().iter())
                .collect(),
        )),
        DataType::Int8 => leaf(Buffer::I8(values::<Int8Type>(parts)?)),
        DataType::UInt8 => leaf(Buffer::U8(values::<UInt8Type>(parts)?)),
        DataType::Int16 => leaf(Buffer::I16(values::<Int16Type>(parts)?)),
        DataType::UInt16 => leaf(Buffer::U16(values::<UInt16Type>(parts)?)),
        DataType::Int32 => leaf(Buffer::I32(values::<Int32Type>(parts)?)),
        DataType::UInt32 => leaf(Buffer::U32(values::<UInt32Type>(parts)?)),
        DataType::Int64 => leaf(Buffer::I64(values::<Int64Type>(parts)?)),
        DataType::UInt64 => leaf(Buffer::U64(values::<UInt64Type>(parts)?)),
        DataType::Float16 => leaf(Buffer::F16(values::<Float16Type>(parts)?)),
        DataType::Float32 => leaf(Buffer::F32(values::<Float32Type>(parts)?)),
        DataType::Float64 => leaf(Buffer::F64(values::<Float64Type>(parts)?)),
        DataType::Timestamp(u, _) => time(parts, u, true)?,
        DataType::Duration(u) => time(parts, u, false)?,
        DataType::LargeList(_) => lists::<i64>(parts, d)?,
        DataType::List(_) => lists::<i32>(parts, d)?,
        DataType::FixedSizeList(_, n) => {
            let l = a.as_fixed_size_list();
            Layout::Regular(RegularArray {
                size: usize::try_from(*n).map_err(|_| unsupported("negative list size"))?,
                length: l.len(),
                content: Arc::new(back(&[l.values().as_ref()], d)?),
            })
        }
        DataType::LargeUtf8 => bytes::<arrow_array::types::LargeUtf8Type>(parts, true)?,
        DataType::Utf8 => bytes::<arrow_array::types::Utf8Type>(parts, true)?,
        DataType::LargeBinary => bytes::<arrow_array::types::LargeBinaryType>(parts, false)?,
        DataType::Binary => bytes::<arrow_array::types::BinaryType>(parts, false)?,
        DataType::Struct(fields) => struct_from_arrow(parts, fields, d)?,
        DataType::Union(fields, _) => union_from_arrow(a, fields, d)?,
        DataType::Dictionary(_, _) => dictionary_from_arrow(a.as_any_dictionary(), d)?,
        other => return Err(unsupported(format!("Arrow type {other}"))),
    })
}

/// Offsets of every piece rebased onto one another (each piece's first offset may be past 0),
/// and for each piece the range of its values they cover.
fn joined_offsets<O: arrow_array::OffsetSizeTrait>(
    pieces: &[&OffsetBuffer<O>],
) -> (Vec<i64>, Vec<(usize, usize)>) {
    // Per piece: its offsets after the first, and what to add to each.
    let mut jobs = Vec::with_capacity(pieces.len());
    let mut ranges = Vec::with_capacity(pieces.len());
    let mut base = 0i64;
    for o in pieces {
        let (start, end) = (o[0].as_usize(), o[o.len() - 1].as_usize());
        jobs.push((&o[1..], base - start as i64));
        base += (end - start) as i64;
        ranges.push((start, end - start));
    }
    let mut out = vec![0i64; jobs.iter().map(|j| j.0.len()).sum::<usize>() + 1];
    array_core::advise_huge_pages(&out);
    fill_in_parallel(
        &mut out[1..],
        &jobs,
        |j| j.0.len(),
        |dst, (src, shift)| {
            for (d, s) in dst.iter_mut().zip(src.iter()) {
                *d = s.as_usize() as i64 + shift;
            }
        },
    );
    (out, ranges)
}

/// List pieces (`List` or `LargeList`) as one jagged array.
fn lists<O: arrow_array::OffsetSizeTrait>(parts: &[&dyn Array], d: usize) -> Result<Layout> {
    let lists = downcast_all::<arrow_array::GenericListArray<O>>(parts)?;
    let offsets: Vec<&OffsetBuffer<O>> = lists.iter().map(|l| l.offsets()).collect();
    let (offsets, ranges) = joined_offsets(&offsets);
    let values: Vec<ArrayRef> = lists
        .iter()
        .zip(&ranges)
        .map(|(l, &(start, len))| l.values().slice(start, len))
        .collect();
    let values: Vec<&dyn Array> = values.iter().map(|v| v.as_ref()).collect();
    Ok(jagged(offsets, back(&values, d)?))
}

/// String or binary pieces as one string array (`text`: UTF-8).
fn bytes<T: arrow_array::types::ByteArrayType>(parts: &[&dyn Array], text: bool) -> Result<Layout> {
    let arrays = downcast_all::<arrow_array::GenericByteArray<T>>(parts)?;
    let offsets: Vec<&OffsetBuffer<T::Offset>> = arrays.iter().map(|a| a.offsets()).collect();
    let (offsets, ranges) = joined_offsets(&offsets);
    let pieces: Vec<&[u8]> = arrays
        .iter()
        .zip(&ranges)
        .map(|(a, &(start, len))| &a.value_data()[start..start + len])
        .collect();
    let mut content = vec![0u8; ranges.iter().map(|r| r.1).sum()];
    fill_in_parallel(
        &mut content,
        &pieces,
        |p| p.len(),
        |dst, src| dst.copy_from_slice(src),
    );
    Ok(string(offsets, content, text))
}

/// Strings (`text`: UTF-8) or byte strings at `offsets` in `content`: what an Arrow string or
/// binary array is.
pub(crate) fn string(offsets: Vec<i64>, content: Vec<u8>, text: bool) -> Layout {
    Layout::String(StringArray {
        index: ListIndex::Offsets(offsets),
        content,
        encoding: text.then(|| "utf-8".to_string()),
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

/// Arrow struct pieces: a record of their columns, each joined from its pieces.
fn struct_from_arrow(parts: &[&dyn Array], fields: &Fields, d: usize) -> Result<Layout> {
    let structs = downcast_all::<StructArray>(parts)?;
    let mut contents = Vec::with_capacity(fields.len());
    for c in 0..fields.len() {
        let column: Vec<&dyn Array> = structs.iter().map(|s| s.column(c).as_ref()).collect();
        contents.push(Arc::new(back(&column, d)?));
    }
    Ok(Layout::Record(RecordArray {
        fields: Some(fields.iter().map(|f| f.name().clone()).collect()),
        contents,
        length: structs.iter().map(|s| s.len()).sum(),
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
        contents.push(Arc::new(back(&[u.child(id).as_ref()], d)?));
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
    let values = Arc::new(back(&[dict.values().as_ref()], d)?);
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
        DataType::Int8 => values::<Int8Type>(&[keys])?
            .into_iter()
            .map(i64::from)
            .collect(),
        DataType::Int16 => values::<Int16Type>(&[keys])?
            .into_iter()
            .map(i64::from)
            .collect(),
        DataType::Int32 => values::<Int32Type>(&[keys])?
            .into_iter()
            .map(i64::from)
            .collect(),
        DataType::Int64 => values::<Int64Type>(&[keys])?,
        DataType::UInt8 => values::<UInt8Type>(&[keys])?
            .into_iter()
            .map(i64::from)
            .collect(),
        DataType::UInt16 => values::<UInt16Type>(&[keys])?
            .into_iter()
            .map(i64::from)
            .collect(),
        DataType::UInt32 => values::<UInt32Type>(&[keys])?
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

    /// Arrays built from JSON and cut into pieces at every boundary: joined piecewise, they must
    /// read as the whole (sliced pieces start their offsets past 0, nulls fall in every piece).
    #[test]
    fn pieces_join_to_the_whole() {
        let cases = [
            json!([1.5, 2.5, 3.5, 4.5]),
            json!([true, false, true]),
            json!([[1, 2], [], [3], [4, 5, 6]]),
            json!([["a"], [], ["bc", "d"], ["e"]]),
            json!(["a", "", "héllo", "xyz"]),
            json!([{"x": 1, "y": [true]}, {"x": 2, "y": []}, {"x": 3, "y": [false]}]),
            json!([1, null, 3, null]),
            json!([[1.5], null, [], [2.5, null]]),
            json!([1, "a", [2.5], 2]),
            json!([{"a": null}, null, {"a": 1}]),
            json!([[[1], []], [], [[2, 3]]]),
        ];
        for j in cases {
            let whole = to_arrow(&Layout::from_json(&j).unwrap()).unwrap();
            let n = whole.len();
            for cut in 0..=n {
                for cut2 in cut..=n {
                    let pieces = [
                        whole.slice(0, cut),
                        whole.slice(cut, cut2 - cut),
                        whole.slice(cut2, n - cut2),
                    ];
                    let parts: Vec<&dyn Array> = pieces.iter().map(|p| p.as_ref()).collect();
                    let got = from_arrow_parts(&parts).unwrap().to_json().unwrap();
                    assert_eq!(got, j, "{j} cut at {cut}, {cut2}");
                }
            }
        }
    }

    #[test]
    fn record_batches_join_and_pieces_must_agree_on_their_type() {
        let l = Layout::from_json(&json!([{"x": 1, "s": "a"}, {"x": 2, "s": "bc"}])).unwrap();
        let b = to_record_batch(&l).unwrap();
        let joined = from_record_batches(&b.schema(), &[b.slice(0, 1), b.slice(1, 1)]).unwrap();
        assert_eq!(joined.to_json().unwrap(), l.to_json().unwrap());
        let empty = from_record_batches(&b.schema(), &[]).unwrap();
        assert_eq!(empty.to_json().unwrap(), json!([]));
        let (f, i) = (
            arrow_array::Float64Array::from(vec![1.0]),
            arrow_array::Int64Array::from(vec![1]),
        );
        let err = from_arrow_parts(&[&f as &dyn Array, &i])
            .unwrap_err()
            .to_string();
        assert!(err.contains("Float64") && err.contains("Int64"), "{err}");
        assert!(from_arrow_parts(&[]).is_err());
    }
}
