//! The meaning of opaque operations that touch 64-bit values (`double`, `int64_t`).
//! The IR carries a 64-bit scalar as two 32-bit words, low word first; import turns
//! every SPIR-V instruction on such values into opaque operations, one per result
//! word. Here the words are put back together and the instruction is evaluated at
//! full width: core arithmetic, conversions, comparisons, bitwise ops and the
//! `GLSL.std.450` functions a `double` program uses. Anything else gets a
//! deterministic stand-in like other opaque ops (smooth for floats, a hash otherwise).

use rspirv::spirv::Op;

use crate::ir::{to_f32, BitSize, OpaqueCode, OpaqueOp, ScalarTy};

use super::inputs::Inputs;
use super::matrix::{determinant, inverse};
use super::Scalar;

/// Whether an operation's operands or result include a 64-bit type.
pub(crate) fn involves(op: &OpaqueOp) -> bool {
    let result = op.result.iter().map(|r| r.0);
    op.args
        .iter()
        .copied()
        .chain(result)
        .any(|t| t.scalar.is_wide())
}

/// One decoded scalar operand: its raw bits (up to 64) and its SPIR-V type.
#[derive(Clone, Copy, Debug)]
struct Num {
    bits: u64,
    ty: ScalarTy,
}

impl Num {
    fn f(self) -> f64 {
        match self.ty {
            ScalarTy::F64 => f64::from_bits(self.bits),
            ScalarTy::F32 => to_f32(self.bits as u32, BitSize::B32) as f64,
            ScalarTy::F16 => to_f32(self.bits as u32, BitSize::B16) as f64,
            _ => self.i() as f64,
        }
    }

    /// The value as a signed integer (sign-extended from its width).
    fn i(self) -> i64 {
        match self.ty {
            ScalarTy::I32 => self.bits as u32 as i32 as i64,
            ScalarTy::I16 => self.bits as u16 as i16 as i64,
            _ => self.bits as i64,
        }
    }

    /// The value as an unsigned integer (zero-extended from its width).
    fn u(self) -> u64 {
        self.bits
    }
}

/// A result before encoding.
enum Out {
    F(f64),
    I(u64),
    B(bool),
}

/// The operand groups decoded into scalars, one `Vec` per SPIR-V operand.
fn decode(op: &OpaqueOp, vals: &[Scalar]) -> Option<Vec<Vec<Num>>> {
    let mut at = 0;
    let mut groups = vec![];
    for a in &op.args {
        let mut comps = vec![];
        for _ in 0..a.components() {
            let bits = if a.scalar.is_wide() {
                let (lo, hi) = (vals.get(at)?, vals.get(at + 1)?);
                at += 2;
                lo.bits as u64 | (hi.bits as u64) << 32
            } else {
                at += 1;
                vals.get(at - 1)?.bits as u64
            };
            comps.push(Num { bits, ty: a.scalar });
        }
        groups.push(comps);
    }
    Some(groups)
}

/// Encodes a result component as raw bits of type `ty` (at most 64).
fn encode(out: Out, ty: ScalarTy) -> u64 {
    let from_f = |x: f64| match ty {
        ScalarTy::F64 => x.to_bits(),
        ScalarTy::F32 | ScalarTy::F16 => crate::ir::from_f32(x as f32, ty.bits()) as u64,
        ScalarTy::I64 | ScalarTy::I32 | ScalarTy::I16 => x as i64 as u64,
        ScalarTy::U64 | ScalarTy::U32 | ScalarTy::U16 => x as u64,
        ScalarTy::Bool => (x != 0.0) as u64,
    };
    let width_mask = match ty {
        ScalarTy::F64 | ScalarTy::I64 | ScalarTy::U64 => u64::MAX,
        _ => ty.bits().mask() as u64,
    };
    let bits = match out {
        Out::F(x) => from_f(x),
        Out::I(x) if ty.is_float() || ty == ScalarTy::F64 => from_f(x as i64 as f64),
        Out::I(x) => x,
        Out::B(b) => b as u64,
    };
    bits & width_mask
}

/// The value of result word `comp` of a 64-bit operation (see the module comment).
pub(crate) fn value(op: &OpaqueOp, vals: &[Scalar], inputs: &Inputs, size: BitSize) -> Scalar {
    let Some((ty, comp)) = op.result else {
        return Scalar::undef(size);
    };
    let per = ty.scalar.words();
    let (index, word) = (comp as usize / per, comp as usize % per);
    let bits = match decode(op, vals).and_then(|g| eval(op, &g, ty.components())) {
        Some(outs) => match outs.into_iter().nth(index) {
            Some(o) => encode(o, ty.scalar),
            None => return Scalar::undef(size),
        },
        None => stand_in(op, index, vals, inputs),
    };
    Scalar::new((bits >> (32 * word)) as u32, size)
}

/// A deterministic stand-in for result component `index` of an operation without a
/// real meaning here.
fn stand_in(op: &OpaqueOp, index: usize, vals: &[Scalar], inputs: &Inputs) -> u64 {
    let Some((ty, _)) = op.result else { return 0 };
    let key = super::opaque::op_key(op) ^ ((index as u64) << 48);
    if matches!(ty.scalar, ScalarTy::F64 | ScalarTy::F32 | ScalarTy::F16) {
        let xs: Vec<f32> = decode(op, vals)
            .unwrap_or_default()
            .iter()
            .flatten()
            .map(|n| n.f() as f32)
            .collect();
        encode(Out::F(inputs.smooth(key, &xs) as f64), ty.scalar)
    } else {
        let bits: Vec<u64> = vals.iter().map(|v| v.bits as u64).collect();
        encode(Out::I(inputs.opaque_hash(key, &bits)), ty.scalar)
    }
}

/// All result components, or `None` when the operation has no real meaning here.
fn eval(op: &OpaqueOp, groups: &[Vec<Num>], n: usize) -> Option<Vec<Out>> {
    match &op.code {
        OpaqueCode::Core(code) => {
            let code = Op::from_u32(*code)?;
            componentwise(groups, n, |a| core(code, a))
        }
        OpaqueCode::Ext(set, code) if set == "GLSL.std.450" => match *code {
            33 | 34 | 66..=72 => whole_glsl(*code, groups),
            _ => componentwise(groups, n, |a| glsl(*code, a)),
        },
        _ => None,
    }
}

/// Applies a scalar function to component `i` of every operand (a scalar operand is
/// used for every component).
fn componentwise(
    groups: &[Vec<Num>],
    n: usize,
    f: impl Fn(&[Num]) -> Option<Out>,
) -> Option<Vec<Out>> {
    (0..n)
        .map(|i| {
            let args: Option<Vec<Num>> = groups
                .iter()
                .map(|g| g.get(i).or_else(|| (g.len() == 1).then(|| &g[0])).copied())
                .collect();
            f(&args?)
        })
        .collect()
}

/// A core instruction on scalars.
fn core(code: Op, a: &[Num]) -> Option<Out> {
    use Op::*;
    let x = *a.first()?;
    let y = a.get(1).copied();
    let fy = || y.map(Num::f);
    let (uy, iy) = (y.map(Num::u), y.map(Num::i));
    // Integer ops wrap at the operand's width; encoding masks the result.
    Some(match code {
        ConvertFToU => Out::I(x.f() as u64),
        ConvertFToS => Out::I(x.f() as i64 as u64),
        ConvertSToF => Out::F(x.i() as f64),
        ConvertUToF => Out::F(x.u() as f64),
        UConvert => Out::I(x.u()),
        SConvert => Out::I(x.i() as u64),
        FConvert => Out::F(x.f()),
        SNegate => Out::I(x.i().wrapping_neg() as u64),
        FNegate => Out::F(-x.f()),
        IAdd => Out::I(x.u().wrapping_add(uy?)),
        ISub => Out::I(x.u().wrapping_sub(uy?)),
        IMul => Out::I(x.u().wrapping_mul(uy?)),
        UDiv => Out::I(x.u().checked_div(uy?).unwrap_or(0)),
        SDiv => Out::I(x.i().checked_div(iy?).unwrap_or(0) as u64),
        UMod => Out::I(x.u().checked_rem(uy?).unwrap_or(0)),
        SRem => Out::I(x.i().checked_rem(iy?).unwrap_or(0) as u64),
        SMod => {
            let (p, q) = (x.i(), iy?);
            let r = p.checked_rem(q).unwrap_or(0);
            Out::I(if r != 0 && (r < 0) != (q < 0) {
                r + q
            } else {
                r
            } as u64)
        }
        FAdd => Out::F(x.f() + fy()?),
        FSub => Out::F(x.f() - fy()?),
        FMul => Out::F(x.f() * fy()?),
        FDiv => Out::F(x.f() / fy()?),
        FRem => Out::F(x.f() % fy()?),
        FMod => {
            let (p, q) = (x.f(), fy()?);
            Out::F(p - q * (p / q).floor())
        }
        IsNan => Out::B(x.f().is_nan()),
        IsInf => Out::B(x.f().is_infinite()),
        IEqual => Out::B(x.u() == uy?),
        INotEqual => Out::B(x.u() != uy?),
        UGreaterThan => Out::B(x.u() > uy?),
        SGreaterThan => Out::B(x.i() > iy?),
        UGreaterThanEqual => Out::B(x.u() >= uy?),
        SGreaterThanEqual => Out::B(x.i() >= iy?),
        ULessThan => Out::B(x.u() < uy?),
        SLessThan => Out::B(x.i() < iy?),
        ULessThanEqual => Out::B(x.u() <= uy?),
        SLessThanEqual => Out::B(x.i() <= iy?),
        FOrdEqual => Out::B(x.f() == fy()?),
        FUnordEqual => Out::B(unordered(x.f(), fy()?) || x.f() == fy()?),
        FOrdNotEqual => Out::B(x.f() < fy()? || x.f() > fy()?),
        FUnordNotEqual => Out::B(x.f() != fy()?),
        FOrdLessThan => Out::B(x.f() < fy()?),
        FUnordLessThan => Out::B(unordered(x.f(), fy()?) || x.f() < fy()?),
        FOrdGreaterThan => Out::B(x.f() > fy()?),
        FUnordGreaterThan => Out::B(unordered(x.f(), fy()?) || x.f() > fy()?),
        FOrdLessThanEqual => Out::B(x.f() <= fy()?),
        FUnordLessThanEqual => Out::B(unordered(x.f(), fy()?) || x.f() <= fy()?),
        FOrdGreaterThanEqual => Out::B(x.f() >= fy()?),
        FUnordGreaterThanEqual => Out::B(unordered(x.f(), fy()?) || x.f() >= fy()?),
        // Shift amounts past the width are undefined in SPIR-V; here they wrap.
        ShiftRightLogical => Out::I(x.u().wrapping_shr(uy? as u32)),
        ShiftRightArithmetic => Out::I(x.i().wrapping_shr(uy? as u32) as u64),
        ShiftLeftLogical => Out::I(x.u().wrapping_shl(uy? as u32)),
        BitwiseOr => Out::I(x.u() | uy?),
        BitwiseXor => Out::I(x.u() ^ uy?),
        BitwiseAnd => Out::I(x.u() & uy?),
        Not => Out::I(!x.u()),
        BitCount => Out::I(x.u().count_ones() as u64),
        BitReverse => Out::I(x.u().reverse_bits()),
        _ => return None,
    })
}

/// Whether either operand is NaN (the unordered comparisons are then true).
fn unordered(a: f64, b: f64) -> bool {
    a.is_nan() || b.is_nan()
}

/// A componentwise `GLSL.std.450` function on scalars.
fn glsl(code: u32, a: &[Num]) -> Option<Out> {
    let x = *a.first()?;
    let f = |i: usize| a.get(i).map(|n| n.f());
    let (fx, fy, fz) = (x.f(), f(1), f(2));
    Some(Out::F(match code {
        1 => fx.round(),
        2 => fx.round_ties_even(),
        3 => fx.trunc(),
        4 => fx.abs(),
        5 => return Some(Out::I(x.i().wrapping_abs() as u64)),
        6 => match fx {
            v if v > 0.0 => 1.0,
            v if v < 0.0 => -1.0,
            v => v,
        },
        7 => return Some(Out::I(x.i().signum() as u64)),
        8 => fx.floor(),
        9 => fx.ceil(),
        10 => fx - fx.floor(),
        31 => fx.sqrt(),
        32 => 1.0 / fx.sqrt(),
        37 | 79 => fx.min(fy?),
        38 => return Some(Out::I(x.u().min(a.get(1)?.u()))),
        39 => return Some(Out::I(x.i().min(a.get(1)?.i()) as u64)),
        40 | 80 => fx.max(fy?),
        41 => return Some(Out::I(x.u().max(a.get(1)?.u()))),
        42 => return Some(Out::I(x.i().max(a.get(1)?.i()) as u64)),
        43 | 81 => fx.max(fy?).min(fz?),
        44 => {
            let (lo, hi) = (a.get(1)?.u(), a.get(2)?.u());
            return Some(Out::I(x.u().max(lo).min(hi)));
        }
        45 => {
            let (lo, hi) = (a.get(1)?.i(), a.get(2)?.i());
            return Some(Out::I(x.i().max(lo).min(hi) as u64));
        }
        46 => fx * (1.0 - fz?) + fy? * fz?,
        48 => {
            if fy? < fx {
                0.0
            } else {
                1.0
            }
        }
        49 => {
            let t = ((fz? - fx) / (fy? - fx)).clamp(0.0, 1.0);
            t * t * (3.0 - 2.0 * t)
        }
        50 => fx.mul_add(fy?, fz?),
        53 => fx * 2f64.powi(a.get(1)?.i().clamp(-2100, 2100) as i32),
        _ => return None,
    }))
}

/// `GLSL.std.450` functions over whole vectors and matrices: determinant, inverse,
/// length, distance, cross, normalize, faceforward, reflect, refract.
fn whole_glsl(code: u32, groups: &[Vec<Num>]) -> Option<Vec<Out>> {
    let v = |i: usize| -> Option<Vec<f64>> { Some(groups.get(i)?.iter().map(|n| n.f()).collect()) };
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let fs = |xs: Vec<f64>| xs.into_iter().map(Out::F).collect();
    Some(match code {
        33 => vec![Out::F(determinant(&v(0)?)?)],
        34 => fs(inverse(&v(0)?)?),
        66 => vec![Out::F(dot(&v(0)?, &v(0)?).sqrt())],
        67 => {
            let d: Vec<f64> = v(0)?.iter().zip(&v(1)?).map(|(a, b)| a - b).collect();
            vec![Out::F(dot(&d, &d).sqrt())]
        }
        68 => {
            let (a, b) = (v(0)?, v(1)?);
            if a.len() != 3 || b.len() != 3 {
                return None;
            }
            let c = |i: usize, j: usize| a[i] * b[j] - a[j] * b[i];
            fs(vec![c(1, 2), c(2, 0), c(0, 1)])
        }
        69 => {
            let a = v(0)?;
            let len = dot(&a, &a).sqrt();
            fs(a.iter().map(|x| x / len).collect())
        }
        70 => {
            let (n, i, nref) = (v(0)?, v(1)?, v(2)?);
            let keep = dot(&nref, &i) < 0.0;
            fs(n.iter().map(|x| if keep { *x } else { -x }).collect())
        }
        71 => {
            let (i, n) = (v(0)?, v(1)?);
            let k = 2.0 * dot(&n, &i);
            fs(i.iter().zip(&n).map(|(a, b)| a - k * b).collect())
        }
        72 => {
            let (i, n, eta) = (v(0)?, v(1)?, *v(2)?.first()?);
            let d = dot(&n, &i);
            let k = 1.0 - eta * eta * (1.0 - d * d);
            if k < 0.0 {
                fs(vec![0.0; i.len()])
            } else {
                let s = eta * d + k.sqrt();
                fs(i.iter().zip(&n).map(|(a, b)| eta * a - s * b).collect())
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{OpaqueTy, Purity};

    fn op(code: &str, result: &str, args: &[&str]) -> OpaqueOp {
        OpaqueOp {
            name: "t".into(),
            purity: Purity::Pure,
            code: code.parse().unwrap(),
            result: Some(crate::ir::parse_opaque_result(result).unwrap()),
            args: args
                .iter()
                .map(|a| a.parse::<OpaqueTy>().unwrap())
                .collect(),
            resource: None,
        }
    }

    fn words(x: u64) -> [Scalar; 2] {
        [
            Scalar::new(x as u32, BitSize::B32),
            Scalar::new((x >> 32) as u32, BitSize::B32),
        ]
    }

    /// The 64-bit result of an operation with one result component, from both words.
    fn run(code: &str, ty: &str, args: &[&str], vals: &[Scalar]) -> u64 {
        let inputs = Inputs::new(1);
        let lo = op(code, &format!("{ty}.0"), args);
        let hi = op(code, &format!("{ty}.1"), args);
        let l = value(&lo, vals, &inputs, BitSize::B32).bits as u64;
        let h = value(&hi, vals, &inputs, BitSize::B32).bits as u64;
        l | h << 32
    }

    #[test]
    fn double_arithmetic_is_exact() {
        let (a, b) = (0.1f64, 0.2f64);
        let vals: Vec<Scalar> = words(a.to_bits())
            .into_iter()
            .chain(words(b.to_bits()))
            .collect();
        let sum = run("op:129", "f64", &["f64", "f64"], &vals);
        // 0.1 + 0.2 in double precision, not the single-precision sum.
        assert_eq!(f64::from_bits(sum), 0.1 + 0.2);
        let fma = op("ext:GLSL.std.450:8", "f64.1", &["f64"]);
        let v = words((-1.5f64).to_bits());
        let hi = value(&fma, &v, &Inputs::new(1), BitSize::B32).bits;
        assert_eq!(hi, ((-2.0f64).to_bits() >> 32) as u32);
    }

    #[test]
    fn int64_wraps_and_converts() {
        let vals: Vec<Scalar> = words(u64::MAX).into_iter().chain(words(2)).collect();
        assert_eq!(run("op:128", "i64", &["i64", "i64"], &vals), 1);
        // int64 -> int32 keeps the low bits; int32 -> double converts the value.
        let inputs = Inputs::new(1);
        let narrow = op("op:114", "i32", &["i64"]);
        let w = words((-5i64) as u64);
        assert_eq!(value(&narrow, &w, &inputs, BitSize::B32).bits, -5i32 as u32);
        let widen = [Scalar::new(-3i32 as u32, BitSize::B32)];
        let d = run("op:111", "f64", &["i32"], &widen);
        assert_eq!(f64::from_bits(d), -3.0);
        let lt = op("op:184", "bool", &["f64", "f64"]);
        let vals: Vec<Scalar> = words(1f64.to_bits())
            .into_iter()
            .chain(words(2f64.to_bits()))
            .collect();
        assert_eq!(value(&lt, &vals, &inputs, BitSize::B1).bits, 1);
    }

    #[test]
    fn whole_vector_functions() {
        // length(dvec2(3, 4)) = 5.
        let vals: Vec<Scalar> = [3f64, 4f64]
            .iter()
            .flat_map(|x| words(x.to_bits()))
            .collect();
        let len = run("ext:GLSL.std.450:66", "f64", &["f64x2"], &vals);
        assert_eq!(f64::from_bits(len), 5.0);
        // inverse(diag(2, 4)) has 1/4 at column 1 row 1 (words 6 and 7).
        let m: Vec<Scalar> = [2f64, 0.0, 0.0, 4.0]
            .iter()
            .flat_map(|x| words(x.to_bits()))
            .collect();
        let inputs = Inputs::new(1);
        let lo = value(
            &op("ext:GLSL.std.450:34", "f64x2x2.6", &["f64x2x2"]),
            &m,
            &inputs,
            BitSize::B32,
        );
        let hi = value(
            &op("ext:GLSL.std.450:34", "f64x2x2.7", &["f64x2x2"]),
            &m,
            &inputs,
            BitSize::B32,
        );
        assert_eq!(
            f64::from_bits(lo.bits as u64 | (hi.bits as u64) << 32),
            0.25
        );
    }

    #[test]
    fn stand_ins_are_deterministic_and_depend_on_operands() {
        let inputs = Inputs::new(2);
        let dx = op("op:207", "f64.1", &["f64"]);
        let a = value(&dx, &words(1f64.to_bits()), &inputs, BitSize::B32);
        let b = value(&dx, &words(1f64.to_bits()), &inputs, BitSize::B32);
        let c = value(&dx, &words(3f64.to_bits()), &inputs, BitSize::B32);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
