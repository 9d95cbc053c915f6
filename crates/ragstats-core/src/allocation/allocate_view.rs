//! The allocation comparison's view (`stats allocate`): the notes, the allocations table
//! (`allocations`), the pairs, and for an unbalanced master panel its design (`master`);
//! the CSV is one row per pair and statistic.

use super::allocate::{AllocateReport, Compared, MasterStratum};
use crate::components::variance_view::design;
use crate::table::cells::label;
use crate::table::{fixed, percent, Cell, Table, ToView, View, UNDEFINED};

impl ToView for AllocateReport {
    /// The allocations table, the pairs, and for an unbalanced master panel its note.
    fn to_view(&self) -> View {
        let r = self;
        let e = &r.engine;
        let mut v = View::new(csv(r));
        // Notes first: they change how every number below reads.
        v.text(
            r.notes
                .iter()
                .map(|n| format!("note: {n}\n"))
                .collect::<String>(),
        );
        blocks(
            r,
            // The confidence level heads the intervals: `95%`.
            &percent(e.confidence.unwrap_or_default()),
            e.replicates.unwrap_or_default(),
            e.adapter.as_deref().unwrap_or_default(),
            &mut v,
        );
        if let Some(m) = &r.master_design {
            unbalanced_note(m, r, &mut v);
        }
        v
    }
}

/// One row per pair and statistic: value, interval, whether it is resolved.
fn csv(report: &AllocateReport) -> Table {
    let mut t = Table::new(&[
        "a",
        "b",
        "statistic",
        "value",
        "ci_low",
        "ci_high",
        "resolved",
    ]);
    let mut push = |a: &str, b: &str, what: String, c: &Compared| {
        t.row([
            Cell::text(a),
            Cell::text(b),
            Cell::text(what),
            Cell::num(c.value),
            Cell::num(c.ci[0]),
            Cell::num(c.ci[1]),
            if c.value.is_finite() {
                Cell::text(c.resolved.to_string())
            } else {
                Cell::Undefined(None)
            },
        ])
    };
    for p in &report.pairs {
        push(&p.a, &p.b, "se_reduction".into(), &p.se_reduction);
        push(
            &p.a,
            &p.b,
            "var_x_tokens_ratio".into(),
            &p.var_x_tokens_ratio,
        );
        for (price, c) in report.search_prices.iter().zip(&p.var_x_fees_ratio) {
            push(&p.a, &p.b, format!("var_x_fees_ratio@{price}"), c);
        }
    }
    t
}

/// The allocations table and the pairs' comparisons, appended to `v`.
fn blocks(r: &AllocateReport, pct: &str, reps: u64, adapter: &str, v: &mut View) {
    let mut head = vec![
        "allocation".to_string(),
        "Q:T:R".into(),
        "estimate".into(),
        "SE".into(),
        "model tokens".into(),
    ];
    for p in &r.search_prices {
        head.push(format!("USD @{p}/1k"));
    }
    let h: Vec<&str> = head.iter().map(String::as_str).collect();
    let mut t = Table::new(&h);
    for a in &r.allocations {
        let mut row = vec![
            label(&a.name),
            Cell::text(format!("{}:{}:{}", a.questions, a.trajectories, a.reads)),
            Cell::num(a.estimate),
            Cell::num(a.se),
            Cell::fixed(a.model_tokens, 0),
        ];
        row.extend(a.fees_usd.iter().map(|&f| Cell::fixed(f, 4)));
        t.row(row);
    }
    v.table("allocations", t);
    // With clusters the walk's units are clusters (docs/METHODS.md, "Clustered allocations").
    let units = if r.allocations.iter().any(|a| a.clusters.is_some()) {
        "clusters"
    } else {
        "questions"
    };
    let mut out = format!(
        "\npairs ({pct} bootstrap intervals, {reps} paired replicates (each sub-panel's {units} redrawn at its size, from one sequence of the master panel's draws per stratum) on {adapter}):\n"
    );
    let fmt = |c: &Compared, pct: bool| {
        if !c.value.is_finite() {
            return UNDEFINED.to_string();
        }
        let s = if pct {
            format!(
                "{:.1}% [{}%, {}%]",
                100.0 * c.value,
                fixed(100.0 * c.ci[0], 1),
                fixed(100.0 * c.ci[1], 1)
            )
        } else {
            format!(
                "{:.3} [{}, {}]",
                c.value,
                fixed(c.ci[0], 3),
                fixed(c.ci[1], 3)
            )
        };
        format!("{s}{}", if c.resolved { "" } else { " unresolved" })
    };
    for p in &r.pairs {
        out.push_str(&format!(
            "  {} vs {}: {} reduces measured SE by {}\n",
            p.a,
            p.b,
            p.a,
            fmt(&p.se_reduction, true)
        ));
        if let Some(why) = &p.undefined {
            out.push_str(&format!("    {}\n", Cell::undefined_because(why).display()));
        }
        out.push_str(&format!(
            "    replicate correlation of SE_{} and SE_{}: {}\n",
            p.a,
            p.b,
            fixed(p.se_correlation, 3)
        ));
        out.push_str(&format!(
            "    variance x tokens ratio {}/{}: {}\n",
            p.a,
            p.b,
            fmt(&p.var_x_tokens_ratio, false)
        ));
        for (price, c) in r.search_prices.iter().zip(&p.var_x_fees_ratio) {
            out.push_str(&format!(
                "    variance x fees ratio at ${price}/1k searches: {}\n",
                fmt(c, false)
            ));
        }
    }
    v.text(out);
}

/// What the table says about an unbalanced master panel: each stratum's design spread and,
/// per allocation, the questions that fall short of its T trajectories of R reads; appended
/// to `v`.
fn unbalanced_note(master: &[MasterStratum], r: &AllocateReport, v: &mut View) {
    v.text(
        "\nnote: the master panel is unbalanced; the allocations compare measured SEs (no components are fitted). \
         Sub-panel Q:T:R = the first Q questions with trajectories 0..T-1 and reads 0..R-1 by label (the stratum's \
         first T and R labels; by position in each question's own label order where labels are unique per \
         question); a question missing any of them keeps what it has and is counted short. Master design (T and R min/mean/max per \
         question and per trajectory):\n",
    );
    let mut t = Table::new(&["stratum", "Q", "T", "R"]);
    for s in master {
        if let Some(shape) = &s.shape {
            t.row(design(&s.name, 0, 0, 0, Some(shape)));
        }
    }
    v.table("master", t);
    let mut out = String::new();
    for a in &r.allocations {
        if let Some(short) = &a.short {
            let parts: Vec<String> = short.iter().map(|(n, k)| format!("{k} in {n}")).collect();
            out.push_str(&format!(
                "note: {} ({}:{}:{}): questions missing some of the first {} trajectories and {} reads (short), kept with what they have: {}\n",
                a.name,
                a.questions,
                a.trajectories,
                a.reads,
                a.trajectories,
                a.reads,
                parts.join(", ")
            ));
        }
    }
    v.text(out);
}
