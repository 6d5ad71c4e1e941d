//! The e-graph language: one node type for both stages of a pair, with the `xfer`
//! bridge `(xfer MODE p)` for "the value the consumer receives when the producer
//! stored p". Implemented by hand (not `define_language!`) so that ALU ops, slots and
//! modes are data rather than seventy enum variants.

use std::fmt;
use std::sync::Arc;

use egg::{FromOp, Id, Language};
use smallvec::SmallVec;

use crate::ir::{
    AluOp, BitSize, Half, Interp, InterpLoc, InterpMode, IoSlot, OpaqueOp, SystemValue,
};

/// Which stage a leaf belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Side {
    /// The producer (earlier stage).
    Producer,
    /// The consumer (later stage).
    Consumer,
}

/// How the consumer receives a producer value: the MODE of `(xfer MODE p)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum XferMode {
    /// Flat input: the provoking vertex's value.
    Flat,
    /// Interpolated FS input; `at_offset` takes two operand children, `at_sample` one.
    Interp(InterpMode),
    /// Per-vertex input of a TCS/TES/GS; one child, the consumer-side vertex index.
    Vertex,
    /// Per-patch input of a TES.
    Patch,
}

impl XferMode {
    /// Number of operand children the mode node carries.
    pub fn arity(self) -> usize {
        match self {
            XferMode::Interp(m) => m.operand_count(),
            XferMode::Vertex => 1,
            XferMode::Flat | XferMode::Patch => 0,
        }
    }

    /// Whether values received this way are interpolated between vertices.
    pub fn is_interpolated(self) -> bool {
        matches!(self, XferMode::Interp(_))
    }

    /// Whether the consumer receives one producer invocation's value unchanged (`flat`,
    /// `vertex`, `patch`): the modes `(uninterpolated ?m)` admits.
    pub fn is_uninterpolated(self) -> bool {
        matches!(self, XferMode::Flat | XferMode::Vertex | XferMode::Patch)
    }

    fn name(self) -> String {
        match self {
            XferMode::Flat => "flat".into(),
            XferMode::Vertex => "vertex".into(),
            XferMode::Patch => "patch".into(),
            XferMode::Interp(m) => {
                let i = match m.interp {
                    Interp::Persp => "persp",
                    Interp::Linear => "linear",
                    Interp::Color => "color",
                };
                let l = match m.loc {
                    InterpLoc::Center => "center",
                    InterpLoc::Centroid => "centroid",
                    InterpLoc::Sample => "sample",
                    InterpLoc::AtOffset => "at_offset",
                    InterpLoc::AtSample => "at_sample",
                };
                format!("{i}.{l}")
            }
        }
    }

    fn parse(s: &str) -> Option<XferMode> {
        let simple = match s {
            "flat" => Some(XferMode::Flat),
            "vertex" => Some(XferMode::Vertex),
            "patch" => Some(XferMode::Patch),
            _ => None,
        };
        if simple.is_some() {
            return simple;
        }
        let (i, l) = s.split_once('.')?;
        let interp = match i {
            "persp" => Interp::Persp,
            "linear" => Interp::Linear,
            "color" => Interp::Color,
            _ => return None,
        };
        let loc = match l {
            "center" => InterpLoc::Center,
            "centroid" => InterpLoc::Centroid,
            "sample" => InterpLoc::Sample,
            "at_offset" => InterpLoc::AtOffset,
            "at_sample" => InterpLoc::AtSample,
            _ => return None,
        };
        Some(XferMode::Interp(InterpMode { interp, loc }))
    }
}

/// The operands of an e-node: inline up to three (every ALU op's arity), so cloning an
/// e-node, which egg does to canonicalize, look up and apply it, allocates nothing.
pub type Operands = SmallVec<[Id; 3]>;

/// One e-node.
#[derive(Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum VNode {
    /// A constant bit pattern of a size.
    Const {
        /// Size.
        bits: BitSize,
        /// Bit pattern (masked to the size).
        value: u32,
    },
    /// An undefined value of a size.
    Undef(BitSize),
    /// An ALU op; exact ops are distinct operators so inexact rules never match them.
    Alu {
        /// Opcode.
        op: AluOp,
        /// NIR's exact flag.
        exact: bool,
        /// Sources.
        children: Operands,
    },
    /// A pure opaque operation (see [`OpaqueOp`]): dedupable and movable like an ALU
    /// op, but no law looks inside it.
    Op {
        /// The operation.
        op: Arc<OpaqueOp>,
        /// Scalar operands.
        children: Operands,
    },
    /// A word of the default uniform block, or a 16-bit half of it (free: both
    /// stages can load it).
    Uniform(u32, Half),
    /// A UBO load of a word or a 16-bit half of it; the child is the byte offset.
    Ubo {
        /// Block index.
        block: u32,
        /// `Full` for the 32-bit word, `Lo`/`Hi` for a 16-bit half.
        half: Half,
        /// Offset child.
        offset: [Id; 1],
    },
    /// A producer input read without a vertex index (VS attribute, TES patch input).
    Input(IoSlot),
    /// A TCS read of one input control point at a constant index: the same value in
    /// every invocation of the patch.
    VertexInput {
        /// The slot read.
        slot: IoSlot,
        /// The constant vertex index.
        vertex: u32,
    },
    /// A system value of one side.
    SysVal(Side, SystemValue),
    /// A producer value outside the lowered region (index into the producer's values).
    Opaque {
        /// The producer value's arena index.
        value: u32,
        /// Its size.
        bits: BitSize,
    },
    /// `(per-emit K H T)`: a GS output that differs between static `emit_vertex`es —
    /// `H` at emit `K` (a constant child), `T` at every other emit. Lowering builds a
    /// right spine `(per-emit 0i32 v0 (per-emit 1i32 v1 v2))`, so the ops of every
    /// pure law distribute over it like over a select on the emit index.
    PerEmit([Id; 3]),
    /// The MODE operand of `xfer`, with its operand children (vertex index, offsets).
    Mode(XferMode, Operands),
    /// `(xfer MODE p)`: children are the mode node and the producer value.
    Xfer([Id; 2]),
}

/// Written out because egg clones e-nodes wherever it canonicalizes, looks up or
/// applies them: the derived clone copies operands one by one through an iterator,
/// `from_slice` copies them at once (the operands are `Copy`). A tenth of a small
/// pair's `optimize` went into the derived one.
impl Clone for VNode {
    fn clone(&self) -> Self {
        match self {
            VNode::Alu {
                op,
                exact,
                children,
            } => VNode::Alu {
                op: *op,
                exact: *exact,
                children: Operands::from_slice(children),
            },
            VNode::Op { op, children } => VNode::Op {
                op: Arc::clone(op),
                children: Operands::from_slice(children),
            },
            VNode::Mode(mode, children) => VNode::Mode(*mode, Operands::from_slice(children)),
            VNode::Const { bits, value } => VNode::Const {
                bits: *bits,
                value: *value,
            },
            VNode::Undef(bits) => VNode::Undef(*bits),
            VNode::Uniform(word, half) => VNode::Uniform(*word, *half),
            VNode::Ubo {
                block,
                half,
                offset,
            } => VNode::Ubo {
                block: *block,
                half: *half,
                offset: *offset,
            },
            VNode::Input(slot) => VNode::Input(*slot),
            VNode::VertexInput { slot, vertex } => VNode::VertexInput {
                slot: *slot,
                vertex: *vertex,
            },
            VNode::SysVal(side, value) => VNode::SysVal(*side, *value),
            VNode::Opaque { value, bits } => VNode::Opaque {
                value: *value,
                bits: *bits,
            },
            VNode::PerEmit(children) => VNode::PerEmit(*children),
            VNode::Xfer(children) => VNode::Xfer(*children),
        }
    }
}

/// The operator and arity of a node, used by egg to skip non-matching nodes: equal
/// exactly when [`Language::matches`] holds. egg asks for it on every node it indexes
/// or scans, so it is built without allocating (leaves carry no heap data).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// An ALU op, its exact flag and arity.
    Alu(AluOp, bool, usize),
    /// A UBO load of a block.
    Ubo(u32, Half),
    /// A transfer mode and its operand count.
    Mode(XferMode, usize),
    /// An opaque operation and its arity.
    Op(Arc<OpaqueOp>, usize),
    /// A GS per-emit node.
    PerEmit,
    /// A transfer.
    Xfer,
    /// A leaf: the whole node.
    Leaf(VNode),
}

impl Language for VNode {
    type Discriminant = Shape;

    fn discriminant(&self) -> Shape {
        match self {
            VNode::Alu {
                op,
                exact,
                children,
            } => Shape::Alu(*op, *exact, children.len()),
            VNode::Ubo { block, half, .. } => Shape::Ubo(*block, *half),
            VNode::Mode(m, children) => Shape::Mode(*m, children.len()),
            VNode::PerEmit(_) => Shape::PerEmit,
            VNode::Xfer(_) => Shape::Xfer,
            VNode::Op { op, children } => Shape::Op(op.clone(), children.len()),
            // Leaves are their own shape; children (none today) must not count.
            leaf => Shape::Leaf(leaf.clone().map_children(|_| Id::from(0))),
        }
    }

    /// Maps the children, then puts the two operands of a commutative op in class-id
    /// order. egg canonicalizes every node through here (when adding, looking up and
    /// rebuilding), so `(fadd a b)` and `(fadd b a)` are one hash-consed node and the
    /// e-graph never holds commutative twins; rule left-hand sides are matched in both
    /// operand orders instead (`comm_match::CommPattern`).
    fn update_children<F: FnMut(Id) -> Id>(&mut self, mut f: F) {
        self.for_each_mut(|id| *id = f(*id));
        if let VNode::Alu { op, children, .. } = self {
            if children.len() == 2 && op.is_commutative() && children[0] > children[1] {
                children.swap(0, 1);
            }
        }
    }

    // Hot: egg's matcher calls it for every node of every class a pattern visits, and
    // most calls compare different variants, which the first arm that fits rejects.
    // Variants other than ALU, opaque and mode nodes have a fixed number of children.
    fn matches(&self, other: &Self) -> bool {
        match (self, other) {
            (
                VNode::Alu {
                    op: a,
                    exact: x,
                    children: c,
                },
                VNode::Alu {
                    op: b,
                    exact: y,
                    children: d,
                },
            ) => a == b && x == y && c.len() == d.len(),
            (VNode::Xfer(_), VNode::Xfer(_)) | (VNode::PerEmit(_), VNode::PerEmit(_)) => true,
            (VNode::Mode(a, c), VNode::Mode(b, d)) => a == b && c.len() == d.len(),
            (
                VNode::Ubo {
                    block: a, half: x, ..
                },
                VNode::Ubo {
                    block: b, half: y, ..
                },
            ) => a == b && x == y,
            (VNode::Op { op: a, children: c }, VNode::Op { op: b, children: d }) => {
                c.len() == d.len() && a == b
            }
            (a, b) => a.children().is_empty() && b.children().is_empty() && a == b,
        }
    }

    fn children(&self) -> &[Id] {
        match self {
            VNode::Alu { children, .. } | VNode::Op { children, .. } | VNode::Mode(_, children) => {
                children
            }
            VNode::Ubo { offset, .. } => offset,
            VNode::Xfer(c) => c,
            VNode::PerEmit(c) => c,
            _ => &[],
        }
    }

    fn children_mut(&mut self) -> &mut [Id] {
        match self {
            VNode::Alu { children, .. } | VNode::Op { children, .. } | VNode::Mode(_, children) => {
                children
            }
            VNode::Ubo { offset, .. } => offset,
            VNode::Xfer(c) => c,
            VNode::PerEmit(c) => c,
            _ => &mut [],
        }
    }
}

impl VNode {
    /// The operator as written in rule files and reports.
    pub fn op_name(&self) -> String {
        match self {
            VNode::Const { bits, value } => const_name(*bits, *value),
            VNode::Undef(b) => format!("undef{}", b.bits()),
            VNode::Alu { op, exact, .. } => {
                if *exact {
                    format!("{}.exact", op.name())
                } else {
                    op.name().to_string()
                }
            }
            VNode::Op { op, .. } => format!("opaque[{op}]"),
            VNode::Uniform(i, h) => format!("uniform:{i}{}", half_suffix(*h)),
            VNode::Ubo { block, half, .. } => format!("ubo:{block}{}", half_suffix(*half)),
            VNode::Input(s) => format!("in:{s}"),
            VNode::VertexInput { slot, vertex } => format!("vin:{vertex}:{slot}"),
            VNode::SysVal(Side::Producer, sv) => format!("psv:{sv}"),
            VNode::SysVal(Side::Consumer, sv) => format!("csv:{sv}"),
            VNode::Opaque { value, bits } => format!("opaque:{value}:{}", bits.bits()),
            VNode::PerEmit(_) => "per-emit".into(),
            VNode::Mode(m, _) => m.name(),
            VNode::Xfer(_) => "xfer".into(),
        }
    }

    /// A 32-bit float constant node.
    pub fn f32(v: f32) -> VNode {
        VNode::Const {
            bits: BitSize::B32,
            value: v.to_bits(),
        }
    }

    /// The constant's bits, if the node is a constant.
    pub fn as_const(&self) -> Option<(BitSize, u32)> {
        match self {
            VNode::Const { bits, value } => Some((*bits, *value)),
            _ => None,
        }
    }
}

/// Writes a constant so that it parses back to the same bits: floats for 16/32-bit
/// patterns that look like floats, `Ni32` for small integers, `#BITS:0xHEX` otherwise.
fn const_name(bits: BitSize, value: u32) -> String {
    match bits {
        BitSize::B1 => if value & 1 == 1 { "true" } else { "false" }.into(),
        BitSize::B32 => {
            let f = f32::from_bits(value);
            if value != 0 && value < 0x0080_0000 {
                format!("{value}i32")
            } else if f.is_nan() {
                format!("#32:{value:#x}")
            } else {
                format!("{f}f32")
            }
        }
        BitSize::B16 => {
            let f = half::f16::from_bits(value as u16);
            if f.is_nan() {
                format!("#16:{value:#x}")
            } else {
                format!("{f}f16")
            }
        }
    }
}

fn parse_const(s: &str) -> Option<VNode> {
    let node = |bits: BitSize, value: u32| VNode::Const {
        bits,
        value: value & bits.mask(),
    };
    match s {
        "true" => return Some(node(BitSize::B1, 1)),
        "false" => return Some(node(BitSize::B1, 0)),
        _ => {}
    }
    if let Some(rest) = s.strip_prefix('#') {
        let (b, hex) = rest.split_once(':')?;
        let bits = BitSize::from_bits(b.parse().ok()?)?;
        let hex = hex.strip_prefix("0x").unwrap_or(hex);
        return Some(node(bits, u32::from_str_radix(hex, 16).ok()?));
    }
    if let Some(f) = s.strip_suffix("f32") {
        return Some(node(BitSize::B32, f.parse::<f32>().ok()?.to_bits()));
    }
    if let Some(f) = s.strip_suffix("f16") {
        let v = half::f16::from_f32(f.parse::<f32>().ok()?);
        return Some(node(BitSize::B16, v.to_bits() as u32));
    }
    if let Some(i) = s.strip_suffix("i32") {
        return Some(node(BitSize::B32, i.parse::<i64>().ok()? as u32));
    }
    if let Some(i) = s.strip_suffix("i16") {
        return Some(node(BitSize::B16, i.parse::<i64>().ok()? as u32));
    }
    None
}

fn parse_leaf(op: &str) -> Option<VNode> {
    if let Some(c) = parse_const(op) {
        return Some(c);
    }
    if let Some(b) = op.strip_prefix("undef") {
        return Some(VNode::Undef(BitSize::from_bits(b.parse().ok()?)?));
    }
    let (head, rest) = op.split_once(':')?;
    match head {
        "uniform" => {
            let (i, h) = word_half(rest)?;
            Some(VNode::Uniform(i, h))
        }
        "in" => Some(VNode::Input(rest.parse().ok()?)),
        "vin" => {
            let (v, s) = rest.split_once(':')?;
            Some(VNode::VertexInput {
                slot: s.parse().ok()?,
                vertex: v.parse().ok()?,
            })
        }
        "psv" => Some(VNode::SysVal(Side::Producer, rest.parse().ok()?)),
        "csv" => Some(VNode::SysVal(Side::Consumer, rest.parse().ok()?)),
        "opaque" => {
            let (v, b) = rest.split_once(':')?;
            let bits = BitSize::from_bits(b.parse().ok()?)?;
            Some(VNode::Opaque {
                value: v.parse().ok()?,
                bits,
            })
        }
        _ => None,
    }
}

/// Why an operator could not be turned into a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadOp(pub String);

impl fmt::Display for BadOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromOp for VNode {
    type Error = BadOp;

    fn from_op(op: &str, children: Vec<Id>) -> Result<VNode, BadOp> {
        let found = children.len();
        let arity_err =
            |want: usize| BadOp(format!("`{op}` takes {want} operand(s), found {found}"));
        let (name, exact) = match op.strip_suffix(".exact") {
            Some(base) => (base, true),
            None => (op, false),
        };
        if let Ok(alu) = name.parse::<AluOp>() {
            if children.len() != alu.arity() {
                return Err(arity_err(alu.arity()));
            }
            return Ok(VNode::Alu {
                op: alu,
                exact,
                children: children.into(),
            });
        }
        if let Some(mode) = XferMode::parse(op) {
            if children.len() != mode.arity() {
                return Err(arity_err(mode.arity()));
            }
            return Ok(VNode::Mode(mode, children.into()));
        }
        match op {
            "xfer" => {
                let c: [Id; 2] = children.try_into().map_err(|_| arity_err(2))?;
                return Ok(VNode::Xfer(c));
            }
            "per-emit" => {
                let c: [Id; 3] = children.try_into().map_err(|_| arity_err(3))?;
                return Ok(VNode::PerEmit(c));
            }
            _ => {}
        }
        if let Some((block, half)) = op.strip_prefix("ubo:").and_then(word_half) {
            let c: [Id; 1] = children.try_into().map_err(|_| arity_err(1))?;
            return Ok(VNode::Ubo {
                block,
                half,
                offset: c,
            });
        }
        match parse_leaf(op) {
            Some(leaf) if children.is_empty() => Ok(leaf),
            Some(_) => Err(arity_err(0)),
            None => Err(BadOp(format!("unknown operator `{op}`"))),
        }
    }
}

impl fmt::Display for VNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.op_name())
    }
}

/// `.lo` / `.hi` after a uniform word or UBO block for a 16-bit half.
fn half_suffix(half: Half) -> &'static str {
    match half {
        Half::Full => "",
        Half::Lo => ".lo",
        Half::Hi => ".hi",
    }
}

/// `N`, `N.lo` or `N.hi`.
fn word_half(text: &str) -> Option<(u32, Half)> {
    let (n, half) = match text.split_once('.') {
        None => (text, Half::Full),
        Some((n, "lo")) => (n, Half::Lo),
        Some((n, "hi")) => (n, Half::Hi),
        Some(_) => return None,
    };
    Some((n.parse().ok()?, half))
}

#[cfg(test)]
mod tests {
    use super::*;
    use egg::RecExpr;

    #[test]
    fn operators_round_trip_through_text() {
        let texts = [
            "(xfer persp.center (fadd in:ATTR0.x 1f32))",
            "(xfer (vertex 2i32) (fmul.exact psv:vertex_id uniform:3))",
            "(xfer (linear.at_offset 0.5f32 -0.25f32) opaque:7:32)",
            "(per-emit 1i32 undef32 (per-emit 2i32 #32:0x7fc00000 (ubo:1 16i32)))",
            "(bcsel true -0f16 1f16)",
            "(xfer patch csv:primitive_id)",
        ];
        for t in texts {
            let e: RecExpr<VNode> = t.parse().unwrap_or_else(|e| panic!("{t}: {e:?}"));
            assert_eq!(e.to_string(), t);
        }
    }

    #[test]
    fn exact_ops_are_distinct_operators() {
        let a = VNode::from_op("fadd", vec![Id::from(0), Id::from(1)]).unwrap();
        let b = VNode::from_op("fadd.exact", vec![Id::from(0), Id::from(1)]).unwrap();
        assert!(!a.matches(&b));
        assert_ne!(a.discriminant(), b.discriminant());
    }

    #[test]
    fn bad_operators_are_rejected() {
        assert!(VNode::from_op("fadd", vec![Id::from(0)]).is_err());
        assert!(VNode::from_op("frobnicate", vec![]).is_err());
        assert!(VNode::from_op("xfer", vec![Id::from(0)]).is_err());
        assert!(VNode::from_op("per-emit", vec![Id::from(0), Id::from(1)]).is_err());
        assert!(VNode::from_op("in:VAR99.x", vec![]).is_err());
    }

    #[test]
    fn constants_keep_their_bits() {
        let c = parse_const("1f32").unwrap();
        assert_eq!(c.as_const(), Some((BitSize::B32, 0x3f80_0000)));
        assert_eq!(
            parse_const("1f16").unwrap().as_const(),
            Some((BitSize::B16, 0x3c00))
        );
        assert_eq!(
            parse_const("-1i32").unwrap().as_const(),
            Some((BitSize::B32, u32::MAX))
        );
        assert_eq!(const_name(BitSize::B32, 5), "5i32");
    }
}
