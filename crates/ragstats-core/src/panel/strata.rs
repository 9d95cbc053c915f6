//! Grouping the outcome cells into questions and strata, and the order of trajectory and
//! read labels (the layout that [`super::balance`] fills).
//!
//! Trajectories are nested in questions and reads in trajectories: a label only groups the
//! rows of its question (or trajectory), so labels unique per question (e.g. uuids) are as
//! good as shared ones. Labels only decide the order within a question.

use std::collections::HashMap;
use std::ops::Range;

use super::pairing::Cell;
use super::raw::{Interner, RawPanel};

/// One question's cells: a contiguous run of the sorted cells.
pub(super) struct Group {
    pub qid: u32,
    pub cells: Range<usize>,
    /// The first file line of its rows.
    pub first_line: u32,
}

/// A stratum's trajectory and read labels (interned ids, in sorted order: the union over its
/// questions) and the rank of each id in that order.
pub(super) struct Labels {
    pub traj: Vec<u32>,
    pub reads: Vec<u32>,
    pub t_rank: Ranks,
    pub r_rank: Ranks,
}

/// The rank of each label id in a stratum's sorted labels, indexed by id (ids are dense:
/// interned in order of first appearance), so a look-up is an index, not a hash.
pub(super) struct Ranks(Vec<usize>);

impl Ranks {
    /// Ranks of `sorted` ids (rank = position).
    fn of(sorted: &[u32]) -> Ranks {
        let len = sorted.iter().map(|&id| id as usize + 1).max().unwrap_or(0);
        let mut rank = vec![usize::MAX; len];
        for (i, &id) in sorted.iter().enumerate() {
            rank[id as usize] = i;
        }
        Ranks(rank)
    }
}

impl std::ops::Index<&u32> for Ranks {
    type Output = usize;

    /// The rank of label `id`.
    ///
    /// # Panics
    /// If `id` is not one of the stratum's labels.
    fn index(&self, id: &u32) -> &usize {
        let rank = &self.0[*id as usize];
        assert!(*rank != usize::MAX, "label id {id} is not in this stratum");
        rank
    }
}

/// Groups sorted cells into questions (contiguous after the sort), then questions into
/// strata (by dataset id); both ordered by first line.
pub(super) fn group(cells: &[Cell]) -> Vec<(u32, Vec<Group>)> {
    let mut by_dataset: HashMap<u32, Vec<Group>> = HashMap::new();
    let mut start = 0;
    while start < cells.len() {
        let (d, q) = (cells[start].key.0, cells[start].key.1);
        let mut end = start;
        let mut first_line = u32::MAX;
        while end < cells.len() && cells[end].key.0 == d && cells[end].key.1 == q {
            first_line = first_line.min(cells[end].line);
            end += 1;
        }
        by_dataset.entry(d).or_default().push(Group {
            qid: q,
            cells: start..end,
            first_line,
        });
        start = end;
    }
    let mut strata: Vec<(u32, Vec<Group>)> = by_dataset
        .into_iter()
        .map(|(d, mut groups)| {
            groups.sort_unstable_by_key(|g| g.first_line);
            (d, groups)
        })
        .collect();
    strata.sort_unstable_by_key(|(_, groups)| groups[0].first_line);
    strata
}

/// The stratum's trajectory and read labels: the union over its questions, sorted
/// (numerically when all are integers). The ranks order each question's trajectories and
/// each trajectory's reads.
pub(super) fn labels(raw: &RawPanel, cells: &[Cell], groups: &[Group]) -> Labels {
    let mut traj: Vec<u32> = Vec::new();
    let mut reads: Vec<u32> = Vec::new();
    for c in groups.iter().flat_map(|g| &cells[g.cells.clone()]) {
        traj.push(c.key.2);
        reads.push(c.key.3);
    }
    traj.sort_unstable();
    traj.dedup();
    reads.sort_unstable();
    reads.dedup();
    sorted_labels(&mut traj, &raw.trajectories);
    sorted_labels(&mut reads, &raw.reads);
    Labels {
        t_rank: Ranks::of(&traj),
        r_rank: Ranks::of(&reads),
        traj,
        reads,
    }
}

/// Sorts label ids by name: numerically when every label of the set is an integer.
fn sorted_labels(ids: &mut [u32], names: &Interner) {
    let numeric: Option<Vec<i64>> = ids
        .iter()
        .map(|&i| names.name(i).parse::<i64>().ok())
        .collect();
    match numeric {
        Some(_) => ids.sort_by_key(|&i| names.name(i).parse::<i64>().unwrap_or(0)),
        None => ids.sort_by(|&a, &b| names.name(a).cmp(names.name(b))),
    }
}
