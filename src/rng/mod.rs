//! Counter-based random numbers: Philox4x32-10 ([`philox`]) and the keyed, Lemire-bounded
//! index streams built on it ([`stream`]). Every random draw in the crate (bootstrap
//! resamples, allocation pairs, permutations, MCQ shuffles, simulation) comes from here,
//! so the CPU and the GPU, and every run with the same seed, draw the same numbers.

pub mod philox;
pub mod stream;

pub use philox::philox4x32_10;
pub use stream::draw_index;
