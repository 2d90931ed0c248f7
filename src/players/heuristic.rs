//! A hand-made evaluation, in centipawn-like units (a piece is about 100) from the side to
//! move's view, and the score scale the hand-written searchers share: exact results are
//! [`WIN`] minus the plies to reach them, so a quicker win scores higher and a slower loss
//! scores higher than a quicker one.
//!
//! The evaluation is built from bitboard counts and shifts (its move counts use the generator's
//! set arithmetic, never a move list), because alpha-beta calls it at every leaf, hundreds of
//! thousands of times a second. The weights were set by matches between alpha-beta players
//! that differ in one weight (equal node budgets, colours alternated, 20 to 40 games): phalanx
//! power (mobility, connected pieces) decided most games, while rewarding advancement or
//! far-row presence much lost them (pieces pushed ahead alone get captured, and the search
//! already sees the far-row rule exactly), so those two are small.

use crate::game::{Bitboard, Color, Dir, Geometry, Position};

/// The score of a won game decided now; a win `n` plies ahead scores `WIN - n`.
pub const WIN: i32 = 100_000;
/// The longest mate distance the scale encodes; scores at least `WIN - MAX_MATE_PLY` in
/// magnitude are decided results, everything below is heuristic.
pub const MAX_MATE_PLY: i32 = 1_000;
/// The most a heuristic score can say (well inside the decided range, so the two never mix).
pub const EVAL_LIMIT: i32 = 30_000;
/// Scores are mapped to values in [-1, 1] by `tanh(score / VALUE_SCALE)`: a piece up is about
/// +0.25, three pieces up about +0.64.
pub const VALUE_SCALE: f32 = 400.0;

/// The score of winning `plies` plies from now, for the side to move.
pub const fn win_in(plies: i32) -> i32 {
    WIN - plies
}

/// The score of losing `plies` plies from now, for the side to move.
pub const fn loss_in(plies: i32) -> i32 {
    -(WIN - plies)
}

/// Whether `score` is a decided result rather than a heuristic guess.
pub const fn is_decisive(score: i32) -> bool {
    score >= WIN - MAX_MATE_PLY || score <= -(WIN - MAX_MATE_PLY)
}

/// `score` as an expected result in [-1, 1]: exactly ±1 for decided results.
pub fn to_value(score: i32) -> f32 {
    if is_decisive(score) {
        score.signum() as f32
    } else {
        (score as f32 / VALUE_SCALE).tanh()
    }
}

/// The evaluation's weights, exposed so experiments can vary them; [`Weights::DEFAULT`] is what
/// [`evaluate`] uses. Every term is the side to move's minus the opponent's, except where said.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weights {
    /// Per piece. Material is what captures fight over, and a side with fewer pieces has
    /// shorter phalanxes: less reach, fewer captures, and fewer defenders of its home row.
    pub piece: i32,
    /// Per piece by rows advanced towards its far row (index 0: the home row), on a 12-row
    /// board; other heights are scaled to it. Pieces up the board are nearer the row that
    /// decides the game and take space the enemy's phalanxes need; but a piece pushed ahead of
    /// its phalanx is a target, so the table is small and convex (only the last rows count).
    pub advance: [i32; 11],
    /// Per piece on the far row (beyond its advancement): progress towards the start-of-turn
    /// win, where with pieces already in place one more entry decides. Small, because while
    /// the counts are level the pieces there decide nothing, and an uneven count is scored by
    /// the search exactly.
    pub far_row: i32,
    /// Per own piece on the home row: the last line against entries (a lone enemy piece cannot
    /// land on an occupied square, and home-row pieces are the ones that capture intruders).
    pub home_guard: i32,
    /// Per own piece with an own piece right behind it: forward lines are the phalanxes that
    /// move far and capture going forward.
    pub support: i32,
    /// Per own piece with an own piece diagonally behind it: the diagonal lines, which both
    /// advance and attack (matches weighted them above straight support).
    pub diagonal_support: i32,
    /// Per legal move (both sides counted as if each were to move): a phalanx of k pieces has
    /// up to k moves in each open direction and captures lines shorter than k, so the move
    /// count measures phalanx power directly. The strongest single term in matches.
    pub mobility: i32,
    /// Per own piece that some enemy move could capture (counted for the side to move only).
    /// Quiescence searches the side to move's captures but not the threats it faces; it can
    /// usually save the pieces, so this is well below a piece.
    pub exposed: i32,
    /// Per distinct piece of the side to move that can land on its far row this move (at most
    /// [`Weights::MAX_COUNTED_ENTRIES`] counted): the threat of an entry ties the opponent down,
    /// and when it has no answer the game is won.
    pub entry_to_move: i32,
    /// Per distinct enemy piece that can land on our home row on its next move (same cap): a
    /// threat we must keep an answer ready for.
    pub entry_waiting: i32,
    /// Per excess enemy piece on our home row when it is our turn: unless this move captures
    /// it or answers on the far row, the game is lost. The search resolves it exactly; this
    /// matters to one-ply players and at quiescence's horizon. Half of it is given back when
    /// the side to move can answer with an entry of its own.
    pub threatened: i32,
}

impl Weights {
    pub const MAX_COUNTED_ENTRIES: u32 = 3;

    pub const DEFAULT: Weights = Weights {
        piece: 100,
        advance: [0, 0, 1, 2, 3, 5, 6, 8, 10, 12, 15],
        far_row: 50,
        home_guard: 8,
        support: 8,
        diagonal_support: 16,
        mobility: 3,
        exposed: 15,
        entry_to_move: 60,
        entry_waiting: 40,
        threatened: 400,
    };
}

impl Default for Weights {
    fn default() -> Weights {
        Weights::DEFAULT
    }
}

/// Score of `position` for the side to move (positive: better for it), with the default
/// weights. A position whose side to move has already won scores [`EVAL_LIMIT`]; callers that
/// care about exact results check [`Position::status`] first.
pub fn evaluate(position: &Position) -> i32 {
    evaluate_with(position, &Weights::DEFAULT)
}

/// [`evaluate`] with other weights.
pub fn evaluate_with(position: &Position, weights: &Weights) -> i32 {
    let geo = position.geometry();
    let me = position.side_to_move();
    let them = me.opponent();
    let (mine, theirs) = (position.pieces(me), position.pieces(them));
    let (far_mine, far_theirs) = (position.far_row_count(me), position.far_row_count(them));
    if far_mine > far_theirs {
        return EVAL_LIMIT;
    }
    // What each side's pieces reach with one move (the opponent's as if it were to move).
    let reach_mine = position.reach();
    let reach_theirs = position.with_side_to_move(them, position.ply()).reach();
    let entries_mine = reach_mine.runners.count().min(Weights::MAX_COUNTED_ENTRIES) as i32;
    let entries_theirs = reach_theirs.runners.count().min(Weights::MAX_COUNTED_ENTRIES) as i32;
    let mut score = side_terms(geo, me, mine, weights) - side_terms(geo, them, theirs, weights);
    score += weights.entry_to_move * entries_mine - weights.entry_waiting * entries_theirs;
    score += weights.mobility * (reach_mine.moves as i32 - reach_theirs.moves as i32);
    // Own pieces the opponent could capture.
    score -= weights.exposed * reach_theirs.captures.count() as i32;
    if far_theirs > far_mine {
        let penalty = weights.threatened * (far_theirs - far_mine) as i32;
        score -= if entries_mine > 0 { penalty / 2 } else { penalty };
    }
    score.clamp(-EVAL_LIMIT + 1, EVAL_LIMIT - 1)
}

/// The terms that depend on one side's pieces only.
#[inline]
fn side_terms(geo: &Geometry, color: Color, pieces: Bitboard, weights: &Weights) -> i32 {
    let height = geo.height as usize;
    let rows = pieces.rows();
    let far = color.far_row(geo.height) as usize;
    let home = height - 1 - far;
    let scale = &ADVANCE_INDEX[height];
    let mut score = 0;
    for (row, bits) in rows.iter().enumerate().take(height) {
        let count = bits.count_ones() as i32;
        let advanced = if color == Color::White { row } else { height - 1 - row };
        score += count * weights.advance[scale[advanced] as usize];
    }
    let count = pieces.count() as i32;
    let far_count = rows[far].count_ones() as i32;
    let home_count = rows[home].count_ones() as i32;
    let forward = color.forward();
    let supported = pieces & geo.shift(pieces, forward);
    let [_, left, right] = forward_dirs(color);
    let diagonal =
        (pieces & geo.shift(pieces, left)).count() + (pieces & geo.shift(pieces, right)).count();
    score
        + weights.piece * count
        + weights.far_row * far_count
        + weights.home_guard * home_count
        + weights.support * supported.count() as i32
        + weights.diagonal_support * diagonal as i32
}

/// `ADVANCE_INDEX[height][rows advanced]`: the index into [`Weights::advance`] that a piece this
/// far up a board of `height` rows uses, so every height is scored as if it had 12 rows. The far
/// row maps to the last entry (its own term comes on top).
const ADVANCE_INDEX: [[u8; 16]; 17] = advance_index();

const fn advance_index() -> [[u8; 16]; 17] {
    let mut table = [[0u8; 16]; 17];
    let mut height = 2;
    while height <= 16 {
        let mut advanced = 0;
        while advanced < height {
            // Round to the nearest of the 11 steps from the home row (0) to the far row (10).
            let scaled = (advanced * 10 * 2 + (height - 1)) / (2 * (height - 1));
            table[height][advanced] = if scaled > 10 { 10 } else { scaled as u8 };
            advanced += 1;
        }
        height += 1;
    }
    table
}

/// The three directions in which `color` moves towards its far row.
#[inline]
fn forward_dirs(color: Color) -> [Dir; 3] {
    match color {
        Color::White => [Dir::North, Dir::NorthEast, Dir::NorthWest],
        Color::Black => [Dir::South, Dir::SouthEast, Dir::SouthWest],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Position;

    fn pos(text: &str) -> Position {
        text.parse().unwrap()
    }

    #[test]
    fn scores_are_antisymmetric_in_mirrored_colours() {
        // The same picture seen from either side gives the same score (the evaluation knows
        // no colour).
        let white = pos("14/14/bb12/14/14/14/14/3w10/3w10/14/14/ww12 w");
        let black = pos("bb12/14/14/3b10/3b10/14/14/14/14/ww12/14/14 b");
        assert_eq!(evaluate(&white), evaluate(&black));
        assert_eq!(evaluate(&Position::standard()), 0);
    }

    #[test]
    fn score_scale() {
        assert!(is_decisive(win_in(3)) && is_decisive(loss_in(7)) && !is_decisive(EVAL_LIMIT));
        assert_eq!(to_value(loss_in(2)), -1.0);
        assert!(win_in(1) > win_in(3));
    }
}
