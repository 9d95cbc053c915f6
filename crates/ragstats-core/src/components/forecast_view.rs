//! The forecast report's view (`stats forecast`): the designs table (`designs`, with the
//! measured columns when any design has a measured panel), the weights, the notes; the CSV
//! is one row per design, every digit, without the notes.

use super::forecast::{Forecast, ForecastReport};
use crate::table::cells::weights_line;
use crate::table::{Cell, Table, ToView, View};

impl ToView for ForecastReport {
    fn to_view(&self) -> View {
        let mut v = View::new(csv(self));
        v.table("designs", designs(self));
        let mut out = weights_line(self.strata.iter().map(String::as_str), &self.weights);
        if !self.notes.is_empty() {
            out.push('\n');
            for n in &self.notes {
                out.push_str(&format!("note: {n}\n"));
            }
        }
        v.text(out);
        v
    }
}

/// One row per design, with the measured columns when any design has a measured panel.
fn designs(r: &ForecastReport) -> Table {
    let measured = r.designs.iter().any(|d| d.se_measured.is_some());
    let mut head = vec!["design", "Q per stratum", "SE nested", "SE Q-only"];
    if measured {
        head.extend(["SE measured", "rel.err nested", "rel.err Q-only"]);
    }
    let mut t = Table::new(&head);
    for d in &r.designs {
        let f = &d.forecast;
        let mut cells = vec![
            Cell::text(design_label(f)),
            Cell::text(per_stratum(f)),
            Cell::num(f.se_nested),
            Cell::num(f.se_q_only),
        ];
        if measured {
            // A signed percentage is text (left-aligned), as it always was.
            let pct = |v: Option<f64>| {
                v.map_or(Cell::Missing, |v| Cell::text(format!("{:+.1}%", 100.0 * v)))
            };
            cells.push(Cell::opt_num(d.se_measured));
            cells.push(pct(d.rel_error_nested));
            cells.push(pct(d.rel_error_q_only));
        }
        t.row(cells);
    }
    t
}

/// `Q:T:R`, or `GxM:T:R` for a clustered design.
fn design_label(f: &Forecast) -> String {
    match (f.clusters, f.questions_per_cluster) {
        (Some(g), Some(m)) => format!("{g}x{m}:{}:{}", f.trajectories, f.reads),
        _ => format!("{}:{}:{}", f.questions, f.trajectories, f.reads),
    }
}

/// One row per design; the notes are not in it (the CLI prints them on stderr). With a
/// clustered design, the columns `clusters` and `questions_per_cluster` follow.
fn csv(r: &ForecastReport) -> Table {
    let clustered = r.designs.iter().any(|d| d.forecast.clusters.is_some());
    let mut head = vec![
        "questions",
        "per_stratum",
        "trajectories",
        "reads",
        "se_nested",
        "se_q_only",
        "measured_panel",
        "se_measured",
        "rel_error_nested",
        "rel_error_q_only",
    ];
    if clustered {
        head.extend(["clusters", "questions_per_cluster"]);
    }
    let mut t = Table::new(&head);
    // Every digit as Rust prints it, as this CSV always has: a finite number is a typed
    // cell (its CSV form is those digits); a 0/0 relative error of a measured SE of 0
    // stays `NaN`, which a typed cell would leave empty.
    let all = |v: f64| {
        if v.is_finite() {
            Cell::num(v)
        } else {
            Cell::Raw(v.to_string())
        }
    };
    let o = |v: Option<f64>| v.map_or(Cell::Missing, all);
    for d in &r.designs {
        let f = &d.forecast;
        let count = |v: Option<usize>| v.map_or(Cell::Missing, |n| Cell::Count(n as u64));
        let mut row = vec![
            Cell::Count(f.questions as u64),
            Cell::text(per_stratum(f)),
            Cell::Count(f.trajectories as u64),
            Cell::Count(f.reads as u64),
            all(f.se_nested),
            all(f.se_q_only),
            d.measured_panel
                .as_ref()
                .map_or(Cell::Missing, |p| Cell::text(p.display().to_string())),
            o(d.se_measured),
            o(d.rel_error_nested),
            o(d.rel_error_q_only),
        ];
        if clustered {
            row.extend([count(f.clusters), count(f.questions_per_cluster)]);
        }
        t.row(row);
    }
    t
}

/// `name=Q,name=Q` of a forecast's questions per stratum (`name=GxM` for a clustered one).
fn per_stratum(f: &Forecast) -> String {
    if let (false, Some(m)) = (f.clusters_per_stratum.is_empty(), f.questions_per_cluster) {
        return f
            .clusters_per_stratum
            .iter()
            .map(|(n, g)| format!("{n}={g}x{m}"))
            .collect::<Vec<_>>()
            .join(",");
    }
    f.per_stratum
        .iter()
        .map(|(n, q)| format!("{n}={q}"))
        .collect::<Vec<_>>()
        .join(",")
}
