//! One-ply greedy player: plays every legal move, scores what it leads to, and takes the best,
//! breaking ties at random. A baseline that knows the rules' immediate results and the
//! evaluation, and nothing about replies.

use super::heuristic::{self, evaluate, loss_in, win_in};
use super::{Decision, Limit, Player};
use crate::game::Position;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

pub struct GreedyPlayer {
    rng: StdRng,
}

impl GreedyPlayer {
    pub fn new(seed: u64) -> GreedyPlayer {
        GreedyPlayer { rng: StdRng::seed_from_u64(seed) }
    }
}

/// The score of the position after a move, for the side that made it. After the move the
/// opponent is to move, so its own-view result or evaluation is negated; a finished game is
/// scored exactly, one ply away.
pub fn score_after(after: &Position) -> i32 {
    if after.side_to_move_has_won() {
        loss_in(1)
    } else if after.ply_cap_reached() {
        0
    } else if !after.has_legal_move() {
        win_in(1)
    } else {
        -evaluate(after)
    }
}

impl Player for GreedyPlayer {
    fn name(&self) -> String {
        "greedy".into()
    }

    fn new_game(&mut self, seed: u64) {
        self.rng = StdRng::seed_from_u64(seed);
    }

    fn choose(&mut self, position: &Position, _limit: Limit) -> Decision {
        let moves = position.legal_moves();
        assert!(!moves.is_empty(), "choose is only asked in positions with a legal move");
        let mut best = Vec::new();
        let mut best_score = i32::MIN;
        for &mv in &moves {
            let score = score_after(&position.play_unchecked(mv));
            if score > best_score {
                best_score = score;
                best.clear();
            }
            if score == best_score {
                best.push(mv);
            }
        }
        let mv = best[self.rng.random_range(0..best.len())];
        Decision {
            mv,
            value: Some(heuristic::to_value(best_score)),
            nodes: moves.len() as u64,
            depth: Some(1),
            principal_variation: vec![mv],
        }
    }
}
