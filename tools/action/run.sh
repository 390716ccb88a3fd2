#!/usr/bin/env bash
# The payability GitHub Action's logic (action.yml installs payability, then
# runs this). It reads the INPUT_* variables action.yml sets from its inputs,
# uses the payability on PATH, and writes:
#   - workflow-command annotations (the github format) to stdout,
#   - the markdown summary to $GITHUB_STEP_SUMMARY,
#   - outputs overall, report (the JSON path), sarif, junit and summary (paths)
#     to $GITHUB_OUTPUT.
# Several URLs: check, memo, probe and lint (without method) run as one
# `payability scan` (its concurrency and per-host limits, JSON Lines);
# preflight, and lint with a method, which scan does not run, run once per
# URL in turn. Either way the JSON is rendered once
# by `payability render`, so every format is one document over all URLs
# (docs/ci.md). Exit status: 0, or 3 when the overall reached fail-on, or 1
# (2 for bad inputs) when something could not be run.
set -uo pipefail

fail() { echo "::error title=payability::$1"; exit "${2:-2}"; }

# json_string prints s as a JSON string (tabs escaped, other control
# characters dropped; the lines carry no CR or LF).
json_string() {
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\t'/\\t}
  s=$(printf '%s' "$s" | tr -d '\000-\037')
  printf '"%s"' "$s"
}

op="${INPUT_OP:-preflight}"
fail_on="${INPUT_FAIL_ON:-error}"
method="${INPUT_METHOD:-}"
allow_private="${INPUT_ALLOW_PRIVATE:-false}"
: "${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"
: "${GITHUB_STEP_SUMMARY:?GITHUB_STEP_SUMMARY is not set}"

case "$fail_on" in error|warn|never) ;; *) fail "fail-on must be error, warn or never" ;; esac
case "$allow_private" in true|false) ;; *) fail "allow-private must be true or false" ;; esac
case "$op" in
  check|memo|probe) [ -z "$method" ] || fail "method applies to preflight and lint only (check, memo and probe use the published requests)" ;;
  preflight|lint) case "$method" in ''|GET|POST) ;; *) fail "method must be GET or POST" ;; esac ;;
  *) fail "op must be preflight, lint, check, memo or probe" ;;
esac
command -v payability >/dev/null || fail "payability is not on PATH" 1

out="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/payability-${GITHUB_RUN_ID:-local}-$$"
mkdir -p "$out" || fail "cannot create $out" 1
urls="$out/urls.txt"
report="$out/report.jsonl"
sarif="$out/payability.sarif"
junit="$out/payability.junit.xml"
summary="$out/summary.md"
overall_file="$out/overall"

# One URL per line; CR (from YAML written on Windows) and surrounding blanks
# dropped, blank lines and # comments skipped (as scan does).
printf '%s\n' "${INPUT_URLS:-}" | tr -d '\r' | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' | grep -v -e '^$' -e '^#' > "$urls" || true
[ -s "$urls" ] || fail "urls names no URL"

private=()
[ "$allow_private" = true ] && private=(--allow-private)
# The suppressions (docs/ci.md): scan (lint) and render read the same file;
# without the input each finds .payability.json itself.
config_args=()
[ -n "${INPUT_CONFIG:-}" ] && config_args=(--config "$INPUT_CONFIG")

mode=loop
case "$op" in
  check|memo|probe) mode=scan ;;
  lint) [ -n "$method" ] || mode=scan ;;
esac

case "$mode" in
  scan)
    payability scan --op "$op" --quiet "${private[@]}" "${config_args[@]}" --out "$report" "$urls"
    rc=$?
    [ "$rc" -eq 0 ] || fail "payability scan exited $rc" 1
    ;;
  loop)
    : > "$report"
    n=0
    while IFS= read -r url; do
      n=$((n + 1))
      args=("$op" --json --fail-on never "${private[@]}")
      [ -n "$method" ] && args+=(--method "$method")
      payability "${args[@]}" -- "$url" < /dev/null > "$out/one.json"
      rc=$?
      case "$rc" in
        0) cat "$out/one.json" >> "$report" ;;
        # No record: a refused URL (its rule is on stderr above) or an
        # internal error; recorded as a scan record of its own, so the URL
        # still counts (an error) in every format.
        2) printf '{"line":%d,"url":%s,"error":{"code":"refused_or_bad_usage"}}\n' "$n" "$(json_string "$url")" >> "$report" ;;
        *) printf '{"line":%d,"url":%s,"error":{"code":"internal"}}\n' "$n" "$(json_string "$url")" >> "$report" ;;
      esac
    done < "$urls"
    ;;
esac

# SARIF locates every result in the repository file that lists the URLs:
# the workflow file whose `urls` input names them (GITHUB_WORKFLOW_REF is
# owner/repo/PATH@ref), at the line naming each URL when the checkout has
# it; render's placeholder (.payability/endpoints) when the workflow is not
# this repository's.
artifact=""
workflow_ref="${GITHUB_WORKFLOW_REF:-}"
repo="${GITHUB_REPOSITORY:-}"
if [ -n "$repo" ] && [ "${workflow_ref#"$repo"/}" != "$workflow_ref" ]; then
  artifact="${workflow_ref#"$repo"/}"
  artifact="${artifact%%@*}"
fi
artifact_args=()
[ -n "$artifact" ] && artifact_args=(--artifact "$artifact")

payability render --fail-on "$fail_on" "${artifact_args[@]}" "${config_args[@]}" \
  --format github \
  --format sarif="$sarif" --format junit="$junit" --format markdown="$summary" --format overall="$overall_file" \
  "$report"
rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
  fail "payability render exited $rc" 1
fi

cat "$summary" >> "$GITHUB_STEP_SUMMARY"
{
  echo "overall=$(cat "$overall_file")"
  echo "report=$report"
  echo "sarif=$sarif"
  echo "junit=$junit"
  echo "summary=$summary"
} >> "$GITHUB_OUTPUT"
exit "$rc"
