//! Reading named fields of every row of a CSV or JSONL file as text, for analyses that need
//! more than scores (answers, grouping columns).

use std::io::{BufRead, BufReader};
use std::path::Path;

use crate::{Error, Result};

/// One row: its 1-based line and the requested fields (`None` where absent or empty).
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub line: u64,
    pub fields: Vec<Option<String>>,
}

/// Reads `columns` from every row of a CSV (by header) or JSONL (by key) file. Columns in
/// `required` must exist (CSV header) or be present on every row (JSONL).
///
/// # Errors
/// [`Error::Input`] naming the file and line for malformed rows and missing columns.
pub fn read_records(path: &Path, columns: &[&str], required: &[&str]) -> Result<Vec<Record>> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut out = Vec::new();
    if ext.eq_ignore_ascii_case("jsonl") || ext.eq_ignore_ascii_case("json") {
        for (i, line) in BufReader::new(file).lines().enumerate() {
            let n = i as u64 + 1;
            let line = line.map_err(|e| Error::input(path, Some(n), format!("cannot read line: {e}")))?;
            if line.trim().is_empty() {
                continue;
            }
            let obj: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&line)
                .map_err(|e| Error::input(path, Some(n), format!("expected a JSON object: {e}")))?;
            let fields: Vec<Option<String>> = columns
                .iter()
                .map(|c| match obj.get(*c) {
                    Some(serde_json::Value::String(s)) => Some(s.clone()),
                    Some(serde_json::Value::Number(x)) => Some(x.to_string()),
                    Some(serde_json::Value::Bool(b)) => Some(b.to_string()),
                    _ => None,
                })
                .collect();
            if let Some((c, _)) = columns.iter().zip(&fields).find(|(c, f)| f.is_none() && required.contains(c)) {
                return Err(Error::input(path, Some(n), format!("missing field '{c}'")));
            }
            out.push(Record { line: n, fields });
        }
    } else {
        let mut rdr = csv::ReaderBuilder::new().from_reader(BufReader::new(file));
        let header: Vec<String> = rdr
            .headers()
            .map_err(|e| Error::input(path, Some(1), e.to_string()))?
            .iter()
            .map(|h| h.trim().to_string())
            .collect();
        if let Some(c) = required.iter().find(|c| !header.iter().any(|h| h == *c)) {
            return Err(Error::input(path, Some(1), format!("missing column '{c}' (columns: {})", header.join(", "))));
        }
        let idx: Vec<Option<usize>> = columns.iter().map(|c| header.iter().position(|h| h == c)).collect();
        for rec in rdr.records() {
            let rec = rec.map_err(|e| Error::input(path, e.position().map(|p| p.line()), e.to_string()))?;
            let line = rec.position().map(|p| p.line()).unwrap_or(0);
            let fields = idx
                .iter()
                .map(|i| i.and_then(|i| rec.get(i)).map(str::trim).filter(|s| !s.is_empty()).map(String::from))
                .collect();
            out.push(Record { line, fields });
        }
    }
    Ok(out)
}
