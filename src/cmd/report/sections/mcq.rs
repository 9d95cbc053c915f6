//! The report's MCQ sections: each results file's scores and option positions (`stats mcq
//! score`), and each later file against the first (`stats mcq compare`).

use std::path::Path;

use ragstats_core::table::ToView;

use super::super::html::{h, results_word, tables};
use super::Sections;
use crate::cmd::common::Format;
use crate::cmd::mcq;

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
            let margs = mcq::score::Args {
                results: results.to_path_buf(),
                boot: self.mcq_boot(),
                positions: true,
                shuffled: None,
                format: Format::Json,
                plot: None,
            };
            let r = mcq::score::compute(&margs)?;
            let svg = mcq::score::figure(&margs, &r)?;
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
            let margs = mcq::compare::Args {
                a: a.to_path_buf(),
                b: b.to_path_buf(),
                more: Vec::new(),
                boot: self.mcq_boot(),
                format: Format::Json,
                plot: None,
                mcnemar: false,
            };
            let out = mcq::compare::compute(&margs)?;
            let svg = mcq::compare::figure(&margs, &out)?;
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
