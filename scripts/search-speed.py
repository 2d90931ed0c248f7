#!/usr/bin/env python3
"""Times an agent's search as it plays: `epaminondas engine` on one core, a fixed number of
simulations a move, on positions taken from a match's records (plies 8, 20, 32 and 44 of its
first 8 games, or --plies and --games), so that the positions are a real game's middle rather
than the start.

    python3 scripts/search-speed.py RECORDS [--binary B] [--nodes N] [--games G] [--plies P,P,...] [-- ENGINE ARGS...]
    python3 scripts/search-speed.py docs/records/distill-6x64-gpu-step26000-bf16-ab-seed13.txt

Prints the simulations a second over all the positions. Each position is a new game for the
engine (`ucinewgame`), so no tree is reused. Needs `taskset` (util-linux) to pin the engine.
"""
import argparse
import re
import subprocess
import sys
import time

MOVE = re.compile(r"^[a-z]\d+[-x][a-z]\d+$")
PLIES = (8, 20, 32, 44)


def positions(records_path, games, plies=PLIES):
    """The move lists leading to each timed position."""
    text = open(records_path, encoding="utf-8").read()
    found = []
    for game in text.split("\n\n[White")[:games]:
        moves = [token for token in game.split("]\n\n")[-1].split() if MOVE.match(token)]
        found += [moves[:ply] for ply in plies if ply < len(moves)]
    return found


def ply_list(text):
    """`--plies`: whole numbers separated by commas."""
    try:
        return [int(ply) for ply in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of plies") from None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("records")
    parser.add_argument("--binary", default="target/release/epaminondas")
    parser.add_argument("--nodes", type=int, default=2000, help="simulations a move")
    parser.add_argument("--games", type=int, default=8, help="games of the records to take positions from")
    parser.add_argument("--plies", type=ply_list, default=list(PLIES), help="the plies of each game to time, comma-separated")
    # What follows `--` goes to the engine untouched (argparse would read its options as ours).
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    args, engine_args = parser.parse_args(argv[:split]), argv[split + 1:]
    lines = positions(args.records, args.games, args.plies)
    if not lines:
        sys.exit(f"search-speed: no games in {args.records}")
    engine = subprocess.Popen(["taskset", "-c", "0", args.binary, "engine", *engine_args],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    seconds, simulations = 0.0, 0
    for moves in lines:
        engine.stdin.write(f"ucinewgame\nposition startpos moves {' '.join(moves)}\n")
        started = time.perf_counter()
        engine.stdin.write(f"go nodes {args.nodes}\n")
        engine.stdin.flush()
        searched = 0
        while True:
            line = engine.stdout.readline()
            if not line:
                sys.exit("search-speed: the engine stopped (see its error above)")
            found = re.search(r"nodes (\d+)", line)
            if found:
                searched = int(found.group(1))
            if line.startswith("bestmove"):
                break
        seconds += time.perf_counter() - started
        simulations += searched
    engine.stdin.write("quit\n")
    engine.stdin.flush()
    engine.wait()
    print(f"{len(lines)} positions, {simulations} simulations in {seconds:.2f} s: {simulations / seconds:.0f} simulations a second")


if __name__ == "__main__":
    main()
