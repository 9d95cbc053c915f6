//! `stats report`: one self-contained HTML file with the panel summary, the figures, their
//! tables and the commands behind them.

use std::path::{Path, PathBuf};

use ragstats::allocation::fixed_t::FixedTLoss;
use ragstats::allocation::one_read::analyse;
use ragstats::components::forecast::{forecast, Audit};
use ragstats::components::levels::Level;
use ragstats::plot::{self, Caption};

use super::common::{fixed, num, opt_num, PanelOptions};
use super::efficiency::CurrencyArg;
use super::figure::{caption, forecast_figure, panel_caption};
use super::resample::{Progress, ResampleArgs};
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
    /// The HTML file to write (one self-contained file: inline SVG and CSS, no script).
    #[arg(long, value_name = "FILE.html")]
    pub out: PathBuf,
}

/// The inputs `stats report` reads: the panel, and the ledger and prices when given or
/// found beside the panel in a directory.
fn inputs(args: &Args) -> anyhow::Result<(PathBuf, Option<PathBuf>, Option<PathBuf>)> {
    if !args.input.is_dir() {
        return Ok((args.input.clone(), args.ledger.clone(), args.prices.clone()));
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
    Ok((
        panel,
        args.ledger.clone().or_else(|| found("ledger.jsonl")),
        args.prices.clone().or_else(|| found("prices.toml")),
    ))
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
    let mut t = String::from("<table>\n<thead><tr>");
    for c in head {
        t.push_str(&format!("<th>{}</th>", h(c)));
    }
    t.push_str("</tr></thead>\n<tbody>\n");
    for r in rows {
        t.push_str("<tr>");
        for c in r {
            t.push_str(&format!("<td>{}</td>", h(c)));
        }
        t.push_str("</tr>\n");
    }
    t.push_str("</tbody>\n</table>\n");
    t
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
    let (panel_path, ledger, prices) = inputs(&args)?;
    let mut ins: Vec<(&str, &Path)> = vec![("panel", panel_path.as_path())];
    if let Some(l) = &ledger {
        ins.push(("ledger", l));
    }
    if let Some(p) = &prices {
        ins.push(("prices file", p));
    }
    ragstats::io::refuse_overwriting_inputs(&[("--out file", args.out.as_path())], &ins)?;
    let replicates = args.resample.replicates()?;
    let seed = args.resample.seed;
    let panel = args.opts.load_unbalanced_noting(&panel_path)?;
    let report = super::variance::report_for(&panel)?;
    let p = sh(&panel_path.display().to_string());
    let flags = opt_flags(&args.opts);
    let mut body = String::new();

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
                opt_num(s.share_single.get(l)),
                opt_num(s.share_se2.get(l)),
            ]);
        }
    }
    if let Some(pooled) = &report.pooled {
        for l in Level::ALL {
            rows.push(vec![
                "pooled".into(),
                l.name().to_string(),
                opt_num(pooled.fit.components.get(l)),
                opt_num(pooled.share_single.get(l)),
                "-".into(),
            ]);
        }
    }
    body.push_str(&table(
        &["scope", "level", "component", "share(single)", "share(SE²)"],
        &rows,
    ));
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

    // One-read efficiency (needs the ledger and a balanced panel).
    if let Some(ledger) = &ledger {
        body.push_str(
            "<section id=\"efficiency\">\n<h2>Is reading each packet once wasteful?</h2>\n",
        );
        match efficiency_section(&args, &panel_path, ledger, prices.as_deref(), replicates) {
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
                body.push_str(&command(&format!(
                    "stats efficiency {p}{flags} --ledger {}{pr} --replicates {replicates} --seed {seed} --plot efficiency.svg",
                    sh(&ledger.display().to_string())
                )));
            }
            Err(e) => body.push_str(&format!(
                "<p class=\"note\">Not computed: {}</p>\n",
                h(&format!("{e:#}"))
            )),
        }
        body.push_str("</section>\n");
    }

    let title = format!("ragstats report: {}", panel_path.display());
    let html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>{}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n<h1>{}</h1>\n{body}<p class=\"footer\">Made by <code>stats report</code> (ragstats {}); every number above is reproduced by the command beside it.</p>\n</body>\n</html>\n",
        h(&title),
        h(&title),
        env!("CARGO_PKG_VERSION")
    );
    ragstats::io::write_atomic(&args.out, |w| w.write_all(html.as_bytes()))?;
    Ok(0)
}

/// The caption of a figure from the panel at `path` read with `opts` (no resampling).
fn caption_of(path: &Path, opts: &PanelOptions) -> Caption {
    caption(Some(&path.to_path_buf()), opts, None)
}

/// The fixed-T and fixed-Q losses: figure, its caption, and table rows.
fn efficiency_section(
    args: &Args,
    panel_path: &Path,
    ledger: &Path,
    prices: Option<&Path>,
    replicates: u32,
) -> anyhow::Result<(String, Caption, Vec<Vec<String>>)> {
    let panel = args.opts.load_noting_drops(panel_path)?;
    let (costs, read_costs) =
        super::efficiency::panel_costs(&panel, ledger, prices, CurrencyArg::Tokens, None)?;
    let engine = args
        .resample
        .engine(u64::from(replicates) * panel.strata.iter().map(|s| s.q() as u64).sum::<u64>())?;
    let progress = Progress::new(u64::from(replicates), "efficiency");
    let report = analyse(
        &panel.strata,
        &costs,
        &read_costs,
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
    let ci = |c: Option<[f64; 2]>, i: usize| c.map(|c| fixed(c[i], 2)).unwrap_or("-".into());
    let mut rows = Vec::new();
    let mut t_row = |scope: &str, l: Option<&FixedTLoss>, c: Option<[f64; 2]>| {
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
