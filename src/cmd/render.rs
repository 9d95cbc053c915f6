//! A command's result as a value, shown each way ([`Rendered`]), and results combined
//! from values ([`Sections`]: one per selector or currency) rather than from printed output.

use ragstats_core::document::{with_envelope, Engine, Inputs, Report, RunInfo};
use ragstats_core::table::ToView;
use serde_json::{json, Value};

use super::common::{print_json, selector_choices, write_table_csv, Format, PanelOptions, Table};

/// The result of one command run, ready for every output format. The text and CSV of a
/// command come from the same value as its JSON, so `--by selector`, several currencies
/// and `stats report` combine values, never re-read what a command printed.
pub trait Rendered {
    /// The human-readable output (`--format table`).
    fn text(&self) -> String;
    /// The CSV output.
    fn csv(&self) -> Table;
    /// The report's fields: the serde serialization of the library's report
    /// ([`ragstats_core::document::to_body`]), i.e. the JSON document without its `run`
    /// envelope.
    fn body(&self) -> Value;
    /// The engine that produced the result, for the envelope (all `null` where the
    /// command does not resample).
    fn engine(&self) -> Engine {
        Engine::default()
    }
    /// The exit code this result asks for (0 unless the command says otherwise).
    fn exit_code(&self) -> u8 {
        0
    }
}

/// A library report shown through its view ([`ToView`]): text (a setting named as its flag)
/// and CSV from the view, JSON from serde of the report
/// ([`ragstats_core::document::to_body`]), the engine from [`Report::engine`].
impl<R: ToView + Report> Rendered for R {
    fn text(&self) -> String {
        self.to_view().to_text_with(&flag_of)
    }

    fn csv(&self) -> Table {
        self.to_view().csv().clone()
    }

    fn body(&self) -> Value {
        ragstats_core::document::to_body(self)
    }

    fn engine(&self) -> Engine {
        Report::engine(self)
    }

    fn exit_code(&self) -> u8 {
        Report::exit_code(self)
    }
}

/// A setting a view's text names, as the command line spells it: its flag, and the value
/// the text gives it (`--format json`).
pub fn flag_of(setting: &str, value: Option<&str>) -> String {
    let flag = crate::settings::flag(setting);
    match value {
        Some(v) => format!("{flag} {v}"),
        None => flag,
    }
}

/// The JSON document of `r` (docs/json.md): its body with the `run` envelope of `command`
/// run on `inputs`.
pub fn document(r: &dyn Rendered, command: &str, inputs: Inputs) -> Value {
    with_envelope(&RunInfo::new(command, inputs, r.engine()), r.body())
}

/// Writes `r`, the result of `command` run on `inputs`, to stdout in `format`.
///
/// # Errors
/// The write error (a closed pipe, a full disk).
pub fn emit(r: &dyn Rendered, format: Format, command: &str, inputs: Inputs) -> anyhow::Result<u8> {
    match format {
        Format::Table => super::out::write_bytes(r.text().as_bytes())?,
        Format::Csv => write_table_csv(&r.csv())?,
        Format::Json => print_json(&document(r, command, inputs))?,
    }
    Ok(r.exit_code())
}

/// A command's finished result, with what its document's envelope says of the run (the
/// command and its inputs), the figure `--plot` asked for, and the notes it writes to stderr
/// after its output. `stats` prints it; the Python bindings hand it over as a value.
pub struct Finished {
    pub command: &'static str,
    pub inputs: Inputs,
    pub result: Box<dyn Rendered>,
    /// The figure `--plot` asked for (drawn only then).
    pub figure: Option<Figure>,
    /// Lines for stderr after the output (notes a format has no place for).
    pub notes_after: Vec<String>,
    /// The unpaired cells of the panels it loaded, for `run.unpaired_cells` (absent: none).
    pub unpaired_cells: Option<Value>,
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
            unpaired_cells: super::common::take_unpaired(),
        }
    }

    /// With the figure `--plot` drew, if it asked for one.
    pub fn with_figure(mut self, figure: Option<Figure>) -> Finished {
        self.figure = figure;
        self
    }

    /// Writes the figure to `plot` (`--plot FILE`), when both are there; the file must not
    /// be one of the figure's inputs.
    ///
    /// # Errors
    /// A write error, or `plot` naming an input.
    pub fn write_figure(&self, plot: Option<&std::path::Path>) -> anyhow::Result<()> {
        if let (Some(p), Some(f)) = (plot, &self.figure) {
            let inputs: Vec<&std::path::Path> = f.inputs.iter().map(|i| i.as_path()).collect();
            super::figure::write_svg(p, &f.svg, &inputs)?;
        }
        Ok(())
    }

    /// With `notes` for stderr after the output.
    pub fn with_notes_after(mut self, notes: Vec<String>) -> Finished {
        self.notes_after = notes;
        self
    }

    /// With the report's `notes` as `note:` lines for stderr when the output is CSV, which
    /// has no place for them (text and JSON carry them).
    pub fn with_notes_for_csv(self, format: Format, notes: &[String]) -> Finished {
        match format {
            Format::Csv => {
                self.with_notes_after(notes.iter().map(|n| format!("note: {n}")).collect())
            }
            _ => self,
        }
    }

    /// The JSON document (docs/json.md).
    pub fn document(&self) -> Value {
        let mut doc = document(&*self.result, self.command, self.inputs.clone());
        if let (Some(u), Some(run)) = (&self.unpaired_cells, doc.get_mut("run")) {
            if let Some(run) = run.as_object_mut() {
                run.insert("unpaired_cells".into(), u.clone());
            }
        }
        doc
    }

    /// What `stats` does with it: the figure to `plot` when asked, then the output in `format`
    /// ([`Finished::emit`]); the exit code.
    ///
    /// # Errors
    /// A write error, or `plot` naming an input.
    pub fn print(&self, plot: Option<&std::path::Path>, format: Format) -> anyhow::Result<u8> {
        self.write_figure(plot)?;
        self.emit(format)
    }

    /// Writes the result in `format` to stdout, then its notes to stderr; the exit code.
    ///
    /// # Errors
    /// The write error (a closed pipe, a full disk).
    pub fn emit(&self, format: Format) -> anyhow::Result<u8> {
        let code = match format {
            Format::Json => {
                print_json(&self.document())?;
                self.result.exit_code()
            }
            _ => emit(&*self.result, format, self.command, self.inputs.clone())?,
        };
        for n in &self.notes_after {
            eprintln!("{n}");
        }
        Ok(code)
    }
}

/// A drawn figure: the SVG, and the input files it was drawn from (which `--plot` must not
/// overwrite).
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
        let mut out = String::new();
        for (i, (name, r)) in self.items.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&format!("{}: {name}\n", self.by));
            out.push_str(&r.text());
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

/// The selector sections of `--by selector`: `run` once per selector of `path` and once for
/// the selector average (when there are several), with `--selector` set accordingly.
///
/// # Errors
/// A usage error with `--selector` or without a `selector` column; any run's error.
pub fn sections_by_selector(
    path: &std::path::Path,
    opts: &PanelOptions,
    mut run: impl FnMut(PanelOptions) -> anyhow::Result<Box<dyn Rendered>>,
) -> anyhow::Result<Sections> {
    let mut items = Vec::new();
    for (name, choice) in selector_choices(path, opts)? {
        let mut o = opts.clone();
        o.selector = Some(choice);
        items.push((name, run(o)?));
    }
    Ok(Sections {
        by: "selector".into(),
        items,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragstats_core::table::Cell;

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
        let doc = document(&s, "variance", Inputs::new().with("panel", "p.csv"));
        assert_eq!(doc["run"]["command"], "variance");
        assert_eq!(doc["run"]["inputs"], json!({"panel": "p.csv"}));
        assert_eq!(doc["run"]["seed"], Value::Null);
        let mut without = doc.clone();
        without.as_object_mut().unwrap().remove("run");
        assert_eq!(without, s.body());
    }
}
