//! The state one shader's checks share: the pipeline, the shader and its role, where
//! each value is first defined, and the diagnostic sink.

use crate::error::Diagnostic;
use crate::ir::{
    walk, BitSize, Block, Inst, InstKind, Pipeline, Shader, SrcLoc, Stmt, Value, Visit,
};

/// Which side of the link the shader is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    /// The earlier stage.
    Producer,
    /// The later stage.
    Consumer,
}

/// The first definition of a value, found before the dominance walk so that a use
/// can say where the value it cannot see is defined.
#[derive(Clone, Copy)]
pub(super) struct Def<'a> {
    /// Where it is defined.
    pub loc: Option<SrcLoc>,
    /// The defining instruction (`None` for phis).
    pub inst: Option<&'a Inst>,
}

/// Shared state of the checks on one shader.
pub(super) struct Ctx<'a> {
    /// The pair being validated.
    pub p: &'a Pipeline,
    /// The shader being validated.
    pub shader: &'a Shader,
    /// Producer or consumer.
    pub role: Role,
    /// First definition of each arena value.
    pub defs: Vec<Option<Def<'a>>>,
    diags: &'a mut Vec<Diagnostic>,
}

impl<'a> Ctx<'a> {
    /// Prepares the checks of `shader`.
    pub fn new(
        p: &'a Pipeline,
        shader: &'a Shader,
        role: Role,
        diags: &'a mut Vec<Diagnostic>,
    ) -> Ctx<'a> {
        let mut defs = vec![None; shader.values.len()];
        collect_defs(shader, &shader.body, &mut defs);
        Ctx {
            p,
            shader,
            role,
            defs,
            diags,
        }
    }

    /// Records a problem at `loc`, or at the shader when the statement has no position.
    pub fn error(&mut self, loc: Option<SrcLoc>, message: impl Into<String>) {
        let loc = loc.or(self.shader.loc);
        let file = self.p.source.as_deref();
        self.diags.push(Diagnostic::new(file, loc, message));
    }

    /// The value's bit size, `None` for a handle outside the arena.
    pub fn bits(&self, v: Value) -> Option<BitSize> {
        self.shader.values.get(v.index()).map(|i| i.bits)
    }

    /// The value as written in text: `%name`, or `#index` for a handle outside the arena.
    pub fn name(&self, v: Value) -> String {
        match self.shader.values.get(v.index()) {
            Some(info) => format!("%{}", info.name),
            None => format!("#{}", v.0),
        }
    }

    /// Where the value is defined according to the arena.
    pub fn value_loc(&self, v: Value) -> Option<SrcLoc> {
        self.shader.values.get(v.index()).and_then(|i| i.loc)
    }

    /// The value's constant bit pattern when a `const` instruction defines it.
    pub fn constant(&self, v: Value) -> Option<u32> {
        let def = self.defs.get(v.index()).copied().flatten()?;
        match def.inst?.kind {
            InstKind::Const(c) => Some(c),
            _ => None,
        }
    }
}

/// Records the first definition of every value (instruction results and phis).
fn collect_defs<'a>(shader: &Shader, block: &'a Block, defs: &mut [Option<Def<'a>>]) {
    // The value's own position (its `%name` token) is the most precise one to cite.
    let value_loc = |v: Value| shader.values.get(v.index()).and_then(|i| i.loc);
    for visit in walk(block) {
        match visit {
            Visit::Enter(Stmt::Inst(inst)) => {
                if let Some(v) = inst.result {
                    note(defs, v, value_loc(v).or(inst.loc), Some(inst));
                }
            }
            // Loop phis are defined on entry, an `if`'s merge phis after its branches.
            Visit::Enter(stmt @ Stmt::Loop { .. }) | Visit::Leave(stmt @ Stmt::If { .. }) => {
                for dst in stmt.own_defs() {
                    note(defs, dst, value_loc(dst), None);
                }
            }
            _ => {}
        }
    }
}

fn note<'a>(defs: &mut [Option<Def<'a>>], v: Value, loc: Option<SrcLoc>, inst: Option<&'a Inst>) {
    if let Some(slot @ None) = defs.get_mut(v.index()) {
        *slot = Some(Def { loc, inst });
    }
}
