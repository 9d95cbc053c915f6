//! Whole-file text input and the clipping of values echoed in error messages.

use std::path::Path;

use crate::{Error, Result};

/// The most characters of an input value an error message repeats.
pub const ECHO_CHARS: usize = 80;

/// The UTF-8 byte-order mark.
pub const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// `s` cut to at most [`ECHO_CHARS`] characters, with `…` when something was cut.
pub fn clip(s: &str) -> String {
    clip_to(s, ECHO_CHARS)
}

/// `s` cut to at most `n` characters (on a character boundary), with `…` when cut.
pub fn clip_to(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        None => s.to_string(),
        Some((at, _)) => format!("{}…", &s[..at]),
    }
}

/// The most names [`clip_list`] shows.
pub const LIST_ITEMS: usize = 20;

/// Names for a message: each clipped (see [`clip`]), joined by `, `, at most
/// [`LIST_ITEMS`] of them and then how many more there are.
pub fn clip_list<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> String {
    let mut out = Vec::new();
    let mut more = 0usize;
    for n in names {
        if out.len() < LIST_ITEMS {
            out.push(clip(n.as_ref()));
        } else {
            more += 1;
        }
    }
    let mut s = out.join(", ");
    if more > 0 {
        s.push_str(&format!(", … ({more} more)"));
    }
    s
}

/// The message for a file that starts with a UTF-16 byte-order mark, if `head` does.
pub(crate) fn utf16_bom(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\xFF\xFE") || head.starts_with(b"\xFE\xFF") {
        Some("UTF-16 text (byte-order mark found); save the file as UTF-8")
    } else {
        None
    }
}

/// Validates `bytes` as UTF-8 text of `path`, skipping a UTF-8 byte-order mark.
///
/// # Errors
/// [`Error::Input`] `FILE:LINE: not valid UTF-8` at the first invalid byte's line, or for
/// UTF-16 text.
pub fn decode(path: &Path, bytes: Vec<u8>) -> Result<String> {
    if let Some(msg) = utf16_bom(&bytes) {
        return Err(Error::input(path, Some(1), msg));
    }
    let mut bytes = bytes;
    if bytes.starts_with(UTF8_BOM) {
        bytes.drain(..UTF8_BOM.len());
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() as u64 + 1;
        Error::input(path, Some(line), "not valid UTF-8")
    })
}

/// Reads a whole text file (a JSON document, a TOML file) as UTF-8, of at most
/// [`MAX_LINE_BYTES`](super::MAX_LINE_BYTES).
///
/// # Errors
/// [`Error::Io`] when it cannot be read; [`Error::Input`] for a directory, a larger file
/// ([`super::file_too_large`]), and as [`decode`].
pub fn read_text(path: &Path) -> Result<String> {
    read_text_up_to(path, super::MAX_LINE_BYTES)
}

/// [`read_text`] with a size limit of `limit` bytes.
///
/// # Errors
/// As [`read_text`].
pub fn read_text_up_to(path: &Path, limit: usize) -> Result<String> {
    decode(path, read_bytes_up_to(path, limit)?)
}

/// The bytes of `path`, at most `limit` of them (a special file such as `/dev/zero` has no
/// end, so the size is not taken from the file's metadata).
///
/// # Errors
/// As [`read_text`], without the UTF-8 check.
pub fn read_bytes_up_to(path: &Path, limit: usize) -> Result<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut bytes = Vec::new();
    file.take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() > limit {
        return Err(super::file_too_large(path, limit));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_counts_characters_not_bytes() {
        assert_eq!(clip_to("abc", 3), "abc");
        assert_eq!(clip_to("abcd", 3), "abc…");
        assert_eq!(clip_to("ééééé", 2), "éé…");
        assert_eq!(clip(&"x".repeat(1_000_000)).chars().count(), ECHO_CHARS + 1);
    }

    #[test]
    fn clip_list_clips_each_name_and_the_count() {
        assert_eq!(clip_list(["a", "b"]), "a, b");
        let long = "y".repeat(100);
        assert_eq!(clip_list([long.as_str()]), format!("{}…", "y".repeat(80)));
        let many: Vec<String> = (0..25).map(|i| i.to_string()).collect();
        assert_eq!(
            clip_list(&many),
            "0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, … (5 more)"
        );
    }

    #[test]
    fn whole_files_stop_at_their_limit_and_directories_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.toml");
        std::fs::write(&p, "abcdef").unwrap();
        assert_eq!(read_text_up_to(&p, 6).unwrap(), "abcdef");
        let e = read_text_up_to(&p, 5).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: larger than 0 MiB (5 bytes), the most a file read whole may hold",
                p.display()
            )
        );
        assert_eq!(e.exit_code(), 2);
        let e = read_text(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/dev/zero: larger than 64 MiB (67108864 bytes), the most a file read whole may hold"
        );
        let e = read_text(dir.path()).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("{}: is a directory; expected a file", dir.path().display())
        );
        assert_eq!(e.exit_code(), 2);
    }

    #[test]
    fn decode_names_the_line_of_the_bad_byte() {
        let p = Path::new("f.txt");
        let e = decode(p, b"ok\nok\nb\xFFd\n".to_vec()).unwrap_err();
        assert_eq!(e.to_string(), "f.txt:3: not valid UTF-8");
        assert_eq!(decode(p, b"\xEF\xBB\xBFhi".to_vec()).unwrap(), "hi");
        let e = decode(p, b"\xFF\xFEh\0i\0".to_vec()).unwrap_err();
        assert!(e.to_string().starts_with("f.txt:1: UTF-16"), "{e}");
    }
}
