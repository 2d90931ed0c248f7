//! The ways people and programs use an agent: the engine protocol, terminal play, export.

use epaminondas::engine::EngineSession;
use epaminondas::evaluator::{EvalRequest, Evaluator};
use epaminondas::game::{GameRecord, Position, RecordResult, Rules, Status};
use epaminondas::nn::{DeviceChoice, Network};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

mod common;

fn rules(cap: u16) -> Rules {
    Rules { ply_cap: Some(cap), ..Rules::default() }
}

fn session(spec: &str, cap: u16) -> EngineSession {
    EngineSession::new(spec.parse().unwrap(), DeviceChoice::Cpu, rules(cap)).unwrap()
}

fn bestmove(replies: &[String]) -> String {
    let last = replies.last().expect("go answers");
    last.strip_prefix("bestmove ")
        .unwrap_or_else(|| panic!("no bestmove in {replies:?}"))
        .to_string()
}

/// A whole game between two engines, refereed move by move from outside: every move the
/// engines send must be legal in the referee's position.
#[test]
fn engines_play_a_refereed_game() {
    let mut white = session("greedy", 80);
    let mut black = session("random", 80);
    for engine in [&mut white, &mut black] {
        let replies = engine.handle("uci");
        assert_eq!(replies.last().unwrap(), "uciok");
        assert!(replies[0].starts_with("id name epaminondas"));
        assert_eq!(engine.handle("isready"), ["readyok"]);
        assert!(engine.handle("ucinewgame").is_empty());
    }
    let mut referee = Position::start(rules(80)).unwrap();
    let mut moves: Vec<String> = Vec::new();
    while referee.status() == Status::Ongoing {
        let engine = if referee.side_to_move() == epaminondas::game::Color::White {
            &mut white
        } else {
            &mut black
        };
        assert!(engine.handle(&format!("position startpos moves {}", moves.join(" "))).is_empty());
        assert_eq!(
            engine.position(),
            Some(&referee),
            "the engine's position follows the moves sent"
        );
        let text = bestmove(&engine.handle("go nodes 50"));
        let mv = referee.parse_move(&text).unwrap_or_else(|e| panic!("engine sent {text}: {e}"));
        referee = referee.play(mv).unwrap();
        moves.push(text);
    }
    // The game is over: the engine says so instead of moving.
    white.handle(&format!("position startpos moves {}", moves.join(" ")));
    assert_eq!(bestmove(&white.handle("go")), "none");
}

#[test]
fn engine_errors_are_reported_and_change_nothing() {
    let mut engine = session("alphabeta:depth=1", 300);
    engine.handle("position startpos moves a1-a3");
    let before = *engine.position().unwrap();
    for (command, expected) in [
        ("go nodes many", "whole number"),
        ("go wtime", "needs a value"),
        ("setoption name Depth value deep", "whole number"),
        // Past the limits `uci` advertises, refused rather than cut (2^32 + 1 once read as 1).
        ("setoption name Depth value 4294967297", "at most 64"),
        ("setoption name Nodes value 100000001", "at most 100000000"),
        ("setoption name MoveTime value 3600001", "at most 3600000"),
        ("go depth 4294967296", "at most 64"),
        ("go nodes 4000000000", "at most 100000000"),
        ("setoption name Colour value red", "unknown option"),
        ("setoption name Player value minimax", "unknown kind"),
        ("setoption name Board value hexagon", "crossings-board"),
        ("setoption name Board value 20x8", "not supported"),
        ("setoption name Player value alphabeta:time=1e20", "at most"),
        ("dance", "unknown command"),
    ] {
        let replies = engine.handle(command);
        assert_eq!(replies.len(), 1, "{command}: {replies:?}");
        assert!(
            replies[0].starts_with("info string error:") && replies[0].contains(expected),
            "{command}: {replies:?}"
        );
        assert_eq!(engine.position(), Some(&before), "{command} changed the position");
    }
    // A good command still works afterwards, and a position text with moves is read.
    let fen = "14/w13/14/14/14/14/14/7b6/14/14/14/3w10 w";
    assert!(engine.handle(&format!("position fen {fen} moves a11-a12")).is_empty());
    assert_eq!(engine.position().unwrap().side_to_move(), epaminondas::game::Color::Black);
    let replies = engine.handle("go depth 2");
    assert!(replies[0].starts_with("info depth"), "{replies:?}");
    // Times past what a clock holds are no deadline, not an overflow.
    let most = u64::MAX;
    let replies = engine.handle(&format!("go depth 1 wtime {most} btime {most} winc {most}"));
    assert!(replies.last().unwrap().starts_with("bestmove"), "{replies:?}");
    let replies = engine.handle(&format!("go depth 1 movetime {most}"));
    assert!(replies.last().unwrap().starts_with("bestmove"), "{replies:?}");
}

/// A refused `position` leaves no position behind: `go` then answers an error and no move (a
/// move for the previous position would be one for a game the GUI is not playing), until a
/// valid `position` or `ucinewgame`.
#[test]
fn a_refused_position_leaves_no_stale_position() {
    for (command, expected) in [
        ("position startpos moves a1-a3 a1-a2", "move 2"),
        ("position startpos moves zz", "move 1"),
        ("position fen 14/14 w", "position fen"),
        ("position sideways", "startpos"),
    ] {
        let mut engine = session("greedy", 300);
        assert!(engine.handle("position startpos moves a1-a3").is_empty());
        let replies = engine.handle(command);
        assert!(
            replies.len() == 1
                && replies[0].starts_with("info string error:")
                && replies[0].contains(expected),
            "{command}: {replies:?}"
        );
        assert_eq!(engine.position(), None);
        let replies = engine.handle("go nodes 5");
        assert_eq!(replies.len(), 1, "{command}: {replies:?}");
        assert!(
            replies[0].starts_with("info string error: no position")
                && replies[0].contains(expected),
            "{command}: {replies:?}"
        );
        // Options that change the rules still apply, and a new position brings moves back.
        assert!(engine.handle("setoption name Symmetry value both").is_empty());
        assert!(engine.handle("position startpos moves a1-a3").is_empty());
        assert!(bestmove(&engine.handle("go nodes 5")) != "none");
        engine.handle(command);
        assert!(engine.handle("ucinewgame").is_empty());
        assert_eq!(
            engine.position(),
            Some(
                &Position::start(Rules {
                    symmetry: epaminondas::game::SymmetryRule::Both,
                    ..rules(300)
                })
                .unwrap()
            )
        );
    }
}

/// The game has no draw rule, so with no PlyCap set the engine takes a game of any length and
/// always answers a move while the rules have not ended it: a 400-ply shuffle of two pieces is
/// a position like any other. With PlyCap set, the cap ends it.
#[test]
fn the_engine_has_no_ply_cap_unless_told() {
    let mut engine =
        EngineSession::new("greedy".parse().unwrap(), DeviceChoice::Cpu, Rules::default()).unwrap();
    assert!(engine
        .handle("uci")
        .iter()
        .any(|line| line == "option name PlyCap type spin default 0 min 0 max 65535"));
    // One piece each, far from everything: a1 and n12 step back and forth.
    let fen = "13b/14/14/14/14/14/14/14/14/14/14/w13 w";
    let mut moves = Vec::new();
    for i in 0..100 {
        moves.extend(if i % 2 == 0 {
            ["a1-a2", "n12-n11", "a2-a1", "n11-n12"]
        } else {
            ["a1-b1", "n12-m12", "b1-a1", "m12-n12"]
        });
    }
    assert_eq!(moves.len(), 400);
    let position = format!("position fen {fen} moves {}", moves.join(" "));
    assert!(engine.handle(&position).is_empty(), "a 400-ply game is refused");
    assert_eq!(engine.position().unwrap().ply(), 400);
    let mv = bestmove(&engine.handle("go nodes 10"));
    assert!(engine.position().unwrap().parse_move(&mv).is_ok(), "{mv}");
    assert!(engine.handle("setoption name PlyCap value 300").is_empty());
    assert_eq!(bestmove(&engine.handle("go nodes 10")), "none");
}

#[test]
fn engine_plays_on_a_named_board() {
    let mut engine = session("greedy", 300);
    assert!(engine.handle("setoption name Board value crossings-board").is_empty());
    assert_eq!(
        engine.position(),
        Some(&Position::start(Rules { width: 8, height: 8, ..rules(300) }).unwrap())
    );
    assert!(engine.handle("position startpos moves a1-a3").is_empty());
    let mv = bestmove(&engine.handle("go"));
    assert!(engine.position().unwrap().parse_move(&mv).is_ok(), "{mv} on 8x8");
    assert!(engine.handle("setoption name Board value 10x8").is_empty());
    let rules_now = *engine.position().unwrap().rules();
    assert_eq!((rules_now.width, rules_now.height), (10, 8));
    // A position text sets the board too: options changed afterwards keep its board, and the
    // moves answered are its board's.
    let small = Position::start(Rules { width: 8, height: 8, ..rules(300) }).unwrap();
    assert!(engine.handle(&format!("position fen {small} moves a1-a3")).is_empty());
    assert!(engine.handle("setoption name PlyCap value 100").is_empty());
    let position = *engine.position().unwrap();
    assert_eq!((position.rules().width, position.rules().height, position.ply()), (8, 8, 1));
    assert_eq!(position.rules().ply_cap, Some(100));
    let mv = bestmove(&engine.handle("go"));
    assert!(position.parse_move(&mv).is_ok(), "{mv} on 8x8");
    // Moving a position to another board is refused, never done silently.
    let error = small.with_rules(rules(300)).unwrap_err().to_string();
    assert!(error.contains("8x8") && error.contains("14x12"), "{error}");
}

#[test]
fn engine_plays_the_stones_variant() {
    let mut engine = session("alphabeta:depth=2", 300);
    assert!(engine
        .handle("uci")
        .iter()
        .any(|line| line == "option name Stones type check default false"));
    assert!(engine.handle("setoption name Stones value on").is_empty());
    assert_eq!(
        engine.position(),
        Some(&Position::start(Rules { stones: true, ..rules(300) }).unwrap())
    );
    // Black places first; the engine answers with White's stone, then places or moves in turn.
    assert!(engine.handle("position startpos moves @f6").is_empty());
    let mv = bestmove(&engine.handle("go"));
    assert!(mv.starts_with('@'), "{mv}");
    assert!(engine.handle(&format!("position startpos moves @f6 {mv} @h8")).is_empty());
    let mv = bestmove(&engine.handle("go"));
    assert!(!mv.starts_with('@') && engine.position().unwrap().parse_move(&mv).is_ok(), "{mv}");
    // A bad value is refused without a change; a piece move during the placements is refused.
    let before = *engine.position().unwrap();
    assert!(engine.handle("setoption name Stones value maybe")[0].contains("on or off"));
    assert_eq!(engine.position(), Some(&before));
    let replies = engine.handle("position startpos moves a2-a3");
    assert!(replies[0].contains("place a stone"), "{replies:?}");
    assert!(engine.handle("setoption name Stones value off").is_empty());
    assert_eq!(engine.position(), Some(&Position::start(rules(300)).unwrap()));
}

#[test]
fn engine_binary_speaks_the_protocol() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_epaminondas"))
        .args(["engine", "--player", "random", "--ply-cap", "300"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        // A line of bytes that are not text (\xff) is answered like any bad command, and
        // the engine goes on to the next.
        .write_all(
            b"uci\n\xff\xfe\nisready\nposition startpos moves a1-a3\ngo nodes 5\nbogus\nquit\n",
        )
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.contains(&"uciok") && lines.contains(&"readyok"), "{text}");
    let reply = lines.iter().find_map(|l| l.strip_prefix("bestmove ")).expect("a bestmove");
    let after = Position::start(rules(300))
        .unwrap()
        .play(Position::start(rules(300)).unwrap().parse_move("a1-a3").unwrap())
        .unwrap();
    assert!(after.parse_move(reply).is_ok(), "{reply} is not legal for Black");
    assert!(lines.iter().any(|l| l.starts_with("info string error: unknown command")));
    assert!(lines.contains(&"info string error: the line is not UTF-8 text"), "{text}");
    assert!(output.status.success());
}

/// Started outside the checkout, with no `models` folder in its working directory, the engine
/// still plays the agent shipped for the board rather than falling back to alphabeta.
#[test]
fn engine_finds_the_shipped_agent_from_any_folder() {
    let elsewhere = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_epaminondas"))
        .arg("engine")
        .current_dir(elsewhere.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"uci\nquit\n").unwrap();
    let output = child.wait_with_output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    let id = text.lines().find(|l| l.starts_with("id name")).expect("an id line");
    let shipped =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("models/defaults.toml"))
            .unwrap();
    let agent = shipped
        .lines()
        .find_map(|l| l.strip_prefix("\"14x12\" = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .expect("a 14x12 default");
    assert!(id.contains(agent), "{id}; stderr: {}", String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success());
}

/// A scripted game in the terminal: bad input gets a message and the prompt again, the helpers
/// answer, undo takes back a move pair, and the record is saved at the end.
#[test]
fn scripted_terminal_game() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("game.txt");
    let mut child = Command::new(env!("CARGO_BIN_EXE_epaminondas"))
        .args([
            "play",
            "--player",
            "random",
            "--as",
            "white",
            "--plain",
            "--ply-cap",
            "300",
            "--record",
        ])
        .arg(&record)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Black cannot reach row 3 in two moves, so these white moves stay legal whatever it plays.
    let script =
        "help\nmoves a1\nmoves q99\nz9-a1\na1-a9\na1-a3\nhint\nb1-b3\nc1-c3\nundo\nresign\n";
    child.stdin.take().unwrap().write_all(script.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{text}\n{}", String::from_utf8_lossy(&output.stderr));
    for expected in [
        "commands:",
        "a1-a2",
        "is not a square",
        "z9-a1:",
        "a1-a9:",
        "hint: ",
        "taken back",
        "You resign",
        "[B]",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }
    let records = GameRecord::parse_all(&std::fs::read_to_string(&record).unwrap()).unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(
        records[0].moves.len(),
        4,
        "a1-a3, reply, b1-b3, reply (c1-c3 and its reply taken back)"
    );
    assert_eq!(records[0].result, RecordResult::BlackWins);
    assert_eq!(records[0].white, "you");

    // A record is never written over: a second game naming the file is refused before it starts.
    let play = |record: &Path, input: &[u8]| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_epaminondas"))
            .args(["play", "--player", "random", "--as", "white", "--plain", "--record"])
            .arg(record)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // A refused game may have ended before its input is written.
        let _ = child.stdin.take().unwrap().write_all(input);
        child.wait_with_output().unwrap()
    };
    let again = play(&record, b"a1-a3\n");
    let error = String::from_utf8_lossy(&again.stderr);
    assert!(!again.status.success() && error.contains("already holds"), "{error}");
    assert_eq!(GameRecord::parse_all(&std::fs::read_to_string(&record).unwrap()).unwrap(), records);
    // Input that is not text ends the game unfinished, and the game so far is saved.
    let unreadable = dir.path().join("unreadable.txt");
    let output = play(&unreadable, b"a1-a3\n\xff\xfe\n");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let saved = GameRecord::parse_all(&std::fs::read_to_string(&unreadable).unwrap()).unwrap();
    assert_eq!(saved[0].moves.len(), 2, "a1-a3 and the reply");
}

/// The TorchScript module computes what the network computes, row for row in a batch of three.
#[test]
fn torchscript_export_matches_the_network() {
    let dir = tempfile::tempdir().unwrap();
    // Output layers made non-zero so that the comparison means something.
    let mut network = common::noisy_tiny_network(4, 0.1);
    let path = dir.path().join("net.pt");
    epaminondas::nn::export::export_torchscript(&mut network, &path, 14, 12).unwrap();
    let module = tch::CModule::load(&path).unwrap();
    let mut position = Position::standard();
    let mut positions = Vec::new();
    for _ in 0..3 {
        positions.push(position);
        position = position.play_unchecked(position.legal_moves()[7]);
    }
    let refs: Vec<&Position> = positions.iter().collect();
    let inputs = epaminondas::nn::encode_batch(&refs, network.config.inputs());
    let (policy, wdl) = network.infer(&inputs, 3, 14, 12);
    let xs = tch::Tensor::from_slice(&inputs).view([3, 7, 12, 14]);
    let out = tch::no_grad(|| module.forward_ts(&[xs]).unwrap());
    assert_eq!(out.size(), [3, 64 * 12 * 14 + 3]);
    let out = Vec::<f32>::try_from(&out.flatten(0, -1)).unwrap();
    let width = 64 * 12 * 14 + 3;
    for i in 0..3 {
        for j in 0..64 * 12 * 14 {
            assert!((out[i * width + j] - policy[i * (width - 3) + j]).abs() < 1e-4);
        }
        for k in 0..3 {
            assert!((out[i * width + width - 3 + k] - wdl[i * 3 + k]).abs() < 1e-5);
        }
    }
}

/// Search's evaluator picks each legal move's logit out on the device: its priors are the
/// softmax of the full policy's logits at the moves' indices, its values the full output's,
/// for every position of a batch (rows must not mix).
#[test]
fn evaluator_priors_are_the_legal_moves_softmax_of_the_full_policy() {
    let mut network = common::noisy_tiny_network(5, 0.3);
    let mut position = Position::standard();
    let mut requests = Vec::new();
    for ply in 0..5 {
        let moves = position.legal_moves();
        requests.push(EvalRequest { position, moves: moves.clone() });
        position = position.play_unchecked(moves[(7 * ply + 3) % moves.len()]);
    }
    let refs: Vec<&Position> = requests.iter().map(|r| &r.position).collect();
    let inputs = epaminondas::nn::encode_batch(&refs, network.config.inputs());
    let (policy, wdl) = network.infer(&inputs, requests.len(), 14, 12);
    let evaluations = network.evaluate(&requests);
    let policy_size = 64 * 12 * 14;
    for (row, (request, evaluation)) in requests.iter().zip(&evaluations).enumerate() {
        let logits: Vec<f32> = request
            .moves
            .iter()
            .map(|mv| {
                policy[row * policy_size + epaminondas::encode::move_index(&request.position, *mv)]
            })
            .collect();
        let expected = epaminondas::nn::softmax(&logits);
        assert_eq!(evaluation.priors.len(), expected.len());
        for (got, want) in evaluation.priors.iter().zip(&expected) {
            assert!((got - want).abs() < 1e-5, "row {row}: {got} against {want}");
        }
        assert!((evaluation.value - (wdl[3 * row] - wdl[3 * row + 2])).abs() < 1e-5);
        assert!((evaluation.draw - wdl[3 * row + 1]).abs() < 1e-5);
    }
    // The priors are not all alike, or the comparison would prove little.
    let first = &evaluations[0].priors;
    assert!(first.iter().any(|p| (p - first[0]).abs() > 1e-4));

    // Placements asked of a network without the placement plane (players refuse the pairing
    // up front) get logit 0 each, so equal priors, rather than a panic.
    let stones = Position::start(Rules { stones: true, ..Rules::default() }).unwrap();
    let moves = stones.legal_moves();
    assert!(moves.len() > 1);
    let placing = network.evaluate(&[EvalRequest { position: stones, moves: moves.clone() }]);
    for prior in &placing[0].priors {
        assert!((prior - 1.0 / moves.len() as f32).abs() < 1e-6);
    }
}

/// `export` of a run's checkpoint carries the rules and training facts (its config as this
/// version writes it); `play` and `engine` read the rules back from the agent.
#[test]
fn exported_agents_carry_their_rules_and_training() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let binary = env!("CARGO_BIN_EXE_epaminondas");
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/configs/smoke.toml");
    let output = Command::new(binary)
        .args(["train", "--config", config, "--generations", "1", "--run"])
        .arg(&run)
        .output()
        .unwrap();
    assert!(output.status.success());
    // stderr is a pipe here, so the progress bars give way to plain lines, one per tenth of
    // the way (here every game or step, as there are fewer than ten). Self-play's line may
    // carry its plies, simulations and time left between the stage and the count, once a
    // second has passed.
    let log = String::from_utf8_lossy(&output.stderr);
    for (stage, count) in [
        ("gen 1 self-play", ": 1/4 after"),
        ("gen 1 self-play", ": 4/4 after"),
        ("gen 1 training", ": 3/3 after"),
        ("gen 1 rating", ": 4/4 after"),
    ] {
        assert!(
            log.lines().any(|line| line.starts_with(stage) && line.contains(count)),
            "no '{stage}...{count}' in the log:\n{log}"
        );
    }
    // As an older version saved it: f32 options widened to f64 digits.
    let saved = std::fs::read_to_string(run.join("config.toml")).unwrap();
    assert!(saved.contains("reduction = 0.2\n"), "{saved}");
    std::fs::write(
        run.join("config.toml"),
        saved.replace("reduction = 0.2\n", "reduction = 0.20000000298023224\n"),
    )
    .unwrap();
    let agent = dir.path().join("models/smoke.safetensors");
    let status = Command::new(binary)
        .arg("export")
        .arg(run.join("checkpoints/gen-000001.safetensors"))
        .arg("--out")
        .arg(&agent)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    // An agent already there is replaced only when asked to.
    let again = |force: bool| {
        let mut command = Command::new(binary);
        command.arg("export").arg(run.join("checkpoints/gen-000000.safetensors"));
        command.arg("--out").arg(&agent).arg("--no-torchscript");
        if force {
            command.arg("--force");
        }
        command.output().unwrap()
    };
    let refused = again(false);
    let error = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success() && error.contains("exists") && error.contains("--force"));
    assert_eq!(Network::load(&agent, tch::Device::Cpu).unwrap().1["generation"], "1");
    assert!(again(true).status.success());
    assert_eq!(Network::load(&agent, tch::Device::Cpu).unwrap().1["generation"], "0");
    let status = Command::new(binary)
        .arg("export")
        .arg(run.join("checkpoints/gen-000001.safetensors"))
        .arg("--out")
        .arg(&agent)
        .arg("--force")
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let (_, metadata) = Network::load(&agent, tch::Device::Cpu).unwrap();
    assert_eq!(metadata["generation"], "1");
    assert_eq!(metadata["training_games"], "4");
    // The run's folder name, not the exporting machine's path.
    assert_eq!(metadata["source"], "run/checkpoints/gen-000001.safetensors");
    assert!(metadata.contains_key("elo") && metadata["training_config"].contains("[selfplay]"));
    assert!(
        metadata["training_config"].contains("reduction = 0.2\n"),
        "{}",
        metadata["training_config"]
    );
    let rules = epaminondas::players::trained_rules(&agent).unwrap().unwrap();
    assert_eq!(rules.ply_cap, Some(40));
    assert!(
        dir.path().join("models/smoke.pt").exists() && dir.path().join("models/smoke.md").exists()
    );
    let models = dir.path().join("models");
    let default_for =
        |width, height| epaminondas::players::default_agent(&models, width, height, false);
    assert_eq!(default_for(14, 12).unwrap(), Some(agent.clone()));
    assert_eq!(
        default_for(8, 8).unwrap(),
        None,
        "an agent is only offered for the board it was trained on"
    );
    // A defaults file decides between agents; one that names an agent of another board, or
    // does not parse, is refused by name.
    std::fs::copy(&agent, models.join("other.safetensors")).unwrap();
    std::fs::write(models.join("defaults.toml"), "\"14x12\" = \"other.safetensors\"\n").unwrap();
    assert_eq!(default_for(14, 12).unwrap(), Some(models.join("other.safetensors")));
    assert_eq!(default_for(8, 8).unwrap(), None);
    std::fs::write(models.join("defaults.toml"), "\"8x8\" = \"smoke.safetensors\"\n").unwrap();
    let error = default_for(8, 8).unwrap_err().to_string();
    assert!(error.contains("defaults.toml") && error.contains("trained for 14x12"), "{error}");
    std::fs::write(models.join("defaults.toml"), "14x12 = [").unwrap();
    assert!(default_for(14, 12).unwrap_err().to_string().contains("defaults.toml"));
    // The shipped agents: each board's default is found for its own board.
    let shipped = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/models"));
    let crossings = epaminondas::players::default_agent(shipped, 8, 8, false)
        .unwrap()
        .expect("an 8x8 agent is shipped");
    assert_eq!(
        epaminondas::players::trained_rules(&crossings).unwrap().map(|r| (r.width, r.height)),
        Some((8, 8))
    );
    let standard = epaminondas::players::default_agent(shipped, 14, 12, false)
        .unwrap()
        .expect("a 14x12 agent is shipped");
    assert_eq!(
        epaminondas::players::trained_rules(&standard).unwrap().map(|r| (r.width, r.height)),
        Some((14, 12))
    );
    // A corrupt agent is refused by name.
    std::fs::write(dir.path().join("broken.safetensors"), b"not a network").unwrap();
    let output = Command::new(binary)
        .args(["engine", "--agent"])
        .arg(dir.path().join("broken.safetensors"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("broken.safetensors"));
    // A checkpoint whose rules cannot be a board: export names the problem and writes nothing.
    let (network, mut metadata) = Network::load(&agent, tch::Device::Cpu).unwrap();
    metadata.insert("rules".into(), r#"{"width":0}"#.into());
    let odd = dir.path().join("odd-rules.safetensors");
    network.save(&odd, &metadata).unwrap();
    let out = dir.path().join("odd-agent.safetensors");
    let output =
        Command::new(binary).arg("export").arg(&odd).arg("--out").arg(&out).output().unwrap();
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success() && error.contains("odd-rules.safetensors: its rules"),
        "{error}"
    );
    assert!(!out.exists());
}

/// The stones variant in the terminal: the human (Black) places first, the agent answers with
/// White's stone, a piece move before the third stone is refused, White moves first once the
/// stones stand, and the record says Stones.
#[test]
fn scripted_stones_game() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("game.txt");
    let mut child = Command::new(env!("CARGO_BIN_EXE_epaminondas"))
        .args([
            "play",
            "--player",
            "random",
            "--stones",
            "--as",
            "black",
            "--plain",
            "--ply-cap",
            "300",
            "--record",
        ])
        .arg(&record)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // White's stone lands on a random square, perhaps f7: then @f7 is refused and @g7 placed.
    // Either way @g7 or the resignation is the first thing said after White's first move.
    child.stdin.take().unwrap().write_all(b"@f6\na11-a10\n@f7\n@g7\nresign\n").unwrap();
    let output = child.wait_with_output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{text}");
    assert!(text.contains("place a stone"), "{text}");
    let records = GameRecord::parse_all(&std::fs::read_to_string(&record).unwrap()).unwrap();
    let game = &records[0];
    assert!(game.rules().stones);
    assert_eq!(game.moves.len(), 4, "three placements, White's first move, then the resignation");
    assert!(game.moves[..3].iter().all(|mv| mv.is_placement()) && !game.moves[3].is_placement());
    assert_eq!(game.moves[0].to_string(), "@f6");
    assert!(["@f7", "@g7"].contains(&game.moves[2].to_string().as_str()), "{}", game.moves[2]);
    assert_eq!(game.result, RecordResult::WhiteWins);
}
