//! Reviewing a recorded game: a blunder that hands over a win in one must be marked, with a safe
//! move preferred, by the library and by `epaminondas review`.

mod common;

use common::{forces_win, hands_over_win};
use epaminondas::game::{Color, GameRecord, Position, Status};
use epaminondas::nn::DeviceChoice;
use epaminondas::players::{Limit, PlayerSpec};
use epaminondas::review::{review_game, ReviewError};
use std::process::Command;

/// White's g1-h1-i1 line guards row 1 against Black's h2; most moves of it open a gap that h2
/// steps through. White's a6 can wander safely. (The position of tests/search.rs.)
const GUARDED: &str = "14/14/14/14/14/14/w13/14/14/14/7b6/6www5 w";

/// A game from `GUARDED`: White opens a gap, Black steps through it, White plays on, lost.
fn blunder_game() -> GameRecord {
    let start: Position = GUARDED.parse().unwrap();
    let blunder = *start
        .legal_moves()
        .iter()
        .find(|&&mv| hands_over_win(&start, mv))
        .expect("the position offers a blunder");
    let after = start.play_unchecked(blunder);
    let step = *after.legal_moves().iter().find(|&&mv| forces_win(&after, mv, 1)).unwrap();
    let last = after.play_unchecked(step);
    let moves = vec![blunder, step, last.legal_moves()[0]];
    let record = GameRecord::new("white", "black", start, moves);
    assert!(
        matches!(record.final_position().status(), Status::Won { winner: Color::Black, .. }),
        "{record}"
    );
    record
}

#[test]
fn a_move_that_hands_over_a_win_is_marked_and_a_safe_one_preferred() {
    let record = blunder_game();
    let spec: PlayerSpec = "alphabeta:depth=3".parse().unwrap();
    let mut player = spec.build(DeviceChoice::Cpu, 1).unwrap();
    let mut seen = Vec::new();
    let reviewed = review_game(&record, player.as_mut(), Limit::default(), &mut |done, total| {
        seen.push((done, total))
    })
    .unwrap();
    assert_eq!(reviewed.len(), record.moves.len());
    assert_eq!(
        seen.last(),
        Some(&(record.moves.len() + 1, record.moves.len() + 1)),
        "every position is searched once"
    );
    let blunder = &reviewed[0];
    assert_eq!(blunder.played, record.moves[0]);
    assert!(blunder.given_away() > 0.4, "the blunder gave away {}", blunder.given_away());
    assert_eq!(blunder.after, -1.0, "after it the reviewer sees the loss");
    assert!(
        !hands_over_win(&record.start, blunder.preferred),
        "the reviewer prefers a safe move, not {}",
        blunder.preferred
    );
    // Black's winning step gives nothing away, and the last move ends the game as a win.
    assert!(reviewed[1].given_away() <= 0.0);
    let last = reviewed.last().unwrap();
    assert_eq!(last.after, if last.mover == Color::Black { 1.0 } else { -1.0 });
}

#[test]
fn a_player_without_an_evaluation_cannot_review() {
    let mut player = "random".parse::<PlayerSpec>().unwrap().build(DeviceChoice::Cpu, 1).unwrap();
    let result = review_game(&blunder_game(), player.as_mut(), Limit::default(), &mut |_, _| {});
    assert_eq!(result, Err(ReviewError::NoEvaluation { player: "random".into() }));
}

#[test]
fn the_review_command_marks_the_blunder_and_writes_csv() {
    let dir = tempfile::tempdir().unwrap();
    let records = dir.path().join("games.txt");
    let record = blunder_game();
    std::fs::write(&records, format!("{record}\n\n{record}\n")).unwrap();
    let csv = dir.path().join("review.csv");
    let binary = env!("CARGO_BIN_EXE_epaminondas");
    let output = Command::new(binary)
        .arg("review")
        .arg(&records)
        .args(["--game", "2", "--player", "alphabeta:depth=3", "--csv"])
        .arg(&csv)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    let blunder = record.start.notation(record.moves[0]);
    let first = stdout
        .lines()
        .find(|line| line.trim_start().starts_with("1 "))
        .unwrap_or_else(|| panic!("no ply 1 in {stdout}"));
    assert!(first.contains(&blunder) && first.trim_end().ends_with("??"), "{first}");
    assert!(stdout.starts_with("game 2: white (White) - black (Black), 0-1"), "{stdout}");
    let table = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(
        table.lines().next(),
        Some("game,ply,mover,played,preferred,win_before,win_after,given_away")
    );
    assert_eq!(table.lines().count(), record.moves.len() + 1);
    // A game number the file does not hold is refused by name, as is a file of no records.
    let output = Command::new(binary)
        .arg("review")
        .arg(&records)
        .args(["--game", "3", "--player", "alphabeta"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("--game 3: "),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // A table into a folder that is not there: said before any game is reviewed.
    let output = Command::new(binary)
        .arg("review")
        .arg(&records)
        .args(["--game", "2", "--player", "alphabeta:depth=3", "--csv"])
        .arg(dir.path().join("nowhere/review.csv"))
        .output()
        .unwrap();
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success() && error.contains("there is no folder"), "{error}");
    assert!(output.stdout.is_empty(), "nothing was reviewed");
    // A table onto a file that exists (here the records themselves) is refused, the file kept.
    let before = std::fs::read_to_string(&records).unwrap();
    let output = Command::new(binary)
        .arg("review")
        .arg(&records)
        .args(["--game", "2", "--player", "alphabeta:depth=3", "--csv"])
        .arg(&records)
        .output()
        .unwrap();
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success() && error.contains("the file exists"), "{error}");
    assert!(output.stdout.is_empty(), "nothing was reviewed");
    assert_eq!(std::fs::read_to_string(&records).unwrap(), before);
    std::fs::write(&records, "[White \"a\"]\n1. q9-q10 *\n").unwrap();
    let output = Command::new(binary)
        .arg("review")
        .arg(&records)
        .args(["--player", "alphabeta"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("games.txt"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
