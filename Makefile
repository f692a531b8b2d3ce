# svclab — see README.md. `make help` lists the targets.
#
# Most targets need root (network namespaces, iptables in them). Under sudo,
# PATH is reset, so Go is looked up where the Go installer puts it too.
GO       ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
BIN      := bin/svclab
# The revision `svclab version` prints (Go's own VCS stamping may be off, or
# refused by git under sudo); empty outside a git tree.
REVISION ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)
# The conformance suite, a test binary of its own beside the CLI (as
# Kubernetes ships e2e.test): `svclab conformance` runs it.
CONFORMANCE_BIN := bin/svclab-conformance.test
# Debian packages, installed when missing by the targets that need them
# (apt-get, like `make deps`). internal/hostprog declares every program
# svclab runs and its package; its TestMakefileAptLists keeps these lists
# equal to what hostprog says each use needs.
# LAB_APT_PKGS: make lab, lab-nodeport and lesson (the labs, their proxies,
# the lessons' commands).
LAB_APT_PKGS  := iproute2 iptables nftables conntrack ipset ipvsadm
# TEST_APT_PKGS: the tests besides (make deps, test…): qemu runs the IPVS
# tests in a VM with Debian's stock kernel when this one lacks IPVS,
# chromium loads svclab ui's page, curl and sysctl are run by tests.
TEST_APT_PKGS := $(LAB_APT_PKGS) curl procps qemu-system-x86 xz-utils chromium
# LOAD_APT_PKGS: make test-repeat LOAD=1's CPU hog (none of svclab's programs).
LOAD_APT_PKGS := stress-ng
# staticcheck for make lint, installed into bin/tools/ by the installed Go
# (GOTOOLCHAIN=local: lint never downloads a toolchain). 2026.2.2 knows Go 1.26.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := bin/tools/staticcheck-$(STATICCHECK_VERSION)/staticcheck
# lint's environment: the installed Go, also for the go commands staticcheck
# runs itself (sudo resets PATH).
LINT_ENV = GOTOOLCHAIN=local PATH="$(shell $(GO) env GOROOT)/bin:$$PATH"
# make test-repeat: the root-test packages (host specs: the VM tests skip),
# COUNT runs one after another; LOAD=1 keeps both cores busy meanwhile.
COUNT ?= 5
PKGS  ?= ./labs/netns/ ./labs/netns/trace/ ./tools/ui/ ./tools/cli/ ./tools/workshop/ ./scenarios/
SKIP  ?= InVM
TEST_TIMEOUT ?= 30m
# The VM suites: the tests that run a package's IPVS tests in svclab's VM
# when this kernel has no IPVS (vmtest). make test runs them beside the rest.
VM_SUITES := InVM$$
VM_PKGS   := ./scenarios/ ./proxy/ipvs/ ./labs/netns/trace/ ./tools/workshop/
# Their package's limit: each suite's own VM limit (scenarios' 60m the
# longest) plus building its test binary.
VM_TEST_TIMEOUT ?= 70m
CNI      ?= canal
# Fuzz targets: every `func FuzzX(f *testing.F)` under proxy/, labs/,
# internal/ and tools/, found in the sources as "dir:FuzzX". `make fuzz` runs each for
# FUZZTIME; `make test` runs each for FUZZSMOKE (go test alone only runs
# their seed corpora). Crashers land in dir/testdata/fuzz/FuzzX/: fix the
# bug and keep the file as the regression seed.
FUZZTIME  ?= 60s
# A count, not a duration: with a duration, Go before 1.27 may fail a target
# with a bare "context deadline exceeded" when the time runs out while a
# worker is busy (golang/go#75804), which a loaded 2-core CI machine hit.
FUZZSMOKE ?= 300x
# tools/upstream is a module of its own: make fuzz-upstream fuzzes it.
FUZZ_TARGETS = $(shell grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' proxy labs internal tools | grep -v '^tools/upstream/' | sed 's|/[^/]*_test\.go:func |:|' | sort -u)

.DEFAULT_GOAL := help
.PHONY: help deps deps-lab lint build dist root-check lab-nodeport lab lesson test test-on-host test-in-vm test-repeat test-times test-families test-upstream bench-upstream bench-sync fuzz-upstream test-vm e2e-kind test-unit test-scenarios fuzz fuzz-smoke bench clean-labs clean

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# apt_install,PKGS: install the Debian packages of PKGS that are missing.
apt_install = missing=""; for p in $(1); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

deps: ## install the Debian packages the labs and tests need (TEST_APT_PKGS; see internal/hostprog)
	@$(call apt_install,$(TEST_APT_PKGS))

deps-lab: ## install the Debian packages the labs and lessons need (LAB_APT_PKGS), no emulator or browser
	@$(call apt_install,$(LAB_APT_PKGS))

# Static binaries (CGO_ENABLED=0): svclab's image (`svclab image build`)
# holds just the two files, with no C library for a dynamic one.
build: ## build the CLI into bin/svclab and the conformance suite into bin/svclab-conformance.test (static)
	CGO_ENABLED=0 $(GO) build -ldflags "-X github.com/svclab/svclab/internal/buildinfo.revision=$(REVISION)" -o $(BIN) ./tools/svclab
	CGO_ENABLED=0 $(GO) test -c -o $(CONFORMANCE_BIN) ./scenarios/conformance/e2e

# Release archives, one per architecture in DIST_ARCHES: the two static
# binaries `make build` makes (trimmed paths), README.md (the README's
# opening and its "Install from a release archive") and LICENSE when there
# is one, as svclab-REVISION-linux-ARCH/ in a .tar.gz with the commit's
# time and root's owner (same tree, same bytes), then SHA256SUMS.
DIST_DIR    := _dist
DIST_ARCHES ?= amd64 arm64
dist: ## release archives for linux amd64 and arm64 (static svclab and svclab-conformance.test, README, sha256 sums) into _dist/
	@rm -rf $(DIST_DIR) && mkdir -p $(DIST_DIR)
	@epoch=$$(git log -1 --format=%ct 2>/dev/null || echo 0); \
	for arch in $(DIST_ARCHES); do \
		name=svclab-$(or $(REVISION),dev)-linux-$$arch; dir=$(DIST_DIR)/$$name; mkdir -p $$dir || exit 1; \
		echo "building $$name"; \
		CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build -trimpath -ldflags "-X github.com/svclab/svclab/internal/buildinfo.revision=$(REVISION)" -o $$dir/svclab ./tools/svclab || exit 1; \
		CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) test -c -trimpath -o $$dir/svclab-conformance.test ./scenarios/conformance/e2e || exit 1; \
		awk '/^## Two commands/ { skip = 1 } /^### Install from a release archive/ { skip = 0 } /^## Make targets/ { exit } !skip' README.md > $$dir/README.md; \
		[ ! -f LICENSE ] || cp LICENSE $$dir/; \
		tar -C $(DIST_DIR) --sort=name --owner=0 --group=0 --numeric-owner --mtime=@$$epoch -cf - $$name | gzip -9n > $(DIST_DIR)/$$name.tar.gz || exit 1; \
		rm -rf $$dir; \
	done; \
	cd $(DIST_DIR) && sha256sum *.tar.gz > SHA256SUMS && cat SHA256SUMS

root-check:
	@[ "$$(id -u)" = 0 ] || { echo "this target needs root (network namespaces, iptables): run sudo make $(MAKECMDGOALS)"; exit 1; }

lab-nodeport: root-check deps-lab build ## seed 004 hop by hop: client → HOSTA:30000 → VXLAN → pod on HOSTB, SNAT; the lesson seed-004-nodeport at once (CNI=canal|flannel-vxlan|calico-proxyarp, KEEP=1)
	@./$(BIN) tour nodeport --cni "$(CNI)"

lab: root-check deps-lab build ## the single-node tour, the lesson seed-001-ladder at once: 3000 connections over 3 pods, the 1/3, 1/2, 1 ladder (KEEP=1 keeps the lab)
	@./$(BIN) tour single-node

lesson: root-check deps-lab build ## a workshop lesson at once, every step live, then its lab deleted (LESSON=name, see svclab workshop list; CNI=, KEEP=1)
	@[ -n "$(LESSON)" ] || { ./$(BIN) workshop list; echo "make lesson LESSON=NAME runs one"; exit 1; }
	@./$(BIN) tour lesson "$(LESSON)" $(if $(filter command line environment,$(origin CNI)),--cni "$(CNI)")

# timed,NAME,COMMAND: run COMMAND, add "SECONDSs NAME" to _out/test-times.txt.
timed = t0=$$(date +%s); $(2); rc=$$?; echo "$$(( $$(date +%s) - t0 ))s $(1)" >> _out/test-times.txt; exit $$rc

test: root-check deps build ## lint, then every test: unit, kernel integration and the scenarios (as root), then each fuzz target briefly; the VM suites run beside it all from the start; ends with where the time went
	@mkdir -p _out && rm -f _out/test-times.txt _out/slowest-specs.txt _out/test-vm.log _out/test-vm.rc
	@$(MAKE) --no-print-directory -j2 test-on-host test-in-vm
	@$(MAKE) --no-print-directory test-times

# make test's two halves, run side by side (make -j2). The VM suites (the
# IPVS tests under qemu's TCG, every instruction emulated) are its long
# pole: started with lint rather than when go test ./... reaches their
# packages, they overlap it instead of following it. Their output goes to
# _out/test-vm.log; each half prints its result lines as it ends.
test-on-host:
	@$(call timed,make lint,$(MAKE) --no-print-directory lint)
	@$(call timed,go test ./...,{ SVCLAB_BIN=$(CURDIR)/$(BIN) SVCLAB_SLOWEST_SPECS=$(CURDIR)/_out/slowest-specs.txt \
		$(GO) test -count=1 -timeout $(TEST_TIMEOUT) -skip '$(VM_SUITES)' ./... 2>&1; echo $$? > _out/test.rc; } | tee _out/test.log; (exit $$(cat _out/test.rc)))
	@$(call timed,make test-families,$(MAKE) --no-print-directory test-families)
	@$(call timed,make test-upstream,$(MAKE) --no-print-directory test-upstream)
	@$(call timed,make fuzz-smoke,$(MAKE) --no-print-directory fuzz-smoke)

test-in-vm:
	@echo "the VM suites (tests named *InVM in $(VM_PKGS)) run beside the rest; their output: _out/test-vm.log"
	@$(call timed,go test (the VM suites),{ SVCLAB_BIN=$(CURDIR)/$(BIN) \
		$(GO) test -count=1 -timeout $(VM_TEST_TIMEOUT) -run '$(VM_SUITES)' -v $(VM_PKGS) > _out/test-vm.log 2>&1; echo $$? > _out/test-vm.rc; }; \
		grep -E '^(ok|FAIL|--- |panic:)' _out/test-vm.log | sed 's/^/[vm] /'; rc=$$(cat _out/test-vm.rc); \
		[ "$$rc" = 0 ] || { echo "[vm] the VM suites failed; the end of _out/test-vm.log:"; tail -n 400 _out/test-vm.log; }; (exit $$rc))

test-times: ## where the last make test's time went: its steps, slowest packages and specs (from _out/)
	@echo "make test's steps (_out/test-times.txt):"; sort -rn _out/test-times.txt 2>/dev/null | sed 's/^/  /'
	@echo "slowest packages (_out/test.log):"; \
		cat _out/test.log _out/test-vm.log 2>/dev/null | awk '($$1 == "ok" || $$1 == "FAIL") && $$3 ~ /^[0-9.]+s$$/ { print $$3 + 0, $$2 }' | \
		sort -rn | head -10 | awk '{ printf "  %7.1fs  %s\n", $$1, $$2 }'
	@cat _out/slowest-specs.txt 2>/dev/null || true

lint: $(STATICCHECK) ## go vet, staticcheck (staticcheck.conf) and go mod tidy -diff, in both modules (tools/upstream too)
	$(LINT_ENV) $(GO) vet ./...
	$(LINT_ENV) ./$(STATICCHECK) ./...
	$(LINT_ENV) $(GO) mod tidy -diff
	cd tools/upstream && $(LINT_ENV) $(GO) vet ./...
	cd tools/upstream && $(LINT_ENV) $(CURDIR)/$(STATICCHECK) ./...
	cd tools/upstream && $(LINT_ENV) $(GO) mod tidy -diff

$(STATICCHECK):
	GOTOOLCHAIN=local GOBIN=$(CURDIR)/$(dir $(STATICCHECK)) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

test-repeat: root-check deps build ## run PKGS' tests COUNT times (5) as make test does, VM tests skipped (SKIP=InVM): "run i/COUNT: ok|FAIL"; LOAD=1 keeps both cores busy with stress-ng meanwhile
	@$(if $(filter 1,$(LOAD)),$(call apt_install,$(LOAD_APT_PKGS)))
	@mkdir -p _out; \
	if [ "$(LOAD)" = 1 ]; then \
		stress-ng --cpu 2 >_out/stress-ng.log 2>&1 & load=$$!; \
		trap 'kill $$load 2>/dev/null; wait $$load 2>/dev/null' EXIT; trap 'exit 130' INT TERM HUP; \
		echo "load: stress-ng --cpu 2 (pid $$load) until the last run ends"; \
	fi; \
	pass=0; fail=0; \
	for i in $$(seq 1 $(COUNT)); do \
		log=_out/test-repeat-$$i.log; t0=$$(date +%s); \
		if SVCLAB_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout $(TEST_TIMEOUT) $(if $(SKIP),-skip '$(SKIP)') $(PKGS) >$$log 2>&1; \
		then pass=$$((pass + 1)); echo "run $$i/$(COUNT): ok ($$(( $$(date +%s) - t0 ))s)"; \
		else fail=$$((fail + 1)); echo "run $$i/$(COUNT): FAIL ($$(( $$(date +%s) - t0 ))s, $$log)"; fi; \
		grep -E '^(ok|FAIL|--- FAIL|panic:)' $$log | sed 's/^/    /'; \
	done; \
	echo "$$pass passed, $$fail failed ($(COUNT) runs of $(PKGS)$(if $(filter 1,$(LOAD)), under stress-ng --cpu 2))"; \
	[ $$fail -eq 0 ]

# tools/upstream is a module of its own (it links k8s.io/kubernetes), so the
# root `go test ./...` never sees it. Its first build takes minutes; Go's
# build cache keeps it.
test-upstream: ## compare svclab's iptables tables and nftables table with upstream kube-proxy's real proxiers on the corpus (tools/upstream; root or user namespaces)
	cd tools/upstream && $(GO) vet ./... && $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

bench-upstream: ## svclab's iptables path vs upstream kube-proxy's real proxiers on the same objects, interleaved: a table of ratios (tools/upstream TestSpeedAgainstUpstream; root or user namespaces)
	cd tools/upstream && SVCLAB_BENCH_UPSTREAM=1 nice $(GO) test -count=1 -timeout 60m -run '^TestSpeedAgainstUpstream$$' -v .

# make bench-sync: svclab bench sync's measurement, svclab-bench-sync, is
# built from tools/upstream (it links k8s.io/kubernetes) next to bin/svclab.
SYNC_MODE      ?= iptables
SYNC_SERVICES  ?= 0
SYNC_ENDPOINTS ?= 10
SYNC_FLAGS     ?=
bench-sync: build ## svclab's proxy vs upstream kube-proxy's proxier of SYNC_MODE (iptables, nftables, ipvs: in the VM where the kernel has no IPVS), each on the real kernel in a netns of its own: event → kernel p50/p95, execs per sync, RSS (svclab bench sync; SYNC_FLAGS e.g. "--iptables legacy --changes 20"; root)
	cd tools/upstream && CGO_ENABLED=0 $(GO) build -o $(CURDIR)/bin/svclab-bench-sync ./cmd/svclab-bench-sync
	nice ./$(BIN) bench sync --mode $(SYNC_MODE) --services $(SYNC_SERVICES) --endpoints $(SYNC_ENDPOINTS) $(SYNC_FLAGS)

fuzz-upstream: ## fuzz svclab's iptables tables and nftables table against upstream kube-proxy's, FUZZTIME each (the fuzz build instruments k8s.io/kubernetes: minutes the first time)
	cd tools/upstream && $(GO) test -run '^$$' -fuzz '^FuzzIPTablesMatchesUpstream$$' -fuzztime $(FUZZTIME) .
	cd tools/upstream && $(GO) test -run '^$$' -fuzz '^FuzzNFTablesMatchesUpstream$$' -fuzztime $(FUZZTIME) .

test-vm: root-check deps build ## run the IPVS tests inside the VM (Debian's stock kernel under qemu)
	SVCLAB_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout $(VM_TEST_TIMEOUT) -run '$(VM_SUITES)' -v $(VM_PKGS)

e2e-kind: root-check deps build ## kind clusters, offline: build the node image (and the real flannel's images) if missing, run the conformance scenarios on kind: 6 clusters, one dual-stack (JUnit in _out/; ~55 min cold)
	SVCLAB_E2E_KIND=1 GO=$(GO) SVCLAB_BIN=$(CURDIR)/$(BIN) SVCLAB_CONFORMANCE_BIN=$(CURDIR)/$(CONFORMANCE_BIN) SVCLAB_ARTIFACTS=$(CURDIR)/_out \
		$(GO) test -count=1 -timeout 80m -run 'TestIntegrationKind$$' -v ./scenarios/kinde2e/

# DUAL_FILTER: the specs run on the dual-stack and IPv6 labs of the other
# two CNIs (the split, the three-pod ladder, NodePort with its SNAT, the
# dual-stack ones).
DUAL_FILTER := distribution || nodeport || dual-stack

test-families: root-check deps build ## the conformance scenarios on dual-stack (each spec in IPv4 and IPv6) and IPv6-only netns labs: all of them on canal, $(DUAL_FILTER) on flannel-vxlan and calico-proxyarp
	for family in dual ipv6; do \
		SVCLAB_BIN=$(CURDIR)/$(BIN) SVCLAB_IP_FAMILY=$$family SVCLAB_CNI=canal \
			$(GO) test -count=1 -timeout $(TEST_TIMEOUT) -run '^TestConformanceOnLabs$$' ./scenarios/conformance/ || exit 1; \
		for cni in flannel-vxlan calico-proxyarp; do \
			SVCLAB_BIN=$(CURDIR)/$(BIN) SVCLAB_IP_FAMILY=$$family SVCLAB_CNI=$$cni \
				$(GO) test -count=1 -timeout $(TEST_TIMEOUT) -run '^TestConformanceOnLabs$$' ./scenarios/conformance/ -args -ginkgo.label-filter '$(DUAL_FILTER)' || exit 1; \
		done; \
	done

test-unit: ## run the tests that need no root (root tests skip with a message)
	$(GO) test ./...

test-scenarios: root-check deps build ## run only the ginkgo scenarios (labs, conformance on labs), verbosely
	SVCLAB_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./scenarios/ ./scenarios/conformance/ -ginkgo.v

fuzz: ## run each fuzz target for FUZZTIME (60s), one after another; crashers go to testdata/fuzz
	@echo "fuzz targets ($(FUZZTIME) each):"; for t in $(FUZZ_TARGETS); do echo "  $$t"; done
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t##*:}; echo "== $$fn in ./$$pkg for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) ./$$pkg || exit 1; \
	done

fuzz-smoke: ## run each fuzz target briefly under the fuzzer (FUZZSMOKE: 300 inputs each)
	@$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZSMOKE)

bench: ## run the benchmarks (renderer, lab bring-up) and print their tables
	$(GO) test -run '^$$' -bench . -benchmem ./proxy/... ./labs/... ./tools/bench/

clean-labs: build ## delete every lab, also crashed ones
	./$(BIN) delete labs --all

clean: ## remove build output
	rm -rf bin _dist
