//! Random numbers, all of them: Philox4x32-10 ([`philox`]), the keyed, Lemire-bounded index
//! streams built on it ([`stream`]), the same bounded draws for many blocks at once with
//! the scalar or a vectorised generator chosen at run time ([`blocks`]), the named stream
//! domains that say which part of the counter space each kind of draw uses ([`domain`]),
//! and the keyed xoshiro256** streams of the simulators ([`keyed`]). Every random draw in
//! the crate (bootstrap resamples, allocation question order, permutations, MCQ shuffles,
//! benchmark rows, retry jitter, simulation) comes from here, so the CPU and the GPU, and
//! every run with the same seed, draw the same numbers.

pub mod blocks;
pub mod domain;
pub mod keyed;
pub mod philox;
pub mod stream;

pub use blocks::Generator;
pub use keyed::KeyedStream;
pub use philox::philox4x32_10;
pub use stream::draw_index;
