//! Epaminondas: the rules of Robert Abbott's game, and an AlphaZero-style learner for them.
//!
//! Modules in dependency order:
//! - [`game`]: the rules only (positions, moves, notation, records, perft).
//! - [`cli`]: the command line, one file per subcommand.

pub mod game;
pub mod cli;
