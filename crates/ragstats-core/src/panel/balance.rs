//! Nesting each question's cells into trajectories and reads, the balance check, and the
//! filling of a stratum: a Q × T × R array when balanced, the nested layout otherwise.
//!
//! The design of a stratum is its most common number of trajectories per question T and of
//! reads per trajectory R (the larger on a tie). A question is complete when it has T
//! trajectories of R reads each and no unpaired cell. `--drop-incomplete` drops the others;
//! otherwise an unbalanced stratum is kept nested (when the caller accepts that, for REML)
//! with notes naming the questions that differ, or refused naming the first of them.

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use super::pairing::Cells;
use super::raw::RawPanel;
use super::strata::{Group, Labels};
use super::{CellLabels, Nested, Stratum};
use crate::{Error, Result};

/// How many missing cells, or incomplete questions, a message lists.
const SHOWN: usize = 5;

/// One question nested: trajectories (label ids, in label order) with their reads; a view
/// into a [`Nesting`].
struct Question<'a> {
    qid: u32,
    first_line: u32,
    traj: &'a [u32],
    /// Trajectory t's reads are `read_start[t]..read_start[t + 1]` of `read` / `value`.
    read_start: &'a [usize],
    read: &'a [u32],
    value: &'a [f64],
}

impl Question<'_> {
    fn t(&self) -> usize {
        self.traj.len()
    }
    fn m(&self, t: usize) -> usize {
        self.read_start[t + 1] - self.read_start[t]
    }
}

/// Every question of a stratum nested, in shared arrays: a few allocations per stratum
/// rather than four per question (a large panel has millions of questions).
struct Nesting {
    spans: Vec<Span>,
    traj: Vec<u32>,
    /// Per question, its trajectories' read starts relative to its first cell, then its
    /// cell count.
    read_start: Vec<usize>,
    read: Vec<u32>,
    value: Vec<f64>,
}

/// Where one question's parts lie in a [`Nesting`].
struct Span {
    qid: u32,
    first_line: u32,
    traj: Range<usize>,
    read_start: Range<usize>,
    cells: Range<usize>,
}

impl Nesting {
    /// Nests each question of `groups`: its cells sorted by trajectory label then read
    /// label, grouped into trajectories.
    fn new(cells: &Cells, labels: &Labels, groups: &[Group]) -> Nesting {
        let n_cells = groups.iter().map(|g| g.cells.len()).sum();
        let mut n = Nesting {
            spans: Vec::with_capacity(groups.len()),
            traj: Vec::new(),
            read_start: Vec::new(),
            read: Vec::with_capacity(n_cells),
            value: Vec::with_capacity(n_cells),
        };
        let mut cs: Vec<(usize, usize, u32, u32, f64)> = Vec::new();
        for g in groups {
            cs.clear();
            cs.extend(cells.cells[g.cells.clone()].iter().map(|c| {
                (
                    labels.t_rank[&c.key.2],
                    labels.r_rank[&c.key.3],
                    c.key.2,
                    c.key.3,
                    c.value,
                )
            }));
            cs.sort_unstable_by_key(|c| (c.0, c.1));
            let (traj0, starts0, cells0) = (n.traj.len(), n.read_start.len(), n.read.len());
            for (i, c) in cs.iter().enumerate() {
                if i == 0 || cs[i - 1].2 != c.2 {
                    n.read_start.push(i);
                    n.traj.push(c.2);
                }
                n.read.push(c.3);
                n.value.push(c.4);
            }
            n.read_start.push(cs.len());
            n.spans.push(Span {
                qid: g.qid,
                first_line: g.first_line,
                traj: traj0..n.traj.len(),
                read_start: starts0..n.read_start.len(),
                cells: cells0..n.read.len(),
            });
        }
        n
    }

    /// The questions, in the order of `groups`.
    fn questions(&self) -> Vec<Question<'_>> {
        self.spans
            .iter()
            .map(|s| Question {
                qid: s.qid,
                first_line: s.first_line,
                traj: &self.traj[s.traj.clone()],
                read_start: &self.read_start[s.read_start.clone()],
                read: &self.read[s.cells.clone()],
                value: &self.value[s.cells.clone()],
            })
            .collect()
    }
}

/// What the stratum's loader may do with an unbalanced stratum.
pub(super) struct Policy {
    pub drop_incomplete: bool,
    pub allow_unbalanced: bool,
}

/// The trajectory and read label texts of a file, shared: a cell's labels are kept for
/// every cell (for matching a cost ledger), and a shared text costs a count, not a copy.
pub(super) struct LabelTexts {
    traj: Arc<[String]>,
    reads: Arc<[String]>,
}

impl LabelTexts {
    /// The texts of every trajectory and read label of `raw`, by interned id.
    pub fn new(raw: &RawPanel) -> Self {
        LabelTexts {
            traj: raw.trajectories.to_vec().into(),
            reads: raw.reads.to_vec().into(),
        }
    }

    /// Cell labels with no cells yet, naming these texts.
    fn empty_labels(&self) -> CellLabels {
        CellLabels {
            trajectory_names: self.traj.clone(),
            read_names: self.reads.clone(),
            ..CellLabels::default()
        }
    }
}

/// The most common value (the larger on a tie).
fn mode(values: impl Iterator<Item = usize>) -> usize {
    let mut counts = std::collections::BTreeMap::new();
    for v in values {
        *counts.entry(v).or_insert(0usize) += 1;
    }
    counts
        .into_iter()
        .max_by_key(|&(v, c)| (c, v))
        .map(|(v, _)| v)
        .unwrap_or(0)
}

/// Fills stratum `d` from its questions (`groups`, in order), nesting trajectories in
/// questions and reads in trajectories.
///
/// # Errors
/// [`Error::Input`] at an incomplete question's first line, naming its missing cells (or its
/// counts when labels are not shared), when the policy neither drops nor accepts it; or for a
/// stratum with no complete question left.
#[allow(clippy::too_many_arguments)]
pub(super) fn fill_stratum(
    path: &Path,
    raw: &RawPanel,
    d: u32,
    groups: &[Group],
    cells: &Cells,
    labels: &Labels,
    texts: &LabelTexts,
    policy: &Policy,
) -> Result<Stratum> {
    let nesting = Nesting::new(cells, labels, groups);
    let questions = nesting.questions();
    let t_design = mode(questions.iter().map(Question::t));
    let r_design = mode(questions.iter().flat_map(|q| (0..q.t()).map(|t| q.m(t))));
    let max_t = questions.iter().map(Question::t).max().unwrap_or(0);
    let max_r = questions
        .iter()
        .flat_map(|q| (0..q.t()).map(|t| q.m(t)))
        .max()
        .unwrap_or(0);
    // Labels are shared when the union of labels is no larger than the largest question:
    // then a question's missing cells can be named against the full label grid.
    let shared = labels.traj.len() == max_t && labels.reads.len() == max_r;
    let complete = |q: &Question| {
        q.t() == t_design
            && (0..q.t()).all(|t| q.m(t) == r_design)
            && !cells.unpaired.contains_key(&(d, q.qid))
    };
    let ctx = Ctx {
        raw,
        d,
        labels,
        shared,
        t_design,
        r_design,
    };
    let incomplete: Vec<&Question> = questions.iter().filter(|q| !complete(q)).collect();
    let name = raw.datasets.name(d).to_string();
    let mut stratum = Stratum {
        name,
        questions: Vec::new(),
        trajectories: Vec::new(),
        reads: Vec::new(),
        y: Vec::new(),
        dropped: 0,
        dropped_questions: Vec::new(),
        nested: None,
        notes: Vec::new(),
        labels: Some(texts.empty_labels()),
        clusters: None,
        unpaired_cells: cells
            .unpaired_cells
            .iter()
            .filter(|(s, _)| *s == d)
            .map(|(_, m)| m.clone())
            .collect(),
    };
    // Every kept question's own labels, in outcome order (for matching a cost ledger).
    let add_labels = |stratum: &mut Stratum, q: &Question| {
        let l = stratum.labels.get_or_insert_with(|| texts.empty_labels());
        l.trajectory.extend_from_slice(q.traj);
        l.read.extend_from_slice(q.read);
    };
    if incomplete.is_empty() || policy.drop_incomplete {
        for q in &questions {
            if !complete(q) {
                stratum.dropped += 1;
                stratum.dropped_questions.push(format!(
                    "{} ({})",
                    raw.questions.echo(q.qid),
                    cells
                        .unpaired
                        .get(&(d, q.qid))
                        .cloned()
                        .unwrap_or_else(|| ctx.what_differs(q))
                ));
                continue;
            }
            stratum
                .questions
                .push(raw.questions.name(q.qid).to_string());
            stratum.y.extend_from_slice(q.value);
            add_labels(&mut stratum, q);
        }
        if stratum.questions.is_empty() {
            return Err(Error::input(
                path,
                None,
                format!(
                    "stratum '{}' has no complete question left ({} dropped as incomplete)",
                    raw.datasets.echo(d),
                    stratum.dropped
                ),
            ));
        }
        // The first kept question's labels name the array's positions when every kept
        // question has the same labels; otherwise positions 1..T and 1..R do.
        let first = questions.iter().find(|q| complete(q)).expect("one kept");
        let same = questions.iter().filter(|q| complete(q)).all(|q| {
            q.traj == first.traj
                && (0..q.t()).all(|t| {
                    q.read[q.read_start[t]..q.read_start[t + 1]] == first.read[0..r_design]
                })
        });
        if same {
            stratum.trajectories = first
                .traj
                .iter()
                .map(|&t| raw.trajectories.name(t).to_string())
                .collect();
            stratum.reads = first.read[0..r_design]
                .iter()
                .map(|&r| raw.reads.name(r).to_string())
                .collect();
        } else {
            stratum.trajectories = (1..=t_design).map(|i| i.to_string()).collect();
            stratum.reads = (1..=r_design).map(|i| i.to_string()).collect();
        }
        return Ok(stratum);
    }
    if !policy.allow_unbalanced {
        let mut e = ctx.refusal(path, incomplete[0]);
        let n = stratum.unpaired_cells.len();
        if let (Error::Input { msg, .. }, true) = (&mut e, n > 0) {
            msg.push_str(&format!(
                "; {n} cell(s) of this stratum had one arm only and were dropped \
                 (a failure score X scores their missing arm instead)"
            ));
        }
        return Err(e);
    }
    for q in incomplete.iter().take(SHOWN) {
        stratum.notes.push(format!(
            "{}:{}: question '{}' in stratum '{}' {}",
            path.display(),
            q.first_line,
            raw.questions.echo(q.qid),
            raw.datasets.echo(d),
            ctx.what_differs(q)
        ));
    }
    if incomplete.len() > SHOWN {
        stratum.notes.push(format!(
            "stratum '{}': {} more questions differ from the design",
            raw.datasets.echo(d),
            incomplete.len() - SHOWN
        ));
    }
    let mut nested = Nested {
        traj_start: vec![0],
        read_start: vec![0],
        y: Vec::new(),
    };
    for q in &questions {
        stratum
            .questions
            .push(raw.questions.name(q.qid).to_string());
        add_labels(&mut stratum, q);
        let base = nested.y.len();
        nested.y.extend_from_slice(q.value);
        nested
            .read_start
            .extend(q.read_start[1..].iter().map(|&s| base + s));
        nested.traj_start.push(nested.read_start.len() - 1);
    }
    stratum.nested = Some(nested);
    Ok(stratum)
}

/// What messages about one stratum need.
struct Ctx<'a> {
    raw: &'a RawPanel,
    d: u32,
    labels: &'a Labels,
    shared: bool,
    t_design: usize,
    r_design: usize,
}

impl Ctx<'_> {
    /// How question `q` differs from the design: its missing cells when labels are shared,
    /// its counts otherwise.
    fn what_differs(&self, q: &Question) -> String {
        if self.shared {
            let missing = self.missing(q);
            if !missing.is_empty() {
                return format!(
                    "is missing {} of {} cells: {}",
                    missing.len(),
                    self.labels.traj.len() * self.labels.reads.len(),
                    self.shown(&missing)
                );
            }
        }
        let reads: Vec<String> = (0..q.t()).map(|t| q.m(t).to_string()).collect();
        format!(
            "has {} trajectories with {} reads; the design is {} trajectories x {} reads",
            q.t(),
            reads.join(", "),
            self.t_design,
            self.r_design
        )
    }

    /// Question `q`'s missing cells as (trajectory, read) positions in the label grid.
    fn missing(&self, q: &Question) -> Vec<(usize, usize)> {
        let rn = self.labels.reads.len();
        let mut present = vec![false; self.labels.traj.len() * rn];
        for t in 0..q.t() {
            let ti = self.labels.t_rank[&q.traj[t]];
            for r in &q.read[q.read_start[t]..q.read_start[t + 1]] {
                present[ti * rn + self.labels.r_rank[r]] = true;
            }
        }
        (0..present.len())
            .filter(|&i| !present[i])
            .map(|i| (i / rn, i % rn))
            .collect()
    }

    fn shown(&self, missing: &[(usize, usize)]) -> String {
        let shown: Vec<String> = missing
            .iter()
            .take(SHOWN)
            .map(|&(t, r)| {
                format!(
                    "(trajectory {}, read {})",
                    self.raw.trajectories.echo(self.labels.traj[t]),
                    self.raw.reads.echo(self.labels.reads[r])
                )
            })
            .collect();
        let more = if missing.len() > SHOWN {
            format!(" and {} more", missing.len() - SHOWN)
        } else {
            String::new()
        };
        format!("{}{more}", shown.join(", "))
    }

    /// The error for an incomplete question `q` where balance is required.
    fn refusal(&self, path: &Path, q: &Question) -> Error {
        let (tn, rn) = if self.shared {
            (self.labels.traj.len(), self.labels.reads.len())
        } else {
            (self.t_design, self.r_design)
        };
        Error::input(
            path,
            Some(q.first_line as u64),
            format!(
                "unbalanced design: question '{}' in stratum '{}' {}; \
                 every question needs all {} trajectories x {} reads (drop incomplete questions to go on without them)",
                self.raw.questions.echo(q.qid),
                self.raw.datasets.echo(self.d),
                self.what_differs(q),
                tn,
                rn
            ),
        )
    }
}
