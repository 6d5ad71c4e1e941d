//! Evaluating one side of a rule on one case with the reference interpreter's value
//! semantics: ALU ops through `ir::eval_alu` with the equivalence runs' float mode
//! (a `-0` operand of `frcp`/`frsq`/`fdiv`/`fpow` reads as `+0`), undefined values
//! propagating as the interpreter propagates them, `xfer` as the interpreter's
//! rasterizer delivers a varying (the provoking vertex for `flat`, its interpolation
//! formula and barycentrics for the interpolated modes, vertex `k` for `(vertex k)`,
//! the patch for `patch`), and GS `per-emit` spines read at the emit that produced the
//! vertex. A side that reads something its stage does not have evaluates to
//! [`V::Wrong`] with the reason.

use egg::{ENodeOrVar, Pattern};

use super::model::{
    child_indices, Case, ConsumerKind, ModeInst, CONSUMER, ENTRIES, PATCH, VERTICES,
};
use super::values::{value, Draw, Rng};
use crate::egraph::{Side, VNode, XferMode};
use crate::interpreter::{alu_defined, interpolate, offset_barycentrics, Scalar, SAMPLE_OFFSETS};
use crate::ir::{eval_alu, unsign_zero_operands, AluOp, BitSize, InterpLoc, OpClass};

/// A node's value at one entry.
#[derive(Clone, Debug)]
pub(super) enum V {
    /// A value.
    S(Scalar),
    /// A transfer mode.
    Mode(ModeInst),
    /// Something this stage cannot compute; the reason.
    Wrong(String),
}

/// The evaluation of one side on one case.
pub(super) struct Eval<'a> {
    nodes: &'a [ENodeOrVar<VNode>],
    case: &'a Case,
    has_xfer: bool,
    memo: Vec<[Option<V>; ENTRIES]>,
    /// The largest finite magnitude of a float result on the way (the scale of the
    /// rounding error an inexact law may make).
    pub scale: f32,
    /// Whether a float op read or gave an infinity, a NaN or a denormal on the way:
    /// a value outside what NIR's default float mode promises anything about.
    pub outside_mode: bool,
}

impl<'a> Eval<'a> {
    pub(super) fn new(p: &'a Pattern<VNode>, case: &'a Case, has_xfer: bool) -> Eval<'a> {
        let nodes = p.ast.as_ref();
        Eval {
            nodes,
            case,
            has_xfer,
            memo: vec![Default::default(); nodes.len()],
            scale: 0.0,
            outside_mode: false,
        }
    }

    /// The side's value in the consumer (or, without `xfer`, in whichever stage).
    pub(super) fn root(&mut self) -> V {
        self.at(self.nodes.len() - 1, CONSUMER)
    }

    /// Node `i` at `entry`. Recursion is bounded by the pattern's depth, which the
    /// rule reader limits.
    fn at(&mut self, i: usize, entry: usize) -> V {
        if let Some(v) = &self.memo[i][entry] {
            return v.clone();
        }
        let v = match &self.nodes[i] {
            ENodeOrVar::Var(var) => match self.case.modes.get(var) {
                Some(m) => V::Mode(m.clone()),
                None => match self.case.vars.get(var) {
                    Some(vals) => V::S(vals[entry]),
                    None => V::Wrong(format!("{var} has no value")),
                },
            },
            ENodeOrVar::ENode(n) => self.node(n, entry),
        };
        self.memo[i][entry] = Some(v.clone());
        v
    }

    fn scalar(&mut self, i: usize, entry: usize) -> Result<Scalar, String> {
        match self.at(i, entry) {
            V::S(s) => Ok(s),
            V::Mode(m) => Err(format!("the mode {m} is used as a value")),
            V::Wrong(w) => Err(w),
        }
    }

    fn node(&mut self, n: &VNode, entry: usize) -> V {
        match self.try_node(n, entry) {
            Ok(v) => v,
            Err(w) => V::Wrong(w),
        }
    }

    fn try_node(&mut self, n: &VNode, entry: usize) -> Result<V, String> {
        let kids = child_indices(n);
        let in_consumer = self.has_xfer && entry == CONSUMER;
        let in_producer = self.has_xfer && entry != CONSUMER;
        Ok(V::S(match n {
            VNode::Const { bits, value } => Scalar::new(*value, *bits),
            VNode::Undef(b) => Scalar::undef(*b),
            VNode::Alu { op, children, .. } => {
                let vals = children
                    .iter()
                    .map(|c| self.scalar(usize::from(*c), entry))
                    .collect::<Result<Vec<_>, _>>()?;
                self.alu(*op, &vals)?
            }
            VNode::Op { op, .. } => return Err(format!("cannot evaluate `{}`", op.name)),
            VNode::Uniform(..) => self.leaf(n, 0)?,
            VNode::Ubo { block, half, .. } => {
                let offset = self.scalar(kids[0], entry)?;
                let size = crate::ir::half_bits(*half);
                if !offset.defined {
                    Scalar::undef(size)
                } else {
                    let name = format!("ubo:{block}:{}:{half:?}", offset.bits);
                    self.leaf_value(&name, size, 0)
                }
            }
            VNode::VertexInput { .. } | VNode::Input(_) | VNode::Opaque { .. } if in_consumer => {
                return Err(format!(
                    "`{n}` is read in the consumer, only the producer has it"
                ))
            }
            VNode::SysVal(Side::Producer, _) if in_consumer => {
                return Err(format!(
                    "`{n}` is read in the consumer, only the producer has it"
                ))
            }
            VNode::SysVal(Side::Consumer, _) if in_producer => {
                return Err(format!(
                    "`{n}` is read in the producer, only the consumer has it"
                ))
            }
            VNode::VertexInput { .. } => self.leaf(n, 0)?,
            VNode::Input(_) | VNode::Opaque { .. } | VNode::SysVal(..) => self.leaf(n, entry)?,
            VNode::PerEmit(_) if in_consumer => {
                return Err("a GS `per-emit` value is read in the consumer".into())
            }
            VNode::PerEmit(_) => {
                let k = self.scalar(kids[0], entry)?;
                if !k.defined {
                    return Ok(V::S(Scalar::undef(self.scalar(kids[1], entry)?.size)));
                }
                let pick = if k.bits == self.case.world.emit[entry] {
                    kids[1]
                } else {
                    kids[2]
                };
                self.scalar(pick, entry)?
            }
            VNode::Mode(mode, _) => {
                let ops = kids
                    .iter()
                    .map(|c| self.scalar(*c, entry))
                    .collect::<Result<Vec<_>, _>>()?;
                return Ok(V::Mode(ModeInst { mode: *mode, ops }));
            }
            VNode::Xfer(_) if in_producer => return Err("an `xfer` inside an `xfer`".into()),
            VNode::Xfer(_) => self.xfer(kids[0], kids[1], entry)?,
        }))
    }

    /// A leaf's seeded value at `entry` (entry 0 for values alike everywhere).
    fn leaf(&self, n: &VNode, entry: usize) -> Result<Scalar, String> {
        let size = crate::egraph::typecheck::leaf_bits(n)
            .ok_or_else(|| format!("`{n}` has no bit size"))?;
        Ok(self.leaf_value(&n.op_name(), size, entry))
    }

    /// The seeded value of the leaf called `name`: the same on both sides of the rule.
    fn leaf_value(&self, name: &str, size: BitSize, entry: usize) -> Scalar {
        let key = fnv(name.as_bytes()) ^ (entry as u64).wrapping_mul(0x100_0000_01b3);
        let mut rng = Rng::new(self.case.world.leaf_seed ^ key);
        value(&mut rng, size, Draw::Any, self.case.world.plain_only)
    }

    /// The interpreter's ALU semantics, recording the float scale on the way.
    fn alu(&mut self, op: AluOp, vals: &[Scalar]) -> Result<Scalar, String> {
        let sizes: Vec<BitSize> = vals.iter().map(|s| s.size).collect();
        let out = op.result_bits(&sizes)?;
        if op.is_float() {
            vals.iter().for_each(|v| self.note_float(*v));
        }
        let mut bits: Vec<u32> = vals.iter().map(|s| s.bits).collect();
        unsign_zero_operands(op, &mut bits, &sizes);
        let defined = alu_defined(op, vals);
        let result = Scalar::new(eval_alu(op, &bits, &sizes), out).defined_if(defined);
        if result.defined && op.class() == OpClass::Float {
            self.note_float(result);
            // Fused ops round once: the terms they add are the scale of their error.
            let f = |i: usize| vals[i].as_f32();
            let inner = match op {
                AluOp::FFma => (f(0) * f(1)).abs(),
                AluOp::FLrp => (f(0) * (1.0 - f(2))).abs().max((f(1) * f(2)).abs()),
                _ => 0.0,
            };
            if inner.is_finite() {
                self.scale = self.scale.max(inner);
            }
        }
        Ok(result)
    }

    fn note_float(&mut self, s: Scalar) {
        if !s.defined || s.size == BitSize::B1 {
            return;
        }
        let f = s.as_f32();
        if f.is_finite() {
            self.scale = self.scale.max(f.abs());
        }
        if !super::values::plain(s.bits, s.size) {
            self.outside_mode = true;
        }
    }

    /// What the consumer receives through `(xfer MODE p)`.
    fn xfer(&mut self, mode: usize, p: usize, entry: usize) -> Result<Scalar, String> {
        let m = match self.at(mode, entry) {
            V::Mode(m) => m,
            V::S(_) => return Err("a value is used as an xfer mode".into()),
            V::Wrong(w) => return Err(w),
        };
        let world = &self.case.world;
        if !world.kind.has(m.mode) {
            let consumer = match world.kind {
                ConsumerKind::Fragment => "a fragment shader",
                ConsumerKind::PerVertex => "a TCS, TES or GS",
            };
            return Err(format!("{m} is not a mode of {consumer}"));
        }
        let (provoking, kind) = (world.provoking, m.mode);
        match kind {
            XferMode::Flat => self.scalar(p, provoking),
            XferMode::Patch => self.scalar(p, PATCH),
            XferMode::Vertex => {
                let k = m.ops[0];
                if !k.defined || k.bits as usize >= VERTICES {
                    let size = self.scalar(p, 0)?.size;
                    return Ok(Scalar::undef(size));
                }
                self.scalar(p, k.bits as usize)
            }
            XferMode::Interp(im) => {
                let vals = (0..VERTICES)
                    .map(|k| self.scalar(p, k))
                    .collect::<Result<Vec<_>, _>>()?;
                let size = vals[0].size;
                let weights = self.weights(im.loc, &m.ops);
                let (Some(w), true) = (weights, vals.iter().all(|v| v.defined)) else {
                    return Ok(Scalar::undef(size));
                };
                vals.iter().for_each(|v| self.note_float(*v));
                let floats: Vec<f32> = vals.iter().map(|v| v.as_f32()).collect();
                let clip =
                    (im.interp == crate::ir::Interp::Persp).then_some(&self.case.world.clip_w[..]);
                let s = Scalar::float(interpolate(&floats, &w, clip), size);
                self.note_float(s);
                Ok(s)
            }
        }
    }

    /// The barycentrics of an interpolation location, as the rasterizer picks them.
    fn weights(&self, loc: InterpLoc, ops: &[Scalar]) -> Option<Vec<f32>> {
        let w = &self.case.world.weights;
        match (loc, ops) {
            (InterpLoc::Center, _) => Some(w[0].to_vec()),
            (InterpLoc::Centroid, _) => Some(w[1].to_vec()),
            (InterpLoc::Sample, _) => Some(w[2].to_vec()),
            (InterpLoc::AtOffset, [dx, dy]) if dx.defined && dy.defined => {
                Some(offset_barycentrics(&w[0], dx.as_f32(), dy.as_f32()))
            }
            (InterpLoc::AtSample, [i]) if i.defined => {
                let [dx, dy] = SAMPLE_OFFSETS.get(i.bits as usize)?;
                Some(offset_barycentrics(&w[0], *dx, *dy))
            }
            _ => None,
        }
    }
}

/// FNV-1a, 64-bit: a stable hash (the cache keys on it too).
pub(super) fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    })
}
