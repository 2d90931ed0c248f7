//! A 256-bit set of squares in the fixed 16-wide layout of [`Square`].
//!
//! 168 squares do not fit a `u128`; four `u64` limbs hold every supported board size. Shifts do
//! not know the board: callers mask the result with the board's shift masks (see
//! [`crate::game::Geometry::shift`]), which is what keeps rows from wrapping into each other.

use super::square::Square;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not, Shl, Shr};

#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug)]
pub struct Bitboard(pub [u64; 4]);

impl Bitboard {
    pub const EMPTY: Bitboard = Bitboard([0; 4]);

    pub const fn from_square(square: Square) -> Bitboard {
        let mut limbs = [0u64; 4];
        limbs[square.index() / 64] = 1 << (square.index() % 64);
        Bitboard(limbs)
    }

    #[inline]
    pub fn contains(self, square: Square) -> bool {
        self.0[square.index() / 64] >> (square.index() % 64) & 1 != 0
    }

    #[inline]
    pub fn set(&mut self, square: Square) {
        self.0[square.index() / 64] |= 1 << (square.index() % 64);
    }

    #[inline]
    pub fn clear(&mut self, square: Square) {
        self.0[square.index() / 64] &= !(1 << (square.index() % 64));
    }

    #[inline]
    pub fn is_empty(self) -> bool {
        (self.0[0] | self.0[1] | self.0[2] | self.0[3]) == 0
    }

    #[inline]
    pub fn any(self) -> bool {
        !self.is_empty()
    }

    #[inline]
    pub fn count(self) -> u32 {
        self.0.iter().map(|limb| limb.count_ones()).sum()
    }

    /// Shifts by a signed layout offset (positive: towards higher indices).
    #[inline]
    pub fn shift_by(self, offset: i32) -> Bitboard {
        if offset >= 0 {
            self << offset as u32
        } else {
            self >> (-offset) as u32
        }
    }

    /// The squares in the set, lowest index first.
    pub fn squares(self) -> Squares {
        Squares { bits: self, limb: 0 }
    }

    /// The lowest square in the set, if any.
    pub fn first(self) -> Option<Square> {
        self.squares().next()
    }

    /// The rows of the set as 16-bit masks (bit c = column c), row 0 first.
    pub fn rows(self) -> [u16; 16] {
        let mut rows = [0u16; 16];
        for (i, row) in rows.iter_mut().enumerate() {
            *row = (self.0[i / 4] >> (16 * (i % 4))) as u16;
        }
        rows
    }

    pub fn from_rows(rows: [u16; 16]) -> Bitboard {
        let mut limbs = [0u64; 4];
        for (i, row) in rows.iter().enumerate() {
            limbs[i / 4] |= (*row as u64) << (16 * (i % 4));
        }
        Bitboard(limbs)
    }
}

/// Iterator over the squares of a [`Bitboard`].
pub struct Squares {
    bits: Bitboard,
    limb: usize,
}

impl Iterator for Squares {
    type Item = Square;

    #[inline]
    fn next(&mut self) -> Option<Square> {
        while self.limb < 4 {
            let word = self.bits.0[self.limb];
            if word != 0 {
                self.bits.0[self.limb] = word & (word - 1);
                return Some(Square::from_index(
                    (self.limb * 64) as u8 + word.trailing_zeros() as u8,
                ));
            }
            self.limb += 1;
        }
        None
    }
}

/// Shifts every bit towards higher indices by `n` (0 < n < 64); bits past 255 are lost.
impl Shl<u32> for Bitboard {
    type Output = Bitboard;

    #[inline]
    fn shl(self, n: u32) -> Bitboard {
        let [a, b, c, d] = self.0;
        Bitboard([
            a << n,
            (b << n) | (a >> (64 - n)),
            (c << n) | (b >> (64 - n)),
            (d << n) | (c >> (64 - n)),
        ])
    }
}

/// Shifts every bit towards lower indices by `n` (0 < n < 64); bits below 0 are lost.
impl Shr<u32> for Bitboard {
    type Output = Bitboard;

    #[inline]
    fn shr(self, n: u32) -> Bitboard {
        let [a, b, c, d] = self.0;
        Bitboard([
            (a >> n) | (b << (64 - n)),
            (b >> n) | (c << (64 - n)),
            (c >> n) | (d << (64 - n)),
            d >> n,
        ])
    }
}

macro_rules! limbwise {
    ($trait:ident, $method:ident, $assign_trait:ident, $assign_method:ident, $op:tt) => {
        impl $trait for Bitboard {
            type Output = Bitboard;
            #[inline]
            fn $method(self, rhs: Bitboard) -> Bitboard {
                Bitboard([self.0[0] $op rhs.0[0], self.0[1] $op rhs.0[1], self.0[2] $op rhs.0[2], self.0[3] $op rhs.0[3]])
            }
        }
        impl $assign_trait for Bitboard {
            #[inline]
            fn $assign_method(&mut self, rhs: Bitboard) {
                *self = *self $op rhs;
            }
        }
    };
}
limbwise!(BitAnd, bitand, BitAndAssign, bitand_assign, &);
limbwise!(BitOr, bitor, BitOrAssign, bitor_assign, |);
limbwise!(BitXor, bitxor, BitXorAssign, bitxor_assign, ^);

impl Not for Bitboard {
    type Output = Bitboard;
    #[inline]
    fn not(self) -> Bitboard {
        Bitboard([!self.0[0], !self.0[1], !self.0[2], !self.0[3]])
    }
}

impl FromIterator<Square> for Bitboard {
    fn from_iter<I: IntoIterator<Item = Square>>(iter: I) -> Bitboard {
        let mut bits = Bitboard::EMPTY;
        for square in iter {
            bits.set(square);
        }
        bits
    }
}
