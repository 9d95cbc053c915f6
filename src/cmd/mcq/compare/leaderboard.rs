//! `stats mcq compare A B C …`: three or more results files — each file's scores, every
//! pair's deltas and the tests of its ΔEM adjusted over the pairs (and, with `--mcnemar`,
//! McNemar's on independent pairs) ([`ragstats_core::mcq::leaderboard`]).

use ragstats_core::mcq::leaderboard::leaderboard_clustered;
use ragstats_core::mcq::score::scored_items;

use super::super::boot::load_results;
use super::Args;
use crate::cmd::render::Finished;
use crate::cmd::UsageError;

/// Loads every file and runs the leaderboard.
pub fn outcome(a: &Args) -> anyhow::Result<Finished> {
    if a.plot.is_some() {
        return Err(UsageError(
            "--plot draws two files' comparison; with three or more files use --format json".into(),
        )
        .into());
    }
    let settings = a.settings()?;
    let (items, clusters) = a.boot.load_items()?;
    let paths: Vec<&std::path::PathBuf> = [&a.a, &a.b].into_iter().chain(&a.more).collect();
    let mut files = Vec::with_capacity(paths.len());
    let mut rows = 0;
    for p in &paths {
        let results = load_results(p, items.as_ref())?;
        rows = rows.max(scored_items(
            &results,
            settings.boot.failures,
            &p.display().to_string(),
        )?);
        files.push((p.display().to_string(), results));
    }
    // The engine is sized by the largest bootstrap; every one of the k + k(k-1)/2 runs on it.
    let report = a.boot.with_engine(rows, |engine, progress| {
        Ok(leaderboard_clustered(
            &files,
            &settings,
            clusters.as_ref(),
            engine,
            progress,
        )?)
    })?;
    let inputs = ragstats_core::document::Inputs::new()
        .with_all("results", paths.iter().map(|p| p.display()));
    Ok(crate::cmd::render::finished("mcq compare", inputs, report))
}
