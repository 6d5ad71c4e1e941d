//! Shader stages, the per-stage execution parameters (`StageInfo`), and which
//! producer → consumer pairs form a legal link.

use super::inst::keyword_enum;

keyword_enum! {
    /// A programmable shader stage.
    Stage {
        /// Vertex shader.
        Vertex = "vs",
        /// Tessellation control shader.
        TessCtrl = "tcs",
        /// Tessellation evaluation shader.
        TessEval = "tes",
        /// Geometry shader.
        Geometry = "gs",
        /// Fragment shader.
        Fragment = "fs",
    }
}

keyword_enum! {
    /// A primitive type, for input assembly, TES domains and GS input/output.
    Primitive {
        /// Points.
        Points = "points",
        /// Independent lines.
        Lines = "lines",
        /// Line strips (GS output).
        LineStrip = "line_strip",
        /// Independent triangles.
        Triangles = "triangles",
        /// Triangle strips (GS output).
        TriangleStrip = "triangle_strip",
        /// Lines with adjacency (GS input).
        LinesAdjacency = "lines_adjacency",
        /// Triangles with adjacency (GS input).
        TrianglesAdjacency = "triangles_adjacency",
        /// Quads (TES domain).
        Quads = "quads",
        /// Isolines (TES domain).
        Isolines = "isolines",
    }
}

keyword_enum! {
    /// Which vertex of a primitive supplies flat inputs.
    ProvokingVertex {
        /// The first vertex (Vulkan default).
        First = "first",
        /// The last vertex (GL default).
        Last = "last",
    }
}

impl Primitive {
    /// Vertices per primitive as seen by the next stage (GS input count, FS
    /// rasterization). Strips are counted per assembled primitive.
    pub fn vertex_count(self) -> usize {
        match self {
            Primitive::Points => 1,
            Primitive::Lines | Primitive::LineStrip | Primitive::Isolines => 2,
            Primitive::Triangles | Primitive::TriangleStrip => 3,
            Primitive::LinesAdjacency | Primitive::Quads => 4,
            Primitive::TrianglesAdjacency => 6,
        }
    }
}

/// Execution parameters of one stage (the parts of NIR's `shader_info` that matter).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StageInfo {
    /// Vertex shader: the topology of the primitives it feeds when the next stage
    /// rasterizes or assembles them.
    Vertex {
        /// Input assembly topology (points, lines, triangles).
        topology: Primitive,
    },
    /// Tessellation control shader.
    TessCtrl {
        /// Vertices per input patch.
        input_vertices: u8,
        /// Vertices per output patch (= invocations).
        output_vertices: u8,
    },
    /// Tessellation evaluation shader.
    TessEval {
        /// Domain: triangles, quads or isolines.
        domain: Primitive,
        /// Vertices per input patch.
        input_vertices: u8,
        /// Emits points instead of the domain's primitives.
        point_mode: bool,
    },
    /// Geometry shader.
    Geometry {
        /// Input primitive.
        input: Primitive,
        /// Output primitive (points, line_strip, triangle_strip).
        output: Primitive,
        /// Maximum emitted vertices per invocation.
        max_vertices: u16,
        /// Invocations per input primitive.
        invocations: u8,
    },
    /// Fragment shader.
    Fragment {
        /// The vertex flat inputs come from.
        provoking: ProvokingVertex,
    },
}

impl StageInfo {
    /// The stage this info belongs to.
    pub fn stage(&self) -> Stage {
        match self {
            StageInfo::Vertex { .. } => Stage::Vertex,
            StageInfo::TessCtrl { .. } => Stage::TessCtrl,
            StageInfo::TessEval { .. } => Stage::TessEval,
            StageInfo::Geometry { .. } => Stage::Geometry,
            StageInfo::Fragment { .. } => Stage::Fragment,
        }
    }

    /// Default parameters for a stage (triangles, 3-vertex patches, first provoking vertex).
    pub fn default_for(stage: Stage) -> StageInfo {
        match stage {
            Stage::Vertex => StageInfo::Vertex {
                topology: Primitive::Triangles,
            },
            Stage::TessCtrl => StageInfo::TessCtrl {
                input_vertices: 3,
                output_vertices: 3,
            },
            Stage::TessEval => StageInfo::TessEval {
                domain: Primitive::Triangles,
                input_vertices: 3,
                point_mode: false,
            },
            Stage::Geometry => StageInfo::Geometry {
                input: Primitive::Triangles,
                output: Primitive::TriangleStrip,
                max_vertices: 3,
                invocations: 1,
            },
            Stage::Fragment => StageInfo::Fragment {
                provoking: ProvokingVertex::First,
            },
        }
    }

    /// The primitive this stage hands to rasterization or to a GS.
    pub fn output_primitive(&self) -> Option<Primitive> {
        match *self {
            StageInfo::Vertex { topology } => Some(topology),
            StageInfo::TessEval {
                domain, point_mode, ..
            } => Some(if point_mode {
                Primitive::Points
            } else if domain == Primitive::Isolines {
                Primitive::Lines
            } else {
                Primitive::Triangles
            }),
            StageInfo::Geometry { output, .. } => Some(output),
            _ => None,
        }
    }
}

impl Stage {
    /// Whether `self → consumer` is a link varysat optimizes.
    pub fn can_feed(self, consumer: Stage) -> bool {
        use Stage::*;
        matches!(
            (self, consumer),
            (Vertex, Fragment)
                | (TessEval, Fragment)
                | (Geometry, Fragment)
                | (Vertex, TessCtrl)
                | (TessCtrl, TessEval)
                | (Vertex, TessEval)
                | (Vertex, Geometry)
                | (TessEval, Geometry)
        )
    }

    /// Whether the stage reads its varying inputs per vertex (arrays indexed by vertex).
    pub fn has_per_vertex_inputs(self) -> bool {
        matches!(self, Stage::TessCtrl | Stage::TessEval | Stage::Geometry)
    }

    /// Every legal (producer, consumer) pair.
    pub fn pairs() -> Vec<(Stage, Stage)> {
        let mut out = vec![];
        for p in Stage::ALL {
            for c in Stage::ALL {
                if p.can_feed(*c) {
                    out.push((*p, *c));
                }
            }
        }
        out
    }
}
