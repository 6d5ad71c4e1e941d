//! Instructions: ALU ops, constants, and the intrinsics that touch I/O, uniforms,
//! system values and side effects, plus the small enums they are parameterized by.

use std::sync::Arc;

use smallvec::{smallvec, SmallVec};

use super::{AluOp, Half, IoSlot, OpaqueOp, Purity, Value, Values};

/// Interpolation of an FS input (perspective-correct or screen-linear).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Interp {
    /// Perspective-correct (`smooth`).
    Persp,
    /// Screen-space linear (`noperspective`).
    Linear,
    /// A colour input without a qualifier (Mesa's `INTERP_MODE_NONE`): the GL
    /// shade model decides at draw time, perspective-correct (`GL_SMOOTH`) or the
    /// provoking vertex's value (`GL_FLAT`). Only `COL0`/`COL1` are read this way.
    Color,
}

/// Where within the pixel an interpolated input is evaluated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum InterpLoc {
    /// Pixel centre.
    Center,
    /// Centroid of the covered samples.
    Centroid,
    /// The current sample's position.
    Sample,
    /// An offset from the centre given by two float operands.
    AtOffset,
    /// The position of the sample given by an integer operand.
    AtSample,
}

/// A full interpolation qualifier: mode × location (the barycentric set NIR uses).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InterpMode {
    /// Perspective or linear.
    pub interp: Interp,
    /// Evaluation location.
    pub loc: InterpLoc,
}

impl InterpMode {
    /// Perspective at the pixel centre, the default for `in` variables.
    pub const PERSP_CENTER: InterpMode = InterpMode {
        interp: Interp::Persp,
        loc: InterpLoc::Center,
    };

    /// Number of value operands the location takes (offset x/y, sample index).
    pub fn operand_count(self) -> usize {
        match self.loc {
            InterpLoc::AtOffset => 2,
            InterpLoc::AtSample => 1,
            _ => 0,
        }
    }
}

macro_rules! keyword_enum {
    ($(#[$m:meta])* $name:ident { $( $(#[$vm:meta])* $variant:ident = $text:literal ),* $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $( $(#[$vm])* $variant, )* }

        impl $name {
            /// Every variant.
            pub const ALL: &'static [$name] = &[ $( $name::$variant, )* ];
            /// The keyword used in `.pair` files.
            pub fn keyword(self) -> &'static str {
                match self { $( $name::$variant => $text, )* }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.keyword())
            }
        }

        impl std::str::FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<$name, String> {
                match s {
                    $( $text => Ok($name::$variant), )*
                    _ => Err(format!(
                        concat!("unknown ", stringify!($name), " `{}`, expected one of: {}"),
                        s,
                        [$( $text ),*].join(", ")
                    )),
                }
            }
        }
    };
}
pub(crate) use keyword_enum;

keyword_enum! {
    /// A system value read with `load_system_value`; vector ones are split per component.
    SystemValue {
        /// VS: index of the vertex.
        VertexId = "vertex_id",
        /// VS: index of the instance (convergent per primitive).
        InstanceId = "instance_id",
        /// TCS/GS: invocation index.
        InvocationId = "invocation_id",
        /// TCS/TES/GS/FS: primitive index (convergent).
        PrimitiveId = "primitive_id",
        /// Any stage: multiview index (convergent).
        ViewIndex = "view_index",
        /// FS: 1-bit front-facing flag (convergent).
        FrontFace = "front_face",
        /// FS: sample index.
        SampleId = "sample_id",
        /// FS: the samples of the pixel this fragment covers, a bit mask.
        SampleMaskIn = "sample_mask_in",
        /// TES: tessellation coordinate u.
        TessCoordX = "tess_coord_x",
        /// TES: tessellation coordinate v.
        TessCoordY = "tess_coord_y",
        /// TES: tessellation coordinate w (1-u-v for triangles).
        TessCoordZ = "tess_coord_z",
        /// FS: window x.
        FragCoordX = "frag_coord_x",
        /// FS: window y.
        FragCoordY = "frag_coord_y",
        /// FS: depth.
        FragCoordZ = "frag_coord_z",
        /// FS: 1/w.
        FragCoordW = "frag_coord_w",
        /// TCS/TES: vertices per input patch.
        PatchVerticesIn = "patch_vertices_in",
    }
}

impl SystemValue {
    /// Bit size of the value.
    pub fn bits(self) -> super::BitSize {
        match self {
            SystemValue::FrontFace => super::BitSize::B1,
            _ => super::BitSize::B32,
        }
    }

    /// Whether the value is the same for every vertex/fragment of one primitive.
    pub fn is_convergent(self) -> bool {
        matches!(
            self,
            SystemValue::InstanceId
                | SystemValue::PrimitiveId
                | SystemValue::ViewIndex
                | SystemValue::FrontFace
                | SystemValue::PatchVerticesIn
        )
    }

    /// Whether the stage may read it.
    pub fn legal_in(self, stage: super::Stage) -> bool {
        use super::Stage::*;
        use SystemValue::*;
        match self {
            VertexId | InstanceId => stage == Vertex,
            InvocationId => matches!(stage, TessCtrl | Geometry),
            PrimitiveId => stage != Vertex,
            ViewIndex => true,
            FrontFace | SampleId | SampleMaskIn | FragCoordX | FragCoordY | FragCoordZ
            | FragCoordW => stage == Fragment,
            TessCoordX | TessCoordY | TessCoordZ => stage == TessEval,
            PatchVerticesIn => matches!(stage, TessCtrl | TessEval),
        }
    }
}

/// Transform feedback capture of a stored component.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Xfb {
    /// Buffer index 0-3.
    pub buffer: u8,
    /// Byte offset of the stored value within the buffer's vertex record: a
    /// multiple of 4 for a 32-bit store, of 2 for a 16-bit one, which writes 2
    /// bytes there (whichever half of its slot it is stored to: the capture is
    /// the value's, not the slot's).
    pub offset: u16,
}

/// Dynamic slot indexing: the accessed slot is `base + index` within an array of
/// `len` consecutive vec4 slots starting at the instruction's base slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Indirect {
    /// 32-bit slot offset value.
    pub index: Value,
    /// Length of the indexed array in slots.
    pub len: u8,
}

/// The operation an instruction performs.
#[derive(Clone, Debug, PartialEq)]
pub enum InstKind {
    /// A constant bit pattern.
    Const(u32),
    /// An undefined value.
    Undef,
    /// An ALU op; `exact` forbids value-changing float rewrites.
    Alu {
        /// Opcode.
        op: AluOp,
        /// NIR's exact flag.
        exact: bool,
        /// Sources.
        srcs: Vec<Value>,
    },
    /// A flat input: VS attribute, FS flat input, TES/FS patch input.
    LoadInput {
        /// Address.
        slot: IoSlot,
        /// Optional dynamic slot index.
        indirect: Option<Indirect>,
    },
    /// FS: an input interpolated with the given barycentrics.
    LoadInterpolatedInput {
        /// Address.
        slot: IoSlot,
        /// Qualifier.
        mode: InterpMode,
        /// Offset x/y (`at_offset`) or sample index (`at_sample`).
        operands: Vec<Value>,
        /// Optional dynamic slot index.
        indirect: Option<Indirect>,
    },
    /// TCS/TES/GS: an input of vertex `vertex` of the input primitive.
    LoadPerVertexInput {
        /// Address.
        slot: IoSlot,
        /// Vertex index (may be dynamic).
        vertex: Value,
        /// Optional dynamic slot index.
        indirect: Option<Indirect>,
    },
    /// TCS: read back an output (per vertex when `vertex` is given, else patch).
    LoadOutput {
        /// Address.
        slot: IoSlot,
        /// Output vertex for per-vertex outputs.
        vertex: Option<Value>,
        /// Optional dynamic slot index.
        indirect: Option<Indirect>,
    },
    /// Store one output component (per-vertex stages, patch outputs, FS results).
    StoreOutput {
        /// Address.
        slot: IoSlot,
        /// Stored value.
        value: Value,
        /// Optional dynamic slot index.
        indirect: Option<Indirect>,
        /// Transform feedback capture.
        xfb: Option<Xfb>,
        /// The value feeds only fixed function / xfb, not the next stage.
        no_varying: bool,
    },
    /// TCS: store a per-vertex output of output vertex `vertex`.
    StorePerVertexOutput {
        /// Address.
        slot: IoSlot,
        /// Stored value.
        value: Value,
        /// Output vertex (normally `invocation_id`).
        vertex: Value,
        /// Optional dynamic slot index.
        indirect: Option<Indirect>,
    },
    /// A word of the default uniform block, or one 16-bit half of it.
    LoadUniform {
        /// Word index into the pair's uniforms.
        index: u32,
        /// `Full` for the 32-bit word, `Lo`/`Hi` for a 16-bit half of it.
        half: Half,
    },
    /// A load from a uniform buffer: the 32-bit word at a byte offset, or one 16-bit
    /// half of it.
    LoadUbo {
        /// Block index.
        block: u32,
        /// Byte offset value (of the word).
        offset: Value,
        /// `Full` for the 32-bit word, `Lo`/`Hi` for a 16-bit half of it.
        half: Half,
    },
    /// A system value.
    LoadSystemValue(SystemValue),
    /// GS: emit the current output values as a vertex.
    EmitVertex,
    /// GS: end the current strip.
    EndPrimitive,
    /// TCS: invocation barrier.
    Barrier,
    /// FS: kill the fragment.
    Discard,
    /// One component of a texture sample (opaque, deterministic in the interpreter).
    Texture {
        /// Sampler binding.
        sampler: u32,
        /// Result component 0-3.
        comp: u8,
        /// Coordinates.
        coords: Vec<Value>,
    },
    /// A load from a storage buffer (opaque: may observe stores of any invocation).
    SsboLoad {
        /// Buffer binding.
        buffer: u32,
        /// Word address.
        addr: Value,
    },
    /// A store to a storage buffer (side effect, observable).
    SsboStore {
        /// Buffer binding.
        buffer: u32,
        /// Word address.
        addr: Value,
        /// Stored value.
        value: Value,
    },
    /// An operation the optimizer carries without understanding it (see [`OpaqueOp`]).
    Opaque {
        /// What it is (shared: one description serves every component and copy).
        op: Arc<OpaqueOp>,
        /// Scalar operands, the components of `op.args` in order.
        srcs: Vec<Value>,
    },
}

impl InstKind {
    /// The keyword naming the instruction in `.pair` files.
    pub fn keyword(&self) -> &'static str {
        match self {
            InstKind::Const(_) => "const",
            InstKind::Undef => "undef",
            InstKind::Alu { op, .. } => op.name(),
            InstKind::LoadInput { .. } => "load_input",
            InstKind::LoadInterpolatedInput { .. } => "load_interpolated_input",
            InstKind::LoadPerVertexInput { .. } => "load_per_vertex_input",
            InstKind::LoadOutput { .. } => "load_output",
            InstKind::StoreOutput { .. } => "store_output",
            InstKind::StorePerVertexOutput { .. } => "store_per_vertex_output",
            InstKind::LoadUniform { .. } => "load_uniform",
            InstKind::LoadUbo { .. } => "load_ubo",
            InstKind::LoadSystemValue(_) => "load_system_value",
            InstKind::EmitVertex => "emit_vertex",
            InstKind::EndPrimitive => "end_primitive",
            InstKind::Barrier => "barrier",
            InstKind::Discard => "discard",
            InstKind::Texture { .. } => "tex",
            InstKind::SsboLoad { .. } => "ssbo_load",
            InstKind::SsboStore { .. } => "ssbo_store",
            InstKind::Opaque { .. } => "opaque",
        }
    }

    /// The dynamic slot index of an I/O instruction, if it has one.
    pub fn indirect(&self) -> Option<Indirect> {
        match self {
            InstKind::LoadInput { indirect, .. }
            | InstKind::LoadInterpolatedInput { indirect, .. }
            | InstKind::LoadPerVertexInput { indirect, .. }
            | InstKind::LoadOutput { indirect, .. }
            | InstKind::StoreOutput { indirect, .. }
            | InstKind::StorePerVertexOutput { indirect, .. } => *indirect,
            _ => None,
        }
    }

    /// Every value operand, in a fixed order (sources, then vertex, indirect index).
    pub fn operands(&self) -> Values {
        let ind = |i: &Option<Indirect>| i.map(|i| i.index);
        match self {
            InstKind::Const(_)
            | InstKind::Undef
            | InstKind::LoadUniform { .. }
            | InstKind::LoadSystemValue(_)
            | InstKind::EmitVertex
            | InstKind::EndPrimitive
            | InstKind::Barrier
            | InstKind::Discard => Values::new(),
            InstKind::Alu { srcs, .. } => Values::from_slice(srcs),
            InstKind::LoadInput { indirect, .. } => ind(indirect).into_iter().collect(),
            InstKind::LoadInterpolatedInput {
                operands, indirect, ..
            } => operands.iter().copied().chain(ind(indirect)).collect(),
            InstKind::LoadPerVertexInput {
                vertex, indirect, ..
            } => std::iter::once(*vertex).chain(ind(indirect)).collect(),
            InstKind::LoadOutput {
                vertex, indirect, ..
            } => vertex.iter().copied().chain(ind(indirect)).collect(),
            InstKind::StoreOutput {
                value, indirect, ..
            } => std::iter::once(*value).chain(ind(indirect)).collect(),
            InstKind::StorePerVertexOutput {
                value,
                vertex,
                indirect,
                ..
            } => [*value, *vertex].into_iter().chain(ind(indirect)).collect(),
            InstKind::LoadUbo { offset, .. } => smallvec![*offset],
            InstKind::Texture { coords, .. } => Values::from_slice(coords),
            InstKind::SsboLoad { addr, .. } => smallvec![*addr],
            InstKind::SsboStore { addr, value, .. } => smallvec![*addr, *value],
            InstKind::Opaque { srcs, .. } => Values::from_slice(srcs),
        }
    }

    /// Every value operand, mutably, in the order of [`InstKind::operands`].
    pub fn operands_mut(&mut self) -> SmallVec<[&mut Value; 4]> {
        fn ind(i: &mut Option<Indirect>) -> Option<&mut Value> {
            i.as_mut().map(|i| &mut i.index)
        }
        match self {
            InstKind::Const(_)
            | InstKind::Undef
            | InstKind::LoadUniform { .. }
            | InstKind::LoadSystemValue(_)
            | InstKind::EmitVertex
            | InstKind::EndPrimitive
            | InstKind::Barrier
            | InstKind::Discard => SmallVec::new(),
            InstKind::Alu { srcs, .. }
            | InstKind::Texture { coords: srcs, .. }
            | InstKind::Opaque { srcs, .. } => srcs.iter_mut().collect(),
            InstKind::LoadInput { indirect, .. } => ind(indirect).into_iter().collect(),
            InstKind::LoadInterpolatedInput {
                operands, indirect, ..
            } => operands.iter_mut().chain(ind(indirect)).collect(),
            InstKind::LoadPerVertexInput {
                vertex, indirect, ..
            } => std::iter::once(vertex).chain(ind(indirect)).collect(),
            InstKind::LoadOutput {
                vertex, indirect, ..
            } => vertex.iter_mut().chain(ind(indirect)).collect(),
            InstKind::StoreOutput {
                value, indirect, ..
            } => std::iter::once(value).chain(ind(indirect)).collect(),
            InstKind::StorePerVertexOutput {
                value,
                vertex,
                indirect,
                ..
            } => [value, vertex].into_iter().chain(ind(indirect)).collect(),
            InstKind::LoadUbo { offset, .. } => smallvec![offset],
            InstKind::SsboLoad { addr, .. } => smallvec![addr],
            InstKind::SsboStore { addr, value, .. } => smallvec![addr, value],
        }
    }

    /// An output store's slot, stored value and indirect index, whether per
    /// vertex or not; `None` for anything else.
    pub fn output_store(&self) -> Option<(IoSlot, Value, Option<Indirect>)> {
        match self {
            InstKind::StoreOutput {
                slot,
                value,
                indirect,
                ..
            }
            | InstKind::StorePerVertexOutput {
                slot,
                value,
                indirect,
                ..
            } => Some((*slot, *value, *indirect)),
            _ => None,
        }
    }

    /// The slot an input load reads at a fixed position (no indirect index),
    /// whatever its interpolation or vertex; `None` for anything else.
    pub fn direct_input_slot(&self) -> Option<IoSlot> {
        match self {
            InstKind::LoadInput {
                slot,
                indirect: None,
            }
            | InstKind::LoadInterpolatedInput {
                slot,
                indirect: None,
                ..
            }
            | InstKind::LoadPerVertexInput {
                slot,
                indirect: None,
                ..
            } => Some(*slot),
            _ => None,
        }
    }

    /// Whether the instruction produces a value.
    pub fn has_result(&self) -> bool {
        if let InstKind::Opaque { op, .. } = self {
            return op.result.is_some();
        }
        !matches!(
            self,
            InstKind::StoreOutput { .. }
                | InstKind::StorePerVertexOutput { .. }
                | InstKind::EmitVertex
                | InstKind::EndPrimitive
                | InstKind::Barrier
                | InstKind::Discard
                | InstKind::SsboStore { .. }
        )
    }

    /// Whether the instruction has an effect beyond its result (cannot be removed or
    /// moved by the optimizer).
    pub fn has_side_effects(&self) -> bool {
        match self {
            InstKind::Opaque { op, .. } => op.purity == Purity::Effect,
            _ => !self.has_result(),
        }
    }

    /// Whether the result is a pure function of the operands alone, so equal
    /// instructions in one invocation give equal results.
    pub fn is_pure(&self) -> bool {
        match self {
            InstKind::Opaque { op, .. } => op.purity == Purity::Pure,
            _ => matches!(
                self,
                InstKind::Const(_) | InstKind::Alu { .. } | InstKind::LoadUniform { .. }
            ),
        }
    }
}
