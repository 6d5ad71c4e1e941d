//! Value-arena compaction: after emission a shader's arena holds values that are no
//! longer defined and new values out of program order. Renumbering keeps exactly the
//! defined values, in definition order, so the printed text parses back to the same
//! pipeline.

use std::collections::BTreeMap;

use crate::ir::{Block, InstKind, Shader, Stmt, Value, ValueInfo};

fn definitions(block: &Block, out: &mut Vec<Value>) {
    for stmt in block {
        match stmt {
            Stmt::Inst(i) => out.extend(i.result),
            Stmt::If {
                then_body,
                else_body,
                phis,
                ..
            } => {
                definitions(then_body, out);
                definitions(else_body, out);
                out.extend(phis.iter().map(|p| p.dst));
            }
            Stmt::Loop { phis, body, .. } => {
                out.extend(phis.iter().map(|p| p.dst));
                definitions(body, out);
            }
            Stmt::Break { .. } | Stmt::Continue { .. } => {}
        }
    }
}

/// Calls `f` on every value operand of an instruction, in place.
pub(crate) fn map_kind(kind: &mut InstKind, f: &dyn Fn(&mut Value)) {
    let ind = |i: &mut Option<crate::ir::Indirect>| {
        if let Some(i) = i {
            f(&mut i.index);
        }
    };
    match kind {
        InstKind::Alu { srcs, .. } => srcs.iter_mut().for_each(f),
        InstKind::LoadInput { indirect, .. } => ind(indirect),
        InstKind::LoadInterpolatedInput {
            operands, indirect, ..
        } => {
            operands.iter_mut().for_each(f);
            ind(indirect);
        }
        InstKind::LoadPerVertexInput {
            vertex, indirect, ..
        } => {
            f(vertex);
            ind(indirect);
        }
        InstKind::LoadOutput {
            vertex, indirect, ..
        } => {
            vertex.iter_mut().for_each(f);
            ind(indirect);
        }
        InstKind::StoreOutput {
            value, indirect, ..
        } => {
            f(value);
            ind(indirect);
        }
        InstKind::StorePerVertexOutput {
            value,
            vertex,
            indirect,
            ..
        } => {
            f(value);
            f(vertex);
            ind(indirect);
        }
        InstKind::LoadUbo { offset, .. } => f(offset),
        InstKind::Texture { coords, .. } => coords.iter_mut().for_each(f),
        InstKind::SsboLoad { addr, .. } => f(addr),
        InstKind::Opaque { srcs, .. } => srcs.iter_mut().for_each(f),
        InstKind::SsboStore { addr, value, .. } => {
            f(addr);
            f(value);
        }
        InstKind::Const(_)
        | InstKind::Undef
        | InstKind::LoadUniform { .. }
        | InstKind::LoadSystemValue(_)
        | InstKind::EmitVertex
        | InstKind::EndPrimitive
        | InstKind::Barrier
        | InstKind::Discard => {}
    }
}

fn map_block(block: &mut Block, f: &dyn Fn(&mut Value)) {
    for stmt in block {
        match stmt {
            Stmt::Inst(i) => {
                if let Some(r) = &mut i.result {
                    f(r);
                }
                map_kind(&mut i.kind, f);
            }
            Stmt::If {
                cond,
                then_body,
                else_body,
                phis,
                ..
            } => {
                f(cond);
                map_block(then_body, f);
                map_block(else_body, f);
                for p in phis {
                    f(&mut p.dst);
                    f(&mut p.then_val);
                    f(&mut p.else_val);
                }
            }
            Stmt::Loop { phis, body, .. } => {
                for p in phis {
                    f(&mut p.dst);
                    f(&mut p.init);
                }
                map_block(body, f);
            }
            Stmt::Continue { args, .. } => args.iter_mut().for_each(f),
            Stmt::Break { .. } => {}
        }
    }
}

/// Rebuilds the arena with the defined values in definition order. A value used but
/// never defined (which the validator rejects) keeps a slot at the end, so nothing
/// dangles.
pub fn renumber(shader: &mut Shader) {
    let mut order = vec![];
    definitions(&shader.body, &mut order);
    let mut map: BTreeMap<Value, Value> = BTreeMap::new();
    let mut values: Vec<ValueInfo> = vec![];
    let mut keep = |v: Value, map: &mut BTreeMap<Value, Value>| {
        if map.contains_key(&v) {
            return;
        }
        if let Some(info) = shader.values.get(v.index()) {
            map.insert(v, Value(values.len() as u32));
            values.push(info.clone());
        }
    };
    for v in order {
        keep(v, &mut map);
    }
    let mut used = vec![];
    collect_all(&shader.body, &mut used);
    for v in used {
        keep(v, &mut map);
    }
    map_block(&mut shader.body, &|v: &mut Value| {
        if let Some(n) = map.get(v) {
            *v = *n;
        }
    });
    shader.values = values;
}

fn collect_all(block: &Block, out: &mut Vec<Value>) {
    let cell = std::cell::RefCell::new(Vec::new());
    map_block(&mut block.clone(), &|v: &mut Value| {
        cell.borrow_mut().push(*v)
    });
    out.extend(cell.into_inner());
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
        assert_eq!(add.kind.operands(), vec![Value(0), Value(0)]);
    }
}
