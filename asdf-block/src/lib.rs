//! # asdf-block
//!
//! The binary-block layer of ASDF (Advanced Scientific Data Format) files: everything after the
//! YAML tree. It knows nothing of YAML; the `asdf` crate ties it to the tree.
//!
//! * [`BlockHeader`]: the `\xd3BLK` header (big-endian fields, `header_size` ≥ 48 honoured,
//!   STREAMED flag, 4-byte compression [`Label`], allocated/used/data sizes, MD5).
//! * [`Codec`] and [`CodecRegistry`] (from the codec kernel, `array-codecs`, re-exported here as
//!   [`codec`]): `zlib`, `bzp2`, `lz4` (Python asdf's chunk framing, and LZ4 frames written by
//!   older ASDF.jl), `lz4f`, `zstd`, `blsc` and `xz` (and `bls2` with the `bls2` feature, which
//!   needs cmake to build), each read and written byte-compatibly with the tools that use it;
//!   register your own for other labels.
//! * [`scan_blocks`]: locates blocks after the tree, using the block index only once every entry
//!   is validated, otherwise walking the headers; tolerates padding before, between (allocated
//!   space) and after the blocks.
//! * [`BlockReader`]: zero-copy access to uncompressed data over a memory map or buffer, checksum
//!   verification under a [`ChecksumPolicy`], size ceilings ([`Limits`]) checked before any
//!   allocation, parallel decoding of many blocks (and of the chunks of one `lz4` block).
//!   [`SeekBlockReader`] does the same over any `Read + Seek`.
//! * [`BlockWriter`]: streams blocks to any `Write` (optionally aligning data for zero-copy
//!   readers), then the block index; or a final streamed block.
//!
//! ```
//! use asdf_block::{BlockReader, BlockWriter, EncodeOptions, Label, ReadOptions, WriteOptions};
//! let data: Vec<u8> = (0..100_000u32).flat_map(|i| (i % 7).to_le_bytes()).collect();
//! let mut w = BlockWriter::new(Vec::new(), 0, WriteOptions::default());
//! for codec in ["zlib", "bzp2", "lz4", "lz4f", "zstd", "blsc", "xz"] {
//!     let enc = EncodeOptions { typesize: 4, ..EncodeOptions::default() };
//!     w.write_data(&data, Label::from_name(codec).unwrap(), &enc).unwrap();
//! }
//! let file = w.finish().unwrap();
//! let r = BlockReader::new(&file[..], 0, ReadOptions::default()).unwrap();
//! for block in r.data_all().unwrap() {
//!     assert_eq!(&*block, &data[..]);
//! }
//! ```

pub mod alloc;
mod error;
mod header;
mod index;
pub mod layout;
mod options;
mod reader;
pub mod salvage;
mod source;
mod writer;

// The codecs are the kernel's (`array-codecs`, shared with RawArray and asdf-awkward), re-exported
// here with every codec enabled.
pub use array_codecs as codec;
pub use array_codecs::{numcodecs_decode, NUMCODECS_IDS};
pub use array_codecs::{
    Blosc, Bzip2, Codec, CodecError, CodecErrorKind, CodecExtension, CodecRegistry, EncodeOptions,
    Label, Lz4Chunked, Lz4Frame, Xz, Zlib, Zstd, BLOSC_MAX_BUFFERSIZE, LZ4_CHUNK_SIZE,
};
#[cfg(feature = "bls2")]
pub use array_codecs::{Blosc2, BLOSC2_MAX_BUFFERSIZE};
pub use error::{hex, BlockError, Result};
pub use header::{BlockHeader, BLOCK_MAGIC, FLAG_STREAMED, HEADER_LEN, MIN_HEADER_SIZE};
pub use index::{encode_index, parse_index, INDEX_HEADER};
pub use layout::{find_first_block, scan_blocks, BlockInfo, BlockLayout};
pub use options::{ChecksumPolicy, Limits, ReadOptions, WriteOptions};
pub use reader::{
    decode_stored, decode_stored_into, decode_stored_range, map_file, md5, open_regular,
    BlockReader, ChecksumStatus, MappedBlocks, SeekBlockReader,
};
pub use source::{SeekSource, Source};
pub use writer::{
    encode_block, encode_blocks, pool_share, BlockWriter, EncodedBlock, StreamedBlock,
};
