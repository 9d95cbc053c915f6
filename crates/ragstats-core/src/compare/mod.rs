//! Many systems on the same questions: every system's estimate and interval, every pair's
//! paired difference with raw, Holm and Benjamini–Hochberg p-values and simultaneous
//! intervals, rank intervals and best shares ([`analysis`], reported as [`report`]), from the
//! multiplicity adjustments in [`multiplicity`] and the ranks in [`ranks`].

pub mod analysis;
pub mod multiplicity;
pub mod ranks;
pub mod report;
mod view;

pub use analysis::{
    cell_difference, compare, pair_panel, prepare, prepare_panels, CompareJob, NextCosts,
    PreparedComparison,
};
pub use report::CompareReport;
