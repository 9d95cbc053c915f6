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
}
