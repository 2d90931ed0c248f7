//! Plain UCT with random playouts (stub: to be written).
use super::{Decision, Limit, Player, RandomPlayer};
use crate::game::Position;

pub const DEFAULT_LIMIT: Limit = Limit { nodes: Some(1000), depth: None, time: None };

pub struct RolloutPlayer(RandomPlayer, Limit);

impl RolloutPlayer {
    pub fn new(limit: Limit, c_puct: Option<f32>, seed: u64) -> RolloutPlayer {
        let _ = c_puct;
        RolloutPlayer(RandomPlayer::new(seed), limit)
    }
}

impl Player for RolloutPlayer {
    fn name(&self) -> String {
        "mcts-rollout".into()
    }
    fn new_game(&mut self, seed: u64) {
        self.0.new_game(seed)
    }
    fn choose(&mut self, position: &Position, limit: Limit) -> Decision {
        self.0.choose(position, limit)
    }
}
