//! The encoding: move <-> index is a bijection on legal moves, and the left-right mirror
//! commutes with encoding (planes and policy), for both colours and several board sizes, with
//! and without stones (whose placements have a policy plane of their own).

mod common;

use epaminondas::encode::*;
use epaminondas::game::{mirror_move, Position, Rules};

fn positions() -> Vec<Position> {
    let mut all = Vec::new();
    for (seed, (w, h)) in [(14u8, 12u8), (8, 8), (16, 16), (5, 5), (10, 8)].into_iter().enumerate() {
        let start = Position::start(Rules { width: w, height: h, ..Rules::default() }).unwrap();
        for s in 0..6 {
            all.extend(common::random_game(start, (seed * 100 + s) as u64, 120));
        }
    }
    for (seed, (w, h)) in [(14u8, 12u8), (8, 8), (9, 7)].into_iter().enumerate() {
        let start = Position::start(Rules { width: w, height: h, stones: true, ..Rules::default() }).unwrap();
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
        let mut planes = vec![0.0; input_size(p.rules())];
        let mut mirrored_planes = vec![0.0; input_size(p.rules())];
        encode_position(&p, &mut planes);
        encode_position(&p.mirrored(), &mut mirrored_planes);
        assert_eq!(mirror_planes(&planes, w), mirrored_planes);
        // A policy that puts mass on each legal move's index mirrors onto the mirrored moves.
        let mut policy = vec![0.0; policy_size(p.rules())];
        for (i, mv) in p.legal_moves().into_iter().enumerate() {
            policy[move_index(&p, mv)] = (i + 1) as f32;
            assert_eq!(mirror_index(move_index(&p, mv), w, h), move_index(&p.mirrored(), mirror_move(mv, w)));
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
    let mut white = vec![0.0; input_size(start.rules())];
    let mut black = vec![0.0; input_size(start.rules())];
    encode_position(&start, &mut white);
    encode_position(&start.with_side_to_move(epaminondas::game::Color::Black, 0), &mut black);
    assert_eq!(white, black);
    // Black's forward move (south) uses the same policy plane as White's forward move (north).
    let black_forward = after.parse_move("a11-a10").unwrap();
    let white_forward = start.parse_move("a2-a3").unwrap();
    let plane = |p: &Position, m| move_index(p, m) / (14 * 12);
    assert_eq!(plane(&after, black_forward), plane(&start, white_forward));
    assert_eq!(move_index(&after, black_forward) % (14 * 12), move_index(&start, white_forward) % (14 * 12));
}

#[test]
fn stones_have_their_own_planes_only_in_stones_encodings() {
    let standard = Rules::default();
    let stones = Rules { stones: true, ..standard };
    assert_eq!(input_size(&standard), 7 * 168);
    assert_eq!(policy_size(&standard), 64 * 168);
    assert_eq!(input_size(&stones), 8 * 168);
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
    let mut planes = vec![0.0; input_size(&stones)];
    encode_position(&position, &mut planes);
    let stone_plane = &planes[PLANE_STONES * 168..];
    let marked: Vec<usize> = (0..168).filter(|i| stone_plane[*i] == 1.0).collect();
    assert_eq!(marked, vec![5 * 14 + 5, 6 * 14 + 6, 7 * 14 + 7]);
    // The first seven planes are the standard encoding of the same pieces.
    let mut plain = vec![0.0; input_size(&standard)];
    encode_position(&position, &mut plain);
    assert_eq!(plain[..], planes[..7 * 168]);
    // No placement index exists for the standard game's policy.
    assert_eq!(index_move(&Position::standard(), 64 * 168), None);
}
