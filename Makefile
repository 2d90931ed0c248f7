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

# The whole test suite, in the release profile so it shares the build with `make train`.
test: setup
	cargo test --release

bench: build
	./target/release/epaminondas bench
