# The two entry points of the README. Both fetch and build what they need on first use.
CONFIG ?= configs/default.toml
RUN ?= runs/default

.PHONY: setup build train test bench

# libtorch 2.13.0 (CPU) into ~/.cache/epaminondas, linked as .libtorch; fast when cached.
setup:
	@bash scripts/setup-libtorch.sh

build: setup
	cargo build --release

# Trains an agent from scratch (or resumes the run in $(RUN)).
train: build
	./target/release/epaminondas train --config $(CONFIG) --run $(RUN)

# Formatting, lints and the whole test suite, in the release profile so that they share the
# build with `make train`.
test: setup
	cargo fmt --check
	cargo clippy --release --all-targets -- -D warnings
	cargo test --release

bench: build
	./target/release/epaminondas bench
