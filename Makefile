# nuesm — see README.md. `make run` and `make test` are the two commands a
# fresh machine needs; the rest is for developers.
GO        ?= go
BIN       := bin
GOBIN     := $(shell $(GO) env GOPATH)/bin
STATICCHECK ?= $(GOBIN)/staticcheck
FUZZTIME  ?= 30s
# Minimising each new input for the default 60 s starves a short run
# (most of a 3-minute run went to it); 1 s keeps the runs exploring.
FUZZMINIMIZETIME ?= 1s
PKGS      := ./...

.PHONY: all build run test test-short bench bench-nue lint fmt fuzz clean default-fabric

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/...

## run: the main job (the daemon) on the embedded default fabric; Ctrl-C stops it
run: build
	./$(BIN)/nuesm serve --default -o out/serve

## test: every test, including the real-tool tests (ibsim, ibnetdiscover)
test:
	$(GO) test -count=1 -timeout 80m $(PKGS)

test-short:
	$(GO) test -short -count=1 $(PKGS)

## bench: benchmarks (figures, never assertions)
bench:
	$(GO) test -run '^$$' -bench . -benchmem -timeout 60m $(PKGS)

## bench-opensm: nuesm vs the real OpenSM (ibsim, umad2sim) on a fixed set of
## fabrics, one table per fabric -> stdout and bench/opensm/results-<date>.txt
## (builds bin/nuesm alone: the bench needs no other command)
.PHONY: bench-opensm
bench-opensm:
	$(GO) build -o $(BIN)/ ./cmd/nuesm
	bench/opensm/bench.sh

## bench-failover: a cable failure on the fat tree k=4 n=3 and the 4x4x4
## torus healed by nuesm's OpenSM deployer and by OpenSM's own engines (updn,
## minhop, dfsssp), side by side (real OpenSM on ibsim) -> bench/failover/RESULTS.md
.PHONY: bench-failover
bench-failover:
	NUESM_BENCH_FAILOVER=$(CURDIR)/bench/failover/table.md $(GO) test -count=1 -timeout 60m -run '^TestFailoverBench$$' -v ./cmd/nuesm/

## bench-repair: minimal-change repair vs a full Nue routing on the k=18 fat
## tree, side by side (issue 17) -> bench/repair/RESULTS.md
.PHONY: bench-repair
bench-repair:
	bench/repair/run.sh bench/repair/RESULTS.md

## bench-fip: the fail-in-place study (issue 9) -> bench/fip/RESULTS.md and plots
.PHONY: bench-fip
bench-fip: build
	bench/fip/run.sh

## bench-nue: the Nue issue's figures (k sweep, vs MinHop, scale) -> bench/nue/RESULTS.md
bench-nue: build
	bench/nue/run.sh bench/nue/RESULTS.md

## bench-sar: scheduling-aware routing on job mixes (fat trees, tori): effective
## EFI per job and overall, dark fiber, per engine -> bench/sar/RESULTS.md;
## VLS="1 2 4": every fabric at those VL counts instead (its section of RESULTS.md)
.PHONY: bench-sar
bench-sar: build
	VLS="$(VLS)" bench/sar/run.sh

## bench-spread: the cost of sar-nue's spreading (sar/spread.go) alone and of
## a whole sar-nue:spread=all routing against Nue's (damaged k=12 fat tree,
## 6x6x6 torus, k=18 fat tree), 5 runs each -> stdout (bench/sar/NOTES.md)
.PHONY: bench-spread
bench-spread:
	$(GO) test -run '^$$' -bench 'SpreadAll' -count 5 ./sar/

## bench-output: bytes written per table set and per published generation,
## compact forms against the older text layout (route, route --compact,
## serve's first generation) -> bench/output/RESULTS.md. NUESM_OLD=<binary
## from before the compact forms> measures the older layout's times too;
## FABRICS="clos36 df clos56" adds the radix-56 Clos (~15 GB of disk).
.PHONY: bench-output
bench-output: build
	bench/output/run.sh bench/output/RESULTS.md

## bench-flitsim: simulated throughput per engine (shift, uniform) on fat tree,
## torus, random, with and without failures -> bench/flitsim/RESULTS.md
.PHONY: bench-flitsim
bench-flitsim:
	bench/flitsim/run.sh bench/flitsim/RESULTS.md

## bench-booksim: flitsim against BookSim2 (built from its repository at
## bench time) -> bench/flitsim/booksim.md and the speed table speed.md
.PHONY: bench-booksim
bench-booksim:
	bench/flitsim/booksim.sh

## bench-seeds: the seed papers' reproduction reports; runs every
## bench/seeds/*/run.sh (each rewrites its RESULTS.md, the adaptive-routing
## runs included) and every sim.sh (simulations: SIM.md, or for 002 section 5 of RESULTS.md)
.PHONY: bench-seeds
bench-seeds:
	@for s in bench/seeds/*/run.sh bench/seeds/*/sim.sh; do echo "== $$s"; $$s || exit 1; done

lint:
	$(GO) vet $(PKGS)
	@test -x $(STATICCHECK) || $(GO) install honnef.co/go/tools/cmd/staticcheck@v0.8.2
	$(STATICCHECK) $(PKGS)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

fmt:
	gofmt -w $$(git ls-files '*.go')

## fuzz: runs of every native fuzz target, FUZZTIME each (a duration, or
## a count of executions such as FUZZTIME=1000000x); crashers land in the
## package's testdata/fuzz/
fuzz:
	@for pkg in $$($(GO) list $(PKGS)); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; \
	    $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) $$pkg || exit 1; \
	  done; \
	done

## fixtures-opensm: rerun OpenSM's dfsssp on the known-answer fabrics that
## take it tens of seconds (8x8x8 torus, Kautz(7,3)) and rewrite their
## recordings in dfsssp/testdata/opensm-known-answers (needs ibsim, opensm)
.PHONY: fixtures-opensm
fixtures-opensm:
	NUESM_REQUIRE_TOOLS=1 $(GO) test -count=1 -timeout 60m -run '^TestOpenSMKnownAnswers$$' ./dfsssp -args -record-opensm

## default-fabric: regenerate the embedded default fabric from its generator
default-fabric: build
	./$(BIN)/nuesm gen clos2 --radix 36 -o internal/defaults/default.topo

clean:
	rm -rf $(BIN)
