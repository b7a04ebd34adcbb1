#!/usr/bin/env bash
# test-clients.sh -- placeholder until the JS client and browser tests land.
echo "client tests: none yet"
