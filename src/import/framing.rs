//! The word framing of a SPIR-V binary, checked before `rspirv` decodes it: rspirv
//! 0.13 trusts each instruction's word count and panics on a slice out of range when
//! a count runs past the end of the module, so no such module may reach it.

use rspirv::spirv::Op;

/// The SPIR-V magic number as the first word.
const MAGIC: u32 = 0x0723_0203;

/// `OpSpecConstantOp`, whose operation operand rspirv decodes without checking it.
const SPEC_CONSTANT_OP: u32 = 52;

/// Words in the module header (magic, version, generator, bound, schema).
const HEADER_WORDS: usize = 5;

/// Checks that the header is complete and that every instruction's word count is
/// non-zero and ends inside the module. `bytes` holds whole words. An unknown magic
/// number is left for rspirv to report.
pub(super) fn check(bytes: &[u8]) -> Result<(), String> {
    let words: Vec<[u8; 4]> = bytes
        .chunks_exact(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect();
    let decode: fn([u8; 4]) -> u32 = match words.first() {
        Some(w) if u32::from_le_bytes(*w) == MAGIC => u32::from_le_bytes,
        Some(w) if u32::from_be_bytes(*w) == MAGIC => u32::from_be_bytes,
        _ => return Ok(()),
    };
    if words.len() < HEADER_WORDS {
        return Err("the module header is incomplete".into());
    }
    let mut at = HEADER_WORDS;
    while let Some(word) = words.get(at) {
        let count = (decode(*word) >> 16) as usize;
        if count == 0 {
            return Err(format!(
                "the instruction at word {at} has a word count of 0"
            ));
        }
        if at + count > words.len() {
            return Err(format!(
                "the instruction at word {at} has {count} words, but the module ends at word {}",
                words.len()
            ));
        }
        if decode(*word) & 0xffff == SPEC_CONSTANT_OP {
            let inst: Vec<u32> = words[at..at + count].iter().map(|w| decode(*w)).collect();
            screen(&inst).map_err(|m| format!("word {at}: {m}"))?;
        }
        at += count;
    }
    Ok(())
}

/// Operations `OpSpecConstantOp` may fold, with their id-operand counts
/// (`None`: `OpCompositeExtract`, an id then literal indices).
fn arity(op: Op) -> Option<Option<usize>> {
    use Op::*;
    Some(match op {
        SConvert | UConvert | SNegate | Not | LogicalNot => Some(1),
        IAdd | ISub | IMul | UDiv | SDiv | UMod | SRem | SMod | ShiftRightLogical
        | ShiftRightArithmetic | ShiftLeftLogical | BitwiseOr | BitwiseXor | BitwiseAnd
        | LogicalOr | LogicalAnd | LogicalEqual | LogicalNotEqual | IEqual | INotEqual
        | ULessThan | SLessThan | UGreaterThan | SGreaterThan | ULessThanEqual | SLessThanEqual
        | UGreaterThanEqual | SGreaterThanEqual => Some(2),
        Select => Some(3),
        CompositeExtract => None,
        _ => return None,
    })
}

/// Checks an `OpSpecConstantOp` by its raw words (opcode 52) before rspirv decodes
/// it: rspirv panics on operations and operand counts it cannot parse.
pub(super) fn screen(words: &[u32]) -> Result<(), String> {
    // words: [count|opcode, result type, result id, operation, operands...]
    let Some(&operation) = words.get(3) else {
        return Err("OpSpecConstantOp without an operation".into());
    };
    let op = Op::from_u32(operation)
        .ok_or_else(|| format!("OpSpecConstantOp with unknown operation {operation}"))?;
    let rest = words.len() - 4;
    match arity(op) {
        Some(Some(n)) if n == rest => Ok(()),
        Some(None) if rest >= 2 => Ok(()),
        Some(_) => Err(format!(
            "OpSpecConstantOp {op:?} with {rest} operand word(s)"
        )),
        None => Err(format!("OpSpecConstantOp {op:?} is not supported")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn screening() {
        let iadd = Op::IAdd as u32;
        assert!(screen(&[0, 1, 2, iadd, 3, 4]).is_ok());
        assert!(screen(&[0, 1, 2, iadd, 3]).is_err());
        assert!(screen(&[0, 1, 2, 0xffff, 3, 4]).is_err());
        assert!(screen(&[0, 1, 2]).is_err());
        assert!(screen(&[0, 1, 2, Op::CompositeExtract as u32, 3, 0]).is_ok());
    }

    fn module(words: &[u32]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn framing() {
        let header = [MAGIC, 0x0001_0000, 0, 1, 0];
        // OpNop (opcode 0, 1 word) then OpCapability Shader (opcode 17, 2 words).
        let good = [&header[..], &[1 << 16, (2 << 16) | 17, 1]].concat();
        assert_eq!(check(&module(&good)), Ok(()));
        let be: Vec<u8> = good.iter().flat_map(|w| w.to_be_bytes()).collect();
        assert_eq!(check(&be), Ok(()));
        let long = [&header[..], &[(3 << 16) | 17, 1]].concat();
        let msg = "the instruction at word 5 has 3 words, but the module ends at word 7";
        assert_eq!(check(&module(&long)), Err(msg.to_owned()));
        let zero = [&header[..], &[17]].concat();
        assert!(check(&module(&zero))
            .unwrap_err()
            .contains("word count of 0"));
        assert!(check(&module(&header[..3])).is_err());
        assert_eq!(check(&module(&[1, 2, 3, 4, 5])), Ok(()), "left to rspirv");
    }
}
