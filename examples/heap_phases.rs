//! Peak live heap of each step of `varysat opt FILE` (read, parse, validate, optimize,
//! print), counted by a global allocator over the system one, so that the same binary
//! also runs under `valgrind --tool=massif` or `heaptrack` for the allocation sites.
//!
//! `cargo run --release --example heap_phases -- FILE.pair` prints one line per step:
//! the highest live byte count reached during it, and what stayed live after it. The
//! time budget is lifted (an hour), so that a slow run under valgrind still saturates.

use std::sync::atomic::Ordering::Relaxed;

#[path = "../benches/common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::{LIVE, PEAK};

fn mb(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Runs `step`, printing its peak and what is live after it.
fn step<T>(name: &str, f: impl FnOnce() -> T) -> T {
    PEAK.store(LIVE.load(Relaxed), Relaxed);
    let out = f();
    println!(
        "{name:<10} peak {:>8.1} MB   live after {:>8.1} MB",
        mb(PEAK.load(Relaxed)),
        mb(LIVE.load(Relaxed))
    );
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: heap_phases FILE.pair")?;
    let text = step("read", || std::fs::read_to_string(&path))?;
    let pipeline = step("parse", || varysat::text::parse(&text, Some(&path)))?;
    step("validate", || varysat::validate::validate(&pipeline))?;
    // No time limit: under valgrind the run is 20-50x slower, and a budget-stopped
    // run is not the saturated one being measured.
    let mut opts = varysat::Options::new();
    opts.budgets.time = std::time::Duration::from_secs(3600);
    let outcome = step("optimize", || varysat::optimize(&pipeline, &opts))?;
    let printed = step("print", || varysat::text::print(&outcome.pipeline));
    println!(
        "{} bytes out, stop: {}",
        printed.len(),
        outcome.report.stop_reason
    );
    Ok(())
}
