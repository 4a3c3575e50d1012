//! Resource ceilings applied while reading untrusted data.

/// Ceilings that bound the work and memory a schema can demand.
///
/// Every size derived from a schema or container header is checked against these (and against the
/// real data length) *before* anything is allocated.
///
/// ```
/// use asdf_awkward::Limits;
/// let strict = Limits { max_depth: 32, ..Limits::default() };
/// assert!(strict.max_depth < Limits::default().max_depth);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Maximum nesting of deserialization expressions (each `call`, `list`, ... is one level).
    /// The JSON parser itself also refuses documents nested more than 128 levels deep.
    pub max_depth: usize,
    /// Maximum number of expressions evaluated for one array (bounds `ref` fan-out too).
    pub max_expressions: usize,
    /// Maximum size of a schema blob in bytes.
    pub max_schema_bytes: u64,
    /// Maximum size of one blob, stored or decompressed, in bytes.
    pub max_blob_bytes: u64,
    /// Maximum total bytes of blobs (after decompression) read for one array.
    pub max_total_bytes: u64,
    /// Maximum length of arrays whose length is not backed by data (`SparseArray`).
    pub max_virtual_length: u64,
    /// Maximum number of array nodes once sub-arrays shared through `ref` are expanded
    /// (`Table(a=T, b=T)` nested 50 deep is 2^50 nodes: every traversal would take forever).
    pub max_expanded_nodes: u64,
    /// Maximum memory (estimated as `size_of::<Value>()` per value plus the bytes of strings)
    /// that converting an array to values or JSON may build ([`Layout::to_json_with`],
    /// [`Layout::to_values_with`], [`Layout::get_with`]): a `SparseArray`'s length and index
    /// fan-out are not backed by data, so without it a few bytes of file could demand
    /// hundreds of GiB.
    ///
    /// [`Layout::to_json_with`]: crate::Layout::to_json_with
    /// [`Layout::to_values_with`]: crate::Layout::to_values_with
    /// [`Layout::get_with`]: crate::Layout::get_with
    pub max_materialized_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 200,
            max_expressions: 1_000_000,
            max_schema_bytes: 64 << 20,
            max_blob_bytes: 16 << 30,
            max_total_bytes: 64 << 30,
            max_virtual_length: 1 << 32,
            max_expanded_nodes: 1 << 20,
            max_materialized_bytes: 16 << 30,
        }
    }
}

impl Limits {
    /// The preset for files from untrusted sources: about 1 GiB per blob and per conversion,
    /// 4 GiB for all the blobs of one array, and structural ceilings cut to what real awkward0
    /// files use (tens of array nodes, KiB-sized schemas). Every `.awkd` file of the test corpus
    /// still reads with it.
    ///
    /// | field | default | untrusted |
    /// |---|---|---|
    /// | `max_depth` | 200 | 200 |
    /// | `max_expressions` | 10⁶ | 10⁵ |
    /// | `max_schema_bytes` | 64 MiB | 16 MiB |
    /// | `max_blob_bytes` | 16 GiB | 1 GiB |
    /// | `max_total_bytes` | 64 GiB | 4 GiB |
    /// | `max_virtual_length` | 2³² | 2³⁰ |
    /// | `max_expanded_nodes` | 2²⁰ | 2¹⁶ |
    /// | `max_materialized_bytes` | 16 GiB | 1 GiB |
    ///
    /// ```
    /// use asdf_awkward::Limits;
    /// let u = Limits::untrusted();
    /// assert!(u.max_blob_bytes < Limits::default().max_blob_bytes);
    /// assert_eq!(u.max_materialized_bytes, 1 << 30);
    /// ```
    pub fn untrusted() -> Self {
        Limits {
            max_depth: 200,
            max_expressions: 100_000,
            max_schema_bytes: 16 << 20,
            max_blob_bytes: 1 << 30,
            max_total_bytes: 4 << 30,
            max_virtual_length: 1 << 30,
            max_expanded_nodes: 1 << 16,
            max_materialized_bytes: 1 << 30,
        }
    }
}
