//! Parquet in a build without the `formats` feature: the same calls as `parquet.rs`,
//! each refusing the file with a message that names the feature.

use std::path::Path;

use crate::panel::{LoadOptions, Panel};
use crate::{Error, Result};

/// Refuses a Parquet panel: this build reads none.
///
/// # Errors
/// Always [`Error::Input`] naming the file and the feature.
pub fn load_parquet_panel(path: &Path, _opts: &LoadOptions) -> Result<Panel> {
    Err(Error::input(path, None, super::FORMATS_OFF.to_string()))
}

/// Refuses a Parquet table: this build reads none.
///
/// # Errors
/// Always [`Error::Input`] naming the file and the feature.
pub fn parquet_table(path: &Path) -> Result<crate::panel::memory::MemoryTable> {
    Err(Error::input(path, None, super::FORMATS_OFF.to_string()))
}
