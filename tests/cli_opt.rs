//! End-to-end tests of `varysat opt`: the optimized pair, the JSON report, and located
//! errors for bad rule files and cost profiles.

mod cli_support;

use cli_support::{stderr, varysat};

fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
    cli_support::temp_file("opt", name, text)
}

const EXAMPLE: &str = "examples/pairs/vs_fs_dead_const_dup.pair";

#[test]
fn opt_writes_a_valid_equivalent_pair_and_a_json_report() {
    let out_path = temp_file("out.pair", "");
    let out = varysat(&[
        "opt",
        EXAMPLE,
        "-o",
        out_path.to_str().unwrap(),
        "--report",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_str(stderr(&out).trim()).expect("JSON report");
    // The example: VAR0.x/VAR0.y are a*p and p*a, VAR1.x/y/z are a constant, a
    // uniform and a uniform product, VAR2.x is dead. The FS result is linear in the
    // interpolated inputs with convergent coefficients, so all of it moves into the
    // VS: one varying carries the result and replaces the other five.
    assert_eq!(report["before"]["components"], 6);
    assert_eq!(report["before"]["slots"], 3);
    assert_eq!(report["after"]["components"], 1);
    assert_eq!(report["after"]["slots"], 1);
    assert_eq!(report["stop_reason"], "saturated");
    assert!(report["cost"]["before"].as_u64().unwrap() > report["cost"]["after"].as_u64().unwrap());
    let fates: Vec<&str> = report["varyings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["fate"].as_str().unwrap())
        .collect();
    assert_eq!(
        fates,
        [
            "no_varying",
            "moved",
            "moved",
            "moved",
            "moved",
            "moved",
            "removed"
        ]
    );
    let moves = report["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 1);
    assert_eq!(moves[0]["direction"], "backward");
    assert_eq!(
        moves[0]["replaced"],
        serde_json::json!(["VAR0.x", "VAR0.y", "VAR1.x", "VAR1.y", "VAR1.z"])
    );
    let check = varysat(&["check", out_path.to_str().unwrap()]);
    assert!(check.status.success(), "{}", stderr(&check));
    let equiv = varysat(&["equiv", EXAMPLE, out_path.to_str().unwrap()]);
    assert!(equiv.status.success(), "{}", stderr(&equiv));
}

#[test]
fn bad_rule_files_are_located_errors() {
    let rules = temp_file(
        "bad.rules",
        "; header\n(rule r (fadd ?a ?b)\n  (fadd ?b ?c))\n",
    );
    let out = varysat(&["opt", EXAMPLE, "--rules", rules.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!("{}:3:3: error: variable ?c", rules.display())),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_cost_profiles_are_located_errors() {
    let profile = temp_file("bad.cost", "(profile p\n  (weight fs four))\n");
    let out = varysat(&["opt", EXAMPLE, "--cost", profile.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!(
            "{}:2:14: error: expected a non-negative integer",
            profile.display()
        )),
        "{err}"
    );
}

#[test]
fn extra_rules_and_named_profiles_are_accepted() {
    let rules = temp_file(
        "extra.rules",
        "; extra\n(rule fmul-four (fmul ?x 4f32) (fmul (fadd ?x ?x) 2f32))\n",
    );
    let spec = format!("+{}", rules.display());
    let out = varysat(&["opt", EXAMPLE, "--rules", &spec, "--cost", "amd-gfx11"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cost (amd-gfx11)"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn without_leaves_a_rule_out_of_the_set() {
    let args = ["opt", EXAMPLE, "--report", "json"];
    let with = varysat(&args);
    assert!(with.status.success(), "{}", stderr(&with));
    assert!(
        stderr(&with).contains("\"propagate-free\""),
        "{}",
        stderr(&with)
    );
    let without = varysat(
        &[
            &args[..],
            &["--rules", "default", "--without", "propagate-free"],
        ]
        .concat(),
    );
    assert!(without.status.success(), "{}", stderr(&without));
    assert!(
        !stderr(&without).contains("\"propagate-free\""),
        "{}",
        stderr(&without)
    );
    let unknown = varysat(&["opt", EXAMPLE, "--without", "no-such-rule"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(stderr(&unknown).contains("no rule named `no-such-rule` to leave out"));
}
