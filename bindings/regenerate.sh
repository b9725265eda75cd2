#!/usr/bin/env bash
# Regenerates the OpenCL bindings (src/main/java/fs/opencl/bindings) from the system's CL/cl.h with jextract.
# jextract is not committed: install it (https://github.com/openjdk/jextract) and put it on PATH or set $JEXTRACT.
# Needs the OpenCL headers (Debian: opencl-c-headers). What is extracted is listed in opencl.args.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
jextract="${JEXTRACT:-$(command -v jextract || true)}"
if [[ -z "$jextract" || ! -x "$jextract" ]]; then
  echo "regenerate.sh: jextract not found; put it on PATH or set JEXTRACT=/path/to/bin/jextract" >&2
  exit 1
fi
header="${OPENCL_HEADER:-/usr/include/CL/cl.h}"
[[ -f "$header" ]] || { echo "regenerate.sh: $header not found (install opencl-c-headers or set OPENCL_HEADER)" >&2; exit 1; }

out="$here/src/main/java"
rm -rf "$out/fs/opencl/bindings"
"$jextract" @"$here/opencl.args" --output "$out" "$header"
echo "regenerated $(find "$out/fs/opencl/bindings" -name '*.java' | wc -l) files under $out/fs/opencl/bindings"
