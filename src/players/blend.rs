//! Leaf values mixed with the hand-made evaluation (player option `blend=W`): a network's
//! value blended with alpha-beta's quiescence score, as AlphaGo mixed its value network with
//! rollouts.
//!
//! Why: the default agent loses to alphabeta in pieces, and more search (twice the time, a
//! mirror ensemble) did not change that. Over the 20,629 positions of its 300 bf16 games
//! against alphabeta, the value cross-entropy against each game's result was 0.681 (plies
//! 1-40) and 0.584 (41-80) for the network alone, 1.005 and 0.900 for the quiescence score
//! alone (`tanh(score / 800)`, quiescence to 4 plies), and 0.650 and 0.539 for this blend with
//! weight 0.2 (`examples/value_blend.rs`): the two are wrong in different places. At play it
//! gained nothing against alphabeta (-2.7 ± 7.6 points a game over 282 games at 1 s a move;
//! README, Strength), so no player uses it unless asked.

use super::alphabeta::Quiescence;
use super::heuristic::{is_decisive, to_value};
use crate::evaluator::{EvalRequest, Evaluation, Evaluator};

/// The score that maps to a value of tanh(1) = 0.76: eight pieces' worth. The hand-made scale
/// ([`super::heuristic::VALUE_SCALE`], half this) is alpha-beta's, where only the order of
/// scores matters; against game results, this one fitted better in the blend (the cross-entropy
/// above; 400 gave 0.650 and 0.533 at the same weight, and worse at higher weights).
pub const BLEND_SCALE: f32 = 800.0;

/// Plies of captures and entries the blend's quiescence plays out. Two catch most of what
/// alpha-beta's four do for a tenth of the time: on the same positions, the blend's
/// cross-entropy at plies 41-80 was 0.548 / 0.539 / 0.533 with quiescence to 0 / 2 / 4 plies,
/// which took 2 / 24 / 222 µs a position (a simulation takes about 400).
pub const BLEND_QUIESCENCE_PLIES: u32 = 2;

/// An evaluator whose values are `(1 - weight) * inner + weight * tanh(quiescence / BLEND_SCALE)`;
/// priors and draw chances are the inner evaluator's. Decided quiescence results count as ±1.
pub struct HeuristicBlend<E> {
    inner: E,
    /// The weight and the search that scores positions for it; none at weight 0, where every
    /// network player starts, so a player that does not blend carries no alpha-beta search.
    blend: Option<(f32, Quiescence)>,
}

impl<E: Evaluator> HeuristicBlend<E> {
    /// `weight` in [0, 1]; at 0 the inner evaluator's values pass unchanged and no quiescence
    /// search is run.
    pub fn new(inner: E, weight: f32) -> HeuristicBlend<E> {
        let mut blend = HeuristicBlend { inner, blend: None };
        blend.set_weight(weight);
        blend
    }

    pub fn set_weight(&mut self, weight: f32) {
        let weight = weight.clamp(0.0, 1.0);
        self.blend = match self.blend.take() {
            _ if weight == 0.0 => None,
            Some((_, quiescence)) => Some((weight, quiescence)),
            None => Some((weight, Quiescence::new(BLEND_QUIESCENCE_PLIES))),
        };
    }
}

/// The quiescence score of `request`'s position as a value in [-1, 1] for its side to move.
fn heuristic_value(quiescence: &mut Quiescence, request: &EvalRequest) -> f32 {
    let (score, _) = quiescence.score(&request.position);
    if is_decisive(score) {
        to_value(score)
    } else {
        (score as f32 / BLEND_SCALE).tanh()
    }
}

impl<E: Evaluator> Evaluator for HeuristicBlend<E> {
    fn evaluate(&mut self, batch: &[EvalRequest]) -> Vec<Evaluation> {
        let mut evaluations = self.inner.evaluate(batch);
        if let Some((weight, quiescence)) = &mut self.blend {
            for (evaluation, request) in evaluations.iter_mut().zip(batch) {
                let heuristic = heuristic_value(quiescence, request);
                evaluation.value = (1.0 - *weight) * evaluation.value + *weight * heuristic;
            }
        }
        evaluations
    }
}
