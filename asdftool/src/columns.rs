//! `convert FILE.asdf DIR --pointer /table`: a table's columns as one `.npy` file each (plus
//! `<name>.mask.npy` for a masked column), and `columns.json` saying which file holds which
//! column with its unit and description.

use std::path::Path;

use asdf::astro::{Table, Values};
use asdf::ndarray::AnyArray;
use serde_json::json;

use crate::error::{CliError, Result};
use crate::input;

/// Writes the columns of the table at `pointer` of the ASDF file `input` into directory `dir`
/// (created if missing); refuses to replace any file already there.
pub fn write_columns(input: &Path, dir: &Path, pointer: &str) -> Result<String> {
    let file = input::open_asdf(input)?;
    let table: Table = file.get(pointer).map_err(|e| CliError::invalid(input, e))?;
    let mut files = Vec::new();
    let mut manifest = Vec::new();
    for (i, c) in table.columns.iter().enumerate() {
        let Values::Array(p) = &c.values else {
            return Err(CliError::Unsupported(format!(
                "{pointer}: column {:?} holds a scalar, not an array",
                c.name
            )));
        };
        let (values, mask) = file
            .read_masked(p)
            .map_err(|e| CliError::invalid(input, e))?;
        let stem = file_stem(&c.name, i);
        let data_file = format!("{stem}.npy");
        let mask_file = mask.map(|m| (format!("{stem}.mask.npy"), AnyArray::Bool(m)));
        manifest.push(json!({
            "name": c.name, "file": data_file, "unit": c.unit, "description": c.description,
            "mask": mask_file.as_ref().map(|(f, _)| f.clone()),
        }));
        files.push((data_file, values));
        files.extend(mask_file);
    }
    let mut seen = std::collections::HashSet::new();
    if let Some((dup, _)) = files.iter().find(|(f, _)| !seen.insert(f.as_str())) {
        return Err(CliError::Unsupported(format!(
            "{pointer}: two columns would both be written to {dup}"
        )));
    }
    std::fs::create_dir_all(dir).map_err(|e| CliError::io(dir, e))?;
    for (name, _) in &files {
        let path = dir.join(name);
        if path.exists() {
            return Err(CliError::Usage(format!(
                "{} exists: convert writes table columns into new files only",
                path.display()
            )));
        }
    }
    for (name, a) in &files {
        crate::output::write_file(&dir.join(name), &crate::npy::to_bytes(a)?)?;
    }
    let text =
        serde_json::to_string_pretty(&manifest).map_err(|e| CliError::Invalid(e.to_string()))?;
    crate::output::write_file(&dir.join("columns.json"), text.as_bytes())?;
    Ok(format!(
        "wrote {} columns of {pointer} into {} (columns.json lists them)",
        table.columns.len(),
        dir.display()
    ))
}

/// A file name for column `name` (number `i`): the name with path separators, control
/// characters and leading dots replaced, `column<i>` when nothing is left.
fn file_stem(name: &str, i: usize) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c == '/' || c == '\\' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect();
    let clean = clean.trim_start_matches('.').to_string();
    if clean.is_empty() {
        format!("column{i}")
    } else {
        clean
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn column_names_become_safe_file_names() {
        assert_eq!(super::file_stem("flux", 0), "flux");
        assert_eq!(super::file_stem("../../etc/passwd", 1), "_.._etc_passwd");
        assert_eq!(super::file_stem("..", 2), "column2");
        assert_eq!(super::file_stem("a\nb", 3), "a_b");
    }
}
