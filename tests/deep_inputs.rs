//! Inputs as deep as they are long: a dependency chain of 12,000 instructions (also
//! through exact extraction), rule and cost files of 50,000 `(`, and `if`s nested
//! 3,000 deep in a pair built in code. Every stage that walks values (parsing,
//! validation, lowering, extraction, emission, packing, printing, the interpreter)
//! must handle chains without recursion, and nesting beyond `ir::MAX_NESTING` is
//! refused by `optimize` and the interpreter before anything follows it, so each test runs on a thread with the default
//! 2 MiB stack: a recursive walk overflows it long before the chain ends (a stack
//! overflow aborts the whole test binary, which is the failure this file guards
//! against).

use varysat::internals::egraph::RuleSet;
use varysat::internals::extract::{CostModel, Extraction};
use varysat::interpreter::{check_equivalent, run, EquivConfig, RunConfig};
use varysat::ir::{Stmt, MAX_NESTING};
use varysat::text::{parse, print};
use varysat::{optimize, Error, Options};

/// Links in each chain: deep enough that any per-link recursion overflows 2 MiB.
const LINKS: usize = 12_000;

/// A VS whose `VAR0.x` is `%p` added `links + 1` times, read by a plain FS.
fn producer_chain(links: usize) -> String {
    let mut body = String::from("    (%a0 = fadd %p %p)\n");
    for i in 1..links {
        body += &format!("    (%a{i} = fadd %a{} %p)\n", i - 1);
    }
    format!(
        "(pair
  (producer vs
    (%p = load_input ATTR0.x)
    (store_output POS.x %p)
{body}    (store_output VAR0.x %a{}))
  (consumer fs
    (%x = load_interpolated_input VAR0.x persp center)
    (store_output DATA0.x %x)))",
        links - 1
    )
}

/// The same chain in the FS, on the interpolated varying.
fn consumer_chain(links: usize) -> String {
    let mut body = String::from("    (%a0 = fadd %x %x)\n");
    for i in 1..links {
        body += &format!("    (%a{i} = fadd %a{} %x)\n", i - 1);
    }
    format!(
        "(pair
  (producer vs
    (%p = load_input ATTR0.x)
    (store_output POS.x %p)
    (store_output VAR0.x %p))
  (consumer fs
    (%x = load_interpolated_input VAR0.x persp center)
{body}    (store_output DATA0.x %a{})))",
        links - 1
    )
}

/// A GS storing, at each of two emits, the same chain over a different vertex's
/// input: per-emit factoring walks both chains in step.
fn gs_chains(links: usize) -> String {
    let mut body = String::new();
    for (v, input) in ["%a", "%b"].iter().enumerate() {
        body += &format!("    ({input}0 = fadd %v{v} %v{v})\n");
        for i in 1..links {
            body += &format!("    ({input}{i} = fadd {input}{} %v{v})\n", i - 1);
        }
        body += &format!(
            "    (store_output POS.x %v{v})\n    (store_output VAR0.x {input}{})\n    (emit_vertex)\n",
            links - 1
        );
    }
    format!(
        "(pair
  (producer gs
    (input points)
    (output points)
    (max_vertices 2)
    (invocations 1)
    (%k0 = const 32 0)
    (%v0 = load_per_vertex_input VAR0.x %k0)
    (%v1 = load_per_vertex_input VAR1.x %k0)
{body}    (end_primitive))
  (consumer fs
    (%x = load_interpolated_input VAR0.x persp center)
    (store_output DATA0.x %x)))"
    )
}

/// Runs `f` on a thread with the default 2 MiB stack (what the test harness and most
/// embedders give), propagating its panic.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .expect("thread starts")
        .join()
        .expect("no panic")
}

/// Optimizes `text`, then checks the output reparses, prints, and behaves like the
/// input in the interpreter.
fn optimize_and_check(text: String) {
    optimize_and_check_with(text, Options::new().iter_limit(2));
}

/// [`optimize_and_check`] under `opts` (a small budget keeps the debug-build run
/// short; the chain must still get through lowering, extraction, emission and
/// packing).
fn optimize_and_check_with(text: String, opts: Options) {
    on_small_stack(move || {
        let input = parse(&text, None).expect("chain parses");
        let out = optimize(&input, &opts).expect("optimize succeeds");
        let printed = print(&out.pipeline);
        let reparsed = parse(&printed, None).expect("output reparses");
        assert!(print(&reparsed) == printed, "printing round-trips");
        let config = EquivConfig {
            runs: 2,
            ..EquivConfig::default()
        };
        check_equivalent(&input, &out.pipeline, &config).expect("same behaviour");
        let config = RunConfig {
            max_primitives: 1,
            fragments_per_primitive: 1,
            ..RunConfig::default()
        };
        run(&out.pipeline, &config).expect("interpreter runs the chain");
    });
}

#[test]
fn producer_dependency_chain_optimizes_on_a_small_stack() {
    optimize_and_check(producer_chain(LINKS));
}

/// The branch-and-bound decides one key per class of the chain: its search stack is
/// as deep as the chain is long.
#[test]
fn exact_extraction_of_a_chain_runs_on_a_small_stack() {
    let exact = Extraction::Exact {
        time_limit: std::time::Duration::from_millis(500),
    };
    let opts = Options::new().iter_limit(1).extraction(exact);
    optimize_and_check_with(producer_chain(LINKS), opts);
}

/// A pair whose VS stores `VAR0.x` under `levels` nested `if`s. Only code can build
/// it: the `.pair` reader refuses lists nested that deep.
fn nested_ifs(levels: usize) -> varysat::Pipeline {
    let mut p = parse(
        "(pair (producer vs (%a = load_input ATTR0.x) (%z = const 32 0.0)
           (%c = flt %z %a) (store_output VAR0.x %a))
         (consumer fs (%v = load_interpolated_input VAR0.x persp center)
           (store_output DATA0.x %v)))",
        None,
    )
    .expect("parses");
    let body = &mut p.producer.body;
    let store = body.pop().expect("a store");
    let cond = match &body[2] {
        Stmt::Inst(i) => i.result.expect("flt has a result"),
        other => panic!("expected the flt, found {other:?}"),
    };
    let mut block = vec![store];
    for _ in 0..levels {
        block = vec![Stmt::If {
            cond,
            then_body: block,
            else_body: vec![],
            phis: vec![],
            loc: None,
        }];
    }
    body.extend(block);
    p
}

/// Takes `p`'s producer apart level by level: dropping 3,000 nested blocks at once
/// would itself recurse once per level.
fn dismantle(mut p: varysat::Pipeline) {
    let mut block = std::mem::take(&mut p.producer.body);
    while let Some(stmt) = block.pop() {
        if let Stmt::If {
            then_body,
            else_body,
            ..
        } = stmt
        {
            block.extend(then_body);
            block.extend(else_body);
        }
    }
}

#[test]
fn nesting_beyond_the_limit_is_refused_before_anything_recurses() {
    let p = nested_ifs(3_000);
    let (p, validated, ran, optimized) = on_small_stack(move || {
        // Validation walks without recursion and accepts any depth.
        let validated = varysat::validate::validate(&p);
        let ran = run(&p, &RunConfig::default())
            .map(|_| ())
            .map_err(|e| e.to_string());
        let optimized = optimize(&p, &Options::new())
            .map(|_| ())
            .map_err(|e| e.to_string());
        (p, validated, ran, optimized)
    });
    validated.expect("valid at any depth");
    let limit = format!("nest more than {MAX_NESTING} deep");
    for result in [ran, optimized] {
        let msg = result.expect_err("refused");
        assert!(msg.contains(&limit), "{msg}");
    }
    dismantle(p);
    // At the limit itself the pair is valid and runs.
    let ok = nested_ifs(MAX_NESTING);
    varysat::validate::validate(&ok).expect("valid at the limit");
    run(&ok, &RunConfig::default()).expect("runs at the limit");
    optimize(&ok, &Options::new()).expect("optimizes at the limit");
    let over = nested_ifs(MAX_NESTING + 1);
    assert!(run(&over, &RunConfig::default()).is_err());
}

#[test]
fn consumer_dependency_chain_optimizes_on_a_small_stack() {
    optimize_and_check(consumer_chain(LINKS));
}

#[test]
fn gs_per_emit_chains_optimize_on_a_small_stack() {
    optimize_and_check(gs_chains(LINKS / 2));
}

/// 50,000 `(` must be refused with a location, not abort on the reader's recursion.
#[test]
fn deeply_nested_rule_file_is_an_error() {
    let text = "(".repeat(50_000);
    let err = on_small_stack(move || RuleSet::parse("deep.rules", &text).map(|_| ()));
    let msg = err.expect_err("too deep").to_string();
    assert!(msg.starts_with("deep.rules:1:"), "{msg}");
    assert!(msg.contains("nested"), "{msg}");
}

#[test]
fn deeply_nested_cost_file_is_an_error() {
    let text = "(".repeat(50_000);
    let err = on_small_stack(move || CostModel::parse("deep.cost", &text).map(|_| ()));
    let msg = match err {
        Err(e @ Error::Profile(_)) => e.to_string(),
        other => panic!("expected a profile error, got {other:?}"),
    };
    assert!(msg.starts_with("deep.cost:1:"), "{msg}");
    assert!(msg.contains("nested"), "{msg}");
}
