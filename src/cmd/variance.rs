//! `stats variance`: nested variance components per stratum, pooled, and the combined estimate.

use std::path::PathBuf;

use ragstats::components::variance::{analyse, Fit, Level, PerLevel, VarianceReport};
use ragstats::panel::{Panel, StratumStats};

use super::common::{
    design_cells, num, opt_num, print_json, write_csv, Format, PanelOptions, Table,
};

/// Flags of `stats variance`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Panel file (CSV or JSONL, one row per read).
    pub panel: PathBuf,
    #[command(flatten)]
    pub opts: PanelOptions,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Loads a panel and runs the variance analysis (also used by `forecast --audit`).
pub fn report_for(panel: &Panel) -> ragstats::Result<VarianceReport> {
    let stats: Vec<StratumStats> = panel
        .strata
        .iter()
        .map(StratumStats::from_stratum)
        .collect();
    let dropped: Vec<usize> = panel.strata.iter().map(|s| s.dropped).collect();
    analyse(&panel.outcome, &stats, &dropped)
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let panel = args.opts.load_noting_drops(&args.panel)?;
    let report = report_for(&panel)?;
    match args.format {
        Format::Json => print_json(&serde_json::json!({
            "panel": args.panel,
            "metric": panel.metric,
            "outcome": report.outcome,
            "estimate": report.estimate,
            "se": report.se,
            "strata": report.strata,
            "pooled": report.pooled,
            "pooled_unavailable": report.pooled_unavailable,
        }))?,
        Format::Csv => {
            let (h, rows) = csv_rows(&report);
            write_csv(&h, &rows)?;
        }
        Format::Table => out!("{}", table(&report)),
    }
    Ok(0)
}

fn csv_rows(r: &VarianceReport) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let header = vec![
        "scope",
        "questions",
        "trajectories",
        "reads",
        "mean",
        "se",
        "level",
        "ms",
        "df",
        "component",
        "truncated",
        "share_single",
        "share_se2",
    ];
    let mut rows = Vec::new();
    let o = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
    // MS, df, component and truncation of one level of a fit.
    let fit_cells = |f: &Fit, l: Level| {
        [
            o(f.ms.get(l)),
            o(f.df.get(l)),
            o(f.components.get(l)),
            f.truncated.contains(&l).to_string(),
        ]
    };
    for s in &r.strata {
        for l in Level::ALL {
            let mut row = design_cells(&s.name, s.questions, s.trajectories, s.reads);
            row.extend([s.mean.to_string(), s.se.to_string(), l.name().into()]);
            row.extend(fit_cells(&s.fit, l));
            row.extend([o(s.share_single.get(l)), o(s.share_se2.get(l))]);
            rows.push(row);
        }
    }
    if let Some(p) = &r.pooled {
        for l in Level::ALL {
            let mut row = design_cells("pooled", p.questions, p.trajectories, p.reads);
            row.extend([String::new(), String::new(), l.name().into()]);
            row.extend(fit_cells(&p.fit, l));
            row.extend([o(p.share_single.get(l)), String::new()]);
            rows.push(row);
        }
    }
    let q: usize = r.strata.iter().map(|s| s.questions).sum();
    rows.push(vec![
        "combined".into(),
        q.to_string(),
        String::new(),
        String::new(),
        r.estimate.to_string(),
        r.se.to_string(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
    ]);
    (header, rows)
}

fn table(r: &VarianceReport) -> String {
    let mut out = format!(
        "outcome: {}\nestimate {}  SE {}  (equal-weight mean over {} {})\n\n",
        r.outcome,
        num(r.estimate),
        num(r.se),
        r.strata.len(),
        if r.strata.len() == 1 {
            "stratum"
        } else {
            "strata"
        }
    );
    let mut t = Table::new(&["stratum", "Q", "T", "R", "mean", "SE", "dropped"]);
    for s in &r.strata {
        let mut row = design_cells(&s.name, s.questions, s.trajectories, s.reads);
        row.extend([num(s.mean), num(s.se), s.dropped.to_string()]);
        t.row(row);
    }
    out.push_str(&t.render());
    out.push('\n');
    let mut t = Table::new(&[
        "scope",
        "level",
        "MS",
        "df",
        "component",
        "share(single)",
        "share(SE²)",
    ]);
    let mut notes = Vec::new();
    let mut add =
        |t: &mut Table, scope: &str, f: &Fit, single: &PerLevel, se2: Option<&PerLevel>| {
            for l in Level::ALL {
                let comp = f.components.get(l);
                t.row(vec![
                    scope.to_string(),
                    l.name().into(),
                    opt_num(f.ms.get(l)),
                    f.df.get(l)
                        .map(|d| format!("{d}"))
                        .unwrap_or_else(|| "-".into()),
                    match comp {
                        Some(c) if f.truncated.contains(&l) => {
                            format!("{} (truncated to 0)", num(c))
                        }
                        Some(c) => num(c),
                        None => "not estimable".into(),
                    },
                    opt_num(single.get(l)),
                    se2.map(|p| opt_num(p.get(l))).unwrap_or_else(|| "-".into()),
                ]);
            }
            for n in &f.notes {
                notes.push(format!("{scope}: {n}"));
            }
        };
    for s in &r.strata {
        add(&mut t, &s.name, &s.fit, &s.share_single, Some(&s.share_se2));
    }
    if let Some(p) = &r.pooled {
        add(&mut t, "pooled", &p.fit, &p.share_single, None);
    }
    out.push_str(&t.render());
    if let Some(why) = &r.pooled_unavailable {
        notes.push(format!("pooled: not fitted: {why}"));
    }
    if !notes.is_empty() {
        out.push('\n');
        for n in notes {
            out.push_str(&format!("note: {n}\n"));
        }
    }
    out
}
