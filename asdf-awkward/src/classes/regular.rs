//! `RegularArray`: lists of one fixed size over a content (awkward 2's `RegularArray`).

use serde_json::{json, Map, Value as Json};

use crate::element::{oob, Budget, Value};
use crate::error::{Error, Result};
use crate::layout::{finish_form, Awkward2Writer, Class, JaggedArray, Layout, ListIndex, Node};

/// `length` lists of exactly `size` elements: list `i` is `content[i·size .. (i+1)·size]`.
///
/// ```
/// use std::sync::Arc;
/// use asdf_awkward::{Buffer, Layout, NumpyArray, RegularArray};
/// let content = Arc::new(Layout::Numpy(NumpyArray::from_vec(Buffer::I64(vec![1, 2, 3, 4, 5, 6]))));
/// let r = Layout::Regular(RegularArray { size: 2, length: 3, content });
/// assert_eq!(r.to_json().unwrap(), serde_json::json!([[1, 2], [3, 4], [5, 6]]));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RegularArray {
    /// Elements per list.
    pub size: usize,
    /// Number of lists (explicit, since `size` may be zero).
    pub length: usize,
    /// The flattened elements (at least `length · size` of them).
    pub content: Node,
}

impl RegularArray {
    /// Checks that the content holds `length · size` elements.
    pub fn validate_node(&self, location: &str) -> Result<()> {
        let need = self.length.checked_mul(self.size);
        match need {
            Some(n) if n <= self.content.len() => Ok(()),
            _ => Err(Error::invalid(
                "RegularArray",
                location,
                format!(
                    "{} lists of size {} need {} elements, the content has {}",
                    self.length,
                    self.size,
                    need.map_or("more than 2^64".to_string(), |n| n.to_string()),
                    self.content.len()
                ),
            )),
        }
    }

    /// The content range of list `i`.
    pub fn range(&self, i: usize) -> Option<(usize, usize)> {
        let start = i.checked_mul(self.size)?;
        Some((start, start.checked_add(self.size)?))
    }

    /// The awkward 2 form node (without `content`, which the caller adds).
    pub(crate) fn form_node(&self) -> Map<String, Json> {
        let mut m = Map::new();
        m.insert("class".into(), json!("RegularArray"));
        m.insert("size".into(), json!(self.size));
        m
    }

    /// awkward0 has no regular lists: a `JaggedArray` with offsets `0, size, 2·size, ...`.
    pub(crate) fn to_awkward0(&self) -> Result<Layout> {
        let mut offsets = Vec::with_capacity(self.length.saturating_add(1).min(1 << 24));
        for i in 0..=self.length {
            let o = i
                .checked_mul(self.size)
                .and_then(|o| i64::try_from(o).ok())
                .ok_or_else(|| Error::invalid("RegularArray", "array", "offsets overflow"))?;
            offsets.push(o);
        }
        Ok(Layout::Jagged(JaggedArray {
            index: ListIndex::Offsets(offsets),
            content: self.content.clone(),
        }))
    }
}

impl Class for RegularArray {
    fn name(&self) -> &'static str {
        "RegularArray"
    }

    fn len(&self) -> usize {
        self.length
    }

    fn children(&self) -> Vec<&Node> {
        vec![&self.content]
    }

    fn validate_node(&self, location: &str) -> Result<()> {
        RegularArray::validate_node(self, location)
    }

    fn awkward2_form(&self, w: &mut dyn Awkward2Writer, depth: usize) -> Result<Json> {
        let key = w.key();
        let mut m = self.form_node();
        m.insert("form_key".into(), json!(key));
        let content = w.form(&self.content, depth)?;
        m.insert("content".into(), content);
        Ok(finish_form(m, json!({})))
    }

    fn element(&self, i: usize, depth: usize, b: &mut Budget) -> Result<Value> {
        let (start, stop) = self
            .range(i)
            .filter(|&(_, stop)| stop <= self.content.len())
            .ok_or_else(|| oob("RegularArray", i, self.length))?;
        b.take(self.size as u64, 0)?;
        (start..stop)
            .map(|k| self.content.get_depth(k, depth, b))
            .collect::<Result<_>>()
            .map(Value::List)
    }

    fn awkward0_stand_in(&self) -> Result<Option<Node>> {
        Ok(Some(Node::new(self.to_awkward0()?)))
    }
}
