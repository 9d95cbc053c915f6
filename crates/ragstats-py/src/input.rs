//! The tables a Python caller hands over: anything with the Arrow C stream interface
//! (`__arrow_c_stream__`: pyarrow Tables and RecordBatchReaders, polars and pandas ≥ 2.2
//! DataFrames …), read without copying their buffers; pandas DataFrames without pyarrow
//! through numpy.

use arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use arrow_array::RecordBatchReader;
use pyo3::exceptions::{PyImportError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods};

use ragstats_core::panel::memory::MemoryTable;

use crate::errors::InputError;

/// The table `obj` (anything with `__arrow_c_stream__`), its batches read while the GIL is
/// held and shared with the producer, not copied. A pandas DataFrame that cannot export
/// itself (pandas exports through pyarrow; without pyarrow, or a pandas older than 2.2) is
/// read column by column through numpy instead ([`crate::pandas`]), one copy of each column.
///
/// # Errors
/// `TypeError` for anything else; `InputError` when the stream fails.
pub fn table_from_py(obj: &Bound<'_, PyAny>) -> PyResult<MemoryTable> {
    let py = obj.py();
    let name = describe_type(obj)?;
    let pandas = name == "pandas.DataFrame";
    if obj.hasattr("__arrow_c_stream__")? {
        match obj.call_method0("__arrow_c_stream__") {
            Ok(capsule) => return from_capsule(&name, &capsule),
            Err(e) if pandas && e.is_instance_of::<PyImportError>(py) => {}
            Err(e) => return Err(e),
        }
    } else if !pandas {
        return Err(PyTypeError::new_err(format!(
            "expected a path or a table (pandas, polars, pyarrow, or anything with \
             __arrow_c_stream__); got {name}"
        )));
    }
    crate::pandas::frame_table(obj)
}

/// The batches of the Arrow C stream in `capsule` (what `__arrow_c_stream__` returned).
fn from_capsule(name: &str, capsule: &Bound<'_, PyAny>) -> PyResult<MemoryTable> {
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
    let reader = RecordBatchStreamReader::try_new(stream)
        .map_err(|e| InputError::new_err(format!("{name}: not a readable Arrow stream: {e}")))?;
    let schema = reader.schema();
    let batches = reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| InputError::new_err(format!("{name}: reading the table failed: {e}")))?;
    Ok(MemoryTable { schema, batches })
}

/// `pandas.DataFrame`, `polars.DataFrame`, `pyarrow.Table`: the top-level package and the
/// class name of `obj`'s type.
pub fn describe_type(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    let t = obj.get_type();
    let module: String = t.getattr("__module__")?.extract()?;
    let class: String = t.getattr("__qualname__")?.extract()?;
    let top = module.split('.').next().unwrap_or(&module);
    Ok(format!("{top}.{class}"))
}
