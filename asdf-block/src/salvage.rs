//! Finding the blocks of a damaged file: every block magic after the tree, each header checked
//! and each checksum verified, then the blocks found matched with the block numbers the tree
//! names — through the block index when it agrees with what was found (even shifted), by file
//! order otherwise, and only as far as that order is certain.
//!
//! Everything is bounded: the search for magics is one linear `memmem` pass, and the bytes
//! hashed or decoded to judge candidates are capped at a few times the file's size (a file
//! packed with fake headers cannot make the scan quadratic).

use std::borrow::Cow;

use crate::error::{BlockError, Result};
use crate::header::BLOCK_MAGIC;
use crate::index::parse_index;
use crate::layout::{block_at, find_index, BlockInfo};
use crate::options::{ChecksumPolicy, ReadOptions};
use crate::reader::{decode_block, ChecksumStatus};

/// What checking a block found by the scan concluded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockState {
    /// The header's checksum holds (under either MD5 convention): the bytes are the ones
    /// written.
    Intact(ChecksumStatus),
    /// The header is sane and the data decodes, but there is no checksum to confirm the bytes
    /// (blocks written without one, streamed blocks).
    Unverified,
    /// The header is sane but the data fails its checksum or does not decode.
    Damaged(String),
}

impl BlockState {
    /// Whether the block's data can be used (intact or unverified).
    pub fn is_usable(&self) -> bool {
        !matches!(self, BlockState::Damaged(_))
    }
}

/// A block the scan found: where it is, its header, and what checking it concluded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundBlock {
    /// Position and header (`index` counts the blocks found, in file order).
    pub info: BlockInfo,
    /// The verdict.
    pub state: BlockState,
}

/// How the block numbers of the tree were matched with the blocks found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Matching {
    /// Through the block index (each entry matched with the block nearest to it).
    Index {
        /// The largest distance between a block and the offset its entry gives (0 when the
        /// index is right).
        max_shift: u64,
    },
    /// By file order: block `n` is the `n`-th block found, for the first `certain` blocks.
    Order {
        /// How many leading blocks are numbered with certainty: after bytes that are neither a
        /// block nor padding (a destroyed header?), later numbers could be shifted.
        certain: usize,
        /// File offset of the first unexplained bytes, when there are some.
        unexplained_at: Option<u64>,
    },
}

/// Block `n` of the original file, as far as the scan can tell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Slot {
    /// The `usize`-th entry of [`Scan::found`].
    Found(usize),
    /// Nothing usable was found for it; why.
    Missing(String),
}

/// What [`scan_damaged`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scan {
    /// Every block with a sane header, in file order.
    pub found: Vec<FoundBlock>,
    /// Block magics whose header is not sane (offset, why), at most [`MAX_REJECTED`] of them.
    pub rejected: Vec<(u64, String)>,
    /// How many magics were rejected in all.
    pub rejected_count: usize,
    /// The block index's offsets and where the index starts, when one parses.
    pub index: Option<(u64, Vec<u64>)>,
    /// Candidates left unchecked because the checking budget ran out.
    pub unchecked: usize,
    /// For each found block, whether something other than padding (or an overlap) comes
    /// between it and the previous block (or the tree), i.e. where a destroyed block could be.
    gaps: Vec<bool>,
}

/// Rejected magics listed one by one in [`Scan::rejected`]; the rest are only counted.
pub const MAX_REJECTED: usize = 1000;

/// Scans `bytes` (a whole file) from `start` (the end of the tree) for block magics, and
/// checks each header and checksum. Compressed blocks are decoded (bounded by
/// `options.limits`) to check them; nothing is kept decoded.
///
/// ```
/// use asdf_block::{BlockWriter, EncodeOptions, Label, ReadOptions, WriteOptions};
/// use asdf_block::salvage::{scan_damaged, BlockState, Slot};
/// let mut w = BlockWriter::new(Vec::new(), 0, WriteOptions::default());
/// w.write_data(b"first", Label::NONE, &EncodeOptions::default()).unwrap();
/// w.write_data(b"second", Label::NONE, &EncodeOptions::default()).unwrap();
/// let mut file = w.finish().unwrap();
/// let second = scan_damaged(&file, 0, &ReadOptions::default()).found[1].info.data_offset;
/// file[second as usize] ^= 0xff; // flip a data byte of the second block
/// let scan = scan_damaged(&file, 0, &ReadOptions::default());
/// assert_eq!(scan.found.len(), 2);
/// assert!(scan.found[0].state.is_usable());
/// assert!(matches!(scan.found[1].state, BlockState::Damaged(_)));
/// assert_eq!(scan.slots().1[0], Slot::Found(0));
/// ```
pub fn scan_damaged(bytes: &[u8], start: u64, options: &ReadOptions) -> Scan {
    let mut scan = Scan::default();
    let len = bytes.len() as u64;
    let mut budget = len.saturating_mul(4).saturating_add(64 << 20);
    let finder = memchr::memmem::Finder::new(&BLOCK_MAGIC);
    let mut pos = usize::try_from(start)
        .unwrap_or(usize::MAX)
        .min(bytes.len());
    let mut src = bytes;
    while let Some(i) = finder.find(&bytes[pos..]) {
        let off = (pos + i) as u64;
        let info = match block_at(&mut src, off, scan.found.len()) {
            Ok(info) => info,
            Err(e) => {
                scan.reject(off, e.to_string());
                pos += i + 1;
                continue;
            }
        };
        let cost = info.stored_len.saturating_add(info.header.data_size);
        let state = if cost > budget {
            scan.unchecked += 1;
            BlockState::Damaged("not checked: the scan's checking budget is spent".into())
        } else {
            budget -= cost;
            check(bytes, &info, options)
        };
        // A usable block's bytes are data: magics inside them are not blocks.
        pos = if state.is_usable() {
            usize::try_from(info.end())
                .unwrap_or(bytes.len())
                .min(bytes.len())
        } else {
            pos + i + 1
        };
        scan.found.push(FoundBlock { info, state });
    }
    scan.index = read_index(bytes, start);
    scan.gaps = gaps(bytes, start, &scan.found);
    scan
}

/// The position in `sorted` of the value nearest to `x` (the lower one on a tie).
fn nearest(sorted: &[u64], x: u64) -> Option<usize> {
    let k = sorted.partition_point(|&v| v < x);
    [k.checked_sub(1), Some(k)]
        .into_iter()
        .flatten()
        .filter(|&j| j < sorted.len())
        .min_by_key(|&j| sorted[j].abs_diff(x))
}

/// Whether unexplained bytes precede each found block (see [`Scan::gaps`]).
fn gaps(bytes: &[u8], start: u64, found: &[FoundBlock]) -> Vec<bool> {
    let mut prev = start;
    found
        .iter()
        .map(|f| {
            let o = f.info.offset;
            let clean = o >= prev
                && bytes
                    .get(prev as usize..o as usize)
                    .is_some_and(|g| g.iter().all(|&b| b == 0 || b.is_ascii_whitespace()));
            prev = f.info.end();
            !clean
        })
        .collect()
}

/// The block index of the file, if one parses (offsets as written, possibly wrong).
fn read_index(bytes: &[u8], start: u64) -> Option<(u64, Vec<u64>)> {
    let mut src = bytes;
    let at = find_index(&mut src, start).ok().flatten()?;
    let text = bytes.get(usize::try_from(at).ok()?..)?;
    let offsets = parse_index(text).ok()?;
    Some((at, offsets))
}

/// Checks the block's data: its checksum (either convention), and that it decodes.
fn check(bytes: &[u8], info: &BlockInfo, options: &ReadOptions) -> BlockState {
    let r = info.stored_range();
    let Some(stored) = bytes.get(r.start as usize..r.end as usize) else {
        return BlockState::Damaged("its data runs past the end of the file".into());
    };
    match decode_block(
        info,
        Cow::Borrowed(stored),
        options,
        ChecksumPolicy::AcceptLegacy,
        false,
    ) {
        Ok((_, status @ (ChecksumStatus::Stored | ChecksumStatus::Decoded))) => {
            BlockState::Intact(status)
        }
        Ok(_) => BlockState::Unverified,
        Err(e) => BlockState::Damaged(e.to_string()),
    }
}

impl Scan {
    fn reject(&mut self, offset: u64, why: String) {
        self.rejected_count += 1;
        if self.rejected.len() < MAX_REJECTED {
            self.rejected.push((offset, why));
        }
    }

    /// The decoded data of found block `i` (checked by the scan, so not hashed again).
    pub fn data<'a>(
        &self,
        bytes: &'a [u8],
        i: usize,
        options: &ReadOptions,
    ) -> Result<Cow<'a, [u8]>> {
        let f = self.found.get(i).ok_or(BlockError::NoSuchBlock {
            index: i as i64,
            count: self.found.len(),
        })?;
        let r = f.info.stored_range();
        let stored =
            bytes
                .get(r.start as usize..r.end as usize)
                .ok_or(BlockError::OutOfBounds {
                    block: i,
                    offset: f.info.offset,
                    end: r.end,
                    file_len: bytes.len() as u64,
                })?;
        let (data, _) = decode_block(
            &f.info,
            Cow::Borrowed(stored),
            options,
            ChecksumPolicy::Skip,
            true,
        )?;
        Ok(data)
    }

    /// How the original block numbers map to the blocks found, and the slot of each original
    /// block (as many as the index lists, or as file order can number with certainty).
    pub fn slots(&self) -> (Matching, Vec<Slot>) {
        if let Some(found) = self.by_index() {
            return found;
        }
        let (certain, unexplained_at) = self.certain_prefix();
        let slots = (0..certain).map(Slot::Found).collect();
        (
            Matching::Order {
                certain,
                unexplained_at,
            },
            slots,
        )
    }

    /// The index mapping, when the index explains every usable block found and at least half
    /// of its entries match. Entry and block match when each is the other's nearest (by file
    /// offset): shifts that differ along the file (bytes lost in several places) still match,
    /// while an entry whose block is gone matches nothing, since the blocks around it are
    /// nearer to their own entries.
    fn by_index(&self) -> Option<(Matching, Vec<Slot>)> {
        let (_, offsets) = self.index.as_ref()?;
        if offsets.is_empty() || self.found.is_empty() {
            return None;
        }
        let found: Vec<u64> = self.found.iter().map(|f| f.info.offset).collect();
        let mut entries: Vec<u64> = offsets.clone();
        entries.sort_unstable();
        entries.dedup();
        let mut slots: Vec<Slot> = offsets
            .iter()
            .map(|&o| {
                let j = nearest(&found, o)?;
                (nearest(&entries, found[j]) == entries.binary_search(&o).ok()).then_some(j)
            })
            .zip(offsets)
            .map(|(j, &o)| match j {
                Some(j) => Slot::Found(j),
                None => Slot::Missing(self.missing_near(o)),
            })
            .collect();
        let mut used = vec![false; self.found.len()];
        let mut max_shift = 0u64;
        for (s, &o) in slots.iter_mut().zip(offsets) {
            if let Slot::Found(j) = *s {
                if used[j] {
                    *s = Slot::Missing(format!("the index lists byte {o} more than once"));
                    continue;
                }
                used[j] = true;
                max_shift = max_shift.max(found[j].abs_diff(o));
            }
        }
        let matched = used.iter().filter(|&&u| u).count();
        let explained = self
            .found
            .iter()
            .zip(&used)
            .all(|(f, &u)| u || !f.state.is_usable());
        (explained && matched * 2 >= offsets.len())
            .then_some((Matching::Index { max_shift }, slots))
    }

    /// How many leading blocks found follow the tree and one another with nothing but padding
    /// between them, and where the first unexplained bytes end (the block after them).
    fn certain_prefix(&self) -> (usize, Option<u64>) {
        match self.gaps.iter().position(|&g| g) {
            Some(i) => (i, Some(self.found[i].info.offset)),
            None => (self.found.len(), None),
        }
    }

    /// Why no block matches the index entry at `offset`: a rejected header near it, if any.
    fn missing_near(&self, offset: u64) -> String {
        match self
            .rejected
            .iter()
            .filter(|(o, _)| o.abs_diff(offset) <= 8)
            .min_by_key(|(o, _)| o.abs_diff(offset))
        {
            Some((at, why)) => format!("its header at byte {at} is not sane: {why}"),
            None => format!("no block header at or near where the index places it (byte {offset})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{encode_index, BlockWriter, EncodeOptions, Label, WriteOptions};

    /// Three blocks (the second holding a block magic in its data) and an index; returns
    /// the file and the block offsets.
    fn file() -> (Vec<u8>, Vec<u64>) {
        let mut w = BlockWriter::new(Vec::new(), 0, WriteOptions::default());
        let e = EncodeOptions::default();
        let mut offs = Vec::new();
        for data in [&b"zero"[..], b"one \xd3BLK inside", b"two"] {
            offs.push(w.write_data(data, Label::NONE, &e).unwrap().offset);
        }
        (w.finish().unwrap(), offs)
    }

    fn found_offsets(scan: &Scan, slots: &[Slot]) -> Vec<Option<u64>> {
        slots
            .iter()
            .map(|s| match s {
                Slot::Found(i) => Some(scan.found[*i].info.offset),
                Slot::Missing(_) => None,
            })
            .collect()
    }

    #[test]
    fn intact_file_by_index_and_magic_in_data_ignored() {
        let (f, offs) = file();
        let scan = scan_damaged(&f, 0, &ReadOptions::default());
        assert_eq!(scan.found.len(), 3);
        assert_eq!(scan.rejected_count, 0);
        let (m, slots) = scan.slots();
        assert_eq!(m, Matching::Index { max_shift: 0 });
        assert_eq!(
            found_offsets(&scan, &slots),
            offs.iter().map(|&o| Some(o)).collect::<Vec<_>>()
        );
    }

    #[test]
    fn shifted_blocks_match_the_index_by_its_common_shift() {
        let (f, offs) = file();
        let mut shifted = vec![b' '; 3];
        shifted.extend_from_slice(&f[..f.len()]);
        // The index still names the old offsets: blocks are 3 bytes after them.
        let scan = scan_damaged(&shifted, 0, &ReadOptions::default());
        let (m, slots) = scan.slots();
        assert_eq!(m, Matching::Index { max_shift: 3 });
        assert_eq!(
            found_offsets(&scan, &slots),
            offs.iter().map(|&o| Some(o + 3)).collect::<Vec<_>>()
        );
    }

    #[test]
    fn uneven_shifts_match_entry_by_entry() {
        // Bytes lost inside block 0 (one) and block 1 (two), as a text-mode copy that drops
        // CRs does: blocks 0 and 1 fail their checksums, block 2 is 3 bytes early.
        let (f, offs) = file();
        let data = scan_damaged(&f, 0, &ReadOptions::default());
        let (d0, d1) = (
            data.found[0].info.data_offset,
            data.found[1].info.data_offset,
        );
        let mut g = f.clone();
        g.drain(d1 as usize..d1 as usize + 2);
        g.remove(d0 as usize);
        let scan = scan_damaged(&g, 0, &ReadOptions::default());
        let (m, slots) = scan.slots();
        assert_eq!(m, Matching::Index { max_shift: 3 });
        assert_eq!(
            found_offsets(&scan, &slots),
            vec![Some(offs[0]), Some(offs[1] - 1), Some(offs[2] - 3)]
        );
        let states: Vec<bool> = slots
            .iter()
            .map(|s| match s {
                Slot::Found(i) => scan.found[*i].state.is_usable(),
                Slot::Missing(_) => false,
            })
            .collect();
        assert_eq!(states, [false, false, true]);
    }

    #[test]
    fn destroyed_header_with_index_leaves_a_hole_not_a_shift() {
        let (mut f, offs) = file();
        f[offs[1] as usize] = b'x';
        let scan = scan_damaged(&f, 0, &ReadOptions::default());
        let (m, slots) = scan.slots();
        assert_eq!(m, Matching::Index { max_shift: 0 });
        assert!(matches!(&slots[1], Slot::Missing(why) if why.contains("no block header")));
        assert_eq!(found_offsets(&scan, &slots)[2], Some(offs[2]));
    }

    #[test]
    fn destroyed_header_without_index_stops_the_certain_order() {
        let (f, offs) = file();
        let mut f = f[..f.len() - encode_index(&offs).len()].to_vec();
        f[offs[1] as usize] = b'x';
        let scan = scan_damaged(&f, 0, &ReadOptions::default());
        assert!(scan.index.is_none());
        // Block 2 is found, but after unexplained bytes: its number is not certain.
        let (m, slots) = scan.slots();
        assert!(
            matches!(
                m,
                Matching::Order {
                    certain: 1,
                    unexplained_at: Some(_)
                }
            ),
            "{m:?}"
        );
        assert_eq!(slots.len(), 1);
    }

    #[test]
    fn flipped_data_is_damaged_and_truncation_rejected() {
        let (mut f, offs) = file();
        let data1 = scan_damaged(&f, 0, &ReadOptions::default()).found[1]
            .info
            .data_offset;
        f[data1 as usize] ^= 1;
        let scan = scan_damaged(&f, 0, &ReadOptions::default());
        assert!(matches!(&scan.found[1].state, BlockState::Damaged(w) if w.contains("checksum")));
        // The magic inside the damaged block's data is looked at too, and rejected.
        assert_eq!(scan.rejected_count, 1);
        assert!(scan.found[2].state.is_usable());
        let (f, _) = file();
        let cut = &f[..offs[2] as usize + 56];
        let scan = scan_damaged(cut, 0, &ReadOptions::default());
        assert_eq!(scan.rejected_count, 1);
        assert!(scan.found.iter().all(|b| b.info.offset < offs[2]));
    }

    #[test]
    fn a_file_of_fake_headers_stays_bounded() {
        // Every 4 bytes a magic; each parses as a header only where 54 bytes follow.
        let mut f = Vec::new();
        for _ in 0..20_000 {
            f.extend_from_slice(&crate::header::BLOCK_MAGIC);
        }
        let scan = scan_damaged(&f, 0, &ReadOptions::default());
        assert!(scan.found.is_empty());
        assert_eq!(scan.rejected_count, 20_000);
        assert_eq!(scan.rejected.len(), MAX_REJECTED);
    }
}
