#!/usr/bin/env bash
# Runs the fs CLI on JDK 25, building it first when the jar is missing or older than the sources.
set -euo pipefail

# The file a path names once every symbolic link on the way is followed, as `readlink -f` prints it; macOS has no
# `readlink -f` before 12.3, plain readlink everywhere. So `fs` may be a link on PATH (ln -s "$PWD/fs" ~/.local/bin/fs)
# and still find the repository it belongs to.
resolve_links() {
  local path="$1" target hops=0
  while [[ -L "$path" && "$hops" -lt 64 ]]; do
    target="$(readlink "$path")"
    if [[ "$target" == /* ]]; then path="$target"; else path="$(dirname "$path")/$target"; fi
    hops=$((hops + 1))
  done
  echo "$(cd -P "$(dirname "$path")" && pwd)/$(basename "$path")"
}

root="$(dirname "$(resolve_links "${BASH_SOURCE[0]}")")"
jar="$root/cli/target/fs.jar"

# A JDK's release file names its version without starting a JVM (a tenth of a second saved on every run); a JDK
# without one is asked.
java_major() {
  local major=""
  [[ -f "$1/release" ]] && major="$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release")"
  [[ -n "$major" ]] || major="$("$1/bin/java" -XshowSettings:properties -version 2>&1 \
      | sed -n 's/^ *java.specification.version = \([0-9]*\).*/\1/p')"
  echo "$major"
}

# Sets JDK to the first JDK 25 or newer among JAVA_HOME, the usual install folders and the java on PATH; NEWEST to
# the newest older one seen ("Java 17 (/usr/lib/jvm/…)"), for the message when there is none.
JDK="" NEWEST="" newest_major=0
find_jdk() {
  local candidates=()
  [[ -n "${JAVA_HOME:-}" ]] && candidates+=("$JAVA_HOME")
  candidates+=(/usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/*25* /usr/lib/jvm/*-2[6-9]* /opt/java/*
      /Library/Java/JavaVirtualMachines/*/Contents/Home)
  if command -v java >/dev/null 2>&1; then
    candidates+=("$(dirname "$(dirname "$(resolve_links "$(command -v java)")")")")
  fi
  local home major
  for home in "${candidates[@]}"; do
    [[ -x "$home/bin/java" ]] || continue
    major="$(java_major "$home")"
    [[ -n "$major" ]] || continue
    if [[ "$major" -ge 25 ]]; then JDK="$home"; return 0; fi
    if [[ "$major" -gt "$newest_major" ]]; then newest_major="$major" NEWEST="Java $major ($home)"; fi
  done
  return 1
}

if ! find_jdk; then
  echo "fs: needs JDK 25 or newer, and ${NEWEST:+the newest found is }${NEWEST:-found no Java}: install one" \
       "(e.g. Temurin 25 from https://adoptium.net) and set JAVA_HOME to it" >&2
  exit 1
fi
export JAVA_HOME="$JDK"

# Sources only: a build output (bindings/target) is rewritten by every Maven run, and would ask for a build each time.
if [[ ! -f "$jar" ]] || [[ -n "$(find "$root/pom.xml" "$root/core/pom.xml" "$root/core/src/main" \
      "$root/bindings/pom.xml" "$root/bindings/src" "$root/native/kernels" "$root/native/cpu" "$root/server/pom.xml" \
      "$root/server/src/main" "$root/cli/pom.xml" "$root/cli/src/main" \
      -newer "$jar" -type f -print -quit 2>/dev/null)" ]]; then
  if ! command -v mvn >/dev/null 2>&1; then
    echo "fs: the jar needs building and Maven is not installed (install maven, then run ./fs again)" >&2
    exit 1
  fi
  echo "fs: building the jar with Maven (on the first run and after the sources change)…" >&2
  # Maven's whole log goes to a file; the terminal gets a line per module as the reactor reaches it (a first build
  # takes minutes, which a silent terminal would not explain) and, if the build fails, what `mvn -q` would have
  # shown: every line but Maven's [INFO] ones. All on stderr: stdout is the command's.
  build_log="$(mktemp "${TMPDIR:-/tmp}/fs-build.XXXXXX")"
  # Maven's own JVM warns about sun.misc.Unsafe on JDK 25, and -Dstyle.color=never still emits colour resets.
  if ! (cd "$root" && MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow" \
        mvn -B -Dstyle.color=never package -DskipTests -Dmaven.test.skip=true 2>&1 \
        | awk -v log_file="$build_log" '
            { gsub(/\033\[[0-9;]*[A-Za-z]/, ""); print > log_file }
            /^\[INFO\] Download(ing|ed) from / && !downloading {
              downloading = 1
              print "fs: downloading Maven plugins and libraries (the first build only)…"; fflush()
            }
            /^\[INFO\] Building .* \[[0-9]+\/[0-9]+\]$/ {
              name = $3; for (i = 4; i <= NF - 2; i++) name = name " " $i
              step = substr($NF, 2, length($NF) - 2)  # [3/6] without its brackets
              print "fs: building " name " (" step ")…"; fflush()
            }' >&2
        exit "${PIPESTATUS[0]}"); then
    grep -v '^\[INFO\]' "$build_log" >&2 || true
    echo "fs: the build failed (see above; Maven's whole log: $build_log)" >&2
    exit 1
  fi
  rm -f "$build_log"
  touch "$jar"  # Maven leaves an up-to-date jar as it was, which would leave it older than the sources that were newer
fi

jvm_flags=(--add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC -Xss4m)
# OpenCL drivers built on LLVM (PoCL among them) install their own SIGSEGV/SIGBUS/SIGILL handlers over HotSpot's,
# which the JVM needs for its safepoint polls: without signal chaining such a process dies now and then of a bare
# "Segmentation fault". libjsig keeps HotSpot's handlers first and chains the driver's.
if [[ -f "$JAVA_HOME/lib/libjsig.so" ]]; then
  export LD_PRELOAD="$JAVA_HOME/lib/libjsig.so${LD_PRELOAD:+:$LD_PRELOAD}"
fi

# JDK 25's AOT cache (JEP 483, 514, 515) keeps the classes a training run loaded and linked, and its method profiles,
# which spares each start much class loading and some warm-up (on 2 cores: 0.1 s of `fs tokenize`, 0.7 s of a first
# `fs run`). It is made once per build, by a small generation on the tiny test model, and used from then on; when it
# cannot be made (or FS_AOT=0) fs runs without it, and nothing here may stop fs from running.
aot="$root/cli/target/fs.aot"
fresh() { [[ -f "$1" && ! "$jar" -nt "$1" ]]; }
if [[ "${FS_AOT:-1}" != 0 ]] && ! fresh "$aot" && ! fresh "$aot.failed" && [[ -d "$root/models/tiny-tied" ]]; then
  echo "fs: preparing the startup cache (once per build)…" >&2
  training="$(mktemp -d 2>/dev/null)" || training=""
  # The training run reads its tokenizer from a cache of its own (made by a first run), so that the cached path is
  # the one trained, and the user's tokenizer cache is left alone.
  if [[ -n "$training" ]] \
     && FS_CACHE_DIR="$training" "$JAVA_HOME/bin/java" "${jvm_flags[@]}" -jar "$jar" \
          tokenize "$root/models/tiny-tied" hi >/dev/null 2>&1 \
     && FS_CACHE_DIR="$training" "$JAVA_HOME/bin/java" "${jvm_flags[@]}" -XX:AOTCacheOutput="$aot.$$" -jar "$jar" \
          run "$root/models/tiny-tied" -p hi -n 2 --temp 0 -t 2 --backend cpu >/dev/null 2>&1 \
     && [[ -s "$aot.$$" ]]; then
    mv -f "$aot.$$" "$aot" 2>/dev/null || true  # a rename, so that a concurrent run never sees half a cache
  else
    echo "fs: could not make the startup cache; running without it" >&2
    touch "$aot.failed" 2>/dev/null || true  # not tried again until the next build
  fi
  rm -rf ${training:+"$training"} "$aot.$$" "$aot.$$.config" 2>/dev/null || true
fi
if [[ "${FS_AOT:-1}" != 0 ]] && fresh "$aot"; then
  # -Xlog:aot=off: a cache the JVM cannot use (other FS_JAVA_OPTS, a damaged file) is skipped without a word.
  jvm_flags+=(-XX:AOTMode=auto -XX:AOTCache="$aot" -Xlog:aot=off)
fi

# The JVM announces the incubating Vector API on fd 2 before main ("WARNING: Using incubator modules"), and no flag
# silences it. So the JVM starts with fd 2 on /dev/null and the real stderr saved on fd 3, and the first thing main
# does is move fd 3 back to fd 2 (fs.cli.LauncherStderr): from then on stderr is the user's own, a terminal stays a
# terminal (chat's prompt, the download bar), and exec keeps signals and exit codes as they are. Only a JVM that fails
# before main would fail without a word; with our own flags that does not happen, so options the user adds are tried
# first, on a JVM that only prints its version.
if [[ -n "${FS_JAVA_OPTS:-}" ]]; then
  # shellcheck disable=SC2086 # FS_JAVA_OPTS is a list of options, split as the shell splits words
  if ! jvm_says="$("$JAVA_HOME/bin/java" "${jvm_flags[@]}" $FS_JAVA_OPTS -version 2>&1)"; then
    grep -v '^WARNING: Using incubator modules: jdk.incubator.vector$' <<<"$jvm_says" >&2
    echo "fs: the JVM does not start with FS_JAVA_OPTS='$FS_JAVA_OPTS' (see above)" >&2
    exit 1
  fi
fi
# shellcheck disable=SC2086
exec "$JAVA_HOME/bin/java" "${jvm_flags[@]}" -Dfs.stderr.fd=3 ${FS_JAVA_OPTS:-} -jar "$jar" "$@" 3>&2 2>/dev/null
