//! Resource visibility: the `.pair` declarations that limit a uniform block or UBO to
//! one stage, the validator that enforces them, and the optimizer option that
//! overrides them (`--assume-visible`).

use varysat::interpreter::{check_equivalent, EquivConfig};
use varysat::ir::{Reader, Visibility};
use varysat::{optimize, Options};

const HIDDEN: &str = "(pair
  (uniforms 1 (visible producer))
  (ubo 2 16 (visible consumer))
  (producer vs
    (%p = load_input ATTR0.x)
    (%u = load_uniform 0)
    (store_output POS.x %p)
    (store_output VAR0.x %u))
  (consumer fs
    (%x = load_interpolated_input VAR0.x persp center)
    (%k = const 32 0)
    (%c = load_ubo 2 %k)
    (%m = fmul %x %c)
    (store_output DATA0.x %m)))
";

#[test]
fn declarations_round_trip() {
    let p = varysat::text::parse(HIDDEN, None).expect("parses");
    assert_eq!(p.visibility.uniforms, Some(Reader::Producer));
    assert_eq!(p.visibility.ubos.get(&2), Some(&Reader::Consumer));
    let printed = varysat::text::print(&p);
    assert!(
        printed.contains("(uniforms 1 (visible producer))"),
        "{printed}"
    );
    assert!(
        printed.contains("(ubo 2 16 (visible consumer))"),
        "{printed}"
    );
    let back = varysat::text::parse(&printed, None).expect("reparses");
    assert_eq!(back.visibility, p.visibility);
    // Naming both stages is the default.
    let both = HIDDEN.replace("(visible producer)", "(visible consumer producer)");
    let p = varysat::text::parse(&both, None).expect("parses");
    assert_eq!(p.visibility.uniforms, None);
}

#[test]
fn an_empty_visible_list_is_an_error() {
    let bad = HIDDEN.replace("(visible producer)", "(visible)");
    let err = varysat::text::parse(&bad, Some("v.pair"))
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("v.pair:2:15: error:"), "{err}");
    assert!(err.contains("names no stage"), "{err}");
}

#[test]
fn loading_a_resource_the_stage_cannot_see_is_invalid() {
    let bad = HIDDEN.replace("(%c = load_ubo 2 %k)", "(%c = load_uniform 0)");
    let p = varysat::text::parse(&bad, Some("v.pair")).expect("parses");
    let err = varysat::validate::validate(&p).unwrap_err().to_string();
    assert!(err.contains("not visible to the consumer"), "{err}");
    let bad = HIDDEN.replace("(%u = load_uniform 0)", "(%u = load_ubo 2 %p)");
    let p = varysat::text::parse(&bad, Some("v.pair")).expect("parses");
    let err = varysat::validate::validate(&p).unwrap_err().to_string();
    assert!(
        err.contains("UBO block 2 is not visible to the producer"),
        "{err}"
    );
}

#[test]
fn hidden_resources_never_cross_and_assume_visible_lets_them() {
    let p = varysat::text::parse(HIDDEN, None).expect("parses");
    let kept = optimize(&p, &Options::new()).expect("optimizes");
    assert_eq!(kept.report.after.components, 1, "{}", kept.report);
    assert!(kept.report.fallback.is_none(), "{}", kept.report);
    // The uniform stays in the VS and the UBO load in the FS.
    let text = varysat::text::print(&kept.pipeline);
    let (vs, fs) = text.split_once("(consumer").expect("two shaders");
    assert!(
        vs.contains("load_uniform") && !vs.contains("load_ubo"),
        "{text}"
    );
    assert!(
        fs.contains("load_ubo") && !fs.contains("load_uniform"),
        "{text}"
    );
    check_equivalent(&p, &kept.pipeline, &EquivConfig::default()).expect("equivalent");

    let free = optimize(&p, &Options::new().assume_visible(true)).expect("optimizes");
    assert_eq!(free.report.after.components, 0, "{}", free.report);
    assert_eq!(free.pipeline.visibility, Visibility::default());
    varysat::validate::validate(&free.pipeline).expect("the output declares them visible");
    check_equivalent(&p, &free.pipeline, &EquivConfig::default()).expect("equivalent");
}
