//! The values a rule is tried on: a small seeded generator and, per bit size, edge
//! values (zeros of both signs, ±1, denormals, the largest finite float, infinities and
//! NaN, integer minimum and maximum) mixed with random floats, small integers and raw
//! bit patterns. Inexact rules only see zeros and normal floats: NIR's default float
//! mode, which their laws rely on, promises nothing about Inf, NaN and denormals.

use crate::interpreter::Scalar;
use crate::ir::{from_f32, BitSize};

/// splitmix64: a tiny seeded generator; the checker must be deterministic, and one
/// stream per rule keeps a rule's verdict independent of the others in its file.
#[derive(Clone, Debug)]
pub(super) struct Rng(u64);

impl Rng {
    pub(super) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (n > 0).
    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A float in `[lo, hi)`.
    pub(super) fn float(&mut self, lo: f32, hi: f32) -> f32 {
        let unit = (self.next() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * unit
    }
}

/// 32-bit patterns worth trying in every rule that allows them.
const EDGE32: &[u32] = &[
    0x0000_0000, // +0, integer 0
    0x8000_0000, // -0, i32::MIN
    0x3f80_0000, // 1.0
    0xbf80_0000, // -1.0
    0x3f00_0000, // 0.5
    0x4000_0000, // 2.0
    0x0000_0001, // smallest denormal, integer 1
    0x0080_0000, // smallest normal
    0x7f7f_ffff, // largest finite
    0xff7f_ffff, // most negative finite
    0x0000_0002, // integer 2
    0x7f80_0000, // +inf
    0xff80_0000, // -inf
    0x7fc0_0000, // NaN
    0xffff_ffff, // integer -1
    0x7fff_ffff, // i32::MAX
];

/// 16-bit patterns worth trying.
const EDGE16: &[u32] = &[
    0x0000, 0x8000, 0x3c00, 0xbc00, 0x3800, 0x4000, 0x0001, 0x0400, 0x7bff, 0xfbff, 0x0002, 0x7c00,
    0xfc00, 0x7e00, 0xffff, 0x7fff,
];

/// Small, readable values tried first, so that a counterexample is easy to follow.
const SIMPLE: &[f32] = &[1.0, 2.0, 0.5, 3.0, -1.0, 0.0, 4.0, -2.0];

/// Whether `bits` of `size` read as a zero or a normal float (or are a boolean): the
/// values NIR's default float mode keeps its promises for.
pub(super) fn plain(bits: u32, size: BitSize) -> bool {
    match size {
        BitSize::B1 => true,
        BitSize::B16 => {
            let h = half::f16::from_bits(bits as u16);
            h.is_normal() || h.to_f32() == 0.0
        }
        BitSize::B32 => {
            let f = f32::from_bits(bits);
            f == 0.0 || f.is_normal()
        }
    }
}

/// How values are drawn for one case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Draw {
    /// From the small readable floats (the first cases).
    Simple,
    /// Edges or random values, anything the float mode allows.
    Any,
}

/// One value of `size`. With `plain_only`, infinities, NaN and denormals (read as
/// floats) are never returned.
pub(super) fn value(rng: &mut Rng, size: BitSize, draw: Draw, plain_only: bool) -> Scalar {
    loop {
        let bits = raw(rng, size, draw);
        if !plain_only || plain(bits, size) {
            return Scalar::new(bits, size);
        }
    }
}

fn raw(rng: &mut Rng, size: BitSize, draw: Draw) -> u32 {
    if size == BitSize::B1 {
        return (rng.next() & 1) as u32;
    }
    if draw == Draw::Simple {
        return from_f32(SIMPLE[rng.below(SIMPLE.len())], size);
    }
    let edges = if size == BitSize::B16 { EDGE16 } else { EDGE32 };
    match rng.below(10) {
        0..=3 => edges[rng.below(edges.len())],
        4 | 5 => from_f32(rng.float(-8.0, 8.0), size),
        6 => {
            // Magnitudes across the range (1e-6 .. 1e6), either sign.
            let m = 10f32.powf(rng.float(-6.0, 6.0));
            from_f32(if rng.next() & 1 == 0 { m } else { -m }, size)
        }
        7 => from_f32(rng.below(17) as f32 - 8.0, size),
        8 => (rng.below(33) as i32 - 16) as u32 & size.mask(),
        _ => rng.next() as u32 & size.mask(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_only_never_gives_inf_nan_or_denormals() {
        let mut rng = Rng::new(7);
        for size in [BitSize::B16, BitSize::B32] {
            for _ in 0..2000 {
                let v = value(&mut rng, size, Draw::Any, true);
                assert!(plain(v.bits, size), "{v}");
                let f = v.as_f32();
                let smallest = if size == BitSize::B16 {
                    6.1e-5
                } else {
                    f32::MIN_POSITIVE
                };
                assert!(f == 0.0 || (f.is_finite() && f.abs() >= smallest), "{v}");
            }
        }
    }

    #[test]
    fn edges_include_the_specials() {
        let mut rng = Rng::new(1);
        let seen: Vec<u32> = (0..4000)
            .map(|_| value(&mut rng, BitSize::B32, Draw::Any, false).bits)
            .collect();
        for special in [
            0x8000_0000,
            0x7f80_0000,
            0x7fc0_0000,
            0x0000_0001,
            0x7fff_ffff,
        ] {
            assert!(seen.contains(&special), "{special:#x} never drawn");
        }
    }
}
