//! Geometry shader output bound: the `emit_vertex` statements on any path outside
//! loops must not exceed `max_vertices` (emits inside loops depend on the trip count,
//! which is not known statically).

use crate::ir::{Block, InstKind, StageInfo, Stmt};

use super::context::Ctx;

/// Reports the first `emit_vertex` that exceeds the bound on some path.
pub(super) fn check(ctx: &mut Ctx<'_>) {
    let StageInfo::Geometry { max_vertices, .. } = ctx.shader.info else {
        return;
    };
    let shader = ctx.shader;
    let mut walk = Walk {
        max: u32::from(max_vertices),
        reported: false,
        ctx,
    };
    walk.block(&shader.body, 0);
}

struct Walk<'c, 'a> {
    ctx: &'c mut Ctx<'a>,
    max: u32,
    reported: bool,
}

impl Walk<'_, '_> {
    /// Returns the largest number of emits after `block`, starting from `count`.
    fn block(&mut self, block: &Block, mut count: u32) -> u32 {
        for stmt in block {
            match stmt {
                Stmt::Inst(inst) if inst.kind == InstKind::EmitVertex => {
                    count += 1;
                    if count > self.max && !self.reported {
                        self.reported = true;
                        let msg = format!(
                            "`emit_vertex` number {count} on this path exceeds `max_vertices` {}",
                            self.max
                        );
                        self.ctx.error(inst.loc, msg);
                    }
                }
                Stmt::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    let a = self.block(then_body, count);
                    let b = self.block(else_body, count);
                    count = a.max(b);
                }
                Stmt::Inst(_) | Stmt::Loop { .. } | Stmt::Break { .. } | Stmt::Continue { .. } => {}
            }
        }
        count
    }
}
