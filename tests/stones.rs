//! The stones variant (Néstor Romeral Andrés) against hand-checked positions: the placement
//! phase, stones as blockers and line ends, the texts (`s` in positions, `@f6` for placements,
//! the `Stones` tag in records) and the typed errors. Perft counts are in tests/perft.rs.

mod common;

use common::sq;
use epaminondas::game::*;

fn stones() -> Rules {
    Rules { stones: true, ..Rules::default() }
}

fn play(position: Position, moves: &str) -> Position {
    moves.split_whitespace().fold(position, |p, text| {
        p.play(p.parse_move(text).unwrap_or_else(|e| panic!("{text}: {e}"))).unwrap()
    })
}

#[test]
fn black_white_black_place_then_white_moves() {
    let start = Position::start(stones()).unwrap();
    assert_eq!(
        start.to_string(),
        "bbbbbbbbbbbbbb/bbbbbbbbbbbbbb/14/14/14/14/14/14/14/14/wwwwwwwwwwwwww/wwwwwwwwwwwwww b"
    );
    assert_eq!(start.side_to_move(), Color::Black);
    assert!(start.in_placement());
    // Every empty square of rows 4..9, nothing else.
    let moves = start.legal_moves();
    assert_eq!(moves.len(), 84);
    assert!(moves.iter().all(|mv| mv.is_placement() && (3..=8).contains(&mv.from.row())));
    let mut sides = Vec::new();
    let mut position = start;
    for text in ["@f6", "@g7", "@h8"] {
        sides.push(position.side_to_move());
        position = play(position, text);
    }
    assert_eq!(sides, [Color::Black, Color::White, Color::Black]);
    assert_eq!(position.side_to_move(), Color::White);
    assert_eq!(position.ply(), 3);
    assert!(!position.in_placement());
    assert_eq!(position.stones().count(), 3);
    assert!(position.legal_moves().iter().all(|mv| !mv.is_placement()));
    assert_eq!(position.to_string(), "bbbbbbbbbbbbbb/bbbbbbbbbbbbbb/14/14/7s6/6s7/5s8/14/14/14/wwwwwwwwwwwwww/wwwwwwwwwwwwww w 3");
    // The standard game is untouched: White first, no placements.
    assert_eq!(Position::standard().side_to_move(), Color::White);
    assert!(!Position::standard().in_placement());
}

#[test]
fn stones_block_like_the_edge() {
    let p = play(Position::start(stones()).unwrap(), "@a4 @c4 @e4");
    // The a-file phalanx may step to a3 only: the stone on a4 is its edge.
    assert!(p.is_legal(Move::new(sq("a1"), Dir::North, 1)));
    assert_eq!(
        p.check(Move::new(sq("a1"), Dir::North, 2)),
        Err(IllegalMove::BlockedByStone { square: sq("a4") })
    );
    assert_eq!(
        p.check(Move::new(sq("c1"), Dir::North, 2)),
        Err(IllegalMove::BlockedByStone { square: sq("c4") })
    );
    // Next to the stones the b-file phalanx still moves two.
    assert!(p.is_legal(Move::new(sq("b1"), Dir::North, 2)));
    // A diagonal into a stone is blocked too: the phalanx b1-c2 reaches d3, not e4.
    assert!(p.is_legal(Move::new(sq("b1"), Dir::NorthEast, 1)));
    assert_eq!(
        p.check(Move::new(sq("b1"), Dir::NorthEast, 2)),
        Err(IllegalMove::BlockedByStone { square: sq("e4") })
    );
}

#[test]
fn a_stone_ends_the_enemy_line() {
    // Black a4, stone a5, black a6 a7: the line from a4 northward is one piece long.
    let p = Position::parse(
        "1bbbbbbb/b7/b7/s6s/bs6/ww6/ww6/w7 w",
        Rules { width: 8, height: 8, ..stones() },
    )
    .unwrap();
    let take = p.parse_move("a2xa3").unwrap();
    assert_eq!(p.check(take), Ok(MoveEffect { pieces: 2, captured: 1 }));
    let next = p.play(take).unwrap();
    assert!(
        next.piece_at(sq("a4")) == Some(Color::White)
            && next.piece_at(sq("a6")) == Some(Color::Black)
    );
    assert_eq!(next.stones(), p.stones(), "stones are never captured");
    // With a black piece on a5 instead of the stone the line a4..a7 is 4 long, too long for 3.
    let q = Position::parse(
        "1bbbbbbb/b7/b7/b5ss/bs6/ww6/ww6/w7 w",
        Rules { width: 8, height: 8, ..stones() },
    )
    .unwrap();
    assert!(matches!(
        q.check(Move::new(sq("a1"), Dir::North, 1)),
        Err(IllegalMove::EnemyLineTooLong { enemy: 4, pieces: 3, .. })
    ));
}

#[test]
fn placements_and_moves_out_of_turn_are_typed_errors() {
    let start = Position::start(stones()).unwrap();
    assert_eq!(
        start.check(Move::place(sq("f3"))),
        Err(IllegalMove::NotAStoneRow { square: sq("f3"), first: 4, last: 9 })
    );
    assert_eq!(
        start.check(Move::place(sq("f10"))),
        Err(IllegalMove::NotAStoneRow { square: sq("f10"), first: 4, last: 9 })
    );
    assert_eq!(
        start.check(Move::new(sq("a2"), Dir::North, 1)),
        Err(IllegalMove::PlaceAStone { placed: 0 })
    );
    let one = play(start, "@f6");
    assert_eq!(
        one.check(Move::place(sq("f6"))),
        Err(IllegalMove::SquareTaken { square: sq("f6") })
    );
    assert_eq!(
        one.parse_move("f1-f2"),
        Err(MoveError::Illegal {
            text: "f1-f2".into(),
            reason: IllegalMove::PlaceAStone { placed: 1 }
        })
    );
    let placed = play(one, "@g7 @h8");
    assert_eq!(placed.check(Move::place(sq("a5"))), Err(IllegalMove::StonesPlaced));
    assert_eq!(Position::standard().check(Move::place(sq("a5"))), Err(IllegalMove::ZeroDistance));
    assert!(Position::standard().parse_move("@a5").is_err());
    // Off the board, and a placement written with another direction.
    assert_eq!(
        start.check(Move::place(Square::new(14, 5))),
        Err(IllegalMove::OffBoard { square: Square::new(14, 5) })
    );
    assert_eq!(start.check(Move::new(sq("a5"), Dir::East, 0)), Err(IllegalMove::ZeroDistance));
    // Messages say what to do.
    assert!(IllegalMove::PlaceAStone { placed: 1 }.to_string().contains("@f6"));
}

#[test]
fn texts_round_trip_and_need_the_rule() {
    let p = play(Position::start(stones()).unwrap(), "@f6 @g7 @h8");
    let text = p.to_string();
    assert_eq!(Position::parse(&text, stones()).unwrap(), p);
    assert_eq!(Position::parse(&text, stones()).unwrap().hash(), p.hash());
    // A text with stones under rules without them is refused, naming the fix.
    let error = Position::parse(&text, Rules::default()).unwrap_err();
    assert_eq!(error, ParsePositionError::Setup(SetupError::StonesWithoutRule));
    assert!(error.to_string().contains("--stones"));
    // Too many stones, a stone outside the stone rows, a stone on a piece's square.
    let four = "bbbbbbbbbbbbbb/bbbbbbbbbbbbbb/14/14/14/ssss10/14/14/14/14/wwwwwwwwwwwwww/wwwwwwwwwwwwww w 3";
    assert_eq!(
        Position::parse(four, stones()),
        Err(ParsePositionError::Setup(SetupError::TooManyStones { count: 4 }))
    );
    let low =
        "bbbbbbbbbbbbbb/bbbbbbbbbbbbbb/14/14/14/14/14/14/14/s13/wwwwwwwwwwwwww/wwwwwwwwwwwwww w 3";
    assert_eq!(
        Position::parse(low, stones()),
        Err(ParsePositionError::Setup(SetupError::MisplacedStone { square: sq("a3") }))
    );
    // The placement notation, by itself and in either spelling of a move text.
    assert_eq!(Move::place(sq("f6")).to_string(), "@f6");
    assert_eq!(MoveText::parse("@f6", 14, 12), Ok(MoveText::Place { square: sq("f6") }));
    assert_eq!(MoveText::parse("@f6", 14, 12).unwrap().to_string(), "@f6");
    assert!(matches!(MoveText::parse("@z6", 14, 12), Err(MoveError::Syntax { .. })));
    assert!(matches!(MoveText::parse("@", 14, 12), Err(MoveError::Syntax { .. })));
}

#[test]
fn rules_show_and_validate_the_option() {
    assert_eq!(stones().to_string(), "14x12 symmetry=mirror ply-cap=none stones");
    assert_eq!(Rules::default().to_string(), "14x12 symmetry=mirror ply-cap=none");
    // Configs and metadata written before the variant read as the standard game.
    let old: Rules =
        serde_json::from_str(r#"{"width":14,"height":12,"symmetry":"mirror","ply_cap":300}"#)
            .unwrap();
    assert!(!old.stones);
    assert_eq!(
        serde_json::to_string(&old).unwrap(),
        r#"{"width":14,"height":12,"symmetry":"mirror","ply_cap":300}"#
    );
    // Stone rows: the empty rows less the row in front of each army; 7 rows leave one.
    assert_eq!(Rules { width: 8, height: 8, ..stones() }.geometry().stone_rows.count(), 16);
    assert!(Rules { width: 9, height: 7, ..stones() }.validate().is_ok());
    assert_eq!(
        Rules { width: 9, height: 6, ..stones() }.validate(),
        Err(RulesError::NoStoneRows { height: 6 })
    );
    assert!(matches!(
        Position::start(Rules { width: 5, height: 5, ..stones() }),
        Err(SetupError::Rules(RulesError::NoStoneRows { height: 5 }))
    ));
}

#[test]
fn the_symmetry_rule_counts_the_stones() {
    // 9x7 under the rotation reading: one stone row (row 4), which the half turn maps onto
    // itself reversed. White's e6-e7 would make the pieces symmetric; the stones decide.
    let rules = Rules { width: 9, height: 7, symmetry: SymmetryRule::Rotation, ..stones() };
    let before = |stones: &str| {
        Position::parse(
            &format!("bbbb1bbbb/bbbbwbbbb/9/{stones}/9/wwww1wwww/wwwwbwwww w 10"),
            rules,
        )
        .unwrap()
    };
    let entry = Move::new(sq("e6"), Dir::North, 1);
    let even = before("s3s3s");
    assert_eq!(
        even.check(entry),
        Err(IllegalMove::Symmetry),
        "stones a4 e4 i4 turn onto themselves"
    );
    assert!(even.play_unchecked(entry).is_symmetric());
    let lopsided = before("ss5s1");
    assert!(
        lopsided.is_legal(entry),
        "a4 b4 h4 turn onto i4 h4 b4: no symmetry, so the entry is legal"
    );
    assert!(!lopsided.play_unchecked(entry).is_symmetric());
    assert_eq!(
        lopsided.legal_moves().len(),
        lopsided
            .with_rules(Rules { symmetry: SymmetryRule::Off, ..rules })
            .unwrap()
            .legal_moves()
            .len()
    );
    // On 12 rows under the mirror reading row 4 maps onto row 9: stones on a4 and a9 keep the
    // start symmetric, a third stone on row 6 (onto row 7) cannot.
    let two = play(Position::start(stones()).unwrap(), "@a4 @a9");
    assert!(two.is_symmetric());
    assert!(!play(two, "@n6").is_symmetric());
}

#[test]
fn records_tag_the_variant_and_read_back() {
    let start = Position::start(Rules { ply_cap: Some(40), ..stones() }).unwrap();
    let mut position = start;
    let mut moves = Vec::new();
    for text in ["@f6", "@g7", "@h8", "a2-a3", "a11-a10"] {
        let mv = position.parse_move(text).unwrap();
        moves.push(mv);
        position = position.play(mv).unwrap();
    }
    let record = GameRecord::new("w", "b", start, moves);
    let text = record.to_string();
    assert!(text.contains("[Stones \"on\"]"), "{text}");
    assert!(!text.contains("[Start "), "the variant's start needs no Start tag: {text}");
    assert!(text.contains("1. ... @f6 2. @g7 @h8 3. a2-a3 a11-a10 *"), "{text}");
    let back = GameRecord::parse(&text).unwrap();
    assert_eq!(back, record);
    assert_eq!(back.to_string(), text);
    // Without the tag the placements are illegal: the standard game starts with White's move.
    let untagged = text.replace("[Stones \"on\"]\n", "");
    assert!(matches!(GameRecord::parse(&untagged), Err(RecordError::Move { number: 1, .. })));
    let bad = text.replace("[Stones \"on\"]", "[Stones \"maybe\"]");
    assert!(matches!(GameRecord::parse(&bad), Err(RecordError::Tag { tag: "Stones", .. })));
    // A standard record has no Stones tag.
    assert!(!GameRecord::new("w", "b", Position::standard(), vec![])
        .to_string()
        .contains("Stones"));
}

#[test]
fn diagrams_draw_stones() {
    use epaminondas::game::diagram::{diagram, Style};
    let p = play(Position::start(stones()).unwrap(), "@f6 @g7 @h8");
    let plain = diagram(&p, Bitboard::EMPTY, Style::Plain);
    let row6 = plain.lines().find(|l| l.trim_start().starts_with("6 ")).unwrap();
    assert_eq!(row6.matches('S').count(), 1, "{plain}");
    assert_eq!(plain.matches('S').count(), 3);
    assert_eq!(diagram(&p, Bitboard::EMPTY, Style::Ansi).matches('◆').count(), 3);
}
