//! Reading block data: zero-copy over memory maps and buffers, or through `Read + Seek`.

use std::borrow::Cow;
use std::fs::File;
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use md5::{Digest, Md5};
use rayon::prelude::*;

use crate::codec::Codec;
use crate::error::{BlockError, Result};
use crate::layout::{scan_blocks, BlockInfo, BlockLayout};
use crate::options::{ChecksumPolicy, ReadOptions};
use crate::source::SeekSource;

/// What checking a block's checksum found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChecksumStatus {
    /// The header has no checksum (all zeros).
    Absent,
    /// Not checked (policy [`ChecksumPolicy::Skip`]).
    NotChecked,
    /// The checksum is the MD5 of the stored bytes (the standard's convention).
    Stored,
    /// The checksum is the MD5 of the decoded bytes (Python asdf ≤ 5.2's convention).
    Decoded,
}

/// MD5 digest of `bytes`.
pub fn md5(bytes: &[u8]) -> [u8; 16] {
    Md5::digest(bytes).into()
}

/// `rayon::join(a, b)` for work on `len` bytes large enough to repay handing half of it to
/// another thread (a wake-up costs microseconds: thousands of small blocks would pay more
/// than they gain); `(a(), b())` otherwise.
fn join_if_large<A, B, RA, RB>(len: usize, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    const MIN: usize = 256 << 10;
    if len >= MIN {
        rayon::join(a, b)
    } else {
        (a(), b())
    }
}

/// Copies `src` into `dst` (same length), on the rayon pool for large buffers: the first touch
/// of fresh output pages (faults, zeroing) dominates, and it scales with cores.
fn copy_parallel(dst: &mut [u8], src: &[u8]) {
    const MIN: usize = 8 << 20;
    const PIECE: usize = 2 << 20;
    if src.len() < MIN || rayon::current_num_threads() < 2 {
        dst.copy_from_slice(src);
        return;
    }
    dst.par_chunks_mut(PIECE)
        .zip(src.par_chunks(PIECE))
        .for_each(|(d, s)| d.copy_from_slice(s));
}

/// The size fields of a block header that must agree before its data is used.
fn check_sizes(info: &BlockInfo) -> Result<()> {
    let h = &info.header;
    let (block, offset) = (info.index, info.offset);
    if !h.is_streamed() && h.used_size > h.allocated_size {
        return Err(BlockError::UsedExceedsAllocated {
            block,
            offset,
            used: h.used_size,
            allocated: h.allocated_size,
        });
    }
    if !h.is_compressed() && !h.is_streamed() && h.used_size != h.data_size {
        return Err(BlockError::SizeMismatch {
            block,
            offset,
            used: h.used_size,
            data: h.data_size,
        });
    }
    Ok(())
}

/// The codec of a compressed block and the size it decodes to, which must be within
/// `options.limits.max_decoded_block_size`.
fn block_codec<'o>(info: &BlockInfo, options: &'o ReadOptions) -> Result<(&'o dyn Codec, usize)> {
    let h = &info.header;
    let (block, offset) = (info.index, info.offset);
    let limit = options.limits.max_decoded_block_size;
    let expected = usize::try_from(h.data_size)
        .ok()
        .filter(|_| h.data_size <= limit)
        .ok_or(BlockError::TooLarge {
            block,
            offset,
            size: h.data_size,
            limit,
        })?;
    let codec =
        options
            .codecs
            .get(h.compression)
            .ok_or_else(|| BlockError::UnknownCompression {
                block,
                offset,
                label: h.compression,
                known: options.codecs.known(),
            })?;
    Ok((codec, expected))
}

/// Checks a block's stored bytes and decodes them, under `options`. `stored` is exactly the
/// block's stored range. With `verified` the checksum is not computed again.
pub(crate) fn decode_block<'a>(
    info: &BlockInfo,
    stored: Cow<'a, [u8]>,
    options: &ReadOptions,
    policy: ChecksumPolicy,
    verified: bool,
) -> Result<(Cow<'a, [u8]>, ChecksumStatus)> {
    let h = &info.header;
    let (block, offset) = (info.index, info.offset);
    check_sizes(info)?;
    let check = policy != ChecksumPolicy::Skip && h.has_checksum() && !verified;
    let not_checked = if h.has_checksum() {
        ChecksumStatus::NotChecked
    } else {
        ChecksumStatus::Absent
    };
    let mismatch = |stored: [u8; 16], decoded: Option<[u8; 16]>| BlockError::ChecksumMismatch {
        block,
        offset,
        expected: h.checksum,
        stored,
        decoded,
    };

    if !h.is_compressed() {
        if !check {
            return Ok((stored, not_checked));
        }
        let digest = md5(&stored);
        if digest != h.checksum {
            return Err(mismatch(digest, None));
        }
        return Ok((stored, ChecksumStatus::Stored));
    }

    let (codec, expected) = block_codec(info, options)?;
    let decode = |s: &[u8]| {
        codec.decode(s, expected).map_err(|e| BlockError::Decode {
            block,
            offset,
            codec: codec.name().to_string(),
            message: e.message,
        })
    };
    if !check {
        return Ok((Cow::Owned(decode(&stored)?), not_checked));
    }
    // Hashing the stored bytes costs about as much as decoding them: do both at once.
    let (stored_digest, decoded) = join_if_large(stored.len(), || md5(&stored), || decode(&stored));
    if stored_digest == h.checksum {
        return Ok((Cow::Owned(decoded?), ChecksumStatus::Stored));
    }
    if policy == ChecksumPolicy::Strict {
        return Err(mismatch(stored_digest, None));
    }
    let data = decoded?;
    let decoded_digest = md5(&data);
    if decoded_digest == h.checksum {
        Ok((Cow::Owned(data), ChecksumStatus::Decoded))
    } else {
        Err(mismatch(stored_digest, Some(decoded_digest)))
    }
}

/// Checks and decodes the stored bytes of a block that the caller read itself (a ranged read of
/// a remote file, ...): sizes, checksum under `options.checksums`, and the codec with its
/// bounds, exactly as [`BlockReader::data`] does. `stored` must be the block's whole stored
/// range.
///
/// ```
/// use std::borrow::Cow;
/// use asdf_block::{decode_stored, BlockReader, BlockWriter, Label, ReadOptions};
/// let mut w = BlockWriter::new(Vec::new(), 0, Default::default());
/// w.write_data(&[5u8; 3000], Label::from_name("zstd").unwrap(), &Default::default()).unwrap();
/// let file = w.finish().unwrap();
/// let r = BlockReader::new(&file[..], 0, ReadOptions::default()).unwrap();
/// let info = r.blocks()[0];
/// let stored = &file[info.stored_range().start as usize..info.stored_range().end as usize];
/// let (data, _) = decode_stored(&info, Cow::Borrowed(stored), r.options()).unwrap();
/// assert_eq!(&*data, &[5u8; 3000][..]);
/// ```
pub fn decode_stored<'a>(
    info: &BlockInfo,
    stored: Cow<'a, [u8]>,
    options: &ReadOptions,
) -> Result<(Cow<'a, [u8]>, ChecksumStatus)> {
    check_sizes(info)?;
    if stored.len() as u64 != info.stored_len {
        return Err(BlockError::Usage(format!(
            "block {} stores {} bytes, {} were given",
            info.index,
            info.stored_len,
            stored.len()
        )));
    }
    decode_block(info, stored, options, options.checksums, false)
}

/// Decodes the stored bytes of a block straight into `dst`, which must be exactly its decoded
/// size: [`decode_stored`] without an intermediate buffer (for a caller that fills a typed array,
/// or assembles many blocks into one buffer). The checksum is checked under `options.checksums`
/// unless `verified` (checked before), hashing the stored bytes on another rayon thread while
/// they are copied or decoded. Returns how it was settled (`None`: not checked). On an error
/// `dst` holds unspecified bytes.
///
/// ```
/// use asdf_block::{decode_stored_into, BlockReader, BlockWriter, Label, ReadOptions};
/// let mut w = BlockWriter::new(Vec::new(), 0, Default::default());
/// w.write_data(&[5u8; 3000], Label::from_name("zstd").unwrap(), &Default::default()).unwrap();
/// let file = w.finish().unwrap();
/// let r = BlockReader::new(&file[..], 0, ReadOptions::default()).unwrap();
/// let info = r.blocks()[0];
/// let stored = &file[info.stored_range().start as usize..info.stored_range().end as usize];
/// let mut out = vec![0u8; 3000];
/// decode_stored_into(&info, stored, r.options(), false, &mut out).unwrap();
/// assert_eq!(out, [5u8; 3000]);
/// ```
pub fn decode_stored_into(
    info: &BlockInfo,
    stored: &[u8],
    options: &ReadOptions,
    verified: bool,
    dst: &mut [u8],
) -> Result<Option<ChecksumStatus>> {
    let block = info.index;
    if dst.len() as u64 != info.data_size() {
        return Err(BlockError::Usage(format!(
            "block {block} decodes to {} bytes, the buffer has {}",
            info.data_size(),
            dst.len()
        )));
    }
    if stored.len() as u64 != info.stored_len {
        return Err(BlockError::Usage(format!(
            "block {block} stores {} bytes, {} were given",
            info.stored_len,
            stored.len()
        )));
    }
    check_sizes(info)?;
    let (h, offset) = (&info.header, info.offset);
    let codec = match h.is_compressed() {
        true => Some(block_codec(info, options)?.0),
        false => None,
    };
    let fill = |dst: &mut [u8]| match codec {
        None => {
            copy_parallel(dst, stored);
            Ok(())
        }
        Some(codec) => array_codecs::io::fill_beside(dst, |dst| codec.decode_into(stored, dst)),
    };
    let decode_err = |e: crate::CodecError| BlockError::Decode {
        block,
        offset,
        codec: codec.map_or("none", |c| c.name()).to_string(),
        message: e.message,
    };
    let policy = options.checksums;
    if policy == ChecksumPolicy::Skip || !h.has_checksum() || verified {
        return fill(dst).map(|()| None).map_err(decode_err);
    }
    let (digest, filled) = join_if_large(stored.len(), || md5(stored), || fill(&mut *dst));
    let filled = filled.map_err(decode_err);
    let mismatch = |decoded| BlockError::ChecksumMismatch {
        block,
        offset,
        expected: h.checksum,
        stored: digest,
        decoded,
    };
    if digest == h.checksum {
        filled?;
        return Ok(Some(ChecksumStatus::Stored));
    }
    if policy == ChecksumPolicy::Strict || codec.is_none() {
        return Err(mismatch(None));
    }
    filled?;
    let decoded = md5(dst);
    if decoded != h.checksum {
        return Err(mismatch(Some(decoded)));
    }
    Ok(Some(ChecksumStatus::Decoded))
}

/// The decoded bytes `range` of a block, decoding only the parts that cover it when its codec
/// allows ([`Codec::decode_range`](crate::Codec::decode_range): Python asdf's chunked `lz4`;
/// uncompressed data is copied); `None` when it does not (other codecs, an LZ4 frame, a range
/// outside uncompressed data, a checksum that only the whole decode can settle), for the
/// caller to decode the whole block. The checksum of the stored bytes is verified under
/// `policy` unless `verified`, as for a whole decode.
pub(crate) fn decode_block_range(
    info: &BlockInfo,
    stored: &[u8],
    options: &ReadOptions,
    policy: ChecksumPolicy,
    verified: bool,
    range: std::ops::Range<u64>,
) -> Result<Option<(Vec<u8>, ChecksumStatus)>> {
    let h = &info.header;
    let (Ok(start), Ok(end)) = (usize::try_from(range.start), usize::try_from(range.end)) else {
        return Ok(None);
    };
    if stored.len() as u64 != info.stored_len {
        return Ok(None);
    }
    check_sizes(info)?;
    let decoded = if !h.is_compressed() {
        stored.get(start..end).map(<[u8]>::to_vec)
    } else {
        let Some(codec) = options.codecs.get(h.compression) else {
            return Ok(None); // the whole decode names the unknown codec
        };
        let limit = options.limits.max_decoded_block_size;
        let expected = usize::try_from(h.data_size)
            .ok()
            .filter(|_| h.data_size <= limit)
            .ok_or(BlockError::TooLarge {
                block: info.index,
                offset: info.offset,
                size: h.data_size,
                limit,
            })?;
        codec
            .decode_range(stored, expected, start..end)
            .map_err(|e| BlockError::Decode {
                block: info.index,
                offset: info.offset,
                codec: codec.name().to_string(),
                message: e.message,
            })?
    };
    let Some(data) = decoded else {
        return Ok(None);
    };
    let status = if !h.has_checksum() {
        ChecksumStatus::Absent
    } else if policy == ChecksumPolicy::Skip || verified {
        ChecksumStatus::NotChecked
    } else if md5(stored) == h.checksum {
        ChecksumStatus::Stored
    } else {
        return Ok(None); // the whole decode settles the legacy convention or reports the mismatch
    };
    Ok(Some((data, status)))
}

/// [`decode_stored`] for the decoded bytes `range` only: `Some` when the block's codec decodes
/// parts (chunked `lz4`), `None` when the whole block must be decoded.
pub fn decode_stored_range(
    info: &BlockInfo,
    stored: &[u8],
    options: &ReadOptions,
    range: std::ops::Range<u64>,
) -> Result<Option<Vec<u8>>> {
    let got = decode_block_range(info, stored, options, options.checksums, false, range)?;
    Ok(got.map(|(d, _)| d))
}

fn resolve_index(blocks: &[BlockInfo], source: i64) -> Result<usize> {
    let n = blocks.len();
    let idx = if source < 0 {
        (n as i64).checked_add(source).filter(|&i| i >= 0)
    } else {
        Some(source).filter(|&i| (i as u64) < n as u64)
    };
    idx.map(|i| i as usize).ok_or(BlockError::NoSuchBlock {
        index: source,
        count: n,
    })
}

/// The blocks of a file held in memory or memory-mapped: uncompressed data is returned as a
/// borrowed slice of the file, compressed data is decoded on request, many blocks in parallel.
///
/// ```
/// use asdf_block::{BlockReader, BlockWriter, Label, EncodeOptions, ReadOptions, WriteOptions};
/// let mut w = BlockWriter::new(Vec::new(), 0, WriteOptions::default());
/// w.write_data(b"raw bytes", Label::NONE, &EncodeOptions::default()).unwrap();
/// w.write_data(&[7u8; 1000], Label(*b"zstd"), &EncodeOptions::default()).unwrap();
/// let file = w.finish().unwrap();
///
/// let r = BlockReader::new(file, 0, ReadOptions::default()).unwrap();
/// assert_eq!(r.len(), 2);
/// assert_eq!(&*r.data(0).unwrap(), b"raw bytes");          // zero-copy
/// assert_eq!(&*r.data(-1).unwrap(), &[7u8; 1000][..]);     // decoded; -1 = last block
/// ```
#[derive(Debug)]
pub struct BlockReader<B> {
    bytes: B,
    layout: BlockLayout,
    options: ReadOptions,
    path: Option<PathBuf>,
    verified: Vec<OnceLock<ChecksumStatus>>,
}

/// A [`BlockReader`] over a memory-mapped file.
pub type MappedBlocks = BlockReader<memmap2::Mmap>;

/// Opens the file at `path` for reading if it is a regular file (symbolic links followed).
///
/// A FIFO, a device, a socket or a directory is refused with an `InvalidInput` error naming
/// its kind, without blocking and without side effects: the type is checked before opening,
/// and again on the open handle (opened non-blocking, so a FIFO swapped in between cannot block
/// either). Every reader of a file named by untrusted data (external arrays, `$ref` targets)
/// opens it through here.
///
/// ```
/// let dir = std::env::temp_dir();
/// let e = asdf_block::open_regular(&dir).unwrap_err();
/// assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
/// assert!(e.to_string().contains("directory"), "{e}");
/// ```
pub fn open_regular(path: &Path) -> std::io::Result<File> {
    fn check(md: &std::fs::Metadata) -> std::io::Result<()> {
        if md.is_file() {
            return Ok(());
        }
        let ft = md.file_type();
        let mut kind = if ft.is_dir() {
            "a directory"
        } else {
            "a special file"
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if ft.is_fifo() {
                kind = "a FIFO (named pipe)";
            } else if ft.is_socket() {
                kind = "a socket";
            } else if ft.is_char_device() || ft.is_block_device() {
                kind = "a device";
            }
        }
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{kind}, not a regular file: only regular files are read as data"),
        ))
    }
    check(&std::fs::metadata(path)?)?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Non-blocking, so that opening a FIFO swapped in after the check cannot block; it
        // changes nothing for the regular file the handle is checked to be.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    check(&file.metadata()?)?;
    Ok(file)
}

/// Memory-maps the file at `path` read-only (a regular file: see [`open_regular`]). Errors name
/// the file.
pub fn map_file(path: &Path) -> Result<memmap2::Mmap> {
    let file =
        open_regular(path).map_err(|e| BlockError::io("opening the file", e).in_file(path))?;
    // SAFETY: the map is read-only and private to its reader. Like every memory-mapped reader
    // (numpy.memmap included), it relies on no other process truncating or rewriting the file
    // while it is open; this workspace's writers never modify a file in place but write a new
    // file and rename it over the old one, which leaves existing mappings valid.
    unsafe { memmap2::Mmap::map(&file) }
        .map_err(|e| BlockError::io("memory-mapping the file", e).in_file(path))
}

impl BlockReader<memmap2::Mmap> {
    /// Memory-maps the file at `path` and locates its blocks at or after byte `start` (the end of
    /// the tree; 0 is fine). Errors name the file.
    pub fn open(path: impl AsRef<Path>, start: u64, options: ReadOptions) -> Result<Self> {
        let path = path.as_ref();
        let map = map_file(path)?;
        let reader = BlockReader::new(map, start, options).map_err(|e| e.in_file(path))?;
        Ok(reader.with_path(path))
    }
}

impl<B: AsRef<[u8]>> BlockReader<B> {
    /// Locates the blocks of `bytes` (a whole file) at or after byte `start`.
    pub fn new(bytes: B, start: u64, options: ReadOptions) -> Result<Self> {
        let layout = scan_blocks(&mut bytes.as_ref(), start, options.use_index)?;
        for w in &layout.warnings {
            log::warn!("{w}");
        }
        let verified = (0..layout.blocks.len()).map(|_| OnceLock::new()).collect();
        Ok(BlockReader {
            bytes,
            layout,
            options,
            path: None,
            verified,
        })
    }

    /// Names the file these bytes came from in every later error.
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = Some(path.into());
        self
    }

    fn ctx(&self, e: BlockError) -> BlockError {
        match &self.path {
            Some(p) => e.in_file(p),
            None => e,
        }
    }

    /// The whole file.
    pub fn bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }

    /// The file this reader mapped, if opened by path.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// How the blocks were located.
    pub fn layout(&self) -> &BlockLayout {
        &self.layout
    }

    /// Position and header of every block.
    pub fn blocks(&self) -> &[BlockInfo] {
        &self.layout.blocks
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.layout.blocks.len()
    }

    /// Whether the file has no blocks.
    pub fn is_empty(&self) -> bool {
        self.layout.blocks.is_empty()
    }

    /// The options this reader uses.
    pub fn options(&self) -> &ReadOptions {
        &self.options
    }

    /// The block an ndarray `source` names: `0..n`, or negative counting from the end.
    pub fn resolve(&self, source: i64) -> Result<usize> {
        resolve_index(&self.layout.blocks, source).map_err(|e| self.ctx(e))
    }

    /// Position and header of block `source` (negative counts from the end).
    pub fn info(&self, source: i64) -> Result<&BlockInfo> {
        Ok(&self.layout.blocks[self.resolve(source)?])
    }

    /// The stored (possibly compressed) bytes of a block, borrowed from the file.
    pub fn stored(&self, source: i64) -> Result<&[u8]> {
        let info = self.info(source)?;
        // The layout scan checked the allocated range against the file length; `used_size` is
        // checked against `allocated_size` here, before the range is used.
        let h = &info.header;
        if !h.is_streamed() && h.used_size > h.allocated_size {
            return Err(self.ctx(BlockError::UsedExceedsAllocated {
                block: info.index,
                offset: info.offset,
                used: h.used_size,
                allocated: h.allocated_size,
            }));
        }
        let r = info.stored_range();
        Ok(&self.bytes()[r.start as usize..r.end as usize])
    }

    /// The decoded data of a block: borrowed from the file when uncompressed, decoded otherwise.
    /// The checksum is verified (once per block) according to [`ReadOptions::checksums`].
    pub fn data(&self, source: i64) -> Result<Cow<'_, [u8]>> {
        self.data_with(source, self.options.checksums)
    }

    fn data_with(&self, source: i64, policy: ChecksumPolicy) -> Result<Cow<'_, [u8]>> {
        let i = self.resolve(source)?;
        let info = &self.layout.blocks[i];
        let stored = self.stored(i as i64)?;
        let verified = self.verified[i].get().is_some();
        let (data, status) =
            decode_block(info, Cow::Borrowed(stored), &self.options, policy, verified)
                .map_err(|e| self.ctx(e))?;
        if matches!(status, ChecksumStatus::Stored | ChecksumStatus::Decoded) {
            let _ = self.verified[i].set(status);
        }
        Ok(data)
    }

    /// The decoded bytes `range` of block `source`, decoding only what covers it when the
    /// block's codec allows (chunked `lz4`); `None` when the whole block must be decoded (see
    /// [`data`](Self::data)). The checksum is verified once per block, as `data` does.
    pub fn data_range(&self, source: i64, range: std::ops::Range<u64>) -> Result<Option<Vec<u8>>> {
        let i = self.resolve(source)?;
        let info = &self.layout.blocks[i];
        let stored = self.stored(i as i64)?;
        let verified = self.verified[i].get().is_some();
        let got = decode_block_range(
            info,
            stored,
            &self.options,
            self.options.checksums,
            verified,
            range,
        )
        .map_err(|e| self.ctx(e))?;
        Ok(got.map(|(data, status)| {
            if status == ChecksumStatus::Stored {
                let _ = self.verified[i].set(status);
            }
            data
        }))
    }

    /// Checks one block completely: decodes it and verifies its checksum under `policy`
    /// ([`ChecksumPolicy::Skip`] only decodes).
    pub fn verify(&self, source: i64, policy: ChecksumPolicy) -> Result<ChecksumStatus> {
        self.checked_data(source, policy).map(|(_, status)| status)
    }

    /// [`verify`](Self::verify) that also returns the decoded data (borrowed when uncompressed),
    /// for a caller that checks a block and then reads it: the block is decoded once.
    ///
    /// ```
    /// use asdf_block::{BlockReader, BlockWriter, ChecksumPolicy, ChecksumStatus, EncodeOptions, Label};
    /// let mut w = BlockWriter::new(Vec::new(), 0, Default::default());
    /// w.write_data(&[7u8; 1000], Label::from_name("zlib").unwrap(), &EncodeOptions::default()).unwrap();
    /// let r = BlockReader::new(w.finish().unwrap(), 0, Default::default()).unwrap();
    /// let (data, status) = r.checked_data(0, ChecksumPolicy::Strict).unwrap();
    /// assert_eq!((data.len(), status), (1000, ChecksumStatus::Stored));
    /// ```
    pub fn checked_data(
        &self,
        source: i64,
        policy: ChecksumPolicy,
    ) -> Result<(Cow<'_, [u8]>, ChecksumStatus)> {
        let i = self.resolve(source)?;
        let info = &self.layout.blocks[i];
        let stored = self.stored(i as i64)?;
        let (data, status) =
            decode_block(info, Cow::Borrowed(stored), &self.options, policy, false)
                .map_err(|e| self.ctx(e))?;
        if matches!(status, ChecksumStatus::Stored | ChecksumStatus::Decoded) {
            let _ = self.verified[i].set(status);
        }
        Ok((data, status))
    }

    /// [`verify`](Self::verify) for every block, in parallel; one result per block.
    pub fn verify_all(&self, policy: ChecksumPolicy) -> Vec<Result<ChecksumStatus>>
    where
        B: Sync,
    {
        (0..self.len())
            .into_par_iter()
            .map(|i| self.verify(i as i64, policy))
            .collect()
    }

    /// The decoded data of every block, decoded in parallel.
    pub fn data_all(&self) -> Result<Vec<Cow<'_, [u8]>>>
    where
        B: Sync,
    {
        (0..self.len())
            .into_par_iter()
            .map(|i| self.data(i as i64))
            .collect()
    }

    /// Decodes a block into `dst`, which must be exactly its decoded size (for callers that
    /// assemble many blocks into one buffer, or fill a typed array). Checks the checksum like
    /// [`data`](Self::data), hashing the stored bytes while they are copied or decoded (on
    /// another rayon thread), so verification adds little to the copy. On an error `dst` holds
    /// unspecified bytes.
    pub fn decode_into(&self, source: i64, dst: &mut [u8]) -> Result<()> {
        let i = self.resolve(source)?;
        let info = &self.layout.blocks[i];
        let stored = self.stored(i as i64)?;
        let verified = self.verified[i].get().is_some();
        let status = decode_stored_into(info, stored, &self.options, verified, dst)
            .map_err(|e| self.ctx(e))?;
        if let Some(status) = status {
            let _ = self.verified[i].set(status);
        }
        Ok(())
    }
}

/// The blocks of a file read through `Read + Seek` (no memory map): headers are read on
/// construction, data on request.
///
/// ```
/// use std::io::Cursor;
/// use asdf_block::{BlockWriter, Label, EncodeOptions, ReadOptions, SeekBlockReader, WriteOptions};
/// let mut w = BlockWriter::new(Vec::new(), 0, WriteOptions::default());
/// w.write_data(&[1u8; 5000], Label(*b"bzp2"), &EncodeOptions::default()).unwrap();
/// let file = w.finish().unwrap();
/// let mut r = SeekBlockReader::new(Cursor::new(file), 0, ReadOptions::default()).unwrap();
/// assert_eq!(r.read(0).unwrap(), vec![1u8; 5000]);
/// ```
#[derive(Debug)]
pub struct SeekBlockReader<R> {
    src: SeekSource<R>,
    layout: BlockLayout,
    options: ReadOptions,
}

impl<R: Read + Seek> SeekBlockReader<R> {
    /// Locates the blocks of the stream at or after byte `start`.
    pub fn new(reader: R, start: u64, options: ReadOptions) -> Result<Self> {
        let mut src = SeekSource::new(reader)
            .map_err(|e| BlockError::io("measuring the stream length", e))?;
        let layout = scan_blocks(&mut src, start, options.use_index)?;
        for w in &layout.warnings {
            log::warn!("{w}");
        }
        Ok(SeekBlockReader {
            src,
            layout,
            options,
        })
    }

    /// How the blocks were located.
    pub fn layout(&self) -> &BlockLayout {
        &self.layout
    }

    /// Position and header of every block.
    pub fn blocks(&self) -> &[BlockInfo] {
        &self.layout.blocks
    }

    /// Reads the stored (possibly compressed) bytes of a block.
    pub fn read_stored(&mut self, source: i64) -> Result<Vec<u8>> {
        let info = self.layout.blocks[resolve_index(&self.layout.blocks, source)?];
        let h = &info.header;
        if !h.is_streamed() && h.used_size > h.allocated_size {
            return Err(BlockError::UsedExceedsAllocated {
                block: info.index,
                offset: info.offset,
                used: h.used_size,
                allocated: h.allocated_size,
            });
        }
        // The scan bounded the stored range by the stream length, so this allocation is backed
        // by bytes that exist.
        let mut buf = vec![0u8; info.stored_len as usize];
        self.src
            .read_exact_at(info.data_offset, &mut buf)
            .map_err(|e| {
                BlockError::io(
                    format!(
                        "reading block {} data at byte {}",
                        info.index, info.data_offset
                    ),
                    e,
                )
            })?;
        Ok(buf)
    }

    /// Reads and decodes a block, verifying its checksum according to the options.
    pub fn read(&mut self, source: i64) -> Result<Vec<u8>> {
        let stored = self.read_stored(source)?;
        let info = self.layout.blocks[resolve_index(&self.layout.blocks, source)?];
        let (data, _) = decode_block(
            &info,
            Cow::Owned(stored),
            &self.options,
            self.options.checksums,
            false,
        )?;
        Ok(data.into_owned())
    }

    /// The wrapped reader.
    pub fn into_inner(self) -> R {
        self.src.into_inner()
    }
}
