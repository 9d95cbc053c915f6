//! `stats report`: one self-contained HTML file with the panel summary, the figures, their
//! tables and the commands behind them. The sections: [`panel`] (panel, variance, forecast),
//! [`ledger`] (efficiency, cost, run audit), [`sections`] (the whole analysis commands);
//! [`inputs`] finds the files, [`html`] writes the page.

use std::path::{Path, PathBuf};

mod html;
mod inputs;
mod ledger;
mod panel;
mod sections;

use sections::Sections;

use super::common::PanelOptions;
use super::resample::ResampleArgs;

/// Flags of `stats report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A directory holding `panel.csv` or `panel.jsonl` (and `ledger.jsonl`, `prices.toml`
    /// when present, as in data/demo), or the panel file itself.
    pub input: PathBuf,
    /// Further inspect_ai or lm-eval logs, read with INPUT as one panel (a shell glob such as
    /// `logs/*.eval`).
    #[arg(value_name = "LOG")]
    pub more: Vec<PathBuf>,
    /// Cost ledger of the panel (JSONL): adds the one-read efficiency section.
    #[arg(long, value_name = "FILE")]
    pub ledger: Option<PathBuf>,
    /// Prices (TOML) for the ledger.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// Allocation to forecast, Q:T:R (repeat for several; default: the panel's design and
    /// its one-read and one-trajectory versions at the same Q).
    #[arg(long = "design", value_name = "Q:T:R")]
    pub designs: Vec<String>,
    #[command(flatten)]
    pub opts: PanelOptions,
    #[command(flatten)]
    pub resample: ResampleArgs,
    /// Reads with fixed packets and a grouping column (as `stats consistency` takes): adds the
    /// answer-consistency section [in a directory: `reads.csv` or `reads.jsonl`].
    #[arg(long, value_name = "FILE")]
    pub reads: Option<PathBuf>,
    /// The grouping column of the reads file.
    #[arg(long, value_name = "COLUMN", default_value = "temperature")]
    pub by: String,
    /// MCQ results of `stats mcq run` (repeat for several): a score section for each, and a
    /// comparison of each later file with the first [in a directory: `mcq-*.jsonl`, by name].
    #[arg(long = "mcq-results", value_name = "FILE")]
    pub mcq_results: Vec<PathBuf>,
    /// Capability scores and outcomes, one row per model (as `stats correlate` takes): adds
    /// the correlation heatmap [in a directory: `capability.csv`].
    #[arg(long, value_name = "FILE")]
    pub capability: Option<PathBuf>,
    /// x columns of the heatmap [default: those of planning, evidence, reasoning, noise in
    /// the file].
    #[arg(long, value_delimiter = ',', value_name = "COLS")]
    pub capability_x: Vec<String>,
    /// y columns of the heatmap [default: every column after the first that is not an x].
    #[arg(long, value_delimiter = ',', value_name = "COLS")]
    pub capability_y: Vec<String>,
    /// Permutations of the heatmap's significance test (0: the analytic p-values).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub permutations: u32,
    /// Trajectory log of a `stats run` (its trajectories.jsonl): adds the run-audit section
    /// [in a directory: `trajectories.jsonl`].
    #[arg(long, value_name = "FILE")]
    pub trajectories: Option<PathBuf>,
    /// The HTML file to write (one self-contained file: inline SVG and CSS, no script).
    #[arg(long, value_name = "FILE.html")]
    pub out: PathBuf,
}

/// What the command lines of the panel's sections are built from.
struct Context<'a> {
    args: &'a Args,
    /// The panel file.
    panel_path: &'a Path,
    /// The panel file as a shell word.
    p: String,
    /// The panel options as flags.
    flags: String,
}

/// `stats report`: the panel summary, every figure that applies with its table, and the
/// command behind each, in one HTML file.
pub fn run(args: Args) -> anyhow::Result<u8> {
    run_of(&args)
}

/// [`run`]: the panel is INPUT (a panel file, or a log read with the further logs as one
/// set, a `Source` every section reads).
fn run_of(args: &Args) -> anyhow::Result<u8> {
    let found = inputs::inputs(args)?;
    let (panel_path, ledger, prices) = (
        found.panel.clone(),
        found.ledger.clone(),
        found.prices.clone(),
    );
    ragstats_core::io::refuse_overwriting_inputs(
        &[("--out file", args.out.as_path())],
        &[
            found.named(),
            args.more.iter().map(|p| ("panel", p.as_path())).collect(),
        ]
        .concat(),
    )?;
    let replicates = args.resample.replicates()?;
    let source = ragstats_core::panel::Source::files(&panel_path, &args.more);
    let panel = args.opts.load_unbalanced_noting(&source)?;
    let report = super::variance::report_for(&panel)?;
    let cx = Context {
        args,
        panel_path: &panel_path,
        p: html::sh(&panel_path.display().to_string()),
        flags: html::opt_flags(&args.opts),
    };
    let mut body = String::new();
    // One line for each figure the inputs cannot give, saying what would produce it.
    let mut absent: Vec<String> = Vec::new();
    // The sections whose command failed on its input (the note in the report says why).
    let mut failed: Vec<String> = Vec::new();

    // Every section's warnings, `(section id, text)`: the box at the top of the page and
    // the first lines printed.
    let mut warnings: Vec<(String, String)> = Vec::new();

    body.push_str(&panel::panel_section(&cx, &report));
    body.push_str(&panel::variance_section(&cx, &report, &mut warnings)?);
    body.push_str(&panel::forecast_section(&cx, &report)?);
    // One-read efficiency (needs the ledger).
    if let Some(ledger) = &ledger {
        body.push_str(&ledger::efficiency_section(
            &cx,
            &panel,
            ledger,
            prices.as_deref(),
            replicates,
            &mut failed,
            &mut warnings,
        ));
    } else {
        absent.push("efficiency (Fig. 5, one-read loss): needs the cost ledger of the panel (--ledger FILE, or ledger.jsonl in the directory)".into());
    }

    let sections = Sections::new(args)?;
    // More than two arms: the leaderboard of every arm against every other.
    if let Some(s) = sections.compare(&source, ledger.as_deref(), prices.as_deref()) {
        body.push_str(&s);
    }
    match &found.reads {
        Some(reads) => body.push_str(&sections.consistency(reads)),
        None => absent.push(format!("consistency (Fig. 6): needs reads with a {} column (--reads FILE, or reads.csv in the directory)", args.by)),
    }
    for m in &found.mcq {
        body.push_str(&sections.mcq_score(m));
    }
    if let Some((a, rest)) = found.mcq.split_first() {
        if rest.is_empty() {
            absent.push("mcq compare (RAGCap Fig. 3, bare vs informative): needs a second MCQ results file (--mcq-results, repeated)".into());
        }
        for b in rest {
            body.push_str(&sections.mcq_compare(a, b));
        }
    } else {
        absent.push("mcq score, positions and compare (RAGCap Fig. 3, Table 6): need `stats mcq run` results (--mcq-results FILE, repeated, or mcq-*.jsonl in the directory)".into());
    }
    match &found.capability {
        Some(c) => body.push_str(&sections.correlate(c)),
        None => absent.push("correlate (RAGCap Fig. 5, heatmap): needs capability scores and outcomes per model (--capability FILE, or capability.csv in the directory)".into()),
    }
    // A run's own checks and what it spent (no figures: tables and the commands).
    if let Some(t) = &found.trajectories {
        body.push_str(&ledger::run_audit_section(t, &mut failed, &mut warnings));
    }
    if let Some(l) = &ledger {
        body.push_str(&ledger::cost_section(l, prices.as_deref(), &mut failed));
    }
    absent.push("allocate (Fig. 4): needs allocations to compare: stats allocate PANEL --ledger LEDGER --prices PRICES --allocation NAME=Q:T:R… --plot allocate.svg".into());
    absent.push("subsets (Fig. 3, right): needs a depth panel: stats subsets DEPTH_PANEL --audit AUDIT --plot subsets.svg".into());
    body.push_str("<section id=\"absent\">\n<h2>Not in this report</h2>\n<ul>\n");
    for a in &absent {
        body.push_str(&format!("<li class=\"note\">{}</li>\n", html::h(a)));
    }
    body.push_str("</ul>\n</section>\n");

    failed.extend(sections.failed.into_inner());
    let own = warnings.len();
    // A section not computed is a warning too (its own note says the same in place).
    for f in &failed {
        let (id, why) = f.split_once(": ").unwrap_or(("report", f.as_str()));
        warnings.push((id.to_string(), format!("not computed: {why}")));
    }
    let title = format!("ragstats report: {}", panel_path.display());
    let page = html::page(&title, &html::warnings_box(&warnings), &body);
    ragstats_core::io::write_atomic(&args.out, |w| w.write_all(page.as_bytes()))?;
    let figures: Vec<&str> = body
        .split("<figure id=\"fig-")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .collect();
    // The text form, as the page: the warnings first (then the sections not computed).
    for (id, w) in &warnings[..own] {
        outln!("warning: {id}: {w}");
    }
    for f in &failed {
        outln!("not computed: {f}");
    }
    outln!(
        "wrote {}: {} figures ({}), each with its table and command",
        args.out.display(),
        figures.len(),
        figures.join(", ")
    );
    for a in &absent {
        outln!("not included: {a}");
    }
    Ok(0)
}
