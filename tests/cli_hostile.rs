//! The binary against hostile surroundings and arguments: standard output closed or
//! full, endless or oversized input files, counts of zero or billions. Each must end
//! with a clear error and a failing exit status, never a panic or an unbounded run.

mod cli_support;

use std::process::{Command, Stdio};

use cli_support::{stderr, temp_file, varysat};

const PAIR: &str = "examples/pairs/vs_fs_fma.pair";

/// A pair whose canonical text is far larger than a pipe's buffer, so that writing it
/// to a closed pipe must fail.
fn long_pair() -> String {
    let mut body = String::new();
    for i in 1..4000 {
        body += &format!("    (%a{i} = fadd %a{} %p)\n", i - 1);
    }
    format!(
        "(pair
  (producer vs
    (%p = load_input ATTR0.x)
    (%a0 = fadd %p %p)
{body}    (store_output POS.x %a3999))
  (consumer fs))"
    )
}

fn assert_clean_failure(o: &std::process::Output, expect: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains(expect), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_full_stdout_is_an_error() {
    if !std::path::Path::new("/dev/full").exists() {
        return;
    }
    for args in [vec!["fmt", PAIR], vec!["opt", PAIR], vec!["run", PAIR]] {
        let full = std::fs::File::create("/dev/full").expect("/dev/full opens");
        let o = Command::new(env!("CARGO_BIN_EXE_varysat"))
            .args(&args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdout(full)
            .output()
            .expect("runs");
        assert_clean_failure(&o, "<stdout>: error:");
    }
}

#[test]
fn a_closed_stdout_is_an_error() {
    let path = temp_file("hostile", "long.pair", &long_pair());
    let mut child = Command::new(env!("CARGO_BIN_EXE_varysat"))
        .arg("fmt")
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    // Closing the read end before the child writes: every write gets a broken pipe.
    drop(child.stdout.take());
    let o = child.wait_with_output().expect("ends");
    assert_clean_failure(&o, "<stdout>: error:");
}

#[test]
fn an_endless_input_stops_at_the_size_limit() {
    if !std::path::Path::new("/dev/zero").exists() {
        return;
    }
    let o = varysat(&["check", "/dev/zero"]);
    assert_clean_failure(&o, "/dev/zero: error: larger than the input size limit");
}

#[test]
fn the_size_limit_covers_every_input_and_can_be_changed() {
    for args in [
        vec!["check", PAIR],
        vec!["fmt", PAIR],
        vec!["opt", PAIR, "--cost", "rules/algebra.rules"],
        vec!["opt", "--rules", "+rules/algebra.rules", PAIR],
        vec!["opt", "--rules", "rules/algebra.rules", PAIR],
    ] {
        let mut limited = vec!["--max-input-size", "10"];
        limited.extend(&args);
        let o = varysat(&limited);
        assert_clean_failure(&o, "larger than the input size limit of 10 bytes");
    }
    let o = varysat(&["check", "--max-input-size", "1000000", PAIR]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn counts_are_bounded_and_zero_is_refused() {
    for args in [
        vec!["equiv", PAIR, PAIR, "--runs", "0"],
        vec!["equiv", PAIR, PAIR, "--runs", "4294967295"],
        vec!["run", PAIR, "--fragments", "0"],
        vec!["run", PAIR, "--fragments", "4294967295"],
    ] {
        let o = varysat(&args);
        let err = stderr(&o);
        assert!(!o.status.success(), "{args:?} accepted");
        assert!(err.contains("not in 1.."), "{err}");
    }
    let o = varysat(&["equiv", PAIR, PAIR, "--runs", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn invisible_characters_in_messages_are_escaped() {
    // A vertical tab after `pair` and a zero-width space in a value name.
    let path = temp_file(
        "hostile",
        "vt.pair",
        "(pair\u{b} (producer vs) (consumer fs))",
    );
    let o = varysat(&["check", path.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("\\u{b}"), "{err}");
    assert!(!err.contains('\u{b}'), "{err}");
    let text = "(pair (producer vs (store_output POS.x %a\u{200b})) (consumer fs))";
    let path = temp_file("hostile", "zw.pair", text);
    let o = varysat(&["check", path.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("\\u{200b}"), "{err}");
    assert!(!err.contains('\u{200b}'), "{err}");
}

#[test]
fn a_spv_file_that_is_not_spirv_says_so() {
    let spv = temp_file("hostile", "junk.spv", "not a module at all");
    let frag = "examples/pairs/vs_fs_fma.pair";
    for cmd in ["import", "opt", "stats"] {
        let o = varysat(&[cmd, spv.to_str().unwrap(), frag]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(
            err.contains("junk.spv: error: not a SPIR-V module"),
            "{err}"
        );
    }
}

/// glslang and spirv-opt are installed by `scripts/setup.sh`; without them the GLSL
/// cases cannot run.
fn glslang() -> bool {
    varysat::import::tool_available(varysat::import::GLSLANG)
}

#[test]
fn glsl_errors_name_the_users_file_and_line() {
    if !glslang() {
        return;
    }
    let vert = temp_file(
        "hostile",
        "broken.vert",
        "#version 450\nvoid main() {\n  gl_Position = vec4(1.0)\n}\n",
    );
    let frag = temp_file(
        "hostile",
        "plain.frag",
        "#version 450\nlayout(location = 0) out vec4 c;\nvoid main() { c = vec4(1.0); }\n",
    );
    let (v, f) = (vert.to_str().unwrap(), frag.to_str().unwrap());
    for args in [
        vec!["import", v, f],
        vec!["opt", v, f],
        vec!["opt", "--no-spirv-opt", v, f],
        vec!["stats", "--no-spirv-opt", v, f],
    ] {
        let o = varysat(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{err}");
        // The error is at the closing brace on line 4 (the missing `;` is found there).
        assert!(err.starts_with(&format!("{v}:4:")), "{err}");
        assert!(!err.contains("shader.vert"), "{err}");
    }
}

#[test]
fn no_spirv_opt_is_accepted_by_opt_and_stats() {
    if !glslang() {
        return;
    }
    let vert = "tests/corpus/glsl/fog.vert";
    let frag = "tests/corpus/glsl/fog.frag";
    for cmd in ["opt", "stats"] {
        let o = varysat(&[cmd, "--no-spirv-opt", vert, frag]);
        assert!(o.status.success(), "{cmd}: {}", stderr(&o));
    }
}
