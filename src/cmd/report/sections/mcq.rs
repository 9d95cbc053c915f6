//! The report's MCQ sections: each results file's scores and option positions (`stats mcq
//! score`), and each later file against the first (`stats mcq compare`).

use std::path::Path;

use super::super::html::{h, results_word, table};
use super::{ci, n, Sections};
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
            let rows: Vec<Vec<String>> = r
                .scores
                .iter()
                .map(|l| {
                    vec![
                        l.level.to_string(),
                        l.name.clone(),
                        l.items.to_string(),
                        n(l.em.estimate),
                        ci(l.em.ci),
                        n(l.f1.estimate),
                        ci(l.f1.ci),
                    ]
                })
                .collect();
            t.push_str(&table(
                &["level", "name", "items", "EM", "EM CI", "F1", "F1 CI"],
                &rows,
            ));
            let rows: Vec<Vec<String>> = r
                .positions
                .iter()
                .flatten()
                .map(|p| {
                    vec![
                        p.position.to_string(),
                        p.shown.to_string(),
                        n(p.gold_rate),
                        n(p.chosen_rate),
                        n(p.bias),
                    ]
                })
                .collect();
            t.push_str(&table(
                &["position", "shown", "gold rate", "chosen rate", "bias"],
                &rows,
            ));
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
            let rows: Vec<Vec<String>> = r
                .deltas
                .iter()
                .map(|d| {
                    let l = &d.delta;
                    vec![
                        l.level.to_string(),
                        l.name.clone(),
                        l.items.to_string(),
                        n(d.a[0]),
                        n(d.b[0]),
                        n(l.em.estimate),
                        ci(l.em.ci),
                        n(d.a[1]),
                        n(d.b[1]),
                        n(l.f1.estimate),
                        ci(l.f1.ci),
                    ]
                })
                .collect();
            t.push_str(&table(
                &[
                    "level", "name", "items", "EM A", "EM B", "ΔEM", "ΔEM CI", "F1 A", "F1 B",
                    "ΔF1", "ΔF1 CI",
                ],
                &rows,
            ));
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
