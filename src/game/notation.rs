//! Text forms of positions and moves.
//!
//! Position: rows from the top (row h) down to row 1 separated by `/`, `w`/`b` for pieces, `s`
//! for a stone (the stones variant) and a number for a run of empty squares, then the side to
//! move and, when not zero, the ply:
//! `bbbbbbbbbbbbbb/bbbbbbbbbbbbbb/14/14/14/14/14/14/14/14/wwwwwwwwwwwwww/wwwwwwwwwwwwww w`.
//! The board size is read from the text (row count and row width).
//!
//! Moves: Abbott's notation, the tail's start and end squares (`f1-g2`, `x` for a capture:
//! `h12xh9`), or the `tail,head-headdest` form of one rules page (`f1,g2-h3`, the dash optional);
//! a stone placement is `@` and the square (`@f6`).
//! Parsing is two-stage: [`MoveText`] is syntax only; [`MoveText::resolve`] finds the legal move
//! it names in a position, whichever of `-` or `x` was written.

use super::bitboard::Bitboard;
use super::position::{Color, IllegalMove, Move, Position, SetupError};
use super::rules::Rules;
use super::square::{Dir, Square, MAX_DIM, MIN_DIM};
use std::fmt;
use std::str::FromStr;

/// Why a position text could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParsePositionError {
    #[error("empty position text")]
    Empty,
    #[error("row {row} (counting from the top), character {column}: unexpected {found:?}; expected w, b, s or a digit")]
    BadCharacter { row: usize, column: usize, found: char },
    #[error(
        "row {row} (counting from the top) is {width} squares wide but the first row is {expected}"
    )]
    RaggedRow { row: usize, width: usize, expected: usize },
    #[error("row {row} (counting from the top): a run of 0 empty squares")]
    ZeroRun { row: usize },
    #[error("the board is {width}x{height}; width and height must each be {MIN_DIM}..={MAX_DIM}")]
    Size { width: usize, height: usize },
    #[error("missing the side to move after the board (w or b)")]
    MissingSide,
    #[error("side to move must be w or b, not {0:?}")]
    BadSide(String),
    #[error("the ply must be a number 0..=65535, not {0:?}")]
    BadPly(String),
    #[error("unexpected text after the position: {0:?}")]
    Trailing(String),
    #[error(transparent)]
    Setup(#[from] SetupError),
}

impl Position {
    /// Reads a position text; the board size comes from the text, the other rule options from
    /// `options`.
    pub fn parse(text: &str, options: Rules) -> Result<Position, ParsePositionError> {
        let mut fields = text.split_whitespace();
        let board = fields.next().ok_or(ParsePositionError::Empty)?;
        let side = match fields.next() {
            None => return Err(ParsePositionError::MissingSide),
            Some("w") => Color::White,
            Some("b") => Color::Black,
            Some(other) => return Err(ParsePositionError::BadSide(other.to_string())),
        };
        let ply = match fields.next() {
            None => 0,
            Some(p) => p.parse().map_err(|_| ParsePositionError::BadPly(p.to_string()))?,
        };
        if let Some(extra) = fields.next() {
            return Err(ParsePositionError::Trailing(extra.to_string()));
        }
        let rows: Vec<&str> = board.split('/').collect();
        let height = rows.len();
        let mut parsed_rows = Vec::with_capacity(height);
        let mut width = None;
        for (i, row_text) in rows.iter().enumerate() {
            let row = i + 1;
            let (cells, row_width) = parse_row(row_text, row)?;
            let expected = *width.get_or_insert(row_width);
            if row_width != expected {
                return Err(ParsePositionError::RaggedRow { row, width: row_width, expected });
            }
            parsed_rows.push(cells);
        }
        let width = width.unwrap_or(0);
        let ok = |d: usize| (MIN_DIM as usize..=MAX_DIM as usize).contains(&d);
        if !ok(width) || !ok(height) {
            return Err(ParsePositionError::Size { width, height });
        }
        let mut pieces = [Bitboard::EMPTY; 2];
        let mut stones = Bitboard::EMPTY;
        for (i, cells) in parsed_rows.iter().enumerate() {
            let row = (height - 1 - i) as u8;
            for &(column, cell) in cells {
                let square = Square::new(column as u8, row);
                match cell {
                    Some(color) => pieces[color.index()].set(square),
                    None => stones.set(square),
                }
            }
        }
        let rules = Rules { width: width as u8, height: height as u8, ..options };
        Ok(Position::from_parts(rules, pieces[0], pieces[1], side, ply)?.with_stones(stones)?)
    }
}

/// One row's pieces as (column, colour, or `None` for a stone).
type RowCells = Vec<(usize, Option<Color>)>;

/// One row's pieces and its width.
fn parse_row(text: &str, row: usize) -> Result<(RowCells, usize), ParsePositionError> {
    let mut cells = Vec::new();
    let mut column = 0usize;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match c {
            'w' => cells.push((column, Some(Color::White))),
            'b' => cells.push((column, Some(Color::Black))),
            's' => cells.push((column, None)),
            '0'..='9' => {
                let mut run = c as usize - '0' as usize;
                while let Some(&(_, d)) = chars.peek().filter(|(_, d)| d.is_ascii_digit()) {
                    run = run * 10 + (d as usize - '0' as usize);
                    chars.next();
                    if run > MAX_DIM as usize * 10 {
                        break; // far too wide already; the size check reports it
                    }
                }
                if run == 0 {
                    return Err(ParsePositionError::ZeroRun { row });
                }
                column += run;
                continue;
            }
            found => return Err(ParsePositionError::BadCharacter { row, column: at + 1, found }),
        }
        column += 1;
    }
    Ok((cells, column))
}

impl FromStr for Position {
    type Err = ParsePositionError;

    /// Reads a position under the default rule options (mirror symmetry rule, no ply cap).
    fn from_str(text: &str) -> Result<Position, ParsePositionError> {
        Position::parse(text, Rules::default())
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (width, height) = (self.rules().width, self.rules().height);
        for row in (0..height).rev() {
            let mut run = 0;
            for column in 0..width {
                let square = Square::new(column, row);
                let letter = match self.piece_at(square) {
                    Some(color) => color.letter(),
                    None if self.stones().contains(square) => 's',
                    None => {
                        run += 1;
                        continue;
                    }
                };
                if run > 0 {
                    write!(f, "{run}")?;
                    run = 0;
                }
                write!(f, "{letter}")?;
            }
            if run > 0 {
                write!(f, "{run}")?;
            }
            if row > 0 {
                f.write_str("/")?;
            }
        }
        write!(f, " {}", self.side_to_move().letter())?;
        if self.ply() != 0 {
            write!(f, " {}", self.ply())?;
        }
        Ok(())
    }
}

/// A move as written, before it is matched against a position.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MoveText {
    /// Abbott's notation: the tail's start and end squares.
    Tail { from: Square, to: Square },
    /// `tail,head-headdest`: the tail, the front of the moving phalanx, and where the front lands.
    Head { tail: Square, head: Square, head_to: Square },
    /// `@square`: a stone placed there (the stones variant).
    Place { square: Square },
}

/// Why a move text names no legal move.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    #[error("{text:?} is not a move: {reason} (write the tail's squares like f1-g2, f1xg2, tail,head-dest like f1,g2-h3, or a stone placement like @f6)")]
    Syntax { text: String, reason: &'static str },
    #[error("{from} and {to} are not on one line")]
    NotALine { from: Square, to: Square },
    #[error("{head} is not the front of the phalanx that starts at {tail}")]
    NotTheFront { tail: Square, head: Square },
    #[error("illegal move {text}: {reason}")]
    Illegal { text: String, reason: IllegalMove },
}

impl MoveText {
    /// Reads a move text on a board of the given size.
    pub fn parse(text: &str, width: u8, height: u8) -> Result<MoveText, MoveError> {
        let syntax = |reason| MoveError::Syntax { text: text.to_string(), reason };
        let square = |s: &str| {
            Square::parse(s, width, height).ok_or(syntax("a square is malformed or off the board"))
        };
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(syntax("it is empty"));
        }
        if let Some(place) = trimmed.strip_prefix('@') {
            return Ok(MoveText::Place { square: square(place)? });
        }
        if let Some((tail, rest)) = trimmed.split_once(',') {
            let split = rest.find(['-', 'x']).unwrap_or_else(|| {
                // `e12,f11h9`: the second square starts at the second letter.
                rest.char_indices()
                    .skip(1)
                    .find(|(_, c)| c.is_ascii_lowercase())
                    .map_or(rest.len(), |(i, _)| i)
            });
            let (head, dest) = rest.split_at(split);
            let dest = dest.trim_start_matches(['-', 'x']);
            return Ok(MoveText::Head {
                tail: square(tail)?,
                head: square(head)?,
                head_to: square(dest)?,
            });
        }
        let split = trimmed.find(['-', 'x']).ok_or(syntax("no - or x between the squares"))?;
        let (from, to) = (&trimmed[..split], &trimmed[split + 1..]);
        Ok(MoveText::Tail { from: square(from)?, to: square(to)? })
    }

    /// The legal move this text names in `position`.
    pub fn resolve(self, position: &Position) -> Result<Move, MoveError> {
        let mv = match self {
            MoveText::Tail { from, to } => {
                let (dir, distance) =
                    Dir::between(from, to).ok_or(MoveError::NotALine { from, to })?;
                Move::new(from, dir, distance)
            }
            MoveText::Head { tail, head, head_to } => {
                let (dir, distance) = Dir::between(head, head_to)
                    .ok_or(MoveError::NotALine { from: head, to: head_to })?;
                let side = position.side_to_move();
                let pieces = position.line_length(tail, dir, side);
                let front = tail.offset(
                    dir,
                    pieces as i32 - 1,
                    position.rules().width,
                    position.rules().height,
                );
                let lined_up =
                    tail == head || Dir::between(tail, head).is_some_and(|(d, _)| d == dir);
                if pieces == 0 || !lined_up || front != Some(head) {
                    return Err(MoveError::NotTheFront { tail, head });
                }
                Move::new(tail, dir, distance)
            }
            MoveText::Place { square } => Move::place(square),
        };
        position
            .check(mv)
            .map_err(|reason| MoveError::Illegal { text: self.to_string(), reason })?;
        Ok(mv)
    }
}

impl fmt::Display for MoveText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MoveText::Tail { from, to } => write!(f, "{from}-{to}"),
            MoveText::Head { tail, head, head_to } => write!(f, "{tail},{head}-{head_to}"),
            MoveText::Place { square } => write!(f, "@{square}"),
        }
    }
}

impl Position {
    /// Reads a move in either notation and checks it is legal here.
    pub fn parse_move(&self, text: &str) -> Result<Move, MoveError> {
        MoveText::parse(text, self.rules().width, self.rules().height)?.resolve(self)
    }

    /// Abbott's notation of a legal move, with `x` when it captures (`@f6` for a placement).
    pub fn notation(&self, mv: Move) -> String {
        if mv.is_placement() {
            return mv.to_string();
        }
        let capture = self.check(mv).is_ok_and(|effect| effect.captured > 0);
        format!("{}{}{}", mv.from, if capture { 'x' } else { '-' }, mv.to())
    }
}
