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
use crate::ir::{Pipeline, Primitive, Shader, Stage, StageInfo};

use super::exec::World;
use super::observe::{Item, Observation, Unit};
use super::raster::{rasterize, RasterConfig};
use super::stages::{assemble_strips, run_gs, run_tcs, run_tes, run_vs, Group, Source};
use super::{Inputs, RunConfig};

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
        first_vertex: g * n as u32,
        vertices: n as u32,
        patch: g,
    }
}

fn produce(
    p: &Pipeline,
    world: &mut World,
    obs: &mut Observation,
    cfg: &RunConfig,
) -> Result<Vec<Group>, Error> {
    let prod = &p.producer;
    let stage = prod.stage();
    let groups = cfg.max_primitives as u32;
    let n = vertices_per_group(prod, &p.consumer);
    let inputs = world.inputs;
    let mut out = vec![];
    match prod.info {
        StageInfo::Vertex { .. } => {
            for g in 0..groups {
                let mut group = Group::default();
                for k in 0..n as u32 {
                    let v = g * n as u32 + k;
                    let o = run_vs(prod, world, v)?;
                    o.observe_fixed_function(obs, stage, &[Unit::Vertex(v)]);
                    group.vertices.push(o);
                }
                out.push(group);
            }
        }
        StageInfo::TessCtrl { .. } => {
            for g in 0..groups {
                let src = seeded(inputs, g, producer_inputs(prod));
                let group = run_tcs(prod, world, &src, g)?;
                for (k, o) in group.vertices.iter().enumerate() {
                    o.observe_fixed_function(obs, stage, &[Unit::Patch(g), Unit::Vertex(k as u32)]);
                }
                group
                    .patch
                    .observe_fixed_function(obs, stage, &[Unit::Patch(g)]);
                out.push(group);
            }
        }
        StageInfo::TessEval { domain, .. } => {
            for g in 0..groups {
                let src = seeded(inputs, g, producer_inputs(prod));
                let mut group = Group::default();
                for k in 0..n as u32 {
                    let coord = inputs.tess_coord(domain == Primitive::Triangles, g, k);
                    let o = run_tes(prod, world, &src, g, coord)?;
                    o.observe_fixed_function(obs, stage, &[Unit::Patch(g), Unit::Vertex(k)]);
                    group.vertices.push(o);
                }
                out.push(group);
            }
        }
        StageInfo::Geometry {
            output,
            invocations,
            ..
        } => {
            for g in 0..groups {
                let src = seeded(inputs, g, producer_inputs(prod));
                for i in 0..invocations as u32 {
                    let emitted = run_gs(prod, world, &src, g, i)?;
                    for (e, v) in emitted.iter().enumerate() {
                        let path = [
                            Unit::Primitive(g),
                            Unit::Invocation(i),
                            Unit::Emit(e as u32),
                        ];
                        v.outputs.observe_fixed_function(obs, stage, &path);
                    }
                    for prim in assemble_strips(&emitted, output.vertex_count()) {
                        let vertices = prim.into_iter().cloned().collect();
                        out.push(Group {
                            vertices,
                            ..Group::default()
                        });
                    }
                }
            }
        }
        StageInfo::Fragment { .. } => {
            return Err(Error::Interpret(
                "a fragment shader cannot be a producer".into(),
            ));
        }
    }
    Ok(out)
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
                let g = g as u32;
                for i in 0..invocations as u32 {
                    let emitted = run_gs(cons, world, &Source::Upstream(group), g, i)?;
                    let at = [Unit::Primitive(g), Unit::Invocation(i)];
                    let count = crate::interpreter::Scalar::new(
                        emitted.len() as u32,
                        crate::ir::BitSize::B32,
                    );
                    obs.insert(Some(stage), &at, Item::EmitCount, count);
                    for (e, v) in emitted.iter().enumerate() {
                        let path = [at[0], at[1], Unit::Emit(e as u32)];
                        let strip =
                            crate::interpreter::Scalar::new(v.strip, crate::ir::BitSize::B32);
                        obs.insert(Some(stage), &path, Item::Strip, strip);
                        v.outputs.observe_all(obs, stage, &path);
                    }
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
