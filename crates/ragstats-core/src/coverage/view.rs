//! The coverage report's view (`stats coverage PANEL`): what was simulated and the target,
//! the notes, the rows (`rows`) and what falls short of the target; the CSV is the rows.

use super::CoverageReport;
use crate::table::{number, percent, Cell, Table, ToView, View};

/// One row per generator, analysis and interval or test.
fn rows_table(r: &CoverageReport) -> Table {
    let mut t = Table::new(&[
        "generator",
        "analysis",
        "interval or test",
        "nominal",
        "rate",
        "MC SE",
        "n",
        "errors",
        "verdict",
    ]);
    for row in &r.rows {
        t.row([
            Cell::text(row.generator),
            Cell::text(row.analysis),
            Cell::text(&row.statistic),
            Cell::fixed(row.nominal, 3),
            row.rate.map_or(Cell::Missing, |v| Cell::fixed(v, 3)),
            row.mc_se.map_or(Cell::Missing, |v| Cell::fixed(v, 3)),
            Cell::Count(row.n),
            Cell::Count(row.errors),
            Cell::text(row.verdict),
        ]);
    }
    t
}

impl ToView for CoverageReport {
    fn to_view(&self) -> View {
        let r = self;
        let mut v = View::new(rows_table(r));
        let design: Vec<String> = r
            .design
            .iter()
            .map(|s| {
                format!(
                    "{} Q {} T {} R {}",
                    s.name, s.questions, s.trajectories, s.reads
                )
            })
            .collect();
        let mut s = format!(
            "coverage of {} ({:?} scores; arms {}): {} simulated panels per generator, {} replicates each\n\
             design: {}\n\
             target: {} intervals cover {:.3}–{:.3}; {} tests reject at most {:.3} under the null\n",
            r.outcome.as_deref().unwrap_or(&r.metric),
            r.scale,
            r.arms.join(", "),
            r.panels,
            r.replicates,
            design.join("; "),
            percent(r.confidence),
            r.target.interval[0],
            r.target.interval[1],
            percent(1.0 - r.confidence),
            r.target.test_max,
        );
        if let Some(h) = &r.labels {
            s.push_str(&format!(
                "labels: {} [{}], lambda {}; human model per stratum and arm (Y = a + b·judge + e on the labelled questions; truth a + b·m):\n",
                h.labels, h.label_metric, h.lambda
            ));
            for st in &h.strata {
                for a in &st.arms {
                    s.push_str(&format!(
                        "  {} {}: {} labelled, a {}, b {}, sd(e) {}, r {}, judge mean {}, human truth {}, bias {}\n",
                        st.name,
                        a.arm,
                        a.labelled,
                        number(a.intercept),
                        number(a.slope),
                        number(a.residual_variance.sqrt()),
                        number(a.correlation),
                        number(a.judge_mean),
                        number(a.human_mean),
                        number(a.bias)
                    ));
                }
            }
        }
        for n in &r.notes {
            s.push_str(&format!("note: {n}\n"));
        }
        s.push('\n');
        v.text(s).table("rows", rows_table(r));
        let mut s = String::from("\n");
        if r.below_target.is_empty() {
            s.push_str("every interval and test measured meets the target\n");
        } else {
            s.push_str("short of the target:\n");
            for b in &r.below_target {
                s.push_str(&format!("  {b}\n"));
            }
        }
        v.text(s);
        v
    }
}
