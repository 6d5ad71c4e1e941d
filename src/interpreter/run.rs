//! One run of a pair: the producer's invocations grouped into the primitives or
//! patches the consumer takes, then the consumer's invocations, recording what is
//! observable on the way.
//!
//! Numbering: group `g` (primitive or patch, `0..max_primitives`) of `n` vertices
//! uses global VS vertex numbers `g·n .. g·n+n`; a TCS/TES/GS producer's seeded
//! per-vertex inputs use the same numbering with `n` its input vertex count, and a
//! TES producer's patch inputs use patch `g`. A TES producer shades group `g` as patch
//! `g` at tess coords `0..n`; a GS producer's emitted strips are assembled in order
//! of input primitive, invocation and emission.

use std::collections::BTreeMap;

use crate::error::Error;
use crate::ir::{BitSize, Pipeline, Primitive, Shader, Stage, StageInfo};

use super::exec::World;
use super::observe::{Item, Observation, Unit};
use super::raster::{rasterize, RasterConfig};
use super::stages::{assemble_strips, run_gs, run_tcs, run_tes, run_vs, Group, Source};
use super::{Inputs, RunConfig, Scalar};

/// Runs `p` once with the inputs of `cfg.seed`.
pub(crate) fn run_pair(p: &Pipeline, cfg: &RunConfig) -> Result<Observation, Error> {
    let (ps, cs) = (p.producer.stage(), p.consumer.stage());
    if !ps.can_feed(cs) {
        return Err(Error::Interpret(format!("a {ps} cannot feed a {cs}")));
    }
    let mut world = World {
        inputs: Inputs::new(cfg.seed),
        pipeline: p,
        ssbo: BTreeMap::new(),
        loop_limit: cfg.loop_limit,
        signed_zeros: cfg.signed_zeros,
        known: &cfg.known,
    };
    let mut obs = Observation::new(cfg.seed);
    let groups = produce(p, &mut world, &mut obs, cfg)?;
    consume(&p.consumer, &groups, &mut world, &mut obs, cfg)?;
    for ((buffer, addr), v) in &world.ssbo {
        let item = Item::Ssbo {
            buffer: *buffer,
            addr: *addr,
        };
        obs.insert(None, &[], item, *v);
    }
    Ok(obs)
}

/// Whether the rasterizer reads the producer's system-value outputs: only when the
/// consumer is an FS (a TCS, TES or GS consumer takes them as plain data).
fn rasterized(world: &World) -> bool {
    world.pipeline.consumer.stage() == Stage::Fragment
}

/// Vertices per group the consumer takes from a VS or TES producer.
fn vertices_per_group(producer: &Shader, consumer: &Shader) -> usize {
    match consumer.info {
        StageInfo::TessCtrl { input_vertices, .. } | StageInfo::TessEval { input_vertices, .. } => {
            input_vertices as usize
        }
        StageInfo::Geometry { input, .. } => input.vertex_count(),
        _ => producer
            .info
            .output_primitive()
            .map_or(3, Primitive::vertex_count),
    }
}

/// How many input vertices (and which domain) a TCS/TES/GS producer reads per group.
fn producer_inputs(s: &Shader) -> usize {
    match s.info {
        StageInfo::TessCtrl { input_vertices, .. } | StageInfo::TessEval { input_vertices, .. } => {
            input_vertices as usize
        }
        StageInfo::Geometry { input, .. } => input.vertex_count(),
        _ => 0,
    }
}

fn seeded(inputs: Inputs, g: u32, n: usize) -> Source<'static> {
    Source::Seeded {
        inputs,
        first_vertex: g.wrapping_mul(n as u32),
        vertices: n as u32,
        patch: g,
    }
}

/// Runs the producer for `max_primitives` groups and records its fixed-function
/// outputs; returns what each group hands to the consumer.
fn produce(
    p: &Pipeline,
    world: &mut World,
    obs: &mut Observation,
    cfg: &RunConfig,
) -> Result<Vec<Group>, Error> {
    let prod = &p.producer;
    let groups = cfg.max_primitives as u32;
    let n = vertices_per_group(prod, &p.consumer) as u32;
    let mut out = vec![];
    for g in 0..groups {
        match prod.info {
            StageInfo::Vertex { .. } => out.push(produce_vs(prod, world, obs, g, n)?),
            StageInfo::TessCtrl { .. } => out.push(produce_tcs(prod, world, obs, g)?),
            StageInfo::TessEval { domain, .. } => {
                out.push(produce_tes(prod, domain, world, obs, g, n)?)
            }
            StageInfo::Geometry {
                output,
                invocations,
                ..
            } => {
                for i in 0..invocations as u32 {
                    out.extend(produce_gs(prod, output, world, obs, g, i)?);
                }
            }
            StageInfo::Fragment { .. } => {
                return Err(Error::Interpret(
                    "a fragment shader cannot be a producer".into(),
                ));
            }
        }
    }
    Ok(out)
}

fn produce_vs(
    vs: &Shader,
    world: &mut World,
    obs: &mut Observation,
    g: u32,
    n: u32,
) -> Result<Group, Error> {
    let mut group = Group::default();
    for k in 0..n {
        let v = g.wrapping_mul(n).wrapping_add(k);
        let o = run_vs(vs, world, v)?;
        let r = rasterized(world);
        o.observe_fixed_function(obs, Stage::Vertex, &[Unit::Vertex(v)], r);
        group.vertices.push(o);
    }
    Ok(group)
}

fn produce_tcs(
    tcs: &Shader,
    world: &mut World,
    obs: &mut Observation,
    g: u32,
) -> Result<Group, Error> {
    let src = seeded(world.inputs, g, producer_inputs(tcs));
    let group = run_tcs(tcs, world, &src, g)?;
    for (k, o) in group.vertices.iter().enumerate() {
        let path = [Unit::Patch(g), Unit::Vertex(k as u32)];
        o.observe_fixed_function(obs, Stage::TessCtrl, &path, false);
    }
    group
        .patch
        .observe_fixed_function(obs, Stage::TessCtrl, &[Unit::Patch(g)], false);
    Ok(group)
}

fn produce_tes(
    tes: &Shader,
    domain: Primitive,
    world: &mut World,
    obs: &mut Observation,
    g: u32,
    n: u32,
) -> Result<Group, Error> {
    let inputs = world.inputs;
    let src = seeded(inputs, g, producer_inputs(tes));
    let mut group = Group::default();
    for k in 0..n {
        let coord = inputs.tess_coord(domain == Primitive::Triangles, g, k);
        let o = run_tes(tes, world, &src, g, coord)?;
        let path = [Unit::Patch(g), Unit::Vertex(k)];
        o.observe_fixed_function(obs, Stage::TessEval, &path, rasterized(world));
        group.vertices.push(o);
    }
    Ok(group)
}

/// One GS invocation on input primitive `g`; returns its assembled primitives.
fn produce_gs(
    gs: &Shader,
    output: Primitive,
    world: &mut World,
    obs: &mut Observation,
    g: u32,
    i: u32,
) -> Result<Vec<Group>, Error> {
    let src = seeded(world.inputs, g, producer_inputs(gs));
    let emitted = run_gs(gs, world, &src, g, i)?;
    for (e, v) in emitted.iter().enumerate() {
        let path = [
            Unit::Primitive(g),
            Unit::Invocation(i),
            Unit::Emit(e as u32),
        ];
        v.outputs
            .observe_fixed_function(obs, Stage::Geometry, &path, rasterized(world));
    }
    let prims = assemble_strips(&emitted, output.vertex_count());
    Ok(prims
        .into_iter()
        .map(|prim| Group {
            vertices: prim.into_iter().cloned().collect(),
            ..Group::default()
        })
        .collect())
}

fn consume(
    cons: &Shader,
    groups: &[Group],
    world: &mut World,
    obs: &mut Observation,
    cfg: &RunConfig,
) -> Result<(), Error> {
    let stage = cons.stage();
    let inputs = world.inputs;
    match cons.info {
        StageInfo::Fragment { .. } => {
            let prims: Vec<Vec<_>> = groups.iter().map(|g| g.vertices.iter().collect()).collect();
            let rc = RasterConfig {
                fragments_per_primitive: cfg.fragments_per_primitive,
                max_primitives: cfg.max_primitives,
            };
            rasterize(cons, world, obs, &prims, &rc)?;
        }
        StageInfo::TessCtrl { .. } => {
            for (g, group) in groups.iter().enumerate() {
                let g = g as u32;
                let out = run_tcs(cons, world, &Source::Upstream(group), g)?;
                for (k, o) in out.vertices.iter().enumerate() {
                    o.observe_all(obs, stage, &[Unit::Patch(g), Unit::Vertex(k as u32)]);
                }
                out.patch.observe_all(obs, stage, &[Unit::Patch(g)]);
            }
        }
        StageInfo::TessEval { domain, .. } => {
            for (g, group) in groups.iter().enumerate() {
                let g = g as u32;
                for c in 0..cfg.tess_coords_per_patch as u32 {
                    let coord = inputs.tess_coord(domain == Primitive::Triangles, g, c);
                    let o = run_tes(cons, world, &Source::Upstream(group), g, coord)?;
                    o.observe_all(obs, stage, &[Unit::Patch(g), Unit::Coord(c)]);
                }
            }
        }
        StageInfo::Geometry { invocations, .. } => {
            for (g, group) in groups.iter().enumerate() {
                for i in 0..invocations as u32 {
                    consume_gs(cons, group, g as u32, i, world, obs)?;
                }
            }
        }
        StageInfo::Vertex { .. } => {
            return Err(Error::Interpret(format!(
                "a {} cannot be a consumer",
                Stage::Vertex
            )));
        }
    }
    Ok(())
}

/// One GS invocation as a consumer: every emitted vertex's outputs and strip, and
/// the number of vertices emitted.
fn consume_gs(
    gs: &Shader,
    group: &Group,
    g: u32,
    i: u32,
    world: &mut World,
    obs: &mut Observation,
) -> Result<(), Error> {
    let stage = Some(Stage::Geometry);
    let emitted = run_gs(gs, world, &Source::Upstream(group), g, i)?;
    let at = [Unit::Primitive(g), Unit::Invocation(i)];
    let count = Scalar::new(emitted.len() as u32, BitSize::B32);
    obs.insert(stage, &at, Item::EmitCount, count);
    for (e, v) in emitted.iter().enumerate() {
        let path = [at[0], at[1], Unit::Emit(e as u32)];
        obs.insert(
            stage,
            &path,
            Item::Strip,
            Scalar::new(v.strip, BitSize::B32),
        );
        v.outputs.observe_all(obs, Stage::Geometry, &path);
    }
    Ok(())
}
