#!/usr/bin/env bash
# `npm run interop:setup`: installs the pinned interop toolchain into a cache outside the repository
# (ICEGUARD_INTEROP_CACHE, default ~/.cache/iceguard-interop) and reuses it across runs. Each part is
# reinstalled only when its pin file changed: the Iceberg REST fixture's classpath, Iceberg's
# catalog test module, the Spark runtime jar, and the Python virtualenv. Maven keeps its downloads in
# its own repository (~/.m2), pip in its cache, so a reinstall after a pin change downloads only
# what changed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${ICEGUARD_INTEROP_CACHE:-$HOME/.cache/iceguard-interop}
mkdir -p "$cache"

missing=()
command -v java >/dev/null 2>&1 || missing+=("java (a JDK 17: apt-get install openjdk-17-jdk-headless)")
command -v mvn >/dev/null 2>&1 || missing+=("mvn (apt-get install maven)")
command -v python3 >/dev/null 2>&1 || missing+=("python3 (3.10 or newer, with venv)")
if [ ${#missing[@]} -gt 0 ]; then
  printf 'interop:setup needs: %s\n' "${missing[@]}" >&2
  exit 1
fi

# Runs "$2..." unless the stamp "$1" records the same hash of the pin files listed in $PINS.
fresh () {
  local stamp="$cache/$1.stamp" sum
  sum=$(cat $PINS | sha256sum | cut -d' ' -f1)
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sum" ]
}
stamp () { cat $PINS | sha256sum | cut -d' ' -f1 > "$cache/$1.stamp"; }

mvn_q () { mvn -q -B --no-transfer-progress "$@"; }

# The Iceberg REST fixture: its classpath, copied jar by jar from the local Maven repository.
PINS="$here/fixture/pom.xml"
if ! fresh fixture; then
  echo "interop:setup: Iceberg REST fixture classpath"
  rm -rf "$cache/fixture-lib"
  mvn_q -f "$here/fixture/pom.xml" dependency:copy-dependencies -DoutputDirectory="$cache/fixture-lib"
  stamp fixture
fi

# Iceberg's catalog test suites, compiled against the same Iceberg (a Maven test module).
if [ -f "$here/catalog-tests/pom.xml" ]; then
  PINS="$here/catalog-tests/pom.xml"
  if ! fresh catalog-tests; then
    echo "interop:setup: Iceberg catalog tests"
    mvn_q -f "$here/catalog-tests/pom.xml" -Dinterop.cache="$cache" dependency:go-offline test-compile
    # Surefire resolves its JUnit provider only when it runs a test: one test against a closed port
    # fetches it, so the suite can run Maven offline.
    mvn_q -f "$here/catalog-tests/pom.xml" -Dinterop.cache="$cache" test -Dtest='RestCatalogTests#testBasicCreateTable' \
      -Dcatalog.uri=http://127.0.0.1:9 -Dcatalog.reports="$cache/catalog-tests/setup-reports" >/dev/null || true
    stamp catalog-tests
  fi
fi

# Spark's Iceberg runtime, given to PySpark as spark.jars (an absolute path, no Ivy at run time).
PINS="$here/spark/runtime.txt"
if ! fresh spark; then
  echo "interop:setup: Iceberg Spark runtime"
  rm -rf "$cache/jars"
  mkdir -p "$cache/jars"
  mvn_q dependency:copy -Dartifact="$(grep -v '^#' "$here/spark/runtime.txt" | head -n1)" -DoutputDirectory="$cache/jars"
  stamp spark
fi

# Python: PyIceberg, PySpark and DuckDB (with the extensions it loads shipped as wheels).
PINS="$here/python/requirements.txt"
if ! fresh venv; then
  echo "interop:setup: Python virtualenv"
  rm -rf "$cache/venv"
  python3 -m venv "$cache/venv"
  "$cache/venv/bin/pip" install -q --disable-pip-version-check -r "$here/python/requirements.txt"
  stamp venv
fi

echo "interop:setup: ready in $cache"
