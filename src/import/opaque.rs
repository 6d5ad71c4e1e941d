//! Instructions varysat carries as opaque operations (see `ir::OpaqueOp`):
//! derivatives and helper-invocation queries (stage-bound), `GLSL.std.450` functions
//! without a native form, bitfield ops and buffer lengths (pure), atomics and image
//! stores (effects), and any other value instruction whose operands are plain values
//! (an effect, the conservative class). Each keeps its SPIR-V opcode or extended
//! instruction number and operand types, so a SPIR-V writer can re-create it.

use std::sync::Arc;

use rspirv::dr::Instruction;
use rspirv::spirv::Op;

use rspirv::dr::Operand;

use super::context::Translator;
use super::module::Ty;
use super::val::{Texel, Val};
use crate::ir::{InstKind, OpaqueCode, OpaqueOp, OpaqueTy, Phi, Purity, Resource, ScalarTy, Value};
use crate::Error;

type R<T> = Result<T, Error>;

/// Leading operands that are not SPIR-V ids of the instruction (an atomic's address).
pub(crate) struct Extra {
    pub args: Vec<OpaqueTy>,
    pub vals: Vec<Value>,
    pub resource: Option<Resource>,
}

impl Extra {
    pub fn none() -> Extra {
        Extra {
            args: vec![],
            vals: vec![],
            resource: None,
        }
    }
}

/// A signed integer type as its unsigned twin, and a 32-bit float too when the
/// atomic only moves bits (`floats`); other types unchanged.
fn unsigned_word(t: OpaqueTy, floats: bool) -> OpaqueTy {
    match t.scalar {
        ScalarTy::I32 => OpaqueTy {
            scalar: ScalarTy::U32,
            ..t
        },
        ScalarTy::I64 => OpaqueTy {
            scalar: ScalarTy::U64,
            ..t
        },
        ScalarTy::F32 if floats => OpaqueTy {
            scalar: ScalarTy::U32,
            ..t
        },
        _ => t,
    }
}

/// Whether an atomic moves its word's bits without reading them as a number.
fn moves_bits(op: Op) -> bool {
    matches!(
        op,
        Op::AtomicLoad | Op::AtomicStore | Op::AtomicExchange | Op::AtomicCompareExchange
    )
}

/// The purity of a core instruction varysat imports opaquely, if it is one.
pub(crate) fn core_purity(op: Op) -> Option<Purity> {
    use Op::*;
    Some(match op {
        DPdx
        | DPdy
        | Fwidth
        | DPdxFine
        | DPdyFine
        | FwidthFine
        | DPdxCoarse
        | DPdyCoarse
        | FwidthCoarse
        | IsHelperInvocationEXT => Purity::Stage,
        // Uniform, but the buffer may be bound in this stage only.
        ArrayLength => Purity::Stage,
        BitFieldInsert
        | BitFieldSExtract
        | BitFieldUExtract
        | BitReverse
        | BitCount
        | ImageSparseTexelsResident => Purity::Pure,
        ImageWrite | ReadClockKHR => Purity::Effect,
        _ if is_atomic(op) => Purity::Effect,
        _ if is_subgroup(op) => Purity::Stage,
        _ => return None,
    })
}

/// AMD's three-operand min/max/median set.
pub(crate) const TRINARY_MINMAX: &str = "SPV_AMD_shader_trinary_minmax";

/// The GLSL names of `SPV_AMD_shader_trinary_minmax` instructions 1-9.
fn trinary_name(code: u32) -> Option<&'static str> {
    let names = [
        "fmin3", "umin3", "smin3", "fmax3", "umax3", "smax3", "fmid3", "umid3", "smid3",
    ];
    names.get((code as usize).checked_sub(1)?).copied()
}

/// An opaque op name for instruction `code` of set `set`: the set's letters and
/// digits lowercased, `_`, the number.
fn ext_op_name(set: &str, code: u32) -> String {
    let mut name: String = set
        .chars()
        .map(|c| match c.is_ascii_alphanumeric() {
            true => c.to_ascii_lowercase(),
            false => '_',
        })
        .collect();
    name.push_str(&format!("_{code}"));
    name
}

/// Atomic instructions whose first operand is a pointer.
pub(crate) fn is_atomic(op: Op) -> bool {
    use Op::*;
    matches!(
        op,
        AtomicLoad
            | AtomicStore
            | AtomicExchange
            | AtomicCompareExchange
            | AtomicIIncrement
            | AtomicIDecrement
            | AtomicIAdd
            | AtomicISub
            | AtomicSMin
            | AtomicUMin
            | AtomicSMax
            | AtomicUMax
            | AtomicAnd
            | AtomicOr
            | AtomicXor
            | AtomicFAddEXT
            | AtomicFMinEXT
            | AtomicFMaxEXT
    )
}

/// Subgroup operations: their results depend on the other invocations of the stage.
fn is_subgroup(op: Op) -> bool {
    let n = op as u32;
    // OpGroupNonUniformElect .. OpGroupNonUniformQuadSwap, and the KHR ballot /
    // vote instructions.
    (333..=366).contains(&n) || (4421..=4432).contains(&n)
}

/// The id at operand `i`: a plain id, or a scope or memory-semantics id.
fn any_id(inst: &Instruction, i: usize) -> Option<u32> {
    match inst.operands.get(i) {
        Some(Operand::IdRef(id) | Operand::IdScope(id) | Operand::IdMemorySemantics(id)) => {
            Some(*id)
        }
        _ => None,
    }
}

/// A readable name for a core opcode (`OpDPdxFine` is `dpdxfine`).
fn core_name(op: Op) -> String {
    format!("{op:?}").to_lowercase()
}

/// Names of the `GLSL.std.450` instructions imported opaquely.
pub(crate) fn glsl_name(code: u32) -> Option<&'static str> {
    Some(match code {
        2 => "roundeven",
        16 => "asin",
        17 => "acos",
        18 => "atan",
        19 => "sinh",
        20 => "cosh",
        21 => "tanh",
        22 => "asinh",
        23 => "acosh",
        24 => "atanh",
        25 => "atan2",
        33 => "determinant",
        34 => "matrixinverse",
        53 => "ldexp",
        54 => "packsnorm4x8",
        55 => "packunorm4x8",
        56 => "packsnorm2x16",
        57 => "packunorm2x16",
        58 => "packhalf2x16",
        60 => "unpacksnorm2x16",
        61 => "unpackunorm2x16",
        62 => "unpackhalf2x16",
        63 => "unpacksnorm4x8",
        64 => "unpackunorm4x8",
        72 => "refract",
        73 => "findilsb",
        74 => "findsmsb",
        75 => "findumsb",
        _ => return None,
    })
}

impl<'a> Translator<'a> {
    /// The opaque type of a scalar, vector or matrix type, if it is one.
    pub(crate) fn opaque_type_of(&self, ty: u32) -> Option<OpaqueTy> {
        let scalar = |t: &Ty| -> Option<ScalarTy> {
            Some(match t {
                Ty::Bool => ScalarTy::Bool,
                Ty::Float { width: 32 } => ScalarTy::F32,
                Ty::Float { width: 16 } => ScalarTy::F16,
                Ty::Int {
                    width: 32,
                    signed: true,
                } => ScalarTy::I32,
                Ty::Int { width: 32, .. } => ScalarTy::U32,
                Ty::Int {
                    width: 16,
                    signed: true,
                } => ScalarTy::I16,
                Ty::Int { width: 16, .. } => ScalarTy::U16,
                Ty::Float { width: 64 } => ScalarTy::F64,
                Ty::Int {
                    width: 64,
                    signed: true,
                } => ScalarTy::I64,
                Ty::Int { width: 64, .. } => ScalarTy::U64,
                _ => return None,
            })
        };
        let small = |n: u32| u8::try_from(n).ok().filter(|n| (2..=4).contains(n));
        match self.m.ty(ty).ok()? {
            Ty::Vector { elem, n } => Some(OpaqueTy {
                scalar: scalar(self.m.ty(*elem).ok()?)?,
                rows: small(*n)?,
                cols: 1,
            }),
            Ty::Matrix { col, n } => {
                let Ty::Vector { elem, n: rows } = self.m.ty(*col).ok()? else {
                    return None;
                };
                Some(OpaqueTy {
                    scalar: scalar(self.m.ty(*elem).ok()?)?,
                    rows: small(*rows)?,
                    cols: small(*n)?,
                })
            }
            t => Some(OpaqueTy::scalar(scalar(t)?)),
        }
    }

    /// The opaque type of a scalar, vector or matrix type.
    pub(crate) fn opaque_ty(&self, inst: &Instruction, ty: u32) -> R<OpaqueTy> {
        self.opaque_type_of(ty).ok_or_else(|| {
            self.err(
                inst,
                format!("type %{ty} cannot be an opaque operand or result"),
            )
        })
    }

    /// The type id of a value id (instruction result, parameter or constant).
    pub(crate) fn type_of(&self, inst: &Instruction, id: u32) -> R<u32> {
        self.m
            .value_types
            .get(&id)
            .copied()
            .or_else(|| self.m.consts.get(&id).map(|(t, _)| *t))
            .ok_or_else(|| self.err(inst, format!("operand %{id} has no known type")))
    }

    /// Emits `inst` as an opaque operation over `extra` then the value operands at
    /// `operands` (operand indices of `inst`); one IR instruction per result
    /// component. Returns the result value, `None` without one.
    pub(crate) fn opaque(
        &mut self,
        inst: &Instruction,
        name: String,
        purity: Purity,
        code: OpaqueCode,
        operands: &[usize],
        extra: Extra,
    ) -> R<Option<Val>> {
        let (mut args, mut srcs) = (extra.args, extra.vals);
        for &i in operands {
            let id = any_id(inst, i)
                .ok_or_else(|| self.err(inst, format!("operand {i} is not an id")))?;
            let ty = self.opaque_ty(inst, self.type_of(inst, id)?)?;
            let leaves = self
                .val(id)?
                .leaves()
                .filter(|l| l.len() == ty.words())
                .ok_or_else(|| self.err(inst, format!("operand %{id} is not a {ty} value")))?;
            args.push(ty);
            srcs.extend(leaves);
        }
        // A storage buffer atomic works on a word whatever its signedness (the opcode
        // says how min and max compare), and the SPIR-V export views buffers as
        // unsigned words: recording signed words as unsigned keeps export and
        // re-import the same operation. So does recording a float word as unsigned
        // where the atomic only moves its bits (an exchange, say).
        let atomic = match code {
            OpaqueCode::Core(c) => Op::from_u32(c).filter(|o| is_atomic(*o)),
            _ => None,
        };
        let on_words = matches!(extra.resource, Some(Resource::Buffer(_))) && atomic.is_some();
        let floats = atomic.is_some_and(moves_bits);
        if on_words {
            args = args.into_iter().map(|a| unsigned_word(a, floats)).collect();
        }
        let rt = inst
            .result_type
            .filter(|t| !matches!(self.m.ty(*t), Ok(Ty::Void)));
        let mut op = OpaqueOp {
            name,
            purity,
            code,
            result: None,
            args,
            resource: extra.resource,
        };
        let Some(rt) = rt else {
            op.purity = Purity::Effect;
            self.e.effect(InstKind::Opaque {
                op: Arc::new(op),
                srcs,
            });
            return Ok(None);
        };
        let mut ty = self.opaque_ty(inst, rt)?;
        if on_words {
            ty = unsigned_word(ty, floats);
        }
        let mut out = vec![];
        for comp in 0..ty.words() {
            let mut one = op.clone();
            one.result = Some((ty, comp as u8));
            let kind = InstKind::Opaque {
                op: Arc::new(one),
                srcs: srcs.clone(),
            };
            out.push(self.e.inst(kind, ty.scalar.bits()));
        }
        let shape = self.shape(rt)?;
        Ok(Some(shape.val(&mut out.into_iter())))
    }

    /// A core instruction imported opaquely (see [`core_purity`]).
    pub(crate) fn opaque_core(&mut self, inst: &'a Instruction, purity: Purity) -> R<Option<Val>> {
        let op = inst.class.opcode;
        let code = OpaqueCode::Core(op as u32);
        let ids: Vec<usize> = (0..inst.operands.len())
            .filter(|i| any_id(inst, *i).is_some())
            .collect();
        if is_atomic(op) {
            if let Val::Texel(t) = self.val(self.id(inst, 0)?)? {
                return self.image_atomic(inst, purity, *t, &ids[1..]);
            }
            let p = self.ptr_operand(inst, 0)?;
            let (buffer, addr) = self.ssbo_word(&p, inst)?;
            let extra = Extra {
                args: vec![OpaqueTy::scalar(ScalarTy::U32)],
                vals: vec![addr],
                resource: Some(Resource::Buffer(buffer)),
            };
            return self.opaque(inst, core_name(op), purity, code, &ids[1..], extra);
        }
        if op == Op::ArrayLength {
            // The member index (a literal in SPIR-V) is a constant operand.
            let p = self.ptr_operand(inst, 0)?;
            if self.block_array(p.root).is_some() {
                return Err(self.err(inst, "array length in an array of storage blocks"));
            }
            let buffer = *self
                .layout
                .ssbo
                .get(&p.root)
                .ok_or_else(|| self.err(inst, "array length of a non-storage-buffer"))?;
            let member = super::module::lit_at(inst, 1)
                .ok_or_else(|| self.err(inst, "member index is not a literal"))?;
            let extra = Extra {
                args: vec![OpaqueTy::scalar(ScalarTy::U32)],
                vals: vec![self.e.u32(member)],
                resource: Some(Resource::Buffer(buffer)),
            };
            return self.opaque(inst, core_name(op), purity, code, &[], extra);
        }
        if op == Op::ImageWrite {
            return self.image_write(inst, purity, &ids[1..]);
        }
        self.opaque(inst, core_name(op), purity, code, &ids, Extra::none())
    }

    /// The texel an `OpImageTexelPointer` names (operands: a pointer to an image
    /// variable, the coordinate, the sample). Through a dynamic index into an array
    /// of images it names one candidate texel per element (loading the handle
    /// bounds their number); the atomic then runs on the selected one.
    pub(crate) fn texel_pointer(&mut self, inst: &'a Instruction) -> R<Val> {
        let p = self.ptr_operand(inst, 0)?;
        let Val::Image(handle) = self.load(&p, inst)? else {
            return Err(self.err(inst, "texel pointer into something other than an image"));
        };
        let (coord, coord_ty) = self.typed_operand(inst, 1)?;
        let (sample, sample_ty) = self.typed_operand(inst, 2)?;
        Ok(Val::Texel(Box::new(Texel {
            images: handle.alts,
            coord,
            coord_ty,
            sample,
            sample_ty,
        })))
    }

    /// The scalar leaves of the value operand at `i` and its SPIR-V type.
    fn typed_operand(&mut self, inst: &Instruction, i: usize) -> R<(Vec<Value>, OpaqueTy)> {
        let id = self.id(inst, i)?;
        let ty = self.opaque_ty(inst, self.type_of(inst, id)?)?;
        let leaves = self
            .val(id)?
            .leaves()
            .filter(|l| l.len() == ty.words())
            .ok_or_else(|| self.err(inst, format!("operand %{id} is not a {ty} value")))?;
        Ok((leaves, ty))
    }

    /// An atomic on an image texel (`imageAtomicExchange`, ...): an effect on the
    /// image named `image` + the atomic's name, over the coordinate, the sample,
    /// then the atomic's own operands (scope, semantics, values).
    /// Through a dynamic index into an array of images, one atomic per candidate
    /// image, each under the condition that the index selects it; the result is the
    /// selected atomic's (undefined for an index past the array, where none runs:
    /// GLSL leaves that undefined).
    fn image_atomic(
        &mut self,
        inst: &'a Instruction,
        purity: Purity,
        t: Texel,
        ids: &[usize],
    ) -> R<Option<Val>> {
        let op = inst.class.opcode;
        let mut vals = t.coord;
        vals.extend(t.sample);
        let args = vec![t.coord_ty, t.sample_ty];
        let name = format!("image{}", core_name(op));
        let atomic = |this: &mut Self, image: u32| {
            let extra = Extra {
                args: args.clone(),
                vals: vals.clone(),
                resource: Some(Resource::Image(image)),
            };
            let code = OpaqueCode::Core(op as u32);
            this.opaque(inst, name.clone(), purity, code, ids, extra)
        };
        if let [(None, image)] = t.images.as_slice() {
            return atomic(self, *image);
        }
        // The selected result so far, leaf by leaf (`None`: no result).
        let mut selected: Option<Vec<Value>> = None;
        for (cond, image) in t.images {
            let Some(cond) = cond else {
                return Err(self.err(inst, "an unconditional image among dynamic candidates"));
            };
            self.e.open();
            let r = atomic(self, image);
            let then_body = self.e.close();
            let leaves =
                match r? {
                    Some(v) => Some(v.leaves().ok_or_else(|| {
                        self.err(inst, "image atomic result is not a plain value")
                    })?),
                    None => None,
                };
            let mut phis = vec![];
            if let Some(now) = leaves {
                let before = match selected.take() {
                    Some(b) => b,
                    None => now.iter().map(|v| self.e.undef(self.e.bits(*v))).collect(),
                };
                let mut merged = vec![];
                for (then_val, else_val) in now.into_iter().zip(before) {
                    let dst = self.e.phi_value(self.e.bits(then_val));
                    phis.push(Phi {
                        dst,
                        then_val,
                        else_val,
                    });
                    merged.push(dst);
                }
                selected = Some(merged);
            }
            self.e.push_stmt(crate::ir::Stmt::If {
                cond,
                then_body,
                else_body: vec![],
                phis,
                loc: None,
            });
        }
        let Some(leaves) = selected else {
            return Ok(None);
        };
        let rt = inst
            .result_type
            .ok_or_else(|| self.err(inst, "image atomic result without a type"))?;
        Ok(Some(self.shape(rt)?.val(&mut leaves.into_iter())))
    }

    /// An image store; through a dynamically indexed handle, one store a candidate
    /// image, each under the condition that the index selects it (an index past the
    /// array stores nothing: GLSL leaves it undefined).
    fn image_write(
        &mut self,
        inst: &'a Instruction,
        purity: Purity,
        ids: &[usize],
    ) -> R<Option<Val>> {
        let Val::Image(handle) = self.val(self.id(inst, 0)?)? else {
            return Err(self.err(inst, "image operand is not an image handle"));
        };
        let code = || OpaqueCode::Core(Op::ImageWrite as u32);
        for (cond, img) in handle.alts {
            let extra = Extra {
                resource: Some(Resource::Image(img)),
                ..Extra::none()
            };
            let Some(cond) = cond else {
                self.opaque(inst, core_name(Op::ImageWrite), purity, code(), ids, extra)?;
                continue;
            };
            self.e.open();
            let r = self.opaque(inst, core_name(Op::ImageWrite), purity, code(), ids, extra);
            let then_body = self.e.close();
            r?;
            self.e.push_stmt(crate::ir::Stmt::If {
                cond,
                then_body,
                else_body: vec![],
                phis: vec![],
                loc: None,
            });
        }
        Ok(None)
    }

    /// A value instruction varysat has no translation for, carried as an effect when
    /// every operand is an id of a plain value (never removed, moved or duplicated).
    pub(crate) fn opaque_fallback(&mut self, inst: &'a Instruction) -> R<Val> {
        let ids: Vec<usize> = (0..inst.operands.len()).collect();
        let has_result = inst
            .result_type
            .is_some_and(|t| !matches!(self.m.ty(t), Ok(Ty::Void)));
        if !has_result || ids.iter().any(|i| any_id(inst, *i).is_none()) {
            return Err(self.unsupported(inst));
        }
        let op = inst.class.opcode;
        let code = OpaqueCode::Core(op as u32);
        match self.opaque(
            inst,
            core_name(op),
            Purity::Effect,
            code,
            &ids,
            Extra::none(),
        ) {
            Ok(Some(v)) => Ok(v),
            _ => Err(self.unsupported(inst)),
        }
    }

    /// An instruction of an extended set other than `GLSL.std.450` and
    /// `NonSemantic.*`: pure with its name for `SPV_AMD_shader_trinary_minmax`
    /// (min3/max3/mid3, which the interpreter evaluates), otherwise an effect named
    /// after the set and number (its meaning unknown, it is never moved, removed or
    /// duplicated).
    pub(crate) fn opaque_other_ext(&mut self, inst: &'a Instruction, set: &str) -> R<Option<Val>> {
        let code = super::module::lit_at(inst, 1)
            .ok_or_else(|| self.err(inst, "missing extended opcode"))?;
        let ids: Vec<usize> = (2..inst.operands.len()).collect();
        let (name, purity) = match (set, trinary_name(code)) {
            (TRINARY_MINMAX, Some(n)) => (n.to_owned(), Purity::Pure),
            _ => (ext_op_name(set, code), Purity::Effect),
        };
        let code = OpaqueCode::Ext(set.into(), code);
        self.opaque(inst, name, purity, code, &ids, Extra::none())
    }

    /// A `GLSL.std.450` instruction without a native translation (`None` when the
    /// code is not one varysat carries).
    pub(crate) fn opaque_glsl(&mut self, inst: &'a Instruction, code: u32) -> R<Option<Val>> {
        let Some(name) = glsl_name(code) else {
            return Err(self.err(
                inst,
                format!("GLSL.std.450 instruction {code} is not supported"),
            ));
        };
        let ids: Vec<usize> = (2..inst.operands.len()).collect();
        let code = OpaqueCode::Ext("GLSL.std.450".into(), code);
        self.opaque(inst, name.into(), Purity::Pure, code, &ids, Extra::none())
    }
}
