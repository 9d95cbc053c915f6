//! The report's sections that are whole analysis commands (consistency, mcq score and
//! compare, correlate): each calls the command's own `compute` and `figure` on its values and
//! makes the section's table from the result, so the report shows exactly what the command
//! prints and draws, and names the command that reproduces it.

use std::cell::RefCell;
use std::path::Path;

use super::{capability_columns, command, h, results_word, sh, table, Args};
use crate::cmd::common::{num, Format, PanelOptions};
use crate::cmd::mcq::boot::{BootArgs, FailuresArg};
use crate::cmd::{consistency, correlate, mcq};
use ragstats_core::resample::summary::Interval;

/// A number as the sections show it: `-` where the command's JSON has `null` (not finite).
fn n(v: f64) -> String {
    if v.is_finite() {
        num(v)
    } else {
        "-".into()
    }
}

/// An interval as `[low, high]`.
fn ci(c: Interval) -> String {
    format!("[{}, {}]", n(c[0]), n(c[1]))
}

/// The caption line a figure carries (its `<text class="caption">`, already escaped).
fn svg_caption(svg: &str) -> &str {
    svg.find("class=\"caption\"")
        .map(|i| &svg[i..])
        .and_then(|s| s.find('>').map(|j| &s[j + 1..]))
        .and_then(|s| s.find("</text>").map(|k| &s[..k]))
        .unwrap_or_default()
}

/// The command sections of one report: the bootstrap flags they share, and the sections
/// that failed.
pub(super) struct Sections<'a> {
    args: &'a Args,
    /// `--replicates B --seed S` (and `--confidence C` when not 0.95), shown in each command.
    boot: Vec<String>,
    /// `ID: error` of each section whose command failed.
    pub(super) failed: RefCell<Vec<String>>,
}

impl<'a> Sections<'a> {
    pub(super) fn new(args: &'a Args) -> anyhow::Result<Self> {
        let r = &args.resample;
        let mut boot = vec![
            "--replicates".to_string(),
            r.replicates()?.to_string(),
            "--seed".into(),
            r.seed.to_string(),
        ];
        if r.confidence.get() != 0.95 {
            boot.extend(["--confidence".into(), r.confidence.get().to_string()]);
        }
        Ok(Sections {
            args,
            boot,
            failed: RefCell::new(Vec::new()),
        })
    }

    /// The bootstrap flags of an MCQ command: the report's resampling, failures as zero.
    fn mcq_boot(&self) -> BootArgs {
        BootArgs {
            resample: self.args.resample.clone(),
            failures: FailuresArg::Zero,
            items: None,
        }
    }

    /// A section: its heading, then the figure and table `build` makes, and the command
    /// (`words` and the report's bootstrap flags; `--backend` is run but not shown, the
    /// replicates do not depend on it); or, when `build` fails, a note with its error.
    fn section(
        &self,
        id: &str,
        heading: &str,
        mut words: Vec<String>,
        build: impl FnOnce() -> anyhow::Result<(String, String)>,
    ) -> String {
        let mut s = format!("<section id=\"{id}\">\n<h2>{}</h2>\n", h(heading));
        words.extend(self.boot.iter().cloned());
        match build() {
            Ok((svg, tables)) => {
                let svg = svg.replacen(r#" xmlns="http://www.w3.org/2000/svg""#, "", 1);
                s.push_str(&format!(
                    "<figure id=\"fig-{id}\">\n{svg}<figcaption>{}</figcaption>\n</figure>\n",
                    svg_caption(&svg)
                ));
                s.push_str(&tables);
                let shown: Vec<String> = words.iter().map(|w| sh(w)).collect();
                s.push_str(&command(&format!(
                    "stats {} --plot {id}.svg",
                    shown.join(" ")
                )));
            }
            Err(e) => {
                s.push_str(&format!(
                    "<p class=\"note\">Not computed: {}</p>\n",
                    h(&format!("{e:#}"))
                ));
                self.failed.borrow_mut().push(format!("{id}: {e:#}"));
            }
        }
        s.push_str("</section>\n");
        s
    }

    /// `stats consistency READS --by COL`: disagreement and one-read SE per group, SE ratio.
    pub(super) fn consistency(&self, reads: &Path) -> String {
        let by = &self.args.by;
        let words = vec![
            "consistency".to_string(),
            reads.display().to_string(),
            "--by".into(),
            by.clone(),
        ];
        let build = || {
            let cargs = consistency::Args {
                reads: reads.to_path_buf(),
                by: by.clone(),
                answer_column: "answer".into(),
                compare: None,
                opts: PanelOptions::default(),
                resample: self.args.resample.clone(),
                format: Format::Json,
                plot: None,
            };
            let out = consistency::compute(&cargs)?;
            let svg = consistency::figure(&cargs, &out)?;
            let r = &out.report;
            let rows: Vec<Vec<String>> = r
                .disagreement
                .iter()
                .map(|d| {
                    let se = r
                        .precision
                        .iter()
                        .find(|p| p.group == d.group)
                        .map(|p| n(p.one_read_se))
                        .unwrap_or_else(|| "-".into());
                    vec![
                        d.group.clone(),
                        d.cells.to_string(),
                        d.disagreeing.to_string(),
                        n(d.rate),
                        se,
                    ]
                })
                .collect();
            let mut t = table(&[by, "cells", "disagreeing", "rate", "one-read SE"], &rows);
            if let Some(ratio) = &r.se_ratio {
                let value = match &r.se_ratio_undefined {
                    Some(why) => format!("undefined: {why}"),
                    None => format!("{} {}", n(ratio.ratio), ci(ratio.ci)),
                };
                t.push_str(&format!(
                    "<p>One-read SE ratio {}/{} = {} ({}).</p>\n",
                    h(&ratio.numerator),
                    h(&ratio.denominator),
                    h(&value),
                    if ratio.paired {
                        "paired on questions"
                    } else {
                        "groups hold different questions: unpaired"
                    }
                ));
            }
            Ok((svg, t))
        };
        self.section(
            "consistency",
            &format!("Do answers change between reads? (by {by})"),
            words,
            build,
        )
    }

    /// `stats mcq score RESULTS --positions`: EM and F1 per level with intervals, and the
    /// option-position table.
    pub(super) fn mcq_score(&self, results: &Path) -> String {
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
            let out = mcq::score::compute(&margs)?;
            let svg = mcq::score::figure(&margs, &out)?;
            let r = &out.report;
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
    pub(super) fn mcq_compare(&self, a: &Path, b: &Path) -> String {
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
                boot: self.mcq_boot(),
                format: Format::Json,
                plot: None,
            };
            let out = mcq::compare::compute(&margs)?;
            let svg = mcq::compare::figure(&margs, &out)?;
            let r = &out.report;
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

    /// `stats correlate FILE --x … --y …`: the heatmap of r with its p-values.
    pub(super) fn correlate(&self, file: &Path) -> String {
        let args = self.args;
        let (x, y) = match capability_columns(args, file) {
            Ok(c) => c,
            Err(e) => {
                self.failed.borrow_mut().push(format!("correlate: {e:#}"));
                return format!(
                    "<section id=\"correlate\">\n<h2>Which capabilities go with the outcomes?</h2>\n\
                     <p class=\"note\">Not computed: {}</p>\n</section>\n",
                    h(&format!("{e:#}"))
                );
            }
        };
        let mut words = vec![
            "correlate".to_string(),
            file.display().to_string(),
            "--x".into(),
            x.join(","),
            "--y".into(),
            y.join(","),
        ];
        let permuted = args.permutations > 0;
        if permuted {
            words.extend(["--permutations".into(), args.permutations.to_string()]);
        }
        let build = || {
            let cargs = correlate::Args {
                file: file.to_path_buf(),
                x: x.clone(),
                y: y.clone(),
                method: correlate::MethodArg::Pearson,
                cluster: None,
                aggregate_by: None,
                missing: correlate::MissingArg::Error,
                permutations: args.permutations,
                resample: args.resample.clone(),
                format: Format::Json,
                plot: None,
            };
            let out = correlate::compute(&cargs)?;
            let svg = correlate::figure(&cargs, &out)?;
            let r = &out.report;
            let rows: Vec<Vec<String>> = r
                .pairs
                .iter()
                .map(|p| {
                    let mut row = vec![
                        p.x.clone(),
                        p.y.clone(),
                        p.estimate.n.to_string(),
                        n(p.estimate.r),
                        n(p.estimate.p),
                    ];
                    if permuted {
                        row.push(p.permutation.as_ref().map_or("-".into(), |q| n(q.p)));
                    }
                    row.push(p.bootstrap.as_ref().map_or("-".into(), |b| ci(b.ci)));
                    row
                })
                .collect();
            let mut head = vec!["x", "y", "n", "r", "p"];
            if permuted {
                head.push("permutation p");
            }
            head.push("bootstrap CI");
            Ok((
                svg,
                format!(
                    "<p>{} correlation.</p>\n{}",
                    h(r.method.name()),
                    table(&head, &rows)
                ),
            ))
        };
        self.section(
            "correlate",
            "Which capabilities go with the outcomes?",
            words,
            build,
        )
    }
}
