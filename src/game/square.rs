//! Squares and the eight directions of motion.
//!
//! A square is stored as `row * STRIDE + column` with a fixed stride of 16, whatever the board
//! size: every board from 5x5 to 16x16 then shares one layout, and a step in a direction is one
//! constant offset. Row 0 is White's home row (`1` in notation), column 0 is `a`.

use std::fmt;

/// Bits per row in the square layout; the widest supported board.
pub const STRIDE: i32 = 16;
/// The largest supported board dimension (both width and height).
pub const MAX_DIM: u8 = 16;
/// The smallest supported board dimension: two home rows each and at least one row between.
pub const MIN_DIM: u8 = 5;

/// One square of the board, in the fixed 16-wide layout.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Square(u8);

impl Square {
    /// The square at `column` (0 = `a`) and `row` (0 = `1`). Both must be below [`MAX_DIM`].
    pub const fn new(column: u8, row: u8) -> Square {
        debug_assert!(column < MAX_DIM && row < MAX_DIM);
        Square(row * STRIDE as u8 + column)
    }

    /// The square at layout index `index` (0..256).
    pub const fn from_index(index: u8) -> Square {
        Square(index)
    }

    pub const fn index(self) -> usize {
        self.0 as usize
    }

    pub const fn column(self) -> u8 {
        self.0 % STRIDE as u8
    }

    pub const fn row(self) -> u8 {
        self.0 / STRIDE as u8
    }

    /// The square `steps` steps away in `dir`, or `None` when that leaves a `width` x `height`
    /// board. Geometry stays total: no caller has to reason about wrapping.
    pub fn offset(self, dir: Dir, steps: i32, width: u8, height: u8) -> Option<Square> {
        let (dc, dr) = dir.delta();
        let column = self.column() as i32 + dc * steps;
        let row = self.row() as i32 + dr * steps;
        let inside = (0..width as i32).contains(&column) && (0..height as i32).contains(&row);
        inside.then(|| Square::new(column as u8, row as u8))
    }

    /// Parses `a1`..`p16` (column letter, row number from 1), checking it is on a board of the
    /// given size. Sizes past [`MAX_DIM`] count as `MAX_DIM`: the layout has no other squares.
    pub fn parse(text: &str, width: u8, height: u8) -> Option<Square> {
        let (width, height) = (width.min(MAX_DIM), height.min(MAX_DIM));
        let mut chars = text.chars();
        let letter = chars.next()?;
        if !letter.is_ascii_lowercase() {
            return None;
        }
        let column = letter as u8 - b'a';
        let digits = chars.as_str();
        if digits.is_empty()
            || digits.len() > 2
            || !digits.bytes().all(|b| b.is_ascii_digit())
            || digits.starts_with('0')
        {
            return None;
        }
        let row: u8 = digits.parse().ok()?;
        (column < width && row >= 1 && row <= height).then(|| Square::new(column, row - 1))
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", (b'a' + self.column()) as char, self.row() + 1)
    }
}

/// A direction of motion, seen from White's side: `North` is towards row 12.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
#[repr(u8)]
pub enum Dir {
    North = 0,
    NorthEast = 1,
    East = 2,
    SouthEast = 3,
    South = 4,
    SouthWest = 5,
    West = 6,
    NorthWest = 7,
}

impl Dir {
    /// All eight, in index order (clockwise from north).
    pub const ALL: [Dir; 8] = [
        Dir::North,
        Dir::NorthEast,
        Dir::East,
        Dir::SouthEast,
        Dir::South,
        Dir::SouthWest,
        Dir::West,
        Dir::NorthWest,
    ];

    pub const fn index(self) -> usize {
        self as usize
    }

    pub const fn from_index(index: usize) -> Dir {
        Dir::ALL[index % 8]
    }

    /// (column step, row step).
    pub const fn delta(self) -> (i32, i32) {
        match self {
            Dir::North => (0, 1),
            Dir::NorthEast => (1, 1),
            Dir::East => (1, 0),
            Dir::SouthEast => (1, -1),
            Dir::South => (0, -1),
            Dir::SouthWest => (-1, -1),
            Dir::West => (-1, 0),
            Dir::NorthWest => (-1, 1),
        }
    }

    /// The change of layout index for one step.
    pub const fn offset(self) -> i32 {
        let (dc, dr) = self.delta();
        dr * STRIDE + dc
    }

    pub const fn opposite(self) -> Dir {
        Dir::from_index(self as usize + 4)
    }

    /// The direction seen in a left-right mirror (east and west swap).
    pub const fn mirrored(self) -> Dir {
        match self {
            Dir::NorthEast => Dir::NorthWest,
            Dir::NorthWest => Dir::NorthEast,
            Dir::East => Dir::West,
            Dir::West => Dir::East,
            Dir::SouthEast => Dir::SouthWest,
            Dir::SouthWest => Dir::SouthEast,
            other => other,
        }
    }

    /// The direction seen with the board turned upside down (north and south swap): how Black's
    /// moves look from Black's own side.
    pub const fn flipped(self) -> Dir {
        match self {
            Dir::North => Dir::South,
            Dir::South => Dir::North,
            Dir::NorthEast => Dir::SouthEast,
            Dir::SouthEast => Dir::NorthEast,
            Dir::NorthWest => Dir::SouthWest,
            Dir::SouthWest => Dir::NorthWest,
            other => other,
        }
    }

    /// The direction and step count that lead from `from` to `to`, if they lie on one line.
    pub fn between(from: Square, to: Square) -> Option<(Dir, u8)> {
        let dc = to.column() as i32 - from.column() as i32;
        let dr = to.row() as i32 - from.row() as i32;
        let steps = dc.abs().max(dr.abs());
        if steps == 0 || (dc != 0 && dr != 0 && dc.abs() != dr.abs()) {
            return None;
        }
        let unit = (dc.signum(), dr.signum());
        let dir = Dir::ALL.into_iter().find(|d| d.delta() == unit)?;
        Some((dir, steps as u8))
    }
}
