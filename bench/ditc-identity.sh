#!/usr/bin/env bash
# Runs two ditc binaries on the same invocations and says whether every help
# text, stdout, stderr, exit code and compiled plan folder is byte-identical.
#
# usage: bench/ditc-identity.sh OLD_DITC NEW_DITC [WORK_DIR]
#
# For a restructuring that must change no output: build the base, copy its
# ditc aside, build the change, run this. Each invocation runs in its own
# folder under WORK_DIR/old and WORK_DIR/new with relative paths, so outputs
# that quote a path quote the same one. Plan folders (ditc compile -o) are
# compared with diff -r. Exit 0 when all is identical, 1 otherwise.
set -uo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: $0 OLD_DITC NEW_DITC [WORK_DIR]" >&2
  exit 2
fi
old=$(realpath "$1")
new=$(realpath "$2")
root=$(cd "$(dirname "$0")/.." && pwd)
work=${3:-$(mktemp -d /tmp/ditc-identity.XXXXXX)}
export DITC_MODELS_DIR=$root/models
inputs=$root/test/Tools
rm -rf "$work/old" "$work/new"
mkdir -p "$work/old" "$work/new"

cases=0
plans=0
failed=0
declare -A families=()

# run NAME ARGS...: one invocation with each binary; its stdout, stderr and
# exit code must match, and so must any folder it wrote.
run() {
  local name=$1
  shift
  cases=$((cases + 1))
  for side in old new; do
    local bin=$old
    [[ $side == new ]] && bin=$new
    mkdir -p "$work/$side/$name"
    (cd "$work/$side/$name" && "$bin" "$@" >stdout 2>stderr; echo $? >rc)
  done
  if ! diff -r "$work/old/$name" "$work/new/$name" >"$work/$name.diff"; then
    failed=$((failed + 1))
    echo "DIFFERS: $name: ditc $*"
    head -20 "$work/$name.diff"
  else
    rm -f "$work/$name.diff"
  fi
}

# plan NAME FAMILY MODEL ARGS...: a ditc compile whose plan folder is compared.
plan() {
  local name=$1 family=$2
  shift 2
  families[$family]=1
  plans=$((plans + 1))
  run "$name" compile "$@" -o plan
  if [[ ! -f $work/new/$name/plan/manifest.json ]]; then
    failed=$((failed + 1))
    echo "NO PLAN: $name: ditc compile $* (see $work/new/$name/stderr)"
  fi
}

commands="models import check compile search calibrate explain weights"

# (a) help: top level, every command's --help, -h and `help <command>`.
run top-none
run top-help --help
run top-h -h
run top-help-cmd help
run top-unknown bogus
run top-help-unknown help bogus
run top-near chek tiny-wan
for c in $commands; do
  run "help-$c" "$c" --help
  run "h-$c" "$c" -h
  run "helpcmd-$c" help "$c"
  run "help-anywhere-$c" "$c" tiny-wan --tp-size 2 --help
done

# (b) representative invocations, errors and --format json included.
run models models
run models-json models --format json
run models-extra models tiny-wan
run models-badformat models --format xml
run import import tiny-flux
run import-summary import tiny-wan --summary
run import-summary-json import tiny-wan --summary --format json
run import-json-nosummary import tiny-wan --format json
run import-debuginfo import tiny-flux --mlir-print-debuginfo --height 256 --width 256
run import-o import tiny-wan -o module.mlir --dtype f32
run import-baddtype import tiny-wan --dtype f16
run import-unknown-model import no-such-model
run check-legal check tiny-wan --tp-size 2
run check-legal-json check tiny-wan --ulysses-degree 2 --format json
run check-illegal check flux.1-dev --tp-size 5
run check-illegal-json check flux.1-dev --tp-size 5 --format json
run check-sp check wan2.1-t2v-1.3b --sp-degree 4
run check-cfg check sd3-medium --cfg-parallel-size 2 --tp-size 2
run check-nodes check wan2.1-t2v-14b --num-gpus 16 --ulysses-degree 8 --cfg-parallel-size 2 --nnodes 2 --gpus-per-node 8
run check-pp check flux.1-dev --pp-size 2 --pp-layer-partition 30,27
run check-alias check flux.1-dev --pipeline-parallel-size 2
run check-alias-twice check flux.1-dev --pp-size 2 --pipeline-parallel-size 2
run check-twice check tiny-wan --tp-size 2 --tp-size 2
run check-unknown-flag check tiny-wan --tp-sise 2
run check-unknown-flag-json check tiny-wan --tp-sise 2 --format json
run check-badint check tiny-wan --tp-size two
run check-badint-json check tiny-wan --tp-size=0 --format=json
run check-novalue check tiny-wan --tp-size
run check-noposition check --tp-size 2
run check-extra check tiny-wan flux.1-dev
run check-mesh-order check tiny-wan --ulysses-degree 2 --tp-size 2 --mesh-order dp,cfg,pp,ring,kv_gather,tp,ulysses
run check-bad-mesh-order check tiny-wan --mesh-order tp,bogus
run check-backend check tiny-wan --ulysses-degree 2 --attention-backend sdpa
run check-hardware check flux.1-dev --tp-size 7 --hardware h200
run check-bad-hardware check tiny-wan --hardware nosuch
run check-workload check wan2.1-t2v-1.3b --height 480 --width 832 --num-frames 33 --batch-size 2 --guidance-scale 1 --num-inference-steps 4 --text-tokens 256
run check-bad-workload check wan2.1-t2v-1.3b --num-frames 4
run check-deployment check tiny-wan --deployment "$inputs/check/Inputs/legal.json"
run check-deployment-json check tiny-wan --deployment "$inputs/check/Inputs/issue-example.json" --format json
run check-deployment-conflict check tiny-wan --deployment "$inputs/check/Inputs/legal.json" --tp-size 2
run check-deployment-bad check tiny-wan --deployment "$inputs/check/Inputs/unknown-key.json" --format json
run check-switch-value check tiny-wan --format=json=1
run compile-no-o compile tiny-wan
run compile-no-o-json compile tiny-wan --format json
run compile-empty-o compile tiny-wan -o ""
run compile-illegal compile flux.1-dev --tp-size 5 -o refused
run compile-illegal-json compile flux.1-dev --tp-size 5 -o refused --format json
run compile-summary compile tiny-wan --ulysses-degree 2 --summary -o plan
run compile-json compile tiny-flux --tp-size 2 --format json -o plan
run compile-switch-value compile tiny-wan --per-rank=1 -o plan
run compile-baddtype compile tiny-wan --dtype x -o plan
run search search tiny-wan --num-gpus 4
run search-json search tiny-flux --num-gpus 2 --format json --top all
run search-throughput search wan2.1-t2v-1.3b --num-gpus 8 --objective throughput --top 3 --hardware h20
run search-profile search tiny-wan --num-gpus 2 --hardware "$inputs/search/Inputs/one-profile.json"
run search-nogpus search tiny-wan
run search-nogpus-json search tiny-wan --format json
run search-badobjective search tiny-wan --num-gpus 2 --objective fast
run search-badtop search tiny-wan --num-gpus 2 --top 0
run search-gpn search tiny-wan --num-gpus 6 --gpus-per-node 4
run search-nodes search tiny-wan --num-gpus 12
run search-parallel-flag search tiny-wan --num-gpus 2 --tp-size 2
run calibrate-from calibrate -o profile.json --from-measurements "$inputs/calibrate/Inputs/measurements.json" --name here
run calibrate-from-json calibrate -o profile.json --from-measurements "$inputs/calibrate/Inputs/measurements.json" --format json
run calibrate-no-o calibrate
run calibrate-ranks-none calibrate -o p.json --ranks none
run calibrate-bad-runtime calibrate -o p.json --runtime /nonexistent/dit-calibrate
run calibrate-mix calibrate -o p.json --from-measurements m.json --threads 2
run calibrate-badname calibrate -o p.json --name a/b --format json
run calibrate-badformat calibrate -o p.json --format yaml
run calibrate-positional calibrate extra -o p.json
run explain-missing explain nowhere
run explain-missing-json explain nowhere --format json
run explain-none explain
run weights-missing weights nowhere
run weights-missing-json weights nowhere --format json
run weights-none weights
# explain and weights on a plan each binary compiles itself.
run explain compile wan2.1-t2v-14b --num-gpus 16 --ulysses-degree 4 --cfg-parallel-size 2 --tp-size 2 --nnodes 2 --gpus-per-node 8 -o plan
for side in old new; do
  bin=$old
  [[ $side == new ]] && bin=$new
  (cd "$work/$side/explain" && "$bin" explain plan >explain.txt 2>&1; echo $? >>explain.txt &&
    "$bin" explain plan --format json >explain.json 2>&1; echo $? >>explain.json)
done
if ! diff -r "$work/old/explain" "$work/new/explain" >/dev/null; then
  failed=$((failed + 1))
  echo "DIFFERS: explain"
fi
# weights on a snapshot written from a one-rank plan (NumPy needed).
if "${DITC_PYTHON:-$root/.venv/bin/python3}" -c "import numpy" 2>/dev/null; then
  run weights compile tiny-wan --dtype f32 -o plan
  for side in old new; do
    bin=$old
    [[ $side == new ]] && bin=$new
    (cd "$work/$side/weights" &&
      "${DITC_PYTHON:-$root/.venv/bin/python3}" "$inputs/weights/make_snapshot.py" plan "$root/models/tiny-wan" good >/dev/null &&
      "${DITC_PYTHON:-$root/.venv/bin/python3}" "$inputs/weights/make_snapshot.py" plan "$root/models/tiny-wan" bad --drop blocks.0.attn1.to_q.weight >/dev/null
      for snap in good bad; do
        "$bin" weights $snap >"weights-$snap.txt" 2>&1; echo $? >>"weights-$snap.txt"
        "$bin" weights $snap --format json >"weights-$snap.json" 2>&1; echo $? >>"weights-$snap.json"
      done)
  done
  if ! diff -r "$work/old/weights" "$work/new/weights" >/dev/null; then
    failed=$((failed + 1))
    echo "DIFFERS: weights"
  fi
else
  echo "skipped: ditc weights on a snapshot (no NumPy)"
fi

# (c) plan folders: configurations across the model families.
plan plan-flux-tp2 flux tiny-flux --tp-size 2
plan plan-flux-dev-ulysses flux flux.1-dev --ulysses-degree 2 --height 512 --width 512 --num-inference-steps 2
plan plan-flux-schnell-ring flux flux.1-schnell --ring-degree 2 --height 512 --width 512
plan plan-wan-tiny wan tiny-wan
plan plan-wan-tiny-perrank wan tiny-wan --ulysses-degree 2 --cfg-parallel-size 2 --per-rank --dtype f32
plan plan-wan-tiny-nobatch wan tiny-wan --cfg-parallel-size 2 --no-batch-branches
plan plan-wan-1.3b-pp wan wan2.1-t2v-1.3b --pp-size 2 --height 240 --width 416 --num-frames 9
plan plan-wan-a14b wan wan2.2-t2v-a14b --ulysses-degree 2 --height 240 --width 416 --num-frames 9
plan plan-wan-deployment wan tiny-wan --deployment "$inputs/check/Inputs/legal.json"
plan plan-sd3-tp2 sd3 sd3-medium --tp-size 2 --height 512 --width 512
plan plan-sd35-kv sd3 sd3.5-large --kv-gather-degree 2 --height 512 --width 512
plan plan-cogvideox-cfg cogvideox cogvideox-2b --cfg-parallel-size 2 --height 240 --width 352 --num-frames 9
plan plan-hunyuan-tp hunyuanvideo hunyuanvideo --tp-size 2 --height 256 --width 256 --num-frames 9
plan plan-qwen-ulysses qwen-image qwen-image --ulysses-degree 2 --height 512 --width 512
plan plan-ltx ltx-video ltx-video --tp-size 2 --height 256 --width 256 --num-frames 9
plan plan-mochi mochi mochi-1-preview --ulysses-degree 2 --height 240 --width 416 --num-frames 7
plan plan-dp-mesh flux tiny-flux --dp-size 2 --tp-size 2 --mesh-order tp,ulysses,kv_gather,ring,pp,cfg,dp

echo "$cases invocations, $plans plan folders across ${#families[@]} families" \
  "(${!families[*]}); work in $work"
if [[ $failed -ne 0 ]]; then
  echo "$failed differ"
  exit 1
fi
echo "all identical"
