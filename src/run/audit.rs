//! `stats run-audit`: the Appendix C checks of a run, from its trajectory log, per arm and
//! selector.
//!
//! * **Alias presence** (lexical availability of the answer, not evidence sufficiency): a
//!   record contains an alias when the alias, normalised as the official scorer does
//!   ([`normalize_answer`]), occurs as a whole-token run in the normalised `title + " " +
//!   text` of the record (as the log keeps it: the first 5,000 characters). Eligible
//!   aliases are the non-empty normalised ones other than `yes` and `no` (a comparison
//!   question's answer is not a string a document would contain). The pool share is over
//!   *valid* pools (the trajectory has at least one parsed query) of questions with an
//!   eligible alias; the packet share likewise, per selector.
//! * **Mask hits**: masked records among the pool's result slots (every slot of the first
//!   list of each distinct query) and among the packet's slots.
//! * **Planning failures**: trajectories with at least one step whose reply gave no query
//!   (and the failed steps out of all steps).
//! * **UNKNOWN rate**: reads whose answer is UNKNOWN ([`is_unknown`]).
//!
//! The pool does not depend on the selector, so an arm's pool figures repeat on each of its
//! selector rows.

use serde::Serialize;

use super::prompt::is_unknown;
use super::select::distinct_lists;
use crate::qa_scoring::qa::normalize_answer;
use crate::search::SearchRecord;
use crate::trajlog::Trajectory;

/// The checks of one (arm, selector).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuditRow {
    pub arm: String,
    pub selector: String,
    pub trajectories: u64,
    /// Trajectories with at least one parsed query.
    pub valid_pools: u64,
    /// Valid pools of questions with an eligible alias (the denominator of both shares).
    pub eligible: u64,
    pub pools_with_alias: u64,
    pub pool_alias_share: Option<f64>,
    pub packets_with_alias: u64,
    pub packet_alias_share: Option<f64>,
    /// Result slots in the pools, and how many were masked.
    pub candidate_slots: u64,
    pub candidate_masked: u64,
    /// Packet slots, and how many were masked.
    pub packet_slots: u64,
    pub packet_masked: u64,
    /// Trajectories with a planning failure.
    pub planning_failures: u64,
    pub failed_steps: u64,
    pub steps: u64,
    pub reads: u64,
    pub unknown: u64,
    pub unknown_rate: Option<f64>,
    pub em_mean: Option<f64>,
    pub f1_mean: Option<f64>,
}

/// The eligible normalised aliases of a question's answers.
pub fn eligible_aliases(answers: &[String]) -> Vec<String> {
    let mut v: Vec<String> = answers
        .iter()
        .map(|a| normalize_answer(a))
        .filter(|a| !a.is_empty() && a != "yes" && a != "no")
        .collect();
    v.dedup();
    v
}

/// Whether `r` contains one of `aliases` (normalised) as a whole-token run.
pub fn contains_alias(r: &SearchRecord, aliases: &[String]) -> bool {
    if r.masked {
        return false;
    }
    let text = format!(" {} ", normalize_answer(&format!("{} {}", r.title, r.text)));
    aliases.iter().any(|a| text.contains(&format!(" {a} ")))
}

/// The audit rows, in order of first appearance of each (arm, selector) in the log.
pub fn audit(logs: &[Trajectory]) -> Vec<AuditRow> {
    let mut rows: Vec<AuditRow> = Vec::new();
    for t in logs {
        let aliases = eligible_aliases(&t.answers);
        let pairs: Vec<(&str, &[SearchRecord])> = t
            .steps
            .iter()
            .filter_map(|s| s.query.as_deref().map(|q| (q, &s.results[..])))
            .collect();
        let lists = distinct_lists(&pairs);
        let valid = !pairs.is_empty();
        let eligible = valid && !aliases.is_empty();
        let pool_hit = eligible
            && lists
                .iter()
                .flat_map(|l| l.iter())
                .any(|r| contains_alias(r, &aliases));
        let slots: u64 = lists.iter().map(|l| l.len() as u64).sum();
        let masked: u64 = lists
            .iter()
            .flat_map(|l| l.iter())
            .filter(|r| r.masked)
            .count() as u64;
        let failed = t.steps.iter().filter(|s| s.query.is_none()).count() as u64;
        for (sel, packet) in &t.packets {
            let i = match rows
                .iter()
                .position(|r| r.arm == t.arm && &r.selector == sel)
            {
                Some(i) => i,
                None => {
                    rows.push(empty_row(&t.arm, sel));
                    rows.len() - 1
                }
            };
            let row = &mut rows[i];
            row.trajectories += 1;
            row.valid_pools += u64::from(valid);
            row.eligible += u64::from(eligible);
            row.pools_with_alias += u64::from(pool_hit);
            row.packets_with_alias +=
                u64::from(eligible && packet.iter().any(|r| contains_alias(r, &aliases)));
            row.candidate_slots += slots;
            row.candidate_masked += masked;
            row.packet_slots += packet.len() as u64;
            row.packet_masked += packet.iter().filter(|r| r.masked).count() as u64;
            row.planning_failures += u64::from(failed > 0);
            row.failed_steps += failed;
            row.steps += t.steps.len() as u64;
            for r in t.reads.iter().filter(|r| &r.selector == sel) {
                row.reads += 1;
                row.unknown += u64::from(is_unknown(&r.answer));
                // Sums for now; divided below.
                *row.em_mean.get_or_insert(0.0) += r.em;
                *row.f1_mean.get_or_insert(0.0) += r.f1;
            }
        }
    }
    for r in &mut rows {
        let share = |a: u64, b: u64| (b > 0).then(|| a as f64 / b as f64);
        r.pool_alias_share = share(r.pools_with_alias, r.eligible);
        r.packet_alias_share = share(r.packets_with_alias, r.eligible);
        r.unknown_rate = share(r.unknown, r.reads);
        let n = r.reads as f64;
        r.em_mean = r.em_mean.map(|s| s / n);
        r.f1_mean = r.f1_mean.map(|s| s / n);
    }
    rows
}

fn empty_row(arm: &str, selector: &str) -> AuditRow {
    AuditRow {
        arm: arm.into(),
        selector: selector.into(),
        trajectories: 0,
        valid_pools: 0,
        eligible: 0,
        pools_with_alias: 0,
        pool_alias_share: None,
        packets_with_alias: 0,
        packet_alias_share: None,
        candidate_slots: 0,
        candidate_masked: 0,
        packet_slots: 0,
        packet_masked: 0,
        planning_failures: 0,
        failed_steps: 0,
        steps: 0,
        reads: 0,
        unknown: 0,
        unknown_rate: None,
        em_mean: None,
        f1_mean: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::questions::Dataset;
    use crate::trajlog::{Read, Step};

    fn rec(id: &str, text: &str, masked: bool) -> SearchRecord {
        SearchRecord {
            id: id.into(),
            url: format!("u/{id}"),
            title: String::new(),
            text: text.into(),
            score: None,
            masked,
        }
    }

    fn step(query: Option<&str>, results: Vec<SearchRecord>) -> Step {
        Step {
            step: 0,
            planner_messages: vec![],
            planner_text: String::new(),
            query: query.map(str::to_string),
            failure: query.is_none().then(|| "x".to_string()),
            results,
            shared: false,
            masked: 0,
        }
    }

    fn read(sel: &str, answer: &str, em: f64) -> Read {
        Read {
            selector: sel.into(),
            read: 0,
            reader_messages: vec![],
            reader_text: String::new(),
            answer: answer.into(),
            em,
            f1: em,
        }
    }

    #[test]
    fn alias_matching_is_normalised_and_token_bounded() {
        let a = eligible_aliases(&["The Beatles".into(), "yes".into(), "".into()]);
        assert_eq!(a, ["beatles"]);
        assert!(contains_alias(&rec("1", "I love the BEATLES!", false), &a));
        assert!(!contains_alias(&rec("1", "beatlesque", false), &a));
        assert!(!contains_alias(&rec("1", "beatles", true), &a));
    }

    #[test]
    fn audit_by_hand() {
        let base = Trajectory {
            run: "r".into(),
            question_id: "q".into(),
            dataset: Dataset::Hotpotqa,
            question: "?".into(),
            answers: vec!["Paris".into()],
            supporting: vec![],
            arm: "open".into(),
            trajectory: 0,
            model: "m".into(),
            steps: vec![],
            packets: Default::default(),
            reads: vec![],
        };
        // Trajectory 0: pool has Paris (doc b, rank 2), the rr packet holds only a;
        // one masked slot. Trajectory 1: every step failed.
        let mut t0 = base.clone();
        t0.steps = vec![
            step(
                Some("q1"),
                vec![rec("a", "London", false), rec("b", "in paris", false)],
            ),
            step(Some("q2"), vec![rec("m", "", true)]),
        ];
        t0.packets
            .insert("rr".into(), vec![rec("a", "London", false)]);
        t0.reads = vec![read("rr", "UNKNOWN", 0.0), read("rr", "Paris", 1.0)];
        let mut t1 = base.clone();
        t1.trajectory = 1;
        t1.steps = vec![step(None, vec![]), step(None, vec![])];
        t1.packets.insert("rr".into(), vec![]);
        t1.reads = vec![read("rr", "unknown", 0.0), read("rr", "x", 0.0)];
        let rows = audit(&[t0, t1]);
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!((r.trajectories, r.valid_pools, r.eligible), (2, 1, 1));
        assert_eq!((r.pools_with_alias, r.packets_with_alias), (1, 0));
        assert_eq!(
            (r.pool_alias_share, r.packet_alias_share),
            (Some(1.0), Some(0.0))
        );
        assert_eq!((r.candidate_slots, r.candidate_masked), (3, 1));
        assert_eq!((r.packet_slots, r.packet_masked), (1, 0));
        assert_eq!((r.planning_failures, r.failed_steps, r.steps), (1, 2, 4));
        assert_eq!((r.reads, r.unknown, r.unknown_rate), (4, 2, Some(0.5)));
        assert_eq!(r.em_mean, Some(0.25));
    }
}
