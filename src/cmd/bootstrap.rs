//! `stats bootstrap`: the stratified question bootstrap of the equal-weight estimate, on
//! the CPU or GPU resample engine, with optional component refits and forecast intervals.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ragstats::bootstrap::plan::{Bootstrap, BootstrapSpec};
use ragstats::bootstrap::replicates::{data_digest, Replicates, ReplicatesHeader};
use ragstats::bootstrap::report::{build_report, BootstrapReport};
use ragstats::panel::StratumStats;
use ragstats::resample::summary::{Method, Summary};
use ragstats::resample::{select_backend_for, BackendChoice, ResampleBackend};

use super::common::{dropped_note, num, print_json, write_csv, Format, PanelOptions, Table};
use super::UsageError;

/// Flags of `stats bootstrap`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Panel file (CSV or JSONL, one row per read).
    pub panel: PathBuf,
    #[command(flatten)]
    pub opts: PanelOptions,
    #[command(flatten)]
    pub resample: ResampleArgs,
    /// Interval method.
    #[arg(long, value_enum, default_value_t = Method::Percentile)]
    pub method: Method,
    /// Confidence level of the intervals.
    #[arg(long, default_value_t = 0.95)]
    pub confidence: f64,
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
    #[arg(long, value_name = "FILE")]
    pub replicates_out: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Resampling flags shared by every command that runs the engine.
#[derive(Debug, Clone, clap::Args)]
pub struct ResampleArgs {
    /// Number of bootstrap replicates.
    #[arg(long, default_value_t = 10_000)]
    pub replicates: u32,
    /// Seed of the Philox streams (the same seed gives the same replicates on every backend).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where the resampling runs: auto picks a hardware GPU when wgpu finds one, else the CPU.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    pub backend: BackendChoice,
    /// Compute only replicates a..b of the run (for sharding; merge the shards with `stats merge`).
    #[arg(long, value_name = "A..B")]
    pub replicates_range: Option<String>,
}

impl ResampleArgs {
    /// The replicate count of a command that runs its whole bootstrap at once (only
    /// `stats bootstrap` can be sharded by replicate range).
    pub fn whole_run(&self) -> Result<u32, UsageError> {
        if self.replicates_range.is_some() {
            return Err(UsageError(
                "--replicates-range is only for `stats bootstrap`".into(),
            ));
        }
        Ok(self.range()?.end)
    }

    /// The replicate range to compute: `--replicates-range`, else `0..--replicates`.
    pub fn range(&self) -> Result<std::ops::Range<u32>, UsageError> {
        let Some(text) = &self.replicates_range else {
            if self.replicates < 2 {
                return Err(UsageError("--replicates must be at least 2".into()));
            }
            return Ok(0..self.replicates);
        };
        let bad = || {
            UsageError(format!(
                "--replicates-range '{text}': expected A..B with integers 0 <= A < B"
            ))
        };
        let (a, b) = text.split_once("..").ok_or_else(bad)?;
        let (a, b): (u32, u32) = (
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
        );
        if a >= b {
            return Err(bad());
        }
        Ok(a..b)
    }
}

/// A progress bar on stderr that appears only on a terminal and only once the work has
/// taken more than a second.
pub struct Progress {
    bar: ProgressBar,
    start: Instant,
    shown: AtomicBool,
}

impl Progress {
    pub fn new(total: u64, what: &str) -> Self {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template(
                "{msg} {bar:40} {pos}/{len} [{elapsed_precise} < {eta_precise}]",
            )
            .expect("valid template"),
        );
        bar.set_message(what.to_string());
        Progress {
            bar,
            start: Instant::now(),
            shown: AtomicBool::new(false),
        }
    }

    pub fn set(&self, done: u64) {
        if !self.shown.load(Ordering::Relaxed)
            && self.start.elapsed() > Duration::from_secs(1)
            && !self.shown.swap(true, Ordering::Relaxed)
        {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        self.bar.set_position(done);
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// Selects the backend for a job of `draws` draws (`auto` keeps small jobs on the CPU).
pub fn backend_for(choice: BackendChoice, draws: u64) -> anyhow::Result<Box<dyn ResampleBackend>> {
    Ok(select_backend_for(choice, draws)?)
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    super::common::check_confidence(args.confidence)?;
    if !args.designs.is_empty() && !args.components {
        return Err(UsageError(
            "--design needs --components (forecasts are refitted from the components)".into(),
        )
        .into());
    }
    let range = args.resample.range()?;
    let panel = args.opts.load(&args.panel)?;
    if let Some(note) = dropped_note(&panel) {
        eprintln!("{note}");
    }
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
    let engine = backend_for(args.resample.backend, draws)?;
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
            method: args.method,
            confidence: args.confidence,
            data_sha256: data_digest(&job.strata),
            plan: boot.plan.clone(),
            point: boot.point(),
            acceleration: (args.method == Method::Bca).then(|| boot.accelerations()),
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
            println!("stratified question bootstrap of {}", r.outcome);
            println!(
                "backend: {backend} ({adapter}); replicates {} ({}..{}); seed {}; {} interval {pct}",
                r.replicates,
                r.range[0],
                r.range[1],
                r.seed,
                serde_json::to_value(r.method)?.as_str().unwrap_or("")
            );
            println!(
                "estimate {}  SE {}  {pct} CI [{}, {}]\n",
                num(r.estimate),
                num(r.se),
                num(r.ci[0]),
                num(r.ci[1])
            );
            let mut t = Table::new(&["stratum", "Q", "T", "R", "mean", "SE", "CI low", "CI high"]);
            for s in &r.strata {
                t.row(vec![
                    s.name.clone(),
                    s.questions.to_string(),
                    s.trajectories.to_string(),
                    s.reads.to_string(),
                    num(s.summary.estimate),
                    num(s.summary.se),
                    num(s.summary.ci[0]),
                    num(s.summary.ci[1]),
                ]);
            }
            print!("{}", t.render());
            if let Some(c) = &r.components {
                println!("\nvariance components refitted in every replicate:");
                let mut t = Table::new(&["scope", "level", "estimate", "SE", "CI low", "CI high"]);
                for s in c.strata.iter().chain(std::iter::once(&c.pooled)) {
                    for (l, v) in [
                        ("question", &s.question),
                        ("trajectory", &s.trajectory),
                        ("read", &s.read),
                    ] {
                        let cells = match v {
                            Some(v) => vec![num(v.estimate), num(v.se), num(v.ci[0]), num(v.ci[1])],
                            None => {
                                vec!["not estimable".into(), "-".into(), "-".into(), "-".into()]
                            }
                        };
                        let mut row = vec![s.name.clone(), l.to_string()];
                        row.extend(cells);
                        t.row(row);
                    }
                }
                print!("{}", t.render());
                if !c.designs.is_empty() {
                    println!("\nforecast SE (nested) with its bootstrap interval:");
                    let mut t =
                        Table::new(&["design", "SE nested", "SE of it", "CI low", "CI high"]);
                    for d in &c.designs {
                        let v = d.se_nested.unwrap_or(Summary {
                            estimate: f64::NAN,
                            se: f64::NAN,
                            ci: [f64::NAN; 2],
                        });
                        t.row(vec![
                            d.design.clone(),
                            num(v.estimate),
                            num(v.se),
                            num(v.ci[0]),
                            num(v.ci[1]),
                        ]);
                    }
                    print!("{}", t.render());
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
        est.to_string(),
        se.to_string(),
        ci[0].to_string(),
        ci[1].to_string(),
    ]
}
