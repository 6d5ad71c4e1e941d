//! One invocation of one shader: structured control flow, phis, loops with an
//! iteration limit, undefined-value tracking, and the stage-independent intrinsics
//! (uniforms, UBOs, SSBOs, textures). Stage-specific I/O goes through [`StageIo`].
//!
//! Undefined control flow: an `if` whose condition is undefined takes the else branch,
//! and everything that branch does is *tainted* — every value it defines, every phi it
//! feeds and every store, emit or discard it performs is marked undefined. The
//! branch not taken might have run instead: the outputs and SSBO words it stores
//! (where their addresses are known) become undefined too, and its discards make the
//! discard undefined. A `break`
//! taken under taint makes the loop's header phis undefined. Stores to an undefined
//! or out-of-range address (indirect slot, vertex, SSBO word) are dropped.

use std::collections::BTreeMap;

use crate::error::{Diagnostic, Error};
use crate::ir::{
    eval_alu, walk, AluOp, BitSize, Block, Half, Indirect, Inst, InstKind, InterpMode, IoSlot,
    KnownUniforms, Pipeline, ScalarTy, Shader, SrcLoc, Stmt, SystemValue, UniformWord, Value,
    Visit, Xfb,
};

use super::{alu_defined, Inputs, Scalar};

/// Stage-specific inputs and outputs of one invocation. Loads a stage does not have
/// give undefined values; stores and events it does not have are ignored.
pub(crate) trait StageIo {
    /// A system value.
    fn system_value(&mut self, _sv: SystemValue, size: BitSize) -> Scalar {
        Scalar::undef(size)
    }
    /// `load_input`: VS attribute, FS flat input, TES patch input.
    fn load_input(&mut self, _slot: IoSlot, size: BitSize) -> Scalar {
        Scalar::undef(size)
    }
    /// `load_interpolated_input` with its operand values.
    fn load_interpolated(
        &mut self,
        _slot: IoSlot,
        _mode: InterpMode,
        _ops: &[Scalar],
        size: BitSize,
    ) -> Scalar {
        Scalar::undef(size)
    }
    /// `load_per_vertex_input` of input vertex `vertex`.
    fn load_per_vertex(&mut self, _slot: IoSlot, _vertex: Scalar, size: BitSize) -> Scalar {
        Scalar::undef(size)
    }
    /// TCS `load_output` (per-vertex when `vertex` is given).
    fn load_output(&mut self, _slot: IoSlot, _vertex: Option<Scalar>, size: BitSize) -> Scalar {
        Scalar::undef(size)
    }
    /// An output store (`vertex` for `store_per_vertex_output`).
    fn store(&mut self, _slot: IoSlot, _value: Scalar, _vertex: Option<Scalar>, _how: StoreHow) {}
    /// GS `emit_vertex`; `defined` is false under taint.
    fn emit_vertex(&mut self, _defined: bool) {}
    /// GS `end_primitive`.
    fn end_primitive(&mut self) {}
    /// FS `discard`; `defined` is false under taint.
    fn discard(&mut self, _defined: bool) {}
}

/// The capture attributes of a store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StoreHow {
    /// Transform feedback capture.
    pub xfb: Option<Xfb>,
    /// False for `no_varying` stores, which the next stage does not see.
    pub varying: bool,
}

/// State shared by every invocation of a run: seeded inputs, declared uniform
/// storage and the storage buffers' written words.
pub(crate) struct World<'p> {
    pub inputs: Inputs,
    pub pipeline: &'p Pipeline,
    pub ssbo: BTreeMap<(u32, u32), Scalar>,
    pub loop_limit: u32,
    /// See `RunConfig::signed_zeros`.
    pub signed_zeros: bool,
    /// See `RunConfig::known`.
    pub known: &'p KnownUniforms,
}

impl World<'_> {
    fn uniform(&self, index: u32) -> Scalar {
        if index < self.pipeline.uniforms {
            let bound = self.known.get(UniformWord::Uniform(index));
            bound.map_or_else(
                || self.inputs.uniform(index),
                |b| Scalar::new(b, BitSize::B32),
            )
        } else {
            Scalar::undef(BitSize::B32)
        }
    }

    fn ubo(&self, block: u32, offset: Scalar) -> Scalar {
        let size = self.pipeline.ubo_size(block);
        match size {
            Some(size) if offset.defined && offset.bits.is_multiple_of(4) && offset.bits < size => {
                let word = UniformWord::Ubo {
                    block,
                    offset: offset.bits,
                };
                let bound = self.known.get(word);
                bound.map_or_else(
                    || self.inputs.ubo(block, offset.bits),
                    |b| Scalar::new(b, BitSize::B32),
                )
            }
            _ => Scalar::undef(BitSize::B32),
        }
    }

    fn ssbo_load(&self, buffer: u32, addr: u32) -> Scalar {
        match self.ssbo.get(&(buffer, addr)) {
            Some(v) => *v,
            None => self.inputs.ssbo(buffer, addr),
        }
    }
}

/// How a statement list ended.
#[derive(Debug)]
pub(crate) enum Flow {
    /// Fell off the end.
    Next,
    /// `break`; true when taken under taint.
    Break(bool),
    /// `continue` with the new header phi values.
    Continue(Vec<Scalar>),
    /// The invocation ended (`discard`).
    Halt,
}

/// The value environment of one invocation.
pub(crate) struct Invocation<'s> {
    shader: &'s Shader,
    vals: Vec<Scalar>,
    taint: u32,
    /// Loop iterations so far, summed over every loop: nested loops multiply their
    /// trip counts, so only a budget for the whole invocation bounds its running time.
    iterations: u32,
}

impl<'s> Invocation<'s> {
    /// A fresh invocation with every value undefined.
    pub fn new(shader: &'s Shader) -> Invocation<'s> {
        let vals = shader
            .values
            .iter()
            .map(|v| Scalar::undef(v.bits))
            .collect();
        Invocation {
            shader,
            vals,
            taint: 0,
            iterations: 0,
        }
    }

    /// Runs a top-level statement list; returns whether the invocation is still alive.
    pub fn run_top(
        &mut self,
        block: &[Stmt],
        world: &mut World,
        io: &mut dyn StageIo,
    ) -> Result<bool, Error> {
        match self.block(block, world, io)? {
            Flow::Next => Ok(true),
            Flow::Halt => Ok(false),
            Flow::Break(_) | Flow::Continue(_) => Err(self.error(
                world,
                None,
                "`break` or `continue` outside a loop".to_string(),
            )),
        }
    }

    fn error(&self, world: &World, loc: Option<SrcLoc>, msg: String) -> Error {
        let file = world.pipeline.source.as_deref();
        let stage = self.shader.stage();
        Error::Interpret(Diagnostic::new(file, loc, format!("{stage}: {msg}")).to_string())
    }

    fn get(&self, v: Value, world: &World) -> Result<Scalar, Error> {
        self.vals.get(v.index()).copied().ok_or_else(|| {
            self.error(
                world,
                None,
                format!("value #{} is not defined in the shader", v.0),
            )
        })
    }

    fn set(&mut self, v: Value, s: Scalar) {
        if let Some(slot) = self.vals.get_mut(v.index()) {
            let defined = s.defined && self.taint == 0;
            *slot = s.resized(slot.size).defined_if(defined);
        }
    }

    fn size(&self, v: Value) -> BitSize {
        self.vals.get(v.index()).map_or(BitSize::B32, |s| s.size)
    }

    fn block(
        &mut self,
        block: &[Stmt],
        world: &mut World,
        io: &mut dyn StageIo,
    ) -> Result<Flow, Error> {
        for stmt in block {
            let flow = match stmt {
                Stmt::Inst(inst) => self.inst(inst, world, io)?,
                Stmt::If {
                    cond,
                    then_body,
                    else_body,
                    phis,
                    ..
                } => {
                    let c = self.get(*cond, world)?;
                    let take_then = c.defined && c.bits & 1 != 0;
                    let tainted = !c.defined;
                    self.taint += tainted as u32;
                    let (body, skipped) = match take_then {
                        true => (then_body, else_body),
                        false => (else_body, then_body),
                    };
                    let flow = self.block(body, world, io);
                    if tainted && flow.is_ok() {
                        self.taint_skipped(skipped, world, io)?;
                    }
                    if matches!(flow, Ok(Flow::Next)) {
                        for phi in phis {
                            let src = if take_then {
                                phi.then_val
                            } else {
                                phi.else_val
                            };
                            let v = self.get(src, world)?;
                            self.set(phi.dst, v);
                        }
                    }
                    self.taint -= tainted as u32;
                    flow?
                }
                Stmt::Loop { phis, body, loc } => self.run_loop(phis, body, *loc, world, io)?,
                Stmt::Break { .. } => Flow::Break(self.taint > 0),
                Stmt::Continue { args, .. } => {
                    let mut vals = vec![];
                    for a in args {
                        vals.push(self.get(*a, world)?.defined_if(self.taint == 0));
                    }
                    Flow::Continue(vals)
                }
            };
            if !matches!(flow, Flow::Next) {
                return Ok(flow);
            }
        }
        Ok(Flow::Next)
    }

    /// Under an undefined condition the branch not taken might have run instead,
    /// so what it writes is unknown too: each output it stores at a slot known here
    /// (a fixed one, or a dynamic index already defined) becomes undefined, as does
    /// each SSBO word at an address known here; its opaque effects make their
    /// buffers wild and a discard in it makes the invocation's discard undefined.
    /// Its `emit_vertex`es are not replayed (the vertex count is the taken branch's).
    fn taint_skipped(
        &mut self,
        skipped: &[Stmt],
        world: &mut World,
        io: &mut dyn StageIo,
    ) -> Result<(), Error> {
        for visit in walk(skipped) {
            let Visit::Enter(Stmt::Inst(inst)) = visit else {
                continue;
            };
            match &inst.kind {
                InstKind::StoreOutput {
                    slot,
                    value,
                    indirect,
                    xfb,
                    no_varying,
                } => {
                    let how = StoreHow {
                        xfb: *xfb,
                        varying: !no_varying,
                    };
                    if let Some(s) = self.effective_slot(*slot, indirect, world)? {
                        io.store(s, Scalar::undef(self.size(*value)), None, how);
                    }
                }
                InstKind::StorePerVertexOutput {
                    slot,
                    value,
                    vertex,
                    indirect,
                } => {
                    let vertex = self.get(*vertex, world)?;
                    let how = StoreHow {
                        xfb: None,
                        varying: true,
                    };
                    if let Some(s) = self.effective_slot(*slot, indirect, world)? {
                        io.store(s, Scalar::undef(self.size(*value)), Some(vertex), how);
                    }
                }
                InstKind::SsboStore {
                    buffer,
                    addr,
                    value,
                } => {
                    let a = self.get(*addr, world)?;
                    if a.defined {
                        let v = Scalar::undef(self.size(*value));
                        world.ssbo.insert((*buffer, a.bits), v);
                    }
                }
                InstKind::Opaque { op, .. } if op.purity == crate::ir::Purity::Effect => {
                    self.record_effect(op, &[], true, world);
                }
                InstKind::Discard => io.discard(false),
                _ => {}
            }
        }
        Ok(())
    }

    fn run_loop(
        &mut self,
        phis: &[crate::ir::LoopPhi],
        body: &Block,
        loc: Option<SrcLoc>,
        world: &mut World,
        io: &mut dyn StageIo,
    ) -> Result<Flow, Error> {
        for phi in phis {
            let v = self.get(phi.init, world)?;
            self.set(phi.dst, v);
        }
        loop {
            self.iterations = self.iterations.saturating_add(1);
            if self.iterations > world.loop_limit {
                let msg = format!(
                    "loops ran more than {} iterations in one invocation",
                    world.loop_limit
                );
                return Err(self.error(world, loc, msg));
            }
            match self.block(body, world, io)? {
                Flow::Next => {}
                Flow::Halt => return Ok(Flow::Halt),
                Flow::Break(tainted) => {
                    if tainted {
                        for phi in phis {
                            let size = self.size(phi.dst);
                            self.set(phi.dst, Scalar::undef(size));
                        }
                    }
                    return Ok(Flow::Next);
                }
                Flow::Continue(args) => {
                    if args.len() != phis.len() {
                        let msg = format!(
                            "`continue` has {} values for {} phis",
                            args.len(),
                            phis.len()
                        );
                        return Err(self.error(world, loc, msg));
                    }
                    for (phi, v) in phis.iter().zip(args) {
                        self.set(phi.dst, v);
                    }
                }
            }
        }
    }

    fn operands(&self, vals: &[Value], world: &World) -> Result<Vec<Scalar>, Error> {
        vals.iter().map(|v| self.get(*v, world)).collect()
    }

    /// The slot an access reaches, or `None` when its dynamic index is undefined or
    /// leaves the indexed array.
    fn effective_slot(
        &self,
        slot: IoSlot,
        indirect: &Option<Indirect>,
        world: &World,
    ) -> Result<Option<IoSlot>, Error> {
        let Some(ind) = indirect else {
            return Ok(Some(slot));
        };
        let index = self.get(ind.index, world)?;
        if !index.defined || index.bits >= ind.len as u32 {
            return Ok(None);
        }
        Ok(slot
            .slot
            .offset(index.bits)
            .map(|s| IoSlot { slot: s, ..slot }))
    }

    fn inst(
        &mut self,
        inst: &Inst,
        world: &mut World,
        io: &mut dyn StageIo,
    ) -> Result<Flow, Error> {
        match inst.result {
            Some(r) => {
                let v = self.value_of(&inst.kind, self.size(r), inst.loc, world, io)?;
                self.set(r, v);
                Ok(Flow::Next)
            }
            None => self.effect(&inst.kind, world, io),
        }
    }

    /// The result of a value-producing instruction.
    fn value_of(
        &self,
        kind: &InstKind,
        size: BitSize,
        loc: Option<SrcLoc>,
        world: &mut World,
        io: &mut dyn StageIo,
    ) -> Result<Scalar, Error> {
        let undef = Scalar::undef(size);
        Ok(match kind {
            InstKind::Const(c) => Scalar::new(*c, size),
            InstKind::Alu { op, srcs, exact } => {
                let vals = self.operands(srcs, world)?;
                self.alu(*op, *exact, &vals, loc, world)?
            }
            InstKind::LoadInput { slot, indirect } => {
                match self.effective_slot(*slot, indirect, world)? {
                    Some(s) => io.load_input(s, size),
                    None => undef,
                }
            }
            InstKind::LoadInterpolatedInput {
                slot,
                mode,
                operands,
                indirect,
            } => {
                let ops = self.operands(operands, world)?;
                match self.effective_slot(*slot, indirect, world)? {
                    Some(s) => io.load_interpolated(s, *mode, &ops, size),
                    None => undef,
                }
            }
            InstKind::LoadPerVertexInput {
                slot,
                vertex,
                indirect,
            } => {
                let vertex = self.get(*vertex, world)?;
                match self.effective_slot(*slot, indirect, world)? {
                    Some(s) => io.load_per_vertex(s, vertex, size),
                    None => undef,
                }
            }
            InstKind::LoadOutput {
                slot,
                vertex,
                indirect,
            } => {
                let vertex = vertex.map(|v| self.get(v, world)).transpose()?;
                match self.effective_slot(*slot, indirect, world)? {
                    Some(s) => io.load_output(s, vertex, size),
                    None => undef,
                }
            }
            InstKind::LoadUniform { index, half } => half_of(world.uniform(*index), *half),
            InstKind::LoadUbo {
                block,
                offset,
                half,
            } => half_of(world.ubo(*block, self.get(*offset, world)?), *half),
            InstKind::LoadSystemValue(sv) => io.system_value(*sv, size),
            InstKind::Texture {
                sampler,
                comp,
                coords,
            } => {
                let c = self.operands(coords, world)?;
                if c.iter().all(|s| s.defined) {
                    let bits: Vec<u32> = c.iter().map(|s| s.bits).collect();
                    world.inputs.texture(*sampler, *comp, &bits, size)
                } else {
                    undef
                }
            }
            InstKind::SsboLoad { buffer, addr } => {
                let a = self.get(*addr, world)?;
                if a.defined {
                    world.ssbo_load(*buffer, a.bits).resized(size)
                } else {
                    undef
                }
            }
            InstKind::Opaque { op, srcs } => {
                let vals = opaque_operands(op, self.operands(srcs, world)?, world);
                if op.purity == crate::ir::Purity::Effect {
                    self.record_effect(op, &vals, self.taint > 0, world);
                }
                if !vals.iter().all(|s| s.defined) {
                    undef
                } else {
                    super::opaque::value(op, &vals, &world.inputs, size)
                }
            }
            // `undef`, and effects given a result by a malformed pair.
            _ => undef,
        })
    }

    /// Performs an instruction without a result (stores, emits, discard…).
    fn effect(
        &mut self,
        kind: &InstKind,
        world: &mut World,
        io: &mut dyn StageIo,
    ) -> Result<Flow, Error> {
        let tainted = self.taint > 0;
        match kind {
            InstKind::StoreOutput {
                slot,
                value,
                indirect,
                xfb,
                no_varying,
            } => {
                let v = self.get(*value, world)?.defined_if(!tainted);
                let how = StoreHow {
                    xfb: *xfb,
                    varying: !no_varying,
                };
                if let Some(s) = self.effective_slot(*slot, indirect, world)? {
                    io.store(s, v, None, how);
                }
            }
            InstKind::StorePerVertexOutput {
                slot,
                value,
                vertex,
                indirect,
            } => {
                let v = self.get(*value, world)?.defined_if(!tainted);
                let vertex = self.get(*vertex, world)?;
                let how = StoreHow {
                    xfb: None,
                    varying: true,
                };
                if let Some(s) = self.effective_slot(*slot, indirect, world)? {
                    io.store(s, v, Some(vertex), how);
                }
            }
            InstKind::SsboStore {
                buffer,
                addr,
                value,
            } => {
                let a = self.get(*addr, world)?;
                let v = self.get(*value, world)?.defined_if(!tainted);
                if a.defined {
                    world.ssbo.insert((*buffer, a.bits), v);
                }
            }
            InstKind::Opaque { op, srcs } => {
                let vals = opaque_operands(op, self.operands(srcs, world)?, world);
                self.record_effect(op, &vals, tainted, world);
            }
            InstKind::EmitVertex => io.emit_vertex(!tainted),
            InstKind::EndPrimitive => io.end_primitive(),
            InstKind::Discard => {
                io.discard(!tainted);
                if !tainted {
                    return Ok(Flow::Halt);
                }
            }
            // Barriers split a TCS into phases before execution starts; elsewhere
            // there is nothing to wait for. Value instructions without a result
            // have nothing to do.
            _ => {}
        }
        Ok(Flow::Next)
    }

    /// Counts one execution of an opaque effect in its record word; one with an
    /// undefined operand or under undefined control flow (`tainted`) marks the
    /// effect's buffer wild instead, since what it did is unknown.
    fn record_effect(
        &self,
        op: &crate::ir::OpaqueOp,
        vals: &[Scalar],
        tainted: bool,
        world: &mut World,
    ) {
        if tainted || !vals.iter().all(|s| s.defined) {
            let wild = (
                super::opaque::effect_buffer(op),
                super::opaque::WILD_EFFECTS,
            );
            world.ssbo.insert(wild, Scalar::undef(BitSize::B32));
            return;
        }
        let key = super::opaque::effect_address(op, vals);
        let count = world.ssbo.get(&key).map_or(0, |s| s.bits);
        world
            .ssbo
            .insert(key, Scalar::new(count.wrapping_add(1), BitSize::B32));
    }

    /// Evaluates an ALU op with `ir::eval_alu`. The result is undefined when a source
    /// is, except for a `bcsel` whose defined condition selects a defined source, and
    /// in NIR's default float mode (the equivalence runs, `signed_zeros` false) when
    /// an inexact float op meets an Inf or NaN: it may assume it meets neither
    /// (Vulkan's float controls without SignedZeroInfNanPreserve).
    fn alu(
        &self,
        op: AluOp,
        exact: bool,
        vals: &[Scalar],
        loc: Option<SrcLoc>,
        world: &World,
    ) -> Result<Scalar, Error> {
        let sizes: Vec<BitSize> = vals.iter().map(|s| s.size).collect();
        let out = op
            .result_bits(&sizes)
            .map_err(|msg| self.error(world, loc, msg))?;
        let mut bits: Vec<u32> = vals.iter().map(|s| s.bits).collect();
        if !world.signed_zeros && zero_sign_matters(op) {
            for (b, size) in bits.iter_mut().zip(&sizes) {
                *b = unsigned_zero(*b, *size);
            }
        }
        let v = Scalar::new(eval_alu(op, &bits, &sizes), out);
        let assumed_finite = !world.signed_zeros && !exact;
        let defined = alu_defined(op, vals) && !(assumed_finite && meets_non_finite(op, vals, v));
        Ok(v.defined_if(defined))
    }
}

/// Ops whose result depends on a zero operand's sign by more than a zero's sign
/// (`1/±0 = ±inf`, `(±0)^-1 = ±inf`).
fn zero_sign_matters(op: AluOp) -> bool {
    matches!(op, AluOp::FRcp | AluOp::FRsq | AluOp::FDiv | AluOp::FPow)
}

/// The operands of opaque op `op` as a run reads them. In NIR's default float mode
/// (`signed_zeros` false) a zero's sign is not preserved, so a float operand that is
/// `-0` reads as `+0`: the stand-ins key effects and integer results on operand bits,
/// and would otherwise tell apart a `-0` stored flat from the `+0` its interpolation
/// gives (a promoted convergent varying feeding an atomic). 64-bit operands are left
/// as they are.
fn opaque_operands(op: &crate::ir::OpaqueOp, mut vals: Vec<Scalar>, world: &World) -> Vec<Scalar> {
    if world.signed_zeros {
        return vals;
    }
    let float_words = op.args.iter().flat_map(|a| {
        let float = matches!(a.scalar, ScalarTy::F32 | ScalarTy::F16);
        std::iter::repeat_n(float, a.words())
    });
    for (v, float) in vals.iter_mut().zip(float_words) {
        if float {
            v.bits = unsigned_zero(v.bits, v.size);
        }
    }
    vals
}

/// `bits` with a negative zero of `size` made positive.
fn unsigned_zero(bits: u32, size: BitSize) -> u32 {
    match size {
        BitSize::B32 if bits == 0x8000_0000 => 0,
        BitSize::B16 if bits == 0x8000 => 0,
        _ => bits,
    }
}

/// Splits a TCS body at its top-level barriers into phases. A barrier nested in
/// control flow cannot be scheduled this way and is an error naming its position.
pub(crate) fn barrier_phases<'b>(
    shader: &'b Shader,
    file: Option<&str>,
) -> Result<Vec<&'b [Stmt]>, Error> {
    if let Some(loc) = nested_barrier(&shader.body) {
        let msg = "tcs: `barrier` inside control flow is not supported by the interpreter";
        return Err(Error::Interpret(
            Diagnostic::new(file, loc, msg).to_string(),
        ));
    }
    let is_barrier = |s: &Stmt| {
        matches!(
            s,
            Stmt::Inst(Inst {
                kind: InstKind::Barrier,
                ..
            })
        )
    };
    Ok(shader.body.split(is_barrier).collect())
}

/// The position of the first barrier below top level (`Some(None)`: one without a
/// recorded position).
fn nested_barrier(block: &Block) -> Option<Option<SrcLoc>> {
    let mut it = walk(block);
    while let Some(visit) = it.next() {
        match visit {
            Visit::Enter(Stmt::Inst(i)) if it.depth() > 0 && i.kind == InstKind::Barrier => {
                return Some(i.loc)
            }
            _ => {}
        }
    }
    None
}

/// The 32-bit word itself or one 16-bit half of it (little-endian: `Lo` is the lower
/// address).
fn half_of(word: Scalar, half: Half) -> Scalar {
    let shift = match half {
        Half::Full => return word,
        Half::Lo => 0,
        Half::Hi => 16,
    };
    Scalar {
        bits: (word.bits >> shift) & 0xffff,
        size: BitSize::B16,
        defined: word.defined,
    }
}

/// Whether a float op reads or gives an Inf or NaN.
fn meets_non_finite(op: AluOp, vals: &[Scalar], result: Scalar) -> bool {
    use crate::ir::OpClass;
    let non_finite = |s: &Scalar| s.defined && !s.as_f32().is_finite();
    match op.class() {
        OpClass::Float => vals.iter().any(non_finite) || non_finite(&result),
        OpClass::FloatCmp => vals.iter().any(non_finite),
        _ => false,
    }
}
