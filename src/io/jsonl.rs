//! The one JSONL reader: one JSON value per line, streamed with 1-based line numbers.
//!
//! Blank lines are skipped. Objects with a key given twice are refused (serde_json alone
//! would keep the last one silently). Errors name the file and line (see [`crate::io`]).

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde::de::{DeserializeOwned, Error as _, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::text::{clip, utf16_bom, UTF8_BOM};
use crate::{Error, Result};

/// A JSONL file being read line by line.
pub struct JsonlReader {
    path: PathBuf,
    reader: Box<dyn BufRead + Send>,
    line: u64,
    buf: Vec<u8>,
}

impl std::fmt::Debug for JsonlReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonlReader")
            .field("path", &self.path)
            .field("line", &self.line)
            .finish()
    }
}

impl JsonlReader {
    /// Opens `path`.
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be opened.
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        Ok(Self::from_reader(
            path,
            BufReader::with_capacity(1 << 20, file),
        ))
    }

    /// Reads JSONL from `reader`; `path` names it in errors.
    pub fn from_reader(path: &Path, reader: impl BufRead + Send + 'static) -> Self {
        JsonlReader {
            path: path.to_path_buf(),
            reader: Box::new(reader),
            line: 0,
            buf: Vec::new(),
        }
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The next non-blank line as text, with its 1-based line number.
    ///
    /// # Errors
    /// [`Error::Io`] on a read failure; [`Error::Input`] for invalid UTF-8 or UTF-16 text.
    pub fn next_line(&mut self) -> Result<Option<(u64, &str)>> {
        let (start, end) = loop {
            self.buf.clear();
            let n = self
                .reader
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| Error::io(&self.path, e))?;
            if n == 0 {
                return Ok(None);
            }
            self.line += 1;
            let mut start = 0;
            if self.line == 1 {
                if let Some(msg) = utf16_bom(&self.buf) {
                    return Err(Error::input(&self.path, Some(1), msg));
                }
                if self.buf.starts_with(UTF8_BOM) {
                    start = UTF8_BOM.len();
                }
            }
            let text = std::str::from_utf8(&self.buf[start..])
                .map_err(|_| Error::input(&self.path, Some(self.line), "not valid UTF-8"))?;
            if !text.trim().is_empty() {
                break (start, start + text.trim_end_matches(['\n', '\r']).len());
            }
        };
        let text = std::str::from_utf8(&self.buf[start..end])
            .map_err(|_| Error::input(&self.path, Some(self.line), "not valid UTF-8"))?;
        Ok(Some((self.line, text)))
    }

    /// The next value and its line.
    ///
    /// # Errors
    /// As [`JsonlReader::next_line`], and [`Error::Input`] for a line that is not valid
    /// JSON or has an object key twice.
    pub fn next_value(&mut self) -> Result<Option<(u64, Value)>> {
        let path = self.path.clone();
        match self.next_line()? {
            None => Ok(None),
            Some((line, text)) => parse_value(text)
                .map(|v| Some((line, v)))
                .map_err(|msg| Error::input(path, Some(line), msg)),
        }
    }

    /// The next line as a JSON object (its key → value map) and its line.
    ///
    /// # Errors
    /// As [`JsonlReader::next_value`], and for a value that is not an object.
    pub fn next_object(&mut self) -> Result<Option<(u64, Map<String, Value>)>> {
        match self.next_value()? {
            None => Ok(None),
            Some((line, Value::Object(m))) => Ok(Some((line, m))),
            Some((line, v)) => Err(Error::input(
                &self.path,
                Some(line),
                format!("expected a JSON object, found {}", kind(&v)),
            )),
        }
    }

    /// The next line deserialised as `T` (after the duplicate-key check), and its line.
    ///
    /// # Errors
    /// As [`JsonlReader::next_value`], and when the value does not have `T`'s shape.
    pub fn next_as<T: DeserializeOwned>(&mut self) -> Result<Option<(u64, T)>> {
        match self.next_value()? {
            None => Ok(None),
            Some((line, v)) => serde_json::from_value(v)
                .map(|t| Some((line, t)))
                .map_err(|e| Error::input(&self.path, Some(line), clip_error(&e.to_string()))),
        }
    }
}

/// Parses one JSON text, refusing objects with a key given twice. The error is a message
/// for the user (without the file and line, which the caller adds).
pub fn parse_value(text: &str) -> std::result::Result<Value, String> {
    let mut de = serde_json::Deserializer::from_str(text);
    let v = Strict::deserialize(&mut de).and_then(|v| de.end().map(|_| v.0));
    v.map_err(|e| {
        let m = e.to_string();
        if m.starts_with("duplicate key") {
            clip_error(&m)
        } else {
            format!("not valid JSON: {}", clip_error(&m))
        }
    })
}

/// The JSON type of `v`, for messages.
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A serde message cut so that an echoed field never runs past the echo limit.
fn clip_error(m: &str) -> String {
    clip_to_words(m)
}

fn clip_to_words(m: &str) -> String {
    // serde messages quote the offending value; keep room for the wording around it.
    super::text::clip_to(m, 2 * super::text::ECHO_CHARS)
}

/// A [`Value`] built by a visitor that refuses duplicate object keys.
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> std::result::Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> std::result::Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> std::result::Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> std::result::Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> std::result::Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> std::result::Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Value, D::Error> {
        Strict::deserialize(d).map(|s| s.0)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            if out.contains_key(&k) {
                return Err(A::Error::custom(format!("duplicate key '{}'", clip(&k))));
            }
            let Strict(v) = map.next_value()?;
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(bytes: &[u8]) -> Vec<Result<(u64, Value)>> {
        let mut r =
            JsonlReader::from_reader(Path::new("t.jsonl"), std::io::Cursor::new(bytes.to_vec()));
        let mut out = Vec::new();
        loop {
            match r.next_value() {
                Ok(None) => break,
                Ok(Some(x)) => out.push(Ok(x)),
                Err(e) => {
                    out.push(Err(e));
                    break;
                }
            }
        }
        out
    }

    #[test]
    fn values_carry_their_lines_blank_lines_skipped() {
        let got = lines(b"\xEF\xBB\xBF{\"a\":1}\r\n\n  \n[2]\n");
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].as_ref().unwrap(), &(1, serde_json::json!({"a": 1})));
        assert_eq!(got[1].as_ref().unwrap(), &(4, serde_json::json!([2])));
    }

    #[test]
    fn duplicate_keys_bad_json_and_bad_utf8_are_errors_with_lines() {
        let got = lines(b"{\"a\":1}\n{\"a\":1,\"b\":{\"c\":1,\"c\":2}}\n");
        assert_eq!(
            got[1].as_ref().unwrap_err().to_string(),
            "t.jsonl:2: duplicate key 'c' at line 1 column 21"
        );
        let got = lines(b"{\"a\":1}\n{\"a\":\xFF}\n");
        assert_eq!(
            got[1].as_ref().unwrap_err().to_string(),
            "t.jsonl:2: not valid UTF-8"
        );
        let got = lines(b"{\"a\":1} x\n");
        assert!(got[0]
            .as_ref()
            .unwrap_err()
            .to_string()
            .starts_with("t.jsonl:1: not valid JSON: trailing characters"));
        let got = lines(b"\xFE\xFF\0{");
        assert!(got[0]
            .as_ref()
            .unwrap_err()
            .to_string()
            .starts_with("t.jsonl:1: UTF-16"));
    }

    #[test]
    fn a_long_field_is_not_echoed_whole() {
        let long = format!("{{\"a\": tru{}}}", "e".repeat(100_000));
        let e = parse_value(&long).unwrap_err();
        assert!(
            e.chars().count() <= 2 * crate::io::text::ECHO_CHARS + 1,
            "{e}"
        );
    }
}
