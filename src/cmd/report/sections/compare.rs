//! The report's leaderboard: `stats compare` of a panel with more than two arms.

use std::path::Path;

use ragstats_core::analyses::{compare_report, CompareSettings};
use ragstats_core::import::panel_rows;
use ragstats_core::panel::Source;

use ragstats_core::table::ToView;

use super::super::html::tables;
use super::Sections;
use crate::cmd::common::PanelOptions;
use crate::cmd::compare;
use crate::cmd::resample::with_bars;

impl Sections<'_> {
    /// The arms of the panel `panel` holds (read with the report's panel options), in order
    /// of first appearance.
    fn arms(&self, panel: &Source) -> anyhow::Result<Vec<String>> {
        let options = PanelOptions {
            contrast: None,
            arm: None,
            ..self.args.opts.clone()
        };
        let settings = options.settings();
        let opts = settings.load_options(ragstats_core::import::Balance::Fitted);
        Ok(panel_rows(panel, &opts, &settings.import_options())?.arms())
    }

    /// `stats compare PANEL` when the panel has more than two arms (with two, the panel
    /// sections' contrast is the comparison): systems, pairs with adjusted p-values and
    /// the figure; `None` otherwise. With the report's `ledger` (and `prices`), the next
    /// step is priced in tokens (`--ledger`); a ledger that cannot price it leaves the
    /// next step unpriced, with a note saying why.
    pub(in crate::cmd::report) fn compare(
        &self,
        panel: &Source,
        ledger: Option<&Path>,
        prices: Option<&Path>,
    ) -> Option<String> {
        match self.arms(panel) {
            Ok(arms) if arms.len() > 2 => {}
            _ => return None,
        }
        let o = &self.args.opts;
        let mut words = vec!["compare".to_string(), panel.name().display().to_string()];
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
            let source = panel;
            let mut s = CompareSettings {
                panel: o.settings(),
                resample: self.args.resample.settings(),
                ..Default::default()
            };
            s.panel.contrast = None;
            s.panel.arm = None;
            let (ledger, prices) = (ledger.map(Source::file), prices.map(Source::file));
            let run = |ledger: Option<&Source>, prices: Option<&Source>| {
                with_bars(|progress| {
                    compare_report(
                        source,
                        ledger,
                        prices.filter(|_| ledger.is_some()),
                        &s,
                        &ragstats_gpu::Engines,
                        progress,
                    )
                })
            };
            let mut unpriced = None;
            let out = match run(ledger.as_ref(), prices.as_ref()) {
                Ok(out) => out,
                Err(e) if ledger.is_some() => {
                    unpriced = Some(format!("{:#}", anyhow::Error::from(e)));
                    run(None, None)?
                }
                Err(e) => return Err(e.into()),
            };
            let svg = compare::figure(source, &s, &out)?;
            let r = &out;
            let mut t = tables(&r.to_view(), &["systems", "pairs"]);
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
