//! The model cost the report gives for the input ("cost before") prices the work the
//! input does, whatever form the pre-pass finds it in.

use varysat::{optimize, Options};

/// A GS emitting from a counted loop, as glslang writes `for (i = 0; i < 3; i++)`.
const LOOPED: &str = "(pair
  (producer gs (input triangles) (output triangle_strip) (max_vertices 3)
    (%k0 = const 32 0) (%k1 = const 32 1) (%k3 = const 32 3) (%two = const 32 2.0)
    (%a = load_per_vertex_input VAR0.x %k0)
    (%b = load_per_vertex_input VAR0.y %k0)
    (loop (%i = phi %k0)
      (%done = ige %i %k3)
      (if %done (then (break)) (else))
      (%f = i2f32 %i)
      (%s = fmul %a %f)
      (%t = fmul %b %two)
      (store_output POS.x %a)
      (store_output VAR0.x %s)
      (store_output VAR1.x %t)
      (emit_vertex)
      (%next = iadd %i %k1)
      (continue %next)))
  (consumer fs
    (%x = load_interpolated_input VAR0.x persp center)
    (%y = load_interpolated_input VAR1.x persp center)
    (%s = fadd %x %y)
    (store_output DATA0.x %s)))";

/// The same GS with its three iterations written out.
const WRITTEN_OUT: &str = "(pair
  (producer gs (input triangles) (output triangle_strip) (max_vertices 3)
    (%k0 = const 32 0) (%k1 = const 32 1) (%k2 = const 32 2) (%two = const 32 2.0)
    (%a = load_per_vertex_input VAR0.x %k0)
    (%b = load_per_vertex_input VAR0.y %k0)
    (%f0 = i2f32 %k0) (%s0 = fmul %a %f0) (%t0 = fmul %b %two)
    (store_output POS.x %a) (store_output VAR0.x %s0) (store_output VAR1.x %t0)
    (emit_vertex)
    (%f1 = i2f32 %k1) (%s1 = fmul %a %f1) (%t1 = fmul %b %two)
    (store_output POS.x %a) (store_output VAR0.x %s1) (store_output VAR1.x %t1)
    (emit_vertex)
    (%f2 = i2f32 %k2) (%s2 = fmul %a %f2) (%t2 = fmul %b %two)
    (store_output POS.x %a) (store_output VAR0.x %s2) (store_output VAR1.x %t2)
    (emit_vertex))
  (consumer fs
    (%x = load_interpolated_input VAR0.x persp center)
    (%y = load_interpolated_input VAR1.x persp center)
    (%s = fadd %x %y)
    (store_output DATA0.x %s)))";

fn report(text: &str) -> varysat::optimize::Report {
    let p = varysat::text::parse(text, None).expect("test pair parses");
    optimize(&p, &Options::new())
        .expect("optimize succeeds")
        .report
}

/// `pair` with a product by zero in its FS, which the pre-pass folds.
fn with_zero_product(pair: &str) -> String {
    let fs = "(store_output DATA0.x %s)))";
    let folded = "(%zero = const 32 0.0) (%p = fmul %x %zero) (store_output DATA0.y %p)";
    pair.replace(fs, &format!("{folded} {fs}"))
}

#[test]
fn a_counted_loop_is_priced_as_the_iterations_it_runs() {
    // Without the zero product the pre-pass only unrolls the loop, and the rounds'
    // price of the pre-passed pair stands; with it, the input is priced on its own.
    for (looped, written_out) in [
        (LOOPED.to_string(), WRITTEN_OUT.to_string()),
        (with_zero_product(LOOPED), with_zero_product(WRITTEN_OUT)),
    ] {
        let (looped, written_out) = (report(&looped), report(&written_out));
        // Lowering pins a loop's stores and sees none of its work: priced as written,
        // the looped GS cost nothing and the report showed the optimizer adding cost.
        assert!(looped.cost_before.0 > 0, "{looped}");
        assert_eq!(
            looped.cost_before, written_out.cost_before,
            "{looped}\n{written_out}"
        );
        assert!(looped.cost_after <= looped.cost_before, "{looped}");
    }
    let plain = report(LOOPED).cost_before;
    let zero_product = report(&with_zero_product(LOOPED)).cost_before;
    assert!(
        zero_product > plain,
        "the product by zero is priced: {zero_product:?} vs {plain:?}"
    );
}
