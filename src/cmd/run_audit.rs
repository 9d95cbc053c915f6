//! `stats run-audit`: the Appendix C checks of a `stats run` output directory.

use std::path::PathBuf;

use ragstats::run::audit::audit;
use ragstats::trajlog::read_trajectories;

use super::common::{print_json, Table};

/// Flags of `stats run-audit`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A `stats run` output directory (or its trajectories.jsonl).
    pub dir: PathBuf,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Runs `stats run-audit`.
pub fn run(a: Args) -> anyhow::Result<u8> {
    let path = if a.dir.is_dir() {
        a.dir.join("trajectories.jsonl")
    } else {
        a.dir.clone()
    };
    let logs: Vec<_> = read_trajectories(&path)?.into_iter().map(|l| l.t).collect();
    let rows = audit(&logs);
    if a.json {
        print_json(&serde_json::json!({"file": path.display().to_string(), "rows": rows}))?;
        return Ok(0);
    }
    let pct = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{:.2}", 100.0 * v));
    let mut t = Table::new(&[
        "arm",
        "selector",
        "traj",
        "valid",
        "eligible",
        "pool_alias_%",
        "packet_alias_%",
        "cand_masked",
        "packet_masked",
        "plan_fail",
        "unknown_%",
        "em",
        "f1",
    ]);
    for r in &rows {
        t.row(vec![
            r.arm.clone(),
            r.selector.clone(),
            r.trajectories.to_string(),
            r.valid_pools.to_string(),
            r.eligible.to_string(),
            pct(r.pool_alias_share),
            pct(r.packet_alias_share),
            format!("{}/{}", r.candidate_masked, r.candidate_slots),
            format!("{}/{}", r.packet_masked, r.packet_slots),
            format!("{}/{}", r.planning_failures, r.trajectories),
            pct(r.unknown_rate),
            r.em_mean.map_or("-".into(), |v| format!("{v:.4}")),
            r.f1_mean.map_or("-".into(), |v| format!("{v:.4}")),
        ]);
    }
    out!("{}", t.render());
    outln!(
        "alias: a normalised gold answer (not yes/no) in the pool / packet, over valid pools of eligible questions; masked: benchmark-URL slots; plan_fail: trajectories with a step that gave no query"
    );
    Ok(0)
}
