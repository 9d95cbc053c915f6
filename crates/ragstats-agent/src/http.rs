//! The one place HTTP clients are configured: the LLM client and the search backends both
//! start from [`client_builder`].

/// A `reqwest` client builder whose TLS (for `https://` endpoints) uses rustls with ring's
/// cryptography.
///
/// reqwest is built without a default crypto provider (its default, aws-lc-rs, is a long C
/// build), so one must be installed before the first client is built. This installs ring as
/// the process-wide rustls default unless the host program (a Python process that already
/// uses rustls, say) has installed one, in which case that one is kept.
pub fn client_builder() -> reqwest::ClientBuilder {
    // An error only means a provider is already installed, which is what we need.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
}
