//! A finished analysis as the Python layer sees it: the JSON document (exactly what the CLI's
//! `--format json` prints), the text output, and the main table with typed cells.

use pyo3::prelude::*;
use pyo3::types::PyList;

use ragstats_core::document::Finished;
use ragstats_core::table::{Cell, Table};

/// One analysis's result (wrapped by `ragstats.Result` in Python).
#[pyclass(frozen, module = "ragstats._ragstats")]
pub struct Outcome {
    json: String,
    text: String,
    table: Table,
    figure: Option<String>,
    notes: Vec<String>,
    exit_code: u8,
    /// The report's view, where it has one: its named tables and its HTML.
    view: Option<ragstats_core::table::View>,
}

impl Outcome {
    /// A finished command's outputs in every form.
    pub fn of(f: &Finished) -> Outcome {
        Outcome {
            json: serde_json::to_string(&f.document()).expect("a document is JSON"),
            text: f.result.text(),
            table: f.result.csv(),
            figure: f.figure.as_ref().map(|fig| fig.svg.clone()),
            notes: f.notes_after.clone(),
            exit_code: f.result.exit_code(),
            view: f.result.view(),
        }
    }
}

#[pymethods]
impl Outcome {
    /// The JSON document (`stats … --format json`), as text.
    fn document_json(&self) -> &str {
        &self.json
    }

    /// The text output (`stats …`).
    fn text(&self) -> &str {
        &self.text
    }

    /// The SVG figure, when the call asked for one (`plot=True`).
    fn figure(&self) -> Option<&str> {
        self.figure.as_deref()
    }

    /// What the command writes to stderr after its output (notes, warnings).
    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }

    /// The exit code the command would end with (1: e.g. `mcq validate` found violations).
    fn exit_code(&self) -> u8 {
        self.exit_code
    }

    /// The result as HTML for a notebook: the view's text and named tables (the main table
    /// where the result has no view), then the figure when one was drawn.
    fn html(&self) -> String {
        let mut html = match &self.view {
            Some(v) => v.to_html(),
            None => self.table.to_html(),
        };
        if let Some(svg) = &self.figure {
            html.push_str(svg);
        }
        html
    }

    /// The main table's column names (the CSV header).
    fn columns(&self) -> Vec<String> {
        self.table.columns.clone()
    }

    /// The main table's rows: floats, ints, strings, and `None` where a value is
    /// undefined or missing (the empty cells of the CSV).
    fn rows<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        rows_of(py, &self.table)
    }

    /// The names of the view's tables, in print order (none where the result has no view).
    fn table_names(&self) -> Vec<&'static str> {
        self.view
            .iter()
            .flat_map(|v| v.tables())
            .map(|(name, _)| name)
            .collect()
    }

    /// The view's table `name` as (columns, rows); `None` when it has no such table.
    fn named_table<'py>(
        &self,
        py: Python<'py>,
        name: &str,
    ) -> PyResult<Option<(Vec<String>, Bound<'py, PyList>)>> {
        let Some(view) = &self.view else {
            return Ok(None);
        };
        match view.tables().into_iter().find(|(n, _)| *n == name) {
            Some((_, t)) => Ok(Some((t.columns.clone(), rows_of(py, t)?))),
            None => Ok(None),
        }
    }
}

/// The rows of `table`: floats, ints, strings, and `None` where a value is undefined or
/// missing (the empty cells of the CSV).
fn rows_of<'py>(py: Python<'py>, table: &Table) -> PyResult<Bound<'py, PyList>> {
    let rows = PyList::empty(py);
    for row in &table.rows {
        let cells = PyList::empty(py);
        for c in row {
            match c {
                Cell::Num(v, _) if v.is_finite() => cells.append(*v)?,
                Cell::Count(n) => cells.append(*n)?,
                Cell::Text(s) => cells.append(s)?,
                Cell::Raw(s) => match s.trim().parse::<f64>() {
                    Ok(v) if v.is_finite() => cells.append(v)?,
                    _ if s.is_empty() || s == "-" => cells.append(py.None())?,
                    _ => cells.append(s)?,
                },
                Cell::Num(..) | Cell::Undefined(_) | Cell::Missing => cells.append(py.None())?,
            }
        }
        rows.append(cells)?;
    }
    Ok(rows)
}
