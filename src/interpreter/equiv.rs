//! Equivalence of two pipelines: both are run on the same seeds and their
//! observations compared key by key, with a float tolerance (the optimizer's
//! interpolation laws are inexact), and the first difference reported readably.
//!
//! Comparison rules, per key:
//! - the check is a refinement: the first pipeline is the reference and the second
//!   may be more defined, never less. Undefined in the first matches anything;
//!   undefined in the second matches only undefined in the first (an optimizer that
//!   turns a read the pipeline state defines into undef is wrong code, and a
//!   symmetric rule would hide it). `EquivConfig::refinement` off restores the
//!   symmetric rule. A key observed on one side only compares with "undefined" on
//!   the other (an SSBO word written on one side only is compared with the word's
//!   initial content);
//! - a value is read as a float only when both patterns are zero, normal, infinite
//!   or the canonical NaN that arithmetic produces (quiet, empty payload, either
//!   sign); then `|a-b| <= tol · max(1, |a|, |b|)`, NaN equals NaN and infinities
//!   must match exactly, except that a NaN matches an infinity (`nan_matches_inf`:
//!   interpolation turns an Inf into NaN, and the inexact laws may keep the Inf). `tol` is `rel_tol` for 32-bit and `rel_tol_f16` for 16-bit;
//! - every other pattern (booleans, denormal-looking small integers, other NaN
//!   payloads such as -1) compares bit for bit.
//!
//! The default runs read a `-0` operand of `frcp`/`frsq`/`fdiv`/`fpow` as `+0`
//! (`RunConfig::signed_zeros` false): a zero's sign is not preserved, as in NIR's
//! default float mode, and interpolation itself turns a `-0` stored at every vertex
//! into `+0`, so promoting or propagating such a value may flip it.

use std::fmt;

use crate::error::Error;
use crate::ir::{BitSize, Pipeline};

use super::observe::{Item, ObsKey, Observation};
use super::{run, Inputs, RunConfig, Scalar};

/// How [`check_equivalent`] runs and compares.
#[derive(Clone, Debug, PartialEq)]
pub struct EquivConfig {
    /// Number of runs (seeds `first_seed ..`).
    pub runs: u32,
    /// Seed of the first run.
    pub first_seed: u64,
    /// Relative tolerance for 32-bit floats.
    pub rel_tol: f32,
    /// Relative tolerance for 16-bit floats.
    pub rel_tol_f16: f32,
    /// Whether a NaN on one side matches an infinity on the other (interpolation
    /// turns Inf into NaN, and the inexact laws may keep the Inf; see
    /// `scalars_match`).
    pub nan_matches_inf: bool,
    /// Whether the second pipeline must refine the first (undefined only where the
    /// first is); when false, undefined on either side matches anything.
    pub refinement: bool,
    /// Everything else about a run (its `seed` is replaced per run).
    pub run: RunConfig,
}

impl Default for EquivConfig {
    fn default() -> EquivConfig {
        EquivConfig {
            runs: 4,
            first_seed: 0,
            rel_tol: 1e-3,
            rel_tol_f16: 1e-2,
            nan_matches_inf: true,
            refinement: true,
            run: RunConfig {
                signed_zeros: false,
                ..RunConfig::default()
            },
        }
    }
}

/// The first observable that differs between two runs on the same seed.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// Seed of the run.
    pub seed: u64,
    /// The observable.
    pub key: ObsKey,
    /// Its value in the first pipeline (`None`: not observed).
    pub left: Option<Scalar>,
    /// Its value in the second pipeline.
    pub right: Option<Scalar>,
    /// Where the fragment was shaded, for fragment outputs.
    pub context: Option<String>,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |v: &Option<Scalar>| v.map_or("not written".to_string(), |s| s.to_string());
        write!(
            f,
            "seed {}: {}: first pipeline {}, second pipeline {}",
            self.seed,
            self.key,
            show(&self.left),
            show(&self.right)
        )?;
        if let Some(c) = &self.context {
            write!(f, " (at {c})")?;
        }
        Ok(())
    }
}

/// Why two pipelines were not shown equivalent.
#[derive(Debug)]
pub enum Inequivalence {
    /// An observable differs.
    Mismatch(Box<Mismatch>),
    /// A pipeline could not be run.
    Failed {
        /// 0 for the first pipeline, 1 for the second.
        pipeline: u8,
        /// Seed of the failing run.
        seed: u64,
        /// The cause.
        error: Error,
    },
}

impl fmt::Display for Inequivalence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Inequivalence::Mismatch(m) => write!(f, "mismatch: {m}"),
            Inequivalence::Failed {
                pipeline,
                seed,
                error,
            } => {
                let which = if *pipeline == 0 { "first" } else { "second" };
                write!(f, "the {which} pipeline failed on seed {seed}: {error}")
            }
        }
    }
}

impl std::error::Error for Inequivalence {}

/// Runs both pipelines on `cfg.runs` seeds and compares their observations; returns
/// the first mismatch or run failure.
pub fn check_equivalent(
    a: &Pipeline,
    b: &Pipeline,
    cfg: &EquivConfig,
) -> Result<(), Inequivalence> {
    for i in 0..cfg.runs as u64 {
        let seed = cfg.first_seed.wrapping_add(i);
        let rc = RunConfig {
            seed,
            ..cfg.run.clone()
        };
        let run_one = |p: &Pipeline, which: u8| {
            run(p, &rc).map_err(|error| Inequivalence::Failed {
                pipeline: which,
                seed,
                error,
            })
        };
        let (oa, ob) = (run_one(a, 0)?, run_one(b, 1)?);
        if let Some(m) = compare(&oa, &ob, cfg) {
            return Err(Inequivalence::Mismatch(Box::new(m)));
        }
    }
    Ok(())
}

/// Compares two observations of runs on the same seed; `None` when they agree.
pub fn compare(a: &Observation, b: &Observation, cfg: &EquivConfig) -> Option<Mismatch> {
    let mut keys: Vec<&ObsKey> = a.values.keys().chain(b.values.keys()).collect();
    keys.sort();
    keys.dedup();
    let inputs = Inputs::new(a.seed);
    // An effect buffer the first run made wild may hold anything in the second
    // (symmetric without refinement).
    let wild = |o: &Observation| -> Vec<u32> {
        o.values
            .keys()
            .filter_map(|k| match k.item {
                Item::Ssbo { buffer, addr } if addr == super::opaque::WILD_EFFECTS => Some(buffer),
                _ => None,
            })
            .collect()
    };
    let mut wild_buffers = wild(a);
    if !cfg.refinement {
        wild_buffers.extend(wild(b));
    }
    for key in keys {
        if let Item::Ssbo { buffer, .. } = key.item {
            if wild_buffers.contains(&buffer) {
                continue;
            }
        }
        let initial = match key.item {
            Item::Ssbo { buffer, addr } => Some(inputs.ssbo(buffer, addr)),
            _ => None,
        };
        let left = a.values.get(key).copied();
        let right = b.values.get(key).copied();
        let (l, r) = (left.or(initial), right.or(initial));
        let undef = |s: Option<Scalar>| s.unwrap_or(Scalar::undef(BitSize::B32));
        let (x, y) = (undef(l), undef(r));
        let same = match (l, r) {
            (None, None) => true,
            _ if cfg.refinement && x.defined && !y.defined => false,
            (Some(_), Some(_)) => scalars_match(x, y, cfg),
            _ => !x.defined || !y.defined,
        };
        if !same {
            let context = a
                .fragment_of(key)
                .or(b.fragment_of(key))
                .map(|f| f.to_string());
            return Some(Mismatch {
                seed: a.seed,
                key: key.clone(),
                left,
                right,
                context,
            });
        }
    }
    None
}

/// Whether two observed scalars are equal under the rules of this module, undefined
/// matching anything (the refinement direction is checked by [`compare`]).
pub fn scalars_match(a: Scalar, b: Scalar, cfg: &EquivConfig) -> bool {
    if !a.defined || !b.defined {
        return true;
    }
    if a.size != b.size || a.size == BitSize::B1 || !(is_floatish(a) && is_floatish(b)) {
        return a.bits == b.bits;
    }
    let (x, y) = (a.as_f32(), b.as_f32());
    if x.is_nan() || y.is_nan() {
        // Interpolation turns an infinity into NaN; propagation, promotion and the
        // inexact motion laws skip or reorder it (NIR's default float mode does not
        // preserve Inf and NaN), so a NaN matches an infinity on the other side.
        let other = if x.is_nan() { y } else { x };
        return other.is_nan() || (cfg.nan_matches_inf && other.is_infinite());
    }
    if x.is_infinite() || y.is_infinite() {
        return x == y;
    }
    let tol = if a.size == BitSize::B16 {
        cfg.rel_tol_f16
    } else {
        cfg.rel_tol
    };
    (x - y).abs() <= tol * 1f32.max(x.abs()).max(y.abs())
}

/// Whether a pattern reads as a float value rather than an integer: zero, normal,
/// infinite, or an arithmetic (canonical quiet) NaN.
fn is_floatish(s: Scalar) -> bool {
    let (exp_bits, mant_bits) = match s.size {
        BitSize::B16 => (5, 10),
        _ => (8, 23),
    };
    let mant_mask = (1u32 << mant_bits) - 1;
    let exp = (s.bits >> mant_bits) & ((1 << exp_bits) - 1);
    let mant = s.bits & mant_mask;
    let exp_max = (1 << exp_bits) - 1;
    match exp {
        0 => mant == 0,
        e if e == exp_max => mant == 0 || mant == 1 << (mant_bits - 1),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> EquivConfig {
        EquivConfig::default()
    }

    fn f(v: f32) -> Scalar {
        Scalar::float(v, BitSize::B32)
    }

    #[test]
    fn floats_within_tolerance_match() {
        assert!(scalars_match(f(1000.0), f(1000.9), &cfg()));
        assert!(!scalars_match(f(1000.0), f(1001.1), &cfg()));
        // Below magnitude 1 the tolerance is absolute.
        assert!(scalars_match(f(0.0), f(0.0009), &cfg()));
        assert!(!scalars_match(f(0.0), f(0.0011), &cfg()));
        assert!(scalars_match(f(f32::NAN), f(-f32::NAN), &cfg()));
        assert!(!scalars_match(f(f32::INFINITY), f(f32::MAX), &cfg()));
        assert!(!scalars_match(
            f(f32::INFINITY),
            f(f32::NEG_INFINITY),
            &cfg()
        ));
        // Interpolation turns Inf into NaN; the inexact laws may keep the Inf.
        assert!(scalars_match(f(f32::NAN), f(f32::INFINITY), &cfg()));
        assert!(!scalars_match(f(f32::NAN), f(1.0), &cfg()));
        let strict = EquivConfig {
            nan_matches_inf: false,
            ..cfg()
        };
        assert!(!scalars_match(f(f32::NAN), f(f32::INFINITY), &strict));
    }

    #[test]
    fn integers_compare_exactly() {
        let i = |v: u32| Scalar::new(v, BitSize::B32);
        assert!(!scalars_match(i(1), i(2), &cfg()));
        // -1 and -2 are NaN patterns with payloads: not floats.
        assert!(!scalars_match(i(u32::MAX), i(u32::MAX - 1), &cfg()));
        assert!(scalars_match(i(7), i(7), &cfg()));
    }

    #[test]
    fn halves_use_the_looser_tolerance() {
        let h = |v: f32| Scalar::float(v, BitSize::B16);
        assert!(scalars_match(h(100.0), h(100.5), &cfg()));
        assert!(!scalars_match(h(100.0), h(102.0), &cfg()));
    }

    fn observation(value: Scalar) -> Observation {
        let mut o = Observation::new(0);
        o.insert(None, &[], Item::Output("DATA0.x".parse().unwrap()), value);
        o
    }

    #[test]
    fn the_second_pipeline_may_not_be_less_defined() {
        let (def, undef) = (
            observation(f(3.0)),
            observation(Scalar::undef(BitSize::B32)),
        );
        assert!(
            compare(&undef, &def, &cfg()).is_none(),
            "more defined is fine"
        );
        assert!(
            compare(&def, &undef, &cfg()).is_some(),
            "less defined is wrong code"
        );
        let symmetric = EquivConfig {
            refinement: false,
            ..cfg()
        };
        assert!(compare(&def, &undef, &symmetric).is_none());
    }

    #[test]
    fn undefined_matches_anything() {
        assert!(scalars_match(Scalar::undef(BitSize::B32), f(3.0), &cfg()));
        assert!(scalars_match(f(3.0), Scalar::undef(BitSize::B16), &cfg()));
    }
}
