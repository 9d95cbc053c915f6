//! What an analysis shows ([`View`]): its lines of text and its named [`Table`]s in the
//! order text output prints them, and the table that is its CSV. Every front end renders
//! a view rather than building its own tables: `stats` prints [`View::to_text`] or the CSV
//! table, HTML (the report, notebooks) is [`View::to_html`], and the Python bindings hand
//! out [`View::tables`] as data frames by name. JSON is serde of the report, not a view.
//!
//! A line may name a setting (`pairs: 10 of 45 shown (… for every pair)`): the library
//! does not know how a front end spells it, so such a line is made of [`Span`]s, and
//! [`View::to_text_with`] is given how to name a setting. `stats` names it as its flag
//! (`--all-pairs`, `--format json`); plain [`View::to_text`] and [`View::to_html`] name it
//! as the Python keyword argument ([`keyword`]: `all_pairs=`, `format=json`).

use super::{escape_xml, Table};

/// One block of a view, in print order.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// Text printed as is (whole lines, each ending in `\n`).
    Text(String),
    /// A table with its name (the key Python and HTML know it by), printed aligned.
    Table(&'static str, Table),
    /// Text that names settings (whole lines), each setting named as the front end names it.
    Naming(Vec<Span>),
}

/// A piece of a [`Block::Naming`] line.
#[derive(Debug, Clone, PartialEq)]
pub enum Span {
    /// Text printed as is.
    Text(String),
    /// A setting by its library name (`all_pairs`), with the value the line gives it
    /// (`json`, `200`, or a placeholder such as `FILE`); `None` for a switch.
    Setting(&'static str, Option<String>),
}

impl Span {
    /// A text span.
    pub fn text(s: impl Into<String>) -> Span {
        Span::Text(s.into())
    }

    /// The switch `name` (a setting without a value).
    pub fn switch(name: &'static str) -> Span {
        Span::Setting(name, None)
    }

    /// The setting `name` given `value`.
    pub fn setting(name: &'static str, value: impl ToString) -> Span {
        Span::Setting(name, Some(value.to_string()))
    }
}

/// A setting as the library's own text names it: the Python keyword argument, `name=value`,
/// or `name=` where the line gives no value (a switch, or the setting itself).
pub fn keyword(name: &str, value: Option<&str>) -> String {
    format!("{name}={}", value.unwrap_or_default())
}

/// An analysis's output as text lines and named tables, plus its CSV table.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    blocks: Vec<Block>,
    csv: Table,
}

/// A report that has a [`View`].
pub trait ToView {
    /// The report's view.
    fn to_view(&self) -> View;
}

impl View {
    /// An empty view whose CSV output is `csv`.
    pub fn new(csv: Table) -> View {
        View {
            blocks: Vec::new(),
            csv,
        }
    }

    /// Appends text (whole lines).
    pub fn text(&mut self, text: impl Into<String>) -> &mut View {
        let text = text.into();
        if !text.is_empty() {
            self.blocks.push(Block::Text(text));
        }
        self
    }

    /// Appends text (whole lines) that names settings ([`Span::Setting`]).
    pub fn text_naming(&mut self, spans: Vec<Span>) -> &mut View {
        self.blocks.push(Block::Naming(spans));
        self
    }

    /// Appends the table `name`.
    pub fn table(&mut self, name: &'static str, table: Table) -> &mut View {
        self.blocks.push(Block::Table(name, table));
        self
    }

    /// The blocks in print order.
    pub fn blocks(&self) -> &[Block] {
        &self.blocks
    }

    /// The table CSV output writes.
    pub fn csv(&self) -> &Table {
        &self.csv
    }

    /// The view as aligned text: every block in order, a setting named as its
    /// [`keyword`].
    pub fn to_text(&self) -> String {
        self.to_text_with(&keyword)
    }

    /// [`View::to_text`] with each setting named by `setting(name, value)` (the CLI: its
    /// flag).
    pub fn to_text_with(&self, setting: &dyn Fn(&str, Option<&str>) -> String) -> String {
        let mut out = String::new();
        for b in &self.blocks {
            match b {
                Block::Text(t) => out.push_str(t),
                Block::Table(_, t) => out.push_str(&t.to_text()),
                Block::Naming(spans) => out.push_str(&spoken(spans, setting)),
            }
        }
        out
    }

    /// The view as an HTML fragment: text blocks as `<pre>`, tables as `<table>` with the
    /// table's name as its class.
    pub fn to_html(&self) -> String {
        let mut out = String::new();
        for b in &self.blocks {
            match b {
                Block::Text(t) => out.push_str(&format!("<pre>{}</pre>\n", escape_xml(t))),
                Block::Naming(spans) => out.push_str(&format!(
                    "<pre>{}</pre>\n",
                    escape_xml(&spoken(spans, &keyword))
                )),
                Block::Table(name, t) => {
                    let html = t.to_html();
                    out.push_str(&html.replacen(
                        "<table>",
                        &format!("<table class=\"{name}\">"),
                        1,
                    ));
                }
            }
        }
        out
    }

    /// The named tables in print order, then the CSV table as `csv`.
    pub fn tables(&self) -> Vec<(&'static str, &Table)> {
        self.blocks
            .iter()
            .filter_map(|b| match b {
                Block::Table(name, t) => Some((*name, t)),
                Block::Text(_) | Block::Naming(_) => None,
            })
            .chain(std::iter::once(("csv", &self.csv)))
            .collect()
    }
}

/// `spans` as text, each setting named by `setting`.
fn spoken(spans: &[Span], setting: &dyn Fn(&str, Option<&str>) -> String) -> String {
    spans
        .iter()
        .map(|s| match s {
            Span::Text(t) => t.clone(),
            Span::Setting(name, value) => setting(name, value.as_deref()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::Cell;

    fn view() -> View {
        let mut csv = Table::new(&["scope", "mean"]);
        csv.row([Cell::text("a"), Cell::num(0.5)]);
        let mut strata = Table::new(&["stratum", "Q"]);
        strata.row([Cell::text("a<b"), Cell::Count(3)]);
        let mut v = View::new(csv);
        v.text("estimate 0.5\n")
            .table("strata", strata)
            .text("")
            .text("note: x\n");
        v
    }

    #[test]
    fn text_prints_every_block_in_order_and_skips_empty_text() {
        let v = view();
        assert_eq!(v.blocks().len(), 3);
        assert_eq!(
            v.to_text(),
            "estimate 0.5\nstratum  Q\na<b      3\nnote: x\n"
        );
        assert_eq!(v.csv().to_csv(), "scope,mean\na,0.5\n");
    }

    #[test]
    fn tables_are_named_and_the_csv_table_comes_last() {
        let v = view();
        let names: Vec<&str> = v.tables().iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["strata", "csv"]);
        assert_eq!(v.tables()[0].1.rows.len(), 1);
    }

    #[test]
    fn html_escapes_text_and_names_each_table() {
        let html = view().to_html();
        assert!(html.starts_with("<pre>estimate 0.5\n</pre>\n<table class=\"strata\">"));
        assert!(html.contains("a&lt;b"), "{html}");
        assert!(html.ends_with("<pre>note: x\n</pre>\n"), "{html}");
    }

    #[test]
    fn a_setting_is_named_as_the_front_end_names_it() {
        let mut v = View::new(Table::new(&["x"]));
        v.text_naming(vec![
            Span::text("every pair ("),
            Span::switch("all_pairs"),
            Span::text("; "),
            Span::setting("format", "json"),
            Span::text(")\n"),
        ]);
        assert_eq!(v.to_text(), "every pair (all_pairs=; format=json)\n");
        // A front end's own spelling, e.g. a flag (here in brackets).
        let flag = |n: &str, v: Option<&str>| {
            let f = format!("[{}]", n.replace('_', "-"));
            v.map_or(f.clone(), |v| format!("{f} {v}"))
        };
        assert_eq!(
            v.to_text_with(&flag),
            "every pair ([all-pairs]; [format] json)\n"
        );
        assert_eq!(v.tables().len(), 1);
    }
}
