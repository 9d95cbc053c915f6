//! `stats bootstrap`: the stratified question bootstrap of the equal-weight estimate, on
//! the CPU or GPU resample engine, with optional component refits and forecast intervals.

use std::path::PathBuf;

use ragstats::bootstrap::plan::{Bootstrap, BootstrapSpec};
use ragstats::bootstrap::replicates::{data_digest, Replicates, ReplicatesHeader};
use ragstats::bootstrap::report::{build_report, BootstrapReport};
use ragstats::panel::StratumStats;
use ragstats::resample::summary::{Method, Summary};

use super::common::{
    by_selector, csv_num, design_cells, num, print_json, summary_cells, undefined_because,
    write_csv, By, Format, PanelOptions, Table,
};
use super::resample::{Progress, ResampleArgs};
use super::UsageError;

/// Flags of `stats bootstrap`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Panel file (CSV or JSONL, one row per read).
    pub panel: PathBuf,
    #[command(flatten)]
    pub opts: PanelOptions,
    /// Report each selector of the panel's `selector` column, then their average.
    #[arg(long, value_enum, value_name = "selector")]
    pub by: Option<By>,
    #[command(flatten)]
    pub resample: ResampleArgs,
    /// Compute only replicates A..B of the run (for sharding; merge the shards with `stats merge`).
    #[arg(long, value_name = "A..B")]
    pub replicates_range: Option<ReplicateRange>,
    /// Interval method.
    #[arg(long, value_enum, default_value_t = MethodArg::Percentile)]
    pub method: MethodArg,
    /// Also refit per-stratum and pooled variance components in every replicate.
    #[arg(long)]
    pub components: bool,
    /// With --components: the forecast nested SE of this design (Q:T:R) in every replicate. Repeatable.
    #[arg(long = "design", value_name = "Q:T:R")]
    pub designs: Vec<String>,
    /// Forecast designs from the pooled components instead of each stratum's.
    #[arg(long)]
    pub pooled: bool,
    /// Write every replicate's statistics to FILE (merge shards with `stats merge`).
    #[arg(long, value_name = "FILE", conflicts_with = "by")]
    pub replicates_out: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// `--replicates-range A..B`: replicates A to B−1 of the run (0 ≤ A < B).
#[derive(Debug, Clone, PartialEq)]
pub struct ReplicateRange(std::ops::Range<u32>);

impl std::str::FromStr for ReplicateRange {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || "expected A..B with integers 0 <= A < B".to_string();
        let (a, b) = s.split_once("..").ok_or_else(bad)?;
        let (a, b): (u32, u32) = (
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
        );
        if a >= b {
            return Err(bad());
        }
        let max = super::resample::MAX_REPLICATES;
        if b - a > max {
            return Err(format!(
                "{} replicates in one run; at most {max} are allowed (split the range)",
                b - a
            ));
        }
        Ok(ReplicateRange(a..b))
    }
}

flag_enum! {
    /// `--method`.
    pub enum MethodArg => Method {
        /// [q(α/2), q(1−α/2)] of the replicates (linear, type-7 quantiles).
        Percentile,
        /// [2θ̂ − q(1−α/2), 2θ̂ − q(α/2)].
        Basic,
        /// Bias-corrected and accelerated (Efron 1987), acceleration from the stratified jackknife.
        Bca,
    }
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    if args.by == Some(By::Selector) {
        return by_selector(&args.panel, &args.opts, args.format, |opts| {
            run_one(Args {
                opts,
                by: None,
                ..args.clone()
            })
        });
    }
    run_one(args)
}

fn run_one(args: Args) -> anyhow::Result<u8> {
    if !args.designs.is_empty() && !args.components {
        return Err(UsageError(
            "--design needs --components (forecasts are refitted from the components)".into(),
        )
        .into());
    }
    let range = match &args.replicates_range {
        Some(r) => r.0.clone(),
        None => 0..args.resample.replicates()?,
    };
    let method = Method::from(args.method);
    if let Some(out) = &args.replicates_out {
        ragstats::io::refuse_overwriting_inputs(
            &[("--replicates-out", out)],
            &[("panel", &args.panel)],
        )?;
    }
    let panel = args.opts.load_noting_drops(&args.panel)?;
    let stats: Vec<StratumStats> = panel
        .strata
        .iter()
        .map(StratumStats::from_stratum)
        .collect();
    let spec = BootstrapSpec {
        components: args.components,
        designs: args.designs.clone(),
        pooled_forecast: args.pooled,
    };
    let boot = Bootstrap::new(&panel.outcome, &stats, spec)?;
    let draws =
        u64::from(range.end - range.start) * stats.iter().map(|s| s.q() as u64).sum::<u64>();
    let engine = args.resample.engine(draws)?;
    let progress = Progress::new(u64::from(range.end - range.start), "bootstrap");
    let values = boot.run(engine.as_ref(), args.resample.seed, range.clone(), &|d| {
        progress.set(d)
    })?;
    progress.finish();
    let job = boot.job(args.resample.seed, range.clone());
    let reps = Replicates {
        header: ReplicatesHeader {
            seed: args.resample.seed,
            range: [range.start, range.end],
            method,
            confidence: args.resample.confidence.get(),
            data_sha256: data_digest(&job.strata),
            plan: boot.plan.clone(),
            point: boot.point(),
            acceleration: (method == Method::Bca).then(|| boot.accelerations()),
        },
        values,
    };
    if let Some(path) = &args.replicates_out {
        reps.write(path)?;
    }
    let report = build_report(&reps);
    print_report(&report, engine.name(), &engine.description(), args.format)?;
    Ok(0)
}

/// Prints a report in the chosen format, naming the backend and adapter that ran it.
pub fn print_report(
    r: &BootstrapReport,
    backend: &str,
    adapter: &str,
    format: Format,
) -> anyhow::Result<()> {
    match format {
        Format::Json => {
            let mut v = serde_json::to_value(r)?;
            v["backend"] = backend.into();
            v["adapter"] = adapter.into();
            print_json(&v)
        }
        Format::Csv => {
            let mut rows = vec![row("estimate", "", r.estimate, r.se, r.ci)];
            for s in &r.strata {
                rows.push(row(
                    "mean",
                    &s.name,
                    s.summary.estimate,
                    s.summary.se,
                    s.summary.ci,
                ));
            }
            if let Some(c) = &r.components {
                for s in c.strata.iter().chain(std::iter::once(&c.pooled)) {
                    for (l, v) in [
                        ("question", &s.question),
                        ("trajectory", &s.trajectory),
                        ("read", &s.read),
                    ] {
                        if let Some(v) = v {
                            rows.push(row(
                                &format!("component.{l}"),
                                &s.name,
                                v.estimate,
                                v.se,
                                v.ci,
                            ));
                        }
                    }
                }
                for d in &c.designs {
                    if let Some(v) = &d.se_nested {
                        rows.push(row("se_nested", &d.design, v.estimate, v.se, v.ci));
                    }
                }
            }
            write_csv(
                &["statistic", "scope", "estimate", "se", "ci_low", "ci_high"],
                &rows,
            )
        }
        Format::Table => {
            let pct = format!("{}%", 100.0 * r.confidence);
            outln!("stratified question bootstrap of {}", r.outcome);
            outln!(
                "backend: {backend} ({adapter}); replicates {} ({}..{}); seed {}; {} interval {pct}",
                r.replicates,
                r.range[0],
                r.range[1],
                r.seed,
                serde_json::to_value(r.method)?.as_str().unwrap_or("")
            );
            outln!(
                "estimate {}  SE {}  {pct} CI [{}, {}]\n",
                num(r.estimate),
                match &r.se_undefined {
                    Some(why) => undefined_because(why),
                    None => num(r.se),
                },
                num(r.ci[0]),
                num(r.ci[1])
            );
            let mut t = Table::new(&["stratum", "Q", "T", "R", "mean", "SE", "CI low", "CI high"]);
            for s in &r.strata {
                let mut row = design_cells(&s.name, s.questions, s.trajectories, s.reads);
                row.extend(summary_cells(&s.summary));
                t.row(row);
            }
            out!("{}", t.render());
            if let Some(c) = &r.components {
                outln!("\nvariance components refitted in every replicate:");
                let mut t = Table::new(&["scope", "level", "estimate", "SE", "CI low", "CI high"]);
                for s in c.strata.iter().chain(std::iter::once(&c.pooled)) {
                    for (l, v) in [
                        ("question", &s.question),
                        ("trajectory", &s.trajectory),
                        ("read", &s.read),
                    ] {
                        let cells = match v {
                            Some(v) => summary_cells(v).to_vec(),
                            None => {
                                vec!["not estimable".into(), "-".into(), "-".into(), "-".into()]
                            }
                        };
                        let mut row = vec![s.name.clone(), l.to_string()];
                        row.extend(cells);
                        t.row(row);
                    }
                }
                out!("{}", t.render());
                for s in c.strata.iter().chain(std::iter::once(&c.pooled)) {
                    for why in s.undefined.values() {
                        outln!("  not estimable in {}: {why}", s.name);
                    }
                }
                if !c.designs.is_empty() {
                    outln!("\nforecast SE (nested) with its bootstrap interval:");
                    let mut t =
                        Table::new(&["design", "SE nested", "SE of it", "CI low", "CI high"]);
                    for d in &c.designs {
                        let v = d.se_nested.unwrap_or(Summary {
                            estimate: f64::NAN,
                            se: f64::NAN,
                            ci: [f64::NAN; 2],
                        });
                        let mut row = vec![d.design.clone()];
                        row.extend(summary_cells(&v));
                        t.row(row);
                    }
                    out!("{}", t.render());
                    for d in &c.designs {
                        if let Some(why) = &d.undefined {
                            outln!("  {} undefined: {why}", d.design);
                        }
                    }
                }
            }
            Ok(())
        }
    }
}

fn row(stat: &str, scope: &str, est: f64, se: f64, ci: [f64; 2]) -> Vec<String> {
    vec![
        stat.into(),
        scope.into(),
        csv_num(est),
        csv_num(se),
        csv_num(ci[0]),
        csv_num(ci[1]),
    ]
}
