//! The module being written: its global section (types, constants, variables,
//! decorations, names, capabilities) with de-duplication of scalar, vector and
//! pointer types and of constants, and the id allocator.

use std::collections::BTreeMap;

use rspirv::dr::{self, Instruction, Operand};
use rspirv::spirv::{Capability, Decoration, Op, StorageClass};

use crate::ir::BitSize;

/// The module under construction.
pub(crate) struct Globals {
    /// The module (original header sections, new functions appended at the end).
    pub m: dr::Module,
    next: u32,
    consts: BTreeMap<(u32, u32), u32>,
}

impl Globals {
    /// Wraps a module whose ids are all below `bound`.
    pub fn new(m: dr::Module, bound: u32) -> Globals {
        Globals {
            m,
            next: bound,
            consts: BTreeMap::new(),
        }
    }

    /// A fresh id.
    pub fn id(&mut self) -> u32 {
        let id = self.next;
        self.next += 1;
        id
    }

    /// One more than the largest id handed out.
    pub fn bound(&self) -> u32 {
        self.next
    }

    /// A non-aggregate type, reusing an identical declaration (SPIR-V forbids duplicates).
    pub fn ty(&mut self, op: Op, operands: Vec<Operand>) -> u32 {
        let found = self
            .m
            .types_global_values
            .iter()
            .find(|i| i.class.opcode == op && i.operands == operands && i.result_id.is_some());
        if let Some(id) = found.and_then(|i| i.result_id) {
            return id;
        }
        self.fresh_ty(op, operands)
    }

    /// An aggregate type that is always declared anew, so that layout decorations
    /// of an original declaration never leak into a new use.
    pub fn fresh_ty(&mut self, op: Op, operands: Vec<Operand>) -> u32 {
        let id = self.id();
        self.m
            .types_global_values
            .push(Instruction::new(op, None, Some(id), operands));
        id
    }

    /// `void`.
    pub fn void(&mut self) -> u32 {
        self.ty(Op::TypeVoid, vec![])
    }

    /// `bool`.
    pub fn boolean(&mut self) -> u32 {
        self.ty(Op::TypeBool, vec![])
    }

    /// An unsigned integer of `bits` (16 or 32).
    pub fn uint(&mut self, bits: u32) -> u32 {
        self.int_ty(bits, false)
    }

    /// A signed or unsigned integer type.
    pub fn int_ty(&mut self, bits: u32, signed: bool) -> u32 {
        self.sixteen_bit_arithmetic(bits);
        self.ty(
            Op::TypeInt,
            vec![
                Operand::LiteralBit32(bits),
                Operand::LiteralBit32(signed as u32),
            ],
        )
    }

    /// A float of `bits` (16 or 32).
    pub fn float(&mut self, bits: u32) -> u32 {
        self.sixteen_bit_arithmetic(bits);
        self.ty(Op::TypeFloat, vec![Operand::LiteralBit32(bits)])
    }

    /// A 16-bit value is carried as `uint16_t` and bitcast or converted where an
    /// op or declaration types it, which the storage-only capabilities of 16-bit
    /// inputs, outputs and buffer members (`StorageInputOutput16`, ...) do not
    /// allow: a module the export gives a 16-bit type declares `Int16` and
    /// `Float16`. Before, a VS with only `float16_t` outputs exported a bitcast
    /// spirv-val rejects.
    fn sixteen_bit_arithmetic(&mut self, bits: u32) {
        if bits == 16 {
            self.capability(Capability::Int16);
            self.capability(Capability::Float16);
        }
    }

    /// The type an IR value of this size is carried in: `bool`, `uint16_t` or `uint`.
    pub fn carrier(&mut self, bits: BitSize) -> u32 {
        match bits {
            BitSize::B1 => self.boolean(),
            b => self.uint(b.bits()),
        }
    }

    /// A vector type.
    pub fn vec(&mut self, elem: u32, n: u32) -> u32 {
        self.ty(
            Op::TypeVector,
            vec![Operand::IdRef(elem), Operand::LiteralBit32(n)],
        )
    }

    /// A pointer type.
    pub fn ptr(&mut self, class: StorageClass, pointee: u32) -> u32 {
        self.ty(
            Op::TypePointer,
            vec![Operand::StorageClass(class), Operand::IdRef(pointee)],
        )
    }

    /// A new array type of `len` elements.
    pub fn array(&mut self, elem: u32, len: u32) -> u32 {
        let u = self.uint(32);
        let n = self.constant(u, len);
        self.fresh_ty(Op::TypeArray, vec![Operand::IdRef(elem), Operand::IdRef(n)])
    }

    /// A constant of a scalar type (`bool` constants are `OpConstantTrue/False`).
    pub fn constant(&mut self, ty: u32, bits: u32) -> u32 {
        if let Some(id) = self.consts.get(&(ty, bits)) {
            return *id;
        }
        let id = self.id();
        let is_bool = self
            .m
            .types_global_values
            .iter()
            .any(|i| i.result_id == Some(ty) && i.class.opcode == Op::TypeBool);
        let inst = if is_bool {
            let op = if bits != 0 {
                Op::ConstantTrue
            } else {
                Op::ConstantFalse
            };
            Instruction::new(op, Some(ty), Some(id), vec![])
        } else {
            Instruction::new(
                Op::Constant,
                Some(ty),
                Some(id),
                vec![Operand::LiteralBit32(bits)],
            )
        };
        self.m.types_global_values.push(inst);
        self.consts.insert((ty, bits), id);
        id
    }

    /// A 32-bit unsigned constant.
    pub fn u32(&mut self, v: u32) -> u32 {
        let u = self.uint(32);
        self.constant(u, v)
    }

    /// A global variable of pointer type `ptr_ty`.
    pub fn variable(&mut self, ptr_ty: u32, class: StorageClass) -> u32 {
        let id = self.id();
        self.m.types_global_values.push(Instruction::new(
            Op::Variable,
            Some(ptr_ty),
            Some(id),
            vec![Operand::StorageClass(class)],
        ));
        id
    }

    /// Decorates an id.
    pub fn decorate(&mut self, id: u32, deco: Decoration, args: &[u32]) {
        let mut ops = vec![Operand::IdRef(id), Operand::Decoration(deco)];
        ops.extend(args.iter().map(|a| Operand::LiteralBit32(*a)));
        self.m
            .annotations
            .push(Instruction::new(Op::Decorate, None, None, ops));
    }

    /// Decorates an id with a built-in.
    pub fn builtin(&mut self, id: u32, b: rspirv::spirv::BuiltIn) {
        self.m.annotations.push(Instruction::new(
            Op::Decorate,
            None,
            None,
            vec![
                Operand::IdRef(id),
                Operand::Decoration(Decoration::BuiltIn),
                Operand::BuiltIn(b),
            ],
        ));
    }

    /// Decorates a struct member.
    pub fn member_decorate(&mut self, ty: u32, member: u32, deco: Decoration, args: &[u32]) {
        let mut ops = vec![
            Operand::IdRef(ty),
            Operand::LiteralBit32(member),
            Operand::Decoration(deco),
        ];
        ops.extend(args.iter().map(|a| Operand::LiteralBit32(*a)));
        self.m
            .annotations
            .push(Instruction::new(Op::MemberDecorate, None, None, ops));
    }

    /// Names an id (debug information for readers of the output).
    pub fn name(&mut self, id: u32, name: &str) {
        self.m.debug_names.push(Instruction::new(
            Op::Name,
            None,
            None,
            vec![Operand::IdRef(id), Operand::LiteralString(name.to_owned())],
        ));
    }

    /// Declares a capability unless already declared.
    pub fn capability(&mut self, cap: Capability) {
        let has = self
            .m
            .capabilities
            .iter()
            .any(|i| i.operands.first() == Some(&Operand::Capability(cap)));
        if !has {
            self.m.capabilities.push(Instruction::new(
                Op::Capability,
                None,
                None,
                vec![Operand::Capability(cap)],
            ));
        }
    }

    /// Declares an extension unless already declared.
    pub fn extension(&mut self, name: &str) {
        let has = self
            .m
            .extensions
            .iter()
            .any(|i| i.operands.first() == Some(&Operand::LiteralString(name.to_owned())));
        if !has {
            self.m.extensions.push(Instruction::new(
                Op::Extension,
                None,
                None,
                vec![Operand::LiteralString(name.to_owned())],
            ));
        }
    }

    /// The `GLSL.std.450` import, added when missing.
    pub fn glsl_std(&mut self) -> u32 {
        self.ext_import("GLSL.std.450")
    }

    /// An extended instruction set import, added when missing.
    pub fn ext_import(&mut self, set: &str) -> u32 {
        let name = Operand::LiteralString(set.to_owned());
        let found = self
            .m
            .ext_inst_imports
            .iter()
            .find(|i| i.operands.first() == Some(&name));
        if let Some(id) = found.and_then(|i| i.result_id) {
            return id;
        }
        let id = self.id();
        self.m.ext_inst_imports.push(Instruction::new(
            Op::ExtInstImport,
            None,
            Some(id),
            vec![name],
        ));
        id
    }

    /// The SPIR-V version (major, minor) of the module.
    pub fn version(&self) -> (u8, u8) {
        self.m
            .header
            .as_ref()
            .map(|h| h.version())
            .unwrap_or((1, 0))
    }
}
