//! Resources of an exported stage. Buffers (UBOs, push constants, SSBOs) become
//! word views (`uvec4[]`, `uint[]`) with the original descriptor set and binding,
//! because the IR addresses them by byte or word offset; samplers and images keep
//! their original variables, and each image operation is rebuilt from the one
//! instruction shape the original module used on that image (its template).

use std::collections::BTreeMap;

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{Decoration, ImageOperands, Op, StorageClass};

use super::context::{fail, Sides};
use super::globals::Globals;
use super::loose::Loose;
use crate::import::link::StageLayout;
use crate::import::module::{id_at, Module, Ty};
use crate::import::spirv::is_image_op;
use crate::Error;

/// Which kind of buffer an IR index names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum BufKind {
    /// A uniform or push-constant block (`LoadUbo`).
    Ubo,
    /// A storage buffer (`SsboLoad`, `SsboStore`).
    Ssbo,
}

/// The original declaration a view copies.
#[derive(Clone, Debug)]
struct BufDecl {
    class: StorageClass,
    buffer_block: bool,
    set: Option<u32>,
    binding: Option<u32>,
    /// Byte offset of the first member (push constants may start past 0).
    base: u32,
    size: u32,
    name: String,
    /// Bytes per element of a storage buffer view's array (4, or 8 for 64-bit).
    stride: u32,
}

/// A declared view.
#[derive(Clone, Copy, Debug)]
pub(crate) struct View {
    /// The variable.
    pub var: u32,
    /// Pointer to one `uint` of it.
    pub word_ptr: u32,
    /// Words are grouped in `uvec4`s (std140 array stride 16).
    pub vec4: bool,
    /// Byte offset of word 0.
    pub base: u32,
}

/// How the original module obtained the image operand.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Handle {
    /// `OpLoad` of a variable, through constant array indices.
    Load { var: u32, elems: Vec<u32>, ty: u32 },
    /// `OpSampledImage` of an image and a sampler.
    Sampled {
        ty: u32,
        img: Box<Handle>,
        smp: Box<Handle>,
    },
    /// `OpImage` of a sampled image.
    Image { ty: u32, inner: Box<Handle> },
}

/// One operand of an image instruction after the image.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum TplOperand {
    /// A value of this type, built from the next IR coordinates; `constant` when
    /// SPIR-V requires a constant there (`ConstOffset`).
    Id { ty: u32, n: u32, constant: bool },
    /// A literal operand (the image-operands mask), copied.
    Lit(Operand),
}

/// The shape of the image instruction used on one sampler index.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Template {
    pub op: Op,
    pub result_ty: u32,
    pub handle: Handle,
    pub operands: Vec<TplOperand>,
}

/// The image variable an `OpImageTexelPointer` of the original module points into
/// (through constant array indices): what an image atomic's texel pointer is rebuilt
/// from, since the atomic works on the variable, not on a loaded image.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TexelBase {
    /// The image (or image array) variable.
    pub var: u32,
    /// Constant indices into arrays of images.
    pub elems: Vec<u32>,
    /// The image type the indexed pointer points to.
    pub image_ty: u32,
}

/// An OpenGL atomic counter variable (`AtomicCounter` storage class): the IR reads
/// each of its counters as a word of its binding's counter buffer, word `first` plus
/// the counter's row-major index.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CounterVar {
    /// The variable.
    pub var: u32,
    /// Its first counter's word (`Offset` / 4).
    pub first: u32,
    /// Array lengths, outermost first (empty for one counter).
    pub dims: Vec<u32>,
}

impl CounterVar {
    /// Number of counters it holds.
    pub fn words(&self) -> u32 {
        self.dims.iter().product()
    }
}

/// Resource state of one stage under export.
pub(crate) struct Resources {
    bufs: BTreeMap<(BufKind, u32), BufDecl>,
    views: BTreeMap<(BufKind, u32), View>,
    /// Storage buffers' typed views by (buffer, element type id): `float[]` for float
    /// arithmetic atomics, `uint64_t[]` for 64-bit atomics (a second variable at the
    /// buffer's set and binding).
    typed_views: BTreeMap<(u32, u32), View>,
    /// Sampler index → the template, or why there is none.
    pub templates: BTreeMap<u32, Result<Template, String>>,
    /// Image index → the variable its image atomics' texel pointers point into.
    pub texel_bases: BTreeMap<u32, TexelBase>,
    /// Counter buffer index → this stage's atomic counter variables of that binding.
    pub counters: BTreeMap<u32, Vec<CounterVar>>,
    /// The UBO index holding the uniform words, if any (see `Sides::uniform_block`).
    pub uniform_block: Option<u32>,
    /// OpenGL default-block uniforms, where the pair has them.
    pub loose: Loose,
}

impl Resources {
    /// Collects the pair's buffers (from both stages: code may have moved) and this
    /// stage's image templates.
    pub fn new(sides: &Sides, m: &Module, layout: &StageLayout) -> Result<Resources, Error> {
        let mut bufs = BTreeMap::new();
        for (sm, sl) in [(sides.p, sides.lp), (sides.c, sides.lc)] {
            for (var, idx) in &sl.ubo_block {
                if let std::collections::btree_map::Entry::Vacant(e) =
                    bufs.entry((BufKind::Ubo, *idx))
                {
                    e.insert(buf_decl(sm, *var, true)?);
                }
            }
            for (var, idx) in &sl.ssbo {
                // Atomic counters are reached through their own variables
                // (`counters`), never through a buffer view.
                if is_counter(sm, *var) {
                    continue;
                }
                if let std::collections::btree_map::Entry::Vacant(e) =
                    bufs.entry((BufKind::Ssbo, *idx))
                {
                    e.insert(buf_decl(sm, *var, false)?);
                }
            }
        }
        for ((kind, idx), d) in bufs.iter_mut() {
            if *kind == BufKind::Ubo {
                if let Some(s) = sides.pipe.ubo_size(*idx) {
                    d.size = d.size.max(s);
                }
            }
        }
        Ok(Resources {
            bufs,
            views: BTreeMap::new(),
            typed_views: BTreeMap::new(),
            templates: templates(m, layout),
            texel_bases: texel_bases(m, layout),
            counters: counters(m, layout),
            uniform_block: sides.uniform_block,
            loose: Loose::new(sides, m, layout)?,
        })
    }

    /// The view of a buffer, declared on first use.
    pub fn view(&mut self, g: &mut Globals, kind: BufKind, idx: u32) -> Result<View, Error> {
        if let Some(v) = self.views.get(&(kind, idx)) {
            return Ok(*v);
        }
        let d = self
            .bufs
            .get(&(kind, idx))
            .cloned()
            .ok_or_else(|| fail(format!("buffer {idx} has no declaration in either stage")))?;
        let u = g.uint(32);
        let v = declare_view(g, &d, kind, u)?;
        self.views.insert((kind, idx), v);
        Ok(v)
    }

    /// The view of storage buffer `idx` whose elements have type `elem` (`float`, or
    /// a 64-bit integer of `stride` 8), declared on first use: what an atomic that
    /// reads its word as a float, or works on two words, needs a pointer into. It
    /// aliases the `uint[]` view (same set and binding).
    pub fn typed_view(
        &mut self,
        g: &mut Globals,
        idx: u32,
        elem: u32,
        stride: u32,
    ) -> Result<View, Error> {
        if let Some(v) = self.typed_views.get(&(idx, elem)) {
            return Ok(*v);
        }
        let mut d = self
            .bufs
            .get(&(BufKind::Ssbo, idx))
            .cloned()
            .ok_or_else(|| fail(format!("buffer {idx} has no declaration in either stage")))?;
        if d.base % stride != 0 {
            return Err(fail(format!(
                "buffer {idx} starts at byte {}, not a multiple of {stride}",
                d.base
            )));
        }
        d.stride = stride;
        let v = declare_view(g, &d, BufKind::Ssbo, elem)?;
        self.typed_views.insert((idx, elem), v);
        Ok(v)
    }

    /// Every declared view variable (for the entry point's interface).
    pub fn view_vars(&self) -> Vec<u32> {
        let views = self.views.values().chain(self.typed_views.values());
        views.map(|v| v.var).chain(self.loose.copies()).collect()
    }
}

fn buf_decl(m: &Module, var: u32, sized: bool) -> Result<BufDecl, Error> {
    let g = m
        .vars
        .get(&var)
        .ok_or_else(|| fail(format!("%{var} is not a variable")))?;
    let d = m.deco(var);
    let members = match m.types.get(&g.ty) {
        Some(Ty::Struct { members }) => members.len() as u32,
        _ => {
            return Err(fail(format!(
                "buffer %{var} `{}` is not a single block (arrays of blocks are not exported)",
                m.name(var)
            )))
        }
    };
    let base = (0..members)
        .filter_map(|i| m.member_deco(g.ty, i).offset)
        .min()
        .unwrap_or(0)
        & !3;
    let size = if sized {
        crate::import::layout::buf_size(m, g.ty)?
    } else {
        0
    };
    Ok(BufDecl {
        class: g.class,
        buffer_block: m.deco(g.ty).buffer_block,
        set: d.set,
        binding: d.binding,
        base,
        size,
        name: m.name(var).to_owned(),
        stride: 4,
    })
}

/// A view of `d` whose elements have type `u` (`uint`; a storage buffer's typed view:
/// `float`, or a 64-bit integer of stride 8).
fn declare_view(g: &mut Globals, d: &BufDecl, kind: BufKind, u: u32) -> Result<View, Error> {
    let std140 = d.class == StorageClass::Uniform && !d.buffer_block;
    let (arr, vec4) = if kind == BufKind::Ssbo {
        let a = g.fresh_ty(Op::TypeRuntimeArray, vec![Operand::IdRef(u)]);
        g.decorate(a, Decoration::ArrayStride, &[d.stride]);
        (a, false)
    } else if std140 {
        let v4 = g.vec(u, 4);
        let n = d.size.div_ceil(16).max(1);
        let a = g.array(v4, n);
        g.decorate(a, Decoration::ArrayStride, &[16]);
        (a, true)
    } else {
        let n = (d.size.saturating_sub(d.base)).div_ceil(4).max(1);
        let a = g.array(u, n);
        g.decorate(a, Decoration::ArrayStride, &[4]);
        (a, false)
    };
    let st = g.fresh_ty(Op::TypeStruct, vec![Operand::IdRef(arr)]);
    g.member_decorate(st, 0, Decoration::Offset, &[d.base]);
    let block = if d.buffer_block {
        Decoration::BufferBlock
    } else {
        Decoration::Block
    };
    g.decorate(st, block, &[]);
    let ptr = g.ptr(d.class, st);
    let var = g.variable(ptr, d.class);
    if let Some(s) = d.set {
        g.decorate(var, Decoration::DescriptorSet, &[s]);
    }
    if let Some(b) = d.binding {
        g.decorate(var, Decoration::Binding, &[b]);
    }
    if !d.name.is_empty() {
        g.name(var, &d.name);
    }
    let word_ptr = g.ptr(d.class, u);
    Ok(View {
        var,
        word_ptr,
        vec4,
        base: d.base,
    })
}

/// The template of every sampler index the module's image instructions use; an
/// index used with two different shapes gets an error (the IR does not say which).
fn templates(m: &Module, layout: &StageLayout) -> BTreeMap<u32, Result<Template, String>> {
    let defs: BTreeMap<u32, &Instruction> = m
        .raw
        .all_inst_iter()
        .filter_map(|i| i.result_id.map(|id| (id, i)))
        .collect();
    let mut out: BTreeMap<u32, Result<Template, String>> = BTreeMap::new();
    for inst in m.raw.all_inst_iter() {
        if !is_image_op(inst.class.opcode) {
            continue;
        }
        let Some(tpl) = template(m, &defs, inst) else {
            continue;
        };
        let Some(index) = root_index(&tpl.handle, layout) else {
            continue;
        };
        match out.get(&index) {
            Some(Ok(t)) if *t != tpl => {
                let msg = format!(
                    "sampler {index} is used by differently shaped image instructions (Op{:?} and Op{:?}); the IR does not record which one each texture read was",
                    t.op, tpl.op
                );
                out.insert(index, Err(msg));
            }
            Some(_) => {}
            None => {
                out.insert(index, Ok(tpl));
            }
        }
    }
    out
}

fn is_counter(m: &Module, var: u32) -> bool {
    m.vars
        .get(&var)
        .is_some_and(|g| g.class == StorageClass::AtomicCounter)
}

/// The module's atomic counter variables by counter buffer index, in word order.
fn counters(m: &Module, layout: &StageLayout) -> BTreeMap<u32, Vec<CounterVar>> {
    let mut out: BTreeMap<u32, Vec<CounterVar>> = BTreeMap::new();
    for (var, idx) in &layout.ssbo {
        let Some(g) = m.vars.get(var).filter(|_| is_counter(m, *var)) else {
            continue;
        };
        let mut dims = vec![];
        let mut ty = g.ty;
        while let Some(Ty::Array { elem, len }) = m.types.get(&ty) {
            dims.push(*len);
            ty = *elem;
        }
        let first = m.deco(*var).offset.unwrap_or(0) / 4;
        out.entry(*idx).or_default().push(CounterVar {
            var: *var,
            first,
            dims,
        });
    }
    for vars in out.values_mut() {
        vars.sort_by_key(|c| c.first);
    }
    out
}

/// The variable behind every `OpImageTexelPointer` of the module, by image index.
fn texel_bases(m: &Module, layout: &StageLayout) -> BTreeMap<u32, TexelBase> {
    let defs: BTreeMap<u32, &Instruction> = m
        .raw
        .all_inst_iter()
        .filter_map(|i| i.result_id.map(|id| (id, i)))
        .collect();
    let mut out = BTreeMap::new();
    for inst in m.raw.all_inst_iter() {
        if inst.class.opcode != Op::ImageTexelPointer {
            continue;
        }
        let Some(ptr) = id_at(inst, 0) else {
            continue;
        };
        for base in texel_bases_of(m, &defs, ptr) {
            let Some(var_index) = layout.sampler.get(&base.var) else {
                continue;
            };
            out.entry(var_index + base.elems.iter().sum::<u32>())
                .or_insert(base);
        }
    }
    out
}

/// The variable and constant indices a pointer to an image is: the variable itself,
/// or an access chain into an array of images; through one dynamic index into an
/// array, every element (the importer made one atomic per candidate image).
fn texel_bases_of(m: &Module, defs: &BTreeMap<u32, &Instruction>, ptr: u32) -> Vec<TexelBase> {
    let Some(image_ty) =
        defs.get(&ptr)
            .and_then(|d| d.result_type)
            .and_then(|t| match m.types.get(&t) {
                Some(Ty::Pointer { pointee, .. }) => Some(*pointee),
                _ => None,
            })
    else {
        return vec![];
    };
    let base = |var, elems| TexelBase {
        var,
        elems,
        image_ty,
    };
    if m.vars.contains_key(&ptr) {
        return vec![base(ptr, vec![])];
    }
    let Some(chain) = defs
        .get(&ptr)
        .filter(|c| matches!(c.class.opcode, Op::AccessChain | Op::InBoundsAccessChain))
    else {
        return vec![];
    };
    let Some(var) = id_at(chain, 0).filter(|v| m.vars.contains_key(v)) else {
        return vec![];
    };
    let indices: Vec<Option<u32>> = (1..chain.operands.len())
        .map(|i| id_at(chain, i).and_then(|c| const_u32(m, c)))
        .collect();
    if let Some(elems) = indices.iter().copied().collect::<Option<Vec<u32>>>() {
        return vec![base(var, elems)];
    }
    let len = match m.vars.get(&var).and_then(|g| m.types.get(&g.ty)) {
        Some(Ty::Array { len, .. }) if indices.len() == 1 => *len,
        _ => return vec![],
    };
    (0..len).map(|k| base(var, vec![k])).collect()
}

fn root_index(h: &Handle, layout: &StageLayout) -> Option<u32> {
    match h {
        Handle::Load { var, elems, .. } => {
            Some(layout.sampler.get(var)? + elems.iter().sum::<u32>())
        }
        Handle::Sampled { img, .. } => root_index(img, layout),
        Handle::Image { inner, .. } => root_index(inner, layout),
    }
}

fn const_u32(m: &Module, id: u32) -> Option<u32> {
    match m.consts.get(&id) {
        Some((_, crate::import::module::ConstDef::Scalar(v))) => Some(*v),
        _ => None,
    }
}

fn handle(m: &Module, defs: &BTreeMap<u32, &Instruction>, id: u32, depth: u32) -> Option<Handle> {
    let inst = defs.get(&id)?;
    if depth > 8 {
        return None;
    }
    let ty = inst.result_type?;
    match inst.class.opcode {
        Op::Load => {
            let ptr = id_at(inst, 0)?;
            if m.vars.contains_key(&ptr) {
                return Some(Handle::Load {
                    var: ptr,
                    elems: vec![],
                    ty,
                });
            }
            let chain = defs.get(&ptr)?;
            if !matches!(
                chain.class.opcode,
                Op::AccessChain | Op::InBoundsAccessChain
            ) {
                return None;
            }
            let var = id_at(chain, 0)?;
            let elems = (1..chain.operands.len())
                .map(|i| id_at(chain, i).and_then(|c| const_u32(m, c)))
                .collect::<Option<Vec<u32>>>()?;
            m.vars
                .contains_key(&var)
                .then_some(Handle::Load { var, elems, ty })
        }
        Op::SampledImage => Some(Handle::Sampled {
            ty,
            img: Box::new(handle(m, defs, id_at(inst, 0)?, depth + 1)?),
            smp: Box::new(handle(m, defs, id_at(inst, 1)?, depth + 1)?),
        }),
        Op::Image => Some(Handle::Image {
            ty,
            inner: Box::new(handle(m, defs, id_at(inst, 0)?, depth + 1)?),
        }),
        Op::CopyObject => handle(m, defs, id_at(inst, 0)?, depth + 1),
        _ => None,
    }
}

/// Number of scalar leaves of a numeric type.
fn leaves(m: &Module, ty: u32) -> Option<u32> {
    match m.types.get(&ty)? {
        Ty::Int { .. } | Ty::Float { .. } | Ty::Bool => Some(1),
        Ty::Vector { n, .. } => Some(*n),
        _ => None,
    }
}

fn template(
    m: &Module,
    defs: &BTreeMap<u32, &Instruction>,
    inst: &Instruction,
) -> Option<Template> {
    let handle = handle(m, defs, id_at(inst, 0)?, 0)?;
    let mut operands = vec![];
    let mut const_ids: Vec<bool> = vec![];
    for (i, op) in inst.operands.iter().enumerate().skip(1) {
        match op {
            Operand::IdRef(id) => {
                let ty = defs.get(id).and_then(|d| d.result_type)?;
                let constant = const_ids.get(operands.len()).copied().unwrap_or(false);
                let _ = i;
                operands.push(TplOperand::Id {
                    ty,
                    n: leaves(m, ty)?,
                    constant,
                });
            }
            Operand::ImageOperands(mask) => {
                const_ids = const_positions(operands.len(), *mask);
                operands.push(TplOperand::Lit(op.clone()));
            }
            other => operands.push(TplOperand::Lit(other.clone())),
        }
    }
    Some(Template {
        op: inst.class.opcode,
        result_ty: inst.result_type?,
        handle,
        operands,
    })
}

/// Which operand positions after an image-operands mask at `at` must be constants.
fn const_positions(at: usize, mask: ImageOperands) -> Vec<bool> {
    let mut v = vec![false; at + 1];
    let order = [
        (ImageOperands::BIAS, 1, false),
        (ImageOperands::LOD, 1, false),
        (ImageOperands::GRAD, 2, false),
        (ImageOperands::CONST_OFFSET, 1, true),
        (ImageOperands::OFFSET, 1, false),
        (ImageOperands::CONST_OFFSETS, 1, true),
        (ImageOperands::SAMPLE, 1, false),
        (ImageOperands::MIN_LOD, 1, false),
    ];
    for (bit, n, constant) in order {
        if mask.contains(bit) {
            v.extend(std::iter::repeat_n(constant, n));
        }
    }
    v
}
