//! Bit-exact evaluation of ALU ops on constant bit patterns. The interpreter and the
//! e-graph's constant folding both call this, so folding can never disagree with
//! execution.

use half::f16;

use super::{AluOp, BitSize};

/// Reads a bit pattern of the given size as a float (16-bit via IEEE half).
pub fn to_f32(bits: u32, size: BitSize) -> f32 {
    match size {
        BitSize::B16 => f16::from_bits(bits as u16).to_f32(),
        _ => f32::from_bits(bits),
    }
}

/// Writes a float as a bit pattern of the given size (round to nearest even for 16-bit).
pub fn from_f32(v: f32, size: BitSize) -> u32 {
    match size {
        BitSize::B16 => f16::from_f32(v).to_bits() as u32,
        _ => v.to_bits(),
    }
}

/// Sign-extends a bit pattern of the given size to i32.
pub fn to_i32(bits: u32, size: BitSize) -> i32 {
    match size {
        BitSize::B1 => -((bits & 1) as i32),
        BitSize::B16 => bits as u16 as i16 as i32,
        BitSize::B32 => bits as i32,
    }
}

/// Evaluates `op` on source bit patterns `srcs` of sizes `sizes`. Sources must already
/// be well typed (see [`AluOp::result_bits`]); the result is masked to its size.
///
/// Division by zero and other traps of real hardware are given fixed results here
/// (integer division by zero gives 0) so that evaluation is total.
pub fn eval_alu(op: AluOp, srcs: &[u32], sizes: &[BitSize]) -> u32 {
    let out = op.result_bits(sizes).unwrap_or(BitSize::B32);
    let s = sizes.first().copied().unwrap_or(BitSize::B32);
    let raw = match op.class() {
        super::OpClass::Float => from_f32(eval_float(op, srcs, s), s),
        super::OpClass::FloatCmp => eval_fcmp(op, to_f32(srcs[0], s), to_f32(srcs[1], s)) as u32,
        super::OpClass::IntCmp => eval_icmp(op, srcs[0], srcs[1], s) as u32,
        _ => eval_other(op, srcs, sizes),
    };
    raw & out.mask()
}

/// Ops whose result on a zero operand depends on that zero's sign by more than a sign
/// (`1/±0 = ±inf`, `(±0)^-1 = ±inf`).
pub fn zero_sign_matters(op: AluOp) -> bool {
    matches!(op, AluOp::FRcp | AluOp::FRsq | AluOp::FDiv | AluOp::FPow)
}

/// Reads negative-zero operands of [`zero_sign_matters`] ops as `+0`: NIR's default
/// float mode does not preserve a zero's sign, and the interpreter's equivalence runs
/// (`RunConfig::signed_zeros` false) read them so. Constant folding does the same, so
/// that folding a `-0` that became a constant picks the infinity execution gives.
pub fn unsign_zero_operands(op: AluOp, vals: &mut [u32], sizes: &[BitSize]) {
    if !zero_sign_matters(op) {
        return;
    }
    for (v, size) in vals.iter_mut().zip(sizes) {
        match size {
            BitSize::B32 if *v == 0x8000_0000 => *v = 0,
            BitSize::B16 if *v == 0x8000 => *v = 0,
            _ => {}
        }
    }
}

fn eval_float(op: AluOp, srcs: &[u32], s: BitSize) -> f32 {
    use AluOp::*;
    let a = to_f32(srcs[0], s);
    let b = || to_f32(srcs[1], s);
    let c = || to_f32(srcs[2], s);
    match op {
        FNeg => -a,
        FAbs => a.abs(),
        FSat => {
            if a.is_nan() {
                0.0
            } else {
                a.clamp(0.0, 1.0)
            }
        }
        FRcp => 1.0 / a,
        FRsq => 1.0 / a.sqrt(),
        FSqrt => a.sqrt(),
        FExp2 => a.exp2(),
        FLog2 => a.log2(),
        FSin => a.sin(),
        FCos => a.cos(),
        FFloor => a.floor(),
        FCeil => a.ceil(),
        FFract => a - a.floor(),
        FSign => {
            if a > 0.0 {
                1.0
            } else if a < 0.0 {
                -1.0
            } else {
                0.0
            }
        }
        FAdd => a + b(),
        FSub => a - b(),
        FMul => a * b(),
        FDiv => a / b(),
        FMin => a.min(b()),
        FMax => a.max(b()),
        FPow => a.powf(b()),
        // NIR's fmod: the result takes the divisor's sign (GLSL `mod`).
        FMod => a - b() * (a / b()).floor(),
        // NIR's fmulz (D3D9 semantics): zero times anything, Inf and NaN included, is +0.
        FMulz => {
            if a == 0.0 || b() == 0.0 {
                0.0
            } else {
                a * b()
            }
        }
        // NIR's sge: a float 1.0 or 0.0 (false also for NaN operands).
        Sge => {
            if a >= b() {
                1.0
            } else {
                0.0
            }
        }
        FFma => a.mul_add(b(), c()),
        // As AMD computes it (NIR lowers flrp to one fused `ffma(t, b - a, a)` there),
        // so `flrp a a t` is `a` whatever finite `t` is: with `a·(1-t) + a·t` the
        // rounding could move it off `a` and flip a comparison with `a`.
        FLrp => c().mul_add(b() - a, a),
        _ => f32::NAN,
    }
}

fn eval_fcmp(op: AluOp, a: f32, b: f32) -> bool {
    match op {
        AluOp::FLt => a < b,
        AluOp::FGe => a >= b,
        AluOp::FEq => a == b,
        _ => a != b,
    }
}

fn eval_icmp(op: AluOp, a: u32, b: u32, s: BitSize) -> bool {
    let (ia, ib) = (to_i32(a, s), to_i32(b, s));
    let (ua, ub) = (a & s.mask(), b & s.mask());
    match op {
        AluOp::ILt => ia < ib,
        AluOp::IGe => ia >= ib,
        AluOp::IEq => ua == ub,
        AluOp::INe => ua != ub,
        AluOp::ULt => ua < ub,
        _ => ua >= ub,
    }
}

fn eval_other(op: AluOp, srcs: &[u32], sizes: &[BitSize]) -> u32 {
    use AluOp::*;
    let s = sizes[0];
    let a = srcs[0] & s.mask();
    let b = || srcs[1] & s.mask();
    let (ia, ib) = (to_i32(a, s), || to_i32(srcs[1], s));
    let shift = || b() % s.bits();
    match op {
        Mov => a,
        INeg => ia.wrapping_neg() as u32,
        IAbs => ia.wrapping_abs() as u32,
        IAdd => a.wrapping_add(b()),
        ISub => a.wrapping_sub(b()),
        IMul => a.wrapping_mul(b()),
        IDiv => ia
            .checked_div(ib())
            .unwrap_or(if ib() == 0 { 0 } else { ia }) as u32,
        UDiv => a.checked_div(b()).unwrap_or(0),
        IRem => ia.checked_rem(ib()).unwrap_or(0) as u32,
        UMod => a.checked_rem(b()).unwrap_or(0),
        IMin => ia.min(ib()) as u32,
        IMax => ia.max(ib()) as u32,
        UMin => a.min(b()),
        UMax => a.max(b()),
        IShl => a.wrapping_shl(shift()),
        IShr => (ia >> shift()) as u32,
        UShr => a >> shift(),
        INot => !a,
        IAnd => a & b(),
        IOr => a | b(),
        IXor => a ^ b(),
        BCsel => {
            if srcs[0] & 1 != 0 {
                srcs[1]
            } else {
                srcs[2]
            }
        }
        F2F16 => from_f32(to_f32(a, s), BitSize::B16),
        F2F32 => to_f32(a, s).to_bits(),
        F2I32 => to_f32(a, s) as i32 as u32,
        F2U32 => to_f32(a, s) as u32,
        I2F32 => (ia as f32).to_bits(),
        U2F32 => (a as f32).to_bits(),
        I2F16 => from_f32(ia as f32, BitSize::B16),
        I2I32 => ia as u32,
        U2U32 => a,
        I2I16 => a & 0xffff,
        B2F32 => (if a & 1 != 0 { 1.0f32 } else { 0.0 }).to_bits(),
        B2F16 => from_f32(if a & 1 != 0 { 1.0 } else { 0.0 }, BitSize::B16),
        B2I32 => a & 1,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use BitSize::*;

    fn f(v: f32) -> u32 {
        v.to_bits()
    }

    #[test]
    fn float_ops() {
        assert_eq!(
            eval_alu(AluOp::FAdd, &[f(1.5), f(2.0)], &[B32, B32]),
            f(3.5)
        );
        assert_eq!(
            eval_alu(AluOp::FLrp, &[f(0.0), f(10.0), f(0.25)], &[B32, B32, B32]),
            f(2.5)
        );
        assert_eq!(eval_alu(AluOp::FSat, &[f(f32::NAN)], &[B32]), f(0.0));
        assert_eq!(eval_alu(AluOp::FLt, &[f(1.0), f(2.0)], &[B32, B32]), 1);
    }

    #[test]
    fn legacy_float_ops() {
        let e = |op, a: f32, b: f32| f32::from_bits(eval_alu(op, &[f(a), f(b)], &[B32, B32]));
        assert_eq!(e(AluOp::FMod, 7.5, 2.0), 1.5);
        assert_eq!(e(AluOp::FMod, -1.0, 3.0), 2.0, "sign of the divisor");
        assert_eq!(e(AluOp::FMulz, 0.0, f32::INFINITY), 0.0);
        assert_eq!(e(AluOp::FMulz, f32::NAN, -0.0).to_bits(), 0, "+0");
        assert_eq!(e(AluOp::FMulz, 3.0, -2.0), -6.0);
        assert_eq!(e(AluOp::Sge, 2.0, 2.0), 1.0);
        assert_eq!(e(AluOp::Sge, 1.0, 2.0), 0.0);
        assert_eq!(e(AluOp::Sge, f32::NAN, 2.0), 0.0);
        let h = |v: f32| from_f32(v, B16);
        let r = eval_alu(AluOp::FMulz, &[h(0.0), h(f32::INFINITY)], &[B16, B16]);
        assert_eq!(r, 0);
    }

    #[test]
    fn half_ops_round() {
        let one = from_f32(1.0, B16);
        let two = eval_alu(AluOp::FAdd, &[one, one], &[B16, B16]);
        assert_eq!(to_f32(two, B16), 2.0);
        assert_eq!(eval_alu(AluOp::F2F32, &[one], &[B16]), f(1.0));
        assert_eq!(eval_alu(AluOp::F2F16, &[f(1.0)], &[B32]), one);
    }

    #[test]
    fn int_ops_are_total() {
        assert_eq!(eval_alu(AluOp::IDiv, &[7, 0], &[B32, B32]), 0);
        assert_eq!(
            eval_alu(AluOp::IDiv, &[i32::MIN as u32, u32::MAX], &[B32, B32]),
            i32::MIN as u32
        );
        assert_eq!(eval_alu(AluOp::IAdd, &[0xffff, 1], &[B16, B16]), 0);
        assert_eq!(eval_alu(AluOp::ILt, &[0xffff, 0], &[B16, B16]), 1);
        assert_eq!(eval_alu(AluOp::INot, &[0], &[B1]), 1);
        assert_eq!(eval_alu(AluOp::BCsel, &[1, 5, 6], &[B1, B32, B32]), 5);
    }
}
