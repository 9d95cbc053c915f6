//! The one output model of every command: a [`Table`] of typed [`Cell`]s, rendered once
//! each as aligned text ([`Table::to_text`]), CSV ([`Table::to_csv`]) and HTML
//! ([`Table::to_html`]). JSON is serde of an analysis's report, not a table.
//!
//! An analysis's whole output is a [`View`] of text lines and named tables (module `view`);
//! [`cells`] holds the cells the analyses' tables share.
//!
//! A cell knows what it holds, so each renderer shows it its own way: a number is printed
//! with its display precision in text ([`Precision`]) and in its shortest round-trip form in
//! CSV; a value that is not defined is `undefined` in text and an empty CSV cell (never `NaN`
//! or `inf`); an absent one is `-` in text and empty in CSV. [`Cell::Raw`] holds text a
//! command formatted itself, shown as is everywhere (tables move to typed cells one command
//! at a time; text and CSV stay byte-identical meanwhile).

use std::fmt::Write as _;

pub mod cells;
mod view;

pub use view::{keyword, Block, Span, ToView, View};

/// How text output shows an undefined value (JSON writes `null`, CSV an empty cell).
pub const UNDEFINED: &str = "undefined";

/// How text output shows an absent value (a level that is not estimable, an option unset).
pub const MISSING: &str = "-";

/// How many digits a number shows in text and HTML (CSV always writes every digit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Precision {
    /// Six fixed decimals for ordinary magnitudes (0, or 10⁻³ ≤ |v| < 10⁷), else scientific
    /// with four decimals: the default of every analysis table ([`format_number`]).
    #[default]
    Auto,
    /// A fixed number of decimals (`{v:.d$}`).
    Fixed(usize),
    /// Rust's shortest round-trip form, as CSV writes it.
    Shortest,
}

/// One table cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// A number; not finite (0/0, a single replicate's SE) means undefined: `undefined` in
    /// text, an empty CSV cell.
    Num(f64, Precision),
    /// A count: the same digits everywhere.
    Count(u64),
    /// Text (a name, a label).
    Text(String),
    /// A value that is not defined, with the reason when text output should say it:
    /// `undefined` or `undefined (reason)` in text, an empty CSV cell.
    Undefined(Option<String>),
    /// An absent value: `-` in text, an empty CSV cell.
    Missing,
    /// Text a command formatted itself: the same string in text, CSV and HTML. In text it
    /// is right-aligned when it reads as a number (or is `-` or `undefined`).
    Raw(String),
}

impl Cell {
    /// A number with the default precision ([`Precision::Auto`]).
    pub fn num(v: f64) -> Cell {
        Cell::Num(v, Precision::Auto)
    }

    /// A number with `decimals` fixed decimals.
    pub fn fixed(v: f64, decimals: usize) -> Cell {
        Cell::Num(v, Precision::Fixed(decimals))
    }

    /// An optional number: [`Cell::Missing`] when absent.
    pub fn opt_num(v: Option<f64>) -> Cell {
        v.map_or(Cell::Missing, Cell::num)
    }

    /// Text.
    pub fn text(s: impl Into<String>) -> Cell {
        Cell::Text(s.into())
    }

    /// An undefined value with the reason text output shows beside it.
    pub fn undefined_because(reason: impl Into<String>) -> Cell {
        Cell::Undefined(Some(reason.into()))
    }

    /// The cell as aligned text and HTML show it.
    pub fn display(&self) -> String {
        match self {
            Cell::Num(v, p) => format_number(*v, *p),
            Cell::Count(n) => n.to_string(),
            Cell::Text(s) | Cell::Raw(s) => s.clone(),
            Cell::Undefined(None) => UNDEFINED.into(),
            Cell::Undefined(Some(reason)) => format!("{UNDEFINED} ({reason})"),
            Cell::Missing => MISSING.into(),
        }
    }

    /// The cell as CSV writes it: every digit of a number, empty when there is no value.
    pub fn csv(&self) -> String {
        match self {
            Cell::Num(v, _) => format_number(*v, Precision::Shortest),
            Cell::Count(n) => n.to_string(),
            Cell::Text(s) | Cell::Raw(s) => s.clone(),
            Cell::Undefined(_) | Cell::Missing => String::new(),
        }
    }

    /// Whether aligned text puts the cell flush right (numbers and their stand-ins).
    fn right_aligned(&self) -> bool {
        match self {
            Cell::Num(..) | Cell::Count(_) | Cell::Missing | Cell::Undefined(None) => true,
            Cell::Text(_) | Cell::Undefined(Some(_)) => false,
            Cell::Raw(s) => s.parse::<f64>().is_ok() || s == MISSING || s == UNDEFINED,
        }
    }
}

impl From<String> for Cell {
    fn from(s: String) -> Cell {
        Cell::Raw(s)
    }
}

impl From<&str> for Cell {
    fn from(s: &str) -> Cell {
        Cell::Raw(s.to_string())
    }
}

/// A number as text tables print it ([`Precision::Auto`]): fixed 6 decimals for ordinary
/// magnitudes, scientific for tiny ones; a value that is not finite (0/0, a single
/// replicate's SE) is `undefined`, never `NaN` or `inf` (JSON writes `null`).
pub fn number(v: f64) -> String {
    format_number(v, Precision::Auto)
}

/// A confidence level as headers and lines show it: `95%`, `90%`, `99.5%` (as a user writes
/// it, without the float noise of 100 × 0.57 = 56.99999999999999).
pub fn percent(level: f64) -> String {
    format!("{}%", (100.0 * level * 1e6).round() / 1e6)
}

/// `v` with `decimals` decimals as text prints it inside a line (`undefined` when not
/// finite).
pub fn fixed(v: f64, decimals: usize) -> String {
    format_number(v, Precision::Fixed(decimals))
}

/// Formats `v` for display. Not finite: `undefined` (every precision but
/// [`Precision::Shortest`], which gives an empty string, as CSV wants).
pub fn format_number(v: f64, precision: Precision) -> String {
    if !v.is_finite() {
        return match precision {
            Precision::Shortest => String::new(),
            _ => UNDEFINED.into(),
        };
    }
    match precision {
        Precision::Auto if v == 0.0 || (v.abs() >= 1e-3 && v.abs() < 1e7) => format!("{v:.6}"),
        Precision::Auto => format!("{v:.4e}"),
        Precision::Fixed(d) => format!("{v:.d$}"),
        Precision::Shortest => v.to_string(),
    }
}

/// A value of a report, or why it is not defined (an SE from one replicate, a ratio over an
/// SE of 0): the one "value or reason" type of the reports. JSON writes the value, or `null`
/// when undefined (the reason goes where each report has always put it); a table shows the
/// reason through [`Cell::Undefined`].
#[derive(Debug, Clone, PartialEq)]
pub enum Defined<T> {
    /// The value.
    Value(T),
    /// Not defined, and why (text output shows `undefined (reason)`).
    Undefined(String),
}

impl<T> Defined<T> {
    /// `Value(value)` when `reason` is `None`, else `Undefined(reason)`.
    pub fn unless(reason: Option<&str>, value: T) -> Defined<T> {
        match reason {
            Some(why) => Defined::Undefined(why.to_string()),
            None => Defined::Value(value),
        }
    }

    /// The value, if defined.
    pub fn value(&self) -> Option<&T> {
        match self {
            Defined::Value(v) => Some(v),
            Defined::Undefined(_) => None,
        }
    }

    /// Why the value is undefined, if it is.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Defined::Value(_) => None,
            Defined::Undefined(why) => Some(why),
        }
    }

    /// The table cell: `cell(value)`, or [`Cell::Undefined`] with the reason.
    pub fn cell(&self, cell: impl FnOnce(&T) -> Cell) -> Cell {
        match self {
            Defined::Value(v) => cell(v),
            Defined::Undefined(why) => Cell::undefined_because(why.as_str()),
        }
    }

    /// Text output: `text(value)`, or `undefined (reason)` ([`Cell::display`] of the
    /// undefined cell).
    pub fn text(&self, text: impl FnOnce(&T) -> String) -> String {
        match self {
            Defined::Value(v) => text(v),
            Defined::Undefined(why) => Cell::undefined_because(why.as_str()).display(),
        }
    }
}

impl<T: serde::Serialize> serde::Serialize for Defined<T> {
    /// The value as `T` serialises it, or `null` when undefined.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Defined::Value(v) => v.serialize(s),
            Defined::Undefined(_) => s.serialize_none(),
        }
    }
}

/// A table: a header row and rows of cells (a row shorter than the header is padded with
/// nothing; cells past the header are not shown).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// An empty table with these column names.
    pub fn new<S: AsRef<str>>(columns: &[S]) -> Table {
        Table {
            columns: columns.iter().map(|c| c.as_ref().to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row.
    pub fn row(&mut self, cells: impl IntoIterator<Item = impl Into<Cell>>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    /// The table with a leading column `name` holding `value` in every row (how one table
    /// per selector becomes one CSV).
    pub fn with_leading_column(mut self, name: &str, value: &str) -> Table {
        self.columns.insert(0, name.to_string());
        for r in &mut self.rows {
            r.insert(0, Cell::Text(value.to_string()));
        }
        self
    }

    /// Aligned text: columns two spaces apart, each as wide as its widest cell; numbers
    /// right-aligned, text (and the header) left-aligned; trailing spaces trimmed.
    pub fn to_text(&self) -> String {
        let n = self.columns.len();
        let body: Vec<Vec<(String, bool)>> = self
            .rows
            .iter()
            .map(|r| {
                r.iter()
                    .take(n)
                    .map(|c| (c.display(), c.right_aligned()))
                    .collect()
            })
            .collect();
        let header: Vec<(String, bool)> = self.columns.iter().map(|c| (c.clone(), false)).collect();
        let mut width = vec![0; n];
        for r in std::iter::once(&header).chain(&body) {
            for (i, (c, _)) in r.iter().enumerate() {
                width[i] = width[i].max(c.chars().count());
            }
        }
        let mut out = String::new();
        for r in std::iter::once(&header).chain(&body) {
            let cells: Vec<String> = r
                .iter()
                .enumerate()
                .map(|(i, (c, right))| {
                    let pad = " ".repeat(width[i] - c.chars().count());
                    if *right {
                        format!("{pad}{c}")
                    } else {
                        format!("{c}{pad}")
                    }
                })
                .collect();
            out.push_str(cells.join("  ").trim_end());
            out.push('\n');
        }
        out
    }

    /// CSV (RFC 4180 quoting, `\n` line ends), header first.
    pub fn to_csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        let rows = self
            .rows
            .iter()
            .map(|r| r.iter().map(Cell::csv).collect::<Vec<_>>());
        // Writing to a Vec cannot fail, and every record is valid UTF-8 text.
        w.write_record(&self.columns).expect("CSV to memory");
        for r in rows {
            w.write_record(&r).expect("CSV to memory");
        }
        String::from_utf8(w.into_inner().expect("CSV to memory")).expect("CSV of UTF-8 text")
    }

    /// An HTML `<table>`: `<thead>` with the column names, `<tbody>` with the cells as text
    /// output shows them, every string escaped.
    pub fn to_html(&self) -> String {
        let mut t = String::from("<table>\n<thead><tr>");
        for c in &self.columns {
            let _ = write!(t, "<th>{}</th>", escape_xml(c));
        }
        t.push_str("</tr></thead>\n<tbody>\n");
        for r in &self.rows {
            t.push_str("<tr>");
            for c in r {
                let _ = write!(t, "<td>{}</td>", escape_xml(&c.display()));
            }
            t.push_str("</tr>\n");
        }
        t.push_str("</tbody>\n</table>\n");
        t
    }
}

/// Escapes `&`, `<`, `>`, `"` and `'` for HTML and XML text and attributes (the report is
/// well-formed XML, and SVG figures are XML).
pub fn escape_xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn defined_values_render_and_serialise_as_before() {
        let se: Defined<f64> = Defined::unless(None, 0.0125);
        assert_eq!(se.value(), Some(&0.0125));
        assert_eq!(se.reason(), None);
        assert_eq!(se.cell(|v| Cell::num(*v)).display(), "0.012500");
        assert_eq!(se.text(|v| format!("{v:.3}")), "0.013");
        assert_eq!(serde_json::to_string(&se).unwrap(), "0.0125");
        let why = "1 replicate(s): a standard error needs at least 2";
        let none: Defined<f64> = Defined::unless(Some(why), f64::NAN);
        assert_eq!((none.value(), none.reason()), (None, Some(why)));
        let cell = none.cell(|v| Cell::num(*v));
        assert_eq!(cell, Cell::Undefined(Some(why.into())));
        assert_eq!(cell.display(), format!("undefined ({why})"));
        assert_eq!(cell.csv(), "");
        assert_eq!(none.text(|_| unreachable!()), format!("undefined ({why})"));
        // The JSON an undefined f64 always had: a NaN is written as null.
        assert_eq!(serde_json::to_string(&none).unwrap(), "null");
        assert_eq!(serde_json::to_string(&f64::NAN).unwrap(), "null");
    }

    use super::*;

    #[test]
    fn a_confidence_level_shows_as_a_user_writes_it() {
        assert_eq!(percent(0.95), "95%");
        assert_eq!(percent(0.9), "90%");
        assert_eq!(percent(0.995), "99.5%");
        // 100 × 0.57 is 56.99999999999999 in floating point.
        assert_eq!(percent(0.57), "57%");
        assert_eq!(percent(1.0 - 0.95), "5%");
    }

    #[test]
    fn numbers_show_their_precision_in_text_and_every_digit_in_csv() {
        let cases = [
            (Cell::num(0.1), "0.100000", "0.1"),
            (Cell::num(0.0), "0.000000", "0"),
            (Cell::num(2.5e-5), "2.5000e-5", "0.000025"),
            (Cell::num(12_345_678.0), "1.2346e7", "12345678"),
            (Cell::num(-1.0 / 3.0), "-0.333333", "-0.3333333333333333"),
            (Cell::fixed(0.125, 2), "0.12", "0.125"),
            (Cell::num(f64::NAN), "undefined", ""),
            (Cell::fixed(f64::INFINITY, 2), "undefined", ""),
            (Cell::Count(223), "223", "223"),
            (Cell::opt_num(None), "-", ""),
            (Cell::Undefined(None), "undefined", ""),
            (
                Cell::undefined_because("the outcome does not vary"),
                "undefined (the outcome does not vary)",
                "",
            ),
            (Cell::from("1/2.50/4"), "1/2.50/4", "1/2.50/4"),
        ];
        for (cell, text, csv) in cases {
            assert_eq!(
                (cell.display().as_str(), cell.csv().as_str()),
                (text, csv),
                "{cell:?}"
            );
        }
    }

    #[test]
    fn text_aligns_numbers_right_and_text_left() {
        let mut t = Table::new(&["stratum", "Q", "mean", "note"]);
        t.row([
            Cell::text("open"),
            Cell::Count(5),
            Cell::num(0.25),
            Cell::text("a"),
        ]);
        t.row([
            Cell::text("adaptive"),
            Cell::Count(12),
            Cell::Missing,
            Cell::text(""),
        ]);
        t.row([
            Cell::from("7"),
            Cell::from("x"),
            Cell::Undefined(None),
            Cell::undefined_because("no reads"),
        ]);
        assert_eq!(
            t.to_text(),
            // widths 8, 2, 9, 20; "7" reads as a number, "x" does not
            "stratum   Q   mean       note\n\
             open       5   0.250000  a\n\
             adaptive  12          -\n\
             \x20      7  x   undefined  undefined (no reads)\n"
        );
    }

    #[test]
    fn csv_quotes_and_leaves_missing_values_empty() {
        let mut t = Table::new(&["name", "value"]);
        t.row([Cell::text("a, \"b\""), Cell::num(f64::NAN)]);
        t.row([Cell::text("c"), Cell::num(1.5)]);
        let t = t.with_leading_column("selector", "bm25");
        assert_eq!(
            t.to_csv(),
            "selector,name,value\nbm25,\"a, \"\"b\"\"\",\nbm25,c,1.5\n"
        );
    }

    #[test]
    fn html_escapes_every_cell() {
        let mut t = Table::new(&["a<b"]);
        t.row([Cell::text("x & 'y'")]);
        assert_eq!(
            t.to_html(),
            "<table>\n<thead><tr><th>a&lt;b</th></tr></thead>\n<tbody>\n\
             <tr><td>x &amp; &apos;y&apos;</td></tr>\n</tbody>\n</table>\n"
        );
    }
}
