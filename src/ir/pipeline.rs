//! A pipeline pair: producer and consumer shader plus the uniform storage they read,
//! with which of the two stages may read each resource.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use super::{Shader, SrcLoc};

/// One stage of the pair, as a reader of a resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reader {
    /// The producer stage.
    Producer,
    /// The consumer stage.
    Consumer,
}

impl fmt::Display for Reader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Reader::Producer => "producer",
            Reader::Consumer => "consumer",
        })
    }
}

impl FromStr for Reader {
    type Err = String;
    fn from_str(s: &str) -> Result<Reader, String> {
        match s {
            "producer" => Ok(Reader::Producer),
            "consumer" => Ok(Reader::Consumer),
            _ => Err(format!("expected `producer` or `consumer`, found `{s}`")),
        }
    }
}

/// Which stages may read each resource: Vulkan's descriptor and push-constant stage
/// flags, or the stages that declare it. A resource not listed is visible to both.
/// Moving a load of a resource into a stage that cannot see it would be wrong code,
/// so the optimizer treats such a load as computable only where it is visible.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Visibility {
    /// The default uniform block (push constants), when only one stage may read it.
    pub uniforms: Option<Reader>,
    /// UBO blocks only one stage may read.
    pub ubos: BTreeMap<u32, Reader>,
}

impl Visibility {
    /// Whether `reader` may load uniform words.
    pub fn uniforms_visible_to(&self, reader: Reader) -> bool {
        self.uniforms.is_none_or(|r| r == reader)
    }

    /// Whether `reader` may load from UBO `block`.
    pub fn ubo_visible_to(&self, block: u32, reader: Reader) -> bool {
        self.ubos.get(&block).is_none_or(|r| *r == reader)
    }
}

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
    /// Which stages may read the uniforms and each UBO.
    pub visibility: Visibility,
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
            visibility: Visibility::default(),
            source: None,
        }
    }

    /// A pair with `producer` and `consumer` and a copy of this pair's declarations
    /// (uniforms, UBOs, visibility, source name).
    pub fn with_shaders(&self, producer: Shader, consumer: Shader) -> Pipeline {
        Pipeline {
            producer,
            consumer,
            uniforms: self.uniforms,
            ubos: self.ubos.clone(),
            visibility: self.visibility.clone(),
            source: self.source.clone(),
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

    /// The stage of the pair a shader of stage `stage` is.
    pub fn reader(&self, stage: super::Stage) -> Reader {
        if stage == self.producer.stage() {
            Reader::Producer
        } else {
            Reader::Consumer
        }
    }

    /// Size in bytes of a declared UBO.
    pub fn ubo_size(&self, block: u32) -> Option<u32> {
        self.ubos.iter().find(|u| u.block == block).map(|u| u.size)
    }
}
