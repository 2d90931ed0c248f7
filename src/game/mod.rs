//! The rules of Epaminondas, and nothing else: no search, no network.
//!
//! `square` and `bitboard` are the vocabulary; `rules` holds the rule options (the stones variant
//! among them) and board geometry; `position` the game state, move legality and playing;
//! `movegen` the fast generator; `tactics` what a move captures or enters before it is played;
//! `forced` the results certain one move ahead; `notation` and
//! `record` the text formats; `perft` the generator's check.

mod bitboard;
pub mod diagram;
mod forced;
mod movegen;
mod notation;
mod perft;
mod position;
mod record;
mod rules;
mod square;
mod tactics;
mod zobrist;

pub use bitboard::Bitboard;
pub use forced::Forced;
pub use movegen::Reach;
pub use notation::{MoveError, MoveText, ParsePositionError};
pub use perft::{divide, perft};
pub use position::{
    mirror_move, Color, IllegalMove, Move, MoveEffect, Position, SetupError, Status, WinReason,
};
pub use record::{GameRecord, RecordError, RecordResult, Termination};
pub use rules::{
    parse_board, Geometry, Rules, RulesError, SymmetryRule, BOARD_NAMES, HOME_ROWS,
    STANDARD_HEIGHT, STANDARD_WIDTH, STONES,
};
pub use square::{Dir, Square, MAX_DIM, MIN_DIM, STRIDE};
pub use tactics::{forcing_moves, move_facts, must_answer, MoveFacts};
