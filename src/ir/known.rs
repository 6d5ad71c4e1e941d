//! Known uniform storage: words of the default uniform block and of uniform buffers
//! whose values are fixed for one specialization of a pair. The optimizer inlines
//! them (`crate::specialize`) and the interpreter binds them in place of its seeded
//! values, so a specialized pair can be run against its original on equal inputs.

use std::collections::BTreeMap;
use std::fmt;

use super::Pipeline;

/// A 32-bit word of uniform storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum UniformWord {
    /// Word `index` of the default uniform block.
    Uniform(u32),
    /// The word at byte `offset` of uniform buffer `block`.
    Ubo {
        /// Block index.
        block: u32,
        /// Byte offset (a multiple of 4).
        offset: u32,
    },
}

impl fmt::Display for UniformWord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UniformWord::Uniform(i) => write!(f, "uniform {i}"),
            UniformWord::Ubo { block, offset } => write!(f, "ubo {block}:{offset}"),
        }
    }
}

/// Uniform words with known values (bit patterns), in word order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KnownUniforms {
    words: BTreeMap<UniformWord, u32>,
}

impl KnownUniforms {
    /// No known words.
    pub fn new() -> KnownUniforms {
        KnownUniforms::default()
    }

    /// Whether no word is known.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// Number of known words.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Sets the value of a word; returns the value it had, if any.
    pub fn insert(&mut self, word: UniformWord, bits: u32) -> Option<u32> {
        self.words.insert(word, bits)
    }

    /// Builder form of [`KnownUniforms::insert`] for a default-block word.
    pub fn with_uniform(mut self, index: u32, bits: u32) -> KnownUniforms {
        self.insert(UniformWord::Uniform(index), bits);
        self
    }

    /// Builder form of [`KnownUniforms::insert`] for a UBO word.
    pub fn with_ubo(mut self, block: u32, offset: u32, bits: u32) -> KnownUniforms {
        self.insert(UniformWord::Ubo { block, offset }, bits);
        self
    }

    /// The value of a word, when known.
    pub fn get(&self, word: UniformWord) -> Option<u32> {
        self.words.get(&word).copied()
    }

    /// Every known word and its value, in word order.
    pub fn iter(&self) -> impl Iterator<Item = (UniformWord, u32)> + '_ {
        self.words.iter().map(|(w, v)| (*w, *v))
    }

    /// Why a word cannot be known in `p`: it lies outside the declared uniform
    /// storage, where every load is undefined.
    pub fn out_of_range(p: &Pipeline, word: UniformWord) -> Option<String> {
        match word {
            UniformWord::Uniform(i) if i >= p.uniforms => Some(format!(
                "uniform {i} is not declared (the pair has {} uniform words)",
                p.uniforms
            )),
            UniformWord::Ubo { block, offset } => match p.ubo_size(block) {
                None => Some(format!("uniform buffer {block} is not declared")),
                Some(_) if offset % 4 != 0 => {
                    Some(format!("ubo offset {offset} is not a multiple of 4"))
                }
                Some(size) if offset >= size => Some(format!(
                    "ubo offset {offset} is outside block {block} ({size} bytes)"
                )),
                Some(_) => None,
            },
            UniformWord::Uniform(_) => None,
        }
    }
}
