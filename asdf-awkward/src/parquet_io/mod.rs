//! Parquet files (feature `parquet`, through the [`crate::arrow`] mapping), readable by
//! `ak.from_parquet` and pyarrow, and reading what `ak.to_parquet` and pyarrow write.
//!
//! A record array's fields are the file's columns; any other array is one column named `""`,
//! as `ak.to_parquet` does.

mod direct;
mod pages;
#[cfg(test)]
mod tests;

use std::fs::File;
use std::path::Path;

use array_core::Durability;
use arrow_array::{ArrayRef, RecordBatch};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnChunk, ArrowRowGroupWriterFactory};
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::basic::{Compression, ZstdLevel};
use parquet::errors::ParquetError;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use rayon::prelude::*;

use crate::arrow::{from_column_pieces, to_record_batch, Column};
use crate::error::{Error, Result};
use crate::layout::Layout;

fn pq_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Convert {
        location: path.display().to_string(),
        message: format!("Parquet: {e}"),
    }
}

/// Writes `layout` as a Parquet file (zstd, one row group per 1 Mi rows), atomically, its
/// column chunks encoded in parallel.
///
/// ```
/// use asdf_awkward::{parquet_io::{read_parquet, write_parquet}, Layout};
/// let path = std::env::temp_dir().join(format!("awk-doc-{}.parquet", std::process::id()));
/// let a = Layout::from_json(&serde_json::json!([{"pt": [1.5, 2.5], "q": "mu"}, {"pt": [], "q": null}])).unwrap();
/// write_parquet(&a, &path).unwrap();
/// assert_eq!(read_parquet(&path).unwrap().to_json().unwrap(), a.to_json().unwrap());
/// std::fs::remove_file(&path).unwrap();
/// ```
pub fn write_parquet(layout: &Layout, path: impl AsRef<Path>) -> Result<()> {
    write_parquet_with(layout, path, Durability::Synced)
}

/// [`write_parquet`], waiting for the disk or not as `durability` says: relaxed, a new file is
/// renamed into place unsynced, as pyarrow leaves its own (a file replaced is synced either way).
pub fn write_parquet_with(
    layout: &Layout,
    path: impl AsRef<Path>,
    durability: Durability,
) -> Result<()> {
    let path = path.as_ref();
    let batch = to_record_batch(layout)?;
    // The schema's metadata (awkward's) as the file's own key-value metadata, where
    // `ak.from_parquet` looks for it.
    let schema = batch.schema();
    let metadata = schema.metadata().iter();
    let metadata = metadata.map(|(k, v)| KeyValue::new(k.clone(), v.clone()));
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_key_value_metadata(Some(metadata.collect()))
        .build();
    let mut failure = None;
    crate::store::write_atomic(path, true, durability, |file| {
        let run = || -> std::result::Result<(), ParquetError> {
            let w = ArrowWriter::try_new(file.try_clone()?, batch.schema(), Some(props))?;
            write_row_groups(w, &batch)
        };
        run().map_err(|e| {
            failure = Some(pq_err(path, &e));
            std::io::Error::other(e.to_string())
        })
    })
    .map_err(|e| failure.take().unwrap_or(e))
}

/// Rows per row group, as `ArrowWriter` and pyarrow cut them (1 Mi).
const ROW_GROUP_ROWS: usize = 1 << 20;

/// Writes `batch` through `writer`'s file as row groups of [`ROW_GROUP_ROWS`] rows. Each column
/// chunk (one leaf column of one row group) is encoded and compressed by a task of its own on
/// the current rayon pool, so a one-column file of many row groups and a one-row-group file of
/// many columns both use every core; the chunks are then appended in order. At most twice as
/// many row groups as threads are held encoded in memory at once.
fn write_row_groups(
    writer: ArrowWriter<array_core::WritebackFile>,
    batch: &RecordBatch,
) -> std::result::Result<(), ParquetError> {
    let (mut file, factory) = writer.into_serialized_writer()?;
    let groups = batch.num_rows().div_ceil(ROW_GROUP_ROWS);
    let window = 2 * rayon::current_num_threads().max(1);
    for first in (0..groups).step_by(window) {
        let encoded = (first..groups.min(first + window))
            .into_par_iter()
            .map(|g| encode_row_group(&factory, batch, g))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        for chunks in encoded {
            let mut group = file.next_row_group()?;
            for chunk in chunks {
                chunk.append_to_row_group(&mut group)?;
            }
            group.close()?;
        }
    }
    file.close()?;
    Ok(())
}

/// The column chunks of row group `g` of `batch`, each leaf column encoded in parallel.
fn encode_row_group(
    factory: &ArrowRowGroupWriterFactory,
    batch: &RecordBatch,
    g: usize,
) -> std::result::Result<Vec<ArrowColumnChunk>, ParquetError> {
    let start = g * ROW_GROUP_ROWS;
    let rows = batch.slice(start, ROW_GROUP_ROWS.min(batch.num_rows() - start));
    let mut leaves = Vec::new();
    for (field, column) in rows.schema().fields().iter().zip(rows.columns()) {
        leaves.extend(compute_leaves(field, column)?);
    }
    let writers = factory.create_column_writers(g)?;
    if writers.len() != leaves.len() {
        let msg = format!("{} leaf columns, {} writers", leaves.len(), writers.len());
        return Err(ParquetError::General(msg));
    }
    writers
        .into_par_iter()
        .zip(leaves)
        .map(|(mut w, leaf)| {
            w.write(&leaf)?;
            w.close()
        })
        .collect()
}

/// Reads a Parquet file into one layout (all row groups joined).
///
/// Every column chunk (one column of one row group) is decoded by a task of its own on the
/// current rayon pool, so a file of one row group still uses every core when it has several
/// columns. Columns of numbers and lists of numbers are decoded from their levels here
/// (`parquet_io/direct.rs`): those without nulls straight into the layout's buffers, when the footer says
/// where each row group goes. The others are decoded by arrow-rs and converted from their
/// pieces with [`from_arrow_parts`](crate::arrow::from_arrow_parts), copying every value once.
pub fn read_parquet(path: impl AsRef<Path>) -> Result<Layout> {
    let path = path.as_ref();
    contained(path, || read(path))
}

/// Runs `f`, a read through the parquet and arrow crates, with a panic of theirs turned into an
/// error naming the file. On damaged input parquet 59 unwraps parts of page headers a file may
/// lack (a data page without its data page header: `tests::damaged_files_are_errors_not_panics`
/// finds it) and arrow-ipc 59 panics on an embedded Arrow schema's unsupported integer width
/// (the `parquet_read` fuzz target found it); nothing of the read survives a panic, so no broken
/// state is seen.
fn contained<T>(path: &Path, f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let what = match (panic.downcast_ref::<&str>(), panic.downcast_ref::<String>()) {
            (Some(s), _) => s.to_string(),
            (_, Some(s)) => s.clone(),
            _ => String::new(),
        };
        Err(pq_err(
            path,
            format!("damaged data stopped the reader ({what})"),
        ))
    })
}

fn read(path: &Path) -> Result<Layout> {
    let meta = ArrowReaderMetadata::load(&open(path)?, ArrowReaderOptions::new())
        .map_err(|e| pq_err(path, e))?;
    let schema = meta.schema().clone();
    let (columns, groups) = (schema.fields().len(), meta.metadata().num_row_groups());
    let roots = meta
        .metadata()
        .file_metadata()
        .schema_descr()
        .root_schema()
        .get_fields()
        .len();
    if roots != columns {
        let msg = format!("{roots} top-level Parquet columns but {columns} Arrow columns");
        return Err(pq_err(path, msg));
    }
    // Largest columns first: rayon hands the first half of the list to one thread and the rest
    // to the others, so a file of few columns (one row group: a task per column) finishes when
    // its largest column does, not after a small one and then the largest.
    let mut order: Vec<usize> = (0..columns).collect();
    order.sort_by_key(|&c| std::cmp::Reverse(decoded_size(meta.metadata(), c)));
    let mut read = order
        .par_iter()
        .map(|&c| read_column(path, &meta, c, groups).map(|r| (c, r)))
        .collect::<Result<Vec<_>>>()?;
    read.sort_by_key(|(c, _)| *c);
    // The arrays stay here while the columns borrow them.
    let (wholes, arrays): (Vec<_>, Vec<_>) = read
        .into_iter()
        .map(|(_, column)| match column {
            Read::Whole(layout) => (Some(layout), Vec::new()),
            Read::Pieces(p) => (None, p.into_iter().flatten().collect::<Vec<_>>()),
        })
        .unzip();
    let pieces = wholes
        .into_iter()
        .zip(&arrays)
        .map(|(whole, arrays)| match whole {
            Some(layout) => Column::Plain(layout),
            None => Column::Pieces(arrays.iter().map(|a| a.as_ref()).collect()),
        })
        .collect();
    let rows = meta.metadata().file_metadata().num_rows();
    let rows = usize::try_from(rows).map_err(|_| pq_err(path, format!("{rows} rows")))?;
    from_column_pieces(&schema, pieces, rows)
}

/// What the footer says top-level column `c` decodes to, over every row group (an estimate of
/// its work: a damaged footer only changes the order columns are read in).
fn decoded_size(md: &parquet::file::metadata::ParquetMetaData, c: usize) -> u64 {
    let descr = md.file_metadata().schema_descr();
    let leaves: Vec<usize> = (0..descr.num_columns())
        .filter(|&i| descr.get_column_root_idx(i) == c)
        .collect();
    let chunks = md
        .row_groups()
        .iter()
        .flat_map(|g| leaves.iter().map(|&l| g.column(l)));
    chunks
        .map(|k| u64::try_from(k.uncompressed_size()).unwrap_or(0))
        .fold(0, u64::saturating_add)
}

/// One column as read: whole, or one piece per batch of each row group.
enum Read {
    Whole(Layout),
    Pieces(Vec<Vec<ArrayRef>>),
}

/// Column `c` of the `groups` row groups, its row groups decoded in parallel: whole when
/// [`direct::read_whole`] can, else by row groups ([`direct::read`], or arrow-rs).
fn read_column(path: &Path, meta: &ArrowReaderMetadata, c: usize, groups: usize) -> Result<Read> {
    let plan = direct::plan(meta, c);
    if let Some(plan) = &plan {
        if let Some(whole) = direct::read_whole(path, meta, plan).map_err(|e| pq_err(path, e))? {
            return Ok(Read::Whole(whole));
        }
    }
    let pieces = (0..groups)
        .into_par_iter()
        .map(|g| {
            let direct = match &plan {
                Some(plan) => direct::read(path, meta, plan, g),
                None => Ok(None),
            };
            match direct.map_err(|e| pq_err(path, e))? {
                Some(arrays) => Ok(arrays),
                None => column_chunk(path, meta, c, g),
            }
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Read::Pieces(pieces))
}

/// What a Parquet file's footer says about it, read without decoding any data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParquetSummary {
    /// Rows (the array's length).
    pub rows: u64,
    /// Row groups.
    pub row_groups: usize,
    /// The top-level columns: name and Arrow type (one column named `""` holds an array that
    /// is not a record, as `ak.to_parquet` writes it).
    pub columns: Vec<(String, String)>,
    /// Bytes the column chunks take in the file.
    pub stored_bytes: u64,
    /// Their size decoded, as the footer declares it.
    pub decoded_bytes: u64,
    /// The codecs of the column chunks, each named once (`ZSTD`, `SNAPPY`, ...).
    pub codecs: Vec<String>,
    /// Whether awkward 2's metadata (parameters, tuples, option types) is in the schema.
    pub awkward_metadata: bool,
}

/// The footer of the Parquet file at `path`: its rows, row groups, columns and sizes, read
/// without decoding any data (one read of the footer, however large the file).
///
/// ```
/// use asdf_awkward::{parquet_io::{summarize_parquet, write_parquet}, Layout};
/// let path = std::env::temp_dir().join(format!("awk-sum-{}.parquet", std::process::id()));
/// let a = Layout::from_json(&serde_json::json!([{"pt": [1.5], "q": "mu"}, {"pt": [], "q": "e"}])).unwrap();
/// write_parquet(&a, &path).unwrap();
/// let s = summarize_parquet(&path).unwrap();
/// assert_eq!((s.rows, s.row_groups, s.columns.len()), (2, 1, 2));
/// assert_eq!(s.codecs, ["ZSTD"]);
/// std::fs::remove_file(&path).unwrap();
/// ```
pub fn summarize_parquet(path: impl AsRef<Path>) -> Result<ParquetSummary> {
    let path = path.as_ref();
    contained(path, || summarize(path))
}

fn summarize(path: &Path) -> Result<ParquetSummary> {
    let meta = ArrowReaderMetadata::load(&open(path)?, ArrowReaderOptions::new())
        .map_err(|e| pq_err(path, e))?;
    let md = meta.metadata();
    let rows = md.file_metadata().num_rows();
    let rows = u64::try_from(rows).map_err(|_| pq_err(path, format!("{rows} rows")))?;
    let (mut stored, mut decoded, mut codecs) = (0u64, 0u64, Vec::new());
    for chunk in md.row_groups().iter().flat_map(|g| g.columns()) {
        stored = stored.saturating_add(chunk.compressed_size().max(0) as u64);
        decoded = decoded.saturating_add(chunk.uncompressed_size().max(0) as u64);
        // The codec's name without its level (`ZSTD(ZstdLevel(3))` is `ZSTD`).
        let named = chunk.compression().to_string();
        let codec = named.split('(').next().unwrap_or_default().to_string();
        if !codecs.contains(&codec) {
            codecs.push(codec);
        }
    }
    let schema = meta.schema();
    Ok(ParquetSummary {
        rows,
        row_groups: md.num_row_groups(),
        columns: schema
            .fields()
            .iter()
            .map(|f| (f.name().clone(), f.data_type().to_string()))
            .collect(),
        stored_bytes: stored,
        decoded_bytes: decoded,
        codecs,
        awkward_metadata: crate::arrow::has_awkward_metadata(schema),
    })
}

/// Rows per decoded batch: small enough that the decoder's buffers stay in cache and are reused
/// (a batch per row group made it grow, copy and fault in fresh pages: 10 % slower on the
/// 10-million-list benchmark), large enough that per-batch costs vanish.
const BATCH_ROWS: usize = 1 << 16;

fn open(path: &Path) -> Result<File> {
    File::open(path).map_err(|e| Error::io(path.display(), e))
}

/// Column `c` of row group `g`, decoded through a file handle of its own (clones of one `File`
/// share its offset), as one array per batch of [`BATCH_ROWS`] rows.
fn column_chunk(
    path: &Path,
    meta: &ArrowReaderMetadata,
    c: usize,
    g: usize,
) -> Result<Vec<ArrayRef>> {
    let mask = ProjectionMask::roots(meta.metadata().file_metadata().schema_descr(), [c]);
    let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(open(path)?, meta.clone())
        .with_row_groups(vec![g])
        .with_projection(mask)
        .with_batch_size(BATCH_ROWS)
        .build()
        .map_err(|e| pq_err(path, e))?;
    reader
        .map(|b| b.map(|b| b.column(0).clone()))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| pq_err(path, e))
}
