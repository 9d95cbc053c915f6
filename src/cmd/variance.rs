//! `stats variance`: nested variance components per stratum, pooled, and the combined estimate.

use std::path::PathBuf;

use ragstats_core::components::reml::Shape;
use ragstats_core::components::variance::{
    analyse_panel, Fit, Level, Method, PerLevel, StratumReport, VarianceReport,
    POOLED_SHARES_UNDEFINED, SHARES_UNDEFINED,
};
use ragstats_core::panel::Panel;

use super::common::{
    design_cells, num, opt_num, undefined_because, By, Format, PanelOptions, Table, UNDEFINED,
};
use super::render::{emit, sections_by_selector, Rendered};
use super::UsageError;

/// Flags of `stats variance`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Panel file (CSV or JSONL, one row per read).
    pub panel: PathBuf,
    #[command(flatten)]
    pub opts: PanelOptions,
    /// Report each selector of the panel's `selector` column, then their average.
    #[arg(long, value_enum, value_name = "selector")]
    pub by: Option<By>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also draw the component shares (per stratum, pooled, of SE²) as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

/// Runs the variance analysis of a loaded panel: ANOVA for balanced strata, REML for
/// unbalanced ones (also used by `forecast --audit`).
pub fn report_for(panel: &Panel) -> ragstats_core::Result<VarianceReport> {
    analyse_panel(panel)
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    // One figure shows one analysis; one per selector would overwrite each other in one file.
    if args.plot.is_some() && args.by.is_some() {
        return Err(UsageError(
            "--plot draws one analysis: use --selector NAME instead of --by selector".into(),
        )
        .into());
    }
    if args.by == Some(By::Selector) {
        let sections = sections_by_selector(&args.panel, &args.opts, |opts| {
            Ok(Box::new(compute(&Args {
                opts,
                by: None,
                ..args.clone()
            })?))
        })?;
        return emit(&sections, args.format);
    }
    let out = compute(&args)?;
    if let Some(p) = &args.plot {
        let caption = super::figure::panel_caption(&args.panel, &out.report.outcome, None);
        let svg = ragstats_plot::variance(&out.report, &caption)?;
        super::figure::write_svg(p, &svg, &[&args.panel])?;
    }
    emit(&out, args.format)
}

/// What `stats variance` found for one panel (one selector of it).
pub struct VarianceOutput {
    pub panel: PathBuf,
    pub metric: String,
    pub report: VarianceReport,
}

/// Loads the panel `args` names and runs the analysis.
pub fn compute(args: &Args) -> anyhow::Result<VarianceOutput> {
    let panel = args.opts.load_unbalanced_noting(&args.panel)?;
    let report = report_for(&panel)?;
    Ok(VarianceOutput {
        panel: args.panel.clone(),
        metric: panel.metric,
        report,
    })
}

impl Rendered for VarianceOutput {
    fn text(&self) -> String {
        table(&self.report)
    }

    fn csv(&self) -> Table {
        let (h, rows) = csv_rows(&self.report);
        let mut t = Table::new(&h);
        for r in rows {
            t.row(r);
        }
        t
    }

    fn json(&self) -> serde_json::Value {
        let report = &self.report;
        let mut v = serde_json::json!({
            "panel": self.panel,
            "metric": self.metric,
            "outcome": report.outcome,
            "estimate": report.estimate,
            "se": report.se,
            "strata": report.strata,
            "pooled": report.pooled,
            "pooled_unavailable": report.pooled_unavailable,
        });
        add_undefined(&mut v, report);
        v
    }
}

/// A `null` share's reason beside it, as `efficiency` does: `"undefined": {"share_single":
/// "the outcome does not vary", …}` on the stratum or the pooled fit.
fn add_undefined(v: &mut serde_json::Value, r: &VarianceReport) {
    for (i, s) in r.strata.iter().enumerate() {
        for (field, p) in [
            ("share_single", &s.share_single),
            ("share_se2", &s.share_se2),
        ] {
            if p.is_none() {
                v["strata"][i]["undefined"][field] = SHARES_UNDEFINED.into();
            }
        }
    }
    if let Some(p) = &r.pooled {
        if p.share_single.is_none() {
            v["pooled"]["undefined"]["share_single"] = POOLED_SHARES_UNDEFINED.into();
        }
    }
}

/// A share's table cell: `undefined` when the scope's shares are (every component 0; the
/// reason is a note under the table), `-` for a level that is not estimable.
pub(super) fn share_cell(shares: Option<&PerLevel>, f: &Fit, l: Level) -> String {
    match shares {
        Some(p) => opt_num(p.get(l)),
        None if f.components.get(l).is_some() => UNDEFINED.into(),
        None => "-".into(),
    }
}

/// Whether any stratum was fitted by REML (then tables and CSV name the method).
fn any_reml(r: &VarianceReport) -> bool {
    r.strata.iter().any(|s| s.method == Method::Reml)
}

/// Stratum, Q, T, R cells: for an unbalanced stratum T and R are min/mean/max.
fn stratum_design(s: &StratumReport) -> Vec<String> {
    match &s.shape {
        Some(shape) => shape_cells(&s.name, shape),
        None => design_cells(&s.name, s.questions, s.trajectories, s.reads),
    }
}

pub(super) fn shape_cells(name: &str, shape: &Shape) -> Vec<String> {
    let spread = |x: &ragstats_core::components::reml::Spread| {
        if x.min == x.max {
            x.min.to_string()
        } else {
            format!("{}/{:.2}/{}", x.min, x.mean, x.max)
        }
    };
    vec![
        name.to_string(),
        shape.questions.to_string(),
        spread(&shape.trajectories),
        spread(&shape.reads),
    ]
}

fn csv_rows(r: &VarianceReport) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let mut header = vec![
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
    let reml = any_reml(r);
    if reml {
        header.push("method");
    }
    let mut rows = Vec::new();
    let o = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
    // MS, df, component and truncation of one level of a fit.
    let fit_cells = |f: &Fit, l: Level| {
        [
            o(f.ms.get(l).filter(|v| !v.is_nan())),
            o(f.df.get(l).filter(|v| !v.is_nan())),
            o(f.components.get(l)),
            f.truncated.contains(&l).to_string(),
        ]
    };
    for s in &r.strata {
        for l in Level::ALL {
            let mut row = stratum_design(s);
            row.extend([s.mean.to_string(), s.se.to_string(), l.name().into()]);
            row.extend(fit_cells(&s.fit, l));
            let share = |p: &Option<PerLevel>| o(p.as_ref().and_then(|p| p.get(l)));
            row.extend([share(&s.share_single), share(&s.share_se2)]);
            if reml {
                row.push(s.method.name().into());
            }
            rows.push(row);
        }
    }
    if let Some(p) = &r.pooled {
        for l in Level::ALL {
            let mut row = design_cells("pooled", p.questions, p.trajectories, p.reads);
            row.extend([String::new(), String::new(), l.name().into()]);
            row.extend(fit_cells(&p.fit, l));
            row.extend([
                o(p.share_single.as_ref().and_then(|p| p.get(l))),
                String::new(),
            ]);
            if reml {
                row.push(p.method.name().into());
            }
            rows.push(row);
        }
    }
    let q: usize = r.strata.iter().map(|s| s.questions).sum();
    let mut combined = vec![
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
    ];
    if reml {
        combined.push(String::new());
    }
    rows.push(combined);
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
    let reml = any_reml(r);
    let mut head = vec!["stratum", "Q", "T", "R", "mean", "SE", "dropped"];
    if reml {
        head.push("method");
    }
    let mut t = Table::new(&head);
    for s in &r.strata {
        let mut row = stratum_design(s);
        row.extend([num(s.mean), num(s.se), s.dropped.to_string()]);
        if reml {
            row.push(s.method.name().into());
        }
        t.row(row);
    }
    out.push_str(&t.to_text());
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
    let mut undefined = Vec::new();
    let mut add = |t: &mut Table,
                   scope: &str,
                   f: &Fit,
                   single: Option<&PerLevel>,
                   se2: Option<Option<&PerLevel>>| {
        for l in Level::ALL {
            let comp = f.components.get(l);
            t.row(vec![
                scope.to_string(),
                l.name().into(),
                opt_num(f.ms.get(l).filter(|v| !v.is_nan())),
                f.df.get(l)
                    .filter(|v| !v.is_nan())
                    .map(|d| format!("{d}"))
                    .unwrap_or_else(|| "-".into()),
                match comp {
                    Some(c) if f.truncated.contains(&l) => {
                        format!("{} (truncated to 0)", num(c))
                    }
                    Some(c) => num(c),
                    None => "not estimable".into(),
                },
                share_cell(single, f, l),
                se2.map(|p| share_cell(p, f, l))
                    .unwrap_or_else(|| "-".into()),
            ]);
        }
        for n in &f.notes {
            notes.push(format!("{scope}: {n}"));
        }
    };
    for s in &r.strata {
        add(
            &mut t,
            &s.name,
            &s.fit,
            s.share_single.as_ref(),
            Some(s.share_se2.as_ref()),
        );
        if s.share_single.is_none() || s.share_se2.is_none() {
            undefined.push((s.name.as_str(), SHARES_UNDEFINED));
        }
    }
    if let Some(p) = &r.pooled {
        add(&mut t, "pooled", &p.fit, p.share_single.as_ref(), None);
        if p.share_single.is_none() {
            undefined.push(("pooled", POOLED_SHARES_UNDEFINED));
        }
    }
    out.push_str(&t.to_text());
    for (scope, why) in undefined {
        out.push_str(&format!("  {scope} shares: {}\n", undefined_because(why)));
    }
    if reml {
        notes.push(
            "REML strata are unbalanced: T and R are min/mean/max per question and per trajectory; \
             mean and SE are over question means; share(SE²) is at the mean design"
                .into(),
        );
        if let Some(p) = &r.pooled {
            notes.push(format!(
                "pooled: {} over all strata with a fixed mean per stratum",
                p.method.name()
            ));
        }
    }
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
