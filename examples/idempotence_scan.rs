//! Counts the generated pairs on which optimizing the optimizer's own output finds
//! fewer varying components or slots (the idempotence property of tests/opt_props.rs,
//! without its stop at the first failure), and writes each such pair to a directory
//! for reading. Used to decide where the fixed-point round can be skipped
//! (docs/performance.md).
//!
//! `cargo run --release --example idempotence_scan -- [CASES] [SEED] [vs-fs|tcs-tes|all] [DIR]`
//! (defaults: 4,000 pairs, seed 1, every stage pair, `/tmp/idempotence-scan`).

use varysat::internals::gen::{describe, Scan};
use varysat::{optimize, Options};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let scan = match Scan::from_args(&args, 4_000, "/tmp/idempotence-scan") {
        Ok(scan) => scan,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let mut found = 0;
    for (case, p) in scan.pairs() {
        let opts = Options::new();
        let Ok(once) = optimize(&p, &opts) else {
            continue;
        };
        let Ok(twice) = optimize(&once.pipeline, &opts) else {
            continue;
        };
        let (a, b) = (once.report.after, twice.report.after);
        if (b.components, b.slots) != (a.components, a.slots) {
            found += 1;
            let file = scan.dir.join(format!("s{}_{case}.pair", scan.seed));
            if let Err(e) = std::fs::write(&file, describe(&p)) {
                eprintln!("error: cannot write {}: {e}", file.display());
                std::process::exit(1);
            }
            println!(
                "{}: {} components / {} slots, then {} / {}",
                file.display(),
                a.components,
                a.slots,
                b.components,
                b.slots
            );
        }
    }
    let (cases, seed) = (scan.cases, scan.seed);
    println!("{found} of {cases} pairs change on a second run (seed {seed})");
}
