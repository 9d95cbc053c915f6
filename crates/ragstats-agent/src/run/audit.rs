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
//! * **Empty evidence**: steps whose query found no results, pools and packets with no
//!   record to read (masked slots do not count: they show nothing), and the queries and
//!   answers refused as copied placeholders ([`PLACEHOLDER_FAILURE`]) or as echoes of the
//!   prompt ([`ECHO_FAILURE`]). [`totals`] counts them for the whole run, with the warnings
//!   of [`Totals::warnings`].
//! * **Cut replies**: planner steps and reads whose reply stopped at the token cap
//!   (`truncated` in the log).
//!
//! The pool does not depend on the selector, so an arm's pool figures repeat on each of its
//! selector rows.

use serde::Serialize;

use super::packets::distinct_lists;
use super::prompt::{is_unknown, ECHO_FAILURE, PLACEHOLDER_FAILURE};
use crate::search::SearchRecord;
use ragstats_core::document::Report;
use ragstats_core::qa_scoring::qa::normalize_answer;
use ragstats_core::trajlog::Trajectory;

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
    /// Of the failed steps, those refused as a copied placeholder.
    pub refused_queries: u64,
    /// Steps whose planner reply was cut at the token cap (of `steps`).
    pub truncated_steps: u64,
    /// Steps with a query whose search returned no record.
    pub empty_result_steps: u64,
    /// Pools (trajectories) with no record to read, and packets likewise.
    pub empty_pools: u64,
    pub empty_packets: u64,
    pub reads: u64,
    /// Reads refused as a copied placeholder (no answer, scored 0).
    pub refused_answers: u64,
    /// Reads refused because the line read as the answer copies the prompt.
    pub echoed_answers: u64,
    /// Reads whose reply was cut at the token cap.
    pub truncated_reads: u64,
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
        let refused = t.steps.iter().filter(|s| is_refusal(&s.failure)).count() as u64;
        let cut = t.steps.iter().filter(|s| s.truncated).count() as u64;
        let empty_results = t
            .steps
            .iter()
            .filter(|s| s.query.is_some() && s.results.is_empty())
            .count() as u64;
        let pool_empty = !lists.iter().flat_map(|l| l.iter()).any(|r| !r.masked);
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
            row.refused_queries += refused;
            row.truncated_steps += cut;
            row.empty_result_steps += empty_results;
            row.empty_pools += u64::from(pool_empty);
            row.empty_packets += u64::from(!packet.iter().any(|r| !r.masked));
            for r in t.reads.iter().filter(|r| &r.selector == sel) {
                row.reads += 1;
                row.refused_answers += u64::from(is_refusal(&r.failure));
                row.echoed_answers += u64::from(is_echo(&r.failure));
                row.truncated_reads += u64::from(r.truncated);
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

/// Whether a step's or read's `failure` is a copied placeholder.
fn is_refusal(failure: &Option<String>) -> bool {
    failure
        .as_deref()
        .is_some_and(|f| f.starts_with(PLACEHOLDER_FAILURE))
}

/// Whether a read's `failure` is an echo of the prompt.
fn is_echo(failure: &Option<String>) -> bool {
    failure
        .as_deref()
        .is_some_and(|f| f.starts_with(ECHO_FAILURE))
}

/// What a whole run searched and read: the counts `stats run` ends with and `run-audit`
/// prints under its table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    /// Trajectory records (question, arm, trajectory): one candidate pool each.
    pub trajectories: u64,
    /// Planner steps, the shared step 0 counted once per (question, trajectory) as it is
    /// one call.
    pub steps: u64,
    /// Steps that gave a query.
    pub queries: u64,
    /// Distinct query strings over the run: the search requests (a repeated query is a
    /// cache hit).
    pub distinct_queries: u64,
    /// Of the distinct queries, those whose search returned no record.
    pub empty_searches: u64,
    /// Steps that gave no query, and of those the copied placeholders.
    pub planning_failures: u64,
    pub refused_queries: u64,
    /// Steps whose planner reply was cut at the token cap (of `steps`).
    pub truncated_steps: u64,
    /// Pools with no record to read (masked slots show nothing).
    pub empty_pools: u64,
    /// Packets (trajectories × selectors) and those with no record to read.
    pub packets: u64,
    pub empty_packets: u64,
    /// Reads, those refused as a copied placeholder, and those refused as an echo of the
    /// prompt.
    pub reads: u64,
    pub refused_answers: u64,
    pub echoed_answers: u64,
    /// Reads whose reply was cut at the token cap.
    pub truncated_reads: u64,
}

impl Totals {
    /// Warnings about the run's evidence: most (more than half) of the candidate pools are
    /// empty, so most answers were given from no documents.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.trajectories > 0 && 2 * self.empty_pools > self.trajectories {
            w.push(format!(
                "{} of {} candidate pools ({:.1}%) are empty: the searches found nothing to read, so these answers had no evidence ({} of {} distinct queries returned no results, {} planner step(s) gave no query, {} of them copied placeholders); see the queries in trajectories.jsonl",
                self.empty_pools,
                self.trajectories,
                100.0 * self.empty_pools as f64 / self.trajectories as f64,
                self.empty_searches,
                self.distinct_queries,
                self.planning_failures,
                self.refused_queries
            ));
        }
        w
    }
}

/// Of a run's replies cut at the token cap (planner steps, the shared step 0 once, and
/// reads), those that echo the prompt: refused as a copied placeholder
/// ([`PLACEHOLDER_FAILURE`]) or as an echo of the prompt ([`ECHO_FAILURE`]). More tokens
/// only let such a reply copy more, so `stats run` advises a larger `--max-tokens` only for
/// the other cut replies.
pub fn cut_echoes(logs: &[Trajectory]) -> u64 {
    let echo = |f: &Option<String>| is_refusal(f) || is_echo(f);
    let mut shared_seen = std::collections::HashSet::new();
    let mut n = 0;
    for log in logs {
        for s in &log.steps {
            if s.shared && !shared_seen.insert((log.question_id.as_str(), log.trajectory, s.step)) {
                continue;
            }
            n += u64::from(s.truncated && echo(&s.failure));
        }
        n += log
            .reads
            .iter()
            .filter(|r| r.truncated && echo(&r.failure))
            .count() as u64;
    }
    n
}

/// The [`Totals`] of a trajectory log.
pub fn totals(logs: &[Trajectory]) -> Totals {
    let mut t = Totals::default();
    let mut shared_seen = std::collections::HashSet::new();
    let mut queries: std::collections::BTreeMap<&str, bool> = Default::default();
    for log in logs {
        t.trajectories += 1;
        for s in &log.steps {
            if s.shared && !shared_seen.insert((log.question_id.as_str(), log.trajectory, s.step)) {
                continue;
            }
            t.steps += 1;
            t.truncated_steps += u64::from(s.truncated);
            match &s.query {
                Some(q) => {
                    t.queries += 1;
                    *queries.entry(q.as_str()).or_insert(true) &= s.results.is_empty();
                }
                None => {
                    t.planning_failures += 1;
                    t.refused_queries += u64::from(is_refusal(&s.failure));
                }
            }
        }
        let pairs: Vec<(&str, &[SearchRecord])> = log
            .steps
            .iter()
            .filter_map(|s| s.query.as_deref().map(|q| (q, &s.results[..])))
            .collect();
        let lists = distinct_lists(&pairs);
        t.empty_pools += u64::from(!lists.iter().flat_map(|l| l.iter()).any(|r| !r.masked));
        for packet in log.packets.values() {
            t.packets += 1;
            t.empty_packets += u64::from(!packet.iter().any(|r| !r.masked));
        }
        t.reads += log.reads.len() as u64;
        t.refused_answers += log.reads.iter().filter(|r| is_refusal(&r.failure)).count() as u64;
        t.echoed_answers += log.reads.iter().filter(|r| is_echo(&r.failure)).count() as u64;
        t.truncated_reads += log.reads.iter().filter(|r| r.truncated).count() as u64;
    }
    t.distinct_queries = queries.len() as u64;
    t.empty_searches = queries.values().filter(|e| **e).count() as u64;
    t
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
        refused_queries: 0,
        truncated_steps: 0,
        empty_result_steps: 0,
        empty_pools: 0,
        empty_packets: 0,
        reads: 0,
        refused_answers: 0,
        echoed_answers: 0,
        truncated_reads: 0,
        unknown: 0,
        unknown_rate: None,
        em_mean: None,
        f1_mean: None,
    }
}

/// What `stats run-audit` reports of a run's trajectory log: the Appendix C table per
/// (arm, selector), the whole run's search and read counts, and the warnings about its
/// evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunAudit {
    /// One row per (arm, selector) ([`audit`]).
    pub rows: Vec<AuditRow>,
    /// The run's totals ([`totals`]).
    pub totals: Totals,
    /// [`Totals::warnings`].
    pub warnings: Vec<String>,
}

/// An audit counts, it resamples nothing: the engine is all `null`. The trajectory log it
/// read is the document's `run.inputs.trajectories`.
impl Report for RunAudit {}

/// The front door of `run-audit` (this crate's, as the audit reads the runner's records):
/// the audit of the trajectory log `run` names — a `stats run` output directory (its
/// `trajectories.jsonl`) or the log itself — with its warnings after the output.
///
/// # Errors
/// Those of reading the log; an input error for a table or records (a log is a file).
pub fn run_audit(
    run: &ragstats_core::panel::Source,
) -> ragstats_core::Result<ragstats_core::document::Finished> {
    let [given] = run.paths() else {
        return Err(ragstats_core::Error::input(
            run.name(),
            None,
            "expected one `stats run` output directory or its trajectories.jsonl",
        ));
    };
    let path = if given.is_dir() {
        given.join("trajectories.jsonl")
    } else {
        given.clone()
    };
    let logs: Vec<Trajectory> = ragstats_core::trajlog::read_trajectories(&path)?
        .into_iter()
        .map(|l| l.t)
        .collect();
    let audit = audit_run(&logs);
    let warnings = audit
        .warnings
        .iter()
        .map(|w| format!("warning: {w}"))
        .collect();
    let inputs = ragstats_core::document::Inputs::new().with("trajectories", path.display());
    Ok(
        ragstats_core::document::Finished::new("run-audit", inputs, audit)
            .with_notes_after(warnings),
    )
}

/// The Appendix C audit of a trajectory log: [`audit`], [`totals`] and their warnings.
pub fn audit_run(logs: &[Trajectory]) -> RunAudit {
    let totals = totals(logs);
    RunAudit {
        rows: audit(logs),
        warnings: totals.warnings(),
        totals,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragstats_core::questions::Dataset;
    use ragstats_core::trajlog::{Read, Step};

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
            truncated: false,
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
            failure: None,
            truncated: false,
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

    /// Two trajectories of arm `open`, selector `rr`. Trajectory 0: pool has Paris (doc b,
    /// rank 2), the rr packet holds only a; one masked slot. Trajectory 1: every step failed.
    fn by_hand_logs() -> Vec<Trajectory> {
        let base = Trajectory {
            run: "r".into(),
            question_id: "q".into(),
            dataset: Dataset::Hotpotqa,
            question: "?".into(),
            answers: vec!["Paris".into()],
            supporting: vec![],
            cluster: None,
            arm: "open".into(),
            trajectory: 0,
            model: "m".into(),
            steps: vec![],
            packets: Default::default(),
            reads: vec![],
        };
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
        vec![t0, t1]
    }

    #[test]
    fn audit_by_hand() {
        let rows = audit(&by_hand_logs());
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
        // t1's pool and packet are empty; no step found nothing, nothing was refused.
        assert_eq!((r.empty_pools, r.empty_packets), (1, 1));
        assert_eq!(
            (r.empty_result_steps, r.refused_queries, r.refused_answers),
            (0, 0, 0)
        );
    }

    /// The document of the audit above: its rows, totals and warnings, the log in
    /// `run.inputs`, and a null engine (an audit resamples nothing).
    #[test]
    fn the_document_is_rows_totals_and_warnings() {
        use ragstats_core::document::{document, Inputs};
        use serde_json::{json, Value};
        let d = document(
            "run-audit",
            Inputs::new().with("trajectories", "out/trajectories.jsonl"),
            &audit_run(&by_hand_logs()),
        );
        let keys: Vec<&str> = d.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["rows", "run", "totals", "warnings"]);
        let run = &d["run"];
        assert_eq!(
            run["inputs"],
            json!({"trajectories": "out/trajectories.jsonl"})
        );
        for key in ["backend", "adapter", "replicates", "seed", "confidence"] {
            assert_eq!(run[key], Value::Null, "{key}");
        }
        let row = &d["rows"][0];
        assert_eq!(
            (&row["arm"], &row["selector"]),
            (&json!("open"), &json!("rr"))
        );
        assert_eq!(
            (&row["trajectories"], &row["valid_pools"], &row["eligible"]),
            (&json!(2), &json!(1), &json!(1))
        );
        assert_eq!(
            (&row["candidate_slots"], &row["candidate_masked"]),
            (&json!(3), &json!(1))
        );
        assert_eq!(
            (&row["unknown_rate"], &row["em_mean"]),
            (&json!(0.5), &json!(0.25))
        );
        // Four steps, two of them failed (t1's); t0 gave two queries, both searched.
        assert_eq!(
            (
                &d["totals"]["trajectories"],
                &d["totals"]["steps"],
                &d["totals"]["queries"]
            ),
            (&json!(2), &json!(4), &json!(2))
        );
        // One empty pool (t1's) of two is not most of them: no warning.
        assert_eq!(d["totals"]["empty_pools"], 1);
        assert_eq!(d["warnings"], json!([]));
    }

    #[test]
    fn totals_by_hand() {
        let refusal = || Some(format!("{PLACEHOLDER_FAILURE} \"...\" from x: y"));
        let mut shared = step(Some("q0"), vec![]);
        shared.shared = true;
        // Cut at the cap: step 0 (one call, in both records) and adaptive's failed step.
        shared.truncated = true;
        let base = Trajectory {
            run: "r".into(),
            question_id: "q".into(),
            dataset: Dataset::Hotpotqa,
            question: "?".into(),
            answers: vec!["Paris".into()],
            supporting: vec![],
            cluster: None,
            arm: "open".into(),
            trajectory: 0,
            model: "m".into(),
            steps: vec![],
            packets: Default::default(),
            reads: vec![],
        };
        // Open: the shared step 0 found nothing, step 1 copied a placeholder, step 2 found
        // a masked record only: an empty pool. Its two packets are empty.
        let mut open = base.clone();
        let mut copied = step(None, vec![]);
        copied.failure = refusal();
        open.steps = vec![
            shared.clone(),
            copied,
            step(Some("q2"), vec![rec("m", "", true)]),
        ];
        open.packets.insert("rr".into(), vec![rec("m", "", true)]);
        open.packets.insert("rrf".into(), vec![]);
        let mut refused_read = read("rr", "", 0.0);
        refused_read.failure = refusal();
        open.reads = vec![refused_read, read("rrf", "UNKNOWN", 0.0)];
        // Adaptive: the same step 0 (counted once), then "q2" again, which found a record
        // here, and a plain planning failure.
        let mut adaptive = base.clone();
        adaptive.arm = "adaptive".into();
        let mut cut = step(None, vec![]);
        cut.truncated = true;
        adaptive.steps = vec![
            shared,
            step(Some("q2"), vec![rec("a", "Paris", false)]),
            cut,
        ];
        adaptive
            .packets
            .insert("rr".into(), vec![rec("a", "Paris", false)]);
        // A cut read, answered, and a read refused as an echo of the prompt.
        let mut cut_read = read("rr", "Paris", 1.0);
        cut_read.truncated = true;
        let mut echoed = read("rr", "", 0.0);
        echoed.failure = Some(format!("{ECHO_FAILURE}: the answer line \"Question: x\" …"));
        adaptive.reads = vec![cut_read, echoed];
        let t = totals(&[open.clone(), adaptive.clone()]);
        assert_eq!(
            t,
            Totals {
                trajectories: 2,
                steps: 5,
                queries: 3,
                distinct_queries: 2,
                // "q0" found nothing; "q2" found a record once.
                empty_searches: 1,
                planning_failures: 2,
                refused_queries: 1,
                truncated_steps: 2,
                empty_pools: 1,
                packets: 3,
                empty_packets: 2,
                reads: 4,
                refused_answers: 1,
                echoed_answers: 1,
                truncated_reads: 1,
            }
        );
        // Per row, step 0 is in each arm's steps; the echo is not a placeholder copy.
        let rows = audit(&[open.clone(), adaptive.clone()]);
        let by = |arm: &str| {
            rows.iter()
                .find(|r| r.arm == arm && r.selector == "rr")
                .unwrap()
        };
        assert_eq!(
            (by("open").truncated_steps, by("adaptive").truncated_steps),
            (1, 2)
        );
        let a = by("adaptive");
        assert_eq!(
            (
                a.reads,
                a.refused_answers,
                a.echoed_answers,
                a.truncated_reads
            ),
            (2, 0, 1, 1)
        );
        // One empty pool of two is not most of them; two of three is.
        assert!(t.warnings().is_empty());
        let mut open2 = open.clone();
        open2.trajectory = 1;
        let whole = audit_run(&[open.clone(), adaptive.clone(), open2.clone()]);
        let w = totals(&[open, adaptive, open2]).warnings();
        // The entry point is the three parts together.
        assert_eq!(whole.warnings, w);
        assert_eq!(
            (whole.totals.trajectories, whole.totals.empty_pools),
            (3, 2)
        );
        assert_eq!(whole.rows.len(), 3);
        assert_eq!(w.len(), 1);
        assert!(
            w[0].starts_with("2 of 3 candidate pools (66.7%) are empty"),
            "{}",
            w[0]
        );
        let rows = audit(&[totals_row_log()]);
        assert_eq!(
            (rows[0].refused_queries, rows[0].empty_result_steps),
            (0, 1)
        );
    }

    fn totals_row_log() -> Trajectory {
        Trajectory {
            run: "r".into(),
            question_id: "q".into(),
            dataset: Dataset::Hotpotqa,
            question: "?".into(),
            answers: vec![],
            supporting: vec![],
            cluster: None,
            arm: "open".into(),
            trajectory: 0,
            model: "m".into(),
            steps: vec![step(Some("x"), vec![])],
            packets: [("rr".to_string(), vec![])].into_iter().collect(),
            reads: vec![],
        }
    }
}
