//! Mutated real SPIR-V never makes import panic (issue 16: "no panic on any SPIR-V
//! input"). Modules glslang compiles from the GLSL corpus get words overwritten,
//! opcodes and operand words swapped, word counts changed; every import must return
//! (an error or a pair that validates). A deterministic, small complement to the
//! `import_spirv` fuzz target. `VARYSAT_MUTATIONS` raises the count per module.

use std::path::Path;

use varysat::import::{compile_glsl, import_spirv, tool_available, ImportOptions, GLSLANG};

fn mutations() -> usize {
    std::env::var("VARYSAT_MUTATIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(150)
}

/// xorshift64*: a fixed stream of pseudo-random numbers.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One mutation of a module's words (never the 5-word header's magic).
fn mutate(words: &mut [u32], rng: &mut Rng) {
    let n = words.len();
    let at = 5 + rng.below(n.saturating_sub(5));
    if at >= n {
        return;
    }
    match rng.below(6) {
        // A small value (ids, literals, opcodes all live there).
        0 => words[at] = rng.below(64) as u32,
        // A new opcode, keeping the word count.
        1 => words[at] = (words[at] & 0xffff_0000) | rng.below(400) as u32,
        // A new word count, keeping the opcode.
        2 => words[at] = (words[at] & 0xffff) | ((rng.below(12) as u32) << 16),
        // Any bits.
        3 => words[at] = rng.next() as u32,
        // Swap two words.
        4 => {
            let other = 5 + rng.below(n - 5);
            words.swap(at, other);
        }
        // An id just past the bound.
        _ => words[at] = words[3].wrapping_add(rng.below(3) as u32),
    }
}

fn bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

#[test]
fn mutated_modules_never_panic_the_importer() {
    if !tool_available(GLSLANG) {
        if std::env::var("CI").is_ok_and(|v| !v.is_empty()) {
            panic!("{GLSLANG} is missing in CI: run scripts/setup.sh");
        }
        eprintln!("skipping: {GLSLANG} not installed");
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let pairs = [
        ("glsl/skinning.vert", "glsl/skinning.frag"),
        ("glsl/normal_map.vert", "glsl/normal_map.frag"),
        ("wide/doubles.vert", "wide/doubles.frag"),
    ];
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let opts = ImportOptions::default();
    let mut checked = 0;
    for (a, b) in pairs {
        let (pa, pb) = (dir.join(a), dir.join(b));
        if !pa.exists() || !pb.exists() {
            continue;
        }
        let vs: Vec<u32> = words(&compile_glsl(&pa, true).expect("compiles"));
        let fs: Vec<u32> = words(&compile_glsl(&pb, true).expect("compiles"));
        for i in 0..mutations() {
            let (mut v, mut f) = (vs.clone(), fs.clone());
            for _ in 0..1 + rng.below(3) {
                if i % 2 == 0 {
                    mutate(&mut v, &mut rng);
                } else {
                    mutate(&mut f, &mut rng);
                }
            }
            let (v, f) = (bytes(&v), bytes(&f));
            let r = std::panic::catch_unwind(|| import_spirv(&v, &f, &opts));
            match r {
                Ok(Ok(p)) => varysat::validate::validate(&p).expect("an imported pair validates"),
                Ok(Err(_)) => {}
                Err(_) => panic!("import panicked on mutation {i} of {a} + {b}"),
            }
            checked += 1;
        }
    }
    assert!(checked > 0, "no corpus pair found under {}", dir.display());
}

fn words(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}
