//! How a match went in pieces: the first player's piece lead (its pieces minus its
//! opponent's) at fixed plies of its won and lost games, and how long those games were.
//! `cargo run --release --example material -- RECORDS [PLIES...]` (default plies 20 40 60 80
//! 100; a game shorter than a ply counts with its final position there).
//!
//! Written to see how the shipped agent loses to mcts-rollout, whose playouts end in an
//! evaluation that counts pieces: whether it is outplayed in races to the far row or ground
//! down in pieces first.

use epaminondas::arena::{a_is_white, a_score};
use epaminondas::game::{Color, GameRecord};

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: material RECORDS [PLIES...]")?;
    let mut plies: Vec<usize> = args.map(|a| a.parse()).collect::<Result<_, _>>()?;
    if plies.is_empty() {
        plies = vec![20, 40, 60, 80, 100];
    }
    let records = GameRecord::parse_all(&std::fs::read_to_string(&path)?)?;
    // Per outcome for the first player (won, lost): its leads at each ply, and game lengths.
    let mut leads: [Vec<Vec<f64>>; 2] = [vec![Vec::new(); plies.len()], vec![Vec::new(); plies.len()]];
    let mut lengths: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut first_player = None;
    for record in &records {
        let round: usize = record.tag("Round").and_then(|r| r.parse().ok()).filter(|&r| r >= 1).ok_or("a record without a Round tag: not a match record")?;
        let a_is_white = a_is_white(round - 1);
        let (color, name) = if a_is_white { (Color::White, &record.white) } else { (Color::Black, &record.black) };
        first_player.get_or_insert_with(|| name.clone());
        let outcome = match a_score(record, a_is_white) {
            s if s > 0.75 => 0,
            s if s < 0.25 => 1,
            _ => continue,
        };
        let positions = record.positions();
        for (i, &ply) in plies.iter().enumerate() {
            let position = &positions[ply.min(positions.len() - 1)];
            let lead = position.pieces(color).count() as f64 - position.pieces(color.opponent()).count() as f64;
            leads[outcome][i].push(lead);
        }
        lengths[outcome].push(record.moves.len() as f64);
    }
    println!("{}: {} games, first player {}", path, records.len(), first_player.unwrap_or_default());
    for (outcome, name) in ["won", "lost"].iter().enumerate() {
        let medians: Vec<String> = leads[outcome].iter_mut().map(|l| format!("{:+}", median(l))).collect();
        let games = lengths[outcome].len();
        println!("  {games} {name}: median length {} plies; median piece lead after ply {:?}: {}", median(&mut lengths[outcome]), plies, medians.join(" "));
    }
    Ok(())
}
