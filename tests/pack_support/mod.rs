//! Helpers shared by the packer tests: build a VS → FS pair from a list of varyings
//! and read back how the packed consumer loads an address.
#![allow(dead_code)]

use varysat::ir::{
    AluOp, BitSize, Half, InstKind, InterpMode, IoSlot, Pipeline, ShaderBuilder, Slot, Stage,
};

/// How the consumer reads a varying.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Read {
    /// `load_input`.
    Flat,
    /// `load_interpolated_input` in this mode.
    Interp(InterpMode),
}

/// One varying of a test pair: its address (the half gives the width), the consumer's
/// loads, and whether the producer stores a convergent (uniform) value.
#[derive(Clone, Debug)]
pub struct V {
    pub slot: IoSlot,
    pub reads: Vec<Read>,
    pub conv: bool,
}

impl V {
    pub fn interp(slot: IoSlot, m: InterpMode) -> V {
        V {
            slot,
            reads: vec![Read::Interp(m)],
            conv: false,
        }
    }
    pub fn interp16(slot: IoSlot, m: InterpMode) -> V {
        V::interp(slot, m)
    }
    pub fn flat(slot: IoSlot) -> V {
        V {
            slot,
            reads: vec![Read::Flat],
            conv: false,
        }
    }
    pub fn flat16(slot: IoSlot) -> V {
        V::flat(slot)
    }
    pub fn conv(slot: IoSlot, m: InterpMode) -> V {
        V {
            slot,
            reads: vec![Read::Interp(m)],
            conv: true,
        }
    }
    pub fn conv16(slot: IoSlot, m: InterpMode) -> V {
        V::conv(slot, m)
    }
    /// A convergent value the consumer reads flat.
    pub fn conv_flat(slot: IoSlot) -> V {
        V {
            slot,
            reads: vec![Read::Flat],
            conv: true,
        }
    }
    pub fn fp16(&self) -> bool {
        self.slot.half != Half::Full
    }
}

/// The FS result component number `k` (DATA0.x, DATA0.y, …).
pub fn data_out(k: usize) -> IoSlot {
    IoSlot::new(Slot::Data((k / 4 % 8) as u8), (k % 4) as u8)
}

/// A VS → FS pair: the VS stores a distinct attribute-derived value per varying (a
/// uniform for convergent ones); the FS writes every load to its own result (the
/// 32nd and later loads are summed into DATA7.w).
pub fn fs_pair(vars: &[V]) -> Pipeline {
    let mut vs = ShaderBuilder::new(Stage::Vertex);
    let mut fs = ShaderBuilder::new(Stage::Fragment);
    let mut uniforms = 0;
    let mut outs = 0usize;
    let mut acc = None;
    for (i, v) in vars.iter().enumerate() {
        let val = if v.conv {
            uniforms += 1;
            vs.uniform(uniforms - 1)
        } else {
            let a = vs.load_input(IoSlot::new(Slot::Attr((i % 16) as u8), (i / 16 % 4) as u8));
            let k = vs.f32(i as f32);
            vs.alu(AluOp::FAdd, &[a, k])
        };
        let val = if v.fp16() {
            vs.alu(AluOp::F2F16, &[val])
        } else {
            val
        };
        vs.store(v.slot, val);
        for r in &v.reads {
            let x = match r {
                Read::Flat => fs.inst(
                    InstKind::LoadInput {
                        slot: v.slot,
                        indirect: None,
                    },
                    bits(v.slot),
                ),
                Read::Interp(m) => {
                    let ops: Vec<_> = (0..m.operand_count()).map(|_| fs.f32(0.25)).collect();
                    fs.load_interpolated_at(v.slot, *m, &ops)
                }
            };
            let x = if v.fp16() {
                fs.alu(AluOp::F2F32, &[x])
            } else {
                x
            };
            if outs < 31 {
                fs.store(data_out(outs), x);
                outs += 1;
            } else {
                acc = Some(match acc {
                    None => x,
                    Some(a) => fs.alu(AluOp::FAdd, &[a, x]),
                });
            }
        }
    }
    if let Some(a) = acc {
        fs.store(data_out(31), a);
    }
    Pipeline::new(vs.finish(), fs.finish()).with_uniforms(uniforms)
}

fn bits(s: IoSlot) -> BitSize {
    if s.half == Half::Full {
        BitSize::B32
    } else {
        BitSize::B16
    }
}

/// How the packed consumer reads `slot` directly, in program order.
pub fn loads_of(p: &Pipeline, slot: IoSlot) -> Vec<Read> {
    let mut out = vec![];
    p.consumer.for_each_inst(|i| match &i.kind {
        InstKind::LoadInput {
            slot: s,
            indirect: None,
        }
        | InstKind::LoadPerVertexInput {
            slot: s,
            indirect: None,
            ..
        } if *s == slot => out.push(Read::Flat),
        InstKind::LoadInterpolatedInput {
            slot: s,
            mode,
            indirect: None,
            ..
        } if *s == slot => out.push(Read::Interp(*mode)),
        _ => {}
    });
    out
}

/// Packs `p`, checks the packed pair validates and is interpreter-equivalent to `p`,
/// and returns it with its layout.
pub fn pack_checked(
    p: &Pipeline,
    o: &varysat::internals::pack::PackOptions,
) -> (Pipeline, varysat::internals::pack::Layout) {
    let (out, l) = varysat::internals::pack::pack(p, o).unwrap_or_else(|e| panic!("pack: {e}"));
    if let Err(e) = varysat::validate::validate(&out) {
        panic!("packed pair does not validate: {e}");
    }
    let cfg = varysat::interpreter::EquivConfig::default();
    if let Err(e) = varysat::interpreter::check_equivalent(p, &out, &cfg) {
        panic!("packed pair differs: {e}");
    }
    (out, l)
}

/// The 32 combinations of the packer's five switches (no convergence hints).
pub fn option_sets() -> Vec<varysat::internals::pack::PackOptions> {
    (0..32u8)
        .map(|bits| varysat::internals::pack::PackOptions {
            flexible_interp: bits & 1 != 0,
            convergent_fill: bits & 2 != 0,
            pack_16bit: bits & 4 != 0,
            rotate_colors: bits & 8 != 0,
            mix_convergent_flat: bits & 16 != 0,
            convergent: None,
        })
        .collect()
}

/// The shipped example pairs (`examples/pairs/*.pair`), sorted by name.
pub fn example_pairs() -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pairs");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "pair"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "examples missing in {}", dir.display());
    files
}
