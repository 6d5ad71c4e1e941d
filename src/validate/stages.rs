//! Pipeline-level checks: the producer → consumer pair is a legal link, each stage's
//! parameters are in range and fit its role, and the UBO declarations are sane.

use std::collections::BTreeMap;

use crate::error::Diagnostic;
use crate::ir::{InstKind, Pipeline, Primitive, Shader, Slot, Stage, StageInfo};

use super::context::Ctx;

/// Largest patch size and TCS/GS invocation count (GL/Vulkan minimum maximums).
const MAX_PATCH_VERTICES: u8 = 32;
/// Largest GS `max_vertices` (GL_MAX_GEOMETRY_OUTPUT_VERTICES minimum maximum).
const MAX_GS_VERTICES: u16 = 1024;

/// Checks the link, the TCS → TES patch size and the UBO declarations.
pub(super) fn check_pipeline(p: &Pipeline, diags: &mut Vec<Diagnostic>) {
    let file = p.source.as_deref();
    let (prod, cons) = (p.producer.stage(), p.consumer.stage());
    let shader_loc = p.consumer.loc.or(p.producer.loc);
    if !prod.can_feed(cons) {
        let msg = format!("a {prod} producer cannot feed a {cons} consumer");
        diags.push(Diagnostic::new(file, shader_loc, msg));
    }
    if let (
        StageInfo::TessCtrl {
            output_vertices, ..
        },
        StageInfo::TessEval { input_vertices, .. },
    ) = (&p.producer.info, &p.consumer.info)
    {
        if output_vertices != input_vertices {
            let msg = format!(
                "tes `input_vertices` {input_vertices} must equal the tcs `output_vertices` {output_vertices}"
            );
            diags.push(Diagnostic::new(file, p.consumer.loc, msg));
        }
    }
    check_ubos(p, diags);
}

fn check_ubos(p: &Pipeline, diags: &mut Vec<Diagnostic>) {
    let file = p.source.as_deref();
    let mut seen = BTreeMap::new();
    for ubo in &p.ubos {
        if seen.insert(ubo.block, ubo.loc).is_some() {
            let msg = format!("UBO block {} is declared more than once", ubo.block);
            diags.push(Diagnostic::new(file, ubo.loc, msg));
        }
        if !ubo.size.is_multiple_of(4) {
            let msg = format!(
                "UBO block {} has size {}, which is not a multiple of 4 bytes",
                ubo.block, ubo.size
            );
            diags.push(Diagnostic::new(file, ubo.loc, msg));
        }
    }
}

/// Checks the shader's own parameters.
pub(super) fn check_info(ctx: &mut Ctx<'_>) {
    let loc = ctx.shader.loc;
    for msg in info_problems(&ctx.shader.info) {
        ctx.error(loc, msg);
    }
    if let Some(msg) = viewport_relative_problem(ctx.shader) {
        ctx.error(loc, msg);
    }
}

/// `layer_viewport_relative` adds the viewport of each viewport-mask copy to the
/// layer: it needs a pre-rasterization stage that stores `VIEWPORT_MASK`. (GL also
/// adds a plain `gl_ViewportIndex` without a mask; varysat does not model that.)
fn viewport_relative_problem(s: &Shader) -> Option<String> {
    if !s.layer_viewport_relative {
        return None;
    }
    let stage = s.stage();
    if !matches!(stage, Stage::Vertex | Stage::TessEval | Stage::Geometry) {
        return Some(format!(
            "`layer_viewport_relative` is a flag of a vs, tes or gs layer output, not of a {stage}"
        ));
    }
    let mut masked = false;
    s.for_each_inst(|i| {
        if let InstKind::StoreOutput { slot, .. } = &i.kind {
            masked |= slot.slot == Slot::ViewportMask;
        }
    });
    (!masked).then(|| {
        "`layer_viewport_relative` without a `VIEWPORT_MASK` store (a layer relative to `VIEWPORT` alone is not modelled)".to_owned()
    })
}

fn info_problems(info: &StageInfo) -> Vec<String> {
    use Primitive::*;
    let mut out = vec![];
    let mut range = |what: &str, v: u32, max: u32| {
        if !(1..=max).contains(&v) {
            out.push(format!("{what} must be in 1..={max}, found {v}"));
        }
    };
    let max_patch = MAX_PATCH_VERTICES as u32;
    let kind = match *info {
        StageInfo::Vertex { topology } => {
            ("vs topology", topology, &[Points, Lines, Triangles][..])
        }
        StageInfo::TessCtrl {
            input_vertices,
            output_vertices,
        } => {
            range("tcs `input_vertices`", input_vertices.into(), max_patch);
            range("tcs `output_vertices`", output_vertices.into(), max_patch);
            return out;
        }
        StageInfo::TessEval {
            domain,
            input_vertices,
            ..
        } => {
            range("tes `input_vertices`", input_vertices.into(), max_patch);
            ("tes domain", domain, &[Triangles, Quads, Isolines][..])
        }
        StageInfo::Geometry {
            input,
            output,
            max_vertices,
            invocations,
        } => {
            range(
                "gs `max_vertices`",
                max_vertices.into(),
                MAX_GS_VERTICES.into(),
            );
            range("gs `invocations`", invocations.into(), max_patch);
            let inputs = [Points, Lines, Triangles, LinesAdjacency, TrianglesAdjacency];
            if let Some(msg) = primitive_problem("gs input", input, &inputs) {
                out.push(msg);
            }
            ("gs output", output, &[Points, LineStrip, TriangleStrip][..])
        }
        StageInfo::Fragment { .. } => return out,
    };
    if let Some(msg) = primitive_problem(kind.0, kind.1, kind.2) {
        out.push(msg);
    }
    out
}

fn primitive_problem(what: &str, found: Primitive, allowed: &[Primitive]) -> Option<String> {
    if allowed.contains(&found) {
        return None;
    }
    let names: Vec<&str> = allowed.iter().map(|p| p.keyword()).collect();
    Some(format!("{what} must be {}, found {found}", or_list(&names)))
}

/// `a, b or c`.
pub(super) fn or_list(items: &[&str]) -> String {
    match items.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        Some((last, _)) => (*last).to_owned(),
        None => String::new(),
    }
}
