//! Writing blocks: encode (in parallel when there are many), then stream them to any `Write`;
//! or, into a seekable output, hash and write a large block while its codec compresses it.

use std::borrow::Cow;
use std::io::{Seek, SeekFrom, Write};

use rayon::prelude::*;

use crate::codec::EncodeOptions;
use crate::error::{BlockError, Result};
use crate::header::{BlockHeader, HEADER_LEN, MIN_HEADER_SIZE};
use crate::index::encode_index;
use crate::layout::BlockInfo;
use crate::options::WriteOptions;
use crate::reader::md5;
use crate::Label;
use md5::{Digest, Md5};

/// A block ready to be written: its header (without alignment, which the writer decides) and
/// its stored bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodedBlock<'a> {
    /// The header; `header_size` is set by the writer.
    pub header: BlockHeader,
    /// The stored bytes (`header.used_size` of them).
    pub payload: Cow<'a, [u8]>,
}

impl<'a> EncodedBlock<'a> {
    /// Reserves `extra` unused bytes after the data (room to grow in place).
    pub fn with_padding(mut self, extra: u64) -> Self {
        self.header.allocated_size = self.header.used_size.saturating_add(extra);
        self
    }
}

/// Compresses `data` with the codec of `compression` (or stores it when that is
/// [`Label::NONE`], or when compressing does not make it smaller) and computes the checksum of
/// the stored bytes.
///
/// ```
/// use asdf_block::{encode_block, EncodeOptions, Label, WriteOptions};
/// let zeros = vec![0u8; 10_000];
/// let b = encode_block(&zeros, Label(*b"zlib"), &EncodeOptions::default(), &WriteOptions::default()).unwrap();
/// assert_eq!(b.header.compression, Label(*b"zlib"));
/// assert!(b.header.used_size < 100);
/// // Incompressible data is stored raw.
/// let b = encode_block(b"abc", Label(*b"zlib"), &EncodeOptions::default(), &WriteOptions::default()).unwrap();
/// assert!(b.header.compression.is_none());
/// ```
pub fn encode_block<'a>(
    data: &'a [u8],
    compression: Label,
    encode: &EncodeOptions,
    options: &WriteOptions,
) -> Result<EncodedBlock<'a>> {
    let payload: Cow<'a, [u8]> = if compression.is_none() {
        Cow::Borrowed(data)
    } else {
        let codec =
            options
                .codecs
                .get(compression)
                .ok_or_else(|| BlockError::UnknownCodecName {
                    name: compression.to_string(),
                    known: options.codecs.known(),
                })?;
        let out = codec.encode(data, encode).map_err(|e| BlockError::Encode {
            codec: codec.name().to_string(),
            message: e.message,
        })?;
        if out.len() < data.len() {
            Cow::Owned(out)
        } else {
            Cow::Borrowed(data)
        }
    };
    let label = if matches!(payload, Cow::Borrowed(_)) {
        Label::NONE
    } else {
        compression
    };
    let checksum = checksum(&payload, options);
    Ok(EncodedBlock {
        header: BlockHeader::new(label, data.len() as u64, payload.len() as u64, checksum),
        payload,
    })
}

/// [`encode_block`] for many blocks at once, in parallel on the current rayon pool. Blocks
/// whose [`EncodeOptions::threads`] is automatic share the pool's threads: with fewer blocks
/// than threads, each block's codec may split it (zstd workers, blosc threads).
pub fn encode_blocks<'a>(
    items: &[(&'a [u8], Label, EncodeOptions)],
    options: &WriteOptions,
) -> Result<Vec<EncodedBlock<'a>>> {
    items
        .par_iter()
        .map(|(data, label, enc)| {
            encode_block(data, *label, &pool_share(enc, items.len()), options)
        })
        .collect()
}

/// `enc` with automatic threads ([`EncodeOptions::threads`] `0`) resolved to one block's share
/// of the current rayon pool when `blocks` blocks are encoded at once (at least one thread).
/// Resolved here because a codec called inside a rayon task takes automatic to mean one.
///
/// ```
/// use asdf_block::{pool_share, EncodeOptions};
/// let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
/// let auto = EncodeOptions::default();
/// pool.install(|| {
///     assert_eq!(pool_share(&auto, 1).threads, 4);
///     assert_eq!(pool_share(&auto, 3).threads, 1);
///     assert_eq!(pool_share(&EncodeOptions { threads: 2, ..auto.clone() }, 1).threads, 2);
/// });
/// ```
pub fn pool_share(enc: &EncodeOptions, blocks: usize) -> EncodeOptions {
    let mut enc = enc.clone();
    if enc.threads == 0 {
        enc.threads = (rayon::current_num_threads() / blocks.max(1)).max(1);
    }
    enc
}

/// Writes blocks one after another to `out`, then the block index. Nothing is buffered beyond
/// the block being written, so a file of any size streams through.
///
/// ```
/// use asdf_block::{BlockReader, BlockWriter, EncodeOptions, Label, ReadOptions, WriteOptions};
/// let tree = b"#ASDF 1.0.0\n%YAML 1.1\n--- {}\n...\n";
/// let opts = WriteOptions { align: 64, ..WriteOptions::default() };
/// let mut w = BlockWriter::new(tree.to_vec(), tree.len() as u64, opts);
/// let info = w.write_data(&[1, 2, 3, 4], Label::NONE, &EncodeOptions::default()).unwrap();
/// assert_eq!(info.data_offset % 64, 0);
/// let file = w.finish().unwrap();
/// let r = BlockReader::new(file, tree.len() as u64, ReadOptions::default()).unwrap();
/// assert!(r.layout().index_used);
/// assert_eq!(&*r.data(0).unwrap(), &[1, 2, 3, 4]);
/// ```
#[derive(Debug)]
pub struct BlockWriter<W> {
    out: W,
    pos: u64,
    offsets: Vec<u64>,
    options: WriteOptions,
}

impl<W: Write> BlockWriter<W> {
    /// A writer whose next byte lands at file offset `position` (the end of the tree).
    pub fn new(out: W, position: u64, options: WriteOptions) -> Self {
        BlockWriter {
            out,
            pos: position,
            offsets: Vec::new(),
            options,
        }
    }

    /// File offset of the next byte written.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Number of blocks written so far.
    pub fn blocks_written(&self) -> usize {
        self.offsets.len()
    }

    /// The options.
    pub fn options(&self) -> &WriteOptions {
        &self.options
    }

    fn header_size_at(&self, offset: u64) -> Result<u16> {
        let align = u64::from(self.options.align);
        if align <= 1 {
            return Ok(MIN_HEADER_SIZE);
        }
        let data_start = offset + HEADER_LEN as u64;
        let pad = (align - data_start % align) % align;
        u16::try_from(u64::from(MIN_HEADER_SIZE) + pad).map_err(|_| {
            BlockError::Usage(format!(
                "alignment {align} needs a header larger than 65535 bytes"
            ))
        })
    }

    fn put(&mut self, bytes: &[u8], what: &str) -> Result<()> {
        self.out
            .write_all(bytes)
            .map_err(|e| BlockError::io(format!("writing {what} at byte {}", self.pos), e))?;
        self.pos += bytes.len() as u64;
        Ok(())
    }

    /// Writes an encoded block; returns where it went.
    pub fn write(&mut self, block: &EncodedBlock<'_>) -> Result<BlockInfo> {
        let offset = self.pos;
        let mut header = block.header;
        header.header_size = self.header_size_at(offset)?;
        header.flags &= !crate::header::FLAG_STREAMED;
        if header.used_size != block.payload.len() as u64
            || header.allocated_size < header.used_size
        {
            return Err(BlockError::Usage(format!(
                "inconsistent block: used_size {}, allocated_size {}, payload of {} bytes",
                header.used_size,
                header.allocated_size,
                block.payload.len()
            )));
        }
        self.put(&header.to_bytes(), "a block header")?;
        self.put(&block.payload, "block data")?;
        let mut pad = header.allocated_size - header.used_size;
        const ZEROS: [u8; 4096] = [0; 4096];
        while pad > 0 {
            let n = pad.min(ZEROS.len() as u64) as usize;
            self.put(&ZEROS[..n], "block padding")?;
            pad -= n as u64;
        }
        Ok(self.placed(offset, header))
    }

    /// Records the block written at `offset` with `header` and says where it went.
    fn placed(&mut self, offset: u64, header: BlockHeader) -> BlockInfo {
        let index = self.offsets.len();
        self.offsets.push(offset);
        BlockInfo {
            index,
            offset,
            header,
            data_offset: offset + header.total_len() as u64,
            stored_len: header.used_size,
        }
    }

    /// Encodes and writes one block.
    pub fn write_data(
        &mut self,
        data: &[u8],
        compression: Label,
        encode: &EncodeOptions,
    ) -> Result<BlockInfo> {
        let block = encode_block(data, compression, encode, &self.options)?;
        self.write(&block)
    }

    /// Encodes `data` straight into the output. With a codec that
    /// [streams](crate::codec::Codec::streams) (`zstd`) the payload is hashed and written
    /// while the codec still compresses, where [`write_data`](Self::write_data) compresses all
    /// of it, hashes it, and then writes it. The header goes first with zero sizes and is
    /// rewritten when the payload is done, hence `Seek`. As with [`encode_block`], data that
    /// does not shrink is stored raw (written again over the partial payload). Uncompressed
    /// data goes through [`write_data`](Self::write_data).
    ///
    /// ```
    /// use asdf_block::{BlockReader, BlockWriter, EncodeOptions, Label, ReadOptions, WriteOptions};
    /// let tree = b"#ASDF 1.0.0\n%YAML 1.1\n--- {}\n...\n";
    /// let mut out = std::io::Cursor::new(tree.to_vec());
    /// out.set_position(tree.len() as u64);
    /// let mut w = BlockWriter::new(out, tree.len() as u64, WriteOptions::default());
    /// let zeros = vec![0u8; 100_000];
    /// let info = w.write_streaming(&zeros, Label(*b"zstd"), &EncodeOptions::default()).unwrap();
    /// assert!(info.stored_len < 100);
    /// w.write_streaming(b"abc", Label(*b"zstd"), &EncodeOptions::default()).unwrap(); // stored raw
    /// let file = w.finish().unwrap().into_inner();
    /// let r = BlockReader::new(file, tree.len() as u64, ReadOptions::default()).unwrap();
    /// assert_eq!(&*r.data(0).unwrap(), &zeros[..]);
    /// assert_eq!(&*r.data(1).unwrap(), b"abc");
    /// ```
    pub fn write_streaming(
        &mut self,
        data: &[u8],
        compression: Label,
        encode: &EncodeOptions,
    ) -> Result<BlockInfo>
    where
        W: Seek,
    {
        let codecs = self.options.codecs.clone(); // a list of `Arc`s; `self` is written below
        let Some(codec) = codecs.get(compression) else {
            return self.write_data(data, compression, encode);
        };
        let offset = self.pos;
        let header_size = self.header_size_at(offset)?;
        let placeholder = BlockHeader {
            header_size,
            ..BlockHeader::new(compression, data.len() as u64, 0, [0; 16])
        };
        self.put(&placeholder.to_bytes(), "a block header")?;
        let data_start = self.pos;
        let mut sink = PayloadSink::new(&mut self.out, data.len(), self.options.checksums);
        let outcome = codec.encode_to(data, encode, &mut sink);
        let (written, full, failed, digest) = sink.finish();
        self.pos = data_start + written; // where the output now stands
        let (label, used, checksum) = match (outcome, failed) {
            (_, Some(e)) => {
                let at = data_start + written;
                return Err(BlockError::io(
                    format!("writing block data at byte {at}"),
                    e,
                ));
            }
            (Ok(()), None) => (compression, written, digest),
            // Not smaller than the data: the data itself goes over the partial payload.
            (Err(_), None) if full => {
                self.seek(data_start)?;
                self.put(data, "block data")?;
                (
                    Label::NONE,
                    data.len() as u64,
                    checksum(data, &self.options),
                )
            }
            (Err(e), None) => {
                return Err(BlockError::Encode {
                    codec: codec.name().to_string(),
                    message: e.message,
                })
            }
        };
        let header = BlockHeader {
            header_size,
            ..BlockHeader::new(label, data.len() as u64, used, checksum)
        };
        self.seek(offset)?;
        self.put(&header.to_bytes(), "a block header")?;
        self.seek(data_start + used)?;
        Ok(self.placed(offset, header))
    }

    /// Moves the output to file offset `to`, relative to where it stands, so that an output
    /// which does not start at file offset 0 (one given only the blocks) works too.
    fn seek(&mut self, to: u64) -> Result<()>
    where
        W: Seek,
    {
        let here = self.pos;
        self.out
            .seek(SeekFrom::Current(to as i64 - here as i64))
            .map_err(|e| BlockError::io(format!("seeking from byte {here} to {to}"), e))?;
        self.pos = to;
        Ok(())
    }

    /// Writes the header of a streamed block and returns a writer for its data, which runs to
    /// the end of the file. No block may follow it, and no index is written.
    pub fn into_streamed(mut self) -> Result<StreamedBlock<W>> {
        let offset = self.pos;
        let mut header = BlockHeader::streamed();
        header.header_size = self.header_size_at(offset)?;
        self.put(&header.to_bytes(), "a streamed block header")?;
        Ok(StreamedBlock {
            out: self.out,
            written: 0,
        })
    }

    /// Writes the block index (if enabled and any block was written) and returns the output.
    pub fn finish(mut self) -> Result<W> {
        if self.options.index && !self.offsets.is_empty() {
            let index = encode_index(&self.offsets);
            self.put(&index, "the block index")?;
        }
        self.out
            .flush()
            .map_err(|e| BlockError::io("flushing the blocks", e))?;
        Ok(self.out)
    }
}

/// The data of a streamed block: append rows with [`Write`]; the block ends where the file ends.
#[derive(Debug)]
pub struct StreamedBlock<W> {
    out: W,
    written: u64,
}

impl<W: Write> StreamedBlock<W> {
    /// Bytes appended so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Flushes and returns the output.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

impl<W: Write> Write for StreamedBlock<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// The checksum a block header records for `stored` (zeros when checksums are off).
fn checksum(stored: &[u8], options: &WriteOptions) -> [u8; 16] {
    if options.checksums {
        md5(stored)
    } else {
        [0; 16]
    }
}

/// Where a streaming encoder's output goes: the file, an MD5 of what passed, and a ceiling.
/// A payload must be smaller than the data it stores; the write that would reach the data's
/// size fails (`full`), and the block is stored raw instead.
struct PayloadSink<'a, W> {
    out: &'a mut W,
    md5: Option<Md5>,
    written: u64,
    /// The payload must stay below this many bytes.
    limit: u64,
    full: bool,
    /// The output's own error, kept to report it as such (the codec only passes its message).
    failed: Option<std::io::Error>,
}

impl<'a, W: Write> PayloadSink<'a, W> {
    fn new(out: &'a mut W, limit: usize, checksums: bool) -> Self {
        PayloadSink {
            out,
            md5: checksums.then(Md5::new),
            written: 0,
            limit: limit as u64,
            full: false,
            failed: None,
        }
    }

    /// Bytes written, whether the ceiling stopped the encoder, the output's error, and the
    /// MD5 of what was written (zeros when checksums are off).
    fn finish(self) -> (u64, bool, Option<std::io::Error>, [u8; 16]) {
        let digest = self.md5.map_or([0; 16], |h| h.finalize().into());
        (self.written, self.full, self.failed, digest)
    }
}

impl<W: Write> Write for PayloadSink<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if !buf.is_empty() && self.written + buf.len() as u64 >= self.limit {
            self.full = true;
            return Err(std::io::Error::other(
                "the payload is not smaller than the data",
            ));
        }
        if let Err(e) = self.out.write_all(buf) {
            let message = e.to_string();
            self.failed = Some(e);
            return Err(std::io::Error::other(message));
        }
        if let Some(h) = &mut self.md5 {
            h.update(buf);
        }
        self.written += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}
