//! Simulators: synthetic panels with known variance components and matching cost ledgers.
//!
//! * [`model`]: the bounded paired F1/EM model ([`simulate_panel`]) and the Gaussian nested
//!   model with exactly known components ([`simulate_normal_panel`]).
//! * [`synthetic_ledger`]: a cost ledger for a simulated panel ([`simulate_ledger`]), in rows of
//!   [`crate::ledger::LedgerRow`].
//! * [`io`]: CSV / JSONL writers.
//! * [`mod@simulate`]: the one entry point of `stats simulate` ([`simulate()`]): a panel of either
//!   model and its ledger.

pub mod io;
pub mod model;
pub mod simulate;
pub mod synthetic_ledger;

pub use model::{
    check_rows, simulate_normal_panel, simulate_panel, Sds, SimRow, SimSpec, MAX_ROWS,
};
pub use simulate::{
    simulate, GaussianSpec, SimModel, SimulateJob, SimulateReport, Simulation, WrittenFile,
};
pub use synthetic_ledger::{simulate_ledger, LedgerSpec};
