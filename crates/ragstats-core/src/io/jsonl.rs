//! The one JSONL reader: one JSON value per line, streamed with 1-based line numbers.
//!
//! Blank lines are skipped. Objects with a key given twice are refused (serde_json alone
//! would keep the last one silently). Errors name the file and line (see [`crate::io`]).
//! The same strict parser reads whole JSON documents ([`parse_document`]).

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde::de::{DeserializeOwned, Error as _, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::text::{clip, clip_to, utf16_bom, ECHO_CHARS, UTF8_BOM};
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

    /// Reads up to the next non-blank line; its bytes are `self.buf[range]`, without the line
    /// end and (on line 1) without a UTF-8 byte-order mark.
    fn fill(&mut self) -> Result<Option<(u64, std::ops::Range<usize>)>> {
        loop {
            self.buf.clear();
            // At most one byte past the limit (and its line break) is read: a file without
            // line breaks is refused, not read into memory whole.
            let most = super::MAX_LINE_BYTES as u64 + 2;
            let n = (&mut self.reader)
                .take(most)
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| Error::io(&self.path, e))?;
            if n == 0 {
                return Ok(None);
            }
            self.line += 1;
            if line_len(&self.buf) > super::MAX_LINE_BYTES {
                return Err(super::line_too_long(&self.path, self.line));
            }
            let mut start = 0;
            if self.line == 1 {
                if let Some(msg) = utf16_bom(&self.buf) {
                    return Err(Error::input(&self.path, Some(1), msg));
                }
                if self.buf.starts_with(UTF8_BOM) {
                    start = UTF8_BOM.len();
                }
            }
            let mut end = self.buf.len();
            while end > start && matches!(self.buf[end - 1], b'\n' | b'\r') {
                end -= 1;
            }
            let bytes = &self.buf[start..end];
            // Blank as `str::trim` sees it (Unicode white space), when the line is text.
            let blank = bytes.iter().all(u8::is_ascii_whitespace)
                || std::str::from_utf8(bytes).is_ok_and(|t| t.trim().is_empty());
            if !blank {
                return Ok(Some((self.line, start..end)));
            }
        }
    }

    /// The next non-blank line as bytes, not checked for UTF-8, with its 1-based line number.
    /// For readers that tolerate damaged lines (e.g. a torn last line after a crash).
    ///
    /// # Errors
    /// [`Error::Io`] on a read failure; [`Error::Input`] for UTF-16 text.
    pub fn next_bytes(&mut self) -> Result<Option<(u64, &[u8])>> {
        Ok(self.fill()?.map(|(line, r)| (line, &self.buf[r])))
    }

    /// The next non-blank line as text, with its 1-based line number.
    ///
    /// # Errors
    /// [`Error::Io`] on a read failure; [`Error::Input`] for invalid UTF-8 or UTF-16 text.
    pub fn next_line(&mut self) -> Result<Option<(u64, &str)>> {
        let Some((line, r)) = self.fill()? else {
            return Ok(None);
        };
        match std::str::from_utf8(&self.buf[r]) {
            Ok(text) => Ok(Some((line, text))),
            Err(_) => Err(Error::input(&self.path, Some(line), "not valid UTF-8")),
        }
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

/// Bytes of a line read with its line break, without the break (`\n` or `\r\n`).
fn line_len(buf: &[u8]) -> usize {
    match buf {
        [.., b'\r', b'\n'] => buf.len() - 2,
        [.., b'\n'] => buf.len() - 1,
        _ => buf.len(),
    }
}

/// Why a text is not accepted as a JSON value. Its text is a message for the user (without
/// the file and line, which the caller adds), with echoed input clipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsonError {
    /// Not JSON, or cut short.
    Syntax(String),
    /// An object names a key twice.
    DuplicateKey(String),
}

impl std::fmt::Display for JsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JsonError::Syntax(m) => write!(f, "not valid JSON: {m}"),
            JsonError::DuplicateKey(m) => f.write_str(m),
        }
    }
}

impl From<JsonError> for String {
    fn from(e: JsonError) -> String {
        e.to_string()
    }
}

/// Parses one JSON text, refusing objects with a key given twice.
///
/// # Errors
/// [`JsonError`] saying what is wrong.
pub fn parse_value(text: &str) -> std::result::Result<Value, JsonError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let v = Strict::deserialize(&mut de).and_then(|v| de.end().map(|_| v.0));
    v.map_err(|e| {
        let m = clip_error(&e.to_string());
        // The only data error the strict visitor raises is a repeated key.
        if e.classify() == serde_json::error::Category::Data {
            JsonError::DuplicateKey(m)
        } else {
            JsonError::Syntax(m)
        }
    })
}

/// Parses a whole JSON document (e.g. a components file) of `path` as `T`, refusing
/// duplicate keys. `what` says what the file should be, for messages.
///
/// # Errors
/// [`Error::Input`] `FILE:LINE: duplicate key 'k' …` or `FILE:LINE: {what}: {why}`.
pub fn parse_document<T: DeserializeOwned>(path: &Path, text: &str, what: &str) -> Result<T> {
    let at = |e: &serde_json::Error| Some(e.line() as u64).filter(|&l| l > 0);
    let mut de = serde_json::Deserializer::from_str(text);
    if let Err(e) = Strict::deserialize(&mut de).and_then(|_| de.end()) {
        let m = clip_error(&e.to_string());
        let msg = if e.classify() == serde_json::error::Category::Data {
            m
        } else {
            format!("{what}: {m}")
        };
        return Err(Error::input(path, at(&e), msg));
    }
    // Parsed again as `T` from the text, so that shape errors keep their line.
    serde_json::from_str(text).map_err(|e| {
        Error::input(
            path,
            at(&e),
            format!("{what}: {}", clip_error(&e.to_string())),
        )
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

/// A scalar as text, as a CSV cell would hold it: strings as they are, numbers and booleans
/// printed; `None` for null, arrays and objects.
pub fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A JSON value for an error message: its JSON text, clipped (see [`clip`]).
pub fn echo(v: &Value) -> String {
    clip(&v.to_string())
}

/// A serde message with every quoted part (between `"` or `` ` ``, where serde puts the
/// offending value) cut to [`ECHO_CHARS`] characters, and the whole to three times that (so
/// that a value with quotes of its own cannot make it long either).
pub fn clip_error(m: &str) -> String {
    let mut out = String::new();
    let mut quote: Option<char> = None;
    let mut kept = 0usize;
    for c in m.chars() {
        match quote {
            Some(q) if c == q => {
                if kept > ECHO_CHARS {
                    out.push('…');
                }
                out.push(c);
                quote = None;
            }
            Some(_) => {
                kept += 1;
                if kept <= ECHO_CHARS {
                    out.push(c);
                }
            }
            None => {
                out.push(c);
                if c == '"' || c == '`' {
                    quote = Some(c);
                    kept = 0;
                }
            }
        }
    }
    if quote.is_some() && kept > ECHO_CHARS {
        out.push('…');
    }
    clip_to(&out, 3 * ECHO_CHARS)
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
    fn a_line_past_the_limit_is_refused_with_its_line_and_one_at_it_is_read() {
        let max = crate::io::MAX_LINE_BYTES;
        let mut at = format!("{{\"a\":\"{}\"}}", "x".repeat(max - 8)).into_bytes();
        assert_eq!(at.len(), max);
        at.extend_from_slice(b"\r\n");
        let mut text = b"{}\n".to_vec();
        text.extend_from_slice(&at);
        text.extend(std::iter::repeat_n(b' ', max + 1));
        let got = lines(&text);
        assert_eq!(got.len(), 3);
        assert_eq!(got[1].as_ref().unwrap().0, 2);
        let e = got[2].as_ref().unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.jsonl:3: line longer than 64 MiB (67108864 bytes), the most one line of an input file may hold (is this a text file with line breaks?)"
        );
        assert_eq!(e.exit_code(), 2);
    }

    #[test]
    fn raw_lines_skip_blanks_and_the_bom_but_not_bad_utf8() {
        let mut r = JsonlReader::from_reader(
            Path::new("t.jsonl"),
            std::io::Cursor::new(b"\xEF\xBB\xBF{}\r\n \n{\"a\":\"\xC3\n{\"b\":1}".to_vec()),
        );
        assert_eq!(r.next_bytes().unwrap(), Some((1, &b"{}"[..])));
        assert_eq!(r.next_bytes().unwrap(), Some((3, &b"{\"a\":\"\xC3"[..])));
        assert_eq!(r.next_bytes().unwrap(), Some((4, &b"{\"b\":1}"[..])));
        assert_eq!(r.next_bytes().unwrap(), None);
    }

    #[test]
    fn documents_name_the_line_of_a_duplicate_key_or_a_bad_shape() {
        #[derive(serde::Deserialize, Debug)]
        struct Doc {
            n: u32,
        }
        let p = Path::new("c.json");
        let what = "not a test document";
        let d: Doc = parse_document(p, "{\n \"n\": 3\n}", what).unwrap();
        assert_eq!(d.n, 3);
        let e = parse_document::<Doc>(p, "{\n \"n\": 3,\n \"n\": 4\n}", what).unwrap_err();
        assert_eq!(
            e.to_string(),
            "c.json:3: duplicate key 'n' at line 3 column 4"
        );
        let e = parse_document::<Doc>(p, "{\n \"n\": \"x\"\n}", what).unwrap_err();
        assert_eq!(
            e.to_string(),
            "c.json:2: not a test document: invalid type: string \"x\", expected u32 at line 2 column 9"
        );
        let e = parse_document::<Doc>(p, "{\n \"n\": 3\n", what).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("c.json:3: not a test document: EOF while parsing"),
            "{e}"
        );
    }

    #[test]
    fn clip_error_cuts_each_quoted_value() {
        let long = "x".repeat(1000);
        let m = format!("invalid type: string \"{long}\", expected usize at line 2 column 5");
        assert_eq!(
            clip_error(&m),
            format!(
                "invalid type: string \"{}…\", expected usize at line 2 column 5",
                "x".repeat(80)
            )
        );
        let m = "unknown variant `okay`, expected one of `ok`, `parse_failed`, `error` at line 1 column 200";
        assert_eq!(clip_error(m), m);
        let m = format!("unknown field `{long}");
        assert_eq!(
            clip_error(&m),
            format!("unknown field `{}…", "x".repeat(80))
        );
    }

    #[test]
    fn a_long_field_is_not_echoed_whole() {
        let long = format!("{{\"a\": tru{}}}", "e".repeat(100_000));
        let e = parse_value(&long).unwrap_err();
        let JsonError::Syntax(m) = &e else {
            panic!("{e:?}")
        };
        assert!(m.chars().count() <= 3 * ECHO_CHARS + 1, "{m}");
        let e = parse_value(&format!("{{\"{0}\":1,\"{0}\":2}}", "k".repeat(1000))).unwrap_err();
        let JsonError::DuplicateKey(m) = &e else {
            panic!("{e:?}")
        };
        assert!(
            m.starts_with(&format!("duplicate key '{}…'", "k".repeat(80))),
            "{m}"
        );
    }
}
