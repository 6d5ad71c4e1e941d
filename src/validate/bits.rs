//! Bit sizes: ALU typing, the size each instruction produces against the size the
//! arena records, 1-bit conditions, phi operands, slot halves of loads and stores, and
//! the 32-bit index and address operands of intrinsics.

use crate::ir::{BitSize, Half, Inst, InstKind, InterpLoc, IoSlot, LoopPhi, Phi, SrcLoc, Value};

use super::context::Ctx;

/// The size a load of `slot` produces: full components hold 32 bits, halves 16.
pub(super) fn slot_bits(slot: IoSlot) -> BitSize {
    match slot.half {
        Half::Full => BitSize::B32,
        Half::Lo | Half::Hi => BitSize::B16,
    }
}

/// Checks the instruction's result size and the sizes of its operands.
pub(super) fn check_inst(ctx: &mut Ctx<'_>, inst: &Inst) {
    let produced = produced_bits(ctx, inst);
    if let (Some(v), Some(produced)) = (inst.result, produced) {
        if let Some(recorded) = ctx.bits(v) {
            if recorded != produced {
                let msg = format!(
                    "value `{}` is recorded as {}-bit but `{}` produces {}-bit",
                    ctx.name(v),
                    recorded.bits(),
                    inst.kind.keyword(),
                    produced.bits()
                );
                ctx.error(inst.loc, msg);
            }
        }
    }
    check_operands(ctx, inst);
}

/// The size the instruction produces, `None` when anything goes (const, undef) or it
/// cannot be known; reports ill-typed ALU sources and oversized constants.
fn produced_bits(ctx: &mut Ctx<'_>, inst: &Inst) -> Option<BitSize> {
    match &inst.kind {
        InstKind::Const(pattern) => {
            let bits = ctx.bits(inst.result?)?;
            if pattern & !bits.mask() != 0 {
                let msg = format!(
                    "constant `{}` = {pattern:#x} does not fit in {} bits",
                    ctx.name(inst.result?),
                    bits.bits()
                );
                ctx.error(inst.loc, msg);
            }
            None
        }
        InstKind::Undef => None,
        InstKind::Alu { op, srcs, .. } => {
            let sizes: Option<Vec<BitSize>> = srcs.iter().map(|s| ctx.bits(*s)).collect();
            match op.result_bits(&sizes?) {
                Ok(bits) => Some(bits),
                Err(msg) => {
                    ctx.error(inst.loc, msg);
                    None
                }
            }
        }
        InstKind::LoadInput { slot, .. }
        | InstKind::LoadInterpolatedInput { slot, .. }
        | InstKind::LoadPerVertexInput { slot, .. }
        | InstKind::LoadOutput { slot, .. } => Some(slot_bits(*slot)),
        InstKind::LoadUniform { half, .. } | InstKind::LoadUbo { half, .. } => {
            Some(crate::ir::half_bits(*half))
        }
        InstKind::SsboLoad { .. } | InstKind::Texture { .. } => Some(BitSize::B32),
        InstKind::LoadSystemValue(sv) => Some(sv.bits()),
        InstKind::Opaque { op, .. } => op.result_bits(),
        InstKind::StoreOutput { .. }
        | InstKind::StorePerVertexOutput { .. }
        | InstKind::EmitVertex
        | InstKind::EndPrimitive
        | InstKind::Barrier
        | InstKind::Discard
        | InstKind::SsboStore { .. } => None,
    }
}

fn check_operands(ctx: &mut Ctx<'_>, inst: &Inst) {
    let loc = inst.loc;
    match &inst.kind {
        InstKind::LoadInterpolatedInput { mode, operands, .. } => {
            // Operands of other locations are an operand-count error reported
            // with the intrinsic; their sizes mean nothing.
            let (what, float) = match mode.loc {
                InterpLoc::AtOffset => ("offset operand", true),
                InterpLoc::AtSample => ("sample index", false),
                _ => ("", false),
            };
            if !what.is_empty() {
                for v in operands {
                    need_32(ctx, *v, what, float, loc);
                }
            }
        }
        InstKind::LoadPerVertexInput { vertex, .. }
        | InstKind::LoadOutput {
            vertex: Some(vertex),
            ..
        } => need_32(ctx, *vertex, "vertex index", false, loc),
        InstKind::StorePerVertexOutput {
            slot,
            value,
            vertex,
            ..
        } => {
            stored(ctx, *slot, *value, loc);
            need_32(ctx, *vertex, "vertex index", false, loc);
        }
        InstKind::StoreOutput { slot, value, .. } => stored(ctx, *slot, *value, loc),
        InstKind::LoadUbo { offset, .. } => need_32(ctx, *offset, "UBO offset", false, loc),
        InstKind::SsboLoad { addr, .. } => need_32(ctx, *addr, "SSBO address", false, loc),
        InstKind::SsboStore { addr, value, .. } => {
            need_32(ctx, *addr, "SSBO address", false, loc);
            need_32(ctx, *value, "SSBO value", false, loc);
        }
        InstKind::Texture { coords, .. } => {
            for v in coords {
                if ctx.bits(*v) == Some(BitSize::B1) {
                    let msg = format!(
                        "texture coordinate `{}` must be 16- or 32-bit, found 1-bit",
                        ctx.name(*v)
                    );
                    ctx.error(loc, msg);
                }
            }
        }
        InstKind::Opaque { op, srcs } => opaque_operands(ctx, op, srcs, loc),
        _ => {}
    }
    if let Some(ind) = inst.kind.indirect() {
        need_32(ctx, ind.index, "indirect index", false, loc);
    }
}

/// An opaque op: a sound description, one operand per component of its operand
/// types, each of the component's size.
fn opaque_operands(
    ctx: &mut Ctx<'_>,
    op: &crate::ir::OpaqueOp,
    srcs: &[Value],
    loc: Option<SrcLoc>,
) {
    if let Some(msg) = op.problem() {
        ctx.error(loc, msg);
    }
    let want = op.operand_bits();
    if want.len() != srcs.len() {
        let msg = format!(
            "opaque `{}` takes {} operand(s) by its types, found {}",
            op.name,
            want.len(),
            srcs.len()
        );
        ctx.error(loc, msg);
        return;
    }
    for (v, bits) in srcs.iter().zip(want) {
        if let Some(have) = ctx.bits(*v) {
            if have != bits {
                let msg = format!(
                    "opaque `{}` operand `{}` must be {}-bit, found {}-bit",
                    op.name,
                    ctx.name(*v),
                    bits.bits(),
                    have.bits()
                );
                ctx.error(loc, msg);
            }
        }
    }
}

/// Reports `v` unless it is 32-bit.
fn need_32(ctx: &mut Ctx<'_>, v: Value, what: &str, float: bool, loc: Option<SrcLoc>) {
    let Some(bits) = ctx.bits(v) else { return };
    if bits != BitSize::B32 {
        let kind = if float { "a 32-bit float" } else { "32-bit" };
        let msg = format!(
            "{what} `{}` must be {kind}, found {}-bit",
            ctx.name(v),
            bits.bits()
        );
        ctx.error(loc, msg);
    }
}

/// A store's value must fill exactly the addressed component or half.
fn stored(ctx: &mut Ctx<'_>, slot: IoSlot, v: Value, loc: Option<SrcLoc>) {
    let Some(bits) = ctx.bits(v) else { return };
    let name = ctx.name(v);
    let msg = match (slot.half, bits) {
        (_, BitSize::B1) => {
            format!("1-bit value `{name}` cannot be stored; convert it first (e.g. with `b2i32`)")
        }
        (Half::Full, BitSize::B16) => format!(
            "16-bit value `{name}` stored to full component `{slot}`; use `{slot}.lo` or `.hi`"
        ),
        (Half::Lo | Half::Hi, BitSize::B32) => {
            format!("32-bit value `{name}` stored to 16-bit half `{slot}`")
        }
        _ => return,
    };
    ctx.error(loc, msg);
}

/// An `if` condition must be a 1-bit boolean.
pub(super) fn check_cond(ctx: &mut Ctx<'_>, cond: Value, loc: Option<SrcLoc>) {
    let Some(bits) = ctx.bits(cond) else { return };
    if bits != BitSize::B1 {
        let msg = format!(
            "`if` condition `{}` must be 1-bit, found {}-bit",
            ctx.name(cond),
            bits.bits()
        );
        ctx.error(loc, msg);
    }
}

/// Both operands of an if-phi have the phi's size.
pub(super) fn check_phi(ctx: &mut Ctx<'_>, phi: &Phi, loc: Option<SrcLoc>) {
    for (v, side) in [(phi.then_val, "then-value"), (phi.else_val, "else-value")] {
        same_as_phi(ctx, phi.dst, v, &format!("its {side}"), loc);
    }
}

/// A loop phi's initial value has the phi's size.
pub(super) fn check_loop_phi(ctx: &mut Ctx<'_>, phi: &LoopPhi, loc: Option<SrcLoc>) {
    same_as_phi(ctx, phi.dst, phi.init, "its initial value", loc);
}

/// A `continue` argument has the size of the header phi it feeds.
pub(super) fn check_continue_arg(ctx: &mut Ctx<'_>, arg: Value, phi: Value, loc: Option<SrcLoc>) {
    let (Some(a), Some(p)) = (ctx.bits(arg), ctx.bits(phi)) else {
        return;
    };
    if a != p {
        let msg = format!(
            "`continue` value `{}` is {}-bit but loop phi `{}` is {}-bit",
            ctx.name(arg),
            a.bits(),
            ctx.name(phi),
            p.bits()
        );
        ctx.error(loc, msg);
    }
}

fn same_as_phi(ctx: &mut Ctx<'_>, dst: Value, v: Value, what: &str, loc: Option<SrcLoc>) {
    let (Some(d), Some(b)) = (ctx.bits(dst), ctx.bits(v)) else {
        return;
    };
    if d != b {
        let msg = format!(
            "phi `{}` is {}-bit but {what} `{}` is {}-bit",
            ctx.name(dst),
            d.bits(),
            ctx.name(v),
            b.bits()
        );
        ctx.error(loc, msg);
    }
}
