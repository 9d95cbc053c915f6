//! The slice report's view (`stats slice`): its summary line; the CSV is one row per
//! stratum with the questions kept.

use super::slice_report::SliceReport;
use crate::table::{Cell, Table, ToView, View};

impl ToView for SliceReport {
    fn to_view(&self) -> View {
        let mut t = Table::new(&["stratum", "questions"]);
        for s in &self.strata {
            t.row([Cell::text(&s.name), Cell::Count(s.questions as u64)]);
        }
        let mut v = View::new(t);
        v.text(format!("{}\n", self.summary()));
        v
    }
}
