//! Rasterization for an FS consumer: seeded fragments inside each assembled primitive,
//! their barycentrics and clip w, and interpolation of the producer's outputs.
//!
//! - perspective: `f = Σ(λk·fk/wk) / Σ(λk/wk)`; linear: `f = Σ λk·fk`; flat: the
//!   provoking vertex, except in a vec4 slot the FS also reads interpolated (with a
//!   live load), where a flat read gets the first vertex (interpolation is per attribute in hardware;
//!   AMD reads such a component with `v_interp_mov` of P0). Plain IEEE f32
//!   arithmetic (an Inf with weight 0 gives NaN).
//! - centre, centroid and sample locations each have their own seeded barycentrics.
//! - `at_offset dx dy` moves the centre barycentrics by the linear map
//!   [`offset_barycentrics`]; `at_sample i` uses the offset `SAMPLE_OFFSETS[i]`
//!   (undefined for an index outside the table).
//! - 16-bit values are interpolated in f32 and rounded to f16.
//! - Unwritten inputs are undefined, except TEXn.xy = the point coordinate (coord
//!   replace), TEXn.z = 0, TEXn.w = 1, LAYER = VIEWPORT = 0.
//! - Fixed function: `PNTC` is always the rasterizer's point coordinate, and
//!   `PRIMITIVE_ID` its primitive number unless a GS (which writes it) feeds the FS.
//!   Two-sided colour selection (a seeded state, see `Inputs::two_sided_colour`) makes
//!   a back-facing primitive read `BFCn` for `COLn`; with clamping on (also seeded)
//!   colours are clamped to `[0, 1]` per vertex before interpolation.
//! - Viewport mask (`GL_NV_viewport_array2`): when the producer writes
//!   `VIEWPORT_MASK`, each primitive is rasterized once per set bit `i` below
//!   [`MAX_VIEWPORTS`] (path `primitive p / viewport i / fragment f`); that copy reads
//!   `VIEWPORT` = `i` and, with a viewport-relative layer, `LAYER` = the stored
//!   layer + `i`. A mask of 0 draws nothing; a mask that is undefined or differs
//!   between the primitive's vertices (undefined in the spec) observes no fragment.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::Error;
use crate::ir::{
    walk, BitSize, InstKind, Interp, InterpLoc, InterpMode, IoSlot, ProvokingVertex, Shader, Slot,
    Stage, StageInfo, Stmt, SystemValue, Value, Values, Visit,
};

use super::exec::{Invocation, StageIo, StoreHow, World};
use super::observe::{FragmentInfo, Item, Observation, Unit};
use super::stages::Outputs;
use super::{Inputs, Scalar};

/// Sample positions (in pixels from the centre) of the standard 4× pattern, used by
/// `at_sample`.
pub const SAMPLE_OFFSETS: [[f32; 2]; 4] = [
    [-0.125, -0.375],
    [0.375, -0.125],
    [-0.375, 0.125],
    [0.125, 0.375],
];

/// The viewports a mask may select: `GL_MAX_VIEWPORTS` in Mesa. A mask bit at or
/// above it names no viewport, so it draws no copy.
pub const MAX_VIEWPORTS: u32 = 16;

/// How far one pixel of offset moves a barycentric weight.
pub const OFFSET_SCALE: f32 = 0.25;

/// Barycentrics `center` moved by a pixel offset `(dx, dy)`: a triangle's weights
/// change by `OFFSET_SCALE · (dx, dy, -dx-dy)`, a line's by `OFFSET_SCALE · (dx, -dx)`,
/// a point's not at all. The sum stays 1; weights may leave `[0, 1]` (extrapolation).
pub fn offset_barycentrics(center: &[f32], dx: f32, dy: f32) -> Vec<f32> {
    let (sx, sy) = (OFFSET_SCALE * dx, OFFSET_SCALE * dy);
    match center {
        [a, b, c] => vec![a + sx, b + sy, c - sx - sy],
        [a, b] => vec![a + sx, b - sx],
        other => other.to_vec(),
    }
}

/// Interpolates vertex values with barycentric `weights`; `clip_w` is `Some` for
/// perspective-correct interpolation.
///
/// Evaluated the way AMD hardware does, as `f0 + Σk≥1 λk·(fk − f0)` over the
/// (perspective-corrected) barycentrics: a finite value stored alike at every vertex
/// then interpolates to exactly itself (a `-0` to `+0`, as on hardware), which is what
/// makes propagating a convergent value sound; and an infinity at any vertex gives NaN (`inf − inf`), the
/// "interpolation turns Inf into NaN" behaviour the optimizer's laws must respect.
pub fn interpolate(values: &[f32], weights: &[f32], clip_w: Option<&[f32]>) -> f32 {
    let corrected: Vec<f32> = match clip_w {
        Some(w) => {
            let scaled: Vec<f32> = weights.iter().zip(w).map(|(l, w)| l / w).collect();
            let total: f32 = scaled.iter().sum();
            scaled.iter().map(|s| s / total).collect()
        }
        None => weights.to_vec(),
    };
    let Some(&first) = values.first() else {
        return f32::NAN;
    };
    let deltas = values.iter().zip(&corrected).skip(1);
    first + deltas.map(|(f, l)| l * (f - first)).sum::<f32>()
}

/// Pipeline state outside both shaders that decides what an FS input reads.
#[derive(Clone, Copy, Debug)]
struct FixedFunction {
    /// Two-sided colour selection picks the back colours for this primitive.
    back_colours: bool,
    /// Vertex colours are clamped to `[0, 1]`.
    clamp_colours: bool,
    /// The shade model is `GL_FLAT`: a `color`-interpolated input reads the
    /// provoking vertex.
    flat_shade: bool,
    /// A GS feeds the FS: `PRIMITIVE_ID` is then the varying it writes, otherwise
    /// the rasterizer's primitive number.
    producer_is_gs: bool,
}

/// What an FS reads at `slot` of one vertex, or `None` when the producer did not
/// write it. A colour read takes the back colour on a back face under two-sided
/// selection, and is clamped when vertex colours are.
fn vertex_input(v: &Outputs, slot: IoSlot, size: BitSize, ff: FixedFunction) -> Option<Scalar> {
    let (read, colour) = match slot.slot {
        Slot::Col(n) if ff.back_colours => (
            IoSlot {
                slot: Slot::Bfc(n),
                ..slot
            },
            true,
        ),
        Slot::Col(_) => (slot, true),
        _ => (slot, false),
    };
    let s = v.varying(read, size)?;
    Some(if colour && ff.clamp_colours {
        clamp_unit(s)
    } else {
        s
    })
}

/// A float clamped to `[0, 1]` (NaN gives 0, as the hardware clamp does).
fn clamp_unit(s: Scalar) -> Scalar {
    if !s.defined || s.size == BitSize::B1 {
        return s;
    }
    let f = s.as_f32();
    let c = if f > 1.0 {
        1.0
    } else if f > 0.0 {
        f
    } else {
        0.0
    };
    Scalar::float(c, s.size)
}

struct FsIo<'a> {
    inputs: Inputs,
    ff: FixedFunction,
    vertices: &'a [&'a Outputs],
    provoking: usize,
    /// The vec4 slots the FS reads interpolated somewhere (see [`interpolated_slots`]).
    interpolated: &'a BTreeSet<Slot>,
    info: &'a FragmentInfo,
    prim: u32,
    frag: u32,
    /// The viewport this copy of a viewport-mask broadcast is drawn to.
    copy: Option<u32>,
    /// Whether the layer the FS reads is the stored layer plus `copy`.
    layer_relative: bool,
    out: Outputs,
    discard: Scalar,
}

impl FsIo<'_> {
    /// Inputs the rasterizer supplies whatever the producer stores: the point
    /// coordinate, and the primitive id when no GS precedes the FS.
    fn fixed_function_input(&self, slot: IoSlot, size: BitSize) -> Option<Scalar> {
        match slot.slot {
            Slot::Pntc => Some(self.point_coord(slot.comp, size)),
            Slot::PrimitiveId if !self.ff.producer_is_gs => Some(Scalar::new(self.prim, size)),
            _ => None,
        }
    }

    /// `VIEWPORT` (and a viewport-relative `LAYER`) in one copy of a viewport-mask
    /// broadcast: the copy's viewport, not what the producer stored.
    fn broadcast_input(&self, slot: IoSlot, size: BitSize) -> Option<Scalar> {
        let i = self.copy?;
        match slot.slot {
            Slot::Viewport => Some(Scalar::new(i, size)),
            Slot::Layer if self.layer_relative => {
                let base = self.at_vertex(self.provoking, slot, size);
                Some(Scalar::new(base.bits.wrapping_add(i), size).defined_if(base.defined))
            }
            _ => None,
        }
    }

    fn point_coord(&self, comp: u8, size: BitSize) -> Scalar {
        match self
            .inputs
            .point_coord(self.prim, self.frag)
            .get(comp as usize)
        {
            Some(c) => Scalar::float(*c, size),
            None => Scalar::undef(size),
        }
    }

    /// What an unwritten input reads: TEXn.xy the point coordinate (coord replace),
    /// TEXn.zw (0, 1), LAYER and VIEWPORT 0, anything else undefined.
    fn unwritten(&self, slot: IoSlot, size: BitSize) -> Scalar {
        match (slot.slot, slot.comp) {
            (Slot::Tex(_), 0 | 1) => self.point_coord(slot.comp, size),
            (Slot::Tex(_), 2) => Scalar::float(0.0, size),
            (Slot::Tex(_), 3) => Scalar::float(1.0, size),
            (Slot::Layer | Slot::Viewport, _) => Scalar::new(0, size),
            _ => Scalar::undef(size),
        }
    }

    /// Input `slot` at vertex `k` of the primitive, with the fixed-function defaults.
    fn at_vertex(&self, k: usize, slot: IoSlot, size: BitSize) -> Scalar {
        match self.vertices.get(k) {
            Some(v) => {
                vertex_input(v, slot, size, self.ff).unwrap_or_else(|| self.unwritten(slot, size))
            }
            None => Scalar::undef(size),
        }
    }

    /// The barycentrics a mode evaluates at, or `None` when its operands are undefined.
    fn weights(&self, loc: InterpLoc, ops: &[Scalar]) -> Option<Vec<f32>> {
        match (loc, ops) {
            (InterpLoc::Center, _) => Some(self.info.center.clone()),
            (InterpLoc::Centroid, _) => Some(self.info.centroid.clone()),
            (InterpLoc::Sample, _) => Some(self.info.sample.clone()),
            (InterpLoc::AtOffset, [dx, dy]) if dx.defined && dy.defined => Some(
                offset_barycentrics(&self.info.center, dx.as_f32(), dy.as_f32()),
            ),
            (InterpLoc::AtSample, [i]) if i.defined => {
                let [dx, dy] = SAMPLE_OFFSETS.get(i.bits as usize)?;
                Some(offset_barycentrics(&self.info.center, *dx, *dy))
            }
            _ => None,
        }
    }
}

impl StageIo for FsIo<'_> {
    fn system_value(&mut self, sv: SystemValue, size: BitSize) -> Scalar {
        let [x, y, z] = self.inputs.frag_coord(self.prim, self.frag);
        let inv_w: f32 = self
            .info
            .center
            .iter()
            .zip(&self.info.clip_w)
            .map(|(l, w)| l / w)
            .sum();
        match sv {
            SystemValue::PrimitiveId => Scalar::new(self.prim, size),
            SystemValue::FrontFace => Scalar::new(self.inputs.front_face(self.prim) as u32, size),
            SystemValue::SampleId => Scalar::new(self.inputs.sample_id(self.prim, self.frag), size),
            SystemValue::SampleMaskIn => {
                Scalar::new(self.inputs.sample_mask_in(self.prim, self.frag), size)
            }
            SystemValue::FragCoordX => Scalar::float(x, size),
            SystemValue::FragCoordY => Scalar::float(y, size),
            SystemValue::FragCoordZ => Scalar::float(z, size),
            SystemValue::FragCoordW => Scalar::float(inv_w, size),
            SystemValue::ViewIndex => Scalar::new(self.inputs.view_index(), size),
            _ => Scalar::undef(size),
        }
    }

    fn load_input(&mut self, slot: IoSlot, size: BitSize) -> Scalar {
        if let Some(s) = self.fixed_function_input(slot, size) {
            return s;
        }
        if let Some(s) = self.broadcast_input(slot, size) {
            return s;
        }
        // A flat read of one component of an interpolated vec4 (AMD's v_interp_mov
        // of P0) reads the primitive's first vertex, whichever vertex provokes: only
        // a value equal at every vertex reads the same as a flat input.
        if self.interpolated.contains(&slot.slot) {
            return self.at_vertex(0, slot, size);
        }
        self.at_vertex(self.provoking, slot, size)
    }

    fn load_interpolated(
        &mut self,
        slot: IoSlot,
        mode: InterpMode,
        ops: &[Scalar],
        size: BitSize,
    ) -> Scalar {
        if let Some(s) = self.fixed_function_input(slot, size) {
            return s;
        }
        if let Some(s) = self.broadcast_input(slot, size) {
            return s;
        }
        if mode.interp == Interp::Color && self.ff.flat_shade {
            return self.at_vertex(self.provoking, slot, size);
        }
        let vals: Vec<Scalar> = (0..self.vertices.len())
            .map(|k| self.at_vertex(k, slot, size))
            .collect();
        let Some(weights) = self.weights(mode.loc, ops) else {
            return Scalar::undef(size);
        };
        if vals.is_empty() || vals.iter().any(|v| !v.defined) {
            return Scalar::undef(size);
        }
        let floats: Vec<f32> = vals.iter().map(|v| v.as_f32()).collect();
        let perspective = matches!(mode.interp, Interp::Persp | Interp::Color);
        let w = perspective.then_some(self.info.clip_w.as_slice());
        Scalar::float(interpolate(&floats, &weights, w), size)
    }

    fn store(&mut self, slot: IoSlot, value: Scalar, _vertex: Option<Scalar>, how: StoreHow) {
        self.out
            .0
            .insert(slot, super::stages::Stored { value, how });
    }

    fn discard(&mut self, defined: bool) {
        // A discard under taint can only weaken an earlier definite one to "maybe".
        if !(self.discard.defined && self.discard.bits == 1) {
            self.discard = Scalar::bool(true).defined_if(defined);
        }
    }
}

/// The vec4 slots an FS reads interpolated with a live load (an indirect read: every
/// slot of its array). Hardware sets interpolation per attribute (vec4): such an
/// attribute is not flat-shaded, so a flat read of one of its components cannot see
/// the provoking vertex. A load whose value reaches nothing is left out, as the
/// driver's dead-code elimination would remove it before deciding; so are colour
/// slots read with the shade model (flat shading then covers the whole attribute).
fn interpolated_slots(fs: &Shader) -> BTreeSet<Slot> {
    let live = live_values(fs);
    let mut slots = BTreeSet::new();
    fs.for_each_inst(|inst| {
        if let InstKind::LoadInterpolatedInput {
            slot,
            mode,
            indirect,
            ..
        } = &inst.kind
        {
            if mode.interp == Interp::Color || !inst.result.is_some_and(|r| live.contains(&r)) {
                return;
            }
            let len = indirect.as_ref().map_or(1, |i| u32::from(i.len));
            slots.extend((0..len).filter_map(|k| slot.slot.offset(k)));
        }
    });
    slots
}

/// The values of `s` that reach an effect (a store, a discard, any instruction with
/// side effects), a branch condition or a loop's next iteration, through any chain of
/// operands and phis.
fn live_values(s: &Shader) -> BTreeSet<Value> {
    let mut deps: BTreeMap<Value, Values> = BTreeMap::new();
    let mut work: Vec<Value> = vec![];
    for visit in walk(&s.body) {
        match visit {
            Visit::Enter(Stmt::Inst(inst)) => match inst.result {
                Some(r) if !inst.kind.has_side_effects() => {
                    deps.insert(r, inst.kind.operands());
                }
                _ => work.extend(inst.kind.operands()),
            },
            Visit::Enter(Stmt::If { cond, phis, .. }) => {
                work.push(*cond);
                for phi in phis {
                    deps.insert(phi.dst, Values::from_slice(&[phi.then_val, phi.else_val]));
                }
            }
            Visit::Enter(Stmt::Loop { phis, .. }) => {
                for phi in phis {
                    deps.insert(phi.dst, Values::from_slice(&[phi.init]));
                }
            }
            Visit::Enter(Stmt::Continue { args, .. }) => work.extend(args.iter().copied()),
            _ => {}
        }
    }
    let mut live = BTreeSet::new();
    while let Some(v) = work.pop() {
        if live.insert(v) {
            work.extend(deps.get(&v).into_iter().flatten().copied());
        }
    }
    live
}

/// Whether `s` stores `VIEWPORT_MASK` anywhere: its primitives are then broadcast.
fn writes_viewport_mask(s: &Shader) -> bool {
    let mut found = false;
    s.for_each_inst(|i| {
        if let InstKind::StoreOutput { slot, .. } | InstKind::StorePerVertexOutput { slot, .. } =
            &i.kind
        {
            found |= slot.slot == Slot::ViewportMask;
        }
    });
    found
}

/// The viewports a primitive is broadcast to: the set bits of its vertices' mask
/// below [`MAX_VIEWPORTS`]. The spec leaves the viewports undefined unless every
/// vertex carries the same mask, so an undefined, missing or differing mask draws no
/// copy (nothing observed compares as undefined).
fn viewport_copies(verts: &[&Outputs]) -> Vec<u32> {
    let at = IoSlot::new(Slot::ViewportMask, 0);
    let masks: Vec<Option<Scalar>> = verts
        .iter()
        .map(|v| v.fixed_function(at, BitSize::B32))
        .collect();
    let Some(Some(first)) = masks.first().copied() else {
        return vec![];
    };
    let agree = masks
        .iter()
        .all(|m| m.is_some_and(|m| m.defined && m.bits == first.bits));
    if !agree {
        return vec![];
    }
    (0..MAX_VIEWPORTS)
        .filter(|i| first.bits >> i & 1 == 1)
        .collect()
}

/// Settings of rasterization.
pub(crate) struct RasterConfig {
    pub fragments_per_primitive: usize,
    pub max_primitives: usize,
}

/// Runs the FS for the fragments of each assembled primitive and records its
/// observable results: per fragment the discard flag and, unless definitely
/// discarded, every stored output.
pub(crate) fn rasterize(
    fs: &Shader,
    world: &mut World,
    obs: &mut Observation,
    prims: &[Vec<&Outputs>],
    cfg: &RasterConfig,
) -> Result<(), Error> {
    let provoking = match fs.info {
        StageInfo::Fragment { provoking } => provoking,
        _ => ProvokingVertex::First,
    };
    let producer = &world.pipeline.producer;
    let producer_is_gs = producer.stage() == Stage::Geometry;
    let masked = writes_viewport_mask(producer);
    let layer_relative = producer.layer_viewport_relative;
    let interpolated = interpolated_slots(fs);
    for (p, verts) in prims.iter().take(cfg.max_primitives).enumerate() {
        let p = p as u32;
        let n = verts.len();
        let inputs = world.inputs;
        let clip_w: Vec<f32> = (0..n as u32).map(|k| inputs.clip_w(p, k)).collect();
        let copies = if masked {
            viewport_copies(verts).into_iter().map(Some).collect()
        } else {
            vec![None]
        };
        for (copy, f) in copies
            .iter()
            .flat_map(|c| (0..cfg.fragments_per_primitive as u32).map(move |f| (*c, f)))
        {
            let info = FragmentInfo {
                center: inputs.barycentrics(n, p, f, 0),
                centroid: inputs.barycentrics(n, p, f, 1),
                sample: inputs.barycentrics(n, p, f, 2),
                clip_w: clip_w.clone(),
            };
            let ff = FixedFunction {
                back_colours: inputs.two_sided_colour() && !inputs.front_face(p),
                clamp_colours: inputs.clamp_vertex_colour(),
                flat_shade: inputs.flat_shade_model(),
                producer_is_gs,
            };
            let mut io = FsIo {
                inputs,
                ff,
                vertices: verts,
                provoking: match provoking {
                    ProvokingVertex::First => 0,
                    ProvokingVertex::Last => n.saturating_sub(1),
                },
                interpolated: &interpolated,
                info: &info,
                prim: p,
                frag: f,
                copy,
                layer_relative,
                out: Outputs::default(),
                discard: Scalar::bool(false),
            };
            Invocation::new(fs).run_top(&fs.body, world, &mut io)?;
            let path: Vec<Unit> = match copy {
                Some(i) => vec![Unit::Primitive(p), Unit::Viewport(i), Unit::Fragment(f)],
                None => vec![Unit::Primitive(p), Unit::Fragment(f)],
            };
            let path = path.as_slice();
            obs.insert(Some(Stage::Fragment), path, Item::Discard, io.discard);
            if !(io.discard.defined && io.discard.bits == 1) {
                io.out.observe_all(obs, Stage::Fragment, path);
            }
            obs.fragments.insert((p, f), info);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perspective_formula() {
        let v = interpolate(&[1.0, 2.0, 4.0], &[0.5, 0.25, 0.25], Some(&[1.0, 2.0, 4.0]));
        // (0.5 + 0.25 + 0.25) / (0.5 + 0.125 + 0.0625)
        assert!((v - 1.0 / 0.6875).abs() < 1e-6, "{v}");
        let l = interpolate(&[1.0, 2.0, 4.0], &[0.5, 0.25, 0.25], None);
        assert_eq!(l, 2.0);
    }

    #[test]
    fn equal_values_interpolate_exactly() {
        for v in [0.1f32, -3.7, 1e-20, 12345.678] {
            let w = [0.3f32, 0.3, 0.4];
            assert_eq!(interpolate(&[v, v, v], &w, Some(&[0.7, 1.9, 3.3])), v);
            assert_eq!(interpolate(&[v, v, v], &w, None), v);
        }
    }

    #[test]
    fn a_value_equal_at_every_vertex_is_exact() {
        // 350 as a bit pattern is a subnormal float: (350/w)/(1/w) would round it.
        let tiny = f32::from_bits(350);
        let w = [3.3787837, 1.7, 0.9];
        let v = interpolate(&[tiny; 3], &[0.2, 0.3, 0.5], Some(&w));
        assert_eq!(v.to_bits(), 350);
        assert_eq!(interpolate(&[tiny], &[1.0], Some(&w[..1])).to_bits(), 350);
        let third = 1.0f32 / 3.0;
        let l = interpolate(&[third; 3], &[0.1, 0.2, 0.7], None);
        assert_eq!(l.to_bits(), third.to_bits());
    }

    #[test]
    fn infinity_with_zero_weight_gives_nan() {
        let v = interpolate(&[f32::INFINITY, 1.0], &[0.0, 1.0], None);
        assert!(v.is_nan());
    }

    #[test]
    fn offsets_keep_the_sum() {
        let m = offset_barycentrics(&[0.2, 0.3, 0.5], 0.5, -0.25);
        assert_eq!(m, vec![0.2 + 0.125, 0.3 - 0.0625, 0.5 - 0.125 + 0.0625]);
        assert_eq!(offset_barycentrics(&[1.0], 3.0, 3.0), vec![1.0]);
    }
}
