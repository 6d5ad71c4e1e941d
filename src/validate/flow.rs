//! SSA under structured control flow: every value is defined once and every use is
//! dominated by its definition (values of an `if` branch or a loop body are visible
//! only inside it; phis carry values out), `break`/`continue` sit inside a loop, and a
//! loop with header phis never falls off the end of its body.

use crate::ir::{Block, Inst, LoopPhi, Phi, SrcLoc, Stmt, Value};

use super::context::Ctx;
use super::names::first_at;
use super::{bits, intrinsics};

/// The kind of scope whose values die at its end.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    Branch,
    LoopBody,
}

/// What the walk knows about a value at the current point.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Seen {
    NotYet,
    Visible,
    Closed(Scope),
}

struct Flow<'c, 'a> {
    ctx: &'c mut Ctx<'a>,
    seen: Vec<Seen>,
    /// Values defined in each open scope, innermost last.
    scopes: Vec<Vec<Value>>,
    /// Header phis of each enclosing loop, innermost last.
    loops: Vec<&'a [LoopPhi]>,
}

/// Walks the shader in program order, checking dominance and running the
/// per-instruction checks (bit sizes, intrinsics, slots) on the way.
pub(super) fn check<'a>(ctx: &mut Ctx<'a>) {
    let shader = ctx.shader;
    let mut flow = Flow {
        seen: vec![Seen::NotYet; shader.values.len()],
        scopes: vec![vec![]],
        loops: vec![],
        ctx,
    };
    flow.block(&shader.body);
}

impl<'a> Flow<'_, 'a> {
    fn block(&mut self, block: &'a Block) {
        for stmt in block {
            self.stmt(stmt);
        }
    }

    fn stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::Inst(inst) => self.inst(inst),
            Stmt::If {
                cond,
                then_body,
                else_body,
                phis,
                loc,
            } => self.if_(*cond, then_body, else_body, phis, *loc),
            Stmt::Loop { phis, body, loc } => self.loop_(phis, body, *loc),
            Stmt::Break { loc } => {
                if self.loops.is_empty() {
                    self.ctx.error(*loc, "`break` outside a loop");
                }
            }
            Stmt::Continue { args, loc } => self.continue_(args, *loc),
        }
    }

    fn inst(&mut self, inst: &'a Inst) {
        for v in inst.kind.operands() {
            self.use_(v, inst.loc);
        }
        let keyword = inst.kind.keyword();
        match (inst.result, inst.kind.has_result()) {
            (Some(v), false) => {
                let msg = format!(
                    "`{keyword}` does not produce a value; remove `{} =`",
                    self.ctx.name(v)
                );
                self.ctx.error(inst.loc, msg);
            }
            (None, true) => {
                let msg = format!("`{keyword}` produces a value and must define one");
                self.ctx.error(inst.loc, msg);
            }
            _ => {}
        }
        bits::check_inst(self.ctx, inst);
        intrinsics::check(self.ctx, inst);
        if let Some(v) = inst.result {
            self.define(v, inst.loc);
        }
    }

    fn if_(
        &mut self,
        cond: Value,
        then_body: &'a Block,
        else_body: &'a Block,
        phis: &'a [Phi],
        loc: Option<SrcLoc>,
    ) {
        self.use_(cond, loc);
        bits::check_cond(self.ctx, cond, loc);
        for (body, then_side) in [(then_body, true), (else_body, false)] {
            self.scopes.push(vec![]);
            self.block(body);
            // A merge reads its operand at the end of that branch, where the branch's
            // own values are still visible.
            for phi in phis {
                let v = if then_side {
                    phi.then_val
                } else {
                    phi.else_val
                };
                self.use_(v, self.phi_loc(phi.dst, loc));
            }
            self.close(Scope::Branch);
        }
        for phi in phis {
            bits::check_phi(self.ctx, phi, self.phi_loc(phi.dst, loc));
            self.define(phi.dst, loc);
        }
    }

    fn loop_(&mut self, phis: &'a [LoopPhi], body: &'a Block, loc: Option<SrcLoc>) {
        for phi in phis {
            self.use_(phi.init, self.phi_loc(phi.dst, loc));
        }
        for phi in phis {
            bits::check_loop_phi(self.ctx, phi, self.phi_loc(phi.dst, loc));
            self.define(phi.dst, loc);
        }
        self.loops.push(phis);
        self.scopes.push(vec![]);
        self.block(body);
        self.close(Scope::LoopBody);
        self.loops.pop();
        if !phis.is_empty() && !always_leaves(body) {
            self.ctx.error(
                loc,
                "loop with header phis can reach the end of its body; end every path with `break` or `continue`",
            );
        }
    }

    fn continue_(&mut self, args: &[Value], loc: Option<SrcLoc>) {
        for v in args {
            self.use_(*v, loc);
        }
        let Some(phis) = self.loops.last().copied() else {
            self.ctx.error(loc, "`continue` outside a loop");
            return;
        };
        if args.len() != phis.len() {
            let msg = format!(
                "`continue` passes {} but the loop has {}",
                count(args.len(), "value"),
                count(phis.len(), "header phi")
            );
            self.ctx.error(loc, msg);
            return;
        }
        for (arg, phi) in args.iter().zip(phis) {
            bits::check_continue_arg(self.ctx, *arg, phi.dst, loc);
        }
    }

    /// A phi has no position of its own; its `%name` token is the best one.
    fn phi_loc(&self, dst: Value, stmt_loc: Option<SrcLoc>) -> Option<SrcLoc> {
        self.ctx.value_loc(dst).or(stmt_loc)
    }

    fn close(&mut self, scope: Scope) {
        for v in self.scopes.pop().unwrap_or_default() {
            if let Some(seen) = self.seen.get_mut(v.index()) {
                *seen = Seen::Closed(scope);
            }
        }
    }

    fn define(&mut self, v: Value, loc: Option<SrcLoc>) {
        let Some(seen) = self.seen.get_mut(v.index()) else {
            let msg = format!("defines value #{}, which does not exist", v.0);
            self.ctx.error(loc, msg);
            return;
        };
        if *seen != Seen::NotYet {
            let first = self.def_loc(v);
            let msg = format!(
                "value `{}` is defined more than once{}",
                self.ctx.name(v),
                first_at(first)
            );
            self.ctx.error(loc, msg);
            return;
        }
        *seen = Seen::Visible;
        if let Some(scope) = self.scopes.last_mut() {
            scope.push(v);
        }
    }

    fn use_(&mut self, v: Value, loc: Option<SrcLoc>) {
        let Some(seen) = self.seen.get(v.index()).copied() else {
            let msg = format!("operand refers to value #{}, which does not exist", v.0);
            self.ctx.error(loc, msg);
            return;
        };
        let name = self.ctx.name(v);
        let def = self.ctx.defs.get(v.index()).copied().flatten();
        let at = def
            .and_then(|d| d.loc)
            .map(|l| format!(" at {l}"))
            .unwrap_or_default();
        let msg = match (seen, def) {
            (Seen::Visible, _) => return,
            (Seen::Closed(Scope::Branch), _) => format!(
                "value `{name}` is defined inside an `if` branch{at} and is not visible here; merge it out with a phi"
            ),
            (Seen::Closed(Scope::LoopBody), _) => format!(
                "value `{name}` is defined inside a loop body{at} and is not visible after the loop; carry it out with a header phi"
            ),
            (Seen::NotYet, Some(d)) => {
                let defined = d.loc.map(|l| format!(" (defined at {l})")).unwrap_or_default();
                format!("value `{name}` is used before it is defined{defined}")
            }
            (Seen::NotYet, None) => format!("value `{name}` is never defined"),
        };
        self.ctx.error(loc, msg);
    }

    fn def_loc(&self, v: Value) -> Option<SrcLoc> {
        self.ctx
            .defs
            .get(v.index())
            .copied()
            .flatten()
            .and_then(|d| d.loc)
    }
}

/// Whether every path through `block` ends in `break` or `continue`. A nested loop
/// counts as falling through, since only its own `break` leaves it.
fn always_leaves(block: &Block) -> bool {
    block.iter().any(|stmt| match stmt {
        Stmt::Break { .. } | Stmt::Continue { .. } => true,
        Stmt::If {
            then_body,
            else_body,
            ..
        } => always_leaves(then_body) && always_leaves(else_body),
        Stmt::Inst(_) | Stmt::Loop { .. } => false,
    })
}

/// `1 value`, `2 values`.
pub(super) fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
