//! Whether alpha-beta's search sees the default agent's material losses coming: for every move
//! the agent (the player named `net:...`) made in RECORDS, how much worse alpha-beta at a fixed
//! depth scores it than its own best move (the "drop", in the evaluation's units: a piece is
//! 100), set beside how the agent's piece lead actually changed over the next plies of the game.
//!
//! `cargo run --release --example blunder_check -- DEPTH HORIZON RECORDS...`
//!
//! Written because the agent loses to alphabeta in pieces (8-9 down by ply 80) while every
//! change at play time that worked inside its tree search (more time, the mirror, the
//! hand-made evaluation at the leaves) left the score where it was. If alpha-beta flags the
//! moves after which pieces are lost, and rarely flags others, a check of the chosen move at
//! the root is a lever; if the losses come from moves it cannot tell from others, it is not.
//! Session 48 found the second: at depth 4, 45.5% of the two-piece losses in lost games came
//! after moves alpha-beta would have played itself, and its worst scores went to the races of
//! won games (README, "Alpha-beta's own search as a check of the agent's moves").

use epaminondas::game::{Color, GameRecord, Position, Status};
use epaminondas::players::alphabeta::AlphaBetaPlayer;
use epaminondas::players::heuristic::VALUE_SCALE;
use epaminondas::players::{Limit, Player};
use epaminondas::replay::outcome_for;
use rayon::prelude::*;

/// One of the agent's moves.
struct Checked {
    /// Whether the agent won (Some(true)), lost (Some(false)) or drew its game.
    won: Option<bool>,
    ply: usize,
    /// Alpha-beta's best score less its score for the agent's move, in evaluation units.
    drop: f32,
    /// The agent's piece lead HORIZON plies after its move (or at the game's end) less its lead
    /// before it.
    swing: i32,
}

fn lead(position: &Position, color: Color) -> i32 {
    position.pieces(color).count() as i32 - position.pieces(color.opponent()).count() as i32
}

/// A value in (-1, 1) back to the evaluation's units; decided results at ±10 pieces.
fn to_score(value: f32) -> f32 {
    (value.clamp(-0.9999, 0.9999).atanh() * VALUE_SCALE).clamp(-1000.0, 1000.0)
}

/// The score of `position` for its side to move, by alpha-beta at `depth`.
fn searched(player: &mut AlphaBetaPlayer, position: &Position, depth: u32) -> f32 {
    match position.status() {
        Status::Won { winner, .. } => return if winner == position.side_to_move() { 1000.0 } else { -1000.0 },
        Status::Draw => return 0.0,
        Status::Ongoing => {}
    }
    if !position.has_legal_move() {
        return -1000.0;
    }
    let decision = player.choose(position, Limit { nodes: None, depth: Some(depth), time: None });
    to_score(decision.value.unwrap_or(0.0))
}

fn check_game(record: &GameRecord, round: u64, depth: u32, horizon: usize) -> Vec<Checked> {
    let white_is_agent = record.white.starts_with("net:");
    let agent = if white_is_agent { Color::White } else { Color::Black };
    let won = match outcome_for(record.result, agent) {
        1 => Some(true),
        -1 => Some(false),
        _ => None,
    };
    let positions = record.positions();
    let mut player = AlphaBetaPlayer::new(Limit { nodes: None, depth: Some(depth), time: None }, round);
    player.new_game(round);
    let mut checked = Vec::new();
    for (ply, pair) in positions.windows(2).enumerate() {
        let (position, after) = (&pair[0], &pair[1]);
        if position.side_to_move() != agent {
            continue;
        }
        let best = searched(&mut player, position, depth);
        let chosen = -searched(&mut player, after, depth - 1);
        let later = &positions[(ply + horizon).min(positions.len() - 1)];
        checked.push(Checked { won, ply, drop: (best - chosen).max(0.0), swing: lead(later, agent) - lead(position, agent) });
    }
    checked
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: blunder_check DEPTH HORIZON RECORDS...";
    let depth: u32 = args.next().ok_or(usage)?.parse()?;
    let horizon: usize = args.next().ok_or(usage)?.parse()?;
    let mut games = Vec::new();
    for path in args {
        for record in GameRecord::parse_all(&std::fs::read_to_string(&path)?)? {
            let round: u64 = record.tag("Round").and_then(|r| r.parse().ok()).unwrap_or(0);
            games.push((record, round));
        }
    }
    let started = std::time::Instant::now();
    let checked: Vec<Checked> = games.par_iter().flat_map_iter(|(record, round)| check_game(record, *round, depth, horizon)).collect();
    eprintln!("{} games, {} agent moves, {:.0} s", games.len(), checked.len(), started.elapsed().as_secs_f64());

    println!("drop at depth {depth} | moves (won / lost games) | mean swing over {horizon} plies | share with swing <= -2 | share of all swings <= -2 in lost games");
    let bands = [(0.0, 1.0), (1.0, 50.0), (50.0, 100.0), (100.0, 200.0), (200.0, 400.0), (400.0, f32::INFINITY)];
    let big_losses_lost = checked.iter().filter(|c| c.won == Some(false) && c.swing <= -2).count().max(1);
    for (low, high) in bands {
        let band: Vec<&Checked> = checked.iter().filter(|c| c.drop >= low && c.drop < high).collect();
        if band.is_empty() {
            continue;
        }
        let won = band.iter().filter(|c| c.won == Some(true)).count();
        let lost = band.iter().filter(|c| c.won == Some(false)).count();
        let mean_swing = band.iter().map(|c| c.swing as f64).sum::<f64>() / band.len() as f64;
        let big = band.iter().filter(|c| c.swing <= -2).count();
        let big_lost = band.iter().filter(|c| c.won == Some(false) && c.swing <= -2).count();
        println!(
            "[{low}, {high}) | {} ({won} / {lost}) | {mean_swing:+.2} | {:.1}% | {:.1}%",
            band.len(),
            100.0 * big as f64 / band.len() as f64,
            100.0 * big_lost as f64 / big_losses_lost as f64
        );
    }
    for stretch in [(0, 40), (40, 80), (80, usize::MAX)] {
        let per_game = |won: bool| {
            let moves: Vec<&Checked> = checked.iter().filter(|c| c.won == Some(won) && c.ply >= stretch.0 && c.ply < stretch.1).collect();
            let flagged = moves.iter().filter(|c| c.drop >= 100.0).count();
            (moves.len(), flagged)
        };
        let (won_moves, won_flagged) = per_game(true);
        let (lost_moves, lost_flagged) = per_game(false);
        println!(
            "plies {:?}: drop >= 100 in {:.1}% of the won games' moves ({won_flagged}/{won_moves}), {:.1}% of the lost games' ({lost_flagged}/{lost_moves})",
            stretch,
            100.0 * won_flagged as f64 / won_moves.max(1) as f64,
            100.0 * lost_flagged as f64 / lost_moves.max(1) as f64
        );
    }
    Ok(())
}
