//! End-to-end tests of the `varysat` binary: exit codes, stdout and located errors.

mod cli_support;

use cli_support::{stderr, varysat};

fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
    cli_support::temp_file("cli", name, text)
}

#[test]
fn check_accepts_every_example() {
    let mut args = vec!["check"];
    let files: Vec<String> = std::fs::read_dir("examples/pairs")
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    assert!(files.len() >= 16);
    args.extend(files.iter().map(String::as_str));
    let out = varysat(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().count(),
        files.len()
    );
}

#[test]
fn check_reports_syntax_errors_with_position_and_exit_1() {
    let text = "(pair\n  (producer vs\n    (%a = faddd %b %c))\n  (consumer fs))";
    let path = temp_file("syntax.pair", text);
    let out = varysat(&["check", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!("{}:3:11: error: ", path.display())),
        "{err}"
    );
    assert!(err.contains("faddd"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn check_reports_validation_errors_with_position() {
    let text = "(pair\n  (producer vs\n    (%a = load_input ATTR0.x)\n    (store_output VAR0.x %a))\n  (consumer fs\n    (%x = load_per_vertex_input VAR0.x %x)))\n";
    let path = temp_file("invalid.pair", text);
    let out = varysat(&["check", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("{}:6:5: error:", path.display())),
        "{err}"
    );
}

#[test]
fn missing_file_is_an_error_not_a_panic() {
    let out = varysat(&["check", "no/such/file.pair"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.starts_with("no/such/file.pair: error:"), "{err}");
}

#[test]
fn fmt_prints_the_canonical_form_which_is_a_fixed_point() {
    let text = "; comment\n(pair (producer vs (%a = load_input ATTR0.x) (store_output VAR0.x %a))\n (consumer fs (%x = load_input VAR0.x) (store_output DATA0.x %x)))";
    let path = temp_file("messy.pair", text);
    let out = varysat(&["fmt", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let once = String::from_utf8(out.stdout).unwrap();
    assert!(
        once.contains("\n  (producer vs\n    (topology triangles)\n"),
        "{once}"
    );
    let again_path = temp_file("canonical.pair", &once);
    let again = varysat(&["fmt", again_path.to_str().unwrap()]);
    assert_eq!(String::from_utf8(again.stdout).unwrap(), once);

    let out = varysat(&["fmt", "--in-place", path.to_str().unwrap()]);
    assert!(out.status.success());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), once);
}

#[test]
fn run_prints_observables_deterministically() {
    let file = "examples/pairs/vs_fs_fma.pair";
    let a = varysat(&["run", file, "--seed", "3"]);
    assert!(a.status.success(), "{}", stderr(&a));
    let text = String::from_utf8(a.stdout.clone()).unwrap();
    assert!(text.contains("DATA0.x"), "{text}");
    let b = varysat(&["run", file, "--seed", "3"]);
    assert_eq!(a.stdout, b.stdout);
    let c = varysat(&["run", file, "--seed", "4"]);
    assert_ne!(
        a.stdout, c.stdout,
        "a different seed gives different inputs"
    );
}

#[test]
fn equiv_accepts_a_reformatted_pair_and_rejects_a_changed_constant() {
    let original = "examples/pairs/vs_fs_forward.pair";
    let text = std::fs::read_to_string(original).unwrap();
    let same = temp_file(
        "same.pair",
        &text.replace("; Seed case", "; Copy of seed case"),
    );
    let out = varysat(&["equiv", original, same.to_str().unwrap(), "--runs", "4"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    let changed = temp_file(
        "changed.pair",
        &text.replace("const 32 2.0", "const 32 2.5"),
    );
    let out = varysat(&["equiv", original, changed.to_str().unwrap(), "--runs", "4"]);
    assert_eq!(out.status.code(), Some(1));
    let msg = String::from_utf8_lossy(&out.stdout);
    assert!(msg.starts_with("not equivalent: mismatch"), "{msg}");
    assert!(msg.contains("DATA0.x"), "{msg}");
}

#[test]
fn opt_accepts_a_glsl_producer_and_consumer_directly() {
    if std::process::Command::new("glslangValidator")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have glslang (scripts/setup.sh)"
        );
        return;
    }
    let out = varysat(&[
        "opt",
        "tests/corpus/glsl/fog.vert",
        "tests/corpus/glsl/fog.frag",
        "--report",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let pair = String::from_utf8(out.stdout.clone()).unwrap();
    assert!(pair.starts_with("(pair"), "{pair}");
    let report: serde_json::Value = serde_json::from_str(stderr(&out).trim()).unwrap();
    // fog.vert writes one output (v_unused) that fog.frag never reads.
    let before = report["before"]["components"].as_u64().unwrap();
    let after = report["after"]["components"].as_u64().unwrap();
    assert!(after < before, "{report}");
}

#[test]
fn stats_counts_declared_live_and_optimized_varyings() {
    // vs_fs_dead_const_dup: six varying components in VAR0..VAR2; VAR2.x is never
    // read (live: five, in VAR0 and VAR1); only VAR0.x carries per-vertex data.
    let out = varysat(&[
        "stats",
        "--json",
        "examples/pairs/vs_fs_dead_const_dup.pair",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = &json["pairs"][0];
    assert_eq!(row["declared_components"], 6);
    assert_eq!(row["declared_slots"], 3);
    assert_eq!(row["live_components"], 5);
    assert_eq!(row["live_slots"], 2);
    assert_eq!(row["optimized_components"], 1);
    assert_eq!(json["total"]["declared_components"], 6);

    let lonely = varysat(&["stats", "tests/corpus/glsl/fog.vert"]);
    assert_eq!(lonely.status.code(), Some(1));
    assert!(
        stderr(&lonely).contains("needs its consumer"),
        "{}",
        stderr(&lonely)
    );
}

/// `equiv --loop-limit` raises the interpreter's per-invocation loop budget: a
/// producer looping 2,000 times stops the reference at the default 1,024 (as
/// piglit's `glsl-vs-loop-300` and the `temp-array-indexing` loop tests did in the
/// corpus run) and is compared with a higher limit.
#[test]
fn equiv_loop_limit_lets_long_loops_be_compared() {
    let pair = temp_file(
        "long_loop.pair",
        "(pair
  (producer vs
    (topology triangles)
    (%a = load_input ATTR0.x)
    (%i0 = const 32 0)
    (%one = const 32 1)
    (%n = const 32 2000)
    (loop
      (%i = phi %i0)
      (%acc = phi %a)
      (%done = ige %i %n)
      (if %done
        (then
          (break))
        (else))
      (%acc2 = fadd %acc %a)
      (%i2 = iadd %i %one)
      (continue %i2 %acc2))
    (store_output VAR0.x %acc)
    (store_output POS.x %a))
  (consumer fs
    (provoking first)
    (%x = load_interpolated_input VAR0.x persp center)
    (store_output DATA0.x %x)))
",
    );
    let p = pair.to_str().unwrap();
    let stdout = |o: &std::process::Output| String::from_utf8_lossy(&o.stdout).into_owned();
    let budget = varysat(&["equiv", p, p, "--runs", "1"]);
    assert_eq!(budget.status.code(), Some(1), "{}", stdout(&budget));
    assert!(
        stdout(&budget).contains("loops ran more than 1024 iterations"),
        "{}",
        stdout(&budget)
    );
    let raised = varysat(&["equiv", p, p, "--runs", "1", "--loop-limit", "4000"]);
    assert_eq!(raised.status.code(), Some(0), "{}", stdout(&raised));
    assert_eq!(stdout(&raised), "equivalent over 1 runs\n");
}

/// An input no output matches by name (piglit's `ext_gpu_shader4/compiler/abs-int`
/// stems: the VS writes `v`, the FS reads `x`) is a link error at the input's
/// declaration, exit 1.
#[test]
fn import_reports_an_unmatched_input_at_its_declaration() {
    if !varysat::import::tool_available(varysat::import::GLSLANG) {
        eprintln!("skipping: glslang not installed (run scripts/setup.sh)");
        return;
    }
    let vs = temp_file(
        "unmatched.vert",
        "#version 130\nout vec4 v;\nvoid main() { v = vec4(1.0); gl_Position = v; }\n",
    );
    let fs = temp_file(
        "unmatched.frag",
        "#version 130\n// x is read below\nuniform float k;   in  vec4 x;\nvoid main() { gl_FragColor = x * k; }\n",
    );
    let out = varysat(&["import", vs.to_str().unwrap(), fs.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!(
            "{}:3:29: error: link error: input `x` (matched by name) is not written by any \
             output of the vs shader",
            fs.display()
        )),
        "{err}"
    );
}

/// GL links located varyings by location: two of other types at one location are
/// a link error at the input's declaration, exit 1.
#[test]
fn import_reports_a_location_type_mismatch_as_a_located_link_error() {
    if !varysat::import::tool_available(varysat::import::GLSLANG) {
        eprintln!("skipping: glslang not installed (run scripts/setup.sh)");
        return;
    }
    let vs = temp_file(
        "mismatch.vert",
        "#version 450\nlayout(location = 0) out vec4 a;\nvoid main() { a = vec4(1.0); gl_Position = a; }\n",
    );
    let fs = temp_file(
        "mismatch.frag",
        "#version 450\nlayout(location = 0) out vec4 color;\nlayout(location = 0) in vec2 b;\nvoid main() { color = b.xyxy; }\n",
    );
    let out = varysat(&["import", vs.to_str().unwrap(), fs.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!(
            "{}:3:30: error: link error: input `b` at location 0 is vec2 but output `a`",
            fs.display()
        )),
        "{err}"
    );
}
