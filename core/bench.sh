#!/usr/bin/env bash
# Runs the CPU backend's JMH benchmarks (test scope; mvn verify never runs them). Arguments go to JMH, e.g.
#   core/bench.sh                       every benchmark
#   core/bench.sh ModelSweepBench -p threads=2
#   core/bench.sh -l                    list them
set -euo pipefail
cd "$(dirname "$0")/.."
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
mvn -B -q -pl core -am test-compile dependency:build-classpath \
    -Dmdep.includeScope=test -Dmdep.outputFile=target/test-classpath.txt
cp="core/target/test-classes:core/target/classes:$(cat core/target/test-classpath.txt)"
echo "load average before: $(cat /proc/loadavg)" >&2
"$JAVA_HOME/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -cp "$cp" \
    org.openjdk.jmh.Main "$@"
echo "load average after: $(cat /proc/loadavg)" >&2
