//! The cost report's view (`stats cost`): the groups table (`groups`) and the unit costs;
//! the CSV is one row per (arm, dataset) group, then the total, every digit.

use super::accounting::{CostReport, Totals, UnitCostPair};
use crate::table::cells::label;
use crate::table::{number as num, Cell, Table, ToView, View};

impl ToView for CostReport {
    fn to_view(&self) -> View {
        let mut v = View::new(csv(self));
        blocks(self, &mut v);
        v
    }
}

/// One row per (arm, dataset) group, then the total.
fn csv(r: &CostReport) -> Table {
    let mut header: Vec<String> = [
        "arm",
        "dataset",
        "model_calls",
        "input_tokens",
        "cached_input_tokens",
        "output_tokens",
        "model_tokens",
        "model_usd",
        "search_requests",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for p in &r.search_prices {
        header.push(format!("total_usd_at_search_{p}"));
    }
    let mut t = Table::new(&header);
    for g in r.groups.iter().chain(std::iter::once(&r.total)) {
        t.row(cells(g, |s| Cell::text(s), Cell::num));
    }
    t
}

/// One group's row: its arm and dataset as `name` shows them, counts as integers, dollars as
/// `usd` shows them (text: [`label`]s and 4 decimals; CSV: text and every digit).
fn cells(g: &Totals, name: fn(&str) -> Cell, usd: fn(f64) -> Cell) -> Vec<Cell> {
    let mut row = vec![name(&g.arm), name(&g.dataset)];
    row.extend(
        [
            g.model_calls,
            g.input_tokens,
            g.cached_input_tokens,
            g.output_tokens,
            g.model_tokens,
        ]
        .map(Cell::Count),
    );
    row.push(usd(g.model_usd));
    row.push(Cell::Count(g.search_requests));
    row.extend(g.total_usd.iter().map(|&v| usd(v)));
    row
}

/// The groups table and the unit costs, appended to `v`.
fn blocks(r: &CostReport, v: &mut View) {
    let mut head = vec![
        "arm".to_string(),
        "dataset".into(),
        "calls".into(),
        "input tok".into(),
        "cached tok".into(),
        "output tok".into(),
        "model tok".into(),
        "model USD".into(),
        "searches".into(),
    ];
    for p in &r.search_prices {
        head.push(format!("USD @{p}/1k"));
    }
    let h: Vec<&str> = head.iter().map(|s| s.as_str()).collect();
    let mut t = Table::new(&h);
    for g in r.groups.iter().chain(std::iter::once(&r.total)) {
        t.row(cells(g, label, |v| Cell::fixed(v, 4)));
    }
    v.table("groups", t);
    let mut out = String::new();
    let u = &r.unit_costs;
    if u.trajectory_note.is_some() || u.read_note.is_some() {
        // Say which unit cost this ledger gives, and why the other is not a figure.
        out.push_str("\nunit costs:\n");
        let price = |x: f64| {
            u.usd
                .as_ref()
                .map(|_| {
                    format!(
                        " (${} with search at ${}/1k requests)",
                        num(x),
                        u.search_usd_per_1000
                    )
                })
                .unwrap_or_default()
        };
        let usd = u.usd.unwrap_or(UnitCostPair {
            trajectory: f64::NAN,
            read: f64::NAN,
        });
        match &u.trajectory_note {
            Some(n) => out.push_str(&format!("  c_T: not computed: {n}\n")),
            None => out.push_str(&format!(
                "  c_T = {} tokens over {} trajectories{}\n",
                num(u.tokens.trajectory),
                u.trajectories,
                price(usd.trajectory)
            )),
        }
        match &u.read_note {
            Some(n) => out.push_str(&format!("  c_R: not computed: {n}\n")),
            None => out.push_str(&format!(
                "  c_R = {} tokens over {} reads{}\n",
                num(u.tokens.read),
                u.reads,
                price(usd.read)
            )),
        }
    } else {
        out.push_str(&format!(
            "\nunit costs over {} trajectories and {} reads (both arms):\n  c_T = {} tokens, c_R = {} tokens\n",
            u.trajectories,
            u.reads,
            num(u.tokens.trajectory),
            num(u.tokens.read)
        ));
    }
    if let (Some(d), None, None) = (&u.usd, &u.trajectory_note, &u.read_note) {
        out.push_str(&format!(
            "  c_T = ${} , c_R = ${}  (search at ${}/1k requests)\n",
            num(d.trajectory),
            num(d.read),
            u.search_usd_per_1000
        ));
    }
    if r.total.unknown_token_rows > 0 {
        out.push_str(&format!(
            "note: {} rows had unknown (null) token counts and were billed as 0 tokens\n",
            r.total.unknown_token_rows
        ));
    }
    v.text(out);
}
