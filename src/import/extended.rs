//! The integer instructions whose result is a two-member struct: `OpIAddCarry`,
//! `OpISubBorrow`, `OpUMulExtended`, `OpSMulExtended` (GLSL `uaddCarry`,
//! `usubBorrow`, `umulExtended`, `imulExtended`).
//!
//! The struct's members are built from ALU ops where the IR has them, so the
//! optimizer understands them: the low word is `iadd` / `isub` / `imul` (the low 32
//! bits of a product are the same signed or unsigned), the carry is `lo <u a`, the
//! borrow `a <u b`, each as 0 or 1. The high word of a product has no ALU op: it is
//! a pure opaque op per component, `umulextended` / `smulextended` with the
//! instruction's opcode, scalar `u32`/`i32` operands and a scalar result, standing for
//! member 1 of the struct (an exporter writes the instruction on the scalars and
//! extracts member 1). The interpreter gives it its real meaning.

use std::sync::Arc;

use rspirv::dr::Instruction;
use rspirv::spirv::Op;

use super::context::Translator;
use super::val::Val;
use crate::ir::{AluOp, BitSize, InstKind, OpaqueCode, OpaqueOp, OpaqueTy, Purity, Value};
use crate::Error;

impl<'a> Translator<'a> {
    /// Translates one of the four struct-result instructions (see the module
    /// documentation) into the struct value `{lo, hi}`.
    pub(crate) fn extended_arith(&mut self, inst: &'a Instruction) -> Result<Val, Error> {
        let op = inst.class.opcode;
        let (a, b) = (self.val(self.id(inst, 0)?)?, self.val(self.id(inst, 1)?)?);
        let a_ty = self.operand_scalar_ty(inst, 0)?;
        let (a, b) = (leaves(&a), leaves(&b));
        if a.is_empty() || a.len() != b.len() {
            return Err(self.err(inst, "operands are not numbers of one size"));
        }
        let (mut lo, mut hi) = (vec![], vec![]);
        for (&x, &y) in a.iter().zip(&b) {
            let (l, h) = match op {
                Op::IAddCarry => {
                    let l = self.alu(AluOp::IAdd, &[x, y])?;
                    let c = self.alu(AluOp::ULt, &[l, x])?;
                    (l, self.zero_or_one(c)?)
                }
                Op::ISubBorrow => {
                    let l = self.alu(AluOp::ISub, &[x, y])?;
                    let c = self.alu(AluOp::ULt, &[x, y])?;
                    (l, self.zero_or_one(c)?)
                }
                _ => {
                    let l = self.alu(AluOp::IMul, &[x, y])?;
                    (l, self.mul_high(op, a_ty, x, y))
                }
            };
            lo.push(l);
            hi.push(h);
        }
        // One leaf is a scalar: SPIR-V has no one-component vectors.
        let member = |v: Vec<Value>| match v.as_slice() {
            [one] => Val::Scalar(*one),
            _ => Val::Composite(v.into_iter().map(Val::Scalar).collect()),
        };
        Ok(Val::Composite(vec![member(lo), member(hi)]))
    }

    fn zero_or_one(&mut self, cond: Value) -> Result<Value, Error> {
        let (one, zero) = (self.e.u32(1), self.e.u32(0));
        self.alu(AluOp::BCsel, &[cond, one, zero])
    }

    fn mul_high(&mut self, op: Op, ty: OpaqueTy, x: Value, y: Value) -> Value {
        let name = match op {
            Op::SMulExtended => "smulextended",
            _ => "umulextended",
        };
        let desc = OpaqueOp {
            name: name.into(),
            purity: Purity::Pure,
            code: OpaqueCode::Core(op as u32),
            result: Some((ty, 0)),
            args: vec![ty, ty],
            resource: None,
        };
        let kind = InstKind::Opaque {
            op: Arc::new(desc),
            srcs: vec![x, y],
        };
        self.e.inst(kind, BitSize::B32)
    }

    /// The scalar type of operand `i` (the component type of a vector), which must
    /// be a 32-bit integer.
    fn operand_scalar_ty(&self, inst: &Instruction, i: usize) -> Result<OpaqueTy, Error> {
        let id = self.id(inst, i)?;
        let ty = self
            .m
            .value_types
            .get(&id)
            .copied()
            .or_else(|| self.m.consts.get(&id).map(|(t, _)| *t))
            .ok_or_else(|| self.err(inst, format!("operand %{id} has no known type")))?;
        let t = self.opaque_ty(inst, ty)?;
        if !matches!(
            t.scalar,
            crate::ir::ScalarTy::U32 | crate::ir::ScalarTy::I32
        ) {
            return Err(self.err(inst, "only 32-bit integer operands are supported"));
        }
        Ok(OpaqueTy::scalar(t.scalar))
    }
}

/// The scalar leaves of a scalar or vector value.
fn leaves(v: &Val) -> Vec<Value> {
    match v {
        Val::Scalar(x) => vec![*x],
        Val::Composite(items) => items.iter().filter_map(Val::scalar).collect(),
        _ => vec![],
    }
}
