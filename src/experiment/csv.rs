//! The CSV form of an experiment: one row per (configuration, pair) run.

use super::summary::Experiment;

/// Quotes a field when it holds a comma, quote or newline.
pub fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The column names, in order (`time_ms` last, only with `timing`).
pub fn header(timing: bool) -> Vec<&'static str> {
    let mut h = vec![
        "configuration",
        "pair",
        "stages",
        "components_before",
        "components_after",
        "slots_before",
        "slots_after",
        "producer_alu_before",
        "producer_alu_after",
        "consumer_alu_before",
        "consumer_alu_after",
        "cost_before",
        "cost_after",
        "egraph_nodes",
        "iterations",
        "stop_reason",
        "failure",
    ];
    if timing {
        h.push("time_ms");
    }
    h
}

/// The runs as CSV with a header line.
pub fn to_csv(e: &Experiment, timing: bool) -> String {
    let mut out = header(timing).join(",") + "\n";
    for r in &e.runs {
        let get = |v: &[String], i: usize| v.get(i).cloned().unwrap_or_default();
        let mut row = vec![
            field(&get(&e.configs, r.config)),
            field(&get(&e.pairs, r.pair)),
            get(&e.stage_pairs, r.pair),
            r.before.components.to_string(),
            r.after.components.to_string(),
            r.before.slots.to_string(),
            r.after.slots.to_string(),
            r.alu_before.producer.to_string(),
            r.alu_after.producer.to_string(),
            r.alu_before.consumer.to_string(),
            r.alu_after.consumer.to_string(),
            r.cost.0.to_string(),
            r.cost.1.to_string(),
            r.nodes.to_string(),
            r.iterations.to_string(),
            field(&r.stop_reason),
            field(r.failure.as_deref().unwrap_or("")),
        ];
        if timing {
            row.push(format!("{:.3}", r.time.as_secs_f64() * 1000.0));
        }
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}
