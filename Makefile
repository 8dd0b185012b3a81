# The two commands of the README:
#   make run   - set up what serving needs and serve (own PostgreSQL when no DATABASE_URL)
#   make test  - set everything up and run the whole test suite
# and `make bench` for the benchmarks.

SHELL := bash
CARGO ?= cargo
# Tools and PostgreSQL are cached here (ignored by git). Where the
# unprivileged user PostgreSQL runs as cannot enter it, PostgreSQL's own
# files go to /tmp/lore-postgres (pgtest/src/lib.rs).
export LORE_CACHE_DIR ?= $(CURDIR)/.cache

.PHONY: run test test-image bench soak image dist tools tools-run tools-image build lint clean-cache book

# What the tests and benchmarks need (npm and apt-get among them), what
# serving alone needs (Python 3's pip only), and what the images need
# besides (buildah, skopeo, umoci from apt-get).
tools:
	bash scripts/setup/fetch_tools.sh test

tools-run:
	bash scripts/setup/fetch_tools.sh run

tools-image:
	bash scripts/setup/fetch_tools.sh image

# The OCI image archives target/images/lore-server.tar and lore-sidecar.tar,
# built from the release binaries (scripts/packaging/images.sh).
image: tools-image
	$(CARGO) build --release --bin lore-server --bin lore-sidecar
	bash scripts/packaging/images.sh

# The same archives from the test build's own binaries (target/debug): the
# same script, layout and entrypoints, without a second, optimized build of
# the server and the sidecar, which took 15 of a cold CI's 32 minutes.
test-image: tools build
	bash scripts/packaging/images.sh target/debug

# The tarball of lore and lore-sidecar for agent machines, with checksums
# (scripts/packaging/dist.sh; the Sidecar chapter's "Binaries for agent machines").
dist:
	$(CARGO) build --profile agent --bin lore --bin lore-sidecar
	bash scripts/packaging/dist.sh target/agent

build:
	$(CARGO) build --workspace --bins

# The daily and weekly reports go to .lore/reports and the web console is at
# http://127.0.0.1:8080 unless told otherwise.
run: tools-run
	LORE_REPORTS__FOLDER="$${LORE_REPORTS__FOLDER:-.lore/reports}" LORE_WEB__LISTEN="$${LORE_WEB__LISTEN:-127.0.0.1:8080}" \
		$(CARGO) run --release --bin lore-server -- serve

# Every committed third-party file is extracted again from its pinned package
# and compared (scripts/setup/third_party.py, run by the virtualenv `tools` made:
# Kingfisher's converter reads YAML with its PyYAML), and the chart is linted, rendered
# and validated (scripts/checks/helm.sh).
# The end-to-end tests run the real binaries and the images, so build them
# first. Tests
# inside one test binary share that binary's PostgreSQL and run in parallel.
# The last line sums every test binary's result ("N passed, N failed"), since
# cargo's own last line is that of the doc tests.
TEST_LOG := target/test-output.log
test: tools build test-image book
	"$(LORE_CACHE_DIR)/venv/bin/python" scripts/setup/third_party.py check --rebuild
	bash scripts/checks/helm.sh
	@mkdir -p target
	set -o pipefail; $(CARGO) test --workspace --no-fail-fast -- --test-threads=4 2>&1 | tee $(TEST_LOG); \
	status=$$?; \
	awk '/^test result:/ { passed += $$4; failed += $$6 } END { printf "%d passed, %d failed\n", passed, failed }' $(TEST_LOG); \
	exit $$status

# The manual as a book (docs/book.toml) into target/book/. mdBook fails on
# a missing chapter; a warning (an unclosed tag, a link it cannot follow)
# fails here too. Links between the sources, and their headings, are
# checked by `make lint` (scripts/checks/self_contained.py).
book: tools
	@mkdir -p target; set -o pipefail; "$(LORE_CACHE_DIR)/bin/mdbook" build docs --dest-dir "$(CURDIR)/target/book" 2>&1 \
		| tee target/book.log; ! grep -E "WARN|ERROR" target/book.log

# Benchmarks print their figures next to baselines measured in the same run
# (see docs/BENCHMARKS.md).
bench: tools
	$(CARGO) bench -p lore-server --bench actions
	$(CARGO) bench -p lore-server --bench knowledge
	$(CARGO) bench -p lore-server --bench qa
	$(CARGO) bench -p lore-server --bench brief
	$(CARGO) bench -p lore-server --bench console
	$(CARGO) bench -p lore-spool --bench spool
	$(CARGO) bench -p lore-sanitize --bench redaction
	$(CARGO) build --release --workspace --bins
	$(CARGO) build --profile agent --bin lore-sidecar
	LORE_E2E_SIDECAR=$(CURDIR)/target/agent/lore-sidecar $(CARGO) bench -p lore-e2e --bench replay
	$(CARGO) bench -p lore-e2e --bench platform
	$(CARGO) bench -p lore-e2e --bench agent
	$(CARGO) bench -p lore-e2e --bench folders

# Agents through sidecars against one server while PostgreSQL crashes, the
# server and a sidecar are killed, the network is cut and the server is
# frozen; LORE_SOAK_SECS (default 600) and LORE_SOAK_AGENTS (default 6).
# `make test` runs a short one (tests/tests/soak.rs).
soak: tools
	$(CARGO) build --release --workspace --bins
	$(CARGO) bench -p lore-e2e --bench soak

# A clone must stand alone: no tracked file may point outside the repository,
# and every third-party file is what its pinned package holds.
# cargo-machete (crates.io, pinned) fails on a dependency a crate's manifest
# names and its code never uses; it is built once into the cache.
MACHETE := $(LORE_CACHE_DIR)/tools/bin/cargo-machete
MACHETE_VERSION := 0.9.1

$(MACHETE):
	$(CARGO) install cargo-machete --version $(MACHETE_VERSION) --locked --root $(LORE_CACHE_DIR)/tools

lint: $(MACHETE)
	python3 scripts/checks/self_contained.py
	python3 scripts/checks/module_circles.py
	python3 scripts/checks/crate_table.py
	python3 scripts/checks/function_length.py
	python3 scripts/setup/third_party.py check
	$(CARGO) fmt --all -- --check
	$(MACHETE)
	$(CARGO) clippy --workspace --all-targets -- -D warnings

clean-cache:
	rm -rf $(LORE_CACHE_DIR)
