//! Output files: written whole or not at all, and never over an input.
//!
//! [`write_atomic`] writes to a temporary file in the destination's directory and renames
//! it over the destination only once every byte is written and flushed, so a failure midway
//! (a full disk, a file-size limit, an interrupt) leaves the old file, or none, never a
//! truncated one. The rename stays within one directory, hence one file system, where it
//! is atomic. Append-only logs (the LLM results, cache and ledger) are not written this
//! way: they keep their line-by-line crash safety instead.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// Writes `path` atomically: `write` fills a buffered temporary file beside `path`, which
/// is renamed to `path` on success and removed on failure. Missing parent directories are
/// created.
///
/// # Errors
/// [`Error::Io`] naming `path` when the temporary file cannot be created, `write` fails,
/// or the rename fails.
pub fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let io = |e| Error::io(path, e);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut builder = tempfile::Builder::new();
    builder.prefix(".stats-").suffix(".tmp");
    // A temporary file is private (0600) by default; an output is an ordinary file, so it
    // keeps the permissions of the file it replaces, or gets 0666 less the umask (open(2)
    // applies the umask to the mode) like any file a shell redirect creates.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .map(|m| m.permissions().mode() & 0o7777)
            .unwrap_or(0o666);
        builder.permissions(std::fs::Permissions::from_mode(mode));
    }
    let tmp = builder.tempfile_in(dir).map_err(io)?;
    let mut w = BufWriter::new(tmp);
    write(&mut w).map_err(io)?;
    let tmp = w.into_inner().map_err(|e| io(e.into_error()))?;
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

/// The file beside `out` holding what goes with it: `runs/a.jsonl` → `runs/a.SUFFIX.jsonl`
/// (a run's responses, a filter's dropped items).
pub fn sidecar(out: &Path, suffix: &str) -> std::path::PathBuf {
    let stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "results".into());
    out.with_file_name(format!("{stem}.{suffix}.jsonl"))
}

/// Refuses a set of outputs where one would overwrite an input or another output.
///
/// Paths are compared after resolving `.`/`..` and symbolic links (of the file where it
/// exists, else of its directory), so `p.csv` and `./p.csv` are the same file.
///
/// # Errors
/// [`Error::Usage`] naming the path and the two roles it has.
pub fn refuse_overwriting_inputs(
    outputs: &[(&str, &Path)],
    inputs: &[(&str, &Path)],
) -> Result<()> {
    let resolved = |p: &Path| resolve(p);
    for (i, (role, out)) in outputs.iter().enumerate() {
        let o = resolved(out);
        let clash = inputs
            .iter()
            .chain(&outputs[..i])
            .find(|(_, other)| resolved(other) == o);
        if let Some((other_role, _)) = clash {
            return Err(Error::Usage(format!(
                "{role} {} is also the {other_role}: it would be overwritten; write to another file",
                out.display()
            )));
        }
    }
    Ok(())
}

/// `p` made absolute with symbolic links resolved, as far as the file system allows.
fn resolve(p: &Path) -> PathBuf {
    if let Ok(c) = p.canonicalize() {
        return c;
    }
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match (dir.canonicalize(), p.file_name()) {
        (Ok(d), Some(name)) => d.join(name),
        _ => p.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.csv");
        std::fs::write(&p, "old\n").unwrap();
        let err = write_atomic(&p, |w| {
            w.write_all(b"new, half")?;
            Err(std::io::Error::other("disk full"))
        })
        .unwrap_err();
        assert!(err.to_string().contains("out.csv: disk full"), "{err}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        write_atomic(&p, |w| w.write_all(b"new\n")).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn an_output_has_ordinary_permissions_not_the_temporary_files() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        // What the umask gives any new file here, e.g. 0644 under umask 022.
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "x").unwrap();
        let new = dir.path().join("new.csv");
        write_atomic(&new, |w| w.write_all(b"a\n")).unwrap();
        assert_eq!(mode(&new), mode(&plain));
        // A replaced file keeps its own permissions.
        std::fs::set_permissions(&new, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&new, |w| w.write_all(b"b\n")).unwrap();
        assert_eq!(mode(&new), 0o640);
    }

    #[test]
    fn an_output_equal_to_an_input_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p.csv");
        std::fs::write(&p, "x\n").unwrap();
        let dotted = dir.path().join(".").join("p.csv");
        let err = refuse_overwriting_inputs(&[("--out", &dotted)], &[("panel", &p)]).unwrap_err();
        assert!(err.to_string().contains("is also the panel"), "{err}");
        let a = dir.path().join("new.jsonl");
        let err = refuse_overwriting_inputs(&[("--out", &a), ("--ledger", &a)], &[]).unwrap_err();
        assert!(err.to_string().contains("--ledger"), "{err}");
        assert!(err.to_string().contains("is also the --out"), "{err}");
        refuse_overwriting_inputs(&[("--out", &a)], &[("panel", &p)]).unwrap();
    }
}
