#!/usr/bin/env bash
# Builds device-bundle/: everything fs needs on a bare NVIDIA machine that has a driver but no JDK, no ICD loader and
# no network (tools/device/README.md). Run it here, after `mvn -B -q package -DskipTests`; run-on-device.sh uses it.
#
#   device-bundle/runtime.tar.xz   a jlink runtime of exactly the modules jdeps finds in fs.jar and its lib/ jars
#   device-bundle/app/             fs.jar and lib/*.jar, as Maven built them
#   device-bundle/lib/             libOpenCL.so.1, the ICD loader of Debian's ocl-icd-libopencl1
#   device-bundle/vendors/         nvidia.icd, naming libnvidia-opencl.so.1 (the driver's OpenCL library)
#   device-bundle/models/          the Qwen3 tokenizer (xz), the two quantized q-tied GGUF files, and q-tied's config
#                                  and tokenizer (models/q-tied/, for the MoE bench model made there)
#   device-bundle/peer.tar.xz      when PEER_VULKAN names tools/peer/build-llama-vulkan.sh's build (default
#                                  /root/peers/llama.cpp/build-vk, with PEER_VULKAN_AVX2's libggml-cpu beside it):
#                                  llama-bench, its libraries, the Vulkan loader, glvnd's libGLdispatch and libgomp: the peer
#
# The bundle carries its own models instead of reading models/ because the tracked tree alone is larger than what
# a device call may send (64 MiB): a device run has to go out with models/ left behind (README.md says how).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bundle="$root/device-bundle"
jdk="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
# The two quantized formats the device run checks: the 8-bit and the most used 4-bit k-quant.
quantized=(Q8_0 Q4_K_M)

fail() { echo "prepare: $*" >&2; exit 1; }

[[ -x "$jdk/bin/jlink" && -x "$jdk/bin/jdeps" ]] || fail "no jlink/jdeps in $jdk (set JAVA_HOME to a JDK 25)"
[[ -f "$root/cli/target/fs.jar" && -d "$root/cli/target/lib" ]] \
  || fail "cli/target/fs.jar is missing: run 'mvn -B -q package -DskipTests' first"
for t in "${quantized[@]}"; do
  [[ -f "$root/models/q-tied/model-$t.gguf" ]] || fail "models/q-tied/model-$t.gguf is missing"
done
command -v xz >/dev/null || fail "xz is not installed (apt-get install xz-utils)"

rm -rf "$bundle"
mkdir -p "$bundle"/{app/lib,lib,vendors,models}
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cp "$root/cli/target/fs.jar" "$bundle/app/"
cp "$root"/cli/target/lib/*.jar "$bundle/app/lib/"

# jdeps over the jar and every library it loads: the runtime holds what they reference and nothing else.
modules="$("$jdk/bin/jdeps" --multi-release 25 --ignore-missing-deps --print-module-deps \
  "$bundle/app/fs.jar" "$bundle"/app/lib/*.jar 2>/dev/null | tail -1)"
[[ "$modules" == *jdk.incubator.vector* ]] || fail "jdeps found no jdk.incubator.vector in fs.jar (got '$modules')"
echo "prepare: runtime modules: $modules"
# zip-0, then xz over the whole image: xz across the uncompressed modules file is about 40% smaller than jlink's own
# zip-9 per resource, and only the carried archive's size counts; unpacked on the device it is ~90 MB of disk.
"$jdk/bin/jlink" --add-modules "$modules" --strip-debug --no-man-pages --no-header-files --compress zip-0 \
  --output "$work/runtime" 2>&1 | { grep -v "^WARNING: Using incubator modules" || true; }
# jlink keeps the native symbol tables; the JVM reads none of them.
find "$work/runtime" -name '*.so' -exec strip --strip-unneeded {} + 2>/dev/null || true
"$work/runtime/bin/java" --add-modules jdk.incubator.vector -version >/dev/null 2>&1 \
  || fail "the jlinked runtime does not start"
tar -C "$work" -cf - runtime | xz -T2 -9 >"$bundle/runtime.tar.xz"

# The ICD loader: the installed one, else the package fetched and unpacked (not installed).
loader="$(dpkg -L ocl-icd-libopencl1 2>/dev/null | grep '/libOpenCL\.so\.1$' | head -1 || true)"
if [[ -z "$loader" ]]; then
  (cd "$work" && apt-get download ocl-icd-libopencl1 >/dev/null && dpkg -x ocl-icd-libopencl1_*.deb "$work/deb") \
    || fail "cannot get ocl-icd-libopencl1 (apt-get install ocl-icd-libopencl1)"
  loader="$(find "$work/deb" -name 'libOpenCL.so.1' | head -1)"
fi
cp -L "$loader" "$bundle/lib/libOpenCL.so.1"
# A bare name: the loader dlopens it through LD_LIBRARY_PATH, which run-on-device.sh points at the driver's folder.
echo libnvidia-opencl.so.1 >"$bundle/vendors/nvidia.icd"

xz -T2 -9 -c "$root/models/tiny-tied/tokenizer.json" >"$bundle/models/tokenizer.json.xz"
cp "$root/models/tiny-tied/tokenizer_config.json" "$bundle/models/"
for t in "${quantized[@]}"; do cp "$root/models/q-tied/model-$t.gguf" "$bundle/models/"; done

mkdir -p "$bundle/models/q-tied"
for f in config.json generation_config.json tokenizer.json tokenizer_config.json; do
  cp "$root/models/q-tied/$f" "$bundle/models/q-tied/"
done

# The peer: llama.cpp built with GGML_VULKAN=ON, its CPU backend for AVX-512 (in lib/) and, from a second build of
# the ggml-cpu target alone, for AVX2 (cpu-avx2/); run-on-device.sh copies the one the machine takes over lib/'s.
peer="${PEER_VULKAN:-/root/peers/llama.cpp/build-vk}"
peer_avx2="${PEER_VULKAN_AVX2:-/root/peers/llama.cpp/build-cpu-avx2}"
if [[ -x "$peer/bin/llama-bench" ]]; then
  [[ -f "$peer_avx2/bin/libggml-cpu.so" ]] || fail "$peer_avx2/bin/libggml-cpu.so is missing (the AVX2 CPU backend)"
  p="$work/peer"
  mkdir -p "$p"/{bin,lib,cpu-avx2,cpu-avx512}
  cp "$peer/bin/llama-bench" "$p/bin/"
  cp -a "$peer"/bin/lib{llama,ggml}*.so* "$p/lib/"
  mv "$p"/lib/libggml-cpu.so* "$p/cpu-avx512/"
  cp -a "$peer_avx2"/bin/libggml-cpu.so* "$p/cpu-avx2/"
  for so in libvulkan.so.1 libgomp.so.1; do
    cp -L "$(ldconfig -p | awk -v so="$so" '$1 == so && /x86-64/ {print $NF; exit}')" "$p/lib/$so" || fail "no $so here"
  done
  # NVIDIA's Vulkan driver (libGLX_nvidia.so.0) needs glvnd's dispatch library, which that image lacks: Debian's,
  # fetched and unpacked (not installed).
  (cd "$work" && apt-get download libglvnd0 >/dev/null && dpkg -x libglvnd0_*.deb "$work/glvnd") \
    || fail "cannot get libglvnd0 (apt-get download libglvnd0)"
  cp -L "$work"/glvnd/usr/lib/x86_64-linux-gnu/libGLdispatch.so.0 "$p/lib/"
  strip --strip-unneeded "$p"/bin/* "$p"/lib/*.so* "$p"/cpu-*/*.so* 2>/dev/null || true
  tar -C "$work" -cf - peer | xz -T2 -9 >"$bundle/peer.tar.xz"
  echo "prepare: peer: llama.cpp's Vulkan build from $peer ($(du -sh "$bundle/peer.tar.xz" | cut -f1) packed)"
else
  echo "prepare: no llama.cpp Vulkan build at $peer: the split runs fs alone"
fi

bundle_bytes="$(du -sb "$bundle" | cut -f1)"
tree_bytes="$(cd "$root" && git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1)"
mib() { echo $(( ($1 + 1048575) / 1048576 )); }
echo "prepare: device-bundle is $(mib "$bundle_bytes") MiB ($bundle_bytes bytes); the tracked tree is $(mib "$tree_bytes") MiB"
if (( bundle_bytes + tree_bytes > 64 * 1048576 )); then
  echo "prepare: tree + bundle exceed the 64 MiB a device call sends: send the tree without models/ (tools/device/README.md)"
fi
