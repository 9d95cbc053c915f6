//! `stats correlate`: Pearson, Spearman, point-biserial or Kendall correlations of every
//! x × y column pair, with p-values, Fisher-z and bootstrap intervals and permutation tests.

use std::path::PathBuf;

use ragstats_core::correlate::analysis::{
    attach_bootstrap, bootstrap_calls, bootstrap_replicates, estimates, permutation_tests,
    PairResult,
};
use ragstats_core::correlate::boot::KENDALL_NOTE;
use ragstats_core::correlate::estimate::PValueKind;
use ragstats_core::correlate::permute::{CpuPermute, PermuteBackend};
use ragstats_core::correlate::{load, prepare, LoadSpec, Method, Missing};
use serde_json::json;

use super::common::{csv_num, num, print_json, write_csv, Format, Table};
use super::resample::{BackendArg, Progress, ResampleArgs};
use super::UsageError;

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
    /// Bootstrap whole clusters (rows sharing this column's value, e.g. reads of one question).
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

/// Which backend ran a stage, for the report.
struct Ran {
    name: &'static str,
    description: String,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let method = Method::from(args.method);
    let confidence = args.resample.confidence.get();
    if args.resample.replicates == 1 {
        return Err(
            UsageError("--replicates must be 0 (no bootstrap) or at least 2".into()).into(),
        );
    }
    if args.permutations > 0 && args.cluster.is_some() {
        return Err(UsageError(
            "--permutations with --cluster: rows of one cluster are not exchangeable; \
             use --aggregate-by to correlate cluster means instead"
                .into(),
        )
        .into());
    }
    let data = load(
        &args.file,
        &LoadSpec {
            x: args.x.clone(),
            y: args.y.clone(),
            cluster: args.cluster.clone(),
            aggregate_by: args.aggregate_by.clone(),
            missing: args.missing.into(),
        },
    )?;
    if data.dropped > 0 {
        eprintln!(
            "note: dropped {} of {} rows with missing values",
            data.dropped, data.rows_read
        );
    }
    let prep = prepare(&data, method)?;
    let mut results = estimates(&prep, confidence);
    let mut notes: Vec<String> = Vec::new();
    let clusters = data
        .clusters
        .as_ref()
        .map(|(ids, names)| (ids.as_slice(), names.len()));
    if method == Method::Spearman {
        notes.push(
            "Spearman bootstrap and permutations use the ranks of the full sample (not re-ranked \
             within a replicate)"
                .into(),
        );
    }
    let mut boot_ran = None;
    if args.resample.replicates > 0 {
        if let Some((_, c)) = clusters {
            if c < 2 {
                return Err(UsageError(format!(
                    "--cluster: only {c} cluster; the cluster bootstrap needs at least 2"
                ))
                .into());
            }
        }
        let calls = bootstrap_calls(&prep, clusters.is_some()) as u64;
        let units = clusters.map(|(_, c)| c as u64).unwrap_or(data.n() as u64);
        let engine = args
            .resample
            .engine(calls * u64::from(args.resample.replicates) * units)?;
        let progress = Progress::new(calls * u64::from(args.resample.replicates), "bootstrap");
        let reps = bootstrap_replicates(
            &prep,
            clusters,
            engine.as_ref(),
            args.resample.seed,
            args.resample.replicates,
            &|d| progress.set(d),
        )?;
        progress.finish();
        attach_bootstrap(&mut results, &reps, confidence);
        if method == Method::Kendall {
            notes.push(KENDALL_NOTE.into());
        }
        boot_ran = Some(Ran {
            name: engine.name(),
            description: engine.description(),
        });
    }
    let mut perm_ran = None;
    if args.permutations > 0 {
        let gpu = if method == Method::Kendall {
            if args.resample.backend == BackendArg::Gpu {
                notes.push("Kendall permutations run on the CPU (S is not a sum)".into());
            }
            None
        } else {
            ragstats_gpu::select_permute(args.resample.backend.into())?
        };
        let cpu = CpuPermute;
        let backend: &dyn PermuteBackend = match &gpu {
            Some(g) => g,
            None => &cpu,
        };
        let progress = Progress::new(u64::from(args.permutations), "permutations");
        let perms = permutation_tests(
            &prep,
            backend,
            args.resample.seed,
            args.permutations,
            &|d| progress.set(d),
        )?;
        progress.finish();
        for (r, p) in results.iter_mut().zip(perms) {
            r.permutation = Some(p);
        }
        perm_ran = Some(Ran {
            name: backend.name(),
            description: backend.description(),
        });
    }
    for r in &results {
        let e = &r.estimate;
        let fisher_bad = e.fisher.is_some_and(|f| f.iter().any(|v| !v.is_finite()));
        if !e.statistic.is_finite() || fisher_bad {
            notes.push(format!(
                "{} x {}: r = {}, so the test statistic is undefined (infinite: null in JSON) and the p-value is {}",
                r.x,
                r.y,
                num(e.r),
                num(e.p)
            ));
        }
    }
    let p_method = match method {
        Method::Kendall => "normal approximation, tie-corrected variance of S",
        _ => "Student t with n - 2 df",
    };
    let report = json!({
        "method": method,
        "p_value": p_method,
        "n": prep.n(),
        "rows_read": data.rows_read,
        "dropped": data.dropped,
        "aggregated_from": data.aggregated_from,
        "clusters": clusters.map(|c| c.1),
        "confidence": confidence,
        "seed": args.resample.seed,
        "replicates": args.resample.replicates,
        "bootstrap_backend": boot_ran.as_ref().map(|r| r.name),
        "bootstrap_adapter": boot_ran.as_ref().map(|r| r.description.clone()),
        "permutations": args.permutations,
        "permutation_backend": perm_ran.as_ref().map(|r| r.name),
        "permutation_adapter": perm_ran.as_ref().map(|r| r.description.clone()),
        "coding": prep.coding.iter().map(|(c, v)| json!({"column": c, "zero": v[0], "one": v[1]})).collect::<Vec<_>>(),
        "notes": notes,
        "pairs": results,
        "matrix": {
            "x": prep.x_names,
            "y": prep.y_names,
            "r": prep.x_names.iter().enumerate().map(|(i, _)| (0..prep.y_names.len()).map(|j| results[i * prep.y_names.len() + j].estimate.r).collect::<Vec<_>>()).collect::<Vec<_>>(),
            "p": prep.x_names.iter().enumerate().map(|(i, _)| (0..prep.y_names.len()).map(|j| results[i * prep.y_names.len() + j].estimate.p).collect::<Vec<_>>()).collect::<Vec<_>>(),
        },
    });
    if let Some(p) = &args.plot {
        let caption = ragstats_plot::Caption {
            panel: args.file.display().to_string(),
            outcome: String::new(),
            bootstrap: (args.resample.replicates > 0)
                .then(|| (args.resample.seed, u64::from(args.resample.replicates))),
        };
        let svg =
            ragstats_plot::correlate(&results, &prep.x_names, &prep.y_names, method, &caption)?;
        super::figure::write_svg(p, &svg, &[args.file.as_path()])?;
    }
    match args.format {
        Format::Json => print_json(&report)?,
        Format::Csv => print_csv(&results, method)?,
        Format::Table => print_table(
            &report,
            &results,
            &prep.x_names,
            &prep.y_names,
            boot_ran,
            perm_ran,
        )?,
    }
    Ok(0)
}

fn opt(v: Option<f64>) -> String {
    v.map(csv_num).unwrap_or_default()
}

fn print_csv(results: &[PairResult], method: Method) -> anyhow::Result<()> {
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            let e = &r.estimate;
            let b = r.bootstrap.as_ref();
            let p = r.permutation.as_ref();
            vec![
                r.x.clone(),
                r.y.clone(),
                method.name().into(),
                e.n.to_string(),
                csv_num(e.r),
                csv_num(e.statistic),
                csv_num(e.p),
                match e.p_kind {
                    PValueKind::T { .. } => "t".into(),
                    PValueKind::Normal => "normal".into(),
                },
                opt(e.fisher.map(|f| f[0])),
                opt(e.fisher.map(|f| f[1])),
                opt(b.map(|b| b.se)),
                opt(b.map(|b| b.ci[0])),
                opt(b.map(|b| b.ci[1])),
                b.map(|b| b.undefined.to_string()).unwrap_or_default(),
                opt(p.map(|p| p.p)),
                p.map(|p| p.exceed.to_string()).unwrap_or_default(),
                p.map(|p| p.permutations.to_string()).unwrap_or_default(),
            ]
        })
        .collect();
    write_csv(
        &[
            "x",
            "y",
            "method",
            "n",
            "r",
            "statistic",
            "p",
            "p_method",
            "fisher_low",
            "fisher_high",
            "boot_se",
            "boot_low",
            "boot_high",
            "boot_undefined",
            "perm_p",
            "perm_exceed",
            "permutations",
        ],
        &rows,
    )
}

fn print_table(
    report: &serde_json::Value,
    results: &[PairResult],
    xs: &[String],
    ys: &[String],
    boot: Option<Ran>,
    perm: Option<Ran>,
) -> std::io::Result<()> {
    let conf = report["confidence"].as_f64().unwrap_or(0.95);
    let pct = format!("{}%", 100.0 * conf);
    outln!(
        "{} correlation, n = {}{}; p-values: {}",
        report["method"].as_str().unwrap_or(""),
        report["n"],
        match report["clusters"].as_u64() {
            Some(c) => format!(" rows in {c} clusters"),
            None => String::new(),
        },
        report["p_value"].as_str().unwrap_or("")
    );
    if let Some(a) = report["aggregated_from"].as_u64() {
        outln!("rows averaged per unit: {a} rows -> {} units", report["n"]);
    }
    if let Some(b) = &boot {
        outln!(
            "bootstrap: {} replicates ({}), seed {}, backend {} ({})",
            report["replicates"],
            if report["clusters"].is_null() {
                "rows resampled"
            } else {
                "whole clusters resampled"
            },
            report["seed"],
            b.name,
            b.description
        );
    }
    if let Some(p) = &perm {
        outln!(
            "permutations: {}, backend {} ({})",
            report["permutations"],
            p.name,
            p.description
        );
    }
    for c in report["coding"].as_array().into_iter().flatten() {
        outln!(
            "point-biserial coding of {}: {} -> 0, {} -> 1",
            c["column"].as_str().unwrap_or(""),
            c["zero"],
            c["one"]
        );
    }
    for n in report["notes"].as_array().into_iter().flatten() {
        outln!("note: {}", n.as_str().unwrap_or(""));
    }
    outln!();
    if results.len() > 1 {
        outln!("r (two-sided p):");
        let mut header = vec![""];
        header.extend(ys.iter().map(String::as_str));
        let mut t = Table::new(&header);
        for (i, x) in xs.iter().enumerate() {
            let mut row = vec![x.clone()];
            for j in 0..ys.len() {
                let e = &results[i * ys.len() + j].estimate;
                row.push(format!("{:.3} ({})", e.r, short_p(e.p)));
            }
            t.row(row);
        }
        out!("{}", t.to_text());
        outln!();
    }
    let mut t = Table::new(&[
        "x",
        "y",
        "n",
        "r",
        "stat",
        "p",
        &format!("Fisher {pct} low"),
        "high",
        "boot SE",
        &format!("boot {pct} low"),
        "high",
        "perm p",
    ]);
    let dash = || "-".to_string();
    for r in results {
        let e = &r.estimate;
        let b = r.bootstrap.as_ref();
        t.row(vec![
            r.x.clone(),
            r.y.clone(),
            e.n.to_string(),
            num(e.r),
            num(e.statistic),
            num(e.p),
            e.fisher.map(|f| num(f[0])).unwrap_or_else(dash),
            e.fisher.map(|f| num(f[1])).unwrap_or_else(dash),
            b.map(|b| num(b.se)).unwrap_or_else(dash),
            b.map(|b| num(b.ci[0])).unwrap_or_else(dash),
            b.map(|b| num(b.ci[1])).unwrap_or_else(dash),
            r.permutation.map(|p| num(p.p)).unwrap_or_else(dash),
        ]);
    }
    out!("{}", t.to_text());
    let undefined: usize = results
        .iter()
        .filter_map(|r| r.bootstrap.map(|b| b.undefined))
        .max()
        .unwrap_or(0);
    if undefined > 0 {
        outln!(
            "\nnote: up to {undefined} replicates per pair drew a constant column and were left out of the bootstrap SE and interval"
        );
    }
    Ok(())
}

fn short_p(p: f64) -> String {
    if p < 1e-4 {
        format!("{p:.1e}")
    } else {
        format!("{p:.4}")
    }
}
