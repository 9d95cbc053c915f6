//! The batch policy flags shared by `stats llm batch`, `stats mcq run`, `stats mcq generate`
//! and `stats judge`.

use std::path::PathBuf;

/// Batch policy flags shared by `stats llm batch` and `stats mcq run`.
#[derive(Debug, clap::Args)]
pub struct BatchPolicy {
    /// Requests in flight at once.
    #[arg(long, default_value_t = 8)]
    pub concurrency: usize,
    /// Requests-per-minute ceiling (every attempt counts).
    #[arg(long)]
    pub rpm: Option<u64>,
    /// Tokens-per-minute ceiling (estimated before sending, corrected by reported usage).
    #[arg(long)]
    pub tpm: Option<u64>,
    /// Cost ledger JSONL to append one row per billed call to.
    #[arg(long)]
    pub ledger: Option<PathBuf>,
    /// Do not read or write the response cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Response cache directory.
    #[arg(long, default_value = ".stats-cache/llm")]
    pub cache_dir: PathBuf,
    /// Seconds between progress lines on stderr when it is not a terminal (a log file); a
    /// terminal gets a progress bar instead.
    #[arg(long, value_name = "SECS", default_value_t = 5.0, value_parser = progress_secs)]
    pub progress_every: f64,
}

/// `--progress-every`: a positive number of seconds.
pub fn progress_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 86_400.0 => Ok(v),
        _ => Err(format!("'{s}': expected seconds between 0 and 86400")),
    }
}
