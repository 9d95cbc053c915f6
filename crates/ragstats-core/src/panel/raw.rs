//! Rows as read from a panel file, reduced to interned keys.
//!
//! Each row becomes a small fixed-size record (interned keys, the score and the line
//! number, 40 bytes), so a 10-million-row panel needs a few hundred MB, not the text it
//! came from.

use hashbrown::hash_table::{Entry, HashTable};
use rayon::prelude::*;
use rustc_hash::FxBuildHasher;
use std::hash::BuildHasher;
use std::path::Path;

use crate::io::clip;
use crate::{Error, Result};

/// The arm id of a row without an arm.
pub(super) const NO_ARM: u32 = u32::MAX;

/// The selector id of a row without a selector (or of a row averaged over selectors).
pub(super) const NO_SELECTOR: u32 = u32::MAX;

/// The cluster id of a row of a panel read without a cluster column.
pub(super) const NO_CLUSTER: u32 = u32::MAX;

/// One row reduced to interned keys: 40 bytes whatever the text looked like.
#[derive(Debug, Clone, Copy)]
pub(super) struct RawRow {
    pub dataset: u32,
    pub question: u32,
    pub trajectory: u32,
    pub read: u32,
    pub arm: u32,
    pub selector: u32,
    /// The row's cluster ([`RawPanel::clusters`]), or [`NO_CLUSTER`]; it fits in what was
    /// the record's padding, so a row is still 40 bytes.
    pub cluster: u32,
    pub line: u32,
    pub value: f64,
}

/// A cell's key: (dataset, question, trajectory, read).
pub(super) type CellKey = (u32, u32, u32, u32);

impl RawRow {
    pub fn cell(&self) -> CellKey {
        (self.dataset, self.question, self.trajectory, self.read)
    }
}

/// Maps strings to dense ids in order of first appearance.
///
/// Panel files list a question's cells together, so most lookups repeat the previous one:
/// that id is kept and checked first. Columns with a handful of values (arms, trajectories,
/// reads), which change from row to row, are found by comparing with each name, which is
/// cheaper than hashing. The names are kept back to back in one buffer (a large panel has
/// millions of question ids; an allocation each was 4 % of the CPU time of loading a
/// 160,000-row panel, in a profile); the table holds ids only, hashing the name of each,
/// so each name is stored once. It hashes with FxHash: the keys are the user's own ids,
/// and SipHash's protection against crafted collisions bought nothing but a tenth of the
/// load time of a large panel (in a profile of a 160,000-row panel).
#[derive(Default, Clone)]
pub(super) struct Interner {
    ids: HashTable<u32>,
    /// Every name, back to back in id order: name `i` ends at `ends[i]` and starts where
    /// name `i - 1` ends (the first at 0).
    text: String,
    ends: Vec<usize>,
    last: Option<u32>,
}

fn hash(s: &[u8]) -> u64 {
    FxBuildHasher.hash_one(s)
}

/// Where name `id` lies in the buffer of an [`Interner`] whose names end at `ends`.
fn span(ends: &[usize], id: u32) -> std::ops::Range<usize> {
    let i = id as usize;
    let start = if i == 0 { 0 } else { ends[i - 1] };
    start..ends[i]
}

/// The bytes of name `id` of the buffer `text` with name ends `ends` (see [`Interner`]):
/// look-ups compare bytes, which spares checking that a span's ends are character
/// boundaries (they are, being the ends of whole names).
fn bytes_in<'a>(text: &'a str, ends: &[usize], id: u32) -> &'a [u8] {
    &text.as_bytes()[span(ends, id)]
}

impl Interner {
    /// Up to this many names, a look-up compares with each before hashing.
    const SCANNED: usize = 8;

    pub fn id(&mut self, s: &str) -> u32 {
        let (text, ends) = (&self.text, &self.ends);
        if let Some(last) = self.last {
            if bytes_in(text, ends, last) == s.as_bytes() {
                return last;
            }
        }
        if self.len() <= Self::SCANNED {
            if let Some(id) =
                (0..self.len() as u32).find(|&id| bytes_in(text, ends, id) == s.as_bytes())
            {
                self.last = Some(id);
                return id;
            }
        }
        let id = self.hashed_id(s);
        self.last = Some(id);
        id
    }

    /// The id of `s` from the hash table, adding `s` as the next id when new.
    fn hashed_id(&mut self, s: &str) -> u32 {
        let (text, ends) = (&self.text, &self.ends);
        let entry = self.ids.entry(
            hash(s.as_bytes()),
            |&id| bytes_in(text, ends, id) == s.as_bytes(),
            |&id| hash(bytes_in(text, ends, id)),
        );
        match entry {
            Entry::Occupied(e) => *e.get(),
            Entry::Vacant(e) => {
                let id = self.ends.len() as u32;
                e.insert(id);
                self.text.push_str(s);
                self.ends.push(self.text.len());
                id
            }
        }
    }

    /// The number of names.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The name of `id`.
    pub fn name(&self, id: u32) -> &str {
        &self.text[span(&self.ends, id)]
    }

    /// Every name, in id order.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> + Clone {
        (0..self.len() as u32).map(|id| self.name(id))
    }

    /// Every name, in id order, as owned strings.
    pub fn to_vec(&self) -> Vec<String> {
        self.names().map(str::to_string).collect()
    }

    /// Makes room for `n` more names of `bytes` bytes in all, so that adding them does not
    /// grow the table step by step, rehashing (and so reading) every name each time.
    fn reserve(&mut self, n: usize, bytes: usize) {
        let (text, ends) = (&self.text, &self.ends);
        self.ids.reserve(n, |&id| hash(bytes_in(text, ends, id)));
        self.ends.reserve(n);
        self.text.reserve(bytes);
    }

    /// Adds `other`'s names not yet here, in `other`'s id order, and returns the id here of
    /// each of `other`'s ids. When `other` interned the text after this one's, its names in
    /// id order are in order of first appearance there, so the ids stay in order of first
    /// appearance in the whole text.
    fn absorb(&mut self, other: &Interner) -> Vec<u32> {
        other.names().map(|name| self.hashed_id(name)).collect()
    }

    pub fn get(&self, s: &str) -> Option<u32> {
        let (text, ends) = (&self.text, &self.ends);
        self.ids
            .find(hash(s.as_bytes()), |&id| {
                bytes_in(text, ends, id) == s.as_bytes()
            })
            .copied()
    }

    /// The name of `id`, clipped for an error message.
    pub fn echo(&self, id: u32) -> String {
        clip(self.name(id))
    }
}

/// The ids in a merged [`RawPanel`] of each id of one of its pieces, key by key.
struct IdMap {
    datasets: Vec<u32>,
    questions: Vec<u32>,
    trajectories: Vec<u32>,
    reads: Vec<u32>,
    arms: Vec<u32>,
    selectors: Vec<u32>,
    clusters: Vec<u32>,
}

impl IdMap {
    /// A row of the piece with the merged panel's ids.
    fn row(&self, r: RawRow) -> RawRow {
        RawRow {
            dataset: self.datasets[r.dataset as usize],
            question: self.questions[r.question as usize],
            trajectory: self.trajectories[r.trajectory as usize],
            read: self.reads[r.read as usize],
            arm: match r.arm {
                NO_ARM => NO_ARM,
                a => self.arms[a as usize],
            },
            selector: match r.selector {
                NO_SELECTOR => NO_SELECTOR,
                s => self.selectors[s as usize],
            },
            cluster: match r.cluster {
                NO_CLUSTER => NO_CLUSTER,
                c => self.clusters[c as usize],
            },
            ..r
        }
    }
}

/// The text fields of one row, before interning (`None` where the file has no such column).
pub(super) struct RowKeys<'a> {
    pub dataset: Option<&'a str>,
    pub question: &'a str,
    pub trajectory: Option<&'a str>,
    pub read: Option<&'a str>,
    pub arm: Option<&'a str>,
    /// `None` also when the value is empty.
    pub selector: Option<&'a str>,
    /// The cluster column's value, when one is read ([`super::LoadOptions::cluster`]):
    /// `Some("")` (an empty or missing value) is an error.
    pub cluster: Option<&'a str>,
}

/// Interned keys plus rows, as read from the file.
#[derive(Default, Clone)]
pub(super) struct RawPanel {
    pub datasets: Interner,
    pub questions: Interner,
    pub trajectories: Interner,
    pub reads: Interner,
    pub arms: Interner,
    pub selectors: Interner,
    /// The cluster column's values ([`super::LoadOptions::cluster`]); empty without one.
    pub clusters: Interner,
    pub rows: Vec<RawRow>,
    pub has_dataset: bool,
    /// The column the arms were read from, when not `arm` ([`super::LoadOptions::arm_column`]).
    pub arm_column: Option<String>,
    /// With another column as the arms: the values of the panel's own `arm` column (of every
    /// row read, before `within_arm` kept one), in order of first appearance.
    pub outer_arms: Interner,
    /// Notes for the panel ([`super::Panel::notes`]) made while reading.
    pub notes: Vec<String>,
}

impl RawPanel {
    /// This panel's keys and notes with `rows` for its rows (the rows themselves are not
    /// copied).
    pub fn with_rows(&self, rows: Vec<RawRow>) -> RawPanel {
        RawPanel {
            datasets: self.datasets.clone(),
            questions: self.questions.clone(),
            trajectories: self.trajectories.clone(),
            reads: self.reads.clone(),
            arms: self.arms.clone(),
            selectors: self.selectors.clone(),
            clusters: self.clusters.clone(),
            rows,
            has_dataset: self.has_dataset,
            arm_column: self.arm_column.clone(),
            outer_arms: self.outer_arms.clone(),
            notes: self.notes.clone(),
        }
    }

    /// Adds the row on `line` of `path`: a missing dataset is `all`, a missing trajectory
    /// or read `0`.
    ///
    /// # Errors
    /// [`Error::Input`] for an empty question id, an empty cluster (when a cluster column
    /// is read), or a line past `u32::MAX`.
    pub fn push(&mut self, path: &Path, line: u64, keys: RowKeys, value: f64) -> Result<()> {
        if keys.question.is_empty() {
            return Err(Error::input(path, Some(line), "empty question id"));
        }
        if keys.cluster.is_some_and(|c| c.trim().is_empty()) {
            return Err(Error::input(
                path,
                Some(line),
                "missing cluster: every row needs a value in the cluster column",
            ));
        }
        let line32 = u32::try_from(line)
            .map_err(|_| Error::input(path, Some(line), "panels are limited to 4 billion lines"))?;
        let row = RawRow {
            dataset: self.datasets.id(keys.dataset.unwrap_or("all")),
            question: self.questions.id(keys.question),
            trajectory: self.trajectories.id(keys.trajectory.unwrap_or("0")),
            read: self.reads.id(keys.read.unwrap_or("0")),
            arm: keys.arm.map(|a| self.arms.id(a)).unwrap_or(NO_ARM),
            selector: keys
                .selector
                .filter(|s| !s.is_empty())
                .map(|s| self.selectors.id(s))
                .unwrap_or(NO_SELECTOR),
            cluster: keys
                .cluster
                .map(|c| self.clusters.id(c.trim()))
                .unwrap_or(NO_CLUSTER),
            line: line32,
            value,
        };
        self.rows.push(row);
        Ok(())
    }

    /// The panel of `pieces`, read one after another from one text, as if all their rows had
    /// been pushed into one; `None` without pieces.
    ///
    /// Each later piece's ids are mapped to the merged panel's: its names are interned in its
    /// id order, which is its order of first appearance, so new names get the next ids in the
    /// order they first appear in the whole text. `NO_ARM` and `NO_SELECTOR` stay.
    pub fn concat(pieces: Vec<RawPanel>) -> Option<RawPanel> {
        let mut pieces = pieces.into_iter();
        let mut all = pieces.next()?;
        let rest: Vec<RawPanel> = pieces.collect();
        all.reserve_names(&rest);
        // Names are interned piece after piece: a piece's new names follow the earlier ones'.
        let maps: Vec<IdMap> = rest.iter().map(|p| all.absorb_names(p)).collect();
        // The rows are mapped and copied on all threads: the copy writes fresh memory, whose
        // page faults were half the merge's time on a 4-million-row panel.
        let ends: Vec<usize> = rest
            .iter()
            .scan(0, |end, p| {
                *end += p.rows.len();
                Some(*end)
            })
            .collect();
        let n = ends.last().copied().unwrap_or(0);
        let rows = (0..n).into_par_iter().map_init(
            || 0,
            // Each job takes an ascending range of rows, so its piece only moves forward.
            |k: &mut usize, i| {
                while i >= ends[*k] {
                    *k += 1;
                }
                let start = ends[*k] - rest[*k].rows.len();
                maps[*k].row(rest[*k].rows[i - start])
            },
        );
        all.rows.par_extend(rows);
        Some(all)
    }

    /// Makes room in the interners for the names of `pieces`, so that adding them does not
    /// grow the tables step by step, rehashing (and so reading) every name each time.
    fn reserve_names(&mut self, pieces: &[RawPanel]) {
        let reserve = |here: &mut Interner, names: fn(&RawPanel) -> &Interner| {
            let n = pieces.iter().map(|p| names(p).len()).sum();
            let bytes = pieces.iter().map(|p| names(p).text.len()).sum();
            here.reserve(n, bytes);
        };
        reserve(&mut self.datasets, |p| &p.datasets);
        reserve(&mut self.questions, |p| &p.questions);
        reserve(&mut self.trajectories, |p| &p.trajectories);
        reserve(&mut self.reads, |p| &p.reads);
        reserve(&mut self.arms, |p| &p.arms);
        reserve(&mut self.selectors, |p| &p.selectors);
        reserve(&mut self.clusters, |p| &p.clusters);
        reserve(&mut self.outer_arms, |p| &p.outer_arms);
    }

    /// Interns the names of `other` (read from the text after this panel's) here, and
    /// returns the ids here of its ids.
    fn absorb_names(&mut self, other: &RawPanel) -> IdMap {
        // No row holds an outer arm's id: only the names are kept.
        self.outer_arms.absorb(&other.outer_arms);
        IdMap {
            datasets: self.datasets.absorb(&other.datasets),
            questions: self.questions.absorb(&other.questions),
            trajectories: self.trajectories.absorb(&other.trajectories),
            reads: self.reads.absorb(&other.reads),
            arms: self.arms.absorb(&other.arms),
            selectors: self.selectors.absorb(&other.selectors),
            clusters: self.clusters.absorb(&other.clusters),
        }
    }

    /// The name of the column the arms come from (`arm` unless another was chosen).
    pub fn arm_name(&self) -> &str {
        self.arm_column.as_deref().unwrap_or("arm")
    }

    /// `dataset=…, question=…, trajectory=…, read=…, arm=…, selector=…` of a row, for messages.
    pub fn describe(&self, r: &RawRow) -> String {
        let mut s = String::new();
        if self.has_dataset {
            s.push_str(&format!("dataset={}, ", self.datasets.echo(r.dataset)));
        }
        s.push_str(&format!(
            "question={}, trajectory={}, read={}",
            self.questions.echo(r.question),
            self.trajectories.echo(r.trajectory),
            self.reads.echo(r.read)
        ));
        if r.arm != NO_ARM {
            s.push_str(&format!(", {}={}", self.arm_name(), self.arms.echo(r.arm)));
        }
        if r.selector != NO_SELECTOR {
            s.push_str(&format!(", selector={}", self.selectors.echo(r.selector)));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (dataset, question, trajectory, read, arm, selector, line) of each row.
    fn keys(raw: &RawPanel) -> Vec<[u32; 7]> {
        raw.rows
            .iter()
            .map(|r| {
                [
                    r.dataset,
                    r.question,
                    r.trajectory,
                    r.read,
                    r.arm,
                    r.selector,
                    r.line,
                ]
            })
            .collect()
    }

    fn push(raw: &mut RawPanel, line: u64, row: [&str; 6]) {
        let [d, q, t, r, a, s] = row.map(|k| (!k.is_empty()).then_some(k));
        let keys = RowKeys {
            dataset: d,
            question: q.unwrap(),
            trajectory: t,
            read: r,
            arm: a,
            selector: s,
            cluster: None,
        };
        raw.push(Path::new("p.csv"), line, keys, line as f64)
            .unwrap();
    }

    #[test]
    fn interned_names_keep_their_ids_past_the_scanned_few() {
        let mut i = Interner::default();
        // More names than are scanned, a repeat of the last, an empty name and multi-byte
        // ones, whose spans in the shared buffer must end on character boundaries.
        let names = [
            "q1", "q2", "", "é", "q10", "日本", "q3", "q4", "q5", "q6", "q7",
        ];
        for (id, n) in names.iter().enumerate() {
            assert_eq!(i.id(n), id as u32);
            assert_eq!(i.id(n), id as u32, "the last name again");
        }
        assert_eq!(i.len(), 11);
        // Earlier names, found by scanning while few and by hashing once many.
        for (id, n) in names.iter().enumerate().rev() {
            assert_eq!(i.id(n), id as u32);
            assert_eq!(i.get(n), Some(id as u32));
            assert_eq!(i.name(id as u32), *n);
        }
        assert_eq!(i.get("q"), None);
        assert_eq!(i.names().collect::<Vec<_>>(), names);
        assert_eq!(i.echo(5), "日本");
        // Another interner's names in its id order: known ones keep their ids, new ones
        // take the next.
        let mut other = Interner::default();
        for n in ["q7", "q12", "é", "q11"] {
            other.id(n);
        }
        i.reserve(other.len(), other.text.len());
        assert_eq!(i.absorb(&other), [10, 11, 3, 12]);
        assert_eq!(i.to_vec()[11..], ["q12", "q11"]);
        assert_eq!(i.id("q11"), 12);
    }

    #[test]
    fn concatenated_ids_follow_first_appearance_in_the_whole_text() {
        let rows = [
            ["d1", "q1", "t1", "1", "A", ""],
            ["d1", "q2", "t2", "1", "B", "s1"],
            ["d2", "q2", "t1", "2", "", "s2"],
            ["d1", "q3", "t3", "1", "B", "s1"],
            ["d3", "q1", "t2", "1", "A", ""],
        ];
        let mut first = RawPanel::default();
        let mut second = RawPanel::default();
        for (i, row) in rows.iter().enumerate() {
            push(
                if i < 2 { &mut first } else { &mut second },
                i as u64 + 2,
                *row,
            );
        }
        // The second panel numbered its own names from 0.
        assert_eq!(second.questions.to_vec(), ["q2", "q3", "q1"]);
        // An empty piece (e.g. of blank lines) between them changes nothing.
        let mut all = RawPanel::concat(vec![first, RawPanel::default(), second]).unwrap();
        let names = |i: &Interner| i.to_vec();
        assert_eq!(names(&all.datasets), ["d1", "d2", "d3"]);
        assert_eq!(names(&all.questions), ["q1", "q2", "q3"]);
        assert_eq!(names(&all.trajectories), ["t1", "t2", "t3"]);
        assert_eq!(names(&all.reads), ["1", "2"]);
        assert_eq!(names(&all.arms), ["A", "B"]);
        assert_eq!(names(&all.selectors), ["s1", "s2"]);
        const N: u32 = NO_ARM;
        assert_eq!(
            keys(&all),
            [
                [0, 0, 0, 0, 0, N, 2],
                [0, 1, 1, 0, 1, 0, 3],
                [1, 1, 0, 1, N, 1, 4],
                [0, 2, 2, 0, 1, 0, 5],
                [2, 0, 1, 0, 0, N, 6],
            ]
        );
        // The same as pushing every row into one panel, and look-ups find the new names.
        let mut one = RawPanel::default();
        for (i, row) in rows.iter().enumerate() {
            push(&mut one, i as u64 + 2, *row);
        }
        assert_eq!(keys(&one), keys(&all));
        assert_eq!(all.questions.get("q3"), Some(2));
        assert_eq!(all.questions.id("q4"), 3);
        let values: Vec<f64> = all.rows.iter().map(|r| r.value).collect();
        assert_eq!(values, [2.0, 3.0, 4.0, 5.0, 6.0]);
    }

    #[test]
    fn many_pieces_concatenate_on_several_threads_as_one() {
        let rows: Vec<[String; 6]> = (0..3000)
            .map(|i| {
                [
                    format!("d{}", i % 3),
                    format!("q{}", (i * 7) % 800),
                    format!("t{}", i % 4),
                    format!("{}", i % 2),
                    ["", "a", "b"][i % 3].to_string(),
                    ["s1", "", "s2", "s1"][i % 4].to_string(),
                ]
            })
            .collect();
        let mut one = RawPanel::default();
        let mut pieces = vec![RawPanel::default()];
        for (i, row) in rows.iter().enumerate() {
            let row = row.each_ref().map(String::as_str);
            push(&mut one, i as u64 + 2, row);
            // Pieces of 37 rows, every other one after an empty one.
            if i % 37 == 0 {
                pieces.push(RawPanel::default());
                if i % 74 == 0 {
                    pieces.push(RawPanel::default());
                }
            }
            push(pieces.last_mut().unwrap(), i as u64 + 2, row);
        }
        assert!(pieces.len() > 100);
        let all = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap()
            .install(|| RawPanel::concat(pieces))
            .unwrap();
        assert_eq!(keys(&all), keys(&one));
        assert_eq!(all.questions.to_vec(), one.questions.to_vec());
        assert_eq!(all.selectors.to_vec(), one.selectors.to_vec());
    }
}
