//! Rules are type-checked when they load: the four ill-typed rules of issue 13 are
//! refused with the offending rule's `file:line:col`, by the library and by `opt`,
//! and every shipped rule passes.

mod cli_support;

use cli_support::{stderr, temp_file, varysat};
use varysat::internals::egraph::RuleSet;

/// (rule text, what the error must say).
const ILL_TYPED: &[(&str, &str)] = &[
    // A 16-bit constant replacing a 32-bit value.
    (
        "(rule narrow (fmul ?a 0f32) 0f16)",
        "the left-hand side is a 32-bit value but the right-hand side is a 16-bit value",
    ),
    // An interpolation mode used as a value.
    (
        "(rule mode-value (xfer ?m ?a) (fadd ?m ?a))",
        "?m is used both as an xfer mode and as a value",
    ),
    // A 1-bit value sent through a varying.
    (
        "(rule bool-varying (flt ?a ?b) (xfer flat (flt ?a ?b)))",
        "a 1-bit value cannot cross a varying",
    ),
    // A uniform leaf the match does not have.
    (
        "(rule far-uniform (fadd ?a uniform:0) (fadd ?a uniform:4000000))",
        "reads `uniform:4000000`",
    ),
];

#[test]
fn ill_typed_rules_are_refused_with_their_location() {
    for (rule, expect) in ILL_TYPED {
        // Two lines of comment first, so the location is not trivially 1:1.
        let text = format!("; a user rule\n; another line\n  {rule}\n");
        let err = RuleSet::parse("mine.rules", &text)
            .map(|_| ())
            .expect_err(rule)
            .to_string();
        assert!(err.starts_with("mine.rules:3:3: error: rule `"), "{err}");
        assert!(err.contains(expect), "{rule}: {err}");
    }
}

#[test]
fn opt_refuses_ill_typed_rule_files() {
    for (i, (rule, expect)) in ILL_TYPED.iter().enumerate() {
        let path = temp_file(
            "rules-typed",
            &format!("bad{i}.rules"),
            &format!("{rule}\n"),
        );
        let path = path.to_str().unwrap();
        for rules in [path.to_string(), format!("+{path}")] {
            let o = varysat(&["opt", "--rules", &rules, "examples/pairs/vs_fs_fma.pair"]);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(1), "{err}");
            assert!(err.starts_with(&format!("{path}:1:1: error:")), "{err}");
            assert!(err.contains(expect), "{err}");
        }
    }
}

#[test]
fn the_shipped_rules_type_check() {
    // `default_set` panics on a shipped rule that fails to load; load them as user
    // files instead, so a failure names the rule.
    for (file, text) in varysat::internals::egraph::rules::DEFAULT_RULE_FILES {
        RuleSet::parse(file, text).unwrap_or_else(|e| panic!("{e}"));
    }
    for entry in std::fs::read_dir("rules/experiments").unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rules") {
            let text = std::fs::read_to_string(&path).unwrap();
            RuleSet::parse(&path.display().to_string(), &text).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}
