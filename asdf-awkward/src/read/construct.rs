//! Running a constructor call: the reader's own (buffers, codecs, dtypes) or a class's, each
//! array node bounded and validated as it is built.

use std::sync::Arc;

use crate::call::{schema_err_s, Args, Val};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::layout::Layout;

use super::dispatch::Ctor;
use super::expr::Eval;

impl<'a> Eval<'a> {
    /// Registers a new array node: bounds how large the tree becomes when sub-arrays shared
    /// through `ref` are expanded (every later traversal pays that size), then validates it.
    pub(super) fn finish(&mut self, loc: &str, l: Layout) -> Result<Val<'a>> {
        let mut size = 1u64;
        for c in l.children() {
            let child = self.expanded.get(&Arc::as_ptr(c)).copied().unwrap_or(1);
            size = size.saturating_add(child);
        }
        let limit = self.opts.limits.max_expanded_nodes;
        if size > limit {
            return Err(Error::Limit {
                location: loc.to_string(),
                what: "array nodes once shared sub-arrays are expanded",
                value: size,
                limit,
            });
        }
        l.validate_node(loc)?;
        let node = Arc::new(l);
        self.expanded.insert(Arc::as_ptr(&node), size);
        Ok(Val::Array(node))
    }

    /// Runs one constructor call: a buffer, a dtype, or an array node (built by its class's
    /// constructor, then bounded and validated by [`finish`](Self::finish)).
    pub(super) fn construct(
        &mut self,
        ctor: Ctor,
        a: Args<'a>,
        hint: Option<u64>,
    ) -> Result<Val<'a>> {
        let layout = match ctor {
            Ctor::FromBuffer => return self.frombuffer(&a),
            Ctor::Zlib | Ctor::Lzma | Ctor::Lz4Block => return self.decompress(ctor, &a, hint),
            Ctor::Json2Dtype => {
                let j = a.json(0)?;
                let d = DType::from_json(j).map_err(|m| schema_err_s(a.arg_loc(0), m))?;
                return Ok(Val::DType(Arc::new(d)));
            }
            Ctor::Class(c) => (c.build)(&a)?,
        };
        self.finish(&a.loc, layout)
    }
}
