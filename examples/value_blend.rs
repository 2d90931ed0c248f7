//! Whether the hand-made evaluation knows something about a match's games that the network's
//! value does not: over every position of the games in RECORDS, each scored by its game's
//! result for the side to move, the value cross-entropy of the network, of the evaluation
//! (static, and after alpha-beta's one-ply search with quiescence), and of blends
//! `(1 - w) * network + w * tanh(score / scale)`, by stretch of the game.
//!
//! `cargo run --release --example value_blend -- NETWORK RECORDS...`
//!
//! Written because the default agent loses to alphabeta in pieces (about 10 down by ply 80)
//! while twice the search, and an ensemble with the mirror, left the score where it was: if a
//! blend predicts those games' results better than the network alone, mixing the evaluation
//! into the tree search's leaf values is a lever of knowledge, not of search.

use epaminondas::evaluator::{EvalRequest, Evaluator};
use epaminondas::game::{Color, GameRecord, Position, RecordResult};
use epaminondas::nn::{Network, Precision};
use epaminondas::players::alphabeta::{AlphaBetaPlayer, Quiescence};
use epaminondas::players::heuristic::{evaluate, is_decisive, VALUE_SCALE};
use epaminondas::players::{Limit, Player};
use epaminondas::replay::outcome_for;
use std::path::Path;

/// One position's values for the side to move, and its game's result for that side.
struct Sample {
    ply: usize,
    network: f32,
    /// The static evaluation, in its own units (a piece is about 100).
    static_score: f32,
    /// Alpha-beta at depth 1 with quiescence, in the same units (decided results at ±1e5).
    searched_score: f32,
    /// Quiescence alone (captures and entries played out from the position itself), 0 to 4
    /// plies deep.
    quiet_score: [f32; 5],
    result: f32,
    /// Whether the side to move is the network's agent (a player named `net:...`).
    agent_to_move: bool,
}

/// Cross-entropy of an expected result `value` in [-1, 1] against `result` in {-1, 0, 1}, both
/// read as a chance of winning ((1 + x) / 2).
fn cross_entropy(value: f32, result: f32) -> f64 {
    let p = ((1.0 + value as f64) / 2.0).clamp(1e-4, 1.0 - 1e-4);
    let t = (1.0 + result as f64) / 2.0;
    -(t * p.ln() + (1.0 - t) * (1.0 - p).ln())
}

fn searched_score(player: &mut AlphaBetaPlayer, position: &Position) -> f32 {
    player.new_game(0);
    let value = player.choose(position, Limit { nodes: None, depth: Some(1), time: None }).value.unwrap_or(0.0);
    if value.abs() >= 1.0 {
        value * 1e5
    } else {
        VALUE_SCALE * value.atanh()
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let network_path = args.next().ok_or("usage: value_blend NETWORK RECORDS...")?;
    let mut network = Network::load(Path::new(&network_path), tch::Device::Cpu)?.0.into_inference(Precision::F32);
    let mut searcher = AlphaBetaPlayer::new(Limit { nodes: None, depth: Some(1), time: None }, 0);
    // Quiescence 0 to 4 plies deep (0: the static evaluation, unless an entry must be answered).
    let mut quiescence: Vec<Quiescence> = (0..=4).map(Quiescence::new).collect();
    let (mut quiet_nodes, mut quiet_time) = ([0u64; 5], [std::time::Duration::ZERO; 5]);
    let mut samples = Vec::new();
    let mut games = 0;
    for path in args {
        for record in GameRecord::parse_all(&std::fs::read_to_string(&path)?)? {
            let opening: usize = record.tag("OpeningPlies").and_then(|p| p.parse().ok()).unwrap_or(0);
            if record.result == RecordResult::Unfinished {
                continue;
            }
            games += 1;
            let agent_is_white = record.white.starts_with("net:");
            let positions: Vec<Position> = record.positions().into_iter().skip(opening).filter(|p| !p.side_to_move_has_won() && p.has_legal_move()).collect();
            let requests: Vec<EvalRequest> = positions.iter().map(|p| EvalRequest { position: *p, moves: p.legal_moves() }).collect();
            let evaluations = requests.chunks(256).flat_map(|chunk| network.evaluate(chunk)).collect::<Vec<_>>();
            for (position, evaluation) in positions.iter().zip(evaluations) {
                let mut quiet_score = [0.0; 5];
                for (plies, search) in quiescence.iter_mut().enumerate() {
                    let started = std::time::Instant::now();
                    let (quiet, nodes) = search.score(position);
                    quiet_time[plies] += started.elapsed();
                    quiet_nodes[plies] += nodes;
                    quiet_score[plies] = if is_decisive(quiet) { quiet.signum() as f32 * 1e5 } else { quiet as f32 };
                }
                let white_to_move = position.side_to_move() == Color::White;
                samples.push(Sample {
                    ply: position.ply() as usize,
                    network: evaluation.value,
                    static_score: evaluate(position) as f32,
                    searched_score: searched_score(&mut searcher, position),
                    quiet_score,
                    result: outcome_for(record.result, position.side_to_move()) as f32,
                    agent_to_move: white_to_move == agent_is_white,
                });
            }
        }
    }
    println!("{games} games, {} positions", samples.len());
    for plies in 0..5 {
        println!("quiescence to {plies} plies: {:.1} nodes, {:.1} µs a position", quiet_nodes[plies] as f64 / samples.len() as f64, quiet_time[plies].as_secs_f64() * 1e6 / samples.len() as f64);
    }
    let stretches: [(&str, usize, usize); 4] = [("plies 1-40", 0, 40), ("41-80", 41, 80), ("81-", 81, usize::MAX), ("all", 0, usize::MAX)];
    let header: Vec<String> = stretches.iter().map(|s| s.0.to_string()).collect();
    println!("{:<44} {}", "value", header.iter().map(|h| format!("{h:>11}")).collect::<String>());
    let report = |name: String, value: &dyn Fn(&Sample) -> f32| {
        let cells: String = stretches
            .iter()
            .map(|&(_, from, to)| {
                let chosen: Vec<&Sample> = samples.iter().filter(|s| s.ply >= from && s.ply <= to).collect();
                let loss = chosen.iter().map(|s| cross_entropy(value(s), s.result)).sum::<f64>() / chosen.len().max(1) as f64;
                format!("{loss:>11.4}")
            })
            .collect();
        println!("{name:<44} {cells}");
    };
    report("network".into(), &|s| s.network);
    // Where the errors are: mean values from the agent's side, by the agent's result.
    for (name, result) in [("won", 1.0), ("lost", -1.0)] {
        for (what, value) in [("network", &(|s: &Sample| s.network) as &dyn Fn(&Sample) -> f32), ("searched/800", &|s: &Sample| (s.searched_score / 800.0).tanh())] {
            let cells: String = stretches
                .iter()
                .map(|&(_, from, to)| {
                    let chosen: Vec<f32> = samples
                        .iter()
                        .filter(|s| s.ply >= from && s.ply <= to && (if s.agent_to_move { s.result } else { -s.result }) == result)
                        .map(|s| if s.agent_to_move { value(s) } else { -value(s) })
                        .collect();
                    format!("{:>7.3} {:>4}", chosen.iter().sum::<f32>() / chosen.len().max(1) as f32, chosen.len())
                })
                .collect();
            println!("{:<44} {cells}", format!("agent {name}: mean {what}, agent's view"));
        }
    }
    for scale in [200.0, 400.0, 800.0, 1600.0] {
        report(format!("static, scale {scale}"), &|s| (s.static_score / scale).tanh());
        report(format!("searched, scale {scale}"), &|s| (s.searched_score / scale).tanh());
        report(format!("quiescence, scale {scale}"), &|s| (s.quiet_score[4] / scale).tanh());
    }
    for scale in [400.0, 800.0] {
        for weight in [0.1, 0.2, 0.3, 0.5] {
            report(format!("blend static, scale {scale}, weight {weight}"), &|s| (1.0 - weight) * s.network + weight * (s.static_score / scale).tanh());
            report(format!("blend searched, scale {scale}, weight {weight}"), &|s| (1.0 - weight) * s.network + weight * (s.searched_score / scale).tanh());
            for plies in 0..5 {
                report(format!("blend quiescence {plies}, scale {scale}, weight {weight}"), &|s| (1.0 - weight) * s.network + weight * (s.quiet_score[plies] / scale).tanh());
            }
        }
    }
    Ok(())
}
