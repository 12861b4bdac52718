#!/bin/sh
# ensure-deps.sh build|fuzz|test|bench -- install the Debian packages kipper needs that
# are missing (only then: apt-get update, apt-get install -y). Needs root to
# install; without root it names what is missing and fails. test and bench
# also fetch librdkafka 2.0.2's sources (its test suite) once, into
# build/deps/librdkafka-2.0.2, from Debian's archive.
set -eu

build_pkgs="gcc make libc6-dev libisal-dev libssl-dev zlib1g-dev libzookeeper-mt-dev libjansson-dev libsnappy-dev liblz4-dev libzstd-dev"
# fuzz: clang's libFuzzer with ASan and UBSan (the runtimes are only recommended by clang-14, and
# ensure-deps installs without recommends), for `make fuzz` and the corpus replay in `make test`.
fuzz_pkgs="$build_pkgs clang-14 libclang-rt-14-dev"
# test: the fuzz packages, real clients and a real Apache ZooKeeper 3.8 to compare against; iproute2
# for the fault suite's network namespaces and matplotlib for its plots (tests/chaos).
# librdkafka-dev, pkg-config, g++ and rapidjson-dev (read by its test 0053 and 0110) build librdkafka's
# own test runner (tests/librdkafka/run-suite.sh).
test_pkgs="$fuzz_pkgs python3 python3-pytest python3-kazoo python3-confluent-kafka python3-kafka python3-snappy python3-lz4 python3-zstandard python3-xxhash zookeeper zookeeper-bin kcat iproute2 python3-matplotlib librdkafka-dev pkg-config g++ rapidjson-dev curl"
# bench: the test packages (librdkafka's headers are there for bench/broker/load.c).
bench_pkgs="$test_pkgs"

case "${1:-build}" in
    build) want=$build_pkgs ;;
    fuzz) want=$fuzz_pkgs ;;
    test) want=$test_pkgs ;;
    bench) want=$bench_pkgs ;;
    *) echo "usage: $0 build|fuzz|test|bench" >&2; exit 2 ;;
esac

# npm packages for tests likewise: KafkaJS (an admin client the Python ones
# do not cover), into tests/integration/js/node_modules, never globally.
ensure_npm() {
    js="$(dirname "$0")/../tests/integration/js"
    [ -d "$js/node_modules/kafkajs" ] && return 0
    if ! command -v npm >/dev/null 2>&1; then
        echo "ensure-deps: installing Debian's nodejs and npm"
        [ "$(id -u)" = 0 ] || { echo "ensure-deps: not root; install them with: apt-get install -y nodejs npm" >&2; exit 1; }
        DEBIAN_FRONTEND=noninteractive apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends nodejs npm
    fi
    echo "ensure-deps: installing the tests' npm packages in $js"
    (cd "$js" && npm ci --no-audit --no-fund --loglevel=error)
}

# librdkafka's test suite as Debian ships it (the library's version, 2.0.2-1 in bookworm): the
# upstream tarball from the archive's pool, checked against the .dsc, whose own SHA-256 is pinned
# here (the .dsc is what Debian's signed Sources index names). Fetched once; `make clean` drops it.
RDK_DIR="$(dirname "$0")/../build/deps"
RDK_POOL=http://deb.debian.org/debian/pool/main/libr/librdkafka
RDK_DSC=librdkafka_2.0.2-1.dsc
RDK_DSC_SHA256=88eb09e84f3d838676c45d2db47633923d069b8605f6b4b48895155ab2b4c64f
RDK_ORIG=librdkafka_2.0.2.orig.tar.gz
ensure_librdkafka_src() {
    [ -f "$RDK_DIR/librdkafka-2.0.2/tests/test.c" ] && return 0
    echo "ensure-deps: fetching librdkafka 2.0.2's sources (its test suite) from $RDK_POOL"
    mkdir -p "$RDK_DIR"
    dl="$RDK_DIR/download"
    rm -rf "$dl" && mkdir -p "$dl"
    for f in "$RDK_DSC" "$RDK_ORIG"; do
        if ! curl -fsS --retry 2 --connect-timeout 20 -o "$dl/$f" "$RDK_POOL/$f"; then
            echo "ensure-deps: cannot download $RDK_POOL/$f (is deb.debian.org reachable?)" >&2
            exit 1
        fi
    done
    echo "$RDK_DSC_SHA256  $RDK_DSC" | (cd "$dl" && sha256sum -c --quiet) ||
        { echo "ensure-deps: $RDK_DSC does not have the expected SHA-256" >&2; exit 1; }
    # The orig tarball's line under Checksums-Sha256 in the .dsc.
    want_sum=$(sed -n '/^Checksums-Sha256:/,/^[^ ]/p' "$dl/$RDK_DSC" | awk -v f="$RDK_ORIG" '$3 == f { print $1 }')
    echo "$want_sum  $RDK_ORIG" | (cd "$dl" && sha256sum -c --quiet) ||
        { echo "ensure-deps: $RDK_ORIG does not match $RDK_DSC" >&2; exit 1; }
    rm -rf "$RDK_DIR/librdkafka-2.0.2"
    tar -xzf "$dl/$RDK_ORIG" -C "$RDK_DIR"
    rm -rf "$dl"
    [ -f "$RDK_DIR/librdkafka-2.0.2/tests/test.c" ] ||
        { echo "ensure-deps: $RDK_ORIG has no librdkafka-2.0.2/tests/test.c" >&2; exit 1; }
}

# What test and bench need beyond the Debian packages.
ensure_test_extras() {
    ensure_npm
    ensure_librdkafka_src
}

missing=""
for p in $want; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$status" in
        *"install ok installed"*) ;;
        *) missing="$missing $p" ;;
    esac
done
if [ -z "$missing" ]; then
    case "${1:-build}" in fuzz) ensure_npm ;; test | bench) ensure_test_extras ;; esac
    exit 0
fi

echo "ensure-deps: installing missing Debian packages:$missing"
if [ "$(id -u)" != 0 ]; then
    echo "ensure-deps: not root; install them with: apt-get install -y$missing" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
case "${1:-build}" in fuzz) ensure_npm ;; test | bench) ensure_test_extras ;; esac
