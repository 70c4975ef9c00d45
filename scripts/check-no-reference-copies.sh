#!/usr/bin/env bash
# check-no-reference-copies.sh: fails when a file of this repository is a
# copy, or holds a copied line, of the reference npm package
# (@chllming/wave-orchestration, fetched with npm at run time).
#
#   scripts/check-no-reference-copies.sh            # npm pack into a temp dir
#   REF_PACKAGE=/tmp/package scripts/check-...sh    # an unpacked package
#
# What counts, after normalising both sides the same way (JSON-escaped \n
# splits a line, \" and \u003c-style escapes are decoded, surrounding
# blanks trimmed):
#   1. a file of more than 64 bytes identical to a package file;
#   2. a line longer than 40 characters equal to a package line;
#   3. a line of either side longer than 60 characters found inside a line
#      of the other (prose embedded in a golden, or a sentence cut short).
# Lines listed in scripts/reference-lines-allowed.txt (format grammar and
# identifiers the two tools must share) are not reported.
set -euo pipefail

REF="@chllming/wave-orchestration@0.9.15"
root=$(cd "$(dirname "$0")/.." && pwd)
allowed="$root/scripts/reference-lines-allowed.txt"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

pkg=${REF_PACKAGE:-}
if [ -z "$pkg" ]; then
	(cd "$work" && npm pack --silent "$REF" >/dev/null && tar xzf ./*.tgz)
	pkg="$work/package"
fi
[ -d "$pkg" ] || { echo "no package at $pkg" >&2; exit 2; }

# ours: every file git tracks or would track, minus the allow list.
(cd "$root" && git ls-files -z --cached --others --exclude-standard) |
	while IFS= read -r -d '' f; do
		[ -f "$root/$f" ] && [ "$f" != "scripts/reference-lines-allowed.txt" ] && printf '%s\n' "$f"
	done >"$work/ours.files"

# norm prints "file<TAB>line<TAB>text" for each line longer than 40
# characters of the files it is given.
norm='
function emit(s) {
	gsub(/\\"/, "\"", s); gsub(/\\u003c/, "<", s); gsub(/\\u003e/, ">", s)
	gsub(/\\u0026/, "\\&", s); gsub(/\\t/, " ", s); gsub(/\r/, "", s)
	sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s)
	if (length(s) > 40) printf "%s\t%d\t%s\n", FILENAME, FNR, s
}
{ n = split($0, parts, /\\n/); for (i = 1; i <= n; i++) emit(parts[i]) }'

# Text files only: grep -I skips binaries.
cd "$pkg"
find . -type f -print | sed 's#^\./##' | sort >"$work/ref.files"
xargs -d '\n' grep -lI '' <"$work/ref.files" >"$work/ref.text" || true
xargs -d '\n' awk "$norm" <"$work/ref.text" | cut -f3- | sort -u >"$work/ref.lines"
cd "$root"
xargs -d '\n' grep -lI '' <"$work/ours.files" >"$work/ours.text" || true
xargs -d '\n' awk "$norm" <"$work/ours.text" >"$work/ours.lines"

touch "$work/allowed"
[ -f "$allowed" ] && grep -v '^//' "$allowed" | sed 's/^[ \t]*//; s/[ \t]*$//' | grep -v '^$' >"$work/allowed" || true

found=0
report() { found=1; printf '%s\n' "$1"; }

# 1. identical files.
(cd "$pkg" && xargs -d '\n' sha256sum <"$work/ref.files") | sort >"$work/ref.sums"
while read -r sum file; do
	[ "$(stat -c %s "$file")" -gt 64 ] || continue
	match=$(awk -v s="$sum" '$1 == s { print $2; exit }' "$work/ref.sums")
	[ -n "$match" ] && report "$file: identical to the package's $match"
done < <(xargs -d '\n' sha256sum <"$work/ours.files")

# 2. equal lines.
while IFS= read -r hit; do report "$hit"; done < <(
	awk -F'\t' 'FILENAME == ARGV[1] { allow[$0]; next }
		FILENAME == ARGV[2] { if (!($0 in allow)) ref[$0]; next }
		($3 in ref) { printf "%s:%s: copied line: %s\n", $1, $2, $3 }' \
		"$work/allowed" "$work/ref.lines" "$work/ours.lines")

# 3. long lines inside the other side's lines.
awk 'length($0) > 60' "$work/ref.lines" | grep -vxF -f "$work/allowed" >"$work/ref.long" || true
cut -f3- "$work/ours.lines" | awk 'length($0) > 60' | sort -u | grep -vxF -f "$work/allowed" >"$work/ours.long" || true
if [ -s "$work/ref.long" ]; then
	grep -F -f "$work/ref.long" "$work/ours.lines" >"$work/cand.a" || true
	while IFS= read -r hit; do report "$hit"; done < <(
		awk -F'\t' 'FILENAME == ARGV[1] { ref[$0]; next } !($3 in ref) {
			printf "%s:%s: holds a package line: %s\n", $1, $2, $3 }' "$work/ref.lines" "$work/cand.a")
fi
if [ -s "$work/ours.long" ]; then
	grep -ohF -f "$work/ours.long" "$work/ref.lines" | sort -u >"$work/ours.inref" || true
	while IFS= read -r hit; do report "$hit"; done < <(
		awk -F'\t' 'FILENAME == ARGV[1] { ref[$0]; next } FILENAME == ARGV[2] { part[$0]; next }
			($3 in part) && !($3 in ref) { printf "%s:%s: part of a package line: %s\n", $1, $2, $3 }' \
			"$work/ref.lines" "$work/ours.inref" "$work/ours.lines")
fi

if [ "$found" -ne 0 ]; then
	echo "copies of the reference package found (allow format grammar in scripts/reference-lines-allowed.txt)" >&2
	exit 1
fi
echo "no copies of $REF found in $(wc -l <"$work/ours.files") files"
