//! Concurrency across the readers and writers of every format: many threads read one open file
//! (ASDF over a memory map, RawArray over a memory map, `.awkd` through one shared handle) and
//! open it afresh, while one thread replaces that file again and again and others write their
//! own files. Readers of an open file keep seeing the version they opened; fresh opens see some
//! complete version; writers never tear each other's files.
//!
//! Run it under `--release` as well (`cargo test -p asdf-tests --release --test integration concurrency`);
//! ThreadSanitizer/Miri notes are in the robustness report.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};

use asdf::yaml::Node;
use asdf::{AsdfFile, AsdfWriter, StoreOptions, WriteOptions};
use asdf_awkward::{AwkdFile, Buffer, Layout, NumpyArray, SaveMode};
use rawarray::MappedRawArray;

const N: usize = 1 << 16;

fn values(g: u32) -> Vec<f64> {
    (0..N).map(|i| f64::from(g) * 1e6 + i as f64).collect()
}

fn write_asdf(path: &Path, g: u32) {
    let v = ndarray::Array1::from(values(g));
    let mut w = AsdfWriter::new();
    let raw = w.add(&v, &StoreOptions::default()).unwrap();
    let zipped = w
        .add(&v, &StoreOptions::compressed("zstd").unwrap())
        .unwrap();
    let tree = Node::mapping([
        ("generation", Node::from(i64::from(g))),
        ("raw", raw),
        ("zipped", zipped),
    ]);
    w.write_path(path, tree, &WriteOptions::default()).unwrap();
}

fn check_asdf(f: &AsdfFile) -> u32 {
    let g = f.pointer("/generation").and_then(Node::as_i64).unwrap() as u32;
    let want = values(g);
    for p in ["/raw", "/zipped"] {
        let a = f.array::<f64>(p).unwrap();
        assert!(a.iter().eq(want.iter()), "{p} of generation {g} is torn");
    }
    if let Ok(view) = f.view::<f64>("/raw") {
        assert!(view.iter().eq(want.iter()));
    }
    g
}

fn write_ra(path: &Path, g: u32) {
    rawarray::save(path, &values(g), &[N as u64], &Default::default()).unwrap();
}

fn check_ra_slice(data: &[f64]) -> u32 {
    let g = (data[0] / 1e6) as u32;
    assert!(
        data.iter().eq(values(g).iter()),
        "RawArray generation {g} is torn"
    );
    g
}

fn check_ra(m: &MappedRawArray) -> u32 {
    match m.as_slice::<f64>() {
        Ok(s) => check_ra_slice(s),
        // A map that cannot be viewed as f64 (alignment): decode the little-endian bytes.
        Err(_) => {
            let v: Vec<f64> = m
                .data_bytes()
                .unwrap()
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
                .collect();
            check_ra_slice(&v)
        }
    }
}

fn write_awkd(path: &Path, g: u32) {
    let layout = Layout::Numpy(NumpyArray::from_vec(Buffer::F64(values(g))));
    asdf_awkward::save_awkd(
        path,
        &[("a", &layout)],
        SaveMode::Create,
        &Default::default(),
    )
    .unwrap();
}

fn check_awkd(f: &AwkdFile) -> u32 {
    let json = f.read("a").unwrap().to_json().unwrap();
    let items: Vec<f64> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    check_ra_slice(&items)
}

struct Shared {
    asdf: PathBuf,
    ra: PathBuf,
    awkd: PathBuf,
}

fn write_all(s: &Shared, g: u32) {
    write_asdf(&s.asdf, g);
    write_ra(&s.ra, g);
    write_awkd(&s.awkd, g);
}

#[test]
fn readers_and_writers_of_every_format_at_once() {
    let dir = asdf_testkit::TempDir::new("robust-concurrency");
    let shared = Arc::new(Shared {
        asdf: dir.join("shared.asdf"),
        ra: dir.join("shared.ra"),
        awkd: dir.join("shared.awkd"),
    });
    write_all(&shared, 0);
    let asdf = Arc::new(AsdfFile::open(&shared.asdf).unwrap());
    let ra = Arc::new(MappedRawArray::open(&shared.ra).unwrap());
    let awkd = Arc::new(AwkdFile::open(&shared.awkd).unwrap());
    let readers = 4;
    let replacements = 6;
    let barrier = Arc::new(Barrier::new(readers + 3));
    let mut handles = Vec::new();
    for _ in 0..readers {
        let (asdf, ra, awkd, shared, barrier) = (
            asdf.clone(),
            ra.clone(),
            awkd.clone(),
            shared.clone(),
            barrier.clone(),
        );
        handles.push(std::thread::spawn(move || {
            barrier.wait();
            for _ in 0..4 {
                // The open files keep their version while the paths are replaced.
                assert_eq!(check_asdf(&asdf), 0, "the open ASDF file changed");
                assert_eq!(check_ra(&ra), 0, "the mapped RawArray changed");
                assert_eq!(check_awkd(&awkd), 0, "the open .awkd file changed");
                // Fresh opens see some complete version.
                check_asdf(&AsdfFile::open(&shared.asdf).unwrap());
                check_ra(&MappedRawArray::open(&shared.ra).unwrap());
                check_awkd(&AwkdFile::open(&shared.awkd).unwrap());
            }
        }));
    }
    {
        let (shared, barrier) = (shared.clone(), barrier.clone());
        handles.push(std::thread::spawn(move || {
            barrier.wait();
            for g in 1..=replacements {
                write_all(&shared, g);
            }
        }));
    }
    for w in 0..2u32 {
        let (dir, barrier) = (dir.path().to_path_buf(), barrier.clone());
        handles.push(std::thread::spawn(move || {
            barrier.wait();
            for g in 0..3 {
                let own = Shared {
                    asdf: dir.join(format!("own{w}-{g}.asdf")),
                    ra: dir.join(format!("own{w}-{g}.ra")),
                    awkd: dir.join(format!("own{w}-{g}.awkd")),
                };
                let gen = 100 + w * 10 + g;
                write_all(&own, gen);
                assert_eq!(check_asdf(&AsdfFile::open(&own.asdf).unwrap()), gen);
                assert_eq!(check_ra(&MappedRawArray::open(&own.ra).unwrap()), gen);
                assert_eq!(check_awkd(&AwkdFile::open(&own.awkd).unwrap()), gen);
            }
        }));
    }
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(
        check_asdf(&AsdfFile::open(&shared.asdf).unwrap()),
        replacements
    );
    assert_eq!(
        check_ra(&MappedRawArray::open(&shared.ra).unwrap()),
        replacements
    );
    assert_eq!(
        check_awkd(&AwkdFile::open(&shared.awkd).unwrap()),
        replacements
    );
    // The originals, still open, are still generation 0.
    assert_eq!(check_asdf(&asdf), 0);
    assert_eq!(check_ra(&ra), 0);
}

/// Many threads share one open file of each format and read everything in it at once.
#[test]
fn many_threads_read_one_open_file() {
    let dir = asdf_testkit::TempDir::new("robust-shared-read");
    let shared = Shared {
        asdf: dir.join("s.asdf"),
        ra: dir.join("s.ra"),
        awkd: dir.join("s.awkd"),
    };
    write_all(&shared, 7);
    let asdf = AsdfFile::open(&shared.asdf).unwrap();
    let ra = MappedRawArray::open(&shared.ra).unwrap();
    let awkd = AwkdFile::open(&shared.awkd).unwrap();
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for _ in 0..3 {
                    assert_eq!(check_asdf(&asdf), 7);
                    assert_eq!(check_ra(&ra), 7);
                    assert_eq!(check_awkd(&awkd), 7);
                }
            });
        }
    });
}
