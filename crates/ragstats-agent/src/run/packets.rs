//! The two final-packet selectors of the budget paper's Appendix B, and the candidate pool
//! they choose from.
//!
//! Both start from the same pool: for each **distinct** query of a trajectory, in query
//! order, the first result list that query got (a repeated query adds nothing), cut to its
//! first [`LIST_DEPTH`] records. A document's identity is its id (its URL when the backend
//! gave no id). Each selector ranks identities and keeps its first [`PACKET_SIZE`] records;
//! the record kept for an identity is the one met first in the selector's own scan.
//!
//! * **RRF** (reciprocal rank fusion): score(d) = Σ over lists l of 1/(60 + r_l(d)), r_l(d)
//!   the 1-based rank of d's *first* occurrence in list l (a duplicate further down the
//!   same list adds nothing). Higher first; ties in the order identities are first met in
//!   a query-major scan (list 1 ranks 1..10, then list 2, ...). The sum adds its terms from
//!   the best rank down, so equal multisets of ranks give bit-equal scores and a tie is a
//!   tie whatever the order of the lists.
//! * **RR** (round robin): a rank-major scan (rank 1 of every list in query order, then
//!   rank 2, ...) appending each identity not met before.

use std::collections::{HashMap, HashSet};

use crate::search::SearchRecord;

/// Records of each distinct query's list that enter the pool (the paper's top-10).
pub const LIST_DEPTH: usize = 10;
/// Records in a final packet.
pub const PACKET_SIZE: usize = 5;
/// Characters of a document's text shown to the planner or reader.
pub const TEXT_CHARS: usize = 5_000;
/// The RRF constant.
pub const RRF_K: f64 = 60.0;

/// A selector of App. B.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Selector {
    /// Reciprocal rank fusion.
    Rrf,
    /// Round robin by rank.
    Rr,
}

impl Selector {
    /// `rrf` or `rr`, as written in the panel's `selector` column.
    pub fn as_str(self) -> &'static str {
        match self {
            Selector::Rrf => "rrf",
            Selector::Rr => "rr",
        }
    }
}

impl std::str::FromStr for Selector {
    type Err = ragstats_core::Error;
    fn from_str(s: &str) -> ragstats_core::Result<Self> {
        match s {
            "rrf" => Ok(Selector::Rrf),
            "rr" => Ok(Selector::Rr),
            other => Err(ragstats_core::Error::Usage(format!(
                "unknown selector '{}'; expected rrf or rr",
                ragstats_core::io::clip(other)
            ))),
        }
    }
}

/// A record's identity: its id, or its URL when the id is empty.
pub fn identity(r: &SearchRecord) -> &str {
    if r.id.is_empty() {
        &r.url
    } else {
        &r.id
    }
}

/// The pool's lists: the first list of each distinct query (exact string equality), in
/// query order, each cut to [`LIST_DEPTH`]. `steps` is (query, results) in query order.
pub fn distinct_lists<'a>(steps: &[(&'a str, &'a [SearchRecord])]) -> Vec<&'a [SearchRecord]> {
    let mut seen = HashSet::new();
    steps
        .iter()
        .filter(|(q, _)| seen.insert(*q))
        .map(|(_, l)| &l[..l.len().min(LIST_DEPTH)])
        .collect()
}

/// The candidate pool: every distinct identity of `lists`, first occurrence in
/// query-major order.
pub fn pool<'a>(lists: &[&'a [SearchRecord]]) -> Vec<&'a SearchRecord> {
    let mut seen = HashSet::new();
    lists
        .iter()
        .flat_map(|l| l.iter())
        .filter(|r| seen.insert(identity(r)))
        .collect()
}

/// The first [`PACKET_SIZE`] records of `selector`'s ranking of `lists`, texts cut to
/// [`TEXT_CHARS`] characters.
pub fn select(selector: Selector, lists: &[&[SearchRecord]]) -> Vec<SearchRecord> {
    let ranked = match selector {
        Selector::Rrf => rrf(lists),
        Selector::Rr => rr(lists),
    };
    ranked
        .into_iter()
        .take(PACKET_SIZE)
        .map(|r| cut_record(r.clone()))
        .collect()
}

/// Every identity of `lists` in RRF order (see the module doc).
pub fn rrf<'a>(lists: &[&'a [SearchRecord]]) -> Vec<&'a SearchRecord> {
    // Query-major scan: first record per identity, and each identity's first rank per list.
    let mut order: Vec<&SearchRecord> = Vec::new();
    let mut ranks: HashMap<&str, Vec<usize>> = HashMap::new();
    for list in lists {
        let mut in_list = HashSet::new();
        for (i, r) in list.iter().enumerate() {
            let id = identity(r);
            if !in_list.insert(id) {
                continue;
            }
            let e = ranks.entry(id).or_default();
            if e.is_empty() {
                order.push(r);
            }
            e.push(i + 1);
        }
    }
    let score = |r: &SearchRecord| {
        let mut rs = ranks[identity(r)].clone();
        rs.sort_unstable();
        rs.iter().map(|&k| 1.0 / (RRF_K + k as f64)).sum::<f64>()
    };
    let mut scored: Vec<(f64, &SearchRecord)> = order.into_iter().map(|r| (score(r), r)).collect();
    // Stable: equal scores keep the scan order.
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.into_iter().map(|(_, r)| r).collect()
}

/// Every identity of `lists` in RR order (see the module doc).
pub fn rr<'a>(lists: &[&'a [SearchRecord]]) -> Vec<&'a SearchRecord> {
    let depth = lists.iter().map(|l| l.len()).max().unwrap_or(0);
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for rank in 0..depth {
        for list in lists {
            if let Some(r) = list.get(rank) {
                if seen.insert(identity(r)) {
                    out.push(r);
                }
            }
        }
    }
    out
}

/// `r` with its text cut to its first [`TEXT_CHARS`] characters.
pub fn cut_record(mut r: SearchRecord) -> SearchRecord {
    if let Some((i, _)) = r.text.char_indices().nth(TEXT_CHARS) {
        r.text.truncate(i);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(id: &str, tag: &str) -> SearchRecord {
        SearchRecord {
            id: id.into(),
            url: format!("https://x/{id}"),
            title: tag.into(),
            text: format!("{id} text {tag}"),
            score: None,
            masked: false,
        }
    }

    fn list(ids: &[&str], tag: &str) -> Vec<SearchRecord> {
        ids.iter().map(|i| rec(i, tag)).collect()
    }

    fn ids(v: &[&SearchRecord]) -> Vec<String> {
        v.iter().map(|r| format!("{}/{}", r.id, r.title)).collect()
    }

    #[test]
    fn rrf_by_hand_with_ties_and_duplicates() {
        // q1: A B C D ; q2: C A E B ; q3 (repeat of q1, ignored) ; q4: F C C G
        // Scores (1/(60+r)):
        //   A: 1/61 + 1/62      = 0.032522...
        //   B: 1/62 + 1/64      = 0.031754...
        //   C: 1/63 + 1/61 + 1/62 (its first rank in q4 is 2; the rank-3 duplicate adds nothing)
        //                        = 0.048395...
        //   D: 1/64, E: 1/63, F: 1/61, G: 1/64 (ties D = G: D met first)
        // Order: C, A, B, F, E, D, G.
        let q1 = list(&["A", "B", "C", "D"], "q1");
        let q2 = list(&["C", "A", "E", "B"], "q2");
        let q3 = list(&["Z"], "q3");
        let q4 = list(&["F", "C", "C", "G"], "q4");
        let steps = [
            ("one", &q1[..]),
            ("two", &q2[..]),
            ("one", &q3[..]),
            ("four", &q4[..]),
        ];
        let lists = distinct_lists(&steps);
        assert_eq!(lists.len(), 3);
        let got = ids(&rrf(&lists));
        // The kept record of an identity is its first in the query-major scan (C from q1).
        assert_eq!(
            got,
            ["C/q1", "A/q1", "B/q1", "F/q4", "E/q2", "D/q1", "G/q4"]
        );
        let packet = select(Selector::Rrf, &lists);
        assert_eq!(
            packet.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
            ["C", "A", "B", "F", "E"]
        );
    }

    #[test]
    fn rrf_exact_ties_keep_scan_order_whatever_the_list_order() {
        // X at ranks (1, 3), Y at ranks (3, 1): the same multiset, so exactly tied; X is met
        // first in the query-major scan, so X leads. Swapping the lists makes Y lead.
        let a = list(&["X", "M", "Y"], "a");
        let b = list(&["Y", "N", "X"], "b");
        let got = ids(&rrf(&[&a, &b]));
        assert_eq!(got, ["X/a", "Y/a", "M/a", "N/b"]);
        let got = ids(&rrf(&[&b, &a]));
        assert_eq!(got, ["Y/b", "X/b", "N/b", "M/a"]);
    }

    #[test]
    fn rr_by_hand_skips_seen_identities() {
        // Rank 1: A (q1), C (q2), A seen (q3 list "A E"); rank 2: B, A seen, E;
        // rank 3: C seen, D; rank 4: only q1 has one: D seen.
        let q1 = list(&["A", "B", "C", "D"], "q1");
        let q2 = list(&["C", "A", "D"], "q2");
        let q3 = list(&["A", "E"], "q3");
        let got = ids(&rr(&[&q1, &q2, &q3]));
        assert_eq!(got, ["A/q1", "C/q2", "B/q1", "E/q3", "D/q2"]);
        let packet = select(Selector::Rr, &[&q1, &q2, &q3]);
        assert_eq!(packet.len(), 5);
    }

    #[test]
    fn lists_are_cut_to_ten_and_texts_to_five_thousand_chars() {
        let long: Vec<SearchRecord> = (0..12).map(|i| rec(&format!("d{i}"), "q")).collect();
        let steps = [("q", &long[..])];
        let lists = distinct_lists(&steps);
        assert_eq!(lists[0].len(), 10);
        assert_eq!(pool(&lists).len(), 10);
        let mut r = rec("a", "t");
        r.text = "é".repeat(5_003);
        assert_eq!(cut_record(r).text.chars().count(), 5_000);
    }

    #[test]
    fn masked_records_keep_their_slot() {
        let mut m = rec("M", "q");
        m.masked = true;
        m.title.clear();
        m.text.clear();
        let l = vec![m, rec("B", "q")];
        let p = select(Selector::Rr, &[&l]);
        assert!(p[0].masked);
        assert_eq!(p[1].id, "B");
    }
}
