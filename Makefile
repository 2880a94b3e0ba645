# vmerge: `make run` merges the bundled fixtures into a demo MP4; `make test` runs every test.
# Both install what is missing first (scripts/install-deps.sh).

# The Swift toolchain may live outside PATH (e.g. /opt/swift on these machines).
ifneq ($(wildcard /opt/swift/usr/bin/swift),)
export PATH := /opt/swift/usr/bin:$(PATH)
endif
SWIFT ?= swift
# FFMPEG_PREFIX=/path/to/ffmpeg-7.1 builds and tests against another FFmpeg install, in its own
# build folder (CI and `make test` use the system's).
# The binaries carry the prefix's lib folder as their run path, so a test that starts vmerge with a
# cleared environment still gets that FFmpeg, not the system's.
ifdef FFMPEG_PREFIX
export PKG_CONFIG_PATH := $(FFMPEG_PREFIX)/lib/pkgconfig:$(PKG_CONFIG_PATH)
export LD_LIBRARY_PATH := $(FFMPEG_PREFIX)/lib$(if $(LD_LIBRARY_PATH),:$(LD_LIBRARY_PATH))
SWIFT_FLAGS += --scratch-path .build/ffmpeg-$(notdir $(FFMPEG_PREFIX)) -Xlinker -rpath -Xlinker $(FFMPEG_PREFIX)/lib
# An old-style run path (DT_RPATH) also serves the libraries' own dependencies (libavfilter's
# libpostproc up to FFmpeg 7), which a DT_RUNPATH does not.
ifneq ($(shell uname -s),Darwin)
SWIFT_FLAGS += -Xlinker --disable-new-dtags
endif
endif
# Set by test-ffmpeg: a test checks that the binaries run on that FFmpeg, not on the system's.
export FFMPEG_EXPECTED_VERSION
# What is made once and kept for later runs lives outside the clone, so that a fresh clone (CI's) or
# `make clean` does not make it again: the upstream FFmpeg builds and the Debian roots. Shared by every
# clone of the machine's user; their scripts lock it (XDG's cache folder, else ~/.cache).
VMERGE_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/vmerge
# Exported: install-deps.sh makes the S3 test server's virtualenv in it, and the remote tests run that.
export VMERGE_CACHE
# The remote tests' S3 server (moto) and its pinned packages, made by scripts/install-deps.sh.
S3SERVER_VENV := $(VMERGE_CACHE)/s3server
# `make test-ffmpeg FFMPEG_VERSION=9.0.2`: the suite against an upstream FFmpeg built from Debian's
# source tarball into FFMPEG_CACHE/<version> (scripts/ffmpeg-prefix.sh; built once, ~15 min on 2 cores).
# FFMPEG_NEWEST is the newest release, the one CI tests after the system's.
FFMPEG_CACHE ?= $(VMERGE_CACHE)/ffmpeg
FFMPEG_NEWEST := 9.0.2
# Homebrew's libpq is keg-only: its libpq.pc is not where pkg-config looks (CLibPQ needs it).
# Its curl likewise (CCurl; macOS's own libcurl has no .pc).
ifeq ($(shell uname -s),Darwin)
LIBPQ_PKGCONFIG := $(shell brew --prefix libpq 2>/dev/null)/lib/pkgconfig
CURL_PKGCONFIG := $(shell brew --prefix curl 2>/dev/null)/lib/pkgconfig
export PKG_CONFIG_PATH := $(LIBPQ_PKGCONFIG):$(CURL_PKGCONFIG):$(PKG_CONFIG_PATH)
endif
# The release binary carries the Swift runtime and Foundation inside it (Linux): installed, it needs
# only the system's libraries (FFmpeg, libpq, libmicrohttpd, libc, libstdc++), not the toolchain
# (`make test-install`).
RELEASE_FLAGS := -c release $(SWIFT_FLAGS)
# No $ORIGIN run path either: the libraries come from the system's folders, not the binary's own.
# Relocations read-only after start-up (full RELRO: -z relro -z now), as Debian's hardening flags
# ask (lintian's hardening-no-bindnow); the binary is already position-independent (PIE).
ifneq ($(shell uname -s),Darwin)
RELEASE_FLAGS += --static-swift-stdlib --disable-local-rpath -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now
endif
DEMO_DIR := demo
# `make install` / `make uninstall`: PREFIX=/usr, DESTDIR=/tmp/stage (packaging); each folder can be overridden.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
MAN1DIR ?= $(PREFIX)/share/man/man1
BASH_COMPLETION_DIR ?= $(PREFIX)/share/bash-completion/completions
ZSH_COMPLETION_DIR ?= $(PREFIX)/share/zsh/site-functions
FISH_COMPLETION_DIR ?= $(PREFIX)/share/fish/vendor_completions.d
FIXTURES := $(sort $(wildcard fixtures/[a-k]_*.mov))

.PHONY: all deps build release run test fixtures doctor format lint clean bench fuzz test-asan test-tsan install uninstall test-install test-ffmpeg deps-build deb test-deb test-image print-ffmpeg-newest print-caches docs

all: build

deps:
	@bash scripts/install-deps.sh

deps-build:
	@bash scripts/install-deps.sh --build

build: deps
	$(SWIFT) build $(SWIFT_FLAGS)

# Only the vmerge product: what install, deb and the image's build stage use (the example and the
# fuzzer's plain build would add two static links to every release build).
release: deps-build
	$(SWIFT) build $(RELEASE_FLAGS) --product vmerge

run: release
	@mkdir -p $(DEMO_DIR)
	$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/vmerge -y $(FIXTURES) -o $(DEMO_DIR)/demo.mp4
	@echo "demo: $(CURDIR)/$(DEMO_DIR)/demo.mp4"

# A plain build first: it builds every target (the example and the fuzzer too), and fails if one
# of them (the shared test support) needs what only test builds have.
# The queue's tests run beside the rest, in a second process (scripts/run-tests.sh).
test: deps
	$(SWIFT) build $(SWIFT_FLAGS)
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)
	bash scripts/run-tests.sh $(SWIFT) $(SWIFT_FLAGS)

# The Swift API's DocC archive (public symbols of the VMerge library) into .build/docs.
docs: build
	@bash scripts/make-docs.sh "$$($(SWIFT) build $(SWIFT_FLAGS) --show-bin-path)" .build/docs/VMerge.doccarchive

# Installs the release binary, its man page and its bash, zsh and fish completions; the last four are generated by
# the binary itself from its option table (hidden options --print-man-page, --print-completion <shell>).
install: release
	install -d "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(MAN1DIR)" "$(DESTDIR)$(BASH_COMPLETION_DIR)" \
		"$(DESTDIR)$(ZSH_COMPLETION_DIR)" "$(DESTDIR)$(FISH_COMPLETION_DIR)"
	bin=$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) && \
	"$$bin/vmerge" --print-man-page > "$$bin/vmerge.1" && \
	"$$bin/vmerge" --print-completion bash > "$$bin/vmerge.bash" && \
	"$$bin/vmerge" --print-completion zsh > "$$bin/_vmerge" && \
	"$$bin/vmerge" --print-completion fish > "$$bin/vmerge.fish" && \
	install -m 755 "$$bin/vmerge" "$(DESTDIR)$(BINDIR)/vmerge" && \
	install -m 644 "$$bin/vmerge.1" "$(DESTDIR)$(MAN1DIR)/vmerge.1" && \
	install -m 644 "$$bin/vmerge.bash" "$(DESTDIR)$(BASH_COMPLETION_DIR)/vmerge" && \
	install -m 644 "$$bin/_vmerge" "$(DESTDIR)$(ZSH_COMPLETION_DIR)/_vmerge" && \
	install -m 644 "$$bin/vmerge.fish" "$(DESTDIR)$(FISH_COMPLETION_DIR)/vmerge.fish"

# The installed binary as a user gets it: `make install` into a staging folder, then a merge of the
# fixtures with the Swift toolchain hidden (a mount namespace with an empty folder over it).
STAGE := $(CURDIR)/.build/stage
test-install: deps
	rm -rf "$(STAGE)"
	$(MAKE) install DESTDIR="$(STAGE)" PREFIX=/usr
	bash scripts/test-installed.sh "$(STAGE)/usr/bin/vmerge" "$$(dirname "$$(dirname "$$(command -v $(SWIFT))")")" $(FIXTURES)

print-ffmpeg-newest:
	@echo $(FFMPEG_NEWEST)

# Where the FFmpeg builds, the Debian roots and the S3 test server are kept (`make -s print-caches`).
print-caches:
	@echo "FFMPEG_CACHE=$(FFMPEG_CACHE)"
	@echo "ROOTFS_CACHE=$(ROOTFS_CACHE)"
	@echo "S3SERVER_VENV=$(S3SERVER_VENV)"

# The shared lock keeps ffmpeg-prefix.sh (which takes it alone) from rebuilding a prefix a suite runs on.
# The build is a line of its own, apart from the one naming $(MAKE), which make runs even under -n:
# `make -n test-ffmpeg` shows the steps and builds nothing (the prefix is CACHE/VERSION, as the script says).
test-ffmpeg: deps
	@test -n "$(FFMPEG_VERSION)" || { echo "usage: make test-ffmpeg FFMPEG_VERSION=$(FFMPEG_NEWEST) (an FFmpeg release in Debian's archive)" >&2; exit 2; }
	@bash scripts/install-deps.sh --ffmpeg-build
	bash scripts/ffmpeg-prefix.sh "$(FFMPEG_VERSION)" "$(FFMPEG_CACHE)" > /dev/null
	flock -s "$(FFMPEG_CACHE)/work-$(FFMPEG_VERSION)/lock" \
		$(MAKE) test FFMPEG_PREFIX="$(abspath $(FFMPEG_CACHE))/$(FFMPEG_VERSION)" FFMPEG_EXPECTED_VERSION="$(FFMPEG_VERSION)"

# dist/vmerge_<version>_<arch>.deb from the release binary, its man page and completions (zsh's where
# Debian's zsh looks for packages' own); Depends comes from the libraries it links (dpkg-shlibdeps).
DIST := $(CURDIR)/dist
DEB_STAGE := $(CURDIR)/.build/deb-stage
deb: deps-build
	rm -rf "$(DEB_STAGE)"
	$(MAKE) install DESTDIR="$(DEB_STAGE)" PREFIX=/usr ZSH_COMPLETION_DIR=/usr/share/zsh/vendor-completions
	@deb=$$(bash scripts/make-deb.sh "$(DEB_STAGE)" "$(DIST)") && echo "deb: $$deb"

# The package and the container image as a user gets them, in a clean minimal Debian 12 root made by
# debootstrap (cached in ROOTFS_CACHE; root or sudo needed): test-deb checks the package with lintian,
# does `apt-get install ./vmerge.deb` in the root, merges the fixtures, verifies the systemd units and
# runs their commands as their user (scripts/test-rootfs.sh says how); test-image replays both of the
# Dockerfile's stages (no Docker engine is needed): the build stage from the build context docker
# would send, then the run stage with the package it made, and runs the image's entry point on the
# fixtures as the image's user.
# The roots are root's files in the user's cache (test-rootfs.sh makes the folder as the user first).
ROOTFS_CACHE ?= $(VMERGE_CACHE)/rootfs
# Then PackageFactsTests holds the README's figures of the package (Depends, sizes) to the built one.
test-deb: deb
	@bash scripts/install-deps.sh --rootfs
	bash scripts/test-rootfs.sh deb "$(ROOTFS_CACHE)" "$$(ls -t $(DIST)/vmerge_*.deb | head -1)" $(FIXTURES)
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)
	VMERGE_DEB="$$(ls -t $(DIST)/vmerge_*.deb | head -1)" VMERGE_RELEASE_BIN="$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/vmerge" \
		$(SWIFT) test --skip-build --disable-swift-testing $(SWIFT_FLAGS) --filter PackageFactsTests

# test-image needs no package of the host's: it builds its own in the replayed build stage, with
# this toolchain (the folder above its usr/bin) laid over a root of what the Swift image has.
test-image:
	@bash scripts/install-deps.sh --rootfs
	bash scripts/test-rootfs.sh image "$(ROOTFS_CACHE)" "$$(dirname "$$(dirname "$$(dirname "$$(readlink -f "$$(command -v $(SWIFT))")")")")" $(FIXTURES)

# Removes exactly the files `make install` put there (same PREFIX and DESTDIR); the folders stay.
uninstall:
	rm -f "$(DESTDIR)$(BINDIR)/vmerge" "$(DESTDIR)$(MAN1DIR)/vmerge.1" "$(DESTDIR)$(BASH_COMPLETION_DIR)/vmerge" \
		"$(DESTDIR)$(ZSH_COMPLETION_DIR)/_vmerge" "$(DESTDIR)$(FISH_COMPLETION_DIR)/vmerge.fish"

# Regenerates fixtures/*.mov with the ffmpeg CLI (deterministic; see fixtures/README.md).
fixtures: deps
	bash fixtures/make_fixtures.sh

# Prints the toolchain and the FFmpeg libraries vmerge builds and runs against.
doctor: build
	@$(SWIFT) --version 2>&1 | head -1
	@pkg-config --modversion libavformat libavcodec libavfilter libavutil libswscale libswresample | paste -sd' ' | sed 's/^/pkg-config: /'
	@$$($(SWIFT) build $(SWIFT_FLAGS) --show-bin-path)/vmerge --version

# Fuzzes probe + a short merge with libFuzzer for SECONDS (default 60), seeded with fixtures/;
# crashes land in fuzz-crashes/ (replay one: .build/fuzz/release/vmerge-fuzz FILE).
SECONDS ?= 60
# One -sanitize flag (a second one replaces the first); lld without start-stop-gc keeps the
# coverage sections libFuzzer needs.
FUZZ_FLAGS := -c release --product vmerge-fuzz --scratch-path .build/fuzz -Xswiftc -sanitize=fuzzer,address \
	-Xswiftc -use-ld=lld -Xswiftc -DVMERGE_FUZZ -Xlinker -z -Xlinker nostart-stop-gc
fuzz: deps
	$(SWIFT) build $(FUZZ_FLAGS)
	@mkdir -p .build/fuzz-corpus fuzz-crashes && cp fixtures/*.mov fixtures/fuzz-seeds/* .build/fuzz-corpus/
	.build/fuzz/release/vmerge-fuzz .build/fuzz-corpus -max_total_time=$(SECONDS) -timeout=20 \
		-rss_limit_mb=2048 -max_len=1048576 -artifact_prefix=fuzz-crashes/ -print_final_stats=1

# The whole test suite under AddressSanitizer; ThreadSanitizer on the tests that exercise
# vmerge's threads (the merge pipeline, batch and watch).
test-asan: deps
	$(SWIFT) build --build-tests --scratch-path .build/asan -Xswiftc -sanitize=address
	LSAN_OPTIONS=suppressions=$(CURDIR)/.ci/lsan.supp:print_suppressions=0 \
		bash scripts/run-tests.sh $(SWIFT) --scratch-path .build/asan -Xswiftc -sanitize=address

test-tsan: deps
	$(SWIFT) build --build-tests --scratch-path .build/tsan -Xswiftc -sanitize=thread
	$(SWIFT) test --disable-swift-testing --scratch-path .build/tsan -Xswiftc -sanitize=thread \
		--filter 'MergeOutputTests|AudioSyncTests|BatchTests|ProgressAndMessagesTests.testJSON|WatchTests.testTwoWatchers'

# Times vmerge against the equivalent single ffmpeg command (~15 min on 2 cores; see BENCH.md).
# Inputs are generated once into bench-work/ (gitignored); options: make bench BENCH_ARGS="--sets A --rounds 1".
bench: release
	python3 bench/bench.py --vmerge $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/vmerge $(BENCH_ARGS)

# swift-format ships with the toolchain; style settings are in .swift-format.
format:
	$(SWIFT) format --in-place --recursive Sources Tests Package.swift

lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift

clean:
	rm -rf .build $(DEMO_DIR) $(DIST)
