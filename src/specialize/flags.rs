//! Reading known words from command-line flags: `--uniform IDX=VALUE` and
//! `--ubo BLOCK:OFFSET=VALUE`. A value is a 32-bit constant spelled as in `.pair`
//! files (`5`, `-1`, `0x3fc00000`, `1.5`, `inf`), optionally with the e-graph
//! syntax's type suffix (`1.5f32`, `2i32`, `7u32`). Errors point at the column of
//! the flag's text where the problem starts, as `--uniform:1:COL: error: ...`.

use crate::error::{Diagnostic, Error};
use crate::ir::{BitSize, KnownUniforms, Pipeline, SrcLoc, UniformWord};
use crate::text::literal::parse_const;

/// Reads a 32-bit constant: a `.pair` literal, optionally suffixed `f32`, `i32`
/// or `u32`.
pub fn parse_value(text: &str) -> Result<u32, String> {
    let hex = text.starts_with("0x") || text.starts_with("-0x");
    if let (false, Some(num)) = (hex, text.strip_suffix("f32")) {
        let is_int = !num.is_empty()
            && num
                .trim_start_matches('-')
                .bytes()
                .all(|b| b.is_ascii_digit());
        let float = if is_int {
            format!("{num}.0")
        } else {
            num.to_string()
        };
        let malformed = !float.contains(['.', 'e', 'E']) && !matches!(num, "inf" | "-inf" | "nan");
        if malformed {
            return Err(format!("expected a float before `f32`, found `{num}`"));
        }
        return parse_const(&float, BitSize::B32);
    }
    let int = (!hex)
        .then(|| {
            text.strip_suffix("i32")
                .or_else(|| text.strip_suffix("u32"))
        })
        .flatten();
    match int {
        Some(num) if num.contains(['.', 'e', 'E']) || num.is_empty() => Err(format!(
            "expected an integer before the integer suffix, found `{num}`"
        )),
        Some(num) => parse_const(num, BitSize::B32),
        None => parse_const(text, BitSize::B32),
    }
}

fn located(flag: &str, col: usize, message: String) -> Diagnostic {
    let loc = SrcLoc {
        line: 1,
        col: col as u32 + 1,
    };
    Diagnostic::new(Some(flag), Some(loc), message)
}

/// Splits `KEY=VALUE`, reading VALUE; errors are located in `text`.
fn split_value<'t>(
    flag: &str,
    text: &'t str,
    key_form: &str,
) -> Result<(&'t str, u32), Diagnostic> {
    let Some((key, value)) = text.split_once('=') else {
        let msg = format!("expected {key_form}=VALUE, found `{text}`");
        return Err(located(flag, 0, msg));
    };
    let bits = parse_value(value).map_err(|m| located(flag, key.len() + 1, m))?;
    Ok((key, bits))
}

/// A number in a flag key, at column `col` of the flag's text.
fn number(flag: &str, text: &str, col: usize, what: &str) -> Result<u32, Diagnostic> {
    text.parse::<u32>().map_err(|_| {
        located(
            flag,
            col,
            format!("expected {what} (a non-negative integer), found `{text}`"),
        )
    })
}

/// Reads the text of one `--uniform IDX=VALUE` flag.
pub fn parse_uniform_flag(text: &str) -> Result<(UniformWord, u32), Diagnostic> {
    let flag = "--uniform";
    let (key, bits) = split_value(flag, text, "IDX")?;
    let index = number(flag, key, 0, "a uniform word index")?;
    Ok((UniformWord::Uniform(index), bits))
}

/// Reads the text of one `--ubo BLOCK:OFFSET=VALUE` flag (OFFSET in bytes).
pub fn parse_ubo_flag(text: &str) -> Result<(UniformWord, u32), Diagnostic> {
    let flag = "--ubo";
    let (key, bits) = split_value(flag, text, "BLOCK:OFFSET")?;
    let Some((block, offset)) = key.split_once(':') else {
        let msg = format!("expected BLOCK:OFFSET before `=`, found `{key}`");
        return Err(located(flag, 0, msg));
    };
    let block = number(flag, block, 0, "a block index")?;
    let at = key.len() - offset.len();
    let offset = number(flag, offset, at, "a byte offset")?;
    if offset % 4 != 0 {
        let msg = format!("ubo offset {offset} is not a multiple of 4");
        return Err(located(flag, at, msg));
    }
    Ok((UniformWord::Ubo { block, offset }, bits))
}

/// The known words of a pair's `--uniform` and `--ubo` flags. Every problem is an
/// error located in its flag: malformed text, a word outside the pair's declared
/// uniform storage, or a word given two different values.
pub fn known_from_flags(
    p: &Pipeline,
    uniforms: &[String],
    ubos: &[String],
) -> Result<KnownUniforms, Error> {
    let mut known = KnownUniforms::new();
    let mut problems = vec![];
    let flags = uniforms
        .iter()
        .map(|t| ("--uniform", parse_uniform_flag(t)))
        .chain(ubos.iter().map(|t| ("--ubo", parse_ubo_flag(t))));
    for (flag, parsed) in flags {
        let (word, bits) = match parsed {
            Ok(wb) => wb,
            Err(d) => return Err(Error::Syntax(d)),
        };
        if let Some(why) = KnownUniforms::out_of_range(p, word) {
            problems.push(located(flag, 0, why));
        } else if known.insert(word, bits).is_some_and(|old| old != bits) {
            problems.push(located(
                flag,
                0,
                format!("{word} is given two different values"),
            ));
        }
    }
    if problems.is_empty() {
        Ok(known)
    } else {
        Err(Error::Invalid(problems))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_in_pair_and_suffixed_spellings() {
        assert_eq!(parse_value("1.5"), Ok(1.5f32.to_bits()));
        assert_eq!(parse_value("1.5f32"), Ok(1.5f32.to_bits()));
        assert_eq!(parse_value("2f32"), Ok(2.0f32.to_bits()));
        assert_eq!(parse_value("0x3fc00000"), Ok(1.5f32.to_bits()));
        assert_eq!(parse_value("-1"), Ok(u32::MAX));
        assert_eq!(parse_value("-1i32"), Ok(u32::MAX));
        assert_eq!(parse_value("7u32"), Ok(7));
        assert!(parse_value("1.5i32").is_err());
        assert!(parse_value("x").is_err());
        assert!(parse_value("f32").is_err());
        assert!(parse_value("4294967296").is_err());
    }

    #[test]
    fn flags_and_located_errors() {
        assert_eq!(parse_uniform_flag("3=2"), Ok((UniformWord::Uniform(3), 2)));
        let ubo = UniformWord::Ubo {
            block: 1,
            offset: 16,
        };
        assert_eq!(parse_ubo_flag("1:16=0.5"), Ok((ubo, 0.5f32.to_bits())));
        let e = parse_uniform_flag("3=abc").unwrap_err();
        assert_eq!(e.loc.map(|l| l.col), Some(3), "{e}");
        assert!(e.to_string().starts_with("--uniform:1:3: error: "), "{e}");
        let e = parse_ubo_flag("1:18=0").unwrap_err();
        assert_eq!(e.loc.map(|l| l.col), Some(3), "{e}");
        let e = parse_ubo_flag("x:16=0").unwrap_err();
        assert_eq!(e.loc.map(|l| l.col), Some(1), "{e}");
        assert!(parse_uniform_flag("3").is_err());
        assert!(parse_ubo_flag("16=1").is_err());
    }
}
