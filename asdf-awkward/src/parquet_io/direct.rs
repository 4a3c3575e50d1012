//! Column chunks of the two shapes awkward data takes most — a number per row, or a list of
//! numbers per row — decoded straight from their Parquet levels into Arrow arrays.
//!
//! arrow-rs reads a list column by decoding its leaf with a slot for every level (the levels of
//! empty and null lists included), building the list's offsets and validity from the levels, and
//! filtering the extra slots out again, in batches that are then joined. Here one pass over each
//! batch of definition and repetition levels builds the offsets and validity while the column
//! reader appends the values where they belong, and a row group comes back as one array.
//!
//! A column is read here only when its Parquet schema and its Arrow type agree on one of those
//! shapes ([`plan`]); every other column (records, strings, nested lists, dictionaries, other
//! number types) stays with arrow-rs, and a test holds both readers to the same arrays.

use std::fs::File;
use std::path::Path;
use std::sync::{Arc, Mutex};

use arrow_array::types::{ArrowPrimitiveType, Float32Type, Float64Type, Int32Type, Int64Type};
use arrow_array::{ArrayRef, GenericListArray, OffsetSizeTrait, PrimitiveArray};
use arrow_buffer::{BooleanBufferBuilder, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, FieldRef};
use parquet::arrow::arrow_reader::ArrowReaderMetadata;
use parquet::basic::{ConvertedType, LogicalType, Repetition, Type as Physical};
use parquet::column::reader::{get_column_reader, ColumnReader};
use parquet::data_type::{self as pq, DataType as PqType};
use parquet::errors::{ParquetError, Result};
use parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData};
use parquet::file::serialized_reader::SerializedPageReader;
use parquet::schema::types::Type;
use rayon::prelude::*;

use super::pages::{byte_pages, place_pages, Place, Plain};
use crate::arrow::{jagged, leaf, string};
use crate::layout::Layout;
use crate::numpy::Buffer;

/// Records decoded per call to the column reader: its level buffers stay small and are reused.
const BATCH: usize = 1 << 16;

/// How [`read`] decodes one top-level column.
#[derive(Clone, Debug)]
pub(super) struct Plan {
    /// The column's name, for errors.
    name: String,
    /// The column's one Parquet leaf.
    leaf: usize,
    value: Value,
    /// Whether a row (a number, or a list) may be null.
    nullable: bool,
    /// For a list column: `LargeList` rather than `List`, and the items' field.
    list: Option<(bool, FieldRef)>,
}

#[cfg(test)]
impl Plan {
    /// A plan for a column of `f64` numbers, or lists of them (`list`: large, and the items).
    pub(super) fn for_test(nullable: bool, list: Option<(bool, FieldRef)>) -> Plan {
        let (name, leaf, value) = (String::new(), 0, Value::F64);
        Plan {
            name,
            leaf,
            value,
            nullable,
            list,
        }
    }
}

/// The value types read here: numbers whose Parquet physical type is the Arrow type itself,
/// and strings or byte strings (`BYTE_ARRAY`; UTF-8 checked as arrow-rs checks it).
#[derive(Clone, Copy, Debug)]
enum Value {
    F64,
    F32,
    I64,
    I32,
    Bytes { text: bool },
}

impl Value {
    /// The value `arrow` is when the Parquet leaf `leaf` stores it without conversion.
    fn of(arrow: &DataType, leaf: &Type) -> Option<Value> {
        if !leaf.is_primitive() {
            return None;
        }
        let info = leaf.get_basic_info();
        let (logical, converted) = (info.logical_type_ref(), info.converted_type());
        let int = |bits, c| match logical {
            None => matches!(converted, ConvertedType::NONE) || converted == c,
            Some(l) => *l == LogicalType::integer(bits, true),
        };
        let plain = logical.is_none() && converted == ConvertedType::NONE;
        let text = matches!(logical, Some(LogicalType::String))
            || logical.is_none() && converted == ConvertedType::UTF8;
        Some(match (arrow, leaf.get_physical_type()) {
            (DataType::Float64, Physical::DOUBLE) if plain => Value::F64,
            (DataType::Float32, Physical::FLOAT) if plain => Value::F32,
            (DataType::Int64, Physical::INT64) if int(64, ConvertedType::INT_64) => Value::I64,
            (DataType::Int32, Physical::INT32) if int(32, ConvertedType::INT_32) => Value::I32,
            (DataType::Utf8 | DataType::LargeUtf8, Physical::BYTE_ARRAY) if text => {
                Value::Bytes { text }
            }
            (DataType::Binary | DataType::LargeBinary, Physical::BYTE_ARRAY) if plain => {
                Value::Bytes { text }
            }
            _ => return None,
        })
    }
}

/// Whether a schema node is optional (`Some(true)`), required (`Some(false)`) or repeated.
fn optional(t: &Type) -> Option<bool> {
    let info = t.get_basic_info();
    match info.has_repetition().then(|| info.repetition())? {
        Repetition::OPTIONAL => Some(true),
        Repetition::REQUIRED => Some(false),
        Repetition::REPEATED => None,
    }
}

/// The plan for top-level column `c` (which must exist) when it has one of this module's shapes:
/// a primitive number, or a standard three-level Parquet list of them, with the same
/// nullability in the Parquet schema as in the Arrow one.
pub(super) fn plan(meta: &ArrowReaderMetadata, c: usize) -> Option<Plan> {
    let descr = meta.metadata().file_metadata().schema_descr();
    let mut leaves = (0..descr.num_columns()).filter(|&i| descr.get_column_root_idx(i) == c);
    let (leaf, None) = (leaves.next()?, leaves.next()) else {
        return None;
    };
    let field = meta.schema().fields().get(c)?;
    let root = descr.root_schema().get_fields().get(c)?;
    let nullable = optional(root)?;
    if field.is_nullable() != nullable {
        return None;
    }
    let column = descr.column(leaf);
    let (value, list) = match field.data_type() {
        DataType::List(item) | DataType::LargeList(item) => {
            let [middle] = root.is_group().then(|| root.get_fields())? else {
                return None;
            };
            let [element] = middle.is_group().then(|| middle.get_fields())? else {
                return None;
            };
            let item_nullable = optional(element)?;
            let levels = i16::from(nullable) + 1 + i16::from(item_nullable);
            let repeated = optional(middle).is_none() && column.max_rep_level() == 1;
            if !repeated || item.is_nullable() != item_nullable || column.max_def_level() != levels
            {
                return None;
            }
            let large = matches!(field.data_type(), DataType::LargeList(_));
            (
                Value::of(item.data_type(), element)?,
                Some((large, item.clone())),
            )
        }
        other => {
            let flat = column.max_rep_level() == 0 && column.max_def_level() == i16::from(nullable);
            (Value::of(other, root).filter(|_| flat)?, None)
        }
    };
    // Strings only in a column of them without nulls.
    if matches!(value, Value::Bytes { .. }) && (nullable || list.is_some()) {
        return None;
    }
    Some(Plan {
        name: field.name().clone(),
        leaf,
        value,
        nullable,
        list,
    })
}

/// Row group `g` of the column `plan` describes, read from the file at `path`, as
/// one array; none for a row group of no rows, as arrow-rs gives none. `None` for strings,
/// which are read whole ([`read_whole`]) or by arrow-rs.
pub(super) fn read(
    path: &Path,
    meta: &ArrowReaderMetadata,
    plan: &Plan,
    g: usize,
) -> Result<Option<Vec<ArrayRef>>> {
    if let Value::Bytes { .. } = plan.value {
        return Ok(None);
    }
    let Some((reader, rows, room)) = open_chunk(File::open(path)?, meta.metadata(), plan, g)?
    else {
        return Ok(Some(Vec::new()));
    };
    let array = match plan.value {
        Value::F64 => decode::<pq::DoubleType, Float64Type>(reader, plan, rows, room),
        Value::F32 => decode::<pq::FloatType, Float32Type>(reader, plan, rows, room),
        Value::I64 => decode::<pq::Int64Type, Int64Type>(reader, plan, rows, room),
        Value::I32 => decode::<pq::Int32Type, Int32Type>(reader, plan, rows, room),
        Value::Bytes { .. } => return Ok(None),
    };
    array
        .map(|a| Some(vec![a]))
        .map_err(|e| in_chunk(plan, g, e))
}

/// Row group `g`'s chunk of the column: its reader, its rows and what to reserve for it; none
/// when the row group has no rows.
fn open_chunk(
    file: File,
    md: &ParquetMetaData,
    plan: &Plan,
    g: usize,
) -> Result<Option<(ColumnReader, usize, Reserve)>> {
    let Some((pages, rows, room)) = open_pages(file, md, plan, g)? else {
        return Ok(None);
    };
    let descr = md.file_metadata().schema_descr().column(plan.leaf);
    Ok(Some((
        get_column_reader(descr, Box::new(pages)),
        rows,
        room,
    )))
}

/// Row group `g`'s chunk of the column as pages, with its rows and what to reserve for it; none
/// when the row group has no rows.
fn open_pages(
    file: File,
    md: &ParquetMetaData,
    plan: &Plan,
    g: usize,
) -> Result<Option<(SerializedPageReader<File>, usize, Reserve)>> {
    let group = md.row_group(g);
    let rows = usize::try_from(group.num_rows())
        .map_err(|_| general(format!("row group {g} declares {} rows", group.num_rows())))?;
    if rows == 0 {
        return Ok(None);
    }
    let chunk = group.column(plan.leaf);
    let room = Reserve::of(chunk, rows, file.metadata()?.len(), plan);
    let pages = SerializedPageReader::new(Arc::new(file), chunk, rows, None)?;
    Ok(Some((pages, rows, room)))
}

fn in_chunk(plan: &Plan, g: usize, e: ParquetError) -> ParquetError {
    general(format!("row group {g}, column {:?}: {e}", plan.name))
}

/// The column `plan` describes read whole, straight into one layout's buffers, when it has no
/// nulls and the footer says how many records and items each row group holds: the buffers are
/// allocated once, each row group is decoded by a task into buffers its thread reuses and
/// copied to its place. Reading by row groups and joining them would fill twice as much fresh
/// memory (the kernel zeroes every page first), a quarter of the time on a large column.
///
/// `None` when the footer does not say (no statistics), says more than [`PER_BYTE`] elements
/// per byte of the file, or says other counts than a row group holds: the caller then reads
/// the column by row groups.
pub(super) fn read_whole(
    path: &Path,
    meta: &ArrowReaderMetadata,
    plan: &Plan,
) -> Result<Option<Layout>> {
    let items_nullable = plan.list.as_ref().is_some_and(|(_, f)| f.is_nullable());
    if plan.nullable || items_nullable {
        return Ok(None);
    }
    match plan.value {
        Value::F64 => whole::<pq::DoubleType>(path, meta, plan, Buffer::F64),
        Value::F32 => whole::<pq::FloatType>(path, meta, plan, Buffer::F32),
        Value::I64 => whole::<pq::Int64Type>(path, meta, plan, Buffer::I64),
        Value::I32 => whole::<pq::Int32Type>(path, meta, plan, Buffer::I32),
        Value::Bytes { text } => whole_strings(path, meta, plan, text),
    }
}

/// [`read_whole`] for values of Parquet type `P`, which `wrap` makes a layout's buffer.
fn whole<P: PqType>(
    path: &Path,
    meta: &ArrowReaderMetadata,
    plan: &Plan,
    wrap: fn(Vec<P::T>) -> Buffer,
) -> Result<Option<Layout>>
where
    P::T: Plain,
{
    let md = meta.metadata();
    let Some(counts) = footer_counts(md, plan, std::fs::metadata(path)?.len()) else {
        return Ok(None);
    };
    let list = plan.list.is_some();
    let records: usize = counts.iter().map(|c| c.0).sum();
    let mut values = vec![P::T::default(); counts.iter().map(|c| c.1).sum()];
    let mut offsets = vec![0i64; if list { records + 1 } else { 0 }];
    // Huge pages where the kernel gives them on request: a fault per 2 MiB, not per 4 KiB.
    array_core::advise_huge_pages(&values);
    array_core::advise_huge_pages(&offsets);
    // Each row group's stretch of the values, and of the offsets after the first.
    let (mut rest_v, mut rest_o) = (&mut values[..], offsets.get_mut(1..).unwrap_or_default());
    let mut jobs = Vec::with_capacity(counts.len());
    let mut base = 0;
    for (g, &(rows, slots)) in counts.iter().enumerate() {
        let (v, tail_v) = std::mem::take(&mut rest_v).split_at_mut(slots);
        let (o, tail_o) = std::mem::take(&mut rest_o).split_at_mut(if list { rows } else { 0 });
        jobs.push((g, v, o, base));
        (rest_v, rest_o, base) = (tail_v, tail_o, base + slots);
    }
    // Decoding buffers, each reused by the tasks that follow on its thread (a task's first
    // use of fresh memory costs as much as the copy to its place).
    let spare = Mutex::new(Vec::new());
    let max_def = reader_max_def(plan);
    let placed = jobs
        .into_par_iter()
        .map(|(g, v, o, base)| {
            let popped = spare.lock().map(|mut s| s.pop()).unwrap_or_default();
            let (mut levels, mut scratch) =
                popped.unwrap_or_else(|| (Levels::new(plan, max_def, 0), Vec::new()));
            let buffers = (&mut levels, &mut scratch);
            let placed = place::<P>(path, md, plan, g, buffers, (v, o, base));
            if let Ok(mut s) = spare.lock() {
                s.push((levels, scratch));
            }
            placed
        })
        .collect::<Result<Vec<bool>>>()?;
    if !placed.into_iter().all(|p| p) {
        return Ok(None);
    }
    let content = leaf(wrap(values));
    Ok(Some(if list {
        jagged(offsets, content)
    } else {
        content
    }))
}

/// [`read_whole`] for a column of strings (`text`) or byte strings: each row group's pages read
/// by [`byte_pages`] in parallel, one row group's buffers taken as they are, several joined.
/// `None` when a row group's pages are not all PLAIN or dictionary ones, or the strings are not
/// UTF-8 (arrow-rs then reads the column, and names the error).
fn whole_strings(
    path: &Path,
    meta: &ArrowReaderMetadata,
    plan: &Plan,
    text: bool,
) -> Result<Option<Layout>> {
    let md = meta.metadata();
    let read = (0..md.num_row_groups())
        .into_par_iter()
        .map(|g| {
            let Some((pages, rows, room)) = open_pages(File::open(path)?, md, plan, g)? else {
                return Ok(Some((vec![0], Vec::new())));
            };
            let read = byte_pages(pages, rows, room);
            #[cfg(test)]
            if let Ok(mut tally) = PLACED.lock() {
                tally.push((path.to_path_buf(), read.is_some()));
            }
            Ok(read)
        })
        .collect::<Result<Vec<_>>>()?;
    let Some(mut pieces) = read.into_iter().collect::<Option<Vec<_>>>() else {
        return Ok(None);
    };
    let (offsets, content) = match pieces.len() {
        1 => pieces.pop().unwrap_or_default(),
        _ => join_strings(pieces),
    };
    // As Arrow checks UTF-8: the whole content, and every string starting at a character.
    let starts_char = |&o: &usize| content.get(o).is_none_or(|&b| (b as i8) >= -0x40);
    if text && !(std::str::from_utf8(&content).is_ok() && offsets.iter().all(starts_char)) {
        return Ok(None);
    }
    let offsets = offsets.into_iter().map(|o| o as i64).collect();
    Ok(Some(string(offsets, content, text)))
}

/// Row groups' strings (offsets from 0, and bytes) as one column's.
fn join_strings(pieces: Vec<(Vec<usize>, Vec<u8>)>) -> (Vec<usize>, Vec<u8>) {
    let total = pieces.iter().map(|p| p.1.len()).sum();
    let mut content = Vec::with_capacity(total);
    let mut offsets = Vec::with_capacity(pieces.iter().map(|p| p.0.len()).sum::<usize>());
    offsets.push(0);
    for (o, c) in pieces {
        let base = content.len();
        offsets.extend(o.iter().skip(1).map(|x| x + base));
        content.extend_from_slice(&c);
    }
    (offsets, content)
}

/// The records and items of each row group of the column, as the footer declares them (items
/// of a list column: its levels less those without a value, which the statistics count), or
/// `None` (see [`read_whole`]).
fn footer_counts(md: &ParquetMetaData, plan: &Plan, file_len: u64) -> Option<Vec<(usize, usize)>> {
    let most = most_for(file_len);
    let (mut records, mut slots) = (0usize, 0usize);
    let mut counts = Vec::with_capacity(md.num_row_groups());
    for group in md.row_groups() {
        let rows = usize::try_from(group.num_rows()).ok()?;
        let items = match plan.list {
            None => rows,
            Some(_) => {
                let chunk = group.column(plan.leaf);
                let levels = usize::try_from(chunk.num_values()).ok()?;
                let nulls = usize::try_from(chunk.statistics()?.null_count_opt()?).ok()?;
                levels.checked_sub(nulls)?
            }
        };
        (records, slots) = (records.checked_add(rows)?, slots.checked_add(items)?);
        counts.push((rows, items));
    }
    (records <= most && slots <= most).then_some(counts)
}

/// For each chunk [`place`] was given: its file, and whether its pages placed it (rather than
/// the column reader). Tests read it.
#[cfg(test)]
pub(super) static PLACED: Mutex<Vec<(std::path::PathBuf, bool)>> = Mutex::new(Vec::new());

/// Places row group `g` of the file at `path`: `values`, and `offsets` (its records' ends,
/// shifted by `base`, the items before it). Its pages go straight there when [`pages`] knows
/// them all; otherwise the column reader decodes them into the `scratch` buffers, which are
/// copied there. False when it holds other counts than those places.
fn place<P: PqType>(
    path: &Path,
    md: &ParquetMetaData,
    plan: &Plan,
    g: usize,
    (levels, scratch): (&mut Levels, &mut Vec<P::T>),
    (values, offsets, base): (&mut [P::T], &mut [i64], usize),
) -> Result<bool>
where
    P::T: Plain,
{
    let Some((pages, ..)) = open_pages(File::open(path)?, md, plan, g)? else {
        return Ok(values.is_empty() && offsets.is_empty());
    };
    let ends = plan.list.is_some().then_some(&mut *offsets);
    let base = i64::try_from(base).map_err(|_| general(format!("{base} items")))?;
    let placed = place_pages(
        pages,
        Place {
            values: &mut *values,
            ends,
            base,
        },
    )
    .is_some();
    #[cfg(test)]
    if let Ok(mut tally) = PLACED.lock() {
        tally.push((path.to_path_buf(), placed));
    }
    if placed {
        return Ok(true);
    }
    let Some((reader, rows, _)) = open_chunk(File::open(path)?, md, plan, g)? else {
        return Ok(false);
    };
    levels.reset();
    scratch.clear();
    // The footer's counts, which `footer_counts` bounded by the file's size.
    scratch.reserve(values.len());
    levels.offsets.reserve(offsets.len() + 1);
    decode_into::<P>(reader, levels, scratch).map_err(|e| in_chunk(plan, g, e))?;
    let counts = (levels.records, levels.slots, scratch.len());
    if counts != (rows, values.len(), values.len()) {
        return Ok(false);
    }
    values.copy_from_slice(scratch);
    if plan.list.is_some() {
        // `levels.offsets` holds where each record starts: its ends are the next starts, and
        // the item count.
        let ends = levels.offsets.iter().skip(1).copied();
        let ends = ends.chain([levels.slots as i64]);
        offsets
            .iter_mut()
            .zip(ends)
            .for_each(|(o, e)| *o = e + base);
    }
    Ok(true)
}

/// Capacities reserved before a chunk is decoded, so that its buffers are not copied as they
/// grow: what the footer says the chunk holds, but never more than [`PER_BYTE`] elements per
/// byte of the file, so that a footer cannot reserve more than a small multiple of the file's
/// size. A chunk that holds more (values compressed beyond that) grows its buffers as usual.
#[derive(Clone, Copy, Debug)]
pub(super) struct Reserve {
    pub(super) records: usize,
    slots: usize,
    /// Bytes of strings (the chunk's size decoded).
    pub(super) bytes: usize,
}

/// Elements reserved at most per byte of the file (see [`Reserve`]).
const PER_BYTE: u64 = 16;

/// The most elements a footer may make us reserve for `bytes` bytes of the file.
fn most_for(bytes: u64) -> usize {
    usize::try_from(bytes.saturating_mul(PER_BYTE)).unwrap_or(usize::MAX)
}

impl Reserve {
    fn of(chunk: &ColumnChunkMetaData, rows: usize, file_len: u64, plan: &Plan) -> Reserve {
        let bytes = u64::try_from(chunk.compressed_size())
            .unwrap_or(0)
            .min(file_len);
        let most = most_for(bytes);
        let levels = usize::try_from(chunk.num_values()).unwrap_or(0);
        // Statistics count the levels without a value: null rows, null or empty lists, and
        // null items, which have slots of their own.
        let nulls = chunk.statistics().and_then(|s| s.null_count_opt());
        let items_nullable = plan.list.as_ref().is_some_and(|(_, f)| f.is_nullable());
        let slots = match (items_nullable || plan.list.is_none(), nulls) {
            (false, Some(n)) => levels.saturating_sub(usize::try_from(n).unwrap_or(0)),
            _ => levels,
        };
        let decoded = usize::try_from(chunk.uncompressed_size()).unwrap_or(0);
        Reserve {
            records: rows.min(most),
            slots: slots.min(most),
            bytes: decoded.min(most),
        }
    }
}

fn general(message: String) -> ParquetError {
    ParquetError::General(message)
}

/// Every level and value of one column chunk, `rows` records, as one array.
fn decode<P, A>(reader: ColumnReader, plan: &Plan, rows: usize, room: Reserve) -> Result<ArrayRef>
where
    P: PqType,
    A: ArrowPrimitiveType<Native = P::T>,
    P::T: Copy + Default,
{
    let mut levels = Levels::new(plan, reader_max_def(plan), room.records);
    let mut values = Vec::with_capacity(room.slots);
    decode_into::<P>(reader, &mut levels, &mut values)?;
    levels.finish::<A>(values, rows)
}

/// Every level of one column chunk taken into `levels`, its values appended to `values` (a
/// slot for every item, nulls included).
fn decode_into<P: PqType>(
    reader: ColumnReader,
    levels: &mut Levels,
    values: &mut Vec<P::T>,
) -> Result<()>
where
    P::T: Copy + Default,
{
    let mut reader = P::get_column_reader(reader)
        .ok_or_else(|| general("the column reader is of another type".into()))?;
    let (mut def, mut rep) = (Vec::new(), Vec::new());
    loop {
        def.clear();
        rep.clear();
        let start = values.len();
        let (_, _, read) = reader.read_records(BATCH, Some(&mut def), Some(&mut rep), values)?;
        if read == 0 {
            return Ok(());
        }
        levels.take(read, &def, &rep)?;
        levels.spread(values, start, &def);
    }
}

/// The leaf's maximum definition level, which [`plan`] checked against the schema.
fn reader_max_def(plan: &Plan) -> i16 {
    let item = plan.list.as_ref().map(|(_, f)| f.is_nullable());
    i16::from(plan.nullable) + item.map_or(0, |n| 1 + i16::from(n))
}

/// The offsets and validity a column's levels describe, built one batch at a time.
pub(super) struct Levels {
    max_def: i16,
    /// For a list column: `LargeList` rather than `List`, and the items' field.
    list: Option<(bool, FieldRef)>,
    /// The definition level of a present but empty list (list columns).
    empty: i16,
    /// Where each record's items start (list columns).
    offsets: Vec<i64>,
    /// Validity of the lists, when they may be null.
    lists_valid: Option<BooleanBufferBuilder>,
    /// Validity of the items (a list's items, or the rows of a column of numbers), when they
    /// may be null.
    items_valid: Option<BooleanBufferBuilder>,
    /// Item slots so far.
    pub(super) slots: usize,
    pub(super) records: usize,
    /// Whether the current record is a list that has items (so repetition level 1 may follow).
    open: bool,
}

impl Levels {
    pub(super) fn new(plan: &Plan, max_def: i16, records: usize) -> Levels {
        let builder = |on: bool| on.then(|| BooleanBufferBuilder::new(BATCH));
        let items_nullable = match &plan.list {
            Some((_, item)) => item.is_nullable(),
            None => plan.nullable,
        };
        Levels {
            max_def,
            list: plan.list.clone(),
            empty: i16::from(plan.nullable),
            offsets: Vec::with_capacity(if plan.list.is_some() { records + 1 } else { 0 }),
            lists_valid: builder(plan.list.is_some() && plan.nullable),
            items_valid: builder(items_nullable),
            slots: 0,
            records: 0,
            open: false,
        }
    }

    /// Forgets every level taken, keeping the buffers.
    fn reset(&mut self) {
        self.offsets.clear();
        (self.slots, self.records, self.open) = (0, 0, false);
        for valid in [&mut self.lists_valid, &mut self.items_valid]
            .into_iter()
            .flatten()
        {
            *valid = BooleanBufferBuilder::new(BATCH);
        }
    }

    /// Takes `n` levels: `def` and `rep` as the reader decoded them (empty when the column has
    /// no such levels).
    pub(super) fn take(&mut self, n: usize, def: &[i16], rep: &[i16]) -> Result<()> {
        if self.max_def > 0 && def.len() != n {
            return Err(general(format!("{} definition levels for {n}", def.len())));
        }
        if self.list.is_some() {
            return self.take_lists(def, rep);
        }
        if let Some(&d) = def.iter().find(|&&d| !(0..=self.max_def).contains(&d)) {
            let max = self.max_def;
            return Err(general(format!("definition level {d} outside 0..={max}")));
        }
        self.slots += n;
        self.records += n;
        if let Some(valid) = &mut self.items_valid {
            def.iter().for_each(|&d| valid.append(d == self.max_def));
        }
        Ok(())
    }

    /// A list column's levels: repetition level 0 starts a record (a null list when the
    /// definition level is below `empty`, an empty one at `empty`), 1 adds an item to it.
    ///
    /// Records are one to five levels long in typical data, so whether a level starts one is
    /// unpredictable: the loop has no branch on the levels (offsets are written at every level
    /// and kept where a record starts; bad levels are counted and looked for only if found).
    fn take_lists(&mut self, def: &[i16], rep: &[i16]) -> Result<()> {
        if def.len() != rep.len() {
            let (d, r) = (def.len(), rep.len());
            return Err(general(format!("{d} definition but {r} repetition levels")));
        }
        let (empty, max_def) = (self.empty, self.max_def);
        let base = self.offsets.len();
        // An offset is written at every level, at the index of the next record to start.
        let starts = rep.iter().filter(|&&r| r == 0).count();
        self.offsets.resize(base + starts + 1, 0);
        let (mut at, mut slots, mut open, mut bad) = (base, self.slots, self.open, false);
        for (&d, &r) in def.iter().zip(rep) {
            let (start, item) = (r == 0, d > empty);
            bad |= (r as u16 > 1) | (d as u16 > max_def as u16) | (!start & !(open & item));
            self.offsets[at] = slots as i64;
            at += usize::from(start);
            slots += usize::from(item);
            open = (start & item) | (!start & open);
        }
        if bad {
            return Err(self.bad_level(def, rep));
        }
        self.offsets.truncate(at);
        (self.slots, self.open, self.records) = (slots, open, self.records + at - base);
        if let Some(valid) = &mut self.lists_valid {
            let starts = def.iter().zip(rep).filter(|(_, &r)| r == 0);
            starts.for_each(|(&d, _)| valid.append(d >= empty));
        }
        if let Some(valid) = &mut self.items_valid {
            let items = def.iter().filter(|&&d| d > empty);
            items.for_each(|&d| valid.append(d == max_def));
        }
        Ok(())
    }

    /// The error for the first level of a batch that [`Levels::take_lists`] found wrong.
    fn bad_level(&self, def: &[i16], rep: &[i16]) -> ParquetError {
        let (mut open, mut record) = (self.open, self.records);
        for (&d, &r) in def.iter().zip(rep) {
            if !(0..=self.max_def).contains(&d) {
                let max = self.max_def;
                return general(format!("definition level {d} outside 0..={max}"));
            }
            match r {
                0 => (open, record) = (d > self.empty, record + 1),
                1 if open && d > self.empty => {}
                _ => {
                    return general(format!(
                        "repetition level {r} (definition level {d}) after {record} records \
                         continues no list"
                    ))
                }
            }
        }
        general("a bad level".into())
    }

    /// Moves the values the reader appended at `start` (one per defined item) to their slots,
    /// leaving a default value in each null slot of the levels `def` just taken.
    pub(super) fn spread<T: Copy + Default>(&self, values: &mut Vec<T>, start: usize, def: &[i16]) {
        if self.items_valid.is_none() {
            return;
        }
        // A list column's levels at or below `empty` are null or empty lists: no slot.
        let floor = if self.list.is_some() { self.empty } else { -1 };
        let slots = def.iter().filter(|&&d| d > floor).count();
        let mut from = values.len();
        values.resize(start + slots, T::default());
        let mut to = values.len();
        // From the back, so that no value is overwritten before it has moved.
        for &d in def.iter().rev().filter(|&&d| d > floor) {
            to -= 1;
            if d == self.max_def {
                from -= 1;
                values[to] = values[from];
            } else {
                values[to] = T::default();
            }
        }
    }

    /// The array of the `values` (one per slot) and the levels taken, checked to hold `rows`
    /// records.
    fn finish<A: ArrowPrimitiveType>(
        mut self,
        values: Vec<A::Native>,
        rows: usize,
    ) -> Result<ArrayRef> {
        if self.records != rows || values.len() != self.slots {
            let (r, v, s) = (self.records, values.len(), self.slots);
            return Err(general(format!(
                "{r} records and {v} values in {s} slots where the row group declares {rows} rows"
            )));
        }
        let nulls = |b: Option<BooleanBufferBuilder>| b.map(|mut b| NullBuffer::new(b.finish()));
        let items = PrimitiveArray::<A>::try_new(values.into(), nulls(self.items_valid))
            .map_err(|e| general(e.to_string()))?;
        let Some((large, item)) = self.list else {
            return Ok(Arc::new(items));
        };
        self.offsets.push(self.slots as i64);
        let (items, nulls) = (Arc::new(items), nulls(self.lists_valid));
        // Built in order from zero, the offsets are valid; `try_new` checks them against `items`.
        if large {
            let offsets = OffsetBuffer::new(ScalarBuffer::from(self.offsets));
            return list::<i64>(item, offsets, items, nulls);
        }
        let offsets = self.offsets.into_iter().map(i32::try_from);
        let offsets = offsets
            .collect::<std::result::Result<Vec<i32>, _>>()
            .map_err(|_| general(format!("{} list items overflow 32-bit offsets", self.slots)))?;
        list::<i32>(item, OffsetBuffer::new(offsets.into()), items, nulls)
    }
}

/// A list array of `items` at `offsets`.
fn list<O: OffsetSizeTrait>(
    item: FieldRef,
    offsets: OffsetBuffer<O>,
    items: ArrayRef,
    nulls: Option<NullBuffer>,
) -> Result<ArrayRef> {
    GenericListArray::<O>::try_new(item, offsets, items, nulls)
        .map(|a| Arc::new(a) as ArrayRef)
        .map_err(|e| general(e.to_string()))
}
