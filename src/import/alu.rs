//! Arithmetic: core SPIR-V ALU instructions, composite construction and access,
//! matrix algebra, `GLSL.std.450` extended instructions and image sampling, all
//! scalarized into IR ALU ops (or opaque `tex` ops for images).

use rspirv::dr::Instruction;
use rspirv::spirv::{Op, StorageClass};

use super::context::Translator;
use super::layout::Shape;
use super::module::{id_at, lit_at, Ty};
use super::val::Val;
use crate::ir::{AluOp, BitSize, InstKind, Interp, InterpLoc, InterpMode, Value};
use crate::Error;

type R<T> = Result<T, Error>;

impl<'a> Translator<'a> {
    fn arg(&mut self, inst: &Instruction, i: usize) -> R<Val> {
        let id = self.id(inst, i)?;
        self.val(id)
    }

    fn result_ty(&self, inst: &Instruction) -> R<u32> {
        inst.result_type
            .ok_or_else(|| self.err(inst, "missing result type"))
    }

    /// The scalar element type of a scalar or vector type.
    fn elem_ty(&self, ty: u32) -> R<u32> {
        Ok(match self.m.ty(ty)? {
            Ty::Vector { elem, .. } => *elem,
            _ => ty,
        })
    }

    /// Applies `f` componentwise; scalar operands are broadcast over vectors.
    fn map(
        &mut self,
        inst: &Instruction,
        args: &[Val],
        mut f: impl FnMut(&mut Self, &[Value]) -> R<Value>,
    ) -> R<Val> {
        let n = args
            .iter()
            .filter_map(|a| a.items().map(<[Val]>::len))
            .max();
        let comp = |a: &Val, i: usize| -> Option<Value> {
            match a {
                Val::Scalar(v) => Some(*v),
                Val::Composite(items) => items.get(i).and_then(Val::scalar),
                _ => None,
            }
        };
        match n {
            None => {
                let s: Option<Vec<Value>> = args.iter().map(|a| comp(a, 0)).collect();
                let s = s.ok_or_else(|| self.err(inst, "operand is not a number"))?;
                Ok(Val::Scalar(f(self, &s)?))
            }
            Some(n) => {
                let mut out = vec![];
                for i in 0..n {
                    let s: Option<Vec<Value>> = args.iter().map(|a| comp(a, i)).collect();
                    let s =
                        s.ok_or_else(|| self.err(inst, "operands are not vectors of one size"))?;
                    out.push(Val::Scalar(f(self, &s)?));
                }
                Ok(Val::Composite(out))
            }
        }
    }

    fn op1(&mut self, inst: &Instruction, op: AluOp) -> R<Val> {
        let a = self.arg(inst, 0)?;
        self.map(inst, &[a], |t, s| t.alu(op, s))
    }

    fn op2(&mut self, inst: &Instruction, op: AluOp, swap: bool) -> R<Val> {
        let (a, b) = (self.arg(inst, 0)?, self.arg(inst, 1)?);
        self.map(inst, &[a, b], |t, s| {
            if swap {
                t.alu(op, &[s[1], s[0]])
            } else {
                t.alu(op, s)
            }
        })
    }

    fn not(&mut self, x: Value) -> R<Value> {
        self.alu(AluOp::INot, &[x])
    }

    pub fn alu_inst(&mut self, inst: &'a Instruction) -> R<Val> {
        use AluOp as A;
        if self.touches_wide(inst) && !moves_words(inst.class.opcode) {
            return self.wide_inst(inst);
        }
        Ok(match inst.class.opcode {
            Op::FAdd => self.op2(inst, A::FAdd, false)?,
            Op::FSub => self.op2(inst, A::FSub, false)?,
            Op::FMul => self.op2(inst, A::FMul, false)?,
            Op::FDiv => self.op2(inst, A::FDiv, false)?,
            Op::FNegate => self.op1(inst, A::FNeg)?,
            Op::FMod => {
                let (a, b) = (self.arg(inst, 0)?, self.arg(inst, 1)?);
                self.map(inst, &[a, b], |t, s| {
                    let q = t.alu(A::FDiv, s)?;
                    let f = t.alu(A::FFloor, &[q])?;
                    let p = t.alu(A::FMul, &[s[1], f])?;
                    t.alu(A::FSub, &[s[0], p])
                })?
            }
            Op::FRem => {
                let (a, b) = (self.arg(inst, 0)?, self.arg(inst, 1)?);
                self.map(inst, &[a, b], |t, s| {
                    let q = t.alu(A::FDiv, s)?;
                    let f = t.trunc(q)?;
                    let p = t.alu(A::FMul, &[s[1], f])?;
                    t.alu(A::FSub, &[s[0], p])
                })?
            }
            Op::IAdd => self.op2(inst, A::IAdd, false)?,
            Op::ISub => self.op2(inst, A::ISub, false)?,
            Op::IMul => self.op2(inst, A::IMul, false)?,
            Op::SDiv => self.op2(inst, A::IDiv, false)?,
            Op::UDiv => self.op2(inst, A::UDiv, false)?,
            Op::SRem => self.op2(inst, A::IRem, false)?,
            Op::UMod => self.op2(inst, A::UMod, false)?,
            Op::SMod => {
                let (a, b) = (self.arg(inst, 0)?, self.arg(inst, 1)?);
                self.map(inst, &[a, b], |t, s| {
                    let r = t.alu(A::IRem, s)?;
                    let z = t.e.konst(t.e.bits(r), 0);
                    let nz = t.alu(A::INe, &[r, z])?;
                    let rn = t.alu(A::ILt, &[r, z])?;
                    let bn = t.alu(A::ILt, &[s[1], z])?;
                    let diff = t.alu(A::IXor, &[rn, bn])?;
                    let fix = t.alu(A::IAnd, &[nz, diff])?;
                    let rb = t.alu(A::IAdd, &[r, s[1]])?;
                    t.alu(A::BCsel, &[fix, rb, r])
                })?
            }
            Op::SNegate => self.op1(inst, A::INeg)?,
            Op::ShiftLeftLogical => self.op2(inst, A::IShl, false)?,
            Op::ShiftRightArithmetic => self.op2(inst, A::IShr, false)?,
            Op::ShiftRightLogical => self.op2(inst, A::UShr, false)?,
            Op::BitwiseAnd | Op::LogicalAnd => self.op2(inst, A::IAnd, false)?,
            Op::BitwiseOr | Op::LogicalOr => self.op2(inst, A::IOr, false)?,
            Op::BitwiseXor | Op::LogicalNotEqual => self.op2(inst, A::IXor, false)?,
            Op::Not | Op::LogicalNot => self.op1(inst, A::INot)?,
            Op::LogicalEqual => {
                let (a, b) = (self.arg(inst, 0)?, self.arg(inst, 1)?);
                self.map(inst, &[a, b], |t, s| {
                    let x = t.alu(A::IXor, s)?;
                    t.not(x)
                })?
            }
            Op::IEqual => self.op2(inst, A::IEq, false)?,
            Op::INotEqual => self.op2(inst, A::INe, false)?,
            Op::SLessThan => self.op2(inst, A::ILt, false)?,
            Op::SGreaterThan => self.op2(inst, A::ILt, true)?,
            Op::SLessThanEqual => self.op2(inst, A::IGe, true)?,
            Op::SGreaterThanEqual => self.op2(inst, A::IGe, false)?,
            Op::ULessThan => self.op2(inst, A::ULt, false)?,
            Op::UGreaterThan => self.op2(inst, A::ULt, true)?,
            Op::ULessThanEqual => self.op2(inst, A::UGe, true)?,
            Op::UGreaterThanEqual => self.op2(inst, A::UGe, false)?,
            Op::FOrdLessThan => self.op2(inst, A::FLt, false)?,
            Op::FOrdGreaterThan => self.op2(inst, A::FLt, true)?,
            Op::FOrdLessThanEqual => self.op2(inst, A::FGe, true)?,
            Op::FOrdGreaterThanEqual => self.op2(inst, A::FGe, false)?,
            Op::FOrdEqual => self.op2(inst, A::FEq, false)?,
            Op::FUnordNotEqual => self.op2(inst, A::FNeu, false)?,
            Op::FOrdNotEqual => {
                let (a, b) = (self.arg(inst, 0)?, self.arg(inst, 1)?);
                self.map(inst, &[a, b], |t, s| {
                    let ne = t.alu(A::FNeu, s)?;
                    let lt = t.alu(A::FLt, s)?;
                    let gt = t.alu(A::FLt, &[s[1], s[0]])?;
                    let ord = t.alu(A::IOr, &[lt, gt])?;
                    t.alu(A::IAnd, &[ne, ord])
                })?
            }
            Op::FUnordLessThan => self.unord(inst, A::FGe, false)?,
            Op::FUnordGreaterThan => self.unord(inst, A::FGe, true)?,
            Op::FUnordLessThanEqual => self.unord(inst, A::FLt, true)?,
            Op::FUnordGreaterThanEqual => self.unord(inst, A::FLt, false)?,
            Op::FUnordEqual => {
                let (a, b) = (self.arg(inst, 0)?, self.arg(inst, 1)?);
                self.map(inst, &[a, b], |t, s| {
                    let lt = t.alu(A::FLt, s)?;
                    let gt = t.alu(A::FLt, &[s[1], s[0]])?;
                    let either = t.alu(A::IOr, &[lt, gt])?;
                    t.not(either)
                })?
            }
            Op::IsNan => {
                let a = self.arg(inst, 0)?;
                self.map(inst, &[a], |t, s| t.alu(A::FNeu, &[s[0], s[0]]))?
            }
            Op::IsInf => {
                let a = self.arg(inst, 0)?;
                self.map(inst, &[a], |t, s| {
                    let bits = t.e.bits(s[0]);
                    let inf = t.e.konst(bits, crate::ir::from_f32(f32::INFINITY, bits));
                    let abs = t.alu(A::FAbs, s)?;
                    t.alu(A::FEq, &[abs, inf])
                })?
            }
            Op::Any | Op::All => {
                let op = if inst.class.opcode == Op::Any {
                    A::IOr
                } else {
                    A::IAnd
                };
                let a = self.arg(inst, 0)?;
                let l = a
                    .leaves()
                    .ok_or_else(|| self.err(inst, "operand is not a vector"))?;
                self.fold(op, &l)?
            }
            Op::Select => {
                let (c, a, b) = (self.arg(inst, 0)?, self.arg(inst, 1)?, self.arg(inst, 2)?);
                match c {
                    Val::Scalar(c) => self.select(c, &a, &b).map_err(|e| self.err(inst, e))?,
                    c => self.map(inst, &[c, a, b], |t, s| t.alu(A::BCsel, s))?,
                }
            }
            Op::ConvertFToS => self.convert(inst, |b| (b == BitSize::B32).then_some(A::F2I32))?,
            Op::ConvertFToU => self.convert(inst, |b| (b == BitSize::B32).then_some(A::F2U32))?,
            Op::ConvertSToF => self.convert(inst, |b| {
                Some(if b == BitSize::B16 {
                    A::I2F16
                } else {
                    A::I2F32
                })
            })?,
            Op::ConvertUToF => self.convert(inst, |b| (b == BitSize::B32).then_some(A::U2F32))?,
            Op::FConvert => self.convert(inst, |b| {
                Some(if b == BitSize::B16 {
                    A::F2F16
                } else {
                    A::F2F32
                })
            })?,
            Op::SConvert => self.convert(inst, |b| {
                Some(if b == BitSize::B16 {
                    A::I2I16
                } else {
                    A::I2I32
                })
            })?,
            Op::UConvert => self.convert(inst, |b| {
                Some(if b == BitSize::B16 {
                    A::I2I16
                } else {
                    A::U2U32
                })
            })?,
            Op::Bitcast => {
                // Same words, the result's shape (`double` <-> `uvec2`, `dvec2` <-> `uvec4`).
                let a = self.arg(inst, 0)?;
                let rt = self.result_ty(inst)?;
                let shape = self.shape(rt)?;
                match a.leaves() {
                    Some(l) if l.len() == shape.leaf_bits().len() => shape.val(&mut l.into_iter()),
                    _ => {
                        return Err(self.err(
                            inst,
                            "bitcast between vectors of different lengths is not supported",
                        ))
                    }
                }
            }
            Op::CopyObject | Op::CopyLogical => self.arg(inst, 0)?,
            Op::Undef => self.filled(self.result_ty(inst)?, false)?,
            Op::CompositeConstruct => self.construct(inst)?,
            Op::CompositeExtract => {
                let v = self.arg(inst, 0)?;
                let path: Vec<super::val::Idx> = (1..inst.operands.len())
                    .filter_map(|i| lit_at(inst, i))
                    .map(super::val::Idx::Const)
                    .collect();
                self.extract(v, &path).map_err(|e| self.err(inst, e))?
            }
            Op::CompositeInsert => {
                let (x, v) = (self.arg(inst, 0)?, self.arg(inst, 1)?);
                let path: Vec<super::val::Idx> = (2..inst.operands.len())
                    .filter_map(|i| lit_at(inst, i))
                    .map(super::val::Idx::Const)
                    .collect();
                self.insert(v, &path, x).map_err(|e| self.err(inst, e))?
            }
            Op::VectorExtractDynamic => {
                let (v, i) = (self.arg(inst, 0)?, self.arg(inst, 1)?);
                let i = i
                    .scalar()
                    .ok_or_else(|| self.err(inst, "index is not a scalar"))?;
                self.extract(v, &[super::val::Idx::Dyn(i)])
                    .map_err(|e| self.err(inst, e))?
            }
            Op::VectorInsertDynamic => {
                let (v, x, i) = (self.arg(inst, 0)?, self.arg(inst, 1)?, self.arg(inst, 2)?);
                let i = i
                    .scalar()
                    .ok_or_else(|| self.err(inst, "index is not a scalar"))?;
                self.insert(v, &[super::val::Idx::Dyn(i)], x)
                    .map_err(|e| self.err(inst, e))?
            }
            Op::VectorShuffle => {
                let (a, b) = (self.arg(inst, 0)?, self.arg(inst, 1)?);
                let mut all: Vec<Val> = a.items().unwrap_or(&[]).to_vec();
                all.extend(b.items().unwrap_or(&[]).iter().cloned());
                let mut out = vec![];
                for i in 2..inst.operands.len() {
                    let k =
                        lit_at(inst, i).ok_or_else(|| self.err(inst, "bad shuffle component"))?;
                    let v = match all.get(k as usize) {
                        Some(v) => v.clone(),
                        None if k == u32::MAX => {
                            let elem = self.elem_ty(self.result_ty(inst)?)?;
                            self.filled(elem, false)?
                        }
                        None => return Err(self.err(inst, "shuffle component out of range")),
                    };
                    out.push(v);
                }
                Val::Composite(out)
            }
            Op::Dot => {
                let (a, b) = (self.arg(inst, 0)?, self.arg(inst, 1)?);
                Val::Scalar(self.dot(inst, &a, &b)?)
            }
            Op::VectorTimesScalar | Op::MatrixTimesScalar => {
                let (a, s) = (self.arg(inst, 0)?, self.arg(inst, 1)?);
                let s = s
                    .scalar()
                    .ok_or_else(|| self.err(inst, "scalar operand expected"))?;
                self.scale(inst, &a, s)?
            }
            Op::MatrixTimesVector => {
                let (m, v) = (self.arg(inst, 0)?, self.arg(inst, 1)?);
                self.mat_vec(inst, &m, &v)?
            }
            Op::VectorTimesMatrix => {
                let (v, m) = (self.arg(inst, 0)?, self.arg(inst, 1)?);
                let cols = m
                    .items()
                    .ok_or_else(|| self.err(inst, "matrix operand expected"))?
                    .to_vec();
                let mut out = vec![];
                for c in &cols {
                    out.push(Val::Scalar(self.dot(inst, &v, c)?));
                }
                Val::Composite(out)
            }
            Op::MatrixTimesMatrix => {
                let (a, b) = (self.arg(inst, 0)?, self.arg(inst, 1)?);
                let cols = b
                    .items()
                    .ok_or_else(|| self.err(inst, "matrix operand expected"))?
                    .to_vec();
                let mut out = vec![];
                for c in &cols {
                    out.push(self.mat_vec(inst, &a, c)?);
                }
                Val::Composite(out)
            }
            Op::OuterProduct => {
                let (a, b) = (self.arg(inst, 0)?, self.arg(inst, 1)?);
                let bl = b
                    .leaves()
                    .ok_or_else(|| self.err(inst, "vector operand expected"))?;
                let mut out = vec![];
                for s in bl {
                    out.push(self.scale(inst, &a, s)?);
                }
                Val::Composite(out)
            }
            Op::Transpose => {
                let m = self.arg(inst, 0)?;
                let cols = m
                    .items()
                    .ok_or_else(|| self.err(inst, "matrix operand expected"))?
                    .to_vec();
                let rows = cols
                    .first()
                    .and_then(Val::items)
                    .map(<[Val]>::len)
                    .unwrap_or(0);
                let mut out = vec![];
                for r in 0..rows {
                    out.push(Val::Composite(
                        cols.iter()
                            .filter_map(|c| c.items().and_then(|i| i.get(r)).cloned())
                            .collect(),
                    ));
                }
                Val::Composite(out)
            }
            _ => return self.opaque_fallback(inst),
        })
    }

    fn unord(&mut self, inst: &Instruction, ordered_negation: AluOp, swap: bool) -> R<Val> {
        let (a, b) = (self.arg(inst, 0)?, self.arg(inst, 1)?);
        self.map(inst, &[a, b], |t, s| {
            let x = if swap {
                t.alu(ordered_negation, &[s[1], s[0]])?
            } else {
                t.alu(ordered_negation, s)?
            };
            t.not(x)
        })
    }

    fn convert(&mut self, inst: &Instruction, pick: impl Fn(BitSize) -> Option<AluOp>) -> R<Val> {
        let rt = self.elem_ty(self.result_ty(inst)?)?;
        let to = self.scalar_bits(rt)?;
        let a = self.arg(inst, 0)?;
        let op = pick(to).ok_or_else(|| {
            self.err(
                inst,
                format!("conversion to {}-bit is not supported", to.bits()),
            )
        })?;
        self.map(inst, &[a], |t, s| {
            let from = t.e.bits(s[0]);
            match op.result_bits(&[from]) {
                Ok(b) if b == to => t.alu(op, s),
                _ if from == to => Ok(s[0]),
                _ => Err(t.err(
                    inst,
                    format!(
                        "conversion from {}-bit to {}-bit is not supported",
                        from.bits(),
                        to.bits()
                    ),
                )),
            }
        })
    }

    fn construct(&mut self, inst: &Instruction) -> R<Val> {
        let rt = self.result_ty(inst)?;
        let mut parts = vec![];
        for i in 0..inst.operands.len() {
            parts.push(self.arg(inst, i)?);
        }
        if let Ty::Vector { .. } = self.m.ty(rt)? {
            // Vector operands contribute their components, scalars themselves (a
            // 64-bit scalar is a composite of two words, so the type decides).
            let mut out = vec![];
            for (i, p) in parts.into_iter().enumerate() {
                let pty = self.id(inst, i).ok().and_then(|id| {
                    self.m
                        .value_types
                        .get(&id)
                        .copied()
                        .or_else(|| self.m.consts.get(&id).map(|(t, _)| *t))
                });
                let is_vec = match pty {
                    Some(t) => matches!(self.m.ty(t)?, Ty::Vector { .. }),
                    None => matches!(p, Val::Composite(_)),
                };
                match p {
                    Val::Composite(items) if is_vec => out.extend(items),
                    Val::Scalar(_) | Val::Composite(_) => out.push(p),
                    _ => return Err(self.err(inst, "vector built from a non-number")),
                }
            }
            return Ok(Val::Composite(out));
        }
        Ok(Val::Composite(parts))
    }

    fn fold(&mut self, op: AluOp, leaves: &[Value]) -> R<Val> {
        let mut it = leaves.iter();
        let mut acc = *it.next().ok_or_else(|| self.m.err_plain("empty vector"))?;
        for l in it {
            acc = self.alu(op, &[acc, *l])?;
        }
        Ok(Val::Scalar(acc))
    }

    fn dot(&mut self, inst: &Instruction, a: &Val, b: &Val) -> R<Value> {
        let (al, bl) = (a.leaves(), b.leaves());
        let (Some(al), Some(bl)) = (al, bl) else {
            return Err(self.err(inst, "dot of non-vectors"));
        };
        let mut acc: Option<Value> = None;
        for (x, y) in al.iter().zip(&bl) {
            let p = self.alu(AluOp::FMul, &[*x, *y])?;
            acc = Some(match acc {
                Some(a) => self.alu(AluOp::FAdd, &[a, p])?,
                None => p,
            });
        }
        acc.ok_or_else(|| self.err(inst, "dot of empty vectors"))
    }

    fn scale(&mut self, inst: &Instruction, a: &Val, s: Value) -> R<Val> {
        let l = a
            .leaves()
            .ok_or_else(|| self.err(inst, "vector operand expected"))?;
        let mut out = vec![];
        for x in l {
            out.push(self.alu(AluOp::FMul, &[x, s])?);
        }
        a.rebuild(&mut out.into_iter())
            .ok_or_else(|| self.err(inst, "shape"))
    }

    fn mat_vec(&mut self, inst: &Instruction, m: &Val, v: &Val) -> R<Val> {
        let cols = m
            .items()
            .ok_or_else(|| self.err(inst, "matrix operand expected"))?
            .to_vec();
        let vl = v
            .leaves()
            .ok_or_else(|| self.err(inst, "vector operand expected"))?;
        let mut acc: Option<Val> = None;
        for (c, s) in cols.iter().zip(vl) {
            let term = self.scale(inst, c, s)?;
            acc = Some(match acc {
                None => term,
                Some(prev) => self.map(inst, &[prev, term], |t, x| t.alu(AluOp::FAdd, x))?,
            });
        }
        acc.ok_or_else(|| self.err(inst, "empty matrix"))
    }

    fn trunc(&mut self, x: Value) -> R<Value> {
        let a = self.alu(AluOp::FAbs, &[x])?;
        let f = self.alu(AluOp::FFloor, &[a])?;
        let s = self.alu(AluOp::FSign, &[x])?;
        self.alu(AluOp::FMul, &[s, f])
    }

    fn fconst(&mut self, like: Value, x: f32) -> Value {
        let bits = self.e.bits(like);
        self.e.konst(bits, crate::ir::from_f32(x, bits))
    }

    /// `GLSL.std.450` instructions (and the interpolation functions).
    pub fn ext_inst(&mut self, inst: &'a Instruction) -> R<Option<Val>> {
        if id_at(inst, 0) != self.m.glsl_ext {
            if id_at(inst, 0).is_some_and(|s| self.m.non_semantic.contains(&s)) {
                // Debug printing and other non-semantic instructions mean nothing
                // to the shader's results (the import report notes them).
                return Ok(None);
            }
            if let Some(set) = id_at(inst, 0).and_then(|s| self.m.other_ext.get(&s)) {
                let set = set.clone();
                return self.opaque_other_ext(inst, &set);
            }
            return Err(self.err(inst, "extended instruction set other than GLSL.std.450"));
        }
        let code = lit_at(inst, 1).ok_or_else(|| self.err(inst, "missing extended opcode"))?;
        if matches!(code, 35 | 51 | 52) {
            return self.modf_frexp(inst, code).map(Some);
        }
        if self.touches_wide(inst) {
            return self.wide_ext(inst, code).map(Some);
        }
        let n = inst.operands.len().saturating_sub(2);
        let mut args = vec![];
        for i in 0..n {
            let id = self.id(inst, i + 2)?;
            args.push(self.val(id)?);
        }
        use AluOp as A;
        let un =
            |t: &mut Self, op: AluOp, args: &[Val]| t.map(inst, &args[..1], |t, s| t.alu(op, s));
        let bin =
            |t: &mut Self, op: AluOp, args: &[Val]| t.map(inst, &args[..2], |t, s| t.alu(op, s));
        if args.len() < arity(code) {
            return Err(self.err(inst, "too few operands"));
        }
        let v = match code {
            1 => self.map(inst, &args[..1], |t, s| {
                let h = t.fconst(s[0], 0.5);
                let x = t.alu(A::FAdd, &[s[0], h])?;
                t.alu(A::FFloor, &[x])
            })?,
            3 => self.map(inst, &args[..1], |t, s| t.trunc(s[0]))?,
            4 => un(self, A::FAbs, &args)?,
            5 => un(self, A::IAbs, &args)?,
            6 => un(self, A::FSign, &args)?,
            7 => self.map(inst, &args[..1], |t, s| {
                let z = t.e.konst(t.e.bits(s[0]), 0);
                let one = t.e.konst(t.e.bits(s[0]), 1);
                let m1 = t.e.konst(t.e.bits(s[0]), u32::MAX);
                let pos = t.alu(A::ILt, &[z, s[0]])?;
                let neg = t.alu(A::ILt, &[s[0], z])?;
                let a = t.alu(A::BCsel, &[neg, m1, z])?;
                t.alu(A::BCsel, &[pos, one, a])
            })?,
            8 => un(self, A::FFloor, &args)?,
            9 => un(self, A::FCeil, &args)?,
            10 => un(self, A::FFract, &args)?,
            11 | 12 => self.map(inst, &args[..1], |t, s| {
                let k = t.fconst(
                    s[0],
                    if code == 11 {
                        std::f32::consts::PI / 180.0
                    } else {
                        180.0 / std::f32::consts::PI
                    },
                );
                t.alu(A::FMul, &[s[0], k])
            })?,
            13 => un(self, A::FSin, &args)?,
            14 => un(self, A::FCos, &args)?,
            15 => self.map(inst, &args[..1], |t, s| {
                let (sn, cs) = (t.alu(A::FSin, s)?, t.alu(A::FCos, s)?);
                t.alu(A::FDiv, &[sn, cs])
            })?,
            26 => bin(self, A::FPow, &args)?,
            27 => self.map(inst, &args[..1], |t, s| {
                let k = t.fconst(s[0], std::f32::consts::LOG2_E);
                let x = t.alu(A::FMul, &[s[0], k])?;
                t.alu(A::FExp2, &[x])
            })?,
            28 => self.map(inst, &args[..1], |t, s| {
                let l = t.alu(A::FLog2, s)?;
                let k = t.fconst(s[0], std::f32::consts::LN_2);
                t.alu(A::FMul, &[l, k])
            })?,
            29 => un(self, A::FExp2, &args)?,
            30 => un(self, A::FLog2, &args)?,
            31 => un(self, A::FSqrt, &args)?,
            32 => un(self, A::FRsq, &args)?,
            37 | 79 => bin(self, A::FMin, &args)?,
            38 => bin(self, A::UMin, &args)?,
            39 => bin(self, A::IMin, &args)?,
            40 | 80 => bin(self, A::FMax, &args)?,
            41 => bin(self, A::UMax, &args)?,
            42 => bin(self, A::IMax, &args)?,
            43 | 81 => self.clamp(inst, &args, A::FMax, A::FMin)?,
            44 => self.clamp(inst, &args, A::UMax, A::UMin)?,
            45 => self.clamp(inst, &args, A::IMax, A::IMin)?,
            46 => self.map(inst, &args[..3], |t, s| t.alu(A::FLrp, s))?,
            48 => self.map(inst, &args[..2], |t, s| {
                let lt = t.alu(A::FLt, &[s[1], s[0]])?;
                let (z, o) = (t.fconst(s[1], 0.0), t.fconst(s[1], 1.0));
                t.alu(A::BCsel, &[lt, z, o])
            })?,
            49 => self.map(inst, &args[..3], |t, s| {
                let num = t.alu(A::FSub, &[s[2], s[0]])?;
                let den = t.alu(A::FSub, &[s[1], s[0]])?;
                let q = t.alu(A::FDiv, &[num, den])?;
                let x = t.alu(A::FSat, &[q])?;
                let (two, three) = (t.fconst(x, 2.0), t.fconst(x, 3.0));
                let tx = t.alu(A::FMul, &[two, x])?;
                let d = t.alu(A::FSub, &[three, tx])?;
                let xx = t.alu(A::FMul, &[x, x])?;
                t.alu(A::FMul, &[xx, d])
            })?,
            50 => self.map(inst, &args[..3], |t, s| t.alu(A::FFma, s))?,
            66 => Val::Scalar(self.length(inst, &args[0])?),
            67 => {
                let d = self.map(inst, &args[..2], |t, s| t.alu(A::FSub, s))?;
                Val::Scalar(self.length(inst, &d)?)
            }
            68 => {
                let (a, b) = (args[0].leaves(), args[1].leaves());
                let (Some(a), Some(b)) = (a, b) else {
                    return Err(self.err(inst, "cross of non-vectors"));
                };
                if a.len() != 3 || b.len() != 3 {
                    return Err(self.err(inst, "cross needs 3-component vectors"));
                }
                let mut out = vec![];
                for (i, j) in [(1, 2), (2, 0), (0, 1)] {
                    let p = self.alu(A::FMul, &[a[i], b[j]])?;
                    let q = self.alu(A::FMul, &[a[j], b[i]])?;
                    out.push(Val::Scalar(self.alu(A::FSub, &[p, q])?));
                }
                Val::Composite(out)
            }
            69 => {
                let d = self.dot(inst, &args[0], &args[0])?;
                let r = self.alu(A::FRsq, &[d])?;
                self.scale(inst, &args[0], r)?
            }
            70 => {
                let (n, i, nref) = (args[0].clone(), args[1].clone(), args[2].clone());
                let d = self.dot(inst, &nref, &i)?;
                let z = self.fconst(d, 0.0);
                let lt = self.alu(A::FLt, &[d, z])?;
                let neg = self.map(inst, std::slice::from_ref(&n), |t, s| t.alu(A::FNeg, s))?;
                self.select(lt, &n, &neg).map_err(|e| self.err(inst, e))?
            }
            71 => {
                let (i, n) = (args[0].clone(), args[1].clone());
                let d = self.dot(inst, &n, &i)?;
                let two = self.fconst(d, 2.0);
                let k = self.alu(A::FMul, &[two, d])?;
                let kn = self.scale(inst, &n, k)?;
                self.map(inst, &[i, kn], |t, s| t.alu(A::FSub, s))?
            }
            76..=78 => return self.interpolate_at(inst, code).map(Some),
            36 => self.modf_struct(inst, &args[0])?,
            _ => return self.opaque_glsl(inst, code),
        };
        Ok(Some(v))
    }

    /// `ModfStruct`: `{fract, whole}` with `whole = trunc(x)`, `fract = x - whole`.
    fn modf_struct(&mut self, inst: &Instruction, x: &Val) -> R<Val> {
        let whole = self.map(inst, std::slice::from_ref(x), |t, s| t.trunc(s[0]))?;
        let fract = self.map(inst, &[x.clone(), whole.clone()], |t, s| {
            t.alu(AluOp::FSub, s)
        })?;
        Ok(Val::Composite(vec![fract, whole]))
    }

    /// `Modf` (35: the fraction, the whole part stored through the pointer operand),
    /// `Frexp` (51: the significand, the exponent stored) and `FrexpStruct` (52:
    /// `{significand, exponent}`), on 16-, 32- or 64-bit floats.
    fn modf_frexp(&mut self, inst: &'a Instruction, code: u32) -> R<Val> {
        let x_id = self.id(inst, 2)?;
        let x = self.val(x_id)?;
        let (width, vector) = match self.m.ty(self.type_of(inst, x_id)?)? {
            Ty::Float { width } => (*width, false),
            Ty::Vector { elem, .. } => match self.m.ty(*elem)? {
                Ty::Float { width } => (*width, true),
                _ => return Err(self.err(inst, "operand is not a float")),
            },
            _ => return Err(self.err(inst, "operand is not a float")),
        };
        let (first, second) = match (code, width) {
            (35, 64) => pair(self.wide_ext(inst, 36)?),
            (35, _) => pair(self.modf_struct(inst, &x)?),
            _ => self.frexp(inst, &x, width, vector)?,
        }
        .ok_or_else(|| self.err(inst, "result is not a pair"))?;
        if code == 52 {
            return Ok(Val::Composite(vec![first, second]));
        }
        let Val::Ptr(p) = self.val(self.id(inst, 3)?)? else {
            return Err(self.err(inst, "out operand is not a pointer"));
        };
        self.store(&p, second, Some(inst))?;
        Ok(first)
    }

    /// `frexp`: per component, the significand in [0.5, 1) with `x`'s sign and the
    /// exponent, from the bits: the exponent field less the bias minus one, the
    /// field replaced by the bias minus one. A zero or denormal `x` gives a signed
    /// zero and exponent 0: GLSL lets denormals be flushed to zero; for infinities
    /// and NaNs it leaves both results undefined.
    fn frexp(
        &mut self,
        inst: &Instruction,
        x: &Val,
        width: u32,
        vector: bool,
    ) -> R<Option<(Val, Val)>> {
        let layout = match width {
            32 => FloatBits {
                shift: 23,
                field: 0xff,
                bias: 126,
                keep: 0x807f_ffff,
            },
            // The high word of a double (low word first): 11 exponent bits.
            64 => FloatBits {
                shift: 20,
                field: 0x7ff,
                bias: 1022,
                keep: 0x800f_ffff,
            },
            _ => {
                return Err(self.err(
                    inst,
                    format!("frexp of {width}-bit floats is not supported"),
                ))
            }
        };
        let comps = match (vector, x.items()) {
            (true, Some(items)) => items.to_vec(),
            _ => vec![x.clone()],
        };
        let (mut sig, mut exp) = (vec![], vec![]);
        for c in comps {
            let words = c
                .leaves()
                .ok_or_else(|| self.err(inst, "operand is not a number"))?;
            let (&hi, lo) = match words.as_slice() {
                [w] => (w, None),
                [lo, hi] if width == 64 => (hi, Some(*lo)),
                _ => return Err(self.err(inst, "operand is not a float")),
            };
            let (m_hi, e, zero) = self.frexp_word(hi, &layout)?;
            exp.push(Val::Scalar(e));
            sig.push(match lo {
                None => Val::Scalar(m_hi),
                Some(lo) => {
                    let z = self.e.u32(0);
                    let m_lo = self.alu(AluOp::BCsel, &[zero, z, lo])?;
                    Val::Composite(vec![Val::Scalar(m_lo), Val::Scalar(m_hi)])
                }
            });
        }
        let pack = |mut v: Vec<Val>| match vector {
            false => v.remove(0),
            true => Val::Composite(v),
        };
        Ok(Some((pack(sig), pack(exp))))
    }

    /// The significand word, exponent and "zero or denormal" condition of the word
    /// holding a float's exponent field.
    fn frexp_word(&mut self, w: Value, l: &FloatBits) -> R<(Value, Value, Value)> {
        use AluOp as A;
        let k = |t: &mut Self, v: u32| t.e.u32(v);
        let (shift, field, zero_k) = (k(self, l.shift), k(self, l.field), k(self, 0));
        let f = self.alu(A::UShr, &[w, shift])?;
        let f = self.alu(A::IAnd, &[f, field])?;
        let zero = self.alu(A::IEq, &[f, zero_k])?;
        let minus_bias = k(self, l.bias.wrapping_neg());
        let e = self.alu(A::IAdd, &[f, minus_bias])?;
        let e = self.alu(A::BCsel, &[zero, zero_k, e])?;
        let (keep, half) = (k(self, l.keep), k(self, l.bias << l.shift));
        let m = self.alu(A::IAnd, &[w, keep])?;
        let m = self.alu(A::IOr, &[m, half])?;
        let sign_mask = k(self, 0x8000_0000);
        let sign = self.alu(A::IAnd, &[w, sign_mask])?;
        let m = self.alu(A::BCsel, &[zero, sign, m])?;
        Ok((m, e, zero))
    }

    fn clamp(&mut self, inst: &Instruction, args: &[Val], max: AluOp, min: AluOp) -> R<Val> {
        self.map(inst, &args[..3], |t, s| {
            let lo = t.alu(max, &[s[0], s[1]])?;
            t.alu(min, &[lo, s[2]])
        })
    }

    fn length(&mut self, inst: &Instruction, v: &Val) -> R<Value> {
        match v {
            Val::Scalar(s) => self.alu(AluOp::FAbs, &[*s]),
            _ => {
                let d = self.dot(inst, v, v)?;
                self.alu(AluOp::FSqrt, &[d])
            }
        }
    }

    /// `interpolateAtCentroid/AtSample/AtOffset` on an FS input.
    fn interpolate_at(&mut self, inst: &'a Instruction, code: u32) -> R<Val> {
        let p = match self.val(self.id(inst, 2)?)? {
            Val::Ptr(p) => p,
            _ => return Err(self.err(inst, "interpolant is not a pointer to an input")),
        };
        let d = self.m.deco(p.root);
        let interp = if d.noperspective {
            Interp::Linear
        } else {
            Interp::Persp
        };
        let (loc, ops) = match code {
            76 => (InterpLoc::Centroid, vec![]),
            77 => (InterpLoc::AtSample, vec![self.scalar(self.id(inst, 3)?)?]),
            _ => {
                let off = self.val(self.id(inst, 3)?)?;
                (
                    InterpLoc::AtOffset,
                    off.leaves()
                        .ok_or_else(|| self.err(inst, "offset is not a vector"))?,
                )
            }
        };
        self.load_io(
            &p,
            StorageClass::Input,
            Some((InterpMode { interp, loc }, ops)),
        )
    }

    /// Image sampling, fetches and queries become per-component opaque `tex` ops.
    /// Through a dynamically indexed handle, every candidate sampler is read and
    /// the index selects among the results (the first candidate when it selects
    /// none: an index past the array is undefined in GLSL and Vulkan).
    pub fn image_op(&mut self, inst: &'a Instruction) -> R<Val> {
        let handle = match self.val(self.id(inst, 0)?)? {
            Val::Image(h) => h,
            _ => return Err(self.err(inst, "image operand is not a texture handle")),
        };
        let mut coords = vec![];
        for i in 1..inst.operands.len() {
            if let Some(id) = id_at(inst, i) {
                let v = self.val(id)?;
                match v.leaves() {
                    Some(l) => coords.extend(l),
                    None => return Err(self.err(inst, "image operand is not a number")),
                }
            }
        }
        let rt = self.result_ty(inst)?;
        let shape = self.shape(rt)?;
        let mut acc: Option<Val> = None;
        for (cond, sampler) in &handle.alts {
            let read = self.texture(&shape, *sampler, &coords);
            acc = Some(match (acc, cond) {
                (Some(prev), Some(c)) => self
                    .select(*c, &read, &prev)
                    .map_err(|e| self.err(inst, e))?,
                _ => read,
            });
        }
        acc.ok_or_else(|| self.err(inst, "texture handle without a sampler"))
    }

    /// One `tex` op a component of `shape` reading `sampler` at `coords`.
    fn texture(&mut self, shape: &Shape, sampler: u32, coords: &[Value]) -> Val {
        let mut out = vec![];
        for (comp, b) in shape.leaf_bits().iter().enumerate() {
            let kind = InstKind::Texture {
                sampler,
                comp: comp as u8,
                coords: coords.to_vec(),
            };
            out.push(self.e.inst(kind, *b));
        }
        shape.val(&mut out.into_iter())
    }
}

/// Where a float's exponent field lies in the word that holds it (`frexp`).
struct FloatBits {
    shift: u32,
    field: u32,
    /// The exponent bias less one: the field of a significand in [0.5, 1).
    bias: u32,
    /// The sign and the fraction bits.
    keep: u32,
}

/// The two members of a struct value (`ModfStruct`'s).
fn pair(v: Val) -> Option<(Val, Val)> {
    match v {
        Val::Composite(mut items) if items.len() == 2 => {
            let b = items.pop()?;
            Some((items.pop()?, b))
        }
        _ => None,
    }
}

/// Instructions that only move values around: on 64-bit values they move the words
/// (see `wide.rs`), so they take the common path.
fn moves_words(op: Op) -> bool {
    matches!(
        op,
        Op::Bitcast
            | Op::CopyObject
            | Op::CopyLogical
            | Op::Undef
            | Op::CompositeConstruct
            | Op::CompositeExtract
            | Op::CompositeInsert
            | Op::VectorExtractDynamic
            | Op::VectorInsertDynamic
            | Op::VectorShuffle
            | Op::Transpose
    )
}

fn arity(code: u32) -> usize {
    match code {
        26 | 37..=42 | 48 | 67 | 68 | 71 | 77 | 78 | 79 | 80 => 2,
        43..=46 | 49 | 50 | 70 | 81 => 3,
        _ => 1,
    }
}
