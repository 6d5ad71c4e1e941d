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
    let mut pipe =
        Pipeline::new(produced.shader, consumer).with_uniforms(u32::from(r.uniforms).max(1));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{InstKind, Slot};

    #[test]
    fn minimal_vs_fs_is_position_plus_one_varying() {
        let p = build(&Recipe::minimal((Stage::Vertex, Stage::Fragment)));
        let expected = "(pair
  (uniforms 1)
  (producer vs
    (topology triangles)
    (%0 = load_input ATTR0.x)
    (%1 = const 32 1.0)
    (store_output POS.x %0)
    (store_output POS.y %0)
    (store_output POS.z %0)
    (store_output POS.w %1)
    (store_output VAR0.x %0))
  (consumer fs
    (provoking first)
    (%0 = load_interpolated_input VAR0.x persp center)
    (store_output DATA0.x %0)))
";
        assert_eq!(crate::text::print(&p), expected);
    }

    #[test]
    fn linked_parameters_agree_for_every_choice() {
        for pair in Stage::pairs() {
            for choice in 0..=255u8 {
                let mut r = Recipe::minimal(pair);
                r.producer_info = choice;
                r.consumer_info = choice.rotate_left(3);
                let (p, c) = stage_infos(&r, pair.0, pair.1);
                if let StageInfo::Geometry { input, .. } = c {
                    assert_eq!(p.output_primitive(), Some(input), "{pair:?} {choice}");
                }
                if let (
                    StageInfo::TessCtrl {
                        output_vertices, ..
                    },
                    StageInfo::TessEval { input_vertices, .. },
                ) = (&p, &c)
                {
                    assert_eq!(output_vertices, input_vertices);
                }
            }
        }
    }

    #[test]
    fn gs_max_vertices_covers_every_emit() {
        for emits in 1..=4u8 {
            for pair in [
                (Stage::Geometry, Stage::Fragment),
                (Stage::Vertex, Stage::Geometry),
            ] {
                let mut r = Recipe::minimal(pair);
                r.emits = emits;
                let p = build(&r);
                let gs = if pair.0 == Stage::Geometry {
                    &p.producer
                } else {
                    &p.consumer
                };
                let mut count = 0;
                gs.for_each_inst(|i| count += usize::from(i.kind == InstKind::EmitVertex));
                assert_eq!(count, usize::from(emits));
                let StageInfo::Geometry { max_vertices, .. } = gs.info else {
                    panic!("not a GS");
                };
                assert_eq!(usize::from(max_vertices), count);
            }
        }
    }

    #[test]
    fn illegal_pair_falls_back_to_vs_fs() {
        let p = build(&Recipe::minimal((Stage::Fragment, Stage::Vertex)));
        assert_eq!(p.producer.stage(), Stage::Vertex);
        assert_eq!(p.consumer.stage(), Stage::Fragment);
        let mut stores_var0 = false;
        p.producer.for_each_inst(|i| {
            if let InstKind::StoreOutput { slot, .. } = &i.kind {
                stores_var0 |= slot.slot == Slot::Var(0);
            }
        });
        assert!(stores_var0);
    }
}
