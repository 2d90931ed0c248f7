//! Perft counts from `tests/data/perft.txt` (its header describes the format), checked twice:
//! by the bitboard generator and, where the tree is small (and for the stones variant to depth
//! 3 in any case), by a brute-force perft that shares nothing with it but `Position::check`.

mod common;

use common::brute_force_moves;
use epaminondas::game::{divide, perft, Position, Rules, SymmetryRule};

/// Trees up to this many leaves are also counted the slow way (depth 2 always is).
const BRUTE_FORCE_LEAVES: u64 = 100_000;

struct Case {
    line: usize,
    name: String,
    position: Position,
    counts: Vec<(u32, u64)>,
}

fn cases() -> Vec<Case> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/perft.txt");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut cases = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let raw = raw.trim();
        if raw.is_empty() || raw.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = raw.split('|').map(str::trim).collect();
        let [name, position, options, counts] = fields[..] else {
            panic!("perft.txt line {line}: expected 4 |-separated fields, found {}", fields.len());
        };
        let (symmetry, stones) = match options.split_whitespace().collect::<Vec<_>>()[..] {
            [symmetry] => (symmetry, false),
            [symmetry, "stones"] => (symmetry, true),
            _ => panic!(
                "perft.txt line {line}: rule options {options:?} are not `<symmetry> [stones]`"
            ),
        };
        let symmetry = SymmetryRule::from_name(symmetry)
            .unwrap_or_else(|| panic!("perft.txt line {line}: unknown symmetry rule {symmetry:?}"));
        let position = Position::parse(position, Rules { symmetry, stones, ..Rules::default() })
            .unwrap_or_else(|e| panic!("perft.txt line {line}: {e}"));
        let counts = counts
            .split_whitespace()
            .map(|pair| {
                let parsed = pair
                    .split_once(':')
                    .and_then(|(d, c)| Some((d.parse().ok()?, c.parse().ok()?)));
                parsed
                    .unwrap_or_else(|| panic!("perft.txt line {line}: {pair:?} is not depth:count"))
            })
            .collect();
        cases.push(Case { line, name: name.to_string(), position, counts });
    }
    cases
}

/// Perft with the square-by-square checker as the move generator and `play` (checked) to move.
fn brute_force_perft(position: &Position, depth: u32) -> u64 {
    let moves = brute_force_moves(position);
    match depth {
        0 => 1,
        1 => moves.len() as u64,
        _ => moves
            .iter()
            .map(|mv| brute_force_perft(&position.play(*mv).expect("checked move"), depth - 1))
            .sum(),
    }
}

#[test]
fn data_file_is_well_formed() {
    let cases = cases();
    assert!(cases.len() >= 20, "only {} cases", cases.len());
    assert!(cases.iter().any(|c| c.name == "start" && c.counts.contains(&(3, 1_787_292))));
    // The stones variant from its start (84 x 83 x 82 placements) and after its placements.
    assert!(cases.iter().any(|c| c.name == "stones-start"
        && c.position == Position::start(stones(Rules::default())).unwrap()
        && c.counts.contains(&(3, 571_704))));
    assert!(cases.iter().any(|c| c.name == "stones-placed"
        && c.position.stones().count() == 3
        && c.counts.len() >= 3));
    for case in &cases {
        assert!(!case.counts.is_empty(), "line {}: no counts", case.line);
        // Text round trip: the file's positions are what the test reads them as.
        let text = case.position.to_string();
        assert_eq!(
            Position::parse(&text, *case.position.rules()).unwrap(),
            case.position,
            "line {}",
            case.line
        );
    }
}

#[test]
fn generator_matches_the_data_file() {
    for case in cases() {
        for &(depth, expected) in &case.counts {
            assert_eq!(
                perft(&case.position, depth),
                expected,
                "{} (line {}) depth {depth}",
                case.name,
                case.line
            );
        }
        // divide splits the deepest count by first move without losing any.
        let &(depth, expected) = case.counts.iter().max().expect("counts");
        if expected <= BRUTE_FORCE_LEAVES * 10 {
            let split: u64 = divide(&case.position, depth).iter().map(|(_, n)| n).sum();
            assert_eq!(split, expected, "{} (line {}) divide {depth}", case.name, case.line);
        }
    }
}

#[test]
fn brute_force_matches_the_data_file() {
    let mut checked = 0;
    for case in cases() {
        for &(depth, expected) in &case.counts {
            if depth <= 2 || expected <= BRUTE_FORCE_LEAVES {
                assert_eq!(
                    brute_force_perft(&case.position, depth),
                    expected,
                    "{} (line {}) depth {depth}",
                    case.name,
                    case.line
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 50, "only {checked} counts brute-forced");
}

fn stones(rules: Rules) -> Rules {
    Rules { stones: true, ..rules }
}

/// The stones variant's counts to depth 3 by brute force, even past the size limit above: from
/// the start (three placements), part-way (placements then moves) and after the placements.
#[test]
fn brute_force_matches_the_stones_counts_to_depth_3() {
    let mut checked = 0;
    for case in cases().into_iter().filter(|c| c.position.rules().stones) {
        for &(depth, expected) in case.counts.iter().filter(|(d, _)| *d <= 3) {
            assert_eq!(
                brute_force_perft(&case.position, depth),
                expected,
                "{} (line {}) depth {depth}",
                case.name,
                case.line
            );
            checked += 1;
        }
    }
    assert!(checked >= 15, "only {checked} stones counts brute-forced");
}

/// The start positions of the stones variant play out as the data file says: Black places at
/// ply 0, White at ply 1, Black at ply 2, then White moves.
#[test]
fn stones_start_reaches_the_data_file_positions() {
    let mut position = Position::start(stones(Rules::default())).unwrap();
    let by_name = |name: &str| cases().into_iter().find(|c| c.name == name).unwrap().position;
    assert_eq!(position, by_name("stones-start"));
    for (text, expected) in
        [("@g9", Some("stones-after-g9")), ("@i4", None), ("@d4", Some("stones-placed"))]
    {
        position = position.play(position.parse_move(text).unwrap()).unwrap();
        if let Some(name) = expected {
            assert_eq!(position, by_name(name), "after {text}");
        }
    }
    assert!(!position.in_placement());
    assert_eq!(position.side_to_move(), epaminondas::game::Color::White);
}
