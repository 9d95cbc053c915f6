//! The report's MCQ sections: each results file's scores and option positions (`stats mcq
//! score`), and each later file against the first (`stats mcq compare`).

use std::path::Path;

use ragstats_core::analyses::{
    mcq_compare_report, mcq_score_report, McqCompareSettings, McqScoreSettings,
};
use ragstats_core::panel::Source;
use ragstats_core::table::ToView;

use super::super::html::{h, results_word, tables};
use super::Sections;
use crate::cmd::resample::with_bars;

impl Sections<'_> {
    /// `stats mcq score RESULTS --positions`: EM and F1 per level with intervals, and the
    /// option-position table.
    pub(in crate::cmd::report) fn mcq_score(&self, results: &Path) -> String {
        let words = vec![
            "mcq".to_string(),
            "score".into(),
            results.display().to_string(),
            "--positions".into(),
        ];
        let build = || {
            let settings = McqScoreSettings {
                boot: self.mcq_boot(),
                positions: true,
            };
            let r = with_bars(|progress| {
                mcq_score_report(
                    &Source::file(results),
                    None,
                    None,
                    &settings,
                    &ragstats_gpu::Engines,
                    progress,
                )
            })?;
            let svg = ragstats_plot::mcq_score(
                &r.scores,
                r.positions.as_deref(),
                &ragstats_plot::Caption::for_mcq(
                    results.display().to_string(),
                    format!("{}, {}", r.model, r.prompt),
                    &settings.boot,
                ),
            )?;
            let mut t = format!(
                "<p>Model <code>{}</code>, prompt <code>{}</code>, {} items, {} run(s).</p>\n",
                h(&r.model),
                h(&r.prompt),
                r.items,
                r.runs
            );
            t.push_str(&tables(&r.to_view(), &["scores", "positions"]));
            Ok((svg, t))
        };
        self.section(
            &format!("mcq-score-{}", results_word(results)),
            &format!("MCQ capability scores: {}", results.display()),
            words,
            build,
        )
    }

    /// `stats mcq compare A B`: both sides' EM and F1 and the paired deltas B − A.
    pub(in crate::cmd::report) fn mcq_compare(&self, a: &Path, b: &Path) -> String {
        let words = vec![
            "mcq".to_string(),
            "compare".into(),
            a.display().to_string(),
            b.display().to_string(),
        ];
        let build = || {
            let settings = McqCompareSettings {
                boot: self.mcq_boot(),
                mcnemar: false,
            };
            let out = with_bars(|progress| {
                mcq_compare_report(
                    &Source::file(a),
                    &Source::file(b),
                    None,
                    &settings,
                    &ragstats_gpu::Engines,
                    progress,
                )
            })?;
            let svg = ragstats_plot::mcq_compare_report(
                &out,
                &ragstats_plot::Caption::for_mcq(
                    format!("{} vs {}", a.display(), b.display()),
                    String::new(),
                    &settings.boot,
                ),
            )?;
            let r = &out;
            let mut t = format!(
                "<p>A = <code>{}</code> ({}), B = <code>{}</code> ({}); {} paired (item, run); deltas B − A.</p>\n",
                h(&r.a.model),
                h(&r.a.prompt),
                h(&r.b.model),
                h(&r.b.prompt),
                r.pairs
            );
            t.push_str(&tables(&r.to_view(), &["deltas"]));
            Ok((svg, t))
        };
        self.section(
            &format!("mcq-compare-{}-{}", results_word(a), results_word(b)),
            &format!("MCQ comparison: {} vs {}", a.display(), b.display()),
            words,
            build,
        )
    }
}
