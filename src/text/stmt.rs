//! Statements of a shader body: instructions, `if` with merge phis, `loop` with
//! header phis, `break` and `continue`. Names are resolved in two passes: every
//! `(%name = ...)` is collected first, so a use before its definition (a dominance
//! error for the validator) still resolves; only a name defined nowhere is an error.

use std::collections::BTreeMap;

use crate::ir::{
    AluOp, BitSize, Block, Half, Indirect, Inst, InstKind, Interp, InterpLoc, InterpMode, IoSlot,
    LoopPhi, Phi, Shader, SrcLoc, Stmt, SystemValue, Value, Xfb,
};

use super::cursor::{found, Cursor, PResult};
use super::literal::parse_const;
use super::parser::INFO_KEYWORDS;
use super::tree::{Node, NodeKind};
use super::ParseError;

/// Interpolation keywords.
pub(crate) const INTERPS: &[(Interp, &str)] =
    &[(Interp::Persp, "persp"), (Interp::Linear, "linear")];

/// Interpolation-location keywords.
pub(crate) const INTERP_LOCS: &[(InterpLoc, &str)] = &[
    (InterpLoc::Center, "center"),
    (InterpLoc::Centroid, "centroid"),
    (InterpLoc::Sample, "sample"),
    (InterpLoc::AtOffset, "at_offset"),
    (InterpLoc::AtSample, "at_sample"),
];

/// Component letters.
pub(crate) const COMPONENTS: &[&str] = &["x", "y", "z", "w"];

/// Intrinsics written `(%v = KEYWORD ...)`.
const VALUE_INTRINSICS: &[&str] = &[
    "const",
    "undef",
    "load_input",
    "load_interpolated_input",
    "load_per_vertex_input",
    "load_output",
    "load_uniform",
    "load_ubo",
    "load_system_value",
    "tex",
    "ssbo_load",
];

const VALUE: &str = "a value (`%name`)";
const PHI_PLACE: &str =
    "`phi` is only allowed after the branches of an `if` or at the start of a `loop`";

/// Parses a shader body, adding its values to `shader`.
pub(crate) fn body(shader: &mut Shader, items: &[Node]) -> PResult<Block> {
    let mut names = BTreeMap::new();
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
fn collect_defs(node: &Node, shader: &mut Shader, names: &mut BTreeMap<String, (Value, SrcLoc)>) {
    let NodeKind::List { items, .. } = &node.kind else {
        return;
    };
    if let Some((name, loc)) = def_name(node) {
        if !names.contains_key(name) {
            let v = shader.add_value(name, BitSize::B32);
            names.insert(name.to_owned(), (v, loc));
        }
    }
    for item in items {
        collect_defs(item, shader, names);
    }
}

/// `name` and its position when `node` is `(%name = ...)`.
fn def_name(node: &Node) -> Option<(&str, SrcLoc)> {
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

fn slot_bits(slot: IoSlot) -> BitSize {
    match slot.half {
        Half::Full => BitSize::B32,
        Half::Lo | Half::Hi => BitSize::B16,
    }
}

struct StmtParser<'s> {
    shader: &'s mut Shader,
    names: BTreeMap<String, (Value, SrcLoc)>,
    /// Header-phi counts of the enclosing loops, innermost last.
    loops: Vec<usize>,
}

impl StmtParser<'_> {
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

    fn set_bits(&mut self, v: Value, bits: BitSize) {
        if let Some(info) = self.shader.values.get_mut(v.index()) {
            info.bits = bits;
        }
    }

    fn bits_of(&self, v: Value) -> BitSize {
        self.shader
            .values
            .get(v.index())
            .map_or(BitSize::B32, |i| i.bits)
    }

    fn value_ref(&self, node: &Node, what: &str) -> PResult<Value> {
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

    fn operand(&self, cur: &mut Cursor<'_>, what: &str) -> PResult<Value> {
        let node = cur.next(what)?;
        self.value_ref(node, what)
    }

    fn operands(&self, nodes: &[Node]) -> PResult<Vec<Value>> {
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

    fn value_inst(
        &mut self,
        kw: &str,
        kw_loc: SrcLoc,
        cur: &mut Cursor<'_>,
    ) -> PResult<(InstKind, BitSize)> {
        let (kind, bits, usage) = match kw {
            "const" => {
                let bits = bit_size(cur)?;
                let (lit, lit_loc) = cur.atom("a constant")?;
                let pattern = parse_const(lit, bits).map_err(|m| ParseError::new(lit_loc, m))?;
                (InstKind::Const(pattern), bits, "(%v = const BITS LIT)")
            }
            "undef" => (InstKind::Undef, bit_size(cur)?, "(%v = undef BITS)"),
            "load_input" => {
                let slot = cur.slot()?;
                let indirect = self.indirect(cur)?;
                let kind = InstKind::LoadInput { slot, indirect };
                (kind, slot_bits(slot), "(%v = load_input SLOT [IND])")
            }
            "load_interpolated_input" => self.load_interpolated(cur)?,
            "load_per_vertex_input" => {
                let slot = cur.slot()?;
                let vertex = self.operand(cur, "a vertex index (`%name`)")?;
                let indirect = self.indirect(cur)?;
                let kind = InstKind::LoadPerVertexInput {
                    slot,
                    vertex,
                    indirect,
                };
                let usage = "(%v = load_per_vertex_input SLOT %vertex [IND])";
                (kind, slot_bits(slot), usage)
            }
            "load_output" => {
                let slot = cur.slot()?;
                let has_vertex = cur.peek().and_then(Node::atom).is_some();
                let vertex = match has_vertex {
                    true => Some(self.operand(cur, "a vertex index (`%name`)")?),
                    false => None,
                };
                let indirect = self.indirect(cur)?;
                let kind = InstKind::LoadOutput {
                    slot,
                    vertex,
                    indirect,
                };
                (
                    kind,
                    slot_bits(slot),
                    "(%v = load_output SLOT [%vertex] [IND])",
                )
            }
            "load_uniform" => {
                let index = cur.number("a uniform word index")?;
                let kind = InstKind::LoadUniform { index };
                (kind, BitSize::B32, "(%v = load_uniform N)")
            }
            "load_ubo" => {
                let block = cur.number("a UBO block index")?;
                let offset = self.operand(cur, "a byte offset (`%name`)")?;
                let kind = InstKind::LoadUbo { block, offset };
                (kind, BitSize::B32, "(%v = load_ubo BLOCK %offset)")
            }
            "load_system_value" => {
                let names: Vec<&str> = SystemValue::ALL.iter().map(|s| s.keyword()).collect();
                let sv: SystemValue = cur.keyword("a system value", &names)?;
                let usage = "(%v = load_system_value NAME)";
                (InstKind::LoadSystemValue(sv), sv.bits(), usage)
            }
            "tex" => {
                let sampler = cur.number("a sampler binding")?;
                let comp = component(cur)?;
                let coords = self.operands(cur.rest())?;
                let kind = InstKind::Texture {
                    sampler,
                    comp,
                    coords,
                };
                (kind, BitSize::B32, "(%v = tex SAMPLER COMP %coord...)")
            }
            "ssbo_load" => {
                let buffer = cur.number("a storage buffer binding")?;
                let addr = self.operand(cur, "an address (`%name`)")?;
                let kind = InstKind::SsboLoad { buffer, addr };
                (kind, BitSize::B32, "(%v = ssbo_load BUF %addr)")
            }
            _ => return self.alu(kw, kw_loc, cur),
        };
        cur.finish(usage)?;
        Ok((kind, bits))
    }

    fn load_interpolated(
        &mut self,
        cur: &mut Cursor<'_>,
    ) -> PResult<(InstKind, BitSize, &'static str)> {
        let slot = cur.slot()?;
        let interp = table_keyword(cur, "an interpolation", INTERPS)?;
        let loc = table_keyword(cur, "an interpolation location", INTERP_LOCS)?;
        let mode = InterpMode { interp, loc };
        let what = match loc {
            InterpLoc::AtOffset => "an offset (`%name`)",
            _ => "a sample index (`%name`)",
        };
        let operands = (0..mode.operand_count())
            .map(|_| self.operand(cur, what))
            .collect::<PResult<Vec<_>>>()?;
        let indirect = self.indirect(cur)?;
        let kind = InstKind::LoadInterpolatedInput {
            slot,
            mode,
            operands,
            indirect,
        };
        let usage = "(%v = load_interpolated_input SLOT INTERP LOC [%op...] [IND])";
        Ok((kind, slot_bits(slot), usage))
    }

    fn alu(
        &mut self,
        kw: &str,
        kw_loc: SrcLoc,
        cur: &mut Cursor<'_>,
    ) -> PResult<(InstKind, BitSize)> {
        if is_effect_keyword(kw) {
            let msg = format!("`{kw}` does not define a value: write `({kw} ...)`");
            return Err(ParseError::new(kw_loc, msg));
        }
        let op: AluOp = kw.parse().map_err(|m: String| ParseError::new(kw_loc, m))?;
        let exact = cur.eat("exact");
        let srcs = self.operands(cur.rest())?;
        if srcs.len() != op.arity() {
            let plural = if op.arity() == 1 { "source" } else { "sources" };
            let msg = format!("`{kw}` takes {} {plural}, found {}", op.arity(), srcs.len());
            return Err(ParseError::new(kw_loc, msg));
        }
        let sizes: Vec<BitSize> = srcs.iter().map(|v| self.bits_of(*v)).collect();
        // An ill-typed op keeps a guessed size so the validator can report it.
        let bits = op.result_bits(&sizes).unwrap_or(BitSize::B32);
        Ok((InstKind::Alu { op, exact, srcs }, bits))
    }

    /// `[(indirect %index LEN)]`.
    fn indirect(&self, cur: &mut Cursor<'_>) -> PResult<Option<Indirect>> {
        let Some(node) = cur.eat_list("indirect") else {
            return Ok(None);
        };
        let mut c = Cursor::of(node, "`(indirect %index LEN)`")?;
        c.next("`indirect`")?;
        let index = self.operand(&mut c, "an index (`%name`)")?;
        let len = c.number("an array length in slots")?;
        c.finish("(indirect %index LEN)")?;
        Ok(Some(Indirect { index, len }))
    }

    /// `(KEYWORD ...)`: stores, side effects and control flow.
    fn effect(
        &mut self,
        loc: SrcLoc,
        kw: &str,
        kw_loc: SrcLoc,
        mut cur: Cursor<'_>,
    ) -> PResult<Stmt> {
        let (kind, usage) = match kw {
            "store_output" => (self.store_output(&mut cur)?, STORE_USAGE),
            "store_per_vertex_output" => {
                let slot = cur.slot()?;
                let value = self.operand(&mut cur, "the stored value (`%name`)")?;
                let vertex = self.operand(&mut cur, "a vertex index (`%name`)")?;
                let indirect = self.indirect(&mut cur)?;
                let kind = InstKind::StorePerVertexOutput {
                    slot,
                    value,
                    vertex,
                    indirect,
                };
                (kind, "(store_per_vertex_output SLOT %value %vertex [IND])")
            }
            "emit_vertex" => (InstKind::EmitVertex, "(emit_vertex)"),
            "end_primitive" => (InstKind::EndPrimitive, "(end_primitive)"),
            "barrier" => (InstKind::Barrier, "(barrier)"),
            "discard" => (InstKind::Discard, "(discard)"),
            "ssbo_store" => {
                let buffer = cur.number("a storage buffer binding")?;
                let addr = self.operand(&mut cur, "an address (`%name`)")?;
                let value = self.operand(&mut cur, "the stored value (`%name`)")?;
                let kind = InstKind::SsboStore {
                    buffer,
                    addr,
                    value,
                };
                (kind, "(ssbo_store BUF %addr %value)")
            }
            "if" => return self.if_stmt(loc, cur),
            "loop" => return self.loop_stmt(loc, cur),
            "break" => return self.break_stmt(loc, kw_loc, cur),
            "continue" => return self.continue_stmt(loc, kw_loc, cur),
            _ => return Err(misplaced(kw, kw_loc)),
        };
        cur.finish(usage)?;
        Ok(Stmt::Inst(Inst {
            result: None,
            kind,
            loc: Some(loc),
        }))
    }

    fn store_output(&self, cur: &mut Cursor<'_>) -> PResult<InstKind> {
        let slot = cur.slot()?;
        let value = self.operand(cur, "the stored value (`%name`)")?;
        let indirect = self.indirect(cur)?;
        let xfb = match cur.eat_list("xfb") {
            Some(node) => Some(xfb(node)?),
            None => None,
        };
        let no_varying = cur.eat("no_varying");
        Ok(InstKind::StoreOutput {
            slot,
            value,
            indirect,
            xfb,
            no_varying,
        })
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

const STORE_USAGE: &str =
    "(store_output SLOT %value [(indirect %index LEN)] [(xfb BUF OFFSET)] [no_varying])";

fn xfb(node: &Node) -> PResult<Xfb> {
    let mut cur = Cursor::of(node, "`(xfb BUF OFFSET)`")?;
    cur.next("`xfb`")?;
    let buffer = cur.number("a transform feedback buffer")?;
    let offset = cur.number("a byte offset")?;
    cur.finish("(xfb BUF OFFSET)")?;
    Ok(Xfb { buffer, offset })
}

fn bit_size(cur: &mut Cursor<'_>) -> PResult<BitSize> {
    const WHAT: &str = "a bit size (1, 16 or 32)";
    let (text, loc) = cur.atom(WHAT)?;
    text.parse::<u32>()
        .ok()
        .and_then(BitSize::from_bits)
        .ok_or_else(|| ParseError::new(loc, format!("expected {WHAT}, found `{text}`")))
}

fn component(cur: &mut Cursor<'_>) -> PResult<u8> {
    const WHAT: &str = "a component (x, y, z or w)";
    let (text, loc) = cur.atom(WHAT)?;
    let idx = COMPONENTS.iter().position(|c| *c == text);
    idx.map(|i| i as u8)
        .ok_or_else(|| ParseError::new(loc, format!("expected {WHAT}, found `{text}`")))
}

fn table_keyword<T: Copy>(cur: &mut Cursor<'_>, what: &str, table: &[(T, &str)]) -> PResult<T> {
    let names: Vec<&str> = table.iter().map(|(_, n)| *n).collect();
    let expected = format!("{what} ({})", super::cursor::one_of(&names));
    let (text, loc) = cur.atom(&expected)?;
    let hit = table.iter().find(|(_, n)| *n == text).map(|(t, _)| *t);
    hit.ok_or_else(|| ParseError::new(loc, format!("expected {expected}, found `{text}`")))
}

fn is_effect_keyword(kw: &str) -> bool {
    matches!(
        kw,
        "store_output"
            | "store_per_vertex_output"
            | "emit_vertex"
            | "end_primitive"
            | "barrier"
            | "discard"
            | "ssbo_store"
            | "if"
            | "loop"
            | "break"
            | "continue"
    )
}

/// The error for a keyword that cannot start a statement here.
fn misplaced(kw: &str, loc: SrcLoc) -> ParseError {
    let msg = if kw == "phi" {
        PHI_PLACE.to_owned()
    } else if matches!(kw, "then" | "else") {
        format!("`({kw} ...)` is only allowed inside an `if`")
    } else if INFO_KEYWORDS.contains(&kw) {
        format!("stage parameter `{kw}` must come before the statements")
    } else if VALUE_INTRINSICS.contains(&kw) || kw.parse::<AluOp>().is_ok() {
        format!("`{kw}` defines a value: write `(%name = {kw} ...)`")
    } else {
        format!("unknown statement `{kw}`")
    };
    ParseError::new(loc, msg)
}
