//! `stats bootstrap`: the stratified question bootstrap of the equal-weight estimate, on
//! the CPU or GPU resample engine, with optional component refits and forecast intervals.

use std::path::PathBuf;

use ragstats_core::bootstrap::plan::{Bootstrap, BootstrapSpec};
use ragstats_core::bootstrap::replicates::{Replicates, ReplicatesHeader};
use ragstats_core::bootstrap::report::{build_report, BootstrapReport};
use ragstats_core::resample::summary::{Method, Summary};

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
        ragstats_core::io::refuse_overwriting_inputs(
            &[("--replicates-out", out)],
            &[("panel", &args.panel)],
        )?;
    }
    // Unbalanced strata are kept nested: the components of every replicate are refitted by
    // REML on its drawn questions.
    let panel = args.opts.load_unbalanced_noting(&args.panel)?;
    let spec = BootstrapSpec {
        components: args.components,
        designs: args.designs.clone(),
        pooled_forecast: args.pooled,
    };
    let boot = Bootstrap::from_panel(&panel, spec)?;
    let draws =
        u64::from(range.end - range.start) * panel.strata.iter().map(|s| s.q() as u64).sum::<u64>();
    let engine = args.resample.engine(draws)?;
    let progress = Progress::new(u64::from(range.end - range.start), "bootstrap");
    let values = boot.run(engine.as_ref(), args.resample.seed, range.clone(), &|d| {
        progress.set(d)
    })?;
    progress.finish();
    let reps = Replicates {
        header: ReplicatesHeader {
            seed: args.resample.seed,
            range: [range.start, range.end],
            method,
            confidence: args.resample.confidence.get(),
            data_sha256: boot.data_sha256(),
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
            out!("{}", t.to_text());
            for s in &r.strata {
                if let Some(sh) = &s.shape {
                    outln!(
                        "unbalanced {}: {} questions; trajectories per question min {} mean {:.3} max {}; reads per trajectory min {} mean {:.3} max {} (T and R above are the rounded means)",
                        s.name,
                        sh.questions,
                        sh.trajectories.min,
                        sh.trajectories.mean,
                        sh.trajectories.max,
                        sh.reads.min,
                        sh.reads.mean,
                        sh.reads.max
                    );
                }
            }
            if let Some(c) = &r.components {
                let methods = c.pooled.method.is_some();
                if methods {
                    outln!("\nvariance components refitted in every replicate on its drawn questions (REML warm-started from the full-sample fit; ANOVA for balanced strata):");
                } else {
                    outln!("\nvariance components refitted in every replicate:");
                }
                let mut head = vec!["scope", "level", "estimate", "SE", "CI low", "CI high"];
                if methods {
                    head.insert(1, "method");
                }
                let mut t = Table::new(&head);
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
                        let mut row = vec![s.name.clone()];
                        if let Some(m) = s.method {
                            row.push(m.name().to_string());
                        }
                        row.push(l.to_string());
                        row.extend(cells);
                        t.row(row);
                    }
                }
                out!("{}", t.to_text());
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
                    out!("{}", t.to_text());
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
