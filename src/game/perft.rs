//! Perft: the number of move sequences of a given length, the standard check of a move
//! generator against independent implementations. A finished position has no children.

use super::position::{Move, Position};

/// Leaf nodes `depth` plies below `position`.
pub fn perft(position: &Position, depth: u32) -> u64 {
    let mut buffers = vec![Vec::with_capacity(256); depth as usize];
    count(position, depth, &mut buffers)
}

fn count(position: &Position, depth: u32, buffers: &mut [Vec<Move>]) -> u64 {
    match depth {
        0 => 1,
        // The last ply is counted, not played.
        1 => position.count_legal_moves(),
        _ => {
            let (moves, rest) = buffers.split_first_mut().expect("one buffer per ply");
            position.legal_moves_into(moves);
            moves.iter().map(|mv| count(&position.play_unchecked(*mv), depth - 1, rest)).sum()
        }
    }
}

/// Perft split by first move, in generation order: what `perft --divide` prints.
pub fn divide(position: &Position, depth: u32) -> Vec<(Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    position
        .legal_moves()
        .into_iter()
        .map(|mv| (mv, perft(&position.play_unchecked(mv), depth - 1)))
        .collect()
}
