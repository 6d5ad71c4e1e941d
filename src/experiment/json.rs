//! The JSON form of an experiment: summaries, every run, and the differing pairs.
//! Times appear only when asked for, so the rest is byte-for-byte reproducible.

use serde_json::{json, Value};

use super::run::PairRun;
use super::summary::{ConfigSummary, Experiment, StageTotals};

fn totals(t: &StageTotals) -> Value {
    json!({
        "pairs": t.pairs,
        "components": { "before": t.components.0, "after": t.components.1 },
        "slots": { "before": t.slots.0, "after": t.slots.1 },
    })
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn summary(s: &ConfigSummary, timing: bool) -> Value {
    let per_stage: serde_json::Map<String, Value> = s
        .per_stage_pair
        .iter()
        .map(|(k, t)| (k.clone(), totals(t)))
        .collect();
    let mut v = json!({
        "configuration": s.label,
        "rules": s.rules,
        "profile": s.profile,
        "totals": totals(&s.totals),
        "per_stage_pair": per_stage,
        "optimized": s.optimized,
        "failed": s.failed,
        "alu": {
            "producer": { "before": s.producer_alu.0, "after": s.producer_alu.1 },
            "consumer": { "before": s.consumer_alu.0, "after": s.consumer_alu.1 },
            "to_producer": s.alu_to_producer,
            "to_consumer": s.alu_to_consumer,
        },
        "cost": { "before": s.cost.0, "after": s.cost.1 },
        "egraph_nodes": { "sum": s.nodes.0, "max": s.nodes.1 },
        "stop_reasons": s.stop_reasons,
        "rule_applications": s.firings,
        "rule_pairs": s.fired_on,
        "rule_changed_result": s.changed_result,
        "exact_gap": s.exact_gap.map(|(gap, better, proved, n)| json!({
            "cost_gap": gap, "pairs_exact_cheaper": better, "pairs_proved_optimal": proved, "pairs": n,
        })),
    });
    if timing {
        v["time_ms"] = json!({
            "median": ms(s.time[0]), "p90": ms(s.time[1]), "max": ms(s.time[2]),
        });
    }
    v
}

fn run(e: &Experiment, r: &PairRun, timing: bool) -> Value {
    let mut v = json!({
        "configuration": e.configs.get(r.config),
        "pair": e.pairs.get(r.pair),
        "components": { "before": r.before.components, "after": r.after.components },
        "slots": { "before": r.before.slots, "after": r.after.slots },
        "alu": {
            "producer": { "before": r.alu_before.producer, "after": r.alu_after.producer },
            "consumer": { "before": r.alu_before.consumer, "after": r.alu_after.consumer },
        },
        "cost": { "before": r.cost.0, "after": r.cost.1 },
        "egraph_nodes": r.nodes,
        "iterations": r.iterations,
        "stop_reason": r.stop_reason,
        "rule_applications": r.firings,
        "changed_by": r.changed_by,
        "failure": r.failure,
        "exact": r.exact.map(|x| json!({ "cost": x.cost, "proved_optimal": x.proved_optimal })),
    });
    if timing {
        v["time_ms"] = json!(ms(r.time));
    }
    v
}

/// The experiment as one JSON object; `timing` adds the time fields.
pub fn to_json(e: &Experiment, timing: bool) -> Value {
    let spreads: Vec<Value> = e
        .spreads
        .iter()
        .map(|s| json!({ "pair": s.pair, "spread": s.spread, "components": s.components }))
        .collect();
    json!({
        "configurations": e.summaries.iter().map(|s| summary(s, timing)).collect::<Vec<_>>(),
        "runs": e.runs.iter().map(|r| run(e, r, timing)).collect::<Vec<_>>(),
        "differing_pairs": spreads,
    })
}
