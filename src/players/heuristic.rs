//! A hand-made evaluation, in centipawn-like units (a piece is about 100) from the side to
//! move's view, and the score scale the hand-written searchers share: exact results are
//! [`WIN`] minus the plies to reach them, so a quicker win scores higher and a slower loss
//! scores higher than a quicker one.
//!
//! The evaluation is built from bitboard counts and a few shifts per direction, no move
//! generation, because alpha-beta calls it at every leaf (millions of times per move).

use crate::game::{Bitboard, Color, Dir, Geometry, Move, Position, Square};

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

/// Plies to the end of the game for a decided `score` (positive: the side to move wins).
pub fn plies_to_result(score: i32) -> Option<i32> {
    is_decisive(score).then(|| if score > 0 { WIN - score } else { -(WIN + score) })
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
/// [`evaluate`] uses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weights {
    /// Per piece. Material is what captures fight over, and a side with fewer pieces has
    /// shorter phalanxes: less reach and fewer captures of its own.
    pub piece: i32,
    /// Per piece by rows advanced towards its far row (index 0: the home row), on a 12-row
    /// board; other heights are scaled to it. Advanced pieces are closer to the far row, which
    /// decides the game, and they take space the enemy's phalanxes need. The table is convex:
    /// the last rows before the far row are worth most.
    pub advance: [i32; 11],
    /// Per piece on the far row (beyond its advancement). Pieces already there count for the
    /// start-of-turn win: with them in place, one more entry decides the game.
    pub far_row: i32,
    /// Per own piece on the home row: the last line against entries (a lone enemy piece cannot
    /// land on an occupied square, and home-row pieces are the ones that capture intruders).
    pub home_guard: i32,
    /// Per own piece with an own piece right behind it in a forward direction: forward lines
    /// are the phalanxes that move far and capture, so connected pieces are stronger.
    pub support: i32,
    /// Per distinct piece of the side to move that can land on its far row this move (at most
    /// [`Weights::MAX_COUNTED_ENTRIES`] counted). It can force the opponent to answer at once,
    /// and often there is no answer.
    pub entry_to_move: i32,
    /// Per distinct enemy piece that can land on our home row on its next move: a threat we
    /// must keep an answer ready for.
    pub entry_waiting: i32,
    /// Per excess enemy piece on our home row when it is our turn: unless this move captures
    /// it or answers on the far row, the game is lost. The search resolves it exactly; this
    /// only matters to one-ply players. Half of it is given back when the side to move can
    /// answer with an entry of its own.
    pub threatened: i32,
    /// The side to move: it acts first, which in a race to the far row is worth something.
    pub tempo: i32,
}

impl Weights {
    pub const MAX_COUNTED_ENTRIES: u32 = 3;

    pub const DEFAULT: Weights = Weights {
        piece: 100,
        advance: [0, 3, 7, 12, 18, 25, 33, 42, 52, 63, 75],
        far_row: 150,
        home_guard: 4,
        support: 4,
        entry_to_move: 60,
        entry_waiting: 40,
        threatened: 400,
        tempo: 10,
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
    let empty = geo.board & !(mine | theirs);
    let entries_mine = entry_heads(geo, me, mine, theirs, empty).count().min(Weights::MAX_COUNTED_ENTRIES) as i32;
    let entries_theirs = entry_heads(geo, them, theirs, mine, empty).count().min(Weights::MAX_COUNTED_ENTRIES) as i32;
    let mut score = weights.tempo + side_terms(geo, me, mine, weights) - side_terms(geo, them, theirs, weights);
    score += weights.entry_to_move * entries_mine - weights.entry_waiting * entries_theirs;
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
    score + weights.piece * count + weights.far_row * far_count + weights.home_guard * home_count + weights.support * supported.count() as i32
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
pub fn forward_dirs(color: Color) -> [Dir; 3] {
    match color {
        Color::White => [Dir::North, Dir::NorthEast, Dir::NorthWest],
        Color::Black => [Dir::South, Dir::SouthEast, Dir::SouthWest],
    }
}

/// The heads of `color`'s phalanxes that can land on its far row this move (ignoring the
/// symmetry rule, which forbids only rare entries). In direction `d` a head j squares short of
/// the far row, with j-1 empty squares between, enters when its line (counted back from it) has
/// at least j pieces, and at least 2 when the landing square holds an enemy piece: that piece's
/// own line onward stops at the edge, so it is 1 long and any pair captures it.
pub fn entry_heads(geo: &Geometry, color: Color, own: Bitboard, enemy: Bitboard, empty: Bitboard) -> Bitboard {
    let far = geo.rows[color.far_row(geo.height) as usize];
    let mut heads = Bitboard::EMPTY;
    for dir in forward_dirs(color) {
        let back = dir.opposite();
        // Squares 1, 2, ... steps short of an empty (or enemy) landing square on the far row.
        let mut reach_empty = geo.shift(far & empty, back);
        let mut reach_enemy = geo.shift(far & enemy, back);
        // Own squares ending a line of at least j own pieces (counting back against `dir`).
        let mut run = own;
        let pair = own & geo.shift(own, dir);
        for j in 1..geo.height {
            heads |= own & reach_empty & run;
            heads |= own & reach_enemy & if j == 1 { pair } else { run };
            run &= geo.shift(run, dir);
            reach_empty = geo.shift(reach_empty & empty, back);
            reach_enemy = geo.shift(reach_enemy & empty, back);
            if run.is_empty() || (reach_empty | reach_enemy).is_empty() {
                break;
            }
        }
    }
    heads
}

/// What a legal move does, found by walking its phalanx without playing it (cheaper than
/// [`Position::play_unchecked`] when a searcher only orders or filters moves).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveFacts {
    /// Enemy pieces the move captures.
    pub captured: u8,
    /// Whether the head lands on the mover's far row from off it.
    pub enters: bool,
}

/// The [`MoveFacts`] of `mv`, which must be legal in `position`.
#[inline]
pub fn move_facts(position: &Position, mv: Move) -> MoveFacts {
    let me = position.side_to_move();
    let own = position.pieces(me);
    let enemy = position.pieces(me.opponent());
    let offset = mv.dir.offset();
    // A step stays on the board (without wrapping into another row) exactly when it lands on
    // the direction's shift mask.
    let landing = position.geometry().shift_masks[mv.dir.index()];
    let step = |index: i32| {
        let next = index + offset;
        (0..256).contains(&next).then(|| Square::from_index(next as u8)).filter(|sq| landing.contains(*sq))
    };
    let mut head = mv.from.index() as i32;
    while let Some(next) = step(head).filter(|sq| own.contains(*sq)) {
        head = next.index() as i32;
    }
    let target = Square::from_index((head + mv.distance as i32 * offset) as u8);
    let mut captured = 0;
    let mut at = Some(target);
    while let Some(sq) = at.filter(|sq| enemy.contains(*sq)) {
        captured += 1;
        at = step(sq.index() as i32);
    }
    let forward = mv.dir.delta().1 == me.forward().delta().1;
    MoveFacts { captured, enters: forward && target.row() == me.far_row(position.rules().height) }
}

/// Whether the side to move must answer an entry this move: the opponent has more pieces on its
/// far row than the side to move on its own, so unless this move captures there or enters too,
/// the opponent wins at the start of its turn.
#[inline]
pub fn must_answer(position: &Position) -> bool {
    let me = position.side_to_move();
    position.far_row_count(me.opponent()) > position.far_row_count(me)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Position;

    fn pos(text: &str) -> Position {
        text.parse().unwrap()
    }

    /// The bitboard entry finder agrees with the move generator on where heads can land.
    #[test]
    fn entry_heads_match_the_generator() {
        let texts = [
            "14/w13/14/14/14/14/14/7b6/14/14/14/3w10 w",
            "bbb11/1w12/1w12/1w12/14/14/14/14/14/14/14/3w10 w",
            "14/14/3w10/3w10/3w10/14/14/14/14/14/14/14 w",
            "b13/wb12/w13/14/14/14/14/14/14/14/14/14 w",
            "14/14/14/14/14/14/14/14/bb12/b13/b13/w13 b",
        ];
        for text in texts {
            let p = pos(text);
            let me = p.side_to_move();
            let geo = p.geometry();
            let found = entry_heads(geo, me, p.pieces(me), p.pieces(me.opponent()), p.empty());
            let mut expected = Bitboard::EMPTY;
            for mv in p.legal_moves() {
                if p.play_unchecked(mv).far_row_count(me) > p.far_row_count(me) {
                    let line = p.line_length(mv.from, mv.dir, me);
                    expected.set(mv.from.offset(mv.dir, line as i32 - 1, geo.width, geo.height).unwrap());
                }
            }
            assert_eq!(found, expected, "{text}");
        }
    }

    #[test]
    fn move_facts_match_playing_the_move() {
        let texts = ["bbb11/1w12/1w12/1w12/14/14/14/14/14/14/14/3w10 w", "14/14/14/14/14/14/14/14/14/14/wwww2b1bbb3/14 w", "14/14/14/14/14/14/14/14/bb12/b13/b13/w13 b"];
        for text in texts {
            let p = pos(text);
            let me = p.side_to_move();
            for mv in p.legal_moves() {
                let after = p.play_unchecked(mv);
                let captured = p.pieces(me.opponent()).count() - after.pieces(me.opponent()).count();
                let enters = after.far_row_count(me) > p.far_row_count(me);
                assert_eq!(move_facts(&p, mv), MoveFacts { captured: captured as u8, enters }, "{text} {mv}");
            }
        }
    }

    #[test]
    fn scores_are_antisymmetric_in_mirrored_colours() {
        // The same picture seen from either side gives the same score (the evaluation knows
        // no colour).
        let white = pos("14/14/bb12/14/14/14/14/3w10/3w10/14/14/ww12 w");
        let black = pos("bb12/14/14/3b10/3b10/14/14/14/14/ww12/14/14 b");
        assert_eq!(evaluate(&white), evaluate(&black));
        assert_eq!(evaluate(&Position::standard()), Weights::DEFAULT.tempo);
    }

    #[test]
    fn score_scale() {
        assert!(is_decisive(win_in(3)) && is_decisive(loss_in(7)) && !is_decisive(EVAL_LIMIT));
        assert_eq!(plies_to_result(win_in(3)), Some(3));
        assert_eq!(plies_to_result(loss_in(7)), Some(-7));
        assert_eq!(to_value(loss_in(2)), -1.0);
        assert!(win_in(1) > win_in(3));
    }
}
