//! How optimize time grows with shader size: generated VS→FS pairs from ~10 to ~100,000
//! instructions (`varysat::internals::gen::synth_pair`), the time curve with per-phase times, the
//! ratio to the smallest size, and the growth exponent k of t ≈ c·n^k fitted by least
//! squares on log-log over n ≥ 100, and the same exponent of t / ln n, which is at most 1
//! exactly when growth is no worse than n·log n.
//!
//! Peak heap: the bench binary's global allocator counts live bytes, and each size
//! reports the highest count reached during one `optimize` call above what was live
//! when it started (the input pair is already built), the absolute peak (only the pair
//! being measured is live: each size is generated when its turn comes), and the peak
//! of what `varysat opt FILE` holds: the pair's `.pair` text, then parsing, optimizing
//! and printing it (above what was live before the text). The counting costs two
//! atomic operations per allocation, in every timed run alike.
//!
//! `cargo bench --bench scaling` (criterion runs a few sizes; the curve follows);
//! `VARYSAT_SCALING_MAX=10000` stops the curve at that size.

mod common;

use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use criterion::{black_box, BenchmarkId, Criterion};
use varysat::internals::gen::synth_pair;
use varysat::{Options, Pipeline, Stage};

/// Requested instruction counts.
const SIZES: &[usize] = &[10, 30, 100, 300, 1000, 3000, 10_000, 30_000, 100_000];

#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::{LIVE, PEAK};

/// Bytes above the live count at the start that one `optimize` of `p` reaches at its
/// peak, the absolute peak (input included), and the run's stop reason.
fn peak_heap(p: &Pipeline, opts: &Options) -> (usize, usize, String) {
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    let out = varysat::optimize(p, opts);
    let peak = PEAK.load(Relaxed);
    let stop = match out {
        Ok(o) => o.report.stop_reason,
        Err(e) => e.to_string(),
    };
    (peak.saturating_sub(base), peak, stop)
}

/// The peak live heap of `varysat opt` on the text of `p`: the text, the parsed pair,
/// the optimization and the printed result, above what was live before the text.
fn opt_peak(p: &Pipeline, opts: &Options) -> usize {
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    let text = varysat::text::print(p);
    if let Ok(parsed) = varysat::text::parse(&text, None) {
        drop(text);
        if let Ok(out) = varysat::optimize(&parsed, opts) {
            black_box(varysat::text::print(&out.pipeline));
        }
    }
    PEAK.load(Relaxed).saturating_sub(base)
}

fn mb(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}
/// Seed of the generated pairs.
const SEED: u64 = 1;

fn size(p: &Pipeline) -> usize {
    p.producer.inst_count() + p.consumer.inst_count()
}

/// Least-squares slope of ln(t / scale(n)) over ln n, for n >= 100: with
/// `scale = 1` the growth exponent, with `scale = ln n` the exponent left after
/// dividing out a log factor (<= 1 means no worse than n·log n).
fn exponent(points: &[(usize, Duration)], scale: fn(f64) -> f64) -> f64 {
    let xy: Vec<(f64, f64)> = points
        .iter()
        .filter(|(n, t)| *n >= 100 && !t.is_zero())
        .map(|(n, t)| {
            let n = *n as f64;
            (n.ln(), (t.as_secs_f64() / scale(n)).ln())
        })
        .collect();
    let k = xy.len() as f64;
    let (sx, sy) = xy.iter().fold((0.0, 0.0), |a, p| (a.0 + p.0, a.1 + p.1));
    let (mx, my) = (sx / k, sy / k);
    let num: f64 = xy.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    let den: f64 = xy.iter().map(|(x, _)| (x - mx) * (x - mx)).sum();
    num / den
}

fn curve(sizes: &[usize], opts: &Options) {
    println!("\nscaling over synth_pair((vs, fs), n, {SEED}), median of the runs at each size");
    println!(
        "{:>8} {:>7} {:>10} {:>8} {:>9} {:>9} {:>9}  {:<14} lower / saturate / extract / emit / pack (ms)",
        "insts", "nodes", "ms", "x first", "heap MB", "peak MB", "opt MB", "stop"
    );
    let mut points = vec![];
    let mut first = None;
    for &requested in sizes {
        let pair = synth_pair((Stage::Vertex, Stage::Fragment), requested, SEED);
        let p = &pair;
        let n = size(p);
        let runs = match n {
            0..=3000 => 15,
            3001..=30_000 => 5,
            _ => 3,
        };
        let s = common::median_run(p, opts, runs);
        let (heap, peak, stop) = peak_heap(p, opts);
        let opt = opt_peak(p, opts);
        let base = *first.get_or_insert(s.time);
        println!(
            "{:>8} {:>7} {:>10.3} {:>8.1} {:>9.1} {:>9.1} {:>9.1}  {:<14} {}",
            n,
            s.nodes,
            common::ms(s.time),
            s.time.as_secs_f64() / base.as_secs_f64().max(1e-12),
            mb(heap),
            mb(peak),
            mb(opt),
            stop,
            common::phases(&s.timings)
        );
        points.push((n, s.time));
    }
    let k = exponent(&points, |_| 1.0);
    let k_log = exponent(&points, f64::ln);
    let largest = points.last().copied().unwrap_or_default();
    println!(
        "growth exponent (n >= 100): {k:.2}; of t / ln n: {k_log:.2} (n log n target: <= 1.00: {})  largest pair {} insts: {:.1} ms (target <= 1 s at 100k: {})",
        if k_log <= 1.0 { "met" } else { "MISSED" },
        largest.0,
        common::ms(largest.1),
        if largest.1 <= Duration::from_secs(1) { "met" } else { "MISSED" }
    );
}

fn main() {
    let max = std::env::var("VARYSAT_SCALING_MAX")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(usize::MAX);
    let sizes: Vec<usize> = SIZES.iter().copied().filter(|n| *n <= max).collect();
    let opts = Options::new();
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    {
        let mut g = c.benchmark_group("scaling");
        let small = sizes.iter().filter(|n| **n <= 1000);
        let pairs: Vec<Pipeline> = small
            .map(|n| synth_pair((Stage::Vertex, Stage::Fragment), *n, SEED))
            .collect();
        for p in pairs.iter().filter(|p| size(p) <= 1000) {
            g.bench_with_input(BenchmarkId::from_parameter(size(p)), p, |b, p| {
                b.iter(|| varysat::optimize(black_box(p), &opts))
            });
        }
        g.finish();
    }
    c.final_summary();
    curve(&sizes, &opts);
}
