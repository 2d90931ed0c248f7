//! Results that are certain one move ahead, found by the rules alone.
//!
//! The back-row win is checked at the start of a turn, so a race is decided a move before the
//! game ends: a side that takes the lead on the far rows wins unless the very next reply
//! repairs it. A search that only sees the end of the game needs three plies to notice a run it
//! cannot stop (the run, any reply, the win); with these facts it needs one. They are exact, so
//! a tree may treat them as finished games.

use super::position::{Color, Move, Position};

/// What the side to move can be sure of before moving.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Forced {
    /// This move takes the lead on the far rows, and no reply takes it back.
    Win(Move),
    /// The opponent leads on the far rows and no move takes the lead back: whatever is played,
    /// the opponent wins at the start of their turn.
    Loss,
}

impl Position {
    /// The result that is certain one move ahead, if any. A finished position has none (see
    /// [`Position::status`]). The ply cap is respected: a lead that would only count after the
    /// cap is a draw, not a win.
    pub fn forced(&self) -> Option<Forced> {
        if !self.may_be_forced() {
            return None;
        }
        self.forced_among(&self.legal_moves())
    }

    /// [`Position::forced`] for a caller that has the legal moves already (a search expanding
    /// a node), so they are not generated twice.
    pub fn forced_with_moves(&self, moves: &[Move]) -> Option<Forced> {
        if !self.may_be_forced() {
            return None;
        }
        self.forced_among(moves)
    }

    /// Cheap exit for almost every position: the game goes on, with no lead to defend against,
    /// no piece of ours on the far row, and no move that lands one there.
    fn may_be_forced(&self) -> bool {
        if self.is_finished_at_start() {
            return false;
        }
        let us = self.side_to_move();
        self.far_row_count(us.opponent()) > self.far_row_count(us) || self.far_row_count(us) > 0 || self.can_enter_far_row()
    }

    fn forced_among(&self, moves: &[Move]) -> Option<Forced> {
        if moves.is_empty() {
            return None;
        }
        let us = self.side_to_move();
        let threatened = self.far_row_count(us.opponent()) > self.far_row_count(us);
        let mut replies = Vec::with_capacity(128);
        let mut every_move_loses = threatened;
        for &mv in moves {
            let next = self.play_unchecked(mv);
            if next.side_to_move_has_won() {
                continue;
            }
            every_move_loses = false;
            if leads(&next, us) && !next.ply_cap_reached() && no_reply_repairs(&next, &mut replies) {
                return Some(Forced::Win(mv));
            }
        }
        every_move_loses.then_some(Forced::Loss)
    }
}

/// Whether `side` has more pieces on its far row than the other side has on its own.
fn leads(position: &Position, side: Color) -> bool {
    position.far_row_count(side) > position.far_row_count(side.opponent())
}

/// Whether every reply of the side to move (who is behind on the far rows) leaves the other
/// side still ahead at the start of its turn. No reply at all is a loss too.
fn no_reply_repairs(position: &Position, replies: &mut Vec<Move>) -> bool {
    position.legal_moves_into(replies);
    replies.iter().all(|&reply| position.play_unchecked(reply).side_to_move_has_won())
}
