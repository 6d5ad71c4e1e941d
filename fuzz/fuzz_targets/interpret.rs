//! Arbitrary text through parse, validate and the reference interpreter with small
//! limits. Nothing may panic or hang; errors are fine. A pair that runs must run
//! deterministically, equal itself under `compare`, and behave the same after a
//! print/parse round trip (the printer must not change meaning).
#![no_main]

use libfuzzer_sys::fuzz_target;
use varysat::interpreter::{compare, run, EquivConfig};
use varysat::text::{parse, print};
use varysat::validate::validate;

fuzz_target!(|data: &[u8]| {
    let Some(src) = varysat_fuzz::text(data) else {
        return;
    };
    let Ok(pipeline) = parse(&src, Some("fuzz.pair")) else {
        return;
    };
    if validate(&pipeline).is_err() {
        return;
    }
    let cfg = varysat_fuzz::small_run();
    let Ok(first) = run(&pipeline, &cfg) else {
        return;
    };
    let again = run(&pipeline, &cfg).expect("second run of the same pair failed");
    assert_eq!(first, again, "the interpreter is not deterministic");
    let equiv = EquivConfig {
        run: cfg.clone(),
        ..EquivConfig::default()
    };
    assert_eq!(
        compare(&first, &again, &equiv),
        None,
        "a run differs from itself"
    );
    let reparsed = parse(&print(&pipeline), None).expect("printed pair does not parse");
    let third = run(&reparsed, &cfg).expect("printed pair does not run");
    assert_eq!(
        compare(&first, &third, &equiv),
        None,
        "printing changed behaviour"
    );
});
