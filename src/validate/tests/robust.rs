//! Robustness: randomly damaged pipelines (dangling value handles, wrong recorded
//! sizes, reordered or duplicated statements, out-of-range components) never make the
//! validator panic, and damage that is always invalid is always reported.

use proptest::prelude::*;

use super::*;
use crate::ir::{Half, InstKind, Shader, Stmt};

/// One mutation: which kind, and two numbers that pick its target and new value.
type Mutation = (u8, u32, u32);

fn mutate(s: &mut Shader, (kind, a, b): Mutation) {
    let n_stmts = s.body.len();
    let n_values = s.values.len() as u32;
    match kind % 5 {
        0 if n_stmts > 1 => s.body.swap(a as usize % n_stmts, b as usize % n_stmts),
        1 if n_stmts > 0 => {
            let stmt = s.body[a as usize % n_stmts].clone();
            s.body.insert(b as usize % (n_stmts + 1), stmt);
        }
        2 if n_values > 0 => {
            let bits = [BitSize::B1, BitSize::B16, BitSize::B32][b as usize % 3];
            s.values[(a % n_values) as usize].bits = bits;
        }
        3 => {
            // Operands may point past the arena.
            if let Some(Stmt::Inst(inst)) = s.body.get_mut(a as usize % n_stmts.max(1)) {
                match &mut inst.kind {
                    InstKind::Alu { srcs, .. } => {
                        if let Some(src) = srcs.first_mut() {
                            *src = Value(b % (n_values + 3));
                        }
                    }
                    InstKind::StoreOutput { value, .. } => *value = Value(b % (n_values + 3)),
                    _ => {}
                }
            }
        }
        _ => {
            if let Some(Stmt::Inst(inst)) = s.body.get_mut(a as usize % n_stmts.max(1)) {
                if let InstKind::StoreOutput { slot, .. } | InstKind::LoadInput { slot, .. } =
                    &mut inst.kind
                {
                    slot.comp = (b % 8) as u8;
                    slot.half = [Half::Full, Half::Lo, Half::Hi][(b / 8 % 3) as usize];
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn damaged_pipelines_never_panic(
        pair_index in 0usize..8,
        producer_damage in prop::collection::vec((0u8..5, any::<u32>(), any::<u32>()), 0..6),
        consumer_damage in prop::collection::vec((0u8..5, any::<u32>(), any::<u32>()), 0..6),
    ) {
        let pairs = Stage::pairs();
        let (p, c) = pairs[pair_index % pairs.len()];
        let mut producer = base(p).finish();
        let mut consumer = base(c).finish();
        for m in producer_damage {
            mutate(&mut producer, m);
        }
        for m in consumer_damage {
            mutate(&mut consumer, m);
        }
        let pipeline = Pipeline::new(producer, consumer);
        // Returning at all is the property; the error kind must be a validation error.
        match validate(&pipeline) {
            Ok(()) | Err(Error::Invalid(_)) => {}
            Err(other) => prop_assert!(false, "unexpected error kind: {other}"),
        }
    }

    #[test]
    fn a_dangling_store_operand_is_always_reported(extra in 0u32..1000) {
        let mut consumer = fs().finish();
        let dangling = Value(consumer.values.len() as u32 + extra);
        for stmt in &mut consumer.body {
            if let Stmt::Inst(inst) = stmt {
                if let InstKind::StoreOutput { value, .. } = &mut inst.kind {
                    *value = dangling;
                }
            }
        }
        let msg = format!("operand refers to value #{}, which does not exist", dangling.0);
        prop_assert_eq!(messages(&Pipeline::new(vs().finish(), consumer)), vec![msg]);
    }
}
