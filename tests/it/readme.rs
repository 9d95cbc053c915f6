//! The README's worked examples (`$ stats ...` blocks) are run and compared with what
//! `stats` prints, so a README that drifts from the tool fails here. `...` lines in a block
//! stand for output left out; rayon is pinned to 2 threads because the backend line says
//! how many ran. (trycmd's runner can set variables but not remove them; no README
//! example calls a model or a search engine, so no key could be used.)

#[test]
fn readme_examples_match_the_tool() {
    trycmd::TestCases::new()
        .register_bin(
            "stats",
            std::path::PathBuf::from(env!("CARGO_BIN_EXE_stats")),
        )
        .env("RAYON_NUM_THREADS", "2")
        .case("README.md");
}
