//! Zobrist keys: one random 64-bit key per (colour, square), one per stone square (the stones
//! variant) and one for the side to move, so a position's hash updates by XOR as pieces move. Keys are fixed at compile time so hashes are
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
        table[i / 256][i % 256] =
            splitmix(0x45_5041_4d49_4e4f ^ (i as u64).wrapping_mul(0x1000_0000_01b3));
        i += 1;
    }
    table
}

static KEYS: [[u64; 256]; 2] = keys();

/// Stone keys continue the pieces' sequence (indices 512..768), so they differ from every piece
/// key and a position without stones hashes exactly as before the variant existed.
const fn stone_keys() -> [u64; 256] {
    let mut table = [0u64; 256];
    let mut i = 0;
    while i < 256 {
        table[i] =
            splitmix(0x45_5041_4d49_4e4f ^ ((512 + i) as u64).wrapping_mul(0x1000_0000_01b3));
        i += 1;
    }
    table
}

static STONE_KEYS: [u64; 256] = stone_keys();
/// XORed in when Black is to move.
pub const SIDE: u64 = splitmix(0x5349_4445);

/// The XOR of the keys of `color` on every square of `bits`.
#[inline]
pub fn diff(bits: Bitboard, color: Color) -> u64 {
    bits.squares().fold(0, |h, sq| h ^ KEYS[color.index()][sq.index()])
}

/// The XOR of the stone keys of every square of `bits`.
#[inline]
pub fn stones(bits: Bitboard) -> u64 {
    bits.squares().fold(0, |h, sq| h ^ STONE_KEYS[sq.index()])
}

/// The full hash of a piece placement, the stones and the side to move.
pub fn hash(pieces: &[Bitboard; 2], stone_squares: Bitboard, side: Color) -> u64 {
    let side_key = if side == Color::Black { SIDE } else { 0 };
    diff(pieces[0], Color::White) ^ diff(pieces[1], Color::Black) ^ stones(stone_squares) ^ side_key
}
