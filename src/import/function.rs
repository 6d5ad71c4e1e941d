//! What the control-flow translation keeps per function and per loop: the blocks of a
//! function with their uses and successors, how a region of blocks ended, and the
//! state of a loop being translated.

use fxhash::{FxHashMap, FxHashSet};
use rspirv::dr::{Block as SpvBlock, Function, Operand};
use rspirv::spirv::Op;

use super::module::{id_at, Module};
use super::val::Val;
use crate::Error;

/// How a region of blocks ended.
#[derive(Debug)]
pub(crate) enum Flow {
    /// Reached the region's end block; the values its `OpPhi`s take on this path.
    Reached(Vec<Val>),
    /// Left by break, continue, kill or unreachable: nothing falls through.
    Diverged,
    /// Returned from the function at its top level.
    Returned,
}

/// Per-function facts computed before translation.
pub(crate) struct FnCtx<'a> {
    pub blocks: FxHashMap<u32, &'a SpvBlock>,
    pub entry: u32,
    /// Blocks (other than through `OpPhi`) where each id is used.
    pub(crate) uses: FxHashMap<u32, Vec<u32>>,
    /// Block and result type of each id defined in the function.
    pub(crate) defs: FxHashMap<u32, (u32, Option<u32>)>,
    pub(crate) succs: FxHashMap<u32, Vec<u32>>,
    pub ret: Option<Val>,
    pub base_depth: usize,
    /// Blocks on the walk from the function's entry (or the enclosing loop header)
    /// to the block being translated, in the nested `run`s open now; see `run`.
    pub(crate) path: Vec<u32>,
}

impl<'a> FnCtx<'a> {
    pub fn new(m: &Module, f: &'a Function, base_depth: usize) -> Result<FnCtx<'a>, Error> {
        let mut ctx = FnCtx {
            blocks: FxHashMap::default(),
            entry: 0,
            uses: FxHashMap::default(),
            defs: FxHashMap::default(),
            succs: FxHashMap::default(),
            ret: None,
            base_depth,
            path: vec![],
        };
        for (i, b) in f.blocks.iter().enumerate() {
            let id = b
                .label_id()
                .ok_or_else(|| m.err_plain("block without a label"))?;
            if i == 0 {
                ctx.entry = id;
            }
            ctx.blocks.insert(id, b);
            for inst in &b.instructions {
                if let Some(r) = inst.result_id {
                    ctx.defs.insert(r, (id, inst.result_type));
                }
                if inst.class.opcode == Op::Phi {
                    // A phi's value is used at the end of its incoming block: an
                    // `if` side that defines it must hand it out when that block
                    // lies outside the side (a value a loop's back edge carries
                    // from a branch, `%98` of a corpus VS).
                    for pair in inst.operands.chunks(2) {
                        if let [Operand::IdRef(v), Operand::IdRef(pred)] = pair {
                            ctx.uses.entry(*v).or_default().push(*pred);
                        }
                    }
                } else {
                    for op in &inst.operands {
                        if let Operand::IdRef(u) = op {
                            ctx.uses.entry(*u).or_default().push(id);
                        }
                    }
                }
            }
            let succ = match b.instructions.last() {
                Some(t) => match t.class.opcode {
                    Op::Branch | Op::BranchConditional | Op::Switch => (0..t.operands.len())
                        .filter_map(|i| id_at(t, i))
                        .filter(|x| Some(*x) != id_at(t, 0) || t.class.opcode == Op::Branch)
                        .collect(),
                    _ => vec![],
                },
                None => vec![],
            };
            ctx.succs.insert(id, succ);
        }
        if f.blocks.is_empty() {
            return Err(m.err_plain("function without a body"));
        }
        Ok(ctx)
    }

    /// Blocks of the loop at `header`: reachable from it without entering `merge`.
    pub(crate) fn loop_blocks(&self, header: u32, merge: u32) -> FxHashSet<u32> {
        let mut seen = FxHashSet::default();
        let mut stack = vec![header];
        while let Some(b) = stack.pop() {
            if b == merge || !seen.insert(b) {
                continue;
            }
            stack.extend(self.succs.get(&b).into_iter().flatten().copied());
        }
        seen
    }
}

/// One loop being translated.
pub(crate) struct LoopCtx {
    pub(crate) header: u32,
    pub(crate) merge: u32,
    pub(crate) cont: u32,
    pub(crate) in_cont: bool,
    /// Ids of the header's `OpPhi`s, carried variables, escaping ids, merge `OpPhi`s.
    pub(crate) phi_ids: Vec<u32>,
    pub(crate) vars: Vec<u32>,
    pub(crate) escapes: Vec<u32>,
    pub(crate) merge_phis: Vec<u32>,
    /// The IR phi values, structured like the state they carry.
    pub(crate) dsts: Vec<Val>,
    pub(crate) trick: bool,
    pub(crate) any_exit: bool,
}
