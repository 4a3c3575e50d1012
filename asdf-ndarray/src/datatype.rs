//! ASDF datatypes: scalar names, fixed-width strings and (nested) records.

use std::fmt;

use asdf_yaml::Node;

use crate::error::{NdError, Result};

pub use array_core::{ByteOrder, ScalarType};

/// Largest number of dimensions accepted (NumPy 2 allows 64), for arrays and record fields.
pub const MAX_NDIM: usize = 64;

/// One field of a record datatype.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Field {
    /// Field name (empty for unnamed fields).
    pub name: String,
    /// The field's datatype (may itself be a record).
    pub datatype: Datatype,
    /// The field's byte order; `None` = the array's.
    pub byteorder: Option<ByteOrder>,
    /// Sub-array shape (empty for a scalar field).
    pub shape: Vec<usize>,
}

impl Field {
    /// A scalar field with the array's byte order.
    pub fn new(name: impl Into<String>, datatype: Datatype) -> Field {
        Field {
            name: name.into(),
            datatype,
            byteorder: None,
            shape: Vec::new(),
        }
    }

    /// Size of the field in bytes (datatype size times the sub-array size).
    pub fn size(&self) -> Result<usize> {
        let n = checked_product(&self.shape)
            .ok_or_else(|| NdError::Datatype(format!("field `{}`: shape overflows", self.name)))?;
        self.datatype
            .size()?
            .checked_mul(n)
            .ok_or_else(|| NdError::Datatype(format!("field `{}`: size overflows", self.name)))
    }
}

/// An ASDF datatype.
///
/// ```
/// use asdf_ndarray::{Datatype, ScalarType};
/// let node = asdf_yaml::parse_str("[{name: a, datatype: uint8}, {name: b, datatype: [ascii, 3]}]").unwrap();
/// let dt = Datatype::from_node(&node).unwrap();
/// assert_eq!(dt.size().unwrap(), 4);
/// assert_eq!(Datatype::from_node(&dt.to_node()).unwrap(), dt);
/// assert_eq!(Datatype::Scalar(ScalarType::Float16).to_string(), "float16");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Datatype {
    /// A number or bool.
    Scalar(ScalarType),
    /// `[ascii, N]`: N bytes, NUL-padded.
    Ascii(usize),
    /// `[ucs4, N]`: N UCS-4 code units (4N bytes), NUL-padded.
    Ucs4(usize),
    /// A record of fields, packed without padding.
    Record(Vec<Field>),
}

/// Product of `dims`, `None` on overflow.
pub(crate) fn checked_product(dims: &[usize]) -> Option<usize> {
    dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

/// Largest nesting of record datatypes accepted.
const MAX_RECORD_DEPTH: usize = 64;

impl Datatype {
    /// Size of one element in bytes.
    pub fn size(&self) -> Result<usize> {
        match self {
            Datatype::Scalar(s) => Ok(s.size()),
            Datatype::Ascii(n) => Ok(*n),
            Datatype::Ucs4(n) => n
                .checked_mul(4)
                .ok_or_else(|| NdError::Datatype(format!("[ucs4, {n}] overflows"))),
            Datatype::Record(fields) => fields.iter().try_fold(0usize, |acc, f| {
                acc.checked_add(f.size()?)
                    .ok_or_else(|| NdError::Datatype("record size overflows".into()))
            }),
        }
    }

    /// The scalar type, if this is a scalar datatype.
    pub fn scalar(&self) -> Option<ScalarType> {
        match self {
            Datatype::Scalar(s) => Some(*s),
            _ => None,
        }
    }

    /// Whether any part of this datatype needs byte swapping (false for `ascii` and 1-byte
    /// scalars).
    pub fn has_byteorder(&self) -> bool {
        match self {
            Datatype::Scalar(s) => s.size() > 1,
            Datatype::Ascii(_) => false,
            Datatype::Ucs4(_) => true,
            Datatype::Record(f) => f.iter().any(|f| f.datatype.has_byteorder()),
        }
    }

    /// The same datatype with every per-field byte order removed (for comparing values
    /// regardless of how they were stored).
    pub fn without_byteorders(&self) -> Datatype {
        match self {
            Datatype::Record(fields) => Datatype::Record(
                fields
                    .iter()
                    .map(|f| Field {
                        byteorder: None,
                        datatype: f.datatype.without_byteorders(),
                        ..f.clone()
                    })
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    /// Parses a `datatype` node.
    pub fn from_node(node: &Node) -> Result<Datatype> {
        Self::parse(node, 0)
    }

    fn parse(node: &Node, depth: usize) -> Result<Datatype> {
        if depth > MAX_RECORD_DEPTH {
            return Err(NdError::Datatype(format!(
                "records nested deeper than {MAX_RECORD_DEPTH}"
            )));
        }
        if let Some(s) = node.as_str() {
            return ScalarType::from_name(s)
                .map(Datatype::Scalar)
                .ok_or_else(|| NdError::Datatype(format!("unknown scalar datatype `{s}`")));
        }
        let items = node.as_seq().ok_or_else(|| {
            NdError::Datatype(format!(
                "expected a name, [ascii|ucs4, N] or a list of fields, found a {}",
                node.kind()
            ))
        })?;
        if let [kind, n] = items {
            if let (Some(kind @ ("ascii" | "ucs4")), Some(n)) = (kind.as_str(), n.as_i64()) {
                let n = usize::try_from(n)
                    .map_err(|_| NdError::Datatype(format!("[{kind}, {n}]: length must be ≥ 0")))?;
                let dt = if kind == "ascii" {
                    Datatype::Ascii(n)
                } else {
                    Datatype::Ucs4(n)
                };
                dt.size()?;
                return Ok(dt);
            }
        }
        let mut fields = Vec::with_capacity(items.len().min(4096));
        for (i, item) in items.iter().enumerate() {
            let field = match item.as_map() {
                Some(m) => Self::parse_field(m, i, depth)?,
                None => Field::new(String::new(), Self::parse(item, depth + 1)?),
            };
            field.size()?;
            fields.push(field);
        }
        let dt = Datatype::Record(fields);
        dt.size()?;
        Ok(dt)
    }

    /// Field `i` of a record datatype, given as a mapping (`name`, `datatype`, `byteorder`,
    /// `shape`).
    fn parse_field(m: &asdf_yaml::Mapping, i: usize, depth: usize) -> Result<Field> {
        let name = match m.get("name") {
            None => String::new(),
            Some(n) => n
                .as_str()
                .ok_or_else(|| NdError::Datatype(format!("field {i}: `name` must be a string")))?
                .to_string(),
        };
        let dt = m.get("datatype").ok_or_else(|| {
            NdError::Datatype(format!("field {i} (`{name}`): `datatype` is required"))
        })?;
        let datatype = Self::parse(dt, depth + 1)?;
        let byteorder = match m.get("byteorder") {
            None => None,
            Some(b) => Some(b.as_str().and_then(ByteOrder::from_name).ok_or_else(|| {
                NdError::Datatype(format!(
                    "field {i} (`{name}`): byteorder must be `big` or `little`"
                ))
            })?),
        };
        let shape = match m.get("shape") {
            None => Vec::new(),
            Some(s) => parse_dims(s)
                .filter(|d| d.len() <= MAX_NDIM)
                .ok_or_else(|| {
                    NdError::Datatype(format!(
                        "field {i} (`{name}`): shape must be a list of at most 64 integers ≥ 0"
                    ))
                })?,
        };
        Ok(Field {
            name,
            datatype,
            byteorder,
            shape,
        })
    }

    /// The `datatype` node.
    pub fn to_node(&self) -> Node {
        match self {
            Datatype::Scalar(s) => Node::from(s.name()),
            Datatype::Ascii(n) => Node::sequence([Node::from("ascii"), Node::from(*n)]),
            Datatype::Ucs4(n) => Node::sequence([Node::from("ucs4"), Node::from(*n)]),
            Datatype::Record(fields) => Node::sequence(fields.iter().map(|f| {
                let mut m = asdf_yaml::Mapping::new();
                if !f.name.is_empty() {
                    m.insert("name", f.name.as_str());
                }
                m.insert("datatype", f.datatype.to_node());
                if let Some(b) = f.byteorder {
                    m.insert("byteorder", b.name());
                }
                if !f.shape.is_empty() {
                    m.insert(
                        "shape",
                        Node::sequence(f.shape.iter().map(|&d| Node::from(d))),
                    );
                }
                Node::from(m)
            })),
        }
    }
}

pub(crate) fn parse_dims(node: &Node) -> Option<Vec<usize>> {
    node.as_seq()?
        .iter()
        .map(|d| d.as_i64().and_then(|d| usize::try_from(d).ok()))
        .collect()
}

impl fmt::Display for Datatype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Datatype::Scalar(s) => f.write_str(s.name()),
            Datatype::Ascii(n) => write!(f, "[ascii, {n}]"),
            Datatype::Ucs4(n) => write!(f, "[ucs4, {n}]"),
            Datatype::Record(fields) => {
                f.write_str("record {")?;
                for (i, fl) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}: {}", fl.name, fl.datatype)?;
                    if !fl.shape.is_empty() {
                        write!(f, " {:?}", fl.shape)?;
                    }
                }
                f.write_str("}")
            }
        }
    }
}

impl From<ScalarType> for Datatype {
    fn from(s: ScalarType) -> Datatype {
        Datatype::Scalar(s)
    }
}
