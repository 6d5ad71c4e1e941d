//! File tests of uniform inlining (issue 17). Each `tests/specialize/*.pair`, and the
//! shipped `examples/pairs/vs_fs_ubo_array_select.pair`, names the words to inline and
//! the expected result in its leading comments:
//!
//! ```text
//! ; known: --uniform 0=-1.0            (or --ubo BLOCK:OFFSET=VALUE; repeatable)
//! ; expect: after.components = 1       (also before.*, after.slots, before.slots)
//! ; expect-varying: VAR1.x removed     (kept | removed | propagated | moved | …)
//! ; expect-folded: branches = 1, selects = 3   (summed over both stages)
//! ; expect-absent: bcsel, load_uniform (no such instruction left in either stage)
//! ```
//!
//! Every file also checks that the specialized pair and the optimized one run like the
//! input with the known words bound to their values, and that the slot count does not
//! grow.

use std::path::{Path, PathBuf};

use varysat::interpreter::{check_equivalent, EquivConfig, RunConfig};
use varysat::ir::{KnownUniforms, Pipeline};
use varysat::optimize::{Fate, Report};
use varysat::specialize::{known_from_flags, specialize, SpecializeReport};
use varysat::{optimize, Options};

const EXAMPLE: &str = "examples/pairs/vs_fs_ubo_array_select.pair";

fn directives<'t>(text: &'t str, key: &str) -> Vec<&'t str> {
    text.lines()
        .take_while(|l| l.starts_with(';'))
        .filter_map(|l| l.trim_start_matches(';').trim().strip_prefix(key))
        .map(str::trim)
        .collect()
}

fn known(p: &Pipeline, text: &str) -> KnownUniforms {
    let (mut uniforms, mut ubos) = (vec![], vec![]);
    for line in directives(text, "known:") {
        let words: Vec<&str> = line.split_whitespace().collect();
        for pair in words.chunks(2) {
            match pair {
                ["--uniform", v] => uniforms.push(v.to_string()),
                ["--ubo", v] => ubos.push(v.to_string()),
                _ => panic!("bad known: line `{line}`"),
            }
        }
    }
    known_from_flags(p, &uniforms, &ubos).expect("known words are valid")
}

fn equivalent(a: &Pipeline, b: &Pipeline, known: &KnownUniforms) -> Result<(), String> {
    let cfg = EquivConfig {
        runs: 8,
        run: RunConfig {
            known: known.clone(),
            ..EquivConfig::default().run
        },
        ..EquivConfig::default()
    };
    check_equivalent(a, b, &cfg).map_err(|e| e.to_string())
}

fn fate_is(fate: &Fate, want: &str) -> bool {
    matches!(
        (fate, want),
        (Fate::Kept(_), "kept")
            | (Fate::MergedInto { .. }, "merged")
            | (Fate::Propagated(_), "propagated")
            | (Fate::Removed(_), "removed")
            | (Fate::Moved(_), "moved")
            | (Fate::NoVarying(_), "no_varying")
            | (Fate::Pinned(_), "pinned")
    )
}

fn count(r: &Report, key: &str) -> usize {
    match key {
        "before.components" => r.before.components,
        "before.slots" => r.before.slots,
        "after.components" => r.after.components,
        "after.slots" => r.after.slots,
        _ => panic!("unknown count `{key}`"),
    }
}

fn folded(s: &SpecializeReport, key: &str) -> usize {
    let per = |f: &varysat::specialize::StageFolds| match key {
        "branches" => f.branches,
        "selects" => f.selects,
        "constants" => f.constants,
        _ => panic!("unknown fold count `{key}`"),
    };
    s.stages.iter().map(per).sum()
}

fn keywords(p: &Pipeline) -> Vec<&'static str> {
    let mut out = vec![];
    for s in [&p.producer, &p.consumer] {
        s.for_each_inst(|i| out.push(i.kind.keyword()));
    }
    out
}

fn check_file(path: &Path) -> Vec<String> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).expect("readable test file");
    let p = varysat::text::parse(&text, Some(&name)).expect("test input parses");
    let k = known(&p, &text);
    assert!(!k.is_empty(), "{name}: no `; known:` line");
    let spec = specialize(&p, &k).expect("specializes");
    let out = optimize(&p, &Options::new().known(k.clone())).expect("optimizes");
    let r = &out.report;
    let mut errors = vec![];
    let mut fail = |m: String| errors.push(format!("{name}: {m}\n{r}"));
    if let Err(e) = equivalent(&p, &spec.pipeline, &k) {
        fail(format!("specialized pair differs: {e}"));
    }
    if let Err(e) = equivalent(&p, &out.pipeline, &k) {
        fail(format!("optimized pair differs: {e}"));
    }
    if r.after.slots > r.before.slots || r.fallback.is_some() {
        fail("slots grew or the optimizer fell back".into());
    }
    for d in directives(&text, "expect:") {
        let (key, want) = d.split_once('=').expect("expect: KEY = N");
        let want: usize = want.trim().parse().expect("a count");
        let got = count(r, key.trim());
        if got != want {
            fail(format!("{} is {got}, expected {want}", key.trim()));
        }
    }
    for d in directives(&text, "expect-varying:") {
        let (slot, want) = d.split_once(' ').expect("expect-varying: SLOT FATE");
        match r.varyings.iter().find(|v| v.slot.to_string() == slot) {
            Some(v) if fate_is(&v.fate, want.trim()) => {}
            other => fail(format!("{slot}: expected {want}, got {other:?}")),
        }
    }
    for d in directives(&text, "expect-folded:") {
        for item in d.split(',') {
            let (key, want) = item.split_once('=').expect("expect-folded: KEY = N");
            let want: usize = want.trim().parse().expect("a count");
            let got = folded(&spec.report, key.trim());
            if got != want {
                fail(format!("{} folded: {got}, expected {want}", key.trim()));
            }
        }
    }
    let left = keywords(&out.pipeline);
    for d in directives(&text, "expect-absent:") {
        for kw in d.split(',').map(str::trim) {
            if left.contains(&kw) {
                fail(format!("`{kw}` is still in the result"));
            }
        }
    }
    errors
}

#[test]
fn every_specialize_file_test_holds() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/specialize");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("tests/specialize exists")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "pair"))
        .collect();
    files.sort();
    files.push(Path::new(env!("CARGO_MANIFEST_DIR")).join(EXAMPLE));
    let errors: Vec<String> = files.iter().flat_map(|f| check_file(f)).collect();
    assert!(errors.is_empty(), "{}", errors.join("\n\n"));
}

#[test]
fn detection_lists_loop_bounds_selects_and_branches() {
    use varysat::ir::UniformWord;
    use varysat::specialize::{find_inlinable, ConditionKind};
    let file = |f: &str| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/specialize")
            .join(f);
        varysat::text::parse_file(&path).expect("parses")
    };
    // The VS loop exits on `ige i n` with i a header phi and n = uniform 0: a loop
    // bound whose own expression is one load. The FS select on `ieq u1 1`: the load,
    // the comparison and the select itself fold.
    let found = find_inlinable(&file("loop_bound.pair"));
    let vs = &found.stages[0].conditions;
    assert_eq!(vs.len(), 1, "{found}");
    assert_eq!(vs[0].kind, ConditionKind::LoopBound);
    assert_eq!(vs[0].words, [UniformWord::Uniform(0)]);
    assert_eq!(vs[0].folds, 1);
    let fs = &found.stages[1].conditions;
    assert_eq!(
        (fs[0].kind, fs[0].folds),
        (ConditionKind::Select, 3),
        "{found}"
    );
    // The FS `if` on `flt 0.0 u0`: load and comparison, plus the smaller branch (the
    // empty else-branch: nothing is certain to disappear beyond the condition).
    let found = find_inlinable(&file("branch_kills_varying.pair"));
    let fs = &found.stages[1].conditions;
    assert_eq!(fs.len(), 1, "{found}");
    assert_eq!(
        (fs[0].kind, fs[0].folds),
        (ConditionKind::Branch, 2),
        "{found}"
    );
    assert_eq!(found.stages[1].words[0].word, UniformWord::Uniform(0));
    // Inputs never qualify: the shipped control-flow example branches on an attribute
    // (VS) and on a varying compared with a uniform (FS), and loops on a constant
    // bound.
    let p = varysat::text::parse_file(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pairs/vs_fs_control_flow.pair"),
    )
    .expect("parses");
    let found = find_inlinable(&p);
    assert!(found.is_empty(), "{found}");
}
