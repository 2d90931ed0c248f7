//! Property tests that throw junk at every entry point that takes outside input: position
//! texts, move texts, game records, set-ups and moves. Errors are the expected answer; a panic
//! is a bug. Junk comes two ways: random strings, and valid texts with a few characters
//! replaced, deleted, inserted, duplicated or cut off, which reach much deeper into the parsers
//! than random strings do.

mod common;

use common::random_game;
use epaminondas::game::*;
use proptest::prelude::*;
use proptest::sample::{select, Index};
use std::sync::OnceLock;

/// Starts on several board sizes (the text carries the size), and of the stones variant.
fn starts() -> Vec<Position> {
    let sizes = [
        (14, 12, false),
        (8, 8, false),
        (5, 5, false),
        (16, 16, false),
        (16, 5, false),
        (5, 16, false),
        (14, 12, true),
        (8, 8, true),
    ];
    sizes
        .into_iter()
        .map(|(width, height, stones)| {
            Position::start(Rules { width, height, stones, ..Rules::default() })
                .expect("valid size")
        })
        .collect()
}

/// Positions from random games on every size: the material valid texts are made from.
fn sample_positions() -> &'static [Position] {
    static POSITIONS: OnceLock<Vec<Position>> = OnceLock::new();
    POSITIONS.get_or_init(|| {
        let mut positions = Vec::new();
        for (i, start) in starts().into_iter().enumerate() {
            for (j, position) in random_game(start, i as u64, 120).into_iter().enumerate() {
                if j % 7 == 0 {
                    positions.push(position);
                }
            }
        }
        positions
    })
}

/// Move texts in every accepted form, with the position they were written in.
fn sample_moves() -> Vec<(Position, String)> {
    let mut out = Vec::new();
    for position in sample_positions().iter().step_by(3) {
        let (width, height) = (position.rules().width, position.rules().height);
        for mv in position.legal_moves().into_iter().step_by(9) {
            out.push((*position, position.notation(mv)));
            if mv.is_placement() {
                continue; // `@f6` has no other form
            }
            let pieces = position.check(mv).expect("generated").pieces;
            let head =
                mv.from.offset(mv.dir, pieces as i32 - 1, width, height).expect("on the board");
            let head_to =
                head.offset(mv.dir, mv.distance as i32, width, height).expect("on the board");
            out.push((*position, format!("{},{head}-{head_to}", mv.from)));
            out.push((*position, format!("{},{head}{head_to}", mv.from)));
        }
    }
    out
}

/// Records of random games: plain, from a set-up position (Start tag), and capped.
fn sample_records() -> Vec<String> {
    let mut out = Vec::new();
    for (i, start) in starts().into_iter().enumerate() {
        let capped = start.with_rules(start.rules().with_ply_cap(Some(40))).expect("valid cap");
        let set_up = sample_positions()[i * 5 + 3];
        for (k, start) in [start, capped, set_up].into_iter().enumerate() {
            let positions = random_game(start, (i * 3 + k) as u64, 60);
            let moves = positions
                .windows(2)
                .map(|w| {
                    w[0].legal_moves()
                        .into_iter()
                        .find(|mv| w[0].play_unchecked(*mv) == w[1])
                        .expect("a move leads on")
                })
                .collect();
            out.push(
                GameRecord::new("white", "black", start, moves)
                    .with_tag("Event", "fuzz")
                    .to_string(),
            );
        }
    }
    out
}

fn position_texts() -> Vec<String> {
    let mut texts: Vec<String> = sample_positions().iter().map(|p| p.to_string()).collect();
    texts.extend(starts().iter().map(|p| p.to_string()));
    texts
}

/// Characters the formats are made of, plus a few that commonly trip parsers up.
const ALPHABET: &[char] = &[
    'w', 'b', 's', 'x', 'a', 'n', 'p', 'q', 'z', '0', '1', '2', '6', '9', '/', ' ', '-', ',', '.',
    '*', '@', '[', ']', '"', '\n', '\t', 'é', '\u{0}',
];

fn any_char() -> impl Strategy<Value = char> {
    prop_oneof![3 => select(ALPHABET), 1 => any::<char>()]
}

/// One edit of a text, by character position (never splitting a UTF-8 sequence).
#[derive(Clone, Debug)]
enum Edit {
    Replace(Index, char),
    Delete(Index),
    Insert(Index, char),
    Duplicate(Index, Index),
    Truncate(Index),
    Swap(Index, Index),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (any::<Index>(), any_char()).prop_map(|(i, c)| Edit::Replace(i, c)),
        2 => any::<Index>().prop_map(Edit::Delete),
        2 => (any::<Index>(), any_char()).prop_map(|(i, c)| Edit::Insert(i, c)),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(i, j)| Edit::Duplicate(i, j)),
        1 => any::<Index>().prop_map(Edit::Truncate),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(i, j)| Edit::Swap(i, j)),
    ]
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for edit in edits {
        let len = chars.len();
        match edit {
            Edit::Insert(i, c) => chars.insert(i.index(len + 1), *c),
            _ if len == 0 => {}
            Edit::Replace(i, c) => chars[i.index(len)] = *c,
            Edit::Delete(i) => {
                chars.remove(i.index(len));
            }
            Edit::Duplicate(i, j) => {
                let start = i.index(len);
                let end = start + j.index(len - start) + 1;
                let copy: Vec<char> = chars[start..end].to_vec();
                chars.splice(end..end, copy);
            }
            Edit::Truncate(i) => chars.truncate(i.index(len)),
            Edit::Swap(i, j) => chars.swap(i.index(len), j.index(len)),
        }
    }
    chars.into_iter().collect()
}

/// A valid text from `pool` with one to eight edits.
fn mutated(pool: Vec<String>) -> impl Strategy<Value = String> {
    (select(pool), prop::collection::vec(edit(), 1..8))
        .prop_map(|(text, edits)| apply(&text, &edits))
}

/// Random text over the formats' alphabet, or over all of Unicode.
fn junk() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(any_char(), 0..300).prop_map(|c| c.into_iter().collect()),
        any::<String>()
    ]
}

/// Any square index, the off-board ones (columns and rows past the board, up to 255) included.
fn any_move() -> impl Strategy<Value = Move> {
    let distance = prop_oneof![3 => 0u8..18, 1 => any::<u8>()];
    (any::<u8>(), 0usize..8, distance).prop_map(|(from, dir, distance)| {
        Move::new(Square::from_index(from), Dir::from_index(dir), distance)
    })
}

/// Exercises everything a position offers; none of it may panic.
fn exercise(position: &Position) {
    let moves = position.legal_moves();
    assert_eq!(position.count_legal_moves(), moves.len() as u64);
    assert_eq!(position.has_legal_move(), !moves.is_empty());
    let _ = position.status();
    let text = position.to_string();
    assert_eq!(Position::parse(&text, *position.rules()).as_ref(), Ok(position), "{text}");
    if let Some(mv) = moves.first() {
        assert_eq!(position.parse_move(&position.notation(*mv)), Ok(*mv));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn position_parser_never_panics(text in junk()) {
        if let Ok(position) = text.parse::<Position>() {
            exercise(&position);
        }
    }

    #[test]
    fn position_parser_never_panics_on_mutated_positions(text in mutated(position_texts())) {
        if let Ok(position) = text.parse::<Position>() {
            exercise(&position);
        }
    }

    #[test]
    fn position_parser_with_any_options_never_panics(text in mutated(position_texts()), symmetry in select(&SymmetryRule::ALL[..]), cap in any::<Option<u16>>(), stones in any::<bool>()) {
        let options = Rules { symmetry, ply_cap: cap, stones, ..Rules::default() };
        if let Ok(position) = Position::parse(&text, options) {
            exercise(&position);
        }
    }

    #[test]
    fn move_parser_never_panics(text in junk(), width in any::<u8>(), height in any::<u8>()) {
        // The board size is a parameter here, so odd sizes must be safe too.
        if let Ok(parsed) = MoveText::parse(&text, width, height) {
            let again = MoveText::parse(&parsed.to_string(), width, height);
            prop_assert_eq!(again, Ok(parsed));
        }
        let position = sample_positions()[width as usize % sample_positions().len()];
        if let Ok(mv) = position.parse_move(&text) {
            prop_assert!(position.is_legal(mv));
        }
    }

    #[test]
    fn move_parser_never_panics_on_mutated_moves(
        (position, text) in select(sample_moves()),
        edits in prop::collection::vec(edit(), 1..5),
    ) {
        let text = apply(&text, &edits);
        let (width, height) = (position.rules().width, position.rules().height);
        if let Ok(parsed) = MoveText::parse(&text, width, height) {
            // Whatever it names, resolving says legal or why not.
            if let Ok(mv) = parsed.resolve(&position) {
                prop_assert!(position.is_legal(mv));
            }
        }
        if let Ok(mv) = position.parse_move(&text) {
            prop_assert!(position.play(mv).is_ok());
        }
    }

    #[test]
    fn record_parser_never_panics(text in junk()) {
        // Whatever reads is a record that writes back to the same.
        for record in GameRecord::parse_all(&text).into_iter().flatten().chain(GameRecord::parse(&text)) {
            prop_assert_eq!(GameRecord::parse(&record.to_string()), Ok(record));
        }
    }

    #[test]
    fn record_parser_never_panics_on_mutated_records(text in mutated(sample_records())) {
        if let Ok(records) = GameRecord::parse_all(&text) {
            // A record that reads is a legal game: its text reads back the same.
            for record in records {
                let again = GameRecord::parse(&record.to_string());
                prop_assert_eq!(again, Ok(record));
            }
        }
    }

    #[test]
    fn playing_random_moves_never_panics(
        start in select(sample_positions()),
        moves in prop::collection::vec(any_move(), 1..60),
    ) {
        let mut position = start;
        for mv in moves {
            let checked = position.check(mv);
            let _ = position.notation(mv);
            match position.play(mv) {
                Ok(next) => {
                    prop_assert!(checked.is_ok());
                    prop_assert!(position.legal_moves().contains(&mv));
                    position = next;
                }
                Err(error) => {
                    prop_assert_eq!(checked, Err(error));
                    prop_assert!(!position.legal_moves().contains(&mv));
                }
            }
        }
        exercise(&position);
    }

    #[test]
    fn playing_unchecked_moves_never_panics(start in select(sample_positions()), mv in any_move()) {
        // The result of an illegal move is unspecified, but must not be a crash.
        let next = start.play_unchecked(mv);
        let _ = next.legal_moves();
        let _ = next.status();
        let _ = next.to_string();
        let _ = mirror_move(mv, start.rules().width);
    }

    #[test]
    fn setup_never_panics(
        // Half the sizes valid, so that the set-ups below reach the position's own code.
        width in prop_oneof![5u8..=16, any::<u8>()],
        height in prop_oneof![5u8..=16, any::<u8>()],
        symmetry in select(&SymmetryRule::ALL[..]),
        cap in any::<Option<u16>>(),
        white in any::<[u64; 4]>(),
        black in any::<[u64; 4]>(),
        black_to_move in any::<bool>(),
        ply in any::<u16>(),
        stones in any::<Option<[u64; 4]>>(),
    ) {
        let rules = Rules { width, height, symmetry, ply_cap: cap, stones: stones.is_some() };
        let side = if black_to_move { Color::Black } else { Color::White };
        let _ = Position::start(rules);
        // Random limbs overlap and spill off the board; masked to the board and apart, they are
        // a valid set-up on every valid board.
        let masked = rules.validate().ok().map(|()| {
            let board = rules.geometry().board;
            let white = Bitboard(white) & board;
            (white, Bitboard(black) & board & !white)
        });
        if let Some((white, black)) = masked {
            prop_assert!(Position::from_parts(rules, white, black, side, ply).is_ok());
        }
        let raw = (Bitboard(white), Bitboard(black));
        for (white, black) in std::iter::once(raw).chain(masked) {
            if let Ok(position) = Position::from_parts(rules, white, black, side, ply) {
                exercise(&position);
                // Random stones are mostly refused (too many, misplaced); sparse ones pass.
                for bits in stones.into_iter().flat_map(|s| [s, s.map(|l| l & 0x0000_0000_0100_0000)]) {
                    if let Ok(with) = position.with_stones(Bitboard(bits)) {
                        exercise(&with);
                    }
                }
            }
        }
    }
}

/// Found by the properties above with overflow checks on: the mirror of an off-board move
/// underflowed, and a board size past 16 let squares outside the 16x16 layout through.
#[test]
fn regressions_found_by_fuzzing() {
    let off_board = Move::new(Square::from_index(85), Dir::North, 0);
    assert!(Position::start(Rules { width: 5, height: 16, ..Rules::default() })
        .unwrap()
        .check(mirror_move(off_board, 5))
        .is_err());
    assert_eq!(mirror_move(off_board, 0).dir, Dir::North);
    for text in ["q1-q2", "a17-a18", "z99-z98", "a1,a17-a18"] {
        assert!(MoveText::parse(text, 255, 255).is_err(), "{text}");
    }
    assert_eq!(
        MoveText::parse("p16-p15", 255, 255),
        Ok(MoveText::Tail { from: Square::new(15, 15), to: Square::new(15, 14) })
    );
}
