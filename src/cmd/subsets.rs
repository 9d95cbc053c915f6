//! `stats subsets`: the measured SE of every trajectory × read subset of a depth panel,
//! configuration means beside the audit's nested and Q-only forecasts, the forecasts' MAEs
//! and a bootstrap interval for the MAE advantage.

use std::path::{Path, PathBuf};

use ragstats_core::allocation::subsets::{SubsetReport, SubsetStudy};
use ragstats_core::components::forecast::Audit;
use ragstats_core::panel::Panel;

use super::common::{num, print_json, summary_cells, write_csv, Format, PanelOptions, Table};
use super::resample::{Progress, ResampleArgs};
use super::variance::report_for;

/// Flags of `stats subsets`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Depth panel (CSV or JSONL, one row per read): every trajectory and read subset is evaluated.
    pub panel: PathBuf,
    /// Audit the forecasts come from: a panel (read with the same --metric/--contrast/--arm)
    /// or a components file written by `stats variance --format json`.
    #[arg(long, value_name = "FILE")]
    pub audit: PathBuf,
    /// Configurations with fewer trajectories t′ are shown but left out of the MAEs.
    #[arg(long, default_value_t = 1)]
    pub min_trajectories: usize,
    #[command(flatten)]
    pub opts: PanelOptions,
    #[command(flatten)]
    pub resample: ResampleArgs,
    /// List every subset's measured SE (table and CSV: instead of the configurations; JSON: in addition).
    #[arg(long)]
    pub per_subset: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also draw the configurations' SE against t′ as SVG: measured with intervals, nested
    /// and Q-only forecasts.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

/// An audit from a components JSON (an object with `strata`) or else from a panel.
fn load_audit(path: &Path, opts: &PanelOptions) -> anyhow::Result<Audit> {
    let text = ragstats_core::io::read_text(path)?;
    let is_components = serde_json::from_str::<serde_json::Value>(&text)
        .map(|v| v.get("strata").is_some())
        .unwrap_or(false);
    if is_components {
        Ok(Audit::from_variance_json(&text, path)?)
    } else {
        Ok(Audit::from_report(&report_for(&opts.load(path)?)?))
    }
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let range = 0..args.resample.replicates()?;
    let panel = args.opts.load_noting_drops(&args.panel)?;
    let audit = load_audit(&args.audit, &args.opts)?;
    let study = SubsetStudy::new(&panel.strata, &audit, args.min_trajectories)?;
    let draws = study.work_units(u64::from(range.end - range.start))
        * panel.strata.iter().map(|s| s.q() as u64).sum::<u64>();
    let engine = args.resample.engine(draws)?;
    let progress = Progress::new(
        study.work_units(u64::from(range.end - range.start)),
        "subsets",
    );
    let report = study.run(
        engine.as_ref(),
        args.resample.seed,
        range,
        args.resample.confidence.get(),
        &|d| progress.set(d),
    )?;
    progress.finish();
    if let Some(p) = &args.plot {
        let caption = super::figure::panel_caption(
            &args.panel,
            &panel.outcome,
            Some((report.seed, u64::from(report.range[1] - report.range[0]))),
        );
        let svg = ragstats_plot::subsets(&report, &caption)?;
        super::figure::write_svg(p, &svg, &[&args.panel, &args.audit])?;
    }
    let subsets = args.per_subset.then(|| study.point_subsets());
    let labels = |idx: &[usize], names: &[String]| {
        idx.iter()
            .map(|&i| names[i].as_str())
            .collect::<Vec<_>>()
            .join("+")
    };
    let first = &panel.strata[0];
    let subset_rows = || -> Vec<Vec<String>> {
        subsets
            .iter()
            .flatten()
            .map(|s| {
                vec![
                    s.trajectories.len().to_string(),
                    s.reads.len().to_string(),
                    labels(&s.trajectories, &first.trajectories),
                    labels(&s.reads, &first.reads),
                    s.se.to_string(),
                ]
            })
            .collect()
    };
    match args.format {
        Format::Json => {
            let mut v = serde_json::to_value(&report)?;
            v["outcome"] = panel.outcome.clone().into();
            v["backend"] = engine.name().into();
            v["adapter"] = engine.description().into();
            if let Some(s) = &subsets {
                v["subsets"] = serde_json::to_value(s)?;
            }
            print_json(&v)?;
        }
        Format::Csv if args.per_subset => write_csv(
            &["t", "r", "trajectories", "reads", "se_measured"],
            &subset_rows(),
        )?,
        Format::Csv => write_csv(
            &[
                "t",
                "r",
                "subsets",
                "se_measured",
                "se_measured_se",
                "ci_low",
                "ci_high",
                "se_nested",
                "se_q_only",
                "in_mae",
            ],
            &report
                .configurations
                .iter()
                .map(|c| {
                    vec![
                        c.trajectories.to_string(),
                        c.reads.to_string(),
                        c.subsets.to_string(),
                        c.se_measured.estimate.to_string(),
                        c.se_measured.se.to_string(),
                        c.se_measured.ci[0].to_string(),
                        c.se_measured.ci[1].to_string(),
                        c.se_nested.to_string(),
                        c.se_q_only.to_string(),
                        c.in_mae.to_string(),
                    ]
                })
                .collect::<Vec<_>>(),
        )?,
        Format::Table => {
            print_header(&report, &panel, engine.name(), &engine.description())?;
            if args.per_subset {
                let mut t = Table::new(&["t'", "r'", "trajectories", "reads", "SE measured"]);
                for mut row in subset_rows() {
                    let se: f64 = row[4].parse().unwrap_or(f64::NAN);
                    row[4] = num(se);
                    t.row(row);
                }
                out!("{}", t.to_text());
            } else {
                print_configs(&report)?;
            }
        }
    }
    Ok(0)
}

fn print_header(
    r: &SubsetReport,
    panel: &Panel,
    backend: &str,
    adapter: &str,
) -> std::io::Result<()> {
    let strata: Vec<String> = r.strata.iter().map(|(n, q)| format!("{n} Q={q}")).collect();
    let pairs = ((1usize << r.trajectories) - 1) * ((1usize << r.reads) - 1);
    outln!(
        "subset enumeration of {} ({}; T={}, R={}; {pairs} subset pairs)",
        panel.outcome,
        strata.join(", "),
        r.trajectories,
        r.reads
    );
    outln!(
        "backend: {backend} ({adapter}); replicates {} ({}..{}); seed {}; {} engine calls per replicate; percentile {}% intervals\n",
        r.range[1] - r.range[0],
        r.range[0],
        r.range[1],
        r.seed,
        r.engine_calls,
        100.0 * r.confidence
    );
    Ok(())
}

fn print_configs(r: &SubsetReport) -> std::io::Result<()> {
    let mut t = Table::new(&[
        "t'",
        "r'",
        "subsets",
        "SE measured",
        "SE of it",
        "CI low",
        "CI high",
        "SE nested",
        "SE Q-only",
        "in MAE",
    ]);
    for c in &r.configurations {
        let mut row = vec![
            c.trajectories.to_string(),
            c.reads.to_string(),
            c.subsets.to_string(),
        ];
        row.extend(summary_cells(&c.se_measured));
        row.extend([
            num(c.se_nested),
            num(c.se_q_only),
            if c.in_mae { "yes" } else { "no" }.into(),
        ]);
        t.row(row);
    }
    out!("{}", t.to_text());
    let pct = format!("{}%", 100.0 * r.confidence);
    outln!(
        "\nMAE over configurations with t' >= {} (forecasts fixed; the audit is not resampled):",
        r.min_trajectories
    );
    let mut t = Table::new(&[
        "statistic",
        "estimate",
        "SE",
        &format!("{pct} CI low"),
        "CI high",
    ]);
    for (name, s) in [
        ("MAE nested", &r.mae_nested),
        ("MAE Q-only", &r.mae_q_only),
        ("advantage (Q-only - nested)", &r.advantage),
    ] {
        let mut row = vec![name.to_string()];
        row.extend(summary_cells(s));
        t.row(row);
    }
    out!("{}", t.to_text());
    Ok(())
}
