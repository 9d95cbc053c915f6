//! Loading the columns of a correlation analysis from a CSV or Parquet file, with missing
//! values, clusters and per-unit aggregation.

use std::collections::HashMap;
use std::path::Path;

use crate::io::clip;
use crate::{Error, Result};

/// What to do with a row whose used cell is missing (empty, `NA`, `N/A`, `NaN`, `null`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Missing {
    /// Drop the row from every pair (listwise deletion) and report how many were dropped.
    Drop,
    /// Fail, naming the file, line and column.
    #[default]
    Error,
}

/// Which columns to read.
#[derive(Debug, Clone)]
pub struct LoadSpec {
    pub x: Vec<String>,
    pub y: Vec<String>,
    /// Resample whole clusters (rows sharing this column's value).
    pub cluster: Option<String>,
    /// Average the rows of each unit (value of this column) into one row first.
    pub aggregate_by: Option<String>,
    pub missing: Missing,
}

/// The loaded analysis table: one row per observation (or per unit after aggregation).
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    pub x_names: Vec<String>,
    pub y_names: Vec<String>,
    /// `x[c][i]`: column c, row i.
    pub x: Vec<Vec<f64>>,
    pub y: Vec<Vec<f64>>,
    /// Cluster index of every row and the clusters' names (first-appearance order).
    pub clusters: Option<(Vec<u32>, Vec<String>)>,
    /// Data rows in the file.
    pub rows_read: usize,
    /// Rows dropped for missing values.
    pub dropped: usize,
    /// With aggregation: the number of rows averaged into the units.
    pub aggregated_from: Option<usize>,
}

impl Dataset {
    /// Rows (or units) in the analysis.
    pub fn n(&self) -> usize {
        self.x.first().map_or(0, Vec::len)
    }
}

/// True for the cell texts read as missing.
fn is_missing(s: &str) -> bool {
    matches!(
        s.to_ascii_lowercase().as_str(),
        "" | "na" | "n/a" | "nan" | "null" | "none"
    )
}

/// A cell as a number: decimal text, or `true`/`false` as 1/0.
fn parse_number(s: &str) -> Option<f64> {
    match s.to_ascii_lowercase().as_str() {
        "true" => return Some(1.0),
        "false" => return Some(0.0),
        _ => {}
    }
    s.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Reads `path` per `spec`: a CSV file with a header row, a Parquet file (told by its
/// content; read whole into memory, its columns the header, row n as line n + 1, values
/// as exactly as the CSV of the same table gives them), or a table registered under that
/// name.
///
/// # Errors
/// [`Error::Input`] naming the file (and line) for a missing column, a non-numeric cell, or
/// a missing cell under [`Missing::Error`]; [`Error::Io`] when the file cannot be read.
pub fn load(path: &Path, spec: &LoadSpec) -> Result<Dataset> {
    use crate::import::{detect, parquet::parquet_table, Format};
    if detect(path) == Format::Parquet {
        let table = parquet_table(path)?;
        return read_table(path, crate::panel::memory::table_csv(path, &table)?, spec);
    }
    read_table(path, crate::io::CsvReader::open(path)?, spec)
}

/// [`load`] of the table `source` holds (a table in memory as the CSV of its rows).
///
/// # Errors
/// As [`load`].
pub fn load_source(source: &crate::panel::Source, spec: &LoadSpec) -> Result<Dataset> {
    match source {
        crate::panel::Source::Table { name, table } => {
            let path = Path::new(name);
            read_table(path, crate::panel::memory::table_csv(path, table)?, spec)
        }
        crate::panel::Source::Records { .. } => Err(source.records_refused()),
        crate::panel::Source::Files(paths) => match paths.as_slice() {
            [one] => load(one, spec),
            _ => Err(Error::input(
                source.name(),
                None,
                "one table expected, not several files",
            )),
        },
    }
}

/// The dataset `rdr` (the table `path`) holds per `spec`.
fn read_table(path: &Path, mut rdr: crate::io::CsvReader, spec: &LoadSpec) -> Result<Dataset> {
    let find = |name: &str, role: &str| rdr.require(name, &format!("{role} "));
    if spec.x.is_empty() || spec.y.is_empty() {
        return Err(Error::Usage(
            "give at least one x column and one y column".into(),
        ));
    }
    let xi: Vec<usize> = spec.x.iter().map(|c| find(c, "x")).collect::<Result<_>>()?;
    let yi: Vec<usize> = spec.y.iter().map(|c| find(c, "y")).collect::<Result<_>>()?;
    let key_col = match (&spec.cluster, &spec.aggregate_by) {
        (Some(c), _) => Some(find(c, "cluster")?),
        (None, Some(a)) => Some(find(a, "aggregation unit")?),
        (None, None) => None,
    };
    let mut x: Vec<Vec<f64>> = vec![Vec::new(); xi.len()];
    let mut y: Vec<Vec<f64>> = vec![Vec::new(); yi.len()];
    let mut keys: Vec<u32> = Vec::new();
    let mut key_names: Vec<String> = Vec::new();
    let mut key_index: HashMap<String, u32> = HashMap::new();
    let (mut rows_read, mut dropped) = (0usize, 0usize);
    let mut vals: Vec<f64> = Vec::with_capacity(xi.len() + yi.len());
    while let Some((line, rec)) = rdr.next_record()? {
        let line = Some(line);
        rows_read += 1;
        vals.clear();
        let mut missing: Option<&str> = None;
        for (&c, name) in xi.iter().zip(&spec.x).chain(yi.iter().zip(&spec.y)) {
            let cell = rec.get(c).unwrap_or("");
            if is_missing(cell) {
                missing.get_or_insert(name);
                vals.push(f64::NAN);
                continue;
            }
            match parse_number(cell) {
                Some(v) => {
                    if let Some(m) = crate::io::magnitude_error(|| format!("column '{name}'"), v) {
                        return Err(Error::input(path, line, m));
                    }
                    vals.push(v)
                }
                None => {
                    return Err(Error::input(
                        path,
                        line,
                        format!("column '{name}': '{}' is not a finite number", clip(cell)),
                    ))
                }
            }
        }
        let key = key_col.map(|c| rec.get(c).unwrap_or(""));
        if let (Some(k), None) = (key, missing) {
            if k.is_empty() {
                missing = Some(
                    spec.cluster
                        .as_deref()
                        .or(spec.aggregate_by.as_deref())
                        .unwrap_or(""),
                );
            }
        }
        if let Some(name) = missing {
            match spec.missing {
                Missing::Drop => {
                    dropped += 1;
                    continue;
                }
                Missing::Error => {
                    return Err(Error::input(
                        path,
                        line,
                        format!(
                            "column '{name}' is missing in this row (drop rows with missing values to go on without it)"
                        ),
                    ))
                }
            }
        }
        for (c, v) in vals.iter().enumerate() {
            if c < xi.len() {
                x[c].push(*v);
            } else {
                y[c - xi.len()].push(*v);
            }
        }
        if let Some(k) = key {
            let next = key_names.len() as u32;
            let id = *key_index.entry(k.to_string()).or_insert_with(|| {
                key_names.push(k.to_string());
                next
            });
            keys.push(id);
        }
    }
    let mut data = Dataset {
        x_names: spec.x.clone(),
        y_names: spec.y.clone(),
        x,
        y,
        clusters: None,
        rows_read,
        dropped,
        aggregated_from: None,
    };
    if spec.cluster.is_some() {
        data.clusters = Some((keys, key_names));
    } else if spec.aggregate_by.is_some() {
        data.aggregated_from = Some(data.n());
        let units = key_names.len();
        let mut count = vec![0f64; units];
        for &k in &keys {
            count[k as usize] += 1.0;
        }
        let average = |col: &Vec<f64>| -> Vec<f64> {
            let mut s = vec![0f64; units];
            for (v, &k) in col.iter().zip(&keys) {
                s[k as usize] += v;
            }
            s.iter().zip(&count).map(|(s, c)| s / c).collect()
        };
        data.x = data.x.iter().map(average).collect();
        data.y = data.y.iter().map(average).collect();
    }
    Ok(data)
}
