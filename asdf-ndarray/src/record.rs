//! Record (structured) arrays.

use asdf_yaml::Node;

use crate::datatype::{checked_product, ByteOrder, Datatype, Field};
use crate::error::{NdError, Result};
use crate::layout::Layout;
use crate::values::{decode_value as element_node, encode_value, nest};

/// An array of records: the packed record bytes (C order, each field in its own byte order)
/// and the fields, with typed access per field.
///
/// ```
/// use asdf_ndarray::{Datatype, Field, RecordArray, ScalarType, ByteOrder};
/// let fields = vec![
///     Field::new("id", Datatype::Scalar(ScalarType::UInt16)),
///     Field::new("name", Datatype::Ascii(3)),
/// ];
/// let bytes = vec![1, 0, b'a', b'b', 0, 2, 0, b'x', b'y', b'z'];
/// let r = RecordArray::new(fields, vec![2], ByteOrder::Little, bytes).unwrap();
/// assert_eq!(r.field("id").unwrap().into_array::<u16>().unwrap().into_raw_vec_and_offset().0, vec![1, 2]);
/// assert_eq!(r.field("name").unwrap().into_strings().unwrap()[[1]], "xyz");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct RecordArray {
    fields: Vec<Field>,
    shape: Vec<usize>,
    order: ByteOrder,
    bytes: Vec<u8>,
    itemsize: usize,
}

impl RecordArray {
    /// Records of `fields` with `shape`, from packed bytes (`order` applies to fields without
    /// their own byte order). Errors if the byte count does not match.
    pub fn new(
        fields: Vec<Field>,
        shape: Vec<usize>,
        order: ByteOrder,
        bytes: Vec<u8>,
    ) -> Result<RecordArray> {
        let itemsize = Datatype::Record(fields.clone()).size()?;
        let n = checked_product(&shape)
            .and_then(|n| n.checked_mul(itemsize))
            .ok_or_else(|| NdError::TooLarge {
                what: "records".into(),
                limit: isize::MAX as u64,
            })?;
        if n != bytes.len() {
            return Err(NdError::Usage(format!(
                "{} records of {itemsize} bytes need {n} bytes, got {}",
                checked_product(&shape).unwrap_or(0),
                bytes.len()
            )));
        }
        Ok(RecordArray {
            fields,
            shape,
            order,
            bytes,
            itemsize,
        })
    }

    /// The fields.
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The byte order of fields without their own.
    pub fn byteorder(&self) -> ByteOrder {
        self.order
    }

    /// The packed record bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Size of one record in bytes.
    pub fn itemsize(&self) -> usize {
        self.itemsize
    }

    /// The record datatype.
    pub fn datatype(&self) -> Datatype {
        Datatype::Record(self.fields.clone())
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.bytes.len().checked_div(self.itemsize).unwrap_or(0)
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        checked_product(&self.shape) == Some(0)
    }

    /// Where the `i`-th field's values lie in the records' bytes, its datatype and byte order
    /// (what [`field_at`](Self::field_at) decodes).
    pub(crate) fn field_layout(&self, i: usize) -> Result<(Layout, &Datatype, ByteOrder)> {
        let f = self
            .fields
            .get(i)
            .ok_or_else(|| NdError::Usage(format!("no field {i}")))?;
        let mut offset = 0;
        for g in &self.fields[..i] {
            offset += g.size()?;
        }
        let esize = f.datatype.size()?;
        let mut shape = self.shape.clone();
        shape.extend_from_slice(&f.shape);
        let mut layout = Layout::contiguous(shape, esize)?;
        // Outer dimensions step by whole records, sub-array dimensions by elements.
        let outer = Layout::contiguous(self.shape.clone(), self.itemsize)?;
        layout.strides[..self.shape.len()].copy_from_slice(&outer.strides);
        layout.offset = offset;
        layout.lowest = offset;
        Ok((layout, &f.datatype, f.byteorder.unwrap_or(self.order)))
    }

    /// The position of the field called `name`.
    pub(crate) fn field_index(&self, name: &str) -> Result<usize> {
        self.fields
            .iter()
            .position(|f| f.name == name)
            .ok_or_else(|| NdError::Usage(format!("no field `{name}` in {}", self.datatype())))
    }

    /// The packed record bytes.
    pub(crate) fn packed(&self) -> &[u8] {
        &self.bytes
    }

    /// Record `index` (C order) as a list of field values.
    pub fn record(&self, index: usize) -> Result<Node> {
        let start = index
            .checked_mul(self.itemsize)
            .filter(|&s| s < self.bytes.len() || self.itemsize == 0 && index < self.len())
            .ok_or_else(|| NdError::Usage(format!("record {index} out of range")))?;
        element_node(
            &self.bytes[start..start + self.itemsize],
            &self.datatype(),
            self.order,
            index,
        )
    }

    /// The same records with every field stored in `order` (per-field byte orders dropped).
    pub fn to_byteorder(&self, order: ByteOrder) -> Result<RecordArray> {
        let dt = self.datatype();
        let target = dt.without_byteorders();
        let mut bytes = vec![0u8; self.bytes.len()];
        if self.itemsize > 0 {
            for (i, (src, dst)) in self
                .bytes
                .chunks_exact(self.itemsize)
                .zip(bytes.chunks_exact_mut(self.itemsize))
                .enumerate()
            {
                let node = element_node(src, &dt, self.order, i)?;
                encode_value(&node, &target, order, dst, &format!("record {i}"))?;
            }
        }
        let fields = match target {
            Datatype::Record(f) => f,
            _ => Vec::new(),
        };
        RecordArray::new(fields, self.shape.clone(), order, bytes)
    }

    /// All records as nested lists (inline `data`).
    pub fn to_data_node(&self) -> Result<Node> {
        let dt = self.datatype();
        let leaves = if self.itemsize == 0 {
            (0..checked_product(&self.shape).unwrap_or(0))
                .map(|_| Node::from(Vec::<Node>::new()))
                .collect()
        } else {
            self.bytes
                .chunks_exact(self.itemsize)
                .enumerate()
                .map(|(i, b)| element_node(b, &dt, self.order, i))
                .collect::<Result<Vec<_>>>()?
        };
        nest(leaves, &self.shape)
    }
}
