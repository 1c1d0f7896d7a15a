# msgbridge: the bridge (one process per WhatsApp account) and its operator.
#
#   make run     the bridge on this machine, data in ./data
#   make test-unit  the fast tier: go test -short, no processes, envtest, browser or helm
#   make test-sim, test-process, test-envtest, test-e2e  one slower tier alone
#                   (docs/development/testing.md)
#   make test       everything: lint, unit, envtest and end-to-end tests (what CI runs)

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
IMG ?= msgbridge:$(VERSION)

# Tools are installed with `go install` into ./bin (git-ignored), pinned here.
LOCALBIN := $(CURDIR)/bin
CONTROLLER_TOOLS_VERSION ?= v0.23.0
GOLANGCI_LINT_VERSION ?= v2.15.0
HELM_VERSION ?= v3.22.0
CONTROLLER_GEN := $(LOCALBIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
GOLANGCI_LINT := $(LOCALBIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
HELM := $(LOCALBIN)/helm-$(HELM_VERSION)

LDFLAGS := -s -w -X github.com/msgbridge/msgbridge/contract.Version=$(VERSION)
GO_TEST_FLAGS ?= -race -count=1 -timeout 30m

# Every analyzer of `go vet`. make test runs them inside `go test -race`
# (-vet=$(VET_CHECKS)), on the packages the race build has just compiled,
# instead of a separate `go vet` that compiled the whole module and its
# test dependencies a second time without -race (31 of a cold CI run's 99
# minutes). The wasim build tag's files are vetted by golangci-lint's govet,
# which runs with that tag and the same analyzers (.golangci.yml).
VET_CHECKS := appends,asmdecl,assign,atomic,bools,buildtag,cgocall,composites,copylocks,defers,directive,errorsas,framepointer,hostport,httpresponse,ifaceassert,loopclosure,lostcancel,nilfunc,printf,shift,sigchanyzer,slog,stdmethods,stdversion,stringintconv,structtag,testinggoroutine,tests,timeformat,unmarshal,unreachable,unsafeptr,unusedresult,waitgroup

# $(call step,NAME,COMMAND) runs COMMAND and prints how long it took, so a
# CI log shows where the time goes (docs/development/ci.md: a cold run).
step = start=$$(date +%s); $(2); echo "make test step $(1): $$(( $$(date +%s) - start )) s"

.PHONY: all
all: build

##@ Development

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code for the API types.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate the CRD and RBAC manifests under config/ and copy them into the chart.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd paths=./api/... paths=./controllers/... \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	hack/sync-chart.sh
	go run ./hack/docgen

.PHONY: docs
docs: ## Rewrite the generated references of docs/ (the resource from the CRD, the settings from bridge/settings).
	go run ./hack/docgen

.PHONY: fmt
fmt: ## Format the code.
	gofmt -s -w $$(git ls-files '*.go' ':!third_party')

.PHONY: vet
vet: ## Run go vet (make test runs the same analyzers inside go test and golangci-lint).
	go vet ./...
	go vet -tags wasim ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint.
	@$(call step,lint,$(GOLANGCI_LINT) run ./...)

.PHONY: envtest
envtest: ## Build (or reuse) kube-apiserver and etcd for envtest.
	@$(call step,envtest binaries,hack/envtest-binaries.sh >/dev/null)

# The end-to-end test (test/e2e) brings up a real single-node cluster and
# needs root; make test builds its binaries only when it will run.
E2E_BINARIES := $(if $(filter 0,$(shell id -u)),e2e-binaries)

.PHONY: e2e-binaries
e2e-binaries: envtest ## Build (or reuse) kubelet, kube-proxy, ..., CoreDNS for the end-to-end cluster.
	@$(call step,e2e binaries,hack/e2e-binaries.sh >/dev/null)

.PHONY: e2e
e2e: e2e-binaries $(HELM) ## Run the end-to-end test alone: the chart on a real cluster (root; see docs/development/testing.md).
	HELM="$(HELM)" go test $(GO_TEST_FLAGS) -v -run '^TestChartOnRealCluster$$' ./test/e2e/

# FLEET_BRIDGES linked bridges on the end-to-end cluster's one node, after one
# alone as the baseline: times to Ready and connected, memory per bridge and of
# all pods, the operator's CPU and memory, a round trip through each. Long and
# heavy, so not in make test; without -race, to measure the programs as shipped.
FLEET_BRIDGES ?= 60

.PHONY: fleet-bench
fleet-bench: e2e-binaries $(HELM) ## Measure a fleet of linked bridges on the end-to-end cluster (root; see docs/operator/capacity.md).
	HELM="$(HELM)" FLEET_BENCH=$(FLEET_BRIDGES) go test -count=1 -timeout 60m -v -run '^TestFleetBench$$' ./test/e2e/ | grep --line-buffered -E 'FLEET|FIGURE|_test.go:|^(---|ok|FAIL)'

# The quick tier leaves out test/ (the process and cluster tiers): under
# -short their tests only skip, but after a change their test binaries, which
# link the whole bridge and the simulator, are compiled, vetted and linked
# again (a third of the tier's time after a one-line change in bridge/).
UNIT_PACKAGES = $$(go list ./... | grep -v '^github.com/msgbridge/msgbridge/test/')

.PHONY: test-unit
test-unit: ## Tier 1: the fast tests (-short: no simulator, bridge process, envtest, browser, helm).
	go test -short $(UNIT_PACKAGES)

# The tiers above the unit tier, each alone (docs/development/testing.md:
# what each needs and how long it takes). make test runs all of them in one
# go test; these run one tier while you work on it. A tier is chosen by its
# packages, not by tags: the simulator's tests live in the packages of the
# WhatsApp link and the simulator, the process tier in test/process, the
# cluster tier in test/e2e, and the API server's in controllers/ and the
# root package (generated files, chart values, docs).
SIM_PACKAGES := ./bridge/wasim/... ./bridge/whatsapp/...
ENVTEST_PACKAGES := . ./controllers/...

.PHONY: test-sim
test-sim: ## Tier 2: the real whatsmeow client against the simulator (bridge/wasim, bridge/whatsapp).
	go test $(GO_TEST_FLAGS) $(SIM_PACKAGES)

.PHONY: test-process
test-process: ## Tier 3: the bridge binary as a process against the simulator, headless Chromium (test/process).
	go test $(GO_TEST_FLAGS) ./test/process/

.PHONY: test-envtest
test-envtest: envtest $(CONTROLLER_GEN) $(HELM) ## Tier 4: the operator against a real kube-apiserver and etcd (envtest).
	KUBEBUILDER_ASSETS="$$(hack/envtest-binaries.sh)" CONTROLLER_GEN="$(CONTROLLER_GEN)" HELM="$(HELM)" \
		go test $(GO_TEST_FLAGS) $(ENVTEST_PACKAGES)

.PHONY: test-e2e
test-e2e: e2e-binaries $(HELM) ## Tier 5: the chart on a real single-node cluster (root; test/e2e).
	HELM="$(HELM)" go test $(GO_TEST_FLAGS) ./test/e2e/

# Every request the tests send to a bridge, and every webhook they receive, is
# checked against the API description (internal/apitest); each test package
# records the operations it exercised here, and a last step fails when a
# documented operation went untested (its table: $(API_COVERAGE)/coverage.md).
API_COVERAGE := $(CURDIR)/bin/api-coverage

.PHONY: test
test: lint envtest $(E2E_BINARIES) $(CONTROLLER_GEN) $(HELM) ## Run every test: lint, unit, envtest, end-to-end.
	rm -rf $(API_COVERAGE) && mkdir -p $(API_COVERAGE)
	@$(call step,go test,KUBEBUILDER_ASSETS="$$(hack/envtest-binaries.sh)" CONTROLLER_GEN="$(CONTROLLER_GEN)" HELM="$(HELM)" \
		APITEST_COVERAGE_DIR=$(API_COVERAGE) go test $(GO_TEST_FLAGS) -vet=$(VET_CHECKS) ./...)
	$(MAKE) test-alerts
	APITEST_COVERAGE_DIR=$(API_COVERAGE) APITEST_COVERAGE_CHECK=1 \
		go test -count=1 -run '^TestOpenAPICoverage$$' ./bridge/httpapi/openapi
	$(MAKE) bench-send

# The send path's accepted rate next to a bare handler, printed on every
# make test so that a regression shows the day it lands (a few seconds; what
# grows with the queue shows at 20,000 sends, and the previous releases beside
# it: RELEASE=1 hack/perf-baseline.sh REF,REF AcceptedSends -benchtime=20000x).
.PHONY: bench-send
bench-send: ## Benchmark POST /send accepted while unlinked, next to a bare handler.
	go test -count=1 -run=NONE -bench='^BenchmarkAcceptedSends$$' -benchtime=2000x ./test/process

# The chart's alerts in Prometheus' own scrape loop and rule engine. Built with
# -tags prometheus only: Prometheus' config package brings the cloud SDKs.
.PHONY: test-alerts
test-alerts: envtest $(HELM) ## Run the chart's alerts through a real Prometheus scrape and rule engine.
	@$(call step,alerts,KUBEBUILDER_ASSETS="$$(hack/envtest-binaries.sh)" HELM="$(HELM)" \
		go test $(GO_TEST_FLAGS) -tags prometheus -run '^TestAlertsNameTheBridgesNamespace$$' ./controllers/)

.PHONY: screenshots
screenshots: ## Retake the dashboard screenshots of docs/user/dashboard.md (needs Debian's chromium; the disk-full one root, for a tmpfs).
	DASHBOARD_SCREENSHOTS="$(CURDIR)/bridge/httpapi/dashboard/screenshots" go test -count=1 -run 'TestDashboardInBrowser|TestDashboardPagesInBrowser|TestDashboardConversationShowsWhatWasSaid|TestDashboardDiskFullBanner' ./test/process

##@ Build

.PHONY: build
build: ## Build bin/manager and bin/bridge.
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o bin/manager .
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o bin/bridge ./bridge/cmd/bridge

.PHONY: docker-build
docker-build: ## Build the image $(IMG): /manager and /bridge (needs a Docker engine).
	docker build --build-arg VERSION=$(VERSION) -t $(IMG) .

.PHONY: helm-lint
helm-lint: $(HELM) ## Lint the Helm chart.
	$(HELM) lint --strict charts/msgbridge

.PHONY: run
run: ## Run the bridge on this machine (data in ./data, dev credentials generated once).
	VERSION=$(VERSION) hack/run-bridge.sh

.PHONY: demo
demo: ## Run the WhatsApp simulator and a bridge connected to it (README.md: Quickstart).
	VERSION=$(VERSION) hack/demo.sh

.PHONY: run-operator
run-operator: manifests generate ## Run the operator against the current kubeconfig.
	go run -ldflags '$(LDFLAGS)' . --leader-elect=false

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-14s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Tools

$(CONTROLLER_GEN):
	@$(call step,install controller-gen,GOBIN=$(LOCALBIN) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION))
	mv $(LOCALBIN)/controller-gen $@

$(GOLANGCI_LINT):
	@$(call step,install golangci-lint,GOBIN=$(LOCALBIN) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION))
	mv $(LOCALBIN)/golangci-lint $@

$(HELM):
	@$(call step,install helm,GOBIN=$(LOCALBIN) go install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION))
	mv $(LOCALBIN)/helm $@

##@ The engine

.PHONY: whatsmeow-upgrade
whatsmeow-upgrade: ## Move to another whatsmeow: make whatsmeow-upgrade VERSION=v0.0.0-… (docs/development/whatsmeow.md).
	@test "$(origin VERSION)" = "command line" || { echo 'usage: make whatsmeow-upgrade VERSION=v0.0.0-YYYYMMDDhhmmss-abcdef123456' >&2; exit 2; }
	hack/whatsmeow-upgrade.sh "$(VERSION)"
