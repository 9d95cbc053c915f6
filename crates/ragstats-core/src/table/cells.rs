//! Typed table cells the analyses' tables share: a label as the input spells it, a
//! scope's design (Q, T, R, or the spread of T and R of an unbalanced scope), and the line
//! naming the stratum weights.

use super::{format_number, Cell, Precision, MISSING, UNDEFINED};
use crate::components::reml::{Shape, Spread};

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

/// A scope's name and its design: Q, T, R for a balanced scope; for an unbalanced one
/// (`shape`) Q and the min/mean/max of T per question and of R per trajectory, as
/// `stats variance` prints them.
pub fn design(
    name: &str,
    questions: usize,
    trajectories: usize,
    reads: usize,
    shape: Option<&Shape>,
) -> Vec<Cell> {
    match shape {
        Some(s) => vec![
            label(name),
            Cell::Count(s.questions as u64),
            spread(&s.trajectories),
            spread(&s.reads),
        ],
        None => vec![
            label(name),
            Cell::Count(questions as u64),
            Cell::Count(trajectories as u64),
            Cell::Count(reads as u64),
        ],
    }
}

/// A count per question or per trajectory: the count when every one has the same, else
/// `min/mean/max` (mean to 2 decimals).
fn spread(x: &Spread) -> Cell {
    if x.min == x.max {
        Cell::Count(x.min as u64)
    } else {
        // A min/mean/max triple is no one number: kept as the text `stats variance` prints.
        Cell::Raw(format!("{}/{:.2}/{}", x.min, x.mean, x.max))
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

    #[test]
    fn an_unbalanced_design_shows_its_spread() {
        let shape = Shape {
            questions: 4,
            trajectories: Spread {
                total: 8,
                min: 2,
                mean: 2.0,
                max: 2,
            },
            reads: Spread {
                total: 20,
                min: 1,
                mean: 2.5,
                max: 4,
            },
        };
        let cells: Vec<String> = design("a", 0, 0, 0, Some(&shape))
            .iter()
            .map(Cell::display)
            .collect();
        assert_eq!(cells, ["a", "4", "2", "1/2.50/4"]);
        assert_eq!(
            design("a", 3, 2, 1, None)[1..],
            [Cell::Count(3), Cell::Count(2), Cell::Count(1)]
        );
    }
}
