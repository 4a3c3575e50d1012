//! Streamed arrays: write the file, then append rows for as long as data arrives.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use asdf_block::BlockWriter;
use asdf_ndarray::{ByteOrder, Datatype, Element, NdArrayMeta};
use asdf_yaml::Node;
use ndarray::{ArrayBase, Data, Dimension};

use crate::builder::{finish_tree, AsdfWriter, StreamSpec};
use crate::error::{AsdfError, Result};
use crate::write::{header_and_tree, WriteOptions};

/// Appends rows to the streamed array of a file written by
/// [`AsdfWriter::write_path_streaming`]. The file on disk is a complete ASDF file at every
/// moment: readers see the rows appended so far (a partial last row is ignored).
#[derive(Debug)]
pub struct StreamWriter {
    out: BufWriter<File>,
    spec: StreamSpec,
    rows: u64,
    path: PathBuf,
}

impl AsdfWriter {
    /// The node of a streamed array with rows of `row_shape` elements of `T` (`source: -1`,
    /// `shape: ['*', ...]`). A file holds at most one; its rows are appended after the file is
    /// written with [`write_path_streaming`](Self::write_path_streaming).
    pub fn add_stream<T: Element>(&mut self, row_shape: &[usize]) -> Result<Node> {
        if self.stream.is_some() {
            return Err(AsdfError::InvalidTree(
                "a file holds at most one streamed array".into(),
            ));
        }
        let datatype = Datatype::Scalar(T::SCALAR);
        let row_bytes = row_shape
            .iter()
            .try_fold(T::SCALAR.size(), |acc, &d| acc.checked_mul(d))
            .filter(|&b| b > 0)
            .ok_or_else(|| {
                AsdfError::InvalidTree(format!("row shape {row_shape:?} is empty or too large"))
            })?;
        let node = NdArrayMeta::streamed(row_shape.to_vec(), datatype.clone(), ByteOrder::NATIVE)
            .to_node();
        self.stream = Some(StreamSpec {
            row_shape: row_shape.to_vec(),
            datatype,
            row_bytes,
        });
        Ok(node)
    }

    /// Writes the file at `path` with its streamed array empty and returns the writer that
    /// appends rows. The file first appears complete (written beside it, synced, renamed into
    /// place), so a crash never leaves a torn file; rows then go to its end.
    ///
    /// ```
    /// let dir = std::env::temp_dir().join(format!("asdf-doc-stream-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let path = dir.join("log.asdf");
    /// let mut w = asdf::AsdfWriter::new();
    /// let node = w.add_stream::<f32>(&[3]).unwrap();
    /// let tree = asdf::yaml::Node::mapping([("samples", node)]);
    /// let mut s = w.write_path_streaming(&path, tree, &Default::default()).unwrap();
    /// for t in 0..5 {
    ///     s.write_rows(&ndarray::arr1(&[t as f32, 0.5, -1.0])).unwrap();
    /// }
    /// s.finish().unwrap();
    /// let f = asdf::AsdfFile::open(&path).unwrap();
    /// assert_eq!(f.array::<f32>("/samples").unwrap().shape(), &[5, 3]);
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn write_path_streaming(
        self,
        path: impl AsRef<Path>,
        tree: Node,
        options: &WriteOptions,
    ) -> Result<StreamWriter> {
        let path = path.as_ref();
        let spec = self.stream.clone().ok_or_else(|| {
            AsdfError::InvalidTree("no streamed array: call add_stream first".into())
        })?;
        if let Some((uri, _)) = self.arrays.externals().first() {
            return Err(AsdfError::External {
                uri: uri.clone(),
                reason: "external arrays cannot be combined with a stream here".into(),
            });
        }
        let tree = finish_tree(tree, &self.labels(), options)?;
        let head = header_and_tree(&tree, options)?;
        let mut blocks = options.blocks.clone();
        blocks.index = false;
        let file = crate::write::atomic_write_inner(path, options.durability, |w| {
            w.write_all(head.as_bytes())
                .map_err(|e| AsdfError::io("writing the tree", e))?;
            let mut bw = BlockWriter::new(&mut *w, head.len() as u64, blocks.clone());
            self.arrays
                .write_blocks_streaming(&mut bw)
                .map_err(|source| AsdfError::Array {
                    pointer: "writing blocks".into(),
                    source,
                })?;
            let s = bw.into_streamed()?;
            s.finish().map_err(|e| AsdfError::io("flushing", e))?;
            Ok(())
        })?;
        Ok(StreamWriter {
            out: BufWriter::with_capacity(1 << 20, file),
            spec,
            rows: 0,
            path: path.to_path_buf(),
        })
    }
}

impl StreamWriter {
    /// Appends one row (an array of the row shape) or many (an array of shape
    /// `[n, row_shape...]`), in C order, native byte order.
    pub fn write_rows<T: Element, S: Data<Elem = T>, D: Dimension>(
        &mut self,
        rows: &ArrayBase<S, D>,
    ) -> Result<()> {
        if Datatype::Scalar(T::SCALAR) != self.spec.datatype {
            return Err(AsdfError::InvalidTree(format!(
                "the stream holds {}, not {}",
                self.spec.datatype,
                T::SCALAR.name()
            )));
        }
        let shape = rows.shape();
        let n = if shape == self.spec.row_shape.as_slice() {
            1
        } else if shape.len() == self.spec.row_shape.len() + 1
            && shape[1..] == self.spec.row_shape[..]
        {
            shape[0]
        } else {
            return Err(AsdfError::InvalidTree(format!(
                "rows of shape {shape:?} do not fit the stream's row shape {:?}",
                self.spec.row_shape
            )));
        };
        let size = T::SCALAR.size();
        let mut buf = vec![0u8; n * self.spec.row_bytes];
        for (x, dst) in rows.iter().zip(buf.chunks_exact_mut(size)) {
            x.write_bytes(ByteOrder::NATIVE, dst);
        }
        self.write_bytes(&buf)?;
        Ok(())
    }

    /// Appends whole rows given as raw native-order bytes.
    pub fn write_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        if bytes.len() % self.spec.row_bytes != 0 {
            return Err(AsdfError::InvalidTree(format!(
                "{} bytes are not a whole number of {}-byte rows",
                bytes.len(),
                self.spec.row_bytes
            )));
        }
        self.out
            .write_all(bytes)
            .map_err(|e| AsdfError::io("appending rows", e).in_file(&self.path))?;
        self.rows += (bytes.len() / self.spec.row_bytes) as u64;
        Ok(())
    }

    /// Rows appended so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Flushes the rows and syncs them to disk.
    pub fn flush(&mut self) -> Result<()> {
        self.out
            .flush()
            .map_err(|e| AsdfError::io("flushing rows", e).in_file(&self.path))?;
        self.out
            .get_ref()
            .sync_data()
            .map_err(|e| AsdfError::io("syncing rows", e).in_file(&self.path))
    }

    /// Flushes, syncs and closes the file; returns the number of rows.
    pub fn finish(mut self) -> Result<u64> {
        self.flush()?;
        Ok(self.rows)
    }
}
