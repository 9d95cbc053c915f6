//! The report's sections that are whole analysis commands (consistency, mcq score and
//! compare, correlate): each calls the command's own `compute` and `figure` on its values and
//! shows its report's own view tables, so the report shows exactly what the command prints
//! and draws, and names the command that reproduces it.

use std::cell::RefCell;
use std::path::Path;

use ragstats_core::analyses::{consistency_report, ConsistencySettings, CorrelateSettings};
use ragstats_core::panel::Source;
use ragstats_core::table::{Block, ToView};

use super::html::{command, figure, h, sh, tables, Reproduce};
use super::inputs::capability_columns;
use super::Args;
use ragstats_core::analyses::McqBootSettings;
use ragstats_core::mcq::cluster::ClusterBy;
use ragstats_core::mcq::score::FailurePolicy;

mod compare;
mod mcq;
use crate::cmd::resample::with_bars;
use crate::cmd::{consistency, correlate};

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

    /// The bootstrap settings of an MCQ section: the report's resampling, failures as zero,
    /// items resampled one by one.
    fn mcq_boot(&self) -> McqBootSettings {
        McqBootSettings {
            resample: self.args.resample.settings(),
            failures: FailurePolicy::Zero,
            cluster_by: ClusterBy::None,
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
            let view = out.to_view();
            let mut t = tables(&view, &["groups"]);
            // The SE ratio, as `stats consistency` states it under its table.
            for b in view.blocks() {
                if let Block::Text(line) = b {
                    t.push_str(&format!("<p>{}</p>\n", h(line.trim())));
                }
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
        if args.permutations > 0 {
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
            Ok((
                svg,
                format!(
                    "<p>{} correlation.</p>\n{}",
                    h(r.method.name()),
                    tables(&r.to_view(), &["pairs"])
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
