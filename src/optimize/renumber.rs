//! Value-arena compaction: after emission a shader's arena holds values that are no
//! longer defined and new values out of program order. Renumbering keeps exactly the
//! defined values, in definition order, so the printed text parses back to the same
//! pipeline.

use crate::ir::{for_each_stmt_mut, walk, Block, InstKind, Shader, Stmt, Value, ValueInfo, Visit};

/// The values `block` defines, in definition order (an `if`'s merge phis after its
/// branches, a loop's header phis before its body).
fn definitions(block: &Block) -> Vec<Value> {
    let mut out = vec![];
    for visit in walk(block) {
        match visit {
            Visit::Enter(stmt @ (Stmt::Inst(_) | Stmt::Loop { .. }))
            | Visit::Leave(stmt @ Stmt::If { .. }) => out.extend(stmt.own_defs()),
            _ => {}
        }
    }
    out
}

/// Calls `f` on every value operand of an instruction, in place.
pub(crate) fn map_kind(kind: &mut InstKind, f: &dyn Fn(&mut Value)) {
    kind.operands_mut().into_iter().for_each(f);
}

/// Rebuilds the arena with the defined values in definition order. A value used but
/// never defined (which the validator rejects) keeps a slot at the end, so nothing
/// dangles.
pub fn renumber(shader: &mut Shader) {
    let order = definitions(&shader.body);
    // Old index -> new value, dense over the old arena (every operand is an index
    // into it); the infos move to their new slots instead of being cloned.
    let mut map: Vec<Option<Value>> = vec![None; shader.values.len()];
    let mut old: Vec<Option<ValueInfo>> = std::mem::take(&mut shader.values)
        .into_iter()
        .map(Some)
        .collect();
    let mut values: Vec<ValueInfo> = Vec::with_capacity(order.len());
    let mut keep = |v: Value, map: &mut Vec<Option<Value>>| {
        // An index's info is taken the first time it is kept, so a second visit (or
        // an index past the arena) finds nothing.
        if let Some(info) = old.get_mut(v.index()).and_then(Option::take) {
            map[v.index()] = Some(Value(values.len() as u32));
            values.push(info);
        }
    };
    for v in order {
        keep(v, &mut map);
    }
    for visit in walk(&shader.body) {
        if let Visit::Enter(stmt) = visit {
            for v in stmt.own_defs().into_iter().chain(stmt.own_uses()) {
                keep(v, &mut map);
            }
        }
    }
    for_each_stmt_mut(&mut shader.body, |stmt| {
        stmt.map_own_values(&mut |v| {
            if let Some(Some(n)) = map.get(v.index()) {
                *v = *n;
            }
        })
    });
    shader.values = values;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{AluOp, IoSlot, ShaderBuilder, Slot, Stage};

    #[test]
    fn drops_orphans_and_orders_by_definition() {
        let mut b = ShaderBuilder::new(Stage::Fragment);
        let x = b.f32(1.0);
        let orphan = b.f32(2.0);
        let y = b.alu(AluOp::FAdd, &[x, x]);
        b.store(IoSlot::new(Slot::Data(0), 0), y);
        let mut s = b.finish();
        // Remove the orphan's definition, as emission does with region values.
        s.body
            .retain(|st| !matches!(st, Stmt::Inst(i) if i.result == Some(orphan)));
        renumber(&mut s);
        assert_eq!(s.values.len(), 2);
        assert_eq!(s.values[0].name, "0");
        assert_eq!(s.values[1].name, "2");
        let Some(Stmt::Inst(add)) = s.body.get(1) else {
            panic!("fadd expected");
        };
        assert_eq!(add.result, Some(Value(1)));
        assert_eq!(add.kind.operands().as_slice(), [Value(0), Value(0)]);
    }
}
