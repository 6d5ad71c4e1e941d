//! Statements of a shader body: instructions, `if` with merge phis, `loop` with
//! header phis, `break` and `continue`. Names are resolved in two passes: every
//! `(%name = ...)` is collected first, so a use before its definition (a dominance
//! error for the validator) still resolves; only a name defined nowhere is an error.

use fxhash::FxHashMap;

use crate::ir::{BitSize, Block, Inst, LoopPhi, Phi, Shader, SrcLoc, Stmt, Value};

use super::cursor::{found, Cursor, PResult};
use super::tree::{Node, NodeKind};
use super::ParseError;

/// Every defined name (as written, without `%`) with its value and first definition;
/// the names borrow the text, and only lookups are made (no order is observed).
type Names<'t> = FxHashMap<&'t str, (Value, SrcLoc)>;

pub(super) const VALUE: &str = "a value (`%name`)";
pub(super) const PHI_PLACE: &str =
    "`phi` is only allowed after the branches of an `if` or at the start of a `loop`";

/// Parses a shader body, adding its values to `shader`.
pub(crate) fn body<'t>(shader: &mut Shader, items: &'t [Node<'t>]) -> PResult<Block> {
    let mut names = Names::default();
    for item in items {
        collect_defs(item, shader, &mut names);
    }
    let mut parser = StmtParser {
        shader,
        names,
        loops: Vec::new(),
    };
    parser.block(items)
}

/// Pass one: gives every `(%name = ...)` a value, in text order, remembering where
/// the name was first defined. Bit sizes are filled in by pass two.
fn collect_defs<'t>(node: &Node<'t>, shader: &mut Shader, names: &mut Names<'t>) {
    let NodeKind::List { items, .. } = &node.kind else {
        return;
    };
    if let Some((name, loc)) = def_name(node) {
        if !names.contains_key(name) {
            let v = shader.add_value(name, BitSize::B32);
            names.insert(name, (v, loc));
        }
    }
    for item in items {
        collect_defs(item, shader, names);
    }
}

/// `name` and its position when `node` is `(%name = ...)`.
fn def_name<'t>(node: &Node<'t>) -> Option<(&'t str, SrcLoc)> {
    let NodeKind::List { items, .. } = &node.kind else {
        return None;
    };
    let first = items.first()?;
    let name = first.atom()?.strip_prefix('%')?;
    (items.get(1)?.atom()? == "=").then_some((name, first.loc))
}

fn is_phi_def(node: &Node) -> bool {
    let NodeKind::List { items, .. } = &node.kind else {
        return false;
    };
    def_name(node).is_some() && items.get(2).and_then(Node::atom) == Some("phi")
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

/// Pass two: reads statements with every name already given a value.
pub(super) struct StmtParser<'s, 't> {
    shader: &'s mut Shader,
    names: Names<'t>,
    /// Header-phi counts of the enclosing loops, innermost last.
    loops: Vec<usize>,
}

impl StmtParser<'_, '_> {
    fn block(&mut self, items: &[Node]) -> PResult<Block> {
        items.iter().map(|n| self.stmt(n)).collect()
    }

    fn stmt(&mut self, node: &Node) -> PResult<Stmt> {
        const WHAT: &str = "a statement: `(KEYWORD ...)` or `(%name = ...)`";
        let mut cur = Cursor::of(node, WHAT)?;
        let first = cur.next(WHAT)?;
        match first.atom() {
            Some(a) if a.starts_with('%') => self.def(node.loc, first, cur),
            Some(kw) => self.effect(node.loc, kw, first.loc, cur),
            None => Err(found(first, WHAT)),
        }
    }

    /// Pass two's side of a definition: checks the name and that this is its first
    /// definition, and records its position.
    fn define(&mut self, name_node: &Node) -> PResult<Value> {
        let text = name_node.atom().unwrap_or_default();
        let name = text.strip_prefix('%').unwrap_or(text);
        if !valid_name(name) {
            let msg =
                format!("malformed value name `{text}`: use `%` then letters, digits, `_` or `.`");
            return Err(ParseError::new(name_node.loc, msg));
        }
        let (v, first) = self.names.get(name).copied().ok_or_else(|| {
            ParseError::new(name_node.loc, format!("`{text}` is not in a definition"))
        })?;
        if first != name_node.loc {
            let msg = format!("value `{text}` is defined twice (first at {first})");
            return Err(ParseError::new(name_node.loc, msg));
        }
        if let Some(info) = self.shader.values.get_mut(v.index()) {
            info.loc = Some(name_node.loc);
        }
        Ok(v)
    }

    pub(super) fn set_bits(&mut self, v: Value, bits: BitSize) {
        if let Some(info) = self.shader.values.get_mut(v.index()) {
            info.bits = bits;
        }
    }

    pub(super) fn bits_of(&self, v: Value) -> BitSize {
        self.shader
            .values
            .get(v.index())
            .map_or(BitSize::B32, |i| i.bits)
    }

    pub(super) fn value_ref(&self, node: &Node, what: &str) -> PResult<Value> {
        let name = node.atom().and_then(|a| a.strip_prefix('%'));
        let name = name.ok_or_else(|| found(node, what))?;
        match self.names.get(name) {
            Some((v, _)) => Ok(*v),
            None => Err(ParseError::new(
                node.loc,
                format!("value `%{name}` is not defined"),
            )),
        }
    }

    pub(super) fn operand(&self, cur: &mut Cursor<'_>, what: &str) -> PResult<Value> {
        let node = cur.next(what)?;
        self.value_ref(node, what)
    }

    pub(super) fn operands(&self, nodes: &[Node]) -> PResult<Vec<Value>> {
        nodes.iter().map(|n| self.value_ref(n, VALUE)).collect()
    }

    /// `(%name = KEYWORD ...)`.
    fn def(&mut self, loc: SrcLoc, name_node: &Node, mut cur: Cursor<'_>) -> PResult<Stmt> {
        let name = name_node.atom().unwrap_or_default();
        let (eq, eq_loc) = cur.atom("`=`")?;
        if eq != "=" {
            let msg = format!("expected `=` after `{name}`, found `{eq}`");
            return Err(ParseError::new(eq_loc, msg));
        }
        let v = self.define(name_node)?;
        let (kw, kw_loc) = cur.atom("an ALU op or an intrinsic")?;
        if kw == "phi" {
            return Err(ParseError::new(kw_loc, PHI_PLACE));
        }
        let (kind, bits) = self.value_inst(kw, kw_loc, &mut cur)?;
        self.set_bits(v, bits);
        Ok(Stmt::Inst(Inst {
            result: Some(v),
            kind,
            loc: Some(loc),
        }))
    }

    /// `(KEYWORD ...)`: control flow here, instructions in `inst`.
    fn effect(
        &mut self,
        loc: SrcLoc,
        kw: &str,
        kw_loc: SrcLoc,
        mut cur: Cursor<'_>,
    ) -> PResult<Stmt> {
        match kw {
            "if" => return self.if_stmt(loc, cur),
            "loop" => return self.loop_stmt(loc, cur),
            "break" => return self.break_stmt(loc, kw_loc, cur),
            "continue" => return self.continue_stmt(loc, kw_loc, cur),
            _ => {}
        }
        let (kind, usage) = self.effect_inst(kw, kw_loc, &mut cur)?;
        cur.finish(usage)?;
        Ok(Stmt::Inst(Inst {
            result: None,
            kind,
            loc: Some(loc),
        }))
    }

    /// `(if %cond (then ...) [(else ...)] (%r = phi %t %e)...)`.
    fn if_stmt(&mut self, loc: SrcLoc, mut cur: Cursor<'_>) -> PResult<Stmt> {
        let cond = self.operand(&mut cur, "a condition (`%name`)")?;
        let then_node = cur.next("`(then ...)`")?;
        if then_node.head() != Some("then") {
            return Err(found(then_node, "`(then ...)`"));
        }
        let then_body = self.branch(then_node)?;
        let else_body = match cur.eat_list("else") {
            Some(node) => self.branch(node)?,
            None => Vec::new(),
        };
        let phis = cur
            .rest()
            .iter()
            .map(|node| self.if_phi(node))
            .collect::<PResult<Vec<_>>>()?;
        Ok(Stmt::If {
            cond,
            then_body,
            else_body,
            phis,
            loc: Some(loc),
        })
    }

    fn branch(&mut self, node: &Node) -> PResult<Block> {
        let mut cur = Cursor::of(node, "a branch")?;
        cur.next("`then` or `else`")?;
        self.block(cur.rest())
    }

    fn if_phi(&mut self, node: &Node) -> PResult<Phi> {
        const WHAT: &str = "a phi `(%name = phi %then %else)` after the branches";
        if !is_phi_def(node) {
            return Err(found(node, WHAT));
        }
        let mut cur = Cursor::of(node, WHAT)?;
        let name = cur.next(WHAT)?;
        cur.next("`=`")?;
        cur.next("`phi`")?;
        let dst = self.define(name)?;
        let then_val = self.operand(&mut cur, "the then-value (`%name`)")?;
        let else_val = self.operand(&mut cur, "the else-value (`%name`)")?;
        cur.finish("(%name = phi %then %else)")?;
        self.set_bits(dst, self.bits_of(then_val));
        Ok(Phi {
            dst,
            then_val,
            else_val,
        })
    }

    /// `(loop (%i = phi %init)... stmt...)`.
    fn loop_stmt(&mut self, loc: SrcLoc, mut cur: Cursor<'_>) -> PResult<Stmt> {
        let mut phis = Vec::new();
        while let Some(node) = cur.peek().filter(|n| is_phi_def(n)) {
            cur.next("a loop phi")?;
            phis.push(self.loop_phi(node)?);
        }
        self.loops.push(phis.len());
        let body = self.block(cur.rest());
        self.loops.pop();
        Ok(Stmt::Loop {
            phis,
            body: body?,
            loc: Some(loc),
        })
    }

    fn loop_phi(&mut self, node: &Node) -> PResult<LoopPhi> {
        let mut cur = Cursor::of(node, "a loop phi")?;
        let name = cur.next("`%name`")?;
        cur.next("`=`")?;
        cur.next("`phi`")?;
        let dst = self.define(name)?;
        let init = self.operand(&mut cur, "the initial value (`%name`)")?;
        cur.finish("(%name = phi %init)")?;
        self.set_bits(dst, self.bits_of(init));
        Ok(LoopPhi { dst, init })
    }

    fn break_stmt(&self, loc: SrcLoc, kw_loc: SrcLoc, cur: Cursor<'_>) -> PResult<Stmt> {
        if self.loops.is_empty() {
            return Err(ParseError::new(kw_loc, "`break` outside a loop"));
        }
        cur.finish("(break)")?;
        Ok(Stmt::Break { loc: Some(loc) })
    }

    fn continue_stmt(&self, loc: SrcLoc, kw_loc: SrcLoc, mut cur: Cursor<'_>) -> PResult<Stmt> {
        let Some(&phis) = self.loops.last() else {
            return Err(ParseError::new(kw_loc, "`continue` outside a loop"));
        };
        let args = self.operands(cur.rest())?;
        if args.len() != phis {
            let msg = format!(
                "`continue` takes one value per header phi of its loop: expected {phis}, found {}",
                args.len()
            );
            return Err(ParseError::new(kw_loc, msg));
        }
        Ok(Stmt::Continue {
            args,
            loc: Some(loc),
        })
    }
}
