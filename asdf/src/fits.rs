//! ASDF inside FITS, as JWST pipeline products are written (`stdatamodels`): the ASDF tree is
//! the one row of a binary-table extension named `ASDF`, and its arrays name image extensions
//! as their source (`source: fits:SCI,1`, `fits:EXTNAME,EXTVER`).
//!
//! [`FitsAsdf`] finds that extension, reads the tree, and resolves `fits:` sources to the image
//! data: big-endian as FITS stores it (the tree's `byteorder: big` says so), with the unsigned
//! convention undone (`BZERO = 2^(n-1)`, `BSCALE = 1`: the sign bit flipped, as astropy does).
//! Other scalings are refused rather than misread. The FITS structure is untrusted input: every
//! size is checked against the file before it is used, nothing is allocated from a header's
//! word alone, and the number of header cards and extensions is bounded.

use std::borrow::Cow;
use std::ops::Range;
use std::path::{Path, PathBuf};

use asdf_ndarray::{AnyArray, BlockStore, Element, NdError};
use asdf_yaml::Node;
use ndarray::ArrayD;

use crate::arrays::{array_in, read_in};
use crate::error::{AsdfError, Result};
use crate::file::{AsdfFile, OpenOptions};

/// FITS files are made of 2880-byte records.
const RECORD: usize = 2880;
/// One header card.
const CARD: usize = 80;
/// Most extensions read from one file.
const MAX_HDUS: usize = 10_000;
/// Most cards in one header.
const MAX_CARDS: usize = 100_000;

/// Whether `head` starts like a FITS file (`SIMPLE  =` in the first card).
pub fn is_fits(head: &[u8]) -> bool {
    head.starts_with(b"SIMPLE  =")
}

/// One header-data unit: what its header says, and where its data is.
#[derive(Clone, Debug, PartialEq)]
pub struct Hdu {
    /// Position in the file (0 = the primary HDU).
    pub index: usize,
    /// `XTENSION` (`IMAGE`, `BINTABLE`, ...), `PRIMARY` for the first.
    pub kind: String,
    /// `EXTNAME`, if any.
    pub name: Option<String>,
    /// `EXTVER` (1 when absent).
    pub version: i64,
    /// `BITPIX`.
    pub bitpix: i64,
    /// `NAXISn` in C order (the last axis varies fastest).
    pub shape: Vec<usize>,
    /// `BSCALE` and `BZERO` (1 and 0 when absent).
    pub bscale: f64,
    /// See `bscale`.
    pub bzero: f64,
    /// Byte range of the data in the file (without the padding to whole records).
    pub data: Range<usize>,
    /// `(keyword, value)` of the cards this reader uses, values as written.
    cards: Vec<(String, String)>,
}

impl Hdu {
    fn card(&self, key: &str) -> Option<&str> {
        self.cards
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

fn bad(what: impl std::fmt::Display) -> AsdfError {
    AsdfError::InvalidTree(format!("FITS: {what}"))
}

/// A FITS value as text: a quoted string unquoted (`''` → `'`, trailing blanks dropped), other
/// values trimmed, a `/ comment` removed.
fn card_value(raw: &str) -> String {
    let raw = raw.trim_start();
    if let Some(rest) = raw.strip_prefix('\'') {
        let mut out = String::new();
        let mut chars = rest.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\'' {
                if chars.peek() == Some(&'\'') {
                    chars.next();
                    out.push('\'');
                    continue;
                }
                break;
            }
            out.push(c);
        }
        return out.trim_end().to_string();
    }
    raw.split('/').next().unwrap_or("").trim().to_string()
}

/// The header starting at byte `at`: its cards and the offset of its data (after `END`).
fn read_header(bytes: &[u8], at: usize) -> Result<(Vec<(String, String)>, usize)> {
    let mut cards = Vec::new();
    let mut pos = at;
    loop {
        let card = bytes
            .get(pos..pos + CARD)
            .ok_or_else(|| bad(format!("the header at byte {at} has no END card")))?;
        pos += CARD;
        // FITS headers are ASCII; checking it makes every byte index below a char boundary.
        let text = std::str::from_utf8(card)
            .ok()
            .filter(|t| t.is_ascii())
            .ok_or_else(|| bad(format!("the card at byte {} is not ASCII", pos - CARD)))?;
        let key = text[..8].trim_end();
        if key == "END" {
            break;
        }
        if cards.len() >= MAX_CARDS {
            return Err(bad(format!(
                "the header at byte {at} has more than {MAX_CARDS} cards"
            )));
        }
        if &text[8..10] == "= " {
            cards.push((key.to_string(), card_value(&text[10..])));
        }
    }
    Ok((cards, pos.div_ceil(RECORD) * RECORD))
}

fn int(cards: &[(String, String)], key: &str, default: Option<i64>, at: usize) -> Result<i64> {
    match cards.iter().find(|(k, _)| k == key) {
        Some((_, v)) => v.parse().map_err(|_| {
            bad(format!(
                "{key} = {v:?} in the header at byte {at} is not an integer"
            ))
        }),
        None => default.ok_or_else(|| bad(format!("the header at byte {at} has no {key}"))),
    }
}

fn float(cards: &[(String, String)], key: &str, default: f64) -> f64 {
    cards
        .iter()
        .find(|(k, _)| k == key)
        .and_then(|(_, v)| v.replace(['D', 'd'], "E").parse().ok())
        .unwrap_or(default)
}

/// Every HDU of the FITS file `bytes`, data ranges checked against its length.
pub fn hdus(bytes: &[u8]) -> Result<Vec<Hdu>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() && out.len() < MAX_HDUS {
        let (cards, data_start) = read_header(bytes, at)?;
        let first = if out.is_empty() { "SIMPLE" } else { "XTENSION" };
        let kind = match cards.first() {
            Some((k, _)) if k == "SIMPLE" && out.is_empty() => "PRIMARY".to_string(),
            Some((k, v)) if k == "XTENSION" && !out.is_empty() => v.clone(),
            _ => {
                return Err(bad(format!(
                    "the header at byte {at} does not start with {first}"
                )))
            }
        };
        let bitpix = int(&cards, "BITPIX", None, at)?;
        if ![8, 16, 32, 64, -32, -64].contains(&bitpix) {
            return Err(bad(format!("BITPIX = {bitpix} in the header at byte {at}")));
        }
        let naxis = int(&cards, "NAXIS", None, at)?;
        if !(0..=999).contains(&naxis) {
            return Err(bad(format!("NAXIS = {naxis} in the header at byte {at}")));
        }
        let mut axes = Vec::new();
        for i in 1..=naxis {
            let n = int(&cards, &format!("NAXIS{i}"), None, at)?;
            axes.push(usize::try_from(n).map_err(|_| bad(format!("NAXIS{i} = {n} at byte {at}")))?);
        }
        let pcount = int(&cards, "PCOUNT", Some(0), at)?;
        let gcount = int(&cards, "GCOUNT", Some(1), at)?;
        let count = |v: i64, k: &str| {
            usize::try_from(v).map_err(|_| bad(format!("{k} = {v} at byte {at}")))
        };
        let elements = if axes.is_empty() {
            Some(0)
        } else {
            axes.iter()
                .try_fold(1usize, |a, &n| a.checked_mul(n))
                .and_then(|n| n.checked_add(count(pcount, "PCOUNT").ok()?))
                .and_then(|n| n.checked_mul(count(gcount, "GCOUNT").ok()?))
        };
        let len = elements
            .and_then(|n| n.checked_mul(bitpix.unsigned_abs() as usize / 8))
            .filter(|&n| {
                data_start
                    .checked_add(n)
                    .is_some_and(|end| end <= bytes.len())
            })
            .ok_or_else(|| {
                bad(format!(
                    "the data of the HDU at byte {at} runs past the end of the file"
                ))
            })?;
        axes.reverse();
        let name = cards
            .iter()
            .find(|(k, _)| k == "EXTNAME")
            .map(|(_, v)| v.clone());
        out.push(Hdu {
            index: out.len(),
            kind,
            name,
            version: int(&cards, "EXTVER", Some(1), at)?,
            bitpix,
            shape: axes,
            bscale: float(&cards, "BSCALE", 1.0),
            bzero: float(&cards, "BZERO", 0.0),
            data: data_start..data_start + len,
            cards,
        });
        at = (data_start + len).div_ceil(RECORD) * RECORD;
    }
    Ok(out)
}

/// The bytes of the ASDF file stored in the `ASDF` binary table `hdu` (its one row's one byte
/// column, inline or in the heap).
fn asdf_bytes<'a>(bytes: &'a [u8], hdu: &Hdu) -> Result<&'a [u8]> {
    let rows = hdu.shape.first().copied().unwrap_or(0);
    let row = hdu.shape.get(1).copied().unwrap_or(0);
    let form = hdu.card("TFORM1").unwrap_or("").trim().to_ascii_uppercase();
    if hdu.kind != "BINTABLE" || rows != 1 || hdu.card("TFIELDS") != Some("1") {
        return Err(bad(
            "the ASDF extension is not a one-row, one-column binary table",
        ));
    }
    let data = &bytes[hdu.data.clone()];
    let table = data
        .get(..row)
        .ok_or_else(|| bad("the ASDF extension's row is cut short"))?;
    if let Some(n) = form.strip_suffix('B') {
        let n: usize = if n.is_empty() {
            1
        } else {
            n.parse().map_err(|_| bad(format!("TFORM1 = {form:?}")))?
        };
        return table
            .get(..n)
            .ok_or_else(|| bad("the ASDF extension's row is shorter than TFORM1"));
    }
    // A variable-length byte array: a (count, offset) descriptor into the heap.
    let (count, offset) = match form.trim_start_matches('1').as_bytes().first() {
        Some(b'P') if table.len() >= 8 => (
            u32::from_be_bytes(table[..4].try_into().unwrap_or_default()) as u64,
            u32::from_be_bytes(table[4..8].try_into().unwrap_or_default()) as u64,
        ),
        Some(b'Q') if table.len() >= 16 => (
            u64::from_be_bytes(table[..8].try_into().unwrap_or_default()),
            u64::from_be_bytes(table[8..16].try_into().unwrap_or_default()),
        ),
        _ => {
            return Err(bad(format!(
                "the ASDF extension's column has format {form:?}, not bytes"
            )))
        }
    };
    let heap = hdu
        .card("THEAP")
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(row as u64);
    let start = heap
        .checked_add(offset)
        .and_then(|s| usize::try_from(s).ok());
    let end = start.and_then(|s| s.checked_add(usize::try_from(count).ok()?));
    match (start, end) {
        (Some(s), Some(e)) if e <= data.len() => Ok(&data[s..e]),
        _ => Err(bad("the ASDF extension's heap entry lies outside its data")),
    }
}

/// The bytes a FITS file is read from.
enum FitsBytes {
    Map(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl AsRef<[u8]> for FitsBytes {
    fn as_ref(&self) -> &[u8] {
        match self {
            FitsBytes::Map(m) => m,
            FitsBytes::Owned(v) => v,
        }
    }
}

/// A FITS file with an ASDF tree inside (see the [module](self) documentation).
///
/// ```
/// let fits = asdf::fits::FitsAsdf::from_bytes(b"not a fits file".to_vec(), &Default::default());
/// assert!(fits.unwrap_err().to_string().contains("FITS"));
/// ```
pub struct FitsAsdf {
    asdf: AsdfFile<Vec<u8>>,
    bytes: FitsBytes,
    hdus: Vec<Hdu>,
    path: Option<PathBuf>,
}

impl std::fmt::Debug for FitsAsdf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FitsAsdf")
            .field("path", &self.path)
            .field("hdus", &self.hdus.len())
            .finish()
    }
}

impl FitsAsdf {
    /// Opens the FITS file at `path` (memory-mapped).
    pub fn open(path: impl AsRef<Path>, options: &OpenOptions) -> Result<FitsAsdf> {
        let path = path.as_ref();
        let file =
            std::fs::File::open(path).map_err(|e| AsdfError::io("opening", e).in_file(path))?;
        // SAFETY: the map is read-only and private; as with every memory map (and `AsdfFile`),
        // another process truncating the file while it is mapped is outside what this reader
        // can guard against. The map is owned by the returned value.
        let map = unsafe { memmap2::Mmap::map(&file) }
            .map_err(|e| AsdfError::io("mapping", e).in_file(path))?;
        let mut f = Self::from_source(FitsBytes::Map(map), options).map_err(|e| e.in_file(path))?;
        f.path = Some(path.to_path_buf());
        Ok(f)
    }

    /// Reads a FITS file held in memory.
    pub fn from_bytes(bytes: Vec<u8>, options: &OpenOptions) -> Result<FitsAsdf> {
        Self::from_source(FitsBytes::Owned(bytes), options)
    }

    fn from_source(bytes: FitsBytes, options: &OpenOptions) -> Result<FitsAsdf> {
        let raw = bytes.as_ref();
        if !is_fits(raw) {
            return Err(bad("the file does not start with a SIMPLE card"));
        }
        let hdus = hdus(raw)?;
        let hdu = hdus
            .iter()
            .find(|h| h.name.as_deref() == Some("ASDF"))
            .ok_or_else(|| bad("no extension named ASDF: this FITS file holds no ASDF tree"))?;
        let asdf = AsdfFile::from_bytes(asdf_bytes(raw, hdu)?.to_vec(), options)?;
        Ok(FitsAsdf {
            asdf,
            bytes,
            hdus,
            path: None,
        })
    }

    /// The tree.
    pub fn tree(&self) -> &Node {
        self.asdf.tree()
    }

    /// The ASDF file of the `ASDF` extension (its tree, header, blocks if any).
    pub fn asdf(&self) -> &AsdfFile<Vec<u8>> {
        &self.asdf
    }

    /// Every HDU of the file.
    pub fn hdus(&self) -> &[Hdu] {
        &self.hdus
    }

    /// The FITS file's path, when opened from one.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The HDU a `fits:` source names: `fits:NAME,VER`, `fits:NAME` (version 1) or `fits:N`
    /// (the N-th HDU).
    pub fn hdu_for(&self, source: &str) -> Option<&Hdu> {
        let spec = source.strip_prefix("fits:")?.trim();
        if let Ok(i) = spec.parse::<usize>() {
            return self.hdus.get(i);
        }
        let (name, ver) = match spec.split_once(',') {
            Some((n, v)) => (n.trim(), v.trim().parse().ok()?),
            None => (spec, 1),
        };
        self.hdus.iter().find(|h| {
            h.name
                .as_deref()
                .is_some_and(|n| n.eq_ignore_ascii_case(name))
                && h.version == ver
        })
    }

    /// The array at `pointer` whatever its datatype.
    pub fn read(&self, pointer: &str) -> Result<AnyArray> {
        read_in(self.node(pointer)?, pointer, self, &self.asdf.array_limits)
    }

    /// The array at `pointer` as `ArrayD<T>`.
    pub fn array<T: Element>(&self, pointer: &str) -> Result<ArrayD<T>> {
        array_in(self.node(pointer)?, pointer, self, &self.asdf.array_limits)
    }

    /// The array at `pointer` and its mask (see [`AsdfFile::read_masked`]).
    pub fn read_masked(&self, pointer: &str) -> Result<(AnyArray, Option<ArrayD<bool>>)> {
        crate::arrays::meta_of(pointer, self.node(pointer)?)?
            .read_masked_with(self, &self.asdf.array_limits)
            .map_err(|e| crate::arrays::arr(pointer, e))
    }

    /// JSON Pointers and kinds of every array.
    pub fn arrays(&self) -> Vec<(String, crate::ArrayKind)> {
        crate::find_arrays(self.tree())
    }

    fn node(&self, pointer: &str) -> Result<&Node> {
        self.tree()
            .pointer(pointer)
            .ok_or_else(|| AsdfError::NoNode(pointer.to_string()))
    }
}

/// `data` (of `hdu`) with the unsigned-integer convention undone: each big-endian element's
/// sign bit flipped. Other scalings are refused.
fn unscaled<'a>(data: &'a [u8], hdu: &Hdu) -> asdf_ndarray::Result<Cow<'a, [u8]>> {
    if hdu.bscale == 1.0 && hdu.bzero == 0.0 {
        return Ok(Cow::Borrowed(data));
    }
    let bits = hdu.bitpix;
    let unsigned = hdu.bscale == 1.0
        && ((bits == 8 && hdu.bzero == -128.0)
            || (bits > 8 && hdu.bzero == 2f64.powi(bits as i32 - 1)));
    if !unsigned {
        return Err(NdError::Usage(format!(
            "FITS extension {}: scaled data (BSCALE = {}, BZERO = {}) is not read",
            hdu.index, hdu.bscale, hdu.bzero
        )));
    }
    let mut out = data.to_vec();
    for first in out.iter_mut().step_by((bits / 8) as usize) {
        *first ^= 0x80;
    }
    Ok(Cow::Owned(out))
}

impl BlockStore for FitsAsdf {
    fn block(&self, source: i64) -> asdf_ndarray::Result<Cow<'_, [u8]>> {
        self.asdf.block(source)
    }

    fn external(&self, uri: &str) -> asdf_ndarray::Result<Cow<'_, [u8]>> {
        if !uri.starts_with("fits:") {
            return self.asdf.external(uri);
        }
        let hdu = self
            .hdu_for(uri)
            .ok_or_else(|| NdError::Usage(format!("no FITS extension {uri:?} in this file")))?;
        unscaled(&self.bytes.as_ref()[hdu.data.clone()], hdu)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(text: &str) -> String {
        format!("{text:<80}")
    }

    /// A header of `cards` padded to a record.
    fn header(cards: &[&str]) -> Vec<u8> {
        let mut h: String = cards.iter().map(|c| card(c)).collect();
        h.push_str(&card("END"));
        let mut b = h.into_bytes();
        b.resize(b.len().div_ceil(RECORD) * RECORD, b' ');
        b
    }

    /// `bytes` with the first `from` replaced by `to` (of the same length).
    fn replace(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
        let at = bytes.windows(from.len()).position(|w| w == from).unwrap();
        let mut out = bytes.to_vec();
        out[at..at + to.len()].copy_from_slice(to);
        out
    }

    fn pad(mut b: Vec<u8>) -> Vec<u8> {
        b.resize(b.len().div_ceil(RECORD) * RECORD, 0);
        b
    }

    /// A FITS file: a primary HDU, a 2×3 uint16 image `SCI` (stored with BZERO = 32768) and the
    /// ASDF extension holding `tree`.
    fn file(tree: &str) -> Vec<u8> {
        let mut f = header(&[
            "SIMPLE  =                    T",
            "BITPIX  =                    8",
            "NAXIS   =                    0",
        ]);
        f.extend(header(&[
            "XTENSION= 'IMAGE   '",
            "BITPIX  =                   16",
            "NAXIS   =                    2",
            "NAXIS1  =                    3",
            "NAXIS2  =                    2",
            "BZERO   =                32768",
            "BSCALE  =                    1",
            "EXTNAME = 'SCI     '",
        ]));
        let values: Vec<u8> = (0u16..6)
            .flat_map(|v| ((v * 10_000) ^ 0x8000).to_be_bytes())
            .collect();
        f.extend(pad(values));
        let asdf = format!(
            "#ASDF 1.0.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n{tree}...\n"
        );
        f.extend(header(&[
            "XTENSION= 'BINTABLE'",
            "BITPIX  =                    8",
            "NAXIS   =                    2",
            &format!("NAXIS1  = {:>20}", asdf.len()),
            "NAXIS2  =                    1",
            "TFIELDS =                    1",
            &format!("TFORM1  = '{}B'", asdf.len()),
            "EXTNAME = 'ASDF'",
        ]));
        f.extend(pad(asdf.into_bytes()));
        f
    }

    #[test]
    fn images_named_by_the_tree_read_with_the_unsigned_convention_undone() {
        let f = file("sci: !core/ndarray-1.1.0 {source: 'fits:SCI,1', datatype: uint16, byteorder: big, shape: [2, 3]}\n");
        let fits = FitsAsdf::from_bytes(f, &OpenOptions::default()).unwrap();
        assert_eq!(fits.hdus().len(), 3);
        assert_eq!(fits.hdus()[1].shape, [2, 3]);
        let a = fits.array::<u16>("/sci").unwrap();
        assert_eq!(
            a.iter().copied().collect::<Vec<_>>(),
            [0, 10_000, 20_000, 30_000, 40_000, 50_000]
        );
        assert!(fits.read("/nothing").is_err());
    }

    #[test]
    fn damaged_files_are_errors_naming_what_is_wrong() {
        let good = file("x: 1\n");
        for (cut, want) in [(100, "no END card"), (RECORD * 2 + 5, "runs past the end")] {
            let e =
                FitsAsdf::from_bytes(good[..cut].to_vec(), &OpenOptions::default()).unwrap_err();
            assert!(e.to_string().contains(want), "{e}");
        }
        let mut huge = good.clone();
        let at = RECORD + 3 * CARD;
        huge[at..at + CARD].copy_from_slice(card("NAXIS1  = 99999999999999999").as_bytes());
        let e = FitsAsdf::from_bytes(huge, &OpenOptions::default()).unwrap_err();
        assert!(e.to_string().contains("runs past the end"), "{e}");
        // A multi-byte character across the keyword's end (byte 8) is an error, not a panic.
        let accented = replace(&good, b"BITPIX  =", "BITPIX \u{e9}".as_bytes());
        let e = FitsAsdf::from_bytes(accented, &OpenOptions::default()).unwrap_err();
        assert!(e.to_string().contains("not ASCII"), "{e}");
        let renamed = replace(&good, b"EXTNAME = 'ASDF'", b"EXTNAME = 'XXXX'");
        let e = FitsAsdf::from_bytes(renamed, &OpenOptions::default()).unwrap_err();
        assert!(e.to_string().contains("no extension named ASDF"), "{e}");
        let scaled = replace(
            &file("s: !core/ndarray-1.1.0 {source: 'fits:SCI,1', datatype: int16, byteorder: big, shape: [2, 3]}\n"),
            b"BSCALE  =                    1",
            b"BSCALE  =                    2",
        );
        let fits = FitsAsdf::from_bytes(scaled, &OpenOptions::default()).unwrap();
        assert!(fits
            .read("/s")
            .unwrap_err()
            .to_string()
            .contains("scaled data"));
    }
}
