//! Shared helpers of the benches: loading the shipped pairs, repeated timing, medians.

// Each bench compiles this module on its own and uses only part of it.
#![allow(dead_code)]

use std::path::Path;
use std::time::{Duration, Instant};

use varysat::optimize::Timings;
use varysat::{optimize, Options, Pipeline};

/// The shipped pairs: `examples/pairs` and `tests/opt`, sorted by path.
pub fn shipped_pairs() -> Vec<(String, Pipeline)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dirs = [root.join("examples/pairs"), root.join("tests/opt")];
    match varysat::experiment::load_corpus(&dirs) {
        Ok(c) => c
            .into_iter()
            .map(|p| {
                let name = Path::new(&p.name)
                    .strip_prefix(root)
                    .map(|r| r.display().to_string())
                    .unwrap_or(p.name);
                (name, p.pipeline)
            })
            .collect(),
        Err(e) => {
            eprintln!("cannot load the shipped pairs: {e}");
            vec![]
        }
    }
}

/// One optimization's wall time, phase times and e-graph size.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sample {
    pub time: Duration,
    pub timings: Timings,
    pub nodes: usize,
}

/// Runs `optimize` `runs` times and returns the run with the median wall time.
pub fn median_run(p: &Pipeline, opts: &Options, runs: usize) -> Sample {
    let mut samples: Vec<Sample> = (0..runs.max(1))
        .map(|_| {
            let t = Instant::now();
            let out = optimize(p, opts);
            let time = t.elapsed();
            match out {
                Ok(o) => Sample {
                    time,
                    timings: o.report.timings,
                    nodes: o.report.egraph_nodes,
                },
                Err(_) => Sample {
                    time,
                    ..Sample::default()
                },
            }
        })
        .collect();
    samples.sort_by_key(|s| s.time);
    samples[samples.len() / 2]
}

/// Nearest-rank quantile of sorted durations.
pub fn quantile(sorted: &[Duration], q: f64) -> Duration {
    varysat::experiment::summary::quantile(sorted, q)
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// "lower / saturate / extract / emit / pack" in milliseconds.
pub fn phases(t: &Timings) -> String {
    format!(
        "{:.3} / {:.3} / {:.3} / {:.3} / {:.3}",
        ms(t.lower),
        ms(t.saturate),
        ms(t.extract),
        ms(t.emit),
        ms(t.pack)
    )
}
