//! The report's leaderboard: `stats compare` of a panel with more than two arms.

use std::path::Path;

use ragstats_core::panel::load_outcomes;

use super::super::html::table;
use super::{ci, n, Sections};
use crate::cmd::common::{Format, PanelOptions};
use crate::cmd::compare;

impl Sections<'_> {
    /// The arms of the panel at `panel` (read with the report's panel options), in order of
    /// first appearance.
    fn arms(&self, panel: &Path) -> anyhow::Result<Vec<String>> {
        let opts = PanelOptions {
            contrast: None,
            arm: None,
            ..self.args.opts.clone()
        }
        .load_options(true);
        Ok(load_outcomes(panel, &opts, |_| Ok(Vec::new()))?.0)
    }

    /// `stats compare PANEL` when the panel has more than two arms (with two, the panel
    /// sections' contrast is the comparison): systems, pairs with adjusted p-values and
    /// the figure; `None` otherwise. With the report's `ledger` (and `prices`), the next
    /// step is priced in tokens (`--ledger`); a ledger that cannot price it leaves the
    /// next step unpriced, with a note saying why.
    pub(in crate::cmd::report) fn compare(
        &self,
        panel: &Path,
        ledger: Option<&Path>,
        prices: Option<&Path>,
    ) -> Option<String> {
        match self.arms(panel) {
            Ok(arms) if arms.len() > 2 => {}
            _ => return None,
        }
        let o = &self.args.opts;
        let mut words = vec!["compare".to_string(), panel.display().to_string()];
        if let Some(m) = &o.metric {
            words.extend(["--metric".into(), m.clone()]);
        }
        if o.drop_incomplete {
            words.push("--drop-incomplete".into());
        }
        if let Some(w) = o.shape.weights.as_ref().and_then(|w| w.as_flag()) {
            words.extend(["--weights".into(), w.to_string()]);
        }
        if let Some(l) = ledger {
            words.extend(["--ledger".into(), l.display().to_string()]);
            if let Some(p) = prices {
                words.extend(["--prices".into(), p.display().to_string()]);
            }
        }
        let build = || {
            let mut cargs = compare::Args {
                panel: panel.to_path_buf(),
                more: Vec::new(),
                by: None,
                arm: None,
                arms: Vec::new(),
                metric: o.metric.clone(),
                reference: None,
                drop_incomplete: o.drop_incomplete,
                failure_score: o.failure_score,
                selector: o.selector.clone(),
                power: 0.8,
                interval: compare::IntervalArg::Auto,
                ledger: ledger.map(Path::to_path_buf),
                prices: prices.filter(|_| ledger.is_some()).map(Path::to_path_buf),
                currency: None,
                search_price: None,
                question_cost: 0.0,
                bounds: Default::default(),
                shape: o.shape.clone(),
                import: o.import.clone(),
                resample: self.args.resample.clone(),
                all_pairs: false,
                format: Format::Json,
                plot: None,
            };
            let mut unpriced = None;
            let out = match compare::compute(&cargs) {
                Ok(out) => out,
                Err(e) if cargs.ledger.is_some() => {
                    unpriced = Some(format!("{e:#}"));
                    cargs.ledger = None;
                    cargs.prices = None;
                    compare::compute(&cargs)?
                }
                Err(e) => return Err(e),
            };
            let svg = compare::figure(&cargs, &out)?;
            let r = &out;
            let systems: Vec<Vec<String>> = r
                .systems
                .iter()
                .map(|s| {
                    vec![
                        s.name.clone(),
                        n(s.estimate),
                        n(s.se),
                        ci(s.ci),
                        format!("{}–{}", s.rank_ci[0], s.rank_ci[1]),
                        n(s.best_share),
                    ]
                })
                .collect();
            let mut t = table(
                &["system", "estimate", "SE", "interval", "rank", "best share"],
                &systems,
            );
            let pairs: Vec<Vec<String>> = r
                .pairs
                .iter()
                .map(|p| {
                    vec![
                        format!("{} − {}", p.b, p.a),
                        n(p.estimate),
                        n(p.se),
                        ci(p.ci_simultaneous),
                        n(p.p),
                        n(p.p_holm),
                        n(p.q_bh),
                    ]
                })
                .collect();
            t.push_str(&table(
                &[
                    "pair",
                    "estimate",
                    "SE",
                    "simultaneous interval",
                    "p",
                    "p(Holm)",
                    "q(BH)",
                ],
                &pairs,
            ));
            if let Some(next) = &r.next {
                t.push_str(&format!("<p>{}</p>\n", super::h(&next.text)));
            }
            if let Some(why) = unpriced {
                t.push_str(&format!(
                    "<p class=\"note\">The next step is not priced: the ledger could not price it ({}).</p>\n",
                    super::h(&why)
                ));
            }
            Ok((svg, t))
        };
        Some(self.section("compare", "Which systems can be told apart?", words, build))
    }
}
