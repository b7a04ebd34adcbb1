#!/usr/bin/env bash
# run.sh -- placeholder until the benchmark lands (see bench/README.md when it does).
echo "bench: not built yet" >&2
exit 1
