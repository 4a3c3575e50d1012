//! Case 6a: RawArray, 1 GiB of float64: write and read, ours against `rawarray` 0.1.4.

use super::Ctx;
use crate::data::{check_sum, counts_f64, scaled, sum};
use crate::measure::{best, best_write, best_writes, BenchError, Result, Row};

pub fn run(ctx: &Ctx) -> Result<Vec<Row>> {
    let bytes = scaled(1 << 30, ctx.scale, 1 << 20);
    let n = (bytes / 8) as usize;
    let data = counts_f64(n);
    let want = sum(&data);
    let dims = [n as u64];
    let ours_path = ctx.dir.join("ours.ra");
    let theirs_path = ctx.dir.join("theirs.ra");
    let size = format!("{} MiB float64", bytes >> 20);

    // Writes, from the same memory on both sides. rawarray 0.1.4 writes in place without
    // fsync; `write_slice` to a `File` is the same operation; `save` adds the crash-safe
    // temporary file + fsync + rename, and the unsynced save the temporary file + rename.
    // Each write starts with no old file and a clean page cache, the three in turns
    // (`best_writes`).
    let theirs: rawarray014::RawArray<f64> = data.into();
    let data = theirs.data_as_ref();
    let relaxed = rawarray::WriteOptions {
        durability: rawarray::Durability::Relaxed,
        ..Default::default()
    };
    let unsynced_path = ctx.dir.join("ours-unsynced.ra");
    let times = best_writes(&mut [
        (&ours_path, &mut || {
            let f = std::fs::File::create(&ours_path).map_err(|e| BenchError::io(&ours_path, e))?;
            rawarray::write_slice(f, data, &dims, &Default::default()).map_err(BenchError::ours)
        }),
        (&theirs_path, &mut || {
            theirs
                .write(&theirs_path)
                .map_err(|e| BenchError::peer("rawarray 0.1.4", e))
        }),
        (&unsynced_path, &mut || {
            rawarray::save(&unsynced_path, data, &dims, &relaxed).map_err(BenchError::ours)
        }),
    ])?;
    let [ours_w, theirs_w, ours_unsynced] = times[..] else {
        return Err(BenchError::Ours("three writes were timed".into()));
    };
    // The synced save alone: its sync would slow the others' runs.
    let ours_save = best_write(&ours_path, || {
        rawarray::save(&ours_path, data, &dims, &Default::default()).map_err(BenchError::ours)
    })?;
    std::fs::remove_file(&unsynced_path).map_err(|e| BenchError::io(&unsynced_path, e))?;
    drop(theirs);

    // Reads, of each other's files too (the format is the same).
    let (ours_r, v) = best(|| {
        rawarray::open_vec::<f64, _>(&theirs_path)
            .map(|(v, _)| v)
            .map_err(BenchError::ours)
    })?;
    check_sum("rawarray", "ours", sum(&v), want)?;
    drop(v);
    let (theirs_r, v) = best(|| {
        rawarray014::RawArray::<f64>::read(&ours_path)
            .map(Vec::from)
            .map_err(|e| BenchError::peer("rawarray 0.1.4", e))
    })?;
    check_sum("rawarray", "rawarray 0.1.4", sum(&v), want)?;
    drop(v);
    Ok(vec![
        Row::new("6. RawArray write (no fsync)", ours_w)
            .peer("rawarray 0.1.4", theirs_w)
            .bytes(bytes)
            .note(size),
        Row::new("6. RawArray save (tmp + fsync + rename)", ours_save)
            .peer("rawarray 0.1.4 (no fsync)", theirs_w)
            .bytes(bytes),
        Row::new(
            "6. RawArray save unsynced (tmp + rename, a new file)",
            ours_unsynced,
        )
        .peer("rawarray 0.1.4 (no fsync)", theirs_w)
        .bytes(bytes),
        Row::new("6. RawArray read into Vec<f64>", ours_r)
            .peer("rawarray 0.1.4", theirs_r)
            .bytes(bytes),
    ])
}
