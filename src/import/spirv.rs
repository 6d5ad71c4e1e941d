//! SPIR-V → one IR `Shader`: the translator's state (id bindings with scoped undo,
//! the contents of local variables and output shadows), instruction dispatch,
//! function inlining and the entry point. Control flow lives in `cfg.rs`, ALU ops
//! in `alu.rs`, memory in `mem.rs`, shader I/O in `iface.rs`.

use std::collections::BTreeMap;

use fxhash::{FxHashMap, FxHashSet};
use rspirv::dr::{Function, Instruction};
use rspirv::spirv::{ExecutionMode, Op, StorageClass};

use super::context::{StageParams, Translator};
use super::emit::Emitter;
use super::function::{Flow, FnCtx};
use super::layout::{shape_of, Shape};
use super::link::StageLayout;
use super::module::{describe, id_at, ConstDef, Module, Ty};
use super::val::Val;
use crate::ir::{BitSize, InstKind, Primitive, Shader, Stage, StageInfo};
use crate::Error;

/// Translates the module's entry point into a shader.
pub(crate) fn translate(
    m: &Module,
    layout: &StageLayout,
    params: StageParams,
) -> Result<Shader, Error> {
    let mut t = Translator {
        m,
        e: Emitter::new(m.stage),
        layout,
        params,
        ids: FxHashMap::default(),
        consts: FxHashMap::default(),
        undo: vec![],
        env: BTreeMap::new(),
        loops: vec![],
        fns: vec![],
        visited: vec![FxHashSet::default()],
        block_visits: 0,
        switch_merges: vec![],
        switch_break: None,
        depth: 0,
        exact: false,
        max_vertex: 0,
    };
    t.e.shader.info = stage_info(m, params)?;
    t.init_globals()?;
    let f = m
        .function(m.entry_fn)
        .ok_or_else(|| m.err_plain("entry point function missing"))?;
    t.inline(f, &[])?;
    // A constant index into the input patch proves the patch is at least that big.
    let seen = u8::try_from(t.max_vertex).unwrap_or(u8::MAX);
    let mut shader = t.e.finish();
    // `layout(viewport_relative) out int gl_Layer` matters only where a stage's
    // primitives reach the rasterizer (a TCS may declare it; it does nothing there).
    shader.layer_viewport_relative =
        matches!(m.stage, Stage::Vertex | Stage::TessEval | Stage::Geometry)
            && m.decos
                .values()
                .chain(m.member_decos.values())
                .any(|d| d.builtin == Some(rspirv::spirv::BuiltIn::Layer) && d.viewport_relative);
    match &mut shader.info {
        StageInfo::TessCtrl { input_vertices, .. } | StageInfo::TessEval { input_vertices, .. } => {
            *input_vertices = (*input_vertices).max(seen);
        }
        _ => {}
    }
    Ok(shader)
}

fn stage_info(m: &Module, p: StageParams) -> Result<StageInfo, Error> {
    use ExecutionMode as M;
    let prim = |modes: &[(M, Primitive)], default| {
        modes
            .iter()
            .find(|(mode, _)| m.has_mode(*mode))
            .map(|(_, p)| *p)
            .unwrap_or(default)
    };
    Ok(match m.stage {
        Stage::Vertex => StageInfo::Vertex {
            topology: p.topology,
        },
        Stage::TessCtrl => StageInfo::TessCtrl {
            input_vertices: p.patch_vertices,
            output_vertices: small(m, m.mode(M::OutputVertices).unwrap_or(3))?,
        },
        Stage::TessEval => StageInfo::TessEval {
            domain: prim(
                &[
                    (M::Quads, Primitive::Quads),
                    (M::Isolines, Primitive::Isolines),
                ],
                Primitive::Triangles,
            ),
            input_vertices: p.patch_vertices,
            point_mode: m.has_mode(M::PointMode),
        },
        Stage::Geometry => StageInfo::Geometry {
            input: prim(
                &[
                    (M::InputPoints, Primitive::Points),
                    (M::InputLines, Primitive::Lines),
                    (M::InputLinesAdjacency, Primitive::LinesAdjacency),
                    (M::InputTrianglesAdjacency, Primitive::TrianglesAdjacency),
                ],
                Primitive::Triangles,
            ),
            output: prim(
                &[
                    (M::OutputPoints, Primitive::Points),
                    (M::OutputLineStrip, Primitive::LineStrip),
                ],
                Primitive::TriangleStrip,
            ),
            max_vertices: u16::try_from(m.mode(M::OutputVertices).unwrap_or(3))
                .map_err(|_| m.err_plain("GS max_vertices out of range"))?,
            invocations: small(m, m.mode(M::Invocations).unwrap_or(1))?,
        },
        Stage::Fragment => StageInfo::Fragment {
            provoking: crate::ir::ProvokingVertex::First,
        },
    })
}

fn small(m: &Module, v: u32) -> Result<u8, Error> {
    u8::try_from(v).map_err(|_| m.err_plain(format!("execution mode value {v} out of range")))
}

impl<'a> Translator<'a> {
    /// Binds an id in the current scope (undone when the scope closes).
    pub fn bind(&mut self, id: u32, v: Val) {
        let old = self.ids.insert(id, v);
        self.undo.push((id, old));
    }

    pub fn mark(&self) -> usize {
        self.undo.len()
    }

    /// Ids bound since `mark`, with their current values, oldest first.
    pub fn bound_since(&self, mark: usize) -> Vec<(u32, Val)> {
        let mut seen = FxHashSet::default();
        let mut out = vec![];
        for (id, _) in self.undo.get(mark..).unwrap_or(&[]) {
            if seen.insert(*id) {
                if let Some(v) = self.ids.get(id) {
                    out.push((*id, v.clone()));
                }
            }
        }
        out
    }

    pub fn revert(&mut self, mark: usize) {
        while self.undo.len() > mark {
            if let Some((id, old)) = self.undo.pop() {
                match old {
                    Some(v) => self.ids.insert(id, v),
                    None => self.ids.remove(&id),
                };
            }
        }
    }

    /// The value of an id: a binding, a constant, or a pointer to a global.
    pub fn val(&mut self, id: u32) -> Result<Val, Error> {
        if let Some(v) = self.ids.get(&id) {
            return Ok(v.clone());
        }
        if let Some(v) = self.consts.get(&id) {
            return Ok(v.clone());
        }
        if let Some((ty, def)) = self.m.consts.get(&id).cloned() {
            let v = self.constant(ty, &def, 0)?;
            self.consts.insert(id, v.clone());
            return Ok(v);
        }
        if let Some(g) = self.m.vars.get(&id) {
            return Ok(self.global_ptr(id, g.ty, g.class));
        }
        Err(self
            .m
            .err_plain(format!("%{id} is used but not defined where it is used")))
    }

    /// A scalar operand.
    pub fn scalar(&mut self, id: u32) -> Result<crate::ir::Value, Error> {
        match self.val(id)? {
            Val::Scalar(v) => Ok(v),
            _ => Err(self.m.err_plain(format!("%{id} is not a scalar"))),
        }
    }

    fn constant(&mut self, ty: u32, def: &ConstDef, depth: u32) -> Result<Val, Error> {
        if depth > 64 {
            return Err(self
                .m
                .err_plain(format!("constant type %{ty} nests too deeply")));
        }
        match def {
            ConstDef::Scalar(bits) => {
                let size = self.scalar_bits(ty)?;
                Ok(Val::Scalar(self.e.konst(size, *bits)))
            }
            ConstDef::Wide(bits) => {
                let lo = self.e.u32(*bits as u32);
                let hi = self.e.u32((*bits >> 32) as u32);
                Ok(Val::Composite(vec![Val::Scalar(lo), Val::Scalar(hi)]))
            }
            ConstDef::Null => self.filled(ty, true),
            ConstDef::Undef => self.filled(ty, false),
            ConstDef::Composite(parts) => {
                let mut items = vec![];
                for p in parts {
                    let v = match self.m.consts.get(p).cloned() {
                        Some((pty, pdef)) => self.constant(pty, &pdef, depth + 1)?,
                        None => {
                            return Err(self
                                .m
                                .err_plain(format!("constant %{p} is not a constant")))
                        }
                    };
                    items.push(v);
                }
                Ok(Val::Composite(items))
            }
        }
    }

    /// A value of type `ty` with every leaf zero (`zero`) or undefined.
    pub fn filled(&mut self, ty: u32, zero: bool) -> Result<Val, Error> {
        let shape = self.shape(ty)?;
        let mut leaves = vec![];
        for b in shape.leaf_bits() {
            leaves.push(if zero {
                self.e.konst(b, 0)
            } else {
                self.e.undef(b)
            });
        }
        Ok(shape.val(&mut leaves.into_iter()))
    }

    /// The IR size of a scalar type.
    pub fn scalar_bits(&self, ty: u32) -> Result<BitSize, Error> {
        match self.m.ty(ty)? {
            Ty::Bool => Ok(BitSize::B1),
            Ty::Int { width: 32, .. } | Ty::Float { width: 32 } => Ok(BitSize::B32),
            Ty::Int { width: 16, .. } | Ty::Float { width: 16 } => Ok(BitSize::B16),
            other => Err(self.m.err_plain(format!(
                "type %{ty} ({other:?}) is not a 16/32-bit scalar or bool"
            ))),
        }
    }

    /// The scalarized shape of a data type.
    pub fn shape(&self, ty: u32) -> Result<Shape, Error> {
        shape_of(self.m, ty, 0)
    }

    fn init_globals(&mut self) -> Result<(), Error> {
        let vars: Vec<(u32, StorageClass, u32, Option<u32>)> = self
            .m
            .vars
            .iter()
            .map(|(id, g)| (*id, g.class, g.ty, g.init))
            .collect();
        for (id, class, ty, init) in vars {
            let shadowed = class == StorageClass::Private
                || (class == StorageClass::Output && self.m.stage != Stage::TessCtrl);
            if !shadowed {
                continue;
            }
            let v = match init {
                Some(i) => self.val(i)?,
                None => self.filled(ty, false)?,
            };
            if class == StorageClass::Output && init.is_some() {
                let undef = self.filled(ty, false)?;
                self.env.insert(id, undef);
                let p = super::val::Ptr {
                    root: id,
                    path: vec![],
                    ty,
                };
                self.store(&p, v, None)?;
            } else {
                self.env.insert(id, v);
            }
        }
        Ok(())
    }

    /// Inlines a function body with the given arguments; returns its result.
    pub fn inline(&mut self, f: &'a Function, args: &[Val]) -> Result<Option<Val>, Error> {
        if self.fns.len() > 64 {
            return Err(self
                .m
                .err_plain("function calls nest too deeply (recursion?)"));
        }
        for (p, a) in f.parameters.iter().zip(args) {
            if let Some(id) = p.result_id {
                self.bind(id, a.clone());
            }
        }
        let ctx = FnCtx::new(self.m, f, self.depth)?;
        let entry = ctx.entry;
        let ret_ty = f.def.as_ref().and_then(|d| d.result_type);
        self.fns.push(ctx);
        let flow = self.run(entry, None, None);
        let ctx = self.fns.pop();
        match flow? {
            Flow::Returned | Flow::Reached(_) | Flow::Diverged => {}
        }
        let ret = ctx.and_then(|c| c.ret);
        match (ret, ret_ty) {
            (Some(v), _) => Ok(Some(v)),
            (None, Some(t)) if !matches!(self.m.ty(t)?, Ty::Void) => {
                Ok(Some(self.filled(t, false)?))
            }
            _ => Ok(None),
        }
    }

    /// Translates one non-control-flow instruction.
    pub fn inst(&mut self, inst: &'a Instruction) -> Result<(), Error> {
        let rid = inst.result_id;
        self.exact = rid.map(|r| self.m.deco(r).no_contraction).unwrap_or(false);
        let out = match inst.class.opcode {
            Op::Nop
            | Op::Line
            | Op::NoLine
            | Op::Name
            | Op::MemoryBarrier
            | Op::SelectionMerge
            | Op::LoopMerge => None,
            Op::Variable => {
                self.local_var(inst)?;
                None
            }
            Op::Load => Some(self.load_op(inst)?),
            Op::Store => {
                self.store_op(inst)?;
                None
            }
            Op::CopyMemory => {
                let (dst, src) = (self.ptr_operand(inst, 0)?, self.ptr_operand(inst, 1)?);
                let v = self.load(&src, inst)?;
                self.store(&dst, v, Some(inst))?;
                None
            }
            Op::AccessChain | Op::InBoundsAccessChain => Some(self.access_chain(inst)?),
            Op::FunctionCall => self.call(inst)?,
            Op::EmitVertex => {
                self.e.effect(InstKind::EmitVertex);
                None
            }
            Op::EndPrimitive => {
                self.e.effect(InstKind::EndPrimitive);
                None
            }
            Op::ControlBarrier => {
                if self.m.stage == Stage::TessCtrl {
                    self.e.effect(InstKind::Barrier);
                }
                None
            }
            Op::DemoteToHelperInvocation => {
                self.e.effect(InstKind::Discard);
                None
            }
            Op::ExtInst => self.ext_inst(inst)?,
            op if super::opaque::core_purity(op).is_some() => {
                let purity = super::opaque::core_purity(op).unwrap_or(crate::ir::Purity::Effect);
                self.opaque_core(inst, purity)?
            }
            Op::ImageTexelPointer => Some(self.texel_pointer(inst)?),
            Op::SampledImage | Op::Image => Some(self.val(self.id(inst, 0)?)?),
            op if is_image_op(op) => Some(self.image_op(inst)?),
            Op::IAddCarry | Op::ISubBorrow | Op::UMulExtended | Op::SMulExtended => {
                Some(self.extended_arith(inst)?)
            }
            _ => Some(self.alu_inst(inst)?),
        };
        if let (Some(r), Some(v)) = (rid, out) {
            self.bind(r, v);
        }
        Ok(())
    }

    fn call(&mut self, inst: &'a Instruction) -> Result<Option<Val>, Error> {
        let fid = self.id(inst, 0)?;
        let f = self
            .m
            .function(fid)
            .ok_or_else(|| self.m.err(inst, "calls an undefined function"))?;
        let mut args = vec![];
        for i in 1..inst.operands.len() {
            let a = self.id(inst, i)?;
            args.push(self.val(a)?);
        }
        self.inline(f, &args)
    }

    /// The id operand at `i`, or an error naming the instruction.
    pub fn id(&self, inst: &Instruction, i: usize) -> Result<u32, Error> {
        id_at(inst, i).ok_or_else(|| self.m.err(inst, format!("operand {i} is not an id")))
    }

    /// An import error naming an instruction.
    pub fn err(&self, inst: &Instruction, msg: impl AsRef<str>) -> Error {
        self.m.err(inst, msg)
    }

    /// An error for an instruction varysat does not translate.
    pub fn unsupported(&self, inst: &Instruction) -> Error {
        crate::import::fail(
            &self.m.file,
            format!("{}: unsupported instruction", describe(inst)),
        )
    }
}

/// Opcodes the importer turns into `tex` instructions (the exporter rewrites the
/// same set).
pub(crate) fn is_image_op(op: Op) -> bool {
    matches!(
        op,
        Op::ImageSampleImplicitLod
            | Op::ImageSampleExplicitLod
            | Op::ImageSampleDrefImplicitLod
            | Op::ImageSampleDrefExplicitLod
            | Op::ImageSampleProjImplicitLod
            | Op::ImageSampleProjExplicitLod
            | Op::ImageSampleProjDrefImplicitLod
            | Op::ImageSampleProjDrefExplicitLod
            | Op::ImageFetch
            | Op::ImageGather
            | Op::ImageDrefGather
            | Op::ImageRead
            | Op::ImageQuerySize
            | Op::ImageQuerySizeLod
            | Op::ImageQueryLod
            | Op::ImageQueryLevels
            | Op::ImageQuerySamples
    )
}

/// The VS/TES output topology a GS consumer implies (its input primitive, without
/// adjacency).
pub(crate) fn translate_info_hint(consumer: &Module) -> Option<Primitive> {
    use ExecutionMode as M;
    if consumer.stage != Stage::Geometry {
        return None;
    }
    Some(if consumer.has_mode(M::InputPoints) {
        Primitive::Points
    } else if consumer.has_mode(M::InputLines) || consumer.has_mode(M::InputLinesAdjacency) {
        Primitive::Lines
    } else {
        Primitive::Triangles
    })
}
