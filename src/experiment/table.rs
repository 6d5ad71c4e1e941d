//! The readable report: aligned text tables for the configurations, the stage pairs,
//! the rules and the pairs where configurations differ most.

use std::collections::BTreeSet;
use std::fmt::Write;
use std::time::Duration;

use super::summary::Experiment;

/// How many differing pairs the table lists.
pub const SPREAD_ROWS: usize = 10;

/// Lays out rows under headers: first column left-aligned, the rest right-aligned.
pub fn render(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            let pad = w.saturating_sub(cell.chars().count());
            if i == 0 {
                s.push_str(cell);
                s.push_str(&" ".repeat(pad));
            } else {
                s.push_str("  ");
                s.push_str(&" ".repeat(pad));
                s.push_str(cell);
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(headers.to_vec());
    for row in rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    out
}

fn arrow<T: std::fmt::Display>(p: (T, T)) -> String {
    format!("{} -> {}", p.0, p.1)
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}

fn configs(e: &Experiment) -> String {
    let rows: Vec<Vec<String>> = e
        .summaries
        .iter()
        .map(|s| {
            let stops: Vec<String> = s
                .stop_reasons
                .iter()
                .map(|(k, n)| format!("{k}:{n}"))
                .collect();
            vec![
                s.label.clone(),
                format!("{}/{}", s.optimized, s.totals.pairs),
                s.failed.to_string(),
                arrow(s.totals.components),
                arrow(s.totals.slots),
                format!("{} / {}", s.alu_to_producer, s.alu_to_consumer),
                arrow(s.cost),
                format!("{} / {}", s.nodes.0, s.nodes.1),
                stops.join(" "),
                format!("{} / {} / {}", ms(s.time[0]), ms(s.time[1]), ms(s.time[2])),
            ]
        })
        .collect();
    render(
        &[
            "configuration",
            "optimized",
            "failed",
            "components",
            "slots",
            "alu +P / +C",
            "cost",
            "nodes sum / max",
            "stop",
            "ms med / p90 / max",
        ],
        &rows,
    )
}

fn stage_pairs(e: &Experiment) -> String {
    let mut rows = vec![];
    for s in &e.summaries {
        for (sp, t) in &s.per_stage_pair {
            rows.push(vec![
                s.label.clone(),
                sp.clone(),
                t.pairs.to_string(),
                arrow(t.components),
                arrow(t.slots),
            ]);
        }
    }
    render(
        &["configuration", "stages", "pairs", "components", "slots"],
        &rows,
    )
}

/// Per rule and configuration: `applications (pairs)`, and with ablation `!k` for the
/// pairs whose output changes without the rule.
fn rules(e: &Experiment) -> String {
    let names: BTreeSet<&String> = e.summaries.iter().flat_map(|s| s.firings.keys()).collect();
    let rows: Vec<Vec<String>> = names
        .into_iter()
        .map(|rule| {
            let mut row = vec![rule.clone()];
            for s in &e.summaries {
                let fired = s.firings.get(rule).copied().unwrap_or(0);
                let on = s.fired_on.get(rule).copied().unwrap_or(0);
                let mut cell = format!("{fired} ({on})");
                if let Some(ch) = &s.changed_result {
                    let _ = write!(cell, " !{}", ch.get(rule).copied().unwrap_or(0));
                }
                row.push(cell);
            }
            row
        })
        .collect();
    let mut headers = vec!["rule"];
    headers.extend(e.configs.iter().map(String::as_str));
    render(&headers, &rows)
}

fn spreads(e: &Experiment) -> String {
    let rows: Vec<Vec<String>> = e
        .spreads
        .iter()
        .take(SPREAD_ROWS)
        .map(|s| {
            let mut row = vec![s.pair.clone(), s.spread.to_string()];
            row.extend(s.components.iter().map(usize::to_string));
            row
        })
        .collect();
    let mut headers = vec!["pair", "spread"];
    headers.extend(e.configs.iter().map(String::as_str));
    render(&headers, &rows)
}

/// The whole readable report.
pub fn table(e: &Experiment) -> String {
    let ablated = e.summaries.iter().any(|s| s.changed_result.is_some());
    let mut out = format!(
        "{} pairs x {} configurations\n\n",
        e.pairs.len(),
        e.configs.len()
    );
    out.push_str(&configs(e));
    let gaps: Vec<Vec<String>> = e
        .summaries
        .iter()
        .filter_map(|s| {
            let (gap, better, proved, n) = s.exact_gap?;
            Some(vec![
                s.label.clone(),
                gap.to_string(),
                format!("{better}/{n}"),
                format!("{proved}/{n}"),
            ])
        })
        .collect();
    if !gaps.is_empty() {
        out.push_str(
            "
extraction gap to the exact mode
",
        );
        out.push_str(&render(
            &[
                "configuration",
                "cost gap",
                "exact cheaper",
                "proved optimal",
            ],
            &gaps,
        ));
    }
    out.push_str("\nper stage pair\n");
    out.push_str(&stage_pairs(e));
    out.push_str(if ablated {
        "\nrule applications (pairs fired on) !pairs whose output changes without the rule\n"
    } else {
        "\nrule applications (pairs fired on)\n"
    });
    out.push_str(&rules(e));
    if e.spreads.is_empty() {
        out.push_str("\nno pair differs between configurations\n");
    } else {
        out.push_str("\npairs where configurations differ most (components after)\n");
        out.push_str(&spreads(e));
    }
    out
}
