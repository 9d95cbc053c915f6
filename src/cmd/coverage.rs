//! `stats coverage`: how often each interval `variance`, `bootstrap` and `compare` print
//! covers the truth, and how often each test rejects under the null, on panels simulated
//! with the user's design (or, with `--grid`, on the grid of designs of docs/COVERAGE.md).

use std::path::PathBuf;

use ragstats_core::coverage::grid::{designs, grid, GridReport};
use ragstats_core::coverage::{
    coverage_of_file, work, Analysis, CoverageSettings, Generator, Kind, OutcomeChoice,
};
use ragstats_core::document::{to_body, Engine, Inputs, Report};
use ragstats_core::table::Cell;

use super::common::{Format, PanelOptions, Table};
use super::render::{Finished, Rendered};
use super::resample::{BackendArg, Confidence, Progress};
use super::UsageError;
use ragstats_gpu::select::select_backend_for;

/// `--analysis`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AnalysisArg {
    Variance,
    Bootstrap,
    Compare,
    All,
}

/// `--generator`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GeneratorArg {
    Gaussian,
    Bounded,
    Resample,
    All,
}

/// Flags of `stats coverage`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Panel whose design and fitted model are simulated (not with --grid).
    #[arg(required_unless_present = "grid")]
    pub panel: Option<PathBuf>,
    #[command(flatten)]
    pub opts: PanelOptions,
    /// Which analysis's intervals and tests to measure.
    #[arg(long, value_enum, default_value_t = AnalysisArg::All)]
    pub analysis: AnalysisArg,
    /// How simulated panels are drawn: Gaussian or bounded (Beta/Bernoulli) from the fitted
    /// model, or questions resampled within strata.
    #[arg(long, value_enum, default_value_t = GeneratorArg::All)]
    pub generator: GeneratorArg,
    /// Simulated panels per generator (as many again under the null when tests are measured).
    #[arg(long, default_value_t = 200, value_name = "N")]
    pub panels: u32,
    /// Bootstrap replicates of every simulated panel's analyses.
    #[arg(long, default_value_t = 1000, value_name = "B")]
    pub replicates: u32,
    /// Seed of the simulated panels and of their bootstraps.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where the resampling runs: auto picks a hardware GPU when wgpu finds one, else the CPU.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub backend: BackendArg,
    /// Confidence level of the intervals (the tests' level is 1 − it).
    #[arg(long, default_value = "0.95", value_name = "LEVEL")]
    pub confidence: Confidence,
    /// Measure the grid of simulated designs of docs/COVERAGE.md instead of a panel
    /// (bounded generator, every analysis; about 10 minutes on 2 cores at the defaults).
    #[arg(long, conflicts_with = "panel")]
    pub grid: bool,
    /// With --grid: write the grid as Markdown to FILE (e.g. docs/COVERAGE.md).
    #[arg(long, value_name = "FILE", requires = "grid")]
    pub out: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    outcome(&args)?.print(None, args.format)
}

fn analyses(a: AnalysisArg) -> Vec<Analysis> {
    match a {
        AnalysisArg::Variance => vec![Analysis::Variance],
        AnalysisArg::Bootstrap => vec![Analysis::Bootstrap],
        AnalysisArg::Compare => vec![Analysis::Compare],
        AnalysisArg::All => Analysis::ALL.to_vec(),
    }
}

fn generators(g: GeneratorArg) -> Vec<Generator> {
    match g {
        GeneratorArg::Gaussian => vec![Generator::Gaussian],
        GeneratorArg::Bounded => vec![Generator::Bounded],
        GeneratorArg::Resample => vec![Generator::Resample],
        GeneratorArg::All => Generator::ALL.to_vec(),
    }
}

/// What `stats coverage` prints for `args`.
pub fn outcome(args: &Args) -> anyhow::Result<Finished> {
    let backend = || select_backend_for(args.backend.into(), u64::MAX);
    if args.grid {
        let all = designs();
        let progress = Progress::new(
            all.len() as u64 * u64::from(args.panels) * 2,
            "coverage grid",
        );
        let engine = backend()?;
        let done = std::sync::atomic::AtomicU64::new(0);
        let report = grid(
            &all,
            args.panels,
            args.replicates,
            args.seed,
            args.confidence.get(),
            engine.as_ref(),
            &|_, _| progress.set(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1),
        )?;
        progress.finish();
        let out = GridOutput { report };
        if let Some(path) = &args.out {
            let text = out.markdown();
            ragstats_core::io::write_atomic(path, |w| w.write_all(text.as_bytes()))?;
        }
        return Ok(Finished::new("coverage", Inputs::new(), out));
    }
    let panel = args
        .panel
        .as_ref()
        .ok_or_else(|| UsageError("coverage needs a PANEL, or --grid".into()))?;
    let settings = CoverageSettings {
        analyses: analyses(args.analysis),
        generators: generators(args.generator),
        panels: args.panels,
        replicates: args.replicates,
        seed: args.seed,
        confidence: args.confidence.get(),
    };
    settings.check()?;
    let choice = OutcomeChoice {
        contrast: args.opts.contrast.clone(),
        arm: args.opts.arm.clone(),
    };
    let opts = ragstats_core::panel::LoadOptions {
        contrast: None,
        arm: None,
        ..args.opts.load_options(true)
    };
    let engine = backend()?;
    let progress = Progress::new(work(&settings), "coverage");
    let report = super::common::with_panel_paths(panel, &[], || {
        Ok(ragstats_core::import::with_panel_table(
            panel,
            &opts,
            &args.opts.import.options(None),
            || {
                coverage_of_file(panel, &opts, &choice, &settings, engine.as_ref(), &|d| {
                    progress.set(d)
                })
            },
        )?)
    })?;
    progress.finish();
    let inputs = super::common::panel_input(Inputs::new(), "panel", panel, &[]);
    let notes = report.notes.clone();
    Ok(Finished::new("coverage", inputs, report).with_notes_for_csv(args.format, &notes))
}

/// What `stats coverage --grid` found.
pub struct GridOutput {
    pub report: GridReport,
}

impl GridOutput {
    /// docs/COVERAGE.md: the grid's design, every cell's rows and the cells below target.
    pub fn markdown(&self) -> String {
        let r = &self.report;
        let mut s = String::from("# Coverage of every interval and test (issue 45)\n\n");
        s.push_str(&format!(
            "Generated by `stats coverage --grid --panels {} --replicates {} --seed {} --out docs/COVERAGE.md` \
             ({} backend, {}; {:.0} s). Do not edit by hand: regenerate after changing an interval or test.\n\n",
            r.panels,
            r.replicates,
            r.seed,
            r.engine.backend.as_deref().unwrap_or("?"),
            r.engine.adapter.as_deref().unwrap_or("?"),
            r.seconds
        ));
        s.push_str(
            "**Target:** every 95% interval covers between 0.935 and 0.97; every 5% test rejects at most \
             0.065 under the null. Each rate has its Monte Carlo SE √(p(1−p)/n).\n\n\
             **Design of the grid.** A full factorial of the issue's factors (Q per stratum ∈ {5, 10, 20, 50, \
             200, 1000}; one, two and unequal strata; T, R ∈ {1, 2, 5}; F1-like, binary EM and skewed scores; \
             k ∈ {2, 5, 10} arms) is 1,458 designs. The grid varies one factor at a time around a base design \
             (2 strata × 50 questions, T = 2, R = 2, F1-like, k = 2) and adds the corners where intervals are \
             known to struggle (few binary questions; one stratum of 20 binary one-cell questions with 2 and 5 \
             arms; unequal strata 8 + 40 with 5 arms; 10 questions with 5 \
             arms). Panels come from the bounded generator (Beta question and trajectory probabilities, Beta or \
             Bernoulli reads; docs/coverage.md): F1-like mean 0.5 with components (σ²_q, σ²_t, σ²_r) = \
             (0.04, 0.01, 0.02); binary EM mean 0.4, (0.10, 0.03, Bernoulli); skewed mean 0.85, (0.03, 0.01, \
             0.02); arm j of k has mean m + 0.1 (j/(k−1) − 1/2), question effects correlated 0.7 across arms. \
             `variance` and `bootstrap` analyse the contrast arm2 − arm1, `compare` every arm. Intervals are \
             measured on panels with those means; tests on as many panels with the arms' means equalised. \
             Where `compare`'s score methods apply (binary, one cell per question), the systems' \
             Clopper–Pearson interval (`--interval clopper-pearson`, not the default) is measured beside the \
             Wilson interval the default prints (`systems: marginal interval`): it is exact, so on one \
             stratum it covers at least 0.95 whatever the true proportion, and it over-covers: compare the \
             two rows of a cell (its verdict is `conservative` only above 0.97).\n\n\
             **Measured elsewhere:** `mcq compare`'s test of ΔEM (docs/coverage-mcq.md, \
             `cargo test -p ragstats-core null_rejection_rates`); the family-wise coverage of `compare`'s \
             simultaneous intervals at 10 + 10 questions and the bootstrap at 5 + 5 in every `cargo test` \
             (tests/it/honest.rs); stratum weights (`--weights`) on the demo panel, in the section \
             \"Weighted strata\" appended at the end of this file (re-run its command after regenerating \
             the grid).\n\n",
        );
        let short: Vec<(String, String)> = r
            .cells
            .iter()
            .flat_map(|c| {
                c.report
                    .rows
                    .iter()
                    .filter(|row| row.short())
                    .map(move |row| (c.design.label.clone(), row.sentence(&c.report.target)))
            })
            .collect();
        s.push_str("## Cells below target\n\n");
        if short.is_empty() {
            s.push_str("None: every interval and test meets the target in every cell.\n\n");
        } else {
            for (label, sentence) in &short {
                s.push_str(&format!(
                    "- **{label}**: {}\n",
                    sentence.trim_start_matches("bounded / ")
                ));
            }
            s.push('\n');
        }
        s.push_str("## Every cell\n\n");
        for c in &r.cells {
            s.push_str(&format!(
                "### {} ({}; {:.1} s)\n\n| analysis | interval or test | rate | MC SE | n | verdict |\n|---|---|---|---|---|---|\n",
                c.design.label,
                c.design.describe(),
                c.seconds
            ));
            for row in &c.report.rows {
                let kind = if row.kind == Kind::Test {
                    " (null)"
                } else {
                    ""
                };
                s.push_str(&format!(
                    "| {} | {}{kind} | {} | {} | {} | {} |\n",
                    row.analysis,
                    row.statistic,
                    row.rate.map_or("-".into(), |v| format!("{v:.3}")),
                    row.mc_se.map_or("-".into(), |v| format!("{v:.3}")),
                    row.n,
                    row.verdict
                ));
            }
            for n in &c.report.notes {
                s.push_str(&format!("\nnote: {n}\n"));
            }
            s.push('\n');
        }
        s
    }
}

impl Rendered for GridOutput {
    fn text(&self) -> String {
        self.markdown()
    }

    fn csv(&self) -> Table {
        let mut t = Table::new(&[
            "design",
            "analysis",
            "interval or test",
            "kind",
            "nominal",
            "rate",
            "mc_se",
            "n",
            "verdict",
        ]);
        for c in &self.report.cells {
            for row in &c.report.rows {
                t.row([
                    Cell::text(&c.design.label),
                    Cell::text(row.analysis),
                    Cell::text(&row.statistic),
                    Cell::text(if row.kind == Kind::Test {
                        "test"
                    } else {
                        "interval"
                    }),
                    Cell::num(row.nominal),
                    row.rate.map_or(Cell::Missing, Cell::num),
                    row.mc_se.map_or(Cell::Missing, Cell::num),
                    Cell::Count(row.n),
                    Cell::text(row.verdict),
                ]);
            }
        }
        t
    }

    fn body(&self) -> serde_json::Value {
        to_body(&self.report)
    }

    fn engine(&self) -> Engine {
        self.report.engine()
    }
}
