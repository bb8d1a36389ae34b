#!/usr/bin/env bash
# Certify a Volcano build on kind: the CI recipe of docs/ci.md.
#
# Creates a kind cluster (kind's node image: pulled, else built here from Debian's packages), loads
# the build's images into it, installs Volcano with helm from its chart (post-install steps
# included), runs the conformance suites (one shard of them in a CI matrix), and keeps the report
# (report.json, junit.xml, index.html, each Volcano pod's log under logs/) and the console output.
# Exit status: vck run's (0 certified, 1 not certified, 2 usage or setup error, 130/143 interrupted).
#
# Inputs, from the environment (all optional):
#   VOLCANO_IMAGES  registry/prefix of the build's images: PREFIX/vc-scheduler:TAG,
#                   PREFIX/vc-controller-manager:TAG, PREFIX/vc-webhook-manager:TAG, in the local
#                   Docker engine (loaded into kind, never pulled; Volcano's `make images` names
#                   them volcanosh/...). Unset: the kit builds the images of release VOLCANO_TAG
#                   here.
#   VOLCANO_TAG     the images' tag, or the release whose chart and images to use
#                   (default: the release the kit pins). A tag that is not a release (a CI
#                   build's) needs VOLCANO_CHART.
#   VOLCANO_CHART   the chart folder (default: VOLCANO_TAG's own installer/helm/chart/volcano).
#   VCK_SUITES      comma-separated suites (default: every suite).
#   VCK_SHARD       K/N: this job's stable share of the scenarios (default: all of them);
#                   `vck report merge` joins the shards' reports.
#   VCK_DURATIONS   a previous report.json, to balance the shards by its durations.
#   VCK_REPORTS     where the report folder goes (default: ./reports).
#   VCK_RUN_ID      the report folder's name (default: certify, or certify-K-of-N).
#   VCK             the vck command (default: vck on PATH).
#   VCK_EXTRA_ARGS  more `vck run` arguments, split on spaces (for example `--kind-workers 1`).
set -euo pipefail

vck=${VCK:-vck}
reports=${VCK_REPORTS:-reports}
shard=${VCK_SHARD:-}
run_id=${VCK_RUN_ID:-certify${shard:+-${shard/\//-of-}}}

impl=volcano-helm
parts=()
[[ -n ${VOLCANO_CHART:-} ]] && parts+=("chart=$VOLCANO_CHART")
[[ -n ${VOLCANO_IMAGES:-} ]] && parts+=("images=$VOLCANO_IMAGES")
[[ -n ${VOLCANO_TAG:-} ]] && parts+=("tag=$VOLCANO_TAG")
if ((${#parts[@]})); then
  impl+=":$(IFS=,; echo "${parts[*]}")"
fi

args=(run --backend kind --impl "$impl" --reports "$reports" --run-id "$run_id")
[[ -n ${VCK_SUITES:-} ]] && args+=(--suite "$VCK_SUITES")
[[ -n $shard ]] && args+=(--shard "$shard")
[[ -n ${VCK_DURATIONS:-} ]] && args+=(--durations "$VCK_DURATIONS")
if [[ -n ${VCK_EXTRA_ARGS:-} ]]; then
  read -r -a extra <<<"$VCK_EXTRA_ARGS"  # split on spaces, never globbed
  args+=("${extra[@]}")
fi

mkdir -p "$reports"
console="$reports/$run_id.console.log"
echo "certify-on-kind: $vck ${args[*]}" | tee "$console"
# tee -i: on Ctrl-C the whole process group gets SIGINT; tee keeps copying vck's teardown lines
# (and vck keeps its own exit status) instead of dying first and breaking vck's output pipe.
# The node image first, on its own: a first build here takes minutes and says so as it goes.
status=0
"$vck" kind image 2>&1 | tee -i -a "$console" || status=${PIPESTATUS[0]}
if ((status == 130 || status == 143)); then
  exit "$status"  # interrupted
elif ((status != 0)); then
  echo "certify-on-kind: no kind node image (above: why); exit 2" | tee -a "$console"
  exit 2
fi
"$vck" "${args[@]}" 2>&1 | tee -i -a "$console" || status=${PIPESTATUS[0]}
echo "certify-on-kind: exit $status; report: $reports/$run_id/index.html; console: $console" | tee -a "$console"
exit "$status"
