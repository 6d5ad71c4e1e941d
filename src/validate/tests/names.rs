//! Value names: non-empty, printable, unique.

use super::*;

#[test]
fn names_are_unique() {
    let mut b = fs();
    let y = b.f32(2.0);
    named(&mut b, y, "x");
    assert_one(&pair(vs(), b), "value name `%x` is used for two values");
}

#[test]
fn names_are_not_empty() {
    let mut b = fs();
    let y = b.f32(2.0);
    named(&mut b, y, "");
    assert_one(&pair(vs(), b), &format!("value #{} has an empty name", y.0));
}

#[test]
fn names_use_printable_characters() {
    let mut b = fs();
    let y = b.f32(2.0);
    named(&mut b, y, "a b");
    assert_one(
        &pair(vs(), b),
        "value name `%a b` contains ` `; names may only use letters, digits, `_` and `.`",
    );
    let mut b = fs();
    let y = b.f32(2.0);
    named(&mut b, y, "v1.y_2");
    assert_valid(&pair(vs(), b));
}
