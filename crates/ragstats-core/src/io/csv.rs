//! The one CSV reader: a header row, then records streamed with their 1-based line numbers,
//! one by one ([`CsvReader::next_record`]) or in pieces parsed on all rayon threads
//! ([`CsvReader::par_fold`]).
//!
//! Fields and header names are trimmed of surrounding white space. Rows must have as many
//! fields as the header. Errors name the file and line (see [`crate::io`] for the rules).
//!
//! A record's line, in both ways of reading and in every error about the record, is the
//! 1-based line of the file on which the record starts: `\n`, `\r\n` and a lone `\r` each
//! end a line, blank lines (skipped) count, and a byte-order mark does not. A quoted field
//! may hold line breaks: the record is still at the line it starts on, and the lines it
//! spans count for the records after it. The csv crate's own position does not give this
//! (it places a record where the previous one ended, before the `\n` of a `\r\n` and
//! before blank lines, and counts `\n` bytes only), so the lines are counted here from the
//! records' byte offsets (`Lines`).

use std::fs::File;
use std::io::{BufReader, Read};
use std::ops::Range;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::text::{clip, clip_list, utf16_bom, UTF8_BOM};
use crate::{Error, Result};

/// Bytes [`CsvReader::par_fold`] reads at a time before parsing them in parallel.
pub const PAR_CHUNK_BYTES: usize = 8 << 20;

/// Pieces [`CsvReader::par_fold`] parses are at least this long (or a thread's share of a
/// chunk, when chunks are smaller): below it a thread's start costs more than it saves.
const MIN_PIECE_BYTES: usize = 32 << 10;

/// A CSV file being read record by record.
pub struct CsvReader {
    path: PathBuf,
    rdr: ::csv::Reader<Lines<'static, Box<dyn Read + Send>>>,
    headers: Vec<String>,
    /// The line the header starts on (after any blank lines).
    header_line: u64,
    rec: ::csv::StringRecord,
    /// The parser's byte offset after the header; while it is still there, no record has
    /// been read, and the bytes the stream kept from there on (see [`Lines`]) are the start
    /// of the records, which [`CsvReader::par_fold`] takes from under the parser (the csv
    /// crate gives no access to its buffer).
    header_end: u64,
}

/// A byte stream that keeps what it read from the last counted byte on, so that each record
/// read from it can be given the line it starts on: the csv crate's `Position` of a record
/// is where the previous one ended (before the `\n` of a `\r\n`, before blank lines), and
/// its line counts `\n` bytes only.
///
/// Offsets are of this stream (after a byte-order mark, which holds no line break). What was
/// read before the counted byte (the start of the last record given a line) is dropped at
/// the next read, so it keeps about that record and the parser's buffer, and each byte is
/// counted once. Over a byte slice ([`Lines::over`]) nothing is copied: the slice is the
/// view.
struct Lines<'a, R> {
    inner: R,
    /// Bytes read, from offset `kept_from` on (unused over a slice).
    kept: Vec<u8>,
    kept_from: u64,
    /// The whole input, when it is a slice in memory with no `"` ([`Lines::over`]): then
    /// `kept_from` stays 0 and this is what `kept` would hold.
    whole: Option<&'a [u8]>,
    /// Index in `kept` up to which lines are counted, and where counting got to there.
    counted: usize,
    pos: LinePos,
}

impl<R: Read> Read for Lines<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.whole.is_some() {
            return self.inner.read(buf);
        }
        if self.counted > 0 {
            self.kept.drain(..self.counted);
            self.kept_from += self.counted as u64;
            self.counted = 0;
        }
        let n = self.inner.read(buf)?;
        self.kept.extend_from_slice(&buf[..n]);
        Ok(n)
    }
}

impl<'a> Lines<'a, &'a [u8]> {
    /// Lines over `text`, which holds no `"` (so that the line breaks between two records'
    /// starts are the run of terminators before the second) and whose first byte is at
    /// `pos`. The slice itself is the view; nothing is copied.
    fn over(text: &'a [u8], pos: LinePos) -> Self {
        Lines {
            whole: Some(text),
            ..Lines::new(text, pos)
        }
    }
}

impl<R> Lines<'_, R> {
    /// `inner`, whose first byte is at `pos`.
    fn new(inner: R, pos: LinePos) -> Self {
        Lines {
            inner,
            kept: Vec::new(),
            kept_from: 0,
            whole: None,
            counted: 0,
            pos,
        }
    }

    /// The bytes kept, from offset `kept_from` on.
    fn view(&self) -> &[u8] {
        self.whole.unwrap_or(&self.kept)
    }

    /// Index in the view of stream offset `byte`, within the view.
    fn index(&self, byte: u64) -> usize {
        let len = self.view().len();
        usize::try_from(byte.saturating_sub(self.kept_from)).map_or(len, |i| i.min(len))
    }

    /// Counts lines up to index `to` of the view (when past what was counted) and returns
    /// where counting got to.
    fn count_to(&mut self, to: usize) -> LinePos {
        if to > self.counted {
            let text = &self.view()[self.counted..to];
            self.pos = if self.whole.is_some() {
                // `text` runs from a record's first byte (or a piece's start) to the next
                // record's: a record's fields, then terminators. A slice has no quotes, so
                // its fields hold no line break, and only the trailing run of terminators
                // is counted; the byte before it, if any, is a field's, not a `\r`.
                let run = text.iter().rev().take_while(|&&b| is_terminator(b)).count();
                let start = text.len() - run;
                let before = LinePos {
                    line: self.pos.line,
                    after_cr: self.pos.after_cr && start == 0,
                };
                before.past(&text[start..])
            } else {
                self.pos.past(text)
            };
            self.counted = to;
        }
        self.pos
    }

    /// The line on which the record the parser placed at stream offset `byte` starts: its
    /// first byte past the line breaks the parser skips there (blank lines, the `\n` of the
    /// previous record's `\r\n`). Records must come in order; the parser has read past the
    /// record's first byte, so it is kept.
    fn record_line(&mut self, byte: u64) -> u64 {
        let from = self.index(byte);
        let skipped = self.view()[from..]
            .iter()
            .take_while(|&&b| is_terminator(b))
            .count();
        self.count_to(from + skipped).line
    }

    /// The line [`Lines::record_line`] gives the record of a csv error, if it has one.
    fn error_line(&mut self, e: &::csv::Error) -> Option<u64> {
        e.position().map(|p| self.record_line(p.byte()))
    }
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
        let stream = Lines::new(
            Box::new(LineLimit::new(
                std::io::Cursor::new(head[skip..].to_vec()).chain(reader),
            )) as Box<_>,
            LinePos::START,
        );
        let mut rdr = ::csv::ReaderBuilder::new()
            .has_headers(true)
            .flexible(false)
            // Fields are trimmed as they are read (Record::get): the csv crate's Trim::All
            // rebuilds every record in a fresh allocation (about 12 % of the time, plus
            // the allocator's, in a profile of loading a 160,000-row panel).
            .trim(::csv::Trim::Headers)
            .from_reader(stream);
        let headers: Vec<String> = match rdr.headers() {
            Ok(headers) => headers.iter().map(str::to_string).collect(),
            Err(e) => return Err(csv_error(path, e, rdr.get_mut())),
        };
        if headers.is_empty() || headers.iter().all(String::is_empty) {
            return Err(Error::input(
                path,
                Some(1),
                "empty file: expected a header row",
            ));
        }
        let header_line = rdr.get_mut().record_line(0);
        for (i, h) in headers.iter().enumerate() {
            if headers[..i].contains(h) {
                return Err(Error::input(
                    path,
                    Some(header_line),
                    format!("column '{}' appears twice in the header", clip(h)),
                ));
            }
        }
        Ok(CsvReader {
            path: path.to_path_buf(),
            // Positions count the bytes of `stream` the parser consumed, so what it read
            // beyond them is still in its buffer, unparsed (and kept by the stream).
            header_end: rdr.position().byte(),
            rdr,
            headers,
            header_line,
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

    /// Renames the header's columns (`--columns`: a column read as a role); `names` has one
    /// name per column.
    pub fn rename_headers(&mut self, names: Vec<String>) {
        debug_assert_eq!(names.len(), self.headers.len());
        self.headers = names;
    }

    /// The line the header is on: 1, unless blank lines come before it. Errors about the
    /// header (a missing column) name this line.
    pub fn header_line(&self) -> u64 {
        self.header_line
    }

    /// Index of column `name`, if the header has it.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.headers.iter().position(|h| h == name)
    }

    /// Index of column `name`, or an error naming `what` (e.g. `--x`) and the columns there are.
    ///
    /// # Errors
    /// [`Error::Input`] at the header's line when the header lacks `name`.
    pub fn require(&self, name: &str, what: &str) -> Result<usize> {
        self.column(name).ok_or_else(|| {
            Error::input(
                &self.path,
                Some(self.header_line),
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
                let byte = self.rec.position().map_or(0, ::csv::Position::byte);
                let line = self.rdr.get_mut().record_line(byte);
                Ok(Some((line, Record(&self.rec))))
            }
            Err(e) => Err(csv_error(&self.path, e, self.rdr.get_mut())),
        }
    }

    /// Folds the records not yet read into states, parsing pieces of the file on all rayon
    /// threads; returns the states in file order (at least one).
    ///
    /// The rest of the input is read about `chunk_bytes` at a time (production:
    /// [`PAR_CHUNK_BYTES`]); each chunk is cut at record boundaries into up to one piece per
    /// thread of [`rayon::current_num_threads`], and each piece is folded into its own state
    /// `init()` by calling `f` on its records in order, each with the line
    /// [`CsvReader::next_record`] gives it. Folding the states in order is therefore folding
    /// the whole file in order.
    ///
    /// It reads record by record, into one state, where pieces could parse differently from
    /// that: on one thread, after records were read with [`CsvReader::next_record`], and from
    /// the chunk where a `"` appears (a quoted field may hold a line break, so a line break
    /// no longer tells where a record ends).
    ///
    /// # Errors
    /// The error [`CsvReader::next_record`] or `f` gives at the first record, in file order,
    /// that fails (so the same error the sequential reader gives); [`Error::Io`] when the file
    /// cannot be read.
    pub fn par_fold<S, I, F>(mut self, chunk_bytes: usize, init: I, f: F) -> Result<Vec<S>>
    where
        S: Send,
        I: Fn() -> S + Sync,
        F: Fn(&mut S, u64, Record<'_>) -> Result<()> + Sync,
    {
        let threads = rayon::current_num_threads();
        let fresh = self.rdr.position().byte() == self.header_end;
        let src = self.rdr.get_mut();
        let start = src.index(self.header_end);
        // A fresh parser drops a UTF-8 byte-order mark at its start, which mid-file is a
        // field's first character: no piece may start with its first byte. When the parser
        // has buffered nothing past the header (a 3-byte header, or one ending where a
        // read of the parser ended), the first record's first byte is unknown, so the
        // file is read record by record.
        if !fresh || threads < 2 || src.view().get(start).is_none_or(|&b| b == UTF8_BOM[0]) {
            return self.fold_records(init, f);
        }
        // Where counting lines is right after the header; the records take their lines
        // from there.
        let pos = src.count_to(start);
        let Lines {
            inner, mut kept, ..
        } = self.rdr.into_inner();
        kept.drain(..start);
        let folder = Folder {
            path: &self.path,
            expected: self.headers.len(),
            init: &init,
            f: &f,
            threads,
            chunk_bytes: chunk_bytes.max(1),
        };
        folder.fold_stream(kept, inner, pos)
    }

    /// [`CsvReader::par_fold`] on one thread: every record through `next_record`.
    fn fold_records<S>(
        mut self,
        init: impl Fn() -> S,
        f: impl Fn(&mut S, u64, Record<'_>) -> Result<()>,
    ) -> Result<Vec<S>> {
        let mut state = init();
        while let Some((line, rec)) = self.next_record()? {
            f(&mut state, line, rec)?;
        }
        Ok(vec![state])
    }
}

/// The settings of one [`CsvReader::par_fold`].
struct Folder<'a, I, F> {
    path: &'a Path,
    /// The header's number of fields, which every record must have.
    expected: usize,
    init: &'a I,
    f: &'a F,
    threads: usize,
    chunk_bytes: usize,
}

impl<S, I, F> Folder<'_, I, F>
where
    S: Send,
    I: Fn() -> S + Sync,
    F: Fn(&mut S, u64, Record<'_>) -> Result<()> + Sync,
{
    /// Folds `start` and then the rest of `stream`, chunk by chunk. `start` begins at a
    /// record boundary, where counting lines is at `pos`.
    fn fold_stream(
        &self,
        start: Vec<u8>,
        mut stream: Box<dyn Read + Send>,
        mut pos: LinePos,
    ) -> Result<Vec<S>> {
        let mut states = Vec::new();
        let mut buf = start;
        let mut eof = false;
        let mut want = self.chunk_bytes;
        // Past the chunk's size, `buf` has no boundary before this.
        let mut searched = 0;
        // `buf` has no `"` before this.
        let mut unquoted = 0;
        loop {
            if !eof {
                match fill(&mut stream, &mut buf, want) {
                    Ok(end) => eof = end,
                    Err(e) => {
                        // What was read is parsed first, as the sequential reader would,
                        // then the stream fails where it failed.
                        let failing = std::io::Cursor::new(buf).chain(Failing(Some(e)));
                        states.push(self.one_piece(Lines::new(failing, pos))?);
                        return Ok(states);
                    }
                }
            }
            // A `"` allows a line break inside a field, so from here on only the csv
            // parser itself can tell where records end.
            if buf[unquoted..].contains(&b'"') {
                let rest = std::io::Cursor::new(buf).chain(stream);
                states.push(self.one_piece(Lines::new(rest, pos))?);
                return Ok(states);
            }
            unquoted = buf.len();
            let cut = if eof && buf.len() <= self.chunk_bytes {
                Some(buf.len())
            } else {
                chunk_end(&buf, self.chunk_bytes, searched).or(eof.then_some(buf.len()))
            };
            let Some(cut) = cut else {
                // Not one record ends in what was read: read more.
                searched = buf.len();
                want = buf.len() + self.chunk_bytes;
                continue;
            };
            pos = self.fold_chunk(&buf[..cut], pos, &mut states)?;
            buf.drain(..cut);
            if eof && buf.is_empty() {
                return Ok(states);
            }
            (want, searched, unquoted) = (self.chunk_bytes, 0, buf.len());
        }
    }

    /// Folds `text`, which begins at a record boundary where counting lines is at `pos` and
    /// ends at one, in pieces in parallel; appends their states to `states` in order and
    /// returns where counting lines is past `text`.
    fn fold_chunk(&self, text: &[u8], pos: LinePos, states: &mut Vec<S>) -> Result<LinePos> {
        let min_piece = MIN_PIECE_BYTES.min(self.chunk_bytes / self.threads).max(1);
        let pieces = split(text, self.threads.min(text.len() / min_piece).max(1));
        if pieces.len() == 1 {
            states.push(self.one_piece(Lines::over(text, pos))?);
            return Ok(pos.past(text));
        }
        // Whether the byte before `text[s]` is a `\r`.
        let after_cr = |s: usize| match s {
            0 => pos.after_cr,
            s => text[s - 1] == b'\r',
        };
        let breaks: Vec<u64> = pieces
            .par_iter()
            .map(|r| count_lines(&text[r.clone()], after_cr(r.start)))
            .collect();
        let starts: Vec<LinePos> = pieces
            .iter()
            .zip(&breaks)
            .scan(pos.line, |line, (r, n)| {
                let at = LinePos {
                    line: *line,
                    after_cr: after_cr(r.start),
                };
                *line += n;
                Some(at)
            })
            .collect();
        let folded: Vec<(S, Result<()>)> = pieces
            .into_par_iter()
            .zip(starts)
            .map(|(r, at)| {
                let mut state = (self.init)();
                let done = self.fold_piece(Lines::over(&text[r], at), &mut state);
                (state, done)
            })
            .collect();
        // The earliest piece that failed holds the first failing record of the chunk.
        for (state, done) in folded {
            done?;
            states.push(state);
        }
        Ok(LinePos {
            line: pos.line + breaks.iter().sum::<u64>(),
            after_cr: after_cr(text.len()),
        })
    }

    /// A fresh state with the records of `input` folded into it (see [`Folder::fold_piece`]).
    fn one_piece<R: Read>(&self, input: Lines<'_, R>) -> Result<S> {
        let mut state = (self.init)();
        self.fold_piece(input, &mut state)?;
        Ok(state)
    }

    /// Folds the records of `input` into `state`, stopping at the first error. `input` begins
    /// at a record boundary (not with a byte-order mark's first byte), where its count of
    /// lines starts.
    ///
    /// A fresh csv parser there is in the state the sequential one is in after the previous
    /// record's terminator (a `\n`, or a `\r` whose `\n` is still to come, which either
    /// parser skips as a blank line), and the records' lines are counted as the sequential
    /// reader counts them, from `pos` (see [`Lines`]).
    fn fold_piece<R: Read>(&self, input: Lines<'_, R>, state: &mut S) -> Result<()> {
        // Field counts are checked here, not by the parser, because the sequential reader
        // checks them before UTF-8 and `flexible(false)` would check the piece's first
        // record, not the header.
        let mut rdr = ::csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(input);
        let mut bytes = ::csv::ByteRecord::new();
        while rdr
            .read_byte_record(&mut bytes)
            .map_err(|e| csv_error(self.path, e, rdr.get_mut()))?
        {
            let byte = bytes.position().map_or(0, ::csv::Position::byte);
            let line = rdr.get_mut().record_line(byte);
            if bytes.len() != self.expected {
                let msg = unequal_lengths(bytes.len() as u64, self.expected as u64);
                return Err(Error::input(self.path, Some(line), msg));
            }
            let rec = ::csv::StringRecord::from_byte_record(bytes)
                .map_err(|_| Error::input(self.path, Some(line), "not valid UTF-8"))?;
            (self.f)(state, line, Record(&rec))?;
            bytes = rec.into_byte_record();
        }
        Ok(())
    }
}

/// Reads from `stream` onto `buf` until it holds `want` bytes; `true` at the end of the
/// stream.
fn fill(stream: &mut impl Read, buf: &mut Vec<u8>, want: usize) -> std::io::Result<bool> {
    let missing = want.saturating_sub(buf.len());
    buf.reserve(missing);
    let got = stream.take(missing as u64).read_to_end(buf)?;
    Ok(got < missing)
}

/// A byte stream that fails ([`LineTooLong`]) once a line runs past
/// [`MAX_LINE_BYTES`](super::MAX_LINE_BYTES) bytes without a line break, so that neither
/// the parser nor [`CsvReader::par_fold`] (which reads on until a record ends) holds an
/// unbounded line. It fails before passing on any byte past the last line break ahead of
/// the long line, so that the bytes given out end on the long line (or just before it),
/// where [`csv_error`] counts its line.
struct LineLimit<R> {
    inner: R,
    /// Bytes since the last line break given out.
    run: usize,
    /// The bytes after the last line break given out hold a line past the limit.
    over: bool,
}

/// The error [`LineLimit`] fails with.
#[derive(Debug)]
struct LineTooLong;

impl std::fmt::Display for LineTooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("line too long")
    }
}

impl std::error::Error for LineTooLong {}

impl<R> LineLimit<R> {
    fn new(inner: R) -> Self {
        LineLimit {
            inner,
            run: 0,
            over: false,
        }
    }
}

impl<R: Read> Read for LineLimit<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let too_long = || std::io::Error::other(LineTooLong);
        if self.over {
            return Err(too_long());
        }
        let n = self.inner.read(buf)?;
        let text = &buf[..n];
        let max = super::MAX_LINE_BYTES;
        let Some(first) = text.iter().position(|&b| is_terminator(b)) else {
            self.run += n;
            return if self.run > max {
                Err(too_long())
            } else {
                Ok(n)
            };
        };
        if self.run + first > max {
            return Err(too_long());
        }
        // Only a read longer than the limit can hold a whole line past it.
        if n > max {
            let mut start = first + 1;
            while start < n {
                let end = text[start..]
                    .iter()
                    .position(|&b| is_terminator(b))
                    .map_or(n, |i| start + i);
                if end - start > max {
                    self.over = true;
                    return Ok(start);
                }
                start = end + 1;
            }
        }
        self.run = n
            - 1
            - text
                .iter()
                .rposition(|&b| is_terminator(b))
                .unwrap_or(first);
        Ok(n)
    }
}

/// A reader whose first read fails with the error it holds.
struct Failing(Option<std::io::Error>);

impl Read for Failing {
    fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
        self.0.take().map_or(Ok(0), Err)
    }
}

fn is_terminator(b: u8) -> bool {
    b == b'\n' || b == b'\r'
}

/// Whether a piece may start at `text[s]` of quote-free text that begins at a record
/// boundary: `s` follows a record's terminator (a line break after a non-blank line), and
/// `text[s]`, known, is not a byte-order mark's first byte.
fn is_boundary(text: &[u8], s: usize) -> bool {
    s >= 2
        && s < text.len()
        && is_terminator(text[s - 1])
        && !is_terminator(text[s - 2])
        && text[s] != UTF8_BOM[0]
}

/// Where a chunk of about `size` bytes at the start of `text` ends: at its last boundary
/// up to `size`, else at its first after (from `from` on, what was not searched before).
fn chunk_end(text: &[u8], size: usize, from: usize) -> Option<usize> {
    (2..=size.min(text.len()))
        .rev()
        .find(|&s| is_boundary(text, s))
        .or_else(|| (size.max(from)..text.len()).find(|&s| is_boundary(text, s)))
}

/// `text` cut into up to `n` pieces of about equal length at boundaries.
fn split(text: &[u8], n: usize) -> Vec<Range<usize>> {
    let mut cuts = vec![0];
    for i in 1..n {
        let from = (text.len() / n * i).max(cuts[cuts.len() - 1] + 1);
        if let Some(cut) = (from..text.len()).find(|&s| is_boundary(text, s)) {
            cuts.push(cut);
        }
    }
    cuts.push(text.len());
    cuts.windows(2).map(|w| w[0]..w[1]).collect()
}

/// Where counting line breaks has got to at some byte of the input: the line that byte is on
/// (1-based), and whether the byte before it is a `\r` (then a `\n` there ends the same line
/// break). `\n`, `\r\n` and a lone `\r` are one line break each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LinePos {
    line: u64,
    after_cr: bool,
}

impl LinePos {
    /// The start of the input.
    const START: LinePos = LinePos {
        line: 1,
        after_cr: false,
    };

    /// Where counting is past `text`, which comes here.
    fn past(self, text: &[u8]) -> LinePos {
        match text.last() {
            None => self,
            Some(&last) => LinePos {
                line: self.line + count_lines(text, self.after_cr),
                after_cr: last == b'\r',
            },
        }
    }
}

/// The line breaks that start in `text` (a `\r`, or a `\n` not right after a `\r`);
/// `after_cr`: whether the byte before `text` is a `\r`.
fn count_lines(text: &[u8], after_cr: bool) -> u64 {
    let Some(&first) = text.first() else {
        return 0;
    };
    let starts_break = |prev: u8, b: u8| b == b'\r' || (b == b'\n' && prev != b'\r');
    let first = starts_break(if after_cr { b'\r' } else { 0 }, first);
    // Each byte with the one before it, summed in bytes over blocks of up to 255, which the
    // compiler turns into a byte per vector lane; a plain count sums into 64-bit lanes, two
    // per vector (a tenth of the parse time in a profile).
    let rest: u64 = text
        .chunks(255)
        .zip(text[1..].chunks(255))
        .map(|(prev, block)| {
            prev.iter()
                .zip(block)
                .fold(0u8, |n, (&p, &b)| n + u8::from(starts_break(p, b))) as u64
        })
        .sum();
    u64::from(first) + rest
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

/// The message for a record of `len` fields under a header of `expected`.
fn unequal_lengths(len: u64, expected: u64) -> String {
    format!("row has {len} fields; the header has {expected}")
}

/// A csv crate error as ours, at the line `src` gives its record.
fn csv_error<R>(path: &Path, e: ::csv::Error, src: &mut Lines<'_, R>) -> Error {
    let line = src.error_line(&e).or(Some(1));
    let msg = match e.kind() {
        ::csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => unequal_lengths(*len, *expected_len),
        ::csv::ErrorKind::Utf8 { .. } => "not valid UTF-8".to_string(),
        ::csv::ErrorKind::Io(io) if io.get_ref().is_some_and(|e| e.is::<LineTooLong>()) => {
            // The bytes read end on the long line (see `LineLimit`).
            let end = src.view().len();
            return super::line_too_long(path, src.count_to(end).line);
        }
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
    fn par_fold_keeps_a_mark_that_starts_the_first_record_after_a_short_header() {
        // With a 3-byte header the parser has buffered nothing past it when the fold takes
        // over; a U+FEFF starting the first record is a field's first character and must
        // be kept, as record-by-record reading keeps it.
        let text = "ab\n\u{FEFF}x\ny\nz\n".as_bytes();
        let want = vec![
            (2, vec!["\u{FEFF}x".to_string()]),
            (3, vec!["y".to_string()]),
            (4, vec!["z".to_string()]),
        ];
        assert_eq!(all(text).unwrap(), want);
        for chunk in [1, 2, 7, 64] {
            assert_eq!(par_all(text, chunk, 2).unwrap().0, want, "chunk {chunk}");
        }
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
        // A record after a blank line is on its own line, not the blank one's.
        let rows = all(b"a\n1\n\n2\n").unwrap();
        assert_eq!(rows[1].0, 4);
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
        let e = r.require("zz", "x ").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.csv:1: x column 'zz' not found; the columns are: a, b"
        );
    }

    type Rows = Vec<(u64, Vec<String>)>;

    /// `par_fold` of `bytes` on a pool of `threads` threads, in chunks of `chunk` bytes: the
    /// records in state order, and the number of states (pieces).
    fn par_all(bytes: &[u8], chunk: usize, threads: usize) -> Result<(Rows, usize)> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let states = pool.install(|| {
            reader(bytes)?.par_fold(chunk, Vec::new, |rows: &mut Rows, line, rec| {
                rows.push((line, rec.iter().map(str::to_string).collect()));
                Ok(())
            })
        })?;
        let n = states.len();
        Ok((states.into_iter().flatten().collect(), n))
    }

    /// `n` rows of three fields (with spaces to trim and some non-ASCII text) ending in
    /// `eol`; after every `blank_every`-th row a blank line or two.
    fn body(n: usize, eol: &str, blank_every: usize) -> String {
        let mut s = String::new();
        for i in 0..n {
            s.push_str(&format!("q{}, x{i} é ,{}{eol}", i / 3, i % 7));
            if blank_every > 0 && i % blank_every == blank_every - 1 {
                s.push_str(&eol.repeat(1 + i % 2));
            }
        }
        s
    }

    /// [`body`] under a header.
    fn generated(n: usize, eol: &str, blank_every: usize) -> String {
        format!("a, b ,c{eol}{}", body(n, eol, blank_every))
    }

    /// Texts whose pieces parse alike: LF, CRLF and CR line ends, blank lines (also right
    /// after the header), no final line break, a field starting with U+FEFF mid-file.
    fn par_inputs() -> Vec<String> {
        vec![
            generated(400, "\n", 0),
            generated(400, "\n", 5),
            generated(400, "\r\n", 4),
            generated(300, "\r", 6),
            generated(300, "\n", 7) + "last, row ,1",
            format!("a,b,c\r\n\r\n\n{}", body(200, "\r\n", 3)),
            format!(
                "{}\u{FEFF}x,1,2\n\u{FEFF}y,3,4\r\nz,5,6\n{}",
                generated(200, "\n", 0),
                body(200, "\n", 9)
            ),
        ]
    }

    #[test]
    fn par_fold_reads_what_next_record_reads() {
        for text in par_inputs() {
            let want = all(text.as_bytes()).unwrap();
            assert!(want.len() >= 200);
            for threads in [2, 3] {
                for chunk in [1, 7, 64, 100, 1000, PAR_CHUNK_BYTES] {
                    let (got, pieces) = par_all(text.as_bytes(), chunk, threads).unwrap();
                    assert_eq!(got, want, "chunk {chunk}, {threads} threads: {text:?}");
                    // Pieces really were parsed apart, across chunks.
                    if chunk <= 1000 {
                        assert!(pieces > 3, "chunk {chunk}: {pieces} pieces");
                    }
                }
            }
        }
    }

    /// The lines of the records of `bytes`, which `next_record` and `par_fold` (on 2 and 3
    /// threads, in chunks cut anywhere) must agree on; or the error they must agree on.
    fn lines_both(bytes: &[u8]) -> std::result::Result<Vec<u64>, String> {
        let lines = |rows: Rows| rows.into_iter().map(|(line, _)| line).collect();
        let want = all(bytes).map(lines).map_err(|e| e.to_string());
        for threads in [2, 3] {
            for chunk in [1, 2, 5, 64, PAR_CHUNK_BYTES] {
                let got = par_all(bytes, chunk, threads)
                    .map(|(rows, _)| lines(rows))
                    .map_err(|e| e.to_string());
                assert_eq!(got, want, "chunk {chunk}, {threads} threads: {bytes:?}");
            }
        }
        want
    }

    #[test]
    fn records_start_on_their_own_line_for_every_line_end() {
        // Line 1 the header, then records on lines 2 and 3.
        for text in [
            &b"a,b\n1,2\n3,4\n"[..],
            b"a,b\r\n1,2\r\n3,4\r\n",
            b"a,b\r1,2\r3,4\r",
            b"a,b\r1,2\r3,4",
            b"\xEF\xBB\xBFa,b\r\n1,2\r\n3,4",
        ] {
            assert_eq!(lines_both(text), Ok(vec![2, 3]), "{text:?}");
        }
        // Blank lines right after the header and between records: line 2 blank, a record
        // on 3, lines 4 and 5 blank, a record on 6.
        for text in [
            &b"a,b\n\n1,2\n\n\n3,4\n"[..],
            b"a,b\r\n\r\n1,2\r\n\r\n\r\n3,4\r\n",
            b"a,b\r\r1,2\r\r\r3,4\r",
            b"\xEF\xBB\xBFa,b\r\n\r\n1,2\r\n\r\n\r\n3,4\r\n\r\n",
        ] {
            assert_eq!(lines_both(text), Ok(vec![3, 6]), "{text:?}");
        }
        // Mixed: `a,b\n` (1), `\r\n` (2, blank), `1,2\r` (3), `\r\n` (4, blank), `3,4\n` (5),
        // `\r` (6, blank), `5,6` (7); `\n\r` is two line breaks.
        assert_eq!(
            lines_both(b"a,b\n\r\n1,2\r\r\n3,4\n\r5,6"),
            Ok(vec![3, 5, 7])
        );
        // A record ending in a lone `\r`, then one ending in `\n`: that `\n` ends a line
        // of its own (it does not follow the `\r`).
        assert_eq!(lines_both(b"a,b\n1,2\r3,4\n5,6\n"), Ok(vec![2, 3, 4]));
        // Blank lines before the header: it is on line 3, the record on 4.
        assert_eq!(lines_both(b"\r\n\r\na,b\r\n1,2\r\n"), Ok(vec![4]));
        assert_eq!(
            lines_both(b"\n\na,a\n").unwrap_err(),
            "t.csv:3: column 'a' appears twice in the header"
        );
        let e = reader(b"\r\ra,b\r").unwrap().require("c", "").unwrap_err();
        assert!(e.to_string().starts_with("t.csv:3: column 'c'"), "{e}");
    }

    #[test]
    fn records_after_a_quoted_line_break_start_on_their_own_line() {
        // A record is on the line it starts on; the line breaks inside its quoted field
        // count for the records after it. `"x` (2), `y",1` (3), `2` (4): one field.
        assert_eq!(
            lines_both(b"a,b\n\"x\ny\",1\n2\n").unwrap_err(),
            "t.csv:4: row has 1 fields; the header has 2"
        );
        // CRLF, a blank line, then the bad record on line 5.
        assert_eq!(
            lines_both(b"a,b\r\n\"x\r\ny\",1\r\n\r\n2\r\n").unwrap_err(),
            "t.csv:5: row has 1 fields; the header has 2"
        );
        // Lone CR: `"p` (2), `q",1` (3), `3,4` (4), `5,\xFF` (5).
        assert_eq!(lines_both(b"a,b\r\"p\rq\",1\r3,4\r"), Ok(vec![2, 4]));
        assert_eq!(
            lines_both(b"a,b\r\"p\rq\",1\r3,4\r5,\xFF\r").unwrap_err(),
            "t.csv:5: not valid UTF-8"
        );
        // A quoted field with two line breaks, the next record after a blank line.
        assert_eq!(lines_both(b"a,b\n1,\"\n\n\"\n\n3,4\n"), Ok(vec![2, 6]));
    }

    #[test]
    fn bad_records_name_their_own_line() {
        for (texts, want) in [
            // `1,2` (2), blank (3), `3` (4).
            (
                [
                    &b"a,b\n1,2\n\n3\n"[..],
                    b"a,b\r\n1,2\r\n\r\n3\r\n",
                    b"a,b\r1,2\r\r3\r",
                ],
                "t.csv:4: row has 1 fields; the header has 2",
            ),
            // `1,2` (2), blank (3, 4), `3,\xFF` (5).
            (
                [
                    b"a,b\n1,2\n\n\n3,\xFF\n",
                    b"a,b\r\n1,2\r\n\r\n\r\n3,\xFF\r\n",
                    b"a,b\r1,2\r\r\r3,\xFF",
                ],
                "t.csv:5: not valid UTF-8",
            ),
        ] {
            for text in texts {
                assert_eq!(lines_both(text).unwrap_err(), want, "{text:?}");
            }
        }
    }

    /// The lines of [`body`]'s records under a header line: rows one after another, with the
    /// blank lines `body` puts after some.
    fn body_lines(n: usize, blank_every: usize) -> Vec<u64> {
        let mut line = 2;
        let mut lines = Vec::new();
        for i in 0..n {
            lines.push(line);
            line += 1;
            if blank_every > 0 && i % blank_every == blank_every - 1 {
                line += 1 + i as u64 % 2;
            }
        }
        lines
    }

    #[test]
    fn par_fold_and_next_record_give_each_record_its_own_line() {
        for eol in ["\n", "\r\n", "\r"] {
            for blank_every in [0, 1, 4] {
                let text = generated(300, eol, blank_every);
                let want = Ok(body_lines(300, blank_every));
                assert_eq!(lines_both(text.as_bytes()), want, "{eol:?}, {blank_every}");
            }
        }
    }

    #[test]
    fn line_breaks_are_counted_across_any_cut() {
        assert_eq!(count_lines(b"", true), 0);
        assert_eq!(count_lines(b"\r\n", false), 1);
        assert_eq!(count_lines(b"\n", true), 0);
        assert_eq!(count_lines(b"\n", false), 1);
        assert_eq!(count_lines(b"\r\r\n\n\rx", false), 4);
        let text = b"a\r\n\rb\n\r\r\nc\r";
        let whole = LinePos::START.past(text);
        assert_eq!(
            whole,
            LinePos {
                line: 7,
                after_cr: true
            }
        );
        for cut in 0..=text.len() {
            let (a, b) = text.split_at(cut);
            assert_eq!(LinePos::START.past(a).past(b), whole, "cut at {cut}");
        }
    }

    #[test]
    fn par_fold_reads_small_or_one_thread_input_as_one_piece() {
        let text = generated(50, "\n", 4);
        let want = all(text.as_bytes()).unwrap();
        assert_eq!(
            par_all(text.as_bytes(), PAR_CHUNK_BYTES, 2).unwrap(),
            (want.clone(), 1)
        );
        assert_eq!(par_all(text.as_bytes(), 64, 1).unwrap(), (want, 1));
        // No records: one empty state.
        assert_eq!(par_all(b"a,b\n", 64, 2).unwrap(), (vec![], 1));
        assert_eq!(par_all(b"a,b", 64, 2).unwrap(), (vec![], 1));
    }

    #[test]
    fn par_fold_after_next_record_reads_the_rest() {
        let text = generated(300, "\n", 5);
        let want = all(text.as_bytes()).unwrap();
        let mut r = reader(text.as_bytes()).unwrap();
        r.next_record().unwrap().unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let states = pool
            .install(|| {
                r.par_fold(64, Vec::new, |rows: &mut Rows, line, rec| {
                    rows.push((line, rec.iter().map(str::to_string).collect()));
                    Ok(())
                })
            })
            .unwrap();
        let got: Rows = states.into_iter().flatten().collect();
        assert_eq!(got, want[1..]);
    }

    #[test]
    fn par_fold_reads_quoted_line_breaks_record_by_record() {
        let late = generated(300, "\n", 5) + "\"x\ny\",\"1,\n2\",3\n" + &body(100, "\n", 0);
        let early = format!("a,b,c\n\"p\nq\",1,2\n{}", body(300, "\r\n", 5));
        for text in [late, early] {
            let want = all(text.as_bytes()).unwrap();
            assert!(want.iter().any(|(_, f)| f[0].contains('\n')));
            for chunk in [1, 64, 100, PAR_CHUNK_BYTES] {
                let (got, _) = par_all(text.as_bytes(), chunk, 3).unwrap();
                assert_eq!(got, want, "chunk {chunk}: {text:?}");
            }
        }
        // Quotes in the header alone leave the records to pieces.
        let text = "\"a\nb\",\"c\",d\n".to_string() + &body(300, "\n", 5);
        let want = all(text.as_bytes()).unwrap();
        let (got, pieces) = par_all(text.as_bytes(), 100, 3).unwrap();
        assert_eq!((got, pieces > 4), (want, true));
    }

    /// `text`, whose lines end in `eol`, with `line` (1-based, of the file) replaced by `with`.
    fn with_line(text: &str, eol: &str, line: usize, with: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, l) in text.split_inclusive(eol).enumerate() {
            if i + 1 == line {
                out.extend_from_slice(with);
                out.extend_from_slice(eol.as_bytes());
            } else {
                out.extend_from_slice(l.as_bytes());
            }
        }
        out
    }

    #[test]
    fn par_fold_fails_as_next_record_fails() {
        for eol in ["\n", "\r\n", "\r"] {
            let text = generated(600, eol, 0);
            for line in [2, 3, 40, 301, 590, 601] {
                for bad in [
                    &b"1,2"[..],
                    b"1,2,3,4",
                    b"1,\xFF,3",
                    b"\xFF",
                    b" ",
                    b"\xEF\xBB\xBF1,2",
                ] {
                    let bytes = with_line(&text, eol, line, bad);
                    let want = all(&bytes).unwrap_err().to_string();
                    assert!(want.starts_with(&format!("t.csv:{line}: ")), "{want}");
                    for chunk in [1, 64, 100, PAR_CHUNK_BYTES] {
                        let got = par_all(&bytes, chunk, 3).unwrap_err().to_string();
                        assert_eq!(got, want, "chunk {chunk}, {eol:?}");
                    }
                }
            }
        }
        // Of two bad rows, the first is reported even when a later piece fails too.
        let text = generated(600, "\n", 0);
        let bytes = with_line(
            &String::from_utf8(with_line(&text, "\n", 500, b"9")).unwrap(),
            "\n",
            30,
            b"\xFF,1,2",
        );
        let want = all(&bytes).unwrap_err().to_string();
        assert_eq!(want, "t.csv:30: not valid UTF-8");
        // In different chunks, or in different pieces of one chunk (the whole text).
        for chunk in [100, bytes.len()] {
            assert_eq!(par_all(&bytes, chunk, 3).unwrap_err().to_string(), want);
        }
    }

    #[test]
    fn par_fold_reports_the_first_error_of_the_fold() {
        let text = generated(600, "\r\n", 0);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        // The fold fails at rows 100 and 450 (lines 101 and 451).
        let fold = |_: &mut (), line: u64, rec: Record<'_>| match &rec[1] {
            "x99 é" | "x449 é" => Err(Error::input(Path::new("f"), Some(line), "no")),
            _ => Ok(()),
        };
        for chunk in [64, 1000, text.len()] {
            let e = pool
                .install(|| {
                    reader(text.as_bytes())
                        .unwrap()
                        .par_fold(chunk, || (), fold)
                })
                .unwrap_err();
            assert_eq!(e.to_string(), "f:101: no");
        }
    }

    /// Reads its text, then fails.
    struct Broken(std::io::Cursor<Vec<u8>>);

    impl Read for Broken {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            match self.0.read(buf)? {
                0 => Err(std::io::Error::other("disk gone")),
                n => Ok(n),
            }
        }
    }

    #[test]
    fn par_fold_fails_where_the_stream_fails() {
        let text = generated(600, "\n", 0);
        let cut = &text.as_bytes()[..text.len() - 4];
        let bad_row = with_line(&text, "\n", 300, b"1,2");
        for (bytes, want) in [
            (cut, "t.csv: disk gone"),
            (
                &bad_row[..],
                "t.csv:300: row has 2 fields; the header has 3",
            ),
        ] {
            let open = || {
                let stream = Broken(std::io::Cursor::new(bytes.to_vec()));
                CsvReader::from_reader(Path::new("t.csv"), stream).unwrap()
            };
            let mut r = open();
            let e = loop {
                if let Err(e) = r.next_record() {
                    break e;
                }
            };
            assert_eq!(e.to_string(), want);
            for chunk in [100, PAR_CHUNK_BYTES] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(3)
                    .build()
                    .unwrap();
                let got = pool.install(|| open().par_fold(chunk, || (), |_, _, _| Ok(())));
                assert_eq!(got.unwrap_err().to_string(), want, "chunk {chunk}");
            }
        }
    }

    #[test]
    fn a_line_past_the_limit_fails_at_its_line_in_both_ways_of_reading() {
        let max = crate::io::MAX_LINE_BYTES;
        let want = |line: u64| {
            format!("t.csv:{line}: line longer than 64 MiB (67108864 bytes), the most one line of an input file may hold (is this a text file with line breaks?)")
        };
        let sequential = |bytes: &[u8]| -> Error {
            let mut r = match reader(bytes) {
                Ok(r) => r,
                Err(e) => return e,
            };
            loop {
                if let Err(e) = r.next_record() {
                    return e;
                }
            }
        };
        // A header without a line break (the shape of /dev/zero).
        let e = reader(&vec![0u8; max + 1]).unwrap_err();
        assert_eq!(e.to_string(), want(1));
        assert_eq!(e.exit_code(), 2);
        // A line of exactly the limit is read, one byte more is refused: after CRLF and
        // lone-CR line ends, past the end of one read and within one.
        let mut ok = b"a,b\r\n1,2\r".to_vec();
        ok.extend(std::iter::repeat_n(b'x', max - 2));
        ok.extend_from_slice(b",y\n");
        let mut bad = ok.clone();
        bad.extend(std::iter::repeat_n(b'z', max + 1));
        bad.extend_from_slice(b"\n3,4\n");
        assert_eq!(all(&ok).unwrap().len(), 2);
        assert_eq!(par_all(&ok, 3 * max, 3).unwrap().0.len(), 2);
        assert_eq!(sequential(&bad).to_string(), want(4));
        for chunk in [PAR_CHUNK_BYTES, 3 * max] {
            let e = par_all(&bad, chunk, 3).unwrap_err();
            assert_eq!(e.to_string(), want(4), "chunk {chunk}");
        }
    }
}
