//! Items from one source treated as a cluster (issue #35, item 4).
//!
//! RAGCap-Bench-style items are built from agent trajectories: one question's trajectory
//! gives an evidence-extraction item per search step, a planning item per step, an abstain
//! and a grounded-reasoning item per packet. Such items are not independent, and intervals
//! that resample them one by one are too narrow. The results files of `mcq run` do not carry
//! provenance; the items file does (`meta.provenance`, written by `stats mcq generate`), so
//! clusters come from `--items`.
//!
//! - [`ClusterBy`]: the rule (`auto`, `question`, `trajectory`, `none`).
//! - [`item_clusters`]: the cluster of every item of an items file under a rule.
//! - [`obuchowski`]: the cluster-adjusted test of two correlated proportions
//!   (Obuchowski 1998), with the exact sign test over clusters where its variance is 0.
//!
//! The cluster bootstrap itself is [`super::score::bootstrap_group_means`] with units: each
//! replicate draws clusters once, jointly across groups.

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::compare::mcnemar_exact;
use super::item::Group;
use super::validate::Loaded;
use crate::error::{Error, Result};

/// Which provenance makes items one cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ClusterBy {
    /// `question` when any item carries provenance, else no clustering (with a note).
    Auto,
    /// Items made from the same source question (`question_id`), over every run, arm and
    /// trajectory of it: the coarsest unit that makes items dependent.
    Question,
    /// Items made from the same trajectory (`run`, `question_id`, `arm`, `trajectory`).
    Trajectory,
    /// Every item is its own unit (the item bootstrap of before).
    None,
}

/// The clusters of an items file under a rule: what the report's `clusters` block says.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Clusters {
    /// The rule in force: `question` or `trajectory`.
    pub rule: &'static str,
    /// The items file the provenance came from.
    pub items_file: String,
    /// Items in the file.
    pub items: usize,
    /// Distinct clusters over the file's items (an item without provenance counts as one).
    pub clusters: usize,
    /// Items without the provenance the rule needs: each is its own cluster.
    pub without_provenance: usize,
    /// Clusters with items in more than one scoring group (the bootstrap draws each whole,
    /// with its items in every group).
    pub spanning_groups: usize,
    /// Largest number of items in one cluster.
    pub largest: usize,
    /// What the reader should know about these clusters.
    pub notes: Vec<String>,
    /// Item id → cluster key.
    #[serde(skip)]
    key: HashMap<String, String>,
}

impl Clusters {
    /// The cluster key of item `id` (an id without a cluster is its own).
    pub fn key<'a>(&'a self, id: &'a str) -> &'a str {
        self.key.get(id).map_or(id, String::as_str)
    }

    /// These clusters with `notes` added after their own (what one bootstrap of them found,
    /// [`super::score::GroupReplicates::notes`]; an `Option` is a list of 0 or 1).
    pub fn with_notes(&self, notes: impl IntoIterator<Item = String>) -> Clusters {
        let mut c = self.clone();
        c.notes.extend(notes);
        c
    }

    /// Dense cluster indices of `ids`, numbered in order of first appearance.
    pub fn indices<'a>(&self, ids: impl IntoIterator<Item = &'a str>) -> Vec<usize> {
        let mut seen: HashMap<&str, usize> = HashMap::new();
        ids.into_iter()
            .map(|id| {
                let k = self.key(id);
                let n = seen.len();
                *seen.entry(k).or_insert(n)
            })
            .collect()
    }
}

/// A provenance value as a key part: a string, or an integer written in decimal.
fn part(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) if n.is_u64() || n.is_i64() => Some(n.to_string()),
        _ => None,
    }
}

/// The cluster key of one item's `meta`, or `None` without provenance.
///
/// Provenance is `meta.provenance.source` (what `stats mcq generate` writes) or, for
/// hand-made files, `meta.provenance` itself; its `question_id` (and for `trajectory` its
/// `run`, `arm` and `trajectory`) are strings or integers.
fn key_of(meta: Option<&Value>, rule: ClusterBy) -> std::result::Result<Option<String>, String> {
    let Some(p) = meta.and_then(|m| m.get("provenance")) else {
        return Ok(None);
    };
    if p.is_null() {
        return Ok(None);
    }
    let Value::Object(po) = p else {
        return Err(format!(
            "meta.provenance is {}; expected an object with `source` (as `stats mcq generate` writes) or `question_id`",
            kind(p)
        ));
    };
    let (src, at) = match po.get("source") {
        Some(Value::Object(s)) => (s, "meta.provenance.source"),
        Some(v) if !v.is_null() => {
            return Err(format!(
                "meta.provenance.source is {}; expected an object with `question_id`",
                kind(v)
            ))
        }
        _ => (po, "meta.provenance"),
    };
    let field = |name: &str| -> std::result::Result<Option<String>, String> {
        match src.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => part(v).map(Some).ok_or_else(|| {
                format!(
                    "{at}.{name} is {}; expected a string or an integer",
                    kind(v)
                )
            }),
        }
    };
    let q = field("question_id")?;
    match rule {
        ClusterBy::Question | ClusterBy::Auto => Ok(q.map(|q| format!("question {q}"))),
        ClusterBy::Trajectory => {
            let (run, arm, t) = (field("run")?, field("arm")?, field("trajectory")?);
            Ok(match (q, t) {
                (Some(q), Some(t)) => Some(format!(
                    "trajectory {}/{q}/{}/{t}",
                    run.unwrap_or_default(),
                    arm.unwrap_or_default()
                )),
                _ => None,
            })
        }
        ClusterBy::None => Ok(None),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The clusters of the items of `file` under `by`; `None` when the rule is `none`, or
/// `auto` and no item carries provenance.
///
/// # Errors
/// [`Error::Input`] naming `file` and the line of an item whose `meta.provenance` (or its
/// `source`, `question_id`, `run`, `arm`, `trajectory`) has the wrong type.
pub fn item_clusters(file: &Path, items: &[Loaded], by: ClusterBy) -> Result<Option<Clusters>> {
    if by == ClusterBy::None {
        return Ok(None);
    }
    let mut key = HashMap::new();
    let mut groups: HashMap<String, Vec<Group>> = HashMap::new();
    let mut sizes: HashMap<String, usize> = HashMap::new();
    let mut without = 0usize;
    for l in items {
        let k = key_of(l.item.meta.as_ref(), by)
            .map_err(|m| Error::input(file, Some(l.line), format!("item {:?}: {m}", l.item.id)))?;
        let k = match k {
            Some(k) => k,
            None => {
                without += 1;
                format!("item {}", l.item.id)
            }
        };
        let g = groups.entry(k.clone()).or_default();
        if !g.contains(&l.item.group()) {
            g.push(l.item.group());
        }
        *sizes.entry(k.clone()).or_default() += 1;
        key.insert(l.item.id.clone(), k);
    }
    if by == ClusterBy::Auto && without == items.len() {
        return Ok(None);
    }
    let rule = if by == ClusterBy::Trajectory {
        "trajectory"
    } else {
        "question"
    };
    let spanning = groups.values().filter(|g| g.len() > 1).count();
    let mut notes = Vec::new();
    if without > 0 {
        notes.push(format!(
            "{without} of {} item(s) carry no {rule} provenance; each is its own cluster",
            items.len()
        ));
    }
    Ok(Some(Clusters {
        rule,
        items_file: file.display().to_string(),
        items: items.len(),
        clusters: sizes.len(),
        without_provenance: without,
        spanning_groups: spanning,
        largest: sizes.values().copied().max().unwrap_or(0),
        notes,
        key,
    }))
}

/// Fewer clusters than this and Obuchowski's χ²(1) reference is not trusted: its variance
/// is estimated from the clusters, and with 2 clusters 1 A-only against 6 B-only pairs gave
/// X² = 25, p = 6e-7. The exact sign test over clusters decides instead.
pub const MIN_CLUSTERS_CHI2: usize = 20;

/// The cluster-adjusted test of one McNemar row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClusterTest {
    /// The test whose p decides: `obuchowski`, or `cluster-sign` (the exact sign test over
    /// clusters) with fewer than [`MIN_CLUSTERS_CHI2`] clusters or where Obuchowski's
    /// variance estimate is 0.
    pub cluster_test: &'static str,
    /// Clusters with a pair in this row.
    pub clusters: usize,
    /// Obuchowski's X² (1 degree of freedom); absent where its variance is 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chi2: Option<f64>,
    /// Obuchowski's p on χ²(1), whether or not it decides; absent with `chi2`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub obuchowski_p: Option<f64>,
    /// The p-value of `cluster_test`: the one that decides (and that Holm and BH adjust).
    pub cluster_p: f64,
}

/// Obuchowski's (1998) test of two correlated proportions from clustered data. Per cluster
/// i of I: n_i pairs, x_i pairs right under A, y_i under B; N = Σ n_i, p̂_A = Σ x_i / N,
/// p̂_B = Σ y_i / N,
///
/// - var(p̂_A) = I / (I − 1) · Σ (x_i − n_i p̂_A)² / N², likewise for B,
/// - cov = I / (I − 1) · Σ (x_i − n_i p̂_A)(y_i − n_i p̂_B) / N²,
/// - X² = (p̂_A − p̂_B)² / (var_A + var_B − 2 cov), referred to χ²(1): p = erfc(√(X²/2)).
///
/// Where the denominator is 0 (one cluster, or every cluster has the same share of
/// A-only minus B-only pairs, e.g. every discordant pair one way) X² is undefined, and with
/// fewer than [`MIN_CLUSTERS_CHI2`] clusters its χ² reference is too optimistic; the test
/// that decides is then the exact sign test over clusters: clusters with more A-only than
/// B-only pairs against the reverse ([`mcnemar_exact`] on those counts; p = 1 when no
/// cluster leans). `cells` are (n_i, x_i, y_i).
pub fn obuchowski(cells: &[(f64, f64, f64)]) -> ClusterTest {
    let k = cells.len();
    let n: f64 = cells.iter().map(|c| c.0).sum();
    let (sx, sy): (f64, f64) = cells.iter().fold((0.0, 0.0), |a, c| (a.0 + c.1, a.1 + c.2));
    let (pa, pb) = (sx / n, sy / n);
    // var_A + var_B − 2 cov = I/(I−1) Σ (d_i − n_i (p̂_A − p̂_B))² / N², d_i = x_i − y_i;
    // written per proportion, as the paper has it.
    let (mut va, mut vb, mut cv) = (0.0, 0.0, 0.0);
    for &(ni, xi, yi) in cells {
        let (ea, eb) = (xi - ni * pa, yi - ni * pb);
        va += ea * ea;
        vb += eb * eb;
        cv += ea * eb;
    }
    let den = if k > 1 {
        (k as f64 / (k as f64 - 1.0)) * (va + vb - 2.0 * cv) / (n * n)
    } else {
        0.0
    };
    // Relative to the scale of the terms: an exact 0 can come out as 1e-17.
    let scale = (va + vb).max(f64::MIN_POSITIVE) / (n * n);
    let chi2 = (den > 1e-12 * scale && den > 0.0).then(|| (pa - pb).powi(2) / den);
    let obuchowski_p = chi2.map(|x| libm::erfc((x / 2.0).sqrt()));
    match obuchowski_p {
        Some(p) if k >= MIN_CLUSTERS_CHI2 => ClusterTest {
            cluster_test: "obuchowski",
            clusters: k,
            chi2,
            obuchowski_p,
            cluster_p: p,
        },
        _ => {
            let a_lean = cells.iter().filter(|c| c.1 > c.2).count() as u64;
            let b_lean = cells.iter().filter(|c| c.2 > c.1).count() as u64;
            ClusterTest {
                cluster_test: "cluster-sign",
                clusters: k,
                chi2,
                obuchowski_p,
                cluster_p: mcnemar_exact(a_lean, b_lean),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand-made case of tests/reference/mcq_cluster.py (numpy/scipy; the command and
    /// its output are there): 6 clusters of 1 to 4 pairs.
    #[test]
    fn obuchowski_matches_the_numpy_reference() {
        let cells = [
            (3.0, 3.0, 1.0),
            (2.0, 1.0, 0.0),
            (4.0, 2.0, 2.0),
            (1.0, 1.0, 0.0),
            (3.0, 1.0, 2.0),
            (2.0, 2.0, 0.0),
        ];
        let t = obuchowski(&cells);
        let (chi2, p) = (t.chi2.unwrap(), t.obuchowski_p.unwrap());
        assert!((chi2 - REF_CHI2).abs() < 1e-12 * REF_CHI2, "{chi2}");
        assert!((p - REF_P).abs() < 1e-12 * REF_P, "{p}");
        // 6 clusters are too few for the χ² reference: the sign test over clusters decides.
        // Clusters leaning A: c1, c2, c4, c6; B: c5; c3 ties. 2·(1 + 5)/32 = 0.375.
        assert_eq!((t.cluster_test, t.clusters), ("cluster-sign", 6));
        assert!((t.cluster_p - 0.375).abs() < 1e-15, "{t:?}");
        // The same cells 4 times over (24 clusters): Obuchowski decides. Reference (the
        // script's `x4` line): chi2 = 10.518292682926829, p = 0.0011819863616809355.
        let many: Vec<(f64, f64, f64)> = (0..4).flat_map(|_| cells).collect();
        let t = obuchowski(&many);
        assert_eq!((t.cluster_test, t.clusters), ("obuchowski", 24));
        assert_eq!(Some(t.cluster_p), t.obuchowski_p);
        assert!(
            (t.chi2.unwrap() - 10.518_292_682_926_829).abs() < 1e-11,
            "{t:?}"
        );
        assert!(
            (t.cluster_p - 0.001_181_986_361_680_935_5).abs() < 1e-15,
            "{t:?}"
        );
    }

    // `python tests/reference/mcq_cluster.py` (numpy 2.4.6, scipy 1.17.1):
    // chi2 = 2.2865853658536586, p = 0.13049673824162555.
    const REF_CHI2: f64 = 2.286_585_365_853_658_6;
    const REF_P: f64 = 0.130_496_738_241_625_55;

    #[test]
    fn a_zero_variance_falls_back_to_the_sign_test_over_clusters() {
        // Every pair B-only: every cluster has d_i = −n_i, the variance estimate is 0.
        let t = obuchowski(&[(2.0, 0.0, 2.0), (3.0, 0.0, 3.0), (1.0, 0.0, 1.0)]);
        assert_eq!(
            (t.cluster_test, t.chi2, t.obuchowski_p),
            ("cluster-sign", None, None)
        );
        // 3 clusters lean B, none A: 2 · 1/8.
        assert!((t.cluster_p - 0.25).abs() < 1e-15, "{t:?}");
        // One cluster: undefined variance, sign test on one cluster, p = 1.
        let t = obuchowski(&[(4.0, 1.0, 3.0)]);
        assert_eq!((t.cluster_test, t.cluster_p), ("cluster-sign", 1.0));
        // Nothing discordant: p = 1.
        let t = obuchowski(&[(2.0, 1.0, 1.0), (1.0, 0.0, 0.0)]);
        assert_eq!((t.cluster_test, t.cluster_p), ("cluster-sign", 1.0));
    }
}
