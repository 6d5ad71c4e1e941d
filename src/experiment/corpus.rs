//! The corpus: `.pair` files given directly or found (recursively) in directories,
//! parsed and validated, in sorted path order.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::ir::Pipeline;

/// One pair of the corpus.
#[derive(Clone, Debug)]
pub struct CorpusPair {
    /// The path it was read from, as given (directory entries joined onto it).
    pub name: String,
    /// The parsed, validated pair.
    pub pipeline: Pipeline,
}

impl CorpusPair {
    /// `producer-consumer`, e.g. `vs-fs`.
    pub fn stage_pair(&self) -> String {
        format!(
            "{}-{}",
            self.pipeline.producer.stage().keyword(),
            self.pipeline.consumer.stage().keyword()
        )
    }
}

fn io_err(path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        path: path.display().to_string(),
        source,
    }
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) -> Result<(), Error> {
    let meta = std::fs::metadata(path).map_err(|e| io_err(path, e))?;
    if !meta.is_dir() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    let entries = std::fs::read_dir(path).map_err(|e| io_err(path, e))?;
    for entry in entries {
        let p = entry.map_err(|e| io_err(path, e))?.path();
        if p.is_dir() || p.extension().is_some_and(|x| x == "pair") {
            collect(&p, out)?;
        }
    }
    Ok(())
}

/// Reads every pair under `paths`. A file named directly is read whatever its
/// extension; directories contribute their `.pair` files. Duplicates are read once.
pub fn load_corpus(paths: &[PathBuf]) -> Result<Vec<CorpusPair>, Error> {
    let mut files = vec![];
    for p in paths {
        collect(p, &mut files)?;
    }
    files.sort();
    files.dedup();
    files
        .into_iter()
        .map(|f| {
            let pipeline = crate::text::parse_file(&f)?;
            crate::validate::validate(&pipeline)?;
            Ok(CorpusPair {
                name: f.display().to_string(),
                pipeline,
            })
        })
        .collect()
}
