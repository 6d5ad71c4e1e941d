//! Opaque operations: instructions the optimizer need not understand (derivatives,
//! `GLSL.std.450` functions without a native form, bitfield ops, atomics, image
//! writes...). Each carries the SPIR-V instruction it stands for, its typed operand
//! groups and result, and a purity class that says how freely it may be treated.

use std::fmt;
use std::str::FromStr;

use super::BitSize;

super::inst::keyword_enum! {
    /// How freely the optimizer may treat an opaque operation.
    Purity {
        /// A function of its operands alone: dedupable, removable when unused, and
        /// movable between stages like ALU work.
        Pure = "pure",
        /// Depends on the invocation's neighbours in its stage (derivatives,
        /// helper-invocation state): may be deduplicated or removed within its stage,
        /// never moved to the other stage.
        Stage = "stage",
        /// Has an effect (atomics, image stores, ...): never removed, moved or duplicated.
        Effect = "effect",
    }
}

super::inst::keyword_enum! {
    /// The scalar type of an opaque operand group or result (SPIR-V typing).
    ScalarTy {
        /// 32-bit float.
        F32 = "f32",
        /// 16-bit float.
        F16 = "f16",
        /// 32-bit signed integer.
        I32 = "i32",
        /// 32-bit unsigned integer.
        U32 = "u32",
        /// 16-bit signed integer.
        I16 = "i16",
        /// 16-bit unsigned integer.
        U16 = "u16",
        /// Boolean.
        Bool = "bool",
        /// 64-bit float, carried as two 32-bit words (low word first).
        F64 = "f64",
        /// 64-bit signed integer, carried as two 32-bit words (low word first).
        I64 = "i64",
        /// 64-bit unsigned integer, carried as two 32-bit words (low word first).
        U64 = "u64",
    }
}

impl ScalarTy {
    /// The IR bit size of one IR value of the type: a 64-bit scalar is two 32-bit
    /// values, since the IR holds at most 32 bits per value.
    pub fn bits(self) -> BitSize {
        match self {
            ScalarTy::F32 | ScalarTy::I32 | ScalarTy::U32 => BitSize::B32,
            ScalarTy::F64 | ScalarTy::I64 | ScalarTy::U64 => BitSize::B32,
            ScalarTy::F16 | ScalarTy::I16 | ScalarTy::U16 => BitSize::B16,
            ScalarTy::Bool => BitSize::B1,
        }
    }

    /// IR values one scalar of the type occupies: 2 for 64-bit types, else 1.
    pub fn words(self) -> usize {
        if self.is_wide() {
            2
        } else {
            1
        }
    }

    /// Whether the type is 64 bits wide.
    pub fn is_wide(self) -> bool {
        matches!(self, ScalarTy::F64 | ScalarTy::I64 | ScalarTy::U64)
    }

    /// Whether each IR value of the type is a float of its own size (`f16`, `f32`;
    /// the words of an `f64` are raw bits).
    pub fn is_float(self) -> bool {
        matches!(self, ScalarTy::F32 | ScalarTy::F16)
    }
}

/// A SPIR-V type of an operand group or result: a scalar, a vector of `rows`
/// components (`f32x3`) or a matrix of `cols` columns of `rows` components
/// (`f32x4x4`). It occupies `rows * cols` consecutive scalar operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OpaqueTy {
    /// Component type.
    pub scalar: ScalarTy,
    /// Components per column (1 for a scalar).
    pub rows: u8,
    /// Columns (1 for a scalar or vector).
    pub cols: u8,
}

impl OpaqueTy {
    /// A scalar type.
    pub fn scalar(scalar: ScalarTy) -> OpaqueTy {
        OpaqueTy {
            scalar,
            rows: 1,
            cols: 1,
        }
    }

    /// Number of scalar components.
    pub fn components(self) -> usize {
        self.rows as usize * self.cols as usize
    }

    /// Number of IR values the type occupies: its components, each 64-bit one as two
    /// 32-bit words (low word first).
    pub fn words(self) -> usize {
        self.components() * self.scalar.words()
    }
}

impl fmt::Display for OpaqueTy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.scalar)?;
        if self.rows > 1 || self.cols > 1 {
            write!(f, "x{}", self.rows)?;
        }
        if self.cols > 1 {
            write!(f, "x{}", self.cols)?;
        }
        Ok(())
    }
}

impl FromStr for OpaqueTy {
    type Err = String;
    fn from_str(s: &str) -> Result<OpaqueTy, String> {
        let bad = || format!("bad opaque type `{s}`, expected e.g. `f32`, `u32x2` or `f32x4x4`");
        let mut parts = s.split('x');
        let scalar: ScalarTy = parts.next().unwrap_or("").parse().map_err(|_| bad())?;
        let dim = |p: Option<&str>| -> Result<u8, String> {
            match p {
                None => Ok(1),
                Some(d) => match d.parse::<u8>() {
                    Ok(n @ 2..=4) => Ok(n),
                    _ => Err(bad()),
                },
            }
        };
        let rows = dim(parts.next())?;
        let cols = dim(parts.next())?;
        if parts.next().is_some() {
            return Err(bad());
        }
        Ok(OpaqueTy { scalar, rows, cols })
    }
}

/// The SPIR-V instruction an opaque operation stands for.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpaqueCode {
    /// A core instruction by opcode (`op:207` is `OpDPdx`).
    Core(u32),
    /// An extended instruction: set name and number (`ext:GLSL.std.450:25`).
    Ext(String, u32),
    /// A load of the built-in input variable with this SPIR-V `BuiltIn` number
    /// (`builtin:16` is `PointCoord`); the result component says which component.
    Builtin(u32),
}

impl fmt::Display for OpaqueCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpaqueCode::Core(op) => write!(f, "op:{op}"),
            OpaqueCode::Ext(set, n) => write!(f, "ext:{set}:{n}"),
            OpaqueCode::Builtin(b) => write!(f, "builtin:{b}"),
        }
    }
}

impl FromStr for OpaqueCode {
    type Err = String;
    fn from_str(s: &str) -> Result<OpaqueCode, String> {
        let bad = || format!("bad SPIR-V code `{s}`, expected `op:N`, `ext:SET:N` or `builtin:N`");
        if let Some(n) = s.strip_prefix("op:") {
            return n.parse().map(OpaqueCode::Core).map_err(|_| bad());
        }
        if let Some(n) = s.strip_prefix("builtin:") {
            return n.parse().map(OpaqueCode::Builtin).map_err(|_| bad());
        }
        let rest = s.strip_prefix("ext:").ok_or_else(bad)?;
        let (set, n) = rest.rsplit_once(':').ok_or_else(bad)?;
        let fine = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
        if set.is_empty() || !set.chars().all(fine) {
            return Err(bad());
        }
        Ok(OpaqueCode::Ext(
            set.to_string(),
            n.parse().map_err(|_| bad())?,
        ))
    }
}

/// A resource an opaque operation accesses besides its value operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Resource {
    /// An image or sampled image, numbered like `tex` samplers.
    Image(u32),
    /// A storage buffer, numbered like `ssbo_load` buffers (value operands address it).
    Buffer(u32),
}

/// The description of an opaque operation (everything but its value operands).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OpaqueOp {
    /// A readable name (`atan2`, `dpdx`, `image_write`): letters, digits, `_`.
    pub name: String,
    /// Purity class.
    pub purity: Purity,
    /// The SPIR-V instruction.
    pub code: OpaqueCode,
    /// The SPIR-V result type and which of its IR values this instruction yields
    /// (the component, or for 64-bit types `2 * component + word`, low word first);
    /// `None` for an operation without a result (then the purity is `effect`).
    pub result: Option<(OpaqueTy, u8)>,
    /// The SPIR-V operand types in order; their components are the value operands.
    pub args: Vec<OpaqueTy>,
    /// A resource operand, if any.
    pub resource: Option<Resource>,
}

impl OpaqueOp {
    /// Number of IR value operands the operand types call for (64-bit components
    /// count twice).
    pub fn operand_count(&self) -> usize {
        self.args.iter().map(|a| a.words()).sum()
    }

    /// Whether the operation works on 64-bit values (a 64-bit operand or result):
    /// AMD runs it as 64-bit ISA, priced by the profile's `wide-op`.
    pub fn is_wide(&self) -> bool {
        self.result.is_some_and(|(t, _)| t.scalar.is_wide())
            || self.args.iter().any(|a| a.scalar.is_wide())
    }

    /// Bit size of the result component, if there is a result.
    pub fn result_bits(&self) -> Option<BitSize> {
        self.result.map(|(t, _)| t.scalar.bits())
    }

    /// The bit size each value operand must have.
    pub fn operand_bits(&self) -> Vec<BitSize> {
        self.args
            .iter()
            .flat_map(|a| std::iter::repeat_n(a.scalar.bits(), a.words()))
            .collect()
    }

    /// Whether the SPIR-V instruction exists only in fragment shaders (derivatives,
    /// `OpKill`-like helper state, interpolation functions).
    pub fn is_fragment_only(&self) -> bool {
        match &self.code {
            // OpDPdx..OpFwidthCoarse, OpIsHelperInvocationEXT.
            OpaqueCode::Core(code) => matches!(code, 207..=215 | 5381),
            OpaqueCode::Ext(set, n) => set == "GLSL.std.450" && matches!(n, 76..=78),
            // PointCoord, SampleMask, HelperInvocation, BaryCoordKHR,
            // BaryCoordNoPerspKHR, ShadingRateKHR, FragSizeEXT, FragInvocationCountEXT.
            OpaqueCode::Builtin(b) => matches!(b, 16 | 20 | 23 | 5286 | 5287 | 4444 | 5292 | 5293),
        }
    }

    /// What is wrong with the description itself, if anything.
    pub fn problem(&self) -> Option<String> {
        let fine = |c: char| c.is_ascii_alphanumeric() || c == '_';
        if self.name.is_empty() || !self.name.chars().all(fine) {
            return Some(format!(
                "opaque name `{}` must be letters, digits and `_`",
                self.name
            ));
        }
        match self.result {
            None if self.purity != Purity::Effect => Some(format!(
                "opaque `{}` without a result must be `effect`",
                self.name
            )),
            Some((ty, comp)) if comp as usize >= ty.words() => Some(format!(
                "opaque `{}` result component {comp} is outside {ty}",
                self.name
            )),
            _ => None,
        }
    }

    /// The result written as `TYPE` or `TYPE.COMP` (`f32x3.1`, `f64.1`), or `None`.
    pub fn result_text(&self) -> Option<String> {
        self.result.map(|(ty, comp)| {
            if ty.words() > 1 {
                format!("{ty}.{comp}")
            } else {
                ty.to_string()
            }
        })
    }
}

/// Parses `TYPE` or `TYPE.COMP` (the result of an opaque operation; for 64-bit
/// types COMP counts 32-bit words).
pub fn parse_result(s: &str) -> Result<(OpaqueTy, u8), String> {
    let (ty, comp) = match s.split_once('.') {
        Some((t, c)) => (
            t,
            c.parse::<u8>()
                .map_err(|_| format!("bad result component in `{s}`"))?,
        ),
        None => (s, 0),
    };
    let ty: OpaqueTy = ty.parse()?;
    if comp as usize >= ty.words() {
        return Err(format!("result component {comp} is outside {ty}"));
    }
    Ok((ty, comp))
}

impl fmt::Display for OpaqueOp {
    /// `NAME PURITY CODE [RESULT] (args TYPE...) [(image N)|(buffer N)]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.name, self.purity, self.code)?;
        if let Some(r) = self.result_text() {
            write!(f, " {r}")?;
        }
        f.write_str(" (args")?;
        for a in &self.args {
            write!(f, " {a}")?;
        }
        f.write_str(")")?;
        match self.resource {
            Some(Resource::Image(n)) => write!(f, " (image {n})"),
            Some(Resource::Buffer(n)) => write!(f, " (buffer {n})"),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_and_codes_round_trip() {
        for t in ["f32", "u32x2", "f32x4x4", "boolx3", "f16x2x3"] {
            assert_eq!(t.parse::<OpaqueTy>().unwrap().to_string(), t);
        }
        for c in [
            "op:207",
            "ext:GLSL.std.450:25",
            "ext:NonSemantic.DebugPrintf:1",
            "builtin:16",
        ] {
            assert_eq!(c.parse::<OpaqueCode>().unwrap().to_string(), c);
        }
        assert!("f32x5".parse::<OpaqueTy>().is_err());
        assert!("f32x1".parse::<OpaqueTy>().is_err());
        assert!("op:x".parse::<OpaqueCode>().is_err());
        assert!("ext::3".parse::<OpaqueCode>().is_err());
        assert_eq!(
            parse_result("f32x3.2").unwrap(),
            ("f32x3".parse().unwrap(), 2)
        );
        assert!(parse_result("f32x3.3").is_err());
        // 64-bit components are two words each.
        assert_eq!(parse_result("f64x3.5").unwrap().1, 5);
        assert!(parse_result("f64x3.6").is_err());
        assert_eq!(parse_result("f64.1").unwrap().1, 1);
    }

    #[test]
    fn wide_types_count_words() {
        let op = OpaqueOp {
            name: "fadd".into(),
            purity: Purity::Pure,
            code: OpaqueCode::Core(129),
            result: Some(("f64".parse().unwrap(), 1)),
            args: vec!["f64".parse().unwrap(), "i32".parse().unwrap()],
            resource: None,
        };
        assert_eq!(op.operand_count(), 3);
        assert_eq!(
            op.operand_bits(),
            vec![BitSize::B32, BitSize::B32, BitSize::B32]
        );
        assert_eq!(op.result_bits(), Some(BitSize::B32));
        assert_eq!(op.to_string(), "fadd pure op:129 f64.1 (args f64 i32)");
        assert!(op.problem().is_none());
    }

    #[test]
    fn operand_shapes() {
        let op = OpaqueOp {
            name: "refract".into(),
            purity: Purity::Pure,
            code: "ext:GLSL.std.450:72".parse().unwrap(),
            result: Some(("f32x3".parse().unwrap(), 1)),
            args: vec![
                "f32x3".parse().unwrap(),
                "f32x3".parse().unwrap(),
                "f32".parse().unwrap(),
            ],
            resource: None,
        };
        assert_eq!(op.operand_count(), 7);
        assert_eq!(op.result_bits(), Some(BitSize::B32));
        assert_eq!(
            op.to_string(),
            "refract pure ext:GLSL.std.450:72 f32x3.1 (args f32x3 f32x3 f32)"
        );
        assert!(op.problem().is_none());
    }
}
