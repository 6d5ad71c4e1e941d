//! Import of real shaders: SPIR-V modules (parsed with `rspirv`) or GLSL sources
//! (compiled with `glslangValidator`, optionally cleaned up by `spirv-opt -O`) for
//! two linked stages become one [`Pipeline`].
//!
//! Varyings are matched by location for SPIR-V input; GLSL input links as GL
//! does, explicitly located varyings by location and component and the others by
//! name (glslang numbers automatic locations per stage; `explicit.rs` reads which
//! locations the source wrote). Then they are renumbered to shared
//! `VARn`/`PATCHn` slots. Uniforms, UBOs, push constants, storage buffers and samplers
//! get one numbering across both stages. Anything varysat cannot translate is an
//! [`Error::Import`] naming the SPIR-V instruction and its result id.

mod alu;
mod cfg;
pub(crate) mod compat;
mod context;
mod emit;
mod explicit;
mod extended;
mod files;
mod framing;
mod function;
mod glsl;
mod glsl_cache;
mod gs4;
mod gs_layout;
mod iface;
pub(crate) mod layout;
mod legacy_texture;
pub(crate) mod link;
pub(crate) mod mem;
pub(crate) mod module;
pub(crate) mod opaque;
pub(crate) mod relocate;
mod spec;
pub(crate) mod spirv;
mod stats;
mod tree;
mod val;
mod wide;

use std::path::Path;

pub use files::stage_from_extension;
pub use glsl::{
    compile_glsl, compile_glsl_with_notes, rewrite_desktop_glsl, tool_available, GLSLANG, SPIRV_OPT,
};
pub use stats::{stats, Stats};

use explicit::Explicit;
use files::fail;

use crate::ir::{Primitive, ProvokingVertex, Stage, StageInfo};
use crate::{Diagnostic, Error, Pipeline};

/// Choices SPIR-V does not record.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// Match varyings by name (`Some(true)`) or by location (`Some(false)`); `None`
    /// picks by name for GLSL and by location for SPIR-V. GLSL matched by name
    /// still links explicitly located varyings by location, as GL does.
    pub match_by_name: Option<bool>,
    /// Run `spirv-opt -O` on GLSL compiled by glslang (inlining, SSA).
    pub spirv_opt: bool,
    /// Vertices per patch entering a TCS (and a TES without a TCS in the pair).
    pub patch_vertices: u8,
    /// VS primitive topology when the consumer does not determine it.
    pub topology: Primitive,
    /// Provoking vertex for FS flat inputs.
    pub provoking: ProvokingVertex,
    /// Values of specialization constants by `SpecId` (others keep their defaults).
    pub spec: std::collections::BTreeMap<u32, u32>,
    /// A directory where compiled GLSL stages are kept by source (`glsl_cache.rs`),
    /// so a corpus run compiles a shader shared by many pairs once.
    pub glsl_cache: Option<std::path::PathBuf>,
}

impl Default for ImportOptions {
    fn default() -> ImportOptions {
        ImportOptions {
            match_by_name: None,
            spirv_opt: true,
            patch_vertices: 3,
            topology: Primitive::Triangles,
            provoking: ProvokingVertex::First,
            spec: Default::default(),
            glsl_cache: None,
        }
    }
}

/// Imports a producer and a consumer SPIR-V module (one entry point each).
pub fn import_spirv(
    producer: &[u8],
    consumer: &[u8],
    opts: &ImportOptions,
) -> Result<Pipeline, Error> {
    import_spirv_named(producer, "<producer>", consumer, "<consumer>", opts, None).map(|i| i.0)
}

/// An imported pair and the warnings about it (SPIR-V consumer inputs that no
/// producer output writes, dropped non-semantic instructions).
pub type Imported = (Pipeline, Vec<String>);

fn import_spirv_named(
    producer: &[u8],
    pname: &str,
    consumer: &[u8],
    cname: &str,
    opts: &ImportOptions,
    glsl: Option<[&Explicit; 2]>,
) -> Result<Imported, Error> {
    import_spirv_relocating(producer, pname, consumer, cname, opts, glsl).map(|(i, _)| i)
}

/// The producer and consumer modules with re-assigned locations, when they needed
/// them (`relocate.rs`).
type Relocated = Option<[Vec<u8>; 2]>;

/// [`import_spirv_named`], also returning the modules with their varyings
/// re-located (`relocate.rs`) when a GLSL pair's own locations link otherwise than
/// the importer linked it (a failure to rewrite them is a warning).
fn import_spirv_relocating(
    producer: &[u8],
    pname: &str,
    consumer: &[u8],
    cname: &str,
    opts: &ImportOptions,
    glsl: Option<[&Explicit; 2]>,
) -> Result<(Imported, Relocated), Error> {
    let from_glsl = glsl.is_some();
    let p = module::Module::load(producer, pname, &opts.spec)?;
    let c = module::Module::load(consumer, cname, &opts.spec)?;
    if !p.stage.can_feed(c.stage) {
        return Err(fail(
            cname,
            format!("a {} shader cannot feed a {} shader", p.stage, c.stage),
        ));
    }
    let by_name = opts.match_by_name.unwrap_or(from_glsl);
    // GL links explicitly located varyings by location, the others by name.
    let located = glsl.filter(|_| by_name);
    let linked = link::link(&p, &c, by_name, from_glsl, located)?;
    let mut warnings = linked.warnings.clone();
    let relocated = match by_name {
        true => relocate::relocated(&p, &c, &linked, [producer, consumer]).unwrap_or_else(|e| {
            warnings.push(format!(
                "{cname}: the SPIR-V modules' locations link otherwise than GL links \
                 the sources, and could not be re-assigned ({e}): export them with \
                 `pipeline_to_spirv`"
            ));
            None
        }),
        false => None,
    };
    for m in [&p, &c] {
        if m.uses_non_semantic() {
            warnings.push(format!(
                "{}: non-semantic instructions (debug printing, ...) were dropped",
                m.file
            ));
        }
    }
    let topology = match (c.stage, spirv::translate_info_hint(&c)) {
        (Stage::Geometry, Some(input)) => input,
        _ => opts.topology,
    };
    let tcs_out = match p.stage {
        Stage::TessCtrl => p.mode(::rspirv::spirv::ExecutionMode::OutputVertices),
        _ => None,
    };
    let pv = opts.patch_vertices;
    let pp = context::StageParams {
        patch_vertices: pv,
        topology,
        peer: c.stage,
    };
    let cp = context::StageParams {
        patch_vertices: tcs_out.and_then(|n| u8::try_from(n).ok()).unwrap_or(pv),
        topology,
        peer: p.stage,
    };
    let producer = spirv::translate(&p, &linked.producer, pp)?;
    let mut consumer = spirv::translate(&c, &linked.consumer, cp)?;
    if let StageInfo::Fragment { provoking } = &mut consumer.info {
        *provoking = opts.provoking;
    }
    let mut pipe = Pipeline::new(producer, consumer).with_uniforms(linked.uniform_words);
    pipe.ubos = linked.ubos;
    pipe.source = Some(pname.to_owned());
    // What import writes must be a valid pair: anything the translator let through
    // that the validator rejects (an out-of-range constant vertex index, ...) is an
    // error here rather than in a later `varysat check`.
    crate::validate::validate(&pipe)
        .map_err(|e| fail(cname, format!("the imported pair does not validate: {e}")))?;
    Ok(((pipe, warnings), relocated))
}

/// Compiles two GLSL files with glslang (see [`compile_glsl`]) and imports them.
pub fn import_glsl(
    producer: &Path,
    consumer: &Path,
    opts: &ImportOptions,
) -> Result<Pipeline, Error> {
    let cache = opts.glsl_cache.as_deref();
    let pc = glsl::compile_glsl_explicit(producer, opts.spirv_opt, cache)?;
    let cc = glsl::compile_glsl_explicit(consumer, opts.spirv_opt, cache)?;
    let (pn, cn) = (
        producer.display().to_string(),
        consumer.display().to_string(),
    );
    let glsl = Some([&pc.explicit, &cc.explicit]);
    import_spirv_named(&pc.spirv, &pn, &cc.spirv, &cn, opts, glsl).map(|i| i.0)
}

/// Imports two files, each SPIR-V (`.spv`, or starting with the SPIR-V magic number)
/// or GLSL (by extension).
pub fn import_files(
    producer: &Path,
    consumer: &Path,
    opts: &ImportOptions,
) -> Result<Pipeline, Error> {
    import_files_with_warnings(producer, consumer, opts).map(|i| i.0)
}

/// [`import_files`], also returning the warnings about the pair.
pub fn import_files_with_warnings(
    producer: &Path,
    consumer: &Path,
    opts: &ImportOptions,
) -> Result<Imported, Error> {
    import_files_with_modules(producer, consumer, opts).map(|(i, _)| i)
}

/// A default-block uniform of an imported pair (GLSL's `uniform int n;`): its
/// name and where import put it, words `word .. word + words` of the pair's
/// uniform storage (`load_uniform WORD`), which `varysat equiv --uniform` binds.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct DefaultUniform {
    /// First word.
    pub word: u32,
    /// Number of words (scalar leaves, sampler members not counted).
    pub words: u32,
    /// The name both stages link it by.
    pub name: String,
}

/// The default-block uniforms of the pair `import_files` makes of these files, in
/// word order: the pair's word numbering by name, since the `.pair` keeps no
/// names. Compiles and links the stages as import does (a `glsl_cache` makes the
/// compiles after an import hits).
pub fn default_uniforms(
    producer: &Path,
    consumer: &Path,
    opts: &ImportOptions,
) -> Result<Vec<DefaultUniform>, Error> {
    let mut notes = vec![];
    let Stages {
        pb,
        pg,
        pn,
        cb,
        cg,
        cn,
    } = load_stages(producer, consumer, opts, &mut notes)?;
    let p = module::Module::load(&pb, &pn, &opts.spec)?;
    let c = module::Module::load(&cb, &cn, &opts.spec)?;
    let glsl = match (&pg, &cg) {
        (Some(p), Some(c)) => Some([p, c]),
        _ => None,
    };
    let by_name = opts.match_by_name.unwrap_or(glsl.is_some());
    let linked = link::link(&p, &c, by_name, glsl.is_some(), glsl.filter(|_| by_name))?;
    let mut all = std::collections::BTreeSet::new();
    for (m, l) in [(&p, &linked.producer), (&c, &linked.consumer)] {
        for (name, word, words) in link::default_uniforms(m, l)? {
            all.insert(DefaultUniform { word, words, name });
        }
    }
    Ok(all.into_iter().collect())
}

/// Both stages of a pair as `load_stage` reads them, each with the file name its
/// diagnostics use (`p*` the producer, `c*` the consumer).
struct Stages {
    pb: Vec<u8>,
    pg: Option<Explicit>,
    pn: String,
    cb: Vec<u8>,
    cg: Option<Explicit>,
    cn: String,
}

fn load_stages(
    producer: &Path,
    consumer: &Path,
    opts: &ImportOptions,
    notes: &mut Vec<String>,
) -> Result<Stages, Error> {
    let (pb, pg) = load_stage(producer, opts, notes)?;
    let (cb, cg) = load_stage(consumer, opts, notes)?;
    Ok(Stages {
        pb,
        pg,
        pn: producer.display().to_string(),
        cb,
        cg,
        cn: consumer.display().to_string(),
    })
}

/// Reads one stage: SPIR-V as it is, GLSL compiled as for import (its glslang
/// notes appended to `notes`), with which varyings its source located.
fn load_stage(
    p: &Path,
    opts: &ImportOptions,
    notes: &mut Vec<String>,
) -> Result<(Vec<u8>, Option<Explicit>), Error> {
    let bytes = crate::input::read_bytes(p)?;
    let spv = bytes.len() >= 4
        && (bytes[..4] == [0x03, 0x02, 0x23, 0x07] || bytes[..4] == [0x07, 0x23, 0x02, 0x03]);
    if spv {
        return Ok((bytes, None));
    }
    if p.extension().is_some_and(|e| e.eq_ignore_ascii_case("spv")) {
        let file = p.display().to_string();
        let msg = "not a SPIR-V module (it does not start with the SPIR-V magic number)";
        return Err(Error::Import(Diagnostic::new(Some(&file), None, msg)));
    }
    let c = glsl::compile_glsl_explicit(p, opts.spirv_opt, opts.glsl_cache.as_deref())?;
    notes.extend(c.notes);
    Ok((c.spirv, Some(c.explicit)))
}

/// The two SPIR-V modules a pair was imported from (GLSL compiled as for import),
/// as [`crate::export`] needs them. When glslang's automatic locations link a GLSL
/// pair otherwise than GL links the sources (crossed names, or an unlocated
/// varying on an explicit one's location), the modules' varyings are re-located
/// to the slots the importer linked (`relocate.rs`), so their own interface is
/// the imported pipeline's.
pub type Modules = (Vec<u8>, Vec<u8>);

/// [`import_files_with_warnings`], also returning the SPIR-V modules that were
/// imported.
pub fn import_files_with_modules(
    producer: &Path,
    consumer: &Path,
    opts: &ImportOptions,
) -> Result<(Imported, Modules), Error> {
    let mut notes = vec![];
    let Stages {
        pb,
        pg,
        pn,
        cb,
        cg,
        cn,
    } = load_stages(producer, consumer, opts, &mut notes)?;
    let glsl = match (&pg, &cg) {
        (Some(p), Some(c)) => Some([p, c]),
        _ => None,
    };
    let ((pipe, mut warnings), relocated) =
        import_spirv_relocating(&pb, &pn, &cb, &cn, opts, glsl)?;
    notes.append(&mut warnings);
    let (pb, cb) = match relocated {
        Some([p, c]) => (p, c),
        None => (pb, cb),
    };
    Ok(((pipe, notes), (pb, cb)))
}
