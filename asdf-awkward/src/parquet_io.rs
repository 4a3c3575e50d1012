//! Parquet files (feature `parquet`, through the [`crate::arrow`] mapping), readable by
//! `ak.from_parquet` and pyarrow, and reading what `ak.to_parquet` and pyarrow write.
//!
//! A record array's fields are the file's columns; any other array is one column named `""`,
//! as `ak.to_parquet` does.

use std::fs::File;
use std::path::Path;

use arrow_array::RecordBatchReader;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use crate::arrow::{from_record_batch, to_record_batch};
use crate::error::{Error, Result};
use crate::layout::Layout;

fn pq_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Convert {
        location: path.display().to_string(),
        message: format!("Parquet: {e}"),
    }
}

/// Writes `layout` as a Parquet file (zstd, one row group per 1 Mi rows), atomically.
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
    let path = path.as_ref();
    let batch = to_record_batch(layout)?;
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .build();
    let mut failure = None;
    crate::store::write_atomic(path, true, |file| {
        let run = || -> std::result::Result<(), parquet::errors::ParquetError> {
            let mut w = ArrowWriter::try_new(file.try_clone()?, batch.schema(), Some(props))?;
            w.write(&batch)?;
            w.close()?;
            Ok(())
        };
        run().map_err(|e| {
            failure = Some(pq_err(path, &e));
            std::io::Error::other(e.to_string())
        })
    })
    .map_err(|e| failure.take().unwrap_or(e))
}

/// Reads a Parquet file into one layout (all row groups concatenated).
pub fn read_parquet(path: impl AsRef<Path>) -> Result<Layout> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|e| Error::io(path.display(), e))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| pq_err(path, e))?;
    // Large batches: the layout is one array, so small batches would only be concatenated.
    let rows = builder.metadata().file_metadata().num_rows();
    let batch_size = usize::try_from(rows).unwrap_or(1).clamp(1, 1 << 24);
    let reader = builder
        .with_batch_size(batch_size)
        .build()
        .map_err(|e| pq_err(path, e))?;
    let schema = reader.schema();
    let mut batches = reader
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| pq_err(path, e))?;
    let batch = if batches.len() == 1 {
        batches.remove(0)
    } else {
        arrow_select::concat::concat_batches(&schema, &batches).map_err(|e| pq_err(path, e))?
    };
    from_record_batch(&batch)
}
