//! `varysat import --uniform-words` and `varysat equiv --uniform WORD=VALUE`: a
//! program that loops over a uniform is checked with the value its test sets
//! (piglit's `uniform int iters 300`) instead of a seeded one, which may run past
//! the interpreter's loop budget.

mod cli_support;

use cli_support::{stderr, temp_file, varysat};

const VS: &str = "#version 130
uniform float scale;
uniform int iters;
in vec4 pos;
out vec4 acc;
void main() {
  gl_Position = pos;
  acc = vec4(0.0);
  for (int i = 0; i < iters; i++)
    acc += pos * scale;
}
";

const FS: &str = "#version 130
in vec4 acc;
void main() { gl_FragColor = acc; }
";

fn text(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn equiv_binds_uniform_words_import_names() {
    if !varysat::import::tool_available(varysat::import::GLSLANG) {
        eprintln!("skipping: glslang not installed (run scripts/setup.sh)");
        return;
    }
    let (vs, fs) = (
        temp_file("uniforms", "a.vert", VS),
        temp_file("uniforms", "a.frag", FS),
    );
    let dir = vs.parent().expect("temp dir");
    let (pair, opt, words) = (dir.join("p.pair"), dir.join("o.pair"), dir.join("u.txt"));
    let path = |p: &std::path::Path| p.to_str().expect("utf-8 path").to_owned();
    let out = varysat(&[
        "import",
        &path(&vs),
        &path(&fs),
        "-o",
        &path(&pair),
        "--uniform-words",
        &path(&words),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    // Words by name, in the pair's numbering (by name: `iters`, then `scale`).
    let list = std::fs::read_to_string(&words).expect("uniform words");
    assert_eq!(list, "iters 0 1\nscale 1 1\n");
    let out = varysat(&["opt", &path(&pair), "-o", &path(&opt)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let equiv = |extra: &[&str]| {
        let mut args = vec!["equiv".to_owned(), path(&pair), path(&opt)];
        args.extend(["--runs", "4", "--loop-limit", "1000"].map(str::to_owned));
        args.extend(extra.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        varysat(&args)
    };
    // Seeded, `iters` is a random word: the loop runs past the budget.
    let seeded = equiv(&[]);
    assert_eq!(seeded.status.code(), Some(1));
    assert!(
        text(&seeded).contains("loops ran more than"),
        "{}",
        text(&seeded)
    );
    // Bound to the test's value it runs, and the pairs agree.
    let bound = equiv(&["--uniform", "0=300"]);
    assert!(bound.status.success(), "{}{}", text(&bound), stderr(&bound));
    // The value is really used: past the budget it fails again.
    let long = equiv(&["--uniform", "0=5000", "--uniform", "1=0.5"]);
    assert!(
        text(&long).contains("loops ran more than"),
        "{}",
        text(&long)
    );
    // A word the pair does not declare is an error naming the file.
    let bad = equiv(&["--uniform", "7=1"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad)
            .contains("--uniform 7: uniform 7 is not declared (the pair has 2 uniform words)"),
        "{}",
        stderr(&bad)
    );
}
