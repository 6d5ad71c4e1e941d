//! Geometry shader output bound: the `emit_vertex` statements on any path outside
//! loops must not exceed `max_vertices` (emits inside loops depend on the trip count,
//! which is not known statically).

use crate::ir::{walk, InstKind, StageInfo, Stmt, Visit};

use super::context::Ctx;

/// Reports the first `emit_vertex` that exceeds the bound on some path.
pub(super) fn check(ctx: &mut Ctx<'_>) {
    let StageInfo::Geometry { max_vertices, .. } = ctx.shader.info else {
        return;
    };
    let shader = ctx.shader;
    let max = u32::from(max_vertices);
    // Emits so far on the current path; per open `if`, the count on entry and, once
    // its else-branch starts, the count at the end of its then-branch.
    let mut count = 0u32;
    let mut ifs: Vec<(u32, u32)> = vec![];
    let mut loops = 0usize;
    let mut reported = false;
    for visit in walk(&shader.body) {
        match visit {
            Visit::Enter(Stmt::Loop { .. }) => loops += 1,
            Visit::Leave(Stmt::Loop { .. }) => loops -= 1,
            _ if loops > 0 => {}
            Visit::Enter(Stmt::Inst(inst)) if inst.kind == InstKind::EmitVertex => {
                count += 1;
                if count > max && !reported {
                    reported = true;
                    let msg = format!(
                        "`emit_vertex` number {count} on this path exceeds `max_vertices` {max}"
                    );
                    ctx.error(inst.loc, msg);
                }
            }
            Visit::Enter(Stmt::If { .. }) => ifs.push((count, 0)),
            Visit::Else(_) => {
                if let Some((entry, then_end)) = ifs.last_mut() {
                    *then_end = count;
                    count = *entry;
                }
            }
            Visit::Leave(Stmt::If { .. }) => {
                if let Some((_, then_end)) = ifs.pop() {
                    count = count.max(then_end);
                }
            }
            _ => {}
        }
    }
}
