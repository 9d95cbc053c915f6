//! The test of `mcq compare`'s paired ΔEM at every level (group, task, overall): a t test
//! of the Δ the report prints, with its weights, and with every run of an item in one
//! cluster.
//!
//! The printed Δ of a level is a fixed combination of group means of the per-item
//! differences d_i = mean over the item's paired runs of (EM_B − EM_A):
//!
//! ```text
//! Δ = Σ_g W_g D_g,   D_g = (1/n_g) Σ_{i ∈ g} d_i
//! ```
//!
//! with W_g = 1 for a group's own row, 1/G_t for the G_t groups present in a task, and
//! 1/(T·G_t) at `overall` (the mean over the T tasks present of the task means). McNemar's
//! test on the pooled (id, run) pairs tests neither these weights (a task with more pairs
//! counts for more) nor with the right variance (the runs of one item are not independent
//! pairs: at 5 runs per item it rejected a true null at 0.19 for a nominal 0.05). This test
//! uses both:
//!
//! - **Items one by one** (no `--items` clusters; the stratified item bootstrap's design):
//!   SE² = Σ_g W_g² s_g² / n_g with s_g² = Σ_{i ∈ g} (d_i − D_g)² / (n_g − 1), and
//!   t = Δ / SE on Welch–Satterthwaite's df = SE⁴ / Σ_g (W_g² s_g² / n_g)² / (n_g − 1)
//!   (`stratified-t`). For one group it is the one-sample t test of the d_i on n − 1 df.
//!   A group of one item has no s_g²: it adds nothing to SE² and df (a note says so).
//! - **Clusters** (`--items` with provenance; the joint cluster bootstrap's design): the
//!   delete-one-cluster jackknife over the C clusters with an item at the level. Leaving
//!   out cluster c moves group g's mean by −E_cg / (n_g − n_cg), E_cg = Σ_{i ∈ c, g} (d_i − D_g),
//!   so Δ₍c₎ − Δ = −Σ_g W_g E_cg / (n_g − n_cg) (a term with n_cg = n_g, a group whose items
//!   all lie in c, is 0: E_cg = 0 there, and the group's variance cannot be estimated; a
//!   note says so); SE² = (C − 1)/C · Σ_c (Δ₍c₎ − Δ̄₍·₎)² and t = Δ / SE on C − 1 df
//!   (`cluster-t`). With one group and every item its own cluster it is `stratified-t`.
//!
//! p = 2·P(T_df ≥ |t|); the interval Δ ± t_{df, 1−α/2}·SE excludes 0 exactly when p < α,
//! α = 1 − the report's confidence. Where SE = 0 (every d_i of a group the same, e.g. every
//! item right in 1 of 3 runs more under B) or there are fewer than 2 units, t is undefined
//! and the exact sign test over the units decides (`sign`): units (items or clusters) whose
//! contribution Σ_{i ∈ c} W_g d_i / n_g to Δ is positive against negative, McNemar's formula
//! ([`super::paired_tests::mcnemar_exact`]) on those counts.
//!
//! Under the null (A and B drawn alike per item, item-by-system interaction on the logit
//! scale SD 2) this test rejected at 0.05 nominal in 0.0495 (3 runs) and 0.0505 (5 runs) of
//! 2,000 demo-sized comparisons (25 items in 6 groups), where the pooled McNemar rejected in
//! 0.100 and 0.174; clustered by 20 or 8 source questions, within 0.065 too
//! (`tests::null_rejection_rates`, docs/coverage-mcq.md).

use serde::Serialize;

use super::item::{Group, Task};
use super::paired_tests::mcnemar_exact;
use crate::inference::t::{satterthwaite, t_quantile, two_sided_p};
use crate::resample::summary::Interval;

/// The test of one level's ΔEM.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeltaTest {
    /// `group`, `task` or `overall`.
    pub level: &'static str,
    /// Group or task name, or `overall`.
    pub name: String,
    /// Items at the level.
    pub items: usize,
    /// Units the variance is estimated over: clusters with an item at the level (each item
    /// its own cluster without `--items` clusters).
    pub clusters: usize,
    /// `stratified-t`, `cluster-t` or `sign` (module docs).
    pub test: &'static str,
    /// The printed Δ (B − A) of the level.
    pub estimate: f64,
    /// Its standard error (absent for `sign`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub se: Option<f64>,
    /// Degrees of freedom of the t reference (absent for `sign`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub df: Option<f64>,
    /// t = Δ / SE (absent for `sign`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t: Option<f64>,
    /// Two-sided p.
    pub p: f64,
    /// Δ ± t_{df, 1−α/2}·SE: excludes 0 exactly when p < α (absent for `sign`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci: Option<Interval>,
    /// `A` or `B`, the system the difference favours, when p < α; else `None`.
    pub favours: Option<&'static str>,
}

/// The levels of a report, in [`super::score::level_rows`]' order (groups present, tasks
/// present, overall), each with its weights W_g per group ([`Group::index`]).
pub fn level_weights(present: &[bool; 6]) -> Vec<(&'static str, String, [f64; 6])> {
    let mut out = Vec::new();
    for g in Group::ALL {
        if present[g.index()] {
            let mut w = [0.0; 6];
            w[g.index()] = 1.0;
            out.push(("group", g.as_str().to_string(), w));
        }
    }
    let mut tasks: Vec<[f64; 6]> = Vec::new();
    for t in Task::ALL {
        let gs: Vec<&Group> = t.groups().iter().filter(|g| present[g.index()]).collect();
        if gs.is_empty() {
            continue;
        }
        let mut w = [0.0; 6];
        for g in &gs {
            w[g.index()] = 1.0 / gs.len() as f64;
        }
        out.push(("task", t.as_str().to_string(), w));
        tasks.push(w);
    }
    if !tasks.is_empty() {
        let mut w = [0.0; 6];
        for tw in &tasks {
            for (x, y) in w.iter_mut().zip(tw) {
                *x += y / tasks.len() as f64;
            }
        }
        out.push(("overall", "overall".to_string(), w));
    }
    out
}

/// The tests of every level of `rows` (each item's group and d_i), with `clusters` a
/// cluster index per row (dense, [`super::cluster::Clusters::indices`]) or `None` for items
/// one by one, at level α = 1 − `confidence`; and the notes the reader needs (groups whose
/// variance cannot be estimated, levels where the sign test decides).
pub fn delta_tests(
    rows: &[(Group, f64)],
    clusters: Option<&[usize]>,
    confidence: f64,
) -> (Vec<DeltaTest>, Vec<String>) {
    let alpha = 1.0 - confidence;
    let mut n = [0usize; 6];
    let mut sum = [0.0; 6];
    for (g, d) in rows {
        n[g.index()] += 1;
        sum[g.index()] += d;
    }
    let present = n.map(|k| k > 0);
    let mean: [f64; 6] = std::array::from_fn(|g| if n[g] > 0 { sum[g] / n[g] as f64 } else { 0.0 });
    // Units: the clusters, or each row its own.
    let units: Vec<usize> = match clusters {
        Some(c) => c.to_vec(),
        None => (0..rows.len()).collect(),
    };
    let n_units = units.iter().copied().max().map_or(0, |m| m + 1);
    let mut notes = Vec::new();
    // Groups whose variance cannot be estimated: one item, or (clusters) one cluster.
    for g in Group::ALL.iter().filter(|g| present[g.index()]) {
        let in_g: std::collections::BTreeSet<usize> = rows
            .iter()
            .zip(&units)
            .filter(|((h, _), _)| h == g)
            .map(|(_, &u)| u)
            .collect();
        if in_g.len() == 1 {
            notes.push(match clusters {
                None => format!(
                    "{}: one item, so its ΔEM has no variance estimate; the tests of the task and overall leave it out of the SE",
                    g.as_str()
                ),
                Some(_) => format!(
                    "{}: every item in one cluster, so its ΔEM has no variance estimate; the tests of the task and overall leave it out of the SE",
                    g.as_str()
                ),
            });
        }
    }
    let mut out = Vec::new();
    for (level, name, w) in level_weights(&present) {
        let at: Vec<usize> = (0..rows.len())
            .filter(|&i| w[rows[i].0.index()] > 0.0)
            .collect();
        let estimate: f64 = (0..6).map(|g| w[g] * mean[g]).sum();
        // Each unit's share of the estimate, Σ_{i ∈ c} W_g d_i / n_g (the sign test's), and
        // the scale an exact 0 of the variance is judged against.
        let mut share = vec![0.0; n_units];
        let mut scale = 0.0;
        for &i in &at {
            let (g, d) = (rows[i].0.index(), rows[i].1);
            let v = w[g] * d / n[g] as f64;
            share[units[i]] += v;
            scale += v * v;
        }
        let used: std::collections::BTreeSet<usize> = at.iter().map(|&i| units[i]).collect();
        let k = used.len();
        let (var, df, test) = match clusters {
            None => {
                let mut ss = [0.0; 6];
                for &i in &at {
                    let g = rows[i].0.index();
                    ss[g] += (rows[i].1 - mean[g]).powi(2);
                }
                // Each group's W_g² s_g² / n_g on its n_g − 1 df.
                let terms: Vec<(f64, f64)> = (0..6)
                    .filter(|&g| w[g] > 0.0 && n[g] >= 2)
                    .map(|g| {
                        let a = w[g] * w[g] * ss[g] / (n[g] - 1) as f64 / n[g] as f64;
                        (a, (n[g] - 1) as f64)
                    })
                    .collect();
                let v = terms.iter().map(|t| t.0).sum();
                (v, satterthwaite(terms).unwrap_or(0.0), "stratified-t")
            }
            Some(_) => {
                // E_cg per used cluster and group, and n_cg.
                let mut e: std::collections::BTreeMap<usize, [(f64, usize); 6]> =
                    std::collections::BTreeMap::new();
                for &i in &at {
                    let g = rows[i].0.index();
                    let cell = &mut e.entry(units[i]).or_insert([(0.0, 0); 6])[g];
                    cell.0 += rows[i].1 - mean[g];
                    cell.1 += 1;
                }
                let delta: Vec<f64> = e
                    .values()
                    .map(|cells| {
                        -(0..6)
                            .filter(|&g| w[g] > 0.0 && cells[g].1 > 0 && cells[g].1 < n[g])
                            .map(|g| w[g] * cells[g].0 / (n[g] - cells[g].1) as f64)
                            .sum::<f64>()
                    })
                    .collect();
                let c = delta.len() as f64;
                let v = if delta.len() >= 2 {
                    crate::resample::summary::jackknife_variance(&delta)
                } else {
                    0.0
                };
                (v, c - 1.0, "cluster-t")
            }
        };
        let items = at.len();
        let row = if var > 1e-20 * scale && var > 0.0 && df > 0.0 {
            let se = var.sqrt();
            let t = estimate / se;
            let p = two_sided_p(t, df);
            let q = t_quantile(1.0 - alpha / 2.0, df);
            DeltaTest {
                level,
                name,
                items,
                clusters: k,
                test,
                estimate,
                se: Some(se),
                df: Some(df),
                t: Some(t),
                p,
                ci: Some(Interval::new(estimate - q * se, estimate + q * se)),
                favours: favours(estimate, p, alpha),
            }
        } else {
            let tiny = 1e-12 * share.iter().fold(0.0f64, |a, s| a.max(s.abs()));
            let lean_b = used.iter().filter(|&&u| share[u] > tiny).count() as u64;
            let lean_a = used.iter().filter(|&&u| share[u] < -tiny).count() as u64;
            let p = mcnemar_exact(lean_a, lean_b);
            if estimate != 0.0 || lean_a + lean_b > 0 {
                notes.push(format!(
                    "{level} {name}: the SE of ΔEM is 0 or undefined ({k} {}), so the exact sign test over them decides: {lean_b} lean B, {lean_a} lean A",
                    if clusters.is_some() { "clusters" } else { "items" }
                ));
            }
            DeltaTest {
                level,
                name,
                items,
                clusters: k,
                test: "sign",
                estimate,
                se: None,
                df: None,
                t: None,
                p,
                ci: None,
                favours: favours(estimate, p, alpha),
            }
        };
        out.push(row);
    }
    (out, notes)
}

/// The system a difference favours when it is significant at `alpha`.
fn favours(estimate: f64, p: f64, alpha: f64) -> Option<&'static str> {
    if p < alpha && estimate != 0.0 {
        Some(if estimate > 0.0 { "B" } else { "A" })
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::KeyedStream;

    const G: [Group; 6] = Group::ALL;

    /// HAND of tests/reference/mcq_delta_test.py: (group index in [`Group::ALL`], cluster,
    /// d) of 18 items in six source questions, d a mean over 3 runs.
    fn hand() -> (Vec<(Group, f64)>, Vec<usize>) {
        let t = 1.0 / 3.0;
        let rows = [
            (0, 1, t),
            (0, 2, 0.0),
            (0, 3, 2.0 * t),
            (1, 1, -t),
            (1, 4, t),
            (2, 1, 1.0),
            (2, 2, t),
            (2, 2, 0.0),
            (2, 5, -t),
            (3, 3, 0.0),
            (3, 4, 2.0 * t),
            (3, 5, t),
            (3, 6, 1.0),
            (4, 6, -2.0 * t),
            (4, 2, 0.0),
            (5, 3, t),
            (5, 6, t),
            (5, 4, 0.0),
        ];
        (
            rows.iter().map(|&(g, _, d)| (G[g], d)).collect(),
            // Dense cluster indices: q1..q6 → 0..5 (their order of first appearance).
            rows.iter().map(|&(_, c, _)| c - 1).collect(),
        )
    }

    fn find<'a>(tests: &'a [DeltaTest], level: &str, name: &str) -> &'a DeltaTest {
        tests
            .iter()
            .find(|t| t.level == level && t.name == name)
            .unwrap()
    }

    /// `(estimate, se, df, t, p, lo, hi)` against a reference, each to `tol` relative.
    fn check(t: &DeltaTest, want: [f64; 7], tol: f64) {
        let ci = t.ci.unwrap();
        let got = [
            t.estimate,
            t.se.unwrap(),
            t.df.unwrap(),
            t.t.unwrap(),
            t.p,
            ci.lower(),
            ci.upper(),
        ];
        for (k, (g, w)) in got.iter().zip(want).enumerate() {
            assert!((g - w).abs() <= tol * w.abs(), "{k}: {g} vs {w} in {t:?}");
        }
    }

    #[test]
    fn level_weights_are_those_of_the_printed_means() {
        let all = level_weights(&[true; 6]);
        let names: Vec<&str> = all.iter().map(|(_, n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "planning-convergent",
                "planning-divergent",
                "evidence_extraction",
                "grounded_reasoning",
                "noise-abstain",
                "noise-reliability",
                "planning",
                "evidence_extraction",
                "grounded_reasoning",
                "noise_robustness",
                "overall"
            ]
        );
        // overall = mean of 4 tasks; planning and noise split between two groups.
        let (_, _, w) = &all[10];
        assert_eq!(*w, [0.125, 0.125, 0.25, 0.25, 0.125, 0.125]);
        assert_eq!(all[6].2, [0.5, 0.5, 0.0, 0.0, 0.0, 0.0]);
        // Without planning-divergent and noise: planning is its convergent group alone and
        // overall the mean of three tasks.
        let some = level_weights(&[true, false, true, true, false, false]);
        let third = 1.0 / 3.0;
        assert_eq!(some.last().unwrap().2, [third, 0.0, third, third, 0.0, 0.0]);
    }

    /// The stratified t against tests/reference/mcq_delta_test.py (numpy 2.4.6, scipy
    /// 1.17.1): HAND overall `{'estimate': 0.2152777777777778, 'se': 0.11045815083740879,
    /// 'df': 8.481383331124949, 't': 1.9489533017319878, 'p': 0.08507589962946523, 'ci':
    /// [-0.036944521916379924, 0.4675000774719355]}`; task planning `{'estimate':
    /// 0.16666666666666666, 'se': 0.19245008972987526, 'df': 1.6842105263157896, 't':
    /// 0.8660254037844386, 'p': 0.49209629563951035, 'ci': [-0.829499574709729,
    /// 1.1628329080430624]}`; grounded_reasoning: `ttest_1samp` t = 2.32379000772445,
    /// p = 0.10272807885839899 on 3 df.
    #[test]
    fn stratified_t_matches_numpy_and_scipy() {
        let (rows, _) = hand();
        let (tests, notes) = delta_tests(&rows, None, 0.95);
        assert_eq!(tests.len(), 11);
        assert!(notes.is_empty(), "{notes:?}");
        let o = find(&tests, "overall", "overall");
        assert_eq!((o.test, o.items, o.clusters), ("stratified-t", 18, 18));
        check(
            o,
            [
                0.215_277_777_777_777_8,
                0.110_458_150_837_408_79,
                8.481_383_331_124_949,
                1.948_953_301_731_987_8,
                0.085_075_899_629_465_23,
                -0.036_944_521_916_379_924,
                0.467_500_077_471_935_5,
            ],
            1e-10,
        );
        assert_eq!(o.favours, None);
        check(
            find(&tests, "task", "planning"),
            [
                1.0 / 6.0,
                0.192_450_089_729_875_26,
                1.684_210_526_315_789_6,
                0.866_025_403_784_438_6,
                0.492_096_295_639_510_35,
                -0.829_499_574_709_729,
                1.162_832_908_043_062_4,
            ],
            1e-9,
        );
        let gr = find(&tests, "group", "grounded_reasoning");
        assert_eq!(gr.df, Some(3.0));
        assert!(
            (gr.t.unwrap() - 2.323_790_007_724_45).abs() < 1e-12,
            "{gr:?}"
        );
        assert!((gr.p - 0.102_728_078_858_398_99).abs() < 1e-12, "{gr:?}");
    }

    /// The delete-one-cluster jackknife t against tests/reference/mcq_delta_test.py, which
    /// recomputes Δ with each cluster left out by brute force: HAND overall `{'estimate':
    /// 0.2152777777777778, 'se': 0.07251136623924574, 'df': 5, 't': 2.9688832102195555,
    /// 'p': 0.03119726626991807, 'ci': [0.028881376846000367, 0.40167417870955524]}`; task
    /// planning `{'se': 0.22821773229381923, 'df': 3, 't': 0.7302967433402214, 'p':
    /// 0.5180709211527524, 'ci': [-0.5596240122720246, 0.8929573456053579]}`.
    #[test]
    fn cluster_t_matches_the_brute_force_jackknife() {
        let (rows, clusters) = hand();
        let (tests, _) = delta_tests(&rows, Some(&clusters), 0.95);
        let o = find(&tests, "overall", "overall");
        assert_eq!((o.test, o.items, o.clusters), ("cluster-t", 18, 6));
        check(
            o,
            [
                0.215_277_777_777_777_8,
                0.072_511_366_239_245_74,
                5.0,
                2.968_883_210_219_555_5,
                0.031_197_266_269_918_07,
                0.028_881_376_846_000_367,
                0.401_674_178_709_555_24,
            ],
            1e-10,
        );
        assert_eq!(o.favours, Some("B"));
        let p = find(&tests, "task", "planning");
        assert_eq!(p.clusters, 4);
        check(
            p,
            [
                1.0 / 6.0,
                0.228_217_732_293_819_23,
                3.0,
                0.730_296_743_340_221_4,
                0.518_070_921_152_752_4,
                -0.559_624_012_272_024_6,
                0.892_957_345_605_357_9,
            ],
            1e-10,
        );
    }

    /// With one group and every item its own cluster, the jackknife t is the one-sample t
    /// test: Δ₍i₎ − Δ = −(d_i − D)/(n − 1), so SE² = (n − 1)/n · Σ (d_i − D)²/(n − 1)² = s²/n.
    #[test]
    fn singleton_clusters_of_one_group_give_the_stratified_t() {
        let rows: Vec<(Group, f64)> = [-1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0]
            .iter()
            .map(|&d| (Group::EvidenceExtraction, d))
            .collect();
        let own: Vec<usize> = (0..8).collect();
        let (s, _) = delta_tests(&rows, None, 0.9);
        let (c, _) = delta_tests(&rows, Some(&own), 0.9);
        for (a, b) in s.iter().zip(&c) {
            assert_eq!((a.test, b.test), ("stratified-t", "cluster-t"));
            assert_eq!(a.df, b.df);
            assert!((a.se.unwrap() - b.se.unwrap()).abs() < 1e-15, "{a:?} {b:?}");
            assert!((a.p - b.p).abs() < 1e-14, "{a:?} {b:?}");
            // scipy: stats.ttest_1samp([-1, 1, 1, 1, 1, 1, 1, 0], 0).pvalue
            assert!((a.p - 0.049_173_714_204_803_38).abs() < 1e-13, "{a:?}");
            // At 90 %, p < 0.1: B.
            assert_eq!(a.favours, Some("B"));
        }
    }

    #[test]
    fn the_interval_excludes_zero_exactly_when_p_is_below_alpha() {
        let (rows, clusters) = hand();
        for conf in [0.8, 0.9, 0.95, 0.99] {
            for cl in [None, Some(clusters.as_slice())] {
                let (tests, _) = delta_tests(&rows, cl, conf);
                for t in tests.iter().filter(|t| t.ci.is_some()) {
                    let alpha = 1.0 - conf;
                    assert_eq!(t.ci.unwrap().excludes(0.0), t.p < alpha, "{conf} {t:?}");
                    assert_eq!(t.favours.is_some(), t.p < alpha, "{t:?}");
                }
            }
        }
    }

    /// Every item of a group the same d (4 items each right in one run more of 3 under B):
    /// SE = 0, so the exact sign test over the items decides: 4 lean B, 2·(1/16) = 0.125. A
    /// group of one item adds nothing to the SE of the levels above it, and says so.
    #[test]
    fn a_zero_se_falls_back_to_the_sign_test() {
        let third = 1.0 / 3.0;
        let rows = vec![(Group::EvidenceExtraction, third); 4];
        let (tests, notes) = delta_tests(&rows, None, 0.95);
        for t in &tests {
            assert_eq!((t.test, t.se, t.ci), ("sign", None, None), "{t:?}");
            assert!((t.p - 0.125).abs() < 1e-15 && t.favours.is_none(), "{t:?}");
        }
        assert!(notes[0].contains("4 lean B, 0 lean A"), "{notes:?}");
        // Nothing differs: p = 1 and no note.
        let (tests, notes) = delta_tests(&[(Group::GroundedReasoning, 0.0); 3], None, 0.95);
        assert!(tests.iter().all(|t| t.p == 1.0 && t.test == "sign"));
        assert!(notes.is_empty());
        // A one-item group beside a four-item group in one task.
        let mut rows = vec![(Group::PlanningConvergent, 1.0)];
        rows.extend([0.0, 1.0, 0.5, 1.0].map(|d| (Group::PlanningDivergent, d)));
        let (tests, notes) = delta_tests(&rows, None, 0.95);
        assert!(
            notes[0].starts_with("planning-convergent: one item"),
            "{notes:?}"
        );
        // planning = (1 + 0.625)/2; SE² = ¼ · s²/4 of the divergent group alone, 3 df.
        let p = find(&tests, "task", "planning");
        let s2 = (0.625f64.powi(2) + 0.375f64.powi(2) * 2.0 + 0.125f64.powi(2)) / 3.0;
        assert!((p.estimate - 0.8125).abs() < 1e-15);
        assert!(
            (p.se.unwrap() - (0.25 * s2 / 4.0).sqrt()).abs() < 1e-15,
            "{p:?}"
        );
        assert_eq!(p.df, Some(3.0));
        // Clusters: a group whose items all lie in one cluster.
        let rows = vec![
            (Group::PlanningConvergent, 1.0),
            (Group::PlanningConvergent, 0.0),
            (Group::PlanningDivergent, 0.5),
            (Group::PlanningDivergent, 0.0),
        ];
        let (_, notes) = delta_tests(&rows, Some(&[0, 0, 1, 2]), 0.95);
        assert!(
            notes[0].starts_with("planning-convergent: every item in one cluster"),
            "{notes:?}"
        );
    }

    /// One simulated comparison under the null: per item a difficulty u ~ N(0, 1.5²) shared
    /// by both systems, and per system an item-by-system effect v ~ N(0, 2²), so
    /// logit P(right) = q + u + v ± s/2 (q, s per cluster, 0 without clusters); A and B are
    /// drawn alike, so E[Δ] = 0 at every level. `runs` Bernoulli runs per item and system.
    /// Returns the overall test's p and the exact McNemar p on the pooled (id, run) pairs.
    fn null_comparison(
        rng: &mut KeyedStream,
        items: &[(Group, usize)],
        clustered: bool,
        runs: usize,
    ) -> (f64, f64) {
        let k = items.iter().map(|i| i.1).max().unwrap() + 1;
        let shared: Vec<(f64, f64)> = (0..k)
            .map(|_| {
                if clustered {
                    (rng.normal(), rng.normal())
                } else {
                    (0.0, 0.0)
                }
            })
            .collect();
        let logistic = |x: f64| 1.0 / (1.0 + (-x).exp());
        let (mut rows, mut b, mut c) = (Vec::new(), 0u64, 0u64);
        for &(g, cl) in items {
            let (q, s) = shared[cl];
            let u = 1.5 * rng.normal() + q;
            let pa = logistic(u + 2.0 * rng.normal() + s / 2.0);
            let pb = logistic(u + 2.0 * rng.normal() - s / 2.0);
            let mut d = 0.0;
            for _ in 0..runs {
                let (ra, rb) = (rng.uniform() < pa, rng.uniform() < pb);
                d += f64::from(u8::from(rb)) - f64::from(u8::from(ra));
                b += u64::from(ra && !rb);
                c += u64::from(rb && !ra);
            }
            rows.push((g, d / runs as f64));
        }
        let units: Vec<usize> = items.iter().map(|i| i.1).collect();
        let (tests, _) = delta_tests(&rows, clustered.then_some(units.as_slice()), 0.95);
        (tests.last().unwrap().p, mcnemar_exact(b, c))
    }

    /// A design of `questions` source questions with 0–3 items in each group (each group at
    /// least 2 items), drawn from `rng`.
    fn clustered_design(rng: &mut KeyedStream, questions: usize) -> Vec<(Group, usize)> {
        loop {
            let mut items = Vec::new();
            for q in 0..questions {
                for g in G {
                    for _ in 0..(rng.uniform() * 4.0) as usize {
                        items.push((g, q));
                    }
                }
            }
            if G.iter()
                .all(|g| items.iter().filter(|i| i.0 == *g).count() >= 2)
            {
                // Questions without items are no cluster: renumber densely.
                let mut seen = std::collections::HashMap::new();
                return items
                    .into_iter()
                    .map(|(g, q)| {
                        let n = seen.len();
                        (g, *seen.entry(q).or_insert(n))
                    })
                    .collect();
            }
        }
    }

    /// The overall test's rejection rate at α = 0.05 under the null, 2,000 simulated
    /// comparisons per cell (MC SE ≈ 0.005), against the pooled exact McNemar's on the same
    /// draws. Designs: the demo's 25 items (4, 4, 4, 5, 4, 4 per group), items one by one;
    /// and 20 or 8 source questions with 0–3 items per group (about 180 or 72 items),
    /// clustered by question. The
    /// numbers are in docs/coverage-mcq.md; print them with
    /// `cargo test -p ragstats-core null_rejection_rates -- --nocapture`.
    ///
    /// The bound is the issue's target 0.065 plus 2 MC SEs at that rate (0.011): the old
    /// pooled McNemar (0.10 at 3 runs, 0.19 at 5 on the demo design) fails it.
    #[test]
    fn null_rejection_rates() {
        const SIMS: usize = 2000;
        let bound = 0.065 + 2.0 * (0.065f64 * 0.935 / SIMS as f64).sqrt();
        let demo: Vec<(Group, usize)> = [4, 4, 4, 5, 4, 4]
            .iter()
            .zip(G)
            .flat_map(|(&n, g)| std::iter::repeat_n(g, n))
            .enumerate()
            .map(|(i, g)| (g, i))
            .collect();
        for runs in [3usize, 5] {
            for (tag, questions) in [(1u64, 0usize), (2, 20), (3, 8)] {
                let clustered = questions > 0;
                let mut rng = KeyedStream::new(45, &[tag, runs as u64]);
                let (mut test, mut pooled) = (0usize, 0usize);
                let mut items_seen = 0usize;
                for _ in 0..SIMS {
                    let design = if clustered {
                        clustered_design(&mut rng, questions)
                    } else {
                        demo.clone()
                    };
                    items_seen += design.len();
                    let (p, pm) = null_comparison(&mut rng, &design, clustered, runs);
                    test += usize::from(p < 0.05);
                    pooled += usize::from(pm < 0.05);
                }
                let (rt, rp) = (test as f64 / SIMS as f64, pooled as f64 / SIMS as f64);
                let se = (rt * (1.0 - rt) / SIMS as f64).sqrt();
                let design = if clustered {
                    format!("{questions} questions, 0-3 items per group, cluster-t")
                } else {
                    "demo 25 items, stratified-t".to_string()
                };
                eprintln!(
                    "{design}, {runs} runs, {:.1} items: test rejects {rt:.4} (MC SE {se:.4}), pooled McNemar {rp:.4}",
                    items_seen as f64 / SIMS as f64
                );
                assert!(rt <= bound, "{design}, {runs} runs: {rt} > {bound}");
                // The design is one where the old test fails the bound.
                assert!(rp > bound, "{design}, {runs} runs: McNemar {rp}");
            }
        }
    }
}
