//! Flags shared by several commands.

use clap::ValueEnum;

/// Output format of a command's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    /// Human-readable table.
    #[default]
    Table,
    /// One JSON document.
    Json,
    /// Comma-separated values.
    Csv,
}
