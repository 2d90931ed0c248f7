//! One-ply greedy player (stub: to be written).
use super::{Decision, Limit, Player, RandomPlayer};
use crate::game::Position;

pub struct GreedyPlayer(RandomPlayer);

impl GreedyPlayer {
    pub fn new(seed: u64) -> GreedyPlayer {
        GreedyPlayer(RandomPlayer::new(seed))
    }
}

impl Player for GreedyPlayer {
    fn name(&self) -> String {
        "greedy".into()
    }
    fn new_game(&mut self, seed: u64) {
        self.0.new_game(seed)
    }
    fn choose(&mut self, position: &Position, limit: Limit) -> Decision {
        self.0.choose(position, limit)
    }
}
