//! Parquet panels: the file's row groups streamed as Arrow record batches (snappy- or
//! zstd-compressed, as pandas, pyarrow and polars write them) into the Arrow panel loader
//! ([`crate::panel::arrow`]), so keys, scores and errors follow the CSV loader's rules, a
//! row being named by its 1-based position in the file.

use std::path::Path;

use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::panel::{LoadOptions, Panel};
use crate::{Error, Result};

/// Rows per record batch: large enough that the Arrow loader splits each batch over all
/// threads, small enough that a batch's columns stay a small part of the panel's memory.
const BATCH_ROWS: usize = 1 << 20;

/// Loads a panel from a Parquet file.
///
/// # Errors
/// [`Error::Input`] naming the file for a file Parquet cannot read (truncated, an unknown
/// codec), with the row for a row group that fails to decode, and every error of
/// [`crate::panel::arrow::load_panel_arrow`]; [`Error::Io`] when the file cannot be opened.
pub fn load_parquet_panel(path: &Path, opts: &LoadOptions) -> Result<Panel> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| Error::input(path, None, format!("not a readable Parquet file: {e}")))?;
    let schema = builder.schema().clone();
    let reader = builder
        .with_batch_size(BATCH_ROWS)
        .build()
        .map_err(|e| Error::input(path, None, format!("not a readable Parquet file: {e}")))?;
    let mut panel =
        crate::panel::arrow::load_panel_arrow(&path.to_string_lossy(), &schema, reader, opts)?;
    panel.source = path.to_path_buf();
    Ok(panel)
}

/// The Parquet file at `path` as an in-memory table (every record batch read), for the
/// analyses that read one panel several times ([`super::panel_rows`]).
///
/// # Errors
/// As [`load_parquet_panel`] for a file Parquet cannot read or decode.
pub fn parquet_table(path: &Path) -> Result<crate::panel::memory::MemoryTable> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| Error::input(path, None, format!("not a readable Parquet file: {e}")))?;
    let schema = builder.schema().clone();
    let reader = builder
        .with_batch_size(BATCH_ROWS)
        .build()
        .map_err(|e| Error::input(path, None, format!("not a readable Parquet file: {e}")))?;
    let batches = reader
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| Error::input(path, None, format!("reading the Parquet file failed: {e}")))?;
    Ok(crate::panel::memory::MemoryTable { schema, batches })
}
