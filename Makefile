# sandpit — one plain Makefile.  Objects go to build/.
CC       ?= gcc
BUILD    ?= build
PREFIX   ?= /usr/local
DESTDIR  ?=
SAN      ?=

WARN     := -Wall -Wextra -Werror
CPPFLAGS := -Iinclude -I. -I$(BUILD)/include -D_GNU_SOURCE
CFLAGS   ?= -O2 -g
CFLAGS   += $(WARN) -fPIC -std=gnu11
LIBS     := -lseccomp -lZydis -lZycore -lpthread
# sandpit profile: libbpf and what it needs, linked statically (docs/design/build.md)
BPF_LIBS := -Wl,-Bstatic $(shell pkg-config --static --libs libbpf 2>/dev/null || echo -lbpf -lelf -lz) -Wl,-Bdynamic
BPF_CC   ?= clang
BPFTOOL  ?= bpftool
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)

# The untrusted-side runtime runs inside the sandbox: freestanding, no libc,
# no sanitizers, no stack protector.  Its files are named user/untrusted/u_*.c.
# Frame pointers and unwind tables: a debugger or profiler that stops a
# thread in a patched call walks through the entry back to the program.
U_CFLAGS := -O2 -g $(WARN) -fPIC -std=gnu11 -ffreestanding -fno-builtin \
            -fno-stack-protector -fno-sanitize=all -fcf-protection=none \
            -mgeneral-regs-only -fasynchronous-unwind-tables -fno-omit-frame-pointer

U_SRCS   := $(wildcard user/untrusted/u_*.c)
# policy/*.bpf.c are BPF programs (the profiler, the bench's system-call
# counter), not part of the library
BPF_SRCS := $(wildcard policy/*.bpf.c)
C_SRCS   := $(filter-out $(U_SRCS),$(wildcard user/*/*.c)) $(filter-out $(BPF_SRCS),$(wildcard policy/*.c)) \
            $(wildcard compat/*.c)
S_SRCS   := $(wildcard asm/x86_64/*.S) $(wildcard policy/*.S)
LIB_OBJS := $(U_SRCS:%.c=$(BUILD)/%.o) $(C_SRCS:%.c=$(BUILD)/%.o) $(S_SRCS:%.S=$(BUILD)/%.o)

CLI_SRCS := $(wildcard loader/*.c) $(wildcard bench/*.c)
TEST_SRCS:= $(wildcard selftests/*_test.c)
TESTS    := $(TEST_SRCS:selftests/%.c=$(BUILD)/selftests/%)
# tests that sandbox something run in every mode; the rest once
MODE_TESTS := $(addprefix $(BUILD)/selftests/,rev7_test rev8_test rev_guard_test calls_test decided_calls_test invariants_test api_test \
                threads_test threads_signal_test library_test core_test core_cpu_test core_request_test core_signal_test \
                rule_eval_test signals_test signals_pending_test signals_mask_test \
                secrets_test slots_test grant_test grant_root_test grant_file_test grant_race_test grant_stat_test \
                answer_test unwind_test eintr_test nofile_test once_test fault_test \
                rev4_test rev4_meta_test rev4_signal_test progs_test rev9_test rev10_test \
                net_test rev11_test rev12_test rev13_test rev15_test rev16_test rev17_test rev18_test rev19_test rev20_test rev21_test \
                start_failure_test rev21b_test)
# `sandpit run` runs both modes itself: once as it is, once without FSGSBASE
RUN_TESTS := $(addprefix $(BUILD)/selftests/,run_test run_command_test run_attack_test run_tiny_test \
                run_plan_cache_test)
FALLBACK_TESTS := $(RUN_TESTS) $(BUILD)/selftests/no_unwind_test $(BUILD)/selftests/selfexe_test
ONCE_TESTS := $(filter-out $(MODE_TESTS) $(FALLBACK_TESTS),$(TESTS))
EXAMPLES := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))

HARNESS  := $(BUILD)/include/kselftest_harness.h
# every selftest's main stretches its timeouts under qemu (harness_main.h)
TEST_CPPFLAGS := -include selftests/harness_main.h

all: $(BUILD)/libsandpit.a $(BUILD)/libsandpit.so $(BUILD)/sandpit $(BUILD)/bench_static_true

deps:
	@./scripts/deps.sh $(BUILD)

$(HARNESS):
	@./scripts/deps.sh $(BUILD)

$(BUILD)/user/untrusted/u_%.o: user/untrusted/u_%.c $(wildcard user/*/*.h user/*/*/*.h policy/*.h include/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(U_CFLAGS) -c $< -o $@

$(BUILD)/%.o: %.c $(wildcard user/*/*.h user/*/*/*.h policy/*.h compat/*.h include/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN) -c $< -o $@

$(BUILD)/%.o: %.S $(wildcard user/*/*.h policy/*.h asm/x86_64/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -fPIC -c $< -o $@

# the default policy is text embedded by policy/default_policy.S
$(BUILD)/policy/default_policy.o: policy/default.policy

# and its filter and its model, made at build time by policy/tools/gen_filter.c
# and gen_model.c (policy/model.h: the calls as parsed) from everything in
# policy/ but the two (with an empty model: the tools parse the whole text)
GEN_OBJS := $(filter $(BUILD)/policy/%,$(filter-out $(BUILD)/policy/default_filter.o \
	$(BUILD)/policy/default_model_bin.o $(BUILD)/policy/notifier_filter.o,$(LIB_OBJS))) \
	$(BUILD)/policy/no_model.o
$(BUILD)/gen_filter $(BUILD)/gen_model: $(BUILD)/gen_%: policy/tools/gen_%.c $(GEN_OBJS)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN) -o $@ $^ -lseccomp
$(BUILD)/policy/default_filter.bin $(BUILD)/policy/default_model.bin: $(BUILD)/policy/default_%.bin: $(BUILD)/gen_%
	$< $@
# an .S that embeds (.incbin) the file its macro $(1) names, $(2)
define embed
@mkdir -p $(dir $@)
$(CC) $(CPPFLAGS) -D$(1)='"$(2)"' -fPIC -c $< -o $@
endef
$(BUILD)/policy/default_filter.o: policy/default_filter.S $(BUILD)/policy/default_filter.bin
	$(call embed,SANDPIT_FILTER_BIN,$(word 2,$^))
# the notifier thread's filter (user/start/notifier.c), by libseccomp
$(BUILD)/gen_notifier: policy/tools/gen_notifier.c
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN) -o $@ $< -lseccomp
$(BUILD)/policy/notifier_filter.bin: $(BUILD)/gen_notifier
	@mkdir -p $(dir $@)
	$< $@
$(BUILD)/policy/notifier_filter.o: policy/notifier_filter.S $(BUILD)/policy/notifier_filter.bin
	$(call embed,SANDPIT_NOTIFIER_BIN,$(word 2,$^))
$(BUILD)/policy/default_model_bin.o: policy/default_model_bin.S $(BUILD)/policy/default_model.bin
	$(call embed,SANDPIT_MODEL_BIN,$(word 2,$^))
$(BUILD)/policy/no_model.o: policy/default_model_bin.S
	@mkdir -p $(dir $@)
	@: > $(BUILD)/policy/no_model.bin
	$(call embed,SANDPIT_MODEL_BIN,$(BUILD)/policy/no_model.bin)

$(BUILD)/libsandpit.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

# The shared library as packagers want it: a real soname, the
# ABI's version node (include/libsandpit.map) and nothing exported but the
# API: the objects are built with hidden visibility and include/sandpit.h
# marks the API default.  libsandpit.a keeps every symbol reachable for the
# command and the selftests, which use internal ones.
VERSION   := 0.1.0
SOVERSION := 0
LIB_MAP   := include/libsandpit.map
$(LIB_OBJS): CFLAGS += -fvisibility=hidden
$(LIB_OBJS): U_CFLAGS += -fvisibility=hidden

$(BUILD)/libsandpit.so.$(VERSION): $(LIB_OBJS) $(LIB_MAP)
	$(CC) -shared -Wl,-soname,libsandpit.so.$(SOVERSION) -Wl,--version-script,$(LIB_MAP) \
		-Wl,-z,noexecstack -Wl,-z,defs -o $@ $(LIB_OBJS) $(LIBS)
$(BUILD)/libsandpit.so.$(SOVERSION): $(BUILD)/libsandpit.so.$(VERSION)
	ln -sf libsandpit.so.$(VERSION) $@
$(BUILD)/libsandpit.so: $(BUILD)/libsandpit.so.$(SOVERSION)
	ln -sf libsandpit.so.$(SOVERSION) $@

# the profiler's BPF program, and the libbpf skeleton that embeds it
# (no CO-RE: the program reads only tracepoint records it declares itself);
# which calls have a path, and where, it takes from policy/syscall_kinds.c
# through a header written at build time (policy/tools/gen_profiler_paths.c)
$(BUILD)/gen_profiler_paths: policy/tools/gen_profiler_paths.c $(GEN_OBJS)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN) -o $@ $^ -lseccomp
$(BUILD)/include/profiler_paths.h: $(BUILD)/gen_profiler_paths
	@mkdir -p $(dir $@)
	$(BUILD)/gen_profiler_paths $@
$(BUILD)/policy/%.bpf.o: policy/%.bpf.c policy/profiler_event.h policy/syscount_event.h $(BUILD)/include/profiler_paths.h
	@mkdir -p $(dir $@)
	$(BPF_CC) -target bpf -O2 -g $(WARN) -I. -I$(BUILD)/include $(if $(MULTIARCH),-I/usr/include/$(MULTIARCH)) -c $< -o $@

# and `sandpit bench`'s system-call counter, the same way
$(BUILD)/include/%.skel.h: $(BUILD)/policy/%.bpf.o
	@mkdir -p $(dir $@)
	$(BPFTOOL) gen skeleton $< name $* > $@.tmp && mv $@.tmp $@
SKELS := $(BPF_SRCS:policy/%.bpf.c=$(BUILD)/include/%.skel.h)

$(BUILD)/sandpit: $(CLI_SRCS) $(wildcard loader/*.h bench/*.h) $(BUILD)/libsandpit.a $(SKELS)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN) -o $@ $(CLI_SRCS) $(BUILD)/libsandpit.a $(LIBS) $(BPF_LIBS) -lm

$(BUILD)/selftests/%: selftests/%.c $(BUILD)/libsandpit.a $(HARNESS) $(wildcard selftests/*.h) bench/bench.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(TEST_CPPFLAGS) $(CFLAGS) $(SAN) -Wno-unused-parameter -o $@ $< $(BUILD)/libsandpit.a $(LIBS)

# elf_test maps crafted programs with the loader itself, in this process,
# and drives `sandpit run` with them when build/sandpit is there
$(BUILD)/selftests/elf_test: selftests/elf_test.c loader/elf.c loader/elf.h $(BUILD)/libsandpit.a $(HARNESS) $(wildcard selftests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN) -Wno-unused-parameter -o $@ selftests/elf_test.c loader/elf.c \
		$(BUILD)/libsandpit.a $(LIBS)

$(BUILD)/examples/%: examples/%.c $(BUILD)/libsandpit.so
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< -L$(BUILD) -lsandpit -Wl,-rpath,$(abspath $(BUILD))

# the run_*_test binaries drive `sandpit run`: the command, and an attacker
# program linked both ways
$(RUN_TESTS): $(BUILD)/sandpit $(BUILD)/bench_static_true $(BUILD)/selftests/attack_dyn $(BUILD)/selftests/attack_static \
	$(BUILD)/selftests/tiny $(BUILD)/selftests/rev17_prog
# net_test runs `sandpit run` on curl with and without a connect grant
$(BUILD)/selftests/net_test $(BUILD)/selftests/rev12_test: $(BUILD)/sandpit
# selfexe_test runs a program that looks at its own /proc/self/exe, linked
# both ways, natively and under `sandpit run`
$(BUILD)/selftests/selfexe_test: $(BUILD)/sandpit $(BUILD)/selftests/selfexe_prog \
	$(BUILD)/selftests/selfexe_static
$(BUILD)/selftests/selfexe_prog: selftests/programs/selfexe.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -lpthread
$(BUILD)/selftests/selfexe_static: selftests/programs/selfexe.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -static -o $@ $< -lpthread
# rev17_test runs `sandpit run` on a program that makes threads in a pipeline
$(BUILD)/selftests/rev17_test: $(BUILD)/sandpit $(BUILD)/selftests/rev17_prog
$(BUILD)/selftests/rev17_prog: selftests/programs/rev17_prog.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -lpthread
# rev20_test runs `sandpit run` on a program that writes the plan hint page
$(BUILD)/selftests/rev20_test: $(BUILD)/sandpit $(BUILD)/selftests/rev20_prog
$(BUILD)/selftests/rev20_prog: selftests/programs/rev20_prog.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -ldl
# rev21_test runs `sandpit run` on a program that ends with a thread in B's wait
$(BUILD)/selftests/rev21_test: $(BUILD)/sandpit $(BUILD)/selftests/rev21_prog
$(BUILD)/selftests/rev21_prog: selftests/programs/rev21_prog.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -lpthread
# minijail_test runs `sandpit run` on tiny under minijail files
$(BUILD)/selftests/minijail_test: $(BUILD)/sandpit $(BUILD)/selftests/tiny
# profile_test drives `sandpit profile`, then `sandpit run` with its policy;
# bench_test runs `sandpit bench --quick`
$(BUILD)/selftests/profile_test $(BUILD)/selftests/bench_test: $(BUILD)/sandpit
# unwind_test stops a program blocked in a patched read and walks its frames:
# frame pointers, not PIE (nm's addresses are the run-time ones)
$(BUILD)/selftests/unwind_test: $(BUILD)/selftests/unwind_read
$(BUILD)/selftests/unwind_read: selftests/unwind/blocked_read.c $(BUILD)/libsandpit.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fno-omit-frame-pointer -fno-optimize-sibling-calls -no-pie \
		-o $@ $< $(BUILD)/libsandpit.a $(LIBS)
$(BUILD)/selftests/attack_dyn: selftests/attack/attack.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -lpthread
$(BUILD)/selftests/attack_static: selftests/attack/attack.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -static -o $@ $< -lpthread

# no_unwind_test runs programs without .eh_frame, whose functions the patcher finds another way: Go (built
# offline from the standard library alone, its caches inside build/), a
# stripped static C program without unwind tables, hand-written assembly;
# beside each, the addresses of its `syscall`s as objdump finds them
NO_UNWIND_PROGS := $(addprefix $(BUILD)/selftests/,go_workers no_unwind_static asm_calls)
$(BUILD)/selftests/no_unwind_test: $(BUILD)/sandpit $(NO_UNWIND_PROGS)
SITES = objdump -d --no-show-raw-insn $@ | awk '$$2 == "syscall" { sub(":", "", $$1); print $$1 }' >$@.sites
$(BUILD)/selftests/go_workers: selftests/programs/go_workers.go
	@mkdir -p $(dir $@) $(BUILD)/go
	cd $(dir $<) && GOCACHE=$(abspath $(BUILD))/go/cache GOPATH=$(abspath $(BUILD))/go/path \
		GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=0 \
		go build -o $(abspath $@) $(notdir $<)
	$(SITES)
$(BUILD)/selftests/no_unwind_static: selftests/programs/no_unwind.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -static -fno-asynchronous-unwind-tables -fno-unwind-tables -s -o $@ $<
	$(SITES)
# `sandpit bench`'s stripped static program (start-up with a cold and a warm
# plan cache): static glibc, no symbols, so the patcher decodes it linearly
$(BUILD)/bench_static_true: selftests/programs/static_true.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -static -fno-asynchronous-unwind-tables -fno-unwind-tables -s -o $@ $<
# run_tiny_test's program for the smallest policies: no libc, raw calls only
$(BUILD)/selftests/tiny: selftests/programs/tiny.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -static -nostdlib -ffreestanding -fno-builtin -fno-stack-protector -o $@ $<
$(BUILD)/selftests/asm_calls: selftests/programs/asm_calls.S
	@mkdir -p $(dir $@)
	$(CC) -static -nostdlib -s -o $@ $<
	$(SITES)

tests: $(TESTS)

# make install and make kselftest-install, each checked by a TAP script, so
# that what packagers and kernel-style runners get is tested too
INSTALL_CHECKS := scripts/install-tap.sh scripts/kselftest-tap.sh

check: deps
	@$(MAKE) --no-print-directory all tests $(BUILD)/fuzz/policy_fuzz $(BUILD)/fuzz/path_fuzz \
		$(BUILD)/fuzz/minijail_fuzz $(BUILD)/fuzz/elf_load_fuzz $(BUILD)/fuzz/elf_patch_fuzz $(BUILD)/fuzz/elf_seeds/.made \
		$(BUILD)/fuzz/plan_file_fuzz $(BUILD)/fuzz/plan_seeds/.made asan-tests
	@BUILD=$(BUILD) SECONDS=$(CHECK_FUZZ_SECONDS) MODE_TESTS="$(MODE_TESTS)" ./scripts/run-tests.sh --modes $(MODE_TESTS) \
		--once $(ONCE_TESTS) scripts/fuzz-tap.sh $(INSTALL_CHECKS) $(ASAN_TESTS) \
		--fallbacks $(FALLBACK_TESTS)

# the kernel matrix (docs/KERNELS.md): a kernel without seccomp-bpf built
# from linux-source-6.1 and Debian's stock 6.1, each booted under qemu with
# a named subset of the mode tests in the modes it has (check-kernels.sh;
# `make check-kernels MODE_TESTS=...` replaces the subsets).  Not part of
# make check: CI runs it after it (docs/KERNELS.md)
check-kernels:
	@KERNELS=1 ./scripts/deps.sh $(BUILD)
	@$(MAKE) --no-print-directory all tests
	@BUILD=$(BUILD) ./scripts/kernels/check-kernels.sh

demo: deps
	@$(MAKE) --no-print-directory all $(EXAMPLES)
	@SANDPIT_MODE=strict $(BUILD)/examples/demo
	@SANDPIT_MODE=filter $(BUILD)/examples/demo

# make soak: the race- and signal-heavy selftests and the real-program
# checks over and over, in every mode and fallback, under changing load,
# CPUs and user, for SOAK_MINUTES (scripts/soak.sh; not part of make check)
SOAK_MINUTES ?= 10
soak: all tests
	@BUILD=$(BUILD) SOAK_MINUTES=$(SOAK_MINUTES) ./scripts/soak.sh

# the C that runs outside the sandbox (policy model, path checks, patcher,
# the loader and the ELF reader) under AddressSanitizer and UBSan, in
# build-asan (make check runs them too, marked [asan]).  Not the tests
# whose children run under a seccomp filter or are raw clones (bpf,
# compat): the sanitizer runtime's own calls would be filtered, or it
# cannot follow the clone.
ASAN_TESTS := $(addprefix build-asan/selftests/,policy_test policy_path_test policyfile_test \
		policyfile_error_test policyfile_export_test policyfile_start_test minijail_test \
		patch_test elf_test)
asan-tests:
	@$(MAKE) --no-print-directory BUILD=build-asan \
		SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
		$(ASAN_TESTS)
check-asan: deps
	@$(MAKE) --no-print-directory asan-tests
	@./scripts/run-tests.sh --once $(ASAN_TESTS)

# libFuzzer (clang): B's path parsing and resolution (the walk and openat2's
# shortcut must agree), the policy-file parser, minijail's format, and the ELF reader as the
# loader and as the patcher use it, each for FUZZ_SECONDS
# (default 60); make check runs each for CHECK_FUZZ_SECONDS
FUZZ_SECONDS ?= 60
CHECK_FUZZ_SECONDS ?= 15
FUZZ_SRCS := $(filter-out $(BPF_SRCS),$(wildcard policy/*.c)) policy/default_policy.S \
	policy/default_model_bin.S
$(BUILD)/fuzz/%_fuzz: selftests/fuzz/%_fuzz.c $(FUZZ_SRCS) policy/default.policy $(wildcard policy/*.h) \
		$(BUILD)/policy/default_model.bin
	@mkdir -p $(dir $@)
	clang $(CPPFLAGS) -DSANDPIT_MODEL_BIN='"$(BUILD)/policy/default_model.bin"' $(WARN) -g -O1 \
		-fsanitize=fuzzer,address,undefined -o $@ $< $(FUZZ_SRCS) \
		-lseccomp -lpthread

# the ELF reader alone (user/patch/elf_read.c): it needs nothing else
$(BUILD)/fuzz/elf_%_fuzz: selftests/fuzz/elf_%_fuzz.c user/patch/elf_read.c user/patch/elf_read.h
	@mkdir -p $(dir $@)
	clang $(CPPFLAGS) $(WARN) -g -O1 -fsanitize=fuzzer,address,undefined -o $@ $< user/patch/elf_read.c

# the plan cache's file reader alone (user/patch/plan_file.c); its seeds are real
# cache files, made here by `sandpit run` (plans of a program, its ld.so
# and its libc, and the list of what the program needs)
$(BUILD)/fuzz/plan_file_fuzz: selftests/fuzz/plan_file_fuzz.c user/patch/plan_file.c user/patch/plan_file.h
	@mkdir -p $(dir $@)
	clang $(CPPFLAGS) $(WARN) -g -O1 -fsanitize=fuzzer,address,undefined -o $@ $< user/patch/plan_file.c
$(BUILD)/fuzz/plan_seeds/.made: $(BUILD)/sandpit
	@rm -rf $(dir $@) && mkdir -p -m 0700 $(dir $@)
	@for p in /bin/true "/bin/ls --version"; do \
		SANDPIT_PLAN_CACHE=$(abspath $(dir $@)) $(BUILD)/sandpit run --mode=filter -- $$p >/dev/null; done
	@touch $@

# its seeds, made here: this machine's programs and libraries (the fuzzers
# read at most ELF_MAX_LEN bytes of each), its vDSO, and crafted edge cases
ELF_MAX_LEN := 262144
ELF_SEED_FILES := /bin/true /bin/ls /usr/bin/env /lib64/ld-linux-x86-64.so.2 \
	/lib/x86_64-linux-gnu/libc.so.6 /lib/x86_64-linux-gnu/libseccomp.so.2 \
	$(BUILD)/selftests/attack_static
$(BUILD)/fuzz/elf_seeds/.made: selftests/fuzz/elf_seeds.c selftests/elf_craft.h
	@mkdir -p $(dir $@)
	@$(CC) $(CPPFLAGS) $(CFLAGS) -o $(BUILD)/fuzz/elf_seeds_gen $<
	@$(BUILD)/fuzz/elf_seeds_gen $(dir $@)
	@for f in $(ELF_SEED_FILES); do [ ! -f $$f ] || cp -fL $$f $(dir $@)real-$$(basename $$f); done
	@touch $@

# the corpus grows in build/, the seeds stay as they are
fuzz-policy: deps $(BUILD)/fuzz/policy_fuzz
	@mkdir -p $(BUILD)/fuzz/policy_corpus
	@cp -f policy/default.policy $(BUILD)/fuzz/policy_corpus/
	@if ! $(BUILD)/fuzz/policy_fuzz -max_total_time=$(SECONDS) -max_len=65536 -timeout=10 \
		-dict=selftests/fuzz/policy.dict -print_final_stats=1 \
		-artifact_prefix=$(BUILD)/fuzz/ $(BUILD)/fuzz/policy_corpus selftests/fuzz/policy_seeds \
		>$(BUILD)/fuzz/policy_fuzz.log 2>&1; then \
		tail -40 $(BUILD)/fuzz/policy_fuzz.log; echo "not ok: policy_fuzz (log: $(BUILD)/fuzz/policy_fuzz.log)"; exit 1; \
	fi
	@echo "ok: policy_fuzz, $$(sed -n 's/^stat::number_of_executed_units: *//p' $(BUILD)/fuzz/policy_fuzz.log) inputs in $(SECONDS) s"

# minijail's format (policy/minijail.c), from its own seeds and dictionary
fuzz-minijail: deps $(BUILD)/fuzz/minijail_fuzz
	@mkdir -p $(BUILD)/fuzz/minijail_corpus
	@if ! $(BUILD)/fuzz/minijail_fuzz -max_total_time=$(SECONDS) -max_len=65536 -timeout=10 \
		-dict=selftests/fuzz/minijail.dict -print_final_stats=1 \
		-artifact_prefix=$(BUILD)/fuzz/ $(BUILD)/fuzz/minijail_corpus selftests/fuzz/minijail_seeds \
		>$(BUILD)/fuzz/minijail_fuzz.log 2>&1; then \
		tail -40 $(BUILD)/fuzz/minijail_fuzz.log; echo "not ok: minijail_fuzz (log: $(BUILD)/fuzz/minijail_fuzz.log)"; exit 1; \
	fi
	@echo "ok: minijail_fuzz, $$(sed -n 's/^stat::number_of_executed_units: *//p' $(BUILD)/fuzz/minijail_fuzz.log) inputs in $(SECONDS) s"

fuzz-path: deps $(BUILD)/fuzz/path_fuzz
	@if ! $(BUILD)/fuzz/path_fuzz -max_total_time=$(SECONDS) -max_len=512 -timeout=10 \
		-print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/ \
		>$(BUILD)/fuzz/path_fuzz.log 2>&1; then \
		tail -40 $(BUILD)/fuzz/path_fuzz.log; echo "not ok: path_fuzz (log: $(BUILD)/fuzz/path_fuzz.log)"; exit 1; \
	fi
	@echo "ok: path_fuzz, $$(sed -n 's/^stat::number_of_executed_units: *//p' $(BUILD)/fuzz/path_fuzz.log) inputs in $(SECONDS) s"

fuzz-elf-load fuzz-elf-patch: fuzz-elf-%: deps $(BUILD)/fuzz/elf_%_fuzz $(BUILD)/fuzz/elf_seeds/.made
	@mkdir -p $(BUILD)/fuzz/elf_$*_corpus
	@if ! $(BUILD)/fuzz/elf_$*_fuzz -max_total_time=$(SECONDS) -max_len=$(ELF_MAX_LEN) -timeout=10 \
		-print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/ \
		$(BUILD)/fuzz/elf_$*_corpus $(BUILD)/fuzz/elf_seeds \
		>$(BUILD)/fuzz/elf_$*_fuzz.log 2>&1; then \
		tail -40 $(BUILD)/fuzz/elf_$*_fuzz.log; echo "not ok: elf_$*_fuzz (log: $(BUILD)/fuzz/elf_$*_fuzz.log)"; exit 1; \
	fi
	@echo "ok: elf_$*_fuzz, $$(sed -n 's/^stat::number_of_executed_units: *//p' $(BUILD)/fuzz/elf_$*_fuzz.log) inputs in $(SECONDS) s"

fuzz-plan-file: deps $(BUILD)/fuzz/plan_file_fuzz $(BUILD)/fuzz/plan_seeds/.made
	@mkdir -p $(BUILD)/fuzz/plan_file_corpus
	@if ! $(BUILD)/fuzz/plan_file_fuzz -max_total_time=$(SECONDS) -max_len=65536 -timeout=10 \
		-print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/ \
		$(BUILD)/fuzz/plan_file_corpus $(BUILD)/fuzz/plan_seeds \
		>$(BUILD)/fuzz/plan_file_fuzz.log 2>&1; then \
		tail -40 $(BUILD)/fuzz/plan_file_fuzz.log; echo "not ok: plan_file_fuzz (log: $(BUILD)/fuzz/plan_file_fuzz.log)"; exit 1; \
	fi
	@echo "ok: plan_file_fuzz, $$(sed -n 's/^stat::number_of_executed_units: *//p' $(BUILD)/fuzz/plan_file_fuzz.log) inputs in $(SECONDS) s"

fuzz: deps $(BUILD)/fuzz/path_fuzz $(BUILD)/fuzz/policy_fuzz $(BUILD)/fuzz/minijail_fuzz \
		$(BUILD)/fuzz/elf_load_fuzz $(BUILD)/fuzz/elf_patch_fuzz $(BUILD)/fuzz/plan_file_fuzz
	@$(MAKE) --no-print-directory fuzz-path SECONDS=$(FUZZ_SECONDS)
	@$(MAKE) --no-print-directory fuzz-policy SECONDS=$(FUZZ_SECONDS)
	@$(MAKE) --no-print-directory fuzz-minijail SECONDS=$(FUZZ_SECONDS)
	@$(MAKE) --no-print-directory fuzz-elf-load SECONDS=$(FUZZ_SECONDS)
	@$(MAKE) --no-print-directory fuzz-elf-patch SECONDS=$(FUZZ_SECONDS)
	@$(MAKE) --no-print-directory fuzz-plan-file SECONDS=$(FUZZ_SECONDS)

# `sandpit bench`: a few minutes; make check runs only `sandpit bench --quick`
bench: deps
	@$(MAKE) --no-print-directory all
	$(BUILD)/sandpit bench --verbose

# docs/BENCHMARKS.md and docs/bench-per-call.svg from one full run here
bench-docs: deps
	@$(MAKE) --no-print-directory all
	./scripts/bench-docs.sh $(BUILD)

# make kselftest-install INSTALL_PATH=DIR: make check's tests laid
# out for a kernel-style run_kselftest.sh, each sandboxed test once per mode
# (scripts/kselftest-install.sh)
INSTALL_PATH ?= $(BUILD)/kselftest
.PHONY: kselftest-install
kselftest-install: all $(TESTS) $(BUILD)/selftests/attack_dyn $(BUILD)/selftests/attack_static \
		$(BUILD)/selftests/tiny $(BUILD)/selftests/unwind_read $(NO_UNWIND_PROGS)
	@./scripts/kselftest-install.sh $(BUILD) $(INSTALL_PATH) --modes $(MODE_TESTS) \
		--once $(ONCE_TESTS) --fallbacks $(FALLBACK_TESTS)

# Paths under PREFIX are written relative to ${prefix} in sandpit.pc, so
# that pkg-config --define-prefix finds a staged (DESTDIR) tree.
LIBDIR   ?= $(PREFIX)/lib
PC_LIBDIR = $(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))
install: all
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/bin \
		$(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man5
	install -m 644 $(BUILD)/libsandpit.a $(DESTDIR)$(LIBDIR)/
	install -m 755 $(BUILD)/libsandpit.so.$(VERSION) $(DESTDIR)$(LIBDIR)/
	ln -sf libsandpit.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libsandpit.so.$(SOVERSION)
	ln -sf libsandpit.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libsandpit.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(PC_LIBDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		sandpit.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/sandpit.pc
	chmod 644 $(DESTDIR)$(LIBDIR)/pkgconfig/sandpit.pc
	install -m 644 include/sandpit.h $(DESTDIR)$(PREFIX)/include/
	install -m 755 $(BUILD)/sandpit $(DESTDIR)$(PREFIX)/bin/
	install -m 644 docs/sandpit.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 docs/sandpit.policy.5 $(DESTDIR)$(PREFIX)/share/man/man5/

# clang-tidy (checks in .clang-tidy) on the same sources as cppcheck, each
# with the flags it is built with; two at a time; xargs fails if any does
TIDY_SRCS := $(filter-out $(BPF_SRCS),$(wildcard user/*/*.c policy/*.c compat/*.c loader/*.c bench/*.c))
lint: $(SKELS)
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability -Iinclude -I. $(BPF_SRCS:%=-i %) user policy compat loader bench
	@echo "clang-tidy: $(words $(TIDY_SRCS)) files"
	@printf '%s\n' $(TIDY_SRCS) | xargs -P 2 -I{} sh -c 'case {} in \
		user/untrusted/u_*) f="-ffreestanding -fno-builtin -mgeneral-regs-only" ;; *) f= ;; esac; \
		out=$$(clang-tidy --quiet {} -- $(CPPFLAGS) $(WARN) -std=gnu11 $$f 2>&1); rc=$$?; \
		printf "%s\n" "$$out" | grep -v "warnings\? generated\.$$" | grep .; exit $$rc'

clean:
	rm -rf $(BUILD) build-asan

.PHONY: all deps tests check check-kernels asan-tests check-asan soak fuzz fuzz-policy fuzz-minijail fuzz-path fuzz-elf-load fuzz-elf-patch fuzz-plan-file demo bench bench-docs install lint clean
.SECONDARY:
