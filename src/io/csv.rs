//! The one CSV reader: a header row, then records streamed with their 1-based line numbers.
//!
//! Fields and header names are trimmed of surrounding white space. Rows must have as many
//! fields as the header. Errors name the file and line (see [`crate::io`] for the rules).

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use super::text::{clip, clip_list, utf16_bom, UTF8_BOM};
use crate::{Error, Result};

/// A CSV file being read record by record.
pub struct CsvReader {
    path: PathBuf,
    rdr: ::csv::Reader<Box<dyn Read + Send>>,
    headers: Vec<String>,
    rec: ::csv::StringRecord,
}

impl std::fmt::Debug for CsvReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CsvReader")
            .field("path", &self.path)
            .field("headers", &self.headers)
            .finish()
    }
}

impl CsvReader {
    /// Opens `path` and reads its header row.
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be opened; [`Error::Input`] for an empty file, a
    /// header that is not valid UTF-8, or a column name given twice.
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        Self::from_reader(path, BufReader::with_capacity(1 << 20, file))
    }

    /// Reads CSV text from `reader`; `path` names it in errors.
    ///
    /// # Errors
    /// As [`CsvReader::open`].
    pub fn from_reader(path: &Path, mut reader: impl Read + Send + 'static) -> Result<Self> {
        let mut head = [0u8; 3];
        let mut got = 0;
        while got < 3 {
            match reader
                .read(&mut head[got..])
                .map_err(|e| Error::io(path, e))?
            {
                0 => break,
                n => got += n,
            }
        }
        let head = head[..got].to_vec();
        if let Some(msg) = utf16_bom(&head) {
            return Err(Error::input(path, Some(1), msg));
        }
        let skip = if head.starts_with(UTF8_BOM) { 3 } else { 0 };
        let stream: Box<dyn Read + Send> =
            Box::new(std::io::Cursor::new(head[skip..].to_vec()).chain(reader));
        let mut rdr = ::csv::ReaderBuilder::new()
            .has_headers(true)
            .flexible(false)
            // Fields are trimmed as they are read (Record::get): the csv crate's Trim::All
            // rebuilds every record in a fresh allocation (about 12 % of the time, plus
            // the allocator's, in a profile of loading a 160,000-row panel).
            .trim(::csv::Trim::Headers)
            .from_reader(stream);
        let headers: Vec<String> = rdr
            .headers()
            .map_err(|e| csv_error(path, e))?
            .iter()
            .map(str::to_string)
            .collect();
        if headers.is_empty() || headers.iter().all(String::is_empty) {
            return Err(Error::input(
                path,
                Some(1),
                "empty file: expected a header row",
            ));
        }
        for (i, h) in headers.iter().enumerate() {
            if headers[..i].contains(h) {
                return Err(Error::input(
                    path,
                    Some(1),
                    format!("column '{}' appears twice in the header", clip(h)),
                ));
            }
        }
        Ok(CsvReader {
            path: path.to_path_buf(),
            rdr,
            headers,
            rec: ::csv::StringRecord::new(),
        })
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The header's column names, trimmed.
    pub fn headers(&self) -> &[String] {
        &self.headers
    }

    /// Index of column `name`, if the header has it.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.headers.iter().position(|h| h == name)
    }

    /// Index of column `name`, or an error naming `what` (e.g. `--x`) and the columns there are.
    ///
    /// # Errors
    /// [`Error::Input`] at line 1 when the header lacks `name`.
    pub fn require(&self, name: &str, what: &str) -> Result<usize> {
        self.column(name).ok_or_else(|| {
            Error::input(
                &self.path,
                Some(1),
                format!(
                    "{what}column '{}' not found; the columns are: {}",
                    clip(name),
                    clip_list(&self.headers)
                ),
            )
        })
    }

    /// The next record and its 1-based line, or `None` at the end of the file.
    ///
    /// # Errors
    /// [`Error::Input`] for a row with the wrong number of fields, invalid UTF-8 or broken
    /// quoting.
    pub fn next_record(&mut self) -> Result<Option<(u64, Record<'_>)>> {
        match self.rdr.read_record(&mut self.rec) {
            Ok(false) => Ok(None),
            Ok(true) => {
                let line = self.rec.position().map(|p| p.line()).unwrap_or(0);
                Ok(Some((line, Record(&self.rec))))
            }
            Err(e) => Err(csv_error(&self.path, e)),
        }
    }
}

/// One CSV record; its fields read trimmed of surrounding ASCII white space (the rule the
/// csv crate's `Trim::All` applies, without its copy of every record).
#[derive(Debug, Clone, Copy)]
pub struct Record<'a>(&'a ::csv::StringRecord);

impl<'a> Record<'a> {
    /// Field `i`, trimmed; `None` past the last field.
    pub fn get(&self, i: usize) -> Option<&'a str> {
        self.0.get(i).map(str::trim_ascii)
    }

    /// Number of fields.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the record has no fields.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The fields in order, trimmed.
    pub fn iter(&self) -> impl Iterator<Item = &'a str> + 'a {
        self.0.iter().map(str::trim_ascii)
    }
}

impl std::ops::Index<usize> for Record<'_> {
    type Output = str;

    /// Field `i`, trimmed.
    ///
    /// # Panics
    /// Past the last field, like `StringRecord`.
    fn index(&self, i: usize) -> &str {
        self.0[i].trim_ascii()
    }
}

fn csv_error(path: &Path, e: ::csv::Error) -> Error {
    let line = e.position().map(|p| p.line()).or(Some(1));
    let msg = match e.kind() {
        ::csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => {
            format!("row has {len} fields; the header has {expected_len}")
        }
        ::csv::ErrorKind::Utf8 { .. } => "not valid UTF-8".to_string(),
        ::csv::ErrorKind::Io(io) => {
            return Error::io(path, std::io::Error::new(io.kind(), io.to_string()))
        }
        _ => format!("malformed CSV: {}", clip(&e.to_string())),
    };
    Error::input(path, line, msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(bytes: &[u8]) -> Result<CsvReader> {
        CsvReader::from_reader(Path::new("t.csv"), std::io::Cursor::new(bytes.to_vec()))
    }

    fn all(bytes: &[u8]) -> Result<Vec<(u64, Vec<String>)>> {
        let mut r = reader(bytes)?;
        let mut out = Vec::new();
        while let Some((line, rec)) = r.next_record()? {
            out.push((line, rec.iter().map(str::to_string).collect()));
        }
        Ok(out)
    }

    #[test]
    fn records_carry_their_lines_and_fields_are_trimmed() {
        let rows = all(b"a, b\n1, 2\n\"x\ny\",3\n4,5\n").unwrap();
        assert_eq!(rows[0], (2, vec!["1".to_string(), "2".to_string()]));
        // Tabs and spaces around a field, quoted or not, are trimmed; inner ones are kept.
        let mut r = reader(b"a,b\n\t x y ,\" q \"\n").unwrap();
        let (_, rec) = r.next_record().unwrap().unwrap();
        assert_eq!((rec.get(0), &rec[1], rec.len()), (Some("x y"), "q", 2));
        assert_eq!(rec.get(2), None);
        assert_eq!(rows[1], (3, vec!["x\ny".to_string(), "3".to_string()]));
        assert_eq!(rows[2].0, 5);
        // The csv crate counts a record from the end of the previous one, so blank lines
        // skipped before a record give the line of the first blank one.
        let rows = all(b"a\n1\n\n2\n").unwrap();
        assert_eq!(rows[1].0, 3);
    }

    #[test]
    fn bom_is_skipped_and_utf16_refused() {
        let r = reader(b"\xEF\xBB\xBFa,b\n1,2\n").unwrap();
        assert_eq!(r.headers(), ["a", "b"]);
        let e = reader(b"\xFF\xFEa\0").unwrap_err();
        assert!(e.to_string().starts_with("t.csv:1: UTF-16"), "{e}");
    }

    #[test]
    fn bad_input_names_file_and_line() {
        let e = reader(b"a,b,a\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.csv:1: column 'a' appears twice in the header"
        );
        let e = all(b"a,b\n1,2\n3\n").unwrap_err();
        assert_eq!(e.to_string(), "t.csv:3: row has 1 fields; the header has 2");
        let e = all(b"a,b\n1,2\n3,\xFF\n").unwrap_err();
        assert_eq!(e.to_string(), "t.csv:3: not valid UTF-8");
        let e = reader(b"").unwrap_err();
        assert_eq!(e.to_string(), "t.csv:1: empty file: expected a header row");
        let r = reader(b"a,b\n").unwrap();
        let e = r.require("zz", "--x ").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.csv:1: --x column 'zz' not found; the columns are: a, b"
        );
    }
}
