//! Typed values of the astronomy tags Roman, JWST and astropy files carry: quantities and units
//! (the ASDF Standard's `unit/quantity`, `unit/unit`, astropy's `units/unit`), times
//! (`time/time`), and tables (`core/table` with `core/column` or `table/column`, astropy's
//! `table/table`).
//!
//! Each is read from the tree alone: an array inside one (a quantity's values, a column's data)
//! is named by its JSON Pointer ([`Values::Array`]) and read when the caller asks for it, with
//! [`AsdfFile::read_masked`](crate::AsdfFile::read_masked) (values and mask) or
//! [`AsdfFile::array`](crate::AsdfFile::array). Getting a table of a hundred columns reads
//! nothing but the tree.
//!
//! [`FromTree`] is the extension point: implement it for a tag of your own and read it with
//! [`AsdfFile::get`](crate::AsdfFile::get), as the types here are.
//!
//! ```
//! use asdf::astro::{Quantity, Values};
//! use asdf::yaml::Node;
//! let text = "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n\
//!             --- !core/asdf-1.1.0\n\
//!             speed: !unit/quantity-1.2.0 {value: 3.5, unit: !unit/unit-1.0.0 km / s}\n...\n";
//! let f = asdf::AsdfFile::from_bytes(text.as_bytes().to_vec(), &Default::default()).unwrap();
//! let q: Quantity = f.get("/speed").unwrap();
//! assert_eq!(q.unit, "km / s");
//! assert_eq!(q.value, Values::Scalar(Node::from(3.5)));
//! ```

use asdf_yaml::{Node, Value};

use crate::arrays::array_kind;
use crate::error::{AsdfError, Result};

/// A type read from a tagged node of the tree (see the [module](self) documentation).
pub trait FromTree: Sized {
    /// Whether a node tagged `tag` reads as this type (any version the type knows).
    fn accepts(tag: &str) -> bool;
    /// The value of `node`, found at JSON Pointer `pointer` (arrays inside it are named by
    /// pointers under it).
    fn from_tree(node: &Node, pointer: &str) -> Result<Self>;
}

/// Reads the node at `pointer` of `tree` as `T`, refusing a node `T` does not accept.
pub(crate) fn get<T: FromTree>(tree: &Node, pointer: &str) -> Result<T> {
    let node = tree
        .pointer(pointer)
        .ok_or_else(|| AsdfError::NoNode(pointer.to_string()))?;
    let tag = node.tag().unwrap_or("");
    if !T::accepts(tag) {
        return Err(invalid(
            pointer,
            format!(
                "expected a {}, found {}",
                std::any::type_name::<T>()
                    .rsplit("::")
                    .next()
                    .unwrap_or("value"),
                if tag.is_empty() {
                    "a node without a tag"
                } else {
                    tag
                }
            ),
        ));
    }
    T::from_tree(node, pointer)
}

const QUANTITY: &str = "tag:stsci.edu:asdf/unit/quantity-";
const UNIT: &[&str] = &[
    "tag:stsci.edu:asdf/unit/unit-",
    "tag:astropy.org:astropy/units/unit-",
];
const TIME: &str = "tag:stsci.edu:asdf/time/time-";
const TABLE: &[&str] = &[
    "tag:stsci.edu:asdf/core/table-",
    "tag:stsci.edu:asdf/table/table-",
    "tag:astropy.org:astropy/table/table-",
];
/// `core/column` (ASDF Standard ≤ 1.5) and `table/column` (its successor, what asdf-astropy
/// writes).
const COLUMN: &[&str] = &[
    "tag:stsci.edu:asdf/core/column-",
    "tag:stsci.edu:asdf/table/column-",
];

/// Whether `tag` is one of `prefixes` followed by a version.
fn versioned(tag: &str, prefixes: &[&str]) -> bool {
    prefixes.iter().any(|p| {
        tag.strip_prefix(p)
            .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
    })
}

fn invalid(pointer: &str, message: impl std::fmt::Display) -> AsdfError {
    AsdfError::InvalidTree(format!(
        "{}: {message}",
        if pointer.is_empty() { "/" } else { pointer }
    ))
}

/// The JSON Pointer of `key` under `pointer`.
fn child(pointer: &str, key: &str) -> String {
    format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1"))
}

/// What a quantity, a time or a column holds: a scalar written in the tree, or an array node.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// A number or string of the tree.
    Scalar(Node),
    /// The array at this JSON Pointer (`core/ndarray`, chunked or zarr), not read yet.
    Array(String),
}

impl Values {
    /// `node` (at `pointer`) as values: an array node by its pointer, a scalar as it is.
    fn of(node: &Node, pointer: &str) -> Result<Values> {
        if array_kind(node).is_some() {
            return Ok(Values::Array(pointer.to_string()));
        }
        match node.value() {
            Value::Int(_) | Value::BigInt(_) | Value::Float(_) | Value::Str(_) | Value::Bool(_) => {
                Ok(Values::Scalar(node.clone()))
            }
            _ => Err(invalid(
                pointer,
                "expected a number, a string or an ndarray",
            )),
        }
    }

    /// The scalar as `f64`, when it is a number.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Values::Scalar(n) => n.as_f64(),
            Values::Array(_) => None,
        }
    }

    /// The array's JSON Pointer, when the values are an array.
    pub fn array_pointer(&self) -> Option<&str> {
        match self {
            Values::Array(p) => Some(p),
            Values::Scalar(_) => None,
        }
    }
}

/// A unit (`unit/unit`, astropy's `units/unit`): its string form, e.g. `"km / s"`, `"DN"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unit(pub String);

impl FromTree for Unit {
    fn accepts(tag: &str) -> bool {
        versioned(tag, UNIT)
    }
    fn from_tree(node: &Node, pointer: &str) -> Result<Unit> {
        node.as_str()
            .map(|s| Unit(s.to_string()))
            .ok_or_else(|| invalid(pointer, "a unit is a string"))
    }
}

/// A unit found where the schemas allow one: tagged, or a plain string.
fn unit_of(node: &Node, pointer: &str) -> Result<String> {
    match node.tag() {
        Some(t) if !Unit::accepts(t) => {
            Err(invalid(pointer, format!("expected a unit, found {t}")))
        }
        _ => Unit::from_tree(node, pointer).map(|u| u.0),
    }
}

/// A quantity (`unit/quantity-1.1.0`/`-1.2.0`): values and their unit.
#[derive(Clone, Debug, PartialEq)]
pub struct Quantity {
    /// A number, or an array by pointer.
    pub value: Values,
    /// The unit's string form.
    pub unit: String,
}

impl FromTree for Quantity {
    fn accepts(tag: &str) -> bool {
        versioned(tag, &[QUANTITY])
    }
    fn from_tree(node: &Node, pointer: &str) -> Result<Quantity> {
        let field = |k: &str| {
            node.get(k)
                .ok_or_else(|| invalid(pointer, format!("a quantity needs `{k}`")))
        };
        Ok(Quantity {
            value: Values::of(field("value")?, &child(pointer, "value"))?,
            unit: unit_of(field("unit")?, &child(pointer, "unit"))?,
        })
    }
}

/// A time (`time/time-1.x`): values with their format and time scale, as astropy's `Time`
/// holds them.
#[derive(Clone, Debug, PartialEq)]
pub struct Time {
    /// A string (`"2026-11-27T05:23:45.000"`), a number (`60000.5` in `mjd`), or an array.
    pub value: Values,
    /// `iso`, `isot`, `mjd`, `jd`, `unix`, `byear`...; `None` when the file leaves it to be
    /// inferred from a string value.
    pub format: Option<String>,
    /// `utc`, `tai`, `tt`, `tdb`... as the file gives it; `None` means the schema's default
    /// ([`scale_or_default`](Time::scale_or_default)).
    pub scale: Option<String>,
}

impl Time {
    /// The time scale, or when the file gives none the default that the time schema and astropy
    /// apply: the epoch scale of the count-from-epoch formats (`tai` for `gps`, `unix_tai` and
    /// `stardate`; `tt` for `cxcsec`), `utc` for every other format.
    ///
    /// ```
    /// use asdf::astro::{Time, Values};
    /// let t = |format: Option<&str>, scale: Option<&str>| Time {
    ///     value: Values::Scalar(asdf::yaml::Node::from(1.0e9)),
    ///     format: format.map(String::from),
    ///     scale: scale.map(String::from),
    /// };
    /// assert_eq!(t(Some("gps"), None).scale_or_default(), "tai");
    /// assert_eq!(t(Some("unix"), None).scale_or_default(), "utc");
    /// assert_eq!(t(Some("mjd"), Some("tdb")).scale_or_default(), "tdb");
    /// ```
    pub fn scale_or_default(&self) -> &str {
        if let Some(scale) = &self.scale {
            return scale;
        }
        match self.format.as_deref() {
            Some("gps" | "unix_tai" | "stardate") => "tai",
            Some("cxcsec") => "tt",
            _ => "utc",
        }
    }
}

impl FromTree for Time {
    fn accepts(tag: &str) -> bool {
        versioned(tag, &[TIME])
    }
    fn from_tree(node: &Node, pointer: &str) -> Result<Time> {
        if let Some(s) = node.as_str() {
            return Ok(Time {
                value: Values::Scalar(Node::from(s)),
                format: None,
                scale: None,
            });
        }
        let value = node
            .get("value")
            .ok_or_else(|| invalid(pointer, "a time is a string or a mapping with `value`"))?;
        let text = |k: &str| node.get(k).and_then(Node::as_str).map(str::to_string);
        Ok(Time {
            value: Values::of(value, &child(pointer, "value"))?,
            format: text("format"),
            scale: text("scale"),
        })
    }
}

/// One column of a [`Table`].
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// The column's name.
    pub name: String,
    /// Its data: an array (a masked column's mask comes with it from
    /// [`AsdfFile::read_masked`](crate::AsdfFile::read_masked)).
    pub values: Values,
    /// The unit of a `core/column` or of a quantity column.
    pub unit: Option<String>,
    /// A `core/column`'s description.
    pub description: Option<String>,
    /// The tag of the column's node (`table/column`, `core/column`, `unit/quantity`,
    /// `time/time`, `core/ndarray`...).
    pub tag: Option<String>,
}

/// A table (`core/table-1.x`, `table/table-1.x`, astropy's `table/table-1.x`): named columns
/// of equal length, and its metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// The columns in order.
    pub columns: Vec<Column>,
    /// The table's `meta` mapping, if any.
    pub meta: Option<Node>,
    /// Whether astropy wrote it from a `QTable` (unit columns as quantities).
    pub qtable: bool,
}

impl Table {
    /// The column named `name`.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }
}

impl FromTree for Table {
    fn accepts(tag: &str) -> bool {
        versioned(tag, TABLE)
    }
    fn from_tree(node: &Node, pointer: &str) -> Result<Table> {
        let at = child(pointer, "columns");
        let columns = node
            .get("columns")
            .and_then(Node::as_seq)
            .ok_or_else(|| invalid(pointer, "a table needs a `columns` list"))?;
        let names = node.get("colnames").and_then(Node::as_seq);
        if names.is_some_and(|n| n.len() != columns.len()) {
            return Err(invalid(
                pointer,
                "`colnames` and `columns` differ in length",
            ));
        }
        let name_at = |i: usize| names.and_then(|n| n[i].as_str()).map(str::to_string);
        let columns = columns
            .iter()
            .enumerate()
            .map(|(i, c)| column(c, &format!("{at}/{i}"), name_at(i)))
            .collect::<Result<Vec<_>>>()?;
        Ok(Table {
            columns,
            meta: node.get("meta").cloned(),
            qtable: node.get("qtable").and_then(Node::as_bool).unwrap_or(false),
        })
    }
}

/// Column `node` (at `pointer`), named by the table's `colnames` entry when it has one.
fn column(node: &Node, pointer: &str, listed: Option<String>) -> Result<Column> {
    let tag = node.tag().map(str::to_string);
    let t = tag.as_deref().unwrap_or("");
    let named = |name: Option<String>| {
        name.or(listed.clone()).ok_or_else(|| {
            invalid(
                pointer,
                "a column without a name (no `name`, no `colnames`)",
            )
        })
    };
    let text = |k: &str| node.get(k).and_then(Node::as_str).map(str::to_string);
    let (values, unit, description, name) = if versioned(t, COLUMN) {
        let data = node
            .get("data")
            .ok_or_else(|| invalid(pointer, "a column needs `data`"))?;
        let unit = match node.get("unit") {
            Some(u) => Some(unit_of(u, &child(pointer, "unit"))?),
            None => None,
        };
        let values = Values::of(data, &child(pointer, "data"))?;
        (values, unit, text("description"), named(text("name"))?)
    } else if Quantity::accepts(t) {
        let q = Quantity::from_tree(node, pointer)?;
        (q.value, Some(q.unit), None, named(None)?)
    } else if Time::accepts(t) {
        (
            Time::from_tree(node, pointer)?.value,
            None,
            None,
            named(None)?,
        )
    } else if array_kind(node).is_some() {
        (Values::Array(pointer.to_string()), None, None, named(None)?)
    } else {
        return Err(invalid(
            pointer,
            format!("a column of kind {} is not read (columns are table/column, core/column, ndarray, quantity or time)", if t.is_empty() { "untagged" } else { t }),
        ));
    };
    Ok(Column {
        name,
        values,
        unit,
        description,
        tag,
    })
}

// `AsdfFile::get` lives here, beside `FromTree`, so that the file type does not depend on the
// astronomy types.
impl<B: AsRef<[u8]>> crate::AsdfFile<B> {
    /// The node at `pointer` read as `T` ([`FromTree`](crate::astro::FromTree): a
    /// [`Quantity`](crate::astro::Quantity), [`Time`](crate::astro::Time),
    /// [`Table`](crate::astro::Table), or a type of your own), its arrays named by pointer and
    /// read when asked for; an error when the node's tag is not one `T` reads.
    ///
    /// ```
    /// use asdf::astro::Table;
    /// let text = "#ASDF 1.0.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
    ///             t: !core/table-1.0.0\n  columns:\n  - !core/column-1.0.0\n    name: x\n\
    ///             \x20   data: !core/ndarray-1.0.0 {data: [1.0, 2.0], datatype: float64, shape: [2]}\n...\n";
    /// let f = asdf::AsdfFile::from_bytes(text.as_bytes().to_vec(), &Default::default()).unwrap();
    /// let t: Table = f.get("/t").unwrap();
    /// let x = t.column("x").unwrap().values.array_pointer().unwrap();
    /// assert_eq!(f.array::<f64>(x).unwrap().as_slice().unwrap(), &[1.0, 2.0]);
    /// ```
    pub fn get<T: FromTree>(&self, pointer: &str) -> Result<T> {
        get(self.tree(), pointer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(yaml: &str) -> Node {
        asdf_yaml::parse_str(&format!("%TAG ! tag:stsci.edu:asdf/\n---\n{yaml}")).unwrap()
    }

    #[test]
    fn quantities_times_and_units() {
        let t = tree(
            "q: !unit/quantity-1.1.0 {value: 2, unit: m}\n\
             u: !<tag:astropy.org:astropy/units/unit-1.0.0> erg / s\n\
             t1: !time/time-1.1.0 2000-01-01T00:00:00.000\n\
             t2: !time/time-1.1.0 {value: 51544.5, format: mjd, scale: tai}\n\
             bad: !unit/quantity-1.1.0 {value: [1, 2], unit: m}\n",
        );
        let q: Quantity = get(&t, "/q").unwrap();
        assert_eq!((q.value.as_f64(), q.unit.as_str()), (Some(2.0), "m"));
        assert_eq!(get::<Unit>(&t, "/u").unwrap().0, "erg / s");
        let t1: Time = get(&t, "/t1").unwrap();
        assert_eq!((t1.format, t1.scale), (None, None));
        let t2: Time = get(&t, "/t2").unwrap();
        assert_eq!(t2.value.as_f64(), Some(51544.5));
        assert_eq!(
            (t2.format.as_deref(), t2.scale.as_deref()),
            (Some("mjd"), Some("tai"))
        );
        let e = get::<Quantity>(&t, "/bad").unwrap_err().to_string();
        assert!(e.contains("/bad/value"), "{e}");
        let e = get::<Table>(&t, "/q").unwrap_err().to_string();
        assert!(
            e.contains("expected a Table") && e.contains("quantity"),
            "{e}"
        );
    }

    #[test]
    fn tables_name_every_column() {
        let t = tree(
            "t: !<tag:astropy.org:astropy/table/table-1.1.0>\n\
             \x20 colnames: [a, b, c]\n\
             \x20 qtable: true\n\
             \x20 columns:\n\
             \x20 - !core/column-1.0.0 {name: a, data: !core/ndarray-1.0.0 {data: [1, 2]}, unit: !unit/unit-1.0.0 m, description: x}\n\
             \x20 - !unit/quantity-1.1.0 {value: !core/ndarray-1.0.0 {data: [1.5, 2.5]}, unit: s}\n\
             \x20 - !core/ndarray-1.0.0 {data: [true, false]}\n\
             \x20 meta: {origin: test}\n",
        );
        let table: Table = get(&t, "/t").unwrap();
        assert!(table.qtable);
        let names: Vec<&str> = table.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        let a = table.column("a").unwrap();
        assert_eq!(a.values.array_pointer(), Some("/t/columns/0/data"));
        assert_eq!(
            (a.unit.as_deref(), a.description.as_deref()),
            (Some("m"), Some("x"))
        );
        assert_eq!(table.columns[1].unit.as_deref(), Some("s"));
        assert_eq!(
            table.columns[1].values.array_pointer(),
            Some("/t/columns/1/value")
        );
        assert_eq!(
            table.columns[2].values.array_pointer(),
            Some("/t/columns/2")
        );
        assert_eq!(
            table.meta.unwrap().get("origin").and_then(Node::as_str),
            Some("test")
        );
        let bad = tree("t: !core/table-1.0.0 {columns: [!core/ndarray-1.0.0 {data: [1]}]}\n");
        let e = get::<Table>(&bad, "/t").unwrap_err().to_string();
        assert!(
            e.contains("/t/columns/0") && e.contains("without a name"),
            "{e}"
        );
    }
}
