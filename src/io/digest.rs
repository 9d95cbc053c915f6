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
