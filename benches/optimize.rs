//! Optimize time per shipped pair (criterion), then the corpus summary the performance
//! targets are stated in: median and p99 over the pairs of each pair's median time, and
//! where the time goes (lower / saturate / extract / emit / pack).
//!
//! `cargo bench --bench optimize` (criterion filters work: `-- vs_fs`).

mod common;

use std::time::Duration;

use criterion::{black_box, Criterion};
use varysat::{optimize, Options};

/// Runs per pair for the summary.
const SUMMARY_RUNS: usize = 31;

fn summary(pairs: &[(String, varysat::Pipeline)], opts: &Options) {
    let mut rows: Vec<(String, common::Sample)> = pairs
        .iter()
        .map(|(n, p)| (n.clone(), common::median_run(p, opts, SUMMARY_RUNS)))
        .collect();
    rows.sort_by_key(|(_, s)| std::cmp::Reverse(s.time));
    println!("\nshipped pairs, median of {SUMMARY_RUNS} runs each (slowest first)");
    println!(
        "{:<44} {:>9} {:>7}  lower / saturate / extract / emit / pack (ms)",
        "pair", "ms", "nodes"
    );
    for (n, s) in &rows {
        println!(
            "{:<44} {:>9.3} {:>7}  {}",
            n,
            common::ms(s.time),
            s.nodes,
            common::phases(&s.timings)
        );
    }
    let mut times: Vec<Duration> = rows.iter().map(|(_, s)| s.time).collect();
    times.sort();
    let med = common::quantile(&times, 0.5);
    let p99 = common::quantile(&times, 0.99);
    let total: Duration = times.iter().sum();
    let sat: Duration = rows.iter().map(|(_, s)| s.timings.saturate).sum();
    let ext: Duration = rows.iter().map(|(_, s)| s.timings.extract).sum();
    println!(
        "pairs {}  median {:.3} ms (target < 1 ms: {})  p99 {:.3} ms (target < 20 ms: {})  saturation {:.0}% / extraction {:.0}% of the total",
        times.len(),
        common::ms(med),
        if med < Duration::from_millis(1) { "met" } else { "MISSED" },
        common::ms(p99),
        if p99 < Duration::from_millis(20) { "met" } else { "MISSED" },
        100.0 * sat.as_secs_f64() / total.as_secs_f64().max(1e-12),
        100.0 * ext.as_secs_f64() / total.as_secs_f64().max(1e-12),
    );
}

/// Exact against fast extraction on every shipped pair, same process: the ratio of the
/// medians, and whether exact mode found a cheaper result.
fn exact_vs_fast(pairs: &[(String, varysat::Pipeline)]) {
    let fast = Options::new();
    let exact = Options::new().extraction(varysat::internals::extract::Extraction::exact());
    let mut ratios = vec![];
    let mut cheaper = 0;
    for (_, p) in pairs {
        let f = common::median_run(p, &fast, 11);
        let x = common::median_run(p, &exact, 11);
        ratios.push(x.time.as_secs_f64() / f.time.as_secs_f64().max(1e-12));
        let cost = |o: &Options| optimize(p, o).map(|o| o.report.cost_after.0).unwrap_or(0);
        cheaper += usize::from(cost(&exact) < cost(&fast));
    }
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| {
        ratios
            .get(((ratios.len() as f64 * q) as usize).min(ratios.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0.0)
    };
    println!(
        "exact / fast extraction, whole optimize time: median x{:.2}, max x{:.2}; exact cheaper on {} of {} pairs",
        at(0.5),
        ratios.last().copied().unwrap_or(0.0),
        cheaper,
        pairs.len()
    );
}

fn main() {
    let pairs = common::shipped_pairs();
    let opts = Options::new();
    let mut c = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .configure_from_args();
    for (name, p) in &pairs {
        c.bench_function(&format!("optimize/{name}"), |b| {
            b.iter(|| optimize(black_box(p), &opts))
        });
    }
    c.final_summary();
    summary(&pairs, &opts);
    exact_vs_fast(&pairs);
}
