#!/usr/bin/env bash
# Makes `import ferry` work for /usr/bin/python3 with the package built in build/python (cmake/python.cmake): writes
# a .pth file naming that directory into the interpreter's site directory for local packages
# (/usr/local/lib/python3.X/dist-packages on Debian), as `pip install -e` would. Re-run after moving the checkout.
# scripts/quickstart.sh runs it; `pip install .` (docs/python.md) installs a copy instead.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=/usr/bin/python3
pkg="$(pwd)/${BUILD_DIR:-build}/python"
if [ ! -f "$pkg/ferry/__init__.py" ]; then
  echo "install_python: $pkg/ferry is not built (build the ferry-python target first)" >&2
  exit 1
fi
site="$($PY -c 'import sys; v = sys.version_info; print("/usr/local/lib/python%d.%d/dist-packages" % (v[0], v[1]))')"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO mkdir -p "$site"
echo "$pkg" | $SUDO tee "$site/ferry.pth" >/dev/null
echo "install_python: $site/ferry.pth -> $pkg"
