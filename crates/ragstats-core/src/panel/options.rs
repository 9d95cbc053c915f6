//! How to read a panel ([`LoadOptions`]), shared by every loader.

use std::path::Path;

use super::selectors::SelectorChoice;
use crate::io::{clip, clip_list};
use crate::{Error, Result};

/// How to read a panel.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// Score column; default `f1` if present, else the only non-key column.
    pub metric: Option<String>,
    /// `B-A`: the outcome is score(B) − score(A), paired on (dataset, question, trajectory, read).
    pub contrast: Option<String>,
    /// Keep only this arm (when the panel has several and no contrast is asked for).
    pub arm: Option<String>,
    /// The column whose values are the arms (`stats compare --by COLUMN`, e.g. `model` or
    /// `selector`): `contrast` and `arm` then name its values, and the cells are paired on
    /// (dataset, question, trajectory, read) as arms are. `None` (or `arm`): the `arm`
    /// column. It cannot be a pairing key (`dataset`, `question`, `trajectory`, `read`) or
    /// the score column; with `selector`, the panel has no selectors left to choose or
    /// average. A panel whose own `arm` column has several values needs `within_arm`.
    pub arm_column: Option<String>,
    /// With `arm_column`: keep only the rows whose `arm` column has this value (required
    /// when that column has several values, so that the systems are compared within one
    /// arm rather than pooled over arms).
    pub within_arm: Option<String>,
    /// Drop questions that differ from their stratum's design (missing, extra or unpaired
    /// cells) so every stratum is balanced; each dropped question is listed in the stratum.
    pub drop_incomplete: bool,
    /// Keep an unbalanced stratum nested (for REML) instead of refusing it; its notes name
    /// the questions that differ. Ignored with `drop_incomplete`.
    pub allow_unbalanced: bool,
    /// Keep only rows whose column (first) has this value (second), e.g. one temperature.
    pub filter: Option<(String, String)>,
    /// One selector's rows, or their mean per cell; `None`: the mean when the panel has
    /// several selectors (see [`SelectorChoice`]).
    pub selector: Option<SelectorChoice>,
    /// With a contrast: score a cell's missing arm as this value (the reader never
    /// answered) instead of dropping the cell. `None`: a cell present in one arm only is
    /// dropped (the stratum is then unbalanced), or with `drop_incomplete` its question.
    pub failure_score: Option<f64>,
    /// The file's columns that play the panel's roles (see [`ColumnMap`]).
    pub columns: ColumnMap,
    /// What to do with several rows for one cell.
    pub duplicates: Duplicates,
    /// Keep, in each stratum, only the questions every arm has a row for (each arm's
    /// dropped count is noted), so that arms with different question pools are compared
    /// on the questions they share.
    pub common_questions: bool,
    /// Every arm must have every question of each stratum (`compare`): arms lacking some
    /// are listed (with counts and examples) when the rows are read, before any outcome is
    /// assembled. Ignored with `common_questions`, which keeps the shared questions instead.
    pub same_questions: bool,
    /// Keep only the rows of these arms (`compare --arms`), before anything else is checked:
    /// the other arms' duplicates and missing questions are then not the panel's problem.
    /// Empty: every arm.
    pub keep_arms: Vec<String>,
    /// The column naming each row's cluster (`--cluster COLUMN`): questions are then nested
    /// in clusters within strata, and each stratum carries its question → cluster map
    /// ([`super::Stratum::clusters`]). A question in two clusters, a cluster in two strata
    /// or a row without a cluster is an error. `None`: no clusters (the column, if any, is
    /// ignored).
    pub cluster: Option<String>,
    /// How the strata are weighted when an analysis combines them ([`Panel::weights`]).
    ///
    /// [`Panel::weights`]: super::Panel::weights
    pub weights: Weights,
}

/// Which of a file's columns play the panel's roles (`--columns question=question_id,arm=model`),
/// for third-party tables with their own column names. A column is renamed to its role when
/// the rows are read, so every rule after that (score choice, pairing, errors) sees the role.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ColumnMap {
    /// (role, the file's column), in the order given.
    pairs: Vec<(String, String)>,
}

impl ColumnMap {
    /// The roles a column can be given.
    pub const ROLES: [&'static str; 6] = [
        "question",
        "arm",
        "dataset",
        "trajectory",
        "read",
        "cluster",
    ];

    /// A map of (role, column) pairs.
    ///
    /// # Errors
    /// [`Error::Setting`] (`columns`) for a role not in [`ColumnMap::ROLES`], a role or a
    /// column given twice, or an empty name.
    pub fn new<R: Into<String>, C: Into<String>>(
        pairs: impl IntoIterator<Item = (R, C)>,
    ) -> Result<Self> {
        let mut map = ColumnMap::default();
        for (role, column) in pairs {
            let (role, column) = (role.into(), column.into());
            let (role, column) = (role.trim().to_string(), column.trim().to_string());
            if !Self::ROLES.contains(&role.as_str()) {
                return Err(Error::setting(
                    "columns",
                    format!(
                        "unknown role '{}'; the roles are: {}",
                        clip(&role),
                        Self::ROLES.join(", ")
                    ),
                ));
            }
            if column.is_empty() {
                return Err(Error::setting(
                    "columns",
                    format!("the role {role} is given no column; expected {role}=COLUMN"),
                ));
            }
            if map.pairs.iter().any(|(r, _)| *r == role) {
                return Err(Error::setting(
                    "columns",
                    format!("role '{role}' given twice"),
                ));
            }
            if let Some((r, _)) = map.pairs.iter().find(|(_, c)| *c == column) {
                return Err(Error::setting(
                    "columns",
                    format!("column '{}' given for both {r} and {role}", clip(&column)),
                ));
            }
            map.pairs.push((role, column));
        }
        Ok(map)
    }

    /// Whether no column is renamed.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// The (role, column) pairs in the order given.
    pub fn pairs(&self) -> &[(String, String)] {
        &self.pairs
    }

    /// The file's column that plays `role`: the one mapped to it, else the column named
    /// like the role.
    pub fn column_of<'a>(&'a self, role: &'a str) -> &'a str {
        self.pairs
            .iter()
            .find(|(r, _)| r == role)
            .map_or(role, |(_, c)| c.as_str())
    }

    /// The role the file's column `column` is mapped to, if any.
    pub fn role_of(&self, column: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(_, c)| c == column)
            .map(|(r, _)| r.as_str())
    }

    /// `header` with each mapped column renamed to its role. `what` says "column" or
    /// "field" in errors, which name `path` and `line` (the header's).
    ///
    /// # Errors
    /// [`Error::Input`] for a mapped column the header lacks (listing the ones it has), or a
    /// column already named like a role it is not the source of (two columns would then
    /// play one role).
    pub fn rename(
        &self,
        path: &Path,
        line: Option<u64>,
        header: &[String],
        what: &str,
    ) -> Result<Vec<String>> {
        let mut out = header.to_vec();
        for (role, column) in &self.pairs {
            let Some(at) = header.iter().position(|h| h == column) else {
                return Err(Error::input(
                    path,
                    line,
                    format!(
                        "no {what} '{}' for the role {role}; the {what}s are: {}",
                        clip(column),
                        clip_list(header)
                    ),
                ));
            };
            if let Some(other) = header.iter().position(|h| h == role) {
                if !self.pairs.iter().any(|(_, c)| *c == header[other]) {
                    return Err(Error::input(
                        path,
                        line,
                        format!(
                            "the {what} '{}' is mapped to the role {role}, but the panel \
                             also has a {what} named '{role}'; map it to another role or rename it",
                            clip(column)
                        ),
                    ));
                }
            }
            out[at] = role.clone();
        }
        Ok(out)
    }
}

impl std::str::FromStr for ColumnMap {
    type Err = String;

    /// `role=column,role=column`.
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let pairs = s
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .map(|p| {
                p.split_once('=').ok_or_else(|| {
                    format!(
                        "'{}': expected ROLE=COLUMN, e.g. question=question_id",
                        clip(p)
                    )
                })
            })
            .collect::<std::result::Result<Vec<_>, _>>()?;
        ColumnMap::new(pairs).map_err(Error::into_detail)
    }
}

/// A column map as text (`question=question_id,arm=model`) or as a map from role to column
/// (a Python dict): the same roles and checks either way.
impl<'de> serde::Deserialize<'de> for ColumnMap {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Form {
            Text(String),
            Map(serde_json::Map<String, serde_json::Value>),
        }
        let pairs = match Form::deserialize(d)? {
            Form::Text(t) => return t.parse().map_err(serde::de::Error::custom),
            Form::Map(m) => m
                .into_iter()
                .map(|(role, column)| match column {
                    serde_json::Value::String(c) => Ok((role, c)),
                    other => Err(serde::de::Error::custom(format!(
                        "the column of role '{}' is {other}; expected a column name",
                        clip(&role)
                    ))),
                })
                .collect::<std::result::Result<Vec<_>, D::Error>>()?,
        };
        ColumnMap::new(pairs).map_err(|e| serde::de::Error::custom(e.into_detail()))
    }
}

/// How strata are weighted when combined: estimate Σ_d w_d·ȳ_d with Σ w_d = 1.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Weights {
    /// w_d = 1/D (the default).
    #[default]
    Equal,
    /// w_d = Q_d / Σ Q: proportional to each stratum's questions (the pooled mean over
    /// questions).
    Size,
    /// Given per dataset (normalised to sum 1): every stratum must have one, and every
    /// dataset named must be a stratum of the panel. `source` names where they came from.
    Given {
        source: String,
        weights: Vec<(String, f64)>,
    },
}

/// The strata's combined mean: Σ_d w_d·ȳ_d with resolved `weights` ([`super::Panel::weights`]),
/// or with equal weights (`weights` empty) Σ_d ȳ_d / D, summed then divided, so equal
/// weights give the same bits as before weights existed. Host arithmetic on a replicate's
/// stratum means, the same whichever backend drew it.
pub fn combine_strata(means: impl ExactSizeIterator<Item = f64>, weights: &[f64]) -> f64 {
    if weights.is_empty() {
        let d = means.len() as f64;
        means.sum::<f64>() / d
    } else {
        means.zip(weights).map(|(m, w)| w * m).sum()
    }
}

impl Weights {
    /// The value of `--weights` that asks for these weights: `size`, or the file they were
    /// read from; `None` for equal weights (the default, no flag).
    pub fn as_flag(&self) -> Option<&str> {
        match self {
            Weights::Equal => None,
            Weights::Size => Some("size"),
            Weights::Given { source, .. } => Some(source),
        }
    }

    /// Reads a weights file: CSV with columns `dataset,weight`, one row per dataset.
    ///
    /// # Errors
    /// [`Error::Input`] naming the file and line for a missing column, a dataset given
    /// twice, or a weight that is not a finite number ≥ 0; [`Error::Io`] when unreadable.
    pub fn read(path: &Path) -> Result<Weights> {
        let mut rdr = crate::io::CsvReader::open(path)?;
        let d = rdr.require("dataset", "strata weights: ")?;
        let w = rdr.require("weight", "strata weights: ")?;
        let mut weights: Vec<(String, f64)> = Vec::new();
        while let Some((line, rec)) = rdr.next_record()? {
            let name = rec.get(d).unwrap_or("").to_string();
            let text = rec.get(w).unwrap_or("");
            let v: f64 = text.parse().map_err(|_| {
                Error::input(
                    path,
                    Some(line),
                    format!("weight '{}' is not a number", clip(text)),
                )
            })?;
            if !v.is_finite() || v < 0.0 {
                return Err(Error::input(
                    path,
                    Some(line),
                    format!(
                        "weight {v} for '{}'; expected a finite number ≥ 0",
                        clip(&name)
                    ),
                ));
            }
            if weights.iter().any(|(n, _)| *n == name) {
                return Err(Error::input(
                    path,
                    Some(line),
                    format!("dataset '{}' is given twice", clip(&name)),
                ));
            }
            weights.push((name, v));
        }
        Ok(Weights::Given {
            source: path.display().to_string(),
            weights,
        })
    }

    /// The weight of each stratum (named `names`, with `questions` questions each),
    /// normalised to sum 1; empty for [`Weights::Equal`] (analyses then divide by D, as
    /// they always have, to the last bit).
    ///
    /// # Errors
    /// [`Error::Input`] naming `path` for a stratum the weights lack or a weight for a
    /// dataset the panel lacks (each listed), or weights summing to 0.
    pub fn resolve(&self, path: &Path, names: &[&str], questions: &[usize]) -> Result<Vec<f64>> {
        let raw: Vec<f64> = match self {
            Weights::Equal => return Ok(Vec::new()),
            Weights::Size => questions.iter().map(|&q| q as f64).collect(),
            Weights::Given { source, weights } => {
                let lacking: Vec<&str> = names
                    .iter()
                    .copied()
                    .filter(|n| !weights.iter().any(|(d, _)| d == n))
                    .collect();
                if !lacking.is_empty() {
                    return Err(Error::input(
                        path,
                        None,
                        format!(
                            "the strata weights ({source}) give no weight for stratum {}; every dataset of the panel needs one",
                            clip_list(lacking.iter().map(|n| format!("'{n}'")))
                        ),
                    ));
                }
                let extra: Vec<&str> = weights
                    .iter()
                    .map(|(d, _)| d.as_str())
                    .filter(|d| !names.contains(d))
                    .collect();
                if !extra.is_empty() {
                    // A weight the panel cannot use would silently change what the others
                    // mean once normalised (a typo, or a dataset filtered away).
                    return Err(Error::input(
                        path,
                        None,
                        format!(
                            "the strata weights ({source}): the panel has no dataset {} (its datasets: {})",
                            clip_list(extra.iter().map(|n| format!("'{n}'"))),
                            clip_list(names)
                        ),
                    ));
                }
                names
                    .iter()
                    .map(|n| {
                        weights
                            .iter()
                            .find(|(d, _)| d == n)
                            .map(|w| w.1)
                            .expect("checked above")
                    })
                    .collect()
            }
        };
        let total: f64 = raw.iter().sum();
        if total <= 0.0 {
            return Err(Error::input(path, None, "the strata's weights sum to 0"));
        }
        Ok(raw.iter().map(|w| w / total).collect())
    }
}

impl std::str::FromStr for Weights {
    type Err = String;
    /// `size`, `equal`, or a path to a `dataset,weight` CSV file (read when loading).
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "size" => Ok(Weights::Size),
            "equal" => Ok(Weights::Equal),
            path => Weights::read(Path::new(path)).map_err(|e| e.to_string()),
        }
    }
}

/// Weights as text (`size`, `equal`, a `dataset,weight` CSV file) or as a map from
/// dataset to weight (a Python dict; checked as a file's rows are, normalised when loading).
impl<'de> serde::Deserialize<'de> for Weights {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Form {
            Text(String),
            Map(serde_json::Map<String, serde_json::Value>),
        }
        match Form::deserialize(d)? {
            Form::Text(t) => t.parse().map_err(serde::de::Error::custom),
            Form::Map(m) => {
                let mut weights = Vec::new();
                for (name, v) in m {
                    match v.as_f64() {
                        Some(w) if w.is_finite() && w >= 0.0 => weights.push((name, w)),
                        _ => {
                            return Err(serde::de::Error::custom(format!(
                                "weight {v} for '{}'; expected a finite number ≥ 0",
                                clip(&name)
                            )))
                        }
                    }
                }
                Ok(Weights::Given {
                    source: "the weights given".into(),
                    weights,
                })
            }
        }
    }
}

/// What to do with several rows for one cell (same dataset, question, trajectory, read, arm
/// and selector).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Duplicates {
    /// Refuse the panel, listing the duplicate rows (the default: a duplicate usually means
    /// a file was concatenated twice or a key column is missing).
    #[default]
    Error,
    /// The cell's outcome is the mean of its rows.
    Mean,
    /// The cell's outcome is its first row's (in file order).
    First,
}

impl std::str::FromStr for Duplicates {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "error" => Ok(Duplicates::Error),
            "mean" => Ok(Duplicates::Mean),
            "first" => Ok(Duplicates::First),
            _ => Err(format!("'{}': expected error, mean or first", clip(s))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_maps_parse_roles_and_rename_headers() {
        let m: ColumnMap = "question=question_id, arm=model,dataset=task"
            .parse()
            .unwrap();
        assert_eq!(
            m.pairs(),
            [
                ("question".to_string(), "question_id".to_string()),
                ("arm".into(), "model".into()),
                ("dataset".into(), "task".into())
            ]
        );
        let header: Vec<String> = ["question_id", "task", "model", "score"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            m.rename(Path::new("t.parquet"), None, &header, "column")
                .unwrap(),
            ["question", "dataset", "arm", "score"]
        );
        let e = |s: &str| s.parse::<ColumnMap>().unwrap_err();
        assert_eq!(
            e("model=model"),
            "unknown role 'model'; the roles are: question, arm, dataset, trajectory, read, cluster"
        );
        assert_eq!(e("arm=a,arm=b"), "role 'arm' given twice");
        assert_eq!(
            e("arm=m,dataset=m"),
            "column 'm' given for both arm and dataset"
        );
        assert_eq!(
            e("arm="),
            "the role arm is given no column; expected arm=COLUMN"
        );
        // A column already named like the role would play it twice.
        let header: Vec<String> = ["question", "qid", "f1"].map(String::from).to_vec();
        let m: ColumnMap = "question=qid".parse().unwrap();
        assert_eq!(
            m.rename(Path::new("p.csv"), Some(1), &header, "column")
                .unwrap_err()
                .to_string(),
            "p.csv:1: the column 'qid' is mapped to the role question, but the panel also has a \
             column named 'question'; map it to another role or rename it"
        );
        // ... unless that column is itself mapped to another role.
        let m: ColumnMap = "question=qid,arm=question".parse().unwrap();
        assert_eq!(
            m.rename(Path::new("p.csv"), Some(1), &header, "column")
                .unwrap(),
            ["arm", "question", "f1"]
        );
        assert_eq!("mean".parse(), Ok(Duplicates::Mean));
        assert!("avg"
            .parse::<Duplicates>()
            .unwrap_err()
            .contains("error, mean or first"));
    }
}
