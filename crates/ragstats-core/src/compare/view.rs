//! The comparison's view (`stats compare`): the header lines, the systems table
//! (`systems`), the top group, the pairs table (`pairs`; past [`ALL_PAIRS_UP_TO`] systems only
//! the headline pairs unless every pair is asked for), the per-stratum pairs (`strata`) and
//! the next step; the CSV is one row per pair of the family. The interval columns are
//! labelled with the report's confidence level (`90% CI`).

use super::report::CompareReport;
use crate::table::cells::weights_line;
use crate::table::{percent, Cell, Span, Table, ToView, View};

/// Systems past which the text tables show only [`CompareReport::headline_pairs`] unless
/// every pair is asked for ([`CompareReport::all_pairs`]): 10 systems make 45 pairs, 41 make 820 (and 820 per stratum).
const ALL_PAIRS_UP_TO: usize = 10;

/// What the text tables call each system: a path-like name (`org/model`, a local
/// `/models/…/name`) becomes its last component, unless two systems would then share a
/// name or the last component is empty; every other name stays whole.
fn short_names(names: &[String]) -> Vec<String> {
    let last = |n: &str| {
        n.trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or(n)
            .to_string()
    };
    let shortened: Vec<String> = names.iter().map(|n| last(n)).collect();
    names
        .iter()
        .zip(&shortened)
        .map(|(full, short)| {
            let unique = shortened.iter().filter(|s| *s == short).count() == 1
                && !names.iter().any(|n| n == short && n != full);
            if short.is_empty() || !unique {
                full.clone()
            } else {
                short.clone()
            }
        })
        .collect()
}

/// The report's system names as the text tables show them.
struct Names {
    full: Vec<String>,
    short: Vec<String>,
}

impl Names {
    fn of(r: &CompareReport) -> Self {
        let full: Vec<String> = r.systems.iter().map(|s| s.name.clone()).collect();
        let short = short_names(&full);
        Names { full, short }
    }

    fn show<'a>(&'a self, name: &'a str) -> &'a str {
        self.full
            .iter()
            .position(|f| f == name)
            .map_or(name, |i| self.short[i].as_str())
    }

    /// `short = full` for each shortened name, or `None` when no name was shortened.
    fn legend(&self) -> Option<String> {
        let pairs: Vec<String> = self
            .full
            .iter()
            .zip(&self.short)
            .filter(|(f, s)| f != s)
            .map(|(f, s)| format!("{s} = {f}"))
            .collect();
        (!pairs.is_empty()).then(|| pairs.join("; "))
    }
}

/// A p-value in a text table: one below f64's smallest (a Wald p past |z| ≈ 38 underflows
/// to 0) shows as `< 1e-300`, not as a p of exactly 0.
fn p_cell(p: f64) -> Cell {
    if p == 0.0 {
        Cell::text("< 1e-300")
    } else {
        Cell::num(p)
    }
}

/// The interval column's header at the report's confidence level: `95% CI`.
fn ci_header(r: &CompareReport) -> String {
    format!("{} CI", percent(r.engine.confidence.unwrap_or(0.95)))
}

/// A degrees-of-freedom cell, one decimal (undefined when the SE is 0).
fn df_cell(df: Option<f64>) -> Cell {
    df.map_or(Cell::Undefined(None), |v| Cell::fixed(v, 1))
}

/// `[lo, hi]` with 6 decimals.
fn interval(i: [f64; 2]) -> Cell {
    Cell::text(format!("[{:.6}, {:.6}]", i[0], i[1]))
}

fn systems_table(r: &CompareReport, names: &Names) -> Table {
    let ci = ci_header(r);
    let mut t = Table::new(&[
        "system",
        "Q",
        "estimate",
        "SE",
        "df",
        ci.as_str(),
        "rank CI",
        "best share",
        "top",
    ]);
    for s in r.by_estimate().into_iter().map(|i| &r.systems[i]) {
        t.row([
            Cell::text(names.show(&s.name)),
            Cell::Count(s.questions as u64),
            Cell::fixed(s.estimate, 6),
            Cell::fixed(s.se, 6),
            df_cell(s.df),
            interval(s.ci.0),
            Cell::text(format!("{}–{}", s.rank_ci[0], s.rank_ci[1])),
            Cell::fixed(s.best_share, 4),
            Cell::text(if s.top_group { "*" } else { "" }),
        ]);
    }
    t
}

fn pairs_table(r: &CompareReport, shown: &[usize], names: &Names) -> Table {
    let ci = ci_header(r);
    let mut t = Table::new(&[
        "pair (b − a)",
        "estimate",
        "SE",
        "df",
        ci.as_str(),
        "simultaneous",
        "p",
        "p(Holm)",
        "q(BH)",
        "resolved",
    ]);
    for p in shown.iter().map(|&i| &r.pairs[i]) {
        t.row([
            Cell::text(format!("{} − {}", names.show(&p.b), names.show(&p.a))),
            Cell::fixed(p.estimate, 6),
            Cell::fixed(p.se, 6),
            df_cell(p.df),
            interval(p.ci.0),
            interval(p.ci_simultaneous.0),
            p_cell(p.p),
            p_cell(p.p_holm),
            p_cell(p.q_bh),
            Cell::text(if p.resolved { "yes" } else { "no" }),
        ]);
    }
    t
}

fn strata_table(r: &CompareReport, shown: &[usize], names: &Names) -> Table {
    let mut t = Table::new(&[
        "stratum",
        "Q",
        "pair (b − a)",
        "estimate",
        "SE",
        "p",
        "p(Holm)",
    ]);
    for s in &r.strata {
        // A stratum's pairs are the family's, in the family's order.
        for p in shown.iter().filter_map(|&i| s.pairs.get(i)) {
            t.row([
                Cell::text(&s.name),
                Cell::Count(s.questions as u64),
                Cell::text(format!("{} − {}", names.show(&p.b), names.show(&p.a))),
                Cell::fixed(p.estimate, 6),
                Cell::fixed(p.se, 6),
                p_cell(p.p),
                p_cell(p.p_holm),
            ]);
        }
    }
    t
}

impl ToView for CompareReport {
    fn to_view(&self) -> View {
        let r = self;
        let mut v = View::new(csv(r));
        let c = &r.critical_values;
        let family = match &r.family.reference {
            Some(a) => format!("every arm − {a} ({} pairs)", r.family.size),
            None => format!("all pairs ({})", r.family.size),
        };
        let df =
            c.df.map_or("normal reference".to_string(), |v| format!("df {v:.1}"));
        let max_t = c.max_t.map_or("-".to_string(), |v| format!("{v:.3}"));
        let mut s = format!(
            "metric: {}   family: {family}\n\
             critical values ({df}): marginal t {:.3}, simultaneous {:.3} (max-|t| {max_t}; independent systems {:.3}; Bonferroni {:.3})\n\
             intervals: {}\n",
            r.metric, c.marginal, c.simultaneous, c.independent, c.bonferroni, r.methods.ci
        );
        s.push_str(&weights_line(
            r.strata.iter().map(|st| st.name.as_str()),
            &r.weights,
        ));
        for n in &r.notes {
            s.push_str(&format!("note: {n}\n"));
        }
        let names = Names::of(r);
        if let Some(legend) = names.legend() {
            s.push_str(&format!("names: {legend}\n"));
        }
        let shown: Vec<usize> = if r.all_pairs || r.systems.len() <= ALL_PAIRS_UP_TO {
            (0..r.pairs.len()).collect()
        } else {
            r.headline_pairs()
        };
        s.push('\n');
        v.text(s).table("systems", systems_table(r, &names));
        let top: Vec<&str> = r.top_group.iter().map(|t| names.show(t)).collect();
        v.text(format!(
            "\ntop group (rank interval reaching 1): {}\n\n",
            top.join(", ")
        ));
        if shown.len() < r.pairs.len() {
            v.text_naming(vec![
                Span::text(format!(
                    "pairs: {} of {} shown: the leader against the rest of the top group and \
                     each system against the next by estimate (",
                    shown.len(),
                    r.pairs.len()
                )),
                Span::switch("all_pairs"),
                Span::text(" for every pair; JSON and CSV hold them all)\n"),
            ]);
        }
        v.table("pairs", pairs_table(r, &shown, &names))
            .text("\n")
            .table("strata", strata_table(r, &shown, &names))
            .text("\n");
        match (&r.next, &r.next_undefined) {
            (Some(n), _) => v.text(format!("next: {}\n", n.text)),
            (None, Some(why)) => v.text(format!("next: nothing to resolve ({why})\n")),
            (None, None) => &mut v,
        };
        v
    }
}

/// The pairs table, one row per pair of the family.
fn csv(r: &CompareReport) -> Table {
    let mut t = Table::new(&[
        "a",
        "b",
        "estimate",
        "se",
        "df",
        "ci_lower",
        "ci_upper",
        "sim_lower",
        "sim_upper",
        "p",
        "p_holm",
        "q_bh",
    ]);
    for p in &r.pairs {
        t.row([
            Cell::text(&p.a),
            Cell::text(&p.b),
            Cell::num(p.estimate),
            Cell::num(p.se),
            p.df.map_or(Cell::Undefined(None), Cell::num),
            Cell::num(p.ci.lower()),
            Cell::num(p.ci.upper()),
            Cell::num(p.ci_simultaneous.lower()),
            Cell::num(p.ci_simultaneous.upper()),
            Cell::num(p.p),
            Cell::num(p.p_holm),
            Cell::num(p.q_bh),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_underflowed_p_is_shown_as_below_the_smallest_double() {
        let mut t = Table::new(&["p"]);
        t.row([p_cell(0.0)]);
        t.row([p_cell(3.4247e-203)]);
        t.row([p_cell(0.306451)]);
        let text = t.to_text();
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        assert_eq!(lines[1..], ["< 1e-300", "3.4247e-203", "0.306451"]);
    }

    #[test]
    fn path_like_names_are_shortened_unless_two_would_collide() {
        let names: Vec<String> = [
            "upstage/SOLAR-10.7B-Instruct-v1.0",
            "/models/n22/llama3.1-chat/",
            "org-a/base",
            "org-b/base",
            "gpt-4o",
            "x/chat",
            "chat",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            short_names(&names),
            [
                "SOLAR-10.7B-Instruct-v1.0",
                "llama3.1-chat",
                // Both end in `base`; `x/chat`'s last component is another system's name.
                "org-a/base",
                "org-b/base",
                "gpt-4o",
                "x/chat",
                "chat",
            ]
        );
        let n = Names {
            short: short_names(&names[..2]),
            full: names[..2].to_vec(),
        };
        assert_eq!(
            n.legend().as_deref(),
            Some("SOLAR-10.7B-Instruct-v1.0 = upstage/SOLAR-10.7B-Instruct-v1.0; llama3.1-chat = /models/n22/llama3.1-chat/")
        );
        assert_eq!(
            n.show("upstage/SOLAR-10.7B-Instruct-v1.0"),
            "SOLAR-10.7B-Instruct-v1.0"
        );
    }
}
