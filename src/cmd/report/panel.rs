//! The report's panel sections: the panel summary, where the variance comes from, and what
//! other allocations would give (the values of `stats variance` and `stats forecast --audit`).

use ragstats_core::components::forecast::{forecast_designs, Audit, ForecastJob};
use ragstats_core::components::variance::{
    VarianceReport, POOLED_SHARES_UNDEFINED, SHARES_UNDEFINED,
};
use ragstats_core::components::variance_view::variance_view;
use ragstats_core::table::ToView;
use ragstats_plot as plot;

use super::html::{command, figure, h, sh, tables, Reproduce};
use super::Context;
use crate::cmd::common::{num, undefined_because};
use crate::cmd::figure::{caption, panel_caption};

/// The panel summary: the file, the outcome, the estimate and SE, and each stratum's design,
/// mean, SE and dropped questions.
pub(super) fn panel_section(cx: &Context, report: &VarianceReport) -> String {
    let mut s = String::from("<section id=\"panel\">\n<h2>Panel</h2>\n");
    s.push_str(&format!(
        "<p>File <code>{}</code>, outcome <strong>{}</strong>: estimate {} with SE {} ({} mean over {} strata{}).</p>\n",
        h(&cx.panel_path.display().to_string()),
        h(&report.outcome),
        num(report.estimate),
        num(report.se),
        if report.weights.is_empty() { "equal-weight" } else { "weighted" },
        report.strata.len(),
        h(ragstats_core::table::cells::weights_line(
            report.strata.iter().map(|s| s.name.as_str()),
            &report.weights
        )
        .trim_end()
        .strip_prefix("weights: ")
        .map(|w| format!("; weights {w}"))
        .as_deref()
        .unwrap_or(""))
    ));
    s.push_str(&tables(&variance_view(report, ""), &["strata"]));
    s.push_str("</section>\n");
    s
}

/// The variance components: the figure, each scope's components and shares, and why a
/// scope's shares are undefined (each reason also a warning of the report).
pub(super) fn variance_section(
    cx: &Context,
    report: &VarianceReport,
    warnings: &mut Vec<(String, String)>,
) -> anyhow::Result<String> {
    let caption = panel_caption(cx.panel_path, &report.outcome, None);
    let svg = plot::variance(report, &caption)?;
    let mut s = String::from("<section id=\"variance\">\n<h2>Where the variance comes from</h2>\n");
    s.push_str(&figure("fig-variance", &svg));
    s.push_str(&tables(&variance_view(report, ""), &["components"]));
    let mut undefined: Vec<String> = report
        .strata
        .iter()
        .filter(|s| s.share_single.is_none() || s.share_se2.is_none())
        .map(|s| format!("{} shares: {}", s.name, undefined_because(SHARES_UNDEFINED)))
        .collect();
    if report
        .pooled
        .as_ref()
        .is_some_and(|p| p.share_single.is_none())
    {
        undefined.push(format!(
            "pooled shares: {}",
            undefined_because(POOLED_SHARES_UNDEFINED)
        ));
    }
    for n in undefined {
        s.push_str(&format!("<p>{}</p>\n", h(&n)));
        warnings.push(("variance".into(), n));
    }
    s.push_str(&command(
        &format!("stats variance {}{} --plot variance.svg", cx.p, cx.flags),
        Reproduce::FIGURE,
    ));
    s.push_str("</section>\n");
    Ok(s)
}

/// The designs to forecast: `--design`, else the panel's design (Q in all, T and R of the
/// first stratum) and its one-read and one-trajectory versions at the same Q.
fn designs(cx: &Context, report: &VarianceReport) -> Vec<String> {
    if !cx.args.designs.is_empty() {
        return cx.args.designs.clone();
    }
    let q: usize = report.strata.iter().map(|s| s.questions).sum();
    let (t, r) = report
        .strata
        .first()
        .map(|s| (s.trajectories, s.reads))
        .unwrap_or((1, 1));
    let mut d = vec![format!("{q}:{t}:{r}")];
    for x in [format!("{q}:{t}:1"), format!("{q}:1:1")] {
        if !d.contains(&x) {
            d.push(x);
        }
    }
    d
}

/// The forecasts: the figure and the designs table of `stats forecast --audit`.
pub(super) fn forecast_section(cx: &Context, report: &VarianceReport) -> anyhow::Result<String> {
    let audit = Audit::from_report(report);
    let designs = designs(cx, report);
    let job = ForecastJob {
        designs: designs.clone(),
        pooled: false,
    };
    let forecasts = forecast_designs(&audit, &job)?;
    let caption = caption(Some(&cx.panel_path.to_path_buf()), &cx.args.opts, None);
    let svg = plot::forecast_report(&audit, &forecasts, &caption)?;
    let mut s =
        String::from("<section id=\"forecast\">\n<h2>What other allocations would give</h2>\n");
    s.push_str(&figure("fig-forecast", &svg));
    s.push_str(&tables(&forecasts.to_view(), &["designs"]));
    let dflags: String = designs
        .iter()
        .map(|d| format!(" --design {}", sh(d)))
        .collect();
    s.push_str(&command(
        &format!(
            "stats forecast --audit {}{}{dflags} --plot forecast.svg",
            cx.p, cx.flags
        ),
        Reproduce::FIGURE,
    ));
    s.push_str("</section>\n");
    Ok(s)
}
