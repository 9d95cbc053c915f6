//! Typed table cells the analyses' tables share: a label as the input spells it, and the
//! line naming the stratum weights. (A scope's design cells are the components' own:
//! `components::variance_view::design`.)

use super::{format_number, Cell, Precision, MISSING, UNDEFINED};

/// A label (an arm, a dataset, a stratum or an allocation name) as the input spells it:
/// text, except that a label which reads as a number (or is `-` or `undefined`) stays
/// [`Cell::Raw`], which text output right-aligns like a number, as these tables always did.
pub fn label(s: &str) -> Cell {
    if s.parse::<f64>().is_ok() || s == MISSING || s == UNDEFINED {
        Cell::Raw(s.to_string())
    } else {
        Cell::text(s)
    }
}

/// The line naming the strata's weights (`weights: d1 0.250000, d2 0.750000`), or nothing
/// when the strata are equally weighted (`weights` empty).
pub fn weights_line<'a>(names: impl IntoIterator<Item = &'a str>, weights: &[f64]) -> String {
    if weights.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = names
        .into_iter()
        .zip(weights)
        .map(|(n, w)| format!("{n} {}", format_number(*w, Precision::Auto)))
        .collect();
    format!("weights: {}\n", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::Table;

    #[test]
    fn labels_align_as_their_text_reads() {
        let mut t = Table::new(&["name", "n"]);
        for name in ["open", "2024", "-"] {
            t.row([label(name), Cell::Count(1)]);
        }
        // Words flush left; a numeric label and `-` flush right, as Raw text always was.
        assert_eq!(t.to_text(), "name  n\nopen  1\n2024  1\n   -  1\n");
        assert_eq!(label("open"), Cell::text("open"));
        assert_eq!(label("2024"), Cell::Raw("2024".into()));
    }
}
