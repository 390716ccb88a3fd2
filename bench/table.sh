#!/bin/sh
# bench/table.sh: today's figures for docs/performance.md, as one Markdown
# table, each ratio against a baseline measured in this same run.
#
#   sh bench/table.sh            # from the repository root; a few minutes
#   N=20000 sh bench/table.sh    # URLs per network phase (default 10000)
#
# The rates move with whatever else runs on the machine; the CPU per URL
# and the instruction and allocation counts much less. Needs Go; uses valgrind (instruction counts, which do
# not move with the machine's load) when installed. Only loopback addresses
# are contacted.
set -eu
N=${N:-10000}
ROUNDS=${ROUNDS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Start-up: both builds of payability against the smallest Go program, built
# with the same Go and the release's flags. CPU: bench/startup (user + system
# from each child's rusage, median of 30 paired runs, hello world measured in
# the same rounds); instructions: callgrind, one run each.
mkdir -p "$tmp/hello"
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n' >"$tmp/hello/main.go"
printf 'module hello\n\ngo 1.26\n' >"$tmp/hello/go.mod"
(cd "$tmp/hello" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$tmp/hello.bin" .)
CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -tags quick -o "$tmp/payability" ./cmd/payability
CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$tmp/payabilityd" ./cmd/payability
go build -o "$tmp/bench" ./bench
go run ./bench/startup -n 30 >"$tmp/startup"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
# su LABEL: "R × (M ms vs H ms)" from bench/startup's line for LABEL.
hello_ms=$(sed -n 's/^  hello world  *\([0-9.]*\) ms.*/\1/p' "$tmp/startup")
su() { grep -F "$1" "$tmp/startup" | sed -n "s/.*  \([0-9.]*\) ms  *\([0-9.]*\) × hello world.*/\2 × (\1 ms vs $hello_ms ms)/p"; }
instr() { # instructions executed, from callgrind (repeatable)
	GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
		sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
startup_cpu=$(su "payability version (quick")
lint_cpu=$(su "payability lint --help")
pre_cpu=$(su "payability preflight --help")
full_cpu=$(su "payabilityd version")
startup_instr="n/a" lint_instr="n/a" pre_instr="n/a" full_instr="n/a"
if command -v valgrind >/dev/null 2>&1; then
	h=$(instr "$tmp/hello.bin")
	v=$(instr "$tmp/payability" version)
	l=$(instr "$tmp/payability" lint --help)
	p=$(instr "$tmp/payability" preflight --help)
	f=$(instr "$tmp/payabilityd" version)
	startup_instr="$(ratio "$v" "$h") × ($v vs $h)"
	lint_instr="$(ratio "$l" "$h") × ($l vs $h)"
	pre_instr="$(ratio "$p" "$h") × ($p vs $h)"
	full_instr="$(ratio "$f" "$h") × ($f vs $h)"
fi

# Network phases, each scenario in its own process (peak RSS is its own).
"$tmp/bench" -scenario samehost -n "$N" -rounds "$ROUNDS" >"$tmp/samehost"
"$tmp/bench" -scenario ratio -n "$N" -rounds "$ROUNDS" >"$tmp/ratio"
"$tmp/bench" -scenario memory -n 100000 >"$tmp/memory"
same=$(sed -n 's/.*check\/raw = \([0-9.]*\).*/\1/p' "$tmp/samehost")
nokeep=$(sed -n "s/.*(b)\/(a')  *= \([0-9.]*\).*/\1/p" "$tmp/ratio")
# CPU per URL (scanner + targets) of a phase, median over the rounds: unlike
# the rates it hardly moves when other work shares the machine.
cpu_url() { grep -F "$2" "$1" | sed -n 's/.* \([0-9][0-9]*\) µs CPU\/URL.*/\1/p' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
same_cpu=$(ratio "$(cpu_url "$tmp/samehost" "(a)  raw GET")" "$(cpu_url "$tmp/samehost" "(b)  scan --op check")")
nokeep_cpu=$(ratio "$(cpu_url "$tmp/ratio" "(a') raw GET")" "$(cpu_url "$tmp/ratio" "(b)  scan --op check")")
rss=$(sed -n 's/.*peak RSS of the scanning process since it started: \([0-9.]* MB\).*/\1/p' "$tmp/memory")

# Allocations per URL (scanner without a network) and the populated check grader.
go test -run '^$' -bench 'ScanNoNetwork/check' -benchmem -benchtime 20000x ./internal/scan/ >"$tmp/scan"
go test -run '^$' -bench 'Check/populated' -benchmem -benchtime 20000x ./internal/verdict/ >"$tmp/verdict"
allocs=$(awk '/ScanNoNetwork\/check/ { for (i = 1; i <= NF; i++) { if ($i == "allocs/op") a = $(i-1); if ($i == "B/op") b = $(i-1) } } END { print a " (" b " B)" }' "$tmp/scan")
grader=$(awk '/Check\/populated/ { for (i = 1; i <= NF; i++) if ($i == "cpu-ns/op" || ($i == "ns/op" && c == "")) c = $(i-1) } END { printf "%.1f", c / 1000 }' "$tmp/verdict")

cat <<EOF
| figure | today | baseline (same run) |
|---|---|---|
| start-up, \`payability version\` (quick build), CPU (median of 30 paired runs) | $startup_cpu | hello world |
| start-up, \`payability version\` (quick build), instructions (callgrind) | $startup_instr | hello world |
| start-up, \`payability lint --help\`, CPU / instructions | $lint_cpu / $lint_instr | hello world |
| start-up, \`payability preflight --help\`, CPU / instructions | $pre_cpu / $pre_instr | hello world |
| start-up, \`payabilityd version\` (full build), CPU / instructions | $full_cpu / $full_instr | hello world |
| same host, \`scan --op check\` / raw keep-alive GETs, req/s (median of $ROUNDS rounds, $N URLs) | $same | raw keep-alive client |
| same host, the same by CPU per URL (raw µs / check µs, scanner + target) | $same_cpu | raw keep-alive client |
| many hosts, \`scan --op check\` / raw GETs without keep-alive, req/s | $nokeep | raw client, no keep-alive |
| many hosts, the same by CPU per URL | $nokeep_cpu | raw client, no keep-alive |
| allocations per checked URL, scanner without a network | $allocs | — |
| grader \`verdict.Check\`, populated challenge, µs CPU | $grader | — |
| peak RSS, \`scan --op check\`, 100,000 URLs | $rss | — |
EOF
