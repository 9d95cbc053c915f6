//! `stats consistency`: answer disagreement across repeated reads by group, and the ratio
//! of one-read SEs between two groups.

use std::path::PathBuf;

use ragstats_core::allocation::consistency::{
    disagreement, precision, GroupPrecision, ReadAnswer, SeRatio,
};
use ragstats_core::panel::records::read_records;
use ragstats_core::panel::{load_panel, LoadOptions};

use super::common::{
    csv_num, fixed, num, print_json, undefined_because, write_csv, Format, PanelOptions, Table,
};
use super::resample::{Progress, ResampleArgs};
use super::UsageError;

/// Flags of `stats consistency`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Reads with fixed packets (CSV or JSONL): dataset, question, trajectory, read, answer,
    /// the grouping column, and optionally arm and a score column.
    pub reads: PathBuf,
    /// Grouping column (e.g. temperature).
    #[arg(long, value_name = "COLUMN")]
    pub by: String,
    /// Column holding the answer text.
    #[arg(long, value_name = "COLUMN", default_value = "answer")]
    pub answer_column: String,
    /// The two groups whose one-read SEs to compare, as A,B (default: the first two in file order).
    #[arg(long, value_name = "A,B")]
    pub compare: Option<String>,
    #[command(flatten)]
    pub opts: PanelOptions,
    #[command(flatten)]
    pub resample: ResampleArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also draw the disagreement rate and one-read SE by group and the SE ratio with its
    /// interval as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let reps = args.resample.replicates()?;
    let cols = [
        args.by.as_str(),
        "dataset",
        "question",
        "trajectory",
        "arm",
        args.answer_column.as_str(),
    ];
    let records = read_records(
        &args.reads,
        &cols,
        &[args.by.as_str(), "question", args.answer_column.as_str()],
    )?;
    if args.opts.metric.as_deref() == Some(args.by.as_str()) {
        return Err(UsageError(format!(
            "--metric {0} is the --by column: the score is constant within each group, so its one-read SE is 0 and the SE ratio is 0/0; choose a score column",
            args.by
        ))
        .into());
    }
    let mut groups: Vec<String> = Vec::new();
    let rows: Vec<ReadAnswer> = records
        .into_iter()
        .map(|r| {
            let f = |i: usize| r.fields[i].clone().unwrap_or_default();
            if !groups.contains(&f(0)) {
                groups.push(f(0));
            }
            ReadAnswer {
                group: f(0),
                cell: (f(1), f(2), f(3), f(4)),
                answer: f(5),
            }
        })
        .collect();
    let dis = disagreement(&rows);
    let chosen: Vec<String> = match &args.compare {
        Some(s) => {
            let v: Vec<String> = s.split(',').map(|x| x.trim().to_string()).collect();
            if v.len() != 2 {
                return Err(UsageError(format!("--compare '{s}': expected two groups A,B")).into());
            }
            if let Some(g) = v.iter().find(|g| !groups.contains(g)) {
                return Err(UsageError(format!(
                    "--compare: no group '{g}' in column '{}' (groups: {})",
                    args.by,
                    groups.join(", ")
                ))
                .into());
            }
            v
        }
        None => groups.clone(),
    };
    let mut panels = Vec::new();
    for g in &chosen {
        let opts = LoadOptions {
            metric: args.opts.metric.clone(),
            contrast: args.opts.contrast.clone(),
            arm: args.opts.arm.clone(),
            drop_incomplete: args.opts.drop_incomplete,
            allow_unbalanced: false,
            filter: Some((args.by.clone(), g.clone())),
            selector: args.opts.selector.clone(),
        };
        panels.push((g.clone(), load_panel(&args.reads, &opts)?));
    }
    let engine = args.resample.engine(
        2 * reps as u64
            * panels
                .iter()
                .flat_map(|p| p.1.strata.iter())
                .map(|s| s.q() as u64)
                .sum::<u64>(),
    )?;
    let progress = Progress::new(2 * reps as u64, "consistency");
    let (prec, ratio) = precision(
        &panels,
        engine.as_ref(),
        args.resample.seed,
        reps,
        args.resample.confidence.get(),
        &|d| progress.set(d),
    )?;
    progress.finish();
    if let Some(p) = &args.plot {
        let caption = super::figure::caption(
            Some(&args.reads),
            &args.opts,
            Some((args.resample.seed, reps as u64)),
        );
        let svg = ragstats_plot::consistency(&dis, &prec, ratio.as_ref(), &caption)?;
        super::figure::write_svg(p, &svg, &[args.reads.as_path()])?;
    }
    match args.format {
        Format::Json => print_json(&serde_json::json!({
            "by": args.by,
            "disagreement": dis,
            "precision": prec,
            "se_ratio": ratio.as_ref().map(|r| {
                let mut v = serde_json::to_value(r).unwrap_or_default();
                if let Some(why) = ratio_undefined(r, &prec) {
                    v["undefined"] = why.into();
                }
                v
            }),
            "outcome": panels.first().map(|p| p.1.outcome.clone()),
            "backend": engine.name(),
            "adapter": engine.description(),
            "replicates": reps,
            "seed": args.resample.seed,
        }))?,
        Format::Csv => {
            let rows: Vec<Vec<String>> = dis
                .iter()
                .map(|d| {
                    let se = prec
                        .iter()
                        .find(|p| p.group == d.group)
                        .map(|p| csv_num(p.one_read_se))
                        .unwrap_or_default();
                    vec![
                        d.group.clone(),
                        d.cells.to_string(),
                        d.disagreeing.to_string(),
                        d.rate.to_string(),
                        se,
                    ]
                })
                .collect();
            write_csv(
                &["group", "cells", "disagreeing", "rate", "one_read_se"],
                &rows,
            )?;
        }
        Format::Table => {
            let mut t = Table::new(&[&args.by, "cells", "disagreeing", "rate", "one-read SE"]);
            for d in &dis {
                let se = prec
                    .iter()
                    .find(|p| p.group == d.group)
                    .map(|p| num(p.one_read_se))
                    .unwrap_or_else(|| "-".into());
                t.row(vec![
                    d.group.clone(),
                    d.cells.to_string(),
                    d.disagreeing.to_string(),
                    format!("{:.2}%", 100.0 * d.rate),
                    se,
                ]);
            }
            out!("{}", t.to_text());
            if let Some(r) = ratio {
                let value = match ratio_undefined(&r, &prec) {
                    Some(why) => undefined_because(&why),
                    None => format!(
                        "{:.3} [{}, {}]",
                        r.ratio,
                        fixed(r.ci[0], 3),
                        fixed(r.ci[1], 3)
                    ),
                };
                outln!(
                    "\none-read SE ratio {}/{} = {value} ({} bootstrap, {reps} replicates on {} ({}), {})",
                    r.numerator,
                    r.denominator,
                    args.resample.confidence.percent(),
                    engine.name(),
                    engine.description(),
                    if r.paired { "paired on questions" } else { "groups hold different questions: unpaired" }
                );
            }
        }
    }
    Ok(0)
}

/// Why the SE ratio is undefined (a group's one-read SE is 0 or not finite), if it is.
fn ratio_undefined(r: &SeRatio, prec: &[GroupPrecision]) -> Option<String> {
    if r.ratio.is_finite() {
        return None;
    }
    let se = |g: &str| prec.iter().find(|p| p.group == g).map(|p| p.one_read_se);
    Some(match (se(&r.numerator), se(&r.denominator)) {
        (Some(n), Some(d)) if n == 0.0 && d == 0.0 => format!(
            "the one-read SEs of {} and {} are both 0 (the scores do not vary), so the ratio is 0/0",
            r.numerator, r.denominator
        ),
        (_, Some(0.0)) => format!(
            "the one-read SE of {} is 0 (its scores do not vary)",
            r.denominator
        ),
        _ => "a one-read SE is not finite".into(),
    })
}
