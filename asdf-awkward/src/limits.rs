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
        }
    }
}
