//! Results that are certain one move ahead, found by the rules alone.
//!
//! The back-row win is checked at the start of a turn, so a race is decided a move before the
//! game ends: a side that takes the lead on the far rows wins unless the very next reply
//! repairs it. A search that only sees the end of the game needs three plies to notice a run it
//! cannot stop (the run, any reply, the win); with these facts it needs one. They are exact, so
//! a tree may treat them as finished games.
//!
//! [`Position::forced_in_two`] looks one move further, which is cheap because a race narrows
//! the game: the attacker only needs the few moves that take the lead, and the defender only
//! has the few that take it back. It finds the races fought over one corner, where each answer
//! that captures the invader is met by another phalanx taking the square again.

use super::position::{Color, Move, Position};

/// What the side to move can be sure of before moving.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Forced {
    /// This move takes the lead on the far rows, and no reply takes it back (from
    /// [`Position::forced_in_two`]: or every reply that takes it back allows such a win).
    Win(Move),
    /// The opponent leads on the far rows and no move takes the lead back: whatever is played,
    /// the opponent wins at the start of their turn (from [`Position::forced_in_two`]: or at
    /// the start of their next turn, with a win of the first kind).
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

    /// [`Position::forced_with_moves`], or failing that a result certain two moves ahead: a move
    /// that takes the lead on the far rows such that every reply taking it back allows a
    /// [`Forced::Win`], or, for a side under such a lead, answers that each allow one. Costs a
    /// few move generations per answer, and only in positions where a lead can change hands.
    pub fn forced_in_two(&self, moves: &[Move]) -> Option<Forced> {
        if moves.is_empty() || !self.may_be_forced() {
            return None;
        }
        if let Some(forced) = self.forced_among(moves) {
            return Some(forced);
        }
        let us = self.side_to_move();
        // Whether a reply leaves the replying side lost: it keeps the other side's lead, or it
        // allows a win one move ahead.
        let reply_loses = |after: Position| {
            after.side_to_move_has_won() || matches!(after.forced(), Some(Forced::Win(_)))
        };
        let mut replies = Vec::with_capacity(128);
        for &mv in moves {
            let next = self.play_unchecked(mv);
            if !leads(&next, us) || next.ply_cap_reached() {
                continue;
            }
            next.legal_moves_into(&mut replies);
            if replies.iter().all(|&reply| reply_loses(next.play_unchecked(reply))) {
                return Some(Forced::Win(mv));
            }
        }
        let threatened = leads(self, us.opponent());
        (threatened && moves.iter().all(|&mv| reply_loses(self.play_unchecked(mv))))
            .then_some(Forced::Loss)
    }

    /// Drops the moves that lose at once when the opponent leads on the far rows: only a move
    /// that takes the lead away (capturing an invader, or entering the far row in turn) keeps
    /// the game going. A search that still lists the others spends a visit on each to learn that
    /// it loses, which in a small budget is most of the visits of a position under attack. Leaves
    /// `moves` as they are when there is no lead to answer, or when nothing answers it (the game
    /// goes on until the opponent's turn: [`Forced::Loss`]).
    pub fn keep_repairs(&self, moves: &mut Vec<Move>) {
        if self.is_finished_at_start() || !leads(self, self.side_to_move().opponent()) {
            return;
        }
        let repairs: Vec<Move> = moves
            .iter()
            .copied()
            .filter(|&mv| !self.play_unchecked(mv).side_to_move_has_won())
            .collect();
        if !repairs.is_empty() {
            *moves = repairs;
        }
    }

    /// Cheap exit for almost every position: the game goes on, with no lead to defend against,
    /// no piece of ours on the far row, and no move that lands one there.
    fn may_be_forced(&self) -> bool {
        if self.is_finished_at_start() {
            return false;
        }
        let us = self.side_to_move();
        self.far_row_count(us.opponent()) > self.far_row_count(us)
            || self.far_row_count(us) > 0
            || self.can_enter_far_row()
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
            if leads(&next, us) && !next.ply_cap_reached() && no_reply_repairs(&next, &mut replies)
            {
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
