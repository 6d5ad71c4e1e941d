//! SSA dominance and structured control flow.

use super::*;
use crate::ir::{Inst, InstKind, Stmt};

fn cond(b: &mut ShaderBuilder) -> Value {
    let u = b.uniform(0);
    let zero = b.f32(0.0);
    let c = b.alu(AluOp::FLt, &[zero, u]);
    named(b, c, "c")
}

fn store_data(b: &mut ShaderBuilder, v: Value) {
    b.store(IoSlot::new(Slot::Data(0), 0), v);
}

fn fs_pipeline(b: ShaderBuilder) -> Pipeline {
    pair(vs(), b).with_uniforms(1)
}

#[test]
fn use_before_definition() {
    let mut b = ShaderBuilder::new(Stage::Fragment);
    let x = b.load_interpolated(IoSlot::var(0, 0), InterpMode::PERSP_CENTER);
    named(&mut b, x, "x");
    let y = b.alu(AluOp::FNeg, &[x]);
    store_data(&mut b, y);
    let mut s = b.finish();
    s.body.swap(0, 1);
    let p = Pipeline::new(vs().finish(), s);
    assert_one(&p, "value `%x` is used before it is defined");
}

fn store_stmt(slot: IoSlot, value: Value) -> Stmt {
    Stmt::Inst(Inst {
        result: None,
        kind: InstKind::StoreOutput {
            slot,
            value,
            indirect: None,
            xfb: None,
            no_varying: false,
        },
        loc: None,
    })
}

#[test]
fn never_defined_and_nonexistent_values() {
    let mut s = fs().finish();
    let ghost = s.add_value("ghost", BitSize::B32);
    s.body
        .push(store_stmt(IoSlot::new(Slot::Data(1), 0), ghost));
    let p = Pipeline::new(vs().finish(), s);
    assert_one(&p, "value `%ghost` is never defined");

    let mut b = fs();
    store_data(&mut b, Value(99));
    assert_one(
        &fs_pipeline(b),
        "operand refers to value #99, which does not exist",
    );
}

#[test]
fn defined_twice() {
    let b = fs();
    let mut s = b.finish();
    let first = s.body[0].clone();
    s.body.insert(1, first);
    let p = Pipeline::new(vs().finish(), s);
    assert_one(&p, "value `%x` is defined more than once");
}

#[test]
fn branch_values_need_a_phi() {
    let mut b = fs();
    let c = cond(&mut b);
    let mut t = None;
    b.if_else(
        c,
        |b| {
            let v = b.f32(1.0);
            t = Some(named(b, v, "t"));
            vec![]
        },
        |_| vec![],
    );
    let t = t.unwrap_or(Value(0));
    b.store(IoSlot::new(Slot::Data(1), 0), t);
    assert_one(
        &fs_pipeline(b),
        "value `%t` is defined inside an `if` branch and is not visible here; merge it out with a phi",
    );
}

#[test]
fn phis_carry_branch_values_out() {
    let mut b = fs();
    let c = cond(&mut b);
    let r = b.if_else(c, |b| vec![b.f32(1.0)], |b| vec![b.f32(2.0)]);
    b.store(IoSlot::new(Slot::Data(1), 0), r[0]);
    assert_valid(&fs_pipeline(b));
}

/// The phi's operands swapped: the then-side reads the else-branch value (not yet
/// defined there) and the else-side reads the then-branch value (already out of scope).
#[test]
fn phi_operands_come_from_their_own_branch() {
    let mut b = fs();
    let c = cond(&mut b);
    let r = b.if_else(
        c,
        |b| {
            let v = b.f32(1.0);
            vec![named(b, v, "t")]
        },
        |b| {
            let v = b.f32(2.0);
            vec![named(b, v, "e")]
        },
    );
    b.store(IoSlot::new(Slot::Data(1), 0), r[0]);
    let mut s = b.finish();
    for stmt in &mut s.body {
        if let Stmt::If { phis, .. } = stmt {
            for phi in phis {
                std::mem::swap(&mut phi.then_val, &mut phi.else_val);
            }
        }
    }
    let p = Pipeline::new(vs().finish(), s).with_uniforms(1);
    assert_eq!(
        messages(&p),
        vec![
            "value `%e` is used before it is defined".to_owned(),
            "value `%t` is defined inside an `if` branch and is not visible here; merge it out with a phi"
                .to_owned(),
        ]
    );
}

/// A loop counting to 4: header phi, break in one branch, continue in the other.
fn counting_loop(b: &mut ShaderBuilder) -> Value {
    let zero = b.f32(0.0);
    let phis = b.loop_(&[zero], |b, phis| {
        let one = b.f32(1.0);
        let next = b.alu(AluOp::FAdd, &[phis[0], one]);
        let four = b.f32(4.0);
        let done = b.alu(AluOp::FGe, &[next, four]);
        b.if_else(
            done,
            |b| {
                b.break_();
                vec![]
            },
            |b| {
                b.continue_(&[next]);
                vec![]
            },
        );
    });
    phis[0]
}

#[test]
fn loop_header_phis_are_visible_after_the_loop() {
    let mut b = fs();
    let i = counting_loop(&mut b);
    b.store(IoSlot::new(Slot::Data(1), 0), i);
    assert_valid(&fs_pipeline(b));
}

#[test]
fn loop_body_values_are_not_visible_after_the_loop() {
    let mut b = fs();
    let mut inner = None;
    b.loop_(&[], |b, _| {
        let v = b.f32(1.0);
        inner = Some(named(b, v, "inner"));
        b.break_();
    });
    b.store(IoSlot::new(Slot::Data(1), 0), inner.unwrap_or(Value(0)));
    assert_one(
        &fs_pipeline(b),
        "value `%inner` is defined inside a loop body and is not visible after the loop; carry it out with a header phi",
    );
}

#[test]
fn loop_phi_init_must_be_defined_before_the_loop() {
    let mut b = fs();
    counting_loop(&mut b);
    let mut s = b.finish();
    // Point the header phi's init at a value computed inside the body (the `one`).
    for stmt in &mut s.body {
        if let Stmt::Loop { phis, body, .. } = stmt {
            if let Some(Stmt::Inst(Inst {
                result: Some(one), ..
            })) = body.first()
            {
                phis[0].init = *one;
            }
        }
    }
    let one = first_body_value(&s.body);
    s.values[one.index()].name = "one".into();
    let p = Pipeline::new(vs().finish(), s).with_uniforms(1);
    assert_one(&p, "value `%one` is used before it is defined");
}

fn first_body_value(block: &crate::ir::Block) -> Value {
    for stmt in block {
        if let Stmt::Loop { body, .. } = stmt {
            if let Some(Stmt::Inst(Inst {
                result: Some(v), ..
            })) = body.first()
            {
                return *v;
            }
        }
    }
    Value(u32::MAX)
}

#[test]
fn break_and_continue_outside_a_loop() {
    let mut b = fs();
    b.break_();
    assert_one(&fs_pipeline(b), "`break` outside a loop");
    let mut b = fs();
    b.continue_(&[]);
    assert_one(&fs_pipeline(b), "`continue` outside a loop");
}

#[test]
fn continue_passes_one_value_per_header_phi() {
    let mut b = fs();
    let zero = b.f32(0.0);
    b.loop_(&[zero, zero], |b, phis| {
        b.continue_(&[phis[0]]);
    });
    assert_one(
        &fs_pipeline(b),
        "`continue` passes 1 value but the loop has 2 header phis",
    );
}

#[test]
fn loop_with_phis_must_not_fall_off_its_body() {
    let mut b = fs();
    let c = cond(&mut b);
    let zero = b.f32(0.0);
    b.loop_(&[zero], |b, _| {
        // Only the then-branch leaves; the else path reaches the end of the body.
        b.if_else(
            c,
            |b| {
                b.break_();
                vec![]
            },
            |_| vec![],
        );
    });
    assert_one(
        &fs_pipeline(b),
        "loop with header phis can reach the end of its body; end every path with `break` or `continue`",
    );
}

#[test]
fn loop_without_phis_may_fall_off_its_body() {
    let mut b = fs();
    let c = cond(&mut b);
    b.loop_(&[], |b, _| {
        b.if_else(
            c,
            |b| {
                b.break_();
                vec![]
            },
            |_| vec![],
        );
    });
    assert_valid(&fs_pipeline(b));
}

#[test]
fn results_match_the_instruction_kind() {
    let mut b = fs();
    let x = b.f32(1.0);
    b.effect(InstKind::Alu {
        op: AluOp::FNeg,
        exact: false,
        srcs: vec![x],
    });
    assert_one(
        &fs_pipeline(b),
        "`fneg` produces a value and must define one",
    );

    let mut b = fs();
    let x = b.f32(1.0);
    let v = b.inst(
        InstKind::StoreOutput {
            slot: IoSlot::new(Slot::Data(1), 0),
            value: x,
            indirect: None,
            xfb: None,
            no_varying: false,
        },
        BitSize::B32,
    );
    named(&mut b, v, "s");
    assert_one(
        &fs_pipeline(b),
        "`store_output` does not produce a value; remove `%s =`",
    );
}
