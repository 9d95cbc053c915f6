//! Costs: tokens and fees of a cost ledger ([`crate::ledger`]) with the unit costs c_T and
//! c_R ([`accounting`]), and per-question costs of a panel's cells ([`panel_costs`]).

pub mod accounting;
pub mod panel_costs;
mod view;
