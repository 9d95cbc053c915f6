//! `stats forecast`: nested D-study and Q-only SE forecasts for one or more allocations.

use std::path::{Path, PathBuf};

use anyhow::Context;
use ragstats_core::components::forecast::{folded_notes, forecast, Audit, DesignSpec, Forecast};
use ragstats_core::panel::Panel;

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
    /// A measured panel for one design, DESIGN=PANEL (e.g. 446:2:1=a.csv): its SE is compared
    /// with that design's forecasts, after checking that the panel has that design. A bare
    /// PANEL is matched to the --design with its shape. Repeat for several designs.
    #[arg(long, value_name = "DESIGN=PANEL")]
    pub measured: Vec<String>,
    /// Use the pooled (dataset-adjusted) components for every stratum.
    #[arg(long)]
    pub pooled: bool,
    #[command(flatten)]
    pub opts: PanelOptions,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also draw SE against Q as SVG: nested and Q-only forecast curves, the designs and
    /// their measured SEs.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

#[derive(serde::Serialize)]
struct Row {
    #[serde(flatten)]
    forecast: Forecast,
    #[serde(skip_serializing_if = "Option::is_none")]
    measured_panel: Option<PathBuf>,
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
    let notes = folded_notes(&audit, args.pooled);
    let mut rows = Vec::new();
    for d in &args.designs {
        let spec: DesignSpec = d.parse()?;
        let f = forecast(&audit, &spec, args.pooled).with_context(|| format!("design {d}"))?;
        rows.push(Row {
            measured_panel: None,
            rel_error_nested: None,
            rel_error_q_only: None,
            se_measured: None,
            forecast: f,
        });
    }
    for m in &args.measured {
        // DESIGN=PANEL splits at the last '=' (a per-stratum design holds '=' itself); a
        // left side that is not a design means the whole argument is a path.
        let (design, path) = match m.rsplit_once('=') {
            Some((d, p)) if d.parse::<DesignSpec>().is_ok() => (Some(d), Path::new(p)),
            _ => (None, Path::new(m.as_str())),
        };
        let panel = args.opts.load(path)?;
        let shape = shape_of(&panel);
        let i = match design {
            Some(d) => {
                let f = forecast(&audit, &d.parse()?, args.pooled)
                    .with_context(|| format!("design {d}"))?;
                if design_of(&f) != shape {
                    return Err(UsageError(format!(
                        "--measured {m}: the panel {} has design {}, not {d} ({})",
                        path.display(),
                        show(&shape),
                        show(&design_of(&f))
                    ))
                    .into());
                }
                rows.iter()
                    .position(|r| design_of(&r.forecast) == shape)
                    .ok_or_else(|| {
                        UsageError(format!("--measured {m}: no --design {d} to compare with"))
                    })?
            }
            None => rows
                .iter()
                .position(|r| design_of(&r.forecast) == shape)
                .ok_or_else(|| {
                    UsageError(format!(
                        "--measured {m}: the panel has design {}, which no --design has; give DESIGN=PANEL",
                        show(&shape)
                    ))
                })?,
        };
        let row = &mut rows[i];
        if row.measured_panel.is_some() {
            return Err(UsageError(format!(
                "--measured {m}: design {} already has a measured panel",
                show(&shape)
            ))
            .into());
        }
        let se = report_for(&panel)?.se;
        row.measured_panel = Some(path.to_path_buf());
        row.se_measured = Some(se);
        row.rel_error_nested = Some((row.forecast.se_nested - se) / se);
        row.rel_error_q_only = Some((row.forecast.se_q_only - se) / se);
    }
    if let Some(p) = &args.plot {
        let input = args.audit.as_ref().or(args.components.as_ref());
        super::figure::forecast_plot(
            p,
            &audit,
            args.pooled,
            &rows
                .iter()
                .map(|r| (r.forecast.clone(), r.se_measured))
                .collect::<Vec<_>>(),
            &super::figure::caption(input, &args.opts, None),
            &rows
                .iter()
                .filter_map(|r| r.measured_panel.as_deref())
                .chain(input.map(|p| p.as_path()))
                .collect::<Vec<_>>(),
        )?;
    }
    let measured = rows.iter().any(|r| r.se_measured.is_some());
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
                "measured_panel",
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
                        r.measured_panel
                            .as_ref()
                            .map(|p| p.display().to_string())
                            .unwrap_or_default(),
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
            if measured {
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
                if measured {
                    let pct = |v: Option<f64>| {
                        v.map(|v| format!("{:+.1}%", 100.0 * v))
                            .unwrap_or_else(|| "-".into())
                    };
                    cells.push(r.se_measured.map(num).unwrap_or_else(|| "-".into()));
                    cells.push(pct(r.rel_error_nested));
                    cells.push(pct(r.rel_error_q_only));
                }
                t.row(cells);
            }
            out!("{}", t.to_text());
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

/// A design as per-stratum questions (name, Q) with T and R (`None` when the strata differ).
type Shape = (Vec<(String, usize)>, Option<usize>, Option<usize>);

fn design_of(f: &Forecast) -> Shape {
    (f.per_stratum.clone(), Some(f.trajectories), Some(f.reads))
}

fn shape_of(p: &Panel) -> Shape {
    let same = |v: Vec<usize>| v.first().copied().filter(|x| v.iter().all(|y| y == x));
    (
        p.strata.iter().map(|s| (s.name.clone(), s.q())).collect(),
        same(p.strata.iter().map(|s| s.t()).collect()),
        same(p.strata.iter().map(|s| s.r()).collect()),
    )
}

fn show(s: &Shape) -> String {
    let n = |v: Option<usize>| v.map(|x| x.to_string()).unwrap_or_else(|| "mixed".into());
    let qs: Vec<String> = s.0.iter().map(|(name, q)| format!("{name}={q}")).collect();
    format!("{}:{}:{}", qs.join(","), n(s.1), n(s.2))
}
