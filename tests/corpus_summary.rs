//! `scripts/corpus_summary.py` puts every pair of a third-party corpus run in a class
//! from its files alone (paths, piglit `[config]` headers, the `.shader_test` it was
//! split from): checked here on a fixture run directory whose files carry each
//! class's header, and on the counts of the summary it prints.

use std::fs;
use std::path::Path;
use std::process::Command;

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    fs::write(path, text).expect("write");
}

const SHADER_TEST: &str = "[require]\nGLSL >= 1.10\n\n[vertex shader]\nvoid main() { gl_Position = vec4(0.0); }\n\n[fragment shader]\nvoid main() { gl_FragColor = vec4(1.0); }\n\n[test]\ndraw rect -1 -1 2 2\n";
const LINK_ERROR: &str = "[vertex shader]\nvarying vec4 a;\nvoid main() { gl_Position = a; }\n\n[fragment shader]\nvarying vec3 a;\nvoid main() { gl_FragColor = vec4(a, 1.0); }\n\n[test]\nlink error\n";
const UNITS: &str = "[vertex shader]\nvec4 f();\nvoid main() { gl_Position = f(); }\n\n[vertex shader]\nvec4 f() { return vec4(0.0); }\n\n[fragment shader]\nvoid main() { gl_FragColor = vec4(1.0); }\n\n[test]\nlink success\n";

fn config(expect: &str, body: &str) -> String {
    format!("/*\n * [config]\n * expect_result: {expect}\n * glsl_version: 1.30\n * [end config]\n */\n#version 130\n{body}")
}

/// The fixture run directory: three split `.shader_test` programs, standalone
/// compile tests of each expectation, C-test program files and a glmark2 pair.
fn fixture(name: &str) -> std::path::PathBuf {
    let run = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("corpus-summary-{name}"));
    let _ = fs::remove_dir_all(&run);
    let piglit = run.join("piglit");
    let mut files = vec![];
    let mut pairs = vec![];
    for (i, (name, text)) in [
        ("draw", SHADER_TEST),
        ("mismatch", LINK_ERROR),
        ("units", UNITS),
    ]
    .into_iter()
    .enumerate()
    {
        let t = piglit.join(format!("execution/{name}.shader_test"));
        write(&t, text);
        files.push(t.display().to_string());
        let stem = run.join(format!("split/t{i}"));
        write(&stem.with_extension("vert"), "void main() {}\n");
        write(&stem.with_extension("frag"), "void main() {}\n");
        pairs.push(format!("{}.vert {}.frag", stem.display(), stem.display()));
    }
    let main = "out vec4 v;\nvoid main() { v = vec4(0.0); gl_Position = v; }\n";
    let fs_main = "in vec4 x;\nvoid main() { gl_FragColor = x; }\n";
    // (stem, vertex file, fragment file)
    let standalone = [
        (
            "compiler/pass",
            config("pass", main),
            config("pass", fs_main),
        ),
        (
            "compiler/fail",
            config("pass", main),
            config("fail", fs_main),
        ),
        (
            "compiler/partial",
            config(
                "pass",
                "// void main() {} in a comment is no definition\nvec4 f(vec4 a) { return a; }\n",
            ),
            config("pass", fs_main),
        ),
        ("shaders/glsl-plain", main.to_string(), fs_main.to_string()),
    ];
    for (stem, vs, fs) in &standalone {
        let stem = piglit.join(stem);
        write(&stem.with_extension("vert"), vs);
        write(&stem.with_extension("frag"), fs);
        files.push(stem.with_extension("frag").display().to_string());
        files.push(stem.with_extension("vert").display().to_string());
        pairs.push(format!("{}.vert {}.frag", stem.display(), stem.display()));
    }
    let glmark2 = run.join("glmark2/shaders/light-basic");
    pairs.push(format!(
        "{}.vert {}.frag",
        glmark2.display(),
        glmark2.display()
    ));
    write(&run.join("files"), &(files.join("\n") + "\n"));
    write(&run.join("pairs"), &(pairs.join("\n") + "\n"));
    // Outcomes: the plain program, the link-error test and the program files
    // pass; the compile tests fail at import (one equivalence failure on the
    // glmark2 pair); the several-units program has no result yet.
    let outcomes = ["ok", "ok", "", "import link error: input `…` (matched by name) is not written by any output of the vs shader", "import 'f' : no matching overloaded function found", "import Linking vertex stage: Missing entry point: Each stage requires one entry point", "ok", "equiv not equivalent: mismatch [a b]"];
    let results: String = pairs
        .iter()
        .zip(outcomes)
        .filter(|(_, o)| !o.is_empty())
        .map(|(p, o)| format!("{p}\t{o}\n"))
        .collect();
    write(&run.join("results"), &results);
    write(&run.join("commit"), "abc1234\n");
    run
}

fn summary(run: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("python3")
        .arg("scripts/corpus_summary.py")
        .arg(run)
        .args(args)
        .output()
        .ok()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).expect("utf-8"))
}

#[test]
fn every_pair_gets_the_class_its_files_give_it() {
    let run = fixture("classes");
    let Some(classes) = summary(&run, &["--classes"]) else {
        eprintln!("skipping: python3 not installed");
        return;
    };
    let got: Vec<(String, &str)> = classes
        .lines()
        .map(|l| {
            let (pair, class) = l.split_once('\t').expect("PAIR<TAB>CLASS");
            let stem = pair.split(' ').next().unwrap();
            let stem = stem
                .strip_prefix(&format!("{}/", run.display()))
                .unwrap_or(stem);
            (stem.to_string(), class)
        })
        .collect();
    let want = [
        ("split/t0.vert", "program"),
        ("split/t1.vert", "link-error"),
        ("split/t2.vert", "program-units"),
        ("piglit/compiler/pass.vert", "compile-pass"),
        ("piglit/compiler/fail.vert", "compile-fail"),
        ("piglit/compiler/partial.vert", "compile-partial"),
        ("piglit/shaders/glsl-plain.vert", "program-file"),
        ("glmark2/shaders/light-basic.vert", "glmark2"),
    ];
    let want: Vec<(String, &str)> = want.iter().map(|(s, c)| (s.to_string(), *c)).collect();
    assert_eq!(got, want);
}

#[test]
fn the_summary_counts_linked_programs_apart_from_compile_tests() {
    let run = fixture("summary");
    let Some(text) = summary(&run, &[]) else {
        eprintln!("skipping: python3 not installed");
        return;
    };
    assert!(text.contains("**partial: 7 of 8 done**"), "{text}");
    // glmark2 + program + program-units + program-file: 4 pairs, 3 done, all
    // imported and optimized, 2 equivalent (the glmark2 pair is not).
    assert!(
        text.contains("| **linked programs** (the first four) | 4 | 3 | 3 | 3 | 2 | 100.00 % |"),
        "{text}"
    );
    assert!(
        text.contains("| **all pairs** | 8 | 7 | 4 | 4 | 3 | 57.14 % |"),
        "{text}"
    );
    assert!(
        text.contains(
            "| `compile-fail` | 1 | import | 'f' : no matching overloaded function found |"
        ),
        "{text}"
    );
    assert!(
        text.contains("| `glmark2` | 1 | equiv | not equivalent: mismatch |"),
        "{text}"
    );
}
