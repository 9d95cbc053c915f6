//! The one-read efficiency report's view (`stats efficiency`): the fixed-T losses
//! (`fixed_t`, the headline), the fixed-Q losses (`fixed_q`), the cost notes, the direct
//! check and the warnings; the CSV is one row per scope of the fixed-T, then the fixed-Q
//! analysis.

use super::one_read::{OneReadReport, ScopeResult};
use super::one_read_ledger::{direct_ratio_reason, EfficiencyReport};
use crate::components::variance_view::design;
use crate::resample::summary::Interval;
use crate::table::{fixed, number as num, percent, Cell, Table, ToView, View};

impl ToView for EfficiencyReport {
    fn to_view(&self) -> View {
        let e = &self.engine;
        let mut v = View::new(csv(&self.analysis));
        blocks(
            &self.analysis,
            self.currency,
            e.adapter.as_deref().unwrap_or_default(),
            e.replicates.unwrap_or_default(),
            // The confidence level heads the intervals: `95%`.
            &percent(e.confidence.unwrap_or_default()),
            &mut v,
        );
        v
    }
}

/// `undefined (reason)`: how text shows a value that is not defined and why.
fn undefined_because(reason: &str) -> String {
    Cell::undefined_because(reason).display()
}

/// The CSV: one row per scope of the fixed-T, then the fixed-Q analysis.
fn csv(r: &OneReadReport) -> Table {
    let mut header = vec![
        "analysis",
        "scope",
        "questions",
        "trajectories",
        "reads",
        "c_t",
        "c_r1",
        "c_r_plus",
        "r_star",
        "r_best",
        "loss_percent",
        "loss_ci_low",
        "loss_ci_high",
    ];
    if r.unbalanced {
        header.push("method");
    }
    let mut t = Table::new(&header);
    for row in csv_rows(r) {
        t.row(row);
    }
    t
}

/// The CSV cells R*, best R, loss % and its interval ends (empty where undefined), shared
/// by the fixed-T, combined and fixed-Q rows.
fn loss_csv(e: Option<(f64, u32, f64)>, ci: Option<Interval>) -> [Cell; 5] {
    let o = |v: Option<f64>| v.map_or(Cell::Missing, Cell::num);
    [
        o(e.map(|e| e.0)),
        e.map_or(Cell::Missing, |e| Cell::Count(e.1.into())),
        o(e.map(|e| e.2)),
        o(ci.map(|c| c[0])),
        o(ci.map(|c| c[1])),
    ]
}

/// A scope's CSV row of one analysis: its design, unit costs, loss and method.
fn scope_csv(
    r: &OneReadReport,
    analysis: &str,
    s: &ScopeResult,
    loss: Option<(f64, u32, f64)>,
    ci: Option<Interval>,
) -> Vec<Cell> {
    let mut row = vec![Cell::text(analysis)];
    row.extend(scope_design(s));
    row.extend([
        Cell::num(s.unit_costs.trajectory),
        Cell::num(s.unit_costs.first_read),
        Cell::num(s.unit_costs.read),
    ]);
    row.extend(loss_csv(loss, ci));
    // The pooled fit's method is `-` in the CSV too (not an empty cell), as it always was.
    row.extend(method_cell(r, s).map(|m| match m {
        Cell::Missing => Cell::text("-"),
        m => m,
    }));
    row
}

fn csv_rows(r: &OneReadReport) -> Vec<Vec<Cell>> {
    let mut rows = Vec::new();
    for s in &r.strata {
        let e = s.fixed_t.as_ref();
        let loss = e.map(|e| (e.r_star, e.r_best, e.loss_percent));
        rows.push(scope_csv(r, "fixed_t", s, loss, s.fixed_t_loss_ci));
    }
    let c = &r.combined;
    let e = c.fixed_t.as_ref();
    let mut row = vec![Cell::text("fixed_t")];
    row.extend(combined_design(r));
    row.extend(loss_csv(
        e.map(|e| (e.r_star, e.r_best, e.loss_percent)),
        c.loss_ci,
    ));
    if r.unbalanced {
        row.push(Cell::Missing);
    }
    rows.push(row);
    for s in r.scopes() {
        let e = s.efficiency.as_ref();
        let loss = e.map(|e| (e.r_star, e.r_best, e.loss_percent));
        rows.push(scope_csv(r, "fixed_q", s, loss, s.loss_ci));
    }
    rows
}

/// T and R of the combination when every stratum shares them.
fn common_design(r: &OneReadReport) -> (Option<u64>, Option<u64>) {
    if r.unbalanced {
        return (None, None);
    }
    let same = |f: fn(&ScopeResult) -> usize| {
        let first = r.strata.first().map(f)?;
        r.strata
            .iter()
            .all(|s| f(s) == first)
            .then_some(first as u64)
    };
    (same(|s| s.trajectories), same(|s| s.reads))
}

/// The cells of a loss `(R*, best R, loss %)`: R*, best R, loss % (2 decimals), and its
/// interval (`-` where absent).
/// The combined row's first cells in text and CSV alike: `combined`, its questions, the
/// strata's common T and R (empty where they differ), and no unit costs.
fn combined_design(r: &OneReadReport) -> Vec<Cell> {
    let (t, reads) = common_design(r);
    vec![
        Cell::text("combined"),
        Cell::Count(r.combined.questions as u64),
        t.map_or(Cell::Missing, Cell::Count),
        reads.map_or(Cell::Missing, Cell::Count),
        Cell::Missing,
        Cell::Missing,
        Cell::Missing,
    ]
}

fn loss_cells(loss: Option<(f64, u32, f64)>, ci: Option<Interval>) -> [Cell; 4] {
    [
        Cell::opt_num(loss.map(|l| l.0)),
        loss.map_or(Cell::Missing, |l| Cell::Count(l.1.into())),
        loss.map_or(Cell::Missing, |l| Cell::fixed(l.2, 2)),
        // An interval is two numbers in one cell: text `[lo, hi]`, as it always was.
        ci.map_or(Cell::Missing, |c| {
            Cell::Raw(format!("[{}, {}]", fixed(c[0], 2), fixed(c[1], 2)))
        }),
    ]
}

/// The fixed-T and fixed-Q tables and what follows them, appended to `v`.
fn blocks(r: &OneReadReport, unit: &str, adapter: &str, reps: u64, pct: &str, v: &mut View) {
    let mut out = format!(
        "one-read efficiency loss at fixed T (the headline): J_T(R) = SE^2 x cost with T fixed and the budget spent on questions, integer R from 1 to {} ({unit}); bootstrap {reps} replicates on {adapter}\n\n",
        r.max_reads
    );
    let ci_head = format!("{pct} range");
    let head = |r_star: &'static str| {
        let mut h = vec![
            "scope", "Q", "T", "R", "c_T", "c_R1", "c_R+", r_star, "R best", "loss %", &ci_head,
        ];
        if r.unbalanced {
            h.push("method");
        }
        Table::new(&h)
    };
    let mut t = head("R*_T");
    for s in &r.strata {
        let e = s.fixed_t.as_ref();
        let loss = e.map(|e| (e.r_star, e.r_best, e.loss_percent));
        t.row(scope_row(r, s, loss, s.fixed_t_loss_ci));
    }
    let c = &r.combined;
    let e = c.fixed_t.as_ref();
    let mut row = combined_design(r);
    row.extend(loss_cells(
        e.map(|e| (e.r_star, e.r_best, e.loss_percent)),
        c.loss_ci,
    ));
    if r.unbalanced {
        row.push(Cell::Missing);
    }
    t.row(row);
    v.text(std::mem::take(&mut out)).table("fixed_t", t);
    if let Some(p) = c.product.filter(|p| (p.j(1.0) / p.j(2.0)).is_finite()) {
        out.push_str(&format!(
            "combined J_T(1)/J_T(2) = {:.4} (the direct check below estimates the same ratio without components)\n",
            p.j(1.0) / p.j(2.0)
        ));
    }
    out.push_str("\nfixed Q (appendix D), budget anchored at the panel's cost:\n");
    let mut t = head("R*");
    for s in r.scopes() {
        let e = s.efficiency.as_ref();
        let loss = e.map(|e| (e.r_star, e.r_best, e.loss_percent));
        t.row(scope_row(r, s, loss, s.loss_ci));
    }
    v.text(std::mem::take(&mut out)).table("fixed_q", t);
    out.push_str(&format!(
        "\nc_R1 is a trajectory's first read, c_R+ each later read (prompt caching bills them differently): a trajectory with R reads costs c_T + c_R1 + (R - 1) c_R+; every billed row of the panel's questions counts ({} row(s) belong to cells the panel lacks: failed trajectories or reads){}\nloss % ranges are the central {pct} bootstrap range of the plug-in loss, which is biased upward and piles up at 0 (so a range starting at 0.00 is no evidence of no loss), not confidence intervals\n",
        r.absent_rows,
        match r.strata.first().map(|s| s.unit_costs.question) {
            Some(q) if q != 0.0 => format!("; cost per question c_Q = {} ({unit}), in the fixed-T loss", num(q)),
            _ => String::new(),
        }
    ));
    for n in r.undefined() {
        out.push_str(&format!(
            "  {} {}: {}\n",
            n.scope,
            n.field,
            undefined_because(&n.reason)
        ));
    }
    if let Some(d) = &r.direct {
        let ci = |c: Option<Interval>| {
            c.map(|c| format!(" [{}, {}]", fixed(c[0], 4), fixed(c[1], 4)))
                .unwrap_or_default()
        };
        let pairs: Vec<String> = d
            .pairs
            .iter()
            .map(|p| {
                format!(
                    "reads {},{}: {}{}",
                    p.reads[0],
                    p.reads[1],
                    ratio_text(p.ratio, d.se_one_read, d.se_two_reads),
                    ci(p.ci)
                )
            })
            .collect();
        out.push_str(&format!(
            "\ndirect check (no components), averaged over the {} pair(s) a < b of reads (every pair, not only disjoint ones): one-read SE {} vs two-read SE {}; variance x cost ratio one/two = {}{}\n  costs as billed ({unit}): one read = read 0, two reads = reads 0 and 1: panel cost {} vs {}\n  per pair: {}\n",
            d.pairs.len(),
            num(d.se_one_read),
            num(d.se_two_reads),
            ratio_text(d.ratio, d.se_one_read, d.se_two_reads),
            ci(d.ci),
            num(d.cost_one_read),
            num(d.cost_two_reads),
            pairs.join("; ")
        ));
        if r.unbalanced {
            out.push_str("  unbalanced panel: pair (a, b) uses every trajectory with both reads a and b (trajectories with fewer reads are left out, and questions without such a trajectory); the costs are those of the trajectories with at least 2 reads\n");
        }
    }
    if r.unbalanced {
        match &r.clusters {
            None => out.push_str(UNBALANCED_NOTE),
            // The refits then draw whole clusters (the note below says how).
            Some(_) => out.push_str(
                &UNBALANCED_NOTE
                    .replace("(whole questions resampled)", "(whole clusters resampled)"),
            ),
        }
    }
    if let Some(g) = &r.clusters {
        out.push_str(&format!(
            "\nnote: {}; the components are refitted from the drawn questions (a question drawn twice counts twice) and the direct check's SEs are cluster-level\n",
            crate::bootstrap::analysis::cluster_draw_note(g)
        ));
    }
    for w in &r.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    v.text(out);
}

/// What the table of an unbalanced panel says about its method and design.
const UNBALANCED_NOTE: &str = "\nnote: unbalanced panel: components as `stats variance` fits them (REML for unbalanced strata and the pooled fit, ANOVA for balanced strata), refitted in every bootstrap replicate (whole questions resampled); T and R are min/mean/max per question and per trajectory, the losses are taken at the mean design (T = trajectories/Q, R = reads/trajectories), and c_T, c_R1, c_R+ are the mean cost per trajectory, per first read and per later read over the cells that exist\n";

/// A scope's name and design cells: Q, T, R, or for an unbalanced panel Q and the
/// min/mean/max of T per question and of R per trajectory (as `stats variance` prints them).
/// A scope's row of either loss table: its design, unit costs, the loss `(R*, best R, loss
/// %)` with its interval, and the method of an unbalanced report.
fn scope_row(
    r: &OneReadReport,
    s: &ScopeResult,
    loss: Option<(f64, u32, f64)>,
    ci: Option<Interval>,
) -> Vec<Cell> {
    let mut row = scope_design(s);
    row.extend([
        Cell::num(s.unit_costs.trajectory),
        Cell::num(s.unit_costs.first_read),
        Cell::num(s.unit_costs.read),
    ]);
    row.extend(loss_cells(loss, ci));
    row.extend(method_cell(r, s));
    row
}

fn scope_design(s: &ScopeResult) -> Vec<Cell> {
    design(
        &s.name,
        s.questions,
        s.trajectories,
        s.reads,
        s.shape.as_ref(),
    )
}

/// The method cell of a scope (`-` for the pooled fit), present only for an unbalanced
/// panel.
fn method_cell(r: &OneReadReport, s: &ScopeResult) -> Option<Cell> {
    r.unbalanced
        .then(|| s.method.map_or(Cell::Missing, |m| Cell::text(m.name())))
}

/// The direct check's variance x cost ratio, or `undefined (why)`.
fn ratio_text(ratio: f64, se_one: f64, se_two: f64) -> String {
    if ratio.is_finite() {
        format!("{ratio:.4}")
    } else {
        undefined_because(&direct_ratio_reason(se_one, se_two))
    }
}
