//! The instructions of `.pair` statements: constants, ALU ops and every intrinsic,
//! with their operands, optional indirect indexing and transform feedback.

use crate::ir::{
    half_bits, AluOp, BitSize, Half, Indirect, InstKind, Interp, InterpLoc, InterpMode, IoSlot,
    SrcLoc, SystemValue, Xfb,
};

use super::cursor::{one_of, Cursor, PResult};
use super::literal::parse_const;
use super::parser::INFO_KEYWORDS;
use super::stmt::{StmtParser, PHI_PLACE};
use super::tree::Node;
use super::ParseError;

/// Interpolation keywords.
pub(crate) const INTERPS: &[(Interp, &str)] = &[
    (Interp::Persp, "persp"),
    (Interp::Linear, "linear"),
    (Interp::Color, "color"),
];

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
    "opaque",
];

fn slot_bits(slot: IoSlot) -> BitSize {
    match slot.half {
        Half::Full => BitSize::B32,
        Half::Lo | Half::Hi => BitSize::B16,
    }
}

impl StmtParser<'_, '_> {
    /// The instruction of `(%v = KEYWORD ...)` and the size of its result.
    pub(super) fn value_inst(
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
                let (index, half) = cur.word_half("a uniform word index (`N`, `N.lo`, `N.hi`)")?;
                let kind = InstKind::LoadUniform { index, half };
                (kind, half_bits(half), "(%v = load_uniform N[.lo|.hi])")
            }
            "load_ubo" => {
                let block = cur.number("a UBO block index")?;
                let offset = self.operand(cur, "a byte offset (`%name`)")?;
                let half = if cur.eat("lo") {
                    Half::Lo
                } else if cur.eat("hi") {
                    Half::Hi
                } else {
                    Half::Full
                };
                let kind = InstKind::LoadUbo {
                    block,
                    offset,
                    half,
                };
                (
                    kind,
                    half_bits(half),
                    "(%v = load_ubo BLOCK %offset [lo|hi])",
                )
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
            "opaque" => {
                let (kind, bits) = self.opaque(cur, true)?;
                (kind, bits, super::opaque::VALUE_USAGE)
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

    /// The instruction of a statement without a result, and the form's usage.
    pub(super) fn effect_inst(
        &mut self,
        kw: &str,
        kw_loc: SrcLoc,
        cur: &mut Cursor<'_>,
    ) -> PResult<(InstKind, &'static str)> {
        Ok(match kw {
            "store_output" => (self.store_output(cur)?, STORE_USAGE),
            "store_per_vertex_output" => {
                let slot = cur.slot()?;
                let value = self.operand(cur, "the stored value (`%name`)")?;
                let vertex = self.operand(cur, "a vertex index (`%name`)")?;
                let indirect = self.indirect(cur)?;
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
                let addr = self.operand(cur, "an address (`%name`)")?;
                let value = self.operand(cur, "the stored value (`%name`)")?;
                let kind = InstKind::SsboStore {
                    buffer,
                    addr,
                    value,
                };
                (kind, "(ssbo_store BUF %addr %value)")
            }
            "opaque" => (self.opaque(cur, false)?.0, super::opaque::EFFECT_USAGE),
            _ => return Err(misplaced(kw, kw_loc)),
        })
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
    let expected = format!("{what} ({})", one_of(&names));
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
