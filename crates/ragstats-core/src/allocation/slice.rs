//! Which cells of a panel make the sub-panel of a design Q:T:R: in each stratum Q_d
//! questions, T of each kept question's trajectories and R of each kept trajectory's reads.
//! Without a seed: the first Q_d questions (file order) and the first T trajectories and R
//! reads (label order). With a seed: the questions in the seeded order of
//! [`question_order`] (the same as `allocate --order-seed`), and for each kept question a
//! seeded choice of T of its trajectories and, for each of these, of R of its reads (or,
//! with `first_cells`, the first ones, which is the sub-panel `allocate` measures). The rows
//! of these cells, every arm, selector and column kept, are a panel every command reads, so
//! the measured SE of an allocation, or the variance shares at a smaller T, come from the
//! same code as for any panel.
//!
//! Trajectories are nested in questions and reads in trajectories, so the choice is made by
//! position among each question's own trajectories (and each trajectory's own reads), in the
//! panel loader's label order, and then named by the file's labels ([`Slice::bind`]): a panel
//! whose labels are unique per question (`q1-t0`) slices like one with shared labels.
//!
//! [`slice_panel`] is the whole choice for a loaded panel and a design ([`SliceJob`]).

use std::collections::{HashMap, HashSet};

use super::allocate::question_order;
use crate::components::forecast::{split_questions, DesignSpec};
use crate::panel::{Panel, Stratum};
use crate::rng::keyed::KeyedStream;
use crate::{Error, Result};

/// Stream tags of the seeded trajectory and read choices, `[TRAJECTORIES, stratum,
/// question]` and `[READS, stratum, question, trajectory]` (question and trajectory as
/// positions in the stratum). Far from the simulator's small tags.
const TRAJECTORIES: u64 = 0x5_11CE_0001;
const READS: u64 = 0x5_11CE_0002;

/// One kept question: its id and its kept trajectories, each as its position among the
/// question's own trajectories (label order) with the positions of its kept reads among
/// that trajectory's own reads.
#[derive(Debug, Clone, PartialEq)]
pub struct QuestionSlice {
    pub question: String,
    pub trajectories: Vec<(usize, Vec<usize>)>,
}

/// The cells kept in one stratum.
#[derive(Debug, Clone, PartialEq)]
pub struct StratumSlice {
    pub name: String,
    /// Kept questions, in the order they were chosen.
    pub questions: Vec<QuestionSlice>,
}

/// The cells of the sub-panel, stratum by stratum.
#[derive(Debug, Clone)]
pub struct Slice {
    pub strata: Vec<StratumSlice>,
    /// The kept (dataset, question, trajectory, read) labels, once [`Slice::bind`] named
    /// the positions.
    keys: HashSet<(String, String, String, String)>,
}

/// The labels of a panel file's rows: per (dataset, question) its trajectory labels, per
/// (dataset, question, trajectory) its read labels. Filled row by row ([`FileLabels::add`]).
#[derive(Debug, Clone, Default)]
pub struct FileLabels {
    trajectories: HashMap<(String, String), HashSet<String>>,
    reads: HashMap<(String, String, String), HashSet<String>>,
}

impl FileLabels {
    /// Records one row's (dataset, question, trajectory, read) labels.
    pub fn add(&mut self, dataset: &str, question: &str, trajectory: &str, read: &str) {
        self.trajectories
            .entry((dataset.to_string(), question.to_string()))
            .or_default()
            .insert(trajectory.to_string());
        self.reads
            .entry((
                dataset.to_string(),
                question.to_string(),
                trajectory.to_string(),
            ))
            .or_default()
            .insert(read.to_string());
    }
}

/// Sorts labels as the panel loader does: numerically when `numeric` (every label of the
/// stratum is an integer), else as text.
fn sorted(labels: &HashSet<String>, numeric: bool) -> Vec<&String> {
    let mut v: Vec<&String> = labels.iter().collect();
    if numeric {
        v.sort_by_key(|l| (l.parse::<i64>().unwrap_or(0), l.as_str()));
    } else {
        v.sort();
    }
    v
}

impl Slice {
    /// Whether the row with these (dataset, question, trajectory, read) labels is kept
    /// (after [`Slice::bind`]; before it, no row is).
    pub fn contains(&self, dataset: &str, question: &str, trajectory: &str, read: &str) -> bool {
        // One allocation per lookup is cheap next to reading the row.
        self.keys.contains(&(
            dataset.to_string(),
            question.to_string(),
            trajectory.to_string(),
            read.to_string(),
        ))
    }

    /// How many (dataset, question, trajectory, read) cells are kept (0 before [`Slice::bind`]).
    pub fn cells(&self) -> usize {
        self.keys.len()
    }

    /// Names the kept positions by the file's labels: a question's trajectories in the
    /// loader's order (numeric when every trajectory label of the stratum is an integer,
    /// else text), likewise each trajectory's reads.
    ///
    /// # Errors
    /// [`Error::Data`] when `labels` lacks a kept question, or has fewer trajectories or
    /// reads than the position chosen (labels of another file than the panel's).
    pub fn bind(&mut self, labels: &FileLabels) -> Result<()> {
        let integer = |l: &String| l.parse::<i64>().is_ok();
        let mut keys = HashSet::new();
        for s in &self.strata {
            let d = &s.name;
            let t_numeric = labels
                .trajectories
                .iter()
                .filter(|((ld, _), _)| ld == d)
                .all(|(_, ts)| ts.iter().all(integer));
            let r_numeric = labels
                .reads
                .iter()
                .filter(|((ld, _, _), _)| ld == d)
                .all(|(_, rs)| rs.iter().all(integer));
            for q in &s.questions {
                let missing = |what: String| {
                    Error::Data(format!(
                        "stratum '{d}', question '{}': {what}; the labels are not the panel's",
                        q.question
                    ))
                };
                let own = labels
                    .trajectories
                    .get(&(d.clone(), q.question.clone()))
                    .ok_or_else(|| missing("no rows".into()))?;
                let own = sorted(own, t_numeric);
                for (ti, reads) in &q.trajectories {
                    let t = own.get(*ti).ok_or_else(|| {
                        missing(format!("{} trajectories, no position {ti}", own.len()))
                    })?;
                    let rs = &labels.reads[&(d.clone(), q.question.clone(), (*t).clone())];
                    let rs = sorted(rs, r_numeric);
                    for ri in reads {
                        let r = rs.get(*ri).ok_or_else(|| {
                            missing(format!(
                                "trajectory '{t}' has {} reads, no position {ri}",
                                rs.len()
                            ))
                        })?;
                        keys.insert((d.clone(), q.question.clone(), (*t).clone(), (*r).clone()));
                    }
                }
            }
        }
        self.keys = keys;
        Ok(())
    }
}

/// `k` of the positions `0..n`, in increasing order: the first `k`, or with a stream the
/// `k` with the smallest random keys (a uniformly random subset).
fn choose(n: usize, k: usize, stream: Option<KeyedStream>) -> Vec<usize> {
    let Some(mut stream) = stream else {
        return (0..k).collect();
    };
    let keys: Vec<u64> = (0..n).map(|_| stream.next_u64()).collect();
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by_key(|&i| (keys[i], i));
    idx.truncate(k);
    idx.sort_unstable();
    idx
}

/// Chooses the cells: `questions[d]` questions of stratum d, `t` trajectories of each and `r`
/// reads of each trajectory; the first ones, or with `seed` the seeded question order and
/// (unless `first_cells`) a seeded choice of trajectories and reads. Trajectories and reads
/// are chosen as positions; [`Slice::bind`] names them by the file's labels.
///
/// # Errors
/// [`Error::Usage`] when a stratum has fewer questions, trajectories or reads than asked for,
/// or `questions` does not give one count per stratum.
pub fn select(
    strata: &[Stratum],
    questions: &[usize],
    t: usize,
    r: usize,
    seed: Option<u64>,
    first_cells: bool,
) -> Result<Slice> {
    if questions.len() != strata.len() {
        return Err(Error::Usage(format!(
            "the design gives {} question counts for {} strata",
            questions.len(),
            strata.len()
        )));
    }
    let order = question_order(strata, seed);
    let cell_seed = seed.filter(|_| !first_cells);
    let stream = |tags: &[u64]| cell_seed.map(|s| KeyedStream::new(s, tags));
    let mut out = Vec::with_capacity(strata.len());
    for (d, ((s, &q), order)) in strata.iter().zip(questions).zip(order).enumerate() {
        for (what, want, have) in [
            ("questions", q, s.q()),
            ("trajectories", t, s.t()),
            ("reads", r, s.r()),
        ] {
            if want > have {
                return Err(Error::Usage(format!(
                    "stratum '{}' has {have} {what}, fewer than the {want} asked for",
                    s.name
                )));
            }
        }
        let mut slice = StratumSlice {
            name: s.name.clone(),
            questions: Vec::with_capacity(q),
        };
        for &qi in &order[..q] {
            let (dq, qq) = (d as u64, qi as u64);
            let trajectories = choose(s.t(), t, stream(&[TRAJECTORIES, dq, qq]))
                .into_iter()
                .map(|ti| (ti, choose(s.r(), r, stream(&[READS, dq, qq, ti as u64]))))
                .collect();
            slice.questions.push(QuestionSlice {
                question: s.questions[qi].clone(),
                trajectories,
            });
        }
        out.push(slice);
    }
    Ok(Slice {
        strata: out,
        keys: HashSet::new(),
    })
}

/// What [`slice_panel`] keeps of a panel.
#[derive(Debug, Clone, PartialEq)]
pub struct SliceJob {
    /// The design: `Q:T:R` (Q split over the strata in the panel's question shares by
    /// largest remainder, [`split_questions`]) or per-stratum counts with T and R.
    pub design: DesignSpec,
    /// The Q of a `Q:T:R` design is every stratum's count, not the total.
    pub per_stratum: bool,
    /// Seeded choice: questions in the seeded order of `allocate --order-seed`, and
    /// (unless `first`) a seeded choice of trajectories and reads.
    pub seed: Option<u64>,
    /// Keep the first T trajectories and R reads (label order) of each kept question.
    pub first: bool,
}

impl SliceJob {
    /// The design's trajectories per question T and reads per trajectory R.
    pub fn trajectories_reads(&self) -> (usize, usize) {
        match &self.design {
            DesignSpec::Total(d) => (d.trajectories, d.reads),
            DesignSpec::PerStratum { t, r, .. } | DesignSpec::Clustered { t, r, .. } => (*t, *r),
        }
    }
}

/// Questions per stratum of the settings' design for `panel`: Q in every stratum with
/// `per_stratum`; a total Q split in proportion to the strata's question counts; or the
/// per-stratum counts, which must name every stratum of the panel and no other.
///
/// # Errors
/// [`Error::Usage`] for per-stratum counts with `per_stratum`, or counts that name a
/// stratum the panel lacks or miss one it has.
pub fn stratum_counts(panel: &Panel, settings: &SliceJob) -> Result<Vec<usize>> {
    Ok(match &settings.design {
        DesignSpec::Clustered { .. } => {
            return Err(Error::Usage(
                "slice takes a Q:T:R design or per-stratum counts; a clustered design \
                 GxM:T:R is for forecast and plan"
                    .into(),
            ))
        }
        DesignSpec::Total(d) if settings.per_stratum => vec![d.questions; panel.strata.len()],
        DesignSpec::Total(d) => split_questions(
            d.questions,
            &panel.strata.iter().map(|s| s.q()).collect::<Vec<_>>(),
        ),
        DesignSpec::PerStratum { .. } if settings.per_stratum => {
            return Err(Error::setting(
                "per_stratum",
                "Q in every stratum goes with a Q:T:R design, not per-stratum counts",
            ))
        }
        DesignSpec::PerStratum { questions, .. } => {
            if let Some((n, _)) = questions
                .iter()
                .find(|(n, _)| !panel.strata.iter().any(|s| &s.name == n))
            {
                return Err(Error::Usage(format!(
                    "the design names stratum '{n}', which the panel does not have"
                )));
            }
            panel
                .strata
                .iter()
                .map(|s| {
                    questions
                        .iter()
                        .find(|(n, _)| n == &s.name)
                        .map(|(_, q)| *q)
                        .ok_or_else(|| {
                            Error::Usage(format!(
                                "the design gives no count for stratum '{}'",
                                s.name
                            ))
                        })
                })
                .collect::<Result<_>>()?
        }
    })
}

/// The cells of `panel`'s sub-panel of the settings' design: [`stratum_counts`] questions
/// per stratum, T trajectories of each and R reads of each trajectory, chosen by
/// [`select`]. Name them by the file's labels with [`Slice::bind`] before asking which
/// rows are kept.
///
/// # Errors
/// Those of [`stratum_counts`] and [`select`].
pub fn slice_panel(panel: &Panel, settings: &SliceJob) -> Result<Slice> {
    let q = stratum_counts(panel, settings)?;
    let (t, r) = settings.trajectories_reads();
    select(&panel.strata, &q, t, r, settings.seed, settings.first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stratum(name: &str, q: usize, t: usize, r: usize) -> Stratum {
        Stratum {
            name: name.into(),
            questions: (0..q).map(|i| format!("{name}{i}")).collect(),
            trajectories: (0..t).map(|i| i.to_string()).collect(),
            reads: (0..r).map(|i| i.to_string()).collect(),
            y: vec![0.0; q * t * r],
            dropped: 0,
            ..Default::default()
        }
    }

    /// The labels of `stratum`'s rows: trajectories and reads `0..T`, `0..R` in each question.
    fn labels(strata: &[Stratum]) -> FileLabels {
        let mut l = FileLabels::default();
        for s in strata {
            for q in &s.questions {
                for t in &s.trajectories {
                    for r in &s.reads {
                        l.add(&s.name, q, t, r);
                    }
                }
            }
        }
        l
    }

    /// The kept (question, trajectory position, read positions) of stratum `d`.
    fn cells(s: &Slice, d: usize) -> Vec<(String, usize, Vec<usize>)> {
        s.strata[d]
            .questions
            .iter()
            .flat_map(|q| {
                q.trajectories
                    .iter()
                    .map(|(t, r)| (q.question.clone(), *t, r.clone()))
            })
            .collect()
    }

    #[test]
    fn first_cells_and_limits() {
        let strata = [stratum("a", 4, 3, 2), stratum("b", 3, 3, 2)];
        let mut s = select(&strata, &[2, 3], 2, 1, None, false).unwrap();
        assert!(
            !s.contains("a", "a1", "1", "0"),
            "nothing is kept before bind"
        );
        s.bind(&labels(&strata)).unwrap();
        let names = |d: usize| -> Vec<String> {
            s.strata[d]
                .questions
                .iter()
                .map(|q| q.question.clone())
                .collect()
        };
        assert_eq!(names(0), ["a0", "a1"]);
        assert_eq!(names(1), ["b0", "b1", "b2"]);
        let one = |t: usize| (t, vec![0]);
        assert_eq!(s.strata[0].questions[1].trajectories, [one(0), one(1)]);
        assert!(s.contains("a", "a1", "1", "0"));
        assert!(!s.contains("a", "a2", "0", "0"));
        assert!(!s.contains("a", "a0", "2", "0"));
        assert!(!s.contains("a", "a0", "0", "1"));
        assert!(!s.contains("b", "a0", "0", "0"));
        assert_eq!(s.cells(), 2 * 2 + 3 * 2);
        let e = select(&strata, &[5, 3], 2, 1, None, false)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("stratum 'a' has 4 questions, fewer than the 5"),
            "{e}"
        );
        assert!(select(&strata, &[1, 1], 1, 3, None, false).is_err());
        // Seeded with first cells: the questions `allocate --order-seed` takes first, and
        // the first trajectories and reads (what `allocate` measures).
        let seeded = select(&strata, &[2, 3], 1, 1, Some(7), true).unwrap();
        let order = question_order(&strata, Some(7));
        for (q, i) in seeded.strata[0].questions.iter().zip(&order[0]) {
            assert_eq!(q.question, format!("a{i}"));
            assert_eq!(q.trajectories, [one(0)]);
        }
    }

    #[test]
    fn a_seed_chooses_trajectories_and_reads_per_question() {
        let strata = [stratum("a", 40, 5, 4)];
        let first = select(&strata, &[40], 2, 3, Some(3), true).unwrap();
        let mut seeded = select(&strata, &[40], 2, 3, Some(3), false).unwrap();
        seeded.bind(&labels(&strata)).unwrap();
        // The same questions in the same order either way.
        let qs = |s: &Slice| -> Vec<String> {
            s.strata[0]
                .questions
                .iter()
                .map(|q| q.question.clone())
                .collect()
        };
        assert_eq!(qs(&first), qs(&seeded));
        let c = cells(&seeded, 0);
        assert_eq!(c.len(), 40 * 2);
        assert_eq!(seeded.cells(), 40 * 2 * 3);
        for q in &seeded.strata[0].questions {
            // T distinct trajectories in label order, each with R distinct reads in order.
            let t: Vec<usize> = q.trajectories.iter().map(|(t, _)| *t).collect();
            assert!(t.windows(2).all(|w| w[0] < w[1]), "{t:?}");
            for (_, reads) in &q.trajectories {
                assert_eq!(reads.len(), 3);
                assert!(reads.windows(2).all(|w| w[0] < w[1]), "{reads:?}");
            }
        }
        // Choices vary between questions and trajectories, and are not the first ones.
        let tsets: HashSet<Vec<usize>> = seeded.strata[0]
            .questions
            .iter()
            .map(|q| q.trajectories.iter().map(|(t, _)| *t).collect())
            .collect();
        assert!(tsets.len() > 3, "{tsets:?}");
        let rsets: HashSet<&Vec<usize>> = c.iter().map(|(_, _, r)| r).collect();
        assert_eq!(rsets.len(), 4, "all 4 choices of 3 reads of 4 appear");
        assert_ne!(cells(&first, 0), c);
        assert!(cells(&first, 0)
            .iter()
            .all(|(_, t, r)| *t < 2 && r == &[0, 1, 2]));
        // Each trajectory label is kept in a binomial(40, 2/5) number of questions: 16
        // expected, sd 3.1; the bounds are 16 ± 3.9 sd.
        for label in 0..5 {
            let n = c.iter().filter(|(_, t, _)| *t == label).count();
            assert!((4..=28).contains(&n), "trajectory {label}: {n}");
        }
        // Reproducible, and another seed chooses otherwise.
        let again = select(&strata, &[40], 2, 3, Some(3), false).unwrap();
        assert_eq!(cells(&again, 0), c);
        let other = select(&strata, &[40], 2, 3, Some(4), false).unwrap();
        assert_ne!(cells(&other, 0), c);
    }

    #[test]
    fn positions_are_named_by_each_questions_own_labels_in_loader_order() {
        // Labels unique per question: the panel's stratum names positions 1..T only.
        let mut st = stratum("d", 2, 3, 2);
        st.trajectories = vec!["1".into(), "2".into(), "3".into()];
        st.reads = vec!["1".into(), "2".into()];
        let mut l = FileLabels::default();
        for q in ["d0", "d1"] {
            for t in ["t0", "t1", "t2"] {
                for r in ["b", "a"] {
                    l.add("d", q, &format!("{q}-{t}"), &format!("{q}-{t}-{r}"));
                }
            }
        }
        let mut s = select(&[st.clone()], &[2], 2, 1, None, false).unwrap();
        s.bind(&l).unwrap();
        assert_eq!(s.cells(), 4);
        // Text order: t0 before t1, read `a` before `b`.
        assert!(s.contains("d", "d0", "d0-t0", "d0-t0-a"));
        assert!(s.contains("d", "d1", "d1-t1", "d1-t1-a"));
        assert!(!s.contains("d", "d1", "d1-t2", "d1-t2-a"));
        assert!(!s.contains("d", "d0", "d0-t0", "d0-t0-b"));
        // Integer labels sort numerically (9 before 10), as the loader sorts them.
        let mut l = FileLabels::default();
        for q in ["d0", "d1"] {
            for t in ["10", "9", "11"] {
                for r in ["0", "1"] {
                    l.add("d", q, t, r);
                }
            }
        }
        let mut s = select(&[st.clone()], &[2], 1, 1, None, false).unwrap();
        s.bind(&l).unwrap();
        assert!(s.contains("d", "d0", "9", "0") && s.contains("d", "d1", "9", "0"));
        assert_eq!(s.cells(), 2);
        // Labels of another file are refused.
        let mut s = select(&[st], &[2], 1, 1, None, false).unwrap();
        let e = s.bind(&FileLabels::default()).unwrap_err().to_string();
        assert!(e.contains("question 'd0': no rows"), "{e}");
    }

    /// The demo panel's contrast (the input of `tests/it/cli_slice.rs` and the golden
    /// `slice` cases).
    fn demo() -> Panel {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/demo/panel.csv");
        crate::panel::load_panel(
            &path,
            &crate::panel::LoadOptions {
                contrast: Some("adaptive-open".into()),
                ..Default::default()
            },
        )
        .unwrap()
    }

    fn settings(design: &str, per_stratum: bool, seed: Option<u64>) -> SliceJob {
        SliceJob {
            design: design.parse().unwrap(),
            per_stratum,
            seed,
            first: false,
        }
    }

    fn counts(s: &Slice) -> Vec<(String, usize)> {
        s.strata
            .iter()
            .map(|s| (s.name.clone(), s.questions.len()))
            .collect()
    }

    /// The designs of `tests/it/cli_slice.rs`: 446:2:1 keeps every question with its first
    /// two trajectories and first read; 60:3:2 splits 30 + 30; 5:2:2 per stratum 5 + 5;
    /// per-stratum counts in any order; and its refusals.
    #[test]
    fn slice_panel_counts_and_refusals() {
        let p = demo();
        let all = slice_panel(&p, &settings("446:2:1", false, None)).unwrap();
        assert_eq!(
            counts(&all),
            [("hotpotqa".into(), 223), ("musique".into(), 223)]
        );
        assert!(all.strata[1]
            .questions
            .iter()
            .all(|q| q.trajectories == [(0, vec![0]), (1, vec![0])]));
        let c = |d: &str, per: bool| counts(&slice_panel(&p, &settings(d, per, None)).unwrap());
        assert_eq!(
            c("60:3:2", false),
            [("hotpotqa".into(), 30), ("musique".into(), 30)]
        );
        assert_eq!(
            c("5:2:2", true),
            [("hotpotqa".into(), 5), ("musique".into(), 5)]
        );
        assert_eq!(
            c("musique=4,hotpotqa=3:1:2", false),
            [("hotpotqa".into(), 3), ("musique".into(), 4)]
        );
        let e = |d: &str, per: bool| {
            slice_panel(&p, &settings(d, per, None))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            e("24:5:2", true),
            "stratum 'hotpotqa' has 3 trajectories, fewer than the 5 asked for"
        );
        assert!(e("500:1:1", true).contains("has 223 questions, fewer than the 500"));
        assert_eq!(
            e("hotpotqa=3:1:1", false),
            "the design gives no count for stratum 'musique'"
        );
        assert_eq!(
            e("a=1,hotpotqa=3,musique=1:1:1", false),
            "the design names stratum 'a', which the panel does not have"
        );
        assert_eq!(
            e("hotpotqa=3,musique=1:1:1", true),
            "per_stratum: Q in every stratum goes with a Q:T:R design, not per-stratum counts"
        );
    }

    /// The golden `slice-seed` case (`--design 20:2:1 --seed 7`): the same questions as the
    /// recorded sub-panel `tests/golden/files/slice-seed/small.csv`.
    #[test]
    fn a_seeded_slice_keeps_the_golden_questions() {
        let p = demo();
        let s = slice_panel(&p, &settings("20:2:1", false, Some(7))).unwrap();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let text =
            std::fs::read_to_string(root.join("tests/golden/files/slice-seed/small.csv")).unwrap();
        let mut want: Vec<(String, String)> = text
            .lines()
            .skip(1)
            .map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                (f[0].to_string(), f[1].to_string())
            })
            .collect();
        want.sort();
        want.dedup();
        let mut got: Vec<(String, String)> = s
            .strata
            .iter()
            .flat_map(|d| {
                d.questions
                    .iter()
                    .map(|q| (d.name.clone(), q.question.clone()))
            })
            .collect();
        got.sort();
        assert_eq!(got.len(), 20);
        assert_eq!(got, want);
    }
}
