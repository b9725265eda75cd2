#!/usr/bin/env bash
# Builds llama.cpp's llama-bench with the Vulkan backend, the GPU peer of fs's split (tools/device: prepare.sh bundles
# it, run-on-device.sh runs it on the lent NVIDIA machine, whose image has no Vulkan SDK and no network). Two builds of
# the same source: build-vk (Vulkan, its CPU backend for AVX-512 F/BW/VL/VBMI/VNNI/BF16, no AVX-VNNI, no AMX, which
# Zen 4 lacks) and build-cpu-avx2 (the ggml-cpu target alone, for AVX2 + FMA + F16C: the device's fallback).
#
#   tools/peer/build-llama-vulkan.sh [SRC=/root/peers/llama.cpp]
#
# SRC: a llama.cpp source tree (../shared/peers/build-llama-cpp.sh's). Needs Debian's glslc libvulkan-dev
# spirv-headers glslang-tools. About 15 minutes on 2 cores (the shaders). Debian 12's Vulkan headers (1.3.239) lack
# VK_EXT_layer_settings, which ggml-vulkan uses only to switch on the validation layer's best-practice checks: the
# copy built here drops that structure from instance creation (validation is off in these builds anyway).
set -euo pipefail
src=${1:-/root/peers/llama.cpp}
for tool in glslc cmake; do command -v "$tool" >/dev/null || { echo "no $tool: apt-get install glslc libvulkan-dev spirv-headers glslang-tools cmake" >&2; exit 1; }; done
cd "$src"
/usr/bin/python3 - <<'PY'
path = "ggml/src/ggml-vulkan/ggml-vulkan.cpp"
s = open(path).read()
if "vk::LayerSettingEXT" in s and not open("/usr/include/vulkan/vulkan_core.h").read().count("VK_EXT_layer_settings"):
    a = s.index("    VkBool32 enable_best_practice = layer_settings;")
    b = s.index("&layer_setting_info);", a) + len("&layer_setting_info);")
    s = s[:a] + ("    // built against Vulkan headers without VK_EXT_layer_settings: no best-practice validation\n"
                 "    vk::InstanceCreateInfo instance_create_info(vk::InstanceCreateFlags{}, &app_info, layers, extensions);") + s[b:]
    open(path, "w").write(s)
    print("patched", path, "for the Vulkan headers here")
PY
common=(-DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF)
cmake -B build-vk "${common[@]}" -DGGML_VULKAN=ON -DGGML_AVX512=ON -DGGML_AVX512_VBMI=ON -DGGML_AVX512_VNNI=ON \
  -DGGML_AVX512_BF16=ON -DGGML_AVX_VNNI=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF >/dev/null
cmake --build build-vk -j"$(nproc)" --target llama-bench >/dev/null
cmake -B build-cpu-avx2 "${common[@]}" -DGGML_AVX512=OFF >/dev/null
cmake --build build-cpu-avx2 -j"$(nproc)" --target ggml-cpu >/dev/null
echo "built: $src/build-vk/bin (llama-bench, Vulkan) and $src/build-cpu-avx2/bin/libggml-cpu.so (AVX2)"
