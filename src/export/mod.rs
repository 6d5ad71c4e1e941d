//! SPIR-V export: an optimized pipeline written back as two SPIR-V modules a
//! Vulkan application can use in place of the originals.
//!
//! Each output starts from its original module and keeps everything the IR does
//! not model (see `carry`); the entry function is regenerated from the IR (`body`,
//! `alu`), the varying interface is re-declared from the IR's slots, shared by
//! both stages (`iface`), and resources are re-attached to the original descriptor
//! bindings (`resources`).
//!
//! A pipeline that was never SPIR-V (parsed, built in code, generated) has no
//! original modules: [`standalone_to_spirv`] synthesizes a skeleton module per
//! stage from the IR (`standalone`) and exports over it the same way.

mod alu;
mod body;
mod carry;
mod context;
mod globals;
mod iface;
mod loose;
mod resources;
mod standalone;
mod xfb;

use std::path::Path;

use crate::import::link::link;
use crate::import::module::Module;
use crate::ir::Shader;
use crate::{Error, Outcome, Pipeline};
use context::Sides;

/// Writes an optimization outcome as SPIR-V: (producer words, consumer words).
/// `producer` and `consumer` are the original modules the outcome was imported from.
///
/// When the optimization gained nothing at the interface ([`interface_gains_nothing`]),
/// the original modules are written back as they are: the outcome differs from
/// them only inside the stages, in clean-ups the driver's own compiler makes too,
/// while regenerating a body from the IR costs instructions (64-bit values travel
/// as word pairs, matrix products as separate multiplies and adds). Not when their
/// own interface is no valid Vulkan one (two varyings of a stage on one location
/// and component, as glslang's automatic locations can leave a GLSL pair): then
/// the export is regenerated, on the importer's slots. The modules must be those
/// [`crate::import::import_files_with_modules`] returns, whose locations link as
/// the importer linked the pair.
pub fn to_spirv(
    outcome: &Outcome,
    producer: &[u8],
    consumer: &[u8],
) -> Result<(Vec<u32>, Vec<u32>), Error> {
    if interface_gains_nothing(&outcome.report) && valid_interfaces(producer, consumer)? {
        return Ok((
            as_given(producer, "<producer>")?,
            as_given(consumer, "<consumer>")?,
        ));
    }
    pipeline_to_spirv(&outcome.pipeline, producer, consumer)
}

/// Whether neither module puts two of its varyings with the other stage on one
/// location and component.
fn valid_interfaces(producer: &[u8], consumer: &[u8]) -> Result<bool, Error> {
    use crate::import::relocate::overlapping_varyings;
    let spec = std::collections::BTreeMap::new();
    let p = Module::load(producer, "<producer>", &spec)?;
    let c = Module::load(consumer, "<consumer>", &spec)?;
    Ok(!overlapping_varyings(&p, true)? && !overlapping_varyings(&c, false)?)
}

/// A module's words exactly as given (in the host's byte order), once it loads.
fn as_given(bytes: &[u8], name: &str) -> Result<Vec<u32>, Error> {
    Module::load(bytes, name, &std::collections::BTreeMap::new())?;
    let little = bytes.get(..4) == Some(&SPIRV_MAGIC.to_le_bytes()[..]);
    let decode = if little {
        u32::from_le_bytes
    } else {
        u32::from_be_bytes
    };
    Ok(bytes
        .chunks_exact(4)
        .map(|c| decode([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// The SPIR-V magic number, the first word of every module.
const SPIRV_MAGIC: u32 = 0x0723_0203;

/// Whether an optimization gained nothing at the varying interface: no code motion,
/// every original varying component kept (in its own slot or re-located), pinned,
/// or kept for fixed function only (nothing propagated, merged or removed), and as
/// many components and vec4 slots as before.
pub fn interface_gains_nothing(report: &crate::Report) -> bool {
    use crate::optimize::Fate;
    report.moves.is_empty()
        && report.after == report.before
        && report
            .varyings
            .iter()
            .all(|v| matches!(v.fate, Fate::Kept(_) | Fate::Pinned(_) | Fate::NoVarying(_)))
}

/// Writes any pipeline imported from `producer` and `consumer` as SPIR-V (without
/// optimization this is the importer's round trip).
pub fn pipeline_to_spirv(
    pipe: &Pipeline,
    producer: &[u8],
    consumer: &[u8],
) -> Result<(Vec<u32>, Vec<u32>), Error> {
    export(pipe, producer, consumer, None)
}

pub use standalone::{OUTER_PATCH_BASE, PUSH_WORDS, SAMPLER_SET, SSBO_SET, UBO_SET};

/// Writes a pipeline that was not imported from SPIR-V (parsed from a `.pair` file,
/// built in code, generated, or optimized from one of those) as two SPIR-V 1.3
/// modules for Vulkan: (producer words, consumer words).
///
/// Each stage's module is synthesized from the IR (entry point `main`, execution
/// modes from the stage parameters, the capabilities the IR needs), then written as
/// an imported module is (see the module documentation). Both stages follow one
/// resource convention, so a pipeline layout built for one pair fits both stages:
///
/// - UBO block `b`: a uniform buffer at set [`UBO_SET`] (0), binding `b` (std140,
///   the IR's byte offsets);
/// - the uniform words (`load_uniform i`): word `i` of a push-constant block, or
///   with more than [`PUSH_WORDS`] words of a uniform buffer at set 0, binding
///   one past the last block;
/// - sampler `s` (`tex`): a combined image sampler of floats at set
///   [`SAMPLER_SET`] (1), binding `s`. A fragment shader's read takes its
///   coordinates as the position (1-3 coordinates: a 1D, 2D or 3D image; implicit
///   level of detail); other stages' reads end with the explicit level of detail;
/// - storage buffer `k`: set [`SSBO_SET`] (2), binding `k`;
/// - attribute `ATTRn`, fragment output `DATAn` and varyings from or to a stage
///   outside the pair: a `vec4` of 32-bit floats at location n; such a per-patch
///   `PATCHn` at location [`OUTER_PATCH_BASE`] + n (24 + n).
///
/// The pair's own varyings are laid out as for imported pairs. What the importer's
/// path cannot export (dynamically indexed varyings, transform feedback) is an
/// error here too.
///
/// ```
/// let pair = varysat::text::parse(
///     "(pair
///        (uniforms 1)
///        (producer vs
///          (%x = load_input ATTR0.x)
///          (%y = load_input ATTR0.y)
///          (%one = const 32 1.0)
///          (%k = load_uniform 0)
///          (%s = fmul %x %k)
///          (store_output POS.x %x)
///          (store_output POS.y %y)
///          (store_output POS.z %one)
///          (store_output POS.w %one)
///          (store_output VAR0.x %s))
///        (consumer fs
///          (%v = load_interpolated_input VAR0.x persp center)
///          (store_output DATA0.x %v)))",
///     None,
/// )?;
/// let outcome = varysat::optimize(&pair, &varysat::Options::default())?;
/// let (vs, fs) = varysat::export::standalone_to_spirv(&outcome.pipeline)?;
/// assert_eq!(vs[0], 0x0723_0203); // the SPIR-V magic number
/// assert_eq!(fs[0], 0x0723_0203);
/// # Ok::<(), varysat::Error>(())
/// ```
pub fn standalone_to_spirv(pipe: &Pipeline) -> Result<(Vec<u32>, Vec<u32>), Error> {
    let sk = standalone::skeletons(pipe)?;
    export(pipe, &sk.producer, &sk.consumer, Some(&sk))
}

/// Writes `pipe` over the modules `producer` and `consumer`; `standalone` when they
/// are skeletons synthesized from the IR.
fn export(
    pipe: &Pipeline,
    producer: &[u8],
    consumer: &[u8],
    standalone: Option<&standalone::Skeletons>,
) -> Result<(Vec<u32>, Vec<u32>), Error> {
    // Specialization constants are folded into the IR already; the layout of
    // resources does not depend on their values.
    let spec = std::collections::BTreeMap::new();
    let p = Module::load(producer, "<producer>", &spec)?;
    let c = Module::load(consumer, "<consumer>", &spec)?;
    let mut linked =
        link(&p, &c, false, false, None).or_else(|_| link(&p, &c, true, false, None))?;
    if let Some(sk) = standalone {
        // A skeleton's per-patch variables outside the pair sit after its
        // per-vertex ones: PATCHn at `patch_base + n`.
        for (m, l, base) in [
            (&p, &mut linked.producer, sk.patch_base[0]),
            (&c, &mut linked.consumer, sk.patch_base[1]),
        ] {
            for (var, io) in l.io_base.iter_mut() {
                if m.deco(*var).patch {
                    *io = io.saturating_sub(base);
                }
            }
        }
    }
    let sides = Sides {
        p: &p,
        c: &c,
        lp: &linked.producer,
        lc: &linked.consumer,
        pipe,
        uniform_block: standalone.and_then(|s| s.uniform_block),
    };
    let mut plan = iface::Plan::new(pipe)?;
    plan.xfb = xfb::Captures::new(&pipe.producer, &p)?;
    let pw = stage(&sides, &plan, &pipe.producer, true)?;
    let cw = stage(&sides, &plan, &pipe.consumer, false)?;
    Ok((pw, cw))
}

fn stage(
    sides: &Sides,
    plan: &iface::Plan,
    shader: &Shader,
    producer: bool,
) -> Result<Vec<u32>, Error> {
    let (m, layout) = if producer {
        (sides.p, sides.lp)
    } else {
        (sides.c, sides.lc)
    };
    let mut g = carry::start(m, producer);
    let mut res = resources::Resources::new(sides, m, layout)?;
    let mut io = iface::StageIo::new(plan, shader, m, layout, producer)?;
    io.declare_all(&mut g)?;
    let f = body::Body::new(&mut g, &mut io, &mut res, plan, shader).emit()?;
    if producer {
        plan.xfb.finish(&mut g);
    }
    let mut interface = io.vars();
    interface.extend(res.view_vars());
    interface.extend(
        m.vars
            .iter()
            .filter(|(_, v)| v.class == rspirv::spirv::StorageClass::UniformConstant)
            .map(|(id, _)| *id),
    );
    Ok(carry::finish(g, m, f, &interface))
}

/// Whether a module is OpenGL SPIR-V: it declares default-block ("loose")
/// uniforms, `UniformConstant` variables of data types, which Vulkan does not
/// allow. Its export is OpenGL SPIR-V too (`loose.rs`), for `spirv-val
/// --target-env opengl4.5`, and no Vulkan driver takes it.
pub fn has_loose_uniforms(module: &[u8]) -> Result<bool, Error> {
    let m = Module::load(module, "<module>", &std::collections::BTreeMap::new())?;
    Ok(m.vars.values().any(|v| {
        v.class == rspirv::spirv::StorageClass::UniformConstant
            && !crate::import::link::opaque(&m, v.ty)
    }))
}

/// The output file name for an input: `a.vert` → `a.vert.spv`, `v.spv` → `v.spv`.
pub fn output_name(input: &Path) -> String {
    let name = input
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "shader".to_owned());
    if name.ends_with(".spv") {
        name
    } else {
        format!("{name}.spv")
    }
}

/// The words of a module as bytes (little endian), as written to `.spv` files.
pub fn to_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}
