//! The meaning the interpreter gives opaque operations. Where it is cheap the real one
//! (`atan2`, `acos`, matrix inverse, `refract`, bitfield extract, ...); otherwise a
//! deterministic stand-in: float results are a smooth function of the operands (so
//! operands that differ only by rounding, as inexact laws allow, give nearly the same
//! result), integer and boolean results a hash of the operand bits. Effects are
//! recorded as writes to a storage word keyed by the operation and its operands, so
//! an effect dropped, duplicated or fed different operands changes the observations.

use crate::ir::{BitSize, OpaqueCode, OpaqueOp, Purity, ScalarTy};

use super::inputs::Inputs;
use super::matrix::{determinant, inverse};
use super::Scalar;

/// Storage buffers at or above this binding hold the records of opaque effects.
pub const EFFECT_BUFFER_BASE: u32 = 0xffff_0000;

/// FNV-1a over the operation's text: a key stable across runs and builds.
pub(crate) fn op_key(op: &OpaqueOp) -> u64 {
    let text = op.to_string();
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The operands read as floats (by their declared types), one per scalar operand.
fn floats(op: &OpaqueOp, vals: &[Scalar]) -> Vec<f32> {
    let tys = op
        .args
        .iter()
        .flat_map(|a| std::iter::repeat_n(a.scalar, a.components()));
    vals.iter()
        .zip(tys)
        .map(|(v, t)| match t {
            ScalarTy::F32 | ScalarTy::F16 => v.as_f32(),
            ScalarTy::I32 | ScalarTy::I16 => sign_extend(v.bits, v.size) as f32,
            ScalarTy::U32 | ScalarTy::U16 | ScalarTy::Bool => v.bits as f32,
            // Not reached: operations on 64-bit values are evaluated by `wide`.
            ScalarTy::F64 | ScalarTy::I64 | ScalarTy::U64 => v.bits as f32,
        })
        .collect()
}

fn sign_extend(bits: u32, size: BitSize) -> i32 {
    match size {
        BitSize::B16 => bits as u16 as i16 as i32,
        BitSize::B1 => -((bits & 1) as i32),
        BitSize::B32 => bits as i32,
    }
}

/// The value of an opaque op with a result, given its defined operands.
pub(crate) fn value(op: &OpaqueOp, vals: &[Scalar], inputs: &Inputs, size: BitSize) -> Scalar {
    if super::wide::involves(op) {
        return super::wide::value(op, vals, inputs, size);
    }
    let Some((ty, comp)) = op.result else {
        return Scalar::undef(size);
    };
    if let Some(v) = real(op, comp, vals) {
        return match ty.scalar.is_float() {
            true => Scalar::float(v.as_float(), size),
            false => Scalar::new(v.as_bits(), size),
        };
    }
    let key = op_key(op) ^ ((comp as u64) << 48);
    if ty.scalar.is_float() {
        Scalar::float(inputs.smooth(key, &floats(op, vals)), size)
    } else {
        let bits: Vec<u64> = vals.iter().map(|v| v.bits as u64).collect();
        Scalar::new(inputs.opaque_hash(key, &bits) as u32, size)
    }
}

/// Where an effect is recorded: a synthetic buffer and word keyed by the operation and
/// its operand bits (never [`WILD_EFFECTS`]).
pub(crate) fn effect_address(op: &OpaqueOp, vals: &[Scalar]) -> (u32, u32) {
    debug_assert_eq!(op.purity, Purity::Effect);
    let mut h = op_key(op);
    for v in vals {
        h = (h ^ v.bits as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    (effect_buffer(op), ((h >> 16) as u32).min(WILD_EFFECTS - 1))
}

/// The synthetic buffer that records the effects of `op`.
pub(crate) fn effect_buffer(op: &OpaqueOp) -> u32 {
    EFFECT_BUFFER_BASE | (op_key(op) as u32 & 0xffff)
}

/// The word of an effect buffer that marks it wild: an execution of the effect with
/// an undefined operand, or under undefined control flow, did something unknown, so
/// every record of that buffer may hold anything (see `equiv::compare`).
pub const WILD_EFFECTS: u32 = u32::MAX;

/// A real result: a float or raw bits.
enum Real {
    Float(f32),
    Bits(u32),
}

impl Real {
    fn as_float(&self) -> f32 {
        match self {
            Real::Float(f) => *f,
            Real::Bits(b) => f32::from_bits(*b),
        }
    }

    fn as_bits(&self) -> u32 {
        match self {
            Real::Float(f) => f.to_bits(),
            Real::Bits(b) => *b,
        }
    }
}

fn real(op: &OpaqueOp, comp: u8, vals: &[Scalar]) -> Option<Real> {
    let f = |i: usize| vals.get(i).map(|v| v.as_f32());
    let u = |i: usize| vals.get(i).map(|v| v.bits);
    match &op.code {
        OpaqueCode::Ext(set, n) if set == "GLSL.std.450" => glsl(*n, comp, vals, &f),
        OpaqueCode::Ext(set, n) if set == "SPV_AMD_shader_trinary_minmax" => {
            trinary(*n, op, comp, vals)
        }
        OpaqueCode::Core(code) => {
            let width = vals.first()?.size.bits();
            let r = match code {
                201 => bitfield_insert(u(0)?, u(1)?, u(2)?, u(3)?, width),
                202 => bitfield_extract(u(0)?, u(1)?, u(2)?, width, true),
                203 => bitfield_extract(u(0)?, u(1)?, u(2)?, width, false),
                204 => u(0)?.reverse_bits() >> (32 - width),
                205 => u(0)?.count_ones(),
                // The high words of OpUMulExtended / OpSMulExtended.
                151 => ((u(0)? as u64 * u(1)? as u64) >> 32) as u32,
                152 => ((u(0)? as i32 as i64 * u(1)? as i32 as i64) >> 32) as u32,
                _ => return None,
            };
            Some(Real::Bits(r))
        }
        _ => None,
    }
}

/// `SPV_AMD_shader_trinary_minmax` (1-9: f/u/s min3, max3, mid3), componentwise
/// over three operands of one type.
fn trinary(n: u32, op: &OpaqueOp, comp: u8, vals: &[Scalar]) -> Option<Real> {
    let k = op.args.first()?.components();
    let at = |j: usize| vals.get(j * k + comp as usize).copied();
    let (a, b, c) = (at(0)?, at(1)?, at(2)?);
    let kind = (n.checked_sub(1)? % 3) as u8; // 0 float, 1 unsigned, 2 signed
    let which = (n - 1) / 3; // 0 min, 1 max, 2 mid
    let key = |s: Scalar| -> f64 {
        match kind {
            0 => s.as_f32() as f64,
            1 => s.bits as f64,
            _ => sign_extend(s.bits, s.size) as f64,
        }
    };
    let mut v = [a, b, c];
    v.sort_by(|x, y| key(*x).total_cmp(&key(*y)));
    let r = match which {
        0 => v[0],
        1 => v[2],
        2 => v[1],
        _ => return None,
    };
    Some(match kind {
        0 => Real::Float(r.as_f32()),
        _ => Real::Bits(r.bits),
    })
}

fn glsl(n: u32, comp: u8, vals: &[Scalar], f: &dyn Fn(usize) -> Option<f32>) -> Option<Real> {
    let x = f(0)?;
    let v = match n {
        2 => x.round_ties_even(),
        16 => x.asin(),
        17 => x.acos(),
        18 => x.atan(),
        19 => x.sinh(),
        20 => x.cosh(),
        21 => x.tanh(),
        22 => x.asinh(),
        23 => x.acosh(),
        24 => x.atanh(),
        25 => x.atan2(f(1)?),
        33 => determinant(&all(vals))?,
        34 => *inverse(&all(vals))?.get(comp as usize)?,
        72 => refract(&all(vals), comp as usize)?,
        73 => return Some(Real::Bits(find_lsb(vals[0].bits))),
        74 => return Some(Real::Bits(find_smsb(vals[0].bits))),
        75 => return Some(Real::Bits(find_umsb(vals[0].bits))),
        _ => return None,
    };
    Some(Real::Float(v))
}

fn all(vals: &[Scalar]) -> Vec<f32> {
    vals.iter().map(|v| v.as_f32()).collect()
}

fn mask(count: u32) -> u32 {
    if count >= 32 {
        u32::MAX
    } else {
        (1u32 << count) - 1
    }
}

/// `OpBitFieldInsert`; offsets and counts out of range give an undefined result in
/// SPIR-V, here the insert clamped to the width.
fn bitfield_insert(base: u32, insert: u32, offset: u32, count: u32, width: u32) -> u32 {
    let offset = offset.min(width);
    let count = count.min(width - offset);
    let m = mask(count).checked_shl(offset).unwrap_or(0);
    (base & !m) | (insert.checked_shl(offset).unwrap_or(0) & m)
}

fn bitfield_extract(base: u32, offset: u32, count: u32, width: u32, signed: bool) -> u32 {
    let offset = offset.min(width);
    let count = count.min(width - offset);
    if count == 0 {
        return 0;
    }
    let field = (base.checked_shr(offset).unwrap_or(0)) & mask(count);
    let sign = signed && field >> (count - 1) & 1 == 1;
    match sign {
        true => field | !mask(count),
        false => field,
    }
}

fn find_lsb(x: u32) -> u32 {
    match x {
        0 => u32::MAX,
        _ => x.trailing_zeros(),
    }
}

fn find_umsb(x: u32) -> u32 {
    match x {
        0 => u32::MAX,
        _ => 31 - x.leading_zeros(),
    }
}

fn find_smsb(x: u32) -> u32 {
    let x = x as i32;
    find_umsb(if x < 0 { !x as u32 } else { x as u32 })
}

/// `refract(I, N, eta)` for vectors of `(len - 1) / 2` components.
fn refract(v: &[f32], comp: usize) -> Option<f32> {
    let n = (v.len().checked_sub(1))? / 2;
    let (i, nn, eta) = (&v[..n], &v[n..2 * n], v[2 * n]);
    let d: f32 = i.iter().zip(nn).map(|(a, b)| a * b).sum();
    let k = 1.0 - eta * eta * (1.0 - d * d);
    if k < 0.0 {
        return Some(0.0);
    }
    Some(eta * i.get(comp)? - (eta * d + k.sqrt()) * nn.get(comp)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::OpaqueTy;

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

    fn f(x: f32) -> Scalar {
        Scalar::float(x, BitSize::B32)
    }

    #[test]
    fn real_meanings() {
        let inputs = Inputs::new(1);
        let atan2 = op("ext:GLSL.std.450:25", "f32", &["f32", "f32"]);
        let r = value(&atan2, &[f(1.0), f(-1.0)], &inputs, BitSize::B32);
        assert_eq!(r.as_f32(), 1.0f32.atan2(-1.0));
        let ext = op("op:203", "u32", &["u32", "i32", "i32"]);
        let u = |x| Scalar::new(x, BitSize::B32);
        let r = value(&ext, &[u(0xabcd), u(4), u(8)], &inputs, BitSize::B32);
        assert_eq!(r.bits, 0xbc);
        let sext = op("op:202", "i32", &["i32", "i32", "i32"]);
        let r = value(&sext, &[u(0xf0), u(4), u(4)], &inputs, BitSize::B32);
        assert_eq!(r.bits, u32::MAX);
        // The inverse of [[2,0],[0,4]] (column-major) has 1/4 at column 1 row 1.
        let inv = op("ext:GLSL.std.450:34", "f32x2x2.3", &["f32x2x2"]);
        let m = [f(2.0), f(0.0), f(0.0), f(4.0)];
        assert_eq!(value(&inv, &m, &inputs, BitSize::B32).as_f32(), 0.25);
        // High words of 32 x 32 -> 64-bit products: 0xffffffff^2 = 0xfffffffe_00000001
        // unsigned; as signed it is (-1)(-1) = 1, high word 0; -2 * 3 = -6 has an
        // all-ones high word.
        let umul = op("op:151", "u32", &["u32", "u32"]);
        let r = value(&umul, &[u(u32::MAX), u(u32::MAX)], &inputs, BitSize::B32);
        assert_eq!(r.bits, 0xffff_fffe);
        let smul = op("op:152", "i32", &["i32", "i32"]);
        let r = value(&smul, &[u(u32::MAX), u(u32::MAX)], &inputs, BitSize::B32);
        assert_eq!(r.bits, 0);
        let r = value(&smul, &[u(-2i32 as u32), u(3)], &inputs, BitSize::B32);
        assert_eq!(r.bits, u32::MAX);
        // AMD trinary: smid3(-5, 7, 2) = 2; fmax3 on component 1 of vec2s.
        let smid3 = op(
            "ext:SPV_AMD_shader_trinary_minmax:9",
            "i32",
            &["i32", "i32", "i32"],
        );
        let r = value(
            &smid3,
            &[u(-5i32 as u32), u(7), u(2)],
            &inputs,
            BitSize::B32,
        );
        assert_eq!(r.bits, 2);
        let fmax3 = op(
            "ext:SPV_AMD_shader_trinary_minmax:4",
            "f32x2.1",
            &["f32x2", "f32x2", "f32x2"],
        );
        let v = [f(9.0), f(1.0), f(0.0), f(-3.0), f(9.0), f(2.5)];
        assert_eq!(value(&fmax3, &v, &inputs, BitSize::B32).as_f32(), 2.5);
    }

    #[test]
    fn stand_ins_are_smooth_for_floats_and_hashes_for_ints() {
        let inputs = Inputs::new(3);
        let dx = op("op:207", "f32", &["f32"]);
        let a = value(&dx, &[f(1.0)], &inputs, BitSize::B32).as_f32();
        let b = value(&dx, &[f(1.0 + 1e-6)], &inputs, BitSize::B32).as_f32();
        let c = value(&dx, &[f(2.0)], &inputs, BitSize::B32).as_f32();
        assert!((a - b).abs() < 1e-4 && (a - c).abs() > 1e-3);
        let h = op("op:9999", "u32", &["u32"]);
        let x = value(&h, &[Scalar::new(1, BitSize::B32)], &inputs, BitSize::B32);
        let y = value(&h, &[Scalar::new(2, BitSize::B32)], &inputs, BitSize::B32);
        assert_ne!(x, y);
    }
}
