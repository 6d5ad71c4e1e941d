//! Invocation schemes of the non-fragment stages: a VS vertex, a TCS patch (all its
//! invocations, phase by phase between barriers), a TES tess coordinate, and a GS
//! input primitive (emitted vertices and their strips), plus the output records they
//! hand to the next stage.

use std::collections::BTreeMap;

use crate::error::Error;
use crate::ir::{BitSize, Half, IoSlot, Shader, SlotClass, Stage, StageInfo, SystemValue};

use super::exec::{barrier_phases, Invocation, StageIo, StoreHow, World};
use super::observe::{Item, Observation, Unit};
use super::{Inputs, Scalar};

/// One stored output component and how it was stored.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Stored {
    pub value: Scalar,
    pub how: StoreHow,
}

/// The outputs one vertex (or one patch) ends with, by address.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Outputs(pub BTreeMap<IoSlot, Stored>);

impl Outputs {
    /// Stores a component. A 32-bit component holds either one full value or two
    /// halves, so a store of one granularity first splits or drops the other.
    fn store(&mut self, slot: IoSlot, value: Scalar, how: StoreHow) {
        let at = |half| IoSlot { half, ..slot };
        if slot.half == Half::Full {
            self.0.remove(&at(Half::Lo));
            self.0.remove(&at(Half::Hi));
        } else if let Some(full) = self.0.remove(&at(Half::Full)) {
            for half in [Half::Lo, Half::Hi] {
                let value = half_of(full.value, half);
                self.0.insert(at(half), Stored { value, ..full });
            }
        }
        self.0.insert(slot, Stored { value, how });
    }

    /// The value at `slot` as the hardware holds it: the exact store, the half of a
    /// full store, or a full value assembled from two half stores.
    fn lookup(&self, slot: IoSlot, varying_only: bool) -> Option<Scalar> {
        let get = |s: IoSlot| {
            let st = self.0.get(&s).filter(|st| st.how.varying || !varying_only);
            st.map(|st| st.value)
        };
        if let Some(v) = get(slot) {
            return Some(v);
        }
        let at = |half| IoSlot { half, ..slot };
        if slot.half != Half::Full {
            return get(at(Half::Full)).map(|full| half_of(full, slot.half));
        }
        let (lo, hi) = (get(at(Half::Lo)), get(at(Half::Hi)));
        if lo.is_none() && hi.is_none() {
            return None;
        }
        let undef = Scalar::undef(BitSize::B16);
        let (lo, hi) = (lo.unwrap_or(undef), hi.unwrap_or(undef));
        let bits = (lo.bits & 0xffff) | (hi.bits << 16);
        Some(Scalar::new(bits, BitSize::B32).defined_if(lo.defined && hi.defined))
    }

    /// What the next stage reads at `slot`: `None` when the producer did not store
    /// it as a varying.
    pub fn varying(&self, slot: IoSlot, size: BitSize) -> Option<Scalar> {
        self.lookup(slot, true).map(|v| v.resized(size))
    }

    /// What fixed function reads at `slot`, a `no_varying` store included (the
    /// viewport mask steers rasterization whether or not the FS reads it).
    pub fn fixed_function(&self, slot: IoSlot, size: BitSize) -> Option<Scalar> {
        self.lookup(slot, false).map(|v| v.resized(size))
    }

    /// What a stage reads back from its own outputs.
    fn read_back(&self, slot: IoSlot, size: BitSize) -> Scalar {
        self.lookup(slot, false)
            .map_or(Scalar::undef(size), |v| v.resized(size))
    }

    /// Records what fixed function sees of a producer's outputs (also `no_varying`
    /// ones): system-value slots when the rasterizer follows (`rasterized`: the
    /// consumer is an FS; before a TCS, TES or GS, POS and the like are plain data),
    /// tessellation levels of a TCS (the tessellator), and transform feedback.
    pub fn observe_fixed_function(
        &self,
        obs: &mut Observation,
        stage: Stage,
        path: &[Unit],
        rasterized: bool,
    ) {
        for (slot, s) in &self.0 {
            let seen = match slot.slot.class() {
                SlotClass::SysVal => rasterized,
                SlotClass::TessLevel => stage == Stage::TessCtrl,
                _ => false,
            };
            if seen {
                obs.insert(Some(stage), path, Item::Output(*slot), s.value);
            }
            if let Some(x) = s.how.xfb {
                // The offset is the value's own (a 16-bit value's too, in
                // whichever half of its slot it is stored).
                let item = Item::Xfb {
                    buffer: x.buffer,
                    offset: u32::from(x.offset),
                };
                obs.insert(Some(stage), path, item, s.value);
            }
        }
    }

    /// Records every stored component (a consumer's outputs are all observable).
    pub fn observe_all(&self, obs: &mut Observation, stage: Stage, path: &[Unit]) {
        for (slot, s) in &self.0 {
            obs.insert(Some(stage), path, Item::Output(*slot), s.value);
        }
    }
}

/// The low or high 16 bits of a 32-bit value.
fn half_of(full: Scalar, half: Half) -> Scalar {
    let shift = if half == Half::Hi { 16 } else { 0 };
    Scalar::new(full.bits >> shift, BitSize::B16).defined_if(full.defined)
}

/// What one primitive or patch hands to the next stage.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Group {
    /// Per-vertex outputs, in primitive / patch order.
    pub vertices: Vec<Outputs>,
    /// Per-patch outputs (TCS only).
    pub patch: Outputs,
}

/// Where a TCS, TES or GS reads its per-vertex and patch inputs.
pub(crate) enum Source<'a> {
    /// From a stage outside the pair: seeded by global vertex number and patch.
    Seeded {
        inputs: Inputs,
        first_vertex: u32,
        vertices: u32,
        patch: u32,
    },
    /// From the pair's producer.
    Upstream(&'a Group),
}

impl Source<'_> {
    fn vertex_count(&self) -> u32 {
        match self {
            Source::Seeded { vertices, .. } => *vertices,
            Source::Upstream(g) => g.vertices.len() as u32,
        }
    }

    /// Input `slot` of vertex `vertex`; undefined when the index is undefined or out
    /// of range or the producer did not write it.
    fn per_vertex(&self, slot: IoSlot, vertex: Scalar, size: BitSize) -> Scalar {
        if !vertex.defined || vertex.bits >= self.vertex_count() {
            return Scalar::undef(size);
        }
        match self {
            Source::Seeded {
                inputs,
                first_vertex,
                ..
            } => inputs.per_vertex_input(slot, first_vertex.wrapping_add(vertex.bits), size),
            Source::Upstream(g) => g
                .vertices
                .get(vertex.bits as usize)
                .and_then(|o| o.varying(slot, size))
                .unwrap_or(Scalar::undef(size)),
        }
    }

    fn patch(&self, slot: IoSlot, size: BitSize) -> Scalar {
        match self {
            Source::Seeded { inputs, patch, .. } => inputs.patch_input(slot, *patch, size),
            Source::Upstream(g) => g.patch.varying(slot, size).unwrap_or(Scalar::undef(size)),
        }
    }
}

/// A system value every stage may read.
fn common_sv(inputs: &Inputs, sv: SystemValue, size: BitSize) -> Scalar {
    match sv {
        SystemValue::ViewIndex => Scalar::new(inputs.view_index(), size),
        _ => Scalar::undef(size),
    }
}

struct VsIo {
    inputs: Inputs,
    vertex: u32,
    out: Outputs,
}

impl StageIo for VsIo {
    fn system_value(&mut self, sv: SystemValue, size: BitSize) -> Scalar {
        match sv {
            SystemValue::VertexId => Scalar::new(self.vertex, size),
            SystemValue::InstanceId => Scalar::new(self.inputs.instance_id(), size),
            _ => common_sv(&self.inputs, sv, size),
        }
    }

    fn load_input(&mut self, slot: IoSlot, size: BitSize) -> Scalar {
        match slot.slot.class() {
            SlotClass::Attribute => self.inputs.attribute(slot, self.vertex, size),
            _ => Scalar::undef(size),
        }
    }

    fn store(&mut self, slot: IoSlot, value: Scalar, _vertex: Option<Scalar>, how: StoreHow) {
        self.out.store(slot, value, how);
    }
}

/// Runs the VS for global vertex number `vertex`.
pub(crate) fn run_vs(vs: &Shader, world: &mut World, vertex: u32) -> Result<Outputs, Error> {
    let mut io = VsIo {
        inputs: world.inputs,
        vertex,
        out: Outputs::default(),
    };
    Invocation::new(vs).run_top(&vs.body, world, &mut io)?;
    Ok(io.out)
}

struct TcsIo<'a, 'g> {
    inputs: Inputs,
    src: &'a Source<'a>,
    invocation: u32,
    patch: u32,
    shared: &'g mut Group,
}

impl TcsIo<'_, '_> {
    /// The output vertex a per-vertex access reaches (own vertex when none is given).
    fn out_vertex(&self, vertex: Option<Scalar>) -> Option<usize> {
        let v = vertex.unwrap_or(Scalar::new(self.invocation, BitSize::B32));
        let ok = v.defined && (v.bits as usize) < self.shared.vertices.len();
        ok.then_some(v.bits as usize)
    }
}

impl StageIo for TcsIo<'_, '_> {
    fn system_value(&mut self, sv: SystemValue, size: BitSize) -> Scalar {
        match sv {
            SystemValue::InvocationId => Scalar::new(self.invocation, size),
            SystemValue::PrimitiveId => Scalar::new(self.patch, size),
            SystemValue::PatchVerticesIn => Scalar::new(self.src.vertex_count(), size),
            _ => common_sv(&self.inputs, sv, size),
        }
    }

    fn load_per_vertex(&mut self, slot: IoSlot, vertex: Scalar, size: BitSize) -> Scalar {
        self.src.per_vertex(slot, vertex, size)
    }

    fn load_output(&mut self, slot: IoSlot, vertex: Option<Scalar>, size: BitSize) -> Scalar {
        if slot.slot.is_patch() {
            return self.shared.patch.read_back(slot, size);
        }
        match self.out_vertex(vertex) {
            Some(v) => self.shared.vertices[v].read_back(slot, size),
            None => Scalar::undef(size),
        }
    }

    fn store(&mut self, slot: IoSlot, value: Scalar, vertex: Option<Scalar>, how: StoreHow) {
        if slot.slot.is_patch() {
            self.shared.patch.store(slot, value, how);
        } else if let Some(v) = self.out_vertex(vertex) {
            self.shared.vertices[v].store(slot, value, how);
        }
    }
}

/// Runs all invocations of a TCS for one patch. The body is split at top-level
/// barriers; each phase runs for every invocation in turn before the next phase, so
/// `load_output` sees everything stored before the barrier by any invocation. The
/// invocations take their turns in a seeded order per phase (`Inputs::tcs_order`),
/// so which invocation stores an output last is not fixed.
pub(crate) fn run_tcs(
    tcs: &Shader,
    world: &mut World,
    src: &Source,
    patch: u32,
) -> Result<Group, Error> {
    let outputs = match tcs.info {
        StageInfo::TessCtrl {
            output_vertices, ..
        } => output_vertices as usize,
        _ => 0,
    };
    let phases = barrier_phases(tcs, world.pipeline.source.as_deref())?;
    let mut group = Group {
        vertices: vec![Outputs::default(); outputs],
        patch: Outputs::default(),
    };
    let mut invocations: Vec<(Invocation, bool)> =
        (0..outputs).map(|_| (Invocation::new(tcs), true)).collect();
    for (p, phase) in phases.into_iter().enumerate() {
        for i in world.inputs.tcs_order(patch, p as u32, outputs) {
            let (inv, alive) = &mut invocations[i];
            if !*alive {
                continue;
            }
            let mut io = TcsIo {
                inputs: world.inputs,
                src,
                invocation: i as u32,
                patch,
                shared: &mut group,
            };
            *alive = inv.run_top(phase, world, &mut io)?;
        }
    }
    Ok(group)
}

struct TesIo<'a> {
    inputs: Inputs,
    src: &'a Source<'a>,
    patch: u32,
    coord: [f32; 3],
    out: Outputs,
}

impl StageIo for TesIo<'_> {
    fn system_value(&mut self, sv: SystemValue, size: BitSize) -> Scalar {
        match sv {
            SystemValue::TessCoordX => Scalar::float(self.coord[0], size),
            SystemValue::TessCoordY => Scalar::float(self.coord[1], size),
            SystemValue::TessCoordZ => Scalar::float(self.coord[2], size),
            SystemValue::PrimitiveId => Scalar::new(self.patch, size),
            SystemValue::PatchVerticesIn => Scalar::new(self.src.vertex_count(), size),
            _ => common_sv(&self.inputs, sv, size),
        }
    }

    fn load_input(&mut self, slot: IoSlot, size: BitSize) -> Scalar {
        self.src.patch(slot, size)
    }

    fn load_per_vertex(&mut self, slot: IoSlot, vertex: Scalar, size: BitSize) -> Scalar {
        self.src.per_vertex(slot, vertex, size)
    }

    fn store(&mut self, slot: IoSlot, value: Scalar, _vertex: Option<Scalar>, how: StoreHow) {
        self.out.store(slot, value, how);
    }
}

/// Runs the TES at one tess coordinate of patch `patch`.
pub(crate) fn run_tes(
    tes: &Shader,
    world: &mut World,
    src: &Source,
    patch: u32,
    coord: [f32; 3],
) -> Result<Outputs, Error> {
    let mut io = TesIo {
        inputs: world.inputs,
        src,
        patch,
        coord,
        out: Outputs::default(),
    };
    Invocation::new(tes).run_top(&tes.body, world, &mut io)?;
    Ok(io.out)
}

/// One vertex a GS emitted.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Emitted {
    /// Snapshot of the outputs at `emit_vertex`.
    pub outputs: Outputs,
    /// Number of `end_primitive`s before it in its invocation.
    pub strip: u32,
}

struct GsIo<'a> {
    inputs: Inputs,
    src: &'a Source<'a>,
    prim: u32,
    invocation: u32,
    max_vertices: usize,
    current: Outputs,
    strip: u32,
    emitted: Vec<Emitted>,
}

impl StageIo for GsIo<'_> {
    fn system_value(&mut self, sv: SystemValue, size: BitSize) -> Scalar {
        match sv {
            SystemValue::InvocationId => Scalar::new(self.invocation, size),
            SystemValue::PrimitiveId => Scalar::new(self.prim, size),
            _ => common_sv(&self.inputs, sv, size),
        }
    }

    fn load_per_vertex(&mut self, slot: IoSlot, vertex: Scalar, size: BitSize) -> Scalar {
        self.src.per_vertex(slot, vertex, size)
    }

    fn store(&mut self, slot: IoSlot, value: Scalar, _vertex: Option<Scalar>, how: StoreHow) {
        self.current.store(slot, value, how);
    }

    /// Snapshots the outputs; afterwards they are undefined again (as GL specifies).
    /// Emits beyond `max_vertices` are dropped; an emit under taint emits a vertex
    /// whose every output is undefined.
    fn emit_vertex(&mut self, defined: bool) {
        let mut outputs = std::mem::take(&mut self.current);
        if self.emitted.len() >= self.max_vertices {
            return;
        }
        for s in outputs.0.values_mut() {
            s.value = s.value.defined_if(defined);
        }
        self.emitted.push(Emitted {
            outputs,
            strip: self.strip,
        });
    }

    fn end_primitive(&mut self) {
        self.strip += 1;
    }
}

/// Runs GS invocation `invocation` on input primitive `prim`.
pub(crate) fn run_gs(
    gs: &Shader,
    world: &mut World,
    src: &Source,
    prim: u32,
    invocation: u32,
) -> Result<Vec<Emitted>, Error> {
    let max_vertices = match gs.info {
        StageInfo::Geometry { max_vertices, .. } => max_vertices as usize,
        _ => 0,
    };
    let mut io = GsIo {
        inputs: world.inputs,
        src,
        prim,
        invocation,
        max_vertices,
        current: Outputs::default(),
        strip: 0,
        emitted: vec![],
    };
    Invocation::new(gs).run_top(&gs.body, world, &mut io)?;
    Ok(io.emitted)
}

/// Assembles one invocation's emitted vertices into output primitives of
/// `vertices_per_prim` vertices (1 points, 2 line strips, 3 triangle strips). Strip
/// primitive `i` uses vertices `i, i+1, i+2` in emission order (the winding of odd
/// triangles does not matter here: it only affects culling, and the provoking vertex
/// is first or last of these three in both GL and Vulkan conventions).
pub(crate) fn assemble_strips(emitted: &[Emitted], vertices_per_prim: usize) -> Vec<Vec<&Outputs>> {
    let n = vertices_per_prim.max(1);
    let mut prims = vec![];
    for strip in emitted.chunk_by(|a, b| a.strip == b.strip) {
        for window in strip.windows(n) {
            prims.push(window.iter().map(|e| &e.outputs).collect());
        }
    }
    prims
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Slot;

    const HOW: StoreHow = StoreHow {
        xfb: None,
        varying: true,
    };

    fn at(half: Half) -> IoSlot {
        IoSlot::half(Slot::Var(2), 1, half)
    }

    #[test]
    fn halves_and_full_components_share_storage() {
        let mut o = Outputs::default();
        o.store(at(Half::Full), Scalar::new(0x1234_5678, BitSize::B32), HOW);
        assert_eq!(
            o.varying(at(Half::Hi), BitSize::B16),
            Some(Scalar::new(0x1234, BitSize::B16))
        );
        o.store(at(Half::Lo), Scalar::new(0xabcd, BitSize::B16), HOW);
        assert_eq!(
            o.varying(at(Half::Full), BitSize::B32),
            Some(Scalar::new(0x1234_abcd, BitSize::B32))
        );
        o.store(at(Half::Full), Scalar::new(7, BitSize::B32), HOW);
        assert_eq!(
            o.varying(at(Half::Lo), BitSize::B16),
            Some(Scalar::new(7, BitSize::B16))
        );
        assert_eq!(o.0.len(), 1);
    }

    #[test]
    fn one_half_alone_gives_an_undefined_full_value() {
        let mut o = Outputs::default();
        o.store(at(Half::Hi), Scalar::new(0x3c00, BitSize::B16), HOW);
        assert_eq!(
            o.varying(at(Half::Full), BitSize::B32).map(|v| v.defined),
            Some(false)
        );
        assert_eq!(o.varying(at(Half::Lo), BitSize::B16), None);
    }

    #[test]
    fn no_varying_stores_are_invisible_to_the_next_stage() {
        let mut o = Outputs::default();
        let how = StoreHow {
            xfb: None,
            varying: false,
        };
        o.store(at(Half::Full), Scalar::new(1, BitSize::B32), how);
        assert_eq!(o.varying(at(Half::Full), BitSize::B32), None);
        assert_eq!(
            o.read_back(at(Half::Full), BitSize::B32),
            Scalar::new(1, BitSize::B32)
        );
    }
}
