//! GLSL front end: runs `glslangValidator` (Debian `glslang-tools`) into a private
//! temporary directory, optionally `spirv-opt -O` (Debian `spirv-tools`), and
//! rewrites desktop-GL GLSL 1.x to a version glslang compiles for SPIR-V.
//!
//! The desktop-GL rewrite, applied when the source has no `#version` or a version
//! below 330 (glslang compiles desktop GLSL for SPIR-V only from 330 on; GLSL 1.40 -
//! 1.50 code is valid 4.50 code once the version changes, and the 1.x words below do
//! not occur in it): the version becomes `450`; in a vertex shader `attribute` becomes `in`
//! and `varying` becomes `out`, in a fragment shader `varying` becomes `in`;
//! the dimension-named texture built-ins (`texture2D`, `shadow2DProj`,
//! `texelFetch2D`, and those of `GL_EXT_gpu_shader4`) take their core names (see
//! `legacy_texture.rs`); `gl_FragColor` becomes an output
//! declared at location 0 and `gl_FragData[i]` an output array at locations 0-7.
//! Loose (non-block) uniforms compile as OpenGL-flavoured SPIR-V (`glslangValidator
//! -G`). A `#line` directive keeps the reported line numbers those of the original
//! file. Compatibility-profile built-ins (`gl_Vertex`, `ftransform`,
//! `gl_ModelViewProjectionMatrix`, `gl_FrontColor`, …) are declared as ordinary
//! variables (see `compat.rs`); a `compatibility` profile shader of a later version
//! is rewritten the same way.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use super::explicit::Explicit;
use super::files::{fail, stage_from_extension};
use super::glsl_cache;
use crate::ir::{SrcLoc, Stage};
use crate::{Diagnostic, Error};

/// The glslang compiler binary.
pub const GLSLANG: &str = "glslangValidator";
/// The SPIR-V optimizer binary.
pub const SPIRV_OPT: &str = "spirv-opt";

/// Whether a tool can be run (it answers `--version`).
pub fn tool_available(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// A directory removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<TempDir, Error> {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("varysat-{}-{n}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|source| Error::Io {
            path: dir.display().to_string(),
            source,
        })?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Compiles one GLSL file (stage from its extension) to SPIR-V.
pub fn compile_glsl(path: &Path, spirv_opt: bool) -> Result<Vec<u8>, Error> {
    compile_glsl_with_notes(path, spirv_opt).map(|(spirv, _)| spirv)
}

/// A compiled GLSL file: its SPIR-V, the front end's notes about it and which
/// interface variables its source located explicitly.
pub(crate) struct CompiledGlsl {
    pub spirv: Vec<u8>,
    pub notes: Vec<String>,
    pub explicit: Explicit,
}

/// [`compile_glsl`], also returning what the front end assumed that the source did
/// not say (a geometry shader's missing layouts, see `gs_layout.rs`), each note
/// prefixed with the file name.
pub fn compile_glsl_with_notes(
    path: &Path,
    spirv_opt: bool,
) -> Result<(Vec<u8>, Vec<String>), Error> {
    compile_glsl_explicit(path, spirv_opt, None).map(|c| (c.spirv, c.notes))
}

/// [`compile_glsl_with_notes`], also reading which varyings the source located
/// (glslang's AST dump, see `explicit.rs`); with `cache`, a stage compiled before
/// (the same source as glslang receives it) is taken from there (`glsl_cache.rs`).
pub(crate) fn compile_glsl_explicit(
    path: &Path,
    spirv_opt: bool,
    cache: Option<&Path>,
) -> Result<CompiledGlsl, Error> {
    let file = path.display().to_string();
    let stage = stage_from_extension(path).ok_or_else(|| {
        fail(
            &file,
            "cannot tell the stage: use .vert, .tesc, .tese, .geom or .frag",
        )
    })?;
    let text = crate::input::read_text(path)?;
    let gs4 = stage == Stage::Geometry && super::gs4::enables(&text);
    let mut source = rewrite_desktop_glsl(&text, stage).unwrap_or_else(|| text.clone());
    let mut notes = vec![];
    if stage == Stage::Geometry {
        if let Some((with_layout, note)) = super::gs_layout::add_missing(&source, gs4) {
            source = with_layout;
            notes.push(format!("{file}: {note}"));
        }
    }
    let ext = match stage {
        Stage::Vertex => "vert",
        Stage::TessCtrl => "tesc",
        Stage::TessEval => "tese",
        Stage::Geometry => "geom",
        Stage::Fragment => "frag",
    };
    let key = glsl_cache::key(ext, spirv_opt, &source);
    let compiled = match cache.and_then(|dir| glsl_cache::lookup(dir, &key)) {
        Some(hit) => hit,
        None => {
            let compiled = compile_source(&source, ext, spirv_opt, &file)?;
            if let Some(dir) = cache {
                glsl_cache::store(dir, &key, &compiled);
            }
            compiled
        }
    };
    match compiled {
        Ok((spirv, ast)) => Ok(CompiledGlsl {
            spirv,
            notes,
            explicit: Explicit::from_ast(&ast, &text),
        }),
        // glslang names the temporary copy; the user knows their own file.
        Err(report) => Err(glslang_error(&file, &report.replace(SOURCE_MARK, &file))),
    }
}

/// Stands for the compiled file's name in a glslang report ([`compile_source`]).
const SOURCE_MARK: &str = "@varysat-source@";

/// Compiles a stage's source (as glslang receives it) in a private temporary
/// directory: glslang ([`compile_retrying`]), then `spirv-opt -O` when `spirv_opt`.
/// The SPIR-V and the AST dump's linker objects (`explicit::linker_objects`), or
/// glslang's report with the file named [`SOURCE_MARK`]. `file` names the user's
/// file in errors of the tools themselves.
fn compile_source(
    source: &str,
    ext: &str,
    spirv_opt: bool,
    file: &str,
) -> Result<super::glsl_cache::Compiled, Error> {
    let dir = TempDir::new()?;
    let src = dir.0.join(format!("shader.{ext}"));
    write(&src, source)?;
    let out = dir.0.join("shader.spv");
    let ast = match compile_retrying(&src, source, &out)? {
        Ok(ast) => super::explicit::linker_objects(&ast),
        Err(report) => return Ok(Err(report.replace(&src.display().to_string(), SOURCE_MARK))),
    };
    if spirv_opt {
        let opt = dir.0.join("opt.spv");
        // spirv-opt's validator rejects some of what glslang's OpenGL mode writes
        // (booleans in default-block uniforms): then optimize without validation,
        // and failing that import the unoptimized module.
        for extra in [&[][..], &["--skip-validation"][..]] {
            let o = Command::new(SPIRV_OPT)
                .args(extra)
                .arg("-O")
                .arg(&out)
                .arg("-o")
                .arg(&opt)
                .output()
                .map_err(|e| {
                    fail(
                        file,
                        format!(
                            "cannot run {SPIRV_OPT} (install spirv-tools: scripts/setup.sh): {e}"
                        ),
                    )
                })?;
            if o.status.success() {
                return Ok(Ok((read(&opt)?, ast)));
            }
        }
    }
    Ok(Ok((read(&out)?, ast)))
}

fn read(path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|source| Error::Io {
        path: path.display().to_string(),
        source,
    })
}

fn write(path: &Path, text: &str) -> Result<(), Error> {
    std::fs::write(path, text).map_err(|source| Error::Io {
        path: path.display().to_string(),
        source,
    })
}

/// glslang's error for `layout(location)` on an input or output block in a desktop
/// shader below 4.40 that does not enable `GL_ARB_enhanced_layouts`.
const BLOCK_LOCATION: &str =
    "'location qualifier on in/out block' : not supported for this version or the enabled extensions";

/// Compiles `src` (whose text is `text`) with glslang ([`compile_tries`]); when
/// glslang objects to a location on an in/out block below 4.40, compiles again
/// with `GL_ARB_enhanced_layouts` enabled ([`enable_enhanced_layouts`]), so any
/// other error still fails. glslang's AST dump, or the report of the first failure.
fn compile_retrying(src: &Path, text: &str, out: &Path) -> Result<Result<String, String>, Error> {
    let report = match compile_tries(src, text, out)? {
        Ok(ast) => return Ok(Ok(ast)),
        Err(report) => report,
    };
    if report.contains(BLOCK_LOCATION) {
        if let Some(enabled) = enable_enhanced_layouts(text) {
            write(src, &enabled)?;
            if let Ok(ast) = compile_tries(src, &enabled, out)? {
                return Ok(Ok(ast));
            }
        }
    }
    Ok(Err(report))
}

/// A desktop shader below 4.40 with `#extension GL_ARB_enhanced_layouts : enable`
/// added after its `#version` line (a `#line` keeps the line numbers); `None` for
/// ES shaders, shaders without `#version` and 4.40 or later.
///
/// Desktop GL accepts `layout(location)` on in/out blocks from GLSL 4.10, whose
/// core took in `GL_ARB_separate_shader_objects` (piglit's
/// `arb_separate_shader_objects/execution/layout-location-named-block-with-array`
/// requires 4.20); glslang asks for 4.40 or `GL_ARB_enhanced_layouts`. Enabling
/// the extension, rather than raising the version, keeps every rule of the
/// shader's own version; the extension only adds layout qualifiers, so a shader
/// that compiles without it means the same with it. glslang still refuses a
/// location on an output where the version does not allow locations on outputs
/// at all (3.30 without `GL_ARB_separate_shader_objects`).
fn enable_enhanced_layouts(src: &str) -> Option<String> {
    let at = src
        .lines()
        .position(|l| l.trim_start().starts_with("#version"))?;
    let line = src.lines().nth(at)?;
    let version: u32 = line.split_whitespace().nth(1)?.parse().ok()?;
    if version >= 440 || line.split_whitespace().nth(2) == Some("es") {
        return None;
    }
    let mut out = String::with_capacity(src.len() + 64);
    for (i, l) in src.lines().enumerate() {
        out.push_str(l);
        out.push('\n');
        if i == at {
            // `#line N` numbers the line after it N: the next original line is at + 2.
            out.push_str("#extension GL_ARB_enhanced_layouts : enable\n");
            out.push_str(&format!("#line {}\n", at + 2));
        }
    }
    Some(out)
}

/// Compiles with glslang for Vulkan; when that fails, retries as OpenGL SPIR-V for
/// default-block uniforms, then with newer Vulkan targets (1.2, 1.3) and relaxed
/// rules (`-R`: `gl_VertexID`, default uniforms). The AST dump on success, else
/// the log of the first failure (the OpenGL one for default-block uniforms).
///
/// A source that declares default-block uniforms ([`declares_loose_uniform`]) is
/// compiled as OpenGL SPIR-V first: the Vulkan attempt is bound to fail on it.
/// That result is kept only when glslang's AST confirms such a uniform
/// ([`ast_has_loose_uniform`]), which is exactly when the Vulkan attempt would have
/// failed and the OpenGL one been made next, so the outcome is the same as in
/// the order above, one glslang run sooner.
fn compile_tries(src: &Path, text: &str, out: &Path) -> Result<Result<String, String>, Error> {
    let mut opengl = None;
    if declares_loose_uniform(text) {
        let tried = run_glslang(src, out, &["-G"])?;
        if let Ok(ast) = &tried {
            if ast_has_loose_uniform(ast) {
                return Ok(tried);
            }
        }
        opengl = Some(tried);
    }
    let first = match run_glslang(src, out, &["-V"])? {
        Ok(ast) => return Ok(Ok(ast)),
        Err(log) => log,
    };
    // Default-block uniforms need OpenGL SPIR-V: what fails there is the real cause.
    let mut report = first.clone();
    if first.contains("non-opaque uniforms outside a block") {
        let tried = match opengl {
            Some(tried) => tried,
            None => run_glslang(src, out, &["-G"])?,
        };
        match tried {
            Ok(ast) => {
                // An earlier `-G` run wrote `out`, the failed `-V` run may have
                // removed it: write it again.
                if !out.exists() {
                    return run_glslang(src, out, &["-G"]);
                }
                return Ok(Ok(ast));
            }
            Err(log) => report = log,
        }
    }
    let tries: [&[&str]; 4] = [
        &["-V", "--target-env", "vulkan1.2"],
        &["-V", "--target-env", "vulkan1.3"],
        &["-V", "-R"],
        &["-V", "-R", "--target-env", "vulkan1.3"],
    ];
    for args in tries {
        if let Ok(ast) = run_glslang(src, out, args)? {
            return Ok(Ok(ast));
        }
    }
    Ok(Err(report))
}

/// Whether the source (comments aside) declares a uniform outside a block whose
/// type is not opaque (`uniform mat4 m;`, not `uniform sampler2D s;` nor
/// `uniform Block { ... }`): a guess, only ordering glslang's attempts.
fn declares_loose_uniform(text: &str) -> bool {
    let code = strip_comments(text);
    let tokens = tokens(&code);
    let mut depth = 0u32;
    for (i, t) in tokens.iter().enumerate() {
        match *t {
            "{" => depth += 1,
            "}" => depth = depth.saturating_sub(1),
            "uniform" if depth == 0 => {
                let mut rest = tokens[i + 1..]
                    .iter()
                    .filter(|t| !matches!(**t, "highp" | "mediump" | "lowp" | "precise"));
                let (Some(ty), Some(next)) = (rest.next(), rest.next()) else {
                    continue;
                };
                let word = ty.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
                if word && *next != "{" && !is_opaque(ty) {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// Whether a GLSL type name is opaque (samplers, images, atomic counters, ...).
fn is_opaque(ty: &str) -> bool {
    let base = |t: &str| {
        ["sampler", "texture", "image", "subpassInput"]
            .iter()
            .any(|p| t.starts_with(p))
    };
    base(ty)
        || ty.strip_prefix(['i', 'u']).is_some_and(base)
        || ty.starts_with("atomic_uint")
        || ty.starts_with("accelerationStructure")
}

/// Whether glslang's AST dump lists a default-block uniform whose type is not
/// opaque (what the Vulkan attempt refuses as "non-opaque uniforms outside a
/// block").
fn ast_has_loose_uniform(ast: &str) -> bool {
    let objects = super::explicit::linker_objects(ast);
    objects.lines().any(|line| {
        let Some(ty) = line.split_once("' (").map(|(_, t)| t) else {
            return false;
        };
        // Blocks and structs (which may hold only opaque members) have braces:
        // not confirmed, so they keep the Vulkan-first order.
        let words: Vec<&str> = ty
            .split(|c: char| c.is_whitespace() || c == '(' || c == ')')
            .filter(|w| !w.is_empty())
            .collect();
        words.contains(&"uniform") && !ty.contains('{') && !words.iter().any(|w| is_opaque(w))
    })
}

/// The source without `//` and `/* */` comments (each comment becomes a blank).
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("//") {
            rest = r.find('\n').map_or("", |n| &r[n..]);
            out.push(' ');
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.find("*/").map_or("", |n| &r[n + 2..]);
            out.push(' ');
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Identifiers, numbers and single punctuation characters of a source.
fn tokens(text: &str) -> Vec<&str> {
    let mut out = vec![];
    let mut i = 0;
    let b = text.as_bytes();
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c.is_ascii_alphanumeric() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
        } else {
            i += text[i..].chars().next().map_or(1, char::len_utf8);
            if c.is_ascii_whitespace() {
                continue;
            }
        }
        out.push(&text[start..i]);
    }
    out
}

/// Runs glslang; its AST dump (`-i`, for `explicit.rs`) on success, else its log.
fn run_glslang(src: &Path, out: &Path, target: &[&str]) -> Result<Result<String, String>, Error> {
    let o = Command::new(GLSLANG)
        .args(target)
        .args(["--aml", "--amb", "-i", "-o"])
        .arg(out)
        .arg(src)
        .output()
        .map_err(|e| {
            fail(
                &src.display().to_string(),
                format!("cannot run {GLSLANG} (install glslang-tools: scripts/setup.sh): {e}"),
            )
        })?;
    if o.status.success() {
        return Ok(Ok(String::from_utf8_lossy(&o.stdout).into_owned()));
    }
    // The diagnostics, without the AST dump that follows them.
    let mut log: String = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.starts_with("ERROR") || l.starts_with("WARNING"))
        .flat_map(|l| [l, "\n"])
        .collect();
    log.push_str(&String::from_utf8_lossy(&o.stderr));
    Ok(Err(log))
}

/// The first `ERROR: file:line: message` of a glslang log as a located diagnostic.
fn glslang_error(file: &str, log: &str) -> Error {
    for line in log.lines() {
        let Some(rest) = line.strip_prefix("ERROR: ") else {
            continue;
        };
        let mut parts = rest.splitn(3, ':');
        let (_, l, msg) = (parts.next(), parts.next(), parts.next());
        if let (Some(l), Some(msg)) = (l.and_then(|l| l.trim().parse::<u32>().ok()), msg) {
            let loc = SrcLoc { line: l, col: 1 };
            return Error::Import(Diagnostic::new(Some(file), Some(loc), msg.trim()));
        }
        return fail(file, rest.trim());
    }
    fail(file, format!("{GLSLANG} failed: {}", log.trim()))
}

/// Rewrites desktop-GL GLSL (no `#version`, or below 330) as described in the
/// module documentation; `None` when the source needs no rewrite.
pub fn rewrite_desktop_glsl(src: &str, stage: Stage) -> Option<String> {
    let version_line = src
        .lines()
        .position(|l| l.trim_start().starts_with("#version"));
    let version: u32 = version_line
        .and_then(|i| src.lines().nth(i))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(110);
    let compatibility = version_line
        .and_then(|i| src.lines().nth(i))
        .is_some_and(|l| l.contains("compatibility"));
    if version >= 330 && !compatibility {
        return core_extensions_as_450(src);
    }
    let (wrapped, shadow) = super::legacy_texture::wrap_shadow_calls(src);
    let geometry = stage == Stage::Geometry;
    // Stages whose inputs are per-vertex arrays (`gl_in[]`).
    let per_vertex = matches!(stage, Stage::Geometry | Stage::TessCtrl | Stage::TessEval);
    let wrapped = if per_vertex {
        super::gs4::gl_in_members(&wrapped)
    } else {
        wrapped
    };
    let src = wrapped.as_str();
    let gpu_shader4 = src.lines().any(|l| {
        let t = l.trim_start();
        t.starts_with("#extension") && t.contains("GL_EXT_gpu_shader4")
    });
    let mut words: Vec<(&str, &str)> = vec![
        ("gl_FragColor", "varysat_FragColor"),
        ("gl_FragData", "varysat_FragData"),
    ];
    match stage {
        Stage::Vertex => words.extend([("attribute", "in"), ("varying", "out")]),
        // A geometry shader's `varying` is an output (`gs4::varying_line`).
        Stage::Geometry => {}
        _ => words.push(("varying", "in")),
    }
    let mut decls = String::new();
    if stage == Stage::Fragment {
        if has_word(src, "gl_FragColor") {
            decls.push_str("layout(location = 0) out vec4 varysat_FragColor;\n");
        } else if has_word(src, "gl_FragData") {
            decls.push_str("layout(location = 0) out vec4 varysat_FragData[8];\n");
        }
    }
    let (renames, compat_decls) =
        super::compat::rewrite(stage, &|w| has_word(src, w), &|w| declares(src, w));
    words.extend(renames);
    decls.push_str(&compat_decls);
    let gs = per_vertex.then(|| GeometryRewrite::new(src));
    if let Some(gs) = &gs {
        words.extend(gs.renames.iter().map(|(from, to)| (*from, to.as_str())));
        decls.push_str(&gs.decls);
    }
    if shadow {
        decls.push_str(super::legacy_texture::SHADOW4_DECL);
    }
    let rewrite_line = |line: &str| {
        if let Some(gs) = &gs {
            if let Some(special) = gs.special_line(line) {
                return special;
            }
        }
        let line = if gpu_shader4 {
            super::legacy_texture::gpu_shader4_line(line)
        } else if let Some(define) = super::legacy_texture::core_extension_replacement(line) {
            define
        } else {
            line.to_owned()
        };
        if geometry {
            replace_words(&super::gs4::varying_line(&line), &words)
        } else {
            replace_words(&line, &words)
        }
    };
    // Declarations go after the `#extension` lines, which must precede them.
    let skip = version_line.map(|i| i + 1).unwrap_or(0);
    let body = src
        .lines()
        .enumerate()
        .skip(skip)
        .filter(|(_, l)| l.trim_start().starts_with("#extension"))
        .map(|(i, _)| i + 1)
        .last()
        .unwrap_or(skip);
    let mut out = String::from("#version 450\n");
    if body > skip {
        out.push_str(&format!("#line {}\n", skip + 1));
    }
    for line in src.lines().take(body).skip(skip) {
        out.push_str(&rewrite_line(line));
        out.push('\n');
    }
    out.push_str(&decls);
    out.push_str(&format!("#line {}\n", body + 1));
    for line in src.lines().skip(body) {
        out.push_str(&rewrite_line(line));
        out.push('\n');
    }
    match gs {
        Some(gs) if !gs.prologue.is_empty() => {
            Some(super::gs4::insert_prologue(&out, &gs.prologue).unwrap_or(out))
        }
        _ => Some(out),
    }
}

/// What a desktop geometry (or tessellation) shader below 3.30 needs besides the
/// other stages' rewrite (`gs4.rs`): the per-vertex inputs of
/// `GL_ARB_geometry_shader4` and the fixed-function ones (which tessellation
/// shaders read through `gl_in[i]` too).
struct GeometryRewrite {
    renames: Vec<(&'static str, String)>,
    decls: String,
    prologue: String,
    /// The vertex count of the input primitive.
    vertices: u32,
}

impl GeometryRewrite {
    fn new(src: &str) -> GeometryRewrite {
        use super::gs4;
        let vertices = super::gs_layout::input_vertices(src);
        let clip_size = src
            .lines()
            .find_map(|l| gs4::clip_distance_declaration(l, vertices))
            .map(|(_, size)| size);
        let uses = |w: &str| has_word(src, w);
        let (mut renames, mut decls) = gs4::fixed_inputs(&uses, &|w| declares(src, w));
        let vb = gs4::vertex_builtins(&uses, vertices, clip_size);
        renames.extend(vb.renames);
        decls.push_str(&vb.decls);
        GeometryRewrite {
            renames,
            decls,
            prologue: vb.prologue,
            vertices,
        }
    }

    /// A line rewritten whole: the extension's `#extension` line blanked, a
    /// `gl_ClipDistanceIn` declaration as the private array's.
    fn special_line(&self, line: &str) -> Option<String> {
        if super::gs4::is_extension_line(line) {
            return Some(String::new());
        }
        super::gs4::clip_distance_declaration(line, self.vertices).map(|(decl, _)| decl)
    }
}

/// A desktop shader of version 330 or later that enables one of the extensions
/// glslang rejects whose features are core in 4.50 (`legacy_texture::CORE_EXTENSIONS`):
/// compiled as 4.50 with those lines blanked (line numbers do not move). `None`
/// when it enables none, or is an ES shader.
fn core_extensions_as_450(src: &str) -> Option<String> {
    use super::legacy_texture::{core_extension_replacement, enables_core_extension};
    if !src.lines().any(enables_core_extension) {
        return None;
    }
    let mut out = String::with_capacity(src.len());
    for line in src.lines() {
        let t = line.trim_start();
        if t.starts_with("#version") {
            if t.contains(" es") {
                return None;
            }
            out.push_str("#version 450");
        } else if let Some(define) = core_extension_replacement(line) {
            out.push_str(&define);
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    Some(out)
}

fn has_word(src: &str, w: &str) -> bool {
    idents(src).any(|(_, id)| id == w)
}

/// Whether the source declares `w` itself: the identifier before it is a type
/// (GLSL 1.30 lets a shader redeclare `gl_FrontColor` with an interpolation
/// qualifier).
fn declares(src: &str, w: &str) -> bool {
    let is_type = |t: &str| {
        matches!(t, "float" | "int" | "uint")
            || ["vec", "mat", "ivec", "uvec"].iter().any(|p| {
                t.strip_prefix(p).is_some_and(|n| {
                    !n.is_empty() && n.chars().all(|c| c.is_ascii_digit() || c == 'x')
                })
            })
    };
    // A type, only blanks, then the name (`vec4 gl_FrontColor`, not `vec4(1.0) - gl_Color`).
    let ids: Vec<(usize, &str)> = idents(src).collect();
    ids.windows(2).any(|p| {
        let ((a, t), (b, id)) = (p[0], p[1]);
        id == w && is_type(t) && src[a + t.len()..b].trim().is_empty()
    })
}

/// Identifiers of a line with their byte offsets.
fn idents(s: &str) -> impl Iterator<Item = (usize, &str)> {
    let bytes = s.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            let c = bytes[i];
            if c.is_ascii_alphabetic() || c == b'_' {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                return Some((start, &s[start..i]));
            }
            if c.is_ascii_digit() {
                while i < bytes.len()
                    && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'.')
                {
                    i += 1;
                }
                continue;
            }
            i += 1;
        }
        None
    })
}

/// Renames the identifiers of `words` and the dimension-named texture built-ins
/// (see `legacy_texture.rs`).
fn replace_words(line: &str, words: &[(&str, &str)]) -> String {
    let mut out = String::new();
    let mut last = 0;
    for (at, id) in idents(line) {
        let to = match words.iter().find(|(from, _)| *from == id) {
            Some((_, to)) => Some((*to).to_owned()),
            None => super::legacy_texture::core_name(id),
        };
        if let Some(to) = to {
            out.push_str(&line[last..at]);
            out.push_str(&to);
            last = at + id.len();
        }
    }
    out.push_str(&line[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loose_uniforms_are_told_from_blocks_opaque_types_and_comments() {
        let loose = [
            "uniform mat4 m;",
            "layout(location = 1) uniform highp vec4 a[3];",
            "struct S { float f; };\nuniform S s;",
        ];
        for src in loose {
            assert!(declares_loose_uniform(src), "{src}");
        }
        let not_loose = [
            "uniform sampler2D t;",
            "uniform usampler2DArray t;",
            "layout(binding = 0) uniform image2D i;",
            "layout(std140) uniform Block { mat4 m; };",
            "uniform Block\n{\n  mat4 m;\n} b;",
            "// uniform mat4 m;\n/* uniform vec4 v; */",
            "void f() { int uniformity = 1; }",
            "layout(std140) uniform;",
        ];
        for src in not_loose {
            assert!(!declares_loose_uniform(src), "{src}");
        }
    }

    #[test]
    fn the_ast_confirms_loose_uniforms_only_outside_blocks_and_structs() {
        let ast = |object: &str| format!("0:?   Linker Objects\n0:?     {object}\n");
        assert!(ast_has_loose_uniform(&ast(
            "'m' ( uniform highp 4X4 matrix of float)"
        )));
        assert!(ast_has_loose_uniform(&ast(
            "'a' (layout( location=1) uniform highp 3-element array of 4-component vector of float)"
        )));
        for other in [
            "'t' ( uniform highp sampler2D)",
            "'t' ( uniform 2-element array of highp isampler2D)",
            "'anon@0' (layout( column_major std140) uniform block{ uniform highp 4X4 matrix of float m})",
            "'s' ( uniform structure{ global highp sampler2D t})",
            "'c' ( smooth out highp 4-component vector of float)",
        ] {
            assert!(!ast_has_loose_uniform(&ast(other)), "{other}");
        }
        // Outside the linker objects (the tree itself) nothing counts.
        assert!(!ast_has_loose_uniform(
            "0:3  'm' ( uniform highp 4X4 matrix of float)\n"
        ));
    }
}
