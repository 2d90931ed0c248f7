//! The rule choices a game is played under, and the board geometry they imply.
//!
//! Rule *facts* (pieces fill the two nearest rows, White moves first) are constants of the
//! engine; rule *choices* (board size, how the anti-copycat rule is read, an optional ply cap)
//! live in [`Rules`], one small serde-able value carried by every position.

use super::bitboard::Bitboard;
use super::square::{Dir, Square, MAX_DIM, MIN_DIM};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::OnceLock;

/// Abbott's board: 14 columns, 12 rows.
pub const STANDARD_WIDTH: u8 = 14;
pub const STANDARD_HEIGHT: u8 = 12;
/// Each side starts on its two nearest rows.
pub const HOME_ROWS: u8 = 2;
/// Neutral stones placed before the first move in the stones variant (Black, White, Black).
pub const STONES: u8 = 3;

/// How the anti-copycat rule of Abbott's text is read: a move that puts a piece onto the mover's
/// far row is illegal if the position after it is symmetric in this sense.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SymmetryRule {
    /// The board equals its mirror across the midline between the armies with colours swapped
    /// (white at column c, row r exactly where black is at column c, row h+1-r). Abbott's
    /// "pattern of left-to-right symmetry" as seen by the players facing each other.
    #[default]
    Mirror,
    /// The board equals its 180-degree rotation with colours swapped (one published reading).
    Rotation,
    /// Either of the two.
    Both,
    /// No symmetry rule.
    Off,
}

impl SymmetryRule {
    pub const ALL: [SymmetryRule; 4] =
        [SymmetryRule::Mirror, SymmetryRule::Rotation, SymmetryRule::Both, SymmetryRule::Off];

    pub fn name(self) -> &'static str {
        match self {
            SymmetryRule::Mirror => "mirror",
            SymmetryRule::Rotation => "rotation",
            SymmetryRule::Both => "both",
            SymmetryRule::Off => "off",
        }
    }

    pub fn from_name(name: &str) -> Option<SymmetryRule> {
        SymmetryRule::ALL.into_iter().find(|rule| rule.name() == name)
    }
}

impl fmt::Display for SymmetryRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The rule options of a game.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Rules {
    /// Columns, 5..=16 (14 in Abbott's game).
    pub width: u8,
    /// Rows, 5..=16 (12 in Abbott's game).
    pub height: u8,
    /// The anti-copycat rule's reading.
    pub symmetry: SymmetryRule,
    /// Plies after which an unfinished game is scored a draw. The game itself has no draw rule;
    /// self-play and matches need games to end.
    pub ply_cap: Option<u16>,
    /// Néstor Romeral Andrés's variant: before the first move Black, White and Black each place
    /// a neutral stone on an empty square of the stone rows (see [`Geometry::stone_rows`]).
    /// Stones block movement like the board's edge, are never captured and count for nobody.
    /// Off unless asked for, and then left out of configs and metadata, so files written before
    /// the variant existed read and write the same.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stones: bool,
}

impl Default for Rules {
    fn default() -> Rules {
        Rules {
            width: STANDARD_WIDTH,
            height: STANDARD_HEIGHT,
            symmetry: SymmetryRule::Mirror,
            ply_cap: None,
            stones: false,
        }
    }
}

/// A rules value that cannot be played.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RulesError {
    #[error("board size {width}x{height} is not supported: width and height must each be {MIN_DIM}..={MAX_DIM}")]
    BoardSize { width: u8, height: u8 },
    #[error("a ply cap of 0 ends every game before it starts; leave it unset for no cap")]
    ZeroPlyCap,
    #[error("the stones variant needs a stone row between the armies, and a {height}-row board has none: stones go on the empty rows minus the row in front of each army, so the board needs at least 7 rows")]
    NoStoneRows { height: u8 },
    #[error("{0:?} is not a board: name one ({names}) or give WxH, e.g. 10x8", names = BOARD_NAMES.iter().map(|(name, ..)| *name).collect::<Vec<_>>().join(", "))]
    UnknownBoard(String),
}

/// Boards known by name: Abbott's, and the 8x8 board of the Crossings family (Epaminondas rules,
/// 16 pieces a side), fast for experiments and tests.
pub const BOARD_NAMES: [(&str, u8, u8); 2] =
    [("standard", STANDARD_WIDTH, STANDARD_HEIGHT), ("crossings-board", 8, 8)];

/// A board size by name (see [`BOARD_NAMES`]) or as `WxH`, checked against the sizes the
/// engine supports.
pub fn parse_board(text: &str) -> Result<(u8, u8), RulesError> {
    let unknown = || RulesError::UnknownBoard(text.to_string());
    let (width, height) = match BOARD_NAMES.iter().find(|(name, ..)| *name == text) {
        Some(&(_, width, height)) => (width, height),
        None => {
            let (w, h) = text.split_once('x').ok_or_else(unknown)?;
            (w.parse().map_err(|_| unknown())?, h.parse().map_err(|_| unknown())?)
        }
    };
    Rules { width, height, ..Rules::default() }.validate()?;
    Ok((width, height))
}

impl Rules {
    /// The standard game with a ply cap.
    pub fn with_ply_cap(self, cap: Option<u16>) -> Rules {
        Rules { ply_cap: cap, ..self }
    }

    pub fn validate(&self) -> Result<(), RulesError> {
        let ok = |d: u8| (MIN_DIM..=MAX_DIM).contains(&d);
        if !ok(self.width) || !ok(self.height) {
            return Err(RulesError::BoardSize { width: self.width, height: self.height });
        }
        if self.ply_cap == Some(0) {
            return Err(RulesError::ZeroPlyCap);
        }
        if self.stones && self.geometry().stone_rows.is_empty() {
            return Err(RulesError::NoStoneRows { height: self.height });
        }
        Ok(())
    }

    /// Number of squares on the board.
    pub fn squares(&self) -> usize {
        self.width as usize * self.height as usize
    }

    /// The geometry tables of this board size. The size must be valid (see [`Rules::validate`]).
    pub fn geometry(&self) -> &'static Geometry {
        Geometry::get(self.width, self.height)
    }
}

impl fmt::Display for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{} symmetry={}", self.width, self.height, self.symmetry)?;
        match self.ply_cap {
            Some(cap) => write!(f, " ply-cap={cap}")?,
            None => write!(f, " ply-cap=none")?,
        }
        // Only when on, so the standard game's text (in run metadata, say) is unchanged.
        if self.stones {
            f.write_str(" stones")?;
        }
        Ok(())
    }
}

/// Masks for one board size, computed once and shared by every position of that size.
#[derive(Debug)]
pub struct Geometry {
    pub width: u8,
    pub height: u8,
    /// Every square of the board.
    pub board: Bitboard,
    /// `shift_masks[d]`: squares whose neighbour one step against `d` is on the board. ANDing a
    /// raw shift with it drops bits that left the board or wrapped into another row.
    pub shift_masks: [Bitboard; 8],
    /// `rows[r]`: the squares of row r.
    pub rows: [Bitboard; 16],
    /// Where stones may be placed: the rows between the armies' start rows, less the row
    /// directly in front of each army, so no stone touches an army at the start. On Abbott's
    /// 12 rows these are rows 4..=9, the variant's "six middle rows"; boards under 7 rows have
    /// none (and [`Rules::validate`] refuses stones there).
    pub stone_rows: Bitboard,
}

impl Geometry {
    fn new(width: u8, height: u8) -> Geometry {
        let mut board = Bitboard::EMPTY;
        let mut rows = [Bitboard::EMPTY; 16];
        for row in 0..height {
            for column in 0..width {
                board.set(Square::new(column, row));
                rows[row as usize].set(Square::new(column, row));
            }
        }
        let shift_masks = Dir::ALL.map(|dir| {
            board
                .squares()
                .filter(|sq| sq.offset(dir.opposite(), 1, width, height).is_some())
                .collect()
        });
        let mut stone_rows = Bitboard::EMPTY;
        for row in HOME_ROWS + 1..height.saturating_sub(HOME_ROWS + 1) {
            stone_rows |= rows[row as usize];
        }
        Geometry { width, height, board, shift_masks, rows, stone_rows }
    }

    /// The shared tables for a `width` x `height` board (both in 5..=16).
    pub fn get(width: u8, height: u8) -> &'static Geometry {
        static TABLE: OnceLock<Vec<Geometry>> = OnceLock::new();
        let table = TABLE.get_or_init(|| {
            let dims = MIN_DIM..=MAX_DIM;
            dims.clone().flat_map(|w| dims.clone().map(move |h| Geometry::new(w, h))).collect()
        });
        let span = (MAX_DIM - MIN_DIM + 1) as usize;
        &table[(width - MIN_DIM) as usize * span + (height - MIN_DIM) as usize]
    }

    /// Every bit moved one step in `dir`, keeping only those that stay on the board.
    #[inline]
    pub fn shift(&self, bits: Bitboard, dir: Dir) -> Bitboard {
        bits.shift_by(dir.offset()) & self.shift_masks[dir.index()]
    }

    /// The board turned upside down: row r goes to row h-1-r.
    pub fn flip_vertical(&self, bits: Bitboard) -> Bitboard {
        let rows = bits.rows();
        let mut flipped = [0u16; 16];
        for r in 0..self.height as usize {
            flipped[self.height as usize - 1 - r] = rows[r];
        }
        Bitboard::from_rows(flipped)
    }

    /// The board seen in a left-right mirror: column c goes to column w-1-c.
    pub fn mirror(&self, bits: Bitboard) -> Bitboard {
        let unused = 16 - self.width as u32;
        Bitboard::from_rows(bits.rows().map(|row| row.reverse_bits() >> unused))
    }

    /// The board turned by 180 degrees.
    pub fn rotate180(&self, bits: Bitboard) -> Bitboard {
        self.mirror(self.flip_vertical(bits))
    }
}
