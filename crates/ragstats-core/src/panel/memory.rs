//! Tables held in memory under a name, so that every loader that takes a path also takes a
//! data frame: the Python bindings register the frames of one call under names such as
//! `<pandas.DataFrame>` for the duration of that call, on the thread that runs it, and
//! [`super::load_panel`] reads a registered name from memory instead of from disk.
//!
//! A registered table is also readable as JSON objects, one per row ([`MemoryTable::json_rows`]),
//! so the readers of JSON-lines files (the cost ledger) take a data frame too.
//!
//! Registrations are per thread: concurrent calls from several Python threads each see only
//! their own tables, and a name never outlives the call that registered it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, SchemaRef};
use serde_json::{Map, Number, Value};

use super::arrow::Numeric;

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
    if a.is_null(i) {
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
        other => return Err(other.clone()),
    }))
}

thread_local! {
    static TABLES: RefCell<HashMap<PathBuf, MemoryTable>> = RefCell::new(HashMap::new());
}

/// Runs `f` with `tables` readable by name on this thread, and removes them afterwards
/// (also when `f` panics).
pub fn with_tables<R>(tables: Vec<(String, MemoryTable)>, f: impl FnOnce() -> R) -> R {
    struct Unregister(Vec<PathBuf>);
    impl Drop for Unregister {
        fn drop(&mut self) {
            TABLES.with(|t| {
                let mut t = t.borrow_mut();
                for name in &self.0 {
                    t.remove(name);
                }
            });
        }
    }
    let names = TABLES.with(|t| {
        let mut t = t.borrow_mut();
        tables
            .into_iter()
            .map(|(name, table)| {
                let name = PathBuf::from(name);
                t.insert(name.clone(), table);
                name
            })
            .collect()
    });
    let _unregister = Unregister(names);
    f()
}

/// The table registered on this thread as `path`, if any.
pub fn lookup(path: &Path) -> Option<MemoryTable> {
    TABLES.with(|t| t.borrow().get(path).cloned())
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
        let list = ListArray::from_iter_primitive::<Int32Type, _, _>(vec![Some(vec![Some(1)])]);
        let e = table(vec![("tags", Arc::new(list))])
            .json_rows()
            .unwrap_err();
        assert!(e.starts_with("column 'tags' is List("), "{e}");
    }
}
