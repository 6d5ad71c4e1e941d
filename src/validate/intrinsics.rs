//! Intrinsics: which stage may use each one, system values, interpolation operand
//! counts, uniform and UBO ranges, constant vertex indices and transform feedback.
//! Slot addressing of I/O intrinsics is checked by `slots` once the intrinsic itself
//! is legal in the stage.

use crate::ir::{BitSize, Inst, InstKind, InterpLoc, SrcLoc, Stage, StageInfo, Value, Xfb};

use super::context::{Ctx, Role};
use super::flow::count;
use super::slots;

/// Number of transform feedback buffers.
const XFB_BUFFERS: u8 = 4;

/// Checks one instruction's legality in its stage and its static operands.
pub(super) fn check(ctx: &mut Ctx<'_>, inst: &Inst) {
    let stage = ctx.shader.stage();
    if let Some((allowed, place)) = allowed_stages(&inst.kind) {
        if !allowed.contains(&stage) {
            let msg = format!(
                "`{}` is only legal in {place}, not in {stage}",
                inst.kind.keyword()
            );
            ctx.error(inst.loc, msg);
            return;
        }
    }
    let loc = inst.loc;
    match &inst.kind {
        InstKind::LoadSystemValue(sv) if !sv.legal_in(stage) => {
            ctx.error(
                loc,
                format!("system value `{sv}` is not available in {stage}"),
            );
        }
        InstKind::LoadInterpolatedInput {
            mode,
            operands,
            slot,
            ..
        } => {
            if mode.interp == crate::ir::Interp::Color {
                if !matches!(slot.slot, crate::ir::Slot::Col(_)) {
                    let msg = format!(
                        "`color` interpolation reads a colour (COL0, COL1), not {}",
                        slot.slot
                    );
                    ctx.error(loc, msg);
                }
                if mode.operand_count() > 0 {
                    let msg = format!(
                        "`color` interpolation is evaluated at center, centroid or sample, not `{}`",
                        loc_keyword(mode.loc)
                    );
                    ctx.error(loc, msg);
                }
            }
            let want = mode.operand_count();
            if operands.len() != want {
                let msg = format!(
                    "`{}` interpolation takes {}, found {}",
                    loc_keyword(mode.loc),
                    count(want, "operand"),
                    operands.len()
                );
                ctx.error(loc, msg);
            }
        }
        InstKind::LoadUniform { index, .. } if *index >= ctx.p.uniforms => {
            let msg = format!(
                "uniform word {index} is out of range; the pair declares {}",
                count(ctx.p.uniforms as usize, "uniform word")
            );
            ctx.error(loc, msg);
        }
        InstKind::LoadUniform { .. } if !uniforms_visible(ctx) => {
            let r = ctx.p.reader(ctx.shader.stage());
            let msg = format!(
                "the uniforms are not visible to the {r}; the pair declares them `(visible {})`",
                other(r)
            );
            ctx.error(loc, msg);
        }
        InstKind::LoadUbo { block, offset, .. } => check_ubo(ctx, *block, *offset, loc),
        InstKind::LoadPerVertexInput { vertex, .. } => {
            if let Some((n, what)) = input_vertices(&ctx.shader.info) {
                check_vertex(ctx, *vertex, n, "vertex index", what, loc);
            }
        }
        InstKind::StorePerVertexOutput { vertex, .. }
        | InstKind::LoadOutput {
            vertex: Some(vertex),
            ..
        } => {
            if let StageInfo::TessCtrl {
                output_vertices, ..
            } = ctx.shader.info
            {
                let n = usize::from(output_vertices);
                check_vertex(
                    ctx,
                    *vertex,
                    n,
                    "output vertex index",
                    "tcs output patch",
                    loc,
                );
            }
        }
        InstKind::StoreOutput {
            xfb: Some(xfb),
            value,
            ..
        } => check_xfb(ctx, *xfb, ctx.bits(*value), loc),
        _ => {}
    }
    slots::check(ctx, inst);
}

/// The stages an intrinsic is restricted to, and how to name them.
fn allowed_stages(kind: &InstKind) -> Option<(&'static [Stage], &'static str)> {
    use Stage::*;
    Some(match kind {
        InstKind::LoadInput { .. } => (&[Vertex, TessEval, Fragment], "a vs, tes or fs shader"),
        InstKind::LoadInterpolatedInput { .. } | InstKind::Discard => {
            (&[Fragment], "a fragment shader")
        }
        InstKind::LoadPerVertexInput { .. } => {
            (&[TessCtrl, TessEval, Geometry], "a tcs, tes or gs shader")
        }
        InstKind::LoadOutput { .. } | InstKind::StorePerVertexOutput { .. } | InstKind::Barrier => {
            (&[TessCtrl], "a tessellation control shader")
        }
        InstKind::EmitVertex | InstKind::EndPrimitive => (&[Geometry], "a geometry shader"),
        InstKind::Opaque { op, .. } if op.is_fragment_only() => (&[Fragment], "a fragment shader"),
        _ => return None,
    })
}

fn loc_keyword(loc: InterpLoc) -> &'static str {
    match loc {
        InterpLoc::Center => "center",
        InterpLoc::Centroid => "centroid",
        InterpLoc::Sample => "sample",
        InterpLoc::AtOffset => "at_offset",
        InterpLoc::AtSample => "at_sample",
    }
}

/// Vertices of the stage's input primitive or patch, with its name for messages.
fn input_vertices(info: &StageInfo) -> Option<(usize, &'static str)> {
    match *info {
        StageInfo::TessCtrl { input_vertices, .. } => {
            Some((usize::from(input_vertices), "tcs input patch"))
        }
        StageInfo::TessEval { input_vertices, .. } => {
            Some((usize::from(input_vertices), "tes input patch"))
        }
        StageInfo::Geometry { input, .. } => Some((input.vertex_count(), "gs input primitive")),
        _ => None,
    }
}

/// A constant vertex index must name an existing vertex.
fn check_vertex(
    ctx: &mut Ctx<'_>,
    vertex: Value,
    n: usize,
    what: &str,
    array: &str,
    loc: Option<SrcLoc>,
) {
    // An empty array is already reported with the stage parameters.
    let Some(k) = ctx.constant(vertex).filter(|_| n > 0) else {
        return;
    };
    // Patterns are read as signed so that `-1` prints as written.
    let signed = k as i32;
    if signed < 0 || k as usize >= n {
        let vertices = if n == 1 {
            "1 vertex".to_owned()
        } else {
            format!("{n} vertices")
        };
        let msg = format!("{what} {signed} is out of range; the {array} has {vertices}");
        ctx.error(loc, msg);
    }
}

fn uniforms_visible(ctx: &Ctx<'_>) -> bool {
    let r = ctx.p.reader(ctx.shader.stage());
    ctx.p.visibility.uniforms_visible_to(r)
}

fn other(r: crate::ir::Reader) -> crate::ir::Reader {
    match r {
        crate::ir::Reader::Producer => crate::ir::Reader::Consumer,
        crate::ir::Reader::Consumer => crate::ir::Reader::Producer,
    }
}

/// The block must be declared and visible to the stage; a constant offset must be
/// aligned and in range.
fn check_ubo(ctx: &mut Ctx<'_>, block: u32, offset: Value, loc: Option<SrcLoc>) {
    let Some(size) = ctx.p.ubo_size(block) else {
        let msg = format!("UBO block {block} is not declared; add `(ubo {block} SIZE)`");
        ctx.error(loc, msg);
        return;
    };
    let r = ctx.p.reader(ctx.shader.stage());
    if !ctx.p.visibility.ubo_visible_to(block, r) {
        let msg = format!(
            "UBO block {block} is not visible to the {r}; the pair declares it `(visible {})`",
            other(r)
        );
        ctx.error(loc, msg);
        return;
    }
    let Some(off) = ctx.constant(offset) else {
        return;
    };
    if !off.is_multiple_of(4) {
        ctx.error(loc, format!("UBO offset {off} is not a multiple of 4"));
    } else if u64::from(off) + 4 > u64::from(size) {
        let msg = format!("UBO offset {off} is out of range; block {block} has {size} bytes");
        ctx.error(loc, msg);
    }
}

fn check_xfb(ctx: &mut Ctx<'_>, xfb: Xfb, bits: Option<BitSize>, loc: Option<SrcLoc>) {
    let stage = ctx.shader.stage();
    let captures = matches!(stage, Stage::Vertex | Stage::TessEval | Stage::Geometry);
    if ctx.role != Role::Producer || !captures {
        ctx.error(
            loc,
            "xfb capture is only legal on stores of a vs, tes or gs producer",
        );
    }
    if xfb.buffer >= XFB_BUFFERS {
        let msg = format!(
            "xfb buffer {} is out of range; buffers are 0-{}",
            xfb.buffer,
            XFB_BUFFERS - 1
        );
        ctx.error(loc, msg);
    }
    // A capture is aligned to its size: 2 bytes for a 16-bit store.
    let align = if bits == Some(BitSize::B16) { 2 } else { 4 };
    if !xfb.offset.is_multiple_of(align) {
        ctx.error(
            loc,
            format!("xfb offset {} is not a multiple of {align}", xfb.offset),
        );
    }
}
