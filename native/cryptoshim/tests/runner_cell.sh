#!/bin/sh
# runner_cell.sh RUNNER DIR: a short cell of parbench-sigpar-native on a fresh P-256 key
# (2 threads, sign then verify), checking that it measured, passed its checks and wrote
# its JSON. Used by `make test`, `test-asan` and `test-tsan`. EMULATOR (words, may be
# empty) runs the runner of a cross build, e.g. 'qemu-aarch64-static -L /usr/aarch64-linux-gnu'.
set -eu
emulator=${EMULATOR:-}
runner=$1
dir=$2
mkdir -p "$dir"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -outform DER -out "$dir/key.pem.der" 2>/dev/null
openssl pkcs8 -topk8 -nocrypt -inform DER -outform DER -in "$dir/key.pem.der" -out "$dir/private.der"
openssl pkey -inform DER -in "$dir/private.der" -pubout -outform DER -out "$dir/public.der"
printf 'parbench runner test message' > "$dir/message.bin"
for op in sign verify; do
    extra=""
    if [ "$op" = verify ]; then
        openssl dgst -sha256 -sign "$dir/private.der" -keyform DER -out "$dir/signature.bin" "$dir/message.bin"
        extra="--signature $dir/signature.bin"
    fi
    # shellcheck disable=SC2086
    $emulator "$runner" --scheme ecdsa --param SHA256 --operation "$op" --workers 2 --warmup 0.05 --duration 0.4 \
        --window 0.3 --sample-interval 0.1 --max-latency-samples 50 --private-key "$dir/private.der" \
        --public-key "$dir/public.der" --message "$dir/message.bin" $extra --json "$dir/$op.json" > "$dir/$op.out"
    grep -q '^started ' "$dir/$op.out"
    grep -q '"tamper_rejected": true' "$dir/$op.json"
    if grep -q '"error"' "$dir/$op.json" || grep -q '"failed": [1-9]' "$dir/$op.json"; then
        echo "runner_cell: $op failed its checks:" >&2
        cat "$dir/$op.json" >&2
        exit 1
    fi
done
echo "runner_cell: sign and verify measured and checked"
