//! Loads a panel (CSV, JSONL, Parquet, or evaluation logs) and prints the variance
//! analysis's estimate and SE: `stats variance PANEL --arm ARM` without the CLI's GPU and
//! search dependencies, so the loader can be measured in a release build of this crate
//! alone (docs/BENCHMARKS.md, "Parquet vs CSV").
//!
//! `cargo run --release -p ragstats-core --example load_panel -- big.parquet open`

use ragstats_core::components::variance::analyse_panel;
use ragstats_core::import::{load_panel, ImportOptions};
use ragstats_core::panel::LoadOptions;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: load_panel PANEL [ARM]")?;
    let opts = LoadOptions {
        arm: args.next(),
        allow_unbalanced: true,
        ..LoadOptions::default()
    };
    let panel = load_panel(path.as_ref(), &opts, &ImportOptions::default())?;
    let report = analyse_panel(&panel)?;
    println!("estimate {:?} se {:?}", report.estimate, report.se);
    Ok(())
}
