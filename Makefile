# The course's one build: GNU Make, incremental, -j safe, everything under build/.
#   make help      lists the targets
.DEFAULT_GOAL := all
SHELL := /bin/bash

NVCC      ?= nvcc
CC        := gcc
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(shell command -v $(NVCC) 2>/dev/null))
BUILD     := build
ARCH      ?= all

# Chapters and the GPU architectures each is built for (DESIGN.md, "Builds").
CHAPTERS := $(sort $(wildcard [0-9][0-9]_*))
ARCHS_mma    := sm_80 sm_89 sm_90a
ARCHS_hopper := sm_90a
chapter_archs = $(if $(filter 06_% 07_%,$(1)),$(ARCHS_hopper),$(ARCHS_mma))
# make ARCH=sm_90a narrows every chapter to that architecture.
narrow    = $(if $(filter all,$(ARCH)),$(1),$(filter $(ARCH),$(1)))
gencode   = $(foreach a,$(call narrow,$(1)),-gencode=arch=compute_$(a:sm_%=%),code=$(a))

CFLAGS    := -std=c11 -O2 -Wall -Wextra -Werror -Wno-format-truncation -Wno-missing-field-initializers -MMD -MP -Icommon -I$(CUDA_HOME)/include
NVCCFLAGS := -std=c++17 -O3 -lineinfo -MMD -MP -Icommon --Werror all-warnings \
             -Xcompiler -Wall,-Wextra,-Werror -Xptxas -warn-spills
LDLIBS    := -lcublasLt -lcublas -lm

COMMON_C    := $(wildcard common/*.c)
COMMON_OBJS := $(COMMON_C:%.c=$(BUILD)/%.o) $(BUILD)/common/gpu.o
HOST_OBJS   := $(BUILD)/common/args.o $(BUILD)/common/stats.o $(BUILD)/common/table.o \
               $(BUILD)/common/convert.o

BINS        := $(CHAPTERS:%=$(BUILD)/bin/%)
SOLVED_BINS := $(CHAPTERS:%=$(BUILD)/bin/%.solved)

.PHONY: all help test bench clean $(foreach c,$(CHAPTERS),run-$(firstword $(subst _, ,$(c))) \
        check-$(firstword $(subst _, ,$(c))) sanitize-$(firstword $(subst _, ,$(c))) \
        profile-$(firstword $(subst _, ,$(c))))

all: $(BINS)

help:
	@echo "make                 build every chapter (build/bin/NN_topic)"
	@echo "make run-NN          run chapter NN's table: every stage, your exercises, the library"
	@echo "                     (ARGS=\"--n 2^24 --kernel float4\"; see build/bin/NN_topic --help)"
	@echo "make check-NN        check your exercises at the test shapes: PASS, FAIL or TODO"
	@echo "make test            build, unit tests, SASS checks, and on a GPU every kernel at the test shapes"
	@echo "make bench           every chapter's benchmark sweep into results/NN_topic.{md,csv}"
	@echo "make sanitize-NN     compute-sanitizer memcheck and racecheck at small shapes"
	@echo "make profile-NN KERNEL=name   Nsight Compute on one kernel"
	@echo "make clean           remove build/"
	@echo "options: ARCH=sm_90a (build one architecture), NVCC=/path/to/nvcc"
	@echo "chapters: $(CHAPTERS)"

# ---- common ----------------------------------------------------------------------------------
$(BUILD)/common/%.o: common/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/common/gpu.o: common/gpu.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) $(call gencode,$(ARCHS_mma)) -c $< -o $@

# ---- chapters ------------------------------------------------------------------------------------
# Each chapter: driver.c (C11) + kernels/*.cu (the stages) + exercises/*.cu (the skeletons),
# plus any NN_topic/*.cu beside the driver (library calls that need C++, such as CUB).
# NN_topic.solved links each stage a second time, compiled with -DSTAGE_AS_EXERCISE, in place
# of the exercises: make test runs it to prove the exercise plumbing accepts a right answer.
define chapter_rules
$(1)_KERNEL_SRC   := $$(sort $$(wildcard $(1)/kernels/*.cu))
$(1)_EXERCISE_SRC := $$(sort $$(wildcard $(1)/exercises/*.cu))
$(1)_KERNEL_OBJS  := $$($(1)_KERNEL_SRC:$(1)/%.cu=$(BUILD)/$(1)/%.o) \
                     $$(patsubst $(1)/%.cu,$(BUILD)/$(1)/%.o,$$(wildcard $(1)/*.cu))
$(1)_OBJS   := $(BUILD)/$(1)/driver.o $$($(1)_KERNEL_OBJS) $$($(1)_EXERCISE_SRC:$(1)/%.cu=$(BUILD)/$(1)/%.o)
$(1)_SOLVED := $(BUILD)/$(1)/driver.o $$($(1)_KERNEL_OBJS) $$($(1)_KERNEL_SRC:$(1)/kernels/%.cu=$(BUILD)/$(1)/solved/%.o)

$(BUILD)/bin/$(1): $$($(1)_OBJS) $(COMMON_OBJS)
	@mkdir -p $$(@D)
	$(NVCC) $(call gencode,$(call chapter_archs,$(1))) -o $$@ $$^ $(LDLIBS)

$(BUILD)/bin/$(1).solved: $$($(1)_SOLVED) $(COMMON_OBJS)
	@mkdir -p $$(@D)
	$(NVCC) $(call gencode,$(call chapter_archs,$(1))) -o $$@ $$^ $(LDLIBS)

$(BUILD)/$(1)/driver.o: $(1)/driver.c
	@mkdir -p $$(@D)
	$(CC) $(CFLAGS) -I$(1) -c $$< -o $$@

$(BUILD)/$(1)/%.o: $(1)/%.cu
	@mkdir -p $$(@D)
	$(NVCC) $(NVCCFLAGS) -I$(1) $(call gencode,$(call chapter_archs,$(1))) -c $$< -o $$@

$(BUILD)/$(1)/solved/%.o: $(1)/kernels/%.cu
	@mkdir -p $$(@D)
	$(NVCC) $(NVCCFLAGS) -I$(1) -DSTAGE_AS_EXERCISE $(call gencode,$(call chapter_archs,$(1))) -c $$< -o $$@

run-$(firstword $(subst _, ,$(1))): $(BUILD)/bin/$(1)
	$(BUILD)/bin/$(1) $$(ARGS)

check-$(firstword $(subst _, ,$(1))): $(BUILD)/bin/$(1)
	$(BUILD)/bin/$(1) --check $$(ARGS)

sanitize-$(firstword $(subst _, ,$(1))): $(BUILD)/bin/$(1)
	compute-sanitizer --tool memcheck --leak-check full --error-exitcode 1 $(BUILD)/bin/$(1) --test --quick $$(ARGS)
	compute-sanitizer --tool racecheck --error-exitcode 1 $(BUILD)/bin/$(1) --test --quick $$(ARGS)

profile-$(firstword $(subst _, ,$(1))): $(BUILD)/bin/$(1)
	@test -n "$$(KERNEL)" || { echo "usage: make profile-$(firstword $(subst _, ,$(1))) KERNEL=name (see $(BUILD)/bin/$(1) --list)"; exit 2; }
	@sym=$$$$($(BUILD)/bin/$(1) --sass-spec | awk -F'\t' -v k="$$(KERNEL)" '$$$$2 == k { print $$$$4 }'); \
	 test -n "$$$$sym" || { echo "no kernel named '$$(KERNEL)' with a known symbol; see $(BUILD)/bin/$(1) --list"; exit 2; }; \
	 ncu --clock-control none --set detailed -k regex:"$$$$sym" --launch-count 1 $(BUILD)/bin/$(1) --kernel $$(KERNEL) --iters 1 --warmup 0 $$(ARGS)
endef
$(foreach c,$(CHAPTERS),$(eval $(call chapter_rules,$(c))))

# ---- tests and benchmarks ------------------------------------------------------------------------
$(BUILD)/bin/test_harness: tests/test_harness.c $(HOST_OBJS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $(filter %.c %.o,$^) -lm

test: $(BINS) $(SOLVED_BINS) $(BUILD)/bin/test_harness
	@bash tests/run.sh $(CHAPTERS)

bench: $(BINS)
	@mkdir -p results
	@set -e; for c in $(CHAPTERS); do echo "== $$c"; $(BUILD)/bin/$$c --bench --save results/$$c; done

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
