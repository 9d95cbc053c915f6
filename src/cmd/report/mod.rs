//! `stats report`: one self-contained HTML file with the panel summary, the figures, their
//! tables and the commands behind them.

use std::path::{Path, PathBuf};

mod sections;

use sections::Sections;

use ragstats_core::allocation::fixed_t::FixedTLoss;
use ragstats_core::components::forecast::{forecast, Audit};
use ragstats_core::components::levels::Level;
use ragstats_core::panel::Panel;
use ragstats_core::resample::summary::Interval;
use ragstats_plot::{self as plot, Caption};

use ragstats_core::components::variance::{POOLED_SHARES_UNDEFINED, SHARES_UNDEFINED};

use super::common::{fixed, num, opt_num, undefined_because, PanelOptions, Table};
use super::efficiency::CurrencyArg;
use super::figure::{caption, forecast_figure, panel_caption};
use super::resample::{Progress, ResampleArgs};
use super::variance::share_cell;
use super::UsageError;

/// Flags of `stats report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A directory holding `panel.csv` or `panel.jsonl` (and `ledger.jsonl`, `prices.toml`
    /// when present, as in data/demo), or the panel file itself.
    pub input: PathBuf,
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

/// What the report reads: the panel, and the optional inputs given by flag or found by name
/// in the directory.
struct Inputs {
    panel: PathBuf,
    ledger: Option<PathBuf>,
    prices: Option<PathBuf>,
    reads: Option<PathBuf>,
    mcq: Vec<PathBuf>,
    capability: Option<PathBuf>,
    trajectories: Option<PathBuf>,
}

/// The inputs `stats report` reads: the panel, and the others when given or found beside
/// the panel in a directory (a flag wins over the file found).
fn inputs(args: &Args) -> anyhow::Result<Inputs> {
    if !args.input.is_dir() {
        return Ok(Inputs {
            panel: args.input.clone(),
            ledger: args.ledger.clone(),
            prices: args.prices.clone(),
            reads: args.reads.clone(),
            mcq: args.mcq_results.clone(),
            capability: args.capability.clone(),
            trajectories: args.trajectories.clone(),
        });
    }
    let d = &args.input;
    let panel = ["panel.csv", "panel.jsonl"]
        .iter()
        .map(|n| d.join(n))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            UsageError(format!(
                "{}: no panel.csv or panel.jsonl in this directory; give the panel file",
                d.display()
            ))
        })?;
    let found = |n: &str| Some(d.join(n)).filter(|p| p.is_file());
    let mcq = if args.mcq_results.is_empty() {
        mcq_files(d)?
    } else {
        args.mcq_results.clone()
    };
    Ok(Inputs {
        panel,
        ledger: args.ledger.clone().or_else(|| found("ledger.jsonl")),
        prices: args.prices.clone().or_else(|| found("prices.toml")),
        reads: args
            .reads
            .clone()
            .or_else(|| found("reads.csv"))
            .or_else(|| found("reads.jsonl")),
        mcq,
        capability: args.capability.clone().or_else(|| found("capability.csv")),
        trajectories: args
            .trajectories
            .clone()
            .or_else(|| found("trajectories.jsonl")),
    })
}

/// The MCQ results files of a directory: `mcq-*.jsonl` but not the `mcq run` sidecars
/// (`*.responses.jsonl`, `*.ledger.jsonl`), sorted by name.
fn mcq_files(d: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(d).map_err(|e| anyhow::anyhow!("{}: {e}", d.display()))? {
        let p = e?.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if name.starts_with("mcq-")
            && name.ends_with(".jsonl")
            && !name.ends_with(".responses.jsonl")
            && !name.ends_with(".ledger.jsonl")
            && p.is_file()
        {
            v.push(p);
        }
    }
    v.sort();
    Ok(v)
}

/// A path or word as a shell argument: quoted when it holds anything but [A-Za-z0-9_./:=,+-].
fn sh(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:=,+-".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The panel options as command-line flags.
fn opt_flags(o: &PanelOptions) -> String {
    let mut f = String::new();
    for (flag, v) in [
        ("--metric", &o.metric),
        ("--contrast", &o.contrast),
        ("--arm", &o.arm),
    ] {
        if let Some(v) = v {
            f.push_str(&format!(" {flag} {}", sh(v)));
        }
    }
    if o.drop_incomplete {
        f.push_str(" --drop-incomplete");
    }
    f
}

/// HTML text escaping (the SVG escaping serves: the report is well-formed XML too).
fn h(s: &str) -> String {
    plot::chart::esc(s)
}

/// An HTML table: header cells, then rows (first column left-aligned by the CSS).
fn table(head: &[&str], rows: &[Vec<String>]) -> String {
    let mut t = Table::new(head);
    for r in rows {
        t.row(r.iter().cloned());
    }
    t.to_html()
}

/// A figure for inline use: the SVG without its XML namespace declaration (HTML knows
/// `<svg>`, and the report then names no URL at all).
fn figure(id: &str, svg: &str, caption: &str) -> String {
    let svg = svg.replacen(r#" xmlns="http://www.w3.org/2000/svg""#, "", 1);
    format!(
        "<figure id=\"{id}\">\n{svg}<figcaption>{}</figcaption>\n</figure>\n",
        h(caption)
    )
}

/// The command that reproduces a section, in a code block.
fn command(cmd: &str) -> String {
    format!(
        "<p>Reproduce (the numbers with <code>--format json</code>, the figure with <code>--plot</code>):</p>\n<pre><code>$ {}</code></pre>\n",
        h(cmd)
    )
}

const CSS: &str = "body { font-family: sans-serif; max-width: 62rem; margin: 2rem auto; padding: 0 1rem; color: #222; line-height: 1.4; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; border-bottom: 1px solid #ccc; padding-bottom: 0.2rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; font-size: 0.9rem; }
th, td { border-bottom: 1px solid #ddd; padding: 0.15rem 0.6rem; text-align: right; font-variant-numeric: tabular-nums; }
th:first-child, td:first-child { text-align: left; }
pre { background: #f4f4f4; padding: 0.5rem 0.7rem; white-space: pre-wrap; word-break: break-all; }
figure { margin: 1rem 0; } figcaption { font-size: 0.85rem; color: #555; }
svg { max-width: 100%; height: auto; }
.note { color: #8a4b00; }
@media print { body { max-width: none; margin: 0; font-size: 10pt; } section, figure, table { break-inside: avoid; } pre { background: none; border: 1px solid #bbb; } }
";

/// `stats report`: the panel summary, every figure that applies with its table, and the
/// command behind each, in one HTML file.
pub fn run(args: Args) -> anyhow::Result<u8> {
    let found = inputs(&args)?;
    let (panel_path, ledger, prices) = (
        found.panel.clone(),
        found.ledger.clone(),
        found.prices.clone(),
    );
    let mut ins: Vec<(&str, &Path)> = vec![("panel", panel_path.as_path())];
    if let Some(l) = &ledger {
        ins.push(("ledger", l));
    }
    if let Some(p) = &prices {
        ins.push(("prices file", p));
    }
    if let Some(r) = &found.reads {
        ins.push(("reads file", r));
    }
    for m in &found.mcq {
        ins.push(("MCQ results", m));
    }
    if let Some(c) = &found.capability {
        ins.push(("capability file", c));
    }
    if let Some(t) = &found.trajectories {
        ins.push(("trajectory log", t));
    }
    ragstats_core::io::refuse_overwriting_inputs(&[("--out file", args.out.as_path())], &ins)?;
    let replicates = args.resample.replicates()?;
    let seed = args.resample.seed;
    let panel = args.opts.load_unbalanced_noting(&panel_path)?;
    let report = super::variance::report_for(&panel)?;
    let p = sh(&panel_path.display().to_string());
    let flags = opt_flags(&args.opts);
    let mut body = String::new();
    // One line for each figure the inputs cannot give, saying what would produce it.
    let mut absent: Vec<String> = Vec::new();
    // The sections whose command failed on its input (the note in the report says why).
    let mut failed: Vec<String> = Vec::new();

    // Panel summary.
    body.push_str("<section id=\"panel\">\n<h2>Panel</h2>\n");
    body.push_str(&format!(
        "<p>File <code>{}</code>, outcome <strong>{}</strong>: estimate {} with SE {} (equal-weight mean over {} strata).</p>\n",
        h(&panel_path.display().to_string()),
        h(&report.outcome),
        num(report.estimate),
        num(report.se),
        report.strata.len()
    ));
    let rows: Vec<Vec<String>> = report
        .strata
        .iter()
        .map(|s| {
            vec![
                s.name.clone(),
                s.questions.to_string(),
                s.trajectories.to_string(),
                s.reads.to_string(),
                num(s.mean),
                num(s.se),
                s.dropped.to_string(),
            ]
        })
        .collect();
    body.push_str(&table(
        &["stratum", "Q", "T", "R", "mean", "SE", "dropped"],
        &rows,
    ));
    body.push_str("</section>\n");

    // Variance components.
    let caption = panel_caption(&panel_path, &report.outcome, None);
    let svg = plot::variance(&report, &caption)?;
    body.push_str("<section id=\"variance\">\n<h2>Where the variance comes from</h2>\n");
    body.push_str(&figure("fig-variance", &svg, &caption.line()));
    let mut rows = Vec::new();
    for s in &report.strata {
        for l in Level::ALL {
            rows.push(vec![
                s.name.clone(),
                l.name().to_string(),
                opt_num(s.fit.components.get(l)),
                share_cell(s.share_single.as_ref(), &s.fit, l),
                share_cell(s.share_se2.as_ref(), &s.fit, l),
            ]);
        }
    }
    let mut undefined: Vec<String> = report
        .strata
        .iter()
        .filter(|s| s.share_single.is_none() || s.share_se2.is_none())
        .map(|s| format!("{} shares: {}", s.name, undefined_because(SHARES_UNDEFINED)))
        .collect();
    if let Some(pooled) = &report.pooled {
        for l in Level::ALL {
            rows.push(vec![
                "pooled".into(),
                l.name().to_string(),
                opt_num(pooled.fit.components.get(l)),
                share_cell(pooled.share_single.as_ref(), &pooled.fit, l),
                "-".into(),
            ]);
        }
        if pooled.share_single.is_none() {
            undefined.push(format!(
                "pooled shares: {}",
                undefined_because(POOLED_SHARES_UNDEFINED)
            ));
        }
    }
    body.push_str(&table(
        &["scope", "level", "component", "share(single)", "share(SE²)"],
        &rows,
    ));
    for n in undefined {
        body.push_str(&format!("<p>{}</p>\n", h(&n)));
    }
    body.push_str(&command(&format!(
        "stats variance {p}{flags} --plot variance.svg"
    )));
    body.push_str("</section>\n");

    // Forecasts.
    let audit = Audit::from_report(&report);
    let designs: Vec<String> = if args.designs.is_empty() {
        let q: usize = report.strata.iter().map(|s| s.questions).sum();
        let (t, r) = report
            .strata
            .first()
            .map(|s| (s.trajectories, s.reads))
            .unwrap_or((1, 1));
        let mut d = vec![format!("{q}:{t}:{r}")];
        for x in [format!("{q}:{t}:1"), format!("{q}:1:1")] {
            if !d.contains(&x) {
                d.push(x);
            }
        }
        d
    } else {
        args.designs.clone()
    };
    let mut rows = Vec::new();
    for d in &designs {
        let f =
            forecast(&audit, &d.parse()?, false).map_err(|e| anyhow::anyhow!("design {d}: {e}"))?;
        rows.push((f, None));
    }
    let caption = caption_of(&panel_path, &args.opts);
    let svg = forecast_figure(&audit, false, &rows, &caption)?;
    body.push_str("<section id=\"forecast\">\n<h2>What other allocations would give</h2>\n");
    body.push_str(&figure("fig-forecast", &svg, &caption.line()));
    let trows: Vec<Vec<String>> = rows
        .iter()
        .map(|(f, _)| {
            vec![
                format!("{}:{}:{}", f.questions, f.trajectories, f.reads),
                num(f.se_nested),
                num(f.se_q_only),
            ]
        })
        .collect();
    body.push_str(&table(&["design", "SE nested", "SE Q-only"], &trows));
    let dflags: String = designs
        .iter()
        .map(|d| format!(" --design {}", sh(d)))
        .collect();
    body.push_str(&command(&format!(
        "stats forecast --audit {p}{flags}{dflags} --plot forecast.svg"
    )));
    body.push_str("</section>\n");

    // One-read efficiency (needs the ledger).
    if let Some(ledger) = &ledger {
        body.push_str(
            "<section id=\"efficiency\">\n<h2>Is reading each packet once wasteful?</h2>\n",
        );
        match efficiency_section(
            &args,
            &panel,
            &panel_path,
            ledger,
            prices.as_deref(),
            replicates,
        ) {
            Ok((svg, eff_caption, rows)) => {
                body.push_str(&figure("fig-efficiency", &svg, &eff_caption.line()));
                body.push_str(&table(
                    &[
                        "analysis", "scope", "R*", "R best", "loss %", "CI low", "CI high",
                    ],
                    &rows,
                ));
                let pr = prices
                    .as_ref()
                    .map(|x| format!(" --prices {}", sh(&x.display().to_string())))
                    .unwrap_or_default();
                // The intervals' level, when not the default, is part of the command.
                let conf = args.resample.confidence.get();
                let cf = if conf == 0.95 {
                    String::new()
                } else {
                    format!(" --confidence {conf}")
                };
                body.push_str(&command(&format!(
                    "stats efficiency {p}{flags} --ledger {}{pr} --replicates {replicates} --seed {seed}{cf} --plot efficiency.svg",
                    sh(&ledger.display().to_string())
                )));
            }
            Err(e) => {
                body.push_str(&format!(
                    "<p class=\"note\">Not computed: {}</p>\n",
                    h(&format!("{e:#}"))
                ));
                failed.push(format!("efficiency: {e:#}"));
            }
        }
        body.push_str("</section>\n");
    } else {
        absent.push("efficiency (Fig. 5, one-read loss): needs the cost ledger of the panel (--ledger FILE, or ledger.jsonl in the directory)".into());
    }

    let sections = Sections::new(&args)?;
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
        body.push_str(&run_audit_section(t, &mut failed));
    }
    if let Some(l) = &ledger {
        body.push_str(&cost_section(l, prices.as_deref(), &mut failed));
    }
    absent.push("allocate (Fig. 4): needs allocations to compare: stats allocate PANEL --ledger LEDGER --prices PRICES --allocation NAME=Q:T:R… --plot allocate.svg".into());
    absent.push("subsets (Fig. 3, right): needs a depth panel: stats subsets DEPTH_PANEL --audit AUDIT --plot subsets.svg".into());
    body.push_str("<section id=\"absent\">\n<h2>Not in this report</h2>\n<ul>\n");
    for a in &absent {
        body.push_str(&format!("<li class=\"note\">{}</li>\n", h(a)));
    }
    body.push_str("</ul>\n</section>\n");

    let title = format!("ragstats report: {}", panel_path.display());
    let html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>{}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n<h1>{}</h1>\n{body}<p class=\"footer\">Made by <code>stats report</code> (ragstats {}); every number above is reproduced by the command beside it.</p>\n</body>\n</html>\n",
        h(&title),
        h(&title),
        env!("CARGO_PKG_VERSION")
    );
    ragstats_core::io::write_atomic(&args.out, |w| w.write_all(html.as_bytes()))?;
    let figures: Vec<&str> = body
        .split("<figure id=\"fig-")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .collect();
    outln!(
        "wrote {}: {} figures ({}), each with its table and command",
        args.out.display(),
        figures.len(),
        figures.join(", ")
    );
    failed.extend(sections.failed.into_inner());
    for f in &failed {
        outln!("not computed: {f}");
    }
    for a in &absent {
        outln!("not included: {a}");
    }
    Ok(0)
}

/// The `run-audit` section: the Appendix C table, the run's search and read counts, and
/// its warnings (most pools empty), as `stats run-audit` prints them.
fn run_audit_section(path: &Path, failed: &mut Vec<String>) -> String {
    let mut s = String::from(
        "<section id=\"run-audit\">\n<h2>Run audit (Appendix C): is there evidence to read?</h2>\n",
    );
    match ragstats_core::trajlog::read_trajectories(path) {
        Ok(logs) => {
            let logs: Vec<_> = logs.into_iter().map(|l| l.t).collect();
            let tot = ragstats_agent::run::audit::totals(&logs);
            for w in tot.warnings() {
                s.push_str(&format!(
                    "<p class=\"note\"><strong>warning:</strong> {}</p>\n",
                    h(&w)
                ));
            }
            let (head, cells) =
                super::run_audit::audit_table(&ragstats_agent::run::audit::audit(&logs));
            s.push_str(&table(&head, &cells));
            s.push_str(&format!(
                "<p class=\"note\">{}</p>\n<ul>\n",
                h(super::run_audit::AUDIT_NOTE)
            ));
            for l in super::run_audit::totals_lines(&tot) {
                s.push_str(&format!("<li>{}</li>\n", h(&l)));
            }
            s.push_str("</ul>\n");
            s.push_str(&command(&format!(
                "stats run-audit {}",
                sh(&path.display().to_string())
            )));
        }
        Err(e) => {
            s.push_str(&format!(
                "<p class=\"note\">Not computed: {}</p>\n",
                h(&e.to_string())
            ));
            failed.push(format!("run-audit: {e}"));
        }
    }
    s.push_str("</section>\n");
    s
}

/// The `cost` section: calls, tokens and searches of the ledger per arm and dataset and in
/// total (and USD with the prices), as `stats cost` prints them.
fn cost_section(ledger: &Path, prices: Option<&Path>, failed: &mut Vec<String>) -> String {
    let mut s = String::from("<section id=\"cost\">\n<h2>What the run spent</h2>\n");
    match super::cost::load(ledger, prices, None, None) {
        Ok((r, _)) => {
            let mut head = vec![
                "arm",
                "dataset",
                "calls",
                "input tok",
                "cached tok",
                "output tok",
                "model tok",
                "searches",
            ];
            if prices.is_some() {
                head.push("model USD");
            }
            let rows: Vec<Vec<String>> = r
                .groups
                .iter()
                .chain(std::iter::once(&r.total))
                .map(|g| {
                    let mut row = vec![
                        g.arm.clone(),
                        g.dataset.clone(),
                        g.model_calls.to_string(),
                        g.input_tokens.to_string(),
                        g.cached_input_tokens.to_string(),
                        g.output_tokens.to_string(),
                        g.model_tokens.to_string(),
                        g.search_requests.to_string(),
                    ];
                    if prices.is_some() {
                        row.push(format!("{:.4}", g.model_usd));
                    }
                    row
                })
                .collect();
            s.push_str(&table(&head, &rows));
            let pr = prices
                .map(|p| format!(" --prices {}", sh(&p.display().to_string())))
                .unwrap_or_default();
            s.push_str(&command(&format!(
                "stats cost {}{pr}",
                sh(&ledger.display().to_string())
            )));
        }
        Err(e) => {
            s.push_str(&format!(
                "<p class=\"note\">Not computed: {}</p>\n",
                h(&format!("{e:#}"))
            ));
            failed.push(format!("cost: {e:#}"));
        }
    }
    s.push_str("</section>\n");
    s
}

/// The caption of a figure from the panel at `path` read with `opts` (no resampling).
fn caption_of(path: &Path, opts: &PanelOptions) -> Caption {
    caption(Some(&path.to_path_buf()), opts, None)
}

/// The fixed-T and fixed-Q losses: figure, its caption, and table rows.
fn efficiency_section(
    args: &Args,
    panel: &Panel,
    panel_path: &Path,
    ledger: &Path,
    prices: Option<&Path>,
    replicates: u32,
) -> anyhow::Result<(String, Caption, Vec<Vec<String>>)> {
    let engine = args
        .resample
        .engine(u64::from(replicates) * panel.strata.iter().map(|s| s.q() as u64).sum::<u64>())?;
    let progress = Progress::new(u64::from(replicates), "efficiency");
    let report = super::efficiency::report_of(
        panel,
        &super::efficiency::LedgerInput {
            ledger,
            prices,
            currency: CurrencyArg::Tokens,
            search_price: None,
        },
        engine.as_ref(),
        args.resample.seed,
        replicates,
        args.resample.confidence.get(),
        10,
        &|d| progress.set(d),
    )?;
    progress.finish();
    let caption = panel_caption(
        panel_path,
        &panel.outcome,
        Some((args.resample.seed, u64::from(replicates))),
    );
    let svg = plot::efficiency(&report, &caption)?;
    let ci = |c: Option<Interval>, i: usize| c.map(|c| fixed(c[i], 2)).unwrap_or("-".into());
    let mut rows = Vec::new();
    let mut t_row = |scope: &str, l: Option<&FixedTLoss>, c: Option<Interval>| {
        if let Some(l) = l {
            rows.push(vec![
                "fixed T".into(),
                scope.to_string(),
                num(l.r_star),
                l.r_best.to_string(),
                fixed(l.loss_percent, 2),
                ci(c, 0),
                ci(c, 1),
            ]);
        }
    };
    for s in &report.strata {
        t_row(&s.name, s.fixed_t.as_ref(), s.fixed_t_loss_ci);
    }
    t_row(
        "combined",
        report.combined.fixed_t.as_ref(),
        report.combined.loss_ci,
    );
    for s in report.strata.iter().chain(&report.pooled) {
        if let Some(e) = &s.efficiency {
            rows.push(vec![
                "fixed Q".into(),
                s.name.clone(),
                num(e.r_star),
                e.r_best.to_string(),
                fixed(e.loss_percent, 2),
                ci(s.loss_ci, 0),
                ci(s.loss_ci, 1),
            ]);
        }
    }
    Ok((svg, caption, rows))
}

/// A results file as a word for an element id and figure name: its stem without a leading
/// `mcq-`, [A-Za-z0-9-] kept and anything else `-` (`mcq-bare.jsonl` → `bare`).
fn results_word(p: &Path) -> String {
    let stem = p
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    stem.strip_prefix("mcq-")
        .unwrap_or(&stem)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// The RAGCap capability columns (RAGCap Fig. 5's rows).
const CAPABILITIES: [&str; 4] = ["planning", "evidence", "reasoning", "noise"];

/// The heatmap's x and y columns: the flags, else the capability columns the file has and
/// every other column after the first (the first names the model).
fn capability_columns(args: &Args, file: &Path) -> anyhow::Result<(Vec<String>, Vec<String>)> {
    // Through the CSV reader, so the file gets the rules of every input (line limit,
    // UTF-8, a directory refused).
    let header: Vec<String> = ragstats_core::io::CsvReader::open(file)?.headers().to_vec();
    let x: Vec<String> = if args.capability_x.is_empty() {
        header
            .iter()
            .filter(|c| CAPABILITIES.contains(&c.as_str()))
            .cloned()
            .collect()
    } else {
        args.capability_x.clone()
    };
    let y: Vec<String> = if args.capability_y.is_empty() {
        header
            .iter()
            .skip(1)
            .filter(|c| !x.contains(c))
            .cloned()
            .collect()
    } else {
        args.capability_y.clone()
    };
    if x.is_empty() || y.is_empty() {
        return Err(UsageError(format!(
            "{}:1: expected capability columns ({}) and outcome columns; name them with --capability-x and --capability-y",
            file.display(),
            CAPABILITIES.join(", ")
        ))
        .into());
    }
    Ok((x, y))
}
