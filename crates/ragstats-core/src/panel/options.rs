//! How to read a panel ([`LoadOptions`]), shared by every loader.

use super::selectors::SelectorChoice;

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
}
