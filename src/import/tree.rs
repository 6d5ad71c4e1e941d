//! Addressed trees: every scalar leaf of a variable (I/O, uniform, UBO, SSBO) with
//! where it lives. An access chain walks the tree; a dynamic index over a strided
//! array becomes a dynamic slot or byte offset, other dynamic indices are resolved
//! on loaded values.

use crate::ir::{BitSize, InterpMode, IoSlot, SystemValue, Value};

use super::val::Idx;

/// Where one scalar lives.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Addr {
    /// A varying, attribute or fragment-output component.
    Io {
        slot: IoSlot,
        /// `None` for flat/non-FS reads; the interpolation for FS interpolated inputs.
        interp: Option<InterpMode>,
        /// Per patch (TES patch inputs, TCS patch outputs).
        patch: bool,
        /// Transform feedback (buffer, byte offset).
        xfb: Option<(u8, u16)>,
    },
    Sys(SystemValue),
    /// Component `comp` of a built-in input varysat carries as an opaque load.
    Builtin {
        builtin: u32,
        ty: crate::ir::OpaqueTy,
        comp: u8,
    },
    /// Byte offset in a uniform buffer.
    Ubo {
        block: u32,
        offset: u32,
    },
    /// Byte offset in a storage buffer.
    Ssbo {
        buffer: u32,
        offset: u32,
    },
    /// Word of the default uniform block.
    Word(u32),
}

/// One scalar leaf.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Leaf {
    pub addr: Addr,
    pub bits: BitSize,
    /// Dynamic part of the address: slots (with the array length) for I/O, bytes for
    /// buffers.
    pub dynamic: Option<(Value, u32)>,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tree {
    Leaf(Leaf),
    /// Children; `stride` (slots or bytes) when child `k` is child 0 moved by `k*stride`.
    Node {
        kids: Vec<Tree>,
        stride: Option<u32>,
        /// A runtime array: its one kid is element 0, element `k` is it shifted by
        /// `k * stride` bytes.
        runtime: bool,
    },
}

/// The result of walking a path: the subtree reached, and the indices that must
/// be applied to the loaded value instead.
pub(crate) struct Walk {
    pub tree: Tree,
    pub rest: Vec<Idx>,
}

/// A callback that multiplies a dynamic index by a stride and adds it to an existing
/// dynamic offset (emits IR).
pub(crate) trait Scale {
    fn scale(&mut self, idx: Value, stride: u32, prev: Option<Value>) -> Result<Value, String>;
}

/// Moves a buffer leaf `by` bytes further.
fn shift_leaf(l: &mut Leaf, by: u32) -> Result<(), String> {
    match &mut l.addr {
        Addr::Ubo { offset, .. } | Addr::Ssbo { offset, .. } => {
            *offset = offset.checked_add(by).ok_or("buffer offset past 2^32")?;
            Ok(())
        }
        _ => Err("a runtime array outside a buffer".into()),
    }
}

impl Tree {
    pub fn leaves(&self) -> Vec<&Leaf> {
        match self {
            Tree::Leaf(l) => vec![l],
            Tree::Node { kids, .. } => kids.iter().flat_map(Tree::leaves).collect(),
        }
    }

    /// Forgets every array stride, so a walk leaves dynamic indices to be applied
    /// to the loaded values (or to guarded stores) instead of addressing offsets.
    pub fn drop_strides(&mut self) {
        if let Tree::Node { kids, stride, .. } = self {
            *stride = None;
            kids.iter_mut().for_each(Tree::drop_strides);
        }
    }

    /// Applies `f` to every leaf, in order, until it fails.
    pub fn map_leaves(
        &mut self,
        f: &mut dyn FnMut(&mut Leaf) -> Result<(), String>,
    ) -> Result<(), String> {
        match self {
            Tree::Leaf(l) => f(l),
            Tree::Node { kids, .. } => kids.iter_mut().try_for_each(|k| k.map_leaves(f)),
        }
    }

    /// Walks `path`; `io` says offsets are slots (an I/O variable) rather than bytes.
    pub fn walk(self, path: &[Idx], io: bool, s: &mut dyn Scale) -> Result<Walk, String> {
        let mut tree = self;
        for (i, idx) in path.iter().enumerate() {
            let strided = match (&tree, idx) {
                (Tree::Leaf(_), _) => return Err("access chain indexes into a scalar".into()),
                (Tree::Node { stride, .. }, Idx::Dyn(_)) => stride.is_some(),
                _ => true,
            };
            if !strided {
                return Ok(Walk {
                    tree,
                    rest: path[i..].to_vec(),
                });
            }
            let Tree::Node {
                kids,
                stride,
                runtime,
            } = tree
            else {
                return Err("access chain indexes into a scalar".into());
            };
            let n = kids.len() as u32;
            match idx {
                Idx::Const(k) if runtime => {
                    let mut first = kids.into_iter().next().ok_or("empty runtime array")?;
                    let by = k
                        .checked_mul(stride.unwrap_or(0))
                        .ok_or("runtime array index out of range")?;
                    first.map_leaves(&mut |l| shift_leaf(l, by))?;
                    tree = first;
                }
                Idx::Const(k) => {
                    tree = kids
                        .into_iter()
                        .nth(*k as usize)
                        .ok_or_else(|| format!("constant index {k} is out of bounds"))?;
                }
                Idx::Dyn(v) => {
                    let st = stride.unwrap_or(0);
                    let mut first = kids
                        .into_iter()
                        .next()
                        .ok_or("dynamic index into an empty array")?;
                    // Leaves share their dynamic offset; compute each distinct one once.
                    let mut memo: Vec<(Option<Value>, Value)> = vec![];
                    first.map_leaves(&mut |l| {
                        let prev = l.dynamic.map(|(p, _)| p);
                        let off = match memo.iter().find(|(p, _)| *p == prev) {
                            Some((_, o)) => *o,
                            None => {
                                let o = s.scale(*v, st, prev)?;
                                memo.push((prev, o));
                                o
                            }
                        };
                        // Checked: a huge `ArrayStride` on a long buffer array
                        // overflowed here (`import_spirv` fuzz target); byte offsets
                        // past 2^32 are errors everywhere else too.
                        let extent = n.checked_mul(st).ok_or_else(|| {
                            format!("an array of {n} elements of stride {st} reaches past 2^32")
                        })?;
                        // A second dynamic index into an I/O array (`v[i][j]`) adds
                        // to the slot offset of the first; the slots reachable are
                        // still those of the outer array, which the leaf (element
                        // 0 of both) starts.
                        let extent = match l.dynamic {
                            Some((_, outer)) if io => outer,
                            _ => extent,
                        };
                        l.dynamic = Some((off, extent));
                        Ok(())
                    })?;
                    tree = first;
                }
            }
        }
        Ok(Walk { tree, rest: vec![] })
    }
}
