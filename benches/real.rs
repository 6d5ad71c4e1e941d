//! Optimize time on real shader pairs: every `.pair` file of the real corpus that
//! `scripts/real_corpus.sh` imports (tests/corpus/glsl, and Debian's glmark2-data and
//! piglit), read from `$VARYSAT_REAL_CORPUS` or `target/real-corpus`. Reports the
//! median / p90 / p99 / max of each pair's median `optimize` time and, measured in the
//! same process on the same pair, the ratio to parsing + validating its text (a linear
//! pass over the input), then the slowest pairs with their phase split.
//!
//! `cargo bench --bench real` (skips with a message when the corpus is not imported);
//! `VARYSAT_REAL_RUNS` sets the runs per pair (default 5). The allocator is mimalloc, as
//! in the `varysat` CLI (Cargo.toml says why); a compiler embedding the library brings its
//! own.

mod common;

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{black_box, Criterion};
use varysat::optimize::Matching;
use varysat::{Options, Pipeline};

/// Targets of issue #12 (release build, one core).
const TARGET_MEDIAN: Duration = Duration::from_millis(1);
const TARGET_P99: Duration = Duration::from_millis(10);
const TARGET_MAX: Duration = Duration::from_millis(50);
const TARGET_RATIO: f64 = 20.0;
/// Slowest pairs listed, and benched with criterion.
const SHOWN: usize = 10;
const CRITERION_PAIRS: usize = 3;

/// One corpus pair: its name, text and parsed pipeline.
struct RealPair {
    name: String,
    text: String,
    pipeline: Pipeline,
}

/// One pair's measurements.
struct Row {
    name: String,
    sample: common::Sample,
    parse: Duration,
    insts: usize,
    stop: String,
}

fn corpus_dir() -> PathBuf {
    match std::env::var_os("VARYSAT_REAL_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/real-corpus"),
    }
}

/// Every `.pair` file of `dir` that parses and validates, sorted by name.
fn load(dir: &Path) -> Vec<RealPair> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pair"))
        .collect();
    files.sort();
    files
        .into_iter()
        .filter_map(|f| {
            let text = std::fs::read_to_string(&f).ok()?;
            let name = f.file_name()?.to_string_lossy().into_owned();
            match parse_validate(&text, &name) {
                Ok(pipeline) => Some(RealPair {
                    name,
                    text,
                    pipeline,
                }),
                Err(e) => {
                    eprintln!("skipped: {e}");
                    None
                }
            }
        })
        .collect()
}

fn parse_validate(text: &str, name: &str) -> Result<Pipeline, varysat::Error> {
    let p = varysat::text::parse(text, Some(name))?;
    varysat::validate::validate(&p)?;
    Ok(p)
}

/// Median wall time of `runs` parse + validate passes over the pair's text.
fn parse_time(pair: &RealPair, runs: usize) -> Duration {
    let mut times: Vec<Duration> = (0..runs.max(1))
        .map(|_| {
            let t = Instant::now();
            let p = parse_validate(black_box(&pair.text), &pair.name);
            let d = t.elapsed();
            black_box(p.is_ok());
            d
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn measure(pairs: &[RealPair], opts: &Options, runs: usize) -> Vec<Row> {
    pairs
        .iter()
        .map(|pair| {
            let p = &pair.pipeline;
            let stop = varysat::optimize(p, opts)
                .map(|o| o.report.stop_reason)
                .unwrap_or_else(|e| format!("error: {e}"));
            Row {
                name: pair.name.clone(),
                sample: common::median_run(p, opts, runs),
                parse: parse_time(pair, runs.max(5)),
                insts: p.producer.inst_count() + p.consumer.inst_count(),
                stop,
            }
        })
        .collect()
}

fn ratio(r: &Row) -> f64 {
    r.sample.time.as_secs_f64() / r.parse.as_secs_f64().max(1e-9)
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "MISSED"
    }
}

fn report(rows: &mut [Row], runs: usize) {
    rows.sort_by_key(|r| std::cmp::Reverse(r.sample.time));
    println!("\nreal pairs, median of {runs} runs each (slowest first, {SHOWN} shown)");
    println!(
        "{:<36} {:>6} {:>9} {:>7} {:>7}  {:<16} lower / saturate / extract / emit / pack (ms)",
        "pair", "insts", "ms", "x parse", "nodes", "stop"
    );
    for r in rows.iter().take(SHOWN) {
        println!(
            "{:<36} {:>6} {:>9.3} {:>7.1} {:>7}  {:<16} {}",
            r.name,
            r.insts,
            common::ms(r.sample.time),
            ratio(r),
            r.sample.nodes,
            r.stop,
            common::phases(&r.sample.timings)
        );
    }
    let mut times: Vec<Duration> = rows.iter().map(|r| r.sample.time).collect();
    times.sort();
    let q = |x| common::quantile(&times, x);
    let (med, p90, p99, max) = (q(0.5), q(0.9), q(0.99), q(1.0));
    let mut ratios: Vec<f64> = rows.iter().map(ratio).collect();
    ratios.sort_by(f64::total_cmp);
    let worst = rows.iter().max_by(|a, b| ratio(a).total_cmp(&ratio(b)));
    let over = ratios.iter().filter(|r| **r > TARGET_RATIO).count();
    let stopped = rows.iter().filter(|r| r.stop != "saturated").count();
    println!(
        "pairs {}  median {:.3} ms ({})  p90 {:.3} ms  p99 {:.3} ms ({})  max {:.3} ms ({})",
        rows.len(),
        common::ms(med),
        verdict(med <= TARGET_MEDIAN),
        common::ms(p90),
        common::ms(p99),
        verdict(p99 <= TARGET_P99),
        common::ms(max),
        verdict(max <= TARGET_MAX),
    );
    println!(
        "optimize / (parse + validate): median {:.1}x, max {:.1}x ({}), pairs over {TARGET_RATIO}x: {over} ({}); not saturated: {stopped}",
        ratios[ratios.len() / 2],
        ratios.last().copied().unwrap_or(0.0),
        worst.map_or("", |r| r.name.as_str()),
        verdict(over == 0),
    );
    let mut by_ratio: Vec<&Row> = rows.iter().filter(|r| ratio(r) > TARGET_RATIO).collect();
    by_ratio.sort_by(|a, b| ratio(b).total_cmp(&ratio(a)));
    // Every pair over the target is listed: they are what the target asks about.
    for r in by_ratio {
        println!(
            "  over {TARGET_RATIO}x: {:<36} {:>6.1}x  {:>7.3} ms  {:>5} insts  {:>5} nodes",
            r.name,
            ratio(r),
            common::ms(r.sample.time),
            r.insts,
            r.sample.nodes
        );
    }
}

/// Incremental against full e-matching, pair by pair (both measured in this run).
fn report_baseline(rows: &[Row], full: &[Row]) {
    let sum = |rs: &[Row]| rs.iter().map(|r| r.sample.time).sum::<Duration>();
    let mut ratios: Vec<f64> = rows
        .iter()
        .zip(full)
        .map(|(i, f)| f.sample.time.as_secs_f64() / i.sample.time.as_secs_f64().max(1e-9))
        .collect();
    ratios.sort_by(f64::total_cmp);
    println!(
        "full / incremental e-matching, same run: summed {:.1} / {:.1} ms ({:.2}x); per pair median {:.2}x, max {:.2}x",
        common::ms(sum(full)),
        common::ms(sum(rows)),
        sum(full).as_secs_f64() / sum(rows).as_secs_f64().max(1e-9),
        ratios[ratios.len() / 2],
        ratios.last().copied().unwrap_or(0.0),
    );
}

fn main() {
    let dir = corpus_dir();
    let pairs = load(&dir);
    if pairs.is_empty() {
        println!(
            "real corpus not found in {} (import it with scripts/real_corpus.sh, or set VARYSAT_REAL_CORPUS): skipped",
            dir.display()
        );
        return;
    }
    let runs = std::env::var("VARYSAT_REAL_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let opts = Options::new();
    let mut rows = measure(&pairs, &opts, runs);
    // The same pairs under egg's full re-search, the baseline of incremental matching.
    let full = measure(&pairs, &opts.clone().matching(Matching::Full), runs);
    report_baseline(&rows, &full);
    report(&mut rows, runs);
    let mut c = Criterion::default().configure_from_args();
    for r in rows.iter().take(CRITERION_PAIRS) {
        let Some(pair) = pairs.iter().find(|p| p.name == r.name) else {
            continue;
        };
        c.bench_function(&format!("real/{}", pair.name), |b| {
            b.iter(|| varysat::optimize(black_box(&pair.pipeline), &opts))
        });
    }
    c.final_summary();
}
