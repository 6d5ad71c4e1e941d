//! SSA under structured control flow: every value is defined once and every use is
//! dominated by its definition (values of an `if` branch or a loop body are visible
//! only inside it; phis carry values out), `break`/`continue` sit inside a loop, and a
//! loop with header phis never falls off the end of its body.

use crate::ir::{walk, Inst, LoopPhi, Phi, SrcLoc, Stmt, Value, Visit};

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
    /// Per open block, innermost last: whether a statement seen so far in it ends every
    /// path through it with `break` or `continue`.
    leaves: Vec<bool>,
    /// Per open `if` whose else-branch is being walked: whether its then-branch always
    /// leaves.
    then_leaves: Vec<bool>,
}

/// Walks the shader in program order, checking dominance and running the
/// per-instruction checks (bit sizes, intrinsics, slots) on the way.
pub(super) fn check<'a>(ctx: &mut Ctx<'a>) {
    let shader = ctx.shader;
    let mut flow = Flow {
        seen: vec![Seen::NotYet; shader.values.len()],
        scopes: vec![vec![]],
        loops: vec![],
        leaves: vec![false],
        then_leaves: vec![],
        ctx,
    };
    for visit in walk(&shader.body) {
        match visit {
            Visit::Enter(stmt) => flow.enter(stmt),
            Visit::Else(Stmt::If { phis, loc, .. }) => flow.else_(phis, *loc),
            Visit::Leave(Stmt::If { phis, loc, .. }) => flow.end_if(phis, *loc),
            Visit::Leave(Stmt::Loop { phis, loc, .. }) => flow.end_loop(phis, *loc),
            Visit::Else(_) | Visit::Leave(_) => {}
        }
    }
}

impl<'a> Flow<'_, 'a> {
    fn enter(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::Inst(inst) => self.inst(inst),
            Stmt::If { cond, loc, .. } => {
                self.use_(*cond, *loc);
                bits::check_cond(self.ctx, *cond, *loc);
                self.open_block();
            }
            Stmt::Loop { phis, loc, .. } => self.loop_(phis, *loc),
            Stmt::Break { loc } => {
                if self.loops.is_empty() {
                    self.ctx.error(*loc, "`break` outside a loop");
                }
                self.jumps();
            }
            Stmt::Continue { args, loc } => {
                self.continue_(args, *loc);
                self.jumps();
            }
        }
    }

    fn open_block(&mut self) {
        self.scopes.push(vec![]);
        self.leaves.push(false);
    }

    /// The block being walked ends every path through it from here on.
    fn jumps(&mut self) {
        if let Some(l) = self.leaves.last_mut() {
            *l = true;
        }
    }

    /// A merge reads its operand at the end of that branch, where the branch's own
    /// values are still visible.
    fn end_branch(&mut self, phis: &[Phi], then_side: bool, loc: Option<SrcLoc>) -> bool {
        for phi in phis {
            let v = if then_side {
                phi.then_val
            } else {
                phi.else_val
            };
            self.use_(v, self.phi_loc(phi.dst, loc));
        }
        self.close(Scope::Branch);
        self.leaves.pop().unwrap_or(false)
    }

    fn else_(&mut self, phis: &[Phi], loc: Option<SrcLoc>) {
        let then_leaves = self.end_branch(phis, true, loc);
        self.then_leaves.push(then_leaves);
        self.open_block();
    }

    fn end_if(&mut self, phis: &[Phi], loc: Option<SrcLoc>) {
        let else_leaves = self.end_branch(phis, false, loc);
        if self.then_leaves.pop().unwrap_or(false) && else_leaves {
            self.jumps();
        }
        for phi in phis {
            bits::check_phi(self.ctx, phi, self.phi_loc(phi.dst, loc));
            self.define(phi.dst, loc);
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

    fn loop_(&mut self, phis: &'a [LoopPhi], loc: Option<SrcLoc>) {
        for phi in phis {
            self.use_(phi.init, self.phi_loc(phi.dst, loc));
        }
        for phi in phis {
            bits::check_loop_phi(self.ctx, phi, self.phi_loc(phi.dst, loc));
            self.define(phi.dst, loc);
        }
        self.loops.push(phis);
        self.open_block();
    }

    /// A loop with header phis must not fall off its body. The loop statement itself
    /// falls through for its enclosing block: only its own `break` leaves it.
    fn end_loop(&mut self, phis: &[LoopPhi], loc: Option<SrcLoc>) {
        self.close(Scope::LoopBody);
        self.loops.pop();
        let body_leaves = self.leaves.pop().unwrap_or(false);
        if !phis.is_empty() && !body_leaves {
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
        // The common case, checked before any message text is built (this runs for
        // every operand of every instruction).
        if seen == Seen::Visible {
            return;
        }
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

/// `1 value`, `2 values`.
pub(super) fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
