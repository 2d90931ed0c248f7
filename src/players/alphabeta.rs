//! Alpha-beta player (stub: to be written).
use super::{Decision, Limit, Player, RandomPlayer};
use crate::game::Position;

pub const DEFAULT_LIMIT: Limit = Limit { nodes: None, depth: Some(4), time: None };

pub struct AlphaBetaPlayer(RandomPlayer, Limit);

impl AlphaBetaPlayer {
    pub fn new(limit: Limit, seed: u64) -> AlphaBetaPlayer {
        AlphaBetaPlayer(RandomPlayer::new(seed), limit)
    }
}

impl Player for AlphaBetaPlayer {
    fn name(&self) -> String {
        "alphabeta".into()
    }
    fn new_game(&mut self, seed: u64) {
        self.0.new_game(seed)
    }
    fn choose(&mut self, position: &Position, limit: Limit) -> Decision {
        self.0.choose(position, limit)
    }
}
