//! Seeded inputs. Every input value is a hash of the run's seed and a structural key
//! (slot and vertex number, uniform word, buffer address…), never of instruction order,
//! so two pipelines that route values differently still see identical inputs.

use crate::ir::{BitSize, Half, IoSlot};

use super::Scalar;

/// Lowest random float input; inputs lie in `[-INPUT_RANGE, INPUT_RANGE)` so that
/// arithmetic on them stays finite.
pub const INPUT_RANGE: f32 = 4.0;

/// What a hash is for; keeps the streams of different kinds of input apart.
#[derive(Clone, Copy)]
enum Tag {
    Attribute = 1,
    PerVertexInput,
    PatchInput,
    Uniform,
    Ubo,
    Ssbo,
    Texture,
    Opaque,
    InstanceId,
    ViewIndex,
    FrontFace,
    SampleId,
    SampleMaskIn,
    TessCoord,
    Barycentric,
    ClipW,
    FragCoord,
    PointCoord,
    TcsOrder,
}

/// The seeded input source of one run. All methods are pure functions of the seed
/// and their arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inputs {
    /// The run's seed.
    pub seed: u64,
}

/// splitmix64's finalizer: a bijective mix with good avalanche.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A structural key for an I/O address: slot index, component and half.
fn slot_key(slot: IoSlot) -> u64 {
    let half = match slot.half {
        Half::Full => 0,
        Half::Lo => 1,
        Half::Hi => 2,
    };
    ((slot.slot.index() as u64) << 8) | ((slot.comp as u64) << 2) | half
}

impl Inputs {
    /// The input source for `seed`.
    pub fn new(seed: u64) -> Inputs {
        Inputs { seed }
    }

    fn hash(&self, tag: Tag, keys: &[u64]) -> u64 {
        let mut h = mix(self.seed ^ ((tag as u64) << 56));
        for k in keys {
            h = mix(h ^ *k);
        }
        h
    }

    /// A uniform float in `[0, 1)` with 24 random bits (exact in f32).
    fn unit(&self, tag: Tag, keys: &[u64]) -> f32 {
        (self.hash(tag, keys) >> 40) as f32 / (1u64 << 24) as f32
    }

    /// A float in `[-INPUT_RANGE, INPUT_RANGE)`, rounded to `size`.
    fn float(&self, tag: Tag, keys: &[u64], size: BitSize) -> Scalar {
        let v = (self.unit(tag, keys) * 2.0 - 1.0) * INPUT_RANGE;
        match size {
            BitSize::B1 => Scalar::new(self.hash(tag, keys) as u32, size),
            _ => Scalar::float(v, size),
        }
    }

    /// VS attribute `slot` (an `ATTRn` component) of vertex number `vertex`.
    pub fn attribute(&self, slot: IoSlot, vertex: u32, size: BitSize) -> Scalar {
        self.float(Tag::Attribute, &[slot_key(slot), vertex as u64], size)
    }

    /// A per-vertex input of a TCS, TES or GS producer, written by an earlier stage
    /// outside the pair, for global input vertex number `vertex`.
    pub fn per_vertex_input(&self, slot: IoSlot, vertex: u32, size: BitSize) -> Scalar {
        self.float(Tag::PerVertexInput, &[slot_key(slot), vertex as u64], size)
    }

    /// A patch input of a TES producer (written by a TCS outside the pair).
    pub fn patch_input(&self, slot: IoSlot, patch: u32, size: BitSize) -> Scalar {
        self.float(Tag::PatchInput, &[slot_key(slot), patch as u64], size)
    }

    /// Word `index` of the default uniform block (a float whose 16-bit halves are
    /// finite halves too, see [`finite_halves`]).
    pub fn uniform(&self, index: u32) -> Scalar {
        finite_halves(self.float(Tag::Uniform, &[index as u64], BitSize::B32))
    }

    /// The word at byte `offset` of uniform buffer `block` (a float whose 16-bit
    /// halves are finite halves too).
    pub fn ubo(&self, block: u32, offset: u32) -> Scalar {
        finite_halves(self.float(Tag::Ubo, &[block as u64, offset as u64], BitSize::B32))
    }

    /// The initial content of word `addr` of storage buffer `buffer` (a float).
    pub fn ssbo(&self, buffer: u32, addr: u32) -> Scalar {
        self.float(Tag::Ssbo, &[buffer as u64, addr as u64], BitSize::B32)
    }

    /// Component `comp` of a texture sample, in `(0, 1)`: a smooth function of the
    /// coordinates, `0.5 + 0.5·s/(1+|s|)` with `s = o + Σ wᵢ·xᵢ` and weights
    /// `wᵢ ∈ [0.5, 1.5)` and offset `o` drawn per sampler and component. Coordinates
    /// that differ only by rounding (inexact laws move the arithmetic computing them)
    /// or by a zero's sign sample nearly the same value, as a filtered texture would;
    /// different coordinates sample different values. A coordinate is read as a float
    /// unless its bits are a denormal pattern, which is read as an integer (texel
    /// fetches pass small integers).
    pub fn texture(&self, sampler: u32, comp: u8, coords: &[u32], size: BitSize) -> Scalar {
        let key = [sampler as u64, comp as u64];
        let mut sum = (self.unit(Tag::Texture, &key) * 2.0 - 1.0) * INPUT_RANGE;
        for (i, c) in coords.iter().enumerate() {
            let weight = 0.5 + self.unit(Tag::Texture, &[key[0], key[1], 1 + i as u64]);
            sum += weight * coordinate(*c);
        }
        Scalar::float(0.5 + 0.5 * sum / (1.0 + sum.abs()), size)
    }

    /// A stand-in for an opaque float operation keyed `key`: like [`Inputs::texture`],
    /// a smooth function `4·s/(1+|s|)` of `s = o + Σ wᵢ·xᵢ` with `wᵢ ∈ [0.5, 1.5)`.
    pub fn smooth(&self, key: u64, xs: &[f32]) -> f32 {
        let mut sum = (self.unit(Tag::Opaque, &[key]) * 2.0 - 1.0) * INPUT_RANGE;
        for (i, x) in xs.iter().enumerate() {
            sum += (0.5 + self.unit(Tag::Opaque, &[key, 1 + i as u64])) * x;
        }
        INPUT_RANGE * sum / (1.0 + sum.abs())
    }

    /// A stand-in for an opaque integer operation keyed `key`: a hash of the operands.
    pub fn opaque_hash(&self, key: u64, operands: &[u64]) -> u64 {
        let mut keys = vec![key];
        keys.extend_from_slice(operands);
        self.hash(Tag::Opaque, &keys)
    }

    /// The order in which the `n` invocations of TCS patch `patch` run barrier phase
    /// `phase` (a permutation of `0..n`). Invocations of a patch run in an
    /// unspecified order, and a per-vertex output stored by several invocations holds
    /// the last one's value, so a fixed order would hide an optimization that
    /// assumes which invocation writes last. Each phase gets an order of its own:
    /// nothing orders two phases' stores to one output alike.
    pub fn tcs_order(&self, patch: u32, phase: u32, n: usize) -> Vec<usize> {
        let mut order: Vec<usize> = (0..n).collect();
        // Fisher-Yates, each swap drawn from the seed, the patch and the phase.
        for i in (1..n).rev() {
            let j = self.hash(Tag::TcsOrder, &[patch as u64, phase as u64, i as u64]);
            order.swap(i, (j % (i as u64 + 1)) as usize);
        }
        order
    }

    /// `instance_id` of the run, in `0..16`.
    pub fn instance_id(&self) -> u32 {
        (self.hash(Tag::InstanceId, &[]) % 16) as u32
    }

    /// `view_index` of the run, in `0..4`.
    pub fn view_index(&self) -> u32 {
        (self.hash(Tag::ViewIndex, &[]) % 4) as u32
    }

    /// `front_face` of rasterized primitive `prim`. Consecutive primitives alternate
    /// (which one comes first is seeded), so every run with two or more primitives
    /// shades both faces: two-sided colour selection is always exercised.
    pub fn front_face(&self, prim: u32) -> bool {
        let first_front = self.hash(Tag::FrontFace, &[]) & 1 != 0;
        first_front ^ (prim & 1 != 0)
    }

    /// Whether two-sided colour selection is enabled (GL `VERTEX_PROGRAM_TWO_SIDE` /
    /// two-sided lighting): then a back-facing primitive's FS reads `BFCn` where it
    /// reads `COLn`. The optimizer cannot know this state, so runs cover both: it is
    /// bit 0 of the seed, and any two consecutive seeds see it on and off.
    pub fn two_sided_colour(&self) -> bool {
        self.seed & 1 != 0
    }

    /// Whether the clamp-vertex-colour state is enabled: colours reach the FS clamped
    /// to `[0, 1]` per vertex. Bit 1 of the seed, so any four consecutive seeds see
    /// every combination with [`Inputs::two_sided_colour`].
    pub fn clamp_vertex_colour(&self) -> bool {
        self.seed & 2 != 0
    }

    /// Whether the GL shade model is `GL_FLAT`, which `color`-interpolated inputs
    /// follow (Mesa's `INTERP_MODE_NONE`): bit 0 xor bit 1 of the seed, so any four
    /// consecutive seeds (the default equivalence runs) see it on and off, each time
    /// next to a different two-sided / clamp combination.
    pub fn flat_shade_model(&self) -> bool {
        (self.seed ^ (self.seed >> 1)) & 1 != 0
    }

    /// The point coordinate (`PNTC`, and `TEXn.xy` under coord replace) the rasterizer
    /// supplies to fragment `frag` of primitive `prim`, each in `[0, 1)`. Only points
    /// define it; for other primitives any value is allowed, so a seeded one is a
    /// valid (and stricter) model than undefined.
    pub fn point_coord(&self, prim: u32, frag: u32) -> [f32; 2] {
        let k = |c: u64| self.unit(Tag::PointCoord, &[prim as u64, frag as u64, c]);
        [k(0), k(1)]
    }

    /// `sample_id` of a fragment, in `0..4`.
    pub fn sample_id(&self, prim: u32, frag: u32) -> u32 {
        (self.hash(Tag::SampleId, &[prim as u64, frag as u64]) % 4) as u32
    }

    /// `sample_mask_in` of a fragment: the covered samples of its pixel (4 samples),
    /// always including its own `sample_id`.
    pub fn sample_mask_in(&self, prim: u32, frag: u32) -> u32 {
        let covered = self.hash(Tag::SampleMaskIn, &[prim as u64, frag as u64]) as u32 & 0xf;
        covered | (1 << self.sample_id(prim, frag))
    }

    /// `frag_coord` x, y (pixel centres in `[0, 256)`) and z (depth in `[0, 1)`).
    pub fn frag_coord(&self, prim: u32, frag: u32) -> [f32; 3] {
        let k = |c: u64| self.unit(Tag::FragCoord, &[prim as u64, frag as u64, c]);
        [
            (k(0) * 256.0).floor() + 0.5,
            (k(1) * 256.0).floor() + 0.5,
            k(2),
        ]
    }

    /// Tess coordinate `index` of patch `patch` for a domain: triangles give
    /// `(u, v, 1-u-v)` with all three positive; quads and isolines give `(u, v, 0)` in
    /// `[0, 1]`.
    pub fn tess_coord(&self, triangles: bool, patch: u32, index: u32) -> [f32; 3] {
        let k = |c: u64| self.unit(Tag::TessCoord, &[patch as u64, index as u64, c]);
        if triangles {
            let [u, v, _] = self.simplex(k(0), k(1), k(2));
            [u, v, 1.0 - u - v]
        } else {
            [k(0), k(1), 0.0]
        }
    }

    /// Barycentrics at one location of a fragment: `n` weights (1, 2 or 3 for points,
    /// lines, triangles), each positive, summing to 1. `set` distinguishes centre,
    /// centroid and sample positions.
    pub fn barycentrics(&self, n: usize, prim: u32, frag: u32, set: u32) -> Vec<f32> {
        let k = |c: u64| self.unit(Tag::Barycentric, &[prim as u64, frag as u64, set as u64, c]);
        match n {
            0 | 1 => vec![1.0],
            2 => {
                let a = 0.05 + 0.9 * k(0);
                vec![a, 1.0 - a]
            }
            _ => {
                let [a, b, _] = self.simplex(k(0), k(1), k(2));
                vec![a, b, 1.0 - a - b]
            }
        }
    }

    /// Three positive weights from three uniforms, normalized (each at least 1/21).
    fn simplex(&self, a: f32, b: f32, c: f32) -> [f32; 3] {
        let (a, b, c) = (a + 0.05, b + 0.05, c + 0.05);
        let s = a + b + c;
        [a / s, b / s, c / s]
    }

    /// The clip-space w of vertex `k` of rasterized primitive `prim`, in `[0.5, 4.5)`,
    /// independent of what the shader stores to POS.
    pub fn clip_w(&self, prim: u32, k: u32) -> f32 {
        0.5 + 4.0 * self.unit(Tag::ClipW, &[prim as u64, k as u64])
    }
}

/// A texture coordinate's value: its float reading, or its integer one for a
/// denormal bit pattern (a small integer).
fn coordinate(bits: u32) -> f32 {
    let denormal = bits & 0x7f80_0000 == 0 && bits & 0x007f_ffff != 0;
    if denormal {
        bits as i32 as f32
    } else {
        f32::from_bits(bits)
    }
}

/// A uniform or UBO word may also be read as two 16-bit halves (`load_uniform N.lo`).
/// The high half of a float in the input range is a half-float in [1, 4) in magnitude
/// or smaller (it carries the sign and exponent); the low half is mantissa bits, which
/// read as a half-float can be anything up to infinity and NaN. Clearing the top bit
/// of the low half's exponent field keeps it below 2 in magnitude, so 16-bit
/// arithmetic on inputs stays finite (as the equivalence check requires) like 32-bit
/// arithmetic does; the 32-bit float moves by less than 2^-8 of its value.
fn finite_halves(word: Scalar) -> Scalar {
    Scalar {
        bits: word.bits & !0x4000,
        ..word
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Slot;

    #[test]
    fn inputs_depend_on_keys_and_seed_only() {
        let a = Inputs::new(7);
        let slot = IoSlot::new(Slot::Attr(0), 1);
        assert_eq!(
            a.attribute(slot, 3, BitSize::B32),
            Inputs::new(7).attribute(slot, 3, BitSize::B32)
        );
        assert_ne!(
            a.attribute(slot, 3, BitSize::B32),
            a.attribute(slot, 4, BitSize::B32)
        );
        assert_ne!(
            a.attribute(slot, 3, BitSize::B32),
            Inputs::new(8).attribute(slot, 3, BitSize::B32)
        );
    }

    #[test]
    fn floats_stay_in_range() {
        let inp = Inputs::new(1);
        for i in 0..200 {
            let v = inp.uniform(i).as_f32();
            assert!((-INPUT_RANGE..INPUT_RANGE).contains(&v), "{v}");
            let t = inp.texture(0, 0, &[i], BitSize::B32).as_f32();
            assert!((0.0..1.0).contains(&t), "{t}");
        }
    }

    #[test]
    fn textures_are_smooth_in_their_coordinates() {
        let inp = Inputs::new(3);
        let at = |x: f32| inp.texture(1, 2, &[x.to_bits(), 0.5f32.to_bits()], BitSize::B32);
        let (a, b) = (at(0.75).as_f32(), at(0.75 + 1e-6).as_f32());
        assert!((a - b).abs() < 1e-5, "{a} {b}");
        assert_eq!(at(0.0).bits, at(-0.0).bits);
        assert!((at(0.75).as_f32() - at(1.75).as_f32()).abs() > 1e-3);
        // Integer texel coordinates (denormal patterns) are told apart.
        let texel = |i: u32| inp.texture(1, 2, &[i], BitSize::B32).as_f32();
        assert!((texel(1) - texel(2)).abs() > 1e-3);
    }

    #[test]
    fn barycentrics_are_positive_and_sum_to_one() {
        let inp = Inputs::new(3);
        for f in 0..50 {
            for n in 1..=3 {
                let l = inp.barycentrics(n, 0, f, 0);
                assert_eq!(l.len(), n);
                assert!(l.iter().all(|x| *x > 0.0));
                assert!((l.iter().sum::<f32>() - 1.0).abs() < 1e-6);
            }
            let t = inp.tess_coord(true, 0, f);
            assert!(t.iter().all(|x| *x > 0.0), "{t:?}");
            assert!((0.5..4.5).contains(&inp.clip_w(0, f)));
        }
    }
}
