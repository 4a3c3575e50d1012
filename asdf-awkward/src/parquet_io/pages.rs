//! The pages of a column chunk without nulls — numbers, or lists of numbers — decoded straight
//! into their place in the layout's buffers.
//!
//! Such a list column has levels of bit width 1 (repetition 0 starts a record, definition 1
//! marks an item), so 64 levels are read as two machine words: record starts are the zero bits
//! of the repetition word, items the one bits of the definition word, and a record's end is a
//! popcount away. Values are copied from PLAIN pages or looked up through the dictionary page
//! into their slots, with no buffer in between.
//!
//! This reader only ever answers "placed" or "not mine": a page of another encoding, levels
//! that are not RLE/bit-packed, bytes short of what a header says, levels that describe no list,
//! or more records or items than their places hold all return `None`, and the caller decodes
//! the chunk again with the column reader, which reads or rejects it. Whatever it wrote is then
//! overwritten.

use parquet::basic::Encoding;
use parquet::column::page::Page;
use parquet::errors::Result;

use super::direct::Reserve;

/// Numbers stored as Parquet's PLAIN encoding stores them: little-endian, `SIZE` bytes each.
pub(super) trait Plain: Copy + Default + Send + Sync {
    const SIZE: usize;
    /// The number in `b` (exactly `SIZE` bytes).
    fn from_le(b: &[u8]) -> Self;
}

macro_rules! plain {
    ($($t:ty),*) => {$(
        impl Plain for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn from_le(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(b);
                <$t>::from_le_bytes(a)
            }
        }
    )*};
}
plain!(f64, f32, i64, i32);

/// Where a chunk's pages go: its `values`, and for a list column the `ends` of its records
/// (shifted by `base`, the items before the chunk).
pub(super) struct Place<'a, T> {
    pub(super) values: &'a mut [T],
    pub(super) ends: Option<&'a mut [i64]>,
    pub(super) base: i64,
}

/// The pages of one chunk placed, when every one is of a kind this reader knows and they fill
/// their places exactly (see the module's documentation).
pub(super) fn place_pages<T: Plain>(
    pages: impl Iterator<Item = Result<Page>>,
    mut place: Place<'_, T>,
) -> Option<()> {
    let mut dictionary: Option<Vec<T>> = None;
    let mut levels = ListLevels::default();
    let mut items = 0;
    for page in pages {
        let page = page.ok()?;
        let (n, encoding, levels_bytes, data) = match part(&page, place.ends.is_some())? {
            Part::Dictionary(bytes, n) => {
                let bytes = bytes.get(..n.checked_mul(T::SIZE)?)?;
                let entries = bytes.chunks_exact(T::SIZE).map(T::from_le).collect();
                dictionary.replace(entries).is_none().then_some(())?;
                continue;
            }
            Part::Data(n, encoding, levels, values) => (n, encoding, levels, values),
        };
        let count = match (levels_bytes, place.ends.as_deref_mut()) {
            (Some((rep, def)), Some(ends)) => levels.take(n, rep, def, items, ends, place.base)?,
            _ => n,
        };
        let slots = place.values.get_mut(items..items.checked_add(count)?)?;
        values(encoding, data, dictionary.as_deref(), slots)?;
        items += count;
    }
    if items != place.values.len() {
        return None;
    }
    match place.ends {
        Some(ends) => levels.finish(items, ends, place.base),
        None => Some(()),
    }
}

/// A dictionary page of byte strings: its bytes, and where each entry lies in them.
type Entries = (Vec<u8>, Vec<(usize, usize)>);

/// The `rows` strings (or byte strings) of a chunk without nulls, from its pages: their
/// offsets (from 0) and bytes, `room` reserved for them. `None` as for [`place_pages`].
pub(super) fn byte_pages(
    pages: impl Iterator<Item = Result<Page>>,
    rows: usize,
    room: Reserve,
) -> Option<(Vec<usize>, Vec<u8>)> {
    let mut offsets = Vec::with_capacity(room.records.min(rows) + 1);
    offsets.push(0);
    let mut content = Vec::with_capacity(room.bytes);
    let mut dictionary: Option<Entries> = None;
    for page in pages {
        let page = page.ok()?;
        let (n, encoding, data) = match part(&page, false)? {
            Part::Dictionary(buf, n) => {
                let mut entries = Vec::with_capacity(n.min(buf.len() / 4));
                let mut at = 0;
                for _ in 0..n {
                    let (value, rest) = length_prefixed(buf.get(at..)?)?;
                    entries.push((at + 4, value.len()));
                    at = buf.len() - rest.len();
                }
                dictionary
                    .replace((buf.to_vec(), entries))
                    .is_none()
                    .then_some(())?;
                continue;
            }
            Part::Data(n, encoding, _, values) => (n, encoding, values),
        };
        if offsets.len().checked_add(n)? > rows + 1 {
            return None;
        }
        match encoding {
            Encoding::PLAIN => {
                let mut rest = data;
                for _ in 0..n {
                    let (value, tail) = length_prefixed(rest)?;
                    content.extend_from_slice(value);
                    offsets.push(content.len());
                    rest = tail;
                }
            }
            Encoding::RLE_DICTIONARY | Encoding::PLAIN_DICTIONARY => {
                let (bytes, entries) = dictionary.as_ref()?;
                let (&width, runs) = data.split_first()?;
                let mut indices = Hybrid::new(runs, usize::from(width))?;
                let mut buf = [0u32; 1024];
                let mut left = n;
                while left > 0 {
                    let buf = &mut buf[..left.min(1024)];
                    indices.fill(buf)?;
                    for &i in buf.iter() {
                        let &(at, len) = entries.get(usize::try_from(i).ok()?)?;
                        content.extend_from_slice(bytes.get(at..at + len)?);
                        offsets.push(content.len());
                    }
                    left -= buf.len();
                }
            }
            _ => return None,
        }
    }
    (offsets.len() == rows + 1).then_some((offsets, content))
}

/// A PLAIN byte string at the front of `data`: a 4-byte little-endian length, then the bytes;
/// and what follows it.
fn length_prefixed(data: &[u8]) -> Option<(&[u8], &[u8])> {
    let (len, rest) = data.split_first_chunk::<4>()?;
    rest.split_at_checked(usize::try_from(u32::from_le_bytes(*len)).ok()?)
}

/// A page as this reader takes it apart.
enum Part<'a> {
    /// A dictionary page (PLAIN): its bytes and entry count.
    Dictionary(&'a [u8], usize),
    /// A data page: its level count, its values' encoding, for a list column its repetition and
    /// definition levels (RLE/bit-packed), and its values' bytes.
    Data(usize, Encoding, Option<(&'a [u8], &'a [u8])>, &'a [u8]),
}

/// `page` taken apart, for a list column (`lists`) or a column without levels; `None` for a
/// page of a kind this reader leaves to the column reader.
fn part(page: &Page, lists: bool) -> Option<Part<'_>> {
    match page {
        Page::DictionaryPage {
            buf,
            num_values,
            encoding,
            ..
        } => {
            let plain = matches!(encoding, Encoding::PLAIN | Encoding::PLAIN_DICTIONARY);
            let n = usize::try_from(*num_values).ok()?;
            plain.then_some(Part::Dictionary(buf, n))
        }
        Page::DataPage {
            buf,
            num_values,
            encoding,
            def_level_encoding,
            rep_level_encoding,
            ..
        } => {
            let mut rest = &buf[..];
            let levels = match lists {
                true if [*def_level_encoding, *rep_level_encoding] != [Encoding::RLE; 2] => {
                    return None
                }
                true => Some((prefixed(&mut rest)?, prefixed(&mut rest)?)),
                false => None,
            };
            let n = usize::try_from(*num_values).ok()?;
            Some(Part::Data(n, *encoding, levels, rest))
        }
        Page::DataPageV2 {
            buf,
            num_values,
            encoding,
            def_levels_byte_len,
            rep_levels_byte_len,
            ..
        } => {
            let rep_len = usize::try_from(*rep_levels_byte_len).ok()?;
            let def_len = usize::try_from(*def_levels_byte_len).ok()?;
            let (rep, rest) = buf.split_at_checked(rep_len)?;
            let (def, values) = rest.split_at_checked(def_len)?;
            let levels = match lists {
                true => Some((rep, def)),
                false if rep_len + def_len == 0 => None,
                false => return None,
            };
            let n = usize::try_from(*num_values).ok()?;
            Some(Part::Data(n, *encoding, levels, values))
        }
    }
}

/// A V1 page's levels: a 4-byte little-endian length, then that many bytes.
fn prefixed<'a>(rest: &mut &'a [u8]) -> Option<&'a [u8]> {
    let (levels, tail) = length_prefixed(rest)?;
    *rest = tail;
    Some(levels)
}

/// `slots.len()` values of `encoding` from `data` into `slots`.
fn values<T: Plain>(
    encoding: Encoding,
    data: &[u8],
    dictionary: Option<&[T]>,
    slots: &mut [T],
) -> Option<()> {
    match encoding {
        Encoding::PLAIN => {
            let bytes = data.get(..slots.len().checked_mul(T::SIZE)?)?;
            for (slot, b) in slots.iter_mut().zip(bytes.chunks_exact(T::SIZE)) {
                *slot = T::from_le(b);
            }
        }
        Encoding::RLE_DICTIONARY | Encoding::PLAIN_DICTIONARY => {
            let dictionary = dictionary?;
            let (&width, runs) = data.split_first()?;
            let mut indices = Hybrid::new(runs, usize::from(width))?;
            let mut buf = [0u32; 1024];
            for chunk in slots.chunks_mut(buf.len()) {
                let buf = &mut buf[..chunk.len()];
                indices.fill(buf)?;
                for (slot, &i) in chunk.iter_mut().zip(buf.iter()) {
                    *slot = *dictionary.get(usize::try_from(i).ok()?)?;
                }
            }
        }
        _ => return None,
    }
    Some(())
}

/// The levels of a list column that cannot be null, of items that cannot, across the pages of
/// a chunk.
#[derive(Default)]
struct ListLevels {
    records: usize,
    /// Whether the last level taken started an empty record (so repetition 1 cannot follow).
    last_empty: bool,
}

impl ListLevels {
    /// Takes a page's `n` levels (`rep` and `def` runs; `before`: the chunk's items before the
    /// page), writing the end of every record a start closes into `ends`; its item count.
    fn take(
        &mut self,
        n: usize,
        rep: &[u8],
        def: &[u8],
        before: usize,
        ends: &mut [i64],
        base: i64,
    ) -> Option<usize> {
        let (mut rep, mut def) = (Bits::new(rep), Bits::new(def));
        let (mut left, mut items) = (n, 0usize);
        while left > 0 {
            let k = left.min(64);
            let (r, d) = (rep.next(k)?, def.next(k)?);
            let starts = !r & ones(k);
            let empty = starts & !d;
            // A continuation (repetition 1) needs an item (definition 1) and must not follow an
            // empty record, nor come first in the chunk.
            let first = u64::from(self.last_empty || self.records == 0);
            if (r & !d) | ((empty << 1) & r) | (first & r) != 0 {
                return None;
            }
            let mut s = starts;
            while s != 0 {
                let bit = s.trailing_zeros();
                if self.records > 0 {
                    let below = (d & ((1u64 << bit) - 1)).count_ones() as usize;
                    *ends.get_mut(self.records - 1)? = base + (before + items + below) as i64;
                }
                self.records += 1;
                s &= s - 1;
            }
            self.last_empty = (empty >> (k - 1)) & 1 == 1;
            items += (d & ones(k)).count_ones() as usize;
            left -= k;
        }
        Some(items)
    }

    /// The last record's end, once every page is taken: `items` in all; the records must fill
    /// `ends`.
    fn finish(&self, items: usize, ends: &mut [i64], base: i64) -> Option<()> {
        if self.records != ends.len() {
            return None;
        }
        if let Some(last) = ends.last_mut() {
            *last = base + items as i64;
        }
        Some(())
    }
}

/// The low `k` bits set (`k` ≤ 64).
fn ones(k: usize) -> u64 {
    if k >= 64 {
        u64::MAX
    } else {
        (1u64 << k) - 1
    }
}

/// `k` (≤ 56) bits of `bytes` from bit `at`, least significant first; bits past the end read
/// as zeros.
fn bits_at(bytes: &[u8], at: usize, k: usize) -> u64 {
    let mut word = [0u8; 8];
    let from = bytes.get(at / 8..).unwrap_or_default();
    let n = from.len().min(8);
    word[..n].copy_from_slice(&from[..n]);
    (u64::from_le_bytes(word) >> (at % 8)) & ones(k)
}

/// One run of Parquet's RLE/bit-packed hybrid encoding.
enum Run<'a> {
    /// A value repeated (count left).
    Same(u32, usize),
    /// Bit-packed values: the bytes, the next value's index and the count.
    Packed(&'a [u8], usize, usize),
}

/// The next run's header and bytes at the front of `data`, for values `width` bits wide.
fn next_run<'a>(data: &mut &'a [u8], width: usize) -> Option<Run<'a>> {
    let (mut header, mut shift) = (0u64, 0);
    loop {
        let (&b, rest) = data.split_first()?;
        *data = rest;
        header |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            break;
        }
        shift += 7;
        if shift > 35 {
            return None;
        }
    }
    let count = usize::try_from(header >> 1).ok()?;
    if header & 1 == 1 {
        // `count` groups of 8 values, `width` bytes per group.
        let (bytes, rest) = data.split_at_checked(count.checked_mul(width)?)?;
        *data = rest;
        return Some(Run::Packed(bytes, 0, count.checked_mul(8)?));
    }
    let (value, rest) = data.split_at_checked(width.div_ceil(8))?;
    *data = rest;
    let value = value.iter().rev().fold(0u64, |v, &b| v << 8 | u64::from(b));
    Some(Run::Same(u32::try_from(value).ok()?, count))
}

/// Values of bit width 1 (levels), 64 at a time.
struct Bits<'a> {
    data: &'a [u8],
    run: Run<'a>,
}

impl<'a> Bits<'a> {
    fn new(data: &'a [u8]) -> Bits<'a> {
        Bits {
            data,
            run: Run::Same(0, 0),
        }
    }

    /// The next `k` (≤ 64) values as the low bits of a word, the first lowest.
    fn next(&mut self, k: usize) -> Option<u64> {
        let (mut word, mut got) = (0u64, 0);
        while got < k {
            let want = k - got;
            match &mut self.run {
                Run::Same(v, left) if *left > 0 => {
                    let t = want.min(*left);
                    match *v {
                        0 => {}
                        1 => word |= ones(t) << got,
                        _ => return None,
                    }
                    (*left, got) = (*left - t, got + t);
                }
                Run::Packed(bytes, at, count) if *at < *count => {
                    let t = want.min(*count - *at).min(56);
                    word |= bits_at(bytes, *at, t) << got;
                    (*at, got) = (*at + t, got + t);
                }
                _ => self.run = next_run(&mut self.data, 1)?,
            }
        }
        Some(word)
    }
}

/// Values of any bit width up to 32 (dictionary indices).
struct Hybrid<'a> {
    data: &'a [u8],
    width: usize,
    run: Run<'a>,
}

impl<'a> Hybrid<'a> {
    fn new(data: &'a [u8], width: usize) -> Option<Hybrid<'a>> {
        let run = Run::Same(0, 0);
        (width <= 32).then_some(Hybrid { data, width, run })
    }

    /// Fills `out` with the next values.
    fn fill(&mut self, out: &mut [u32]) -> Option<()> {
        let mut i = 0;
        while i < out.len() {
            match &mut self.run {
                Run::Same(v, left) if *left > 0 => {
                    let t = (out.len() - i).min(*left);
                    out[i..i + t].fill(*v);
                    (*left, i) = (*left - t, i + t);
                }
                Run::Packed(bytes, at, count) if *at < *count => {
                    let t = (out.len() - i).min(*count - *at);
                    for (j, o) in out[i..i + t].iter_mut().enumerate() {
                        // A width of at most 32 bits fits in the 32 bits taken.
                        *o = bits_at(bytes, (*at + j) * self.width, self.width) as u32;
                    }
                    (*at, i) = (*at + t, i + t);
                }
                _ => self.run = next_run(&mut self.data, self.width)?,
            }
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs written by hand: an RLE run and a bit-packed run read back as the values they hold,
    /// at widths 1 and 3; a header past the data is `None`.
    #[test]
    fn hybrid_runs_read_back() {
        // Width 1: RLE of 5 ones (header 5<<1 = 10, value 1), then one bit-packed group
        // (header 1<<1|1 = 3) of 0b1010_0110.
        let data = [10u8, 1, 3, 0b1010_0110];
        let mut bits = Bits::new(&data);
        assert_eq!(bits.next(5), Some(0b11111));
        assert_eq!(bits.next(8), Some(0b1010_0110));
        assert_eq!(bits.next(1), None);
        // Width 3: one group of 8 values 0..8 packed (3 bytes), then RLE of 4 sevens.
        let packed = (0..8u32).fold(0u32, |acc, v| acc | v << (3 * v));
        let p = packed.to_le_bytes();
        let data = [3u8, p[0], p[1], p[2], 8, 7];
        let mut h = Hybrid::new(&data, 3).unwrap();
        let mut out = [0u32; 12];
        h.fill(&mut out).unwrap();
        assert_eq!(out, [0, 1, 2, 3, 4, 5, 6, 7, 7, 7, 7, 7]);
        assert!(h.fill(&mut [0u32; 1]).is_none());
        assert!(Hybrid::new(&data, 33).is_none());
    }

    /// A page's list levels: records' ends written, items counted; levels that describe no list
    /// are `None`.
    #[test]
    fn list_levels_place_ends() {
        // Records [a, b], [], [c]: rep 0 1 0 0, def 1 1 0 1, bit-packed (one group each).
        let (rep, def) = ([3u8, 0b0010], [3u8, 0b1011]);
        let mut levels = ListLevels::default();
        let mut ends = [0i64; 3];
        assert_eq!(levels.take(4, &rep, &def, 0, &mut ends, 10), Some(3));
        levels.finish(3, &mut ends, 10).unwrap();
        assert_eq!(ends, [12, 12, 13]);
        // A continuation of an empty record; a continuation without an item; one first.
        for (rep, def) in [(0b0100u8, 0b1011u8), (0b0010, 0b1001), (0b0001, 0b1011)] {
            let mut levels = ListLevels::default();
            let got = levels.take(4, &[3, rep], &[3, def], 0, &mut [0; 3], 0);
            assert_eq!(got, None, "{rep:04b} {def:04b}");
        }
        // More records than places.
        let mut levels = ListLevels::default();
        assert_eq!(levels.take(4, &rep, &def, 0, &mut [0; 1], 0), None);
    }
}
