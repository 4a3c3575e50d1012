//! The crate's own decoding of number and list columns ([`direct`]) against arrow-rs's reader,
//! on every shape it takes, with and without nulls, across encodings, page sizes, page
//! versions, row-group cuts and missing statistics; and its checks on levels.

use std::fs::File;
use std::sync::Arc;

use arrow_array::builder::{
    Float32Builder, Float64Builder, Int32Builder, Int64Builder, LargeListBuilder, ListBuilder,
};
use arrow_array::{ArrayRef, Float32Array, Float64Array, Int32Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field};
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};

use super::direct::{self, Levels};
use super::read_parquet;
use crate::arrow::from_record_batches;

const ROWS: usize = 3000;

/// What the tests and their helpers return: any failure ends the test with its message.
type TestResult<T = ()> = Result<T, Box<dyn std::error::Error>>;

/// Every column shape [`direct::plan`] takes (and a string column with nulls it leaves to
/// arrow-rs).
fn batch() -> TestResult<RecordBatch> {
    let required = |t| Arc::new(Field::new("item", t, false));
    let mut jag =
        LargeListBuilder::new(Float64Builder::new()).with_field(required(DataType::Float64));
    let mut jag_nulls = ListBuilder::new(Int64Builder::new());
    let mut jag32 = ListBuilder::new(Int32Builder::new()).with_field(required(DataType::Int32));
    let mut jag_items = LargeListBuilder::new(Float32Builder::new());
    for i in 0..ROWS {
        for k in 0..i % 5 {
            jag.values().append_value((i * 7 + k) as f64 * 0.5);
            jag32.values().append_value((i + k) as i32 - 900);
            match k % 3 {
                1 => jag_nulls.values().append_null(),
                _ => jag_nulls.values().append_value((i * k) as i64 - 40),
            }
            match (i + k) % 4 {
                0 => jag_items.values().append_null(),
                _ => jag_items.values().append_value(k as f32 + 0.25),
            }
        }
        jag.append(true);
        jag32.append(true);
        jag_items.append(true);
        jag_nulls.append(i % 11 != 3);
    }
    let f: Float64Array = (0..ROWS).map(|i| i as f64 * 0.5).collect();
    let f_nulls: Float64Array = (0..ROWS)
        .map(|i| (i % 7 != 2).then_some(i as f64))
        .collect();
    let int: Int32Array = (0..ROWS).map(|i| i as i32 * 3 - 7).collect();
    let long =
        arrow_array::Int64Array::from_iter((0..ROWS).map(|i| (i % 5 != 0).then_some(i as i64)));
    let single: Float32Array = (0..ROWS).map(|i| i as f32 / 4.0).collect();
    let text: StringArray = (0..ROWS).map(|i| Some(format!("r{i}"))).collect();
    let accented = (0..ROWS).map(|i| Some("é".repeat(i % 4) + &i.to_string()));
    let accented: arrow_array::LargeStringArray = accented.collect();
    let bytes = (0..ROWS).map(|i| Some(vec![i as u8; i % 3]));
    let bytes: arrow_array::BinaryArray = bytes.collect();
    let text_nulls = (0..ROWS).map(|i| (i % 6 != 1).then(|| format!("n{i}")));
    let text_nulls: StringArray = text_nulls.collect();
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("f", Arc::new(f)),
        ("f_nulls", Arc::new(f_nulls)),
        ("int", Arc::new(int)),
        ("long", Arc::new(long)),
        ("single", Arc::new(single)),
        ("jag", Arc::new(jag.finish())),
        ("jag_nulls", Arc::new(jag_nulls.finish())),
        ("jag32", Arc::new(jag32.finish())),
        ("jag_items", Arc::new(jag_items.finish())),
        ("text", Arc::new(text)),
        ("accented", Arc::new(accented)),
        ("bytes", Arc::new(bytes)),
        ("text_nulls", Arc::new(text_nulls)),
    ];
    Ok(RecordBatch::try_from_iter(columns)?)
}

fn write(path: &std::path::Path, batch: &RecordBatch, props: WriterProperties) -> TestResult {
    let mut w = ArrowWriter::try_new(File::create(path)?, batch.schema(), Some(props))?;
    w.write(batch)?;
    w.close()?;
    Ok(())
}

/// The file read by arrow-rs alone, converted by the crate's Arrow mapping.
fn through_arrow_rs(path: &std::path::Path) -> TestResult<crate::Layout> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path)?)?;
    let schema = reader.schema().clone();
    let batches = reader.build()?.collect::<Result<Vec<RecordBatch>, _>>()?;
    Ok(from_record_batches(&schema, &batches)?)
}

#[test]
fn numbers_and_lists_read_as_arrow_rs_reads_them() -> TestResult {
    let tmp = asdf_testkit::TempDir::new("awk-parquet-direct");
    let base = || WriterProperties::builder();
    let variants = [
        ("defaults", base().build()),
        (
            "small pages, no dictionary, several row groups",
            base()
                .set_dictionary_enabled(false)
                .set_data_page_row_count_limit(97)
                .set_write_batch_size(31)
                .set_max_row_group_row_count(Some(700))
                .build(),
        ),
        (
            "data pages v2, snappy",
            base()
                .set_writer_version(WriterVersion::PARQUET_2_0)
                .set_compression(Compression::SNAPPY)
                .set_max_row_group_row_count(Some(1024))
                .build(),
        ),
        (
            "no statistics",
            base()
                .set_statistics_enabled(EnabledStatistics::None)
                .set_max_row_group_row_count(Some(1000))
                .build(),
        ),
    ];
    let batch = batch()?;
    for (name, props) in variants {
        let path = tmp.join("t.parquet");
        write(&path, &batch, props)?;
        let meta = ArrowReaderMetadata::load(&File::open(&path)?, Default::default())?;
        // The number, list and string columns are read here; strings with nulls by arrow-rs.
        let planned: Vec<bool> = (0..13).map(|c| direct::plan(&meta, c).is_some()).collect();
        assert_eq!(planned, [[true; 12].as_slice(), &[false]].concat());
        // Columns without nulls are read whole; lists only when the footer's statistics say
        // how many items each row group holds.
        let whole = (0..12)
            .map(|c| {
                let plan = direct::plan(&meta, c).ok_or("a column left unplanned")?;
                Ok(direct::read_whole(&path, &meta, &plan)?.is_some())
            })
            .collect::<TestResult<Vec<bool>>>()?;
        let stats = name != "no statistics";
        let want = [
            true, false, true, false, true, stats, false, stats, false, true, true, true,
        ];
        assert_eq!(whole, want, "{name}");
        // The whole columns' chunks are placed from their pages, none left to the column reader.
        let tally = || -> TestResult<[usize; 2]> {
            let tally = direct::PLACED.lock().map_err(|e| e.to_string())?;
            let mine = tally.iter().filter(|(p, _)| *p == path);
            Ok(mine.fold(
                [0, 0],
                |[y, n], (_, placed)| if *placed { [y + 1, n] } else { [y, n + 1] },
            ))
        };
        let before = tally()?;
        let ours = read_parquet(&path)?;
        let after = tally()?;
        let groups = meta.metadata().num_row_groups();
        let wholes = want.iter().filter(|w| **w).count();
        assert_eq!(after[0] - before[0], groups * wholes, "{name}");
        assert_eq!(after[1], before[1], "{name}");
        same(name, &ours, &through_arrow_rs(&path)?)?;
    }
    Ok(())
}

/// `ours` and `want` (records of the same fields) the same arrays, or a panic naming the first
/// field that differs (and not printing the whole table). Columns without nulls are equal
/// buffer for buffer; the others have the same classes and values, as arrow-rs leaves what
/// it likes under a null (the last value before it) and this reader a zero.
fn same(name: &str, ours: &crate::Layout, want: &crate::Layout) -> TestResult {
    let (crate::Layout::Record(a), crate::Layout::Record(b)) = (ours, want) else {
        panic!("{name}: not records");
    };
    assert_eq!(a.fields, b.fields, "{name}");
    for (k, (x, y)) in a.contents.iter().zip(&b.contents).enumerate() {
        let field = a.fields.as_ref().map(|f| f[k].clone()).unwrap_or_default();
        let show = |l: &crate::Layout| format!("{l:?}").chars().take(600).collect::<String>();
        let equal = match field.contains("nulls") || field == "long" || field == "jag_items" {
            false => x == y,
            true => classes(x) == classes(y) && x.to_json()? == y.to_json()?,
        };
        assert!(
            equal,
            "{name}, field {field}:\nours {}\nwant {}",
            show(x),
            show(y)
        );
    }
    Ok(())
}

/// A layout's classes, depth first.
fn classes(l: &crate::Layout) -> Vec<&'static str> {
    let mut out = vec![l.class_name()];
    l.children()
        .into_iter()
        .for_each(|c| out.extend(classes(c)));
    out
}

/// The levels of a list column (definition 0..=1 for a list that cannot be null with items
/// that cannot): a record cannot start with repetition level 1, continue an empty list, or use
/// levels past the column's maxima; the error says which.
#[test]
fn levels_that_describe_no_list_are_errors() -> TestResult {
    let plan = |list: bool| {
        let item = Arc::new(arrow_schema::Field::new(
            "item",
            arrow_schema::DataType::Float64,
            false,
        ));
        direct::Plan::for_test(false, list.then_some((true, item)))
    };
    let take = |def: &[i16], rep: &[i16]| {
        let mut levels = Levels::new(&plan(true), 1, 0);
        levels
            .take(def.len(), def, rep)
            .map(|()| (levels.records, levels.slots))
    };
    assert_eq!(take(&[1, 1, 0, 1], &[0, 1, 0, 0])?, (3, 3));
    for (def, rep, says) in [
        (
            &[1, 1][..],
            &[1, 0][..],
            "repetition level 1 (definition level 1) after 0 records",
        ),
        (
            &[0, 1],
            &[0, 1],
            "repetition level 1 (definition level 1) after 1 records",
        ),
        (&[1, 1], &[0, 2], "repetition level 2"),
        (&[1, 2], &[0, 1], "definition level 2 outside 0..=1"),
        (&[1, -1], &[0, 0], "definition level -1 outside 0..=1"),
    ] {
        let e = take(def, rep).unwrap_err().to_string();
        assert!(e.contains(says), "{def:?} {rep:?}: {e}");
    }
    let mut flat = Levels::new(&direct::Plan::for_test(true, None), 1, 0);
    let e = flat.take(3, &[0, 1], &[]).unwrap_err().to_string();
    assert!(e.contains("2 definition levels for 3"), "{e}");
    Ok(())
}

/// Values decoded without their null slots move to their slots from the back, nulls left as
/// zeros: for a list column (levels at or below `empty` have no slot) and a column of numbers.
#[test]
fn values_spread_to_their_slots() -> TestResult {
    let item = Arc::new(arrow_schema::Field::new(
        "item",
        arrow_schema::DataType::Int64,
        true,
    ));
    let mut lists = Levels::new(&direct::Plan::for_test(false, Some((true, item))), 2, 0);
    // [[7, null], [], [8]]: levels (def, rep) (2,0) (1,1) (0,0) (2,0).
    let (def, rep) = ([2, 1, 0, 2], [0, 1, 0, 0]);
    lists.take(4, &def, &rep)?;
    let mut values = vec![5i64, 7, 8];
    lists.spread(&mut values, 1, &def);
    assert_eq!(values, [5, 7, 0, 8]);
    let mut numbers = Levels::new(&direct::Plan::for_test(true, None), 1, 0);
    let def = [0, 1, 1, 0];
    numbers.take(4, &def, &[])?;
    let mut values = vec![3.5f64, 4.5];
    numbers.spread(&mut values, 0, &def);
    assert_eq!(values, [0.0, 3.5, 4.5, 0.0]);
    Ok(())
}

/// A file with every byte flipped in turn, and cut at every length, reads or fails with an
/// error naming it, whichever reader (pages, column reader, arrow-rs) meets the damage: no
/// panic leaves `read_parquet`.
#[test]
fn damaged_files_are_errors_not_panics() -> TestResult {
    let tmp = asdf_testkit::TempDir::new("awk-parquet-damage");
    let full = batch()?;
    let schema = full.schema();
    let columns = ["f", "jag", "jag_nulls", "accented"].map(|c| schema.index_of(c));
    let columns = columns.into_iter().collect::<Result<Vec<_>, _>>()?;
    let batch = full.project(&columns)?.slice(0, 60);
    let props = WriterProperties::builder()
        .set_data_page_row_count_limit(16)
        .set_write_batch_size(8)
        .set_max_row_group_row_count(Some(40))
        .build();
    let good = tmp.join("good.parquet");
    write(&good, &batch, props)?;
    let bytes = std::fs::read(&good)?;
    let bad = tmp.join("bad.parquet");
    // The parquet and arrow crates' contained panics are not reported (the rest are, as before).
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |p| {
        let upstream = |f: &str| f.contains("/parquet-") || f.contains("/arrow-");
        if !p.location().is_some_and(|l| upstream(l.file())) {
            report(p)
        }
    }));
    let mut outcomes = [0usize; 2];
    for at in 0..bytes.len() {
        let mut b = bytes.clone();
        b[at] ^= 0xff;
        std::fs::write(&bad, &b)?;
        match read_parquet(&bad) {
            Ok(_) => outcomes[1] += 1,
            Err(e) => {
                assert!(e.to_string().contains("bad.parquet"), "byte {at}: {e}");
                outcomes[0] += 1;
            }
        }
    }
    for len in 0..bytes.len() {
        std::fs::write(&bad, &bytes[..len])?;
        assert!(read_parquet(&bad).is_err(), "cut at {len}");
    }
    // Flips in values still read; those in headers, levels and the footer fail.
    assert!(outcomes[0] > 0 && outcomes[1] > 0, "{outcomes:?}");
    Ok(())
}
