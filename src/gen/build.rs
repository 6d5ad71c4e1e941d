//! Turns any recipe into a well-formed pipeline, deterministically: stage parameters
//! from the recipe's choices (kept consistent across the link), then the producer, whose
//! stored varyings decide what the consumer reads.

use super::recipe::Recipe;
use crate::ir::{Pipeline, Primitive, ProvokingVertex, Stage, StageInfo};

/// Builds the pair a recipe describes. An illegal stage pair falls back to VS → FS.
pub fn build(r: &Recipe) -> Pipeline {
    let (p, c) = if r.pair.0.can_feed(r.pair.1) {
        r.pair
    } else {
        (Stage::Vertex, Stage::Fragment)
    };
    let (pinfo, cinfo) = stage_infos(r, p, c);
    let produced = super::producer::build(r, pinfo, c);
    let consumer = super::consumer::build(r, cinfo, &produced.reads);
    let mut pipe = Pipeline::new(produced.shader, consumer).with_uniforms(u32::from(r.uniforms).max(1));
    if r.ubo_words > 0 {
        pipe = pipe.with_ubo(0, u32::from(r.ubo_words) * 4);
    }
    pipe
}

const RASTER: [Primitive; 3] = [Primitive::Triangles, Primitive::Lines, Primitive::Points];
const DOMAINS: [Primitive; 3] = [Primitive::Triangles, Primitive::Quads, Primitive::Isolines];
const STRIPS: [Primitive; 3] = [
    Primitive::TriangleStrip,
    Primitive::LineStrip,
    Primitive::Points,
];

fn pick<T: Copy>(list: &[T], choice: u8) -> T {
    list[usize::from(choice) % list.len()]
}

/// Stage parameters for both sides, consistent across the link: a GS input matches the
/// primitive its producer hands on; a TES patch matches the TCS output patch.
fn stage_infos(r: &Recipe, p: Stage, c: Stage) -> (StageInfo, StageInfo) {
    let (pc, cc) = (r.producer_info, r.consumer_info);
    let emits = r.emits.clamp(1, 4);
    let pinfo = match p {
        Stage::Vertex if matches!(c, Stage::TessCtrl | Stage::TessEval) => StageInfo::Vertex {
            topology: Primitive::Triangles,
        },
        Stage::Vertex => StageInfo::Vertex {
            topology: pick(&RASTER, pc),
        },
        Stage::TessCtrl => StageInfo::TessCtrl {
            input_vertices: 1 + pc % 4,
            output_vertices: 1 + (pc / 4) % 4,
        },
        Stage::TessEval => tes_info(pc, 1 + (pc / 6) % 4),
        _ => StageInfo::Geometry {
            input: pick(&RASTER, pc),
            output: pick(&STRIPS, pc / 3),
            max_vertices: u16::from(emits),
            invocations: 1 + (pc / 9) % 2,
        },
    };
    let cinfo = match c {
        Stage::TessCtrl => StageInfo::TessCtrl {
            input_vertices: 1 + cc % 4,
            output_vertices: 1 + (cc / 4) % 4,
        },
        Stage::TessEval => {
            let patch = match pinfo {
                StageInfo::TessCtrl {
                    output_vertices, ..
                } => output_vertices,
                _ => 1 + (cc / 6) % 4,
            };
            tes_info(cc, patch)
        }
        Stage::Geometry => StageInfo::Geometry {
            input: pinfo.output_primitive().unwrap_or(Primitive::Triangles),
            output: pick(&STRIPS, cc),
            max_vertices: u16::from(emits),
            invocations: 1 + (cc / 3) % 2,
        },
        _ => StageInfo::Fragment {
            provoking: pick(&[ProvokingVertex::First, ProvokingVertex::Last], cc),
        },
    };
    (pinfo, cinfo)
}

fn tes_info(choice: u8, input_vertices: u8) -> StageInfo {
    StageInfo::TessEval {
        domain: pick(&DOMAINS, choice),
        input_vertices,
        point_mode: (choice / 3) % 2 == 1,
    }
}
