//! The entry function regenerated from the IR: structured statements become
//! selection and loop constructs, every IR value is carried as `bool`, `uint16_t`
//! or `uint` (its bit pattern) and bitcast where an operation or a declaration
//! types it.

use std::collections::BTreeMap;

use rspirv::dr::{self, Instruction, Operand};
use rspirv::spirv::{Capability, FunctionControl, LoopControl, Op, SelectionControl};

use super::context::fail;
use super::globals::Globals;
use super::iface::{declared_loc, Level, Num, Place, Plan, Scalar, StageIo, Step};
use super::loose::Emit;
use super::resources::{BufKind, CounterVar, Handle, Resources, TplOperand};
use crate::ir::{
    Block, Indirect, Inst, InstKind, InterpLoc, OpaqueCode, OpaqueOp, OpaqueTy, Purity, Resource,
    ScalarTy, Shader, Stmt, SystemValue, Value,
};
use crate::Error;

struct LoopCtx {
    merge: u32,
    cont: u32,
    /// Continue edges: source block and the header-phi values it passes.
    conts: Vec<(u32, Vec<u32>)>,
}

/// Function body under construction.
pub(crate) struct Body<'a, 'p> {
    pub g: &'a mut Globals,
    pub io: &'a mut StageIo<'p>,
    pub res: &'a mut Resources,
    pub plan: &'p Plan,
    shader: &'a Shader,
    blocks: Vec<dr::Block>,
    label: u32,
    insts: Vec<Instruction>,
    vals: Vec<Option<u32>>,
    consts: BTreeMap<Value, u32>,
    /// ALU definitions (op and sources), for recognising aligned buffer offsets.
    alu_defs: BTreeMap<Value, (crate::ir::AluOp, Vec<Value>)>,
    loops: Vec<LoopCtx>,
    /// Image results of the current block, by sampler and coordinate ids.
    tex: BTreeMap<(u32, Vec<u32>), u32>,
    /// Opaque results of the current block, by description and operand ids.
    /// Opaque instructions of the current block by operation and operands, with the
    /// result components already read from each (see `cached_opaque`).
    opaque_cache: BTreeMap<String, (u32, u64)>,
}

/// The declared scalar of an opaque type's components.
/// The struct member an opaque op with this opcode stands for, when the
/// instruction's SPIR-V result is a two-member struct: the high word of
/// `OpUMulExtended` / `OpSMulExtended` (src/import/extended.rs builds the low word
/// from `imul`).
fn struct_result_member(opc: Op) -> Option<u32> {
    matches!(opc, Op::UMulExtended | Op::SMulExtended).then_some(1)
}

fn opaque_scalar(t: ScalarTy) -> Scalar {
    let bits = if t.is_wide() { 64 } else { t.bits().bits() };
    let num = match t {
        ScalarTy::F32 | ScalarTy::F16 | ScalarTy::F64 => Num::Float,
        ScalarTy::I32 | ScalarTy::I16 | ScalarTy::I64 => Num::Sint,
        ScalarTy::U32 | ScalarTy::U16 | ScalarTy::U64 => Num::Uint,
        ScalarTy::Bool => Num::Bool,
    };
    Scalar { num, bits }
}

impl<'a, 'p> Body<'a, 'p> {
    /// A body for `shader`.
    pub fn new(
        g: &'a mut Globals,
        io: &'a mut StageIo<'p>,
        res: &'a mut Resources,
        plan: &'p Plan,
        shader: &'a Shader,
    ) -> Body<'a, 'p> {
        let mut consts = BTreeMap::new();
        let mut alu_defs = BTreeMap::new();
        shader.for_each_inst(|i| match (i.result, &i.kind) {
            (Some(r), InstKind::Const(c)) => {
                consts.insert(r, *c);
            }
            (Some(r), InstKind::Alu { op, srcs, .. }) => {
                alu_defs.insert(r, (*op, srcs.clone()));
            }
            _ => {}
        });
        let label = g.id();
        Body {
            g,
            io,
            res,
            plan,
            shader,
            blocks: vec![],
            label,
            insts: vec![],
            vals: vec![None; shader.values.len()],
            consts,
            alu_defs,
            loops: vec![],
            tex: BTreeMap::new(),
            opaque_cache: BTreeMap::new(),
        }
    }

    /// Emits the whole function; returns its id.
    pub fn emit(mut self) -> Result<u32, Error> {
        let body = &self.shader.body;
        if self.block(body)? {
            self.terminate(Op::Return, vec![]);
        }
        let void = self.g.void();
        let fty = self.g.ty(Op::TypeFunction, vec![Operand::IdRef(void)]);
        let fid = self.g.id();
        let def = Instruction::new(
            Op::Function,
            Some(void),
            Some(fid),
            vec![
                Operand::FunctionControl(FunctionControl::NONE),
                Operand::IdRef(fty),
            ],
        );
        let f = dr::Function {
            def: Some(def),
            end: Some(Instruction::new(Op::FunctionEnd, None, None, vec![])),
            parameters: vec![],
            blocks: std::mem::take(&mut self.blocks),
        };
        self.g.m.functions.push(f);
        Ok(fid)
    }

    /// Emits an instruction with a result of type `ty`.
    pub fn op(&mut self, op: Op, ty: u32, ops: Vec<Operand>) -> u32 {
        let id = self.g.id();
        self.insts
            .push(Instruction::new(op, Some(ty), Some(id), ops));
        id
    }

    /// Emits an instruction without a result.
    fn effect(&mut self, op: Op, ops: Vec<Operand>) {
        self.insts.push(Instruction::new(op, None, None, ops));
    }

    /// Ends the current block with a terminator and starts an unnamed one.
    fn terminate(&mut self, op: Op, ops: Vec<Operand>) {
        self.insts.push(Instruction::new(op, None, None, ops));
        let label = Instruction::new(Op::Label, None, Some(self.label), vec![]);
        self.blocks.push(dr::Block {
            label: Some(label),
            instructions: std::mem::take(&mut self.insts),
        });
        self.tex.clear();
        self.opaque_cache.clear();
    }

    /// Starts the block `label` (the previous one must be terminated).
    fn start(&mut self, label: u32) {
        self.label = label;
    }

    /// The id of an IR value.
    pub fn val(&self, v: Value) -> Result<u32, Error> {
        self.vals.get(v.index()).copied().flatten().ok_or_else(|| {
            fail(format!(
                "%{} is used before it is defined",
                self.shader.value(v).name
            ))
        })
    }

    /// The constant bit pattern of an IR value, when it is a constant.
    pub fn const_of(&self, v: Value) -> Option<u32> {
        self.consts.get(&v).copied()
    }

    /// The SPIR-V carrier type of an IR value.
    pub fn carrier_of(&mut self, v: Value) -> u32 {
        let bits = self.shader.bits(v);
        self.g.carrier(bits)
    }

    /// The bit size of an IR value.
    pub fn bits_of(&self, v: Value) -> crate::ir::BitSize {
        self.shader.bits(v)
    }

    fn set(&mut self, v: Value, id: u32) {
        self.vals[v.index()] = Some(id);
    }

    /// Emits a block; false when it does not fall through.
    fn block(&mut self, stmts: &Block) -> Result<bool, Error> {
        for s in stmts {
            let falls = match s {
                Stmt::Inst(i) => self.inst(i)?,
                Stmt::If {
                    cond,
                    then_body,
                    else_body,
                    phis,
                    ..
                } => self.if_stmt(*cond, then_body, else_body, phis)?,
                Stmt::Loop { phis, body, .. } => self.loop_stmt(phis, body)?,
                Stmt::Break { .. } => {
                    let l = self
                        .loops
                        .last()
                        .ok_or_else(|| fail("break outside a loop"))?;
                    let merge = l.merge;
                    self.terminate(Op::Branch, vec![Operand::IdRef(merge)]);
                    false
                }
                Stmt::Continue { args, .. } => {
                    let ids = args
                        .iter()
                        .map(|a| self.val(*a))
                        .collect::<Result<Vec<_>, _>>()?;
                    let label = self.label;
                    let l = self
                        .loops
                        .last_mut()
                        .ok_or_else(|| fail("continue outside a loop"))?;
                    l.conts.push((label, ids));
                    let cont = l.cont;
                    self.terminate(Op::Branch, vec![Operand::IdRef(cont)]);
                    false
                }
            };
            if !falls {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn if_stmt(
        &mut self,
        cond: Value,
        then_body: &Block,
        else_body: &Block,
        phis: &[crate::ir::Phi],
    ) -> Result<bool, Error> {
        let c = self.val(cond)?;
        let (tl, el, ml) = (self.g.id(), self.g.id(), self.g.id());
        self.effect(
            Op::SelectionMerge,
            vec![
                Operand::IdRef(ml),
                Operand::SelectionControl(SelectionControl::NONE),
            ],
        );
        self.terminate(
            Op::BranchConditional,
            vec![Operand::IdRef(c), Operand::IdRef(tl), Operand::IdRef(el)],
        );
        let mut preds: Vec<(bool, u32)> = vec![];
        for (label, body, is_then) in [(tl, then_body, true), (el, else_body, false)] {
            self.start(label);
            if self.block(body)? {
                preds.push((is_then, self.label));
                self.terminate(Op::Branch, vec![Operand::IdRef(ml)]);
            }
        }
        self.start(ml);
        if preds.is_empty() {
            self.terminate(Op::Unreachable, vec![]);
            return Ok(false);
        }
        for phi in phis {
            let ty = self.carrier_of(phi.dst);
            let mut ops = vec![];
            for (is_then, label) in &preds {
                let v = if *is_then { phi.then_val } else { phi.else_val };
                ops.push(Operand::IdRef(self.val(v)?));
                ops.push(Operand::IdRef(*label));
            }
            let id = self.op(Op::Phi, ty, ops);
            self.set(phi.dst, id);
        }
        Ok(true)
    }

    fn loop_stmt(&mut self, phis: &[crate::ir::LoopPhi], body: &Block) -> Result<bool, Error> {
        let (hl, bl, cl, ml) = (self.g.id(), self.g.id(), self.g.id(), self.g.id());
        let pre = self.label;
        let inits = phis
            .iter()
            .map(|p| self.val(p.init))
            .collect::<Result<Vec<_>, _>>()?;
        self.terminate(Op::Branch, vec![Operand::IdRef(hl)]);
        self.start(hl);
        let back: Vec<u32> = phis.iter().map(|_| self.g.id()).collect();
        for (i, p) in phis.iter().enumerate() {
            let ty = self.carrier_of(p.dst);
            let id = self.op(
                Op::Phi,
                ty,
                vec![
                    Operand::IdRef(inits[i]),
                    Operand::IdRef(pre),
                    Operand::IdRef(back[i]),
                    Operand::IdRef(cl),
                ],
            );
            self.set(p.dst, id);
        }
        self.effect(
            Op::LoopMerge,
            vec![
                Operand::IdRef(ml),
                Operand::IdRef(cl),
                Operand::LoopControl(LoopControl::NONE),
            ],
        );
        self.terminate(Op::Branch, vec![Operand::IdRef(bl)]);
        self.start(bl);
        self.loops.push(LoopCtx {
            merge: ml,
            cont: cl,
            conts: vec![],
        });
        if self.block(body)? {
            if !phis.is_empty() {
                return Err(fail(
                    "a loop with header phis falls off the end of its body",
                ));
            }
            let label = self.label;
            if let Some(l) = self.loops.last_mut() {
                l.conts.push((label, vec![]));
            }
            self.terminate(Op::Branch, vec![Operand::IdRef(cl)]);
        }
        let ctx = self
            .loops
            .pop()
            .ok_or_else(|| fail("loop stack underflow"))?;
        self.start(cl);
        for (i, p) in phis.iter().enumerate() {
            let ty = self.carrier_of(p.dst);
            let mut ops = vec![];
            for (label, args) in &ctx.conts {
                let a = *args
                    .get(i)
                    .ok_or_else(|| fail("continue with too few values"))?;
                ops.push(Operand::IdRef(a));
                ops.push(Operand::IdRef(*label));
            }
            let inst = if ops.is_empty() {
                Instruction::new(Op::Undef, Some(ty), Some(back[i]), vec![])
            } else {
                Instruction::new(Op::Phi, Some(ty), Some(back[i]), ops)
            };
            self.insts.push(inst);
        }
        self.terminate(Op::Branch, vec![Operand::IdRef(hl)]);
        self.start(ml);
        Ok(true)
    }

    /// Converts a carried value to a declared scalar type.
    pub fn declared_value(&mut self, id: u32, s: Scalar) -> u32 {
        match s.num {
            Num::Bool | Num::Uint => id,
            _ => {
                let ty = s.ty(self.g);
                self.op(Op::Bitcast, ty, vec![Operand::IdRef(id)])
            }
        }
    }

    /// Converts a value of a declared scalar type to its carrier.
    pub fn carried_value(&mut self, id: u32, s: Scalar) -> u32 {
        match s.num {
            Num::Bool | Num::Uint => id,
            _ => {
                let ty = self.g.uint(s.bits);
                self.op(Op::Bitcast, ty, vec![Operand::IdRef(id)])
            }
        }
    }

    /// A pointer to the scalar a place names (the variable itself when no index).
    fn pointer(&mut self, p: &Place, vertex: Option<Value>) -> Result<u32, Error> {
        let mut idx = vec![];
        if p.per_vertex {
            let v = vertex.ok_or_else(|| fail("per-vertex access without a vertex index"))?;
            idx.push(self.val(v)?);
        }
        for (i, k) in p.path.iter().enumerate() {
            match p.dynamic.iter().find(|(at, _)| *at == i) {
                Some((_, d)) => idx.push(*d),
                None => idx.push(self.g.u32(*k)),
            }
        }
        if idx.is_empty() {
            return Ok(p.var);
        }
        let elem = p.scalar.ty(self.g);
        let ptr = self.g.ptr(p.class, elem);
        let mut ops = vec![Operand::IdRef(p.var)];
        ops.extend(idx.into_iter().map(Operand::IdRef));
        Ok(self.op(Op::AccessChain, ptr, ops))
    }

    /// The place of an access to `slot`; with a dynamic index, the scalar that
    /// many locations further in the same component: of the pair's array
    /// variable, or in the original variable of a varying outside the pair (an
    /// input from a stage before it, an output to one after it), an attribute or
    /// a fragment output, through its nest of arrays, matrices and structs
    /// ([`Step::At`]).
    fn io_place(
        &mut self,
        slot: crate::ir::IoSlot,
        output: bool,
        indirect: Option<Indirect>,
    ) -> Result<Place, Error> {
        let mut p = self.io.place(self.g, slot, output)?;
        let Some(ind) = indirect else {
            return Ok(p);
        };
        let (at, off, levels) = match &p.step {
            Step::At { at, off, levels } => (*at, *off, levels.clone()),
            Step::No(what) => {
                return Err(fail(format!(
                    "dynamically indexed {slot}: {what} is not exported"
                )))
            }
        };
        if at + levels.len() > p.path.len() {
            return Err(fail(format!(
                "dynamically indexed {slot}: a path shorter than its array levels"
            )));
        }
        // The location past the array's start: `t`, then, level by level, the
        // locations left inside the element, column or member reached so far.
        let u = self.g.uint(32);
        let mut t = self.val(ind.index)?;
        if off != 0 {
            let k = self.g.u32(off);
            t = self.op(Op::IAdd, u, vec![Operand::IdRef(t), Operand::IdRef(k)]);
        }
        // Struct levels past the last array or matrix change no index.
        let end = levels
            .iter()
            .rposition(|l| matches!(l, Level::Div(_)))
            .map_or(0, |i| i + 1);
        let mut dynamic = vec![];
        for (n, level) in levels[..end].iter().enumerate() {
            let last = n + 1 == end;
            match *level {
                Level::Div(1) => {
                    dynamic.push((at + n, t));
                    break;
                }
                Level::Div(per) => {
                    let k = self.g.u32(per);
                    let q = self.op(Op::UDiv, u, vec![Operand::IdRef(t), Operand::IdRef(k)]);
                    dynamic.push((at + n, q));
                    if !last {
                        t = self.op(Op::UMod, u, vec![Operand::IdRef(t), Operand::IdRef(k)]);
                    }
                }
                // The place's member: the importer's index into an array of
                // structs is the element's multiple plus indices inside the
                // member, which keep to it while they keep to their arrays.
                Level::Member(o) => {
                    if o != 0 {
                        let k = self.g.u32(o);
                        t = self.op(Op::ISub, u, vec![Operand::IdRef(t), Operand::IdRef(k)]);
                    }
                }
            }
        }
        p.dynamic = dynamic;
        Ok(p)
    }

    fn load_place(&mut self, p: &Place, vertex: Option<Value>) -> Result<u32, Error> {
        let ptr = self.pointer(p, vertex)?;
        let ty = p.scalar.ty(self.g);
        let v = self.op(Op::Load, ty, vec![Operand::IdRef(ptr)]);
        if let Some(w) = p.word {
            // One 32-bit word of a 64-bit scalar: its bits as a uvec2.
            let words = self.words_ty();
            let pair = self.op(Op::Bitcast, words, vec![Operand::IdRef(v)]);
            let u = self.g.uint(32);
            return Ok(self.op(
                Op::CompositeExtract,
                u,
                vec![Operand::IdRef(pair), Operand::LiteralBit32(w)],
            ));
        }
        Ok(self.carried_value(v, p.scalar))
    }

    fn store_place(&mut self, p: &Place, vertex: Option<Value>, value: Value) -> Result<(), Error> {
        let ptr = self.pointer(p, vertex)?;
        let v = self.val(value)?;
        let v = match p.word {
            // One word of a 64-bit output: the other word is kept.
            Some(w) => {
                let ty = p.scalar.ty(self.g);
                let old = self.op(Op::Load, ty, vec![Operand::IdRef(ptr)]);
                let words = self.words_ty();
                let pair = self.op(Op::Bitcast, words, vec![Operand::IdRef(old)]);
                let new = self.op(
                    Op::CompositeInsert,
                    words,
                    vec![
                        Operand::IdRef(v),
                        Operand::IdRef(pair),
                        Operand::LiteralBit32(w),
                    ],
                );
                self.op(Op::Bitcast, ty, vec![Operand::IdRef(new)])
            }
            None => self.declared_value(v, p.scalar),
        };
        self.effect(Op::Store, vec![Operand::IdRef(ptr), Operand::IdRef(v)]);
        Ok(())
    }

    /// `uvec2`, the two words of a 64-bit scalar.
    fn words_ty(&mut self) -> u32 {
        let u = self.g.uint(32);
        self.g.vec(u, 2)
    }

    /// Emits one instruction; false when it ends the block (discard).
    fn inst(&mut self, i: &Inst) -> Result<bool, Error> {
        let id = match &i.kind {
            InstKind::Const(c) => {
                let ty = self.carrier_of(result(i)?);
                Some(self.g.constant(ty, *c))
            }
            InstKind::Undef => {
                let ty = self.carrier_of(result(i)?);
                Some(self.op(Op::Undef, ty, vec![]))
            }
            InstKind::Alu { op, exact, srcs } => Some(self.alu(*op, *exact, srcs, result(i)?)?),
            InstKind::LoadInput { slot, indirect } => {
                let p = self.io_place(*slot, false, *indirect)?;
                Some(self.load_place(&p, None)?)
            }
            InstKind::LoadPerVertexInput {
                slot,
                vertex,
                indirect,
            } => {
                let p = self.io_place(*slot, false, *indirect)?;
                Some(self.load_place(&p, Some(*vertex))?)
            }
            InstKind::LoadOutput {
                slot,
                vertex,
                indirect,
            } => {
                let p = self.io_place(*slot, true, *indirect)?;
                Some(self.load_place(&p, *vertex)?)
            }
            InstKind::LoadInterpolatedInput {
                slot,
                mode,
                operands,
                indirect,
            } => Some(self.interpolated(*slot, mode.loc, operands, *indirect)?),
            InstKind::StoreOutput {
                slot,
                value,
                xfb,
                indirect,
                ..
            } => {
                if xfb.is_some() && !self.io.is_producer() {
                    return Err(fail(format!(
                        "{slot}: transform feedback of outputs to a stage outside the pair is not exported"
                    )));
                }
                let p = self.io_place(*slot, true, *indirect)?;
                self.store_place(&p, None, *value)?;
                if let Some(copy) = self.io.xfb_copy(self.g, *slot)? {
                    self.store_place(&copy, None, *value)?;
                }
                None
            }
            InstKind::StorePerVertexOutput {
                slot,
                value,
                vertex,
                indirect,
            } => {
                let p = self.io_place(*slot, true, *indirect)?;
                self.store_place(&p, Some(*vertex), *value)?;
                None
            }
            InstKind::LoadUniform { index, half } => {
                let w = self.uniform_load(*index)?;
                Some(self.half_of(w, *half))
            }
            InstKind::LoadUbo {
                block,
                offset,
                half,
            } => {
                let w = self.ubo_load(*block, *offset)?;
                Some(self.half_of(w, *half))
            }
            InstKind::LoadSystemValue(sv) => Some(self.system_value(*sv)?),
            InstKind::EmitVertex => {
                self.effect(Op::EmitVertex, vec![]);
                None
            }
            InstKind::EndPrimitive => {
                self.effect(Op::EndPrimitive, vec![]);
                None
            }
            InstKind::Barrier => {
                let (w, inv, none) = (self.g.u32(2), self.g.u32(4), self.g.u32(0));
                self.effect(
                    Op::ControlBarrier,
                    vec![Operand::IdRef(w), Operand::IdRef(inv), Operand::IdRef(none)],
                );
                None
            }
            InstKind::Discard => {
                self.terminate(Op::Kill, vec![]);
                return Ok(false);
            }
            InstKind::Texture {
                sampler,
                comp,
                coords,
            } => Some(self.texture(*sampler, *comp, coords, result(i)?)?),
            InstKind::SsboLoad { buffer, addr } => {
                let ptr = self.ssbo_ptr(*buffer, *addr)?;
                let u = self.g.uint(32);
                Some(self.op(Op::Load, u, vec![Operand::IdRef(ptr)]))
            }
            InstKind::Opaque { op, srcs } => self.opaque(op, srcs)?,
            InstKind::SsboStore {
                buffer,
                addr,
                value,
            } => {
                let ptr = self.ssbo_ptr(*buffer, *addr)?;
                let v = self.val(*value)?;
                self.effect(Op::Store, vec![Operand::IdRef(ptr), Operand::IdRef(v)]);
                None
            }
        };
        if let (Some(r), Some(id)) = (i.result, id) {
            self.set(r, id);
        }
        Ok(true)
    }

    fn interpolated(
        &mut self,
        slot: crate::ir::IoSlot,
        loc: InterpLoc,
        operands: &[Value],
        indirect: Option<Indirect>,
    ) -> Result<u32, Error> {
        let p = self.io_place(slot, false, indirect)?;
        let declared = declared_loc(self.plan, slot).unwrap_or(InterpLoc::Center);
        if loc == declared {
            return self.load_place(&p, None);
        }
        if p.scalar.bits != 32 {
            return Err(fail(format!(
                "{slot}: a 16-bit input read at {loc:?} is not exported (the GLSL.std.450 \
                 interpolation functions take 32-bit floats)"
            )));
        }
        let ptr = self.pointer(&p, None)?;
        let ext = self.g.glsl_std();
        self.g.capability(Capability::InterpolationFunction);
        let mut args = vec![Operand::IdRef(ptr)];
        let code = match loc {
            InterpLoc::Centroid => 76,
            InterpLoc::AtSample => {
                args.push(Operand::IdRef(self.val(operands[0])?));
                77
            }
            InterpLoc::Sample => {
                let sid = self.system_value(SystemValue::SampleId)?;
                args.push(Operand::IdRef(sid));
                77
            }
            InterpLoc::AtOffset => {
                let f = self.g.float(32);
                let mut comps = vec![];
                for o in operands.iter().take(2) {
                    let v = self.val(*o)?;
                    comps.push(Operand::IdRef(self.op(
                        Op::Bitcast,
                        f,
                        vec![Operand::IdRef(v)],
                    )));
                }
                let v2 = self.g.vec(f, 2);
                args.push(Operand::IdRef(self.op(Op::CompositeConstruct, v2, comps)));
                78
            }
            InterpLoc::Center => {
                return Err(fail(format!(
                    "{slot} is declared {declared:?} but also read at the centre"
                )))
            }
        };
        let ty = p.scalar.ty(self.g);
        let mut ops = vec![Operand::IdRef(ext), Operand::LiteralExtInstInteger(code)];
        ops.extend(args);
        let v = self.op(Op::ExtInst, ty, ops);
        Ok(self.carried_value(v, p.scalar))
    }

    fn system_value(&mut self, sv: SystemValue) -> Result<u32, Error> {
        let p = self.io.system_value(self.g, sv);
        self.load_place(&p, None)
    }

    /// A word index: a constant when `offset` is one, else `(offset - base) >> 2`.
    fn word_index(&mut self, offset: Value, base: u32) -> Result<u32, Error> {
        if let Some(k) = self.const_of(offset) {
            return Ok(self.g.u32(k.wrapping_sub(base) >> 2));
        }
        let u = self.g.uint(32);
        let mut off = self.val(offset)?;
        if base != 0 {
            let b = self.g.u32(base);
            off = self.op(Op::ISub, u, vec![Operand::IdRef(off), Operand::IdRef(b)]);
        }
        let two = self.g.u32(2);
        Ok(self.op(
            Op::ShiftRightLogical,
            u,
            vec![Operand::IdRef(off), Operand::IdRef(two)],
        ))
    }

    /// Uniform word `index`, from the buffer holding the uniform words.
    fn uniform_load(&mut self, index: u32) -> Result<u32, Error> {
        let Some(block) = self.res.uniform_block else {
            let mut e = Emit {
                g: &mut *self.g,
                insts: &mut self.insts,
            };
            return self.res.loose.word(&mut e, index);
        };
        let view = self.res.view(self.g, BufKind::Ubo, block)?;
        let u = self.g.uint(32);
        let zero = self.g.u32(0);
        let w = index.wrapping_sub(view.base >> 2);
        let mut ops = vec![Operand::IdRef(view.var), Operand::IdRef(zero)];
        if view.vec4 {
            ops.push(Operand::IdRef(self.g.u32(w >> 2)));
            ops.push(Operand::IdRef(self.g.u32(w & 3)));
        } else {
            ops.push(Operand::IdRef(self.g.u32(w)));
        }
        let ptr = self.op(Op::AccessChain, view.word_ptr, ops);
        Ok(self.op(Op::Load, u, vec![Operand::IdRef(ptr)]))
    }

    /// The loaded 32-bit word `w`, or one 16-bit half of it (the low half is at the
    /// lower address): shifted down for `Hi`, then truncated by `OpUConvert`.
    fn half_of(&mut self, w: u32, half: crate::ir::Half) -> u32 {
        use crate::ir::Half;
        let word = match half {
            Half::Full => return w,
            Half::Lo => w,
            Half::Hi => {
                let (u, sixteen) = (self.g.uint(32), self.g.u32(16));
                self.op(
                    Op::ShiftRightLogical,
                    u,
                    vec![Operand::IdRef(w), Operand::IdRef(sixteen)],
                )
            }
        };
        // 16-bit values are 16-bit integers to SPIR-V until an op reads them as floats
        // (a bitcast), which the storage-only capabilities of a 16-bit UBO member do
        // not allow: declare the arithmetic ones.
        self.g.capability(Capability::Int16);
        self.g.capability(Capability::Float16);
        let u16 = self.g.uint(16);
        self.op(Op::UConvert, u16, vec![Operand::IdRef(word)])
    }

    fn ubo_load(&mut self, block: u32, offset: Value) -> Result<u32, Error> {
        if self.res.loose.default_ubo == Some(block) {
            let known = self.const_of(offset);
            let off = match known {
                Some(_) => 0,
                None => self.val(offset)?,
            };
            let mut e = Emit {
                g: &mut *self.g,
                insts: &mut self.insts,
            };
            return match known {
                Some(k) => self.res.loose.word(&mut e, k >> 2),
                None => self.res.loose.dynamic(&mut e, off),
            };
        }
        let view = self.res.view(self.g, BufKind::Ubo, block)?;
        let u = self.g.uint(32);
        let zero = self.g.u32(0);
        let mut ops = vec![Operand::IdRef(view.var), Operand::IdRef(zero)];
        if view.vec4 {
            match self.const_of(offset) {
                Some(k) => {
                    let w = k.wrapping_sub(view.base) >> 2;
                    ops.push(Operand::IdRef(self.g.u32(w >> 2)));
                    ops.push(Operand::IdRef(self.g.u32(w & 3)));
                }
                None if view.base % 16 == 0 && self.split_aligned(offset).is_some() => {
                    let (x, k) = self.split_aligned(offset).unwrap_or((offset, 0));
                    let rel = k.wrapping_sub(view.base);
                    let xv = self.val(x)?;
                    let four = self.g.u32(4);
                    let mut row = self.op(
                        Op::ShiftRightLogical,
                        u,
                        vec![Operand::IdRef(xv), Operand::IdRef(four)],
                    );
                    if rel >> 4 != 0 {
                        let c = self.g.u32(rel >> 4);
                        row = self.op(Op::IAdd, u, vec![Operand::IdRef(row), Operand::IdRef(c)]);
                    }
                    ops.push(Operand::IdRef(row));
                    ops.push(Operand::IdRef(self.g.u32((rel >> 2) & 3)));
                }
                None => {
                    let w = self.word_index(offset, view.base)?;
                    let (two, three) = (self.g.u32(2), self.g.u32(3));
                    let hi = self.op(
                        Op::ShiftRightLogical,
                        u,
                        vec![Operand::IdRef(w), Operand::IdRef(two)],
                    );
                    let lo = self.op(
                        Op::BitwiseAnd,
                        u,
                        vec![Operand::IdRef(w), Operand::IdRef(three)],
                    );
                    ops.push(Operand::IdRef(hi));
                    ops.push(Operand::IdRef(lo));
                }
            }
        } else {
            let w = self.word_index(offset, view.base)?;
            ops.push(Operand::IdRef(w));
        }
        let ptr = self.op(Op::AccessChain, view.word_ptr, ops);
        Ok(self.op(Op::Load, u, vec![Operand::IdRef(ptr)]))
    }

    /// `offset` as `x + k` with `x` a multiple of 16 and `k` constant, so a
    /// std140 view is indexed by `x / 16` plus constants: loads of one vec4 then
    /// share their row index and the driver merges them into one vector load.
    fn split_aligned(&self, offset: Value) -> Option<(Value, u32)> {
        let (x, k) = match self.alu_defs.get(&offset) {
            Some((crate::ir::AluOp::IAdd, s)) => match (self.const_of(s[0]), self.const_of(s[1])) {
                (None, Some(k)) => (s[0], k),
                (Some(k), None) => (s[1], k),
                _ => return None,
            },
            _ => (offset, 0),
        };
        self.aligned16(x, 0).then_some((x, k))
    }

    /// Whether a value is provably a multiple of 16 (products and shifts by
    /// constants, sums of such).
    fn aligned16(&self, v: Value, depth: u32) -> bool {
        use crate::ir::AluOp::{IAdd, IMul, IShl};
        if let Some(k) = self.const_of(v) {
            return k % 16 == 0;
        }
        if depth > 8 {
            return false;
        }
        match self.alu_defs.get(&v) {
            Some((IMul, s)) => {
                [s[0], s[1]]
                    .iter()
                    .any(|x| self.const_of(*x).is_some_and(|k| k % 16 == 0))
                    || s.iter().any(|x| self.aligned16(*x, depth + 1))
            }
            Some((IShl, s)) => {
                self.const_of(s[1]).is_some_and(|k| (4..32).contains(&k))
                    || self.aligned16(s[0], depth + 1)
            }
            Some((IAdd, s)) => s.iter().all(|x| self.aligned16(*x, depth + 1)),
            _ => false,
        }
    }

    fn ssbo_ptr(&mut self, buffer: u32, addr: Value) -> Result<u32, Error> {
        let a = self.val(addr)?;
        self.ssbo_ptr_id(buffer, a)
    }

    /// A pointer to word `a` (an id) of storage buffer `buffer`'s word view.
    fn ssbo_ptr_id(&mut self, buffer: u32, a: u32) -> Result<u32, Error> {
        let view = self.res.view(self.g, BufKind::Ssbo, buffer)?;
        let zero = self.g.u32(0);
        Ok(self.op(
            Op::AccessChain,
            view.word_ptr,
            vec![
                Operand::IdRef(view.var),
                Operand::IdRef(zero),
                Operand::IdRef(a),
            ],
        ))
    }

    fn handle(&mut self, h: &Handle) -> Result<u32, Error> {
        match h {
            Handle::Load { var, elems, ty } => {
                let ptr = if elems.is_empty() {
                    *var
                } else {
                    let class = rspirv::spirv::StorageClass::UniformConstant;
                    let pt = self.g.ptr(class, *ty);
                    let mut ops = vec![Operand::IdRef(*var)];
                    for e in elems {
                        ops.push(Operand::IdRef(self.g.u32(*e)));
                    }
                    self.op(Op::AccessChain, pt, ops)
                };
                Ok(self.op(Op::Load, *ty, vec![Operand::IdRef(ptr)]))
            }
            Handle::Sampled { ty, img, smp } => {
                let (i, s) = (self.handle(img)?, self.handle(smp)?);
                Ok(self.op(
                    Op::SampledImage,
                    *ty,
                    vec![Operand::IdRef(i), Operand::IdRef(s)],
                ))
            }
            Handle::Image { ty, inner } => {
                let i = self.handle(inner)?;
                Ok(self.op(Op::Image, *ty, vec![Operand::IdRef(i)]))
            }
        }
    }

    fn texture(
        &mut self,
        sampler: u32,
        comp: u8,
        coords: &[Value],
        r: Value,
    ) -> Result<u32, Error> {
        let ids = coords
            .iter()
            .map(|c| self.val(*c))
            .collect::<Result<Vec<_>, _>>()?;
        let whole = match self.tex.get(&(sampler, ids.clone())) {
            Some(id) => *id,
            None => {
                let id = self.image_op(sampler, coords, &ids)?;
                self.tex.insert((sampler, ids), id);
                id
            }
        };
        let (rty, vec) = self.res_type(sampler)?;
        let scalar = rty;
        let sty = scalar.ty(self.g);
        let v = if vec {
            self.op(
                Op::CompositeExtract,
                sty,
                vec![Operand::IdRef(whole), Operand::LiteralBit32(comp as u32)],
            )
        } else {
            whole
        };
        let out = self.carried_value(v, scalar);
        let want = self.bits_of(r);
        if want.bits() != scalar.bits {
            return Err(fail(format!(
                "texture result of sampler {sampler} has the wrong width"
            )));
        }
        Ok(out)
    }

    /// The scalar type of a template's result and whether it is a vector.
    fn res_type(&mut self, sampler: u32) -> Result<(Scalar, bool), Error> {
        let tpl = self.template(sampler)?;
        let inst = self
            .g
            .m
            .types_global_values
            .iter()
            .find(|i| i.result_id == Some(tpl.result_ty))
            .cloned()
            .ok_or_else(|| fail("texture result type is missing"))?;
        let (elem, vec) = match inst.class.opcode {
            Op::TypeVector => match inst.operands.first() {
                Some(Operand::IdRef(e)) => (*e, true),
                _ => return Err(fail("malformed vector type")),
            },
            _ => (tpl.result_ty, false),
        };
        Ok((self.scalar_of(elem)?, vec))
    }

    /// The scalar kind of a scalar type id of the module.
    pub fn scalar_of(&self, ty: u32) -> Result<Scalar, Error> {
        let inst = self
            .g
            .m
            .types_global_values
            .iter()
            .find(|i| i.result_id == Some(ty))
            .ok_or_else(|| fail(format!("%{ty} is not a type")))?;
        let lit = |k: usize| match inst.operands.get(k) {
            Some(Operand::LiteralBit32(v)) => *v,
            _ => 0,
        };
        Ok(match inst.class.opcode {
            Op::TypeFloat => Scalar {
                num: Num::Float,
                bits: lit(0),
            },
            Op::TypeInt if lit(1) == 1 => Scalar {
                num: Num::Sint,
                bits: lit(0),
            },
            Op::TypeInt => Scalar {
                num: Num::Uint,
                bits: lit(0),
            },
            Op::TypeBool => Scalar {
                num: Num::Bool,
                bits: 1,
            },
            _ => return Err(fail(format!("%{ty} is not a scalar type"))),
        })
    }

    fn template(&self, sampler: u32) -> Result<super::resources::Template, Error> {
        match self.res.templates.get(&sampler) {
            Some(Ok(t)) => Ok(t.clone()),
            Some(Err(e)) => Err(fail(e.clone())),
            None => Err(fail(format!(
                "sampler {sampler} is read in a stage whose original module never samples it"
            ))),
        }
    }

    fn image_op(&mut self, sampler: u32, coords: &[Value], ids: &[u32]) -> Result<u32, Error> {
        let tpl = self.template(sampler)?;
        let handle = self.handle(&tpl.handle)?;
        let mut ops = vec![Operand::IdRef(handle)];
        let mut next = 0usize;
        for o in &tpl.operands {
            match o {
                TplOperand::Lit(l) => ops.push(l.clone()),
                TplOperand::Id { ty, n, constant } => {
                    let n = *n as usize;
                    if next + n > ids.len() {
                        return Err(fail(format!(
                            "texture read of sampler {sampler} has too few coordinates"
                        )));
                    }
                    let id = if *constant {
                        self.const_operand(*ty, &coords[next..next + n])?
                    } else {
                        self.composite(*ty, &ids[next..next + n])?
                    };
                    ops.push(Operand::IdRef(id));
                    next += n;
                }
            }
        }
        if next != ids.len() {
            return Err(fail(format!(
                "texture read of sampler {sampler} has extra coordinates"
            )));
        }
        Ok(self.op(tpl.op, tpl.result_ty, ops))
    }

    /// The SPIR-V type of an opaque operand group or result.
    fn opaque_ty(&mut self, t: OpaqueTy) -> u32 {
        let s = opaque_scalar(t.scalar);
        let e = s.ty(self.g);
        if t.rows == 1 && t.cols == 1 {
            return e;
        }
        let v = self.g.vec(e, t.rows as u32);
        if t.cols == 1 {
            return v;
        }
        self.g.ty(
            Op::TypeMatrix,
            vec![Operand::IdRef(v), Operand::LiteralBit32(t.cols as u32)],
        )
    }

    /// An opaque operation: its SPIR-V instruction rebuilt from the operand groups
    /// (one instruction per block for all components of one result).
    fn opaque(&mut self, op: &OpaqueOp, srcs: &[Value]) -> Result<Option<u32>, Error> {
        // A 64-bit value is carried as two 32-bit words (low first): operands are
        // rebuilt from them (`opaque_value`), results split into them below.
        let ids = srcs
            .iter()
            .map(|s| self.val(*s))
            .collect::<Result<Vec<_>, _>>()?;
        let key = format!(
            "{}|{:?}|{:?}|{:?}|{ids:?}",
            op.code,
            op.result.map(|r| r.0),
            op.args,
            op.resource
        );
        let whole = match self.cached_opaque(op, &key) {
            Some(id) => id,
            None => {
                let id = self.opaque_inst(op, srcs, &ids)?;
                if let Some((_, comp)) = op.result {
                    self.opaque_cache.insert(key, (id, component_bit(comp)));
                }
                id
            }
        };
        let Some((rt, comp)) = op.result else {
            return Ok(None);
        };
        // For a 64-bit result the IR value is word `comp % 2` of component `comp / 2`.
        let (comp, word) = if rt.scalar.is_wide() {
            (comp / 2, Some(comp as u32 % 2))
        } else {
            (comp, None)
        };
        let s = opaque_scalar(rt.scalar);
        let sty = s.ty(self.g);
        let v = if rt.components() == 1 {
            whole
        } else {
            let mut path = vec![];
            if rt.cols > 1 {
                path.push(Operand::LiteralBit32(comp as u32 / rt.rows as u32));
            }
            path.push(Operand::LiteralBit32(comp as u32 % rt.rows as u32));
            let mut ops = vec![Operand::IdRef(whole)];
            ops.extend(path);
            self.op(Op::CompositeExtract, sty, ops)
        };
        if let Some(w) = word {
            let words = self.words_ty();
            let pair = self.op(Op::Bitcast, words, vec![Operand::IdRef(v)]);
            let u = self.g.uint(32);
            let ops = vec![Operand::IdRef(pair), Operand::LiteralBit32(w)];
            return Ok(Some(self.op(Op::CompositeExtract, u, ops)));
        }
        Ok(Some(self.carried_value(v, s)))
    }

    /// The instruction an earlier component of the same operation already built.
    /// Components of one instruction share it. A side effect is its own instruction
    /// each time it occurs: two identical atomics are two atomics, so an effect whose
    /// component the cached instruction already gave out starts a new one (import
    /// emits the components of one instruction together).
    fn cached_opaque(&mut self, op: &OpaqueOp, key: &str) -> Option<u32> {
        let (id, taken) = self.opaque_cache.get_mut(key)?;
        let (_, comp) = op.result?;
        let bit = component_bit(comp);
        if op.purity == Purity::Effect && *taken & bit != 0 {
            return None;
        }
        *taken |= bit;
        Some(*id)
    }

    fn opaque_inst(&mut self, op: &OpaqueOp, srcs: &[Value], ids: &[u32]) -> Result<u32, Error> {
        let mut operands = vec![];
        match op.resource {
            // An image atomic works on a texel pointer into the image variable,
            // not on a loaded handle.
            Some(Resource::Image(i)) if is_image_atomic(op) => {
                return self.image_atomic(op, i, ids);
            }
            Some(Resource::Image(i)) => {
                let tpl = self.template(i)?;
                operands.push(Operand::IdRef(self.handle(&tpl.handle)?));
            }
            Some(Resource::Buffer(b)) if is_atomic_code(op) => {
                return self.buffer_atomic(op, b, srcs.first().copied(), ids);
            }
            Some(Resource::Buffer(_)) => {
                return Err(fail(format!(
                    "opaque `{}` on a storage buffer is not exported",
                    op.name
                )))
            }
            None => {}
        }
        let values = self.opaque_operands(op, ids)?;
        operands.extend(values.into_iter().map(Operand::IdRef));
        let rty = match op.result {
            Some((t, _)) => self.opaque_ty(t),
            None => self.g.void(),
        };
        let id = self.g.id();
        let inst = match &op.code {
            OpaqueCode::Core(code) => {
                let opc = Op::from_u32(*code)
                    .ok_or_else(|| fail(format!("unknown SPIR-V opcode {code}")))?;
                if let Some(member) = struct_result_member(opc) {
                    return Ok(self.struct_member_inst(opc, rty, member, operands));
                }
                let result = op.result.map(|_| (rty, id));
                Instruction::new(opc, result.map(|r| r.0), result.map(|r| r.1), operands)
            }
            OpaqueCode::Builtin(b) => {
                let var = self.io.opaque_builtin(self.g, *b, rty)?;
                Instruction::new(Op::Load, Some(rty), Some(id), vec![Operand::IdRef(var)])
            }
            OpaqueCode::Ext(set, n) => {
                let ext = self.g.ext_import(set);
                let mut ops = vec![Operand::IdRef(ext), Operand::LiteralExtInstInteger(*n)];
                ops.extend(operands);
                Instruction::new(Op::ExtInst, Some(rty), Some(id), ops)
            }
        };
        self.insts.push(inst);
        Ok(id)
    }

    /// An instruction whose SPIR-V result is a struct of two `member_ty` values, of
    /// which the opaque op stands for member `member`: the instruction on the
    /// struct type, then that member extracted.
    fn struct_member_inst(
        &mut self,
        opc: Op,
        member_ty: u32,
        member: u32,
        operands: Vec<Operand>,
    ) -> u32 {
        let members = vec![Operand::IdRef(member_ty), Operand::IdRef(member_ty)];
        // A fresh struct: one of the module's own may carry block decorations.
        let pair = self.g.fresh_ty(Op::TypeStruct, members);
        let whole = self.op(opc, pair, operands);
        let path = vec![Operand::IdRef(whole), Operand::LiteralBit32(member)];
        self.op(Op::CompositeExtract, member_ty, path)
    }

    /// A value of an opaque operand type built from carried scalars.
    /// The SPIR-V operands of an opaque operation: one value per operand type, built
    /// from the IR operands it covers.
    fn opaque_operands(&mut self, op: &OpaqueOp, ids: &[u32]) -> Result<Vec<u32>, Error> {
        let mut out = Vec::with_capacity(op.args.len());
        let mut next = 0;
        for a in &op.args {
            let n = a.words();
            let part = ids
                .get(next..next + n)
                .ok_or_else(|| fail(format!("opaque `{}` has too few operands", op.name)))?;
            out.push(self.opaque_value(*a, part));
            next += n;
        }
        Ok(out)
    }

    /// An atomic on a storage buffer word: the IR's first operand is the word's
    /// index in the buffer, the atomic runs on a pointer into the view of the buffer
    /// its element needs (`atomic_elem`), or into the atomic counter holding the word.
    fn buffer_atomic(
        &mut self,
        op: &OpaqueOp,
        buffer: u32,
        addr_value: Option<Value>,
        ids: &[u32],
    ) -> Result<u32, Error> {
        let opc = match op.code {
            OpaqueCode::Core(code) => Op::from_u32(code),
            _ => None,
        }
        .ok_or_else(|| fail(format!("storage buffer atomic `{}` has no opcode", op.name)))?;
        let value_ty = op.result.map(|(t, _)| t).or(op.args.last().copied());
        let elem = self.atomic_elem(op, opc, value_ty)?;
        let values = self.opaque_operands(op, ids)?;
        let Some((addr, rest)) = values.split_first() else {
            return Err(fail(format!(
                "storage buffer atomic `{}` has no address",
                op.name
            )));
        };
        // Scope and memory semantics come first and stay constants; the values after
        // them take the element's type.
        let (controls, values_taken) = atomic_operands(opc);
        if rest.len() != controls + values_taken {
            return Err(fail(format!(
                "storage buffer atomic `{}` has {} operands after its address where \
                 Op{opc:?} takes {}",
                op.name,
                rest.len(),
                controls + values_taken
            )));
        }
        let counters = self.res.counters.get(&buffer).cloned();
        let (ptr, ty, signed) = match (elem, counters) {
            (AtomicElem::Word { bitcast }, Some(vars)) => {
                let ptr = self.counter_ptr(op, buffer, &vars, addr_value, *addr)?;
                (ptr, self.g.uint(32), bitcast)
            }
            (AtomicElem::Word { bitcast }, None) => {
                (self.ssbo_ptr_id(buffer, *addr)?, self.g.uint(32), bitcast)
            }
            (AtomicElem::Typed { .. }, Some(_)) => {
                return Err(fail(format!(
                    "atomic `{}` on an atomic counter binding is not a 32-bit integer atomic",
                    op.name
                )))
            }
            (AtomicElem::Typed { elem, stride }, None) => {
                (self.typed_ptr(buffer, *addr, elem, stride)?, elem, false)
            }
        };
        let u = self.g.uint(32);
        let mut operands = vec![Operand::IdRef(ptr)];
        for (k, v) in rest.iter().enumerate() {
            let v = match signed && k >= controls {
                true => self.op(Op::Bitcast, u, vec![Operand::IdRef(*v)]),
                false => *v,
            };
            operands.push(Operand::IdRef(v));
        }
        let Some((rt, _)) = op.result else {
            self.effect(opc, operands);
            // No result: `opaque` reads no id of a result-less operation.
            return Ok(0);
        };
        let word = self.op(opc, ty, operands);
        Ok(match signed {
            true => {
                let ty = self.opaque_ty(rt);
                self.op(Op::Bitcast, ty, vec![Operand::IdRef(word)])
            }
            false => word,
        })
    }

    /// What a storage buffer atomic's element is viewed as. The buffer's `uint[]` view
    /// serves 32-bit integer atomics (signed ones with their values and result
    /// bitcast: the opcode, not the type, says whether min and max compare signed) and
    /// float loads, stores, exchanges and compare-exchanges, which move bits without
    /// reading them as a number. A float arithmetic atomic (`OpAtomicFAddEXT`,
    /// `OpAtomicFMinEXT`, `OpAtomicFMaxEXT`) reads its word as a float, and a 64-bit
    /// atomic works on two words (import recorded it unsigned, at the low word): each
    /// runs on a view of the buffer with elements of its own type.
    fn atomic_elem(
        &mut self,
        op: &OpaqueOp,
        opc: Op,
        value_ty: Option<OpaqueTy>,
    ) -> Result<AtomicElem, Error> {
        let bitwise = matches!(
            opc,
            Op::AtomicLoad | Op::AtomicStore | Op::AtomicExchange | Op::AtomicCompareExchange
        );
        let float_arith = matches!(
            opc,
            Op::AtomicFAddEXT | Op::AtomicFMinEXT | Op::AtomicFMaxEXT
        );
        Ok(match value_ty.map(|t| t.scalar) {
            Some(ScalarTy::U32) => AtomicElem::Word { bitcast: false },
            Some(ScalarTy::I32) => AtomicElem::Word { bitcast: true },
            Some(ScalarTy::F32) if bitwise => AtomicElem::Word { bitcast: true },
            Some(ScalarTy::F32) if float_arith => AtomicElem::Typed {
                elem: self.g.float(32),
                stride: 4,
            },
            Some(ScalarTy::U64) => AtomicElem::Typed {
                elem: self.g.uint(64),
                stride: 8,
            },
            _ => {
                return Err(fail(format!(
                    "storage buffer atomic `{}` on a {} word is not exported (the buffer is \
                     viewed as 32-bit unsigned words, 32-bit floats or 64-bit unsigned \
                     integers)",
                    op.name,
                    value_ty.map_or("typeless".to_string(), |t| t.to_string())
                )))
            }
        })
    }

    /// A pointer to the element of buffer `buffer`'s view of `elem` (`stride` bytes)
    /// that holds word `addr` (the low word of a 64-bit element).
    fn typed_ptr(&mut self, buffer: u32, addr: u32, elem: u32, stride: u32) -> Result<u32, Error> {
        let view = self.res.typed_view(self.g, buffer, elem, stride)?;
        let index = match stride / 4 {
            1 => addr,
            words => {
                let u = self.g.uint(32);
                let shift = self.g.u32(words.trailing_zeros());
                let ops = vec![Operand::IdRef(addr), Operand::IdRef(shift)];
                self.op(Op::ShiftRightLogical, u, ops)
            }
        };
        let zero = self.g.u32(0);
        Ok(self.op(
            Op::AccessChain,
            view.word_ptr,
            vec![
                Operand::IdRef(view.var),
                Operand::IdRef(zero),
                Operand::IdRef(index),
            ],
        ))
    }

    /// A pointer to the atomic counter at word `addr` (an id, of the IR value
    /// `addr_value`) of counter buffer `buffer`: the variable holding that word,
    /// indexed by the word's row-major position in it. A dynamic word lies in the
    /// binding's only variable, or in the one its address's constant base names
    /// (choosing at run time would take a pointer select).
    fn counter_ptr(
        &mut self,
        op: &OpaqueOp,
        buffer: u32,
        vars: &[CounterVar],
        addr_value: Option<Value>,
        addr: u32,
    ) -> Result<u32, Error> {
        let word = addr_value.and_then(|v| self.const_of(v));
        let names = || {
            let list: Vec<String> = vars.iter().map(|c| format!("%{}", c.var)).collect();
            list.join(", ")
        };
        let (var, index, known) = match (word, vars) {
            (Some(w), _) => {
                let c = vars
                    .iter()
                    .find(|c| (c.first..c.first + c.words()).contains(&w))
                    .ok_or_else(|| {
                        fail(format!(
                            "atomic `{}` on counter word {w} of counter buffer {buffer}, \
                             which none of {} holds",
                            op.name,
                            names()
                        ))
                    })?;
                let k = self.g.u32(w - c.first);
                (c, k, Some(w - c.first))
            }
            (None, [c]) => {
                let first = self.g.u32(c.first);
                let u = self.g.uint(32);
                let k = match c.first {
                    0 => addr,
                    _ => self.op(
                        Op::ISub,
                        u,
                        vec![Operand::IdRef(addr), Operand::IdRef(first)],
                    ),
                };
                (c, k, None)
            }
            (None, _) => {
                // Several variables: the importer's address `(base + dynamic) >> 2`
                // names the variable by its constant base.
                let found = addr_value
                    .and_then(|v| self.dynamic_word(v))
                    .and_then(|(base, dw)| {
                        let c = vars
                            .iter()
                            .find(|c| (c.first..c.first + c.words()).contains(&base))?;
                        Some((c, base - c.first, dw))
                    });
                let Some((c, skip, dw)) = found else {
                    return Err(fail(format!(
                        "atomic `{}` at a dynamic word of counter buffer {buffer}, whose \
                         counters are held by several variables ({}), is not exported: its \
                         address does not name one by a constant base",
                        op.name,
                        names()
                    )));
                };
                let u = self.g.uint(32);
                let k = match skip {
                    0 => dw,
                    _ => {
                        let s = self.g.u32(skip);
                        self.op(Op::IAdd, u, vec![Operand::IdRef(dw), Operand::IdRef(s)])
                    }
                };
                (c, k, None)
            }
        };
        if var.dims.is_empty() {
            return Ok(var.var);
        }
        // Row-major: the index of dimension j is (k / stride_j) % len_j, except the
        // outermost, k / stride_0 unreduced: an index past the array (undefined in
        // GLSL) then still addresses the word the original did, as re-import reads it.
        let u = self.g.uint(32);
        let mut chain = vec![Operand::IdRef(var.var)];
        let mut stride: u32 = var.words();
        for (j, len) in var.dims.iter().enumerate() {
            stride /= len.max(&1);
            let outer = j == 0;
            let r = match known {
                Some(k) if outer => self.g.u32(k / stride.max(1)),
                Some(k) => self.g.u32(k / stride.max(1) % len.max(&1)),
                None => {
                    let s = self.g.u32(stride);
                    let q = self.op(Op::UDiv, u, vec![Operand::IdRef(index), Operand::IdRef(s)]);
                    match outer {
                        true => q,
                        false => {
                            let l = self.g.u32(*len);
                            self.op(Op::UMod, u, vec![Operand::IdRef(q), Operand::IdRef(l)])
                        }
                    }
                }
            };
            chain.push(Operand::IdRef(r));
        }
        let ptr = self.g.ptr(rspirv::spirv::StorageClass::AtomicCounter, u);
        Ok(self.op(Op::AccessChain, ptr, chain))
    }

    /// A dynamic word address as the importer builds it, `(bytes + K) >> 2` or
    /// `bytes >> 2`: the constant base word `K / 4` (0 without one) and the id of
    /// the dynamic word `bytes >> 2`.
    fn dynamic_word(&mut self, addr: Value) -> Option<(u32, u32)> {
        use crate::ir::AluOp::{IAdd, UShr};
        let (UShr, s) = self.alu_defs.get(&addr)?.clone() else {
            return None;
        };
        if s.len() != 2 || self.const_of(s[1]) != Some(2) {
            return None;
        }
        let split = match self.alu_defs.get(&s[0]) {
            Some((IAdd, a)) if a.len() == 2 => match (self.const_of(a[0]), self.const_of(a[1])) {
                (_, Some(k)) if k % 4 == 0 => Some((k / 4, a[0])),
                (Some(k), _) if k % 4 == 0 => Some((k / 4, a[1])),
                _ => None,
            },
            _ => None,
        };
        let u = self.g.uint(32);
        let two = self.g.u32(2);
        match split {
            Some((base, bytes)) => {
                let b = self.val(bytes).ok()?;
                let w = self.op(
                    Op::ShiftRightLogical,
                    u,
                    vec![Operand::IdRef(b), Operand::IdRef(two)],
                );
                Some((base, w))
            }
            None => Some((0, self.val(addr).ok()?)),
        }
    }

    /// An image atomic: `OpImageTexelPointer` into the image variable the original
    /// module's texel pointers use (the IR's first two operand groups are its
    /// coordinate and sample), then the atomic on that texel with the remaining
    /// operands (scope, semantics, values).
    fn image_atomic(&mut self, op: &OpaqueOp, image: u32, ids: &[u32]) -> Result<u32, Error> {
        let base = self.res.texel_bases.get(&image).cloned().ok_or_else(|| {
            fail(format!(
                "image atomic `{}` on image {image}: the stage's original module has no \
                 texel pointer into that image to rebuild it from",
                op.name
            ))
        })?;
        let OpaqueCode::Core(code) = op.code else {
            return Err(fail(format!(
                "image atomic `{}` is not a core instruction",
                op.name
            )));
        };
        let opc =
            Op::from_u32(code).ok_or_else(|| fail(format!("unknown SPIR-V opcode {code}")))?;
        let values = self.opaque_operands(op, ids)?;
        let (Some(coord), Some(sample)) = (values.first(), values.get(1)) else {
            return Err(fail(format!(
                "image atomic `{}` has no coordinate and sample",
                op.name
            )));
        };
        let class = rspirv::spirv::StorageClass::UniformConstant;
        let image_ptr = if base.elems.is_empty() {
            base.var
        } else {
            let pt = self.g.ptr(class, base.image_ty);
            let mut chain = vec![Operand::IdRef(base.var)];
            for e in &base.elems {
                chain.push(Operand::IdRef(self.g.u32(*e)));
            }
            self.op(Op::AccessChain, pt, chain)
        };
        // The texel's type: the atomic's result, or for a store the stored value's.
        let texel_ty = match (op.result, op.args.last().copied()) {
            (Some((t, _)), _) | (None, Some(t)) => self.opaque_ty(t),
            (None, None) => return Err(fail(format!("image atomic `{}` has no value", op.name))),
        };
        let texel_ptr_ty = self.g.ptr(rspirv::spirv::StorageClass::Image, texel_ty);
        let texel = self.op(
            Op::ImageTexelPointer,
            texel_ptr_ty,
            vec![
                Operand::IdRef(image_ptr),
                Operand::IdRef(*coord),
                Operand::IdRef(*sample),
            ],
        );
        let mut operands = vec![Operand::IdRef(texel)];
        operands.extend(values[2..].iter().map(|v| Operand::IdRef(*v)));
        match op.result {
            Some(_) => Ok(self.op(opc, texel_ty, operands)),
            None => {
                self.effect(opc, operands);
                // No result: `opaque` reads no id of a result-less operation.
                Ok(0)
            }
        }
    }

    fn opaque_value(&mut self, t: OpaqueTy, ids: &[u32]) -> u32 {
        let s = opaque_scalar(t.scalar);
        let parts: Vec<u32> = if t.scalar.is_wide() {
            ids.chunks(2).map(|w| self.wide_scalar(w, s)).collect()
        } else {
            ids.iter().map(|i| self.declared_value(*i, s)).collect()
        };
        if parts.len() == 1 {
            return parts[0];
        }
        let e = s.ty(self.g);
        let col = self.g.vec(e, t.rows as u32);
        let cols: Vec<u32> = parts
            .chunks(t.rows as usize)
            .map(|c| {
                self.op(
                    Op::CompositeConstruct,
                    col,
                    c.iter().map(|x| Operand::IdRef(*x)).collect(),
                )
            })
            .collect();
        if t.cols == 1 {
            return cols[0];
        }
        let ty = self.opaque_ty(t);
        self.op(
            Op::CompositeConstruct,
            ty,
            cols.into_iter().map(Operand::IdRef).collect(),
        )
    }

    /// A 64-bit scalar of type `s` from its two carried words (low first).
    fn wide_scalar(&mut self, words: &[u32], s: Scalar) -> u32 {
        let cap = match s.num {
            Num::Float => Capability::Float64,
            _ => Capability::Int64,
        };
        self.g.capability(cap);
        let pair_ty = self.words_ty();
        let parts = words.iter().map(|w| Operand::IdRef(*w)).collect();
        let pair = self.op(Op::CompositeConstruct, pair_ty, parts);
        let ty = s.ty(self.g);
        self.op(Op::Bitcast, ty, vec![Operand::IdRef(pair)])
    }

    /// Builds a value of numeric type `ty` from carried scalars.
    fn composite(&mut self, ty: u32, ids: &[u32]) -> Result<u32, Error> {
        let (elem, vec) = self.elem_of(ty)?;
        let s = self.scalar_of(elem)?;
        let parts: Vec<u32> = ids.iter().map(|i| self.declared_value(*i, s)).collect();
        if !vec {
            return Ok(parts[0]);
        }
        Ok(self.op(
            Op::CompositeConstruct,
            ty,
            parts.into_iter().map(Operand::IdRef).collect(),
        ))
    }

    fn const_operand(&mut self, ty: u32, vals: &[Value]) -> Result<u32, Error> {
        let (elem, vec) = self.elem_of(ty)?;
        let mut parts = vec![];
        for v in vals {
            let k = self
                .const_of(*v)
                .ok_or_else(|| fail("a constant texel offset became a computed value"))?;
            parts.push(self.g.constant(elem, k));
        }
        if !vec {
            return Ok(parts[0]);
        }
        let id = self.g.id();
        self.g.m.types_global_values.push(Instruction::new(
            Op::ConstantComposite,
            Some(ty),
            Some(id),
            parts.into_iter().map(Operand::IdRef).collect(),
        ));
        Ok(id)
    }

    fn elem_of(&self, ty: u32) -> Result<(u32, bool), Error> {
        let inst = self
            .g
            .m
            .types_global_values
            .iter()
            .find(|i| i.result_id == Some(ty))
            .ok_or_else(|| fail(format!("%{ty} is not a type")))?;
        Ok(match (inst.class.opcode, inst.operands.first()) {
            (Op::TypeVector, Some(Operand::IdRef(e))) => (*e, true),
            _ => (ty, false),
        })
    }
}

fn result(i: &Inst) -> Result<Value, Error> {
    i.result
        .ok_or_else(|| fail(format!("`{}` without a result", i.kind.keyword())))
}

/// Whether `op` is an atomic on an image texel (its code a SPIR-V atomic).
/// A result component as a bit of `cached_opaque`'s mask (components past 63, which
/// no SPIR-V type has, share the last bit).
fn component_bit(comp: u8) -> u64 {
    1 << comp.min(63)
}

/// Whether an opaque operation is an atomic on an image texel.
pub(super) fn is_image_atomic(op: &OpaqueOp) -> bool {
    matches!(op.resource, Some(Resource::Image(_))) && is_atomic_code(op)
}

/// An atomic's operands after its pointer: (scope and memory semantics, values).
fn atomic_operands(op: Op) -> (usize, usize) {
    match op {
        Op::AtomicCompareExchange | Op::AtomicCompareExchangeWeak => (3, 2),
        Op::AtomicLoad | Op::AtomicIIncrement | Op::AtomicIDecrement => (2, 0),
        _ => (2, 1),
    }
}

/// Whether an opaque operation's instruction is an atomic.
fn is_atomic_code(op: &OpaqueOp) -> bool {
    match op.code {
        OpaqueCode::Core(code) => Op::from_u32(code).is_some_and(crate::import::opaque::is_atomic),
        _ => false,
    }
}

/// The element a storage buffer atomic runs on (see `Body::atomic_elem`).
#[derive(Clone, Copy, Debug)]
enum AtomicElem {
    /// A word of the buffer's `uint[]` view; `bitcast`: the IR's values and result
    /// are another 32-bit type.
    Word { bitcast: bool },
    /// An element of the buffer's view of type id `elem`, `stride` bytes each.
    Typed { elem: u32, stride: u32 },
}
