//! Compares incremental e-matching (the default scheduler) with egg's full re-search
//! on `.pair` files: the optimized text must be byte-identical; prints both times.
//!
//! `cargo run --release --example scheduler_compare -- FILES...`; with
//! `VARYSAT_ONLY=full` or `VARYSAT_ONLY=incremental` it runs that mode alone (for
//! counting instructions under valgrind) and prints nothing per pair.

use std::time::Instant;
use varysat::optimize::Matching;
use varysat::{optimize, text, Options};

fn main() {
    let mut differ = 0;
    let (mut t_full, mut t_inc) = (0.0, 0.0);
    for path in std::env::args().skip(1) {
        let src = std::fs::read_to_string(&path).expect("readable");
        let Ok(pair) = text::parse(&src, Some(&path)) else {
            continue;
        };
        let run = |s: Matching| {
            let start = Instant::now();
            let r = optimize(&pair, &Options::new().matching(s));
            let t = start.elapsed().as_secs_f64() * 1e3;
            (
                r.map(|o| text::print(&o.pipeline))
                    .map_err(|e| e.to_string()),
                t,
            )
        };
        match std::env::var("VARYSAT_ONLY").as_deref() {
            Ok("full") => {
                let _ = run(Matching::Full);
                continue;
            }
            Ok("incremental") => {
                let _ = run(Matching::Incremental);
                continue;
            }
            _ => {}
        }
        let (full, tf) = run(Matching::Full);
        let (inc, ti) = run(Matching::Incremental);
        t_full += tf;
        t_inc += ti;
        let same = full == inc;
        if !same {
            differ += 1;
        }
        println!(
            "{path}\t{tf:.2}\t{ti:.2}\t{}",
            if same { "same" } else { "DIFFERENT" }
        );
    }
    println!("total full {t_full:.1} ms, incremental {t_inc:.1} ms, {differ} differ");
}
