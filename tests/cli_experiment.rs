//! `varysat experiment` end to end: table, JSON, CSV and SVG outputs, and located
//! errors for a bad rule file.

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn varysat(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_varysat"))
        .current_dir(root())
        .args(args)
        .output()
        .unwrap()
}

const CORPUS: &str = "examples/pairs/vs_fs_dead_const_dup.pair";

#[test]
fn json_compares_configurations() {
    let out = varysat(&[
        "experiment",
        "--json",
        "--rules",
        "default",
        "--rules",
        "rules/experiments/no-propagation.rules",
        "--cost",
        "amd-gfx10",
        "--cost",
        "amd-gfx11",
        "-j",
        "1",
        CORPUS,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let configs = j["configurations"].as_array().unwrap();
    let labels: Vec<&str> = configs
        .iter()
        .map(|c| c["configuration"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "default/amd-gfx10",
            "default/amd-gfx11",
            "no-propagation/amd-gfx10",
            "no-propagation/amd-gfx11"
        ]
    );
    // The pair's comment: only VAR0.x carries real per-vertex data; VAR1.x/.y/.z are a
    // constant, a uniform and a uniform expression, so propagation must leave fewer.
    let after = |i: usize| {
        configs[i]["totals"]["components"]["after"]
            .as_u64()
            .unwrap()
    };
    // With propagation everything but the data folds into one varying.
    assert_eq!(after(0), 1);
    // Without it (the variant keeps code motion), the FS computes
    // ((x + y) * c + u) - e: the constant c is convergent, so it is promoted to flat
    // and the product moves into the VS as one varying; the flat uniform u cannot join
    // an interpolated sum, and with it in between, e stays on its own: 3 varyings.
    assert_eq!(after(2), 3);
}

#[test]
fn table_csv_and_svg() {
    let svg = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("varysat-exp-{}.svg", std::process::id()));
    let out = varysat(&["experiment", "--svg", svg.to_str().unwrap(), CORPUS]);
    assert!(out.status.success());
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.starts_with("1 pairs x 1 configurations"));
    assert!(table.contains("default/amd-gfx10"));
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));

    let out = varysat(&["experiment", "--csv", "--timing", CORPUS]);
    assert!(out.status.success());
    let csv = String::from_utf8(out.stdout).unwrap();
    assert_eq!(csv.lines().count(), 2);
    assert!(csv.lines().next().unwrap().ends_with(",time_ms"));
}

#[test]
fn bad_rule_file_is_located() {
    let bad = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("varysat-exp-cli-{}.rules", std::process::id()));
    std::fs::write(&bad, "(rule r (fneg ?x) ?y)").unwrap();
    let out = varysat(&["experiment", "--rules", bad.to_str().unwrap(), CORPUS]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with(&format!("{}:1:", bad.display())), "{err}");
    assert!(err.contains("error:"));
}
