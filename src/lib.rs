//! Epaminondas: the rules of Robert Abbott's game, and an AlphaZero-style learner for them.
//!
//! Modules in dependency order:
//! - [`game`]: the rules only (positions, moves, notation, records, perft).
//! - [`encode`]: positions to network input planes, moves to policy indices (the only bridge).
//! - [`evaluator`]: the `Evaluator` trait search asks (no libtorch), a uniform one, a cache.
//! - [`mcts`]: PUCT search over an index arena, gather/apply for batching (no libtorch).
//! - [`nn`]: the residual network on libtorch, checkpoints (the only module using tch).
//! - [`players`]: everything that picks moves (random, greedy, alpha-beta, rollout MCTS, networks).
//! - [`arena`]: matches, Elo with intervals, SPRT, tournaments with fitted ratings.
//! - [`engine`]: the UCI-style protocol session (pure: lines in, lines out).
//! - [`review`]: a recorded game gone over move by move by a player.
//! - [`serve`]: play in the browser: a JSON API over games and an agent, a static page.
//! - [`replay`]: training samples, the point-of-view flip, the on-disk replay buffer.
//! - [`selfplay`]: many games in lockstep sharing one network batch.
//! - [`train`]: losses, optimiser, training steps.
//! - [`coach`]: the generation loop over a resumable run directory, metrics, observers.
//! - [`cluster`]: self-play on many machines through a NATS server: the learner's game source
//!   and the workers.
//! - [`distill`]: a smaller network taught a trained one's priors and values, resumable.
//! - [`plot`]: SVG pictures of a run's progress.
//! - [`bench`]: the benchmark behind `epaminondas bench`.
//! - [`config`]: the TOML training configuration and its validation.
//! - [`util`]: atomic file writes.
//! - [`cli`]: the command line, one file per subcommand.

pub mod arena;
pub mod bench;
pub mod cli;
pub mod cluster;
pub mod coach;
pub mod config;
pub mod distill;
pub mod encode;
pub mod engine;
pub mod evaluator;
pub mod game;
pub mod mcts;
pub mod nn;
pub mod players;
pub mod plot;
pub mod replay;
pub mod review;
pub mod selfplay;
pub mod serve;
pub mod train;
pub mod util;
