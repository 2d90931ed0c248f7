//! A position: the pieces, the stones (a variant), the side to move, the ply, under a set of
//! [`Rules`].
//!
//! Positions are small `Copy` values; playing a move returns a new one (copy-make), which is
//! cheaper than make/unmake bookkeeping at this size and lets search trees share nothing.

use super::bitboard::Bitboard;
use super::rules::{Geometry, Rules, SymmetryRule, HOME_ROWS, STONES};
use super::square::{Dir, Square, STRIDE};
use super::zobrist;
use std::fmt;

/// A side. White moves first and aims at the top row; Black aims at row 1.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Color {
    White = 0,
    Black = 1,
}

impl Color {
    pub const BOTH: [Color; 2] = [Color::White, Color::Black];

    pub const fn index(self) -> usize {
        self as usize
    }

    pub const fn opponent(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }

    /// The direction this side calls forward.
    pub const fn forward(self) -> Dir {
        match self {
            Color::White => Dir::North,
            Color::Black => Dir::South,
        }
    }

    /// The row this side aims at (the opponent's back row), on a board of `height` rows.
    pub const fn far_row(self, height: u8) -> u8 {
        match self {
            Color::White => height - 1,
            Color::Black => 0,
        }
    }

    pub const fn letter(self) -> char {
        match self {
            Color::White => 'w',
            Color::Black => 'b',
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Color::White => "white",
            Color::Black => "black",
        }
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A move: the tail piece's square, the direction, and how many squares the phalanx advances.
/// The moving phalanx is the tail and every own piece contiguous ahead of it in `dir`.
///
/// In the stones variant a move may instead place a stone: distance 0, `from` the stone's
/// square, direction north ([`Move::place`]). A piece never moves 0 squares, so the two cannot
/// be confused, and `Move` stays three bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Move {
    pub from: Square,
    pub dir: Dir,
    pub distance: u8,
}

impl Move {
    pub const fn new(from: Square, dir: Dir, distance: u8) -> Move {
        Move { from, dir, distance }
    }

    /// Placing a stone on `square` (the stones variant's first three plies).
    pub const fn place(square: Square) -> Move {
        Move { from: square, dir: Dir::North, distance: 0 }
    }

    /// Whether this places a stone rather than moving pieces.
    #[inline]
    pub const fn is_placement(self) -> bool {
        self.distance == 0
    }

    /// Where the tail piece ends; with `from`, Abbott's notation for the move.
    pub fn to(self) -> Square {
        Square::from_index(
            (self.from.index() as i32 + self.distance as i32 * self.dir.offset()) as u8,
        )
    }
}

/// Abbott's notation without capture marks (a capture needs the position: see
/// [`Position::notation`]); a stone placement is `@` and its square, `@f6`.
impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_placement() {
            write!(f, "@{}", self.from)
        } else {
            write!(f, "{}-{}", self.from, self.to())
        }
    }
}

/// Why a move cannot be played.
#[derive(Clone, Copy, PartialEq, Eq, Debug, thiserror::Error)]
pub enum IllegalMove {
    #[error("the game is over")]
    GameOver,
    #[error("{square} is off the board")]
    OffBoard { square: Square },
    #[error("the move runs off the board")]
    RunsOffBoard,
    #[error("there is no {side} piece on {square}")]
    NotYourPiece { square: Square, side: Color },
    #[error("a move must advance at least one square")]
    ZeroDistance,
    #[error("a phalanx of {pieces} may move at most {pieces} squares, not {distance}")]
    TooFar { pieces: u8, distance: u8 },
    #[error("blocked by an own piece on {square}")]
    BlockedByOwnPiece { square: Square },
    #[error("cannot move past the enemy piece on {square}")]
    BlockedByEnemy { square: Square },
    #[error("the enemy line from {square} has {enemy} pieces; a phalanx of {pieces} captures only fewer")]
    EnemyLineTooLong { square: Square, enemy: u8, pieces: u8 },
    #[error("the symmetry rule forbids entering the far row into a symmetric position")]
    Symmetry,
    #[error("blocked by the stone on {square}")]
    BlockedByStone { square: Square },
    #[error("{square} is not on a stone row: stones go on rows {first}..={last}")]
    NotAStoneRow { square: Square, first: u8, last: u8 },
    #[error("{square} is not empty; a stone goes on an empty square")]
    SquareTaken { square: Square },
    #[error("this game is played without stones")]
    NoStones,
    #[error("all {STONES} stones are placed; pieces move now")]
    StonesPlaced,
    #[error(
        "{placed} of {STONES} stones are placed; place a stone (like @f6) before any piece moves"
    )]
    PlaceAStone { placed: u8 },
}

/// What a legal move does.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct MoveEffect {
    /// Pieces in the moving phalanx.
    pub pieces: u8,
    /// Enemy pieces removed.
    pub captured: u8,
}

/// How a game ended, or that it goes on.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Status {
    Ongoing,
    Won {
        winner: Color,
        reason: WinReason,
    },
    /// Only under a ply cap.
    Draw,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum WinReason {
    /// At the start of the winner's turn they had more pieces on the far row than the opponent.
    BackRow,
    /// The loser had no legal move (no pieces, or all blocked).
    NoMoves,
}

/// A position of a game under some [`Rules`].
#[derive(Clone, Copy)]
pub struct Position {
    rules: Rules,
    geo: &'static Geometry,
    pieces: [Bitboard; 2],
    /// Neutral stones (the stones variant; always empty otherwise).
    stones: Bitboard,
    side: Color,
    ply: u16,
    hash: u64,
}

impl PartialEq for Position {
    fn eq(&self, other: &Position) -> bool {
        self.rules == other.rules
            && self.pieces == other.pieces
            && self.stones == other.stones
            && self.side == other.side
            && self.ply == other.ply
    }
}
impl Eq for Position {}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Position(\"{self}\", {})", self.rules)
    }
}

/// A piece arrangement that cannot be a position under the given rules.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Rules(#[from] super::rules::RulesError),
    #[error("a position on the {}x{} board cannot be moved to the {}x{} board", board.0, board.1, asked.0, asked.1)]
    OtherBoard { board: (u8, u8), asked: (u8, u8) },
    #[error("{square} holds both a white and a black piece")]
    Overlap { square: Square },
    #[error("a piece on {square} lies outside the {width}x{height} board")]
    OutsideBoard { square: Square, width: u8, height: u8 },
    #[error("the position has stones but the rules have no stones variant (turn it on: --stones, `stones = true`)")]
    StonesWithoutRule,
    #[error("{count} stones; the stones variant has at most {STONES}")]
    TooManyStones { count: u32 },
    #[error("the stone on {square} is not on a stone row or shares its square with a piece")]
    MisplacedStone { square: Square },
}

impl Position {
    /// The start position: White on the two bottom rows, Black on the two top rows, White to
    /// move; in the stones variant no stones yet and Black to move (Black places first).
    pub fn start(rules: Rules) -> Result<Position, SetupError> {
        rules.validate()?;
        let geo = rules.geometry();
        let mut white = Bitboard::EMPTY;
        let mut black = Bitboard::EMPTY;
        for r in 0..HOME_ROWS {
            white |= geo.rows[r as usize];
            black |= geo.rows[(rules.height - 1 - r) as usize];
        }
        let side = if rules.stones { Color::Black } else { Color::White };
        Position::from_parts(rules, white, black, side, 0)
    }

    /// Abbott's game from its start.
    pub fn standard() -> Position {
        Position::start(Rules::default()).expect("the standard rules are valid")
    }

    /// A position from its pieces, checked against the rules.
    pub fn from_parts(
        rules: Rules,
        white: Bitboard,
        black: Bitboard,
        side: Color,
        ply: u16,
    ) -> Result<Position, SetupError> {
        rules.validate()?;
        let geo = rules.geometry();
        if let Some(square) = (white & black).first() {
            return Err(SetupError::Overlap { square });
        }
        if let Some(square) = ((white | black) & !geo.board).first() {
            return Err(SetupError::OutsideBoard {
                square,
                width: rules.width,
                height: rules.height,
            });
        }
        let pieces = [white, black];
        let hash = zobrist::hash(&pieces, Bitboard::EMPTY, side);
        Ok(Position { rules, geo, pieces, stones: Bitboard::EMPTY, side, ply, hash })
    }

    /// The same position with `stones` as its stones, checked: the rules must have the variant,
    /// at most [`STONES`] of them, each on an empty square of a stone row.
    pub fn with_stones(&self, stones: Bitboard) -> Result<Position, SetupError> {
        if stones.is_empty() {
            return Ok(Position {
                stones,
                hash: zobrist::hash(&self.pieces, stones, self.side),
                ..*self
            });
        }
        if !self.rules.stones {
            return Err(SetupError::StonesWithoutRule);
        }
        if stones.count() > STONES as u32 {
            return Err(SetupError::TooManyStones { count: stones.count() });
        }
        if let Some(square) = (stones & !(self.geo.stone_rows & !self.occupied())).first() {
            return Err(SetupError::MisplacedStone { square });
        }
        Ok(Position { stones, hash: zobrist::hash(&self.pieces, stones, self.side), ..*self })
    }

    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    pub fn geometry(&self) -> &'static Geometry {
        self.geo
    }

    pub fn side_to_move(&self) -> Color {
        self.side
    }

    /// Plies played since the start of the game.
    pub fn ply(&self) -> u16 {
        self.ply
    }

    pub fn pieces(&self, color: Color) -> Bitboard {
        self.pieces[color.index()]
    }

    /// Squares holding a piece of either side (not stones).
    pub fn occupied(&self) -> Bitboard {
        self.pieces[0] | self.pieces[1]
    }

    /// The stones on the board (the stones variant).
    pub fn stones(&self) -> Bitboard {
        self.stones
    }

    /// Squares with neither a piece nor a stone.
    #[inline]
    pub fn empty(&self) -> Bitboard {
        self.geo.board & !(self.occupied() | self.stones)
    }

    /// Whether stones are still to be placed: the stones variant before its third stone. The
    /// count decides, not the ply, so set-up positions need no history.
    #[inline]
    pub fn in_placement(&self) -> bool {
        self.rules.stones && self.stones.count() < STONES as u32
    }

    /// The rows (1-based, inclusive) stones may go on; empty range on boards without any.
    fn stone_row_span(&self) -> (u8, u8) {
        let rows = self.geo.stone_rows.rows();
        let first = rows.iter().position(|r| *r != 0).unwrap_or(0) as u8;
        let last = rows.iter().rposition(|r| *r != 0).unwrap_or(0) as u8;
        (first + 1, last + 1)
    }

    pub fn piece_at(&self, square: Square) -> Option<Color> {
        Color::BOTH.into_iter().find(|c| self.pieces[c.index()].contains(square))
    }

    /// Zobrist hash of the pieces, the stones and the side to move.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// Pieces `color` has on the row it aims at.
    #[inline]
    pub fn far_row_count(&self, color: Color) -> u32 {
        (self.pieces[color.index()] & self.geo.rows[color.far_row(self.rules.height) as usize])
            .count()
    }

    /// The start-of-turn win: the side to move has more pieces on its far row than the opponent
    /// has on the side to move's home row.
    #[inline]
    pub fn side_to_move_has_won(&self) -> bool {
        self.far_row_count(self.side) > self.far_row_count(self.side.opponent())
    }

    /// Whether the ply cap (if any) has been reached.
    #[inline]
    pub fn ply_cap_reached(&self) -> bool {
        self.rules.ply_cap.is_some_and(|cap| self.ply >= cap)
    }

    /// Finished before any move is generated: a start-of-turn win or the ply cap. (A side with no
    /// legal move has also lost, which [`Position::status`] checks.)
    #[inline]
    pub fn is_finished_at_start(&self) -> bool {
        self.side_to_move_has_won() || self.ply_cap_reached()
    }

    /// The state of the game. The start-of-turn win is checked first (it is the start of the
    /// turn), then the ply cap, then whether the side to move has any legal move.
    pub fn status(&self) -> Status {
        if self.side_to_move_has_won() {
            Status::Won { winner: self.side, reason: WinReason::BackRow }
        } else if self.ply_cap_reached() {
            Status::Draw
        } else if !self.has_legal_move() {
            Status::Won { winner: self.side.opponent(), reason: WinReason::NoMoves }
        } else {
            Status::Ongoing
        }
    }

    /// One step from `square` in `dir`, if still on the board.
    #[inline]
    pub fn step(&self, square: Square, dir: Dir) -> Option<Square> {
        square.offset(dir, 1, self.rules.width, self.rules.height)
    }

    /// Contiguous pieces of `color` from `square` onward in `dir` (0 if `square` is not theirs).
    pub fn line_length(&self, square: Square, dir: Dir, color: Color) -> u8 {
        let mine = self.pieces[color.index()];
        let mut count = 0;
        let mut at = Some(square);
        while let Some(sq) = at.filter(|sq| mine.contains(*sq)) {
            count += 1;
            at = self.step(sq, dir);
        }
        count
    }

    /// Checks a move square by square and says why it is illegal. The generator in `movegen`
    /// produces exactly the moves this accepts (a test holds them to it).
    pub fn check(&self, mv: Move) -> Result<MoveEffect, IllegalMove> {
        let (width, height) = (self.rules.width, self.rules.height);
        if mv.from.column() >= width || mv.from.row() >= height {
            return Err(IllegalMove::OffBoard { square: mv.from });
        }
        if self.is_finished_at_start() {
            return Err(IllegalMove::GameOver);
        }
        if self.in_placement() || mv.is_placement() {
            return self.check_placement(mv);
        }
        if !self.pieces(self.side).contains(mv.from) {
            return Err(IllegalMove::NotYourPiece { square: mv.from, side: self.side });
        }
        if mv.distance == 0 {
            return Err(IllegalMove::ZeroDistance);
        }
        let pieces = self.line_length(mv.from, mv.dir, self.side);
        if mv.distance > pieces {
            return Err(IllegalMove::TooFar { pieces, distance: mv.distance });
        }
        let head = mv
            .from
            .offset(mv.dir, pieces as i32 - 1, width, height)
            .expect("the phalanx is on the board");
        let enemy = self.side.opponent();
        let mut captured = 0;
        for step in 1..=mv.distance {
            let square =
                head.offset(mv.dir, step as i32, width, height).ok_or(IllegalMove::RunsOffBoard)?;
            if self.stones.contains(square) {
                return Err(IllegalMove::BlockedByStone { square });
            }
            match self.piece_at(square) {
                None => {}
                Some(c) if c == self.side => return Err(IllegalMove::BlockedByOwnPiece { square }),
                Some(_) if step < mv.distance => {
                    return Err(IllegalMove::BlockedByEnemy { square })
                }
                Some(_) => {
                    let line = self.line_length(square, mv.dir, enemy);
                    if line >= pieces {
                        return Err(IllegalMove::EnemyLineTooLong { square, enemy: line, pieces });
                    }
                    captured = line;
                }
            }
        }
        if self.violates_symmetry_rule(mv) {
            return Err(IllegalMove::Symmetry);
        }
        Ok(MoveEffect { pieces, captured })
    }

    /// The placement half of [`Position::check`]: `mv` is a placement or the stones are still
    /// to be placed (the square is on the board and the game goes on).
    fn check_placement(&self, mv: Move) -> Result<MoveEffect, IllegalMove> {
        let placed = self.stones.count() as u8;
        match (self.in_placement(), mv.is_placement()) {
            (true, false) => return Err(IllegalMove::PlaceAStone { placed }),
            // Without the variant a 0-square move is just a move that goes nowhere.
            (false, true) if !self.rules.stones => return Err(IllegalMove::ZeroDistance),
            (false, true) => return Err(IllegalMove::StonesPlaced),
            _ => {}
        }
        if mv.dir != Dir::North {
            // Placements are written one way only, so equal placements compare equal.
            return Err(IllegalMove::ZeroDistance);
        }
        if !self.geo.stone_rows.contains(mv.from) {
            let (first, last) = self.stone_row_span();
            return Err(IllegalMove::NotAStoneRow { square: mv.from, first, last });
        }
        if !self.empty().contains(mv.from) {
            return Err(IllegalMove::SquareTaken { square: mv.from });
        }
        Ok(MoveEffect { pieces: 0, captured: 0 })
    }

    /// Plays a legal move, or says why it is illegal and leaves `self` untouched.
    pub fn play(&self, mv: Move) -> Result<Position, IllegalMove> {
        self.check(mv)?;
        Ok(self.play_unchecked(mv))
    }

    /// Plays a move known to be legal (from the generator, or checked). An illegal move gives an
    /// unspecified (but memory-safe) position.
    pub fn play_unchecked(&self, mv: Move) -> Position {
        if mv.is_placement() {
            return self.place_unchecked(mv.from);
        }
        let us = self.side.index();
        let them = self.side.opponent().index();
        let (own, enemy) = (self.pieces[us], self.pieces[them]);
        let offset = mv.dir.offset();
        // A step lands on one of these exactly when it neither leaves the board nor wraps into
        // another row, so walking a line needs no column and row arithmetic per square.
        let landing = self.geo.shift_masks[mv.dir.index()];
        let step = |index: usize| {
            let to = index as i32 + offset;
            u8::try_from(to).ok().map(Square::from_index).filter(|sq| landing.contains(*sq))
        };
        // Every piece of a legal move lands on the board (the head's landing square does, and
        // the rest land between it and the tail), so a destination is plain index arithmetic.
        let shift = mv.distance as i32 * offset;
        let destination =
            |sq: Square| u8::try_from(sq.index() as i32 + shift).ok().map(Square::from_index);
        let mut phalanx = Bitboard::EMPTY;
        let mut moved = Bitboard::EMPTY;
        let mut head = None;
        let mut at = Some(mv.from);
        while let Some(sq) = at.filter(|sq| own.contains(*sq)) {
            phalanx.set(sq);
            if let Some(dest) = destination(sq) {
                moved.set(dest);
            }
            head = Some(sq);
            at = step(sq.index());
        }
        let mut next = *self;
        if let Some(target) = head.and_then(destination) {
            // A capture removes the enemy line from the head's landing square onward.
            let mut at = Some(target);
            while let Some(sq) = at.filter(|sq| enemy.contains(*sq)) {
                next.pieces[them].clear(sq);
                at = step(sq.index());
            }
        }
        // Only an illegal move can put a destination off the board; keep the set-up valid.
        next.pieces[us] = ((own & !phalanx) | moved) & self.geo.board;
        next.side = self.side.opponent();
        next.ply = self.ply.saturating_add(1);
        next.hash = self.hash
            ^ zobrist::diff(own ^ next.pieces[us], self.side)
            ^ zobrist::diff(enemy ^ next.pieces[them], self.side.opponent())
            ^ zobrist::SIDE;
        next
    }

    /// Puts a stone on `square` and passes the turn (the square is on the board: a legal
    /// placement or at least a square of the layout).
    fn place_unchecked(&self, square: Square) -> Position {
        let mut next = *self;
        next.stones.set(square);
        next.stones &= self.geo.board;
        next.side = self.side.opponent();
        next.ply = self.ply.saturating_add(1);
        next.hash = self.hash ^ zobrist::stones(next.stones ^ self.stones) ^ zobrist::SIDE;
        next
    }

    /// Whether the anti-copycat rule forbids `mv`: it puts a piece onto the mover's far row and
    /// the position after it is symmetric under the rules' reading.
    pub(crate) fn violates_symmetry_rule(&self, mv: Move) -> bool {
        if self.rules.symmetry == SymmetryRule::Off || !self.enters_far_row(mv) {
            return false;
        }
        self.play_unchecked(mv).is_symmetric()
    }

    /// Whether the head of the moving phalanx lands on the mover's far row from off it. Only the
    /// head can: every other piece of the phalanx trails it.
    fn enters_far_row(&self, mv: Move) -> bool {
        let (_, dr) = mv.dir.delta();
        let (_, forward) = self.side.forward().delta();
        if dr != forward {
            return false;
        }
        let pieces = self.line_length(mv.from, mv.dir, self.side) as i32;
        let landing_row = mv.from.row() as i32 + dr * (pieces - 1 + mv.distance as i32);
        landing_row == self.side.far_row(self.rules.height) as i32
    }

    /// Whether the board is symmetric in the sense of the rules' symmetry reading. Stones are
    /// part of the pattern: the board is symmetric only if its stones map onto its stones too
    /// (so on an even number of rows, where no row maps onto itself, three stones are never
    /// symmetric and the stones variant in effect has no anti-copycat rule: the stones already
    /// break the copycat's mirror).
    pub fn is_symmetric(&self) -> bool {
        let [white, black] = self.pieces;
        let stones = self.stones;
        let mirror =
            || self.geo.flip_vertical(white) == black && self.geo.flip_vertical(stones) == stones;
        let rotation =
            || self.geo.rotate180(white) == black && self.geo.rotate180(stones) == stones;
        match self.rules.symmetry {
            SymmetryRule::Mirror => mirror(),
            SymmetryRule::Rotation => rotation(),
            SymmetryRule::Both => mirror() || rotation(),
            SymmetryRule::Off => false,
        }
    }

    /// The position seen in a left-right mirror (an exact symmetry of the game).
    pub fn mirrored(&self) -> Position {
        let pieces = self.pieces.map(|bits| self.geo.mirror(bits));
        let stones = self.geo.mirror(self.stones);
        Position { pieces, stones, hash: zobrist::hash(&pieces, stones, self.side), ..*self }
    }

    /// The same pieces with another side to move and ply (for set-ups and tests).
    pub fn with_side_to_move(&self, side: Color, ply: u16) -> Position {
        // The side to move is one key in the hash: toggle it rather than hash every piece again
        // (the hand-written players' evaluation asks for the opponent's view at every leaf).
        let hash = if side == self.side { self.hash } else { self.hash ^ zobrist::SIDE };
        Position { side, ply, hash, ..*self }
    }

    /// The same position under other rule options of the same board size.
    pub fn with_rules(&self, rules: Rules) -> Result<Position, SetupError> {
        let (board, asked) = ((self.rules.width, self.rules.height), (rules.width, rules.height));
        if board != asked {
            return Err(SetupError::OtherBoard { board, asked });
        }
        Position::from_parts(rules, self.pieces[0], self.pieces[1], self.side, self.ply)?
            .with_stones(self.stones)
    }
}

/// The left-right mirror of a move (pairs with [`Position::mirrored`]). Total: a move from off
/// a `width`-wide board gets some other square rather than a panic, and no position accepts it.
/// A placement stays a placement (its direction, north, is its own mirror).
pub fn mirror_move(mv: Move, width: u8) -> Move {
    let column = width.wrapping_sub(1).wrapping_sub(mv.from.column()) % STRIDE as u8;
    Move::new(Square::new(column, mv.from.row()), mv.dir.mirrored(), mv.distance)
}
