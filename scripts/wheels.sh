#!/usr/bin/env bash
# The CuTe DSL, Mojo and TileLang wheels for a GPU machine with no package index, packed for the
# device tool's carry (64 MiB a call with the working tree): downloaded for the H200 image
# (CPython 3.12, manylinux x86-64) with the dependencies its image lacks, split into parts of
# PART_MB, spread over .whl/1, .whl/2, … so that each folder is one call's carry, with the whole
# wheels' SHA256SUMS in .whl/1. On the GPU machine, call k (back to back, while it stays warm):
#   mkdir -p /tmp/wheels && cp .whl/K/* /tmp/wheels/      (carry: [".whl/K"])
# then `bash scripts/gpu_session.sh langs` joins the parts, checks the sums and installs.
# Usage: bash scripts/wheels.sh [PART_MB]   (default 40; .whl is git-ignored locally by this script)
set -euo pipefail
PART_MB=${1:-40}
cd "$(dirname "$0")/.."
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
rm -rf .whl && mkdir -p .whl/all
platforms=""
for p in manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux_2_24_x86_64 manylinux_2_27_x86_64 \
         manylinux_2_28_x86_64 manylinux_2_31_x86_64 manylinux_2_34_x86_64 manylinux_2_35_x86_64; do
  platforms="$platforms --platform $p"
done
# The pins of pyproject's extras, and what the image lacks of their dependencies (KINDS.md lists
# the image's packages: cloudpickle, ml-dtypes, psutil, tqdm, typing-extensions are there).
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  $platforms -d .whl/all \
  "nvidia-cutlass-dsl==4.8.1" "nvidia-cutlass-dsl-libs-base==4.8.1" "nvidia-cutlass-dsl-libs-cu12==4.8.1" \
  "nvidia-cutlass-dsl-libs-core==4.8.1" "protobuf>=4.21.12" \
  "mojo-compiler==0.25.6.1" \
  "tilelang==0.1.15" "apache-tvm-ffi>=0.1.11,<0.1.13" "torch-c-dlpack-ext" "z3-solver>=4.13.0,<4.15.5"
(cd .whl/all && sha256sum ./*.whl > SHA256SUMS)
# Whole wheels under PART_MB go as they are; larger ones in parts NAME.whl.part-aa, -ab, …
limit=$((PART_MB * 1024 * 1024))
for w in .whl/all/*.whl; do
  [ "$(stat -c %s "$w")" -le "$limit" ] || { split -b "$limit" "$w" "$w.part-"; rm "$w"; }
done
# First fit into folders of at most PART_MB each; the sums ride in the first.
k=1; used=0; mkdir -p .whl/1; mv .whl/all/SHA256SUMS .whl/1/
for f in $(ls -S .whl/all); do
  size=$(stat -c %s ".whl/all/$f")
  if [ $((used + size)) -gt "$limit" ]; then k=$((k + 1)); used=0; mkdir -p ".whl/$k"; fi
  mv ".whl/all/$f" ".whl/$k/"; used=$((used + size))
done
rmdir .whl/all
for d in .whl/*/; do echo "$d $(du -sm "$d" | cut -f1) MB: $(ls "$d" | tr '\n' ' ')"; done
echo "$k calls; in each: mkdir -p /tmp/wheels && cp .whl/K/* /tmp/wheels/  (carry .whl/K)"
