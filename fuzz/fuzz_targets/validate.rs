//! Arbitrary text through parse and `validate::validate`: neither may panic, and
//! every diagnostic of a parsed pair must carry a position inside the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use varysat::text::parse;
use varysat::validate::validate;
use varysat::Error;

fuzz_target!(|data: &[u8]| {
    let Some(src) = varysat_fuzz::text(data) else {
        return;
    };
    let Ok(pipeline) = parse(&src, Some("fuzz.pair")) else {
        return;
    };
    let lines = src.lines().count().max(1) as u32;
    match validate(&pipeline) {
        Ok(()) => {}
        Err(Error::Invalid(diags)) => {
            assert!(!diags.is_empty(), "Invalid with no diagnostic");
            for d in &diags {
                if let Some(loc) = d.loc {
                    assert!(loc.line >= 1 && loc.line <= lines, "line out of range: {d}");
                    assert!(loc.col >= 1, "column out of range: {d}");
                }
            }
        }
        Err(other) => panic!("validate returned a non-validation error: {other}"),
    }
});
