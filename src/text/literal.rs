//! Constant literals: reading integers and floats into bit patterns of a given size,
//! and the canonical spelling of a pattern, chosen so that every pattern reads back
//! to itself.

use crate::ir::{from_f32, to_f32, to_i32, BitSize};

/// Patterns whose sign-extended value lies within this bound print as integers.
const INT_PRINT_BOUND: i32 = 65536;

/// Reads a constant literal as a pattern of `bits` bits.
pub(crate) fn parse_const(text: &str, bits: BitSize) -> Result<u32, String> {
    if bits == BitSize::B1 {
        return match text {
            "0" => Ok(0),
            "1" => Ok(1),
            _ => Err(format!(
                "expected a 1-bit constant (0 or 1), found `{text}`"
            )),
        };
    }
    if let Some(hex) = text.strip_prefix("0x") {
        return parse_hex(text, hex, bits);
    }
    if is_integer(text) {
        return parse_int(text, bits);
    }
    if let Some(v) = float_value(text) {
        let pattern = from_f32(v, bits);
        // Rust's parser saturates to infinity; only `inf` itself may mean infinity.
        let spelled_inf = matches!(text, "inf" | "-inf" | "nan");
        let overflowed = !spelled_inf && !to_f32(pattern, bits).is_finite();
        if overflowed {
            return Err(does_not_fit(text, bits));
        }
        return Ok(pattern);
    }
    Err(format!(
        "expected a constant (an integer such as `5`, `-1`, `0x3f800000` or a float such as \
         `1.0`, `-2.5e-3`, `inf`, `nan`), found `{text}`"
    ))
}

fn does_not_fit(text: &str, bits: BitSize) -> String {
    format!("constant `{text}` does not fit in {} bits", bits.bits())
}

fn parse_hex(text: &str, digits: &str, bits: BitSize) -> Result<u32, String> {
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(format!("malformed hexadecimal constant `{text}`"));
    }
    match u32::from_str_radix(digits, 16) {
        Ok(v) if v <= bits.mask() => Ok(v),
        _ => Err(does_not_fit(text, bits)),
    }
}

fn is_integer(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
}

/// Accepts both the signed and the unsigned reading of `bits` bits.
fn parse_int(text: &str, bits: BitSize) -> Result<u32, String> {
    let n = bits.bits();
    let min = -(1i64 << (n - 1));
    let max = (1i64 << n) - 1;
    match text.parse::<i64>() {
        Ok(v) if (min..=max).contains(&v) => Ok((v as u32) & bits.mask()),
        _ => Err(does_not_fit(text, bits)),
    }
}

/// The value of a float literal: `inf`, `-inf`, `nan`, or decimal digits with a
/// point or an exponent. Rust's own parser would also take `infinity`, `NaN`, `+1`…;
/// the grammar is kept narrower so that the printed form is the only spelling.
fn float_value(text: &str) -> Option<f32> {
    match text {
        "inf" => return Some(f32::INFINITY),
        "-inf" => return Some(f32::NEG_INFINITY),
        "nan" => return Some(f32::NAN),
        _ => {}
    }
    let allowed = text
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'));
    let has_digit = text.chars().any(|c| c.is_ascii_digit());
    let is_float = text.contains(['.', 'e', 'E']);
    if !(allowed && has_digit && is_float) || text.starts_with('+') {
        return None;
    }
    text.parse::<f32>().ok()
}

/// The canonical spelling of `pattern` as a constant of `bits` bits: small 32-bit
/// integers and 16-bit patterns that are not normal halves as integers, other finite
/// floats in Rust's shortest round-trip form, the rest (infinities, NaNs) in hex.
///
/// Every 16-bit pattern is a small integer, so 16-bit constants are printed as floats
/// whenever they are normal halves: 16-bit values are mostly `float16_t` data, and
/// `1.0` reads better than `15360`.
pub(crate) fn print_const(pattern: u32, bits: BitSize) -> String {
    let pattern = pattern & bits.mask();
    if bits == BitSize::B1 {
        return pattern.to_string();
    }
    let int = to_i32(pattern, bits);
    let small = (-INT_PRINT_BOUND..=INT_PRINT_BOUND).contains(&int);
    let half_special = bits == BitSize::B16 && (pattern >> 10) & 0x1f == 0x1f;
    if small && !half_special && (bits == BitSize::B32 || !is_normal_half(pattern)) {
        return int.to_string();
    }
    let f = to_f32(pattern, bits);
    if f.is_finite() {
        format!("{f:?}")
    } else {
        format!("{pattern:#x}")
    }
}

fn is_normal_half(pattern: u32) -> bool {
    let exponent = (pattern >> 10) & 0x1f;
    exponent != 0 && exponent != 0x1f
}

#[cfg(test)]
mod tests {
    use super::*;
    use BitSize::*;

    #[test]
    fn integers_and_hex() {
        assert_eq!(parse_const("5", B32), Ok(5));
        assert_eq!(parse_const("-1", B32), Ok(u32::MAX));
        assert_eq!(parse_const("-1", B16), Ok(0xffff));
        assert_eq!(parse_const("65535", B16), Ok(0xffff));
        assert_eq!(parse_const("-32768", B16), Ok(0x8000));
        assert!(parse_const("65536", B16).is_err());
        assert!(parse_const("-32769", B16).is_err());
        assert_eq!(parse_const("4294967295", B32), Ok(u32::MAX));
        assert!(parse_const("4294967296", B32).is_err());
        assert_eq!(parse_const("-2147483648", B32), Ok(0x8000_0000));
        assert_eq!(parse_const("0x3f800000", B32), Ok(0x3f80_0000));
        assert!(parse_const("0x10000", B16).is_err());
        assert!(parse_const("0x", B32).is_err());
        assert!(parse_const("0xg", B32).is_err());
        assert_eq!(parse_const("1", B1), Ok(1));
        assert!(parse_const("2", B1).is_err());
    }

    #[test]
    fn floats() {
        assert_eq!(parse_const("1.0", B32), Ok(0x3f80_0000));
        assert_eq!(parse_const("-2.5e-3", B32), Ok((-2.5e-3f32).to_bits()));
        assert_eq!(parse_const("inf", B32), Ok(0x7f80_0000));
        assert_eq!(parse_const("-inf", B16), Ok(0xfc00));
        assert_eq!(parse_const("1.0", B16), Ok(0x3c00));
        assert!(f32::from_bits(parse_const("nan", B32).unwrap()).is_nan());
        assert_eq!(parse_const("-0.0", B32), Ok(0x8000_0000));
        assert!(parse_const("1e50", B32).is_err());
        assert!(parse_const("70000.0", B16).is_err());
        assert!(parse_const("infinity", B32).is_err());
        assert!(parse_const("+1.0", B32).is_err());
        assert!(parse_const("1.0.0", B32).is_err());
        assert!(parse_const("1.0", B1).is_err());
    }

    #[test]
    fn canonical_spelling() {
        assert_eq!(print_const(0x3f80_0000, B32), "1.0");
        assert_eq!(print_const(65536, B32), "65536");
        assert_eq!(print_const(u32::MAX, B32), "-1");
        assert_eq!(print_const((-65536i32) as u32, B32), "-65536");
        assert_eq!(print_const(0x8000_0000, B32), "-0.0");
        assert_eq!(print_const(0x7f80_0000, B32), "0x7f800000");
        assert_eq!(print_const(0xffff, B16), "0xffff"); // a half NaN
        assert_eq!(print_const(0x3c00, B16), "1.0");
        assert_eq!(print_const(0x03e8, B16), "1000");
        assert_eq!(print_const(0x7c00, B16), "0x7c00");
        assert_eq!(print_const(3, B1), "1");
    }

    #[test]
    fn every_16_bit_and_1_bit_pattern_round_trips() {
        for p in 0..=0xffffu32 {
            assert_eq!(parse_const(&print_const(p, B16), B16), Ok(p), "{p:#x}");
        }
        for p in 0..=1 {
            assert_eq!(parse_const(&print_const(p, B1), B1), Ok(p));
        }
    }

    #[test]
    fn sampled_32_bit_patterns_round_trip() {
        // A stride coprime with 2^32 visits patterns from every exponent range,
        // plus the edges of the integer window and the special values.
        let mut p: u32 = 0;
        let edges = [
            0,
            1,
            65536,
            65537,
            0x7f7f_ffff,
            0x7f80_0000,
            0x7fc0_0001,
            0xffff_0000,
        ];
        let mut samples: Vec<u32> = edges.to_vec();
        for _ in 0..200_000 {
            p = p.wrapping_add(0x9e37_79b9);
            samples.push(p);
        }
        for p in samples {
            assert_eq!(parse_const(&print_const(p, B32), B32), Ok(p), "{p:#x}");
        }
    }
}
