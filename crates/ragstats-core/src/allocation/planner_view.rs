//! The plan's view (`stats plan`): what was searched, the strata's components and unit
//! costs (`strata`), the allocations (`allocations`), the Q-only answer, the plan's
//! uncertainty and the notes; the CSV is one row per allocation, every digit.

use super::planner::Goal;
use super::planner_report::{PlanGoal, PlanInterval, PlanReport, QOnly};
use crate::table::cells::{label, weights_line};
use crate::table::{fixed, number as num, percent, Cell, Table, ToView, View};

impl ToView for PlanReport {
    fn to_view(&self) -> View {
        let mut v = View::new(csv(self));
        blocks(self, &mut v);
        v
    }
}

/// One row per allocation, every digit.
fn csv(r: &PlanReport) -> Table {
    let mut t = Table::new(&[
        "rank",
        "questions",
        "per_stratum",
        "trajectories",
        "reads",
        "se",
        "se_q_only",
        "mde",
        "power",
        "cost",
        "extra_percent",
    ]);
    let names = names(r);
    // Every digit; a value that is not finite as Rust prints it (`NaN`: an undefined extra
    // of a zero-SE best stays visible), as plan's CSV always wrote it, where a typed cell
    // would leave the cell empty. An absent value is an empty cell.
    let digits = |v: f64| {
        if v.is_finite() {
            Cell::num(v)
        } else {
            Cell::Raw(v.to_string())
        }
    };
    let o = |v: Option<f64>| v.map_or(Cell::Missing, digits);
    for (i, row) in r.allocations.iter().enumerate() {
        let a = &row.allocation;
        t.row([
            Cell::Count(i as u64 + 1),
            Cell::Count(a.questions as u64),
            Cell::text(per_stratum(&names, &a.per_stratum)),
            Cell::Count(a.trajectories as u64),
            Cell::Count(a.reads as u64),
            digits(a.se),
            digits(row.se_q_only),
            digits(row.mde),
            o(row.power),
            o(a.cost),
            o(row.extra_percent),
        ]);
    }
    t
}

fn names(r: &PlanReport) -> Vec<String> {
    r.strata.iter().map(|s| s.name.clone()).collect()
}

fn per_stratum(names: &[String], counts: &[usize]) -> String {
    names
        .iter()
        .zip(counts)
        .map(|(n, q)| format!("{n}={q}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The text output: what was searched, the strata's components and unit costs, the
/// allocations, the Q-only answer, the plan's uncertainty and the notes; appended to `v`.
fn blocks(r: &PlanReport, v: &mut View) {
    let mut out = header(r);
    out.push_str(&format!(
        "components (truncated at 0) and unit costs ({}{}):\n",
        r.unit,
        match (&r.ledger, r.costs_given) {
            (Some(l), _) => format!(", from {}", l.display()),
            (None, true) => ", as given".into(),
            _ => ", none given".into(),
        }
    ));
    v.text(out).table("strata", strata_table(r));
    let mut out = weights_line(r.strata.iter().map(|s| s.name.as_str()), &r.weights);
    out.push('\n');
    v.text(out).table("allocations", allocations_table(r));
    let mut out = q_only_line(r);
    if !r.bootstrap.is_empty() {
        out.push_str(&format!(
            "\nplan uncertainty: stratified question bootstrap of the audit, {} replicates on {}, components{} refitted in each; {} percentile intervals:\n",
            r.engine.replicates.unwrap_or_default(),
            r.engine.adapter.as_deref().unwrap_or_default(),
            if r.ledger_costs { " and unit costs" } else { "" },
            // The confidence level as it heads every interval: `95%`.
            percent(r.engine.confidence.unwrap_or_default())
        ));
        for iv in &r.bootstrap {
            out.push_str(&interval_line(r, iv));
        }
    }
    if !r.notes.is_empty() {
        out.push('\n');
        for n in &r.notes {
            out.push_str(&format!("note: {n}\n"));
        }
    }
    v.text(out);
}

/// The first lines: the goal and the range searched.
fn header(r: &PlanReport) -> String {
    let b = r.bounds;
    let shares = per_stratum(
        &names(r),
        &r.strata.iter().map(|s| s.weight).collect::<Vec<_>>(),
    );
    let search = format!(
        "searched every T = 1..{}, R = 1..{} and total Q = 1..{} (split by largest remainder in the shares {shares})",
        b.max_trajectories, b.max_reads, b.max_questions
    );
    let unit = &r.unit;
    match r.goal {
        PlanGoal::TargetSe { se, from_mde } => {
            let mut out = String::new();
            if let Some(d) = from_mde {
                out.push_str(&format!(
                    "MDE {} at two-sided alpha = {} and power {}: target SE = MDE/(z_{{1-alpha/2}} + z_power) = {}/{} = {}\n",
                    num(d), r.alpha, r.power, num(d), fixed(r.mde_multiplier, 6), num(se)
                ));
            }
            out.push_str(&format!(
                "least-cost allocations ({unit}) with nested SE <= {}; {search}: for each (T, R) the cheapest Q, so the first row is the minimum over the whole range\n",
                num(se)
            ));
            out
        }
        PlanGoal::Budget(budget) => format!(
            "least-SE allocations costing at most {} {unit}; {search}: for each (T, R) the most precise affordable Q, so the first row is the minimum over the whole range\n",
            num(budget)
        ),
        PlanGoal::Design { .. } => format!(
            "the given design, split by largest remainder in the shares {shares}; MDE at two-sided alpha = {} and power {}\n",
            r.alpha, r.power
        ),
    }
}

/// Components (truncated at 0) and unit costs per stratum.
fn strata_table(r: &PlanReport) -> Table {
    let mut t = Table::new(&["stratum", "σ²_q", "σ²_t", "σ²_r", "c_T", "c_R1", "c_R+"]);
    for s in &r.strata {
        let c = s.components.truncated();
        t.row([
            label(&s.name),
            Cell::num(c.question),
            Cell::opt_num(c.trajectory),
            Cell::opt_num(c.read),
            Cell::opt_num(s.costs.map(|c| c.trajectory)),
            Cell::opt_num(s.costs.map(|c| c.first_read)),
            Cell::opt_num(s.costs.map(|c| c.read)),
        ]);
    }
    t
}

/// The allocations, best first.
fn allocations_table(r: &PlanReport) -> Table {
    let design = matches!(r.goal, PlanGoal::Design { .. });
    let mut head = vec![
        "rank",
        "Q",
        "Q per stratum",
        "T",
        "R",
        "SE",
        "SE Q-only",
        "MDE",
    ];
    if r.difference.is_some() {
        head.push("power");
    }
    head.push("cost");
    if !design {
        head.push(match r.goal {
            PlanGoal::Budget(_) => "SE more",
            _ => "cost more",
        });
    }
    let names = names(r);
    let mut t = Table::new(&head);
    for (i, row) in r.allocations.iter().enumerate() {
        let a = &row.allocation;
        let mut cells = vec![
            Cell::Count(i as u64 + 1),
            Cell::Count(a.questions as u64),
            Cell::text(per_stratum(&names, &a.per_stratum)),
            Cell::Count(a.trajectories as u64),
            Cell::Count(a.reads as u64),
            Cell::num(a.se),
            Cell::num(row.se_q_only),
            Cell::num(row.mde),
        ];
        if let Some(p) = row.power {
            cells.push(Cell::fixed(p, 4));
        }
        cells.push(Cell::opt_num(a.cost));
        if !design {
            cells.push(
                // A signed percentage `+7.14%` is no plain number: text, as always.
                row.extra_percent
                    .map_or(Cell::Missing, |e| Cell::Raw(format!("+{}%", fixed(e, 2)))),
            );
        }
        t.row(cells);
    }
    t
}

/// The Q-only forecast's answer to the goal, or why it has none.
fn q_only_line(r: &PlanReport) -> String {
    let names = names(r);
    match (&r.q_only, r.goal.search_goal()) {
        (Some(q), _) => {
            let QOnly {
                trajectories: ts,
                reads: rs,
                ..
            } = q;
            let design = if ts.iter().all(|&t| t == ts[0]) && rs.iter().all(|&x| x == rs[0]) {
                format!("T = {}, R = {}", ts[0], rs[0])
            } else {
                "each stratum's T and R".into()
            };
            format!(
                "\nQ-only forecast (SE_audit·sqrt(Q_audit/Q), the audit's design {design}): Q = {} ({}), SE Q-only {}, nested SE there {}, cost {}\n",
                q.questions,
                per_stratum(&names, &q.per_stratum),
                num(q.se_q_only),
                num(q.se_nested),
                Cell::opt_num(q.cost).display(),
            )
        }
        (None, Some(Goal::TargetSe(se))) => format!(
            "\nQ-only forecast (SE_audit·sqrt(Q_audit/Q), the audit's design): no Q up to {} reaches SE {}\n",
            r.bounds.max_questions,
            num(se)
        ),
        (None, Some(Goal::Budget(b))) => format!(
            "\nQ-only forecast (SE_audit·sqrt(Q_audit/Q), the audit's design): {} {} does not buy one question per stratum there\n",
            num(b),
            r.unit
        ),
        (None, None) => String::new(),
    }
}

/// One bootstrap interval: a question count with one decimal (`> max` beyond the bounds),
/// any other statistic as a number.
fn interval_line(r: &PlanReport, iv: &PlanInterval) -> String {
    let max_q = r.bounds.max_questions;
    let show = |v: f64| {
        if iv.count && v > max_q as f64 {
            format!("> {max_q}")
        } else if iv.count {
            format!("{v:.1}")
        } else {
            num(v)
        }
    };
    let beyond = if iv.beyond_bounds > 0 && matches!(r.goal, PlanGoal::Budget(_)) {
        format!(
            " ({} replicates afford no allocation, counted as Q = 0)",
            iv.beyond_bounds
        )
    } else if iv.beyond_bounds > 0 {
        format!(
            " ({} replicates need more than {max_q} questions)",
            iv.beyond_bounds
        )
    } else {
        String::new()
    };
    format!(
        "  {}: {} [{}, {}]{beyond}\n",
        iv.what,
        if iv.count {
            format!("{}", iv.estimate)
        } else {
            num(iv.estimate)
        },
        show(iv.ci[0]),
        show(iv.ci[1]),
    )
}
