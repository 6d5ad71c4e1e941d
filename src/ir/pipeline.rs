//! A pipeline pair: producer and consumer shader plus the uniform storage both read.

use super::{Shader, SrcLoc};

/// A uniform buffer both stages may read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UboDecl {
    /// Block index.
    pub block: u32,
    /// Size in bytes (a multiple of 4).
    pub size: u32,
    /// Source position of the declaration.
    pub loc: Option<SrcLoc>,
}

/// A linked producer → consumer pair.
#[derive(Clone, Debug, PartialEq)]
pub struct Pipeline {
    /// The earlier stage (VS, TCS, TES, GS).
    pub producer: Shader,
    /// The later stage (TCS, TES, GS, FS).
    pub consumer: Shader,
    /// Number of 32-bit words in the default uniform block.
    pub uniforms: u32,
    /// Uniform buffers.
    pub ubos: Vec<UboDecl>,
    /// Name of the file the pair came from, for diagnostics.
    pub source: Option<String>,
}

impl Pipeline {
    /// A pair with no uniforms.
    pub fn new(producer: Shader, consumer: Shader) -> Pipeline {
        Pipeline {
            producer,
            consumer,
            uniforms: 0,
            ubos: vec![],
            source: None,
        }
    }

    /// Sets the number of uniform words.
    pub fn with_uniforms(mut self, words: u32) -> Pipeline {
        self.uniforms = words;
        self
    }

    /// Adds a uniform buffer of `size` bytes.
    pub fn with_ubo(mut self, block: u32, size: u32) -> Pipeline {
        self.ubos.push(UboDecl {
            block,
            size,
            loc: None,
        });
        self
    }

    /// Size in bytes of a declared UBO.
    pub fn ubo_size(&self, block: u32) -> Option<u32> {
        self.ubos.iter().find(|u| u.block == block).map(|u| u.size)
    }
}
