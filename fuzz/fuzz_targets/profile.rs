//! Arbitrary text as a cost profile file: `CostModel::parse` never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use varysat::internals::extract::CostModel;

fuzz_target!(|data: &[u8]| {
    if let Some(src) = varysat_fuzz::text(data) {
        let _ = CostModel::parse("fuzz.profile", &src);
    }
});
