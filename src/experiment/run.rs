//! Per-pair runs: one optimization per (configuration, pair), in parallel with rayon,
//! plus the optional ablation that finds which fired rules changed the final result.

use std::collections::BTreeMap;
use std::time::Duration;

use rayon::prelude::*;

use super::config::Config;
use super::corpus::CorpusPair;
use crate::egraph::{Budgets, RuleSet};
use crate::extract::Extraction;
use crate::ir::{InstKind, Pipeline};
use crate::optimize::{optimize, Counts, Options, Timings};

/// ALU instructions in each stage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AluCounts {
    /// In the producer.
    pub producer: usize,
    /// In the consumer.
    pub consumer: usize,
}

impl AluCounts {
    /// Counts the ALU instructions of both stages (all blocks).
    pub fn of(p: &Pipeline) -> AluCounts {
        let count = |s: &crate::ir::Shader| {
            let mut n = 0;
            s.for_each_inst(|i| n += usize::from(matches!(i.kind, InstKind::Alu { .. })));
            n
        };
        AluCounts {
            producer: count(&p.producer),
            consumer: count(&p.consumer),
        }
    }
}

/// How an experiment runs.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    /// Re-run each pair without each rule that fired, to find the rules whose absence
    /// changes the optimized pair (one extra optimization per fired rule).
    pub ablate: bool,
    /// Also extract in exact mode with this time limit, to measure the fast mode's gap
    /// to the optimum (one extra optimization per run).
    pub exact_gap: Option<Duration>,
    /// The whole-run budgets of every optimization.
    pub budgets: Budgets,
}

/// The exact-mode comparison of one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExactGap {
    /// Model cost of the exact mode's output.
    pub cost: u64,
    /// Whether the exact search completed within its limit.
    pub proved_optimal: bool,
}

/// The result of one configuration on one pair.
#[derive(Clone, Debug)]
pub struct PairRun {
    /// Index into the configurations.
    pub config: usize,
    /// Index into the corpus.
    pub pair: usize,
    /// Varyings of the input.
    pub before: Counts,
    /// Varyings of the output (equal to `before` when the run failed).
    pub after: Counts,
    /// ALU instructions of the input.
    pub alu_before: AluCounts,
    /// ALU instructions of the output.
    pub alu_after: AluCounts,
    /// Model cost of the input and of the output.
    pub cost: (u64, u64),
    /// E-nodes after saturation.
    pub nodes: usize,
    /// Saturation iterations.
    pub iterations: usize,
    /// Why saturation stopped (`error` when the run failed).
    pub stop_reason: String,
    /// Wall time of the optimization.
    pub time: Duration,
    /// Wall time per phase.
    pub timings: Timings,
    /// Successful applications per rule (rewrite variants folded into their rule).
    pub firings: BTreeMap<String, usize>,
    /// With ablation: the fired rules without which the output differs, sorted.
    pub changed_by: Option<Vec<String>>,
    /// The optimizer's error or emission fallback, if any.
    pub failure: Option<String>,
    /// With `exact_gap`: the exact mode's result.
    pub exact: Option<ExactGap>,
}

/// The rule a rewrite came from: `NAME.rev`, `NAME.exact` and `NAME.exact.rev` are
/// variants of `NAME`.
pub fn rule_of(rewrite: &str) -> &str {
    let base = rewrite.strip_suffix(".rev").unwrap_or(rewrite);
    base.strip_suffix(".exact").unwrap_or(base)
}

fn fold_firings(applied: &BTreeMap<String, usize>) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for (name, n) in applied {
        *out.entry(rule_of(name).to_string()).or_insert(0) += n;
    }
    out
}

fn options(c: &Config, rules: RuleSet, budgets: Budgets) -> Options {
    Options::new()
        .rules(rules)
        .cost(c.cost.clone())
        .budgets(budgets)
}

/// The fired rules whose removal changes the printed output.
fn ablate(
    c: &Config,
    p: &Pipeline,
    output: &str,
    fired: &BTreeMap<String, usize>,
    budgets: Budgets,
) -> Vec<String> {
    fired
        .keys()
        .filter(|rule| {
            let kept = c.rules.rules().iter().filter(|r| &r.name != *rule);
            let Ok(rules) = RuleSet::from_rules(kept.cloned().collect()) else {
                // A subset of a valid set cannot gain duplicate names.
                return false;
            };
            match optimize(p, &options(c, rules, budgets)) {
                Ok(o) => crate::text::print(&o.pipeline) != output,
                // Failing without the rule is a change too.
                Err(_) => true,
            }
        })
        .cloned()
        .collect()
}

/// Runs one configuration on one pair. Optimizer errors are recorded, not returned,
/// so one bad pair does not hide the rest of the corpus.
pub fn run_one(c: &Config, ci: usize, pair: &CorpusPair, pi: usize, ro: RunOptions) -> PairRun {
    let p = &pair.pipeline;
    let before = crate::optimize::count_varyings(p);
    let alu_before = AluCounts::of(p);
    let mut run = PairRun {
        config: ci,
        pair: pi,
        before,
        after: before,
        alu_before,
        alu_after: alu_before,
        cost: (0, 0),
        nodes: 0,
        iterations: 0,
        stop_reason: "error".into(),
        time: Duration::ZERO,
        timings: Timings::default(),
        firings: BTreeMap::new(),
        changed_by: None,
        failure: None,
        exact: None,
    };
    let out = match optimize(p, &options(c, c.rules.clone(), ro.budgets)) {
        Ok(o) => o,
        Err(e) => {
            run.failure = Some(e.to_string());
            return run;
        }
    };
    let r = &out.report;
    run.after = r.after;
    run.alu_after = AluCounts::of(&out.pipeline);
    run.cost = (r.cost_before.0, r.cost_after.0);
    run.nodes = r.egraph_nodes;
    run.iterations = r.iterations;
    run.stop_reason = r.stop_reason.clone();
    run.time = r.time;
    run.timings = r.timings;
    run.firings = fold_firings(&r.rule_firings);
    run.failure = r.fallback.clone();
    if let Some(limit) = ro.exact_gap {
        let opts = options(c, c.rules.clone(), ro.budgets)
            .extraction(Extraction::Exact { time_limit: limit });
        run.exact = optimize(p, &opts).ok().map(|o| ExactGap {
            cost: o.report.cost_after.0,
            proved_optimal: o.report.proved_optimal == Some(true),
        });
    }
    if ro.ablate {
        let text = crate::text::print(&out.pipeline);
        run.changed_by = Some(ablate(c, p, &text, &run.firings, ro.budgets));
    }
    run
}

/// Runs every configuration on every pair in parallel; `progress` is called once per
/// finished run (from worker threads). Results are ordered by (configuration, pair).
pub fn run_matrix(
    configs: &[Config],
    corpus: &[CorpusPair],
    ro: RunOptions,
    progress: &(dyn Fn() + Sync),
) -> Vec<PairRun> {
    let jobs: Vec<(usize, usize)> = (0..configs.len())
        .flat_map(|c| (0..corpus.len()).map(move |p| (c, p)))
        .collect();
    jobs.par_iter()
        .filter_map(|&(ci, pi)| {
            let r = run_one(configs.get(ci)?, ci, corpus.get(pi)?, pi, ro);
            progress();
            Some(r)
        })
        .collect()
}
