# rankd -- hand-written Makefile (redis/hiredis style). `make help` lists the targets.
#
# Variables you may override: CC, CFLAGS_EXTRA, LDFLAGS_EXTRA, OPT, WERROR, SANITIZER, PREFIX,
# DESTDIR, BINDIR, DATADIR, MANDIR, SYSCONFDIR, SYSTEMD_UNIT_DIR,
# RANKD_LISTEN, RANKD_REDIS_URL (make run), TEST_REDIS_SERVER.

# The one place the version is written (debian/changelog must say the same: make deb checks).
VERSION := 1.0.0
# The commit built, for --version and rankd_build_info (git describe; "unknown" outside git).
REVISION ?= $(shell git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
CC ?= cc
OPT ?= -O2
WERROR ?= -Werror
SANITIZER ?=
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share/rankd
MANDIR ?= $(PREFIX)/share/man
# /etc and /lib/systemd/system for PREFIX=/usr (the Debian package), else under PREFIX
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
SYSTEMD_UNIT_DIR ?= $(if $(filter /usr,$(PREFIX)),/lib/systemd/system,$(PREFIX)/lib/systemd/system)
BUILD ?= build
V ?= 0
ifeq ($(V),0)
Q := @
endif

DEPS := libmicrohttpd hiredis libcjson zlib libsystemd
# The allocator: jemalloc (Debian's libjemalloc-dev, 5.3) in place of glibc's malloc. Measured
# (bench/results/jemalloc.md, callgrind): the allocator's instructions per request fell from
# 6,600-13,700 to 2,800-4,300 (cache hit 62,600 -> 54,800 in all, live page 115,900 -> 106,700,
# single write 77,500 -> 70,600), rankd's CPU time per request 1-11% lower; it costs ~2.5 MB more
# RSS (libraries and heap) and starts no thread. JEMALLOC=0 builds with glibc's malloc. Never
# with SANITIZER: ASan and UBSan bring their own malloc. (valgrind replaces jemalloc's too.)
JEMALLOC ?= 1
ifeq ($(SANITIZER)$(filter 0,$(JEMALLOC)),)
DEPS += jemalloc
endif
TEST_DEPS := check libcurl
PKG_CFLAGS = $(shell pkg-config --cflags $(DEPS) 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs $(DEPS) 2>/dev/null)
TEST_PKG_CFLAGS = $(shell pkg-config --cflags $(TEST_DEPS) 2>/dev/null)
TEST_PKG_LIBS = $(shell pkg-config --libs $(TEST_DEPS) 2>/dev/null)

WARN := -Wall -Wextra -Wpedantic $(WERROR) -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wwrite-strings -Wformat=2 -Wundef -Wcast-align -Wvla -Wimplicit-fallthrough
ifneq ($(SANITIZER),)
SANFLAGS := -fsanitize=$(SANITIZER) -fno-sanitize-recover=all
endif
CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) $(OPT) -g -fno-omit-frame-pointer -pthread -MMD -MP \
          $(SANFLAGS) $(CFLAGS_EXTRA)
LDFLAGS := -pthread $(SANFLAGS) -Wl,--as-needed,-z,relro,-z,now $(LDFLAGS_EXTRA)
LIBS = $(PKG_LIBS) -lm

# service/ in layers (docs/architecture.md): lib/ (leaves), store/ (the only hiredis user), core/
# (boards over Redis), http/ (the only libmicrohttpd user), api/ (routes, handlers, wire formats);
# main.c and server.c (the composition root) at the top. scripts/check-layers.sh (make lint) keeps
# the include direction. Every folder is on the include path, so includes name files only.
SERVICE_DIRS := lib store core http api
SERVICE_INC := -Iservice $(SERVICE_DIRS:%=-Iservice/%)
SERVICE_SRC := $(filter-out service/main.c,$(wildcard service/*.c $(SERVICE_DIRS:%=service/%/*.c)))
SERVICE_HDR := $(wildcard service/*.h $(SERVICE_DIRS:%=service/%/*.h))
SERVICE_OBJ := $(SERVICE_SRC:service/%.c=$(BUILD)/service/%.o)
LUA := $(filter-out service/lua/prelude_%.lua,$(wildcard service/lua/*.lua))
LUA_H := $(LUA:service/%.lua=$(BUILD)/gen/%.lua.h)
UNIT_SRC := $(wildcard test/unit/*.c) test/support/suite_list.c
UNIT_OBJ := $(UNIT_SRC:test/%.c=$(BUILD)/test/%.o)
INTEG_SRC := $(wildcard test/integration/*.c) $(wildcard test/support/*.c)
INTEG_OBJ := $(INTEG_SRC:test/%.c=$(BUILD)/test/%.o)

# Fuzz targets (test/fuzz/README.md): each links only these pure modules and libcjson (no Redis,
# no sockets). Built with clang's libFuzzer into build/fuzz/; with $(CC) and test/fuzz/replay.c
# into $(BUILD)/fuzz-replay/ (test-unit replays the seed corpus, in every build).
FUZZ_TARGETS := path entry settings ndjson score_codec json_number
FUZZ_PURE := lib/request http/route_match api/validate api/validate_fast http/http lib/errors lib/json_number lib/ndjson \
             lib/score_codec api/render lib/period lib/tzif lib/civil lib/util lib/rank lib/cursor
FUZZ_SECONDS ?= 5
FUZZ_CC ?= clang
FUZZ_BIN := $(FUZZ_TARGETS:%=build/fuzz/fuzz_%)
FUZZ_OBJ := $(FUZZ_PURE:%=build/fuzz/service/%.o)
FUZZ_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) -O1 -g -fno-omit-frame-pointer -MMD -MP \
              -fsanitize=address,undefined -fno-sanitize-recover=all \
              $(shell pkg-config --cflags $(DEPS) 2>/dev/null) $(SERVICE_INC)
FUZZ_LIBS = $(shell pkg-config --libs libcjson 2>/dev/null) -lm
FUZZ_REPLAY := $(FUZZ_TARGETS:%=$(BUILD)/fuzz-replay/%)
FUZZ_REPLAY_OBJ := $(FUZZ_PURE:%=$(BUILD)/service/%.o) $(BUILD)/test/fuzz/replay.o

.DEFAULT_GOAL := all
.PHONY: all run test check test-build-asan test-unit test-integration test-integration-cluster test-clients test-tls test-nginx test-package sanitize \
        bench deps deps-test install deb clean docs format format-check lint help fuzz fuzz-build soak valgrind FORCE

all: $(BUILD)/rankd

# Each script becomes a C array of its bytes and a NUL, as a compound literal
# "(const char[]){0x23,...,0}": unlike a string literal, no length limit (C compilers need only
# support 4095 bytes in a literal, and -Wpedantic holds us to it). Comment lines and indentation
# are dropped (they stay in the .lua file; EVAL of the body sends fewer bytes). A line
# "--@prelude NAME" becomes service/lua/prelude_NAME.lua, and "--@prelude" alone
# prelude_read.lua, the read scripts' shared opening (scripts/lua-prelude.awk).
LUA_PRELUDES := $(wildcard service/lua/prelude_*.lua) $(BUILD)/gen/lua/prelude_defaults.lua
$(BUILD)/gen/lua/%.lua.h: service/lua/%.lua $(LUA_PRELUDES) scripts/lua-prelude.awk
	@mkdir -p $(dir $@)
	$(Q)awk -v gen=$(BUILD)/gen/lua -f scripts/lua-prelude.awk $< > $@.lua
	$(Q){ echo '(const char[]){'; \
	sed -e '/^[[:space:]]*--/d' -e 's/^[[:space:]]*//' $@.lua | od -An -v -tx1 | \
	sed -e 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'; echo '0}'; } > $@ && rm -f $@.lua

# scripts.h is the table of the model's scripts (an enum, the bodies, the flags), from the line
# "--@script [read-only] [waits]" in each of them (scripts/lua-scripts.awk): adding a script or
# changing its flags is that one line. Written only when it changed.
$(BUILD)/gen/scripts.h: $(LUA) scripts/lua-scripts.awk
	@mkdir -p $(dir $@)
	$(Q)awk -f scripts/lua-scripts.awk $(sort $(LUA)) > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

# "--@prelude defaults": the settings' defaults and limits as Lua locals, from names.h's and
# board.h's BOARD_*_DEFAULT and BOARD_*_MAX (one place for them; test-unit checks the values).
$(BUILD)/gen/lua/prelude_defaults.lua: service/lib/names.h service/core/board.h scripts/lua-defaults.awk
	@mkdir -p $(dir $@)
	$(Q)awk -f scripts/lua-defaults.awk service/lib/names.h service/core/board.h > $@.tmp && \
	    mv $@.tmp $@

# version.h is rewritten only when VERSION or REVISION changed (the objects that include it are
# rebuilt then, through their -MMD dependencies).
$(BUILD)/gen/version.h: FORCE
	@mkdir -p $(dir $@)
	@printf '#define RANKD_VERSION "%s"\n#define RANKD_REVISION "%s"\n' '$(VERSION)' '$(REVISION)' > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
FORCE:

# The libraries linked (DEPS: JEMALLOC, SANITIZER), rewritten only when they changed: the binaries
# depend on it, so `make JEMALLOC=0` after `make` links again.
$(BUILD)/gen/libs: FORCE
	@mkdir -p $(dir $@)
	@echo '$(DEPS)' > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

$(BUILD)/service/%.o: service/%.c | $(LUA_H) $(BUILD)/gen/scripts.h $(BUILD)/gen/version.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC  $@")
	$(Q)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(SERVICE_INC) -I$(BUILD)/gen -c $< -o $@

$(BUILD)/test/%.o: test/%.c | $(LUA_H) $(BUILD)/gen/scripts.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC  $@")
	$(Q)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(TEST_PKG_CFLAGS) $(SERVICE_INC) -I$(BUILD)/gen -Itest/support -c $< -o $@

$(BUILD)/rankd: $(SERVICE_OBJ) $(BUILD)/service/main.o $(BUILD)/gen/libs
	@$(if $(Q),echo "  LD  $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LIBS)

$(BUILD)/test-unit: $(UNIT_OBJ) $(SERVICE_OBJ) $(BUILD)/gen/libs
	@$(if $(Q),echo "  LD  $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LIBS) $(TEST_PKG_LIBS)

$(BUILD)/test-integration: $(INTEG_OBJ) $(SERVICE_OBJ) $(BUILD)/gen/libs
	@$(if $(Q),echo "  LD  $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LIBS) $(TEST_PKG_LIBS)

$(BUILD)/fuzz-replay/%: $(BUILD)/test/fuzz/fuzz_%.o $(FUZZ_REPLAY_OBJ) $(BUILD)/gen/libs
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD  $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LIBS)

build/fuzz/service/%.o: service/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC  $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

build/fuzz/fuzz_%: test/fuzz/fuzz_%.c $(FUZZ_OBJ)
	@$(if $(Q),echo "  LD  $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJ) $(FUZZ_LIBS)

# Install missing Debian packages (as root), or print the one command that would: deps what
# building and running rankd needs (make run), deps-test that and what only the tests need (Check,
# libcurl's headers, prometheus for promtool).
deps:
	@scripts/deps.sh

deps-test:
	@scripts/deps.sh --test

# The package check: the make install part always (seconds); the make deb part (dpkg-buildpackage
# and lintian, over a minute) when CI=true, or by itself with `make test-package`.
PACKAGE_CHECKS := $(if $(filter true,$(CI)),all,install)

# The tests (test/README.md): scripts/test-all.sh runs each job (a unit test binary, an
# integration suite, the fuzzing, a shell check) as a process of its own, TEST_JOBS at once (default
# one more than the cores), its output shown when it fails, each job's time at the end.
#   make check  the edit loop: unit tests and the fast integration suites, plain build (~1 min)
#   make test   everything, what CI runs: every integration suite once under ASan/UBSan (the
#               cluster run's suites too), the unit tests plain and under ASan, fuzzing, the
#               package, the JS client and browser, TLS and nginx checks (on the plain build/rankd)
NPROC := $(shell nproc 2>/dev/null || echo 2)
# One job more than the cores: the sentinel and failover suites spend most of their time waiting
# for servers (a failover, a timeout), not computing.
TEST_JOBS ?= $(shell echo $$(($(NPROC) + 1)))
ASAN_MAKE = $(MAKE) --no-print-directory BUILD=build/asan OPT=-O1 SANITIZER=address,undefined
TEST_ENV = BUILD=$(BUILD) TEST_JOBS=$(TEST_JOBS) FUZZ_SECONDS=$(FUZZ_SECONDS) \
           FUZZ_TARGETS='$(FUZZ_TARGETS)' PACKAGE_CHECKS=$(PACKAGE_CHECKS)

test: deps-test
	@scripts/deps.sh clang libclang-rt-14-dev
	$(MAKE) --no-print-directory -j$(NPROC) all $(BUILD)/test-unit $(FUZZ_REPLAY) fuzz-build \
	    test-build-asan
	$(TEST_ENV) scripts/test-all.sh test

check: all $(BUILD)/test-unit $(FUZZ_REPLAY) $(BUILD)/test-integration
	$(TEST_ENV) scripts/test-all.sh check

# The ASan/UBSan build of what make test runs under the sanitizers (build/asan).
test-build-asan:
	$(ASAN_MAKE) build/asan/test-integration build/asan/rankd build/asan/test-unit \
	    $(FUZZ_TARGETS:%=build/asan/fuzz-replay/%)

test-unit: $(BUILD)/test-unit $(FUZZ_REPLAY)
	$(BUILD)/test-unit
	$(Q)for t in $(FUZZ_TARGETS); do $(BUILD)/fuzz-replay/$$t test/fuzz/corpus/$$t || exit 1; done

# Every fuzz target for FUZZ_SECONDS (default 5: about 30 s in all) from its seed corpus, under
# ASan + UBSan (clang's libFuzzer: Debian's clang and libclang-rt-14-dev, installed when missing).
# A longer hunt: make fuzz FUZZ_SECONDS=600.
fuzz:
	@scripts/deps.sh clang libclang-rt-14-dev
	$(MAKE) --no-print-directory fuzz-build
	test/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-build: $(FUZZ_BIN)

.SECONDARY: $(FUZZ_OBJ) $(BUILD)/test/fuzz/replay.o $(FUZZ_TARGETS:%=$(BUILD)/test/fuzz/fuzz_%.o)

# Every integration suite on the plain build, each a process of its own (one suite:
# CK_RUN_SUITE=reads build/test-integration; test/README.md).
test-integration: $(BUILD)/test-integration $(BUILD)/rankd
	$(TEST_ENV) scripts/test-all.sh integration

# The same binary on a real Redis Cluster (scripts/cluster-fixture.sh: 3 masters, a replica
# each, one cluster per suite): the suites whose code paths differ there and the cluster's own
# (test/integration/main.c says which and why).
test-integration-cluster: $(BUILD)/test-integration $(BUILD)/rankd
	$(TEST_ENV) scripts/test-all.sh cluster

# The JS client (node --test) and the web frontend in Debian's chromium (playwright-core), against
# a real rankd and redis-server that the script starts on free ports.
test-clients: $(BUILD)/rankd
	scripts/test-clients.sh $(BUILD)/rankd

# rankd through schema/stunnel-redis.conf to a TLS-only redis-server (a few seconds).
test-tls: $(BUILD)/rankd
	scripts/test-tls.sh $(BUILD)/rankd

# Two rankd processes behind nginx running schema/nginx-rankd.conf: on one Redis, then on a
# 3-master Redis Cluster (a few seconds each).
test-nginx: $(BUILD)/rankd
	scripts/test-nginx.sh $(BUILD)/rankd
	scripts/test-nginx.sh $(BUILD)/rankd cluster

# Benchmarks (bench/README.md): starts its own Redis, rankd and nginx on free loopback ports.
# BENCH_QUICK=1 for the short variant.
bench: deps all
	bench/run.sh
	bench/streams.sh

# The integration suite once under valgrind's memcheck (test/valgrind.sh: no error, no definite
# leak; test/valgrind.supp holds third-party noise only). -O0 in build/valgrind. Not part of
# make test: it takes about 15 minutes on 2 cores.
valgrind:
	@scripts/deps.sh valgrind
	$(MAKE) --no-print-directory BUILD=build/valgrind OPT=-O0 build/valgrind/test-integration \
	    build/valgrind/rankd
	test/valgrind.sh build/valgrind/test-integration

# Soak (bench/soak.sh): capacity measured briefly, then SOAK_SECONDS (300) of mixed reads and
# writes at 80% of it; RSS every 10 s; the table in bench/results/soak.md. Run it on a quiet
# machine (its result notes the load).
soak: deps all
	@scripts/deps.sh python3
	bench/soak.sh

# The unit tests and every integration suite, on one Redis and on a cluster, under ASan + UBSan
# (build/asan), each suite once: the part of make test that needs no other tool.
# A smaller ASan quarantine (default 256 MB; scripts/test-all.sh sets it unless ASAN_OPTIONS is
# set): recycling a large one page-faults tens of MB at once, which stalled rankd's one event
# thread for up to 0.6 s mid-test (12,000+ minor faults in one loop iteration, measured) and
# failed the timing tests for reasons that were ASan's own.
sanitize:
	$(MAKE) --no-print-directory -j$(NPROC) test-build-asan
	$(TEST_ENV) scripts/test-all.sh sanitize

run: deps all
	@scripts/run.sh

# The binary, the web page (found by the binary at ../share/rankd/web), the shipped Redis
# configurations, the man page, a hardened systemd unit and its environment file (never
# overwritten: it holds the operator's settings). The unit reads the token file through the
# rankd-tokens group (the Debian package creates it; see docs/operating.md, "Install").
WEB_FILES := $(wildcard clients/web/*.html clients/web/*.js clients/web/*.css)
install: all
	install -D -m 0755 $(BUILD)/rankd $(DESTDIR)$(BINDIR)/rankd
	install -d $(DESTDIR)$(DATADIR)/web $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(SYSTEMD_UNIT_DIR) \
	    $(DESTDIR)$(SYSCONFDIR)/default
	install -m 0644 $(WEB_FILES) $(DESTDIR)$(DATADIR)/web/
	install -m 0644 schema/redis.conf schema/redis-cache.conf $(DESTDIR)$(DATADIR)/
	install -m 0644 dist/rankd.1 $(DESTDIR)$(MANDIR)/man1/rankd.1
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' -e 's|@DATADIR@|$(DATADIR)|g' \
	    dist/rankd.service.in > $(BUILD)/rankd.service
	install -m 0644 $(BUILD)/rankd.service $(DESTDIR)$(SYSTEMD_UNIT_DIR)/rankd.service
	sed -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' -e 's|@DATADIR@|$(DATADIR)|g' dist/rankd.env.in \
	    > $(BUILD)/rankd.env
	[ -e $(DESTDIR)$(SYSCONFDIR)/default/rankd ] || \
	    install -m 0640 $(BUILD)/rankd.env $(DESTDIR)$(SYSCONFDIR)/default/rankd
	@scripts/install-next.sh '$(DESTDIR)' '$(SYSCONFDIR)' '$(SYSTEMD_UNIT_DIR)'

# A Debian package (debhelper) of this tree, built in a copy under build/deb/:
# build/deb/rankd_$(VERSION)_<arch>.deb. Installs with: apt install ./build/deb/rankd_*.deb
deb:
	@scripts/deps.sh debhelper dpkg-dev
	@REVISION='$(REVISION)' scripts/make-deb.sh '$(VERSION)' $(BUILD)/deb

# make install into a scratch DESTDIR and make deb, each checked: files, lintian, the installed
# binary serving the web page (scripts/test-package.sh).
test-package: $(BUILD)/rankd
	scripts/test-package.sh $(BUILD)

format:
	clang-format -i service/main.c $(SERVICE_SRC) $(SERVICE_HDR) test/*/*.c test/*/*.h

format-check:
	clang-format --dry-run --Werror service/main.c $(SERVICE_SRC) $(SERVICE_HDR) test/*/*.c test/*/*.h

# The option lists printed from service/lib/config.c's table (rankd --help=man, --help=markdown) into
# dist/rankd.1's OPTIONS and docs/operating.md's table; make lint fails when they differ.
docs: $(BUILD)/rankd
	@scripts/docs-options.sh $(BUILD)/rankd write

# Quiet when clean. scripts/check-layers.sh first: the include direction between service/'s folders;
# then the option lists (scripts/docs-options.sh). Then clang-tidy: its "N warnings generated." lines
# (warnings in system headers that it suppresses itself) are dropped; its findings and its exit
# status are kept.
lint: $(LUA_H) $(BUILD)/gen/scripts.h $(BUILD)/gen/version.h $(BUILD)/rankd
	@scripts/check-layers.sh
	@scripts/check-build-deps.sh $(BUILD)/rankd
	@scripts/docs-options.sh $(BUILD)/rankd check
	@scripts/check-errors.sh
	@out=$$(clang-tidy --quiet service/main.c $(SERVICE_SRC) -- -std=c11 -D_GNU_SOURCE $(PKG_CFLAGS) \
	    $(SERVICE_INC) -I$(BUILD)/gen 2>&1); \
	    rc=$$?; printf '%s\n' "$$out" | grep -Ev '^([0-9]+ warnings? generated\.)?$$' || true; \
	    [ $$rc -eq 0 ] || { echo "make lint: clang-tidy failed (exit $$rc)" >&2; exit 1; }
	@# ctuuninitvar: cppcheck 2.10 flags out-params that the callee fills (board_make_keys).
	@cppcheck --quiet --enable=warning,performance,portability --error-exitcode=1 \
	    --suppress=missingIncludeSystem --suppress=ctuuninitvar $(SERVICE_INC) -I$(BUILD)/gen service

clean:
	rm -rf build

help:
	@echo "make            build build/rankd"
	@echo "make run        install what is missing, build, start Redis, load the demo, serve on :8080"
	@echo "make check      unit tests and the fast integration suites (the edit loop, about a minute)"
	@echo "make test       install what is missing, build, run every test (test/README.md; TEST_JOBS at once)"
	@echo "make sanitize   unit and integration tests under ASan/UBSan"
	@echo "make test-integration[-cluster]  the integration suites on one Redis [a Redis Cluster]"
	@echo "make test-clients  the JS client and browser tests"
	@echo "make test-tls      rankd through the stunnel sample to a TLS-only Redis"
	@echo "make test-nginx    two rankd processes behind nginx (schema/nginx-rankd.conf), one Redis and a cluster"
	@echo "make fuzz       the fuzz targets, FUZZ_SECONDS each (default 5), from test/fuzz/corpus"
	@echo "make soak       5 minutes of mixed load at 80% of measured capacity (bench/results/soak.md)"
	@echo "make valgrind   the integration suite once under valgrind memcheck (slow: not in make test)"
	@echo "make bench      benchmarks against nginx, redis-benchmark and full-page caching (BENCH_QUICK=1: short)"
	@echo "make install    binary, web page, redis.conf, man page, systemd unit, /etc/default/rankd (PREFIX, DESTDIR)"
	@echo "make deb        a Debian package in build/deb/ (apt install ./build/deb/rankd_*.deb)"
	@echo "make test-package  make install and make deb, checked (contents, lintian, the installed binary)"
	@echo "make docs       the option lists of the man page and docs/operating.md, from service/lib/config.c"
	@echo "make deps | deps-test  install what make run | make test needs (Debian packages)"
	@echo "make lint       layer check (scripts/check-layers.sh), option lists (scripts/docs-options.sh), clang-tidy, cppcheck"
	@echo "make format | format-check | clean"

-include $(SERVICE_OBJ:.o=.d) $(BUILD)/service/main.d $(UNIT_OBJ:.o=.d) $(INTEG_OBJ:.o=.d)
-include $(FUZZ_OBJ:.o=.d) $(FUZZ_BIN:=.d) $(BUILD)/test/fuzz/replay.d \
         $(FUZZ_TARGETS:%=$(BUILD)/test/fuzz/fuzz_%.d)
