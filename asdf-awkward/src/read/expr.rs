//! Expressions: locations, values, the 11 kinds, ids and refs, and the evaluation loop.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value as Json};

use crate::call::{short, Args, Val};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::store::BlobStore;

use super::dispatch::{lookup, spec_str, Ctor, Lookup};
use super::ReadOptions;

/// A location inside the schema, rendered like `schema.args[0].pairs[1]`.
#[derive(Clone, Copy)]
pub(super) struct Loc<'p> {
    pub(super) parent: Option<&'p Loc<'p>>,
    pub(super) seg: Seg<'p>,
}

#[derive(Clone, Copy)]
pub(super) enum Seg<'p> {
    Root,
    Key(&'p str),
    Index(usize),
    RefTarget(u64),
}

impl<'p> Loc<'p> {
    pub(super) fn root() -> Loc<'static> {
        Loc {
            parent: None,
            seg: Seg::Root,
        }
    }
    pub(super) fn key(&'p self, k: &'p str) -> Loc<'p> {
        Loc {
            parent: Some(self),
            seg: Seg::Key(k),
        }
    }
    pub(super) fn idx(&'p self, i: usize) -> Loc<'p> {
        Loc {
            parent: Some(self),
            seg: Seg::Index(i),
        }
    }
}

impl fmt::Display for Loc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = self.parent {
            p.fmt(f)?;
        }
        match self.seg {
            Seg::Root => write!(f, "schema"),
            Seg::Key(k) => write!(f, ".{k}"),
            Seg::Index(i) => write!(f, "[{i}]"),
            Seg::RefTarget(id) => write!(f, "(expression id {id})"),
        }
    }
}

/// The expression kinds, in awkward0's detection order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Call,
    Read,
    List,
    Tuple,
    Dict,
    Pairs,
    DType,
    Function,
    Json,
    Python,
    Ref,
}

pub(super) fn kind_of(obj: &Map<String, Json>) -> Option<Kind> {
    if matches!(obj.get("call"), Some(Json::Array(a)) if !a.is_empty()) {
        return Some(Kind::Call);
    }
    const ORDER: [(&str, Kind); 10] = [
        ("read", Kind::Read),
        ("list", Kind::List),
        ("tuple", Kind::Tuple),
        ("dict", Kind::Dict),
        ("pairs", Kind::Pairs),
        ("dtype", Kind::DType),
        ("function", Kind::Function),
        ("json", Kind::Json),
        ("python", Kind::Python),
        ("ref", Kind::Ref),
    ];
    ORDER
        .iter()
        .find(|(k, _)| obj.contains_key(*k))
        .map(|&(_, kind)| kind)
}

pub(super) struct Eval<'a> {
    pub(super) store: &'a dyn BlobStore,
    pub(super) prefix: &'a str,
    pub(super) opts: &'a ReadOptions,
    pub(super) ids: HashMap<u64, &'a Json>,
    pub(super) done: HashMap<u64, Val<'a>>,
    pub(super) in_progress: HashSet<u64>,
    pub(super) count: usize,
    pub(super) total_bytes: u64,
    /// Expected byte size of the immediately next expression's result (a decompressed blob).
    pub(super) hint: Option<u64>,
    /// Size of each constructed node's tree with shared sub-arrays expanded.
    pub(super) expanded: HashMap<*const Layout, u64>,
}

pub(super) fn schema_err(loc: &Loc<'_>, message: impl Into<String>) -> Error {
    Error::Schema {
        location: loc.to_string(),
        message: message.into(),
    }
}

/// The sub-expressions of an expression object, for the id pre-pass.
pub(super) fn sub_exprs(obj: &Map<String, Json>, kind: Kind) -> Vec<&Json> {
    let mut out = Vec::new();
    match kind {
        Kind::Call => {
            if let Some(Json::Array(a)) = obj.get("args") {
                out.extend(a.iter());
            }
            if let Some(Json::Object(k)) = obj.get("kwargs") {
                out.extend(k.values());
            }
        }
        Kind::List | Kind::Tuple => {
            let key = if kind == Kind::List { "list" } else { "tuple" };
            if let Some(Json::Array(a)) = obj.get(key) {
                out.extend(a.iter());
            }
        }
        Kind::Dict => {
            if let Some(Json::Object(m)) = obj.get("dict") {
                out.extend(m.values());
            }
        }
        Kind::Pairs => {
            if let Some(Json::Array(a)) = obj.get("pairs") {
                for p in a {
                    if let Some(e) = p.as_array().and_then(|p| p.get(1)) {
                        out.push(e);
                    }
                }
            }
        }
        _ => {}
    }
    out
}

pub(super) fn parse_id(v: &Json, loc: &Loc<'_>) -> Result<u64> {
    v.as_u64().ok_or_else(|| {
        schema_err(
            loc,
            format!("'id' must be a non-negative integer, found {}", short(v)),
        )
    })
}

impl<'a> Eval<'a> {
    /// Records every expression carrying an `id`, so that forward references can be resolved.
    pub(super) fn index_ids(&mut self, root: &'a Json) -> Result<()> {
        let mut stack: Vec<(&'a Json, usize)> = vec![(root, 0)];
        let mut visited = 0usize;
        while let Some((node, depth)) = stack.pop() {
            visited += 1;
            if visited > self.opts.limits.max_expressions {
                return Err(Error::Limit {
                    location: "schema".into(),
                    what: "number of expressions",
                    value: visited as u64,
                    limit: self.opts.limits.max_expressions as u64,
                });
            }
            if depth > self.opts.limits.max_depth {
                return Err(Error::Limit {
                    location: "schema".into(),
                    what: "expression nesting depth",
                    value: depth as u64,
                    limit: self.opts.limits.max_depth as u64,
                });
            }
            let Json::Object(obj) = node else { continue };
            let Some(kind) = kind_of(obj) else { continue };
            if let Some(id) = obj.get("id") {
                let id = parse_id(id, &Loc::root())?;
                if self.ids.insert(id, node).is_some() {
                    return Err(schema_err(
                        &Loc::root(),
                        format!("id {id} is defined twice"),
                    ));
                }
            }
            for s in sub_exprs(obj, kind) {
                stack.push((s, depth + 1));
            }
        }
        Ok(())
    }

    pub(super) fn eval(&mut self, expr: &'a Json, loc: &Loc<'_>, depth: usize) -> Result<Val<'a>> {
        let hint = self.hint.take();
        let lim = &self.opts.limits;
        if depth > lim.max_depth {
            return Err(Error::Limit {
                location: loc.to_string(),
                what: "expression nesting depth",
                value: depth as u64,
                limit: lim.max_depth as u64,
            });
        }
        self.count += 1;
        if self.count > lim.max_expressions {
            return Err(Error::Limit {
                location: loc.to_string(),
                what: "number of expressions evaluated",
                value: self.count as u64,
                limit: lim.max_expressions as u64,
            });
        }
        let obj = match expr {
            Json::Object(o) => o,
            Json::Array(a) => {
                return Err(schema_err(
                    loc,
                    format!(
                        "unrecognized JSON list with length {} (an expression must be an object)",
                        a.len()
                    ),
                ))
            }
            other => {
                return Err(schema_err(
                    loc,
                    format!(
                        "unrecognized JSON value {} (an expression must be an object)",
                        short(other)
                    ),
                ))
            }
        };
        let kind = kind_of(obj).ok_or_else(|| {
            let keys: Vec<&str> = obj.keys().map(|s| s.as_str()).collect();
            schema_err(loc, format!("unrecognized expression with fields {keys:?}"))
        })?;
        let id = match obj.get("id") {
            Some(v) => Some(parse_id(v, loc)?),
            None => None,
        };
        if let Some(id) = id {
            if let Some(v) = self.done.get(&id) {
                return Ok(v.clone());
            }
            if !self.in_progress.insert(id) {
                return Err(schema_err(
                    loc,
                    format!("expression id {id} contains a reference to itself (cycle)"),
                ));
            }
        }
        // Only a decompression call consumes a size hint.
        self.hint = if kind == Kind::Call { hint } else { None };
        let out = self.eval_kind(obj, kind, loc, depth);
        self.hint = None;
        if let Some(id) = id {
            self.in_progress.remove(&id);
            if let Ok(v) = &out {
                self.done.insert(id, v.clone());
            }
        }
        out
    }

    pub(super) fn eval_list(
        &mut self,
        v: &'a Json,
        loc: &Loc<'_>,
        depth: usize,
        what: &str,
    ) -> Result<Vec<Val<'a>>> {
        let items = v.as_array().ok_or_else(|| {
            schema_err(
                loc,
                format!("'{what}' must be a JSON list, found {}", short(v)),
            )
        })?;
        let mut out = Vec::with_capacity(items.len().min(1 << 16));
        for (i, e) in items.iter().enumerate() {
            out.push(self.eval(e, &loc.idx(i), depth + 1)?);
        }
        Ok(out)
    }

    pub(super) fn eval_kind(
        &mut self,
        obj: &'a Map<String, Json>,
        kind: Kind,
        loc: &Loc<'_>,
        depth: usize,
    ) -> Result<Val<'a>> {
        match kind {
            Kind::Call => self.eval_call(obj, loc, depth),
            Kind::Read => self.eval_read(obj, loc),
            Kind::List => Ok(Val::List(Arc::new(self.eval_list(&obj["list"], &loc.key("list"), depth, "list")?))),
            Kind::Tuple => Ok(Val::Tuple(Arc::new(self.eval_list(&obj["tuple"], &loc.key("tuple"), depth, "tuple")?))),
            Kind::Dict => self.eval_dict(obj, loc, depth),
            Kind::Pairs => self.eval_pairs(obj, loc, depth),
            Kind::DType => {
                let d = DType::from_json(&obj["dtype"]).map_err(|m| schema_err(&loc.key("dtype"), m))?;
                Ok(Val::DType(Arc::new(d)))
            }
            Kind::Function => Err(Error::Refused {
                location: loc.to_string(),
                what: format!(
                    "'function' expression {} names a Python callable (ObjectArray/VirtualArray generators); functions are never loaded",
                    short(&obj["function"])
                ),
            }),
            Kind::Json => Ok(Val::Json(&obj["json"])),
            Kind::Python => self.eval_python(obj, loc),
            Kind::Ref => self.eval_ref(obj, loc, depth),
        }
    }

    /// A `read` expression: the named blob, within the blob and total limits.
    fn eval_read(&mut self, obj: &'a Map<String, Json>, loc: &Loc<'_>) -> Result<Val<'a>> {
        self.hint = None;
        let full = self.blob_name(obj, loc)?;
        let max = self.ceiling();
        let bytes = self.store.get(&full, max).map_err(|e| match e {
            Error::Limit {
                what, value, limit, ..
            } => Error::Limit {
                location: format!("{} (blob {full:?})", loc),
                what,
                value,
                limit,
            },
            other => other,
        })?;
        let bytes = bytes.ok_or_else(|| Error::MissingBlob {
            name: full.to_string(),
        })?;
        self.total_bytes = self.total_bytes.saturating_add(bytes.len() as u64);
        Ok(Val::Blob(Arc::new(bytes)))
    }

    /// A `dict` expression: each value evaluated under its key.
    fn eval_dict(
        &mut self,
        obj: &'a Map<String, Json>,
        loc: &Loc<'_>,
        depth: usize,
    ) -> Result<Val<'a>> {
        let l = loc.key("dict");
        let m = obj["dict"]
            .as_object()
            .ok_or_else(|| schema_err(&l, "must be a JSON object"))?;
        let mut out = Vec::with_capacity(m.len().min(1 << 16));
        for (k, e) in m {
            out.push((k.as_str(), self.eval(e, &l.key(k), depth + 1)?));
        }
        Ok(Val::Dict(Arc::new(out)))
    }

    /// A `pairs` expression: `[name, expression]` pairs, in order.
    fn eval_pairs(
        &mut self,
        obj: &'a Map<String, Json>,
        loc: &Loc<'_>,
        depth: usize,
    ) -> Result<Val<'a>> {
        let l = loc.key("pairs");
        let items = obj["pairs"]
            .as_array()
            .ok_or_else(|| schema_err(&l, "must be a JSON list of [name, expression] pairs"))?;
        let mut out = Vec::with_capacity(items.len().min(1 << 16));
        for (i, p) in items.iter().enumerate() {
            let li = l.idx(i);
            let (name, e) = match p.as_array().map(|a| a.as_slice()) {
                Some([Json::String(n), e]) => (n.as_str(), e),
                _ => {
                    return Err(schema_err(
                        &li,
                        format!("must be a [name, expression] pair, found {}", short(p)),
                    ))
                }
            };
            out.push((name, self.eval(e, &li.idx(1), depth + 1)?));
        }
        Ok(Val::Pairs(Arc::new(out)))
    }

    /// A `python` expression (a base64 pickle): refused, unless the options accept plain pickled
    /// scalars and it is one.
    fn eval_python(&self, obj: &'a Map<String, Json>, loc: &Loc<'_>) -> Result<Val<'a>> {
        if self.opts.decode_pickled_scalars {
            if let Some(v) = obj["python"]
                .as_str()
                .and_then(crate::pickle::base64_decode)
                .and_then(|b| crate::pickle::decode_scalar(&b))
            {
                return Ok(Val::PyScalar(v));
            }
            return Err(Error::Refused {
                location: loc.to_string(),
                what: "'python' expression that is not a single pickled scalar: never unpickled"
                    .into(),
            });
        }
        Err(Error::Refused {
            location: loc.to_string(),
            what: "'python' expression: a base64 pickle, which can run arbitrary code, is never unpickled (ReadOptions::decode_pickled_scalars accepts plain pickled numbers)".into(),
        })
    }

    /// A `ref` expression: the value of the expression with that id (evaluated once; a cycle
    /// is an error).
    fn eval_ref(
        &mut self,
        obj: &'a Map<String, Json>,
        loc: &Loc<'_>,
        depth: usize,
    ) -> Result<Val<'a>> {
        let id = parse_id(&obj["ref"], &loc.key("ref"))?;
        if let Some(v) = self.done.get(&id) {
            return Ok(v.clone());
        }
        if self.in_progress.contains(&id) {
            return Err(schema_err(
                loc,
                format!("reference to expression id {id}, which contains it (reference cycle)"),
            ));
        }
        let target = *self
            .ids
            .get(&id)
            .ok_or_else(|| schema_err(loc, format!("reference to unknown id {id}")))?;
        let tl = Loc {
            parent: None,
            seg: Seg::RefTarget(id),
        };
        self.eval(target, &tl, depth + 1)
    }

    /// A `call` expression: the function (whitelisted and known), then its positional and
    /// keyword arguments evaluated into the function's parameter slots, then the construction.
    pub(super) fn eval_call(
        &mut self,
        obj: &'a Map<String, Json>,
        loc: &Loc<'_>,
        depth: usize,
    ) -> Result<Val<'a>> {
        let hint = self.hint.take();
        let ctor = self.call_ctor(obj, loc)?;
        let (params, required) = ctor.params();
        let args_json = call_args(obj, loc, ctor, params.len())?;
        let mut slots: Vec<Option<(Val<'a>, String)>> = vec![None; params.len()];
        let al = loc.key("args");
        // numpy.frombuffer: dtype and count first, so the buffer's decompressed size is known.
        let order: Vec<usize> = if ctor.is_frombuffer() {
            let mut o: Vec<usize> = (1..args_json.len()).collect();
            if !args_json.is_empty() {
                o.push(0);
            }
            o
        } else {
            (0..args_json.len()).collect()
        };
        let mut early_count: Option<u64> = None;
        for i in order {
            let li = al.idx(i);
            if ctor.is_frombuffer() && i == 0 {
                if let Some(v) = self.frombuffer_direct(obj, args_json, &slots, &li)? {
                    return Ok(v);
                }
                self.hint = self.frombuffer_hint(&slots, early_count);
            }
            let v = self.eval(&args_json[i], &li, depth + 1)?;
            if ctor.is_frombuffer() && i == 2 {
                if let Val::Json(j) = &v {
                    early_count = j.as_u64();
                }
            }
            slots[i] = Some((v, li.to_string()));
        }
        self.eval_kwargs(obj, loc, ctor, params, &mut slots, depth)?;
        if let Some(missing) = (0..required).find(|&i| slots[i].is_none()) {
            return Err(schema_err(
                loc,
                format!("{} needs argument {:?}", ctor.name(), params[missing]),
            ));
        }
        let args = Args {
            name: ctor.name(),
            slots,
            params,
            loc: loc.to_string(),
            limits: &self.opts.limits,
        };
        self.construct(ctor, args, hint)
    }

    /// The function a `call` names: its spec strings, allowed by the whitelist and known here;
    /// its `cacheable`/`whitelistable` flags must be booleans.
    fn call_ctor(&self, obj: &'a Map<String, Json>, loc: &Loc<'_>) -> Result<Ctor> {
        let spec_json = obj["call"].as_array().map(|a| a.as_slice()).unwrap_or(&[]);
        let mut spec = Vec::with_capacity(spec_json.len());
        for s in spec_json {
            spec.push(s.as_str().ok_or_else(|| {
                schema_err(
                    &loc.key("call"),
                    format!("function spec elements must be strings, found {}", short(s)),
                )
            })?);
        }
        if !self.opts.whitelist.allows(&spec) {
            return Err(Error::NotWhitelisted {
                location: loc.to_string(),
                spec: spec_str(&spec),
            });
        }
        let ctor = match lookup(&spec) {
            Lookup::Found(c) => c,
            Lookup::Refused(what) => {
                return Err(Error::Refused {
                    location: loc.to_string(),
                    what,
                })
            }
            Lookup::Unsupported(what) => {
                return Err(Error::Unsupported {
                    location: loc.to_string(),
                    what,
                })
            }
        };
        for flag in ["cacheable", "whitelistable"] {
            if let Some(v) = obj.get(flag) {
                if !v.is_boolean() {
                    return Err(schema_err(
                        &loc.key(flag),
                        format!("must be a boolean, found {}", short(v)),
                    ));
                }
            }
        }
        Ok(ctor)
    }

    /// `numpy.frombuffer(buffer, dtype[, count])` with dtype (and count) already evaluated:
    /// the leaf read straight into its typed buffer when [`direct_leaf`](Self::direct_leaf)
    /// can, `None` to evaluate the buffer as usual.
    fn frombuffer_direct(
        &mut self,
        obj: &'a Map<String, Json>,
        args_json: &'a [Json],
        slots: &[Option<(Val<'a>, String)>],
        li: &Loc<'_>,
    ) -> Result<Option<Val<'a>>> {
        let simple = args_json.len() <= 3 && obj.get("kwargs").is_none();
        let Some((Val::DType(d), _)) = slots.get(1).and_then(|s| s.as_ref()) else {
            return Ok(None);
        };
        if !simple {
            return Ok(None);
        }
        let count = match slots.get(2).and_then(|s| s.as_ref()) {
            None => Some(None),
            Some((Val::Json(j), _)) if j.as_i64() == Some(-1) => Some(None),
            Some((Val::Json(j), _)) => j.as_u64().map(Some),
            _ => None,
        };
        match count {
            Some(count) => {
                let d = d.clone();
                self.direct_leaf(&args_json[0], &d, count, li)
            }
            None => Ok(None),
        }
    }

    /// A `call`'s `kwargs`, evaluated into the slots of the parameters they name.
    fn eval_kwargs(
        &mut self,
        obj: &'a Map<String, Json>,
        loc: &Loc<'_>,
        ctor: Ctor,
        params: &[&str],
        slots: &mut [Option<(Val<'a>, String)>],
        depth: usize,
    ) -> Result<()> {
        let kw = match obj.get("kwargs") {
            None => return Ok(()),
            Some(Json::Object(kw)) => kw,
            Some(other) => {
                return Err(schema_err(
                    &loc.key("kwargs"),
                    format!("must be an object, found {}", short(other)),
                ))
            }
        };
        let kl = loc.key("kwargs");
        for (k, e) in kw {
            let Some(pos) = params.iter().position(|p| p == k) else {
                return Err(schema_err(
                    &kl.key(k),
                    format!("{} has no parameter {k:?}", ctor.name()),
                ));
            };
            if slots[pos].is_some() {
                return Err(schema_err(
                    &kl.key(k),
                    format!("parameter {k:?} given twice"),
                ));
            }
            let lk = kl.key(k);
            let v = self.eval(e, &lk, depth + 1)?;
            slots[pos] = Some((v, lk.to_string()));
        }
        Ok(())
    }

    pub(super) fn bump(&mut self, loc: &Loc<'_>) -> Result<()> {
        self.count += 1;
        if self.count > self.opts.limits.max_expressions {
            return Err(Error::Limit {
                location: loc.to_string(),
                what: "number of expressions evaluated",
                value: self.count as u64,
                limit: self.opts.limits.max_expressions as u64,
            });
        }
        Ok(())
    }

    /// The blob name of a `read` expression (prefix applied unless `absolute`).
    pub(super) fn blob_name(
        &self,
        obj: &'a Map<String, Json>,
        loc: &Loc<'_>,
    ) -> Result<Cow<'a, str>> {
        let name = obj["read"]
            .as_str()
            .ok_or_else(|| schema_err(&loc.key("read"), "must be a string"))?;
        let absolute = match obj.get("absolute") {
            None => false,
            Some(Json::Bool(b)) => *b,
            Some(other) => {
                return Err(schema_err(
                    &loc.key("absolute"),
                    format!("must be a boolean, found {}", short(other)),
                ))
            }
        };
        Ok(if absolute {
            Cow::Borrowed(name)
        } else {
            Cow::Owned(format!("{}{}", self.prefix, name))
        })
    }
}

/// A `call`'s positional `args` (none when absent), at most `max` of them.
fn call_args<'a>(
    obj: &'a Map<String, Json>,
    loc: &Loc<'_>,
    ctor: Ctor,
    max: usize,
) -> Result<&'a [Json]> {
    let args: &'a [Json] = match obj.get("args") {
        None => &[],
        Some(Json::Array(a)) => a,
        Some(other) => {
            return Err(schema_err(
                &loc.key("args"),
                format!("must be a list, found {}", short(other)),
            ))
        }
    };
    if args.len() > max {
        return Err(schema_err(
            &loc.key("args"),
            format!(
                "{} takes at most {max} arguments, {} given",
                ctor.name(),
                args.len()
            ),
        ));
    }
    Ok(args)
}
