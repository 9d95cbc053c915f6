//! Rows as read from a panel file, reduced to interned keys.
//!
//! Each row becomes a small fixed-size record (interned keys, the score and the line
//! number, 40 bytes), so a 10-million-row panel needs a few hundred MB, not the text it
//! came from.

use hashbrown::hash_table::{Entry, HashTable};
use rustc_hash::FxBuildHasher;
use std::hash::BuildHasher;
use std::path::Path;

use crate::io::clip;
use crate::{Error, Result};

/// The arm id of a row without an arm.
pub(super) const NO_ARM: u32 = u32::MAX;

/// The selector id of a row without a selector (or of a row averaged over selectors).
pub(super) const NO_SELECTOR: u32 = u32::MAX;

/// One row reduced to interned keys: 40 bytes whatever the text looked like.
#[derive(Debug, Clone, Copy)]
pub(super) struct RawRow {
    pub dataset: u32,
    pub question: u32,
    pub trajectory: u32,
    pub read: u32,
    pub arm: u32,
    pub selector: u32,
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
/// cheaper than hashing. The table holds ids only, hashing `names[id]`, so each name is
/// stored once. It hashes with FxHash: the keys are the user's own ids, and SipHash's
/// protection against crafted collisions bought nothing but a tenth of the load time of a
/// large panel (in a profile of a 160,000-row panel).
#[derive(Default)]
pub(super) struct Interner {
    ids: HashTable<u32>,
    pub names: Vec<String>,
    last: Option<u32>,
}

fn hash(s: &str) -> u64 {
    FxBuildHasher.hash_one(s)
}

impl Interner {
    /// Up to this many names, a look-up compares with each before hashing.
    const SCANNED: usize = 8;

    pub fn id(&mut self, s: &str) -> u32 {
        if let Some(last) = self.last {
            if self.names[last as usize] == s {
                return last;
            }
        }
        if self.names.len() <= Self::SCANNED {
            if let Some(id) = self.names.iter().position(|n| n == s) {
                self.last = Some(id as u32);
                return id as u32;
            }
        }
        let names = &self.names;
        let entry = self.ids.entry(
            hash(s),
            |&id| names[id as usize] == s,
            |&id| hash(&names[id as usize]),
        );
        let id = match entry {
            Entry::Occupied(e) => *e.get(),
            Entry::Vacant(e) => {
                let id = names.len() as u32;
                e.insert(id);
                self.names.push(s.to_owned());
                id
            }
        };
        self.last = Some(id);
        id
    }

    pub fn get(&self, s: &str) -> Option<u32> {
        self.ids
            .find(hash(s), |&id| self.names[id as usize] == s)
            .copied()
    }

    /// The name of `id`, clipped for an error message.
    pub fn echo(&self, id: u32) -> String {
        clip(&self.names[id as usize])
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
}

/// Interned keys plus rows, as read from the file.
#[derive(Default)]
pub(super) struct RawPanel {
    pub datasets: Interner,
    pub questions: Interner,
    pub trajectories: Interner,
    pub reads: Interner,
    pub arms: Interner,
    pub selectors: Interner,
    pub rows: Vec<RawRow>,
    pub has_dataset: bool,
}

impl RawPanel {
    /// Adds the row on `line` of `path`: a missing dataset is `all`, a missing trajectory
    /// or read `0`.
    ///
    /// # Errors
    /// [`Error::Input`] for an empty question id, or a line past `u32::MAX`.
    pub fn push(&mut self, path: &Path, line: u64, keys: RowKeys, value: f64) -> Result<()> {
        if keys.question.is_empty() {
            return Err(Error::input(path, Some(line), "empty question id"));
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
            line: line32,
            value,
        };
        self.rows.push(row);
        Ok(())
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
            s.push_str(&format!(", arm={}", self.arms.echo(r.arm)));
        }
        if r.selector != NO_SELECTOR {
            s.push_str(&format!(", selector={}", self.selectors.echo(r.selector)));
        }
        s
    }
}
