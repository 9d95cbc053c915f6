//! One-read efficiency loss at a fixed number of trajectories T, the budget spent on questions
//! (the budget-allocation paper, §4.2: "evaluated across read counts with fixed T ... the
//! reported loss uses 100[J_T(1)/min_R J_T(R) − 1]").
//!
//! Per stratum, with truncated components and unit costs c_T (a trajectory without its
//! reads), c_R1 (its first read), c_R+ (each later read) and c_Q (per question;
//! [`UnitCosts`]), a question at design (T, R) has variance of its mean
//! V(R) = σ²_q + σ²_t/T + σ²_r/(T R) and costs k(R) = T (c_T + c_R1 + (R − 1) c_R+) + c_Q
//! = T c₀ + c_Q + R T c_R+ (c₀ = c_T + c_R1 − c_R+). A budget B buys Q = B / k(R)
//! questions, so SE² · B is free of B:
//!
//! J_T(R) = (σ²_q + σ²_t/T + σ²_r/(T R)) · k(R).
//!
//! Across D strata the estimate is the equal-weight mean, SE² = (1/D²) Σ_d V_d(R)/Q_d, and the
//! budget keeps the panel's question shares π_d = Q_d / Σ Q_d, so Q_d = π_d B / K(R) with
//! K(R) = Σ_d π_d k_d(R) and
//!
//! J_T(R) = SE² · B = [(1/D²) Σ_d V_d(R)/π_d] · K(R),
//!
//! which is the per-stratum J_T when D = 1. Both cases have the form
//! J_T(R) = (a + b/R)(c + d R), minimised over continuous R at R*_T = sqrt(b c / (a d)); for
//! one stratum without c_Q, R*_T = sqrt(σ²_r c₀ / ((T σ²_q + σ²_t) c_R+)). A per-question
//! cost c_Q raises c and so R*_T: each question is dearer, so reading it more pays sooner.

use serde::Serialize;

use super::efficiency::UnitCosts;
use crate::components::variance::PerLevel;

/// J_T(R) = (a + b/R)(c + d R) (see the module docs for a, b, c, d).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Product {
    /// Variance part that does not shrink with R.
    pub a: f64,
    /// Variance part divided by R.
    pub b: f64,
    /// Cost part that does not grow with R.
    pub c: f64,
    /// Cost part multiplied by R.
    pub d: f64,
}

impl Product {
    /// J_T(R).
    pub fn j(&self, r: f64) -> f64 {
        (self.a + self.b / r) * (self.c + self.d * r)
    }

    /// The continuous optimum R*_T = sqrt(b c / (a d)): 0 when b = 0, ∞ when a = 0 or d = 0.
    pub fn r_star(&self) -> f64 {
        if self.b == 0.0 {
            0.0
        } else if self.a == 0.0 || self.d == 0.0 {
            f64::INFINITY
        } else {
            (self.b * self.c / (self.a * self.d)).sqrt()
        }
    }
}

/// One stratum's part of the combination: truncated components, unit costs, its T and its
/// question share π_d.
#[derive(Debug, Clone, Copy)]
pub struct Part {
    pub components: PerLevel,
    pub costs: UnitCosts,
    pub t: f64,
    pub share: f64,
}

/// J_T of one stratum: a = σ²_q + σ²_t/T, b = σ²_r/T, c = T c₀ + c_Q, d = T c_R+.
pub fn stratum(components: &PerLevel, costs: UnitCosts, t: f64) -> Product {
    combined(
        &[Part {
            components: *components,
            costs,
            t,
            share: 1.0,
        }],
        &[],
    )
}

/// J_T of the combination Σ_d w_d ȳ_d over strata with `weights` w_d (empty: equal, 1/D):
/// a = Σ_d w_d² (σ²_q,d + σ²_t,d/T_d)/π_d, b = Σ_d w_d² σ²_r,d/(T_d π_d),
/// c = Σ_d π_d (T_d c₀,d + c_Q,d), d = Σ_d π_d T_d c_R+,d (with equal weights w_d² = 1/D²).
pub fn combined(parts: &[Part], weights: &[f64]) -> Product {
    let d2 = (parts.len() * parts.len()) as f64;
    // Equal weights divide by D² as they always have (the same bits); else multiply by w_d².
    let scale = |x: f64, d: usize| weights.get(d).map_or(x / d2, |w| x * w * w);
    let mut p = Product {
        a: 0.0,
        b: 0.0,
        c: 0.0,
        d: 0.0,
    };
    for (i, part) in parts.iter().enumerate() {
        let s = part.components.truncated();
        let (st, sr) = (s.trajectory.unwrap_or(0.0), s.read.unwrap_or(0.0));
        p.a += scale((s.question + st / part.t) / part.share, i);
        p.b += scale(sr / (part.t * part.share), i);
        p.c += part.share * (part.t * part.costs.fixed() + part.costs.question);
        p.d += part.share * part.t * part.costs.read;
    }
    p
}

/// The fixed-T loss of one scope.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FixedTLoss {
    /// J_T(1) (variance × budget).
    pub j_one: f64,
    /// The integer R in 1..=`max_reads` minimising J_T, and J_T there.
    pub r_best: u32,
    pub j_best: f64,
    /// Continuous optimum R*_T (not limited to `max_reads`).
    pub r_star: f64,
    /// 100 [J_T(1)/J_T(r_best) − 1].
    pub loss_percent: f64,
}

/// The loss 100 [J_T(1)/min_R J_T(R) − 1] over integer R = 1..=`max_reads` (the first
/// minimum on ties). `None` when the product is not positive and finite at R = 1 (no cost,
/// or no variance).
pub fn loss(p: &Product, max_reads: u32) -> Option<FixedTLoss> {
    let j_one = p.j(1.0);
    if !(j_one.is_finite() && j_one > 0.0 && p.d > 0.0) {
        return None;
    }
    let (mut r_best, mut j_best) = (1, j_one);
    for r in 2..=max_reads.max(1) {
        let j = p.j(f64::from(r));
        if j < j_best {
            (r_best, j_best) = (r, j);
        }
    }
    Some(FixedTLoss {
        j_one,
        r_best,
        j_best,
        r_star: p.r_star(),
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

    const COSTS: UnitCosts = UnitCosts {
        trajectory: 3.0,
        first_read: 1.0,
        read: 1.0,
        question: 0.0,
    };

    #[test]
    fn hand_worked_example() {
        // σ² = (0.002, 0.01, 0.04), c_T = 3, c_R = 1, T = 2:
        // J_T(R) = (0.002 + 0.005 + 0.02/R) · 2 (3 + R)
        // J_T(1) = 0.027 · 8 = 0.216; J_T(2) = 0.017 · 10 = 0.17;
        // J_T(3) = (0.007 + 0.02/3) · 12 = 0.164; J_T(4) = 0.012 · 14 = 0.168.
        // Loss = 100 (0.216/0.164 − 1) = 31.707%; R*_T = sqrt(0.04·3/((2·0.002 + 0.01)·1))
        // = sqrt(0.12/0.014) = 2.928.
        let p = stratum(&comps(0.002, 0.01, 0.04), COSTS, 2.0);
        assert!((p.j(1.0) - 0.216).abs() < 1e-15);
        assert!((p.j(2.0) - 0.17).abs() < 1e-15);
        assert!((p.j(4.0) - 0.168).abs() < 1e-15);
        let l = loss(&p, 10).unwrap();
        assert_eq!(l.r_best, 3);
        assert!((l.j_best - 0.164).abs() < 1e-15);
        assert!((l.loss_percent - 100.0 * (0.216 / 0.164 - 1.0)).abs() < 1e-9);
        assert!((l.loss_percent - 31.707).abs() < 1e-3);
        assert!((l.r_star - (0.12f64 / 0.014).sqrt()).abs() < 1e-12);
        assert!((l.r_star - 2.928).abs() < 1e-3);
        // A stated maximum of 2 reads stops the search at R = 2: 100 (0.216/0.17 − 1).
        let l2 = loss(&p, 2).unwrap();
        assert_eq!(l2.r_best, 2);
        assert!((l2.loss_percent - 100.0 * (0.216 / 0.17 - 1.0)).abs() < 1e-9);
        // The fixed-Q loss of the same numbers (Q = 100, R_obs = 1) is 38.46%, R* = 3.46:
        // B = 800, J(1) = 0.00002 + 0.05/200 = 0.00027, J(3) = 0.00002 + 0.0233/133.3 = 0.000195.
        let q =
            super::super::efficiency::efficiency(&comps(0.002, 0.01, 0.04), COSTS, 100.0, 2.0, 1.0)
                .unwrap();
        assert!((q.loss_percent - 100.0 * (0.00027 / 0.000195 - 1.0)).abs() < 1e-6);
        assert!((q.loss_percent - 38.46).abs() < 1e-2);
        assert!((q.r_star - 3.464).abs() < 1e-3);
    }

    #[test]
    fn two_equal_strata_combine_to_one() {
        // Two identical strata with equal shares: a = (1/4)(2 a₁/(1/2)) = a₁, likewise b;
        // c = 2 · (1/2) T c_T = c₁. The combined product equals the stratum's.
        let one = stratum(&comps(0.002, 0.01, 0.04), COSTS, 2.0);
        let part = Part {
            components: comps(0.002, 0.01, 0.04),
            costs: COSTS,
            t: 2.0,
            share: 0.5,
        };
        let two = combined(&[part, part], &[]);
        for (x, y) in [
            (one.a, two.a),
            (one.b, two.b),
            (one.c, two.c),
            (one.d, two.d),
        ] {
            assert!((x - y).abs() < 1e-15);
        }
    }

    #[test]
    fn combination_by_hand() {
        // Stratum 1: σ² = (0.01, 0.02, 0.04), T = 2, c = (1, 1), π = 0.25;
        // stratum 2: σ² = (0, 0, 0.08), T = 4, c = (2, 1), π = 0.75.
        // a = (1/4)[(0.01 + 0.02/2)/0.25 + 0/0.75] = 0.02;
        // b = (1/4)[0.04/(2·0.25) + 0.08/(4·0.75)] = (1/4)(0.08 + 0.08/3) = 2/75;
        // c = 0.25·2·1 + 0.75·4·2 = 6.5; d = 0.25·2 + 0.75·4 = 3.5.
        // J_T(1) = (0.02 + 2/75)(10) = 0.46667; J_T(2) = (0.02 + 1/75)(13.5) = 0.45;
        // J_T(3) = (0.02 + 2/225)(17) = 0.49111. Loss = 100 (0.46667/0.45 − 1) = 3.7037%;
        // R*_T = sqrt((2/75)·6.5/(0.02·3.5)) = 1.5736.
        let parts = [
            Part {
                components: comps(0.01, 0.02, 0.04),
                costs: UnitCosts::flat(1.0, 1.0),
                t: 2.0,
                share: 0.25,
            },
            Part {
                components: comps(-0.5, 0.0, 0.08), // negative σ²_q is truncated to 0
                costs: UnitCosts::flat(2.0, 1.0),
                t: 4.0,
                share: 0.75,
            },
        ];
        // Stratum weights w = (0.2, 0.8) replace 1/D² = 1/4 by w_d²:
        // a = 0.04·(0.01 + 0.02/2)/0.25 + 0.64·0 = 0.0032;
        // b = 0.04·0.04/(2·0.25) + 0.64·0.08/(4·0.75) = 0.0032 + 0.0512/3; c, d unchanged.
        let w = combined(&parts, &[0.2, 0.8]);
        assert!((w.a - 0.0032).abs() < 1e-15, "{w:?}");
        assert!((w.b - (0.0032 + 0.0512 / 3.0)).abs() < 1e-15, "{w:?}");
        assert_eq!((w.c, w.d), (6.5, 3.5));
        // Equal weights given explicitly agree with the default.
        let half = combined(&parts, &[0.5, 0.5]);
        assert!((half.a - 0.02).abs() < 1e-15 && (half.b - 2.0 / 75.0).abs() < 1e-15);
        let p = combined(&parts, &[]);
        assert!((p.a - 0.02).abs() < 1e-15);
        assert!((p.b - 2.0 / 75.0).abs() < 1e-15);
        assert!((p.c - 6.5).abs() < 1e-15);
        assert!((p.d - 3.5).abs() < 1e-15);
        let l = loss(&p, 5).unwrap();
        assert_eq!(l.r_best, 2);
        assert!((l.j_one - 0.7 / 1.5).abs() < 1e-12);
        assert!((l.j_best - 0.45).abs() < 1e-12);
        assert!((l.loss_percent - 100.0 * (0.7 / 1.5 / 0.45 - 1.0)).abs() < 1e-9);
        assert!((l.loss_percent - 3.7037).abs() < 1e-4);
        assert!((l.r_star - 1.5736).abs() < 1e-4);
    }

    #[test]
    fn degenerate_products() {
        // No read variance: one read is optimal, R*_T = 0, no loss.
        let l = loss(&stratum(&comps(0.01, 0.01, 0.0), COSTS, 2.0), 10).unwrap();
        assert_eq!((l.r_best, l.loss_percent, l.r_star), (1, 0.0, 0.0));
        // Free reads: no loss is defined.
        let free = UnitCosts::flat(3.0, 0.0);
        assert!(loss(&stratum(&comps(0.01, 0.01, 0.04), free, 2.0), 10).is_none());
    }

    #[test]
    fn a_question_cost_raises_r_star_t() {
        // σ² = (0.002, 0.01, 0.04), c_T = 3, c_R = 1, T = 2, c_Q = 10:
        // a = 0.007, b = 0.02, c = 2·3 + 10 = 16, d = 2, so
        // R*_T = sqrt(0.02·16/(0.007·2)) = sqrt(22.857) = 4.781 (2.928 without c_Q);
        // J_T(4) = 0.012·24 = 0.288, J_T(5) = 0.011·26 = 0.286, J_T(6) = (0.007 + 0.02/6)·28
        // = 0.28933: the best R is 5, loss 100 (0.027·18/0.286 − 1) = 69.93%.
        let costs = UnitCosts {
            question: 10.0,
            ..COSTS
        };
        let p = stratum(&comps(0.002, 0.01, 0.04), costs, 2.0);
        assert!((p.c - 16.0).abs() < 1e-15 && (p.d - 2.0).abs() < 1e-15);
        let l = loss(&p, 10).unwrap();
        assert!((l.r_star - (0.32f64 / 0.014).sqrt()).abs() < 1e-12);
        assert_eq!(l.r_best, 5);
        assert!((l.j_best - 0.286).abs() < 1e-12);
        assert!((l.loss_percent - 100.0 * (0.027 * 18.0 / 0.286 - 1.0)).abs() < 1e-9);
        // Two-part reads: c_T = 3, c_R1 = 2, c_R+ = 0.5 give c = 2·(3 + 2 − 0.5) = 9, d = 1.
        let two = stratum(
            &comps(0.002, 0.01, 0.04),
            UnitCosts {
                first_read: 2.0,
                read: 0.5,
                ..COSTS
            },
            2.0,
        );
        assert!((two.c - 9.0).abs() < 1e-15 && (two.d - 1.0).abs() < 1e-15);
    }
}
