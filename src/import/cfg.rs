//! Structured control flow: SPIR-V blocks with `OpSelectionMerge`/`OpLoopMerge` become
//! `Stmt::If`/`Stmt::Loop`. Selections merge local-variable contents and `OpPhi`s into
//! IR phis; loops carry header phis, modified variables and values that escape the
//! loop in header phis. A break that must carry values out continues once more with
//! a "break" flag set, and the loop leaves at the top of that iteration.

use fxhash::FxHashSet;
use rspirv::dr::{Block as SpvBlock, Instruction};
use rspirv::spirv::Op;

use super::context::Translator;
use super::function::{Flow, FnCtx, LoopCtx};
use super::module::{id_at, lit_at};
use super::val::Val;
use crate::ir::{AluOp, BitSize, LoopPhi, Phi, Stmt, Value};
use crate::Error;

impl<'a> Translator<'a> {
    fn fctx(&self) -> Result<&FnCtx<'a>, Error> {
        self.fns
            .last()
            .ok_or_else(|| self.m.err_plain("no function being translated"))
    }

    fn block(&self, id: u32) -> Result<&'a SpvBlock, Error> {
        self.fctx()?.blocks.get(&id).copied().ok_or_else(|| {
            self.m.err_plain(format!(
                "branch to %{id}, which is not a block of this function"
            ))
        })
    }

    /// The `OpPhi` instructions at the top of a block.
    fn phis_of(&self, id: u32) -> Result<Vec<&'a Instruction>, Error> {
        Ok(self
            .block(id)?
            .instructions
            .iter()
            .take_while(|i| i.class.opcode == Op::Phi)
            .collect())
    }

    /// The values `block`'s `OpPhi`s take when entered from `pred`.
    fn phi_incoming(&mut self, block: u32, pred: Option<u32>) -> Result<Vec<Val>, Error> {
        let mut out = vec![];
        for phi in self.phis_of(block)? {
            let mut found = None;
            for i in (0..phi.operands.len()).step_by(2) {
                if pred.is_some() && id_at(phi, i + 1) == pred {
                    found = id_at(phi, i);
                }
            }
            let v = match found {
                Some(v) => self.val(v)?,
                None => {
                    return Err(self.err(phi, "no incoming value for the edge it is reached by"))
                }
            };
            out.push(v);
        }
        Ok(out)
    }

    fn bind_phis(&mut self, block: u32, vals: Vec<Val>) -> Result<(), Error> {
        for (phi, v) in self.phis_of(block)?.into_iter().zip(vals) {
            if let Some(r) = phi.result_id {
                self.bind(r, v);
            }
        }
        Ok(())
    }

    fn visit(&mut self, block: u32) {
        if let Some(s) = self.visited.last_mut() {
            s.insert(block);
        }
    }

    /// Translates blocks from `at` (entered from `pred`) until `end` or divergence.
    pub fn run(&mut self, at: u32, pred: Option<u32>, end: Option<u32>) -> Result<Flow, Error> {
        let base = self.fctx()?.path.len();
        let flow = self.walk_from(at, pred, end);
        // Also on error: `switch` catches some errors and walks the blocks again.
        if let Some(f) = self.fns.last_mut() {
            f.path.truncate(base);
        }
        flow
    }

    /// `run`'s walk; the blocks it enters stay on the function's path until it ends.
    fn walk_from(
        &mut self,
        mut at: u32,
        mut pred: Option<u32>,
        end: Option<u32>,
    ) -> Result<Flow, Error> {
        let mut phis_bound = false;
        loop {
            if !phis_bound {
                if let Some(flow) = self.exit(at, pred, end)? {
                    return Ok(flow);
                }
            }
            let blk = self.block(at)?;
            // In structured control flow every cycle goes through a loop header's
            // back edge, which `exit` turns into a continue before this point. A
            // block already on the path is an unstructured cycle (a continue
            // construct branching back into the loop body, found by the
            // `import_spirv` fuzz target): without this check the walk went round it
            // until `MAX_BLOCK_VISITS`, translating the cycle's blocks thousands of
            // times (over 10 s for one small module).
            let f = self
                .fns
                .last_mut()
                .ok_or_else(|| self.m.err_plain("no function being translated"))?;
            if f.path.contains(&at) {
                return Err(self.m.err_plain(format!(
                    "branch back to %{at}, which is not the header of the loop it is in (unstructured cycle)"
                )));
            }
            f.path.push(at);
            self.visit(at);
            let term = blk
                .instructions
                .last()
                .ok_or_else(|| self.m.err_plain(format!("block %{at} is empty")))?;
            let merge = blk
                .instructions
                .iter()
                .rev()
                .nth(1)
                .filter(|i| matches!(i.class.opcode, Op::LoopMerge | Op::SelectionMerge));
            if let Some(lm) = merge.filter(|i| i.class.opcode == Op::LoopMerge) {
                if phis_bound {
                    return Err(self.err(
                        lm,
                        "a loop header that is also a merge block is not supported",
                    ));
                }
                let (m, c) = (self.id(lm, 0)?, self.id(lm, 1)?);
                if !self.run_loop(at, pred, m, c)? {
                    return Ok(Flow::Diverged);
                }
                at = m;
                pred = None;
                phis_bound = true;
                continue;
            }
            if !phis_bound {
                let vals = self.phi_incoming(at, pred)?;
                self.bind_phis(at, vals)?;
            }
            phis_bound = false;
            self.body(at)?;
            match term.class.opcode {
                Op::Branch => {
                    pred = Some(at);
                    at = self.id(term, 0)?;
                }
                Op::BranchConditional => {
                    let c = self.scalar(self.id(term, 0)?)?;
                    let (t, f) = (self.id(term, 1)?, self.id(term, 2)?);
                    match merge.filter(|i| i.class.opcode == Op::SelectionMerge) {
                        Some(sm) => {
                            let m = self.id(sm, 0)?;
                            let sides = [(t, Some(at), Some(m)), (f, Some(at), Some(m))];
                            match self.two_way(c, sides)? {
                                Flow::Reached(vals) => {
                                    self.bind_phis(m, vals)?;
                                    at = m;
                                    pred = None;
                                    phis_bound = true;
                                }
                                other => return Ok(other),
                            }
                        }
                        None => return self.two_way(c, [(t, Some(at), end), (f, Some(at), end)]),
                    }
                }
                Op::Switch => {
                    let sm = merge
                        .filter(|i| i.class.opcode == Op::SelectionMerge)
                        .ok_or_else(|| self.err(term, "OpSwitch without OpSelectionMerge"))?;
                    let m = self.id(sm, 0)?;
                    match self.switch(term, at, m)? {
                        Switched::Flow(Flow::Reached(vals)) => {
                            self.bind_phis(m, vals)?;
                            at = m;
                            pred = None;
                            phis_bound = true;
                        }
                        Switched::Flow(other) => return Ok(other),
                        Switched::Looped(true) => {
                            at = m;
                            pred = None;
                            phis_bound = true;
                        }
                        Switched::Looped(false) => return Ok(Flow::Diverged),
                    }
                }
                Op::Return | Op::ReturnValue => return self.ret(term),
                Op::Kill | Op::TerminateInvocation => {
                    self.e.effect(crate::ir::InstKind::Discard);
                    return Ok(self.diverge());
                }
                Op::Unreachable => return Ok(self.diverge()),
                _ => return Err(self.err(term, "unsupported block terminator")),
            }
        }
    }

    /// Leaves the enclosing loop (so the IR never falls off a loop body) and diverges.
    fn diverge(&mut self) -> Flow {
        if !self.loops.is_empty() {
            self.e.push_stmt(Stmt::Break { loc: None });
            if let Some(l) = self.loops.last_mut() {
                l.any_exit = true;
            }
        }
        Flow::Diverged
    }

    fn ret(&mut self, term: &'a Instruction) -> Result<Flow, Error> {
        let base = self.fctx()?.base_depth;
        if self.depth != base {
            return Err(self.err(
                term,
                "return from inside control flow is not supported (run `spirv-opt --merge-return` first; varysat does for GLSL)",
            ));
        }
        if term.class.opcode == Op::ReturnValue {
            let v = self.val(self.id(term, 0)?)?;
            if let Some(f) = self.fns.last_mut() {
                f.ret = Some(v);
            }
        }
        Ok(Flow::Returned)
    }

    /// Translates the instructions of a block other than phis, merges and terminator.
    fn body(&mut self, at: u32) -> Result<(), Error> {
        self.block_visits += 1;
        if self.block_visits > super::context::MAX_BLOCK_VISITS {
            let msg = format!(
                "translation walked more than {} blocks (inlining and structurizing expand this module without bound)",
                super::context::MAX_BLOCK_VISITS
            );
            return Err(self.m.err_plain(msg));
        }
        let blk = self.block(at)?;
        let n = blk.instructions.len();
        for inst in blk.instructions.iter().take(n.saturating_sub(1)) {
            if !matches!(
                inst.class.opcode,
                Op::Phi | Op::LoopMerge | Op::SelectionMerge
            ) {
                self.inst(inst)?;
                self.check_value_budget()?;
            }
        }
        Ok(())
    }

    /// Stops a translation that has created more than [`MAX_IMPORTED_VALUES`].
    fn check_value_budget(&self) -> Result<(), Error> {
        let max = super::context::MAX_IMPORTED_VALUES;
        if self.e.shader.values.len() <= max {
            return Ok(());
        }
        Err(self.m.err_plain(format!(
            "translation created more than {max} values (inlining, structurizing and \
             whole-array loads expand this module without bound)"
        )))
    }

    /// Handles a branch to a block that ends the region or exits the innermost loop.
    fn exit(
        &mut self,
        at: u32,
        pred: Option<u32>,
        end: Option<u32>,
    ) -> Result<Option<Flow>, Error> {
        if Some(at) == end {
            return Ok(Some(Flow::Reached(self.phi_incoming(at, pred)?)));
        }
        let Some(l) = self.loops.last() else {
            return self.switch_exit(at);
        };
        let (header, merge, cont, in_cont) = (l.header, l.merge, l.cont, l.in_cont);
        if at == merge {
            self.break_site(pred)?;
            return Ok(Some(Flow::Diverged));
        }
        if at == header {
            self.back_edge(pred)?;
            return Ok(Some(Flow::Diverged));
        }
        if at == cont && !in_cont {
            self.set_in_cont(true);
            let flow = self.run(cont, pred, None);
            self.set_in_cont(false);
            return match flow? {
                Flow::Diverged => Ok(Some(Flow::Diverged)),
                _ => Err(self.m.err_plain(format!(
                    "continue construct %{cont} does not branch back to its loop"
                ))),
            };
        }
        if self.switch_merges.contains(&at) {
            // A break out of a switch from inside nested control flow: the if-chain
            // form cannot express it; `switch` retries in loop form.
            self.switch_break = Some(at);
            return Err(self.m.err_plain(format!(
                "branch to switch merge %{at} from inside nested control flow"
            )));
        }
        if self
            .loops
            .iter()
            .rev()
            .skip(1)
            .any(|o| at == o.merge || at == o.cont || at == o.header)
        {
            return Err(self.m.err_plain(format!(
                "branch to %{at} leaves more than one loop at once (not supported)"
            )));
        }
        Ok(None)
    }

    /// Outside any loop, a branch to an if-chain switch's merge (see `exit`).
    fn switch_exit(&mut self, at: u32) -> Result<Option<Flow>, Error> {
        if self.switch_merges.contains(&at) {
            self.switch_break = Some(at);
            return Err(self.m.err_plain(format!(
                "branch to switch merge %{at} from inside nested control flow"
            )));
        }
        Ok(None)
    }

    fn set_in_cont(&mut self, v: bool) {
        if let Some(l) = self.loops.last_mut() {
            l.in_cont = v;
        }
    }

    /// Translates two alternative regions under `cond` and merges them.
    fn two_way(
        &mut self,
        cond: Value,
        sides: [(u32, Option<u32>, Option<u32>); 2],
    ) -> Result<Flow, Error> {
        let [(t, tp, te), (f, fp, fe)] = sides;
        let a = self.side(|s| s.run(t, tp, te))?;
        let b = self.side(|s| s.run(f, fp, fe))?;
        self.merge(cond, a, b)
    }

    /// An `OpSwitch`: first as a chain of `if`s on the selector; when a case breaks
    /// out of nested control flow, again as a one-iteration loop whose breaks are
    /// the switch's breaks (merge-return's break-out blocks need this).
    fn switch(&mut self, term: &'a Instruction, at: u32, merge: u32) -> Result<Switched, Error> {
        let (sel, cases, default) = self.switch_cases(term)?;
        let (env0, mark) = (self.env.clone(), self.mark());
        self.switch_merges.push(merge);
        let first = self.switch_chain(sel, &cases, default, at, Some(merge));
        self.switch_merges.pop();
        match first {
            Err(_) if self.switch_break == Some(merge) => {
                self.switch_break = None;
                self.env = env0;
                self.revert(mark);
                self.switch_loop(sel, &cases, default, at, merge)
                    .map(Switched::Looped)
            }
            other => other.map(Switched::Flow),
        }
    }

    /// The switch as a loop that runs once: every branch to `merge` breaks.
    fn switch_loop(
        &mut self,
        sel: Value,
        cases: &[(u32, Vec<u32>)],
        default: u32,
        at: u32,
        merge: u32,
    ) -> Result<bool, Error> {
        let mut blocks = self.fctx()?.loop_blocks(at, merge);
        blocks.remove(&at);
        let shape = LoopShape {
            header: at,
            merge,
            cont: NO_BLOCK,
            blocks,
            header_phis: vec![],
            inits: vec![],
        };
        self.loop_construct(shape, |s| {
            match s.switch_chain(sel, cases, default, at, None)? {
                Flow::Diverged => Ok(()),
                _ => Err(s.m.err_plain(format!(
                    "switch at %{at} has a case that neither breaks nor leaves"
                ))),
            }
        })
    }

    /// The selector, the cases grouped by target, and the default target.
    #[allow(clippy::type_complexity)]
    fn switch_cases(
        &mut self,
        term: &'a Instruction,
    ) -> Result<(Value, Vec<(u32, Vec<u32>)>, u32), Error> {
        let sel = self.scalar(self.id(term, 0)?)?;
        let default = self.id(term, 1)?;
        let mut cases: Vec<(u32, Vec<u32>)> = vec![];
        for i in (2..term.operands.len()).step_by(2) {
            let lit =
                lit_at(term, i).ok_or_else(|| self.err(term, "case literal is not 32-bit"))?;
            let target = self.id(term, i + 1)?;
            match cases.iter_mut().find(|(t, _)| *t == target) {
                Some((_, lits)) => lits.push(lit),
                None => cases.push((target, vec![lit])),
            }
        }
        Ok((sel, cases, default))
    }

    fn switch_chain(
        &mut self,
        sel: Value,
        cases: &[(u32, Vec<u32>)],
        default: u32,
        at: u32,
        end: Option<u32>,
    ) -> Result<Flow, Error> {
        let Some(((target, lits), rest)) = cases.split_first() else {
            return self.run(default, Some(at), end);
        };
        let bits = self.e.bits(sel);
        let mut cond: Option<Value> = None;
        for lit in lits {
            let k = self.e.konst(bits, *lit);
            let eq = self.alu(AluOp::IEq, &[sel, k])?;
            cond = Some(match cond {
                Some(c) => self.alu(AluOp::IOr, &[c, eq])?,
                None => eq,
            });
        }
        let cond = cond.ok_or_else(|| self.m.err_plain("switch case without literals"))?;
        let target = *target;
        let a = self.side(|s| s.run(target, Some(at), end))?;
        let b = self.side(|s| s.switch_chain(sel, rest, default, at, end))?;
        self.merge(cond, a, b)
    }

    /// Translates one branch of an `if` in its own scope.
    fn side(&mut self, f: impl FnOnce(&mut Self) -> Result<Flow, Error>) -> Result<Side, Error> {
        let env0 = self.env.clone();
        let mark = self.mark();
        self.visited.push(FxHashSet::default());
        self.e.open();
        self.depth += 1;
        let flow = f(self);
        self.depth -= 1;
        let body = self.e.close();
        let visited = self.visited.pop().unwrap_or_default();
        if let Some(parent) = self.visited.last_mut() {
            parent.extend(visited.iter().copied());
        }
        let flow = flow?;
        let defined = self.bound_since(mark);
        let escapes = {
            let ctx = self.fctx()?;
            defined
                .into_iter()
                .filter(|(id, _)| {
                    ctx.uses
                        .get(id)
                        .is_some_and(|u| u.iter().any(|b| !visited.contains(b)))
                })
                .collect()
        };
        let env = std::mem::replace(&mut self.env, env0);
        self.revert(mark);
        Ok(Side {
            flow,
            env,
            body,
            escapes,
        })
    }

    /// Emits the `if` for two translated sides and binds what flows out of it.
    fn merge(&mut self, cond: Value, a: Side, b: Side) -> Result<Flow, Error> {
        let live = |f: &Flow| matches!(f, Flow::Reached(_));
        if matches!(a.flow, Flow::Returned) || matches!(b.flow, Flow::Returned) {
            return Err(self.m.err_plain(
                "return from inside control flow is not supported (run `spirv-opt --merge-return` first; varysat does for GLSL)",
            ));
        }
        let (la, lb) = (live(&a.flow), live(&b.flow));
        let mut phis = vec![];
        let mut pending = vec![];
        if la || lb {
            let keys: Vec<u32> = self.env.keys().copied().collect();
            for k in keys {
                let (va, vb) = (a.env.get(&k).cloned(), b.env.get(&k).cloned());
                let pre = self.env.get(&k).cloned();
                let v = self.join_pre(va, vb, la, lb, pre, &mut phis)?;
                if let Some(v) = v {
                    self.env.insert(k, v);
                }
            }
            let (pa, pb) = (flow_vals(&a.flow), flow_vals(&b.flow));
            for i in 0..pa.len().max(pb.len()) {
                let v = self.join(pa.get(i).cloned(), pb.get(i).cloned(), la, lb, &mut phis)?;
                pending.push(v.ok_or_else(|| self.m.err_plain("merge phi without a value"))?);
            }
            let mut escapes: Vec<(u32, Val)> = vec![];
            for (id, v) in a.escapes.iter().filter(|_| la) {
                let j = self.join(Some(v.clone()), None, true, false, &mut phis)?;
                escapes.extend(j.map(|j| (*id, j)));
            }
            for (id, v) in b.escapes.iter().filter(|_| lb) {
                let j = self.join(None, Some(v.clone()), false, true, &mut phis)?;
                escapes.extend(j.map(|j| (*id, j)));
            }
            self.e.push_stmt(Stmt::If {
                cond,
                then_body: a.body,
                else_body: b.body,
                phis,
                loc: None,
            });
            for (id, v) in escapes {
                self.bind(id, v);
            }
            return Ok(Flow::Reached(pending));
        }
        self.e.push_stmt(Stmt::If {
            cond,
            then_body: a.body,
            else_body: b.body,
            phis,
            loc: None,
        });
        Ok(Flow::Diverged)
    }

    /// Like `join`, but a path that left the value as it was before the `if` (`pre`)
    /// needs no phi when the other path does not reach the merge.
    fn join_pre(
        &mut self,
        a: Option<Val>,
        b: Option<Val>,
        la: bool,
        lb: bool,
        pre: Option<Val>,
        phis: &mut Vec<Phi>,
    ) -> Result<Option<Val>, Error> {
        let live = match (la, lb) {
            (true, false) => &a,
            (false, true) => &b,
            _ => return self.join(a, b, la, lb, phis),
        };
        if live.is_some() && *live == pre {
            return Ok(pre);
        }
        self.join(a, b, la, lb, phis)
    }

    /// The value after an `if` of something that was `a` on the then-path and `b` on
    /// the else-path; paths that did not reach the merge contribute undef.
    fn join(
        &mut self,
        a: Option<Val>,
        b: Option<Val>,
        la: bool,
        lb: bool,
        phis: &mut Vec<Phi>,
    ) -> Result<Option<Val>, Error> {
        let shape = match (&a, &b) {
            (Some(x), _) | (None, Some(x)) => x.clone(),
            _ => return Ok(None),
        };
        let (Some(sl), true) = (shape.leaves(), true) else {
            // Pointers and handles: only one path may carry them, unchanged.
            return match (la, lb, a, b) {
                (true, false, Some(x), _) | (false, true, _, Some(x)) => Ok(Some(x)),
                (_, _, Some(x), Some(y)) if x == y => Ok(Some(x)),
                _ => Err(self.m.err_plain(
                    "a pointer or texture handle differs between the branches of an if",
                )),
            };
        };
        let get = |v: &Option<Val>| v.as_ref().and_then(Val::leaves);
        let (al, bl) = (get(&a), get(&b));
        let mut out = vec![];
        for (i, s) in sl.iter().enumerate() {
            let bits = self.e.bits(*s);
            let x = if la {
                al.as_ref().and_then(|l| l.get(i).copied())
            } else {
                None
            };
            let y = if lb {
                bl.as_ref().and_then(|l| l.get(i).copied())
            } else {
                None
            };
            let v = match (x, y) {
                (Some(x), Some(y)) if x == y => x,
                _ => {
                    let tv = match x {
                        Some(x) => x,
                        None => self.e.undef(bits),
                    };
                    let ev = match y {
                        Some(y) => y,
                        None => self.e.undef(bits),
                    };
                    let dst = self.e.phi_value(bits);
                    phis.push(Phi {
                        dst,
                        then_val: tv,
                        else_val: ev,
                    });
                    dst
                }
            };
            out.push(v);
        }
        Ok(shape.rebuild(&mut out.into_iter()))
    }

    /// Translates a loop whose header is `h`; returns whether code after it is reachable.
    fn run_loop(
        &mut self,
        h: u32,
        pred: Option<u32>,
        merge: u32,
        cont: u32,
    ) -> Result<bool, Error> {
        let blocks = self.fctx()?.loop_blocks(h, merge);
        let header_phis: Vec<u32> = self
            .phis_of(h)?
            .iter()
            .filter_map(|p| p.result_id)
            .collect();
        let inits = self.phi_incoming(h, pred)?;
        let shape = LoopShape {
            header: h,
            merge,
            cont,
            blocks,
            header_phis,
            inits,
        };
        self.loop_construct(shape, |s| s.loop_body(h))
    }

    /// An IR loop for a construct whose exits to `shape.merge` are breaks; `body`
    /// translates its inside. Returns whether code after it is reachable.
    fn loop_construct(
        &mut self,
        shape: LoopShape,
        body: impl FnOnce(&mut Self) -> Result<(), Error>,
    ) -> Result<bool, Error> {
        let LoopShape {
            header: h,
            merge,
            cont,
            blocks,
            header_phis,
            inits: inits_h,
        } = shape;
        let merge_phis: Vec<u32> = self
            .phis_of(merge)?
            .iter()
            .filter_map(|p| p.result_id)
            .collect();
        let vars = self.modified_vars(&blocks)?;
        let escapes = self.escaping(&blocks, &header_phis)?;

        let mut inits: Vec<Val> = inits_h;
        for v in &vars {
            inits.push(
                self.env
                    .get(v)
                    .cloned()
                    .ok_or_else(|| self.m.err_plain("carried variable vanished"))?,
            );
        }
        for id in escapes.iter().chain(&merge_phis) {
            let ty = self.def_type(*id)?;
            inits.push(self.filled(ty, false)?);
        }
        let mut phis = vec![];
        let mut dsts = vec![];
        for init in &inits {
            let leaves = init.leaves().ok_or_else(|| {
                self.m
                    .err_plain(format!("loop %{h} carries a pointer or texture handle"))
            })?;
            let mut new = vec![];
            for l in leaves {
                let dst = self.e.phi_value(self.e.bits(l));
                phis.push(LoopPhi { dst, init: l });
                new.push(dst);
            }
            dsts.push(
                init.rebuild(&mut new.into_iter())
                    .ok_or_else(|| self.m.err_plain("loop state shape"))?,
            );
        }
        let f = self.e.konst(BitSize::B1, 0);
        let brk = self.e.phi_value(BitSize::B1);
        phis.push(LoopPhi { dst: brk, init: f });

        let env0 = self.env.clone();
        let mark = self.mark();
        let ids: Vec<u32> = header_phis
            .iter()
            .chain(&vars)
            .chain(&escapes)
            .chain(&merge_phis)
            .copied()
            .collect();
        self.bind_state(&header_phis, &vars, &escapes, &dsts);
        self.loops.push(LoopCtx {
            header: h,
            merge,
            cont,
            in_cont: cont == h,
            phi_ids: ids,
            vars: vars.clone(),
            escapes: escapes.clone(),
            merge_phis: merge_phis.clone(),
            dsts: dsts.clone(),
            trick: false,
            any_exit: false,
        });
        self.e.open();
        self.depth += 1;
        let flow = body(self);
        self.depth -= 1;
        let mut body = self.e.close();
        let l = self
            .loops
            .pop()
            .ok_or_else(|| self.m.err_plain("loop stack"))?;
        flow?;
        self.revert(mark);
        self.env = env0;
        if l.trick {
            let leave = Stmt::If {
                cond: brk,
                then_body: vec![Stmt::Break { loc: None }],
                else_body: vec![],
                phis: vec![],
                loc: None,
            };
            body.insert(0, leave);
        } else {
            phis.pop();
            strip_last_continue_arg(&mut body);
        }
        self.e.push_stmt(Stmt::Loop {
            phis,
            body,
            loc: None,
        });
        self.bind_state(&header_phis, &vars, &escapes, &dsts);
        let n = header_phis.len() + vars.len() + escapes.len();
        for (id, v) in merge_phis.iter().zip(dsts.iter().skip(n)) {
            self.bind(*id, v.clone());
        }
        let _ = &l.phi_ids;
        Ok(l.any_exit)
    }

    fn bind_state(&mut self, header_phis: &[u32], vars: &[u32], escapes: &[u32], dsts: &[Val]) {
        let mut it = dsts.iter();
        for id in header_phis {
            if let Some(v) = it.next() {
                self.bind(*id, v.clone());
            }
        }
        for var in vars {
            if let Some(v) = it.next() {
                self.env.insert(*var, v.clone());
            }
        }
        for id in escapes {
            if let Some(v) = it.next() {
                self.bind(*id, v.clone());
            }
        }
    }

    /// The header's own instructions and everything after them, inside the loop.
    fn loop_body(&mut self, h: u32) -> Result<(), Error> {
        self.visit(h);
        self.body(h)?;
        let blk = self.block(h)?;
        let term = blk
            .instructions
            .last()
            .ok_or_else(|| self.m.err_plain("empty loop header"))?;
        let flow = match term.class.opcode {
            Op::Branch => self.run(self.id(term, 0)?, Some(h), None)?,
            Op::BranchConditional => {
                let c = self.scalar(self.id(term, 0)?)?;
                let (t, f) = (self.id(term, 1)?, self.id(term, 2)?);
                self.two_way(c, [(t, Some(h), None), (f, Some(h), None)])?
            }
            _ => return Err(self.err(term, "unsupported loop header terminator")),
        };
        match flow {
            Flow::Diverged => Ok(()),
            _ => Err(self.m.err_plain(format!(
                "loop %{h} has a path that neither breaks nor continues"
            ))),
        }
    }

    /// The current loop state, with header phis and merge phis given.
    fn state_leaves(
        &mut self,
        head: Vec<Val>,
        merge: Option<Vec<Val>>,
    ) -> Result<Vec<Value>, Error> {
        let l = self
            .loops
            .last()
            .ok_or_else(|| self.m.err_plain("no loop"))?;
        let (vars, escapes, n) = (l.vars.clone(), l.escapes.clone(), l.dsts.len());
        let mut state = head;
        for v in &vars {
            state.push(
                self.env
                    .get(v)
                    .cloned()
                    .ok_or_else(|| self.m.err_plain("carried variable vanished"))?,
            );
        }
        for id in &escapes {
            state.push(self.val(*id)?);
        }
        match merge {
            Some(m) => state.extend(m),
            None => {
                let keep: Vec<Val> = self
                    .loops
                    .last()
                    .map(|l| l.dsts[state.len().min(n)..].to_vec())
                    .unwrap_or_default();
                state.extend(keep);
            }
        }
        let mut out = vec![];
        for s in state {
            out.extend(
                s.leaves()
                    .ok_or_else(|| self.m.err_plain("loop state holds a pointer"))?,
            );
        }
        Ok(out)
    }

    fn break_site(&mut self, pred: Option<u32>) -> Result<(), Error> {
        let (merge, nh, dsts) = match self.loops.last() {
            Some(l) => (
                l.merge,
                l.phi_ids.len() - l.vars.len() - l.escapes.len() - l.merge_phis.len(),
                l.dsts.clone(),
            ),
            None => return Err(self.m.err_plain("break outside a loop")),
        };
        let head: Vec<Val> = dsts.iter().take(nh).cloned().collect();
        let mvals = self.phi_incoming(merge, pred)?;
        let args = self.state_leaves(head, Some(mvals))?;
        let mut same = true;
        let flat: Vec<Value> = dsts.iter().filter_map(Val::leaves).flatten().collect();
        if flat != args {
            same = false;
        }
        if let Some(l) = self.loops.last_mut() {
            l.any_exit = true;
            if same {
                self.e.push_stmt(Stmt::Break { loc: None });
            } else {
                l.trick = true;
                let t = self.e.konst(BitSize::B1, 1);
                let mut args = args;
                args.push(t);
                self.e.push_stmt(Stmt::Continue { args, loc: None });
            }
        }
        Ok(())
    }

    fn back_edge(&mut self, pred: Option<u32>) -> Result<(), Error> {
        let header = self
            .loops
            .last()
            .map(|l| l.header)
            .ok_or_else(|| self.m.err_plain("continue outside a loop"))?;
        let head = self.phi_incoming(header, pred)?;
        let mut args = self.state_leaves(head, None)?;
        args.push(self.e.konst(BitSize::B1, 0));
        self.e.push_stmt(Stmt::Continue { args, loc: None });
        Ok(())
    }

    fn def_type(&self, id: u32) -> Result<u32, Error> {
        self.fctx()?
            .defs
            .get(&id)
            .and_then(|(_, t)| *t)
            .ok_or_else(|| self.m.err_plain(format!("%{id} has no result type")))
    }

    /// Ids defined in the loop and used outside it (other than header phis).
    fn escaping(&self, blocks: &FxHashSet<u32>, header_phis: &[u32]) -> Result<Vec<u32>, Error> {
        let ctx = self.fctx()?;
        let mut out: Vec<u32> = ctx
            .defs
            .iter()
            .filter(|(id, (b, _))| blocks.contains(b) && !header_phis.contains(id))
            .filter(|(id, _)| {
                ctx.uses
                    .get(id)
                    .is_some_and(|u| u.iter().any(|b| !blocks.contains(b)))
            })
            .map(|(id, _)| *id)
            .collect();
        out.sort_unstable();
        Ok(out)
    }

    /// Variables (locals, privates, output shadows) the loop may store to.
    fn modified_vars(&self, blocks: &FxHashSet<u32>) -> Result<Vec<u32>, Error> {
        let ctx = self.fctx()?;
        let mut sorted: Vec<u32> = blocks.iter().copied().collect();
        sorted.sort_unstable();
        let mut out = std::collections::BTreeSet::new();
        for b in sorted {
            let Some(blk) = ctx.blocks.get(&b) else {
                continue;
            };
            for inst in &blk.instructions {
                match inst.class.opcode {
                    Op::Store | Op::CopyMemory => {
                        if let Some(r) = id_at(inst, 0).and_then(|p| self.root_of(p, 0)) {
                            out.insert(r);
                        }
                    }
                    Op::FunctionCall => out.extend(self.env.keys().copied()),
                    _ => {}
                }
            }
        }
        Ok(out
            .into_iter()
            .filter(|v| self.env.contains_key(v))
            .collect())
    }

    /// The variable a pointer id points into, when it can be told before translation.
    fn root_of(&self, p: u32, depth: u32) -> Option<u32> {
        if self.env.contains_key(&p) || depth > 64 {
            return Some(p);
        }
        if let Some(Val::Ptr(ptr)) = self.ids.get(&p) {
            return Some(ptr.root);
        }
        let ctx = self.fns.last()?;
        let (b, _) = ctx.defs.get(&p)?;
        let inst = ctx
            .blocks
            .get(b)?
            .instructions
            .iter()
            .find(|i| i.result_id == Some(p))?;
        match inst.class.opcode {
            Op::AccessChain | Op::InBoundsAccessChain | Op::CopyObject => {
                self.root_of(id_at(inst, 0)?, depth + 1)
            }
            Op::Variable => Some(p),
            _ => None,
        }
    }

    /// A scalar ALU op, with an error if its operands are ill-sized.
    pub fn alu(&mut self, op: AluOp, srcs: &[Value]) -> Result<Value, Error> {
        let exact = self.exact;
        self.e.alu(op, exact, srcs).map_err(|m| self.m.err_plain(m))
    }
}

/// What `switch` did: an if-chain's flow, or a loop (and whether its merge is
/// reachable; the merge's phis are then bound).
enum Switched {
    Flow(Flow),
    Looped(bool),
}

/// A block id no function has (ids are below the module's bound, itself below 2^32-1
/// in any module rspirv loads): the continue target of a switch loop.
const NO_BLOCK: u32 = u32::MAX;

/// The parts of a loop construct `loop_construct` needs.
struct LoopShape {
    header: u32,
    merge: u32,
    cont: u32,
    /// Blocks inside the construct.
    blocks: FxHashSet<u32>,
    /// `OpPhi` results of the header and their values on entry.
    header_phis: Vec<u32>,
    inits: Vec<Val>,
}

struct Side {
    flow: Flow,
    env: std::collections::BTreeMap<u32, Val>,
    body: crate::ir::Block,
    escapes: Vec<(u32, Val)>,
}

fn flow_vals(f: &Flow) -> Vec<Val> {
    match f {
        Flow::Reached(v) => v.clone(),
        _ => vec![],
    }
}

/// Drops the break flag from this loop's `continue`s (not those of nested loops).
fn strip_last_continue_arg(block: &mut crate::ir::Block) {
    for s in block {
        match s {
            Stmt::Continue { args, .. } => {
                args.pop();
            }
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                strip_last_continue_arg(then_body);
                strip_last_continue_arg(else_body);
            }
            _ => {}
        }
    }
}
