//! What a move does before it is played, found by walking phalanxes rather than by playing:
//! the facts of one move ([`move_facts`]), and the captures and far-row entries of the side to
//! move ([`forcing_moves`]), which the hand-written searchers' quiescence and rollouts read at
//! every node. Beside the move generator, whose set arithmetic they share.

use super::{Bitboard, Dir, Move, Position, Square, MAX_DIM};

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
    if mv.is_placement() {
        return MoveFacts { captured: 0, enters: false };
    }
    let me = position.side_to_move();
    let own = position.pieces(me);
    let enemy = position.pieces(me.opponent());
    let offset = mv.dir.offset();
    // A step stays on the board (without wrapping into another row) exactly when it lands on
    // the direction's shift mask.
    let landing = position.geometry().shift_masks[mv.dir.index()];
    let step = |index: i32| {
        let next = index + offset;
        (0..256)
            .contains(&next)
            .then(|| Square::from_index(next as u8))
            .filter(|sq| landing.contains(*sq))
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

/// The legal captures and far-row entries of the side to move, with their facts, into `out`
/// (after clearing it): what quiescence searches, found with the generator's set arithmetic
/// instead of listing every move and walking each. Empty in a finished position.
///
/// This is its own walk rather than a visitor of the generator's (`Position::reach`'s): it
/// skips plain moves altogether, except the few rows that land on the far row in the three
/// directions that can enter it, where the shared walk builds every plain move group in all
/// eight directions. Quiescence calls it at every node, where that extra work would be paid
/// for moves it then throws away.
pub fn forcing_moves(position: &Position, out: &mut Vec<(Move, MoveFacts)>) {
    out.clear();
    if position.is_finished_at_start() {
        return;
    }
    // Literal directions, so that each inlined copy shifts by constants.
    forcing_moves_towards(position, Dir::North, out);
    forcing_moves_towards(position, Dir::NorthEast, out);
    forcing_moves_towards(position, Dir::East, out);
    forcing_moves_towards(position, Dir::SouthEast, out);
    forcing_moves_towards(position, Dir::South, out);
    forcing_moves_towards(position, Dir::SouthWest, out);
    forcing_moves_towards(position, Dir::West, out);
    forcing_moves_towards(position, Dir::NorthWest, out);
}

#[inline(always)]
fn forcing_moves_towards(position: &Position, dir: Dir, out: &mut Vec<(Move, MoveFacts)>) {
    let geo = position.geometry();
    let me = position.side_to_move();
    let (own, enemy) = (position.pieces(me), position.pieces(me.opponent()));
    let empty = position.empty();
    let back = dir.opposite();
    let forward = |bits: Bitboard| geo.shift(bits, dir);
    let backward = |bits: Bitboard| geo.shift(bits, back);
    let heads = own & backward(empty | enemy);
    if heads.is_empty() {
        return;
    }
    let far = me.far_row(geo.height) as i32;
    let rise = dir.delta().1;
    let entering = rise == me.forward().delta().1;
    let offset = dir.offset();
    let mut clear = [Bitboard::EMPTY; MAX_DIM as usize + 1];
    clear[0] = !Bitboard::EMPTY;
    let mut clear_len = 0;
    let mut run = own;
    let mut enemy_run = enemy;
    for k in 1..=MAX_DIM as i32 {
        if k > 1 {
            run = own & forward(run);
            enemy_run = enemy & backward(enemy_run);
        }
        let heads_k = heads & run;
        if heads_k.is_empty() {
            break;
        }
        // The move whose head lands on `landing` after `j` steps, when the rules allow it.
        let mut push = |landing: Square, j: i32, captured: u8| {
            let head = landing.index() as i32 - j * offset;
            let mv = Move::new(Square::from_index((head - (k - 1) * offset) as u8), dir, j as u8);
            let enters = entering && landing.row() as i32 == far;
            if !enters || !position.violates_symmetry_rule(mv) {
                out.push((mv, MoveFacts { captured, enters }));
            }
        };
        if entering {
            // Plain entries: j empty squares ahead, the last on the far row.
            for j in 1..=k {
                let row = far - j * rise;
                if !(0..geo.height as i32).contains(&row) {
                    break;
                }
                if j as usize > clear_len {
                    clear[j as usize] = backward(empty & clear[j as usize - 1]);
                    clear_len = j as usize;
                }
                let movers = heads_k & clear[j as usize] & geo.rows[row as usize];
                for head in movers.squares() {
                    push(Square::from_index((head.index() as i32 + j * offset) as u8), j, 0);
                }
            }
        }
        let weak = enemy & !enemy_run;
        if k < 2 || weak.is_empty() {
            continue;
        }
        let mut front = forward(heads_k);
        for j in 1..=k {
            for landing in (front & weak).squares() {
                let captured = position.line_length(landing, dir, me.opponent());
                push(landing, j, captured);
            }
            front = forward(front & empty);
            if front.is_empty() {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(text: &str) -> Position {
        text.parse().unwrap()
    }

    #[test]
    fn move_facts_match_playing_the_move() {
        let texts = [
            "bbb11/1w12/1w12/1w12/14/14/14/14/14/14/14/3w10 w",
            "14/14/14/14/14/14/14/14/14/14/wwww2b1bbb3/14 w",
            "14/14/14/14/14/14/14/14/bb12/b13/b13/w13 b",
        ];
        for text in texts {
            let p = pos(text);
            let me = p.side_to_move();
            for mv in p.legal_moves() {
                let after = p.play_unchecked(mv);
                let captured =
                    p.pieces(me.opponent()).count() - after.pieces(me.opponent()).count();
                let enters = after.far_row_count(me) > p.far_row_count(me);
                assert_eq!(
                    move_facts(&p, mv),
                    MoveFacts { captured: captured as u8, enters },
                    "{text} {mv}"
                );
            }
        }
    }

    /// The forcing-move generator finds exactly the legal moves that capture or enter, with
    /// their facts, on boards of several sizes and under every symmetry reading.
    #[test]
    fn forcing_moves_are_the_captures_and_entries() {
        use crate::game::{Rules, SymmetryRule};
        let texts = [
            "bbb11/1w12/1w12/1w12/14/14/14/14/14/14/14/3w10 w",
            "14/14/14/14/14/14/14/14/14/14/wwww2b1bbb3/14 w",
            "14/14/14/14/14/14/14/14/bb12/b13/b13/w13 b",
            "14/wb12/14/14/14/14/14/14/14/14/1w12/b13 w",
            "bb2bbbb1b2bb/b1b1bbb1b4b/1bb2b2b1b1b1/5b1b6/14/11b2/11b2/6w4b2/3w1w5b2/1w1ww4w2ww/1w2wwww1www1w/ww2ww1ww1ww1w w 30",
            "bbbbbbbb/bbb1bbbb/2bw4/2w5/w1wwwwww/1wwwwwww w 2",
            "b7bwww2/1bw5b2b2/1b3w4b2b/1wbw1w2b1b1b1/2w1ww2b2b2/2b4bb5/6b1b2w1w/2b1b7bb/2ww1b1wwb2w1/4b2w1b4/bb1b1b1wb5/ww1wbw1ww3bb w",
            "1bww2w7/3b1b1wwb4/b3w2w1b1wb1/4b1w3b3/bw7wb1w1/2w4bb5/1bw3wbwwb3/2wb4w2w1w/w2w2bw1wbw2/5b5ww1/1bwbb1ww1w3w/1w2b2wwb3w b",
        ];
        let mut found = Vec::new();
        for text in texts {
            for symmetry in SymmetryRule::ALL {
                let p = Position::parse(text, Rules { symmetry, ..Rules::default() }).unwrap();
                forcing_moves(&p, &mut found);
                let mut got: Vec<_> = found
                    .iter()
                    .map(|(mv, facts)| (mv.from.index(), mv.dir.index(), mv.distance, *facts))
                    .collect();
                let mut expected: Vec<_> = p
                    .legal_moves()
                    .into_iter()
                    .map(|mv| (mv, move_facts(&p, mv)))
                    .filter(|(_, facts)| facts.captured > 0 || facts.enters)
                    .map(|(mv, facts)| (mv.from.index(), mv.dir.index(), mv.distance, facts))
                    .collect();
                got.sort_by_key(|m| (m.0, m.1, m.2));
                expected.sort_by_key(|m| (m.0, m.1, m.2));
                assert_eq!(got, expected, "{text} {symmetry}");
            }
        }
    }
}
