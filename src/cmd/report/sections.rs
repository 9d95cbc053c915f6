//! The report's sections that are whole analysis commands (consistency, mcq score and
//! compare, correlate): each calls the command's own `compute` and `figure` on its values and
//! makes the section's table from the result, so the report shows exactly what the command
//! prints and draws, and names the command that reproduces it.

use std::cell::RefCell;
use std::path::Path;

use ragstats_core::analyses::{consistency_report, ConsistencySettings, CorrelateSettings};
use ragstats_core::panel::Source;
use ragstats_core::resample::summary::Interval;

use super::html::{command, figure, h, sh, table, Reproduce};
use super::inputs::capability_columns;
use super::Args;
use crate::cmd::common::num;
use crate::cmd::mcq::boot::{BootArgs, ClusterByArg, FailuresArg};

mod compare;
mod mcq;
use crate::cmd::resample::with_bars;
use crate::cmd::{consistency, correlate};

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
            cluster_by: ClusterByArg::None,
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
                s.push_str(&figure(&format!("fig-{id}"), &svg));
                s.push_str(&tables);
                let shown: Vec<String> = words.iter().map(|w| sh(w)).collect();
                s.push_str(&command(
                    &format!("stats {} --plot {id}.svg", shown.join(" ")),
                    Reproduce::FIGURE,
                ));
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
            let settings = ConsistencySettings {
                by: by.clone(),
                resample: self.args.resample.settings(),
                ..Default::default()
            };
            let out = with_bars(|progress| {
                consistency_report(
                    &Source::file(reads),
                    &settings,
                    &ragstats_gpu::Engines,
                    progress,
                )
            })?;
            let svg = consistency::figure(reads, &settings.panel, &out)?;
            let r = &out;
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
                let value = match &ratio.undefined {
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
            let source = ragstats_core::panel::Source::file(file);
            let settings = CorrelateSettings {
                x: x.clone(),
                y: y.clone(),
                permutations: args.permutations,
                resample: args.resample.settings(),
                ..Default::default()
            };
            let (r, notes) = with_bars(|progress| {
                ragstats_core::analyses::correlate_report(
                    &source,
                    &settings,
                    &ragstats_gpu::Engines,
                    progress,
                )
            })?;
            for n in notes {
                eprintln!("{n}");
            }
            let svg = correlate::figure(&source, &settings, &r)?;
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
