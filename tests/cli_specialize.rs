//! End-to-end tests of uniform inlining on the command line: `varysat stats
//! --inlinable` finds the select chain of the shipped dynamically-indexed-UBO example,
//! `varysat opt --ubo/--uniform` folds it, and bad flags are located errors.

mod cli_support;

use cli_support::{stderr, varysat};

const EXAMPLE: &str = "examples/pairs/vs_fs_ubo_array_select.pair";

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn stats_inlinable_finds_the_index_deciding_the_select_chain() {
    let out = varysat(&["stats", "--inlinable", EXAMPLE]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    // Three selects, each on `ilt (umin n 3) k` with n = ubo 0:0: three instructions
    // of condition (load_ubo, umin, ilt) plus the select itself fold per select.
    assert!(
        text.contains("ubo 0:0: decides 3 conditions, folds 12 instructions"),
        "{text}"
    );
    assert!(
        text.contains("vs: no condition decided by uniforms alone"),
        "{text}"
    );
    let out = varysat(&["stats", "--inlinable", "--json", EXAMPLE]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(stdout(&out).trim()).expect("JSON");
    let fs = &json["pairs"][0]["inlinable"]["stages"][1];
    assert_eq!(fs["stage"], "fs");
    assert_eq!(fs["words"][0]["word"], "ubo 0:0");
    assert_eq!(fs["words"][0]["conditions"], 3);
    assert_eq!(
        fs["ubo_ranges"][0],
        serde_json::json!({"block": 0, "start": 0, "end": 4})
    );
    let kinds: Vec<&str> = fs["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["bcsel", "bcsel", "bcsel"]);
}

#[test]
fn opt_with_known_words_collapses_the_chain_and_reports_it() {
    let path = cli_support::temp_file("specialize", "out.pair", "");
    let out = varysat(&[
        "opt",
        EXAMPLE,
        "--ubo",
        "0:0=2",
        "--ubo",
        "0:16=1",
        "--report",
        "json",
        "-o",
        path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let pair = std::fs::read_to_string(&path).unwrap();
    assert!(pair.contains("(pair"), "{pair}");
    assert!(!pair.contains("bcsel"), "{pair}");
    let report: serde_json::Value = serde_json::from_str(stderr(&out).trim()).expect("JSON");
    assert_eq!(report["before"]["components"], 4);
    assert_eq!(report["after"]["components"], 1);
    let spec = &report["specialization"];
    assert_eq!(spec["inlined"][0]["word"], "ubo 0:0");
    assert_eq!(spec["inlined"][0]["value"], "2");
    assert_eq!(spec["inlined"][0]["loads"]["fs"], 1);
    assert_eq!(spec["stages"][1]["selects_collapsed"], 3);
    // Without known words there is no specialization section.
    let plain = varysat(&["opt", EXAMPLE, "--report", "json"]);
    let report: serde_json::Value = serde_json::from_str(stderr(&plain).trim()).expect("JSON");
    assert!(report["specialization"].is_null());
}

#[test]
fn bad_known_word_flags_are_located_errors() {
    let cases: [(&[&str], &str); 5] = [
        (&["--uniform", "0=abc"], "--uniform:1:3: error: "),
        (
            &["--ubo", "0:2=1"],
            "--ubo:1:3: error: ubo offset 2 is not a multiple of 4",
        ),
        (
            &["--ubo", "9:0=1"],
            "--ubo:1:1: error: uniform buffer 9 is not declared",
        ),
        (
            &["--uniform", "0=1"],
            "--uniform:1:1: error: uniform 0 is not declared",
        ),
        (
            &["--ubo", "0:0=1", "--ubo", "0:0=2"],
            "given two different values",
        ),
    ];
    for (flags, want) in cases {
        let mut args = vec!["opt", EXAMPLE];
        args.extend_from_slice(flags);
        let out = varysat(&args);
        assert_eq!(out.status.code(), Some(1), "{flags:?}");
        let err = stderr(&out);
        assert!(err.contains(want), "{flags:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
