#!/bin/sh
# ensure-deps.sh build|fuzz|test|bench -- install the Debian packages kipper needs that
# are missing (only then: apt-get update, apt-get install -y). Needs root to
# install; without root it names what is missing and fails.
set -eu

build_pkgs="gcc make libc6-dev libisal-dev libssl-dev zlib1g-dev libzookeeper-mt-dev libjansson-dev libsnappy-dev liblz4-dev libzstd-dev"
# fuzz: clang's libFuzzer with ASan and UBSan (the runtimes are only recommended by clang-14, and
# ensure-deps installs without recommends), for `make fuzz` and the corpus replay in `make test`.
fuzz_pkgs="$build_pkgs clang-14 libclang-rt-14-dev"
# test: the fuzz packages, real clients and a real Apache ZooKeeper 3.8 to compare against; iproute2
# for the fault suite's network namespaces and matplotlib for its plots (tests/chaos).
test_pkgs="$fuzz_pkgs python3 python3-pytest python3-kazoo python3-confluent-kafka python3-kafka python3-snappy python3-lz4 python3-zstandard python3-xxhash zookeeper zookeeper-bin kcat iproute2 python3-matplotlib"
# bench: the test packages plus librdkafka's headers for bench/broker/load.c.
bench_pkgs="$test_pkgs librdkafka-dev pkg-config"

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

missing=""
for p in $want; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$status" in
        *"install ok installed"*) ;;
        *) missing="$missing $p" ;;
    esac
done
if [ -z "$missing" ]; then
    [ "${1:-build}" = build ] || ensure_npm
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
[ "${1:-build}" = build ] || ensure_npm
