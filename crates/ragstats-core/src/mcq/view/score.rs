//! The view of `stats mcq score`: the header line, the score table, the notes and
//! warnings, the clusters, the outcome rates, the positional bias and the shuffle agreement;
//! the CSV is the score table with each level's outcome rates, or with positions only the
//! positional-bias table.

use std::collections::HashMap;

use super::super::positions::PositionRow;
use super::super::score::{FailurePolicy, LevelRow, RateRow, ScoreReport};
use super::{ci, cluster_lines, csv_f64, num, percent, pm};
use crate::table::{Cell, Table, ToView, View};

impl ToView for ScoreReport {
    fn to_view(&self) -> View {
        let mut v = View::new(csv(self));
        blocks(self, &mut v);
        v
    }
}

/// The text blocks, appended to `v`: the tables `scores`, `rates` and (when scored)
/// `positions`, with the lines around them.
fn blocks(r: &ScoreReport, v: &mut View) {
    let s = &r.settings;
    let mut out = format!(
        "{}: model {}, prompt {}{}, {} run(s), {} item(s); failures {}; {} replicates on {} ({})\n",
        r.source,
        r.model,
        r.prompt,
        r.shuffle_seed
            .map(|s| format!(", shuffle seed {s}"))
            .unwrap_or_default(),
        r.runs,
        r.items,
        match s.failures {
            FailurePolicy::Zero => "score 0",
            FailurePolicy::Exclude => "excluded",
        },
        s.resampling.replicates,
        r.backend,
        r.backend_description
    );
    let pct = format!("{} CI", percent(s.resampling.confidence));
    v.text(std::mem::take(&mut out));
    v.table("scores", score_table(&r.scores, &pct));
    if !r.tasks_missing.is_empty() {
        out.push_str(&format!(
            "note: no items for task(s) {}; overall is the mean of the tasks present\n",
            r.tasks_missing.join(", ")
        ));
    }
    for w in &r.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    if let Some(c) = &r.clusters {
        out.push_str(&cluster_lines(c));
    }
    out.push_str("\noutcomes of all result lines (the four rates sum to 1):\n");
    v.text(std::mem::take(&mut out));
    v.table("rates", rates_table(&r.rates));
    if let Some(pos) = &r.positions {
        out.push_str("\npositional bias (parsed lines; position as shown)\n");
        let mut t = Table::new(&["position", "shown", "gold_rate", "chosen_rate", "bias"]);
        for p in pos {
            t.row([
                Cell::Count(p.position as u64),
                Cell::Count(p.shown as u64),
                Cell::num(p.gold_rate),
                Cell::num(p.chosen_rate),
                Cell::num(p.bias),
            ]);
        }
        v.text(std::mem::take(&mut out));
        v.table("positions", t);
    }
    if let Some(ag) = &r.shuffle_agreement {
        out.push_str(&format!(
                "\nshuffle agreement: {} of {} (id, run) pairs give the same answer ({}); EM original {} vs shuffled {}\n",
                ag.same_answer,
                ag.pairs,
                num(ag.agreement),
                num(ag.em_original),
                num(ag.em_shuffled)
            ));
    }
    v.text(out);
}

/// The score table with each level's outcome rates; with positions only the
/// positional-bias table. Numbers in Rust's `to_string` form (a one-run SD is `NaN`).
fn csv(r: &ScoreReport) -> Table {
    match &r.positions {
        Some(pos) => positions_csv(pos),
        None => scores_csv(&r.scores, &r.rates),
    }
}

fn score_table(rows: &[LevelRow], pct: &str) -> Table {
    let h_em = format!("EM {pct}");
    let h_f1 = format!("F1 {pct}");
    let mut t = Table::new(&[
        "level", "name", "items", "EM", "EM runs", &h_em, "F1", "F1 runs", &h_f1,
    ]);
    for r in rows {
        t.row([
            Cell::text(r.level),
            Cell::text(&r.name),
            Cell::Count(r.items as u64),
            Cell::num(r.em.estimate),
            // Raw: `mean ± sd` and `[lo, hi]` are two numbers in one cell.
            Cell::Raw(pm(&r.em)),
            Cell::Raw(score_ci(&r.em)),
            Cell::num(r.f1.estimate),
            Cell::Raw(pm(&r.f1)),
            Cell::Raw(score_ci(&r.f1)),
        ]);
    }
    t
}

/// An interval cell: `[lo, hi]`, or `unreliable` for a zero-width interval of runs that
/// disagree (its ends are in the warning below the table), so that it never reads as a
/// precise result.
fn score_ci(s: &super::super::score::Stat) -> String {
    if s.ci_unreliable {
        "unreliable".into()
    } else {
        ci(s)
    }
}

/// The outcome counts and rates of a group, in the rates table and the scores CSV.
const RATE_COLUMNS: [&str; 9] = [
    "records",
    "parsed",
    "parse_failed",
    "truncated",
    "errors",
    "parsed_rate",
    "parse_failure_rate",
    "truncated_rate",
    "error_rate",
];

fn rates_table(rates: &[RateRow]) -> Table {
    let mut t = Table::new(&[&["group"][..], &RATE_COLUMNS].concat());
    for r in rates {
        t.row([
            Cell::text(&r.group),
            Cell::Count(r.records as u64),
            Cell::Count(r.parsed as u64),
            Cell::Count(r.parse_failed as u64),
            Cell::Count(r.truncated as u64),
            Cell::Count(r.errors as u64),
            Cell::num(r.parsed_rate),
            Cell::num(r.parse_failure_rate),
            Cell::num(r.truncated_rate),
            Cell::num(r.error_rate),
        ]);
    }
    t
}

fn positions_csv(pos: &[PositionRow]) -> Table {
    let mut t = Table::new(&[
        "position",
        "shown",
        "gold",
        "chosen",
        "gold_rate",
        "chosen_rate",
        "bias",
    ]);
    for p in pos {
        t.row([
            Cell::Count(p.position as u64),
            Cell::Count(p.shown as u64),
            Cell::Count(p.gold as u64),
            Cell::Count(p.chosen as u64),
            csv_f64(p.gold_rate),
            csv_f64(p.chosen_rate),
            csv_f64(p.bias),
        ]);
    }
    t
}

fn scores_csv(scores: &[LevelRow], rates: &[RateRow]) -> Table {
    let rate_of: HashMap<&str, &RateRow> = rates.iter().map(|r| (r.group.as_str(), r)).collect();
    let scores_head = [
        "level",
        "name",
        "items",
        "em",
        "em_run_mean",
        "em_run_sd",
        "em_se",
        "em_lo",
        "em_hi",
        "f1",
        "f1_run_mean",
        "f1_run_sd",
        "f1_se",
        "f1_lo",
        "f1_hi",
    ];
    let mut t = Table::new(&[&scores_head[..], &RATE_COLUMNS].concat());
    for r in scores {
        let mut v = vec![
            Cell::text(r.level),
            Cell::text(&r.name),
            Cell::Count(r.items as u64),
        ];
        for s in [&r.em, &r.f1] {
            v.extend([s.estimate, s.run_mean, s.run_sd, s.se, s.ci[0], s.ci[1]].map(csv_f64));
        }
        match rate_of.get(r.name.as_str()) {
            Some(q) => {
                v.extend(
                    [q.records, q.parsed, q.parse_failed, q.truncated, q.errors]
                        .map(|x| Cell::Count(x as u64)),
                );
                v.extend(
                    [
                        q.parsed_rate,
                        q.parse_failure_rate,
                        q.truncated_rate,
                        q.error_rate,
                    ]
                    .map(csv_f64),
                );
            }
            None => v.extend(std::iter::repeat_n(Cell::Missing, 9)),
        }
        t.row(v);
    }
    t
}
