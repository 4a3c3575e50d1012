//! `convert`: between `.asdf`, `.ra`, `.npy`, and the files of awkward arrays (`.awkd`, awkward
//! 2 buffers as `.npz` or a directory, `.parquet`), by extension.

use std::path::Path;

use asdf::block::Label;
use asdf::ndarray::ByteOrder;
use asdf::AnyArray;
use asdf_awkward::Layout;

use crate::error::{CliError, Result};
use crate::input::{self, Input};
use crate::rewrite::{self, Mode};
use crate::sniff::{by_extension, Format};

/// Options of `convert`.
#[derive(Clone, Debug, Default)]
pub struct ConvertOptions {
    /// The array of an ASDF input to convert to a single-array format.
    pub pointer: Option<String>,
    /// Compression of ASDF output blocks.
    pub compression: Option<Label>,
    /// Codec level.
    pub level: Option<i32>,
    /// Name of the array in `.awkd` files.
    pub name: Option<String>,
    /// Store awkward arrays in ASDF output as awkward 2 form and buffers even when the input
    /// is an `.awkd` file (awkward 2 inputs always are).
    pub awkward2: bool,
}

/// Converts `input` into `output` (format chosen by the output extension; an output without
/// one is a directory: a table's columns when `--pointer` names a table, else awkward 2
/// buffers).
pub fn convert(input_path: &Path, output: &Path, opts: &ConvertOptions) -> Result<String> {
    let local = input::localize(input_path)?;
    let input_path = local.path();
    let (in_fmt, inp) = input::open_any(input_path)?;
    let out_fmt = match by_extension(output) {
        Some(fmt) => fmt,
        None if output.extension().is_none() || output.is_dir() => {
            if let (Input::Asdf(f), Some(p)) = (&inp, opts.pointer.as_deref()) {
                let awkward = f
                    .pointer(p)
                    .is_some_and(|n| asdf_awkward::is_awkward_tag(n.tag()));
                if !awkward {
                    return crate::columns::write_columns(input_path, output, p);
                }
            }
            Format::AwkwardDir
        }
        None => {
            return Err(CliError::Usage(format!(
                "cannot tell the output format of {}: use the extension .asdf, .ra, .npy, \
                 .awkd, .npz or .parquet, or a directory (a table's columns with --pointer \
                 naming a table, else awkward 2 buffers)",
                output.display()
            )))
        }
    };
    let label = opts.compression.unwrap_or(Label::NONE);
    if out_fmt.is_awkward() {
        return to_awkward(input_path, in_fmt, inp, output, out_fmt, opts);
    }
    match (inp, out_fmt) {
        (Input::Asdf(f), fmt) => from_asdf(&f, output, fmt, opts, label),
        (Input::Array(a, order), Format::Asdf) if in_fmt == Format::RawArray => {
            let extra = ra_origin(input_path)?.map(|n| (RA_ELEMENT, n));
            rewrite::write_single(&a, output, label, opts.level, order, extra)?;
            Ok(format!("wrote {} (RawArray to ASDF)", output.display()))
        }
        (Input::Array(a, order), fmt) => {
            write_single(&a, output, fmt, label, opts, order)?;
            Ok(format!(
                "wrote {} ({} to {})",
                output.display(),
                in_fmt.name(),
                fmt.name()
            ))
        }
        (Input::Awkward, Format::Asdf) => awkward_to_asdf(input_path, in_fmt, output, opts, label),
        (Input::Fits(f), fmt) => from_fits(&f, output, fmt, opts, label),
        (Input::Awkward, fmt) => {
            let (_, l) = crate::awk::read_one(input_path, in_fmt, opts.name.as_deref())?;
            let a = crate::awk::layout_to_array(&l)?;
            write_single(&a, output, fmt, label, opts, ByteOrder::NATIVE)?;
            Ok(format!("wrote {}", output.display()))
        }
    }
}

/// `convert` into a file of awkward arrays (`out_fmt`): the one array the input holds or is
/// (see [`layout_of`]).
fn to_awkward(
    input_path: &Path,
    in_fmt: Format,
    inp: Input,
    output: &Path,
    out_fmt: Format,
    opts: &ConvertOptions,
) -> Result<String> {
    let (name, from, layout) = layout_of(input_path, in_fmt, inp, opts)?;
    crate::awk::write_as(output, out_fmt, &name, &layout)?;
    let safe = crate::awk::safe_name(&name);
    let renamed = if out_fmt == Format::Awkd && safe != name {
        format!("; array {name:?} renamed {safe:?}: array names become member paths")
    } else {
        String::new()
    };
    Ok(format!(
        "wrote {} ({} of length {} as {}{from}{renamed})",
        output.display(),
        layout.class_name(),
        layout.len(),
        out_fmt.name(),
    ))
}

/// The one array an input holds or is, as an awkward layout, with the name to give it (`--name`,
/// an `.awkd` file's own, or `data`) and where in the input it came from (` from /pointer`):
/// the array `--name` picks in an `.awkd` file (or its only one); the awkward array of another
/// awkward container; of an ASDF file the awkward array at `--pointer` (or its only one), else
/// its plain array there (or `/data`, or the only one); a `.ra`/`.npy` file's array.
fn layout_of(
    input_path: &Path,
    in_fmt: Format,
    inp: Input,
    opts: &ConvertOptions,
) -> Result<(String, String, Layout)> {
    let named = || opts.name.clone().unwrap_or_else(|| "data".into());
    match inp {
        Input::Awkward => {
            let (name, l) = crate::awk::read_one(input_path, in_fmt, opts.name.as_deref())?;
            Ok((name, String::new(), l))
        }
        Input::Array(a, _) => Ok((named(), String::new(), crate::awk::array_to_layout(&a)?)),
        Input::Asdf(f) => {
            if let Some(p) = crate::awk::awkward_pointer(&f, input_path, opts.pointer.clone())? {
                let l = crate::awk::from_asdf(&f, input_path, &p)?;
                return Ok((named(), format!(" from {p}"), l));
            }
            let p = input::pick_array(&f, opts.pointer.as_deref())?;
            let read = f
                .read_masked(&p)
                .map_err(|e| CliError::Invalid(e.to_string()))?;
            let (from, l) = masked_layout(&p, read)?;
            Ok((named(), from, l))
        }
        Input::Fits(f) => {
            let p = input::pick_array_of(f.tree(), opts.pointer.as_deref())?;
            let read = f
                .read_masked(&p)
                .map_err(|e| CliError::Invalid(e.to_string()))?;
            let (from, l) = masked_layout(&p, read)?;
            Ok((named(), from, l))
        }
    }
}

/// A (masked) array read from `pointer` as a layout, and the ` from pointer` note: a masked
/// 1-D array becomes an option type (masked values missing, as `ak.from_numpy` makes of a
/// `numpy.ma` array); the mask of an N-D array, whose masked values fall inside rows, is
/// dropped with a warning in the note.
fn masked_layout(
    pointer: &str,
    (a, mask): (AnyArray, Option<ndarray::ArrayD<bool>>),
) -> Result<(String, Layout)> {
    let values = crate::awk::array_to_layout(&a)?;
    match mask {
        None => Ok((format!(" from {pointer}"), values)),
        Some(mask) if a.shape().len() == 1 && mask.len() == values.len() => {
            let masked = asdf_awkward::MaskedArray {
                mask: mask.iter().copied().collect(),
                content: std::sync::Arc::new(values),
                masked_when: true,
            };
            Ok((
                format!(" from {pointer}, masked values missing"),
                Layout::Masked(masked),
            ))
        }
        Some(_) => Ok((
            format!(" from {pointer}; warning: its mask was dropped (only a 1-D mask fits)"),
            values,
        )),
    }
}

/// `convert` from an ASDF file `f` to `fmt` (not an awkward format: see [`to_awkward`]).
fn from_asdf(
    f: &asdf::AsdfFile,
    output: &Path,
    fmt: Format,
    opts: &ConvertOptions,
    label: Label,
) -> Result<String> {
    match fmt {
        Format::Asdf => {
            let s = rewrite::rewrite_file(
                f,
                output,
                Mode::Blocks {
                    compression: label,
                    level: opts.level,
                },
            )?;
            Ok(format!("wrote {} ({} arrays)", output.display(), s.arrays))
        }
        Format::RawArray if ra_element(f, opts).is_some() => {
            let ra = restore_ra(f, opts)?;
            ra.save(output, &crate::output::ra_options())
                .map_err(|e| CliError::io(output, std::io::Error::other(e.to_string())))?;
            Ok(format!(
                "wrote {} from /data (RawArray eltype {}, elbyte {}, as {RA_ELEMENT} says)",
                output.display(),
                ra.header().eltype,
                ra.header().elbyte
            ))
        }
        fmt => {
            let p = input::pick_array(f, opts.pointer.as_deref())?;
            let a = input::asdf_array(f, &p)?;
            write_single(&a, output, fmt, label, opts, ByteOrder::NATIVE)?;
            let masked = f.pointer(&p).and_then(|n| n.get("mask")).is_some();
            Ok(format!(
                "wrote {} from {p}{}",
                output.display(),
                if masked {
                    " (warning: its mask was dropped: the output format has none)"
                } else {
                    ""
                }
            ))
        }
    }
}

/// `convert` from a FITS file with an ASDF tree: to ASDF, the whole tree with every array
/// (image extensions included) stored in blocks; to the single-array formats, the array
/// `--pointer` names (or `/data`).
fn from_fits(
    f: &asdf::fits::FitsAsdf,
    output: &Path,
    fmt: Format,
    opts: &ConvertOptions,
    label: Label,
) -> Result<String> {
    let read = |p: &str| f.read(p).map_err(|e| CliError::Invalid(e.to_string()));
    if fmt != Format::Asdf {
        let p = input::pick_array_of(f.tree(), opts.pointer.as_deref())?;
        write_single(&read(&p)?, output, fmt, label, opts, ByteOrder::NATIVE)?;
        return Ok(format!(
            "wrote {} from {p} of the FITS file",
            output.display()
        ));
    }
    let mut w = asdf::AsdfWriter::new();
    let store = asdf::StoreOptions {
        compression: label,
        level: opts.level,
        ..asdf::StoreOptions::default()
    };
    let mut arrays = 0;
    let tree = crate::tree::map_arrays(f.tree(), &mut |p, _| {
        arrays += 1;
        w.add_any(&read(p)?, &store)
            .map_err(|e| CliError::Unsupported(format!("array at {p:?}: {e}")))
    })?;
    w.write_path(output, tree, &crate::output::asdf_options())
        .map_err(|e| CliError::io(output, std::io::Error::other(e.to_string())))?;
    Ok(format!(
        "wrote {} ({arrays} arrays from the FITS file, now in blocks)",
        output.display()
    ))
}

/// The root key that records the RawArray element type of `/data` when ASDF has none for it
/// (eltype 0, as Python's `ra.py` stores NumPy bools; bfloat16; 128-bit complex...): the data
/// is stored as `uint8` with a trailing axis of `elbyte` bytes, and converting back to `.ra`
/// restores the original header.
const RA_ELEMENT: &str = "rawarray_element";

/// `{eltype, elbyte}` of the RawArray file at `path` when its element type has no ASDF
/// equivalent.
fn ra_origin(path: &Path) -> Result<Option<asdf::yaml::Node>> {
    let ra = input::open_ra(path)?;
    let m = rawarray::asdf::kind_to_asdf(ra.kind(), ra.data_byte_order(), ra.dims(), None)
        .map_err(|e| CliError::invalid(path, e))?;
    Ok((!m.exact).then(|| {
        asdf::yaml::Node::mapping([
            ("eltype", asdf::yaml::Node::from(ra.kind().eltype() as i64)),
            ("elbyte", asdf::yaml::Node::from(ra.kind().size() as i64)),
        ])
    }))
}

/// The RawArray element `/data` was converted from ([`RA_ELEMENT`]), when converting that
/// array back.
fn ra_element(f: &asdf::AsdfFile, opts: &ConvertOptions) -> Option<rawarray::ElementKind> {
    if opts.pointer.as_deref().is_some_and(|p| p != "/data") {
        return None;
    }
    let e = f.tree().get(RA_ELEMENT)?;
    let code = |k: &str| e.get(k).and_then(asdf::yaml::Node::as_u64);
    rawarray::ElementKind::from_codes(code("eltype")?, code("elbyte")?, false)
}

/// `/data` as the RawArray it was converted from: the trailing byte axis folded back into
/// elements of the recorded kind, the bytes unchanged.
fn restore_ra(f: &asdf::AsdfFile, opts: &ConvertOptions) -> Result<rawarray::RawArray> {
    let kind =
        ra_element(f, opts).ok_or_else(|| CliError::Invalid("no RawArray element".into()))?;
    let a = input::asdf_array(f, "/data")?;
    let shape = a.shape();
    let folded = shape.last().is_some_and(|&n| n as u64 == kind.size())
        && a.datatype() == asdf::ndarray::Datatype::Scalar(asdf::ndarray::ScalarType::UInt8);
    if !folded {
        return Err(CliError::Invalid(format!(
            "/data is {} of shape {shape:?}, not the uint8 bytes of {RA_ELEMENT}",
            a.datatype()
        )));
    }
    let dims: Vec<u64> = shape[..shape.len() - 1]
        .iter()
        .rev()
        .map(|&d| d as u64)
        .collect();
    let bytes = a
        .to_bytes(ByteOrder::NATIVE)
        .map_err(|e| CliError::Invalid(e.to_string()))?;
    let order = match f.meta("/data").map(|m| m.byteorder) {
        Ok(o) => o,
        Err(_) => ByteOrder::NATIVE,
    };
    rawarray::RawArray::from_raw_bytes(kind, order, &dims, bytes)
        .map_err(|e| CliError::Unsupported(e.to_string()))
}

/// A file of awkward arrays as ASDF: the array `--name` picks, or the only one, at `/data`; an
/// `.awkd` file of several arrays without `--name` gives every one, each under its name (the
/// anonymous array `""` at `/data`). Rectangular numbers become plain ndarrays; any other
/// layout (jagged, records, options, unions, strings) is stored as an awkward array: awkward 2
/// form and buffers when the input is awkward 2 (`.npz`, a buffers directory, Parquet) or
/// `--awkward2` asks, awkward0's schema and blobs for an `.awkd` input.
fn awkward_to_asdf(
    input: &Path,
    in_fmt: Format,
    output: &Path,
    opts: &ConvertOptions,
    label: Label,
) -> Result<String> {
    let arrays = crate::awk::read_arrays(input, in_fmt, opts.name.as_deref())?;
    let awkward2 = opts.awkward2 || in_fmt != Format::Awkd;
    let single = arrays.len() == 1;
    let mut w = asdf::AsdfWriter::new();
    let store = asdf::StoreOptions {
        compression: label,
        level: opts.level,
        ..Default::default()
    };
    let mut entries = Vec::with_capacity(arrays.len());
    let mut kinds = Vec::new();
    for (name, l) in arrays {
        let key = if single || name.is_empty() {
            "data".to_string()
        } else {
            name
        };
        let node = match crate::awk::layout_to_array(&l) {
            Ok(a) => w.add_any(&a, &store).map_err(|e| e.to_string()),
            Err(_) => {
                kinds.push(format!("{key}: {}", l.class_name()));
                if awkward2 {
                    asdf_awkward::to_asdf_awkward2(&l, &mut w, &store)
                } else {
                    asdf_awkward::to_asdf(&l, &mut w, &store)
                }
                .map_err(|e| e.to_string())
            }
        }
        .map_err(|e| CliError::invalid(input, e))?;
        entries.push((key, node));
    }
    let keys: Vec<String> = entries.iter().map(|(k, _)| format!("/{k}")).collect();
    w.write_path(
        output,
        asdf::yaml::Node::mapping(entries),
        &crate::output::asdf_options(),
    )
    .map_err(|e| CliError::io(output, std::io::Error::other(e.to_string())))?;
    let awkward = match (kinds.is_empty(), awkward2) {
        (true, _) => String::new(),
        (false, true) => format!("; awkward 2 arrays: {}", kinds.join(", ")),
        (false, false) => format!("; awkward arrays: {}", kinds.join(", ")),
    };
    Ok(format!(
        "wrote {} (arrays at {}{awkward})",
        output.display(),
        keys.join(", ")
    ))
}

/// Writes `a` as the one array of `output`; an ASDF output stores it in `byteorder` (the
/// source file's, so a conversion keeps it).
fn write_single(
    a: &AnyArray,
    output: &Path,
    fmt: Format,
    label: Label,
    opts: &ConvertOptions,
    byteorder: ByteOrder,
) -> Result<()> {
    match fmt {
        Format::Asdf => rewrite::write_single(a, output, label, opts.level, byteorder, None),
        Format::Npy => crate::output::write_file(output, &crate::npy::to_bytes(a)?),
        Format::RawArray => {
            let ra = input::any_to_ra(a)?;
            ra.save(output, &crate::output::ra_options())
                .map_err(|e| CliError::io(output, std::io::Error::other(e.to_string())))
        }
        fmt if fmt.is_awkward() => {
            let l = crate::awk::array_to_layout(a)?;
            crate::awk::write_as(output, fmt, opts.name.as_deref().unwrap_or("data"), &l)
        }
        _ => Err(CliError::Usage(format!(
            "{}: {} files are read, not written",
            output.display(),
            fmt.name()
        ))),
    }
}
