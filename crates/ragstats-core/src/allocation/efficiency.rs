//! One-read efficiency loss at a fixed number of questions, with the budget anchored at the
//! panel's measured cost (the budget-allocation paper, Appendix D).
//!
//! With c_T the cost of one trajectory without its reads and c_R the cost of one read, a
//! panel of Q questions, T trajectories and R_obs reads costs B = Q T (c_T + R_obs c_R).
//! Spending the same B with R reads per trajectory buys T(R) = B / (Q (c_T + R c_R))
//! trajectories per question (continuous; a candidate R needs T(R) ≥ 1), and the variance
//! of the stratum mean is
//!
//! J(R) = σ²_q/Q + (σ²_t + σ²_r/R) / (Q T(R)).
//!
//! The loss of reading once is 100 [J(1) / min_R J(R) − 1] over integer R ≥ 1 with
//! T(R) ≥ 1. The product (σ²_t + σ²_r/R)(c_T + R c_R) is minimised over continuous R at
//! R* = sqrt(σ²_r c_T / (σ²_t c_R)), so the integer optimum is ⌊R*⌋ or ⌈R*⌉ (clamped to the
//! feasible range).

use serde::Serialize;

use crate::components::variance::PerLevel;

/// Unit costs of the nested design, in any currency (tokens or dollars).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct UnitCosts {
    /// One trajectory without its reads (planner calls and searches).
    pub trajectory: f64,
    /// One read (reader call).
    pub read: f64,
}

/// The efficiency analysis of one stratum (or the pooled fit).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Efficiency {
    /// Budget B = Q T (c_T + R_obs c_R).
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
    let t = b / (q * (costs.trajectory + r * costs.read));
    (t >= 1.0 - 1e-12).then(|| {
        c.question / q + (c.trajectory.unwrap_or(0.0) + c.read.unwrap_or(0.0) / r) / (q * t)
    })
}

/// The unconstrained optimum R* = sqrt(σ²_r c_T / (σ²_t c_R)) from truncated components.
pub fn r_star(c: &PerLevel, costs: UnitCosts) -> f64 {
    let c = c.truncated();
    let (st, sr) = (c.trajectory.unwrap_or(0.0), c.read.unwrap_or(0.0));
    if sr == 0.0 {
        return 0.0;
    }
    if st == 0.0 || costs.read == 0.0 {
        return f64::INFINITY;
    }
    (sr * costs.trajectory / (st * costs.read)).sqrt()
}

/// One-read efficiency loss at fixed Q = `q`, anchored at a panel of T = `t`, R = `r_obs`.
/// Returns `None` when the costs are not positive.
pub fn efficiency(
    c: &PerLevel,
    costs: UnitCosts,
    q: f64,
    t: f64,
    r_obs: f64,
) -> Option<Efficiency> {
    if !(costs.trajectory >= 0.0 && costs.read > 0.0 && costs.trajectory + costs.read > 0.0) {
        return None;
    }
    let b = q * t * (costs.trajectory + r_obs * costs.read);
    let j_one = j_of_r(c, costs, q, b, 1.0)?;
    // Largest R that still buys one trajectory: c_T + R c_R ≤ B/Q.
    let r_max = (((b / q - costs.trajectory) / costs.read) + 1e-9)
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
        t_best: b / (q * (costs.trajectory + r_best * costs.read)),
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
            UnitCosts {
                trajectory: 3.0,
                read: 1.0,
            },
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
            UnitCosts {
                trajectory: 1.0,
                read: 2.0,
            },
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
            UnitCosts {
                trajectory: 4.0,
                read: 1.0,
            },
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
                UnitCosts {
                    trajectory: 4.0,
                    read: 1.0
                },
                10.0,
                e.budget,
                2.0
            ),
            Some(e.j_best)
        );
    }
}
