//! The flags of `stats correlate`.

use std::path::PathBuf;

use ragstats_core::correlate::{Method, Missing};

use super::super::common::Format;
use super::super::resample::ResampleArgs;

/// Flags of `stats correlate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// CSV file with a header row.
    pub file: PathBuf,
    /// x columns (comma-separated or repeated).
    #[arg(long, value_delimiter = ',', required = true, value_name = "COLS")]
    pub x: Vec<String>,
    /// y columns (comma-separated or repeated).
    #[arg(long, value_delimiter = ',', required = true, value_name = "COLS")]
    pub y: Vec<String>,
    /// Correlation coefficient.
    #[arg(long, value_enum, default_value_t = MethodArg::Pearson)]
    pub method: MethodArg,
    /// Treat clusters as the units (rows sharing this column's value, e.g. reads of one
    /// question): whole clusters bootstrapped, cluster-jackknife p-values and intervals.
    #[arg(long, value_name = "COL", conflicts_with = "aggregate_by")]
    pub cluster: Option<String>,
    /// Average the rows of each unit (e.g. per model) into one row before correlating.
    #[arg(long, value_name = "COL")]
    pub aggregate_by: Option<String>,
    /// Rows with a missing used cell: drop them (listwise) or fail naming the row.
    #[arg(long, value_enum, default_value_t = MissingArg::Error)]
    pub missing: MissingArg,
    /// Permutation test with this many random permutations of the y rows (0 = none; at most
    /// 10,000,000, which already resolves p-values of 1e-6).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(..=10_000_000))]
    pub permutations: u32,
    #[command(flatten)]
    pub resample: ResampleArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also draw a heatmap of r with significance marks as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

flag_enum! {
    /// `--method`.
    pub enum MethodArg => Method {
        /// Pearson's product-moment r.
        Pearson,
        /// Spearman's ρ: Pearson's r of the average ranks.
        Spearman,
        /// Point-biserial r: Pearson's r with a two-valued y coded 0/1.
        #[value(name = "pointbiserial")]
        PointBiserial,
        /// Kendall's τ-b (tie-corrected).
        Kendall,
    }
}

flag_enum! {
    /// `--missing`.
    pub enum MissingArg => Missing {
        /// Drop the row from every pair (listwise deletion) and report how many were dropped.
        Drop,
        /// Fail, naming the file, line and column.
        Error,
    }
}
