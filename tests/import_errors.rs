//! Import failures are `Error::Import` diagnostics, never panics; the desktop-GL
//! rewrite produces the documented text.

use std::path::Path;

use varysat::import::{import_files, import_spirv, rewrite_desktop_glsl, ImportOptions, GLSLANG};
use varysat::{Error, Stage};

#[test]
fn garbage_bytes_are_an_import_error() {
    let opts = ImportOptions::default();
    for bytes in [
        &b""[..],
        &b"abc"[..],
        &[0u8; 40][..],
        &[
            0x03, 0x02, 0x23, 0x07, 0, 0, 1, 0, 9, 9, 9, 9, 1, 0, 0, 0, 0, 0, 0, 0,
        ][..],
    ] {
        match import_spirv(bytes, bytes, &opts) {
            Err(Error::Import(d)) => assert!(d.to_string().contains("error:"), "{d}"),
            other => panic!("expected an import error, got {other:?}"),
        }
    }
}

#[test]
fn desktop_rewrite_is_line_preserving() {
    let src = "#version 120\nattribute vec2 p;\nvarying vec2 uv;\nvoid main() { uv = p; }\n";
    let out = rewrite_desktop_glsl(src, Stage::Vertex).expect("1.20 is rewritten");
    assert_eq!(
        out,
        "#version 450\n#line 2\nin vec2 p;\nout vec2 uv;\nvoid main() { uv = p; }\n"
    );
    let fs = "varying vec2 uv;\nuniform sampler2D t;\nvoid main() { gl_FragColor = texture2D(t, uv); }\n";
    let out = rewrite_desktop_glsl(fs, Stage::Fragment).expect("no #version is rewritten");
    assert_eq!(
        out,
        "#version 450\nlayout(location = 0) out vec4 varysat_FragColor;\n#line 1\nin vec2 uv;\nuniform sampler2D t;\n\
         void main() { varysat_FragColor = texture(t, uv); }\n"
    );
    // Identifiers that merely contain a keyword are left alone.
    let keep = "#version 110\nvarying float my_varying_x;\n";
    assert_eq!(
        rewrite_desktop_glsl(keep, Stage::Fragment).as_deref(),
        Some("#version 450\n#line 2\nin float my_varying_x;\n")
    );
    assert_eq!(
        rewrite_desktop_glsl("#version 450\nin vec2 a;\n", Stage::Fragment),
        None
    );
}

mod tool_support;

fn tools() -> bool {
    tool_support::installed(&[GLSLANG])
}

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p
}

#[test]
fn unsupported_instruction_is_named_with_its_id() {
    if !tools() {
        return;
    }
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("varysat-err-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp");
    let vs = write(
        &dir,
        "d.vert",
        "#version 450\nout float v;\nvoid main() { v = 1.0; gl_Position = vec4(0.0); }\n",
    );
    let fs = write(
        &dir,
        "d.frag",
        "#version 450\nin float v;\nlayout(location=0) out vec4 c;\nlayout(r32ui, binding=0) uniform uimage2D img[300];\nvoid main() { c = vec4(float(imageAtomicAdd(img[int(v)], ivec2(0), 1u)) + v); }\n",
    );
    let bad_pair = import_files(&vs, &fs, &ImportOptions::default());
    let wrong_order = import_files(&fs, &vs, &ImportOptions::default());
    let syntax = write(
        &dir,
        "s.vert",
        "#version 450\nvoid main() {\n  nope = 1;\n}\n",
    );
    let syntax = import_files(&syntax, &fs, &ImportOptions::default());
    let _ = std::fs::remove_dir_all(&dir);
    match bad_pair {
        Err(Error::Import(d)) => {
            let m = d.to_string();
            // An image atomic through a dynamic index into more images than the
            // importer makes guarded candidates for.
            assert!(m.contains("OpImageTexelPointer %"), "{m}");
            assert!(
                m.contains("dynamic index selects among more than 256 samplers"),
                "{m}"
            );
            assert!(m.contains("d.frag"), "{m}");
        }
        other => panic!("an image atomic on a dynamic image must be rejected: {other:?}"),
    }
    match wrong_order {
        Err(Error::Import(d)) => assert!(d.message.contains("cannot feed"), "{d}"),
        other => panic!("FS -> VS must be rejected: {other:?}"),
    }
    match syntax {
        Err(Error::Import(d)) => {
            assert_eq!(d.loc.map(|l| l.line), Some(3), "{d}");
            assert!(d.message.contains("nope"), "{d}");
        }
        other => panic!("a GLSL error must be reported: {other:?}"),
    }
}

#[test]
fn glsl_below_330_is_rewritten_and_330_is_left_alone() {
    use varysat::import::rewrite_desktop_glsl;
    use varysat::ir::Stage;
    // glslang compiles desktop GLSL to SPIR-V only from version 330 on.
    let v150 = "#version 150\nin vec4 p;\nvoid main() { gl_Position = p; }\n";
    let out = rewrite_desktop_glsl(v150, Stage::Vertex).expect("1.50 is rewritten");
    assert!(out.starts_with("#version 450\n#line 2\n"), "{out}");
    assert!(out.contains("in vec4 p;"), "{out}");
    let v330 = "#version 330\nin vec4 p;\nvoid main() { gl_Position = p; }\n";
    assert_eq!(rewrite_desktop_glsl(v330, Stage::Vertex), None);
}

/// A TES that passes a whole per-vertex `mat4` array to a function `calls` times:
/// each call loads all 32 vertices' 16 components (512 values) and selects one of
/// them by a dynamic index, so the translation grows about 1,000 values a call.
fn whole_array_calls_tes(calls: usize) -> String {
    let mut s = String::from(
        "#version 450\nlayout(triangles) in;\nlayout(location = 0) in mat4 m[];\n\
         layout(location = 0) out vec4 o;\n\
         vec4 pick(mat4 x[gl_MaxPatchVertices], int k) { return x[k][1]; }\n\
         void main() {\n  int k = int(gl_TessCoord.x * 2.0);\n  vec4 s = vec4(0.0);\n",
    );
    for _ in 0..calls {
        s.push_str("  s += pick(m, k);\n");
    }
    s.push_str("  o = s;\n  gl_Position = s;\n}\n");
    s
}

/// SPIR-V of a GLSL file as glslang writes it, unoptimized (`spirv-opt`, which GLSL
/// import runs, would inline the calls and drop the array copies).
fn raw_spirv(dir: &Path, name: &str, src: &str) -> Vec<u8> {
    let path = write(dir, name, src);
    let spv = dir.join(format!("{name}.spv"));
    let o = std::process::Command::new(GLSLANG)
        .arg("-V")
        .arg(&path)
        .arg("-o")
        .arg(&spv)
        .output()
        .expect("runs glslang");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    std::fs::read(&spv).expect("read module")
}

/// Found by the `import_spirv` fuzz target as a timeout: a few kilobytes of SPIR-V
/// whose whole-array loads and inlined calls made the translation create hundreds of
/// thousands of values. The translation now stops at a value budget with a clear error,
/// and a module of the same shape below it still imports.
#[test]
fn a_module_expanding_past_the_value_budget_is_an_import_error() {
    if !tools() {
        return;
    }
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("varysat-budget-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp");
    let fs = "#version 450\nlayout(location = 0) in vec4 o;\nlayout(location = 0) out vec4 c;\n\
              void main() { c = o; }\n";
    let fs = raw_spirv(&dir, "b.frag", fs);
    let small = raw_spirv(&dir, "small.tese", &whole_array_calls_tes(8));
    let large = raw_spirv(&dir, "large.tese", &whole_array_calls_tes(400));
    let _ = std::fs::remove_dir_all(&dir);
    let opts = ImportOptions::default();
    let small = import_spirv(&small, &fs, &opts).expect("8 whole-array calls import");
    assert!(
        small.producer.values.len() > 8 * 512,
        "each call loads 512 values"
    );
    match import_spirv(&large, &fs, &opts) {
        Err(Error::Import(d)) => {
            let m = d.to_string();
            assert!(m.contains("more than 262144 values"), "{m}");
        }
        Err(e) => panic!("expected the value budget's error, got {e}"),
        Ok(p) => panic!(
            "400 whole-array calls must exceed the value budget, imported {} values",
            p.producer.values.len()
        ),
    }
}
