//! Monte Carlo tree search with PUCT, guided by any [`Evaluator`](crate::evaluator::Evaluator).
//! No libtorch here: the network is behind the trait.

mod config;
mod tree;

pub use config::{
    Fpu, GumbelRoot, RootNoise, SearchConfig, SELF_PLAY_CAPTURE_PRIOR, SELF_PLAY_DRAW_VALUE,
};
pub use tree::{Gathered, LeafToken, RootSummary, Search};
