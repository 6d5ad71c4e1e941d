//! Typed value pools of the shader being generated, and the op table that grows them.
//! Operand choices index a pool modulo its length, which is what makes every recipe
//! buildable: a pool is seeded on first use, so it is never empty.

use std::collections::BTreeMap;

use super::read::Read;
use super::recipe::Ty;
use crate::ir::{
    AluOp, BitSize, Half, IoSlot, OpaqueCode, OpaqueOp, OpaqueTy, Purity, Resource, ScalarTy,
    ShaderBuilder, Slot, Stage, SystemValue, Value,
};

/// The generator's value types (32-bit float, 16-bit float, 32-bit int, boolean).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum PTy {
    F32,
    F16,
    I32,
    B1,
}

impl PTy {
    fn slot(self) -> usize {
        self as usize
    }
}

/// A pooled value and whether it differs between TCS invocations (patch outputs and
/// conditions around them must not, or invocations would race).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pv {
    pub v: Value,
    pub inv: bool,
}

/// A leaf the op table can create.
#[derive(Clone, Copy, Debug)]
enum Leaf {
    Input,
    Uniform,
    Ubo,
    /// A 16-bit half of a uniform word.
    Uniform16,
    /// A 16-bit half of a UBO word.
    Ubo16,
    ConstF,
    ConstH,
    ConstI,
    SysInt,
    SysFloat,
    SysBool,
    Tex,
}

#[derive(Clone, Copy, Debug)]
enum Node {
    Alu(AluOp, &'static [PTy]),
    /// `fmod` of a drawn value by a constant period (GLSL `mod(x, period)`). A drawn
    /// divisor would often nearly equal the dividend (pools are small), putting the
    /// quotient at floor's discontinuity, where the rounding an inexact law may change
    /// (`flrp x x t` to `x`) flips the result between about 0 and the dividend; a
    /// constant period meets it no more often than `ffloor` does.
    FModConst,
    Leaf(Leaf),
}

use PTy::{B1, F16, F32, I32};

/// The op table: index 0 is `fadd` so shrunk recipes read naturally.
const TABLE: &[(Node, PTy)] = &[
    (Node::Alu(AluOp::FAdd, &[F32, F32]), F32),
    (Node::Alu(AluOp::FMul, &[F32, F32]), F32),
    (Node::Alu(AluOp::FFma, &[F32, F32, F32]), F32),
    (Node::Leaf(Leaf::Input), F32),
    (Node::Leaf(Leaf::Uniform), F32),
    (Node::Leaf(Leaf::ConstF), F32),
    (Node::Alu(AluOp::FSub, &[F32, F32]), F32),
    (Node::Alu(AluOp::FNeg, &[F32]), F32),
    (Node::Alu(AluOp::FAbs, &[F32]), F32),
    (Node::Alu(AluOp::FMin, &[F32, F32]), F32),
    (Node::Alu(AluOp::FMax, &[F32, F32]), F32),
    (Node::Alu(AluOp::FLrp, &[F32, F32, F32]), F32),
    (Node::Alu(AluOp::FDiv, &[F32, F32]), F32),
    (Node::Alu(AluOp::FSat, &[F32]), F32),
    (Node::Alu(AluOp::FRcp, &[F32]), F32),
    (Node::Alu(AluOp::FRsq, &[F32]), F32),
    (Node::Alu(AluOp::FSqrt, &[F32]), F32),
    (Node::Alu(AluOp::FExp2, &[F32]), F32),
    (Node::Alu(AluOp::FLog2, &[F32]), F32),
    (Node::Alu(AluOp::FSin, &[F32]), F32),
    (Node::Alu(AluOp::FCos, &[F32]), F32),
    (Node::Alu(AluOp::FFloor, &[F32]), F32),
    (Node::Alu(AluOp::FFract, &[F32]), F32),
    (Node::Alu(AluOp::FSign, &[F32]), F32),
    (Node::Alu(AluOp::FPow, &[F32, F32]), F32),
    (Node::Alu(AluOp::BCsel, &[B1, F32, F32]), F32),
    (Node::Leaf(Leaf::Ubo), F32),
    (Node::Alu(AluOp::F2F32, &[F16]), F32),
    (Node::Alu(AluOp::I2F32, &[I32]), F32),
    (Node::Alu(AluOp::B2F32, &[B1]), F32),
    (Node::Leaf(Leaf::SysFloat), F32),
    (Node::Leaf(Leaf::Tex), F32),
    (Node::Alu(AluOp::F2F16, &[F32]), F16),
    (Node::Alu(AluOp::FAdd, &[F16, F16]), F16),
    (Node::Alu(AluOp::FMul, &[F16, F16]), F16),
    (Node::Alu(AluOp::FFma, &[F16, F16, F16]), F16),
    (Node::Alu(AluOp::BCsel, &[B1, F16, F16]), F16),
    (Node::Leaf(Leaf::ConstH), F16),
    (Node::Alu(AluOp::IAdd, &[I32, I32]), I32),
    (Node::Alu(AluOp::IMul, &[I32, I32]), I32),
    (Node::Alu(AluOp::IAnd, &[I32, I32]), I32),
    (Node::Alu(AluOp::IXor, &[I32, I32]), I32),
    (Node::Alu(AluOp::IShl, &[I32, I32]), I32),
    (Node::Alu(AluOp::UShr, &[I32, I32]), I32),
    (Node::Alu(AluOp::IMin, &[I32, I32]), I32),
    (Node::Alu(AluOp::UMax, &[I32, I32]), I32),
    (Node::Alu(AluOp::IDiv, &[I32, I32]), I32),
    (Node::Alu(AluOp::F2I32, &[F32]), I32),
    (Node::Leaf(Leaf::SysInt), I32),
    (Node::Leaf(Leaf::ConstI), I32),
    (Node::Alu(AluOp::FLt, &[F32, F32]), B1),
    (Node::Alu(AluOp::FGe, &[F32, F32]), B1),
    (Node::Alu(AluOp::FEq, &[F32, F32]), B1),
    (Node::Alu(AluOp::ILt, &[I32, I32]), B1),
    (Node::Alu(AluOp::IOr, &[B1, B1]), B1),
    (Node::Alu(AluOp::INot, &[B1]), B1),
    (Node::Leaf(Leaf::SysBool), B1),
    (Node::FModConst, F32),
    (Node::Alu(AluOp::FMulz, &[F32, F32]), F32),
    (Node::Alu(AluOp::Sge, &[F32, F32]), F32),
    (Node::Leaf(Leaf::Uniform16), F16),
    (Node::Leaf(Leaf::Ubo16), F16),
];

/// The half of a word a 16-bit uniform leaf reads, by its second operand.
fn half_of(b: u16) -> Half {
    if b.is_multiple_of(2) {
        Half::Lo
    } else {
        Half::Hi
    }
}

/// Which texture leaves become opaque operations instead, by their second operand
/// choice (three in eight: one per purity class).
fn opaque_choice(b: u16) -> Option<Purity> {
    match b % 8 {
        5 => Some(Purity::Pure),
        6 => Some(Purity::Stage),
        7 => Some(Purity::Effect),
        _ => None,
    }
}

/// Whether an op spec draws an opaque operation (a texture leaf whose second
/// operand choice picks one, see `opaque_choice`).
pub(crate) fn draws_opaque(spec: &super::OpSpec) -> bool {
    matches!(
        TABLE[spec.op as usize % TABLE.len()].0,
        Node::Leaf(Leaf::Tex)
    ) && opaque_choice(spec.b).is_some()
}

/// Float constants the generator uses (small, exact, sign-mixed).
pub(crate) const FLOATS: [f32; 8] = [1.0, 0.5, 2.0, -1.0, 0.0, 3.0, 0.25, -4.0];

/// The periods `fmod` divides by (non-zero, sign-mixed: the result takes the
/// divisor's sign).
const PERIODS: [f32; 4] = [1.0, 0.5, 3.0, -4.0];

/// The state of one shader under construction.
pub(crate) struct Gen {
    pub b: ShaderBuilder,
    pub stage: Stage,
    /// Number of uniform words (at least 1).
    pub uniforms: u32,
    /// Words of UBO 0 (0 = none).
    pub ubo_words: u32,
    /// Vertices of the per-vertex input arrays (0 when there are none).
    pub vertices: u32,
    /// Consumer input reads the `Input` leaf may repeat.
    pub reads: Vec<Read>,
    /// Building a consumer: its only inputs are the varyings in `reads`.
    pub consumer: bool,
    pools: [Vec<Pv>; 4],
    consts: BTreeMap<(BitSize, u32), Value>,
    invocation: Option<Value>,
}

impl Gen {
    /// A generator for one shader; `b` already carries the stage parameters.
    pub fn new(b: ShaderBuilder, uniforms: u32, ubo_words: u32, vertices: u32) -> Gen {
        let stage = b.shader().stage();
        Gen {
            b,
            stage,
            uniforms: uniforms.max(1),
            ubo_words,
            vertices,
            reads: vec![],
            consumer: false,
            pools: Default::default(),
            consts: BTreeMap::new(),
            invocation: None,
        }
    }

    /// A top-level constant, shared by every use (only call outside control flow).
    pub fn konst(&mut self, bits: BitSize, pattern: u32) -> Value {
        let key = (bits, pattern & bits.mask());
        if let Some(v) = self.consts.get(&key) {
            return *v;
        }
        let v = self.b.constant(bits, pattern);
        self.consts.insert(key, v);
        v
    }

    /// A top-level 32-bit float constant.
    pub fn f32c(&mut self, f: f32) -> Value {
        self.konst(BitSize::B32, f.to_bits())
    }

    /// Adds a value to a pool.
    pub fn push(&mut self, ty: PTy, pv: Pv) {
        self.pools[ty.slot()].push(pv);
    }

    /// Value `idx` (modulo) of a pool; `invariant` restricts to TCS-invocation-invariant
    /// values. Seeds the pool when nothing fits.
    pub fn pick(&mut self, ty: PTy, idx: u16, invariant: bool) -> Pv {
        let fits: Vec<Pv> = self.pools[ty.slot()]
            .iter()
            .copied()
            .filter(|p| !invariant || !p.inv)
            .collect();
        if let Some(pv) = fits.get(idx as usize % fits.len().max(1)) {
            return *pv;
        }
        let seed = self.seed(ty);
        self.push(ty, seed);
        seed
    }

    fn seed(&mut self, ty: PTy) -> Pv {
        match ty {
            PTy::F32 => self.input_leaf(0),
            PTy::F16 => {
                let f = self.pick(F32, 0, true);
                self.alu(AluOp::F2F16, false, &[f])
            }
            PTy::I32 => Pv {
                v: self.konst(BitSize::B32, 3),
                inv: false,
            },
            PTy::B1 => {
                let f = self.pick(F32, 0, true);
                let half = Pv {
                    v: self.f32c(0.5),
                    inv: false,
                };
                self.alu(AluOp::FLt, false, &[f, half])
            }
        }
    }

    /// Emits an ALU op; the result is invocation-dependent when any source is.
    pub fn alu(&mut self, op: AluOp, exact: bool, srcs: &[Pv]) -> Pv {
        let vals: Vec<Value> = srcs.iter().map(|p| p.v).collect();
        Pv {
            v: self.b.alu_ex(op, exact, &vals),
            inv: srcs.iter().any(|p| p.inv),
        }
    }

    /// Applies one recipe op, adding its result to the matching pool.
    pub fn apply(&mut self, spec: &super::OpSpec) {
        let (node, out) = TABLE[spec.op as usize % TABLE.len()];
        let pv = match node {
            Node::Alu(op, tys) => {
                let choices = [spec.a, spec.b, spec.c];
                let srcs: Vec<Pv> = tys
                    .iter()
                    .zip(choices)
                    .map(|(t, c)| self.pick(*t, c, false))
                    .collect();
                self.alu(op, spec.exact, &srcs)
            }
            Node::FModConst => {
                let x = self.pick(F32, spec.a, false);
                let period = Pv {
                    v: self.f32c(PERIODS[spec.b as usize % PERIODS.len()]),
                    inv: false,
                };
                self.alu(AluOp::FMod, spec.exact, &[x, period])
            }
            Node::Leaf(leaf) => self.leaf(leaf, spec.a, spec.b),
        };
        self.push(out, pv);
    }

    fn leaf(&mut self, leaf: Leaf, a: u16, b: u16) -> Pv {
        let fixed = |v: Value| Pv { v, inv: false };
        match leaf {
            Leaf::Input => self.input_leaf(a),
            Leaf::Uniform => fixed(self.uniform(a)),
            Leaf::Ubo => fixed(self.ubo(a)),
            Leaf::Uniform16 => fixed(self.uniform16(a, b)),
            Leaf::Ubo16 => fixed(self.ubo16(a, b)),
            Leaf::ConstF => fixed(self.f32c(FLOATS[a as usize % FLOATS.len()])),
            Leaf::ConstH => {
                let f = FLOATS[a as usize % FLOATS.len()];
                fixed(self.konst(BitSize::B16, crate::ir::from_f32(f, BitSize::B16)))
            }
            Leaf::ConstI => fixed(self.konst(BitSize::B32, u32::from(a % 8))),
            Leaf::SysInt => self.sys_int(a),
            Leaf::SysFloat => self.sys_float(a),
            Leaf::SysBool => self.sys_bool(a, b),
            Leaf::Tex => self.texture(a, b),
        }
    }

    /// A uniform word.
    pub fn uniform(&mut self, a: u16) -> Value {
        let index = u32::from(a) % self.uniforms;
        self.b.uniform(index)
    }

    /// A UBO word at a constant offset (a uniform word when there is no UBO).
    pub fn ubo(&mut self, a: u16) -> Value {
        self.ubo_half(a, Half::Full)
    }

    /// A 16-bit half (`b` picks which) of a uniform word.
    fn uniform16(&mut self, a: u16, b: u16) -> Value {
        let index = u32::from(a) % self.uniforms;
        self.b.uniform_half(index, half_of(b))
    }

    /// A 16-bit half of a UBO word (of a uniform word when there is no UBO).
    fn ubo16(&mut self, a: u16, b: u16) -> Value {
        if self.ubo_words == 0 {
            return self.uniform16(a, b);
        }
        self.ubo_half(a, half_of(b))
    }

    fn ubo_half(&mut self, a: u16, half: Half) -> Value {
        if self.ubo_words == 0 {
            let index = u32::from(a) % self.uniforms;
            return self.b.uniform_half(index, half);
        }
        let offset = self.konst(BitSize::B32, (u32::from(a) % self.ubo_words) * 4);
        let kind = crate::ir::InstKind::LoadUbo {
            block: 0,
            offset,
            half,
        };
        self.b.inst(kind, crate::ir::half_bits(half))
    }

    /// A 32-bit float input of this stage: a VS attribute, a per-vertex input, a TES
    /// patch input, or (consumers) a repeated read of a varying.
    pub fn input_leaf(&mut self, a: u16) -> Pv {
        let floats: Vec<Read> = self
            .reads
            .iter()
            .filter(|r| r.ty == Ty::F32)
            .copied()
            .collect();
        if let Some(r) = floats.get(a as usize % floats.len().max(1)) {
            return r.load(self, a);
        }
        if self.consumer {
            return Pv {
                v: self.uniform(a),
                inv: false,
            };
        }
        let comp = (a % 4) as u8;
        let n = ((a / 4) % 8) as u8;
        match self.stage {
            Stage::Vertex => Pv {
                v: self.b.load_input(IoSlot::new(Slot::Attr(n), comp)),
                inv: false,
            },
            Stage::TessEval if a % 5 == 4 => Pv {
                v: self.b.load_input(IoSlot::new(Slot::Patch(n % 4), comp)),
                inv: false,
            },
            Stage::TessCtrl | Stage::TessEval | Stage::Geometry => {
                let vtx = self.vertex_index((a / 32) as u8);
                Pv {
                    v: self
                        .b
                        .load_per_vertex(IoSlot::new(Slot::Var(n), comp), vtx.v),
                    inv: vtx.inv,
                }
            }
            Stage::Fragment => Pv {
                v: self.uniform(a),
                inv: false,
            },
        }
    }

    /// The TCS/GS invocation id, loaded once.
    pub fn invocation_id(&mut self) -> Pv {
        let v = match self.invocation {
            Some(v) => v,
            None => {
                let v = self.b.system_value(SystemValue::InvocationId);
                self.invocation = Some(v);
                v
            }
        };
        Pv {
            v,
            inv: self.stage == Stage::TessCtrl,
        }
    }

    /// A per-vertex input index: a constant for choices 0-3, otherwise a dynamic index
    /// clamped into range.
    pub fn vertex_index(&mut self, choice: u8) -> Pv {
        let n = self.vertices.max(1);
        if choice % 5 < 4 {
            return Pv {
                v: self.konst(BitSize::B32, u32::from(choice % 5) % n),
                inv: false,
            };
        }
        let dynamic = match self.stage {
            Stage::TessCtrl | Stage::Geometry => self.invocation_id(),
            _ => Pv {
                v: self.uniform(0),
                inv: false,
            },
        };
        let last = Pv {
            v: self.konst(BitSize::B32, n - 1),
            inv: false,
        };
        self.alu(AluOp::UMin, false, &[dynamic, last])
    }

    /// A dynamic slot index below `len` (a power of two), from a uniform.
    pub fn slot_index(&mut self, len: u8, a: u16) -> Value {
        let u = self.uniform(a);
        let mask = self.konst(BitSize::B32, u32::from(len) - 1);
        self.b.alu(AluOp::IAnd, &[u, mask])
    }

    fn sys_int(&mut self, a: u16) -> Pv {
        use SystemValue::*;
        let choices: &[SystemValue] = match self.stage {
            Stage::Vertex => &[VertexId, InstanceId, ViewIndex],
            Stage::TessCtrl | Stage::Geometry => &[PrimitiveId, InvocationId, ViewIndex],
            Stage::TessEval => &[PrimitiveId, PatchVerticesIn, ViewIndex],
            Stage::Fragment => &[PrimitiveId, SampleId, ViewIndex, SampleMaskIn],
        };
        let sv = choices[a as usize % choices.len()];
        if sv == InvocationId {
            return self.invocation_id();
        }
        Pv {
            v: self.b.system_value(sv),
            inv: false,
        }
    }

    fn sys_float(&mut self, a: u16) -> Pv {
        use SystemValue::*;
        let choices: &[SystemValue] = match self.stage {
            Stage::TessEval => &[TessCoordX, TessCoordY, TessCoordZ],
            Stage::Fragment => &[FragCoordX, FragCoordY, FragCoordZ, FragCoordW],
            _ => return self.input_leaf(a),
        };
        let sv = choices[a as usize % choices.len()];
        Pv {
            v: self.b.system_value(sv),
            inv: false,
        }
    }

    fn sys_bool(&mut self, a: u16, b: u16) -> Pv {
        if self.stage == Stage::Fragment && a.is_multiple_of(2) {
            return Pv {
                v: self.b.system_value(SystemValue::FrontFace),
                inv: false,
            };
        }
        let x = self.pick(F32, a, false);
        let y = self.pick(F32, b, false);
        self.alu(AluOp::FGe, false, &[x, y])
    }

    fn texture(&mut self, a: u16, b: u16) -> Pv {
        if let Some(purity) = opaque_choice(b) {
            return self.opaque(purity, a, b);
        }
        if self.stage != Stage::Fragment {
            return Pv {
                v: self.ubo(a),
                inv: false,
            };
        }
        let s = self.pick(F32, a, false);
        let t = self.pick(F32, b, false);
        let kind = crate::ir::InstKind::Texture {
            sampler: u32::from(a % 2),
            comp: (b % 4) as u8,
            coords: vec![s.v, t.v],
        };
        Pv {
            v: self.b.inst(kind, BitSize::B32),
            inv: false,
        }
    }

    /// An opaque operation of a purity class on pooled floats: a pure binary op, a
    /// stage-bound one (a derivative in a fragment shader) or an effect with a result
    /// (an atomic on storage buffer 0 at a small address).
    fn opaque(&mut self, purity: Purity, a: u16, b: u16) -> Pv {
        let x = self.pick(F32, a, false);
        let f32t = OpaqueTy::scalar(ScalarTy::F32);
        let (name, code, args, srcs, resource) = match purity {
            Purity::Pure => {
                let y = self.pick(F32, b, false);
                ("gen_pure", 9000, vec![f32t, f32t], vec![x, y], None)
            }
            Purity::Stage if self.stage == Stage::Fragment => {
                ("dpdx", 207, vec![f32t], vec![x], None)
            }
            Purity::Stage => ("gen_stage", 9001, vec![f32t], vec![x], None),
            Purity::Effect => {
                let addr = self.konst(BitSize::B32, u32::from(a % 4));
                let addr = Pv {
                    v: addr,
                    inv: false,
                };
                let u = OpaqueTy::scalar(ScalarTy::U32);
                let buffer = Some(Resource::Buffer(0));
                ("gen_atomic", 234, vec![u, f32t], vec![addr, x], buffer)
            }
        };
        let op = OpaqueOp {
            name: name.into(),
            purity,
            code: OpaqueCode::Core(code),
            result: Some((f32t, 0)),
            args,
            resource,
        };
        let kind = crate::ir::InstKind::Opaque {
            op: std::sync::Arc::new(op),
            srcs: srcs.iter().map(|p| p.v).collect(),
        };
        Pv {
            v: self.b.inst(kind, BitSize::B32),
            inv: srcs.iter().any(|p| p.inv),
        }
    }

    /// Converts a value of a varying type to a 32-bit float (for folding into results).
    pub fn float_of(&mut self, ty: PTy, pv: Pv) -> Pv {
        match ty {
            PTy::F32 => pv,
            PTy::F16 => self.alu(AluOp::F2F32, false, &[pv]),
            PTy::I32 => self.alu(AluOp::I2F32, false, &[pv]),
            PTy::B1 => self.alu(AluOp::B2F32, false, &[pv]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_types_match_op_typing() {
        let size = |t: &PTy| match t {
            F32 | I32 => BitSize::B32,
            F16 => BitSize::B16,
            B1 => BitSize::B1,
        };
        for (node, out) in TABLE {
            if let Node::Alu(op, tys) = node {
                let srcs: Vec<BitSize> = tys.iter().map(size).collect();
                assert_eq!(op.result_bits(&srcs), Ok(size(out)), "{op}");
            }
        }
        assert!(matches!(TABLE[0].0, Node::Alu(AluOp::FAdd, _)));
    }
}
