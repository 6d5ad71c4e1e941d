//! Arbitrary text into `text::parse`: it must never panic, and whatever it accepts
//! must print to text that parses again and prints identically (the printer's fixed
//! point from docs/format.md).
#![no_main]

use libfuzzer_sys::fuzz_target;
use varysat::text::{parse, print};

fuzz_target!(|data: &[u8]| {
    let Some(src) = varysat_fuzz::text(data) else {
        return;
    };
    let Ok(pipeline) = parse(&src, Some("fuzz.pair")) else {
        return;
    };
    let printed = print(&pipeline);
    let reparsed = match parse(&printed, Some("printed.pair")) {
        Ok(p) => p,
        Err(e) => panic!("printed text does not parse: {e}\n--- printed ---\n{printed}"),
    };
    assert_eq!(print(&reparsed), printed, "printing is not a fixed point");
});
