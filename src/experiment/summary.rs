//! Aggregation: per-configuration totals, per-stage-pair totals, time percentiles,
//! rule statistics, and the pairs on which the configurations disagree most.

use std::collections::BTreeMap;
use std::time::Duration;

use super::config::Config;
use super::corpus::CorpusPair;
use super::run::PairRun;

/// Varying totals over a set of pairs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageTotals {
    /// Pairs counted.
    pub pairs: usize,
    /// Varying components before / after.
    pub components: (usize, usize),
    /// vec4 slots before / after.
    pub slots: (usize, usize),
}

impl StageTotals {
    fn add(&mut self, r: &PairRun) {
        self.pairs += 1;
        self.components.0 += r.before.components;
        self.components.1 += r.after.components;
        self.slots.0 += r.before.slots;
        self.slots.1 += r.after.slots;
    }
}

/// Everything reported for one configuration.
#[derive(Clone, Debug, Default)]
pub struct ConfigSummary {
    /// `RULES/PROFILE`.
    pub label: String,
    /// Rule-set name.
    pub rules: String,
    /// Cost-profile name.
    pub profile: String,
    /// Totals over the whole corpus.
    pub totals: StageTotals,
    /// Totals per `producer-consumer` stage pair.
    pub per_stage_pair: BTreeMap<String, StageTotals>,
    /// Pairs whose output has fewer varying components or fewer slots.
    pub optimized: usize,
    /// Pairs whose run failed or fell back to the input.
    pub failed: usize,
    /// ALU instructions before / after, producer side.
    pub producer_alu: (usize, usize),
    /// ALU instructions before / after, consumer side.
    pub consumer_alu: (usize, usize),
    /// Sum over pairs of the producer's ALU growth (work moved into the producer).
    pub alu_to_producer: usize,
    /// Sum over pairs of the consumer's ALU growth (work moved into the consumer).
    pub alu_to_consumer: usize,
    /// Model cost before / after.
    pub cost: (u64, u64),
    /// E-nodes after saturation: sum and maximum.
    pub nodes: (usize, usize),
    /// Pairs per saturation stop reason.
    pub stop_reasons: BTreeMap<String, usize>,
    /// Optimize time: median, 90th percentile, maximum.
    pub time: [Duration; 3],
    /// Successful applications per rule, summed over pairs.
    pub firings: BTreeMap<String, usize>,
    /// Pairs on which each rule fired.
    pub fired_on: BTreeMap<String, usize>,
    /// With ablation: pairs whose output changes without each rule.
    pub changed_result: Option<BTreeMap<String, usize>>,
    /// With the exact comparison: (fast cost − exact cost summed over the pairs, pairs
    /// where exact is cheaper, pairs proved optimal, pairs compared).
    pub exact_gap: Option<(i64, usize, usize, usize)>,
}

/// One pair's varying components after each configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairSpread {
    /// The pair's name.
    pub pair: String,
    /// Components after, per configuration (in configuration order).
    pub components: Vec<usize>,
    /// Largest minus smallest.
    pub spread: usize,
}

/// A whole experiment: configurations, pairs, every run and the summaries.
#[derive(Clone, Debug)]
pub struct Experiment {
    /// Configuration labels, in order.
    pub configs: Vec<String>,
    /// Pair names, sorted.
    pub pairs: Vec<String>,
    /// The `producer-consumer` stage pair of each pair.
    pub stage_pairs: Vec<String>,
    /// Every run, ordered by (configuration, pair).
    pub runs: Vec<PairRun>,
    /// One summary per configuration.
    pub summaries: Vec<ConfigSummary>,
    /// Pairs on which the configurations differ, largest spread first (then by name).
    pub spreads: Vec<PairSpread>,
}

/// The `q`-quantile (nearest rank) of sorted durations.
pub fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted
        .get(rank.clamp(1, sorted.len()) - 1)
        .copied()
        .unwrap_or_default()
}

fn summarize_config(c: &Config, runs: &[&PairRun], stage_pairs: &[String]) -> ConfigSummary {
    let mut s = ConfigSummary {
        label: c.label(),
        rules: c.rules_name.clone(),
        profile: c.cost.name.clone(),
        ..ConfigSummary::default()
    };
    let mut times = vec![];
    let mut changed: Option<BTreeMap<String, usize>> = None;
    for r in runs {
        s.totals.add(r);
        let sp = stage_pairs.get(r.pair).cloned().unwrap_or_default();
        s.per_stage_pair.entry(sp).or_default().add(r);
        s.optimized +=
            usize::from(r.after.components < r.before.components || r.after.slots < r.before.slots);
        s.failed += usize::from(r.failure.is_some());
        s.producer_alu.0 += r.alu_before.producer;
        s.producer_alu.1 += r.alu_after.producer;
        s.consumer_alu.0 += r.alu_before.consumer;
        s.consumer_alu.1 += r.alu_after.consumer;
        s.alu_to_producer += r.alu_after.producer.saturating_sub(r.alu_before.producer);
        s.alu_to_consumer += r.alu_after.consumer.saturating_sub(r.alu_before.consumer);
        s.cost.0 += r.cost.0;
        s.cost.1 += r.cost.1;
        s.nodes.0 += r.nodes;
        s.nodes.1 = s.nodes.1.max(r.nodes);
        *s.stop_reasons.entry(r.stop_reason.clone()).or_insert(0) += 1;
        times.push(r.time);
        for (rule, n) in &r.firings {
            *s.firings.entry(rule.clone()).or_insert(0) += n;
            *s.fired_on.entry(rule.clone()).or_insert(0) += 1;
        }
        if let Some(x) = &r.exact {
            let g = s.exact_gap.get_or_insert((0, 0, 0, 0));
            g.0 += r.cost.1 as i64 - x.cost as i64;
            g.1 += usize::from(x.cost < r.cost.1);
            g.2 += usize::from(x.proved_optimal);
            g.3 += 1;
        }
        if let Some(by) = &r.changed_by {
            let m = changed.get_or_insert_with(BTreeMap::new);
            for rule in by {
                *m.entry(rule.clone()).or_insert(0) += 1;
            }
        }
    }
    times.sort();
    s.time = [
        quantile(&times, 0.5),
        quantile(&times, 0.9),
        times.last().copied().unwrap_or_default(),
    ];
    s.changed_result = changed;
    s
}

fn spreads(configs: usize, pairs: &[String], runs: &[PairRun]) -> Vec<PairSpread> {
    let mut table: Vec<Vec<usize>> = vec![vec![0; configs]; pairs.len()];
    for r in runs {
        if let Some(cell) = table.get_mut(r.pair).and_then(|row| row.get_mut(r.config)) {
            *cell = r.after.components;
        }
    }
    let mut out: Vec<PairSpread> = pairs
        .iter()
        .zip(table)
        .map(|(name, components)| {
            let max = components.iter().max().copied().unwrap_or(0);
            let min = components.iter().min().copied().unwrap_or(0);
            PairSpread {
                pair: name.clone(),
                components,
                spread: max - min,
            }
        })
        .filter(|s| s.spread > 0)
        .collect();
    out.sort_by(|a, b| b.spread.cmp(&a.spread).then_with(|| a.pair.cmp(&b.pair)));
    out
}

/// Aggregates the runs of [`super::run_matrix`].
pub fn summarize(configs: &[Config], corpus: &[CorpusPair], mut runs: Vec<PairRun>) -> Experiment {
    runs.sort_by_key(|r| (r.config, r.pair));
    let stage_pairs: Vec<String> = corpus.iter().map(CorpusPair::stage_pair).collect();
    let summaries = configs
        .iter()
        .enumerate()
        .map(|(ci, c)| {
            let mine: Vec<&PairRun> = runs.iter().filter(|r| r.config == ci).collect();
            summarize_config(c, &mine, &stage_pairs)
        })
        .collect();
    let pairs: Vec<String> = corpus.iter().map(|p| p.name.clone()).collect();
    Experiment {
        configs: configs.iter().map(Config::label).collect(),
        spreads: spreads(configs.len(), &pairs, &runs),
        pairs,
        stage_pairs,
        runs,
        summaries,
    }
}
