//! The IR side of translation: a shader under construction with a stack of open
//! blocks, and a prelude that holds constants and undefs visible everywhere.

use std::collections::BTreeMap;

use crate::ir::{AluOp, BitSize, Block, Inst, InstKind, Shader, Stage, Stmt, Value};

/// Builds one IR shader while the SPIR-V is walked.
pub(crate) struct Emitter {
    pub shader: Shader,
    blocks: Vec<Block>,
    prelude: Block,
    consts: BTreeMap<(BitSize, u32), Value>,
    undefs: BTreeMap<BitSize, Value>,
}

impl Emitter {
    pub fn new(stage: Stage) -> Emitter {
        Emitter {
            shader: Shader::new(stage),
            blocks: vec![vec![]],
            prelude: vec![],
            consts: BTreeMap::new(),
            undefs: BTreeMap::new(),
        }
    }

    fn fresh(&mut self, bits: BitSize) -> Value {
        let n = self.shader.values.len();
        self.shader.add_value(n.to_string(), bits)
    }

    /// A new value for a phi destination.
    pub fn phi_value(&mut self, bits: BitSize) -> Value {
        self.fresh(bits)
    }

    pub fn bits(&self, v: Value) -> BitSize {
        self.shader
            .values
            .get(v.index())
            .map(|i| i.bits)
            .unwrap_or(BitSize::B32)
    }

    pub fn push_stmt(&mut self, stmt: Stmt) {
        if let Some(b) = self.blocks.last_mut() {
            b.push(stmt);
        }
    }

    pub fn open(&mut self) {
        self.blocks.push(vec![]);
    }

    pub fn close(&mut self) -> Block {
        if self.blocks.len() > 1 {
            self.blocks.pop().unwrap_or_default()
        } else {
            vec![]
        }
    }

    pub fn inst(&mut self, kind: InstKind, bits: BitSize) -> Value {
        let v = self.fresh(bits);
        self.push_stmt(Stmt::Inst(Inst {
            result: Some(v),
            kind,
            loc: None,
        }));
        v
    }

    pub fn effect(&mut self, kind: InstKind) {
        self.push_stmt(Stmt::Inst(Inst {
            result: None,
            kind,
            loc: None,
        }));
    }

    /// A constant, defined once in the prelude.
    pub fn konst(&mut self, bits: BitSize, pattern: u32) -> Value {
        let pattern = pattern & bits.mask();
        if let Some(v) = self.consts.get(&(bits, pattern)) {
            return *v;
        }
        let v = self.fresh(bits);
        self.prelude.push(Stmt::Inst(Inst {
            result: Some(v),
            kind: InstKind::Const(pattern),
            loc: None,
        }));
        self.consts.insert((bits, pattern), v);
        v
    }

    pub fn u32(&mut self, x: u32) -> Value {
        self.konst(BitSize::B32, x)
    }

    /// An undefined value, defined once in the prelude.
    pub fn undef(&mut self, bits: BitSize) -> Value {
        if let Some(v) = self.undefs.get(&bits) {
            return *v;
        }
        let v = self.fresh(bits);
        self.prelude.push(Stmt::Inst(Inst {
            result: Some(v),
            kind: InstKind::Undef,
            loc: None,
        }));
        self.undefs.insert(bits, v);
        v
    }

    /// An ALU op; sizes must agree (the caller checked the SPIR-V types).
    pub fn alu(&mut self, op: AluOp, exact: bool, srcs: &[Value]) -> Result<Value, String> {
        let sizes: Vec<BitSize> = srcs.iter().map(|v| self.bits(*v)).collect();
        let bits = op.result_bits(&sizes)?;
        Ok(self.inst(
            InstKind::Alu {
                op,
                exact,
                srcs: srcs.to_vec(),
            },
            bits,
        ))
    }

    /// The finished shader: prelude first, then the body.
    pub fn finish(mut self) -> Shader {
        let body = self.blocks.drain(..).next().unwrap_or_default();
        let mut all = std::mem::take(&mut self.prelude);
        all.extend(body);
        self.shader.body = all;
        self.shader
    }
}
