//! `stats forecast`: nested D-study and Q-only SE forecasts for one or more allocations.

use std::path::PathBuf;

use anyhow::Context;
use ragstats::components::forecast::{folded_notes, forecast, Audit, DesignSpec, Forecast};

use super::common::{num, print_json, write_csv, Format, PanelOptions, Table};
use super::variance::report_for;
use super::UsageError;

/// Flags of `stats forecast`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Audit panel the components are estimated from.
    #[arg(
        long,
        value_name = "PANEL",
        required_unless_present = "components",
        conflicts_with = "components"
    )]
    pub audit: Option<PathBuf>,
    /// Components file written by `stats variance --format json`, instead of --audit.
    #[arg(long, value_name = "FILE")]
    pub components: Option<PathBuf>,
    /// Allocation to forecast: Q:T:R (total Q split over strata in the audit's proportions)
    /// or per stratum, e.g. hotpotqa=300,musique=146:2:1. Repeat for several.
    #[arg(long = "design", value_name = "Q:T:R", required = true)]
    pub designs: Vec<String>,
    /// A panel whose measured SE is compared with each forecast.
    #[arg(long, value_name = "PANEL")]
    pub measured: Option<PathBuf>,
    /// Use the pooled (dataset-adjusted) components for every stratum.
    #[arg(long)]
    pub pooled: bool,
    #[command(flatten)]
    pub opts: PanelOptions,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

#[derive(serde::Serialize)]
struct Row {
    #[serde(flatten)]
    forecast: Forecast,
    #[serde(skip_serializing_if = "Option::is_none")]
    se_measured: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rel_error_nested: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rel_error_q_only: Option<f64>,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let audit = match (&args.audit, &args.components) {
        (Some(path), _) => Audit::from_report(&report_for(&args.opts.load_unbalanced(path)?)?),
        (None, Some(path)) => Audit::read_components(path)?,
        (None, None) => {
            return Err(UsageError("give --audit PANEL or --components FILE".into()).into())
        }
    };
    let measured = match &args.measured {
        Some(p) => Some(report_for(&args.opts.load_unbalanced(p)?)?.se),
        None => None,
    };
    let notes = folded_notes(&audit, args.pooled);
    let mut rows = Vec::new();
    for d in &args.designs {
        let spec: DesignSpec = d.parse()?;
        let f = forecast(&audit, &spec, args.pooled).with_context(|| format!("design {d}"))?;
        rows.push(Row {
            rel_error_nested: measured.map(|m| (f.se_nested - m) / m),
            rel_error_q_only: measured.map(|m| (f.se_q_only - m) / m),
            se_measured: measured,
            forecast: f,
        });
    }
    match args.format {
        Format::Json => print_json(&serde_json::json!({
            "components": if args.pooled { "pooled" } else { "per-stratum" },
            "designs": rows,
            "notes": notes,
        }))?,
        Format::Csv => {
            let header = [
                "questions",
                "per_stratum",
                "trajectories",
                "reads",
                "se_nested",
                "se_q_only",
                "se_measured",
                "rel_error_nested",
                "rel_error_q_only",
            ];
            let o = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
            let data: Vec<Vec<String>> = rows
                .iter()
                .map(|r| {
                    vec![
                        r.forecast.questions.to_string(),
                        per_stratum(&r.forecast),
                        r.forecast.trajectories.to_string(),
                        r.forecast.reads.to_string(),
                        r.forecast.se_nested.to_string(),
                        r.forecast.se_q_only.to_string(),
                        o(r.se_measured),
                        o(r.rel_error_nested),
                        o(r.rel_error_q_only),
                    ]
                })
                .collect();
            write_csv(&header, &data)?;
            for n in &notes {
                eprintln!("note: {n}");
            }
        }
        Format::Table => {
            let mut head = vec!["design", "Q per stratum", "SE nested", "SE Q-only"];
            if measured.is_some() {
                head.extend(["SE measured", "rel.err nested", "rel.err Q-only"]);
            }
            let mut t = Table::new(&head);
            for r in &rows {
                let f = &r.forecast;
                let mut cells = vec![
                    format!("{}:{}:{}", f.questions, f.trajectories, f.reads),
                    per_stratum(f),
                    num(f.se_nested),
                    num(f.se_q_only),
                ];
                if let Some(m) = r.se_measured {
                    cells.push(num(m));
                    cells.push(format!(
                        "{:+.1}%",
                        100.0 * r.rel_error_nested.unwrap_or(0.0)
                    ));
                    cells.push(format!(
                        "{:+.1}%",
                        100.0 * r.rel_error_q_only.unwrap_or(0.0)
                    ));
                }
                t.row(cells);
            }
            out!("{}", t.render());
            if !notes.is_empty() {
                outln!();
                for n in &notes {
                    outln!("note: {n}");
                }
            }
        }
    }
    Ok(0)
}

fn per_stratum(f: &Forecast) -> String {
    f.per_stratum
        .iter()
        .map(|(n, q)| format!("{n}={q}"))
        .collect::<Vec<_>>()
        .join(",")
}
