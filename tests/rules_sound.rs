//! The semantic rule checker (`varysat::rulecheck`) end to end: every shipped rule
//! file and every experiment variant passes it; `varysat rules check` reports the
//! issue's unsound rules with located counterexamples; `varysat opt --rules` refuses
//! an unsound user rule before using it (so does `varysat experiment --rules`), caches
//! the verdicts of sound ones, and `--trust-rules` skips the check.

mod cli_support;

use std::collections::BTreeSet;

use cli_support::{cache_dir, stderr, temp_file, varysat};
use varysat::rulecheck::{check_rule, rule_key, DEFAULT_CASES};

const PAIR: &str = "examples/pairs/vs_fs_fma.pair";

/// Every rule file shipped in `rules/` and `rules/experiments/`.
fn shipped_files() -> Vec<String> {
    let mut files = vec![];
    for dir in ["rules", "rules/experiments"] {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "rules") {
                files.push(path.display().to_string());
            }
        }
    }
    files.sort();
    files
}

#[test]
fn every_shipped_rule_set_is_sound() {
    let files = shipped_files();
    assert!(files.len() >= 14, "{files:?}");
    // A law shared by several variants is checked once.
    let mut seen = BTreeSet::new();
    let mut bad = vec![];
    for spec in std::iter::once("default".to_string()).chain(files) {
        let (_, set) = varysat::experiment::load_rules(&spec).unwrap();
        for rule in set.rules() {
            if seen.insert(rule_key(rule)) {
                if let Err(why) = check_rule(rule, DEFAULT_CASES) {
                    bad.push(format!("{spec}: {}: {why}", rule.name));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(
        seen.len() > 150,
        "only {} distinct rules checked",
        seen.len()
    );
}

#[test]
fn rules_check_reports_the_issue_examples() {
    let bad = temp_file(
        "rules-sound",
        "bad.rules",
        "; bad\n(rule bad (fadd ?a ?b) ?a)\n",
    );
    let o = varysat(&["rules", "check", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    let want = format!(
        "{}:2:1: error: rule bad is not sound: with ?a=",
        bad.display()
    );
    assert!(err.starts_with(&want), "{err}");
    assert!(
        err.contains("left gives") && err.contains("right gives"),
        "{err}"
    );
    // The issue's second example fails the type check at load (its sides differ in
    // size at 16 bits); at 32 bits only, the semantic check refuses it.
    let z = temp_file("rules-sound", "z.rules", "(rule z (xfer ?m ?a) 0f32)\n");
    let o = varysat(&["rules", "check", z.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("rule `z`"), "{}", stderr(&o));
    let z32 = temp_file(
        "rules-sound",
        "z32.rules",
        "(rule z (xfer ?m (fmul ?a 1f32)) 0f32)\n",
    );
    let o = varysat(&["rules", "check", z32.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("rule z is not sound: with ?m="), "{err}");
    assert!(err.contains("right gives 0f32"), "{err}");
}

#[test]
fn rules_check_passes_the_shipped_files() {
    let o = varysat(&["rules", "check", "rules/interp.rules", "rules/flat.rules"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains("all sound"), "{out}");
    let o = varysat(&["rules", "check", "--cases", "0", "rules/interp.rules"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn opt_refuses_unsound_user_rules_unless_trusted() {
    let bad = temp_file(
        "rules-sound",
        "opt-bad.rules",
        "(rule bad (fadd ?a ?b) ?a)\n",
    );
    let spec = format!("+{}", bad.display());
    let o = varysat(&["opt", "--rules", &spec, PAIR]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    let err = stderr(&o);
    assert!(err.contains("rule bad is not sound"), "{err}");
    let o = varysat(&["opt", "--trust-rules", "--rules", &spec, PAIR]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn experiment_refuses_unsound_user_rules_unless_trusted() {
    let bad = temp_file(
        "rules-sound",
        "exp-bad.rules",
        "(rule exp-bad (fadd ?a ?b) ?a)\n",
    );
    let spec = format!("default,{}", bad.display());
    let o = varysat(&["experiment", "--csv", "--rules", &spec, PAIR]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    let err = stderr(&o);
    assert!(err.contains("rule exp-bad is not sound"), "{err}");
    // The shipped variants and the default set need no check at run time.
    let o = varysat(&["experiment", "--csv", "--rules", "default", PAIR]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = varysat(&[
        "experiment",
        "--csv",
        "--trust-rules",
        "--rules",
        &spec,
        PAIR,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn opt_caches_the_verdicts_of_sound_user_rules() {
    let text = "(rule fmul-two-cached (fmul ?x 2f32) (fadd ?x ?x))\n";
    let good = temp_file("rules-sound", "good.rules", text);
    let spec = format!("+{}", good.display());
    let o = varysat(&["opt", "--rules", &spec, PAIR]);
    assert!(o.status.success(), "{}", stderr(&o));
    let entries = |dir: &std::path::Path| -> Vec<String> {
        std::fs::read_dir(dir)
            .map(|d| {
                d.map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap_or_default())
                    .collect()
            })
            .unwrap_or_default()
    };
    let cached = entries(&cache_dir());
    assert!(
        cached.iter().any(|k| k.contains("fmul-two-cached")),
        "{cached:?}"
    );
    // Shipped rules are never checked at run time, so never cached.
    assert!(
        !cached.iter().any(|k| k.contains("interp-fadd")),
        "{cached:?}"
    );
}
