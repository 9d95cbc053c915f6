//! Which cells of a panel make the sub-panel of a design Q:T:R: in each stratum the first
//! Q_d questions (file order, or the seeded order of [`question_order`], the same as
//! `allocate --order-seed`), their first T trajectories and first R reads (label order).
//! The rows of these cells, every arm and column kept, are a panel every command reads, so
//! the measured SE of an allocation, or the variance shares at a smaller T, come from the
//! same code as for any panel.

use std::collections::HashSet;

use super::allocate::question_order;
use crate::panel::Stratum;
use crate::{Error, Result};

/// The cells kept in one stratum.
#[derive(Debug, Clone, PartialEq)]
pub struct StratumSlice {
    pub name: String,
    /// Kept questions, in the order they were chosen.
    pub questions: Vec<String>,
    pub trajectories: Vec<String>,
    pub reads: Vec<String>,
}

/// The cells of the sub-panel, stratum by stratum.
#[derive(Debug, Clone)]
pub struct Slice {
    pub strata: Vec<StratumSlice>,
    keys: HashSet<(String, String, String, String)>,
}

impl Slice {
    /// Whether the row with these (dataset, question, trajectory, read) labels is kept.
    pub fn contains(&self, dataset: &str, question: &str, trajectory: &str, read: &str) -> bool {
        // One allocation per lookup is cheap next to reading the row.
        self.keys.contains(&(
            dataset.to_string(),
            question.to_string(),
            trajectory.to_string(),
            read.to_string(),
        ))
    }
}

/// Chooses the cells: `questions[d]` questions of stratum d, the first `t` trajectories and
/// the first `r` reads; questions in file order, or in the seeded order when `seed` is given.
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
) -> Result<Slice> {
    if questions.len() != strata.len() {
        return Err(Error::Usage(format!(
            "the design gives {} question counts for {} strata",
            questions.len(),
            strata.len()
        )));
    }
    let order = question_order(strata, seed);
    let mut out = Vec::with_capacity(strata.len());
    let mut keys = HashSet::new();
    for ((s, &q), order) in strata.iter().zip(questions).zip(order) {
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
        let slice = StratumSlice {
            name: s.name.clone(),
            questions: order[..q].iter().map(|&i| s.questions[i].clone()).collect(),
            trajectories: s.trajectories[..t].to_vec(),
            reads: s.reads[..r].to_vec(),
        };
        for qn in &slice.questions {
            for tn in &slice.trajectories {
                for rn in &slice.reads {
                    keys.insert((s.name.clone(), qn.clone(), tn.clone(), rn.clone()));
                }
            }
        }
        out.push(slice);
    }
    Ok(Slice { strata: out, keys })
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

    #[test]
    fn first_cells_and_limits() {
        let strata = [stratum("a", 4, 3, 2), stratum("b", 3, 3, 2)];
        let s = select(&strata, &[2, 3], 2, 1, None).unwrap();
        assert_eq!(s.strata[0].questions, ["a0", "a1"]);
        assert_eq!(s.strata[1].questions, ["b0", "b1", "b2"]);
        assert_eq!(s.strata[0].trajectories, ["0", "1"]);
        assert_eq!(s.strata[0].reads, ["0"]);
        assert!(s.contains("a", "a1", "1", "0"));
        assert!(!s.contains("a", "a2", "0", "0"));
        assert!(!s.contains("a", "a0", "2", "0"));
        assert!(!s.contains("a", "a0", "0", "1"));
        assert!(!s.contains("b", "a0", "0", "0"));
        assert_eq!(s.keys.len(), 2 * 2 + 3 * 2);
        let e = select(&strata, &[5, 3], 2, 1, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("stratum 'a' has 4 questions, fewer than the 5"),
            "{e}"
        );
        assert!(select(&strata, &[1, 1], 1, 3, None).is_err());
        // Seeded: the questions `allocate --order-seed` takes first.
        let seeded = select(&strata, &[2, 3], 1, 1, Some(7)).unwrap();
        let order = question_order(&strata, Some(7));
        assert_eq!(seeded.strata[0].questions[0], format!("a{}", order[0][0]));
        assert_eq!(seeded.strata[0].questions[1], format!("a{}", order[0][1]));
    }
}
