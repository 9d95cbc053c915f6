//! The run audit's view (`stats run-audit`): the audit table, its note and the totals
//! lines (the table and lines also shown by `stats run` and the `run-audit` section of
//! `stats report`).

use ragstats_core::table::{Cell, Table, ToView, View};

use super::audit::{AuditRow, RunAudit, Totals};

impl ToView for RunAudit {
    /// The audit table, its note, the totals lines; the CSV is the audit table.
    fn to_view(&self) -> View {
        let mut v = View::new(audit_table(&self.rows));
        v.table("audit", audit_table(&self.rows));
        let mut lines = format!("{AUDIT_NOTE}\n");
        for l in totals_lines(&self.totals) {
            lines.push_str(&l);
            lines.push('\n');
        }
        v.text(lines);
        v
    }
}

/// The audit table (also the `run-audit` section of `stats report`): shares as percentages
/// with 2 decimals, EM and F1 means with 4, `-` where a share or mean has no denominator.
pub fn audit_table(rows: &[AuditRow]) -> Table {
    let pct = |v: Option<f64>| v.map_or(Cell::Missing, |v| Cell::fixed(100.0 * v, 2));
    let mean = |v: Option<f64>| v.map_or(Cell::Missing, |v| Cell::fixed(v, 4));
    // "part/whole" is a label, not a number: text, left-aligned as it always was.
    let of = |part: u64, whole: u64| Cell::Text(format!("{part}/{whole}"));
    let head = vec![
        "arm",
        "selector",
        "traj",
        "valid",
        "eligible",
        "pool_alias_%",
        "packet_alias_%",
        "cand_masked",
        "packet_masked",
        "plan_fail",
        "refused_q",
        "refused_a",
        "echo_a",
        "cut_q",
        "cut_a",
        "empty_pool",
        "empty_packet",
        "unknown_%",
        "em",
        "f1",
    ];
    let mut t = Table::new(&head);
    for r in rows {
        t.row([
            Cell::text(r.arm.as_str()),
            Cell::text(r.selector.as_str()),
            Cell::Count(r.trajectories),
            Cell::Count(r.valid_pools),
            Cell::Count(r.eligible),
            pct(r.pool_alias_share),
            pct(r.packet_alias_share),
            of(r.candidate_masked, r.candidate_slots),
            of(r.packet_masked, r.packet_slots),
            of(r.planning_failures, r.trajectories),
            of(r.refused_queries, r.steps),
            of(r.refused_answers, r.reads),
            of(r.echoed_answers, r.reads),
            of(r.truncated_steps, r.steps),
            of(r.truncated_reads, r.reads),
            of(r.empty_pools, r.trajectories),
            of(r.empty_packets, r.trajectories),
            pct(r.unknown_rate),
            mean(r.em_mean),
            mean(r.f1_mean),
        ]);
    }
    t
}

/// The note under the audit table.
pub const AUDIT_NOTE: &str = "alias: a normalised gold answer (not yes/no) in the pool / packet, over valid pools of eligible questions; masked: benchmark-URL slots; plan_fail: trajectories with a step that gave no query; refused_q / refused_a: steps / reads that copied a prompt placeholder; echo_a: reads whose answer line copies the prompt; cut_q / cut_a: steps / reads whose reply was cut at max_tokens; empty: pools / packets with no record to read";

/// The whole run's search and read counts, as `run-audit` and `stats run` end with them.
pub fn totals_lines(t: &Totals) -> Vec<String> {
    vec![
        format!(
            "queries: {} of {} planner step(s) gave a query; {} distinct, {} of them found no results",
            t.queries, t.steps, t.distinct_queries, t.empty_searches
        ),
        format!(
            "planning failures: {} step(s), {} of them copied placeholders (refused, not searched)",
            t.planning_failures, t.refused_queries
        ),
        format!(
            "empty candidate pools: {} of {}; empty packets: {} of {}",
            t.empty_pools, t.trajectories, t.empty_packets, t.packets
        ),
        format!(
            "reads: {}, {} of them copied placeholders, {} echoed the prompt (refused, scored 0)",
            t.reads, t.refused_answers, t.echoed_answers
        ),
        format!(
            "cut at max_tokens (finish_reason length): {} of {} planner step(s), {} of {} read(s) (a complete JSON object in a cut reply is still used)",
            t.truncated_steps, t.steps, t.truncated_reads, t.reads
        ),
    ]
}
