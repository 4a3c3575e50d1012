//! awkward 2's Arrow metadata: what `ak.to_arrow` records about the awkward node behind each
//! Arrow field that Arrow's own types cannot say (parameters such as `__record__` and `__doc__`,
//! tuples, option types without missing values), so a round trip through Arrow or Parquet keeps
//! them.
//!
//! awkward 2 writes the same facts in two places, and this module reads and writes both:
//!
//! - **Arrow** (`ak.to_arrow`, IPC streams): every field is an extension type named `awkward`;
//!   its `ARROW:extension:metadata` is a JSON object describing that one node.
//! - **Parquet** (`ak.to_parquet`): plain Arrow types, and the schema's `awkward_array_metadata`
//!   key maps each column's name to the same object, its children under `subfield_metadata`.
//!
//! When the array is a record split into columns, the schema's `ak:parameters` holds the
//! record's own parameters and whether its rows are optional.

use std::sync::Arc;

use arrow_data::ArrayData;
use arrow_schema::{DataType, Field, FieldRef, Fields, Schema, UnionFields};
use serde_json::{json, Map, Value as Json};

use crate::error::{Error, Result};
use crate::layout::{Layout, MaskedArray, RecordArray, UnmaskedArray};

/// The extension name awkward 2 registers with pyarrow.
pub(crate) const EXTENSION_NAME: &str = "awkward";
const EXTENSION_NAME_KEY: &str = "ARROW:extension:name";
const EXTENSION_METADATA_KEY: &str = "ARROW:extension:metadata";
/// The Parquet schema key of `ak.to_parquet`'s per-column metadata.
const COLUMNS_KEY: &str = "awkward_array_metadata";
/// The schema key of a record split into columns.
const TABLE_KEY: &str = "ak:parameters";

pub(crate) type Params = Map<String, Json>;

/// What awkward 2 records about the node behind one Arrow field. The default records nothing
/// and changes nothing when applied.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct NodeMeta {
    /// The option class over the node (`"BitMaskedArray"`, `"UnmaskedArray"`, ...), if any.
    mask_type: Option<String>,
    /// The node's class (`"ListOffsetArray"`, `"RecordArray"`, ...).
    node_type: Option<String>,
    /// The option node's parameters.
    mask_parameters: Option<Params>,
    /// The node's parameters.
    node_parameters: Params,
    /// For records: whether it is a tuple (its Arrow fields are named `"0"`, `"1"`, ...).
    record_is_tuple: Option<bool>,
    /// An `EmptyArray` outside any option type (Arrow's null type is always nullable).
    is_nonnullable_nulltype: bool,
    /// Not an option type although the Arrow field is nullable (`option_type: "False"`): a
    /// field of an optional record, whose missing rows Parquet repeats in every field.
    not_option: bool,
    /// The Arrow field's name.
    field_name: String,
    /// One per child field of the Arrow type (Parquet's `subfield_metadata`).
    children: Vec<NodeMeta>,
}

fn meta_err(location: &str, message: impl Into<String>) -> Error {
    Error::Convert {
        location: format!("awkward metadata of {location}"),
        message: message.into(),
    }
}

/// The child fields of an Arrow type, in the order awkward's metadata lists them.
fn child_fields(dt: &DataType) -> Vec<&FieldRef> {
    match dt {
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => vec![f],
        DataType::Struct(fs) => fs.iter().collect(),
        DataType::Union(u, _) => u.iter().map(|(_, f)| f).collect(),
        _ => Vec::new(),
    }
}

// ---------------------------------------------------------------------------------------------
// Writing: describe a layout as awkward 2 would.

/// The metadata of `layout`, converted to Arrow as a field of type `dt` named `name`: one node
/// per Arrow field, the children following the Arrow type so the two always agree.
pub(crate) fn describe(layout: &Layout, name: &str, dt: &DataType) -> NodeMeta {
    let mut m = NodeMeta {
        field_name: name.to_string(),
        ..NodeMeta::default()
    };
    let mut params = Params::new();
    let core = peel(layout, &mut m, &mut params);
    // awkward's `to_arrow` gathers a categorical's values and drops the parameter by default.
    if params.get("__array__") == Some(&json!("categorical")) {
        params.remove("__array__");
    }
    let kids = child_fields(dt);
    let contents: Vec<&Layout> = match core {
        _ if matches!(dt, DataType::Null) => {
            m.node_type = Some("EmptyArray".into());
            m.is_nonnullable_nulltype = m.mask_type.is_none();
            Vec::new()
        }
        Layout::Numpy(a) if !a.dtype().inner_shape.is_empty() => {
            // Inner dimensions are fixed-size lists: RegularArrays over a NumpyArray leaf.
            m.node_type = Some("RegularArray".into());
            m.node_parameters = params;
            m.children = kids.iter().map(|f| inner_dimension(f)).collect();
            return m;
        }
        Layout::String(s) => {
            let kind = if s.encoding.is_some() {
                "string"
            } else {
                "bytestring"
            };
            params.insert("__array__".into(), json!(kind));
            m.node_type = Some("ListOffsetArray".into());
            Vec::new()
        }
        other => {
            m.node_type = Some(class_of(other).into());
            m.record_is_tuple = match other {
                Layout::Record(r) => Some(r.fields.is_none()),
                Layout::Table(_) => Some(false),
                _ => None,
            };
            contents_of(other)
        }
    };
    m.node_parameters = params;
    m.children = kids
        .iter()
        .zip(contents)
        .map(|(f, c)| describe(c, f.name(), f.data_type()))
        .collect();
    m
}

/// Steps through the wrappers Arrow has no node for (parameters, the first option type, index
/// gathers, chunks), noting them in `m` and `params`; returns the node Arrow's type describes.
fn peel<'a>(mut l: &'a Layout, m: &mut NodeMeta, params: &mut Params) -> &'a Layout {
    loop {
        let (class, content) = match l {
            Layout::Parameters(p) => {
                params.extend(p.parameters.iter().map(|(k, v)| (k.clone(), v.clone())));
                l = &p.content;
                continue;
            }
            Layout::Indexed(a) => {
                l = &a.content;
                continue;
            }
            Layout::Chunked(c) => match c.chunks.first() {
                Some(first) => {
                    l = first;
                    continue;
                }
                None => return l,
            },
            Layout::Masked(a) => ("ByteMaskedArray", &a.content),
            Layout::BitMasked(a) => ("BitMaskedArray", &a.content),
            Layout::IndexedMasked(a) => ("IndexedOptionArray", &a.content),
            Layout::Unmasked(a) => ("UnmaskedArray", &a.content),
            _ => return l,
        };
        // Nested option types are one option type in Arrow (and in awkward).
        if m.mask_type.is_none() {
            m.mask_type = Some(class.into());
            m.mask_parameters = Some(std::mem::take(params));
        }
        l = content;
    }
}

/// awkward 2's class for the node Arrow's type describes.
fn class_of(l: &Layout) -> &'static str {
    match l {
        Layout::Jagged(_) => "ListOffsetArray",
        Layout::Regular(_) => "RegularArray",
        Layout::Table(_) | Layout::Record(_) => "RecordArray",
        Layout::Union(_) => "UnionArray",
        Layout::Empty(_) | Layout::Chunked(_) => "EmptyArray",
        _ => "NumpyArray",
    }
}

/// The layouts behind the Arrow type's child fields, in order.
pub(crate) fn contents_of(l: &Layout) -> Vec<&Layout> {
    match l {
        Layout::Jagged(j) => vec![&j.content],
        Layout::Regular(r) => vec![&r.content],
        Layout::Table(t) => t.fields.iter().map(|(_, c)| c.as_ref()).collect(),
        Layout::Record(r) => r.contents.iter().map(|c| c.as_ref()).collect(),
        Layout::Union(u) => u.contents.iter().map(|c| c.as_ref()).collect(),
        _ => Vec::new(),
    }
}

/// An inner dimension of a NumPy leaf: a RegularArray per fixed-size list, a NumpyArray below.
fn inner_dimension(f: &Field) -> NodeMeta {
    let kids = child_fields(f.data_type());
    NodeMeta {
        node_type: Some(
            if kids.is_empty() {
                "NumpyArray"
            } else {
                "RegularArray"
            }
            .into(),
        ),
        field_name: f.name().clone(),
        children: kids.iter().map(|k| inner_dimension(k)).collect(),
        ..NodeMeta::default()
    }
}

impl NodeMeta {
    /// The JSON object awkward 2 writes; `nested` adds the field name and the children
    /// (Parquet's form), without it the object describes this node alone (an extension type's).
    fn to_json(&self, nested: bool) -> Json {
        let mut o = json!({
            "mask_type": self.mask_type,
            "node_type": self.node_type,
            "mask_parameters": self.mask_parameters,
            "node_parameters": self.node_parameters,
            "record_is_tuple": self.record_is_tuple,
            "record_is_scalar": false,
            "is_nonnullable_nulltype": self.is_nonnullable_nulltype,
            "option_type": false,
        });
        if nested {
            o["field_name"] = json!(self.field_name);
            if !self.children.is_empty() {
                let kids = self.children.iter().map(|c| c.to_json(true)).collect();
                o["subfield_metadata"] = Json::Array(kids);
            }
        }
        o
    }

    /// `field` as awkward's extension type: this node's metadata on it, its children's on the
    /// child fields of its type.
    pub(crate) fn extension_field(&self, field: &Field) -> Result<Field> {
        let kids = child_fields(field.data_type());
        let typed = if kids.is_empty() || self.children.len() != kids.len() {
            field.data_type().clone()
        } else {
            let new_kids = kids
                .iter()
                .zip(&self.children)
                .map(|(f, m)| m.extension_field(f).map(Arc::new))
                .collect::<Result<Vec<_>>>()?;
            with_children(field.data_type(), new_kids)?
        };
        let mut metadata = field.metadata().clone();
        metadata.insert(EXTENSION_NAME_KEY.into(), EXTENSION_NAME.into());
        metadata.insert(
            EXTENSION_METADATA_KEY.into(),
            self.to_json(false).to_string(),
        );
        Ok(Field::new(field.name(), typed, field.is_nullable()).with_metadata(metadata))
    }
}

/// `dt` with its child fields replaced (same number, same order).
pub(crate) fn with_children(dt: &DataType, kids: Vec<FieldRef>) -> Result<DataType> {
    let first = || kids[0].clone();
    Ok(match dt {
        DataType::List(_) => DataType::List(first()),
        DataType::LargeList(_) => DataType::LargeList(first()),
        DataType::FixedSizeList(_, n) => DataType::FixedSizeList(first(), *n),
        DataType::Struct(_) => DataType::Struct(Fields::from(kids)),
        DataType::Union(u, mode) => {
            let ids = u.iter().map(|(id, _)| id);
            let fields =
                UnionFields::try_new(ids, kids).map_err(|e| meta_err("a union", e.to_string()))?;
            DataType::Union(fields, *mode)
        }
        other => other.clone(),
    })
}

/// The schema entry `ak.to_parquet` writes: each column's description, children included.
pub(crate) fn columns_entry(columns: &[NodeMeta]) -> (String, String) {
    let per_column: Map<String, Json> = columns
        .iter()
        .map(|m| (m.field_name.clone(), m.to_json(true)))
        .collect();
    (COLUMNS_KEY.into(), Json::Object(per_column).to_string())
}

/// The schema entry `ak.to_arrow_table` and `ak.to_parquet` write for a record split into
/// columns: its parameters, no optional rows.
pub(crate) fn record_entry(params: &Params) -> (String, String) {
    let params = (!params.is_empty()).then(|| params.clone());
    let table = json!([
        {"optiontype_fields": []},
        {"record_is_scalar": false},
        {"RecordArray": params},
    ]);
    (TABLE_KEY.into(), table.to_string())
}

/// `data` as an array of type `dt`, which differs from its own only in its fields' metadata.
pub(crate) fn retype(data: ArrayData, dt: &DataType) -> Result<ArrayData> {
    let kids = data
        .child_data()
        .iter()
        .zip(child_fields(dt))
        .map(|(c, f)| retype(c.clone(), f.data_type()))
        .collect::<Result<Vec<_>>>()?;
    data.into_builder()
        .data_type(dt.clone())
        .child_data(kids)
        .build()
        .map_err(|e| meta_err("an extension type", e.to_string()))
}

// ---------------------------------------------------------------------------------------------
// Reading: parse either encoding, then apply it to the layout read from the Arrow data.

fn opt_string(o: &Map<String, Json>, key: &str, loc: &str) -> Result<Option<String>> {
    match o.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(meta_err(loc, format!("{key} is {other}, not a string"))),
    }
}

fn opt_params(o: &Map<String, Json>, key: &str, loc: &str) -> Result<Option<Params>> {
    match o.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::Object(p)) => Ok(Some(p.clone())),
        Some(other) => Err(meta_err(loc, format!("{key} is {other}, not an object"))),
    }
}

fn opt_bool(o: &Map<String, Json>, key: &str, loc: &str) -> Result<Option<bool>> {
    match o.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(meta_err(
            loc,
            format!("{key} is {other}, not true or false"),
        )),
    }
}

impl NodeMeta {
    /// One node's object (children, if `nested`, from `subfield_metadata`).
    fn from_json(v: &Json, loc: &str, nested: bool) -> Result<NodeMeta> {
        let Json::Object(o) = v else {
            return Err(meta_err(loc, format!("{v} is not an object")));
        };
        let children = match (nested, o.get("subfield_metadata")) {
            (true, Some(Json::Array(kids))) => kids
                .iter()
                .enumerate()
                .map(|(k, c)| NodeMeta::from_json(c, &format!("{loc}/{k}"), true))
                .collect::<Result<_>>()?,
            (true, Some(other)) if !other.is_null() => {
                return Err(meta_err(
                    loc,
                    format!("subfield_metadata is {other}, not a list"),
                ))
            }
            _ => Vec::new(),
        };
        Ok(NodeMeta {
            mask_type: opt_string(o, "mask_type", loc)?,
            node_type: opt_string(o, "node_type", loc)?,
            mask_parameters: opt_params(o, "mask_parameters", loc)?,
            node_parameters: opt_params(o, "node_parameters", loc)?.unwrap_or_default(),
            record_is_tuple: opt_bool(o, "record_is_tuple", loc)?,
            is_nonnullable_nulltype: opt_bool(o, "is_nonnullable_nulltype", loc)?.unwrap_or(false),
            not_option: o.get("option_type") == Some(&json!("False")),
            field_name: opt_string(o, "field_name", loc)?.unwrap_or_default(),
            children,
        })
    }

    /// The metadata an `awkward` extension field carries, its child fields' included; the
    /// default where a field is not one.
    pub(crate) fn from_field(f: &Field, loc: &str) -> Result<NodeMeta> {
        let kids = child_fields(f.data_type())
            .into_iter()
            .map(|k| NodeMeta::from_field(k, &format!("{loc}/{}", k.name())))
            .collect::<Result<Vec<_>>>()?;
        let md = f.metadata();
        let mut m = match (md.get(EXTENSION_NAME_KEY), md.get(EXTENSION_METADATA_KEY)) {
            (Some(name), Some(text)) if name == EXTENSION_NAME => {
                let v: Json = serde_json::from_str(text)
                    .map_err(|e| meta_err(loc, format!("not JSON: {e}")))?;
                NodeMeta::from_json(&v, loc, false)?
            }
            _ => NodeMeta::default(),
        };
        m.not_option = md.get("option_type").is_some_and(|v| v == "False");
        if kids.iter().any(|k| *k != NodeMeta::default()) {
            m.children = kids;
        }
        Ok(m)
    }
}

/// Whether `schema` holds awkward's metadata, in either encoding (its top-level fields only).
pub(crate) fn is_described(schema: &Schema) -> bool {
    let extension = |f: &FieldRef| {
        f.metadata().get(EXTENSION_NAME_KEY).map(String::as_str) == Some(EXTENSION_NAME)
    };
    schema.metadata().contains_key(COLUMNS_KEY) || schema.fields().iter().any(extension)
}

/// What the schema says about a table: per column, and about the record the columns form.
#[derive(Debug, Default)]
pub(crate) struct TableMeta {
    /// One per column (the default where none is recorded).
    pub columns: Vec<NodeMeta>,
    /// The record's parameters (from `ak:parameters`).
    pub record_parameters: Params,
    /// When the record's rows are optional: the option node's parameters.
    pub record_option: Option<Params>,
    /// Columns that keep their own option type under an optional record.
    pub option_fields: Vec<String>,
}

impl TableMeta {
    /// Reads `awkward_array_metadata` and `ak:parameters` from the schema, or the columns'
    /// extension types.
    pub(crate) fn of(schema: &Schema) -> Result<TableMeta> {
        let md = schema.metadata();
        let by_name: Map<String, Json> = match md.get(COLUMNS_KEY) {
            Some(text) => match serde_json::from_str(text) {
                Ok(Json::Object(o)) => o,
                Ok(other) => {
                    return Err(meta_err(COLUMNS_KEY, format!("{other} is not an object")))
                }
                Err(e) => return Err(meta_err(COLUMNS_KEY, format!("not JSON: {e}"))),
            },
            None => Map::new(),
        };
        let mut t = TableMeta::default();
        for f in schema.fields() {
            let loc = format!("column {:?}", f.name());
            t.columns.push(match by_name.get(f.name()) {
                Some(v) => NodeMeta::from_json(v, &loc, true)?,
                None => NodeMeta::from_field(f, &loc)?,
            });
        }
        if let Some(text) = md.get(TABLE_KEY) {
            t.read_table_entries(text)?;
        }
        Ok(t)
    }

    /// `ak:parameters`: a list of one-key objects.
    fn read_table_entries(&mut self, text: &str) -> Result<()> {
        let v: Json = serde_json::from_str(text)
            .map_err(|e| meta_err(TABLE_KEY, format!("not JSON: {e}")))?;
        let Json::Array(entries) = v else {
            return Err(meta_err(TABLE_KEY, format!("{v} is not a list")));
        };
        for e in &entries {
            let Some((key, value)) = e
                .as_object()
                .filter(|o| o.len() == 1)
                .and_then(|o| o.iter().next())
            else {
                return Err(meta_err(
                    TABLE_KEY,
                    format!("{e} is not an object of one key"),
                ));
            };
            let params = || match value {
                Json::Object(p) => p.clone(),
                _ => Params::new(),
            };
            match key.as_str() {
                "optiontype_fields" => {
                    let names = value.as_array().map(Vec::as_slice).unwrap_or_default();
                    self.option_fields = names
                        .iter()
                        .filter_map(|n| n.as_str().map(String::from))
                        .collect();
                }
                "RecordArray" => self.record_parameters = params(),
                "UnmaskedArray" | "BitMaskedArray" | "ByteMaskedArray" | "IndexedOptionArray" => {
                    self.record_option = Some(params())
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The record of `columns` (named by `schema`, `rows` long), with the recorded parameters,
    /// its rows missing where every column is (as awkward 2 rebuilds an optional record).
    pub(crate) fn record(&self, schema: &Schema, columns: Vec<Layout>, rows: usize) -> Layout {
        let names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
        let mut missing = self.record_option.as_ref().map(|_| vec![true; rows]);
        let contents = columns
            .into_iter()
            .zip(&names)
            .map(|(c, name)| {
                if let Some(m) = missing.as_mut() {
                    for (i, flag) in m.iter_mut().enumerate() {
                        *flag &= is_missing(&c, i);
                    }
                    if !self.option_fields.contains(name) {
                        return Arc::new(without_option(c));
                    }
                }
                Arc::new(c)
            })
            .collect();
        let record = Layout::Record(RecordArray {
            fields: Some(names),
            contents,
            length: rows,
        })
        .with_parameters(self.record_parameters.clone());
        match (missing, &self.record_option) {
            (Some(mask), Some(params)) => Layout::Masked(MaskedArray {
                mask,
                content: Arc::new(record),
                masked_when: true,
            })
            .with_parameters(params.clone()),
            _ => record,
        }
    }
}

/// Whether entry `i` of a column is missing (its option type, under any parameters).
fn is_missing(l: &Layout, i: usize) -> bool {
    match l {
        Layout::BitMasked(b) => b.bit(i) == Some(b.masked_when),
        Layout::IndexedMasked(m) => m.index.get(i).is_some_and(|&k| k < 0),
        Layout::Parameters(p) => is_missing(&p.content, i),
        _ => false,
    }
}

/// A column's values without its option type (and the option's parameters).
fn without_option(l: Layout) -> Layout {
    match l {
        Layout::BitMasked(b) => owned(b.content),
        Layout::Unmasked(u) => owned(u.content),
        Layout::Parameters(p) if is_option(&p.content) => without_option(owned(p.content)),
        other => other,
    }
}

fn is_option(l: &Layout) -> bool {
    matches!(l, Layout::BitMasked(_) | Layout::Unmasked(_))
}

/// The layout behind a shared node, moved out when nothing else holds it.
fn owned(n: Arc<Layout>) -> Layout {
    Arc::try_unwrap(n).unwrap_or_else(|shared| (*shared).clone())
}

/// `l`, read from Arrow data without metadata, with what `m` records applied: parameters,
/// tuples, option types without missing values. `loc` names the field in errors.
pub(crate) fn annotate(l: Layout, m: &NodeMeta, loc: &str, depth: usize) -> Result<Layout> {
    if depth > crate::layout::MAX_NESTING {
        return Err(meta_err(loc, "nesting too deep"));
    }
    if *m == NodeMeta::default() {
        return Ok(l);
    }
    let l = if m.not_option { without_option(l) } else { l };
    let optional = m.mask_type.is_some() && !m.not_option;
    let out = match l {
        Layout::BitMasked(mut b) => {
            b.content = Arc::new(annotate_node(owned(b.content), m, loc, depth)?);
            Layout::BitMasked(b)
        }
        // Every entry missing (Arrow's null type): nothing below to describe.
        l @ Layout::IndexedMasked(_) => l,
        l => {
            let node = annotate_node(l, m, loc, depth)?;
            match optional && !m.is_nonnullable_nulltype {
                true => Layout::Unmasked(UnmaskedArray {
                    content: Arc::new(node),
                }),
                false => node,
            }
        }
    };
    Ok(match (optional, &m.mask_parameters) {
        (true, Some(p)) => out.with_parameters(p.clone()),
        _ => out,
    })
}

/// The node below any option type: its children annotated, its parameters added.
fn annotate_node(l: Layout, m: &NodeMeta, loc: &str, depth: usize) -> Result<Layout> {
    let kids = &m.children;
    let kid = |n: Arc<Layout>, k: usize| -> Result<Arc<Layout>> {
        match kids.get(k) {
            Some(km) => Ok(Arc::new(annotate(
                owned(n),
                km,
                &format!("{loc}/{}", km.field_name),
                depth + 1,
            )?)),
            None => Ok(n),
        }
    };
    let expect = |n: usize| match kids.len() {
        0 => Ok(()),
        k if k == n => Ok(()),
        k => Err(meta_err(
            loc,
            format!("{k} children recorded, the Arrow type has {n}"),
        )),
    };
    let every_kid = |contents: Vec<Arc<Layout>>| -> Result<Vec<Arc<Layout>>> {
        expect(contents.len())?;
        let kids = contents.into_iter().enumerate();
        kids.map(|(k, c)| kid(c, k)).collect()
    };
    let mut params = m.node_parameters.clone();
    let out = match l {
        Layout::Jagged(mut j) => {
            expect(1)?;
            j.content = kid(j.content, 0)?;
            Layout::Jagged(j)
        }
        Layout::Regular(mut r) => {
            expect(1)?;
            r.content = kid(r.content, 0)?;
            Layout::Regular(r)
        }
        Layout::Record(mut r) => {
            r.contents = every_kid(r.contents)?;
            if m.record_is_tuple == Some(true) {
                r.fields = None;
            }
            Layout::Record(r)
        }
        Layout::Union(mut u) => {
            u.contents = every_kid(u.contents)?;
            Layout::Union(u)
        }
        Layout::String(s) => {
            // The string's own `__array__` is its class here.
            if matches!(
                params.get("__array__").and_then(Json::as_str),
                Some("string" | "bytestring")
            ) {
                params.remove("__array__");
            }
            Layout::String(s)
        }
        // A dictionary: a categorical over its values.
        Layout::Parameters(p) => {
            let content = match owned(p.content) {
                Layout::Indexed(mut ix) => {
                    ix.content = kid(ix.content, 0)?;
                    Layout::Indexed(ix)
                }
                other => other,
            };
            let mut all = p.parameters;
            all.extend(params);
            return Ok(content.with_parameters(all));
        }
        other => other,
    };
    Ok(out.with_parameters(params))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arrow::to_arrow;

    fn layout(v: Json) -> Layout {
        Layout::from_json(&v).unwrap()
    }

    #[test]
    fn describe_and_annotate_are_inverse_on_parameters_and_tuples() {
        let inner = Layout::Record(RecordArray {
            fields: None,
            contents: vec![
                Arc::new(layout(json!([1, 2]))),
                Arc::new(layout(json!(["a", "b"]))),
            ],
            length: 2,
        });
        let mut p = Params::new();
        p.insert("__record__".into(), json!("Pair"));
        let l = inner.with_parameters(p);
        let arr = to_arrow(&l).unwrap();
        let m = describe(&l, "", arr.data_type());
        assert_eq!(m.node_type.as_deref(), Some("RecordArray"));
        assert_eq!(m.record_is_tuple, Some(true));
        assert_eq!(m.children.len(), 2);
        assert_eq!(m.children[1].node_parameters["__array__"], json!("string"));
        // Through JSON, as Parquet stores it.
        let again = NodeMeta::from_json(&m.to_json(true), "test", true).unwrap();
        assert_eq!(again, m);
        let plain = crate::arrow::from_arrow(arr.as_ref()).unwrap();
        assert!(matches!(&plain, Layout::Record(r) if r.fields.is_some()));
        let back = annotate(plain, &again, "test", 0).unwrap();
        assert_eq!(back, l);
    }

    #[test]
    fn an_option_without_missing_values_stays_an_option() {
        let l = Layout::Unmasked(UnmaskedArray {
            content: Arc::new(layout(json!([1.5, 2.5]))),
        });
        let arr = to_arrow(&l).unwrap();
        let m = describe(&l, "", arr.data_type());
        assert_eq!(m.mask_type.as_deref(), Some("UnmaskedArray"));
        let plain = crate::arrow::from_arrow(arr.as_ref()).unwrap();
        assert!(matches!(plain, Layout::Numpy(_)));
        assert_eq!(annotate(plain, &m, "test", 0).unwrap(), l);
    }

    #[test]
    fn bad_metadata_is_an_error_naming_the_field() {
        for bad in [
            json!([1]),
            json!({"node_type": 3}),
            json!({"subfield_metadata": 1}),
        ] {
            let e = NodeMeta::from_json(&bad, "column \"x\"", true)
                .unwrap_err()
                .to_string();
            assert!(e.contains("column \"x\""), "{e}");
        }
        let m = NodeMeta {
            node_type: Some("ListOffsetArray".into()),
            children: vec![NodeMeta::default(), NodeMeta::default()],
            ..NodeMeta::default()
        };
        let e = annotate(layout(json!([[1], []])), &m, "column \"y\"", 0).unwrap_err();
        assert!(e.to_string().contains("2 children recorded"), "{e}");
    }
}
