//! `convert`: between `.asdf`, `.ra`, `.npy` and `.awkd`, by extension.

use std::path::Path;

use asdf::block::Label;
use asdf::AnyArray;

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
}

/// Converts `input` into `output` (format chosen by the output extension).
pub fn convert(input_path: &Path, output: &Path, opts: &ConvertOptions) -> Result<String> {
    let out_fmt = by_extension(output).ok_or_else(|| {
        CliError::Usage(format!(
            "cannot tell the output format of {}: use the extension .asdf, .ra, .npy or .awkd",
            output.display()
        ))
    })?;
    let (in_fmt, inp) = input::open_any(input_path)?;
    let label = opts.compression.unwrap_or(Label::NONE);
    match (inp, out_fmt) {
        (Input::Asdf(f), Format::Asdf) => {
            let s = rewrite::rewrite_file(
                &f,
                output,
                Mode::Blocks {
                    compression: label,
                    level: opts.level,
                },
            )?;
            Ok(format!("wrote {} ({} arrays)", output.display(), s.arrays))
        }
        (Input::Asdf(f), fmt) => {
            let p = input::pick_array(&f, opts.pointer.as_deref())?;
            let a = input::asdf_array(&f, &p)?;
            write_single(&a, output, fmt, label, opts)?;
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
        (Input::Array(a), fmt) => {
            write_single(&a, output, fmt, label, opts)?;
            Ok(format!(
                "wrote {} ({} to {})",
                output.display(),
                in_fmt.name(),
                fmt.name()
            ))
        }
        (Input::Awkd, Format::Awkd) => {
            let (name, l) = crate::awk::read_named(input_path, opts.name.as_deref())?;
            crate::awk::write(output, &name, &l)?;
            Ok(format!("wrote {}", output.display()))
        }
        (Input::Awkd, fmt) => {
            let (_, l) = crate::awk::read_named(input_path, opts.name.as_deref())?;
            let a = crate::awk::layout_to_array(&l)?;
            write_single(&a, output, fmt, label, opts)?;
            Ok(format!("wrote {}", output.display()))
        }
    }
}

fn write_single(
    a: &AnyArray,
    output: &Path,
    fmt: Format,
    label: Label,
    opts: &ConvertOptions,
) -> Result<()> {
    match fmt {
        Format::Asdf => rewrite::write_single(a, output, label, opts.level),
        Format::Npy => {
            let bytes = crate::npy::to_bytes(a)?;
            asdf::atomic_write(output, |w| {
                std::io::Write::write_all(w, &bytes).map_err(|e| asdf::AsdfError::Io {
                    context: "writing".into(),
                    source: e,
                })
            })
            .map_err(|e| CliError::io(output, std::io::Error::other(e.to_string())))
        }
        Format::RawArray => {
            let ra = input::any_to_ra(a)?;
            ra.save(output, &rawarray::WriteOptions::default())
                .map_err(|e| CliError::io(output, std::io::Error::other(e.to_string())))
        }
        Format::Awkd => {
            let l = crate::awk::array_to_layout(a)?;
            crate::awk::write(output, opts.name.as_deref().unwrap_or("data"), &l)
        }
    }
}
