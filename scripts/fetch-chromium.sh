#!/usr/bin/env bash
# Installs headless Chromium (Debian's `chromium` package) and a font for the live monitor's
# browser test (tests/tests/serve.rs: screenshots and the DOM of the live page). A no-op when
# both are present. Prints chromium's path.
set -euo pipefail
missing=()
command -v chromium >/dev/null || missing+=(chromium)
fc-list 2>/dev/null | grep -qi dejavu || missing+=(fonts-dejavu-core)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing ${missing[*]}" >&2
  if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq >/dev/null || true
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi
command -v chromium
