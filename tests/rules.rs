//! The rules against hand-checked positions from the rules sources.

mod common;

use common::sq;
use epaminondas::game::*;

fn pos(text: &str) -> Position {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn start_position_text_and_counts() {
    let start = Position::standard();
    assert_eq!(
        start.to_string(),
        "bbbbbbbbbbbbbb/bbbbbbbbbbbbbb/14/14/14/14/14/14/14/14/wwwwwwwwwwwwww/wwwwwwwwwwwwww w"
    );
    assert_eq!(start.pieces(Color::White).count(), 28);
    assert_eq!(start.pieces(Color::Black).count(), 28);
    assert_eq!(start.legal_moves().len(), 114);
    assert_eq!(start.status(), Status::Ongoing);
}

/// The opening of the rules page with examples (003), written in its tail,head-dest form.
#[test]
fn opening_from_the_rules_page() {
    let mut p = Position::standard();
    let mut abbott = Vec::new();
    for text in ["f1,g2-h3", "e12,f11h9", "h1,h3-h6"] {
        let mv = p.parse_move(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        abbott.push(p.notation(mv));
        p = p.play_unchecked(mv);
    }
    // Abbott's notation names the tail's start and end squares.
    assert_eq!(abbott, ["f1-g2", "e12-g10", "h1-h4"]);
    assert_eq!(p.to_string(), "bbbb1bbbbbbbbb/bbbbb1bbbbbbbb/6b7/7b6/14/14/7w6/7w6/7w6/14/wwwwwww1wwwwww/wwwww1w1wwwwww b 3");
    // The same moves in Abbott's notation replay to the same position.
    let mut q = Position::standard();
    for text in ["f1-g2", "e12-g10", "h1-h4"] {
        q = q.play(q.parse_move(text).unwrap()).unwrap();
    }
    assert_eq!(p, q);
}

/// Figure 3 of the Abstract Games article: a phalanx of four moves three squares to take a lone
/// piece (the three pieces beyond the gap are not part of its line), then takes those three.
#[test]
fn figure_three_captures() {
    let p = pos("14/14/14/14/14/14/14/14/14/14/wwww2b1bbb3/14 w");
    let take_one = p.parse_move("a2xd2").unwrap();
    assert_eq!(p.check(take_one), Ok(MoveEffect { pieces: 4, captured: 1 }));
    let p = p.play_unchecked(take_one);
    assert_eq!(p.to_string(), "14/14/14/14/14/14/14/14/14/14/3wwww1bbb3/14 b 1");
    let p = p.with_side_to_move(Color::White, 2);
    let take_three = p.parse_move("d2-f2").unwrap(); // `-` is accepted for a capture too
    assert_eq!(p.check(take_three), Ok(MoveEffect { pieces: 4, captured: 3 }));
    assert_eq!(p.notation(take_three), "d2xf2");
    let p = p.play_unchecked(take_three);
    assert_eq!(p.to_string(), "14/14/14/14/14/14/14/14/14/14/5wwww5/14 b 3");
    assert_eq!(p.pieces(Color::Black).count(), 0);
    // Black has no pieces, so no move: White has won.
    assert_eq!(p.status(), Status::Won { winner: Color::White, reason: WinReason::NoMoves });
}

/// The black phalanx of four on the h-file taking the white phalanx of three (003).
#[test]
fn black_phalanx_of_four_captures_three() {
    let p = pos("7b6/7b6/7b6/7b6/14/14/7w6/7w6/7w6/14/14/w13 b");
    let mv = p.parse_move("h12,h9-h6").unwrap();
    assert_eq!(mv, p.parse_move("h12xh9").unwrap());
    assert_eq!(p.check(mv), Ok(MoveEffect { pieces: 4, captured: 3 }));
    let after = p.play_unchecked(mv);
    assert_eq!(after.to_string(), "14/14/14/7b6/7b6/7b6/7b6/14/14/14/14/w13 w 1");
    // With four white pieces in the line the same move is illegal.
    let p4 = pos("7b6/7b6/7b6/7b6/14/14/7w6/7w6/7w6/7w6/14/w13 b");
    let err = p4.parse_move("h12xh9").unwrap_err();
    assert!(
        matches!(
            err,
            MoveError::Illegal {
                reason: IllegalMove::EnemyLineTooLong { enemy: 4, pieces: 4, .. },
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn illegal_moves_say_why() {
    let p = pos("14/14/14/14/14/14/14/14/3b10/14/wb1www8/wwbb10 w");
    let why = |text: &str| match p.parse_move(text) {
        Err(MoveError::Illegal { reason, .. }) => reason,
        other => panic!("{text}: expected an illegal move, got {other:?}"),
    };
    // b2 is black.
    assert_eq!(why("b2-b3"), IllegalMove::NotYourPiece { square: sq("b2"), side: Color::White });
    // a1-a2 is a line of two going north; distance 3 is too far.
    assert_eq!(why("a1-a4"), IllegalMove::TooFar { pieces: 2, distance: 3 });
    // a1-b1 eastward meets the black pair c1-d1: two do not outnumber two.
    assert_eq!(
        why("a1-b1"),
        IllegalMove::EnemyLineTooLong { square: sq("c1"), enemy: 2, pieces: 2 }
    );
    // d2,e2,f2 moving west from the tail f2: the head d2 crosses c2 and takes b2 (one piece; a2 is
    // white, so the black line westward is just b2).
    assert_eq!(
        p.check(p.parse_move("f2xd2").unwrap()).unwrap(),
        MoveEffect { pieces: 3, captured: 1 }
    );
    // A single piece cannot capture.
    let single = pos("14/14/14/14/14/14/14/14/14/14/wb12/14 w");
    assert!(matches!(
        single.parse_move("a2-b2"),
        Err(MoveError::Illegal {
            reason: IllegalMove::EnemyLineTooLong { enemy: 1, pieces: 1, .. },
            ..
        })
    ));
    // A phalanx cannot pass an enemy piece even when it could capture one further on.
    let pass = pos("14/14/14/14/14/14/14/14/14/14/www1b9/14 w");
    assert_eq!(
        pass.check(Move::new(sq("a2"), Dir::East, 2)),
        Ok(MoveEffect { pieces: 3, captured: 1 })
    );
    let blocked = pos("14/14/14/14/14/14/14/14/14/14/www1b1b7/14 w");
    assert_eq!(
        blocked.check(Move::new(sq("a2"), Dir::East, 2)),
        Ok(MoveEffect { pieces: 3, captured: 1 })
    );
    let behind = pos("14/14/14/14/14/14/14/14/14/14/wwwb1b8/14 w");
    assert_eq!(
        behind.check(Move::new(sq("a2"), Dir::East, 3)),
        Err(IllegalMove::BlockedByEnemy { square: sq("d2") })
    );
    // Off the board, and not a line.
    assert_eq!(p.check(Move::new(sq("a1"), Dir::West, 1)), Err(IllegalMove::RunsOffBoard));
    assert!(matches!(p.parse_move("a1-b3"), Err(MoveError::NotALine { .. })));
    assert!(matches!(p.parse_move("a1,a3-a5"), Err(MoveError::NotTheFront { .. })));
    assert!(matches!(p.parse_move("z1-a2"), Err(MoveError::Syntax { .. })));
}

/// A split: the front part of a longer phalanx moves alone, no further than its own length.
#[test]
fn split_phalanx_moves_its_own_length() {
    let p = pos("14/14/14/14/14/14/14/14/14/14/14/wwww10 w");
    // b1,c1,d1 split off a1-d1 eastward: three pieces, up to three squares.
    for d in 1..=3 {
        assert!(p.is_legal(Move::new(sq("b1"), Dir::East, d)));
    }
    assert_eq!(
        p.check(Move::new(sq("b1"), Dir::East, 4)),
        Err(IllegalMove::TooFar { pieces: 3, distance: 4 })
    );
    let after = p.play(Move::new(sq("c1"), Dir::East, 2)).unwrap();
    assert_eq!(after.to_string(), "14/14/14/14/14/14/14/14/14/14/14/ww2ww8 b 1");
}

/// Entering the far row wins only if the opponent neither captures nor answers on the other
/// back row before the entering side's next turn begins.
#[test]
fn win_is_checked_at_the_start_of_a_turn() {
    // White a11 can step onto a12; Black has a lone piece far away.
    let p = pos("14/w13/14/14/14/14/14/14/7b6/14/14/14 w");
    let p = p.play(p.parse_move("a11-a12").unwrap()).unwrap();
    assert_eq!(p.status(), Status::Ongoing, "Black still has a turn to answer");
    let p = p.play(p.parse_move("h4-h3").unwrap()).unwrap();
    assert_eq!(p.status(), Status::Won { winner: Color::White, reason: WinReason::BackRow });
    assert!(p.legal_moves().is_empty(), "a finished game has no moves");
    assert_eq!(p.check(Move::new(sq("a12"), Dir::South, 1)), Err(IllegalMove::GameOver));

    // Black can capture the intruder: a12 white, black b12,c12 can move west to take it.
    let p = pos("wbb11/14/14/14/14/14/14/14/14/14/14/w13 b");
    let take = p.parse_move("c12xb12").unwrap();
    let p = p.play(take).unwrap();
    assert_eq!(p.far_row_count(Color::White), 0);
    assert_eq!(p.status(), Status::Ongoing);

    // Or answer on White's back row: 1 against 1 is no win for White.
    let p = pos("w13/14/14/14/14/14/14/14/14/14/b1b11/14 b");
    // (With a lone black a2, a2-a1 would mirror White's a12 exactly: the rule forbids it.)
    let lone = pos("w13/14/14/14/14/14/14/14/14/14/b13/14 b");
    assert_eq!(lone.check(Move::new(sq("a2"), Dir::South, 1)), Err(IllegalMove::Symmetry));
    let p = p.play(p.parse_move("c2-c1").unwrap()).unwrap();
    assert_eq!(p.status(), Status::Ongoing);
    // ... and then Black, with one more on row 1, wins at the start of its turn if White cannot
    // add to row 12 or remove a black piece from row 1.
    let p = pos("w13/14/14/14/14/14/14/14/14/14/bb12/b13 b");
    let p = p.play(p.parse_move("b2-b1").unwrap()).unwrap();
    assert_eq!(p.far_row_count(Color::Black), 2);
    let p = p.play(p.parse_move("a12-b12").unwrap()).unwrap();
    assert_eq!(p.status(), Status::Won { winner: Color::Black, reason: WinReason::BackRow });
}

/// The anti-copycat rule in each reading.
#[test]
fn symmetry_rule_readings() {
    // After a11-a12 White has a12, b2 and Black a1, b11: the mirror across the midline.
    let mirror_setup = "14/wb12/14/14/14/14/14/14/14/14/1w12/b13 w";
    // After a11-a12 White has a12, b2 and Black n1, m11: the 180-degree rotation.
    let rotation_setup = "14/w11b1/14/14/14/14/14/14/14/14/1w12/13b w";
    let entry = |setup: &str, rule: SymmetryRule| {
        let p = Position::parse(setup, Rules { symmetry: rule, ..Rules::default() }).unwrap();
        (p.check(Move::new(sq("a11"), Dir::North, 1)), p.legal_moves().len(), p.count_legal_moves())
    };
    let forbidden = Err(IllegalMove::Symmetry);
    assert_eq!(entry(mirror_setup, SymmetryRule::Mirror).0, forbidden);
    assert_eq!(entry(mirror_setup, SymmetryRule::Both).0, forbidden);
    assert!(entry(mirror_setup, SymmetryRule::Rotation).0.is_ok());
    assert!(entry(mirror_setup, SymmetryRule::Off).0.is_ok());
    assert_eq!(entry(rotation_setup, SymmetryRule::Rotation).0, forbidden);
    assert_eq!(entry(rotation_setup, SymmetryRule::Both).0, forbidden);
    assert!(entry(rotation_setup, SymmetryRule::Mirror).0.is_ok());
    // The generator and the counter leave out exactly that move.
    let (_, off, _) = entry(mirror_setup, SymmetryRule::Off);
    let (_, on, on_count) = entry(mirror_setup, SymmetryRule::Mirror);
    assert_eq!((on, on_count as usize), (off - 1, off - 1));
    // Moving along the far row or away from it is never "onto" it: a symmetric position reached
    // without entering the far row is allowed.
    let p = Position::parse("14/14/14/14/14/14/14/14/14/14/1w12/b13 w", Rules::default()).unwrap();
    let mv = p.parse_move("b2-b3").unwrap();
    assert!(p.is_legal(mv));
}

#[test]
fn ply_cap_draws() {
    let rules = Rules { ply_cap: Some(2), ..Rules::default() };
    let p = Position::start(rules).unwrap();
    let p = p.play_unchecked(p.legal_moves()[0]);
    assert_eq!(p.status(), Status::Ongoing);
    let p = p.play_unchecked(p.legal_moves()[0]);
    assert_eq!(p.status(), Status::Draw);
    assert!(p.legal_moves().is_empty());
}

#[test]
fn other_board_sizes() {
    let rules = Rules { width: 8, height: 8, ..Rules::default() };
    let p = Position::start(rules).unwrap();
    assert_eq!(p.to_string(), "bbbbbbbb/bbbbbbbb/8/8/8/8/wwwwwwww/wwwwwwww w");
    assert_eq!(p.pieces(Color::White).count(), 16);
    assert_eq!(p.to_string().parse::<Position>().unwrap(), p);
    for (w, h) in [(5, 5), (16, 16), (16, 5), (5, 16)] {
        let p = Position::start(Rules { width: w, height: h, ..Rules::default() }).unwrap();
        assert_eq!(
            common::sorted(p.legal_moves()),
            common::sorted(common::brute_force_moves(&p)),
            "{w}x{h}"
        );
    }
    for width in [4, 17] {
        let error = Position::start(Rules { width, height: 8, ..Rules::default() }).err();
        assert!(
            matches!(error, Some(SetupError::Rules(RulesError::BoardSize { width: w, height: 8 })) if w == width),
            "{width}x8: {error:?}"
        );
    }
}

#[test]
fn position_parse_errors_name_the_problem() {
    let err = |text: &str| text.parse::<Position>().unwrap_err().to_string();
    assert!(err("").contains("empty"));
    assert!(err("14/14/14/14/14/14/14/14/14/14/14/14").contains("side to move"));
    assert!(err("14/14/14/14/14/14/14/14/14/14/14/14 x").contains("w or b"));
    let e = err("14/14/14/bbq/14/14/14/14/14/14/14/14 w");
    assert!(e.contains("row 4") && e.contains("character 3") && e.contains("'q'"), "{e}");
    assert!(err("14/14/14/13/14/14/14/14/14/14/14/14 w").contains("row 4"));
    assert!(err("4/4/4/4/4 w").contains("4x5"));
    assert!(err("14/14/14/14/14/14/14/14/14/14/14/14 w 12 extra").contains("extra"));
}

#[test]
fn records_round_trip_and_replay() {
    let mut p = Position::standard();
    let mut moves = Vec::new();
    for text in ["f1,g2-h3", "e12,f11h9", "h1,h3-h6"] {
        let mv = p.parse_move(text).unwrap();
        moves.push(mv);
        p = p.play_unchecked(mv);
    }
    let record = GameRecord::new("human", "random", Position::standard(), moves.clone())
        .with_tag("Event", "test");
    let text = record.to_string();
    assert!(text.contains("1. f1-g2 e12-g10 2. h1-h4 *"), "{text}");
    let back = GameRecord::parse(&text).unwrap();
    assert_eq!(back, record);
    assert_eq!(back.final_position(), p);
    // Setting a tag again replaces it (a worker's game tagged anew by the learner keeps one).
    let retagged = record.clone().with_tag("Event", "again");
    assert_eq!(retagged.tag("Event"), Some("again"));
    assert_eq!(retagged.to_string().matches("[Event ").count(), 1, "{retagged}");
    // Two records in one file.
    let both = GameRecord::parse_all(&format!("{text}\n{text}")).unwrap();
    assert_eq!(both.len(), 2);
    // A wrong result is caught by the replay.
    let lying = text
        .replace("[Result \"*\"]", "[Result \"1-0\"]")
        .replace(" *", " 1-0")
        .replace("unfinished", "back-row");
    assert!(
        matches!(GameRecord::parse(&lying), Err(RecordError::ResultMismatch { .. })),
        "{lying}"
    );
    // An illegal move names its number.
    let bad = text.replace("h1-h4", "h1-h5");
    assert!(matches!(GameRecord::parse(&bad), Err(RecordError::Move { number: 3, .. })));
}

#[test]
fn malformed_position_texts_name_the_problem() {
    use epaminondas::game::ParsePositionError as E;
    let err = |text: &str| Position::parse(text, Rules::default()).unwrap_err();
    // Every character before a bad one is ASCII, so the column is the one a person counts.
    assert_eq!(
        err("14/2é11/14/14/14/14/14/14/14/14/14/14 w"),
        E::BadCharacter { row: 2, column: 2, found: 'é' }
    );
    assert_eq!(
        err("14/éé12/14/14/14/14/14/14/14/14/14/14 w").to_string(),
        "row 2 (counting from the top), character 1: unexpected 'é'; expected w, b, s or a digit"
    );
    assert_eq!(
        err("14/13/14/14/14/14/14/14/14/14/14/14 w"),
        E::RaggedRow { row: 2, width: 13, expected: 14 }
    );
    assert_eq!(err("14/14 w"), E::Size { width: 14, height: 2 });
    assert_eq!(err("14/14/14/14/14/14/14/14/14/14/14/14"), E::MissingSide);
    assert_eq!(err("14/14/14/14/14/14/14/14/14/14/14/14 x"), E::BadSide("x".into()));
}

#[test]
fn record_tags_escape_quotes_and_backslashes() {
    // Player names are free text (paths, engine names): quotes, backslashes and a line break
    // must not end the tag or the header.
    let odd = "net:C:\\models\\\"best\" \\";
    let record = GameRecord::new(odd, "two\nlines", Position::standard(), Vec::new());
    let text = record.to_string();
    assert!(text.contains(r#"[White "net:C:\\models\\\"best\" \\"]"#), "{text}");
    assert!(text.contains("[Black \"two lines\"]"), "{text}");
    let back = GameRecord::parse(&text).unwrap();
    assert_eq!((back.white.as_str(), back.black.as_str()), (odd, "two lines"));
    // A backslash that escapes nothing (a record written before escaping) reads as itself.
    let old =
        text.replace(r#"[White "net:C:\\models\\\"best\" \\"]"#, r#"[White "net:C:\models\x"]"#);
    assert_eq!(GameRecord::parse(&old).unwrap().white, r"net:C:\models\x");
    // A carriage return inside a value (found by the fuzz test) reads as the space it is written
    // as, so the record reads back the same.
    let returned =
        GameRecord::parse(&text.replace("[Black \"two lines\"]", "[Black \"two\rlines\"]"))
            .unwrap();
    assert_eq!(returned.black, "two lines");
    assert_eq!(GameRecord::parse(&returned.to_string()).unwrap(), returned);
}

#[test]
fn boards_by_name_or_size() {
    assert_eq!(parse_board("standard"), Ok((14, 12)));
    assert_eq!(parse_board("crossings-board"), Ok((8, 8)));
    assert_eq!(parse_board("10x8"), Ok((10, 8)));
    assert_eq!(parse_board("checkers"), Err(RulesError::UnknownBoard("checkers".into())));
    assert_eq!(parse_board("10x"), Err(RulesError::UnknownBoard("10x".into())));
    assert_eq!(parse_board("4x8"), Err(RulesError::BoardSize { width: 4, height: 8 }));
    // The 8x8 board has 16 pieces a side, as the Crossings family has.
    let crossings = Position::start(Rules { width: 8, height: 8, ..Rules::default() }).unwrap();
    assert_eq!(
        (crossings.pieces(Color::White).count(), crossings.pieces(Color::Black).count()),
        (16, 16)
    );
}
