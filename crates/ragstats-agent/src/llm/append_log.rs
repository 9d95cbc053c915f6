//! The output and ledger files: append-only JSONL that survives crashes.
//!
//! Each record is written with one `write_all` of the line and its newline on a file opened
//! in append mode, without a user-space buffer, so once `append` returns the line is in the
//! operating system and survives the process being killed (not a power loss: no fsync).
//! A crash can still leave a torn last line; [`scan_output`] reports and skips it and
//! [`Appender::open`] starts the next record on a fresh line. Files are read through the
//! input layer's [`JsonlReader`] (line splitting, byte-order mark), but a line that is not
//! JSON or not UTF-8 is skipped as torn rather than refused.

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use ragstats_core::chat::CallRecord;
use ragstats_core::error::{Error, Result};
use ragstats_core::io::jsonl::{clip_error, parse_value, JsonError};
use ragstats_core::io::JsonlReader;

/// What an existing output file already holds.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct OutputState {
    /// (id, sample) pairs with a successful record: a re-run skips them.
    pub answered: HashSet<(String, u32)>,
    /// (id, sample) pairs whose latest record is an error: a re-run tries them again.
    pub failed: HashSet<(String, u32)>,
    /// 1-based numbers of lines that are not JSON (torn writes from an earlier crash);
    /// they are skipped.
    pub bad_lines: Vec<u64>,
    /// Records read.
    pub records: u64,
}

/// Reads an output file written by this module (a missing file is empty).
///
/// # Errors
/// [`Error::Io`] when it cannot be read; [`Error::Input`] (file:line) for a line that is
/// JSON but not a response record — the file is probably not an output file, and appending
/// to it would mix two kinds of data — or that names a key twice.
pub fn scan_output(path: &Path) -> Result<OutputState> {
    let mut st = OutputState::default();
    let mut rdr = match JsonlReader::open(path) {
        Ok(r) => r,
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(st)
        }
        Err(e) => return Err(e),
    };
    while let Some((n, v)) = next_intact(path, &mut rdr, &mut st.bad_lines)? {
        let (id, sample, ok) = record_key(&v).ok_or_else(|| {
            Error::input(
                path,
                Some(n),
                "not a response record (expected an object with string \"id\", integer \"sample\", \"attempts\" and \"text\" or \"error\"); is this the right responses file?",
            )
        })?;
        st.records += 1;
        let k = (id, sample);
        if ok {
            st.failed.remove(&k);
            st.answered.insert(k);
        } else if !st.answered.contains(&k) {
            st.failed.insert(k);
        }
    }
    Ok(st)
}

/// The next line of an output file that is JSON, and its line number. Lines that are not
/// (torn writes from a crash, which may end inside a UTF-8 sequence) are skipped and their
/// numbers pushed to `torn`: this file is our own append-only output, so such a line is
/// damage to step over, not input to refuse.
///
/// # Errors
/// [`Error::Io`] on a read failure; [`Error::Input`] for a line that names a key twice
/// (complete, so not torn) or for UTF-16 text.
fn next_intact(
    path: &Path,
    rdr: &mut JsonlReader,
    torn: &mut Vec<u64>,
) -> Result<Option<(u64, Value)>> {
    while let Some((n, bytes)) = rdr.next_bytes()? {
        match std::str::from_utf8(bytes).map(parse_value) {
            Ok(Ok(v)) => return Ok(Some((n, v))),
            Ok(Err(JsonError::DuplicateKey(m))) => return Err(Error::input(path, Some(n), m)),
            Ok(Err(JsonError::Syntax(_))) | Err(_) => torn.push(n),
        }
    }
    Ok(None)
}

/// (id, sample, succeeded) of a response record, or `None` if `v` is not one.
fn record_key(v: &Value) -> Option<(String, u32, bool)> {
    let id = v.get("id")?.as_str()?.to_string();
    let sample = u32::try_from(v.get("sample")?.as_u64()?).ok()?;
    v.get("attempts")?.as_u64()?;
    let has_error = v.get("error").is_some_and(|e| !e.is_null());
    let has_text = v.get("text").is_some_and(Value::is_string);
    if !has_error && !has_text {
        return None;
    }
    Some((id, sample, !has_error))
}

/// Loads an output file into the latest record per (id, sample), skipping torn lines.
/// A success is never replaced by a later error (re-runs do not re-ask answered calls, but
/// two processes sharing a file could). This is how consumers (the MCQ scorer) should read
/// outputs, since a re-run appends a new record after an earlier error for the same call.
///
/// # Errors
/// As [`scan_output`], and [`Error::Io`] when the file does not exist.
pub fn load_records(path: &Path) -> Result<HashMap<(String, u32), CallRecord>> {
    let mut rdr = JsonlReader::open(path)?;
    let mut out: HashMap<(String, u32), CallRecord> = HashMap::new();
    let mut torn = Vec::new();
    while let Some((n, v)) = next_intact(path, &mut rdr, &mut torn)? {
        let rec: CallRecord = serde_json::from_value(v).map_err(|e| {
            Error::input(
                path,
                Some(n),
                format!("not a response record: {}", clip_error(&e.to_string())),
            )
        })?;
        let k = (rec.id.clone(), rec.sample);
        match out.get(&k) {
            Some(prev) if prev.is_ok() && !rec.is_ok() => {}
            _ => {
                out.insert(k, rec);
            }
        }
    }
    Ok(out)
}

/// An append-only JSONL file.
#[derive(Debug)]
pub struct Appender {
    file: File,
    path: PathBuf,
}

impl Appender {
    /// Opens (creating) `path` for appending. If the file does not end with a newline (a torn
    /// last line), writes one first so the next record starts on a fresh line. Returns the
    /// appender and whether such a newline was added.
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be opened or written.
    pub fn open(path: &Path) -> Result<(Self, bool)> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        let mut fixed = false;
        if len > 0 {
            let mut last = [0u8; 1];
            file.seek(SeekFrom::Start(len - 1))
                .and_then(|_| file.read_exact(&mut last))
                .map_err(|e| Error::io(path, e))?;
            if last[0] != b'\n' {
                file.write_all(b"\n").map_err(|e| Error::io(path, e))?;
                fixed = true;
            }
        }
        Ok((
            Appender {
                file,
                path: path.to_path_buf(),
            },
            fixed,
        ))
    }

    /// Appends `value` as one line.
    ///
    /// # Errors
    /// [`Error::Io`] when the write fails.
    pub fn append<T: serde::Serialize>(&mut self, value: &T) -> Result<()> {
        let mut line = serde_json::to_vec(value).map_err(|e| Error::Runtime(e.to_string()))?;
        line.push(b'\n');
        self.file
            .write_all(&line)
            .and_then(|_| self.file.flush())
            .map_err(|e| Error::io(&self.path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torn_last_line_is_reported_and_next_append_starts_fresh() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.jsonl");
        std::fs::write(
            &p,
            "{\"id\":\"a\",\"sample\":0,\"attempts\":1,\"text\":\"x\"}\n\
             {\"id\":\"b\",\"sample\":0,\"attempts\":2,\"error\":{\"kind\":\"timeout\"}}\n\
             {\"id\":\"c\",\"sam",
        )
        .unwrap();
        let st = scan_output(&p).unwrap();
        assert_eq!(st.bad_lines, vec![3]);
        assert!(st.answered.contains(&("a".to_string(), 0)));
        assert!(st.failed.contains(&("b".to_string(), 0)));
        assert_eq!(st.records, 2);
        let (mut a, fixed) = Appender::open(&p).unwrap();
        assert!(fixed);
        a.append(&serde_json::json!({"id":"c","sample":0,"attempts":1,"text":"y"}))
            .unwrap();
        let st = scan_output(&p).unwrap();
        assert_eq!(st.bad_lines, vec![3]);
        assert!(st.answered.contains(&("c".to_string(), 0)));
        // A clean file needs no fix-up newline.
        let (_, fixed) = Appender::open(&p).unwrap();
        assert!(!fixed);
    }

    #[test]
    fn a_line_torn_inside_a_utf8_sequence_is_skipped_by_both_readers() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.jsonl");
        let good = "{\"id\":\"a\",\"sample\":0,\"model\":\"m\",\"text\":\"caf\u{e9}\",\"latency_ms\":1.0,\"elapsed_ms\":1.0,\"attempts\":1,\"cached\":false}\n";
        let mut bytes = b"\xEF\xBB\xBF".to_vec();
        bytes.extend_from_slice(good.as_bytes());
        // The second record cut after the first byte of the two-byte "é".
        let cut = good.replace("\"a\"", "\"b\"");
        let at = cut.find('\u{e9}').unwrap() + 1;
        bytes.extend_from_slice(&cut.as_bytes()[..at]);
        bytes.extend_from_slice(b"\n");
        bytes.extend_from_slice(good.replace("\"a\"", "\"c\"").as_bytes());
        std::fs::write(&p, &bytes).unwrap();
        let st = scan_output(&p).unwrap();
        assert_eq!(st.bad_lines, vec![2]);
        assert_eq!(st.records, 2);
        let recs = load_records(&p).unwrap();
        let mut ids: Vec<&str> = recs.keys().map(|k| k.0.as_str()).collect();
        ids.sort();
        assert_eq!(ids, ["a", "c"]);
        assert_eq!(
            recs[&("a".to_string(), 0)].text.as_deref(),
            Some("caf\u{e9}")
        );
    }

    #[test]
    fn a_complete_line_with_a_key_twice_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.jsonl");
        std::fs::write(
            &p,
            "{\"id\":\"a\",\"sample\":0,\"attempts\":1,\"text\":\"x\",\"text\":\"y\"}\n",
        )
        .unwrap();
        let e = scan_output(&p).unwrap_err().to_string();
        assert!(e.contains("out.jsonl:1: duplicate key 'text'"), "{e}");
    }

    #[test]
    fn a_foreign_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("requests.jsonl");
        std::fs::write(&p, "{\"id\":\"a\",\"messages\":[]}\n").unwrap();
        let e = scan_output(&p).unwrap_err().to_string();
        assert!(e.contains("requests.jsonl:1"), "{e}");
    }
}
