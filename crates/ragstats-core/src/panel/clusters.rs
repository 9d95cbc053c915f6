//! Questions nested in clusters (`--cluster COLUMN`): several questions drawn from one
//! article, document or trajectory are not independent, so the analyses treat the cluster
//! as the unit sampled ([`Clusters`]). Reading checks the nesting ([`check_nesting`]) and
//! assembling gives each stratum its question → cluster map ([`stratum_clusters`]).

use std::collections::HashMap;
use std::path::Path;

use super::raw::{RawPanel, NO_CLUSTER};
use crate::{Error, Result};

/// A stratum's clusters: which cluster each of its questions belongs to.
///
/// Clusters are numbered `0..G` in order of first appearance among the stratum's questions
/// (its question order, which is the file's), so cluster `g`'s questions are those `q` with
/// `of_question[q] == g`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Clusters {
    /// The cluster names (the cluster column's values), index `g`.
    pub names: Vec<String>,
    /// The cluster index of each question of the stratum, in its question order.
    pub of_question: Vec<u32>,
}

impl Clusters {
    /// The clusters of questions given each question's cluster name, numbered in order of
    /// first appearance.
    pub fn from_names<S: AsRef<str>>(question_clusters: &[S]) -> Clusters {
        let mut index: HashMap<&str, u32> = HashMap::new();
        let mut c = Clusters::default();
        for name in question_clusters {
            let name = name.as_ref();
            let g = *index.entry(name).or_insert_with(|| {
                c.names.push(name.to_string());
                (c.names.len() - 1) as u32
            });
            c.of_question.push(g);
        }
        c
    }

    /// Balanced clusters of `m` questions each: question `q` is in cluster `q / m` (named
    /// `c1`, `c2`, …), for panels built in code.
    pub fn even(questions: usize, m: usize) -> Clusters {
        let m = m.max(1);
        Clusters {
            names: (0..questions.div_ceil(m))
                .map(|g| format!("c{}", g + 1))
                .collect(),
            of_question: (0..questions).map(|q| (q / m) as u32).collect(),
        }
    }

    /// The number of clusters G.
    pub fn g(&self) -> usize {
        self.names.len()
    }

    /// The questions of each cluster, in question order.
    pub fn members(&self) -> Vec<Vec<usize>> {
        let mut m = vec![Vec::new(); self.g()];
        for (q, &g) in self.of_question.iter().enumerate() {
            m[g as usize].push(q);
        }
        m
    }

    /// The number of questions M_g of each cluster.
    pub fn sizes(&self) -> Vec<usize> {
        let mut n = vec![0; self.g()];
        for &g in &self.of_question {
            n[g as usize] += 1;
        }
        n
    }

    /// M when every cluster has M questions; `None` when their sizes differ.
    pub fn common_size(&self) -> Option<usize> {
        let sizes = self.sizes();
        let first = *sizes.first()?;
        sizes.iter().all(|&m| m == first).then_some(first)
    }

    /// These clusters restricted to the questions `keep` (indices into this stratum's
    /// questions, in their new order): clusters left without a question are dropped and the
    /// rest renumbered in order of first appearance.
    pub fn select(&self, keep: &[usize]) -> Clusters {
        let names: Vec<&str> = keep
            .iter()
            .map(|&q| self.names[self.of_question[q] as usize].as_str())
            .collect();
        Clusters::from_names(&names)
    }
}

/// Checks that the rows of `raw` (read from `path`) nest questions in clusters and
/// clusters in strata; nothing to check without a cluster column.
///
/// # Errors
/// [`Error::Input`] naming the line of the first row (in file order) that puts a question
/// in a second cluster (naming the question and both clusters, with the line of the
/// first), or a cluster in a second stratum (naming the cluster and both strata).
pub(super) fn check_nesting(path: &Path, raw: &RawPanel) -> Result<()> {
    if raw.clusters.is_empty() {
        return Ok(());
    }
    let mut rows: Vec<&super::raw::RawRow> = raw.rows.iter().collect();
    rows.sort_by_key(|r| r.line);
    let mut question: HashMap<(u32, u32), (u32, u32)> = HashMap::new();
    let mut stratum: HashMap<u32, (u32, u32)> = HashMap::new();
    for r in rows {
        if r.cluster == NO_CLUSTER {
            continue;
        }
        let (c, first_line) = *question
            .entry((r.dataset, r.question))
            .or_insert((r.cluster, r.line));
        if c != r.cluster {
            let within = if raw.has_dataset {
                format!(" of dataset '{}'", raw.datasets.echo(r.dataset))
            } else {
                String::new()
            };
            return Err(Error::input(
                path,
                Some(u64::from(r.line)),
                format!(
                    "question '{}'{within} is in two clusters: '{}' (line {first_line}) and \
                     '{}'; a question belongs to one cluster",
                    raw.questions.echo(r.question),
                    raw.clusters.echo(c),
                    raw.clusters.echo(r.cluster),
                ),
            ));
        }
        let (d, first_line) = *stratum.entry(r.cluster).or_insert((r.dataset, r.line));
        if d != r.dataset {
            return Err(Error::input(
                path,
                Some(u64::from(r.line)),
                format!(
                    "cluster '{}' spans two strata: '{}' (line {first_line}) and '{}'; \
                     clusters are nested in strata (name the clusters of different \
                     datasets apart)",
                    raw.clusters.echo(r.cluster),
                    raw.datasets.echo(d),
                    raw.datasets.echo(r.dataset),
                ),
            ));
        }
    }
    Ok(())
}

/// The clusters of the stratum `dataset` whose questions are `questions` (names), from
/// the rows of `raw`; `None` without a cluster column. Every question has a cluster (each
/// of its rows does, and [`check_nesting`] checked they agree).
pub(super) fn stratum_clusters(
    raw: &RawPanel,
    of: &HashMap<(u32, u32), u32>,
    dataset: &str,
    questions: &[String],
) -> Option<Clusters> {
    if raw.clusters.is_empty() {
        return None;
    }
    let d = raw.datasets.get(dataset)?;
    let names: Vec<&str> = questions
        .iter()
        .map(|q| {
            raw.questions
                .get(q)
                .and_then(|id| of.get(&(d, id)))
                .map_or("", |&c| raw.clusters.name(c))
        })
        .collect();
    Some(Clusters::from_names(&names))
}

/// Each (dataset, question)'s cluster id in `raw`'s rows (empty without a cluster column).
pub(super) fn question_clusters(raw: &RawPanel) -> HashMap<(u32, u32), u32> {
    raw.rows
        .iter()
        .filter(|r| r.cluster != NO_CLUSTER)
        .map(|r| ((r.dataset, r.question), r.cluster))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::panel::{load_panel, LoadOptions};

    fn load(name: &str, text: &str, cluster: Option<&str>) -> Result<crate::panel::Panel> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let opts = LoadOptions {
            cluster: cluster.map(str::to_string),
            allow_unbalanced: true,
            ..Default::default()
        };
        load_panel(&path, &opts).map_err(|e| match e {
            Error::Input { line, msg, .. } => Error::Input {
                file: name.into(),
                line,
                msg,
            },
            e => e,
        })
    }

    const PANEL: &str = "dataset,question,trajectory,read,article,f1\n\
                         d1,q1,1,1,A,1\nd1,q1,1,2,A,0\n\
                         d1,q2,1,1,B,1\nd1,q2,1,2,B,1\n\
                         d1,q3,1,1,A,0\nd1,q3,1,2,A,0\n\
                         d2,q1,1,1,C,1\nd2,q1,1,2,C,1\n";

    #[test]
    fn each_stratum_maps_its_questions_to_clusters_in_order_of_first_appearance() {
        for (name, text) in [("p.csv", PANEL.to_string()), ("p.jsonl", to_jsonl(PANEL))] {
            let p = load(name, &text, Some("article")).unwrap();
            assert!(p.is_clustered(), "{name}");
            // `article` is a key, not a second score candidate.
            assert_eq!(p.metric, "f1");
            let c = p.strata[0].clusters.as_ref().unwrap();
            assert_eq!(c.names, ["A", "B"]);
            assert_eq!(c.of_question, [0, 1, 0]);
            assert_eq!(c.members(), [vec![0, 2], vec![1]]);
            assert_eq!((c.sizes(), c.common_size()), (vec![2, 1], None));
            let c = p.strata[1].clusters.as_ref().unwrap();
            assert_eq!(
                (c.names.as_slice(), c.of_question.as_slice()),
                (&["C".to_string()][..], &[0u32][..])
            );
            // Without a cluster column asked for, nothing changes.
            let p = load(name, &text, None).unwrap();
            assert!(!p.is_clustered() && p.strata[0].clusters.is_none());
            assert!(p.notes.is_empty());
            // A column named `cluster` left unused is noted, with what ignoring it costs.
            let named = text.replace("article", "cluster");
            let p = load(name, &named, None).unwrap();
            assert_eq!(p.notes.len(), 1, "{name}");
            assert!(p.notes[0].starts_with("the panel has a 'cluster' column, which is not used"));
            assert!(p.notes[0].contains("0.842–0.899"));
            assert!(load(name, &named, Some("cluster"))
                .unwrap()
                .notes
                .is_empty());
        }
    }

    /// The CSV panel `text` as JSON lines, every field a string.
    fn to_jsonl(text: &str) -> String {
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        lines
            .map(|l| {
                let fields: serde_json::Map<String, serde_json::Value> = header
                    .iter()
                    .zip(l.split(','))
                    .map(|(h, v)| (h.to_string(), serde_json::Value::String(v.to_string())))
                    .collect();
                serde_json::Value::Object(fields).to_string() + "\n"
            })
            .collect()
    }

    #[test]
    fn questions_in_two_clusters_and_clusters_in_two_strata_are_refused_by_name() {
        let two_clusters = PANEL.replace("d1,q3,1,2,A,0", "d1,q3,1,2,B,0");
        for name in ["p.csv", "p.jsonl"] {
            let text = if name == "p.csv" {
                two_clusters.clone()
            } else {
                to_jsonl(&two_clusters)
            };
            let line = if name == "p.csv" { 7 } else { 6 };
            let e = load(name, &text, Some("article")).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "{name}:{line}: question 'q3' of dataset 'd1' is in two clusters: 'A' \
                     (line {}) and 'B'; a question belongs to one cluster",
                    line - 1
                )
            );
        }
        let spanning = PANEL.replace(
            "d2,q1,1,1,C,1\nd2,q1,1,2,C,1",
            "d2,q1,1,1,B,1\nd2,q1,1,2,B,1",
        );
        let e = load("p.csv", &spanning, Some("article")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "p.csv:8: cluster 'B' spans two strata: 'd1' (line 4) and 'd2'; clusters are \
             nested in strata (name the clusters of different datasets apart)"
        );
        let missing = PANEL.replace("d1,q2,1,2,B,1", "d1,q2,1,2,,1");
        let e = load("p.csv", &missing, Some("article")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "p.csv:5: missing cluster: every row needs a value in the cluster column"
        );
        // A JSON line without the field is missing it too.
        let e = load(
            "p.jsonl",
            &to_jsonl(PANEL).replace(r#""article":"A","#, ""),
            Some("article"),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "p.jsonl:1: missing cluster: every row needs a value in the cluster column"
        );
        let e = load("p.csv", PANEL, Some("doc")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "p.csv:1: missing column 'doc' (columns: dataset, question, trajectory, read, \
             article, f1)"
        );
        let e = load("p.csv", PANEL, Some("f1")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("cluster: 'f1' is the score column"),
            "{e}"
        );
    }

    #[test]
    fn clusters_restricted_to_some_questions_are_renumbered() {
        let c = Clusters::from_names(&["x", "y", "x", "z", "y"]);
        assert_eq!(c.of_question, [0, 1, 0, 2, 1]);
        let s = c.select(&[3, 2, 0]);
        assert_eq!(
            (s.names, s.of_question),
            (vec!["z".into(), "x".into()], vec![0, 1, 1])
        );
        let e = Clusters::even(7, 3);
        assert_eq!(e.of_question, [0, 0, 0, 1, 1, 1, 2]);
        assert_eq!(e.sizes(), [3, 3, 1]);
        assert_eq!(Clusters::even(6, 3).common_size(), Some(3));
    }
}
