//! Where an input's rows come from ([`Source`]): files on disk — one panel, ledger or item
//! file, or several evaluation logs read as one — or a table held in memory (a data frame
//! the Python bindings hand over). A loader given a source reads a table exactly as it
//! reads a file of the same rows, and messages name the table as they would name the file.

use std::path::{Path, PathBuf};

use super::memory::MemoryTable;

/// An input of an analysis, passed as a value to its loader.
#[derive(Clone)]
pub enum Source {
    /// Files on disk (never empty): one file or directory, or several evaluation logs (or
    /// directories of them) read as one set, as a directory holding them would be.
    Files(Vec<PathBuf>),
    /// A table in memory and the name messages and documents call it by
    /// (`<pandas.DataFrame>`).
    Table { name: String, table: MemoryTable },
    /// Records in memory (a Python list of dicts): each row what one line of a JSON-lines
    /// file holds, row n read as line n.
    Records {
        name: String,
        rows: Vec<serde_json::Map<String, serde_json::Value>>,
    },
}

impl Source {
    /// The file (or directory) at `path`.
    pub fn file(path: impl Into<PathBuf>) -> Source {
        Source::Files(vec![path.into()])
    }

    /// `first` and the further logs `more` read with it as one set (just `first` when
    /// `more` is empty).
    pub fn files(first: &Path, more: &[PathBuf]) -> Source {
        Source::Files(
            std::iter::once(first.to_path_buf())
                .chain(more.iter().cloned())
                .collect(),
        )
    }

    /// The table `table`, called `name` in messages.
    pub fn table(name: impl Into<String>, table: MemoryTable) -> Source {
        Source::Table {
            name: name.into(),
            table,
        }
    }

    /// What messages call the source: the first file's path, or the table's name.
    pub fn name(&self) -> &Path {
        match self {
            Source::Files(paths) => paths.first().map_or(Path::new(""), |p| p.as_path()),
            Source::Table { name, .. } | Source::Records { name, .. } => Path::new(name),
        }
    }

    /// How a document's `run.inputs` lists it: each file's path, or the table's name.
    pub fn names(&self) -> Vec<String> {
        match self {
            Source::Files(paths) => paths.iter().map(|p| p.display().to_string()).collect(),
            Source::Table { name, .. } | Source::Records { name, .. } => vec![name.clone()],
        }
    }

    /// The files it reads (none for a table): what an output must not overwrite.
    pub fn paths(&self) -> &[PathBuf] {
        match self {
            Source::Files(paths) => paths,
            Source::Table { .. } | Source::Records { .. } => &[],
        }
    }
}

impl Source {
    /// The error for records given where a table is read (a panel, correlate's table):
    /// records stand for JSON lines (items, annotations, ledger rows).
    pub fn records_refused(&self) -> crate::Error {
        crate::Error::input(
            self.name(),
            None,
            "a list of records is read where JSON lines are (items, annotations, ledger \
             rows); give a table here (pandas, polars, pyarrow) or a file",
        )
    }
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Files(paths) => f.debug_tuple("Files").field(paths).finish(),
            Source::Table { name, table } => f
                .debug_struct("Table")
                .field("name", name)
                .field(
                    "rows",
                    &table.batches.iter().map(|b| b.num_rows()).sum::<usize>(),
                )
                .finish(),
            Source::Records { name, rows } => f
                .debug_struct("Records")
                .field("name", name)
                .field("rows", &rows.len())
                .finish(),
        }
    }
}
