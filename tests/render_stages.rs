//! Differential rendering of whole stage sets with tessellation or a geometry
//! shader on lavapipe: each corpus stem with a .vert, a .frag and .tesc/.tese or
//! .geom between them is drawn as compiled, then with every adjacent pair of its
//! stages replaced by the pair's export, round trip and optimized (the other
//! stages stay as compiled). Same tolerance as `tests/render.rs`.

mod render_support;

use std::path::Path;

use render_support::harness::{corpus, gpu, words};
use render_support::{compare, coverage, Gpu, Setup, Stages};
use varysat::import::{import_files_with_modules, stage_from_extension, ImportOptions};
use varysat::ir::Stage;

/// The primitive topology a geometry shader's input execution mode asks for.
fn gs_input_topology(words: &[u32]) -> ash::vk::PrimitiveTopology {
    use ash::vk::PrimitiveTopology as T;
    use rspirv::dr::Operand;
    use rspirv::spirv::ExecutionMode as M;
    let Ok(m) = rspirv::dr::load_words(words) else {
        return T::TRIANGLE_LIST;
    };
    for i in &m.execution_modes {
        match i.operands.get(1) {
            Some(Operand::ExecutionMode(M::InputPoints)) => return T::POINT_LIST,
            Some(Operand::ExecutionMode(M::InputLines)) => return T::LINE_LIST,
            Some(Operand::ExecutionMode(M::InputLinesAdjacency)) => {
                return T::LINE_LIST_WITH_ADJACENCY
            }
            Some(Operand::ExecutionMode(M::InputTrianglesAdjacency)) => {
                return T::TRIANGLE_LIST_WITH_ADJACENCY
            }
            _ => {}
        }
    }
    T::TRIANGLE_LIST
}

/// The output patch size a TCS declares, `None` for other modules. The corpus TCSs
/// pass one input vertex per invocation through (`gl_in[gl_InvocationID]`), so the
/// input patch must be that large: with fewer control points the last invocations
/// read past the patch, which is undefined and may change with any optimization.
fn tcs_output_vertices(words: &[u32]) -> Option<u32> {
    use rspirv::dr::Operand;
    use rspirv::spirv::ExecutionMode as M;
    let m = rspirv::dr::load_words(words).ok()?;
    m.execution_modes
        .iter()
        .find_map(|i| match i.operands.get(1..3) {
            Some([Operand::ExecutionMode(M::OutputVertices), Operand::LiteralBit32(n)]) => Some(*n),
            _ => None,
        })
}

/// A stage set of the corpus: every stage file of one stem, in pipeline order.
fn stage_sets() -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(corpus().join("pairs.txt")).expect("pairs.txt");
    let mut stems: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for f in text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .flat_map(str::split_whitespace)
    {
        let stem = f.rsplit_once('.').map_or(f, |(s, _)| s).to_owned();
        let files = stems.entry(stem).or_default();
        if !files.iter().any(|x| x == f) {
            files.push(f.to_owned());
        }
    }
    let order = |f: &String| stage_from_extension(Path::new(f)).map(|s| s as usize);
    stems
        .into_values()
        .map(|mut v| {
            v.sort_by_key(order);
            v
        })
        .filter(|v| {
            let st: Vec<_> = v
                .iter()
                .filter_map(|f| stage_from_extension(Path::new(f)))
                .collect();
            let tess = st.contains(&Stage::TessCtrl) == st.contains(&Stage::TessEval);
            st.first() == Some(&Stage::Vertex)
                && st.last() == Some(&Stage::Fragment)
                && st.len() > 2
                && tess
        })
        .collect()
}

fn set_stage(s: &mut Stages, stage: Stage, words: Vec<u32>) {
    match stage {
        Stage::Vertex => s.vert = words,
        Stage::TessCtrl => s.tesc = Some(words),
        Stage::TessEval => s.tese = Some(words),
        Stage::Geometry => s.geom = Some(words),
        Stage::Fragment => s.frag = words,
    }
}

/// Renders a whole stage set as compiled, then with each adjacent pair replaced by
/// its round trip and by its optimized export.
fn check_set(gpu: &Gpu, files: &[String]) -> Result<usize, String> {
    let d = corpus();
    let stage = |f: &str| stage_from_extension(Path::new(f)).expect("stage");
    let mut original = Stages::default();
    for f in files {
        let w = varysat::import::compile_glsl(&d.join(f), true).map_err(|e| e.to_string())?;
        set_stage(&mut original, stage(f), words(&w));
    }
    let topology = match (&original.tesc, &original.geom) {
        (Some(_), _) => ash::vk::PrimitiveTopology::PATCH_LIST,
        (None, Some(g)) => gs_input_topology(g),
        _ => ash::vk::PrimitiveTopology::TRIANGLE_LIST,
    };
    let patch_vertices = original.tesc.as_deref().and_then(tcs_output_vertices);
    let import = ImportOptions {
        patch_vertices: patch_vertices.map_or(3, |n| n as u8),
        ..ImportOptions::default()
    };
    let mut variants = vec![];
    for w in files.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let ((pipe, _), (pm, cm)) = import_files_with_modules(&d.join(a), &d.join(b), &import)
            .map_err(|e| format!("{a} + {b}: {e}"))?;
        let outcome =
            varysat::optimize(&pipe, &varysat::Options::new()).map_err(|e| e.to_string())?;
        for (what, p) in [("round trip", &pipe), ("optimized", &outcome.pipeline)] {
            let (x, y) = varysat::export::pipeline_to_spirv(p, &pm, &cm)
                .map_err(|e| format!("{a} + {b} {what}: {e}"))?;
            let mut s = original.clone();
            set_stage(&mut s, stage(a), x);
            set_stage(&mut s, stage(b), y);
            variants.push((format!("{a} + {b} {what}"), s));
        }
    }
    let mut all: Vec<&Stages> = vec![&original];
    all.extend(variants.iter().map(|(_, s)| s));
    let setup = Setup::of(&all, topology, patch_vertices.unwrap_or(3));
    let want = gpu.render(&original, &setup)?;
    for (what, s) in &variants {
        let got = gpu.render(s, &setup).map_err(|e| format!("{what}: {e}"))?;
        for (x, y) in want.iter().zip(&got) {
            let (bad, msg) = compare(x, y);
            if bad > 0 {
                return Err(format!("{what}: {msg}"));
            }
        }
    }
    Ok(coverage(&want))
}

#[test]
fn corpus_tess_and_gs_pipelines_render_identically() {
    let Some(gpu) = gpu() else { return };
    let mut failures = vec![];
    let sets = stage_sets();
    assert!(sets.len() >= 4, "{} tess/GS stage sets", sets.len());
    let mut drawn = 0;
    for files in &sets {
        match check_set(&gpu, files) {
            Ok(px) => {
                eprintln!("{}: identical, {px} pixels covered", files.join(" "));
                drawn += (px > 0) as usize;
            }
            Err(e) => failures.push(format!("{}: {e}", files.join(" "))),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(drawn >= 3, "only {drawn} stage sets drew anything");
}
