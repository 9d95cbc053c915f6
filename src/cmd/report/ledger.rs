//! The report's ledger sections: the one-read efficiency of the panel priced from the ledger,
//! what the run spent (`stats cost`), and the run's own audit (`stats run-audit`).

use std::path::Path;

use ragstats_agent::run::audit_view;
use ragstats_core::allocation::one_read::OneReadReport;
use ragstats_core::allocation::one_read_ledger::{
    efficiency_report, EfficiencyJob, EfficiencyReport,
};
use ragstats_core::costs::accounting::{cost_report, Budget, CostJob, CostReport, PricedLedger};
use ragstats_core::ledger::{read_ledger, Prices};
use ragstats_core::panel::Panel;
use ragstats_core::table::ToView;
use ragstats_plot as plot;

use super::html::{command, figure, h, not_computed, sh, tables, Reproduce};
use super::{Args, Context};
use crate::cmd::common::undefined_because;
use crate::cmd::figure::panel_caption;
use crate::cmd::resample::Progress;

/// The one-read efficiency section: the figure of the fixed-T and fixed-Q losses, their
/// tables (those of `stats efficiency`), why a loss is undefined (as `stats efficiency` says
/// it; each reason also a warning of the report) and the `stats efficiency` command; where
/// no loss can be drawn, the reason in place of the figure; a note when the ledger cannot
/// price the panel.
pub(super) fn efficiency_section(
    cx: &Context,
    panel: &Panel,
    ledger: &Path,
    prices: Option<&Path>,
    replicates: u32,
    failed: &mut Vec<String>,
    warnings: &mut Vec<(String, String)>,
) -> String {
    let args = cx.args;
    let mut s = String::from(
        "<section id=\"efficiency\">\n<h2>Is reading each packet once wasteful?</h2>\n",
    );
    match efficiency_values(args, panel, cx.panel_path, ledger, prices, replicates) {
        Ok((report, svg)) => {
            let reasons = undefined_reasons(&report.analysis);
            let drawn = svg.is_ok();
            match svg {
                Ok(svg) => s.push_str(&figure("fig-efficiency", &svg)),
                Err(e) => {
                    // The analysis's own reason, not the plot's ("no finite value").
                    let why = reasons
                        .first()
                        .map(|(_, r)| r.clone())
                        .unwrap_or_else(|| format!("{e:#}"));
                    let note = format!("no figure: no loss is defined ({why})");
                    s.push_str(&format!("<p class=\"note\">{}</p>\n", h(&note)));
                    if reasons.is_empty() {
                        warnings.push(("efficiency".into(), note));
                    }
                }
            }
            let view = report.to_view();
            s.push_str("<p>At fixed T (the headline):</p>\n");
            s.push_str(&tables(&view, &["fixed_t"]));
            s.push_str(
                "<p>At fixed Q (appendix D), the budget anchored at the panel's cost:</p>\n",
            );
            s.push_str(&tables(&view, &["fixed_q"]));
            for (fields, why) in &reasons {
                let line = format!("{fields}: {}", undefined_because(why));
                s.push_str(&format!("<p class=\"note\">{}</p>\n", h(&line)));
                warnings.push(("efficiency".into(), line));
            }
            let pr = prices
                .map(|x| format!(" --prices {}", sh(&x.display().to_string())))
                .unwrap_or_default();
            // The intervals' level, when not the default, is part of the command.
            let conf = args.resample.confidence.get();
            let cf = if conf == 0.95 {
                String::new()
            } else {
                format!(" --confidence {conf}")
            };
            let (plot, reproduce) = if drawn {
                (" --plot efficiency.svg", Reproduce::FIGURE)
            } else {
                ("", Reproduce::TABLE)
            };
            s.push_str(&command(
                &format!(
                    "stats efficiency {}{} --ledger {}{pr} --replicates {replicates} --seed {}{cf}{plot}",
                    cx.p,
                    cx.flags,
                    sh(&ledger.display().to_string()),
                    args.resample.seed
                ),
                reproduce,
            ));
        }
        Err(e) => {
            s.push_str(&not_computed(&format!("{e:#}")));
            failed.push(format!("efficiency: {e:#}"));
        }
    }
    s.push_str("</section>\n");
    s
}

/// The undefined values of the efficiency report grouped by reason, in the report's order:
/// (`scope field, …`, reason), as `stats efficiency` lists them one by one.
fn undefined_reasons(report: &OneReadReport) -> Vec<(String, String)> {
    let mut out: Vec<(Vec<String>, String)> = Vec::new();
    for u in report.undefined() {
        let what = format!("{} {}", u.scope, u.field);
        match out.iter_mut().find(|(_, r)| *r == u.reason) {
            Some((fields, _)) => fields.push(what),
            None => out.push((vec![what], u.reason)),
        }
    }
    out.into_iter().map(|(f, r)| (f.join(", "), r)).collect()
}

/// The fixed-T and fixed-Q losses: the report `stats efficiency` prints, and its figure (or
/// why none can be drawn).
fn efficiency_values(
    args: &Args,
    panel: &Panel,
    panel_path: &Path,
    ledger: &Path,
    prices: Option<&Path>,
    replicates: u32,
) -> anyhow::Result<(EfficiencyReport, anyhow::Result<String>)> {
    let engine = args
        .resample
        .engine(u64::from(replicates) * panel.strata.iter().map(|s| s.q() as u64).sum::<u64>())?;
    let progress = Progress::new(u64::from(replicates), "efficiency");
    let entries = read_ledger(ledger)?;
    let prices_file = prices.map(Prices::read).transpose()?;
    let priced = PricedLedger {
        entries: &entries,
        path: ledger,
        prices: prices_file.as_ref(),
        prices_path: prices,
    };
    // Tokens, as `stats efficiency` counts by default; R up to 10, as its `--max-reads`.
    let settings = EfficiencyJob {
        budget: Budget::Tokens,
        max_reads: 10,
        resampling: args.resample.resampling_of(replicates),
        question_cost: 0.0,
    };
    let report = efficiency_report(panel, &priced, &settings, engine.as_ref(), &|d| {
        progress.set(d)
    })?;
    progress.finish();
    let caption = panel_caption(
        panel_path,
        &panel.outcome,
        Some((args.resample.seed, u64::from(replicates))),
    );
    let svg = plot::efficiency(&report.analysis, &caption).map_err(anyhow::Error::from);
    Ok((report, svg))
}

/// The `run-audit` section: the Appendix C table, the run's search and read counts, and
/// its warnings (most pools empty), as `stats run-audit` prints them.
pub(super) fn run_audit_section(
    path: &Path,
    failed: &mut Vec<String>,
    warnings: &mut Vec<(String, String)>,
) -> String {
    let mut s = String::from(
        "<section id=\"run-audit\">\n<h2>Run audit (Appendix C): is there evidence to read?</h2>\n",
    );
    match ragstats_core::trajlog::read_trajectories(path) {
        Ok(logs) => {
            let logs: Vec<_> = logs.into_iter().map(|l| l.t).collect();
            let tot = ragstats_agent::run::audit::totals(&logs);
            for w in tot.warnings() {
                s.push_str(&format!(
                    "<p class=\"note\"><strong>warning:</strong> {}</p>\n",
                    h(&w)
                ));
                warnings.push(("run-audit".into(), w));
            }
            s.push_str(
                &audit_view::audit_table(&ragstats_agent::run::audit::audit(&logs)).to_html(),
            );
            s.push_str(&format!(
                "<p class=\"note\">{}</p>\n<ul>\n",
                h(audit_view::AUDIT_NOTE)
            ));
            for l in audit_view::totals_lines(&tot) {
                s.push_str(&format!("<li>{}</li>\n", h(&l)));
            }
            s.push_str("</ul>\n");
            s.push_str(&command(
                &format!("stats run-audit {}", sh(&path.display().to_string())),
                Reproduce {
                    json: "--json",
                    figure: false,
                },
            ));
        }
        Err(e) => {
            s.push_str(&not_computed(&e.to_string()));
            failed.push(format!("run-audit: {e}"));
        }
    }
    s.push_str("</section>\n");
    s
}

/// The `cost` section: calls, tokens and searches of the ledger per arm and dataset and in
/// total (and USD with the prices), as `stats cost` prints them.
pub(super) fn cost_section(
    ledger: &Path,
    prices: Option<&Path>,
    failed: &mut Vec<String>,
) -> String {
    let mut s = String::from("<section id=\"cost\">\n<h2>What the run spent</h2>\n");
    let report = || -> anyhow::Result<CostReport> {
        let entries = read_ledger(ledger)?;
        let prices_file = prices.map(Prices::read).transpose()?;
        let priced = PricedLedger {
            entries: &entries,
            path: ledger,
            prices: prices_file.as_ref(),
            prices_path: prices,
        };
        Ok(cost_report(&priced, &CostJob::default())?)
    };
    match report() {
        Ok(r) => {
            s.push_str(&tables(&r.to_view(), &["groups"]));
            let pr = prices
                .map(|p| format!(" --prices {}", sh(&p.display().to_string())))
                .unwrap_or_default();
            s.push_str(&command(
                &format!("stats cost {}{pr}", sh(&ledger.display().to_string())),
                Reproduce::TABLE,
            ));
        }
        Err(e) => {
            s.push_str(&not_computed(&format!("{e:#}")));
            failed.push(format!("cost: {e:#}"));
        }
    }
    s.push_str("</section>\n");
    s
}
