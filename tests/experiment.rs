//! The experiment library on a tiny hand-written corpus: configurations differ in the
//! expected direction, the rule statistics and ablation name the responsible rules,
//! and the table / CSV / JSON / SVG outputs have their documented shapes.

use std::path::{Path, PathBuf};

use varysat::experiment::{
    self, csv, json, load_corpus, load_rules, matrix, run::rule_of, summary::quantile, Experiment,
    RunOptions,
};
use varysat::internals::extract::CostModel;

/// VAR1.x is the constant 0.5, used by a non-linear op (fmax) so that only
/// propagation, not interpolation-linear code motion, can remove it.
const CONST_PAIR: &str = "(pair
  (producer vs
    (topology triangles)
    (%p = load_input ATTR0.x)
    (%c = const 32 0.5)
    (store_output POS.x %p)
    (store_output VAR0.x %p)
    (store_output VAR1.x %c))
  (consumer fs
    (provoking first)
    (%x = load_interpolated_input VAR0.x persp center)
    (%c = load_interpolated_input VAR1.x persp center)
    (%s = fmax %x %c)
    (store_output DATA0.x %s)))
";

/// VAR0.x = a*b and VAR1.x = (b*1)*a: one varying only modulo the `fmul-one` identity
/// (algebra.rules; the e-graph itself already equates b*a with a*b). The identity sits
/// inside the product, so moving the multiply by one into the FS would need `a` and `b`
/// as two varyings: only the identity can merge the two varyings. (An outer `*1` no
/// longer works here: under the calibrated costs it moves into the FS instead.)
const IDENTITY_PAIR: &str = "(pair
  (producer vs
    (topology triangles)
    (%a = load_input ATTR0.x)
    (%b = load_input ATTR1.x)
    (%one = const 32 1.0)
    (%ab = fmul %a %b)
    (%b1 = fmul %b %one)
    (%ba1 = fmul %b1 %a)
    (store_output POS.x %a)
    (store_output VAR0.x %ab)
    (store_output VAR1.x %ba1))
  (consumer fs
    (provoking first)
    (%x = load_interpolated_input VAR0.x persp center)
    (%y = load_interpolated_input VAR1.x persp center)
    (%s = fmul %x %y)
    (store_output DATA0.x %s)))
";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn corpus_dir(tag: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("varysat-exp-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("const.pair"), CONST_PAIR).unwrap();
    std::fs::write(dir.join("sub/identity.pair"), IDENTITY_PAIR).unwrap();
    std::fs::write(dir.join("notes.txt"), "not a pair").unwrap();
    dir
}

fn variant(name: &str) -> String {
    root()
        .join("rules/experiments")
        .join(name)
        .display()
        .to_string()
}

/// default, no-propagation, no-algebra, each with amd-gfx10.
fn experiment(tag: &str, ablate: bool) -> Experiment {
    let dir = corpus_dir(tag);
    let sets = [
        "default".to_string(),
        variant("no-propagation.rules"),
        variant("no-algebra.rules"),
    ]
    .iter()
    .map(|s| load_rules(s).unwrap())
    .collect();
    let configs = matrix(sets, &[CostModel::amd_gfx10()]);
    let corpus = load_corpus(&[dir]).unwrap();
    let runs = experiment::run_matrix(
        &configs,
        &corpus,
        RunOptions {
            ablate,
            ..RunOptions::default()
        },
        &|| {},
    );
    experiment::summarize(&configs, &corpus, runs)
}

fn components_after(e: &Experiment, config: &str, pair_suffix: &str) -> usize {
    let ci = e.configs.iter().position(|c| c == config).unwrap();
    let pi = e
        .pairs
        .iter()
        .position(|p| p.ends_with(pair_suffix))
        .unwrap();
    let r = e
        .runs
        .iter()
        .find(|r| r.config == ci && r.pair == pi)
        .unwrap();
    r.after.components
}

#[test]
fn corpus_is_sorted_pair_files_only() {
    let dir = corpus_dir("corpus");
    let c = load_corpus(std::slice::from_ref(&dir)).unwrap();
    let names: Vec<String> = c.iter().map(|p| p.name.clone()).collect();
    let want = [
        dir.join("const.pair").display().to_string(),
        dir.join("sub/identity.pair").display().to_string(),
    ];
    assert_eq!(names, want);
    assert_eq!(c[0].stage_pair(), "vs-fs");
}

#[test]
fn configurations_differ_in_the_expected_direction() {
    let e = experiment("direction", false);
    assert_eq!(
        e.configs,
        [
            "default/amd-gfx10",
            "no-propagation/amd-gfx10",
            "no-algebra/amd-gfx10"
        ]
    );
    // Both pairs start with VAR0.x and VAR1.x read.
    assert!(e.runs.iter().all(|r| r.before.components == 2));
    // The constant is propagated by default and stays a varying without propagation.
    assert_eq!(components_after(&e, "default/amd-gfx10", "const.pair"), 1);
    assert_eq!(
        components_after(&e, "no-propagation/amd-gfx10", "const.pair"),
        2
    );
    // a*b and (b*a)*1 share a varying only with the algebra rules.
    assert_eq!(
        components_after(&e, "default/amd-gfx10", "identity.pair"),
        1
    );
    assert_eq!(
        components_after(&e, "no-algebra/amd-gfx10", "identity.pair"),
        2
    );
    let default = &e.summaries[0];
    assert_eq!(default.totals.components, (4, 2));
    assert_eq!(default.optimized, 2);
    assert_eq!(default.failed, 0);
    assert_eq!(default.per_stage_pair.keys().collect::<Vec<_>>(), ["vs-fs"]);
    assert_eq!(e.summaries[1].totals.components, (4, 3));
    // Each pair differs by one component between the best and worst configuration.
    assert_eq!(e.spreads.len(), 2);
    assert!(e.spreads.iter().all(|s| s.spread == 1));
}

#[test]
fn firing_counts_and_ablation_name_the_responsible_rules() {
    let e = experiment("ablate", true);
    let default = &e.summaries[0];
    // Propagation also fires on the identity pair (forward motion transfers the
    // constant 1 there), without changing its result.
    assert!(default
        .fired_on
        .get("propagate-free")
        .is_some_and(|n| *n >= 1));
    assert!(default.fired_on.get("fmul-one").is_some_and(|n| *n >= 1));
    let changed = default.changed_result.as_ref().unwrap();
    assert_eq!(changed.get("propagate-free"), Some(&1));
    assert_eq!(changed.get("fmul-one"), Some(&1));
    // Without propagation the rule never fires, so it cannot have changed anything.
    assert_eq!(e.summaries[1].firings.get("propagate-free"), None);
    let ci = 0;
    let pi = e
        .pairs
        .iter()
        .position(|p| p.ends_with("const.pair"))
        .unwrap();
    let run = e
        .runs
        .iter()
        .find(|r| r.config == ci && r.pair == pi)
        .unwrap();
    assert_eq!(
        run.changed_by.as_deref(),
        Some(&["propagate-free".to_string()][..])
    );
}

#[test]
fn rewrite_variants_fold_into_their_rule() {
    assert_eq!(rule_of("fmul-one"), "fmul-one");
    assert_eq!(rule_of("fmul-one.exact"), "fmul-one");
    assert_eq!(rule_of("x.rev"), "x");
    assert_eq!(rule_of("x.exact.rev"), "x");
}

#[test]
fn quantiles_use_the_nearest_rank() {
    use std::time::Duration;
    let d: Vec<Duration> = (1..=10).map(Duration::from_millis).collect();
    assert_eq!(quantile(&d, 0.5), Duration::from_millis(5));
    assert_eq!(quantile(&d, 0.9), Duration::from_millis(9));
    assert_eq!(quantile(&d, 0.99), Duration::from_millis(10));
    assert_eq!(quantile(&[], 0.5), Duration::ZERO);
}

#[test]
fn table_csv_and_json_shapes() {
    let e = experiment("shapes", false);
    let table = experiment::table::table(&e);
    assert!(table.starts_with("2 pairs x 3 configurations\n"));
    for c in &e.configs {
        assert!(table.contains(c.as_str()), "{c} missing:\n{table}");
    }
    assert!(table.contains("pairs where configurations differ most"));

    let text = csv::to_csv(&e, false);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1 + 3 * 2);
    let header = csv::header(false);
    assert_eq!(lines[0], header.join(","));
    assert!(!lines[0].contains("time_ms"));
    for l in &lines[1..] {
        assert_eq!(l.split(',').count(), header.len(), "{l}");
    }
    assert_eq!(
        csv::to_csv(&e, true)
            .lines()
            .next()
            .unwrap()
            .split(',')
            .next_back(),
        Some("time_ms")
    );
    assert_eq!(csv::field("a,b"), "\"a,b\"");
    assert_eq!(csv::field("say \"x\""), "\"say \"\"x\"\"\"");

    let j = json::to_json(&e, false);
    assert_eq!(j["configurations"].as_array().unwrap().len(), 3);
    assert_eq!(j["runs"].as_array().unwrap().len(), 6);
    assert_eq!(j["configurations"][0]["totals"]["components"]["after"], 2);
    assert!(!j.to_string().contains("time_ms"));
    assert!(json::to_json(&e, true)["configurations"][0]["time_ms"]["median"].is_number());
}

#[test]
fn output_without_times_is_deterministic() {
    let a = experiment("det-a", false);
    let b = experiment("det-b", false);
    let strip = |e: &Experiment| {
        json::to_json(e, false)
            .to_string()
            .replace("det-a", "det-b")
    };
    assert_eq!(strip(&a), strip(&b));
}

#[test]
fn svg_chart_names_every_configuration() {
    let e = experiment("svg", false);
    let svg = experiment::chart::svg_chart(&e).unwrap();
    assert!(svg.starts_with("<svg"));
    for c in &e.configs {
        assert!(svg.contains(c.as_str()), "{c}");
    }
}

#[test]
fn every_shipped_variant_parses() {
    let dir = root().join("rules/experiments");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|x| x == "rules") {
            let (name, set) = load_rules(&p.display().to_string()).unwrap();
            assert_eq!(Some(name.as_str()), p.file_stem().and_then(|s| s.to_str()));
            assert!(!set.rules().is_empty());
            n += 1;
        }
    }
    assert!(n >= 7);
}

/// `(name, lhs, rhs, conditions, bidirectional, inexact)` of every rule, as text.
type RuleText = (String, String, String, String, bool, bool);

fn rule_texts(spec: &str) -> Vec<RuleText> {
    let (_, set) = load_rules(spec).unwrap();
    set.rules()
        .iter()
        .map(|r| {
            (
                r.name.clone(),
                r.lhs.to_string(),
                r.rhs.to_string(),
                format!("{:?}", r.conds),
                r.bidirectional,
                r.inexact,
            )
        })
        .collect()
}

/// The derivations `rules/experiments/README.md` states, checked rule by rule against
/// the compiled-in default set.
#[test]
fn motion_variants_are_derived_from_the_default_set() {
    let default = rule_texts("default");
    let motion: Vec<&RuleText> = default.iter().filter(|r| r.4).collect();
    // Every bidirectional law is a code-motion law (flat, interp, tess).
    assert!(motion.iter().all(|r| ["flat-", "interp-", "tes-"]
        .iter()
        .any(|p| r.0.starts_with(p))));

    // no-promotion: the default set minus `promote-convergent`, otherwise identical.
    let no_promotion = rule_texts(&variant("no-promotion.rules"));
    let want: Vec<RuleText> = default
        .iter()
        .filter(|r| r.0 != "promote-convergent")
        .cloned()
        .collect();
    assert_eq!(no_promotion, want);
    assert_eq!(no_promotion.len() + 1, default.len());

    // no-forward: the default set with every law read left to right only.
    let no_forward = rule_texts(&variant("no-forward.rules"));
    let want: Vec<RuleText> = default
        .iter()
        .map(|r| {
            (
                r.0.clone(),
                r.1.clone(),
                r.2.clone(),
                r.3.clone(),
                false,
                r.5,
            )
        })
        .collect();
    assert_eq!(no_forward, want);

    // no-backward: one-way rules unchanged, each bidirectional law replaced by its
    // right-to-left reading, named NAME-fwd.
    let no_backward = rule_texts(&variant("no-backward.rules"));
    let one_way_backward = ["tes-interp-fmul-uc", "tes-interp-rot-fmul-uc"];
    let want: Vec<RuleText> = default
        .iter()
        .filter(|r| !one_way_backward.contains(&r.0.as_str()))
        .map(|r| {
            if r.4 {
                (
                    format!("{}-fwd", r.0),
                    r.2.clone(),
                    r.1.clone(),
                    r.3.clone(),
                    false,
                    r.5,
                )
            } else {
                r.clone()
            }
        })
        .collect();
    assert_eq!(no_backward, want);

    // mesa-like: nothing bidirectional, no promotion, no TES laws, no per-emit
    // collapsing, no inexact algebra; the flat laws only on `flat` transfers.
    let mesa = rule_texts(&variant("mesa-like.rules"));
    assert!(mesa.iter().all(|r| !r.4));
    for gone in [
        "promote-convergent",
        "per-emit-same",
        "fadd-zero",
        "ffma-unfuse",
    ] {
        assert!(mesa.iter().all(|r| r.0 != gone), "{gone}");
    }
    assert!(mesa.iter().all(|r| !r.0.starts_with("tes-")));
    let flat: Vec<&RuleText> = mesa.iter().filter(|r| r.0.starts_with("flat-")).collect();
    assert_eq!(
        flat.len(),
        default.iter().filter(|r| r.0.starts_with("flat-")).count()
    );
    assert!(flat
        .iter()
        .all(|r| r.1.contains("(xfer flat") && !r.1.contains("?m") && !r.3.contains("Uninterp")));
}

/// The other variants' headers, checked rule by rule against the default set:
/// no-propagation and no-algebra remove rules, no-uniform-propagation replaces
/// `propagate-free` in place.
#[test]
fn removal_variants_are_derived_from_the_default_set() {
    let default = rule_texts("default");
    let without = |gone: &dyn Fn(&RuleText) -> bool| -> Vec<RuleText> {
        default.iter().filter(|r| !gone(r)).cloned().collect()
    };
    assert_eq!(
        rule_texts(&variant("no-propagation.rules")),
        without(&|r| r.0 == "propagate-free")
    );
    let algebra: Vec<String> =
        rule_texts(&root().join("rules/algebra.rules").display().to_string())
            .into_iter()
            .map(|r| r.0)
            .collect();
    assert!(algebra.len() > 10);
    assert_eq!(
        rule_texts(&variant("no-algebra.rules")),
        without(&|r| algebra.contains(&r.0))
    );
    let constants = rule_texts(&variant("no-uniform-propagation.rules"));
    let names: Vec<&str> = constants.iter().map(|r| r.0.as_str()).collect();
    let at = default
        .iter()
        .position(|r| r.0 == "propagate-free")
        .unwrap();
    assert_eq!(
        names[at..at + 3],
        ["propagate-const", "propagate-undef32", "propagate-undef16"]
    );
    let mut rest = constants.clone();
    rest.drain(at..at + 3);
    assert_eq!(rest, without(&|r| r.0 == "propagate-free"));
}

#[test]
fn a_minus_part_leaves_a_rule_out() {
    let (name, set) = load_rules("default,-propagate-free").unwrap();
    assert_eq!(name, "default+without-propagate-free");
    let (_, variant_set) = load_rules(&variant("no-propagation.rules")).unwrap();
    assert_eq!(set.names(), variant_set.names());
    assert!(load_rules("default,-nope").is_err());
}

/// FS `in0*u + in1` with a uniform u: only backward motion (computing the sum in the
/// VS) merges the two interpolated inputs.
const BACKWARD_PAIR: &str = "(pair
  (uniforms 1)
  (producer vs
    (topology triangles)
    (%a = load_input ATTR0.x)
    (%b = load_input ATTR1.x)
    (store_output POS.x %a)
    (store_output VAR0.x %a)
    (store_output VAR1.x %b))
  (consumer fs
    (provoking first)
    (%x = load_interpolated_input VAR0.x persp center)
    (%y = load_interpolated_input VAR1.x persp center)
    (%u = load_uniform 0)
    (%m = fmul %x %u)
    (%s = fadd %m %y)
    (store_output DATA0.x %s)))
";

/// VS -> TES: the VS stores v and four functions of it, which the TES only passes
/// on. Nothing in the TES combines inputs, so only forward motion (the TES recomputing
/// the four from v) saves varyings: 5 components become 1.
const FORWARD_PAIR: &str = "(pair
  (producer vs
    (topology triangles)
    (%p = load_input ATTR0.x)
    (%vid = load_system_value vertex_id)
    (%v = i2f32 %vid)
    (%c1 = const 32 1.0)
    (%c2 = const 32 2.0)
    (%c3 = const 32 3.0)
    (%c4 = const 32 4.0)
    (%a = fadd %v %c1)
    (%b = fmul %v %c2)
    (%c = fadd %v %c3)
    (%d = fmul %v %c4)
    (store_output POS.x %p)
    (store_output VAR0.x %v)
    (store_output VAR0.y %a)
    (store_output VAR0.z %b)
    (store_output VAR0.w %c)
    (store_output VAR1.x %d))
  (consumer tes
    (domain triangles)
    (input_vertices 3)
    (%k0 = const 32 0)
    (%v = load_per_vertex_input VAR0.x %k0)
    (%a = load_per_vertex_input VAR0.y %k0)
    (%b = load_per_vertex_input VAR0.z %k0)
    (%c = load_per_vertex_input VAR0.w %k0)
    (%d = load_per_vertex_input VAR1.x %k0)
    (store_output POS.x %v)
    (store_output VAR0.x %a)
    (store_output VAR0.y %b)
    (store_output VAR0.z %c)
    (store_output VAR0.w %d)))
";

/// The FS multiplies an interpolated input by an interpolated float(instance id),
/// which is the same at every vertex. A product of two interpolated values never
/// moves; once the second is known convergent (promoted to flat by default, taken as
/// a convergent factor by mesa-like) the product moves into the VS: one varying.
const PROMOTE_PAIR: &str = "(pair
  (producer vs
    (topology triangles)
    (%a = load_input ATTR0.x)
    (%inst = load_system_value instance_id)
    (%c = i2f32 %inst)
    (store_output POS.x %a)
    (store_output VAR0.x %a)
    (store_output VAR1.x %c))
  (consumer fs
    (provoking first)
    (%x = load_interpolated_input VAR0.x persp center)
    (%y = load_interpolated_input VAR1.x persp center)
    (%s = fmul %x %y)
    (store_output DATA0.x %s)))
";

#[test]
fn motion_variants_differ_where_only_their_law_helps() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("varysat-exp-motion-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("backward.pair"), BACKWARD_PAIR).unwrap();
    std::fs::write(dir.join("forward.pair"), FORWARD_PAIR).unwrap();
    std::fs::write(dir.join("promote.pair"), PROMOTE_PAIR).unwrap();
    let names = [
        "no-forward.rules",
        "no-backward.rules",
        "no-promotion.rules",
        "mesa-like.rules",
    ];
    let mut sets = vec![load_rules("default").unwrap()];
    sets.extend(names.iter().map(|n| load_rules(&variant(n)).unwrap()));
    let configs = matrix(sets, &[CostModel::amd_gfx10()]);
    let corpus = load_corpus(&[dir]).unwrap();
    let ro = RunOptions::default();
    let e = experiment::summarize(
        &configs,
        &corpus,
        experiment::run_matrix(&configs, &corpus, ro, &|| {}),
    );
    let before = |pair: &str| {
        let pi = e.pairs.iter().position(|p| p.ends_with(pair)).unwrap();
        e.runs
            .iter()
            .find(|r| r.pair == pi)
            .unwrap()
            .before
            .components
    };
    assert_eq!(before("backward.pair"), 2);
    // Four VARn components and the VS's POS, plain (dead) data before a TES.
    assert_eq!(before("forward.pair"), 6);
    assert_eq!(before("promote.pair"), 2);
    // (configuration, backward.pair, forward.pair, promote.pair) components after.
    let want = [
        ("default", 1, 1, 1),
        ("no-forward", 1, 5, 1),
        // Promotion alone changes the mode, not the count: moving the product is
        // backward motion.
        ("no-backward", 2, 1, 2),
        ("no-promotion", 1, 1, 2),
        // Backward only, FS consumers only: the TES pair keeps its 5.
        ("mesa-like", 1, 5, 1),
    ];
    for (config, b, f, p) in want {
        let c = format!("{config}/amd-gfx10");
        assert_eq!(
            (
                components_after(&e, &c, "backward.pair"),
                components_after(&e, &c, "forward.pair"),
                components_after(&e, &c, "promote.pair"),
            ),
            (b, f, p),
            "{config}"
        );
    }
}

#[test]
fn rule_specs_combine_and_report_errors_with_positions() {
    let (name, set) = load_rules(&format!(
        "{},{}",
        root().join("rules/propagate.rules").display(),
        root().join("rules/dedup.rules").display()
    ))
    .unwrap();
    assert_eq!(name, "propagate+dedup");
    assert!(set.names().contains(&"propagate-free"));
    assert!(set.names().contains(&"bcsel-same"));
    assert!(load_rules("default,default").is_err());

    let bad = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("varysat-exp-bad-{}.rules", std::process::id()));
    std::fs::write(&bad, "\n  (rule r (fadd ?x) ?x)").unwrap();
    let msg = load_rules(&bad.display().to_string())
        .unwrap_err()
        .to_string();
    assert!(
        msg.starts_with(&format!("{}:2:11: error:", bad.display())),
        "{msg}"
    );
    assert!(load_rules("/nonexistent/x.rules").is_err());
}

#[test]
fn duplicate_rule_set_names_get_distinct_labels() {
    let a = load_rules("default").unwrap();
    let b = load_rules("default").unwrap();
    let cs = matrix(
        vec![a, b],
        &[CostModel::amd_gfx10(), CostModel::amd_gfx11()],
    );
    let labels: Vec<String> = cs.iter().map(|c| c.label()).collect();
    assert_eq!(
        labels,
        [
            "default/amd-gfx10",
            "default/amd-gfx11",
            "default#2/amd-gfx10",
            "default#2/amd-gfx11"
        ]
    );
}

#[test]
fn a_missing_corpus_path_is_an_error() {
    assert!(load_corpus(&[Path::new("/nonexistent/corpus").to_path_buf()]).is_err());
}

#[test]
fn exact_gap_is_never_negative_and_counts_every_pair() {
    let dir = corpus_dir("exact");
    let configs = matrix(
        vec![load_rules("default").unwrap()],
        &[CostModel::amd_gfx10()],
    );
    let corpus = load_corpus(&[dir]).unwrap();
    let ro = RunOptions {
        exact_gap: Some(std::time::Duration::from_secs(5)),
        ..RunOptions::default()
    };
    let e = experiment::summarize(
        &configs,
        &corpus,
        experiment::run_matrix(&configs, &corpus, ro, &|| {}),
    );
    let (gap, cheaper, proved, n) = e.summaries[0].exact_gap.unwrap();
    // The exact optimum is never worse than the fast mode's cost.
    assert!(gap >= 0);
    assert_eq!(n, 2);
    assert!(cheaper <= n);
    // Two-varying pairs are far inside the time limit.
    assert_eq!(proved, 2);
    assert!(experiment::table::table(&e).contains("extraction gap to the exact mode"));
    // Without the option the summary has no gap.
    assert!(experiment("no-exact", false).summaries[0]
        .exact_gap
        .is_none());
}
