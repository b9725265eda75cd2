#!/usr/bin/env bash
# Runs the fs CLI on JDK 25, building it first when the jar is missing or older than the sources.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
jar="$root/java/target/fs.jar"

java_major() { "$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = \([0-9]*\).*/\1/p'; }

find_jdk() {
  local candidates=()
  [[ -n "${JAVA_HOME:-}" ]] && candidates+=("$JAVA_HOME")
  candidates+=(/usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/*25* /usr/lib/jvm/*-2[6-9]* /opt/java/* /Library/Java/JavaVirtualMachines/*/Contents/Home)
  if command -v java >/dev/null 2>&1; then
    candidates+=("$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")")
  fi
  for home in "${candidates[@]}"; do
    [[ -x "$home/bin/java" ]] || continue
    local major; major="$(java_major "$home")"
    if [[ -n "$major" && "$major" -ge 25 ]]; then echo "$home"; return 0; fi
  done
  return 1
}

if ! JDK="$(find_jdk)"; then
  echo "fs: needs JDK 25 or newer; install one (e.g. Temurin 25) and set JAVA_HOME to it" >&2
  exit 1
fi
export JAVA_HOME="$JDK"

if [[ ! -f "$jar" ]] || [[ -n "$(find "$root/pom.xml" "$root/java/pom.xml" "$root/java/src/main" "$root/bindings" "$root/native/kernels" \
      -newer "$jar" -type f -print -quit 2>/dev/null)" ]]; then
  if ! command -v mvn >/dev/null 2>&1; then
    echo "fs: the jar needs building and Maven is not installed (install maven, then run ./fs again)" >&2
    exit 1
  fi
  echo "fs: building (mvn package)…" >&2
  if ! (cd "$root" && mvn -B -q package -DskipTests -Dmaven.test.skip=true 1>&2); then
    echo "fs: the build failed (see above)" >&2
    exit 1
  fi
fi

# The JVM announces the incubating Vector API on every start; that line is noise, so it is the one line dropped.
exec "$JAVA_HOME/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
  -XX:+UseParallelGC -Xss4m ${FS_JAVA_OPTS:-} -jar "$jar" "$@" \
  2> >(grep --line-buffered -v '^WARNING: Using incubator modules: jdk.incubator.vector$' >&2)
