//! The encoding: move <-> index is a bijection on legal moves, and the left-right mirror
//! commutes with encoding (planes and policy), for both colours and several board sizes, with
//! and without stones (whose placements have a policy plane of their own); a game without a
//! ply cap reads as the start of a capped one; the threat planes match what the legal moves
//! capture and enter.

mod common;

use epaminondas::encode::*;
use epaminondas::evaluator::{EvalRequest, Evaluator};
use epaminondas::game::{mirror_move, Bitboard, Color, Position, Rules, Square, SymmetryRule};
use epaminondas::nn::Network;

fn positions() -> Vec<Position> {
    let mut all = Vec::new();
    for (seed, (w, h)) in [(14u8, 12u8), (8, 8), (16, 16), (5, 5), (10, 8)].into_iter().enumerate()
    {
        let start = Position::start(Rules { width: w, height: h, ..Rules::default() }).unwrap();
        for s in 0..6 {
            all.extend(common::random_game(start, (seed * 100 + s) as u64, 120));
        }
    }
    for (seed, (w, h)) in [(14u8, 12u8), (8, 8), (9, 7)].into_iter().enumerate() {
        let start =
            Position::start(Rules { width: w, height: h, stones: true, ..Rules::default() })
                .unwrap();
        for s in 0..4 {
            all.extend(common::random_game(start, (seed * 100 + s + 50) as u64, 120));
        }
    }
    all
}

#[test]
fn move_index_round_trips_over_legal_moves() {
    let mut checked = 0;
    let mut placements = 0;
    for p in positions() {
        let mut seen = std::collections::HashSet::new();
        for mv in p.legal_moves() {
            let index = move_index(&p, mv);
            assert!(index < policy_size(p.rules()));
            placements += mv.is_placement() as usize;
            assert_eq!(index_move(&p, index), Some(mv), "{p:?} {mv}");
            assert!(seen.insert(index), "two moves share index {index}");
            checked += 1;
        }
    }
    assert!(checked > 50_000, "only {checked} moves checked");
    assert!(placements > 1_000, "only {placements} placements checked");
}

#[test]
fn mirror_commutes_with_encoding() {
    for p in positions().into_iter().step_by(7) {
        let (w, h) = (p.rules().width, p.rules().height);
        // Every plane, the threat planes included, mirrors with the board.
        let inputs = Inputs { stones: p.rules().stones, threats: true };
        let mut planes = vec![0.0; input_size(p.rules(), inputs)];
        let mut mirrored_planes = vec![0.0; input_size(p.rules(), inputs)];
        encode_position(&p, inputs, &mut planes);
        encode_position(&p.mirrored(), inputs, &mut mirrored_planes);
        assert_eq!(mirror_planes(&planes, w), mirrored_planes);
        // A policy that puts mass on each legal move's index mirrors onto the mirrored moves.
        let mut policy = vec![0.0; policy_size(p.rules())];
        for (i, mv) in p.legal_moves().into_iter().enumerate() {
            policy[move_index(&p, mv)] = (i + 1) as f32;
            assert_eq!(
                mirror_index(move_index(&p, mv), w, h),
                move_index(&p.mirrored(), mirror_move(mv, w))
            );
        }
        let mirrored = mirror_policy(&policy, w, h);
        for (i, mv) in p.legal_moves().into_iter().enumerate() {
            assert_eq!(mirrored[move_index(&p.mirrored(), mirror_move(mv, w))], (i + 1) as f32);
        }
    }
}

#[test]
fn black_sees_the_board_from_its_side() {
    // The start position looks the same to both sides: own pieces on the bottom two rows.
    let start = Position::standard();
    let after = start.play_unchecked(start.legal_moves()[0]);
    let inputs = Inputs { stones: false, threats: true };
    let mut white = vec![0.0; input_size(start.rules(), inputs)];
    let mut black = vec![0.0; input_size(start.rules(), inputs)];
    encode_position(&start, inputs, &mut white);
    encode_position(
        &start.with_side_to_move(epaminondas::game::Color::Black, 0),
        inputs,
        &mut black,
    );
    assert_eq!(white, black);
    // Black's forward move (south) uses the same policy plane as White's forward move (north).
    let black_forward = after.parse_move("a11-a10").unwrap();
    let white_forward = start.parse_move("a2-a3").unwrap();
    let plane = |p: &Position, m| move_index(p, m) / (14 * 12);
    assert_eq!(plane(&after, black_forward), plane(&start, white_forward));
    assert_eq!(
        move_index(&after, black_forward) % (14 * 12),
        move_index(&start, white_forward) % (14 * 12)
    );
}

/// A game without a ply cap reads as one with the whole cap ahead at every ply, never as one
/// about to be drawn by it.
#[test]
fn a_game_without_a_cap_is_never_near_its_end() {
    let uncapped = Position::standard();
    let capped = Position::start(Rules::default().with_ply_cap(Some(300))).unwrap();
    let inputs = Inputs { stones: false, threats: true };
    let encoded = |position: &Position| {
        let mut out = vec![0.0; input_size(position.rules(), inputs)];
        encode_position(position, inputs, &mut out);
        out
    };
    assert!(
        encoded(&uncapped) == encoded(&capped),
        "the uncapped start differs from the capped one"
    );
    let area = 14 * 12;
    let plies_left = |position: &Position| encoded(position)[PLANE_PLIES_LEFT * area];
    // The start's pieces at ply 200.
    let later = |start: &Position| {
        Position::from_parts(
            *start.rules(),
            start.pieces(Color::White),
            start.pieces(Color::Black),
            Color::White,
            200,
        )
        .unwrap()
    };
    assert_eq!(plies_left(&later(&uncapped)), 1.0);
    assert!((plies_left(&later(&capped)) - 100.0 / 300.0).abs() < 1e-6);
    // The shipped agent, which learnt with a cap of 300, does not call the uncapped start drawn.
    let agent =
        concat!(env!("CARGO_MANIFEST_DIR"), "/models/anchored-values-6x64-step1600.safetensors");
    let mut network = Network::load(std::path::Path::new(agent), tch::Device::Cpu).unwrap().0;
    let evaluation = network
        .evaluate(&[EvalRequest { position: uncapped, moves: uncapped.legal_moves() }])
        .remove(0);
    assert!(evaluation.draw < 0.5, "draw probability {}", evaluation.draw);
}

#[test]
fn stones_have_their_own_planes_only_in_stones_encodings() {
    let standard = Rules::default();
    let stones = Rules { stones: true, ..standard };
    let stone_inputs = Inputs { stones: true, threats: false };
    assert_eq!(input_size(&standard, Inputs::default()), 7 * 168);
    assert_eq!(policy_size(&standard), 64 * 168);
    assert_eq!(input_size(&stones, stone_inputs), 8 * 168);
    assert_eq!(policy_size(&stones), 65 * 168);
    let mut position = Position::start(stones).unwrap();
    for text in ["@f6", "@g7", "@h8"] {
        let mv = position.parse_move(text).unwrap();
        // A placement is on the plane after the moves, over its square as the placer sees it.
        let index = move_index(&position, mv);
        assert_eq!(index / 168, PLANE_PLACE, "{text}");
        assert_eq!(index_move(&position, index), Some(mv));
        position = position.play(mv).unwrap();
    }
    // White to move: the stones plane shows f6, g7 and h8 as they are.
    let mut planes = vec![0.0; input_size(&stones, stone_inputs)];
    encode_position(&position, stone_inputs, &mut planes);
    let stone_plane = &planes[PLANE_STONES * 168..];
    let marked: Vec<usize> = (0..168).filter(|i| stone_plane[*i] == 1.0).collect();
    assert_eq!(marked, vec![5 * 14 + 5, 6 * 14 + 6, 7 * 14 + 7]);
    // The first seven planes are the standard encoding of the same pieces.
    let mut plain = vec![0.0; input_size(&standard, Inputs::default())];
    encode_position(&position, Inputs::default(), &mut plain);
    assert_eq!(plain[..], planes[..7 * 168]);
    // No placement index exists for the standard game's policy.
    assert_eq!(index_move(&Position::standard(), 64 * 168), None);
}

/// The threat planes ([`Position::reach`]), brute force: every legal move is played, and the pieces it removes and
/// the head of every move that raises the mover's far-row count are collected.
fn threats_by_playing(position: &Position) -> (Bitboard, Bitboard) {
    let (mut captures, mut runners) = (Bitboard::EMPTY, Bitboard::EMPTY);
    let side = position.side_to_move();
    for mv in position.legal_moves() {
        let after = position.play_unchecked(mv);
        captures |= position.pieces(side.opponent()) & !after.pieces(side.opponent());
        if after.far_row_count(side) > position.far_row_count(side) {
            let pieces = position.check(mv).unwrap().pieces as i32;
            runners |= Bitboard::from_square(Square::from_index(
                (mv.from.index() as i32 + (pieces - 1) * mv.dir.offset()) as u8,
            ));
        }
    }
    (captures, runners)
}

/// Positions picked by hand for [`Position::reach`]: full home rows, a pair capturing onto the
/// far row, lines one and several steps short of it, mixed middlegames on two sizes.
const REACH_POSITIONS: [&str; 9] = [
    "bbbbbbbbbbbbbb/bbbbbbbbbbbbbb/14/14/14/14/14/14/14/14/wwwwwwwwwwwwww/wwwwwwwwwwwwww w",
    "14/14/14/14/14/14/14/14/14/14/wwww2b1bbb3/14 w",
    "bb2bbbb1b2bb/b1b1bbb1b4b/1bb2b2b1b1b1/5b1b6/14/11b2/11b2/6w4b2/3w1w5b2/1w1ww4w2ww/1w2wwww1www1w/ww2ww1ww1ww1w w 30",
    "bbbbbbbb/bbb1bbbb/2bw4/2w5/w1wwwwww/1wwwwwww w 2",
    "14/w13/14/14/14/14/14/7b6/14/14/14/3w10 w",
    "bbb11/1w12/1w12/1w12/14/14/14/14/14/14/14/3w10 w",
    "14/14/3w10/3w10/3w10/14/14/14/14/14/14/14 w",
    "b13/wb12/w13/14/14/14/14/14/14/14/14/14 w",
    "14/14/14/14/14/14/14/14/bb12/b13/b13/w13 b",
];

#[test]
fn reach_is_what_the_legal_moves_count_capture_and_enter() {
    let picked =
        REACH_POSITIONS.iter().map(|text| Position::parse(text, Rules::default()).unwrap());
    let mut marked = 0;
    for p in positions().into_iter().chain(picked) {
        if p.in_placement() || p.is_finished_at_start() {
            continue;
        }
        // The planes ignore the symmetry rule (they show reach), so compare with it off, where
        // every pseudo-legal move is legal; both sides, as the encoding asks both.
        let unruled = p.with_rules(Rules { symmetry: SymmetryRule::Off, ..*p.rules() }).unwrap();
        for side in [Color::White, Color::Black] {
            let view = unruled.with_side_to_move(side, p.ply());
            if view.is_finished_at_start() {
                continue; // no legal moves to compare with (reach walks the pieces anyway)
            }
            let reach = view.reach();
            assert_eq!(
                reach.moves as usize,
                view.legal_moves().len(),
                "{side:?} to move in {view}"
            );
            assert_eq!(
                (reach.captures, reach.runners),
                threats_by_playing(&view),
                "{side:?} to move in {view}"
            );
            marked += (reach.captures.any() && reach.runners.any()) as usize;
        }
    }
    assert!(marked > 100, "only {marked} positions with both captures and far-row entries");
}

#[test]
fn threat_planes_in_a_hand_checked_position() {
    // White: a 3-line d4-d5-d6 facing Black's 2-line d7-d8 (capturable: 3 > 2), and a lone
    // piece on k11 one step from the far row. Black: a lone piece on a2 one step from White's
    // home row, and the pair d7-d8.
    let text = "14/10w3/14/14/3b10/3b10/3w10/3w10/3w10/14/b13/14 w 0";
    let position = Position::parse(text, Rules::default()).unwrap();
    let inputs = Inputs { stones: false, threats: true };
    let mut planes = vec![0.0; input_size(position.rules(), inputs)];
    encode_position(&position, inputs, &mut planes);
    let plane = |k: usize| -> Vec<String> {
        let offset = (inputs.first_threat_plane() + k) * 168;
        (0..168)
            .filter(|i| planes[offset + i] == 1.0)
            .map(|i| Square::new((i % 14) as u8, (i / 14) as u8).to_string())
            .collect()
    };
    assert_eq!(plane(THREAT_WE_CAPTURE), ["d7", "d8"]);
    assert_eq!(plane(THREAT_THEY_CAPTURE), Vec::<String>::new());
    assert_eq!(plane(THREAT_OUR_RUNNERS), ["k11"]);
    assert_eq!(plane(THREAT_THEIR_RUNNERS), ["a2"]);
}

/// Input planes under the left-right mirror: each row reversed.
fn mirror_planes(planes: &[f32], width: u8) -> Vec<f32> {
    planes.chunks(width as usize).flat_map(|row| row.iter().rev().copied()).collect()
}
