//! `ShaderBuilder`: constructs a shader in code, as a compiler front end would.
//! It infers bit sizes but does not check them; run the validator on the result.

use super::{
    AluOp, BitSize, Block, Half, Indirect, Inst, InstKind, InterpMode, IoSlot, LoopPhi, Phi,
    Shader, Stage, StageInfo, Stmt, SystemValue, Value, Xfb,
};

/// Builds one shader statement by statement. Control flow takes closures that build
/// the nested blocks.
///
/// ```
/// use varysat::ir::{AluOp, IoSlot, InterpMode, ShaderBuilder, Slot, Stage};
/// let mut fs = ShaderBuilder::new(Stage::Fragment);
/// let x = fs.load_interpolated(IoSlot::var(0, 0), InterpMode::PERSP_CENTER);
/// let k = fs.uniform(0);
/// let y = fs.alu(AluOp::FMul, &[x, k]);
/// fs.store(IoSlot::new(Slot::Data(0), 0), y);
/// let fs = fs.finish();
/// assert_eq!(fs.inst_count(), 4);
/// ```
pub struct ShaderBuilder {
    shader: Shader,
    blocks: Vec<Block>,
}

impl ShaderBuilder {
    /// Starts a shader of `stage` with default stage parameters.
    pub fn new(stage: Stage) -> ShaderBuilder {
        ShaderBuilder {
            shader: Shader::new(stage),
            blocks: vec![vec![]],
        }
    }

    /// Sets the stage parameters.
    pub fn info(&mut self, info: StageInfo) -> &mut Self {
        self.shader.info = info;
        self
    }

    /// The shader built so far (e.g. to query value sizes).
    pub fn shader(&self) -> &Shader {
        &self.shader
    }

    /// Renames a value (names must stay unique; the validator checks).
    pub fn set_name(&mut self, v: Value, name: impl Into<String>) {
        self.shader.values[v.index()].name = name.into();
    }

    /// Finishes the shader.
    pub fn finish(mut self) -> Shader {
        self.shader.body = self.blocks.pop().unwrap_or_default();
        self.shader
    }

    fn fresh(&mut self, bits: BitSize) -> Value {
        let n = self.shader.values.len();
        self.shader.add_value(n.to_string(), bits)
    }

    fn push(&mut self, stmt: Stmt) {
        if let Some(b) = self.blocks.last_mut() {
            b.push(stmt);
        }
    }

    /// Appends an instruction with a result of `bits`.
    pub fn inst(&mut self, kind: InstKind, bits: BitSize) -> Value {
        let v = self.fresh(bits);
        self.push(Stmt::Inst(Inst {
            result: Some(v),
            kind,
            loc: None,
        }));
        v
    }

    /// Appends an instruction without a result (stores, emits, barriers…).
    pub fn effect(&mut self, kind: InstKind) {
        self.push(Stmt::Inst(Inst {
            result: None,
            kind,
            loc: None,
        }));
    }

    /// A 32-bit float constant.
    pub fn f32(&mut self, v: f32) -> Value {
        self.inst(InstKind::Const(v.to_bits()), BitSize::B32)
    }

    /// A constant bit pattern of the given size.
    pub fn constant(&mut self, bits: BitSize, pattern: u32) -> Value {
        self.inst(InstKind::Const(pattern & bits.mask()), bits)
    }

    /// An undefined value.
    pub fn undef(&mut self, bits: BitSize) -> Value {
        self.inst(InstKind::Undef, bits)
    }

    /// An ALU op; the result size follows the sources (32-bit if they are ill-typed).
    pub fn alu(&mut self, op: AluOp, srcs: &[Value]) -> Value {
        self.alu_ex(op, false, srcs)
    }

    /// An ALU op with NIR's `exact` flag.
    pub fn alu_ex(&mut self, op: AluOp, exact: bool, srcs: &[Value]) -> Value {
        let sizes: Vec<BitSize> = srcs.iter().map(|v| self.shader.bits(*v)).collect();
        let bits = op.result_bits(&sizes).unwrap_or(BitSize::B32);
        let srcs = srcs.to_vec();
        self.inst(InstKind::Alu { op, exact, srcs }, bits)
    }

    /// A flat 32-bit input (VS attribute, FS flat input, patch input).
    pub fn load_input(&mut self, slot: IoSlot) -> Value {
        let bits = slot_bits(slot);
        let kind = InstKind::LoadInput {
            slot,
            indirect: None,
        };
        self.inst(kind, bits)
    }

    /// An FS input interpolated at the centre, centroid or sample.
    pub fn load_interpolated(&mut self, slot: IoSlot, mode: InterpMode) -> Value {
        self.load_interpolated_at(slot, mode, &[])
    }

    /// An FS input interpolated with operands (`at_offset` x/y, `at_sample` index).
    pub fn load_interpolated_at(&mut self, slot: IoSlot, mode: InterpMode, ops: &[Value]) -> Value {
        let bits = slot_bits(slot);
        let kind = InstKind::LoadInterpolatedInput {
            slot,
            mode,
            operands: ops.to_vec(),
            indirect: None,
        };
        self.inst(kind, bits)
    }

    /// A per-vertex input of vertex `vertex`.
    pub fn load_per_vertex(&mut self, slot: IoSlot, vertex: Value) -> Value {
        let bits = slot_bits(slot);
        let kind = InstKind::LoadPerVertexInput {
            slot,
            vertex,
            indirect: None,
        };
        self.inst(kind, bits)
    }

    /// TCS: reads back an output (per-vertex when `vertex` is given).
    pub fn load_output(&mut self, slot: IoSlot, vertex: Option<Value>) -> Value {
        let bits = slot_bits(slot);
        let kind = InstKind::LoadOutput {
            slot,
            vertex,
            indirect: None,
        };
        self.inst(kind, bits)
    }

    /// Stores an output component.
    pub fn store(&mut self, slot: IoSlot, value: Value) {
        self.store_ex(slot, value, None, None);
    }

    /// Stores an output component with optional indirect index and xfb capture.
    pub fn store_ex(
        &mut self,
        slot: IoSlot,
        value: Value,
        indirect: Option<Indirect>,
        xfb: Option<Xfb>,
    ) {
        self.effect(InstKind::StoreOutput {
            slot,
            value,
            indirect,
            xfb,
            no_varying: false,
        });
    }

    /// TCS: stores a per-vertex output of output vertex `vertex`.
    pub fn store_per_vertex(&mut self, slot: IoSlot, value: Value, vertex: Value) {
        self.effect(InstKind::StorePerVertexOutput {
            slot,
            value,
            vertex,
            indirect: None,
        });
    }

    /// A 32-bit word of the default uniform block.
    pub fn uniform(&mut self, index: u32) -> Value {
        self.uniform_half(index, Half::Full)
    }

    /// A word of the default uniform block (`Half::Full`, 32 bits) or a 16-bit half.
    pub fn uniform_half(&mut self, index: u32, half: Half) -> Value {
        self.inst(InstKind::LoadUniform { index, half }, half_bits(half))
    }

    /// A 32-bit UBO load at a constant byte offset.
    pub fn ubo(&mut self, block: u32, offset: u32) -> Value {
        self.ubo_half(block, offset, Half::Full)
    }

    /// A UBO load of the word at a constant byte offset (`Half::Full`) or of a 16-bit
    /// half of it.
    pub fn ubo_half(&mut self, block: u32, offset: u32, half: Half) -> Value {
        let offset = self.constant(BitSize::B32, offset);
        self.inst(
            InstKind::LoadUbo {
                block,
                offset,
                half,
            },
            half_bits(half),
        )
    }

    /// A system value.
    pub fn system_value(&mut self, sv: SystemValue) -> Value {
        self.inst(InstKind::LoadSystemValue(sv), sv.bits())
    }

    /// `if cond { then } else { else }`; each closure returns the values its branch
    /// merges, pairwise, into the phis this returns.
    pub fn if_else(
        &mut self,
        cond: Value,
        then_fn: impl FnOnce(&mut Self) -> Vec<Value>,
        else_fn: impl FnOnce(&mut Self) -> Vec<Value>,
    ) -> Vec<Value> {
        self.blocks.push(vec![]);
        let then_vals = then_fn(self);
        let then_body = self.blocks.pop().unwrap_or_default();
        self.blocks.push(vec![]);
        let else_vals = else_fn(self);
        let else_body = self.blocks.pop().unwrap_or_default();
        let mut phis = vec![];
        for (t, e) in then_vals.iter().zip(&else_vals) {
            let dst = self.fresh(self.shader.bits(*t));
            phis.push(Phi {
                dst,
                then_val: *t,
                else_val: *e,
            });
        }
        let out = phis.iter().map(|p| p.dst).collect();
        self.push(Stmt::If {
            cond,
            then_body,
            else_body,
            phis,
            loc: None,
        });
        out
    }

    /// A loop with header phis initialized from `inits`; the body receives the phi
    /// values and must leave with [`Self::break_`] or [`Self::continue_`]. Returns the
    /// phi values, which are visible after the loop.
    pub fn loop_(
        &mut self,
        inits: &[Value],
        body_fn: impl FnOnce(&mut Self, &[Value]),
    ) -> Vec<Value> {
        let phis: Vec<LoopPhi> = inits
            .iter()
            .map(|init| LoopPhi {
                dst: self.fresh(self.shader.bits(*init)),
                init: *init,
            })
            .collect();
        let dsts: Vec<Value> = phis.iter().map(|p| p.dst).collect();
        self.blocks.push(vec![]);
        body_fn(self, &dsts);
        let body = self.blocks.pop().unwrap_or_default();
        self.push(Stmt::Loop {
            phis,
            body,
            loc: None,
        });
        dsts
    }

    /// Leaves the innermost loop.
    pub fn break_(&mut self) {
        self.push(Stmt::Break { loc: None });
    }

    /// Continues the innermost loop with new header phi values.
    pub fn continue_(&mut self, args: &[Value]) {
        self.push(Stmt::Continue {
            args: args.to_vec(),
            loc: None,
        });
    }
}

fn slot_bits(slot: IoSlot) -> BitSize {
    match slot.half {
        super::Half::Full => BitSize::B32,
        _ => BitSize::B16,
    }
}

/// The bit size of a load of a whole word (`Full`) or of one half of it.
pub fn half_bits(half: Half) -> BitSize {
    match half {
        Half::Full => BitSize::B32,
        Half::Lo | Half::Hi => BitSize::B16,
    }
}
