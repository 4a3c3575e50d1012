//! awkward 2 parameters (`__array__`, `__record__`, `__doc__`, `__categorical__`, ...) attached
//! to a node.

use serde_json::{Map, Value as Json};

use crate::element::{Budget, Value};
use crate::error::Result;
use crate::layout::{Awkward2Writer, Class, Layout, Node};

/// `content` with awkward 2 parameters. Values and length are the content's; awkward0 has no
/// parameters, so its writer stores the content alone. The awkward 2 export puts the
/// parameters on the content's form node.
#[derive(Debug, Clone, PartialEq)]
pub struct Parameterized {
    /// The parameters, as awkward 2 writes them in a form's `"parameters"`.
    pub parameters: Map<String, Json>,
    /// The array they describe.
    pub content: Node,
}

impl Parameterized {
    /// The `__array__` parameter, if it is a string.
    pub fn array_name(&self) -> Option<&str> {
        self.parameters.get("__array__").and_then(Json::as_str)
    }

    /// `__array__: "string"`/`"bytestring"` over lists of `uint8` (e.g. a `RegularArray` of
    /// characters) reads as text or bytes, as `ak.to_list` shows it.
    pub(crate) fn present(&self, v: Value) -> Value {
        let text = match self.array_name() {
            Some("string") => true,
            Some("bytestring") => false,
            _ => return v,
        };
        let Value::List(items) = v else { return v };
        let mut bytes = Vec::with_capacity(items.len());
        for it in &items {
            match it {
                Value::Int(b) if (0..=255).contains(b) => bytes.push(*b as u8),
                _ => return Value::List(items),
            }
        }
        if !text {
            return Value::Bytes(bytes);
        }
        match String::from_utf8(bytes) {
            Ok(s) => Value::Str(s),
            Err(_) => Value::List(items),
        }
    }
}

impl Layout {
    /// `self` under `parameters`, or `self` unchanged when there are none.
    pub fn with_parameters(self, parameters: Map<String, Json>) -> Layout {
        if parameters.is_empty() {
            return self;
        }
        Layout::Parameters(Parameterized {
            parameters,
            content: std::sync::Arc::new(self),
        })
    }
}

/// Written to awkward0 as its content alone (its stand-in is the content).
impl Class for Parameterized {
    fn name(&self) -> &'static str {
        "parameters"
    }

    fn len(&self) -> usize {
        self.content.len()
    }

    fn children(&self) -> Vec<&Node> {
        vec![&self.content]
    }

    fn validate_node(&self, _location: &str) -> Result<()> {
        Ok(())
    }

    fn awkward0_stand_in(&self) -> Result<Option<Node>> {
        Ok(Some(self.content.clone()))
    }

    /// The content's form, with these parameters added to its own.
    fn awkward2_form(&self, w: &mut dyn Awkward2Writer, depth: usize) -> Result<Json> {
        let mut f = w.form(&self.content, depth)?;
        if let Some(Json::Object(params)) = f.get_mut("parameters") {
            for (k, v) in &self.parameters {
                params.insert(k.clone(), v.clone());
            }
        }
        Ok(f)
    }

    fn element(&self, i: usize, depth: usize, b: &mut Budget) -> Result<Value> {
        Ok(self.present(self.content.get_depth(i, depth, b)?))
    }
}
