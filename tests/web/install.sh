#!/bin/sh
# Installs the browser tests' npm packages (package-lock.json: playwright-core, which
# drives Debian's /usr/bin/chromium; it downloads no browser) into tests/web/node_modules
# (gitignored). Idempotent and safe to run from parallel tests (flock). Needs npm.
# Called by tests/integration/web_*.sh and scripts/setup.sh.
set -eu
dir=$(cd "$(dirname "$0")" && pwd)
ready() {
    [ -f "$dir/node_modules/playwright-core/package.json" ] &&
        [ "$(cd "$dir" && node -p "require('./node_modules/playwright-core/package.json').version" 2>/dev/null)" = \
          "$(cd "$dir" && node -p "require('./package-lock.json').packages['node_modules/playwright-core'].version")" ]
}
ready && exit 0
exec 9>"$dir/.install.lock"
flock 9
ready && exit 0
cd "$dir"
npm ci --no-audit --no-fund --loglevel=error >&2
