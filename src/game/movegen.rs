//! Legal move generation with bitboards.
//!
//! For one direction `d`, every phalanx is handled at once by set arithmetic:
//! - a *head* is an own piece whose square ahead (in `d`) is not own;
//! - `run_k`: squares ending a line of at least k own pieces (counting back against `d`), so
//!   `heads & run_k` are the heads of the k-piece phalanxes (their tails lie k-1 squares back);
//! - `clear_j`: squares with j empty squares ahead of them;
//! - `weak_k`: enemy squares whose enemy line in `d` is shorter than k (capturable by k pieces);
//!   a k-phalanx captures at step j when j-1 empty squares lead to a `weak_k` square.
//!
//! The cost is a few bitboard operations per (direction, phalanx length, distance), not per
//! piece; only the rare moves that enter the far row are checked one by one (symmetry rule).
//!
//! Stones (a variant) are neither own nor enemy nor empty, so the same arithmetic treats them
//! as the board's edge: no run of empty squares passes one, and an enemy line ends at one.
//! During the placement phase the moves are the empty squares of the stone rows instead.

use super::bitboard::Bitboard;
use super::position::{Move, Position};
use super::rules::SymmetryRule;
use super::square::{Dir, Square, MAX_DIM};

/// Moves are grouped by (direction, phalanx length k, distance j); `visit` gets each group's
/// head squares. Returning `false` stops the walk.
#[derive(Clone, Copy)]
struct Group {
    dir: Dir,
    pieces: u8,
    distance: u8,
    heads: Bitboard,
    /// Whether the heads land on enemy pieces (a capture) rather than on empty squares.
    capture: bool,
}

impl Group {
    fn moves(self) -> impl Iterator<Item = Move> {
        let back = (self.pieces as i32 - 1) * self.dir.offset();
        self.heads.squares().map(move |head| {
            Move::new(
                Square::from_index((head.index() as i32 - back) as u8),
                self.dir,
                self.distance,
            )
        })
    }
}

/// What one side's pieces reach with one move ([`Position::reach`]): one walk of the set
/// arithmetic above serves the hand-written players' evaluation and the network's threat planes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reach {
    /// Moves (pseudo-legal: as many as the legal moves unless the symmetry rule forbids some).
    pub moves: u32,
    /// Enemy pieces some move captures (whole captured lines).
    pub captures: Bitboard,
    /// Own pieces (phalanx heads) some move lands on the far row, plain or capturing.
    pub runners: Bitboard,
}

/// What a walk over the move groups does with each group; returning `false` stops the walk.
/// Closures are visitors; a visitor too big for the compiler to inline as a closure implements
/// this with `#[inline(always)]`, so each direction's copy of it shifts by constants.
trait Visitor {
    fn visit(&mut self, group: Group) -> bool;
}

impl<F: FnMut(Group) -> bool> Visitor for F {
    #[inline(always)]
    fn visit(&mut self, group: Group) -> bool {
        self(group)
    }
}

/// [`Position::reach`]'s visitor.
struct ReachVisitor<'a> {
    position: &'a Position,
    enemy: Bitboard,
    reach: Reach,
}

impl Visitor for ReachVisitor<'_> {
    #[inline(always)]
    fn visit(&mut self, group: Group) -> bool {
        self.reach.moves += group.heads.count();
        self.reach.runners |= self.position.far_row_landings(group);
        if group.capture {
            let geo = self.position.geometry();
            let forward = |bits: Bitboard| {
                bits.shift_by(group.dir.offset()) & geo.shift_masks[group.dir.index()]
            };
            let mut line = group.heads;
            for _ in 0..group.distance {
                line = forward(line);
            }
            // The captured line runs on from where the head lands until the enemy line ends.
            while line.any() {
                self.reach.captures |= line;
                line = forward(line) & self.enemy;
            }
        }
        true
    }
}

impl Position {
    /// Visits every pseudo-legal move group (all rules but the symmetry rule).
    #[inline(always)]
    fn visit_groups(&self, visit: &mut impl Visitor) {
        // One call per direction with the direction a constant: once inlined, every shift is by
        // a fixed amount and its masks are loaded once, instead of looked up per operation.
        // The scratch table is shared so it is initialised once, not once per direction.
        let mut clear = [Bitboard::EMPTY; MAX_DIM as usize + 1];
        let _ = self.visit_direction(Dir::North, &mut clear, visit)
            && self.visit_direction(Dir::NorthEast, &mut clear, visit)
            && self.visit_direction(Dir::East, &mut clear, visit)
            && self.visit_direction(Dir::SouthEast, &mut clear, visit)
            && self.visit_direction(Dir::South, &mut clear, visit)
            && self.visit_direction(Dir::SouthWest, &mut clear, visit)
            && self.visit_direction(Dir::West, &mut clear, visit)
            && self.visit_direction(Dir::NorthWest, &mut clear, visit);
    }

    /// The groups of one direction; `false` when `visit` asked to stop. `clear` is scratch space.
    #[inline(always)]
    fn visit_direction(
        &self,
        dir: Dir,
        clear: &mut [Bitboard; MAX_DIM as usize + 1],
        visit: &mut impl Visitor,
    ) -> bool {
        let geo = self.geometry();
        let own = self.pieces(self.side_to_move());
        let enemy = self.pieces(self.side_to_move().opponent());
        let empty = self.empty();
        let back = dir.opposite();
        let (ahead_mask, back_mask) = (geo.shift_masks[dir.index()], geo.shift_masks[back.index()]);
        // One step in `dir` (or against it), keeping the board's squares only.
        let forward = |bits: Bitboard| bits.shift_by(dir.offset()) & ahead_mask;
        let backward = |bits: Bitboard| bits.shift_by(back.offset()) & back_mask;
        // Heads facing the edge or an own piece cannot move at any length: dropping them first
        // ends the length loop early (a full home row has a 14-long run eastward and westward).
        let heads = own & !backward(own) & backward(empty | enemy);
        // clear[j]: squares with j empty squares ahead; clear[0] is everything. Filled lazily:
        // entries past `clear_len` are left from another direction and never read.
        clear[0] = !Bitboard::EMPTY;
        let mut clear_len = 0;
        let mut run = own;
        let mut enemy_run = enemy;
        for k in 1..=MAX_DIM {
            if k > 1 {
                run = own & forward(run);
                enemy_run = enemy & backward(enemy_run);
            }
            let heads_k = heads & run;
            if heads_k.is_empty() {
                break;
            }
            // Plain moves: j empty squares ahead, j <= k.
            for j in 1..=k as usize {
                if j > clear_len {
                    clear[j] = backward(empty & clear[j - 1]);
                    clear_len = j;
                }
                let movers = heads_k & clear[j];
                if movers.is_empty() {
                    break; // clear[j] only shrinks as j grows
                }
                if !visit.visit(Group {
                    dir,
                    pieces: k,
                    distance: j as u8,
                    heads: movers,
                    capture: false,
                }) {
                    return false;
                }
            }
            // Captures: the enemy line starting at the landing square is shorter than k.
            let weak = enemy & !enemy_run;
            if k < 2 || weak.is_empty() {
                continue;
            }
            let mut reach = backward(weak);
            for j in 1..=k {
                let capturers = heads_k & reach;
                if capturers.any()
                    && !visit.visit(Group {
                        dir,
                        pieces: k,
                        distance: j,
                        heads: capturers,
                        capture: true,
                    })
                {
                    return false;
                }
                reach = backward(empty & reach);
                if reach.is_empty() {
                    break;
                }
            }
        }
        true
    }

    /// Heads in `group` whose landing square is on the mover's far row, where the symmetry rule
    /// is on (the only moves it can forbid).
    fn far_row_heads(&self, group: Group) -> Bitboard {
        if self.rules().symmetry == SymmetryRule::Off {
            return Bitboard::EMPTY;
        }
        self.far_row_landings(group)
    }

    /// Heads in `group` whose landing square is on the mover's far row.
    fn far_row_landings(&self, group: Group) -> Bitboard {
        let (_, dr) = group.dir.delta();
        let (_, forward) = self.side_to_move().forward().delta();
        if dr != forward {
            return Bitboard::EMPTY;
        }
        let far = self.side_to_move().far_row(self.rules().height) as i32;
        let row = far - dr * group.distance as i32;
        if !(0..self.rules().height as i32).contains(&row) {
            return Bitboard::EMPTY;
        }
        group.heads & self.geometry().rows[row as usize]
    }

    /// Appends every legal move to `out` (after clearing it). A finished position has none.
    /// Reusing `out` across calls avoids allocating per node.
    pub fn legal_moves_into(&self, out: &mut Vec<Move>) {
        out.clear();
        if self.is_finished_at_start() {
            return;
        }
        if self.in_placement() {
            out.extend(self.placements().squares().map(Move::place));
            return;
        }
        self.visit_groups(&mut |group: Group| {
            let far = self.far_row_heads(group);
            if far.is_empty() {
                out.extend(group.moves());
            } else {
                out.extend(group.moves().filter(|mv| {
                    !far.contains(head_of(*mv, group.pieces)) || !self.violates_symmetry_rule(*mv)
                }));
            }
            true
        });
    }

    /// Every legal move, in generation order.
    pub fn legal_moves(&self) -> Vec<Move> {
        let mut moves = Vec::with_capacity(128);
        self.legal_moves_into(&mut moves);
        moves
    }

    /// The number of legal moves, without listing them (perft's last ply).
    pub fn count_legal_moves(&self) -> u64 {
        if self.is_finished_at_start() {
            return 0;
        }
        if self.in_placement() {
            return self.placements().count() as u64;
        }
        let mut count = 0u64;
        self.visit_groups(&mut |group: Group| {
            count += group.heads.count() as u64;
            let far = self.far_row_heads(group);
            if far.any() {
                let forbidden = Group { heads: far, ..group }
                    .moves()
                    .filter(|mv| self.violates_symmetry_rule(*mv))
                    .count();
                count -= forbidden as u64;
            }
            true
        });
        count
    }

    /// Whether the side to move has any legal move.
    pub fn has_legal_move(&self) -> bool {
        if self.is_finished_at_start() {
            return false;
        }
        if self.in_placement() {
            return self.placements().any();
        }
        let mut found = false;
        self.visit_groups(&mut |group: Group| {
            let far = self.far_row_heads(group);
            found = (group.heads & !far).any()
                || Group { heads: far, ..group }.moves().any(|mv| !self.violates_symmetry_rule(mv));
            !found
        });
        found
    }

    /// Whether some pseudo-legal move lands a phalanx head on the side to move's far row (the
    /// symmetry rule is not checked: callers verify the moves they find).
    pub(super) fn can_enter_far_row(&self) -> bool {
        if self.is_finished_at_start() || self.in_placement() {
            return false;
        }
        let mut found = false;
        self.visit_groups(&mut |group: Group| {
            found = self.far_row_landings(group).any();
            !found
        });
        found
    }

    /// What the side to move's pieces reach with one move: see [`Reach`]. Pseudo-legal (the
    /// symmetry rule, which forbids only rare far-row entries, is not checked), and blind to the
    /// game's state: a finished position or one still placing stones is walked like any other,
    /// since the evaluation and the threat planes want what the pieces could do.
    pub fn reach(&self) -> Reach {
        let mut visitor = ReachVisitor {
            position: self,
            enemy: self.pieces(self.side_to_move().opponent()),
            reach: Reach::default(),
        };
        self.visit_groups(&mut visitor);
        visitor.reach
    }

    /// Squares a stone may go on now (whether the placement phase is on is the caller's check).
    fn placements(&self) -> Bitboard {
        self.geometry().stone_rows & self.empty()
    }

    /// Whether `mv` is legal (the generator's view; [`Position::check`] says why not).
    pub fn is_legal(&self, mv: Move) -> bool {
        self.check(mv).is_ok()
    }
}

fn head_of(mv: Move, pieces: u8) -> Square {
    Square::from_index((mv.from.index() as i32 + (pieces as i32 - 1) * mv.dir.offset()) as u8)
}
