//! One-read efficiency loss at a fixed number of questions, with the budget anchored at the
//! panel's measured cost (the budget-allocation paper, Appendix D).
//!
//! With c_T the cost of one trajectory without its reads, c_R1 the cost of its first read,
//! c_R+ that of each later read (prompt caching bills the first read of a packet in full and
//! the later ones cached; [`UnitCosts`]) and c_Q a cost per question, a panel of Q
//! questions, T trajectories and R_obs reads costs
//! B = Q [T (c_T + c_R1 + (R_obs − 1) c_R+) + c_Q]. Spending the same B with R reads per
//! trajectory buys T(R) = (B/Q − c_Q) / (c₀ + R c_R+) trajectories per question, with
//! c₀ = c_T + c_R1 − c_R+ (continuous; a candidate R needs T(R) ≥ 1), and the variance
//! of the stratum mean is
//!
//! J(R) = σ²_q/Q + (σ²_t + σ²_r/R) / (Q T(R)).
//!
//! The loss of reading once is 100 [J(1) / min_R J(R) − 1] over integer R ≥ 1 with
//! T(R) ≥ 1. The product (σ²_t + σ²_r/R)(c₀ + R c_R+) is minimised over continuous R at
//! R* = sqrt(σ²_r c₀ / (σ²_t c_R+)), so the integer optimum is ⌊R*⌋ or ⌈R*⌉ (clamped to the
//! feasible range). At fixed Q the per-question cost c_Q is spent whatever R is, so it does
//! not move the loss; with c_R1 = c_R+ = c_R everything is the one-price model of the paper.

use serde::Serialize;

use crate::components::variance::PerLevel;

/// Unit costs of the nested design, in any currency (tokens or dollars).
///
/// A read has two prices: with prompt caching the first read of a trajectory's packet is
/// billed in full (c_R1, `first_read`) and every later read of the same packet at the cached
/// rate (c_R+, `read`). One trajectory with R reads then costs
/// c_T + c_R1 + (R − 1) c_R+ = c₀ + R c_R+ with c₀ = c_T + c_R1 − c_R+ ([`UnitCosts::fixed`]),
/// and a question at (T, R) costs T (c_T + c_R1 + (R − 1) c_R+) + c_Q. With c_R1 = c_R+
/// this is the one-price model T (c_T + R c_R) + c_Q.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct UnitCosts {
    /// One trajectory without its reads (planner calls and searches), c_T.
    pub trajectory: f64,
    /// The first read of a trajectory, c_R1.
    pub first_read: f64,
    /// Each later read of the same trajectory, c_R+.
    pub read: f64,
    /// Per question, whatever its T and R (judging, annotation, set-up), c_Q.
    #[serde(skip_serializing_if = "is_zero")]
    pub question: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

impl UnitCosts {
    /// One-price unit costs: every read costs `read` (c_R1 = c_R+), no per-question cost.
    pub fn flat(trajectory: f64, read: f64) -> Self {
        UnitCosts {
            trajectory,
            first_read: read,
            read,
            question: 0.0,
        }
    }

    /// c₀ = c_T + c_R1 − c_R+: the part of a trajectory's cost that does not grow with R
    /// (a trajectory with R reads costs c₀ + R c_R+).
    pub fn fixed(&self) -> f64 {
        self.trajectory + self.first_read - self.read
    }

    /// One trajectory with `r` reads: c_T + c_R1 + (r − 1) c_R+.
    pub fn per_trajectory(&self, r: f64) -> f64 {
        self.fixed() + r * self.read
    }

    /// One question at (t, r): t (c_T + c_R1 + (r − 1) c_R+) + c_Q.
    pub fn per_question(&self, t: f64, r: f64) -> f64 {
        t * self.per_trajectory(r) + self.question
    }
}

/// The efficiency analysis of one stratum (or the pooled fit).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Efficiency {
    /// Budget B = Q [T (c_T + c_R1 + (R_obs − 1) c_R+) + c_Q].
    pub budget: f64,
    /// J(1).
    pub j_one: f64,
    /// The integer R minimising J, and J there.
    pub r_best: u32,
    pub j_best: f64,
    /// Trajectories per question the budget buys at `r_best`.
    pub t_best: f64,
    /// Unconstrained continuous optimum R* (∞ when σ²_t = 0 and σ²_r > 0).
    pub r_star: f64,
    /// 100 [J(1)/J(r_best) − 1].
    pub loss_percent: f64,
}

/// J(R) for a budget `b` at fixed `q` (see the module docs); `None` when T(R) < 1.
pub fn j_of_r(c: &PerLevel, costs: UnitCosts, q: f64, b: f64, r: f64) -> Option<f64> {
    let c = c.truncated();
    let t = (b / q - costs.question) / costs.per_trajectory(r);
    (t >= 1.0 - 1e-12).then(|| {
        c.question / q + (c.trajectory.unwrap_or(0.0) + c.read.unwrap_or(0.0) / r) / (q * t)
    })
}

/// The unconstrained optimum R* = sqrt(σ²_r c₀ / (σ²_t c_R+)) from truncated components
/// (c₀ = c_T + c_R1 − c_R+, [`UnitCosts::fixed`]).
pub fn r_star(c: &PerLevel, costs: UnitCosts) -> f64 {
    let c = c.truncated();
    let (st, sr) = (c.trajectory.unwrap_or(0.0), c.read.unwrap_or(0.0));
    if sr == 0.0 {
        return 0.0;
    }
    if st == 0.0 || costs.read == 0.0 {
        return f64::INFINITY;
    }
    (sr * costs.fixed() / (st * costs.read)).sqrt()
}

/// One-read efficiency loss at fixed Q = `q`, anchored at a panel of T = `t`, R = `r_obs`.
/// Returns `None` when the costs are not positive (c_R+ ≤ 0, or c₀ < 0: a later read
/// dearer than a trajectory with its first read).
pub fn efficiency(
    c: &PerLevel,
    costs: UnitCosts,
    q: f64,
    t: f64,
    r_obs: f64,
) -> Option<Efficiency> {
    if !(costs.fixed() >= 0.0 && costs.read > 0.0 && costs.question >= 0.0) {
        return None;
    }
    let b = q * costs.per_question(t, r_obs);
    let j_one = j_of_r(c, costs, q, b, 1.0)?;
    // Largest R that still buys one trajectory: c₀ + R c_R+ ≤ B/Q − c_Q.
    let r_max = (((b / q - costs.question - costs.fixed()) / costs.read) + 1e-9)
        .floor()
        .max(1.0);
    let rs = r_star(c, costs);
    let mut candidates = vec![1.0, r_max];
    if rs.is_finite() {
        candidates.push(rs.floor().clamp(1.0, r_max));
        candidates.push(rs.ceil().clamp(1.0, r_max));
    }
    let (mut r_best, mut j_best) = (1.0, j_one);
    for r in candidates {
        if let Some(j) = j_of_r(c, costs, q, b, r) {
            if j < j_best {
                (r_best, j_best) = (r, j);
            }
        }
    }
    Some(Efficiency {
        budget: b,
        j_one,
        r_best: r_best as u32,
        j_best,
        t_best: (b / q - costs.question) / costs.per_trajectory(r_best),
        r_star: rs,
        loss_percent: 100.0 * (j_one / j_best - 1.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comps(q: f64, t: f64, r: f64) -> PerLevel {
        PerLevel {
            question: q,
            trajectory: Some(t),
            read: Some(r),
        }
    }

    #[test]
    fn worked_example() {
        // σ²_q = 0.02, σ²_t = 0.01, σ²_r = 0.04; c_T = 3, c_R = 1; Q = 100, T = 2, R_obs = 1.
        // B = 100·2·(3 + 1) = 800. R* = sqrt(0.04·3 / (0.01·1)) = sqrt(12) = 3.464.
        // T(R) = 8/(3 + R): T(1) = 2, T(3) = 4/3, T(4) = 8/7; R_max = 5 (T = 1).
        // J(1) = 0.0002 + 0.05/200 = 0.00045
        // J(3) = 0.0002 + (0.01 + 0.04/3)/(100·4/3) = 0.0002 + 0.0233333/133.333 = 0.000375
        // J(4) = 0.0002 + (0.01 + 0.01)/(100·8/7) = 0.0002 + 0.000175 = 0.000375
        // Tie: J(3) = J(4) (R* between them); the first candidate found wins.
        let e = efficiency(
            &comps(0.02, 0.01, 0.04),
            UnitCosts::flat(3.0, 1.0),
            100.0,
            2.0,
            1.0,
        )
        .unwrap();
        assert!((e.budget - 800.0).abs() < 1e-12);
        assert!((e.r_star - 12f64.sqrt()).abs() < 1e-12);
        assert!((e.j_one - 0.00045).abs() < 1e-15);
        assert!((e.j_best - 0.000375).abs() < 1e-15);
        assert!(e.r_best == 3 || e.r_best == 4);
        assert!((e.loss_percent - 20.0).abs() < 1e-9, "{}", e.loss_percent);
    }

    #[test]
    fn no_loss_when_one_read_is_optimal() {
        // σ²_r small relative to σ²_t and reads expensive: R* = sqrt(0.001·1/(0.05·2)) = 0.1.
        let e = efficiency(
            &comps(0.02, 0.05, 0.001),
            UnitCosts::flat(1.0, 2.0),
            50.0,
            3.0,
            1.0,
        )
        .unwrap();
        assert_eq!(e.r_best, 1);
        assert_eq!(e.loss_percent, 0.0);
        assert!((e.r_star - 0.1).abs() < 1e-12);
    }

    #[test]
    fn observed_optimum_read_count() {
        // σ²_q = 1, σ²_t = 1, σ²_r = 1, c_T = 4, c_R = 1: R* = sqrt(1·4/(1·1)) = 2 = R_obs.
        // B = Q·T·(c_T + 2 c_R) = 10·1·6 = 60. J(2) = 0.1 + (1 + 1/2)/(10·1) = 0.25.
        // T(1) = 60/(10·5) = 1.2, J(1) = 0.1 + 2/12; T(3) = 60/70 < 1 is infeasible.
        // Loss = 100 ((0.1 + 1/6)/0.25 − 1) = 6.6667%.
        let e = efficiency(
            &comps(1.0, 1.0, 1.0),
            UnitCosts::flat(4.0, 1.0),
            10.0,
            1.0,
            2.0,
        )
        .unwrap();
        assert!((e.r_star - 2.0).abs() < 1e-12);
        assert_eq!(e.r_best, 2);
        assert!((e.t_best - 1.0).abs() < 1e-12);
        assert!((e.j_best - 0.25).abs() < 1e-15);
        assert!((e.loss_percent - 100.0 * ((0.1 + 1.0 / 6.0) / 0.25 - 1.0)).abs() < 1e-9);
        // Anchored at R_obs = 2, the panel itself is optimal: no loss relative to it.
        assert_eq!(
            j_of_r(
                &comps(1.0, 1.0, 1.0),
                UnitCosts::flat(4.0, 1.0),
                10.0,
                e.budget,
                2.0
            ),
            Some(e.j_best)
        );
    }

    #[test]
    fn two_part_read_costs_by_hand() {
        // c_T = 3, c_R1 = 2, c_R+ = 0.5 (c₀ = 3 + 2 − 0.5 = 4.5); σ² = (0.02, 0.01, 0.04);
        // Q = 100, T = 2, R_obs = 1: B = 100·2·(3 + 2) = 1000, so T(R) = 10/(4.5 + 0.5 R).
        // R* = sqrt(0.04·4.5/(0.01·0.5)) = sqrt(36) = 6, T(6) = 10/7.5 = 4/3;
        // J(1) = 0.0002 + 0.05/200 = 0.00045, J(6) = 0.0002 + (0.01 + 0.04/6)/(400/3)
        // = 0.0002 + 0.000125 = 0.000325; loss = 100 (0.00045/0.000325 − 1) = 38.4615%.
        // One price c_R = 2 for every read would give R* = sqrt(0.04·3/(0.01·2)) = 2.449.
        let costs = UnitCosts {
            trajectory: 3.0,
            first_read: 2.0,
            read: 0.5,
            question: 0.0,
        };
        assert_eq!(costs.per_trajectory(4.0), 3.0 + 2.0 + 3.0 * 0.5);
        let e = efficiency(&comps(0.02, 0.01, 0.04), costs, 100.0, 2.0, 1.0).unwrap();
        assert!((e.budget - 1000.0).abs() < 1e-12);
        assert!((e.r_star - 6.0).abs() < 1e-12);
        assert_eq!(e.r_best, 6);
        assert!((e.t_best - 4.0 / 3.0).abs() < 1e-12);
        assert!((e.j_best - 0.000325).abs() < 1e-15);
        assert!((e.loss_percent - 100.0 * (0.00045 / 0.000325 - 1.0)).abs() < 1e-9);
        let flat = efficiency(
            &comps(0.02, 0.01, 0.04),
            UnitCosts::flat(3.0, 2.0),
            100.0,
            2.0,
            1.0,
        )
        .unwrap();
        assert!((flat.r_star - 6f64.sqrt()).abs() < 1e-12);
        // A per-question cost is spent whatever R is: at fixed Q it moves nothing but B.
        let with_q = UnitCosts {
            question: 7.0,
            ..costs
        };
        let q = efficiency(&comps(0.02, 0.01, 0.04), with_q, 100.0, 2.0, 1.0).unwrap();
        assert!((q.budget - 1700.0).abs() < 1e-12);
        assert_eq!((q.r_best, q.r_star), (e.r_best, e.r_star));
        assert!((q.loss_percent - e.loss_percent).abs() < 1e-9);
    }
}
