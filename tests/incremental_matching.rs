//! Incremental e-matching (`egraph::incremental`) against egg's full re-search: without
//! bans both grow the e-graph identically, so every report figure that describes the
//! saturated graph and the optimized text must be the same, on every shipped pair and
//! on generated pairs of every stage pair. With backoff (the default) the two may ban
//! rules at different iterations, since a ban counts the matches one search found; the
//! shipped pairs still give the same text.

use std::path::{Path, PathBuf};

use varysat::internals::gen::synth_pair;
use varysat::ir::Stage;
use varysat::optimize::{Matching, Scheduler};
use varysat::{optimize, text, Options, Pipeline};

fn shipped() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![];
    for dir in ["examples/pairs", "tests/opt"] {
        for e in std::fs::read_dir(root.join(dir)).expect("pair directory") {
            let p = e.expect("directory entry").path();
            if p.extension().is_some_and(|x| x == "pair") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 80, "{} shipped pairs", files.len());
    files
}

/// What a run computed, without its timings.
fn outcome(pair: &Pipeline, scheduler: Scheduler, matching: Matching) -> String {
    let opts = Options::new().scheduler(scheduler).matching(matching);
    match optimize(pair, &opts) {
        Ok(o) => {
            let r = &o.report;
            format!(
                "{}\nnodes {} classes {} iterations {} stop {}\nfirings {:?}\nafter {:?}",
                text::print(&o.pipeline),
                r.egraph_nodes,
                r.egraph_classes,
                r.iterations,
                r.stop_reason,
                r.rule_firings,
                r.after,
            )
        }
        Err(e) => format!("error: {e}"),
    }
}

fn generated() -> Vec<(String, Pipeline)> {
    let mut out = vec![];
    for (p, c) in Stage::pairs() {
        for (size, seed) in [(40, 1), (120, 2), (300, 3)] {
            let name = format!("{p:?}->{c:?} {size} seed {seed}");
            out.push((name, synth_pair((p, c), size, seed)));
        }
    }
    out
}

#[test]
fn without_bans_incremental_and_full_search_saturate_alike() {
    let mut cases: Vec<(String, Pipeline)> = shipped()
        .into_iter()
        .map(|p| {
            (
                p.display().to_string(),
                text::parse_file(&p).expect("shipped pair parses"),
            )
        })
        .collect();
    cases.extend(generated());
    for (name, pair) in &cases {
        let inc = outcome(pair, Scheduler::Simple, Matching::Incremental);
        let full = outcome(pair, Scheduler::Simple, Matching::Full);
        assert_eq!(inc, full, "{name}");
    }
}

#[test]
fn with_backoff_the_shipped_pairs_optimize_alike() {
    for path in shipped() {
        let pair = text::parse_file(&path).expect("shipped pair parses");
        let inc = outcome(&pair, Scheduler::Backoff, Matching::Incremental);
        let full = outcome(&pair, Scheduler::Backoff, Matching::Full);
        let text_of = |s: &str| s.split("\nnodes").next().unwrap_or_default().to_string();
        assert_eq!(text_of(&inc), text_of(&full), "{}", path.display());
    }
}
