//! Costs: prices and the cost-ledger reader ([`ledger`]), tokens and fees with the unit
//! costs c_T and c_R ([`cost`]), and per-question costs of a panel's cells ([`panel_costs`]).

pub mod cost;
pub mod ledger;
pub mod panel_costs;
