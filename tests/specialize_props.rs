//! Property test of uniform inlining (issue 17): on random pairs with a random subset
//! of their uniform and UBO words known, the specialized pair, and the pair optimized
//! with those words inlined, behave like the original run with the same words bound
//! (`RunConfig::known`) in the reference interpreter.
//!
//! CI runs 1000 cases (the target); `VARYSAT_PROPTEST_CASES` changes the
//! count and `VARYSAT_PROPTEST_SEED` the seed (docs/testing.md).

use std::cell::Cell;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, RngSeed, TestCaseError, TestError, TestRunner};
use varysat::internals::gen::{arb_readable, describe, GenConfig, Readable};
use varysat::interpreter::{check_equivalent, EquivConfig, Inequivalence, RunConfig};
use varysat::ir::{
    AluOp, BitSize, Inst, InstKind, KnownUniforms, Phi, Pipeline, Shader, Stmt, UniformWord, Value,
};
use varysat::specialize::specialize;
use varysat::{optimize, Options};

const DEFAULT_CASES: u32 = 1000;
const DEFAULT_SEED: u64 = 0x696e_6c69_6e65_0017;
/// The whole optimizer (specialization, then varying optimization) runs on every
/// this many cases; the others check specialization alone, which is what keeps 1000
/// cases cheap (the optimizer's own laws have their own property tests).
const OPTIMIZER_EVERY: u32 = 4;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Values worth binding: small integers (array indices, counts), both zeros and one,
/// floats in the interpreter's input range, and small bit patterns (denormal floats,
/// integers up to 2^20). Every value reads as a finite float of modest size, the
/// interpreter's own input domain: the optimizer's laws of NIR's default float mode
/// (`x * 0 = 0`, docs/testing.md) assume no Inf or NaN, so binding one (e.g. `-1`,
/// a NaN pattern) would report a law that is allowed, not a specialization bug.
fn value() -> impl Strategy<Value = u32> {
    prop_oneof![
        0u32..5,
        Just(0x8000_0000u32),
        Just(1.0f32.to_bits()),
        (-4.0f32..4.0).prop_map(f32::to_bits),
        0u32..(1 << 20),
    ]
}

/// How one top-level store is made to depend on a uniform condition.
#[derive(Clone, Copy, Debug)]
enum Guard {
    /// Left alone.
    None,
    /// `store bcsel(c, v, w)`.
    Select,
    /// `if c {} else {}` merging `v`/`w` with a phi, then `store` the phi.
    Branch,
}

fn guard() -> impl Strategy<Value = Guard> {
    prop_oneof![Just(Guard::None), Just(Guard::Select), Just(Guard::Branch)]
}

/// Random choices for guarding stores: per store a guard, a word to test, a
/// comparison constant, and which earlier value is the alternative.
type Guards = Vec<(Guard, u16, u32, u16)>;

/// Makes some top-level stores of both stages depend on conditions over uniform words
/// (random generated pairs rarely have such conditions): the stored value becomes a
/// select or a branch merge between it and another earlier value of its size (often
/// an input, so a varying is read only on one side) or a constant.
fn add_uniform_conditions(p: &mut Pipeline, guards: &Guards) {
    let words = words(p);
    let mut next = 0;
    for shader in [&mut p.producer, &mut p.consumer] {
        let body = std::mem::take(&mut shader.body);
        let mut out = vec![];
        let mut defined: Vec<Value> = vec![];
        for stmt in body {
            if let Stmt::Inst(Inst {
                result: Some(v), ..
            }) = &stmt
            {
                defined.push(*v);
            }
            let Stmt::Inst(Inst {
                kind: InstKind::StoreOutput { value, .. },
                ..
            }) = &stmt
            else {
                out.push(stmt);
                continue;
            };
            let g = guards[next % guards.len()];
            next += 1;
            if let Some(new) = guarded(shader, &words, &defined, *value, g, &mut out) {
                let mut stmt = stmt;
                if let Stmt::Inst(Inst {
                    kind: InstKind::StoreOutput { value, .. },
                    ..
                }) = &mut stmt
                {
                    *value = new;
                }
                out.push(stmt);
            } else {
                out.push(stmt);
            }
        }
        shader.body = out;
    }
}

fn inst(shader: &mut Shader, bits: BitSize, kind: InstKind, out: &mut Vec<Stmt>) -> Value {
    let n = shader.values.len();
    let v = shader.add_value(format!("g{n}"), bits);
    out.push(Stmt::Inst(Inst {
        result: Some(v),
        kind,
        loc: None,
    }));
    v
}

/// Emits the condition and the guarded value before a store; returns the new value.
fn guarded(
    shader: &mut Shader,
    words: &[UniformWord],
    defined: &[Value],
    value: Value,
    (g, word, k, alt): (Guard, u16, u32, u16),
    out: &mut Vec<Stmt>,
) -> Option<Value> {
    if matches!(g, Guard::None) || words.is_empty() {
        return None;
    }
    let bits = shader.bits(value);
    let load = match words[usize::from(word) % words.len()] {
        UniformWord::Uniform(index) => InstKind::LoadUniform {
            index,
            half: varysat::ir::Half::Full,
        },
        UniformWord::Ubo { block, offset } => {
            let offset = inst(shader, BitSize::B32, InstKind::Const(offset), out);
            InstKind::LoadUbo {
                block,
                offset,
                half: varysat::ir::Half::Full,
            }
        }
    };
    let u = inst(shader, BitSize::B32, load, out);
    let c = inst(shader, BitSize::B32, InstKind::Const(k % 4), out);
    let op = if k & 4 == 0 { AluOp::ILt } else { AluOp::FLt };
    let cond = inst(shader, BitSize::B1, alu(op, vec![u, c]), out);
    let same: Vec<Value> = defined
        .iter()
        .copied()
        .filter(|v| shader.bits(*v) == bits && *v != value)
        .collect();
    let w = match same.get(usize::from(alt) % same.len().max(1)) {
        Some(w) if alt % 3 != 0 => *w,
        _ => inst(
            shader,
            bits,
            InstKind::Const(u32::from(alt) & bits.mask()),
            out,
        ),
    };
    Some(match g {
        Guard::Select => inst(shader, bits, alu(AluOp::BCsel, vec![cond, value, w]), out),
        _ => {
            let n = shader.values.len();
            let dst = shader.add_value(format!("g{n}"), bits);
            out.push(Stmt::If {
                cond,
                then_body: vec![],
                else_body: vec![],
                phis: vec![Phi {
                    dst,
                    then_val: value,
                    else_val: w,
                }],
                loc: None,
            });
            dst
        }
    })
}

fn alu(op: AluOp, srcs: Vec<Value>) -> InstKind {
    InstKind::Alu {
        op,
        exact: false,
        srcs,
    }
}

/// Every word of `p`'s declared uniform storage.
fn words(p: &Pipeline) -> Vec<UniformWord> {
    let uniforms = (0..p.uniforms).map(UniformWord::Uniform);
    let ubos = p.ubos.iter().flat_map(|u| {
        (0..u.size / 4).map(move |w| UniformWord::Ubo {
            block: u.block,
            offset: w * 4,
        })
    });
    uniforms.chain(ubos).collect()
}

/// The words picked by `mask`, with values drawn from `values`.
fn known(p: &Pipeline, mask: u64, values: &[u32]) -> KnownUniforms {
    let mut k = KnownUniforms::new();
    for (i, w) in words(p).into_iter().enumerate() {
        if mask >> (i % 64) & 1 == 1 {
            k.insert(w, values[i % values.len()]);
        }
    }
    k
}

fn equiv_config(known: &KnownUniforms) -> EquivConfig {
    EquivConfig {
        runs: 2,
        run: RunConfig {
            known: known.clone(),
            ..EquivConfig::default().run
        },
        ..EquivConfig::default()
    }
}

fn equivalent(a: &Pipeline, b: &Pipeline, known: &KnownUniforms) -> Result<(), String> {
    check_equivalent(a, b, &equiv_config(known))
        .map_err(|e| format!("{e}\nresult:\n{}", describe(b)))
}

/// Checks one case; returns how many conditions specialization folded.
fn property(p: &Pipeline, known: &KnownUniforms, optimizer: bool) -> Result<usize, String> {
    let s = specialize(p, known).map_err(|e| format!("specialize failed: {e}"))?;
    varysat::validate::validate(&s.pipeline).map_err(|e| {
        format!(
            "specialized pair is invalid: {e}\n{}",
            describe(&s.pipeline)
        )
    })?;
    equivalent(p, &s.pipeline, known).map_err(|e| format!("specialized: {e}"))?;
    let folded = s.report.stages.iter().map(|f| f.conditions.len()).sum();
    if !optimizer {
        return Ok(folded);
    }
    let out = optimize(p, &Options::new().known(known.clone()))
        .map_err(|e| format!("optimize failed: {e}"))?;
    match check_equivalent(p, &out.pipeline, &equiv_config(known)) {
        Ok(()) => {}
        // NIR's default float mode preserves neither Inf nor NaN, and the optimizer's
        // laws use that (docs/testing.md); where the original computes a non-finite
        // value from finite inputs (`fpow` of a negative base), a difference there is
        // not the inlining's doing. Specialization alone is checked exactly above.
        Err(Inequivalence::Mismatch(m)) if m.left.is_some_and(|v| !v.as_f32().is_finite()) => {}
        Err(e) => {
            return Err(format!(
                "optimized: {e}\nresult:\n{}",
                describe(&out.pipeline)
            ))
        }
    }
    let r = &out.report;
    if r.after.slots > r.before.slots {
        return Err(format!("slots grew: {r}"));
    }
    Ok(folded)
}

#[test]
fn inlined_and_folded_pairs_match_the_original_with_the_words_bound() {
    let cases = env_or("VARYSAT_PROPTEST_CASES", DEFAULT_CASES);
    let config = Config {
        cases,
        failure_persistence: None,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(env_or("VARYSAT_PROPTEST_SEED", DEFAULT_SEED)),
        ..Config::default()
    };
    let folded_cases = Cell::new(0u32);
    let cases_run = Cell::new(0u32);
    let strategy = (
        arb_readable(GenConfig::default()),
        any::<u64>(),
        vec(value(), 1..8),
        vec((guard(), any::<u16>(), any::<u32>(), any::<u16>()), 1..6),
    );
    let result = TestRunner::new(config).run(&strategy, |(Readable(p), mask, values, guards)| {
        let mut p = p;
        add_uniform_conditions(&mut p, &guards);
        if let Err(e) = varysat::validate::validate(&p) {
            return Err(TestCaseError::fail(format!(
                "guarding made an invalid pair: {e}\n{}",
                describe(&p)
            )));
        }
        let k = known(&p, mask, &values);
        let case = cases_run.get();
        cases_run.set(case + 1);
        let folded = property(&p, &k, case.is_multiple_of(OPTIMIZER_EVERY)).map_err(|e| {
            TestCaseError::fail(format!("known {k:?}: {e}\ninput:\n{}", describe(&p)))
        })?;
        if folded > 0 {
            folded_cases.set(folded_cases.get() + 1);
        }
        Ok(())
    });
    match result {
        Ok(()) => {}
        Err(TestError::Fail(why, (Readable(p), ..))) => {
            panic!("{why}\nshrunk counterexample:\n{}", describe(&p))
        }
        Err(TestError::Abort(why)) => panic!("aborted: {why}"),
    }
    // The property is only as strong as the folding it exercises: a fair share of the
    // random pairs must have had a condition decided by the known words.
    let share = f64::from(folded_cases.get()) / f64::from(cases.max(1));
    eprintln!("{} of {cases} cases folded a condition", folded_cases.get());
    assert!(
        share >= 0.3,
        "only {} of {cases} cases folded a condition",
        folded_cases.get()
    );
}
