//! The only bridge between the rules and the network: positions to input planes, moves to
//! policy indices and back.
//!
//! Everything is seen from the side to move: for Black the board is turned upside down (row r
//! becomes row h-1-r, north and south swap), so "forward" is always up and the network learns
//! one game, not two. Columns are never flipped, so the left-right mirror (an exact symmetry of
//! the game) commutes with this view and can be used for augmentation.
//!
//! The policy is fully convolutional: one plane per (direction, distance) over the tail square,
//! so a network is not tied to one board size. Distances run 1..=8: a phalanx of k moves at most
//! k squares and the tail's start and the head's landing span k + d <= 16 squares, so d <= 8 on
//! every supported board.
//!
//! The stones variant adds one input plane (the stones) and one policy plane (placing a stone,
//! over its square), only in networks built for it, so networks for the standard game keep
//! their shapes and checkpoints: see [`Inputs`] and [`policy_planes`]. Networks may also read
//! [`THREAT_PLANES`] planes of what each side's next move could do (capture, reach the far
//! row): facts of the rules a small convolutional net otherwise has to rebuild from long lines
//! of pieces across the board.

use crate::game::{Bitboard, Color, Dir, Move, Position, Rules, Square};

/// Input planes of a network for the standard game, each `height` x `width`, in this order:
pub const INPUT_PLANES: usize = 7;
/// 0: the side to move's pieces.
pub const PLANE_OWN: usize = 0;
/// 1: the opponent's pieces.
pub const PLANE_OPPONENT: usize = 1;
/// 2: ones (lets convolutions find the edge, whose zero padding looks like empty squares).
pub const PLANE_ONES: usize = 2;
/// 3: constant, the side to move's pieces on its far row / 4 (the count that decides the win).
pub const PLANE_OWN_FAR: usize = 3;
/// 4: constant, the opponent's pieces on its far row (our home row) / 4.
pub const PLANE_OPPONENT_FAR: usize = 4;
/// 5: constant, 1 when the side to move has already won at the start of its turn (lets the
/// value head see the rule exactly; search treats such positions as terminal anyway).
pub const PLANE_WON: usize = 5;
/// 6: constant, plies left under the ply cap / cap; 1 without a cap, as at the start of a
/// capped game. (Training always has a cap; 0 there would say the game is about to be drawn,
/// and a network's value of every position of an uncapped game would be a certain draw.)
pub const PLANE_PLIES_LEFT: usize = 6;
/// 7, in networks for the stones variant only: the stones. (The placement phase needs no plane
/// of its own: fewer than three stones on the board says it.)
pub const PLANE_STONES: usize = 7;

/// In networks that read threats ([`Inputs::threats`]), four planes after the others:
pub const THREAT_PLANES: usize = 4;
/// +0: opponent pieces that some move of the side to move captures now (whole captured lines).
pub const THREAT_WE_CAPTURE: usize = 0;
/// +1: own pieces that some move of the opponent would capture, were it to move.
pub const THREAT_THEY_CAPTURE: usize = 1;
/// +2: own pieces that some move lands on the far row now.
pub const THREAT_OUR_RUNNERS: usize = 2;
/// +3: opponent pieces that some move would land on our home row, were it to move.
pub const THREAT_THEIR_RUNNERS: usize = 3;

/// The optional input planes a network reads (part of its shape: see `NetConfig`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Inputs {
    /// The stones plane ([`PLANE_STONES`]), for the stones variant.
    pub stones: bool,
    /// The [`THREAT_PLANES`] threat planes, after every other plane.
    pub threats: bool,
}

impl Inputs {
    /// Input planes in all.
    pub const fn planes(self) -> usize {
        INPUT_PLANES + self.stones as usize + THREAT_PLANES * self.threats as usize
    }

    /// The first threat plane (when [`Inputs::threats`]).
    pub const fn first_threat_plane(self) -> usize {
        INPUT_PLANES + self.stones as usize
    }
}

/// The longest move on any supported board.
pub const MAX_DISTANCE: usize = 8;
/// Policy planes of a network for the standard game: 8 directions x 8 distances.
pub const POLICY_PLANES: usize = 8 * MAX_DISTANCE;
/// In networks for the stones variant, the plane after the moves: placing a stone on a square.
pub const PLANE_PLACE: usize = POLICY_PLANES;

/// Policy planes of a network for the standard game (`stones` false) or the stones variant.
pub const fn policy_planes(stones: bool) -> usize {
    POLICY_PLANES + stones as usize
}

/// Policy vector length for games under `rules`: one logit per (plane, square).
pub fn policy_size(rules: &Rules) -> usize {
    policy_planes(rules.stones) * rules.squares()
}

/// Input length of one position for a network reading `inputs` on the board of `rules`.
pub fn input_size(rules: &Rules, inputs: Inputs) -> usize {
    inputs.planes() * rules.squares()
}

/// A square as the side to move sees it (row index into its planes).
fn view_square(square: Square, side: Color, height: u8) -> (usize, usize) {
    let row = match side {
        Color::White => square.row(),
        Color::Black => height - 1 - square.row(),
    };
    (row as usize, square.column() as usize)
}

fn view_dir(dir: Dir, side: Color) -> Dir {
    match side {
        Color::White => dir,
        Color::Black => dir.flipped(),
    }
}

/// Writes the planes of `position` that a network reading `inputs` takes into `out` (exactly
/// `inputs.planes()` planes), overwriting it. A network for the stones variant reads standard
/// positions too (no stones); a standard network given a position with stones would see them
/// as empty squares, which is why players refuse that pairing before a game.
pub fn encode_position(position: &Position, inputs: Inputs, out: &mut [f32]) {
    let (width, height) = (position.rules().width, position.rules().height);
    let area = width as usize * height as usize;
    assert_eq!(
        out.len(),
        inputs.planes() * area,
        "input buffer for {inputs:?} on a {width}x{height} board"
    );
    out.fill(0.0);
    let side = position.side_to_move();
    let mark = |out: &mut [f32], plane: usize, squares: Bitboard| {
        for square in squares.squares() {
            let (row, column) = view_square(square, side, height);
            out[plane * area + row * width as usize + column] = 1.0;
        }
    };
    mark(out, PLANE_OWN, position.pieces(side));
    mark(out, PLANE_OPPONENT, position.pieces(side.opponent()));
    let constant = |out: &mut [f32], plane: usize, value: f32| {
        out[plane * area..(plane + 1) * area].fill(value)
    };
    constant(out, PLANE_ONES, 1.0);
    constant(out, PLANE_OWN_FAR, position.far_row_count(side) as f32 / 4.0);
    constant(out, PLANE_OPPONENT_FAR, position.far_row_count(side.opponent()) as f32 / 4.0);
    constant(out, PLANE_WON, if position.side_to_move_has_won() { 1.0 } else { 0.0 });
    let plies_left = position
        .rules()
        .ply_cap
        .map_or(1.0, |cap| cap.saturating_sub(position.ply()) as f32 / cap as f32);
    constant(out, PLANE_PLIES_LEFT, plies_left);
    if inputs.stones {
        mark(out, PLANE_STONES, position.stones());
    }
    if inputs.threats {
        let first = inputs.first_threat_plane();
        let ours = position.reach();
        let theirs = position.with_side_to_move(side.opponent(), position.ply()).reach();
        mark(out, first + THREAT_WE_CAPTURE, ours.captures);
        mark(out, first + THREAT_THEY_CAPTURE, theirs.captures);
        mark(out, first + THREAT_OUR_RUNNERS, ours.runners);
        mark(out, first + THREAT_THEIR_RUNNERS, theirs.runners);
    }
}

/// The policy index of a legal move of `position` (whose side to move makes it). A placement
/// is on the [`PLANE_PLACE`] plane, over its square as the side to move sees it.
pub fn move_index(position: &Position, mv: Move) -> usize {
    let (width, height) = (position.rules().width, position.rules().height);
    let side = position.side_to_move();
    let (row, column) = view_square(mv.from, side, height);
    let plane = if mv.is_placement() {
        PLANE_PLACE
    } else {
        view_dir(mv.dir, side).index() * MAX_DISTANCE + (mv.distance as usize - 1)
    };
    (plane * height as usize + row) * width as usize + column
}

/// The move a policy index stands for in `position`, if the index is in range for its rules.
/// (Whether it is legal is the rules' business.)
pub fn index_move(position: &Position, index: usize) -> Option<Move> {
    let (width, height) = (position.rules().width as usize, position.rules().height as usize);
    if index >= policy_size(position.rules()) {
        return None;
    }
    let plane = index / (width * height);
    let row = (index / width) % height;
    let column = index % width;
    let side = position.side_to_move();
    let board_row = match side {
        Color::White => row,
        Color::Black => height - 1 - row,
    };
    let square = Square::new(column as u8, board_row as u8);
    if plane == PLANE_PLACE {
        return Some(Move::place(square));
    }
    let dir = view_dir(Dir::from_index(plane / MAX_DISTANCE), side);
    let distance = (plane % MAX_DISTANCE + 1) as u8;
    Some(Move::new(square, dir, distance))
}

/// The index a policy entry moves to under the left-right mirror (an involution).
pub fn mirror_index(index: usize, width: u8, height: u8) -> usize {
    let (width, height) = (width as usize, height as usize);
    let plane = index / (width * height);
    let row = (index / width) % height;
    let column = index % width;
    // A placement has no direction: only its column mirrors.
    let mirrored_plane = if plane >= POLICY_PLANES {
        plane
    } else {
        Dir::from_index(plane / MAX_DISTANCE).mirrored().index() * MAX_DISTANCE
            + plane % MAX_DISTANCE
    };
    (mirrored_plane * height + row) * width + (width - 1 - column)
}

/// A whole policy vector (or any per-index values) under the left-right mirror.
pub fn mirror_policy(policy: &[f32], width: u8, height: u8) -> Vec<f32> {
    let mut mirrored = vec![0.0; policy.len()];
    for (i, value) in policy.iter().enumerate() {
        mirrored[mirror_index(i, width, height)] = *value;
    }
    mirrored
}
