//! What a Python caller hands over as a panel: a path, or any table with the Arrow C stream
//! interface (`__arrow_c_stream__`: pyarrow Tables and RecordBatchReaders, polars and
//! pandas ≥ 2.2 DataFrames …), read without copying its buffers.

use std::path::PathBuf;

use arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use arrow_array::RecordBatch;
use arrow_array::RecordBatchReader;
use arrow_schema::SchemaRef;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods};

use ragstats_cli::cmd::common::PanelOptions;
use ragstats_core::panel::arrow::load_panel_arrow;
use ragstats_core::panel::{load_panel, LoadOptions, Panel};

use crate::errors::{Failure, InputError};

/// A panel argument, taken from Python while the GIL is held and loaded without it.
pub enum PanelSource {
    Path(PathBuf),
    /// The table's batches (their buffers shared with the producer, not copied) and the
    /// name errors call it by.
    Table {
        name: String,
        schema: SchemaRef,
        batches: Vec<RecordBatch>,
    },
}

impl PanelSource {
    /// Reads `obj`: a `str` or `os.PathLike` is a path; anything with `__arrow_c_stream__`
    /// a table; a pandas DataFrame of a pandas without it goes through `pyarrow` when that
    /// is installed.
    pub fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<PanelSource> {
        let py = obj.py();
        let os = py.import("os")?;
        if obj.is_instance_of::<pyo3::types::PyString>() || obj.hasattr("__fspath__")? {
            let p: PathBuf = os.call_method1("fspath", (obj,))?.extract()?;
            return Ok(PanelSource::Path(p));
        }
        let name = describe_type(obj)?;
        let stream_owner = if obj.hasattr("__arrow_c_stream__")? {
            obj.clone()
        } else if name == "pandas.DataFrame" {
            let pa = py.import("pyarrow").map_err(|_| {
                PyTypeError::new_err(
                    "this pandas DataFrame has no __arrow_c_stream__ (pandas < 2.2): install \
                     pyarrow, or pass a path",
                )
            })?;
            let kw = pyo3::types::PyDict::new(py);
            kw.set_item("preserve_index", false)?;
            pa.getattr("Table")?
                .call_method("from_pandas", (obj,), Some(&kw))?
        } else {
            return Err(PyTypeError::new_err(format!(
                "a panel is a path or a table (pandas, polars, pyarrow, or anything with \
                 __arrow_c_stream__); got {name}"
            )));
        };
        let capsule = stream_owner.call_method0("__arrow_c_stream__")?;
        let capsule = capsule.cast::<PyCapsule>()?;
        let ptr = capsule.pointer_checked(Some(c"arrow_array_stream"))?;
        // SAFETY: a capsule named "arrow_array_stream" holds an FFI_ArrowArrayStream (the
        // Arrow PyCapsule interface). Its contents are moved out and the capsule's left
        // released, so the capsule's destructor does not release the stream twice.
        let stream = unsafe {
            std::ptr::replace(
                ptr.as_ptr().cast::<FFI_ArrowArrayStream>(),
                FFI_ArrowArrayStream::empty(),
            )
        };
        let reader = RecordBatchStreamReader::try_new(stream).map_err(|e| {
            InputError::new_err(format!("{name}: not a readable Arrow stream: {e}"))
        })?;
        let schema = reader.schema();
        let batches = reader
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| InputError::new_err(format!("{name}: reading the table failed: {e}")))?;
        Ok(PanelSource::Table {
            name,
            schema,
            batches,
        })
    }

    /// How the document's `run.inputs` names it: the path, or the table's type.
    pub fn describe(&self) -> String {
        match self {
            PanelSource::Path(p) => p.display().to_string(),
            PanelSource::Table { name, .. } => name.clone(),
        }
    }

    /// The panel, loaded as the CLI loads a file.
    pub fn load(self, opts: &LoadOptions) -> Result<Panel, Failure> {
        Ok(match self {
            PanelSource::Path(p) => load_panel(&p, opts)?,
            PanelSource::Table {
                name,
                schema,
                batches,
            } => load_panel_arrow(&name, &schema, batches.into_iter().map(Ok), opts)?,
        })
    }
}

/// `pandas.DataFrame`, `polars.DataFrame`, `pyarrow.Table`: the top-level package and the
/// class name of `obj`'s type.
fn describe_type(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    let t = obj.get_type();
    let module: String = t.getattr("__module__")?.extract()?;
    let class: String = t.getattr("__qualname__")?.extract()?;
    let top = module.split('.').next().unwrap_or(&module);
    Ok(format!("{top}.{class}"))
}

/// The flags every panel command shares, from keyword arguments named like them.
pub fn panel_options(
    metric: Option<String>,
    contrast: Option<String>,
    arm: Option<String>,
    drop_incomplete: bool,
    selector: Option<String>,
) -> PyResult<PanelOptions> {
    if contrast.is_some() && arm.is_some() {
        return Err(InputError::new_err(
            "contrast and arm exclude each other: a contrast already uses both arms",
        ));
    }
    let selector = selector
        .map(|s| {
            s.parse()
                .map_err(|e: String| InputError::new_err(format!("selector: {e}")))
        })
        .transpose()?;
    Ok(PanelOptions {
        metric,
        contrast,
        arm,
        drop_incomplete,
        selector,
    })
}
