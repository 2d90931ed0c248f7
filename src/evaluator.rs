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
    /// Probability of a draw, in [0, 1] (0 from evaluators that do not predict one).
    pub draw: f32,
}

/// Chances of a win, a draw and a loss for one side, summing to 1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Wdl {
    pub win: f32,
    pub draw: f32,
    pub loss: f32,
}

impl Wdl {
    /// The chances whose expected result is `value` (win - loss) with `draw` drawn, clamped
    /// into range so that rounding cannot make a chance negative. A NaN draw counts as none (a
    /// NaN value then gives NaN chances, which callers see, rather than a panic in `clamp`).
    pub fn from_value_and_draw(value: f32, draw: f32) -> Wdl {
        let draw = if draw.is_nan() { 0.0 } else { draw.clamp(0.0, 1.0) };
        let win = ((1.0 - draw + value) / 2.0).clamp(0.0, 1.0 - draw);
        Wdl { win, draw, loss: 1.0 - draw - win }
    }

    /// A finished game's result for the side to move: +1 won, 0 drawn, -1 lost.
    pub fn certain(value: f32) -> Wdl {
        Wdl {
            win: (value > 0.0) as u8 as f32,
            draw: (value == 0.0) as u8 as f32,
            loss: (value < 0.0) as u8 as f32,
        }
    }
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
            .map(|r| Evaluation {
                priors: vec![1.0 / r.moves.len().max(1) as f32; r.moves.len()],
                value: 0.0,
                draw: 0.0,
            })
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

    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// The position's hash with its rules (one cache may serve several: the engine's options
    /// change them, and the symmetry rule changes the legal moves), and its ply under a cap,
    /// which the network reads.
    fn key(position: &Position) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        position.hash().hash(&mut hasher);
        position.rules().hash(&mut hasher);
        if position.rules().ply_cap.is_some() {
            position.ply().hash(&mut hasher);
        }
        hasher.finish()
    }
}

impl<E: Evaluator> Evaluator for CachedEvaluator<E> {
    fn evaluate(&mut self, batch: &[EvalRequest]) -> Vec<Evaluation> {
        let keys: Vec<u64> = batch.iter().map(|r| Self::key(&r.position)).collect();
        // Hits are copied out first: making room below may empty the cache.
        let mut results: Vec<Option<Evaluation>> =
            keys.iter().map(|k| self.entries.get(k).cloned()).collect();
        let missing: Vec<usize> = (0..batch.len()).filter(|&i| results[i].is_none()).collect();
        self.hits += (batch.len() - missing.len()) as u64;
        self.misses += missing.len() as u64;
        if !missing.is_empty() {
            let requests: Vec<EvalRequest> = missing.iter().map(|&i| batch[i].clone()).collect();
            let fresh = self.inner.evaluate(&requests);
            if self.entries.len() + fresh.len() > self.capacity {
                self.entries.clear();
            }
            for (i, evaluation) in missing.into_iter().zip(fresh) {
                self.entries.insert(keys[i], evaluation.clone());
                results[i] = Some(evaluation);
            }
        }
        results.into_iter().map(|r| r.expect("every request was a hit or evaluated")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Position, Rules};

    /// An evaluator whose answer differs with the position and its ply, so a cache that
    /// answered for the wrong request would show.
    struct ByPosition;

    impl Evaluator for ByPosition {
        fn evaluate(&mut self, batch: &[EvalRequest]) -> Vec<Evaluation> {
            batch
                .iter()
                .map(|r| {
                    let key = r.position.hash() ^ r.position.ply() as u64;
                    Evaluation {
                        priors: vec![1.0 / r.moves.len().max(1) as f32; r.moves.len()],
                        value: (key % 1000) as f32 / 1000.0,
                        draw: (key / 1000 % 1000) as f32 / 1000.0,
                    }
                })
                .collect()
        }
    }

    #[test]
    fn a_full_cache_still_answers_hits_and_misses() {
        let start = Position::standard();
        let requests: Vec<EvalRequest> = start
            .legal_moves()
            .iter()
            .take(6)
            .map(|mv| {
                let position = start.play_unchecked(*mv);
                EvalRequest { moves: position.legal_moves(), position }
            })
            .collect();
        let mut cached = CachedEvaluator::new(ByPosition, 4);
        let first = cached.evaluate(&requests[..3]);
        // Three hits and three misses: the misses overflow the capacity and empty the cache.
        let second = cached.evaluate(&requests);
        assert_eq!(&second[..3], &first[..]);
        assert_eq!((cached.hits, cached.misses), (3, 6));
        assert_eq!(second, ByPosition.evaluate(&requests), "each answer is its own request's");
    }

    /// One cache may serve games under other rules (the engine's options change them), and the
    /// symmetry rule changes a position's legal moves: the same board under other rules is
    /// another entry.
    #[test]
    fn the_rules_are_part_of_the_key() {
        let mirror = Position::start(Rules::default()).unwrap();
        let off =
            Position::start(Rules { symmetry: crate::game::SymmetryRule::Off, ..Rules::default() })
                .unwrap();
        assert_eq!(mirror.hash(), off.hash(), "the board alone does not tell them apart");
        let request = |position: Position| EvalRequest { moves: position.legal_moves(), position };
        let mut cached = CachedEvaluator::new(ByPosition, 16);
        cached.evaluate(&[request(mirror), request(off)]);
        assert_eq!((cached.hits, cached.misses), (0, 2));
        cached.evaluate(&[request(off)]);
        assert_eq!(cached.hits, 1);
    }

    /// A NaN from a broken network gives NaN chances, not a panic.
    #[test]
    fn chances_from_a_nan_draw_do_not_panic() {
        let wdl = Wdl::from_value_and_draw(0.2, f32::NAN);
        assert_eq!(wdl.draw, 0.0);
        assert!((wdl.win - 0.6).abs() < 1e-6 && (wdl.loss - 0.4).abs() < 1e-6, "{wdl:?}");
        assert!(Wdl::from_value_and_draw(f32::NAN, f32::NAN).win.is_nan());
    }

    /// Under a ply cap the ply is part of the network's input, so the same board at another ply
    /// is another entry; without a cap it is the same one.
    #[test]
    fn the_ply_is_part_of_the_key_only_under_a_cap() {
        let capped = Rules { ply_cap: Some(300), ..Rules::default() };
        for (rules, later_is_a_hit) in [(capped, false), (Rules::default(), true)] {
            let now = Position::start(rules).unwrap();
            let later = now.with_side_to_move(now.side_to_move(), now.ply() + 2);
            let request =
                |position: Position| EvalRequest { moves: position.legal_moves(), position };
            let mut cached = CachedEvaluator::new(ByPosition, 16);
            cached.evaluate(&[request(now)]);
            let answer = cached.evaluate(&[request(later)]).remove(0);
            assert_eq!(cached.hits, u64::from(later_is_a_hit), "ply cap {:?}", rules.ply_cap);
            let expected = if later_is_a_hit { now } else { later };
            assert_eq!(answer, ByPosition.evaluate(&[request(expected)]).remove(0));
        }
    }
}
