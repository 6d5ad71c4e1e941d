//! Positions: diagnostics carry the pair's file and the offending statement's or
//! value's position (falling back to the shader's), and come out in source order.

use super::*;
use crate::ir::{SrcLoc, Stmt};

fn at(line: u32, col: u32) -> Option<SrcLoc> {
    Some(SrcLoc { line, col })
}

/// Gives every top-level instruction of `s` the position `(line0 + i, 5)` and its
/// value the position `(line0 + i, 6)`, as the parser would for one statement a line.
fn place(s: &mut crate::ir::Shader, line0: u32) {
    for (i, stmt) in s.body.iter_mut().enumerate() {
        if let Stmt::Inst(inst) = stmt {
            let line = line0 + i as u32;
            inst.loc = at(line, 5);
            if let Some(v) = inst.result {
                s.values[v.index()].loc = at(line, 6);
            }
        }
    }
}

#[test]
fn diagnostics_name_file_line_and_column_in_source_order() {
    // Producer on lines 3.., consumer on lines 10..; each shader has one problem,
    // and the consumer also uses a value before defining it.
    let mut vsb = vs();
    vsb.load_interpolated(IoSlot::var(0, 1), InterpMode::PERSP_CENTER);
    let mut producer = vsb.finish();
    producer.loc = at(2, 3);
    place(&mut producer, 3);

    let mut fsb = fs();
    let t = fsb.f32(1.0);
    named(&mut fsb, t, "t");
    fsb.store(IoSlot::new(Slot::Data(1), 0), t);
    let mut consumer = fsb.finish();
    // Move the store of %t (last) before its definition.
    let n = consumer.body.len();
    consumer.body.swap(n - 2, n - 1);
    consumer.loc = at(9, 3);
    place(&mut consumer, 10);

    let mut p = Pipeline::new(producer, consumer);
    p.source = Some("bad.pair".into());
    let err = match validate(&p) {
        Err(e) => e.to_string(),
        Ok(()) => String::new(),
    };
    // The store is statement 2 of the consumer (line 12), %t is defined on line 13.
    assert_eq!(
        err,
        "bad.pair:6:5: error: `load_interpolated_input` is only legal in a fragment shader, not in vs\n\
         bad.pair:12:5: error: value `%t` is used before it is defined (defined at 13:6)"
    );
}

#[test]
fn statements_without_position_fall_back_to_the_shader() {
    let mut b = fs();
    b.effect(crate::ir::InstKind::EmitVertex);
    let mut consumer = b.finish();
    consumer.loc = at(7, 3);
    let p = Pipeline::new(vs().finish(), consumer);
    let err = validate(&p).err().map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some("<input>:7:3: error: `emit_vertex` is only legal in a geometry shader, not in fs")
    );
}
