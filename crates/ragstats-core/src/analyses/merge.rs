//! `merge`: the replicates files of a sharded bootstrap merged into the single run's
//! result ([`crate::bootstrap::analysis::merge`]).

use std::path::PathBuf;

use serde::Deserialize;

use super::overwrites;
use crate::bootstrap::replicates::Replicates;
use crate::document::{Finished, Inputs};
use crate::panel::Source;
use crate::{Error, Result};

/// The settings of [`merge`].
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct MergeSettings {
    /// Also write the merged replicates here (byte-identical to a single run's file).
    #[cfg_attr(feature = "schema", schemars(extend("format" = "path")))]
    pub out: Option<PathBuf>,
    /// The run's total number of replicates B: require the files to hold all of 0..B (a
    /// missing first or last shard leaves no gap, only a shorter range).
    pub replicates: Option<u32>,
}

/// The bootstrap run the replicates files `files` (in any order) hold together, its
/// merged replicates written to `settings.out`.
///
/// # Errors
/// [`Error::Setting`] for 0 replicates or an output that is one of the files; those of
/// reading the files and of merging them (a gap, an overlap, another run's shard).
pub fn merge(files: &Source, settings: &MergeSettings) -> Result<Finished> {
    let Source::Files(paths) = files else {
        return Err(Error::Usage(format!(
            "{}: replicates are read from the files a bootstrap wrote; give their paths",
            files.name().display()
        )));
    };
    if settings.replicates == Some(0) {
        return Err(Error::setting("replicates", "must be at least 1"));
    }
    if let Some(out) = &settings.out {
        if let Some(why) = overwrites(out, "input", paths) {
            return Err(Error::setting("out", why));
        }
    }
    let shards = paths
        .iter()
        .map(|p| Ok((p.display().to_string(), Replicates::read(p)?)))
        .collect::<Result<Vec<_>>>()?;
    let merged = crate::bootstrap::analysis::merge(shards)?;
    if let Some(total) = settings.replicates {
        merged.replicates.require_all(total)?;
    }
    if let Some(out) = &settings.out {
        merged.replicates.write(out)?;
    }
    let notes = merged.report.notes.clone();
    let inputs = Inputs::new().with_all("shards", files.names());
    Ok(Finished::new("merge", inputs, merged).with_csv_notes(&notes))
}
