//! `asdftool`: the command-line tool over ASDF, RawArray, NumPy and Awkward Array files.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use asdftool::error::{CliError, Result};
use clap::{Parser, Subcommand};

/// Inspect, verify, compare and convert ASDF, RawArray (.ra), NumPy (.npy) and Awkward Array
/// 0.x (.awkd) files. Input formats are recognised by their magic bytes.
///
/// Exit status: 0 success, 1 the answer is "no" (files differ, nothing found, verification
/// failed) or an input is invalid, 2 usage or I/O error.
///
/// Trust: the verbs that only inspect a file (info, verify, diff, search, awkward to-json) treat
/// it as untrusted by default: results near 1 GiB, all blocks of a file near 4 GiB,
/// YAML aliases ≤ 100 000 nodes, scalars ≤ 64 MiB, external files (exploded arrays, $ref targets)
/// only in the file's directory or below. The verbs that write a new file (to-yaml, defragment,
/// explode, implode, convert, edit) use the data-sized limits (blocks ≤ 16 GiB, a file ≤ 64 GiB)
/// with the same external-file rule. --untrusted applies the untrusted limits to every verb;
/// --trusted the data-sized limits and external files anywhere (absolute paths, ../, file: URIs).
/// Every external file read is named on stderr (unless --quiet). Only regular files are read.
#[derive(Parser, Debug)]
#[command(name = "asdftool", version, propagate_version = true)]
struct Cli {
    /// Print nothing but results and errors (no progress bars).
    #[arg(short, long, global = true)]
    quiet: bool,
    /// Print more detail (per block and per array).
    #[arg(short, long, global = true)]
    verbose: bool,
    /// Use at most N threads for decoding and compression.
    #[arg(long, global = true, value_name = "N")]
    threads: Option<usize>,
    /// Treat every input as untrusted, whatever the verb (see "Trust" above).
    #[arg(long, global = true, conflicts_with = "trusted")]
    untrusted: bool,
    /// Trust the inputs: data-sized limits for every verb, external files anywhere.
    #[arg(long, global = true)]
    trusted: bool,
    /// Read blocks whose checksum does not match (as Python asdf does by default), with a
    /// warning naming each; without it such a block stops the verb.
    #[arg(long, global = true)]
    ignore_checksums: bool,
    /// Do not wait for new output files to reach the disk (as Python asdf, NumPy and awkward
    /// leave theirs): a power loss soon after may leave them empty or short. Outputs are still
    /// written to a temporary file and renamed, and one that replaces an existing file is
    /// synced regardless, so nothing already on disk is put at risk.
    #[arg(long, global = true)]
    no_sync: bool,
    #[command(subcommand)]
    command: Verb,
}

#[derive(Subcommand, Debug)]
enum Verb {
    /// Show the tree (keys, tags, scalars, arrays as shape/datatype/storage), and optionally the
    /// blocks; for .ra/.npy the header, for .awkd the arrays and their types.
    Info {
        /// The file.
        file: PathBuf,
        /// Show at most N lines of the tree.
        #[arg(long, value_name = "N")]
        max_rows: Option<usize>,
        /// Also show every block: offset, flags, compression label, sizes, checksum.
        #[arg(long)]
        show_blocks: bool,
        /// Print JSON (tree, arrays, blocks) for machines.
        #[arg(long)]
        json: bool,
    },
    /// Decode every block, check every checksum (both MD5 conventions), read every array
    /// (chunked, streamed, external, masked) and resolve every reference; exit 1 on any failure.
    Verify {
        /// The file.
        file: PathBuf,
    },
    /// Write the same tree with every array inline and no blocks.
    #[command(alias = "to_yaml")]
    ToYaml {
        /// The ASDF file.
        file: PathBuf,
        /// The output file.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Rewrite with every array in its own contiguous internal block and no unused space,
    /// optionally compressed; tree, tags, references and anchors are kept.
    Defragment {
        /// The ASDF file.
        file: PathBuf,
        /// The output file (may be the input: it is replaced atomically).
        #[arg(short, long)]
        output: PathBuf,
        #[arg(short = 'c', long, value_name = "LABEL", help = compression_help("Compression of every array"))]
        compress: Option<String>,
        /// Compression level (codec-specific).
        #[arg(long, value_name = "N", allow_negative_numbers = true)]
        level: Option<i32>,
    },
    /// Move every array to its own external ASDF file (<output stem>NNNN.asdf) next to the output.
    Explode {
        /// The ASDF file.
        file: PathBuf,
        /// The output file.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Gather external arrays (and all others) into internal blocks of one file.
    Implode {
        /// The ASDF file.
        file: PathBuf,
        /// The output file.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Compare two files by content: exit 0 when equal, 1 when they differ (each difference
    /// printed with its JSON Pointer). Arrays compare by value (NaN equals NaN) whatever their
    /// storage, compression, byte order or layout; a .ra or .npy file compares with an ASDF array.
    /// Block checksums are not verified (the content itself is compared; `verify` checks them).
    Diff {
        /// The first file.
        a: PathBuf,
        /// The second file.
        b: PathBuf,
        /// Also compare asdf_library and history.
        #[arg(short = 'm', long)]
        include_metadata: bool,
        /// The ASDF array compared with a single-array file (default /data, or the only array).
        #[arg(long, value_name = "POINTER")]
        pointer: Option<String>,
    },
    /// Convert by extension between .asdf, .ra, .npy and the files of awkward arrays: .awkd
    /// (awkward0), .npz or a directory of awkward 2 buffers (ak.to_buffers with the form in
    /// awkward.json), and .parquet (FITS files with an ASDF tree, JWST products, are read too).
    /// A single array becomes an ASDF tree with the array at /data; awkward arrays in ASDF
    /// convert to the awkward formats. An output without extension is a directory: with
    /// --pointer naming a table (core/table, astropy table), the table's columns become one
    /// .npy file each (masks as <name>.mask.npy), listed with units in columns.json; otherwise
    /// it receives awkward 2 buffers.
    Convert {
        /// The input file.
        input: PathBuf,
        /// The output file (.asdf, .ra, .npy, .awkd, .npz or .parquet), or a directory.
        output: PathBuf,
        /// From ASDF: the array to convert (default /data, or the only array).
        #[arg(long, value_name = "POINTER")]
        pointer: Option<String>,
        #[arg(short = 'c', long, value_name = "LABEL", help = compression_help("Compression of ASDF output blocks"))]
        compress: Option<String>,
        /// Compression level (codec-specific).
        #[arg(long, value_name = "N", allow_negative_numbers = true)]
        level: Option<i32>,
        /// Name of the array in .awkd files.
        #[arg(long)]
        name: Option<String>,
        /// Store awkward arrays in ASDF output as awkward 2 form and buffers even from an .awkd
        /// file (awkward 2 inputs always are).
        #[arg(long)]
        awkward2: bool,
    },
    /// Edit the YAML tree in $VISUAL/$EDITOR; written back in place when it fits in the padding
    /// before the first block, else the file is rewritten atomically. Invalid YAML is refused
    /// and the file left unchanged.
    Edit {
        /// The ASDF file.
        file: PathBuf,
    },
    /// Print the JSON Pointers of matching nodes (exit 1 when none match).
    Search {
        /// The ASDF file.
        file: PathBuf,
        /// Regular expression the key (or list index) must match.
        #[arg(long)]
        key: Option<String>,
        /// Type: str, int, float, bool, null, dict, list, ndarray, or part of a tag.
        #[arg(long = "type", value_name = "TYPE")]
        type_: Option<String>,
        /// Scalar value (compared as text, numbers numerically).
        #[arg(long)]
        value: Option<String>,
    },
    /// Validate the tree: built-in checks of the core tags, then every tagged node against its
    /// tag's schema (from --schemas, ASDF_SCHEMA_PATH and an installed Python asdf_standard),
    /// then a custom schema. Exit 0 when valid, 1 with every violation listed. Given several
    /// files, the schemas are loaded once and each file is reported in turn; the exit status is
    /// the worst of them (2 when one could not be read).
    Validate {
        /// The ASDF files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// A custom schema for the whole tree (YAML or JSON).
        #[arg(long)]
        schema: Option<PathBuf>,
        /// A directory of schemas and manifests (repeatable).
        #[arg(long = "schemas", value_name = "DIR")]
        schemas: Vec<PathBuf>,
        /// The Python interpreter whose asdf_standard schemas to use.
        #[arg(long)]
        python: Option<PathBuf>,
        /// Only the built-in checks (no schema files).
        #[arg(long)]
        builtin_only: bool,
    },
    /// Recover what a damaged file still holds: find every block by its magic, keep those
    /// whose header is sane and whose checksum holds, match them with the tree's block numbers
    /// (through the block index even when its offsets are shifted, else by file order as far
    /// as it is certain) and write a new valid file. Every array that cannot be recovered is
    /// reported with the reason and written as null; exit 1 when any is lost.
    Salvage {
        /// The damaged ASDF file.
        file: PathBuf,
        /// The output file (never the input, unless --replace-input).
        #[arg(short, long)]
        output: PathBuf,
        /// Allow the output to be the input (replaced atomically).
        #[arg(long)]
        replace_input: bool,
    },
    /// List the tags this build understands.
    Tags,
    /// List the compression labels (codecs) this build understands.
    Extensions,
    /// Awkward array verbs (.awkd, awkward 2 buffers, Parquet, awkward arrays in ASDF).
    Awkward {
        #[command(subcommand)]
        verb: AwkVerb,
    },
}

#[derive(Subcommand, Debug)]
enum AwkVerb {
    /// Print an awkward array as JSON (records as objects, missing as null): of an .awkd file,
    /// awkward 2 buffers (.npz or directory), a .parquet file, or an ASDF file.
    ToJson {
        /// The file (or awkward 2 buffers directory).
        file: PathBuf,
        /// The array's name in an .awkd file, or its JSON Pointer or top-level key in an ASDF
        /// file (default: the only one).
        #[arg(long)]
        name: Option<String>,
    },
    /// Infer a type from JSON (int64, float64, bool, string, list, record, option, union) and
    /// write an .awkd file awkward0 0.15.5 reads to the same values.
    FromJson {
        /// The JSON file.
        input: PathBuf,
        /// The .awkd file to write.
        #[arg(short, long)]
        output: PathBuf,
        /// The array's name.
        #[arg(long, default_value = "data")]
        name: String,
    },
}

const TAGS: &[&str] = &[
    "tag:stsci.edu:asdf/core/asdf-1.0.0",
    "tag:stsci.edu:asdf/core/asdf-1.1.0",
    "tag:stsci.edu:asdf/core/ndarray-1.0.0",
    "tag:stsci.edu:asdf/core/ndarray-1.1.0",
    asdf::ndarray::CHUNKED_TAG,
    asdf::ndarray::CHUNK_TAG,
    asdf::ndarray::COMPLEX_TAG,
    "tag:stsci.edu:asdf/core/integer-1.0.0",
    asdf::ndarray::INTEGER_TAG,
    "tag:stsci.edu:asdf/core/software-1.0.0",
    "tag:stsci.edu:asdf/core/history_entry-1.0.0",
    "tag:stsci.edu:asdf/core/extension_metadata-1.0.0",
];

/// Prints `text` on stdout, control characters escaped ([`asdftool::tree::printable`]: strings
/// of a file cannot drive the terminal).
fn out(text: &str) -> Result<()> {
    let text = asdftool::tree::printable(text);
    let mut o = std::io::stdout().lock();
    match o.write_all(text.as_bytes()).and_then(|_| o.flush()) {
        Ok(()) => Ok(()),
        // A closed pipe (`| head`) is not an error worth a message.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError::io(std::path::Path::new("<stdout>"), e)),
    }
}

/// `what: none, zlib, bzp2, ...`: the codecs listed from the registry, so a new codec shows up
/// in the help without editing it.
fn compression_help(what: &str) -> String {
    let codecs = asdf::block::CodecRegistry::default();
    let names: Vec<&str> = std::iter::once("none").chain(codecs.names()).collect();
    format!("{what}: {}.", names.join(", "))
}

fn label(c: &Option<String>) -> Result<Option<asdf::block::Label>> {
    c.as_deref().map(asdftool::rewrite::parse_label).transpose()
}

/// The trust and open options of this command line: the verb's default trust unless a flag says
/// otherwise, and an observer naming every external file read on stderr (once each) unless
/// `--quiet`.
fn open_options(cli: &Cli) -> (asdftool::input::Trust, asdf::OpenOptions) {
    use asdftool::input::Trust;
    let inspects = matches!(
        cli.command,
        Verb::Info { .. }
            | Verb::Verify { .. }
            | Verb::Diff { .. }
            | Verb::Search { .. }
            | Verb::Awkward {
                verb: AwkVerb::ToJson { .. }
            }
    );
    let trust = if cli.trusted {
        Trust::Trusted
    } else if cli.untrusted || inspects {
        Trust::Untrusted
    } else {
        Trust::Data
    };
    let mut options = trust.options();
    if cli.ignore_checksums {
        options.blocks.checksums = asdf::block::ChecksumPolicy::Skip;
    }
    if !cli.quiet {
        let seen = std::sync::Mutex::new(std::collections::HashSet::new());
        options.external_observer = Some(asdf::ExternalObserver::new(move |p| {
            let first = seen
                .lock()
                .map(|mut s| s.insert(p.to_path_buf()))
                .unwrap_or(true);
            if first {
                // Debug formatting: control characters in the name are escaped.
                eprintln!(
                    "asdftool: reading external file {:?}",
                    p.display().to_string()
                );
            }
        }));
    }
    (trust, options)
}

/// For the verbs that write files: SIGINT/SIGTERM/SIGHUP remove the temporary files next to the
/// output before exiting. Called before any thread starts.
fn clean_up_on_signals(cli: &Cli) -> Result<()> {
    let output = match &cli.command {
        Verb::ToYaml { output, .. }
        | Verb::Defragment { output, .. }
        | Verb::Explode { output, .. }
        | Verb::Implode { output, .. }
        | Verb::Salvage { output, .. }
        | Verb::Convert { output, .. }
        | Verb::Awkward {
            verb: AwkVerb::FromJson { output, .. },
        } => output,
        _ => return Ok(()),
    };
    #[cfg(unix)]
    asdftool::signals::remove_temp_files_on_signal(vec![asdftool::signals::dir_of(output)])
        .map_err(|e| CliError::io(output, e))?;
    #[cfg(not(unix))]
    let _ = output;
    Ok(())
}

/// Sets the process up (trust limits, signal clean-up, threads) and runs the verb; `Ok(false)`
/// means the answer is "no" (exit status 1).
fn run(cli: Cli) -> Result<bool> {
    let (trust, options) = open_options(&cli);
    asdftool::input::set_open_options(trust, options);
    asdftool::input::set_ignore_checksums(cli.ignore_checksums);
    asdftool::output::set_no_sync(cli.no_sync);
    clean_up_on_signals(&cli)?;
    asdftool::progress::set_quiet(cli.quiet);
    if let Some(n) = cli.threads {
        if n == 0 {
            return Err(CliError::Usage("--threads must be at least 1".into()));
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global()
            .map_err(|e| CliError::Usage(format!("--threads: {e}")))?;
    }
    dispatch(&cli)
}

/// Prints a progress line on stderr unless `--quiet`.
fn say(cli: &Cli, msg: String) {
    if !cli.quiet {
        eprintln!("{msg}");
    }
}

/// Prints one line per item on stdout.
fn out_lines<S: AsRef<str>>(lines: &[S]) -> Result<()> {
    let mut text = String::new();
    for l in lines {
        text.push_str(l.as_ref());
        text.push('\n');
    }
    out(&text)
}

/// Runs the verb; `Ok(false)` means the answer is "no" (exit status 1).
fn dispatch(cli: &Cli) -> Result<bool> {
    match &cli.command {
        Verb::Info {
            file,
            max_rows,
            show_blocks,
            json,
        } => {
            let opts = asdftool::info::InfoOptions {
                max_rows: *max_rows,
                show_blocks: *show_blocks,
                json: *json,
                verbose: cli.verbose,
            };
            out(&asdftool::info::info(file, &opts)?)?;
        }
        Verb::Verify { file } => return verify(cli, file),
        Verb::ToYaml { .. }
        | Verb::Defragment { .. }
        | Verb::Explode { .. }
        | Verb::Implode { .. } => rewrite_verb(cli)?,
        Verb::Diff {
            a,
            b,
            include_metadata,
            pointer,
        } => {
            let opts = asdftool::diff::DiffOptions {
                include_metadata: *include_metadata,
                pointer: pointer.clone(),
            };
            let d = asdftool::diff::diff(a, b, &opts)?;
            out_lines(&d)?;
            return Ok(d.is_empty());
        }
        Verb::Convert {
            input,
            output,
            pointer,
            compress,
            level,
            name,
            awkward2,
        } => {
            let opts = asdftool::convert::ConvertOptions {
                pointer: pointer.clone(),
                compression: label(compress)?,
                level: *level,
                name: name.clone(),
                awkward2: *awkward2,
            };
            say(cli, asdftool::convert::convert(input, output, &opts)?);
        }
        Verb::Edit { file } => edit(cli, file)?,
        Verb::Search {
            file,
            key,
            type_,
            value,
        } => {
            let q = asdftool::search::Query {
                key: key.clone(),
                type_: type_.clone(),
                value: value.clone(),
            };
            let found = asdftool::input::with_tree(file, |t| asdftool::search::search(t, &q))??;
            out_lines(&found)?;
            return Ok(!found.is_empty());
        }
        Verb::Validate { .. } => return validate(cli),
        Verb::Salvage {
            file,
            output,
            replace_input,
        } => return salvage(cli, file, output, *replace_input),
        Verb::Tags => out_lines(TAGS)?,
        Verb::Extensions => extensions()?,
        Verb::Awkward { verb } => awkward(cli, verb)?,
    }
    Ok(true)
}

/// `extensions`: the compression labels this build reads and writes, and the file formats.
fn extensions() -> Result<()> {
    let reg = asdf::block::CodecRegistry::default();
    let mut text = String::from("compression labels:\n");
    for l in reg.labels() {
        text.push_str(&format!("  {l}\n"));
    }
    text.push_str("formats: asdf, rawarray (.ra), npy, awkd\n");
    out(&text)
}

/// `verify`: prints failures (and details with `-v`); `Ok(false)` when any check failed.
fn verify(cli: &Cli, file: &std::path::Path) -> Result<bool> {
    let r = asdftool::verify::verify(file, cli.verbose)?;
    let mut text = String::new();
    for l in &r.lines {
        if cli.verbose
            || l.starts_with("FAILED")
            || l.starts_with("warning")
            || l.starts_with("salvage scan")
        {
            text.push_str(l);
            text.push('\n');
        }
    }
    if r.failures == 0 && !cli.quiet {
        text.push_str(&format!(
            "OK: {} blocks and {} arrays verified in {}\n",
            r.blocks,
            r.arrays,
            file.display()
        ));
    }
    out(&text)?;
    if r.failures > 0 {
        eprintln!("{}: {} failure(s)", file.display(), r.failures);
    }
    Ok(r.failures == 0)
}

/// The verbs that rewrite an ASDF file: `to-yaml`, `defragment`, `explode`, `implode`.
fn rewrite_verb(cli: &Cli) -> Result<()> {
    use asdftool::rewrite::{rewrite, Mode};
    let (file, output, mode, what) = match &cli.command {
        Verb::ToYaml { file, output } => (file, output, Mode::Inline, "arrays inline"),
        Verb::Defragment {
            file,
            output,
            compress,
            level,
        } => {
            let compression = label(compress)?.unwrap_or(asdf::block::Label::NONE);
            let mode = Mode::Blocks {
                compression,
                level: *level,
            };
            (file, output, mode, "arrays")
        }
        Verb::Explode { file, output } => (file, output, Mode::External, "external array files"),
        Verb::Implode { file, output } => {
            let mode = Mode::Blocks {
                compression: asdf::block::Label::NONE,
                level: None,
            };
            (file, output, mode, "arrays in internal blocks")
        }
        _ => return Err(CliError::Usage("not a rewriting verb".into())),
    };
    let s = rewrite(file, output, mode)?;
    let msg = match &cli.command {
        Verb::Explode { .. } => format!("wrote {} and {} {what}", output.display(), s.arrays),
        _ => format!("wrote {} ({} {what})", output.display(), s.arrays),
    };
    say(cli, msg);
    Ok(())
}

/// `salvage`: prints what was found and lost; `Ok(false)` when an array was lost.
fn salvage(
    cli: &Cli,
    file: &std::path::Path,
    output: &std::path::Path,
    replace_input: bool,
) -> Result<bool> {
    let r = asdftool::salvage::salvage(file, output, replace_input)?;
    out_lines(&r.lines)?;
    say(
        cli,
        format!(
            "wrote {} ({} block(s); {} array(s) recovered, {} not)",
            output.display(),
            r.blocks,
            r.recovered,
            r.lost
        ),
    );
    Ok(r.lost == 0)
}

/// `edit`: the tree in $VISUAL/$EDITOR, written back in place or rewritten.
fn edit(cli: &Cli, file: &std::path::Path) -> Result<()> {
    use asdftool::edit::Outcome;
    let msg = match asdftool::edit::edit(file)? {
        Outcome::Unchanged => "no changes",
        Outcome::InPlace => "tree updated in place",
        Outcome::Rewritten => "file rewritten with the new tree",
    };
    say(cli, format!("{}: {msg}", file.display()));
    Ok(())
}

/// `validate`: schema validation of each file; `Ok(false)` when one is invalid. A file that
/// cannot be validated does not stop the others: its error is printed, and the worst such
/// error (by exit status) is returned once every file has been seen.
fn validate(cli: &Cli) -> Result<bool> {
    let Verb::Validate {
        files,
        schema,
        schemas,
        python,
        builtin_only,
    } = &cli.command
    else {
        return Err(CliError::Usage("not the validate verb".into()));
    };
    let opts = if *builtin_only {
        asdf_schema::ValidateOptions::builtin_only()
    } else {
        asdf_schema::ValidateOptions {
            custom_schema: schema.clone(),
            schema_dirs: schemas.clone(),
            python: python.clone(),
            ..Default::default()
        }
    };
    let validator =
        asdf_schema::Validator::new(&opts).map_err(|e| CliError::Usage(e.to_string()))?;
    let mut all_valid = true;
    let mut errors = Vec::new();
    for file in files {
        match validate_one(&validator, &opts, file) {
            Ok(valid) => all_valid &= valid,
            Err(e) => errors.push(e),
        }
    }
    let worst = (0..errors.len()).max_by_key(|&i| (errors[i].exit_code(), std::cmp::Reverse(i)));
    match worst {
        Some(w) => {
            let e = errors.swap_remove(w);
            for other in &errors {
                eprintln!(
                    "asdftool: {}",
                    asdftool::tree::printable(&other.to_string())
                );
            }
            Err(e)
        }
        None => Ok(all_valid),
    }
}

/// One file of `validate`: prints its report, says whether it is valid.
fn validate_one(
    validator: &asdf_schema::Validator,
    opts: &asdf_schema::ValidateOptions,
    file: &Path,
) -> Result<bool> {
    let tree = asdftool::input::tree_for_validation(file)?;
    let v = validator.validate(&tree).map_err(|e| match e {
        asdf_schema::SchemaError::Io { .. } => CliError::Usage(format!("{}: {e}", file.display())),
        other => CliError::invalid(file, other),
    })?;
    let mut text = format!("{}: {}", file.display(), v.report);
    if v.builtin_only(opts) {
        text.push_str(if opts.builtin && !opts.tag_schemas {
            "(only the built-in checks of the core tags ran, as asked)\n"
        } else {
            "(only the built-in checks of the core tags ran: no schema files were found; see \
             --schemas, ASDF_SCHEMA_PATH and --python)\n"
        });
    }
    out(&text)?;
    Ok(v.report.is_valid())
}

/// `awkward to-json` / `awkward from-json`.
fn awkward(cli: &Cli, verb: &AwkVerb) -> Result<()> {
    match verb {
        AwkVerb::ToJson { file, name } => {
            let v = asdftool::awk::to_json(file, name.as_deref())?;
            out(&(v.to_string() + "\n"))
        }
        AwkVerb::FromJson {
            input,
            output,
            name,
        } => {
            asdftool::awk::from_json(input, output, name)?;
            say(cli, format!("wrote {}", output.display()));
            Ok(())
        }
    }
}

/// The tool's allocator. A tree is millions of small allocations that live until exit: with
/// mimalloc, `asdftool info` on a 22 MB catalogue tree takes 0.20 s where glibc's malloc takes
/// 0.30 s, most of the difference being page faults and arena growth (README, "Benchmarks",
/// the tree engine table). The library crates leave the choice to the application.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    asdftool::input::leak_at_exit();
    match run(cli) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("asdftool: {}", asdftool::tree::printable(&e.to_string()));
            ExitCode::from(e.exit_code() as u8)
        }
    }
}
