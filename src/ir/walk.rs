//! Walking nested statements in program order without recursion.
//!
//! Shaders nest `if`s and loops as deep as their source does, so a walk that recursed
//! once per level would let the input choose the stack depth. [`Walk`] keeps an explicit
//! stack of the blocks it is inside instead and reports, for each statement, when it is
//! entered and (for `if`s and loops) when its nested blocks are done. Every pass that
//! only needs to *see* the statements in order (printing, counting, collecting
//! definitions, stripping locations) goes through this module; execution and lowering,
//! which decide which block runs next, keep their own explicit stacks.

use super::shader::{Block, Inst, Stmt, Value, Values};
use super::InstKind;

/// One step of a walk.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Visit<'a> {
    /// A statement, before any block nested in it is walked.
    Enter(&'a Stmt),
    /// An `if` whose then-branch is done and whose else-branch comes next.
    Else(&'a Stmt),
    /// An `if` or a loop whose nested blocks are done (an `if`'s phis are defined here).
    Leave(&'a Stmt),
}

/// Which nested block of a compound statement a frame walks.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Part {
    Then,
    Else,
    Body,
}

/// A pre-order walk over a block and everything nested in it; see [`Visit`].
///
/// ```
/// use varysat::ir::{walk, Visit};
/// let src = "(pair (producer vs (%a = load_input ATTR0.x) (%z = const 32 0.0)
///   (%c = flt %z %a) (if %c (then (store_output VAR0.x %a)) (else)))
///   (consumer fs (%v = load_interpolated_input VAR0.x persp center)
///   (store_output DATA0.x %v)))";
/// let pipeline = varysat::text::parse(src, None).unwrap();
/// let vs = &pipeline.producer.body;
/// let mut depths = vec![];
/// let mut it = walk(vs);
/// while let Some(visit) = it.next() {
///     if let Visit::Enter(_) = visit {
///         depths.push(it.depth());
///     }
/// }
/// assert_eq!(depths, [0, 0, 0, 0, 1]);
/// ```
pub struct Walk<'a> {
    /// The blocks being walked, innermost last.
    frames: Vec<Frame<'a>>,
    /// The depth of the statement of the last visit.
    depth: usize,
}

/// A block being walked: the statements left, and the statement owning the block with
/// the part of it the block is (none at top level).
type Frame<'a> = (std::slice::Iter<'a, Stmt>, Option<(&'a Stmt, Part)>);

/// Walks `block` and every block nested in it, in program order.
pub fn walk(block: &[Stmt]) -> Walk<'_> {
    Walk {
        frames: vec![(block.iter(), None)],
        depth: 0,
    }
}

impl<'a> Walk<'a> {
    /// How many `if`s and loops enclose the statement of the last visit (0 at top
    /// level).
    pub fn depth(&self) -> usize {
        self.depth
    }

    fn open(&mut self, block: &'a Block, owner: &'a Stmt, part: Part) {
        self.frames.push((block.iter(), Some((owner, part))));
    }
}

impl<'a> Iterator for Walk<'a> {
    type Item = Visit<'a>;

    fn next(&mut self) -> Option<Visit<'a>> {
        self.depth = self.frames.len().checked_sub(1)?;
        let (stmts, owner) = self.frames.last_mut()?;
        if let Some(stmt) = stmts.next() {
            match stmt {
                Stmt::If { then_body, .. } => self.open(then_body, stmt, Part::Then),
                Stmt::Loop { body, .. } => self.open(body, stmt, Part::Body),
                Stmt::Inst(_) | Stmt::Break { .. } | Stmt::Continue { .. } => {}
            }
            return Some(Visit::Enter(stmt));
        }
        let owner = *owner;
        self.frames.pop();
        self.depth = self.frames.len().saturating_sub(1);
        match owner? {
            (stmt @ Stmt::If { else_body, .. }, Part::Then) => {
                self.open(else_body, stmt, Part::Else);
                Some(Visit::Else(stmt))
            }
            (stmt, _) => Some(Visit::Leave(stmt)),
        }
    }
}

/// The deepest nesting of `if`s and loops a shader may be optimized or run with.
/// Execution, lowering and emission follow the nesting with one stack frame per
/// level, so `optimize` and the interpreter refuse deeper shaders before anything
/// recurses ([`too_deep`]); validation and printing walk without recursion and accept
/// any depth. The `.pair` reader's list-depth
/// limit (also 128) keeps every text input well below it; pairs built in code or
/// imported from SPIR-V are checked.
pub const MAX_NESTING: usize = 128;

/// The first `if` or loop of `block` that sits inside [`MAX_NESTING`] others, found
/// without recursion.
pub fn too_deep(block: &[Stmt]) -> Option<&Stmt> {
    let mut it = walk(block);
    while let Some(visit) = it.next() {
        if let Visit::Enter(s @ (Stmt::If { .. } | Stmt::Loop { .. })) = visit {
            if it.depth() >= MAX_NESTING {
                return Some(s);
            }
        }
    }
    None
}

/// Every instruction in `block` and its nested blocks, in program order.
pub fn insts(block: &[Stmt]) -> impl Iterator<Item = &Inst> {
    walk(block).filter_map(|visit| match visit {
        Visit::Enter(Stmt::Inst(inst)) => Some(inst),
        _ => None,
    })
}

/// Calls `f` on every statement of `block` and its nested blocks, in program order,
/// each before the blocks nested in it.
pub fn for_each_stmt_mut(block: &mut [Stmt], mut f: impl FnMut(&mut Stmt)) {
    let mut stack = vec![block.iter_mut()];
    while let Some(top) = stack.last_mut() {
        let Some(stmt) = top.next() else {
            stack.pop();
            continue;
        };
        f(stmt);
        match stmt {
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                // Pushed in reverse so the then-branch is visited first.
                stack.push(else_body.iter_mut());
                stack.push(then_body.iter_mut());
            }
            Stmt::Loop { body, .. } => stack.push(body.iter_mut()),
            Stmt::Inst(_) | Stmt::Break { .. } | Stmt::Continue { .. } => {}
        }
    }
}

/// Calls `f` on every instruction of `block` and its nested blocks, in program order.
pub fn for_each_inst_mut(block: &mut [Stmt], mut f: impl FnMut(&mut Inst)) {
    for_each_stmt_mut(block, |stmt| {
        if let Stmt::Inst(inst) = stmt {
            f(inst)
        }
    });
}

/// Calls `f` on `block` and on every block nested in it, each before the blocks nested
/// in its statements (which `f` may have removed). The order between sibling blocks is
/// unspecified: use it for edits that look at one block at a time, such as filtering.
pub fn for_each_block_mut(block: &mut Block, mut f: impl FnMut(&mut Block)) {
    let mut stack = vec![block];
    while let Some(block) = stack.pop() {
        f(block);
        for stmt in block.iter_mut() {
            match stmt {
                Stmt::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    stack.push(else_body);
                    stack.push(then_body);
                }
                Stmt::Loop { body, .. } => stack.push(body),
                Stmt::Inst(_) | Stmt::Break { .. } | Stmt::Continue { .. } => {}
            }
        }
    }
}

impl Stmt {
    /// The values the statement itself reads, not those of its nested blocks: an
    /// instruction's operands, an `if`'s condition and merge-phi inputs, a loop's phi
    /// initial values, a `continue`'s arguments.
    pub fn own_uses(&self) -> Values {
        match self {
            Stmt::Inst(i) => i.kind.operands(),
            Stmt::If { cond, phis, .. } => std::iter::once(*cond)
                .chain(phis.iter().flat_map(|p| [p.then_val, p.else_val]))
                .collect(),
            Stmt::Loop { phis, .. } => phis.iter().map(|p| p.init).collect(),
            Stmt::Continue { args, .. } => Values::from_slice(args),
            Stmt::Break { .. } => Values::new(),
        }
    }

    /// An instruction with a result, as its result and operation (`None` for control
    /// flow, jumps and instructions without a result).
    pub fn as_def(&self) -> Option<(Value, &InstKind)> {
        match self {
            Stmt::Inst(Inst {
                result: Some(r),
                kind,
                ..
            }) => Some((*r, kind)),
            _ => None,
        }
    }

    /// The values the statement itself defines: an instruction's result, an `if`'s or a
    /// loop's phis.
    pub fn own_defs(&self) -> Values {
        match self {
            Stmt::Inst(i) => i.result.into_iter().collect(),
            Stmt::If { phis, .. } => phis.iter().map(|p| p.dst).collect(),
            Stmt::Loop { phis, .. } => phis.iter().map(|p| p.dst).collect(),
            Stmt::Break { .. } | Stmt::Continue { .. } => Values::new(),
        }
    }

    /// Calls `f` on every value the statement itself names (definitions and uses, not
    /// those of its nested blocks), in place.
    pub fn map_own_values(&mut self, f: &mut dyn FnMut(&mut Value)) {
        match self {
            Stmt::Inst(i) => {
                if let Some(r) = &mut i.result {
                    f(r);
                }
                i.kind.operands_mut().into_iter().for_each(f);
            }
            Stmt::If { cond, phis, .. } => {
                f(cond);
                for p in phis {
                    f(&mut p.dst);
                    f(&mut p.then_val);
                    f(&mut p.else_val);
                }
            }
            Stmt::Loop { phis, .. } => {
                for p in phis {
                    f(&mut p.dst);
                    f(&mut p.init);
                }
            }
            Stmt::Continue { args, .. } => args.iter_mut().for_each(f),
            Stmt::Break { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{InstKind, Value};

    fn inst(n: u32) -> Stmt {
        Stmt::Inst(Inst {
            result: Some(Value(n)),
            kind: InstKind::Barrier,
            loc: None,
        })
    }

    fn iff(then_body: Block, else_body: Block) -> Stmt {
        Stmt::If {
            cond: Value(0),
            then_body,
            else_body,
            phis: vec![],
            loc: None,
        }
    }

    fn looped(body: Block) -> Stmt {
        Stmt::Loop {
            phis: vec![],
            body,
            loc: None,
        }
    }

    /// A trace of the walk: `iN` for instructions, `if`/`else`/`end` and
    /// `loop`/`end`, each with its depth.
    fn trace(block: &Block) -> Vec<String> {
        let mut it = walk(block);
        let mut out = vec![];
        while let Some(visit) = it.next() {
            let word = match visit {
                Visit::Enter(Stmt::Inst(i)) => format!("i{}", i.result.unwrap().0),
                Visit::Enter(Stmt::If { .. }) => "if".into(),
                Visit::Enter(Stmt::Loop { .. }) => "loop".into(),
                Visit::Enter(_) => "jump".into(),
                Visit::Else(_) => "else".into(),
                Visit::Leave(_) => "end".into(),
            };
            out.push(format!("{word}@{}", it.depth()));
        }
        out
    }

    #[test]
    fn events_come_in_program_order_with_their_depth() {
        let block = vec![
            inst(1),
            iff(vec![inst(2), looped(vec![inst(3)])], vec![inst(4)]),
            inst(5),
        ];
        assert_eq!(
            trace(&block),
            [
                "i1@0", "if@0", "i2@1", "loop@1", "i3@2", "end@1", "else@0", "i4@1", "end@0",
                "i5@0"
            ]
        );
        let order: Vec<u32> = insts(&block).map(|i| i.result.unwrap().0).collect();
        assert_eq!(order, [1, 2, 3, 4, 5]);
    }

    #[test]
    fn empty_branches_still_report_else_and_leave() {
        assert_eq!(
            trace(&vec![iff(vec![], vec![])]),
            ["if@0", "else@0", "end@0"]
        );
        assert!(trace(&vec![]).is_empty());
    }

    /// Nesting as deep as the input wants must not grow the call stack.
    #[test]
    fn deep_nesting_is_walked_without_recursion() {
        let mut block = vec![inst(7)];
        for _ in 0..100_000 {
            block = vec![iff(block, vec![])];
        }
        assert_eq!(insts(&block).count(), 1);
        let mut seen = 0;
        for_each_inst_mut(&mut block, |i| {
            i.result = Some(Value(8));
            seen += 1;
        });
        assert_eq!(seen, 1);
        assert_eq!(insts(&block).next().unwrap().result, Some(Value(8)));
        // Dropping a deeply nested block recurses in the compiler's drop glue; take it
        // apart level by level instead.
        while let Some(Stmt::If { then_body, .. }) = block.pop() {
            block = then_body;
        }
    }

    #[test]
    fn mutable_walk_visits_statements_in_program_order() {
        let mut block = vec![iff(vec![inst(1)], vec![inst(2)]), looped(vec![inst(3)])];
        let mut order = vec![];
        for_each_stmt_mut(&mut block, |s| {
            order.push(match s {
                Stmt::Inst(i) => i.result.unwrap().0,
                Stmt::If { .. } => 10,
                Stmt::Loop { .. } => 20,
                _ => 0,
            })
        });
        assert_eq!(order, [10, 1, 2, 20, 3]);
    }
}
