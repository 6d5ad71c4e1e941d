//! Stage pairing, stage parameters and UBO declarations.

use super::*;
use crate::ir::{Primitive, StageInfo};

fn with_info(mut b: ShaderBuilder, info: StageInfo) -> ShaderBuilder {
    b.info(info);
    b
}

#[test]
fn illegal_stage_pair() {
    // Both shaders are fine on their own; only the link is wrong.
    assert_one(&pair(fs(), vs()), "a fs producer cannot feed a vs consumer");
    assert_one(
        &pair(tes(), tcs()),
        "a tes producer cannot feed a tcs consumer",
    );
}

#[test]
fn tcs_vertex_counts_are_bounded() {
    let info = |i, o| StageInfo::TessCtrl {
        input_vertices: i,
        output_vertices: o,
    };
    assert_one(
        &pair(vs(), with_info(tcs(), info(3, 0))),
        "tcs `output_vertices` must be in 1..=32, found 0",
    );
    assert_one(
        &pair(vs(), with_info(tcs(), info(33, 3))),
        "tcs `input_vertices` must be in 1..=32, found 33",
    );
    assert_valid(&pair(vs(), with_info(tcs(), info(32, 1))));
}

#[test]
fn tes_parameters() {
    let info = |domain, n| StageInfo::TessEval {
        domain,
        input_vertices: n,
        point_mode: false,
    };
    assert_one(
        &pair(vs(), with_info(tes(), info(Primitive::Points, 3))),
        "tes domain must be triangles, quads or isolines, found points",
    );
    assert_one(
        &pair(vs(), with_info(tes(), info(Primitive::Quads, 0))),
        "tes `input_vertices` must be in 1..=32, found 0",
    );
    assert_valid(&pair(vs(), with_info(tes(), info(Primitive::Isolines, 4))));
}

#[test]
fn tes_patch_size_matches_tcs_output() {
    let tcs4 = with_info(
        tcs(),
        StageInfo::TessCtrl {
            input_vertices: 3,
            output_vertices: 4,
        },
    );
    assert_one(
        &pair(tcs4, tes()),
        "tes `input_vertices` 3 must equal the tcs `output_vertices` 4",
    );
}

#[test]
fn gs_parameters() {
    let info = |input, output, max, inv| StageInfo::Geometry {
        input,
        output,
        max_vertices: max,
        invocations: inv,
    };
    use Primitive::*;
    let check = |i: StageInfo, msg: &str| assert_one(&pair(vs(), with_info(gs(), i)), msg);
    check(
        info(Triangles, TriangleStrip, 1025, 1),
        "gs `max_vertices` must be in 1..=1024, found 1025",
    );
    check(
        info(Triangles, TriangleStrip, 3, 0),
        "gs `invocations` must be in 1..=32, found 0",
    );
    // quads has 4 vertices, so the base shader's constant vertex indices stay in range.
    check(
        info(Quads, TriangleStrip, 3, 1),
        "gs input must be points, lines, triangles, lines_adjacency or triangles_adjacency, found quads",
    );
    check(
        info(Triangles, Triangles, 3, 1),
        "gs output must be points, line_strip or triangle_strip, found triangles",
    );
    assert_valid(&pair(
        vs(),
        with_info(gs(), info(TrianglesAdjacency, Points, 1024, 32)),
    ));
}

#[test]
fn vs_topology() {
    let b = with_info(
        vs(),
        StageInfo::Vertex {
            topology: Primitive::LineStrip,
        },
    );
    assert_one(
        &pair(b, fs()),
        "vs topology must be points, lines or triangles, found line_strip",
    );
}

#[test]
fn ubo_declarations() {
    let p = pair(vs(), fs()).with_ubo(0, 16).with_ubo(0, 32);
    assert_one(&p, "UBO block 0 is declared more than once");
    let p = pair(vs(), fs()).with_ubo(1, 6);
    assert_one(
        &p,
        "UBO block 1 has size 6, which is not a multiple of 4 bytes",
    );
}

#[test]
fn problems_in_both_shaders_are_all_reported() {
    let bad_vs = with_info(
        vs(),
        StageInfo::Vertex {
            topology: Primitive::Quads,
        },
    );
    let mut bad_fs = fs();
    bad_fs.effect(crate::ir::InstKind::Barrier);
    assert_eq!(
        messages(&pair(bad_vs, bad_fs)),
        vec![
            "vs topology must be points, lines or triangles, found quads".to_owned(),
            "`barrier` is only legal in a tessellation control shader, not in fs".to_owned(),
        ]
    );
}
