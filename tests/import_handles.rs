//! Import of sampler and image handles that are not a plain variable (issue 16): a
//! sampler member of a uniform struct, and a dynamic index into an array of
//! samplers or images. GLSL sources are compiled by glslang (skipped outside CI
//! when it is missing); meanings are checked in the interpreter against the same
//! program written with constant indices only.

use std::collections::BTreeSet;
use std::path::PathBuf;

use varysat::import::{import_files, ImportOptions, GLSLANG};
use varysat::interpreter::{check_equivalent, EquivConfig};
use varysat::ir::{InstKind, Pipeline, Resource, Shader};
use varysat::{optimize, Options};

mod tool_support;

fn tools() -> bool {
    tool_support::installed(&[GLSLANG])
}

fn import(name: &str, vs: &str, fs: &str) -> Pipeline {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("varysat-import-handles-{name}"));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let paths: Vec<PathBuf> = [("a.vert", vs), ("a.frag", fs)]
        .iter()
        .map(|(file, text)| {
            let p = dir.join(file);
            std::fs::write(&p, text).expect("write source");
            p
        })
        .collect();
    import_files(&paths[0], &paths[1], &ImportOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn config() -> EquivConfig {
    EquivConfig {
        runs: 4,
        ..EquivConfig::default()
    }
}

/// Optimizes `p` and checks the result against it in the interpreter.
fn optimizes_equivalently(p: &Pipeline) {
    let out = optimize(p, &Options::new()).expect("optimize");
    assert!(out.report.fallback.is_none(), "{:?}", out.report.fallback);
    check_equivalent(p, &out.pipeline, &config()).unwrap_or_else(|e| panic!("{e}"));
}

/// The samplers a shader's texture reads use.
fn samplers(s: &Shader) -> BTreeSet<u32> {
    let mut out = BTreeSet::new();
    s.for_each_inst(|i| {
        if let InstKind::Texture { sampler, .. } = i.kind {
            out.insert(sampler);
        }
    });
    out
}

/// The images a shader's opaque image stores write.
fn written_images(s: &Shader) -> Vec<u32> {
    let mut out = vec![];
    s.for_each_inst(|i| {
        if let InstKind::Opaque { op, .. } = &i.kind {
            if let Some(Resource::Image(k)) = op.resource {
                out.push(k);
            }
        }
    });
    out
}

const VS: &str = "#version 450
layout(location=0) in vec4 pos;
layout(location=1) in vec2 uv;
layout(location=0) out vec2 v_uv;
void main() { gl_Position = pos; v_uv = uv; }
";

#[test]
fn sampler_members_of_uniform_structs_are_handles_beside_the_data() {
    if !tools() {
        return;
    }
    // piglit's `struct S { float a; sampler2D tex; ... }` uniforms: glslang keeps the
    // struct in the default block; the data members are uniform words (a, f, b),
    // each sampler a handle of its own, numbered in type order (t0, in_.t).
    let fs = "#version 450
struct Inner { float f; sampler2D t; };
struct S { float a; sampler2D t0; Inner in_; float b; };
uniform S s;
layout(location=0) in vec2 v_uv;
layout(location=0) out vec4 color;
void main() {
  color = texture(s.in_.t, v_uv) * s.b + vec4(s.a, s.in_.f, 0.0, 1.0);
}
";
    let p = import("struct", VS, fs);
    assert_eq!(samplers(&p.consumer), BTreeSet::from([1]));
    let mut words = BTreeSet::new();
    p.consumer.for_each_inst(|i| {
        if let InstKind::LoadUniform { index, .. } = i.kind {
            words.insert(index);
        }
    });
    assert_eq!(
        words,
        BTreeSet::from([0, 1, 2]),
        "{}",
        varysat::text::print(&p)
    );
    optimizes_equivalently(&p);
}

/// A fragment shader that reads `tex` of an array of 4 samplers at the index the
/// fragment's x coordinate picks (not dynamically uniform, which the interpreter
/// does not need, so every element is exercised).
fn indexed_fs(read: &str) -> String {
    format!(
        "#version 450
uniform sampler2D s[4];
layout(location=0) in vec2 v_uv;
layout(location=0) out vec4 color;
void main() {{
  int k = int(gl_FragCoord.x) & 3;
  color = {read};
}}
"
    )
}

#[test]
fn a_dynamic_index_into_samplers_reads_the_element_it_selects() {
    if !tools() {
        return;
    }
    let dynamic = import("dyn", VS, &indexed_fs("texture(s[k], v_uv)"));
    assert_eq!(samplers(&dynamic.consumer), BTreeSet::from([0, 1, 2, 3]));
    let by_cases = |order: [u32; 4]| {
        let read = format!(
            "k == 0 ? texture(s[{}], v_uv) : k == 1 ? texture(s[{}], v_uv) : \
             k == 2 ? texture(s[{}], v_uv) : texture(s[{}], v_uv)",
            order[0], order[1], order[2], order[3]
        );
        import(&format!("cases{order:?}"), VS, &indexed_fs(&read))
    };
    check_equivalent(&dynamic, &by_cases([0, 1, 2, 3]), &config())
        .unwrap_or_else(|e| panic!("{e}"));
    // The check can fail: elements 1 and 2 swapped differ.
    assert!(check_equivalent(&dynamic, &by_cases([0, 2, 1, 3]), &config()).is_err());
    optimizes_equivalently(&dynamic);
}

#[test]
fn dynamic_indices_through_arrays_of_structs_select_their_sampler() {
    if !tools() {
        return;
    }
    // piglit's `s[n][m].tex` with data members beside the sampler.
    let fs = |read: &str| {
        format!(
            "#version 450
struct S {{ float a; sampler2D t; }};
uniform S s[2][2];
layout(location=0) in vec2 v_uv;
layout(location=0) out vec4 color;
void main() {{
  int n = int(gl_FragCoord.x) & 1;
  int m = int(gl_FragCoord.y) & 1;
  color = {read};
}}
"
        )
    };
    let dynamic = import("dyn2", VS, &fs("texture(s[n][m].t, v_uv) * s[n][m].a"));
    let cases = "n == 0 ? (m == 0 ? texture(s[0][0].t, v_uv) * s[0][0].a \
                 : texture(s[0][1].t, v_uv) * s[0][1].a) \
                 : (m == 0 ? texture(s[1][0].t, v_uv) * s[1][0].a \
                 : texture(s[1][1].t, v_uv) * s[1][1].a)";
    let by_cases = import("cases2", VS, &fs(cases));
    assert_eq!(samplers(&dynamic.consumer), BTreeSet::from([0, 1, 2, 3]));
    check_equivalent(&dynamic, &by_cases, &config()).unwrap_or_else(|e| panic!("{e}"));
    optimizes_equivalently(&dynamic);
}

#[test]
fn a_dynamic_index_into_images_stores_to_the_element_it_selects() {
    if !tools() {
        return;
    }
    let fs = |store: &str| {
        format!(
            "#version 450
layout(rgba8) writeonly uniform image2D img[3];
layout(location=0) in vec2 v_uv;
void main() {{
  int k = int(gl_FragCoord.x) % 3;
  {store}
}}
"
        )
    };
    let dynamic = import(
        "img",
        VS,
        &fs("imageStore(img[k], ivec2(3, 4), vec4(v_uv, 0.0, 1.0));"),
    );
    let mut written = written_images(&dynamic.consumer);
    written.sort();
    assert_eq!(written, vec![0, 1, 2]);
    let store = |i: u32| format!("imageStore(img[{i}], ivec2(3, 4), vec4(v_uv, 0.0, 1.0));");
    let cases = format!(
        "if (k == 0) {{ {} }} else if (k == 1) {{ {} }} else if (k == 2) {{ {} }}",
        store(0),
        store(1),
        store(2)
    );
    let by_cases = import("img-cases", VS, &fs(&cases));
    check_equivalent(&dynamic, &by_cases, &config()).unwrap_or_else(|e| panic!("{e}"));
    optimizes_equivalently(&dynamic);
}
