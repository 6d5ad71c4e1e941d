//! I/O slots: which slots each stage may read and write with which intrinsic
//! (attributes, fragment results, per-patch and per-vertex varyings), component
//! ranges, and indirect arrays.

use crate::ir::{Indirect, Inst, InstKind, IoSlot, Slot, SlotClass, Stage};

use super::context::Ctx;

/// How an instruction touches a slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Access {
    LoadInput,
    LoadInterpolated,
    LoadPerVertex,
    /// TCS output read-back; `true` when a vertex index is given.
    LoadOutput(bool),
    Store,
    StorePerVertex,
}

fn access_of(kind: &InstKind) -> Option<(Access, IoSlot)> {
    Some(match kind {
        InstKind::LoadInput { slot, .. } => (Access::LoadInput, *slot),
        InstKind::LoadInterpolatedInput { slot, .. } => (Access::LoadInterpolated, *slot),
        InstKind::LoadPerVertexInput { slot, .. } => (Access::LoadPerVertex, *slot),
        InstKind::LoadOutput { slot, vertex, .. } => (Access::LoadOutput(vertex.is_some()), *slot),
        InstKind::StoreOutput { slot, .. } => (Access::Store, *slot),
        InstKind::StorePerVertexOutput { slot, .. } => (Access::StorePerVertex, *slot),
        _ => return None,
    })
}

/// Checks the slot an I/O instruction (already legal in its stage) addresses.
pub(super) fn check(ctx: &mut Ctx<'_>, inst: &Inst) {
    let Some((access, io)) = access_of(&inst.kind) else {
        return;
    };
    if let Some(msg) = role_problem(ctx.shader.stage(), access, io) {
        ctx.error(inst.loc, msg);
    }
    let n = io.slot.num_components();
    if io.comp >= n {
        let what = if io.comp < 4 {
            format!("slot `{io}`")
        } else {
            format!("component {} of slot `{}`", io.comp, io.slot)
        };
        let noun = if n == 1 { "component" } else { "components" };
        ctx.error(inst.loc, format!("{what} has only {n} {noun}"));
    }
    if let Some(ind) = inst.kind.indirect() {
        if let Some(msg) = indirect_problem(io.slot, ind) {
            ctx.error(inst.loc, msg);
        }
    }
}

/// Whether `stage` may access `io` this way; the message says what is expected.
fn role_problem(stage: Stage, access: Access, io: IoSlot) -> Option<String> {
    let class = io.slot.class();
    if class == SlotClass::FragResult && !(stage == Stage::Fragment && access == Access::Store) {
        return Some(format!(
            "`{io}` is a fragment shader output, only writable with `store_output` in fs"
        ));
    }
    if class == SlotClass::Attribute && !(stage == Stage::Vertex && access == Access::LoadInput) {
        return Some(format!(
            "`{io}` is a vertex attribute, only readable with `load_input` in vs"
        ));
    }
    if stage == Stage::Vertex && access == Access::LoadInput && class != SlotClass::Attribute {
        return Some(format!(
            "vs inputs must be vertex attributes `ATTRn`, found `{io}`"
        ));
    }
    if io.slot == Slot::ClipVertex && stage == Stage::Fragment {
        return Some(format!(
            "`{io}` feeds clipping before rasterization; a fragment shader cannot read it"
        ));
    }
    if io.slot == Slot::ViewportMask
        && !(access == Access::Store
            && matches!(stage, Stage::Vertex | Stage::TessEval | Stage::Geometry))
    {
        return Some(format!(
            "`{io}` is the viewport mask of the primitive, only writable with `store_output` in vs, tes or gs"
        ));
    }
    if stage == Stage::Fragment && access == Access::Store && class != SlotClass::FragResult {
        return Some(format!(
            "fs outputs must be `DATAn`, `DEPTH` or `SAMPLE_MASK`, found `{io}`"
        ));
    }
    patch_problem(stage, access, io)
}

/// Per-patch slots are written by TCS `store_output` and read by TES `load_input`;
/// everything else in those stages is per vertex.
fn patch_problem(stage: Stage, access: Access, io: IoSlot) -> Option<String> {
    let patch = io.slot.is_patch();
    let msg = match (stage, access) {
        (Stage::TessCtrl, Access::Store) if !patch => format!(
            "tcs `store_output` writes patch outputs (`PATCHn`, `TESS_LEVEL_*`), found `{io}`; use `store_per_vertex_output`"
        ),
        (Stage::TessCtrl, Access::StorePerVertex) if patch => {
            format!("`{io}` is a per-patch output; store it with `store_output`")
        }
        (Stage::TessCtrl, Access::LoadOutput(true)) if patch => {
            format!("`{io}` is a per-patch output; read it back without a vertex index")
        }
        (Stage::TessCtrl, Access::LoadOutput(false)) if !patch => {
            format!("`{io}` is a per-vertex output; read it back with a vertex index")
        }
        (Stage::TessEval, Access::LoadInput) if !patch => format!(
            "tes `load_input` reads patch inputs (`PATCHn`, `TESS_LEVEL_*`), found `{io}`; use `load_per_vertex_input`"
        ),
        (Stage::TessEval, Access::LoadPerVertex) if patch => {
            format!("`{io}` is a per-patch input; read it with `load_input`")
        }
        (_, Access::Store | Access::StorePerVertex) if patch && stage != Stage::TessCtrl => {
            format!("`{io}` is a per-patch output, only writable in tcs")
        }
        (_, Access::LoadInput | Access::LoadInterpolated | Access::LoadPerVertex)
            if patch && stage != Stage::TessEval =>
        {
            format!("`{io}` is a per-patch input, only readable in tes")
        }
        _ => return None,
    };
    Some(msg)
}

/// Indirect arrays stay inside one indexable slot family.
fn indirect_problem(slot: Slot, ind: Indirect) -> Option<String> {
    let indexable = slot.indexable();
    if ind.len == 0 {
        return Some(format!("indirect array at `{slot}` has length 0"));
    }
    if !indexable {
        return Some(format!(
            "indirect indexing is only allowed on VARn, PATCHn, TEXn, CLIP_DIST and CULL_DIST slots, not `{slot}`"
        ));
    }
    if slot.offset(u32::from(ind.len) - 1).is_none() {
        return Some(format!(
            "indirect array of {} slots starting at `{slot}` runs past the end of its slot family",
            ind.len
        ));
    }
    None
}
