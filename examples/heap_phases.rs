//! Peak live heap of each step of `varysat opt FILE` (read, parse, validate, optimize,
//! print), counted by a global allocator over the system one, so that the same binary
//! also runs under `valgrind --tool=massif` or `heaptrack` for the allocation sites.
//!
//! `cargo run --release --example heap_phases -- FILE.pair` prints one line per step:
//! the highest live byte count reached during it, and what stayed live after it. The
//! time budget is lifted (an hour), so that a slow run under valgrind still saturates.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The system allocator, counting live bytes and their high-water mark.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Relaxed) + by;
    PEAK.fetch_max(now, Relaxed);
}

// SAFETY: every call is forwarded to `System` unchanged; only counters are updated.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Relaxed);
            grew(new_size);
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

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
