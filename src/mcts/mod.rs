//! Monte Carlo tree search with PUCT, guided by any [`Evaluator`](crate::evaluator::Evaluator);
//! for self-play, optionally a Gumbel search at the root (`gumbel`).
//! No libtorch here: the network is behind the trait.

mod config;
mod gumbel;
mod tree;

pub use config::{Fpu, RootNoise, RootSearch, SearchConfig, SELF_PLAY_DRAW_VALUE};
pub use tree::{Gathered, LeafToken, RootSummary, Search};
