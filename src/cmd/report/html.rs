//! The report's HTML: escaping, tables, figures, the command lines behind them, and the page
//! with its CSS.

use std::path::Path;

use ragstats_core::table::View;
use ragstats_plot as plot;

use crate::cmd::common::PanelOptions;

/// A path or word as a shell argument: quoted when it holds anything but [A-Za-z0-9_./:=,+-].
pub(super) fn sh(s: &str) -> String {
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
pub(super) fn opt_flags(o: &PanelOptions) -> String {
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
    if let Some(w) = o.shape.weights.as_ref().and_then(|w| w.as_flag()) {
        f.push_str(&format!(" --weights {}", sh(w)));
    }
    f
}

/// HTML text escaping (the SVG escaping serves: the report is well-formed XML too).
pub(super) fn h(s: &str) -> String {
    plot::chart::esc(s)
}

/// The tables of an analysis's view that a section shows: those named `names`, in the
/// view's order, each as the one HTML exporter writes it (`Table::to_html`), so the report's
/// tables are the command's own (first column left-aligned by the CSS).
pub(super) fn tables(view: &View, names: &[&str]) -> String {
    view.tables()
        .into_iter()
        .filter(|(name, _)| names.contains(name))
        .map(|(_, t)| t.to_html())
        .collect()
}

/// A figure for inline use: the SVG without its XML namespace declaration (HTML knows
/// `<svg>`, and the report then names no URL at all). No `<figcaption>`: the SVG draws its
/// caption line itself, and the report shows it once.
pub(super) fn figure(id: &str, svg: &str) -> String {
    let svg = svg.replacen(r#" xmlns="http://www.w3.org/2000/svg""#, "", 1);
    format!("<figure id=\"{id}\">\n{svg}</figure>\n")
}

/// What a section's command gives besides its table: the flag that prints its numbers as
/// JSON, and whether it draws the section's figure with `--plot`.
pub(super) struct Reproduce {
    /// `--format json`, or `--json` (`run-audit`).
    pub(super) json: &'static str,
    /// The section has a figure, drawn by the command's `--plot`.
    pub(super) figure: bool,
}

impl Reproduce {
    /// A section with a figure, its numbers with `--format json`.
    pub(super) const FIGURE: Reproduce = Reproduce {
        json: "--format json",
        figure: true,
    };
    /// A section without a figure, its numbers with `--format json`.
    pub(super) const TABLE: Reproduce = Reproduce {
        json: "--format json",
        figure: false,
    };
}

/// The command that reproduces a section, in a code block; the figure's `--plot` is named
/// only where the section has a figure.
pub(super) fn command(cmd: &str, r: Reproduce) -> String {
    let plot = if r.figure {
        ", the figure with <code>--plot</code>"
    } else {
        ""
    };
    format!(
        "<p>Reproduce (the numbers with <code>{}</code>{plot}):</p>\n<pre><code>$ {}</code></pre>\n",
        h(r.json),
        h(cmd)
    )
}

/// The box of every section's warnings, first in the page: each with a link to its
/// section (`(section id, text)`); nothing when there is none.
pub(super) fn warnings_box(warnings: &[(String, String)]) -> String {
    if warnings.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "<section id=\"warnings\" class=\"warnings\">\n<h2>Read first: {} warning(s)</h2>\n<ul>\n",
        warnings.len()
    );
    for (id, text) in warnings {
        s.push_str(&format!(
            "<li><a href=\"#{}\">{}</a>: {}</li>\n",
            h(id),
            h(id),
            h(text)
        ));
    }
    s.push_str("</ul>\n</section>\n");
    s
}

const CSS: &str = "body { font-family: sans-serif; max-width: 62rem; margin: 2rem auto; padding: 0 1rem; color: #222; line-height: 1.4; overflow-wrap: anywhere; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; border-bottom: 1px solid #ccc; padding-bottom: 0.2rem; margin-top: 2rem; }
table { display: block; max-width: 100%; overflow-x: auto; border-collapse: collapse; margin: 0.5rem 0 1rem; font-size: 0.9rem; }
th, td { border-bottom: 1px solid #ddd; padding: 0.15rem 0.6rem; text-align: right; font-variant-numeric: tabular-nums; overflow-wrap: normal; }
th:first-child, td:first-child { text-align: left; }
pre { max-width: 100%; box-sizing: border-box; background: #f4f4f4; padding: 0.5rem 0.7rem; white-space: pre-wrap; word-break: break-all; }
figure { max-width: 100%; overflow-x: auto; margin: 1rem 0; }
svg { max-width: 100%; height: auto; }
.note { color: #8a4b00; }
.warnings { border: 2px solid #c25e00; background: #fff4e5; padding: 0 1rem 0.5rem; margin: 1rem 0; }
.warnings h2 { margin-top: 0.6rem; border: none; color: #8a4b00; }
@media print { body { max-width: none; margin: 0; font-size: 10pt; } section, figure, table { break-inside: avoid; } pre { background: none; border: 1px solid #bbb; } }
";

/// The whole page: `title` as title, the CSS, the warnings box ([`warnings_box`]) first in
/// the body, then `title` as heading, `body`, and the footer.
pub(super) fn page(title: &str, warnings: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>{}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n{warnings}<h1>{}</h1>\n{body}<p class=\"footer\">Made by <code>stats report</code> (ragstats {}); every number above is reproduced by the command beside it.</p>\n</body>\n</html>\n",
        h(title),
        h(title),
        env!("CARGO_PKG_VERSION")
    )
}

/// A section's note that its command failed on its input, and why.
pub(super) fn not_computed(why: &str) -> String {
    format!("<p class=\"note\">Not computed: {}</p>\n", h(why))
}

/// A results file as a word for an element id and figure name: its stem without a leading
/// `mcq-`, [A-Za-z0-9-] kept and anything else `-` (`mcq-bare.jsonl` → `bare`).
pub(super) fn results_word(p: &Path) -> String {
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
