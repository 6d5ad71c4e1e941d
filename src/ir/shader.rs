//! One shader: an arena of SSA values (typed `Value` handles) and a structured body of
//! statements — instructions, `if` with merge phis, and `loop` with header phis.

use std::fmt;

use super::{BitSize, InstKind, Stage, StageInfo};

/// A source position (1-based line and column) for diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct SrcLoc {
    /// Line, from 1.
    pub line: u32,
    /// Column in characters, from 1.
    pub col: u32,
}

impl fmt::Display for SrcLoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// A handle to an SSA value of one shader (an index into [`Shader::values`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Value(pub u32);

/// The values one statement names: a handful at most for nearly every statement, so
/// they live inline (walks ask for them once per statement, and a `Vec` would allocate
/// each time).
pub type Values = smallvec::SmallVec<[Value; 4]>;

impl Value {
    /// The arena index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What the arena knows about a value.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueInfo {
    /// Name as written (`%name` without the `%`); unique within the shader.
    pub name: String,
    /// Bit size.
    pub bits: BitSize,
    /// Where it is defined, when it came from text.
    pub loc: Option<SrcLoc>,
}

/// An instruction with its optional result.
#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    /// The defined value, for instructions that produce one.
    pub result: Option<Value>,
    /// The operation.
    pub kind: InstKind,
    /// Source position.
    pub loc: Option<SrcLoc>,
}

/// A merge phi of an `if`: `dst` is `then_val` or `else_val` by the branch taken.
#[derive(Clone, Debug, PartialEq)]
pub struct Phi {
    /// Defined value.
    pub dst: Value,
    /// Value when the then-branch falls through.
    pub then_val: Value,
    /// Value when the else-branch falls through.
    pub else_val: Value,
}

/// A loop header phi: `dst` is `init` on entry, then the matching `continue` argument.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopPhi {
    /// Defined value, visible in the body and after the loop.
    pub dst: Value,
    /// Value on loop entry.
    pub init: Value,
}

/// A structured statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// A plain instruction.
    Inst(Inst),
    /// Two-way branch with merge phis.
    If {
        /// 1-bit condition.
        cond: Value,
        /// Then branch.
        then_body: Block,
        /// Else branch.
        else_body: Block,
        /// Merge phis.
        phis: Vec<Phi>,
        /// Source position.
        loc: Option<SrcLoc>,
    },
    /// Loop with header phis; left only by `break`.
    Loop {
        /// Header phis (loop-carried values).
        phis: Vec<LoopPhi>,
        /// Body; falling off its end continues (only legal without phis).
        body: Block,
        /// Source position.
        loc: Option<SrcLoc>,
    },
    /// Leave the innermost loop.
    Break {
        /// Source position.
        loc: Option<SrcLoc>,
    },
    /// Next iteration of the innermost loop, with the new header phi values.
    Continue {
        /// One value per header phi.
        args: Vec<Value>,
        /// Source position.
        loc: Option<SrcLoc>,
    },
}

/// A sequence of statements.
pub type Block = Vec<Stmt>;

/// A shader of one stage.
#[derive(Clone, Debug, PartialEq)]
pub struct Shader {
    /// Stage parameters (also tells the stage).
    pub info: StageInfo,
    /// Value arena.
    pub values: Vec<ValueInfo>,
    /// Top-level statements.
    pub body: Block,
    /// Where the shader was declared in the source.
    pub loc: Option<SrcLoc>,
    /// `layout(viewport_relative) out int gl_Layer` (`GL_NV_viewport_array2`): each
    /// copy of a viewport-mask broadcast adds its viewport index to the layer.
    pub layer_viewport_relative: bool,
}

impl Shader {
    /// An empty shader of the given stage with default parameters.
    pub fn new(stage: Stage) -> Shader {
        Shader {
            info: StageInfo::default_for(stage),
            values: vec![],
            body: vec![],
            loc: None,
            layer_viewport_relative: false,
        }
    }

    /// The stage.
    pub fn stage(&self) -> Stage {
        self.info.stage()
    }

    /// Information about a value.
    pub fn value(&self, v: Value) -> &ValueInfo {
        &self.values[v.index()]
    }

    /// Bit size of a value.
    pub fn bits(&self, v: Value) -> BitSize {
        self.values[v.index()].bits
    }

    /// Adds a value to the arena and returns its handle.
    pub fn add_value(&mut self, name: impl Into<String>, bits: BitSize) -> Value {
        self.values.push(ValueInfo {
            name: name.into(),
            bits,
            loc: None,
        });
        Value(self.values.len() as u32 - 1)
    }

    /// Gives back the spare capacity of the value table and the top-level body.
    /// Both grow by doubling while a shader is built or rewritten, so a 100k
    /// instruction shader can hold megabytes of slack; a shader that lives on (the
    /// parsed input, the pre-passed copy that lowering and emission read) sheds it.
    pub fn shrink_to_fit(&mut self) {
        self.values.shrink_to_fit();
        self.body.shrink_to_fit();
    }

    /// Calls `f` on every instruction, in program order, descending into control flow.
    pub fn for_each_inst<'a>(&'a self, f: impl FnMut(&'a Inst)) {
        super::walk::insts(&self.body).for_each(f);
    }

    /// Calls `f` on every instruction mutably, in program order.
    pub fn for_each_inst_mut(&mut self, f: impl FnMut(&mut Inst)) {
        super::walk::for_each_inst_mut(&mut self.body, f);
    }

    /// Number of instructions (not counting control flow).
    pub fn inst_count(&self) -> usize {
        let mut n = 0;
        self.for_each_inst(|_| n += 1);
        n
    }
}
