//! The recipe: small, plain data describing a random shader pair. Proptest generates and
//! shrinks recipes; `build` turns any recipe into a well-formed pipeline. Every field is
//! a choice, never a raw IR reference, so no recipe can describe an invalid pair.

use crate::ir::{InterpLoc, InterpMode, Stage};

/// A whole random pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recipe {
    /// Producer and consumer stage (must be a legal link).
    pub pair: (Stage, Stage),
    /// Producer stage-parameter choice (topology, patch size, domain, GS output…).
    pub producer_info: u8,
    /// Consumer stage-parameter choice; for an FS consumer its free bits also pick
    /// the fixed-function reads and a viewport-mask broadcast (`producer.rs`).
    pub consumer_info: u8,
    /// Words in the default uniform block (at least 1 is used).
    pub uniforms: u8,
    /// Words of UBO 0; 0 declares no UBO.
    pub ubo_words: u8,
    /// Producer ALU DAG, in order.
    pub producer_ops: Vec<OpSpec>,
    /// Producer outputs (each becomes one or two varyings).
    pub outputs: Vec<OutputSpec>,
    /// Indirectly indexed varying arrays.
    pub arrays: Vec<ArraySpec>,
    /// Consumer ALU DAG, in order, over the loaded inputs.
    pub consumer_ops: Vec<OpSpec>,
    /// Deliberately movable consumer expressions.
    pub shapes: Vec<ShapeSpec>,
    /// Consumer results (FS DATA outputs, or the consumer's own outputs).
    pub results: Vec<ResultSpec>,
    /// Vertices a GS emits (producer or consumer), 1 or more.
    pub emits: u8,
    /// TCS: read outputs back, across a barrier.
    pub tcs_readback: bool,
    /// TCS: stores of invocation-dependent values at a constant output vertex, alone,
    /// paired in two components or not quite paired (0: none; the cases are listed at
    /// `producer::off_vertex`).
    pub tcs_off_vertex: u8,
    /// GS producer with 2 or more emits: the second emit and the stores before it
    /// sit inside an `if` (an emit site of its own, which may not run).
    pub gs_emit_branch: bool,
}

/// One DAG node: `op` indexes the generator's op table (0 = `fadd`); operands are
/// indices into the values of the needed type, taken modulo their count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpSpec {
    /// Op table index (modulo the table length).
    pub op: u8,
    /// NIR's `exact` flag (ALU ops only).
    pub exact: bool,
    /// First operand choice.
    pub a: u16,
    /// Second operand choice.
    pub b: u16,
    /// Third operand choice.
    pub c: u16,
}

/// The value type a varying carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ty {
    /// 32-bit float.
    F32,
    /// 16-bit float in a `.lo`/`.hi` half.
    F16,
    /// 32-bit integer (always flat).
    I32,
}

/// What the generator deliberately makes an output be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VaryingKind {
    /// A value of the producer DAG.
    General,
    /// Stored but never read by the consumer.
    Dead,
    /// A constant.
    Constant,
    /// A uniform or UBO word.
    Uniform,
    /// An expression over uniforms and constants only.
    UniformExpr,
    /// Two slots holding the same value (`commuted`: `a*b` and `b*a`).
    Duplicate {
        /// Store `a*b` and `b*a` instead of one value twice.
        commuted: bool,
    },
    /// Two slots holding `v` and `v+1` (or `v*2`): the second is movable.
    Derived {
        /// `v*2` instead of `v+1`.
        times_two: bool,
    },
    /// Same value for every vertex of a primitive (instance/primitive id, uniforms).
    Convergent,
}

/// How an FS reads a varying. Other consumers read per vertex and ignore it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Qual {
    /// Flat (provoking vertex).
    Flat,
    /// Interpolated with this mode; the location is center, centroid or sample.
    Interp(InterpMode),
}

impl Qual {
    /// Perspective, pixel centre.
    pub const SMOOTH: Qual = Qual::Interp(InterpMode::PERSP_CENTER);

    /// Whether the qualifier interpolates.
    pub fn is_interpolated(self) -> bool {
        matches!(self, Qual::Interp(_))
    }

    /// The interpolation location, if interpolated.
    pub fn loc(self) -> Option<InterpLoc> {
        match self {
            Qual::Interp(m) => Some(m.loc),
            Qual::Flat => None,
        }
    }
}

/// An extra FS read of an interpolated varying at a moved position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtRead {
    /// No extra read.
    None,
    /// `interpolateAtOffset`.
    Offset,
    /// `interpolateAtSample`.
    Sample,
}

/// Control flow around a store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wrap {
    /// A plain top-level store.
    None,
    /// `if c { store v } else { store alt }`.
    IfElse,
    /// `r = if c { v + alt } else { alt }; store r`.
    IfPhi,
    /// A loop of n (1..) iterations accumulating `alt`, storing in every iteration.
    LoopInside(u8),
    /// A loop of n (1..) iterations accumulating `alt`, storing after the loop.
    LoopAccumulate(u8),
}

/// Which slot family a varying lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    /// `VARn`.
    Var,
    /// `TEXn`.
    Tex,
    /// `COLn`.
    Col,
    /// `BFCn`, stored by the producer; an FS reads it as `COLn` (two-sided colour).
    Bfc,
    /// `FOGC`.
    Fogc,
    /// System-value slots (CLIP/CULL_DIST, PSIZ, LAYER, VIEWPORT): plain data into a
    /// TCS/TES/GS, rasterizer inputs an FS may also read.
    SysVal,
}

/// One producer output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputSpec {
    /// The deliberate kind.
    pub kind: VaryingKind,
    /// Value type.
    pub ty: Ty,
    /// Main value choice.
    pub value: u16,
    /// Second value choice (the other operand, the branch alternative…).
    pub other: u16,
    /// Condition choice for `if` wrappers.
    pub cond: u16,
    /// FS qualifier (integers are always flat).
    pub qual: Qual,
    /// Extra FS read at an offset/sample.
    pub at: AtRead,
    /// Control flow around the store.
    pub wrap: Wrap,
    /// Captured by transform feedback (only when the consumer is FS).
    pub xfb: bool,
    /// TCS producer: a per-patch output instead of per-vertex.
    pub patch: bool,
    /// Per-vertex consumers: which vertex to read (4 = dynamic index).
    pub vertex: u8,
    /// Free components to skip before allocating (holes in the layout).
    pub skip: u8,
    /// Slot family.
    pub family: Family,
}

/// An array of `len` vec4 slots (component x) read with a dynamic slot index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArraySpec {
    /// 4 slots instead of 2.
    pub len4: bool,
    /// FS qualifier.
    pub qual: Qual,
    /// The producer also stores one element through a dynamic index.
    pub store_indirect: bool,
    /// Element value choice.
    pub value: u16,
}

/// A deliberately movable consumer expression shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShapeKind {
    /// `in_a * u + in_b`.
    Mad,
    /// `t0 = a + b + c; t1 = a + b*k1 + c*k2` over three inputs.
    Shared3,
    /// `in_a * k`.
    Scale,
    /// `in_a * in_b`: not linear in the inputs, so it must never move across
    /// interpolation (the negative case of the code-motion laws).
    Product,
    /// Selects with a constant value: `in_a < k1 ? in_b : 0.0` (moves when both
    /// inputs are flat; never across interpolation, since the condition varies
    /// across the primitive) and `k2 < k1 ? in_a : 0.5` (a free condition: moves
    /// across every transfer).
    SelectConst,
}

/// One movable consumer expression over inputs (`a`, `b`, `c`) and uniforms (`k1`, `k2`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShapeSpec {
    /// Shape.
    pub kind: ShapeKind,
    /// First input choice.
    pub a: u8,
    /// Second input choice.
    pub b: u8,
    /// Third input choice.
    pub c: u8,
    /// First uniform word.
    pub k1: u8,
    /// Second uniform word.
    pub k2: u8,
}

/// One consumer result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResultSpec {
    /// Value choice (32-bit float values).
    pub value: u16,
    /// Alternative value choice for wrappers.
    pub other: u16,
    /// Condition choice for wrappers.
    pub cond: u16,
    /// Control flow around the store.
    pub wrap: Wrap,
}

impl Recipe {
    /// The smallest recipe for a pair: no ops, one general output, one result.
    pub fn minimal(pair: (Stage, Stage)) -> Recipe {
        Recipe {
            pair,
            producer_info: 0,
            consumer_info: 0,
            uniforms: 1,
            ubo_words: 0,
            producer_ops: vec![],
            outputs: vec![OutputSpec::general(0)],
            arrays: vec![],
            consumer_ops: vec![],
            shapes: vec![],
            results: vec![],
            emits: 1,
            tcs_readback: false,
            tcs_off_vertex: 0,
            gs_emit_branch: false,
        }
    }
}

impl OutputSpec {
    /// A plain smooth 32-bit varying holding producer value `value`.
    pub fn general(value: u16) -> OutputSpec {
        OutputSpec {
            kind: VaryingKind::General,
            ty: Ty::F32,
            value,
            other: 0,
            cond: 0,
            qual: Qual::SMOOTH,
            at: AtRead::None,
            wrap: Wrap::None,
            xfb: false,
            patch: false,
            vertex: 0,
            skip: 0,
            family: Family::Var,
        }
    }
}
