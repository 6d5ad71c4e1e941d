//! Arbitrary bytes as a pair of SPIR-V modules: `import::import_spirv` never panics,
//! and a pair it imports validates. Input layout: a little-endian u32 (taken modulo
//! the rest's length) splits the rest into producer and consumer modules.
#![no_main]

use libfuzzer_sys::fuzz_target;
use varysat::import::{import_spirv, ImportOptions};
use varysat::validate::validate;

fuzz_target!(|data: &[u8]| {
    if data.len() > varysat_fuzz::MAX_INPUT {
        return;
    }
    let Some((head, rest)) = data.split_first_chunk::<4>() else {
        return;
    };
    let split = u32::from_le_bytes(*head) as usize % (rest.len() + 1);
    let (producer, consumer) = rest.split_at(split);
    if let Ok(p) = import_spirv(producer, consumer, &ImportOptions::default()) {
        if let Err(e) = validate(&p) {
            panic!(
                "imported pair is invalid:\n{e}\n{}",
                varysat::text::print(&p)
            );
        }
    }
});
