//! SHA-256 in lower-case hex: the one spelling of the digests the tool writes into cache
//! keys, ledger keys, corpus ids and checksums.

use sha2::{Digest, Sha256};

/// Lower-case hex of `bytes`, two digits a byte.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The SHA-256 of `data` in hex (64 digits).
pub fn sha256_hex(data: impl AsRef<[u8]>) -> String {
    hex(&Sha256::digest(data.as_ref()))
}

/// The SHA-256 of the file at `path` in hex, read in pieces (a corpus may be larger than
/// the memory).
///
/// # Errors
/// [`crate::Error::Io`] (or the directory error of [`crate::Error::io`]) when it cannot be
/// read.
pub fn sha256_file_hex(path: &std::path::Path) -> crate::Result<String> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).map_err(|e| crate::Error::io(path, e))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => h.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(crate::Error::io(path, e)),
        }
    }
    Ok(hex(&h.finalize()))
}

/// The first 16 hex digits (8 bytes) of the SHA-256 of `data`: the short form of keys and
/// prompt hashes.
pub fn short_sha256(data: impl AsRef<[u8]>) -> String {
    hex(&Sha256::digest(data.as_ref())[..8])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fips_180_2_abc_vector() {
        let full = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(sha256_hex("abc"), full);
        assert_eq!(short_sha256(b"abc"), &full[..16]);
        assert_eq!(hex(&[0, 15, 255]), "000fff");
    }
}
