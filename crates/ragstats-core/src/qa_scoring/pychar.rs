//! Python's `str` character predicates, as the official QA scripts see them.
//!
//! The official normalisation runs on Python 3 `str`: `\b` in `re` is Unicode-aware
//! (a word character is `ch.isalnum() or ch == '_'`), `str.split()` splits on
//! `ch.isspace()`, and punctuation is `string.punctuation`. Rust's `char::is_alphanumeric`
//! and `char::is_whitespace` differ from the first two (Rust counts `Other_Alphabetic` marks
//! and symbols such as `Ⓐ` as alphabetic; Python counts U+001C..U+001F as space), and no
//! crate reproduces CPython's predicates, so the tables below are CPython's own:
//! `scripts/gen_pychar.py` writes `pychar_tables.rs` from `str.isalnum`, `str.isspace` and
//! `string.punctuation`, and records the Python and Unicode versions in its header
//! (CPython 3.11, Unicode 14.0.0). A code point assigned after that Unicode version is
//! neither alphanumeric nor space here, as in that CPython.

include!("pychar_tables.rs");

/// Python's `ch.isalnum() or ch == '_'`: a word character for `re`'s `\b` on `str`.
pub fn is_python_word(c: char) -> bool {
    c == '_' || in_ranges(c, PY_ALNUM)
}

/// Python's `ch.isspace()`: Unicode `White_Space` plus U+001C..U+001F.
pub fn is_python_space(c: char) -> bool {
    in_ranges(c, PY_SPACE)
}

/// Python's `string.punctuation`: the 32 ASCII punctuation characters.
pub fn is_python_punctuation(c: char) -> bool {
    PY_PUNCTUATION.contains(c)
}

fn in_ranges(c: char, ranges: &[(char, char)]) -> bool {
    ranges
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_sorted_and_disjoint() {
        for table in [PY_ALNUM, PY_SPACE] {
            for w in table.windows(2) {
                assert!(w[0].0 <= w[0].1 && w[0].1 < w[1].0, "{w:?}");
            }
        }
    }

    /// The committed tables are what `scripts/gen_pychar.py` writes with this machine's
    /// CPython (the project's machines carry CPython 3.11; the script refuses, exit 2, a
    /// Python whose Unicode version differs from the one in the file's header).
    #[test]
    fn tables_are_what_the_script_writes() {
        let root = env!("CARGO_MANIFEST_DIR");
        let out = std::process::Command::new("python3")
            .arg(format!("{root}/../../scripts/gen_pychar.py"))
            .arg("--check")
            .output()
            .expect("python3 runs scripts/gen_pychar.py");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    // Expected values from CPython 3.11: `c.isalnum()` / `c.isspace()`.
    #[test]
    fn word_characters_match_cpython() {
        for c in ['a', 'Z', '0', '_', 'é', 'ß', '中', '٣', '²', 'Ⅻ'] {
            assert!(is_python_word(c), "{c:?} is a word char in Python");
        }
        // U+0345 combining ypogegrammeni (Mn), U+093E Devanagari sign AA (Mc),
        // U+24B6 circled A (So): alphabetic to Rust, not alnum to Python.
        for c in ['\u{345}', '\u{93E}', '\u{24B6}', '-', ' ', '\u{301}', '€'] {
            assert!(!is_python_word(c), "{c:?} is not a word char in Python");
        }
    }

    #[test]
    fn whitespace_matches_cpython() {
        for c in [
            ' ', '\t', '\n', '\u{B}', '\u{C}', '\r', '\u{1C}', '\u{1F}', '\u{85}', '\u{A0}',
            '\u{2009}', '\u{3000}',
        ] {
            assert!(is_python_space(c), "{c:?}");
        }
        for c in ['\u{200B}', '\u{180E}', '\u{FEFF}', 'x'] {
            assert!(!is_python_space(c), "{c:?}");
        }
    }

    #[test]
    fn punctuation_is_string_punctuation() {
        let ascii: String = (0u8..128)
            .map(char::from)
            .filter(|&c| is_python_punctuation(c))
            .collect();
        assert_eq!(ascii, "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~");
        for c in ['«', '。', '—', '\u{2019}'] {
            assert!(!is_python_punctuation(c), "{c:?}");
        }
    }
}
