//! Helpers shared by the integration tests.
#![allow(dead_code)]

use epaminondas::game::{Dir, Move, Position, Square, Status};
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};

/// The legal moves found the slow way: every (own square, direction, distance) and every stone
/// placement on every square of the board put to `Position::check`. A second generator that
/// shares nothing with the bitboard one (not even the stone rows' mask: `check` walks them).
pub fn brute_force_moves(position: &Position) -> Vec<Move> {
    let side = position.side_to_move();
    let mut moves = Vec::new();
    for row in 0..position.rules().height {
        for column in 0..position.rules().width {
            let mv = Move::place(Square::new(column, row));
            if position.check(mv).is_ok() {
                moves.push(mv);
            }
        }
    }
    for from in position.pieces(side).squares() {
        for dir in Dir::ALL {
            for distance in 1..=16 {
                let mv = Move::new(from, dir, distance);
                if position.check(mv).is_ok() {
                    moves.push(mv);
                }
            }
        }
    }
    moves
}

pub fn sorted(mut moves: Vec<Move>) -> Vec<(usize, usize, u8)> {
    let mut keys: Vec<_> =
        moves.drain(..).map(|m| (m.from.index(), m.dir.index(), m.distance)).collect();
    keys.sort();
    keys
}

/// Positions reached by random play from the start of `position`'s game, one per ply.
pub fn random_game(start: Position, seed: u64, max_plies: usize) -> Vec<Position> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut positions = vec![start];
    let mut current = start;
    for _ in 0..max_plies {
        let moves = current.legal_moves();
        // Prefer captures a little so games reach thin, open positions.
        let capture = moves
            .iter()
            .copied()
            .find(|m| current.check(*m).map(|e| e.captured > 0).unwrap_or(false));
        let mv = match capture {
            Some(c) if rng.random_bool(0.5) => c,
            _ => match moves.choose(&mut rng) {
                Some(m) => *m,
                None => break,
            },
        };
        current = current.play_unchecked(mv);
        positions.push(current);
    }
    positions
}

/// A random scatter of pieces (any counts, some on far rows) under `rules`; with stones, 0..=3
/// stones on free squares of the stone rows (fewer than 3: still placing).
pub fn random_position(rng: &mut StdRng, rules: epaminondas::game::Rules) -> Position {
    let mut white = epaminondas::game::Bitboard::EMPTY;
    let mut black = epaminondas::game::Bitboard::EMPTY;
    let density = rng.random_range(0.05..0.45);
    for row in 0..rules.height {
        for column in 0..rules.width {
            if rng.random_bool(density) {
                if rng.random_bool(0.5) {
                    white.set(Square::new(column, row));
                } else {
                    black.set(Square::new(column, row));
                }
            }
        }
    }
    let side = if rng.random_bool(0.5) {
        epaminondas::game::Color::White
    } else {
        epaminondas::game::Color::Black
    };
    let position = Position::from_parts(rules, white, black, side, 0).expect("valid scatter");
    if !rules.stones {
        return position;
    }
    let free: Vec<Square> = (rules.geometry().stone_rows & position.empty()).squares().collect();
    let wanted = if rng.random_bool(0.7) { 3 } else { rng.random_range(0..3) };
    let stones = free.choose_multiple(rng, wanted).copied().collect();
    position.with_stones(stones).expect("stones on free stone-row squares")
}

pub fn sq(text: &str) -> Square {
    Square::parse(text, 16, 16).expect("test square")
}

/// Whether `mv` wins within `moves` moves of the mover whatever the opponent does: the game is
/// won after it, or every reply leaves a position won at the start of the mover's turn or (with
/// moves to spare) one with such a move again.
pub fn forces_win(position: &Position, mv: Move, moves: u32) -> bool {
    let me = position.side_to_move();
    let after = position.play_unchecked(mv);
    match after.status() {
        Status::Won { winner, .. } => return winner == me,
        Status::Draw => return false,
        Status::Ongoing => {}
    }
    after.legal_moves().into_iter().all(|reply| {
        let next = after.play_unchecked(reply);
        match next.status() {
            Status::Won { winner, .. } => winner == me,
            Status::Draw => false,
            Status::Ongoing => {
                moves > 1
                    && next
                        .legal_moves()
                        .into_iter()
                        .any(|again| forces_win(&next, again, moves - 1))
            }
        }
    })
}

/// Whether `mv` lets the opponent win by force with its next move.
pub fn hands_over_win(position: &Position, mv: Move) -> bool {
    let after = position.play_unchecked(mv);
    after.status() == Status::Ongoing
        && after.legal_moves().iter().any(|reply| forces_win(&after, *reply, 1))
}

/// Trains `network` on the newest 32 positions of `buffer` at a learning rate of 0.01: 5 steps,
/// 150 more, then 5 more. The statistics of the first five and of the last five, for tests
/// that a loss falls.
pub fn train_first_and_last(
    network: &epaminondas::nn::Network,
    buffer: &epaminondas::replay::ReplayBuffer,
    training: &epaminondas::config::TrainingConfig,
) -> (epaminondas::train::TrainStats, epaminondas::train::TrainStats) {
    use epaminondas::train::{self, Round};
    let mut optimizer =
        epaminondas::nn::optim::Optimizer::new(network, training.optimizer_settings());
    let mut rng = StdRng::seed_from_u64(1);
    let round = |steps| Round { buffer, window: 32, steps, learning_rate: 0.01 };
    let first = train::train(network, &mut optimizer, round(5), training, &mut rng, &|_| {});
    let _ = train::train(network, &mut optimizer, round(150), training, &mut rng, &|_| {});
    let last = train::train(network, &mut optimizer, round(5), training, &mut rng, &|_| {});
    (first, last)
}

/// The tensors of a network file by name, each as its raw bytes. Two files of the same weights
/// can differ byte for byte (the order of the tensors in the header is not fixed), so weights
/// are compared this way.
pub fn tensors(path: &std::path::Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let bytes = std::fs::read(path).unwrap();
    let header_len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&bytes[8..8 + header_len]).unwrap();
    let data = &bytes[8 + header_len..];
    header
        .into_iter()
        .filter(|(name, _)| name != "__metadata__")
        .map(|(name, info)| {
            let offsets = &info["data_offsets"];
            let (start, end) =
                (offsets[0].as_u64().unwrap() as usize, offsets[1].as_u64().unwrap() as usize);
            (name, data[start..end].to_vec())
        })
        .collect()
}

/// An observer that keeps the messages a run tells it.
#[derive(Default)]
pub struct Messages(pub std::cell::RefCell<Vec<String>>);
impl epaminondas::coach::Observer for Messages {
    fn message(&self, text: &str) {
        self.0.borrow_mut().push(text.to_string());
    }
}

/// A network of `config` from `seed` with noise of `scale` added to every weight: a fresh
/// network's zeroed output layers would make every comparison of its outputs trivially true.
pub fn noisy_network(
    config: &epaminondas::nn::model::NetConfig,
    seed: u64,
    scale: f64,
) -> epaminondas::nn::Network {
    let network = epaminondas::nn::Network::new(config, tch::Device::Cpu, Some(seed)).unwrap();
    // The variables come in a hash map's order, which differs from map to map: the noise is
    // drawn in their names' order, so that a seed makes one network.
    let mut variables: Vec<_> = network.vs.variables().into_iter().collect();
    variables.sort_by(|a, b| a.0.cmp(&b.0));
    // Seeded again and held: tests run in parallel threads that share libtorch's generator.
    epaminondas::nn::with_torch_generator(Some(seed.wrapping_add(1)), || {
        tch::no_grad(|| {
            for (name, mut variable) in variables {
                let noise = variable.randn_like() * scale;
                // A batch norm's running variance must stay positive (noise that took one below
                // zero made the outputs NaN in a few runs in a hundred): it is scaled instead.
                if name.ends_with("running_var") {
                    variable.copy_(&(&variable * noise.exp()));
                    continue;
                }
                variable.copy_(&(&variable + noise));
            }
        })
    });
    network
}

/// [`noisy_network`] of the tiny size.
pub fn noisy_tiny_network(seed: u64, scale: f64) -> epaminondas::nn::Network {
    let tiny = epaminondas::nn::model::NetConfig::named("tiny").unwrap();
    noisy_network(&tiny, seed, scale)
}
