//! The passes that only look at statements in order go through `ir::walk`, so nesting
//! as deep as a library caller builds (the text parser stops at 128 levels, the IR has
//! no limit) neither overflows the stack nor changes what they compute.

use varysat::ir::{insts, BitSize, Block, Inst, InstKind, IoSlot, Phi, Slot, Stmt, Value};
use varysat::{text, validate, Pipeline, Shader, Stage};

/// A VS whose output store sits inside `depth` nested `if`s on the same condition,
/// each merging the stored value out with a phi.
fn nested_vs(depth: usize) -> Shader {
    let mut vs = Shader::new(Stage::Vertex);
    let a = vs.add_value("a", BitSize::B32);
    let c = vs.add_value("c", BitSize::B1);
    let inst = |result: Option<Value>, kind: InstKind| {
        Stmt::Inst(Inst {
            result,
            kind,
            loc: None,
        })
    };
    let mut body: Block = vec![];
    let mut inner = a;
    for level in 0..depth {
        let merged = vs.add_value(format!("m{level}"), BitSize::B32);
        let branch = std::mem::take(&mut body);
        body = vec![Stmt::If {
            cond: c,
            then_body: branch,
            else_body: vec![],
            phis: vec![Phi {
                dst: merged,
                then_val: inner,
                else_val: a,
            }],
            loc: None,
        }];
        inner = merged;
    }
    let load = |slot: u8| InstKind::LoadInput {
        slot: IoSlot::new(Slot::Attr(slot), 0),
        indirect: None,
    };
    let mut top = vec![inst(Some(a), load(0))];
    let one = vs.add_value("one", BitSize::B32);
    top.push(inst(Some(one), InstKind::Const(1.0f32.to_bits())));
    top.push(inst(
        Some(c),
        InstKind::Alu {
            op: varysat::ir::AluOp::FLt,
            exact: false,
            srcs: vec![a, one],
        },
    ));
    top.append(&mut body);
    top.push(inst(
        None,
        InstKind::StoreOutput {
            slot: IoSlot::new(Slot::Var(0), 0),
            value: inner,
            indirect: None,
            xfb: None,
            no_varying: false,
        },
    ));
    vs.body = top;
    vs
}

/// Takes a nested body apart level by level: the compiler's drop glue would recurse.
fn unnest(mut block: Block) {
    while let Some(stmt) = block.pop() {
        if let Stmt::If { then_body, .. } = stmt {
            block.extend(then_body);
        }
    }
}

#[test]
fn deep_nesting_validates_and_prints_every_level() {
    let depth = 3000;
    let vs = nested_vs(depth);
    assert_eq!(insts(&vs.body).count(), 4);
    let fs = text::parse(
        "(pair (producer vs) (consumer fs (%v = load_interpolated_input VAR0.x persp center) (store_output DATA0.x %v)))",
        None,
    )
    .unwrap()
    .consumer;
    let pair = Pipeline::new(vs, fs);
    validate::validate(&pair).unwrap();
    let printed = text::print(&pair);
    // The walk reaches every level.
    let ifs = printed
        .lines()
        .filter(|l| l.trim_start().starts_with("(if %c"))
        .count();
    assert_eq!(ifs, depth);
    let deepest = printed
        .lines()
        .map(|l| l.len() - l.trim_start().len())
        .max()
        .unwrap();
    // Each `if` indents its `then` by two and that branch's statements by two more;
    // the innermost `if` (at 4 + 4 * (depth - 1)) has an empty `(then)` line.
    assert_eq!(deepest, 4 + 4 * (depth - 1) + 2);
    assert!(printed.contains(&format!("(%m{} = phi %m{} %a))", depth - 1, depth - 2)));
    unnest(pair.producer.body);
}
