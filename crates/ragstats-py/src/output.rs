//! A finished analysis as the Python layer sees it: the JSON document (exactly what the CLI's
//! `--format json` prints), the text output, and the main table with typed cells.

use pyo3::prelude::*;
use pyo3::types::PyList;

use ragstats_cli::cmd::render::{document, Rendered};
use ragstats_core::document::Inputs;
use ragstats_core::table::{Cell, Table};

/// One analysis's result (wrapped by `ragstats.Result` in Python).
#[pyclass(frozen, module = "ragstats._ragstats")]
pub struct Outcome {
    json: String,
    text: String,
    table: Table,
}

impl Outcome {
    /// The outputs of `r`, the result of `command` on `inputs`, in every form.
    pub fn of(r: &dyn Rendered, command: &str, inputs: Inputs) -> Outcome {
        let doc = document(r, command, inputs);
        Outcome {
            json: serde_json::to_string(&doc).expect("a document is JSON"),
            text: r.text(),
            table: r.csv(),
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

    /// The main table as HTML (the table `stats report` shows).
    fn html(&self) -> String {
        self.table.to_html()
    }

    /// The main table's column names (the CSV header).
    fn columns(&self) -> Vec<String> {
        self.table.columns.clone()
    }

    /// The main table's rows: floats, ints, strings, and `None` where a value is
    /// undefined or missing (the empty cells of the CSV).
    fn rows<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let rows = PyList::empty(py);
        for row in &self.table.rows {
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
                    Cell::Num(..) | Cell::Undefined(_) | Cell::Missing => {
                        cells.append(py.None())?
                    }
                }
            }
            rows.append(cells)?;
        }
        Ok(rows)
    }
}
