//! Parquet files (feature `parquet`, through the [`crate::arrow`] mapping), readable by
//! `ak.from_parquet` and pyarrow, and reading what `ak.to_parquet` and pyarrow write.
//!
//! A record array's fields are the file's columns; any other array is one column named `""`,
//! as `ak.to_parquet` does.

use std::fs::File;
use std::path::Path;

use arrow_array::RecordBatch;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use rayon::prelude::*;

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

/// Reads a Parquet file into one layout (all row groups concatenated). Row groups are decoded
/// in parallel on the current rayon pool, each into one batch of its own size.
pub fn read_parquet(path: impl AsRef<Path>) -> Result<Layout> {
    let path = path.as_ref();
    let open = || File::open(path).map_err(|e| Error::io(path.display(), e));
    let meta = ArrowReaderMetadata::load(&open()?, ArrowReaderOptions::new())
        .map_err(|e| pq_err(path, e))?;
    let groups = meta.metadata().num_row_groups();
    // Each task reads through a file handle of its own: clones of one `File` share its offset.
    let group = |g: usize| -> Result<Vec<RecordBatch>> {
        let rows = meta.metadata().row_group(g).num_rows();
        let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(open()?, meta.clone())
            .with_row_groups(vec![g])
            .with_batch_size(usize::try_from(rows).unwrap_or(1).clamp(1, 1 << 24))
            .build()
            .map_err(|e| pq_err(path, e))?;
        reader
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| pq_err(path, e))
    };
    let mut batches: Vec<RecordBatch> = (0..groups)
        .into_par_iter()
        .map(group)
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect();
    let batch = match batches.len() {
        0 => RecordBatch::new_empty(meta.schema().clone()),
        1 => batches.remove(0),
        _ => arrow_select::concat::concat_batches(meta.schema(), &batches)
            .map_err(|e| pq_err(path, e))?,
    };
    from_record_batch(&batch)
}
