//! Per-question sufficient statistics: everything the nested ANOVA, the D-study and the
//! question bootstrap need from a balanced stratum.

use super::Stratum;

/// Sufficient statistics of one question with T trajectories of R reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuestionStats {
    /// ȳ_q, the mean over its T·R cells.
    pub mean: f64,
    /// Within-question trajectory sum of squares R Σ_t (ȳ_qt − ȳ_q)².
    pub ss_trajectory: f64,
    /// Within-trajectory read sum of squares Σ_t Σ_r (y_qtr − ȳ_qt)².
    pub ss_read: f64,
}

/// The sufficient statistics of one stratum.
#[derive(Debug, Clone)]
pub struct StratumStats {
    /// Stratum name.
    pub name: String,
    /// Trajectories per question.
    pub t: usize,
    /// Reads per trajectory.
    pub r: usize,
    /// One entry per question, in panel order.
    pub questions: Vec<QuestionStats>,
}

impl QuestionStats {
    /// Computes the statistics of one question from its cells `y[t][r]`, given as a closure
    /// over the trajectory and read indices to use.
    pub fn from_cells(traj: &[usize], reads: &[usize], y: impl Fn(usize, usize) -> f64) -> Self {
        let (tn, rn) = (traj.len() as f64, reads.len() as f64);
        // A trajectory's mean is recomputed in the second pass rather than stored: this runs
        // once per question of every arm and pair panel (2 × 10⁶ times for 20 systems of
        // 10,000 questions), where a Vec per call was a tenth of `compare`'s time. The sums
        // are the same, in the same order.
        let traj_mean = |t: usize| reads.iter().map(|&r| y(t, r)).sum::<f64>() / rn;
        let mut ss_read = 0.0;
        let mean = traj
            .iter()
            .map(|&t| {
                let m = traj_mean(t);
                ss_read += reads.iter().map(|&r| (y(t, r) - m).powi(2)).sum::<f64>();
                m
            })
            .sum::<f64>()
            / tn;
        let ss_trajectory = rn
            * traj
                .iter()
                .map(|&t| (traj_mean(t) - mean).powi(2))
                .sum::<f64>();
        QuestionStats {
            mean,
            ss_trajectory,
            ss_read,
        }
    }
}

impl StratumStats {
    /// Statistics of every question of a stratum, at its full design.
    pub fn from_stratum(s: &Stratum) -> Self {
        let traj: Vec<usize> = (0..s.t()).collect();
        let reads: Vec<usize> = (0..s.r()).collect();
        Self::from_subset(s, 0..s.q(), &traj, &reads)
    }

    /// Statistics of a sub-panel: the given questions, trajectory indices and read indices.
    pub fn from_subset(
        s: &Stratum,
        questions: impl IntoIterator<Item = usize>,
        traj: &[usize],
        reads: &[usize],
    ) -> Self {
        StratumStats {
            name: s.name.clone(),
            t: traj.len(),
            r: reads.len(),
            questions: questions
                .into_iter()
                .map(|q| QuestionStats::from_cells(traj, reads, |t, r| s.y(q, t, r)))
                .collect(),
        }
    }

    /// Number of questions Q.
    pub fn q(&self) -> usize {
        self.questions.len()
    }

    /// The stratum mean ȳ (mean of question means; the design is balanced).
    pub fn mean(&self) -> f64 {
        self.questions.iter().map(|q| q.mean).sum::<f64>() / self.q() as f64
    }
}
