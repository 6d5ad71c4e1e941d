//! SPIR-V export: an optimized pipeline written back as two SPIR-V modules a
//! Vulkan application can use in place of the originals.
//!
//! Each output starts from its original module and keeps everything the IR does
//! not model (see `carry`); the entry function is regenerated from the IR (`body`,
//! `alu`), the varying interface is re-declared from the IR's slots, shared by
//! both stages (`iface`), and resources are re-attached to the original descriptor
//! bindings (`resources`).

mod alu;
mod body;
mod carry;
mod context;
mod globals;
mod iface;
mod resources;

use std::path::Path;

use crate::import::link::link;
use crate::import::module::Module;
use crate::ir::Shader;
use crate::{Error, Outcome, Pipeline};
use context::Sides;

/// Writes an optimization outcome as SPIR-V: (producer words, consumer words).
/// `producer` and `consumer` are the original modules the outcome was imported from.
pub fn to_spirv(
    outcome: &Outcome,
    producer: &[u8],
    consumer: &[u8],
) -> Result<(Vec<u32>, Vec<u32>), Error> {
    pipeline_to_spirv(&outcome.pipeline, producer, consumer)
}

/// Writes any pipeline imported from `producer` and `consumer` as SPIR-V (without
/// optimization this is the importer's round trip).
pub fn pipeline_to_spirv(
    pipe: &Pipeline,
    producer: &[u8],
    consumer: &[u8],
) -> Result<(Vec<u32>, Vec<u32>), Error> {
    // Specialization constants are folded into the IR already; the layout of
    // resources does not depend on their values.
    let spec = std::collections::BTreeMap::new();
    let p = Module::load(producer, "<producer>", &spec)?;
    let c = Module::load(consumer, "<consumer>", &spec)?;
    let linked = link(&p, &c, false, false).or_else(|_| link(&p, &c, true, false))?;
    let sides = Sides {
        p: &p,
        c: &c,
        lp: &linked.producer,
        lc: &linked.consumer,
        pipe,
    };
    let plan = iface::Plan::new(pipe)?;
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
