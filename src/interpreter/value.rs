//! The interpreter's scalar: a bit pattern of 1, 16 or 32 bits plus a flag saying
//! whether it is defined. Undefined values compare equal to anything.

use std::fmt;

use crate::ir::{from_f32, to_f32, AluOp, BitSize};

/// One runtime value: a bit pattern of `size` bits and whether it is defined.
///
/// Undefined scalars always carry the pattern 0 so that two undefined values of one
/// size are identical (which keeps observations deterministic and comparable).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scalar {
    /// The bit pattern, masked to `size`.
    pub bits: u32,
    /// Width.
    pub size: BitSize,
    /// False when the value depends on undefined input.
    pub defined: bool,
}

impl Scalar {
    /// A defined value (the pattern is masked to `size`).
    pub fn new(bits: u32, size: BitSize) -> Scalar {
        Scalar {
            bits: bits & size.mask(),
            size,
            defined: true,
        }
    }

    /// An undefined value of `size`.
    pub fn undef(size: BitSize) -> Scalar {
        Scalar {
            bits: 0,
            size,
            defined: false,
        }
    }

    /// A defined float, rounded to half precision when `size` is 16 bits.
    pub fn float(v: f32, size: BitSize) -> Scalar {
        Scalar::new(from_f32(v, size), size)
    }

    /// A defined boolean.
    pub fn bool(b: bool) -> Scalar {
        Scalar::new(b as u32, BitSize::B1)
    }

    /// The pattern read as a float (half precision for 16 bits).
    pub fn as_f32(self) -> f32 {
        to_f32(self.bits, self.size)
    }

    /// The same value, undefined when `defined` is false.
    pub fn defined_if(self, defined: bool) -> Scalar {
        if defined && self.defined {
            self
        } else {
            Scalar::undef(self.size)
        }
    }

    /// The value re-read at another width: the low bits of the pattern, so a
    /// mismatched store and load still give a deterministic (masked) result.
    pub fn resized(self, size: BitSize) -> Scalar {
        Scalar {
            bits: self.bits & size.mask(),
            size,
            defined: self.defined,
        }
    }
}

/// Whether an ALU result over these operands is defined: a select needs its
/// condition and the operand it picks; every other op needs all its operands, and
/// the operands inside the op's domain ([`in_domain`]).
pub(crate) fn alu_defined(op: AluOp, vals: &[Scalar]) -> bool {
    in_domain(op, vals)
        && match (op, vals) {
            (AluOp::BCsel, [c, a, b]) => {
                c.defined
                    && if c.bits & 1 != 0 {
                        a.defined
                    } else {
                        b.defined
                    }
            }
            _ => vals.iter().all(|s| s.defined),
        }
}

/// Whether the operands lie where GLSL (4.60, section 8.2) and SPIR-V's GLSL.std.450
/// define the result: `pow(x, y)` is undefined for `x < 0` and for `x = 0, y <= 0`,
/// `inversesqrt(x)` and `log2(x)` for `x <= 0`, `sqrt(x)` for `x < 0`. A driver may
/// return anything there (NIR folds `0 * pow(x, y)` to 0 whatever `x` is), so the
/// interpreter must not hold the optimizer to the NaN an IEEE evaluation gives.
/// A NaN operand stays in the domain: its result is the defined NaN.
fn in_domain(op: AluOp, vals: &[Scalar]) -> bool {
    let x = |i: usize| vals.get(i).map_or(f32::NAN, |s| s.as_f32());
    let positive = |v: f32| v > 0.0 || v.is_nan();
    match op {
        AluOp::FPow => positive(x(0)) || (x(0) == 0.0 && positive(x(1))),
        AluOp::FRsq | AluOp::FLog2 => positive(x(0)),
        AluOp::FSqrt => positive(x(0)) || x(0) == 0.0,
        _ => true,
    }
}

impl fmt::Display for Scalar {
    /// `undef`, `true`/`false` for booleans, else the hex pattern and its float reading,
    /// e.g. `0x3f800000 (1)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.defined {
            return write!(f, "undef{}", self.size.bits());
        }
        match self.size {
            BitSize::B1 => write!(f, "{}", self.bits != 0),
            BitSize::B16 => write!(f, "0x{:04x} ({:?})", self.bits, self.as_f32()),
            BitSize::B32 => write!(f, "0x{:08x} ({:?})", self.bits, self.as_f32()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_outside_the_glsl_domain_are_undefined() {
        let f = |v: f32| Scalar::float(v, BitSize::B32);
        let undefined = [
            (AluOp::FPow, vec![f(-2.0), f(2.0)]),
            (AluOp::FPow, vec![f(0.0), f(-1.0)]),
            (AluOp::FPow, vec![f(0.0), f(0.0)]),
            (AluOp::FRsq, vec![f(0.0)]),
            (AluOp::FRsq, vec![f(-4.0)]),
            (AluOp::FLog2, vec![f(-1.0)]),
            (AluOp::FSqrt, vec![f(-1.0)]),
        ];
        for (op, vals) in undefined {
            assert!(!alu_defined(op, &vals), "{op:?} {vals:?}");
        }
        let defined = [
            (AluOp::FPow, vec![f(2.0), f(-3.0)]),
            (AluOp::FPow, vec![f(0.0), f(2.0)]),
            (AluOp::FRsq, vec![f(4.0)]),
            (AluOp::FSqrt, vec![f(0.0)]),
            (AluOp::FSqrt, vec![f(f32::NAN)]),
            (AluOp::FMul, vec![f(-1.0), f(f32::INFINITY)]),
        ];
        for (op, vals) in defined {
            assert!(alu_defined(op, &vals), "{op:?} {vals:?}");
        }
    }

    #[test]
    fn undefined_values_are_canonical() {
        let a = Scalar::new(0x1234, BitSize::B32).defined_if(false);
        assert_eq!(a, Scalar::undef(BitSize::B32));
        assert_eq!(a.to_string(), "undef32");
    }

    #[test]
    fn display_shows_hex_and_float() {
        assert_eq!(
            Scalar::float(1.0, BitSize::B32).to_string(),
            "0x3f800000 (1.0)"
        );
        assert_eq!(
            Scalar::float(-2.0, BitSize::B16).to_string(),
            "0xc000 (-2.0)"
        );
        assert_eq!(Scalar::bool(true).to_string(), "true");
    }

    #[test]
    fn new_masks_to_size() {
        assert_eq!(Scalar::new(0x1_ffff, BitSize::B16).bits, 0xffff);
        assert_eq!(Scalar::new(3, BitSize::B1).bits, 1);
    }
}
