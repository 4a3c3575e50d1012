//! Awkward array verbs: `info`, `verify`, `awkward to-json`, `awkward from-json`, and the
//! awkward side of `convert`, over the `asdf-awkward` crate. The containers: awkward0's `.awkd`
//! (several named arrays), awkward 2 buffers in an `.npz` or a directory, and Parquet (one
//! array each), and awkward arrays stored in ASDF trees.

use std::fmt::Write as _;
use std::path::Path;

use asdf::AnyArray;
use asdf_awkward::{save_awkd, AwkdFile, Layout, SaveMode, WriteOptions};

use crate::output::durability;
use serde_json::json;

use crate::error::{CliError, Result};
use crate::input::check_readable;
use crate::sniff::Format;

fn open(path: &Path) -> Result<AwkdFile> {
    check_readable(path)?;
    AwkdFile::open_with(path, crate::input::awkward_options())
        .map_err(|e| CliError::invalid(path, e))
}

/// `info` of a file of awkward arrays (`fmt`): its arrays, their classes and lengths.
pub fn info(path: &Path, fmt: Format, as_json: bool) -> Result<String> {
    if fmt != Format::Awkd {
        return info_single(path, fmt, as_json);
    }
    let f = open(path)?;
    let names = f.array_names();
    let mut rows = Vec::new();
    for n in &names {
        let r = f.read(n);
        rows.push((n.clone(), r));
    }
    if as_json {
        let arrays: Vec<_> = rows
            .iter()
            .map(|(n, r)| match r {
                Ok(l) => json!({"name": n, "class": l.class_name(), "length": l.len()}),
                Err(e) => json!({"name": n, "error": e.to_string()}),
            })
            .collect();
        let j = json!({"format": "awkd", "entries": f.entry_names(), "arrays": arrays});
        return Ok(serde_json::to_string_pretty(&j).unwrap_or_default() + "\n");
    }
    let mut out = format!(
        "Awkward Array 0.x file {} ({} entries)\n",
        path.display(),
        f.entry_names().len()
    );
    for (n, r) in rows {
        match r {
            Ok(l) => {
                let shown = if n.is_empty() {
                    "(anonymous)"
                } else {
                    n.as_str()
                };
                let _ = writeln!(out, "  {shown}: {} of length {}", l.class_name(), l.len());
            }
            Err(e) => {
                let _ = writeln!(out, "  {n}: cannot be read: {e}");
            }
        }
    }
    Ok(out)
}

/// `info` of a one-array container (awkward 2 buffers, Parquet): its class and length. A
/// Parquet file is described from its footer alone.
fn info_single(path: &Path, fmt: Format, as_json: bool) -> Result<String> {
    if fmt == Format::Parquet {
        return info_parquet(path, as_json);
    }
    let (_, l) = read_one(path, fmt, None)?;
    if as_json {
        let j = json!({"format": fmt.name(), "class": l.class_name(), "length": l.len()});
        return Ok(serde_json::to_string_pretty(&j).unwrap_or_default() + "\n");
    }
    Ok(format!(
        "{} {}: {} of length {}\n",
        fmt.name(),
        path.display(),
        l.class_name(),
        l.len()
    ))
}

/// Reads every array of a file of awkward arrays (`fmt`) completely.
pub fn verify(path: &Path, fmt: Format) -> Result<crate::report::Report> {
    if fmt != Format::Awkd {
        // Reading awkward 2 buffers or Parquet validates the whole layout.
        let (_, l) = read_one(path, fmt, None)?;
        return Ok(crate::report::Report {
            lines: vec![format!(
                "{}: {} of length {}",
                fmt.name(),
                l.class_name(),
                l.len()
            )],
            arrays: 1,
            ..Default::default()
        });
    }
    let f = open(path)?;
    let mut r = crate::report::Report::default();
    for n in f.array_names() {
        r.arrays += 1;
        match f.read(&n).and_then(|l| l.to_json().map(|_| l)) {
            Ok(l) => r.lines.push(format!(
                "array {n}: {} of length {}",
                l.class_name(),
                l.len()
            )),
            Err(e) => {
                r.failures += 1;
                r.lines.push(format!("FAILED array {n}: {e}"));
            }
        }
    }
    Ok(r)
}

/// The named array (or the only one) of an `.awkd` file.
pub fn read_named(path: &Path, name: Option<&str>) -> Result<(String, Layout)> {
    let f = open(path)?;
    let name = choose(path, name.map(str::to_string), &f.array_names(), "arrays")?;
    let l = f.read(&name).map_err(|e| CliError::invalid(path, e))?;
    Ok((name, l))
}

/// Every array of the `.awkd` file at `path`, by name, in name order.
pub fn read_all(path: &Path) -> Result<Vec<(String, Layout)>> {
    let f = open(path)?;
    f.array_names()
        .into_iter()
        .map(|name| {
            let l = f.read(&name).map_err(|e| CliError::invalid(path, e))?;
            Ok((name, l))
        })
        .collect()
}

/// The arrays of the file of awkward arrays at `path` (in format `fmt`), by name: of an
/// `.awkd` file every array, or the one `name` picks; of the one-array containers (awkward 2
/// `.npz` or buffers directory, Parquet) their array, named `name` or `data`.
pub fn read_arrays(path: &Path, fmt: Format, name: Option<&str>) -> Result<Vec<(String, Layout)>> {
    let layout = match fmt {
        Format::Awkd if name.is_some() => return Ok(vec![read_named(path, name)?]),
        Format::Awkd => return read_all(path),
        Format::Npz => {
            check_readable(path)?;
            asdf_awkward::read_awkward2_npz(path, &crate::input::buffers_options())
        }
        Format::AwkwardDir => {
            asdf_awkward::read_awkward2_dir(path, &crate::input::buffers_options())
        }
        Format::Parquet => read_parquet(path)?,
        other => {
            return Err(CliError::Usage(format!(
                "{} is {}, not a file of awkward arrays",
                path.display(),
                other.name()
            )))
        }
    };
    let layout = layout.map_err(|e| CliError::invalid(path, e))?;
    Ok(vec![(name.unwrap_or("data").to_string(), layout)])
}

/// The one array of a file of awkward arrays: the one `name` picks in an `.awkd` file (or its
/// only one), the array of the other containers.
pub fn read_one(path: &Path, fmt: Format, name: Option<&str>) -> Result<(String, Layout)> {
    if fmt == Format::Awkd {
        return read_named(path, name);
    }
    read_arrays(path, fmt, name)?
        .pop()
        .ok_or_else(|| CliError::invalid(path, "the file holds no array"))
}

/// `info` of a Parquet file from its footer: rows, columns and their Arrow types, row groups,
/// sizes and codecs; no data is decoded (`verify` reads it all).
#[cfg(feature = "parquet")]
fn info_parquet(path: &Path, as_json: bool) -> Result<String> {
    check_readable(path)?;
    let s = asdf_awkward::parquet_io::summarize_parquet(path)
        .map_err(|e| CliError::invalid(path, e))?;
    let columns: Vec<_> = s
        .columns
        .iter()
        .map(|(name, ty)| json!({"name": name, "type": ty}))
        .collect();
    if as_json {
        let j = json!({"format": "parquet", "length": s.rows, "row_groups": s.row_groups,
                       "columns": columns, "stored_bytes": s.stored_bytes,
                       "decoded_bytes": s.decoded_bytes, "codecs": s.codecs,
                       "awkward_metadata": s.awkward_metadata});
        return Ok(serde_json::to_string_pretty(&j).unwrap_or_default() + "\n");
    }
    let what = match s.columns.as_slice() {
        [(name, _)] if name.is_empty() => "array".to_string(),
        cols => format!("table of {} columns", cols.len()),
    };
    let mut out =
        format!(
        "parquet {}: {what} of length {} in {} row group(s), {} bytes stored ({} decoded, {}){}\n",
        path.display(),
        s.rows,
        s.row_groups,
        s.stored_bytes,
        s.decoded_bytes,
        s.codecs.join(", "),
        if s.awkward_metadata { ", awkward metadata" } else { "" },
    );
    for (name, ty) in &s.columns {
        let shown = if name.is_empty() { "(the array)" } else { name };
        let _ = writeln!(out, "  {shown}: {ty}");
    }
    Ok(out)
}

#[cfg(not(feature = "parquet"))]
fn info_parquet(path: &Path, _: bool) -> Result<String> {
    read_parquet(path).map(|_| String::new())
}

#[cfg(feature = "parquet")]
fn read_parquet(path: &Path) -> Result<asdf_awkward::Result<Layout>> {
    check_readable(path)?;
    Ok(asdf_awkward::parquet_io::read_parquet(path))
}

#[cfg(not(feature = "parquet"))]
fn read_parquet(path: &Path) -> Result<asdf_awkward::Result<Layout>> {
    Err(CliError::Unsupported(format!(
        "{}: this asdftool was built without its `parquet` feature",
        path.display()
    )))
}

/// Writes `layout` to `out` as format `fmt`: an `.awkd` file (the array named
/// [`safe_name`]`(name)`), awkward 2 buffers (`.npz` or a directory) or Parquet.
pub fn write_as(out: &Path, fmt: Format, name: &str, layout: &Layout) -> Result<()> {
    let written = match fmt {
        Format::Awkd => return write(out, name, layout),
        Format::Npz => asdf_awkward::write_awkward2_npz_with(layout, out, durability()),
        Format::AwkwardDir => {
            check_buffers_dir(out)?;
            asdf_awkward::write_awkward2_dir_with(layout, out, durability())
        }
        Format::Parquet => write_parquet(layout, out)?,
        other => {
            return Err(CliError::Usage(format!(
                "{}: {} is not a format of awkward arrays",
                out.display(),
                other.name()
            )))
        }
    };
    written.map_err(|e| CliError::io(out, std::io::Error::other(e.to_string())))
}

/// A directory that awkward 2 buffers may be written into: missing, empty, or already a
/// buffers directory (whose files are replaced); never one holding other files.
fn check_buffers_dir(dir: &Path) -> Result<()> {
    if !dir.exists() || dir.join(asdf_awkward::METADATA_NAME).is_file() {
        return Ok(());
    }
    let mut entries = std::fs::read_dir(dir).map_err(|e| CliError::io(dir, e))?;
    if entries.next().is_some() {
        return Err(CliError::Usage(format!(
            "{} holds files but no {}: awkward 2 buffers go into a new or empty directory",
            dir.display(),
            asdf_awkward::METADATA_NAME
        )));
    }
    Ok(())
}

#[cfg(feature = "parquet")]
fn write_parquet(layout: &Layout, out: &Path) -> Result<asdf_awkward::Result<()>> {
    Ok(asdf_awkward::parquet_io::write_parquet_with(
        layout,
        out,
        durability(),
    ))
}

#[cfg(not(feature = "parquet"))]
fn write_parquet(_: &Layout, out: &Path) -> Result<asdf_awkward::Result<()>> {
    Err(CliError::Unsupported(format!(
        "{}: this asdftool was built without its `parquet` feature",
        out.display()
    )))
}

/// The array the user named, or the only one there is; a usage error lists the choices.
fn choose(
    path: &Path,
    requested: Option<String>,
    available: &[String],
    what: &str,
) -> Result<String> {
    match requested {
        Some(n) if available.contains(&n) => Ok(n),
        Some(n) => Err(CliError::Usage(format!(
            "{} has no {what} named {n:?} (it has: {})",
            path.display(),
            available.join(", ")
        ))),
        None => match available {
            [only] => Ok(only.clone()),
            [] => Err(CliError::invalid(path, format!("the file holds no {what}"))),
            many => Err(CliError::Usage(format!(
                "{} holds several {what}, choose one with --name: {}",
                path.display(),
                many.join(", ")
            ))),
        },
    }
}

/// `awkward to-json`: the named array as JSON, from an `.awkd` file or from an ASDF file
/// holding awkward arrays (`--name` is then the JSON Pointer or top-level key of the array).
pub fn to_json(path: &Path, name: Option<&str>) -> Result<serde_json::Value> {
    let l = match crate::sniff::sniff_path(path)? {
        Format::Asdf => {
            let f = crate::input::open_asdf(path)?;
            let requested = name.map(|n| {
                if n.starts_with('/') {
                    n.to_string()
                } else {
                    format!("/{}", crate::tree::escape(n))
                }
            });
            match awkward_pointer(&f, path, requested.clone())? {
                Some(p) => from_asdf(&f, path, &p)?,
                None => return Err(no_awkward_at(path, requested.as_deref())),
            }
        }
        fmt => read_one(path, fmt, name)?.1,
    };
    l.to_json().map_err(|e| CliError::invalid(path, e))
}

/// The JSON Pointers of every awkward array stored in an ASDF tree.
fn awkward_pointers(
    node: &asdf::yaml::Node,
    path: &mut String,
    out: &mut Vec<String>,
    depth: usize,
) {
    if depth > crate::tree::MAX_DEPTH {
        return;
    }
    if asdf_awkward::is_awkward_tag(node.tag()) {
        out.push(path.clone());
        return;
    }
    let len = path.len();
    match node.value() {
        asdf::yaml::Value::Map(m) => {
            for (k, v) in m.iter() {
                path.push('/');
                path.push_str(&crate::tree::escape(&crate::tree::key_text(k)));
                awkward_pointers(v, path, out, depth + 1);
                path.truncate(len);
            }
        }
        asdf::yaml::Value::Seq(items) => {
            for (i, v) in items.iter().enumerate() {
                path.push_str(&format!("/{i}"));
                awkward_pointers(v, path, out, depth + 1);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// The awkward array of the ASDF file `f` (read from `path`) to use: the node at `requested`
/// when that is an awkward array (`None` when it is something else), else the tree's only
/// awkward array (`None` when it has none; a usage error lists them when it has several).
pub fn awkward_pointer(
    f: &asdf::AsdfFile,
    path: &Path,
    requested: Option<String>,
) -> Result<Option<String>> {
    if let Some(p) = requested {
        let awkward = f
            .pointer(&p)
            .is_some_and(|n| asdf_awkward::is_awkward_tag(n.tag()));
        return Ok(awkward.then_some(p));
    }
    let mut found = Vec::new();
    awkward_pointers(f.tree(), &mut String::new(), &mut found, 0);
    if found.is_empty() {
        return Ok(None);
    }
    choose(path, None, &found, "awkward arrays").map(Some)
}

/// The error for an ASDF file without an awkward array at `requested` (or anywhere).
pub fn no_awkward_at(path: &Path, requested: Option<&str>) -> CliError {
    match requested {
        Some(p) => CliError::Usage(format!(
            "{}: {p} is not an awkward array (a node tagged {} or {})",
            path.display(),
            asdf_awkward::AWKWARD0_TAG,
            asdf_awkward::AWKWARD2_TAG
        )),
        None => CliError::invalid(path, "the file holds no awkward arrays"),
    }
}

/// The awkward array at `pointer` of the ASDF file `f` (read from `path`).
pub fn from_asdf(f: &asdf::AsdfFile, path: &Path, pointer: &str) -> Result<Layout> {
    asdf_awkward::from_asdf(f, pointer, &crate::input::awkward_options())
        .map_err(|e| CliError::invalid(path, e))
}

/// Every array of a file of awkward arrays as one JSON object, by name (for `diff`).
pub fn to_json_any(path: &Path) -> Result<serde_json::Value> {
    let fmt = crate::sniff::sniff_path(path)?;
    if !fmt.is_awkward() {
        return Err(CliError::Usage(format!(
            "{} is not a file of awkward arrays: awkward arrays compare only with awkward arrays",
            path.display()
        )));
    }
    let mut m = serde_json::Map::new();
    for (n, l) in read_arrays(path, fmt, None)? {
        m.insert(n, l.to_json().map_err(|e| CliError::invalid(path, e))?);
    }
    Ok(serde_json::Value::Object(m))
}

/// `awkward from-json`: infers the type of the JSON value and writes an `.awkd` file.
pub fn from_json(json_path: &Path, out: &Path, name: &str) -> Result<()> {
    check_readable(json_path)?;
    let text = std::fs::read_to_string(json_path).map_err(|e| CliError::io(json_path, e))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| CliError::invalid(json_path, format!("invalid JSON: {e}")))?;
    let layout = Layout::from_json(&v).map_err(|e| CliError::invalid(json_path, e))?;
    write(out, name, &layout)
}

/// `name` as a safe array name for a new archive: the members of an `.awkd` file are named
/// after its arrays, so a name read from another file (`../../tmp/evil.json`, `/etc/x`) must not
/// become a path that leaves the archive's root when extracted. Its normal path components are
/// kept, joined with `_` (control characters and `\` become `_` too); `data` if none remain.
///
/// ```
/// use asdftool::awk::safe_name;
/// assert_eq!(safe_name("events"), "events");
/// assert_eq!(safe_name("../../tmp/evil.json"), "tmp_evil.json");
/// assert_eq!(safe_name("/etc/x\\..\\y"), "etc_x_y");
/// assert_eq!(safe_name(".."), "data");
/// ```
pub fn safe_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| if c.is_control() || c == '\\' { '/' } else { c })
        .collect();
    let parts: Vec<&str> = cleaned
        .split('/')
        .filter(|p| !p.is_empty() && *p != "." && *p != "..")
        .collect();
    if parts.is_empty() {
        "data".into()
    } else {
        parts.join("_")
    }
}

/// Writes one array to a new `.awkd` file (named [`safe_name`]`(name)`).
pub fn write(out: &Path, name: &str, layout: &Layout) -> Result<()> {
    let name = &safe_name(name);
    save_awkd(
        out,
        &[(name, layout)],
        SaveMode::Create,
        &WriteOptions {
            durability: durability(),
            ..WriteOptions::default()
        },
    )
    .map_err(|e| CliError::io(out, std::io::Error::other(e.to_string())))
}

macro_rules! buffers {
    ($m:ident) => {
        $m!(Bool, Bool);
        $m!(Int8, I8);
        $m!(UInt8, U8);
        $m!(Int16, I16);
        $m!(UInt16, U16);
        $m!(Int32, I32);
        $m!(UInt32, U32);
        $m!(Int64, I64);
        $m!(UInt64, U64);
        $m!(Float16, F16);
        $m!(Float32, F32);
        $m!(Float64, F64);
    };
}

/// A numeric array (at least 1-D) as an awkward0 numpy leaf (`shape[1..]` as inner shape).
pub fn array_to_layout(a: &AnyArray) -> Result<Layout> {
    use asdf_awkward::{Buffer, NumpyArray};
    if a.shape().is_empty() {
        return Err(CliError::Unsupported(
            "a 0-d array cannot be an awkward array".into(),
        ));
    }
    let inner = a.shape()[1..].to_vec();
    macro_rules! arm {
        ($v:ident, $b:ident) => {
            if let AnyArray::$v(x) = a {
                let buf = Buffer::$b(x.iter().cloned().collect());
                return NumpyArray::from_buffer(buf, inner)
                    .map(Layout::Numpy)
                    .ok_or_else(|| CliError::Unsupported("inconsistent array shape".into()));
            }
        };
    }
    buffers!(arm);
    let buf = match a {
        AnyArray::Complex64(x) => Buffer::C64(x.iter().map(|c| [c.re, c.im]).collect()),
        AnyArray::Complex128(x) => Buffer::C128(x.iter().map(|c| [c.re, c.im]).collect()),
        other => {
            return Err(CliError::Unsupported(format!(
                "{} arrays have no awkward0 equivalent here",
                other.datatype()
            )))
        }
    };
    NumpyArray::from_buffer(buf, inner)
        .map(Layout::Numpy)
        .ok_or_else(|| CliError::Unsupported("inconsistent array shape".into()))
}

/// An awkward0 numpy leaf as an array (other layouts are not rectangular).
pub fn layout_to_array(l: &Layout) -> Result<AnyArray> {
    use asdf_awkward::Buffer;
    let n = match l {
        Layout::Numpy(n) => n,
        other => {
            return Err(CliError::Unsupported(format!(
                "a {} is not a rectangular array: only numpy leaves convert to .asdf/.ra/.npy \
                 (use `asdftool awkward to-json`)",
                other.class_name()
            )))
        }
    };
    let mut shape = vec![n.len()];
    shape.extend_from_slice(&n.dtype().inner_shape);
    let bad = |e: ndarray::ShapeError| CliError::Unsupported(format!("array shape: {e}"));
    let sh = ndarray::IxDyn(&shape);
    macro_rules! arm {
        ($v:ident, $b:ident) => {
            if let Buffer::$b(x) = n.data() {
                return Ok(AnyArray::$v(
                    ndarray::ArrayD::from_shape_vec(sh, x.clone()).map_err(bad)?,
                ));
            }
        };
    }
    buffers!(arm);
    match n.data() {
        Buffer::C64(x) => Ok(AnyArray::Complex64(
            ndarray::ArrayD::from_shape_vec(
                sh,
                x.iter()
                    .map(|c| num_complex::Complex::new(c[0], c[1]))
                    .collect(),
            )
            .map_err(bad)?,
        )),
        Buffer::C128(x) => Ok(AnyArray::Complex128(
            ndarray::ArrayD::from_shape_vec(
                sh,
                x.iter()
                    .map(|c| num_complex::Complex::new(c[0], c[1]))
                    .collect(),
            )
            .map_err(bad)?,
        )),
        _ => Err(CliError::Unsupported(
            "unsupported awkward0 buffer type".into(),
        )),
    }
}
