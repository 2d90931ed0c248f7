//! Properties every position must have, checked over thousands of positions: random playouts
//! from the start on several board sizes, random scatters of pieces under every symmetry
//! reading, and positions built one move away from a forbidden symmetric far-row entry (which
//! random play almost never reaches). The hand-checked cases are in `rules.rs`; here the engine
//! is held to itself: the bitboard generator to the square-by-square checker, playing to a
//! fresh set-up, the left-right mirror, and every text format to its parser. The stones variant
//! goes through the same checks (its placements, then its games, and scatters with stones).

mod common;

use common::{brute_force_moves, random_game, random_position, sorted};
use epaminondas::game::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::HashSet;

/// Board sizes beyond the standard 14x12: Crossings' 8x8, the extremes, and lopsided ones.
const SIZES: [(u8, u8); 6] = [(14, 12), (8, 8), (5, 5), (16, 16), (16, 5), (5, 16)];

fn rules(width: u8, height: u8, symmetry: SymmetryRule) -> Rules {
    Rules { width, height, symmetry, ply_cap: None, stones: false }
}

/// The move whose play leads from `before` to `after` (random_game hands back positions only).
fn move_between(before: &Position, after: &Position) -> Move {
    before
        .legal_moves()
        .into_iter()
        .find(|mv| before.play_unchecked(*mv) == *after)
        .unwrap_or_else(|| panic!("no move leads from {before} to {after}"))
}

/// The square `steps` steps from `square` in `dir`, on a board of the position's size.
fn along(position: &Position, square: Square, dir: Dir, steps: u8) -> Square {
    let rules = position.rules();
    square
        .offset(dir, steps as i32, rules.width, rules.height)
        .expect("a legal move stays on the board")
}

/// The start-of-turn result worked out from the rules text, not from `Position::status`.
fn expected_status(position: &Position, has_moves: bool) -> Status {
    let geo = position.geometry();
    let side = position.side_to_move();
    let height = position.rules().height;
    let top = geo.rows[height as usize - 1];
    let bottom = geo.rows[0];
    let (mine, theirs) = match side {
        Color::White => (
            (position.pieces(Color::White) & top).count(),
            (position.pieces(Color::Black) & bottom).count(),
        ),
        Color::Black => (
            (position.pieces(Color::Black) & bottom).count(),
            (position.pieces(Color::White) & top).count(),
        ),
    };
    if mine > theirs {
        Status::Won { winner: side, reason: WinReason::BackRow }
    } else if position.rules().ply_cap.is_some_and(|cap| position.ply() >= cap) {
        Status::Draw
    } else if !has_moves {
        Status::Won { winner: side.opponent(), reason: WinReason::NoMoves }
    } else {
        Status::Ongoing
    }
}

/// Every invariant of one position and of each of its legal moves.
fn check_position(p: &Position) {
    let moves = p.legal_moves();
    let unique: HashSet<Move> = moves.iter().copied().collect();
    assert_eq!(unique.len(), moves.len(), "{p:?}: the generator repeats a move");
    for mv in &moves {
        assert!(p.check(*mv).is_ok(), "{p:?}: generated {mv} fails check: {:?}", p.check(*mv));
    }
    assert_eq!(
        sorted(moves.clone()),
        sorted(brute_force_moves(p)),
        "{p:?}: generator and brute force disagree"
    );
    assert_eq!(p.count_legal_moves(), moves.len() as u64, "{p:?}: count_legal_moves");
    assert_eq!(p.has_legal_move(), !moves.is_empty(), "{p:?}: has_legal_move");

    let status = p.status();
    assert_eq!(status, expected_status(p, !moves.is_empty()), "{p:?}: status");
    assert_eq!(
        status == Status::Ongoing,
        !moves.is_empty(),
        "{p:?}: a finished game has no moves, a live one has some"
    );
    assert_eq!(
        p.is_finished_at_start(),
        matches!(status, Status::Draw | Status::Won { reason: WinReason::BackRow, .. }),
        "{p:?}"
    );

    // Texts: the position with its ply, read back under the same rule options.
    let text = p.to_string();
    let back = Position::parse(&text, *p.rules()).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!(back, *p, "{text}");
    assert_eq!(back.hash(), p.hash(), "{text}");

    // The left-right mirror is a symmetry of every rule, the symmetry rule's readings included.
    let width = p.rules().width;
    let mirror = p.mirrored();
    assert_eq!(mirror.mirrored(), *p, "{p:?}: mirroring twice");
    let mirrored_moves: Vec<Move> = moves.iter().map(|mv| mirror_move(*mv, width)).collect();
    assert_eq!(sorted(mirror.legal_moves()), sorted(mirrored_moves), "{p:?}: mirror of the moves");
    assert_eq!(mirror.status(), status, "{p:?}: mirror status");

    let mover = p.side_to_move();
    let enemy = mover.opponent();
    let hash_of = |q: &Position| {
        Position::from_parts(
            *q.rules(),
            q.pieces(Color::White),
            q.pieces(Color::Black),
            q.side_to_move(),
            q.ply(),
        )
        .and_then(|fresh| fresh.with_stones(q.stones()))
        .expect("a played position is a valid set-up")
        .hash()
    };
    // Placements come first and only: while stones are missing nothing else is legal.
    assert!(
        moves.iter().all(|mv| mv.is_placement() == p.in_placement()),
        "{p:?}: a placement out of phase or a move during placement"
    );
    for &mv in &moves {
        let effect = p.check(mv).expect("checked above");
        let next = p.play(mv).expect("legal");
        assert_eq!(next, p.play_unchecked(mv));
        assert_eq!(next.hash(), hash_of(&next), "{p:?} {mv}: incremental hash");
        assert_eq!(next.side_to_move(), enemy);
        assert_eq!(next.ply(), p.ply() + 1);
        assert_eq!(
            next.mirrored(),
            mirror.play(mirror_move(mv, width)).unwrap(),
            "{p:?} {mv}: play and mirror do not commute"
        );
        if mv.is_placement() {
            // A stone lands on the named square; no piece moves.
            assert_eq!(next.stones(), p.stones() | Bitboard::from_square(mv.from), "{p:?} {mv}");
            assert_eq!(next.occupied(), p.occupied(), "{p:?} {mv}");
            let notation = p.notation(mv);
            assert_eq!(notation, format!("@{}", mv.from));
            assert_eq!(p.parse_move(&notation), Ok(mv), "{p:?}: {notation}");
            continue;
        }
        assert_eq!(next.stones(), p.stones(), "{p:?} {mv}: a stone moved");
        assert!((next.occupied() & p.stones()).is_empty(), "{p:?} {mv}: a piece on a stone");
        // The mover keeps every piece; the enemy loses exactly the captured line.
        assert_eq!(next.pieces(mover).count(), p.pieces(mover).count(), "{p:?} {mv}");
        assert_eq!(
            next.pieces(enemy).count() + effect.captured as u32,
            p.pieces(enemy).count(),
            "{p:?} {mv}"
        );
        assert!(
            (next.pieces(enemy) & !p.pieces(enemy)).is_empty(),
            "{p:?} {mv}: enemy pieces appeared"
        );
        assert!(
            (next.occupied() & !p.geometry().board).is_empty(),
            "{p:?} {mv}: a piece left the board"
        );
        assert!(
            next.pieces(mover).contains(mv.to()),
            "{p:?} {mv}: the tail is not where the notation says"
        );

        let mirrored_move = mirror_move(mv, width);
        let mirrored_next = mirror
            .play(mirrored_move)
            .unwrap_or_else(|e| panic!("{p:?} {mv}: mirrored move illegal: {e}"));
        assert_eq!(mirrored_next, next.mirrored(), "{p:?} {mv}: play and mirror do not commute");
        assert_eq!(mirrored_next.hash(), next.mirrored().hash());

        // Abbott's notation, with the capture mark, and the tail,head-dest form.
        let notation = p.notation(mv);
        assert_eq!(notation.contains('x'), effect.captured > 0, "{notation}");
        assert_eq!(p.parse_move(&notation), Ok(mv), "{p:?}: {notation}");
        let plain = mv.to_string();
        assert_eq!(p.parse_move(&plain), Ok(mv), "{p:?}: {plain}");
        let head = along(p, mv.from, mv.dir, effect.pieces - 1);
        let head_to = along(p, head, mv.dir, mv.distance);
        for text in [
            format!("{},{head}-{head_to}", mv.from),
            format!("{},{head}{head_to}", mv.from),
            format!("{},{head}x{head_to}", mv.from),
        ] {
            assert_eq!(p.parse_move(&text), Ok(mv), "{p:?}: {text}");
            let syntax = MoveText::parse(&text, width, p.rules().height).expect("parses");
            assert_eq!(
                MoveText::parse(&syntax.to_string(), width, p.rules().height),
                Ok(syntax),
                "{text}"
            );
        }
    }
}

/// A position one move away from a forbidden entry: a symmetric board (in `reading`'s sense)
/// with one of the entering side's far-row pieces stepped back, so stepping it forward again
/// recreates the symmetry. `None` when the square behind that piece is taken.
fn near_symmetric(rng: &mut StdRng, rules: Rules, reading: SymmetryRule) -> Option<Position> {
    let geo = rules.geometry();
    let image = |bits| match reading {
        SymmetryRule::Rotation => geo.rotate180(bits),
        _ => geo.flip_vertical(bits),
    };
    // Black in the bottom half (it has crossed the board), White its image in the top half: a
    // symmetric board with both sides on their far rows and no square holding both.
    let density = rng.random_range(0.1..0.5);
    let mut black = Bitboard::EMPTY;
    for row in 0..rules.height / 2 {
        for column in 0..rules.width {
            if rng.random_bool(density) {
                black.set(Square::new(column, row));
            }
        }
    }
    let anchor = Square::new(rng.random_range(0..rules.width), 0);
    black.set(anchor);
    let mut white = image(black);
    assert!(Position::from_parts(rules, white, black, Color::White, 0)
        .unwrap()
        .with_rules(Rules { symmetry: reading, ..rules })
        .unwrap()
        .is_symmetric());
    let side = if rng.random_bool(0.5) { Color::White } else { Color::Black };
    let (ours, entered, back) = match side {
        Color::Black => (&mut black, anchor, Dir::North),
        Color::White => (&mut white, image(Bitboard::from_square(anchor)).first()?, Dir::South),
    };
    let behind = entered.offset(back, 1, rules.width, rules.height)?;
    if ours.contains(behind) {
        return None;
    }
    ours.clear(entered);
    ours.set(behind);
    Position::from_parts(rules, white, black, side, 0).ok()
}

#[test]
fn random_playouts_keep_every_invariant() {
    let mut checked = 0;
    for seed in 0..12 {
        for position in random_game(Position::standard(), seed, 120) {
            check_position(&position);
            checked += 1;
        }
    }
    // Other sizes and readings, and a ply cap that ends games in draws.
    for (i, &(width, height)) in SIZES.iter().enumerate().skip(1) {
        for (j, symmetry) in SymmetryRule::ALL.into_iter().enumerate() {
            let cap = if j % 2 == 0 { None } else { Some(30 + i as u16) };
            let start =
                Position::start(Rules { ply_cap: cap, ..rules(width, height, symmetry) }).unwrap();
            for position in random_game(start, 100 + (i * 4 + j) as u64, 80) {
                check_position(&position);
                checked += 1;
            }
        }
    }
    assert!(checked > 2000, "only {checked} positions");
}

/// The stones variant from its start: the placements, then random play among the stones, on
/// every size that has stone rows, with each symmetry reading.
#[test]
fn stones_playouts_keep_every_invariant() {
    let mut checked = 0;
    for (i, &(width, height)) in SIZES.iter().enumerate().filter(|(_, (_, h))| *h >= 7) {
        for (j, symmetry) in SymmetryRule::ALL.into_iter().enumerate() {
            let start = Position::start(Rules {
                stones: true,
                ply_cap: Some(60),
                ..rules(width, height, symmetry)
            })
            .unwrap();
            assert_eq!(start.side_to_move(), Color::Black, "Black places first");
            for position in random_game(start, 500 + (i * 4 + j) as u64, 60) {
                check_position(&position);
                checked += 1;
            }
        }
    }
    assert!(checked > 600, "only {checked} positions");
}

#[test]
fn stones_scatters_keep_every_invariant() {
    let mut rng = StdRng::seed_from_u64(17);
    // The scatters must have moves to check, or the invariants of moves hold vacuously (a
    // scatter whose side to move leads on the far rows is a finished game: about a third).
    let (mut checked, mut with_moves) = (0, 0);
    for &(width, height) in SIZES.iter().filter(|(_, h)| *h >= 7) {
        for symmetry in SymmetryRule::ALL {
            for _ in 0..20 {
                let p = random_position(
                    &mut rng,
                    Rules { stones: true, ..rules(width, height, symmetry) },
                );
                check_position(&p);
                checked += 1;
                with_moves += usize::from(!p.legal_moves().is_empty());
            }
        }
    }
    assert_eq!(checked, 320);
    assert!(with_moves * 2 >= checked, "{with_moves} of {checked} scatters have moves");
}

#[test]
fn random_scatters_keep_every_invariant() {
    let mut rng = StdRng::seed_from_u64(7);
    let (mut checked, mut with_moves) = (0, 0);
    for &(width, height) in &SIZES {
        for symmetry in SymmetryRule::ALL {
            for _ in 0..40 {
                let p = random_position(&mut rng, rules(width, height, symmetry));
                // Odd and large plies too, so the text's ply field is exercised.
                let ply = if rng.random_bool(0.5) { 0 } else { rng.random_range(0..=u16::MAX) };
                let p = p.with_side_to_move(p.side_to_move(), ply);
                check_position(&p);
                checked += 1;
                with_moves += usize::from(!p.legal_moves().is_empty());
            }
        }
    }
    assert_eq!(checked, 960);
    assert!(with_moves * 2 >= checked, "{with_moves} of {checked} scatters have moves");
}

#[test]
fn near_symmetric_positions_keep_every_invariant() {
    let mut rng = StdRng::seed_from_u64(11);
    let mut forbidden = 0;
    for &(width, height) in &SIZES {
        for reading in [SymmetryRule::Mirror, SymmetryRule::Rotation] {
            for _ in 0..25 {
                let Some(p) = near_symmetric(&mut rng, rules(width, height, reading), reading)
                else {
                    continue;
                };
                for symmetry in SymmetryRule::ALL {
                    let p = p.with_rules(rules(width, height, symmetry)).unwrap();
                    check_position(&p);
                    // The generator must leave out exactly the moves the checker forbids.
                    let off = p.with_rules(rules(width, height, SymmetryRule::Off)).unwrap();
                    let lost = brute_force_moves(&off)
                        .into_iter()
                        .filter(|mv| p.check(*mv) == Err(IllegalMove::Symmetry))
                        .count();
                    assert_eq!(
                        off.count_legal_moves() - p.count_legal_moves(),
                        lost as u64,
                        "{p:?}"
                    );
                    forbidden += lost;
                }
            }
        }
    }
    assert!(forbidden > 50, "the set-ups forbade only {forbidden} moves");
}

#[test]
fn records_of_random_games_round_trip() {
    let mut rng = StdRng::seed_from_u64(3);
    let mut starts = vec![Position::standard()];
    for &(width, height) in &SIZES[1..] {
        let symmetry = SymmetryRule::ALL[rng.random_range(0..4)];
        starts.push(
            Position::start(Rules { ply_cap: Some(60), ..rules(width, height, symmetry) }).unwrap(),
        );
        // A scatter with Black to move at an odd ply: the record needs a Start tag and "...".
        // Far-row pieces are taken off, or most scatters would be won before the first move.
        let scatter = random_position(&mut rng, rules(width, height, symmetry));
        let geo = scatter.geometry();
        let white = scatter.pieces(Color::White) & !geo.rows[height as usize - 1];
        let black = scatter.pieces(Color::Black) & !geo.rows[0];
        starts.push(Position::from_parts(*scatter.rules(), white, black, Color::Black, 7).unwrap());
    }
    // The stones variant: Black's placement opens the record ("1. ... @f6 2. @g7 @h8 3. ...").
    starts.push(
        Position::start(Rules { stones: true, ply_cap: Some(60), ..Rules::default() }).unwrap(),
    );
    starts.push(
        Position::start(Rules {
            stones: true,
            ply_cap: Some(60),
            ..rules(8, 8, SymmetryRule::Off)
        })
        .unwrap(),
    );
    for (i, start) in starts.into_iter().enumerate() {
        for seed in 0..3 {
            let positions = random_game(start, 1000 + (i * 3 + seed) as u64, 150);
            let moves: Vec<Move> =
                positions.windows(2).map(|w| move_between(&w[0], &w[1])).collect();
            let mut record =
                GameRecord::new("white \"player\"", "black", start, moves).with_tag("Seed", seed);
            if record.result == RecordResult::Unfinished && seed > 0 {
                let loser = record.final_position().side_to_move();
                record = record.resigned(loser);
            }
            let text = record.to_string();
            let back = GameRecord::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
            assert_eq!(back, record, "{text}");
            assert_eq!(back.final_position(), *positions.last().unwrap());
            assert_eq!(back.positions(), positions);
            assert_eq!(back.to_string(), text);
            // Several records in one file come back in order.
            let twice = GameRecord::parse_all(&format!("{text}\n{text}")).unwrap();
            assert_eq!(twice, vec![record.clone(), record]);
        }
    }
}
