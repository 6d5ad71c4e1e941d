//! File-based optimizer tests, Cranelift filetest style: each `tests/opt/*.pair` holds
//! an input pair and, in its leading comments, the expected after-state:
//!
//! ```text
//! ; expect: after.components = 1          (also before.*, after.slots, before.slots)
//! ; expect-varying: VAR1.x merged-into VAR0.x
//! ; expect-varying: VAR2.y propagated 0.5f32   (expression text optional)
//! ; expect-varying: VAR3.x kept VAR0.y          (new slot optional)
//! ; expect-varying: VAR4.x removed | pinned | no_varying | moved
//! ; expect-stop: saturated
//! ; expect-output-lacks: fmul                  (no output line contains the text)
//! ```
//!
//! Every file also checks that the output validates (no fallback), prints and parses
//! back to the same pipeline, that the reference
//! interpreter sees the same observable behaviour as the input, that the varying slot
//! count does not grow, and that optimizing the output again changes no counts.

use std::path::Path;

use varysat::interpreter::{check_equivalent, EquivConfig};
use varysat::optimize::{Fate, Report};
use varysat::{optimize, Options};

fn fate_matches(fate: &Fate, want: &[&str]) -> bool {
    match (fate, want) {
        (Fate::Kept(_), ["kept"]) => true,
        (Fate::Kept(s), ["kept", slot]) => s.to_string() == *slot,
        (Fate::MergedInto { slot, .. }, ["merged-into", s]) => slot.to_string() == *s,
        (Fate::Propagated(_), ["propagated"]) => true,
        (Fate::Propagated(e), ["propagated", rest @ ..]) => *e == rest.join(" "),
        (Fate::Removed(_), ["removed"]) => true,
        (Fate::Pinned(_), ["pinned"]) => true,
        (Fate::NoVarying(_), ["no_varying"]) => true,
        (Fate::Moved(_), ["moved"]) => true,
        _ => false,
    }
}

fn count(report: &Report, key: &str) -> Option<usize> {
    Some(match key {
        "before.components" => report.before.components,
        "before.slots" => report.before.slots,
        "after.components" => report.after.components,
        "after.slots" => report.after.slots,
        _ => return None,
    })
}

fn check_file(path: &Path) -> Vec<String> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).expect("readable test file");
    let pipeline = varysat::text::parse(&text, Some(&name)).expect("test input parses");
    let outcome = optimize(&pipeline, &Options::new()).expect("optimize succeeds");
    let r = &outcome.report;
    let mut errors = vec![];
    let mut fail = |m: String| errors.push(format!("{name}: {m}\n{r}"));
    if let Some(why) = &r.fallback {
        fail(format!("emission fell back: {why}"));
    }
    if r.after.slots > r.before.slots {
        fail(format!(
            "slots grew from {} to {}",
            r.before.slots, r.after.slots
        ));
    }
    if let Err(e) = check_equivalent(&pipeline, &outcome.pipeline, &EquivConfig::default()) {
        fail(format!("not equivalent to the input: {e}"));
    }
    let printed = varysat::text::print(&outcome.pipeline);
    match varysat::text::parse(&printed, None) {
        Ok(back) if varysat::text::print(&back) == printed => {
            let mut stripped = back;
            varysat::text::strip_locs(&mut stripped);
            let mut original = outcome.pipeline.clone();
            varysat::text::strip_locs(&mut original);
            if stripped != original {
                fail("the printed output does not parse back to the same pipeline".into());
            }
        }
        Ok(_) => fail("printing the output is not a fixed point".into()),
        Err(e) => fail(format!("the printed output does not parse: {e}")),
    }
    let mut expectations = 0;
    for line in text.lines().map(str::trim).filter(|l| l.starts_with(';')) {
        let body = line.trim_start_matches(';').trim();
        if let Some(rest) = body.strip_prefix("expect:") {
            expectations += 1;
            let (key, value) = rest.split_once('=').expect("expect: KEY = N");
            let (key, want) = (key.trim(), value.trim().parse::<usize>().expect("a number"));
            match count(r, key) {
                Some(got) if got == want => {}
                got => fail(format!("{key}: expected {want}, got {got:?}")),
            }
        } else if let Some(rest) = body.strip_prefix("expect-varying:") {
            expectations += 1;
            let words: Vec<&str> = rest.split_whitespace().collect();
            let (slot, want) = words.split_first().expect("a slot");
            match r.varyings.iter().find(|v| v.slot.to_string() == *slot) {
                Some(v) if fate_matches(&v.fate, want) => {}
                Some(v) => fail(format!("{slot}: expected {want:?}, got `{}`", v.fate)),
                None => fail(format!("{slot}: not in the report")),
            }
        } else if let Some(rest) = body.strip_prefix("expect-output-lacks:") {
            expectations += 1;
            let text = rest.trim();
            if let Some(line) = printed.lines().find(|l| l.contains(text)) {
                fail(format!("the output has `{text}`: {}", line.trim()));
            }
        } else if let Some(rest) = body.strip_prefix("expect-stop:") {
            expectations += 1;
            if !r.stop_reason.starts_with(rest.trim()) {
                fail(format!("stop reason `{}`", r.stop_reason));
            }
        }
    }
    if expectations == 0 {
        fail("no expectations".into());
    }
    let again = optimize(&outcome.pipeline, &Options::new()).expect("second run succeeds");
    if (again.report.after.components, again.report.after.slots)
        != (r.after.components, r.after.slots)
    {
        fail(format!(
            "not idempotent: second run gives {} components in {} slots",
            again.report.after.components, again.report.after.slots
        ));
    }
    errors
}

#[test]
fn opt_filetests() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/opt");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/opt exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "pair"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "expected the optimizer file tests");
    let errors: Vec<String> = files.iter().flat_map(|f| check_file(f)).collect();
    assert!(errors.is_empty(), "{}", errors.join("\n\n"));
}
