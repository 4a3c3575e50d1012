//! One remote object read by byte ranges: each request counted and bounded in size, neighbouring
//! ranges coalesced, requests sent concurrently, and every read pinned to the version (ETag)
//! the first read saw.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path as ObjectPath;
use object_store::{GetOptions, GetRange, GetResult, ObjectStore};

use super::options::RemoteOptions;
use crate::error::{AsdfError, Result};

/// Requests sent and bytes received for one remote file so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Ranged GET requests that returned data (a retried request counts once).
    pub requests: u64,
    /// Bytes received in their bodies.
    pub bytes: u64,
}

/// A remote object: where it is, its size and version, and how to read it.
pub(crate) struct RemoteObject {
    store: Arc<dyn ObjectStore>,
    path: ObjectPath,
    url: String,
    size: u64,
    etag: Option<String>,
    requests: AtomicU64,
    bytes: AtomicU64,
    max_range: u64,
    gap: u64,
    /// The bytes one round trip could have transferred (the opening requests' time ×
    /// `options.bandwidth`): no request is split into pieces smaller than this.
    trip_bytes: u64,
    concurrency: usize,
}

impl std::fmt::Debug for RemoteObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteObject")
            .field("url", &self.url)
            .field("size", &self.size)
            .field("etag", &self.etag)
            .finish_non_exhaustive()
    }
}

/// The first bytes of an object and its last bytes, read together when it is opened.
pub(crate) struct Ends {
    pub(crate) head: Bytes,
    pub(crate) tail: Bytes,
}

impl RemoteObject {
    /// Reads the first and last `options.first_read` bytes of the object at `url` in two
    /// concurrent requests, learning its size and ETag from them.
    pub(crate) async fn open(url: &str, options: &RemoteOptions) -> Result<(Self, Ends)> {
        let (store, path) = super::options::store_for(url, options)?;
        let mut object = RemoteObject {
            store,
            path,
            url: url.to_string(),
            size: 0,
            etag: None,
            requests: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            max_range: options.max_range.max(1),
            gap: options.coalesce_gap,
            trip_bytes: 0,
            concurrency: options.concurrency.max(1),
        };
        let n = options.first_read.max(64);
        let started = std::time::Instant::now();
        let (head, tail) = futures::try_join!(
            object.request(GetRange::Bounded(0..n), None),
            object.request(GetRange::Suffix(n), None),
        )?;
        object.trip_bytes = trip_bytes(started.elapsed(), options);
        object.gap = round_trip_gap(object.trip_bytes, options);
        if head.0.e_tag != tail.0.e_tag {
            return Err(object.changed(None));
        }
        object.size = head.0.size;
        object.etag = head.0.e_tag.clone();
        object.check_len(&head.1, 0..n.min(object.size))?;
        let tail_start = object.size.saturating_sub(n);
        object.check_len(&tail.1, tail_start..object.size)?;
        Ok((
            object,
            Ends {
                head: head.1,
                tail: tail.1,
            },
        ))
    }

    /// The object's URL.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The ETag reads are pinned to.
    pub(crate) fn etag(&self) -> Option<&str> {
        self.etag.as_deref()
    }

    /// The object's size in bytes.
    pub(crate) fn size(&self) -> u64 {
        self.size
    }

    /// Requests and bytes so far.
    pub(crate) fn traffic(&self) -> Traffic {
        Traffic {
            requests: self.requests.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
        }
    }

    /// An error naming the URL and, when given, the byte range.
    pub(crate) fn error(&self, range: Option<Range<u64>>, reason: impl Into<String>) -> AsdfError {
        AsdfError::Remote {
            url: self.url.clone(),
            range,
            reason: reason.into(),
        }
    }

    fn changed(&self, range: Option<Range<u64>>) -> AsdfError {
        let was = self.etag.as_deref().unwrap_or("(none)");
        self.error(
            range,
            format!("the object changed while it was being read (its ETag is no longer {was})"),
        )
    }

    fn check_len(&self, got: &Bytes, want: Range<u64>) -> Result<()> {
        if got.len() as u64 == want.end - want.start {
            return Ok(());
        }
        Err(self.error(
            Some(want.clone()),
            format!(
                "the server returned {} bytes for a range of {}",
                got.len(),
                want.end - want.start
            ),
        ))
    }

    /// One GET of `range` (pinned to `etag` when given): the object's metadata and the body.
    async fn request(
        &self,
        range: GetRange,
        etag: Option<&str>,
    ) -> Result<(object_store::ObjectMeta, Bytes)> {
        let shown = match &range {
            GetRange::Bounded(r) => Some(r.clone()),
            _ => None,
        };
        let options = GetOptions {
            range: Some(range),
            if_match: etag.map(str::to_string),
            ..GetOptions::default()
        };
        let map = |e: object_store::Error| self.store_error(shown.clone(), e);
        let result: GetResult = self
            .store
            .get_opts(&self.path, options)
            .await
            .map_err(map)?;
        let meta = result.meta.clone();
        let body = result.bytes().await.map_err(map)?;
        self.count(body.len() as u64);
        Ok((meta, body))
    }

    /// Counts one request that returned `bytes` bytes: this object's, or one read on its
    /// behalf (a chunk file of an external zarr store).
    pub(crate) fn count(&self, bytes: u64) {
        self.add(Traffic { requests: 1, bytes });
    }

    /// Adds traffic made on this object's behalf (by an external file it names).
    pub(crate) fn add(&self, t: Traffic) {
        self.requests.fetch_add(t.requests, Ordering::Relaxed);
        self.bytes.fetch_add(t.bytes, Ordering::Relaxed);
    }

    fn store_error(&self, range: Option<Range<u64>>, e: object_store::Error) -> AsdfError {
        match e {
            object_store::Error::NotFound { .. } => self.error(range, "no such object"),
            object_store::Error::Precondition { .. } => self.changed(range),
            other => self.error(range, other.to_string()),
        }
    }

    /// Exactly the bytes of `range` (clipped to the object), pinned to the version first read.
    pub(crate) async fn fetch_one(&self, range: Range<u64>) -> Result<Bytes> {
        let range = range.start.min(self.size)..range.end.min(self.size);
        if range.is_empty() {
            return Ok(Bytes::new());
        }
        let (meta, body) = self
            .request(GetRange::Bounded(range.clone()), self.etag.as_deref())
            .await?;
        if meta.e_tag.is_some() && meta.e_tag != self.etag {
            return Err(self.changed(Some(range)));
        }
        self.check_len(&body, range)?;
        Ok(body)
    }

    /// The bytes of every range in `ranges` (clipped to the object), in their order: ranges
    /// closer than the coalescing gap share a request, requests are at most `max_range` bytes
    /// and up to `concurrency` of them are in flight at once.
    pub(crate) async fn fetch(&self, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        self.fetch_using(ranges, &[]).await
    }

    /// Refuses to read `range` (for `what`) when it is longer than a block may decode to: the
    /// stored bytes a remote header claims are not requested (nor allocated) beyond
    /// `limits.max_decoded_block_size`.
    pub(crate) fn check_ceiling(
        &self,
        what: &str,
        range: Range<u64>,
        limits: &asdf_block::Limits,
    ) -> Result<()> {
        let limit = limits.max_decoded_block_size;
        let len = range.end.saturating_sub(range.start);
        if len <= limit {
            return Ok(());
        }
        Err(self.error(
            Some(range),
            format!(
                "{what}: {len} bytes to read exceed the ceiling of {limit} bytes per block \
                 (OpenOptions::blocks.limits.max_decoded_block_size)"
            ),
        ))
    }

    /// How many bytes one round of concurrent requests reads at most.
    pub(crate) fn round(&self) -> u64 {
        self.max_range.saturating_mul(self.concurrency as u64)
    }

    /// The coalescing gap of this object's reads.
    pub(crate) fn gap(&self) -> u64 {
        self.gap
    }

    /// [`fetch`](Self::fetch), taking the parts of `ranges` that `known` pieces `(start,
    /// bytes)` hold from them: only the rest is requested (nothing when they hold it all).
    pub(crate) async fn fetch_using(
        &self,
        ranges: &[Range<u64>],
        known: &[(u64, Bytes)],
    ) -> Result<Vec<Bytes>> {
        self.fetch_coalescing(ranges, known, self.gap).await
    }

    /// [`fetch_using`](Self::fetch_using) with ranges closer than `gap` sharing a request.
    pub(crate) async fn fetch_coalescing(
        &self,
        ranges: &[Range<u64>],
        known: &[(u64, Bytes)],
        gap: u64,
    ) -> Result<Vec<Bytes>> {
        let clipped: Vec<Range<u64>> = ranges
            .iter()
            .map(|r| r.start.min(self.size)..r.end.min(self.size))
            .collect();
        let missing: Vec<Range<u64>> = clipped.iter().flat_map(|r| subtract(r, known)).collect();
        // Sized after coalescing: the bytes requested include the gaps merged in.
        let merged = plan(&missing, self.size, gap, u64::MAX);
        let total: u64 = merged.iter().map(|r| r.end - r.start).sum();
        let piece = piece_size(total, self.max_range, self.concurrency, self.trip_bytes);
        let pieces = plan(&merged, self.size, 0, piece);
        let mut held: Vec<(u64, Bytes)> = futures::stream::iter(pieces)
            .map(|p| async move { self.fetch_one(p.clone()).await.map(|b| (p.start, b)) })
            .buffered(self.concurrency)
            .try_collect()
            .await?;
        held.extend(known.iter().cloned());
        held.sort_by_key(|(s, _)| *s);
        clipped
            .into_iter()
            .map(|r| assemble(&held, r).map_err(|e| self.error(e.0, e.1)))
            .collect()
    }
}

/// The bandwidth-delay product of a store whose (small) opening requests took `trip`: the
/// bytes one round trip could have transferred at `options.bandwidth`.
fn trip_bytes(trip: std::time::Duration, options: &RemoteOptions) -> u64 {
    (trip.as_secs_f64() * options.bandwidth as f64) as u64
}

/// The coalescing gap of a store whose round trip is worth `trip_bytes`: that many bytes,
/// between `options.coalesce_gap` and `options.max_coalesce_gap`. A nearby server keeps the
/// least gap; a distant one, or one slow to answer each request, reads through holes rather
/// than asking again (Arrow's hole size: time to first byte × bandwidth).
fn round_trip_gap(trip_bytes: u64, options: &RemoteOptions) -> u64 {
    let low = options.coalesce_gap;
    trip_bytes.clamp(low, options.max_coalesce_gap.max(low))
}

/// The parts of `r` that no piece of `known` holds.
fn subtract(r: &Range<u64>, known: &[(u64, Bytes)]) -> Vec<Range<u64>> {
    let mut out = vec![r.clone()];
    for (s, b) in known {
        let k = *s..s + b.len() as u64;
        out = out
            .into_iter()
            .flat_map(|p| {
                if k.end <= p.start || p.end <= k.start {
                    return vec![p];
                }
                [p.start..k.start.max(p.start), k.end.min(p.end)..p.end]
                    .into_iter()
                    .filter(|x| !x.is_empty())
                    .collect()
            })
            .collect();
    }
    out
}

/// The size of the requests that read `total` bytes: `max_range`, or larger (up to 8×) so that
/// they all fit in one round of `concurrency` requests — every request costs a round trip, and
/// on some servers time in proportion to the whole object — and never smaller than what one
/// round trip could transfer (`trip_bytes`): a piece that arrives in less time than it takes to
/// ask for it gains less from running beside the others than its request costs.
fn piece_size(total: u64, max_range: u64, concurrency: usize, trip_bytes: u64) -> u64 {
    let max_range = max_range.max(1);
    let most = max_range.saturating_mul(8);
    let least = max_range.max(trip_bytes.min(most));
    total.div_ceil(concurrency.max(1) as u64).clamp(least, most)
}

/// The requests that cover `ranges`: sorted, merged when closer than `gap`, split into pieces
/// of at most `max` bytes.
pub(crate) fn plan(ranges: &[Range<u64>], size: u64, gap: u64, max: u64) -> Vec<Range<u64>> {
    let mut sorted: Vec<Range<u64>> = ranges
        .iter()
        .map(|r| r.start.min(size)..r.end.min(size))
        .filter(|r| !r.is_empty())
        .collect();
    sorted.sort_by_key(|r| r.start);
    let mut merged: Vec<Range<u64>> = Vec::new();
    for r in sorted {
        match merged.last_mut() {
            Some(last) if r.start <= last.end.saturating_add(gap) => last.end = last.end.max(r.end),
            _ => merged.push(r),
        }
    }
    let max = max.max(1);
    merged
        .into_iter()
        .flat_map(|r| {
            (r.start..r.end)
                .step_by(usize::try_from(max).unwrap_or(usize::MAX))
                .map(move |s| s..s.saturating_add(max).min(r.end))
        })
        .collect()
}

/// The bytes of `want` out of pieces `(start, bytes)` (sorted by start; they may overlap) that
/// cover it: a shared slice when one piece holds it all, a copy otherwise. The error names the
/// range and says how much of it the pieces cover.
fn assemble(
    pieces: &[(u64, Bytes)],
    want: Range<u64>,
) -> std::result::Result<Bytes, (Option<Range<u64>>, String)> {
    let len = (want.end - want.start) as usize;
    if let Some((s, b)) = pieces
        .iter()
        .find(|(s, b)| *s <= want.start && want.end <= s + b.len() as u64)
    {
        let from = (want.start - s) as usize;
        return Ok(b.slice(from..from + len));
    }
    let mut out = BytesMut::with_capacity(len);
    let mut pos = want.start;
    for (s, b) in pieces {
        let end = s + b.len() as u64;
        if end <= pos {
            continue;
        }
        if *s > pos || pos >= want.end {
            break;
        }
        let to = end.min(want.end);
        out.extend_from_slice(&b[(pos - s) as usize..(to - s) as usize]);
        pos = to;
    }
    if pos != want.end {
        return Err((
            Some(want),
            format!("internal: the pieces read cover {} of its bytes", out.len()),
        ));
    }
    Ok(out.freeze())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_merges_close_ranges_and_splits_long_ones() {
        let p = plan(&[10..20, 25..30, 100..130, 0..0, 990..2000], 1000, 5, 16);
        assert_eq!(p, vec![10..26, 26..30, 100..116, 116..130, 990..1000]);
        assert!(plan(&[], 10, 0, 4).is_empty());
    }

    #[test]
    fn assemble_slices_or_copies_across_pieces() {
        let pieces = vec![
            (10, Bytes::from_static(b"abcdef")),
            (16, Bytes::from_static(b"ghij")),
        ];
        assert_eq!(&assemble(&pieces, 11..14).unwrap()[..], b"bcd");
        assert_eq!(&assemble(&pieces, 14..18).unwrap()[..], b"efgh");
        assert!(assemble(&pieces, 18..22).is_err());
    }

    #[test]
    fn the_gap_is_a_round_trip_worth_of_bytes_within_its_bounds() {
        use std::time::Duration;
        let o = RemoteOptions::default();
        let gap = |t: Duration, o: &RemoteOptions| round_trip_gap(trip_bytes(t, o), o);
        // Loopback: the least gap.
        assert_eq!(gap(Duration::from_micros(50), &o), 16 << 10);
        // 5 ms at 100 MB/s: 500 kB.
        assert_eq!(gap(Duration::from_millis(5), &o), 500_000);
        // A slow store: at most max_coalesce_gap.
        assert_eq!(gap(Duration::from_secs(2), &o), 8 << 20);
        let fixed = RemoteOptions {
            max_coalesce_gap: 0,
            ..o
        };
        assert_eq!(gap(Duration::from_secs(2), &fixed), 16 << 10);
    }

    #[test]
    fn pieces_fill_one_round_and_take_at_least_a_round_trip_to_transfer() {
        const MIB: u64 = 1 << 20;
        // A fast store: max_range pieces, grown so 8 requests carry 256 MiB, at most 8×.
        assert_eq!(piece_size(10 * MIB, 8 * MIB, 8, 100_000), 8 * MIB);
        assert_eq!(piece_size(256 * MIB, 8 * MIB, 8, 100_000), 32 * MIB);
        assert_eq!(piece_size(4096 * MIB, 8 * MIB, 8, 100_000), 64 * MIB);
        // A store that takes 0.15 s per request (15 MB a trip): a 10 MiB span is one request.
        assert_eq!(piece_size(40 * MIB, 8 * MIB, 8, 15_000_000), 15_000_000);
        // However slow the store, a piece is at most 8 × max_range.
        assert_eq!(piece_size(40 * MIB, 8 * MIB, 8, u64::MAX), 64 * MIB);
    }
}
