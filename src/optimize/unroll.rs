//! Full unrolling of counted loops that store outputs or emit vertices, before
//! lowering. A store or emit inside a loop pins its output (which store reaches which
//! vertex is not static); Mesa unrolls such loops (`nir_opt_loop_unroll`) before its
//! varying pass, so a GS that emits three vertices from `for (i = 0; i < 3; i++)` has
//! three static emit sites. The same here, for the shape glslang and spirv-opt leave:
//!
//! ```text
//! (loop (%i = phi %init) ...
//!   (%done = CMP ...)  (if %done (then (break)) (else))   ; or break on false
//!   BODY
//!   (continue ARGS))
//! ```
//!
//! or with the body as the branch of the exit `if` that does not break (glslang's `for`),
//! where the exit test is known at every iteration from constants (the trip count is
//! found by running the header with the interpreter's `eval_alu`). Loops with other
//! jumps, nested loops, more than [`MAX_TRIPS`] iterations or more than
//! [`MAX_UNROLLED_INSTS`] instructions unrolled stay loops.

use std::collections::BTreeMap;

use fxhash::{FxHashMap, FxHashSet};

use crate::ir::{
    eval_alu, for_each_stmt_mut, walk, Block, Inst, InstKind, LoopPhi, Shader, Stmt, Value, Visit,
};

/// Most iterations a loop is unrolled for.
pub const MAX_TRIPS: usize = 16;
/// Most instructions the unrolled copies of one loop's body may hold.
pub const MAX_UNROLLED_INSTS: usize = 1024;

/// The parts of a counted loop.
struct Counted<'a> {
    phis: &'a [LoopPhi],
    /// The exit test.
    test: &'a Inst,
    /// Whether the loop leaves when the test is true (`then (break)`).
    break_on_true: bool,
    /// The statements between the exit test and the `continue`.
    body: &'a [Stmt],
    args: &'a [Value],
}

fn counted<'a>(phis: &'a [LoopPhi], body: &'a Block) -> Option<Counted<'a>> {
    let is_break = |b: &Block| matches!(b.as_slice(), [Stmt::Break { .. }]);
    let (test, cond, then_body, else_body, after) = match body.as_slice() {
        [Stmt::Inst(test), Stmt::If {
            cond,
            then_body,
            else_body,
            phis: if_phis,
            ..
        }, after @ ..]
            if if_phis.is_empty() =>
        {
            (test, *cond, then_body, else_body, after)
        }
        _ => return None,
    };
    if test.result != Some(cond) {
        return None;
    }
    // Either the exit `if` only breaks and the body follows it, or (glslang's `for`)
    // one branch breaks and the other is the whole body.
    let (break_on_true, stmts) = match (is_break(then_body), is_break(else_body)) {
        (true, false) if else_body.is_empty() => (true, after),
        (false, true) if then_body.is_empty() => (false, after),
        (true, false) if after.is_empty() => (true, else_body.as_slice()),
        (false, true) if after.is_empty() => (false, then_body.as_slice()),
        _ => return None,
    };
    let [rest @ .., Stmt::Continue { args, .. }] = stmts else {
        return None;
    };
    (args.len() == phis.len()).then_some(Counted {
        phis,
        test,
        break_on_true,
        body: rest,
        args,
    })
}

/// Whether `block` jumps (anywhere, nested loops included) or holds a loop.
fn has_jump_or_loop(block: &[Stmt]) -> bool {
    walk(block).any(|v| {
        matches!(
            v,
            Visit::Enter(Stmt::Break { .. } | Stmt::Continue { .. } | Stmt::Loop { .. })
        )
    })
}

/// Whether `block` stores an output or emits a vertex.
fn writes_outputs(block: &[Stmt]) -> bool {
    walk(block).any(|v| match v {
        Visit::Enter(Stmt::Inst(i)) => matches!(
            i.kind,
            InstKind::StoreOutput { .. }
                | InstKind::StorePerVertexOutput { .. }
                | InstKind::EmitVertex
                | InstKind::EndPrimitive
        ),
        _ => false,
    })
}

/// Runs the loop's header and the constant part of its body: the number of times the
/// body runs, when every exit test is known and the loop leaves within `MAX_TRIPS`.
fn trip_count(s: &Shader, c: &Counted<'_>, known: &BTreeMap<Value, u32>) -> Option<usize> {
    let mut env: BTreeMap<Value, u32> = BTreeMap::new();
    let value = |env: &BTreeMap<Value, u32>, v: Value| env.get(&v).or(known.get(&v)).copied();
    for p in c.phis {
        if let Some(k) = value(&env, p.init) {
            env.insert(p.dst, k);
        }
    }
    for trips in 0..=MAX_TRIPS {
        let mut local = env.clone();
        eval_one(s, &c.test.kind, c.test.result, &mut local, known);
        let done = local.get(&c.test.result?)? & 1 == 1;
        if done == c.break_on_true {
            return Some(trips);
        }
        // The body's constant values, then the next phi values.
        for stmt in c.body {
            if let Stmt::Inst(i) = stmt {
                eval_one(s, &i.kind, i.result, &mut local, known);
            }
        }
        env = c
            .phis
            .iter()
            .zip(c.args)
            .filter_map(|(p, a)| value(&local, *a).map(|k| (p.dst, k)))
            .collect();
    }
    None
}

fn eval_one(
    s: &Shader,
    kind: &InstKind,
    result: Option<Value>,
    env: &mut BTreeMap<Value, u32>,
    known: &BTreeMap<Value, u32>,
) {
    let (Some(r), InstKind::Alu { op, srcs, .. }) = (result, kind) else {
        return;
    };
    let vals: Option<Vec<u32>> = srcs
        .iter()
        .map(|v| env.get(v).or(known.get(v)).copied())
        .collect();
    if let Some(vals) = vals {
        let sizes: Vec<_> = srcs.iter().map(|v| s.bits(*v)).collect();
        env.insert(r, eval_alu(*op, &vals, &sizes));
    }
}

/// Value renaming shared by the copies of one shader: fresh names, and the values
/// that replace a removed loop's phis after it.
struct Renamer {
    /// Names a copy could collide with (built on the first unrolled loop). A copy is
    /// named `NAME.uK` (`NAME.uK_N` if that is taken): one value is copied at most
    /// once per iteration, so only names already of that form (an earlier unrolling's
    /// result read back) and the names made here can collide.
    taken: Option<FxHashSet<String>>,
    /// Loop phi → its value when the unrolled loop ends.
    after: BTreeMap<Value, Value>,
}

impl Renamer {
    fn resolve(&self, mut v: Value) -> Value {
        while let Some(n) = self.after.get(&v) {
            v = *n;
        }
        v
    }

    fn fresh(&mut self, s: &mut Shader, old: Value, k: usize) -> Value {
        let taken = self.taken.get_or_insert_with(|| {
            let copies = s.values.iter().filter(|v| v.name.contains(".u"));
            copies.map(|v| v.name.clone()).collect()
        });
        let base = &s.value(old).name;
        let mut name = String::with_capacity(base.len() + 4);
        name.push_str(base);
        name.push_str(".u");
        push_decimal(&mut name, k);
        let stem = name.len();
        let mut n = 0;
        while taken.contains(&name) {
            n += 1;
            name.truncate(stem);
            name.push('_');
            push_decimal(&mut name, n);
        }
        taken.insert(name.clone());
        s.add_value(name, s.bits(old))
    }

    /// One iteration's copy of `stmts`: every value it defines renamed, uses of values
    /// in `map` (the phis and earlier definitions) replaced.
    fn copy(
        &mut self,
        s: &mut Shader,
        stmts: &[Stmt],
        map: &mut FxHashMap<Value, Value>,
        k: usize,
    ) -> Block {
        let mut out = stmts.to_vec();
        let defs: Vec<Value> = walk(&out)
            .filter_map(|v| match v {
                Visit::Enter(st) => Some(st.own_defs()),
                _ => None,
            })
            .flatten()
            .collect();
        for d in defs {
            let fresh = self.fresh(s, d, k);
            map.insert(d, fresh);
        }
        for_each_stmt_mut(&mut out, |st| {
            st.map_own_values(&mut |v| {
                if let Some(n) = map.get(v) {
                    *v = *n;
                }
            })
        });
        out
    }
}

/// Appends `n` in decimal (what `format!` would, without its machinery: one name is
/// made per copied value).
fn push_decimal(out: &mut String, mut n: usize) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend(digits[i..].iter().map(|&d| char::from(d)));
}

/// Whether `s` has a loop anywhere (only then can `unroll` change it).
pub(crate) fn has_loop(s: &Shader) -> bool {
    walk(&s.body).any(|v| matches!(v, Visit::Enter(Stmt::Loop { .. })))
}

/// Unrolls every counted loop of `s` that stores outputs or emits (module comment);
/// `known_constants` gives the values known to be constant (only computed when the
/// shader has a loop). Returns whether any loop went.
pub(crate) fn unroll(
    s: &mut Shader,
    known_constants: impl FnOnce(&Shader) -> BTreeMap<Value, u32>,
) -> bool {
    if !has_loop(s) {
        return false;
    }
    let known = &known_constants(s);
    let mut body = std::mem::take(&mut s.body);
    let mut r = Renamer {
        taken: None,
        after: BTreeMap::new(),
    };
    unroll_block(s, &mut body, known, &mut r);
    s.body = body;
    if r.after.is_empty() {
        return false;
    }
    // Uses of a removed phi after its loop read the last iteration's value.
    for_each_stmt_mut(&mut s.body, |st| {
        st.map_own_values(&mut |v| *v = r.resolve(*v))
    });
    true
}

fn unroll_block(s: &mut Shader, block: &mut Block, known: &BTreeMap<Value, u32>, r: &mut Renamer) {
    let old = std::mem::take(block);
    block.reserve(old.len());
    for mut stmt in old {
        match &mut stmt {
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                unroll_block(s, then_body, known, r);
                unroll_block(s, else_body, known, r);
            }
            Stmt::Loop { phis, body, .. } => {
                if let Some(copies) = unrolled(s, phis, body, known, r) {
                    block.extend(copies);
                    continue;
                }
            }
            _ => {}
        }
        block.push(stmt);
    }
}

/// The unrolled statements of one loop, or `None` when it stays a loop.
fn unrolled(
    s: &mut Shader,
    phis: &[LoopPhi],
    body: &Block,
    known: &BTreeMap<Value, u32>,
    r: &mut Renamer,
) -> Option<Block> {
    let c = counted(phis, body)?;
    if has_jump_or_loop(c.body) || !writes_outputs(c.body) || uses_test_elsewhere(&c) {
        return None;
    }
    let trips = trip_count(s, &c, known)?;
    let size = walk(c.body).count();
    if trips * size > MAX_UNROLLED_INSTS {
        return None;
    }
    let (stmts, args) = (c.body.to_vec(), c.args.to_vec());
    let mut current: Vec<Value> = phis.iter().map(|p| r.resolve(p.init)).collect();
    let mut out = vec![];
    for k in 0..trips {
        let mut map: FxHashMap<Value, Value> = phis
            .iter()
            .zip(&current)
            .map(|(p, v)| (p.dst, *v))
            .collect();
        out.extend(r.copy(s, &stmts, &mut map, k));
        current = args
            .iter()
            .map(|a| r.resolve(map.get(a).copied().unwrap_or(*a)))
            .collect();
    }
    for (p, v) in phis.iter().zip(current) {
        r.after.insert(p.dst, v);
    }
    Some(out)
}

/// Whether the exit test's value is read anywhere but by the exit `if` (it would have
/// no definition once the loop is gone).
fn uses_test_elsewhere(c: &Counted<'_>) -> bool {
    let Some(t) = c.test.result else {
        return true;
    };
    walk(c.body).any(|v| matches!(v, Visit::Enter(st) if st.own_uses().contains(&t)))
        || c.args.contains(&t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gs(body: &str) -> Shader {
        let src = format!(
            "(pair (producer gs (input triangles) (output triangle_strip) (max_vertices 4)
               (%k0 = const 32 0) (%k1 = const 32 1) (%k3 = const 32 3)
               (%a = load_per_vertex_input VAR0.x %k0)
               {body})
             (consumer fs (%x = load_interpolated_input VAR0.x persp center)
               (store_output DATA0.x %x)))"
        );
        crate::text::parse(&src, None)
            .expect("test pair parses")
            .producer
    }

    fn count(s: &Shader, f: impl Fn(&Stmt) -> bool) -> usize {
        walk(&s.body)
            .filter(|v| matches!(v, Visit::Enter(st) if f(st)))
            .count()
    }

    fn unrolled_gs(body: &str) -> (Shader, bool) {
        let mut s = gs(body);
        let known = [(Value(0), 0), (Value(1), 1), (Value(2), 3)].into();
        let did = unroll(&mut s, |_| known);
        (s, did)
    }

    const EMIT: fn(&Stmt) -> bool =
        |st| matches!(st, Stmt::Inst(i) if i.kind == InstKind::EmitVertex);

    #[test]
    fn a_counted_emit_loop_becomes_its_iterations() {
        let (s, did) = unrolled_gs(
            "(loop (%i = phi %k0) (%done = ige %i %k3) (if %done (then (break)) (else))
               (store_output VAR0.x %a) (emit_vertex)
               (%n = iadd %i %k1) (continue %n))",
        );
        assert!(did);
        assert_eq!(count(&s, |st| matches!(st, Stmt::Loop { .. })), 0);
        assert_eq!(count(&s, EMIT), 3);
    }

    #[test]
    fn copies_get_names_no_value_has() {
        // `%n.u0` is what the first iteration's copy of `%n` would be called (an
        // earlier unrolling's result read back): the copy takes the next free name.
        let (s, did) = unrolled_gs(
            "(%n.u0 = const 32 7) (store_output VAR1.x %n.u0)
             (loop (%i = phi %k0) (%done = ige %i %k3) (if %done (then (break)) (else))
               (store_output VAR0.x %a) (emit_vertex)
               (%n = iadd %i %k1) (continue %n))",
        );
        assert!(did);
        let names: Vec<&str> = s.values.iter().map(|v| v.name.as_str()).collect();
        let unique: std::collections::BTreeSet<&str> = names.iter().copied().collect();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        for copy in ["n.u0_1", "n.u1", "n.u2"] {
            assert!(unique.contains(copy), "{copy} in {names:?}");
        }
    }

    #[test]
    fn a_for_loop_with_its_body_in_the_branch_that_does_not_break_is_unrolled_too() {
        let (s, did) = unrolled_gs(
            "(loop (%i = phi %k0) (%more = ilt %i %k3)
               (if %more
                 (then (store_output VAR0.x %a) (emit_vertex) (%n = iadd %i %k1) (continue %n))
                 (else (break))))",
        );
        assert!(did);
        assert_eq!(count(&s, |st| matches!(st, Stmt::Loop { .. })), 0);
        assert_eq!(count(&s, EMIT), 3);
    }

    #[test]
    fn loops_with_other_jumps_or_no_outputs_stay_loops() {
        let early_break =
            "(loop (%i = phi %k0) (%done = ige %i %k3) (if %done (then (break)) (else))
               (if %done (then (break)) (else)) (emit_vertex)
               (%n = iadd %i %k1) (continue %n))";
        let no_outputs =
            "(loop (%i = phi %k0) (%done = ige %i %k3) (if %done (then (break)) (else))
               (%n = iadd %i %k1) (continue %n))";
        let endless = "(loop (%i = phi %k0) (%done = ige %i %k3) (if %done (then (break)) (else))
               (emit_vertex) (continue %i))";
        for body in [early_break, no_outputs, endless] {
            let (s, did) = unrolled_gs(body);
            assert!(!did, "{body}");
            assert_eq!(count(&s, |st| matches!(st, Stmt::Loop { .. })), 1);
        }
    }

    #[test]
    fn decimal_names_match_format() {
        for n in [0, 7, 10, 99, 100, 12345, usize::MAX] {
            let mut s = String::from("x.u");
            push_decimal(&mut s, n);
            assert_eq!(s, format!("x.u{n}"));
        }
    }
}
