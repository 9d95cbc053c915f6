//! A pandas DataFrame as an Arrow record batch without pyarrow: pandas exports Arrow only
//! through pyarrow, which ragstats does not require. Each column is copied once, through
//! numpy: numbers as their bytes (`to_numpy(dtype).tobytes()`; the limited API of abi3 has no
//! buffer protocol before Python 3.11), categoricals as codes and categories, anything else
//! as Python objects (strings; `None`/`NaN` missing).

use std::sync::Arc;

use arrow_array::types::Int64Type;
use arrow_array::{
    ArrayRef, BooleanArray, DictionaryArray, Float64Array, Int64Array, RecordBatch, StringArray,
};
use arrow_schema::{Field, Schema};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use ragstats_core::panel::memory::MemoryTable;

/// The columns of the DataFrame `df` as one record batch (its index is not a column, as
/// in `to_csv(index=False)`).
pub fn frame_table(df: &Bound<'_, PyAny>) -> PyResult<MemoryTable> {
    let names: Vec<Bound<'_, PyAny>> = df.getattr("columns")?.call_method0("tolist")?.extract()?;
    let mut fields = Vec::with_capacity(names.len());
    let mut arrays = Vec::with_capacity(names.len());
    for label in names {
        let col = df.get_item(&label)?;
        let array = column(&col)?;
        fields.push(Field::new(
            label.str()?.to_string(),
            array.data_type().clone(),
            true,
        ));
        arrays.push(array);
    }
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), arrays)
        .map_err(|e| crate::errors::InputError::new_err(format!("pandas.DataFrame: {e}")))?;
    Ok(MemoryTable {
        schema,
        batches: vec![batch],
    })
}

/// One column (a Series) as an Arrow array.
fn column(col: &Bound<'_, PyAny>) -> PyResult<ArrayRef> {
    let dtype = col.getattr("dtype")?;
    if dtype.str()? == "category" {
        let cat = col.getattr("cat")?;
        let codes = numbers::<i64>(&cat.getattr("codes")?, "int64")?;
        let keys: Int64Array = codes.into_iter().map(|c| (c >= 0).then_some(c)).collect();
        let labels: Vec<String> = cat
            .getattr("categories")?
            .call_method1("astype", ("str",))?
            .call_method0("tolist")?
            .extract()?;
        let dict = DictionaryArray::<Int64Type>::try_new(
            keys,
            Arc::new(StringArray::from_iter_values(labels)),
        )
        .map_err(|e| crate::errors::InputError::new_err(format!("pandas.DataFrame: {e}")))?;
        return Ok(Arc::new(dict));
    }
    let kind: String = dtype.getattr("kind")?.extract()?;
    Ok(match kind.as_str() {
        "i" | "u" => Arc::new(Int64Array::from(numbers::<i64>(col, "int64")?)),
        // pandas marks a missing number NaN: a missing cell, as an empty CSV cell is.
        "f" => Arc::new(
            numbers::<f64>(col, "float64")?
                .into_iter()
                .map(|v| (!v.is_nan()).then_some(v))
                .collect::<Float64Array>(),
        ),
        "b" => {
            let v: Vec<Option<bool>> = col.call_method0("tolist")?.extract()?;
            Arc::new(BooleanArray::from(v))
        }
        _ => {
            let values: Vec<Bound<'_, PyAny>> = col.call_method0("tolist")?.extract()?;
            let texts = values
                .iter()
                .map(|v| text(v))
                .collect::<PyResult<Vec<Option<String>>>>()?;
            Arc::new(StringArray::from(texts))
        }
    })
}

/// An object cell as text: `None` and float `NaN` (pandas' missing values) are missing.
fn text(v: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    if v.is_none() {
        return Ok(None);
    }
    if let Ok(f) = v.extract::<f64>() {
        if f.is_nan() {
            return Ok(None);
        }
    }
    Ok(Some(v.str()?.to_string()))
}

/// The values of `col` as `dtype` (`int64`, `float64`), through their native-endian bytes.
fn numbers<T: bytemuck::Pod>(col: &Bound<'_, PyAny>, dtype: &str) -> PyResult<Vec<T>> {
    let kw = pyo3::types::PyDict::new(col.py());
    kw.set_item("dtype", dtype)?;
    let array = col.call_method("to_numpy", (), Some(&kw))?;
    let bytes = array.call_method0("tobytes")?;
    let bytes = bytes.cast::<PyBytes>()?.as_bytes();
    Ok(bytemuck::pod_collect_to_vec(bytes))
}
