#!/usr/bin/env bash
# Installs the system libraries the build links: OpenSSL (Debian `libssl-dev`, found through
# `pkg-config`) for librdkafka's TLS and SASL/SCRAM (the `ssl` feature of rdkafka), and the
# `openssl` command, which the TLS tests (Kafka, remote engine) use to make their certificates.
# A no-op when all are present.
set -euo pipefail
missing=()
pkg-config --exists openssl 2>/dev/null || missing+=(libssl-dev)
command -v pkg-config >/dev/null || missing+=(pkg-config)
command -v openssl >/dev/null || missing+=(openssl)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing ${missing[*]}" >&2
  if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq >/dev/null || true
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
