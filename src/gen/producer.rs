//! Builds the producer: the recipe's ALU DAG, then each output as the kind the recipe
//! asks for (dead, constant, uniform, duplicated, derived, convergent…) in the control
//! flow it asks for, plus the outputs a real stage writes (POS, tessellation levels),
//! GS emits and TCS read-back across a barrier. Returns what the consumer may read.

use super::layout::Layout;
use super::pool::{Gen, PTy, Pv, FLOATS};
use super::read::Read;
use super::recipe::{AtRead, Family, OutputSpec, Qual, Recipe, Ty, VaryingKind, Wrap};
use super::wrap::{self, Target, Wrapped};
use crate::ir::{
    AluOp, BitSize, Indirect, IoSlot, Shader, ShaderBuilder, Slot, Stage, StageInfo, SystemValue,
    Value, Xfb,
};

/// One varying the producer stores.
#[derive(Clone, Copy, Debug)]
struct Planned {
    read: Read,
    dead: bool,
    w: Wrapped,
    xfb: Option<Xfb>,
    /// GS: the stored value changes from vertex to vertex.
    per_emit: bool,
}

/// An indirectly indexed array.
#[derive(Clone, Debug)]
struct ArrayPlan {
    read: Read,
    elems: Vec<Pv>,
    indirect: Option<(Value, Pv)>,
}

/// The built producer and the varyings the consumer should read.
pub(crate) struct Produced {
    pub shader: Shader,
    pub reads: Vec<Read>,
}

/// Per-build settings derived from the pair.
struct Ctx {
    stage: Stage,
    to_fs: bool,
    xfb_next: [u16; 2],
}

/// Builds the producer of `r` with parameters `info`.
pub(crate) fn build(r: &Recipe, info: StageInfo, consumer: Stage) -> Produced {
    let vertices = input_vertices(&info);
    let out_vertices = match info {
        StageInfo::TessCtrl {
            output_vertices, ..
        } => output_vertices,
        _ => 1,
    };
    let mut b = ShaderBuilder::new(info.stage());
    b.info(info);
    let mut g = Gen::new(b, u32::from(r.uniforms), u32::from(r.ubo_words), vertices);
    for op in &r.producer_ops {
        g.apply(op);
    }
    let mut ctx = Ctx {
        stage: g.stage,
        to_fs: consumer == Stage::Fragment,
        xfb_next: [0, 0],
    };
    let mut layout = Layout::new(consumer == Stage::Fragment);
    // Before the recipe's outputs, so that its VIEWPORT and LAYER are free to claim.
    let broadcast = viewport_mask(&mut g, r, consumer, &mut layout);
    let mut planned = vec![];
    for spec in &r.outputs {
        planned.extend(plan_output(&mut g, &mut ctx, &mut layout, spec));
    }
    let arrays: Vec<ArrayPlan> = r
        .arrays
        .iter()
        .take(2)
        .filter_map(|a| plan_array(&mut g, &ctx, &mut layout, a))
        .collect();
    let mut reads_unwritten = vec![];
    // The consumer needs at least one live varying, or every test over it is vacuous.
    if arrays.is_empty() && planned.iter().all(|p| p.dead) {
        if let Some(first) = planned.first_mut() {
            first.dead = false;
        }
    }
    let relative = broadcast.as_ref().is_some_and(|b| b.relative);
    if let Some(b) = broadcast {
        planned.extend(b.stores);
        reads_unwritten.extend(b.unwritten);
    }
    emit_all(&mut g, r, consumer, &planned, &arrays);
    let mut reads: Vec<Read> = planned.iter().filter(|p| !p.dead).map(|p| p.read).collect();
    reads.append(&mut reads_unwritten);
    reads.extend(arrays.iter().map(|a| a.read));
    if g.stage == Stage::TessCtrl {
        reads.extend(off_vertex(
            &mut g,
            &mut layout,
            r.tcs_off_vertex,
            out_vertices,
        ));
        tess_levels(&mut g);
        if r.tcs_readback {
            reads.extend(readback(&mut g, &mut layout, &planned));
        }
        if r.consumer_info & 0x40 != 0 {
            reads.push(tess_level_read());
        }
    }
    if consumer == Stage::Fragment && r.consumer_info & 0x60 == 0x60 {
        // After a GS the primitive id is a varying the GS would have to write.
        let gs = g.stage == Stage::Geometry;
        let supplied = fixed_function_reads().into_iter();
        reads.extend(supplied.filter(|r| !gs || r.io.slot != Slot::PrimitiveId));
    }
    let mut shader = g.b.finish();
    shader.layer_viewport_relative = relative;
    Produced { shader, reads }
}

/// Bits of `Recipe::consumer_info` an FS consumer leaves free (bit 0 picks the
/// provoking vertex, bits 5-6 add the fixed-function reads): with all of
/// `MASK_BITS` set a vs, tes or gs producer broadcasts by a viewport mask (one pair
/// into an FS in 8), `RELATIVE_BIT` makes its layer viewport-relative, and
/// `UNIFORM_MASK_BIT` derives the mask from a uniform. No new draw, so the cases
/// drawn for everything else stay as they were.
pub(crate) const MASK_BITS: u8 = 0x0e;
const RELATIVE_BIT: u8 = 0x10;
const UNIFORM_MASK_BIT: u8 = 0x80;

/// Constant masks: one to three of the 16 viewports, and one that also names bit
/// 20, past the last viewport (no copy for it).
const MASKS: [u32; 6] = [0x1, 0x2, 0x5, 0x9, 0xb, 0x10_0006];

/// A viewport-mask broadcast: the stores (the mask, never read, and the VIEWPORT
/// and LAYER the FS reads) and the FS reads of a VIEWPORT left unwritten.
struct Broadcast {
    stores: Vec<Planned>,
    unwritten: Vec<Read>,
    relative: bool,
}

/// A producer storing `VIEWPORT_MASK` with a mask equal at every vertex (a constant
/// or a uniform expression: a mask that differs between the vertices of a primitive
/// draws nothing, which observes little), and an FS reading `VIEWPORT` and `LAYER`,
/// which each copy of the primitive reads differently (the optimizer must keep those
/// reads). `VIEWPORT` is stored with a constant the copies do not read, or left
/// unwritten (an unmasked read gives 0); `LAYER` is stored with a constant, to which
/// a viewport-relative layer adds each copy's viewport.
fn viewport_mask(
    g: &mut Gen,
    r: &Recipe,
    consumer: Stage,
    layout: &mut Layout,
) -> Option<Broadcast> {
    let rasterized = matches!(g.stage, Stage::Vertex | Stage::TessEval | Stage::Geometry);
    if consumer != Stage::Fragment || !rasterized || r.consumer_info & MASK_BITS != MASK_BITS {
        return None;
    }
    let fixed = |v: Value| Pv { v, inv: false };
    let choice = u32::from(r.producer_info.rotate_right(4));
    let mask = if r.consumer_info & UNIFORM_MASK_BIT != 0 {
        // (u & 6) | 1: viewport 0 and any of 1 and 2.
        let u = fixed(g.uniform(choice as u16));
        let six = fixed(g.konst(BitSize::B32, 6));
        let one = fixed(g.konst(BitSize::B32, 1));
        let low = g.alu(AluOp::IAnd, false, &[u, six]);
        g.alu(AluOp::IOr, false, &[low, one])
    } else {
        fixed(g.konst(BitSize::B32, MASKS[choice as usize % MASKS.len()]))
    };
    let mut out = Broadcast {
        stores: vec![int_store(IoSlot::new(Slot::ViewportMask, 0), mask, true)],
        unwritten: vec![],
        relative: r.consumer_info & RELATIVE_BIT != 0,
    };
    if let Some(io) = layout.claim(Slot::Viewport, Ty::I32, Qual::Flat) {
        if choice % 3 == 2 {
            out.unwritten.push(int_store(io, mask, false).read);
        } else {
            let v = fixed(g.konst(BitSize::B32, 5 + choice % 3));
            out.stores.push(int_store(io, v, false));
        }
    }
    if let Some(io) = layout.claim(Slot::Layer, Ty::I32, Qual::Flat) {
        let v = fixed(g.konst(BitSize::B32, 1 + choice % 4));
        out.stores.push(int_store(io, v, false));
    }
    Some(out)
}

/// A flat 32-bit integer output stored plainly (the same at every GS emit).
fn int_store(io: IoSlot, v: Pv, dead: bool) -> Planned {
    Planned {
        read: Read::plain(io, Ty::I32, Qual::Flat),
        dead,
        w: Wrapped {
            ty: PTy::I32,
            v,
            alt: v,
            cond: v,
            wrap: Wrap::None,
        },
        xfb: None,
        per_emit: false,
    }
}

/// Vertices of the per-vertex input arrays of a stage.
pub(crate) fn input_vertices(info: &StageInfo) -> u32 {
    match *info {
        StageInfo::TessCtrl { input_vertices, .. } | StageInfo::TessEval { input_vertices, .. } => {
            u32::from(input_vertices)
        }
        StageInfo::Geometry { input, .. } => input.vertex_count() as u32,
        _ => 0,
    }
}

fn plan_output(g: &mut Gen, ctx: &mut Ctx, layout: &mut Layout, s: &OutputSpec) -> Vec<Planned> {
    let patch = s.patch && ctx.stage == Stage::TessCtrl;
    let ty = s.ty;
    let qual = if !ctx.to_fs || ty == Ty::I32 {
        Qual::Flat
    } else {
        s.qual
    };
    let values = kind_values(g, s, patch);
    let wrapped = matches!(s.kind, VaryingKind::General | VaryingKind::Dead);
    let wrap = if wrapped { s.wrap } else { Wrap::None };
    let (alt, cond) = match (wrap, values.first()) {
        (Wrap::None, Some(v)) => (*v, *v),
        _ => (
            g.pick(ty.pty(), s.other, patch),
            g.pick(PTy::B1, s.cond, patch),
        ),
    };
    let mut out = vec![];
    for (i, v) in values.into_iter().enumerate() {
        let skip = if i == 0 { s.skip % 4 } else { 0 };
        let Some(io) = layout.alloc(s.family, patch, ty, qual, skip) else {
            break;
        };
        let xfb = (s.xfb && ctx.to_fs).then(|| next_xfb(ctx, s.value));
        out.push(Planned {
            read: Read {
                io,
                ty,
                qual,
                vertex: s.vertex,
                fixed_vertex: false,
                patch,
                at: if ctx.to_fs { s.at } else { AtRead::None },
                array: None,
            },
            dead: s.kind == VaryingKind::Dead,
            w: Wrapped {
                ty: ty.pty(),
                v,
                alt,
                cond,
                wrap,
            },
            xfb,
            per_emit: wrapped && ty == Ty::F32,
        });
    }
    out
}

fn next_xfb(ctx: &mut Ctx, choice: u16) -> Xfb {
    let buffer = usize::from(choice % 2);
    let offset = ctx.xfb_next[buffer];
    ctx.xfb_next[buffer] += 4;
    Xfb {
        buffer: buffer as u8,
        offset,
    }
}

/// The values an output kind stores (two for duplicated and derived outputs).
fn kind_values(g: &mut Gen, s: &OutputSpec, invariant: bool) -> Vec<Pv> {
    let ty = s.ty;
    let fixed = |v: Value| Pv { v, inv: false };
    match (s.kind, ty) {
        (VaryingKind::General | VaryingKind::Dead, _) => vec![g.pick(ty.pty(), s.value, invariant)],
        (VaryingKind::Constant, _) => vec![fixed(constant(g, ty, s.value))],
        (VaryingKind::Uniform, _) => {
            let u = fixed(if s.other.is_multiple_of(2) {
                g.uniform(s.value)
            } else {
                g.ubo(s.value)
            });
            vec![retype(g, u, ty)]
        }
        (VaryingKind::UniformExpr, _) => {
            let a = fixed(g.uniform(s.value));
            let b = fixed(g.ubo(s.other));
            let k = fixed(g.f32c(FLOATS[usize::from(s.cond) % FLOATS.len()]));
            let e = match ty {
                Ty::I32 => g.alu(AluOp::IAdd, false, &[a, b]),
                _ => {
                    let m = g.alu(AluOp::FMul, false, &[a, b]);
                    g.alu(AluOp::FAdd, false, &[m, k])
                }
            };
            vec![retype(g, e, ty)]
        }
        (VaryingKind::Duplicate { commuted: true }, Ty::F32) => {
            let a = g.pick(PTy::F32, s.value, invariant);
            let c = g.pick(PTy::F32, s.other, invariant);
            vec![
                g.alu(AluOp::FMul, false, &[a, c]),
                g.alu(AluOp::FMul, false, &[c, a]),
            ]
        }
        (VaryingKind::Duplicate { .. }, _) => {
            let v = g.pick(ty.pty(), s.value, invariant);
            vec![v, v]
        }
        (VaryingKind::Derived { times_two }, Ty::F32) => {
            let v = g.pick(PTy::F32, s.value, invariant);
            let (op, k) = if times_two {
                (AluOp::FMul, 2.0)
            } else {
                (AluOp::FAdd, 1.0)
            };
            let k = fixed(g.f32c(k));
            vec![v, g.alu(op, false, &[v, k])]
        }
        (VaryingKind::Derived { .. }, _) => vec![g.pick(ty.pty(), s.value, invariant)],
        (VaryingKind::Convergent, _) => vec![convergent(g, s, ty)],
    }
}

fn constant(g: &mut Gen, ty: Ty, choice: u16) -> Value {
    let f = FLOATS[usize::from(choice) % FLOATS.len()];
    match ty {
        Ty::F32 => g.f32c(f),
        Ty::F16 => g.konst(BitSize::B16, crate::ir::from_f32(f, BitSize::B16)),
        Ty::I32 => g.konst(BitSize::B32, u32::from(choice % 16)),
    }
}

/// Turns a 32-bit float-or-int value into the type a varying carries.
fn retype(g: &mut Gen, v: Pv, ty: Ty) -> Pv {
    match ty {
        Ty::F16 => g.alu(AluOp::F2F16, false, &[v]),
        _ => v,
    }
}

/// A value equal for all vertices of a primitive: a per-primitive id mixed with a uniform.
fn convergent(g: &mut Gen, s: &OutputSpec, ty: Ty) -> Pv {
    let id = match g.stage {
        Stage::Vertex => SystemValue::InstanceId,
        _ => SystemValue::PrimitiveId,
    };
    let id = Pv {
        v: g.b.system_value(id),
        inv: false,
    };
    let u = Pv {
        v: g.uniform(s.value),
        inv: false,
    };
    if ty == Ty::I32 {
        return g.alu(AluOp::IAdd, false, &[id, u]);
    }
    let f = g.alu(AluOp::I2F32, false, &[id]);
    let m = g.alu(AluOp::FMul, false, &[f, u]);
    retype(g, m, ty)
}

fn plan_array(
    g: &mut Gen,
    ctx: &Ctx,
    layout: &mut Layout,
    a: &super::recipe::ArraySpec,
) -> Option<ArrayPlan> {
    let len = if a.len4 { 4 } else { 2 };
    let base = layout.alloc_array(len)?;
    let elems = (0..u16::from(len))
        .map(|e| g.pick(PTy::F32, a.value.wrapping_add(e), false))
        .collect();
    let indirect = (a.store_indirect && ctx.stage != Stage::TessCtrl).then(|| {
        let index = g.slot_index(len, a.value);
        (index, g.pick(PTy::F32, a.value.wrapping_add(7), false))
    });
    Some(ArrayPlan {
        read: Read {
            io: IoSlot::new(base, 0),
            ty: Ty::F32,
            qual: if ctx.to_fs { a.qual } else { Qual::Flat },
            vertex: (a.value % 5) as u8,
            fixed_vertex: false,
            patch: false,
            at: AtRead::None,
            array: Some(len),
        },
        elems,
        indirect,
    })
}

/// Emits every store: once, or once per emitted vertex in a GS.
fn emit_all(g: &mut Gen, r: &Recipe, consumer: Stage, planned: &[Planned], arrays: &[ArrayPlan]) {
    // The position matters to rasterization and to a GS (`gl_in[].gl_Position`).
    let feeds_raster = matches!(consumer, Stage::Fragment | Stage::Geometry);
    if g.stage != Stage::Geometry {
        if feeds_raster {
            let pos = position(g, 0);
            store_position(g, pos);
        }
        emit_stores(g, planned, arrays);
        return;
    }
    let emits = r.emits.clamp(1, 4);
    for k in 0..emits {
        let pos = position(g, k);
        let shifted: Vec<Planned> = planned.iter().map(|p| shift(g, p, k)).collect();
        if k == 1 && r.gs_emit_branch {
            // `if c { stores; emit }`: an emit site inside a branch, with its stores
            // (values computed at the top level, stored without their own wrappers).
            let cond = g.pick(PTy::B1, u16::from(k), false).v;
            g.b.if_else(
                cond,
                |b| {
                    for (c, p) in pos.iter().enumerate() {
                        b.store(IoSlot::new(Slot::Pos, c as u8), p.v);
                    }
                    for p in &shifted {
                        let t = Target::Plain {
                            io: p.read.io,
                            xfb: p.xfb,
                            indirect: None,
                        };
                        wrap::store(b, t, p.w.v.v);
                    }
                    b.effect(crate::ir::InstKind::EmitVertex);
                    vec![]
                },
                |_| vec![],
            );
            continue;
        }
        store_position(g, pos);
        emit_stores(g, &shifted, arrays);
        g.b.effect(crate::ir::InstKind::EmitVertex);
        if k + 1 == emits || (k == 1 && emits == 4) {
            g.b.effect(crate::ir::InstKind::EndPrimitive);
        }
    }
}

/// GS: varies a per-emit value with the input of vertex `k`.
fn shift(g: &mut Gen, p: &Planned, k: u8) -> Planned {
    if k == 0 || !p.per_emit {
        return *p;
    }
    let x = g.input_leaf(u16::from(k) * 32);
    let mut out = *p;
    out.w.v = g.alu(AluOp::FAdd, false, &[p.w.v, x]);
    out
}

fn position(g: &mut Gen, k: u8) -> [Pv; 4] {
    let k = u16::from(k);
    let x = g.pick(PTy::F32, 0, false);
    let y = g.pick(PTy::F32, 1, false);
    let z = g.pick(PTy::F32, 2, false);
    let w = Pv {
        v: g.f32c(1.0),
        inv: false,
    };
    if k == 0 {
        return [x, y, z, w];
    }
    let dx = g.input_leaf(k * 32);
    [g.alu(AluOp::FAdd, false, &[x, dx]), y, z, w]
}

fn store_position(g: &mut Gen, pos: [Pv; 4]) {
    for (c, p) in pos.iter().enumerate() {
        g.b.store(IoSlot::new(Slot::Pos, c as u8), p.v);
    }
}

fn emit_stores(g: &mut Gen, planned: &[Planned], arrays: &[ArrayPlan]) {
    let per_vertex = g.stage == Stage::TessCtrl;
    let vertex = per_vertex.then(|| g.invocation_id().v);
    let target = |io: IoSlot, patch: bool, xfb, indirect| match vertex {
        Some(vertex) if !patch => Target::PerVertex { io, vertex },
        _ => Target::Plain { io, xfb, indirect },
    };
    for p in planned {
        wrap::emit(g, target(p.read.io, p.read.patch, p.xfb, None), p.w);
    }
    for a in arrays {
        for (e, v) in a.elems.iter().enumerate() {
            let slot = a.read.io.slot.offset(e as u32).unwrap_or(a.read.io.slot);
            wrap::store(
                &mut g.b,
                target(IoSlot::new(slot, 0), false, None, None),
                v.v,
            );
        }
        if let (Some((index, v)), Some(len)) = (a.indirect, a.read.array) {
            let ind = Some(Indirect { index, len });
            wrap::store(&mut g.b, target(a.read.io, false, None, ind), v.v);
        }
    }
}

fn tess_levels(g: &mut Gen) {
    let outer: [f32; 4] = [2.0, 3.0, 2.0, 4.0];
    for (c, f) in outer.iter().enumerate() {
        let v = g.f32c(*f);
        g.b.store(IoSlot::new(Slot::TessLevelOuter, c as u8), v);
    }
    for c in 0..2u8 {
        let v = g.f32c(2.0);
        g.b.store(IoSlot::new(Slot::TessLevelInner, c), v);
    }
}

/// FS inputs the rasterizer supplies: the point coordinate and the primitive id (a
/// GS producer writes the latter, or leaves it undefined).
fn fixed_function_reads() -> [Read; 2] {
    let read = |slot, ty, qual| Read::plain(IoSlot::new(slot, 0), ty, qual);
    [
        read(Slot::Pntc, Ty::F32, Qual::SMOOTH),
        read(Slot::PrimitiveId, Ty::I32, Qual::Flat),
    ]
}

fn tess_level_read() -> Read {
    Read {
        patch: true,
        ..Read::plain(IoSlot::new(Slot::TessLevelOuter, 1), Ty::F32, Qual::Flat)
    }
}

/// TCS: reads its own output back, then (after a barrier) vertex 0's and a patch
/// output, and stores their sum as one more per-vertex varying.
fn readback(g: &mut Gen, layout: &mut Layout, planned: &[Planned]) -> Option<Read> {
    let pv = planned
        .iter()
        .find(|p| !p.read.patch && p.read.ty == Ty::F32)?;
    let io = layout.alloc(Family::Var, false, Ty::F32, Qual::Flat, 0)?;
    let inv = g.invocation_id();
    let own = g.b.load_output(pv.read.io, Some(inv.v));
    g.b.effect(crate::ir::InstKind::Barrier);
    let zero = g.konst(BitSize::B32, 0);
    let first = g.b.load_output(pv.read.io, Some(zero));
    let mut sum = g.b.alu(AluOp::FAdd, &[own, first]);
    let patch = planned
        .iter()
        .find(|p| p.read.patch && p.read.ty == Ty::F32);
    if let Some(p) = patch {
        let pr = g.b.load_output(p.read.io, None);
        sum = g.b.alu(AluOp::FAdd, &[sum, pr]);
    }
    wrap::store(&mut g.b, Target::PerVertex { io, vertex: inv.v }, sum);
    Some(Read::plain(io, Ty::F32, Qual::Flat))
}

/// TCS: stores of values that differ between invocations (`in[gl_InvocationID]`) at
/// a constant output vertex `k`, where the last invocation to run wins, so lowering
/// pins them. `choice % 8` picks the case (`tcs_merge` merges only the paired ones,
/// and the interpreter, which runs the invocations of each phase in a seeded order,
/// would see a wrong merge of the others); `choice / 8` picks `k`:
/// 0 none; 1 one component; 2 two components, paired; 3 two, paired in both branches
/// of an `if` on the invocation; 4 two, at vertices `k` and `k + 1`; 5 two, two values
/// in opposite orders; 6 two, the second in an `if` on the invocation (another value
/// on the else path); 7 two, the second after a barrier. The TES reads each at the
/// vertex it is stored at, the only one it defines.
fn off_vertex(g: &mut Gen, layout: &mut Layout, choice: u8, n: u8) -> Vec<Read> {
    let case = choice % 8;
    let n = n.max(1);
    let (k, k2) = ((choice / 8) % n, (choice / 8 + 1) % n);
    let mut alloc = || layout.alloc(Family::Var, false, Ty::F32, Qual::Flat, 0);
    let Some(a) = (case != 0).then(&mut alloc).flatten() else {
        return vec![];
    };
    let b = (case != 1).then(alloc).flatten();
    let id = g.invocation_id().v;
    let x = g.b.load_per_vertex(IoSlot::new(Slot::Var(0), 0), id);
    let y = g.b.load_per_vertex(IoSlot::new(Slot::Var(0), 1), id);
    let (vk, vk2) = (
        g.konst(BitSize::B32, u32::from(k)),
        g.konst(BitSize::B32, u32::from(k2)),
    );
    let Some(b) = b else {
        g.b.store_per_vertex(a, x, vk);
        return vec![fixed_read(a, k)];
    };
    let on_k = g.b.alu(AluOp::IEq, &[id, vk]);
    let store_both = |bld: &mut ShaderBuilder, v: Value| {
        bld.store_per_vertex(a, v, vk);
        bld.store_per_vertex(b, v, vk);
        vec![]
    };
    let mut b_vertex = k;
    match case {
        3 => {
            g.b.if_else(on_k, |t| store_both(t, x), |e| store_both(e, y));
        }
        4 => {
            g.b.store_per_vertex(a, x, vk);
            g.b.store_per_vertex(b, x, vk2);
            b_vertex = k2;
        }
        5 => {
            g.b.store_per_vertex(a, x, vk);
            g.b.store_per_vertex(a, y, vk);
            g.b.store_per_vertex(b, y, vk);
            g.b.store_per_vertex(b, x, vk);
        }
        6 => {
            g.b.store_per_vertex(a, x, vk);
            let store_b = |bld: &mut ShaderBuilder, v: Value| {
                bld.store_per_vertex(b, v, vk);
                vec![]
            };
            g.b.if_else(on_k, |t| store_b(t, x), |e| store_b(e, y));
        }
        7 => {
            g.b.store_per_vertex(a, x, vk);
            g.b.effect(crate::ir::InstKind::Barrier);
            g.b.store_per_vertex(b, x, vk);
        }
        _ => {
            store_both(&mut g.b, x);
        }
    }
    vec![fixed_read(a, k), fixed_read(b, b_vertex)]
}

/// A flat 32-bit float varying the consumer reads at vertex `k` only.
fn fixed_read(io: IoSlot, k: u8) -> Read {
    Read {
        io,
        ty: Ty::F32,
        qual: Qual::Flat,
        vertex: k,
        fixed_vertex: true,
        patch: false,
        at: AtRead::None,
        array: None,
    }
}
