//! A recorded game gone over move by move with a player: what the player expected for the side
//! to move before each move and after it, so the moves that gave a result away stand out.
//!
//! The player searches every position of the game once, in order (so a network player reuses
//! its tree where the game followed its choice). A move's "before" is the player's value of
//! the position it was played in and its "after" the value of the position it left, both for
//! the side that moved; a finished game is valued by its result, not searched.

use crate::game::{Color, GameRecord, Move, Position, Status};
use crate::players::{winning_chance, Limit, Player};

/// One move of the game, as the reviewing player saw it.
#[derive(Clone, Debug, PartialEq)]
pub struct ReviewedMove {
    /// 1 for the first move of the game.
    pub ply: usize,
    /// The position the move was played in (for its notation).
    pub position: Position,
    pub mover: Color,
    pub played: Move,
    /// The player's own choice in the position the move was played in.
    pub preferred: Move,
    /// Expected result for the mover in [-1, 1] before the move and after it.
    pub before: f32,
    pub after: f32,
}

impl ReviewedMove {
    /// The share of a win the move gave away, in winning chance from 0 to 1; negative when
    /// the move did better than the player expected.
    pub fn given_away(&self) -> f32 {
        winning_chance(self.before) - winning_chance(self.after)
    }
}

/// Why a game could not be reviewed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ReviewError {
    #[error("{player} gives no evaluation of a position, so it cannot review a game (a network, alphabeta, mcts-rollout or greedy can)")]
    NoEvaluation { player: String },
}

/// Every move of `record`, in order, valued by `player` at `limit` a position. `progress` hears
/// of each position searched (done, of total).
pub fn review_game(
    record: &GameRecord,
    player: &mut dyn Player,
    limit: Limit,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<ReviewedMove>, ReviewError> {
    let positions = record.positions();
    player.new_game(0);
    let mut opinions: Vec<(f32, Option<Move>)> = Vec::with_capacity(positions.len());
    for (done, position) in positions.iter().enumerate() {
        opinions.push(opinion(position, player, limit)?);
        progress(done + 1, positions.len());
    }
    let mut reviewed = Vec::with_capacity(record.moves.len());
    for (i, &played) in record.moves.iter().enumerate() {
        let mover = positions[i].side_to_move();
        let next = &positions[i + 1];
        let after =
            if next.side_to_move() == mover { opinions[i + 1].0 } else { -opinions[i + 1].0 };
        let (before, preferred) = opinions[i];
        let preferred =
            preferred.expect("a position a move was played in is ongoing, so it was searched");
        reviewed.push(ReviewedMove {
            ply: i + 1,
            position: positions[i],
            mover,
            played,
            preferred,
            before,
            after,
        });
    }
    Ok(reviewed)
}

/// The value of `position` for its side to move, and the player's move there if the game goes
/// on.
fn opinion(
    position: &Position,
    player: &mut dyn Player,
    limit: Limit,
) -> Result<(f32, Option<Move>), ReviewError> {
    match position.status() {
        Status::Won { winner, .. } => {
            Ok((if winner == position.side_to_move() { 1.0 } else { -1.0 }, None))
        }
        Status::Draw => Ok((0.0, None)),
        Status::Ongoing => {
            let decision = player.choose(position, limit);
            let value = decision
                .value
                .ok_or_else(|| ReviewError::NoEvaluation { player: player.name() })?;
            Ok((value, Some(decision.mv)))
        }
    }
}
