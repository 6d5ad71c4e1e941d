//! 64-bit numbers (`double`, `int64_t`, `uint64_t`). The IR holds at most 32 bits
//! per value, so a 64-bit scalar is carried as two 32-bit words, low word first
//! (`Val::Composite([lo, hi])`, see `Shape`). Moving such a value — copies, phis,
//! selects, composites, bitcasts, loads and stores, varyings (two components each,
//! as the hardware passes them) — moves its words. Computing on it is an opaque
//! operation per result word with the SPIR-V instruction and its 64-bit operand
//! types, which the interpreter evaluates at full width; componentwise
//! instructions are scalarized first, so an unused component keeps nothing alive.

use std::sync::Arc;

use rspirv::dr::Instruction;
use rspirv::spirv::Op;

use super::context::Translator;
use super::module::Ty;
use super::val::Val;
use crate::ir::{InstKind, OpaqueCode, OpaqueOp, OpaqueTy, Purity, ScalarTy, Value};
use crate::Error;

type R<T> = Result<T, Error>;

/// One scalar operand of a scalarized 64-bit operation: its type and its words.
#[derive(Clone, Debug)]
struct Arg {
    ty: ScalarTy,
    words: Vec<Value>,
}

/// Core instructions that act on each component alone.
fn componentwise_core(op: Op) -> bool {
    use Op::*;
    let n = op as u32;
    // OpConvertFToU..OpFConvert, OpSNegate..OpFMod, IsNan/IsInf, the comparisons
    // OpIEqual..OpFUnordGreaterThanEqual, shifts and bitwise ops.
    (ConvertFToU as u32..=FConvert as u32).contains(&n)
        || (SNegate as u32..=FMod as u32).contains(&n)
        || matches!(op, IsNan | IsInf)
        || (IEqual as u32..=FUnordGreaterThanEqual as u32).contains(&n)
        || (ShiftRightLogical as u32..=Not as u32).contains(&n)
}

/// Names of the componentwise `GLSL.std.450` instructions on 64-bit operands.
fn componentwise_glsl(code: u32) -> Option<&'static str> {
    Some(match code {
        1 => "round",
        2 => "roundeven",
        3 => "trunc",
        4 => "fabs",
        5 => "sabs",
        6 => "fsign",
        7 => "ssign",
        8 => "floor",
        9 => "ceil",
        10 => "fract",
        31 => "sqrt",
        32 => "inversesqrt",
        37 => "fmin",
        38 => "umin",
        39 => "smin",
        40 => "fmax",
        41 => "umax",
        42 => "smax",
        43 => "fclamp",
        44 => "uclamp",
        45 => "sclamp",
        46 => "fmix",
        48 => "step",
        49 => "smoothstep",
        50 => "fma",
        53 => "ldexp",
        79 => "nmin",
        80 => "nmax",
        81 => "nclamp",
        _ => return None,
    })
}

/// Names of the `GLSL.std.450` instructions carried whole (over vectors/matrices).
fn whole_glsl(code: u32) -> Option<&'static str> {
    Some(match code {
        33 => "determinant",
        34 => "matrixinverse",
        66 => "length",
        67 => "distance",
        68 => "cross",
        69 => "normalize",
        70 => "faceforward",
        71 => "reflect",
        72 => "refract",
        _ => return None,
    })
}

impl<'a> Translator<'a> {
    /// The SPIR-V scalar type of a scalar, vector or matrix type, if it is one
    /// varysat carries.
    fn scalar_ty_of(&self, ty: u32) -> Option<ScalarTy> {
        self.opaque_type_of(ty).map(|t| t.scalar)
    }

    /// Whether a type is (a vector or matrix of) a 64-bit scalar.
    pub(crate) fn is_wide_ty(&self, ty: u32) -> bool {
        let mut t = ty;
        for _ in 0..3 {
            match self.m.ty(t) {
                Ok(Ty::Vector { elem, .. }) => t = *elem,
                Ok(Ty::Matrix { col, .. }) => t = *col,
                Ok(Ty::Int { width, .. } | Ty::Float { width }) => return *width == 64,
                _ => return false,
            }
        }
        false
    }

    /// Whether an instruction's result or one of its id operands is 64-bit.
    pub(crate) fn touches_wide(&self, inst: &Instruction) -> bool {
        if inst.result_type.is_some_and(|t| self.is_wide_ty(t)) {
            return true;
        }
        (0..inst.operands.len()).any(|i| {
            super::module::id_at(inst, i)
                .and_then(|id| self.value_type(id))
                .is_some_and(|t| self.is_wide_ty(t))
        })
    }

    /// The type of a value id (instruction result, parameter or constant).
    fn value_type(&self, id: u32) -> Option<u32> {
        self.m
            .value_types
            .get(&id)
            .copied()
            .or_else(|| self.m.consts.get(&id).map(|(t, _)| *t))
    }

    /// A 32-bit index operand; a 64-bit index uses its low word (an index past 2^32
    /// is out of bounds, which SPIR-V leaves undefined).
    pub(crate) fn index_operand(&mut self, id: u32) -> R<Value> {
        match self.val(id)? {
            Val::Scalar(v) => Ok(v),
            Val::Composite(w) if w.len() == 2 => w[0]
                .scalar()
                .ok_or_else(|| self.m.err_plain(format!("%{id} is not an index"))),
            _ => Err(self.m.err_plain(format!("%{id} is not a scalar"))),
        }
    }

    /// The components of operand `i` of `inst`, each as a scalar [`Arg`].
    fn components(&mut self, inst: &Instruction, i: usize) -> R<Vec<Arg>> {
        let id = self.id(inst, i)?;
        let ty = self
            .value_type(id)
            .ok_or_else(|| self.err(inst, format!("operand %{id} has no known type")))?;
        let sty = self
            .scalar_ty_of(ty)
            .ok_or_else(|| self.err(inst, format!("operand %{id} is not a number")))?;
        let v = self.val(id)?;
        let parts: Vec<Val> = match self.m.ty(ty)? {
            Ty::Vector { .. } => v.items().unwrap_or(&[]).to_vec(),
            Ty::Matrix { .. } => v
                .items()
                .unwrap_or(&[])
                .iter()
                .flat_map(|c| c.items().unwrap_or(&[]).to_vec())
                .collect(),
            _ => vec![v],
        };
        parts
            .into_iter()
            .map(|p| {
                let words = p
                    .leaves()
                    .filter(|w| w.len() == sty.words())
                    .ok_or_else(|| self.err(inst, format!("operand %{id} is not a {sty} value")))?;
                Ok(Arg { ty: sty, words })
            })
            .collect()
    }

    /// One scalar operation on 64-bit (or mixed) operands: an opaque op per result
    /// word. Returns the scalar (`Val::Scalar`, or `[lo, hi]` for a 64-bit result).
    fn wide_scalar(&mut self, name: &str, code: OpaqueCode, args: &[Arg], result: ScalarTy) -> Val {
        let op = OpaqueOp {
            name: name.to_owned(),
            purity: Purity::Pure,
            code,
            result: None,
            args: args.iter().map(|a| OpaqueTy::scalar(a.ty)).collect(),
            resource: None,
        };
        let srcs: Vec<Value> = args.iter().flat_map(|a| a.words.clone()).collect();
        let rty = OpaqueTy::scalar(result);
        let mut words = vec![];
        for w in 0..rty.words() {
            let mut one = op.clone();
            one.result = Some((rty, w as u8));
            let kind = InstKind::Opaque {
                op: Arc::new(one),
                srcs: srcs.clone(),
            };
            words.push(Val::Scalar(self.e.inst(kind, result.bits())));
        }
        match words.len() {
            1 => words.remove(0),
            _ => Val::Composite(words),
        }
    }

    /// A core or `GLSL.std.450` instruction applied per component: operand `k` of
    /// component `i` is component `i` of operand `k` (scalar operands broadcast).
    fn per_component(
        &mut self,
        inst: &Instruction,
        name: &str,
        code: OpaqueCode,
        operands: &[usize],
    ) -> R<Val> {
        let rt = inst
            .result_type
            .ok_or_else(|| self.err(inst, "missing result type"))?;
        let rty = self
            .scalar_ty_of(rt)
            .ok_or_else(|| self.err(inst, "result is not a number"))?;
        let mut ops = vec![];
        for &i in operands {
            ops.push(self.components(inst, i)?);
        }
        let n = match self.m.ty(rt)? {
            Ty::Vector { n, .. } => *n as usize,
            _ => 1,
        };
        let mut out = vec![];
        for c in 0..n {
            let mut args = vec![];
            for o in &ops {
                let a = match o.len() {
                    1 => o[0].clone(),
                    _ => o
                        .get(c)
                        .cloned()
                        .ok_or_else(|| self.err(inst, "operands are not vectors of one size"))?,
                };
                args.push(a);
            }
            out.push(self.wide_scalar(name, code.clone(), &args, rty));
        }
        Ok(match self.m.ty(rt)? {
            Ty::Vector { .. } => Val::Composite(out),
            _ => out.remove(0),
        })
    }

    /// A core instruction that computes on 64-bit numbers.
    pub(crate) fn wide_inst(&mut self, inst: &'a Instruction) -> R<Val> {
        let op = inst.class.opcode;
        if componentwise_core(op) {
            let name = format!("{op:?}").to_lowercase();
            let operands: Vec<usize> = (0..inst.operands.len()).collect();
            return self.per_component(inst, &name, OpaqueCode::Core(op as u32), &operands);
        }
        match op {
            Op::Select => self.wide_select(inst),
            Op::Dot => {
                let (a, b) = (self.components(inst, 0)?, self.components(inst, 1)?);
                self.wide_dot(&a, &b)
                    .ok_or_else(|| self.err(inst, "dot of empty vectors"))
            }
            Op::VectorTimesScalar | Op::MatrixTimesScalar => {
                let s = self.components(inst, 1)?;
                let a = self.val(self.id(inst, 0)?)?;
                self.wide_scale(inst, &a, &s[0])
            }
            Op::MatrixTimesVector => {
                let m = self.wide_columns(inst, 0)?;
                let v = self.components(inst, 1)?;
                self.wide_mat_vec(inst, &m, &v)
            }
            Op::VectorTimesMatrix => {
                let v = self.components(inst, 0)?;
                let m = self.wide_columns(inst, 1)?;
                let mut out = vec![];
                for c in &m {
                    out.push(
                        self.wide_dot(&v, c)
                            .ok_or_else(|| self.err(inst, "empty vector"))?,
                    );
                }
                Ok(Val::Composite(out))
            }
            Op::MatrixTimesMatrix => {
                let a = self.wide_columns(inst, 0)?;
                let b = self.wide_columns(inst, 1)?;
                let mut out = vec![];
                for c in &b {
                    out.push(self.wide_mat_vec(inst, &a, c)?);
                }
                Ok(Val::Composite(out))
            }
            Op::OuterProduct => {
                let a = self.val(self.id(inst, 0)?)?;
                let b = self.components(inst, 1)?;
                let mut out = vec![];
                for s in &b {
                    out.push(self.wide_scale(inst, &a, s)?);
                }
                Ok(Val::Composite(out))
            }
            _ => self.opaque_fallback(inst),
        }
    }

    /// `OpSelect` with a vector condition: a word-wise `bcsel` per component.
    fn wide_select(&mut self, inst: &Instruction) -> R<Val> {
        let c = self.val(self.id(inst, 0)?)?;
        let (a, b) = (self.val(self.id(inst, 1)?)?, self.val(self.id(inst, 2)?)?);
        match (c, a.items(), b.items()) {
            (Val::Scalar(c), _, _) => self.select(c, &a, &b).map_err(|e| self.err(inst, e)),
            (Val::Composite(cs), Some(ai), Some(bi)) if cs.len() == ai.len() => {
                let (ai, bi) = (ai.to_vec(), bi.to_vec());
                let mut out = vec![];
                for ((c, x), y) in cs.iter().zip(&ai).zip(&bi) {
                    let c = c
                        .scalar()
                        .ok_or_else(|| self.err(inst, "condition is not a boolean vector"))?;
                    out.push(self.select(c, x, y).map_err(|e| self.err(inst, e))?);
                }
                Ok(Val::Composite(out))
            }
            _ => Err(self.err(inst, "select operands do not match")),
        }
    }

    /// The columns of matrix operand `i`, each as its components.
    fn wide_columns(&mut self, inst: &Instruction, i: usize) -> R<Vec<Vec<Arg>>> {
        let id = self.id(inst, i)?;
        let ty = self
            .value_type(id)
            .ok_or_else(|| self.err(inst, "matrix operand has no type"))?;
        let rows = match self.m.ty(ty)? {
            Ty::Matrix { col, .. } => match self.m.ty(*col)? {
                Ty::Vector { n, .. } => *n as usize,
                _ => 1,
            },
            _ => return Err(self.err(inst, "matrix operand expected")),
        };
        let all = self.components(inst, i)?;
        Ok(all.chunks(rows).map(<[Arg]>::to_vec).collect())
    }

    fn arg_of(&self, v: &Val, ty: ScalarTy) -> Option<Arg> {
        v.leaves()
            .filter(|w| w.len() == ty.words())
            .map(|words| Arg { ty, words })
    }

    fn fmul(&mut self, a: &Arg, b: &Arg) -> Arg {
        let v = self.wide_scalar(
            "fmul",
            OpaqueCode::Core(Op::FMul as u32),
            &[a.clone(), b.clone()],
            a.ty,
        );
        self.arg_of(&v, a.ty).unwrap_or_else(|| a.clone())
    }

    fn fadd(&mut self, a: &Arg, b: &Arg) -> Arg {
        let v = self.wide_scalar(
            "fadd",
            OpaqueCode::Core(Op::FAdd as u32),
            &[a.clone(), b.clone()],
            a.ty,
        );
        self.arg_of(&v, a.ty).unwrap_or_else(|| a.clone())
    }

    fn wide_val(a: Arg) -> Val {
        match a.words.as_slice() {
            [one] => Val::Scalar(*one),
            ws => Val::Composite(ws.iter().map(|w| Val::Scalar(*w)).collect()),
        }
    }

    /// `dot(a, b)` as a chain of multiplies and adds.
    fn wide_dot(&mut self, a: &[Arg], b: &[Arg]) -> Option<Val> {
        let mut acc: Option<Arg> = None;
        for (x, y) in a.iter().zip(b) {
            let p = self.fmul(x, y);
            acc = Some(match acc {
                Some(s) => self.fadd(&s, &p),
                None => p,
            });
        }
        acc.map(Self::wide_val)
    }

    /// Every component of a vector or matrix value times a scalar.
    fn wide_scale(&mut self, inst: &Instruction, v: &Val, s: &Arg) -> R<Val> {
        match v.items() {
            Some(items) if items.first().is_some_and(|i| i.items().is_some()) => {
                let items = items.to_vec();
                let mut out = vec![];
                for i in &items {
                    out.push(self.wide_scale(inst, i, s)?);
                }
                Ok(Val::Composite(out))
            }
            _ => {
                let x = self
                    .arg_of(v, s.ty)
                    .ok_or_else(|| self.err(inst, "vector operand expected"))?;
                Ok(Self::wide_val(self.fmul(&x, s)))
            }
        }
    }

    /// Matrix (columns of components) times a vector: the sum of columns scaled by
    /// the vector's components.
    fn wide_mat_vec(&mut self, inst: &Instruction, m: &[Vec<Arg>], v: &[Arg]) -> R<Val> {
        let mut acc: Option<Vec<Arg>> = None;
        for (col, s) in m.iter().zip(v) {
            let term: Vec<Arg> = col.iter().map(|x| self.fmul(x, s)).collect();
            acc = Some(match acc {
                None => term,
                Some(prev) => prev
                    .iter()
                    .zip(&term)
                    .map(|(a, b)| self.fadd(a, b))
                    .collect(),
            });
        }
        let acc = acc.ok_or_else(|| self.err(inst, "empty matrix"))?;
        Ok(Val::Composite(
            acc.into_iter().map(Self::wide_val).collect(),
        ))
    }

    /// A `GLSL.std.450` instruction with a 64-bit operand or result.
    pub(crate) fn wide_ext(&mut self, inst: &'a Instruction, code: u32) -> R<Val> {
        let operands: Vec<usize> = (2..inst.operands.len()).collect();
        let ext = OpaqueCode::Ext("GLSL.std.450".into(), code);
        if let Some(name) = componentwise_glsl(code) {
            return self.per_component(inst, name, ext, &operands);
        }
        match code {
            // PackDouble2x32 / UnpackDouble2x32: the words themselves.
            59 | 65 => {
                let v = self.val(self.id(inst, 2)?)?;
                let rt = inst
                    .result_type
                    .ok_or_else(|| self.err(inst, "missing result type"))?;
                let words = v
                    .leaves()
                    .filter(|l| l.len() == 2)
                    .ok_or_else(|| self.err(inst, "operand is not two words"))?;
                let shape = self.shape(rt)?;
                Ok(shape.val(&mut words.into_iter()))
            }
            // ModfStruct: `{x - trunc(x), trunc(x)}` per component.
            36 => {
                let x = self.components(inst, 2)?;
                let (mut fract, mut whole) = (vec![], vec![]);
                for c in &x {
                    let t = self.wide_scalar(
                        "trunc",
                        OpaqueCode::Ext("GLSL.std.450".into(), 3),
                        std::slice::from_ref(c),
                        c.ty,
                    );
                    let t = self
                        .arg_of(&t, c.ty)
                        .ok_or_else(|| self.err(inst, "trunc"))?;
                    let f = self.wide_scalar(
                        "fsub",
                        OpaqueCode::Core(Op::FSub as u32),
                        &[c.clone(), t.clone()],
                        c.ty,
                    );
                    fract.push(f);
                    whole.push(Self::wide_val(t));
                }
                let pack = |mut v: Vec<Val>| match v.len() {
                    1 => v.remove(0),
                    _ => Val::Composite(v),
                };
                Ok(Val::Composite(vec![pack(fract), pack(whole)]))
            }
            _ => match whole_glsl(code) {
                Some(name) => self
                    .opaque(
                        inst,
                        name.into(),
                        Purity::Pure,
                        ext,
                        &operands,
                        super::opaque::Extra::none(),
                    )?
                    .ok_or_else(|| self.err(inst, "missing result")),
                None => Err(self.err(
                    inst,
                    format!("GLSL.std.450 instruction {code} on 64-bit values is not supported"),
                )),
            },
        }
    }
}
