//! Paired comparison of two result files on (id, run): per-item differences for the
//! bootstrap, and McNemar's exact test on EM.

use std::collections::HashMap;

use serde::Serialize;
use statrs::distribution::{Binomial, Discrete};

use super::item::Group;
use super::results::RunResult;
use super::score::{group_means, line_score, FailurePolicy, GroupMeans};
use crate::error::{Error, Result};

/// One (id, run) pair scored in both files.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    /// Item id.
    pub id: String,
    /// Run index.
    pub run: u32,
    /// Group.
    pub group: Group,
    /// [EM, F1] of A.
    pub a: [f64; 2],
    /// [EM, F1] of B.
    pub b: [f64; 2],
}

/// Pairs and what could not be paired.
#[derive(Debug, Clone, PartialEq)]
pub struct Pairing {
    /// Pairs in A's order.
    pub pairs: Vec<Pair>,
    /// Lines of A without a scored partner in B (or left out by the policy).
    pub unpaired_a: usize,
    /// Lines of B without a scored partner in A.
    pub unpaired_b: usize,
}

/// Pairs `a` and `b` on (id, run).
///
/// # Errors
/// [`Error::Data`] when one id has different groups or gold answers in the two files
/// (they were run on different items files), or when nothing pairs.
pub fn pair(a: &[RunResult], b: &[RunResult], policy: FailurePolicy) -> Result<Pairing> {
    let by: HashMap<(&str, u32), &RunResult> =
        b.iter().map(|r| ((r.id.as_str(), r.run), r)).collect();
    let mut pairs = Vec::new();
    let mut used = 0usize;
    for x in a {
        let Some(y) = by.get(&(x.id.as_str(), x.run)) else {
            continue;
        };
        if x.group != y.group || {
            let (mut g1, mut g2) = (x.gold.clone(), y.gold.clone());
            g1.sort();
            g2.sort();
            g1 != g2
        } {
            return Err(Error::Data(format!(
                "item {:?} has a different group or gold answer in the two files; compare runs of the same items (or pass --items to both)",
                x.id
            )));
        }
        if let (Some(sa), Some(sb)) = (line_score(x, policy), line_score(y, policy)) {
            used += 1;
            pairs.push(Pair {
                id: x.id.clone(),
                run: x.run,
                group: x.group,
                a: sa,
                b: sb,
            });
        }
    }
    if pairs.is_empty() {
        return Err(Error::Data(
            "no (id, run) pair is scored in both files".into(),
        ));
    }
    Ok(Pairing {
        unpaired_a: a.len() - used,
        unpaired_b: b.len() - used,
        pairs,
    })
}

/// Per-item mean over paired runs of B − A: the bootstrap rows.
pub fn item_differences(pairs: &[Pair]) -> Vec<(Group, [f64; 2])> {
    let mut idx: HashMap<&str, usize> = HashMap::new();
    let mut acc: Vec<(Group, [f64; 2], f64)> = Vec::new();
    for p in pairs {
        let i = *idx.entry(p.id.as_str()).or_insert_with(|| {
            acc.push((p.group, [0.0, 0.0], 0.0));
            acc.len() - 1
        });
        acc[i].1[0] += p.b[0] - p.a[0];
        acc[i].1[1] += p.b[1] - p.a[1];
        acc[i].2 += 1.0;
    }
    acc.into_iter()
        .map(|(g, s, n)| (g, [s[0] / n, s[1] / n]))
        .collect()
}

/// Group means of B − A for each run separately.
pub fn per_run_differences(pairs: &[Pair]) -> Vec<GroupMeans> {
    let mut runs: Vec<u32> = pairs.iter().map(|p| p.run).collect();
    runs.sort_unstable();
    runs.dedup();
    runs.iter()
        .map(|&k| {
            let rows: Vec<(Group, [f64; 2])> = pairs
                .iter()
                .filter(|p| p.run == k)
                .map(|p| (p.group, [p.b[0] - p.a[0], p.b[1] - p.a[1]]))
                .collect();
            group_means(&rows)
        })
        .collect()
}

/// McNemar counts and exact p of one group (or overall).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McNemar {
    /// Group name or `overall`.
    pub group: String,
    /// (id, run) pairs.
    pub pairs: usize,
    /// Pairs with A exactly right and B not.
    pub a_only: u64,
    /// Pairs with B exactly right and A not.
    pub b_only: u64,
    /// Exact two-sided p.
    pub p: f64,
}

/// McNemar's exact test: with n = b + c discordant pairs,
/// p = min(1, 2 · Σ_{i=0}^{min(b,c)} C(n, i) / 2^n) (the Binomial(n, ½) lower tail at
/// min(b, c), doubled); p = 1 when n = 0.
pub fn mcnemar_exact(b: u64, c: u64) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    let dist = Binomial::new(0.5, n).expect("p = 1/2 is a valid binomial probability");
    // A sum of pmf terms (each exp of a log, so large n does not overflow) rather than
    // `dist.cdf`, which goes through the incomplete beta: for b = 1, c = 6 the exact
    // 2·8/128 = 0.125 comes out as 0.12499999999999654 from the cdf, 0.12500000000000006
    // from the sum.
    let tail: f64 = (0..=b.min(c)).map(|i| dist.pmf(i)).sum();
    (2.0 * tail).min(1.0)
}

/// McNemar rows per group present and overall, on EM of the pairs.
pub fn mcnemar_table(pairs: &[Pair]) -> Vec<McNemar> {
    let row = |name: String, ps: &[&Pair]| {
        let a_only = ps.iter().filter(|p| p.a[0] == 1.0 && p.b[0] != 1.0).count() as u64;
        let b_only = ps.iter().filter(|p| p.b[0] == 1.0 && p.a[0] != 1.0).count() as u64;
        McNemar {
            group: name,
            pairs: ps.len(),
            a_only,
            b_only,
            p: mcnemar_exact(a_only, b_only),
        }
    };
    let mut out = Vec::new();
    for g in Group::ALL {
        let ps: Vec<&Pair> = pairs.iter().filter(|p| p.group == g).collect();
        if !ps.is_empty() {
            out.push(row(g.as_str().into(), &ps));
        }
    }
    let all: Vec<&Pair> = pairs.iter().collect();
    out.push(row("overall".into(), &all));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcnemar_exact_hand_values() {
        // b = 1, c = 6, n = 7: 2·(C(7,0) + C(7,1))/128 = 2·8/128 = 0.125.
        assert!((mcnemar_exact(1, 6) - 0.125).abs() < 1e-15);
        assert!((mcnemar_exact(6, 1) - 0.125).abs() < 1e-15);
        // b = 2, c = 8, n = 10: 2·(1 + 10 + 45)/1024 = 112/1024 = 0.109375.
        assert!((mcnemar_exact(2, 8) - 0.109375).abs() < 1e-15);
        // Balanced: capped at 1.
        assert_eq!(mcnemar_exact(3, 3), 1.0);
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        // b = 0, c = 5: 2/32.
        assert!((mcnemar_exact(0, 5) - 0.0625).abs() < 1e-15);
        // Large n stays finite: b = 400, c = 600.
        let p = mcnemar_exact(400, 600);
        assert!(p > 0.0 && p < 1e-9, "{p}");
    }

    #[test]
    fn mcnemar_exact_matches_exact_rationals() {
        // 2·Σ C(n, i)/2^n in exact rational arithmetic, then rounded (Python 3.11:
        // float(2 * Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2**n))).
        let cases = [
            (40, 69, 0.007040750835507646),
            (132, 285, 5.130252545068268e-14),
            (400, 600, 2.7284641560660184e-10),
        ];
        for (b, c, want) in cases {
            let p = mcnemar_exact(b, c);
            assert!(
                ((p - want) / want).abs() < 1e-12,
                "b={b} c={c}: {p} vs {want}"
            );
        }
    }
}
