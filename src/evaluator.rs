//! What search asks of a network, with no network in sight: a batch of positions in, for each a
//! prior over its legal moves and a value for the side to move out. Search, self-play and play
//! depend on this trait only; `nn` implements it with libtorch, tests with [`UniformEvaluator`].

use crate::game::{Move, Position};
use std::collections::HashMap;

/// A position to evaluate, with its legal moves in the order the priors must follow.
#[derive(Clone, Debug)]
pub struct EvalRequest {
    pub position: Position,
    pub moves: Vec<Move>,
}

/// A network's opinion of one position.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// One probability per legal move, in request order, summing to 1.
    pub priors: Vec<f32>,
    /// Expected result for the side to move, in [-1, 1].
    pub value: f32,
}

/// Evaluates batches. Implementations may hold non-`Sync` state (a libtorch module), so one
/// evaluator lives on one thread and the callers batch their requests to it.
pub trait Evaluator {
    fn evaluate(&mut self, batch: &[EvalRequest]) -> Vec<Evaluation>;
}

/// Equal priors and a value of 0: search guided by this is plain tree search with exact
/// terminal values, which is what the search tests use.
#[derive(Clone, Copy, Debug, Default)]
pub struct UniformEvaluator;

impl Evaluator for UniformEvaluator {
    fn evaluate(&mut self, batch: &[EvalRequest]) -> Vec<Evaluation> {
        batch
            .iter()
            .map(|r| Evaluation { priors: vec![1.0 / r.moves.len().max(1) as f32; r.moves.len()], value: 0.0 })
            .collect()
    }
}

/// A bounded cache in front of another evaluator, keyed by the position's Zobrist hash (and the
/// ply when a ply cap makes it part of the input). When full it is emptied: self-play positions
/// repeat within a game's search, not across long stretches, so recency beats bookkeeping.
pub struct CachedEvaluator<E> {
    inner: E,
    capacity: usize,
    entries: HashMap<u64, Evaluation>,
    pub hits: u64,
    pub misses: u64,
}

impl<E: Evaluator> CachedEvaluator<E> {
    pub fn new(inner: E, capacity: usize) -> CachedEvaluator<E> {
        CachedEvaluator { inner, capacity, entries: HashMap::new(), hits: 0, misses: 0 }
    }

    pub fn inner_mut(&mut self) -> &mut E {
        &mut self.inner
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }

    fn key(position: &Position) -> u64 {
        match position.rules().ply_cap {
            Some(_) => position.hash() ^ (position.ply() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            None => position.hash(),
        }
    }
}

impl<E: Evaluator> Evaluator for CachedEvaluator<E> {
    fn evaluate(&mut self, batch: &[EvalRequest]) -> Vec<Evaluation> {
        let keys: Vec<u64> = batch.iter().map(|r| Self::key(&r.position)).collect();
        let missing: Vec<usize> = (0..batch.len()).filter(|&i| !self.entries.contains_key(&keys[i])).collect();
        self.hits += (batch.len() - missing.len()) as u64;
        self.misses += missing.len() as u64;
        let fresh = if missing.is_empty() {
            Vec::new()
        } else {
            let requests: Vec<EvalRequest> = missing.iter().map(|&i| batch[i].clone()).collect();
            self.inner.evaluate(&requests)
        };
        if self.entries.len() + fresh.len() > self.capacity {
            self.entries.clear();
        }
        let mut fresh_by_index: HashMap<usize, Evaluation> = missing.into_iter().zip(fresh).collect();
        (0..batch.len())
            .map(|i| match fresh_by_index.remove(&i) {
                Some(evaluation) => {
                    self.entries.insert(keys[i], evaluation.clone());
                    evaluation
                }
                None => self.entries[&keys[i]].clone(),
            })
            .collect()
    }
}
