//! An analysis's finished result, ready for every output format ([`Finished`]): its
//! report shown each way ([`Rendered`]: text and CSV from the report's view, JSON from serde
//! of the report), results combined per selector or currency ([`Sections`]), the figure a
//! front end asked for, and the notes it shows after the output. The `stats` command prints
//! one; the Python bindings hand one over as a value. Both make it by the same library call,
//! so they agree by construction.

use serde_json::{json, Value};

use super::{with_envelope, Engine, Inputs, Report, RunInfo};
use crate::table::{Table, ToView};

/// A result shown each way. The text and CSV of an analysis come from the same value as its
/// JSON, so sections and the report combine values, never re-read printed output.
pub trait Rendered {
    /// The human-readable output, a setting it names named as the Python keyword
    /// (`mcnemar=`).
    fn text(&self) -> String;
    /// The human-readable output with each setting it names written by `setting` (the
    /// command line writes its flag: `--mcnemar`); see [`crate::table::View::to_text_with`].
    fn text_with(&self, setting: &dyn Fn(&str, Option<&str>) -> String) -> String {
        let _ = setting;
        self.text()
    }
    /// The CSV output.
    fn csv(&self) -> Table;
    /// The report's fields: the serde serialization of the library's report
    /// ([`super::to_body`]), i.e. the JSON document without its `run` envelope.
    fn body(&self) -> Value;
    /// The engine that produced the result, for the envelope (all `null` where the
    /// analysis does not resample).
    fn engine(&self) -> Engine {
        Engine::default()
    }
    /// The exit code this result asks for (0 unless the analysis says otherwise).
    fn exit_code(&self) -> u8 {
        0
    }
    /// The view of the result, where it has one (sections and the front ends' own results
    /// have none): its named tables for data frames and HTML.
    fn view(&self) -> Option<crate::table::View> {
        None
    }
}

/// A library report shown through its view ([`ToView`]): text and CSV from the view, JSON
/// from serde of the report, the engine and exit code from [`Report`].
impl<R: ToView + Report> Rendered for R {
    fn text(&self) -> String {
        self.to_view().to_text()
    }

    fn text_with(&self, setting: &dyn Fn(&str, Option<&str>) -> String) -> String {
        self.to_view().to_text_with(setting)
    }

    fn csv(&self) -> Table {
        self.to_view().csv().clone()
    }

    fn body(&self) -> Value {
        super::to_body(self)
    }

    fn engine(&self) -> Engine {
        Report::engine(self)
    }

    fn exit_code(&self) -> u8 {
        Report::exit_code(self)
    }

    fn view(&self) -> Option<crate::table::View> {
        Some(self.to_view())
    }
}

/// The JSON document of `r` (docs/json.md): its body with the `run` envelope of `command`
/// run on `inputs`.
pub fn document_of(r: &dyn Rendered, command: &str, inputs: Inputs) -> Value {
    with_envelope(&RunInfo::new(command, inputs, r.engine()), r.body())
}

/// A drawn figure: the SVG, and the input files it was drawn from (which a front end
/// writing it must not overwrite).
#[derive(Debug, Clone)]
pub struct Figure {
    pub svg: String,
    pub inputs: Vec<std::path::PathBuf>,
}

impl Figure {
    /// `svg` drawn from `inputs`.
    pub fn new<P: AsRef<std::path::Path>>(svg: String, inputs: &[P]) -> Figure {
        Figure {
            svg,
            inputs: inputs.iter().map(|p| p.as_ref().to_path_buf()).collect(),
        }
    }
}

/// An analysis's finished result, with what its document's envelope says of the run (the
/// analysis and its inputs), the figure asked for, and the notes for after the output.
pub struct Finished {
    pub command: &'static str,
    pub inputs: Inputs,
    pub result: Box<dyn Rendered>,
    /// The figure asked for (drawn only then).
    pub figure: Option<Figure>,
    /// Lines for after the output (notes a format has no place for; `stats` writes them to
    /// stderr).
    pub notes_after: Vec<String>,
    /// The unpaired cells of the panels it loaded, for `run.unpaired_cells` (absent: none).
    pub unpaired_cells: Option<Value>,
    /// The report's notes as `note:` lines, for after a CSV output (which has no place for
    /// them; text and JSON carry them).
    pub csv_notes: Vec<String>,
}

impl Finished {
    /// `result` of `command` run on `inputs`, without a figure or notes.
    pub fn new(command: &'static str, inputs: Inputs, result: impl Rendered + 'static) -> Finished {
        Finished::boxed(command, inputs, Box::new(result))
    }

    /// [`Finished::new`] of a result already boxed (sections).
    pub fn boxed(command: &'static str, inputs: Inputs, result: Box<dyn Rendered>) -> Finished {
        Finished {
            command,
            inputs,
            result,
            figure: None,
            notes_after: Vec::new(),
            unpaired_cells: None,
            csv_notes: Vec::new(),
        }
    }

    /// With the figure drawn, if one was asked for.
    pub fn with_figure(mut self, figure: Option<Figure>) -> Finished {
        self.figure = figure;
        self
    }

    /// With `notes` for after the output.
    pub fn with_notes_after(mut self, notes: Vec<String>) -> Finished {
        self.notes_after = notes;
        self
    }

    /// With the report's `notes`, shown after a CSV output ([`Finished::csv_notes`]).
    pub fn with_csv_notes(mut self, notes: &[String]) -> Finished {
        self.csv_notes = notes.iter().map(|n| format!("note: {n}")).collect();
        self
    }

    /// The JSON document (docs/json.md).
    pub fn document(&self) -> Value {
        let mut doc = document_of(&*self.result, self.command, self.inputs.clone());
        if let (Some(u), Some(run)) = (&self.unpaired_cells, doc.get_mut("run")) {
            if let Some(run) = run.as_object_mut() {
                run.insert("unpaired_cells".into(), u.clone());
            }
        }
        doc
    }
}

/// Results of one run per value of `by` (a selector, a currency), shown as one output:
/// texts one after another under a `BY: VALUE` line, CSV with a leading `BY` column, JSON
/// as `{"by": BY, "results": [{BY: VALUE, "result": …}]}`. Sections nest (per selector,
/// then per currency).
pub struct Sections {
    pub by: String,
    pub items: Vec<(String, Box<dyn Rendered>)>,
}

impl Rendered for Sections {
    fn text(&self) -> String {
        self.text_with(&crate::table::keyword)
    }

    fn text_with(&self, setting: &dyn Fn(&str, Option<&str>) -> String) -> String {
        let mut out = String::new();
        for (i, (name, r)) in self.items.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&format!("{}: {name}\n", self.by));
            out.push_str(&r.text_with(setting));
        }
        out
    }

    /// The sections' tables stacked, each row led by its section's value; the columns are
    /// the first section's.
    fn csv(&self) -> Table {
        let mut all: Option<Table> = None;
        for (name, r) in &self.items {
            let t = r.csv().with_leading_column(&self.by, name);
            match &mut all {
                None => all = Some(t),
                Some(a) => a.rows.extend(t.rows),
            }
        }
        all.unwrap_or_else(|| Table::new(&[self.by.as_str()]))
    }

    fn body(&self) -> Value {
        let results: Vec<Value> = self
            .items
            .iter()
            .map(|(name, r)| json!({ self.by.as_str(): name, "result": r.body() }))
            .collect();
        json!({ "by": self.by, "results": results })
    }

    /// The first section's engine: every section runs with the same settings.
    fn engine(&self) -> Engine {
        self.items
            .first()
            .map(|(_, r)| r.engine())
            .unwrap_or_default()
    }

    fn exit_code(&self) -> u8 {
        self.items
            .iter()
            .map(|(_, r)| r.exit_code())
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::Cell;

    struct One(f64);

    impl Rendered for One {
        fn text(&self) -> String {
            format!("value {}\n", self.0)
        }
        fn csv(&self) -> Table {
            let mut t = Table::new(&["value"]);
            t.row([Cell::num(self.0)]);
            t
        }
        fn body(&self) -> Value {
            json!({ "value": self.0 })
        }
        fn exit_code(&self) -> u8 {
            u8::from(self.0 < 0.0)
        }
    }

    fn currencies(tokens: f64, usd: f64) -> Box<dyn Rendered> {
        Box::new(Sections {
            by: "currency".into(),
            items: vec![
                ("tokens".into(), Box::new(One(tokens)) as Box<dyn Rendered>),
                ("usd".into(), Box::new(One(usd))),
            ],
        })
    }

    fn sections() -> Sections {
        Sections {
            by: "selector".into(),
            items: vec![
                ("bm25".into(), currencies(1.0, 0.25)),
                ("dense".into(), currencies(2.5, -0.5)),
            ],
        }
    }

    #[test]
    fn sections_nest_in_every_format() {
        let s = sections();
        assert_eq!(
            s.text(),
            "selector: bm25\ncurrency: tokens\nvalue 1\n\ncurrency: usd\nvalue 0.25\n\n\
             selector: dense\ncurrency: tokens\nvalue 2.5\n\ncurrency: usd\nvalue -0.5\n"
        );
        assert_eq!(
            s.csv().to_csv(),
            "selector,currency,value\nbm25,tokens,1\nbm25,usd,0.25\n\
             dense,tokens,2.5\ndense,usd,-0.5\n"
        );
        let tokens_usd = |t: f64, u: f64| {
            json!({"by": "currency", "results": [
                {"currency": "tokens", "result": {"value": t}},
                {"currency": "usd", "result": {"value": u}},
            ]})
        };
        assert_eq!(
            s.body(),
            json!({"by": "selector", "results": [
                {"selector": "bm25", "result": tokens_usd(1.0, 0.25)},
                {"selector": "dense", "result": tokens_usd(2.5, -0.5)},
            ]})
        );
        assert_eq!(s.exit_code(), 1);
        // One envelope, at the top: the sections' bodies have none.
        let doc = document_of(&s, "variance", Inputs::new().with("panel", "p.csv"));
        assert_eq!(doc["run"]["command"], "variance");
        assert_eq!(doc["run"]["inputs"], json!({"panel": "p.csv"}));
        assert_eq!(doc["run"]["seed"], Value::Null);
        let mut without = doc.clone();
        without.as_object_mut().unwrap().remove("run");
        assert_eq!(without, s.body());
    }
}
