# Shared by the bench scripts (sourced): wall times and CPU of repeated
# invocations of a command.

# timeit N CMD...: runs CMD (stdout discarded) N times and sets $sorted,
# the wall times in µs sorted, then runs it N times more under
# /usr/bin/time and sets $cpu_ms, the user+sys CPU per invocation in ms:
# the figure the machine's load disturbs least.
timeit() {
	local n=$1 times=() a z
	shift
	for _ in $(seq 1 "$n"); do
		a=$(date +%s%N)
		"$@" > /dev/null
		z=$(date +%s%N)
		times+=($(((z - a) / 1000)))
	done
	sorted=$(printf '%s\n' "${times[@]}" | sort -n)
	cpu_ms=$({ /usr/bin/time -f '%U %S' bash -c 'n=$1; shift; for _ in $(seq 1 "$n"); do "$@" > /dev/null; done' _ "$n" "$@"; } 2>&1 |
		tail -1 | awk -v n="$n" '{ printf "%.1f", 1000 * ($1 + $2) / n }')
}

# pct P N: the P-th percentile (0 = min, 100 = max) of the N times in
# $sorted, in ms.
pct() { printf '%s\n' "$sorted" | awk -v p="$1" -v n="$2" 'NR == int((n - 1) * p / 100) + 1 { printf "%.1f", $1 / 1000 }'; }

# instructions CMD...: the instructions CMD executes (valgrind's
# callgrind; Go's async preemption off, which callgrind's signal
# handling trips on), or "-" without valgrind. Unlike time, repeatable
# on a loaded machine.
instructions() {
	command -v valgrind > /dev/null || { echo -; return; }
	GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 > /dev/null |
		sed -n 's/.*Collected : *//p'
}
