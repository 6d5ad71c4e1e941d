//! Malformed `.pair` inputs: each must fail with the exact line:column of the offending
//! token and a message saying what was found and what was expected. A property test
//! checks that no input, however broken, makes the reader panic.

use proptest::prelude::*;
use varysat::text::parse;
use varysat::Error;

/// The position and message of the syntax error `src` must produce.
fn err(src: &str) -> (u32, u32, String) {
    match parse(src, None) {
        Err(Error::Syntax(d)) => {
            let loc = d
                .loc
                .unwrap_or_else(|| panic!("no position: {}", d.message));
            (loc.line, loc.col, d.message)
        }
        Err(other) => panic!("not a syntax error: {other}"),
        Ok(_) => panic!("accepted malformed input:\n{src}"),
    }
}

fn check(src: &str, line: u32, col: u32, message: &str) {
    assert_eq!(err(src), (line, col, message.to_owned()), "input:\n{src}");
}

/// Wraps statement lines in a VS → FS pair; the first body line is line 3 and body
/// columns are as written (each body line starts at column 1).
fn in_vs(body: &str) -> String {
    format!("(pair\n(producer vs\n{body})\n(consumer fs))")
}

#[test]
fn unbalanced_parens() {
    check(
        "(pair\n  (producer vs\n    (%a = load_input ATTR0.x)\n",
        4,
        1,
        "expected `)` to close the list opened at 2:3",
    );
    check(
        "(pair\n  (producer vs))\n  (consumer fs))",
        3,
        3,
        "trailing text after the pair",
    );
}

#[test]
fn trailing_garbage_after_a_comment() {
    check(
        "(pair (producer vs) (consumer fs))\n; fine\nzzz",
        3,
        1,
        "trailing text after the pair",
    );
}

#[test]
fn empty_and_comment_only_files() {
    check("", 1, 1, "empty input: expected `(pair ...)`");
    check(
        "; nothing\n; here\n",
        3,
        1,
        "empty input: expected `(pair ...)`",
    );
}

#[test]
fn not_a_pair() {
    check("pair", 1, 1, "expected `(pair ...)`, found `pair`");
    check(
        "(pear (producer vs) (consumer fs))",
        1,
        2,
        "expected `pair`, found `pear`",
    );
    check(
        "(pair\n  (uniform 1))",
        2,
        3,
        "expected `(uniforms N)`, `(ubo BLOCK SIZE)`, `(producer ...)` or `(consumer ...)`, \
         found `(uniform ...)`",
    );
}

#[test]
fn quoted_strings_are_not_part_of_the_format() {
    check(
        "(pair \"x\")",
        1,
        7,
        "unexpected `\"`: the .pair format has no quoted strings",
    );
}

#[test]
fn unknown_alu_op() {
    let src = in_vs("(%a = load_input ATTR0.x)\n  (%b = faddd %a %a)");
    check(&src, 4, 9, "unknown ALU op `faddd`");
}

#[test]
fn unknown_and_misplaced_keywords() {
    check(
        &in_vs("(frobnicate)"),
        3,
        2,
        "unknown statement `frobnicate`",
    );
    check(
        &in_vs("(%a = load_input ATTR0.x)\n(fneg %a)"),
        4,
        2,
        "`fneg` defines a value: write `(%name = fneg ...)`",
    );
    check(
        &in_vs("(%a = load_input ATTR0.x)\n(%s = store_output POS.x %a)"),
        4,
        7,
        "`store_output` does not define a value: write `(store_output ...)`",
    );
    check(
        &in_vs("(%a = load_input ATTR0.x)\n(topology points)"),
        4,
        2,
        "stage parameter `topology` must come before the statements",
    );
    check(
        &in_vs("(then)"),
        3,
        2,
        "`(then ...)` is only allowed inside an `if`",
    );
}

#[test]
fn wrong_arity() {
    let src = in_vs("(%a = load_input ATTR0.x)\n(%b = fadd %a %a %a)");
    check(&src, 4, 7, "`fadd` takes 2 sources, found 3");
    let src = in_vs("(%a = load_input ATTR0.x)\n(%b = fneg)");
    check(&src, 4, 7, "`fneg` takes 1 source, found 0");
}

#[test]
fn undefined_value() {
    let src = in_vs("(store_output POS.x %x)");
    check(&src, 3, 21, "value `%x` is not defined");
}

#[test]
fn use_before_definition_is_left_to_the_validator() {
    let src = in_vs("(%b = fneg %a)\n(%a = load_input ATTR0.x)");
    let p = parse(&src, None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.producer.values.len(), 2);
}

#[test]
fn duplicate_definition() {
    let src = in_vs("(%a = load_input ATTR0.x)\n(%a = load_input ATTR1.x)");
    check(&src, 4, 2, "value `%a` is defined twice (first at 3:2)");
    // A phi redefining a value is caught the same way.
    let src = in_vs("(%t = const 1 0)\n(if %t (then) (else)\n (%t = phi %t %t))");
    check(&src, 5, 3, "value `%t` is defined twice (first at 3:2)");
}

#[test]
fn malformed_value_name() {
    let src = in_vs("(%a-b = load_input ATTR0.x)");
    check(
        &src,
        3,
        2,
        "malformed value name `%a-b`: use `%` then letters, digits, `_` or `.`",
    );
}

#[test]
fn bad_slot_component_and_half() {
    check(
        &in_vs("(%a = load_input VAR40.x)"),
        3,
        18,
        "unknown varying slot `VAR40`",
    );
    check(
        &in_vs("(%a = load_input VAR1.q)"),
        3,
        18,
        "bad component `q` in `VAR1.q`, expected x, y, z or w",
    );
    check(
        &in_vs("(%a = load_input VAR1.x.mid)"),
        3,
        18,
        "bad half `mid` in `VAR1.x.mid`, expected lo or hi",
    );
}

#[test]
fn bad_bit_size() {
    check(
        &in_vs("(%k = const 8 1)"),
        3,
        13,
        "expected a bit size (1, 16 or 32), found `8`",
    );
}

#[test]
fn bad_constants() {
    check(
        &in_vs("(%k = const 16 70000)"),
        3,
        16,
        "constant `70000` does not fit in 16 bits",
    );
    check(
        &in_vs("(%k = const 1 2)"),
        3,
        15,
        "expected a 1-bit constant (0 or 1), found `2`",
    );
    check(
        &in_vs("(%k = const 32 1.2.3)"),
        3,
        16,
        "expected a constant (an integer such as `5`, `-1`, `0x3f800000` or a float such as \
         `1.0`, `-2.5e-3`, `inf`, `nan`), found `1.2.3`",
    );
}

#[test]
fn bad_stage_name() {
    check(
        "(pair\n  (producer xs))",
        2,
        13,
        "expected a stage (vs, tcs, tes, gs or fs), found `xs`",
    );
}

#[test]
fn missing_and_misordered_shaders() {
    check("(pair\n  (producer vs))", 2, 16, "missing `(consumer ...)`");
    check("(pair)", 1, 6, "missing `(producer ...)`");
    check(
        "(pair\n  (consumer fs))",
        2,
        3,
        "missing `(producer ...)` before `(consumer ...)`",
    );
    check(
        "(pair\n  (producer vs)\n  (uniforms 1)\n  (consumer fs))",
        3,
        3,
        "`(uniforms ...)` must come before `(producer ...)`",
    );
}

#[test]
fn duplicate_producer_and_declarations() {
    check(
        "(pair\n  (producer vs)\n  (producer vs)\n  (consumer fs))",
        3,
        3,
        "`(producer ...)` appears twice (first at 2:3)",
    );
    check(
        "(pair\n  (ubo 1 16)\n  (ubo 1 32)\n  (producer vs) (consumer fs))",
        3,
        8,
        "UBO block 1 is declared twice (first at 2:3)",
    );
}

#[test]
fn bad_stage_parameters() {
    let pair = |params: &str| format!("(pair\n(producer vs\n{params})\n(consumer fs))");
    check(
        &pair("(topology quads)"),
        3,
        11,
        "expected points, lines or triangles, found `quads`",
    );
    check(
        &pair("(domain quads)"),
        3,
        2,
        "`domain` is not a parameter of a `vs` shader (it takes topology or layer_viewport_relative)",
    );
    check(
        &pair("(topology points)\n(topology lines)"),
        4,
        1,
        "stage parameter `topology` appears twice (first at 3:1)",
    );
    check(
        "(pair (producer gs\n(max_vertices 70000)) (consumer fs))",
        2,
        15,
        "`70000` is out of range for a vertex count",
    );
}

#[test]
fn phi_outside_if_or_loop() {
    let src = in_vs("(%a = load_input ATTR0.x)\n(%p = phi %a %a)");
    check(
        &src,
        4,
        7,
        "`phi` is only allowed after the branches of an `if` or at the start of a `loop`",
    );
    // After a loop's first ordinary statement, a phi is no longer a header phi.
    let src = in_vs("(%a = load_input ATTR0.x)\n(loop (break)\n (%p = phi %a))");
    check(
        &src,
        5,
        8,
        "`phi` is only allowed after the branches of an `if` or at the start of a `loop`",
    );
    // After the branches of an `if`, only phis may follow.
    let src = in_vs("(%t = const 1 1)\n(if %t (then) (else)\n (discard))");
    check(
        &src,
        5,
        2,
        "expected a phi `(%name = phi %then %else)` after the branches, found `(discard)`",
    );
}

#[test]
fn malformed_continue_and_break() {
    let looped = |stmt: &str| in_vs(&format!("(%a = const 32 0)\n(loop (%i = phi %a)\n{stmt})"));
    check(
        &looped("(continue 5)"),
        5,
        11,
        "expected a value (`%name`), found `5`",
    );
    check(
        &looped("(continue)"),
        5,
        2,
        "`continue` takes one value per header phi of its loop: expected 1, found 0",
    );
    check(&in_vs("(continue)"), 3, 2, "`continue` outside a loop");
    check(&in_vs("(break)"), 3, 2, "`break` outside a loop");
}

#[test]
fn misplaced_store_options() {
    let src = in_vs("(%a = load_input ATTR0.x)\n(store_output POS.x %a no_varying (xfb 0 0))");
    check(
        &src,
        4,
        35,
        "unexpected `(xfb ...)`: the form is `(store_output SLOT %value \
         [(indirect %index LEN)] [(xfb BUF OFFSET)] [no_varying])`",
    );
}

#[test]
fn tabs_and_comments_keep_positions_exact() {
    // Line 3 is a comment, line 4 starts with two tabs: each tab is one column.
    let src = "(pair\n(producer vs ; the (producer\n; (%b = faddd) here is only a comment\n\t\t(%b = faddd))\n(consumer fs))";
    check(src, 4, 9, "unknown ALU op `faddd`");
    // Columns count characters, not bytes.
    let src = "(pair ; é\n(producer vs (%é = undef 32)) (consumer fs))";
    check(
        src,
        2,
        15,
        "malformed value name `%é`: use `%` then letters, digits, `_` or `.`",
    );
}

#[test]
fn diagnostic_names_the_file() {
    let src = in_vs("(%a = load_input ATTR0.x)\n(%b = faddd %a %a)");
    let e = parse(&src, Some("pair.pair")).err().map(|e| e.to_string());
    assert_eq!(
        e.as_deref(),
        Some("pair.pair:4:7: error: unknown ALU op `faddd`")
    );
}

#[test]
fn parse_file_reports_io_errors() {
    let missing = std::path::Path::new("/nonexistent/dir/x.pair");
    match varysat::text::parse_file(missing) {
        Err(Error::Io { path, .. }) => assert_eq!(path, "/nonexistent/dir/x.pair"),
        other => panic!("expected an I/O error, got {other:?}"),
    }
}

const VALID: &str = "; a valid pair to mutate
(pair
  (uniforms 1)
  (ubo 0 16)
  (producer vs
    (topology triangles)
    (%a = load_input ATTR0.x)
    (%k = const 32 1.5)
    (%o = const 32 0)
    (%u = load_ubo 0 %o)
    (%t = flt %a %k)
    (if %t
      (then (%x = fmul %a %k))
      (else (%y = fadd %a %u))
      (%r = phi %x %y))
    (loop (%i = phi %o) (%d = ige %i %o) (if %d (then (break)) (else)) (continue %i))
    (store_output POS.x %a (xfb 0 0))
    (store_output VAR0.x.lo %r (indirect %o 2)))
  (consumer fs
    (provoking first)
    (%h = const 32 0.5)
    (%v = load_interpolated_input VAR0.x persp at_offset %h %h)
    (store_output DATA0.x %v)))
";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_text_never_panics(src in "\\PC{0,200}") {
        let _ = parse(&src, None);
    }

    #[test]
    fn s_expression_soup_never_panics(src in "[()%= \t\n;a-z0-9.x]{0,120}") {
        let _ = parse(&src, None);
    }

    #[test]
    fn mutated_valid_file_never_panics(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<bool>(), any::<char>()), 1..6)
    ) {
        let mut chars: Vec<char> = VALID.chars().collect();
        for (at, insert, c) in edits {
            let i = at.index(chars.len() + 1);
            if insert {
                chars.insert(i, c);
            } else if i < chars.len() {
                chars.remove(i);
            }
        }
        let src: String = chars.into_iter().collect();
        if let Ok(p) = parse(&src, None) {
            // Whatever still parses must print and re-parse to the same text.
            let text = varysat::text::print(&p);
            let again = parse(&text, None).map(|q| varysat::text::print(&q));
            prop_assert_eq!(again.ok(), Some(text));
        }
    }
}

#[test]
fn the_valid_base_file_parses() {
    parse(VALID, None).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn opaque_forms() {
    let (a, b) = ("(%a = load_input ATTR0.x)\n", "(%b = load_input ATTR0.y)\n");
    let bad_count =
        format!("{a}{b}(%r = opaque atan2 pure ext:GLSL.std.450:25 f32 (args f32 f32) %a)");
    check(
        &in_vs(&bad_count),
        5,
        14,
        "opaque `atan2` takes 2 operand(s) by its types, found 1",
    );
    let bad_purity = format!("{a}(%r = opaque f tidy op:1 f32 (args f32) %a)");
    check(
        &in_vs(&bad_purity),
        4,
        16,
        "expected a purity (pure, stage or effect), found `tidy`",
    );
    let no_result = format!("{a}(opaque f pure op:1 (args f32) %a)");
    check(
        &in_vs(&no_result),
        4,
        9,
        "opaque `f` without a result must be `effect`",
    );
    let bad_comp = format!("{a}(%r = opaque f pure op:1 f32x2.2 (args f32) %a)");
    check(
        &in_vs(&bad_comp),
        4,
        26,
        "result component 2 is outside f32x2",
    );
    let bad_code = format!("{a}(%r = opaque f pure opx:1 f32 (args f32) %a)");
    check(
        &in_vs(&bad_code),
        4,
        21,
        "bad SPIR-V code `opx:1`, expected `op:N`, `ext:SET:N` or `builtin:N`",
    );
}

/// 16-bit uniform and UBO loads: `N.lo` / `N.hi` and a trailing `lo` / `hi`; other
/// halves and words after the form are located errors.
#[test]
fn sixteen_bit_uniform_and_ubo_loads() {
    check(
        &in_vs("(%u = load_uniform 0.mid)"),
        3,
        20,
        "bad half `mid` in `0.mid`, expected lo or hi",
    );
    check(
        &in_vs("(%k = const 32 0)\n(%u = load_ubo 0 %k mid)"),
        4,
        21,
        "unexpected `mid`: the form is `(%v = load_ubo BLOCK %offset [lo|hi])`",
    );
    let ok = "(pair (uniforms 1) (ubo 0 16)
      (producer vs (%a = load_input ATTR0.x) (store_output POS.x %a))
      (consumer fs
        (%u = load_uniform 0.hi)
        (%k = const 32 4)
        (%b = load_ubo 0 %k lo)
        (%s = fadd %u %b)
        (store_output DATA0.x.lo %s)))";
    let p = parse(ok, None).expect("parses");
    varysat::validate::validate(&p).expect("16-bit loads type as 16 bits");
    let printed = varysat::text::print(&p);
    assert!(printed.contains("(%u = load_uniform 0.hi)"), "{printed}");
    assert!(printed.contains("(%b = load_ubo 0 %k lo)"), "{printed}");
    let again = varysat::text::print(&parse(&printed, None).expect("reparses"));
    assert_eq!(again, printed);
}
