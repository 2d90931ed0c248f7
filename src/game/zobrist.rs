//! Zobrist keys: one random 64-bit key per (colour, square) and one for the side to move, so a
//! position's hash updates by XOR as pieces move. Keys are fixed at compile time so hashes are
//! stable across runs (evaluation caches and tests can rely on them).

use super::bitboard::Bitboard;
use super::position::Color;

const fn splitmix(state: u64) -> u64 {
    let mut z = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const fn keys() -> [[u64; 256]; 2] {
    let mut table = [[0u64; 256]; 2];
    let mut i = 0;
    while i < 512 {
        table[i / 256][i % 256] = splitmix(0x45_5041_4d49_4e4f ^ (i as u64).wrapping_mul(0x1000_0000_01b3));
        i += 1;
    }
    table
}

static KEYS: [[u64; 256]; 2] = keys();
/// XORed in when Black is to move.
pub const SIDE: u64 = splitmix(0x5349_4445);

/// The XOR of the keys of `color` on every square of `bits`.
#[inline]
pub fn diff(bits: Bitboard, color: Color) -> u64 {
    bits.squares().fold(0, |h, sq| h ^ KEYS[color.index()][sq.index()])
}

/// The full hash of a piece placement and side to move.
pub fn hash(pieces: &[Bitboard; 2], side: Color) -> u64 {
    let side_key = if side == Color::Black { SIDE } else { 0 };
    diff(pieces[0], Color::White) ^ diff(pieces[1], Color::Black) ^ side_key
}
