//! The `opaque` form: `(%v = opaque NAME PURITY CODE RESULT (args TYPE...) [RES] %op...)`
//! and, for an operation without a result, `(opaque NAME effect CODE (args ...) [RES] %op...)`.
//! RES is `(image N)` or `(buffer N)`.

use std::sync::Arc;

use crate::ir::{BitSize, InstKind, OpaqueOp, OpaqueTy, Purity, Resource};

use super::cursor::{Cursor, PResult};
use super::stmt::StmtParser;
use super::ParseError;

/// Usage of the value form.
pub(super) const VALUE_USAGE: &str =
    "(%v = opaque NAME PURITY CODE TYPE[.COMP] (args TYPE...) [(image N)|(buffer N)] %op...)";
/// Usage of the effect form.
pub(super) const EFFECT_USAGE: &str =
    "(opaque NAME effect CODE (args TYPE...) [(image N)|(buffer N)] %op...)";

fn parsed<T>(
    cur: &mut Cursor<'_>,
    what: &str,
    f: impl Fn(&str) -> Result<T, String>,
) -> PResult<T> {
    let (text, loc) = cur.atom(what)?;
    f(text).map_err(|m| ParseError::new(loc, m))
}

fn args(cur: &mut Cursor<'_>) -> PResult<Vec<OpaqueTy>> {
    const WHAT: &str = "`(args TYPE...)`";
    let node = cur.next(WHAT)?;
    if node.head() != Some("args") {
        return Err(super::cursor::found(node, WHAT));
    }
    let mut c = Cursor::of(node, WHAT)?;
    c.next(WHAT)?;
    let mut out = vec![];
    while c.peek().is_some() {
        out.push(parsed(
            &mut c,
            "an operand type such as `f32x3`",
            str::parse,
        )?);
    }
    Ok(out)
}

fn resource(cur: &mut Cursor<'_>) -> PResult<Option<Resource>> {
    for (head, make) in [
        ("image", Resource::Image as fn(u32) -> Resource),
        ("buffer", Resource::Buffer),
    ] {
        if let Some(node) = cur.eat_list(head) {
            let usage = format!("({head} N)");
            let mut c = Cursor::of(node, &usage)?;
            c.next(head)?;
            let n = c.number("a binding number")?;
            c.finish(&usage)?;
            return Ok(Some(make(n)));
        }
    }
    Ok(None)
}

impl StmtParser<'_, '_> {
    /// The operation after the `opaque` keyword; `with_result` for the value form.
    pub(super) fn opaque(
        &mut self,
        cur: &mut Cursor<'_>,
        with_result: bool,
    ) -> PResult<(InstKind, BitSize)> {
        let (name_text, name_loc) = cur.atom("an opaque operation name")?;
        let names: Vec<&str> = Purity::ALL.iter().map(|p| p.keyword()).collect();
        let purity: Purity = cur.keyword("a purity", &names)?;
        let code = parsed(cur, "a SPIR-V code (`op:N` or `ext:SET:N`)", str::parse)?;
        let result = match with_result {
            true => Some(parsed(
                cur,
                "a result type such as `f32` or `f32x3.1`",
                crate::ir::parse_opaque_result,
            )?),
            false => None,
        };
        let op = OpaqueOp {
            name: name_text.to_owned(),
            purity,
            code,
            result,
            args: args(cur)?,
            resource: resource(cur)?,
        };
        if let Some(msg) = op.problem() {
            return Err(ParseError::new(name_loc, msg));
        }
        let srcs = self.operands(cur.rest())?;
        if srcs.len() != op.operand_count() {
            let msg = format!(
                "opaque `{}` takes {} operand(s) by its types, found {}",
                op.name,
                op.operand_count(),
                srcs.len()
            );
            return Err(ParseError::new(name_loc, msg));
        }
        let bits = op.result_bits().unwrap_or(BitSize::B32);
        let kind = InstKind::Opaque {
            op: Arc::new(op),
            srcs,
        };
        Ok((kind, bits))
    }
}
