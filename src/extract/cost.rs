//! The cost model as data: a `Cost` newtype with saturating arithmetic, the named AMD
//! profiles of design §4 and a loader for profile files (documented in
//! `docs/cost-profiles.md`).

use std::collections::BTreeMap;
use std::fmt;
use std::ops::{Add, AddAssign, Mul};

use crate::egraph::sexp::{parse_all, Sexp};
use crate::error::{Diagnostic, Error};
use crate::ir::{AluOp, OpaqueOp, Primitive, SrcLoc, Stage, StageInfo};

/// A cost; arithmetic saturates so that "infinite" stays infinite.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cost(pub u64);

impl Cost {
    /// The largest cost, used for "impossible".
    pub const INFINITE: Cost = Cost(u64::MAX);
}

impl Add for Cost {
    type Output = Cost;
    fn add(self, o: Cost) -> Cost {
        Cost(self.0.saturating_add(o.0))
    }
}

impl AddAssign for Cost {
    fn add_assign(&mut self, o: Cost) {
        *self = *self + o;
    }
}

impl Mul<u64> for Cost {
    type Output = Cost;
    fn mul(self, k: u64) -> Cost {
        Cost(self.0.saturating_mul(k))
    }
}

impl fmt::Display for Cost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Weights of one target, all user-settable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CostModel {
    /// Profile name.
    pub name: String,
    /// One vec4 slot into the FS.
    pub fs_slot: u64,
    /// One interpolated component read by the FS.
    pub interp_component: u64,
    /// One flat component read by the FS.
    pub flat_component: u64,
    /// Each distinct barycentric set beyond the first.
    pub extra_barycentric: u64,
    /// One slot between TCS/TES/GS stages, per vertex.
    pub stage_slot_per_vertex: u64,
    /// One 32-bit TCS -> TES patch component (two 16-bit halves share one): AMD
    /// stores and loads patch varyings in off-chip memory one dword at a time.
    pub patch_component: u64,
    /// Stage weight (amplification) of the producer.
    pub weight_producer: u64,
    /// Stage weight of a consumer FS.
    pub weight_fs: u64,
    /// Stage weight of a consumer GS.
    pub weight_gs: u64,
    /// Stage weight of a consumer TES.
    pub weight_tes: u64,
    /// Stage weight of a consumer TCS.
    pub weight_tcs: u64,
    /// Propagation limit into an FS.
    pub limit_fs: Option<u32>,
    /// Propagation limit into a TES.
    pub limit_tes: Option<u32>,
    /// Propagation limit into a GS whose input is triangles (or points).
    pub limit_gs_triangles: Option<u32>,
    /// Propagation limit into a GS whose input is lines.
    pub limit_gs_lines: Option<u32>,
    /// Propagation limit into a TCS.
    pub limit_tcs: Option<u32>,
    /// One opaque op on 64-bit values (a 64-bit operand or result), in the unit of
    /// ALU costs, where a 32-bit one costs `OPAQUE_COST` (4). Calibrated by
    /// `scripts/radv_calibrate.py --width`; it also counts toward the propagation
    /// limits, so a uniform expression of 64-bit work propagates less far.
    pub wide_op: u64,
    /// Opaque ops on 64-bit values that cost more than `wide_op`, by op name
    /// (`fdiv`, `sqrt`, `inversesqrt`, `sdiv`, `smod`): each one's 64-bit ISA
    /// instructions as measured on the profile's GPU (`radv_calibrate.py --width`).
    pub wide_ops: BTreeMap<String, u64>,
}

/// A `wide_ops` table from (op name, price) pairs.
fn wide_prices(prices: &[(&str, u64)]) -> BTreeMap<String, u64> {
    prices.iter().map(|(n, p)| ((*n).to_owned(), *p)).collect()
}

/// The names of the built-in profiles.
pub const PROFILE_NAMES: &[&str] = &["amd-gfx10", "amd-gfx11"];

impl Default for CostModel {
    fn default() -> CostModel {
        CostModel::amd_gfx10()
    }
}

impl CostModel {
    /// GFX10.3 (navi21), calibrated on RADV's ISA (`scripts/radv_calibrate.py`,
    /// docs/cost-profiles.md): an interpolated component costs two FS `v_interp`
    /// instructions, a flat one one `v_interp_mov`, a vec4 slot four VS instructions
    /// (its `exp param` and the moves feeding it); FS instructions are weighted 4,
    /// producer ones 1, as ALU ops are.
    pub fn amd_gfx10() -> CostModel {
        CostModel {
            name: "amd-gfx10".into(),
            fs_slot: 4,
            interp_component: 8,
            flat_component: 4,
            extra_barycentric: 2,
            stage_slot_per_vertex: 4,
            patch_component: 1,
            weight_producer: 1,
            weight_fs: 4,
            weight_gs: 2,
            weight_tes: 1,
            weight_tcs: 1,
            limit_fs: Some(12),
            limit_tes: Some(12),
            limit_gs_triangles: Some(14),
            limit_gs_lines: Some(20),
            limit_tcs: None,
            wide_op: 8,
            wide_ops: wide_prices(&[
                ("fdiv", 35),
                ("sqrt", 39),
                ("inversesqrt", 39),
                ("sdiv", 755),
                ("smod", 540),
            ]),
        }
    }

    /// GFX11 (navi31), calibrated likewise: `lds_param_load` plus two `v_interp` per
    /// interpolated component, `lds_param_load` plus a move per flat one (about 2.1 and
    /// 1.5 FS ALU ops' worth of instructions, weighted 4), a vec4 slot about five VS
    /// ALU ops' worth (attribute-ring stores).
    pub fn amd_gfx11() -> CostModel {
        CostModel {
            name: "amd-gfx11".into(),
            fs_slot: 5,
            interp_component: 9,
            flat_component: 6,
            wide_ops: wide_prices(&[
                ("fdiv", 43),
                ("sqrt", 51),
                ("inversesqrt", 51),
                ("sdiv", 933),
                ("smod", 689),
            ]),
            ..CostModel::amd_gfx10()
        }
    }

    /// A built-in profile by name.
    pub fn named(name: &str) -> Option<CostModel> {
        match name {
            "amd-gfx10" => Some(CostModel::amd_gfx10()),
            "amd-gfx11" => Some(CostModel::amd_gfx11()),
            _ => None,
        }
    }

    /// The amplification weight of code running in the consumer stage.
    pub fn consumer_weight(&self, consumer: Stage) -> u64 {
        match consumer {
            Stage::Fragment => self.weight_fs,
            Stage::Geometry => self.weight_gs,
            Stage::TessEval => self.weight_tes,
            Stage::TessCtrl => self.weight_tcs,
            Stage::Vertex => self.weight_producer,
        }
    }

    /// How much free work may move into the consumer (`None`: unlimited).
    pub fn propagation_limit(&self, consumer: &StageInfo) -> Option<u32> {
        match consumer {
            StageInfo::Fragment { .. } => self.limit_fs,
            StageInfo::TessEval { .. } => self.limit_tes,
            StageInfo::TessCtrl { .. } => self.limit_tcs,
            StageInfo::Geometry { input, .. } => match input {
                Primitive::Lines | Primitive::LineStrip | Primitive::LinesAdjacency => {
                    self.limit_gs_lines
                }
                _ => self.limit_gs_triangles,
            },
            StageInfo::Vertex { .. } => None,
        }
    }

    /// Cost of one ALU op computed in a stage of the given weight: Mesa's default
    /// instruction cost times the weight.
    pub fn alu(&self, op: AluOp, weight: u64) -> Cost {
        Cost(op.default_cost() as u64) * weight
    }

    /// Cost of one opaque op in a stage of weight 1: for one on 64-bit values its
    /// `wide_ops` price, or `wide_op`; else `OPAQUE_COST`.
    pub fn opaque(&self, op: &OpaqueOp) -> u64 {
        if op.is_wide() {
            self.wide_ops.get(&op.name).copied().unwrap_or(self.wide_op)
        } else {
            crate::egraph::OPAQUE_COST as u64
        }
    }

    /// Parses a profile file (see `docs/cost-profiles.md`).
    pub fn parse(file: &str, text: &str) -> Result<CostModel, Error> {
        let items = parse_all(text).map_err(|(l, m)| perr(file, l, m))?;
        let top = match items.as_slice() {
            [one] => one,
            [] => return Err(perr(file, SrcLoc { line: 1, col: 1 }, "empty profile file")),
            [_, second, ..] => {
                return Err(perr(
                    file,
                    second.loc(),
                    "a profile file holds one `(profile ...)`",
                ))
            }
        };
        let list = top
            .list()
            .filter(|l| l.first().and_then(Sexp::atom) == Some("profile"))
            .ok_or_else(|| perr(file, top.loc(), "expected `(profile NAME ...)`"))?;
        let name = list
            .get(1)
            .and_then(Sexp::atom)
            .ok_or_else(|| perr(file, top.loc(), "the profile needs a name"))?;
        let mut model = CostModel::amd_gfx10();
        model.name = name.to_string();
        for entry in list.iter().skip(2) {
            model.apply(file, entry)?;
        }
        Ok(model)
    }

    fn apply(&mut self, file: &str, entry: &Sexp) -> Result<(), Error> {
        let items = entry.list().ok_or_else(|| {
            perr(
                file,
                entry.loc(),
                format!("expected `(KEY VALUE)`, found `{entry}`"),
            )
        })?;
        let key = items.first().and_then(Sexp::atom).unwrap_or("");
        let arg = |i: usize| -> Result<&Sexp, Error> {
            items
                .get(i)
                .ok_or_else(|| perr(file, entry.loc(), format!("`{key}` is missing a value")))
        };
        if items.len() > 3
            || (items.len() == 3 && !matches!(key, "weight" | "limit" | "base" | "wide-op"))
        {
            return Err(perr(
                file,
                entry.loc(),
                format!("too many values for `{key}`"),
            ));
        }
        match key {
            "base" => {
                let b = arg(1)?;
                let base = b.atom().and_then(CostModel::named).ok_or_else(|| {
                    perr(
                        file,
                        b.loc(),
                        format!(
                            "unknown base profile `{b}`, expected one of: {}",
                            PROFILE_NAMES.join(", ")
                        ),
                    )
                })?;
                *self = CostModel {
                    name: self.name.clone(),
                    ..base
                };
            }
            "fs-slot" => self.fs_slot = number(file, arg(1)?)?,
            "interp-component" => self.interp_component = number(file, arg(1)?)?,
            "flat-component" => self.flat_component = number(file, arg(1)?)?,
            "extra-barycentric" => self.extra_barycentric = number(file, arg(1)?)?,
            "stage-slot-per-vertex" => self.stage_slot_per_vertex = number(file, arg(1)?)?,
            "patch-component" => self.patch_component = number(file, arg(1)?)?,
            "wide-op" if items.len() == 3 => {
                let op = arg(1)?;
                let name = op
                    .atom()
                    .filter(|a| a.starts_with(|c: char| c.is_ascii_alphabetic()))
                    .ok_or_else(|| {
                        perr(file, op.loc(), format!("expected an op name, found `{op}`"))
                    })?;
                let price = number(file, arg(2)?)?;
                self.wide_ops.insert(name.to_owned(), price);
            }
            "wide-op" => self.wide_op = number(file, arg(1)?)?,
            "weight" => {
                let (stage, value) = (arg(1)?, number(file, arg(2)?)?);
                let slot = match stage.atom() {
                    Some("producer") => &mut self.weight_producer,
                    Some("fs") => &mut self.weight_fs,
                    Some("gs") => &mut self.weight_gs,
                    Some("tes") => &mut self.weight_tes,
                    Some("tcs") => &mut self.weight_tcs,
                    _ => {
                        return Err(perr(
                            file,
                            stage.loc(),
                            format!(
                                "unknown stage `{stage}`, expected producer, fs, gs, tes or tcs"
                            ),
                        ))
                    }
                };
                *slot = value;
            }
            "limit" => {
                let (stage, v) = (arg(1)?, arg(2)?);
                let value = if v.atom() == Some("unlimited") {
                    None
                } else {
                    Some(
                        u32::try_from(number(file, v)?)
                            .map_err(|_| perr(file, v.loc(), "limit too large"))?,
                    )
                };
                let slot = match stage.atom() {
                    Some("fs") => &mut self.limit_fs,
                    Some("tes") => &mut self.limit_tes,
                    Some("tcs") => &mut self.limit_tcs,
                    Some("gs-triangles") => &mut self.limit_gs_triangles,
                    Some("gs-lines") => &mut self.limit_gs_lines,
                    _ => return Err(perr(file, stage.loc(), format!("unknown limit `{stage}`, expected fs, tes, tcs, gs-triangles or gs-lines"))),
                };
                *slot = value;
            }
            _ => {
                let at = items.first().map(Sexp::loc).unwrap_or(entry.loc());
                return Err(perr(file, at, format!("unknown profile key `{key}`")));
            }
        }
        Ok(())
    }
}

fn number(file: &str, s: &Sexp) -> Result<u64, Error> {
    s.atom().and_then(|a| a.parse::<u64>().ok()).ok_or_else(|| {
        perr(
            file,
            s.loc(),
            format!("expected a non-negative integer, found `{s}`"),
        )
    })
}

fn perr(file: &str, loc: SrcLoc, msg: impl Into<String>) -> Error {
    Error::Profile(Diagnostic::new(Some(file), Some(loc), msg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_profiles_follow_the_radv_calibration() {
        let g10 = CostModel::named("amd-gfx10").unwrap();
        assert_eq!(
            (g10.fs_slot, g10.interp_component, g10.flat_component),
            (4, 8, 4)
        );
        let g11 = CostModel::named("amd-gfx11").unwrap();
        assert_eq!(
            (g11.fs_slot, g11.interp_component, g11.flat_component),
            (5, 9, 6)
        );
        assert_eq!(g10.alu(AluOp::FPow, g10.weight_fs), Cost(36));
        assert_eq!(g10.alu(AluOp::FNeg, 4), Cost(0));
        let gs_lines = StageInfo::Geometry {
            input: Primitive::Lines,
            output: Primitive::LineStrip,
            max_vertices: 2,
            invocations: 1,
        };
        assert_eq!(g10.propagation_limit(&gs_lines), Some(20));
        assert_eq!(
            g10.propagation_limit(&StageInfo::default_for(Stage::Geometry)),
            Some(14)
        );
        assert_eq!(
            g10.propagation_limit(&StageInfo::default_for(Stage::TessCtrl)),
            None
        );
    }

    #[test]
    fn profile_files_parse() {
        let text = "; mine\n(profile test (base amd-gfx11) (fs-slot 10) (weight fs 3) (limit tcs 7) (limit fs unlimited) (patch-component 3))";
        let m = CostModel::parse("p.cost", text).unwrap();
        assert_eq!(m.name, "test");
        assert_eq!((m.fs_slot, m.interp_component, m.weight_fs), (10, 9, 3));
        assert_eq!((m.limit_tcs, m.limit_fs), (Some(7), None));
        assert_eq!(m.patch_component, 3);
        // `wide-op` is optional: unlisted, it is the base profile's.
        assert_eq!(m.wide_op, CostModel::amd_gfx11().wide_op);
        let w = CostModel::parse("w.cost", "(profile w\n  (wide-op 20))").unwrap();
        assert_eq!(w.wide_op, 20);
    }

    #[test]
    fn wide_opaque_ops_cost_wide_op() {
        let m = CostModel::parse("w.cost", "(profile w (wide-op 11))").unwrap();
        use crate::ir::{OpaqueCode, OpaqueTy, Purity, ScalarTy};
        let op = |result: Option<ScalarTy>, arg: ScalarTy| OpaqueOp {
            name: "probe".into(),
            purity: Purity::Pure,
            code: OpaqueCode::Core(188),
            result: result.map(|t| (OpaqueTy::scalar(t), 0)),
            args: vec![OpaqueTy::scalar(arg); 2],
            resource: None,
        };
        let cmp64 = op(Some(ScalarTy::Bool), ScalarTy::F64);
        let to64 = op(Some(ScalarTy::I64), ScalarTy::F32);
        let atan = op(Some(ScalarTy::F32), ScalarTy::F32);
        assert_eq!(m.opaque(&cmp64), 11);
        assert_eq!(m.opaque(&to64), 11);
        assert_eq!(m.opaque(&atan), crate::egraph::OPAQUE_COST as u64);
        assert_eq!(CostModel::amd_gfx10().opaque(&cmp64), 8);
    }

    /// fp64 division, square roots and int64 division cost their measured
    /// instructions (`wide_ops`), more than `wide-op`; 32-bit ones of the same
    /// name cost `OPAQUE_COST`; a profile file can set or add one.
    #[test]
    fn wide_ops_are_priced_per_op() {
        use crate::ir::{OpaqueCode, OpaqueTy, Purity, ScalarTy};
        let op = |name: &str, t: ScalarTy| OpaqueOp {
            name: name.into(),
            purity: Purity::Pure,
            code: OpaqueCode::Core(136),
            result: Some((OpaqueTy::scalar(t), 0)),
            args: vec![OpaqueTy::scalar(t); 2],
            resource: None,
        };
        let (g10, g11) = (CostModel::amd_gfx10(), CostModel::amd_gfx11());
        assert_eq!(g10.opaque(&op("fdiv", ScalarTy::F64)), 35);
        assert_eq!(g11.opaque(&op("fdiv", ScalarTy::F64)), 43);
        assert_eq!(g10.opaque(&op("sqrt", ScalarTy::F64)), 39);
        assert_eq!(g10.opaque(&op("inversesqrt", ScalarTy::F64)), 39);
        assert_eq!(g10.opaque(&op("sdiv", ScalarTy::I64)), 755);
        assert_eq!(g10.opaque(&op("fadd", ScalarTy::F64)), g10.wide_op);
        assert_eq!(
            g10.opaque(&op("fdiv", ScalarTy::F32)),
            crate::egraph::OPAQUE_COST as u64
        );
        let m =
            CostModel::parse("w.cost", "(profile w (wide-op fdiv 3) (wide-op udiv 700))").unwrap();
        assert_eq!(m.opaque(&op("fdiv", ScalarTy::F64)), 3);
        assert_eq!(m.opaque(&op("udiv", ScalarTy::U64)), 700);
        assert_eq!(
            m.opaque(&op("sqrt", ScalarTy::F64)),
            39,
            "unlisted: the base's"
        );
    }

    #[test]
    fn bad_profiles_have_positions() {
        let e = |t: &str| CostModel::parse("p.cost", t).unwrap_err().to_string();
        assert_eq!(
            e("(profile x\n  (fs-slot many))"),
            "p.cost:2:12: error: expected a non-negative integer, found `many`"
        );
        assert!(e("(profile x (colour 3))").starts_with("p.cost:1:13: error: unknown profile key"));
        assert!(e("(profile x (weight vs 3))").starts_with("p.cost:1:20: error: unknown stage"));
        assert!(e("(profile x (base amd-gfx99))").starts_with("p.cost:1:18: error: unknown base"));
        assert!(e("(profile x) (profile y)")
            .starts_with("p.cost:1:13: error: a profile file holds one"));
        assert!(e("(profile x (fs-slot 1 2))").starts_with("p.cost:1:12: error: too many values"));
        assert!(e("").starts_with("p.cost:1:1: error: empty"));
        assert_eq!(
            e("(profile x\n  (wide-op -2))"),
            "p.cost:2:12: error: expected a non-negative integer, found `-2`"
        );
        assert!(e("(profile x (wide-op))").starts_with("p.cost:1:12: error: `wide-op` is missing"));
        assert!(e("(profile x (wide-op 8 2))")
            .starts_with("p.cost:1:21: error: expected an op name, found `8`"));
        assert!(
            e("(profile x (wide-op fdiv 8 2))").starts_with("p.cost:1:12: error: too many values")
        );
        assert!(e("(profile x (wide-op fdiv many))")
            .starts_with("p.cost:1:26: error: expected a non-negative integer"));
    }
}
