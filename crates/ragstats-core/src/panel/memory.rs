//! Tables held in memory (a data frame, a Parquet file read whole), as a [`super::Source`]
//! carries them to the loaders: a table is readable as Arrow record batches, as JSON
//! objects, one per row ([`MemoryTable::json_rows`]), so the readers of JSON-lines files
//! (the cost ledger, MCQ items and results, annotations, answers; [`jsonl_of`]) take one,
//! and as the CSV of its rows ([`table_csv`], correlate's tables).

use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, SchemaRef};
use serde_json::{Map, Number, Value};

use super::arrow::Numeric;
use crate::io::csv::CsvReader;
use crate::io::jsonl::JsonlReader;
use crate::{Error, Result};

/// One table: its schema and record batches (their buffers shared, not copied).
#[derive(Clone)]
pub struct MemoryTable {
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
}

impl MemoryTable {
    /// Each row as the JSON object a JSON-lines file would hold: strings (also of a
    /// dictionary), numbers, booleans; a missing cell (null, a float `NaN`) is an absent key,
    /// and a whole float is an integer (data frames keep integers with gaps as floats).
    ///
    /// # Errors
    /// The name and type of a column no JSON value can hold (lists, structs, dates …).
    pub fn json_rows(&self) -> std::result::Result<Vec<Map<String, Value>>, String> {
        let mut rows = Vec::new();
        for batch in &self.batches {
            let mut out = vec![Map::new(); batch.num_rows()];
            for (field, col) in self.schema.fields().iter().zip(batch.columns()) {
                for (r, row) in out.iter_mut().enumerate() {
                    if let Some(v) = json_value(col.as_ref(), r).map_err(|t| {
                        format!(
                            "column '{}' is {t}; expected strings, numbers or booleans",
                            field.name()
                        )
                    })? {
                        row.insert(field.name().clone(), v);
                    }
                }
            }
            rows.extend(out);
        }
        Ok(rows)
    }
}

/// Cell `i` of `a` as JSON (`None`: missing), or the type that has no JSON form.
fn json_value(a: &dyn Array, i: usize) -> std::result::Result<Option<Value>, DataType> {
    // A column of type Null (every value missing: pandas' all-None column) has no null
    // buffer, so `is_null` alone would not see it.
    if a.is_null(i) || a.data_type() == &DataType::Null {
        return Ok(None);
    }
    let float = |v: f64| {
        if v.fract() == 0.0 && v.abs() < 9.0e15 {
            Some(Value::from(v as i64))
        } else {
            Number::from_f64(v).map(Value::Number)
        }
    };
    if let Some(n) = Numeric::of(a.data_type()) {
        return Ok(match n {
            // Every Arrow integer fits an i64 or a u64.
            Numeric::Int(read) => Some(match i64::try_from(read(a, i)) {
                Ok(v) => Value::from(v),
                Err(_) => Value::from(read(a, i) as u64),
            }),
            Numeric::Float(read) => float(read(a, i)),
        });
    }
    Ok(Some(match a.data_type() {
        DataType::Utf8 => Value::from(a.as_string::<i32>().value(i)),
        DataType::LargeUtf8 => Value::from(a.as_string::<i64>().value(i)),
        DataType::Utf8View => Value::from(a.as_string_view().value(i)),
        DataType::Boolean => Value::from(a.as_boolean().value(i)),
        DataType::Dictionary(_, _) => {
            let d = a.as_any_dictionary();
            return json_value(d.values().as_ref(), d.normalized_keys()[i]);
        }
        // Lists and structs as JSON arrays and objects (an MCQ item's options, a result's
        // gold answers): a null element is `null`, a null field an absent key.
        DataType::List(_) => elements(a.as_list::<i32>().value(i).as_ref())?,
        DataType::LargeList(_) => elements(a.as_list::<i64>().value(i).as_ref())?,
        DataType::Struct(fields) => {
            let st = a.as_struct();
            let mut m = Map::new();
            for (f, col) in fields.iter().zip(st.columns()) {
                if let Some(v) = json_value(col.as_ref(), i)? {
                    m.insert(f.name().clone(), v);
                }
            }
            Value::Object(m)
        }
        other => return Err(other.clone()),
    }))
}

/// The elements of one list cell as a JSON array.
fn elements(a: &dyn Array) -> std::result::Result<Value, DataType> {
    (0..a.len())
        .map(|j| Ok(json_value(a, j)?.unwrap_or(Value::Null)))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map(Value::Array)
}

/// The JSON-lines reader of `source`: a table's rows as its lines (row n is line n), or
/// the file.
///
/// # Errors
/// [`Error::Input`] naming the table's column no JSON value can hold; [`Error::Io`] when
/// the file cannot be opened; [`Error::Input`] when `source` names several files (only evaluation
/// logs are read as a set).
pub fn jsonl_of(source: &super::Source) -> Result<JsonlReader> {
    match source {
        super::Source::Table { name, table } => jsonl_rows(Path::new(name), table),
        super::Source::Records { name, rows } => Ok(jsonl_of_rows(Path::new(name), rows)),
        super::Source::Files(paths) => match paths.as_slice() {
            [one] => JsonlReader::open(one),
            _ => Err(Error::input(
                source.name(),
                None,
                "one JSON-lines file expected, not several",
            )),
        },
    }
}

/// The rows of `table`, called `name`, as the lines of a JSON-lines file.
fn jsonl_rows(name: &Path, table: &MemoryTable) -> Result<JsonlReader> {
    let rows = table.json_rows().map_err(|m| Error::input(name, None, m))?;
    Ok(jsonl_of_rows(name, &rows))
}

/// `rows`, called `name`, as the lines of a JSON-lines file.
fn jsonl_of_rows(name: &Path, rows: &[Map<String, Value>]) -> JsonlReader {
    let mut text = String::new();
    for r in rows {
        // A map serializes to JSON whatever it holds.
        text.push_str(&serde_json::to_string(r).unwrap_or_default());
        text.push('\n');
    }
    JsonlReader::from_reader(name, std::io::Cursor::new(text.into_bytes()))
}

/// `table`, called `name`, as a CSV reader: its columns the header, a missing cell empty,
/// row n as line n + 1.
///
/// # Errors
/// [`Error::Input`] naming a column no JSON value (and so no CSV cell) can hold.
pub fn table_csv(name: &Path, table: &MemoryTable) -> Result<CsvReader> {
    let path = name;
    let rows = table.json_rows().map_err(|m| Error::input(path, None, m))?;
    let names: Vec<&String> = table.schema.fields().iter().map(|f| f.name()).collect();
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let io =
        |e: ::csv::Error| Error::input(path, None, format!("writing the table as CSV failed: {e}"));
    w.write_record(names.iter().map(|n| n.as_str()))
        .map_err(io)?;
    for r in &rows {
        w.write_record(names.iter().map(|n| match r.get(n.as_str()) {
            None => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
        }))
        .map_err(io)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| Error::input(path, None, e.to_string()))?;
    CsvReader::from_reader(path, std::io::Cursor::new(bytes))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::types::Int32Type;
    use arrow_array::{
        ArrayRef, DictionaryArray, Float64Array, Int64Array, ListArray, StringArray,
    };
    use arrow_schema::{Field, Schema};
    use serde_json::json;

    use super::*;

    fn table(cols: Vec<(&str, ArrayRef)>) -> MemoryTable {
        let schema = Arc::new(Schema::new(
            cols.iter()
                .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
                .collect::<Vec<_>>(),
        ));
        let batch =
            RecordBatch::try_new(schema.clone(), cols.into_iter().map(|c| c.1).collect()).unwrap();
        MemoryTable {
            schema,
            batches: vec![batch],
        }
    }

    #[test]
    fn rows_read_as_the_json_lines_of_a_file() {
        let kind: DictionaryArray<Int32Type> = vec!["planner", "reader"].into_iter().collect();
        let t = table(vec![
            ("kind", Arc::new(kind)),
            ("model", Arc::new(StringArray::from(vec![Some("m"), None]))),
            ("read", Arc::new(Float64Array::from(vec![f64::NAN, 1.0]))),
            ("input_tokens", Arc::new(Int64Array::from(vec![120, 80]))),
            ("share", Arc::new(Float64Array::from(vec![0.25, 0.5]))),
        ]);
        let rows = t.json_rows().unwrap();
        // A missing cell (null, NaN) is an absent key; a whole float an integer.
        assert_eq!(
            Value::from(rows[0].clone()),
            json!({"kind": "planner", "model": "m", "input_tokens": 120, "share": 0.25})
        );
        assert_eq!(
            Value::from(rows[1].clone()),
            json!({"kind": "reader", "read": 1, "input_tokens": 80, "share": 0.5})
        );
        // Lists are arrays (a null element `null`); a date has no JSON form.
        let list =
            ListArray::from_iter_primitive::<Int32Type, _, _>(vec![Some(vec![Some(1), None])]);
        let rows = table(vec![("tags", Arc::new(list))]).json_rows().unwrap();
        assert_eq!(Value::from(rows[0].clone()), json!({"tags": [1, null]}));
        let date = arrow_array::Date32Array::from(vec![1]);
        let e = table(vec![("day", Arc::new(date))])
            .json_rows()
            .unwrap_err();
        assert!(e.starts_with("column 'day' is Date32"), "{e}");
    }
}
