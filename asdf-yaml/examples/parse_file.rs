//! Times each parser engine on the YAML tree of a file (an ASDF file or plain YAML).
//!
//! ```text
//! cargo run --release -p asdf-yaml --example parse_file -- FILE [reference|fast|auto]
//! ```
//! Prints, per engine, the best of three parses in MB/s of tree text, and whether the fast
//! parser read the text itself. Not part of the test suite.

use std::time::Instant;

use asdf_yaml::{parse_document, Engine, ParseOptions};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: parse_file FILE");
        std::process::exit(2);
    };
    let bytes = std::fs::read(&path).expect("read the file");
    let text = std::str::from_utf8(asdf_testkit::asdf_tree_text(&bytes)).expect("a UTF-8 tree");
    let mb = text.len() as f64 / 1e6;
    println!("{path}: tree of {mb:.2} MB");
    // `parse_file FILE fast` times one engine (for profiling).
    let only = std::env::args().nth(2);
    for engine in [Engine::Reference, Engine::Fast, Engine::Auto] {
        if only
            .as_deref()
            .is_some_and(|o| !format!("{engine:?}").eq_ignore_ascii_case(o))
        {
            continue;
        }
        let options = ParseOptions {
            engine,
            ..ParseOptions::default()
        };
        let mut best = f64::INFINITY;
        let mut outcome = String::new();
        for _ in 0..3 {
            let t = Instant::now();
            let doc = parse_document(text, &options);
            best = best.min(t.elapsed().as_secs_f64());
            outcome = match &doc {
                Ok(_) => "ok".to_string(),
                Err(e) => e.to_string(),
            };
            // Dropping the tree is not part of parsing.
            let t = Instant::now();
            drop(doc);
            if t.elapsed().as_secs_f64() > 0.5 {
                eprintln!(
                    "(dropping the tree took {:.2} s)",
                    t.elapsed().as_secs_f64()
                );
            }
        }
        println!(
            "{engine:?}: {best:.3} s = {:.1} MB/s ({outcome})",
            mb / best
        );
    }
}
